#!/bin/sh
# Checkpoints of a sandbox's files (holt sandbox checkpoint / restore /
# fork): exact (untracked, ignored, deleted, modes, symlinks, hard links,
# FIFOs, empty directories, /home/user), incremental, deduplicated,
# bounded by checkpoint_max, safe against a hostile tree, and whole
# across a kill -9 in the middle of a restore.
. "$(dirname "$0")/lib.sh"

test_sandbox_script

# An XFS loop filesystem with reflinks can be made (root, mkfs.xfs).
[ "$(id -u)" = 0 ] && command -v mkfs.xfs >/dev/null &&
	command -v losetup >/dev/null && test_set_prereq XFS

# Everything a checkpoint must keep, as text: type, mode, size, link
# target, link count, content hash, and which names share an inode.
tree_state() {
	(
		cd "$1" &&
		find workspace home -maxdepth 0 -printf "%p %y %m\n" &&
		find workspace home -mindepth 1 -printf "%p %y %m %s %l %n\n" |
			LC_ALL=C sort &&
		find workspace home -type f -exec md5sum {} + | LC_ALL=C sort -k 2 &&
		find workspace home -type f -links +1 -printf "%i %p\n" | LC_ALL=C sort |
			awk "{ if (\$1 == last) print prev, \$2; last = \$1; prev = \$2 }"
	)
}

sbx() {
	holt sandbox exec cp -- sh -c "$1"
}

test_expect_success 'setup: a sandbox with every kind of file' '
	holt sandbox create --name cp >id &&
	dir="$HOLT_HOME/data/sandboxes/$(cat id)" &&
	echo "$dir" >dir &&
	sbx "cd /workspace && git init -q . && printf \"*.log\nbuild/\n\" >.gitignore &&
		mkdir -p src/deep/er empty build && echo main >src/main.c &&
		echo ignored >debug.log && echo obj >build/out.o &&
		printf \"#!/bin/sh\necho hi\n\" >run.sh && chmod 750 run.sh &&
		chmod 600 src/main.c && chmod 711 src/deep &&
		ln -s src/main.c link && ln -s /etc/passwd abs-link &&
		ln -s nowhere dangling && echo same >h1 && ln h1 src/h2 &&
		mkfifo pipe && printf \"a b\" >\"name with space\" &&
		printf \"nl\" >\"$(printf \"new\nline\")\" && echo rc >/home/user/.bashrc &&
		head -c 200000 /dev/urandom >big.bin" &&
	tree_state "$dir" >state1 &&
	holt sandbox checkpoint cp >ck1 &&
	grep "^1 " ck1
'

test_expect_success 'a second checkpoint with nothing changed stores nothing' '
	sleep 0.1 &&
	holt sandbox checkpoint cp --json >ck1b &&
	grep "\"changed\":0," ck1b &&
	grep "\"bytes\":0," ck1b &&
	grep -E "\"took_ms\":[0-9.]+}" ck1b &&
	holt sandbox checkpoint cp --list --json >list &&
	! grep took_ms list
'

test_expect_success 'the agent changes everything; checkpoint 3 holds the new state' '
	dir=$(cat dir) &&
	sbx "cd /workspace && rm -rf src/deep empty build debug.log && echo changed >>src/main.c &&
		chmod 755 src/main.c && rm link && ln -s run.sh link && rm h1 &&
		mkdir -p new/dir && echo new >new/dir/f && rm pipe && mkdir pipe &&
		echo x >>big.bin && echo rc2 >/home/user/.bashrc && mkdir /home/user/.cache" &&
	tree_state "$dir" >state3 &&
	! test_cmp state1 state3 &&
	holt sandbox checkpoint cp --json >ck3 &&
	grep "\"checkpoint\":3," ck3
'

test_expect_success 'restore 1: every file, mode, link and empty directory as it was' '
	dir=$(cat dir) &&
	holt sandbox restore cp 1 &&
	tree_state "$dir" >after1 &&
	test_cmp state1 after1 &&
	holt sandbox exec cp -- cat /workspace/src/main.c /home/user/.bashrc >out &&
	printf "main\nrc\n" >expect && test_cmp expect out
'

test_expect_success 'restore 3: forward again, exactly' '
	dir=$(cat dir) &&
	holt sandbox restore cp 3 &&
	tree_state "$dir" >after3 &&
	test_cmp state3 after3
'

test_expect_success 'a service is restarted after a restore, on the restored files' '
	holt sandbox service cp create tick -- sh -c "while :; do cat /workspace/src/main.c >/workspace/tick.out; sleep 0.1; done" &&
	test_wait_for 50 "grep changed \"$(cat dir)/workspace/tick.out\"" &&
	holt sandbox checkpoint cp >ck4 &&
	holt sandbox restore cp 1 &&
	test_wait_for 50 "test \"\$(cat \"$(cat dir)/workspace/tick.out\")\" = main" &&
	holt sandbox service cp ls >svc && grep tick svc &&
	holt sandbox service cp stop tick
'

test_expect_success 'unknown checkpoints and bad numbers are clear errors' '
	test_expect_code 2 holt sandbox restore cp 99 2>err &&
	grep "checkpoint 99: no such checkpoint" err &&
	test_expect_code 2 holt sandbox restore cp x1 2>err &&
	grep "checkpoint .x1.: a checkpoint number" err &&
	test_expect_code 2 holt sandbox restore nosuch 1 2>err &&
	grep "nosuch" err
'

test_expect_success 'a symlink the agent plants is never followed out of the sandbox' '
	dir=$(cat dir) &&
	mkdir -p victim && echo precious >victim/keep &&
	sbx "mkdir -p /workspace/out && echo inside >/workspace/out/f" &&
	holt sandbox checkpoint cp --json >ck &&
	n=$(sed "s/.*\"checkpoint\":\([0-9]*\),.*/\1/" ck) &&
	rm -rf "$dir/workspace/out" &&
	ln -s "$PWD/victim" "$dir/workspace/out" &&
	ln -s "$PWD/victim/keep" "$dir/workspace/src/main.c.lnk" &&
	holt sandbox checkpoint cp >/dev/null &&
	holt sandbox restore cp $n &&
	test -d "$dir/workspace/out" && ! test -L "$dir/workspace/out" &&
	echo inside >expect && test_cmp expect "$dir/workspace/out/f" &&
	! test -e "$dir/workspace/src/main.c.lnk" &&
	echo precious >expect && test_cmp expect victim/keep &&
	ls victim >list && echo keep >expect && test_cmp expect list
'

test_expect_success 'a deep tree, names with any byte, a file replaced by a directory' '
	dir=$(cat dir) &&
	sbx "cd /workspace && p=d; i=0; while [ \$i -lt 60 ]; do p=\$p/d; i=\$((i+1)); done; mkdir -p \$p && echo deep >\$p/f &&
		printf x >\"$(printf "\001\002%%25")\" && echo file >turn" &&
	tree_state "$dir" >s1 &&
	holt sandbox checkpoint cp --json >ck &&
	n=$(sed "s/.*\"checkpoint\":\([0-9]*\),.*/\1/" ck) &&
	sbx "cd /workspace && rm -rf d turn && mkdir -p turn/x && echo y >d" &&
	holt sandbox restore cp $n &&
	tree_state "$dir" >s2 &&
	test_cmp s1 s2
'

test_expect_success 'incremental and deduplicated: one changed file costs its bytes' '
	sbx "cd /workspace && i=0; while [ \$i -lt 2000 ]; do mkdir -p many/\$((i % 20)) && echo \$i >many/\$((i % 20))/f\$i; i=\$((i+1)); done" &&
	holt sandbox checkpoint cp --json >a &&
	sleep 0.1 &&
	holt sandbox checkpoint cp --json >a2 &&
	grep "\"changed\":0," a2 &&
	sbx "echo changed >>/workspace/many/7/f7" &&
	holt sandbox checkpoint cp --json >b &&
	grep "\"changed\":1," b &&
	bytes=$(sed "s/.*\"bytes\":\([0-9]*\).*/\1/" b) &&
	test "$bytes" -lt 30000 &&
	sbx "cp /workspace/big.bin /workspace/big2.bin" &&
	holt sandbox checkpoint cp --json >c &&
	bytes=$(sed "s/.*\"bytes\":\([0-9]*\).*/\1/" c) &&
	test "$bytes" -lt 100000
'

# The stat cache with the times it read things masked (the rest is what
# the scan saw): its header's generation, each directory's scanned and
# each entry's hashed (struct index_dir and index_ent).
index_masked() {
	python3 - "$1" <<-\PY
	import struct, sys
	b = bytearray(open(sys.argv[1], "rb").read())
	head = len(b"holt-index 3\n")
	b[head:head + 8] = bytes(8)
	b[-8:] = bytes(8)
	n = struct.unpack_from("<Q", b, head + 24)[0]
	p = head + 32
	for _ in range(n):
	    b[p + 32:p + 40] = bytes(8)
	    ne = struct.unpack_from("<Q", b, p + 40)[0]
	    plen = struct.unpack_from("<I", b, p + 112)[0]
	    p += 120 + plen + 1
	    for _ in range(ne):
	        b[p + 56:p + 64] = bytes(8)
	        nlen = struct.unpack_from("<I", b, p + 68)[0]
	        p += 144 + nlen + 1
	assert p == len(b) - 8, "index not parsed whole"
	sys.stdout.write(b.hex() + "\n")
	PY
}

# A checkpoint of the sandbox cp with HOLT_CHECKPOINT_THREADS=$1, from
# the store saved in ck-before, into the files NAME.*.
checkpoint_with() {
	dir=$(cat dir) &&
	rm -rf "$dir/checkpoints" && cp -a ck-before "$dir/checkpoints" &&
	HOLT_CHECKPOINT_THREADS=$1 holt sandbox checkpoint cp --json >"$2.json" &&
	sed "s/\"time_ms\":[0-9]*,//; s/,\"took_ms\":.*}/}/" "$2.json" >"$2.out" &&
	awk "/^[+]/ { \$3 = \"\" } { print }" "$dir/checkpoints/list" >"$2.list" &&
	index_masked "$dir/checkpoints/index" >"$2.index" &&
	(cd "$dir/checkpoints/objects" && find . | LC_ALL=C sort) >"$2.objects"
}

test_expect_success 'several threads scan a tree to the checkpoint one makes' '
	dir=$(cat dir) &&
	sbx "cd /workspace && i=0; while [ \$i -lt 60 ]; do echo \$i >>many/\$((i % 20))/f\$i; i=\$((i+1)); done &&
		mkdir -p many/new/a/b && echo n >many/new/a/b/n && rm -rf many/3 && ln -s ../run.sh many/5/l &&
		i=0; while [ \$i -lt 300 ]; do mkdir -p wide/\$i/x && echo \$i >wide/\$i/x/f; i=\$((i+1)); done" &&
	sleep 0.1 &&
	rm -rf ck-before && cp -a "$dir/checkpoints" ck-before &&
	checkpoint_with 1 one &&
	checkpoint_with 4 four &&
	checkpoint_with "" default &&
	grep "\"changed\":4[0-9][0-9]," one.json &&
	for f in out list index objects; do
		test_cmp one.$f four.$f && test_cmp one.$f default.$f || return 1
	done &&
	sleep 0.1 &&
	holt sandbox checkpoint cp --json >again &&
	grep "\"changed\":0," again
'

test_expect_success 'a torn or foreign stat cache is dropped, and the files read again' '
	dir=$(cat dir) &&
	commit_of() { sed "s/.*\"commit\":\"\([0-9a-f]*\)\".*/\1/" "$1"; } &&
	holt sandbox checkpoint cp --json >a &&
	idx="$dir/checkpoints/index" &&
	truncate -s $(($(stat -c %s "$idx") / 2)) "$idx" &&
	holt sandbox checkpoint cp --json >b &&
	test "$(commit_of a)" = "$(commit_of b)" &&
	! grep "\"changed\":0," b &&
	printf "holt-index 2 0 0 0\nend 0 0\n" >"$idx" &&
	holt sandbox checkpoint cp --json >c &&
	test "$(commit_of a)" = "$(commit_of c)" &&
	holt sandbox checkpoint cp --json >d &&
	grep "\"changed\":0," d
'

test_expect_success 'after a reboot the journal gives back what the disk lost' '
	dir=$(cat dir) &&
	sbx "echo journalled >/workspace/j.txt" &&
	holt sandbox checkpoint cp --json >j &&
	h=$(printf "journalled\n" | sha256sum | cut -c1-64) &&
	obj="$dir/checkpoints/objects/$(echo $h | cut -c1-2)/$(echo $h | cut -c3-)" &&
	# Records follow the bytes of the one before, not a newline.
	test -s "$obj" && grep -a -q "o $h 11$" "$dir/checkpoints/journal" &&
	# A reboot before writeback: the object torn, the boot another one.
	: >"$obj" &&
	sed -i "1s/.*/holt-journal 1 00000000-0000-0000-0000-000000000000/" \
		"$dir/checkpoints/journal" &&
	# The list lost its last line (the journal holds it), and an append
	# was cut short: not a checkpoint.
	n=$(sed "s/.*\"checkpoint\":\([0-9]*\),.*/\1/" j) &&
	tail -n 1 "$dir/checkpoints/list" | grep "^+$n " &&
	sed -i "\$d" "$dir/checkpoints/list" &&
	printf "+99 abc" >>"$dir/checkpoints/list" &&
	holt sandbox checkpoint cp --list >l 2>err &&
	grep "before a reboot" err &&
	! grep "^99 " l && grep "^$n " l &&
	echo journalled >expect && test_cmp expect "$obj" &&
	! test -s "$dir/checkpoints/journal" &&
	holt sandbox checkpoint cp >/dev/null &&
	holt sandbox checkpoint cp --list >l &&
	! grep "^+99 abc" "$dir/checkpoints/list" &&
	test $(tail -n 1 l | cut -d" " -f1) = $(($(tail -n 2 l | head -n 1 | cut -d" " -f1) + 1))
'

test_expect_success 'kill -9 in the middle of a restore: the next one finishes it whole' '
	dir=$(cat dir) &&
	tree_state "$dir" >now &&
	holt sandbox checkpoint cp --json >ck &&
	new=$(sed "s/.*\"checkpoint\":\([0-9]*\),.*/\1/" ck) &&
	{ HOLT_TEST_RESTORE_STOP=3 $HOLT sandbox restore cp 1 & } &&
	pid=$! &&
	test_wait_for 100 "grep -q \"^State:.*T\" /proc/$pid/status" &&
	tree_state "$dir" >mixed &&
	kill -9 $pid &&
	test_expect_code 137 wait $pid &&
	! test_cmp state1 mixed &&
	! test_cmp now mixed &&
	test -f "$dir/checkpoints/restore" &&
	holt sandbox restore cp $new &&
	! test -f "$dir/checkpoints/restore" &&
	tree_state "$dir" >whole &&
	test_cmp now whole
'

test_expect_success 'fork: a new sandbox with the same files, independent of the first' '
	dir=$(cat dir) &&
	holt sandbox fork cp --name cp2 >id2 &&
	dir2="$HOLT_HOME/data/sandboxes/$(cat id2)" &&
	tree_state "$dir" >orig &&
	tree_state "$dir2" >copy &&
	test_cmp orig copy &&
	holt sandbox exec cp2 -- sh -c "echo fork-only >/workspace/fork.txt" &&
	! test -e "$dir/workspace/fork.txt" &&
	holt sandbox exec cp -- sh -c "echo orig-only >/workspace/orig.txt" &&
	! test -e "$dir2/workspace/orig.txt" &&
	holt sandbox ls >ls && grep cp2 ls &&
	grep "\"forked_from\":[[:space:]]*\"$(cat id)\"" "$dir2/meta.json"
'

test_expect_success 'fork --at: the files of an older checkpoint, services restarted in the copy' '
	holt sandbox service cp create tock -- sh -c "while :; do date +%s%N >/workspace/tock.out; sleep 0.1; done" &&
	holt sandbox fork cp --at 1 --name cp3 >id3 &&
	dir3="$HOLT_HOME/data/sandboxes/$(cat id3)" &&
	holt sandbox exec cp3 -- cat /workspace/src/main.c >out &&
	echo main >expect && test_cmp expect out &&
	holt sandbox service cp3 ls >svc && grep tock svc &&
	test_wait_for 50 "test -s \"$dir3/workspace/tock.out\"" &&
	holt sandbox service cp stop tock &&
	holt sandbox service cp3 stop tock &&
	holt sandbox checkpoint cp3 --list >l3 &&
	grep "^1 " l3
'

test_expect_success 'checkpoint_max prunes the oldest checkpoints and their objects' '
	dir=$(cat dir) &&
	holt sandbox checkpoint cp --list >before &&
	test $(wc -l <before) -gt 3 &&
	mkdir -p "$HOLT_HOME/config" &&
	echo "checkpoint_max = 1M" >"$HOLT_HOME/config/holt.conf" &&
	i=0 && while [ $i -lt 5 ]; do
		sbx "head -c 400000 /dev/urandom >/workspace/churn" &&
		holt sandbox checkpoint cp >/dev/null || exit 1
		i=$((i+1))
	done &&
	holt sandbox checkpoint cp --list >after &&
	test $(wc -l <after) -lt 5 &&
	# The header total, and lines appended since ("+") add theirs.
	used=$(awk "NR == 1 { s = \$6 } /^[+]/ { s += \$6 } END { print s }" \
		"$dir/checkpoints/list") &&
	test "$used" -le 1048576 &&
	objs=$(find "$dir/checkpoints/objects" -type f -printf "%s\n" |
		awk "{ s += \$1 } END { print s }") &&
	test "$objs" = "$used" &&
	last=$(tail -n 1 after | cut -d" " -f1) &&
	holt sandbox restore cp $last &&
	rm "$HOLT_HOME/config/holt.conf"
'

test_expect_success 'the root overlay: what root installs and deletes is put back, owners too' '
	sbx "sudo sh -c \"echo new >/etc/holt-new && rm /etc/issue && mkdir -p /opt/x && echo y >/opt/x/y\"" &&
	sbx "ls -ln /etc/holt-new /opt/x/y | cut -d\" \" -f3,4; test -e /etc/issue || echo no-issue" >want &&
	holt sandbox checkpoint cp --json >ck &&
	n=$(sed "s/.*\"checkpoint\":\([0-9]*\),.*/\1/" ck) &&
	sbx "sudo sh -c \"rm -rf /opt/x /etc/holt-new && echo back >/etc/issue\"" &&
	holt sandbox restore cp $n &&
	sbx "ls -ln /etc/holt-new /opt/x/y | cut -d\" \" -f3,4; test -e /etc/issue || echo no-issue" >got &&
	test_cmp want got &&
	printf "0 0\n0 0\nno-issue\n" >expect && test_cmp expect got &&
	! test -e "$(cat dir)/checkpoints/restore"
'

test_expect_success XFS 'with reflinks, a checkpoint and a fork share the blocks of a file' '
	img=$(mktemp) && mnt=$(mktemp -d) &&
	test_when_finished "for s in rl2 rl; do HOLT_HOME=$mnt/home $HOLT sandbox rm \$s; done >/dev/null 2>&1; umount $mnt; rm -rf $mnt $img" &&
	truncate -s 1G "$img" && mkfs.xfs -q -m reflink=1 "$img" &&
	mount -o loop "$img" "$mnt" && mkdir "$mnt/home" &&
	HOLT_HOME=$mnt/home holt sandbox create --name rl >/dev/null &&
	ws=$(echo "$mnt"/home/data/sandboxes/sbx-*/workspace) &&
	head -c 100000000 /dev/urandom >"$ws/big.bin" &&
	before=$(df --output=used -B1M "$mnt" | tail -n 1) &&
	HOLT_HOME=$mnt/home holt sandbox checkpoint rl >/dev/null &&
	HOLT_HOME=$mnt/home holt sandbox fork rl --name rl2 >id2 &&
	after=$(df --output=used -B1M "$mnt" | tail -n 1) &&
	# Copies would take 200 MB more: clones take next to nothing.
	test $((after - before)) -lt 30 &&
	ws2="$mnt/home/data/sandboxes/$(cat id2)/workspace" &&
	cmp "$ws/big.bin" "$ws2/big.bin" &&
	echo more >>"$ws2/big.bin" &&
	test $(stat -c %s "$ws/big.bin") = 100000000
'

test_expect_success 'help and usage' '
	holt sandbox checkpoint --help >out && grep "usage: holt sandbox checkpoint ID" out &&
	holt sandbox restore --help >out && grep "usage: holt sandbox restore ID CHECKPOINT" out &&
	holt sandbox fork --help >out && grep "usage: holt sandbox fork ID" out &&
	test_expect_code 2 holt sandbox restore cp 2>err && grep usage err
'

test_done
