#!/bin/sh
# The manual pages are well-formed mdoc.
. "$(dirname "$0")/lib.sh"

# mandoc is a build dependency (./bootstrap installs it): missing, it fails.
test_expect_success 'mandoc -Tlint is clean on every page' '
	{ command -v mandoc >/dev/null || { echo "mandoc is missing"; exit 1; }; } &&
	for m in "$HOLT_SRC_DIR"/man/*.[1-8]; do
		mandoc -Tlint -W warning "$m" >lint 2>&1 || { cat lint; exit 1; }
		test ! -s lint || { cat lint; exit 1; }
	done
'

test_expect_success 'holt(1) names every command of holt --help' '
	holt --help | sed -n "s/^  \([a-z-]*\) .*/\1/p" >cmds &&
	test -s cmds &&
	while read c; do
		grep -q "^\.It Ic $c\\b\|^\.It Xo Ic $c\\b\|^\.Ic $c\\b" "$HOLT_SRC_DIR/man/holt.1" ||
			{ echo "holt.1 lacks $c"; exit 1; }
	done <cmds
'

test_done
