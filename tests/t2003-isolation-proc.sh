#!/bin/sh
# Isolation, processes and what they inherit: a sandbox cannot see, signal
# or trace the host's processes, sees none of the host's environment, holds
# no host file descriptor, and cannot reach holt-envd's control socket
# (not by path, not by an abstract name, not through pid 1's fds).
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/attack/lib-attack.sh"

marker=holt-attack-host-$$
"$ATTACK" sleep "$marker" 120 &
host_pid=$!
test_when_finished "kill $host_pid"

# A secret in the environment of everything holt is started from here, and
# the variables that lead to the host's agents and displays.
HOLT_TEST_SECRET=s3cr3t-$$-value
SSH_AUTH_SOCK=/tmp/holt-attack-agent-$$
DISPLAY=:77
DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/holt-attack-bus-$$
DOCKER_HOST=unix:///tmp/holt-attack-docker-$$
export HOLT_TEST_SECRET SSH_AUTH_SOCK DISPLAY DBUS_SESSION_BUS_ADDRESS \
	DOCKER_HOST

test_expect_success 'create a sandbox' '
	sandbox_new >sbx-id
'
sbx=$(cat sbx-id 2>/dev/null)

test_expect_success 'the host'"'"'s processes are not visible' '
	test -n "$(host_pids "$marker")" &&
	holt sandbox exec "$sbx" -- sh -c "cat /proc/[0-9]*/cmdline" >raw &&
	tr "\0" "\n" <raw >cmdlines &&
	grep -x sh cmdlines &&
	! grep -x "$marker" cmdlines &&
	holt sandbox exec "$sbx" -- ls /proc >procs &&
	test $(grep -c "^[0-9][0-9]*$" procs) -lt 20
'

test_expect_success 'a host process cannot be signalled by its pid' '
	test_must_fail attack "$sbx" kill $host_pid 9 >out &&
	! grep "^kill: ok$" out &&
	sleep 0.2 &&
	kill -0 $host_pid
'

test_expect_success 'a host process cannot be traced by its pid' '
	test_must_fail attack "$sbx" ptrace $host_pid >out &&
	! grep "^ptrace: ok$" out &&
	kill -0 $host_pid
'

test_expect_success 'the host environment does not reach commands' '
	holt sandbox exec "$sbx" -- env >env &&
	grep "^PATH=" env &&
	! grep "$HOLT_TEST_SECRET" env &&
	! grep "^HOLT_" env &&
	! grep -e "^SSH_AUTH_SOCK=" -e "^DISPLAY=" -e "^DBUS_" -e "^DOCKER_" env
'

test_expect_success 'nor any process of the sandbox (/proc/*/environ)' '
	test_might_fail holt sandbox exec "$sbx" -- sh -c \
		"cat /proc/[0-9]*/environ 2>/dev/null" >raw &&
	tr "\0" "\n" <raw >environ &&
	grep "^PATH=" environ &&
	! grep "$HOLT_TEST_SECRET" environ
'

test_expect_success 'a command holds stdin, stdout and stderr, nothing else' '
	attack "$sbx" fds >fds &&
	cut -d" " -f1 fds >fdnums &&
	printf "0\n1\n2\n" >expect &&
	test_cmp expect fdnums
'

test_expect_success 'nor does it with a terminal' '
	holt sandbox exec --tty "$sbx" -- /workspace/holt-attack fds >fds &&
	tr -d "\r" <fds | cut -d" " -f1 >fdnums &&
	printf "0\n1\n2\n" >expect &&
	test_cmp expect fdnums
'

test_expect_success PYTHON 'a host agent socket in the host /tmp is not there' '
	{
		python3 -c "
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
time.sleep(30)" "$SSH_AUTH_SOCK" &
	} &&
	agent=$! &&
	test_when_finished "kill $agent; rm -f \"$SSH_AUTH_SOCK\"" &&
	test_wait_for 50 "test -S $SSH_AUTH_SOCK" &&
	host_attack unix "$SSH_AUTH_SOCK" >out &&
	grep "^unix: ok$" out &&
	test_must_fail attack "$sbx" unix "$SSH_AUTH_SOCK" >out &&
	grep "^unix: ENOENT$" out
'

# Seen from the host: every process of the sandbox but holt-envd (which
# holds the listener, its state directory and its log) holds only what it
# made inside, while a command and a service run. The sandbox's processes
# are envd's descendants (PPid in /proc/PID/status, readable by anyone;
# envd itself is not dumpable, so only root sees its fds).
test_expect_success 'no process but holt-envd holds a host descriptor' '
	holt sandbox service "$sbx" create fdsvc -- sleep 60 &&
	{ holt sandbox exec "$sbx" -- sh -c "sleep 20 & sleep 20" & } &&
	read envd start <"$HOLT_HOME/data/sandboxes/$sbx/run/envd.pid" &&
	listener=$(readlink /proc/$envd/fd/3 2>/dev/null ||
		echo "(not readable here)") &&
	sleep 1 &&
	for f in /proc/[0-9]*/status; do
		p=${f#/proc/} &&
		echo "${p%/status} $(awk "/^PPid:/ { print \$2 }" "$f" 2>/dev/null)"
	done >ppids &&
	awk -v root=$envd "
		NF == 2 { parent[\$1] = \$2 }
		END {
			for (p in parent) {
				q = p
				for (i = 0; i < 16 && q != root && q in parent; i++)
					q = parent[q]
				if (q == root && p != root)
					print p
			}
		}" ppids >inside &&
	seen=0 &&
	for p in $(cat inside); do
		seen=$((seen + 1))
		for f in /proc/$p/fd/*; do
			t=$(readlink "$f" 2>/dev/null) || continue
			case "$t" in
			"$HOLT_HOME"*|"$TRASH_DIRECTORY"*|"$listener")
				echo "$p holds $t"; return 1 ;;
			esac
		done
	done &&
	echo "$seen processes checked" &&
	test $seen -ge 4 &&
	holt sandbox service "$sbx" stop fdsvc
'

test_expect_success 'the control socket exists and answers on the host' '
	host_attack scan-sockets "$HOLT_HOME/data" >host-scan &&
	grep "^connected: " host-scan
'

test_expect_success 'no socket inside leads to holt-envd' '
	# sudo'"'"'s socket answers: its root helper, which speaks no envd.
	test_might_fail attack "$sbx" scan-sockets >scan &&
	grep "^sockets: [0-9]*, connected: [01]$" scan &&
	{ grep "^connected: " scan | grep -v "^connected: /run/holt/root/sudo.sock$" >other || :; } &&
	test ! -s other
'

test_expect_success 'pid 1'"'"'s fds cannot be opened or copied' '
	test_must_fail attack "$sbx" steal-fds 1 >steal &&
	grep "^stolen: 0$" steal
'

test_expect_success 'pid 1'"'"'s memory cannot be opened for writing' '
	test_must_fail attack "$sbx" mem 1 >out &&
	! grep "^mem: ok$" out
'

test_expect_success 'signals to pid 1 from inside do not end the sandbox' '
	holt sandbox exec "$sbx" -- sh -c \
		"for s in TERM HUP INT QUIT USR1 USR2 PIPE ALRM; do kill -\$s 1; done" &&
	test_expect_code 137 holt sandbox exec "$sbx" -- sh -c "kill -KILL -1" &&
	sleep 0.3 &&
	holt sandbox ls >ls &&
	grep "^$sbx .*running" ls
'

test_expect_success 'the sandbox still works after all this' '
	holt sandbox exec "$sbx" -- echo alive >out &&
	echo alive >expect &&
	test_cmp expect out &&
	kill -0 $host_pid
'

test_done
