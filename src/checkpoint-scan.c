/*
 * checkpoint-scan.c: taking a checkpoint (DESIGN 15): walking the sandbox's
 * roots and storing what changed since the stat cache (checkpoint-index.c)
 * last saw them.
 *
 * Each entry is lstat-ed (O(entries), about 1 us each, the cost git's
 * index pays too). A file is read and stored only when its stat differs
 * from the cache, a directory's names are read again only when its own
 * stat changed, and a directory's tree is made again only when one of its
 * entries changed: otherwise the cached tree is the checkpoint's. So a
 * checkpoint costs the lstats plus O(changed bytes and directories).
 *
 * A file is trusted from the cache only when it was last changed (ctime,
 * which no process can set) well before it was last read, and a
 * directory's names only when it changed well before they were read, so a
 * write that races a scan is seen by the next one.
 */
#include <sys/stat.h>
#include <sys/xattr.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint-int.h"

/* Coarse file timestamps lag the clock by a tick: trust stat after this. */
#define RACY_NS		(50LL * 1000 * 1000)

struct ckpt_link {
	dev_t	 dev;
	ino_t	 ino;
	char	*key;
};

struct scan {
	struct checkpoint_store	*st;
	struct ckpt_index	 old;		/* the cache as loaded */
	struct ckpt_index	 now;		/* what this scan saw */
	uint64_t		 added, files, changed;
	dev_t			 dev;
	uid_t			 uid;		/* owner of workspace/ */
	gid_t			 gid;
	struct buf		 path;		/* ROOT/dir/... of the walk */
	struct ckpt_link	*linkv;		/* files with several names */
	size_t			 nlinkv;
	struct ckpt_prefetch	 pf;		/* the root's lstats, made ahead */
	char			*error;
};

static long long
ts_ns(const struct timespec *ts)
{
	return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

long long
ckpt_now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts_ns(&ts);
}

static void
scan_fail(struct scan *sc, const char *name, int err)
{
	if (sc->error == NULL)
		sc->error = xprintf("cannot read '%s%s%s': %s", sc->path.data,
		    name != NULL ? "/" : "", name != NULL ? name : "",
		    strerror(err));
}

/* Note a hard-linked file; names of one inode form a group at the end. */
static void
scan_link(struct scan *sc, const struct stat *sb, const char *name)
{
	struct ckpt_link	*l;

	sc->linkv = xreallocarray(sc->linkv, sc->nlinkv + 1, sizeof *sc->linkv);
	l = &sc->linkv[sc->nlinkv++];
	l->dev = sb->st_dev;
	l->ino = sb->st_ino;
	l->key = xprintf("%s/%s", sc->path.data, name);
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

/* The cache's stat is this entry's, and it was read after the last change. */
static int
scan_cached(const struct ckpt_ient *o, const struct ckpt_ient *e)
{
	return o != NULL && o->type == e->type && o->dev == e->dev &&
	    o->ino == e->ino && o->size == e->size && o->mtime == e->mtime &&
	    o->ctime == e->ctime && o->ctime + RACY_NS < o->hashed;
}

/* Its line in the tree is the same (what a tree holds of an entry). */
static int
scan_same_line(const struct ckpt_ient *o, const struct ckpt_ient *e)
{
	return o != NULL && o->type == e->type && o->mode == e->mode &&
	    o->uid == e->uid && o->gid == e->gid && o->size == e->size &&
	    o->mtime == e->mtime && strcmp(o->hash, e->hash) == 0;
}

static int
scan_file(struct scan *sc, int dirfd, const struct ckpt_ient *o,
    struct ckpt_ient *e)
{
	struct stat	 fsb;
	int		 fd;

	if (scan_cached(o, e)) {
		memcpy(e->hash, o->hash, 65);
		e->hashed = o->hashed;
		return 0;
	}
	e->hashed = ckpt_now_ns();
	fd = openat(dirfd, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY | O_CLOEXEC);
	if (fd == -1) {
		scan_fail(sc, e->name, errno);
		return -1;
	}
	if (fstat(fd, &fsb) != 0 || !S_ISREG(fsb.st_mode) ||
	    (uint64_t)fsb.st_ino != e->ino) {
		close(fd);
		scan_fail(sc, e->name, EAGAIN);	/* replaced while scanned */
		return -1;
	}
	if (ckpt_obj_put_fd(sc->st, fd, e->hash) != 0) {
		if (sc->error == NULL)
			sc->error = xprintf("cannot store '%s/%s': %s",
			    sc->path.data, e->name, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int
scan_symlink(struct scan *sc, int dirfd, const struct ckpt_ient *o,
    struct ckpt_ient *e)
{
	char	 target[4096];
	ssize_t	 n;

	if (scan_cached(o, e)) {
		memcpy(e->hash, o->hash, 65);
		e->hashed = o->hashed;
		return 0;
	}
	e->hashed = ckpt_now_ns();
	n = readlinkat(dirfd, e->name, target, sizeof target - 1);
	if (n < 0 || ckpt_obj_put_mem(sc->st, target, (size_t)n,
	    e->hash) != 0) {
		scan_fail(sc, e->name, errno);
		return -1;
	}
	return 0;
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

static int scan_dir(struct scan *, int, const struct stat *, char hash[65]);

static int
scan_subdir(struct scan *sc, int dirfd, const struct stat *sb,
    struct ckpt_ient *e)
{
	size_t	 plen = sc->path.len;
	int	 fd, rc;

	fd = openat(dirfd, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1) {
		scan_fail(sc, e->name, errno);
		return -1;
	}
	buf_addc(&sc->path, '/');
	buf_adds(&sc->path, e->name);
	rc = scan_dir(sc, fd, sb, e->hash);
	close(fd);
	sc->path.len = plen;
	sc->path.data[plen] = '\0';
	if (rc == 0 && strncmp(sc->path.data, "root", 4) == 0 &&
	    (sc->path.data[4] == '/' || sc->path.data[4] == '\0') &&
	    scan_opaque(dirfd, e->name))
		e->mode |= CKPT_OPAQUE;
	return rc;
}

/* The entry's lstat, made ahead (pre) or now: 0, or an errno. */
static int
scan_stat(int dirfd, const char *name, const struct ckpt_pstat *pre,
    struct stat *sb)
{
	if (pre != NULL) {
		*sb = pre->sb;
		return pre->err;
	}
	return fstatat(dirfd, name, sb, AT_SYMLINK_NOFOLLOW) != 0 ? errno : 0;
}

/* One entry of a directory: 1 kept in e, 0 nothing to keep, -1 failed. */
static int
scan_entry(struct scan *sc, int dirfd, const char *name,
    const struct ckpt_pstat *pre, const struct ckpt_ient *o,
    struct ckpt_ient *e)
{
	struct stat	 sb;
	int		 rc = 0, err;

	if ((err = scan_stat(dirfd, name, pre, &sb)) != 0) {
		if (err == ENOENT)
			return 0;	/* gone while we looked */
		scan_fail(sc, name, err);
		return -1;
	}
	memset(e, 0, sizeof *e);
	memset(e->hash, '0', 64);
	e->mode = sb.st_mode & 07777;
	e->uid = (long long)sb.st_uid - (long long)sc->uid;
	e->gid = (long long)sb.st_gid - (long long)sc->gid;
	e->dev = (uint64_t)sb.st_dev;
	e->ino = (uint64_t)sb.st_ino;
	e->mtime = ts_ns(&sb.st_mtim);
	e->ctime = ts_ns(&sb.st_ctim);
	e->name = (char *)name;
	if (S_ISREG(sb.st_mode)) {
		e->type = 'f';
		e->size = (uint64_t)sb.st_size;
		rc = scan_file(sc, dirfd, o, e);
		if (rc == 0 && sb.st_nlink > 1)
			scan_link(sc, &sb, name);
	} else if (S_ISLNK(sb.st_mode)) {
		e->type = 'l';
		e->mode = 0777;
		e->size = (uint64_t)sb.st_size;	/* for the cache, not the tree */
		rc = scan_symlink(sc, dirfd, o, e);
	} else if (S_ISDIR(sb.st_mode)) {
		if (sb.st_dev != sc->dev)
			return 0;	/* a mount: not the sandbox's files */
		e->type = 'd';
		rc = scan_subdir(sc, dirfd, &sb, e);
	} else if (S_ISFIFO(sb.st_mode))
		e->type = 'p';
	else if (S_ISCHR(sb.st_mode) && sb.st_rdev == 0) {
		e->type = 'w';	/* the root overlay's mark of a deleted file */
		e->mode = 0;
	} else
		return 0;	/* sockets, devices: nothing to keep */
	if (rc != 0)
		return -1;
	/* Only files, symlinks and FIFOs count: a tree changes with them. */
	if (e->type != 'd' && (o == NULL || o->type != e->type ||
	    o->mode != e->mode || strcmp(o->hash, e->hash) != 0))
		sc->changed++;
	sc->files++;
	return 1;
}

static void
scan_tree_line(struct buf *tree, const struct ckpt_ient *e)
{
	int	 f = e->type == 'f';

	buf_addf(tree, "%c %o %lld %lld %llu %lld %s ", e->type, e->mode,
	    e->uid, e->gid, f ? (unsigned long long)e->size : 0ULL,
	    f ? e->mtime : 0LL, e->hash);
	ckpt_escape(tree, e->name);
	buf_addc(tree, '\n');
}

/* Entries of the old directory gone from the new one are changes too. */
static void
scan_count_gone(struct scan *sc, const struct ckpt_idir *o,
    const struct ckpt_idir *d)
{
	size_t	 i, j = 0;

	for (i = 0; i < o->n; i++) {
		while (j < d->n && strcmp(d->e[j].name, o->e[i].name) < 0)
			j++;
		if ((j == d->n || strcmp(d->e[j].name, o->e[i].name) != 0) &&
		    o->e[i].type != 'd')
			sc->changed++;
	}
}

int
ckpt_idir_unchanged(const struct ckpt_idir *o, const struct stat *sb)
{
	return o != NULL && o->dev == (uint64_t)sb->st_dev &&
	    o->ino == (uint64_t)sb->st_ino && o->mtime == ts_ns(&sb->st_mtim) &&
	    o->ctime == ts_ns(&sb->st_ctim) && o->ctime + RACY_NS < o->scanned;
}

/*
 * Its names, from the cache when the directory did not change since:
 * then they are the cache's (d->borrowed), else d's entries own them.
 * Read ahead (*pre), they are taken from there.
 */
static char **
scan_dir_names(struct scan *sc, int fd, const struct stat *dsb,
    struct ckpt_idir *o, struct ckpt_idir *d, size_t *n,
    struct ckpt_pdir **pre)
{
	char	**names;
	size_t	 i;

	if ((*pre = ckpt_prefetch_dir(&sc->pf, d->path, dsb)) != NULL) {
		names = (*pre)->names;
		(*pre)->names = NULL;	/* taken */
		*n = (*pre)->n;
		d->scanned = (*pre)->scanned;
		d->borrowed = (*pre)->borrowed ? 2 : 0;
		return names;
	}
	if (ckpt_idir_unchanged(o, dsb)) {
		names = xcalloc(o->n + 1, sizeof *names);
		for (i = 0; i < o->n; i++)
			names[i] = o->e[i].name;
		*n = o->n;
		d->borrowed = 2;
		return names;
	}
	if ((names = ckpt_names(fd, n)) == NULL)
		scan_fail(sc, NULL, errno);
	return names;
}

static int
scan_dir(struct scan *sc, int fd, const struct stat *dsb, char hash[65])
{
	struct ckpt_idir	*o = ckpt_index_dir(&sc->old, sc->path.data);
	struct ckpt_idir	*d = xcalloc(1, sizeof *d);
	struct ckpt_pdir	*pre;
	struct buf		 tree = BUF_INIT;
	char			**names;
	size_t			 n, i;
	int			 r, rc = 0, same;

	d->path = xstrdup(sc->path.data);
	d->dev = (uint64_t)dsb->st_dev;
	d->ino = (uint64_t)dsb->st_ino;
	d->mtime = ts_ns(&dsb->st_mtim);
	d->ctime = ts_ns(&dsb->st_ctim);
	d->scanned = ckpt_now_ns();
	if ((names = scan_dir_names(sc, fd, dsb, o, d, &n, &pre)) == NULL) {
		ckpt_idir_free(d);
		return -1;
	}
	d->e = xcalloc(n + 1, sizeof *d->e);
	same = o != NULL && o->tree[0] != '\0';
	for (i = 0; i < n; i++) {
		/* The root overlay's work directories are overlayfs's own. */
		if (rc == 0 && !(strcmp(sc->path.data, "root") == 0 &&
		    strcmp(names[i], CKPT_OVERLAY_WORK) == 0)) {
			/* Names from the cache are its entries', in order. */
			r = scan_entry(sc, fd, names[i], pre != NULL ?
			    &pre->st[i] : NULL, d->borrowed ? &o->e[i] :
			    o != NULL ? ckpt_idir_find(o, names[i]) : NULL,
			    &d->e[d->n]);
			if (r < 0)
				rc = -1;
			else if (r > 0) {
				if (same && (d->n >= o->n || strcmp(names[i],
				    o->e[d->n].name) != 0 || !scan_same_line(
				    &o->e[d->n], &d->e[d->n])))
					same = 0;
				d->n++;
				continue;	/* the entry has its name */
			}
		}
		if (!d->borrowed)
			free(names[i]);
	}
	free(names);
	if (rc != 0) {
		ckpt_idir_free(d);
		return -1;
	}
	if (o != NULL) {
		o->seen = 1;
		if (!same || d->n != o->n)
			scan_count_gone(sc, o, d);
	}
	if (same && d->n == o->n)
		memcpy(hash, o->tree, 65);	/* nothing in it changed */
	else {
		buf_adds(&tree, "tree\n");
		for (i = 0; i < d->n; i++)
			scan_tree_line(&tree, &d->e[i]);
		if (ckpt_obj_put_mem(sc->st, tree.data, tree.len, hash) != 0) {
			scan_fail(sc, NULL, errno);
			rc = -1;
		}
		buf_release(&tree);
	}
	memcpy(d->tree, hash, 65);
	if (rc == 0)
		ckpt_index_add(&sc->now, d);
	else
		ckpt_idir_free(d);
	return rc;
}

/* The non-directory entries of directories gone since the last scan. */
static void
scan_count_lost(struct scan *sc)
{
	size_t	 i, j;

	for (i = 0; i < sc->old.n; i++) {
		if (sc->old.dirs[i]->seen)
			continue;
		for (j = 0; j < sc->old.dirs[i]->n; j++) {
			if (sc->old.dirs[i]->e[j].type != 'd')
				sc->changed++;
		}
	}
}

static int
scan_root(struct scan *sc, const char *root, struct buf *commit)
{
	struct stat	 sb;
	char		 hash[65];
	int		 fd, rc;

	fd = openat(sc->st->sbxfd, root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1) {
		if (errno == ENOENT)
			return 0;	/* no root overlay (yet) */
		sc->error = xprintf("cannot read '%s': %s", root,
		    strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) != 0) {
		sc->error = xprintf("cannot read '%s': %s", root,
		    strerror(errno));
		close(fd);
		return -1;
	}
	sc->dev = sb.st_dev;
	buf_reset(&sc->path);
	buf_adds(&sc->path, root);
	ckpt_prefetch(&sc->pf, &sc->old, fd, root, &sb);
	rc = scan_dir(sc, fd, &sb, hash);
	ckpt_prefetch_free(&sc->pf);
	close(fd);
	if (rc == 0)
		buf_addf(commit, "root %s %s\n", root, hash);
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
	char		*line;
	size_t		 i;
	int		 rc = -1, journalled;

	memset(&sc, 0, sizeof sc);
	memset(ci, 0, sizeof *ci);
	sc.st = st;
	ckpt_base_owner(st->sbxfd, &sc.uid, &sc.gid);
	ckpt_index_load(st, &sc.old, sc.uid, sc.gid);
	buf_adds(&commit, "commit\n");
	for (i = 0; checkpoint_roots[i] != NULL; i++) {
		if (scan_root(&sc, checkpoint_roots[i], &commit) != 0)
			goto out;
	}
	scan_links(&sc, &commit);
	scan_count_lost(&sc);
	if (ckpt_obj_put_mem(st, commit.data, commit.len, ci->commit) != 0) {
		sc.error = xprintf("cannot store the commit: %s",
		    strerror(errno));
		goto out;
	}
	sc.added = ckpt_obj_new_bytes(st);
	ci->id = record ? st->next : 0;
	ci->time_ms = json_now_ms();
	ci->files = sc.files;
	ci->changed = sc.changed;
	ci->bytes = sc.added;
	line = record ? ckpt_list_line(ci) : NULL;
	rc = ckpt_obj_flush(st, line, &journalled);
	free(line);
	if (rc != 0) {
		rc = -1;
		sc.error = xprintf("cannot sync the store: %s", strerror(errno));
		goto out;
	}
	rc = -1;
	st->total += sc.added;
	if (record && ckpt_list_add(st, ci, !journalled, cause) != 0)
		goto done;
	rc = 0;
	goto done;
out:
	*cause = sc.error;
	sc.error = NULL;
	ckpt_obj_abort(st);
done:
	free(sc.error);
	if (rc == 0)
		ckpt_index_save(st, &sc.now, sc.uid, sc.gid);
	ckpt_index_free(&sc.old);
	ckpt_index_free(&sc.now);
	scan_links(&sc, &commit);
	buf_release(&sc.path);
	buf_release(&commit);
	return rc;
}
