#!/bin/sh
# holt policy check, show and suggest: the command line, its output, its exit
# statuses, and where rules come from.
. "$(dirname "$0")/lib.sh"

mkdir -p "$HOLT_HOME/config"
cat >"$HOLT_HOME/config/policy" <<'P'
allow  ^npm (test|ci|run [\w:-]+)$
deny   ^(curl|wget|nc|ssh|scp)(\s|$)
write-deny  ^tests/            # paths the agent may not write
P

test_expect_success 'an allowed command exits 0 and names rule and source' '
	holt policy check -- npm test >out &&
	grep "^allow (auto mode)" out &&
	grep "^  allow  npm test" out &&
	grep "allow \^npm (test|ci|run \[\\\\w:-\]+)\$  (user:1)" out
'

test_expect_success 'ask exits 10, deny exits 11, each part listed' '
	test_expect_code 10 holt policy check -- npm install >out &&
	grep "^ask" out &&
	test_expect_code 11 holt policy check -- "npm test && curl x | sh" >out &&
	grep "^deny (auto mode): curl x: denied by a rule" out &&
	grep "^  allow  npm test" out &&
	grep "^  deny   curl x" out &&
	grep "^  ask    sh" out
'

test_expect_success 'the words after -- are the command line' '
	test_expect_code 11 holt policy check -- npm test "&&" curl x
'

test_expect_success '--json has the shape of DESIGN 5' '
	test_expect_code 11 holt policy check --json -- "ls; curl x" >out &&
	python3 - out <<-\PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["verdict"] == "deny", d
	assert d["mode"] == "auto", d
	p = d["parts"]
	assert [x["command"] for x in p] == ["ls", "curl x"], p
	assert [x["verdict"] for x in p] == ["allow", "deny"], p
	assert p[1]["rule"] == r"^(curl|wget|nc|ssh|scp)(\s|$)", p
	assert p[1]["source"] == "user" and p[1]["line"] == 2, p
	assert p[0]["source"] == "default", p
	keys = set(["command", "verdict", "rule", "source", "reason"])
	assert all(keys <= set(x) for x in p), p
	PY
'

test_expect_success 'modes: --mode and holt.conf' '
	test_expect_code 10 holt policy check --mode manual -- ls &&
	test_expect_code 11 holt policy check --mode strict -- npm install &&
	holt policy check --mode trust -- npm install &&
	test_expect_code 11 holt policy check --mode trust -- curl x &&
	test_expect_code 10 holt policy check --mode trust -- eval x &&
	mkdir -p h2/config &&
	echo "mode = strict" >h2/config/holt.conf &&
	HOLT_HOME=$PWD/h2 test_expect_code 11 holt policy check -- npm install >out &&
	grep "strict mode" out
'

test_expect_success 'an unknown mode is a usage error' '
	test_expect_code 2 holt policy check --mode yolo -- ls 2>err &&
	grep "mode .yolo.: unknown" err
'

test_expect_success 'a missing command is a usage error' '
	test_expect_code 2 holt policy check 2>err &&
	grep "a command is missing" err &&
	test_expect_code 2 holt policy frob 2>err &&
	grep "unknown subcommand .frob." err &&
	test_expect_code 2 holt policy 2>err
'

test_expect_success 'a bad user policy: exit 2, file, line and pcre2 message' '
	mkdir -p h3/config &&
	printf "allow ^ls\\ndeny ^(curl\\n" >h3/config/policy &&
	HOLT_HOME=$PWD/h3 test_expect_code 2 holt policy check -- ls 2>err &&
	grep "policy .*h3/config/policy.: line 2: bad pattern .^(curl.: missing closing parenthesis" err &&
	HOLT_HOME=$PWD/h3 test_expect_code 2 holt policy show 2>err &&
	grep "line 2" err
'

test_expect_success '--policy replaces the user file; a missing one is an error' '
	echo "deny ^npm" >p1 &&
	test_expect_code 11 holt policy check --policy p1 -- npm test >out &&
	grep "(p1:1)" out &&
	test_expect_code 10 holt policy check --policy p1 -- curl x >out &&
	test_expect_code 2 holt policy check --policy nope -- ls 2>err &&
	grep "policy .nope.: No such file" err
'

test_expect_success '--no-defaults drops the built-in rules' '
	holt policy check -- ls &&
	test_expect_code 10 holt policy check --no-defaults --policy /dev/null -- ls
'

test_expect_success 'session rules widen, workspace rules only tighten' '
	mkdir -p "$HOLT_HOME/data/sessions/s1" ws/.holt &&
	echo "allow ^cargo build$" >"$HOLT_HOME/data/sessions/s1/policy" &&
	test_expect_code 10 holt policy check -- cargo build &&
	holt policy check --session s1 -- cargo build >out &&
	grep "(session:1)" out &&
	echo "deny ^cargo" >ws/.holt/policy &&
	test_expect_code 11 holt policy check --session s1 --workspace ws -- cargo build >out &&
	grep "(workspace:1)" out &&
	echo "allow ^curl" >ws/.holt/policy &&
	test_expect_code 2 holt policy check --workspace ws -- ls 2>err &&
	grep "a workspace policy may only tighten: .allow. refused" err &&
	test_expect_code 2 holt policy check --session ../x -- ls 2>err &&
	grep "not a session name" err
'

test_expect_success '--write judges a file write' '
	holt policy check --write src/main.c &&
	test_expect_code 11 holt policy check --write tests/x.test.js &&
	test_expect_code 10 holt policy check --write ../outside >out &&
	grep "outside the workspace" out &&
	test_expect_code 10 holt policy check --mode manual --write src/main.c &&
	test_expect_code 2 holt policy check --write x -- ls
'

test_expect_success 'holt policy show lists the rules with their sources' '
	holt policy show >out &&
	grep "^# default: built in, read-only" out &&
	grep "^# user: .*config/policy" out &&
	grep -F "deny        ^(curl|wget|nc|ssh|scp)(\s|$)    # user:2" out &&
	grep -F "write-deny  ^tests/    # user:3" out
'

test_expect_success 'holt policy suggest proposes a narrow and a wider rule' '
	test_expect_code 1 holt policy suggest -- npm run test:unit >out 2>&1 &&
	grep "no rule can allow" out &&
	holt policy suggest -- cargo run bench:x >out &&
	cat >expect <<-\E &&
	allow ^cargo run bench:x$
	allow ^cargo run [\w:-]+$
	E
	test_cmp expect out &&
	test_expect_code 1 holt policy suggest -- "cargo build && curl x"
'

test_expect_success 'a suggested rule, added to the session, allows the command' '
	mkdir -p "$HOLT_HOME/data/sessions/s2" &&
	holt policy suggest -- make -j4 all | head -n 1 >"$HOLT_HOME/data/sessions/s2/policy" &&
	holt policy check --session s2 -- make -j4 all &&
	test_expect_code 10 holt policy check --session s2 -- make -j4 all install &&
	test_expect_code 11 holt policy check --session s2 -- "make -j4 all; curl x"
'

test_expect_success 'a 100 KB line is decided, deep nesting asks with a reason' '
	python3 -c "print(\"cat \" + \"a\" * 102400 + \" && curl x\")" >long &&
	test_expect_code 11 holt policy check -- "$(cat long)" >out &&
	grep "^deny (auto mode): curl x" out &&
	python3 -c "print(\"( \" * 2000 + \"ls\" + \" )\" * 2000)" >deep &&
	test_expect_code 10 holt policy check -- "$(cat deep)" >out &&
	grep "nesting deeper than 32 levels" out &&
	test_expect_code 11 holt policy check --mode strict -- "$(cat deep)"
'

test_expect_success 'control characters and lookalikes are never allowed' '
	test_expect_code 10 holt policy check -- "$(printf "ls\\033[2J")" >out &&
	grep "non-ASCII or control" out &&
	grep -F "ls\\x1b[2J" out &&
	! grep -q "$(printf "\\033")" out &&
	test_expect_code 10 holt policy check -- "$(printf "\\321\\201url x")" >out &&
	grep "lookalike" out &&
	test_expect_code 10 holt policy check --mode trust -- "$(printf "\\321\\201url x")"
'

test_expect_success 'holt policy --help and check --help' '
	holt policy --help >out &&
	grep "holt policy check" out &&
	holt policy check --help >out &&
	grep -- "--mode MODE" out
'

test_done
