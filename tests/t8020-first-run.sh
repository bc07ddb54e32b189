#!/bin/sh
# holt with no command: in a repository and outside one; no model
# configured; the repository's session found again.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

test_expect_success 'outside a repository: a short usage and the sessions' '
	mkdir plain && (cd plain && holt >../out 2>&1) &&
	grep "Not in a git repository" out &&
	grep "holt demo" out &&
	grep "no sessions" out
'

test_expect_success 'no model configured: what to set, and the demo; no curl errors' '
	make_repo proj &&
	(cd proj && test_expect_code 2 holt </dev/null >../out 2>&1) &&
	grep "no model is configured" out &&
	grep "ANTHROPIC_API_KEY" out && grep "OPENAI_API_KEY" out &&
	grep "base_url" out && grep "Ollama" out &&
	grep "holt demo" out &&
	! grep -i "curl\|http error\|could not resolve" out &&
	! ls "$HOLT_HOME/data/sessions" 2>/dev/null | grep . &&
	test "$(ls "$HOLT_HOME/data/sandboxes" 2>/dev/null | wc -l)" = 0
'

test_expect_success BWRAP 'in a repository: a session for it is made, then found again' '
	mkdir -p "$HOLT_HOME/config" &&
	echo "{ \"turns\": [ { \"text\": \"hi\", \"tool_calls\": [] } ] }" >s.json &&
	echo "model = script:$TRASH_DIRECTORY/s.json" >"$HOLT_HOME/config/holt.conf" &&
	# Not a terminal: the plain viewer, which follows until stopped.
	# The first sandbox of a HOLT_HOME also makes the host image.
	(cd proj && timeout 10 "$HOLT_BUILD_DIR/holt" -L $HOLT_SOCKET </dev/null >../out1 2>&1;
	 test $? = 124) &&
	holt ls >ls && grep "^proj " ls &&
	(cd proj && timeout 3 "$HOLT_BUILD_DIR/holt" -L $HOLT_SOCKET </dev/null >../out2 2>&1;
	 test $? = 124) &&
	test $(holt ls | grep -c "^proj") = 1 &&
	grep "session proj created" out2
'

test_done
