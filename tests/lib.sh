# tests/lib.sh: the shell test library (after git's t/test-lib.sh).
#
#	. "$(dirname "$0")/lib.sh"
#	test_expect_success 'title' '
#		holt version >actual &&
#		test_cmp expect actual
#	'
#	test_done
#
# Each script runs in its own trash directory with its own HOLT_HOME and its
# own server socket name (holt -L), so tests never touch a user's sessions
# and scripts can run in parallel. Output is TAP.

set -u
test_name=$(basename "$0" .sh)
: "${HOLT_SRC_DIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${HOLT_BUILD_DIR:=$HOLT_SRC_DIR}"
TEST_DIRECTORY=$HOLT_SRC_DIR/tests
# Builds with --enable-asan: leaks of others' libraries (tests/lsan.supp).
LSAN_OPTIONS="suppressions=$TEST_DIRECTORY/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
TRASH_DIRECTORY=$HOLT_BUILD_DIR/tests/trash.$test_name
export HOLT_SRC_DIR HOLT_BUILD_DIR TEST_DIRECTORY TRASH_DIRECTORY

rm -rf "$TRASH_DIRECTORY"
mkdir -p "$TRASH_DIRECTORY" || exit 1
cd "$TRASH_DIRECTORY" || exit 1

# HOLT_HOME is kept short (unix socket paths are at most 107 bytes, and a
# build directory can be deep); trash/home points to it.
HOLT_HOME=$(mktemp -d "${TMPDIR:-/tmp}/holt-t.XXXXXX") || exit 1
ln -s "$HOLT_HOME" "$TRASH_DIRECTORY/home"
HOLT_SOCKET=t$$
HOME=$TRASH_DIRECTORY
PATH=$HOLT_BUILD_DIR:$HOLT_SRC_DIR/tests:$PATH
LC_ALL=C.UTF-8
unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_RUNTIME_DIR OPENAI_API_KEY \
	ANTHROPIC_API_KEY GITHUB_TOKEN HOLT_GIT_TOKEN TMUX
# The themes of the source tree, for a build outside it.
HOLT_THEMES_DIR=$HOLT_SRC_DIR/themes
export HOLT_THEMES_DIR
# The trash directory is inside holt's own checkout: git must not find it.
GIT_CEILING_DIRECTORIES=$TRASH_DIRECTORY
# A sandbox's files belong to a host uid of its own: the tests' own git
# commands look into workspaces as their owner would (holt's own git work
# opens exact paths and needs no such setting).
GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*'
export HOLT_HOME HOLT_SOCKET HOME PATH LC_ALL GIT_CEILING_DIRECTORIES \
	GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0
mkdir -p "$HOLT_HOME"

test_count=0
test_failed=0
test_skipped=0
test_cleanups=

# Every holt in a test talks to this script's own server. Programs that
# start holt themselves (tmux) use "$HOLT" instead.
HOLT="$HOLT_BUILD_DIR/holt -L $HOLT_SOCKET"
holt() {
	"$HOLT_BUILD_DIR/holt" -L "$HOLT_SOCKET" "$@"
}

# The pid of this script's server, if one runs.
server_pid() {
	pgrep -f "holt -L $HOLT_SOCKET server -f" | head -n 1
}

say() {
	echo "# $*"
}

test_ok_() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1"
}

test_failure_() {
	test_count=$((test_count + 1))
	test_failed=$((test_failed + 1))
	echo "not ok $test_count - $1"
	shift
	printf '%s\n' "$*" | sed -e 's/^/#	/'
}

test_run_() {
	(
		test_body_=1
		test_body_cleanups_=
		trap 'test_rc_=$?
		if [ -n "$test_body_cleanups_" ]; then
			( eval "$test_body_cleanups_" ) >/dev/null 2>&1
		fi
		exit $test_rc_' EXIT
		eval "$1"
	) >"$TRASH_DIRECTORY/.out" 2>&1 </dev/null
	test_rc=$?
	if [ -n "${HOLT_TEST_VERBOSE:-}" ] || [ $test_rc -ne 0 ]; then
		sed -e 's/^/# /' "$TRASH_DIRECTORY/.out" | tail -n 40
	fi
	return $test_rc
}

# A body whose commands are not all joined by && ignores a failure and
# can't fail for it: run with a failure put first, nothing in it may run
# (a background job, "cmd &", breaks the chain too: it is its own command,
# written "{ cmd & } &&").
test_chain_lint_() {
	(
		test_bg_=${!:-}
		eval "(exit 117) && $1"
		test $? -eq 117 && test "${!:-}" = "$test_bg_"
	) >/dev/null 2>&1 </dev/null
}

# test_expect_success [PREREQ] 'title' 'commands'
test_expect_success() {
	if [ $# -eq 3 ]; then
		if ! test_have_prereq "$1"; then
			test_count=$((test_count + 1))
			test_skipped=$((test_skipped + 1))
			echo "ok $test_count # skip $2 (missing $1)"
			return 0
		fi
		shift
	fi
	if ! test_chain_lint_ "$2"; then
		test_failure_ "$1 (broken && chain)" "$2"
	elif test_run_ "$2"; then
		test_ok_ "$1"
	else
		test_failure_ "$1" "$2"
	fi
}

test_expect_failure() {
	if test_run_ "$2"; then
		test_failure_ "$1 (known breakage fixed?)" "$2"
	else
		test_count=$((test_count + 1))
		echo "not ok $test_count - $1 # TODO known breakage"
	fi
}

# npm_install_pinned DIR OKCMD PKG@VERSION...: install npm packages into
# DIR (in the build tree) unless OKCMD says they are there, once: scripts
# running at once wait for each other. npm's output goes to npm.log.
npm_install_pinned() {
	_npm_dir=$1 _npm_ok=$2
	shift 2
	mkdir -p "$_npm_dir" &&
	(
		flock 9
		$_npm_ok ||
		timeout 240 npm install --no-save --prefix "$_npm_dir" \
			--no-audit --no-fund --fetch-retries=1 \
			--fetch-timeout=30000 --loglevel=error "$@" >npm.log 2>&1
	) 9>"$_npm_dir/.lock"
}

# test_set_prereq NAME: a script's own prerequisite (HTTPD, SCREEN...) holds.
test_prereqs=" "
test_set_prereq() {
	test_prereqs="$test_prereqs$1 "
}

test_have_prereq() {
	case "$1" in
	*,*)
		for _p in $(echo "$1" | tr , " "); do
			test_have_prereq "$_p" || return 1
		done
		return 0 ;;
	TMUX) command -v tmux >/dev/null ;;
	BWRAP) command -v bwrap >/dev/null ;;
	ROOT) [ "$(id -u)" = 0 ] ;;
	PYTHON) command -v python3 >/dev/null ;;
	SYSPYTHON) test -x /usr/bin/python3 ;;
	*) case "$test_prereqs" in *" $1 "*) return 0 ;; esac; return 1 ;;
	esac
}

test_cmp() {
	diff -u "$1" "$2"
}

# test_expect_code CODE command...: the command exits with CODE.
# test_line_count OP N FILE: FILE has (OP: = -lt -ge...) N lines.
test_line_count() {
	if test $# != 3; then
		echo "bug: test_line_count OP N FILE" >&2
		return 1
	fi
	if ! test "$(wc -l <"$3")" "$1" "$2"; then
		echo "test_line_count: $3 has $(wc -l <"$3") lines, not $1 $2:" >&2
		cat "$3" >&2
		return 1
	fi
}

test_expect_code() {
	want_=$1
	shift
	"$@"
	got_=$?
	if [ "$got_" != "$want_" ]; then
		echo "expected exit $want_, got $got_: $*" >&2
		return 1
	fi
	return 0
}

test_must_fail() {
	test_might_fail "$@" || return 1
	if [ $rc_ -eq 0 ]; then
		echo "expected failure: $*" >&2
		return 1
	fi
	return 0
}

# Register a command to run when the test ends, whether it failed or not;
# outside a test, when the script ends (servers, sandboxes).
test_when_finished() {
	if [ -n "${test_body_:-}" ]; then
		test_body_cleanups_="$1
$test_body_cleanups_"
	else
		test_cleanups="$1
$test_cleanups"
	fi
}

# test_web_server DIR: a web server on the host's loopback serving DIR
# (/usr/bin/python3), stopped when the script ends; its port in $port.
test_web_server() {
	/usr/bin/python3 -c '
import http.server, socketserver, sys, os
os.chdir(sys.argv[1])
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
	daemon_threads = True
h = http.server.SimpleHTTPRequestHandler
h.log_message = lambda *a: None
s = S(("127.0.0.1", 0), h)
print(s.server_address[1], flush=True)
s.serve_forever()' "$1" >web-port &
	test_when_finished "kill $!"
	test_wait_for 50 "test -s web-port"
	port=$(cat web-port)
}

# test_sandbox_cleanup: every sandbox of this script is removed when it
# ends. test_sandbox_script: the same, for a script that needs bubblewrap
# for all its tests (skipped whole without it).
test_sandbox_cleanup() {
	test_when_finished 'for d in "$HOLT_HOME"/data/sandboxes/sbx-*; do
		holt sandbox rm "${d##*/}"; done'
}

test_sandbox_script() {
	if ! command -v bwrap >/dev/null; then
		echo "1..0 # SKIP bubblewrap (bwrap) is not installed"
		exit 0
	fi
	test_sandbox_cleanup
}


# test_might_fail command...: success or failure are both fine (an attack
# that may be refused either way), death by a signal is not.
test_might_fail() {
	"$@"
	rc_=$?
	if [ $rc_ -gt 128 ] && [ $rc_ -ne 255 ]; then
		echo "died of signal $((rc_ - 128)): $*" >&2
		return 1
	fi
	return 0
}

# A tmux server of this script's own for a full-screen command (holt
# sandbox watch) in session w; screen_wait REGEX waits until its pane
# shows it (10 s at most), else prints the pane and fails.
TMUX_W="tmux -u -f /dev/null -L w$$"
screen_wait() {
	test_wait_for 100 "$TMUX_W capture-pane -p -t w | grep -q \"$1\"" ||
	{ $TMUX_W capture-pane -p -t w; return 1; }
}

# Poll until a command succeeds, at most N tenths of a second.
test_wait_for() {
	n_=$1
	shift
	while [ "$n_" -gt 0 ]; do
		if eval "$*" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.1
		n_=$((n_ - 1))
	done
	echo "timed out waiting for: $*" >&2
	return 1
}

test_done() {
	if [ -n "$test_cleanups" ]; then
		( eval "$test_cleanups" ) >/dev/null 2>&1
	fi
	# Stop this script's server and every sandbox it left running (they
	# are detached: nothing else would ever stop them).
	"$HOLT_BUILD_DIR/holt" -L "$HOLT_SOCKET" kill-server >/dev/null 2>&1
	for _s in "$HOLT_HOME"/data/sandboxes/sbx-*; do
		[ -d "$_s" ] || continue
		"$HOLT_BUILD_DIR/holt" sandbox stop "${_s##*/}" >/dev/null 2>&1
	done
	echo "1..$test_count"
	if [ "$test_failed" -eq 0 ] && [ -z "${HOLT_TEST_KEEP:-}" ]; then
		cd "$HOLT_BUILD_DIR" && rm -rf "$TRASH_DIRECTORY" "$HOLT_HOME" 2>/dev/null
	fi
	[ "$test_failed" -eq 0 ]
	exit $?
}
