#!/bin/sh
# File descriptors: the server raises its soft limit to the hard one; a
# session holds its log and lock only while it is active (a run, a client,
# a question), so thousands of idle ones fit in a low limit; and when it
# runs out anyway a session says so, never that its sandbox is gone.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/lib-mock-llm.sh"

server_pid() {
	pgrep -f "holt -L $HOLT_SOCKET server -f" | head -n 1
}

test_expect_success 'the server raises its soft limit on open files to the hard one' '
	hard=$(ulimit -H -n) &&
	if test "$hard" = unlimited || test "$hard" -le 64; then
		say "hard limit $hard: nothing to raise"
	else
		(ulimit -S -n 64 && holt ls >/dev/null) &&
		pid=$(server_pid) &&
		grep "^Max open files" /proc/$pid/limits >limits &&
		read -r _ _ _ soft hardnow _ <limits &&
		test "$soft" = "$hardnow" &&
		test "$soft" -gt 64 &&
		holt kill-server
	fi
'

PROTO="python3 $TEST_DIRECTORY/proto-client.py"
SOCK=$HOLT_HOME/run/$HOLT_SOCKET
SESS=$HOLT_HOME/data/sessions

# How many sessions the server holds at rest.
at_rest() {
	holt ls --json | grep -o "\"at_rest\":true" | wc -l
}

# The server's descriptors open on a file of session $1.
session_fds() {
	ls -l /proc/$(server_pid)/fd 2>/dev/null | grep -c "/sessions/$1/" || :
}

# Over HTTP: a script: model keeps its session open (its place in the
# script is in memory only).
test_expect_success BWRAP 'setup: twelve finished sessions' '
	write_script hi.json $(for i in $(seq 1 12); do
		echo "{\"text\":\"hi\",\"tool_calls\":[]}"; done) &&
	start_mock hi.json --idle-exit 600 &&
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
		holt new -d -s fd$i --model openai:m --base-url "$MOCK_URL/v1" \
			"hello" >/dev/null || exit 1
	done &&
	test_wait_for 600 "test \$(holt ls | grep -c \" finished \") = 12"
' && test_set_prereq TWELVE

test_expect_success TWELVE 'a session at rest holds no descriptor, and says it is at rest' '
	test_wait_for 100 "test \$(at_rest) = 12" &&
	test "$(session_fds fd1)" = 0 &&
	holt ls >ls &&
	test "$(grep -c "^fd.* finished " ls)" = 12
'

test_expect_success TWELVE 'attaching opens it again; its history is all there, in order' '
	$PROTO --until snapshot "$SOCK" send "{\"type\":\"hello\",\"version\":1}" \
		"{\"type\":\"attach\",\"session\":\"fd1\",\"last\":100000}" >attach &&
	grep "\"type\": \"snapshot\"" attach &&
	python3 -c "
import json, sys
snap = [json.loads(l) for l in open(\"attach\") if \"snapshot\" in l][0]
seqs = [e[\"seq\"] for e in snap[\"events\"] if \"seq\" in e]
log = [json.loads(l)[\"seq\"] for l in open(sys.argv[1])]
assert seqs == log, (seqs, log)
" "$SESS/fd1/events.jsonl" &&
	test_wait_for 100 "test \$(session_fds fd1) = 0"
'

test_expect_success TWELVE 'a long session: holt log and an attach give its events whole and in order' '
	python3 - "$SESS/fd2/events.jsonl" <<-\EOF &&
	import json, sys
	path = sys.argv[1]
	seq = len(open(path).read().splitlines())
	out = open(path, "a")
	def w(o):
	    global seq
	    seq += 1
	    out.write(json.dumps(dict({"seq": seq, "ts": "2026-11-29T00:00:00.000Z"},
	        **o), separators=(",", ":")) + "\n")
	for step in range(1, 5001):
	    if step % 100 == 1:
	        w({"type": "user.message", "text": "message %d" % step})
	    cid = "call_%d" % step
	    w({"type": "assistant.message", "text": "step %d" % step, "tool_calls":
	       [{"id": cid, "name": "read_file", "arguments": {"path": "f.c"}}]})
	    w({"type": "tool.call", "call_id": cid, "name": "read_file",
	       "arguments": {"path": "f.c"}})
	    w({"type": "tool.output", "call_id": cid, "stream": "stdout", "data": "x\n"})
	    w({"type": "tool.finished", "call_id": cid, "name": "read_file",
	       "duration_ms": 1, "result": "y" * 300})
	    if step % 1000 == 0:
	        w({"type": "context.compacted", "summary": "at %d" % step,
	           "through_seq": seq - 10, "trimmed_through": seq - 10,
	           "by": "auto"})
	w({"type": "run.finished", "reason": "done", "steps": 5000})
	EOF
	holt log -t fd2 --json >log.json &&
	python3 -c "
import json, sys
seqs = [json.loads(l)[\"seq\"] for l in open(\"log.json\")]
assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) > 20000, len(seqs)
" &&
	$PROTO --wait 60 --until snapshot "$SOCK" send "{\"type\":\"hello\",\"version\":1}" \
		"{\"type\":\"attach\",\"session\":\"fd2\",\"last\":2000}" >attach &&
	python3 -c "
import json, sys
snap = [json.loads(l) for l in open(\"attach\") if \"snapshot\" in l][0]
seqs = [e[\"seq\"] for e in snap[\"events\"] if \"seq\" in e]
n = sum(1 for l in open(sys.argv[1]))
assert seqs == list(range(n - 1999, n + 1)), (seqs[:3], seqs[-3:], n)
assert snap[\"session\"][\"state\"] == \"finished\", snap[\"session\"][\"state\"]
" "$SESS/fd2/events.jsonl"
'

test_expect_success TWELVE 'out of file descriptors is reported as that' '
	holt kill-server &&
	(ulimit -n 24 && holt ls --json >ls.json 2>ls.err) &&
	! grep "\"error\"" ls.json &&
	opens= &&
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
		opens="$opens {\"type\":\"open\",\"session\":\"fd$i\"}"
	done &&
	$PROTO --wait 2 "$SOCK" send "{\"type\":\"hello\",\"version\":1}" \
		$opens >opens &&
	grep "too many open files" opens &&
	! grep "is gone" opens &&
	holt ls >ls &&
	! grep " error " ls &&
	holt kill-server
'

test_expect_success TWELVE '2,000 idle sessions under a soft limit of 256: no descriptor error' '
	python3 -c "
import os, shutil, sys
d = sys.argv[1]
meta = open(d + \"/fd1/session.json\").read()
for i in range(1, 2001):
    os.mkdir(\"%s/idle%d\" % (d, i))
    open(\"%s/idle%d/session.json\" % (d, i), \"w\").write(
        meta.replace(\"\\\"fd1\\\"\", \"\\\"idle%d\\\"\" % i))
    shutil.copy(d + \"/fd1/events.jsonl\", \"%s/idle%d/\" % (d, i))
" "$SESS" &&
	(ulimit -n 256 && holt ls >ls 2>ls.err) &&
	test "$(grep -c "^idle.* finished " ls)" = 2000 &&
	! grep " error " ls &&
	test "$(ls /proc/$(server_pid)/fd | wc -l)" -lt 64 &&
	holt kill-server
'

test_done
