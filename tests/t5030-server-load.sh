#!/bin/sh
# Load: 16 sessions at once, 3 clients on each, every session's command
# flooding output. The server keeps answering holt ls within 100 ms, and
# its memory stays bounded (slow clients lose live output, never the log).
. "$(dirname "$0")/lib.sh"

server_pid() {
	pgrep -f "holt -L $HOLT_SOCKET server -f" | head -n 1
}

# Time holt ls N times while the flood runs: the server's answer (a client
# already running: connect, hello, ls; the bound is on its p90) and the
# whole command, printed only: on two cores busy with a hundred processes
# most of its time is the kernel starting a new process. Prints "p50 p90
# worst" of each in ms, then how many samples.
cat >ls-timer.py <<\EOF
import json, os, socket, struct, subprocess, sys, time
holt, name, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
path = os.path.join(os.environ["HOLT_HOME"], "run", name)
def frame(o):
    d = json.dumps(o).encode(); return struct.pack(">I", len(d)) + d
def call(s, buf, o):
    s.sendall(frame(o))
    while True:
        if len(buf) >= 4:
            n = struct.unpack(">I", buf[:4])[0]
            if len(buf) >= 4 + n:
                return json.loads(buf[4:4 + n]), buf[4 + n:]
        d = s.recv(65536)
        if not d:
            raise EOFError
        buf += d
answer, command = [], []
end = time.monotonic() + 60
while len(answer) < want and time.monotonic() < end:
    t0 = time.perf_counter()
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    m, buf = call(s, b"", {"type": "hello", "version": 1})
    m, buf = call(s, buf, {"type": "ls"})
    s.close()
    t1 = time.perf_counter()
    subprocess.run([holt, "-L", name, "ls"], stdout=subprocess.DEVNULL)
    t2 = time.perf_counter()
    states = [x.get("state") for x in m["sessions"]]
    if states.count("working") >= 12:	# the flood still runs
        answer.append((t1 - t0) * 1000)
        command.append((t2 - t1) * 1000)
    time.sleep(0.1)
def stats(v):
    v = sorted(v)
    return "%d %d %d" % (v[len(v) // 2], v[(len(v) * 9) // 10], v[-1]) if v else "- - -"
print(stats(answer), stats(command), len(answer))
EOF

test_expect_success BWRAP '16 sessions x 3 clients with an output flood' '
	cat >flood.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "timeout 20 yes holt-flood-line; echo END" } } ] },
	  { "expect": { "last_tool_result_contains": "END" }, "text": "done", "tool_calls": [] } ] }
	EOF
	holt ls >/dev/null &&
	for i in $(seq 1 16); do
		holt new -d -s f$i --mode trust --model script:flood.json "flood" >/dev/null || exit 1
		for j in 1 2 3; do
			"$HOLT_BUILD_DIR/holt" -L "$HOLT_SOCKET" attach --lines -t f$i >/dev/null 2>&1 &
		done
	done &&
	test_wait_for 300 "test \$(holt ls | grep -c \" working \") = 16" &&
	sleep 1 &&
	python3 ls-timer.py "$HOLT_BUILD_DIR/holt" "$HOLT_SOCKET" 20 >times &&
	read a50 a90 amax c50 c90 cmax n <times &&
	hwm=$(awk "/^VmHWM/ { print \$2 }" /proc/$(server_pid)/status) &&
	say "holt ls under load, $n samples, ms p50/p90/worst:" \
		"server answer $a50/$a90/$amax, command $c50/$c90/$cmax;" \
		"server peak RSS ${hwm} KB" &&
	test_wait_for 600 "test \$(holt ls | grep -c \" finished \") = 16" &&
	test "$n" -ge 10 &&
	test "$a90" -le 100 &&
	test $hwm -lt 131072 &&
	for i in $(seq 1 16); do
		holt log -t f$i | grep -q "run finished: done" || exit 1
	done
'

test_expect_success 'the attached clients end with the server' '
	holt kill-server &&
	sleep 0.5 &&
	! pgrep -f "holt -L $HOLT_SOCKET attach"
'

test_done
