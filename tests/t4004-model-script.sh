#!/bin/sh
# The script: provider: the same script gives the same conversation as the
# openai and anthropic providers against tests/mock-llm; fail, expect,
# delay_ms and broken turns; turn selection that survives a restart.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-mock-llm.sh"

HOLT_MODEL_BACKOFF_MS=20
export HOLT_MODEL_BACKOFF_MS

cat >conv.json <<\EOF
{ "chunk_bytes": 5, "turns": [
  { "expect": { "last_user_message_contains": "Hello", "tools_include": ["read_file"] },
    "text": "Let me read it.",
    "tool_calls": [ { "name": "read_file", "arguments": { "path": "src/p.c" } },
                    { "name": "run_command", "arguments": { "command": "make check" } } ],
    "usage": { "input_tokens": 500, "output_tokens": 40 } },
  { "fail": { "status": 503 } },
  { "expect": { "last_tool_result_contains": "result of run_command" },
    "text": "", "tool_calls": [ { "name": "run_command", "arguments": { "command": "ls" } } ] },
  { "text": "All done: caf\u00e9." } ] }
EOF

test_expect_success PYTHON 'script:, openai: and anthropic: agree on one script' '
	$TEST_MODEL -n 3 script:conv.json >script.out &&
	start_mock conv.json &&
	$TEST_MODEL -n 3 -b "$MOCK_URL/v1" openai:m >openai.out &&
	stop_mock &&
	start_mock conv.json &&
	$TEST_MODEL -n 3 -b "$MOCK_URL" anthropic:m >anthropic.out &&
	stop_mock &&
	grep "^text: All done: café.$" script.out &&
	grep -c "^retry: script: server error (HTTP 503: scripted failure (turn 2))" script.out &&
	for f in script openai anthropic; do
		grep -v -e "^stop:" -e "^retry:" $f.out >$f.cmp || return 1
	done &&
	test_cmp script.cmp openai.cmp &&
	test_cmp script.cmp anthropic.cmp &&
	grep "^usage: 500 40$" script.cmp
'

test_expect_success 'the model may be freed from its last callback' '
	$TEST_MODEL -f -n 3 script:conv.json >freed.out &&
	grep -v "^retry:" freed.out >freed.cmp &&
	grep -v "^retry:" script.out >script.cmp2 &&
	test_cmp script.cmp2 freed.cmp &&
	test_expect_code 5 $TEST_MODEL -f -n 4 script:conv.json >freed.out &&
	grep "^error: script: .*no turn left" freed.out
'

test_expect_success PYTHON 'an empty reply goes back as a message the APIs accept' '
	write_script empty.json "{\"text\":\"\"}" "{\"expect\":{\"last_user_message_contains\":\"go on\"},\"text\":\"ok\"}" &&
	start_mock empty.json &&
	$TEST_MODEL -n 2 -b "$MOCK_URL/v1" openai:m >e1 &&
	stop_mock &&
	start_mock empty.json &&
	$TEST_MODEL -n 2 -b "$MOCK_URL" anthropic:m >e2 &&
	stop_mock &&
	$TEST_MODEL -n 2 script:empty.json >e3 &&
	grep "^text: ok$" e1 && grep "^text: ok$" e2 && grep "^text: ok$" e3
'

test_expect_success 'script: stop reasons' '
	grep "^stop:" script.out >stops &&
	printf "stop: tool_use\nstop: tool_use\nstop: end_turn\n" >expect &&
	test_cmp expect stops
'

test_expect_success 'script: 429 waits retry_after_s' '
	write_script s.json "{\"fail\":{\"status\":429,\"retry_after_s\":1}}" "{\"text\":\"ok\"}" &&
	$TEST_MODEL script:s.json >actual 2>err &&
	grep "^retry: script: rate limited (HTTP 429: scripted failure (turn 1)) (wait 1000 ms)$" actual &&
	grep "^text: ok$" actual &&
	ms=$(sed -n "s/^elapsed_ms: //p" err) &&
	test $ms -ge 900
'

test_expect_success 'script: a non-retried fail is the error the provider would give' '
	write_script s.json "{\"fail\":{\"status\":401}}" &&
	test_expect_code 5 $TEST_MODEL script:s.json >actual &&
	grep "^error: auth: script: the API key was refused (HTTP 401: scripted failure (turn 1))$" actual &&
	write_script s.json "{\"fail\":{\"status\":400,\"kind\":\"context_length\"}}" &&
	test_expect_code 5 $TEST_MODEL script:s.json >actual &&
	grep "^error: context: " actual
'

test_expect_success 'script: an unmet expect names the script, the turn and why' '
	write_script s.json "{\"expect\":{\"last_tool_result_contains\":\"TESTS FAILED\"},\"text\":\"x\"}" &&
	test_expect_code 5 $TEST_MODEL script:s.json >actual &&
	grep "^error: script: script .s.json.: turn 1: expect last_tool_result_contains .TESTS FAILED.: the request has no last tool result$" actual
'

test_expect_success 'script: no turn left' '
	write_script s.json "{\"text\":\"one\"}" &&
	test_expect_code 5 $TEST_MODEL -n 2 script:s.json >actual &&
	grep "^text: one$" actual &&
	grep "^error: script: script .s.json.: no turn left for this request (the script has 1 turns)$" actual
'

test_expect_success 'script: delay_ms is honoured' '
	write_script s.json "{\"delay_ms\":600,\"text\":\"slow\"}" &&
	$TEST_MODEL script:s.json >actual 2>err &&
	grep "^text: slow$" actual &&
	ms=$(sed -n "s/^elapsed_ms: //p" err) &&
	test $ms -ge 550
'

test_expect_success 'script: a broken turn is a stream error' '
	write_script s.json "{\"broken\":\"cut_mid_tool_call\",\"text\":\"abcdef\",\"tool_calls\":[{\"name\":\"f\"}]}" &&
	test_expect_code 5 $TEST_MODEL script:s.json >actual &&
	grep "^error: stream: script: malformed stream: turn 1 is broken (cut_mid_tool_call)$" actual
'

test_expect_success 'script: cancel from the delta callback' '
	$TEST_MODEL -x 1 script:conv.json >actual &&
	echo "cancelled after 1 deltas" >expect &&
	test_cmp expect actual
'

cat >history.json <<\EOF
[ {"role":"system","content":"s"},
  {"role":"user","content":"Hello"},
  {"role":"assistant","content":"Let me read it.","tool_calls":[
    {"id":"call_1_1","name":"read_file","arguments":{"path":"src/p.c"}},
    {"id":"call_1_2","name":"run_command","arguments":{"command":"make check"}}]},
  {"role":"tool","tool_call_id":"call_1_1","name":"read_file","content":"result of read_file"},
  {"role":"tool","tool_call_id":"call_1_2","name":"run_command","content":"result of run_command"} ]
EOF

test_expect_success 'script: a restarted process resumes after its answered turns' '
	$TEST_MODEL -n 2 -m history.json script:conv.json >actual &&
	grep "^retry: script: server error (HTTP 503" actual &&
	grep "^tool_calls: \[{\"id\":\"call_3_1\",\"name\":\"run_command\",\"arguments\":{\"command\":\"ls\"}}\]$" actual &&
	grep "^text: All done: café.$" actual
'

test_expect_success PYTHON 'mock-llm --by-history resumes the same way' '
	start_mock conv.json --by-history &&
	$TEST_MODEL -n 2 -m history.json -b "$MOCK_URL/v1" openai:m >mock.out &&
	stop_mock &&
	grep -v -e "^stop:" -e "^retry:" actual >a.cmp &&
	grep -v -e "^stop:" -e "^retry:" mock.out >b.cmp &&
	test_cmp a.cmp b.cmp
'

test_expect_success 'script: chunk_delay_ms spreads the stream over time' '
	write_script s.json "{\"text\":\"abcdefghij\",\"chunk_bytes\":2,\"chunk_delay_ms\":100}" &&
	$TEST_MODEL script:s.json >actual 2>err &&
	grep "^text: abcdefghij$" actual &&
	ms=$(sed -n "s/^elapsed_ms: //p" err) &&
	test $ms -ge 380 && test $ms -lt 2000
'

test_expect_success PYTHON 'mock-llm: chunk_delay_ms spreads the stream over time' '
	write_script s.json "{\"text\":\"abcdefghij\",\"chunk_delay_ms\":100}" &&
	start_mock s.json &&
	$TEST_MODEL -b "$MOCK_URL/v1" openai:m >actual 2>err &&
	stop_mock &&
	grep "^text: abcdefghij$" actual &&
	ms=$(sed -n "s/^elapsed_ms: //p" err) &&
	test $ms -ge 380 && test $ms -lt 3000
'

test_expect_success 'script: a bad script file is refused at once' '
	test_expect_code 2 $TEST_MODEL script:missing.json >actual &&
	grep "^model_new: script .missing.json.: missing.json: No such file or directory$" actual &&
	echo "{\"turns\": 3}" >bad.json &&
	test_expect_code 2 $TEST_MODEL script:bad.json >actual &&
	grep "script .bad.json.: no \"turns\" array" actual &&
	echo "{\"turns\": [{\"fail\": {}}]}" >bad.json &&
	test_expect_code 2 $TEST_MODEL script:bad.json >actual &&
	grep "script .bad.json.: turn 1: fail needs a status" actual
'

test_done
