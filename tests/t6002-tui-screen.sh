#!/bin/sh
# The screen itself: resizing (down to 80x24, a notice below), zoom and
# focus, themes (file, option, errors, NO_COLOR), wide characters, and the
# terminal restored on exit, SIGTERM and a crash.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

WS=$TRASH_DIRECTORY/ws

# The cells a line of the screen takes (wide characters count two).
cells() {
	python3 -c '
import sys, unicodedata
for line in sys.stdin.read().split("\n"):
    if sys.argv[1] in line:
        print(sum(2 if unicodedata.east_asian_width(c) in "WF" else 1
                  for c in line))
        break' "$1"
}

# The status bar (first row) with its colours.
status_sgr() {
	$TUI_TMUX capture-pane -e -p -t "$1" | head -n 1
}

test_expect_success TMUX 'setup' '
	mkdir -p "$WS/src" &&
	echo x >"$WS/日本語.txt" &&
	echo y >"$WS/emoji-🎉.md" &&
	cat >script.json <<-JSON &&
	{ "session": { "name": "s", "state": "idle", "sandbox_state": "running",
	    "model": "openai:gpt-4.1", "mode": "auto", "step": 0, "steps_cap": 25,
	    "pending": [], "workspace": "$WS" },
	  "events": [ { "type": "user.message", "text": "こんにちは 世界 — wide text 🎉" },
	              { "type": "assistant.message", "text": "line one of the answer" } ] }
	JSON
	fake_start script.json
'

test_expect_success TMUX 'wide characters in names and messages keep the borders straight' '
	tui_start a -t s &&
	tui_wait a "日本語.txt" &&
	tui_wait a "emoji-🎉.md" &&
	tui_wait a "こんにちは 世界 — wide text 🎉" &&
	tui_screen a >screen &&
	test "$(cells 日本語.txt <screen)" = 200 &&
	test "$(cells emoji- <screen)" = 200 &&
	test "$(cells こんにちは <screen)" = 200
'

test_expect_success TMUX 'resize to 80x24 keeps every pane' '
	$TUI_TMUX resize-window -t a -x 80 -y 24 &&
	tui_wait a "holt │ s │  idle  │ sbx running" &&
	tui_wait a "┌ files" &&
	tui_wait a "┌ agent" &&
	tui_wait a "┌ output" &&
	tui_wait a "line one of the answer" &&
	tui_wait a "^> message the agent" &&
	tui_screen a >screen &&
	test "$(cells こんにちは <screen)" = 80
'

test_expect_success TMUX 'below 80x24 a notice shows instead, and nothing breaks' '
	$TUI_TMUX resize-window -t a -x 60 -y 20 &&
	tui_wait a "terminal too small" &&
	tui_wait a "60x20, need 80x24" &&
	$TUI_TMUX resize-window -t a -x 20 -y 5 &&
	tui_wait a "20x5, need 80x24"
'

test_expect_success TMUX 'back to 200x60, the whole screen returns' '
	$TUI_TMUX resize-window -t a -x 200 -y 60 &&
	tui_gone a "terminal too small" &&
	tui_wait a "line one of the answer" &&
	tui_wait a "日本語.txt"
'

test_expect_success TMUX 'z zooms the focused pane, and again unzooms' '
	tui_keys a C-b 2 &&
	tui_keys a z &&
	tui_wait a " zoom " &&
	tui_gone a "┌ files" &&
	tui_gone a "┌ output" &&
	tui_keys a z &&
	tui_wait a "┌ files" &&
	tui_gone a " zoom "
'

test_expect_success TMUX 'Tab and Shift-Tab move the focus' '
	tui_keys a C-b 4 &&
	tui_keys a Tab &&
	$TUI_TMUX capture-pane -e -p -t a >focus1 &&
	tui_keys a BTab &&
	sleep 0.2 &&
	$TUI_TMUX capture-pane -e -p -t a >focus2 &&
	! cmp -s focus1 focus2
'

test_expect_success TMUX 'a theme changes the colours' '
	status_sgr a >default-status &&
	tui_start b -T high-contrast -t s &&
	tui_wait b "holt │ s" &&
	status_sgr b >hc-status &&
	! cmp -s default-status hc-status &&
	tui_start c -T light -t s &&
	tui_wait c "holt │ s" &&
	status_sgr c >light-status &&
	! cmp -s light-status hc-status &&
	! cmp -s light-status default-status &&
	tui_start c2 -T solarized-dark -t s &&
	tui_wait c2 "holt │ s" &&
	status_sgr c2 >sol-status &&
	! cmp -s sol-status light-status &&
	for s in b c c2; do
		! tui_screen $s | grep -a "default theme" || return 1
	done
'

test_expect_success TMUX 'C-b T switches the theme on the running screen' '
	status_sgr a >before &&
	tui_keys a C-b T &&
	tui_wait a "theme: high-contrast" &&
	status_sgr a >after-hc &&
	! cmp -s before after-hc &&
	tui_keys a C-b T &&
	tui_wait a "theme: light" &&
	status_sgr a >after-light &&
	! cmp -s after-hc after-light &&
	tui_keys a C-b T C-b T &&
	tui_wait a "theme: default"
'

test_expect_success TMUX 'colours fit the terminal: direct colour, 256 colours, 8 colours' '
	if infocmp xterm-direct >/dev/null 2>&1; then
		TUI_CMD="env TERM=xterm-direct $TUI_CMD" tui_start tc -T light -t s &&
		tui_wait tc "holt │ s" &&
		status_sgr tc | grep -a "48;2;0;95;135" || return 1
	else
		say "no xterm-direct terminfo (ncurses-term): direct colour not checked"
	fi &&
	TUI_CMD="env TERM=xterm-256color $TUI_CMD" tui_start t256 -T light -t s &&
	tui_wait t256 "holt │ s" &&
	status_sgr t256 | grep -a "48;5;24[;m]" &&
	TUI_CMD="env TERM=screen $TUI_CMD" tui_start t8 -T light -t s &&
	tui_wait t8 "holt │ s" &&
	status_sgr t8 | grep -a -E "(\[|;)44(;|m)" &&
	! status_sgr t8 | grep -a -E "[34]8;[25];"
'

test_expect_success TMUX 'the theme option of holt.conf is used' '
	mkdir -p "$HOLT_HOME/config" &&
	echo "theme = high-contrast" >"$HOLT_HOME/config/holt.conf" &&
	tui_start d -t s &&
	tui_wait d "holt │ s" &&
	status_sgr d >conf-status &&
	cmp hc-status conf-status &&
	rm "$HOLT_HOME/config/holt.conf"
'

test_expect_success TMUX 'a bad theme file is named with its line; the default is used' '
	mkdir -p "$HOLT_HOME/config/themes" &&
	printf "# broken\nnormal = default\nbogus = red\n" \
		>"$HOLT_HOME/config/themes/broken.theme" &&
	tui_start e -T broken -t s &&
	tui_wait e "broken.theme. line 3: unknown role .bogus.; using the default theme" &&
	tui_start f -T no-such-theme -t s &&
	tui_wait f "theme .no-such-theme.: not found"
'

test_expect_success TMUX 'NO_COLOR: attributes only, no colours' '
	TUI_CMD="env NO_COLOR=1 $TUI_CMD" tui_start g -t s &&
	tui_wait g "holt │ s" &&
	$TUI_TMUX capture-pane -e -p -t g >nocolor &&
	! grep -a -E "$(printf "\033")\\[([0-9;]*;)?(3[0-7]|4[0-7]|9[0-7]|10[0-7]|38|48)(;|m)" nocolor &&
	grep -a -q "$(printf "\033")\\[7m" nocolor
'

test_expect_success TMUX 'the prefix key comes from holt.conf' '
	mkdir -p "$HOLT_HOME/config" &&
	echo "prefix = C-a" >"$HOLT_HOME/config/holt.conf" &&
	tui_start p -t s &&
	tui_wait p "holt │ s" &&
	tui_keys p C-b d &&
	sleep 0.3 &&
	! tui_screen p | grep -a detached &&
	tui_keys p C-a "?" &&
	tui_wait p "C-a d *detach" &&
	tui_keys p q &&
	tui_keys p C-a d &&
	tui_wait p "detached (from session s)" &&
	rm "$HOLT_HOME/config/holt.conf"
'

test_expect_success TMUX 'a click focuses a pane' '
	tui_start m -t s &&
	tui_wait m "▸ src/" &&
	tui_keys m Home Enter &&
	sleep 0.3 &&
	! tui_screen m | grep -a "▾ src/" &&
	# A press of button 1 at column 6, row 5 (X10 encoding), in the files.
	tui_keys m -l "$(printf "\033[M &%%")" &&
	tui_keys m Home Enter &&
	tui_wait m "▾ src/"
'

test_expect_success TMUX 'the terminal is restored on exit' '
	tui_keys a C-b d &&
	tui_wait a "exit=0" &&
	tui_wait a "tty=sane"
'

test_expect_success TMUX 'SIGTERM restores the terminal' '
	tui_start h -t s &&
	tui_wait h "holt │ s" &&
	pid=$($TUI_TMUX list-panes -t h -F "#{pane_pid}") &&
	kill -TERM $(pgrep -P "$pid" -f tui-attach) &&
	tui_wait h "terminated" &&
	tui_wait h "tty=sane"
'

test_expect_success TMUX 'a crash signal restores the terminal too' '
	tui_start i -t s &&
	tui_wait i "holt │ s" &&
	pid=$($TUI_TMUX list-panes -t i -F "#{pane_pid}") &&
	kill -SEGV $(pgrep -P "$pid" -f tui-attach) &&
	tui_wait i "exit=139" &&
	tui_wait i "tty=sane"
'

test_done
