# tests/lib-mock-llm.sh: start and stop tests/mock-llm from a test, after
# tests/lib.sh. Use both inside one test_expect_success:
#
#	start_mock script.json [MOCK-ARGS...] &&
#	holt-test-model -b "$MOCK_URL/v1" openai:m >actual &&
#	stop_mock
#
# The mock is stopped when the test ends, also when a command failed.
# start_mock sets MOCK_PID, MOCK_PORT and MOCK_URL (http://127.0.0.1:PORT).
# The mock also exits by itself after --idle-exit seconds without a
# request (10 here), so a failing test never leaves it running.

TEST_MODEL=$HOLT_BUILD_DIR/tests/helper/holt-test-model
export TEST_MODEL

# The mock is on loopback: no proxy may stand in between.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

start_mock() {
	_script=$1
	shift
	rm -f mock.port
	"$TEST_DIRECTORY/mock-llm" --script "$_script" --idle-exit 10 "$@" \
		>mock.port 2>>mock.err &
	MOCK_PID=$!
	_n=50
	while [ $_n -gt 0 ] && ! [ -s mock.port ]; do
		sleep 0.1
		_n=$((_n - 1))
	done
	if ! [ -s mock.port ]; then
		echo "mock-llm did not start" >&2
		cat mock.err >&2
		return 1
	fi
	MOCK_PORT=$(head -n 1 mock.port)
	MOCK_URL=http://127.0.0.1:$MOCK_PORT
	test_when_finished stop_mock
}

# Stopped at the end of the test anyway; stopping it first is fine.
stop_mock() {
	if [ -n "${MOCK_PID:-}" ]; then
		kill "$MOCK_PID" 2>/dev/null
		wait "$MOCK_PID" 2>/dev/null
		MOCK_PID=
	fi
	return 0
}

# A script with one turn per argument: the JSON of each turn.
write_script() {
	_out=$1
	shift
	{
		printf '{"turns": ['
		_sep=
		for _t in "$@"; do
			printf '%s%s' "$_sep" "$_t"
			_sep=,
		done
		printf ']}\n'
	} >"$_out"
}
