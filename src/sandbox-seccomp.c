/*
 * sandbox-seccomp.c: the seccomp filter every sandbox runs under, compiled
 * with libseccomp and handed to bubblewrap as a BPF program in a memfd.
 * (Placeholder: a minimal filter until the full one lands.)
 */
#include <sys/mman.h>

#include <errno.h>
#include <seccomp.h>
#include <string.h>
#include <unistd.h>

#include "holt.h"

int sandbox_seccomp_fd(char **cause);

int
sandbox_seccomp_fd(char **cause)
{
	scmp_filter_ctx	 ctx;
	int		 fd;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL) {
		*cause = xstrdup("seccomp_init failed");
		return -1;
	}
	seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(keyctl), 0);
	if ((fd = memfd_create("holt-seccomp", MFD_CLOEXEC)) == -1 ||
	    seccomp_export_bpf(ctx, fd) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
		*cause = xprintf("seccomp filter: %s", strerror(errno));
		if (fd != -1)
			close(fd);
		seccomp_release(ctx);
		return -1;
	}
	seccomp_release(ctx);
	return fd;
}
