#!/bin/sh
# The screen inside tmux: the prefix is C-g (C-b stays tmux's, so C-b d in
# a nested tmux detaches tmux and not holt), the screen says so, the hint
# row shows the prefix in effect, and holt.conf's prefix still wins. holt
# attach -t takes a unique start of a name; [server exited] says how to
# come back.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

INNER="tmux -u -f /dev/null -L inner$$"

detaches() {
	grep -c "\"type\": *\"detach\"" "$FAKE_LOG"
}
test_when_finished "$INNER kill-server 2>/dev/null; true"

test_expect_success TMUX 'setup' '
	cat >script.json <<-\JSON &&
	{ "session": { "name": "s", "state": "idle", "sandbox_state": "running",
	    "model": "openai:gpt-4.1", "mode": "auto", "step": 0, "steps_cap": 25,
	    "pending": [] },
	  "events": [] }
	JSON
	fake_start script.json
'

test_expect_success TMUX 'inside tmux the prefix is C-g and the screen says so' '
	TUI_ENV=env &&
	tui_start a -t s &&
	tui_wait a "inside tmux the prefix is C-g (C-b stays tmux.s): C-g d detaches" &&
	tui_wait a "Esc interrupt · C-g d detach · C-g ? help" &&
	tui_keys a C-b d &&
	sleep 0.3 &&
	! sent_has type=detach &&
	tui_keys a C-g "?" &&
	tui_wait a "C-g d *detach" &&
	tui_keys a q &&
	tui_keys a C-g d &&
	sent_wait type=detach &&
	tui_wait a "detached (from session s)"
'

test_expect_success TMUX 'in a nested tmux, C-b d detaches tmux and holt goes on' '
	before=$(detaches) &&
	$TUI_TMUX new-session -d -s n -x 200 -y 60 \
		"env -u TMUX $INNER new-session -s in \"$TUI_CMD -t s\"; sleep 30" &&
	tui_wait n "C-g d detach" &&
	tui_keys n C-b d &&
	tui_wait n "detached (from session in)" &&
	$INNER has-session -t in &&
	sleep 0.3 &&
	test "$(detaches)" = "$before" &&
	$INNER kill-server
'

test_expect_success TMUX 'in a nested tmux, C-g d detaches holt' '
	$TUI_TMUX new-session -d -s m -x 200 -y 60 \
		"env -u TMUX $INNER new-session -s in2 \"$TUI_CMD -t s\"; sleep 30" &&
	tui_wait m "C-g d detach" &&
	before=$(detaches) &&
	tui_keys m C-g d &&
	test_wait_for 30 "test \$(detaches) -gt $before" &&
	tui_wait m "exited" &&
	! $INNER has-session -t in2 2>/dev/null
'

test_expect_success TMUX 'prefix in holt.conf wins inside tmux too' '
	mkdir -p "$HOLT_HOME/config" &&
	echo "prefix = C-a" >"$HOLT_HOME/config/holt.conf" &&
	TUI_ENV=env &&
	tui_start c -t s &&
	tui_wait c "Esc interrupt · C-a d detach · C-a ? help" &&
	! tui_screen c | grep "inside tmux" &&
	rm "$HOLT_HOME/config/holt.conf"
'

test_expect_success TMUX 'outside tmux the prefix stays C-b' '
	TUI_ENV="env -u TMUX" &&
	tui_start d -t s &&
	tui_wait d "Esc interrupt · C-b d detach · C-b ? help"
'

test_expect_success TMUX '[server exited] says how to come back' '
	fake_stop &&
	tui_wait d "\[server exited: holt attach -t s brings the session back\]"
'

test_expect_success TMUX 'cleanup' '
	tui_stop
'

test_done
