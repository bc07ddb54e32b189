#!/bin/sh
# The server: idle RSS (beside a tmux server's), holt ls with 50 sessions,
# attach to a 10,000-event session (time to the complete snapshot), event
# fan-out to 3 clients, and holt ls under load (16 sessions x 3 clients).
set -u
B=${HOLT_BUILD_DIR:-.}
S=${HOLT_SRC_DIR:-.}
HOLT_HOME=$(mktemp -d)
export HOLT_HOME
SOCK=bench$$
trap '"$B/holt" -L $SOCK kill-server >/dev/null 2>&1; tmux -L bench$$ kill-server 2>/dev/null; rm -rf "$HOLT_HOME"' EXIT
holt() { "$B/holt" -L $SOCK "$@"; }
now() { date +%s%N; }
rss_of() { awk '/^VmRSS/ { print $2 }' /proc/$1/status; }

holt ls >/dev/null
spid=$(pgrep -f "holt -L $SOCK server -f" | head -n 1)
tmux -L bench$$ -f /dev/null new-session -d "sleep 60"
tpid=$(pgrep -f "tmux -L bench$$" | head -n 1)
echo "server idle RSS: $(rss_of $spid) KB (budget 8192 KB; tmux server idle: $(rss_of $tpid) KB)"

# 50 sessions: one real, 49 copies of its files sharing its sandbox.
python3 -c "import json; json.dump({'turns':[{'text':'done','tool_calls':[]}]}, open('$HOLT_HOME/one.json','w'))"
holt run -s s0 --model "script:$HOLT_HOME/one.json" --headless go >/dev/null
for i in $(seq 1 49); do
	mkdir -p "$HOLT_HOME/data/sessions/s$i"
	sed "s/\"s0\"/\"s$i\"/" "$HOLT_HOME/data/sessions/s0/session.json" \
		>"$HOLT_HOME/data/sessions/s$i/session.json"
	cp "$HOLT_HOME/data/sessions/s0/events.jsonl" "$HOLT_HOME/data/sessions/s$i/"
done
holt ls >/dev/null	# the server opens them
best=999999
for i in 1 2 3 4 5 6 7 8 9 10; do
	t0=$(now); holt ls >/dev/null; t1=$(now)
	us=$(( (t1 - t0) / 1000 ))
	[ $us -lt $best ] && best=$us
done
t0=$(now); for i in 1 2 3 4 5 6 7 8 9 10; do tmux -L bench$$ ls >/dev/null; done; t1=$(now)
echo "holt ls, 50 sessions: $((best / 1000)).$(( (best % 1000) / 100 )) ms (budget 20 ms; tmux ls: $(( (t1 - t0) / 10000000 )) ms)"
echo "server RSS with 50 sessions: $(rss_of $spid) KB"

# 10,000 events in one session's log.
python3 - "$HOLT_HOME/data/sessions/s1/events.jsonl" <<'PY'
import json, sys
path = sys.argv[1]
seq = len(open(path).read().splitlines())
with open(path, "a") as f:
    for i in range(10000 - seq):
        seq += 1
        f.write(json.dumps({"seq": seq, "ts": "2026-11-29T00:00:00.000Z",
            "type": "tool.output", "call_id": "c%d" % (i // 50), "stream": "stdout",
            "data": "line %d of some command output\n" % i}) + "\n")
PY
holt kill-server; holt ls >/dev/null
python3 - "$HOLT_HOME/run/$SOCK" <<'PY'
import json, socket, struct, sys, time
def frame(o):
    d = json.dumps(o).encode(); return struct.pack(">I", len(d)) + d
# One frame's bytes, and when they had all arrived (before any parsing).
def read(s, buf):
    while True:
        if len(buf) >= 4:
            n = struct.unpack(">I", buf[:4])[0]
            if len(buf) >= 4 + n:
                t = time.perf_counter()
                return bytes(buf[4:4 + n]), buf[4 + n:], t
        buf += s.recv(1 << 20)
best = 1e9
parse = 0
for i in range(5):
    t0 = time.perf_counter()
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    s.sendall(frame({"type": "hello", "version": 1}) +
        frame({"type": "attach", "session": "s1", "last": 10000}))
    buf = bytearray()
    while True:
        d, buf, t1 = read(s, buf)
        p0 = time.perf_counter()
        m = json.loads(d)
        if m["type"] == "snapshot":
            parse = time.perf_counter() - p0
            break
    s.close()
    assert len(m["events"]) == 10000, len(m["events"])
    best = min(best, t1 - t0)
print("attach to a 10,000-event session, complete snapshot received: %.1f ms (budget 50 ms; the Python client then parses it in %.1f ms)" % (best * 1000, parse * 1000))
PY

# Fan-out: one run streaming 100,000 deltas to 3 attached clients.
python3 -c "
import json
json.dump({'chunk_bytes': 1, 'turns': [{'delay_ms': 1500, 'text': 'x' * 100000, 'tool_calls': []}]}, open('$HOLT_HOME/flood.json', 'w'))"
holt new -d -s flood --model "script:$HOLT_HOME/flood.json" go >/dev/null
python3 - "$HOLT_HOME/run/$SOCK" <<'PY'
import json, socket, struct, sys, time, threading
def frame(o):
    d = json.dumps(o).encode(); return struct.pack(">I", len(d)) + d
res = []
def client():
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    s.sendall(frame({"type": "hello", "version": 1}))
    s.sendall(frame({"type": "attach", "session": "flood", "last": 0}))
    buf = b""; n = 0; t0 = None
    while True:
        buf += s.recv(1 << 20)
        off = 0
        while len(buf) - off >= 4:
            ln = struct.unpack(">I", buf[off:off + 4])[0]
            if len(buf) - off < 4 + ln:
                break
            body = buf[off + 4:off + 4 + ln]; off += 4 + ln
            if b'"assistant.delta"' in body:
                if t0 is None: t0 = time.perf_counter()
                n += 1
            elif b'"run.finished"' in body:
                res.append((n, time.perf_counter() - t0)); s.close(); return
        buf = buf[off:]
ts = [threading.Thread(target=client) for _ in range(3)]
[t.start() for t in ts]; [t.join(60) for t in ts]
total = sum(n for n, _ in res); el = max(t for _, t in res)
print("fan-out: %d events to 3 clients in %.2f s = %d events/s delivered (budget 50,000/s)" % (total, el, total / el))
PY
# Under load: 16 sessions at once, 3 clients on each, every command
# flooding output for 20 s; holt ls timed meanwhile (as t5030 does).
cat >"$HOLT_HOME/flood.json" <<'EOF'
{ "turns": [
  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "timeout 20 yes holt-flood-line; echo END" } } ] },
  { "text": "done", "tool_calls": [] } ] }
EOF
for i in $(seq 1 16); do
	holt new -d -s load$i --mode trust --model "script:$HOLT_HOME/flood.json" \
		flood >/dev/null
	for j in 1 2 3; do
		holt attach --lines -t load$i >/dev/null 2>&1 &
	done
done
n=0
while [ "$(holt ls | grep -c "^load.* working ")" -lt 16 ] && [ $n -lt 300 ]; do
	sleep 0.1; n=$((n + 1))
done
sleep 1
read a50 a90 amax c50 c90 cmax cnt <<EOF
$(python3 "$S/tests/ls-under-load.py" "$B/holt" "$SOCK" 20)
EOF
echo "holt ls under load (16 sessions x 3 clients, output floods), $cnt samples: server's answer p50 $a50 / p90 $a90 / worst $amax ms (budget 100 ms); whole command p50 $c50 / p90 $c90 ms; server peak RSS $(awk '/^VmHWM/ { print $2 }' /proc/$(pgrep -f "holt -L $SOCK server -f" | head -n 1)/status) KB"
for s in $(ls "$HOLT_HOME/data/sandboxes"); do holt sandbox rm "$s" >/dev/null 2>&1; done
