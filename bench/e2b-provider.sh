#!/bin/sh
# bench/e2b-provider.sh: exec round trip through the e2b provider against
# the local provider, in one run. The "cloud" is holt e2b serve on
# loopback (with a HOLT_HOME of its own), so an e2b exec is the local
# exec of its sandbox plus what the provider adds: the bridge, HTTP and
# Connect's framing, twice. Measured in turns, so that a busy moment of a
# shared machine weighs on both alike; figures are p50s in ms.
#   one connection (the server's path: envd-rtt --sandbox): exec true
#   the CLI (holt sandbox exec ID -- true): its start-up, connect, exec
: "${HOLT_BUILD_DIR:=$(cd "$(dirname "$0")/.." && pwd)}"
rtt=$HOLT_BUILD_DIR/bench/envd-rtt
if ! command -v bwrap >/dev/null || [ ! -x "$rtt" ]; then
	echo "e2b-provider: needs bwrap and bench/envd-rtt (make), skipped"
	exit 0
fi
HOLT_HOME=$(mktemp -d "${TMPDIR:-/tmp}/holt-bench.XXXXXX")
CLOUD=$HOLT_HOME/c
mkdir -p "$CLOUD"
export HOLT_HOME
holt="$HOLT_BUILD_DIR/holt"
HOLT_HOME=$CLOUD "$holt" e2b serve --listen 127.0.0.1:0 \
	>"$HOLT_HOME/serve.out" 2>&1 &
pid=$!
trap 'kill $pid; wait $pid 2>/dev/null
	for d in "$HOLT_HOME"/data/sandboxes/sbx-*; do
		"$holt" sandbox rm "${d##*/}" >/dev/null 2>&1; done
	for d in "$CLOUD"/data/sandboxes/sbx-*; do
		HOLT_HOME=$CLOUD "$holt" sandbox rm "${d##*/}" >/dev/null 2>&1; done
	rm -rf "$HOLT_HOME"' EXIT
trap 'exit 1' INT TERM HUP PIPE
. "$(dirname "$0")/e2b-env.inc"
e2b_env "$CLOUD"

p50() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

# The same network for both: holt e2b serve's sandboxes get the policy's.
loc=$("$holt" sandbox create --net policy) || exit 1
e2b=$("$holt" sandbox create --provider e2b --net policy) || exit 1
"$holt" sandbox exec "$loc" -- true && "$holt" sandbox exec "$e2b" -- true ||
	exit 1
: >"$HOLT_HOME/l1" >"$HOLT_HOME/e1" >"$HOLT_HOME/lc" >"$HOLT_HOME/ec"
turn=0
while [ $turn -lt 5 ]; do
	"$rtt" --sandbox "$loc" 40 >>"$HOLT_HOME/l1"
	"$rtt" --sandbox "$e2b" 40 >>"$HOLT_HOME/e1"
	"$rtt" --run 8 "$holt" sandbox exec "$loc" -- true >>"$HOLT_HOME/lc"
	"$rtt" --run 8 "$holt" sandbox exec "$e2b" -- true >>"$HOLT_HOME/ec"
	turn=$((turn + 1))
done
l1=$(p50 <"$HOLT_HOME/l1")
e1=$(p50 <"$HOLT_HOME/e1")
lc=$(p50 <"$HOLT_HOME/lc")
ec=$(p50 <"$HOLT_HOME/ec")
echo "exec true, one connection    e2b p50 $e1 ms   local $l1 ms   $(ratio "$e1" "$l1")x the local"
echo "exec true, the CLI           e2b p50 $ec ms   local $lc ms   $(ratio "$ec" "$lc")x the local"
echo "  (e2b here is holt e2b serve on loopback: its own local exec is inside"
echo "   the figure; a real E2B adds the network's round trips)"
