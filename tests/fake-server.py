#!/usr/bin/env python3
"""A stand-in holt server for the screen's tests.

It speaks the client protocol (4-byte big-endian length + one JSON object)
on a unix socket for one session, replays a script of events, records every
frame a client sends (one JSON object a line in --log) and answers
approvals the way the server does (approval.decided to every client).

  fake-server.py --socket S --script F --log L [--ctl C]
  fake-server.py --ctl C --send '{"event": {...}}'     # inject, from a test
  fake-server.py --ctl C --send @FILE                  # the same from a file

Script: {"session": STATE, "events": [logged events], "live": [{"delay_ms":
N, "event": EVENT} | {"delay_ms": N, "state": {fields}}]}. Control
messages: {"event": E}, {"state": {fields}}, {"flood": {"call_id": ID,
"bytes": N, "line": LEN, "rate": BYTES_PER_S}} (tool.output events of N
bytes in all), {"files": {"dirs": [...], "all": BOOL}} (the workspace
changed: a "files" message to every client; the fake server watches
nothing itself).
"""
import argparse
import json
import os
import socket
import struct
import sys
import threading
import time


def send_frame(sock, obj):
    data = json.dumps(obj).encode()
    sock.sendall(struct.pack(">I", len(data)) + data)


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def recv_frame(sock):
    head = recv_exact(sock, 4)
    if head is None:
        return None
    (n,) = struct.unpack(">I", head)
    body = recv_exact(sock, n)
    if body is None:
        return None
    return json.loads(body)


class Server:
    def __init__(self, script, log):
        self.lock = threading.RLock()
        self.state = dict(script.get("session", {}))
        self.state.setdefault("name", "s")
        self.state.setdefault("pending", [])
        self.events = []
        self.seq = 0
        self.clients = []
        self.live = script.get("live", [])
        self.live_started = False
        self.log = open(log, "a", buffering=1) if log else None
        for ev in script.get("events", []):
            self.record(ev)

    def record(self, ev):
        with self.lock:
            self.seq += 1
            ev = dict(ev)
            ev.setdefault("seq", self.seq)
            ev.setdefault("ts", time.strftime("%Y-%m-%dT%H:%M:%S.000Z",
                                              time.gmtime()))
            t = ev.get("type")
            if t == "approval.needed":
                self.state["pending"].append(ev)
            elif t == "approval.decided":
                self.state["pending"] = [
                    p for p in self.state["pending"]
                    if p.get("request_id") != ev.get("request_id")]
            if t != "assistant.delta":
                self.events.append(ev)
            return ev

    def broadcast(self, obj):
        with self.lock:
            dead = []
            for c in self.clients:
                try:
                    send_frame(c, obj)
                except OSError:
                    dead.append(c)
            for c in dead:
                self.clients.remove(c)

    def emit(self, ev):
        with self.lock:
            ev = self.record(ev)
            self.broadcast({"type": "event", "session": self.state["name"],
                            "event": ev})
            if str(ev.get("type") or "").startswith("approval."):
                self.push_state()

    def push_state(self):
        self.broadcast({"type": "state", "session": self.state})

    def set_state(self, fields):
        with self.lock:
            self.state.update(fields)
            self.push_state()

    def play(self):
        for step in self.live:
            time.sleep(step.get("delay_ms", 0) / 1000.0)
            if "event" in step:
                self.emit(step["event"])
            if "state" in step:
                self.set_state(step["state"])

    def flood(self, f):
        line = f.get("line", 100)
        total = f.get("bytes", 1 << 20)
        chunk_lines = max(1, 65536 // (line + 1))
        rate = f.get("rate", 0)          # bytes per second, 0: as fast as read
        start = time.monotonic()
        sent, n = 0, 0
        while sent < total:
            if rate:
                ahead = sent / rate - (time.monotonic() - start)
                if ahead > 0:
                    time.sleep(ahead)
            rows = []
            for _ in range(chunk_lines):
                n += 1
                body = ("line %d " % n).ljust(line, "x")
                rows.append("\x1b[32m" + body[:6] + "\x1b[0m" + body[6:])
            data = "\n".join(rows) + "\n"
            sent += len(data)
            ev = {"type": "tool.output", "call_id": f.get("call_id", "c1"),
                  "stream": "stdout", "data": data}
            with self.lock:
                self.seq += 1
                ev["seq"] = self.seq
                self.broadcast({"type": "event",
                                "session": self.state["name"], "event": ev})
        return n

    def handle(self, sock):
        try:
            while True:
                m = recv_frame(sock)
                if m is None:
                    break
                if self.log:
                    self.log.write(json.dumps(m) + "\n")
                t = m.get("type")
                rid = m.get("id")
                ok = {"type": "ok"}
                if rid is not None:
                    ok["re"] = rid
                if t == "hello":
                    send_frame(sock, {"type": "hello", "version": 1})
                elif t == "attach":
                    if m.get("session") != self.state["name"]:
                        send_frame(sock, {"type": "error", "message":
                                          "session '%s': no such session" %
                                          m.get("session")})
                        continue
                    with self.lock:
                        last = int(m.get("last", 2000))
                        send_frame(sock, {"type": "snapshot",
                                          "session": self.state,
                                          "events": self.events[-last:]})
                        self.clients.append(sock)
                        start = not self.live_started
                        self.live_started = True
                    if start:
                        threading.Thread(target=self.play,
                                         daemon=True).start()
                elif t == "send":
                    send_frame(sock, ok)
                    self.emit({"type": "user.message", "text": m.get("text")})
                elif t == "interrupt":
                    send_frame(sock, ok)
                elif t == "mode":
                    send_frame(sock, ok)
                    self.set_state({"mode": m.get("mode")})
                elif t == "approve":
                    ids = [p.get("request_id") for p in self.state["pending"]]
                    if m.get("request_id") not in ids:
                        send_frame(sock, {"type": "error", "message":
                                          "no such request", "re": rid})
                        continue
                    send_frame(sock, ok)
                    ev = {"type": "approval.decided",
                          "request_id": m.get("request_id"),
                          "decision": m.get("decision"), "by": "user"}
                    if m.get("rule"):
                        ev["rule"] = m.get("rule")
                    self.emit(ev)
                elif t == "detach":
                    break
                else:
                    send_frame(sock, {"type": "error",
                                      "message": "unknown type"})
        except (OSError, ValueError):
            pass
        finally:
            with self.lock:
                if sock in self.clients:
                    self.clients.remove(sock)
            sock.close()

    def control(self, sock):
        try:
            data = b""
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
            m = json.loads(data)
            if "event" in m:
                self.emit(m["event"])
            if "state" in m:
                self.set_state(m["state"])
            if "files" in m:
                f = m["files"]
                self.broadcast({"type": "files", "session": self.state["name"],
                                "dirs": f.get("dirs", []),
                                "all": f.get("all", False)})
            last = 0
            if "flood" in m:
                last = self.flood(m["flood"])
            sock.sendall(b"ok %d\n" % last)
        except (OSError, ValueError) as e:
            sys.stderr.write("fake-server: control: %s\n" % e)
        finally:
            sock.close()


def listen(path):
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)
    return s


def serve(srv, lsock, handler):
    while True:
        c, _ = lsock.accept()
        threading.Thread(target=handler, args=(c,), daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket")
    ap.add_argument("--script")
    ap.add_argument("--log")
    ap.add_argument("--ctl")
    ap.add_argument("--send")
    ap.add_argument("--lifetime", type=float, default=300)
    a = ap.parse_args()
    if a.send is not None:
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(a.ctl)
        msg = a.send
        if msg.startswith("@"):          # a file, for messages too long for argv
            with open(msg[1:]) as f:
                msg = f.read()
        c.sendall(msg.encode())
        c.shutdown(socket.SHUT_WR)
        sys.stdout.write(c.recv(16).decode())
        return 0
    with open(a.script) as f:
        script = json.load(f)
    srv = Server(script, a.log)
    lsock = listen(a.socket)
    if a.ctl:
        csock = listen(a.ctl)
        threading.Thread(target=serve, args=(srv, csock, srv.control),
                         daemon=True).start()
    threading.Thread(target=serve, args=(srv, lsock, srv.handle),
                     daemon=True).start()
    # Bounded: a forgotten fake server goes away by itself.
    time.sleep(a.lifetime)
    return 0


if __name__ == "__main__":
    sys.exit(main())
