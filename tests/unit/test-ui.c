/* Unit tests of the screen's pure parts: text measuring and wrapping
 * (text.c), the theme parser (theme.c) and the key table (keys.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <locale.h>
#include <cmocka.h>

#include "ui.h"

static void
test_width(void **state)
{
	/* ASCII, CJK (2 cells each), emoji (2), a combining accent (0). */
	assert_int_equal(text_width("abc", 3), 3);
	assert_int_equal(text_width("日本語", strlen("日本語")), 6);
	assert_int_equal(text_width("🎉", strlen("🎉")), 2);
	assert_int_equal(text_width("e\xcc\x81", 3), 1);
	/* Invalid bytes and controls take a cell each; SGR takes none. */
	assert_int_equal(text_width("\xff\xfe", 2), 2);
	assert_int_equal(text_width("\x1b[1;31mred\x1b[0m", 14), 3);
	/* A truncated UTF-8 sequence is not read past its end. */
	assert_int_equal(text_width("\xe6\x97", 2), 2);
	assert_int_equal(text_width("\t", 1), 4);
	/* C1 CSI and a bidi override: one '?' each, as C0, never passed on. */
	assert_int_equal(text_width("\xc2\x9b", 2), 1);
	assert_int_equal(text_width("\xe2\x80\xae", 3), 1);
}

static void
test_fit(void **state)
{
	int	 used;

	/* A wide character that does not fit is left for the next row. */
	assert_int_equal(text_fit("a日b", strlen("a日b"), 2, &used), 1);
	assert_int_equal(used, 1);
	assert_int_equal(text_fit("a日b", strlen("a日b"), 3, &used), 4);
	assert_int_equal(used, 3);
	assert_int_equal(text_fit("abc", 3, 10, &used), 3);
	assert_int_equal(used, 3);
}

static void
test_wrap(void **state)
{
	const char	*s = "the week number is off by one";
	size_t		 len = strlen(s), off = 0, n;
	char		 rows[8][32];
	int		 i = 0;

	while (off < len && i < 8) {
		n = text_wrap_next(s, len, off, 10);
		assert_true(n > 0);
		snprintf(rows[i++], sizeof rows[0], "%.*s", (int)n, s + off);
		off += n;
	}
	assert_int_equal(i, 3);
	assert_string_equal(rows[0], "the week ");
	assert_string_equal(rows[1], "number is ");
	assert_string_equal(rows[2], "off by one");
	/* No space: cut at the width. */
	assert_int_equal(text_wrap_next("abcdefghij", 10, 0, 4), 4);
	/* A wide character in a one-column row is taken whole. */
	assert_int_equal(text_wrap_next("日", 3, 0, 1), 3);
}

static void
test_theme_parse(void **state)
{
	const char	*good = "# comment\n"
	    "status = black cyan\n"
	    "diff.add = #00ff00 default bold   # trailing comment\n"
	    "\n"
	    "  ok = 10 underline\n";
	char		*cause = NULL, *d;

	assert_int_equal(theme_parse(good, strlen(good), "t", &cause), 0);
	d = theme_describe(ROLE_STATUS);
	assert_string_equal(d, "status = 0 6");
	free(d);
	d = theme_describe(ROLE_DIFF_ADD);
	assert_string_equal(d, "diff.add = #00ff00 default bold");
	free(d);
	d = theme_describe(ROLE_OK);
	assert_string_equal(d, "ok = 10 default underline");
	free(d);
}

static void
test_theme_errors(void **state)
{
	static const struct {
		const char	*text;
		const char	*error;
	} bad[] = {
		{ "normal = red\nbogus = red\n",
		  "theme 'f' line 2: unknown role 'bogus'" },
		{ "status black\n", "theme 'f' line 1: expected 'role = colour'" },
		{ "ok = red blue green\n",
		  "theme 'f' line 1: bad colour or attribute 'green'" },
		{ "ok = 256\n", "theme 'f' line 1: bad colour or attribute '256'" },
		{ "ok = #12345\n",
		  "theme 'f' line 1: bad colour or attribute '#12345'" },
		{ "ok =\n", "theme 'f' line 1: no colour for 'ok'" },
		{ "ok = blinking\n",
		  "theme 'f' line 1: bad colour or attribute 'blinking'" },
	};
	char	*cause, *before, *after;
	size_t	 i;

	for (i = 0; i < nitems(bad); i++) {
		before = theme_describe(ROLE_NORMAL);
		cause = NULL;
		assert_int_equal(theme_parse(bad[i].text, strlen(bad[i].text),
		    "f", &cause), -1);
		assert_string_equal(cause, bad[i].error);
		free(cause);
		/* All or nothing: a bad file changes no role. */
		after = theme_describe(ROLE_NORMAL);
		assert_string_equal(before, after);
		free(before);
		free(after);
	}
	cause = NULL;
	assert_int_equal(theme_parse("a\0b", 3, "f", &cause), -1);
	assert_string_equal(cause, "theme 'f': not a text file");
	free(cause);
}

static void
test_theme_files(void **state)
{
	static const char *names[] = {
		"default", "light", "high-contrast", "solarized-dark"
	};
	char	*cause, *dir, *path;
	size_t	 i;

	/* The shipped themes parse cleanly (found beside the binary). */
	dir = getenv("HOLT_SRC_DIR");
	for (i = 0; i < nitems(names); i++) {
		cause = NULL;
		path = xprintf("%s/themes/%s.theme", dir != NULL ? dir : ".",
		    names[i]);
		if (theme_load(path, &cause) != 0)
			fail_msg("%s", cause);
		free(path);
	}
	cause = NULL;
	assert_int_equal(theme_load("no-such-theme", &cause), -1);
	assert_string_equal(cause,
	    "theme 'no-such-theme': not found (themes/no-such-theme.theme)");
	free(cause);
}

static void
test_keys(void **state)
{
	struct buf	 b = BUF_INIT;
	char		*cause = NULL, *n;

	assert_int_equal(keys_lookup(SCOPE_PREFIX, 'd'), ACT_DETACH);
	assert_int_equal(keys_lookup(SCOPE_INPUT, '\r'), ACT_SEND);
	assert_int_equal(keys_lookup(SCOPE_INPUT, '\n'), ACT_NEWLINE);
	assert_int_equal(keys_lookup(SCOPE_INPUT, KEYC_META | '\r'),
	    ACT_NEWLINE);
	assert_int_equal(keys_lookup(SCOPE_APPROVAL, 'a'), ACT_ALWAYS);
	assert_int_equal(keys_lookup(SCOPE_DIFF, 'x'), ACT_NONE);
	/* The full-screen views share the scrolling keys. */
	assert_int_equal(keys_lookup(SCOPE_DIFF, 'j'), ACT_DOWN);

	n = keys_name(KEYC_META | '\r');
	assert_string_equal(n, "M-Enter");
	free(n);
	n = keys_name(KEYC_FN | KEY_PPAGE);
	assert_string_equal(n, "PgUp");
	free(n);

	assert_int_equal(keys_set_prefix("C-a", &cause), 0);
	assert_int_equal(keys_prefix(), 1);
	assert_int_equal(keys_set_prefix("x", &cause), -1);
	assert_string_equal(cause,
	    "prefix 'x': expected a control key such as C-b");
	free(cause);
	keys_help(&b);
	/* Help is the table: prefix bindings carry the current prefix. */
	assert_non_null(strstr(buf_str(&b), "  C-a d          detach"));
	assert_non_null(strstr(buf_str(&b), "  y              allow once"));
	buf_release(&b);
	assert_int_equal(keys_set_prefix("C-b", &cause), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_width),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_theme_parse),
		cmocka_unit_test(test_theme_errors),
		cmocka_unit_test(test_theme_files),
		cmocka_unit_test(test_keys),
	};

	setlocale(LC_ALL, "C.UTF-8");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
