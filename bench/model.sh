#!/bin/sh
# bench/model.sh: how fast a streamed model reply is taken apart (SSE
# parsing, JSON of each event, text deltas, tool call assembly), for both
# wire formats, beside a reference measured on the same bytes: Python's
# json.loads of each event, the least an SDK in Python does.
#
# Figures: MB/s and events/s of holt's stream assembly, and the ratio to
# the reference (higher is better).
b=${HOLT_BUILD_DIR:-.}
s=${HOLT_SRC_DIR:-.}
helper=$b/tests/helper/holt-test-model
if ! [ -x "$helper" ]; then
	make -s -C "$b" tests/helper/holt-test-model >/dev/null || exit 1
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

python3 - "$tmp" <<'PY'
import json, sys, os
d = sys.argv[1]
text = "The quick brown fox jumps over the lazy dog, then reads parser.c. "
args = json.dumps({"path": "src/big.c", "content": "x = 1;\n" * 40000})
# OpenAI: 40000 text deltas, then one tool call whose arguments come in
# 6-byte pieces (as real servers cut them).
with open(os.path.join(d, "openai.sse"), "w") as f:
    def chunk(delta, fin=None):
        f.write("data: " + json.dumps({"id": "c", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": fin}]}) + "\n\n")
    for i in range(40000):
        chunk({"content": text[i % 60:i % 60 + 8]})
    chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
           "function": {"name": "write_file", "arguments": ""}}]})
    for i in range(0, len(args), 6):
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[i:i + 6]}}]})
    chunk({}, "tool_calls")
    f.write("data: [DONE]\n\n")
with open(os.path.join(d, "anthropic.sse"), "w") as f:
    def ev(name, obj):
        f.write("event: %s\ndata: %s\n\n" % (name, json.dumps(obj)))
    ev("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 1}}})
    ev("content_block_start", {"type": "content_block_start", "index": 0,
       "content_block": {"type": "text", "text": ""}})
    for i in range(40000):
        ev("content_block_delta", {"type": "content_block_delta", "index": 0,
           "delta": {"type": "text_delta", "text": text[i % 60:i % 60 + 8]}})
    ev("content_block_stop", {"type": "content_block_stop", "index": 0})
    ev("content_block_start", {"type": "content_block_start", "index": 1,
       "content_block": {"type": "tool_use", "id": "t1", "name": "write_file", "input": {}}})
    for i in range(0, len(args), 6):
        ev("content_block_delta", {"type": "content_block_delta", "index": 1,
           "delta": {"type": "input_json_delta", "partial_json": args[i:i + 6]}})
    ev("content_block_stop", {"type": "content_block_stop", "index": 1})
    ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
       "usage": {"output_tokens": 9}})
    ev("message_stop", {"type": "message_stop"})
PY

for fmt in openai anthropic; do
	f=$tmp/$fmt.sse
	best=
	for i in 1 2 3; do
		out=$("$helper" -F "$f" $fmt) || { echo "$out"; exit 1; }
		ms=$(echo "$out" | sed -n 's/.* ms \([0-9]*\) .*/\1/p')
		if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
	done
	bytes=$(echo "$out" | sed -n 's/^bytes \([0-9]*\) .*/\1/p')
	events=$(echo "$out" | sed -n 's/.* events \([0-9]*\) .*/\1/p')
	ref=$(python3 - "$f" <<'PY'
import json, sys, time
data = open(sys.argv[1], "rb").read()
t = time.monotonic()
for line in data.split(b"\n"):
    if line.startswith(b"data: ") and line != b"data: [DONE]":
        json.loads(line[6:])
print(int((time.monotonic() - t) * 1000))
PY
)
	[ "$best" -gt 0 ] || best=1
	[ "$ref" -gt 0 ] || ref=1
	awk -v f=$fmt -v b=$bytes -v e=$events -v t=$best -v r=$ref 'BEGIN {
		printf "%s stream, %.1f MB, %d events: holt %d ms (%.0f MB/s, %.0fk events/s); python json.loads per event %d ms; %.1fx\n",
		    f, b / 1e6, e, t, b / 1e6 / (t / 1000), e / 1000 / (t / 1000), r, r / t }'
done
