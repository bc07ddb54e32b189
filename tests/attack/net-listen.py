#!/usr/bin/env python3
# net-listen.py LOG NAME: the host-side listeners of the network isolation
# test (tests/t2001-isolation-net.sh). Listens on TCP (all addresses), UDP
# (127.0.0.1) and the abstract unix socket "\0NAME", prints "TCP-PORT
# UDP-PORT" on its first line, and appends one line per contact to LOG:
# "tcp ADDR", "udp DATA", "abstract". Exits by itself after 120 seconds.
import os
import select
import socket
import sys
import time

log, name = sys.argv[1], sys.argv[2]
tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("0.0.0.0", 0))
tcp.listen(16)
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", 0))
unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
unix.bind("\0" + name)
unix.listen(16)
print(tcp.getsockname()[1], udp.getsockname()[1], flush=True)

def note(line):
    with open(log, "a") as f:
        f.write(line + "\n")

end = time.monotonic() + 120
while time.monotonic() < end:
    ready, _, _ = select.select([tcp, udp, unix], [], [], 1.0)
    for s in ready:
        if s is udp:
            data, _ = udp.recvfrom(512)
            note("udp " + data.decode(errors="replace").strip())
        else:
            c, addr = s.accept()
            note("tcp %s" % addr[0] if s is tcp else "abstract")
            try:
                c.sendall(b"hello from the host\n")
            except OSError:
                pass
            c.close()
