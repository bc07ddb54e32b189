#!/bin/sh
# Isolation with root inside: the attacks of the other isolation tests,
# run by the sandbox's own root (sudo), still fail, and so do those root
# makes newly tempting: envd's descriptors (the control socket, the
# proxy's hand-off), the syscalls seccomp refuses, host processes and
# files, the host's loopback, and a listening side of the proxy.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/attack/lib-attack.sh"

if ! test_have_prereq ROOT; then
	skip_all='needs root (sudo inside needs a user namespace of its own)'
	echo "1..0 # SKIP $skip_all"
	exit 0
fi

marker=holt-attack-root-$$
"$ATTACK" sleep "$marker" 120 &
host_pid=$!
test_when_finished "kill $host_pid"
echo secret-$$ >host-secret
chmod 600 host-secret

rattack() {
	_id=$1
	shift
	holt sandbox exec "$_id" -- sudo /workspace/holt-attack "$@"
}

test_expect_success 'a sandbox whose root is sudo away' '
	sandbox_new >sbx-id &&
	sbx=$(cat sbx-id) &&
	holt sandbox exec "$sbx" -- sudo id -u >out &&
	echo 0 >expect && test_cmp expect out
'
sbx=$(cat sbx-id 2>/dev/null)

for a in unshare-user clone-user mount pivot-root open-tree fsopen keyctl \
	io-uring bpf ptrace-sibling; do
	test_expect_success "as root, $a is refused with EPERM" "
		test_must_fail rattack \"\$sbx\" $a >out &&
		echo '$a: EPERM' >expect &&
		test_cmp expect out
	"
done

test_expect_success 'as root: envd'"'"'s descriptors (control, proxy hand-off) stay out of reach' '
	test_must_fail rattack "$sbx" steal-fds 1 >steal &&
	! grep ": ok" steal &&
	test_must_fail rattack "$sbx" mem 1 >out &&
	test_must_fail rattack "$sbx" ptrace 1 >out
'

test_expect_success 'as root: no socket inside leads to envd or the proxy' '
	test_might_fail rattack "$sbx" scan-sockets >scan &&
	{ grep "^connected: " scan | grep -v "^connected: /run/holt/root/sudo.sock$" >other || :; } &&
	test ! -s other
'

test_expect_success 'as root: host processes cannot be signalled or traced' '
	test_must_fail rattack "$sbx" kill $host_pid 9 >out &&
	test_must_fail rattack "$sbx" ptrace $host_pid >out &&
	kill -0 $host_pid
'

test_expect_success 'as root: a host file is not there, by any path' '
	test_must_fail rattack "$sbx" read "$TRASH_DIRECTORY/host-secret" >out &&
	test_must_fail rattack "$sbx" read "/proc/$host_pid/root$TRASH_DIRECTORY/host-secret" >out
'

test_expect_success 'as root: the host'"'"'s loopback stays unreachable' '
	{ /usr/bin/python3 -c "import socket, time
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(4)
print(s.getsockname()[1], flush=True); time.sleep(30)" >lport & } &&
	l=$! &&
	test_wait_for 50 "test -s lport" &&
	test_must_fail rattack "$sbx" tcp 127.0.0.1 $(cat lport) >out &&
	kill $l
'

test_expect_success 'as root: a raw socket or a device node is refused' '
	test_must_fail holt sandbox exec "$sbx" -- sudo python3 -c "import socket
socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)" 2>err &&
	grep -i "not permitted" err &&
	test_must_fail holt sandbox exec "$sbx" -- sudo mknod /tmp/sda b 8 0 2>err
'

test_expect_success 'the proxy listens nowhere on the host' '
	read ppid pstart <"$HOLT_HOME/data/sandboxes/$sbx/run/proxy.pid" &&
	for f in /proc/$ppid/fd/*; do readlink "$f"; done >pfds &&
	grep socket: pfds >socks &&
	inodes=$(sed "s/socket:\[\([0-9]*\)\]/\1/" socks) &&
	for i in $inodes; do
		! awk -v i=$i "\$10 == i && \$4 == \"0A\"" /proc/net/tcp /proc/net/tcp6 | grep . || return 1
		! awk -v i=$i "\$7 == i && \$6 == \"01\"" /proc/net/unix | grep " 00010000 " || return 1
	done
'

test_done
