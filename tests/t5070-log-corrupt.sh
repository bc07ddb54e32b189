#!/bin/sh
# A damaged events.jsonl is never read as a shorter history, nor replaced
# by a fresh empty one: NUL bytes in a line, two lines glued together, a
# missing or empty log are errors naming the file (and line); a repeated
# seq is a warning the user sees in the session.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

SOCK=$HOLT_HOME/run/$HOLT_SOCKET
PROTO="python3 $TEST_DIRECTORY/proto-client.py"
SESS=$HOLT_HOME/data/sessions

# damage NAME PYTHON: a copy of session "base" as NAME, its log's lines
# (a list of bytes, "lines") changed by the Python statement.
damage() {
	cp -r "$SESS/base" "$SESS/$1" &&
	rm -f "$SESS/$1/lock" &&
	python3 -c "
import sys
path = sys.argv[1]
lines = open(path, 'rb').read().split(b'\n')[:-1]
$2
open(path, 'wb').write(b''.join(l + b'\n' for l in lines))
" "$SESS/$1/events.jsonl"
}

test_expect_success BWRAP,PYTHON 'setup: a session, then damaged copies of it' '
	echo "{ \"turns\": [ { \"text\": \"first done\", \"tool_calls\": [] } ] }" >s.json &&
	holt new -d -s base --model script:s.json "hi" &&
	test_wait_for 100 "holt log -t base | grep \"run finished\"" &&
	holt kill-server &&
	damage nul "lines[1] = lines[1][:20] + b\"\\0\\0\\0\\0\" + lines[1][20:]" &&
	damage zeros "lines[1] = lines[1] + b\"\\0\" * 40" &&
	damage glued "lines[1:3] = [lines[1] + lines[2]]" &&
	damage dup "lines.insert(2, lines[1])" &&
	damage missing "pass" && rm "$SESS/missing/events.jsonl" &&
	damage empty "lines[:] = []" &&
	holt ls >ls && cat ls
' && test_set_prereq DAMAGED

test_expect_success DAMAGED 'NUL bytes in a line: an error naming the file and line' '
	grep "^nul  *error .*nul/events.jsonl:2: corrupt event log line (NUL bytes)" ls &&
	grep "^zeros  *error .*zeros/events.jsonl:2: corrupt event log line (NUL bytes)" ls
'

test_expect_success DAMAGED 'two lines glued together: an error, not the first alone' '
	grep "^glued  *error .*glued/events.jsonl:2: corrupt event log line (more than one event" ls
'

test_expect_success DAMAGED 'a missing or empty log: an error, and no fresh log made' '
	grep "^missing  *error .*missing/events.jsonl: missing" ls &&
	! test -e "$SESS/missing/events.jsonl" &&
	grep "^empty  *error .*empty/events.jsonl: empty" ls &&
	! test -s "$SESS/empty/events.jsonl"
'

test_expect_success DAMAGED 'attach to a damaged session says why' '
	for s in nul glued missing; do
		$PROTO --until error "$SOCK" send "{\"type\":\"hello\",\"version\":1}" \
			"{\"type\":\"attach\",\"session\":\"$s\"}" >attach.$s || return 1
	done &&
	grep "nul/events.jsonl:2: corrupt" attach.nul &&
	grep "glued/events.jsonl:2: corrupt" attach.glued &&
	grep "missing/events.jsonl: missing" attach.missing &&
	test_expect_code 1 holt send -t glued more 2>err &&
	grep "glued/events.jsonl:2" err
'

test_expect_success DAMAGED 'a repeated seq: the session opens and the user is told' '
	grep "^dup  *finished" ls &&
	holt log -t dup >log &&
	grep "dup/events.jsonl:3: seq 2 repeats" log
'

# The sandbox side: its processes keep running until stopped, whatever
# became of its meta.json.
for how in missing corrupt; do
	test_expect_success BWRAP "a sandbox whose meta.json is $how can be stopped and removed" "
		holt sandbox create --name m-$how >id &&
		id=\$(tail -n 1 id) &&
		dir=\$HOLT_HOME/data/sandboxes/\$id &&
		holt sandbox exec \$id -- true &&
		pid=\$(cat \$dir/run/*.pid 2>/dev/null | head -n 1) &&
		if test $how = missing; then rm \$dir/meta.json; else echo '{not json' >\$dir/meta.json; fi &&
		test_must_fail holt sandbox exec \$id -- true &&
		holt sandbox stop \$id 2>err &&
		grep 'meta.json' err &&
		{ test -z \"\$pid\" || test_wait_for 50 \"! kill -0 \$pid\"; } &&
		! pgrep -f \"holt-envd .*--id \$id\" &&
		holt sandbox rm \$id &&
		! test -d \$dir
	"
done

test_done
