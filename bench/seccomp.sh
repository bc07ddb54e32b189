#!/bin/sh
# bench/seccomp.sh: what the sandbox's seccomp filter (and Landlock scope)
# costs each system call. The cheapest call there is, getppid, is timed in a
# loop of 5,000,000 inside a sandbox (holt sandbox exec) and, as the
# reference, under a bare bwrap with the same namespaces and no filter; the
# two alternate 7 times and the medians are compared.
set -u
: "${HOLT_BUILD_DIR:=$(cd "$(dirname "$0")/.." && pwd)}"
A=$HOLT_BUILD_DIR/tests/attack/holt-attack
[ -x "$A" ] || make -C "$HOLT_BUILD_DIR" tests/attack/holt-attack >/dev/null ||
	exit 1
HOLT_HOME=$(mktemp -d)
export HOLT_HOME
holt() { "$HOLT_BUILD_DIR/holt" -L bench$$ "$@"; }
id=
trap '[ -n "$id" ] && holt sandbox rm "$id" >/dev/null 2>&1; rm -rf "$HOLT_HOME"' EXIT

n=5000000
id=$(holt sandbox create) || exit 1
holt sandbox put "$id" "$A" /tmp/holt-attack && 
	holt sandbox exec "$id" -- chmod 755 /tmp/holt-attack || exit 1
for i in 1 2 3 4 5 6 7; do
	holt sandbox exec "$id" -- /tmp/holt-attack syscalls $n >>"$HOLT_HOME/sbx"
	bwrap --unshare-all --new-session --cap-drop ALL --ro-bind /usr /usr \
		--ro-bind "$A" /tmp/holt-attack --proc /proc --dev /dev -- \
		/tmp/holt-attack syscalls $n >>"$HOLT_HOME/ref"
done
sbx=$(sort -n "$HOLT_HOME/sbx" | sed -n 4p)
ref=$(sort -n "$HOLT_HOME/ref" | sed -n 4p)
if [ -z "$sbx" ] || [ -z "$ref" ]; then
	echo "seccomp: a run failed" >&2
	exit 1
fi
awk -v s="$sbx" -v r="$ref" 'BEGIN {
	printf "getppid: %.1f ns in a sandbox, %.1f ns under bare bwrap " \
	    "(%.2fx): the filter costs %.1f ns a system call\n",
	    s, r, s / r, s - r
}'
