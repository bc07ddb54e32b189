#!/usr/bin/env python3
# Differential test of the policy's shell parser against real shells: each
# command line is run by dash and by bash in a throw-away bubblewrap
# sandbox (read-only root, empty /tmp and home, no network) where every
# command name of the corpus is a stub that only logs its name, but for
# wrappers and shells (env, timeout, xargs, find, sh ...), which are the
# real ones so that what they run is logged too. Every
# command a shell runs must be a part that the policy reports:
# otherwise the parser missed a command and could allow a line hiding it.
# usage: policy-shell-diff.py POLICY-TOOL FILE...   (FILE: corpus format,
#        or one command line per file with --raw)
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

raw = "--raw" in sys.argv
# --control: pretend the parser found no command at all; the script then
# must see the commands the shells run (it fails if it sees none), which
# shows the sandbox and its stubs work.
control = "--control" in sys.argv
args = [a for a in sys.argv[1:] if a not in ("--raw", "--control")]
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
    f.write('#!/bin/dash\nprintf "%s\\n" "${0##*/}" '
            '>>"${HOLT_RAN:-/tmp/ran.lost}"\n')
# The stubs point to where the stub is inside the sandbox.
os.chmod(stub, 0o755)
# Wrappers and shells are the real programs, so that what they run is
# run (and logged) too: the look-through is tested as well.
real = os.path.join(tmp, "real")
os.mkdir(real)
for n in ["env", "nice", "timeout", "nohup", "stdbuf", "setsid", "xargs",
          "find", "sh", "bash", "dash", "command"]:
    for d in ("/usr/bin", "/bin"):
        if os.path.exists(os.path.join(d, n)):
            os.symlink(os.path.join(d, n), os.path.join(real, n))
            break
for n in names - set(os.listdir(real)):
    os.symlink("/tmp/in/stub", os.path.join(stubs, n))

# Judge every line first (one process), then run them all in one sandbox.
lines = [c for c in lines if "\0" not in c]
# Trust mode with the built-in rules (no deny rule): a line is allowed
# exactly when the policy judged every part of it; only those must match.
r = subprocess.run([tool, "-m", "trust"], input="\0".join(lines).encode(),
                   capture_output=True, check=True)
todo = []
for cmd, out in zip(lines, r.stdout.decode("utf-8", "replace").split("\n")):
    d = json.loads(out)
    if d["verdict"] != "allow" and not control:
        continue
    first = set()
    extra = set()
    for p in d["parts"]:
        if p.get("write"):
            continue
        try:
            words = shlex.split(p["command"])
        except ValueError:
            words = p["command"].split(" ")
        # NAME=value prefixes
        while words and re.match(r"^[^ ']*=", words[0]):
            words.pop(0)
        if not words:
            continue
        first.add(words[0])
        # What a judged part runs by design: the script a shell is given
        # (bash script.sh is judged as itself), xargs' default echo.
        if words[0] in ("sh", "bash", "dash") and not any(
                w.startswith("-") and "c" in w for w in words[1:]):
            extra |= set(words[1:])
        if words[0] == "xargs":
            extra.add("echo")
    todo.append((cmd, first | extra))

with open(os.path.join(tmp, "cmds.json"), "w") as f:
    json.dump([c for c, _ in todo], f)
runner = os.path.join(tmp, "run.py")
with open(runner, "w") as f:
    f.write("""
import json, subprocess, os
cmds = json.load(open("/tmp/in/cmds.json"))
out = []
import time
# Each run logs to a file of its own, so that what a background job runs
# later is counted for its line.
for i, c in enumerate(cmds):
    for sh in ("dash", "bash"):
        log = "/tmp/ran.%d.%s" % (i, sh)
        open(log, "w").close()
        env = dict(os.environ, HOLT_RAN=log)
        try:
            subprocess.run(["/usr/bin/" + sh, "-c", c], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                timeout=0.5, cwd="/tmp/w", start_new_session=True, env=env)
        except subprocess.TimeoutExpired:
            pass
time.sleep(0.5)
for i, c in enumerate(cmds):
    out.append({sh: open("/tmp/ran.%d.%s" % (i, sh)).read().split()
                for sh in ("dash", "bash")})
json.dump(out, open("/tmp/out/ran.json", "w"))
""")
outdir = os.path.join(tmp, "out")
os.mkdir(outdir)
subprocess.run(
    ["bwrap", "--ro-bind", "/", "/", "--tmpfs", "/tmp",
     "--tmpfs", os.path.expanduser("~"), "--ro-bind", stubs, "/tmp/stubs",
     "--ro-bind", real, "/tmp/real",
     "--ro-bind", tmp, "/tmp/in", "--bind", outdir, "/tmp/out",
     "--dir", "/tmp/w", "--dev", "/dev", "--proc", "/proc",
     "--unshare-all", "--die-with-parent", "--new-session",
     "--setenv", "PATH", "/tmp/stubs:/tmp/real", "/usr/bin/python3",
     "/tmp/in/run.py"],
    timeout=600)
ran = json.load(open(os.path.join(outdir, "ran.json")))

bad = 0
seen = 0
for (cmd, first), r in zip(todo, ran):
    for sh in ("dash", "bash"):
        seen += len(r[sh])
        if control:
            first = set()
        missed = set(r[sh]) - first
        if missed:
            print("%s ran %s, not among the parts of %r" %
                  (sh, sorted(missed), cmd))
            bad += 1
shutil.rmtree(tmp)
print("%d lines checked, %d with commands the parser missed, %d commands "
      "run" % (len(todo), bad, seen))
if seen == 0:
    print("the shells ran no command at all: this test cannot see")
    sys.exit(1)
if control:
    sys.exit(0 if bad else 1)
sys.exit(1 if bad else 0)
