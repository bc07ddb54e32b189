# tests/lib-engine.sh: helpers for the agent engine's tests, after lib.sh.
#
# make_repo DIR: a small git repository with a failing unit test.
# write_policy: a fixed user policy, so verdicts do not depend on defaults.
# events_of FILE TYPE: the events of one type, one JSON per line.
# append_big_outputs NAME N: N logged tool.output events of 65000 bytes
#   appended to session NAME's log (the server stopped), for big snapshots.

make_repo() {
	mkdir -p "$1" &&
	(
		cd "$1" &&
		git init -q -b main . &&
		git config user.email t@example.com &&
		git config user.name tester &&
		printf 'def add(a, b):\n    return a - b\n' >calc.py &&
		printf 'hello\n' >README &&
		# No bytecode cache: an edit of the same size within the same
		# second as the last run would be read from a stale one.
		printf 'import sys\nsys.dont_write_bytecode = True\nimport calc\nassert calc.add(2, 3) == 5, "add is wrong"\nprint("ok")\n' >test_calc.py &&
		git add . &&
		git commit -q -m initial
	)
}

write_policy() {
	mkdir -p "$HOLT_HOME/config" &&
	cat >"$HOLT_HOME/config/policy" <<-\EOP
	allow ^(cat|ls|echo|true|sleep|wc|head|grep)(\s|$)
	allow ^python3 test_calc\.py$
	ask ^python3(\s|$)
	deny ^(curl|wget)(\s|$)
	EOP
}

events_of() {
	grep "\"type\":\"$2\"" "$1"
}

# The session directory's event log.
session_log() {
	echo "$HOLT_HOME/data/sessions/$1/events.jsonl"
}

# Count sandboxes on disk.
count_sandboxes() {
	ls "$HOLT_HOME/data/sandboxes" 2>/dev/null | grep -c '^sbx-'
}

append_big_outputs() {
	python3 - "$(session_log "$1")" "$2" <<-\EOF
	import json, sys
	path, n = sys.argv[1], int(sys.argv[2])
	seq = len(open(path).read().splitlines())
	with open(path, "a") as f:
	    for i in range(n):
	        seq += 1
	        f.write(json.dumps({"seq": seq, "ts": "2026-11-29T00:00:00.000Z",
	            "type": "tool.output", "call_id": "c%d" % i,
	            "stream": "stdout", "data": "x" * 65000}) + "\n")
	EOF
}
