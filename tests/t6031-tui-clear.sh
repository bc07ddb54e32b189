#!/bin/sh
# /clear: a new conversation in the same session. The model no longer sees
# what came before (on the next request, after kill -9 of the server, and
# for a screen attached again), the sandbox and its files stay, and the
# agent pane marks where the new conversation begins.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/lib-mock-llm.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

TUI_CMD="$HOLT attach"
LOG=$HOLT_HOME/data/sessions

test_expect_success BWRAP,TMUX 'setup: a session that wrote a file' '
	make_repo repo &&
	write_policy &&
	cat >clear.json <<-\JSON &&
	{ "turns": [
	  { "text": "Noting it.", "tool_calls": [ { "name": "write_file", "arguments": { "path": "notes.txt", "content": "KEPT-FILE\n" } } ] },
	  { "text": "FIRST-ANSWER", "tool_calls": [] },
	  { "delay_ms": 1500, "text": "SECOND-ANSWER", "tool_calls": [] },
	  { "text": "THIRD-ANSWER", "tool_calls": [ { "name": "read_file", "arguments": { "path": "notes.txt" } } ] },
	  { "text": "FOURTH-ANSWER", "tool_calls": [] } ] }
	JSON
	("$TEST_DIRECTORY/mock-llm" --script clear.json --idle-exit 120 \
		--log mock.log >mock.port 2>mock.err & echo $! >mock.pid) &&
	test_wait_for 50 "test -s mock.port" &&
	MOCK_URL=http://127.0.0.1:$(head -n 1 mock.port) &&
	holt new -d -s s --repo "$TRASH_DIRECTORY/repo" --model openai:m \
		--base-url "$MOCK_URL/v1" "FIRST-MESSAGE" >/dev/null &&
	tui_start a -t s &&
	tui_wait a "FIRST-ANSWER" 150 &&
	tui_wait a "run finished: done"
'
# The mock serves all the tests below; cleanup stops it.
mock_stop() { kill "$(cat mock.pid)" 2>/dev/null; return 0; }

test_expect_success BWRAP,TMUX '/clear logs conversation.cleared and marks the pane' '
	tui_keys a "/clear" Enter &&
	tui_wait a "new conversation (/clear by user)" &&
	grep "\"type\":\"conversation.cleared\".*\"by\":\"user\"" "$LOG/s/events.jsonl" &&
	holt log -t s | grep "new conversation (cleared by user)"
'

test_expect_success BWRAP,TMUX 'the next request holds only the new conversation' '
	tui_keys a "SECOND-MESSAGE" Enter &&
	tui_wait a "working" 50 &&
	tui_keys a "/clear" Enter &&
	tui_wait a "error: session .s.: the agent is working" &&
	tui_wait a "SECOND-ANSWER" 150 &&
	test $(wc -l <mock.log) = 3 &&
	sed -n 3p mock.log >req3 &&
	grep SECOND-MESSAGE req3 &&
	! grep FIRST-MESSAGE req3 &&
	! grep FIRST-ANSWER req3 &&
	! grep KEPT-FILE req3 &&
	test $(grep -c "\"type\":\"conversation.cleared\"" "$LOG/s/events.jsonl") = 1
'

test_expect_success BWRAP,TMUX 'after kill -9 of the server the conversation is still the new one; the files are kept' '
	tui_stop &&
	kill -9 $(server_pid) &&
	holt send -t s "THIRD-MESSAGE" &&
	test_wait_for 150 "holt log -t s | grep -q FOURTH-ANSWER" &&
	sed -n 5p mock.log >req5 &&
	grep THIRD-MESSAGE req5 &&
	grep SECOND-MESSAGE req5 &&
	grep KEPT-FILE req5 &&
	! grep FIRST-MESSAGE req5 &&
	! grep FIRST-ANSWER req5
'

test_expect_success BWRAP,TMUX 'attached again: the old transcript, then the marker' '
	tui_start b -t s &&
	tui_wait b "FOURTH-ANSWER" 100 &&
	tui_screen b >screen &&
	grep -n "FIRST-ANSWER" screen | head -n 1 | cut -d: -f1 >first &&
	grep -n "new conversation (/clear by user)" screen | cut -d: -f1 >mark &&
	grep -n "SECOND-ANSWER" screen | cut -d: -f1 >second &&
	test $(cat first) -lt $(cat mark) &&
	test $(cat mark) -lt $(cat second)
'

test_expect_success BWRAP,TMUX 'cleanup' '
	tui_stop &&
	holt kill-session -t s &&
	mock_stop
'

test_done
