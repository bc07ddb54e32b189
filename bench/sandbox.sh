#!/bin/sh
# bench/sandbox.sh: the local sandbox against its references, in one run.
#   exec `true` round trip through the CLI vs bwrap --unshare-all ... true
#   create, pause, resume, stop+start
#   streaming 100 MB of stdout vs cat of the same bytes; peak RSS of the
#   CLI and of envd
# Figures are medians (p50) of several runs, in ms unless said.
: "${HOLT_BUILD_DIR:=$(cd "$(dirname "$0")/.." && pwd)}"
if ! command -v bwrap >/dev/null; then
	echo "sandbox: bubblewrap (bwrap) is not installed, skipped"
	exit 0
fi
HOLT_HOME=$(mktemp -d "${TMPDIR:-/tmp}/holt-bench.XXXXXX")
export HOLT_HOME
holt="$HOLT_BUILD_DIR/holt"
trap 'for d in "$HOLT_HOME"/data/sandboxes/sbx-*; do
	"$holt" sandbox rm "${d##*/}" >/dev/null 2>&1; done; rm -rf "$HOLT_HOME"' EXIT

now_ns() { date +%s%N; }

# p50 of the numbers on stdin
p50() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# time_ms N CMD...: run CMD N times, print each duration in ms (3 decimals)
time_ms() {
	_n=$1
	shift
	while [ "$_n" -gt 0 ]; do
		_t0=$(now_ns)
		"$@" >/dev/null 2>&1 </dev/null
		_t1=$(now_ns)
		echo "$_t0 $_t1" | awk '{ printf "%.3f\n", ($2 - $1) / 1e6 }'
		_n=$((_n - 1))
	done
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

id=$("$holt" sandbox create --name bench) || exit 1

# exec true (timed by envd-rtt --run when it is built: forking date(1)
# around each run costs more than an exec)
rtt="$HOLT_BUILD_DIR/bench/envd-rtt"
run50() {
	_n=$1
	shift
	if [ -x "$rtt" ]; then
		"$rtt" --run "$_n" "$@"
	else
		time_ms "$_n" "$@" | p50
	fi
}
"$holt" sandbox exec "$id" -- true
# In turns, so that a busy moment of a shared machine weighs on each of
# them alike: the p50 of each turn's p50.
: >"$HOLT_HOME/ex" >"$HOLT_HOME/bw" >"$HOLT_HOME/ver" >"$HOLT_HOME/tru"
turn=0
while [ $turn -lt 5 ]; do
	run50 10 "$holt" sandbox exec "$id" -- true >>"$HOLT_HOME/ex"
	run50 4 bwrap --unshare-all --new-session --die-with-parent \
		--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib \
		--symlink usr/lib64 /lib64 --proc /proc --dev /dev -- /bin/true \
		>>"$HOLT_HOME/bw"
	run50 10 "$holt" version >>"$HOLT_HOME/ver"
	run50 10 /bin/true >>"$HOLT_HOME/tru"
	turn=$((turn + 1))
done
ex=$(p50 <"$HOLT_HOME/ex")
bw=$(p50 <"$HOLT_HOME/bw")
ver=$(p50 <"$HOLT_HOME/ver")
tru=$(p50 <"$HOLT_HOME/tru")
echo "exec true (CLI round trip)   p50 $ex ms   bwrap ... true $bw ms   $(ratio "$bw" "$ex")x faster  (budget <= 3 ms, >= 4x)"
echo "  of which holt's own start-up (holt version) p50 $ver ms"
# The floor: the measurement itself starts two programs, the CLI and true.
floor=$(awk -v t="$tru" 'BEGIN { printf "%.3f", 2 * t }')
echo "  floor: two program starts (the CLI's, true's), 2 x $tru ms = $floor ms: bwrap is $(ratio "$bw" "$floor")x that"
# The same sandbox as holt's (its mounts and options), made for one command:
# bwrap's arguments from the running sandbox, without the descriptors.
envd=$(cut -d" " -f1 "$HOLT_HOME/data/sandboxes/$id/run/envd.pid")
bpid=$(awk '/^PPid:/ { print $2 }' /proc/"$envd"/status 2>/dev/null)
if [ -n "$bpid" ] && [ -r /proc/"$bpid"/cmdline ]; then
	tr '\0' '\n' </proc/"$bpid"/cmdline | awk '
		NR == 1 { next }
		skip { skip = 0; next }
		/^--(seccomp|info-fd|userns|sync-fd|block-fd|json-status-fd)$/ {
			skip = 1; next }
		/^--$/ { exit }
		{ print }' >"$HOLT_HOME/bwrap.args"
	set --
	while IFS= read -r a; do
		set -- "$@" "$a"
	done <"$HOLT_HOME/bwrap.args"
	if bwrap "$@" -- /bin/true >/dev/null 2>&1; then
		bwf=$(run50 20 bwrap "$@" -- /bin/true)
		echo "  bwrap with holt's own sandbox options ... true $bwf ms: exec is $(ratio "$bwf" "$ex")x faster"
	fi
	set --
fi
if [ -x "$HOLT_BUILD_DIR/bench/envd-rtt" ]; then
	rtt=$("$HOLT_BUILD_DIR/bench/envd-rtt" \
		"$HOLT_HOME/data/sandboxes/$id/run/envd.sock" 200)
	echo "exec true, one envd connection (the server's path)  p50 $rtt ms   $(ratio "$bw" "$rtt")x faster than bwrap"
fi

# create
cr=$(i=0; while [ $i -lt 5 ]; do
	t0=$(now_ns); c=$("$holt" sandbox create); t1=$(now_ns)
	echo "$t0 $t1" | awk '{ printf "%.3f\n", ($2 - $1) / 1e6 }'
	"$holt" sandbox rm "$c" >/dev/null
	i=$((i + 1)); done | p50)
echo "create                       p50 $cr ms  (budget <= 100 ms)"

# pause, resume
pa=$(i=0; while [ $i -lt 10 ]; do
	run50 1 "$holt" sandbox pause "$id"
	"$holt" sandbox resume "$id"
	i=$((i + 1)); done | p50)
re=$(i=0; while [ $i -lt 10 ]; do
	"$holt" sandbox pause "$id"
	run50 1 "$holt" sandbox resume "$id"
	i=$((i + 1)); done | p50)
echo "pause                        p50 $pa ms  (budget <= 50 ms)"
echo "resume                       p50 $re ms  (budget <= 50 ms)"

# stop + start
ss=$(i=0; while [ $i -lt 5 ]; do
	t0=$(now_ns)
	"$holt" sandbox stop "$id" && "$holt" sandbox start "$id"
	t1=$(now_ns)
	echo "$t0 $t1" | awk '{ printf "%.3f\n", ($2 - $1) / 1e6 }'
	i=$((i + 1)); done | p50)
echo "stop+start                   p50 $ss ms  (budget <= 150 ms)"

# stream 100 MB: a fresh sandbox, so envd's peak RSS is this test's
"$holt" sandbox rm "$id" >/dev/null
id=$("$holt" sandbox create --name bench2) || exit 1
ws="$HOLT_HOME/data/sandboxes/$id/workspace"
yes "the quick brown fox jumps over the lazy dog 0123456789" |
	head -c 104857600 >"$ws/big"
cat "$ws/big" >/dev/null
envd=$(cut -d" " -f1 "$HOLT_HOME/data/sandboxes/$id/run/envd.pid")
t0=$(now_ns)
/usr/bin/time -f %M -o "$HOLT_HOME/cli.rss" \
	"$holt" sandbox exec "$id" -- cat /workspace/big >/dev/null
t1=$(now_ns)
t2=$(now_ns)
cat "$ws/big" >/dev/null
t3=$(now_ns)
mbs=$(echo "$t0 $t1" | awk '{ printf "%.0f", 100 / (($2 - $1) / 1e9) }')
cmbs=$(echo "$t2 $t3" | awk '{ printf "%.0f", 100 / (($2 - $1) / 1e9) }')
cli=$(cat "$HOLT_HOME/cli.rss")
ehwm=$(awk '/^VmHWM/ { print $2 }' /proc/"$envd"/status)
echo "stream 100 MB                $mbs MB/s   cat $cmbs MB/s   $(ratio "$cmbs" "$mbs")x slower than cat  (budget >= 200 MB/s)"
echo "  peak RSS: CLI $((cli / 1024)) MB, envd $((ehwm / 1024)) MB  (budget <= 16 MB)"
