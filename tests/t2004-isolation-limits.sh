#!/bin/sh
# Isolation, resources: a fork bomb and a memory hog stop at the sandbox's
# --pids and --memory limits while the host goes on forking, and a flood of
# output streams through holt-envd and the CLI in bounded memory.
# The memory bounds (32 MB for the CLI and for holt-envd) are twice the
# performance budget, so the test fails on buffering that grows with the
# output, not on a busy machine; bench/ measures the budget itself.
# Kept small and safe: the bomb caps itself at 500 processes (200 where the
# limit is known to be missing) and the hog at 1 GiB, so a missing limit
# fails the test without taking the host down.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/attack/lib-attack.sh"

# Run a command to completion, counting its output: prints "BYTES
# PEAK-RSS-KB". With STALL=N the reader first sleeps N seconds, so the
# writers (holt-envd, the CLI) must hold back rather than buffer.
count_and_peak_rss() {
	python3 -c '
import os, resource, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE)
time.sleep(float(os.environ.get("STALL", "0")))
n = 0
while True:
    b = p.stdout.read(1 << 16)
    if not b:
        break
    n += len(b)
r = p.wait()
print(n, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r)' "$@"
}

test_expect_success 'create a sandbox limited to 64 processes and 256M' '
	sandbox_new --pids 64 --memory 256M >sbx-id
'
sbx=$(cat sbx-id 2>/dev/null)

test_expect_success 'a fork bomb stops at the process limit' '
	{
		holt sandbox exec --timeout 30 "$sbx" -- /workspace/holt-attack \
			forkbomb 5 500 >out &
	} &&
	bomb=$! &&
	sleep 1 &&
	for i in 1 2 3 4 5 6 7 8 9 10; do
		/bin/true || { echo "the host cannot fork"; return 1; }
	done &&
	wait $bomb &&
	cat out &&
	n=$(sed -n "s/^forked: //p" out) &&
	test "$n" -gt 10 && test "$n" -lt 64 &&
	grep "^stopped by: EAGAIN$" out
'

test_expect_success 'the sandbox works again once the bomb is gone' '
	test_wait_for 100 "holt sandbox exec $sbx -- true" &&
	holt sandbox exec "$sbx" -- echo alive >out &&
	echo alive >expect &&
	test_cmp expect out
'

test_expect_success 'a memory hog is killed at the memory limit' '
	rc=0 &&
	{
		holt sandbox exec --timeout 60 "$sbx" -- \
			/workspace/holt-attack memhog 1024 >out 2>err ||
		rc=$?
	} &&
	echo "exit $rc" &&
	test $rc != 0 &&
	! grep "^memhog: ok$" out &&
	last=$(sed -n "s/^touched: \\([0-9]*\\) MB$/\\1/p" out | tail -n 1) &&
	echo "touched $last MB before it stopped" &&
	test "${last:-0}" -ge 64 && test "${last:-0}" -le 256
'

test_expect_success 'the sandbox and the host survive the hog' '
	holt sandbox exec "$sbx" -- echo alive >out &&
	echo alive >expect &&
	test_cmp expect out
'

test_expect_success 'filling /tmp (memory) stops at the memory limit' '
	rc=0 &&
	{
		holt sandbox exec --timeout 60 "$sbx" -- sh -c \
			"dd if=/dev/zero of=/tmp/fill bs=1M count=600 2>/dev/null" ||
		rc=$?
	} &&
	echo "exit $rc" &&
	test $rc != 0 &&
	size=$(holt sandbox exec "$sbx" -- stat -c %s /tmp/fill) &&
	echo "/tmp/fill: $size bytes" &&
	test "$size" -gt $((64 << 20)) && test "$size" -le $((256 << 20)) &&
	holt sandbox exec "$sbx" -- rm -f /tmp/fill &&
	holt sandbox exec "$sbx" -- echo alive >out &&
	echo alive >expect &&
	test_cmp expect out
'

test_expect_success PYTHON 'a 500 MB flood streams in bounded CLI memory' '
	count_and_peak_rss "$HOLT_BUILD_DIR/holt" -L "$HOLT_SOCKET" sandbox \
		exec "$sbx" -- sh -c "yes | head -c 500M" >flood &&
	read bytes kb <flood &&
	echo "CLI peak RSS: $kb kB for $bytes bytes" &&
	test "$bytes" = 524288000 &&
	test "$kb" -lt 32768
'

test_expect_success PYTHON 'and in bounded holt-envd memory' '
	read pid start <"$HOLT_HOME/data/sandboxes/$sbx/run/envd.pid" &&
	grep -q holt-envd /proc/$pid/cmdline &&
	hwm=$(awk "/^VmHWM:/ { print \$2 }" /proc/$pid/status) &&
	echo "holt-envd peak RSS: $hwm kB" &&
	test "$hwm" -lt 32768
'

test_expect_success PYTHON 'a reader that stalls: both sides hold back' '
	STALL=3 count_and_peak_rss "$HOLT_BUILD_DIR/holt" -L "$HOLT_SOCKET" \
		sandbox exec "$sbx" -- sh -c "yes | head -c 500M" >flood &&
	read bytes kb <flood &&
	echo "CLI peak RSS: $kb kB for $bytes bytes" &&
	test "$bytes" = 524288000 &&
	test "$kb" -lt 32768 &&
	read pid start <"$HOLT_HOME/data/sandboxes/$sbx/run/envd.pid" &&
	hwm=$(awk "/^VmHWM:/ { print \$2 }" /proc/$pid/status) &&
	echo "holt-envd peak RSS: $hwm kB" &&
	test "$hwm" -lt 32768
'

# Without cgroups (none delegated: an unprivileged user, a container) the
# limits fall back to RLIMIT_NPROC and RLIMIT_AS. The kernel does not apply
# RLIMIT_NPROC to root's processes: run as root, holt gives such a sandbox
# a host uid of its own, and its processes are that uid, not root.
test_expect_success 'create a sandbox without cgroups, same limits' '
	HOLT_SANDBOX_CGROUPS=0 sandbox_new --pids 64 --memory 256M >sbx-nocg-id
'
nocg=$(cat sbx-nocg-id 2>/dev/null)

test_expect_success ROOT 'as root, its processes are an unprivileged host uid' '
	meta="$HOLT_HOME/data/sandboxes/$nocg/meta.json" &&
	hu=$(sed -n "s/.*\"host_uid\":[^0-9]*\([0-9]*\).*/\1/p" "$meta") &&
	echo "host uid: $hu" &&
	test "$hu" -gt 65535 &&
	read pid start <"$HOLT_HOME/data/sandboxes/$nocg/run/envd.pid" &&
	grep "^Uid:" /proc/$pid/status >uids &&
	cat uids &&
	grep -q "^Uid:	$hu	$hu	$hu	$hu$" uids &&
	holt sandbox exec "$nocg" -- id -u >inside &&
	echo 1000 >expect &&
	test_cmp expect inside &&
	holt sandbox exec "$nocg" -- sh -c "echo x >/workspace/w && echo y >~/h" &&
	test "$(stat -c %u "$HOLT_HOME/data/sandboxes/$nocg/workspace/w")" = "$hu"
'

expect_nproc=test_expect_success
$expect_nproc 'without cgroups a fork bomb stops at the process limit' '
	holt sandbox exec --timeout 30 "$nocg" -- /workspace/holt-attack \
		forkbomb 3 200 >out &&
	cat out &&
	n=$(sed -n "s/^forked: //p" out) &&
	test "$n" -lt 64 &&
	grep "^stopped by: EAGAIN$" out
'

test_expect_success 'without cgroups /tmp and /dev/shm stop at the memory limit' '
	for d in /tmp /dev/shm; do
		test_must_fail holt sandbox exec --timeout 60 "$nocg" -- sh -c \
			"dd if=/dev/zero of=$d/fill bs=1M count=600 2>/dev/null" &&
		size=$(holt sandbox exec "$nocg" -- stat -c %s $d/fill) &&
		echo "$d/fill: $size bytes" &&
		test "$size" -gt $((64 << 20)) &&
		test "$size" -le $((256 << 20)) &&
		holt sandbox exec "$nocg" -- rm -f $d/fill || return 1
	done &&
	test_must_fail holt sandbox exec "$nocg" -- sh -c "echo x >/dev/fill" \
		2>err &&
	grep -i "read-only" err
'

test_expect_success 'without cgroups a memory hog stops at the memory limit' '
	test_must_fail holt sandbox exec --timeout 60 "$nocg" -- \
		/workspace/holt-attack memhog 1024 >out 2>err &&
	cat out &&
	! grep "^memhog: ok$" out &&
	last=$(sed -n "s/^allocated: \\([0-9]*\\) MB$/\\1/p" out) &&
	test "${last:-0}" -ge 64 && test "${last:-0}" -le 256
'

test_done
