#!/bin/sh
# holt-envd's protocol spoken directly: bad frames, attach from an offset,
# bounded memory under an output flood, file operations, watch, ptys, and
# descriptors that must not leak into commands.
. "$(dirname "$0")/lib.sh"

if ! command -v bwrap >/dev/null; then
	echo "1..0 # SKIP bubblewrap (bwrap) is not installed"
	exit 0
fi
if ! command -v python3 >/dev/null; then
	echo "1..0 # SKIP python3 is needed to speak the protocol"
	exit 0
fi

test_sandbox_cleanup

ET="python3 $TEST_DIRECTORY/envd-tool"

test_expect_success 'create a sandbox' '
	holt sandbox create --name e >id
'
id=$(cat id 2>/dev/null)
dir=$HOLT_HOME/data/sandboxes/$id
sock=$dir/run/envd.sock
envd=$(cut -d" " -f1 "$dir/run/envd.pid" 2>/dev/null)

test_expect_success 'hello answers with the protocol version' '
	$ET "$sock" call "{\"op\":\"hello\",\"version\":1}" >out &&
	grep "\"version\": 1" out &&
	grep "\"sandbox\": \"$id\"" out
'

test_expect_success 'bad frames drop that client only; envd and commands go on' '
	{ holt sandbox exec e -- sh -c "sleep 1.5; echo survived" >long & } &&
	cli=$! &&
	sleep 0.3 &&
	$ET "$sock" oversized >o1 && echo dropped >expect && test_cmp expect o1 &&
	$ET "$sock" notjson >o2 && test_cmp expect o2 &&
	$ET "$sock" truncated >o3 &&
	$ET "$sock" call "{\"op\":\"nosuchop\"}" >o4 &&
	grep "unknown op .nosuchop." o4 &&
	$ET "$sock" call "{\"op\":\"hello\"}" >o5 && grep "\"ok\": true" o5 &&
	kill -0 "$envd" &&
	wait $cli &&
	echo survived >expect && test_cmp expect long
'

test_expect_success 'attach re-joins a command from an offset after a disconnect' '
	$ET "$sock" hold 0.3 "{\"op\":\"exec\",\"cmd\":\"for i in 1 2 3 4 5; do echo line\$i; sleep 0.2; done\"}" &&
	$ET "$sock" call "{\"op\":\"ps\"}" >ps &&
	pid=$(python3 -c "import json,sys; print([c[\"pid\"] for c in json.loads(open(\"ps\").read())[\"commands\"]][0])") &&
	$ET "$sock" call "{\"op\":\"attach\",\"pid\":$pid,\"offset\":0}" >all &&
	python3 -c "
import json
fr = [json.loads(l) for l in open(\"all\")]
out = \"\".join(f.get(\"data\", \"\") for f in fr if f.get(\"event\") == \"stdout\")
assert out == \"\".join(\"line%d\\n\" % i for i in range(1, 6)), out
ex = [f for f in fr if f.get(\"event\") == \"exit\"][0]
assert ex[\"code\"] == 0 and ex[\"timed_out\"] is False and ex[\"duration_ms\"] >= 800
" &&
	$ET "$sock" call "{\"op\":\"attach\",\"pid\":$pid,\"offset\":12}" >part &&
	python3 -c "
import json
fr = [json.loads(l) for l in open(\"part\")]
out = \"\".join(f.get(\"data\", \"\") for f in fr if f.get(\"event\") == \"stdout\")
assert out == \"line3\\nline4\\nline5\\n\", out
assert [f for f in fr if f.get(\"event\") == \"stdout\"][0][\"offset\"] == 12
"
'

test_expect_success 'binary output travels as data_b64' '
	$ET "$sock" call "{\"op\":\"exec\",\"argv\":[\"printf\",\"a\\\\000\\\\377b\"]}" >bin &&
	python3 -c "
import json, base64
fr = [json.loads(l) for l in open(\"bin\")]
d = b\"\".join(base64.b64decode(f[\"data_b64\"]) for f in fr if \"data_b64\" in f)
assert d == b\"a\\x00\\xffb\", d
"
'

test_expect_success 'exec: stdin as a string, env, cwd, a missing cwd' '
	$ET "$sock" call \
		"{\"op\":\"exec\",\"argv\":[\"sh\",\"-c\",\"cat; echo \$V; pwd\"],\"stdin\":\"fed\\n\",\"env\":{\"V\":\"vv\"},\"cwd\":\"/tmp\"}" \
		"{\"op\":\"exec\",\"cmd\":\"true\",\"cwd\":\"/nowhere\"}" >ex &&
	python3 -c "
import json
fr = [json.loads(l) for l in open(\"ex\")]
out = \"\".join(f.get(\"data\", \"\") for f in fr if f.get(\"event\") == \"stdout\")
assert out == \"fed\\nvv\\n/tmp\\n\", out
assert \"nowhere\" in fr[-1][\"error\"], fr[-1]
"
'

test_expect_success 'an output flood with a stalled client keeps envd small' '
	$ET "$sock" hold 2 "{\"op\":\"exec\",\"cmd\":\"head -c 60000000 /dev/zero | tr \\\\\\\\0 x\"}" &&
	$ET "$sock" hold 0.1 "{\"op\":\"exec\",\"cmd\":\"head -c 40000000 /dev/zero | tr \\\\\\\\0 y\"}" &&
	sleep 1 &&
	hwm=$(awk "/^VmHWM/ { print \$2 }" /proc/$envd/status) &&
	echo "envd peak RSS: $hwm kB" &&
	test "$hwm" -lt 24576
'

test_expect_success 'a slow reader gets every byte, in order' '
	holt sandbox exec e -- sh -c "seq 1 300000" | (sleep 1; cat) >seq &&
	seq 1 300000 >expect && test_cmp expect seq
'

test_expect_success 'file ops: write makes parents, read, stat, list, move, remove' '
	$ET "$sock" call \
		"{\"op\":\"write\",\"path\":\"a/b/c.txt\",\"data\":\"hi\\n\",\"mode\":416}" \
		"{\"op\":\"read\",\"path\":\"/workspace/a/b/c.txt\"}" \
		"{\"op\":\"stat\",\"path\":\"a/b/c.txt\"}" \
		"{\"op\":\"list\",\"path\":\"a\",\"depth\":2}" \
		"{\"op\":\"move\",\"from\":\"a/b/c.txt\",\"to\":\"/home/user/x/d.txt\"}" \
		"{\"op\":\"remove\",\"path\":\"a\",\"recursive\":true}" \
		"{\"op\":\"stat\",\"path\":\"a\"}" >ops &&
	test "$(stat -c %a "$dir/home/x/d.txt")" = 640 &&
	echo hi >expect && test_cmp expect "$dir/home/x/d.txt" &&
	test ! -e "$dir/workspace/a" &&
	python3 -c "
import json
r = [json.loads(l) for l in open(\"ops\")]
assert r[0][\"ok\"] and r[1][\"data\"] == \"hi\\n\" and r[1][\"eof\"]
assert r[2][\"type\"] == \"file\" and r[2][\"size\"] == 3 and r[2][\"mode\"] == 0o640
assert sorted(e[\"path\"] for e in r[3][\"entries\"]) == [\"b\", \"b/c.txt\"]
assert r[4][\"ok\"] and r[5][\"ok\"] and \"error\" in r[6]
"
'

test_expect_success 'file ops refuse to leave the sandbox (.., symlinks, /proc magic links)' '
	holt sandbox exec e -- sh -c "ln -s / /workspace/up; ln -s /proc/1/fd /workspace/fds" &&
	reqs= &&
	for p in ../x /workspace/../etc/passwd /etc/passwd up/etc/passwd \
		fds/4/meta.json /proc/1/fd/4/envd.log /proc/self/root/etc/passwd; do
		reqs="$reqs {\"op\":\"read\",\"path\":\"$p\"}"
		reqs="$reqs {\"op\":\"write\",\"path\":\"$p\",\"data\":\"x\"}"
	done &&
	$ET "$sock" call $reqs >rw &&
	test $(wc -l <rw) = 14 &&
	test $(grep -c "\"error\"" rw) = 14 &&
	grep "outside /workspace, /home/user and /tmp" rw &&
	grep "leads outside" rw &&
	test ! -e "$dir/run/envd/meta.json"
'

test_expect_success 'watch reports changes under a directory' '
	# Until the watch is surely in place, make a directory each second.
	{
		(for i in 1 2 3 4 5 6 7 8; do sleep 1;
			holt sandbox exec e -- mkdir -p /workspace/w$i; done) &
	} &&
	bg=$! &&
	test_when_finished "kill $bg" &&
	timeout 12 $ET "$sock" call "{\"op\":\"watch\",\"path\":\"/workspace\"}" >watch 2>/dev/null &&
	cat watch &&
	grep "\"path\": \"/workspace/w[1-8]\"" watch &&
	grep "\"kind\": \"create\"" watch &&
	grep "\"dir\": true" watch
'

test_expect_success 'a pty command gets the terminal size asked for' '
	$ET "$sock" call "{\"op\":\"exec\",\"cmd\":\"stty size; tty\",\"pty\":{\"cols\":101,\"rows\":33}}" >pty &&
	grep "\"event\": \"pty\"" pty &&
	grep "33 101" pty &&
	grep "/dev/pts/" pty &&
	holt sandbox exec --tty e -- sh -c "test -t 0 && test -t 1 && echo tty-ok" >t &&
	grep tty-ok t
'

test_expect_success 'commands inherit no descriptor but stdio' '
	holt sandbox exec e -- sh -c "ls /proc/\$\$/fd" >fds &&
	printf "0\n1\n2\n" >expect &&
	grep -v "^1[0-9]$" fds >fds2 &&
	test_cmp expect fds2 &&
	holt sandbox service e create fdcheck -- "ls /proc/\$\$/fd; sleep 300" &&
	test_wait_for 30 "holt sandbox service e logs fdcheck | grep -x 2" &&
	holt sandbox service e logs fdcheck | grep -x "[0-9]*" >sfds &&
	test_cmp expect sfds
'

test_expect_success 'envd is not dumpable: its descriptors are not reachable' '
	test_must_fail holt sandbox exec e -- readlink /proc/1/fd/3 &&
	test_must_fail holt sandbox exec e -- ls /proc/1/fd/4/ &&
	test_must_fail holt sandbox exec e -- cat /proc/1/fd/4/services.json &&
	test_must_fail holt sandbox exec e -- cat /proc/1/environ
'

# The next command's shim waits, forked ahead of time (holt-envd(8)).
# "others": every holt-shim but the caller's own.
others='ps -eo pid=,comm= | while read pid comm; do
	test $comm = holt-shim && test $pid != $PPID && echo $pid; done; true'

test_expect_success 'a shim waits for the next command' '
	holt sandbox exec e -- sh -c "$others" >waiting &&
	test_line_count = 1 waiting
'

test_expect_success 'a command runs when its waiting shim was killed' '
	holt sandbox exec e -- sh -c "kill -9 \$($others)" &&
	holt sandbox exec e -- echo after-kill >out &&
	echo after-kill >expect &&
	test_cmp expect out &&
	holt sandbox exec e -- sh -c "$others" >waiting &&
	test_line_count = 1 waiting
'

test_expect_success 'a command runs when its waiting shim was stopped' '
	holt sandbox exec e -- sh -c "kill -STOP \$($others)" &&
	holt sandbox exec e --timeout 20 -- echo after-stop >out &&
	echo after-stop >expect &&
	test_cmp expect out &&
	holt sandbox exec e -- sh -c "$others" >waiting &&
	test_line_count = 1 waiting &&
	holt sandbox exec e -- sh -c "ps -eo stat=,comm= | grep holt-shim" >st &&
	! grep "^T" st
'

test_expect_success 'arguments and environment of over 64 KiB run too' '
	big=$(head -c 100000 /dev/zero | tr "\0" a) &&
	holt sandbox exec e --env BIG=$big -- sh -c "echo \${#BIG} \${#1}" \
		x "$big" >out &&
	echo "100000 100000" >expect &&
	test_cmp expect out
'

test_expect_success 'shutdown stops the sandbox' '
	$ET "$sock" call "{\"op\":\"shutdown\"}" >sd &&
	grep "\"ok\": true" sd &&
	test_wait_for 30 "holt sandbox ls | grep \"^$id .* stopped \""
'

test_done
