#!/bin/sh
# A whole headless session "in E2B": holt run --provider e2b with a scripted
# model, against holt e2b serve on loopback as the cloud (e2b-lib.sh).
# Files, commands with streamed output, search, a timeout, a paused sandbox
# resumed by the next run, and the key nowhere in the session's log.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/e2b-lib.sh"

test_when_finished 'holt kill-server; e2b_stop; cloud_cleanup'

# add_turns <JSON: the script's next turns (a resumed run goes on from the
# turn after the last one used).
add_turns() {
	python3 -c 'import json,sys
s = json.load(open("work.json"))
s["turns"] += json.load(sys.stdin)
json.dump(s, open("work.json", "w"))'
}

test_expect_success BWRAP 'setup: the cloud' '
	cloud_serve
'

# trust: no policy to write for these commands.
test_expect_success BWRAP 'a run writes, runs, lists, reads, edits and searches there' '
	. ./e2b.env &&
	cat >work.json <<-\EOF &&
	{ "turns": [
	  { "text": "Writing.", "tool_calls": [
	      { "name": "write_file", "arguments": { "path": "app/hello.py",
	        "content": "print(\"hi from e2b\")\n" } } ] },
	  { "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "python3 app/hello.py; echo to-stderr >&2; exit 2" } } ] },
	  { "expect": { "last_tool_result_contains": "exit code 2" },
	    "tool_calls": [ { "name": "list_dir", "arguments": { "path": "app" } } ] },
	  { "expect": { "last_tool_result_contains": "hello.py" },
	    "tool_calls": [ { "name": "read_file", "arguments": { "path": "app/hello.py" } } ] },
	  { "expect": { "last_tool_result_contains": "hi from e2b" },
	    "tool_calls": [ { "name": "edit_file", "arguments": { "path": "app/hello.py",
	      "old_string": "hi from", "new_string": "bye from" } } ] },
	  { "tool_calls": [ { "name": "search", "arguments": { "pattern": "bye" } } ] },
	  { "expect": { "last_tool_result_contains": "hello.py:1:" },
	    "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "sleep 30", "timeout_s": 1 } } ] },
	  { "expect": { "last_tool_result_contains": "timed out" },
	    "text": "Done.", "tool_calls": [] } ] }
	EOF
	holt run -s job --provider e2b --mode trust --model script:work.json \
		--headless "work in e2b" >out &&
	tail -n 1 out | grep "\"reason\":\"done\"" &&
	events_of out tool.finished >fin &&
	test_line_count = 7 fin &&
	sed -n 2p fin | grep "hi from e2b" &&
	sed -n 2p fin | grep "to-stderr" &&
	sed -n 2p fin | grep "\"exit_code\":2" &&
	events_of out tool.output | grep "hi from e2b" &&
	sid=$(holt sandbox ls --json | python3 -c "import json,sys
print([s[\"id\"] for s in json.load(sys.stdin) if s[\"provider\"] == \"e2b\"][0])") &&
	echo "$sid" >sid &&
	e2b_id_of "$sid" >eid &&
	cloud sandbox exec "$(cat eid)" -- cat /workspace/app/hello.py >there &&
	echo "print(\"bye from e2b\")" >expect &&
	test_cmp expect there
'

test_expect_success BWRAP 'the key is not in the session'"'"'s log or the sandbox' '
	. ./e2b.env &&
	! grep -r -F "$E2B_API_KEY" "$HOLT_HOME/data" &&
	! grep -F "$E2B_API_KEY" out &&
	echo "{ \"turns\": [ { \"text\": \"noted\", \"tool_calls\": [] } ] }" >say.json &&
	holt run -s told --provider e2b --mode trust --model script:say.json \
		--headless "the key is $E2B_API_KEY" >out5 &&
	! grep -F "$E2B_API_KEY" out5 &&
	grep "the key is \[redacted\]" out5 &&
	! grep -r -F "$E2B_API_KEY" "$HOLT_HOME/data"
'

test_expect_success BWRAP 'paused at E2B, the next run resumes it; the files are there' '
	. ./e2b.env &&
	holt sandbox pause "$(cat sid)" &&
	cloud sandbox ls | grep "^$(cat eid) .* paused" &&
	# the session keeps its model, script:work.json: more turns
	add_turns <<-\EOF &&
	[ { "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "cat app/hello.py" } } ] },
	  { "expect": { "last_tool_result_contains": "bye from e2b" },
	    "text": "Still there.", "tool_calls": [] } ]
	EOF
	holt run --resume job --headless "again" >out2 &&
	tail -n 1 out2 | grep "\"reason\":\"done\"" &&
	cloud sandbox ls | grep "^$(cat eid) .* running"
'

test_expect_success BWRAP '--repo: the repository is copied into the E2B sandbox' '
	. ./e2b.env &&
	make_repo proj &&
	cat >repo.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "read_file", "arguments": { "path": "calc.py" } } ] },
	  { "expect": { "last_tool_result_contains": "return a - b" },
	    "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "git log --oneline | wc -l; ls -a" } } ] },
	  { "expect": { "last_tool_result_contains": ".git" },
	    "text": "Read.", "tool_calls": [] } ] }
	EOF
	holt run -s withrepo --repo proj --provider e2b --mode trust \
		--model script:repo.json --headless "read" >out4 &&
	tail -n 1 out4 | grep "\"reason\":\"done\"" &&
	holt diff -t withrepo >diff &&
	test_line_count = 0 diff
'

test_expect_success BWRAP 'diff --json and commit: a copy of the E2B sandbox'"'"'s files here' '
	. ./e2b.env &&
	sid=$(sed -n "s/.*\"sandbox\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/withrepo/session.json") &&
	holt sandbox exec $sid -- sh -c "cd /workspace &&
		sed -i \"s/a - b/a + b/\" calc.py && echo new >added.txt &&
		ln -s /etc/passwd out-link" &&
	holt diff -t withrepo --json >d.json &&
	grep "added.txt" d.json && grep "calc.py" d.json &&
	holt commit -t withrepo -m "add, not subtract" >out &&
	ws=$HOLT_HOME/data/sandboxes/$sid/workspace &&
	test "$(git -C "$ws" log -1 --format=%s)" = "add, not subtract" &&
	test -L "$ws/out-link" &&
	grep "a + b" "$ws/calc.py" &&
	grep "a - b" proj/calc.py
'

test_expect_success BWRAP 'checkpoints in E2B: rewind puts the files back there' '
	. ./e2b.env &&
	cat >flow.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "write_file", "arguments": {
	      "path": "notes.txt", "content": "one\n" } } ] },
	  { "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "echo two >b.txt && rm notes.txt && mkdir -p d/e" } } ] },
	  { "text": "done", "tool_calls": [] },
	  { "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "echo awake" } } ] },
	  { "expect": { "last_tool_result_contains": "awake" },
	    "text": "up again", "tool_calls": [] } ] }
	EOF
	mkdir -p "$HOLT_HOME/config" &&
	echo "allow ^(echo|rm|mkdir)(\\s|\$)" >"$HOLT_HOME/config/policy" &&
	holt new -d -s rw --provider e2b --mode auto --model script:flow.json \
		"make notes" &&
	test_wait_for 300 "holt log -t rw | grep \"run finished: done\"" &&
	events_of "$(session_log rw)" checkpoint.taken >ck &&
	test_line_count = 2 ck &&
	! events_of "$(session_log rw)" approval.needed &&
	sid=$(sed -n "s/.*\"sandbox\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/rw/session.json" | head -n 1) &&
	e2b_id_of "$sid" >rweid &&
	cloud sandbox exec "$(cat rweid)" -- ls /workspace >before &&
	printf "b.txt\nd\n" >expect &&
	test_cmp expect before &&
	holt rewind -t rw --to 2 &&
	cloud sandbox exec "$(cat rweid)" -- ls /workspace >after &&
	echo notes.txt >expect &&
	test_cmp expect after &&
	holt rewind -t rw --to 1 &&
	cloud sandbox exec "$(cat rweid)" -- ls -A /workspace >first &&
	test_line_count = 0 first
'

test_expect_success BWRAP 'paused under a session that holds its connection: resumed on use' '
	. ./e2b.env &&
	cloud sandbox pause "$(cat rweid)" &&
	cloud sandbox ls | grep "^$(cat rweid) .* paused" &&
	# flow.json'"'"'s last two turns
	holt send -t rw "wake up" &&
	test_wait_for 300 "holt log -t rw | grep \"run finished: done\" | test \$(wc -l) = 2" &&
	! holt log -t rw | grep "run finished: error" &&
	cloud sandbox ls | grep "^$(cat rweid) .* running"
'

test_expect_success BWRAP 'killed at E2B: the session says so, nothing is made in its place' '
	. ./e2b.env &&
	cloud_kill "$(cat eid)" &&
	cloud sandbox ls | cut -d" " -f1 >before &&
	add_turns <<-\EOF &&
	[ { "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "true" } } ] },
	  { "text": "Hm.", "tool_calls": [] } ]
	EOF
	test_might_fail holt run --resume job --headless "once more" \
		>out3 2>err3 &&
	grep "E2B no longer has\|E2B said 404" out3 err3 &&
	cloud sandbox ls | cut -d" " -f1 >after &&
	test_cmp before after
'

test_done
