#!/bin/sh
# More of the server: -S PATH, an approval that times out while nobody is
# attached, and a session whose sandbox was stopped (a reboot) coming back
# on attach.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

PROTO="python3 $TEST_DIRECTORY/proto-client.py"

test_expect_success '-S PATH selects a server by its socket path' '
	"$HOLT_BUILD_DIR/holt" -S "$TRASH_DIRECTORY/other.sock" ls >out &&
	grep "no sessions" out &&
	test -S "$TRASH_DIRECTORY/other.sock" &&
	"$HOLT_BUILD_DIR/holt" -S "$TRASH_DIRECTORY/other.sock" kill-server &&
	! test -S "$TRASH_DIRECTORY/other.sock"
'

test_expect_success BWRAP 'an approval times out while nobody is attached' '
	write_policy &&
	mkdir -p "$HOLT_HOME/config" &&
	printf "approval_timeout = 1\napproval_default = deny\n" >"$HOLT_HOME/config/holt.conf" &&
	cat >to.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "python3 -c 1" } } ] },
	  { "expect": { "last_tool_result_contains": "nobody answered" }, "text": "gave up", "tool_calls": [] } ] }
	EOF
	{ holt kill-server 2>/dev/null; true; } && holt new -d -s to --model script:to.json "try" &&
	test_wait_for 100 "holt log -t to | grep \"run finished\"" &&
	holt log -t to >log &&
	grep "denied by timeout\|deny by timeout" log &&
	grep "run finished: denied" log &&
	rm "$HOLT_HOME/config/holt.conf" && holt kill-server
'

test_expect_success BWRAP 'a stopped sandbox (a reboot) is started on attach' '
	cat >idle.json <<-\EOF &&
	{ "turns": [ { "text": "hi", "tool_calls": [] } ] }
	EOF
	holt new -d -s idle --model script:idle.json "hello" &&
	test_wait_for 100 "holt log -t idle | grep \"run finished\"" &&
	id=$(sed -n "s/.*\"sandbox\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/idle/session.json") &&
	holt sandbox stop "$id" &&
	holt sandbox ls | grep "$id.*stopped" &&
	$PROTO --wait 2 --until snapshot "$HOLT_HOME/run/$HOLT_SOCKET" send \
		"{\"type\":\"hello\",\"version\":1}" \
		"{\"type\":\"attach\",\"session\":\"idle\"}" >frames &&
	grep "\"sandbox_state\": \"running\"" frames &&
	holt sandbox ls | grep "$id.*running"
'

test_expect_success BWRAP 'log -f follows the log as it grows' '
	cat >f.json <<-\EOF &&
	{ "turns": [ { "text": "first", "tool_calls": [] },
	             { "delay_ms": 300, "text": "second answer", "tool_calls": [] } ] }
	EOF
	holt new -d -s fol --model script:f.json "one" &&
	test_wait_for 100 "holt log -t fol | grep \"run finished\"" &&
	{ "$HOLT_BUILD_DIR/holt" -L "$HOLT_SOCKET" log -t fol -f >follow 2>&1 & } &&
	pid=$! &&
	sleep 0.3 &&
	holt send -t fol "two" &&
	test_wait_for 100 "grep -q \"agent: second answer\" follow" &&
	kill $pid &&
	test $(grep -c "session fol created" follow) = 1
'

test_done
