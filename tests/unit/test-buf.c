/* Unit tests of struct buf (buf.c) and the atomic file write (file.c). */
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_grow_and_format),
		cmocka_unit_test(test_atomic_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
