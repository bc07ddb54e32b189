#!/bin/sh
# Load: 16 sessions at once, 3 clients on each, every session's command
# flooding output. The server keeps answering holt ls (within 100 ms:
# bench/server.sh), and its memory stays bounded (slow clients lose live
# output, never the log).
. "$(dirname "$0")/lib.sh"

# Time holt ls N times while the flood runs (tests/ls-under-load.py, which
# bench/server.sh also runs to measure the 100 ms budget): every ls must be
# answered, and none starved. Speed is measured in bench/, not asserted
# here: on two cores busy with a hundred processes the figures are the
# scheduler's as much as the server's.
test_expect_success BWRAP '16 sessions x 3 clients with an output flood' '
	cat >flood.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "timeout 40 yes holt-flood-line; echo END" } } ] },
	  { "expect": { "last_tool_result_contains": "END" }, "text": "done", "tool_calls": [] } ] }
	EOF
	holt ls >/dev/null &&
	for i in $(seq 1 16); do
		holt new -d -s f$i --mode trust --model script:flood.json "flood" >/dev/null || exit 1
		for j in 1 2 3; do
			"$HOLT_BUILD_DIR/holt" -L "$HOLT_SOCKET" attach --lines -t f$i >/dev/null 2>&1 &
		done
	done &&
	test_wait_for 300 "test \$(holt ls | grep -c \" working \") = 16" &&
	sleep 1 &&
	python3 "$TEST_DIRECTORY/ls-under-load.py" "$HOLT_BUILD_DIR/holt" \
		"$HOLT_SOCKET" 20 >times &&
	read a50 a90 amax c50 c90 cmax n <times &&
	hwm=$(awk "/^VmHWM/ { print \$2 }" /proc/$(server_pid)/status) &&
	say "holt ls under load, $n samples, ms p50/p90/worst:" \
		"server answer $a50/$a90/$amax, command $c50/$c90/$cmax;" \
		"server peak RSS ${hwm} KB" &&
	test_wait_for 600 "test \$(holt ls | grep -c \" finished \") = 16" &&
	test "$n" -ge 10 &&
	test "$amax" -le 2000 &&
	test $hwm -lt 131072 &&
	for i in $(seq 1 16); do
		holt log -t f$i | grep -q "run finished: done" || exit 1
	done
'

test_expect_success 'the attached clients end with the server' '
	holt kill-server &&
	sleep 0.5 &&
	! pgrep -f "holt -L $HOLT_SOCKET attach"
'

test_done
