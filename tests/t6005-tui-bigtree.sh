#!/bin/sh
# A workspace with a directory of 100,000 files: the tree unfolds it fast,
# the screen answers keys meanwhile, a new file shows up, memory stays sane.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

# Creating 100,000 files is slow on some disks: use memory when there is.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	WS=$(mktemp -d /dev/shm/holt-t6005.XXXXXX)
	test_when_finished "rm -rf '$WS'"
else
	WS=$TRASH_DIRECTORY/ws
fi

test_expect_success TMUX 'setup: 100,000 files, untracked in a git repository' '
	mkdir -p "$WS/big" &&
	say "workspace $WS" &&
	git -C "$WS" init -q &&
	python3 -c "
import os
for i in range(100000):
    open(os.path.join(\"$WS/big\", \"f%06d.txt\" % i), \"w\").close()
" &&
	cat >script.json <<-JSON &&
	{ "session": { "name": "s", "state": "idle", "sandbox_state": "running",
	    "model": "m", "mode": "auto", "step": 0, "steps_cap": 25,
	    "pending": [], "workspace": "$WS" }, "events": [] }
	JSON
	fake_start script.json
'

test_expect_success TMUX 'the screen starts at once; the status comes later' '
	tui_start a -t s &&
	tui_wait a "▸ big/" 20 &&
	tui_wait a "▸ big/ *?" 50
'

test_expect_success TMUX 'the directory unfolds and scrolls to its end quickly' '
	tui_keys a C-b 1 &&
	tui_keys a Home Enter &&
	tui_wait a "▾ big/" 20 &&
	tui_wait a "f000000.txt" 20 &&
	tui_keys a End &&
	tui_wait a "f099999.txt" 10
'

test_expect_success TMUX 'keys are answered at once' '
	tui_keys a C-b 4 "still here" &&
	tui_wait a "^> still here" 10
'

test_expect_success TMUX 'a new file in the big directory shows up' '
	touch "$WS/big/zzz-new.txt" &&
	fake_ctl "{\"files\": {\"dirs\": [\"big\"]}}" &&
	tui_keys a C-b 1 &&
	sleep 0.5 &&
	tui_keys a End &&
	tui_wait a "zzz-new.txt" 30
'

test_expect_success TMUX 'memory stays sane' '
	pid=$($TUI_TMUX list-panes -t a -F "#{pane_pid}") &&
	rss=$(awk "/^VmRSS:/ { print \$2 }" /proc/$(pgrep -P "$pid" -f tui-attach)/status) &&
	echo "rss $rss kB" &&
	test "$rss" -lt 49152
'

test_done
