/*
 * Unit tests of struct buf (buf.c), the atomic file write (file.c) and
 * text made safe for a terminal (utf8.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "holt.h"

static void
test_buf_grow_and_format(void **state)
{
	struct buf	 b = BUF_INIT;
	size_t		 i, len;
	char		*s;

	assert_string_equal(buf_str(&b), "");
	for (i = 0; i < 10000; i++)
		buf_addc(&b, 'x');
	assert_int_equal(b.len, 10000);
	buf_reset(&b);
	buf_addf(&b, "%s=%d", "steps", 25);
	assert_string_equal(b.data, "steps=25");
	buf_remove_front(&b, 6);
	assert_string_equal(b.data, "25");
	s = buf_detach(&b, &len);
	assert_int_equal(len, 2);
	assert_null(b.data);
	free(s);
	buf_release(&b);
}

static void
test_atomic_write(void **state)
{
	char	 dir[] = "/tmp/holt-test-XXXXXX", *path, *data;
	size_t	 len;

	assert_non_null(mkdtemp(dir));
	path = paths_join(dir, "f.json");
	assert_int_equal(file_write_atomic(path, "{\"a\":1}", 7, 0600), 0);
	assert_int_equal(file_write_atomic(path, "{}", 2, 0600), 0);
	data = file_read(path, &len, 0);
	assert_int_equal(len, 2);
	assert_string_equal(data, "{}");
	free(data);
	assert_int_equal(file_rm_rf(dir), 0);
	assert_int_equal(access(dir, F_OK), -1);
	free(path);
}

static void
check_vis(const char *in, int flags, const char *want)
{
	char	*got = utf8_vis(in, flags);

	assert_string_equal(got, want);
	free(got);
}

static void
test_utf8_vis(void **state)
{
	/* Names: every control character becomes an escape. */
	check_vis("plain-name.c", 0, "plain-name.c");
	check_vis("evil\033]2;pwned\007name", 0, "evil\\033]2;pwned\\007name");
	check_vis("a\nb\tc\rd\177", 0, "a\\nb\\tc\\rd\\177");
	check_vis("\033[2J", 0, "\\033[2J");
	/* C1 CSI (U+009B) as UTF-8, a stray byte, a bidi override. */
	check_vis("x\xc2\x9b" "31my", 0, "x\\302\\23331my");
	check_vis("bad\xff\x9b", 0, "bad\\377\\233");
	check_vis("a\xe2\x80\xae" "b", 0, "a\\342\\200\\256b");
	/* Text other than controls passes: accents, CJK, emoji, backslash. */
	check_vis("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80 a\\b", 0,
	    "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80 a\\b");
	/* Messages keep their lines, tabs and CRLF; a lone CR is escaped. */
	check_vis("one\r\ntwo\tthree\rfour\033[31m\n", UTF8_VIS_TEXT,
	    "one\r\ntwo\tthree\\rfour\\033[31m\n");
	check_vis(NULL, 0, "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_grow_and_format),
		cmocka_unit_test(test_atomic_write),
		cmocka_unit_test(test_utf8_vis),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
