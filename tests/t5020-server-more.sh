#!/bin/sh
# More of the server: -S PATH, an approval that times out while nobody is
# attached, and a session whose sandbox was stopped (a reboot) coming back
# on attach.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

PROTO="python3 $TEST_DIRECTORY/proto-client.py"

test_expect_success '-S PATH selects a server by its socket path' '
	"$HOLT_BUILD_DIR/holt" -S "$TRASH_DIRECTORY/other.sock" ls >out &&
	grep "no sessions" out &&
	test -S "$TRASH_DIRECTORY/other.sock" &&
	"$HOLT_BUILD_DIR/holt" -S "$TRASH_DIRECTORY/other.sock" kill-server &&
	! test -S "$TRASH_DIRECTORY/other.sock"
'

test_expect_success BWRAP 'an approval times out while nobody is attached' '
	write_policy &&
	mkdir -p "$HOLT_HOME/config" &&
	printf "approval_timeout = 1\napproval_default = deny\n" >"$HOLT_HOME/config/holt.conf" &&
	cat >to.json <<-\EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "python3 -c 1" } } ] },
	  { "expect": { "last_tool_result_contains": "nobody answered" }, "text": "gave up", "tool_calls": [] } ] }
	EOF
	{ holt kill-server 2>/dev/null; true; } && holt new -d -s to --model script:to.json "try" &&
	test_wait_for 100 "holt log -t to | grep \"run finished\"" &&
	holt log -t to >log &&
	grep "denied by timeout\|deny by timeout" log &&
	grep "run finished: denied" log &&
	rm "$HOLT_HOME/config/holt.conf" && holt kill-server
'

test_expect_success BWRAP 'a stopped sandbox (a reboot) is started on attach' '
	cat >idle.json <<-\EOF &&
	{ "turns": [ { "text": "hi", "tool_calls": [] } ] }
	EOF
	holt new -d -s idle --model script:idle.json "hello" &&
	test_wait_for 100 "holt log -t idle | grep \"run finished\"" &&
	id=$(sed -n "s/.*\"sandbox\":[[:space:]]*\"\(sbx-[0-9a-f]*\)\".*/\1/p" \
		"$HOLT_HOME/data/sessions/idle/session.json") &&
	holt sandbox stop "$id" &&
	holt sandbox ls | grep "$id.*stopped" &&
	$PROTO --wait 2 --until snapshot "$HOLT_HOME/run/$HOLT_SOCKET" send \
		"{\"type\":\"hello\",\"version\":1}" \
		"{\"type\":\"attach\",\"session\":\"idle\"}" >frames &&
	grep "\"sandbox_state\": \"running\"" frames &&
	holt sandbox ls | grep "$id.*running"
'

test_expect_success BWRAP 'log -f follows the log as it grows' '
	cat >f.json <<-\EOF &&
	{ "turns": [ { "text": "first", "tool_calls": [] },
	             { "delay_ms": 300, "text": "second answer", "tool_calls": [] } ] }
	EOF
	holt new -d -s fol --model script:f.json "one" &&
	test_wait_for 100 "holt log -t fol | grep \"run finished\"" &&
	{ "$HOLT_BUILD_DIR/holt" -L "$HOLT_SOCKET" log -t fol -f >follow 2>&1 & } &&
	pid=$! &&
	sleep 0.3 &&
	holt send -t fol "two" &&
	test_wait_for 100 "grep -q \"agent: second answer\" follow" &&
	kill $pid &&
	test $(grep -c "session fol created" follow) = 1
'

# attach.py SOCKET SESSION: attach for the last 2000 events; print
# "snapshot COUNT TRUNCATED LAST-SEQ FRAME-BYTES" or "error MESSAGE".
cat >attach.py <<\EOF
import json, socket, struct, sys
def frame(o):
    d = json.dumps(o).encode()
    return struct.pack(">I", len(d)) + d
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(frame({"type": "hello", "version": 1}) +
    frame({"type": "attach", "session": sys.argv[2], "last": 2000}))
buf = b""
while True:
    while len(buf) < 4 or len(buf) < 4 + struct.unpack(">I", buf[:4])[0]:
        d = s.recv(1 << 20)
        if not d:
            sys.exit("closed")
        buf += d
    n = struct.unpack(">I", buf[:4])[0]
    m = json.loads(buf[4:4 + n])
    buf = buf[4 + n:]
    if m["type"] == "snapshot":
        ev = m["events"]
        print("snapshot", len(ev), m.get("truncated"), ev[-1]["seq"], n)
        break
    if m["type"] == "error":
        print("error", m.get("message", ""))
        break
EOF

# A long session with big outputs: its last 2000 events are more than a
# frame holds. The snapshot keeps the newest that fit, says it left some
# out, and the server lives on.
test_expect_success BWRAP,PYTHON 'attach to a log bigger than a frame' '
	holt new -d -s big --model script:/dev/null "hi" &&
	test_wait_for 100 "holt log -t big | grep \"run finished\"" &&
	holt kill-server &&
	append_big_outputs big 400 &&
	holt ls >/dev/null &&
	python3 attach.py "$HOLT_HOME/run/$HOLT_SOCKET" big >snap &&
	cat snap &&
	read type count truncated lastseq bytes <snap &&
	test "$type" = snapshot &&
	test "$truncated" = True &&
	test "$count" -gt 100 && test "$count" -lt 400 &&
	test "$lastseq" -ge 400 &&
	test "$bytes" -le 16777216 &&
	holt ls | grep "^big " &&
	! grep BUG "$HOLT_HOME/run/$HOLT_SOCKET.log"
'

test_expect_success BWRAP,PYTHON 'a corrupt line in that tail is named by its number' '
	log=$HOLT_HOME/data/sessions/big/events.jsonl &&
	n=$(($(wc -l <"$log") - 4)) &&
	sed -i "${n}s/.*/{not json/" "$log" &&
	python3 attach.py "$HOLT_HOME/run/$HOLT_SOCKET" big >reply &&
	cat reply &&
	grep "^error .*events.jsonl:$n: corrupt event log line" reply
'

test_expect_success BWRAP 'a running server reads a changed holt.conf for the sessions it opens next' '
	echo "{ \"turns\": [ { \"text\": \"hi\", \"tool_calls\": [] } ] }" >hi.json &&
	mkdir -p "$HOLT_HOME/config" &&
	printf "price.script:hi.json = 1000000 0\n" >"$HOLT_HOME/config/holt.conf" &&
	holt new -d -s p1 --model script:hi.json "hi" &&
	test_wait_for 100 "holt ls | grep \"^p1 .*finished\"" &&
	printf "price.script:hi.json = 2000000 0\n" >"$HOLT_HOME/config/holt.conf" &&
	holt new -d -s p2 --model script:hi.json "hi" &&
	test_wait_for 100 "holt ls | grep \"^p2 .*finished\"" &&
	holt ls >ls &&
	grep "^p1 .*\$100\.0000" ls &&
	grep "^p2 .*\$200\.0000" ls &&
	rm "$HOLT_HOME/config/holt.conf" &&
	holt kill-session -t p1 && holt kill-session -t p2
'

test_expect_success BWRAP 'holt new --steps sets the step cap of the session' '
	holt new -d -s capped --steps 7 --model script:hi.json "hi" >name &&
	echo capped >expect &&
	test_cmp expect name &&
	test_wait_for 100 "holt ls | grep \"^capped .*finished .* 1/7 \"" &&
	test_expect_code 2 holt new -d -s bad --steps 0 --model script:hi.json "hi" 2>err &&
	grep "holt new: --steps .0.: a positive number" err &&
	holt kill-session -t capped
'

test_done
