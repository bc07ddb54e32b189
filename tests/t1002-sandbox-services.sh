#!/bin/sh
# holt sandbox service and forward: supervision, backoff, logs, and a
# --net off service reachable from the host only through forward.
. "$(dirname "$0")/lib.sh"

test_sandbox_script

# GET http://127.0.0.1:$1/$2, print the body; fails when nothing answers.
http_get() {
	python3 -c "
import sys, urllib.request
print(urllib.request.urlopen('http://127.0.0.1:$1/$2', timeout=3).read().decode(), end='')
"
}

port=$((20000 + $$ % 20000))

test_expect_success 'create a --net off sandbox with a web service' '
	holt sandbox create --name svc --net off >id &&
	holt sandbox exec svc -- sh -c "mkdir -p /workspace/www &&
		echo hello-from-inside >/workspace/www/index.txt" &&
	holt sandbox service svc create web --port $port -- \
		python3 -m http.server -d /workspace/www $port &&
	test_wait_for 50 "holt sandbox exec svc -- python3 -c \"
import urllib.request
urllib.request.urlopen(\\\"http://127.0.0.1:$port/index.txt\\\")\"" &&
	holt sandbox service svc ls >ls &&
	grep "^web  *running  *[0-9][0-9]*  *0  *$port " ls
'
id=$(cat id 2>/dev/null)
dir=$HOLT_HOME/data/sandboxes/$id

test_expect_success 'the host cannot reach the service directly' '
	test_must_fail http_get $port index.txt
'

test_expect_success 'forward relays a host port to it' '
	{ $HOLT sandbox forward svc $port 0 >fwd 2>fwd.err & } &&
	fpid=$! &&
	test_when_finished "kill $fpid" &&
	test_wait_for 50 "test -s fwd" &&
	lport=$(head -n 1 fwd) &&
	http_get $lport index.txt >out &&
	echo hello-from-inside >expect && test_cmp expect out &&
	http_get $lport index.txt >out2 && test_cmp expect out2 &&
	grep "forwarding 127.0.0.1:$lport" fwd.err &&
	kill -INT $fpid && wait $fpid &&
	test_must_fail http_get $lport index.txt
'

test_expect_success 'forward to a port nobody listens on: the connection closes' '
	{ $HOLT sandbox forward svc 1 0 >fwd2 2>/dev/null & } &&
	fpid=$! &&
	test_when_finished "kill $fpid" &&
	test_wait_for 50 "test -s fwd2" &&
	test_must_fail http_get $(head -n 1 fwd2) x &&
	kill $fpid
'

test_expect_success 'a crashing service is restarted with growing backoff' '
	holt sandbox service svc create crash -- "echo crash-run; exit 3" &&
	test_wait_for 80 "test \$(holt sandbox service svc logs crash | grep -c crash-run) -ge 3" &&
	holt sandbox service svc logs crash >log &&
	grep "exited with code 3" log &&
	grep "restarting in 500 ms" log &&
	grep "restarting in 1000 ms" log &&
	holt sandbox service svc ls >ls &&
	grep "^crash  *[a-z]*  *[0-9]*  *[1-9]" ls
'

test_expect_success 'stop a service: it stays stopped; restart brings it back' '
	holt sandbox service svc stop crash &&
	holt sandbox service svc ls >ls &&
	grep "^crash  *stopped" ls &&
	n=$(holt sandbox service svc logs crash | grep -c crash-run) &&
	sleep 1.2 &&
	test "$(holt sandbox service svc logs crash | grep -c crash-run)" = "$n" &&
	holt sandbox service svc restart crash &&
	test_wait_for 30 "test \"\$(holt sandbox service svc logs crash | grep -c crash-run)\" -gt $n" &&
	holt sandbox service svc stop crash
'

test_expect_success 'a service runs on with no client connected' '
	holt sandbox service svc ls >before &&
	pid1=$(awk "/^web/ { print \$3 }" before) &&
	sleep 1 &&
	holt sandbox service svc ls >after &&
	pid2=$(awk "/^web/ { print \$3 }" after) &&
	test "$pid1" = "$pid2" &&
	holt sandbox exec svc -- kill -0 "$pid1"
'

test_expect_success 'a killed service is restarted' '
	pid1=$(holt sandbox service svc ls | awk "/^web/ { print \$3 }") &&
	holt sandbox exec svc -- kill -9 "$pid1" &&
	test_wait_for 50 "holt sandbox service svc ls | grep \"^web  *running\" | grep -v \" $pid1 \"" &&
	holt sandbox service svc logs web >log &&
	grep "killed by signal 9" log
'

test_expect_success 'service logs are bounded and rotated' '
	holt sandbox service svc create noisy -- \
		"head -c 3000000 /dev/zero | tr \"\\\\0\" x | fold -w 99; sleep 300" &&
	test_wait_for 100 "test -e \"$dir/run/envd/logs/noisy.log.1\"" &&
	sleep 0.5 &&
	size=$(cat "$dir"/run/envd/logs/noisy.log* | wc -c) &&
	echo "kept $size bytes" &&
	test "$size" -le $((2 * 1024 * 1024 + 4096)) &&
	holt sandbox service svc logs noisy --lines 3 >tail &&
	test $(awk "END { print NR }" tail) = 3 &&
	holt sandbox service svc rm noisy &&
	! holt sandbox service svc ls | grep noisy
'

test_expect_success 'services come back after stop/start, stopped ones do not' '
	holt sandbox stop svc &&
	holt sandbox start svc &&
	test_wait_for 50 "holt sandbox service svc ls | grep \"^web  *running\"" &&
	holt sandbox service svc ls | grep "^crash  *stopped" &&
	{ $HOLT sandbox forward svc $port 0 >fwd3 2>/dev/null & } &&
	fpid=$! &&
	test_when_finished "kill $fpid" &&
	test_wait_for 50 "test -s fwd3" &&
	test_wait_for 50 "http_get $(head -n 1 fwd3) index.txt" &&
	kill $fpid
'

test_expect_success 'service errors name the thing' '
	test_must_fail holt sandbox service svc logs nosuch 2>err &&
	grep "service .nosuch.: no such service" err &&
	test_expect_code 2 holt sandbox service svc frob 2>err &&
	grep "unknown action .frob." err &&
	test_must_fail holt sandbox service svc create "bad/name" -- true 2>err &&
	grep "service name .bad/name." err
'

test_done
