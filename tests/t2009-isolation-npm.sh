#!/bin/sh
# npm install through the proxy of a --net policy sandbox: the real npm
# client inside, a registry on the host's loopback (a static HTTP server
# with a packument and a tarball made here with npm pack) whose name the
# proxy's test-only hosts file (HOLT_PROXY_HOSTS) maps to it. A registry
# the policy allows installs; one it does not is refused at once, and npm
# says which host and how to allow it.
. "$(dirname "$0")/lib.sh"

if ! test_have_prereq BWRAP,SYSPYTHON || ! test -x /usr/bin/npm ||
    ! test -x /usr/bin/node; then
	echo "1..0 # SKIP needs bubblewrap, /usr/bin/python3, npm and node"
	exit 0
fi

test_sandbox_cleanup

# The registry: a static server on the host's loopback.
mkdir -p www/tarballs
/usr/bin/python3 -c '
import http.server, socketserver, sys, os, functools
os.chdir(sys.argv[1])
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
	daemon_threads = True
h = functools.partial(http.server.SimpleHTTPRequestHandler)
h.log_message = lambda *a: None
s = S(("127.0.0.1", 0), h)
print(s.server_address[1], flush=True)
s.serve_forever()' "$PWD/www" >port &
web=$!
test_when_finished "kill $web"
test_wait_for 50 "test -s port"
port=$(cat port)

printf "127.0.0.1 registry.npmjs.org npm.example.com not-allowed.example.org\n" >hosts
HOLT_PROXY_HOSTS=$PWD/hosts
export HOLT_PROXY_HOSTS

npm_in() {
	holt sandbox exec n -- sh -c "cd /workspace/app && npm $*"
}
npm_opts="--no-audit --no-fund --no-update-notifier --fetch-retries=0"

test_expect_success 'a package packed with npm pack, and its packument' '
	mkdir -p pkg &&
	printf "{\"name\":\"holt-pad\",\"version\":\"1.2.0\",\"main\":\"index.js\"}\n" \
		>pkg/package.json &&
	echo "module.exports = (s, n) => \"-\".repeat(Math.max(0, n - s.length)) + s;" \
		>pkg/index.js &&
	(cd pkg && npm pack --json --pack-destination ../www/tarballs) \
		>pack.json 2>npm-pack.err &&
	/usr/bin/python3 -c "
import json, sys
p = json.load(open(\"pack.json\"))[0]
def doc(host):
	return {\"name\": p[\"name\"], \"dist-tags\": {\"latest\": p[\"version\"]},
		\"versions\": {p[\"version\"]: {\"name\": p[\"name\"],
		\"version\": p[\"version\"], \"main\": \"index.js\",
		\"dist\": {\"tarball\": \"http://%s:$port/tarballs/%s\" % (host,
		p[\"filename\"]), \"integrity\": p[\"integrity\"],
		\"shasum\": p[\"shasum\"]}}}}
json.dump(doc(\"registry.npmjs.org\"), open(\"www/holt-pad\", \"w\"))
" &&
	test -s www/holt-pad &&
	holt sandbox create --name n >id &&
	holt sandbox exec n -- mkdir /workspace/app
'
dir=$HOLT_HOME/data/sandboxes/$(cat id 2>/dev/null)

test_expect_success 'npm install from a registry the built-in list allows' '
	npm_in install $npm_opts --registry http://registry.npmjs.org:$port/ \
		holt-pad >out 2>&1 &&
	grep "added 1 package" out &&
	holt sandbox exec n -- sh -c "cd /workspace/app &&
		node -e \"console.log(require(\\\"holt-pad\\\")(\\\"x\\\", 4))\"" >out &&
	echo "---x" >expect && test_cmp expect out &&
	grep "allow registry.npmjs.org:$port registry.npmjs.org (default:" \
		"$dir/run/net.log"
'

test_expect_success 'a registry the policy does not allow: refused at once, named' '
	start=$(date +%s) &&
	test_must_fail npm_in install $npm_opts \
		--registry http://not-allowed.example.org:$port/ holt-pad@1.2.0 \
		>out 2>&1 &&
	test $(( $(date +%s) - start )) -lt 20 &&
	grep "403 Forbidden (holt: to allow it add .net-allow not-allowed.example.org. to the policy) - GET http://not-allowed.example.org:$port/holt-pad" out &&
	grep "deny not-allowed.example.org:$port " "$dir/run/net.log" &&
	: over https, the CONNECT is refused the same way &&
	test_must_fail npm_in install $npm_opts \
		--registry https://not-allowed.example.org/ holt-pad@1.2.0 \
		>out 2>&1 &&
	grep "403 Forbidden (holt: to allow it add .net-allow not-allowed.example.org. to the policy) - GET https://not-allowed.example.org/holt-pad" out
'

test_expect_success 'a net-allow rule lets that registry in' '
	mkdir -p "$HOLT_HOME/config" &&
	echo "net-allow npm.example.com" >"$HOLT_HOME/config/policy" &&
	sed "s/registry.npmjs.org/npm.example.com/" www/holt-pad >www/holt-pad.new &&
	mv www/holt-pad.new www/holt-pad &&
	npm_in uninstall $npm_opts holt-pad >/dev/null 2>&1 &&
	npm_in cache clean --force >/dev/null 2>&1 &&
	npm_in install $npm_opts --registry http://npm.example.com:$port/ \
		holt-pad >out 2>&1 &&
	grep "added 1 package" out &&
	grep "allow npm.example.com:$port npm.example.com (user:1)" \
		"$dir/run/net.log"
'

test_done
