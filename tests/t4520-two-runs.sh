#!/bin/sh
# The two-run flow of the Pydantic AI + E2B cookbook, end to end: run 1
# diagnoses a failing Python project and writes diagnosis.md only; the
# sandbox is paused and the first process is gone; run 2 (--resume) fixes
# the code with run 1's history. Then the test restores the trusted test
# file itself, checks the input data was not modified, and runs the tests
# on its own: they pass.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-engine.sh"

test_expect_success BWRAP,PYTHON 'setup: a project whose tests fail' '
	mkdir -p proj/src proj/tests proj/data &&
	(
		cd proj &&
		git init -q -b main . &&
		printf "value\n3\n4\n8\n" >data/input.csv &&
		cat >src/stats.py <<-\EOF &&
		import csv

		def load(path):
		    with open(path) as f:
		        return [float(r["value"]) for r in csv.DictReader(f)]

		def mean(values):
		    return sum(values) / (len(values) + 1)
		EOF
		cat >tests/test_stats.py <<-\EOF &&
		import os, sys, unittest
		sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
		import stats

		class TestStats(unittest.TestCase):
		    def test_mean(self):
		        here = os.path.dirname(__file__)
		        values = stats.load(os.path.join(here, "..", "data", "input.csv"))
		        self.assertEqual(stats.mean(values), 5.0)

		if __name__ == "__main__":
		    unittest.main()
		EOF
		git add . && git -c user.name=t -c user.email=t@e commit -q -m init
	) &&
	cp proj/tests/test_stats.py trusted_test.py &&
	cp proj/data/input.csv input.orig &&
	mkdir -p "$HOLT_HOME/config" &&
	cat >"$HOLT_HOME/config/policy" <<-\EOF &&
	allow ^python3 -m unittest(\s|$)
	write-deny ^(tests|data)/
	write-ask ^src/
	EOF
	cat >flow.json <<-\EOF
	{ "turns": [
	  { "text": "Reading the code.", "tool_calls": [
	      { "name": "read_file", "arguments": { "path": "src/stats.py" } },
	      { "name": "read_file", "arguments": { "path": "tests/test_stats.py" } } ] },
	  { "tool_calls": [ { "name": "run_tests", "arguments": {} } ] },
	  { "expect": { "last_tool_result_contains": "TESTS FAILED" },
	    "tool_calls": [ { "name": "write_file", "arguments": { "path": "diagnosis.md",
	      "content": "# Diagnosis\n\nmean() divides by len(values) + 1; it must divide by len(values).\n" } } ] },
	  { "text": "Diagnosis written to diagnosis.md.", "tool_calls": [] },
	  { "text": "Reading my diagnosis.", "tool_calls": [
	      { "name": "read_file", "arguments": { "path": "diagnosis.md" } } ] },
	  { "expect": { "last_tool_result_contains": "len(values) + 1" },
	    "tool_calls": [ { "name": "edit_file", "arguments": { "path": "src/stats.py",
	      "old_string": "len(values) + 1", "new_string": "len(values)" } } ] },
	  { "tool_calls": [ { "name": "run_tests", "arguments": {} } ] },
	  { "expect": { "last_tool_result_contains": "TESTS PASSED" },
	    "text": "Fixed mean().", "tool_calls": [] } ] }
	EOF
'

test_expect_success BWRAP,PYTHON 'run 1 diagnoses and writes diagnosis.md only' '
	holt run -s flow --repo proj --model script:flow.json \
		--test-command "python3 -m unittest discover -s tests" \
		--headless "Diagnose why the tests fail. Write diagnosis.md only." >run1 &&
	tail -n 1 run1 | grep "\"reason\":\"done\"" &&
	ws=$(ls -d "$HOLT_HOME"/data/sandboxes/sbx-*/workspace) &&
	grep "len(values) + 1" "$ws/diagnosis.md" &&
	grep "len(values) + 1" "$ws/src/stats.py"
'

test_expect_success BWRAP,PYTHON 'the sandbox is paused between the runs' '
	id=$(ls "$HOLT_HOME/data/sandboxes" | grep sbx-) &&
	holt sandbox pause "$id" &&
	holt sandbox ls >ls &&
	grep "$id.*paused" ls
'

test_expect_success BWRAP,PYTHON 'run 2 resumes with run 1 history and fixes the code' '
	echo allow | holt run --resume flow --ask stdin --headless \
		"Now fix the code, using your diagnosis." >run2 &&
	tail -n 1 run2 | grep "\"reason\":\"done\"" &&
	events_of run2 approval.needed | grep "src/stats.py" &&
	ws=$(ls -d "$HOLT_HOME"/data/sandboxes/sbx-*/workspace) &&
	grep "return sum(values) / (len(values))$" "$ws/src/stats.py" &&
	! grep "len(values) + 1" "$ws/src/stats.py"
'

test_expect_success BWRAP,PYTHON 'the trusted test passes on the unmodified input data' '
	ws=$(ls -d "$HOLT_HOME"/data/sandboxes/sbx-*/workspace) &&
	id=$(ls "$HOLT_HOME/data/sandboxes" | grep sbx-) &&
	cp trusted_test.py "$ws/tests/test_stats.py" &&
	test_cmp input.orig "$ws/data/input.csv" &&
	holt sandbox exec "$id" --cwd /workspace -- python3 -m unittest discover -s tests >out 2>&1 &&
	grep "^OK" out
'

test_done
