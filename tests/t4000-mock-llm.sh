#!/bin/sh
# tests/mock-llm itself, spoken to with curl: both wire formats, the
# script's expect/fail/delay, request checks, --log, --require-key and the
# idle exit.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-mock-llm.sh"

openai_req='{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}'
anthropic_req='{"model":"m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}'

post() {
	curl -sS -N -o "$2" -w '%{http_code}\n' -H 'content-type: application/json' \
		-H 'anthropic-version: 2023-06-01' --data "$3" "$MOCK_URL$1"
}

test_expect_success PYTHON 'openai stream: chunks, tool call pieces, usage, [DONE]' '
	write_script s.json "{\"text\":\"Hello there\",\"tool_calls\":[{\"name\":\"read_file\",\"arguments\":{\"path\":\"src/parser.c\"}}],\"usage\":{\"input_tokens\":7,\"output_tokens\":9}}" &&
	start_mock s.json &&
	post /v1/chat/completions out "$openai_req" >code &&
	stop_mock &&
	echo 200 >expect && test_cmp expect code &&
	tail -n 2 out >last && printf "data: [DONE]\n\n" >expect && test_cmp expect last &&
	grep "\"content\": \"Hello th\"" out &&
	grep "\"id\": \"call_1_1\", \"type\": \"function\", \"function\": {\"name\": \"read_file\", \"arguments\": \"\"}" out &&
	test $(grep -c "\"arguments\": \"" out) -gt 3 &&
	grep "\"finish_reason\": \"tool_calls\"" out &&
	grep "\"usage\": {\"prompt_tokens\": 7, \"completion_tokens\": 9" out
'

test_expect_success PYTHON 'anthropic stream: the typed events in order' '
	write_script s.json "{\"text\":\"Hi\",\"tool_calls\":[{\"name\":\"run_command\",\"arguments\":{\"command\":\"make test\"}}]}" &&
	start_mock s.json &&
	post /v1/messages out "$anthropic_req" >code &&
	stop_mock &&
	echo 200 >expect && test_cmp expect code &&
	sed -n "s/^event: //p" out | uniq >events &&
	cat >expect <<-\EOF &&
	message_start
	ping
	content_block_start
	content_block_delta
	content_block_stop
	content_block_start
	content_block_delta
	content_block_stop
	message_delta
	message_stop
	EOF
	test_cmp expect events &&
	grep "\"type\": \"tool_use\", \"id\": \"call_1_1\", \"name\": \"run_command\"" out &&
	grep "\"type\": \"input_json_delta\", \"partial_json\": \"\"" out &&
	grep "\"stop_reason\": \"tool_use\"" out
'

test_expect_success PYTHON 'an unmet expect is a 400 naming the reason' '
	write_script s.json "{\"expect\":{\"last_user_message_contains\":\"please\"},\"text\":\"x\"}" &&
	start_mock s.json &&
	post /v1/chat/completions out "$openai_req" >code &&
	stop_mock &&
	echo 400 >expect && test_cmp expect code &&
	grep "expect last_user_message_contains .please.: the last user message is .hi." out
'

test_expect_success PYTHON 'fail answers with the status and Retry-After; the next request goes on' '
	write_script s.json "{\"fail\":{\"status\":429,\"retry_after_s\":3}}" "{\"text\":\"ok\"}" &&
	start_mock s.json &&
	curl -sS -D headers -o out -H "content-type: application/json" \
		--data "$anthropic_req" -H "anthropic-version: 2023-06-01" "$MOCK_URL/v1/messages" &&
	post /v1/messages out2 "$anthropic_req" >code &&
	stop_mock &&
	grep "^HTTP/1.1 429" headers &&
	grep -i "^retry-after: 3" headers &&
	grep "rate_limit_error" out &&
	echo 200 >expect && test_cmp expect code
'

test_expect_success PYTHON 'requests are checked like the real APIs' '
	write_script s.json "{\"text\":\"a\"}" "{\"text\":\"b\"}" "{\"text\":\"c\"}" &&
	start_mock s.json &&
	post /v1/messages o1 "{\"model\":\"m\",\"max_tokens\":9,\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":\"b\"}]}" >c1 &&
	post /v1/messages o2 "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}" >c2 &&
	post /v1/chat/completions o3 "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"tool\",\"tool_call_id\":\"x\",\"content\":\"r\"}]}" >c3 &&
	stop_mock &&
	grep 400 c1 && grep "roles must alternate" o1 &&
	grep 400 c2 && grep "max_tokens" o2 &&
	grep 400 c3 && grep "does not answer a preceding tool_calls" o3
'

test_expect_success PYTHON '--log keeps every request body, --require-key wants the key' '
	write_script s.json "{\"text\":\"a\"}" "{\"text\":\"b\"}" &&
	start_mock s.json --log req.log --require-key k-123 &&
	post /v1/chat/completions o1 "$openai_req" >c1 &&
	curl -sS -o o2 -w "%{http_code}\n" -H "Authorization: Bearer k-123" \
		--data "$openai_req" "$MOCK_URL/v1/chat/completions" >c2 &&
	stop_mock &&
	grep 401 c1 && grep invalid_api_key o1 &&
	grep 200 c2 &&
	test $(wc -l <req.log) = 2 &&
	python3 -c "import json,sys; [json.loads(l) for l in open(\"req.log\")]"
'

test_expect_success PYTHON 'no turn left is a 400' '
	write_script s.json "{\"text\":\"a\"}" &&
	start_mock s.json &&
	post /v1/chat/completions o1 "$openai_req" >c1 &&
	post /v1/chat/completions o2 "$openai_req" >c2 &&
	stop_mock &&
	grep 200 c1 && grep 400 c2 && grep "no turn left" o2
'

test_expect_success PYTHON 'the mock exits by itself when idle' '
	write_script s.json "{\"text\":\"a\"}" &&
	{ "$TEST_DIRECTORY/mock-llm" --script s.json --idle-exit 1 >port 2>err & } &&
	pid=$! &&
	test_wait_for 50 "test -s port" &&
	test_wait_for 40 "! kill -0 $pid" &&
	grep "no request for 1 s" err
'

test_done
