/*
 * envd-rtt: the round trip of "exec true" on one open envd connection, as
 * the server's engine sees it (no CLI start-up). Prints the p50 in ms.
 *	envd-rtt SOCKET [N]
 * With --sandbox, the same through the sandbox's provider (sandbox_connect:
 * holt-envd's socket for a local one, the bridge for an e2b one, the
 * relay and ssh for an ssh one):
 *	envd-rtt --sandbox ID [N]
 * With --run, the p50 of running a whole command N times instead (stdin
 * and stdout on /dev/null), timed here rather than by forking date(1)
 * around it, which costs more than what is measured:
 *	envd-rtt --run N COMMAND [ARG...]
 */
#include <sys/wait.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"

static int
cmp(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
ms_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 +
	    (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

static int
run_many(int n, char **argv)
{
	struct timespec	 a, b;
	double		*t;
	int		 i, status, null;
	pid_t		 pid;

	t = xcalloc((size_t)n, sizeof *t);
	for (i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		if ((pid = fork()) == -1)
			fatal("fork");
		if (pid == 0) {
			if ((null = open("/dev/null", O_RDWR)) != -1) {
				dup2(null, 0);
				dup2(null, 1);
				dup2(null, 2);
			}
			execvp(argv[0], argv);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) == -1)
			fatal("waitpid");
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fatalx("%s: exit status %d", argv[0], status);
		t[i] = ms_between(&a, &b);
	}
	qsort(t, (size_t)n, sizeof *t, cmp);
	printf("%.3f\n", t[(n - 1) / 2]);
	free(t);
	return 0;
}

int
main(int argc, char **argv)
{
	struct sockaddr_un	 sun;
	struct sandbox		*sb;
	int			 s, i, n;
	double			*t;
	char			*cause = NULL;
	cJSON			*req, *reply;
	struct timespec		 a, b;

	if (argc >= 4 && strcmp(argv[1], "--run") == 0)
		return run_many(atoi(argv[2]) > 0 ? atoi(argv[2]) : 1, argv + 3);
	if (argc < 2 || (strcmp(argv[1], "--sandbox") == 0 && argc < 3)) {
		fprintf(stderr, "usage: envd-rtt SOCKET [N]\n"
		    "       envd-rtt --sandbox ID [N]\n"
		    "       envd-rtt --run N COMMAND [ARG...]\n");
		return 2;
	}
	if (strcmp(argv[1], "--sandbox") == 0) {
		argv++;
		argc--;
		/* holt.conf: an ssh provider's ssh_command and ssh_holt. */
		if (config_load(NULL, &cause) != 0 ||
		    (sb = sandbox_open(argv[1], &cause)) == NULL ||
		    (s = sandbox_connect(sb, &cause)) == -1)
			fatalx("%s", cause);
		sandbox_free(sb);
	} else
		s = -1;
	n = argc > 2 ? atoi(argv[2]) : 200;
	if (n < 1)
		n = 1;
	if (s != -1)
		goto connected;
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	xstrlcpy(sun.sun_path, argv[1], sizeof sun.sun_path);
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(s, (struct sockaddr *)&sun, sizeof sun) != 0)
		fatal("%s", argv[1]);
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "hello");
	if ((reply = envd_call(s, req, &cause)) == NULL)
		fatalx("hello: %s", cause);
	cJSON_Delete(reply);
connected:
	t = xcalloc((size_t)n, sizeof *t);
	for (i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (envd_exec_simple(s, "true", 0, NULL, NULL, &cause) != 0)
			fatalx("exec: %s", cause != NULL ? cause : "exit != 0");
		clock_gettime(CLOCK_MONOTONIC, &b);
		t[i] = ms_between(&a, &b);
	}
	qsort(t, (size_t)n, sizeof *t, cmp);
	printf("%.3f\n", t[(n - 1) / 2]);
	free(t);
	close(s);
	return 0;
}
