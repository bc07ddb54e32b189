#!/bin/sh
# Load: 16 sessions at once, 3 clients on each, every session's command
# flooding output. The server keeps answering holt ls, and its memory
# stays bounded (slow clients lose live output, never the log).
. "$(dirname "$0")/lib.sh"

server_pid() {
	pgrep -f "holt -L $HOLT_SOCKET server -f" | head -n 1
}

test_expect_success BWRAP '16 sessions x 3 clients with an output flood' '
	cat >flood.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "yes holt-flood-line | head -c 8000000; echo END" } } ] },
	  { "expect": { "last_tool_result_contains": "END" }, "text": "done", "tool_calls": [] } ] }
	EOF
	holt ls >/dev/null &&
	for i in $(seq 1 16); do
		holt new -d -s f$i --mode trust --model script:flood.json "flood" >/dev/null || exit 1
		for j in 1 2 3; do
			"$HOLT_BUILD_DIR/holt" -L "$HOLT_SOCKET" attach --lines -t f$i >/dev/null 2>&1 &
		done
	done &&
	max=0 &&
	for k in $(seq 1 20); do
		t0=$(date +%s%N) && holt ls >/dev/null && t1=$(date +%s%N) &&
		ms=$(( (t1 - t0) / 1000000 )) &&
		if [ $ms -gt $max ]; then max=$ms; fi
		sleep 0.2
	done &&
	hwm=$(awk "/^VmHWM/ { print \$2 }" /proc/$(server_pid)/status) &&
	say "holt ls under load: worst ${max} ms; server peak RSS ${hwm} KB" &&
	test_wait_for 600 "test \$(holt ls | grep -c \" finished \") = 16" &&
	test $max -lt 2000 &&
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
