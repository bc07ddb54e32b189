#!/bin/sh
# The e2b provider against E2B's cloud as recorded: tests/e2b-replay serves
# tests/e2b-cloud/exchange.json (request and reply shapes written from
# E2B's public OpenAPI description and envd's protos) on loopback, and
# refuses, loudly, a request whose fields or headers the cloud would not
# take. So the client is checked against the real API's shapes, not only
# against holt e2b serve's.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

EX=$TEST_DIRECTORY/e2b-cloud/exchange.json

test_when_finished 'test -f replay.pid && kill "$(cat replay.pid)"'

violations() {
	! grep VIOLATION replay.log
}

test_expect_success 'setup: the recorded cloud' '
	( "$TEST_DIRECTORY/e2b-replay" "$EX" --log "$PWD/replay.log" >port &
	  echo $! >replay.pid ) &&
	test_wait_for 100 "test -s port" &&
	port=$(head -n 1 port) &&
	key=$(python3 -c "import json,sys; e = json.load(open(sys.argv[1]))
print(e[\"exchanges\"][0][\"headers\"][\"X-API-KEY\"])" "$EX") &&
	cat >cloud.env <<-EOF
	E2B_API_URL=http://127.0.0.1:$port
	E2B_SANDBOX_URL=http://127.0.0.1:$port
	E2B_API_KEY=$key
	export E2B_API_URL E2B_SANDBOX_URL E2B_API_KEY
	EOF
'

test_expect_success 'create: POST /sandboxes, then /workspace made as root' '
	. ./cloud.env &&
	holt sandbox create --provider e2b --name c >id &&
	violations &&
	grep "^POST /sandboxes " replay.log &&
	grep "^POST /process.Process/Start .*mkdir -p /workspace" replay.log &&
	python3 -c "import json,sys
m = json.load(open(sys.argv[1]))
assert m[\"e2b\"][\"id\"] == \"ixq3zc5b8r1w0e4m2n7p\", m
assert m[\"e2b\"][\"template\"] == \"rki5dems9wqfm4r03t7g\", m
assert \"$E2B_API_KEY\" not in open(sys.argv[1]).read()" \
		"$HOLT_HOME/data/sandboxes/$(cat id)/meta.json" &&
	holt sandbox ls >ls &&
	grep "^$(cat id) *c *running .* e2b" ls
'

test_expect_success 'exec: the stream, keepalives, proto3 zeros, exit and signal' '
	. ./cloud.env &&
	holt sandbox exec c -- echo anything >out 2>err &&
	echo "hello from the cloud" >expect &&
	test_cmp expect out &&
	echo "a warning" >expect &&
	test_cmp expect err &&
	test_expect_code 3 holt sandbox exec c -- sh -c "echo exit-three" >out &&
	echo partial >expect &&
	test_cmp expect out &&
	test_expect_code 137 holt sandbox exec c -- sh -c "echo killed-here" &&
	grep "^POST /sandboxes/ixq3zc5b8r1w0e4m2n7p/connect " replay.log &&
	violations
'

test_expect_success 'a broken stream is a clear error, never a crash' '
	. ./cloud.env &&
	for j in junk-json junk-length junk-cut junk-noexit
	do
		test_might_fail holt sandbox exec c -- echo "$j" >out 2>err &&
		grep "^holt: " err >msg &&
		echo "$j: $(cat msg)" >>junk.msgs || exit 1
	done &&
	grep "junk-json: .*not JSON" junk.msgs &&
	grep "junk-length: .*a message of" junk.msgs &&
	grep "junk-cut: .*broke off" junk.msgs &&
	grep "junk-noexit: .*without its exit" junk.msgs &&
	holt sandbox exec c -- echo fine >out &&
	echo "hello from the cloud" >expect &&
	test_cmp expect out
'

test_expect_success 'files: GET and POST /files, multipart, a 404 in holt'"'"'s words' '
	. ./cloud.env &&
	holt sandbox get c app/notes.txt notes &&
	echo "notes from the cloud" >expect &&
	test_cmp expect notes &&
	printf "up\0loaded\n" >up &&
	holt sandbox put c up dir/up.bin &&
	cmp up uploads/_workspace_dir_up.bin &&
	test_must_fail holt sandbox get c no/such x 2>err &&
	grep "No such file or directory" err &&
	violations
'

test_expect_success 'a session: files listed (int64 strings, modes, links), a checkpoint' '
	. ./cloud.env &&
	cat >ls.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "list_dir", "arguments": {} } ] },
	  { "expect": { "last_tool_result_contains": "hello.py  (21 bytes)" },
	    "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "echo hi" } } ] },
	  { "expect": { "last_tool_result_contains": "hello from the cloud" },
	    "text": "Seen.", "tool_calls": [] } ] }
	EOF
	holt run -s lister --provider e2b --mode trust --model script:ls.json \
		--headless "look" >out &&
	tail -n 1 out | grep "\"reason\":\"done\"" &&
	events_of out tool.finished | head -n 1 >first &&
	grep "sub/" first &&
	grep "link" first &&
	grep "^POST /filesystem.Filesystem/ListDir " replay.log &&
	events_of out checkpoint.taken | grep "\"checkpoint\":1,.*\"bytes\":10240" &&
	violations
'

test_expect_success 'pause, state, kill: E2B'"'"'s routes; then it is gone' '
	. ./cloud.env &&
	holt sandbox pause c &&
	grep "^POST /sandboxes/ixq3zc5b8r1w0e4m2n7p/pause " replay.log &&
	holt sandbox ls | grep "^$(cat id) .* paused" &&
	holt sandbox rm c &&
	grep "^DELETE /sandboxes/ixq3zc5b8r1w0e4m2n7p " replay.log &&
	violations
'

test_expect_success 'the cloud'"'"'s 401 is named, the key is not' '
	. ./cloud.env &&
	test_must_fail env E2B_API_KEY=e2b_not_mine holt sandbox create \
		--provider e2b 2>err &&
	grep "E2B said 401: check E2B_API_KEY" err &&
	! grep e2b_not_mine err
'

test_done
