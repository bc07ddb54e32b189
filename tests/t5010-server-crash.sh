#!/bin/sh
# kill -9 of the server at 10 points of a run: the next client command
# starts a new server, which picks the session up from its log and carries
# it on in the same sandbox, which never stopped.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

test_expect_success BWRAP 'setup' '
	write_policy &&
	cat >run.json <<-\EOF
	{ "turns": [
	  { "delay_ms": 200, "tool_calls": [ { "name": "run_command", "arguments": { "command": "sleep 0.4; echo 1 >> progress" } } ] },
	  { "delay_ms": 200, "tool_calls": [ { "name": "write_file", "arguments": { "path": "w.txt", "content": "w" } } ] },
	  { "delay_ms": 200, "tool_calls": [ { "name": "run_command", "arguments": { "command": "sleep 0.4; echo 2 >> progress" } } ] },
	  { "delay_ms": 200, "tool_calls": [ { "name": "read_file", "arguments": { "path": "progress" } } ] },
	  { "delay_ms": 200, "text": "done", "tool_calls": [] } ] }
	EOF
'

i=1
for delay in 0.1 0.3 0.5 0.7 0.9 1.1 1.3 1.6 1.9 2.2; do
	test_expect_success BWRAP "server killed after ${delay}s; the run completes" "
		holt new -d -s k$i --model script:run.json go >/dev/null &&
		sbx_before=\$(ls \"$HOLT_HOME/data/sandboxes\" | sort) &&
		sleep $delay &&
		pid=\$(server_pid) &&
		kill -9 \$pid &&
		holt ls >/dev/null &&
		test_wait_for 150 \"holt log -t k$i | grep \\\"run finished: done\\\"\" &&
		holt log -t k$i --json >all &&
		test \$(grep -c '\"type\":\"run.finished\"' all) = 1 &&
		for id in \$(grep '\"type\":\"tool.call\"' all | sed -n 's/.*\"call_id\":\"\\([^\"]*\\)\".*/\\1/p'); do
			test \$(grep '\"type\":\"tool.finished\"' all | grep -c \"\\\"call_id\\\":\\\"\$id\\\"\") = 1 || exit 1
		done &&
		test \"\$(ls \"$HOLT_HOME/data/sandboxes\" | sort)\" = \"\$sbx_before\"
	"
	i=$((i + 1))
done

test_done
