/*
 * checkpoint-index.c: the stat cache of a checkpoint store, like git's
 * index with its cache-tree. For each directory scanned it keeps the
 * directory's own stat, the tree object it made and, per entry, the stat
 * and hash that entry had. The next scan then reads a file only when its
 * stat changed, re-reads a directory's names only when the directory
 * changed, and reuses a directory's tree when none of its entries did:
 * the cost is O(entries) lstats plus O(what changed).
 *
 * The file is written over in place after each scan (a cache, never
 * synced: a torn or unknown one is dropped and everything is hashed once
 * again; the generation at both ends tells a torn one). Not renamed over:
 * ext4 then writes the new one out at once, and frees (discards) the old
 * one's blocks, tens of ms. It is binary, records of fixed fields each
 * followed by its name and a NUL, so that loading it is copying and the
 * names are used where they lie: as text, parsing and printing it was a
 * third of a scan.
 *
 *	"holt-index 3\n" GEN BASEUID BASEGID NDIRS
 *	struct index_dir PATH\0, then N of: struct index_ent NAME\0
 *	...
 *	GEN
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint-int.h"


/* FNV-1a, for the tables of paths and hashes. */
uint64_t
ckpt_fnv(const char *s)
{
	uint64_t	 h = 1469598103934665603ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static size_t
index_slot(struct ckpt_index *x, const char *path)
{
	size_t	 i = (size_t)ckpt_fnv(path) & (x->cap - 1);

	while (x->slot[i] != 0 && strcmp(x->dirs[x->slot[i] - 1]->path,
	    path) != 0)
		i = (i + 1) & (x->cap - 1);
	return i;
}

static void
index_rehash(struct ckpt_index *x)
{
	size_t	 i;

	free(x->slot);
	x->cap = x->cap == 0 ? 256 : x->cap * 2;
	x->slot = xcalloc(x->cap, sizeof *x->slot);
	for (i = 0; i < x->n; i++)
		x->slot[index_slot(x, x->dirs[i]->path)] = i + 1;
}

struct ckpt_idir *
ckpt_index_dir(struct ckpt_index *x, const char *path)
{
	size_t	 i;

	if (x->cap == 0)
		return NULL;
	i = index_slot(x, path);
	return x->slot[i] == 0 ? NULL : x->dirs[x->slot[i] - 1];
}

/* Add a directory (the index owns it); its path must be new. */
void
ckpt_index_add(struct ckpt_index *x, struct ckpt_idir *d)
{
	x->dirs = xreallocarray(x->dirs, x->n + 1, sizeof *x->dirs);
	x->dirs[x->n++] = d;
	if (x->n * 2 > x->cap)
		index_rehash(x);
	else
		x->slot[index_slot(x, d->path)] = x->n;
}

/* An entry of a directory by name: entries are sorted, as in trees. */
struct ckpt_ient *
ckpt_idir_find(struct ckpt_idir *d, const char *name)
{
	size_t	 lo = 0, hi = d->n, mid;
	int	 c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(d->e[mid].name, name);
		if (c == 0)
			return &d->e[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void
ckpt_idir_free(struct ckpt_idir *d)
{
	size_t	 i;

	if (d == NULL)
		return;
	if (!d->borrowed) {
		for (i = 0; i < d->n; i++)
			free(d->e[i].name);
	}
	if (d->borrowed != 1)
		free(d->path);
	free(d->e);
	free(d);
}

void
ckpt_index_free(struct ckpt_index *x)
{
	size_t	 i;

	for (i = 0; i < x->n; i++)
		ckpt_idir_free(x->dirs[i]);
	free(x->dirs);
	free(x->slot);
	free(x->blob);
	memset(x, 0, sizeof *x);
}

/* The records on disk (host byte order: the index never leaves it). */
struct index_dir {
	uint64_t	 dev, ino;
	int64_t		 mtime, ctime, scanned;
	uint64_t	 n;
	char		 tree[64];	/* all '\0': unknown */
	uint32_t	 pathlen;	/* without its NUL */
};

struct index_ent {
	uint64_t	 dev, ino, size;
	int64_t		 uid, gid, mtime, ctime, hashed;
	uint32_t	 mode, namelen;
	char		 hash[64];
	char		 type;
};

#define INDEX_HEAD	"holt-index 3\n"

struct index_in {
	char	*p, *end;
};

static int
in_take(struct index_in *in, void *out, size_t len)
{
	if ((size_t)(in->end - in->p) < len)
		return -1;
	memcpy(out, in->p, len);
	in->p += len;
	return 0;
}

/* A NUL-terminated string of len bytes where it lies, or NULL. */
static char *
in_str(struct index_in *in, uint32_t len)
{
	char	*s = in->p;

	if ((size_t)(in->end - in->p) < (size_t)len + 1 || s[len] != '\0' ||
	    memchr(s, '\0', len) != NULL)
		return NULL;
	in->p += len + 1;
	return s;
}

static struct ckpt_idir *
index_read_dir(struct index_in *in)
{
	struct index_dir	 rd;
	struct index_ent	 re;
	struct ckpt_idir	*d;
	struct ckpt_ient	*e;

	if (in_take(in, &rd, sizeof rd) != 0 ||
	    rd.n > (uint64_t)(in->end - in->p) / sizeof re)
		return NULL;
	d = xcalloc(1, sizeof *d);
	d->borrowed = 1;
	d->dev = rd.dev;
	d->ino = rd.ino;
	d->mtime = rd.mtime;
	d->ctime = rd.ctime;
	d->scanned = rd.scanned;
	memcpy(d->tree, rd.tree, 64);
	d->tree[64] = '\0';
	if ((d->path = in_str(in, rd.pathlen)) == NULL)
		goto bad;
	d->e = xcalloc(rd.n + 1, sizeof *d->e);
	for (; d->n < rd.n; d->n++) {
		e = &d->e[d->n];
		if (in_take(in, &re, sizeof re) != 0 ||
		    strchr("fldpw", re.type) == NULL || re.type == '\0' ||
		    (e->name = in_str(in, re.namelen)) == NULL)
			goto bad;
		e->type = re.type;
		e->mode = re.mode;
		e->uid = re.uid;
		e->gid = re.gid;
		e->dev = re.dev;
		e->ino = re.ino;
		e->size = re.size;
		e->mtime = re.mtime;
		e->ctime = re.ctime;
		e->hashed = re.hashed;
		memcpy(e->hash, re.hash, 64);
		e->hash[64] = '\0';
	}
	return d;
bad:
	ckpt_idir_free(d);
	return NULL;
}

static char *
index_slurp(struct checkpoint_store *st, size_t *len)
{
	struct stat	 sb;
	char		*data;
	int		 fd;

	fd = openat(st->dirfd, "index", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return NULL;
	if (fstat(fd, &sb) != 0 || sb.st_size < 1 || sb.st_size > (1LL << 32)) {
		close(fd);
		return NULL;
	}
	data = xmalloc((size_t)sb.st_size + 1);
	if (pread(fd, data, (size_t)sb.st_size, 0) != sb.st_size) {
		free(data);
		close(fd);
		return NULL;
	}
	close(fd);
	data[sb.st_size] = '\0';
	*len = (size_t)sb.st_size;
	return data;
}

/*
 * Load the index. Trees were made with entries' owners relative to the
 * owner of workspace/: when that changed, the trees are not reused.
 */
void
ckpt_index_load(struct checkpoint_store *st, struct ckpt_index *x,
    long long uid, long long gid)
{
	struct index_in		 in;
	struct ckpt_idir	*d;
	int64_t			 h[3], tail;
	uint64_t		 n, i;
	size_t			 len;

	memset(x, 0, sizeof *x);
	if ((x->blob = index_slurp(st, &len)) == NULL)
		return;
	in.p = x->blob;
	in.end = x->blob + len;
	if (len < sizeof INDEX_HEAD - 1 || memcmp(in.p, INDEX_HEAD,
	    sizeof INDEX_HEAD - 1) != 0)
		goto drop;
	in.p += sizeof INDEX_HEAD - 1;
	if (in_take(&in, h, sizeof h) != 0 || in_take(&in, &n, sizeof n) != 0)
		goto drop;
	for (i = 0; i < n; i++) {
		if ((d = index_read_dir(&in)) == NULL)
			goto drop;
		if (ckpt_index_dir(x, d->path) != NULL) {
			ckpt_idir_free(d);
			goto drop;
		}
		if (h[1] != uid || h[2] != gid)
			d->tree[0] = '\0';
		ckpt_index_add(x, d);
	}
	if (in_take(&in, &tail, sizeof tail) != 0 || tail != h[0])
		goto drop;
	return;
drop:
	ckpt_index_free(x);
}

/* Saving. */

static void
index_put_dir(struct buf *b, const struct ckpt_idir *d)
{
	struct index_dir	 rd;
	struct index_ent	 re;
	const struct ckpt_ient	*e;
	size_t			 i;

	memset(&rd, 0, sizeof rd);
	rd.dev = d->dev;
	rd.ino = d->ino;
	rd.mtime = d->mtime;
	rd.ctime = d->ctime;
	rd.scanned = d->scanned;
	rd.n = d->n;
	if (d->tree[0] != '\0')
		memcpy(rd.tree, d->tree, 64);
	rd.pathlen = (uint32_t)strlen(d->path);
	buf_add(b, &rd, sizeof rd);
	buf_add(b, d->path, rd.pathlen + 1);
	for (i = 0; i < d->n; i++) {
		e = &d->e[i];
		memset(&re, 0, sizeof re);
		re.dev = e->dev;
		re.ino = e->ino;
		re.size = e->size;
		re.uid = e->uid;
		re.gid = e->gid;
		re.mtime = e->mtime;
		re.ctime = e->ctime;
		re.hashed = e->hashed;
		re.mode = e->mode;
		re.namelen = (uint32_t)strlen(e->name);
		memcpy(re.hash, e->hash, 64);
		re.type = e->type;
		buf_add(b, &re, sizeof re);
		buf_add(b, e->name, re.namelen + 1);
	}
}

int
ckpt_index_save(struct checkpoint_store *st, struct ckpt_index *x,
    long long uid, long long gid)
{
	struct buf	 b = BUF_INIT;
	int64_t		 h[3];
	uint64_t	 n = x->n;
	size_t		 i;
	int		 rc = -1, fd;

	h[0] = ckpt_now_ns();
	h[1] = uid;
	h[2] = gid;
	buf_grow(&b, 2 << 20);
	buf_add(&b, INDEX_HEAD, sizeof INDEX_HEAD - 1);
	buf_add(&b, h, sizeof h);
	buf_add(&b, &n, sizeof n);
	for (i = 0; i < x->n; i++)
		index_put_dir(&b, x->dirs[i]);
	buf_add(&b, &h[0], sizeof h[0]);
	fd = openat(st->dirfd, "index", O_WRONLY | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd != -1) {
		if (pwrite(fd, b.data, b.len, 0) == (ssize_t)b.len)
			rc = ftruncate(fd, (off_t)b.len);
		close(fd);
	}
	buf_release(&b);
	return rc;
}
