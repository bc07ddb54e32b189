/*
 * sandbox-landlock.c: Landlock scoping of a sandbox's processes (ABI 6,
 * Linux 6.12): no connecting to abstract unix sockets, no signals, outside
 * the sandbox's own domain. Nothing about files: bubblewrap's mounts and the
 * seccomp filter (sandbox-seccomp.c) do that part.
 *
 * The structure and constants are declared here, not taken from
 * <linux/landlock.h>, which on older distributions predates "scoped".
 */
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "holt.h"
#include "sandbox-landlock.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION	(1U << 0)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET	(1ULL << 0)
#define LL_SCOPE_SIGNAL			(1ULL << 1)
#define LL_ABI_SCOPE			6

struct sandbox_landlock_attr {
	uint64_t	handled_access_fs;
	uint64_t	handled_access_net;
	uint64_t	scoped;
};

int
sandbox_landlock_scope(char **cause)
{
	struct sandbox_landlock_attr	attr;
	long				abi;
	int				fd;

	abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LL_CREATE_RULESET_VERSION);
	if (abi == -1) {
		*cause = xprintf("landlock: %s", errno == EOPNOTSUPP ?
		    "disabled in this kernel" : strerror(errno));
		return 1;
	}
	if (abi < LL_ABI_SCOPE) {
		*cause = xprintf("landlock: ABI %ld cannot scope sockets and "
		    "signals (needs %d, Linux 6.12)", abi, LL_ABI_SCOPE);
		return 1;
	}

	memset(&attr, 0, sizeof attr);
	attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
	if (fd == -1) {
		*cause = xprintf("landlock: create ruleset: %s",
		    strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		*cause = xprintf("landlock: no_new_privs: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (syscall(SYS_landlock_restrict_self, fd, 0) != 0) {
		*cause = xprintf("landlock: restrict self: %s",
		    strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}
