/*
 * Unit tests of the sandbox's seccomp filter (sandbox-seccomp.c).
 *
 * Each case runs one system call in a forked child twice: once with the
 * exported filter loaded (no_new_privs + seccomp(SECCOMP_SET_MODE_FILTER),
 * exactly what bwrap does with --seccomp), once without. The filtered child
 * must see the denial (EPERM, or ENOSYS for clone3, or SIGSYS for a foreign
 * ABI) and the unfiltered child must not, so a case cannot pass because the
 * call fails for some other reason. Calls that would change the host when
 * they succeed (mount, pivot_root) are made with arguments that fail harmlessly
 * without the filter.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "holt.h"
#include "sandbox.h"

#define KILLED(sig) (1000 + (sig))

static struct sock_fprog	filter;

static int
setup(void **state)
{
	struct stat	 st;
	char		*cause = NULL;
	int		 fd;

	fd = sandbox_seccomp_fd(&cause);
	if (fd == -1) {
		fprintf(stderr, "%s\n", cause);
		return -1;
	}
	if (fstat(fd, &st) != 0 || st.st_size == 0 || st.st_size % 8 != 0)
		return -1;
	if (lseek(fd, 0, SEEK_CUR) != 0)	/* handed over rewound */
		return -1;
	filter.len = st.st_size / sizeof (struct sock_filter);
	filter.filter = xmalloc(st.st_size);
	if (read(fd, filter.filter, st.st_size) != st.st_size)
		return -1;
	if (fcntl(fd, F_GETFD) != FD_CLOEXEC)
		return -1;
	close(fd);
	return 0;
}

static int
teardown(void **state)
{
	free(filter.filter);
	return 0;
}

/*
 * Run fn in a child, under the filter or not. Returns what fn returned (an
 * errno, 0 for success) or KILLED(signal).
 */
static int
run(int filtered, int (*fn)(void))
{
	pid_t	pid;
	int	status;

	pid = fork();
	assert_true(pid != -1);
	if (pid == 0) {
		alarm(5);
		if (filtered) {
			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
			    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0,
			    &filter) != 0)
				_exit(200);
		}
		_exit(fn());
	}
	assert_true(waitpid(pid, &status, 0) == pid);
	if (WIFSIGNALED(status))
		return KILLED(WTERMSIG(status));
	return WEXITSTATUS(status);
}

static int
rc(long r)
{
	return r == -1 ? errno : 0;
}

/* The call is denied with want under the filter, and not without it. */
static void
denied(int (*fn)(void), int want)
{
	int	without;

	assert_int_equal(run(1, fn), want);
	without = run(0, fn);
	if (without == want)
		print_message("# (without the filter the call fails the same "
		    "way here: not running as root?)\n");
	else
		assert_int_not_equal(without, 200);
}

/* As denied(), and the unfiltered call must give a different result. */
static void
denied_strict(int (*fn)(void), int want)
{
	assert_int_equal(run(1, fn), want);
	assert_int_not_equal(run(0, fn), want);
}

static int do_keyctl(void)
{
	return rc(syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */,
	    -3 /* KEY_SPEC_SESSION_KEYRING */, 0));
}
static int do_add_key(void)
{
	return rc(syscall(SYS_add_key, "user", "holt", "x", 1, -3));
}
static int do_unshare_user(void) { return rc(unshare(CLONE_NEWUSER)); }
static int do_unshare_user_ns(void)
{
	return rc(unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET));
}
static int do_unshare_user_high(void)
{
	/* The flags word is an int: junk above bit 31 must not matter. */
	return rc(syscall(SYS_unshare, (1UL << 40) | CLONE_NEWUSER));
}
static int do_clone_user(void)
{
	long	pid;
	int	status;

	pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(0);
	if (pid == -1)
		return errno;
	waitpid(pid, &status, 0);
	return 0;
}
static int do_clone3(void)
{
	uint64_t	args[11];	/* struct clone_args, v2 */
	long		pid;
	int		status;

	memset(args, 0, sizeof args);
	args[4] = SIGCHLD;		/* exit_signal */
	pid = syscall(SYS_clone3, args, 64);
	if (pid == 0)
		_exit(0);
	if (pid == -1)
		return errno;
	waitpid(pid, &status, 0);
	return 0;
}
static int do_setns(void) { return rc(setns(-1, 0)); }
static int do_mount(void)
{
	return rc(mount("none", "/nonexistent/holt", "tmpfs", 0, NULL));
}
static int do_umount(void) { return rc(umount2("/nonexistent/holt", 0)); }
static int do_pivot_root(void)
{
	return rc(syscall(SYS_pivot_root, "/nonexistent/a", "/nonexistent/b"));
}
static int do_chroot(void) { return rc(chroot("/nonexistent/holt")); }
static int do_open_tree(void)
{
	return rc(syscall(SYS_open_tree, -1, "/nonexistent/holt", 0));
}
static int do_fsopen(void)
{
	return rc(syscall(SYS_fsopen, "nonexistentfs", 0));
}
static int do_fspick(void)
{
	return rc(syscall(SYS_fspick, -1, "/nonexistent/holt", 0));
}
static int do_move_mount(void)
{
	return rc(syscall(SYS_move_mount, -1, "", -1, "", 0));
}
static int do_ptrace(void)
{
	return rc(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
}
static int do_process_vm_readv(void)
{
	char		a[4] = "abc", b[4];
	struct iovec	l = { b, 4 }, r = { a, 4 };

	return rc(syscall(SYS_process_vm_readv, getpid(), &l, 1, &r, 1, 0));
}
static int do_pidfd_getfd(void)
{
	long	pidfd;

	/* Take a copy of our own stdin through a pidfd. */
	if ((pidfd = syscall(SYS_pidfd_open, getpid(), 0)) == -1)
		return 203;
	return rc(syscall(SYS_pidfd_getfd, pidfd, 0, 0));
}
static int do_io_uring(void)
{
	char	params[120];

	memset(params, 0, sizeof params);
	return rc(syscall(SYS_io_uring_setup, 1, params));
}
static int do_bpf(void) { return rc(syscall(SYS_bpf, -1, NULL, 0)); }
static int do_perf(void)
{
	return rc(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
}
static int do_userfaultfd(void) { return rc(syscall(SYS_userfaultfd, 0)); }
static int do_init_module(void)
{
	return rc(syscall(SYS_finit_module, -1, "", 0));
}
static int do_syslog(void)
{
	/* SYSLOG_ACTION_SIZE_BUFFER: allowed to anyone without the filter. */
	return rc(syscall(SYS_syslog, 10, NULL, 0));
}
static int do_personality_norandom(void)
{
	return rc(personality(PER_LINUX | ADDR_NO_RANDOMIZE));
}
static int do_personality_high(void)
{
	/* The kernel reads an int: 1<<32 | X is X. */
	return rc(syscall(SYS_personality, (1UL << 32) | 0x0008 /* UNAME26 */));
}
static int do_personality_query(void)
{
	int	p;

	if ((p = personality(0xffffffff)) == -1)
		return errno;
	return rc(personality(p));
}

/* A pty whose slave is our controlling terminal, so TIOCSTI may be used. */
static int
ctty(void)
{
	int	m, s;

	if ((m = posix_openpt(O_RDWR | O_NOCTTY)) == -1 || grantpt(m) != 0 ||
	    unlockpt(m) != 0)
		return -1;
	setsid();
	if ((s = open(ptsname(m), O_RDWR)) == -1)
		return -1;
	return s;
}
static int do_tiocsti(void)
{
	int	s;
	char	c = 'x';

	if ((s = ctty()) == -1)
		return 201;
	return rc(ioctl(s, TIOCSTI, &c));
}
static int do_tiocsti_high(void)
{
	int	s;
	char	c = 'x';

	if ((s = ctty()) == -1)
		return 201;
	return rc(syscall(SYS_ioctl, s, (1UL << 32) | TIOCSTI, &c));
}
static int do_tioclinux(void)
{
	int	s;
	char	c = 6;	/* TIOCL_GETSHIFTSTATE */

	if ((s = ctty()) == -1)
		return 201;
	return rc(ioctl(s, TIOCLINUX, &c));
}
static int do_tiocgwinsz(void)
{
	struct winsize	ws;
	int		s;

	if ((s = ctty()) == -1)
		return 201;
	return rc(ioctl(s, TIOCGWINSZ, &ws));
}

#if defined(__x86_64__)
static int do_int80(void)
{
	long	r;

	/* getpid (20) through the i386 entry point. */
	__asm__ volatile ("int $0x80" : "=a" (r) : "0" (20L) : "memory");
	return r == getpid() ? 0 : 202;
}
static int do_x32(void)
{
	return rc(syscall(0x40000000 | SYS_getpid));
}
#endif

static void *thread_main(void *arg) { return arg; }

static int
do_ordinary(void)
{
	static int	 arg;
	pthread_t	 t;
	void		*ret;
	int		 p[2], status;
	pid_t		 pid;
	char		 c;

	if (getpid() <= 0)
		return 210;
	if (pipe(p) != 0 || write(p[1], "x", 1) != 1 || read(p[0], &c, 1) != 1)
		return 211;
	if ((pid = fork()) == -1)
		return 212;
	if (pid == 0)
		_exit(7);
	if (waitpid(pid, &status, 0) != pid || WEXITSTATUS(status) != 7)
		return 213;
	/* glibc tries clone3 first; on ENOSYS it falls back to clone. */
	if (pthread_create(&t, NULL, thread_main, &arg) != 0)
		return 214;
	if (pthread_join(t, &ret) != 0 || ret != &arg)
		return 215;
	if (unshare(0) != 0)
		return 216;
	return 0;
}

static void
test_namespaces(void **state)
{
	denied(do_unshare_user, EPERM);
	denied(do_unshare_user_ns, EPERM);
	denied(do_unshare_user_high, EPERM);
	denied(do_clone_user, EPERM);
	denied_strict(do_clone3, ENOSYS);
	denied_strict(do_setns, EPERM);
}

static void
test_mounts(void **state)
{
	denied(do_mount, EPERM);
	denied(do_umount, EPERM);
	denied(do_pivot_root, EPERM);
	denied_strict(do_chroot, EPERM);
	denied(do_open_tree, EPERM);
	denied(do_fsopen, EPERM);
	denied(do_fspick, EPERM);
	denied(do_move_mount, EPERM);
}

static void
test_kernel_surface(void **state)
{
	denied(do_keyctl, EPERM);
	denied(do_add_key, EPERM);
	denied(do_ptrace, EPERM);
	denied(do_process_vm_readv, EPERM);
	denied_strict(do_pidfd_getfd, EPERM);
	denied(do_io_uring, EPERM);
	denied(do_bpf, EPERM);
	denied_strict(do_perf, EPERM);
	denied(do_userfaultfd, EPERM);
	denied(do_init_module, EPERM);
	denied(do_syslog, EPERM);
}

static void
test_personality(void **state)
{
	denied(do_personality_norandom, EPERM);
	denied(do_personality_high, EPERM);
	assert_int_equal(run(1, do_personality_query), 0);
}

static void
test_terminal(void **state)
{
	int	without;

	assert_int_equal(run(1, do_tiocsti), EPERM);
	assert_int_equal(run(1, do_tiocsti_high), EPERM);
	/* Unfiltered: works, or EIO where legacy TIOCSTI is off. */
	without = run(0, do_tiocsti);
	assert_true(without == 0 || without == EIO);
	without = run(0, do_tiocsti_high);
	assert_true(without == 0 || without == EIO);
	denied_strict(do_tioclinux, EPERM);
	/* Other terminal ioctls still work. */
	assert_int_equal(run(1, do_tiocgwinsz), 0);
}

static void
test_foreign_abi(void **state)
{
#if defined(__x86_64__)
	int	without;

	assert_int_equal(run(1, do_int80), KILLED(SIGSYS));
	assert_int_equal(run(1, do_x32), KILLED(SIGSYS));
	/* Without the filter int 0x80 works, unless ia32 is compiled out. */
	without = run(0, do_int80);
	assert_true(without == 0 || without == KILLED(SIGSEGV));
	assert_int_not_equal(run(0, do_x32), KILLED(SIGSYS));
#else
	skip();
#endif
}

static void
test_ordinary_calls_work(void **state)
{
	assert_int_equal(run(1, do_ordinary), 0);
	assert_int_equal(run(0, do_ordinary), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ordinary_calls_work),
		cmocka_unit_test(test_namespaces),
		cmocka_unit_test(test_mounts),
		cmocka_unit_test(test_kernel_surface),
		cmocka_unit_test(test_personality),
		cmocka_unit_test(test_terminal),
		cmocka_unit_test(test_foreign_abi),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
