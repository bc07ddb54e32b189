#!/bin/sh
# A command's output beyond the logged head is cut with a marker (bytes and
# lines), and its last 64 KB are logged, so the end (where a test summary
# is) shows on reattach and in holt log; a screen that watched it live
# shows it whole, once.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

TUI_CMD="$HOLT attach"

# runs_done N: the session s has finished N runs (60 s at most).
runs_done() {
	test_wait_for 600 "test \$(grep -a -c '\"type\":\"run.finished\"' \"$(session_log s)\") -ge $1"
}

test_expect_success BWRAP 'setup: a session, its first run done' '
	make_repo repo &&
	mkdir -p "$HOLT_HOME/config" &&
	printf "allow ^(seq|echo|sleep)(\\\\s|\$)\n" >"$HOLT_HOME/config/policy" &&
	cat >run.json <<-\JSON &&
	{ "turns": [
	  { "text": "Ready.", "tool_calls": [] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "seq 1 100000; echo SUMMARY all passed" } } ] },
	  { "text": "Ran it.", "tool_calls": [] } ] }
	JSON
	holt new -d -s s --repo "$TRASH_DIRECTORY/repo" --model script:run.json \
		"get ready" >name &&
	runs_done 1
'

test_expect_success BWRAP,TMUX 'a screen attaches before the long output' '
	tui_start live -t s &&
	tui_wait live "Ready\." 300
'

test_expect_success BWRAP 'a run with a long output' '
	holt send -t s "run it" &&
	runs_done 2 &&
	grep -a "\"type\":\"run.finished\"" "$(session_log s)" | tail -n 1 |
		grep "\"reason\":\"done\""
'

test_expect_success BWRAP,TMUX 'a screen that watched it live shows it whole' '
	tui_wait live "Ran it\." 300 &&
	tui_wait live "^│SUMMARY all passed" &&
	tui_wait live "^│99999 *│\$" &&
	test "$(tui_screen live | grep -a -c "^│SUMMARY all passed")" = 1 &&
	! tui_screen live | grep -a "left out"
'

test_expect_success BWRAP 'the log has the head, a marker and the tail' '
	log="$(session_log s)" &&
	grep -a "\"stream\":\"cut\"" "$log" >cut &&
	test_line_count = 1 cut &&
	total=$(seq 1 100000 | wc -c) &&
	total=$((total + 19)) &&
	python3 - "$log" "$total" <<-\PY
	import json, sys
	evs = [json.loads(l) for l in open(sys.argv[1])]
	out = [e for e in evs if e["type"] == "tool.output"]
	cut = [e for e in out if e["stream"] == "cut"][0]
	head = sum(len(e["data"]) for e in out if e["offset"] < cut["offset"])
	tail = [e for e in out if e["stream"] == "tail"]
	tailbytes = sum(len(e["data"]) for e in tail)
	assert head == cut["offset"], (head, cut["offset"])
	assert 60000 < tailbytes <= 65536, tailbytes
	assert head + cut["omitted_bytes"] + tailbytes == int(sys.argv[2]), (head, cut, tailbytes)
	text = "".join(e["data"] for e in tail)
	assert text.endswith("100000\nSUMMARY all passed\n"), text[-40:]
	assert text.startswith(tuple("0123456789")), text[:20]
	lines = text.count("\n") + cut["omitted_lines"]
	headtext = "".join(e["data"] for e in out if e["offset"] < cut["offset"])
	assert lines + headtext.count("\n") == 100001, (lines, headtext.count("\n"))
	PY
'

test_expect_success BWRAP 'holt log shows the marker and the end' '
	holt log -t s >log &&
	grep -a "··· [0-9]* bytes ([0-9]* lines) left out of the log ···" log &&
	grep -a "SUMMARY all passed" log &&
	grep -a "| 1\$" log
'

test_expect_success BWRAP,TMUX 'a screen attached later shows the end' '
	tui_start later -t s &&
	tui_wait later "^│SUMMARY all passed" 100 &&
	tui_wait later "^│99999 *│\$"
'

test_expect_success BWRAP,TMUX 'a screen attached mid-stream has the text from its start' '
	python3 -c "import json; print(json.dumps({\"chunk_bytes\": 4, \"chunk_delay_ms\": 60,
	    \"turns\": [{\"text\": \"ALPHA \" + \"word \" * 200 + \"OMEGA\", \"tool_calls\": []}]}))" >slow.json &&
	holt new -d -s st --repo "$TRASH_DIRECTORY/repo" --model script:slow.json "talk" &&
	tui_start early -t st &&
	tui_wait early "ALPHA word" 300 &&
	tui_start mid -t st &&
	tui_wait mid "ALPHA word" 300 &&
	! tui_screen mid | grep OMEGA &&
	tui_wait mid "OMEGA" 600 &&
	holt kill-session -t st
'

test_expect_success BWRAP 'cleanup' '
	tui_stop &&
	holt kill-session -t s &&
	holt kill-server
'

out() {
	# out OFFSET DATA [STREAM]: a tool.output of call c1.
	fake_ctl "{\"event\": {\"type\": \"tool.output\", \"call_id\": \"c1\",
	  \"stream\": \"${3:-stdout}\", \"offset\": $1, \"data\": \"$2\"}}"
}

test_expect_success TMUX 'the screen draws the cut and skips what it saw' '
	cat >script.json <<-\JSON &&
	{ "session": { "name": "f", "state": "working", "sandbox_state": "running",
	    "model": "openai:gpt-4.1", "mode": "auto", "step": 1, "steps_cap": 25,
	    "pending": [] },
	  "events": [
	    { "type": "tool.call", "call_id": "c1", "name": "run_command",
	      "arguments": { "command": "make check" } },
	    { "type": "tool.started", "call_id": "c1", "name": "run_command" },
	    { "type": "tool.output", "call_id": "c1", "stream": "stdout", "offset": 0,
	      "data": "head 1\nhead 2\n" },
	    { "type": "tool.output", "call_id": "c1", "stream": "cut", "offset": 14,
	      "omitted_bytes": 5000, "omitted_lines": 700 },
	    { "type": "tool.output", "call_id": "c1", "stream": "tail", "offset": 5014,
	      "data": "tail 1\nSUMMARY 3 passed\n" } ] }
	JSON
	fake_start script.json &&
	TUI_CMD="$HOLT_BUILD_DIR/tests/tui-attach -L $HOLT_SOCKET" &&
	tui_start f -t f &&
	tui_wait f "^│head 2" &&
	tui_wait f "^│··· 5000 bytes (700 lines) left out of the log ···" &&
	tui_wait f "^│SUMMARY 3 passed" &&
	out 5021 "SUMMARY 3 passed\\nmore\\n" &&
	tui_wait f "^│more" &&
	test "$(tui_screen f | grep -c "^│SUMMARY 3 passed")" = 1 &&
	out 9000 "after a gap\\n" &&
	tui_wait f "^│··· 3957 bytes not shown (the screen fell behind) ···" &&
	tui_wait f "^│after a gap"
'

test_expect_success TMUX 'cleanup' '
	tui_stop &&
	fake_stop
'

test_done
