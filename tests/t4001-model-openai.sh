#!/bin/sh
# The openai: provider through the real path (libcurl multi in a libevent
# loop) against tests/mock-llm: stream assembly at several chunk sizes, the
# request body, keys, a two-request conversation.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-mock-llm.sh"

turn1='{"text":"Let me look at the parser, \u00fcn\u00efcode \u2713.","tool_calls":[{"name":"read_file","arguments":{"path":"src/parser.c","offset":10}},{"name":"run_command","arguments":{"command":"make test && echo \"done\""}}],"usage":{"input_tokens":1234,"output_tokens":56}}'

whole1=$(echo "$turn1" | sed 's/^{/{"whole":true,/')

cat >expect <<\EOF
text: Let me look at the parser, ünïcode ✓.
tool_calls: [{"id":"call_1_1","name":"read_file","arguments":{"path":"src/parser.c","offset":10}},{"id":"call_1_2","name":"run_command","arguments":{"command":"make test && echo \"done\""}}]
usage: 1234 56
stop: tool_calls
EOF

for n in 0 1 3 7 64; do
	test_expect_success PYTHON "text and tool calls assembled, chunk_bytes $n" "
		printf '{\"chunk_bytes\": $n, \"turns\": [%s]}' '$turn1' >s.json &&
		start_mock s.json &&
		\$TEST_MODEL -b \$MOCK_URL/v1 openai:gpt-test >actual &&
		stop_mock &&
		test_cmp expect actual
	"
done

test_expect_success PYTHON 'the request body is Chat Completions streaming with tools' '
	write_script s.json "{\"text\":\"ok\"}" &&
	start_mock s.json --log req.log &&
	$TEST_MODEL -b "$MOCK_URL/v1/" openai:gpt-test >actual &&
	stop_mock &&
	python3 - <<-\EOF
	import json
	r = json.loads(open("req.log").readline())
	assert r["model"] == "gpt-test", r
	assert r["stream"] is True and r["stream_options"] == {"include_usage": True}
	assert r["messages"][0] == {"role": "system", "content": "You are a test."}
	t = r["tools"][0]
	assert t["type"] == "function" and t["function"]["name"] == "read_file"
	assert t["function"]["parameters"]["required"] == ["path"]
	EOF
'

test_expect_success PYTHON 'a conversation: tool results go back, expect holds' '
	write_script s.json "$turn1" \
		"{\"expect\":{\"last_tool_result_contains\":\"result of run_command\",\"tools_include\":[\"read_file\",\"run_command\"]},\"text\":\"Fixed.\"}" &&
	start_mock s.json --log req2.log &&
	$TEST_MODEL -n 2 -b "$MOCK_URL/v1" openai:gpt-test >actual &&
	stop_mock &&
	sed -n "/^\[2\]/,\$p" actual >second &&
	cat >expect2 <<-\EOF &&
	[2]
	text: Fixed.
	tool_calls: []
	usage: 100 20
	stop: stop
	EOF
	test_cmp expect2 second &&
	python3 - <<-\EOF
	import json
	r = [json.loads(l) for l in open("req2.log")][1]
	m = r["messages"]
	assert m[2]["role"] == "assistant" and m[2]["content"].startswith("Let me")
	assert m[2]["tool_calls"][1]["function"]["arguments"] == \
	    json.dumps({"command": "make test && echo \"done\""}, separators=(",", ":"))
	assert m[3] == {"role": "tool", "tool_call_id": "call_1_1", "content": "result of read_file"}
	assert m[4]["tool_call_id"] == "call_1_2"
	EOF
'

test_expect_success PYTHON 'the key goes as a bearer token' '
	write_script s.json "{\"text\":\"ok\"}" &&
	start_mock s.json --require-key sk-test-4b1d1e8a77 &&
	OPENAI_API_KEY=sk-test-4b1d1e8a77 $TEST_MODEL -b "$MOCK_URL/v1" openai:gpt-test >actual &&
	stop_mock &&
	grep "^text: ok$" actual
'

test_expect_success PYTHON 'a server that ignores stream: true is understood' '
	write_script s.json "$whole1" &&
	start_mock s.json &&
	$TEST_MODEL -b "$MOCK_URL/v1" openai:gpt-test >actual &&
	stop_mock &&
	test_cmp expect actual
'

test_expect_success PYTHON 'a server that refuses stream_options is asked again without' '
	write_script s.json "{\"text\":\"one\"}" "{\"text\":\"two\"}" &&
	start_mock s.json --reject-stream-options --log so.log &&
	$TEST_MODEL -n 2 -b "$MOCK_URL/v1" openai:m >actual &&
	stop_mock &&
	grep "^text: one$" actual && grep "^text: two$" actual &&
	! grep "^retry:" actual &&
	test $(grep -c stream_options so.log) = 1 &&
	test $(wc -l <so.log) = 3
'

test_expect_success 'the default endpoint needs a key' '
	test_expect_code 2 $TEST_MODEL openai:gpt-test >actual &&
	grep "openai: no API key; set OPENAI_API_KEY or openai_api_key in holt.conf" actual
'

test_expect_success 'bad model specs are refused clearly' '
	test_expect_code 2 $TEST_MODEL gpt-4 >a1 &&
	grep "model .gpt-4.: give it as PROVIDER:NAME" a1 &&
	test_expect_code 2 $TEST_MODEL openai: >a2 &&
	grep "no model name after .openai:." a2 &&
	test_expect_code 2 $TEST_MODEL gemini:x >a3 &&
	grep "unknown provider .gemini." a3 &&
	test_expect_code 2 $TEST_MODEL -b ftp://x openai:m >a4 &&
	grep "base URL .ftp://x.: not an http:// or https:// URL" a4
'

test_done
