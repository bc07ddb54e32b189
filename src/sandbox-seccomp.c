/*
 * sandbox-seccomp.c: the seccomp filter every sandbox runs under.
 *
 * The filter is built with libseccomp, exported as a classic BPF program into
 * a memfd and handed to bubblewrap (bwrap --seccomp FD), which loads it after
 * setting up the namespaces and right before it execs holt-envd, so envd and
 * everything it starts inherit it.
 *
 * The default is allow: the sandbox must run compilers, package managers and
 * test suites that use whatever system calls they like. What is denied is the
 * kernel surface that either escapes the namespaces (nested user namespaces,
 * the mount family, setns), reaches into other processes (ptrace,
 * process_vm_*, pidfd_getfd), injects input into a terminal (TIOCSTI,
 * TIOCLINUX), or is large attack surface that no build or test needs
 * (io_uring, bpf, perf_event_open, keyrings, userfaultfd, module loading).
 * Denied calls fail with EPERM so programs fail cleanly, except clone3, which
 * fails with ENOSYS: its flags sit in a struct that seccomp cannot read, and
 * ENOSYS makes libc fall back to clone, whose flags the filter can check.
 *
 * Only the native ABI is allowed: a system call made through another ABI (on
 * x86_64: the 32-bit int 0x80 entry and x32) kills the process, since every
 * rule here is written for native system call numbers.
 *
 * Cost: the exported program is about 170 BPF instructions, laid out as a
 * binary tree over system call numbers; the kernel runs a path through it on
 * every system call. bench/seccomp.sh measures it beside a bare bwrap: on a
 * loaded 2-core VM, 1.2-1.3x the time of getppid, the cheapest call.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <unistd.h>

#include "holt.h"
#include "sandbox.h"

/* System calls denied outright, whatever their arguments. */
static const char *sandbox_seccomp_denied[] = {
	/* Namespaces and the mount family, old and new API. */
	"setns", "mount", "umount2", "pivot_root", "chroot",
	"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
	"mount_setattr",
	/* Kernel keyrings. */
	"keyctl", "add_key", "request_key",
	/* Other processes' memory and file descriptors. */
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	/* Large attack surface that no build or test needs. */
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"bpf", "perf_event_open", "userfaultfd",
	/* Administration: fails without capabilities anyway; denied early. */
	"kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module", "acct", "swapon", "swapoff", "reboot",
	"open_by_handle_at", "quotactl",
	/* The host's kernel log, readable where dmesg_restrict is 0. */
	"syslog",
};

/* Terminal ioctls that push input into a terminal or drive the console. */
static const unsigned long sandbox_seccomp_ioctls[] = {
	TIOCSTI, TIOCLINUX,
};

static int
sandbox_seccomp_add(scmp_filter_ctx ctx, uint32_t action, const char *name,
    unsigned int n, const struct scmp_arg_cmp *cmp, char **cause)
{
	int	nr, error;

	nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR) {
		*cause = xprintf("seccomp filter: unknown system call '%s'",
		    name);
		return -1;
	}
	/*
	 * A negative number is a pseudo-syscall: the call does not exist on
	 * this architecture (umount on x86_64), so there is nothing to deny.
	 */
	if (nr < 0)
		return 0;
	error = seccomp_rule_add_array(ctx, action, nr, n, cmp);
	if (error != 0) {
		*cause = xprintf("seccomp filter: rule for '%s': %s", name,
		    strerror(-error));
		return -1;
	}
	return 0;
}

static int
sandbox_seccomp_rules(scmp_filter_ctx ctx, char **cause)
{
	struct scmp_arg_cmp	cmp[1];
	const uint32_t		eperm = SCMP_ACT_ERRNO(EPERM);
	size_t			i;
	int			error;

	/* Other ABIs (i386 int 0x80, x32) kill the whole process. */
	error = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
	    SCMP_ACT_KILL_PROCESS);
	if (error != 0) {
		*cause = xprintf("seccomp filter: bad-arch action: %s",
		    strerror(-error));
		return -1;
	}

	/*
	 * A binary tree over the system call numbers rather than a linear
	 * list: every allowed call (read, write, ...) walks the filter to
	 * its end, so this is what each system call pays.
	 */
	error = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (error != 0) {
		*cause = xprintf("seccomp filter: optimize: %s",
		    strerror(-error));
		return -1;
	}

	for (i = 0; i < nitems(sandbox_seccomp_denied); i++) {
		if (sandbox_seccomp_add(ctx, eperm, sandbox_seccomp_denied[i],
		    0, NULL, cause) != 0)
			return -1;
	}

	/*
	 * The kernel reads the ioctl request as a 32-bit int, so a request
	 * with junk in the high 32 bits is still TIOCSTI: compare only the
	 * low 32 bits.
	 */
	for (i = 0; i < nitems(sandbox_seccomp_ioctls); i++) {
		cmp[0] = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
		    sandbox_seccomp_ioctls[i]);
		if (sandbox_seccomp_add(ctx, eperm, "ioctl", 1, cmp,
		    cause) != 0)
			return -1;
	}

	/* No nested user namespace, by unshare or by clone. */
	cmp[0] = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
	if (sandbox_seccomp_add(ctx, eperm, "unshare", 1, cmp, cause) != 0)
		return -1;
	if (sandbox_seccomp_add(ctx, eperm, "clone", 1, cmp, cause) != 0)
		return -1;
	if (sandbox_seccomp_add(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL,
	    cause) != 0)
		return -1;

	/*
	 * personality: only the default (PER_LINUX, 0) and the query
	 * (0xffffffff) are allowed; other personalities turn off ASLR
	 * (ADDR_NO_RANDOMIZE) or change how the kernel reads memory. The
	 * kernel reads a 32-bit int, so the high 32 bits are masked off.
	 */
	for (i = 0; i < 32; i++) {
		unsigned long	bit = 1UL << i, next = 1UL << ((i + 1) % 32);

		/*
		 * A value other than all-zeroes or all-ones has, going round
		 * its 32 bits, some bit set whose neighbour is clear: one
		 * rule per neighbouring pair covers every such value with a
		 * single comparison per rule (libseccomp cannot compare the
		 * same argument twice in one rule).
		 */
		cmp[0] = SCMP_A0(SCMP_CMP_MASKED_EQ, bit | next, bit);
		if (sandbox_seccomp_add(ctx, eperm, "personality", 1, cmp,
		    cause) != 0)
			return -1;
	}
	return 0;
}

/*
 * Build the filter and return a memfd holding the BPF program, at offset 0,
 * ready for bwrap --seccomp FD. The fd is close-on-exec; the caller clears
 * that flag in the child that execs bwrap, and closes it after the launch.
 */
int
sandbox_seccomp_fd(char **cause)
{
	scmp_filter_ctx	 ctx;
	int		 fd = -1, error;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		*cause = xstrdup("seccomp filter: seccomp_init failed");
		return -1;
	}
	if (sandbox_seccomp_rules(ctx, cause) != 0)
		goto fail;
	if ((fd = memfd_create("holt-seccomp", MFD_CLOEXEC)) == -1) {
		*cause = xprintf("seccomp filter: memfd_create: %s",
		    strerror(errno));
		goto fail;
	}
	if ((error = seccomp_export_bpf(ctx, fd)) != 0) {
		*cause = xprintf("seccomp filter: export: %s",
		    strerror(-error));
		goto fail;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		*cause = xprintf("seccomp filter: lseek: %s", strerror(errno));
		goto fail;
	}
	seccomp_release(ctx);
	return fd;

fail:
	if (fd != -1)
		close(fd);
	seccomp_release(ctx);
	return -1;
}
