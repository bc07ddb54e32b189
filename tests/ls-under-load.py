# tests/ls-under-load.py HOLT SOCKET-NAME N: time holt ls N times while
# sessions run (at least 12 of them working): the server's answer (one
# client process already running: connect, hello and ls in one write, as
# holt's own one-shot commands do) and the whole holt ls command. Prints
# "p50 p90 worst" of each in ms, then how many samples were taken.
import json, os, socket, struct, subprocess, sys, time

holt, name, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
path = os.path.join(os.environ["HOLT_HOME"], "run", name)


def frame(o):
    d = json.dumps(o).encode()
    return struct.pack(">I", len(d)) + d


def reply(s, buf):
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
    s.sendall(frame({"type": "hello", "version": 1}) + frame({"type": "ls"}))
    m, buf = reply(s, b"")
    m, buf = reply(s, buf)
    s.close()
    t1 = time.perf_counter()
    subprocess.run([holt, "-L", name, "ls"], stdout=subprocess.DEVNULL)
    t2 = time.perf_counter()
    states = [x.get("state") for x in m["sessions"]]
    if states.count("working") >= 12:  # the flood still runs
        answer.append((t1 - t0) * 1000)
        command.append((t2 - t1) * 1000)
    time.sleep(0.1)


def stats(v):
    v = sorted(v)
    if not v:
        return "- - -"
    return "%d %d %d" % (v[len(v) // 2], v[(len(v) * 9) // 10], v[-1])


print(stats(answer), stats(command), len(answer))
