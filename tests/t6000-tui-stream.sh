#!/bin/sh
# The screen: a session streams and the transcript, tree and output panes
# show it; input, interrupt, detach and reattach; two screens on one session.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

WS=$TRASH_DIRECTORY/ws

test_expect_success TMUX 'setup: a workspace and a scripted session' '
	mkdir -p "$WS/src" "$WS/tests" &&
	printf "int main(void)\n{\n\treturn 0;\n}\n" >"$WS/src/parser.c" &&
	echo "test" >"$WS/tests/parser.test" &&
	git -C "$WS" init -q &&
	git -C "$WS" add . &&
	git -C "$WS" -c user.name=t -c user.email=t@t commit -qm base &&
	echo "/* changed */" >>"$WS/src/parser.c" &&
	echo "notes" >"$WS/notes.txt" &&
	cat >script.json <<-JSON &&
	{ "session": { "name": "s", "state": "working", "sandbox": "sbx-0123456789ab",
	    "sandbox_state": "running", "model": "openai:gpt-4.1", "mode": "auto",
	    "step": 1, "steps_cap": 25, "input_tokens": 12000, "output_tokens": 400,
	    "cost_usd": 0.03, "pending": [], "workspace": "$WS",
	    "base_commit": null, "test_command": "make test" },
	  "events": [
	    { "type": "session.created" },
	    { "type": "user.message", "text": "fix the week number" } ],
	  "live": [
	    { "delay_ms": 300, "event": { "type": "assistant.delta", "text": "The week number " } },
	    { "delay_ms": 50, "event": { "type": "assistant.delta", "text": "is off by one.\n\`\`\`\nweek = day / 7;\n\`\`\`\n" } },
	    { "delay_ms": 50, "event": { "type": "assistant.message", "text": "The week number is off by one.\n\`\`\`\nweek = day / 7;\n\`\`\`\n", "tool_calls": [] } },
	    { "delay_ms": 10, "event": { "type": "tool.call", "call_id": "c1", "name": "read_file", "arguments": { "path": "src/parser.c" } } },
	    { "delay_ms": 10, "event": { "type": "tool.started", "call_id": "c1" } },
	    { "delay_ms": 10, "event": { "type": "tool.finished", "call_id": "c1", "duration_ms": 3, "result": "int main(void)" } },
	    { "delay_ms": 10, "event": { "type": "tool.call", "call_id": "c2", "name": "run_tests", "arguments": {} } },
	    { "delay_ms": 10, "event": { "type": "tool.started", "call_id": "c2" } },
	    { "delay_ms": 10, "event": { "type": "tool.output", "call_id": "c2", "stream": "stdout", "data": "\u001b[31mFAIL\u001b[0m tests/parser.test 週番号 🎉\n1 failed\n" } },
	    { "delay_ms": 10, "event": { "type": "tool.finished", "call_id": "c2", "exit_code": 1, "duration_ms": 1200, "result": "TESTS FAILED\n1 failed" } },
	    { "delay_ms": 10, "state": { "step": 2, "state": "idle" } } ] }
	JSON
	fake_start script.json
'

test_expect_success TMUX 'the transcript streams and tool calls show their status' '
	tui_start a -t s &&
	tui_wait a "The week number is off by one" &&
	tui_wait a "✓ read_file src/parser.c" &&
	tui_wait a "✗ run_tests .*exit 1  1.2 s" &&
	tui_wait a "│ week = day / 7;" &&
	tui_wait a "> fix the week number"
'

test_expect_success TMUX 'the status bar shows the session' '
	tui_wait a "holt │ s │ sbx running │ openai:gpt-4.1 │ step 2/25 │ 12.4k tok \$0.03 │ auto │ *idle"
'

test_expect_success TMUX 'the output pane shows the test run, its colours and verdict' '
	tui_wait a "output: make test  exit 1  1.2 s  TESTS FAILED" &&
	tui_wait a "FAIL tests/parser.test 週番号 🎉" &&
	tui_wait a "1 failed" &&
	$TUI_TMUX capture-pane -e -p -t a >colours &&
	grep -q "$(printf "\033\\[31mFAIL")" colours
'

test_expect_success TMUX 'the tree shows the workspace with git markers' '
	tui_wait a "▸ src/ *M" &&
	tui_wait a "notes.txt *?" &&
	tui_wait a "▸ tests/"
'

test_expect_success TMUX 'the tree updates when the server says the workspace changed' '
	echo new >"$WS/added-later.txt" &&
	fake_ctl "{\"files\": {\"dirs\": [\"\"]}}" &&
	tui_wait a "added-later.txt *?" &&
	rm "$WS/notes.txt" &&
	fake_ctl "{\"files\": {\"dirs\": [], \"all\": true}}" &&
	tui_gone a "notes.txt"
'

test_expect_success TMUX 'the tree does not watch this host: only the server tells it' '
	echo new >"$WS/not-told.txt" &&
	sleep 1 &&
	tui_screen a >screen.1 &&
	! grep "not-told.txt" screen.1 &&
	fake_ctl "{\"files\": {\"dirs\": [\"src\"]}}" &&
	sleep 0.5 &&
	tui_screen a >screen.2 &&
	! grep "not-told.txt" screen.2 &&
	fake_ctl "{\"files\": {\"dirs\": [\"\"]}}" &&
	tui_wait a "not-told.txt *?" &&
	rm "$WS/not-told.txt" &&
	fake_ctl "{\"files\": {\"dirs\": [\"\"]}}" &&
	tui_gone a "not-told.txt"
'

test_expect_success TMUX 'a folder unfolds and a file opens in the viewer' '
	tui_keys a C-b 1 &&
	tui_keys a Home Enter &&
	tui_wait a "▾ src/" &&
	tui_wait a "  parser.c *M" &&
	tui_keys a Down Enter &&
	tui_wait a " src/parser.c " &&
	tui_wait a "1  int main(void)" &&
	tui_wait a "5  /\\* changed \\*/" &&
	tui_keys a q &&
	tui_gone a "1 int main(void)"
'

test_expect_success TMUX 'Enter on a tool call shows its arguments and result' '
	tui_keys a C-b 2 &&
	tui_keys a Up Enter &&
	tui_wait a "result:" &&
	tui_wait a "TESTS FAILED" &&
	tui_keys a Enter &&
	tui_gone a "result:"
'

test_expect_success TMUX 'search finds text in the transcript, or says it is not there' '
	tui_keys a / &&
	tui_wait a "search:" &&
	tui_keys a "off by" Enter &&
	tui_gone a "search:" &&
	! tui_screen a | grep -q "no more matches" &&
	tui_keys a / C-u "int main" Enter &&
	tui_wait a "result:" &&
	tui_wait a "      int main(void)" &&
	tui_keys a Enter &&
	tui_gone a "result:" &&
	tui_keys a / C-u &&
	tui_keys a "zzz-not-there" Enter &&
	tui_wait a "zzz-not-there.: no more matches"
'

test_expect_success TMUX 'help lists the key table' '
	tui_keys a C-b "?" &&
	tui_wait a "key bindings" &&
	tui_wait a "C-b d *detach" &&
	tui_wait a "M-Enter *new line" &&
	tui_keys a q &&
	tui_gone a "key bindings"
'

test_expect_success TMUX 'the input line sends a message; Esc interrupts' '
	tui_keys a C-b 4 &&
	tui_keys a "hello agent" &&
	tui_wait a "> hello agent" &&
	tui_keys a C-j "second line" M-Enter "third" &&
	tui_wait a "^· third" &&
	tui_keys a Enter &&
	sent_wait "type=send" "text=hello agent${LF}second line${LF}third" &&
	tui_wait a "> hello agent" &&
	tui_keys a Escape &&
	sent_wait "type=interrupt"
'

test_expect_success TMUX 'Up and Down walk the history of sent messages' '
	tui_keys a C-b 4 &&
	tui_gone a "^· third" &&
	tui_keys a Up &&
	tui_wait a "^· third" &&
	tui_wait a "^· second line" &&
	tui_keys a Down &&
	tui_gone a "^· third" &&
	tui_wait a "^> message the agent"
'

test_expect_success TMUX 'C-b and the arrows move the focus between panes' '
	tui_wait a "▾ src/" &&
	tui_keys a C-b Up C-b Up C-b Left &&
	tui_keys a Home Enter &&
	tui_wait a "▸ src/" &&
	tui_keys a C-b Right C-b Down C-b Down &&
	tui_keys a "typed" &&
	tui_wait a "^> typed" &&
	tui_keys a C-u
'

test_expect_success TMUX 'a second screen on the session sees the same events' '
	tui_start b -t s &&
	tui_wait b "The week number is off by one" &&
	fake_ctl "{\"event\": {\"type\": \"assistant.message\", \"text\": \"both of you see this\"}}" &&
	tui_wait a "both of you see this" &&
	tui_wait b "both of you see this"
'

test_expect_success TMUX 'detach leaves; reattach shows the same state' '
	tui_keys a C-b d &&
	tui_wait a "detached (from session s)" &&
	tui_wait a "exit=0" &&
	sent_wait "type=detach" &&
	tui_start c -t s &&
	tui_wait c "both of you see this" &&
	tui_wait c "✗ run_tests .*exit 1" &&
	tui_wait c "> hello agent"
'

test_expect_success 'without a terminal the screen refuses to start' '
	test_must_fail $TUI_CMD -t s </dev/null >out 2>err &&
	grep "the screen needs a terminal" err
'

test_expect_success TMUX 'an unknown session is refused before the screen starts' '
	tui_start d -t nosuch &&
	tui_wait d "session .nosuch.: no such session" &&
	tui_wait d "exit=1"
'

test_done
