/*
 * checkpoint.c: the checkpoint store of a sandbox and taking checkpoints
 * (DESIGN 15; layout and promises in checkpoint.h).
 *
 * Taking one walks every root once, lstat-ing each entry (the cost git's
 * index pays too: O(entries), about 1 us each), and reads only files whose
 * stat differs from the cache, so it costs O(tree) stats + O(changed
 * bytes). A file is trusted from the cache only when it was last changed
 * (ctime, which no process can set) well before it was last hashed, so a
 * write that races a scan is seen by the next one. New objects are made
 * durable (fdatasync of each new one and of the directories they went
 * into, or one syncfs when there are many) before the list names the
 * checkpoint.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint-int.h"

const char *const checkpoint_roots[] = { "workspace", "home", "root", NULL };

/* Coarse file timestamps lag the clock by a tick: trust stat after this. */
#define RACY_NS		(50LL * 1000 * 1000)
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

static long long
ts_ns(const struct timespec *ts)
{
	return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static long long
now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts_ns(&ts);
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
		fd = openat(st->objfd, name, O_WRONLY | O_CREAT | O_EXCL |
		    O_CLOEXEC, 0600);
		if (fd != -1 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/*
 * Move a finished temporary (fd, which this closes) into place; *added
 * is its size if new. A new object is made durable, and the directory it
 * went into is marked to be synced (ckpt_sync_dirs).
 */
static int
obj_commit(struct checkpoint_store *st, int fd, const char *tmp,
    const char *hash, uint64_t size, uint64_t *added)
{
	char		 p[68], d[3];
	struct stat	 sb;
	int		 saved;

	obj_path(hash, p);
	if (fstatat(st->objfd, p, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		close(fd);
		unlinkat(st->objfd, tmp, 0);
		return 0;
	}
	memcpy(d, hash, 2);
	d[2] = '\0';
	/*
	 * Few new objects: each is synced (syncfs would wait for every other
	 * writer of the filesystem). Many (a first checkpoint): one syncfs
	 * at the end costs less than thousands of fdatasyncs.
	 */
	if (++st->nnew <= SYNC_EACH_MAX && fdatasync(fd) != 0)
		goto fail;
	close(fd);
	fd = -1;
	if (mkdirat(st->objfd, d, 0700) != 0 && errno != EEXIST)
		goto fail;
	if (renameat(st->objfd, tmp, st->objfd, p) != 0)
		goto fail;
	st->dirty[strtoul(d, NULL, 16) & 255] = 1;
	*added += size;
	return 0;
fail:
	saved = errno;
	if (fd != -1)
		close(fd);
	unlinkat(st->objfd, tmp, 0);
	errno = saved;
	return -1;
}

/* Make the new objects durable: their directories, or all at once. */
static int
ckpt_sync_dirs(struct checkpoint_store *st)
{
	char	 d[3];
	int	 i, fd, rc = 0;

	if (st->nnew > SYNC_EACH_MAX) {
		st->nnew = 0;
		memset(st->dirty, 0, sizeof st->dirty);
		return syncfs(st->objfd);
	}
	st->nnew = 0;

	for (i = 0; i < 256; i++) {
		if (!st->dirty[i])
			continue;
		st->dirty[i] = 0;
		snprintf(d, sizeof d, "%02x", i);
		fd = openat(st->objfd, d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd == -1 || fsync(fd) != 0)
			rc = -1;
		if (fd != -1)
			close(fd);
	}
	if (fsync(st->objfd) != 0)
		rc = -1;
	return rc;
}

static int
obj_put_mem(struct checkpoint_store *st, const void *data, size_t len,
    char hash[65], uint64_t *added)
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
	return obj_commit(st, fd, tmp, hash, len, added);
}

/* Copy an open file into the store while hashing it (one read). */
static int
obj_put_fd(struct checkpoint_store *st, int src, char hash[65],
    uint64_t *added)
{
	struct sha256	 s;
	unsigned char	 h[32];
	char		 tmp[32], *chunk;
	ssize_t		 r;
	uint64_t	 size = 0;
	int		 fd, saved;

	if ((fd = obj_tmp(st, tmp)) == -1)
		return -1;
	chunk = xmalloc(COPY_CHUNK);
	sha256_init(&s);
	for (;;) {
		r = read(src, chunk, COPY_CHUNK);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		sha256_update(&s, chunk, (size_t)r);
		if (file_write_all(fd, chunk, (size_t)r) != 0) {
			r = -1;
			break;
		}
		size += (uint64_t)r;
	}
	saved = errno;
	free(chunk);
	if (r != 0) {
		close(fd);
		unlinkat(st->objfd, tmp, 0);
		errno = saved;
		return -1;
	}
	sha256_final(&s, h);
	sha256_hex(h, hash);
	return obj_commit(st, fd, tmp, hash, size, added);
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

/* The stat cache: path -> stat and hash, an open-addressed table. */

struct idx_ent {
	char		*key;		/* ROOT/PATH */
	char		 hash[65];
	char		 type;
	dev_t		 dev;
	ino_t		 ino;
	uint64_t	 size;
	long long	 mtime, ctime, hashed;
	unsigned	 mode;
	int		 seen;
};

struct idx {
	struct idx_ent	*t;
	size_t		 cap, n;
};

static uint64_t
idx_fnv(const char *s)
{
	uint64_t	 h = 1469598103934665603ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static struct idx_ent *
idx_slot(struct idx *x, const char *key)
{
	size_t	 i = (size_t)idx_fnv(key) & (x->cap - 1);

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

/* The index file; a broken one is only a cache: start again without it. */
static void
idx_load(struct checkpoint_store *st, struct idx *x)
{
	char		*data, *p, *nl, *key, ty;
	char		 hash[65], ek[8192];
	unsigned long long dev, ino, size;
	long long	 mt, ct, hd;
	unsigned	 mode;
	size_t		 len, lines = 0, want = 0;
	struct idx_ent	*e;
	int		 fd;

	memset(x, 0, sizeof *x);
	if ((fd = openat(st->dirfd, "index", O_RDONLY | O_CLOEXEC)) == -1)
		return;
	close(fd);
	{
		char *path = xprintf("%s/checkpoints/index", st->sbxdir);
		data = file_read(path, &len, 0);
		free(path);
	}
	if (data == NULL)
		return;
	for (p = data; p < data + len; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(data + len - p))) == NULL)
			break;
		*nl = '\0';
		if (strncmp(p, "end ", 4) == 0) {
			want = strtoull(p + 4, NULL, 10);
			break;
		}
		if (sscanf(p, "%64s %c %llu %llu %llu %lld %lld %lld %o %8191s",
		    hash, &ty, &dev, &ino, &size, &mt, &ct, &hd, &mode, ek) != 10)
			break;
		key = ckpt_unescape(ek, strlen(ek));
		e = idx_put(x, key);
		free(key);
		memcpy(e->hash, hash, 65);
		e->type = ty;
		e->dev = (dev_t)dev;
		e->ino = (ino_t)ino;
		e->size = size;
		e->mtime = mt;
		e->ctime = ct;
		e->hashed = hd;
		e->mode = mode;
		lines++;
	}
	free(data);
	if (want != lines || lines == 0)
		idx_free(x);
}

static int
idx_save(struct checkpoint_store *st, struct idx *x)
{
	struct buf	 b = BUF_INIT;
	struct idx_ent	*e;
	size_t		 i, n = 0;
	int		 rc, fd;

	for (i = 0; i < x->cap; i++) {
		e = &x->t[i];
		if (e->key == NULL || !e->seen)
			continue;
		buf_addf(&b, "%s %c %llu %llu %llu %lld %lld %lld %o ", e->hash,
		    e->type, (unsigned long long)e->dev,
		    (unsigned long long)e->ino, (unsigned long long)e->size,
		    e->mtime, e->ctime, e->hashed, e->mode);
		ckpt_escape(&b, e->key);
		buf_addc(&b, '\n');
		n++;
	}
	buf_addf(&b, "end %zu\n", n);
	/*
	 * A cache: not synced (a torn one is detected by its last line and
	 * dropped, and everything is hashed again), but renamed into place
	 * so that it is never read half written.
	 */
	rc = -1;
	fd = openat(st->dirfd, "index.tmp", O_WRONLY | O_CREAT | O_TRUNC |
	    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd != -1) {
		rc = file_write_all(fd, b.data, b.len);
		close(fd);
		if (rc == 0)
			rc = renameat(st->dirfd, "index.tmp", st->dirfd, "index");
	}
	buf_release(&b);
	return rc;
}

/* The list of checkpoints. */

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
		if ((nl = strchr(p, '\n')) == NULL)
			goto bad;
		memset(&ci, 0, sizeof ci);
		if (sscanf(p, "%lld %64s %llu %llu %llu %llu", &ci.id, ci.commit,
		    &t, &f, &c, &by) != 6 || strlen(ci.commit) != 64)
			goto bad;
		ci.time_ms = t;
		ci.files = f;
		ci.changed = c;
		ci.bytes = by;
		st->list = xreallocarray(st->list, st->nlist + 1,
		    sizeof *st->list);
		st->list[st->nlist++] = ci;
	}
	free(data);
	free(path);
	return 0;
bad:
	*cause = xprintf("%s: corrupt (remove the checkpoints/ directory to "
	    "start again without checkpoints)", path);
	free(data);
	free(path);
	return -1;
}

/* The store. */

struct checkpoint_store *
checkpoint_store_open(const char *sandbox_dir, char **cause)
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
	while (flock(st->lockfd, LOCK_EX) != 0) {
		if (errno != EINTR)
			goto fail;
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

/* Taking a checkpoint. */

struct ckpt_link {
	dev_t	 dev;
	ino_t	 ino;
	char	*key;
};

struct scan {
	struct checkpoint_store	*st;
	struct idx		 idx;
	long long		 start;
	uint64_t		 added, files, changed;
	dev_t			 dev;
	uid_t			 uid;		/* owner of workspace/ */
	gid_t			 gid;
	struct buf		 path;		/* ROOT/dir/... of the walk */
	struct ckpt_link	*linkv;		/* files with several names */
	size_t			 nlinkv;
	char			*error;
};

static void
scan_fail(struct scan *sc, const char *name, int err)
{
	if (sc->error == NULL)
		sc->error = xprintf("cannot read '%s%s%s': %s", sc->path.data,
		    name != NULL ? "/" : "", name != NULL ? name : "",
		    strerror(err));
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **
scan_names(int fd, size_t *np)
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

/* Note a hard-linked file; names of one inode form a group at the end. */
static void
scan_link(struct scan *sc, const struct stat *sb, const char *key)
{
	struct ckpt_link	*l;

	sc->linkv = xreallocarray(sc->linkv, sc->nlinkv + 1, sizeof *sc->linkv);
	l = &sc->linkv[sc->nlinkv++];
	l->dev = sb->st_dev;
	l->ino = sb->st_ino;
	l->key = xstrdup(key);
}

static int
link_cmp(const void *va, const void *vb)
{
	const struct ckpt_link	*a = va, *b = vb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->ino != b->ino)
		return a->ino < b->ino ? -1 : 1;
	return strcmp(a->key, b->key);
}

/* "link ROOT/PATH ROOT/PATH ..." lines, one per inode with several names. */
static void
scan_links(struct scan *sc, struct buf *commit)
{
	size_t	 i, j;

	if (sc->nlinkv > 1)
		qsort(sc->linkv, sc->nlinkv, sizeof *sc->linkv, link_cmp);
	for (i = 0; i < sc->nlinkv; i = j) {
		for (j = i + 1; j < sc->nlinkv && sc->linkv[j].dev ==
		    sc->linkv[i].dev && sc->linkv[j].ino == sc->linkv[i].ino; j++)
			;
		if (j - i < 2)
			continue;
		buf_adds(commit, "link");
		for (; i < j; i++) {
			buf_addc(commit, ' ');
			ckpt_escape(commit, sc->linkv[i].key);
		}
		buf_addc(commit, '\n');
	}
	for (i = 0; i < sc->nlinkv; i++)
		free(sc->linkv[i].key);
	free(sc->linkv);
	sc->linkv = NULL;
	sc->nlinkv = 0;
}

static int scan_dir(struct scan *, int, char hash[65]);

static int
scan_file(struct scan *sc, int dirfd, const char *name, struct stat *sb,
    const char *key, char hash[65])
{
	struct idx_ent	*e = idx_get(&sc->idx, key);
	struct stat	 fsb;
	long long	 hashed;
	int		 fd;

	if (e != NULL && e->type == 'f' && e->dev == sb->st_dev &&
	    e->ino == sb->st_ino && e->size == (uint64_t)sb->st_size &&
	    e->mtime == ts_ns(&sb->st_mtim) && e->ctime == ts_ns(&sb->st_ctim) &&
	    e->ctime + RACY_NS < e->hashed) {
		memcpy(hash, e->hash, 65);
		e->seen = 1;
		return 0;
	}
	hashed = now_ns();
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY | O_CLOEXEC);
	if (fd == -1) {
		scan_fail(sc, name, errno);
		return -1;
	}
	if (fstat(fd, &fsb) != 0 || !S_ISREG(fsb.st_mode) ||
	    fsb.st_ino != sb->st_ino) {
		close(fd);
		scan_fail(sc, name, EAGAIN);	/* replaced while scanned */
		return -1;
	}
	if (obj_put_fd(sc->st, fd, hash, &sc->added) != 0) {
		if (sc->error == NULL)
			sc->error = xprintf("cannot store '%s/%s': %s",
			    sc->path.data, name, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (e == NULL || strcmp(e->hash, hash) != 0)
		sc->changed++;
	e = idx_put(&sc->idx, key);
	memcpy(e->hash, hash, 65);
	e->type = 'f';
	e->dev = sb->st_dev;
	e->ino = sb->st_ino;
	e->size = (uint64_t)sb->st_size;
	e->mtime = ts_ns(&sb->st_mtim);
	e->ctime = ts_ns(&sb->st_ctim);
	e->hashed = hashed;
	e->mode = sb->st_mode & 07777;
	e->seen = 1;
	return 0;
}

/* A symlink, FIFO or directory: note it in the index to count changes. */
static void
scan_note(struct scan *sc, const char *key, char type, const char *hash,
    unsigned mode)
{
	struct idx_ent	*e = idx_get(&sc->idx, key);

	/* A directory's tree changes with what is in it: count only that. */
	if (type != 'd' && (e == NULL || e->type != type ||
	    strcmp(e->hash, hash) != 0 || e->mode != mode))
		sc->changed++;
	e = idx_put(&sc->idx, key);
	memset(e->hash, 0, sizeof e->hash);
	memcpy(e->hash, hash, strlen(hash) + 1);
	e->type = type;
	e->mode = mode;
	e->dev = 0;
	e->ino = 0;
	e->hashed = 0;
	e->seen = 1;
}

/* An opaque directory of the root overlay (its upper layer only). */
static int
scan_opaque(int dirfd, const char *name)
{
	char	 v[4];
	int	 fd;
	ssize_t	 n;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		return 0;
	n = fgetxattr(fd, CKPT_OPAQUE_XATTR, v, sizeof v);
	close(fd);
	return n == 1 && v[0] == 'y';
}

void
ckpt_base_owner(int sbxfd, uid_t *uid, gid_t *gid)
{
	struct stat	 sb;

	*uid = 0;
	*gid = 0;
	if (fstatat(sbxfd, "workspace", &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		*uid = sb.st_uid;
		*gid = sb.st_gid;
	}
}

static int
scan_entry(struct scan *sc, int dirfd, const char *name, struct buf *tree)
{
	struct stat	 sb;
	char		 hash[65], target[4096];
	char		 type;
	ssize_t		 n;
	size_t		 plen = sc->path.len;
	unsigned	 mode;
	int		 fd, rc = 0;
	char		*key;

	if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT)
			return 0;	/* gone while we looked */
		scan_fail(sc, name, errno);
		return -1;
	}
	key = xprintf("%s/%s", sc->path.data, name);
	memset(hash, '0', 64);
	hash[64] = '\0';
	if (S_ISREG(sb.st_mode)) {
		type = 'f';
		if (scan_file(sc, dirfd, name, &sb, key, hash) != 0)
			rc = -1;
		else if (sb.st_nlink > 1)
			scan_link(sc, &sb, key);
	} else if (S_ISLNK(sb.st_mode)) {
		type = 'l';
		n = readlinkat(dirfd, name, target, sizeof target - 1);
		if (n < 0) {
			scan_fail(sc, name, errno);
			rc = -1;
		} else if (obj_put_mem(sc->st, target, (size_t)n, hash,
		    &sc->added) != 0) {
			scan_fail(sc, name, errno);
			rc = -1;
		} else
			scan_note(sc, key, 'l', hash, 0777);
	} else if (S_ISDIR(sb.st_mode)) {
		type = 'd';
		if (sb.st_dev != sc->dev) {
			free(key);
			return 0;	/* a mount: not the sandbox's files */
		}
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (fd == -1) {
			scan_fail(sc, name, errno);
			rc = -1;
		} else {
			buf_addc(&sc->path, '/');
			buf_adds(&sc->path, name);
			rc = scan_dir(sc, fd, hash);
			close(fd);
			sc->path.len = plen;
			sc->path.data[plen] = '\0';
			if (rc == 0)
				scan_note(sc, key, 'd', hash, sb.st_mode & 07777);
		}
	} else if (S_ISFIFO(sb.st_mode)) {
		type = 'p';
		scan_note(sc, key, 'p', hash, sb.st_mode & 07777);
	} else if (S_ISCHR(sb.st_mode) && sb.st_rdev == 0) {
		type = 'w';	/* the root overlay's mark of a deleted file */
		scan_note(sc, key, 'w', hash, 0);
	} else {
		free(key);
		return 0;	/* sockets, devices: nothing to keep */
	}
	free(key);
	if (rc != 0)
		return -1;
	sc->files++;
	mode = sb.st_mode & 07777;
	if (type == 'd' && strncmp(sc->path.data, "root", 4) == 0 &&
	    (sc->path.data[4] == '/' || sc->path.data[4] == '\0') &&
	    scan_opaque(dirfd, name))
		mode |= CKPT_OPAQUE;
	buf_addf(tree, "%c %o %lld %lld %llu %lld %s ", type, mode,
	    (long long)sb.st_uid - (long long)sc->uid,
	    (long long)sb.st_gid - (long long)sc->gid,
	    type == 'f' ? (unsigned long long)sb.st_size : 0ULL,
	    type == 'f' ? ts_ns(&sb.st_mtim) : 0LL, hash);
	ckpt_escape(tree, name);
	buf_addc(tree, '\n');
	return 0;
}

static int
scan_dir(struct scan *sc, int fd, char hash[65])
{
	struct buf	 tree = BUF_INIT;
	char		**names;
	size_t		 n, i;
	int		 rc = 0;

	if ((names = scan_names(fd, &n)) == NULL) {
		scan_fail(sc, NULL, errno);
		return -1;
	}
	buf_adds(&tree, "tree\n");
	for (i = 0; i < n; i++) {
		/* The root overlay's work directories are overlayfs's own. */
		if (rc == 0 && !(strcmp(sc->path.data, "root") == 0 &&
		    strcmp(names[i], CKPT_OVERLAY_WORK) == 0) &&
		    scan_entry(sc, fd, names[i], &tree) != 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	if (rc == 0 && obj_put_mem(sc->st, tree.data, tree.len, hash,
	    &sc->added) != 0) {
		scan_fail(sc, NULL, errno);
		rc = -1;
	}
	buf_release(&tree);
	return rc;
}

/*
 * Scan and store the roots; with record, the checkpoint is added to the
 * list, else only its commit is made (a restore's view of the present).
 */
int
ckpt_take(struct checkpoint_store *st, struct checkpoint_info *ci, int record,
    char **cause)
{
	struct scan	 sc;
	struct buf	 commit = BUF_INIT;
	struct stat	 sb;
	char		 hash[65];
	size_t		 i;
	int		 fd, rc = -1;

	memset(&sc, 0, sizeof sc);
	memset(ci, 0, sizeof *ci);
	sc.st = st;
	sc.start = now_ns();
	ckpt_base_owner(st->sbxfd, &sc.uid, &sc.gid);
	idx_load(st, &sc.idx);
	buf_adds(&commit, "commit\n");
	for (i = 0; checkpoint_roots[i] != NULL; i++) {
		fd = openat(st->sbxfd, checkpoint_roots[i], O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd == -1) {
			if (errno == ENOENT)
				continue;	/* no root overlay (yet) */
			sc.error = xprintf("cannot read '%s': %s",
			    checkpoint_roots[i], strerror(errno));
			goto out;
		}
		fstat(fd, &sb);
		sc.dev = sb.st_dev;
		buf_reset(&sc.path);
		buf_adds(&sc.path, checkpoint_roots[i]);
		if (scan_dir(&sc, fd, hash) != 0) {
			close(fd);
			goto out;
		}
		close(fd);
		buf_addf(&commit, "root %s %s\n", checkpoint_roots[i], hash);
	}
	scan_links(&sc, &commit);
	/* Deleted entries are changes too. */
	for (i = 0; i < sc.idx.cap; i++) {
		if (sc.idx.t[i].key != NULL && !sc.idx.t[i].seen &&
		    sc.idx.t[i].type != 'd')
			sc.changed++;
	}
	if (obj_put_mem(st, commit.data, commit.len, ci->commit,
	    &sc.added) != 0) {
		sc.error = xprintf("cannot store the commit: %s",
		    strerror(errno));
		goto out;
	}
	if (sc.added > 0 && ckpt_sync_dirs(st) != 0) {
		sc.error = xprintf("cannot sync the store: %s", strerror(errno));
		goto out;
	}
	ci->id = record ? st->next : 0;
	ci->time_ms = json_now_ms();
	ci->files = sc.files;
	ci->changed = sc.changed;
	ci->bytes = sc.added;
	st->total += sc.added;
	if (!record) {
		rc = 0;
		goto done;
	}
	st->list = xreallocarray(st->list, st->nlist + 1, sizeof *st->list);
	st->list[st->nlist++] = *ci;
	st->next++;
	if (ckpt_list_save(st, cause) != 0) {
		st->nlist--;
		st->next--;
		goto done;
	}
	rc = 0;
	goto done;
out:
	*cause = sc.error;
	sc.error = NULL;
done:
	free(sc.error);
	if (rc == 0)
		idx_save(st, &sc.idx);
	idx_free(&sc.idx);
	scan_links(&sc, &commit);
	buf_release(&sc.path);
	buf_release(&commit);
	return rc;
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
	struct idx		 x;
	size_t			 i, r;

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
	idx_load(st, &x);
	for (i = 0; i < x.cap; i++) {
		if (x.t[i].key != NULL && x.t[i].type == 'f')
			idx_put(live, x.t[i].hash);
	}
	idx_free(&x);
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

	if ((dirs = scan_names(st->objfd, &nd)) == NULL)
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
		    (names = scan_names(fd, &nn)) == NULL) {
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
	uint64_t	 added = 0;

	return obj_put_mem(st, "tree\n", 5, hash, &added);
}
