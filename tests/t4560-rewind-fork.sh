#!/bin/sh
# Rewind and fork of sessions (DESIGN 15) with real sandboxes, the server
# and the mock model: a checkpoint before every call that can change
# files, holt rewind (files, conversation, both), the log append-only, a
# kill -9 of the server in the middle of a rewind, a checkpoint that
# cannot be taken, holt fork and holt new --fork-of.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

test_when_finished 'holt kill-server'

ws_of() {
	sed -n "s/.*\"sandbox\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/$1/session.json" | head -n 1 |
		sed "s|^|$HOLT_HOME/data/sandboxes/|; s|$|/workspace|"
}

# The workspace as text: every entry, its mode, and every file's bytes.
ws_state() {
	(
		cd "$1" &&
		find . -mindepth 1 -not -path "./.git*" -printf "%p %y %m %l\n" |
			LC_ALL=C sort &&
		find . -type f -not -path "./.git*" -exec md5sum {} + |
			LC_ALL=C sort -k 2
	)
}

test_expect_success BWRAP 'setup: a session that writes a file, then runs a command' '
	make_repo proj &&
	write_policy &&
	cat >flow.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "write_file", "arguments": { "path": "notes.txt", "content": "one\n" } } ] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "echo two >b.txt && rm README && mkdir -p d/e && chmod 600 notes.txt" } } ] },
	  { "text": "done", "tool_calls": [] },
	  { "expect": { "last_user_message_contains": "try again", "last_tool_result_contains": "rewound the session" },
	    "tool_calls": [ { "name": "run_command", "arguments": { "command": "echo three >c.txt" } } ] },
	  { "text": "done again", "tool_calls": [] } ] }
	EOF
	holt new -d -s r --repo proj --mode trust --model script:flow.json "make notes" &&
	test_wait_for 300 "holt log -t r | grep \"run finished: done\"" &&
	ws=$(ws_of r) &&
	test -f "$ws/b.txt" && ! test -f "$ws/README"
'

test_expect_success BWRAP 'a checkpoint before each call that can change files' '
	log=$(session_log r) &&
	events_of "$log" checkpoint.taken >ck &&
	test $(wc -l <ck) = 2 &&
	grep "\"step\":1,.*\"name\":\"write_file\"" ck &&
	grep "\"step\":2,.*\"name\":\"run_command\"" ck &&
	grep "\"checkpoint\":1," ck && grep "\"checkpoint\":2," ck &&
	grep "\"files\":" ck && grep "\"bytes\":" ck &&
	holt log -t r >text &&
	grep "step 1: checkpoint 1 before write_file" text &&
	grep "step 2: checkpoint 2 before run_command" text
'

test_expect_success BWRAP 'rewind --to 2: the files before the command, byte for byte' '
	ws=$(ws_of r) &&
	cp "$(session_log r)" log.before &&
	holt rewind -t r --to 2 &&
	test -f "$ws/README" && ! test -e "$ws/b.txt" && ! test -e "$ws/d" &&
	echo one >expect && test_cmp expect "$ws/notes.txt" &&
	test "$(stat -c %a "$ws/notes.txt")" != 600 &&
	git -C proj show HEAD:README >expect && test_cmp expect "$ws/README"
'

test_expect_success BWRAP 'the log is append-only: one session.rewound more' '
	log=$(session_log r) &&
	head -c $(wc -c <log.before) "$log" >prefix &&
	test_cmp log.before prefix &&
	events_of "$log" session.rewound >rw &&
	test $(wc -l <rw) = 1 &&
	grep "\"to_step\":2" rw && grep "\"checkpoint\":2" rw &&
	grep "\"files\":true" rw && grep "\"conversation\":true" rw &&
	holt log -t r | grep "rewound to before step 2 (files and conversation)"
'

test_expect_success BWRAP 'the conversation continues from before step 2' '
	holt send -t r "try again" &&
	test_wait_for 300 "holt log -t r | grep \"run finished: done\" | test \$(wc -l) = 2" &&
	! holt log -t r | grep "run finished: error" &&
	ws=$(ws_of r) &&
	echo three >expect && test_cmp expect "$ws/c.txt" &&
	events_of "$(session_log r)" checkpoint.taken | grep "\"step\":3,"
'

test_expect_success BWRAP '--files-only puts the files back and keeps the conversation' '
	ws=$(ws_of r) &&
	holt rewind -t r --to 3 --files-only &&
	! test -e "$ws/c.txt" &&
	events_of "$(session_log r)" session.rewound | tail -n 1 >rw &&
	grep "\"conversation\":false" rw &&
	holt log -t r | grep "rewound to before step 3 (files only)"
'

test_expect_success BWRAP '--conversation-only keeps the files' '
	ws=$(ws_of r) &&
	echo kept >"$ws/kept.txt" &&
	holt rewind -t r --to 3 --conversation-only &&
	test -f "$ws/kept.txt" &&
	events_of "$(session_log r)" session.rewound | tail -n 1 >rw &&
	grep "\"files\":false" rw
'

test_expect_success BWRAP 'bad rewinds are clear errors and change nothing' '
	ws=$(ws_of r) &&
	ws_state "$ws" >before &&
	test_expect_code 1 holt rewind -t r --to 9 2>err &&
	grep "no step 9" err &&
	ws_state "$ws" >after &&
	test_cmp before after &&
	holt rewind -t r --to 1 &&
	ws_state "$ws" >before &&
	test_expect_code 1 holt rewind -t r --to 3 2>err &&
	grep "step 3 is not in the conversation any more" err &&
	ws_state "$ws" >after &&
	test_cmp before after &&
	holt rewind -t r --to 3 --files-only &&
	test_expect_code 2 holt rewind -t r 2>err && grep "to STEP is needed" err &&
	test_expect_code 2 holt rewind -t r --to x 2>err && grep "step .x." err &&
	test_expect_code 2 holt rewind -t r --to 1 --files-only --conversation-only 2>err &&
	grep "exclude each other" err &&
	test_expect_code 2 holt rewind -t nosuch --to 1 2>err && grep "no such session" err
'

test_expect_success BWRAP 'kill -9 of the server in the middle of a rewind: old or new, never a mix' '
	cat >k.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "mkdir a b c && echo 1 >a/f && echo 2 >b/f && echo 3 >c/f" } } ] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "true" } } ] },
	  { "text": "done", "tool_calls": [] } ] }
	EOF
	holt new -d -s k --mode trust --model script:k.json "make dirs" &&
	test_wait_for 300 "holt log -t k | grep \"run finished: done\"" &&
	ws=$(ws_of k) &&
	ws_state "$ws" >old &&
	holt rewind -t k --to 1 --files-only &&
	ws_state "$ws" >new &&
	holt rewind -t k --to 2 --files-only &&
	n=$(events_of "$(session_log k)" session.rewound | wc -l) &&
	holt kill-server &&
	HOLT_TEST_RESTORE_STOP=2 holt ls >/dev/null &&
	spid=$(pgrep -f "holt -L $HOLT_SOCKET server -f") &&
	{ holt rewind -t k --to 1 --files-only >/dev/null 2>&1 & } &&
	test_wait_for 100 "grep -q \"^State:.*T\" /proc/$spid/status" &&
	ws_state "$ws" >mixed &&
	kill -9 $spid &&
	wait &&
	! test_cmp old mixed >/dev/null &&
	! test_cmp new mixed >/dev/null &&
	holt interrupt -t k &&
	ws_state "$ws" >whole &&
	test_cmp new whole &&
	events_of "$(session_log k)" session.rewound >rw &&
	test $(wc -l <rw) = $((n + 1)) &&
	tail -n 1 rw | grep "\"to_step\":1"
'

test_expect_success BWRAP 'fork --at: a new session from before a step, independent' '
	holt fork -t r --at 2 -s rf >name &&
	echo rf >expect && test_cmp expect name &&
	ws=$(ws_of r) && wf=$(ws_of rf) &&
	test "$ws" != "$wf" &&
	echo one >expect && test_cmp expect "$wf/notes.txt" &&
	test -f "$wf/README" && ! test -e "$wf/b.txt" &&
	log=$(session_log rf) &&
	events_of "$log" session.forked >fk &&
	grep "\"from\":\"r\"" fk && grep "\"at_step\":2" fk &&
	! grep "\"step\":2," "$log" &&
	grep "\"step\":1," "$log" &&
	echo mine >"$wf/only-fork" &&
	! test -e "$ws/only-fork" &&
	holt ls >ls && grep "^r " ls && grep "^rf " ls &&
	test_expect_code 2 holt fork -t r --at 2 -s rf 2>err && grep "already exists" err &&
	test_expect_code 2 holt fork -t r --at 99 2>err && grep "no step 99" err
'

test_expect_success BWRAP 'the fork keeps the checkpoints: it can rewind too' '
	wf=$(ws_of rf) &&
	holt rewind -t rf --to 1 &&
	! test -e "$wf/notes.txt" && ! test -e "$wf/only-fork"
'

test_expect_success BWRAP 'new --fork-of -n 2: two forks on one task, side by side' '
	cat >p.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "echo base >base.txt" } } ] },
	  { "text": "done", "tool_calls": [] },
	  { "expect": { "last_user_message_contains": "try it" },
	    "tool_calls": [ { "name": "run_command", "arguments": { "command": "head -c 16 /dev/urandom | od -An -tx1 >fork.txt" } } ] },
	  { "text": "forked work done", "tool_calls": [] } ] }
	EOF
	holt new -d -s p --mode trust --model script:p.json "base" &&
	test_wait_for 300 "holt log -t p | grep \"run finished: done\"" &&
	holt new --fork-of p -n 2 "try it" >names &&
	printf "p-1\np-2\n" >expect && test_cmp expect names &&
	test_wait_for 300 "holt log -t p-1 | grep \"run finished: done\"" &&
	test_wait_for 300 "holt log -t p-2 | grep \"run finished: done\"" &&
	! test -e "$(ws_of p)/fork.txt" &&
	test -s "$(ws_of p-1)/fork.txt" && test -s "$(ws_of p-2)/fork.txt" &&
	! test_cmp "$(ws_of p-1)/fork.txt" "$(ws_of p-2)/fork.txt" &&
	echo base >expect && test_cmp expect "$(ws_of p-2)/base.txt" &&
	holt ls >ls && grep "^p " ls && grep "^p-1 " ls && grep "^p-2 " ls &&
	test_expect_code 2 holt new --fork-of nosuch -n 2 "x" 2>err &&
	grep "no such session" err &&
	test_expect_code 2 holt new -n 2 "x" 2>err && grep "needs --fork-of" err
'

test_expect_success BWRAP,TMUX 'the screen: /rewind lists the steps, a pick, y to confirm' '
	TUI_CMD="$HOLT attach" &&
	ws=$(ws_of k) &&
	holt rewind -t k --to 2 --files-only &&
	test -d "$ws/a" &&
	n=$(events_of "$(session_log k)" session.rewound | wc -l) &&
	tui_start tk -t k &&
	tui_wait tk "k" 100 &&
	tui_keys tk Escape &&
	sleep 0.2 &&
	tui_keys tk Escape &&
	tui_wait tk "1 run_command mkdir a b c &&" &&
	tui_wait tk "rewind to before step: *2" &&
	tui_keys tk C-u Enter &&
	tui_keys tk "/rewind" Enter &&
	tui_wait tk "1 run_command mkdir a b c &&" &&
	tui_wait tk "2 run_command true" &&
	tui_wait tk "rewind to before step: *2" &&
	tui_keys tk C-u 1 Enter &&
	tui_wait tk "rewind files and conversation to before step 1" &&
	tui_keys tk n Enter &&
	tui_wait tk "rewind cancelled" &&
	test -d "$ws/a" &&
	tui_keys tk "/rewind 1" Enter &&
	tui_wait tk "before step 1 (run_command mkdir" &&
	tui_keys tk y Enter &&
	tui_wait tk "rewound to before step 1" 100 &&
	test_wait_for 100 "! test -d \"$ws/a\"" &&
	events_of "$(session_log k)" session.rewound >rw &&
	test $(wc -l <rw) = $((n + 1)) &&
	tail -n 1 rw | grep "\"conversation\":true" &&
	tui_keys tk C-b d
'

test_expect_success BWRAP 'a checkpoint that cannot be taken is reported, and the call asks' '
	cat >nc.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "echo hi" } } ] },
	  { "text": "done", "tool_calls": [] } ] }
	EOF
	holt new -d -s nc --mode auto --model script:nc.json &&
	d=$(dirname "$(ws_of nc)") &&
	rm -rf "$d/checkpoints" && echo broken >"$d/checkpoints" &&
	holt send -t nc "say hi" &&
	test_wait_for 300 "holt ls | grep \"^nc .*waiting\"" &&
	holt log -t nc >text &&
	grep "error: checkpoint before run_command failed" text &&
	events_of "$(session_log nc)" approval.needed >ask &&
	grep "no checkpoint could be taken" ask &&
	holt approve -t nc allow &&
	test_wait_for 300 "holt log -t nc | grep \"run finished: done\""
'

test_expect_success BWRAP 'a checkpoint is taken off the server loop: the rest goes on meanwhile' '
	test_might_fail holt kill-server &&
	test_when_finished "touch go; holt kill-server" &&
	cat >hold.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "write_file", "arguments": { "path": "held.txt", "content": "held\n" } } ] },
	  { "text": "done", "tool_calls": [] } ] }
	EOF
	cat >other.json <<-\EOF &&
	{ "turns": [ { "text": "other done", "tool_calls": [] } ] }
	EOF
	# The server holds every checkpoint until go exists.
	HOLT_TEST_CHECKPOINT_WAIT=$PWD/go holt new -d -s hold --mode trust \
		--model script:hold.json "write" &&
	test_wait_for 300 "events_of \"$(session_log hold)\" tool.call" &&
	! events_of "$(session_log hold)" checkpoint.taken &&
	timeout 20 $HOLT ls >ls && grep "^hold " ls &&
	timeout 20 $HOLT new -d -s other --model script:other.json "hi" &&
	test_wait_for 300 "timeout 20 $HOLT log -t other | grep \"run finished\"" &&
	holt log -t other | grep "agent: other done" &&
	! events_of "$(session_log hold)" checkpoint.taken &&
	! test -e "$(ws_of hold)/held.txt" &&
	touch go &&
	test_wait_for 300 "holt log -t hold | grep \"run finished: done\"" &&
	events_of "$(session_log hold)" checkpoint.taken &&
	echo held >expect && test_cmp expect "$(ws_of hold)/held.txt"
'

test_expect_success BWRAP 'a rewind puts the files back off the server loop: the rest goes on meanwhile' '
	test_might_fail holt kill-server &&
	test_when_finished "touch go2; holt kill-server" &&
	ws=$(ws_of k) &&
	holt rewind -t k --to 2 --files-only &&
	ws_state "$ws" >at2 &&
	holt rewind -t k --to 1 --files-only &&
	ws_state "$ws" >at1 &&
	holt kill-server &&
	# The server holds every restore until go2 exists.
	HOLT_TEST_RESTORE_WAIT=$PWD/go2 holt ls >/dev/null &&
	{ holt rewind -t k --to 2 --files-only >rw.out 2>&1 & } &&
	test_wait_for 300 "test -e go2.held" &&
	timeout 20 $HOLT ls >ls && grep "^k " ls &&
	test_must_fail timeout 20 $HOLT send -t k "hi" 2>err &&
	grep "rewinding its files" err &&
	timeout 20 $HOLT new -d -s other2 --model script:other.json "hi" &&
	test_wait_for 300 "timeout 20 $HOLT log -t other2 | grep \"run finished\"" &&
	ws_state "$ws" >held && test_cmp at1 held &&
	touch go2 &&
	wait &&
	! test -s rw.out &&
	ws_state "$ws" >after && test_cmp at2 after &&
	events_of "$(session_log k)" session.rewound | tail -n 1 |
		grep "\"to_step\":2"
'

test_expect_success BWRAP 'a rewind while another process has the checkpoints waits for them off the loop' '
	test_when_finished "touch unlock; holt kill-server" &&
	ws=$(ws_of k) &&
	sbx=$(dirname "$ws") &&
	ws_state "$ws" >at2 &&
	holt rewind -t k --to 1 --files-only &&
	ws_state "$ws" >at1 &&
	id=${sbx##*/} &&
	test_might_fail holt sandbox start $id 2>/dev/null &&
	holt sandbox ls | grep "^$id .*running" &&
	{ flock "$sbx/checkpoints/lock" sh -c "touch locked; while ! test -e unlock; do sleep 0.1; done" & } &&
	test_wait_for 300 "test -e locked" &&
	{ holt rewind -t k --to 2 --files-only >rw2.out 2>&1 & } &&
	# Stopped, and its files not back: the rewind waits for the store.
	test_wait_for 300 "holt sandbox ls | grep -q \"^$id .*stopped\"" &&
	test_must_fail timeout 20 $HOLT send -t k "hi" 2>err &&
	grep "rewinding its files" err &&
	timeout 20 $HOLT ls >ls && grep "^k " ls &&
	ws_state "$ws" >held && test_cmp at1 held &&
	touch unlock &&
	wait &&
	! test -s rw2.out &&
	ws_state "$ws" >after && test_cmp at2 after
'

# approve_but_echo HOLT LOG: allow what auto mode asked about, but not
# echo hi (the call a failed checkpoint holds, which the test answers).
approve_but_echo() {
	grep "approval.needed" "$2" | grep -v "\"command\":\"echo hi\"" |
		sed "s/.*\"request_id\":\"\([^\"]*\)\".*/\\1/" |
		while read -r id; do $1 approve -t z --id "$id" allow; done >/dev/null 2>&1
	return 0
}

# Root reads a file of any mode: run as a user, as holt is run, a file the
# agent made mode 000 cannot be read, so no checkpoint can be taken.
test_expect_success BWRAP,ROOT,TMUX 'a file made mode 000: no checkpoint, said in the log and the screen, the call asks' '
	command -v setpriv >/dev/null &&
	u=$(mktemp -d) && chown 65534:65534 "$u" && chmod 755 "$u" &&
	nr="setpriv --reuid 65534 --regid 65534 --clear-groups env HOME=$u HOLT_HOME=$u/home $HOLT_BUILD_DIR/holt -L nr" &&
	test_when_finished "tui_stop; for s in \$(ls $u/home/data/sandboxes 2>/dev/null); do $nr sandbox rm \$s >/dev/null 2>&1; done; $nr kill-server; rm -rf $u" &&
	cat >"$u/z.json" <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "write_file", "arguments": { "path": "locked", "content": "secret\n" } } ] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "chmod 000 locked" } } ] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "echo hi" } } ] },
	  { "text": "done", "tool_calls": [] } ] }
	EOF
	chmod 644 "$u/z.json" &&
	$nr new -d -s z --mode auto --model script:$u/z.json "lock a file" &&
	log=$u/home/data/sessions/z/events.jsonl &&
	test_wait_for 300 "grep -q \"checkpoint before run_command failed\" $log ||
		{ approve_but_echo \"$nr\" $log; false; }" &&
	test_wait_for 300 "$nr ls | grep \"^z .*waiting\"" &&
	$nr log -t z >text &&
	grep "error: checkpoint before run_command failed: cannot read .workspace/locked.: Permission denied" text &&
	events_of "$log" approval.needed | tail -n 1 >ask &&
	grep "no checkpoint could be taken" ask && grep "echo hi" ask &&
	! grep "echo hi" "$u"/home/data/sandboxes/sbx-*/workspace/* 2>/dev/null &&
	TUI_CMD="$nr attach" &&
	tui_start tz -t z &&
	tui_wait tz "checkpoint before run_command failed" 100 &&
	tui_wait tz "echo hi" &&
	tui_keys tz C-b d &&
	$nr approve -t z allow &&
	test_wait_for 300 "$nr log -t z | grep \"run finished: done\""
'

test_done
