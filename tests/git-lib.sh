# tests/git-lib.sh: what the git tests (t7xxx) share, on top of lib.sh.
#
#	git_session NAME REPO [BRANCH]	import REPO into a new sandbox's
#					workspace and write the session's
#					session.json, as holt new --repo does
#					(no BRANCH: none in session.json)
#	git_ws NAME			the session's workspace
#	git_base NAME			its base commit
#	git_tool ARGS			tests/git-tool (git.h calls)
#	stall_server FILE SECONDS	a loopback server that accepts and
#					never answers, for SECONDS; its port
#					in FILE, its pid in $stallpid
#	descendants PID			the processes under PID, itself
#					included, deepest first
#	on_pty CMD...			run CMD on a pseudo-terminal, its
#					output on stdout

GIT_TOOL=${GIT_TOOL:-$HOLT_BUILD_DIR/tests/git-tool}
git_tool() {
	"$GIT_TOOL" "$@"
}

stall_server() {
	python3 -c "
import socket, sys
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(5)
print(s.getsockname()[1]); sys.stdout.flush()
s.settimeout($2)
conns = []
try:
    while True:
        c, _ = s.accept(); conns.append(c)
except Exception:
    pass
" >"$1" &
	stallpid=$!
}

# Plain git for the fixtures; never the user's configuration.
GIT_CONFIG_NOSYSTEM=1
GIT_AUTHOR_NAME='A U Thor'
GIT_AUTHOR_EMAIL='author@example.com'
GIT_COMMITTER_NAME='C O Mitter'
GIT_COMMITTER_EMAIL='committer@example.com'
export GIT_CONFIG_NOSYSTEM GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL \
	GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL

# The sandbox id comes from the session name (tests run in subshells).
git_session() {
	sbx=sbx-$(printf '%s' "$1" | cksum | awk '{printf "%012x", $1}')
	mkdir -p "$HOLT_HOME/data/sandboxes/$sbx" \
		"$HOLT_HOME/data/sessions/$1" || return 1
	base=$(git_tool import "$2" "$HOLT_HOME/data/sandboxes/$sbx/workspace") ||
		return 1
	branch=${3:+"\"branch\":\"$3\","}
	cat >"$HOLT_HOME/data/sessions/$1/session.json" <<-EOF
	{"name":"$1","sandbox":"$sbx","model":"script:none","mode":"auto",
	 "repo":"$2","base_commit":"$base",$branch
	 "created":"2026-11-29T08:00:00.000Z","test_command":""}
	EOF
	: >"$HOLT_HOME/data/sessions/$1/events.jsonl"
}

git_ws() {
	sbx=$(sed -n 's/.*"sandbox":"\([^"]*\)".*/\1/p' \
		"$HOLT_HOME/data/sessions/$1/session.json")
	echo "$HOLT_HOME/data/sandboxes/$sbx/workspace"
}

git_base() {
	sed -n 's/.*"base_commit":"\([^"]*\)".*/\1/p' \
		"$HOLT_HOME/data/sessions/$1/session.json"
}

# A JSON query: python3 -c over stdin (jq is not always there).
json_q() {
	python3 -c "import json,sys; d=json.load(sys.stdin); $1"
}

# The processes under pid $1 (itself included), deepest first.
descendants() {
	python3 - "$1" <<-\EOF
	import os, sys
	kids = {}
	for p in os.listdir("/proc"):
	    if p.isdigit():
	        try:
	            ppid = open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1]
	        except OSError:
	            continue
	        kids.setdefault(ppid, []).append(p)
	out, todo = [], [(sys.argv[1], 0)]
	while todo:
	    p, d = todo.pop()
	    out.append((d, p))
	    todo += [(k, d + 1) for k in kids.get(p, [])]
	print("\n".join(p for d, p in sorted(out, reverse=True)))
	EOF
}

# Run a command with a terminal (a pty) as its output; the bytes it wrote
# on stdout.
on_pty() {
	python3 - "$@" <<-\EOF
	import os, pty, sys
	pid, fd = pty.fork()
	if pid == 0:
	    os.execvp(sys.argv[1], sys.argv[1:])
	out = b""
	while True:
	    try:
	        b = os.read(fd, 65536)
	    except OSError:
	        break
	    if not b:
	        break
	    out += b
	os.waitpid(pid, 0)
	sys.stdout.buffer.write(out)
	EOF
}
