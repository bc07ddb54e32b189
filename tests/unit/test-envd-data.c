/* Unit tests of the envd payload encoding (envd-client.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sandbox.h"

static void
test_b64_roundtrip(void **state)
{
	unsigned char	 in[300];
	struct buf	 b = BUF_INIT;
	char		*enc;
	size_t		 n, i;

	for (i = 0; i < sizeof in; i++)
		in[i] = (unsigned char)(i * 7 + 3);
	/* Every length mod 3, including 0. */
	for (n = 0; n <= sizeof in; n += (n < 8 ? 1 : 37)) {
		enc = envd_b64_encode(in, n);
		assert_int_equal(strlen(enc), (n + 2) / 3 * 4);
		buf_reset(&b);
		assert_int_equal(envd_b64_decode(enc, &b), 0);
		assert_int_equal(b.len, n);
		assert_memory_equal(b.len ? b.data : "", in, n);
		free(enc);
	}
	enc = envd_b64_encode("ab", 2);
	assert_string_equal(enc, "YWI=");
	free(enc);
	buf_reset(&b);
	assert_int_equal(envd_b64_decode("YW*=", &b), -1);
	buf_release(&b);
}

static void
test_utf8(void **state)
{
	const char	*ascii = "plain text, long enough for the fast path\n";

	assert_true(envd_utf8_ok(ascii, strlen(ascii)));
	assert_true(envd_utf8_ok("caf\xc3\xa9", 5));
	assert_true(envd_utf8_ok("\xf0\x9f\x98\x80", 4));	/* U+1F600 */
	assert_true(envd_utf8_ok("", 0));
	assert_false(envd_utf8_ok("a\0b", 3));			/* NUL */
	assert_false(envd_utf8_ok("abcdefgh\0ijklmnop", 17));	/* NUL, fast path */
	assert_false(envd_utf8_ok("\xc3", 1));			/* truncated */
	assert_false(envd_utf8_ok("abcdefghijklmno\xc3", 16));
	assert_false(envd_utf8_ok("\xc0\xaf", 2));		/* overlong '/' */
	assert_false(envd_utf8_ok("\xed\xa0\x80", 3));		/* surrogate */
	assert_false(envd_utf8_ok("\xf4\x90\x80\x80", 4));	/* > U+10FFFF */
	assert_false(envd_utf8_ok("\xff", 1));
}

static void
test_data_set_get(void **state)
{
	cJSON		*o;
	struct buf	 b = BUF_INIT;

	o = cJSON_CreateObject();
	envd_data_set(o, "text\n", 5);
	assert_string_equal(json_str(o, "data"), "text\n");
	assert_null(json_str(o, "data_b64"));
	assert_int_equal(envd_data_get(o, &b), 0);
	assert_int_equal(b.len, 5);
	cJSON_Delete(o);

	o = cJSON_CreateObject();
	envd_data_set(o, "a\0\xff", 3);
	assert_null(json_str(o, "data"));
	assert_string_equal(json_str(o, "data_b64"), "YQD/");
	buf_reset(&b);
	assert_int_equal(envd_data_get(o, &b), 0);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.data, "a\0\xff", 3);
	cJSON_Delete(o);
	buf_release(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_b64_roundtrip),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_data_set_get),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
