/* Unit tests of git.c and github.c's pure parts: URLs, authors, quoting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "holt.h"
#include "git.h"

static void
check_url(const char *url, const char *owner, const char *repo)
{
	char	*o = NULL, *r = NULL;

	if (owner == NULL) {
		assert_int_equal(github_parse_url(url, &o, &r), -1);
		return;
	}
	assert_int_equal(github_parse_url(url, &o, &r), 0);
	assert_string_equal(o, owner);
	assert_string_equal(r, repo);
	free(o);
	free(r);
}

static void
test_parse_url(void **state)
{
	check_url("https://github.com/octo/hello.git", "octo", "hello");
	check_url("https://github.com/octo/hello", "octo", "hello");
	check_url("https://github.com/octo/hello/", "octo", "hello");
	check_url("https://ghe.example.com/git/octo/hello.git", "octo", "hello");
	check_url("ssh://git@github.com/octo/hello.git", "octo", "hello");
	check_url("git@github.com:octo/hello.git", "octo", "hello");
	check_url("http://127.0.0.1:8080/git/octo/my.repo.git?x=1", "octo",
	    "my.repo");
	check_url("https://github.com/hello", NULL, NULL);
	check_url("https://github.com/", NULL, NULL);
	check_url("/home/u/src", NULL, NULL);
}

static void
test_url_strip(void **state)
{
	char	*u, *p;

	u = git_url_strip("https://x-access-token:s3cret@github.com/o/r.git",
	    &p);
	assert_string_equal(u, "https://github.com/o/r.git");
	assert_string_equal(p, "s3cret");
	free(u);
	free(p);

	u = git_url_strip("https://user@github.com/o/r.git", &p);
	assert_string_equal(u, "https://github.com/o/r.git");
	assert_null(p);
	free(u);

	/* An ssh user name is not a secret and is needed. */
	u = git_url_strip("ssh://git@github.com/o/r.git", &p);
	assert_string_equal(u, "ssh://git@github.com/o/r.git");
	assert_null(p);
	free(u);

	/* An @ in the path is not userinfo. */
	u = git_url_strip("https://github.com/o/r@x.git", &p);
	assert_string_equal(u, "https://github.com/o/r@x.git");
	assert_null(p);
	free(u);

	u = git_url_strip("git@github.com:o/r.git", &p);
	assert_string_equal(u, "git@github.com:o/r.git");
	assert_null(p);
	free(u);
}

static void
test_parse_author(void **state)
{
	char	*n, *e;

	assert_int_equal(git_parse_author("Jo Doe <jo@example.com>", &n, &e), 0);
	assert_string_equal(n, "Jo Doe");
	assert_string_equal(e, "jo@example.com");
	free(n);
	free(e);
	assert_int_equal(git_parse_author("Jo", &n, &e), -1);
	assert_int_equal(git_parse_author("<jo@x>", &n, &e), -1);
	assert_int_equal(git_parse_author("Jo <>", &n, &e), -1);
	assert_int_equal(git_parse_author("Jo <a> trailing", &n, &e), -1);
}

static void
test_hunk_quote(void **state)
{
	cJSON	*f;
	char	*q;

	f = cJSON_Parse("{\"path\":\"src/p.c\",\"hunks\":[{\"header\":"
	    "\"@@ -3,2 +3,2 @@ int f()\",\"new_start\":3,\"new_lines\":2,"
	    "\"lines\":[{\"origin\":\" \",\"text\":\"a\"},{\"origin\":\"-\","
	    "\"text\":\"b\"},{\"origin\":\"+\",\"text\":\"c\"}]}]}");
	assert_non_null(f);
	q = git_hunk_quote(f, 0, "why c?");
	assert_string_equal(q, "About src/p.c, lines 3-4:\n"
	    "> @@ -3,2 +3,2 @@ int f()\n"
	    ">  a\n> -b\n> +c\n\nwhy c?\n");
	free(q);
	q = git_hunk_quote(f, 0, NULL);
	assert_non_null(strstr(q, "> +c\n"));
	assert_null(strstr(q, "why"));
	free(q);
	assert_null(git_hunk_quote(f, 1, "x"));
	assert_null(git_hunk_quote(f, -1, "x"));
	cJSON_Delete(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_url),
		cmocka_unit_test(test_url_strip),
		cmocka_unit_test(test_parse_author),
		cmocka_unit_test(test_hunk_quote),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
