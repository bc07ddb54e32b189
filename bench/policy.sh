#!/bin/sh
# The command policy: decisions per second for typical command lines (budget
# 100,000/s on one core) and the time to decide a 100 KB line (budget 10 ms),
# beside one bare pcre2 match of one rule.
b=${HOLT_BUILD_DIR:-.}/bench/policy-bench
if [ ! -x "$b" ]; then
	echo "policy: $b is not built (make)"
	exit 1
fi
"$b" "${POLICY_BENCH_SECONDS:-1}"
