#!/bin/sh
# The server: started on demand (exactly one when clients race), sessions
# that work with no client attached, snapshot + live stream on attach,
# several clients, read-only clients, bad clients, kill-server.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

SOCK=$HOLT_HOME/run/$HOLT_SOCKET
PROTO="python3 $TEST_DIRECTORY/proto-client.py"

server_pids() {
	pgrep -f "holt -L $HOLT_SOCKET server -f" || true
}

test_expect_success 'ls starts the server; clients racing start exactly one' '
	for i in 1 2 3 4 5 6; do holt ls >ls.$i 2>&1 & done &&
	wait &&
	for i in 1 2 3 4 5 6; do grep "no sessions" ls.$i || exit 1; done &&
	test $(server_pids | wc -l) = 1 &&
	test -S "$SOCK" &&
	test "$(stat -c %a "$HOLT_HOME/run")" = 700
'

test_expect_success 'kill-server stops it; the next command starts another' '
	old=$(server_pids) &&
	holt kill-server &&
	! kill -0 $old 2>/dev/null &&
	holt ls >/dev/null &&
	test -n "$(server_pids)" &&
	test "$(server_pids)" != "$old"
'

test_expect_success BWRAP 'new -d: the agent works with no client attached' '
	write_policy &&
	cat >s1.json <<-\EOF &&
	{ "turns": [
	  { "delay_ms": 300, "tool_calls": [ { "name": "run_command", "arguments": { "command": "sleep 0.5; echo made > f" } } ] },
	  { "delay_ms": 300, "text": "done", "tool_calls": [] } ] }
	EOF
	holt new -d -s s1 --model script:s1.json "make f" >name &&
	echo s1 >expect && test_cmp expect name &&
	holt ls >ls && grep "^s1 .*working" ls &&
	test_wait_for 100 "holt log -t s1 | grep \"run finished: done\"" &&
	holt ls >ls && grep "^s1 .*finished" ls &&
	holt ls --json | grep "\"name\":\"s1\""
'

test_expect_success BWRAP 'attach: the snapshot, then the live stream, no seq missing or doubled' '
	cat >s2.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "list_dir", "arguments": {} } ] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "python3 -c 1" } } ] },
	  { "delay_ms": 200, "tool_calls": [ { "name": "list_dir", "arguments": {} } ] },
	  { "delay_ms": 200, "text": "done", "tool_calls": [] } ] }
	EOF
	holt new -d -s s2 --model script:s2.json "list" &&
	test_wait_for 100 "holt ls | grep \"^s2 .*waiting\"" &&
	{ $PROTO --wait 60 --until nothing "$SOCK" send \
		"{\"type\":\"hello\",\"version\":1}" \
		"{\"type\":\"attach\",\"session\":\"s2\"}" >frames & } &&
	client=$! &&
	test_when_finished "kill $client" &&
	test_wait_for 100 "grep -q snapshot frames" &&
	holt approve -t s2 allow >answered &&
	grep "^r[0-9][0-9]*: allow python3 -c 1\$" answered &&
	test_wait_for 100 "holt log -t s2 | grep \"run finished\"" &&
	test_wait_for 50 "grep -q run.finished frames" &&
	: the client is still attached, stop it &&
	kill $client &&
	test_expect_code 143 wait $client &&
	grep "\"type\": \"event\"" frames &&
	python3 -c "
import json, sys
seqs = []
for line in open(\"frames\"):
    f = json.loads(line)
    if f[\"type\"] == \"snapshot\":
        seqs += [e[\"seq\"] for e in f[\"events\"]]
    elif f[\"type\"] == \"event\" and \"seq\" in f[\"event\"]:
        seqs.append(f[\"event\"][\"seq\"])
n = sum(1 for _ in open(\"$HOLT_HOME/data/sessions/s2/events.jsonl\"))
assert seqs == list(range(1, n + 1)), (seqs, n)
"
'

test_expect_success BWRAP 'two clients: one approves, both see who decided; read-only cannot' '
	cat >s3.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "python3 -c \"print(1)\"" } } ] },
	  { "text": "done", "tool_calls": [] } ] }
	EOF
	holt new -d -s s3 --model script:s3.json "ask" &&
	test_wait_for 100 "holt ls | grep \"^s3 .*waiting\"" &&
	id=$(holt log -t s3 --json | sed -n "s/.*approval.needed.*\"request_id\":\"\([^\"]*\)\".*/\1/p") &&
	test -n "$id" &&
	{ $PROTO --wait 8 "$SOCK" send "{\"type\":\"hello\",\"version\":1}" \
		"{\"type\":\"attach\",\"session\":\"s3\",\"readonly\":true}" \
		"{\"type\":\"approve\",\"session\":\"s3\",\"request_id\":\"$id\",\"decision\":\"allow\"}" >ro & } &&
	{ $PROTO --wait 8 "$SOCK" send "{\"type\":\"hello\",\"version\":1}" \
		"{\"type\":\"attach\",\"session\":\"s3\"}" >watcher & } &&
	test_wait_for 100 "grep -q read-only ro && grep -q snapshot watcher" &&
	holt approve -t s3 --id "$id" allow &&
	wait &&
	grep "read-only" ro &&
	grep "approval.decided" ro | grep "\"by\": \"user\"" &&
	grep "approval.decided" watcher &&
	test_must_fail holt approve -t s3 --id "$id" deny 2>err &&
	grep "no such request\|already decided" err &&
	test_wait_for 100 "holt log -t s3 | grep \"run finished: done\""
'

test_expect_success 'bad clients are dropped; the server goes on serving' '
	for kind in random huge half before-hello not-json; do
		$PROTO --wait 5 --until closed "$SOCK" garbage $kind >g.$kind 2>&1
	done &&
	grep closed g.random && grep closed g.huge && grep closed g.before-hello &&
	grep closed g.not-json &&
	holt ls >ls && grep "^s1 " ls &&
	grep "dropped: bad frame" "$SOCK.log" &&
	grep "before hello" "$SOCK.log"
'

test_expect_success ROOT,SYSPYTHON 'a client of another uid is refused' '
	command -v setpriv >/dev/null &&
	chmod 755 "$HOLT_HOME" "$HOLT_HOME/run" && chmod 666 "$SOCK" &&
	test_when_finished "chmod 700 \"\$HOLT_HOME/run\"; chmod 600 \"\$SOCK\"" &&
	test_might_fail setpriv --reuid 65534 --regid 65534 --clear-groups \
		/usr/bin/python3 "$TEST_DIRECTORY/proto-client.py" --wait 1 "$SOCK" send \
		"{\"type\":\"hello\",\"version\":1}" >other 2>&1 &&
	chmod 700 "$HOLT_HOME/run" && chmod 600 "$SOCK" &&
	! grep "\"type\": \"hello\"" other &&
	grep "refused a client of uid 65534" "$SOCK.log"
'

test_expect_success 'unknown sessions are usage errors' '
	test_expect_code 2 holt send -t nosuch hi &&
	test_expect_code 2 holt log -t nosuch &&
	test_expect_code 2 holt kill-session -t nosuch
'

test_expect_success BWRAP 'kill-session --rm removes the session and its sandbox' '
	id=$(sed -n "s/.*\"sandbox\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/s1/session.json") &&
	holt kill-session -t s1 --rm &&
	! test -d "$HOLT_HOME/data/sessions/s1" &&
	! test -d "$HOLT_HOME/data/sandboxes/$id" &&
	! holt ls | grep "^s1 "
'

test_done
