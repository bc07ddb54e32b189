#!/bin/sh
# Steering a run: interrupt, messages typed while the agent works, the
# token budget, and the cap on output given to the model.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

test_expect_success BWRAP 'setup' '
	write_policy
'

test_expect_success BWRAP 'interrupt kills the running command and ends the run' '
	cat >long.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "echo started; sleep 30; echo never > late" } } ] },
	  { "text": "should not be asked", "tool_calls": [] } ] }
	EOF
	holt new -d -s long --model script:long.json "wait" &&
	test_wait_for 100 "holt log -t long --json | grep -q \"\\\"data\\\":\\\"started\" " &&
	holt interrupt -t long &&
	test_wait_for 100 "holt log -t long | grep \"run finished: interrupted\"" &&
	holt log -t long --json >all &&
	grep "\"type\":\"tool.finished\"" all | grep "\"interrupted\":true" &&
	! grep "should not be asked" all &&
	ws=$(ls -d "$HOLT_HOME"/data/sandboxes/sbx-*/workspace | head -n 1) &&
	sleep 0.5 && ! test -e "$ws/late"
'

test_expect_success BWRAP 'a message sent while the agent works reaches it at the next step' '
	cat >msg.json <<-\EOF &&
	{ "turns": [
	  { "delay_ms": 100, "tool_calls": [ { "name": "run_command", "arguments": { "command": "sleep 1.5" } } ] },
	  { "expect": { "last_user_message_contains": "use tabs" },
	    "text": "ok, tabs", "tool_calls": [] } ] }
	EOF
	holt new -d -s msg --model script:msg.json "format the code" &&
	test_wait_for 100 "holt log -t msg --json | grep -q tool.started" &&
	holt send -t msg "and use tabs, please" &&
	test_wait_for 100 "holt log -t msg | grep \"run finished\"" &&
	holt log -t msg >log &&
	grep "run finished: done" log &&
	grep "agent: ok, tabs" log
'

test_expect_success BWRAP 'a message to an idle session starts a new run' '
	cat >more.json <<-\EOF &&
	{ "turns": [
	  { "text": "first", "tool_calls": [] },
	  { "expect": { "last_user_message_contains": "again" }, "text": "second", "tool_calls": [] } ] }
	EOF
	holt new -d -s more --model script:more.json "go" &&
	test_wait_for 100 "holt log -t more | grep \"run finished: done\"" &&
	holt send -t more "go again" &&
	test_wait_for 100 "test \$(holt log -t more | grep -c \"run finished: done\") = 2" &&
	holt log -t more | grep "agent: second"
'

test_expect_success BWRAP 'the token budget stops a run: exit 3, budget' '
	mkdir -p "$HOLT_HOME/config" &&
	echo "budget_tokens = 250" >"$HOLT_HOME/config/holt.conf" &&
	cat >budget.json <<-\EOF &&
	{ "turns": [
	  { "usage": { "input_tokens": 100, "output_tokens": 20 }, "tool_calls": [ { "name": "list_dir", "arguments": {} } ] },
	  { "usage": { "input_tokens": 100, "output_tokens": 20 }, "tool_calls": [ { "name": "list_dir", "arguments": {} } ] },
	  { "usage": { "input_tokens": 100, "output_tokens": 20 }, "tool_calls": [ { "name": "list_dir", "arguments": {} } ] },
	  { "text": "never", "tool_calls": [] } ] }
	EOF
	test_expect_code 3 holt run -s budget --model script:budget.json --headless "spend" >out &&
	rm "$HOLT_HOME/config/holt.conf" &&
	tail -n 1 out | grep "\"reason\":\"budget\"" &&
	! grep "never" out
'

test_expect_success BWRAP 'the model gets the head and the tail of a long output, with a marker' '
	cat >cap.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "echo FIRST; head -c 200000 /dev/zero | tr \"\\\\0\" x; echo; echo LAST" } } ] },
	  { "expect": { "last_tool_result_contains": "bytes omitted" }, "text": "done", "tool_calls": [] } ] }
	EOF
	holt run -s cap --model script:cap.json --mode trust --headless "big" >out &&
	tail -n 1 out | grep "\"reason\":\"done\"" &&
	events_of out tool.finished >fin &&
	grep FIRST fin && grep LAST fin && grep "bytes omitted" fin &&
	test $(wc -c <fin) -lt 40000
'

test_done
