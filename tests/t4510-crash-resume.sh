#!/bin/sh
# Durability: kill -9 of holt run at 20 points of a scripted run (mid model
# stream, mid command, mid write, between steps); each time --resume carries
# the run to its end in the same sandbox, no finished tool result is lost or
# repeated, the log parses, and no command runs twice.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

test_expect_success BWRAP 'setup' '
	write_policy &&
	# The host image is made with the first sandbox: made now, so that
	# the kill points below fall in the runs, not in its copy.
	holt sandbox create --name warm >/dev/null &&
	holt sandbox rm warm &&
	big=$(head -c 60000 /dev/zero | tr "\0" "x") &&
	cat >crash.json <<-EOF
	{ "chunk_bytes": 4, "chunk_delay_ms": 15, "turns": [
	  { "delay_ms": 150, "text": "Step one, a long explanation of what I will do next.",
	    "tool_calls": [ { "name": "run_command", "arguments": { "command": "sleep 0.3; echo 1 >> progress" } } ] },
	  { "delay_ms": 100, "tool_calls": [ { "name": "write_file", "arguments": { "path": "big.txt", "content": "$big" } } ] },
	  { "delay_ms": 100, "tool_calls": [ { "name": "run_command", "arguments": { "command": "sleep 0.4; echo 2 >> progress" } },
	                                     { "name": "read_file", "arguments": { "path": "progress" } } ] },
	  { "delay_ms": 150, "tool_calls": [ { "name": "edit_file", "arguments": { "path": "big.txt", "old_string": "xxxxxxxxxx", "new_string": "y", "replace_all": true } } ] },
	  { "delay_ms": 100, "tool_calls": [ { "name": "run_command", "arguments": { "command": "sleep 0.3; echo 3 >> progress" } } ] },
	  { "delay_ms": 100, "text": "All done.", "tool_calls": [] } ] }
	EOF
'

check_log() {
	log=$(session_log "$1")
	# Every line is JSON with increasing seq (holt log --json refuses a
	# corrupt line), and the run finished.
	holt log -t "$1" --json >all || return 1
	tail -n 1 all | grep -q "\"type\":\"run.finished\",\"reason\":\"done\"" ||
		{ echo "$1: not finished"; tail -n 3 all; return 1; }
	seqs=$(sed -n "s/^{\"seq\":\([0-9]*\),.*/\1/p" all)
	test "$(echo "$seqs" | sort -n | uniq | wc -l)" = "$(wc -l <all)" ||
		{ echo "$1: seq repeated"; return 1; }
	test "$(echo "$seqs" | tail -n 1)" = "$(wc -l <all)" ||
		{ echo "$1: seq not 1..n"; return 1; }
	# Each call finished exactly once, started at most once.
	for id in $(events_of all tool.call | sed -n "s/.*\"call_id\":\"\([^\"]*\)\".*/\1/p" | sort -u); do
		f=$(events_of all tool.finished | grep -c "\"call_id\":\"$id\"")
		s=$(events_of all tool.started | grep -c "\"call_id\":\"$id\"")
		test "$f" = 1 || { echo "$1: $id finished $f times"; return 1; }
		test "$s" -le 1 || { echo "$1: $id started $s times"; return 1; }
	done
	test "$(events_of all assistant.message | wc -l)" -ge 6 ||
		{ echo "$1: turns missing"; return 1; }
	n=$(grep -l "\"name\":[[:space:]]*\"$1\"" "$HOLT_HOME"/data/sandboxes/*/meta.json | wc -l)
	test "$n" = 1 || { echo "$1: $n sandboxes"; return 1; }
}

i=1
for delay in 0.05 0.15 0.25 0.35 0.45 0.55 0.65 0.75 0.85 0.95 \
	     1.05 1.15 1.3 1.45 1.6 1.75 1.9 2.1 2.3 2.6; do
	test_expect_success BWRAP "kill -9 after ${delay}s, then resume" "
		($HOLT run -s c$i --model script:crash.json --headless go >run1.out 2>&1 &
		 echo \$! >pid) &&
		sleep $delay &&
		test_might_fail kill -9 \$(cat pid) 2>/dev/null &&
		# Dead, its lock released (a loaded machine takes its time).
		test_wait_for 100 \"! kill -0 \$(cat pid)\" &&
		if ! test -f \"$HOLT_HOME/data/sessions/c$i/session.json\"; then
			# killed before the session existed: nothing to resume
			rm -rf \"$HOLT_HOME/data/sessions/c$i\"
		else
			if ! tail -n 1 \"\$(session_log c$i)\" | grep -q run.finished; then
				holt run --resume c$i --headless >run2.out 2>&1 ||
					{ cat run2.out; false; }
			fi &&
			check_log c$i
		fi
	"
	i=$((i + 1))
done

# A command killed mid-run is re-joined by its pid (t4517), never run again:
# in every sandbox each "echo N >> progress" left at most one line.
test_expect_success BWRAP 'no command ran twice, however the runs were killed' '
	for p in "$HOLT_HOME"/data/sandboxes/*/workspace/progress; do
		test -z "$(sort "$p" | uniq -d)" ||
			{ echo "$p: a command ran twice"; cat "$p"; exit 1; }
	done &&
	cat "$HOLT_HOME"/data/sessions/c*/events.jsonl | grep -c "\"type\":\"tool.running\"" >n &&
	ls -d "$HOLT_HOME"/data/sessions/c* | wc -l >sessions &&
	test $(cat sessions) -ge 15 &&
	test $(cat n) -ge $(cat sessions)
'

test_done
