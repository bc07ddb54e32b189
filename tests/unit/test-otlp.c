/*
 * Unit tests of otlp.c: the spans of an event log, their parentage, times
 * and ids, and the request around them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "otlp.h"

/* Two runs; the first with a model request and a tool call. */
static const char log_json[] = "["
    "{\"seq\":1,\"ts\":\"2026-01-02T03:04:05.000Z\",\"type\":\"session.created\"},"
    "{\"seq\":2,\"ts\":\"2026-01-02T03:04:06.000Z\",\"type\":\"user.message\"},"
    "{\"seq\":3,\"ts\":\"2026-01-02T03:04:08.500Z\",\"type\":\"model.usage\","
	"\"input_tokens\":120,\"output_tokens\":7,\"model\":\"openai:gpt-4.1\","
	"\"duration_ms\":2400},"
    "{\"seq\":4,\"ts\":\"2026-01-02T03:04:08.501Z\",\"type\":\"assistant.message\"},"
    "{\"seq\":5,\"ts\":\"2026-01-02T03:04:08.502Z\",\"type\":\"tool.call\","
	"\"call_id\":\"c1\",\"name\":\"run_command\"},"
    "{\"seq\":6,\"ts\":\"2026-01-02T03:04:08.600Z\",\"type\":\"tool.output\"},"
    "{\"seq\":7,\"ts\":\"2026-01-02T03:04:09.000Z\",\"type\":\"tool.finished\","
	"\"call_id\":\"c1\",\"exit_code\":2},"
    "{\"seq\":8,\"ts\":\"2026-01-02T03:04:10.000Z\",\"type\":\"model.usage\","
	"\"input_tokens\":200,\"output_tokens\":9,\"duration_ms\":99999},"
    "{\"seq\":9,\"ts\":\"2026-01-02T03:04:10.001Z\",\"type\":\"run.finished\","
	"\"reason\":\"done\",\"steps\":2},"
    "{\"seq\":10,\"ts\":\"2026-01-02T03:05:00.000Z\",\"type\":\"user.message\"},"
    "{\"seq\":11,\"ts\":\"2026-01-02T03:05:01.000Z\",\"type\":\"run.finished\","
	"\"reason\":\"error\",\"steps\":0}"
    "]";

#define T0	1767323046000000000ULL	/* 2026-01-02T03:04:06Z in ns */

static cJSON *
spans_of(const char *session)
{
	cJSON			*log = cJSON_Parse(log_json), *ev;
	cJSON			*spans = cJSON_CreateArray();
	struct otlp_trace	*t = otlp_trace_new(session, "sbx-1",
				    "anthropic:claude-x");

	cJSON_ArrayForEach(ev, log)
		otlp_trace_feed(t, ev, spans);
	otlp_trace_free(t);
	cJSON_Delete(log);
	return spans;
}

static const char *
attr(const cJSON *span, const char *key)
{
	const cJSON	*a, *v;

	cJSON_ArrayForEach(a, cJSON_GetObjectItem(span, "attributes")) {
		if (strcmp(json_str(a, "key"), key) != 0)
			continue;
		v = cJSON_GetObjectItem(a, "value");
		return v->child != NULL && cJSON_IsString(v->child) ?
		    v->child->valuestring : "";
	}
	return NULL;
}

static unsigned long long
ns(const cJSON *span, const char *key)
{
	return strtoull(json_str(span, key), NULL, 10);
}

static void
test_spans_and_parents(void **state)
{
	cJSON		*spans = spans_of("s");
	const cJSON	*chat, *tool, *chat2, *run, *run2;

	assert_int_equal(cJSON_GetArraySize(spans), 5);
	chat = cJSON_GetArrayItem(spans, 0);
	tool = cJSON_GetArrayItem(spans, 1);
	chat2 = cJSON_GetArrayItem(spans, 2);
	run = cJSON_GetArrayItem(spans, 3);
	run2 = cJSON_GetArrayItem(spans, 4);
	assert_string_equal(json_str(chat, "name"), "chat gpt-4.1");
	assert_string_equal(json_str(chat2, "name"), "chat claude-x");
	assert_string_equal(json_str(tool, "name"), "execute_tool run_command");
	assert_string_equal(json_str(run, "name"), "invoke_agent holt");
	assert_string_equal(attr(chat, "gen_ai.system"), "openai");
	assert_string_equal(attr(chat, "gen_ai.request.model"), "gpt-4.1");
	assert_string_equal(attr(chat, "gen_ai.usage.input_tokens"), "120");
	assert_string_equal(attr(chat2, "gen_ai.system"), "anthropic");
	assert_string_equal(attr(tool, "holt.tool.exit_code"), "2");
	assert_string_equal(attr(run, "holt.session"), "s");
	assert_string_equal(attr(tool, "holt.sandbox.id"), "sbx-1");
	assert_null(cJSON_GetObjectItem(run, "parentSpanId"));
	assert_string_equal(json_str(chat, "parentSpanId"),
	    json_str(run, "spanId"));
	assert_string_equal(json_str(tool, "parentSpanId"),
	    json_str(run, "spanId"));
	assert_string_equal(json_str(tool, "traceId"), json_str(run, "traceId"));
	assert_string_not_equal(json_str(run2, "traceId"),
	    json_str(run, "traceId"));
	assert_int_equal(strlen(json_str(run, "traceId")), 32);
	assert_int_equal(strlen(json_str(run, "spanId")), 16);
	/* An error run and a failed command are errors. */
	assert_int_equal(json_num(cJSON_GetObjectItem(tool, "status"), "code",
	    0), 2);
	assert_int_equal(json_num(cJSON_GetObjectItem(run2, "status"), "code",
	    0), 2);
	assert_null(cJSON_GetObjectItem(run, "status"));
	cJSON_Delete(spans);
}

static void
test_times(void **state)
{
	cJSON		*spans = spans_of("s");
	const cJSON	*chat = cJSON_GetArrayItem(spans, 0);
	const cJSON	*chat2 = cJSON_GetArrayItem(spans, 2);
	const cJSON	*run = cJSON_GetArrayItem(spans, 3);

	assert_true(ns(run, "startTimeUnixNano") == T0);
	assert_true(ns(run, "endTimeUnixNano") == T0 + 4001000000ULL);
	/* The request started duration_ms before its usage... */
	assert_true(ns(chat, "startTimeUnixNano") == T0 + 100000000ULL);
	assert_true(ns(chat, "endTimeUnixNano") == T0 + 2500000000ULL);
	/* ...but never before its run. */
	assert_true(ns(chat2, "startTimeUnixNano") == T0);
	cJSON_Delete(spans);
}

static void
test_ids_are_stable(void **state)
{
	cJSON	*a = spans_of("s"), *b = spans_of("s"), *c = spans_of("t");

	assert_string_equal(json_str(cJSON_GetArrayItem(a, 1), "spanId"),
	    json_str(cJSON_GetArrayItem(b, 1), "spanId"));
	assert_string_not_equal(json_str(cJSON_GetArrayItem(a, 1), "spanId"),
	    json_str(cJSON_GetArrayItem(c, 1), "spanId"));
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
}

static void
test_request_and_url(void **state)
{
	cJSON	*spans = spans_of("s"), *req;
	char	*body = otlp_request_json(spans), *u;

	req = cJSON_Parse(body);
	assert_non_null(req);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(
	    cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(
	    cJSON_GetObjectItem(req, "resourceSpans"), 0), "scopeSpans"), 0),
	    "spans")), 5);
	cJSON_Delete(req);
	free(body);
	cJSON_Delete(spans);
	u = otlp_traces_url("http://h:4318/");
	assert_string_equal(u, "http://h:4318/v1/traces");
	free(u);
	u = otlp_traces_url("http://h:4318/v1/traces");
	assert_string_equal(u, "http://h:4318/v1/traces");
	free(u);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spans_and_parents),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_ids_are_stable),
		cmocka_unit_test(test_request_and_url),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
