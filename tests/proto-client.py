#!/usr/bin/env python3
"""A raw client of holt's server protocol, for tests.

  proto-client.py SOCKET send JSON...        send frames, print every reply
                                             frame as a JSON line
  proto-client.py SOCKET garbage KIND        send bad input: random, huge,
                                             half, before-hello, not-json
  proto-client.py SOCKET flood N JSON...     hello, then the frames N times
                                             over, never reading a reply;
                                             prints "closed after K" when
                                             the server drops it (within
                                             --wait), else "still open"
  proto-client.py SOCKET raw HEX             hello, then a frame whose body
                                             is these bytes, as they are

Options: --wait S (keep reading S seconds after the last request, default
0.5), --until TYPE (stop once a frame of that type arrives), --time
(send's frames back to back, and print to stderr "elapsed MS" from the
connect to the --until frame: the server's time, not this client's start).
"""
import json, os, select, socket, struct, sys, time

def frame(obj):
    data = json.dumps(obj).encode()
    return struct.pack(">I", len(data)) + data

def read_frames(sock, wait, until, t0=None):
    buf = b""
    end = time.time() + wait
    sock.settimeout(0.1)
    while time.time() < end:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            break
        if not chunk:
            print(json.dumps({"type": "closed"}), flush=True)
            return
        buf += chunk
        while len(buf) >= 4:
            n = struct.unpack(">I", buf[:4])[0]
            if len(buf) < 4 + n:
                break
            obj = json.loads(buf[4:4 + n])
            buf = buf[4 + n:]
            print(json.dumps(obj), flush=True)
            if until and obj.get("type") == until:
                if t0 is not None:
                    print("elapsed %.1f" % ((time.perf_counter() - t0) *
                          1000), file=sys.stderr, flush=True)
                return

def main():
    args = sys.argv[1:]
    wait, until, timed = 0.5, None, False
    while args and args[0].startswith("--"):
        if args[0] == "--wait":
            wait = float(args[1]); args = args[2:]
        elif args[0] == "--until":
            until = args[1]; args = args[2:]
        elif args[0] == "--time":
            timed = True; args = args[1:]
        else:
            sys.exit("unknown option " + args[0])
    path, mode = args[0], args[1]
    frames = [frame(json.loads(a)) for a in args[2:]] if mode == "send" \
        else []
    t0 = time.perf_counter() if timed else None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    if mode == "send":
        for f in frames:
            sock.sendall(f)
            if not timed:
                time.sleep(0.05)
        read_frames(sock, wait, until, t0)
    elif mode == "garbage":
        kind = args[2]
        if kind == "random":
            sock.sendall(os.urandom(4096))
        elif kind == "huge":
            sock.sendall(struct.pack(">I", 1 << 30) + b"{")
        elif kind == "half":
            sock.sendall(frame({"type": "hello", "version": 1})[:7])
            sock.close()
            return
        elif kind == "before-hello":
            sock.sendall(frame({"type": "ls"}))
        elif kind == "not-json":
            sock.sendall(frame({"type": "hello", "version": 1}))
            sock.sendall(struct.pack(">I", 5) + b"{{{{{")
        read_frames(sock, wait, until)
    elif mode == "flood":
        n, reqs = int(args[2]), [frame(json.loads(a)) for a in args[3:]]
        sock.sendall(frame({"type": "hello", "version": 1}))
        sock.settimeout(30)
        for i in range(n):
            try:
                for r in reqs:
                    sock.sendall(r)
            except OSError:
                print("closed after %d" % i, flush=True)
                return
        # Still not reading: wait for the server to hang up on us.
        poll = select.poll()
        poll.register(sock, select.POLLRDHUP | select.POLLHUP)
        end = time.time() + wait
        while time.time() < end:
            if poll.poll(100):
                print("closed after %d" % n, flush=True)
                return
        print("sent %d, still open" % n, flush=True)
    elif mode == "raw":
        body = bytes.fromhex(args[2])
        sock.sendall(frame({"type": "hello", "version": 1}))
        sock.sendall(struct.pack(">I", len(body)) + body)
        read_frames(sock, wait, until)
    sock.close()

if __name__ == "__main__":
    main()
