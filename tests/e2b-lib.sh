# tests/e2b-lib.sh: what the E2B tests (t90xx) share, on top of lib.sh:
# the official E2B SDK, installed from the npm registry at a pinned version
# into the build tree once, and holt e2b serve on a loopback port.
#
#	e2b_serve [ARGS]	start holt e2b serve ARGS on 127.0.0.1 (a free
#				port) in the background; E2B_API_URL,
#				E2B_SANDBOX_URL, E2B_API_KEY and E2B_PORT go to
#				e2b.env, which e2b_js and e2b_curl read (each
#				test runs in a subshell)
#	e2b_stop		stop it
#	e2b_js PROG ARGS	run tests/e2b/PROG.cjs with node (60 s at most)
#	e2b_curl ARGS		curl to the server, printing the status code
#				(body in "body")
#
# For --provider e2b, where holt is E2B's client, the "cloud" is holt e2b
# serve with a HOLT_HOME of its own ($CLOUD):
#	cloud_serve [PORT]	start it (a free port, or PORT); e2b.env
#				holds what holt, its client, reads
#	cloud ARGS		holt ARGS, on the cloud's side
#	cloud_kill ID		kill the cloud's sandbox ID through its API
#	cloud_cleanup		rm every sandbox, here and in the cloud
#	e2b_id_of ID		the E2B id behind holt's sandbox ID
#
# Sets the prerequisite E2B when node, npm and the SDK are there.

E2B_SDK_VERSION=2.51.0
E2B_NODE_DIR=$HOLT_BUILD_DIR/tests/node
HOLT_E2B_SDK=$E2B_NODE_DIR/node_modules/e2b
export HOLT_E2B_SDK

e2b_sdk_ok_() {
	test -f "$HOLT_E2B_SDK/package.json" &&
	grep -q "\"version\": \"$E2B_SDK_VERSION\"" "$HOLT_E2B_SDK/package.json"
}

e2b_why_=
if ! command -v bwrap >/dev/null 2>&1; then
	e2b_why_="bubblewrap is missing"
elif ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	e2b_why_="node or npm is missing"
elif ! e2b_sdk_ok_; then
	npm_install_pinned "$E2B_NODE_DIR" e2b_sdk_ok_ "e2b@$E2B_SDK_VERSION"
	e2b_sdk_ok_ || e2b_why_="npm install e2b@$E2B_SDK_VERSION failed: $(tail -n 3 npm.log 2>/dev/null | tr '\n' ' ')"
fi
if [ -n "$e2b_why_" ]; then
	say "SKIP: $e2b_why_"
else
	test_set_prereq E2B
fi

e2b_serve() {
	rm -f e2b.out
	"$HOLT_BUILD_DIR/holt" e2b serve --listen 127.0.0.1:0 "$@" \
		>e2b.out 2>>e2b.err &
	echo $! >e2b.pid
	test_wait_for 100 "grep -q listening e2b.out" || return 1
	E2B_PORT=$(sed -n 's/.*:\([0-9]*\)$/\1/p' e2b.out)
	E2B_API_URL=http://127.0.0.1:$E2B_PORT
	E2B_SANDBOX_URL=$E2B_API_URL
	E2B_API_KEY=$(holt e2b key)
	cat >e2b.env <<-EOF
	E2B_PORT=$E2B_PORT
	E2B_API_URL=$E2B_API_URL
	E2B_SANDBOX_URL=$E2B_API_URL
	E2B_API_KEY=$E2B_API_KEY
	export E2B_PORT E2B_API_URL E2B_SANDBOX_URL E2B_API_KEY
	EOF
}

e2b_stop() {
	if [ -f e2b.pid ]; then
		kill "$(cat e2b.pid)" 2>/dev/null
		rm -f e2b.pid
	fi
	return 0
}

e2b_js() {
	prog_=$1
	shift
	. ./e2b.env
	timeout 60 node "$TEST_DIRECTORY/e2b/$prog_.cjs" "$@"
}

e2b_curl() {
	. ./e2b.env
	curl -s -o body -w '%{http_code}\n' --max-time 20 "$@"
}

CLOUD=$HOLT_HOME/c
mkdir -p "$CLOUD"

cloud() {
	HOLT_HOME=$CLOUD holt "$@"
}

cloud_serve() {
	rm -f e2b.out
	HOLT_HOME=$CLOUD "$HOLT_BUILD_DIR/holt" e2b serve \
		--listen "127.0.0.1:${1:-0}" >e2b.out 2>>e2b.err &
	echo $! >e2b.pid
	test_wait_for 100 "grep -q listening e2b.out" || return 1
	port_=$(sed -n 's/.*:\([0-9]*\)$/\1/p' e2b.out)
	cat >e2b.env <<-EOF
	E2B_API_URL=http://127.0.0.1:$port_
	E2B_SANDBOX_URL=http://127.0.0.1:$port_
	E2B_API_KEY=$(cloud e2b key)
	export E2B_API_URL E2B_SANDBOX_URL E2B_API_KEY
	EOF
}

cloud_kill() {
	. ./e2b.env
	test "$(curl -s -o /dev/null -w "%{http_code}" --max-time 20 -X DELETE \
		-H "X-API-KEY: $E2B_API_KEY" "$E2B_API_URL/sandboxes/$1")" = 204
}

cloud_cleanup() {
	for d_ in "$HOLT_HOME"/data/sandboxes/sbx-*; do
		[ -d "$d_" ] && holt sandbox rm "${d_##*/}"
	done
	for d_ in "$CLOUD"/data/sandboxes/sbx-*; do
		[ -d "$d_" ] && cloud sandbox rm "${d_##*/}"
	done
	return 0
}

e2b_id_of() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["e2b"]["id"])' \
		"$HOLT_HOME/data/sandboxes/$1/meta.json"
}
