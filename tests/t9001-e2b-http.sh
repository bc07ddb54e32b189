#!/bin/sh
# holt e2b serve on bad input: wrong keys and tokens, bad JSON, unknown
# routes, oversized bodies, broken Connect envelopes, malformed uploads.
# Each is a clear HTTP error, and the server and its sandboxes carry on.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/e2b-lib.sh"

test_when_finished 'e2b_stop'

# json_get FILE KEY: a top-level string of a JSON file.
json_get() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

test_expect_success BWRAP 'setup: a server and one sandbox' '
	e2b_serve &&
	. ./e2b.env &&
	test "$(e2b_curl -X POST -H "X-API-KEY: $E2B_API_KEY" \
		-H "Content-Type: application/json" \
		-d "{\"metadata\":{\"k\":\"v\"}}" "$E2B_API_URL/sandboxes")" = 201 &&
	json_get body sandboxID >id &&
	json_get body envdAccessToken >token &&
	grep "^sbx-[0-9a-f]\{12\}$" id
'

test_expect_success BWRAP 'no key or a wrong key: 401, nothing created' '
	. ./e2b.env &&
	ls "$HOLT_HOME/data/sandboxes" >before &&
	test "$(e2b_curl -X POST -d "{}" "$E2B_API_URL/v2/sandboxes")" = 401 &&
	grep "no X-API-KEY" body &&
	test "$(e2b_curl -X POST -H "X-API-KEY: e2b_wrong" -d "{}" \
		"$E2B_API_URL/v2/sandboxes")" = 401 &&
	grep "\"code\":401" body &&
	test "$(e2b_curl -H "X-API-KEY: e2b_wrong" "$E2B_API_URL/v2/sandboxes")" = 401 &&
	ls "$HOLT_HOME/data/sandboxes" >after &&
	test_cmp before after
'

test_expect_success BWRAP 'bad JSON and bad fields: 400, nothing created' '
	. ./e2b.env &&
	ls "$HOLT_HOME/data/sandboxes" >before &&
	for body in "{" "[1,2]" "\"x\"" "{\"timeout\":-5}" "{\"timeout\":\"a\"}" \
		"{\"metadata\":{\"a\":1}}" "{\"envVars\":[]}" "{\"templateID\":7}"
	do
		code=$(e2b_curl -X POST -H "X-API-KEY: $E2B_API_KEY" -d "$body" \
			"$E2B_API_URL/v2/sandboxes") &&
		{ test "$code" = 400 || { echo "$body: $code"; exit 1; }; } &&
		grep "\"message\"" body || exit 1
	done &&
	ls "$HOLT_HOME/data/sandboxes" >after &&
	test_cmp before after &&
	test "$(e2b_curl -X POST -H "X-API-KEY: $E2B_API_KEY" -d "{" \
		"$E2B_API_URL/sandboxes/$(cat id)/timeout")" = 400
'

test_expect_success BWRAP 'unknown routes and ids: 404; wrong methods: 405' '
	. ./e2b.env &&
	k="X-API-KEY: $E2B_API_KEY" &&
	test "$(e2b_curl -H "$k" "$E2B_API_URL/nope")" = 404 &&
	grep "no such route: /nope" body &&
	test "$(e2b_curl -H "$k" "$E2B_API_URL/sandboxes/$(cat id)/frob")" = 404 &&
	test "$(e2b_curl -H "$k" "$E2B_API_URL/sandboxes/sbx-000000000000")" = 404 &&
	grep "sbx-000000000000.: not found" body &&
	test "$(e2b_curl -X POST -H "$k" "$E2B_API_URL/sandboxes/../../etc/connect")" = 404 &&
	test "$(e2b_curl -X DELETE -H "$k" "$E2B_API_URL/sandboxes/sbx-000000000000")" = 404 &&
	test "$(e2b_curl -X PUT -H "$k" "$E2B_API_URL/sandboxes")" = 405 &&
	test "$(e2b_curl -X GET -H "$k" "$E2B_API_URL/sandboxes/$(cat id)/pause")" = 405
'

test_expect_success BWRAP 'oversized bodies: 413' '
	. ./e2b.env &&
	head -c 2000000 /dev/zero | tr "\0" " " >big.json &&
	test "$(e2b_curl -X POST -H "X-API-KEY: $E2B_API_KEY" \
		--data-binary @big.json "$E2B_API_URL/v2/sandboxes")" = 413 &&
	python3 - "$E2B_PORT" >reply <<-\PY &&
	import socket, sys
	s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
	s.sendall(b"POST /files?path=x HTTP/1.1\r\nHost: x\r\n"
	          b"Content-Length: 300000000\r\n\r\n")
	print(s.recv(4096).split(b"\r\n")[0].decode())
	PY
	grep "^HTTP/1.1 413" reply
'

test_expect_success BWRAP 'the sandbox side: wrong token 401, gone 502, bad calls' '
	. ./e2b.env &&
	s="E2b-Sandbox-Id: $(cat id)" &&
	t="X-Access-Token: $(cat token)" &&
	test "$(e2b_curl -H "$s" "$E2B_API_URL/health")" = 204 &&
	test "$(e2b_curl -H "$s" -H "X-Access-Token: nope" \
		"$E2B_API_URL/files?path=x")" = 401 &&
	test "$(e2b_curl -H "$s" "$E2B_API_URL/files?path=x")" = 401 &&
	test "$(e2b_curl -H "E2b-Sandbox-Id: sbx-000000000000" -H "$t" \
		"$E2B_API_URL/files?path=x")" = 502 &&
	test "$(e2b_curl -H "$s" -H "$t" "$E2B_API_URL/frob")" = 404 &&
	test "$(e2b_curl -H "$s" -H "$t" -H "Content-Type: application/json" \
		-d "{\"path\":\"/tmp\"}" \
		"$E2B_API_URL/filesystem.Filesystem/WatchDirX")" = 501 &&
	grep "\"code\":\"unimplemented\"" body &&
	test "$(e2b_curl -H "$s" -H "$t" -H "Content-Type: application/json" \
		-d "{nope" "$E2B_API_URL/filesystem.Filesystem/Stat")" = 400 &&
	grep "\"code\":\"invalid_argument\"" body &&
	test "$(e2b_curl -H "$s" -H "$t" -H "Content-Type: application/json" \
		-d "{\"path\":\"no/such\"}" "$E2B_API_URL/filesystem.Filesystem/Stat")" = 404 &&
	grep "\"code\":\"not_found\"" body &&
	test "$(e2b_curl -H "$s" -H "$t" -H "Content-Type: application/connect+json" \
		-d "xxxxxxxx" "$E2B_API_URL/process.Process/Start")" = 400 &&
	grep "not one enveloped JSON object" body &&
	test "$(e2b_curl -H "$s" -H "$t" -H "Content-Type: application/json" \
		-d "{}" "$E2B_API_URL/process.Process/Start")" = 400 &&
	test "$(e2b_curl -H "$s" -H "$t" -H "Content-Type: multipart/form-data; boundary=zz" \
		--data-binary "not multipart" "$E2B_API_URL/files?path=a")" = 400 &&
	grep "malformed multipart" body &&
	test "$(e2b_curl -H "$s" -H "$t" -H "Content-Type: application/octet-stream" \
		-H "Content-Encoding: gzip" --data-binary "x" \
		"$E2B_API_URL/files?path=a")" = 415
'

test_expect_success BWRAP 'allow_internet_access false: no network; timeouts outlive the server' '
	. ./e2b.env &&
	test "$(e2b_curl -X POST -H "X-API-KEY: $E2B_API_KEY" \
		-d "{\"allow_internet_access\":false,\"timeout\":2}" \
		"$E2B_API_URL/v2/sandboxes")" = 201 &&
	json_get body sandboxID >id2 &&
	holt sandbox ls --json >ls.json &&
	python3 -c "import json,sys
s = [x for x in json.load(open(\"ls.json\")) if x[\"id\"] == sys.argv[1]][0]
assert s[\"net\"] == \"off\", s" "$(cat id2)" &&
	e2b_stop &&
	e2b_serve &&
	. ./e2b.env &&
	test_wait_for 100 "holt sandbox ls | grep \"$(cat id2) .* paused\"" &&
	test "$(e2b_curl -H "X-API-KEY: $E2B_API_KEY" \
		"$E2B_API_URL/sandboxes/$(cat id2)")" = 200 &&
	grep "\"state\":\"paused\"" body
'

test_expect_success BWRAP 'after all that, the server and the sandbox work' '
	. ./e2b.env &&
	s="E2b-Sandbox-Id: $(cat id)" &&
	t="X-Access-Token: $(cat token)" &&
	test "$(e2b_curl -H "$s" -H "$t" -H "Content-Type: application/octet-stream" \
		--data-binary "still here" "$E2B_API_URL/files?path=ok.txt")" = 200 &&
	grep "\"path\":\"/home/user/ok.txt\"" body &&
	test "$(e2b_curl -H "$s" -H "$t" "$E2B_API_URL/files?path=/home/user/ok.txt")" = 200 &&
	
	test "$(cat body)" = "still here" &&
	kill -0 "$(cat e2b.pid)"
'

test_done
