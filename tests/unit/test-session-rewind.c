/*
 * Unit tests of session-rewind.c: what session.rewound and session.forked
 * do to a conversation rebuilt from the log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "session.h"

/* A history as agent.c keeps it; call ids repeat across messages. */
static const char history_json[] = "["
    "{\"seq\":1,\"type\":\"session.created\"},"
    "{\"seq\":2,\"type\":\"user.message\",\"text\":\"go\"},"
    "{\"seq\":3,\"type\":\"assistant.message\",\"tool_calls\":"
	"[{\"id\":\"c1\",\"name\":\"write_file\"}]},"
    "{\"seq\":4,\"type\":\"tool.call\",\"call_id\":\"c1\"},"
    "{\"seq\":5,\"type\":\"checkpoint.taken\",\"step\":1,\"call_id\":\"c1\","
	"\"checkpoint\":1},"
    "{\"seq\":6,\"type\":\"tool.finished\",\"call_id\":\"c1\"},"
    "{\"seq\":7,\"type\":\"assistant.message\",\"tool_calls\":"
	"[{\"id\":\"c1\",\"name\":\"run_command\"},"
	"{\"id\":\"c2\",\"name\":\"run_command\"}]},"
    "{\"seq\":8,\"type\":\"tool.call\",\"call_id\":\"c1\"},"
    "{\"seq\":9,\"type\":\"checkpoint.taken\",\"step\":2,\"call_id\":\"c1\","
	"\"checkpoint\":2},"
    "{\"seq\":10,\"type\":\"tool.finished\",\"call_id\":\"c1\"},"
    "{\"seq\":11,\"type\":\"tool.call\",\"call_id\":\"c2\"},"
    "{\"seq\":12,\"type\":\"checkpoint.taken\",\"step\":3,\"call_id\":\"c2\","
	"\"checkpoint\":3},"
    "{\"seq\":13,\"type\":\"tool.finished\",\"call_id\":\"c2\"},"
    "{\"seq\":14,\"type\":\"run.finished\",\"reason\":\"done\"}"
    "]";

/* The history after one event (JSON) is applied to it. */
static cJSON *
applied(const char *event)
{
	cJSON	*h = cJSON_Parse(history_json), *ev = cJSON_Parse(event);

	session_history_apply(h, ev);
	cJSON_Delete(ev);
	return h;
}

static const char *
type_at(const cJSON *h, int i)
{
	return json_str(cJSON_GetArrayItem(h, i), "type");
}

static void
test_step_index_repeated_ids(void **state)
{
	cJSON	*h = cJSON_Parse(history_json);

	assert_int_equal(session_step_index(h, 1), 3);
	/* c1 again: the tool.call just before step 2's checkpoint. */
	assert_int_equal(session_step_index(h, 2), 7);
	assert_int_equal(session_step_index(h, 3), 10);
	assert_int_equal(session_step_index(h, 4), -1);
	assert_null(session_find_step(h, 0));
	cJSON_Delete(h);
}

static void
test_rewind_cuts_and_closes(void **state)
{
	cJSON		*h = applied("{\"seq\":15,\"type\":\"session.rewound\","
			    "\"to_step\":3,\"conversation\":true}");
	const cJSON	*f;

	/* Up to step 2's result, then c2 closed as not run, the run ended. */
	assert_int_equal(cJSON_GetArraySize(h), 12);
	assert_string_equal(type_at(h, 9), "tool.finished");
	f = cJSON_GetArrayItem(h, 10);
	assert_string_equal(json_str(f, "type"), "tool.finished");
	assert_string_equal(json_str(f, "call_id"), "c2");
	assert_non_null(strstr(json_str(f, "result"), "rewound"));
	assert_string_equal(type_at(h, 11), "run.finished");
	cJSON_Delete(h);
}

static void
test_rewind_whole_or_untouched(void **state)
{
	cJSON	*h;

	/* Files only, or a step not in it: the conversation stays whole. */
	h = applied("{\"seq\":15,\"type\":\"session.rewound\","
	    "\"to_step\":1,\"conversation\":false}");
	assert_int_equal(cJSON_GetArraySize(h), 14);
	cJSON_Delete(h);
	h = applied("{\"seq\":15,\"type\":\"session.rewound\","
	    "\"to_step\":9}");
	assert_int_equal(cJSON_GetArraySize(h), 14);
	cJSON_Delete(h);
	/* Step 1: created, user, assistant, c1 closed, the run ended. */
	h = applied("{\"seq\":15,\"type\":\"session.rewound\","
	    "\"to_step\":1}");
	assert_int_equal(cJSON_GetArraySize(h), 5);
	assert_string_equal(type_at(h, 3), "tool.finished");
	assert_string_equal(type_at(h, 4), "run.finished");
	cJSON_Delete(h);
}

static void
test_forked_closes_open_calls(void **state)
{
	cJSON	*h = cJSON_Parse(history_json);
	cJSON	*ev = cJSON_Parse("{\"seq\":11,\"type\":\"session.forked\"}");
	int	 n;

	/* A fork cut after c1 of the second message: c2 has no result. */
	for (n = cJSON_GetArraySize(h); n > 10; n--)
		cJSON_DeleteItemFromArray(h, n - 1);
	session_history_apply(h, ev);
	assert_int_equal(cJSON_GetArraySize(h), 12);
	assert_string_equal(json_str(cJSON_GetArrayItem(h, 10), "call_id"),
	    "c2");
	assert_non_null(strstr(json_str(cJSON_GetArrayItem(h, 10), "result"),
	    "forked"));
	assert_string_equal(type_at(h, 11), "run.finished");
	cJSON_Delete(ev);
	cJSON_Delete(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_index_repeated_ids),
		cmocka_unit_test(test_rewind_cuts_and_closes),
		cmocka_unit_test(test_rewind_whole_or_untouched),
		cmocka_unit_test(test_forked_closes_open_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
