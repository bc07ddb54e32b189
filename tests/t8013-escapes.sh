#!/bin/sh
# Names and text the agent or a repository made never reach the user's
# terminal raw: a file name with an OSC title sequence, a CSI, a C1 control
# and a bidi override, and the same in the agent's messages, commands and
# errors, come out of holt diff --stat, holt diff, holt log, holt ls,
# holt approve, holt sandbox ls / service ls / get as backslash escapes.
# Checked on the bytes (od): no ESC, BEL, CSI (U+009B) or RLO is printed.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/git-lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

EVIL=$(printf 'evil\033]2;pwned\007\033[2J\302\233\342\200\256name')

# The raw control bytes of $1, in hex, one a line; empty when clean.
raw_controls() {
	od -An -v -tx1 "$1" | tr " " "\n" | grep -v "^$" >bytes &&
	python3 - bytes <<-\EOF
	import sys
	b = bytes(int(x, 16) for x in open(sys.argv[1]).read().split())
	t = b.decode("utf-8", "replace")
	bad = [hex(ord(c)) for c in t
	    if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f
	    or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069]
	if bad:
	    print("\n".join(bad))
	EOF
}

clean() {
	raw_controls "$1" >bad &&
	if test -s bad; then echo "raw controls in $1:"; cat bad; cat -v "$1"; return 1; fi
}

test_expect_success 'setup: a repository and a file the agent named' '
	git init -q -b main src &&
	(cd src && echo a >a.txt && git add . && git commit -q -m base) &&
	git_session s1 "$TRASH_DIRECTORY/src" &&
	ws=$(git_ws s1) &&
	printf "x\033]52;c;cHduZWQ=\007y\n" >"$ws/$EVIL" &&
	echo b >>"$ws/a.txt"
'

test_expect_success 'holt diff --stat escapes the name' '
	holt diff -t s1 --stat >out &&
	clean out &&
	grep "evil\\\\033]2;pwned\\\\007\\\\033\\[2J\\\\302\\\\233\\\\342\\\\200\\\\256name *| *1 +" out &&
	grep "a.txt *| *1 +" out
'

test_expect_success 'holt diff --json keeps the name exact (JSON escapes it)' '
	holt diff -t s1 --json >out &&
	clean out &&
	python3 -c "import json,sys; d=json.load(open(\"out\")); print(\"\n\".join(f.get(\"path\") or f.get(\"new_path\") or \"\" for f in d[\"files\"]))" >names &&
	grep -F "$EVIL" names
'

test_expect_success 'holt diff names the file escaped' '
	holt diff -t s1 >out &&
	grep "^diff --git" out >headers &&
	clean headers
'

test_expect_success 'holt diff on a terminal escapes the content, in a pipe keeps it' '
	on_pty $HOLT diff -t s1 >tty.out &&
	grep -F "x\\033]52;c;cHduZWQ=\\007y" tty.out &&
	! grep "$(printf "\033]52")" tty.out &&
	holt diff -t s1 >pipe.out &&
	grep "$(printf "x\033]52;c;cHduZWQ=\007y")" pipe.out
'

test_expect_success BWRAP 'holt log and holt ls escape what the agent said and ran' '
	write_policy &&
	cat >evil.json <<-EOF &&
	{ "turns": [
	  { "text": "look \\u001b]2;pwned\\u0007 \\u009b31m here \\u202e", "tool_calls": [
	      { "name": "run_command", "arguments": { "command": "echo \\u001b]0;t\\u0007 out" } },
	      { "name": "read_file", "arguments": { "path": "no\\u001b[2Jsuch" } } ] },
	  { "text": "done", "tool_calls": [] } ] }
	EOF
	holt run -s s2 --model script:evil.json --headless go >events &&
	holt log -t s2 >out &&
	clean out &&
	grep "agent: look \\\\033]2;pwned\\\\007 \\\\302\\\\23331m here \\\\342\\\\200\\\\256" out &&
	grep "no\\\\033\\[2Jsuch" out &&
	holt ls >out &&
	clean out &&
	grep "^s2 " out
'

test_expect_success BWRAP 'sandbox service ls and errors of sandbox get escape' '
	sbx=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"sandbox\"])" \
		"$HOLT_HOME/data/sessions/s2/session.json") &&
	holt sandbox service "$sbx" create "$(printf "svc")" -- sh -c "$(printf "sleep 30 # \033]2;pwned\007")" &&
	holt sandbox service "$sbx" ls >out &&
	clean out &&
	grep "sleep 30 # \\\\033]2;pwned\\\\007" out &&
	holt sandbox exec "$sbx" -- sh -c "printf x >\"\$(printf \"f\\033]2;pwned\\007\")\"" &&
	test_must_fail holt sandbox get "$sbx" "$(printf "f\033]2;pwned\007/x")" - 2>err &&
	clean err &&
	grep "f\\\\033]2;pwned\\\\007" err &&
	holt sandbox ls >out &&
	clean out &&
	holt sandbox stop "$sbx"
'

test_done
