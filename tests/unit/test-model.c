/*
 * Unit tests of the model providers' pure parts: stream assembly of both
 * wire formats fed at every chunk size and cut at every byte, request
 * bodies, error classification, key redaction, script turn selection.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "model-int.h"

static const char openai_stream[] =
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
    ": keep-alive comment\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Caf\xc3\xa9 \"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"time.\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"pa\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"run_command\",\"arguments\":\"{\\\"command\\\":\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\":\\\"a.c\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"\\\"make\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":321,\"completion_tokens\":45,\"total_tokens\":366}}\n\n"
    "data: [DONE]\n\n";

static const char anthropic_stream[] =
    "event: message_start\r\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":300,\"cache_read_input_tokens\":21,\"output_tokens\":1}}}\r\n\r\n"
    "event: ping\r\ndata: {\"type\": \"ping\"}\r\n\r\n"
    "event: content_block_start\r\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\r\n\r\n"
    "event: content_block_delta\r\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\r\n\r\n"
    "event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":0}\r\n\r\n"
    "event: content_block_start\r\n"
    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\r\n\r\n"
    "event: content_block_delta\r\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Caf\xc3\xa9 \"}}\r\n\r\n"
    "event: content_block_delta\r\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"time.\"}}\r\n\r\n"
    "event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":1}\r\n\r\n"
    "event: content_block_start\r\n"
    "data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"call_a\",\"name\":\"read_file\",\"input\":{}}}\r\n\r\n"
    "event: content_block_delta\r\n"
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\r\n\r\n"
    "event: content_block_delta\r\n"
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"pa\"}}\r\n\r\n"
    "event: content_block_delta\r\n"
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"th\\\":\\\"a.c\\\"}\"}}\r\n\r\n"
    "event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":2}\r\n\r\n"
    "event: content_block_start\r\n"
    "data: {\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"tool_use\",\"id\":\"call_b\",\"name\":\"run_command\",\"input\":{}}}\r\n\r\n"
    "event: content_block_delta\r\n"
    "data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"command\\\":\\\"make\\\"}\"}}\r\n\r\n"
    "event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":3}\r\n\r\n"
    "event: message_delta\r\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":45}}\r\n\r\n"
    "event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n";

static const char want_text[] = "Caf\xc3\xa9 time.";
static const char want_calls[] =
    "[{\"id\":\"call_a\",\"name\":\"read_file\",\"arguments\":{\"path\":\"a.c\"}},"
    "{\"id\":\"call_b\",\"name\":\"run_command\",\"arguments\":{\"command\":\"make\"}}]";

static void
collect_delta(void *arg, const char *text, size_t len)
{
	buf_add(arg, text, len);
}

/* Feed len bytes in pieces of chunk; 0 and the reply, or -1 and *err. */
static int
run(enum model_kind kind, const char *s, size_t len, size_t chunk,
    struct buf *deltas, struct model_stream **msp, struct model_reply **reply,
    enum model_error *err, char **cause)
{
	struct model_stream	*ms;
	size_t			 off, n;

	ms = model_stream_new(kind, collect_delta, deltas);
	*msp = ms;
	for (off = 0; off < len; off += n) {
		n = len - off < chunk ? len - off : chunk;
		if (model_stream_feed(ms, s + off, n, err, cause) != 0)
			return -1;
	}
	return model_stream_finish(ms, reply, err, cause);
}

static void
check_full(enum model_kind kind, const char *s, size_t len, long long in,
    const char *stop)
{
	struct model_stream	*ms;
	struct model_reply	*r;
	struct buf		 deltas = BUF_INIT;
	enum model_error	 err;
	char			*cause = NULL, *calls;
	size_t			 chunk;

	for (chunk = 1; chunk <= len; chunk++) {
		buf_reset(&deltas);
		assert_int_equal(run(kind, s, len, chunk, &deltas, &ms, &r,
		    &err, &cause), 0);
		assert_string_equal(r->text, want_text);
		assert_string_equal(buf_str(&deltas), want_text);
		calls = json_print(r->tool_calls);
		assert_string_equal(calls, want_calls);
		free(calls);
		assert_int_equal(r->input_tokens, in);
		assert_int_equal(r->output_tokens, 45);
		assert_string_equal(r->stop_reason, stop);
		model_stream_free(ms);
	}
	buf_release(&deltas);
}

static void
test_openai_every_chunk_size(void **state)
{
	check_full(MODEL_OPENAI, openai_stream, sizeof openai_stream - 1, 321,
	    "tool_calls");
}

static void
test_anthropic_every_chunk_size(void **state)
{
	check_full(MODEL_ANTHROPIC, anthropic_stream,
	    sizeof anthropic_stream - 1, 321, "tool_use");
}

/*
 * Every prefix of a stream: either a clear stream error, or (a compatible
 * server may stop after finish_reason) the whole reply. Never a reply
 * with part of the tool calls.
 */
static void
check_prefixes(enum model_kind kind, const char *s, size_t len)
{
	struct model_stream	*ms;
	struct model_reply	*r;
	struct buf		 deltas = BUF_INIT;
	enum model_error	 err;
	char			*cause, *calls;
	size_t			 cut;
	int			 ok = 0;

	for (cut = 0; cut < len; cut++) {
		cause = NULL;
		if (run(kind, s, cut, 7, &deltas, &ms, &r, &err, &cause) == 0) {
			calls = json_print(r->tool_calls);
			assert_string_equal(calls, want_calls);
			assert_string_equal(r->text, want_text);
			free(calls);
			ok++;
		} else {
			assert_int_equal(err, MODEL_ERR_STREAM);
			assert_non_null(strstr(cause, "malformed stream"));
			free(cause);
		}
		model_stream_free(ms);
	}
	/* Only prefixes ending between events after the finish may pass. */
	assert_true(ok < 400);
	buf_release(&deltas);
}

static void
test_openai_cut_anywhere(void **state)
{
	check_prefixes(MODEL_OPENAI, openai_stream, sizeof openai_stream - 1);
}

static void
test_anthropic_cut_anywhere(void **state)
{
	check_prefixes(MODEL_ANTHROPIC, anthropic_stream,
	    sizeof anthropic_stream - 1);
}

static void
expect_error(enum model_kind kind, const char *s, enum model_error want,
    const char *needle)
{
	struct model_stream	*ms;
	struct model_reply	*r;
	struct buf		 deltas = BUF_INIT;
	enum model_error	 err;
	char			*cause = NULL;

	assert_int_equal(run(kind, s, strlen(s), 5, &deltas, &ms, &r, &err,
	    &cause), -1);
	assert_int_equal(err, want);
	if (strstr(cause, needle) == NULL)
		fail_msg("'%s' not in '%s'", needle, cause);
	free(cause);
	model_stream_free(ms);
	buf_release(&deltas);
}

static void
test_broken_streams(void **state)
{
	expect_error(MODEL_OPENAI, "data: {\"choices\":[{\"index\":0,\"delta\":"
	    "{\"content\":\"a\"}}]}\n\ndata: {\"choices\": [\n\n",
	    MODEL_ERR_STREAM, "event 2 is not a JSON object");
	expect_error(MODEL_OPENAI, "data: {\"choices\":[{\"index\":0,\"delta\":"
	    "{\"tool_calls\":[{\"index\":0,\"id\":\"x\",\"function\":{\"name\":"
	    "\"f\",\"arguments\":\"{\\\"a\"}}]},\"finish_reason\":null}]}\n\n"
	    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
	    "\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
	    MODEL_ERR_STREAM, "arguments of tool call 'f' are not a JSON object");
	expect_error(MODEL_OPENAI, "data: {\"error\":{\"message\":\"boom\","
	    "\"type\":\"server_error\"}}\n\n", MODEL_ERR_SERVER, "boom");
	expect_error(MODEL_OPENAI, "", MODEL_ERR_STREAM, "without any event");
	expect_error(MODEL_OPENAI, "<html>oops</html>", MODEL_ERR_STREAM,
	    "not an event stream");
	expect_error(MODEL_ANTHROPIC, "event: content_block_delta\ndata: "
	    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
	    "\"text_delta\",\"text\":\"a\"}}\n\n", MODEL_ERR_STREAM,
	    "before message_start");
	expect_error(MODEL_ANTHROPIC, "event: message_start\ndata: {\"type\":"
	    "\"message_start\",\"message\":{}}\n\nevent: content_block_delta\n"
	    "data: {\"type\":\"content_block_delta\",\"index\":4,\"delta\":"
	    "{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n", MODEL_ERR_STREAM,
	    "content block 4, which was not started");
	expect_error(MODEL_ANTHROPIC, "event: message_start\ndata: {\"type\":"
	    "\"message_start\",\"message\":{}}\n\nevent: content_block_start\n"
	    "data: {\"type\":\"content_block_start\",\"index\":0,"
	    "\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":"
	    "\"write_file\",\"input\":{}}}\n\nevent: content_block_delta\n"
	    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
	    "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"pa\"}}"
	    "\n\nevent: message_delta\ndata: {\"type\":\"message_delta\","
	    "\"delta\":{\"stop_reason\":\"max_tokens\"}}\n\nevent: "
	    "message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	    MODEL_ERR_OTHER, "reached the output token limit (max_tokens) in "
	    "the middle of tool call 'write_file'");
	expect_error(MODEL_ANTHROPIC, "event: message_start\ndata: {\"type\":"
	    "\"message_start\",\"message\":{}}\n\nevent: error\ndata: {\"type\":"
	    "\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":"
	    "\"Overloaded\"}}\n\n", MODEL_ERR_SERVER, "overloaded_error");
}

static void
check_whole(enum model_kind kind, const char *body, const char *stop)
{
	struct model_stream	*ms;
	struct model_reply	*r;
	struct buf		 deltas = BUF_INIT;
	enum model_error	 err;
	char			*cause = NULL, *calls;

	assert_int_equal(run(kind, body, strlen(body), 3, &deltas, &ms, &r,
	    &err, &cause), 0);
	assert_string_equal(r->text, want_text);
	assert_string_equal(buf_str(&deltas), want_text);
	calls = json_print(r->tool_calls);
	assert_string_equal(calls, want_calls);
	free(calls);
	assert_int_equal(r->input_tokens, 321);
	assert_int_equal(r->output_tokens, 45);
	assert_string_equal(r->stop_reason, stop);
	model_stream_free(ms);
	buf_release(&deltas);
}

/* Servers that ignore "stream": true answer with one JSON object. */
static void
test_whole_replies(void **state)
{
	check_whole(MODEL_OPENAI, "{\"id\":\"x\",\"object\":"
	    "\"chat.completion\",\"choices\":[{\"index\":0,\"message\":"
	    "{\"role\":\"assistant\",\"content\":\"Caf\xc3\xa9 time.\","
	    "\"tool_calls\":[{\"id\":\"call_a\",\"type\":\"function\","
	    "\"function\":{\"name\":\"read_file\",\"arguments\":"
	    "\"{\\\"path\\\":\\\"a.c\\\"}\"}},{\"id\":\"call_b\","
	    "\"type\":\"function\",\"function\":{\"name\":\"run_command\","
	    "\"arguments\":\"{\\\"command\\\":\\\"make\\\"}\"}}]},"
	    "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":"
	    "321,\"completion_tokens\":45}}\n", "tool_calls");
	check_whole(MODEL_ANTHROPIC, "{\"id\":\"m\",\"type\":\"message\","
	    "\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
	    "\"text\":\"Caf\xc3\xa9 time.\"},{\"type\":\"tool_use\",\"id\":"
	    "\"call_a\",\"name\":\"read_file\",\"input\":{\"path\":"
	    "\"a.c\"}},{\"type\":\"tool_use\",\"id\":\"call_b\",\"name\":"
	    "\"run_command\",\"input\":{\"command\":\"make\"}}],"
	    "\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":321,"
	    "\"output_tokens\":45}}", "tool_use");
	expect_error(MODEL_OPENAI, "{\"error\":{\"message\":\"quota\","
	    "\"type\":\"insufficient_quota\"}}", MODEL_ERR_SERVER, "quota");
	expect_error(MODEL_ANTHROPIC, "{\"type\":\"error\",\"error\":"
	    "{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
	    MODEL_ERR_SERVER, "Overloaded");
	expect_error(MODEL_OPENAI, "{\"hello\":1}", MODEL_ERR_STREAM,
	    "not an event stream");
}

static void
test_openai_refusal(void **state)
{
	struct model_stream	*ms;
	struct model_reply	*r;
	struct buf		 deltas = BUF_INIT;
	enum model_error	 err;
	char			*cause = NULL;
	const char		*s = "data: {\"choices\":[{\"index\":0,"
	    "\"delta\":{\"refusal\":\"I can't\"}}]}\n\ndata: {\"choices\":"
	    "[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
	    "data: [DONE]\n\n";

	assert_int_equal(run(MODEL_OPENAI, s, strlen(s), 4, &deltas, &ms, &r,
	    &err, &cause), 0);
	assert_string_equal(r->text, "I can't");
	assert_string_equal(buf_str(&deltas), "I can't");
	model_stream_free(ms);
	buf_release(&deltas);
}

/* A server that sends a whole big tool call (3 MB of content) in one event. */
static void
test_big_event(void **state)
{
	struct model_stream	*ms;
	struct model_reply	*r;
	struct buf		 in = BUF_INIT, deltas = BUF_INIT;
	enum model_error	 err;
	char			*cause = NULL;
	const cJSON		*args;
	size_t			 i, n = 3U * 1024 * 1024;

	buf_adds(&in, "data: {\"choices\":[{\"index\":0,\"delta\":"
	    "{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":"
	    "{\"name\":\"write_file\",\"arguments\":\"{\\\"content\\\":"
	    "\\\"");
	for (i = 0; i < n; i++)
		buf_addc(&in, 'a' + i % 26);
	buf_adds(&in, "\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}"
	    "\n\ndata: [DONE]\n\n");
	assert_int_equal(run(MODEL_OPENAI, in.data, in.len, 65536, &deltas,
	    &ms, &r, &err, &cause), 0);
	args = cJSON_GetObjectItem(cJSON_GetArrayItem(r->tool_calls, 0),
	    "arguments");
	assert_int_equal(strlen(json_str(args, "content")), n);
	model_stream_free(ms);
	buf_release(&in);
	buf_release(&deltas);
}

/* Blocks the API runs itself (server_tool_use) are not tool calls. */
static void
test_anthropic_server_tools(void **state)
{
	struct model_stream	*ms;
	struct model_reply	*r;
	struct buf		 deltas = BUF_INIT;
	enum model_error	 err;
	char			*cause = NULL;
	const char		*s =
	    "event: message_start\ndata: {\"type\":\"message_start\","
	    "\"message\":{}}\n\n"
	    "event: content_block_start\ndata: {\"type\":\"content_block_start\","
	    "\"index\":0,\"content_block\":{\"type\":\"server_tool_use\","
	    "\"id\":\"s\",\"name\":\"web_search\",\"input\":{}}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
	    "\"index\":0,\"delta\":{\"type\":\"input_json_delta\","
	    "\"partial_json\":\"{\\\"query\\\": \\\"x\\\"}\"}}\n\n"
	    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\","
	    "\"index\":0}\n\n"
	    "event: content_block_start\ndata: {\"type\":\"content_block_start\","
	    "\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"
	    "\n\nevent: content_block_delta\ndata: {\"type\":"
	    "\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
	    "\"text_delta\",\"text\":\"found\"}}\n\n"
	    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":"
	    "{\"stop_reason\":\"end_turn\"}}\n\nevent: message_stop\ndata: "
	    "{\"type\":\"message_stop\"}\n\n";

	assert_int_equal(run(MODEL_ANTHROPIC, s, strlen(s), 9, &deltas, &ms,
	    &r, &err, &cause), 0);
	assert_string_equal(r->text, "found");
	assert_int_equal(cJSON_GetArraySize(r->tool_calls), 0);
	model_stream_free(ms);
	buf_release(&deltas);

	expect_error(MODEL_ANTHROPIC, "event: message_start\ndata: {\"type\":"
	    "\"message_start\",\"message\":{}}\n\nevent: content_block_start\n"
	    "data: {\"type\":\"content_block_start\",\"index\":0,"
	    "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
	    "\"index\":0,\"delta\":{\"type\":\"input_json_delta\","
	    "\"partial_json\":\"{\"}}\n\n", MODEL_ERR_STREAM,
	    "input_json_delta for a text block");
}

static void
test_price(void **state)
{
	config_set("price.openai:gpt-x", "2.00 8.00", NULL);
	assert_true(model_price("openai:gpt-x", 1000000, 0, 500000) == 6.0);
	assert_true(model_price("openai:unknown", 1000000, 0, 1000000) == 0);
}

static void
test_openai_body(void **state)
{
	cJSON	*msgs, *tools, *body;
	char	*s;

	msgs = cJSON_Parse("[{\"role\":\"system\",\"content\":\"sys\"},"
	    "{\"role\":\"user\",\"content\":\"hi\"},"
	    "{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":"
	    "\"c1\",\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}]},"
	    "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"name\":\"read_file\","
	    "\"content\":\"x\"}]");
	tools = cJSON_Parse("[{\"name\":\"read_file\",\"description\":\"d\","
	    "\"parameters\":{\"type\":\"object\"}}]");
	body = model_openai_body("gpt-x", msgs, tools);
	s = json_print(body);
	assert_string_equal(s, "{\"model\":\"gpt-x\",\"messages\":["
	    "{\"role\":\"system\",\"content\":\"sys\"},"
	    "{\"role\":\"user\",\"content\":\"hi\"},"
	    "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":"
	    "\"c1\",\"type\":\"function\",\"function\":{\"name\":\"read_file\","
	    "\"arguments\":\"{\\\"path\\\":\\\"a\\\"}\"}}]},"
	    "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"x\"}],"
	    "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":"
	    "\"read_file\",\"description\":\"d\",\"parameters\":{\"type\":"
	    "\"object\"}}}],\"stream\":true,\"stream_options\":"
	    "{\"include_usage\":true}}");
	free(s);
	cJSON_Delete(body);
	cJSON_Delete(msgs);
	cJSON_Delete(tools);
}

static void
test_anthropic_body(void **state)
{
	cJSON	*msgs, *body;
	char	*s;

	/* Two system prompts joined; two tool results and a user message
	 * become one user message; tool calls become tool_use blocks. */
	msgs = cJSON_Parse("[{\"role\":\"system\",\"content\":\"a\"},"
	    "{\"role\":\"system\",\"content\":\"b\"},"
	    "{\"role\":\"user\",\"content\":\"hi\"},"
	    "{\"role\":\"assistant\",\"content\":\"ok\",\"tool_calls\":["
	    "{\"id\":\"c1\",\"name\":\"f\",\"arguments\":{\"x\":1}},"
	    "{\"id\":\"c2\",\"name\":\"g\",\"arguments\":{}}]},"
	    "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"r1\"},"
	    "{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"r2\"},"
	    "{\"role\":\"user\",\"content\":\"more\"}]");
	body = model_anthropic_body("claude-x", msgs, NULL, 1024);
	s = json_print(body);
	assert_string_equal(s, "{\"model\":\"claude-x\",\"max_tokens\":1024,"
	    "\"system\":[{\"type\":\"text\",\"text\":\"a\\n\\nb\","
	    "\"cache_control\":{\"type\":\"ephemeral\"}}],\"messages\":["
	    "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]},"
	    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":"
	    "\"ok\"},{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"f\","
	    "\"input\":{\"x\":1}},{\"type\":\"tool_use\",\"id\":\"c2\",\"name\":"
	    "\"g\",\"input\":{}}]},"
	    "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
	    "\"tool_use_id\":\"c1\",\"content\":\"r1\"},{\"type\":"
	    "\"tool_result\",\"tool_use_id\":\"c2\",\"content\":\"r2\"},"
	    "{\"type\":\"text\",\"text\":\"more\",\"cache_control\":"
	    "{\"type\":\"ephemeral\"}}]}],\"stream\":true}");
	free(s);
	cJSON_Delete(body);
	cJSON_Delete(msgs);
}

static void
check_http(const char *prov, long status, const char *body,
    enum model_error want, const char *needle)
{
	enum model_error	 err;
	char			*msg;

	err = model_http_error(prov, status, body, "m-1", "http://h/x", &msg);
	assert_int_equal(err, want);
	if (strstr(msg, needle) == NULL)
		fail_msg("'%s' not in '%s'", needle, msg);
	free(msg);
}

static void
test_http_errors(void **state)
{
	check_http("openai", 401, "{\"error\":{\"message\":\"Incorrect API key "
	    "provided\",\"code\":\"invalid_api_key\"}}", MODEL_ERR_AUTH,
	    "the API key was refused (HTTP 401: Incorrect API key provided); "
	    "set OPENAI_API_KEY");
	check_http("anthropic", 403, "{\"type\":\"error\",\"error\":{\"type\":"
	    "\"permission_error\",\"message\":\"no\"}}", MODEL_ERR_AUTH,
	    "ANTHROPIC_API_KEY");
	check_http("openai", 404, "not json at all", MODEL_ERR_NOT_FOUND,
	    "model 'm-1' not found at http://h/x (HTTP 404: not json at all)");
	check_http("openai", 400, "{\"error\":{\"message\":\"This model's "
	    "maximum context length is 8 tokens\",\"code\":"
	    "\"context_length_exceeded\"}}", MODEL_ERR_CONTEXT,
	    "too long for model 'm-1'");
	check_http("anthropic", 400, "{\"type\":\"error\",\"error\":{\"type\":"
	    "\"invalid_request_error\",\"message\":\"prompt is too long: 9 "
	    "tokens > 8 maximum\"}}", MODEL_ERR_CONTEXT, "prompt is too long");
	check_http("openai", 429, "", MODEL_ERR_RATE, "rate limited");
	check_http("anthropic", 529, "{\"type\":\"error\",\"error\":{\"type\":"
	    "\"overloaded_error\",\"message\":\"Overloaded\"}}",
	    MODEL_ERR_SERVER, "HTTP 529: Overloaded");
	check_http("openai", 400, "{\"error\":{\"message\":\"bad\"}}",
	    MODEL_ERR_OTHER, "refused (HTTP 400: bad)");
}

static void
test_redact(void **state)
{
	const char	*key = "sk-proj-Zq81bT0xYw3LmN5vK7pR";
	char		*s;

	s = model_redact("key sk-proj-Zq81bT0xYw3LmN5vK7pR is bad", key);
	assert_string_equal(s, "key [redacted] is bad");
	free(s);
	/* Partial echoes of 6 or more characters go too. */
	s = model_redact("Incorrect API key provided: sk-proj-****N5vK7pR.", key);
	assert_null(strstr(s, "N5vK7pR"));
	free(s);
	s = model_redact("nothing secret", key);
	assert_string_equal(s, "nothing secret");
	free(s);
	s = model_redact("short k3y here", "k3y");
	assert_string_equal(s, "short [redacted] here");
	free(s);
}

static void
test_script_cursor(void **state)
{
	struct model_script	*sc;
	const cJSON		*t;
	cJSON			*hist;
	char			 path[] = "/tmp/holt-test-model-XXXXXX";
	char			*cause = NULL;
	const char		*doc = "{\"turns\":[{\"text\":\"A\"},{\"fail\":"
	    "{\"status\":429}},{\"text\":\"B\"},{\"broken\":\"truncate\"},"
	    "{\"text\":\"C\"},{\"text\":\"D\"}]}";
	int			 fd, no;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(file_write_all(fd, doc, strlen(doc)), 0);
	close(fd);

	/* A fresh conversation takes the turns in order. */
	sc = model_script_load(path, &cause);
	assert_non_null(sc);
	hist = cJSON_Parse("[{\"role\":\"user\",\"content\":\"x\"}]");
	t = model_script_next(sc, hist, &no, &cause);
	assert_string_equal(json_str(t, "text"), "A");
	assert_int_equal(no, 1);
	t = model_script_next(sc, hist, &no, &cause);
	assert_non_null(cJSON_GetObjectItem(t, "fail"));
	model_script_free(sc);
	cJSON_Delete(hist);

	/* A restarted process with two answers in its history resumes after
	 * the second answering turn (B), skipping failures. */
	sc = model_script_load(path, &cause);
	hist = cJSON_Parse("[{\"role\":\"user\",\"content\":\"x\"},"
	    "{\"role\":\"assistant\",\"content\":\"A\"},"
	    "{\"role\":\"user\",\"content\":\"y\"},"
	    "{\"role\":\"assistant\",\"content\":\"B\"}]");
	t = model_script_next(sc, hist, &no, &cause);
	assert_string_equal(json_str(t, "broken"), "truncate");
	assert_int_equal(no, 4);
	t = model_script_next(sc, hist, &no, &cause);
	assert_string_equal(json_str(t, "text"), "C");
	t = model_script_next(sc, hist, &no, &cause);
	assert_string_equal(json_str(t, "text"), "D");
	assert_null(model_script_next(sc, hist, &no, &cause));
	assert_non_null(strstr(cause, "no turn left"));
	free(cause);
	model_script_free(sc);
	cJSON_Delete(hist);
	unlink(path);
}

static void
test_script_expect(void **state)
{
	cJSON	*turn, *msgs, *tools;
	char	*why;

	turn = cJSON_Parse("{\"expect\":{\"last_tool_result_contains\":"
	    "\"FAILED\",\"last_user_message_contains\":\"fix\","
	    "\"tools_include\":[\"read_file\"]}}");
	msgs = cJSON_Parse("[{\"role\":\"user\",\"content\":\"please fix\"},"
	    "{\"role\":\"tool\",\"content\":\"TESTS FAILED\"}]");
	tools = cJSON_Parse("[{\"name\":\"read_file\"}]");
	assert_null(model_script_expect(turn, msgs, tools));
	cJSON_Delete(tools);
	tools = cJSON_Parse("[{\"name\":\"write_file\"}]");
	why = model_script_expect(turn, msgs, tools);
	assert_non_null(strstr(why, "tools_include 'read_file'"));
	free(why);
	cJSON_Delete(msgs);
	msgs = cJSON_Parse("[{\"role\":\"user\",\"content\":\"please fix\"},"
	    "{\"role\":\"tool\",\"content\":\"TESTS PASSED\"}]");
	why = model_script_expect(turn, msgs, tools);
	assert_non_null(strstr(why, "the last tool result is 'TESTS PASSED'"));
	free(why);
	cJSON_Delete(turn);
	cJSON_Delete(msgs);
	cJSON_Delete(tools);
}

int
main(void)
{
	char	 home[] = "/tmp/holt-test-model-home-XXXXXX";
	int	 rc;

	/* model_price reads holt.conf: never the user's. */
	if (mkdtemp(home) == NULL)
		return 1;
	setenv("HOLT_HOME", home, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_openai_every_chunk_size),
		cmocka_unit_test(test_anthropic_every_chunk_size),
		cmocka_unit_test(test_openai_cut_anywhere),
		cmocka_unit_test(test_anthropic_cut_anywhere),
		cmocka_unit_test(test_broken_streams),
		cmocka_unit_test(test_whole_replies),
		cmocka_unit_test(test_big_event),
		cmocka_unit_test(test_anthropic_server_tools),
		cmocka_unit_test(test_price),
		cmocka_unit_test(test_openai_refusal),
		cmocka_unit_test(test_openai_body),
		cmocka_unit_test(test_anthropic_body),
		cmocka_unit_test(test_http_errors),
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_script_cursor),
		cmocka_unit_test(test_script_expect),
	};

	rc = cmocka_run_group_tests(tests, NULL, NULL);
	file_rm_rf(home);
	return rc;
}
