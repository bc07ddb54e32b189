#!/bin/sh
# The repository's own .holt/policy: it tightens; it cannot widen; a broken
# one or a link out of the workspace is reported and ignored, never fatal,
# and never makes holt read a host file.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

repo_with_policy() {
	make_repo "$1" &&
	mkdir -p "$1/.holt" &&
	printf "%s\n" "$2" >"$1/.holt/policy" &&
	(cd "$1" && git add .holt && git -c user.name=t -c user.email=t@e commit -q -m policy)
}

cat >ls.json <<\EOF
{ "turns": [
  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "ls" } } ] },
  { "text": "done", "tool_calls": [] } ] }
EOF

test_expect_success BWRAP 'a workspace deny rule tightens the policy' '
	repo_with_policy r1 "deny ^ls(\\s|$)" &&
	test_expect_code 4 holt run -s w1 --repo r1 --model script:ls.json --headless go >out &&
	events_of out approval.decided | grep "\"decision\":\"deny\""
'

test_expect_success BWRAP 'a workspace allow rule cannot widen: reported, ignored' '
	repo_with_policy r2 "allow ^curl" &&
	holt run -s w2 --repo r2 --model script:ls.json --headless go >out &&
	events_of out error | grep "workspace.s policy is ignored" &&
	tail -n 1 out | grep "\"reason\":\"done\""
'

test_expect_success BWRAP 'a link to a host file is not read' '
	echo "deny ^ls" >host-policy &&
	make_repo r3 && mkdir -p r3/.holt &&
	ln -s "$TRASH_DIRECTORY/host-policy" r3/.holt/policy &&
	(cd r3 && git add .holt && git -c user.name=t -c user.email=t@e commit -q -m link) &&
	holt run -s w3 --repo r3 --model script:ls.json --headless go >out &&
	events_of out error | grep "not a regular file inside the workspace" &&
	tail -n 1 out | grep "\"reason\":\"done\""
'

test_done
