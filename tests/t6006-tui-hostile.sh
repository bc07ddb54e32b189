#!/bin/sh
# Hostile input: malformed events and states from the server, escape
# sequences in messages, output and file names. The screen neither crashes
# nor lets a sequence reach the terminal.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

WS=$TRASH_DIRECTORY/ws

test_expect_success TMUX 'setup' '
	mkdir -p "$WS" &&
	touch "$WS/$(printf "evil\033]2;pwned\007name")" &&
	cat >script.json <<-JSON &&
	{ "session": { "name": "s", "state": "idle", "pending": [], "workspace": "$WS" },
	  "events": [] }
	JSON
	fake_start script.json &&
	tui_start a -t s &&
	tui_wait a "holt │ s"
'

test_expect_success TMUX 'malformed events and states are ignored' '
	for ev in \
	    "{\"type\": null}" \
	    "{\"type\": 5}" \
	    "{\"type\": \"approval.needed\"}" \
	    "{\"type\": \"approval.decided\", \"request_id\": 7}" \
	    "{\"type\": \"tool.finished\", \"call_id\": \"nope\", \"exit_code\": \"x\"}" \
	    "{\"type\": \"tool.call\", \"call_id\": 3, \"name\": [], \"arguments\": null}" \
	    "{\"type\": \"tool.call\", \"call_id\": \"k\", \"name\": \"run_command\", \"arguments\": \"{not json\"}" \
	    "{\"type\": \"tool.started\", \"call_id\": \"k\"}" \
	    "{\"type\": \"tool.output\", \"call_id\": \"k\", \"data\": 12}" \
	    "{\"type\": \"tool.output\", \"call_id\": \"k\"}" \
	    "{\"type\": \"assistant.delta\", \"text\": 5}" \
	    "{\"type\": \"assistant.message\", \"text\": {}}" \
	    "{\"type\": \"run.finished\", \"steps\": \"many\"}" \
	    "{\"type\": \"error\"}" \
	    "{\"type\": \"user.message\", \"text\": \"\"}"; do
		fake_ctl "{\"event\": $ev}" || return 1
	done &&
	fake_ctl "{\"state\": {\"step\": \"x\", \"pending\": \"no\", \"workspace\": 5, \"mode\": []}}" &&
	fake_ctl "{\"event\": {\"type\": \"assistant.message\", \"text\": \"still alive\"}}" &&
	tui_wait a "still alive" &&
	tui_keys a "typing works" &&
	tui_wait a "^> typing works"
'

test_expect_success TMUX 'escape sequences in text never reach the terminal' '
	fake_ctl "{\"event\": {\"type\": \"assistant.message\", \"text\": \"a\\u001b]2;pwned\\u0007b\\u001b[2Jc\\u001bPq\\u001b\\\\d\"}}" &&
	fake_ctl "{\"event\": {\"type\": \"tool.call\", \"call_id\": \"e\", \"name\": \"run_command\", \"arguments\": {\"command\": \"x\\u001b]2;pwned\\u0007\"}}}" &&
	fake_ctl "{\"event\": {\"type\": \"tool.started\", \"call_id\": \"e\"}}" &&
	fake_ctl "{\"event\": {\"type\": \"tool.output\", \"call_id\": \"e\", \"data\": \"out\\u001b]2;pwned\\u0007put\\u001b[?1049l\\u001b[31mred\\u001b[0m\\n\"}}" &&
	tui_wait a "output\\? *red" &&
	tui_wait a "run_command x?]2;pwned?" &&
	tui_wait a "evil?]2;pwned?name" &&
	test "$($TUI_TMUX display-message -p -t a "#{pane_title}")" != pwned &&
	tui_wait a "holt │ s"
'

test_expect_success TMUX 'a 2 MB line is wrapped and bounded' '
	fake_ctl "{\"flood\": {\"call_id\": \"e\", \"bytes\": 2000000, \"line\": 2000000}}" &&
	tui_wait a "^│xxxxxxxxxxxxxxxxx" &&
	tui_keys a "x" &&
	tui_wait a "^> typing worksx"
'

test_expect_success TMUX 'a flood of tabs and colours without a newline is split too' '
	python3 -c "
import json
print(json.dumps({\"event\": {\"type\": \"tool.output\", \"call_id\": \"e\",
    \"data\": \"\t\" * 300000 + \"\x1b[31m\" * 100000 + \"end-of-flood\\n\"}}))
" >tabs.json &&
	fake_ctl @tabs.json &&
	tui_wait a "end-of-flood" &&
	tui_keys a "y" &&
	tui_wait a "^> typing worksxy"
'

test_expect_success TMUX 'wide characters typed into the input line are sent whole' '
	tui_keys a C-u "日本語 🎉 ok" &&
	tui_wait a "^> 日本語 🎉 ok" &&
	tui_keys a BSpace BSpace BSpace BSpace "é" Enter &&
	sent_wait "type=send" "text=日本語 é"
'

test_done
