// tests/otlp/receiver.cjs: an OTLP/HTTP JSON trace receiver on loopback.
// Each POST to /v1/traces is read as an ExportTraceServiceRequest with the
// protobuf types that @opentelemetry/otlp-transformer ships: the JSON is
// turned into the message, encoded, decoded again, and must come back the
// same (a field with a wrong name or type would not). The decoded spans go
// to OUT, one JSON line each (ids in hex, attributes as an object).
//
//	node receiver.cjs NODE_DIR OUT [hang]
//
// prints its port first; "hang" takes requests and never answers.
"use strict";
const http = require("http");
const fs = require("fs");
const path = require("path");

const [nodeDir, out, mode] = process.argv.slice(2);
const root = require(path.join(nodeDir, "node_modules/@opentelemetry/" +
    "otlp-transformer/build/src/generated/root.js"));
const Req = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const ID_FIELDS = ["traceId", "spanId", "parentSpanId"];

function hexToBytes(s, n, what) {
	if (typeof s !== "string" || !new RegExp("^[0-9a-f]{" + n * 2 + "}$").test(s))
		throw new Error(what + ": not " + n + " bytes in lower-case hex: " + JSON.stringify(s));
	return Buffer.from(s, "hex");
}

function eachSpan(req, fn) {
	for (const rs of req.resourceSpans || [])
		for (const ss of rs.scopeSpans || [])
			for (const sp of ss.spans || [])
				fn(sp);
}

// OTLP/JSON to the plain object protobufjs reads: ids are hex there.
function toProtoObject(json) {
	const o = JSON.parse(JSON.stringify(json));
	eachSpan(o, (sp) => {
		for (const f of ID_FIELDS)
			if (f in sp)
				sp[f] = hexToBytes(sp[f], f === "traceId" ? 16 : 8, f);
	});
	return o;
}

function fromProto(msg) {
	const o = Req.toObject(msg, { longs: String, enums: Number });
	eachSpan(o, (sp) => {
		for (const f of ID_FIELDS)
			if (f in sp)
				sp[f] = Buffer.from(sp[f]).toString("hex");
	});
	return o;
}

function canon(v) {
	if (Array.isArray(v))
		return "[" + v.map(canon).join(",") + "]";
	if (v !== null && typeof v === "object")
		return "{" + Object.keys(v).sort().map((k) =>
		    JSON.stringify(k) + ":" + canon(v[k])).join(",") + "}";
	return JSON.stringify(v);
}

function attrValue(v) {
	if ("stringValue" in v) return v.stringValue;
	if ("intValue" in v) return Number(v.intValue);
	if ("doubleValue" in v) return v.doubleValue;
	if ("boolValue" in v) return v.boolValue;
	return v;
}

function decode(body) {
	const json = JSON.parse(body);
	const msg = Req.decode(Req.encode(Req.fromObject(toProtoObject(json))).finish());
	const back = fromProto(msg);
	if (canon(back) !== canon(json))
		throw new Error("not an ExportTraceServiceRequest as sent: sent " +
		    canon(json).slice(0, 2000) + "\nread " + canon(back).slice(0, 2000));
	const lines = [];
	for (const rs of back.resourceSpans) {
		const resource = {};
		for (const a of rs.resource.attributes)
			resource[a.key] = attrValue(a.value);
		for (const ss of rs.scopeSpans)
			for (const sp of ss.spans) {
				const attrs = {};
				for (const a of sp.attributes || [])
					attrs[a.key] = attrValue(a.value);
				lines.push(JSON.stringify({
					traceId: sp.traceId, spanId: sp.spanId,
					parentSpanId: sp.parentSpanId || "",
					name: sp.name, kind: sp.kind,
					start: sp.startTimeUnixNano,
					end: sp.endTimeUnixNano,
					status: sp.status || {}, attrs, resource,
					scope: ss.scope.name }));
			}
	}
	return lines;
}

const server = http.createServer((req, res) => {
	const chunks = [];
	req.on("data", (c) => chunks.push(c));
	req.on("end", () => {
		if (mode === "hang")
			return;		// never answered
		if (req.method !== "POST" || req.url !== "/v1/traces" ||
		    !/^application\/json/.test(req.headers["content-type"] || "")) {
			res.writeHead(404).end();
			return;
		}
		try {
			const lines = decode(Buffer.concat(chunks).toString("utf8"));
			fs.appendFileSync(out, lines.map((l) => l + "\n").join(""));
			res.writeHead(200, { "Content-Type": "application/json" });
			res.end("{}");
		} catch (e) {
			process.stderr.write("receiver: " + e.message + "\n");
			res.writeHead(400, { "Content-Type": "application/json" });
			res.end(JSON.stringify({ message: e.message.slice(0, 300) }));
		}
	});
});
server.listen(0, "127.0.0.1", () => {
	process.stdout.write(server.address().port + "\n");
});
setTimeout(() => process.exit(0), 300000).unref();
