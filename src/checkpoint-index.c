/*
 * checkpoint-index.c: the stat cache of a checkpoint store, like git's
 * index with its cache-tree. For each directory scanned it keeps the
 * directory's own stat, the tree object it made and, per entry, the stat
 * and hash that entry had. The next scan then reads a file only when its
 * stat changed, re-reads a directory's names only when the directory
 * changed, and reuses a directory's tree when none of its entries did:
 * the cost is O(entries) lstats plus O(what changed).
 *
 * The file is text, written over in place after each scan (a cache, never
 * synced: a torn or unknown one is dropped and everything is hashed once
 * again; the generation at both ends tells a torn one). Not renamed over:
 * ext4 then writes the new one out at once, and frees (discards) the old
 * one's blocks, tens of ms. Parsing is by hand: sscanf was most of a scan.
 *
 *	holt-index 2 GEN BASEUID BASEGID
 *	d DEV INO MTIME CTIME SCANNED N TREE PATH
 *	T MODE UID GID DEV INO SIZE MTIME CTIME HASHED HASH NAME	(N of them)
 *	...
 *	end NDIRS GEN
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint-int.h"

#define INDEX_MAGIC	"holt-index 2"

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
	for (i = 0; i < d->n; i++)
		free(d->e[i].name);
	free(d->e);
	free(d->path);
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
	memset(x, 0, sizeof *x);
}

/* Loading. */

struct index_parse {
	char	*p, *end;
	int	 bad;
};

static char *
parse_word(struct index_parse *ip, size_t *len)
{
	char	*w = ip->p;

	while (ip->p < ip->end && *ip->p != ' ' && *ip->p != '\n')
		ip->p++;
	if (ip->p == w || ip->p == ip->end)
		ip->bad = 1;
	*len = (size_t)(ip->p - w);
	if (ip->p < ip->end && *ip->p == ' ')
		ip->p++;
	return w;
}

static long long
parse_num(struct index_parse *ip, int base)
{
	char		*end;
	long long	 v;

	v = strtoll(ip->p, &end, base);
	if (end == ip->p || (*end != ' ' && *end != '\n'))
		ip->bad = 1;
	ip->p = end;
	if (ip->p < ip->end && *ip->p == ' ')
		ip->p++;
	return v;
}

static void
parse_hash(struct index_parse *ip, char out[65])
{
	size_t	 len;
	char	*w = parse_word(ip, &len);

	if (len == 64)
		memcpy(out, w, 64);
	else if (len != 1 || *w != '-')
		ip->bad = 1;
	out[len == 64 ? 64 : 0] = '\0';
}

static char *
parse_name(struct index_parse *ip)
{
	char	*nl = memchr(ip->p, '\n', (size_t)(ip->end - ip->p)), *s;

	if (nl == NULL || nl == ip->p) {
		ip->bad = 1;
		return NULL;
	}
	s = ckpt_unescape(ip->p, (size_t)(nl - ip->p));
	ip->p = nl + 1;
	return s;
}

static int
parse_entry(struct index_parse *ip, struct ckpt_ient *e)
{
	size_t	 len;
	char	*t = parse_word(ip, &len);

	if (len != 1 || strchr("fldpw", *t) == NULL)
		return -1;
	e->type = *t;
	e->mode = (unsigned)parse_num(ip, 8);
	e->uid = parse_num(ip, 10);
	e->gid = parse_num(ip, 10);
	e->dev = (uint64_t)parse_num(ip, 10);
	e->ino = (uint64_t)parse_num(ip, 10);
	e->size = (uint64_t)parse_num(ip, 10);
	e->mtime = parse_num(ip, 10);
	e->ctime = parse_num(ip, 10);
	e->hashed = parse_num(ip, 10);
	parse_hash(ip, e->hash);
	if (ip->bad || (e->name = parse_name(ip)) == NULL)
		return -1;
	return 0;
}

static struct ckpt_idir *
parse_dir(struct index_parse *ip)
{
	struct ckpt_idir	*d = xcalloc(1, sizeof *d);
	size_t			 n;

	if (ip->end - ip->p < 2 || memcmp(ip->p, "d ", 2) != 0)
		goto bad;
	ip->p += 2;
	d->dev = (uint64_t)parse_num(ip, 10);
	d->ino = (uint64_t)parse_num(ip, 10);
	d->mtime = parse_num(ip, 10);
	d->ctime = parse_num(ip, 10);
	d->scanned = parse_num(ip, 10);
	n = (size_t)parse_num(ip, 10);
	parse_hash(ip, d->tree);
	if (ip->bad || n > (size_t)(ip->end - ip->p) ||
	    (d->path = parse_name(ip)) == NULL)
		goto bad;
	d->e = xcalloc(n + 1, sizeof *d->e);
	for (; d->n < n; d->n++) {
		if (parse_entry(ip, &d->e[d->n]) != 0)
			goto bad;
	}
	return d;
bad:
	ckpt_idir_free(d);
	return NULL;
}

/*
 * Load the index. Trees were made with entries' owners relative to the
 * owner of workspace/: when that changed, the trees are not reused.
 */
void
ckpt_index_load(struct checkpoint_store *st, struct ckpt_index *x,
    long long uid, long long gid)
{
	struct index_parse	 ip;
	struct ckpt_idir	*d;
	char			*path, *data, *nl;
	size_t			 len, i;
	long long		 u, g, want, gen;

	memset(x, 0, sizeof *x);
	path = xprintf("%s/checkpoints/index", st->sbxdir);
	data = file_read(path, &len, 0);
	free(path);
	if (data == NULL)
		return;
	ip.p = data;
	ip.end = data + len;
	ip.bad = 0;
	if ((nl = memchr(data, '\n', len)) == NULL ||
	    strncmp(data, INDEX_MAGIC " ", sizeof INDEX_MAGIC) != 0)
		goto drop;
	ip.p = data + sizeof INDEX_MAGIC;
	gen = parse_num(&ip, 10);
	u = parse_num(&ip, 10);
	g = parse_num(&ip, 10);
	ip.p = nl + 1;
	while (!ip.bad && ip.p < ip.end && *ip.p == 'd') {
		if ((d = parse_dir(&ip)) == NULL ||
		    ckpt_index_dir(x, d->path) != NULL) {
			ckpt_idir_free(d);
			goto drop;
		}
		if (u != uid || g != gid)
			d->tree[0] = '\0';
		ckpt_index_add(x, d);
	}
	if (ip.bad || ip.end - ip.p < 4 || memcmp(ip.p, "end ", 4) != 0)
		goto drop;
	ip.p += 4;
	want = parse_num(&ip, 10);
	if (ip.bad || want != (long long)x->n || parse_num(&ip, 10) != gen ||
	    ip.bad)
		goto drop;
	free(data);
	return;
drop:
	free(data);
	for (i = 0; i < x->n; i++)
		ckpt_idir_free(x->dirs[i]);
	free(x->dirs);
	free(x->slot);
	memset(x, 0, sizeof *x);
}

/* Saving: numbers by hand, as printf was a good part of a scan. */

static void
put_num(struct buf *b, long long v, int base)
{
	char			 tmp[32], *p = tmp + sizeof tmp;
	unsigned long long	 u = v < 0 ? 0ULL - (unsigned long long)v :
				     (unsigned long long)v;

	do {
		*--p = (char)('0' + u % (unsigned)base);
		u /= (unsigned)base;
	} while (u != 0);
	if (v < 0)
		*--p = '-';
	*--p = ' ';
	buf_add(b, p, (size_t)(tmp + sizeof tmp - p));
}

static void
put_hash(struct buf *b, const char *hash)
{
	buf_addc(b, ' ');
	if (hash[0] == '\0')
		buf_addc(b, '-');
	else
		buf_add(b, hash, 64);
	buf_addc(b, ' ');
}

static void
put_dir(struct buf *b, const struct ckpt_idir *d)
{
	const struct ckpt_ient	*e;
	size_t			 i;

	buf_addc(b, 'd');
	put_num(b, (long long)d->dev, 10);
	put_num(b, (long long)d->ino, 10);
	put_num(b, d->mtime, 10);
	put_num(b, d->ctime, 10);
	put_num(b, d->scanned, 10);
	put_num(b, (long long)d->n, 10);
	put_hash(b, d->tree);
	ckpt_escape(b, d->path);
	buf_addc(b, '\n');
	for (i = 0; i < d->n; i++) {
		e = &d->e[i];
		buf_addc(b, e->type);
		put_num(b, e->mode, 8);
		put_num(b, e->uid, 10);
		put_num(b, e->gid, 10);
		put_num(b, (long long)e->dev, 10);
		put_num(b, (long long)e->ino, 10);
		put_num(b, (long long)e->size, 10);
		put_num(b, e->mtime, 10);
		put_num(b, e->ctime, 10);
		put_num(b, e->hashed, 10);
		put_hash(b, e->hash);
		ckpt_escape(b, e->name);
		buf_addc(b, '\n');
	}
}

int
ckpt_index_save(struct checkpoint_store *st, struct ckpt_index *x,
    long long uid, long long gid)
{
	struct buf	 b = BUF_INIT;
	long long	 gen = ckpt_now_ns();
	size_t		 i;
	int		 rc = -1, fd;

	buf_grow(&b, 1 << 20);
	buf_addf(&b, "%s %lld %lld %lld\n", INDEX_MAGIC, gen, uid, gid);
	for (i = 0; i < x->n; i++)
		put_dir(&b, x->dirs[i]);
	buf_addf(&b, "end %zu %lld\n", x->n, gen);
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
