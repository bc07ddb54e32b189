#!/bin/sh
# holt demo in a real terminal: it runs to its end with the approval
# answered by keys, its final screen shows the diff and the tests passing,
# and the demo session stays, to be reattached.
. "$(dirname "$0")/lib.sh"

T="tmux -u -f /dev/null -L demo$$"
export TERM=xterm-256color

screen() {
	$T capture-pane -p -t demo
}

test_expect_success BWRAP,TMUX,PYTHON 'the demo runs to its end' '
	test_when_finished "$T kill-server" &&
	$T new-session -d -s demo -x 160 -y 45 "env -u TMUX $HOLT demo; echo demo-exit=\$?; sleep 60" &&
	test_wait_for 300 "screen | grep -q \"approval needed\"" &&
	screen >s1 &&
	grep "curl -s http://127.0.0.1:8000/index.html" s1 &&
	$T send-keys -t demo y &&
	test_wait_for 300 "screen | grep -q \"diff against\"" &&
	screen >s2 &&
	grep "^│ *[0-9]* *-    return a - b" s2 &&
	grep "^│ *[0-9]* +    return a + b" s2 &&
	! grep __pycache__ s2 &&
	$T send-keys -t demo q &&
	test_wait_for 50 "screen | grep -q \"run finished: done\"" &&
	screen >s3 &&
	grep "✓ run_tests" s3 &&
	grep "✓ run_command sleep 1; curl" s3 &&
	holt log -t demo --json >log &&
	grep "TESTS FAILED" log && grep "TESTS PASSED" log &&
	grep "demo shop is open" log &&
	$T send-keys -t demo C-b d &&
	test_wait_for 50 "screen | grep -q \"holt attach -t demo\"" &&
	screen | grep "demo-exit=0"
'

test_expect_success BWRAP 'the demo session is still there; holt demo again reattaches' '
	holt ls >ls &&
	grep "^demo .*finished" ls &&
	holt demo -d >out &&
	echo demo >expect && test_cmp expect out
'

test_done
