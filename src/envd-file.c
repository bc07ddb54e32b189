/*
 * envd-file.c: holt-envd's file operations (read, write, list, stat,
 * remove, move). envd runs inside the sandbox's mount namespace, so a path
 * can only ever name the sandbox's own files; on top of that every path must
 * lie below /workspace, /home/user or /tmp, and is resolved with openat2
 * RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS from a descriptor of that root, so
 * neither "..", nor a symlink (even one swapped in between two calls), nor
 * /proc/self/fd can lead out of it. Writes go to a temporary file in the
 * resolved directory, fsync'd and renamed over the target.
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envd.h"

#define LIST_MAX 20000

static const char *roots[] = { "/workspace", "/home/user", "/tmp" };
static int	   root_fds[3] = { -1, -1, -1 };

void
envd_file_init(void)
{
	size_t	 i;

	for (i = 0; i < nitems(roots); i++) {
		root_fds[i] = open(roots[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root_fds[i] == -1)
			log_warn("%s", roots[i]);
	}
}

static int
o2(int dirfd, const char *rel, int flags, mode_t mode)
{
	struct open_how	 how;
	int		 fd;

	/*
	 * O_NONBLOCK: opening a FIFO never waits for its other end (O_PATH
	 * opens nothing, and openat2 refuses other flags beside it).
	 */
	if (!(flags & O_PATH))
		flags |= O_NONBLOCK;
	memset(&how, 0, sizeof how);
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.mode = (flags & O_CREAT) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
	do
		fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
	while (fd == -1 && (errno == EAGAIN || errno == EINTR));
	return fd;
}

static cJSON *
reply_error(const char *fmt, ...)
{
	cJSON	*r = cJSON_CreateObject();
	va_list	 ap;
	char	*msg;

	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	cJSON_AddStringToObject(r, "error", msg);
	free(msg);
	return r;
}

static cJSON *
reply_ok(void)
{
	cJSON	*r = cJSON_CreateObject();

	cJSON_AddBoolToObject(r, "ok", 1);
	return r;
}

static const char *
errno_text(int e)
{
	if (e == EXDEV)
		return "leads outside the sandbox's writable directories";
	if (e == ELOOP)
		return "too many symbolic links, or a magic link";
	return strerror(e);
}

/*
 * Split a path into its root and the rest: "src/a.c" is below /workspace,
 * "/tmp/x" below /tmp. *rel is "." for a root itself. Caller frees *rel.
 */
static int
path_split(const char *path, int *rootfd, char **rel, char **cause)
{
	size_t		 i, n;
	const char	*r;
	char		*p, *q;

	if (path == NULL || *path == '\0') {
		*cause = xstrdup("missing path");
		return -1;
	}
	if (*path != '/') {
		if (root_fds[0] == -1) {
			*cause = xstrdup("/workspace is not there");
			return -1;
		}
		*rootfd = root_fds[0];
		r = path;
	} else {
		for (i = 0; i < nitems(roots); i++) {
			n = strlen(roots[i]);
			if (strncmp(path, roots[i], n) == 0 &&
			    (path[n] == '\0' || path[n] == '/'))
				break;
		}
		if (i == nitems(roots) || root_fds[i] == -1) {
			*cause = xprintf("path '%s': outside /workspace, "
			    "/home/user and /tmp", path);
			return -1;
		}
		*rootfd = root_fds[i];
		r = path + n;
	}
	while (*r == '/')
		r++;
	p = xstrdup(*r == '\0' ? "." : r);
	/* Drop trailing slashes ("dir/" is "dir"). */
	for (q = p + strlen(p) - 1; q > p && *q == '/'; q--)
		*q = '\0';
	*rel = p;
	return 0;
}

/* Open the parent directory of path; *base is its last component. */
static int
open_parent(const char *path, int mkparents, char **base, char **cause)
{
	int	 rootfd, dfd, fd;
	char	*rel, *slash, *dir, *c;

	if (path_split(path, &rootfd, &rel, cause) != 0)
		return -1;
	if ((slash = strrchr(rel, '/')) == NULL) {
		*base = xstrdup(rel);
		dir = xstrdup(".");
	} else {
		*base = xstrdup(slash + 1);
		*slash = '\0';
		dir = xstrdup(rel);
	}
	free(rel);
	if (strcmp(*base, ".") == 0 || strcmp(*base, "..") == 0) {
		*cause = xprintf("path '%s': names a directory, not an entry",
		    path);
		free(*base);
		free(dir);
		return -1;
	}
	if (mkparents && strcmp(dir, ".") != 0) {
		/* Each prefix is created then resolved from the root again. */
		for (c = dir; ; c++) {
			if (*c != '/' && *c != '\0')
				continue;
			char saved = *c;
			*c = '\0';
			if ((dfd = o2(rootfd, dir, O_PATH | O_DIRECTORY, 0))
			    == -1 && errno == ENOENT) {
				slash = strrchr(dir, '/');
				if (slash == NULL)
					fd = dup(rootfd);
				else {
					*slash = '\0';
					fd = o2(rootfd, dir, O_PATH |
					    O_DIRECTORY, 0);
					*slash = '/';
				}
				if (fd != -1) {
					mkdirat(fd, slash == NULL ? dir :
					    slash + 1, 0755);
					close(fd);
				}
			} else if (dfd != -1)
				close(dfd);
			*c = saved;
			if (saved == '\0')
				break;
		}
	}
	dfd = o2(rootfd, dir, O_PATH | O_DIRECTORY, 0);
	if (dfd == -1) {
		*cause = xprintf("path '%s': %s", path, errno_text(errno));
		free(*base);
		free(dir);
		return -1;
	}
	free(dir);
	return dfd;
}

int
envd_file_open_dir(const char *path, char **abs, char **cause)
{
	int	 rootfd, fd;
	char	*rel;

	if (path_split(path, &rootfd, &rel, cause) != 0)
		return -1;
	fd = o2(rootfd, rel, O_RDONLY | O_DIRECTORY, 0);
	if (fd == -1) {
		*cause = xprintf("path '%s': %s", path, errno_text(errno));
		free(rel);
		return -1;
	}
	if (*path == '/')
		*abs = xstrdup(path);
	else
		*abs = xprintf("/workspace/%s", rel);
	free(rel);
	return fd;
}

/*
 * Open path for reading: a regular file, or with dirs a directory too.
 * Anything else is refused by name (a socket cannot even be opened: its
 * kind is asked of an O_PATH descriptor). -1 + *cause.
 */
static int
open_regular(const char *path, int dirs, struct stat *st, char **cause)
{
	int		 rootfd, fd, pfd;
	char		*rel;

	if (path_split(path, &rootfd, &rel, cause) != 0)
		return -1;
	fd = o2(rootfd, rel, O_RDONLY, 0);
	if (fd == -1 && errno == ENXIO &&
	    (pfd = o2(rootfd, rel, O_PATH, 0)) != -1) {
		if (fstat(pfd, st) != 0)
			st->st_mode = 0;
		close(pfd);
	} else if (fd == -1) {
		*cause = xprintf("path '%s': %s", path, errno_text(errno));
		free(rel);
		return -1;
	} else if (fstat(fd, st) != 0)
		st->st_mode = 0;
	free(rel);
	if (fd != -1 && (S_ISREG(st->st_mode) ||
	    (dirs && S_ISDIR(st->st_mode))))
		return fd;
	if (fd != -1)
		close(fd);
	*cause = xprintf("path '%s': %s, not a regular file%s (refused)", path,
	    file_type_name(st->st_mode), dirs ? " or a directory" : "");
	return -1;
}

int
envd_file_open_within(const char *path, int *isdir, char **cause)
{
	struct stat	 st;
	int		 fd;

	if ((fd = open_regular(path, 1, &st, cause)) == -1)
		return -1;
	/* The command reads it as it would any file: blocking. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	*isdir = S_ISDIR(st.st_mode);
	return fd;
}

static const char *
type_name(mode_t m)
{
	if (S_ISREG(m))
		return "file";
	if (S_ISDIR(m))
		return "dir";
	if (S_ISLNK(m))
		return "symlink";
	return "other";
}

/*
 * Reading a FIFO or a device would wait for a writer that may never come,
 * and every later request would wait behind it: refused.
 */
static cJSON *
reply_special(const char *path, mode_t m)
{
	return reply_error("path '%s': %s, not a regular file (refused)", path,
	    file_type_name(m));
}

static void
add_stat(cJSON *o, const struct stat *st)
{
	cJSON_AddStringToObject(o, "type", type_name(st->st_mode));
	cJSON_AddNumberToObject(o, "size", (double)st->st_size);
	cJSON_AddNumberToObject(o, "mode", st->st_mode & 07777);
	cJSON_AddNumberToObject(o, "mtime_ms", (double)st->st_mtim.tv_sec *
	    1000 + (double)(st->st_mtim.tv_nsec / 1000000));
}

static cJSON *
op_read(const cJSON *req)
{
	const char	*path = json_str(req, "path");
	int		 fd;
	char		*cause, *data;
	struct stat	 st;
	double		 off = json_num(req, "offset", 0);
	double		 len = json_num(req, "length", ENVD_READ_MAX);
	ssize_t		 n;
	size_t		 got = 0;
	cJSON		*r;

	if ((fd = open_regular(path, 0, &st, &cause)) == -1) {
		r = reply_error("%s", cause);
		free(cause);
		return r;
	}
	if (off < 0)
		off = 0;
	if (len <= 0 || len > ENVD_READ_MAX)
		len = ENVD_READ_MAX;
	data = xmalloc((size_t)len + 1);
	while (got < (size_t)len) {
		n = pread(fd, data + got, (size_t)len - got, (off_t)off +
		    (off_t)got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			free(data);
			close(fd);
			return reply_error("path '%s': %s", path,
			    strerror(errno));
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	r = reply_ok();
	envd_data_set(r, data, got);
	free(data);
	cJSON_AddNumberToObject(r, "size", (double)st.st_size);
	cJSON_AddBoolToObject(r, "eof", (off_t)off + (off_t)got >= st.st_size);
	return r;
}

static cJSON *
op_write(const cJSON *req)
{
	const char	*path = json_str(req, "path");
	char		*base, *cause, *tmp;
	int		 dfd, fd, append = json_bool(req, "append", 0);
	struct buf	 b = BUF_INIT;
	struct stat	 st;
	mode_t		 mode;
	cJSON		*r;
	unsigned int	 rnd;

	if (envd_data_get(req, &b) != 0)
		return reply_error("write: bad base64");
	if ((dfd = open_parent(path, json_bool(req, "parents", 1), &base,
	    &cause)) == -1) {
		r = reply_error("%s", cause);
		free(cause);
		buf_release(&b);
		return r;
	}
	mode = 0644;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISREG(st.st_mode))
			mode = st.st_mode & 07777;
		else if (!S_ISLNK(st.st_mode)) {
			r = reply_special(path, st.st_mode);
			goto out;
		}
	}
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(req, "mode")))
		mode = (mode_t)json_num(req, "mode", 0644) & 07777;
	if (append) {
		fd = openat(dfd, base, O_WRONLY | O_APPEND | O_CREAT |
		    O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
		if (fd != -1 && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
			r = reply_special(path, st.st_mode);
			close(fd);
		} else if (fd == -1 || file_write_all(fd, b.data, b.len) != 0) {
			r = reply_error("path '%s': %s", path,
			    strerror(errno));
			if (fd != -1)
				close(fd);
		} else {
			close(fd);
			r = reply_ok();
		}
		goto out;
	}
	rnd = (unsigned int)random();
	tmp = xprintf(".%s.holt-tmp.%08x", base, rnd);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, mode);
	if (fd == -1) {
		r = reply_error("path '%s': %s", path, strerror(errno));
		free(tmp);
		goto out;
	}
	if (file_write_all(fd, b.data, b.len) != 0 || fchmod(fd, mode) != 0 ||
	    fsync(fd) != 0) {
		r = reply_error("path '%s': %s", path, strerror(errno));
		close(fd);
		unlinkat(dfd, tmp, 0);
		free(tmp);
		goto out;
	}
	close(fd);
	if (renameat(dfd, tmp, dfd, base) != 0) {
		r = reply_error("path '%s': %s", path, strerror(errno));
		unlinkat(dfd, tmp, 0);
		free(tmp);
		goto out;
	}
	free(tmp);
	r = reply_ok();
	cJSON_AddNumberToObject(r, "size", (double)b.len);
out:
	close(dfd);
	free(base);
	buf_release(&b);
	return r;
}

static void
list_dir(int dfd, const char *prefix, int depth, cJSON *entries, int *count)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	cJSON		*e;
	char		*name;
	int		 sub, fd;

	if ((fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL && *count < LIST_MAX) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		name = *prefix == '\0' ? xstrdup(de->d_name) :
		    xprintf("%s/%s", prefix, de->d_name);
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "path", name);
		add_stat(e, &st);
		cJSON_AddItemToArray(entries, e);
		(*count)++;
		if (S_ISDIR(st.st_mode) && depth > 1) {
			sub = openat(dirfd(d), de->d_name, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub != -1) {
				list_dir(sub, name, depth - 1, entries, count);
				close(sub);
			}
		}
		free(name);
	}
	closedir(d);
}

static cJSON *
op_list(const cJSON *req)
{
	const char	*path = json_str(req, "path");
	int		 rootfd, fd, depth, count = 0;
	char		*rel, *cause;
	cJSON		*r, *entries;

	if (path == NULL)
		path = "/workspace";
	depth = (int)json_num(req, "depth", 1);
	if (depth < 1)
		depth = 1;
	if (depth > 64)
		depth = 64;
	if (path_split(path, &rootfd, &rel, &cause) != 0) {
		r = reply_error("%s", cause);
		free(cause);
		return r;
	}
	fd = o2(rootfd, rel, O_RDONLY | O_DIRECTORY, 0);
	free(rel);
	if (fd == -1)
		return reply_error("path '%s': %s", path, errno_text(errno));
	r = reply_ok();
	entries = cJSON_AddArrayToObject(r, "entries");
	list_dir(fd, "", depth, entries, &count);
	close(fd);
	if (count >= LIST_MAX)
		cJSON_AddBoolToObject(r, "truncated", 1);
	return r;
}

static cJSON *
op_stat(const cJSON *req)
{
	const char	*path = json_str(req, "path");
	int		 rootfd, fd;
	char		*rel, *cause, *base, link[4096];
	struct stat	 st;
	cJSON		*r;
	ssize_t		 n;

	if (path_split(path, &rootfd, &rel, &cause) != 0) {
		r = reply_error("%s", cause);
		free(cause);
		return r;
	}
	if (strcmp(rel, ".") == 0) {
		free(rel);
		if (fstat(rootfd, &st) != 0)
			return reply_error("path '%s': %s", path,
			    strerror(errno));
		r = reply_ok();
		add_stat(r, &st);
		return r;
	}
	free(rel);
	if ((fd = open_parent(path, 0, &base, &cause)) == -1) {
		r = reply_error("%s", cause);
		free(cause);
		return r;
	}
	if (fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		r = reply_error("path '%s': %s", path, strerror(errno));
		close(fd);
		free(base);
		return r;
	}
	r = reply_ok();
	add_stat(r, &st);
	if (S_ISLNK(st.st_mode) &&
	    (n = readlinkat(fd, base, link, sizeof link - 1)) >= 0) {
		link[n] = '\0';
		cJSON_AddStringToObject(r, "target", link);
	}
	close(fd);
	free(base);
	return r;
}

static int
rm_tree(int dfd, const char *name)
{
	int		 fd, rc = 0;
	DIR		*d;
	struct dirent	*de;

	if (unlinkat(dfd, name, 0) == 0)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (rm_tree(dirfd(d), de->d_name) != 0)
			rc = -1;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) != 0)
		rc = -1;
	return rc;
}

static cJSON *
op_remove(const cJSON *req)
{
	const char	*path = json_str(req, "path");
	char		*base, *cause;
	int		 dfd, rc;
	cJSON		*r;

	if ((dfd = open_parent(path, 0, &base, &cause)) == -1) {
		r = reply_error("%s", cause);
		free(cause);
		return r;
	}
	if (json_bool(req, "recursive", 0))
		rc = rm_tree(dfd, base);
	else {
		rc = unlinkat(dfd, base, 0);
		if (rc != 0 && (errno == EISDIR || errno == EPERM))
			rc = unlinkat(dfd, base, AT_REMOVEDIR);
	}
	r = rc == 0 ? reply_ok() : reply_error("path '%s': %s", path,
	    strerror(errno));
	close(dfd);
	free(base);
	return r;
}

/*
 * /workspace, /home/user and /tmp are separate mounts: a file moves
 * between them by copy (temp file, fsync, rename), then unlink.
 */
static int
copy_file(int d1, const char *b1, int d2, const char *b2)
{
	int		 in, out, saved;
	char		*tmp, data[65536];
	struct stat	 st;
	ssize_t		 n;

	in = openat(d1, b1, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in == -1)
		return -1;
	if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(in);
		errno = EXDEV;
		return -1;
	}
	tmp = xprintf(".%s.holt-tmp.%08x", b2, (unsigned int)random());
	out = openat(d2, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, st.st_mode & 07777);
	if (out == -1) {
		saved = errno;
		close(in);
		free(tmp);
		errno = saved;
		return -1;
	}
	while ((n = read(in, data, sizeof data)) > 0) {
		if (file_write_all(out, data, (size_t)n) != 0)
			break;
	}
	saved = errno;
	close(in);
	if (n != 0 || fsync(out) != 0 || renameat(d2, tmp, d2, b2) != 0) {
		saved = n != 0 ? saved : errno;
		close(out);
		unlinkat(d2, tmp, 0);
		free(tmp);
		errno = saved;
		return -1;
	}
	close(out);
	free(tmp);
	return unlinkat(d1, b1, 0);
}

static cJSON *
op_move(const cJSON *req)
{
	const char	*from = json_str(req, "from"), *to = json_str(req, "to");
	char		*b1, *b2, *cause;
	int		 d1, d2;
	cJSON		*r;

	if ((d1 = open_parent(from, 0, &b1, &cause)) == -1) {
		r = reply_error("%s", cause);
		free(cause);
		return r;
	}
	if ((d2 = open_parent(to, 1, &b2, &cause)) == -1) {
		r = reply_error("%s", cause);
		free(cause);
		close(d1);
		free(b1);
		return r;
	}
	if (renameat(d1, b1, d2, b2) == 0)
		r = reply_ok();
	else if (errno == EXDEV && copy_file(d1, b1, d2, b2) == 0)
		r = reply_ok();
	else
		r = reply_error("move '%s' to '%s': %s", from, to,
		    errno == EXDEV ? "only a regular file can move between "
		    "/workspace, /home/user and /tmp" : strerror(errno));
	close(d1);
	close(d2);
	free(b1);
	free(b2);
	return r;
}

static const struct {
	const char	*name;
	cJSON		*(*fn)(const cJSON *);
} file_ops[] = {
	{ "read", op_read },
	{ "write", op_write },
	{ "list", op_list },
	{ "stat", op_stat },
	{ "remove", op_remove },
	{ "move", op_move },
};

int
envd_file_is_op(const char *op)
{
	size_t	 i;

	for (i = 0; i < nitems(file_ops); i++) {
		if (strcmp(file_ops[i].name, op) == 0)
			return 1;
	}
	return 0;
}

cJSON *
envd_file_op(const char *op, const cJSON *req)
{
	size_t	 i;

	for (i = 0; i < nitems(file_ops); i++) {
		if (strcmp(file_ops[i].name, op) == 0)
			return file_ops[i].fn(req);
	}
	return reply_error("unknown op '%s'", op);
}
