/*
 * envd-sudo.c: sudo inside a sandbox (DESIGN 13). The sandbox's processes
 * run with no_new_privs, so a setuid sudo cannot work; instead envd, before
 * it becomes the sandbox's user, forks a root helper that keeps the
 * sandbox's root (uid 0 of its user namespace, a host uid of its own, with
 * what a package manager needs and nothing more) and listens on a socket
 * only root may replace. holt-envd run as "sudo" is the client: it hands
 * the helper its argv, environment, directory and its three standard
 * descriptors, relays the signals it gets and exits as the command did.
 * No password, as in E2B's template: inside the sandbox, root is the user's
 * to have; outside it, it is nobody.
 *
 * One handler process per sudo: it starts the command in a session of
 * its own and kills that session's process group when the client goes
 * away (killed, timed out), so a command's end ends what it ran as root.
 */
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envd.h"
#include "sandbox-landlock.h"

#define SUDO_MSG_MAX	(1024 * 1024)
#define SUDO_PATH	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:" \
			"/sbin:/bin"

extern char **environ;

static int
sudo_sockaddr(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof *sun);
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun->sun_path)
		return -1;
	memcpy(sun->sun_path, path, strlen(path));
	return 0;
}

/*
 * The request's first message: its length, with the three standard
 * descriptors of the client attached.
 */
struct sudo_hdr {
	struct msghdr	 mh;
	struct iovec	 iov;
	union {
		char		buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr	align;
	} u;
	uint32_t	 len;
};

static void
sudo_hdr_init(struct sudo_hdr *h)
{
	memset(h, 0, sizeof *h);
	h->iov.iov_base = &h->len;
	h->iov.iov_len = sizeof h->len;
	h->mh.msg_iov = &h->iov;
	h->mh.msg_iovlen = 1;
	h->mh.msg_control = h->u.buf;
	h->mh.msg_controllen = sizeof h->u.buf;
}

/* helper ------------------------------------------------------------- */

/* The next NUL-ended string of the request, NULL at its end. */
static char *
sudo_str(char **p, char *end)
{
	char	*s = *p, *z;

	if (s >= end || (z = memchr(s, '\0', (size_t)(end - s))) == NULL)
		return NULL;
	*p = z + 1;
	return s;
}

static void
sudo_exec(char *msg, char *end, int fds[3])
{
	char	**argv = NULL, *cwd, *s;
	size_t	  n = 0;
	int	  i;

	setsid();
	for (i = 0; i < 3; i++) {
		if (dup2(fds[i], i) == -1)
			_exit(126);
	}
	close_range(3, ~0U, 0);
	if (isatty(0))
		ioctl(0, TIOCSCTTY, 0);
	cwd = sudo_str(&msg, end);
	while ((s = sudo_str(&msg, end)) != NULL && *s != '\0') {
		argv = xreallocarray(argv, n + 2, sizeof *argv);
		argv[n++] = s;
		argv[n] = NULL;
	}
	if (n == 0)
		_exit(126);
	clearenv();
	while ((s = sudo_str(&msg, end)) != NULL) {
		if (strchr(s, '=') != NULL)
			putenv(s);
	}
	if (cwd == NULL || chdir(cwd) != 0) {
		if (chdir("/") != 0)
			_exit(126);
	}
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	execvp(argv[0], argv);
	dprintf(2, "sudo: %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* One sudo, in a process of its own. Never returns. */
static void
sudo_handle(int c)
{
	struct sudo_hdr	 h;
	struct cmsghdr	*cm;
	struct pollfd	 pfd[2];
	uint32_t	 len;
	char		*msg, sig[64];
	int		 fds[3] = { -1, -1, -1 }, status, code, pidfd;
	size_t		 got = 0;
	ssize_t		 r, k;
	pid_t		 pid;

	signal(SIGCHLD, SIG_DFL);
	sudo_hdr_init(&h);
	if (recvmsg(c, &h.mh, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof h.len ||
	    (cm = CMSG_FIRSTHDR(&h.mh)) == NULL ||
	    cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(3 * sizeof(int)) || h.len == 0 ||
	    h.len > SUDO_MSG_MAX)
		_exit(1);
	len = h.len;
	memcpy(fds, CMSG_DATA(cm), sizeof fds);
	msg = xmalloc(len);
	while (got < len) {
		if ((r = read(c, msg + got, len - got)) <= 0)
			_exit(1);
		got += (size_t)r;
	}
	if ((pid = fork()) == -1)
		_exit(1);
	if (pid == 0) {
		close(c);
		sudo_exec(msg, msg + len, fds);
	}
	close(fds[0]);
	close(fds[1]);
	close(fds[2]);
	if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) == -1)
		_exit(1);
	pfd[0].fd = c;
	pfd[0].events = POLLIN;
	pfd[1].fd = pidfd;
	pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents != 0)
			break;
		if (pfd[0].revents == 0)
			continue;
		/* Signals the client got, or its end: the command's too. */
		if ((r = read(c, sig, sizeof sig)) <= 0) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			break;
		}
		for (k = 0; k < r; k++) {
			if (sig[k] > 0 && sig[k] < NSIG && kill(-pid, sig[k]) != 0)
				kill(pid, sig[k]);
		}
	}
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	code = WIFEXITED(status) ? WEXITSTATUS(status) :
	    128 + WTERMSIG(status);
	if (write(c, &code, sizeof code) < 0)
		_exit(1);
	_exit(0);
}

/*
 * Fork the root helper, listening at path. Called by envd while it is
 * still the sandbox's root, before anything of the user's runs; its
 * descriptors other than stdio are closed in the helper.
 */
void
envd_sudo_start(const char *path)
{
	struct sockaddr_un	 sun;
	pid_t			 pid;
	int			 s, c;
	char			*cause = NULL;

	if (sudo_sockaddr(path, &sun) != 0)
		fatalx("--sudo %s: path too long", path);
	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid != 0)
		return;
	/* Nothing of the host's: not even envd.log, which stdio is. */
	close_range(3, ~0U, 0);
	if ((c = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1 ||
	    dup2(c, 0) == -1 || dup2(c, 1) == -1 || dup2(c, 2) == -1)
		fatal("/dev/null");
	close(c);
	log_prog = "holt-envd (sudo)";
	prctl(PR_SET_NAME, "holt-sudo");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (sandbox_landlock_scope(&cause) == -1)
		log_warnx("%s", cause);
	free(cause);
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		fatal("socket");
	unlink(path);
	if (bind(s, (struct sockaddr *)&sun, sizeof sun) != 0 ||
	    chmod(path, 0666) != 0 || listen(s, 64) != 0)
		fatal("%s", path);
	signal(SIGCHLD, SIG_IGN);	/* handlers are reaped by the kernel */
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		if ((c = accept4(s, NULL, NULL, SOCK_CLOEXEC)) == -1) {
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EMFILE || errno == ENFILE)
				continue;
			fatal("accept");
		}
		if ((pid = fork()) == 0) {
			close(s);
			sudo_handle(c);
		}
		close(c);
	}
}

/* client -------------------------------------------------------------- */

static int sudo_fd = -1;

static void
sudo_relay(int sig)
{
	char	 c = (char)sig;

	if (write(sudo_fd, &c, 1) < 0)
		return;
}

static void
sudo_usage(FILE *f)
{
	fprintf(f, "usage: sudo [-EHnks] [-i] [-u root] [--] command [arg ...]\n"
	    "runs command as the sandbox's own root (uid 0 of its user "
	    "namespace, no\nhost privilege) without a password; see holt(1)\n");
}

static int
sudo_keep(const char *kv)
{
	static const char *keep[] = { "PATH=", "TERM=", "LANG=", "LANGUAGE=",
	    "LC_", "COLORTERM=", "TZ=", "DEBIAN_FRONTEND=", "http_proxy=",
	    "https_proxy=", "no_proxy=", "HTTP_PROXY=", "HTTPS_PROXY=",
	    "NO_PROXY=", "ALL_PROXY=", "all_proxy=", "npm_config_proxy=",
	    "npm_config_https_proxy=" };
	size_t	 i;

	for (i = 0; i < nitems(keep); i++) {
		if (strncmp(kv, keep[i], strlen(keep[i])) == 0)
			return strncmp(kv, "PATH=", 5) != 0;
	}
	return 0;
}

static int
sudo_is_assign(const char *s)
{
	const char	*eq = strchr(s, '=');
	const char	*p;

	if (eq == NULL || eq == s || isdigit((unsigned char)*s))
		return 0;
	for (p = s; p < eq; p++) {
		if (!isalnum((unsigned char)*p) && *p != '_')
			return 0;
	}
	return 1;
}

int
envd_sudo_main(int argc, char **argv)
{
	struct sockaddr_un	 sun;
	struct sudo_hdr		 h;
	struct cmsghdr		*cm;
	struct buf		 b = BUF_INIT;
	const char		*a, *user;
	char			 cwd[4096], **e, *sh[4] = { NULL, NULL, NULL, NULL };
	int			 i, k, set, keepenv = 0, shell = 0;
	int			 fds[3] = { 0, 1, 2 };
	int			 code;
	ssize_t			 r;
	size_t			 got;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			sudo_usage(stdout);
			return 0;
		}
		if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
			printf("sudo (holt-envd) %s\n", VERSION);
			return 0;
		}
		if (strcmp(a, "-u") == 0 || strncmp(a, "--user=", 7) == 0 ||
		    (strncmp(a, "-u", 2) == 0 && a[2] != '\0')) {
			user = a[1] == '-' ? a + 7 : a[2] != '\0' ? a + 2 :
			    i + 1 < argc ? argv[++i] : "";
			if (strcmp(user, "root") != 0 && strcmp(user, "0") != 0 &&
			    strcmp(user, "#0") != 0) {
				fprintf(stderr, "sudo: user '%s': holt's sudo "
				    "runs commands as root only (use su or "
				    "setpriv as root for another user)\n", user);
				return 1;
			}
			continue;
		}
		for (a++; *a != '\0'; a++) {
			switch (*a) {
			case 'E':
				keepenv = 1;
				break;
			case 'i':
			case 's':
				shell = 1;
				break;
			case 'v':
			case 'k':
			case 'K':
				if (argc == 2)
					return 0;
				break;
			case 'H':
			case 'n':
			case 'S':
			case 'A':
			case 'b':
				break;
			default:
				fprintf(stderr, "sudo: -%c: not an option of "
				    "holt's sudo\n", *a);
				sudo_usage(stderr);
				return 1;
			}
		}
	}
	if (i >= argc && !shell) {
		sudo_usage(stderr);
		return 1;
	}
	if (shell) {
		sh[0] = (char *)"/bin/sh";
		if (i < argc) {
			sh[1] = (char *)"-c";
			/* As sudo does: all but these escaped, $ expands. */
			for (; i < argc; i++) {
				for (a = argv[i]; *a != '\0'; a++) {
					if (!isalnum((unsigned char)*a) &&
					    strchr("_-$", *a) == NULL)
						buf_addc(&b, '\\');
					buf_addc(&b, *a);
				}
				if (i + 1 < argc)
					buf_addc(&b, ' ');
			}
			sh[2] = buf_detach(&b, NULL);
		}
		argv = sh;
		argc = sh[2] != NULL ? 3 : 1;
		i = 0;
	}
	/* sudo VAR=value command: the variables are the command's. */
	for (set = i; i < argc && sudo_is_assign(argv[i]); i++)
		;
	if (i >= argc) {
		sudo_usage(stderr);
		return 1;
	}
	if (getcwd(cwd, sizeof cwd) == NULL)
		xstrlcpy(cwd, "/", sizeof cwd);
	buf_add(&b, cwd, strlen(cwd) + 1);
	for (k = i; k < argc; k++)
		buf_add(&b, argv[k], strlen(argv[k]) + 1);
	buf_add(&b, "", 1);
	for (e = environ; *e != NULL; e++) {
		if (keepenv || sudo_keep(*e))
			buf_add(&b, *e, strlen(*e) + 1);
	}
	user = getenv("USER");
	buf_addf(&b, "PATH=%s%cHOME=/root%cUSER=root%cLOGNAME=root%c"
	    "SHELL=/bin/sh%cSUDO_USER=%s%cSUDO_UID=%lu%cSUDO_GID=%lu%c",
	    SUDO_PATH, 0, 0, 0, 0, 0, user != NULL ? user : "user", 0,
	    (unsigned long)getuid(), 0, (unsigned long)getgid(), 0);
	for (k = set; k < i; k++)
		buf_add(&b, argv[k], strlen(argv[k]) + 1);

	if ((sudo_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    sudo_sockaddr(ENVD_SUDO_SOCK, &sun) != 0 ||
	    connect(sudo_fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		fprintf(stderr, "sudo: this sandbox has no root of its own "
		    "(%s: %s); holt gives one where it runs as root with user "
		    "namespaces, see holt(1)\n", ENVD_SUDO_SOCK,
		    strerror(errno));
		return 1;
	}
	sudo_hdr_init(&h);
	h.len = (uint32_t)b.len;
	cm = CMSG_FIRSTHDR(&h.mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof fds);
	memcpy(CMSG_DATA(cm), fds, sizeof fds);
	if (b.len > SUDO_MSG_MAX) {
		fprintf(stderr, "sudo: arguments and environment too long\n");
		return 1;
	}
	if (sendmsg(sudo_fd, &h.mh, MSG_NOSIGNAL) != (ssize_t)sizeof h.len ||
	    file_write_all(sudo_fd, b.data, b.len) != 0) {
		fprintf(stderr, "sudo: %s: %s\n", ENVD_SUDO_SOCK,
		    strerror(errno));
		return 1;
	}
	buf_release(&b);
	signal(SIGINT, sudo_relay);
	signal(SIGTERM, sudo_relay);
	signal(SIGHUP, sudo_relay);
	signal(SIGQUIT, sudo_relay);
	signal(SIGPIPE, SIG_IGN);
	for (got = 0; got < sizeof code; ) {
		r = read(sudo_fd, (char *)&code + got, sizeof code - got);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "sudo: the sandbox's root helper went "
			    "away\n");
			return 1;
		}
		got += (size_t)r;
	}
	return code;
}
