#!/bin/sh
# The screen against the real server and a scripted model: a run streams
# into the panes, approvals (y, and a: the rule is saved and used the next
# time), detach and reattach, manual mode asking for a write with its diff.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

TUI_CMD="$HOLT attach"
LOG=$HOLT_HOME/data/sessions

test_expect_success BWRAP,TMUX 'setup: a repository and a scripted run' '
	make_repo repo &&
	write_policy &&
	cat >run.json <<-\JSON &&
	{ "turns": [
	  { "delay_ms": 200, "text": "Let me look at the code.", "tool_calls": [ { "name": "read_file", "arguments": { "path": "calc.py" } } ] },
	  { "delay_ms": 100, "tool_calls": [ { "name": "run_command", "arguments": { "command": "python3 test_calc.py" } } ] },
	  { "delay_ms": 100, "tool_calls": [ { "name": "run_command", "arguments": { "command": "getconf PAGESIZE" } } ] },
	  { "delay_ms": 100, "tool_calls": [ { "name": "run_command", "arguments": { "command": "getconf PAGESIZE" } } ] },
	  { "delay_ms": 100, "tool_calls": [ { "name": "edit_file", "arguments": { "path": "calc.py", "old_string": "a - b", "new_string": "a + b" } } ] },
	  { "delay_ms": 100, "tool_calls": [ { "name": "run_tests", "arguments": {} } ] },
	  { "delay_ms": 100, "text": "Fixed: add subtracted.", "tool_calls": [] } ] }
	JSON
	holt new -d -s s --repo "$TRASH_DIRECTORY/repo" --model script:run.json \
		--test-command "python3 test_calc.py" "fix add" >name &&
	tui_start a -t s
'

test_expect_success BWRAP,TMUX 'the run streams into the transcript, tree and output' '
	tui_wait a "Let me look at the code." 100 &&
	tui_wait a "✓ read_file calc.py" &&
	tui_wait a "✗ run_command python3 test_calc.py .*exit 1" &&
	tui_wait a "AssertionError: add is wrong" &&
	tui_wait a "calc.py" &&
	tui_wait a "test_calc.py"
'

test_expect_success BWRAP,TMUX 'an unsettled command asks; a saves a rule (edited)' '
	tui_wait a "approval needed" 100 &&
	tui_wait a "command   getconf PAGESIZE" &&
	tui_keys a a &&
	tui_wait a "always allow, rule" &&
	tui_keys a C-u "^getconf PAGESIZE\$" Enter &&
	tui_wait a "output: getconf PAGESIZE  exit 0" 100 &&
	tui_wait a "^│4096"
'

test_expect_success BWRAP,TMUX 'the saved rule settles the same command the next time' '
	tui_wait a "output: python3 test_calc.py  exit 0 .*TESTS PASSED" 150 &&
	test "$(grep -c "\"type\":\"approval.needed\"" "$LOG/s/events.jsonl")" = 1 &&
	grep "\"type\":\"approval.decided\".*\"decision\":\"always\"" "$LOG/s/events.jsonl" &&
	grep "\"type\":\"approval.decided\".*\"decision\":\"allow\",\"by\":\"policy\",\"rule\":\"^getconf PAGESIZE\$\"" "$LOG/s/events.jsonl"
'

test_expect_success BWRAP,TMUX 'the tree marks the edited file' '
	tui_wait a "calc.py *M" 50 &&
	tui_wait a "Fixed: add subtracted." 100 &&
	tui_wait a "run finished: done"
'

test_expect_success BWRAP,TMUX 'detach and reattach show the same transcript' '
	tui_keys a C-b d &&
	tui_wait a "detached (from session s)" &&
	tui_start b -t s &&
	tui_wait b "Let me look at the code." 100 &&
	tui_wait b "✓ edit_file calc.py" &&
	tui_wait b "Fixed: add subtracted."
'

test_expect_success BWRAP,TMUX 'the diff view shows the change; c sends a comment' '
	tui_keys b C-b D &&
	tui_wait b "diff against" &&
	tui_wait b "^│ *M calc.py" &&
	tui_wait b "-    return a - b" &&
	tui_wait b "+    return a + b" &&
	tui_wait b "^│  1 M calc.py  +1 -1" &&
	tui_wait b "^│     2       -    return a - b" &&
	tui_wait b "^│           2 +    return a + b" &&
	tui_keys b 1 "}" "{" &&
	tui_wait b "hunk 1 of 1" &&
	tui_keys b c &&
	tui_wait b "comment on this hunk:" &&
	tui_keys b "good catch" Enter &&
	tui_wait b "comment sent to the agent" &&
	tui_keys b q &&
	tui_wait b "good catch" 100
'

test_expect_success BWRAP,TMUX 'r reverts a hunk, after a y' '
	tui_keys b C-b D &&
	tui_wait b "diff against" &&
	tui_keys b n &&
	tui_wait b "hunk 1 of 1" &&
	tui_keys b r &&
	tui_wait b "revert this hunk? y: yes" &&
	tui_keys b x &&
	tui_gone b "revert this hunk?" &&
	tui_wait b "+    return a + b" &&
	tui_keys b r &&
	tui_wait b "revert this hunk? y: yes" &&
	tui_keys b y &&
	tui_wait b "reverted a hunk of .calc.py." &&
	tui_gone b "+    return a + b" &&
	grep "return a - b" "$HOLT_HOME"/data/sandboxes/sbx-*/workspace/calc.py &&
	tui_keys b q &&
	tui_wait b "calc.py" &&
	tui_gone b "calc.py *M" 60
'

test_expect_success BWRAP,TMUX 'a read-only screen cannot comment on a hunk' '
	echo "# note" >>"$(echo "$HOLT_HOME"/data/sandboxes/sbx-*/workspace)/calc.py" &&
	tui_start ro -r -t s &&
	tui_wait ro "read-only" 100 &&
	tui_keys ro C-b D &&
	tui_wait ro "diff against" &&
	tui_keys ro c &&
	tui_wait ro "read-only: comments are not sent" &&
	! tui_screen ro | grep "comment on this hunk:" &&
	tui_keys ro q &&
	$TUI_TMUX kill-session -t ro
'

test_expect_success BWRAP,TMUX '/rules lists the session'"'"'s rules; /rules delete N removes one' '
	tui_keys b "/rules" Enter &&
	tui_wait b "session rules" &&
	tui_wait b "  1  allow ^getconf PAGESIZE" &&
	tui_keys b q &&
	tui_keys b "/rules delete 7" Enter &&
	tui_wait b "rule 7: no such rule (the session has 1)" &&
	tui_keys b C-u "/rules delete 1" Enter &&
	tui_wait b "(none yet)" &&
	tui_keys b q &&
	! grep "getconf" "$LOG/s/policy"
'

test_expect_success BWRAP,TMUX 'C commits the changes with the message typed' '
	ws=$(echo "$HOLT_HOME"/data/sandboxes/sbx-*/workspace) &&
	echo "def sub(a, b):" >>"$ws/calc.py" &&
	tui_keys b C-b D &&
	tui_wait b "diff against" &&
	tui_keys b C &&
	tui_wait b "commit message:" &&
	tui_keys b "Add sub" Enter &&
	tui_wait b "committed [0-9a-f]\{12\}" &&
	git -C "$ws" log -1 --format=%s >subject &&
	echo "Add sub" >expect &&
	test_cmp expect subject
'

test_expect_success BWRAP,TMUX 'P runs the pull request flow in the background and says how it went' '
	tui_keys b P &&
	tui_wait b "pull request title" &&
	tui_keys b "A title" Enter &&
	tui_wait b "pull request" &&
	tui_gone b "committing and pushing" 100 &&
	tui_screen b | head -n 1 | grep -a -o "pull request.*" &&
	tui_keys b q
'

test_expect_success BWRAP,TMUX 'L commits onto a branch of the source repository' '
	tui_keys b C-b D &&
	tui_wait b "diff against" &&
	tui_keys b L &&
	tui_wait b "commit title for the source repository" &&
	tui_keys b "From the screen" Enter &&
	tui_wait b "committed onto the source repository" 100 &&
	git -C repo branch --list "holt/*" >branches &&
	test -s branches &&
	git -C repo log -1 --format=%s "$(sed -n "s/^[* ]*//p" branches | head -n 1)" >subject &&
	grep "Add sub\|From the screen" subject &&
	tui_keys b q
'

test_expect_success BWRAP,TMUX 'manual mode asks for a file write and shows its diff' '
	cat >manual.json <<-\JSON &&
	{ "turns": [
	  { "delay_ms": 100, "tool_calls": [ { "name": "write_file", "arguments": { "path": "calc.py", "content": "def add(a, b):\n    return b + a\n" } } ] },
	  { "delay_ms": 100, "text": "Written.", "tool_calls": [] } ] }
	JSON
	holt new -d -s m --mode manual --repo "$TRASH_DIRECTORY/repo" \
		--model script:manual.json "rewrite add" >name &&
	tui_start c -t m &&
	tui_wait c "approval needed" 100 &&
	tui_wait c "write     calc.py" &&
	tui_wait c "-    return a - b" &&
	tui_wait c "+    return b + a" &&
	tui_keys c y &&
	tui_wait c "Written." 100 &&
	tui_wait c "✓ write_file calc.py"
'

test_expect_success BWRAP,TMUX 'killing the session ends the screen with the reason' '
	holt kill-session -t m &&
	tui_wait c "session m ended: the session was killed" 50 &&
	tui_wait c "exit=0" &&
	tui_wait c "tty=sane"
'

test_done
