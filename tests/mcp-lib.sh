# tests/mcp-lib.sh: what the MCP tests (t46xx) share, on top of lib.sh and
# lib-engine.sh: the reference MCP servers from the npm registry, at pinned
# versions, installed into the build tree once (like tests/e2b-lib.sh does
# for the E2B SDK), and tests/mcp/tiny-server.cjs.
#
#	MCP_EVERYTHING	server-everything's entry point (node FILE stdio)
#	MCP_FS_PKG	the installed node_modules, to copy into a sandbox
#	MCP_TINY	the tiny misbehaving server
#	mcp_conf TEXT	write TEXT as holt.conf
#
# Sets the prerequisite MCP when node, npm and the packages are there.

MCP_SERVERS_VERSION=2026.8.31
MCP_NODE_DIR=$HOLT_BUILD_DIR/tests/node-mcp
MCP_FS_PKG=$MCP_NODE_DIR/node_modules
MCP_EVERYTHING=$MCP_FS_PKG/@modelcontextprotocol/server-everything/dist/index.js
MCP_TINY=$TEST_DIRECTORY/mcp/tiny-server.cjs

mcp_pkgs_ok_() {
	for p in server-everything server-filesystem; do
		grep -q "\"version\": \"$MCP_SERVERS_VERSION\"" \
			"$MCP_FS_PKG/@modelcontextprotocol/$p/package.json" \
			2>/dev/null || return 1
	done
}

mcp_why_=
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	mcp_why_="node or npm is missing"
elif ! mcp_pkgs_ok_; then
	npm_install_pinned "$MCP_NODE_DIR" mcp_pkgs_ok_ \
		"@modelcontextprotocol/server-everything@$MCP_SERVERS_VERSION" \
		"@modelcontextprotocol/server-filesystem@$MCP_SERVERS_VERSION"
	mcp_pkgs_ok_ || mcp_why_="npm install of the MCP servers failed: $(tail -n 3 npm.log 2>/dev/null | tr '\n' ' ')"
fi
if [ -n "$mcp_why_" ]; then
	say "SKIP: $mcp_why_"
else
	test_set_prereq MCP
fi

mcp_conf() {
	mkdir -p "$HOLT_HOME/config" &&
	printf '%s\n' "$1" >"$HOLT_HOME/config/holt.conf"
}

# The result of the Nth tool.finished event of FILE.
mcp_result() {
	events_of "$1" tool.finished | sed -n "$2p"
}
