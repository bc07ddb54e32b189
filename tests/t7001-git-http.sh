#!/bin/sh
# Real git over real smart HTTP: git http-backend behind lighttpd with basic
# auth that requires the token. Clone (token only through libgit2's
# credential callback), push, a rejected push, refused tokens, the network
# down, and a workspace whose config tries to send the push elsewhere. A
# shallow clone (--depth; made by git where libgit2 is older than 1.7, the
# token through a pipe only) and holt diff, commit and pr on it.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/git-lib.sh"

TOKEN=tok_$(date +%s)_Zq7xW
if command -v lighttpd >/dev/null 2>&1 && [ -x "$(git --exec-path)/git-http-backend" ]; then
	test_set_prereq HTTPD
else
	say "lighttpd or git-http-backend missing: the HTTP tests are skipped"
fi
test_expect_success HTTPD 'setup: a repository served over smart HTTP' '
	git init -q -b main work &&
	(
		cd work && seq 1 20 >a.txt && echo one >b.txt &&
		git add . && git commit -q -m one &&
		git checkout -q -b dev && echo dev >dev.txt && git add dev.txt &&
		git commit -q -m dev && git checkout -q main
	) &&
	mkdir -p srv/o &&
	git clone -q --bare work srv/o/proj.git &&
	git -C srv/o/proj.git config http.receivepack true &&
	sh "$TEST_DIRECTORY/git-http-server" srv "$TOKEN" httpd >port &&
	test -s port
'
PORT=$(cat port 2>/dev/null)
URL=http://127.0.0.1:$PORT/git/o/proj.git
test_when_finished 'kill $(cat "$TRASH_DIRECTORY/httpd/pid")'

test_expect_success HTTPD 'the server itself wants the token' '
	test_must_fail git ls-remote "$URL" </dev/null 2>err &&
	git ls-remote "http://x-access-token:$TOKEN@127.0.0.1:$PORT/git/o/proj.git" >refs &&
	grep refs/heads/main refs
'

test_expect_success HTTPD 'clone with the token from HOLT_GIT_TOKEN, with progress' '
	HOLT_GIT_TOKEN=$TOKEN git_tool import "$URL" ws1 -p >base 2>progress &&
	test "$(cat base)" = "$(git -C work rev-parse main)" &&
	grep "receiving objects: [0-9]*/[0-9]*" progress &&
	test_cmp work/a.txt ws1/a.txt &&
	git -C ws1 config remote.origin.url >url &&
	echo "$URL" >expect && test_cmp expect url &&
	! grep -r -a -F "$TOKEN" ws1
'

test_expect_success HTTPD 'GITHUB_TOKEN works too; --branch picks the branch' '
	GITHUB_TOKEN=$TOKEN git_tool import "$URL" ws2 -b dev >base &&
	test "$(cat base)" = "$(git -C work rev-parse dev)" &&
	test -f ws2/dev.txt
'

test_expect_success HTTPD 'a token in the URL is used, and not saved' '
	git_tool import "http://x-access-token:$TOKEN@127.0.0.1:$PORT/git/o/proj.git" ws3 &&
	git -C ws3 config remote.origin.url >url &&
	echo "$URL" >expect && test_cmp expect url &&
	! grep -r -a -F "$TOKEN" ws3
'

test_expect_success HTTPD 'holt new --depth 1: a shallow clone of one commit, branch and base recorded' '
	HOLT_GIT_TOKEN=$TOKEN holt new -d -s deep --model script:/dev/null \
		--repo "$URL" --branch dev --depth 1 >name 2>err &&
	echo deep >expect && test_cmp expect name &&
	! grep -i "depth\|whole history" err &&
	sbx=$(json_q "print(d[\"sandbox\"])" <"$HOLT_HOME/data/sessions/deep/session.json") &&
	ws=$HOLT_HOME/data/sandboxes/$sbx/workspace &&
	git -C "$ws" rev-parse HEAD >head &&
	git -C work rev-parse dev >expect && test_cmp expect head &&
	test -s "$ws/.git/shallow" &&
	git -C "$ws" rev-list --count HEAD >count &&
	echo 1 >expect && test_cmp expect count &&
	json_q "print(d[\"base_commit\"])" <"$HOLT_HOME/data/sessions/deep/session.json" >base &&
	test_cmp head base &&
	json_q "print(d[\"branch\"])" <"$HOLT_HOME/data/sessions/deep/session.json" >branch &&
	echo dev >expect && test_cmp expect branch &&
	git -C "$ws" config remote.origin.url >url &&
	echo "$URL" >expect && test_cmp expect url &&
	! grep -r -a -F "$TOKEN" "$ws"
'

test_expect_success HTTPD '--depth 2 without --branch: the default branch, two commits' '
	git -C srv/o/proj.git fetch -q "$TRASH_DIRECTORY/work" dev:deep2 &&
	git -C srv/o/proj.git symbolic-ref HEAD refs/heads/deep2 &&
	HOLT_GIT_TOKEN=$TOKEN git_tool import "$URL" wsd2 -d 2 -p >base 2>progress &&
	git -C srv/o/proj.git symbolic-ref HEAD refs/heads/main &&
	test "$(cat base)" = "$(git -C work rev-parse dev)" &&
	grep "receiving objects: [0-9]*/[0-9]*" progress &&
	git -C wsd2 rev-list --count HEAD >count &&
	echo 2 >expect && test_cmp expect count &&
	git -C wsd2 symbolic-ref refs/remotes/origin/HEAD >ohead &&
	echo refs/remotes/origin/deep2 >expect && test_cmp expect ohead &&
	git -C srv/o/proj.git update-ref -d refs/heads/deep2
'

test_expect_success HTTPD 'a shallow clone: no token, a wrong one, a server down, no git' '
	test_must_fail git_tool import "$URL" wsd3 -d 1 2>err &&
	grep "none is set (set HOLT_GIT_TOKEN or GITHUB_TOKEN" err &&
	HOLT_GIT_TOKEN=wrong test_must_fail git_tool import "$URL" wsd4 -d 1 2>err &&
	grep "authentication failed: the token is wrong" err &&
	test_must_fail git_tool import http://127.0.0.1:1/git/o/proj.git wsd5 -d 1 2>err &&
	grep "clone of .http://127.0.0.1:1/git/o/proj.git.: .*(is the network up?)" err &&
	mkdir nogit &&
	for c in sh cat; do ln -s "$(command -v $c)" nogit/$c || return 1; done &&
	HOLT_GIT_TOKEN=$TOKEN PATH=$TRASH_DIRECTORY/nogit \
		test_must_fail "$GIT_TOOL" import "$URL" wsd6 -d 1 2>err &&
	grep "the git command is missing (libgit2 .* cannot make shallow clones; install the package git)" err &&
	! test -e wsd3/.git && ! test -e wsd4/.git && ! test -e wsd6/.git
'

test_expect_success HTTPD 'the token reaches git through the pipe: not in its argv, environment or files' '
	{ python3 -c "
import socket, sys, time
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(5)
print(s.getsockname()[1]); sys.stdout.flush()
s.settimeout(30)
conns = []
def serve(c):
    while True:
        req = b\"\"
        while b\"\\r\\n\\r\\n\" not in req:
            d = c.recv(4096)
            if not d: return
            req += d
        auth = [l for l in req.split(b\"\\r\\n\") if l.lower().startswith(b\"authorization:\")]
        if not auth:
            c.sendall(b\"HTTP/1.1 401 Unauthorized\\r\\nWWW-Authenticate: Basic realm=\\\"git\\\"\\r\\nContent-Length: 0\\r\\n\\r\\n\")
        else:
            open(\"auth.got\", \"wb\").write(auth[0])
            time.sleep(30)
            return
try:
    while True:
        c, _ = s.accept(); conns.append(c); serve(c)
except Exception:
    pass
" >authport & } &&
	authpid=$! &&
	test_when_finished "kill $authpid" &&
	test_wait_for 50 "test -s authport" &&
	{ HOLT_GIT_TIMEOUT=20 HOLT_GIT_TOKEN=$TOKEN "$GIT_TOOL" import \
		"http://127.0.0.1:$(cat authport)/git/o/proj.git" wsleak -d 1 \
		>/dev/null 2>leakerr & } &&
	toolpid=$! &&
	test_when_finished "kill $toolpid" &&
	test_wait_for 100 "test -s auth.got" &&
	: the server got the token, as basic auth &&
	b64=$(printf "x-access-token:%s" "$TOKEN" | base64) &&
	grep -F "$b64" auth.got &&
	: control: the process that started it has it in its environment &&
	grep -a -F -q "$TOKEN" /proc/$toolpid/environ &&
	descendants $toolpid >pids &&
	grep -l -a "^git$" $(sed "s|.*|/proc/&/comm|" pids) 2>/dev/null | wc -l >ngit &&
	test $(cat ngit) -ge 1 &&
	for p in $(cat pids); do
		test $p = $toolpid && continue
		tr "\0" " " </proc/$p/cmdline >cmdline.$p 2>/dev/null || continue
		! grep -a -F "$TOKEN" /proc/$p/environ /proc/$p/cmdline &&
		! grep -a -F "HOLT_GIT_TOKEN" /proc/$p/environ || return 1
	done &&
	cat cmdline.* | grep -F "credential.helper=" &&
	: the clone is still waiting for the server: stop it &&
	kill -TERM $toolpid &&
	test_expect_code 143 wait $toolpid &&
	: the clone ended with it: no git of it is left &&
	test_wait_for 50 "! grep -a -l -F \"127.0.0.1:$(cat authport)\" /proc/[0-9]*/cmdline 2>/dev/null"
'

test_expect_success HTTPD 'a shallow clone that stalls times out, and nothing of it is left' '
	stall_server stalldport 20 &&
	test_when_finished "kill $stallpid" &&
	test_wait_for 50 "test -s stalldport" &&
	start=$(date +%s) &&
	HOLT_GIT_TIMEOUT=2 HOLT_GIT_TOKEN=$TOKEN test_must_fail git_tool import \
		"http://127.0.0.1:$(cat stalldport)/git/o/proj.git" wsstall -d 1 2>err &&
	test $(($(date +%s) - start)) -lt 10 &&
	grep "clone of .*timed out after 2 s without progress" err &&
	test ! -e wsstall &&
	test_wait_for 50 "! grep -a -l -F \"127.0.0.1:$(cat stalldport)\" /proc/[0-9]*/cmdline 2>/dev/null"
'

test_expect_success HTTPD 'on the shallow clone: holt diff, holt commit over the agent commit, holt pr' '
	sbx=$(json_q "print(d[\"sandbox\"])" <"$HOLT_HOME/data/sessions/deep/session.json") &&
	ws=$HOLT_HOME/data/sandboxes/$sbx/workspace &&
	base=$(json_q "print(d[\"base_commit\"])" <"$HOLT_HOME/data/sessions/deep/session.json") &&
	echo shallow >>"$ws/dev.txt" &&
	holt diff -t deep >diff &&
	grep "^+shallow" diff &&
	git -C "$ws" -c user.name=agent -c user.email=a@sandbox commit -q -am "agent" &&
	echo more >>"$ws/a.txt" &&
	holt commit -t deep -m "on top" >out &&
	git -C "$ws" rev-parse HEAD~1 >parent &&
	git -C "$ws" rev-parse HEAD~2 >grand &&
	echo "$base" >expect && test_cmp expect grand &&
	git -C "$ws" log -1 --format=%s HEAD~1 >subject &&
	echo agent >expect && test_cmp expect subject &&
	HOLT_GIT_TOKEN=$TOKEN HOLT_GITHUB_API=http://127.0.0.1:1 \
		test_expect_code 1 holt pr -t deep --title "from shallow" 2>err &&
	grep "could not reach" err &&
	git -C srv/o/proj.git rev-parse refs/heads/holt/deep >pushed &&
	git -C "$ws" rev-parse HEAD >head && test_cmp head pushed &&
	git -C srv/o/proj.git rev-parse holt/deep~2 >pbase &&
	echo "$base" >expect && test_cmp expect pbase &&
	git -C srv/o/proj.git fsck --no-dangling --connectivity-only &&
	echo again >>"$ws/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN HOLT_GITHUB_API=http://127.0.0.1:1 \
		test_expect_code 1 holt pr -t deep --title "again" 2>err &&
	grep "could not reach" err &&
	git -C srv/o/proj.git log -1 --format=%s holt/deep >subject &&
	echo again >expect && test_cmp expect subject &&
	test -s "$ws/.git/shallow" &&
	! grep -r -a -F "$TOKEN" "$ws" &&
	holt kill-session --rm -t deep
'

test_expect_success HTTPD '--depth with a local repository: copied whole, said so' '
	git_tool import "$TRASH_DIRECTORY/work" wsl -b dev -d 1 2>err &&
	grep "depth 1: a local repository is copied with its whole history" err &&
	git -C wsl rev-list --count HEAD >count &&
	echo 2 >expect && test_cmp expect count
'

test_expect_success HTTPD 'no token, or a wrong one: clear errors, nothing left' '
	test_must_fail git_tool import "$URL" ws4 2>err &&
	grep "none is set (set HOLT_GIT_TOKEN or GITHUB_TOKEN" err &&
	HOLT_GIT_TOKEN=wrong test_must_fail git_tool import "$URL" ws5 2>err &&
	grep "authentication failed: the token is wrong" err &&
	! grep -F wrong ws5/.git/config 2>/dev/null
'

test_expect_success HTTPD 'the host user global git config does not redirect or leak' '
	printf "[url \"http://127.0.0.1:1/\"]\n\tinsteadOf = http://127.0.0.1:$PORT/\n" >"$HOME/.gitconfig" &&
	HOLT_GIT_TOKEN=$TOKEN git_tool import "$URL" ws6 &&
	rm "$HOME/.gitconfig"
'

test_expect_success HTTPD 'holt pr pushes the branch; the API being down loses nothing' '
	HOLT_GIT_TOKEN=$TOKEN git_session s1 "$URL" main &&
	ws=$(git_ws s1) &&
	echo change >>"$ws/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN HOLT_GITHUB_API=http://127.0.0.1:1 \
		test_expect_code 1 holt pr -t s1 --title "a change" 2>err &&
	grep "could not reach .http://127.0.0.1:1/repos/o/proj/pulls." err &&
	git -C srv/o/proj.git rev-parse refs/heads/holt/s1 >pushed &&
	git -C "$ws" rev-parse HEAD >head && test_cmp head pushed &&
	git -C srv/o/proj.git log -1 --format=%s holt/s1 >subject &&
	echo "a change" >expect && test_cmp expect subject
'

test_expect_success HTTPD 'running holt pr again reuses the branch (it is ours)' '
	ws=$(git_ws s1) &&
	echo more >>"$ws/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN HOLT_GITHUB_API=http://127.0.0.1:1 \
		test_expect_code 1 holt pr -t s1 --title "more" 2>err &&
	grep "could not reach" err &&
	git -C srv/o/proj.git rev-parse refs/heads/holt/s1 >pushed &&
	git -C "$ws" rev-parse HEAD >head && test_cmp head pushed &&
	git -C "$ws" rev-parse HEAD~1 >parent &&
	git -C srv/o/proj.git rev-parse holt/s1~1 >expect && test_cmp expect parent
'

test_expect_success HTTPD 'a push the server has moved on from is rejected, the commit kept' '
	rm -rf other &&
	git clone -q "http://x-access-token:$TOKEN@127.0.0.1:$PORT/git/o/proj.git" other &&
	(
		cd other && git checkout -q holt/s1 && echo theirs >theirs.txt &&
		git add theirs.txt && git commit -q -m theirs && git push -q origin holt/s1
	) &&
	ws=$(git_ws s1) &&
	echo mine >>"$ws/b.txt" &&
	HOLT_GIT_TOKEN=$TOKEN HOLT_GITHUB_API=http://127.0.0.1:1 \
		test_expect_code 1 holt pr -t s1 --title mine 2>err &&
	grep "rejected: .*non-fast-forward.*the commit is kept" err &&
	git -C "$ws" log -1 --format=%s >subject &&
	echo mine >expect && test_cmp expect subject &&
	git -C srv/o/proj.git log -1 --format=%s holt/s1 >subject &&
	echo theirs >expect && test_cmp expect subject
'

test_expect_success HTTPD '--branch pushes the kept commit to a new branch' '
	HOLT_GIT_TOKEN=$TOKEN HOLT_GITHUB_API=http://127.0.0.1:1 \
		test_expect_code 1 holt pr -t s1 --branch holt/s1-v2 2>err &&
	grep "could not reach" err &&
	git -C srv/o/proj.git log -1 --format=%s holt/s1-v2 >subject &&
	echo mine >expect && test_cmp expect subject
'

test_expect_success HTTPD 'pushing with a wrong token or none says so' '
	ws=$(git_ws s1) &&
	echo again >>"$ws/b.txt" &&
	HOLT_GIT_TOKEN=wrong test_expect_code 1 holt pr -t s1 --branch x1 2>err &&
	grep "authentication failed" err &&
	test_expect_code 1 holt pr -t s1 --branch x1 2>err &&
	grep "none is set" err &&
	test_must_fail git -C srv/o/proj.git rev-parse -q --verify refs/heads/x1
'

test_expect_success HTTPD 'the workspace config cannot redirect the push or the token' '
	ws=$(git_ws s1) &&
	{ python3 -c "
import socket, sys
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(5)
print(s.getsockname()[1]); sys.stdout.flush()
s.settimeout(20)
try:
    c, _ = s.accept(); open(\"evil.hit\", \"w\").write(\"hit\")
except Exception:
    pass
" >evilport & } &&
	evilpid=$! &&
	test_when_finished "kill $evilpid" &&
	test_wait_for 50 "test -s evilport" &&
	EVIL=127.0.0.1:$(cat evilport) &&
	git -C "$ws" config remote.origin.url "http://$EVIL/steal.git" &&
	git -C "$ws" config url."http://$EVIL/".insteadOf "http://127.0.0.1:$PORT/" &&
	git -C "$ws" config url."http://$EVIL/".pushInsteadOf "http://127.0.0.1:$PORT/" &&
	git -C "$ws" config http.proxy "http://$EVIL" &&
	echo redirected >>"$ws/b.txt" &&
	HOLT_GIT_TOKEN=$TOKEN HOLT_GITHUB_API=http://127.0.0.1:1 \
		test_expect_code 1 holt pr -t s1 --branch holt/s1-v3 --title redirected 2>err &&
	grep "could not reach" err &&
	git -C srv/o/proj.git log -1 --format=%s holt/s1-v3 >subject &&
	echo redirected >expect && test_cmp expect subject &&
	test ! -e evil.hit
'

test_expect_success HTTPD 'the token and API from holt.conf, per repository' '
	mkdir -p "$HOLT_HOME/config" &&
	cat >"$HOLT_HOME/config/holt.conf" <<-EOF &&
	github_api_url = http://127.0.0.1:2
	[repo $URL]
	git_token = $TOKEN
	github_api_url = http://127.0.0.1:1
	EOF
	ws=$(git_ws s1) &&
	echo conf >>"$ws/b.txt" &&
	test_expect_code 1 holt pr -t s1 --branch from-conf 2>err &&
	grep "could not reach .http://127.0.0.1:1/" err &&
	git -C srv/o/proj.git rev-parse -q --verify refs/heads/from-conf &&
	rm "$HOLT_HOME/config/holt.conf"
'

test_expect_success HTTPD 'the git server down: a clear error, the commit kept' '
	HOLT_GIT_TOKEN=$TOKEN git_session s2 "$URL" main &&
	sed -i "s|127.0.0.1:$PORT|127.0.0.1:1|" "$HOLT_HOME/data/sessions/s2/session.json" &&
	ws=$(git_ws s2) &&
	echo offline >>"$ws/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN test_expect_code 1 holt pr -t s2 --title offline 2>err &&
	grep "push to .http://127.0.0.1:1/git/o/proj.git.: .*(is the network up?)" err &&
	git -C "$ws" log -1 --format=%s >subject &&
	echo offline >expect && test_cmp expect subject
'

test_expect_success HTTPD 'a server that never answers: push and clone time out' '
	stall_server stallport 20 &&
	test_when_finished "kill $stallpid" &&
	test_wait_for 50 "test -s stallport" &&
	HOLT_GIT_TOKEN=$TOKEN git_session s3 "$URL" main &&
	sed -i "s|127.0.0.1:$PORT|127.0.0.1:$(cat stallport)|" "$HOLT_HOME/data/sessions/s3/session.json" &&
	echo stall >>"$(git_ws s3)/a.txt" &&
	start=$(date +%s) &&
	HOLT_GIT_TIMEOUT=2 HOLT_GIT_TOKEN=$TOKEN test_expect_code 1 holt pr -t s3 2>err &&
	test $(($(date +%s) - start)) -lt 10 &&
	grep "push to .http://127.0.0.1:[0-9]*/git/o/proj.git. timed out after 2 s" err &&
	HOLT_GIT_TIMEOUT=2 test_must_fail git_tool import \
		"http://127.0.0.1:$(cat stallport)/git/o/proj.git" stalled 2>err &&
	grep "clone of .*timed out after 2 s without progress" err &&
	test ! -e stalled/.git
'

test_expect_success HTTPD 'nothing holt wrote holds the token' '
	! grep -r -a -l -F "$TOKEN" "$HOLT_HOME" &&
	b64=$(printf "x-access-token:%s" "$TOKEN" | base64) &&
	! grep -r -a -l -F "$b64" "$HOLT_HOME"
'

test_done
