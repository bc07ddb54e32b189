#!/bin/sh
# Lifecycle invariants: after stop or rm no process of the sandbox is left,
# not even a double-forked, setsid'd daemon that ignores SIGTERM; a command's
# --timeout kills its grandchildren too; two sandboxes cannot see or signal
# each other. Processes are found on the host by a unique marker in their
# command line.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/attack/lib-attack.sh"

m=holt-attack-$$
test_when_finished "kill_marked $m-daemon; kill_marked $m-rm; \
	kill_marked $m-timeout; kill_marked $m-a; kill_marked $m-svc; \
	kill_marked $m-noshim; kill_marked $m-noshim-d; kill_marked $m-noshim-s"

test_expect_success 'create two sandboxes' '
	sandbox_new >sbx-a &&
	sandbox_new >sbx-b
'
a=$(cat sbx-a 2>/dev/null)
b=$(cat sbx-b 2>/dev/null)

test_expect_success 'a setsid'"'"'d daemon outlives its command' '
	attack "$a" daemon $m-daemon 120 >out &&
	grep "^daemon: [0-9]" out &&
	test_wait_for 100 "test -n \"\$(host_pids $m-daemon)\"" &&
	sleep 0.3 &&
	test -n "$(host_pids $m-daemon)"
'

test_expect_success 'stop leaves no process behind' '
	read envd start <"$HOLT_HOME/data/sandboxes/$a/run/envd.pid" &&
	kill -0 $envd &&
	holt sandbox stop "$a" &&
	test_wait_for 100 "! kill -0 $envd" &&
	test_wait_for 100 "test -z \"\$(host_pids $m-daemon)\"" &&
	holt sandbox ls >ls &&
	grep "$a.*stopped" ls
'

test_expect_success 'a supervised service is ended by stop, back on start' '
	holt sandbox start "$a" &&
	holt sandbox service "$a" create svc -- \
		/workspace/holt-attack sleep $m-svc 600 &&
	test_wait_for 100 "test -n \"\$(host_pids $m-svc)\"" &&
	holt sandbox stop "$a" &&
	test_wait_for 100 "test -z \"\$(host_pids $m-svc)\"" &&
	holt sandbox start "$a" &&
	test_wait_for 100 "test -n \"\$(host_pids $m-svc)\""
'

test_expect_success 'rm leaves no process behind, daemon nor service' '
	attack "$a" daemon $m-rm 120 >out &&
	test_wait_for 100 "test -n \"\$(host_pids $m-rm)\"" &&
	read envd start <"$HOLT_HOME/data/sandboxes/$a/run/envd.pid" &&
	holt sandbox rm "$a" &&
	test_wait_for 100 "! kill -0 $envd" &&
	test_wait_for 100 "test -z \"\$(host_pids $m-rm)\"" &&
	test_wait_for 100 "test -z \"\$(host_pids $m-svc)\"" &&
	test_expect_code 2 holt sandbox exec "$a" -- true 2>err &&
	grep "no such sandbox" err
'

test_expect_success 'a timeout kills the command'"'"'s grandchildren' '
	sandbox_new >sbx-a2 &&
	a=$(cat sbx-a2) &&
	{
		{
			holt sandbox exec --timeout 3 "$a" -- sh -c "
				/workspace/holt-attack sleep $m-timeout 120 &
				sh -c \"/workspace/holt-attack sleep $m-timeout 120\" &
				/workspace/holt-attack sleep $m-timeout 120"
			echo $? >timeout.rc
		} &
	} &&
	test_wait_for 100 "test \$(host_pids $m-timeout | wc -l) -ge 3" &&
	test_wait_for 100 "test -s timeout.rc" &&
	echo 124 >expect &&
	test_cmp expect timeout.rc &&
	test_wait_for 100 "test -z \"\$(host_pids $m-timeout)\""
'
a=$(cat sbx-a2 2>/dev/null)

test_expect_success 'the timeout really ran: the sandbox still works' '
	holt sandbox exec "$a" -- echo alive >out &&
	echo alive >expect &&
	test_cmp expect out
'

# A command that double-forks and setsid()s a daemon before its --timeout
# fires: the daemon has left the command's session and group, but it is
# re-parented to the command's shim (a child subreaper), so the timeout
# still finds it in the command's tree.
test_expect_success 'a timeout kills a daemon the command double-forked' '
	test_expect_code 124 holt sandbox exec --timeout 2 "$a" -- sh -c "
		/workspace/holt-attack daemon $m-tdaemon 120; sleep 60" &&
	test_wait_for 100 "test -z \"\$(host_pids $m-tdaemon)\""
'
kill_marked $m-tdaemon

test_expect_success 'a command that stops or signals its shim still times out' '
	test_expect_code 124 holt sandbox exec --timeout 2 "$a" -- sh -c \
		"kill -STOP \$PPID; exec /workspace/holt-attack sleep $m-stopshim 60" &&
	test_wait_for 50 "test -z \"\$(host_pids $m-stopshim)\"" &&
	test_expect_code 124 holt sandbox exec --timeout 2 "$a" -- sh -c \
		"for s in TERM HUP INT QUIT USR1 USR2; do kill -\$s \$PPID; done
		exec /workspace/holt-attack sleep $m-sigshim 60" &&
	test_wait_for 50 "test -z \"\$(host_pids $m-sigshim)\""
'
kill_marked $m-stopshim
kill_marked $m-sigshim

# A command runs under a per-command shim (its parent, a child subreaper)
# that holds its tree together. The command may kill its shim (same uid):
# the shim then never reports the command's status, and envd, seeing it die
# without a word, kills what is left of the command's session and tree.
test_expect_success 'a command that kills its shim does not escape' '
	test_expect_code 137 holt sandbox exec --timeout 3 "$a" -- sh -c \
		"kill -9 \$PPID; exec /workspace/holt-attack sleep $m-noshim 60" &&
	test_wait_for 50 "test -z \"\$(host_pids $m-noshim)\""
'
kill_marked $m-noshim

# The same, after the command has made daemons (setsid, one double-forked):
# while the shim lives they are its children; once it is killed they are
# re-parented to holt-envd in sessions of their own. envd kills what was
# re-parented to it since that shim started and is neither its own (a shim,
# a service) nor left behind by a command that ended normally. Such a
# daemon, started earlier with '&', must live on.
test_expect_success 'a daemon a finished command left behind lives on' '
	holt sandbox exec "$a" -- sh -c \
		"setsid /workspace/holt-attack sleep $m-kept 120 >/dev/null 2>&1 &" &&
	test_wait_for 100 "test -n \"\$(host_pids $m-kept)\""
'

test_expect_success 'a command that makes daemons and then kills its shim' '
	test_expect_code 137 holt sandbox exec --timeout 5 "$a" -- sh -c "
		/workspace/holt-attack daemon $m-noshim-d 60
		(setsid /workspace/holt-attack sleep $m-noshim-s 60 &)
		sleep 0.3; kill -9 \$PPID; exec sleep 60" &&
	test_wait_for 50 "test -z \"\$(host_pids $m-noshim-d)\"" &&
	test_wait_for 10 "test -z \"\$(host_pids $m-noshim-s)\""
'
kill_marked $m-noshim-d
kill_marked $m-noshim-s

test_expect_success 'and the daemon left behind earlier still lives' '
	test -n "$(host_pids $m-kept)"
'
kill_marked $m-kept

test_expect_success 'two sandboxes: a process of one is invisible to the other' '
	holt sandbox exec "$a" -- sh -c \
		"/workspace/holt-attack sleep $m-a 120 >/dev/null 2>&1 &" &&
	test_wait_for 100 "test -n \"\$(host_pids $m-a)\"" &&
	holt sandbox exec "$a" -- sh -c "cat /proc/[0-9]*/cmdline" >raw-a &&
	tr "\0" "\n" <raw-a | grep -x $m-a &&
	holt sandbox exec "$b" -- sh -c "cat /proc/[0-9]*/cmdline" >raw-b &&
	! tr "\0" "\n" <raw-b | grep -x $m-a
'

test_expect_success 'two sandboxes: and cannot be signalled from the other' '
	pid_in_a=$(holt sandbox exec "$a" -- sh -c "
		for f in /proc/[0-9]*/cmdline; do
			if tr \"\\\\0\" \"\\\\n\" <\$f | grep -qx $m-a; then
				p=\${f#/proc/}; echo \${p%/cmdline}
			fi
		done") &&
	test -n "$pid_in_a" &&
	host_pid=$(host_pids $m-a) &&
	echo "pid in a: $pid_in_a, on the host: $host_pid" &&
	for p in $pid_in_a $host_pid; do
		test_might_fail attack "$b" kill $p 9 || return 1
	done &&
	test_expect_code 137 attack "$b" kill -1 9 &&
	sleep 0.3 &&
	test -n "$(host_pids $m-a)"
'

test_expect_success 'two sandboxes: nor traced, nor their files seen' '
	holt sandbox exec "$a" -- sh -c "echo secret-a >/workspace/a-only" &&
	test_must_fail holt sandbox exec "$b" -- test -e /workspace/a-only &&
	for p in $(host_pids $m-a); do
		test_must_fail attack "$b" ptrace $p || return 1
	done
'

test_done
