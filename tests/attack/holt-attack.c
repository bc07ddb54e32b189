/*
 * holt-attack: the attacks of the isolation tests (tests/t2*.sh), one
 * subcommand each, run inside a sandbox and, where that is safe, on the host
 * beside it to show the attack does work where nothing stops it.
 *
 * Built statically so it runs in any sandbox whatever is mounted there. It
 * uses no holt code on purpose: it is what a hostile program would be.
 *
 * Each attack prints one line "ATTACK: RESULT" where RESULT is "ok" when the
 * operation succeeded and the errno name (EPERM, ENOENT, ...) when it failed,
 * and exits 0 for ok, 1 for a failure, 2 for a usage error. Some attacks print
 * more (listings, counts), described at each.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *self;

static int
report(const char *what, long r)
{
	if (r == -1) {
		printf("%s: %s\n", what, strerrorname_np(errno));
		return 1;
	}
	printf("%s: ok\n", what);
	return 0;
}

static int
usage(void)
{
	fprintf(stderr, "usage: holt-attack ATTACK [ARG...] (see the source)\n");
	return 2;
}

/* read PATH: open and read a file; prints its first line on success. */
static int
a_read(int argc, char **argv)
{
	char	buf[256];
	ssize_t	n;
	int	fd;

	if (argc != 2)
		return usage();
	if ((fd = open(argv[1], O_RDONLY)) == -1 ||
	    (n = read(fd, buf, sizeof buf - 1)) == -1)
		return report("read", -1);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	printf("read: ok\ncontent: %s\n", buf);
	return 0;
}

/* write PATH: create or truncate a file and write a line to it. */
static int
a_write(int argc, char **argv)
{
	int	fd;

	if (argc != 2)
		return usage();
	if ((fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1 ||
	    write(fd, "pwned\n", 6) != 6)
		return report("write", -1);
	return report("write", 0);
}

/*
 * openw PATH: open an existing file for writing, and write nothing: enough to
 * show a write would be allowed, without changing the file (/proc/sys).
 */
static int
a_openw(int argc, char **argv)
{
	if (argc != 2)
		return usage();
	return report("openw", open(argv[1], O_WRONLY));
}

static int
inet(const char *host, const char *port, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof *sin);
	sin->sin_family = AF_INET;
	sin->sin_port = htons(atoi(port));
	return inet_pton(AF_INET, host, &sin->sin_addr) == 1 ? 0 : -1;
}

/* tcp ADDR PORT: connect, and read a line the server sends. */
static int
a_tcp(int argc, char **argv)
{
	struct sockaddr_in	sin;
	struct timeval		tv = { 2, 0 };
	char			buf[128];
	ssize_t			n;
	int			s;

	if (argc != 3 || inet(argv[1], argv[2], &sin) != 0)
		return usage();
	s = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (s == -1 || connect(s, (struct sockaddr *)&sin, sizeof sin) == -1)
		return report("tcp", -1);
	report("tcp", 0);
	if ((n = read(s, buf, sizeof buf - 1)) > 0) {
		buf[n] = '\0';
		printf("received: %s", buf);
	}
	return 0;
}

/* udp ADDR PORT: send one datagram "holt-attack udp". */
static int
a_udp(int argc, char **argv)
{
	struct sockaddr_in	sin;
	int			s;

	if (argc != 3 || inet(argv[1], argv[2], &sin) != 0)
		return usage();
	if ((s = socket(AF_INET, SOCK_DGRAM, 0)) == -1)
		return report("udp", -1);
	return report("udp", sendto(s, "holt-attack udp\n", 16, 0,
	    (struct sockaddr *)&sin, sizeof sin));
}

/*
 * dns: send a query for example.com to the first nameserver of
 * /etc/resolv.conf (UDP port 53); "ok" means the query left the machine's
 * network stack, which is all a covert channel needs.
 */
static int
a_dns(int argc, char **argv)
{
	static const unsigned char q[] = {
		0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0,
		7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0,
		0, 1, 0, 1
	};
	struct sockaddr_in	 sin;
	char			 line[256], addr[64];
	FILE			*f;
	int			 s, found = 0;

	if ((f = fopen("/etc/resolv.conf", "r")) == NULL)
		return report("dns", -1);
	while (!found && fgets(line, sizeof line, f) != NULL)
		found = sscanf(line, "nameserver %63s", addr) == 1;
	fclose(f);
	if (!found || strchr(addr, ':') != NULL)
		snprintf(addr, sizeof addr, "127.0.0.53");
	printf("nameserver: %s\n", addr);
	if (inet(addr, "53", &sin) != 0 ||
	    (s = socket(AF_INET, SOCK_DGRAM, 0)) == -1)
		return report("dns", -1);
	return report("dns", sendto(s, q, sizeof q, 0,
	    (struct sockaddr *)&sin, sizeof sin));
}

static int
unix_connect(const char *path, int abstract)
{
	struct sockaddr_un	sun;
	socklen_t		len;
	int			s, r, saved;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) + 1 >= sizeof sun.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sun.sun_path + (abstract ? 1 : 0), path, strlen(path));
	len = offsetof(struct sockaddr_un, sun_path) + strlen(path) +
	    (abstract ? 1 : 0);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return -1;
	r = connect(s, (struct sockaddr *)&sun, len);
	saved = errno;
	close(s);
	errno = saved;
	return r;
}

/* abstract NAME: connect to the abstract unix socket "\0NAME". */
static int
a_abstract(int argc, char **argv)
{
	if (argc != 2)
		return usage();
	return report("abstract", unix_connect(argv[1], 1));
}

/*
 * abstract-self NAME: listen on the abstract socket "\0NAME" and connect to
 * it: what must keep working inside a sandbox.
 */
static int
a_abstract_self(int argc, char **argv)
{
	struct sockaddr_un	sun;
	socklen_t		len;
	int			s;

	if (argc != 2 || strlen(argv[1]) + 2 > sizeof sun.sun_path)
		return usage();
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path + 1, argv[1], strlen(argv[1]));
	len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(argv[1]);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    bind(s, (struct sockaddr *)&sun, len) != 0 || listen(s, 1) != 0)
		return report("abstract-self", -1);
	return report("abstract-self", unix_connect(argv[1], 1));
}

/* unix PATH: connect to a unix socket by path. */
static int
a_unix(int argc, char **argv)
{
	if (argc != 2)
		return usage();
	return report("unix", unix_connect(argv[1], 0));
}

/*
 * scan-sockets [DIR]: find every socket under DIR (default /, not /proc or
 * /sys) and every abstract socket in /proc/net/unix, and try to connect to
 * each. Prints "connected: PATH" per success and "sockets: N, connected: M"
 * at the end.
 */
static int	scan_found, scan_connected;

static void
scan_dir(const char *dir, int depth)
{
	struct dirent	*de;
	struct stat	 st;
	char		 path[PATH_MAX];
	DIR		*d;

	if (depth > 12 || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(path, sizeof path, "%s/%s",
		    strcmp(dir, "/") == 0 ? "" : dir, de->d_name) >=
		    (int)sizeof path)
			continue;
		if (strcmp(path, "/proc") == 0 || strcmp(path, "/sys") == 0)
			continue;
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			scan_dir(path, depth + 1);
		else if (S_ISSOCK(st.st_mode)) {
			scan_found++;
			if (unix_connect(path, 0) == 0) {
				scan_connected++;
				printf("connected: %s\n", path);
			} else
				printf("refused: %s (%s)\n", path,
				    strerrorname_np(errno));
		}
	}
	closedir(d);
}

static void
scan_abstract(void)
{
	char	 line[512], *p;
	FILE	*f;

	if ((f = fopen("/proc/net/unix", "r")) == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((p = strchr(line, '@')) == NULL)
			continue;
		scan_found++;
		if (unix_connect(p + 1, 1) == 0) {
			scan_connected++;
			printf("connected: %s\n", p);
		} else
			printf("refused: %s (%s)\n", p, strerrorname_np(errno));
	}
	fclose(f);
}

static int
a_scan_sockets(int argc, char **argv)
{
	scan_dir(argc > 1 ? argv[1] : "/", 0);
	if (argc <= 1)
		scan_abstract();
	printf("sockets: %d, connected: %d\n", scan_found, scan_connected);
	return scan_connected > 0 ? 0 : 1;
}

/*
 * steal-fds PID: try to take a copy of every socket PID holds (pidfd_getfd)
 * and to open each of its fds through /proc/PID/fd. Prints one line per fd.
 */
static int
a_steal_fds(int argc, char **argv)
{
	struct dirent	*de;
	char		 dir[64], path[PATH_MAX];
	long		 pidfd;
	int		 stolen = 0, fd;
	DIR		*d;

	if (argc != 2)
		return usage();
	snprintf(dir, sizeof dir, "/proc/%s/fd", argv[1]);
	pidfd = syscall(SYS_pidfd_open, atoi(argv[1]), 0);
	if (pidfd == -1)
		printf("pidfd_open: %s\n", strerrorname_np(errno));
	if ((d = opendir(dir)) == NULL) {
		printf("list %s: %s\n", dir, strerrorname_np(errno));
	} else {
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
			if ((fd = open(path, O_RDWR)) != -1 ||
			    (fd = open(path, O_RDONLY)) != -1) {
				printf("open %s: ok\n", path);
				stolen++;
				close(fd);
			} else
				printf("open %s: %s\n", path,
				    strerrorname_np(errno));
			if (pidfd == -1)
				continue;
			fd = syscall(SYS_pidfd_getfd, pidfd,
			    atoi(de->d_name), 0);
			if (fd != -1) {
				printf("pidfd_getfd %s: ok\n", de->d_name);
				stolen++;
				close(fd);
			} else
				printf("pidfd_getfd %s: %s\n", de->d_name,
				    strerrorname_np(errno));
		}
		closedir(d);
	}
	printf("stolen: %d\n", stolen);
	return stolen > 0 ? 0 : 1;
}

/* mem PID: open /proc/PID/mem for writing (rewriting another process). */
static int
a_mem(int argc, char **argv)
{
	char	path[64];

	if (argc != 2)
		return usage();
	snprintf(path, sizeof path, "/proc/%s/mem", argv[1]);
	return report("mem", open(path, O_RDWR));
}

/* tiocsti [FD]: push a character into the input of the terminal on FD. */
static int
a_tiocsti(int argc, char **argv)
{
	int	fd = argc > 1 ? atoi(argv[1]) : 0;
	char	c = '#';

	if (!isatty(fd))
		printf("note: fd %d is not a terminal\n", fd);
	return report("tiocsti", ioctl(fd, TIOCSTI, &c));
}

/* tioclinux [FD]: a console ioctl (selection paste, TIOCL_PASTESEL). */
static int
a_tioclinux(int argc, char **argv)
{
	int	fd = argc > 1 ? atoi(argv[1]) : 0;
	char	c = 3;	/* TIOCL_PASTESEL */

	return report("tioclinux", ioctl(fd, TIOCLINUX, &c));
}

static int
a_unshare_user(int argc, char **argv)
{
	return report("unshare-user", unshare(CLONE_NEWUSER));
}

static int
a_clone_user(int argc, char **argv)
{
	long	pid;
	int	status;

	pid = syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD, 0, 0,
	    0, 0);
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return report("clone-user", pid);
}

/* mount: a tmpfs over /tmp (which the sandbox may write). */
static int
a_mount(int argc, char **argv)
{
	return report("mount", mount("none", "/tmp", "tmpfs", 0, NULL));
}

static int
a_pivot_root(int argc, char **argv)
{
	return report("pivot-root", syscall(SYS_pivot_root, "/tmp", "/tmp"));
}

static int
a_open_tree(int argc, char **argv)
{
	return report("open-tree", syscall(SYS_open_tree, AT_FDCWD, "/",
	    1 /* OPEN_TREE_CLONE */ | AT_RECURSIVE));
}

static int
a_fsopen(int argc, char **argv)
{
	return report("fsopen", syscall(SYS_fsopen, "tmpfs", 0));
}

static int
a_keyctl(int argc, char **argv)
{
	return report("keyctl", syscall(SYS_add_key, "user", "holt-attack",
	    "secret", 6, -3 /* KEY_SPEC_SESSION_KEYRING */) == -1 ? -1 :
	    syscall(SYS_keyctl, 0, -3, 0));
}

static int
a_io_uring(int argc, char **argv)
{
	char	params[120];

	memset(params, 0, sizeof params);
	return report("io-uring", syscall(SYS_io_uring_setup, 4, params));
}

/* bpf: load a two-instruction socket filter ("return 0"). */
static int
a_bpf(int argc, char **argv)
{
	static const unsigned long long insns[2] = {
		0x00000000000000b7ULL,	/* r0 = 0 */
		0x0000000000000095ULL,	/* exit */
	};
	union {
		char	pad[128];
		struct {
			unsigned int		type, n;
			unsigned long long	insns, license;
		} a;
	} attr;

	memset(&attr, 0, sizeof attr);
	attr.a.type = 1;	/* BPF_PROG_TYPE_SOCKET_FILTER */
	attr.a.n = 2;
	attr.a.insns = (unsigned long)insns;
	attr.a.license = (unsigned long)"GPL";
	return report("bpf", syscall(SYS_bpf, 5 /* BPF_PROG_LOAD */, &attr,
	    sizeof attr));
}

/* ptrace PID: attach to a process (and detach again). */
static int
a_ptrace(int argc, char **argv)
{
	pid_t	pid;
	int	status;

	if (argc != 2)
		return usage();
	pid = atoi(argv[1]);
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) == -1)
		return report("ptrace", -1);
	waitpid(pid, &status, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return report("ptrace", 0);
}

/* ptrace-sibling: attach to a process of our own (a forked child). */
static int
a_ptrace_sibling(int argc, char **argv)
{
	pid_t	pid;
	int	status, r;

	if ((pid = fork()) == 0) {
		alarm(10);
		for (;;)
			pause();
	}
	r = ptrace(PTRACE_ATTACH, pid, NULL, NULL);
	if (r == 0) {
		waitpid(pid, &status, __WALL);
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
	}
	report("ptrace-sibling", r);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return r == 0 ? 0 : 1;
}

/* kill PID [SIG]: send a signal (default SIGTERM). */
static int
a_kill(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	return report("kill", kill(atoi(argv[1]),
	    argc > 2 ? atoi(argv[2]) : SIGTERM));
}

/* fds: list our open file descriptors, "N -> TARGET" per line. */
static int
a_fds(int argc, char **argv)
{
	struct dirent	*de;
	char		 path[PATH_MAX], target[PATH_MAX];
	ssize_t		 n;
	DIR		*d;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return report("fds", -1);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(d))
			continue;
		snprintf(path, sizeof path, "/proc/self/fd/%s", de->d_name);
		if ((n = readlink(path, target, sizeof target - 1)) == -1)
			n = 0;
		target[n] = '\0';
		printf("%s -> %s\n", de->d_name, target);
	}
	closedir(d);
	return 0;
}

/*
 * forkbomb SECONDS [MAX]: fork until fork fails (or MAX processes, 2000 by
 * default, so a missing limit cannot take the host down); each child sleeps
 * at most SECONDS. Prints "forked: N" and the errno that stopped it, then
 * kills its children.
 */
static int
a_forkbomb(int argc, char **argv)
{
	int	secs = argc > 1 ? atoi(argv[1]) : 5, n = 0, status;
	int	max = argc > 2 ? atoi(argv[2]) : 2000;
	pid_t	pid;

	setpgid(0, 0);
	signal(SIGTERM, SIG_IGN);
	for (;;) {
		if (n >= max) {
			errno = 0;
			break;
		}
		if ((pid = fork()) == -1)
			break;
		if (pid == 0) {
			signal(SIGTERM, SIG_DFL);
			alarm(secs);
			for (;;)
				pause();
		}
		n++;
	}
	printf("forked: %d\nstopped by: %s\n", n,
	    errno == 0 ? "the cap" : strerrorname_np(errno));
	fflush(stdout);
	kill(0, SIGTERM);
	while (waitpid(-1, &status, 0) > 0)
		;
	return 0;
}

/*
 * memhog MB: allocate and touch MB megabytes, printing the total every 16
 * MB. Under a memory limit the kernel kills it before the end.
 */
static int
a_memhog(int argc, char **argv)
{
	long	mb = argc > 1 ? atol(argv[1]) : 512, i;
	char	*p;

	setvbuf(stdout, NULL, _IONBF, 0);
	for (i = 1; i <= mb; i++) {
		p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			printf("allocated: %ld MB\n", i - 1);
			return report("memhog", -1);
		}
		memset(p, 0x5a, 1 << 20);
		if (i % 16 == 0)
			printf("touched: %ld MB\n", i);
	}
	return report("memhog", 0);
}

/* sleep MARKER SECONDS: a process recognisable by MARKER in its argv. */
static int
a_sleep(int argc, char **argv)
{
	struct timespec	ts;

	if (argc != 3)
		return usage();
	ts.tv_sec = atoi(argv[2]);
	ts.tv_nsec = 0;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
	return 0;
}

/*
 * daemon MARKER SECONDS: double fork, setsid, close everything, ignore
 * SIGHUP/SIGTERM and sleep: a process that escapes its command's process
 * group and session. Prints the daemon's pid (as seen here).
 */
static int
a_daemon(int argc, char **argv)
{
	int	p[2], status;
	pid_t	pid;

	if (argc != 3 || pipe(p) != 0)
		return usage();
	if ((pid = fork()) == 0) {
		setsid();
		if (fork() != 0)
			_exit(0);
		signal(SIGHUP, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		dprintf(p[1], "%d\n", (int)getpid());
		close(p[0]);
		close(p[1]);
		close(0);
		close(1);
		close(2);
		open("/dev/null", O_RDWR);
		dup(0);
		dup(0);
		execl("/proc/self/exe", self, "sleep", argv[1], argv[2], (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	waitpid(pid, &status, 0);
	{
		char	buf[32];
		ssize_t	n = read(p[0], buf, sizeof buf - 1);

		if (n <= 0)
			return report("daemon", -1);
		buf[n] = '\0';
		printf("daemon: %s", buf);
	}
	return 0;
}

/*
 * syscalls N: not an attack: the nanoseconds per call of N getppid() calls,
 * the cheapest system call, for bench/seccomp.sh (the filter's cost).
 */
static int
a_syscalls(int argc, char **argv)
{
	struct timespec	a, b;
	long		n = argc > 1 ? atol(argv[1]) : 1000000, i;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 +
	    (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}

static const struct {
	const char	*name;
	int		(*fn)(int, char **);
} attacks[] = {
	{ "read", a_read },
	{ "write", a_write },
	{ "openw", a_openw },
	{ "tcp", a_tcp },
	{ "udp", a_udp },
	{ "dns", a_dns },
	{ "abstract", a_abstract },
	{ "abstract-self", a_abstract_self },
	{ "unix", a_unix },
	{ "scan-sockets", a_scan_sockets },
	{ "steal-fds", a_steal_fds },
	{ "mem", a_mem },
	{ "tiocsti", a_tiocsti },
	{ "tioclinux", a_tioclinux },
	{ "unshare-user", a_unshare_user },
	{ "clone-user", a_clone_user },
	{ "mount", a_mount },
	{ "pivot-root", a_pivot_root },
	{ "open-tree", a_open_tree },
	{ "fsopen", a_fsopen },
	{ "keyctl", a_keyctl },
	{ "io-uring", a_io_uring },
	{ "bpf", a_bpf },
	{ "ptrace", a_ptrace },
	{ "ptrace-sibling", a_ptrace_sibling },
	{ "kill", a_kill },
	{ "fds", a_fds },
	{ "forkbomb", a_forkbomb },
	{ "memhog", a_memhog },
	{ "sleep", a_sleep },
	{ "daemon", a_daemon },
	{ "syscalls", a_syscalls },
};

int
main(int argc, char **argv)
{
	size_t	i;

	self = argv[0];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage();
	for (i = 0; i < sizeof attacks / sizeof attacks[0]; i++) {
		if (strcmp(argv[1], attacks[i].name) == 0)
			return attacks[i].fn(argc - 1, argv + 1);
	}
	return usage();
}
