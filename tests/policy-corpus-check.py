#!/usr/bin/env python3
# Checks tests/policy-corpus.txt through the command line: for each line and
# mode, the exit status of "holt policy check" and, in auto mode, its JSON.
# usage: policy-corpus-check.py CORPUS POLICY HOLT
import json
import re
import subprocess
import sys

corpus, policy, holt = sys.argv[1:4]
codes = {"+": 0, "?": 10, "-": 11}
names = {"+": "allow", "?": "ask", "-": "deny"}
modes = ["manual", "auto", "strict", "trust"]


def unescape(s):
    def one(m):
        g = m.group(1)
        if g[0] == "x":
            return chr(int(g[1:], 16))
        return {"n": "\n", "t": "\t", "r": "\r"}.get(g, g)
    return re.sub(r"\\(x[0-9a-fA-F]{2}|.)", one, s)


bad = n = 0
for line in open(corpus, encoding="utf-8"):
    line = line.rstrip("\n")
    if not line or line.startswith("#"):
        continue
    esc = line.startswith("@")
    if esc:
        line = line[1:]
    want, cmd = line[:4], line[5:]
    if esc:
        cmd = unescape(cmd)
    n += 1
    # Auto mode for every line, one other mode in turn: the unit test
    # covers every mode through the API; this keeps the script fast.
    other = [0, 2, 3][n % 3]
    for m, w in [(modes[1], want[1]), (modes[other], want[other])]:
        args = [holt, "policy", "check", "--policy", policy, "--mode", m]
        if m == "auto":
            args.append("--json")
        r = subprocess.run(args + ["--", cmd], capture_output=True)
        if r.returncode != codes[w]:
            print("%s: %r: exit %d, want %d" % (m, cmd, r.returncode,
                                                codes[w]))
            bad += 1
            continue
        if m == "auto":
            d = json.loads(r.stdout)
            if d["verdict"] != names[w]:
                print("%r: JSON verdict %s" % (cmd, d["verdict"]))
                bad += 1
            if d["verdict"] == "allow" and any(
                    p["verdict"] != "allow" for p in d["parts"]):
                print("allowed with a part not allowed: %r" % cmd)
                bad += 1
print("%d lines, %d wrong" % (n, bad))
sys.exit(1 if bad or n < 200 else 0)
