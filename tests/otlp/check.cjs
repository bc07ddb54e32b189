// tests/otlp/check.cjs: the spans a receiver got (receiver.cjs's lines)
// are a session's runs, model requests and tool calls, as holt exports
// them. Exits 1 with the first thing wrong.
//
//	node check.cjs SPANS SESSION SANDBOX RUNS MODELS TOOLS MODEL
"use strict";
const fs = require("fs");
const [file, session, sandbox, runs, models, tools, model] = process.argv.slice(2);
const spans = fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));

function fail(msg, sp) {
	console.error("check: " + msg + (sp ? "\n  " + JSON.stringify(sp) : ""));
	process.exit(1);
}

const byId = new Map();
for (const sp of spans) {
	if (byId.has(sp.spanId))
		fail("span id sent twice", sp);
	byId.set(sp.spanId, sp);
}
const roots = spans.filter((s) => s.name === "invoke_agent holt");
const chats = spans.filter((s) => s.name.startsWith("chat "));
const execs = spans.filter((s) => s.name.startsWith("execute_tool "));
if (roots.length !== Number(runs)) fail(roots.length + " run spans, not " + runs);
if (chats.length !== Number(models)) fail(chats.length + " model spans, not " + models);
if (execs.length !== Number(tools)) fail(execs.length + " tool spans, not " + tools);
if (spans.length !== roots.length + chats.length + execs.length)
	fail("spans of no known kind");

for (const sp of spans) {
	if (BigInt(sp.start) <= 0n || BigInt(sp.start) > BigInt(sp.end))
		fail("start is not <= end", sp);
	if (sp.attrs["holt.session"] !== session) fail("holt.session", sp);
	if (sp.attrs["holt.sandbox.id"] !== sandbox) fail("holt.sandbox.id", sp);
	if (sp.resource["service.name"] !== "holt") fail("service.name", sp);
}
for (const r of roots) {
	if (r.parentSpanId !== "") fail("a run span has a parent", r);
	if (r.attrs["gen_ai.operation.name"] !== "invoke_agent") fail("run: operation", r);
	if (r.attrs["holt.run.reason"] !== "done") fail("run: reason", r);
}
if (new Set(roots.map((r) => r.traceId)).size !== roots.length)
	fail("two runs share a trace");
for (const sp of chats.concat(execs)) {
	const p = byId.get(sp.parentSpanId);
	if (p === undefined || p.name !== "invoke_agent holt")
		fail("the parent is not a run span", sp);
	if (p.traceId !== sp.traceId) fail("not in its run's trace", sp);
	if (BigInt(sp.start) < BigInt(p.start) || BigInt(sp.end) > BigInt(p.end))
		fail("not within its run (" + p.start + ".." + p.end + ")", sp);
}
const [system, name] = model.split(":");
for (const c of chats) {
	if (c.kind !== 3) fail("a model request is not a client span", c);
	if (c.name !== "chat " + name) fail("model span name", c);
	if (c.attrs["gen_ai.system"] !== system) fail("gen_ai.system", c);
	if (c.attrs["gen_ai.request.model"] !== name) fail("gen_ai.request.model", c);
	if (c.attrs["gen_ai.operation.name"] !== "chat") fail("gen_ai.operation.name", c);
	for (const k of ["gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"])
		if (!Number.isInteger(c.attrs[k]) || c.attrs[k] <= 0) fail(k, c);
}
for (const t of execs) {
	if (t.name !== "execute_tool " + t.attrs["gen_ai.tool.name"]) fail("tool span name", t);
	if (typeof t.attrs["gen_ai.tool.call.id"] !== "string") fail("gen_ai.tool.call.id", t);
}
console.log(spans.length + " spans: " + roots.length + " runs, " + chats.length +
    " model requests, " + execs.length + " tool calls");
