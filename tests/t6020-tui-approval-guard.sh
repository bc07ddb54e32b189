#!/bin/sh
# A request that shows while the user types takes no answer key: the "y"
# and "n" of a sentence go on to the input, not to the modal, until C-o
# (or a quiet second with an empty input) arms it.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

need() {
	fake_ctl "{\"event\": {\"type\": \"approval.needed\", \"request_id\": \"$1\",
	  \"call_id\": \"call-$1\", \"command\": \"$2\", \"verdict\": \"ask\",
	  \"cwd\": \"/workspace\"}}"
}

test_expect_success TMUX 'setup' '
	cat >script.json <<-\JSON &&
	{ "session": { "name": "s", "state": "working", "sandbox_state": "running",
	    "model": "openai:gpt-4.1", "mode": "auto", "step": 1, "steps_cap": 25,
	    "pending": [] },
	  "events": [] }
	JSON
	fake_start script.json &&
	tui_start a -t s &&
	tui_wait a "message the agent"
'

test_expect_success TMUX 'a request that opens over typed text is guarded' '
	tui_keys a "please fix the wor" &&
	tui_wait a "> please fix the wor" &&
	need r1 "rm -rf /workspace/src" &&
	tui_wait a "approval needed" &&
	tui_wait a "you were typing: keys go on to the input · C-o to answer" &&
	tui_keys a "k, yes and no" &&
	tui_wait a "> please fix the work, yes and no" &&
	sleep 1.2 &&
	tui_wait a "you were typing" &&
	! sent_has request_id=r1
'

test_expect_success TMUX 'C-o arms it; the typed text stays intact' '
	tui_keys a C-o &&
	tui_wait a "y allow once · a always · n deny" &&
	tui_keys a n &&
	sent_wait "type=approve" "request_id=r1" "decision=deny" &&
	tui_gone a "approval needed" &&
	tui_wait a "> please fix the work, yes and no" &&
	! sent_has type=send
'

test_expect_success TMUX 'once the line is empty, a quiet second arms it' '
	tui_keys a C-u &&
	tui_wait a "message the agent" &&
	tui_keys a x &&
	tui_wait a "> x" &&
	need r2 "make" &&
	tui_wait a "you were typing" &&
	tui_keys a y &&
	tui_wait a "> xy" &&
	tui_keys a BSpace BSpace &&
	tui_wait a "y allow once · a always · n deny" 40 &&
	! sent_has request_id=r2 &&
	tui_keys a y &&
	sent_wait "type=approve" "request_id=r2" "decision=allow"
'

test_expect_success TMUX 'a request that opens on a quiet screen answers at once' '
	sleep 0.6 &&
	need r3 "make check" &&
	tui_wait a "y allow once · a always · n deny" &&
	tui_keys a y &&
	sent_wait "type=approve" "request_id=r3" "decision=allow"
'

test_expect_success TMUX 'at 80 columns the state and the count come first; notices leave them' '
	fake_ctl "{\"state\": {\"state\": \"waiting\"}}" &&
	TUI_COLS=80 TUI_ROWS=24 tui_start n -t s &&
	tui_wait n "^ holt │ s │  waiting for you  │ sbx running" &&
	tui_keys n "/no-such-command-with-a-name-long-enough-to-fill-the-bar" Enter &&
	tui_wait n "^ holt │ s │  waiting for you .*/no-such-command" &&
	need r9 "make dist" &&
	tui_wait n "^ holt │ s │  waiting for you  │  1 approval  │"
'

test_done
