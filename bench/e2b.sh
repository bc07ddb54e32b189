#!/bin/sh
# bench/e2b.sh: an E2B SDK program against holt e2b serve, each figure
# beside a reference measured in the same program: commands.run("true")
# vs execSync("true") on the host, create -> first command, pause and
# resume (E2B's published figures beside them for context), and 100 MB of
# streamed output through the SDK, from holt's server alone (curl as the
# client), from the same command spawned on the host, and the SDK alone
# decoding holt's recorded stream. Needs the SDK the tests install (make
# check TESTS=tests/t9000-e2b-sdk.sh).
: "${HOLT_BUILD_DIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${HOLT_SRC_DIR:=$HOLT_BUILD_DIR}"
HOLT_E2B_SDK=$HOLT_BUILD_DIR/tests/node/node_modules/e2b
if ! command -v bwrap >/dev/null || ! command -v node >/dev/null ||
    [ ! -f "$HOLT_E2B_SDK/package.json" ]; then
	echo "e2b: needs bwrap, node and the SDK in tests/node (run its tests first), skipped"
	exit 0
fi
HOLT_HOME=$(mktemp -d "${TMPDIR:-/tmp}/holt-bench.XXXXXX")
export HOLT_HOME HOLT_E2B_SDK
holt="$HOLT_BUILD_DIR/holt"
"$holt" e2b serve --listen 127.0.0.1:0 >"$HOLT_HOME/serve.out" 2>&1 &
pid=$!
trap 'kill $pid; wait $pid 2>/dev/null; for d in "$HOLT_HOME"/data/sandboxes/sbx-*; do
	"$holt" sandbox rm "${d##*/}" >/dev/null 2>&1; done; rm -rf "$HOLT_HOME"' EXIT
# Killed (or its output closed: bench/e2b.sh | head), it still cleans up.
trap 'exit 1' INT TERM HUP PIPE
. "$(dirname "$0")/e2b-env.inc"
e2b_env "$HOLT_HOME"
node "$HOLT_SRC_DIR/bench/e2b.cjs"
rss=$(awk '/VmHWM/ { print $2 }' /proc/$pid/status)
echo "holt e2b serve peak RSS ${rss} kB"
