#!/bin/sh
# bench/ssh.sh: exec round trip through the ssh provider against
# `ssh HOST true` over the same multiplexed connection, in one run. The
# host is a real sshd on a loopback port (tests/ssh-lib.sh: throwaway
# keys, a HOLT_HOME of its own as the host's holt), so what is compared is
# what holt adds to one ssh session: the relay here, the host's
# holt sandbox bridge, envd. Measured in turns, so that a busy moment of a
# shared machine weighs on all alike; figures are p50s in ms.
#   one connection (a session's path: envd-rtt --sandbox): exec true
#   the CLI (holt sandbox exec ID -- true): start-up, relay, ssh, bridge
: "${HOLT_BUILD_DIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${HOLT_SRC_DIR:=$HOLT_BUILD_DIR}"
rtt=$HOLT_BUILD_DIR/bench/envd-rtt
if ! command -v bwrap >/dev/null || [ ! -x "$rtt" ]; then
	echo "ssh: needs bwrap and bench/envd-rtt (make), skipped"
	exit 0
fi
HOLT_HOME=$(mktemp -d "${TMPDIR:-/tmp}/holt-bench.XXXXXX")
TRASH_DIRECTORY=$HOLT_HOME/t
mkdir -p "$TRASH_DIRECTORY"
export HOLT_HOME TRASH_DIRECTORY HOLT_BUILD_DIR
. "$HOLT_SRC_DIR/tests/ssh-lib.sh"
holt="$HOLT_BUILD_DIR/holt"
trap 'for d in "$HOLT_HOME"/data/sandboxes/sbx-*; do
		"$holt" sandbox rm "${d##*/}" >/dev/null 2>&1; done
	ssh_teardown; rm -rf "$HOLT_HOME"' EXIT
trap 'exit 1' INT TERM HUP PIPE
if ! ssh_setup; then
	echo "ssh: sshd cannot run here, skipped"
	exit 0
fi

p50() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

id=$("$holt" sandbox create --net off --provider "ssh:$SSH_HOST") || exit 1
"$holt" sandbox exec "$id" -- true || exit 1
sock=$(echo "$HOLT_HOME"/run/ssh-*)
ssh="ssh -F $SSH_DIR/ssh_config -o ControlMaster=no -o ControlPath=$sock"
: >"$HOLT_HOME/s1" >"$HOLT_HOME/e1" >"$HOLT_HOME/ec"
turn=0
while [ $turn -lt 5 ]; do
	"$rtt" --run 8 $ssh "$SSH_HOST" true >>"$HOLT_HOME/s1"
	"$rtt" --sandbox "$id" 40 >>"$HOLT_HOME/e1"
	"$rtt" --run 8 "$holt" sandbox exec "$id" -- true >>"$HOLT_HOME/ec"
	turn=$((turn + 1))
done
s1=$(p50 <"$HOLT_HOME/s1")
e1=$(p50 <"$HOLT_HOME/e1")
ec=$(p50 <"$HOLT_HOME/ec")
echo "ssh HOST true (same master)  p50 $s1 ms"
echo "exec true, one connection    ssh provider p50 $e1 ms   $(ratio "$e1" "$s1")x ssh true"
echo "exec true, the CLI           ssh provider p50 $ec ms   $(ratio "$ec" "$s1")x ssh true"
echo "  (the host is sshd on loopback: a real network adds its round trip"
echo "   to each figure alike)"
