#!/bin/sh
# holt sandbox: persistence, pause/resume, stop/start, a simulated reboot,
# and that stop/rm leave no process behind.
. "$(dirname "$0")/lib.sh"

test_sandbox_script

# Host pids whose command line holds the marker $1 (letters, digits, '-').
# The first letter is bracketed so that grep does not find itself.
host_pids() {
	_pat=$(echo "$1" | sed "s/^\(.\)/[\1]/")
	grep -l -a -- "$_pat" /proc/[0-9]*/cmdline 2>/dev/null |
		sed "s,^/proc/\([0-9]*\)/cmdline$,\1,"
	return 0
}

# envd's host pid, and every host pid in the sandbox's pid namespace.
envd_pid() {
	cut -d" " -f1 "$HOLT_HOME/data/sandboxes/$1/run/envd.pid"
}
ns_pids() {
	for _f in /proc/[0-9]*; do
		[ "$(readlink "$_f/ns/pid" 2>/dev/null)" = "$1" ] &&
			echo "${_f#/proc/}"
	done
	return 0
}

sbx_dir() {
	echo "$HOLT_HOME/data/sandboxes/$1"
}

test_expect_success 'a sandbox outlives the process that created it' '
	(holt sandbox create --name life >id) &&
	id=$(cat id) &&
	p=$(envd_pid "$id") &&
	kill -0 "$p" &&
	test "$(ps -o sid= -p "$p")" != "$(ps -o sid= -p $$)" &&
	holt sandbox exec "$id" -- echo still-here >out &&
	echo still-here >expect && test_cmp expect out
'
id=$(cat id 2>/dev/null)
dir=$(sbx_dir "$id")

test_expect_success 'envd is pid 1 inside and runs as uid 1000' '
	holt sandbox exec life -- sh -c "cat /proc/1/comm; id -u" >out &&
	printf "holt-envd\n1000\n" >expect && test_cmp expect out
'

test_expect_success 'a caller that disconnects does not kill its command' '
	{ $HOLT sandbox exec life -- sh -c "sleep 1; echo done >/workspace/after" & } &&
	cli=$! &&
	sleep 0.3 && kill -9 $cli &&
	test_expect_code 137 wait $cli &&
	test ! -e "$dir/workspace/after" &&
	test_wait_for 50 "test -s \"$dir/workspace/after\"" &&
	echo done >expect && test_cmp expect "$dir/workspace/after"
'

test_expect_success 'SIGINT to the CLI kills the command' '
	{ $HOLT sandbox exec life -- sh -c "echo \$\$ >/workspace/pid; exec sleep 300" & } &&
	cli=$! &&
	test_when_finished "kill $cli" &&
	test_wait_for 50 "test -s \"$dir/workspace/pid\"" &&
	kill -INT $cli &&
	test_expect_code 130 wait $cli &&
	holt sandbox exec life -- ps -eo args >ps &&
	! grep "sleep 300" ps
'

test_expect_success 'pause stops a counter; resume goes on from where it was' '
	holt sandbox service life create counter -- "i=0; while :; do
		i=\$((i+1)); echo \$i >/workspace/count.tmp;
		mv /workspace/count.tmp /workspace/count; sleep 0.05; done" &&
	test_wait_for 50 "test \"\$(cat $dir/workspace/count 2>/dev/null)\" -gt 3" &&
	holt sandbox pause life &&
	holt sandbox ls >ls && grep "^$id  *life  *paused " ls &&
	v1=$(cat "$dir/workspace/count") &&
	sleep 0.6 &&
	v2=$(cat "$dir/workspace/count") &&
	test "$v1" = "$v2" &&
	holt sandbox resume life &&
	sleep 0.4 &&
	v3=$(cat "$dir/workspace/count") &&
	echo "paused at $v1, then $v3" &&
	test "$v3" -gt "$v1" && test "$v3" -lt $((v1 + 40))
'

# A freezer (cgroup v1) stays FREEZING while a task is being forked: pause
# asks again until all are frozen, rather than giving up.
test_expect_success 'pause and resume, 40 times, while processes fork' '
	holt sandbox service life create forker -- \
		"while :; do sh -c true; echo x >/tmp/f; mv /tmp/f /tmp/g; done" &&
	sleep 0.3 &&
	i=0 &&
	while [ $i -lt 40 ]; do
		holt sandbox pause life &&
		holt sandbox resume life || return 1
		i=$((i + 1))
	done &&
	holt sandbox service life stop forker
'

test_expect_success 'stop: nothing is left, not even a setsid double-forked daemon' '
	m=holt-t1001-daemon-$$ &&
	holt sandbox exec life -- python3 -c "
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp(\"sh\", [\"sh\", \"-c\", \"sleep 300; :\", \"$m\"])
    os._exit(0)
" &&
	test_wait_for 30 "test -n \"\$(host_pids $m)\"" &&
	ns=$(readlink /proc/$(envd_pid "$id")/ns/pid) &&
	test -n "$(ns_pids "$ns")" &&
	echo keep >"$dir/home/kept" &&
	holt sandbox stop life &&
	test_wait_for 20 "test -z \"\$(host_pids $m)\"" &&
	test_wait_for 20 "test -z \"\$(ns_pids $ns)\"" &&
	holt sandbox ls >ls && grep "^$id  *life  *stopped " ls &&
	test_must_fail holt sandbox exec life -- true 2>err &&
	grep "is stopped" err
'

test_expect_success 'start brings it back with its files and services' '
	holt sandbox start life &&
	holt sandbox exec life -- cat /home/user/kept /workspace/after >out &&
	printf "keep\ndone\n" >expect && test_cmp expect out &&
	holt sandbox service life ls >svc &&
	grep "^counter  *running" svc
'

test_expect_success 'starts at the same time launch one envd' '
	holt sandbox stop life &&
	{ $HOLT sandbox start life & } && a=$! &&
	{ $HOLT sandbox start life & } && b=$! &&
	holt sandbox start life &&
	wait $a && wait $b &&
	n=0 &&
	for f in /proc/[0-9]*; do
		if test "$(cat $f/comm 2>/dev/null)" = holt-envd &&
			tr "\0" " " <$f/cmdline 2>/dev/null | grep -q -- "--id $id"
		then
			n=$((n + 1))
		fi
	done &&
	echo "$n envd" &&
	test $n = 1 &&
	holt sandbox exec life -- true
'

test_expect_success 'a host reboot (every process SIGKILLed): stopped, then start' '
	p=$(envd_pid "$id") &&
	ns=$(readlink /proc/$p/ns/pid) &&
	bw=$(awk "{ print \$4 }" /proc/$p/stat) &&
	# Short-lived processes may be gone before the kill reaches them.
	test_might_fail kill -9 $bw $(ns_pids "$ns") 2>/dev/null &&
	test_wait_for 30 "test -z \"\$(ns_pids $ns)\"" &&
	holt sandbox ls >ls && grep "^$id  *life  *stopped " ls &&
	holt sandbox start life &&
	holt sandbox ls >ls && grep "^$id  *life  *running " ls &&
	holt sandbox exec life -- cat /home/user/kept >out &&
	echo keep >expect && test_cmp expect out &&
	test_wait_for 50 "holt sandbox service life ls | grep \"^counter  *running\""
'

test_expect_success 'npm install persists from one exec to the next' '
	holt sandbox exec life -- sh -c "mkdir -p /tmp/pkg && cd /tmp/pkg &&
		echo {\\\"name\\\":\\\"holt-demo\\\",\\\"version\\\":\\\"1.0.0\\\"} >package.json &&
		echo module.exports=42 >index.js && npm pack --silent" >pack &&
	holt sandbox exec life -- npm install --offline --no-audit --no-fund \
		--prefix /workspace /tmp/pkg/holt-demo-1.0.0.tgz &&
	holt sandbox stop life && holt sandbox start life &&
	holt sandbox exec life --cwd /workspace -- node -e \
		"console.log(require(\"holt-demo\"))" >out &&
	echo 42 >expect && test_cmp expect out
'

test_expect_success 'pip install --user persists from one exec to the next' '
	holt sandbox exec life -- sh -c "mkdir -p /tmp/py/holtdemo && cd /tmp/py &&
		echo \"from setuptools import setup; setup(name=\\\"holtdemo\\\", version=\\\"1.0\\\", packages=[\\\"holtdemo\\\"])\" >setup.py &&
		echo VALUE = 7 >holtdemo/__init__.py" &&
	if ! holt sandbox exec life -- python3 -c "import setuptools" 2>/dev/null; then
		echo "# skip: no setuptools in the sandbox"; exit 0
	fi &&
	holt sandbox exec life -- python3 -m pip install --user --no-index \
		--no-build-isolation --break-system-packages --no-cache-dir -q /tmp/py &&
	holt sandbox exec life --cwd /tmp -- python3 -c \
		"import holtdemo; print(holtdemo.VALUE, holtdemo.__file__)" >out &&
	grep "^7 /home/user/.local/" out
'

test_expect_success 'two sandboxes cannot see or signal each other' '
	m=holt-t1001-other-$$ &&
	holt sandbox create --name other >id2 &&
	holt sandbox service other create marker -- sh -c "sleep 300; :" $m &&
	test_wait_for 30 "test -n \"\$(host_pids $m)\"" &&
	hp=$(host_pids $m | head -1) &&
	holt sandbox exec life -- sh -c "cat /proc/[0-9]*/cmdline 2>/dev/null; true" >raw &&
	test -s raw &&
	! tr "\0" "\n" <raw | grep -x "$m" &&
	test_must_fail holt sandbox exec life -- kill -9 "$hp" &&
	test -n "$(host_pids $m)" &&
	holt sandbox rm other &&
	test -z "$(host_pids $m)"
'

test_expect_success 'rm leaves no process and no files' '
	ns=$(readlink /proc/$(envd_pid "$id")/ns/pid) &&
	holt sandbox rm life &&
	test -z "$(ns_pids "$ns")" &&
	test ! -e "$dir" &&
	test_expect_code 2 holt sandbox start life
'

test_done
