#!/bin/sh
# bench/sandbox.sh: the local sandbox against its references, in one run.
#   exec `true` round trip through the CLI vs bwrap --unshare-all ... true
#   create, pause, resume, stop+start
#   streaming 100 MB of stdout vs cat of the same bytes; peak RSS of the
#   CLI and of envd
#   the machine (DESIGN 13): create with the overlay, apt-get install vs
#   the same on the host in a throwaway overlay, 100 MB through the proxy
#   vs direct, 200 connections held and the proxy's RSS
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
echo "exec true (CLI round trip)   p50 $ex ms   bwrap ... true $bw ms   $(ratio "$bw" "$ex")x faster  (budget <= 3 ms and <= floor + 1.5 ms, >= 2x)"
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

# --- the sandbox as a machine (DESIGN 13) ---------------------------------
"$holt" sandbox rm "$id" >/dev/null

# create: the default (overlay root, --net policy with its proxy) and with
# --net off (the overlay alone)
for net in policy off; do
	cr=$(i=0; while [ $i -lt 5 ]; do
		t0=$(now_ns); c=$("$holt" sandbox create --net $net); t1=$(now_ns)
		echo "$t0 $t1" | awk '{ printf "%.3f\n", ($2 - $1) / 1e6 }'
		"$holt" sandbox rm "$c" >/dev/null
		i=$((i + 1)); done | p50)
	echo "create --net $net$( [ $net = off ] && echo "   ")       p50 $cr ms  (budget <= 100 ms)"
done

# apt-get install of a local .deb: in a sandbox (sudo, the overlay) vs on
# the host in a throwaway overlay of /usr /var /etc (unshare -m, as root)
if [ "$(id -u)" = 0 ] && command -v dpkg-deb >/dev/null; then
	d=$HOLT_HOME/deb
	mkdir -p "$d/pkg/DEBIAN" "$d/pkg/usr/bin"
	printf "Package: holt-bench\nVersion: 1.0\nArchitecture: all\nMaintainer: b <b@example.org>\nDescription: b\n" \
		>"$d/pkg/DEBIAN/control"
	printf "#!/bin/sh\necho ok\n" >"$d/pkg/usr/bin/holt-bench"
	chmod 755 "$d/pkg/usr/bin/holt-bench"
	dpkg-deb --build --root-owner-group "$d/pkg" "$d/holt-bench.deb" >/dev/null
	id=$("$holt" sandbox create --name apt --net off) || exit 1
	cp "$d/holt-bench.deb" "$HOLT_HOME/data/sandboxes/$id/workspace/"
	chmod 644 "$HOLT_HOME/data/sandboxes/$id/workspace/holt-bench.deb"
	: >"$HOLT_HOME/apt-in" >"$HOLT_HOME/apt-host"
	i=0
	while [ $i -lt 3 ]; do
		time_ms 1 "$holt" sandbox exec "$id" -- sudo sh -c \
			"apt-get install -y ./holt-bench.deb" >>"$HOLT_HOME/apt-in"
		"$holt" sandbox exec "$id" -- sudo dpkg -r holt-bench >/dev/null 2>&1
		t=$(mktemp -d "$HOLT_HOME/ov.XXXXXX")
		time_ms 1 unshare -m sh -c "cd $d && for x in usr var etc; do
			mkdir -p $t/\$x.u $t/\$x.w &&
			mount -t overlay overlay -o lowerdir=/\$x,upperdir=$t/\$x.u,workdir=$t/\$x.w /\$x ||
			exit 1; done; apt-get install -y ./holt-bench.deb" >>"$HOLT_HOME/apt-host"
		rm -rf "$t"
		i=$((i + 1))
	done
	ai=$(p50 <"$HOLT_HOME/apt-in")
	ah=$(p50 <"$HOLT_HOME/apt-host")
	echo "apt-get install ./x.deb      p50 $ai ms   host, throwaway overlay $ah ms   $(ratio "$ai" "$ah")x  (budget <= 2x)"
	"$holt" sandbox rm "$id" >/dev/null
fi

# The proxy: 100 MB from a server on the host's loopback, through it (the
# registry's name mapped by the test-only hosts file) vs direct; then 200
# connections held through it, and its peak RSS.
if command -v curl >/dev/null && [ -x /usr/bin/python3 ]; then
	w=$HOLT_HOME/www
	mkdir -p "$w"
	head -c 104857600 /dev/zero >"$w/big"
	/usr/bin/python3 -c '
import http.server, socketserver, sys, os
os.chdir(sys.argv[1])
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
	daemon_threads = True
class H(http.server.SimpleHTTPRequestHandler):
	def log_message(self, *a): pass
s = S(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()' "$w" >"$HOLT_HOME/port" &
	web=$!
	while [ ! -s "$HOLT_HOME/port" ]; do sleep 0.1; done
	port=$(cat "$HOLT_HOME/port")
	echo "127.0.0.1 deb.debian.org" >"$HOLT_HOME/hosts"
	id=$(HOLT_PROXY_HOSTS=$HOLT_HOME/hosts "$holt" sandbox create --name px) || exit 1
	curl -s -o /dev/null "http://127.0.0.1:$port/big"
	: >"$HOLT_HOME/px" >"$HOLT_HOME/dx"
	# In turns, five of each: a loaded machine's moments weigh on both.
	i=0
	while [ $i -lt 5 ]; do
		time_ms 1 "$holt" sandbox exec "$id" -- curl -s -o /dev/null \
			"http://deb.debian.org:$port/big" >>"$HOLT_HOME/px"
		time_ms 1 curl -s -o /dev/null "http://127.0.0.1:$port/big" \
			>>"$HOLT_HOME/dx"
		i=$((i + 1))
	done
	px=$(p50 <"$HOLT_HOME/px")
	dx=$(p50 <"$HOLT_HOME/dx")
	echo "100 MB through the proxy     $(awk -v t="$px" 'BEGIN { printf "%.0f", 100000 / t }') MB/s   direct on loopback $(awk -v t="$dx" 'BEGIN { printf "%.0f", 100000 / t }') MB/s   $(awk -v a="$dx" -v b="$px" 'BEGIN { printf "%.0f", 100 * a / b }')% of direct  (budget >= 50%)"
	ppid=$(cut -d" " -f1 "$HOLT_HOME/data/sandboxes/$id/run/proxy.pid")
	"$holt" sandbox exec "$id" -- python3 -c "
import socket, time
held = []
for i in range(200):
	s = socket.create_connection(('127.0.0.1', 3128))
	s.sendall(b'CONNECT deb.debian.org:$port HTTP/1.1\r\n\r\n')
	held.append(s)
for s in held:
	assert s.recv(100).startswith(b'HTTP/1.1 200')
time.sleep(1)
" && echo "  200 connections held: proxy RSS $(awk '/^VmRSS/ { print $2 }' /proc/"$ppid"/status) kB, peak $(awk '/^VmHWM/ { print $2 }' /proc/"$ppid"/status) kB  (budget <= 16 MB)"
	kill $web
	"$holt" sandbox rm "$id" >/dev/null
fi
