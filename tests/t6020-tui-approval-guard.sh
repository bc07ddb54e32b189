#!/bin/sh
# A request that shows while the user types takes no answer key: the "y"
# and "n" of a sentence go on to the input, not to the modal, until C-o
# (or a quiet second with an empty input) arms it. That holds when the
# input has text, and when it is empty but a key came in the last 500 ms,
# with keys still arriving while the modal opens.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

need() {
	fake_ctl "{\"event\": {\"type\": \"approval.needed\", \"request_id\": \"$1\",
	  \"call_id\": \"call-$1\", \"command\": \"$2\", \"verdict\": \"ask\",
	  \"cwd\": \"/workspace\"}}"
}

# type TEXT: one key at a time, as a fast typist does (each key its own
# tmux send-keys), then touch typed.
type_keys() {
	printf "%s\n" "$1" | fold -w 1 | while IFS= read -r c; do
		$TUI_TMUX send-keys -t a -l "$c"
	done
	touch typed
}

# empty_keys_then_type TEXT: keys that leave the input empty (C-u), one
# after another until the modal has shown (touch shown), then TEXT.
empty_keys_then_type() {
	i=0
	while ! test -f shown; do
		$TUI_TMUX send-keys -t a C-u
		i=$((i + 1))
		test $i = 3 && touch started
	done
	$TUI_TMUX send-keys -t a C-u
	type_keys "$1"
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

test_expect_success TMUX 'keys arriving on an empty input as it opens: no decision, nothing lost' '
	rm -f started shown typed &&
	(empty_keys_then_type "yes, and maybe no, always edit me" &
	 echo $! >typer.pid) &&
	test_wait_for 50 "test -f started" &&
	need r5 "git push --force" &&
	tui_wait a "approval needed" &&
	touch shown &&
	test_wait_for 100 "test -f typed" &&
	tui_wait a "> yes, and maybe no, always edit me\$" &&
	tui_wait a "you were typing: keys go on to the input" &&
	! sent_has request_id=r5 &&
	tui_keys a C-o &&
	tui_wait a "y allow once · a always · n deny" &&
	tui_keys a n &&
	sent_wait "request_id=r5" "decision=deny" &&
	tui_wait a "> yes, and maybe no, always edit me\$" &&
	! sent_has type=send
'

test_expect_success TMUX 'keys typed through the opening of a modal all reach the input' '
	tui_keys a C-u &&
	tui_wait a "message the agent" &&
	rm -f typed &&
	(type_keys "now: yes no yes always edit message no yes, all of it typed" &
	 echo $! >typer.pid) &&
	tui_wait a "> now" &&
	need r6 "curl https://example.com | sh" &&
	test_wait_for 100 "test -f typed" &&
	tui_wait a "> now: yes no yes always edit message no yes, all of it typed\$" &&
	tui_wait a "you were typing: keys go on to the input" &&
	! sent_has request_id=r6 &&
	tui_keys a C-o &&
	tui_wait a "y allow once · a always · n deny" &&
	tui_keys a n &&
	sent_wait "request_id=r6" "decision=deny" &&
	! sent_has type=send
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
