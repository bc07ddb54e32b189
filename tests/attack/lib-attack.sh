# tests/attack/lib-attack.sh: what the isolation tests (tests/t2*.sh) share,
# sourced after tests/lib.sh.
#
#	sandbox_new [CREATE-OPTION...]
#		create a sandbox, print its id, remove it when the script
#		ends, and install the attack program as /workspace/holt-attack
#		in it (tests run in subshells: keep the id in a file)
#	attack ID ATTACK [ARG...]	run holt-attack inside sandbox ID
#	host_attack ATTACK [ARG...]	run the same attack on the host
#	host_pids MARKER		host pids whose command line has MARKER
#	kill_marked MARKER		SIGKILL them (cleanup after a failure)
#
# Every attack prints "ATTACK: ok" when the operation worked and
# "ATTACK: ERRNO" when it failed; the tests compare those lines.

ATTACK=$HOLT_BUILD_DIR/tests/attack/holt-attack
if ! [ -x "$ATTACK" ]; then
	echo "Bail out! $ATTACK is missing: build it with 'make check'"
	exit 1
fi
if ! command -v bwrap >/dev/null; then
	echo "1..0 # SKIP bubblewrap (bwrap) is not installed"
	exit 0
fi

# Sandboxes are removed at the end even when they were created in a test's
# subshell, where test_when_finished does not reach; a second try, should
# the binary be being rebuilt at that moment, and as a last resort holt-envd
# (pid 1 of the sandbox: its pid namespace dies with it) is killed by pid,
# once its command line shows it is this sandbox's envd (not a reused pid).
: >"$TRASH_DIRECTORY/.sandboxes"
test_when_finished 'for _id in $(cat "$TRASH_DIRECTORY/.sandboxes"); do
	holt sandbox rm "$_id" || { sleep 2; holt sandbox rm "$_id"; } ||
	{ read _pid _start <"$HOLT_HOME/data/sandboxes/$_id/run/envd.pid" &&
		test "$_pid" -gt 1 &&
		tr "\0" " " </proc/$_pid/cmdline | grep -q "holt-envd.* $_id" &&
		kill -9 "$_pid"; }
done'

sandbox_new() {
	_id=$(holt sandbox create "$@") || return 1
	test -n "$_id" || return 1
	echo "$_id" >>"$TRASH_DIRECTORY/.sandboxes"
	holt sandbox put "$_id" "$ATTACK" /workspace/holt-attack >&2 ||
		return 1
	holt sandbox exec "$_id" -- chmod 755 /workspace/holt-attack >&2 ||
		return 1
	echo "$_id"
}

attack() {
	_id=$1
	shift
	holt sandbox exec "$_id" -- /workspace/holt-attack "$@"
}

host_attack() {
	"$ATTACK" "$@"
}

# A process is listed when one of its arguments is exactly MARKER. The
# pattern given to grep is "^MARKER$", which is not MARKER: grep never
# lists itself.
host_pids() {
	grep -lz -- "^$1\$" /proc/[0-9]*/cmdline 2>/dev/null |
		sed -e "s|^/proc/||" -e "s|/cmdline$||"
	return 0
}

kill_marked() {
	for _p in $(host_pids "$1"); do
		kill -9 "$_p" 2>/dev/null
	done
	return 0
}
