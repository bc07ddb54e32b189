#!/bin/sh
# Checkpoints (DESIGN 15), each beside the reference the issue names:
#  - a checkpoint of a 10,000-file workspace with 10 files changed, and
#    git add -A && git commit of the same change in a copy of the tree;
#  - the rewind of that change (the files alone, and with the sandbox
#    stopped and started again, services and all);
#  - a fork of a workspace with a big file (FORK_MB, 1024), and cp -a of
#    it; reflinks make the copy free where the filesystem has them (an
#    XFS or btrfs loop filesystem, made as root when it can be);
#  - the disk used by 100 checkpoints of a 1 MB file rewritten each step.
# The CLI's start is measured too (checkpoint --list: no scan).
set -u
B=${HOLT_BUILD_DIR:-.}
FORK_MB=${FORK_MB:-1024}
HOLT_HOME=$(mktemp -d)
export HOLT_HOME
REF=$(mktemp -d)
trap 'for d in "$HOLT_HOME"/data/sandboxes/sbx-*; do "$B/holt" sandbox rm "${d##*/}" >/dev/null 2>&1; done; rm -rf "$HOLT_HOME" "$REF"' EXIT
holt() { "$B/holt" "$@"; }
now() { date +%s%N; }
ms() { echo "$1 $2" | awk '{ printf "%.1f", ($2 - $1) / 1e6 }'; }
# The median of N runs of a command, in ms.
median() {
	n=$1
	shift
	for i in $(seq "$n"); do
		a=$(now)
		"$@" >/dev/null 2>&1
		b=$(now)
		ms "$a" "$b"
		echo
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

id=$(holt sandbox create --name bench)
dir=$HOLT_HOME/data/sandboxes/$id
ws=$dir/workspace

# 10,000 files in 100 directories, written on the host side.
python3 - "$ws" <<'PY'
import os, sys
ws = sys.argv[1]
for d in range(100):
    os.makedirs(os.path.join(ws, "src", "d%02d" % d), exist_ok=True)
    for f in range(100):
        with open(os.path.join(ws, "src", "d%02d" % d, "f%03d.c" % f), "w") as fp:
            fp.write("int f%d_%d(void) { return %d; }\n" % (d, f, d * f) * 20)
PY
owner=$(stat -c %u:%g "$ws")
chown -R "$owner" "$ws" 2>/dev/null

change() {	# 10 files, different each round
	python3 - "$1" "$2" <<'PY'
import sys
ws, r = sys.argv[1], sys.argv[2]
for i in range(10):
    with open("%s/src/d%02d/f%03d.c" % (ws, i * 7, i * 9), "a") as fp:
        fp.write("/* round %s */\n" % r)
PY
}

a=$(now); holt sandbox checkpoint bench >/dev/null; b=$(now)
echo "first checkpoint of 10,000 files: $(ms "$a" "$b") ms"
sleep 0.1
floor=$(median 9 holt sandbox checkpoint bench --list)

# The reference: git on a copy of the same tree.
cp -a "$ws" "$REF/ws"
# The copy keeps the sandbox's owners: git must not refuse it.
export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0="*"
git -C "$REF/ws" init -q . && git -C "$REF/ws" add -A &&
	git -C "$REF/ws" -c user.name=b -c user.email=b@b commit -q -m 0

# The checkpoint's own time, inside holt (no process start), from --json.
took() { python3 -c 'import json, sys; print("%.1f" % json.load(sys.stdin)["took_ms"])'; }
ck=""; gt=""; cpu=""; own=""; one=""
for r in 1 2 3 4 5 6 7; do
	change "$ws" "$r"; change "$REF/ws" "$r"
	sleep 0.1	# past the racy window: the cache is trusted, as in use
	a=$(now)
	c=$(/usr/bin/time -o "$REF/time" -f "%U %S" "$B/holt" sandbox checkpoint bench --json)
	b=$(now)
	ck="$ck $(ms "$a" "$b")"
	cpu="$cpu $(awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$REF/time")"
	own="$own $(echo "$c" | took)"
	# The same with its lstats made by the scan alone (one thread).
	change "$ws" "$r-1"
	sleep 0.1
	one="$one $(HOLT_CHECKPOINT_THREADS=1 "$B/holt" sandbox checkpoint bench --json | took)"
	a=$(now)
	(cd "$REF/ws" && git add -A && git -c user.name=b -c user.email=b@b commit -q -m "$r")
	b=$(now)
	gt="$gt $(ms "$a" "$b")"
done
med() { echo "$@" | tr " " "\n" | sed "/^$/d" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { echo "$1 $2" | awk '{ printf "%.2f", ($2 > 0 ? $1 / $2 : 0) }'; }
fsync_ms=$(python3 -c "
import os, time
f = os.open('$REF/fs', os.O_WRONLY | os.O_CREAT | os.O_APPEND)
t = time.time()
for i in range(20):
    os.write(f, b'x' * 200); os.fdatasync(f)
print('%.1f' % ((time.time() - t) / 20 * 1e3))")
echo "checkpoint, 10 of 10,000 files changed: $(med $own) ms inside holt (budget 20 ms); the CLI: $(med $ck) ms wall, $(med $cpu) ms CPU (its start alone: $floor ms)"
echo "  with one thread: $(med $one) ms inside holt (threads/one: $(ratio $(med $own) $(med $one)); CPUs online: $(nproc))"
echo "  of which one sync (the journal of its new objects and list line) makes it durable; one fdatasync here: $fsync_ms ms"
echo "  git add -A && git commit of the same change: $(med $gt) ms (holt/git: $(ratio $(med $own) $(med $gt)) inside holt, $(ratio $(med $ck) $(med $gt)) of the CLI)"

# Rewind of that change: the files alone (stopped), then with stop/start.
last=$(holt sandbox checkpoint bench --list | tail -n 1 | cut -d" " -f1)
prev=$((last - 1))
holt sandbox stop bench
rw=""
for r in 1 2 3 4 5; do
	a=$(now); holt sandbox restore bench $prev; b=$(now)
	rw="$rw $(ms "$a" "$b")"
	holt sandbox restore bench $last
done
# The reference: git checkout of the commit before, and back.
gr=""
for r in 1 2 3 4 5; do
	a=$(now); git -C "$REF/ws" checkout -q HEAD~1 2>/dev/null; b=$(now)
	gr="$gr $(ms "$a" "$b")"
	git -C "$REF/ws" checkout -q - 2>/dev/null
done
echo "rewind of that change, files only (sandbox stopped): $(med $rw) ms (budget 100 ms)"
echo "  git checkout of the commit before: $(med $gr) ms (holt/git: $(ratio $(med $rw) $(med $gr)))"
holt sandbox start bench
rw=""
for r in 1 2 3; do
	a=$(now); holt sandbox restore bench $prev; b=$(now)
	rw="$rw $(ms "$a" "$b")"
	holt sandbox restore bench $last
done
echo "rewind of that change, running sandbox (stop, restore, start): $(med $rw) ms"

# Fork of a big workspace, where the filesystem has reflinks: /tmp's may
# not, so as root an XFS (reflink=1) or btrfs loop filesystem is made for
# it when mkfs.xfs or mkfs.btrfs is there (Debian's xfsprogs, btrfs-progs).
FS=""
loopfs() {
	[ "$(id -u)" = 0 ] && command -v losetup >/dev/null || return 1
	if command -v mkfs.xfs >/dev/null; then
		mk="mkfs.xfs -q -m reflink=1"
	elif command -v mkfs.btrfs >/dev/null; then
		mk="mkfs.btrfs -q"
	else
		return 1
	fi
	FS=$(mktemp -d)
	truncate -s $((FORK_MB * 3 + 1024))M "$FS.img" &&
		$mk "$FS.img" >/dev/null 2>&1 &&
		mount -o loop "$FS.img" "$FS" 2>/dev/null && return 0
	rm -rf "$FS" "$FS.img"
	FS=""
	return 1
}
FHOME=$HOLT_HOME
if loopfs; then
	FHOME=$FS/home
	mkdir "$FHOME"
	fsname="${mk%% *} loop filesystem"
	trap 'for h in "$HOLT_HOME" "$FHOME"; do for d in "$h"/data/sandboxes/sbx-*; do HOLT_HOME=$h "$B/holt" sandbox rm "${d##*/}" >/dev/null 2>&1; done; done; umount "$FS"; rm -rf "$HOLT_HOME" "$REF" "$FS" "$FS.img"' EXIT
else
	fsname="$(stat -f -c %T "$HOLT_HOME") of $HOLT_HOME (no loop filesystem: not root, or no mkfs.xfs/mkfs.btrfs)"
fi
fid=$(HOLT_HOME=$FHOME holt sandbox create --name bigfork)
fws=$FHOME/data/sandboxes/$fid/workspace
head -c $((FORK_MB * 1024 * 1024)) /dev/urandom >"$fws/big.bin"
sleep 0.1	# past the racy window, as a file written a step before
a=$(now); HOLT_HOME=$FHOME holt sandbox checkpoint bigfork >/dev/null; b=$(now)
echo "first checkpoint of ${FORK_MB} MB (hashed and stored once): $(ms "$a" "$b") ms"
a=$(now); HOLT_HOME=$FHOME holt sandbox fork bigfork --name bigfork2 >/dev/null; b=$(now)
fk=$(ms "$a" "$b")
a=$(now); cp -a "$fws" "$fws.cp-a"; sync -f "$fws.cp-a"; b=$(now)
cpa=$(ms "$a" "$b")
reflink=no
touch "$fws.r1" && cp --reflink=always "$fws.r1" "$fws.r2" 2>/dev/null && reflink=yes
echo "fork of a ${FORK_MB} MB workspace: $fk ms (budget 1000 ms with reflinks; on $fsname, reflinks: $reflink)"
echo "  cp -a of it there: $cpa ms (holt/cp -a: $(ratio $fk $cpa))"
rm -rf "$fws.cp-a" "$fws.r1" "$fws.r2"
HOLT_HOME=$FHOME holt sandbox rm bigfork2 >/dev/null
HOLT_HOME=$FHOME holt sandbox rm bigfork >/dev/null

# Disk: 100 checkpoints of one 1 MB file rewritten each step.
did=$(holt sandbox create --name disk)
dws=$HOLT_HOME/data/sandboxes/$did/workspace
for i in $(seq 100); do
	head -c 1048576 /dev/urandom >"$dws/one.bin"
	holt sandbox checkpoint disk >/dev/null
done
store=$(awk 'NR == 1 { s = $6 } /^[+]/ { s += $6 } END { print s }' \
	"$HOLT_HOME/data/sandboxes/$did/checkpoints/list")
du=$(du -sk "$HOLT_HOME/data/sandboxes/$did/checkpoints" | cut -f1)
echo "100 checkpoints of a 1 MB file rewritten each step: $((store / 1048576)) MB of objects, $((du / 1024)) MB on disk with the journal and index (budget 110 MB; the 100 versions themselves: 100 MB; on disk/versions: $(ratio $du 102400))"
