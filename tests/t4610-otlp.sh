#!/bin/sh
# Traces (DESIGN 18): with otel_endpoint in holt.conf the server sends a
# session's runs, model requests and tool calls as OTLP/HTTP JSON spans,
# read here by a loopback receiver with the protobuf types of the official
# OpenTelemetry JavaScript packages (pinned, from the npm registry, into
# the build tree); holt log --otlp sends a log after the fact, with the
# same ids; holt run --headless sends live too, and sends what is queued
# before it exits. An endpoint that refuses or never answers costs the
# session nothing: the spans are dropped and the server's log (a headless
# run's stderr) counts them.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

OTEL_TRANSFORMER_VERSION=0.208.0
OTEL_PROTOBUFJS_VERSION=7.6.6
OTEL_NODE_DIR=$HOLT_BUILD_DIR/tests/node-otlp
OTEL_PKG=$OTEL_NODE_DIR/node_modules/@opentelemetry/otlp-transformer
SERVER_LOG=$HOLT_HOME/run/$HOLT_SOCKET.log
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

otel_ok_() {
	test -f "$OTEL_PKG/package.json" &&
	grep -q "\"version\": \"$OTEL_TRANSFORMER_VERSION\"" "$OTEL_PKG/package.json" &&
	grep -q "\"version\": \"$OTEL_PROTOBUFJS_VERSION\"" \
		"$OTEL_NODE_DIR/node_modules/protobufjs/package.json"
}

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	say "SKIP: node or npm is missing"
else
	otel_ok_ || npm_install_pinned "$OTEL_NODE_DIR" otel_ok_ \
		"@opentelemetry/otlp-transformer@$OTEL_TRANSFORMER_VERSION" \
		"protobufjs@$OTEL_PROTOBUFJS_VERSION"
	if otel_ok_; then
		test_set_prereq OTLP
	else
		say "SKIP: npm install of the OpenTelemetry packages failed: $(tail -n 3 npm.log 2>/dev/null | tr '\n' ' ')"
	fi
fi

# receiver_start NAME [hang]: a receiver whose spans go to NAME.spans.
receiver_start() {
	rm -f "$1.port" "$1.spans" &&
	(node "$TEST_DIRECTORY/otlp/receiver.cjs" "$OTEL_NODE_DIR" "$1.spans" \
		${2:-} >"$1.port" 2>"$1.err" & echo $! >"$1.pid") &&
	test_wait_for 100 "test -s $1.port"
}

receiver_url() {
	echo "http://127.0.0.1:$(head -n 1 "$1.port")"
}

# conf URL: the server sends to URL from the next session on.
conf() {
	printf "otel_endpoint = %s\n" "$1" >"$HOLT_HOME/config/holt.conf"
}

# spans NAME N: the receiver NAME has N spans, within 10 s.
spans() {
	test_wait_for 100 "test \$(cat $1.spans 2>/dev/null | wc -l) -ge $2" &&
	test_line_count = "$2" "$1.spans"
}

sandbox_of() {
	sed -n 's/.*"sandbox":[[:space:]]*"\([^"]*\)".*/\1/p' \
		"$HOLT_HOME/data/sessions/$1/session.json"
}

# finished NAME: its run ends (15 s at most, whatever the endpoint does).
finished() {
	test_wait_for 150 "holt log -t $1 | grep -q \"run finished: done\""
}

test_expect_success BWRAP,OTLP 'setup: a scripted model and a receiver' '
	make_repo repo &&
	write_policy &&
	mkdir -p "$HOLT_HOME/config" &&
	cat >run.json <<-\JSON &&
	{ "turns": [
	  { "text": "Reading.", "tool_calls": [ { "name": "read_file", "arguments": { "path": "calc.py" } } ] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "python3 test_calc.py" } } ] },
	  { "text": "It fails; that is all for now.", "tool_calls": [] },
	  { "text": "Second run, nothing to do.", "tool_calls": [] },
	  { "text": "Done, endpoint down.", "tool_calls": [] },
	  { "text": "Done, endpoint silent.", "tool_calls": [] },
	  { "text": "Headless.", "tool_calls": [ { "name": "list_dir", "arguments": {} } ] },
	  { "text": "Headless, done.", "tool_calls": [] },
	  { "text": "Headless, resumed.", "tool_calls": [] },
	  { "text": "Headless, endpoint down.", "tool_calls": [] },
	  { "text": "Headless, endpoint silent.", "tool_calls": [] } ] }
	JSON
	("$TEST_DIRECTORY/mock-llm" --script run.json --idle-exit 120 \
		>mock.port 2>mock.err & echo $! >mock.pid) &&
	test_wait_for 50 "test -s mock.port" &&
	echo "http://127.0.0.1:$(head -n 1 mock.port)/v1" >mock.url &&
	receiver_start live &&
	conf "$(receiver_url live)"
'

test_expect_success BWRAP,OTLP 'a run: its span, a span per model request and tool call' '
	holt new -d -s s --repo "$TRASH_DIRECTORY/repo" --model openai:m \
		--base-url "$(cat mock.url)" "look at add" >/dev/null &&
	finished s &&
	spans live 6 &&
	node "$TEST_DIRECTORY/otlp/check.cjs" live.spans s "$(sandbox_of s)" \
		1 3 2 openai:m &&
	grep "\"name\":\"execute_tool run_command\"" live.spans >cmd &&
	grep "\"holt.tool.exit_code\":1" cmd &&
	grep "\"status\":{.*\"code\":2" cmd &&
	grep "\"status\":{.*\"message\":\"exit 1\"" cmd
'

test_expect_success BWRAP,OTLP 'a second run of the session is a trace of its own' '
	holt send -t s "once more" &&
	test_wait_for 150 "test \$(holt log -t s | grep -c \"run finished: done\") = 2" &&
	spans live 8 &&
	node "$TEST_DIRECTORY/otlp/check.cjs" live.spans s "$(sandbox_of s)" \
		2 4 2 openai:m
'

test_expect_success BWRAP,OTLP 'holt log --otlp sends the same spans, with the same ids' '
	receiver_start batch &&
	holt log -t s --otlp "$(receiver_url batch)/" >out &&
	grep "^8 spans of 2 runs sent to http://127.0.0.1:[0-9]*/v1/traces\$" out &&
	spans batch 8 &&
	node "$TEST_DIRECTORY/otlp/check.cjs" batch.spans s "$(sandbox_of s)" \
		2 4 2 openai:m &&
	sed "s/.*\"spanId\":\"\([0-9a-f]*\)\".*/\1/" live.spans | sort >live.ids &&
	sed "s/.*\"spanId\":\"\([0-9a-f]*\)\".*/\1/" batch.spans | sort >batch.ids &&
	test_cmp live.ids batch.ids
'

test_expect_success BWRAP,OTLP 'holt log --otlp to an endpoint that is down fails, saying why' '
	port=$(python3 -c "import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	test_expect_code 1 holt log -t s --otlp "http://127.0.0.1:$port" 2>err &&
	grep "holt: otlp .http://127.0.0.1:$port/v1/traces.: " err &&
	test_expect_code 2 holt log -t s --otlp "http://127.0.0.1:$port" --json
'

test_expect_success BWRAP,OTLP 'an endpoint that refuses: the run ends as usual, the drops are logged' '
	port=$(python3 -c "import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	conf "http://127.0.0.1:$port" &&
	holt new -d -s down --repo "$TRASH_DIRECTORY/repo" --model openai:m \
		--base-url "$(cat mock.url)" "anything" >/dev/null &&
	finished down &&
	test_wait_for 100 "grep -q \"otlp: [0-9]* spans dropped ([0-9]* sent): .http://127.0.0.1:$port/v1/traces.: \" \"$SERVER_LOG\""
'

test_expect_success BWRAP,OTLP 'an endpoint that never answers: the run ends as usual, the drops are logged' '
	receiver_start silent hang &&
	conf "$(receiver_url silent)" &&
	holt new -d -s silent --repo "$TRASH_DIRECTORY/repo" --model openai:m \
		--base-url "$(cat mock.url)" "anything" >/dev/null &&
	finished silent &&
	test_wait_for 200 "grep -q \"otlp: [0-9]* spans dropped ([0-9]* sent): .$(receiver_url silent)/v1/traces.: .*timed out\" \"$SERVER_LOG\"" &&
	! test -s silent.spans
'

# headless NAME: a headless run of the session NAME, to out.NAME and
# err.NAME; it finishes done (60 s at most, whatever the endpoint does).
headless() {
	timeout 60 holt run -s "$1" --repo "$TRASH_DIRECTORY/repo" \
		--model openai:m --base-url "$(cat mock.url)" \
		--headless "anything" >"out.$1" 2>"err.$1" &&
	tail -n 1 "out.$1" | grep "\"type\":\"run.finished\".*\"reason\":\"done\""
}

test_expect_success BWRAP,OTLP 'a headless run sends live, and all of it before it exits' '
	receiver_start hl &&
	conf "$(receiver_url hl)" &&
	headless hl &&
	! grep otlp err.hl &&
	test_line_count = 4 hl.spans &&
	node "$TEST_DIRECTORY/otlp/check.cjs" hl.spans hl "$(sandbox_of hl)" \
		1 2 1 openai:m &&
	grep "\"name\":\"execute_tool list_dir\"" hl.spans
'

test_expect_success BWRAP,OTLP 'holt run --resume: the new run is a trace of its own' '
	timeout 60 holt run --resume hl --headless "again" >out.hl2 2>err.hl2 &&
	tail -n 1 out.hl2 | grep "\"reason\":\"done\"" &&
	! grep otlp err.hl2 &&
	test_line_count = 6 hl.spans &&
	node "$TEST_DIRECTORY/otlp/check.cjs" hl.spans hl "$(sandbox_of hl)" \
		2 3 1 openai:m
'

test_expect_success BWRAP,OTLP 'a headless run, endpoint refusing: done, the drops on stderr' '
	port=$(python3 -c "import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	conf "http://127.0.0.1:$port" &&
	headless hldown &&
	tail -n 1 err.hldown >last &&
	grep "^holt: otlp: 2 spans dropped (0 sent): .http://127.0.0.1:$port/v1/traces.: " last
'

test_expect_success BWRAP,OTLP 'a headless run, endpoint silent: done, its exit waits 2 s at most' '
	receiver_start hlsilent hang &&
	conf "$(receiver_url hlsilent)" &&
	headless hlsilent &&
	tail -n 1 err.hlsilent >last &&
	grep "^holt: otlp: 2 spans dropped (0 sent): .$(receiver_url hlsilent)/v1/traces.: not sent within 2000 ms of the end\$" last &&
	! test -s hlsilent.spans
'

test_expect_success BWRAP,OTLP 'cleanup' '
	holt kill-server &&
	for r in live batch silent hl hlsilent mock; do
		kill $(cat $r.pid) 2>/dev/null || :
	done
'

test_done
