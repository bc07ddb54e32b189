#!/usr/bin/env python3
# envd-call.py SOCKET REQUEST-JSON...: speak holt-envd's protocol directly
# (holt-envd(8)): say hello, send each request with an "id", print each
# reply (the frame whose "id" matches) as one JSON line. For the isolation
# tests, to reach every file op, not only those the CLI offers.
import json
import socket
import struct
import sys


def send(s, obj):
    data = json.dumps(obj).encode()
    s.sendall(struct.pack(">I", len(data)) + data)


def recv(s):
    def exact(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c:
                raise EOFError
            b += c
        return b
    (n,) = struct.unpack(">I", exact(4))
    return json.loads(exact(n))


s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
send(s, {"op": "hello", "id": 0, "version": 1})
recv(s)
for i, req in enumerate(sys.argv[2:], 1):
    obj = json.loads(req)
    obj["id"] = i
    send(s, obj)
    while True:
        r = recv(s)
        if r.get("id") == i:
            break
    print(json.dumps(r, sort_keys=True))
