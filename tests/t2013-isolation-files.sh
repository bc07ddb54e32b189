#!/bin/sh
# Files the agent makes are hostile: a FIFO, a socket, a symlink out of
# /workspace. envd's file operations and the agent's tools refuse them with
# a clear error and never wait on them; search refuses what read_file
# refuses, and envd serves the next request at once.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

SECRET=HOST-SECRET-77e1

# The result of the Nth tool.finished event of FILE.
result_of() {
	events_of "$1" tool.finished | sed -n "$2p" |
	python3 -c "import json,sys; print(json.load(sys.stdin)[\"result\"].rstrip(\"\\n\"))"
}

test_expect_success BWRAP 'setup: links out of the workspace in the repository' '
	make_repo proj &&
	mkdir -p "$TRASH_DIRECTORY/host/keys" &&
	echo "$SECRET" >"$TRASH_DIRECTORY/host/keys/id" &&
	(
		cd proj &&
		mkdir -p src && echo "inner-needle" >src/in.txt &&
		ln -s /etc etcdir &&
		ln -s /etc/passwd pw &&
		ln -s ../../../../../../../../etc up &&
		ln -s src inner &&
		git add . && git commit -q -m links
	) &&
	write_policy
'

test_expect_success BWRAP 'search refuses every path read_file refuses' '
	cat >links.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "read_file", "arguments": { "path": "pw" } } ] },
	  { "tool_calls": [ { "name": "search", "arguments": { "pattern": "root", "path": "pw" } } ] },
	  { "tool_calls": [ { "name": "search", "arguments": { "pattern": "root", "path": "etcdir" } } ] },
	  { "tool_calls": [ { "name": "search", "arguments": { "pattern": "root", "path": "etcdir/passwd" } } ] },
	  { "tool_calls": [ { "name": "search", "arguments": { "pattern": "root", "path": "up" } } ] },
	  { "tool_calls": [ { "name": "search", "arguments": { "pattern": "root:" } } ] },
	  { "tool_calls": [ { "name": "search", "arguments": { "pattern": "inner-needle", "path": "inner" } } ] },
	  { "tool_calls": [ { "name": "search", "arguments": { "pattern": "inner-needle", "path": "src/in.txt" } } ] },
	  { "tool_calls": [ { "name": "search", "arguments": { "pattern": "needle", "glob": "*.txt" } } ] },
	  { "text": "done", "tool_calls": [] } ] }
	EOF
	holt run -s links --repo proj --model script:links.json --headless go >out &&
	result_of out 1 >r1 && grep "leads outside" r1 &&
	result_of out 2 >r2 && grep "^search: path ./workspace/pw.: leads outside" r2 &&
	for i in 3 4 5; do
		result_of out $i >r$i &&
		grep "^search: path .*: leads outside" r$i || return 1
	done &&
	result_of out 6 >r6 && echo "no matches" >expect && test_cmp expect r6 &&
	result_of out 7 >r7 && echo "/workspace/inner/in.txt:1:inner-needle" >expect &&
	test_cmp expect r7 &&
	result_of out 8 >r8 && echo "/workspace/src/in.txt:1:inner-needle" >expect &&
	test_cmp expect r8 &&
	result_of out 9 >r9 && echo "/workspace/src/in.txt:1:inner-needle" >expect &&
	test_cmp expect r9 &&
	! grep -r "root:x" r? &&
	tail -n 1 out | grep "\"reason\":\"done\""
'

test_expect_success BWRAP 'a FIFO and a socket: every file tool refuses at once' '
	cat >fifo.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "mkfifo f && python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind(\\\"s\\\")\" && mkdir -p d && mkfifo d/g && echo made" } } ] },
	  { "tool_calls": [ { "name": "read_file", "arguments": { "path": "f" } } ] },
	  { "tool_calls": [ { "name": "read_file", "arguments": { "path": "s" } } ] },
	  { "tool_calls": [ { "name": "search", "arguments": { "pattern": "x", "path": "f" } } ] },
	  { "tool_calls": [ { "name": "search", "arguments": { "pattern": "x", "path": "d" } } ] },
	  { "tool_calls": [ { "name": "write_file", "arguments": { "path": "f", "content": "x" } } ] },
	  { "tool_calls": [ { "name": "edit_file", "arguments": { "path": "f", "old_string": "a", "new_string": "b" } } ] },
	  { "tool_calls": [ { "name": "list_dir", "arguments": {} } ] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "echo still-alive" } } ] },
	  { "text": "done", "tool_calls": [] } ] }
	EOF
	timeout 120 holt run -s fifo --mode trust --model script:fifo.json --headless go >out &&
	result_of out 1 | grep made &&
	result_of out 2 | grep "path ./workspace/f.: a FIFO, not a regular file (refused)" &&
	result_of out 3 | grep "path ./workspace/s.: .*not a regular file" &&
	result_of out 4 | grep "path ./workspace/f.: a FIFO, not a regular file or a directory (refused)" &&
	result_of out 5 >r5 && echo "no matches" >expect && test_cmp expect r5 &&
	result_of out 6 | grep "a FIFO, not a regular file (refused)" &&
	result_of out 7 | grep "a FIFO, not a regular file (refused)" &&
	result_of out 8 >r8 && grep "^f  (not a regular file)$" r8 &&
	grep "^s  (not a regular file)$" r8 &&
	result_of out 9 | grep still-alive &&
	tail -n 1 out | grep "\"reason\":\"done\""
'

test_expect_success BWRAP 'holt sandbox get of a FIFO fails at once; envd goes on' '
	sbx=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"sandbox\"])" \
		"$HOLT_HOME/data/sessions/fifo/session.json") &&
	test_expect_code 1 timeout 20 holt sandbox get "$sbx" f - >got 2>err &&
	grep "path .f.: a FIFO, not a regular file (refused)" err &&
	test_expect_code 1 timeout 20 holt sandbox get "$sbx" s - 2>err &&
	grep "not a regular file (refused)" err &&
	echo data | test_expect_code 1 timeout 20 holt sandbox put "$sbx" - f 2>err &&
	grep "a FIFO, not a regular file (refused)" err &&
	timeout 20 holt sandbox exec "$sbx" -- echo after >out &&
	echo after >expect && test_cmp expect out &&
	holt sandbox stop "$sbx"
'

test_expect_success BWRAP 'a .holt/policy swapped for a FIFO is refused, never read' '
	make_repo fp && mkdir fp/.holt && mkfifo fp/.holt/policy &&
	test_expect_code 2 timeout 20 holt policy check --workspace fp -- ls 2>err &&
	grep "policy .*a FIFO" err
'

test_done
