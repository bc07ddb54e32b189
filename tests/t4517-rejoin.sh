#!/bin/sh
# A command that was running when holt run or the server was killed is
# re-joined through envd by its pid: it is not run again, and the model is
# given its real output and exit code, whether it was still running or had
# finished meanwhile. Only a command envd no longer knows is interrupted.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

test_expect_success BWRAP 'setup' '
	cat >r.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "sleep 2; echo ran >> count; echo real-output; exit 3" } } ] },
	  { "expect": { "last_tool_result_contains": "real-output" }, "text": "done", "tool_calls": [] } ] }
	EOF
	cat >gone.json <<-\EOF
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "sleep 2; echo ran >> count" } } ] },
	  { "expect": { "last_tool_result_contains": "interrupted" }, "text": "done", "tool_calls": [] } ] }
	EOF
'

# The workspace of session $1.
workspace() {
	sbx=$(sed -n "s/.*\"sandbox\":[[:space:]]*\"\([^\"]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/$1/session.json") &&
	echo "$HOLT_HOME/data/sandboxes/$sbx/workspace"
}

# Start holt run on session $1 with script $2; kill -9 it once its command
# runs (tool.running is logged).
run_killed() {
	{ $HOLT run -s "$1" --mode trust --model "script:$2" --headless go \
		>"$1.out" 2>&1 & echo $! >"$1.pid"; } &&
	test_when_finished "kill -9 \$(cat $1.pid) 2>/dev/null" &&
	test_wait_for 300 "grep -q tool.running \"$(session_log "$1")\"" &&
	kill -9 $(cat "$1.pid") &&
	test_wait_for 50 "! kill -0 $(cat "$1.pid")"
}

# The call of session $1 ran once, and finished with exit 3, not interrupted.
rejoined() {
	test "$(cat "$(workspace "$1")/count")" = ran &&
	grep "\"type\":\"tool.finished\"" "$(session_log "$1")" >fin &&
	test_line_count = 1 fin &&
	grep "\"exit_code\":3" fin &&
	! grep "\"interrupted\":true" fin &&
	grep "real-output" fin
}

test_expect_success BWRAP 'holt run killed mid-command: --resume re-joins it' '
	run_killed j1 r.json &&
	! test -f "$(workspace j1)/count" &&
	$HOLT run --resume j1 --headless >j1.resume &&
	tail -n 1 j1.resume | grep "\"reason\":\"done\"" &&
	rejoined j1
'

test_expect_success BWRAP 'the command finished while no one watched: its result is taken' '
	run_killed j2 r.json &&
	test_wait_for 100 "test -f \"$(workspace j2)/count\"" &&
	sleep 0.5 &&
	$HOLT run --resume j2 --headless >j2.resume &&
	tail -n 1 j2.resume | grep "\"reason\":\"done\"" &&
	rejoined j2
'

test_expect_success BWRAP 'the server killed mid-command: the next server re-joins it' '
	holt new -d -s j3 --mode trust --model script:r.json go >/dev/null &&
	test_wait_for 300 "grep -q tool.running \"$(session_log j3)\"" &&
	pid=$(server_pid) && kill -9 $pid &&
	test_wait_for 50 "! kill -0 $pid" &&
	holt ls >/dev/null &&
	test_wait_for 100 "holt log -t j3 | grep \"run finished\"" &&
	holt log -t j3 | grep "run finished: done" &&
	rejoined j3
'

test_expect_success BWRAP 'a pid envd does not know: interrupted, as before' '
	run_killed j4 gone.json &&
	sed -i "s/\"type\":\"tool.running\",\\(.*\\)\"pid\":[0-9]*/\"type\":\"tool.running\",\\1\"pid\":999999/" \
		"$(session_log j4)" &&
	grep "\"pid\":999999" "$(session_log j4)" &&
	$HOLT run --resume j4 --headless >j4.resume &&
	grep "\"type\":\"tool.finished\".*\"interrupted\":true" "$(session_log j4)" &&
	tail -n 1 j4.resume | grep "\"reason\":\"done\""
'

# A headless run's session is holt run's: the server lists it but does
# not take it over, so --resume works after a kill -9, and ls always says
# who runs it now.
test_expect_success BWRAP 'a killed headless run is not taken over by the server' '
	{ $HOLT run -s j5 --mode trust --model script:r.json --headless go \
		>j5.out 2>&1 & echo $! >j5.pid; } &&
	test_when_finished "kill -9 \$(cat j5.pid) 2>/dev/null" &&
	test_wait_for 300 "grep -q tool.running \"$(session_log j5)\"" &&
	holt ls >ls1 && grep "^j5  *working .*run by holt run" ls1 &&
	kill -9 $(cat j5.pid) &&
	test_wait_for 50 "! kill -0 $(cat j5.pid)" &&
	holt ls >ls && cat ls &&
	grep "^j5  *idle .*holt run --resume j5 goes on" ls &&
	sleep 3 &&
	! grep "\"type\":\"tool.finished\"" "$(session_log j5)" &&
	$HOLT run --resume j5 --headless >j5.resume &&
	tail -n 1 j5.resume | grep "\"reason\":\"done\"" &&
	holt ls >ls2 && ! grep "run by holt run\|another holt" ls2 &&
	rejoined j5
'

# holt new killed while it copies the repository: the sandbox it made is
# removed by the next holt new (or server), never left running.
test_expect_success BWRAP 'a holt new killed mid-copy leaves no sandbox behind' '
	mkdir big && (cd big && git init -q && git config user.email t@e &&
		git config user.name t &&
		head -c 30000000 /dev/urandom >blob && git add blob &&
		git commit -q -m big) &&
	before=$(count_sandboxes) &&
	{ $HOLT new -d -s half --repo big --model script:r.json go >half.out 2>&1 &
	  echo $! >half.pid; } &&
	test_when_finished "kill -9 \$(cat half.pid) 2>/dev/null" &&
	test_wait_for 300 "test -f \"$HOLT_HOME/data/sessions/half/creating\"" &&
	kill -9 $(cat half.pid) &&
	test_wait_for 50 "! kill -0 $(cat half.pid)" &&
	test $(count_sandboxes) -gt $before &&
	! test -f "$HOLT_HOME/data/sessions/half/session.json" &&
	holt kill-server &&
	holt ls >/dev/null &&
	test $(count_sandboxes) = $before &&
	! test -d "$HOLT_HOME/data/sessions/half"
'

test_done
