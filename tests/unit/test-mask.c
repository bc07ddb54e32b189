/*
 * Unit tests of sandbox-mask.c: in a tree made for the test, what others
 * may not read is covered (files by /dev/null, directories by a read-only
 * tmpfs, without descending), and nothing else is, symlinks included.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "holt.h"
#include "sandbox-mask.h"

static char	top[] = "/tmp/holt-test-mask.XXXXXX";

static void
mkfile(const char *rel, mode_t mode)
{
	char	*p = xprintf("%s/%s", top, rel);
	int	 fd;

	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd != -1);
	close(fd);
	assert_int_equal(chmod(p, mode), 0);
	free(p);
}

static void
mkdir_mode(const char *rel, mode_t mode)
{
	char	*p = xprintf("%s/%s", top, rel);

	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chmod(p, mode), 0);
	free(p);
}

static void
chmod_rel(const char *rel, mode_t mode)
{
	char	*p = xprintf("%s/%s", top, rel);

	assert_int_equal(chmod(p, mode), 0);
	free(p);
}

/* The index of the argument "top/rel", or -1. */
static int
find(char **argv, const char *rel)
{
	char	*p = xprintf("%s/%s", top, rel);
	int	 i, at = -1;

	for (i = 0; argv[i] != NULL; i++) {
		if (strcmp(argv[i], p) == 0 && at == -1)
			at = i;
	}
	free(p);
	return at;
}

static void
test_mask(void **state)
{
	char	**argv, *link, *at, *rm;
	int	  i, n;

	assert_non_null(mkdtemp(top));
	mkfile("shadow", 0640);
	mkfile("hostname", 0644);
	mkfile("key", 0600);
	mkdir_mode("ssl", 0755);
	mkdir_mode("ssl/private", 0700);
	mkfile("ssl/private/k.pem", 0644);
	mkfile("ssl/cert.pem", 0644);
	mkdir_mode("deep", 0755);
	mkdir_mode("deep/er", 0755);
	mkfile("deep/er/secret", 0400);
	link = xprintf("%s/key", top);
	at = xprintf("%s/link-to-key", top);
	assert_int_equal(symlink(link, at), 0);
	chmod_rel(".", 0755);

	argv = sandbox_mask_argv(top);
	for (n = 0; argv[n] != NULL; n++)
		;
	/* shadow, key, deep/er/secret: 3 x 3; ssl/private: 4. */
	assert_int_equal(n, 13);
	i = find(argv, "shadow");
	assert_true(i >= 2);
	assert_string_equal(argv[i - 2], "--ro-bind");
	assert_string_equal(argv[i - 1], "/dev/null");
	assert_true(find(argv, "key") >= 2);
	assert_true(find(argv, "deep/er/secret") >= 2);
	i = find(argv, "ssl/private");
	assert_true(i >= 1);
	assert_string_equal(argv[i - 1], "--tmpfs");
	assert_string_equal(argv[i + 1], "--remount-ro");
	assert_int_equal(find(argv, "ssl/private/k.pem"), -1);
	assert_int_equal(find(argv, "hostname"), -1);
	assert_int_equal(find(argv, "ssl/cert.pem"), -1);
	assert_int_equal(find(argv, "link-to-key"), -1);
	sandbox_mask_free(argv);

	/* A tree that cannot be read gives nothing, not an error. */
	argv = sandbox_mask_argv("/nonexistent/holt");
	assert_non_null(argv);
	assert_null(argv[0]);
	sandbox_mask_free(argv);
	sandbox_mask_free(NULL);

	free(link);
	free(at);
	rm = xprintf("rm -rf '%s'", top);
	assert_int_equal(system(rm), 0);
	free(rm);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mask),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
