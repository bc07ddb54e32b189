#!/bin/sh
# Model errors through the real path against tests/mock-llm: retries with
# Retry-After and backoff, plain errors for keys, models and context
# length, broken streams, timeouts, cancel; the key never shows.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-mock-llm.sh"

HOLT_MODEL_BACKOFF_MS=20
export HOLT_MODEL_BACKOFF_MS

# url FORMAT: the base URL of the mock for that provider
url() {
	if [ "$1" = openai ]; then echo "$MOCK_URL/v1"; else echo "$MOCK_URL"; fi
}

for p in openai anthropic; do

test_expect_success PYTHON "$p: 429 waits Retry-After, then succeeds" "
	write_script s.json '{\"fail\":{\"status\":429,\"retry_after_s\":1}}' '{\"text\":\"ok\"}' &&
	start_mock s.json &&
	\$TEST_MODEL -b \$(url $p) $p:m >actual 2>err &&
	stop_mock &&
	grep '^retry: $p: rate limited (HTTP 429: .*) (wait 1000 ms)$' actual &&
	grep '^text: ok$' actual &&
	ms=\$(sed -n 's/^elapsed_ms: //p' err) &&
	test \$ms -ge 900 && test \$ms -lt 5000
"

test_expect_success PYTHON "$p: 500 and 503 are retried with backoff" "
	write_script s.json '{\"fail\":{\"status\":500}}' '{\"fail\":{\"status\":503}}' '{\"text\":\"ok\"}' &&
	start_mock s.json &&
	\$TEST_MODEL -b \$(url $p) $p:m >actual &&
	stop_mock &&
	test \$(grep -c '^retry: $p: server error (HTTP 50[03]' actual) = 2 &&
	grep '^text: ok$' actual
"

test_expect_success PYTHON "$p: gives up after the last try" "
	write_script s.json '{\"fail\":{\"status\":500}}' '{\"fail\":{\"status\":502}}' '{\"fail\":{\"status\":529}}' '{\"text\":\"never\"}' &&
	start_mock s.json &&
	HOLT_MODEL_TRIES=3 test_expect_code 5 \$TEST_MODEL -b \$(url $p) $p:m >actual &&
	stop_mock &&
	grep '^error: server: $p: server error (HTTP 529: .*); gave up after 3 tries$' actual &&
	! grep never actual
"

test_expect_success PYTHON "$p: a refused key is a plain error that never shows the key" "
	write_script s.json '{\"text\":\"never\"}' &&
	start_mock s.json --require-key right-key-0000 &&
	key=sk-wrong-key-abcdef0123456789 &&
	OPENAI_API_KEY=\$key ANTHROPIC_API_KEY=\$key test_expect_code 5 \\
		\$TEST_MODEL -v -b \$(url $p) $p:m >actual 2>&1 &&
	stop_mock &&
	grep '^error: auth: $p: the API key was refused (HTTP 401: .*); set [A-Z]*_API_KEY or [a-z]*_api_key in holt.conf$' actual &&
	grep 'model: $p:m: try 1: HTTP 401' actual &&
	! grep -e \"\$key\" -e sk-wrong -e abcdef0123 actual mock.err
"

test_expect_success PYTHON "$p: an unknown model names model and URL" "
	write_script s.json '{\"fail\":{\"status\":404}}' &&
	start_mock s.json &&
	test_expect_code 5 \$TEST_MODEL -b \$(url $p) $p:nope-1 >actual &&
	stop_mock &&
	grep \"^error: not_found: $p: model 'nope-1' not found at \$MOCK_URL/.* (HTTP 404: .*nope-1.*)\" actual
"

test_expect_success PYTHON "$p: context length exceeded is recognised" "
	write_script s.json '{\"fail\":{\"status\":400,\"kind\":\"context_length\"}}' &&
	start_mock s.json &&
	test_expect_code 5 \$TEST_MODEL -b \$(url $p) $p:m >actual &&
	stop_mock &&
	grep \"^error: context: $p: the conversation is too long for model 'm' (HTTP 400: \" actual
"

test_expect_success PYTHON "$p: an unmet expect fails loudly with the reason" "
	write_script s.json '{\"expect\":{\"last_tool_result_contains\":\"TESTS FAILED\"},\"text\":\"x\"}' &&
	start_mock s.json &&
	test_expect_code 5 \$TEST_MODEL -b \$(url $p) $p:m >actual &&
	stop_mock &&
	grep \"^error: other: $p: the request was refused (HTTP 400: mock-llm: turn 1: expect last_tool_result_contains 'TESTS FAILED': the request has no last tool result)\" actual
"

for b in truncate invalid_json cut_mid_tool_call; do
test_expect_success PYTHON "$p: broken stream ($b): a clear stream error, nothing half-applied" "
	write_script s.json '{\"broken\":\"$b\",\"text\":\"partial answer here\",\"tool_calls\":[{\"name\":\"write_file\",\"arguments\":{\"path\":\"a.txt\",\"content\":\"0123456789abcdef\"}}]}' &&
	start_mock s.json &&
	test_expect_code 5 \$TEST_MODEL -b \$(url $p) $p:m >actual &&
	stop_mock &&
	grep '^error: stream: $p: malformed stream: ' actual &&
	! grep -e '^tool_calls:' -e '^retry:' actual
"
done

test_expect_success PYTHON "$p: an error event before any of the reply is retried" "
	write_script s.json '{\"broken\":\"error_event\"}' '{\"text\":\"ok\"}' &&
	start_mock s.json &&
	\$TEST_MODEL -b \$(url $p) $p:m >actual &&
	stop_mock &&
	grep '^retry: $p: the server reported an error in the stream' actual &&
	grep '^text: ok$' actual
"

test_expect_success PYTHON "$p: an error event in the stream" "
	write_script s.json '{\"broken\":\"error_event\",\"text\":\"partial answer here\"}' &&
	start_mock s.json &&
	test_expect_code 5 \$TEST_MODEL -b \$(url $p) $p:m >actual &&
	stop_mock &&
	grep '^error: server: $p: the server reported an error in the stream' actual
"

test_expect_success PYTHON "$p: cancel after the first delta: no callback after" "
	write_script s.json '{\"text\":\"a long answer in many pieces\",\"tool_calls\":[{\"name\":\"f\",\"arguments\":{}}]}' &&
	start_mock s.json &&
	\$TEST_MODEL -x 1 -b \$(url $p) $p:m >actual &&
	stop_mock &&
	echo 'cancelled after 1 deltas' >expect &&
	test_cmp expect actual
"

done

test_expect_success PYTHON 'a Retry-After beyond two minutes is reported, not waited for' '
	write_script s.json "{\"fail\":{\"status\":429,\"retry_after_s\":3600}}" "{\"text\":\"never\"}" &&
	start_mock s.json &&
	test_expect_code 5 $TEST_MODEL -b "$MOCK_URL/v1" openai:m >actual &&
	stop_mock &&
	grep "^error: rate: openai: rate limited (HTTP 429: .*); the server asks to wait 3600 s before trying again$" actual &&
	! grep -e "^retry:" -e never actual
'

test_expect_success PYTHON 'idle_timeout: a stream that goes quiet times out' '
	write_script s.json "{\"delay_ms\":3000,\"text\":\"late\"}" &&
	start_mock s.json &&
	test_expect_code 5 $TEST_MODEL -C idle_timeout=0.5 -b "$MOCK_URL/v1" openai:m >actual 2>err &&
	stop_mock &&
	grep "^error: timeout: openai: no data from $MOCK_URL/v1/chat/completions for 0.5 s (idle_timeout)$" actual &&
	ms=$(sed -n "s/^elapsed_ms: //p" err) &&
	test $ms -ge 400 && test $ms -lt 2500
'

test_expect_success PYTHON 'request_timeout bounds the whole request' '
	write_script s.json "{\"delay_ms\":3000,\"text\":\"late\"}" &&
	start_mock s.json &&
	test_expect_code 5 $TEST_MODEL -C request_timeout=1 -C idle_timeout=0 -b "$MOCK_URL" anthropic:m >actual 2>err &&
	stop_mock &&
	grep "^error: timeout: anthropic: no complete reply from $MOCK_URL/v1/messages within 1 s (request_timeout)$" actual
'

test_expect_success PYTHON 'a server that is not there: retried, then a network error' '
	write_script s.json "{\"text\":\"x\"}" &&
	start_mock s.json &&
	stop_mock &&
	HOLT_MODEL_TRIES=2 test_expect_code 5 $TEST_MODEL -b "$MOCK_URL/v1" openai:m >actual &&
	grep "^retry: openai: cannot reach $MOCK_URL/v1/chat/completions: " actual &&
	grep "^error: network: openai: cannot reach $MOCK_URL/v1/chat/completions: .*; gave up after 2 tries$" actual
'

test_expect_success PYTHON 'a redirect is not followed; the error says where it points' '
	write_script s.json "{\"fail\":{\"status\":308,\"headers\":{\"Location\":\"https://elsewhere.example/v1/chat/completions\"}}}" &&
	start_mock s.json &&
	test_expect_code 5 $TEST_MODEL -b "$MOCK_URL/v1" openai:m >actual &&
	stop_mock &&
	grep "^error: other: openai: $MOCK_URL/v1/chat/completions redirects elsewhere (HTTP 308 to https://elsewhere.example/v1/chat/completions); set base_url to the final address$" actual
'

test_done
