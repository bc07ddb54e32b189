#!/bin/sh
# --idle-pause: the server pauses a sandbox nobody uses (not one running a
# command), and any use resumes it: exec, and a new connection to a
# forwarded port, which waits for the resume and then goes through; and
# for a session's sandbox, attach, exec and a message to the session.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/tui-lib.sh"
TUI_CMD="$HOLT attach"

if ! test_have_prereq BWRAP,SYSPYTHON; then
	echo "1..0 # SKIP needs bubblewrap and /usr/bin/python3"
	exit 0
fi

test_sandbox_cleanup

state() {
	holt sandbox ls | awk -v n="$1" '$2 == n { print $3 }'
}

port=$((20000 + $$ % 20000))

http_get() {
	/usr/bin/python3 -c "import urllib.request, sys
print(urllib.request.urlopen('http://127.0.0.1:$1/$2', timeout=20).read().decode(), end='')"
}

test_expect_success '--idle-pause takes a duration; ls shows when it pauses' '
	test_expect_code 2 holt sandbox create --idle-pause 5x 2>err &&
	grep "a duration such as 30m" err &&
	holt sandbox create --name idle --net off --idle-pause 3s >id &&
	holt sandbox create --name never --net off --idle-pause 0 >id0 &&
	holt sandbox create --name dflt --net off >id1 &&
	holt sandbox ls >ls &&
	grep "^$(cat id)  *idle  *running .* in [1-3]s$" ls &&
	grep "^$(cat id0)  *never  *running .* never$" ls &&
	grep "^$(cat id1)  *dflt  *running .* in 30m$" ls &&
	holt sandbox ls --json >json &&
	grep "\"idle_pause_ms\":[[:space:]]*3000," json &&
	grep "\"pauses_at\":[[:space:]]*\"20" json
'

test_expect_success 'the server pauses it once idle, not the others' '
	holt -L "$HOLT_SOCKET" ls >/dev/null &&
	test_wait_for 100 "test \"\$(state idle)\" = paused" &&
	test "$(state never)" = running &&
	test "$(state dflt)" = running
'

test_expect_success 'ls answers while a paused sandbox'"'"'s backlog is full' '
	test "$(state idle)" = paused &&
	/usr/bin/python3 -c "
import socket, subprocess, sys
held = []
while len(held) < 4096:
	s = socket.socket(socket.AF_UNIX)
	s.setblocking(False)
	try:
		s.connect(sys.argv[1])
	except BlockingIOError:
		break
	held.append(s)
sys.stdout.write(subprocess.run([\"holt\", \"sandbox\", \"ls\"], timeout=20,
	capture_output=True, text=True).stdout)
" "$HOLT_HOME/data/sandboxes/$(cat id)/run/envd.sock" >ls &&
	grep "^$(cat id)  *idle  *paused" ls
'

test_expect_success 'exec resumes it, transparently' '
	holt sandbox exec idle -- echo awake >out &&
	echo awake >expect && test_cmp expect out &&
	test "$(state idle)" = running
'

test_expect_success 'a command that runs keeps it from pausing' '
	{ holt sandbox exec idle -- sleep 8 >/dev/null & } &&
	cmd=$! &&
	sleep 6 &&
	test "$(state idle)" = running &&
	wait $cmd &&
	test_wait_for 100 "test \"\$(state idle)\" = paused"
'

test_expect_success 'a connection to a forwarded port resumes it and goes through' '
	holt sandbox exec idle -- sh -c "mkdir -p /workspace/www &&
		echo hello-after-pause >/workspace/www/index.txt" &&
	holt sandbox service idle create web --port $port -- \
		python3 -m http.server -d /workspace/www $port &&
	test_wait_for 50 "holt sandbox exec idle -- python3 -c \"
import urllib.request
urllib.request.urlopen(\\\"http://127.0.0.1:$port/index.txt\\\")\"" &&
	{ $HOLT sandbox forward idle $port 0 >fwd 2>fwd.err & } &&
	fpid=$! &&
	test_when_finished "kill $fpid" &&
	test_wait_for 50 "test -s fwd" &&
	lport=$(head -n 1 fwd) &&
	test_wait_for 100 "test \"\$(state idle)\" = paused" &&
	http_get $lport index.txt >out &&
	echo hello-after-pause >expect && test_cmp expect out &&
	test "$(state idle)" = running
'

# A session whose sandbox pauses after each run: each way back wakes it
# and the next turn runs its command in the same sandbox.
session_sandbox() {
	sed -n "s/.*\"sandbox\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/$1/session.json"
}

# runs N SESSION: the session's Nth run finished
runs() {
	test "$(grep -c "\"type\":\"run.finished\"" \
		"$HOLT_HOME/data/sessions/$2/events.jsonl")" -ge "$1"
}

sandbox_state() {
	holt sandbox ls | awk -v id="$1" '$1 == id { print $3 }'
}

test_expect_success 'a session: its sandbox pauses once nobody uses it' '
	write_policy &&
	echo "idle_pause = 2s" >"$HOLT_HOME/config/holt.conf" &&
	holt kill-server &&
	cat >nap.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "echo one > one.txt" } } ] },
	  { "text": "first done", "tool_calls": [] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "cat one.txt" } } ] },
	  { "expect": { "last_tool_result_contains": "one" }, "text": "second done", "tool_calls": [] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "echo two >> one.txt" } } ] },
	  { "text": "third done", "tool_calls": [] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "wc -l one.txt" } } ] },
	  { "expect": { "last_tool_result_contains": "3 one.txt" }, "text": "fourth done", "tool_calls": [] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "wc -l one.txt" } } ] },
	  { "expect": { "last_tool_result_contains": "3 one.txt" }, "text": "fifth done", "tool_calls": [] } ] }
	EOF
	holt new -d -s nap --model script:nap.json "first" &&
	test_wait_for 100 "runs 1 nap" &&
	holt log -t nap | grep "first done" &&
	sbx=$(session_sandbox nap) && test -n "$sbx" &&
	test_wait_for 100 "test \"\$(sandbox_state $sbx)\" = paused"
'
sbx=$(session_sandbox nap 2>/dev/null)

test_expect_success 'attach resumes it; the session goes on' '
	{ python3 "$TEST_DIRECTORY/proto-client.py" --wait 60 \
		"$HOLT_HOME/run/$HOLT_SOCKET" send \
		"{\"type\":\"hello\",\"version\":1}" \
		"{\"type\":\"attach\",\"session\":\"nap\"}" \
		"{\"type\":\"send\",\"session\":\"nap\",\"text\":\"second\"}" \
		>frames & } &&
	client=$! &&
	test_when_finished "kill $client" &&
	test_wait_for 100 "grep -q snapshot frames" &&
	grep "\"sandbox_state\": \"running\"" frames &&
	test_wait_for 150 "runs 2 nap" &&
	holt log -t nap | grep "second done" &&
	kill $client && { wait $client || :; } &&
	test_wait_for 100 "test \"\$(sandbox_state $sbx)\" = paused"
'

test_expect_success 'exec in the session'"'"'s paused sandbox resumes it; the session goes on' '
	holt sandbox exec $sbx -- sh -c "echo exec >>/workspace/one.txt" &&
	test "$(sandbox_state $sbx)" = running &&
	holt send -t nap "third" &&
	test_wait_for 150 "runs 3 nap" &&
	holt log -t nap | grep "third done" &&
	test_wait_for 100 "test \"\$(sandbox_state $sbx)\" = paused"
'

test_expect_success 'a message to the session wakes its paused sandbox' '
	holt send -t nap "fourth" &&
	test_wait_for 150 "runs 4 nap" &&
	holt log -t nap | grep "fourth done" &&
	holt sandbox exec $sbx -- cat /workspace/one.txt >out &&
	printf "one\nexec\ntwo\n" >expect && test_cmp expect out
'

test_expect_success TMUX 'holt attach: the screen wakes it; a message typed there runs' '
	test_when_finished tui_stop &&
	test_wait_for 100 "test \"\$(sandbox_state $sbx)\" = paused" &&
	tui_start a -t nap &&
	tui_wait a "fourth done" 100 &&
	test_wait_for 100 "test \"\$(sandbox_state $sbx)\" = running" &&
	tui_keys a C-b 4 &&
	tui_keys a "fifth" &&
	tui_keys a Enter &&
	test_wait_for 150 "runs 5 nap" &&
	tui_wait a "fifth done" 100
'

test_done
