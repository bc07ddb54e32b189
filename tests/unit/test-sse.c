/* Unit tests of the SSE parser (sse.c), fed at every possible split. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "holt.h"
#include "sse.h"

/* Every event as "type|id|retry|data;" so a whole run compares as one string. */
static int
collect(void *arg, const struct sse_event *ev)
{
	struct buf	*b = arg;

	assert_int_equal(strlen(ev->data), ev->data_len);
	buf_addf(b, "%s|%s|%ld|%s;", ev->type, ev->id, ev->retry, ev->data);
	return 0;
}

static const char stream[] =
    "\xef\xbb\xbf"			/* byte-order mark, dropped */
    ": a comment\n"
    "data: one\n\n"
    "event: message_start\r\n"
    "data: {\"a\":1}\r\n\r\n"
    "id: 7\rdata: two\rdata:  three\r\r"	/* bare CR ends lines */
    "data\n\n"				/* a field without colon: empty data */
    "event: empty\n\n"			/* no data: dropped */
    "retry: 1500\nretry: x1\ndata:four\nfoo: bar\n\n"
    "data: last\r\n\r\n";

static const char expected[] =
    "message||-1|one;"
    "message_start||-1|{\"a\":1};"
    "message|7|-1|two\n three;"
    "message|7|-1|;"
    "message|7|1500|four;"
    "message|7|1500|last;";

static void
run_chunked(size_t chunk, struct buf *out)
{
	struct sse_parser	*p;
	char			*cause = NULL;
	size_t			 len = sizeof stream - 1, off, n;

	p = sse_new(0, 0, collect, out);
	for (off = 0; off < len; off += n) {
		n = len - off < chunk ? len - off : chunk;
		assert_int_equal(sse_feed(p, stream + off, n, &cause), 0);
	}
	assert_int_equal(sse_finish(p), 0);
	assert_int_equal(sse_events(p), 6);
	sse_free(p);
}

static void
test_every_chunk_size(void **state)
{
	struct buf	 out = BUF_INIT;
	size_t		 chunk;

	for (chunk = 1; chunk <= sizeof stream; chunk++) {
		buf_reset(&out);
		run_chunked(chunk, &out);
		assert_string_equal(buf_str(&out), expected);
	}
	buf_release(&out);
}

static void
test_every_two_way_split(void **state)
{
	struct sse_parser	*p;
	struct buf		 out = BUF_INIT;
	char			*cause = NULL;
	size_t			 len = sizeof stream - 1, i, j;

	for (i = 0; i <= len; i++) {
		for (j = i; j <= len; j += 5) {
			buf_reset(&out);
			p = sse_new(0, 0, collect, &out);
			assert_int_equal(sse_feed(p, stream, i, &cause), 0);
			assert_int_equal(sse_feed(p, stream + i, j - i,
			    &cause), 0);
			assert_int_equal(sse_feed(p, stream + j, len - j,
			    &cause), 0);
			assert_string_equal(buf_str(&out), expected);
			sse_free(p);
		}
	}
	buf_release(&out);
}

static void
test_crlf_split_is_one_line_end(void **state)
{
	struct sse_parser	*p;
	struct buf		 out = BUF_INIT;
	char			*cause = NULL;

	p = sse_new(0, 0, collect, &out);
	assert_int_equal(sse_feed(p, "data: a\r", 8, &cause), 0);
	/* The "\n" completing "\r\n" must not count as an empty line. */
	assert_int_equal(sse_feed(p, "\ndata: b\r", 9, &cause), 0);
	assert_string_equal(buf_str(&out), "");
	assert_int_equal(sse_feed(p, "\n\r\n", 3, &cause), 0);
	assert_string_equal(buf_str(&out), "message||-1|a\nb;");
	sse_free(p);
	buf_release(&out);
}

static void
test_unfinished_event(void **state)
{
	struct sse_parser	*p;
	struct buf		 out = BUF_INIT;
	char			*cause = NULL;

	p = sse_new(0, 0, collect, &out);
	assert_int_equal(sse_feed(p, "data: a\n\ndata: b\n", 17, &cause), 0);
	assert_int_equal(sse_finish(p), 1);	/* "b" never ended */
	assert_string_equal(buf_str(&out), "message||-1|a;");
	sse_free(p);

	p = sse_new(0, 0, collect, &out);
	assert_int_equal(sse_feed(p, "data: a\n\nda", 11, &cause), 0);
	assert_int_equal(sse_finish(p), 1);	/* half a line */
	sse_free(p);
	buf_release(&out);
}

static void
test_bounds(void **state)
{
	struct sse_parser	*p;
	struct buf		 out = BUF_INIT;
	char			*cause = NULL, line[100];

	memset(line, 'x', sizeof line);
	p = sse_new(64, 128, collect, &out);
	assert_int_equal(sse_feed(p, "data: ", 6, &cause), 0);
	assert_int_equal(sse_feed(p, line, 40, &cause), 0);
	assert_int_equal(sse_feed(p, line, 40, &cause), -1);
	assert_non_null(strstr(cause, "line longer than 64"));
	free(cause);
	sse_free(p);

	/* Many short data lines: the event bound holds. */
	p = sse_new(64, 128, collect, &out);
	cause = NULL;
	for (int i = 0; i < 20 && cause == NULL; i++)
		(void)sse_feed(p, "data: 0123456789\n", 17, &cause);
	assert_non_null(cause);
	assert_non_null(strstr(cause, "event longer than 128"));
	free(cause);
	sse_free(p);
	buf_release(&out);
}

static int
stop_at_second(void *arg, const struct sse_event *ev)
{
	int	*n = arg;

	return ++*n == 2 ? 42 : 0;
}

static void
test_callback_stops(void **state)
{
	struct sse_parser	*p;
	char			*cause = NULL;
	int			 n = 0;

	p = sse_new(0, 0, stop_at_second, &n);
	assert_int_equal(sse_feed(p, "data: 1\n\ndata: 2\n\ndata: 3\n\n", 27,
	    &cause), 42);
	assert_int_equal(n, 2);
	sse_free(p);
}

static void
test_not_a_bom(void **state)
{
	struct sse_parser	*p;
	struct buf		 out = BUF_INIT;
	char			*cause = NULL;

	/* Two bytes of a BOM, then not: they belong to the line. */
	p = sse_new(0, 0, collect, &out);
	assert_int_equal(sse_feed(p, "\xef\xbb", 2, &cause), 0);
	assert_int_equal(sse_feed(p, "x: 1\ndata: y\n\n", 14, &cause), 0);
	assert_string_equal(buf_str(&out), "message||-1|y;");
	sse_free(p);
	buf_release(&out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_chunk_size),
		cmocka_unit_test(test_every_two_way_split),
		cmocka_unit_test(test_crlf_split_is_one_line_end),
		cmocka_unit_test(test_unfinished_event),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_callback_stops),
		cmocka_unit_test(test_not_a_bom),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
