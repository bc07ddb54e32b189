/*
 * envd-rtt: the round trip of "exec true" on one open envd connection, as
 * the server's engine sees it (no CLI start-up). Prints the p50 in ms.
 *	envd-rtt SOCKET [N]
 */
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

int
main(int argc, char **argv)
{
	struct sockaddr_un	 sun;
	int			 s, i, n;
	double			*t;
	char			*cause = NULL;
	cJSON			*req, *reply;
	struct timespec		 a, b;

	if (argc < 2) {
		fprintf(stderr, "usage: envd-rtt SOCKET [N]\n");
		return 2;
	}
	n = argc > 2 ? atoi(argv[2]) : 200;
	if (n < 1)
		n = 1;
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
	t = xcalloc((size_t)n, sizeof *t);
	for (i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (envd_exec_simple(s, "true", 0, NULL, NULL, &cause) != 0)
			fatalx("exec: %s", cause != NULL ? cause : "exit != 0");
		clock_gettime(CLOCK_MONOTONIC, &b);
		t[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 +
		    (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	}
	qsort(t, (size_t)n, sizeof *t, cmp);
	printf("%.3f\n", t[(n - 1) / 2]);
	free(t);
	close(s);
	return 0;
}
