#!/bin/sh
# The approval modal: y, n, a (with an editable rule and its wider
# alternative), e, m; queued requests; manual-mode writes show their diff;
# a read-only screen cannot answer.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

need() {
	# need ID COMMAND: an approval request for a shell command.
	fake_ctl "{\"event\": {\"type\": \"approval.needed\", \"request_id\": \"$1\",
	  \"call_id\": \"call-$1\", \"command\": \"$2\", \"verdict\": \"ask\",
	  \"cwd\": \"/workspace\",
	  \"parts\": [ {\"command\": \"npm test\", \"verdict\": \"allow\", \"rule\": \"^npm (test|ci)\$\", \"source\": \"user\"},
	               {\"command\": \"curl x\", \"verdict\": \"ask\", \"reason\": \"no rule\"} ],
	  \"suggestion\": {\"rule\": \"^curl x\$\", \"wider\": \"^curl(\\\\\\\\s|\$)\"}}}"
}

test_expect_success TMUX 'setup' '
	cat >script.json <<-\JSON &&
	{ "session": { "name": "s", "state": "waiting", "sandbox_state": "running",
	    "model": "openai:gpt-4.1", "mode": "auto", "step": 3, "steps_cap": 25,
	    "pending": [] },
	  "events": [ { "type": "tool.call", "call_id": "call-r1", "name": "run_command",
	                "arguments": { "command": "npm test && curl x" } } ] }
	JSON
	fake_start script.json &&
	tui_start a -t s &&
	tui_wait a "run_command npm test && curl x"
'

test_expect_success TMUX 'a request shows the command, its parts, rules and cwd' '
	need r1 "npm test && curl x" &&
	tui_wait a "approval needed (1 of 1)" &&
	tui_wait a "command   npm test && curl x" &&
	tui_wait a "cwd       /workspace" &&
	tui_wait a "allow  npm test .*rule ^npm (test|ci)\\$ (user)" &&
	tui_wait a "ask    curl x .*no rule" &&
	tui_wait a "y allow once · a always · n deny · e edit · m deny with a message" &&
	tui_wait a "│  1 approval$" &&
	tui_wait a "? run_command npm test && curl x .*needs you"
'

test_expect_success TMUX 'requests queue and the count shows in the status bar' '
	need r2 "curl y" &&
	tui_wait a "approval needed (1 of 2)" &&
	tui_wait a "│  2 approvals$"
'

test_expect_success TMUX 'y allows once, then the next request shows' '
	tui_keys a y &&
	sent_wait "type=approve" "request_id=r1" "decision=allow" "!command" &&
	tui_wait a "approval needed (1 of 1)" &&
	tui_wait a "command   curl y"
'

test_expect_success TMUX 'n denies' '
	tui_keys a n &&
	sent_wait "type=approve" "request_id=r2" "decision=deny" &&
	tui_gone a "approval needed" &&
	tui_gone a " approvals\\?$"
'

test_expect_success TMUX 'a proposes a rule inside the modal; Tab gives the wider one; it can be edited' '
	need r3 "curl x" &&
	tui_wait a "approval needed" &&
	tui_keys a a &&
	tui_wait a "always allow, rule (Tab: wider): ^curl x\\$" &&
	tui_screen a >screen &&
	grep "│ always allow, rule (Tab: wider): ^curl x\\$ *│" screen &&
	grep "│ Enter: save the rule and allow · Tab: wider or narrower rule · Esc: back *│" screen &&
	grep -v "^ *\$" screen | tail -n 1 | grep "^> message the agent" &&
	tui_keys a Tab &&
	tui_wait a "always allow, rule (Tab: wider): ^curl(\\\\\\\\s|\\$)" &&
	tui_keys a Tab BSpace "( -s)?\$" Enter &&
	sent_wait "request_id=r3" "decision=always" "rule=^curl x( -s)?\$" &&
	tui_gone a "approval needed"
'

test_expect_success TMUX 'Esc in the rule prompt answers nothing' '
	need r4 "curl z" &&
	tui_wait a "approval needed" &&
	tui_keys a a &&
	tui_wait a "always allow, rule" &&
	tui_keys a Escape &&
	tui_gone a "always allow, rule" &&
	tui_wait a "approval needed" &&
	! sent_has request_id=r4
'

test_expect_success TMUX 'e edits the command and runs the edited one' '
	tui_keys a e &&
	tui_wait a "│ run instead: curl z *│" &&
	tui_keys a " --max-time 5" Enter &&
	sent_wait "request_id=r4" "decision=allow" "command=curl z --max-time 5" &&
	tui_gone a "approval needed"
'

test_expect_success TMUX 'm denies with a message to the agent' '
	need r5 "rm -rf build" &&
	tui_wait a "approval needed" &&
	tui_keys a m &&
	tui_wait a "deny, tell the agent:" &&
	tui_keys a "use make clean" Enter &&
	sent_wait "request_id=r5" "decision=deny" "message=use make clean" &&
	tui_gone a "approval needed"
'

test_expect_success TMUX 'manual mode: a file write asks and shows its diff' '
	fake_ctl "{\"state\": {\"mode\": \"manual\"}}" &&
	fake_ctl "{\"event\": {\"type\": \"approval.needed\", \"request_id\": \"w1\",
	  \"call_id\": \"call-w1\", \"path\": \"src/parser.c\", \"verdict\": \"ask\",
	  \"diff\": \"--- a/src/parser.c\\n+++ b/src/parser.c\\n@@ -1,2 +1,2 @@\\n int x;\\n-int week = day / 7;\\n+int week = (day + 6) / 7;\\n\"}}" &&
	tui_wait a "write     src/parser.c" &&
	tui_wait a "@@ -1,2 +1,2 @@" &&
	tui_wait a "-int week = day / 7;" &&
	tui_wait a "+int week = (day + 6) / 7;" &&
	tui_wait a "y allow once · n deny · m deny with a message" &&
	! tui_screen a | grep "a always\|e edit" &&
	tui_keys a a &&
	tui_wait a "manual mode asks every time: an always rule would have no effect" &&
	tui_keys a e &&
	tui_wait a "only a command can be edited" &&
	! sent_has request_id=w1 &&
	tui_keys a y &&
	sent_wait "request_id=w1" "decision=allow"
'

test_expect_success TMUX 'a rule too long for its column is shown whole below' '
	long=$(printf "word%d|" $(seq 1 30))zz-end &&
	fake_ctl "{\"event\": {\"type\": \"approval.needed\", \"request_id\": \"l1\",
	  \"call_id\": \"call-l1\", \"command\": \"make x\", \"verdict\": \"ask\",
	  \"parts\": [ {\"command\": \"make x\", \"verdict\": \"ask\", \"rule\": \"^make ($long)\$\", \"source\": \"user\"} ]}}" &&
	tui_wait a "approval needed" &&
	tui_wait a "zz-end)\$ (user)" &&
	tui_keys a n &&
	sent_wait "request_id=l1" "decision=deny"
'

test_expect_success TMUX 'the calls of one reply are counted' '
	fake_ctl "{\"event\": {\"type\": \"approval.needed\", \"request_id\": \"c2\",
	  \"call_id\": \"call-c2\", \"command\": \"make\", \"verdict\": \"ask\",
	  \"call\": 2, \"calls\": 3}}" &&
	tui_wait a "approval needed (1 of 1) · call 2 of 3 of this reply" &&
	tui_keys a n &&
	sent_wait "request_id=c2" "decision=deny"
'

test_expect_success TMUX 'an answer from another client closes the modal' '
	need r6 "curl q" &&
	tui_start b -t s &&
	tui_wait b "approval needed" &&
	tui_wait a "approval needed" &&
	tui_keys b y &&
	tui_gone a "approval needed" &&
	tui_gone b "approval needed"
'

test_expect_success TMUX 'a read-only screen shows requests but cannot answer' '
	tui_start r -r -t s &&
	tui_wait r "read-only" &&
	need r7 "curl r" &&
	tui_wait r "read-only: another client answers" &&
	tui_keys r y &&
	sleep 0.3 &&
	! sent_has request_id=r7 &&
	tui_wait r "approval needed"
'

test_expect_success TMUX 'C-b m switches the mode' '
	tui_keys a C-b m &&
	sent_wait "type=mode" "mode=auto" &&
	tui_wait a "│ auto │"
'

test_done
