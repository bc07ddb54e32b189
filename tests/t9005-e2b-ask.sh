#!/bin/sh
# holt e2b serve --mode auto: what the policy asks about waits for holt
# approve, not only commands: a write of the files API (its request held)
# and a host a sandbox's proxy would connect to (the proxy asks the
# server). A timeout is the same clear error; "always" lets the next one
# through (net-allow HOST for the proxy, in the run's rules file).
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/e2b-lib.sh"

if ! test_have_prereq SYSPYTHON || ! command -v curl >/dev/null; then
	echo "1..0 # SKIP needs /usr/bin/python3 and curl"
	exit 0
fi
test_sandbox_cleanup
test_when_finished 'e2b_stop'
approve() {
	"$HOLT_BUILD_DIR/holt" -L e2b approve "$@"
}

mkdir -p www && echo "hello through the proxy" >www/hello.txt
test_web_server "$PWD/www"
printf "127.0.0.1 asked.example.org other.example.org late.example.org\n" >hosts
HOLT_PROXY_HOSTS=$PWD/hosts
export HOLT_PROXY_HOSTS

test_expect_success E2B 'setup: an auto server, a sandbox' '
	cat >ask.policy <<-\EOF &&
	allow ^(echo|cat)(\s|$)
	allow ^curl -sS -m 60 http://
	write-ask ^notes/
	EOF
	e2b_serve --policy ask.policy --mode auto --ask-timeout 4 &&
	e2b_js create >id &&
	grep "^sbx-" id
'

test_expect_success E2B 'files.write that asks waits for holt approve' '
	id=$(cat id) &&
	home=$HOLT_HOME/data/sandboxes/$id/home &&
	{ e2b_js fsop "$id" write notes/a.txt fine >out & } &&
	test_wait_for 100 "grep -q \"asks to write ./home/user/notes/a.txt\" e2b.err" &&
	test ! -e "$home/notes/a.txt" &&
	approve -t "$id" allow &&
	test_wait_for 100 "grep -q ok out" &&
	test "$(cat "$home/notes/a.txt")" = fine
'

test_expect_success E2B 'makeDir and rename ask too; deny refuses' '
	id=$(cat id) &&
	home=$HOLT_HOME/data/sandboxes/$id/home &&
	{ e2b_js fsop "$id" rename notes/a.txt notes/b.txt >out & } &&
	test_wait_for 100 "grep -q \"asks to write ./home/user/notes/a.txt., ./home/user/notes/b.txt\" e2b.err" &&
	approve -t "$id" deny &&
	test_wait_for 100 "grep -q \"denied by the user\" out" &&
	grep "holt policy: writing ./home/user/notes/a.txt" out &&
	test -e "$home/notes/a.txt" && test ! -e "$home/notes/b.txt" &&
	{ e2b_js fsop "$id" makeDir notes/d >out & } &&
	test_wait_for 100 "grep -q \"asks to write ./home/user/notes/d\" e2b.err" &&
	approve -t "$id" allow &&
	test_wait_for 100 "grep -q ok out" &&
	test -d "$home/notes/d"
'

test_expect_success E2B 'a write nobody answers fails with the same clear error' '
	id=$(cat id) &&
	test_expect_code 1 e2b_js fsop "$id" write notes/late.txt no >out &&
	grep "needs approval, and none came within 4 s" out &&
	test ! -e "$HOLT_HOME/data/sandboxes/$id/home/notes/late.txt" &&
	test_must_fail approve -t "$id" allow 2>err &&
	grep "nothing waits for approval" err
'

test_expect_success E2B 'a client that leaves withdraws its write' '
	id=$(cat id) &&
	{ e2b_js fsop "$id" write notes/gone.txt no >out & } &&
	job=$! &&
	test_wait_for 100 "grep -q \"asks to write ./home/user/notes/gone.txt\" e2b.err" &&
	kill "$(pgrep -P "$job")" &&
	test_wait_for 100 "grep -q \"ask [0-9]* withdrawn: the client left\" e2b.err" &&
	test_must_fail approve -t "$id" allow 2>err &&
	grep "nothing waits for approval" err &&
	test ! -e "$HOLT_HOME/data/sandboxes/$id/home/notes/gone.txt" &&
	test "$(e2b_js fsop "$id" write free.txt yes)" = ok
'

test_expect_success E2B 'always: the same write passes next time' '
	id=$(cat id) &&
	{ e2b_js fsop "$id" write notes/c.txt one >out & } &&
	test_wait_for 100 "grep -q \"asks to write ./home/user/notes/c.txt\" e2b.err" &&
	approve -t "$id" always &&
	test_wait_for 100 "grep -q ok out" &&
	test "$(e2b_js fsop "$id" write notes/c.txt two)" = ok &&
	test "$(grep -c "asks to write ./home/user/notes/c.txt" e2b.err)" = 1 &&
	test "$(cat "$HOLT_HOME/data/sandboxes/$id/home/notes/c.txt")" = two
'

test_expect_success E2B 'a host the proxy asks about waits for holt approve' '
	id=$(cat id) &&
	{ e2b_js run "$id" "curl -sS -m 60 http://asked.example.org:$port/hello.txt" >out & } &&
	test_wait_for 100 "grep -q \"asks to connect to .asked.example.org. (port $port)\" e2b.err" &&
	approve -t "$id" allow &&
	test_wait_for 100 "grep -q \"hello through the proxy\" out" &&
	grep "allow asked.example.org:$port allowed by the user" \
		"$HOLT_HOME/data/sandboxes/$id/run/net.log"
'

test_expect_success E2B 'a host nobody answers is refused with the clear error' '
	id=$(cat id) &&
	e2b_js run "$id" "curl -sS -m 60 http://late.example.org:$port/hello.txt" >out &&
	grep "host .late.example.org. (port $port) refused: holt policy: connecting to .late.example.org. (port $port) needs approval, and none came within 4 s" out &&
	! grep "hello through" out
'

test_expect_success E2B 'always on a host: net-allow for the rest of the run' '
	id=$(cat id) &&
	{ e2b_js run "$id" "curl -sS -m 60 http://other.example.org:$port/hello.txt" >out & } &&
	test_wait_for 100 "grep -q \"asks to connect to .other.example.org\" e2b.err" &&
	approve -t "$id" always &&
	test_wait_for 100 "grep -q \"hello through the proxy\" out" &&
	grep "^net-allow other.example.org$" "$HOLT_HOME/run/e2b.policy" &&
	e2b_js run "$id" "curl -sS -m 60 http://other.example.org:$port/hello.txt" >out &&
	grep "hello through the proxy" out &&
	test "$(grep -c "asks to connect to .other.example.org" e2b.err)" = 1
'

test_done
