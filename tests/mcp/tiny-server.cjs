// tests/mcp/tiny-server.cjs: a small MCP server over stdio that misbehaves
// on purpose, once: node tiny-server.cjs MODE STATEDIR
//
// It answers initialize and tools/list (one tool, "poke"). The first
// tools/call of its life in STATEDIR does what MODE says; later calls
// (after holt started it again) answer "alive, start N".
//	crash	exits with status 3
//	hang	never answers
//	junk	prints a line that is not JSON
//	big	answers with a 5 MiB message
//	sample	asks the client for sampling/createMessage and answers with
//		the error it got back
//	list	sends tools/list_changed and from then on lists "poke2" too
"use strict";
const fs = require("fs");
const path = require("path");
const [mode, dir] = process.argv.slice(2);
const starts = path.join(dir, mode + ".starts");
const n = (fs.existsSync(starts) ? Number(fs.readFileSync(starts, "utf8")) : 0) + 1;
fs.writeFileSync(starts, String(n));
const tripped = path.join(dir, mode + ".tripped");
let tools = [{ name: "poke", description: "Poke it",
	inputSchema: { type: "object", properties: { what: { type: "string" } } } }];
let pending = null;

function send(m) { process.stdout.write(JSON.stringify(m) + "\n"); }
function text(id, t) { send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: t }] } }); }

function call(msg) {
	if (fs.existsSync(tripped)) { text(msg.id, "alive, start " + n); return; }
	fs.writeFileSync(tripped, "1");
	switch (mode) {
	case "crash": process.stderr.write("tiny: crashing on purpose\n"); process.exit(3);
	case "hang": return;
	case "junk": process.stdout.write("this is not json at all\n"); return;
	case "big": text(msg.id, "x".repeat(5 * 1024 * 1024)); return;
	case "sample":
		pending = msg.id;
		send({ jsonrpc: "2.0", id: "s1", method: "sampling/createMessage",
			params: { messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 10 } });
		return;
	case "list":
		tools = tools.concat([{ name: "poke2", inputSchema: { type: "object" } }]);
		send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
		text(msg.id, "listed poke2");
		return;
	}
	text(msg.id, "no such mode " + mode);
}

let buf = "";
process.stdin.on("data", (d) => {
	buf += d;
	let i;
	while ((i = buf.indexOf("\n")) >= 0) {
		const line = buf.slice(0, i);
		buf = buf.slice(i + 1);
		if (line.trim() === "") continue;
		const msg = JSON.parse(line);
		if (msg.method === "initialize")
			send({ jsonrpc: "2.0", id: msg.id, result: { protocolVersion: "2025-06-18",
				capabilities: { tools: { listChanged: true } }, serverInfo: { name: "tiny", version: "1" } } });
		else if (msg.method === "tools/list")
			send({ jsonrpc: "2.0", id: msg.id, result: { tools } });
		else if (msg.method === "tools/call")
			call(msg);
		else if (msg.id === "s1" && pending !== null) {
			text(pending, "sampling answer: " + JSON.stringify(msg.error || msg.result));
			pending = null;
		} else if (msg.method === "ping")
			send({ jsonrpc: "2.0", id: msg.id, result: {} });
	}
});
process.stdin.on("end", () => process.exit(0));
