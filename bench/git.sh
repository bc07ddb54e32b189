#!/bin/sh
# bench/git.sh: holt diff of a 10,000-file repository with 100 changed
# files (budget: 200 ms), beside git diff of the same workspace. Each figure
# is the median of 7 runs of the whole command (process start included).
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

# median_ms CMD...: the median wall time of 7 runs after a warm-up, in ms.
median_ms() {
	python3 - "$@" <<'EOF'
import subprocess, sys, time
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)  # warm
ts = []
for _ in range(7):
    t = time.perf_counter()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
    ts.append((time.perf_counter() - t) * 1000)
ts.sort()
print("%.1f" % ts[3])
EOF
}

files=$(git ls-files | wc -l)
changed=$("$HOLT" diff -t bench --stat | tail -n 1)
json=$(median_ms "$HOLT" diff -t bench --json)
stat=$(median_ms "$HOLT" diff -t bench --stat)
patch=$(median_ms "$HOLT" diff -t bench)
ref=$(median_ms git diff --stat "$base")
refp=$(median_ms git diff "$base")
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
python3 - "$json" "$stat" "$patch" "$ref" "$refp" <<'EOF'
import sys
json, stat, patch, ref, refp = map(float, sys.argv[1:])
print("holt diff --json   %7.1f ms  (budget 200 ms: %s)" % (json, "ok" if json <= 200 else "OVER"))
print("holt diff --stat   %7.1f ms  %.2fx git diff --stat (%.1f ms)" % (stat, stat / ref, ref))
print("holt diff          %7.1f ms  %.2fx git diff (%.1f ms)" % (patch, patch / refp, refp))
EOF
