#!/bin/sh
# File descriptors: the server raises its soft limit to the hard one (each
# session holds a log and a lock), and when it runs out anyway a session
# says so, never that its sandbox is gone.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

server_pid() {
	pgrep -f "holt -L $HOLT_SOCKET server -f" | head -n 1
}

test_expect_success 'the server raises its soft limit on open files to the hard one' '
	hard=$(ulimit -H -n) &&
	if test "$hard" = unlimited || test "$hard" -le 64; then
		say "hard limit $hard: nothing to raise"
	else
		(ulimit -S -n 64 && holt ls >/dev/null) &&
		pid=$(server_pid) &&
		grep "^Max open files" /proc/$pid/limits >limits &&
		read -r _ _ _ soft hardnow _ <limits &&
		test "$soft" = "$hardnow" &&
		test "$soft" -gt 64 &&
		holt kill-server
	fi
'

test_expect_success BWRAP 'out of file descriptors is reported as that' '
	cat >hi.json <<-\EOF &&
	{ "turns": [ { "text": "hi", "tool_calls": [] } ] }
	EOF
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
		holt new -d -s fd$i --model script:hi.json "hello" >/dev/null ||
			exit 1
	done &&
	test_wait_for 600 "test \$(holt ls | grep -c \" finished \") = 12" &&
	holt kill-server &&
	(ulimit -n 24 && holt ls --json >ls.json 2>ls.err) &&
	grep "too many open files" ls.json &&
	! grep "is gone" ls.json &&
	holt kill-server
'

test_done
