#!/bin/sh
# A crash at every log boundary of a run, made exactly: a finished run's log
# cut after each of its lines (what a kill -9 right after that append
# leaves), then holt run --resume. Each time the run ends done, every call
# finished exactly once, the final answer is never asked for again, and
# every answer's token usage is in the log before the answer itself.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

SESS=$HOLT_HOME/data/sessions

test_expect_success BWRAP,PYTHON 'setup: a whole run' '
	cat >b.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "echo one >> progress" } } ] },
	  { "tool_calls": [ { "name": "write_file", "arguments": { "path": "a.txt", "content": "two" } } ] },
	  { "text": "all done", "tool_calls": [] } ] }
	EOF
	holt run -s base --mode trust --model script:b.json --headless go >base.out &&
	tail -n 1 base.out | grep "\"reason\":\"done\"" &&
	wc -l <"$(session_log base)" >n &&
	test $(cat n) -ge 12
'

# The log of session $1 is a whole run of b.json, resumed or not.
run_whole() {
	python3 -c "
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
types = [e['type'] for e in evs]
assert [e['seq'] for e in evs] == list(range(1, len(evs) + 1)), 'seq'
runs = [e for e in evs if e['type'] == 'run.finished']
assert len(runs) == 1 and runs[0]['reason'] == 'done', runs
msgs = [i for i, t in enumerate(types) if t == 'assistant.message']
assert len(msgs) == 3, 'asked %d times for 3 turns' % len(msgs)
for i in msgs:
    assert types[i - 1] == 'model.usage', 'no usage before line %d' % (i + 1)
calls = {e['call_id'] for e in evs if e['type'] == 'tool.call'}
for c in calls:
    n = sum(1 for e in evs if e['type'] == 'tool.finished' and e['call_id'] == c)
    assert n == 1, '%s finished %d times' % (c, n)
" "$(session_log "$1")"
}

test_expect_success BWRAP,PYTHON 'the whole run is whole' '
	run_whole base
'

test_expect_success BWRAP,PYTHON 'cut after each line, resumed: the run ends done, nothing twice' '
	n=$(cat n) && k=2 &&
	while [ $k -lt $n ]; do
		cp -r "$SESS/base" "$SESS/b$k" &&
		head -n $k "$SESS/base/events.jsonl" >"$SESS/b$k/events.jsonl" &&
		{ $HOLT run --resume b$k --headless >b$k.out 2>b$k.err ||
			{ echo "line $k: exit $?"; cat b$k.err; tail -n 3 b$k.out; exit 1; }; } &&
		{ run_whole b$k || { echo "cut after line $k"; exit 1; }; } &&
		k=$((k + 1)) || exit 1
	done
'

test_expect_success BWRAP,PYTHON 'cut after the final answer: no model request, exit 0' '
	n=$(cat n) &&
	cp -r "$SESS/base" "$SESS/last" &&
	head -n $((n - 1)) "$SESS/base/events.jsonl" >"$SESS/last/events.jsonl" &&
	tail -n 1 "$SESS/last/events.jsonl" | grep "\"type\":\"assistant.message\"" &&
	$HOLT run --resume last --headless >last.out &&
	! grep "\"type\":\"model.usage\"" last.out &&
	tail -n 1 last.out | grep "\"reason\":\"done\""
'

test_done
