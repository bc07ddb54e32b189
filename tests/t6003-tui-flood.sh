#!/bin/sh
# A 20 MB output flood: the screen stays responsive (a key press echoes
# while the output streams), memory stays bounded, the output pane shows
# the end of the stream and scrolls back through it.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

rss_kb() {
	awk '/^VmRSS:/ { print $2 }' /proc/$1/status
}

test_expect_success TMUX 'setup' '
	cat >script.json <<-\JSON &&
	{ "session": { "name": "s", "state": "working", "sandbox_state": "running",
	    "model": "m", "mode": "auto", "step": 1, "steps_cap": 25, "pending": [] },
	  "events": [
	    { "type": "tool.call", "call_id": "c9", "name": "run_command",
	      "arguments": { "command": "yes | head -c 20M" } },
	    { "type": "tool.started", "call_id": "c9" } ] }
	JSON
	fake_start script.json &&
	tui_start a -t s &&
	tui_wait a "output: yes | head -c 20M  running" &&
	pid=$($TUI_TMUX list-panes -t a -F "#{pane_pid}") &&
	pgrep -P "$pid" -f tui-attach >tui.pid
'

test_expect_success TMUX 'a key press echoes while 20 MB stream at 10 MB/s' '
	{ ( fake_ctl "{\"flood\": {\"call_id\": \"c9\", \"bytes\": 20971520, \"line\": 100, \"rate\": 10485760}}" &&
	    cp ctl.out flood.last; echo done >flood.done ) & } &&
	tui_wait a "line [0-9]* xxx" 30 &&
	test ! -f flood.done &&
	tui_keys a "typed-while-flooding" &&
	tui_wait a "^> typed-while-flooding" 10 &&
	test ! -f flood.done &&
	test_wait_for 200 "test -f flood.done"
'

test_expect_success TMUX 'the end of the stream shows, memory stays bounded' '
	last=$(sed -n "s/^ok //p" flood.last) &&
	test "$last" -gt 190000 &&
	tui_wait a "^│line $last xxx" 50 &&
	rss=$(rss_kb $(cat tui.pid)) &&
	echo "rss $rss kB" &&
	test "$rss" -lt 24576
'

test_expect_success TMUX 'the output scrolls back through the kept lines' '
	tui_keys a C-b 3 &&
	last=$(sed -n "s/^ok //p" flood.last) &&
	tui_keys a Home &&
	tui_wait a "^│line $((last - 99999)) xxx" &&
	tui_gone a "^│line $last xxx" &&
	! tui_screen a | grep -a "^│line $((last - 100000)) " &&
	tui_keys a PageDown &&
	tui_gone a "^│line $((last - 99999)) xxx" &&
	tui_keys a End &&
	tui_wait a "^│line $last xxx"
'

test_expect_success TMUX 'the mouse wheel scrolls the pane under the pointer' '
	last=$(sed -n "s/^ok //p" flood.last) &&
	tui_keys a C-b 4 &&
	tui_wait a "^│line $last xxx" &&
	# Wheel up (button 4, X10 encoding) at column 11, row 46: the output.
	tui_keys a -l "$(printf "\033[M\140+N")" &&
	tui_gone a "^│line $last xxx" &&
	tui_wait a "^│line $((last - 3)) xxx" &&
	tui_keys a -l "$(printf "\033[Ma+N")" &&
	tui_wait a "^│line $last xxx"
'

test_expect_success TMUX 'the command finishing shows in the title' '
	fake_ctl "{\"event\": {\"type\": \"tool.finished\", \"call_id\": \"c9\", \"exit_code\": 0, \"duration_ms\": 2000}}" &&
	tui_wait a "output: yes | head -c 20M  exit 0  2.0 s"
'

test_done
