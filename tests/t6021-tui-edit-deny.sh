#!/bin/sh
# Against the real server: a policy denial is drawn as denied with its rule
# (from the engine's tool.finished), in the pane and in holt log; a command
# the user edits is judged by the policy (a deny is refused, and runs only
# after a second, explicit confirmation), is shown and logged as what ran,
# and the model is told; a run that carried on after a denial ends "done";
# the step count survives a server restart.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

TUI_CMD="$HOLT attach"

test_expect_success BWRAP,TMUX 'setup: a run with a denied call and two asks' '
	make_repo repo &&
	write_policy &&
	cat >run.json <<-\JSON &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "curl http://example.com" } } ] },
	  { "expect": { "last_tool_result_contains": "Denied" },
	    "tool_calls": [ { "name": "run_command", "arguments": { "command": "python3 -c \"print(1)\"" } } ] },
	  { "expect": { "last_tool_result_contains": "The user changed your command to: echo edited-run" },
	    "tool_calls": [ { "name": "run_command", "arguments": { "command": "python3 -c \"print(2)\"" } } ] },
	  { "expect": { "last_tool_result_contains": "The user changed your command to: wget --version" },
	    "text": "All done.", "tool_calls": [] } ] }
	JSON
	holt new -d -s s --repo "$TRASH_DIRECTORY/repo" --model script:run.json \
		"try things" >name &&
	tui_start a -t s
'

test_expect_success BWRAP,TMUX 'a policy denial is drawn denied with its rule, not ✓' '
	tui_wait a "⊘ run_command curl http://example.com .*denied: ^(curl|wget)" 100 &&
	! tui_screen a | grep -a "✓ run_command curl" &&
	holt log -t s >log &&
	grep -a "run_command ⊘ denied by policy, rule ^(curl|wget)" log &&
	grep -a "\"type\":\"tool.finished\".*\"denied\":{\"by\":\"policy\",\"rule\":\"^(curl|wget)" \
		"$(session_log s)"
'

test_expect_success BWRAP,TMUX 'an edit to a denied command is refused, naming the rule' '
	tui_wait a "approval needed" 100 &&
	tui_keys a e &&
	tui_wait a "run instead: python3" &&
	tui_keys a C-u "curl http://example.com/x" Enter &&
	tui_wait a "denied by rule .^(curl|wget).* (user). Run it anyway? type yes:" &&
	tui_keys a Escape &&
	tui_wait a "not run; the request still waits" &&
	tui_wait a "approval needed" &&
	! grep -a "\"command\":\"curl http://example.com/x\"" "$(session_log s)"
'

test_expect_success BWRAP,TMUX 'an allowed edit runs and is shown and logged as what ran' '
	tui_keys a e &&
	tui_wait a "run instead: python3" &&
	tui_keys a C-u "echo edited-run" Enter &&
	tui_wait a "✓ run_command echo edited-run  (edited)" 100 &&
	tui_wait a "output: echo edited-run" &&
	grep -a "\"type\":\"approval.decided\".*\"command\":\"echo edited-run\",\"original\":\"python3 -c" \
		"$(session_log s)" &&
	grep -a "\"type\":\"tool.finished\".*\"command\":\"echo edited-run\".*\"result\":\"The user changed your command to: echo edited-run" \
		"$(session_log s)" &&
	holt log -t s >log &&
	grep -a "edited by the user to: echo edited-run" log &&
	grep -a "the agent.s command was: python3 -c" log &&
	grep -a "ran: echo edited-run" log
'

test_expect_success BWRAP,TMUX 'a denied edit runs after an explicit yes, logged as an override' '
	tui_wait a "approval needed" 100 &&
	tui_keys a e &&
	tui_wait a "run instead: python3" &&
	tui_keys a C-u "wget --version" Enter &&
	tui_wait a "Run it anyway? type yes:" &&
	tui_keys a "yes" Enter &&
	tui_wait a "run_command wget --version  (edited)" 100 &&
	grep -a "\"type\":\"approval.decided\".*\"command\":\"wget --version\".*\"override\":true,\"denied_by\":\".^(curl|wget)" \
		"$(session_log s)" &&
	holt log -t s >log &&
	grep -a "run over the policy.s deny" log
'

test_expect_success BWRAP,TMUX 'a run that carried on after a denial ends done' '
	tui_wait a "run finished: done" 100 &&
	holt log -t s >log &&
	grep -a "run finished: done after 4 steps" log
'

test_expect_success BWRAP,TMUX 'the step count survives a server restart' '
	holt ls >before &&
	grep -a "^s .* 4/25" before &&
	tui_stop &&
	holt kill-server &&
	holt ls >after &&
	grep -a "^s .* 4/25" after
'

test_expect_success BWRAP,TMUX 'holt attach -t takes a unique start of a name' '
	echo "{ \"turns\": [ { \"text\": \"hi\", \"tool_calls\": [] } ] }" >hi.json &&
	holt new -d -s s-long --repo "$TRASH_DIRECTORY/repo" --model script:hi.json "hi" &&
	tui_start p -t s-lo &&
	tui_wait p "│ s-long │" 100 &&
	holt new -d -s s-lean --repo "$TRASH_DIRECTORY/repo" --model script:hi.json "hi" &&
	test_must_fail holt attach -t s-l </dev/null 2>err &&
	grep "session .s-l.: ambiguous (s-lean, s-long)" err &&
	test_must_fail holt attach -t nosuch </dev/null 2>err &&
	grep "session .nosuch.: no such session" err
'

test_expect_success BWRAP 'cleanup' '
	tui_stop &&
	holt kill-session -t s &&
	holt kill-session -t s-long &&
	holt kill-session -t s-lean &&
	holt kill-server
'

test_done
