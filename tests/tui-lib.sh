# tests/tui-lib.sh: driving the screen in a real terminal (tmux) against
# tests/fake-server.py. Source after lib.sh.
#
#	fake_start script.json		# server on this script's socket
#	tui_start NAME [ARGS]		# the screen in a 200x60 tmux window
#	tui_wait NAME 'regex'		# until the screen shows it (5 s)
#	tui_keys NAME KEYS...		# tmux send-keys
#	tui_screen NAME >file		# the screen as text
#	fake_ctl '{"event": {...}}'	# inject into the fake server

TUI_TMUX="tmux -u -f /dev/null -L tui$$"
FAKE_SOCKET=$HOLT_HOME/run/$HOLT_SOCKET
FAKE_CTL=$TRASH_DIRECTORY/ctl.sock
FAKE_LOG=$TRASH_DIRECTORY/sent.jsonl
TUI_CMD=${HOLT_TUI_CMD:-"$HOLT_BUILD_DIR/tests/tui-attach -L $HOLT_SOCKET"}
export TERM=xterm-256color

fake_start() {
	mkdir -p "$HOLT_HOME/run" && chmod 700 "$HOLT_HOME/run" &&
	python3 "$HOLT_SRC_DIR/tests/fake-server.py" --socket "$FAKE_SOCKET" \
		--ctl "$FAKE_CTL" --script "$1" --log "$FAKE_LOG" \
		--lifetime 120 >"$TRASH_DIRECTORY/fake.out" 2>&1 &
	echo $! >"$TRASH_DIRECTORY/fake.pid"
	test_wait_for 50 "test -S '$FAKE_SOCKET' && test -S '$FAKE_CTL'"
}

fake_stop() {
	test -f "$TRASH_DIRECTORY/fake.pid" &&
	kill "$(cat "$TRASH_DIRECTORY/fake.pid")" 2>/dev/null
	rm -f "$TRASH_DIRECTORY/fake.pid"
	return 0
}

fake_ctl() {
	python3 "$HOLT_SRC_DIR/tests/fake-server.py" --ctl "$FAKE_CTL" \
		--send "$1" >/dev/null
}

# tui_start NAME [ARGS...]: a tmux session NAME running the screen.
tui_start() {
	name=$1
	shift
	$TUI_TMUX new-session -d -s "$name" -x "${TUI_COLS:-200}" \
		-y "${TUI_ROWS:-60}" "$TUI_CMD $*; echo \"exit=\$?\"; sleep 30"
}

tui_screen() {
	$TUI_TMUX capture-pane -p -t "$1"
}

tui_wait() {
	test_wait_for "${3:-50}" "$TUI_TMUX capture-pane -p -t '$1' | grep -q -e '$2'" || {
		echo "--- screen of $1:"; tui_screen "$1"; return 1; }
}

tui_gone() {
	test_wait_for "${3:-50}" "! $TUI_TMUX capture-pane -p -t '$1' | grep -q -e '$2'" || {
		echo "--- screen of $1:"; tui_screen "$1"; return 1; }
}

tui_keys() {
	name=$1
	shift
	$TUI_TMUX send-keys -t "$name" "$@"
}

tui_stop() {
	$TUI_TMUX kill-server 2>/dev/null
	return 0
}

# sent_has 'python-expression on m': a frame the screen sent matches.
sent_has() {
	python3 - "$FAKE_LOG" "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if eval(sys.argv[2]):
        sys.exit(0)
sys.exit(1)
PY
}

test_when_finished 'tui_stop; fake_stop'
