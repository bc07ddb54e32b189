#!/bin/sh
# MCP servers on the host (where = host): the reference server-everything
# from the npm registry (echo, get-sum, progress, an image, no sampling),
# the tool-* policy rules and the approval question, and servers that
# crash, hang, answer junk or too much, which fail one call and are started
# again on the next; the GET stream of a server over streamable HTTP.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/lib-mock-llm.sh"
. "$TEST_DIRECTORY/mcp-lib.sh"

test_expect_success BWRAP,MCP 'setup' '
	mkdir -p state "$HOLT_HOME/config" &&
	cat >"$HOLT_HOME/config/policy" <<-\EOF &&
	tool-allow ^mcp__everything__(echo|get-sum|get-tiny-image|trigger-long-running-operation)$
	tool-deny ^mcp__everything__get-env$
	tool-allow ^mcp__(crash|hang|junk|big|sample|list)__poke2?$
	EOF
	mcp_conf "[mcp everything]
command = node
args = $MCP_EVERYTHING stdio
where = host"
'

test_expect_success MCP '[mcp NAME] in holt.conf: shown by config show; bad values refused' '
	cp "$HOLT_HOME/config/holt.conf" conf.saved &&
	holt config show >show &&
	grep "^mcp.everything.command *= node" show &&
	grep "^mcp.everything.where *= host" show &&
	mcp_conf "[mcp x]
where = moon" &&
	test_must_fail holt config show 2>err &&
	grep "holt.conf:2: mcp .x.: where: .moon. is not one of sandbox|host" err &&
	mcp_conf "[mcp a__b]" &&
	test_must_fail holt config show 2>err &&
	grep "holt.conf:1: mcp .a__b.: a name is" err &&
	mcp_conf "[mcp x]
colour = red" &&
	test_must_fail holt config show 2>err &&
	grep "unknown key .colour." err &&
	mcp_conf "[mcp x]
timeout = 0" &&
	test_must_fail holt config show 2>err &&
	grep "timeout: .0. is not a number of seconds" err &&
	cp conf.saved "$HOLT_HOME/config/holt.conf"
'

test_expect_success BWRAP,MCP 'server-everything: echo, get-sum, progress, an image as a placeholder' '
	cat >ev.json <<-\EOF &&
	{ "turns": [
	  { "expect": { "tools_include": ["mcp__everything__echo", "mcp__everything__get-sum", "read_file"] },
	    "tool_calls": [
	      { "name": "mcp__everything__echo", "arguments": { "message": "hello from holt" } },
	      { "name": "mcp__everything__get-sum", "arguments": { "a": 2, "b": 40 } },
	      { "name": "mcp__everything__trigger-long-running-operation",
	        "arguments": { "duration": 1, "steps": 3 } },
	      { "name": "mcp__everything__get-tiny-image", "arguments": {} } ] },
	  { "expect": { "last_tool_result_contains": "not shown" }, "text": "done" } ] }
	EOF
	holt run -s ev --model script:ev.json --net off --headless "go" >out &&
	tail -n 1 out | grep "\"reason\":\"done\"" &&
	mcp_result out 1 | grep "\"result\":\"Echo: hello from holt\"" &&
	mcp_result out 2 | grep "The sum of 2 and 40 is 42" &&
	mcp_result out 3 | grep "Long running operation completed" &&
	events_of out tool.output | grep "progress 3/3" &&
	mcp_result out 4 | grep "\[image (image/png, [0-9]* bytes) not shown: holt passes only text to the model\]" &&
	! events_of out tool.finished | grep "\"error\":true" &&
	events_of out approval.decided | grep -c "\"by\":\"policy\"" >n &&
	echo 4 >expect && test_cmp expect n
'

test_expect_success BWRAP,MCP,PYTHON 'the OpenAI and Anthropic requests offer the tools with their schemas' '
	cat >api.json <<-\EOF &&
	{ "turns": [
	  { "expect": { "tools_include": ["mcp__everything__echo", "run_command"] },
	    "tool_calls": [ { "name": "mcp__everything__echo", "arguments": { "message": "through the API" } } ] },
	  { "expect": { "last_tool_result_contains": "Echo: through the API" }, "text": "done" } ] }
	EOF
	for p in openai anthropic; do
		start_mock api.json --log $p.log &&
		if test $p = openai; then url=$MOCK_URL/v1; else url=$MOCK_URL; fi &&
		holt run -s api-$p --model $p:m --base-url "$url" --net off \
			--headless "go" >out-$p &&
		stop_mock &&
		tail -n 1 out-$p | grep "\"reason\":\"done\"" &&
		python3 - $p $p.log <<-\PY || return 1
		import json, sys
		kind, path = sys.argv[1], sys.argv[2]
		body = json.loads(open(path).readline())
		for t in body["tools"]:
		    if kind == "openai":
		        name, schema = t["function"]["name"], t["function"]["parameters"]
		    else:
		        name, schema = t["name"], t["input_schema"]
		    if name == "mcp__everything__echo":
		        assert schema["type"] == "object", schema
		        assert schema["properties"]["message"]["type"] == "string", schema
		        assert schema["required"] == ["message"], schema
		        assert "$schema" not in schema, schema
		        break
		else:
		    raise SystemExit("no mcp__everything__echo in " + kind)
		PY
	done
'

test_expect_success BWRAP,MCP 'no sampling is offered, so the server lists no sampling tool' '
	cat >nosample.json <<-\EOF &&
	{ "turns": [ { "expect": { "tools_include": "mcp__everything__trigger-sampling-request" }, "text": "x" } ] }
	EOF
	test_expect_code 5 holt run -s ns --model script:nosample.json --net off \
		--headless "go" >out3 &&
	grep "tools_include" out3
'

test_expect_success BWRAP,MCP 'tool-deny refuses, no rule asks with the tool and its arguments' '
	cat >deny.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [
	      { "name": "mcp__everything__get-env", "arguments": {} },
	      { "name": "mcp__everything__get-resource-links", "arguments": { "count": 2 } } ] },
	  { "text": "ok" } ] }
	EOF
	test_expect_code 4 holt run -s deny --model script:deny.json --net off --ask deny \
		--headless "go" >out &&
	mcp_result out 1 | grep "\"denied\":{\"by\":\"policy\",\"rule\":\"^mcp__everything__get-env\$\"" &&
	events_of out approval.needed >asked &&
	test_line_count = 1 asked &&
	grep "\"tool\":\"mcp__everything__get-resource-links\"" asked &&
	grep "\"arguments\":{\"count\":2}" asked &&
	grep "\"verdict\":\"ask\"" asked &&
	grep "tool mcp__everything__get-resource-links" asked
'

test_expect_success BWRAP,MCP 'holt policy check --tool judges by the same rules' '
	holt policy check --tool mcp__everything__echo >c1 &&
	grep "^allow (auto mode): tool mcp__everything__echo" c1 &&
	test_expect_code 11 holt policy check --tool mcp__everything__get-env &&
	test_expect_code 10 holt policy check --json --tool mcp__x__y >c3 &&
	grep "\"command\":\"tool mcp__x__y\",\"verdict\":\"ask\"" c3 &&
	test_expect_code 11 holt policy check --mode strict --tool mcp__x__y &&
	mkdir -p ws/.holt &&
	echo "tool-allow ^mcp__x__y\$" >ws/.holt/policy &&
	test_expect_code 2 holt policy check --workspace ws --tool mcp__x__y \
		2>werr &&
	grep "a workspace policy may only tighten: .tool-allow. refused" werr &&
	echo "tool-deny ^mcp__everything__echo\$" >ws/.holt/policy &&
	test_expect_code 11 holt policy check --workspace ws \
		--tool mcp__everything__echo
'

test_expect_success BWRAP,MCP 'a host server gets env, not the keys holt guards' '
	mcp_conf "[mcp env2]
command = node
args = $MCP_EVERYTHING stdio
env = MCP_TEST_VAR=\"from holt.conf\"
where = host" &&
	cat >env.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "mcp__env2__get-env", "arguments": {} } ] },
	  { "text": "ok" } ] }
	EOF
	OPENAI_API_KEY=sk-test-guarded HOLT_GIT_TOKEN=tok-test-guarded \
		holt run -s envs --model script:env.json --net off --mode trust \
		--headless "go" >out &&
	mcp_result out 1 >r &&
	grep "MCP_TEST_VAR.*from holt.conf" r &&
	! grep "sk-test-guarded" r &&
	! grep "tok-test-guarded" r
'

test_expect_success BWRAP,MCP 'in the server: an interrupt ends a long MCP call and the run' '
	mcp_conf "[mcp everything]
command = node
args = $MCP_EVERYTHING stdio
where = host" &&
	cat >long.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "mcp__everything__trigger-long-running-operation",
	                      "arguments": { "duration": 60, "steps": 60 } } ] },
	  { "text": "should not be asked" } ] }
	EOF
	holt new -d -s long --model script:long.json "wait" &&
	test_wait_for 300 "holt log -t long --json | grep -q \"progress 1/60\"" &&
	holt interrupt -t long &&
	test_wait_for 100 "holt log -t long | grep \"run finished: interrupted\"" &&
	holt log -t long --json >all &&
	grep "\"type\":\"tool.finished\"" all | grep "\"interrupted\":true" &&
	! grep "should not be asked" all &&
	holt ls >ls &&
	grep long ls
'

test_expect_success BWRAP,MCP 'always allows the tool from then on: a tool-allow rule of the session' '
	cat >always.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "mcp__everything__get-resource-links", "arguments": { "count": 1 } } ] },
	  { "text": "one" },
	  { "tool_calls": [ { "name": "mcp__everything__get-resource-links", "arguments": { "count": 2 } } ] },
	  { "text": "two" } ] }
	EOF
	holt new -d -s always --model script:always.json "first" &&
	test_wait_for 300 "holt log -t always --json | grep -q approval.needed" &&
	holt approve -t always always &&
	test_wait_for 300 "holt log -t always | grep -q \"run finished: done\"" &&
	grep -x -F "tool-allow ^mcp__everything__get-resource-links\$" \
		"$HOLT_HOME/data/sessions/always/policy" &&
	holt send -t always "second" &&
	test_wait_for 300 "holt log -t always | grep -c \"run finished: done\" | grep -q 2" &&
	holt log -t always --json >all &&
	test $(grep -c "\"type\":\"approval.needed\"" all) = 1 &&
	grep "\"decision\":\"allow\",\"by\":\"policy\",\"rule\":\"^mcp__everything__get-resource-links\$\"" all
'

for m in crash hang junk big sample list; do
	tiny_conf="${tiny_conf-}
[mcp $m]
command = node
args = $MCP_TINY $m $TRASH_DIRECTORY/state
where = host
timeout = 3"
done

test_expect_success BWRAP,MCP 'a server that crashes, hangs, answers junk or too much fails one call; the next call starts it again' '
	mcp_conf "$tiny_conf" &&
	cat >bad.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [
	      { "name": "mcp__crash__poke", "arguments": {} },
	      { "name": "mcp__crash__poke", "arguments": {} },
	      { "name": "mcp__hang__poke", "arguments": {} },
	      { "name": "mcp__hang__poke", "arguments": {} },
	      { "name": "mcp__junk__poke", "arguments": {} },
	      { "name": "mcp__junk__poke", "arguments": {} },
	      { "name": "mcp__big__poke", "arguments": {} },
	      { "name": "mcp__big__poke", "arguments": {} },
	      { "name": "mcp__sample__poke", "arguments": {} } ] },
	  { "expect": { "last_tool_result_contains": "does not offer sampling" },
	    "text": "all seen" } ] }
	EOF
	holt run -s bad --model script:bad.json --net off --headless "go" \
		>out 2>err &&
	tail -n 1 out | grep "\"reason\":\"done\"" &&
	grep "session .bad.: mcp server .hang.: a call timed out after 3 s" err &&
	grep "session .bad.: mcp server .junk.: it answered what is not JSON-RPC" err &&
	mcp_result out 1 | grep "\"error\":true" &&
	mcp_result out 1 | grep "mcp server .crash. failed: it exited with status 3; its last words: tiny: crashing on purpose" &&
	mcp_result out 2 | grep "\"result\":\"alive, start 2\"" &&
	mcp_result out 3 | grep "tool .poke. did not answer within 3 s" &&
	mcp_result out 4 | grep "\"result\":\"alive, start 2\"" &&
	mcp_result out 5 | grep "it answered what is not JSON-RPC: .this is not json at all." &&
	mcp_result out 6 | grep "\"result\":\"alive, start 2\"" &&
	mcp_result out 7 | grep "it sent a message over the limit of 4 MiB" &&
	mcp_result out 8 | grep "\"result\":\"alive, start 2\"" &&
	mcp_result out 9 | grep "sampling answer: {\\\\\"code\\\\\":-32601,\\\\\"message\\\\\":\\\\\"holt does not offer sampling to MCP servers\\\\\"}"
'

test_expect_success BWRAP,MCP 'tools/list_changed: the new tool is offered at the next request' '
	cat >list.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "mcp__list__poke", "arguments": {} } ] },
	  { "expect": { "tools_include": "mcp__list__poke2" },
	    "tool_calls": [ { "name": "mcp__list__poke2", "arguments": {} } ] },
	  { "text": "ok" } ] }
	EOF
	holt run -s list --model script:list.json --net off --headless "go" >out &&
	tail -n 1 out | grep "\"reason\":\"done\"" &&
	mcp_result out 1 | grep "listed poke2" &&
	mcp_result out 2 | grep "alive"
'

test_expect_success BWRAP,MCP 'streamable HTTP (url): calls, progress; a server gone fails the call' '
	port=$(python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	{ PORT=$port node "$MCP_EVERYTHING" streamableHttp >http.log 2>&1 &
	  echo $! >http.pid; } &&
	test_wait_for 200 "grep -q \"listening on port\" http.log" &&
	mcp_conf "[mcp web]
url = http://127.0.0.1:$port/mcp
timeout = 20" &&
	cat >"$HOLT_HOME/config/policy" <<-\EOF &&
	tool-allow ^mcp__web__
	EOF
	cat >web.json <<-\EOF &&
	{ "turns": [
	  { "expect": { "tools_include": ["mcp__web__echo", "mcp__web__get-sum"] },
	    "tool_calls": [
	      { "name": "mcp__web__echo", "arguments": { "message": "over http" } },
	      { "name": "mcp__web__trigger-long-running-operation",
	        "arguments": { "duration": 1, "steps": 2 } } ] },
	  { "tool_calls": [ { "name": "mcp__web__get-sum", "arguments": { "a": 1, "b": 2 } } ] },
	  { "text": "done" } ] }
	EOF
	holt run -s web --model script:web.json --net off --headless "go" >out &&
	mcp_result out 1 | grep "\"result\":\"Echo: over http\"" &&
	events_of out tool.output | grep "progress 2/2" &&
	mcp_result out 2 | grep "Long running operation completed" &&
	mcp_result out 3 | grep "The sum of 1 and 2 is 3" &&
	grep "Received MCP GET request" http.log &&
	kill $(cat http.pid) &&
	cat >webgone.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "mcp__web__echo", "arguments": { "message": "x" } } ] },
	  { "text": "done" } ] }
	EOF
	holt run -s webgone --model script:webgone.json --net off --headless "go" \
		>out2 2>err2 &&
	tail -n 1 out2 | grep "\"reason\":\"done\"" &&
	grep "mcp server .web.: http://127.0.0.1:$port/mcp: " err2 &&
	mcp_result out2 1 >r1 &&
	grep "\"error\":true" r1 &&
	grep "mcp server .web. failed: http://127.0.0.1:$port/mcp: Could.* connect" r1
'

# Start tests/mcp/http-server.cjs in MODE, with its state in directory DIR.
http_server() {
	mkdir "$2" &&
	{ node "$TEST_DIRECTORY/mcp/http-server.cjs" "$1" "$2" >"$2/log" 2>&1 &
	  echo $! >"$2/pid"; } &&
	test_wait_for 200 "test -s $2/port" &&
	mcp_conf "[mcp web]
url = http://127.0.0.1:$(cat "$2/port")/mcp
timeout = 20" &&
	cat >"$HOLT_HOME/config/policy" <<-\EOF
	tool-allow ^mcp__web__
	EOF
}

test_expect_success BWRAP,MCP 'streamable HTTP: list_changed on the GET stream is heard; a dropped stream is opened again' '
	http_server stream st &&
	cat >st.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "mcp__web__poke", "arguments": {} } ] },
	  { "expect": { "tools_include": "mcp__web__poke2" },
	    "tool_calls": [ { "name": "mcp__web__poke2", "arguments": {} } ] },
	  { "expect": { "tools_include": "mcp__web__poke3" }, "text": "done" } ] }
	EOF
	holt run -s st --model script:st.json --net off --headless "go" >out 2>err &&
	kill $(cat st/pid) &&
	tail -n 1 out | grep "\"reason\":\"done\"" &&
	mcp_result out 1 | grep "listed poke2" &&
	mcp_result out 2 | grep "listed poke3" &&
	head -n 2 st/gets >gets &&
	cat >expect <<-\EOF &&
	GET session=s1 last-event-id=undefined status=200
	GET session=s1 last-event-id=e1 status=200
	EOF
	test_cmp expect gets
'

test_expect_success BWRAP,MCP 'streamable HTTP: a server without a GET stream (405) is not asked again; one that fails is, with a growing wait' '
	http_server no-get ng &&
	cat >ng.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "mcp__web__poke", "arguments": {} } ] },
	  { "text": "done" } ] }
	EOF
	holt run -s ng --model script:ng.json --net off --headless "go" >out &&
	kill $(cat ng/pid) &&
	tail -n 1 out | grep "\"reason\":\"done\"" &&
	mcp_result out 1 | grep "no stream" &&
	echo "GET session=s1 last-event-id=undefined status=405" >expect &&
	test_cmp expect ng/gets &&
	http_server fail-get fg &&
	holt run -s fg --model script:ng.json --net off --headless "go" >out &&
	kill $(cat fg/pid) &&
	tail -n 1 out | grep "\"reason\":\"done\"" &&
	mcp_result out 1 | grep "no stream" &&
	n=$(wc -l <fg/gets) &&
	test $n -ge 2 && test $n -le 5
'

test_expect_success BWRAP,MCP 'a server that cannot start leaves its tools out; the session goes on' '
	mcp_conf "[mcp gone]
command = /nonexistent/mcp-server
where = host" &&
	echo "{\"turns\":[{\"text\":\"still here\"}]}" >gone.json &&
	holt run -s gone --model script:gone.json --net off --headless "go" >out 2>err &&
	tail -n 1 out | grep "\"reason\":\"done\"" &&
	! grep mcp__gone out &&
	events_of "$(session_log gone)" mcp.failed >f &&
	test $(wc -l <f) = 1 &&
	grep "\"server\":\"gone\"" f &&
	grep "\"message\":\"it exited with status 127; its last words: cannot run ./nonexistent/mcp-server.: No such file" f &&
	holt log -t gone >text &&
	grep "mcp server .gone. left out of the run: it exited with status 127" text
'

test_expect_success BWRAP,MCP 'in the server, a server that keeps failing is told once, not at every run' '
	cat >twice.json <<-\EOF &&
	{ "turns": [ { "text": "one" }, { "text": "two" } ] }
	EOF
	holt new -d -s twice --model script:twice.json --net off "go" &&
	test_wait_for 300 "holt log -t twice | grep -q \"run finished: done\"" &&
	holt send -t twice "again" &&
	test_wait_for 300 "holt log -t twice | grep -c \"run finished: done\" | grep -q 2" &&
	events_of "$(session_log twice)" mcp.failed >f &&
	test $(wc -l <f) = 1
'

test_done
