#!/bin/sh
# Long sessions (DESIGN 14): a conversation kept inside the model's window
# by compaction (old tool results cut, then a summary by the model, every
# user message kept verbatim), a request refused as too long compacted and
# retried, a failing summary replaced by a deterministic one, compaction
# by hand, kill -9 in the middle of one, and the model switched mid-session.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/lib-mock-llm.sh"

# A script of N turns reading big.txt, then one that answers in text.
# Usage: read_script FILE N [EXTRA-TOP-LEVEL-JSON]
read_script() {
	python3 - "$@" <<-\EOF
	import json, sys
	out, n = sys.argv[1], int(sys.argv[2])
	doc = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
	doc["turns"] = [{"text": "step %d" % (i + 1), "tool_calls": [
	    {"name": "read_file", "arguments": {"path": "big.txt"}}]}
	    for i in range(n)] + [{"text": "All read.", "tool_calls": []}]
	json.dump(doc, open(out, "w"))
	EOF
}

# Every request body the mock got is at most $1 bytes.
bodies_within() {
	python3 - "$1" mock.log <<-\EOF
	import sys
	limit = int(sys.argv[1])
	for n, line in enumerate(open(sys.argv[2]), 1):
	    if len(line) - 1 > limit:
	        sys.exit("request %d: %d bytes > %d" % (n, len(line) - 1, limit))
	EOF
}

test_expect_success BWRAP 'setup' '
	make_repo proj &&
	python3 -c "print(\"\\n\".join(\"line %04d of the big file, to fill the window\" % i for i in range(44)))" >proj/big.txt &&
	(cd proj && git add big.txt && git commit -q -m big) &&
	write_policy &&
	printf "context_window = 4000\n" >"$HOLT_HOME/config/holt.conf"
'

test_expect_success BWRAP 'a 300-step session with 10x its window in tool output finishes' '
	read_script long.json 299 &&
	start_mock long.json --idle-exit 60 --log mock.log --max-request-bytes 16000 &&
	test_expect_code 3 holt run -s long --repo proj --model openai:m \
		--base-url "$MOCK_URL/v1" --steps 3 --headless \
		"USER-ZERO: read big.txt, again and again" >run1.out &&
	test_expect_code 3 holt run --resume long --steps 147 --headless \
		"USER-AT-3: keep the \"quotes\" and the	tab" >run2.out &&
	test_expect_code 3 holt run --resume long --steps 140 --headless \
		"USER-AT-150: never touch calc.py" >run3.out &&
	holt run --resume long --steps 10 --headless \
		"USER-AT-290: finish now" >run4.out &&
	tail -n 1 run4.out | grep "\"reason\":\"done\"" &&
	log=$(session_log long) &&
	test $(grep -c "\"type\":\"assistant.message\"" "$log") = 300 &&
	test $(grep -c "\"type\":\"context.compacted\"" "$log") -ge 5 &&
	! grep "over --max-request-bytes" mock.err &&
	bodies_within 16000 &&
	total=$(grep "\"type\":\"tool.finished\"" "$log" | wc -c) &&
	test $total -gt 160000 &&
	tail -n 1 mock.log >last &&
	grep "USER-ZERO: read big.txt, again and again" last &&
	grep "USER-AT-3: keep the \\\\\"quotes\\\\\" and the\\\\ttab" last &&
	grep "USER-AT-150: never touch calc.py" last &&
	grep "USER-AT-290: finish now" last &&
	grep "Summary: the work so far (from the mock)" last
'

test_expect_success BWRAP 'context.compacted says what it did' '
	log=$(session_log long) &&
	grep "\"type\":\"context.compacted\"" "$log" | head -n 1 >ev &&
	grep "\"summary\":\"Summary: the work so far (from the mock).\"" ev &&
	grep "\"through_seq\":[1-9]" ev &&
	grep "\"tokens_before\":[1-9]" ev &&
	grep "\"tokens_after\":[1-9]" ev &&
	grep "\"by\":\"auto\"" ev &&
	before=$(sed "s/.*\"tokens_before\":\([0-9]*\).*/\1/" ev) &&
	after=$(sed "s/.*\"tokens_after\":\([0-9]*\).*/\1/" ev) &&
	test $before -gt 3200 &&
	test $after -lt $before &&
	holt log -t long | grep "context compacted by auto"
'

test_expect_success BWRAP 'anthropic: compaction, cache marks, cached tokens at their price' '
	read_script ant.json 30 "{\"summary\": {\"text\": \"ANT-SUMMARY of the reads\"}}" &&
	python3 - ant.json <<-\EOF &&
	import json, sys
	doc = json.load(open(sys.argv[1]))
	doc["turns"][-1]["usage"] = {"input_tokens": 1000, "output_tokens": 10,
	                             "cached_input_tokens": 800}
	json.dump(doc, open(sys.argv[1], "w"))
	EOF
	printf "context_window = 4000\nprice.anthropic:claude-x = 10 20 1\n" \
		>"$HOLT_HOME/config/holt.conf" &&
	test_when_finished "printf \"context_window = 4000\\n\" >\"$HOLT_HOME/config/holt.conf\"" &&
	ANTHROPIC_API_KEY=k start_mock ant.json --idle-exit 60 --log ant.log --max-request-bytes 18000 &&
	ANTHROPIC_API_KEY=k holt run -s ant --repo proj --model anthropic:claude-x \
		--base-url "$MOCK_URL" --steps 40 --headless "ANT-USER: read it all" >ant.out &&
	tail -n 1 ant.out | grep "\"reason\":\"done\"" &&
	log=$(session_log ant) &&
	grep "\"type\":\"context.compacted\"" "$log" >compacted &&
	grep "ANT-SUMMARY of the reads" compacted &&
	! grep "over --max-request-bytes" mock.err &&
	tail -n 1 ant.log >last &&
	grep "ANT-USER: read it all" last &&
	grep "ANT-SUMMARY of the reads" last &&
	python3 - last <<-\EOF &&
	import json, sys
	req = json.loads(open(sys.argv[1]).read())
	cc = {"type": "ephemeral"}
	assert req["system"][-1].get("cache_control") == cc, "system"
	assert req["tools"][-1].get("cache_control") == cc, "tools"
	assert req["messages"][-1]["content"][-1].get("cache_control") == cc, "last"
	EOF
	grep "\"type\":\"model.usage\"" "$log" | tail -n 1 >usage &&
	grep "\"input_tokens\":1000" usage &&
	grep "\"cached_input_tokens\":800" usage &&
	grep "\"cost_usd\":0.003[,}]" usage
'

test_expect_success BWRAP 'openai: cached_tokens is read and priced' '
	write_script cached.json \
		"{\"text\": \"hi\", \"tool_calls\": [], \"usage\": {\"input_tokens\": 2000, \"output_tokens\": 100, \"cached_input_tokens\": 1500}}" &&
	printf "price.openai:m = 2 8 0.5\n" >"$HOLT_HOME/config/holt.conf" &&
	test_when_finished "printf \"context_window = 4000\\n\" >\"$HOLT_HOME/config/holt.conf\"" &&
	start_mock cached.json --idle-exit 60 &&
	holt run -s cached --repo proj --model openai:m --base-url "$MOCK_URL/v1" \
		--headless "hello" >cached.out &&
	grep "\"type\":\"model.usage\"" cached.out >usage &&
	grep "\"cached_input_tokens\":1500" usage &&
	grep "\"cost_usd\":0.00255" usage &&
	holt log -t cached | grep "tokens 2000 in (1500 cached), 100 out"
'

test_expect_success BWRAP 'a request refused as too long is compacted and sent again, once' '
	for fmt in openai anthropic; do
		write_script refused.json \
			"{\"tool_calls\": [{\"name\": \"read_file\", \"arguments\": {\"path\": \"big.txt\"}}]}" \
			"{\"fail\": {\"status\": 400, \"kind\": \"context_length\"}}" \
			"{\"text\": \"went on\", \"tool_calls\": []}" &&
		ANTHROPIC_API_KEY=k start_mock refused.json --idle-exit 60 --log refused.$fmt.log &&
		if test $fmt = openai; then url=$MOCK_URL/v1; else url=$MOCK_URL; fi &&
		ANTHROPIC_API_KEY=k holt run -s refused-$fmt --repo proj --model $fmt:m \
			--base-url "$url" --headless "REFUSED-USER" >refused.out &&
		tail -n 1 refused.out | grep "\"reason\":\"done\"" &&
		grep "\"type\":\"context.compacted\"" refused.out >ev &&
		grep "\"by\":\"auto\"" ev &&
		! grep "\"type\":\"error\"" refused.out &&
		tail -n 1 refused.$fmt.log | grep REFUSED-USER &&
		stop_mock || exit 1
	done &&
	write_script twice.json \
		"{\"fail\": {\"status\": 400, \"kind\": \"context_length\"}}" \
		"{\"fail\": {\"status\": 400, \"kind\": \"context_length\"}}" \
		"{\"text\": \"never\", \"tool_calls\": []}" &&
	start_mock twice.json --idle-exit 60 &&
	test_expect_code 5 holt run -s twice --repo proj --model openai:m \
		--base-url "$MOCK_URL/v1" --headless "again" >twice.out &&
	grep "\"type\":\"error\"" twice.out | grep "too long" &&
	test $(grep -c "\"type\":\"context.compacted\"" twice.out) = 1
'

test_expect_success BWRAP 'a failing summary request falls back to a deterministic summary' '
	read_script fallback.json 12 "{\"summary\": {\"fail\": {\"status\": 500}}}" &&
	start_mock fallback.json --idle-exit 60 --log fallback.log &&
	HOLT_MODEL_TRIES=1 holt run -s fallback --repo proj --model openai:m \
		--base-url "$MOCK_URL/v1" --headless "FALLBACK-USER: go" >fallback.out &&
	tail -n 1 fallback.out | grep "\"reason\":\"done\"" &&
	grep "\"type\":\"context.compacted\"" fallback.out | head -n 1 >ev &&
	grep "\"fallback\":\"the summary request failed: " ev &&
	grep "were dropped without a summary" ev &&
	grep "read_file big.txt" ev &&
	tail -n 1 fallback.log >last &&
	grep "FALLBACK-USER: go" last &&
	grep "were dropped without a summary" last
'

test_expect_success BWRAP 'kill -9 in the middle of a compaction: all or nothing, then on' '
	read_script slow.json 8 "{\"summary\": {\"delay_ms\": 3000, \"text\": \"SLOW-SUMMARY\"}}" &&
	start_mock slow.json --idle-exit 60 --log slow.log &&
	($HOLT run -s slow --repo proj --model openai:m --base-url "$MOCK_URL/v1" \
		--headless "SLOW-USER" >slow1.out 2>&1 & echo $! >pid) &&
	test_wait_for 200 "grep -q \"about to be compacted\" slow.log" &&
	kill -9 $(cat pid) &&
	test_wait_for 50 "! kill -0 $(cat pid)" &&
	log=$(session_log slow) &&
	! grep "\"type\":\"context.compacted\"" "$log" &&
	holt run --resume slow --headless >slow2.out &&
	tail -n 1 slow2.out | grep "\"reason\":\"done\"" &&
	holt log -t slow --json >all &&
	grep "\"type\":\"context.compacted\"" all | head -n 1 | grep SLOW-SUMMARY &&
	tail -n 1 slow.log | grep SLOW-USER
'

test_expect_success BWRAP 'AGENTS.md reaches the system prompt; a change is seen at the next step' '
	make_repo agents &&
	printf "AGENTS-V1: use tabs\n" >agents/AGENTS.md &&
	printf "CLAUDE-ONLY\n" >agents/CLAUDE.md &&
	(cd agents && git add . && git commit -q -m agents) &&
	printf "USER-WIDE: be brief\n" >"$HOLT_HOME/config/AGENTS.md" &&
	test_when_finished "rm -f \"$HOLT_HOME/config/AGENTS.md\"" &&
	write_script agents.json \
		"{\"tool_calls\": [{\"name\": \"write_file\", \"arguments\": {\"path\": \"AGENTS.md\", \"content\": \"AGENTS-V2: use spaces\\n\"}}]}" \
		"{\"text\": \"ok\", \"tool_calls\": []}" &&
	start_mock agents.json --idle-exit 60 --log agents.log &&
	holt run -s agents --repo agents --model openai:m --mode trust \
		--base-url "$MOCK_URL/v1" --headless "go" >agents.out &&
	tail -n 1 agents.out | grep "\"reason\":\"done\"" &&
	python3 - agents.log <<-\EOF &&
	import json, sys
	reqs = [json.loads(l) for l in open(sys.argv[1])]
	sys0, sys1 = (r["messages"][0]["content"] for r in reqs)
	assert reqs[0]["messages"][0]["role"] == "system"
	assert "AGENTS-V1: use tabs" in sys0 and "USER-WIDE: be brief" in sys0, sys0
	assert "CLAUDE-ONLY" not in sys0
	assert "AGENTS-V2: use spaces" in sys1 and "AGENTS-V1" not in sys1, sys1
	EOF
	test $(grep -c "\"type\":\"instructions.loaded\"" agents.out) = 2
'

test_expect_success BWRAP 'a workspace AGENTS.md that links out of it is not read' '
	make_repo linked &&
	printf "HOST-SECRET-TEXT\n" >host-secret &&
	ln -s "$PWD/host-secret" linked/AGENTS.md &&
	(cd linked && git add . && git commit -q -m link) &&
	write_script linked.json "{\"text\": \"ok\", \"tool_calls\": []}" &&
	start_mock linked.json --idle-exit 60 --log linked.log &&
	holt run -s linked --repo linked --model openai:m \
		--base-url "$MOCK_URL/v1" --headless "go" >linked.out &&
	! grep HOST-SECRET-TEXT linked.log &&
	! grep HOST-SECRET-TEXT "$(session_log linked)"
'

test_expect_success BWRAP 'holt compact by hand, with a focus; /model switches the model' '
	write_script hand.json \
		"{\"tool_calls\": [{\"name\": \"read_file\", \"arguments\": {\"path\": \"big.txt\"}}]}" \
		"{\"text\": \"read\", \"tool_calls\": []}" \
		"{\"text\": \"after\", \"tool_calls\": []}" &&
	: >"$HOLT_HOME/config/holt.conf" &&
	test_when_finished "printf \"context_window = 4000\\n\" >\"$HOLT_HOME/config/holt.conf\"" &&
	start_mock hand.json --idle-exit 60 --log hand.log &&
	holt new -d -s hand --repo proj --model openai:m --base-url "$MOCK_URL/v1" \
		"HAND-USER: read" >/dev/null &&
	test_wait_for 300 "holt ls | grep \"^hand .*finished\"" &&
	holt compact -t hand the parser errors &&
	test_wait_for 100 "holt log -t hand --json | grep -q context.compacted" &&
	holt log -t hand --json | grep "\"type\":\"context.compacted\"" >ev &&
	grep "\"by\":\"user\"" ev &&
	grep "\"focus\":\"the parser errors\"" ev &&
	grep "Focus the summary on: the parser errors" hand.log &&
	SOCK=$HOLT_HOME/run/$HOLT_SOCKET &&
	python3 "$TEST_DIRECTORY/proto-client.py" --wait 1 "$SOCK" send \
		"{\"type\":\"hello\",\"version\":1}" \
		"{\"type\":\"model\",\"session\":\"hand\",\"model\":\"openai:gpt-4o\"}" \
		"{\"type\":\"state\",\"session\":\"hand\"}" >model.out &&
	grep "\"window\": 128000" model.out &&
	holt log -t hand | grep "model openai:gpt-4o (was openai:m), window 128000" &&
	python3 "$TEST_DIRECTORY/proto-client.py" --wait 1 "$SOCK" send \
		"{\"type\":\"hello\",\"version\":1}" \
		"{\"type\":\"model\",\"session\":\"hand\",\"model\":\"nope\"}" >bad.out &&
	grep "\"type\": \"error\"" bad.out &&
	holt send -t hand "HAND-AFTER" &&
	test_wait_for 300 "holt log -t hand | grep -c \"run finished\" | grep -q 2" &&
	tail -n 1 hand.log >last &&
	grep "\"model\":\"gpt-4o\"" last &&
	grep "HAND-USER: read" last &&
	grep "HAND-AFTER" last &&
	grep "Summary: the work so far (from the mock)" last &&
	holt kill-server
'

test_expect_success BWRAP 'a rewind to a step a compaction covers: the conversation read back from the log' '
	write_script back.json \
		"{\"tool_calls\": [{\"name\": \"write_file\", \"arguments\": {\"path\": \"n.txt\", \"content\": \"one\"}}]}" \
		"{\"text\": \"BACK-DONE\", \"tool_calls\": []}" \
		"{\"text\": \"BACK-MORE-ANSWER\", \"tool_calls\": []}" \
		"{\"text\": \"again\", \"tool_calls\": []}" &&
	: >"$HOLT_HOME/config/holt.conf" &&
	test_when_finished "printf \"context_window = 4000\\n\" >\"$HOLT_HOME/config/holt.conf\"" &&
	start_mock back.json --idle-exit 60 --log back.log &&
	holt new -d -s back --repo proj --mode trust --model openai:m \
		--base-url "$MOCK_URL/v1" "BACK-USER: write" >/dev/null &&
	test_wait_for 300 "holt ls | grep \"^back .*finished\"" &&
	holt log -t back | grep "step 1: checkpoint" &&
	holt compact -t back &&
	test_wait_for 100 "holt log -t back --json | grep -q context.compacted" &&
	holt send -t back "BACK-MORE" &&
	test_wait_for 300 "holt log -t back | grep -c \"run finished\" | grep -q 2" &&
	holt kill-server &&
	holt rewind -t back --to 1 --conversation-only &&
	holt kill-server &&
	holt send -t back "BACK-AGAIN" &&
	test_wait_for 300 "holt log -t back | grep -c \"run finished\" | grep -q 3" &&
	tail -n 1 back.log >last &&
	grep "BACK-USER: write" last &&
	grep "BACK-AGAIN" last &&
	grep "rewound the session" last &&
	! grep "Summary: the work so far" last &&
	! grep "BACK-MORE" last &&
	! grep "BACK-DONE" last &&
	holt kill-server
'

test_done
