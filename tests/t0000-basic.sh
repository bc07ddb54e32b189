#!/bin/sh
# The holt binary, its command table and its help.
. "$(dirname "$0")/lib.sh"

test_expect_success 'holt version prints the version' '
	holt version >actual &&
	grep -E "^holt [0-9]+\.[0-9]+\.[0-9]+$" actual
'

test_expect_success 'holt --help lists every command' '
	holt --help >actual &&
	for c in new attach ls send approve log diff pr kill-session run \
		sandbox policy server kill-server demo version; do
		grep -q "^  $c " actual || { echo "missing $c"; return 1; }
	done
'

test_expect_success 'an unknown command is a usage error naming it' '
	test_expect_code 2 holt frobnicate 2>err &&
	grep "unknown command .frobnicate." err
'

test_expect_success 'every command answers --help with exit 0' '
	for c in new attach ls send approve log diff pr kill-session run \
		sandbox policy server kill-server demo version config; do
		holt $c --help >out 2>&1 || { echo "$c --help failed"; return 1; }
		grep -q "^usage: holt $c" out ||
			{ echo "$c --help printed no usage"; return 1; }
	done
'

test_expect_success 'holt help COMMAND is COMMAND --help' '
	for c in version help ls sandbox run diff policy config; do
		holt help $c >a &&
		holt $c --help >b &&
		test_cmp a b &&
		grep "^usage: holt $c" a || exit 1
	done
'

test_expect_success '-L takes a name, not a path' '
	test_expect_code 2 holt -L a/b ls 2>err &&
	grep "a name, not a path" err
'

test_done
