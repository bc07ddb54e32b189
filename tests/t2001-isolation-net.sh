#!/bin/sh
# Isolation, the network: with --net off a sandbox has its own loopback and
# nothing else. TCP and UDP to the host's loopback services and to its
# other addresses, DNS, and the host's abstract unix sockets all fail, while
# the same attacks run on the host reach the listeners the test started.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/attack/lib-attack.sh"

if ! test_have_prereq PYTHON; then
	echo "1..0 # SKIP python3 is needed for the host listeners"
	exit 0
fi

abstract=holt-attack-$$
python3 "$TEST_DIRECTORY/attack/net-listen.py" "$TRASH_DIRECTORY/net.log" \
	"$abstract" >ports &
listener=$!
test_when_finished "kill $listener"
test_wait_for 50 'test -s ports'
read tcp_port udp_port <ports
: >net.log
host_ip=$(python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("192.0.2.255", 9))
print(s.getsockname()[0])' 2>/dev/null)

test_expect_success 'create a sandbox with --net off' '
	sandbox_new --net off >sbx-id
'
sbx=$(cat sbx-id 2>/dev/null)

test_expect_success 'TCP to a host loopback service: works from the host' '
	host_attack tcp 127.0.0.1 $tcp_port >out &&
	grep "^received: hello from the host" out &&
	grep "^tcp 127.0.0.1$" net.log
'

test_expect_success 'TCP to a host loopback service: refused in the sandbox' '
	: >net.log &&
	test_must_fail attack "$sbx" tcp 127.0.0.1 $tcp_port >out &&
	grep "^tcp: ECONNREFUSED$" out &&
	! test -s net.log
'

test_expect_success 'TCP to the host'"'"'s other address: unreachable' '
	if test -z "$host_ip"; then
		echo "no non-loopback address on this host: nothing to reach"
	else
		host_attack tcp "$host_ip" $tcp_port >out &&
		grep "^tcp: ok$" out &&
		: >net.log &&
		test_must_fail attack "$sbx" tcp "$host_ip" $tcp_port >out &&
		grep "^tcp: ENETUNREACH$" out &&
		! test -s net.log
	fi
'

test_expect_success 'UDP to a host loopback port: never arrives' '
	: >net.log &&
	host_attack udp 127.0.0.1 $udp_port &&
	test_wait_for 30 "grep -q \"^udp holt-attack udp\" net.log" &&
	: >net.log &&
	test_might_fail attack "$sbx" udp 127.0.0.1 $udp_port &&
	sleep 1 &&
	! test -s net.log
'

test_expect_success 'DNS: the query cannot leave the sandbox' '
	test_must_fail attack "$sbx" dns >out &&
	grep "^dns: ENETUNREACH$" out
'

test_expect_success 'the sandbox has a loopback and no other interface' '
	holt sandbox exec "$sbx" -- cat /proc/net/dev >dev &&
	grep "^ *lo:" dev &&
	test "$(grep -c ":" dev)" = 1
'

test_expect_success 'an abstract unix socket of the host: works from the host' '
	: >net.log &&
	host_attack abstract "$abstract" >out &&
	grep "^abstract: ok$" out &&
	test_wait_for 30 "grep -q ^abstract net.log"
'

test_expect_success 'an abstract unix socket of the host: unreachable inside' '
	: >net.log &&
	test_must_fail attack "$sbx" abstract "$abstract" >out &&
	grep "^abstract: ECONNREFUSED$" out &&
	! test -s net.log
'

test_expect_success 'the host'"'"'s abstract sockets are not even listed' '
	grep -q "@$abstract" /proc/net/unix &&
	holt sandbox exec "$sbx" -- cat /proc/net/unix >unix &&
	! grep "@$abstract" unix
'

# With --net on the sandbox shares the host's network namespace, and with it
# the host's abstract unix sockets (X11's @/tmp/.X11-unix/X0, D-Bus): those
# stay unreachable through holt-envd's Landlock scope (Linux 6.12+).
test_expect_success 'create a sandbox with --net on' '
	sandbox_new --net on >sbx-on-id
'
sbx_on=$(cat sbx-on-id 2>/dev/null)

test_expect_success '--net on: host loopback TCP is reachable (by design)' '
	attack "$sbx_on" tcp 127.0.0.1 $tcp_port >out &&
	grep "^received: hello from the host" out
'

test_expect_success '--net on: the host'"'"'s abstract sockets are not' '
	attack "$sbx_on" abstract-self holt-inside-$$ >out &&
	grep "^abstract-self: ok$" out &&
	grep -q "@$abstract" /proc/net/unix &&
	: >net.log &&
	test_might_fail attack "$sbx_on" abstract "$abstract" >out &&
	cat out &&
	if grep "^abstract: ok$" out; then
		python3 -c "
import ctypes, sys
abi = ctypes.CDLL(None).syscall(444, None, 0, 1)
sys.exit(0 if abi < 6 else 1)" &&
		echo "this kernel cannot scope abstract sockets: not tested"
	else
		grep "^abstract: EPERM$" out &&
		! test -s net.log
	fi
'

test_expect_success PYTHON '--net on: one sandbox cannot reach another'"'"'s abstract socket' '
	sandbox_new --net on >sbx-on2-id &&
	on2=$(cat sbx-on2-id) &&
	holt sandbox service "$sbx_on" create alisten -- python3 -c "
import socket, time
s = socket.socket(socket.AF_UNIX); s.bind(\"\\0holt-inside-a-$$\"); s.listen(8)
time.sleep(120)" &&
	test_wait_for 50 "grep -q @holt-inside-a-$$ /proc/net/unix" &&
	attack "$sbx_on" abstract holt-inside-a-$$ >out &&
	grep "^abstract: ok$" out &&
	test_might_fail attack "$on2" abstract holt-inside-a-$$ >out &&
	cat out &&
	holt sandbox service "$sbx_on" stop alisten &&
	if grep "^abstract: ok$" out; then
		python3 -c "
import ctypes, sys
sys.exit(0 if ctypes.CDLL(None).syscall(444, None, 0, 1) < 6 else 1)" &&
		echo "this kernel cannot scope abstract sockets: not tested"
	else
		grep "^abstract: EPERM$" out
	fi
'

test_done
