#!/bin/sh
# The policy's shell parser against real shells: every corpus line is run by
# dash and by bash in a throw-away sandbox where commands are stubs that log
# their names (wrappers and shells are real), and every command a shell ran
# must be a part of the policy's decision (tests/policy-shell-diff.py).
. "$(dirname "$0")/lib.sh"

if command -v bwrap >/dev/null && command -v dash >/dev/null &&
    command -v bash >/dev/null && test -x /usr/bin/python3 &&
    bwrap --ro-bind / / --unshare-all --die-with-parent true 2>/dev/null; then
	prereq=
else
	prereq=SANDBOX_MISSING
	say "bwrap cannot make a sandbox here: skipping"
fi

test_expect_success $prereq 'the harness sees what the shells run' '
	{
		python3 "$HOLT_SRC_DIR/tests/policy-shell-diff.py" --control \
			"$HOLT_BUILD_DIR/tests/policy-tool" \
			"$HOLT_SRC_DIR/tests/policy-corpus.txt" >out 2>&1 ||
			{ cat out; false; }
	}
'

test_expect_success $prereq 'the shells run no command the parser missed' '
	{
		python3 "$HOLT_SRC_DIR/tests/policy-shell-diff.py" \
			"$HOLT_BUILD_DIR/tests/policy-tool" \
			"$HOLT_SRC_DIR/tests/policy-corpus.txt" >out 2>&1 ||
			{ cat out; false; }
	}
'

test_done
