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
test_web_server "$PWD/www"
printf "127.0.0.1 registry.npmjs.org elsewhere.example.org asked.example.org\n" >hosts
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

test_expect_success E2B 'write rules are about the home: commands' '
	e2b_stop &&
	cat >home.policy <<-\EOF &&
	allow ^(echo|cat)(\s|$)
	write-deny ^tests/
	write-deny ^/tmp/kept/
	EOF
	e2b_serve --policy home.policy --mode strict &&
	id=$(cat id) &&
	home=$HOLT_HOME/data/sandboxes/$id/home &&
	e2b_js run "$id" "echo a >/home/user/repo/a.txt && echo b >~/b.txt && echo c >c.txt" >out &&
	test "$(cat "$home/repo/a.txt" "$home/b.txt" "$home/repo/c.txt")" = "$(printf "a\nb\nc")" &&
	for c in "echo x >../tests/x" "echo x >~/tests/x" "echo x >/home/user/tests/x" \
		"cd .. && echo x >tests/x"
	do
		test_expect_code 1 e2b_js run "$id" "$c" >out &&
		grep "\[permission_denied\] holt policy: .* denied: .*tests/" out ||
		{ echo "ran: $c"; cat out; exit 1; }
	done &&
	test_expect_code 1 e2b_js run "$id" "echo x >/workspace/x" >out &&
	grep "outside /home/user" out &&
	test ! -e "$home/tests"
'

test_expect_success E2B 'write rules are about the home: the files API' '
	id=$(cat id) &&
	home=$HOLT_HOME/data/sandboxes/$id/home &&
	test "$(e2b_js fsop "$id" write repo/ok.txt fine)" = ok &&
	test "$(cat "$home/repo/ok.txt")" = fine &&
	for op in "write tests/x no" "write /home/user/tests/x no" \
		"makeDir tests" "rename repo/ok.txt tests/ok.txt" \
		"remove tests/x"
	do
		test_expect_code 1 e2b_js fsop "$id" $op >out &&
		grep "holt policy: writing .* denied: \|needs approval" out ||
		{ echo "did: $op"; cat out; exit 1; }
	done &&
	test ! -e "$home/tests" &&
	test "$(cat "$home/repo/ok.txt")" = fine
'

test_expect_success E2B 'the sandbox'"'"'s /tmp: commands and the files API judged alike' '
	id=$(cat id) &&
	e2b_js run "$id" "echo a >/tmp/a.txt && cat /tmp/a.txt" >out &&
	echo a >expect &&
	test_cmp expect out &&
	test "$(e2b_js fsop "$id" write /tmp/b.txt fine)" = ok &&
	test "$(e2b_js run "$id" "cat /tmp/b.txt")" = fine &&
	test "$(e2b_js fsop "$id" makeDir /tmp/d)" = ok &&
	test_expect_code 1 e2b_js run "$id" "echo x >/tmp/kept/x" >out &&
	grep "holt policy: .* denied: .*/tmp/kept/x" out &&
	test_expect_code 1 e2b_js fsop "$id" write /tmp/kept/x no >out &&
	grep "holt policy: writing ./tmp/kept/x. denied" out &&
	test_expect_code 1 e2b_js fsop "$id" write /opt/x no >out &&
	grep "outside /home/user" out
'

test_expect_success E2B 'the --policy FILE of holt e2b serve rules the network too' '
	e2b_stop &&
	cat >net.policy <<-\EOF &&
	allow ^curl -sS -m 10 http://
	net-allow elsewhere.example.org
	EOF
	e2b_serve --policy net.policy --mode strict &&
	e2b_js create >id3 &&
	e2b_js run "$(cat id3)" "curl -sS -m 10 http://elsewhere.example.org:$port/hello.txt" >out &&
	echo "hello through the proxy" >expect &&
	test_cmp expect out &&
	grep "allow elsewhere.example.org:$port .*(e2b:" \
		"$HOLT_HOME/data/sandboxes/$(cat id3)/run/net.log" &&
	e2b_js run "$(cat id3)" "curl -sS -m 10 http://asked.example.org:$port/hello.txt" >out &&
	grep "asked.example.org. (port $port) refused: no net-allow rule" out
'

test_expect_success E2B 'the SDK'"'"'s network options rule that sandbox'"'"'s proxy' '
	e2b_js create "{\"network\":{\"allowOut\":[\"asked.example.org\"],\"denyOut\":[\"0.0.0.0/0\"]}}" >id4 &&
	id=$(cat id4) &&
	e2b_js run "$id" "curl -sS -m 10 http://asked.example.org:$port/hello.txt" >out &&
	echo "hello through the proxy" >expect &&
	test_cmp expect out &&
	grep "allow asked.example.org:$port .*(e2b-network:" \
		"$HOLT_HOME/data/sandboxes/$id/run/net.log" &&
	for h in elsewhere.example.org registry.npmjs.org
	do
		e2b_js run "$id" "curl -sS -m 10 http://$h:$port/hello.txt" >out &&
		grep "host .$h. (port $port) refused" out || return 1
	done &&
	e2b_js create "{\"network\":{\"allowOut\":[\"*.example.org\"]}}" >id5 &&
	e2b_js run "$(cat id5)" "curl -sS -m 10 http://asked.example.org:$port/hello.txt" >out &&
	test_cmp expect out &&
	e2b_js run "$(cat id5)" "curl -sS -m 10 http://registry.npmjs.org:$port/hello.txt" >out &&
	test_cmp expect out
'

test_expect_success E2B 'network options holt cannot keep are a clear error, and make nothing' '
	ls "$HOLT_HOME/data/sandboxes" >before &&
	for o in "{\"allowOut\":[\"8.8.8.8\"]}" "{\"allowOut\":[\"10.0.0.0/8\"]}" \
		"{\"denyOut\":[\"1.2.3.4\"]}" \
		"{\"egressProxy\":{\"address\":\"p.example.org:1080\"}}"
	do
		test_expect_code 1 e2b_js create "{\"network\":$o}" >out &&
		grep "network" out || { echo "created with: $o"; cat out; return 1; }
	done &&
	grep "egressProxy and rules are not served here" out &&
	test_expect_code 1 e2b_js create "{\"network\":{\"allowOut\":[\"8.8.8.8\"]}}" >out &&
	grep "allowOut .8.8.8.8.: holt.s sandboxes reach hosts by name only" out &&
	ls "$HOLT_HOME/data/sandboxes" >after &&
	test_cmp before after
'

test_done
