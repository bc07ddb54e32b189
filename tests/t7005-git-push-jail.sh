#!/bin/sh
# The push runs in a jail: a child in its own user and mount namespaces
# whose root holds the workspace, the system (/usr, /etc) and what the
# network needs, nothing else. A workspace repository that points libgit2
# at a host object store (alternates, a symlinked objects directory) cannot
# make the push read it or send it; the token reaches the child over a pipe,
# never through its environment, and is written nowhere. holt pr --local
# runs in the same jail, with the target repository's git directory.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/git-lib.sh"

TOKEN=tok_$(date +%s)_jail9Q
SECRET=HOST-SECRET-7c3e
if command -v lighttpd >/dev/null 2>&1 && [ -x "$(git --exec-path)/git-http-backend" ]; then
	test_set_prereq HTTPD
else
	say "lighttpd or git-http-backend missing: the push tests are skipped"
fi
if command -v strace >/dev/null 2>&1 && strace -o /dev/null true 2>/dev/null; then
	test_set_prereq STRACE
else
	say "strace is missing or not allowed: the file-access trace is skipped"
fi
if unshare -Urm true 2>/dev/null; then
	test_set_prereq USERNS
else
	say "no user namespaces here: the push runs unconfined, jail tests skipped"
fi

# A commit that exists only in a host repository outside the workspace: the
# workspace's HEAD plus secret.txt. Prints its id.
host_secret_commit() {
	rm -rf hostrepo &&
	git clone -q "$1" hostrepo &&
	(
		cd hostrepo && echo "$SECRET" >secret.txt && git add secret.txt &&
		git commit -q -m "host secret" && git rev-parse HEAD
	)
}

test_expect_success HTTPD 'setup: a repository served over smart HTTP, a session' '
	git init -q -b main work &&
	(cd work && seq 1 20 >a.txt && git add . && git commit -q -m one) &&
	mkdir -p srv/o &&
	git clone -q --bare work srv/o/proj.git &&
	git -C srv/o/proj.git config http.receivepack true &&
	sh "$TEST_DIRECTORY/git-http-server" srv "$TOKEN" httpd >port &&
	test -s port &&
	echo "$SECRET" >host-secret.txt
'
PORT=$(cat port 2>/dev/null)
URL=http://127.0.0.1:$PORT/git/o/proj.git
test_when_finished 'kill $(cat "$TRASH_DIRECTORY/httpd/pid")'

test_expect_success HTTPD 'holt pr pushes from the jail, with no warning' '
	HOLT_GIT_TOKEN=$TOKEN git_session s1 "$URL" main &&
	ws=$(git_ws s1) &&
	echo change >>"$ws/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN HOLT_GITHUB_API=http://127.0.0.1:1 \
		test_expect_code 1 holt pr -t s1 --title jailed 2>err &&
	grep "could not reach" err &&
	! grep -i "unconfined\|cannot confine" err &&
	git -C srv/o/proj.git log -1 --format=%s holt/s1 >subject &&
	echo jailed >expect && test_cmp expect subject
'

test_expect_success HTTPD,USERNS 'a running push sees the workspace and the system only; its environment holds no token' '
	stall_server stallport 30 &&
	test_when_finished "kill $stallpid" &&
	test_wait_for 50 "test -s stallport" &&
	HOLT_GIT_TOKEN=$TOKEN git_session s2 "$URL" main &&
	sed -i "s|127.0.0.1:$PORT|127.0.0.1:$(cat stallport)|" \
		"$HOLT_HOME/data/sessions/s2/session.json" &&
	ws=$(git_ws s2) &&
	echo stall >>"$ws/a.txt" &&
	{ HOLT_GIT_TIMEOUT=20 HOLT_GIT_TOKEN=$TOKEN holt pr -t s2 >/dev/null 2>prerr & } &&
	prpid=$! &&
	test_when_finished "kill $prpid" &&
	: the push child is the leaf whose root holds the workspace &&
	test_wait_for 100 "descendants $prpid >pids &&
		for p in \$(cat pids); do
			test -e /proc/\$p/root$ws/a.txt && test \$p != $prpid &&
			echo \$p >child && break
		done; test -s child" &&
	child=$(cat child) &&
	holtpid=$(sed "s/.*) //" /proc/$child/stat | cut -d" " -f2) &&
	: the control: the holt process that forked it has the token &&
	grep -a -F -q "$TOKEN" /proc/$holtpid/environ &&
	! grep -a -F -q "$TOKEN" /proc/$child/environ &&
	! grep -a -q "HOLT_GIT_TOKEN" /proc/$child/environ &&
	test -d /proc/$child/root/usr/bin &&
	test ! -e /proc/$child/root$TRASH_DIRECTORY/host-secret.txt &&
	test ! -e /proc/$child/root$TRASH_DIRECTORY/work &&
	test ! -e /proc/$child/root$HOLT_HOME/data/sessions &&
	test ! -e /proc/$child/root$HOLT_HOME/config &&
	ls -A /proc/$child/root$HOLT_HOME/data >seen &&
	echo sandboxes >expect && test_cmp expect seen &&
	: and it cannot be written, but for the workspace &&
	test_must_fail touch /proc/$child/root/new-file 2>/dev/null
'

test_expect_success HTTPD 'alternates to a host object store: holt pr refuses, nothing sent' '
	ws=$(git_ws s1) &&
	secret=$(host_secret_commit "$ws") &&
	echo "$TRASH_DIRECTORY/hostrepo/.git/objects" >"$ws/.git/objects/info/alternates" &&
	git -C "$ws" update-ref refs/heads/main "$secret" &&
	HOLT_GIT_TOKEN=$TOKEN HOLT_GITHUB_API=http://127.0.0.1:1 \
		test_expect_code 1 holt pr -t s1 --branch alt 2>err &&
	grep "objects/info/alternates points outside the workspace (refused" err &&
	test_must_fail git -C srv/o/proj.git rev-parse -q --verify refs/heads/alt &&
	test_must_fail git -C srv/o/proj.git cat-file -e "$secret"
'

test_expect_success HTTPD,USERNS 'alternates, with the checks off: the jail alone keeps the host store out' '
	ws=$(git_ws s1) &&
	secret=$(git -C hostrepo rev-parse HEAD) &&
	HOLT_GIT_TOKEN=$TOKEN test_must_fail git_tool push -u "$ws" "$secret" alt "$URL" 2>err &&
	grep "commit .$secret.: not in the workspace" err &&
	! grep -i "unconfined" err &&
	test_must_fail git -C srv/o/proj.git rev-parse -q --verify refs/heads/alt &&
	test_must_fail git -C srv/o/proj.git cat-file -e "$secret"
'

test_expect_success HTTPD 'control: unconfined and unchecked, the same push leaks the host object' '
	ws=$(git_ws s1) &&
	secret=$(git -C hostrepo rev-parse HEAD) &&
	HOLT_GIT_NO_JAIL=1 HOLT_GIT_TOKEN=$TOKEN git_tool push -u "$ws" "$secret" leak "$URL" &&
	git -C srv/o/proj.git show leak:secret.txt >leaked &&
	echo "$SECRET" >expect && test_cmp expect leaked &&
	git -C srv/o/proj.git update-ref -d refs/heads/leak &&
	git -C srv/o/proj.git reflog expire --expire=now --all &&
	git -C srv/o/proj.git gc -q --prune=now &&
	test_must_fail git -C srv/o/proj.git cat-file -e "$secret"
'

test_expect_success HTTPD,USERNS 'packs symlinked to a host store, with the checks off: the jail keeps them out' '
	ws=$(git_ws s1) &&
	rm "$ws/.git/objects/info/alternates" &&
	secret=$(git -C hostrepo rev-parse HEAD) &&
	git -C hostrepo repack -q -a -d &&
	for f in hostrepo/.git/objects/pack/pack-*.idx hostrepo/.git/objects/pack/pack-*.pack; do
		ln -s "$TRASH_DIRECTORY/$f" "$ws/.git/objects/pack/" || return 1
	done &&
	HOLT_GIT_TOKEN=$TOKEN test_must_fail holt pr -t s1 --branch link 2>err &&
	grep ".git holds a symlink (refused)" err &&
	HOLT_GIT_TOKEN=$TOKEN test_must_fail git_tool push -u "$ws" "$secret" link "$URL" 2>err &&
	grep "not in the workspace" err &&
	test_must_fail git -C srv/o/proj.git rev-parse -q --verify refs/heads/link &&
	test_must_fail git -C srv/o/proj.git cat-file -e "$secret" &&
	: control: unconfined, the links are followed &&
	HOLT_GIT_NO_JAIL=1 HOLT_GIT_TOKEN=$TOKEN git_tool push -u "$ws" "$secret" link "$URL" &&
	git -C srv/o/proj.git cat-file -e "$secret" &&
	git -C srv/o/proj.git update-ref -d refs/heads/link &&
	git -C srv/o/proj.git reflog expire --expire=now --all &&
	git -C srv/o/proj.git gc -q --prune=now &&
	find "$ws/.git/objects/pack" -type l -exec rm {} + &&
	git -C "$ws" update-ref refs/heads/main holt/s1
'

test_expect_success HTTPD,USERNS,STRACE 'the traced push opens nothing of the host store, and chroots' '
	ws=$(git_ws s1) &&
	echo "$TRASH_DIRECTORY/hostrepo/.git/objects" >"$ws/.git/objects/info/alternates" &&
	secret=$(git -C hostrepo rev-parse HEAD) &&
	HOLT_GIT_TOKEN=$TOKEN test_must_fail strace -f -s 4096 -e trace=%file,%process -o trace \
		"$GIT_TOOL" push -u "$ws" "$secret" traced "$URL" 2>err &&
	grep "commit .$secret.: not in the workspace" err &&
	grep "chroot(\"[^\"]*\") *= 0" trace &&
	: libgit2 looked for the store, in the jail, and did not find it &&
	grep -F "\"$TRASH_DIRECTORY/hostrepo/.git/objects\"" trace | grep "= -1 ENOENT" &&
	! grep -F "$TRASH_DIRECTORY/hostrepo" trace | grep -v "= -1 ENOENT" &&
	test_must_fail git -C srv/o/proj.git cat-file -e "$secret" &&
	rm "$ws/.git/objects/info/alternates"
'

# holt pr --local: the same jail, with the target repository's git
# directory bound in (read-write) and the workspace read-only.
test_expect_success 'setup: a session from a local repository' '
	git init -q -b main local &&
	(cd local && seq 1 5 >l.txt && git add . && git commit -q -m one) &&
	git_session l1 "$TRASH_DIRECTORY/local" main &&
	echo "$SECRET" >>host-secret.txt
'

test_expect_success 'holt pr --local pushes from the jail, with no warning' '
	ws=$(git_ws l1) &&
	echo change >>"$ws/l.txt" &&
	holt pr -t l1 --local --title jailed 2>err &&
	! grep -i "unconfined\|cannot confine" err &&
	git -C local log -1 --format=%s holt/l1 >subject &&
	echo jailed >expect && test_cmp expect subject &&
	git -C local rev-parse HEAD >head &&
	git -C local rev-parse main >expect && test_cmp expect head &&
	git -C local fsck --no-dangling --connectivity-only
'

test_expect_success 'holt pr --local: alternates to a host object store are refused, nothing copied' '
	ws=$(git_ws l1) &&
	secret=$(host_secret_commit "$ws") &&
	echo "$TRASH_DIRECTORY/hostrepo/.git/objects" >"$ws/.git/objects/info/alternates" &&
	test_expect_code 1 holt pr -t l1 --local --branch alt 2>err &&
	grep "objects/info/alternates points outside the workspace (refused" err &&
	test_must_fail git -C local rev-parse -q --verify refs/heads/alt &&
	test_must_fail git -C local cat-file -e "$secret"
'

test_expect_success USERNS 'the local push, with the checks off: the jail alone keeps the host store out' '
	ws=$(git_ws l1) &&
	secret=$(git -C hostrepo rev-parse HEAD) &&
	test_must_fail git_tool push-local -u "$ws" "$secret" alt "$TRASH_DIRECTORY/local" 2>err &&
	grep "commit .$secret.: not in the workspace" err &&
	! grep -i "unconfined" err &&
	test_must_fail git -C local rev-parse -q --verify refs/heads/alt &&
	test_must_fail git -C local cat-file -e "$secret" &&
	: but what the workspace has goes through &&
	git_tool push-local -u "$ws" HEAD ok "$TRASH_DIRECTORY/local" &&
	git -C local rev-parse ok >pushed &&
	git -C "$ws" rev-parse HEAD >expect && test_cmp expect pushed
'

test_expect_success 'control: the local push unconfined and unchecked leaks the host object' '
	ws=$(git_ws l1) &&
	secret=$(git -C hostrepo rev-parse HEAD) &&
	HOLT_GIT_NO_JAIL=1 git_tool push-local -u "$ws" "$secret" leak "$TRASH_DIRECTORY/local" &&
	git -C local show leak:secret.txt >leaked &&
	echo "$SECRET" >expect && test_cmp expect leaked &&
	git -C local update-ref -d refs/heads/leak &&
	git -C local reflog expire --expire=now --all &&
	git -C local gc -q --prune=now &&
	test_must_fail git -C local cat-file -e "$secret"
'

test_expect_success USERNS,STRACE 'the traced local push opens nothing of the host store, and chroots' '
	ws=$(git_ws l1) &&
	secret=$(git -C hostrepo rev-parse HEAD) &&
	test_must_fail strace -f -s 4096 -e trace=%file,%process -o ltrace \
		"$GIT_TOOL" push-local -u "$ws" "$secret" traced "$TRASH_DIRECTORY/local" 2>err &&
	grep "commit .$secret.: not in the workspace" err &&
	grep "chroot(\"[^\"]*\") *= 0" ltrace &&
	grep -F "\"$TRASH_DIRECTORY/hostrepo/.git/objects\"" ltrace | grep "= -1 ENOENT" &&
	! grep -F "$TRASH_DIRECTORY/hostrepo" ltrace | grep -v "= -1 ENOENT" &&
	test_must_fail git -C local cat-file -e "$secret" &&
	rm "$ws/.git/objects/info/alternates"
'

test_expect_success HTTPD 'nothing of the session, the sandbox or the trash holds the token' '
	: the test server password file aside &&
	! grep -r -a -l -F "$TOKEN" "$HOLT_HOME" . --exclude-dir=httpd &&
	b64=$(printf "x-access-token:%s" "$TOKEN" | base64) &&
	! grep -r -a -l -F "$b64" "$HOLT_HOME" . --exclude-dir=httpd
'

test_done
