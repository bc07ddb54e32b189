// tests/mcp/http-server.cjs: a small MCP server over streamable HTTP, to
// test the GET stream: node http-server.cjs MODE STATEDIR
//
// It listens on 127.0.0.1 (the port is written to STATEDIR/port), answers
// initialize (session "s1"), tools/list and tools/call, and logs every GET
// to STATEDIR/gets ("GET session=ID last-event-id=ID status=N").
//	stream	GET opens the event stream. A call of pokeN adds pokeN+1,
//		sends tools/list_changed (event id eN) on the stream and ends
//		the stream, which the client must open again for the next one;
//		the call's answer waits for the client's tools/list.
//	no-get	GET answers 405; a call answers after 2.5 s.
//	fail-get GET answers 503; a call answers after 4 s.
"use strict";
const fs = require("fs");
const http = require("http");
const path = require("path");
const [mode, dir] = process.argv.slice(2);
let tools = [{ name: "poke", inputSchema: { type: "object" } }];
let stream = null, streamWaiters = [], listWaiters = [];

function log(line) { fs.appendFileSync(path.join(dir, "gets"), line + "\n"); }
function json(res, status, body, headers) {
	res.writeHead(status, Object.assign({ "Content-Type": "application/json" }, headers || {}));
	res.end(body === null ? "" : JSON.stringify(body));
}
function answer(res, id, text) {
	json(res, 200, { jsonrpc: "2.0", id, result: { content: [{ type: "text", text }] } });
}
// Wait (at most 10 s) for a GET stream, or for the next tools/list.
function waitFor(list, ready, fn) {
	if (ready()) { fn(); return; }
	let done = false;
	const go = () => { if (!done) { done = true; fn(); } };
	list.push(go);
	setTimeout(go, 10000);
}
function wake(list) { const l = list.splice(0); l.forEach((f) => f()); }

function call(res, msg) {
	if (mode === "no-get" || mode === "fail-get") {
		setTimeout(() => answer(res, msg.id, "no stream"), mode === "no-get" ? 2500 : 4000);
		return;
	}
	const k = tools.length + 1;
	tools = tools.concat([{ name: "poke" + k, inputSchema: { type: "object" } }]);
	waitFor(streamWaiters, () => stream !== null, () => {
		if (stream === null) { answer(res, msg.id, "no stream was open"); return; }
		stream.write("id: e" + (k - 1) + "\ndata: " + JSON.stringify({
			jsonrpc: "2.0", method: "notifications/tools/list_changed" }) + "\n\n");
		stream.end();
		stream = null;
		waitFor(listWaiters, () => false, () => answer(res, msg.id, "listed poke" + k));
	});
}

function post(req, res, body) {
	let msg;
	try { msg = JSON.parse(body); } catch (e) { json(res, 400, null); return; }
	if (msg.method === undefined || msg.id === undefined) { json(res, 202, null); return; }
	if (msg.method === "initialize") {
		json(res, 200, { jsonrpc: "2.0", id: msg.id, result: {
			protocolVersion: msg.params.protocolVersion,
			capabilities: { tools: { listChanged: true } },
			serverInfo: { name: "http-server", version: "1" } } },
			{ "Mcp-Session-Id": "s1" });
		return;
	}
	if (req.headers["mcp-session-id"] !== "s1") { json(res, 400, null); return; }
	if (msg.method === "tools/list") {
		json(res, 200, { jsonrpc: "2.0", id: msg.id, result: { tools } });
		wake(listWaiters);
		return;
	}
	if (msg.method === "tools/call") { call(res, msg); return; }
	json(res, 200, { jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "no" } });
}

function get(req, res) {
	const status = mode === "no-get" ? 405 : mode === "fail-get" ? 503 :
		req.headers["mcp-session-id"] !== "s1" ? 400 : 200;
	log("GET session=" + req.headers["mcp-session-id"] + " last-event-id=" +
		req.headers["last-event-id"] + " status=" + status);
	if (status !== 200) { json(res, status, null); return; }
	res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
	res.flushHeaders();
	stream = res;
	res.on("close", () => { if (stream === res) stream = null; });
	wake(streamWaiters);
}

const server = http.createServer((req, res) => {
	if (req.method === "GET") { get(req, res); return; }
	let body = "";
	req.on("data", (d) => { body += d; });
	req.on("end", () => post(req, res, body));
});
server.listen(0, "127.0.0.1", () => {
	fs.writeFileSync(path.join(dir, "port.tmp"), String(server.address().port));
	fs.renameSync(path.join(dir, "port.tmp"), path.join(dir, "port"));
});
