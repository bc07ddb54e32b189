#!/bin/sh
# The sandbox as a machine: sudo is the sandbox's own root, never the
# host's; packages installed with dpkg and apt (from a local repository)
# stay across pause/resume, stop/start and a reboot; the host's files stay
# as they were; reset --root drops the installs; an image of the user's.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/git-lib.sh"

if ! test_have_prereq ROOT,BWRAP || ! command -v dpkg-deb >/dev/null ||
	! command -v dpkg-scanpackages >/dev/null ||
	! command -v setpriv >/dev/null; then
	echo "1..0 # SKIP needs root, bubblewrap, dpkg-dev and setpriv"
	exit 0
fi

test_sandbox_cleanup

sbx_dir() {
	echo "$HOLT_HOME/data/sandboxes/$1"
}

# What the tests below could change on the host if the overlay leaked: the
# trees' listings with sizes, times and owners (a write changes them), and
# the content of the files the sandbox's root overwrites.
host_state() {
	find /usr/bin /usr/local /usr/share/doc /etc /var/lib/dpkg -xdev \
		-printf "%p %s %T@ %C@ %m %U %G\n" 2>/dev/null | sort
	cat /usr/bin/env /etc/hosts /var/lib/dpkg/status | sha256sum
}

# A package of our own, and an apt repository holding another.
make_deb() {
	mkdir -p "$1/DEBIAN" "$1/usr/bin" &&
	printf "Package: %s\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: test package\n" \
		"$1" >"$1/DEBIAN/control" &&
	printf "#!/bin/sh\necho %s works\n" "$1" >"$1/usr/bin/$1" &&
	chmod 755 "$1/usr/bin/$1" &&
	dpkg-deb --build --root-owner-group "$1" "$1.deb" >/dev/null
}

test_expect_success 'a sandbox, and the host as it is' '
	host_state >host-before &&
	holt sandbox create --name m >id &&
	id=$(cat id) &&
	json_q "print(d[\"host_uid\"])" <"$(sbx_dir "$id")/meta.json" >uid &&
	test "$(cat uid)" -gt 65535 &&
	make_deb holt-one &&
	make_deb holt-two &&
	mkdir repo && mv holt-two.deb repo/ &&
	(cd repo && dpkg-scanpackages . /dev/null >Packages 2>/dev/null) &&
	ws=$(sbx_dir "$id")/workspace &&
	cp -r holt-one.deb repo "$ws/" &&
	chown -R "$(cat uid):$(cat uid)" "$ws"
'
id=$(cat id 2>/dev/null)
uid=$(cat uid 2>/dev/null)
base=$((uid - 1000))

test_expect_success 'neither the user nor root inside is host root' '
	holt sandbox exec m -- sh -c "id -u; sudo id -u; cat /proc/self/uid_map" >out &&
	read u r <<-EOF &&
	$(head -2 out | tr "\n" " ")
	EOF
	test "$u" = 1000 && test "$r" = 0 &&
	tail -1 out >map &&
	echo "0 $base 65536" >expect &&
	tr -s " " <map | sed "s/^ //" >got &&
	test_cmp expect got
'

test_expect_success 'a root command inside is the sandbox uid on the host' '
	{ holt sandbox exec m -- sudo sleep 7.531 & } &&
	test_wait_for 50 "pgrep -f \"^sleep 7.531\"" &&
	p=$(pgrep -f "^sleep 7.531" | head -1) &&
	stat -c %u /proc/$p >owner &&
	echo "$base" >expect &&
	test_cmp expect owner &&
	kill $p && wait
'

test_expect_success '/etc/passwd names user and root, none of the host'"'"'s people' '
	holt sandbox exec m -- cat /etc/passwd >passwd &&
	grep "^root:x:0:0:" passwd &&
	grep "^user:x:1000:1000:" passwd &&
	holt sandbox exec m -- id -un >name &&
	echo user >expect && test_cmp expect name &&
	getent passwd | awk -F: "\$3 >= 1000 && \$3 != 65534 { print \$1 }" >people &&
	for p in $(cat people); do
		! grep "^$p:" passwd || return 1
	done
'

test_expect_success 'the sandbox'"'"'s root reads none of the host'"'"'s secrets' '
	holt sandbox exec m -- sudo cat /etc/shadow >shadow &&
	cut -d: -f1 shadow >names &&
	printf "root\nuser\n" >expect && test_cmp expect names &&
	! grep -v ":\*:" shadow
'

test_expect_success 'sudo dpkg -i installs a local package' '
	holt sandbox exec m -- sudo dpkg -i holt-one.deb >out 2>&1 &&
	holt sandbox exec m -- holt-one >out &&
	echo "holt-one works" >expect && test_cmp expect out &&
	test ! -e /usr/bin/holt-one &&
	stat -c %u "$(sbx_dir "$id")/root/usr/bin/holt-one" >owner &&
	echo "$base" >expect && test_cmp expect owner
'

test_expect_success 'apt-get installs from a repository' '
	holt sandbox exec m -- sh -c "sudo cp -r repo /opt/ &&
		echo \"deb [trusted=yes] file:/opt/repo ./\" |
		sudo tee /etc/apt/sources.list.d/local.list >/dev/null &&
		sudo apt-get -o Dir::Etc::sourcelist=sources.list.d/local.list \
			-o Dir::Etc::sourceparts=- update &&
		sudo DEBIAN_FRONTEND=noninteractive apt-get install -y holt-two" \
		>out 2>&1 &&
	holt sandbox exec m -- holt-two >out &&
	echo "holt-two works" >expect && test_cmp expect out
'

test_expect_success 'root edits /etc and overwrites a file of the image' '
	holt sandbox exec m -- sh -c "echo 10.9.8.7 inside | sudo tee -a /etc/hosts &&
		printf \"#!/bin/sh\necho replaced\n\" | sudo tee /usr/bin/env" >/dev/null &&
	holt sandbox exec m -- /usr/bin/env >out &&
	echo replaced >expect && test_cmp expect out
'

# All of it still there, whatever happened to the processes.
installed() {
	holt sandbox exec m -- sh -c "holt-one; holt-two; grep -c 10.9.8.7 /etc/hosts" >out &&
	printf "holt-one works\nholt-two works\n1\n" >expect &&
	test_cmp expect out
}

test_expect_success 'installs stay across pause and resume' '
	holt sandbox pause m &&
	holt sandbox resume m &&
	installed
'

test_expect_success 'installs stay across stop and start' '
	holt sandbox stop m &&
	holt sandbox start m &&
	installed
'

test_expect_success 'installs stay across a host reboot (every process killed)' '
	read p start <"$(sbx_dir "$id")/run/envd.pid" &&
	bw=$(awk "{ print \$4 }" /proc/$p/stat) &&
	kill -9 $bw $p &&
	test_wait_for 50 "! kill -0 $p" &&
	holt sandbox ls >ls && grep "^$id  *m  *stopped " ls &&
	holt sandbox start m &&
	installed
'

test_expect_success 'the host'"'"'s files are as they were' '
	host_state >host-after &&
	test_cmp host-before host-after
'

test_expect_success 'escape: root writes the image'"'"'s lower layer directly' '
	holt sandbox exec m -- sh -c "sudo cat /proc/self/mountinfo" >mounts &&
	! grep " /usr " mounts | grep -v overlay &&
	test_must_fail holt sandbox exec m -- sudo mount -o remount,rw /usr &&
	test_must_fail holt sandbox exec m -- sudo mount -t overlay none /mnt 2>err &&
	test_must_fail holt sandbox exec m -- sudo sh -c "mkdir -p /tmp/l && mount --bind / /tmp/l"
'

test_expect_success 'escape: root makes device nodes' '
	test_must_fail holt sandbox exec m -- sudo mknod /tmp/disk b 8 0 &&
	test_must_fail holt sandbox exec m -- sudo mknod /usr/local/mem c 1 1 &&
	test_must_fail holt sandbox exec m -- sudo mknod /dev/kmsg2 c 1 11 &&
	test_must_fail holt sandbox exec m -- sudo sh -c "ls /dev/vd* /dev/sd* /dev/nvme* 2>/dev/null | grep ."
'

test_expect_success 'escape: another sandbox'"'"'s upper layer' '
	holt sandbox create --name other >id2 &&
	id2=$(cat id2) &&
	uid2=$(json_q "print(d[\"host_uid\"])" <"$(sbx_dir "$id2")/meta.json") &&
	test $((uid2 / 65536)) != $((uid / 65536)) &&
	# Its root is a host uid of its own: holt'"'"'s directories are closed to it.
	test_must_fail setpriv --reuid=$((uid2 - 1000)) --regid=$((uid2 - 1000)) \
		--clear-groups ls "$(sbx_dir "$id")/root/usr" &&
	test_must_fail holt sandbox exec other -- holt-one &&
	test_must_fail holt sandbox exec other -- sudo test -e "$(sbx_dir "$id")"
'

test_expect_success 'sudo ends what it started when its command is killed' '
	test_expect_code 124 holt sandbox exec --timeout 1 m -- sudo sleep 9.417 &&
	test_wait_for 30 "! pgrep -f \"^sleep 9.417\""
'

test_expect_success 'sudo: exit codes, options, refusals' '
	test_expect_code 3 holt sandbox exec m -- sudo sh -c "exit 3" &&
	test_expect_code 127 holt sandbox exec m -- sudo no-such-command 2>err &&
	holt sandbox exec m -- sudo -u root -n true &&
	test_expect_code 1 holt sandbox exec m -- sudo -u nobody true 2>err &&
	grep "root only" err &&
	holt sandbox exec m -- sudo -i sh -c "echo \$HOME \$USER" >out &&
	echo "/root root" >expect && test_cmp expect out
'

test_expect_success 'reset --root: the image as it is, the workspace kept' '
	holt sandbox exec m -- sh -c "echo mine >/workspace/kept" &&
	holt sandbox reset m --root &&
	test_must_fail holt sandbox exec m -- holt-one &&
	holt sandbox exec m -- cat /workspace/kept >out &&
	echo mine >expect && test_cmp expect out &&
	! holt sandbox exec m -- grep 10.9.8.7 /etc/hosts &&
	test_expect_code 2 holt sandbox reset m 2>err &&
	grep "say what to reset" err
'

# A root filesystem: a few host programs with their libraries, and what
# holt-envd needs, merged-/usr style (bin -> usr/bin).
make_image() {
	mkdir -p "$1/usr/bin" "$1/etc" &&
	ln -s usr/bin "$1/bin" &&
	for p in sh cat id ls; do
		cp "$(command -v $p)" "$1/usr/bin/" || return 1
	done &&
	for f in $(ldd $(for p in sh cat id ls; do command -v $p; done) \
			"$HOLT_BUILD_DIR/holt-envd" |
		grep -o "/[^ ]*\.so[^ ]*" | sort -u); do
		mkdir -p "$1/usr$(dirname "$f")" &&
		cp "$f" "$1/usr$f" || return 1
	done &&
	for l in lib lib64; do
		test ! -d "$1/usr/$l" || ln -s "usr/$l" "$1/$l" || return 1
	done &&
	echo "root:x:0:0:root:/root:/bin/sh" >"$1/etc/passwd" &&
	echo "root:x:0:" >"$1/etc/group" &&
	echo from-the-image >"$1/etc/motd"
}

test_expect_success '--image PATH: a root filesystem of the user'"'"'s' '
	make_image img &&
	holt sandbox create --name im --image "$PWD/img" >id3 &&
	holt sandbox exec im -- cat /etc/motd >out &&
	echo from-the-image >expect && test_cmp expect out &&
	holt sandbox exec im -- sh -c "id -un; sudo id -un" >out &&
	printf "user\nroot\n" >expect && test_cmp expect out &&
	holt sandbox exec im -- sh -c "echo changed | sudo sh -c \"cat >/etc/motd\"" &&
	echo from-the-image >expect && test_cmp expect img/etc/motd &&
	holt sandbox ls --json >ls &&
	grep "\"image\":[[:space:]]*\"$PWD/img\"" ls
'

test_expect_success '--image: what is not a root filesystem is refused' '
	mkdir notroot &&
	test_expect_code 2 holt sandbox create --image "$PWD/no-such" 2>err &&
	grep "no-such" err &&
	test_must_fail holt sandbox create --image "$PWD/notroot" 2>err &&
	grep "no usr directory" err &&
	ls "$HOLT_HOME/data/sandboxes" >left &&
	test_line_count = 3 left
'

if test -x /usr/bin/npm && test -x /usr/bin/node; then
	test_set_prereq NPM
fi
if /usr/bin/python3 -c "import setuptools" 2>/dev/null && test -x /usr/bin/pip3; then
	test_set_prereq SYSPIP
fi

test_expect_success NPM 'sudo npm install -g: a global command that stays' '
	ws=$(sbx_dir "$id")/workspace &&
	mkdir -p "$ws/np/bin" &&
	printf "{\"name\":\"holt-npm-test\",\"version\":\"1.0.0\",\"bin\":{\"holt-npm-test\":\"bin/x.js\"}}" >"$ws/np/package.json" &&
	printf "#!/usr/bin/env node\nconsole.log(\"npm global works\")\n" >"$ws/np/bin/x.js" &&
	chmod 755 "$ws/np/bin/x.js" &&
	chown -R "$uid:$uid" "$ws/np" &&
	holt sandbox exec m -- sudo npm install -g --offline ./np >out 2>&1 &&
	holt sandbox exec m -- holt-npm-test >out &&
	echo "npm global works" >expect && test_cmp expect out &&
	! test -e /usr/local/bin/holt-npm-test && ! test -e /usr/bin/holt-npm-test
'

test_expect_success SYSPIP 'sudo pip install into the system Python' '
	ws=$(sbx_dir "$id")/workspace &&
	mkdir -p "$ws/pp/holtpip" &&
	printf "from setuptools import setup\nsetup(name=\"holtpip\", version=\"1.0\", packages=[\"holtpip\"])\n" >"$ws/pp/setup.py" &&
	echo "X = 42" >"$ws/pp/holtpip/__init__.py" &&
	chown -R "$uid:$uid" "$ws/pp" &&
	holt sandbox exec m -- sudo pip3 install --no-build-isolation --no-index \
		--break-system-packages ./pp >out 2>&1 &&
	holt sandbox exec m -- sh -c "cd /tmp && python3 -c \"import holtpip; print(holtpip.X)\"" >out &&
	echo 42 >expect && test_cmp expect out &&
	! /usr/bin/python3 -c "import holtpip" 2>/dev/null
'

test_expect_success 'a sandbox made when its user was host root gets uids of its own' '
	holt sandbox create --name old --net off >id4 &&
	id4=$(cat id4) &&
	holt sandbox exec old -- sh -c "echo mine >/workspace/f && mkdir /workspace/d" &&
	holt sandbox stop old &&
	d4=$(sbx_dir "$id4") &&
	/usr/bin/python3 -c "import json, sys
m = json.load(open(sys.argv[1])); del m[\"host_uid\"]
json.dump(m, open(sys.argv[1], \"w\"))" "$d4/meta.json" &&
	chown -R 0:0 "$d4/workspace" "$d4/home" &&
	holt sandbox start old &&
	json_q "print(d[\"host_uid\"])" <"$d4/meta.json" >uid4 &&
	test "$(cat uid4)" -gt 65535 &&
	test "$(stat -c %u "$d4/workspace/f")" = "$(cat uid4)" &&
	holt sandbox exec old -- sh -c "echo more >>/workspace/f && touch /workspace/d/x && id -u" >out &&
	echo 1000 >expect && test_cmp expect out &&
	holt sandbox exec old -- cat /proc/self/uid_map >map &&
	! awk "\$2 == 0" map | grep .
'

test_expect_success '--image: a split-/usr image is refused, named' '
	mkdir -p split/usr/bin split/etc split/bin &&
	test_must_fail holt sandbox create --image "$PWD/split" 2>err &&
	grep "bin is not a link into usr" err
'

test_expect_success 'a package that fails to install: a clear error, the rest kept' '
	mkdir -p bad/DEBIAN bad/usr/bin &&
	printf "Package: holt-bad\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: fails\n" \
		>bad/DEBIAN/control &&
	printf "#!/bin/sh\necho the package refuses >&2\nexit 1\n" >bad/DEBIAN/postinst &&
	chmod 755 bad/DEBIAN/postinst &&
	dpkg-deb --build --root-owner-group bad bad.deb >/dev/null &&
	cp bad.deb "$(sbx_dir "$id")/workspace/" &&
	chmod 644 "$(sbx_dir "$id")/workspace/bad.deb" &&
	holt sandbox exec m -- sudo dpkg -i holt-one.deb >/dev/null 2>&1 &&
	test_must_fail holt sandbox exec m -- sudo dpkg -i bad.deb >out 2>&1 &&
	grep "the package refuses" out &&
	grep "holt-bad" out &&
	holt sandbox exec m -- holt-one >out &&
	echo "holt-one works" >expect && test_cmp expect out &&
	holt sandbox exec m -- sudo dpkg -r holt-bad >/dev/null 2>&1 &&
	holt sandbox exec m -- echo alive >out &&
	echo alive >expect && test_cmp expect out
'

test_expect_success 'a full disk under the upper layer: ENOSPC, nothing lost' '
	holt sandbox stop m &&
	root=$(sbx_dir "$id")/root &&
	mv "$root" "$root.full" &&
	mkdir "$root" &&
	mount -t tmpfs -o size=3m holt-full "$root" &&
	test_when_finished "holt sandbox stop m; umount \"$root\"; rmdir \"$root\"; mv \"$root.full\" \"$root\"" &&
	holt sandbox start m &&
	holt sandbox exec m -- sudo dpkg -i holt-one.deb >/dev/null 2>&1 &&
	test_must_fail holt sandbox exec m -- sudo dd if=/dev/zero of=/opt/big bs=1M count=8 2>err &&
	grep "No space left on device" err &&
	holt sandbox exec m -- holt-one >out &&
	echo "holt-one works" >expect && test_cmp expect out &&
	holt sandbox exec m -- sudo rm /opt/big &&
	holt sandbox exec m -- sh -c "echo still > /workspace/after" &&
	holt sandbox exec m -- cat /workspace/after >out &&
	echo still >expect && test_cmp expect out
'

test_done
