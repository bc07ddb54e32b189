#!/bin/sh
# The screen: start-up to the first full frame when attaching to a session
# with 2,000 events, RSS with 100,000 lines of output scrollback, and key
# press to screen while 10 MB/s of output streams in, with 1,000 and with
# 100,000 lines of scrollback (redraw cost must not follow scrollback).
# tmux attach (first frame), tmux echoing keys in one pane while another
# takes the same 10 MB/s, and a tmux server holding 100,000 lines of
# history are measured beside them. The session is served by the test
# suite's fake server, so no sandbox or model is involved.
set -u
B=${HOLT_BUILD_DIR:-.}
S=${HOLT_SRC_DIR:-.}
if [ ! -x "$B/tests/tui-attach" ]; then
	echo "tui: build tests/tui-attach first (make check builds it)"
	exit 0
fi
HOLT_HOME=$(mktemp -d)
export HOLT_HOME
mkdir -m 700 -p "$HOLT_HOME/run"
SOCK=$HOLT_HOME/run/bench$$
CTL=$HOLT_HOME/ctl.sock
TMUXB="tmux -u -f /dev/null -L benchtui$$"
cleanup() {
	$TMUXB kill-server 2>/dev/null
	[ -n "${FAKE:-}" ] && kill "$FAKE" 2>/dev/null
	rm -rf "$HOLT_HOME"
}
trap cleanup EXIT

python3 - "$HOLT_HOME/script.json" <<'PY'
import json, sys
ev = [{"type": "user.message", "text": "fix the parser"}]
for i in range(666):
    ev.append({"type": "assistant.message", "text": "Step %d: reading the code, a few words more to wrap." % i})
    ev.append({"type": "tool.call", "call_id": "c%d" % i, "name": "read_file", "arguments": {"path": "src/f%d.c" % i}})
    ev.append({"type": "tool.finished", "call_id": "c%d" % i, "duration_ms": 3, "result": "ok"})
ev.append({"type": "tool.call", "call_id": "out", "name": "run_command", "arguments": {"command": "make"}})
ev.append({"type": "tool.started", "call_id": "out"})
json.dump({"session": {"name": "s", "state": "working", "sandbox_state": "running",
           "model": "m", "mode": "auto", "step": 1, "steps_cap": 25, "pending": []},
           "events": ev}, open(sys.argv[1], "w"))
PY
python3 "$S/tests/fake-server.py" --socket "$SOCK" --ctl "$CTL" \
	--script "$HOLT_HOME/script.json" --lifetime 300 >/dev/null 2>&1 &
FAKE=$!
n=0
while [ ! -S "$CTL" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done

TERM=xterm-256color LC_ALL=C.UTF-8 python3 - "$B/tests/tui-attach" "$SOCK" \
    "$CTL" "$S/tests/fake-server.py" "$TMUXB" <<'PY'
import os, pty, select, signal, statistics, subprocess, sys, time

tui, sock, ctl, fake, tmuxb = sys.argv[1:6]
# Outside tmux the screen's prefix is C-b, which this script sends.
os.environ.pop("TMUX", None)

def spawn(argv):
    pid, fd = pty.fork()
    if pid == 0:
        import fcntl, struct, termios
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 200, 0, 0))
        os.execvp(argv[0], argv)
    return pid, fd

def read_until(fd, needle, timeout=10.0):
    buf = b""
    end = time.monotonic() + timeout
    while needle not in buf:
        left = end - time.monotonic()
        if left <= 0:
            raise SystemExit("tui: timed out waiting for %r" % needle)
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                buf += os.read(fd, 1 << 16)
            except OSError:
                break
    return buf

def drain(fd):
    end = time.monotonic() + 0.05
    while time.monotonic() < end and select.select([fd], [], [], 0)[0]:
        try:
            if not os.read(fd, 1 << 16):
                return
        except OSError:
            return

def ctl_start(msg):
    return subprocess.Popen([sys.executable, fake, "--ctl", ctl, "--send",
                             msg], stdout=subprocess.DEVNULL)

def wait_draining(proc, fd):
    # The screen must be read meanwhile, or it blocks on the terminal,
    # stops reading the server, and the server's flood never ends.
    while proc.poll() is None:
        drain(fd)
        time.sleep(0.01)

def ctl_send(msg, fd):
    wait_draining(ctl_start(msg), fd)

def rss_kb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0

def attach():
    t0 = time.monotonic()
    pid, fd = spawn([tui, "-S", sock, "-t", "s"])
    read_until(fd, b"message the agent")
    return pid, fd, (time.monotonic() - t0) * 1000

def detach(pid, fd):
    os.write(fd, b"\x02d")
    try:
        read_until(fd, b"detached", 5)
    except SystemExit:
        pass
    os.waitpid(pid, 0)
    os.close(fd)

# Start-up to the first full frame (median of 7).
starts = []
for i in range(7):
    pid, fd, ms = attach()
    starts.append(ms)
    detach(pid, fd)
holt_start = statistics.median(starts)

# tmux attach to an existing session, same size, first frame.
subprocess.run(tmuxb.split() + ["new-session", "-d", "-s", "b", "-x", "200",
               "-y", "60", "cat"], check=True)
tstarts = []
for i in range(7):
    t0 = time.monotonic()
    pid, fd = spawn(tmuxb.split() + ["attach", "-t", "b"])
    read_until(fd, b"[b]")
    tstarts.append((time.monotonic() - t0) * 1000)
    time.sleep(0.05)	# let it settle before C-b d, outside the timing
    os.write(fd, b"\x02d")
    read_until(fd, b"detached", 5)
    os.waitpid(pid, 0)
    os.close(fd)
tmux_start = statistics.median(tstarts)
print("start-up to first frame, 2,000-event session: %.1f ms (budget 50 ms); "
      "tmux attach: %.1f ms; ratio %.2f" % (holt_start, tmux_start,
                                            holt_start / tmux_start))

def key_latency(fd, n=15):
    lat = key_times(fd, n)
    return statistics.median(lat), max(lat)

def key_times(fd, n):
    lat = []
    for i in range(n):
        drain(fd)
        # Distinct letters: a repeated one may be sent as a repeat escape.
        word = ("k" + "abcdefghijklmnopqrstuvwxy"[i] + "z").encode()
        t0 = time.monotonic()
        os.write(fd, word)
        read_until(fd, word, 5)
        lat.append((time.monotonic() - t0) * 1000)
        os.write(fd, b"\x15")   # C-u: clear the line
        time.sleep(0.05)
    return lat

def p95(v):
    return sorted(v)[max(0, int(len(v) * 0.95 + 0.5) - 1)]

def flood_times(fd, flood):
    # Keys while the flood streams: at most 60, and only while it lasts.
    lat = []
    while flood.poll() is None and len(lat) < 60:
        lat += key_times(fd, 5)
    return lat

pid, fd, _ = attach()
FLOOD = '{"flood": {"call_id": "out", "bytes": 31457280, "line": 100, "rate": 10485760}}'
# Idle, 1,000 lines of scrollback.
ctl_send('{"flood": {"call_id": "out", "bytes": 110000, "line": 100}}', fd)
idle_small, _ = key_latency(fd)
# While 10 MB/s stream in (the scrollback fills to its 100,000 lines).
flood = ctl_start(FLOOD)
time.sleep(0.3)
busy = flood_times(fd, flood)
wait_draining(flood, fd)
# Idle again, 100,000 lines of scrollback.
ctl_send('{"flood": {"call_id": "out", "bytes": 11000000, "line": 100}}', fd)
drain(fd)
rss = rss_kb(pid)
idle_big, _ = key_latency(fd)
detach(pid, fd)
# The same keys in tmux: a pane echoes them (cat) while the other pane of
# the window takes the same 10 MB/s of the same lines.
FLOODER = r"""
import os, sys, time
rate, total, n, sent, t0 = 10485760, 31457280, 0, 0, time.monotonic()
while sent < total:
    ahead = sent / rate - (time.monotonic() - t0)
    if ahead > 0:
        time.sleep(ahead)
    rows = []
    for _ in range(649):
        n += 1
        body = ("line %d " % n).ljust(100, "x")
        rows.append("\x1b[32m" + body[:6] + "\x1b[0m" + body[6:])
    data = ("\n".join(rows) + "\n").encode()
    os.write(1, data)
    sent += len(data)
open(sys.argv[1], "w").close()
time.sleep(60)
"""
done = os.path.join(os.environ["HOLT_HOME"], "flooded")
subprocess.run(tmuxb.split() + ["new-session", "-d", "-s", "k", "-x", "200",
               "-y", "60", "sleep 120"], check=True)
subprocess.run(tmuxb.split() + ["split-window", "-v", "-t", "k", "stty -echoctl; cat"],
               check=True)
pid, fd = spawn(tmuxb.split() + ["attach", "-t", "k"])
read_until(fd, b"[k]")
drain(fd)
subprocess.run(tmuxb.split() + ["respawn-pane", "-k", "-t", "k.0", "python3",
               "-c", FLOODER, done], check=True)
time.sleep(0.3)
class Flooding:
    def poll(self):
        return 0 if os.path.exists(done) else None
tbusy = flood_times(fd, Flooding())
os.write(fd, b"\x02d")
read_until(fd, b"detached", 10)
os.waitpid(pid, 0)
os.close(fd)
subprocess.run(tmuxb.split() + ["kill-session", "-t", "k"])
print("key press to screen while 10 MB/s stream in (%d keys): median %.1f ms, "
      "p95 %.1f ms, max %.1f ms (budget 16 ms); tmux, keys in one pane and "
      "the flood in the other (%d keys): median %.1f ms, p95 %.1f ms, max "
      "%.1f ms; ratio of the maxima %.2f, of the p95 %.2f" % (len(busy),
      statistics.median(busy), p95(busy), max(busy), len(tbusy),
      statistics.median(tbusy), p95(tbusy), max(tbusy),
      max(busy) / max(tbusy), p95(busy) / p95(tbusy)))
print("key press to screen, idle: %.2f ms with 1,000 lines of scrollback, "
      "%.2f ms with 100,000 (ratio %.2f; a redraw that followed the "
      "scrollback would make it ~100)" % (idle_small, idle_big,
                                           idle_big / idle_small))

# tmux holding 100,000 lines of history, for scale.
subprocess.run(tmuxb.split() + ["set-option", "-g", "history-limit", "100000"])
subprocess.run(tmuxb.split() + ["new-session", "-d", "-s", "h", "-x", "200",
               "-y", "60", "seq -f 'line %.0f xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' 100000; sleep 60"],
               check=True)
time.sleep(2)
spid = int(subprocess.run(tmuxb.split() + ["display-message", "-p",
           "#{pid}"], capture_output=True, text=True).stdout)
print("RSS with 100,000 lines of output: %.1f MB (budget 24 MB); tmux server "
      "with 100,000 lines of history: %.1f MB; ratio %.2f" % (
          rss / 1024, rss_kb(spid) / 1024, rss / max(1, rss_kb(spid))))
PY
