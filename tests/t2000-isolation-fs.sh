#!/bin/sh
# Isolation, the filesystem: a sandbox sees none of the host's files but the
# read-only system it runs on, and writes nowhere but /workspace, /home/user
# and /tmp. Each attack is first shown to work on the host, where nothing
# stops it.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/attack/lib-attack.sh"

echo "HOSTSECRET-$$" >host-secret
real_home=$(getent passwd "$(id -u)" | cut -d: -f6)

test_expect_success 'create a sandbox with the attack program in it' '
	sandbox_new >sbx-id &&
	sbx=$(cat sbx-id) &&
	attack "$sbx" write /workspace/probe >out &&
	grep "^write: ok$" out
'
sbx=$(cat sbx-id 2>/dev/null)

test_expect_success 'a host file is not visible by its host path' '
	host_attack read "$TRASH_DIRECTORY/host-secret" >host &&
	grep "^content: HOSTSECRET-$$" host &&
	test_must_fail attack "$sbx" read "$TRASH_DIRECTORY/host-secret" >out &&
	grep "^read: ENOENT$" out
'

test_expect_success 'the host user'"'"'s home is not there' '
	case "$real_home" in
	/|/tmp|/tmp/*|/workspace|/workspace/*|/home/user|/home/user/*)
		echo "home $real_home overlaps the sandbox: nothing to test" ;;
	/root)
		# The sandbox'"'"'s root has a /root of its own, empty at first.
		ls -A /root >host-entries &&
		test -s host-entries &&
		holt sandbox exec "$sbx" -- sudo ls -A /root >inside &&
		test ! -s inside ;;
	*)
		test -d "$real_home" &&
		test_must_fail holt sandbox exec "$sbx" -- \
			test -e "$real_home" ;;
	esac
'

test_expect_success 'holt'"'"'s own data (sandboxes, sessions) is not there' '
	test -d "$HOLT_HOME/data" &&
	test_must_fail holt sandbox exec "$sbx" -- test -e "$HOLT_HOME" &&
	test_must_fail attack "$sbx" scan-sockets "$TRASH_DIRECTORY" >out &&
	grep "^sockets: 0, connected: 0$" out
'

test_expect_success 'no other host tree is mounted' '
	holt sandbox exec "$sbx" -- cat /proc/self/mountinfo >mounts &&
	awk "{ print \$5 }" mounts | sort -u >points &&
	for p in $(cat points); do
		case "$p" in
		/|/usr|/usr/*|/etc|/etc/*|/proc|/proc/*|/dev|/dev/*|/tmp|\
		/var|/opt|/root|/run/holt/root|/run/holt/bin/sudo|\
		/workspace|/home/user|/run/holt/holt-envd) ;;
		*) echo "unexpected mount: $p"; return 1 ;;
		esac
	done
'

test_expect_success 'writes into the host'"'"'s system trees fail' '
	for p in /usr/holt-attack-$$ /etc/holt-attack-$$ /bin/holt-attack-$$ \
		/lib/holt-attack-$$ /var/holt-attack-$$ /proc/holt-attack-$$ \
		/run/holt/holt-envd; do
		test_must_fail attack "$sbx" write "$p" >out &&
		! grep ": ok$" out || { echo "wrote $p"; return 1; }
	done &&
	! test -e /usr/holt-attack-$$ &&
	! test -e /etc/holt-attack-$$
'

# The sandbox's root is bubblewrap's tmpfs: it must be remounted read-only,
# or files can be made outside the three writable places.
test_expect_success 'the sandbox'"'"'s root is read-only' '
	for p in /holt-attack-$$ /run/holt-attack-$$ /home/holt-attack-$$; do
		test_must_fail attack "$sbx" write "$p" >out &&
		grep ": EROFS$" out || { echo "wrote $p"; return 1; }
	done
'

# When holt runs as root, bwrap maps the sandbox user to the host's root, so
# files of the read-only /etc that only root may read (shadow, SSH host
# keys) are readable inside unless they are masked. As another user they
# are unreadable anyway.
test_expect_success 'files under /etc that only root may read stay unreadable' '
	n=0 &&
	for f in /etc/shadow /etc/gshadow /etc/ssh/ssh_host_*_key; do
		test -f "$f" || continue
		n=$((n + 1)) &&
		test_might_fail attack "$sbx" read "$f" >out &&
		! grep "^read: ok$" out || { echo "read $f"; return 1; }
	done &&
	echo "$n files tried"
'

test_expect_success 'the writable places are writable (the attack works)' '
	attack "$sbx" write /workspace/w >out && grep "^write: ok$" out &&
	attack "$sbx" write /home/user/w >out && grep "^write: ok$" out &&
	attack "$sbx" write /tmp/w >out && grep "^write: ok$" out
'

# Opened for writing but never written: when this fails it must not change
# the host. When holt runs as root the sandbox user is the host's root and
# /proc/sys, which bubblewrap leaves as it is (its directories being
# read-only), is the host's: kernel.core_pattern would mean code execution
# as root on the host. The sandbox mounts /proc/sys read-only.
test_expect_success 'kernel settings cannot be opened for writing' '
	for p in /proc/sys/kernel/core_pattern /proc/sys/vm/drop_caches \
		/proc/sysrq-trigger /proc/sys/kernel/modprobe; do
		test_might_fail attack "$sbx" openw "$p" >out &&
		! grep ": ok$" out || { echo "opened $p"; return 1; }
	done
'

test_expect_success 'put with .. lands inside the sandbox, never on the host' '
	echo EVIL >evil &&
	target=$TRASH_DIRECTORY/put-target &&
	echo ORIGINAL >"$target" &&
	test_might_fail holt sandbox put "$sbx" evil "../../../../../../../..$target" &&
	test_might_fail holt sandbox put "$sbx" evil "/workspace/../../../../..$target" &&
	echo ORIGINAL >expect &&
	test_cmp expect "$target"
'

test_expect_success 'get with .. cannot read a host file' '
	test_might_fail holt sandbox get "$sbx" "../../../../../../../..$TRASH_DIRECTORY/host-secret" got1 &&
	test_might_fail holt sandbox get "$sbx" "/workspace/../../..$TRASH_DIRECTORY/host-secret" got2 &&
	! grep -s HOSTSECRET got1 got2
'

test_expect_success 'a symlink planted in the workspace leads nowhere on the host' '
	holt sandbox exec "$sbx" -- ln -s "$TRASH_DIRECTORY/host-secret" \
		/workspace/abs-link &&
	holt sandbox exec "$sbx" -- ln -s \
		"../../../../../../../..$TRASH_DIRECTORY/host-secret" \
		/workspace/rel-link &&
	ws=$HOLT_HOME/data/sandboxes/$sbx/workspace &&
	grep -q HOSTSECRET "$ws/abs-link" &&
	for l in abs-link rel-link; do
		test_might_fail holt sandbox get "$sbx" /workspace/$l got-$l &&
		! grep -s HOSTSECRET got-$l || return 1
	done &&
	echo EVIL >evil &&
	for l in abs-link rel-link; do
		test_might_fail holt sandbox put "$sbx" evil /workspace/$l &&
		grep "^HOSTSECRET-$$" host-secret || return 1
	done
'

# holt-envd holds a directory fd of the host (its state directory) and the
# sandbox's roots: a magic link to them (/proc/1/fd/N, /proc/self/fd/N,
# /proc/1/root) in the workspace must not be followed by any file op.
test_expect_success PYTHON 'file ops do not follow magic links to envd'"'"'s fds' '
	holt sandbox exec "$sbx" -- sh -c "cd /workspace &&
		for n in 3 4 5 6 7 8 9; do
			ln -sf /proc/1/fd/\$n p1-\$n && ln -sf /proc/self/fd/\$n ps-\$n || exit 1
		done && ln -sf /proc/1/root r1 && ln -sf /proc/1/cwd c1" &&
	echo EVIL >evil &&
	ls -R "$HOLT_HOME/data/sandboxes/$sbx/run" >run-before &&
	for l in p1-3 p1-4 p1-5 p1-6 p1-7 p1-8 p1-9 ps-3 ps-4 ps-5 ps-6 ps-7 \
		ps-8 ps-9 r1 c1; do
		test_might_fail holt sandbox put "$sbx" evil /workspace/$l/pwned &&
		test_might_fail holt sandbox get "$sbx" /workspace/$l/meta.json got &&
		! grep -s "\"id\"" got || { echo "read through $l"; return 1; }
	done &&
	sock=$HOLT_HOME/data/sandboxes/$sbx/run/envd.sock &&
	python3 "$TEST_DIRECTORY/attack/envd-call.py" "$sock" \
		"{\"op\":\"list\",\"path\":\"/workspace\"}" >ok &&
	grep "\"ok\": true" ok &&
	for l in p1-4 ps-4 r1; do
		python3 "$TEST_DIRECTORY/attack/envd-call.py" "$sock" \
		"{\"op\":\"list\",\"path\":\"/workspace/$l\"}" \
		"{\"op\":\"read\",\"path\":\"/workspace/$l/../meta.json\"}" \
		"{\"op\":\"write\",\"path\":\"/workspace/$l/pwned\",\"data\":\"x\"}" \
		"{\"op\":\"remove\",\"path\":\"/workspace/$l/envd.pid\"}" \
		"{\"op\":\"move\",\"from\":\"/workspace/evil\",\"to\":\"/workspace/$l/pwned\"}" \
		"{\"op\":\"watch\",\"path\":\"/workspace/$l\"}" >replies || return 1
		test $(grep -c "\"error\"" replies) = 6 ||
			{ cat replies; return 1; }
	done &&
	ls -R "$HOLT_HOME/data/sandboxes/$sbx/run" >run-after &&
	test_cmp run-before run-after
'

test_expect_success 'exec --cwd cannot start a command in envd'"'"'s host fds' '
	holt sandbox exec --cwd /workspace "$sbx" -- pwd >out &&
	echo /workspace >expect &&
	test_cmp expect out &&
	for c in /proc/self/fd/3 /proc/self/fd/4 /proc/1/fd/3 /proc/1/fd/4 \
		/proc/1/root /proc/1/cwd /workspace/p1-4 /workspace/ps-4; do
		test_must_fail holt sandbox exec --cwd "$c" "$sbx" -- pwd >out 2>err &&
		! test -s out ||
			{ echo "ran in $c: $(cat out)"; return 1; }
	done
'

# A loop inside flips /workspace/flip between a plain file and a symlink to
# a host file by atomic renames while the host gets and puts it many times:
# a check-then-use on the host side would sooner or later follow the link.
test_expect_success 'a symlink swapped in between check and use' '
	echo "TARGET-$$" >flip-target &&
	cat >flipper.sh <<-EOF &&
	cd /workspace || exit 1
	n=0
	while [ \$n -lt 200000 ] && ! [ -e /workspace/flip-stop ]; do
		echo benign >f.tmp && mv -f f.tmp flip
		ln -sf "$TRASH_DIRECTORY/flip-target" l.tmp && mv -f l.tmp flip
		ln -sf "$TRASH_DIRECTORY/host-secret" l.tmp && mv -f l.tmp flip
		n=\$((n + 1))
		echo \$n >c.tmp && mv -f c.tmp flip-count
	done
	EOF
	holt sandbox put "$sbx" flipper.sh /workspace/flipper.sh &&
	{ holt sandbox exec --timeout 60 "$sbx" -- sh /workspace/flipper.sh \
		>/dev/null 2>&1 & } &&
	test_when_finished "holt sandbox exec $sbx -- touch /workspace/flip-stop" &&
	test_wait_for 100 "holt sandbox exec $sbx -- test -s /workspace/flip-count" &&
	echo EVIL >evil &&
	got=0 i=0 &&
	while [ $i -lt 60 ]; do
		if holt sandbox get "$sbx" /workspace/flip got 2>/dev/null; then
			got=$((got + 1))
			! grep -q -e HOSTSECRET -e TARGET got ||
				{ echo "read a host file"; return 1; }
		fi
		test_might_fail holt sandbox put "$sbx" evil /workspace/flip \
			2>/dev/null &&
		grep -q "^TARGET-$$\$" flip-target ||
			{ echo "wrote a host file"; return 1; }
		i=$((i + 1))
	done &&
	holt sandbox exec "$sbx" -- touch /workspace/flip-stop &&
	n=$(holt sandbox exec "$sbx" -- cat /workspace/flip-count) &&
	echo "gets that succeeded: $got, flips: $n" &&
	test "$got" -gt 0 && test "$n" -gt 10 &&
	grep -q "^HOSTSECRET-$$\$" host-secret
'

# The same race one level up: a directory on the way flips between a real
# directory and a magic link to holt-envd's host state directory (its fd 4,
# as /proc/self/fd/4 from envd's side and /proc/1/fd/4 from ours), while
# the host puts and gets a file beneath it. Nothing may appear in, or come
# out of, the state directory.
test_expect_success 'a directory swapped for a magic link between check and use' '
	holt sandbox service "$sbx" create dflip-svc -- sleep 300 &&
	state=$HOLT_HOME/data/sandboxes/$sbx/run/envd &&
	test -f "$state/services.json" &&
	ls -R "$state" >state-before &&
	cat >dflipper.sh <<-\EOF &&
	cd /workspace || exit 1
	mkdir -p real && echo benign >real/services.json
	n=0
	while [ $n -lt 200000 ] && ! [ -e /workspace/dflip-stop ]; do
		ln -sfn real l.tmp && mv -fT l.tmp dflip
		ln -sfn /proc/self/fd/4 l.tmp && mv -fT l.tmp dflip
		ln -sfn /proc/1/fd/4 l.tmp && mv -fT l.tmp dflip
		n=$((n + 1))
		echo $n >dc.tmp && mv -f dc.tmp dflip-count
	done
	EOF
	holt sandbox put "$sbx" dflipper.sh /workspace/dflipper.sh &&
	{ holt sandbox exec --timeout 60 "$sbx" -- sh /workspace/dflipper.sh \
		>/dev/null 2>&1 & } &&
	test_when_finished "holt sandbox exec $sbx -- touch /workspace/dflip-stop" &&
	test_wait_for 100 "holt sandbox exec $sbx -- test -s /workspace/dflip-count" &&
	echo EVIL >evil &&
	got=0 i=0 &&
	while [ $i -lt 60 ]; do
		if holt sandbox get "$sbx" /workspace/dflip/services.json got \
			2>/dev/null; then
			got=$((got + 1))
			grep -q "^benign$" got ||
				{ echo "read the state directory"; return 1; }
		fi
		test_might_fail holt sandbox put "$sbx" evil /workspace/dflip/pwned \
			2>/dev/null || return 1
		i=$((i + 1))
	done &&
	holt sandbox exec "$sbx" -- touch /workspace/dflip-stop &&
	n=$(holt sandbox exec "$sbx" -- cat /workspace/dflip-count) &&
	echo "gets that succeeded: $got, flips: $n" &&
	test "$got" -gt 0 && test "$n" -gt 10 &&
	ls -R "$state" >state-after &&
	test_cmp state-before state-after &&
	holt sandbox service "$sbx" stop dflip-svc
'

test_expect_success 'rm and ls do not follow links planted in the workspace' '
	mkdir -p victim/sub &&
	echo keep >victim/sub/file &&
	echo keep >victim-file &&
	sandbox_new >sbx2-id &&
	sbx2=$(cat sbx2-id) &&
	holt sandbox exec "$sbx2" -- sh -c "cd /workspace &&
		ln -s $TRASH_DIRECTORY/victim d1 &&
		ln -s $TRASH_DIRECTORY/victim-file f1 &&
		ln -s ../../../../../../../..$TRASH_DIRECTORY/victim d2 &&
		ln -s / root && mkdir -p a/b && ln -s $TRASH_DIRECTORY a/b/up" &&
	ws=$HOLT_HOME/data/sandboxes/$sbx2/workspace &&
	test -f "$ws/d1/sub/file" &&
	holt sandbox ls >ls &&
	grep "^$sbx2 " ls &&
	holt sandbox rm "$sbx2" &&
	! test -e "$ws" &&
	echo keep >expect &&
	test_cmp expect victim/sub/file &&
	test_cmp expect victim-file
'

test_expect_success 'a hard link to a host file cannot be made' '
	test_must_fail holt sandbox exec "$sbx" -- ln /etc/hostname /workspace/hl \
		2>err &&
	grep -i "cross-device\|not permitted" err
'

test_done
