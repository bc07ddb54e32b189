#!/bin/sh
# The ssh provider (DESIGN 17): a sandbox on another machine, reached with
# OpenSSH. The "other machine" is a real sshd on a loopback port with a
# throwaway host key and user key, and a second HOLT_HOME whose holt (this
# build's) makes the sandbox in bubblewrap there.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/ssh-lib.sh"

test_sandbox_script
if ! test_have_prereq BWRAP,SYSPYTHON; then
	echo "1..0 # SKIP needs bubblewrap and /usr/bin/python3"
	exit 0
fi
if ! ssh_setup; then
	echo "1..0 # SKIP sshd cannot run here"
	exit 0
fi
test_when_finished ssh_teardown

P=ssh:$SSH_HOST
port=$((20000 + $$ % 20000))

http_get() {
	/usr/bin/python3 -c "import urllib.request, sys
print(urllib.request.urlopen('http://127.0.0.1:$1/$2', timeout=20).read().decode(), end='')"
}

test_expect_success 'create --provider ssh:HOST makes it on the host' '
	holt sandbox create --name far --net off --provider $P >id &&
	meta="$HOLT_HOME/data/sandboxes/$(cat id)/meta.json" &&
	grep "\"provider\":[[:space:]]*\"$P\"" "$meta" &&
	sed -n "s/.*\"remote_id\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$meta" >rid &&
	test -s rid &&
	remote_holt sandbox ls >rls &&
	grep "^$(cat rid)  *-  *running " rls &&
	! test -d "$HOLT_HOME/data/sandboxes/$(cat id)/workspace"
'

test_expect_success 'no holt on the host: said, and nothing is made' '
	cp "$HOLT_HOME/config/holt.conf" conf.saved &&
	echo "ssh_holt = /nonexistent/holt" >>"$HOLT_HOME/config/holt.conf" &&
	ls "$HOLT_HOME/data/sandboxes" >before &&
	test_expect_code 6 holt sandbox create --provider $P 2>err &&
	cp conf.saved "$HOLT_HOME/config/holt.conf" &&
	grep "ssh:$SSH_HOST: .*/nonexistent/holt.*is holt installed there" err &&
	ls "$HOLT_HOME/data/sandboxes" >after &&
	test_cmp before after
'

test_expect_success 'ls shows the provider; --provider ssh:HOST lists its own' '
	holt sandbox create --name near --net off >lid &&
	holt sandbox ls >ls &&
	grep "^$(cat id)  *far  *running .* $P " ls &&
	grep "^$(cat lid)  *near  *running .* local " ls &&
	holt sandbox ls --provider $P >ls2 &&
	grep "^$(cat id) " ls2 && ! grep "^$(cat lid) " ls2 &&
	holt sandbox ls --json --provider $P >json &&
	grep "\"provider\":[[:space:]]*\"$P\"" json &&
	holt sandbox rm near
'

test_expect_success 'exec, stdin, exit status and files go across' '
	test_expect_code 3 holt sandbox exec far -- \
		sh -c "echo out; echo err >&2; exit 3" >out 2>err &&
	echo out >expect && test_cmp expect out &&
	echo err >expect && test_cmp expect err &&
	echo from-stdin | holt sandbox exec far -- cat >out &&
	echo from-stdin >expect && test_cmp expect out &&
	head -c 300000 /dev/urandom >blob &&
	holt sandbox put far blob /workspace/blob &&
	holt sandbox get far /workspace/blob back &&
	cmp blob back &&
	remote_holt sandbox exec "$(cat rid)" -- ls /workspace >rls &&
	grep "^blob$" rls
'

test_expect_success 'pause, resume, stop and start act on the host' '
	holt sandbox pause far &&
	remote_holt sandbox ls | grep "^$(cat rid)  *-  *paused " &&
	holt sandbox ls | grep "^$(cat id)  *far  *paused " &&
	holt sandbox resume far &&
	holt sandbox stop far &&
	remote_holt sandbox ls | grep "^$(cat rid)  *-  *stopped " &&
	test_expect_code 6 holt sandbox exec far -- true 2>err &&
	grep "sandbox .$(cat id). is stopped (holt sandbox start $(cat id))" err &&
	holt sandbox start far &&
	holt sandbox exec far -- cat /workspace/blob | cmp blob -
'

test_expect_success 'fork copies it on the host, as a sandbox of the same provider' '
	holt sandbox fork far --name far2 >id2 &&
	meta2="$HOLT_HOME/data/sandboxes/$(cat id2)/meta.json" &&
	grep "\"provider\":[[:space:]]*\"$P\"" "$meta2" &&
	grep "\"forked_from\":[[:space:]]*\"$(cat id)\"" "$meta2" &&
	! grep "\"remote_id\":[[:space:]]*\"$(cat rid)\"" "$meta2" &&
	holt sandbox exec far2 -- cat /workspace/blob | cmp blob - &&
	holt sandbox exec far2 -- rm /workspace/blob &&
	holt sandbox exec far -- cat /workspace/blob | cmp blob - &&
	holt sandbox rm far2
'

# 60 lines on each stream over 3 s, then exit 7; the status goes to rc.
slow_lines() {
	holt sandbox exec far -- sh -c 'i=0; while [ $i -lt 60 ]; do
		i=$((i + 1)); echo line $i; echo eline $i >&2; sleep 0.05
		done; exit 7' >out 2>err
	echo $? >rc
}

test_expect_success 'the ssh connection killed mid-command: output complete' '
	{ slow_lines & } &&
	test_wait_for 100 "grep -q \"line 10\$\" out" &&
	sock=$(echo "$HOLT_HOME"/run/ssh-*) && test -S "$sock" &&
	master=$(ssh_master_pid "$sock") && test -n "$master" &&
	kill -9 $master &&
	test_wait_for 300 "test -s rc" &&
	again=$(ssh_master_pid "$sock") && test -n "$again" &&
	test "$again" != "$master" &&
	test "$(cat rc)" = 7 &&
	seq 1 60 | sed "s/^/line /" >expect && test_cmp expect out &&
	seq 1 60 | sed "s/^/eline /" >expect && test_cmp expect err
'

# The host's holt for one test: the first bridge passes envd's replies
# until a "started", then holds the rest (so a command runs on the host
# and its start never comes back), and says so in file "held".
gate_holt() {
	cat >gate.py <<-\EOF &&
	import struct, sys
	i, o, held = sys.stdin.buffer, sys.stdout.buffer, False
	while True:
	    n = i.read(4)
	    if len(n) < 4:
	        break
	    body = i.read(struct.unpack(">I", n)[0])
	    if not held and b'"started"' in body:
	        held = True
	        open(sys.argv[1], "w").close()
	    if not held:
	        o.write(n + body)
	        o.flush()
	EOF
	cat >gate-holt.sh <<-EOF
	if [ "\$1 \$2" = "sandbox bridge" ] && mkdir "$PWD/gated" 2>/dev/null; then
		HOLT_HOME=$REMOTE_HOME "$HOLT_BUILD_DIR/holt" "\$@" |
			/usr/bin/python3 "$PWD/gate.py" "$PWD/held"
		exit
	fi
	HOLT_HOME=$REMOTE_HOME exec "$HOLT_BUILD_DIR/holt" "\$@"
	EOF
}

append_once() {
	holt sandbox exec far -- sh -c "echo x >>/workspace/once" \
		>once.out 2>once.err
	echo $? >once.rc
}

test_expect_success 'an exec sent again after a drop runs once' '
	cp "$HOLT_HOME/config/holt.conf" conf.saved &&
	test_when_finished "cp conf.saved \"$HOLT_HOME/config/holt.conf\"" &&
	gate_holt &&
	echo "ssh_holt = sh $PWD/gate-holt.sh" >>"$HOLT_HOME/config/holt.conf" &&
	{ append_once & } &&
	test_wait_for 300 "test -e held" &&
	test_wait_for 100 "remote_holt sandbox exec $(cat rid) -- test -s /workspace/once" &&
	sock=$(echo "$HOLT_HOME"/run/ssh-*) &&
	master=$(ssh_master_pid "$sock") && test -n "$master" &&
	kill -9 $master &&
	test_wait_for 300 "test -s once.rc" &&
	test "$(cat once.rc)" = 0 &&
	remote_holt sandbox exec "$(cat rid)" -- cat /workspace/once >lines &&
	echo x >expect && test_cmp expect lines
'

sleep_far() {
	holt sandbox exec far -- sleep 60 >/dev/null 2>stop.err
	echo $? >stop.rc
}

test_expect_success 'stopped on the host mid-command: an error at once, not retries' '
	{ sleep_far & } &&
	test_wait_for 100 "remote_holt sandbox exec $(cat rid) -- pgrep -x sleep" &&
	remote_holt sandbox stop "$(cat rid)" &&
	test_wait_for 200 "test -s stop.rc" &&
	test "$(cat stop.rc)" != 0 &&
	grep "ssh:$SSH_HOST: the remote holt" stop.err &&
	holt sandbox start far
'

test_expect_success 'forward relays a host port to a service on the host' '
	holt sandbox exec far -- sh -c "mkdir -p /workspace/www &&
		echo hello-from-far >/workspace/www/index.txt" &&
	holt sandbox service far create web --port $port -- \
		python3 -m http.server -d /workspace/www $port &&
	test_wait_for 100 "holt sandbox exec far -- python3 -c \"
import urllib.request
urllib.request.urlopen(\\\"http://127.0.0.1:$port/index.txt\\\")\"" &&
	{ $HOLT sandbox forward far $port 0 >fwd 2>fwd.err & } &&
	fpid=$! &&
	test_when_finished "kill $fpid" &&
	test_wait_for 100 "test -s fwd" &&
	lport=$(head -n 1 fwd) &&
	http_get $lport index.txt >out &&
	echo hello-from-far >expect && test_cmp expect out &&
	http_get $lport index.txt >out2 && test_cmp expect out2
'

test_expect_success 'a headless session runs on the ssh provider' '
	write_policy &&
	cat >far.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "write_file", "arguments": {
	      "path": "note.txt", "content": "written far away\n" } } ] },
	  { "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "cat note.txt; echo host is $(cat /etc/hostname 2>/dev/null | wc -c)" } } ] },
	  { "expect": { "last_tool_result_contains": "written far away" },
	    "text": "Done.", "tool_calls": [] },
	  { "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "echo hi" } } ] },
	  { "text": "Done.", "tool_calls": [] } ] }
	EOF
	holt run -s farsess --provider $P --mode trust --model script:far.json \
		--headless "write a note" >out &&
	tail -n 1 out | grep "\"reason\":\"done\"" &&
	events_of out tool.finished | sed -n 2p | grep "written far away" &&
	sid=$(sed -n "s/.*\"sandbox\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/farsess/session.json") &&
	grep "\"provider\":[[:space:]]*\"$P\"" \
		"$HOLT_HOME/data/sandboxes/$sid/meta.json" &&
	holt sandbox exec $sid -- cat /workspace/note.txt >note &&
	echo "written far away" >expect && test_cmp expect note
'

test_expect_success 'checkpoints are the host'"'"'s; rewind puts the files back there' '
	events_of "$(session_log farsess)" checkpoint.taken >ck &&
	grep "\"step\":1,.*\"name\":\"write_file\"" ck &&
	holt rewind -t farsess --to 1 &&
	sid=$(sed -n "s/.*\"sandbox\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/farsess/session.json") &&
	test_must_fail holt sandbox exec $sid -- test -e /workspace/note.txt &&
	events_of "$(session_log farsess)" session.rewound | grep "\"files\":true" &&
	holt kill-server
'

test_expect_success 'a session with --repo: the repository is in the sandbox' '
	make_repo proj &&
	cat >repo.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_tests", "arguments": {} } ] },
	  { "expect": { "last_tool_result_contains": "TESTS FAILED" },
	    "text": "It fails.", "tool_calls": [] } ] }
	EOF
	holt run -s repo --repo proj --provider $P --mode trust \
		--model script:repo.json --test-command "python3 test_calc.py" \
		--headless "run the tests" >out &&
	tail -n 1 out | grep "\"reason\":\"done\"" &&
	sid=$(sed -n "s/.*\"sandbox\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/repo/session.json") &&
	holt sandbox exec $sid -- cat /workspace/calc.py >calc &&
	test_cmp proj/calc.py calc &&
	holt sandbox exec $sid -- sh -c "cd /workspace &&
		sed -i s/a-b/a+b/ calc.py && sed -i \"s/a - b/a + b/\" calc.py &&
		echo new >added.txt" &&
	holt diff -t repo >diff &&
	grep "^-    return a - b" diff &&
	grep "^+    return a + b" diff &&
	grep "^+++ b/added.txt" diff &&
	holt diff -t repo --stat >stat &&
	grep "calc.py *| *2" stat &&
	holt diff -t repo --json >d.json &&
	grep "added.txt" d.json &&
	holt commit -t repo -m "made here" >out &&
	ws=$(dirname "$(ls "$HOLT_HOME"/data/sandboxes/$sid/workspace/calc.py)") &&
	test "$(git -C "$ws" log -1 --format=%s)" = "made here"
'

test_expect_success 'the command of a session outlives its ssh connection' '
	cat >cut.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "for i in $(seq 1 40); do echo n $i; sleep 0.1; done" } } ] },
	  { "expect": { "last_tool_result_contains": "n 40" },
	    "text": "Counted.", "tool_calls": [] } ] }
	EOF
	{ holt run -s cut --provider $P --mode trust --model script:cut.json \
		--headless "count" >cut.out 2>cut.err & } &&
	rpid=$! &&
	test_wait_for 300 "grep -q tool.running \"$HOLT_HOME/data/sessions/cut/events.jsonl\"" &&
	sock=$(echo "$HOLT_HOME"/run/ssh-*) &&
	master=$(ssh_master_pid "$sock") && test -n "$master" &&
	kill -9 $master &&
	wait $rpid &&
	tail -n 1 cut.out | grep "\"reason\":\"done\"" &&
	events_of cut.out tool.finished >fin &&
	grep "exit code 0" fin &&
	for i in $(seq 1 40); do grep -q "n $i\\\\n" fin || return 1; done &&
	again=$(ssh_master_pid "$sock") && test "$again" != "$master"
'

export TERM=xterm-256color
test_when_finished "$TMUX_W kill-server 2>/dev/null; :"

test_expect_success TMUX 'watch follows the files across a dropped connection' '
	$TMUX_W new-session -d -s w -x 120 -y 30 \
		"$HOLT_BUILD_DIR/holt sandbox watch far; echo exit=\$?; sleep 30" &&
	screen_wait "watch far\\|watch $(cat id)" &&
	holt sandbox exec far -- sh -c "echo 1 >/workspace/before-drop.txt" &&
	screen_wait "before-drop.txt" &&
	sock=$(echo "$HOLT_HOME"/run/ssh-*) &&
	master=$(ssh_master_pid "$sock") && test -n "$master" &&
	kill -9 $master &&
	test_wait_for 100 "test -n \"\$(ssh_master_pid $sock)\"" &&
	holt sandbox exec far -- sh -c "echo 2 >/workspace/after-drop.txt" &&
	screen_wait "after-drop.txt" &&
	$TMUX_W send-keys -t w q &&
	screen_wait "^exit=0"
'

test_expect_success TMUX 'a session'"'"'s file tree follows the files on the host' '
	cat >idle.json <<-\EOF &&
	{ "turns": [ { "text": "Ready.", "tool_calls": [] } ] }
	EOF
	holt new -d -s tree --provider $P --mode trust --model script:idle.json &&
	sid=$(sed -n "s/.*\"sandbox\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/tree/session.json") &&
	holt sandbox exec $sid -- sh -c "mkdir /workspace/far-dir &&
		echo far >/workspace/far-first.txt" &&
	{ $TMUX_W kill-session -t w 2>/dev/null || :; } &&
	$TMUX_W new-session -d -s w -x 160 -y 40 \
		"$HOLT_BUILD_DIR/holt -L $HOLT_SOCKET attach -t tree; sleep 30" &&
	screen_wait "far-first.txt" &&
	screen_wait "far-dir" &&
	holt sandbox exec $sid -- sh -c "echo 2 >/workspace/far-second.txt &&
		rm /workspace/far-first.txt" &&
	screen_wait "far-second.txt" &&
	test_wait_for 100 "! $TMUX_W capture-pane -p -t w | grep -q far-first.txt" &&
	$TMUX_W send-keys -t w C-g d &&
	screen_wait "detached"
'

# A headless session NAME (its script NAME.json, after its prompt) whose
# host goes down under its command, for longer than ssh_retry_s (1 s):
# returns once the session says it waits; the caller brings sshd back
# (ssh_sshd_start) and waits for $rpid.
lost_session() {
	echo "ssh_retry_s = 1" >>"$HOLT_HOME/config/holt.conf" &&
	{ holt run -s $1 --provider $P --mode trust --model script:$1.json \
		--headless "$2" >$1.out 2>$1.err & } &&
	rpid=$! &&
	ev="$HOLT_HOME/data/sessions/$1/events.jsonl" &&
	test_wait_for 300 "grep -q tool.running \"$ev\"" &&
	ssh_sshd_stop && ssh_masters_kill &&
	test_wait_for 300 "grep -q \"is re-joined once the sandbox can be reached\" \"$ev\""
}

test_expect_success 'a command whose host is gone for long is re-joined when it is back' '
	cp "$HOLT_HOME/config/holt.conf" conf.saved &&
	test_when_finished "cp conf.saved \"$HOLT_HOME/config/holt.conf\"" &&
	cat >gone.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "for i in $(seq 1 30); do echo g $i; sleep 0.2; done" } } ] },
	  { "expect": { "last_tool_result_contains": "g 30" },
	    "text": "Counted.", "tool_calls": [] } ] }
	EOF
	lost_session gone count &&
	ssh_sshd_start &&
	wait $rpid &&
	tail -n 1 gone.out | grep "\"reason\":\"done\"" &&
	events_of gone.out tool.finished >fin &&
	grep "exit code 0" fin &&
	for i in $(seq 1 30); do grep -q "g $i\\\\n" fin || return 1; done
'

test_expect_success 'one the host no longer knows when it is back: its output is gone' '
	cp "$HOLT_HOME/config/holt.conf" conf.saved &&
	test_when_finished "cp conf.saved \"$HOLT_HOME/config/holt.conf\"" &&
	cat >gone2.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": {
	      "command": "echo begun; sleep 60" } } ] },
	  { "expect": { "last_tool_result_contains": "its output is gone" },
	    "text": "Gone.", "tool_calls": [] } ] }
	EOF
	lost_session gone2 wait &&
	sid=$(sed -n "s/.*\"sandbox\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/gone2/session.json") &&
	rid2=$(sed -n "s/.*\"remote_id\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sandboxes/$sid/meta.json") &&
	remote_holt sandbox stop $rid2 && remote_holt sandbox start $rid2 &&
	ssh_sshd_start &&
	wait $rpid &&
	tail -n 1 gone2.out | grep "\"reason\":\"done\"" &&
	events_of gone2.out tool.finished | grep "its output is gone"
'

test_expect_success 'the host down: a clear error naming it, never a local one' '
	ssh_sshd_stop && ssh_masters_kill &&
	test_expect_code 6 holt sandbox exec far -- true 2>err &&
	grep "ssh:$SSH_HOST: cannot reach the host" err &&
	test_wait_for 300 "holt sandbox ls | grep \"^$(cat id)  *far  *unreachable \"" &&
	ls "$HOLT_HOME/data/sandboxes" >before &&
	test_must_fail holt sandbox create --provider $P 2>err &&
	grep "ssh:$SSH_HOST: cannot reach the host" err &&
	ls "$HOLT_HOME/data/sandboxes" >after &&
	test_cmp before after &&
	test_must_fail holt run --resume farsess --headless "again" \
		>out 2>err &&
	grep "ssh:$SSH_HOST" out err &&
	ls "$HOLT_HOME/data/sandboxes" >after2 &&
	test_cmp before after2
'

test_expect_success 'rm of one whose host is gone says so; --forget drops the record' '
	test_must_fail holt sandbox rm far 2>err &&
	grep "cannot reach the host" err &&
	test -d "$HOLT_HOME/data/sandboxes/$(cat id)" &&
	holt sandbox create --name here --net off >hid &&
	test_must_fail holt sandbox rm --forget here 2>err &&
	grep "is for a sandbox on another provider" err &&
	holt sandbox rm here &&
	holt sandbox rm --forget far &&
	! test -d "$HOLT_HOME/data/sandboxes/$(cat id)" &&
	test_expect_code 2 holt sandbox stop --forget far
'

test_done
