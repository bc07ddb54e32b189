#!/bin/sh
# holt.conf: layering, sources, [repo] sections, bad lines.
. "$(dirname "$0")/lib.sh"

conf=$HOLT_HOME/config/holt.conf

test_expect_success 'defaults, with their source' '
	holt config show >out &&
	grep "^steps *= 25 *# default$" out &&
	grep "^mode *= auto *# default$" out
'

test_expect_success 'the file overrides defaults; a [repo] section overrides the file' '
	mkdir -p "$HOLT_HOME/config" repo &&
	repo=$(cd repo && pwd) &&
	cat >"$conf" <<-EOF &&
	# comment
	steps = 40   # trailing comment
	openai_api_key = sk-should-not-show-123
	[repo $repo]
	steps = 7
	test_command = make test
	EOF
	holt config show >out &&
	grep "^steps *= 40 *# .*holt.conf:2$" out &&
	grep "^openai_api_key *= (set, hidden)" out &&
	! grep sk-should-not-show out &&
	holt config show --repo repo >out &&
	grep "^steps *= 7 *# .*holt.conf:5$" out &&
	grep "^test_command *= make test" out
'

test_expect_success 'an unknown key is a warning naming file and line' '
	printf "steps = 40\nfrobnicate = 1\n" >"$conf" &&
	holt config show >out 2>err &&
	grep "holt.conf:2: unknown option .frobnicate." err &&
	grep "^steps *= 40" out
'

test_expect_success 'a bad value refuses to start, naming file and line' '
	printf "mode = auto\nsteps = many\n" >"$conf" &&
	test_expect_code 2 holt ls 2>err &&
	grep "holt.conf:2: steps: .many. is not a number" err &&
	printf "mode = yolo\n" >"$conf" &&
	test_expect_code 2 holt ls 2>err &&
	grep "holt.conf:1: mode: .yolo. is not one of manual|auto|strict|trust" err &&
	printf "this is not a setting\n" >"$conf" &&
	test_expect_code 2 holt ls 2>err &&
	grep "holt.conf:1: expected .key = value." err &&
	printf "price.openai:x = cheap\n" >"$conf" &&
	test_expect_code 2 holt ls 2>err &&
	grep "expected two prices" err &&
	rm "$conf"
'

test_expect_success BWRAP 'a [repo] section applies to sessions of that repository' '
	mkdir -p proj && (cd proj && git init -q -b main . &&
		echo x >f && git add f && git -c user.name=t -c user.email=t@e commit -q -m x) &&
	proj=$(cd proj && pwd) &&
	echo "{ \"turns\": [ { \"tool_calls\": [ { \"name\": \"run_tests\", \"arguments\": {} } ] }, { \"text\": \"done\", \"tool_calls\": [] } ] }" >s.json &&
	cat >"$conf" <<-EOF &&
	steps = 9
	[repo $proj]
	test_command = echo repo-section-tests
	steps = 4
	EOF
	holt run -s sect --repo proj --model script:s.json --headless go >out &&
	grep "repo-section-tests" out &&
	grep "\"steps_cap\":[[:space:]]*4" "$HOLT_HOME/data/sessions/sect/session.json" &&
	rm "$conf"
'

test_done
