#!/bin/sh
# holt.conf's sandbox defaults (net, memory, pids) bind a sandbox made by
# holt sandbox create without flags, or by holt e2b serve, exactly as they
# bind a session's: the meta.json says so, and a fork bomb inside finds
# them. Flags still override.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/attack/lib-attack.sh"

limits_of() {
	python3 -c "import json,sys; m=json.load(open(sys.argv[1])); l=m[\"limits\"]; print(l[\"memory\"], l[\"pids\"], m.get(\"net\"))" \
		"$HOLT_HOME/data/sandboxes/$1/meta.json"
}

test_expect_success 'setup: holt.conf with small limits' '
	mkdir -p "$HOLT_HOME/config" &&
	printf "pids = 40\nmemory = 300M\nnet = off\n" >"$HOLT_HOME/config/holt.conf"
'

test_expect_success 'sandbox create without flags takes the limits of holt.conf' '
	sandbox_new >sbx-id &&
	sbx=$(cat sbx-id) &&
	limits_of "$sbx" >out &&
	echo "314572800 40 off" >expect &&
	test_cmp expect out
'

test_expect_success 'a fork bomb stops at holt.conf pids' '
	sbx=$(cat sbx-id) &&
	holt sandbox exec --timeout 30 "$sbx" -- /workspace/holt-attack \
		forkbomb 5 200 >out &&
	n=$(sed -n "s/^forked: //p" out) &&
	test "$n" -gt 5 && test "$n" -lt 40 &&
	grep "^stopped by: EAGAIN$" out
'

test_expect_success 'a session sandbox has the same limits' '
	cat >done.json <<-\EOF &&
	{ "turns": [ { "text": "done", "tool_calls": [] } ] }
	EOF
	holt run -s s1 --model script:done.json --headless go >out &&
	s=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"sandbox\"])" \
		"$HOLT_HOME/data/sessions/s1/session.json") &&
	echo "$s" >>"$TRASH_DIRECTORY/.sandboxes" &&
	limits_of "$s" >out &&
	echo "314572800 40 off" >expect &&
	test_cmp expect out
'

test_expect_success 'a sandbox made through holt e2b serve has them too' '
	{ $HOLT e2b serve --listen 127.0.0.1:0 >e2b.out 2>e2b.err & } &&
	echo $! >e2b.pid &&
	test_when_finished "kill \$(cat e2b.pid) 2>/dev/null; :" &&
	test_wait_for 100 "grep -q listening e2b.out" &&
	port=$(sed -n "s/.*:\([0-9]*\)$/\1/p" e2b.out) &&
	curl -s -o body --max-time 20 -X POST -H "X-API-KEY: $(holt e2b key)" \
		-H "Content-Type: application/json" -d "{}" \
		"http://127.0.0.1:$port/sandboxes" &&
	id=$(python3 -c "import json; print(json.load(open(\"body\"))[\"sandboxID\"])") &&
	echo "$id" >>"$TRASH_DIRECTORY/.sandboxes" &&
	limits_of "$id" >out &&
	echo "314572800 40 off" >expect &&
	test_cmp expect out
'

test_expect_success 'flags override holt.conf' '
	id=$(holt sandbox create --pids 100 --memory 1G --net on) &&
	echo "$id" >>"$TRASH_DIRECTORY/.sandboxes" &&
	limits_of "$id" >out &&
	echo "1073741824 100 on" >expect &&
	test_cmp expect out
'

test_expect_success 'net = on in holt.conf reaches sandbox create' '
	printf "net = on\nmemory = 0\npids = 0\n" >"$HOLT_HOME/config/holt.conf" &&
	id=$(holt sandbox create) &&
	echo "$id" >>"$TRASH_DIRECTORY/.sandboxes" &&
	limits_of "$id" >out &&
	echo "0 0 on" >expect &&
	test_cmp expect out &&
	id=$(holt sandbox create --net off) &&
	echo "$id" >>"$TRASH_DIRECTORY/.sandboxes" &&
	limits_of "$id" >out &&
	echo "0 0 off" >expect &&
	test_cmp expect out
'

test_done
