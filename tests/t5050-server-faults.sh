#!/bin/sh
# The server under protocol abuse: a client that never reads while it keeps
# asking, bytes that are not UTF-8, names that are paths. Each fault is
# made for real on the server's socket; the server must answer the others
# afterwards and its log must show no crash.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

SOCK=$HOLT_HOME/run/$HOLT_SOCKET
PROTO="python3 $TEST_DIRECTORY/proto-client.py"

# A session whose snapshot is several MB: a few attaches fill a queue.
test_expect_success BWRAP,PYTHON 'setup: a session with a big log' '
	holt new -d -s big --model script:/dev/null "hi" &&
	test_wait_for 100 "holt log -t big | grep \"run finished\"" &&
	holt kill-server &&
	append_big_outputs big 120 &&
	holt ls >/dev/null &&
	server_pid >pid && test -s pid
'

# The queue passes the drop limit while the server handles that same
# client's request: the client is dropped after the request, never freed
# under it.
for req in attach send; do
	test_expect_success BWRAP,PYTHON "a client that never reads and keeps sending $req is dropped; the server lives" "
		$PROTO --wait 20 \"\$SOCK\" flood 40 \
			'{\"type\":\"attach\",\"session\":\"big\"}' \
			'{\"type\":\"$req\",\"session\":\"big\",\"text\":\"more\"}' \
			>flood.$req 2>&1 &&
		cat flood.$req &&
		grep \"closed after\" flood.$req &&
		test \"\$(server_pid)\" = \"\$(cat pid)\" &&
		grep \"dropped: too slow\" \"\$SOCK.log\" &&
		holt ls >ls && grep \"^big \" ls &&
		! grep -i \"sanitizer\|BUG\" \"\$SOCK.log\"
	"
done

test_done
