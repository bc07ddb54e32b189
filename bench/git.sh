#!/bin/sh
# bench/git.sh: holt diff of a 10,000-file repository with 100 changed
# files (budget: 200 ms), beside git diff of the same workspace. Each figure
# is the median of 7 runs of the whole command (process start included),
# the commands taking turns.
set -e
: "${HOLT_BUILD_DIR:=$(cd "$(dirname "$0")/.." && pwd)}"
HOLT=$HOLT_BUILD_DIR/holt
tmp=$(mktemp -d)
trap '[ -n "${BENCH_KEEP:-}" ] || rm -rf "$tmp"' EXIT INT TERM
export HOLT_HOME=$tmp/home GIT_CONFIG_NOSYSTEM=1 HOME=$tmp
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.com \
	GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.com

ws=$HOLT_HOME/data/sandboxes/sbx-000000000bench/workspace
mkdir -p "$ws" "$HOLT_HOME/data/sessions/bench"
cd "$ws"
git init -q -b main .
python3 - <<'EOF'
import os
for d in range(100):
    os.makedirs("src/d%02d" % d, exist_ok=True)
    for f in range(100):
        with open("src/d%02d/f%02d.c" % (d, f), "w") as fh:
            fh.write("".join("int v%d_%d_%d = %d;\n" % (d, f, i, i) for i in range(40)))
EOF
git add -A
git commit -q -m base
base=$(git rev-parse HEAD)
# Clone-fresh stat data, as after holt's import: the index is not racy.
sleep 1
git update-index -q --really-refresh
for d in $(seq 0 99); do
	f=src/d$(printf %02d "$d")/f07.c
	sed -i -e '3s/.*/int changed = 1;/' -e '30s/.*/int changed_too = 2;/' "$f"
done
cat >"$HOLT_HOME/data/sessions/bench/session.json" <<EOF
{"name":"bench","sandbox":"sbx-000000000bench","repo":"$ws","base_commit":"$base","branch":"main"}
EOF

files=$(git ls-files | wc -l)
changed=$("$HOLT" diff -t bench --stat | tail -n 1)
# git_diff() itself, in a process that is already running (as the TUI
# calls it): the jail's fork included, libgit2's start not.
tool=$HOLT_BUILD_DIR/tests/git-tool
if [ -x "$tool" ]; then
	inproc=$("$tool" diff-time "$ws" "$base" 7)
else
	inproc=
fi
echo "repository: $files files;$changed"
if [ -n "$inproc" ]; then
	echo "git_diff() in-process  $inproc ms (median of 7)"
else
	echo "git_diff() in-process: build tests/git-tool (make check) to measure"
fi
# The commands take turns (7 rounds after a warm-up), so a change in the
# machine's load falls on all of them alike; medians in ms.
python3 - "$HOLT" "$base" <<'EOF'
import os, subprocess, sys, time
holt, base = sys.argv[1:]
cmds = {
    "json": [holt, "diff", "-t", "bench", "--json"],
    "stat": [holt, "diff", "-t", "bench", "--stat"],
    "patch": [holt, "diff", "-t", "bench"],
    "gitstat": ["git", "diff", "--stat", base],
    "gitpatch": ["git", "diff", base],
}
ts = {k: [] for k in cmds}
for r in range(8):
    for k, c in cmds.items():
        t = time.perf_counter()
        subprocess.run(c, stdout=subprocess.DEVNULL, check=True)
        if r > 0:
            ts[k].append((time.perf_counter() - t) * 1000)
m = {k: sorted(v)[len(v) // 2] for k, v in ts.items()}
print("load average %.1f" % os.getloadavg()[0])
print("holt diff --json   %7.1f ms  (budget 200 ms: %s)" % (m["json"], "ok" if m["json"] <= 200 else "OVER"))
print("holt diff --stat   %7.1f ms  %.2fx git diff --stat (%.1f ms)" % (m["stat"], m["stat"] / m["gitstat"], m["gitstat"]))
print("holt diff          %7.1f ms  %.2fx git diff (%.1f ms)" % (m["patch"], m["patch"] / m["gitpatch"], m["gitpatch"]))
EOF
