/*
 * file.c: file helpers with the durability DESIGN 3 asks for. An atomic
 * write is temp file + fsync + rename + fsync of the directory, so after a
 * crash the file is either the old or the new content, never a mix.
 */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holt.h"

int
file_mkdir_p(const char *path, mode_t mode)
{
	char	*p, *s;

	p = xstrdup(path);
	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) != 0 && errno != EEXIST) {
			free(p);
			return -1;
		}
		*s = '/';
	}
	if (mkdir(p, mode) != 0 && errno != EEXIST) {
		free(p);
		return -1;
	}
	free(p);
	return 0;
}

int
file_write_all(int fd, const void *p, size_t n)
{
	const char	*c = p;
	ssize_t		 w;

	while (n > 0) {
		w = write(fd, c, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static void
fsync_parent(const char *path)
{
	char	*copy = xstrdup(path);
	int	 fd;

	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd != -1) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

int
file_write_atomic(const char *path, const void *p, size_t n, mode_t mode)
{
	char	*tmp;
	int	 fd, saved;

	tmp = xprintf("%s.tmp.%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd == -1) {
		free(tmp);
		return -1;
	}
	if (file_write_all(fd, p, n) != 0 || fsync(fd) != 0) {
		saved = errno;
		close(fd);
		unlink(tmp);
		free(tmp);
		errno = saved;
		return -1;
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		saved = errno;
		unlink(tmp);
		free(tmp);
		errno = saved;
		return -1;
	}
	free(tmp);
	fsync_parent(path);
	return 0;
}

int
file_append_sync(int fd, const void *p, size_t n)
{
	if (file_write_all(fd, p, n) != 0)
		return -1;
	return fdatasync(fd);
}

char *
file_read_fd(int fd, size_t *lenp, size_t max)
{
	struct buf	 b = BUF_INIT;
	char		 tmp[65536];
	ssize_t		 r;

	for (;;) {
		r = read(fd, tmp, sizeof tmp);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			int saved = errno;
			close(fd);
			buf_release(&b);
			errno = saved;
			return NULL;
		}
		if (r == 0)
			break;
		if (max != 0 && b.len + (size_t)r > max) {
			close(fd);
			buf_release(&b);
			errno = EFBIG;
			return NULL;
		}
		buf_add(&b, tmp, (size_t)r);
	}
	close(fd);
	return buf_detach(&b, lenp);
}

char *
file_read(const char *path, size_t *lenp, size_t max)
{
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	return file_read_fd(fd, lenp, max);
}

const char *
file_type_name(mode_t m)
{
	if (S_ISREG(m))
		return "a regular file";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device";
	if (S_ISLNK(m))
		return "a symlink";
	return "an unknown kind of file";
}

/*
 * The open is O_NONBLOCK, so a FIFO put where a file was (even between a
 * caller's lstat and this call) is seen and refused, never waited on.
 */
char *
file_read_regular(const char *path, size_t *lenp, size_t max,
    const char **why)
{
	struct stat	 sb;
	char		*data;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1) {
		*why = strerror(errno);
		return NULL;
	}
	if (fstat(fd, &sb) != 0) {
		*why = strerror(errno);
		close(fd);
		return NULL;
	}
	if (!S_ISREG(sb.st_mode)) {
		*why = file_type_name(sb.st_mode);
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	if ((data = file_read_fd(fd, lenp, max)) == NULL)
		*why = errno == EFBIG ? "too large" : strerror(errno);
	return data;
}

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	if (flag == FTW_DP)
		return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
	return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
}

static int
rm_chmod(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	if (flag == FTW_D && (sb->st_mode & 0700) != 0700)
		chmod(path, (sb->st_mode & 07777) | 0700);
	return 0;
}

int
file_rm_rf(const char *path)
{
	struct stat	 sb;

	if (lstat(path, &sb) != 0)
		return errno == ENOENT ? 0 : -1;
	/* Files inside may be read-only for their owner; make dirs writable. */
	if (!S_ISDIR(sb.st_mode))
		return unlink(path);
	nftw(path, rm_chmod, 32, FTW_PHYS | FTW_MOUNT);
	return nftw(path, rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static uint64_t	du_total;

static int
du_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	du_total += (uint64_t)sb->st_blocks * 512;
	return 0;
}

uint64_t
file_du(const char *path)
{
	du_total = 0;
	nftw(path, du_one, 32, FTW_PHYS | FTW_MOUNT);
	return du_total;
}

int
file_set_cloexec(int fd)
{
	int	 fl = fcntl(fd, F_GETFD);

	return fl == -1 ? -1 : fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

int
file_set_nonblock(int fd)
{
	int	 fl = fcntl(fd, F_GETFL);

	return fl == -1 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int
file_write_str(const char *path, const char *text)
{
	int	 fd, rc;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	rc = file_write_all(fd, text, strlen(text));
	close(fd);
	return rc;
}

int
proc_stat_read(pid_t pid, struct proc_stat *ps)
{
	char			 path[64], data[1024], *p;
	unsigned long long	 start;
	long			 ppid, pgid, sid;
	char			 st;
	ssize_t			 r;
	int			 fd;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	r = read(fd, data, sizeof data - 1);
	close(fd);
	if (r <= 0)
		return -1;
	data[r] = '\0';
	/* The name may hold anything, ')' too: fields follow the last. */
	if ((p = strrchr(data, ')')) == NULL || p[1] == '\0')
		return -1;
	if (sscanf(p + 2, "%c %ld %ld %ld %*d %*d %*u %*u %*u %*u %*u %*u "
	    "%*u %*d %*d %*d %*d %*d %*d %llu", &st, &ppid, &pgid, &sid,
	    &start) != 5)
		return -1;
	ps->pid = pid;
	ps->ppid = (pid_t)ppid;
	ps->pgid = (pid_t)pgid;
	ps->sid = (pid_t)sid;
	ps->state = st;
	ps->start = start;
	return 0;
}

static struct rlimit	file_fd_limit;
static int		file_fd_raised;

void
file_raise_fd_limit(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	file_fd_limit = rl;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		file_fd_raised = 1;
}

void
file_restore_fd_limit(void)
{
	if (file_fd_raised)
		setrlimit(RLIMIT_NOFILE, &file_fd_limit);
}

char *
file_open_error(const char *what, int errnum)
{
	struct rlimit	 rl;

	if (errnum == EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0)
		return xprintf("%s: too many open files: this process has "
		    "reached its limit of %llu (ulimit -n; raise the hard "
		    "limit, or end sessions with holt kill-session)", what,
		    (unsigned long long)rl.rlim_cur);
	if (errnum == ENFILE)
		return xprintf("%s: too many open files in the system "
		    "(fs.file-max)", what);
	return xprintf("%s: %s", what, strerror(errnum));
}
