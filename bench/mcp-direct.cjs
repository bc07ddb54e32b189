// bench/mcp-direct.cjs: the reference for bench/mcp.sh: N calls of an MCP
// server's echo tool made directly over its stdio, one after the other,
// timed from the first call to the last answer (start-up left out).
//	node mcp-direct.cjs N SERVER-ENTRY
"use strict";
const { spawn } = require("child_process");
const [n, entry] = [Number(process.argv[2]), process.argv[3]];
const srv = spawn("node", [entry, "stdio"], { stdio: ["pipe", "pipe", "ignore"] });
let buf = "", id = 0, t0 = 0, done = 0;
const waiting = new Map();
function req(method, params) {
	return new Promise((resolve) => {
		waiting.set(++id, resolve);
		srv.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
	});
}
srv.stdout.on("data", (d) => {
	buf += d;
	let i;
	while ((i = buf.indexOf("\n")) >= 0) {
		const m = JSON.parse(buf.slice(0, i));
		buf = buf.slice(i + 1);
		if (m.id !== undefined && waiting.has(m.id)) {
			waiting.get(m.id)(m);
			waiting.delete(m.id);
		}
	}
});
(async () => {
	await req("initialize", { protocolVersion: "2025-06-18", capabilities: {},
		clientInfo: { name: "bench", version: "1" } });
	srv.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
	await req("tools/list", {});
	t0 = process.hrtime.bigint();
	for (let k = 0; k < n; k++)
		await req("tools/call", { name: "echo", arguments: { message: "m" + k } });
	const us = Number(process.hrtime.bigint() - t0) / 1000 / n;
	console.log(Math.round(us));
	srv.kill();
})();
