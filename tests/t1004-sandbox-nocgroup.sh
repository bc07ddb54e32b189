#!/bin/sh
# holt sandbox without cgroups (as for a user without a delegated cgroup,
# forced here with HOLT_SANDBOX_CGROUPS=0): pause falls back to envd
# stopping every process with SIGSTOP, memory to RLIMIT_AS.
. "$(dirname "$0")/lib.sh"

if ! command -v bwrap >/dev/null; then
	echo "1..0 # SKIP bubblewrap (bwrap) is not installed"
	exit 0
fi

HOLT_SANDBOX_CGROUPS=0
export HOLT_SANDBOX_CGROUPS
test_sandbox_cleanup

test_expect_success 'create without cgroups' '
	holt sandbox create --name nocg --memory 256M >id &&
	id=$(cat id) &&
	dir="$HOLT_HOME/data/sandboxes/$id" &&
	test ! -e "$dir/run/cgroups" &&
	holt sandbox exec nocg -- true
'
id=$(cat id 2>/dev/null)
dir=$HOLT_HOME/data/sandboxes/$id

test_expect_success 'pause by SIGSTOP stops a counter; resume continues it' '
	holt sandbox service nocg create counter -- "i=0; while :; do
		i=\$((i+1)); echo \$i >/workspace/count.tmp;
		mv /workspace/count.tmp /workspace/count; sleep 0.05; done" &&
	test_wait_for 50 "test \"\$(cat $dir/workspace/count 2>/dev/null)\" -gt 3" &&
	holt sandbox pause nocg &&
	printf signal >expect && test_cmp expect "$dir/run/paused" &&
	v1=$(cat "$dir/workspace/count") &&
	sleep 0.6 &&
	test "$(cat "$dir/workspace/count")" = "$v1" &&
	holt sandbox ls | grep "^$id  *nocg  *paused " &&
	holt sandbox resume nocg &&
	sleep 0.4 &&
	v3=$(cat "$dir/workspace/count") &&
	test "$v3" -gt "$v1" && test "$v3" -lt $((v1 + 40))
'

test_expect_success 'a timeout does not count paused time' '
	{ $HOLT sandbox exec nocg --timeout 2 -- sh -c "sleep 1.5; echo finished" >out & } &&
	cli=$! &&
	sleep 0.5 &&
	holt sandbox pause nocg && sleep 2 && holt sandbox resume nocg &&
	wait $cli &&
	echo finished >expect && test_cmp expect out
'

test_expect_success 'memory is bounded by RLIMIT_AS' '
	test_must_fail holt sandbox exec nocg -- python3 -c \
		"x = bytearray(512 * 1024 * 1024); print(\"allocated\")" >out 2>err &&
	! grep allocated out &&
	grep MemoryError err &&
	holt sandbox exec nocg -- python3 -c "x = bytearray(32 * 1024 * 1024)"
'

test_expect_success 'stop and start work without cgroups' '
	holt sandbox stop nocg &&
	holt sandbox ls | grep "^$id  *nocg  *stopped " &&
	holt sandbox start nocg &&
	test_wait_for 50 "holt sandbox service nocg ls | grep \"^counter  *running\""
'

test_done
