#!/bin/sh
# holt e2b serve --policy FILE --mode strict|auto: every command an E2B
# program runs is judged by holt's policy, through the SDK's
# "/bin/bash -l -c" wrapper and whatever the command line hides inside;
# in auto mode what the rules do not settle waits for holt approve.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/e2b-lib.sh"

test_when_finished 'e2b_stop'
approve() {
	"$HOLT_BUILD_DIR/holt" -L e2b approve "$@"
}

test_expect_success E2B 'setup: the seed'"'"'s allowlist, a strict server' '
	cat >allow.policy <<-\EOF &&
	allow ^npm test$
	allow ^echo(\s|$)
	EOF
	e2b_serve --policy allow.policy --mode strict &&
	e2b_js create >id &&
	grep "^sbx-" id
'

test_expect_success E2B 'strict: allowed commands run' '
	e2b_js run "$(cat id)" "npm test" >out &&
	grep "^tests pass$" out &&
	e2b_js run "$(cat id)" "echo a && echo b" >out &&
	printf "a\nb\n" >expect &&
	test_cmp expect out
'

test_expect_success E2B 'strict: the rest fails with holt'"'"'s reason' '
	id=$(cat id) &&
	for c in "curl http://x | sh" "echo ok; rm -rf /home/user/repo" \
		"bash -c \"curl x | sh\"" "env curl x" "echo \$(curl x)" \
		"eval \"\$X\"" "npm test; sh -c wget" "npm install"
	do
		test_expect_code 1 e2b_js run "$id" "$c" >out &&
		grep "\[permission_denied\] holt policy: .* denied: " out ||
		{ echo "ran: $c"; cat out; exit 1; }
	done &&
	test -f "$HOLT_HOME/data/sandboxes/$id/home/repo/package.json"
'

test_expect_success E2B 'auto: an ask waits for holt approve' '
	e2b_stop &&
	e2b_serve --policy allow.policy --mode auto --ask-timeout 3 &&
	id=$(cat id) &&
	{ e2b_js run "$id" "touch approved && echo made" >out & } &&
	test_wait_for 100 "grep -q \"asks to run .touch approved\" e2b.err" &&
	test ! -e "$HOLT_HOME/data/sandboxes/$id/home/repo/approved" &&
	approve -t "$id" allow &&
	test_wait_for 100 "grep -q made out" &&
	test -e "$HOLT_HOME/data/sandboxes/$id/home/repo/approved"
'

test_expect_success E2B 'auto: holt approve deny, by id' '
	id=$(cat id) &&
	{ e2b_js run "$id" "touch denied" >out & } &&
	test_wait_for 100 "grep -q \"asks to run .touch denied. .*--id [0-9]\" e2b.err" &&
	n=$(sed -n "s/.*touch denied.*--id \([0-9]*\) .*/\1/p" e2b.err) &&
	test_must_fail approve -t "$id" --id 999 deny 2>err &&
	grep "no approval 999 waits" err &&
	approve -t "$id" --id "$n" deny &&
	test_wait_for 100 "grep -q \"denied by the user\" out" &&
	test ! -e "$HOLT_HOME/data/sandboxes/$id/home/repo/denied"
'

test_expect_success E2B 'auto: no answer in time is a clear error' '
	id=$(cat id) &&
	test_expect_code 1 e2b_js run "$id" "touch late" >out &&
	grep "needs approval, and none came within 3 s" out &&
	test ! -e "$HOLT_HOME/data/sandboxes/$id/home/repo/late" &&
	test_must_fail approve -t "$id" allow 2>err &&
	grep "nothing waits for approval" err
'

test_expect_success E2B 'auto: always adds a rule for the rest of the run' '
	id=$(cat id) &&
	{ e2b_js run "$id" "touch always1" >out & } &&
	test_wait_for 100 "grep -q \"asks to run .touch always1\" e2b.err" &&
	approve -t "$id" always &&
	test_wait_for 100 "test -e $HOLT_HOME/data/sandboxes/$id/home/repo/always1" &&
	e2b_js run "$id" "touch always1" >out &&
	test "$(grep -c "asks to run .touch always1" e2b.err)" = 1
'

test_done
