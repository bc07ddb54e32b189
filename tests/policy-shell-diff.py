#!/usr/bin/env python3
# Differential test of the policy's shell parser against real shells: each
# command line is run by dash and by bash in a throw-away bubblewrap
# sandbox (read-only root, empty /tmp and home, no network) where every
# command name of the corpus is a stub that only logs its name. Every
# command a shell runs must be a part that the policy reports:
# otherwise the parser missed a command and could allow a line hiding it.
# usage: policy-shell-diff.py POLICY-TOOL FILE...   (FILE: corpus format,
#        or one command line per file with --raw)
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

raw = "--raw" in sys.argv
args = [a for a in sys.argv[1:] if a != "--raw"]
tool, files = args[0], args[1:]


def unescape(s):
    def one(m):
        g = m.group(1)
        if g[0] == "x":
            return chr(int(g[1:], 16))
        return {"n": "\n", "t": "\t", "r": "\r"}.get(g, g)
    return re.sub(r"\\(x[0-9a-fA-F]{2}|.)", one, s)


lines = []
for f in files:
    if raw:
        lines.append(open(f, "rb").read().decode("utf-8", "replace"))
        continue
    for line in open(f, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        esc = line.startswith("@")
        if esc:
            line = line[1:]
        cmd = line[5:]
        lines.append(unescape(cmd) if esc else cmd)

names = set()
for cmd in lines:
    for w in re.findall(r"[A-Za-z_][A-Za-z0-9_.+-]*", cmd):
        names.add(w)
names -= {"if", "then", "else", "elif", "fi", "do", "done", "while",
          "until", "for", "in", "case", "esac", "function", "select",
          "coproc", "time"}

tmp = tempfile.mkdtemp(prefix="holt-psd-")
stubs = os.path.join(tmp, "stubs")
os.mkdir(stubs)
stub = os.path.join(tmp, "stub")
with open(stub, "w") as f:
    f.write('#!/bin/dash\nprintf "%s\\n" "${0##*/}" >>/tmp/ran\n')
os.chmod(stub, 0o755)
for n in names:
    os.symlink(stub, os.path.join(stubs, n))

# Judge every line first (one process), then run them all in one sandbox.
lines = [c for c in lines if "\0" not in c]
r = subprocess.run([tool], input="\0".join(lines).encode(),
                   capture_output=True, check=True)
todo = []
for cmd, out in zip(lines, r.stdout.decode("utf-8", "replace").split("\n")):
    d = json.loads(out)
    if any(p["reason"].startswith("cannot parse") for p in d["parts"]):
        continue
    first = set()
    for p in d["parts"]:
        if p.get("write"):
            continue
        words = p["command"].split(" ")
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*\+?=", words[0]):
            words.pop(0)
        if words:
            first.add(words[0].strip("'"))
    todo.append((cmd, first))

with open(os.path.join(tmp, "cmds.json"), "w") as f:
    json.dump([c for c, _ in todo], f)
runner = os.path.join(tmp, "run.py")
with open(runner, "w") as f:
    f.write("""
import json, subprocess, os
cmds = json.load(open("/tmp/in/cmds.json"))
out = []
for c in cmds:
    r = {}
    for sh in ("dash", "bash"):
        open("/tmp/ran", "w").close()
        try:
            subprocess.run(["/usr/bin/" + sh, "-c", c], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                timeout=0.5, cwd="/tmp/w", start_new_session=True)
        except subprocess.TimeoutExpired:
            pass
        r[sh] = open("/tmp/ran").read().split()
    out.append(r)
json.dump(out, open("/tmp/out/ran.json", "w"))
""")
outdir = os.path.join(tmp, "out")
os.mkdir(outdir)
subprocess.run(
    ["bwrap", "--ro-bind", "/", "/", "--tmpfs", "/tmp",
     "--tmpfs", os.path.expanduser("~"), "--ro-bind", stubs, "/tmp/stubs",
     "--ro-bind", tmp, "/tmp/in", "--bind", outdir, "/tmp/out",
     "--dir", "/tmp/w", "--dev", "/dev", "--proc", "/proc",
     "--unshare-all", "--die-with-parent", "--new-session",
     "--setenv", "PATH", "/tmp/stubs", "/usr/bin/python3", "/tmp/in/run.py"],
    timeout=600)
ran = json.load(open(os.path.join(outdir, "ran.json")))

bad = 0
for (cmd, first), r in zip(todo, ran):
    for sh in ("dash", "bash"):
        missed = set(r[sh]) - first
        if missed:
            print("%s ran %s, not among the parts of %r" %
                  (sh, sorted(missed), cmd))
            bad += 1
shutil.rmtree(tmp)
print("%d lines checked, %d with commands the parser missed" %
      (len(todo), bad))
sys.exit(1 if bad else 0)
