#!/bin/sh
# holt e2b serve against the official E2B SDK (npm "e2b", pinned in
# tests/e2b-lib.sh): real JavaScript programs, written as a seed would
# write them, drive real sandboxes through E2B's API on loopback; one of
# them clones from a real git smart-HTTP server.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/e2b-lib.sh"
. "$TEST_DIRECTORY/git-lib.sh"

TOKEN=t9000token
command -v lighttpd >/dev/null 2>&1 && test_set_prereq HTTPD
test_when_finished 'e2b_stop; [ -f httpd/pid ] && kill $(cat httpd/pid)'
# The sandboxes reach the network through holt's proxy (the default): the
# git server's name, which the user's policy allows, is on the host's
# loopback, through the proxy's test-only hosts file.
echo "127.0.0.1 git.example.org" >proxy-hosts
HOLT_PROXY_HOSTS=$PWD/proxy-hosts
export HOLT_PROXY_HOSTS

test_expect_success 'holt e2b --help and bad arguments' '
	holt e2b --help >out &&
	grep "^usage: holt e2b serve \[--listen ADDR:PORT\]" out &&
	holt e2b serve --help >out &&
	grep "^usage: holt e2b" out &&
	test_expect_code 2 holt e2b frob 2>err &&
	grep "frob.: no such subcommand" err &&
	test_expect_code 1 holt e2b serve --listen nowhere 2>err &&
	grep "listen .nowhere.: use ADDR:PORT" err &&
	test_expect_code 2 holt e2b serve --mode lax 2>err
'

test_expect_success 'holt e2b key: made once, kept private' '
	holt e2b key >k1 &&
	holt e2b key >k2 &&
	test_cmp k1 k2 &&
	grep "^e2b_[0-9a-f]\{40\}$" k1 &&
	test "$(stat -c %a "$HOLT_HOME/config/e2b-key")" = 600
'

test_expect_success E2B,HTTPD 'setup: a repository on a git server, holt e2b serve' '
	mkdir -p srv &&
	git init -q -b main work &&
	echo "a repository for the seed" >work/README &&
	cat >work/package.json <<-\JSON &&
	{ "name": "seed", "version": "1.0.0",
	  "scripts": { "test": "echo tests pass" } }
	JSON
	git -C work add . &&
	git -C work commit -q -m seed &&
	git clone -q --bare work srv/seed.git &&
	sh "$TEST_DIRECTORY/git-http-server" srv "$TOKEN" httpd >port &&
	mkdir -p "$HOLT_HOME/config" &&
	echo "net-allow git.example.org" >"$HOLT_HOME/config/policy" &&
	e2b_serve
'

test_expect_success E2B,HTTPD 'the provisioning flow: create, clone, install' '
	e2b_js provision \
		"http://x-access-token:$TOKEN@git.example.org:$(cat port)/git/seed.git" \
		>ids &&
	read id pid <ids &&
	echo "$id" >id &&
	test -f "$HOLT_HOME/data/sandboxes/$id/meta.json" &&
	test -f "$HOLT_HOME/data/sandboxes/$id/home/repo/README" &&
	holt sandbox ls >ls &&
	grep "$id" ls &&
	holt sandbox ls --json >ls.json &&
	python3 -c "import json,sys
s = [x for x in json.load(open(\"ls.json\")) if x[\"id\"] == sys.argv[1]][0]
assert s[\"e2b\"] == {\"template\": \"base\", \"metadata\": {\"seed\": \"provision\", \"owner\": \"tests\"}}, s" "$id"
'

test_expect_success E2B,HTTPD 'a second process connects and drives it' '
	read id pid <ids &&
	e2b_js second "$id" "$pid" >second.out &&
	cat second.out &&
	test "$(tail -n 1 second.out)" = "all ok"
'

test_expect_success E2B,HTTPD 'files: text, binary, large, list, mkdir, mv, rm' '
	e2b_js files "$(cat id)" >files.out &&
	cat files.out &&
	test "$(tail -n 1 files.out)" = "all ok"
'

test_expect_success E2B,HTTPD 'a terminal (pty) and a directory watch (watchDir)' '
	e2b_js pty "$(cat id)" >pty.out &&
	cat pty.out &&
	test "$(tail -n 1 pty.out)" = "all ok"
'

test_expect_success E2B,HTTPD 'a client gone mid-stream leaves the command running' '
	id=$(cat id) &&
	e2b_js disconnect "$id" >pid &&
	e2b_js rejoin "$id" "$(cat pid)" >rejoin.out &&
	cat >expect <<-\EOF &&
	running true
	exit 0 last done
	EOF
	test_cmp expect rejoin.out
'

test_expect_success E2B,HTTPD 'pause, resume, timeout, kill, not found' '
	id=$(cat id) &&
	ls "$HOLT_HOME/data/sandboxes" >before &&
	e2b_js lifecycle "$id" "$HOLT_HOME/data/sandboxes/$id/home" >lifecycle.out &&
	cat lifecycle.out &&
	test "$(tail -n 1 lifecycle.out)" = "all ok" &&
	ls "$HOLT_HOME/data/sandboxes" >after &&
	sed "/$id/d" before >expect &&
	test_cmp expect after
'

test_done
