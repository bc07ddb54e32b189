#!/bin/sh
# What an E2B program meets in a sandbox holt e2b serve makes: holt's own
# network policy (the proxy and its allow list; allow_internet_access
# false is no network at all), and a policy whose write rules are about
# the E2B user's home, where such programs work.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/e2b-lib.sh"

if ! test_have_prereq SYSPYTHON || ! command -v curl >/dev/null; then
	echo "1..0 # SKIP needs /usr/bin/python3 and curl"
	exit 0
fi
test_sandbox_cleanup
test_when_finished 'e2b_stop'

# A web server on the host's loopback; the proxy's test-only hosts file
# gives a registry's name (allowed by default) and another name its
# address.
mkdir -p www && echo "hello through the proxy" >www/hello.txt
/usr/bin/python3 -c '
import http.server, socketserver, sys, os
os.chdir(sys.argv[1])
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
	daemon_threads = True
h = http.server.SimpleHTTPRequestHandler
h.log_message = lambda *a: None
s = S(("127.0.0.1", 0), h)
print(s.server_address[1], flush=True)
s.serve_forever()' "$PWD/www" >port &
web=$!
test_when_finished "kill $web"
test_wait_for 50 "test -s port"
port=$(cat port)
printf "127.0.0.1 registry.npmjs.org elsewhere.example.org\n" >hosts
HOLT_PROXY_HOSTS=$PWD/hosts
export HOLT_PROXY_HOSTS

# net_of ID: the network holt sandbox ls gives it.
net_of() {
	holt sandbox ls --json | python3 -c 'import json,sys
print([x for x in json.load(sys.stdin) if x["id"] == sys.argv[1]][0]["net"])' "$1"
}

test_expect_success E2B 'by default a sandbox gets holt'"'"'s network policy' '
	e2b_serve &&
	e2b_js create >id &&
	test "$(net_of "$(cat id)")" = policy &&
	e2b_js run "$(cat id)" "curl -sS -m 10 http://registry.npmjs.org:$port/hello.txt" >out &&
	echo "hello through the proxy" >expect &&
	test_cmp expect out &&
	e2b_js run "$(cat id)" "curl -sS -m 10 http://elsewhere.example.org:$port/hello.txt" >out &&
	grep "host .elsewhere.example.org. (port $port) refused" out
'

test_expect_success E2B 'allow_internet_access: true is the policy too, false no network' '
	e2b_js create "{\"allowInternetAccess\":true}" >on &&
	test "$(net_of "$(cat on)")" = policy &&
	e2b_js create "{\"allowInternetAccess\":false}" >off &&
	test "$(net_of "$(cat off)")" = off &&
	test_expect_code 1 e2b_js run "$(cat off)" \
		"curl -sS -m 10 http://registry.npmjs.org:$port/hello.txt" >out &&
	grep "exit status" out
'

test_done
