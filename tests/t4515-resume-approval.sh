#!/bin/sh
# holt run killed by -9 while an approval waited: --resume asks it again
# (approval.needed is logged again with its request id), so --ask deny
# answers it and --ask stdin prompts for it; neither hangs.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

test_expect_success BWRAP 'setup' '
	write_policy &&
	cat >ask.json <<-\EOF
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "python3 -c \"print(6*7)\"" } } ] },
	  { "text": "all done", "tool_calls": [] } ] }
	EOF
'

# Start a run that stops at the question, then kill -9 it there.
killed_at_question() {
	rm -f "$1.in" && mkfifo "$1.in" &&
	{ sleep 30 >"$1.in" & echo $! >"$1.sleep"; } &&
	test_when_finished "kill \$(cat $1.sleep) 2>/dev/null" &&
	{ $HOLT run -s "$1" --model script:ask.json --ask stdin --headless go \
		<"$1.in" >"$1.out" 2>"$1.err" & echo $! >"$1.pid"; } &&
	test_wait_for 200 "grep -q approval.needed $1.out" &&
	kill -9 $(cat "$1.pid") &&
	test_wait_for 50 "! kill -0 $(cat "$1.pid")"
}

test_expect_success BWRAP '--resume --ask deny answers the question that waited' '
	killed_at_question q1 &&
	test_expect_code 4 timeout 30 $HOLT run --resume q1 --ask deny >resume.out &&
	grep "\"type\":\"approval.needed\".*\"again\":true" resume.out &&
	grep "\"type\":\"approval.decided\".*\"decision\":\"deny\"" resume.out &&
	grep "\"type\":\"run.finished\",\"reason\":\"denied\"" resume.out
'

test_expect_success BWRAP '--resume --ask stdin prompts for it and takes the answer' '
	killed_at_question q2 &&
	echo allow | timeout 30 $HOLT run --resume q2 --ask stdin >resume2.out 2>err &&
	grep "approve command" err &&
	grep "\"type\":\"approval.decided\".*\"decision\":\"allow\"" resume2.out &&
	grep "\"type\":\"tool.output\".*42" resume2.out &&
	grep "\"reason\":\"done\"" resume2.out
'

test_done
