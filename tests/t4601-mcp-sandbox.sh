#!/bin/sh
# MCP servers inside the session's sandbox (where = sandbox, the default):
# the reference server-filesystem from the npm registry, limited to
# /workspace, reads and writes there and cannot read outside it; a server
# that crashes in the sandbox fails one call and is started again; a
# checkpoint before each call lets a rewind undo what a server wrote.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/mcp-lib.sh"

test_expect_success BWRAP,MCP 'setup: a session, then the servers copied into its sandbox' '
	make_repo proj &&
	mkdir -p "$HOLT_HOME/config" &&
	cat >"$HOLT_HOME/config/policy" <<-\EOF &&
	tool-allow ^mcp__fs__(read_text_file|write_file|list_allowed_directories)$
	tool-allow ^mcp__crash__poke$
	EOF
	cat >fs.json <<-EOF &&
	{ "turns": [
	  { "text": "hello" },
	  { "expect": { "tools_include": ["mcp__fs__read_text_file", "mcp__crash__poke"] },
	    "tool_calls": [
	      { "name": "mcp__fs__read_text_file", "arguments": { "path": "/workspace/README" } },
	      { "name": "mcp__fs__read_text_file", "arguments": { "path": "/home/user/secret.txt" } },
	      { "name": "mcp__fs__read_text_file", "arguments": { "path": "/workspace/link" } },
	      { "name": "mcp__fs__read_text_file", "arguments": { "path": "/workspace/../home/user/secret.txt" } },
	      { "name": "mcp__fs__read_text_file", "arguments": { "path": "$TRASH_DIRECTORY/host-secret" } },
	      { "name": "mcp__fs__write_file", "arguments": { "path": "/workspace/made-by-mcp.txt", "content": "from mcp" } },
	      { "name": "mcp__fs__list_allowed_directories", "arguments": {} },
	      { "name": "mcp__crash__poke", "arguments": {} },
	      { "name": "mcp__crash__poke", "arguments": {} } ] },
	  { "text": "done" } ] }
	EOF
	holt run -s fs --repo proj --model script:fs.json --net off \
		--headless "hi" >out0 &&
	tail -n 1 out0 | grep "\"reason\":\"done\"" &&
	box=$(ls -d "$HOLT_HOME"/data/sandboxes/sbx-*) &&
	echo "host secret" >host-secret &&
	echo "sandbox home secret" >"$box/home/secret.txt" &&
	ln -s /home/user/secret.txt "$box/workspace/link" &&
	mkdir "$box/home/mcp" &&
	cp -r "$MCP_FS_PKG" "$box/home/mcp/node_modules" &&
	cp "$MCP_TINY" "$box/home/tiny-server.cjs" &&
	mkdir "$box/home/state" &&
	chmod 777 "$box/home/state" &&
	mcp_conf "[mcp fs]
command = node
args = /home/user/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js /workspace

[mcp crash]
command = node
args = /home/user/tiny-server.cjs crash /home/user/state
timeout = 10"
'

test_expect_success BWRAP,MCP 'server-filesystem in the sandbox reads and writes /workspace, nothing outside' '
	holt run --resume fs --headless "go" >out 2>err &&
	tail -n 1 out | grep "\"reason\":\"done\"" &&
	mcp_result out 1 | grep "\"result\":\"hello\\\\n\"" &&
	mcp_result out 2 | grep "\"error\":true" &&
	mcp_result out 2 | grep "Access denied - path outside allowed directories" &&
	for i in 3 4 5; do
		mcp_result out $i >r$i &&
		grep "\"error\":true" r$i &&
		grep "Access denied - [a-z ]* outside allowed directories" r$i ||
		return 1
	done &&
	! grep "secret\\\\n\"" out &&
	! grep "sandbox home secret" out &&
	! grep "\"host secret" out &&
	mcp_result out 6 | grep -v "\"error\":true" &&
	box=$(ls -d "$HOLT_HOME"/data/sandboxes/sbx-*) &&
	echo "from mcp" >expect &&
	printf "\n" >>"$box/workspace/made-by-mcp.txt" &&
	test_cmp expect "$box/workspace/made-by-mcp.txt" &&
	mcp_result out 7 | grep "/workspace" &&
	mcp_result out 8 | grep "mcp server .crash. failed: it exited with status 3; its last words: tiny: crashing on purpose\." &&
	mcp_result out 9 | grep "\"result\":\"alive, start 2\""
'

test_expect_success BWRAP,MCP 'the servers ran in the sandbox, not on the host' '
	box=$(ls -d "$HOLT_HOME"/data/sandboxes/sbx-*) &&
	test -f "$box/home/state/crash.starts" &&
	! test -e /workspace/made-by-mcp.txt
'

test_expect_success BWRAP,MCP 'a checkpoint before each call of a server in the sandbox: rewind undoes what it wrote' '
	events_of "$(session_log fs)" checkpoint.taken >ck &&
	test $(grep -c "\"name\":\"mcp__" ck) = 9 &&
	step=$(sed -n "s/.*\"step\":\([0-9]*\),.*\"name\":\"mcp__fs__write_file\".*/\1/p" ck) &&
	test -n "$step" &&
	holt log -t fs | grep "step $step: checkpoint [0-9]* before mcp__fs__write_file" &&
	box=$(ls -d "$HOLT_HOME"/data/sandboxes/sbx-*) &&
	test -f "$box/workspace/made-by-mcp.txt" &&
	holt rewind -t fs --to $step --files-only &&
	! test -e "$box/workspace/made-by-mcp.txt" &&
	test -f "$box/workspace/README" &&
	holt rewind -t fs --to $((step + 1)) --files-only &&
	printf "from mcp" >expect &&
	test_cmp expect "$box/workspace/made-by-mcp.txt"
'

test_expect_success BWRAP,MCP 'in the server, a sandbox server is stopped when the run ends, started again by the next' '
	cat >again.json <<-\EOF &&
	{ "turns": [
	  { "text": "hi" },
	  { "expect": { "tools_include": "mcp__fs__read_text_file" },
	    "tool_calls": [ { "name": "mcp__fs__list_allowed_directories", "arguments": {} } ] },
	  { "text": "one" },
	  { "tool_calls": [ { "name": "mcp__fs__read_text_file", "arguments": { "path": "/workspace/README" } } ] },
	  { "text": "two" } ] }
	EOF
	old=$(ls -d "$HOLT_HOME"/data/sandboxes/sbx-*) &&
	holt new -d -s again --repo proj --model script:again.json "hi" &&
	test_wait_for 300 "holt log -t again | grep -q \"run finished: done\"" &&
	box=$(ls -d "$HOLT_HOME"/data/sandboxes/sbx-* | grep -v "$old") &&
	mkdir "$box/home/mcp" &&
	cp -r "$MCP_FS_PKG" "$box/home/mcp/node_modules" &&
	holt send -t again "first" &&
	test_wait_for 300 "holt log -t again | grep -c \"run finished: done\" | grep -q 2" &&
	id=$(basename "$box") &&
	holt sandbox exec "$id" -- sh -c "cat /proc/[0-9]*/cmdline | tr \"\\\\0\" \" \"" >procs &&
	! grep server-filesystem procs &&
	holt send -t again "second" &&
	test_wait_for 300 "holt log -t again | grep -c \"run finished: done\" | grep -q 3" &&
	holt log -t again --json >all &&
	grep "\"result\":\"Allowed directories:.n/workspace\"" all &&
	grep "\"result\":\"hello\\\\n\"" all
'

test_done
