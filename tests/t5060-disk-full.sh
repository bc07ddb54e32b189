#!/bin/sh
# A full disk, for real: HOLT_HOME on a small tmpfs, filled up. A write to
# the log that fails is an error to whoever asked, the session says "error:
# disk full" and takes no work, a partial line is cut back, and once space
# returns the session goes on by itself with no gap in its log.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

# Stop what runs on the small disk before it goes away.
release_disk() {
	holt kill-server
	for s in "$HOLT_HOME"/data/sandboxes/sbx-*; do
		[ -d "$s" ] && holt sandbox stop "${s##*/}"
	done
	umount "$HOLT_HOME" || umount -l "$HOLT_HOME"
}

# Fill the disk to the last byte; removing "spare" then frees one page.
fill_disk() {
	dd if=/dev/zero of="$HOLT_HOME/spare" bs=4096 count=1 2>/dev/null &&
	{ dd if=/dev/zero of="$HOLT_HOME/fill" bs=64k 2>/dev/null; true; } &&
	{ dd if=/dev/zero of="$HOLT_HOME/fill2" bs=512 2>/dev/null; true; }
}

free_disk() {
	rm -f "$HOLT_HOME/fill" "$HOLT_HOME/fill2" "$HOLT_HOME/spare"
}

# The log is whole: every line JSON, seq 1, 2, 3 ... with no gap.
log_whole() {
	python3 -c "
import json, sys
seqs = [json.loads(l)['seq'] for l in open(sys.argv[1], 'rb')]
assert seqs == list(range(1, len(seqs) + 1)), seqs
" "$(session_log "$1")"
}

# Unmounted when the script ends (a test's own cleanup would end it at once).
test_when_finished release_disk

test_expect_success ROOT,BWRAP,PYTHON 'setup: HOLT_HOME on a 160 MB tmpfs' '
	mount -t tmpfs -o size=160m,mode=0700 holt-test "$HOLT_HOME" &&
	write_policy &&
	cat >d.json <<-\EOF &&
	{ "turns": [
	  { "text": "first done", "tool_calls": [] },
	  { "text": "second done", "tool_calls": [] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "sleep 3; seq 100000 103000; echo slept" } } ] },
	  { "text": "third done", "tool_calls": [] } ] }
	EOF
	holt new -d -s d --model script:d.json "first" >/dev/null &&
	test_wait_for 100 "holt log -t d | grep \"first done\""
' && test_set_prereq DISK

# One page free: the line is written in part, then cut back.
test_expect_success DISK 'a message that cannot be logged is refused, nothing of it kept' '
	fill_disk &&
	rm "$HOLT_HOME/spare" &&
	cp "$(session_log d)" before &&
	big=$(head -c 40000 /dev/zero | tr "\\0" a) &&
	test_expect_code 1 holt send -t d "$big" 2>err &&
	cat err &&
	grep "disk full: .*events.jsonl: No space left on device" err &&
	grep "goes on by itself" err &&
	cmp before "$(session_log d)" &&
	test_expect_code 1 holt send -t d "small" &&
	holt ls >ls && cat ls &&
	grep "^d  *error .*disk full" ls &&
	log_whole d
'

test_expect_success DISK 'space returns: the session takes work again' '
	free_disk &&
	test_wait_for 30 "holt ls | grep \"^d  *finished\"" &&
	holt send -t d "second" &&
	test_wait_for 100 "holt log -t d | grep \"second done\"" &&
	! grep -q aaaaaaaa "$(session_log d)" &&
	log_whole d
'

test_expect_success DISK 'the disk fills while a command runs: the run waits, then goes on' '
	holt send -t d "third" &&
	test_wait_for 100 "holt log -t d | grep \"tool started\|run_command\"" &&
	fill_disk &&
	test_wait_for 100 "holt ls | grep \"^d  *error .*disk full\"" &&
	! grep 102999 "$(session_log d)" &&
	free_disk &&
	test_wait_for 100 "holt log -t d | grep \"third done\"" &&
	grep 102999 "$(session_log d)" &&
	log_whole d &&
	holt ls | grep "^d  *finished"
'

test_done
