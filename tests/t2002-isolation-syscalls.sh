#!/bin/sh
# Isolation, the kernel: inside a sandbox the seccomp filter (holt-envd(8),
# SECURITY) refuses nested user namespaces, the mount family, keyrings,
# ptrace, io_uring, bpf and terminal injection with EPERM, and no capability
# is left. tests/unit/test-seccomp shows each call works without the filter;
# here the filter must be the one a real sandbox runs under.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/attack/lib-attack.sh"

test_expect_success 'create a sandbox' '
	sandbox_new >sbx-id
'
sbx=$(cat sbx-id 2>/dev/null)

test_expect_success 'commands run with no_new_privs, no capability, a filter' '
	holt sandbox exec "$sbx" -- cat /proc/self/status >status &&
	grep "^NoNewPrivs:	1$" status &&
	grep "^Seccomp:	2$" status &&
	grep "^CapEff:	0000000000000000$" status &&
	grep "^CapPrm:	0000000000000000$" status &&
	grep "^CapBnd:	0000000000000000$" status &&
	grep "^CapAmb:	0000000000000000$" status
'

test_expect_success 'so does pid 1 (holt-envd)' '
	holt sandbox exec "$sbx" -- cat /proc/1/status >status1 &&
	grep "^Seccomp:	2$" status1 &&
	grep "^CapEff:	0000000000000000$" status1
'

for a in unshare-user clone-user mount pivot-root open-tree fsopen keyctl \
	io-uring bpf ptrace-sibling; do
	test_expect_success "$a is refused with EPERM" "
		test_must_fail attack \"\$sbx\" $a >out &&
		echo '$a: EPERM' >expect &&
		test_cmp expect out
	"
done

test_expect_success 'unshare -U (util-linux) cannot make a user namespace' '
	if holt sandbox exec "$sbx" -- test -x /usr/bin/unshare; then
		test_must_fail holt sandbox exec "$sbx" -- unshare -U true \
			2>err &&
		grep -i "operation not permitted" err
	else
		echo "no unshare(1) in /usr/bin"
	fi
'

test_expect_success 'ptrace of pid 1 (holt-envd) is refused' '
	test_must_fail attack "$sbx" ptrace 1 >out &&
	grep "^ptrace: EPERM$" out
'

test_expect_success 'the i386 system call entry kills the caller' '
	if command -v python3 >/dev/null &&
	   holt sandbox exec "$sbx" -- test -x /usr/bin/python3; then
		test_expect_code 159 holt sandbox exec "$sbx" -- python3 -c "
import ctypes, mmap, os
# int 0x80 with eax = 20 (i386 getpid), then ret
code = bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3])
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
f = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
print(f())
"
	else
		echo "no python3 inside"
	fi
'

test_expect_success 'without --tty a command has no terminal to inject into' '
	test_must_fail attack "$sbx" openw /dev/tty >out &&
	grep "^openw: ENXIO$" out &&
	test_must_fail attack "$sbx" tiocsti 0 >out &&
	grep "^tiocsti: EPERM$" out
'

test_expect_success 'TIOCSTI on the command'"'"'s terminal is refused' '
	test_must_fail holt sandbox exec --tty "$sbx" -- \
		/workspace/holt-attack tiocsti 0 >out &&
	tr -d "\r" <out >out.lf &&
	! grep "^note:" out.lf &&
	grep "^tiocsti: EPERM$" out.lf
'

test_expect_success 'TIOCLINUX on the command'"'"'s terminal is refused' '
	test_must_fail holt sandbox exec --tty "$sbx" -- \
		/workspace/holt-attack tioclinux 0 >out &&
	tr -d "\r" <out >out.lf &&
	grep "^tioclinux: EPERM$" out.lf
'

test_expect_success 'ordinary work still runs: fork, threads, pipes' '
	holt sandbox exec "$sbx" -- sh -c "echo a | cat | tr a b" >out &&
	echo b >expect &&
	test_cmp expect out &&
	if holt sandbox exec "$sbx" -- test -x /usr/bin/python3; then
		holt sandbox exec "$sbx" -- python3 -c "
import threading
t = threading.Thread(target=print, args=(\"thread\",)); t.start(); t.join()" >out &&
		echo thread >expect &&
		test_cmp expect out
	fi
'

test_done
