#!/bin/sh
# The agent engine: per-step overhead of the loop (scripted model, trivial
# tool), resuming a session with a 10,000-event log, and the peak RSS of a
# headless run. A process start (/bin/true) is measured beside them.
set -u
B=${HOLT_BUILD_DIR:-.}
HOLT_HOME=$(mktemp -d)
export HOLT_HOME
trap 'rm -rf "$HOLT_HOME"' EXIT
holt() { "$B/holt" -L bench$$ "$@"; }
now() { date +%s%N; }

steps=200
python3 - "$HOLT_HOME/steps.json" "$steps" <<'PY'
import json, sys
turns = [{"tool_calls": [{"name": "list_dir", "arguments": {}}]} for _ in range(int(sys.argv[2]) - 1)]
turns.append({"text": "done", "tool_calls": []})
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PY

# One step, to take creation (sandbox start) out of both figures; a first
# run, not measured, makes the data directory's copy of the host image,
# which every later sandbox shares.
python3 -c "import json; json.dump({'turns':[{'text':'done','tool_calls':[]}]}, open('$HOLT_HOME/one.json','w'))"
holt run -s warm --model "script:$HOLT_HOME/one.json" --headless go >/dev/null
t2=$(now)
cpu1=$(/usr/bin/time -f "%U %S" "$B/holt" -L bench$$ run -s one \
	--model "script:$HOLT_HOME/one.json" --headless go 2>&1 >/dev/null | tail -n 1)
t3=$(now)
t0=$(now)
cpu=$(/usr/bin/time -f "%U %S" "$B/holt" -L bench$$ run -s steps \
	--model "script:$HOLT_HOME/steps.json" --steps $((steps + 5)) \
	--headless go 2>&1 >/dev/null | tail -n 1)
t1=$(now)
per_step=$(( ((t1 - t0) - (t3 - t2)) / (steps - 1) / 1000 ))
t4=$(now)
for i in $(seq 100); do /bin/true; done
t5=$(now)
true_us=$(( (t5 - t4) / 100 / 1000 ))
cpu_us=$(echo "$cpu $cpu1" | awk -v n=$steps \
	'{ d = ($1 + $2) - ($3 + $4); if (d < 0) d = 0; printf "%d", d * 1000000 / (n - 1) }')
fsync_us=$(python3 -c "
import os, time
f = os.open('$HOLT_HOME/fs', os.O_WRONLY | os.O_CREAT | os.O_APPEND)
t = time.time()
for i in range(50):
    os.write(f, b'x' * 200 + b'\\n'); os.fdatasync(f)
print(int((time.time() - t) / 50 * 1e6))")
echo "loop step, CPU of holt itself: ${cpu_us} us (budget 5000 us)"
echo "loop step, wall (model turn + list_dir + 2 fdatasync of the log): ${per_step} us; one fdatasync here: ${fsync_us} us; /bin/true fork+exec: ${true_us} us"

# A 10,000-event log: resume = open + rebuild the conversation.
python3 - "$HOLT_HOME/data/sessions/one/events.jsonl" <<'PY'
import json, sys
path = sys.argv[1]
lines = open(path).read().splitlines()
seq = len(lines)
with open(path, "a") as f:
    for i in range(5000):
        seq += 1
        f.write(json.dumps({"seq": seq, "ts": "2026-11-29T00:00:00.000Z", "type": "user.message", "text": "message %d with some words in it" % i}) + "\n")
        seq += 1
        f.write(json.dumps({"seq": seq, "ts": "2026-11-29T00:00:00.000Z", "type": "run.finished", "reason": "done", "steps": 1}) + "\n")
PY
n=$(wc -l <"$HOLT_HOME/data/sessions/one/events.jsonl")
best=999999
for i in 1 2 3 4 5; do
	t0=$(now)
	holt run --resume one --headless >/dev/null 2>&1
	t1=$(now)
	ms=$(( (t1 - t0) / 1000000 ))
	[ $ms -lt $best ] && best=$ms
done
echo "resume a $n-event session: ${best} ms (budget 100 ms)"

rss=$(/usr/bin/time -f %M "$B/holt" -L bench$$ run -s rss --model "script:$HOLT_HOME/steps.json" \
	--steps $((steps + 5)) --headless go 2>&1 >/dev/null | tail -n 1)
true_rss=$(/usr/bin/time -f %M /bin/true 2>&1 | tail -n 1)
echo "peak RSS of a $steps-step headless run: ${rss} KB (budget 16384 KB; /bin/true: ${true_rss} KB)"
for s in $(ls "$HOLT_HOME/data/sandboxes"); do holt sandbox rm "$s" >/dev/null 2>&1; done
