/* Unit tests of the event log (session.c) and redaction (secret.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <cmocka.h>

#include "session.h"

static char	 home[] = "/tmp/holt-evlog-XXXXXX";

static int
setup(void **state)
{
	if (mkdtemp(home) == NULL)
		return -1;
	setenv("HOLT_HOME", home, 1);
	return 0;
}

static int
teardown(void **state)
{
	file_rm_rf(home);
	return 0;
}

static void
test_append_and_read(void **state)
{
	struct eventlog	*el;
	char		*cause = NULL, *warning = NULL;
	cJSON		*ev, *all;
	int		 i;

	el = eventlog_open("s", &cause);
	assert_non_null(el);
	for (i = 0; i < 5; i++) {
		ev = evlog_new("user.message");
		cJSON_AddStringToObject(ev, "text", "hi");
		assert_int_equal(eventlog_append(el, ev, i == 4), i + 1);
		/* seq, ts and type come first */
		assert_string_equal(ev->child->string, "seq");
		assert_string_equal(ev->child->next->string, "ts");
		assert_string_equal(ev->child->next->next->string, "type");
		cJSON_Delete(ev);
	}
	eventlog_close(el);
	all = eventlog_read("s", &warning, &cause);
	assert_non_null(all);
	assert_null(warning);
	assert_int_equal(cJSON_GetArraySize(all), 5);
	cJSON_Delete(all);
	all = eventlog_read_last("s", 2, &warning, &cause);
	assert_int_equal(cJSON_GetArraySize(all), 2);
	assert_int_equal(json_num(cJSON_GetArrayItem(all, 0), "seq", 0), 4);
	cJSON_Delete(all);
	all = eventlog_read_last("s", 50, &warning, &cause);
	assert_int_equal(cJSON_GetArraySize(all), 5);
	cJSON_Delete(all);

	/* Another process appended meanwhile: seq carries on from the file. */
	assert_int_equal(session_event_append("s", "error", NULL, &cause), -1);
	free(cause);	/* no session.json: not a session */
	cause = NULL;
}

static void
test_torn_last_line(void **state)
{
	struct eventlog	*el;
	char		*cause = NULL, *warning = NULL, *path;
	cJSON		*ev, *all;
	int		 fd;

	path = xprintf("%s/data/sessions/s/events.jsonl", home);
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd != -1);
	assert_int_equal(write(fd, "{\"seq\":6,\"ts\":\"x\",\"ty", 21), 21);
	close(fd);
	all = eventlog_read("s", &warning, &cause);
	assert_non_null(all);
	assert_non_null(warning);
	assert_non_null(strstr(warning, "torn"));
	assert_int_equal(cJSON_GetArraySize(all), 5);
	cJSON_Delete(all);
	free(warning);

	/* Opening for append cuts the torn line; the next seq is 6. */
	el = eventlog_open("s", &cause);
	ev = evlog_new("error");
	assert_int_equal(eventlog_append(el, ev, 1), 6);
	cJSON_Delete(ev);
	eventlog_close(el);
	all = eventlog_read("s", &warning, &cause);
	assert_null(warning);
	assert_int_equal(cJSON_GetArraySize(all), 6);
	cJSON_Delete(all);

	/* A corrupt line in the middle is an error naming file and line. */
	fd = open(path, O_WRONLY | O_APPEND);
	assert_int_equal(write(fd, "garbage\n{\"seq\":8,\"type\":\"x\"}\n", 30), 30);
	close(fd);
	all = eventlog_read("s", &warning, &cause);
	assert_null(all);
	assert_non_null(strstr(cause, "events.jsonl:7: corrupt"));
	free(cause);
	free(path);
}

static void
test_redact(void **state)
{
	char	*r;
	cJSON	*obj;

	secret_add("sk-abcdef123456");
	secret_add("abc");	/* too short to be a secret */
	r = secret_redact("key sk-abcdef123456 and abc");
	assert_string_equal(r, "key [redacted] and abc");
	free(r);
	obj = cJSON_Parse("{\"a\":[\"xx sk-abcdef123456\"],\"b\":{\"c\":\"sk-abcdef123456\"}}");
	secret_redact_json(obj);
	r = json_print(obj);
	assert_null(strstr(r, "sk-abcdef"));
	free(r);
	cJSON_Delete(obj);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_and_read),
		cmocka_unit_test(test_torn_last_line),
		cmocka_unit_test(test_redact),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
