#!/bin/sh
# The mouse: a click focuses the pane under it and selects the row; a
# second click (or a double click) on the selected row opens it: a file
# in the viewer, a directory folds or unfolds, a tool call shows its
# arguments and result. Clicks are mouse sequences typed into the pane,
# as tmux hands them to the program.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

WS=$TRASH_DIRECTORY/ws

# click NAME REGEX: button 1 pressed and released on the first screen row
# matching REGEX, two columns into the match. The X10 encoding (ESC [ M,
# then button, column and row as bytes from 32), as tmux passes it on to a
# pane whose TERM is screen.
click() {
	tui_screen "$1" >click.screen &&
	seq=$(python3 - "$2" click.screen <<-\PY
	import re, sys
	for row, line in enumerate(open(sys.argv[2]).read().split("\n")):
	    m = re.search(sys.argv[1], line)
	    if m:
	        col = m.start() + 2
	        assert col < 94, "column %d: past what X10 can say" % col
	        sys.stdout.write("\033[M %c%c\033[M#%c%c" %
	            (33 + col, 33 + row, 33 + col, 33 + row))
	        sys.exit(0)
	sys.exit("no row matches " + sys.argv[1])
	PY
	) &&
	tui_keys "$1" -l "$seq"
}

test_expect_success TMUX 'setup: a workspace and a session with two tool calls' '
	mkdir -p "$WS/src" &&
	printf "int main(void)\n{\n\treturn 0;\n}\n" >"$WS/src/parser.c" &&
	echo "some notes" >"$WS/notes.txt" &&
	cat >script.json <<-JSON &&
	{ "session": { "name": "s", "state": "idle", "sandbox_state": "running",
	    "model": "m", "mode": "auto", "step": 2, "steps_cap": 25,
	    "pending": [], "workspace": "$WS" },
	  "events": [
	    { "type": "user.message", "text": "look around" },
	    { "type": "tool.call", "call_id": "c1", "name": "read_file", "arguments": { "path": "src/parser.c" } },
	    { "type": "tool.finished", "call_id": "c1", "duration_ms": 3, "result": "int main(void)" },
	    { "type": "tool.call", "call_id": "c2", "name": "run_tests", "arguments": {} },
	    { "type": "tool.finished", "call_id": "c2", "exit_code": 1, "duration_ms": 1200, "result": "TESTS FAILED" } ] }
	JSON
	fake_start script.json &&
	tui_start a -t s &&
	tui_wait a "▸ src/" &&
	tui_wait a "✗ run_tests"
'

test_expect_success TMUX 'a first click on the selected row of another pane only focuses it' '
	tui_keys a C-b 4 &&
	click a "▸ src/" &&
	sleep 0.5 &&
	tui_wait a "▸ src/" &&
	! tui_screen a | grep -q "parser.c *\$"
'

test_expect_success TMUX 'a click selects a directory, a second click unfolds and folds it' '
	click a "notes.txt" &&
	click a "▸ src/" &&
	sleep 0.5 &&
	tui_wait a "▸ src/" &&
	click a "▸ src/" &&
	tui_wait a "▾ src/" &&
	tui_wait a "^│    parser.c" &&
	click a "▾ src/" &&
	tui_wait a "▸ src/" &&
	tui_gone a "^│    parser.c"
'

test_expect_success TMUX 'a click selects a file (Enter opens that one); a double click opens it' '
	click a "notes.txt" &&
	sleep 0.3 &&
	! tui_screen a | grep -q "1  some notes" &&
	tui_keys a Enter &&
	tui_wait a "1  some notes" &&
	tui_keys a q &&
	tui_gone a "1  some notes" &&
	click a "▸ src/" &&
	click a "notes.txt" &&
	click a "notes.txt" &&
	tui_wait a "1  some notes" &&
	tui_keys a q &&
	tui_gone a "1  some notes"
'

test_expect_success TMUX 'a click on a tool call selects it; a second click opens it' '
	click a "✓ read_file src/parser.c" &&
	sleep 0.3 &&
	! tui_screen a | grep -q "result:" &&
	click a "✓ read_file src/parser.c" &&
	tui_wait a "result:" &&
	tui_wait a "int main(void)" &&
	! tui_screen a | grep -q "TESTS FAILED" &&
	click a "✓ read_file src/parser.c" &&
	tui_gone a "result:"
'

test_expect_success TMUX 'Enter opens the tool call a click selected' '
	click a "✗ run_tests" &&
	sleep 0.3 &&
	! tui_screen a | grep -q "result:" &&
	tui_keys a Enter &&
	tui_wait a "result:" &&
	tui_wait a "TESTS FAILED" &&
	! tui_screen a | grep -q "int main(void)"
'

test_done
