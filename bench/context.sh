#!/bin/sh
# Long sessions in the server: the time to open (resume) a session whose
# log holds 100,000 and 1,000,000 events, compacted every 1,000 steps, and
# the server's RSS with it, beside references on the same log (wc -l
# reading it, python3's json parsing it) and the RSS of the server with no
# session; then 2,000 idle sessions in one server under a soft limit of
# 256 descriptors; then the time to build the request of a compacted
# 10,000-step session (bench/context-bench).
set -u
B=${HOLT_BUILD_DIR:-.}
HOLT_HOME=$(mktemp -d)
export HOLT_HOME
SOCK=benchctx$$
holt() { "$B/holt" -L $SOCK "$@"; }
# Its sandboxes go with it (their proxies outlive the server otherwise).
finish() {
	for d in "$HOLT_HOME"/data/sandboxes/sbx-*; do
		[ -d "$d" ] && holt sandbox rm "${d##*/}"
	done
	holt kill-server
	rm -rf "$HOLT_HOME"
}
trap 'finish >/dev/null 2>&1' EXIT
now() { date +%s%N; }
rss_of() { awk '/^VmRSS/ { print $2 }' /proc/$1/status; }
spid() { pgrep -f "holt -L $SOCK server -f" | head -n 1; }
ms() { echo $(( ($2 - $1) / 1000000 )); }
PROTO="python3 $(dirname "$0")/../tests/proto-client.py"
# The attach's own time: measured inside the client, from its connect to
# the snapshot, once python3 has started.
attach() {
	$PROTO --time --wait 60 --until snapshot "$HOLT_HOME/run/$SOCK" send \
	    '{"type":"hello","version":1}' \
	    "{\"type\":\"attach\",\"session\":\"$1\",\"last\":100}"
}

holt ls >/dev/null
base_rss=$(rss_of $(spid))
holt kill-server

python3 -c "import json; json.dump({'turns':[{'text':'done','tool_calls':[]}]}, open('$HOLT_HOME/one.json','w'))"
holt new -d -s big --model "script:$HOLT_HOME/one.json" go >/dev/null
n=0
while [ $n -lt 300 ] && ! holt ls | grep -q ' finished '; do sleep 0.1; n=$((n + 1)); done
holt kill-server
LOG=$HOLT_HOME/data/sessions/big/events.jsonl

# grow LOG to $1 events: steps of assistant.message, tool.call,
# tool.started, 4 tool.output, tool.finished, model.usage; a user message
# every 100 steps and a compaction every 1,000.
grow() {
	python3 - "$LOG" "$1" <<-\PY
	import json, sys
	path, want = sys.argv[1], int(sys.argv[2])
	lines = open(path).read().splitlines()
	seq = len(lines)
	out = open(path, "a")
	ts = "2026-11-29T00:00:00.000Z"
	step = 0
	def w(o):
	    global seq
	    seq += 1
	    o = dict({"seq": seq, "ts": ts}, **o)
	    out.write(json.dumps(o, separators=(",", ":")) + "\n")
	while seq < want:
	    step += 1
	    if step % 100 == 1:
	        w({"type": "user.message", "text": "message at step %d" % step})
	    cid = "call_%d" % step
	    w({"type": "assistant.message", "text": "step %d" % step, "tool_calls":
	       [{"id": cid, "name": "read_file", "arguments": {"path": "f%d.c" % step}}]})
	    w({"type": "tool.call", "call_id": cid, "name": "read_file",
	       "arguments": {"path": "f%d.c" % step}})
	    w({"type": "tool.started", "call_id": cid, "name": "read_file"})
	    for i in range(4):
	        w({"type": "tool.output", "call_id": cid, "stream": "stdout",
	           "data": "line %d of the output of step %d\n" % (i, step)})
	    w({"type": "tool.finished", "call_id": cid, "name": "read_file",
	       "duration_ms": 3, "result": ("x" * 600)})
	    w({"type": "model.usage", "input_tokens": 1000, "output_tokens": 20,
	       "cached_input_tokens": 800, "cost_usd": 0})
	    if step % 1000 == 0:
	        w({"type": "context.compacted", "summary": "summary at %d" % step,
	           "through_seq": seq - 40, "trimmed_through": seq - 40,
	           "tokens_before": 9000, "tokens_after": 3000, "by": "auto"})
	w({"type": "run.finished", "reason": "done", "steps": step})
	PY
}

# Server start and holt ls (the session is at rest: its totals are read),
# then an attach (its conversation is read: the resume), then the RSS.
open_bench() {
	grow "$1"
	t0=$(now); holt ls >/dev/null; t1=$(now)
	holt ls | grep -q '^big ' || echo "bench: the session is not listed" >&2
	attach big >attach.out.$$ 2>attach.ms.$$
	grep -q '"snapshot"' attach.out.$$ || echo "bench: no snapshot" >&2
	att=$(awk '/^elapsed/ { printf "%d", $2 }' attach.ms.$$)
	rm -f attach.out.$$ attach.ms.$$
	rss=$(rss_of $(spid))
	t6=$(now); wc -l "$LOG" >/dev/null; t7=$(now)
	python3 -c "import json,sys
for l in open(sys.argv[1]): json.loads(l)" "$LOG"
	t8=$(now)
	echo "open a $2-event session: server start + holt ls $(ms $t0 $t1) ms, attach $att ms from connect to snapshot (budget $3 ms); wc -l of the log $(ms $t6 $t7) ms, python3 parsing it $(ms $t7 $t8) ms; server RSS $rss KB (budget 16384 KB; with no session $base_rss KB)"
	holt kill-server
}

open_bench 100000 100k 100
open_bench 1000000 1M 500

# 2,000 idle sessions: copies of one small session sharing its sandbox.
holt new -d -s s0 --model "script:$HOLT_HOME/one.json" go >/dev/null
n=0
while [ $n -lt 300 ] && ! holt ls | grep -q '^s0 .*finished'; do sleep 0.1; n=$((n + 1)); done
holt kill-server
rm -rf "$HOLT_HOME/data/sessions/big"
python3 - "$HOLT_HOME/data/sessions" <<-\PY
	import os, shutil, sys
	d = sys.argv[1]
	meta = open(d + "/s0/session.json").read()
	for i in range(1, 2000):
	    os.mkdir("%s/s%d" % (d, i))
	    open("%s/s%d/session.json" % (d, i), "w").write(
	        meta.replace('"s0"', '"s%d"' % i))
	    shutil.copy(d + "/s0/events.jsonl", "%s/s%d/" % (d, i))
	PY
t0=$(now); (ulimit -n 256; holt ls >ls.out.$$); t1=$(now)
errs=$(grep -c ' error ' ls.out.$$)
echo "2,000 idle sessions, soft limit 256: open in $(( (t1 - t0) / 1000000 )) ms, server RSS $(rss_of $(spid)) KB (budget 65536 KB; with no session $base_rss KB), $errs in error, fds $(ls /proc/$(spid)/fd | wc -l)"
rm -f ls.out.$$
holt kill-server

"$B/bench/context-bench"
