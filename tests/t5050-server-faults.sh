#!/bin/sh
# The server under protocol abuse: a client that never reads while it keeps
# asking, bytes that are not UTF-8, names that are paths. Each fault is
# made for real on the server's socket; the server must answer the others
# afterwards and its log must show no crash.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/lib-mock-llm.sh"

SOCK=$HOLT_HOME/run/$HOLT_SOCKET
PROTO="python3 $TEST_DIRECTORY/proto-client.py"

# A session whose snapshot is several MB: a few attaches fill a queue.
test_expect_success BWRAP,PYTHON 'setup: a session with a big log' '
	holt new -d -s big --model script:/dev/null "hi" &&
	test_wait_for 100 "holt log -t big | grep \"run finished\"" &&
	holt kill-server &&
	append_big_outputs big 120 &&
	holt ls >/dev/null &&
	server_pid >pid && test -s pid
'

# The queue passes the drop limit while the server handles that same
# client's request: the client is dropped after the request, never freed
# under it.
for req in attach send; do
	test_expect_success BWRAP,PYTHON "a client that never reads and keeps sending $req is dropped; the server lives" "
		$PROTO --wait 20 \"\$SOCK\" flood 40 \
			'{\"type\":\"attach\",\"session\":\"big\"}' \
			'{\"type\":\"$req\",\"session\":\"big\",\"text\":\"more\"}' \
			>flood.$req 2>&1 &&
		cat flood.$req &&
		grep \"closed after\" flood.$req &&
		test \"\$(server_pid)\" = \"\$(cat pid)\" &&
		grep \"dropped: too slow\" \"\$SOCK.log\" &&
		holt ls >ls && grep \"^big \" ls &&
		! grep -i \"sanitizer\|BUG\" \"\$SOCK.log\"
	"
done

# Every line of a file is JSON in strict UTF-8.
all_utf8_json() {
	python3 -c "
import json, sys
for n, line in enumerate(open(sys.argv[1], 'rb'), 1):
    json.loads(line.decode('utf-8', 'strict'))
" "$1"
}

# One byte that is not UTF-8, from each side: the user (holt send), the
# sandbox (a command's output). Both reach the log and the next model
# request as U+FFFD, and the session goes on.
test_expect_success BWRAP,PYTHON 'bytes that are not UTF-8 are repaired where they come in' '
	cat >u.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "echo \"out\\0351put\"" } } ] },
	  { "expect": { "last_tool_result_contains": "out\ufffdput" }, "text": "first done", "tool_calls": [] },
	  { "expect": { "last_user_message_contains": "caf\ufffd" }, "text": "second done", "tool_calls": [] } ] }
	EOF
	start_mock u.json --log requests &&
	holt new -d -s u --mode trust --model openai:m --base-url "$MOCK_URL/v1" \
		"go" >/dev/null &&
	test_wait_for 100 "holt log -t u | grep \"first done\"" &&
	test_wait_for 100 "holt ls | grep \"^u .*finished\"" &&
	holt send -t u "$(printf "caf\351")" &&
	test_wait_for 100 "holt log -t u | grep \"second done\"" &&
	all_utf8_json "$(session_log u)" &&
	grep "caf\\\\ufffd\|caf$(printf "\357\277\275")" "$(session_log u)" &&
	test $(grep -c "\"model\"" requests) = 3 &&
	! grep "HTTP 400\|error" "$SOCK.log"
'

test_expect_success PYTHON 'an error reply never echoes bytes that are not UTF-8' '
	$PROTO --until error "$SOCK" raw \
		"$(printf "{\"type\":\"send\",\"session\":\"x\377y\",\"text\":\"hi\"}" | od -An -tx1 | tr -d " \n")" \
		>reply &&
	cat reply &&
	grep "no such session\|a name is" reply &&
	test "$(server_pid)" = "$(cat pid)"
'

# A name is never a path: not on the socket, not from the command line.
test_expect_success PYTHON 'kill-session --rm of ../../x removes nothing outside the sessions' '
	mkdir -p "$HOLT_HOME/x" && : >"$HOLT_HOME/x/session.json" &&
	: >"$HOLT_HOME/x/precious" &&
	$PROTO --until error "$SOCK" send "{\"type\":\"hello\",\"version\":1}" \
		"{\"type\":\"kill-session\",\"session\":\"../../x\",\"rm\":true}" >reply &&
	cat reply &&
	grep "no such session" reply &&
	test_expect_code 2 holt kill-session -t ../../x --rm &&
	test_expect_code 2 holt send -t ../../x hi &&
	test -f "$HOLT_HOME/x/precious"
'

test_expect_success BWRAP 'a session.json with no sandbox is named; ls shows no age it does not know' '
	holt new -d -s nosbx --model script:/dev/null "hi" &&
	test_wait_for 100 "holt log -t nosbx | grep \"run finished\"" &&
	holt kill-server &&
	meta=$HOLT_HOME/data/sessions/nosbx/session.json &&
	python3 -c "
import json, sys
m = json.load(open(sys.argv[1])); del m[\"sandbox\"]; del m[\"created\"]
json.dump(m, open(sys.argv[1], \"w\"))" "$meta" &&
	holt ls >ls && cat ls &&
	grep "^nosbx  *error .*nosbx/session.json names no sandbox" ls &&
	! grep "?" ls &&
	grep "^nosbx  *error  *-  *- " ls
'

test_done
