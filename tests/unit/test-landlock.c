/*
 * Unit tests of the sandbox's Landlock scoping (sandbox-landlock.c): in a
 * forked child that scoped itself, an abstract unix socket made outside
 * cannot be connected to and a process outside cannot be signalled, while
 * the same socket and signal work without the scope (the control) and an
 * abstract socket made inside still works.
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "holt.h"
#include "sandbox-landlock.h"

static int
abstract_listen(const char *name)
{
	struct sockaddr_un	sun;
	socklen_t		len;
	int			s;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path + 1, name, strlen(name));
	len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    bind(s, (struct sockaddr *)&sun, len) != 0 || listen(s, 4) != 0)
		return -1;
	return s;
}

static int
abstract_connect(const char *name)
{
	struct sockaddr_un	sun;
	socklen_t		len;
	int			s, r;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path + 1, name, strlen(name));
	len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return errno;
	r = connect(s, (struct sockaddr *)&sun, len) == 0 ? 0 : errno;
	close(s);
	return r;
}

/* Child: 0 when every check holds, else the number of the failed one. */
static int
child(int scoped, const char *outside)
{
	char	*cause = NULL, inside[64];
	int	 r;

	if (scoped) {
		if ((r = sandbox_landlock_scope(&cause)) == 1)
			return 100;	/* no kernel support: skip */
		if (r != 0)
			return 1;
		if (abstract_connect(outside) != EPERM)
			return 2;
		if (kill(getppid(), 0) != -1 || errno != EPERM)
			return 3;
	} else {
		if (abstract_connect(outside) != 0)
			return 4;
		if (kill(getppid(), 0) != 0)
			return 5;
	}
	snprintf(inside, sizeof inside, "holt-landlock-in-%ld",
	    (long)getpid());
	if (abstract_listen(inside) == -1 || abstract_connect(inside) != 0)
		return 6;
	if (kill(getpid(), 0) != 0)
		return 7;
	return 0;
}

static int
run(int scoped, const char *outside)
{
	pid_t	pid;
	int	status;

	if ((pid = fork()) == 0) {
		alarm(5);
		_exit(child(scoped, outside));
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void
test_scope(void **state)
{
	char	outside[64];
	int	s, r;

	snprintf(outside, sizeof outside, "holt-landlock-out-%ld",
	    (long)getpid());
	s = abstract_listen(outside);
	assert_true(s != -1);
	assert_int_equal(run(0, outside), 0);
	r = run(1, outside);
	close(s);
	if (r == 100)
		skip();
	assert_int_equal(r, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scope),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
