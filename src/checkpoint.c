/*
 * checkpoint.c: the checkpoint store of a sandbox: its objects, trees,
 * commits and list, and pruning (DESIGN 15; layout and promises in
 * checkpoint.h). Taking a checkpoint is checkpoint-scan.c's.
 *
 * New objects are written to temporaries and queued; before the list
 * names a checkpoint they are made durable together, with the list's new
 * line, by one sync of the journal (or a syncfs, for a first checkpoint),
 * and only then get their names: a named object is always whole. A crash
 * leaves the old list or the new one, and every object either names is
 * whole or in the journal.
 */
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/fs.h>

#include "checkpoint-int.h"

const char *const checkpoint_roots[] = { "workspace", "home", "root", NULL };

#define COPY_CHUNK	(128U * 1024)
#define SYNC_EACH_MAX	64	/* new objects synced one by one, then syncfs */

/* Names in tree objects, the index and the list are escaped: %XX. */
void
ckpt_escape(struct buf *b, const char *s)
{
	const unsigned char	*p;

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p <= ' ' || *p == '%' || *p == 0x7f)
			buf_addf(b, "%%%02x", *p);
		else
			buf_addc(b, (char)*p);
	}
}

char *
ckpt_unescape(const char *s, size_t len)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;
	unsigned	 v;
	char		 hex[3];

	for (i = 0; i < len; i++) {
		if (s[i] == '%' && i + 2 < len) {
			hex[0] = s[i + 1];
			hex[1] = s[i + 2];
			hex[2] = '\0';
			v = (unsigned)strtoul(hex, NULL, 16);
			buf_addc(&b, (char)v);
			i += 2;
		} else
			buf_addc(&b, s[i]);
	}
	buf_grow(&b, 1);
	return buf_detach(&b, NULL);
}

/* Objects. */

static void
obj_path(const char *hash, char out[68])
{
	snprintf(out, 68, "%.2s/%s", hash, hash + 2);
}

int
ckpt_obj_open(struct checkpoint_store *st, const char *hash)
{
	char	 p[68];

	obj_path(hash, p);
	return openat(st->objfd, p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
}

char *
ckpt_obj_read(struct checkpoint_store *st, const char *hash, size_t *lenp)
{
	struct buf	 b = BUF_INIT;
	char		 tmp[65536];
	ssize_t		 r;
	int		 fd;

	if ((fd = ckpt_obj_open(st, hash)) == -1)
		return NULL;
	while ((r = read(fd, tmp, sizeof tmp)) != 0) {
		if (r == -1) {
			if (errno == EINTR)
				continue;
			close(fd);
			buf_release(&b);
			return NULL;
		}
		buf_add(&b, tmp, (size_t)r);
	}
	close(fd);
	buf_grow(&b, 1);
	return buf_detach(&b, lenp);
}

/* A temporary file in objects/, for an object being written. */
static int
obj_tmp(struct checkpoint_store *st, char name[32])
{
	static unsigned	 n;
	int		 fd, i;

	for (i = 0; i < 100; i++) {
		snprintf(name, 32, "tmp-%ld-%u", (long)getpid(), n++);
		fd = openat(st->objfd, name, O_RDWR | O_CREAT | O_EXCL |
		    O_CLOEXEC, 0600);
		if (fd != -1 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/*
 * Queue a finished temporary (fd, which this owns from now) to be moved
 * into place by ckpt_obj_flush.
 */
static void
obj_queue(struct checkpoint_store *st, int fd, const char *tmp,
    const char *hash, uint64_t size)
{
	struct ckpt_pending	*p;

	st->pending = xreallocarray(st->pending, st->npending + 1,
	    sizeof *st->pending);
	p = &st->pending[st->npending++];
	memcpy(p->tmp, tmp, sizeof p->tmp);
	obj_path(hash, p->path);
	p->size = size;
	p->fd = -1;
	if (st->npending <= SYNC_EACH_MAX)
		p->fd = fd;	/* read again into the journal */
	else
		close(fd);
}

static void
obj_drop_pending(struct checkpoint_store *st, size_t from)
{
	size_t	 i;

	for (i = from; i < st->npending; i++) {
		if (st->pending[i].fd != -1)
			close(st->pending[i].fd);
		unlinkat(st->objfd, st->pending[i].tmp, 0);
	}
	free(st->pending);
	st->pending = NULL;
	st->npending = 0;
}

/* Forget the objects queued since the last flush (a failed checkpoint). */
void
ckpt_obj_abort(struct checkpoint_store *st)
{
	obj_drop_pending(st, 0);
}

/*
 * Durability. Where few objects are new (the usual checkpoint) their
 * bytes, and the checkpoint's line for the list, are appended to
 * checkpoints/journal, which is synced once; the objects and the list
 * are left to the kernel's writeback: what a reboot loses of them, the
 * journal gives back (journal_replay, when the store is next opened under
 * another boot). The journal is emptied after a syncfs when it grows past
 * JOURNAL_MAX. Many or big new objects (a first checkpoint) are synced
 * with one syncfs before they get their names, and once more after, and
 * the list line by itself. Either way a checkpoint costs one or two waits
 * on the disk, not one per object and directory.
 */
#define JOURNAL_MAX	(8U << 20)
#define JOURNAL_BATCH	(4U << 20)	/* bigger batches: syncfs */
#define JOURNAL_MAGIC	"holt-journal 1 "

static void
boot_id(char out[40])
{
	char	*s;
	size_t	 len;

	out[0] = '\0';
	if ((s = file_read("/proc/sys/kernel/random/boot_id", &len, 64)) == NULL)
		return;
	snprintf(out, 40, "%.*s", (int)strcspn(s, "\n"), s);
	free(s);
}

static int
journal_open(struct checkpoint_store *st)
{
	int	 fd;

	fd = openat(st->dirfd, "journal", O_RDWR | O_CREAT | O_APPEND |
	    O_NOFOLLOW | O_CLOEXEC, 0600);
	return fd;
}

/* Append the pending objects' bytes to the journal and sync it once. */
static int
journal_write(struct checkpoint_store *st, const char *line)
{
	struct ckpt_pending	*p;
	struct buf		 b = BUF_INIT;
	struct stat		 sb;
	char			 id[40], *chunk;
	size_t			 i;
	ssize_t			 r;
	off_t			 off;
	int			 fd, rc = -1, fresh;

	if ((fd = journal_open(st)) == -1)
		return -1;
	if (fstat(fd, &sb) != 0)
		goto out;
	fresh = sb.st_size == 0;
	if (fresh) {
		boot_id(id);
		buf_addf(&b, "%s%s\n", JOURNAL_MAGIC, id);
	}
	chunk = xmalloc(COPY_CHUNK);
	for (i = 0; i < st->npending; i++) {
		p = &st->pending[i];
		if (p->skip)
			continue;
		buf_addf(&b, "o %.2s%s %llu\n", p->path, p->path + 3,
		    (unsigned long long)p->size);
		for (off = 0; (uint64_t)off < p->size; off += r) {
			if ((r = pread(p->fd, chunk, COPY_CHUNK, off)) <= 0) {
				if (r == -1 && errno == EINTR) {
					r = 0;
					continue;
				}
				free(chunk);
				goto out;
			}
			buf_add(&b, chunk, (size_t)r);
		}
	}
	free(chunk);
	if (line != NULL)
		buf_addf(&b, "l %s", line);
	if (file_write_all(fd, b.data, b.len) != 0 || fdatasync(fd) != 0)
		goto out;
	/* A new journal's name must last too (once per journal). */
	if (fresh && fsync(st->dirfd) != 0)
		goto out;
	rc = 0;
out:
	buf_release(&b);
	close(fd);
	return rc;
}

static uint64_t
journal_size(struct checkpoint_store *st)
{
	struct stat	 sb;

	if (fstatat(st->dirfd, "journal", &sb, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	return (uint64_t)sb.st_size;
}

/* All objects on disk for sure: the journal is no longer needed. */
int
ckpt_journal_clear(struct checkpoint_store *st)
{
	int	 fd, rc;

	if (journal_size(st) == 0)
		return 0;
	if (syncfs(st->objfd) != 0 || (fd = journal_open(st)) == -1)
		return -1;
	rc = ftruncate(fd, 0);
	close(fd);
	return rc;
}

static uint64_t
pending_bytes(struct checkpoint_store *st)
{
	uint64_t	 n = 0;
	size_t		 i;

	for (i = 0; i < st->npending; i++)
		n += st->pending[i].size;
	return n;
}

static void
pending_close(struct checkpoint_store *st)
{
	size_t	 i;

	for (i = 0; i < st->npending; i++) {
		if (st->pending[i].fd != -1)
			close(st->pending[i].fd);
		st->pending[i].fd = -1;
	}
}

static int
pending_cmp(const void *va, const void *vb)
{
	const struct ckpt_pending	*a = va, *b = vb;

	return strcmp(a->path, b->path);
}

/*
 * The bytes the queued objects add to the store: those not there yet,
 * each once (the others are marked to be dropped).
 */
uint64_t
ckpt_obj_new_bytes(struct checkpoint_store *st)
{
	struct ckpt_pending	*p;
	struct stat		 sb;
	uint64_t		 added = 0;
	size_t			 i;

	if (st->npending > 1)
		qsort(st->pending, st->npending, sizeof *st->pending,
		    pending_cmp);
	for (i = 0; i < st->npending; i++) {
		p = &st->pending[i];
		p->skip = (i > 0 && strcmp(p[-1].path, p->path) == 0) ||
		    fstatat(st->objfd, p->path, &sb, AT_SYMLINK_NOFOLLOW) == 0;
		if (!p->skip)
			added += p->size;
	}
	return added;
}

/*
 * Make the objects queued since the last flush durable and give them
 * their names (ckpt_obj_new_bytes first). A list line (NULL: none) goes
 * into the journal with them; *journalled says whether it did (else the
 * caller syncs the list itself).
 */
int
ckpt_obj_flush(struct checkpoint_store *st, const char *line, int *journalled)
{
	struct ckpt_pending	*p;
	char			 d[3];
	size_t			 i, n = st->npending;
	int			 saved, many, rc = 0;

	*journalled = 0;
	if (n == 0)
		return 0;
	many = n > SYNC_EACH_MAX || pending_bytes(st) > JOURNAL_BATCH;
	if (many ? syncfs(st->objfd) != 0 : journal_write(st, line) != 0)
		goto fail;
	*journalled = !many && line != NULL;
	pending_close(st);
	for (i = 0; i < n; i++) {
		p = &st->pending[i];
		if (p->skip) {
			unlinkat(st->objfd, p->tmp, 0);
			continue;
		}
		memcpy(d, p->path, 2);
		d[2] = '\0';
		if (mkdirat(st->objfd, d, 0700) != 0 && errno != EEXIST)
			goto fail;
		if (renameat(st->objfd, p->tmp, st->objfd, p->path) != 0)
			goto fail;
	}
	free(st->pending);
	st->pending = NULL;
	st->npending = 0;
	if (many)
		rc = syncfs(st->objfd);
	else if (journal_size(st) > JOURNAL_MAX)
		rc = ckpt_journal_clear(st);
	return rc;
fail:
	saved = errno;
	obj_drop_pending(st, 0);
	errno = saved;
	*journalled = 0;
	return -1;
}

/* The list (text) has a line for checkpoint id. */
static int
list_has(const char *list, long long id)
{
	const char	*p;

	for (p = strchr(list, '\n'); p != NULL; p = strchr(p + 1, '\n')) {
		if (p[1] == '+' ? strtoll(p + 2, NULL, 10) == id :
		    strtoll(p + 1, NULL, 10) == id && p[1] != '\0')
			return 1;
	}
	return 0;
}

/* Write one object the journal holds, unless it is there whole. */
static int
journal_put(struct checkpoint_store *st, const char *hash, const char *data,
    size_t len)
{
	struct sha256	 s;
	unsigned char	 h[32];
	char		 hex[65], tmp[32], p[68], *have;
	size_t		 hlen;
	int		 fd, same;

	sha256_init(&s);
	sha256_update(&s, data, len);
	sha256_final(&s, h);
	sha256_hex(h, hex);
	if (strcmp(hex, hash) != 0)
		return 0;	/* torn: its checkpoint was never listed */
	have = ckpt_obj_read(st, hash, &hlen);
	same = have != NULL && hlen == len && memcmp(have, data, len) == 0;
	free(have);
	if (same)
		return 0;
	obj_path(hash, p);
	if ((fd = obj_tmp(st, tmp)) == -1)
		return -1;
	if (file_write_all(fd, data, len) != 0 || fdatasync(fd) != 0) {
		close(fd);
		unlinkat(st->objfd, tmp, 0);
		return -1;
	}
	close(fd);
	p[2] = '\0';
	if (mkdirat(st->objfd, p, 0700) != 0 && errno != EEXIST)
		return -1;
	p[2] = '/';
	return renameat(st->objfd, tmp, st->objfd, p);
}

/*
 * The list lines the journal holds ("+ID ..."), appended to the list if
 * it lost them: those of checkpoints after its header's next (a list
 * written whole since, by a prune, holds all it keeps) and not in it.
 */
static int
journal_relist(struct checkpoint_store *st, const char *lines)
{
	char		*path, *data, *p, *nl, *cut;
	size_t		 len;
	long long	 next = 0, id;
	struct buf	 add = BUF_INIT;
	int		 fd, rc = 0;

	if (*lines == '\0')
		return 0;
	path = xprintf("%s/checkpoints/list", st->sbxdir);
	if ((data = file_read(path, &len, 0)) == NULL ||
	    sscanf(data, "holt-checkpoints 1 next %lld", &next) != 1) {
		free(data);
		free(path);
		return 0;	/* none, or corrupt: list_load says so */
	}
	/* A torn last line goes: the lines put back start lines of their own. */
	cut = memrchr(data, '\n', len);
	len = cut != NULL ? (size_t)(cut + 1 - data) : 0;
	data[len] = '\0';
	for (p = (char *)lines; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		id = strtoll(p + 1, NULL, 10);
		*nl = '\0';
		if (id >= next && !list_has(data, id))
			buf_addf(&add, "%s\n", p);
		*nl = '\n';
	}
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 || ftruncate(fd, (off_t)len) != 0 ||
	    lseek(fd, 0, SEEK_END) == -1 ||
	    file_append_sync(fd, add.data != NULL ? add.data : "", add.len) != 0)
		rc = -1;
	if (fd != -1)
		close(fd);
	buf_release(&add);
	free(data);
	free(path);
	return rc;
}

/*
 * After a reboot, the objects the journal holds may be lost or torn:
 * write them again from it. Under the boot that wrote it, they are in the
 * page cache or on the disk, and nothing is to be done.
 */
static int
journal_replay(struct checkpoint_store *st)
{
	struct buf	 lines = BUF_INIT;
	char		*data, *p, *end, *nl, id[40], hash[65];
	size_t		 len, ml = sizeof JOURNAL_MAGIC - 1;
	unsigned long long size;
	int		 rc = 0;

	if (journal_size(st) == 0)
		return 0;
	p = xprintf("%s/checkpoints/journal", st->sbxdir);
	data = file_read(p, &len, 0);
	free(p);
	if (data == NULL)
		return -1;
	boot_id(id);
	end = data + len;
	if ((nl = memchr(data, '\n', len)) != NULL &&
	    strncmp(data, JOURNAL_MAGIC, ml) == 0 &&
	    (size_t)(nl - data) == ml + strlen(id) &&
	    memcmp(data + ml, id, strlen(id)) == 0) {
		free(data);
		return 0;
	}
	log_warnx("%s: checkpoints written before a reboot: checking them",
	    st->sbxdir);
	for (p = nl != NULL ? nl + 1 : end; p < end && rc == 0; p = nl + 1 +
	    size) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			break;	/* the torn end of the last batch */
		size = 0;
		if (strncmp(p, "l +", 3) == 0) {
			buf_add(&lines, p + 2, (size_t)(nl + 1 - (p + 2)));
			continue;
		}
		if (sscanf(p, "o %64s %llu", hash, &size) != 2 ||
		    strlen(hash) != 64 || size > (size_t)(end - nl - 1))
			break;
		rc = journal_put(st, hash, nl + 1, (size_t)size);
	}
	free(data);
	if (rc == 0)
		rc = journal_relist(st, buf_str(&lines));
	buf_release(&lines);
	if (rc == 0)
		rc = ckpt_journal_clear(st);
	return rc;
}

int
ckpt_obj_put_mem(struct checkpoint_store *st, const void *data, size_t len,
    char hash[65])
{
	struct sha256	 s;
	unsigned char	 h[32];
	char		 tmp[32], p[68];
	struct stat	 sb;
	int		 fd;

	sha256_init(&s);
	sha256_update(&s, data, len);
	sha256_final(&s, h);
	sha256_hex(h, hash);
	obj_path(hash, p);
	if (fstatat(st->objfd, p, &sb, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if ((fd = obj_tmp(st, tmp)) == -1)
		return -1;
	if (file_write_all(fd, data, len) != 0) {
		close(fd);
		unlinkat(st->objfd, tmp, 0);
		return -1;
	}
	obj_queue(st, fd, tmp, hash, len);
	return 0;
}

/*
 * Hash what fd holds from its start, and copy it to dst unless dst < 0:
 * one read either way.
 */
static int
obj_hash_copy(int fd, int dst, char hash[65], uint64_t *size)
{
	struct sha256	 s;
	unsigned char	 h[32];
	char		*chunk;
	ssize_t		 r;
	int		 saved;

	chunk = xmalloc(COPY_CHUNK);
	sha256_init(&s);
	*size = 0;
	for (;;) {
		r = pread(fd, chunk, COPY_CHUNK, (off_t)*size);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		sha256_update(&s, chunk, (size_t)r);
		if (dst != -1 && file_write_all(dst, chunk, (size_t)r) != 0) {
			r = -1;
			break;
		}
		*size += (uint64_t)r;
	}
	saved = errno;
	free(chunk);
	if (r != 0) {
		errno = saved;
		return -1;
	}
	sha256_final(&s, h);
	sha256_hex(h, hash);
	return 0;
}

/*
 * Store an open file. Where the filesystem has reflinks the object is a
 * clone, hashed from the clone (so a write racing the copy cannot make the
 * hash lie); else it is copied while hashed.
 */
int
ckpt_obj_put_fd(struct checkpoint_store *st, int src, char hash[65])
{
	char		 tmp[32];
	uint64_t	 size;
	int		 fd, rc, saved;

	if ((fd = obj_tmp(st, tmp)) == -1)
		return -1;
	if (!st->noclone && ioctl(fd, FICLONE, src) == 0)
		rc = obj_hash_copy(fd, -1, hash, &size);
	else {
		st->noclone = 1;
		rc = obj_hash_copy(src, fd, hash, &size);
	}
	if (rc != 0) {
		saved = errno;
		close(fd);
		unlinkat(st->objfd, tmp, 0);
		errno = saved;
		return -1;
	}
	obj_queue(st, fd, tmp, hash, size);
	return 0;
}

/* Trees and commits. */

void
ckpt_tree_release(struct ckpt_tree *t)
{
	size_t	 i;

	for (i = 0; i < t->n; i++)
		free(t->e[i].name);
	free(t->e);
	t->e = NULL;
	t->n = 0;
}

static int
tree_parse_line(const char *line, size_t len, struct ckpt_entry *e)
{
	char		*copy, *sp, *end;
	const char	*f[8];
	int		 i;

	copy = xstrndup(line, len);
	sp = copy;
	for (i = 0; i < 7; i++) {
		f[i] = sp;
		if ((sp = strchr(sp, ' ')) == NULL)
			goto bad;
		*sp++ = '\0';
	}
	f[7] = sp;
	if (strlen(f[0]) != 1 || strchr("fldpw", f[0][0]) == NULL ||
	    strlen(f[6]) != 64 || *f[7] == '\0')
		goto bad;
	e->type = f[0][0];
	e->mode = (unsigned)strtoul(f[1], &end, 8) & (07777 | CKPT_OPAQUE);
	e->uid = strtoll(f[2], &end, 10);
	e->gid = strtoll(f[3], &end, 10);
	e->size = strtoull(f[4], &end, 10);
	e->mtime_ns = strtoll(f[5], &end, 10);
	memcpy(e->hash, f[6], 65);
	e->name = ckpt_unescape(f[7], strlen(f[7]));
	free(copy);
	if (*e->name == '\0' || strchr(e->name, '/') != NULL ||
	    strcmp(e->name, ".") == 0 || strcmp(e->name, "..") == 0) {
		free(e->name);
		return -1;
	}
	return 0;
bad:
	free(copy);
	return -1;
}

int
ckpt_tree_read(struct checkpoint_store *st, const char *hash,
    struct ckpt_tree *t, char **cause)
{
	char	*data, *p, *nl;
	size_t	 len;

	t->e = NULL;
	t->n = 0;
	if ((data = ckpt_obj_read(st, hash, &len)) == NULL) {
		*cause = xprintf("checkpoint object '%.12s': %s", hash,
		    strerror(errno));
		return -1;
	}
	if (len < 5 || memcmp(data, "tree\n", 5) != 0)
		goto bad;
	for (p = data + 5; p < data + len; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(data + len - p))) == NULL)
			goto bad;
		t->e = xreallocarray(t->e, t->n + 1, sizeof *t->e);
		if (tree_parse_line(p, (size_t)(nl - p), &t->e[t->n]) != 0)
			goto bad;
		t->n++;
	}
	free(data);
	return 0;
bad:
	free(data);
	ckpt_tree_release(t);
	*cause = xprintf("checkpoint object '%.12s': not a valid tree", hash);
	return -1;
}

void
ckpt_commit_release(struct ckpt_commit *c)
{
	size_t	 i;

	for (i = 0; i < c->nlinks; i++)
		free(c->links[i]);
	free(c->links);
	memset(c, 0, sizeof *c);
}

int
ckpt_commit_read(struct checkpoint_store *st, const char *hash,
    struct ckpt_commit *c, char **cause)
{
	char	*data, *p, *nl, *line;
	size_t	 len;
	int	 i;

	memset(c, 0, sizeof *c);
	if ((data = ckpt_obj_read(st, hash, &len)) == NULL) {
		*cause = xprintf("checkpoint object '%.12s': %s", hash,
		    strerror(errno));
		return -1;
	}
	if (len < 7 || memcmp(data, "commit\n", 7) != 0)
		goto bad;
	for (p = data + 7; p < data + len; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(data + len - p))) == NULL)
			goto bad;
		line = xstrndup(p, (size_t)(nl - p));
		if (strncmp(line, "link ", 5) == 0) {
			c->links = xreallocarray(c->links, c->nlinks + 1,
			    sizeof *c->links);
			c->links[c->nlinks++] = xstrdup(line + 5);
		} else if (strncmp(line, "root ", 5) == 0) {
			for (i = 0; checkpoint_roots[i] != NULL; i++) {
				size_t rl = strlen(checkpoint_roots[i]);
				if (strncmp(line + 5, checkpoint_roots[i], rl) == 0
				    && line[5 + rl] == ' ' &&
				    strlen(line + 6 + rl) == 64)
					memcpy(c->root[i], line + 6 + rl, 65);
			}
		}
		free(line);
	}
	free(data);
	return 0;
bad:
	free(data);
	ckpt_commit_release(c);
	*cause = xprintf("checkpoint object '%.12s': not a valid commit", hash);
	return -1;
}

/* A set of hashes: the objects a prune keeps. */

struct idx_ent {
	char		*key;
};

struct idx {
	struct idx_ent	*t;
	size_t		 cap, n;
};

static struct idx_ent *
idx_slot(struct idx *x, const char *key)
{
	size_t	 i = (size_t)ckpt_fnv(key) & (x->cap - 1);

	while (x->t[i].key != NULL && strcmp(x->t[i].key, key) != 0)
		i = (i + 1) & (x->cap - 1);
	return &x->t[i];
}

static void
idx_grow(struct idx *x)
{
	struct idx_ent	*old = x->t, *e;
	size_t		 oldcap = x->cap, i;

	x->cap = oldcap == 0 ? 1024 : oldcap * 2;
	x->t = xcalloc(x->cap, sizeof *x->t);
	for (i = 0; i < oldcap; i++) {
		if (old[i].key != NULL) {
			e = idx_slot(x, old[i].key);
			*e = old[i];
		}
	}
	free(old);
}

static struct idx_ent *
idx_get(struct idx *x, const char *key)
{
	struct idx_ent	*e;

	if (x->cap == 0)
		return NULL;
	e = idx_slot(x, key);
	return e->key != NULL ? e : NULL;
}

static struct idx_ent *
idx_put(struct idx *x, const char *key)
{
	struct idx_ent	*e;

	if ((x->n + 1) * 2 > x->cap)
		idx_grow(x);
	e = idx_slot(x, key);
	if (e->key == NULL) {
		e->key = xstrdup(key);
		x->n++;
	}
	return e;
}

static void
idx_free(struct idx *x)
{
	size_t	 i;

	for (i = 0; i < x->cap; i++)
		free(x->t[i].key);
	free(x->t);
	memset(x, 0, sizeof *x);
}

/* The list of checkpoints. */

char *
ckpt_list_line(const struct checkpoint_info *ci)
{
	return xprintf("+%lld %s %llu %llu %llu %llu\n", ci->id, ci->commit,
	    (unsigned long long)ci->time_ms, (unsigned long long)ci->files,
	    (unsigned long long)ci->changed, (unsigned long long)ci->bytes);
}

/*
 * A checkpoint is one line appended to the list ("+" marks it as counted
 * in neither the header's next nor its total); the list is written whole
 * only when pruned, or when it has none yet. The line is synced, unless
 * the journal holds it (journal_replay puts it back after a reboot).
 */
int
ckpt_list_add(struct checkpoint_store *st, const struct checkpoint_info *ci,
    int sync, char **cause)
{
	struct stat	 sb;
	char		*line;
	int		 fd, rc = -1, saved;

	st->list = xreallocarray(st->list, st->nlist + 1, sizeof *st->list);
	st->list[st->nlist++] = *ci;
	st->next++;
	fd = openat(st->dirfd, "list", O_WRONLY | O_APPEND | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1 && errno == ENOENT)
		rc = ckpt_list_save(st, cause);
	else if (fd != -1) {
		line = ckpt_list_line(ci);
		if (fstat(fd, &sb) == 0 && (rc = sync ? file_append_sync(fd,
		    line, strlen(line)) : file_write_all(fd, line,
		    strlen(line))) != 0) {
			saved = errno;
			(void)ftruncate(fd, sb.st_size);	/* no torn line */
			errno = saved;
		}
		free(line);
		close(fd);
		if (rc != 0)
			*cause = xprintf("%s/checkpoints/list: %s", st->sbxdir,
			    strerror(errno));
	} else
		*cause = xprintf("%s/checkpoints/list: %s", st->sbxdir,
		    strerror(errno));
	if (rc != 0) {
		st->nlist--;
		st->next--;
	}
	return rc;
}

int
ckpt_list_save(struct checkpoint_store *st, char **cause)
{
	struct buf		 b = BUF_INIT;
	struct checkpoint_info	*ci;
	size_t			 i;
	char			*path;
	int			 rc;

	buf_addf(&b, "holt-checkpoints 1 next %lld total %llu\n", st->next,
	    (unsigned long long)st->total);
	for (i = 0; i < st->nlist; i++) {
		ci = &st->list[i];
		buf_addf(&b, "%lld %s %llu %llu %llu %llu\n", ci->id, ci->commit,
		    (unsigned long long)ci->time_ms,
		    (unsigned long long)ci->files,
		    (unsigned long long)ci->changed,
		    (unsigned long long)ci->bytes);
	}
	path = xprintf("%s/checkpoints/list", st->sbxdir);
	rc = file_write_atomic(path, b.data, b.len, 0600);
	buf_release(&b);
	if (rc != 0)
		*cause = xprintf("%s: %s", path, strerror(errno));
	free(path);
	return rc;
}

static int
list_load(struct checkpoint_store *st, char **cause)
{
	char			*path, *data, *p, *nl;
	size_t			 len;
	unsigned long long	 total, t, f, c, by;
	struct checkpoint_info	 ci;
	int			 torn = 0;

	path = xprintf("%s/checkpoints/list", st->sbxdir);
	st->next = 1;
	if ((data = file_read(path, &len, 0)) == NULL) {
		if (errno == ENOENT) {
			free(path);
			return 0;
		}
		*cause = xprintf("%s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	p = data;
	if (sscanf(p, "holt-checkpoints 1 next %lld total %llu", &st->next,
	    &total) != 2)
		goto bad;
	st->total = total;
	for (p = strchr(p, '\n'); p != NULL && p[1] != '\0'; p = nl) {
		p++;
		if ((nl = strchr(p, '\n')) == NULL) {
			torn = 1;	/* an append cut short: not taken */
			break;
		}
		memset(&ci, 0, sizeof ci);
		if (sscanf(p, "%lld %64s %llu %llu %llu %llu", &ci.id, ci.commit,
		    &t, &f, &c, &by) != 6 || strlen(ci.commit) != 64)
			goto bad;
		ci.time_ms = t;
		ci.files = f;
		ci.changed = c;
		ci.bytes = by;
		/* Appended: the header's next and total are before it. */
		if (*p == '+') {
			st->total += by;
			if (ci.id >= st->next)
				st->next = ci.id + 1;
		}
		st->list = xreallocarray(st->list, st->nlist + 1,
		    sizeof *st->list);
		st->list[st->nlist++] = ci;
	}
	free(data);
	free(path);
	/* The next append must start a line of its own. */
	if (torn)
		return ckpt_list_save(st, cause);
	return 0;
bad:
	*cause = xprintf("%s: corrupt (remove the checkpoints/ directory to "
	    "start again without checkpoints)", path);
	free(data);
	free(path);
	return -1;
}

/* The store. */

static struct checkpoint_store *store_open(const char *, int, char **);

struct checkpoint_store *
checkpoint_store_open(const char *sandbox_dir, char **cause)
{
	return store_open(sandbox_dir, LOCK_EX, cause);
}

struct checkpoint_store *
checkpoint_store_open_now(const char *sandbox_dir, char **cause)
{
	return store_open(sandbox_dir, LOCK_EX | LOCK_NB, cause);
}

static struct checkpoint_store *
store_open(const char *sandbox_dir, int how, char **cause)
{
	struct checkpoint_store	*st;

	st = xcalloc(1, sizeof *st);
	st->sbxfd = st->dirfd = st->objfd = st->lockfd = -1;
	st->sbxdir = xstrdup(sandbox_dir);
	if ((st->sbxfd = open(sandbox_dir, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC | O_NOFOLLOW)) == -1)
		goto fail;
	if (mkdirat(st->sbxfd, "checkpoints", 0700) != 0 && errno != EEXIST)
		goto fail;
	if ((st->dirfd = openat(st->sbxfd, "checkpoints", O_RDONLY |
	    O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		goto fail;
	if (mkdirat(st->dirfd, "objects", 0700) != 0 && errno != EEXIST)
		goto fail;
	if ((st->objfd = openat(st->dirfd, "objects", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC | O_NOFOLLOW)) == -1)
		goto fail;
	if ((st->lockfd = openat(st->dirfd, "lock", O_RDWR | O_CREAT |
	    O_CLOEXEC | O_NOFOLLOW, 0600)) == -1)
		goto fail;
	while (flock(st->lockfd, how) != 0) {
		if (errno == EWOULDBLOCK) {
			*cause = NULL;	/* another has it */
			checkpoint_store_close(st);
			return NULL;
		}
		if (errno != EINTR)
			goto fail;
	}
	if (journal_replay(st) != 0) {
		*cause = xprintf("%s/checkpoints/journal: %s", sandbox_dir,
		    strerror(errno));
		checkpoint_store_close(st);
		return NULL;
	}
	if (list_load(st, cause) != 0) {
		checkpoint_store_close(st);
		return NULL;
	}
	return st;
fail:
	*cause = xprintf("%s/checkpoints: %s", sandbox_dir, strerror(errno));
	checkpoint_store_close(st);
	return NULL;
}

void
checkpoint_store_close(struct checkpoint_store *st)
{
	if (st == NULL)
		return;
	if (st->npending > 0)
		ckpt_obj_abort(st);
	if (st->lockfd != -1)
		close(st->lockfd);
	if (st->objfd != -1)
		close(st->objfd);
	if (st->dirfd != -1)
		close(st->dirfd);
	if (st->sbxfd != -1)
		close(st->sbxfd);
	free(st->list);
	free(st->sbxdir);
	free(st);
}

uint64_t
checkpoint_store_bytes(struct checkpoint_store *st)
{
	return st->total;
}

struct checkpoint_info *
checkpoint_list(struct checkpoint_store *st, size_t *n)
{
	struct checkpoint_info	*l;

	*n = st->nlist;
	l = xcalloc(st->nlist + 1, sizeof *l);
	if (st->nlist > 0)
		memcpy(l, st->list, st->nlist * sizeof *l);
	return l;
}

int
checkpoint_find(struct checkpoint_store *st, long long id,
    struct checkpoint_info *ci)
{
	size_t	 i;

	for (i = 0; i < st->nlist; i++) {
		if (st->list[i].id == id) {
			*ci = st->list[i];
			return 0;
		}
	}
	return -1;
}


static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **
ckpt_names(int fd, size_t *np)
{
	DIR		*d;
	struct dirent	*de;
	char		**v = NULL;
	size_t		 n = 0;
	int		 dfd;

	*np = 0;
	if ((dfd = dup(fd)) == -1 || (d = fdopendir(dfd)) == NULL) {
		if (dfd != -1)
			close(dfd);
		return NULL;
	}
	rewinddir(d);	/* the dup shares fd's offset: read from the start */
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		v = xreallocarray(v, n + 1, sizeof *v);
		v[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof *v, name_cmp);
	*np = n;
	if (v == NULL)
		v = xcalloc(1, sizeof *v);
	return v;
}

/* Pruning: drop the oldest checkpoints, then every object none names. */

static int
gc_mark_tree(struct checkpoint_store *st, struct idx *live, const char *hash,
    char **cause)
{
	struct ckpt_tree	 t;
	size_t			 i;
	int			 rc = 0;

	if (idx_get(live, hash) != NULL)
		return 0;
	idx_put(live, hash);
	if (ckpt_tree_read(st, hash, &t, cause) != 0)
		return -1;
	for (i = 0; i < t.n && rc == 0; i++) {
		if (t.e[i].type == 'd')
			rc = gc_mark_tree(st, live, t.e[i].hash, cause);
		else if (t.e[i].type != 'p')
			idx_put(live, t.e[i].hash);
	}
	ckpt_tree_release(&t);
	return rc;
}

static int
gc_mark(struct checkpoint_store *st, struct idx *live, char **cause)
{
	struct ckpt_commit	 c;
	struct ckpt_index	 x;
	uid_t			 uid;
	gid_t			 gid;
	size_t			 i, j, r;

	for (i = 0; i < st->nlist; i++) {
		idx_put(live, st->list[i].commit);
		if (ckpt_commit_read(st, st->list[i].commit, &c, cause) != 0)
			return -1;
		for (r = 0; checkpoint_roots[r] != NULL; r++) {
			if (c.root[r][0] != '\0' && gc_mark_tree(st, live,
			    c.root[r], cause) != 0) {
				ckpt_commit_release(&c);
				return -1;
			}
		}
		ckpt_commit_release(&c);
	}
	/* The stat cache names objects the next checkpoint reuses. */
	ckpt_base_owner(st->sbxfd, &uid, &gid);
	ckpt_index_load(st, &x, uid, gid);
	for (i = 0; i < x.n; i++) {
		if (x.dirs[i]->tree[0] != '\0')
			idx_put(live, x.dirs[i]->tree);
		for (j = 0; j < x.dirs[i]->n; j++) {
			if (strchr("fld", x.dirs[i]->e[j].type) != NULL)
				idx_put(live, x.dirs[i]->e[j].hash);
		}
	}
	ckpt_index_free(&x);
	return 0;
}

static uint64_t
gc_sweep(struct checkpoint_store *st, struct idx *live)
{
	char		**dirs, **names, hash[65];
	size_t		 nd, nn, i, j;
	struct stat	 sb;
	uint64_t	 total = 0;
	int		 fd;

	if ((dirs = ckpt_names(st->objfd, &nd)) == NULL)
		return st->total;
	for (i = 0; i < nd; i++) {
		if (strncmp(dirs[i], "tmp-", 4) == 0) {
			unlinkat(st->objfd, dirs[i], 0);	/* a crash's */
			free(dirs[i]);
			continue;
		}
		fd = openat(st->objfd, dirs[i], O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (fd == -1 || strlen(dirs[i]) != 2 ||
		    (names = ckpt_names(fd, &nn)) == NULL) {
			if (fd != -1)
				close(fd);
			free(dirs[i]);
			continue;
		}
		for (j = 0; j < nn; j++) {
			snprintf(hash, sizeof hash, "%s%s", dirs[i], names[j]);
			if (fstatat(fd, names[j], &sb, AT_SYMLINK_NOFOLLOW) == 0) {
				if (idx_get(live, hash) == NULL)
					unlinkat(fd, names[j], 0);
				else
					total += (uint64_t)sb.st_size;
			}
			free(names[j]);
		}
		free(names);
		close(fd);
		free(dirs[i]);
	}
	free(dirs);
	return total;
}

int
checkpoint_prune(struct checkpoint_store *st, uint64_t max, char **cause)
{
	struct idx	 live;
	size_t		 drop;
	uint64_t	 left;

	/* What a checkpoint added is about what dropping it frees: again
	 * until it is within bounds, the newest always kept. */
	while (max != 0 && st->total > max && st->nlist > 1) {
		left = st->total;
		for (drop = 0; drop + 1 < st->nlist && left > max; drop++)
			left -= st->list[drop].bytes < left ?
			    st->list[drop].bytes : left;
		if (drop == 0)
			drop = 1;
		memmove(st->list, st->list + drop, (st->nlist - drop) *
		    sizeof *st->list);
		st->nlist -= drop;
		/* The list first: a crash may leak objects, never lose one. */
		if (ckpt_list_save(st, cause) != 0)
			return -1;
		memset(&live, 0, sizeof live);
		if (gc_mark(st, &live, cause) != 0) {
			idx_free(&live);
			return -1;
		}
		st->total = gc_sweep(st, &live);
		idx_free(&live);
		if (ckpt_list_save(st, cause) != 0)
			return -1;
	}
	return 0;
}

int
checkpoint_take(struct checkpoint_store *st, struct checkpoint_info *ci,
    char **cause)
{
	return ckpt_take(st, ci, 1, cause);
}

/* The empty tree's object, for a root a checkpoint did not have. */
int
ckpt_tree_empty(struct checkpoint_store *st, char hash[65])
{
	uint64_t	 added;

	int		 journalled;

	if (ckpt_obj_put_mem(st, "tree\n", 5, hash) != 0)
		return -1;
	added = ckpt_obj_new_bytes(st);
	if (ckpt_obj_flush(st, NULL, &journalled) != 0)
		return -1;
	st->total += added;
	return 0;
}
