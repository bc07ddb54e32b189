/*
 * checkpoint-restore.c: putting a checkpoint back (rewind) and writing one
 * into a new sandbox (fork).
 *
 * A restore first checkpoints the present (cheap: the stat cache), then
 * walks the present's trees and the target's side by side: a directory
 * whose tree is the same is skipped whole, so the cost is O(changes), not
 * O(files). Each changed entry is made in a temporary name and renamed
 * over the old one. The journal written before the first change names the
 * target; running the restore again from any point reaches the same
 * result, which is how a crash is recovered.
 *
 * Everything happens through directory descriptors opened with
 * O_NOFOLLOW, so a symlink the agent planted never leads outside the
 * sandbox's roots.
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/fs.h>

#include "checkpoint-int.h"

#define RESTORE_SYNC_MAX	64

struct restore {
	struct checkpoint_store	*st;
	long			 stop_after;	/* test hook, 0: off */
	long			 done;
	int			 chown;		/* root: entries get their owners */
	uid_t			 uid;		/* owner of workspace/ */
	gid_t			 gid;
	char			*error;
	int			 syncv[RESTORE_SYNC_MAX];	/* to sync */
	size_t			 nsync;
	int			 syncall;	/* more: one syncfs */
	int			 named;		/* a name made or replaced */
};

/*
 * What a restore wrote is synced once, at its end, before the journal
 * goes (restore_sync): not each file and directory as it is made, which
 * cost a wait on the disk each. A crash before leaves the journal, and
 * the restore is done again (it is idempotent): a file torn by the crash
 * differs from the target and is written again.
 */
static void
restore_keep(struct restore *r, int fd)
{
	if (r->nsync < RESTORE_SYNC_MAX && (r->syncv[r->nsync] = dup(fd)) != -1)
		r->nsync++;
	else
		r->syncall = 1;
}

/*
 * The files' writeback is started for all of them at once (it goes on in
 * the background, to the disk together), then each is fsync-ed: the first
 * fsync's journal commit carries the others' changes, so the rest find
 * little left to wait for, rather than one wait on the disk each.
 */
static int
restore_sync(struct restore *r, int basefd)
{
	size_t	 i;
	int	 rc = 0;

	if (r->syncall && syncfs(basefd) != 0)
		rc = -1;
	for (i = 0; !r->syncall && i < r->nsync; i++)
		sync_file_range(r->syncv[i], 0, 0, SYNC_FILE_RANGE_WRITE);
	for (i = 0; i < r->nsync; i++) {
		if (rc == 0 && !r->syncall && fsync(r->syncv[i]) != 0)
			rc = -1;
		close(r->syncv[i]);
	}
	r->nsync = 0;
	return rc;
}

/*
 * Run as root, entries get their owners back, relative to the owner of
 * workspace/ (a fork's sandbox has host uids of its own).
 */
static void
restore_own(struct restore *r, int dirfd, const char *name,
    const struct ckpt_entry *e)
{
	if (r->chown)
		fchownat(dirfd, name, (uid_t)((long long)r->uid + e->uid),
		    (gid_t)((long long)r->gid + e->gid), AT_SYMLINK_NOFOLLOW);
}

/* An entry's modification time, as both times for futimens. */
static void
restore_times(struct timespec ts[2], const struct ckpt_entry *e)
{
	ts[0].tv_sec = ts[1].tv_sec = (time_t)(e->mtime_ns / 1000000000);
	ts[0].tv_nsec = ts[1].tv_nsec = (long)(e->mtime_ns % 1000000000);
}

static void
restore_fail(struct restore *r, const char *what, const char *name)
{
	if (r->error == NULL)
		r->error = xprintf("cannot restore '%s': %s: %s", name, what,
		    strerror(errno));
}

static void
restore_step(struct restore *r)
{
	if (r->stop_after > 0 && ++r->done == r->stop_after)
		raise(SIGSTOP);
}

int
ckpt_remove_at(int dirfd, const char *name)
{
	struct stat	 sb;
	int		 fd, saved;

	if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(sb.st_mode))
		return unlinkat(dirfd, name, 0);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		return -1;
	fchmod(fd, 0700);	/* a 0555 or 000 directory empties too */
	{
		DIR		*d = fdopendir(dup(fd));
		struct dirent	*de;
		char		**v = NULL;
		size_t		 n = 0, i;

		if (d != NULL) {
			while ((de = readdir(d)) != NULL) {
				if (strcmp(de->d_name, ".") == 0 ||
				    strcmp(de->d_name, "..") == 0)
					continue;
				v = xreallocarray(v, n + 1, sizeof *v);
				v[n++] = xstrdup(de->d_name);
			}
			closedir(d);
		}
		for (i = 0; i < n; i++) {
			ckpt_remove_at(fd, v[i]);
			free(v[i]);
		}
		free(v);
	}
	close(fd);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0) {
		saved = errno;
		errno = saved;
		return -1;
	}
	return 0;
}

/* The bytes of src into dst: a reflink where the filesystem has them. */
static int
restore_copy(int src, int dst)
{
	char	*chunk;
	ssize_t	 n, w;
	int	 rc = 0;

	if (ioctl(dst, FICLONE, src) == 0)
		return 0;
	for (;;) {
		n = copy_file_range(src, NULL, dst, NULL, 1U << 30, 0);
		if (n == 0)
			return 0;
		if (n < 0)
			break;
	}
	if (errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
	    errno != EOPNOTSUPP)
		return -1;
	chunk = xmalloc(128 * 1024);
	while ((n = read(src, chunk, 128 * 1024)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -1;
			break;
		}
		if ((w = file_write_all(dst, chunk, (size_t)n)) != 0) {
			rc = -1;
			break;
		}
	}
	free(chunk);
	return rc;
}

#define TMP_NAME	".holt-restore.tmp"

/* Make entry e in dirfd under TMP_NAME (files, symlinks, FIFOs). */
static int
restore_make(struct restore *r, int dirfd, const struct ckpt_entry *e)
{
	struct timespec	 ts[2];
	char		*target;
	size_t		 len;
	int		 src, fd;

	unlinkat(dirfd, TMP_NAME, 0);
	switch (e->type) {
	case 'f':
		if ((src = ckpt_obj_open(r->st, e->hash)) == -1) {
			restore_fail(r, "its object is missing", e->name);
			return -1;
		}
		fd = openat(dirfd, TMP_NAME, O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd == -1 || restore_copy(src, fd) != 0) {
			restore_fail(r, "write", e->name);
			close(src);
			if (fd != -1)
				close(fd);
			return -1;
		}
		close(src);
		fchmod(fd, e->mode & 07777);
		restore_times(ts, e);
		futimens(fd, ts);
		restore_keep(r, fd);
		close(fd);
		return 0;
	case 'l':
		if ((target = ckpt_obj_read(r->st, e->hash, &len)) == NULL) {
			restore_fail(r, "its object is missing", e->name);
			return -1;
		}
		if (symlinkat(target, dirfd, TMP_NAME) != 0) {
			free(target);
			restore_fail(r, "symlink", e->name);
			return -1;
		}
		free(target);
		return 0;
	case 'p':
		if (mkfifoat(dirfd, TMP_NAME, 0600) != 0 ||
		    fchmodat(dirfd, TMP_NAME, e->mode & 07777, 0) != 0) {
			restore_fail(r, "mkfifo", e->name);
			return -1;
		}
		return 0;
	case 'w':
		if (mknodat(dirfd, TMP_NAME, S_IFCHR, 0) != 0) {
			restore_fail(r, "whiteout", e->name);
			return -1;
		}
		return 0;
	}
	errno = EINVAL;
	restore_fail(r, "unknown type", e->name);
	return -1;
}

/*
 * A file that only changed bytes is written over where it is, when it
 * has no other name: no new inode, no name to sync, no blocks freed (and
 * discarded) with an old one. A restore cut short in the middle leaves a
 * half-written file, which the restore done again writes whole (its stat
 * changed, so it is read again and differs). -1: not done that way.
 */
static int
restore_overwrite(struct restore *r, int dirfd, const struct ckpt_entry *te)
{
	struct timespec	 ts[2];
	struct stat	 sb;
	int		 src, fd;

	if (fstatat(dirfd, te->name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !S_ISREG(sb.st_mode) || sb.st_nlink != 1)
		return -1;
	if ((src = ckpt_obj_open(r->st, te->hash)) == -1)
		return -1;
	fd = openat(dirfd, te->name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd == -1 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    restore_copy(src, fd) != 0 || ftruncate(fd, (off_t)te->size) != 0) {
		if (fd != -1)
			close(fd);
		close(src);
		return -1;
	}
	close(src);
	fchmod(fd, te->mode & 07777);
	restore_own(r, dirfd, te->name, te);
	restore_times(ts, te);
	futimens(fd, ts);
	restore_keep(r, fd);
	close(fd);
	return 0;
}

static int restore_dir(struct restore *, int, const char *, const char *);

static int
restore_entry(struct restore *r, int dirfd, const struct ckpt_entry *te,
    const struct ckpt_entry *ce)
{
	struct stat	 sb;
	struct timespec	 ts[2];
	int		 fd, rc;

	restore_step(r);
	if (te->type == 'd') {
		if (ce == NULL || ce->type != 'd') {
			r->named = 1;
			if (ckpt_remove_at(dirfd, te->name) != 0 ||
			    mkdirat(dirfd, te->name, 0700) != 0) {
				restore_fail(r, "mkdir", te->name);
				return -1;
			}
		}
		fd = openat(dirfd, te->name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (fd == -1) {
			restore_fail(r, "open", te->name);
			return -1;
		}
		fchmod(fd, 0700);
		rc = restore_dir(r, fd, ce != NULL && ce->type == 'd' ?
		    ce->hash : NULL, te->hash);
		r->named = ce == NULL || ce->type != 'd';	/* not its insides */
		if (te->mode & CKPT_OPAQUE)
			fsetxattr(fd, CKPT_OPAQUE_XATTR, "y", 1, 0);
		else if (ce != NULL && (ce->mode & CKPT_OPAQUE))
			fremovexattr(fd, CKPT_OPAQUE_XATTR);
		fchmod(fd, te->mode & 07777);
		restore_own(r, dirfd, te->name, te);
		close(fd);
		return rc;
	}
	if (ce != NULL && ce->type == 'f' && te->type == 'f' &&
	    strcmp(ce->hash, te->hash) == 0 &&
	    fstatat(dirfd, te->name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(sb.st_mode)) {
		/* Same bytes: only the mode or the time differ. */
		fchmodat(dirfd, te->name, te->mode & 07777, 0);
		restore_own(r, dirfd, te->name, te);
		restore_times(ts, te);
		utimensat(dirfd, te->name, ts, AT_SYMLINK_NOFOLLOW);
		return 0;
	}
	if (ce != NULL && ce->type == 'f' && te->type == 'f' &&
	    restore_overwrite(r, dirfd, te) == 0)
		return 0;
	r->named = 1;
	if (restore_make(r, dirfd, te) != 0)
		return -1;
	restore_own(r, dirfd, TMP_NAME, te);
	if (ce != NULL && ce->type == 'd' && ckpt_remove_at(dirfd, te->name) != 0) {
		restore_fail(r, "rmdir", te->name);
		return -1;
	}
	if (renameat(dirfd, TMP_NAME, dirfd, te->name) != 0) {
		restore_fail(r, "rename", te->name);
		return -1;
	}
	return 0;
}

static int
entry_same(const struct ckpt_entry *a, const struct ckpt_entry *b)
{
	return a->type == b->type && a->mode == b->mode && a->uid == b->uid &&
	    a->gid == b->gid &&
	    strcmp(a->hash, b->hash) == 0 && (a->type != 'f' ||
	    a->mtime_ns == b->mtime_ns);
}

/* Make directory fd hold tree tgt; cur is what it holds now (NULL: ?). */
static int
restore_dir(struct restore *r, int fd, const char *cur, const char *tgt)
{
	struct ckpt_tree	 t, c;
	size_t			 i = 0, j = 0;
	int			 cmp, rc = 0, touched = 0;

	if (cur != NULL && strcmp(cur, tgt) == 0)
		return 0;
	if (ckpt_tree_read(r->st, tgt, &t, &r->error) != 0)
		return -1;
	memset(&c, 0, sizeof c);
	if (cur != NULL && ckpt_tree_read(r->st, cur, &c, &r->error) != 0) {
		ckpt_tree_release(&t);
		return -1;
	}
	unlinkat(fd, TMP_NAME, 0);
	while (rc == 0 && (i < c.n || j < t.n)) {
		if (i == c.n)
			cmp = 1;
		else if (j == t.n)
			cmp = -1;
		else
			cmp = strcmp(c.e[i].name, t.e[j].name);
		/* Names made, removed or replaced here: sync it at the end. */
		if (cmp != 0)
			touched = 1;
		if (cmp < 0) {
			restore_step(r);
			if (ckpt_remove_at(fd, c.e[i].name) != 0) {
				restore_fail(r, "remove", c.e[i].name);
				rc = -1;
			}
			i++;
		} else if (cmp > 0) {
			/* Not in the present's tree; maybe a socket. */
			ckpt_remove_at(fd, t.e[j].name);
			rc = restore_entry(r, fd, &t.e[j], NULL);
			j++;
		} else {
			if (!entry_same(&c.e[i], &t.e[j])) {
				r->named = 0;
				rc = restore_entry(r, fd, &t.e[j], &c.e[i]);
				touched |= r->named;
			}
			i++;
			j++;
		}
	}
	ckpt_tree_release(&t);
	ckpt_tree_release(&c);
	/* The names changed here are durable before the journal goes. */
	if (rc == 0 && touched)
		restore_keep(r, fd);
	return rc;
}

/* The directory holding ROOT/A/B/NAME, walked without following links. */
static int
restore_parent(int basefd, const char *path, const char **name)
{
	char		*copy = xstrdup(path), *p, *slash;
	int		 fd = dup(basefd), next;

	for (p = copy; fd != -1 && (slash = strchr(p, '/')) != NULL;
	    p = slash + 1) {
		*slash = '\0';
		next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		close(fd);
		fd = next;
	}
	*name = path + (p - copy);
	free(copy);
	return fd;
}

/* Hard links: every later name of a group becomes a link to the first. */
static int
restore_links(struct restore *r, int basefd, const struct ckpt_commit *c)
{
	size_t		 i, nw;
	char		**w, *line, *sp;
	const char	*fname, *lname;
	int		 ffd, lfd, rc = 0, k;
	struct stat	 a, b;

	for (i = 0; i < c->nlinks && rc == 0; i++) {
		w = NULL;
		nw = 0;
		for (line = c->links[i]; *line != '\0'; line = sp) {
			if ((sp = strchr(line, ' ')) == NULL)
				sp = line + strlen(line);
			w = xreallocarray(w, nw + 1, sizeof *w);
			w[nw++] = ckpt_unescape(line, (size_t)(sp - line));
			if (*sp == ' ')
				sp++;
		}
		rc = 0;
		for (k = 1; k < (int)nw && w != NULL; k++) {
			ffd = restore_parent(basefd, w[0], &fname);
			lfd = restore_parent(basefd, w[k], &lname);
			if (ffd == -1 || lfd == -1 ||
			    fstatat(ffd, fname, &a, AT_SYMLINK_NOFOLLOW) != 0 ||
			    (fstatat(lfd, lname, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
			    a.st_ino == b.st_ino && a.st_dev == b.st_dev)) {
				if (ffd != -1)
					close(ffd);
				if (lfd != -1)
					close(lfd);
				continue;
			}
			unlinkat(lfd, TMP_NAME, 0);
			if (linkat(ffd, fname, lfd, TMP_NAME, 0) != 0 ||
			    renameat(lfd, TMP_NAME, lfd, lname) != 0) {
				restore_fail(r, "link", w[k]);
				rc = -1;
			}
			close(ffd);
			close(lfd);
		}
		for (k = 0; k < (int)nw; k++)
			free(w[k]);
		free(w);
	}
	return rc;
}

/* Make basefd's roots what commit tgt holds; cur is the present's commit. */
static int
restore_roots(struct restore *r, int basefd, const char *cur_hash,
    const char *tgt_hash)
{
	struct ckpt_commit	 cur, tgt;
	struct ckpt_tree	 none;
	char			 empty[65];
	size_t			 i;
	int			 fd, rc = 0;

	memset(&cur, 0, sizeof cur);
	if (ckpt_commit_read(r->st, tgt_hash, &tgt, &r->error) != 0)
		return -1;
	if (cur_hash != NULL && ckpt_commit_read(r->st, cur_hash, &cur,
	    &r->error) != 0) {
		ckpt_commit_release(&tgt);
		return -1;
	}
	(void)none;
	for (i = 0; checkpoint_roots[i] != NULL && rc == 0; i++) {
		if (tgt.root[i][0] == '\0' && cur.root[i][0] == '\0')
			continue;
		if (mkdirat(basefd, checkpoint_roots[i], 0700) != 0 &&
		    errno != EEXIST) {
			restore_fail(r, "mkdir", checkpoint_roots[i]);
			rc = -1;
			break;
		}
		fd = openat(basefd, checkpoint_roots[i], O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd == -1) {
			restore_fail(r, "open", checkpoint_roots[i]);
			rc = -1;
			break;
		}
		if (geteuid() == 0) {
			r->chown = 1;
			ckpt_base_owner(basefd, &r->uid, &r->gid);
		}
		if (tgt.root[i][0] == '\0') {
			/* Not there then (the root overlay): empty it. */
			if (ckpt_tree_empty(r->st, empty) != 0) {
				restore_fail(r, "store", checkpoint_roots[i]);
				rc = -1;
			} else
				rc = restore_dir(r, fd, cur.root[i], empty);
		} else
			rc = restore_dir(r, fd, cur.root[i][0] != '\0' ?
			    cur.root[i] : NULL, tgt.root[i]);
		close(fd);
	}
	if (rc == 0)
		rc = restore_links(r, basefd, &tgt);
	ckpt_commit_release(&tgt);
	ckpt_commit_release(&cur);
	return rc;
}

static void
restore_init(struct restore *r, struct checkpoint_store *st)
{
	const char	*e = getenv(CHECKPOINT_TEST_STOP_ENV);

	memset(r, 0, sizeof *r);
	r->st = st;
	if (e != NULL)
		r->stop_after = strtol(e, NULL, 10);
}

int
checkpoint_restore(struct checkpoint_store *st, long long id, const char *tag,
    char **cause)
{
	struct checkpoint_info	 target, now;
	struct restore		 r;
	char			*journal, *path;

	if (checkpoint_find(st, id, &target) != 0) {
		*cause = xprintf("checkpoint %lld: no such checkpoint (pruned, "
		    "or never taken in this sandbox)", id);
		return -1;
	}
	/* The present, from the stat cache: what differs is what is done. */
	if (ckpt_take(st, &now, 0, cause) != 0)
		return -1;
	journal = xprintf("holt-restore 1 %lld %s\n", id, tag != NULL ? tag : "");
	path = xprintf("%s/checkpoints/restore", st->sbxdir);
	if (file_write_atomic(path, journal, strlen(journal), 0600) != 0) {
		*cause = xprintf("%s: %s", path, strerror(errno));
		free(path);
		free(journal);
		return -1;
	}
	free(path);
	free(journal);
	restore_init(&r, st);
	if (restore_roots(&r, st->sbxfd, now.commit, target.commit) != 0) {
		r.syncall = 1;	/* only closed */
		restore_sync(&r, -1);
		*cause = r.error != NULL ? r.error : xstrdup("restore failed");
		return -1;
	}
	if (restore_sync(&r, st->sbxfd) != 0) {
		*cause = xprintf("cannot sync the restored files: %s",
		    strerror(errno));
		free(r.error);
		return -1;
	}
	return 0;
}

int
checkpoint_restore_done(struct checkpoint_store *st)
{
	if (unlinkat(st->dirfd, "restore", 0) != 0 && errno != ENOENT)
		return -1;
	return fsync(st->dirfd);
}

char *
checkpoint_pending(struct checkpoint_store *st, long long *id)
{
	char	*path, *data, *tag, *nl;
	size_t	 len;
	int	 off = 0;

	path = xprintf("%s/checkpoints/restore", st->sbxdir);
	data = file_read(path, &len, 0);
	free(path);
	if (data == NULL)
		return NULL;
	if (sscanf(data, "holt-restore 1 %lld %n", id, &off) != 1 || off == 0) {
		/* Torn before its rename: it never started. */
		free(data);
		checkpoint_restore_done(st);
		return NULL;
	}
	tag = xstrdup(data + off);
	if ((nl = strchr(tag, '\n')) != NULL)
		*nl = '\0';
	free(data);
	return tag;
}

int
checkpoint_export(struct checkpoint_store *st, long long id,
    const char *dst_sandbox_dir, char **cause)
{
	struct checkpoint_info	 target;
	struct restore		 r;
	int			 fd, rc;

	if (checkpoint_find(st, id, &target) != 0) {
		*cause = xprintf("checkpoint %lld: no such checkpoint", id);
		return -1;
	}
	if ((fd = open(dst_sandbox_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		*cause = xprintf("%s: %s", dst_sandbox_dir, strerror(errno));
		return -1;
	}
	restore_init(&r, st);
	r.stop_after = 0;
	rc = restore_roots(&r, fd, NULL, target.commit);
	if (rc != 0) {
		r.syncall = 1;	/* only closed */
		restore_sync(&r, -1);
		*cause = r.error != NULL ? r.error : xstrdup("export failed");
	} else if ((rc = restore_sync(&r, fd)) != 0)
		*cause = xprintf("%s: cannot sync: %s", dst_sandbox_dir,
		    strerror(errno));
	close(fd);
	return rc;
}

int
checkpoint_store_clone(struct checkpoint_store *st, const char *dst_sandbox_dir,
    char **cause)
{
	struct checkpoint_store	*dst;
	char			 d[3], p[68];
	int			 i, j, dfd;
	static const char	 hex[] = "0123456789abcdef";

	/* The copy has no journal of its own: its objects must be on disk. */
	if (ckpt_journal_clear(st) != 0) {
		*cause = xprintf("%s/checkpoints: %s", st->sbxdir,
		    strerror(errno));
		return -1;
	}
	if ((dst = checkpoint_store_open(dst_sandbox_dir, cause)) == NULL)
		return -1;
	/* Objects never change once made: links share them safely. */
	for (i = 0; i < 16; i++) {
		for (j = 0; j < 16; j++) {
			d[0] = hex[i];
			d[1] = hex[j];
			d[2] = '\0';
			if ((dfd = openat(st->objfd, d, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC)) == -1)
				continue;
			mkdirat(dst->objfd, d, 0700);
			{
				DIR *dir = fdopendir(dfd);
				struct dirent *de;
				while (dir != NULL && (de = readdir(dir)) != NULL) {
					if (de->d_name[0] == '.' ||
					    strlen(de->d_name) != 62)
						continue;
					snprintf(p, sizeof p, "%s/%.62s", d,
					    de->d_name);
					if (linkat(st->objfd, p, dst->objfd, p, 0)
					    != 0 && errno != EEXIST)
						break;
				}
				if (dir != NULL)
					closedir(dir);
				else
					close(dfd);
			}
		}
	}
	free(dst->list);
	dst->list = xcalloc(st->nlist + 1, sizeof *dst->list);
	memcpy(dst->list, st->list, st->nlist * sizeof *st->list);
	dst->nlist = st->nlist;
	dst->next = st->next;
	dst->total = st->total;
	i = ckpt_list_save(dst, cause);
	checkpoint_store_close(dst);
	return i;
}
