#!/bin/sh
# The input line as in the peers: readline keys, C-r history search, the
# C-c rules, Tab that completes and never leaves a line with text, slash
# commands (an unknown one is an error, never a message), @path with the
# file's text sent along, and a bracketed paste as one block.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

# sent_text N: the text of the Nth "send" the screen made (1 first).
sent_text() {
	python3 - "$FAKE_LOG" "$1" <<-\PY
	import json, sys
	sends = [m for m in map(json.loads, open(sys.argv[1])) if m.get("type") == "send"]
	n = int(sys.argv[2])
	if len(sends) >= n:
	    sys.stdout.write(sends[n - 1]["text"])
	PY
}

sends() {
	grep -c "\"type\": *\"send\"" "$FAKE_LOG" || true
}

test_expect_success TMUX 'setup' '
	mkdir -p ws/src ws/docs &&
	echo "int parse(void);" >ws/src/parser.c &&
	echo "notes" >ws/docs/a.md &&
	ln -s /etc/hostname ws/evil &&
	cat >script.json <<-JSON &&
	{ "session": { "name": "s", "state": "idle", "sandbox_state": "running",
	    "model": "openai:gpt-4.1", "mode": "auto", "step": 2, "steps_cap": 25,
	    "input_tokens": 1200, "output_tokens": 340, "cost_usd": 0.0123,
	    "workspace": "$TRASH_DIRECTORY/ws", "pending": [] },
	  "events": [] }
	JSON
	fake_start script.json &&
	tui_start a -t s &&
	tui_wait a "message the agent"
'

test_expect_success TMUX 'readline keys: M-b C-w C-y M-f M-d C-a C-e C-k' '
	tui_keys a "one two three" M-b C-w &&
	tui_wait a "^> one three\$" &&
	tui_keys a C-e " " C-y &&
	tui_wait a "^> one three two\$" &&
	tui_keys a C-a M-f M-d &&
	tui_wait a "^> one two\$" &&
	tui_keys a C-a C-k &&
	tui_wait a "message the agent" &&
	tui_keys a C-y &&
	tui_wait a "^> one two\$"
'

test_expect_success TMUX 'C-c clears the line; twice on an empty line interrupts' '
	tui_keys a C-c &&
	tui_wait a "message the agent" &&
	! sent_has type=interrupt &&
	tui_keys a C-c &&
	tui_wait a "C-c again to interrupt the agent" &&
	tui_keys a C-c &&
	sent_wait type=interrupt
'

test_expect_success TMUX 'Tab in a line with text never moves the focus' '
	tui_keys a "hello" Tab &&
	tui_wait a "Tab completes /commands and @paths here" &&
	tui_keys a "x" &&
	tui_wait a "^> hellox\$" &&
	tui_keys a C-u
'

test_expect_success TMUX 'C-r searches the history' '
	tui_keys a "first message" Enter &&
	tui_keys a "second thing" Enter &&
	test_wait_for 30 "test \$(sends) = 2" &&
	tui_keys a C-r "fir" &&
	tui_wait a "(history search) .fir.: first message" &&
	tui_keys a Enter &&
	tui_wait a "^> first message\$" &&
	sleep 0.3 &&
	test "$(sends)" = 2 &&
	tui_keys a C-u
'

test_expect_success TMUX 'slash commands: Tab completes, unknown ones are errors' '
	tui_keys a "/he" Tab &&
	tui_wait a "^> /help\$" &&
	tui_keys a Enter &&
	tui_wait a "key bindings (from the key table)" &&
	tui_keys a G &&
	tui_wait a "commands (in the input line; Tab completes)" &&
	tui_wait a "/mode \\[MODE\\]" &&
	tui_keys a q &&
	tui_keys a "/mo" Tab &&
	tui_wait a "/mode /model" &&
	tui_wait a "^> /mode\$" &&
	tui_keys a " strict" Enter &&
	sent_wait type=mode mode=strict &&
	tui_keys a "/nope now" Enter &&
	tui_wait a "/nope: no such command (/help lists them)" &&
	tui_wait a "^> /nope now\$" &&
	tui_keys a C-u "/cost" Enter &&
	tui_wait a "session: 1200 tokens in (0 cached), 340 out, .0.0123" &&
	tui_keys a "/model openai:gpt-4o" Enter &&
	sent_wait type=model model=openai:gpt-4o &&
	tui_keys a "/compact the parser errors" Enter &&
	sent_wait type=compact "focus=the parser errors" &&
	tui_keys a "/compact" Enter &&
	sent_wait type=compact !focus &&
	tui_keys a "//etc is a path" Enter &&
	test_wait_for 30 "test \$(sends) = 3" &&
	test "$(sent_text 3)" = "/etc is a path" &&
	! grep -a "/nope" "$FAKE_LOG"
'

test_expect_success TMUX '@path completes and sends the file with the message' '
	tui_keys a "read @src/pa" Tab &&
	tui_wait a "^> read @src/parser.c\$" &&
	tui_keys a "please" Enter &&
	test_wait_for 30 "test \$(sends) = 4" &&
	sent_text 4 >msg &&
	grep "^read @src/parser.c please\$" msg &&
	grep "^<file path=\"src/parser.c\">\$" msg &&
	grep "^int parse(void);\$" msg &&
	tui_keys a "@d" Tab &&
	tui_wait a "^> @docs/\$" &&
	tui_keys a C-u
'

test_expect_success TMUX '@path never reads through a link or out of the workspace' '
	tui_keys a "see @evil" Enter &&
	tui_wait a "@evil: no such file in the workspace (or a link)" &&
	tui_keys a C-u "see @../script.json" Enter &&
	tui_wait a "@../script.json: no such file in the workspace" &&
	sleep 0.3 &&
	test "$(sends)" = 4 &&
	tui_keys a C-u
'

test_expect_success TMUX 'a bracketed paste is one message, whatever its newlines' '
	printf "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: bad\n" >trace &&
	$TUI_TMUX load-buffer -b p trace &&
	$TUI_TMUX paste-buffer -p -b p -t a &&
	tui_wait a "ValueError: bad" &&
	sleep 0.3 &&
	test "$(sends)" = 4 &&
	tui_keys a Enter &&
	test_wait_for 30 "test \$(sends) = 5" &&
	sent_text 5 >msg &&
	printf "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: bad\n" >expect &&
	test_cmp expect msg
'

test_expect_success TMUX 'a long paste shows as [pasted N lines]; C-v expands it' '
	seq 1 120 >long &&
	$TUI_TMUX load-buffer -b p long &&
	$TUI_TMUX paste-buffer -p -b p -t a &&
	tui_wait a "^> \\[pasted 120 lines\\]\$" &&
	tui_keys a " and more" Enter &&
	test_wait_for 30 "test \$(sends) = 6" &&
	sent_text 6 >msg &&
	{ seq 1 120 && printf " and more"; } >expect &&
	test_cmp expect msg &&
	seq 1 8 >short8 &&
	$TUI_TMUX load-buffer -b p short8 &&
	$TUI_TMUX paste-buffer -p -b p -t a &&
	tui_wait a "^> \\[pasted 8 lines\\]\$" &&
	tui_keys a C-v &&
	tui_wait a "^· 8\$" &&
	tui_keys a C-c
'

test_expect_success TMUX 'while the agent works, the pane shows the time and tokens' '
	fake_ctl "{\"state\": {\"state\": \"working\"}}" &&
	fake_ctl "{\"event\": {\"type\": \"assistant.delta\", \"text\": \"Let me look at the parser and its tests first.\"}}" &&
	tui_wait a "the model is working · [0-9.]* \(ms\|s\) · 12 tokens so far" &&
	tui_wait a "the model is working · [1-9][0-9.]* s · " 30 &&
	fake_ctl "{\"event\": {\"type\": \"assistant.message\", \"text\": \"Let me look at the parser and its tests first.\", \"tool_calls\": [{\"id\": \"k1\", \"name\": \"run_command\", \"arguments\": {\"command\": \"make check\"}}]}}" &&
	fake_ctl "{\"event\": {\"type\": \"tool.call\", \"call_id\": \"k1\", \"name\": \"run_command\", \"arguments\": {\"command\": \"make check\"}}}" &&
	fake_ctl "{\"event\": {\"type\": \"tool.started\", \"call_id\": \"k1\", \"name\": \"run_command\"}}" &&
	tui_wait a "running run_command make check · " &&
	fake_ctl "{\"state\": {\"state\": \"idle\"}}" &&
	tui_gone a "running run_command make check · "
'

test_expect_success TMUX 'an edit is drawn as a stat line that expands to a coloured diff' '
	fake_ctl "{\"event\": {\"type\": \"tool.call\", \"call_id\": \"e1\", \"name\": \"edit_file\",
	  \"arguments\": {\"path\": \"src/parser.c\",
	    \"old_string\": \"int x;\\nint week = day / 7;\\nreturn week;\\n\",
	    \"new_string\": \"int x;\\nint week = (day + 6) / 7;\\nreturn week;\\n\"}}}" &&
	tui_wait a "edit_file src/parser.c  +1 -1" &&
	! tui_screen a | grep "old_string" &&
	tui_keys a C-b 2 &&
	tui_keys a End Up Enter &&
	tui_wait a "@@ src/parser.c @@" &&
	tui_wait a "^│.*││     int x;" &&
	tui_wait a "││    -int week = day / 7;" &&
	tui_wait a "││    +int week = (day + 6) / 7;" &&
	tui_wait a "││     return week;" &&
	! tui_screen a | grep "old_string" &&
	$TUI_TMUX capture-pane -e -p -t a | grep "+int week = (day + 6)" | grep -q "\[32m" &&
	tui_keys a Enter &&
	tui_gone a "@@ src/parser.c @@" &&
	tui_keys a C-b 4 &&
	fake_ctl "{\"event\": {\"type\": \"tool.call\", \"call_id\": \"w1\", \"name\": \"write_file\",
	  \"arguments\": {\"path\": \"docs/new.md\", \"content\": \"a\\nb\\nc\\n\"}}}" &&
	tui_wait a "write_file docs/new.md  +3 -0"
'

test_expect_success TMUX 'the agent'"'"'s Markdown is rendered; wide characters are never cut' '
	python3 - >md.json <<-\PY &&
	import json
	text = "\n".join([
	    "# The plan",
	    "Use \x60parse_week\x60 with **care**, see [the docs](https://example.com/d).",
	    "- first item",
	    "- second item",
	    "\x60\x60\x60c",
	    "int main(void) { return 0; } // the end",
	    "\x60\x60\x60",
	    "\x60\x60\x60python",
	    "def f(): return \"s\"",
	    "\x60\x60\x60",
	    "\x60\x60\x60",
	    "\u6f22" * 130,
	    "\x60\x60\x60"])
	print(json.dumps({"event": {"type": "assistant.message", "text": text,
	                            "tool_calls": []}}))
	PY
	fake_ctl "$(cat md.json)" &&
	tui_wait a "││The plan" &&
	! tui_screen a | grep -a "# The plan" &&
	tui_wait a "││Use parse_week with care, see the docs\. " &&
	tui_wait a "││• first item" &&
	tui_wait a "│││ int main(void) { return 0; } // the end" &&
	tui_wait a "│││ def f(): return \"s\"" &&
	$TUI_TMUX capture-pane -e -p -t a >colours &&
	grep -a "main" colours | grep -a -q "35mint" &&
	grep -a "35mdef" colours | grep -a -q "\[32m\"s\"" &&
	tui_screen a | grep -a "│││ 漢漢漢" >wide &&
	test_line_count -gt 1 wide &&
	! grep -a "�" wide
'

test_expect_success TMUX 'cleanup' '
	tui_stop &&
	fake_stop
'

test_done
