#!/bin/sh
# The policy corpus (tests/policy-corpus.txt) through the command line:
# every command in every mode, the exit status of holt policy check, and in
# auto mode its JSON. The unit test checks the same corpus through the API;
# this checks that the CLI says the same.
. "$(dirname "$0")/lib.sh"

test_expect_success 'every corpus line gets its verdict from holt policy check' '
	{
		python3 "$HOLT_SRC_DIR/tests/policy-corpus-check.py" \
			"$HOLT_SRC_DIR/tests/policy-corpus.txt" \
			"$HOLT_SRC_DIR/tests/policy-corpus.policy" \
			"$HOLT_BUILD_DIR/holt" >out 2>&1 || { cat out; false; }
	}
'

test_done
