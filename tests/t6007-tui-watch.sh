#!/bin/sh
# The file tree follows the sandbox: the real server subscribes to envd's
# watch of /workspace for the session's sandbox and sends "files" messages
# to the screens attached; the screen itself watches nothing on this host
# (t6000 shows it ignores a change nobody tells it of). Files written and
# removed by the agent, and by holt sandbox exec, come and go in the tree.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

TUI_CMD="$HOLT attach"

# files_client DIR [SECONDS]: attach with "files" and wait (10 s at most)
# for a "files" message naming DIR; prints it.
files_client() {
	rm -f files-client.ready
	python3 - "$HOLT_HOME/run/$HOLT_SOCKET" "$1" "${2:-10}" <<'PY'
import json, socket, struct, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(float(sys.argv[3]))
def send(o):
    d = json.dumps(o).encode()
    s.sendall(struct.pack(">I", len(d)) + d)
def recv():
    h = b""
    while len(h) < 4:
        c = s.recv(4 - len(h))
        if not c:
            sys.exit("server closed")
        h += c
    n = struct.unpack(">I", h)[0]
    d = b""
    while len(d) < n:
        d += s.recv(n - len(d))
    return json.loads(d)
send({"type": "hello", "version": 1, "client": "test"})
recv()
send({"type": "attach", "session": "s", "readonly": True, "files": True,
      "last": 0})
open("files-client.ready", "w").close()
end = time.time() + float(sys.argv[3])
while time.time() < end:
    try:
        m = recv()
    except socket.timeout:
        break
    if m.get("type") == "files" and sys.argv[2] in m.get("dirs", []):
        print(json.dumps(m))
        sys.exit(0)
sys.exit("no files message for %r" % sys.argv[2])
PY
}

test_expect_success BWRAP,TMUX 'setup: a session whose agent writes, then removes' '
	make_repo repo &&
	write_policy &&
	echo "allow ^rm agent-made\\.txt$" >>"$HOLT_HOME/config/policy" &&
	cat >run.json <<-\JSON &&
	{ "turns": [
	  { "delay_ms": 1500, "tool_calls": [ { "name": "write_file", "arguments": { "path": "agent-made.txt", "content": "hi\n" } } ] },
	  { "text": "Wrote it.", "tool_calls": [] },
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "rm agent-made.txt" } } ] },
	  { "text": "Removed it.", "tool_calls": [] } ] }
	JSON
	holt new -d -s s --repo "$TRASH_DIRECTORY/repo" --model script:run.json \
		"write a file" >name &&
	tui_start a -t s &&
	tui_wait a "calc.py" 100
'

test_expect_success BWRAP,TMUX 'a file the agent writes shows in the tree' '
	tui_wait a "Wrote it." 100 &&
	tui_wait a "^│  agent-made.txt *?" 50
'

test_expect_success BWRAP,TMUX 'a file the agent removes leaves the tree' '
	holt send -t s "now remove it" &&
	tui_wait a "Removed it." 100 &&
	tui_gone a "^│  agent-made.txt" 50
'

test_expect_success BWRAP,TMUX 'a file made by holt sandbox exec shows too' '
	python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[\"sandbox\"])" \
		"$HOLT_HOME/data/sessions/s/session.json" >sbx &&
	sbx=$(cat sbx) &&
	holt sandbox exec "$sbx" -- sh -c "echo x >/workspace/from-exec.txt" &&
	tui_wait a "^│  from-exec.txt *?" 50 &&
	holt sandbox exec "$sbx" -- rm /workspace/from-exec.txt &&
	tui_gone a "^│  from-exec.txt" 50
'

test_expect_success BWRAP,TMUX 'an unfolded directory follows a change inside it' '
	holt sandbox exec "$(cat sbx)" -- mkdir /workspace/sub &&
	tui_wait a "▸ sub/" 50 &&
	tui_keys a C-b 1 Home Enter &&
	tui_wait a "▾ sub/" &&
	holt sandbox exec "$(cat sbx)" -- touch /workspace/sub/deep.txt &&
	tui_wait a "  deep.txt" 50
'

test_expect_success BWRAP 'the server sends "files" naming the changed directory' '
	{ files_client sub >files.out & } &&
	client=$! &&
	test_wait_for 50 "test -f files-client.ready" &&
	sleep 0.3 &&
	holt sandbox exec "$(cat sbx)" -- touch /workspace/sub/more.txt &&
	wait $client &&
	grep "\"type\": \"files\"" files.out &&
	grep "\"dirs\": \[\"sub\"\]" files.out
'

test_expect_success BWRAP 'changes under .git are not sent' '
	{ files_client .git 3 >files.out & } &&
	client=$! &&
	test_wait_for 50 "test -f files-client.ready" &&
	sleep 0.3 &&
	holt sandbox exec "$(cat sbx)" -- touch /workspace/.git/zz &&
	test_must_fail wait $client
'

test_done
