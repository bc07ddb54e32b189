#!/bin/sh
# MCP tools: a call of server-everything's echo through the agent loop
# (policy, tool.call/started/finished in the log, the server over stdio on
# the host), against the same calls made directly by a small node client
# (bench/mcp-direct.cjs) in the same run. Needs node and the packages the
# tests install (tests/node-mcp: make check TESTS=tests/t4600-mcp-host.sh).
set -u
B=${HOLT_BUILD_DIR:-.}
S=${HOLT_SRC_DIR:-.}
E=$B/tests/node-mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js
if ! command -v node >/dev/null 2>&1 || ! test -f "$E"; then
	echo "mcp: skipped (node, or server-everything in tests/node-mcp, missing)"
	exit 0
fi
HOLT_HOME=$(mktemp -d)
export HOLT_HOME
trap 'rm -rf "$HOLT_HOME"' EXIT
now() { date +%s%N; }
calls=200

mkdir -p "$HOLT_HOME/config"
printf '[mcp everything]\ncommand = node\nargs = %s stdio\nwhere = host\n' \
	"$E" >"$HOLT_HOME/config/holt.conf"
echo 'tool-allow ^mcp__everything__echo$' >"$HOLT_HOME/config/policy"
python3 - "$HOLT_HOME" "$calls" <<'PY'
import json, sys
home, n = sys.argv[1], int(sys.argv[2])
def script(k):
    c = [{"name": "mcp__everything__echo", "arguments": {"message": "m%d" % i}} for i in range(k)]
    return {"turns": [{"tool_calls": c}, {"text": "done"}]}
json.dump(script(n), open(home + "/many.json", "w"))
json.dump(script(1), open(home + "/one.json", "w"))
PY

# The one-call run takes out what does not depend on the calls (sandbox,
# the server's start and listing, the model turns).
# The first run in a new HOLT_HOME makes the host image: not timed.
"$B/holt" run -s warm --model "script:$HOLT_HOME/one.json" --net off \
	--headless go >/dev/null
t0=$(now)
"$B/holt" run -s one --model "script:$HOLT_HOME/one.json" --net off \
	--headless go >/dev/null
t1=$(now)
"$B/holt" run -s many --model "script:$HOLT_HOME/many.json" --net off \
	--headless go >/dev/null
t2=$(now)
holt_us=$(( ((t2 - t1) - (t1 - t0)) / (calls - 1) / 1000 ))
direct_us=$(node "$S/bench/mcp-direct.cjs" "$calls" "$E")
echo "mcp echo call through the agent loop: ${holt_us} us; made directly by a node client: ${direct_us} us; ratio $(awk -v a="$holt_us" -v b="$direct_us" 'BEGIN { printf "%.1f", a / (b > 0 ? b : 1) }')"
