/* Unit tests of the frame codec (frame.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "holt.h"

static void
test_roundtrip_bytewise(void **state)
{
	struct frame_decoder	 fd;
	cJSON			*a, *b, *out;
	char			*enc_a, *enc_b, *cause = NULL;
	size_t			 la, lb, i;
	int			 got = 0, r;

	a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "op", "hello");
	cJSON_AddNumberToObject(a, "version", 1);
	b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "data", "caf\xc3\xa9 \n \"quoted\"");
	enc_a = frame_encode(a, &la);
	enc_b = frame_encode(b, &lb);
	assert_int_equal((unsigned char)enc_a[3], la - 4);

	frame_decoder_init(&fd, 0);
	/* One byte at a time: frames come out whole, in order. */
	for (i = 0; i < la + lb; i++) {
		char c = i < la ? enc_a[i] : enc_b[i - la];
		frame_decoder_feed(&fd, &c, 1);
		while ((r = frame_decoder_next(&fd, &out, &cause)) == 1) {
			if (got == 0)
				assert_string_equal(json_str(out, "op"), "hello");
			else
				assert_string_equal(json_str(out, "data"),
				    "caf\xc3\xa9 \n \"quoted\"");
			got++;
			cJSON_Delete(out);
		}
		assert_int_equal(r, 0);
	}
	assert_int_equal(got, 2);
	frame_decoder_release(&fd);
	free(enc_a);
	free(enc_b);
	cJSON_Delete(a);
	cJSON_Delete(b);
}

static void
test_oversized_length(void **state)
{
	struct frame_decoder	 fd;
	unsigned char		 hdr[4] = { 0x40, 0, 0, 0 };	/* 1 GiB */
	cJSON			*out;
	char			*cause = NULL;

	frame_decoder_init(&fd, 1024);
	frame_decoder_feed(&fd, hdr, 4);
	assert_int_equal(frame_decoder_next(&fd, &out, &cause), -1);
	assert_null(out);
	assert_non_null(strstr(cause, "over the limit"));
	free(cause);
	frame_decoder_release(&fd);
}

static void
test_not_an_object(void **state)
{
	struct frame_decoder	 fd;
	const char		 bad[] = "\0\0\0\x05[1,2]";
	const char		 junk[] = "\0\0\0\x03{{{";
	cJSON			*out;
	char			*cause = NULL;

	frame_decoder_init(&fd, 0);
	frame_decoder_feed(&fd, bad, 9);
	assert_int_equal(frame_decoder_next(&fd, &out, &cause), -1);
	free(cause);
	cause = NULL;
	frame_decoder_release(&fd);
	frame_decoder_init(&fd, 0);
	frame_decoder_feed(&fd, junk, 7);
	assert_int_equal(frame_decoder_next(&fd, &out, &cause), -1);
	assert_string_equal(cause, "frame is not a JSON object");
	free(cause);
	frame_decoder_release(&fd);
}

/* Bytes that are not UTF-8 in a frame come out as U+FFFD, keys too. */
static void
test_bad_utf8_repaired(void **state)
{
	struct frame_decoder	 fd;
	const char		 body[] = "{\"te\xffxt\":\"caf\xe9 \xed\xa0\x80 "
				    "\xc0\xaf \xf4\x90\x80\x80 \xe2\x82\"}";
	unsigned char		 hdr[4] = { 0, 0, 0, sizeof body - 1 };
	cJSON			*out;
	char			*cause = NULL, *again;

	frame_decoder_init(&fd, 0);
	frame_decoder_feed(&fd, hdr, 4);
	frame_decoder_feed(&fd, body, sizeof body - 1);
	assert_int_equal(frame_decoder_next(&fd, &out, &cause), 1);
	/* Each maximal bad part is one U+FFFD (Unicode 3.9, table 3-8). */
	assert_string_equal(json_str(out, "te\xef\xbf\xbdxt"),
	    "caf\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
	    "\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	    "\xef\xbf\xbd \xef\xbf\xbd");
	again = json_print(out);
	assert_true(utf8_valid(again, strlen(again)));
	free(again);
	cJSON_Delete(out);
	frame_decoder_release(&fd);
}

static void
test_utf8_valid(void **state)
{
	assert_true(utf8_valid("caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac", 14));
	assert_false(utf8_valid("\xc3", 1));
	assert_false(utf8_valid("\xe0\x80\x80", 3));	/* overlong */
	assert_false(utf8_valid("\xed\xbf\xbf", 3));	/* surrogate */
	assert_null(utf8_repair("plain", 5));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_bytewise),
		cmocka_unit_test(test_oversized_length),
		cmocka_unit_test(test_not_an_object),
		cmocka_unit_test(test_bad_utf8_repaired),
		cmocka_unit_test(test_utf8_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
