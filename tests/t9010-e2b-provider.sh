#!/bin/sh
# --provider e2b: holt's sandboxes on an E2B server. The "cloud" is holt e2b
# serve on loopback with a HOLT_HOME of its own; holt, the client, knows it
# only by E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/e2b-lib.sh"

test_when_finished "e2b_stop; cloud_cleanup; $TMUX_W kill-server"

test_expect_success BWRAP 'create: an E2B sandbox, known to holt as its own' '
	cloud_serve &&
	. ./e2b.env &&
	holt sandbox create --provider e2b --name box >id &&
	grep "^sbx-[0-9a-f]\{12\}$" id &&
	e2b_id_of "$(cat id)" >eid &&
	cloud sandbox ls >cloud.ls &&
	grep "^$(cat eid) .* running" cloud.ls &&
	holt sandbox ls >ls &&
	grep "^$(cat id) *box *running .* e2b" ls &&
	holt sandbox ls --json >ls.json &&
	python3 -c "import json; s = [x for x in json.load(open(\"ls.json\"))
	    if x[\"name\"] == \"box\"][0]; assert s[\"provider\"] == \"e2b\", s"
'

test_expect_success BWRAP 'the key is in no file of holt and not in the sandbox' '
	. ./e2b.env &&
	! grep -r -F "$E2B_API_KEY" "$HOLT_HOME/data" "$HOLT_HOME/config" 2>/dev/null &&
	holt sandbox exec box -- env >env &&
	! grep -F "$E2B_API_KEY" env &&
	! grep -i "E2B_API_KEY" env
'

test_expect_success BWRAP 'exec: output streamed, both streams, the exit status' '
	. ./e2b.env &&
	test_expect_code 3 holt sandbox exec box -- sh -c \
		"echo one; echo two >&2; pwd; exit 3" >out 2>err &&
	printf "one\n/workspace\n" >expect &&
	test_cmp expect out &&
	echo two >expect &&
	test_cmp expect err &&
	# streamed: the first line is out before the command ends
	( holt sandbox exec box -- sh -c "echo early; sleep 30" >slow.out & echo $! >slow.pid ) &&
	test_wait_for 100 "grep -q early slow.out" &&
	kill "$(cat slow.pid)" &&
	printf "a\nb\n" | holt sandbox exec box -- cat >cat.out &&
	printf "a\nb\n" >expect &&
	test_cmp expect cat.out
'

test_expect_success BWRAP 'a terminal: input as E2B'"'"'s pty input, ^D for its end' '
	. ./e2b.env &&
	printf "echo via-\$((40 + 2))\nexit 5\n" >in &&
	test_expect_code 5 holt sandbox exec box --tty -- sh <in >out &&
	grep "via-42" out &&
	printf "abc\n" | holt sandbox exec box --tty -- sh -c "cat; echo done" >out2 &&
	grep done out2
'

test_expect_success BWRAP 'a command past its timeout is killed, as locally' '
	. ./e2b.env &&
	test_expect_code 124 holt sandbox exec box --timeout 1 -- sleep 30
'

test_expect_success BWRAP 'files: put and get, below /workspace, made by E2B' '
	. ./e2b.env &&
	printf "hello\nworld\n" >h.txt &&
	holt sandbox put box h.txt sub/dir/h.txt &&
	holt sandbox get box sub/dir/h.txt back.txt &&
	test_cmp h.txt back.txt &&
	cloud sandbox exec "$(cat eid)" -- cat /workspace/sub/dir/h.txt >there &&
	test_cmp h.txt there &&
	test_must_fail holt sandbox get box no/such x 2>err &&
	grep "No such file" err
'

test_expect_success BWRAP 'services: E2B processes left running, their log, restart, stop' '
	. ./e2b.env &&
	holt sandbox service box create web --port 8000 -- \
		sh -c "echo serving in \$PWD; exec sleep 300" &&
	holt sandbox service box ls >svc &&
	grep "web" svc && grep "8000" svc &&
	test_wait_for 100 "holt sandbox service box logs web | grep -q \"serving in /workspace\"" &&
	holt sandbox service box restart web &&
	test_wait_for 100 "test \$(holt sandbox service box logs web | grep -c serving) = 2" &&
	holt sandbox service box stop web &&
	holt sandbox service box ls >svc2 &&
	! grep web svc2 &&
	test_must_fail holt sandbox service box stop web 2>err &&
	grep "not running" err
'

test_expect_success BWRAP 'checkpoint and fork: a new E2B sandbox with the files, now or then' '
	. ./e2b.env &&
	holt sandbox exec box -- sh -c "echo then >forked.txt" &&
	holt sandbox checkpoint box --json >ck.json &&
	ck=$(python3 -c "import json; print(json.load(open(\"ck.json\"))[\"checkpoint\"])") &&
	holt sandbox exec box -- sh -c "echo now >forked.txt; echo new >later.txt" &&
	holt sandbox fork box --name now >id3 &&
	holt sandbox fork box --name then --at "$ck" >id4 &&
	e2b_id_of "$(cat id3)" >eid3 &&
	e2b_id_of "$(cat id4)" >eid4 &&
	! test "$(cat eid3)" = "$(cat eid)" &&
	echo now >expect &&
	holt sandbox exec now -- cat forked.txt >out &&
	test_cmp expect out &&
	holt sandbox exec now -- test -f later.txt &&
	echo then >expect &&
	holt sandbox exec then -- cat forked.txt >out &&
	test_cmp expect out &&
	test_must_fail holt sandbox exec then -- test -e later.txt &&
	holt sandbox ls | grep "^$(cat id4) *then *running .* e2b" &&
	test_must_fail holt sandbox fork box --at 999 2>err &&
	grep "no such checkpoint" err &&
	holt sandbox rm now && holt sandbox rm then
'

test_expect_success BWRAP 'pause and resume are E2B'"'"'s; a command wakes it' '
	. ./e2b.env &&
	holt sandbox pause box &&
	cloud sandbox ls | grep "^$(cat eid) .* paused" &&
	holt sandbox ls | grep "^$(cat id) .* paused" &&
	holt sandbox resume box &&
	cloud sandbox ls | grep "^$(cat eid) .* running" &&
	holt sandbox pause box &&
	echo back >expect &&
	holt sandbox exec box -- echo back >out &&
	test_cmp expect out &&
	cloud sandbox ls | grep "^$(cat eid) .* running"
'

test_expect_success BWRAP 'paused under a running command: its input resumes it' '
	. ./e2b.env &&
	mkfifo fifo &&
	( holt sandbox exec box -- sh -c "echo ready; read a; echo got \$a" \
		<fifo >got & echo $! >got.pid ) &&
	exec 9>fifo &&
	test_wait_for 100 "grep -q ready got" &&
	cloud sandbox pause "$(cat eid)" &&
	echo hi >&9 &&
	exec 9>&- &&
	test_wait_for 100 "grep -q \"got hi\" got" &&
	cloud sandbox ls | grep "^$(cat eid) .* running"
'

test_expect_success BWRAP 'the idle timeout is E2B'"'"'s: it pauses, the files stay' '
	. ./e2b.env &&
	holt sandbox create --provider e2b --idle-pause 2s --name short >id2 &&
	holt sandbox exec short -- sh -c "echo kept >k" &&
	e2b_id_of "$(cat id2)" >eid2 &&
	test_wait_for 150 "cloud sandbox ls | grep \"^$(cat eid2) .* paused\"" &&
	holt sandbox ls | grep "^$(cat id2) .* paused" &&
	echo kept >expect &&
	holt sandbox exec short -- cat k >out &&
	test_cmp expect out
'

test_expect_success BWRAP,TMUX 'holt sandbox watch: the tree follows E2B'"'"'s WatchDir' '
	. ./e2b.env &&
	TERM=xterm-256color $TMUX_W new-session -d -s w -x 120 -y 30 \
		"$HOLT_BUILD_DIR/holt sandbox watch box; sleep 30" &&
	screen_wait "sub/" &&
	holt sandbox exec box -- sh -c "echo x >seen-by-watch.txt" &&
	screen_wait "seen-by-watch"
'

test_expect_success BWRAP 'a wrong key says so; the sandbox is untouched' '
	. ./e2b.env &&
	test_must_fail env E2B_API_KEY=e2b_wrong holt sandbox exec box -- true 2>err &&
	grep "E2B said 401: check E2B_API_KEY" err &&
	! grep e2b_wrong err &&
	test_must_fail env -u E2B_API_KEY holt sandbox exec box -- true 2>err &&
	grep "E2B_API_KEY" err &&
	test_must_fail env E2B_API_KEY=e2b_wrong holt sandbox create \
		--provider e2b 2>err &&
	grep "E2B said 401" err &&
	holt sandbox exec box -- true
'

test_expect_success BWRAP 'the server down: the error names its URL' '
	. ./e2b.env &&
	e2b_stop &&
	test_must_fail holt sandbox exec box -- true 2>err &&
	grep -F "$E2B_API_URL" err &&
	port=${E2B_API_URL##*:} &&
	cloud_serve "$port" &&
	holt sandbox exec box -- true
'

test_expect_success BWRAP 'rm kills it at E2B; one gone there is an error, not a new one' '
	. ./e2b.env &&
	holt sandbox rm short &&
	! cloud sandbox ls | grep "^$(cat eid2) " &&
	cloud_kill "$(cat eid)" &&
	test_must_fail holt sandbox exec box -- true 2>err &&
	grep "E2B no longer has\|E2B said 404" err &&
	cloud sandbox ls >after &&
	test_line_count = 1 after
'

test_expect_success BWRAP 'e2b serve makes local sandboxes, whatever holt.conf says' '
	. ./e2b.env &&
	e2b_stop &&
	port=${E2B_API_URL##*:} &&
	mkdir -p "$CLOUD/config" &&
	cat >>"$CLOUD/config/holt.conf" <<-EOF &&
	provider = e2b
	e2b_api_url = $E2B_API_URL
	e2b_sandbox_url = $E2B_SANDBOX_URL
	e2b_api_key = $E2B_API_KEY
	EOF
	cloud_serve "$port" &&
	holt sandbox create --provider e2b --name self >sid &&
	e2b_id_of "$(cat sid)" >seid &&
	cloud sandbox ls >cl &&
	grep "^$(cat seid) .* running .* local " cl &&
	holt sandbox exec self -- true
'

test_expect_success BWRAP,TMUX 'a session'"'"'s file tree is its E2B sandbox'"'"'s' '
	. ./e2b.env &&
	echo "{ \"turns\": [ { \"text\": \"Ready.\", \"tool_calls\": [] } ] }" >idle.json &&
	holt new -d -s etree --provider e2b --mode trust --model script:idle.json &&
	sid=$(sed -n "s/.*\"sandbox\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/etree/session.json") &&
	holt sandbox exec $sid -- sh -c "echo x >/workspace/in-e2b.txt" &&
	{ $TMUX_W kill-session -t w 2>/dev/null || :; } &&
	TERM=xterm-256color $TMUX_W new-session -d -s w -x 160 -y 40 \
		"env E2B_API_KEY=$E2B_API_KEY E2B_API_URL=$E2B_API_URL \
		E2B_SANDBOX_URL=$E2B_SANDBOX_URL \
		$HOLT_BUILD_DIR/holt -L $HOLT_SOCKET attach -t etree; sleep 30" &&
	screen_wait "in-e2b.txt" &&
	holt sandbox exec $sid -- sh -c "echo y >/workspace/then-e2b.txt" &&
	screen_wait "then-e2b.txt" &&
	$TMUX_W send-keys -t w C-g d
'

test_done
