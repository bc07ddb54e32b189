#!/bin/sh
# holt pr end to end: push over real smart HTTP, then the pull request through
# a GitHub API stand-in that holds every request to GitHub's published
# OpenAPI description (@octokit/openapi, installed with npm into the build
# tree) and answers with its examples and documented errors. Then the token
# leak search over everything holt and the stand-in wrote.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/git-lib.sh"

TOKEN=ghp_$(date +%s)LeakCheck9Xy
NPM_DIR=$HOLT_BUILD_DIR/tests/npm
SPEC=$NPM_DIR/node_modules/@octokit/openapi/generated/api.github.com.json

why=
if ! command -v lighttpd >/dev/null 2>&1; then
	why="lighttpd is missing"
elif ! command -v node >/dev/null 2>&1; then
	why="node is missing"
elif [ ! -f "$SPEC" ]; then
	if ! command -v npm >/dev/null 2>&1; then
		why="npm is missing, so @octokit/openapi cannot be installed"
	else
		mkdir -p "$NPM_DIR" &&
		# Once per build tree (about 400 MB); bounded when offline.
		timeout 120 npm install --prefix "$NPM_DIR" --no-audit --no-fund \
			--fetch-retries=1 --fetch-timeout=30000 \
			--loglevel=error @octokit/openapi >npm.log 2>&1
		[ -f "$SPEC" ] || why="npm install @octokit/openapi failed: $(tail -n 3 npm.log | tr '\n' ' ')"
	fi
fi
if [ -n "$why" ]; then
	say "SKIP: $why"
else
	test_set_prereq STUB
fi
# start_stub NAME TOKEN: a stand-in in the background; its port in NAME.port.
start_stub() {
	node "$TEST_DIRECTORY/github-stub/stub.js" --spec "$SPEC" --token "$2" \
		--git-root "$TRASH_DIRECTORY/srv" --log "$TRASH_DIRECTORY/$1.log" \
		>"$1.port" 2>"$1.err" &
	echo $! >"$1.pid"
	test_wait_for 100 "test -s $1.port"
}

test_expect_success STUB 'setup: git server, API stand-ins, repositories' '
	git init -q -b main work &&
	(cd work && seq 1 9 >a.txt && git add . && git commit -q -m one) &&
	mkdir -p srv/octo &&
	for r in hello missing ratelimited ratelimited429 noscope; do
		git clone -q --bare work srv/octo/$r.git &&
		git -C srv/octo/$r.git config http.receivepack true || return 1
	done &&
	sh "$TEST_DIRECTORY/git-http-server" srv "$TOKEN" httpd >port &&
	start_stub api "$TOKEN" &&
	start_stub api2 other-token
'
test_when_finished 'kill $(cat "$TRASH_DIRECTORY/httpd/pid") $(cat "$TRASH_DIRECTORY/api.pid") $(cat "$TRASH_DIRECTORY/api2.pid")'
PORT=$(cat port 2>/dev/null)
API=http://127.0.0.1:$(cat api.port 2>/dev/null)
API2=http://127.0.0.1:$(cat api2.port 2>/dev/null)
url() {
	echo "http://127.0.0.1:$PORT/git/octo/$1.git"
}
HOLT_GITHUB_API=$API
export HOLT_GITHUB_API

test_expect_success STUB 'the stand-in refuses what the description does not allow' '
	curl -s -X POST -H "Accept: application/vnd.github+json" \
		-H "X-GitHub-Api-Version: 2022-11-28" -H "Authorization: Bearer $TOKEN" \
		-H "Content-Type: application/json" -d "{\"title\":5}" \
		"$API/repos/octo/hello/pulls" >out &&
	grep "missing required .*head" out && grep "title: expected string" out &&
	curl -s -X POST -H "Authorization: Bearer $TOKEN" -d "{}" \
		"$API/repos/octo/hello/pulls" >out &&
	grep "Accept must be application/vnd.github+json" out
'

test_expect_success STUB 'holt pr: push, open, print and record the pull request' '
	HOLT_GIT_TOKEN=$TOKEN git_session s1 "$(url hello)" main &&
	cat >"$HOLT_HOME/data/sessions/s1/events.jsonl" <<-\EOF &&
	{"seq":1,"ts":"2026-11-29T08:00:00.000Z","type":"session.created"}
	{"seq":2,"ts":"2026-11-29T08:00:01.000Z","type":"assistant.message","text":"Looking.","tool_calls":[]}
	{"seq":3,"ts":"2026-11-29T08:00:02.000Z","type":"assistant.message","text":"Fix the week number\n\nIt was off by one.","tool_calls":[]}
	EOF
	ws=$(git_ws s1) &&
	echo fix >>"$ws/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN holt pr -t s1 >out 2>err &&
	echo https://github.com/octocat/Hello-World/pull/1347 >expect &&
	test_cmp expect out &&
	git -C srv/octo/hello.git log -1 --format=%s holt/s1 >subject &&
	echo "Fix the week number" >expect && test_cmp expect subject &&
	tail -n 1 "$HOLT_HOME/data/sessions/s1/events.jsonl" | json_q "
assert d[\"type\"] == \"pr.opened\", d
assert d[\"seq\"] == 4, d
assert d[\"url\"] == \"https://github.com/octocat/Hello-World/pull/1347\"
assert d[\"number\"] == 1347 and d[\"branch\"] == \"holt/s1\" and d[\"base\"] == \"main\", d
"
'

test_expect_success STUB 'the request was the documented one' '
	grep "\"method\":\"POST\"" api.log | tail -n 1 | json_q "
assert d[\"url\"] == \"/repos/octo/hello/pulls\", d
h = d[\"headers\"]
assert h[\"accept\"] == \"application/vnd.github+json\", h
assert h[\"x-github-api-version\"] == \"2022-11-28\", h
assert h[\"content-type\"] == \"application/json\", h
b = json.loads(d[\"body\"])
assert b == {\"title\": \"Fix the week number\", \"head\": \"holt/s1\", \"base\": \"main\",
	\"body\": \"Fix the week number\\n\\nIt was off by one.\", \"draft\": False}, b
"
'

test_expect_success STUB 'again: the open pull request is found and printed' '
	ws=$(git_ws s1) &&
	echo more >>"$ws/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN holt pr -t s1 >out 2>err &&
	echo https://github.com/octocat/Hello-World/pull/1347 >expect &&
	test_cmp expect out &&
	grep "already open" err &&
	grep "GET" api.log | tail -n 1 | grep "head=octo%3Aholt%2Fs1" &&
	git -C srv/octo/hello.git log -1 --format=%s holt/s1 >subject &&
	echo "Fix the week number" >expect && test_cmp expect subject
'

test_expect_success STUB '--title, --body-file, --base, --draft, --branch' '
	ws=$(git_ws s1) &&
	echo draft >>"$ws/a.txt" &&
	printf "line one\nline two\n" >body.md &&
	HOLT_GIT_TOKEN=$TOKEN holt pr -t s1 --title "Draft it" --body-file body.md \
		--base main --draft --branch feature/d >out &&
	grep "\"method\":\"POST\"" api.log | tail -n 1 | json_q "
b = json.loads(d[\"body\"])
assert b[\"title\"] == \"Draft it\" and b[\"draft\"] is True, b
assert b[\"body\"] == \"line one\\nline two\\n\" and b[\"head\"] == \"feature/d\", b
"
'

test_expect_success STUB 'a token the API refuses: 401, branch pushed, re-runnable' '
	HOLT_GIT_TOKEN=$TOKEN git_session s2 "$(url hello)" main &&
	echo x >>"$(git_ws s2)/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN HOLT_GITHUB_API=$API2 test_expect_code 1 holt pr -t s2 2>err &&
	grep "refused the token (401 Bad credentials)" err &&
	git -C srv/octo/hello.git rev-parse -q --verify refs/heads/holt/s2 &&
	HOLT_GIT_TOKEN=$TOKEN holt pr -t s2 >out &&
	grep pull/1347 out
'

test_expect_success STUB 'repository not found: 404' '
	HOLT_GIT_TOKEN=$TOKEN git_session s3 "$(url missing)" main &&
	echo x >>"$(git_ws s3)/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN test_expect_code 1 holt pr -t s3 2>err &&
	grep "repository .octo/missing. not found" err
'

test_expect_success STUB 'rate limited: 403 with the reset time, 429 with Retry-After' '
	HOLT_GIT_TOKEN=$TOKEN git_session s4 "$(url ratelimited)" main &&
	echo x >>"$(git_ws s4)/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN test_expect_code 1 holt pr -t s4 2>err &&
	grep "rate limited by .* until [0-9-]* [0-9:]* UTC (in 1[0-2][0-9] s)" err &&
	HOLT_GIT_TOKEN=$TOKEN git_session s5 "$(url ratelimited429)" main &&
	echo x >>"$(git_ws s5)/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN test_expect_code 1 holt pr -t s5 2>err &&
	cat err && grep "rate limited by .*(HTTP 429) until .* (in 60 s)" err
'

test_expect_success STUB 'a token lacking scope: 403' '
	HOLT_GIT_TOKEN=$TOKEN git_session s6 "$(url noscope)" main &&
	echo x >>"$(git_ws s6)/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN test_expect_code 1 holt pr -t s6 2>err &&
	grep "the token may not open pull requests on .octo/noscope. (403 Resource not accessible" err
'

test_expect_success STUB 'a 422 that is not a duplicate shows the API message' '
	HOLT_GIT_TOKEN=$TOKEN git_session s7 "$(url hello)" main &&
	echo x >>"$(git_ws s7)/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN test_expect_code 1 holt pr -t s7 --base "" 2>err &&
	grep "did not accept the pull request (422)" err
'

test_expect_success STUB 'the API down: the push is kept, the message says so' '
	HOLT_GIT_TOKEN=$TOKEN git_session s8 "$(url hello)" main &&
	echo x >>"$(git_ws s8)/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN HOLT_GITHUB_API=http://127.0.0.1:1 \
		test_expect_code 1 holt pr -t s8 2>err &&
	grep "could not reach .*is the network up" err &&
	git -C srv/octo/hello.git rev-parse -q --verify refs/heads/holt/s8
'

test_expect_success STUB 'a session from a local checkout: the PR goes to its origin' '
	git clone -q "http://x-access-token:$TOKEN@127.0.0.1:$PORT/git/octo/hello.git" local &&
	git -C local remote set-url origin "$(url hello)" &&
	git_session s9 "$TRASH_DIRECTORY/local" main &&
	echo local >>"$(git_ws s9)/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN holt pr -t s9 --title "from local" >out 2>err &&
	grep pull/1347 out &&
	grep "pushing branch .holt/s9. to .$(url hello)." err &&
	git -C srv/octo/hello.git log -1 --format=%s holt/s9 >subject &&
	echo "from local" >expect && test_cmp expect subject
'

test_expect_success STUB 'a token written into the origin URL is used and never shown' '
	git -C local remote set-url origin "http://x-access-token:$TOKEN@127.0.0.1:$PORT/git/octo/hello.git" &&
	git_session s10 "$TRASH_DIRECTORY/local" main &&
	echo local2 >>"$(git_ws s10)/a.txt" &&
	HOLT_GITHUB_API=$API holt pr -t s10 --title "token in url" >out 2>err &&
	grep pull/1347 out &&
	! grep -F "$TOKEN" out err &&
	grep "pushing branch .holt/s10. to .$(url hello)." err &&
	git -C local remote set-url origin "$(url hello)"
'

test_expect_success STUB 'no branch in session.json: the remote default branch is the base' '
	git clone -q --bare work srv/octo/trunky.git &&
	git -C srv/octo/trunky.git branch -m main trunk &&
	git -C srv/octo/trunky.git config http.receivepack true &&
	HOLT_GIT_TOKEN=$TOKEN git_session s11 "$(url trunky)" &&
	! grep -q "\"branch\"" "$HOLT_HOME/data/sessions/s11/session.json" &&
	echo t >>"$(git_ws s11)/a.txt" &&
	HOLT_GIT_TOKEN=$TOKEN holt pr -t s11 --title trunk >out &&
	grep "\"method\":\"POST\"" api.log | tail -n 1 | json_q "
b = json.loads(d[\"body\"])
assert b[\"base\"] == \"trunk\", b
"
'

test_expect_success STUB 'the token is nowhere but in the Authorization header' '
	! grep -r -a -l -F "$TOKEN" "$HOLT_HOME" api.log api2.log &&
	b64=$(printf "x-access-token:%s" "$TOKEN" | base64) &&
	! grep -r -a -l -F "$b64" "$HOLT_HOME" api.log api2.log &&
	grep -c "\"method\":\"POST\"" api.log >n && test "$(cat n)" -ge 8
'

test_done
