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
# The screen runs in tmux here as a user's would, but with its own prefix
# (C-b), not the one it takes inside tmux, unless a test says otherwise.
TUI_ENV="env -u TMUX"
export TERM=xterm-256color
LF='
'

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
	# $! may have been a wrapper's pid (a python3 that is a version
	# manager's shim execs the interpreter as another process).
	pkill -f "fake-server.py --socket $FAKE_SOCKET " 2>/dev/null
	return 0
}

# fake_ctl JSON: prints "ok N" (N: the last line number of a flood).
fake_ctl() {
	python3 "$HOLT_SRC_DIR/tests/fake-server.py" --ctl "$FAKE_CTL" \
		--send "$1" >"$TRASH_DIRECTORY/ctl.out" &&
	grep -q "^ok" "$TRASH_DIRECTORY/ctl.out"
}

# tui_start NAME [ARGS...]: a tmux session NAME running the screen.
tui_start() {
	name=$1
	shift
	$TUI_TMUX new-session -d -s "$name" -x "${TUI_COLS:-200}" \
		-y "${TUI_ROWS:-60}" "$TUI_ENV $TUI_CMD $*; echo \"exit=\$?\"; stty -a | tr \" \" \"\\n\" | grep -qx icanon && echo tty=sane; sleep 30"
}

tui_screen() {
	$TUI_TMUX capture-pane -p -t "$1"
}

tui_wait() {
	test_wait_for "${3:-50}" "$TUI_TMUX capture-pane -p -t '$1' | grep -a -q -e '$2'" 2>/dev/null ||
		tui_failed "$@"
}

tui_gone() {
	test_wait_for "${3:-50}" "! $TUI_TMUX capture-pane -p -t '$1' | grep -a -q -e '$2'" 2>/dev/null ||
		tui_failed "$@"
}

# The screen (its non-blank lines, cut) and what was awaited, last.
tui_failed() {
	echo "--- screen of $1:"
	tui_screen "$1" | grep -a -v "^[│ ]*\$" | cut -c1-160 | head -n 32
	echo "--- waited for: $2"
	return 1
}

tui_keys() {
	name=$1
	shift
	$TUI_TMUX send-keys -t "$name" "$@"
}

tui_stop() {
	$TUI_TMUX kill-server 2>/dev/null
	# A screen that outlives its terminal (under --enable-asan one can hang
	# in LeakSanitizer's exit check) is not left behind.
	test_wait_for 20 "! pgrep -f 'tests/tui-attach -L $HOLT_SOCKET'" 2>/dev/null
	pkill -9 -f "tests/tui-attach -L $HOLT_SOCKET" 2>/dev/null
	return 0
}

# sent_has KEY=VALUE... [!KEY]: the screen sent a frame with these fields
# (and without the !KEY ones). sent_wait: the same, waiting up to 3 s.
sent_has() {
	python3 - "$FAKE_LOG" "$@" <<'PY'
import json, sys
want = sys.argv[2:]
for line in open(sys.argv[1]):
    m = json.loads(line)
    ok = True
    for w in want:
        if w.startswith("!"):
            ok = ok and w[1:] not in m
        else:
            k, v = w.split("=", 1)
            ok = ok and k in m and str(m[k]) == v
    if ok:
        sys.exit(0)
sys.exit(1)
PY
}

sent_wait() {
	n=30
	while [ $n -gt 0 ]; do
		sent_has "$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	echo "the screen did not send: $*"
	return 1
}

test_when_finished 'tui_stop; fake_stop'
