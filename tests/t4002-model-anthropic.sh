#!/bin/sh
# The anthropic: provider through the real path against tests/mock-llm:
# the typed stream events at several chunk sizes, the Messages request body
# (system on top, tool_result blocks, merged roles), x-api-key.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-mock-llm.sh"

turn1='{"text":"Let me look at the parser, \u00fcn\u00efcode \u2713.","tool_calls":[{"name":"read_file","arguments":{"path":"src/parser.c","offset":10}},{"name":"run_command","arguments":{"command":"make test && echo \"done\""}}],"usage":{"input_tokens":1234,"output_tokens":56}}'

whole1=$(echo "$turn1" | sed 's/^{/{"whole":true,/')

cat >expect <<\EOF
text: Let me look at the parser, ünïcode ✓.
tool_calls: [{"id":"call_1_1","name":"read_file","arguments":{"path":"src/parser.c","offset":10}},{"id":"call_1_2","name":"run_command","arguments":{"command":"make test && echo \"done\""}}]
usage: 1234 56
stop: tool_use
EOF

for n in 0 1 3 7 64; do
	test_expect_success PYTHON "text and tool_use blocks assembled, chunk_bytes $n" "
		printf '{\"chunk_bytes\": $n, \"turns\": [%s]}' '$turn1' >s.json &&
		start_mock s.json &&
		\$TEST_MODEL -b \$MOCK_URL anthropic:claude-test >actual &&
		stop_mock &&
		test_cmp expect actual
	"
done

test_expect_success PYTHON 'a conversation in the Messages format' '
	write_script s.json "$turn1" \
		"{\"expect\":{\"last_tool_result_contains\":\"result of run_command\",\"tools_include\":\"run_command\"},\"text\":\"Fixed.\"}" &&
	start_mock s.json --log req.log &&
	$TEST_MODEL -n 2 -b "$MOCK_URL/" anthropic:claude-test >actual &&
	stop_mock &&
	sed -n "/^\[2\]/,\$p" actual >second &&
	cat >expect2 <<-\EOF &&
	[2]
	text: Fixed.
	tool_calls: []
	usage: 100 20
	stop: end_turn
	EOF
	test_cmp expect2 second &&
	python3 - <<-\EOF
	import json
	reqs = [json.loads(l) for l in open("req.log")]
	r = reqs[0]
	assert r["model"] == "claude-test" and r["stream"] is True
	assert r["max_tokens"] == 8192, r
	eph = {"type": "ephemeral"}
	assert r["system"] == [{"type": "text", "text": "You are a test.", "cache_control": eph}]
	assert r["messages"] == [{"role": "user", "content": [{"type": "text",
	    "text": "Hello", "cache_control": eph}]}]
	assert r["tools"][0]["name"] == "read_file"
	assert r["tools"][0]["input_schema"]["required"] == ["path"]
	m = reqs[1]["messages"]
	assert [x["role"] for x in m] == ["user", "assistant", "user"], m
	assert m[1]["content"][1] == {"type": "tool_use", "id": "call_1_1",
	    "name": "read_file", "input": {"path": "src/parser.c", "offset": 10}}
	assert [b["type"] for b in m[2]["content"]] == ["tool_result", "tool_result"]
	assert m[2]["content"][1]["tool_use_id"] == "call_1_2"
	assert m[2]["content"][1]["cache_control"] == eph
	assert "cache_control" not in m[2]["content"][0]
	assert "cache_control" not in m[0]["content"][0]
	EOF
'

test_expect_success PYTHON 'the key goes as x-api-key' '
	write_script s.json "{\"text\":\"ok\"}" &&
	start_mock s.json --require-key sk-ant-test-99c0ffee &&
	ANTHROPIC_API_KEY=sk-ant-test-99c0ffee $TEST_MODEL -b "$MOCK_URL" anthropic:c >actual &&
	stop_mock &&
	grep "^text: ok$" actual
'

test_expect_success PYTHON 'max_tokens follows a max_tokens setting' '
	write_script s.json "{\"text\":\"ok\"}" &&
	start_mock s.json --log req3.log &&
	$TEST_MODEL -C max_tokens=512 -b "$MOCK_URL" anthropic:c >actual &&
	stop_mock &&
	grep "\"max_tokens\":512" req3.log
'

test_expect_success PYTHON 'a server that ignores stream: true is understood' '
	write_script s.json "$whole1" &&
	start_mock s.json &&
	$TEST_MODEL -b "$MOCK_URL" anthropic:claude-test >actual &&
	stop_mock &&
	test_cmp expect actual
'

test_expect_success 'the default endpoint needs a key' '
	test_expect_code 2 $TEST_MODEL anthropic:claude-test >actual &&
	grep "anthropic: no API key; set ANTHROPIC_API_KEY or anthropic_api_key in holt.conf" actual
'

test_done
