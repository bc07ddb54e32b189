#!/bin/sh
# Importing the user's uncommitted work walks every path of the working
# tree one component at a time without following links: a tracked
# directory that became a link to a host directory full of secrets
# (d -> ~/.ssh) copies nothing of it into the sandbox, at any depth, with
# or without the link being ignored, through holt run --repo as through the
# import alone. A FIFO in the tree is skipped, never waited on.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/git-lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

SECRET=HOST-SECRET-5a9c

# No file below $1 holds the secret.
no_secret() {
	! grep -r "$SECRET" "$1"
}

# A repository with tracked d/id_rsa and a/b/c.txt, whose d and a then
# became links to the host's secrets.
linked_repo() {
	git init -q -b main "$1" &&
	(
		cd "$1" &&
		mkdir -p d a/b && echo public >d/id_rsa && echo c >a/b/c.txt &&
		echo x >x.txt && git add . && git commit -q -m base &&
		rm -rf d a &&
		ln -s "$TRASH_DIRECTORY/host/ssh" d &&
		ln -s "$TRASH_DIRECTORY/host/deep" a &&
		echo changed >x.txt
	)
}

test_expect_success 'setup: a host directory full of secrets' '
	mkdir -p host/ssh host/deep/b &&
	echo "$SECRET" >host/ssh/id_rsa &&
	echo "$SECRET" >host/ssh/config &&
	echo "$SECRET" >host/deep/b/c.txt
'

test_expect_success 'a tracked directory turned link: nothing of the host is copied' '
	linked_repo r1 &&
	git_tool import "$TRASH_DIRECTORY/r1" ws1 &&
	no_secret ws1 &&
	echo changed >expect && test_cmp expect ws1/x.txt &&
	test -h ws1/d && test -h ws1/a &&
	test "$(readlink ws1/d)" = "$TRASH_DIRECTORY/host/ssh"
'

test_expect_success 'the same with the link ignored (git sees only the deletion)' '
	linked_repo r2 &&
	printf "d\na\n" >r2/.git/info/exclude &&
	git -C r2 status --porcelain >st &&
	grep "^ D d/id_rsa" st && ! grep "^??" st &&
	git_tool import "$TRASH_DIRECTORY/r2" ws2 &&
	no_secret ws2 &&
	test ! -e ws2/d/id_rsa && test ! -e ws2/a/b/c.txt
'

test_expect_success 'staged changes below the link: the staged path is not read through it' '
	git init -q -b main r3 &&
	(
		cd r3 &&
		mkdir d && echo one >d/id_rsa && git add . && git commit -q -m base &&
		echo two >d/id_rsa && git add d/id_rsa &&
		rm -rf d && ln -s "$TRASH_DIRECTORY/host/ssh" d &&
		echo d >.git/info/exclude
	) &&
	git_tool import "$TRASH_DIRECTORY/r3" ws3 &&
	no_secret ws3
'

test_expect_success 'a FIFO in the working tree is skipped, the import goes on' '
	git init -q -b main r4 &&
	(cd r4 && echo a >a && git add a && git commit -q -m base &&
		mkfifo pipe && echo new >b) &&
	timeout 30 git-tool import "$TRASH_DIRECTORY/r4" ws4 &&
	test ! -e ws4/pipe &&
	echo new >expect && test_cmp expect ws4/b
'

test_expect_success 'a link to the repository itself is the user'"'"'s own: followed' '
	ln -s r1 r1-link &&
	git_tool import "$TRASH_DIRECTORY/r1-link" ws5 &&
	echo changed >expect && test_cmp expect ws5/x.txt &&
	no_secret ws5
'

test_expect_success BWRAP 'holt run --repo: the sandbox sees no secret' '
	linked_repo r6 &&
	write_policy &&
	cat >look.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "cat d/id_rsa a/b/c.txt x.txt" } } ] },
	  { "text": "done", "tool_calls": [] } ] }
	EOF
	holt run -s s6 --repo r6 --model script:look.json --headless go >out &&
	! grep "$SECRET" out &&
	events_of out tool.finished | grep changed &&
	no_secret "$HOLT_HOME/data/sandboxes"
'

test_done
