#!/bin/sh
# holt sandbox sh in a real terminal (tmux): a shell on a pty whose size
# follows the terminal's, ^C reaching the command inside, exit ending it.
. "$(dirname "$0")/lib.sh"

if ! command -v bwrap >/dev/null; then
	echo "1..0 # SKIP bubblewrap (bwrap) is not installed"
	exit 0
fi

T="tmux -L holt-t1005-$$ -f /dev/null"
test_when_finished "$T kill-server"
test_sandbox_cleanup

screen() {
	$T capture-pane -p -t s
}

test_expect_success TMUX 'sh opens a shell on a terminal of the window size' '
	holt sandbox create --name tty >id &&
	$T new-session -d -s s -x 100 -y 30 "$HOLT sandbox sh tty; echo sh-exit-\$?; sleep 30" &&
	test_wait_for 300 "screen | grep -q :/workspace" &&
	$T send-keys -t s "stty size; tty" Enter &&
	test_wait_for 300 "screen | grep -q \"^30 100\$\"" &&
	screen | grep "^/dev/pts/"
'

test_expect_success TMUX 'the size follows the terminal' '
	$T resize-window -t s -x 120 -y 40 &&
	sleep 0.3 &&
	$T send-keys -t s "clear; stty size" Enter &&
	test_wait_for 300 "screen | grep -q \"^40 120\$\""
'

test_expect_success TMUX '^C interrupts the command inside, not the shell' '
	$T send-keys -t s "sleep 300" Enter &&
	sleep 0.5 &&
	$T send-keys -t s C-c &&
	$T send-keys -t s "echo after-sleep-\$?" Enter &&
	test_wait_for 300 "screen | grep -q ^after-sleep-130" &&
	$T send-keys -t s "echo still-here" Enter &&
	test_wait_for 300 "screen | grep -q \"^still-here\""
'

test_expect_success TMUX 'exit ends sh with the shell'"'"'s status' '
	$T send-keys -t s "exit 7" Enter &&
	test_wait_for 300 "screen | grep -q sh-exit-7"
'

test_done
