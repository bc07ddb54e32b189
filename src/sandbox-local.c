/*
 * sandbox-local.c: the local provider's processes (DESIGN 4). A sandbox is
 * bubblewrap running holt-envd as pid 1 of fresh namespaces, launched
 * detached (fork, setsid, fork, exec) so it outlives whoever created it.
 *
 * The host binds the control socket run/envd.sock before bwrap starts and
 * hands the listening descriptor down; the path is never mounted inside, so
 * it is reachable from the host only. envd's own state directory (service
 * list and logs) is handed down the same way, as a descriptor.
 *
 * Limits and pause use cgroups when we can make them (v1 freezer/pids/
 * memory controllers, or v2), below the cgroup we run in; otherwise limits
 * fall back to rlimits and pause to envd stopping every process with
 * SIGSTOP. Stopping kills envd, pid 1 of the sandbox's pid namespace, which
 * makes the kernel kill everything else in it, daemons included.
 */
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "git.h"
#include "sandbox.h"
#include "sandbox-provider.h"
#include "sandbox-local.h"
#include "sandbox-mask.h"

#ifndef BWRAP_PATH
#define BWRAP_PATH "/usr/bin/bwrap"
#endif

#define ENVD_INSIDE "/run/holt/holt-envd"
#define FD_LISTEN 3
#define FD_STATE 4
#define FD_SECCOMP 5
#define FD_INFO 6
#define FD_USERNS 7	/* a sandbox with a host uid of its own: its userns */
#define FD_PROXY 8	/* --net policy: envd's end of the proxy's socket */
#define NFDS 6		/* 3 to 8; 7 and 8 may be absent */
#define PROXY_URL "http://127.0.0.1:3128"

/*
 * run/ files (pid, cgroups, paused) describe processes, which a reboot
 * ends anyway: written whole (temp + rename) but not fsync'd, which would
 * cost more than the rest of a start.
 */
int
sandbox_write_run(const char *path, const char *data, size_t len)
{
	char	*tmp = xprintf("%s.tmp.%ld", path, (long)getpid());
	int	 fd, saved;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd == -1 || file_write_all(fd, data, len) != 0 ||
	    close(fd) != 0 || rename(tmp, path) != 0) {
		saved = errno;
		unlink(tmp);
		free(tmp);
		errno = saved;
		return -1;
	}
	free(tmp);
	return 0;
}

static void
sleep_ms(int ms)
{
	struct timespec	 ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* cgroups ------------------------------------------------------------ */

struct cgroups {
	char	*freezer;	/* v1 freezer dir, or v2 dir */
	char	*other[3];	/* v1 pids, memory; NULL-terminated */
	int	 v2;
};

static void
cgroups_release(struct cgroups *cg)
{
	size_t	 i;

	free(cg->freezer);
	for (i = 0; i < nitems(cg->other); i++)
		free(cg->other[i]);
	memset(cg, 0, sizeof *cg);
}

/* Our own cgroup path for a v1 controller ("" for v2). */
static char *
cgroup_own(const char *ctrl)
{
	FILE	*f;
	char	 line[1024], *a, *b, *tok, *save;

	if ((f = fopen("/proc/self/cgroup", "re")) == NULL)
		return NULL;
	while (fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((a = strchr(line, ':')) == NULL ||
		    (b = strchr(a + 1, ':')) == NULL)
			continue;
		*b = '\0';
		for (tok = strtok_r(a + 1, ",", &save); tok != NULL;
		    tok = strtok_r(NULL, ",", &save)) {
			if (strcmp(tok, ctrl) == 0) {
				fclose(f);
				return xstrdup(b + 1);
			}
		}
		if (*ctrl == '\0' && a[1] == '\0') {
			fclose(f);
			return xstrdup(b + 1);
		}
	}
	fclose(f);
	return NULL;
}

static int
cg_write(const char *dir, const char *file, const char *value)
{
	char	*path = paths_join(dir, file);
	int	 rc;

	rc = file_write_str(path, value);
	free(path);
	return rc;
}

static char *
cg_read(const char *dir, const char *file)
{
	char	*path = paths_join(dir, file), *data;

	data = file_read(path, NULL, 1024 * 1024);
	free(path);
	return data;
}

/* Our own cgroup in one hierarchy, if we may make cgroups there. */
static char *
cg_parent(const char *root, const char *ctrl)
{
	char	*own, *dir;

	if (access(root, W_OK) != 0 || (own = cgroup_own(ctrl)) == NULL)
		return NULL;
	dir = xprintf("%s%s", root, strcmp(own, "/") == 0 ? "" : own);
	free(own);
	return dir;
}

/* Make (or find) the sandbox's cgroup in one hierarchy. */
static char *
cg_make(const char *root, const char *ctrl, const char *id)
{
	char	*parent, *dir;

	if ((parent = cg_parent(root, ctrl)) == NULL)
		return NULL;
	dir = xprintf("%s/holt-%s", parent, id);
	free(parent);
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		log_debug("cgroup %s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	return dir;
}

/*
 * Could a sandbox made now get a pids cgroup (as cgroups_setup would make
 * it)? Without one, --pids falls back to RLIMIT_NPROC, which binds every
 * user but root.
 */
int
sandbox_pids_cgroup(void)
{
	const char	*v;
	char		*dir;
	int		 ok;

	if ((v = getenv("HOLT_SANDBOX_CGROUPS")) != NULL && strcmp(v, "0") == 0)
		return 0;
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
		dir = cg_parent("/sys/fs/cgroup", "");
	else
		dir = cg_parent("/sys/fs/cgroup/pids", "pids");
	ok = dir != NULL && access(dir, W_OK) == 0;
	free(dir);
	return ok;
}

/* May we make a user namespace (not in every container)? */
int
sandbox_userns_ok(void)
{
	pid_t	 pid;
	int	 status;

	if ((pid = fork()) == -1)
		return 0;
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * Host uids for a sandbox made by root: its ids 0-65535 are a block of
 * host uids of its own, so neither its user nor its root (sudo inside) is
 * anyone on the host, and RLIMIT_NPROC binds it. Blocks are taken from
 * 0x70000000 to 0x7ffeffff (4095 blocks, below what systemd and the
 * distributions hand out above), one per sandbox (a
 * hash of its id), skipping a block another sandbox holds or whose uids
 * the system knows. Returns the host uid of the sandbox's user (1000).
 */
/* The blocks of the other sandboxes (quietly: one may be half-made). */
static size_t
uid_blocks_taken(const char *id, uid_t **blocks)
{
	DIR		*d;
	struct dirent	*de;
	struct sandbox	*sb;
	char		*cause, *meta;
	size_t		 n = 0;

	*blocks = NULL;
	if ((d = opendir(paths_sandboxes_dir())) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (!sandbox_is_id(de->d_name) || strcmp(de->d_name, id) == 0)
			continue;
		meta = xprintf("%s/%s/meta.json", paths_sandboxes_dir(),
		    de->d_name);
		cause = NULL;
		sb = access(meta, F_OK) == 0 ? sandbox_load(de->d_name,
		    &cause) : NULL;
		free(meta);
		free(cause);
		if (sb == NULL)
			continue;
		*blocks = xreallocarray(*blocks, n + 1, sizeof **blocks);
		(*blocks)[n++] = sb->host_uid / 0x10000U;
		sandbox_free(sb);
	}
	closedir(d);
	return n;
}

uid_t
sandbox_uid_pick(const char *id)
{
	uid_t		*blocks;
	uint32_t	 h = 2166136261U;
	uid_t		 base = 0;
	size_t		 i, j, n;
	int		 taken = 1;

	for (i = 0; id[i] != '\0'; i++)
		h = (h ^ (unsigned char)id[i]) * 16777619U;
	n = uid_blocks_taken(id, &blocks);
	for (i = 0; i < 0xfff && taken; i++) {
		base = (uid_t)(0x70000000U + ((h + i) % 0xfffU) * 0x10000U);
		taken = getpwuid(base) != NULL || getpwuid(base + 1000) != NULL ||
		    getgrgid((gid_t)base) != NULL;
		for (j = 0; j < n && !taken; j++)
			taken = blocks[j] == base / 0x10000U;
	}
	free(blocks);
	return base + 1000;
}

/*
 * A user namespace in which the sandbox's ids 0-65535 are host uids
 * uid-1000 up (its user, 1000, is uid), for bwrap --userns: bwrap sets the
 * sandbox up as its root, envd, pid 1, keeps a root helper for sudo and
 * becomes 1000 before it runs anything (holt-envd --user). Host root is not
 * mapped: nothing inside is ever host root. A child unshares and waits; we
 * write its maps (root may map any uid) and keep a descriptor of its
 * namespace.
 */
static int
userns_make(uid_t uid, char **cause)
{
	int	 ready[2], hold[2], fd = -1;
	pid_t	 pid;
	char	 path[64], map[64], c;

	if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(hold, O_CLOEXEC) != 0)
		fatal("pipe2");
	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid == 0) {
		close(ready[0]);
		close(hold[1]);
		/* Owned by the sandbox's root, whom bwrap runs as, not root. */
		c = setgroups(0, NULL) == 0 && setresgid((gid_t)uid - 1000,
		    (gid_t)uid - 1000, (gid_t)uid - 1000) == 0 &&
		    setresuid(uid - 1000, uid - 1000, uid - 1000) == 0 &&
		    unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		/* Until the parent has what it needs. */
		if (read(hold[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	if (read(ready[0], &c, 1) != 1 || c != 'y') {
		*cause = xprintf("user namespace: %s (needed to run the sandbox "
		    "as an unprivileged uid)", c == 'n' ? "not permitted" :
		    "failed");
		goto out;
	}
	snprintf(map, sizeof map, "0 %lu 65536\n", (unsigned long)uid - 1000);
	snprintf(path, sizeof path, "/proc/%ld/uid_map", (long)pid);
	if (file_write_str(path, map) != 0) {
		*cause = xprintf("%s: %s", path, strerror(errno));
		goto out;
	}
	snprintf(path, sizeof path, "/proc/%ld/gid_map", (long)pid);
	if (file_write_str(path, map) != 0) {
		*cause = xprintf("%s: %s", path, strerror(errno));
		goto out;
	}
	snprintf(path, sizeof path, "/proc/%ld/ns/user", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		*cause = xprintf("%s: %s", path, strerror(errno));
out:
	close(ready[0]);
	close(hold[1]);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
	return fd;
}

static void
cgroups_save(struct sandbox *sb, struct cgroups *cg)
{
	struct buf	 b = BUF_INIT;
	char		*path;
	size_t		 i;

	if (cg->freezer != NULL)
		buf_addf(&b, "%s %s\n", cg->v2 ? "v2" : "freezer", cg->freezer);
	for (i = 0; i < nitems(cg->other) && cg->other[i] != NULL; i++)
		buf_addf(&b, "other %s\n", cg->other[i]);
	path = sandbox_path(sb, "run/cgroups");
	if (b.len == 0)
		unlink(path);
	else
		sandbox_write_run(path, b.data, b.len);
	free(path);
	buf_release(&b);
}

static void
cgroups_load(struct sandbox *sb, struct cgroups *cg)
{
	char	*path, *data, *line, *save, *sp;
	size_t	 n = 0;

	memset(cg, 0, sizeof *cg);
	path = sandbox_path(sb, "run/cgroups");
	data = file_read(path, NULL, 65536);
	free(path);
	if (data == NULL)
		return;
	for (line = strtok_r(data, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((sp = strchr(line, ' ')) == NULL)
			continue;
		*sp++ = '\0';
		if (strcmp(line, "freezer") == 0 || strcmp(line, "v2") == 0) {
			free(cg->freezer);
			cg->freezer = xstrdup(sp);
			cg->v2 = strcmp(line, "v2") == 0;
		} else if (n < nitems(cg->other) - 1)
			cg->other[n++] = xstrdup(sp);
	}
	free(data);
}

static void
cgroups_setup(struct sandbox *sb, struct cgroups *cg)
{
	char		 v[64], *dir;
	const char	*v2s;
	size_t	 n = 0;

	memset(cg, 0, sizeof *cg);
	/* HOLT_SANDBOX_CGROUPS=0: the fallbacks, as without privilege. */
	if ((v2s = getenv("HOLT_SANDBOX_CGROUPS")) != NULL &&
	    strcmp(v2s, "0") == 0)
		return;
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
		if ((dir = cg_make("/sys/fs/cgroup", "", sb->id)) == NULL)
			return;
		cg->v2 = 1;
		cg->freezer = dir;
		if (sb->pids > 0) {
			snprintf(v, sizeof v, "%d", sb->pids);
			cg_write(dir, "pids.max", v);
		}
		if (sb->memory > 0) {
			snprintf(v, sizeof v, "%lld", sb->memory);
			cg_write(dir, "memory.max", v);
			cg_write(dir, "memory.swap.max", "0");
		}
		return;
	}
	cg->freezer = cg_make("/sys/fs/cgroup/freezer", "freezer", sb->id);
	if ((dir = cg_make("/sys/fs/cgroup/pids", "pids", sb->id)) != NULL) {
		snprintf(v, sizeof v, "%d", sb->pids);
		cg_write(dir, "pids.max", sb->pids > 0 ? v : "max");
		cg->other[n++] = dir;
	}
	if ((dir = cg_make("/sys/fs/cgroup/memory", "memory", sb->id)) != NULL) {
		snprintf(v, sizeof v, "%lld", sb->memory > 0 ? sb->memory : -1LL);
		cg_write(dir, "memory.limit_in_bytes", v);
		if (sb->memory > 0)
			cg_write(dir, "memory.memsw.limit_in_bytes", v);
		cg->other[n++] = dir;
	}
}

static int
cgroups_has(struct cgroups *cg, const char *ctrl)
{
	size_t	 i;

	if (cg->v2)
		return 1;
	for (i = 0; i < nitems(cg->other) && cg->other[i] != NULL; i++) {
		if (strstr(cg->other[i], ctrl) != NULL)
			return 1;
	}
	return 0;
}

/* Kill whatever is left in the cgroups, thaw, and remove them. */
static void
cgroups_destroy(struct cgroups *cg)
{
	char	*procs, *p, *end, *dirs[4];
	size_t	 i, n = 0;
	int	 tries, left;

	if (cg->freezer != NULL)
		dirs[n++] = cg->freezer;
	for (i = 0; i < nitems(cg->other) && cg->other[i] != NULL; i++)
		dirs[n++] = cg->other[i];
	if (cg->v2 && cg->freezer != NULL)
		cg_write(cg->freezer, "cgroup.kill", "1");
	for (tries = 0; tries < 400; tries++) {
		left = 0;
		for (i = 0; i < n; i++) {
			if ((procs = cg_read(dirs[i], "cgroup.procs")) == NULL)
				continue;
			for (p = procs; *p != '\0'; p = end) {
				long pid = strtol(p, &end, 10);
				if (end == p)
					break;
				/* Never 0 or -1: that would be us, or all. */
				if (pid > 1) {
					kill((pid_t)pid, SIGKILL);
					left = 1;
				}
			}
			free(procs);
		}
		/* Frozen tasks die only once thawed. */
		if (cg->freezer != NULL)
			cg_write(cg->freezer, cg->v2 ? "cgroup.freeze" :
			    "freezer.state", cg->v2 ? "0" : "THAWED");
		if (!left)
			break;
		sleep_ms(5);
	}
	for (i = 0; i < n; i++) {
		for (tries = 0; tries < 100; tries++) {
			if (rmdir(dirs[i]) == 0 || errno == ENOENT)
				break;
			sleep_ms(5);
		}
	}
}

/* launch -------------------------------------------------------------- */

static void
arg(char ***argv, size_t *n, const char *s)
{
	*argv = xreallocarray(*argv, *n + 2, sizeof **argv);
	(*argv)[(*n)++] = xstrdup(s);
	(*argv)[*n] = NULL;
}

static const char *sandbox_tops[] = { "/bin", "/sbin", "/lib", "/lib32",
    "/lib64", "/libx32" };

/* The image's top-level links (/bin -> usr/bin, ...) and directories. */
static void
bwrap_tops(struct sandbox *sb, char ***argv, size_t *n)
{
	const char	*image = sandbox_root_on(sb) ?
			    sandbox_root_image(sb) : "host";
	char		 link[PATH_MAX], *p;
	size_t		 i;
	struct stat	 st;
	ssize_t		 len;

	for (i = 0; i < nitems(sandbox_tops); i++) {
		p = strcmp(image, "host") == 0 ? xstrdup(sandbox_tops[i]) :
		    xprintf("%s%s", image, sandbox_tops[i]);
		if (lstat(p, &st) != 0) {
			free(p);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			len = readlink(p, link, sizeof link - 1);
			if (len > 0) {
				link[len] = '\0';
				arg(argv, n, "--symlink");
				arg(argv, n, link);
				arg(argv, n, sandbox_tops[i]);
			}
		} else if (S_ISDIR(st.st_mode) && strcmp(image, "host") == 0) {
			arg(argv, n, "--ro-bind");
			arg(argv, n, sandbox_tops[i]);
			arg(argv, n, sandbox_tops[i]);
		}
		free(p);
	}
}

/* sandbox-root.c's overlays, bound from where it staged them. */
static void
bwrap_staged(char ***argv, size_t *n, const char *name, const char *to)
{
	char	*p = paths_join(sandbox_root_stage(), name);

	arg(argv, n, "--bind");
	arg(argv, n, p);
	arg(argv, n, to);
	free(p);
}

static char **
bwrap_argv(struct sandbox *sb)
{
	char		**argv = NULL, **masks, *p, *size = NULL;
	size_t		  n = 0, i;
	int		  staged = sandbox_root_on(sb);
	static const char *walk[] = { "/home", "/run", "/run/holt",
	    "/run/holt/bin" };
	static const char *overlays[] = { "/usr", "/etc", "/var", "/opt",
	    "/root" };
	static const char *proxy_vars[] = { "http_proxy", "https_proxy",
	    "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY" };
	static const char *caps[] = { "CAP_SETUID", "CAP_SETGID",
	    "CAP_SETPCAP", "CAP_CHOWN", "CAP_DAC_OVERRIDE",
	    "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	    "CAP_SETFCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
	    "CAP_AUDIT_WRITE" };

	arg(&argv, &n, "bwrap");
	if (sb->host_uid != 0) {
		/* --unshare-all, but the user namespace is ours (userns_make). */
		arg(&argv, &n, "--userns");
		arg(&argv, &n, "7");
		arg(&argv, &n, "--unshare-ipc");
		arg(&argv, &n, "--unshare-pid");
		arg(&argv, &n, "--unshare-uts");
		arg(&argv, &n, "--unshare-cgroup-try");
		if (sb->net != SANDBOX_NET_ON)
			arg(&argv, &n, "--unshare-net");
	} else {
		arg(&argv, &n, "--unshare-all");
		if (sb->net == SANDBOX_NET_ON)
			arg(&argv, &n, "--share-net");
	}
	arg(&argv, &n, "--new-session");
	arg(&argv, &n, "--as-pid-1");
	arg(&argv, &n, "--cap-drop");
	arg(&argv, &n, "ALL");
	if (sb->host_uid != 0) {
		/*
		 * bwrap would drop its privileges in the namespace by
		 * switching to 1000 before it set the sandbox up: it stays
		 * the sandbox's root, and envd keeps a root helper for sudo
		 * with what a package manager needs (within the namespace
		 * only), then becomes 1000 with none before anything runs.
		 */
		arg(&argv, &n, "--uid");
		arg(&argv, &n, "0");
		arg(&argv, &n, "--gid");
		arg(&argv, &n, "0");
		for (i = 0; i < nitems(caps); i++) {
			arg(&argv, &n, "--cap-add");
			arg(&argv, &n, caps[i]);
		}
	} else {
		arg(&argv, &n, "--uid");
		arg(&argv, &n, "1000");
		arg(&argv, &n, "--gid");
		arg(&argv, &n, "1000");
	}
	arg(&argv, &n, "--hostname");
	arg(&argv, &n, "holt");
	if (staged) {
		for (i = 0; i < nitems(overlays); i++)
			bwrap_staged(&argv, &n, overlays[i] + 1, overlays[i]);
	} else {
		arg(&argv, &n, "--ro-bind");
		arg(&argv, &n, "/usr");
		arg(&argv, &n, "/usr");
		arg(&argv, &n, "--ro-bind");
		arg(&argv, &n, "/etc");
		arg(&argv, &n, "/etc");
	}
	/* Root without a uid of its own (no user namespace): hide secrets. */
	if (!staged && geteuid() == 0) {
		masks = sandbox_mask_argv("/etc");
		for (i = 0; masks[i] != NULL; i++)
			arg(&argv, &n, masks[i]);
		sandbox_mask_free(masks);
	}
	bwrap_tops(sb, &argv, &n);
	arg(&argv, &n, "--proc");
	arg(&argv, &n, "/proc");
	/*
	 * bwrap covers /proc/sys only when it is writable, and its
	 * directories are not; but its files are, for the sandbox user when
	 * that is the host's root: make the whole tree read-only.
	 */
	arg(&argv, &n, "--ro-bind");
	arg(&argv, &n, "/proc/sys");
	arg(&argv, &n, "/proc/sys");
	arg(&argv, &n, "--dev");
	arg(&argv, &n, "/dev");
	/*
	 * tmpfs is memory: a sandbox's /tmp and /dev/shm are bounded by
	 * --memory even where no memory cgroup charges them, and /dev
	 * itself (bwrap's tmpfs) is read-only.
	 */
	if (sb->memory > 0)
		xasprintf(&size, "%lld", sb->memory);
	arg(&argv, &n, "--perms");
	arg(&argv, &n, "1777");
	if (size != NULL) {
		arg(&argv, &n, "--size");
		arg(&argv, &n, size);
	}
	arg(&argv, &n, "--tmpfs");
	arg(&argv, &n, "/dev/shm");
	arg(&argv, &n, "--remount-ro");
	arg(&argv, &n, "/dev");
	arg(&argv, &n, "--perms");
	arg(&argv, &n, "1777");
	if (size != NULL) {
		arg(&argv, &n, "--size");
		arg(&argv, &n, size);
	}
	arg(&argv, &n, "--tmpfs");
	arg(&argv, &n, "/tmp");
	free(size);
	if (sb->host_uid != 0) {
		/* bwrap makes mount points' parents 0700: root's, not the user's. */
		for (i = 0; i < nitems(walk); i++) {
			arg(&argv, &n, "--perms");
			arg(&argv, &n, "0755");
			arg(&argv, &n, "--dir");
			arg(&argv, &n, walk[i]);
		}
	}
	if (staged) {
		/* sudo's socket: in a directory only the sandbox's root writes. */
		arg(&argv, &n, "--perms");
		arg(&argv, &n, "0755");
		arg(&argv, &n, "--tmpfs");
		arg(&argv, &n, "/run/holt/root");
		bwrap_staged(&argv, &n, "workspace", "/workspace");
		bwrap_staged(&argv, &n, "home", "/home/user");
		p = paths_join(sandbox_root_stage(), "envd");
		arg(&argv, &n, "--ro-bind");
		arg(&argv, &n, p);
		arg(&argv, &n, ENVD_INSIDE);
		arg(&argv, &n, "--ro-bind");
		arg(&argv, &n, p);
		arg(&argv, &n, "/run/holt/bin/sudo");
		free(p);
	} else {
		arg(&argv, &n, "--bind");
		p = sandbox_path(sb, "workspace");
		arg(&argv, &n, p);
		free(p);
		arg(&argv, &n, "/workspace");
		arg(&argv, &n, "--bind");
		p = sandbox_path(sb, "home");
		arg(&argv, &n, p);
		free(p);
		arg(&argv, &n, "/home/user");
		arg(&argv, &n, "--ro-bind");
		p = paths_find_helper("holt-envd");
		arg(&argv, &n, p);
		free(p);
		arg(&argv, &n, ENVD_INSIDE);
	}
	/* Nothing but the mounts above is writable: not bwrap's root tmpfs. */
	arg(&argv, &n, "--remount-ro");
	arg(&argv, &n, "/");
	arg(&argv, &n, "--chdir");
	/* Root without capabilities may not enter the user's 0700 directory. */
	arg(&argv, &n, sb->host_uid != 0 ? "/" : "/workspace");
	arg(&argv, &n, "--clearenv");
	arg(&argv, &n, "--setenv");
	arg(&argv, &n, "PATH");
	/* holt's sudo first: an image's own is setuid, which cannot work. */
	arg(&argv, &n, staged ? "/run/holt/bin:/usr/local/bin:/usr/bin:/bin:"
	    "/usr/local/sbin:/usr/sbin:/sbin" : "/usr/local/bin:/usr/bin:/bin:"
	    "/usr/local/sbin:/usr/sbin:/sbin");
	arg(&argv, &n, "--setenv");
	arg(&argv, &n, "HOME");
	arg(&argv, &n, "/home/user");
	arg(&argv, &n, "--setenv");
	arg(&argv, &n, "USER");
	arg(&argv, &n, "user");
	arg(&argv, &n, "--setenv");
	arg(&argv, &n, "LOGNAME");
	arg(&argv, &n, "user");
	arg(&argv, &n, "--setenv");
	arg(&argv, &n, "LANG");
	arg(&argv, &n, "C.UTF-8");
	arg(&argv, &n, "--setenv");
	arg(&argv, &n, "TERM");
	arg(&argv, &n, "xterm-256color");
	if (sb->net == SANDBOX_NET_POLICY) {
		/* What package managers and curl read, both cases. */
		for (i = 0; i < nitems(proxy_vars); i++) {
			arg(&argv, &n, "--setenv");
			arg(&argv, &n, proxy_vars[i]);
			arg(&argv, &n, strstr(proxy_vars[i], "no_") != NULL ||
			    strstr(proxy_vars[i], "NO_") != NULL ?
			    "localhost,127.0.0.1,::1" : PROXY_URL);
		}
	}
	arg(&argv, &n, "--seccomp");
	arg(&argv, &n, "5");
	arg(&argv, &n, "--info-fd");
	arg(&argv, &n, "6");
	arg(&argv, &n, "--");
	arg(&argv, &n, ENVD_INSIDE);
	arg(&argv, &n, "--listen-fd");
	arg(&argv, &n, "3");
	arg(&argv, &n, "--state-fd");
	arg(&argv, &n, "4");
	arg(&argv, &n, "--id");
	arg(&argv, &n, sb->id);
	if (sb->host_uid != 0) {
		arg(&argv, &n, "--user");
		arg(&argv, &n, "1000");
		arg(&argv, &n, "--sudo");
		arg(&argv, &n, "/run/holt/root/sudo.sock");
	}
	if (sb->net == SANDBOX_NET_POLICY) {
		arg(&argv, &n, "--proxy-fd");
		arg(&argv, &n, "8");
	}
	return argv;
}

static int
make_listener(struct sandbox *sb, char **cause)
{
	struct sockaddr_un	 sun;
	int			 s, dirfd, r;
	char			*path;
	mode_t			 old;

	path = sandbox_socket_path(sb);
	unlink(path);
	if (sandbox_sockaddr(sb, &sun, &dirfd) != 0) {
		*cause = xprintf("%s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		fatal("socket");
	old = umask(077);
	r = bind(s, (struct sockaddr *)&sun, sizeof sun);
	umask(old);
	if (dirfd != -1)
		close(dirfd);
	if (r != 0 || chmod(path, 0600) != 0 || listen(s, 128) != 0) {
		*cause = xprintf("%s: %s", path, strerror(errno));
		free(path);
		close(s);
		return -1;
	}
	free(path);
	return s;
}

/* The last line of envd.log: why a launch failed. */
static char *
launch_log_tail(struct sandbox *sb)
{
	char	*path = sandbox_path(sb, "run/envd.log"), *data, *p, *out;
	size_t	 len;

	data = file_read(path, &len, 0);
	free(path);
	if (data == NULL || len == 0) {
		free(data);
		return xstrdup("no message");
	}
	while (len > 0 && data[len - 1] == '\n')
		data[--len] = '\0';
	p = strrchr(data, '\n');
	out = xstrdup(p != NULL ? p + 1 : data);
	free(data);
	return out;
}

static void
child_fd(int from, int to)
{
	if (from == to) {
		fcntl(to, F_SETFD, 0);
		return;
	}
	if (dup2(from, to) == -1)
		_exit(126);
}

static void
launch_child(struct sandbox *sb, char **argv, struct cgroups *cg,
    int fds[NFDS], int logfd, const char *envd)
{
	char		 v[32], *cause = NULL;
	struct rlimit	 rl;
	int		 i, hi[NFDS], nullfd;
	size_t		 k;
	sigset_t	 set;

	/* Into the sandbox's cgroups before bwrap forks anything. */
	snprintf(v, sizeof v, "%ld", (long)getpid());
	if (cg->freezer != NULL)
		cg_write(cg->freezer, "cgroup.procs", v);
	for (k = 0; k < nitems(cg->other) && cg->other[k] != NULL; k++)
		cg_write(cg->other[k], "cgroup.procs", v);
	if (sb->pids > 0 && !cgroups_has(cg, "pids")) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)sb->pids;
		setrlimit(RLIMIT_NPROC, &rl);
	}
	if (sb->memory > 0 && !cgroups_has(cg, "memory")) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)sb->memory;
		setrlimit(RLIMIT_AS, &rl);
	}
	file_restore_fd_limit();	/* the sandbox gets the usual one */
	if (sandbox_root_on(sb) &&
	    sandbox_root_mount(sb, fds[4], envd, &cause) != 0) {
		dprintf(logfd, "holt: sandbox '%s': %s\n", sb->id, cause);
		_exit(1);
	}
	/*
	 * bwrap runs as the sandbox's root, the owner of its namespace: host
	 * root is never inside, not even while bwrap sets up.
	 */
	if (sandbox_root_on(sb) && (setgroups(0, NULL) != 0 ||
	    setresgid((gid_t)sb->host_uid - 1000, (gid_t)sb->host_uid - 1000,
	    (gid_t)sb->host_uid - 1000) != 0 || setresuid(sb->host_uid - 1000,
	    sb->host_uid - 1000, sb->host_uid - 1000) != 0)) {
		dprintf(logfd, "holt: sandbox '%s': uid %lu: %s\n", sb->id,
		    (unsigned long)sb->host_uid - 1000, strerror(errno));
		_exit(1);
	}

	/*
	 * Exactly fds 0-6 go on: stdio, listener, state, seccomp, info; and
	 * 7 for a sandbox with a host uid of its own.
	 */
	for (i = 0; i < NFDS; i++) {
		if (fds[i] != -1 &&
		    (hi[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 20)) == -1)
			_exit(126);
	}
	if ((nullfd = open("/dev/null", O_RDWR)) == -1)
		_exit(126);
	child_fd(nullfd, 0);
	child_fd(logfd, 1);
	child_fd(logfd, 2);
	for (i = 0; i < NFDS; i++) {
		if (fds[i] != -1)
			child_fd(hi[i], FD_LISTEN + i);
		else
			close(FD_LISTEN + i);
	}
	close_range(FD_LISTEN + NFDS, ~0U, 0);

	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
	for (i = 1; i < NSIG; i++)
		signal(i, SIG_DFL);
	execv(BWRAP_PATH, argv);
	dprintf(2, "holt: %s: %s\n", BWRAP_PATH, strerror(errno));
	_exit(127);
}

/* The proxy's environment: where holt keeps things, and nothing else. */
static void
proxy_env(void)
{
	static const char *keep[] = { "HOLT_HOME", "XDG_CONFIG_HOME",
	    "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "HOME", "HOLT_PROXY_HOSTS",
	    "TZ" };
	char		*vals[nitems(keep)];
	const char	*v;
	size_t		 i;

	for (i = 0; i < nitems(keep); i++)
		vals[i] = (v = getenv(keep[i])) != NULL ? xstrdup(v) : NULL;
	clearenv();
	for (i = 0; i < nitems(keep); i++) {
		if (vals[i] != NULL)
			setenv(keep[i], vals[i], 1);
	}
	setenv("PATH", "/usr/bin:/bin", 1);
}

/*
 * --net policy: start holt-proxy for the sandbox, detached like it (own
 * session, re-parented), with one end of a socket pair as its fd 3; the
 * other end, returned, goes to envd, which hands it the connections made
 * to 127.0.0.1:3128 inside. It logs to run/proxy.log, its decisions to
 * run/net.log, and ends when envd's end closes.
 */
static int
proxy_start(struct sandbox *sb, char **cause)
{
	char		*exe, *path, data[64], st, *server;
	const char	*mode;
	int		 sv[2], pp[2], logfd, nullfd, r;
	pid_t		 pid, grand = 0;
	unsigned long long start;

	if ((exe = paths_find_helper("holt-proxy")) == NULL) {
		*cause = xstrdup("holt-proxy: not found (install holt, or use "
		    "--net off or on)");
		return -1;
	}
	/* Where a host no rule settles is asked about: our server. */
	server = client_socket_path();
	/* holt.conf's mode, for a sandbox no session uses (the proxy reads
	   no holt.conf: it may hold keys). */
	mode = config_get("mode");
	path = sandbox_path(sb, "run/proxy.log");
	logfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	free(path);
	if (logfd == -1 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    sv) != 0 || pipe2(pp, O_CLOEXEC) != 0) {
		*cause = xprintf("sandbox '%s': proxy: %s", sb->id,
		    strerror(errno));
		if (logfd != -1)
			close(logfd);
		free(exe);
		free(server);
		return -1;
	}
	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid == 0) {
		setsid();
		if ((grand = fork()) != 0) {
			r = write(pp[1], &grand, sizeof grand) !=
			    (ssize_t)sizeof grand;
			_exit(grand == -1 || r ? 1 : 0);
		}
		if ((nullfd = open("/dev/null", O_RDWR)) == -1 ||
		    dup2(nullfd, 0) == -1 || dup2(logfd, 1) == -1 ||
		    dup2(logfd, 2) == -1 || dup2(sv[1], 3) == -1)
			_exit(126);
		close_range(4, ~0U, 0);
		/* It holds no secret: none of our environment but paths. */
		proxy_env();
		execl(exe, "holt-proxy", "--id", sb->id, "--fd", "3",
		    "--server", server, "--mode", mode, (char *)NULL);
		dprintf(2, "holt: %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	free(exe);
	free(server);
	close(pp[1]);
	close(sv[1]);
	close(logfd);
	if (read(pp[0], &grand, sizeof grand) != (ssize_t)sizeof grand)
		grand = 0;
	close(pp[0]);
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
	if (grand <= 1 || sandbox_proc_stat(grand, &st, &start) != 0) {
		*cause = xprintf("sandbox '%s': holt-proxy did not start",
		    sb->id);
		close(sv[0]);
		return -1;
	}
	snprintf(data, sizeof data, "%ld %llu\n", (long)grand, start);
	path = sandbox_path(sb, "run/proxy.pid");
	r = sandbox_write_run(path, data, strlen(data));
	free(path);
	if (r != 0) {
		*cause = xprintf("%s/run/proxy.pid: %s", sb->dir,
		    strerror(errno));
		kill(grand, SIGKILL);
		close(sv[0]);
		return -1;
	}
	return sv[0];
}

static int
launch(struct sandbox *sb, char **cause)
{
	struct cgroups	 cg;
	char		**argv, *path, *envd, *tail, data[512];
	int		  fds[NFDS] = { -1, -1, -1, -1, -1, -1 };
	int		  info[2], logfd = -1;
	int		  status, rc = -1, r;
	pid_t		  pid, child = 0;
	size_t		  len = 0;
	struct pollfd	  pfd;
	ssize_t		  n;
	char		  st;
	unsigned long long start;
	const char	 *p;
	uint64_t	  deadline;

	if ((envd = paths_find_helper("holt-envd")) == NULL) {
		*cause = xstrdup("holt-envd: not found (install holt, or set "
		    "HOLT_HOLT_ENVD to its path)");
		return -1;
	}
	if (sandbox_root_prepare(sb, cause) != 0) {
		free(envd);
		return -1;
	}
	if (access(BWRAP_PATH, X_OK) != 0) {
		*cause = xprintf("%s: %s (install bubblewrap)", BWRAP_PATH,
		    strerror(errno));
		goto out;
	}
	path = sandbox_path(sb, "run/envd");
	file_mkdir_p(path, 0700);
	fds[1] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(path);
	if (fds[1] == -1) {
		*cause = xprintf("%s/run/envd: %s", sb->dir, strerror(errno));
		goto out;
	}
	if ((fds[0] = make_listener(sb, cause)) == -1)
		goto out;
	if ((fds[2] = sandbox_seccomp_fd(cause)) == -1)
		goto out;
	if (sb->host_uid != 0 && (fds[4] = userns_make(sb->host_uid,
	    cause)) == -1)
		goto out;
	if (sb->net == SANDBOX_NET_POLICY && (fds[5] = proxy_start(sb,
	    cause)) == -1)
		goto out;
	if (pipe2(info, O_CLOEXEC) != 0)
		fatal("pipe2");
	fds[3] = info[1];
	path = sandbox_path(sb, "run/envd.log");
	logfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	free(path);
	if (logfd == -1) {
		*cause = xprintf("%s/run/envd.log: %s", sb->dir,
		    strerror(errno));
		close(info[0]);
		goto out;
	}
	cgroups_setup(sb, &cg);
	cgroups_save(sb, &cg);
	argv = bwrap_argv(sb);

	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid == 0) {
		/* Detach: own session, then re-parented by a second fork. */
		setsid();
		if ((pid = fork()) != 0)
			_exit(pid == -1 ? 1 : 0);
		launch_child(sb, argv, &cg, fds, logfd, envd);
	}
	strv_free(argv);
	cgroups_release(&cg);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	close(info[1]);
	fds[3] = -1;

	/* bwrap tells the host pid of its child, envd, on the info fd. */
	deadline = mono_ms() + 5000;
	pfd.fd = info[0];
	pfd.events = POLLIN;
	while (len < sizeof data - 1 && mono_ms() < deadline) {
		r = poll(&pfd, 1, (int)(deadline - mono_ms()));
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n = read(info[0], data + len, sizeof data - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		data[len] = '\0';
		if (strchr(data, '}') != NULL)
			break;
	}
	close(info[0]);
	data[len] = '\0';
	if ((p = strstr(data, "\"child-pid\"")) != NULL &&
	    (p = strchr(p, ':')) != NULL)
		child = (pid_t)strtol(p + 1, NULL, 10);
	if (child <= 1 || sandbox_proc_stat(child, &st, &start) != 0) {
		tail = launch_log_tail(sb);
		*cause = xprintf("sandbox '%s': bubblewrap failed: %s", sb->id,
		    tail);
		free(tail);
		goto out;
	}
	/*
	 * envd is pid 1: if the OOM killer picked it, the whole sandbox would
	 * go. Make it the last choice (it resets this for what it starts).
	 * Needs privilege; without it the default stays.
	 */
	snprintf(data, sizeof data, "/proc/%ld/oom_score_adj", (long)child);
	if ((r = open(data, O_WRONLY | O_CLOEXEC)) != -1) {
		if (write(r, "-900", 4) != 4)
			log_debug("%s: %s", data, strerror(errno));
		close(r);
	}
	snprintf(data, sizeof data, "%ld %llu\n", (long)child, start);
	path = sandbox_path(sb, "run/envd.pid");
	r = sandbox_write_run(path, data, strlen(data));
	free(path);
	if (r != 0) {
		*cause = xprintf("%s/run/envd.pid: %s", sb->id, strerror(errno));
		kill(child, SIGKILL);
		goto out;
	}
	rc = 0;
out:
	free(envd);
	if (logfd != -1)
		close(logfd);
	for (r = 0; r < NFDS; r++) {
		if (fds[r] != -1)
			close(fds[r]);
	}
	return rc;
}

static int stop_locked(struct sandbox *, char **);

/* holt-proxy's pid, if it runs and is ours (run/proxy.pid). */
static pid_t
proxy_pid(struct sandbox *sb)
{
	char			*path, *data, st;
	long			 pid;
	unsigned long long	 start, now;
	int			 ok;

	path = sandbox_path(sb, "run/proxy.pid");
	data = file_read(path, NULL, 256);
	free(path);
	ok = data != NULL && sscanf(data, "%ld %llu", &pid, &start) == 2 &&
	    pid > 1 && sandbox_proc_stat((pid_t)pid, &st, &now) == 0 &&
	    now == start && st != 'Z';
	free(data);
	return ok ? (pid_t)pid : 0;
}

/*
 * A sandbox root made before every sandbox had host uids of its own (its
 * user was host root where cgroups held it): it gets a block now, at its
 * next start, with its workspace and home given to its new user and
 * meta.json saying so, so that it too runs as nobody on the host.
 */
static int
migrate_uid(struct sandbox *sb, char **cause)
{
	const char	*subs[] = { "workspace", "home" };
	char		*path, *json;
	uid_t		 uid;
	size_t		 i;
	int		 rc;

	if (sb->host_uid != 0 || geteuid() != 0 || !sandbox_userns_ok())
		return 0;
	uid = sandbox_uid_pick(sb->id);
	for (i = 0; i < nitems(subs); i++) {
		path = sandbox_path(sb, subs[i]);
		if (chown(path, uid, (gid_t)uid) != 0) {
			*cause = xprintf("%s: %s", path, strerror(errno));
			free(path);
			return -1;
		}
		git_ws_give_back(path);
		free(path);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(sb->meta, "host_uid");
	cJSON_AddNumberToObject(sb->meta, "host_uid", (double)uid);
	if ((json = cJSON_Print(sb->meta)) == NULL)
		fatalx("out of memory (json)");
	path = sandbox_path(sb, "meta.json");
	rc = file_write_atomic(path, json, strlen(json), 0600);
	if (rc != 0)
		*cause = xprintf("%s: %s", path, strerror(errno));
	else
		log_info("sandbox %s: now host uids %lu up", sb->id,
		    (unsigned long)uid - 1000);
	free(path);
	cJSON_free(json);
	if (rc == 0)
		sb->host_uid = uid;
	return rc;
}

static int
start_locked(struct sandbox *sb, char **cause)
{
	int	 s;
	char	*path, *tail;

	if (sandbox_local_state(sb) != SANDBOX_STOPPED)
		return 0;
	/* Leftovers of a crash or a reboot: processes, cgroups, markers. */
	if (stop_locked(sb, cause) != 0)
		return -1;
	if (migrate_uid(sb, cause) != 0)
		return -1;
	if (launch(sb, cause) != 0)
		return -1;
	if ((s = sandbox_connect_raw(sb, 5000, cause)) == -1) {
		tail = launch_log_tail(sb);
		free(*cause);
		*cause = xprintf("sandbox '%s': envd did not start: %s",
		    sb->id, tail);
		free(tail);
		path = NULL;
		stop_locked(sb, &path);
		free(path);
		return -1;
	}
	close(s);
	return 0;
}

static int
stop_locked(struct sandbox *sb, char **cause)
{
	struct cgroups	 cg;
	pid_t		 pid;
	int		 i;
	char		*path, st;
	unsigned long long start;
	const char	*files[] = { "run/envd.pid", "run/paused", "run/cgroups",
	    "run/envd.sock", "run/proxy.pid" };

	cgroups_load(sb, &cg);
	if ((pid = sandbox_pid(sb)) > 0) {
		/* pid 1 of the namespace: the kernel kills the rest. */
		kill(pid, SIGKILL);
		if (cg.freezer != NULL)
			cg_write(cg.freezer, cg.v2 ? "cgroup.freeze" :
			    "freezer.state", cg.v2 ? "0" : "THAWED");
		for (i = 0; i < 600; i++) {
			if (sandbox_proc_stat(pid, &st, &start) != 0 || st == 'Z')
				break;
			sleep_ms(5);
		}
	}
	cgroups_destroy(&cg);
	cgroups_release(&cg);
	if ((pid = proxy_pid(sb)) > 0) {
		kill(pid, SIGKILL);
		for (i = 0; i < 200; i++) {
			if (sandbox_proc_stat(pid, &st, &start) != 0 ||
			    st == 'Z')
				break;
			sleep_ms(5);
		}
	}
	for (i = 0; i < (int)nitems(files); i++) {
		path = sandbox_path(sb, files[i]);
		unlink(path);
		free(path);
	}
	return 0;
}

static int
envd_simple_op(struct sandbox *sb, const char *op, const char *mode,
    char **cause)
{
	cJSON	*req, *reply;
	int	 s;

	if ((s = sandbox_connect_raw(sb, 5000, cause)) == -1)
		return -1;
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", op);
	if (mode != NULL)
		cJSON_AddStringToObject(req, "mode", mode);
	reply = envd_call(s, req, cause);
	close(s);
	if (reply == NULL)
		return -1;
	cJSON_Delete(reply);
	return 0;
}

static int
freezer_set(struct cgroups *cg, int frozen)
{
	char	*state;
	int	 i;

	if (cg->v2)
		return cg_write(cg->freezer, "cgroup.freeze", frozen ? "1" : "0");
	if (cg_write(cg->freezer, "freezer.state", frozen ? "FROZEN" :
	    "THAWED") != 0)
		return -1;
	/*
	 * v1 stays FREEZING while a task cannot be frozen yet (one being
	 * forked, one in an uninterruptible wait): ask again now and then,
	 * as its documentation says, for up to about 3 s.
	 */
	for (i = 0; i < 3000; i++) {
		if ((state = cg_read(cg->freezer, "freezer.state")) == NULL)
			return -1;
		if (strncmp(state, frozen ? "FROZEN" : "THAWED", 6) == 0) {
			free(state);
			return 0;
		}
		free(state);
		if (i % 50 == 49 && cg_write(cg->freezer, "freezer.state",
		    frozen ? "FROZEN" : "THAWED") != 0)
			return -1;
		sleep_ms(1);
	}
	return -1;
}

static int
pause_locked(struct sandbox *sb, char **cause)
{
	struct cgroups	 cg;
	const char	*mode;
	char		*path;
	int		 rc;

	switch (sandbox_local_state(sb)) {
	case SANDBOX_PAUSED:
		return 0;
	case SANDBOX_STOPPED:
	case SANDBOX_UNREACHABLE:	/* not a local sandbox's */
		*cause = xprintf("sandbox '%s' is stopped", sb->id);
		return -1;
	case SANDBOX_RUNNING:
		break;
	}
	cgroups_load(sb, &cg);
	mode = cg.freezer != NULL ? "freezer" : "signal";
	/* envd notes the time (timeouts and backoff do not run paused). */
	if (envd_simple_op(sb, "pause", mode, cause) != 0) {
		cgroups_release(&cg);
		return -1;
	}
	if (cg.freezer != NULL && freezer_set(&cg, 1) != 0) {
		*cause = xprintf("sandbox '%s': cannot freeze %s", sb->id,
		    cg.freezer);
		freezer_set(&cg, 0);
		cgroups_release(&cg);
		path = NULL;
		envd_simple_op(sb, "resume", NULL, &path);
		free(path);
		return -1;
	}
	cgroups_release(&cg);
	path = sandbox_path(sb, "run/paused");
	rc = sandbox_write_run(path, mode, strlen(mode));
	free(path);
	if (rc != 0) {
		*cause = xprintf("%s/run/paused: %s", sb->dir, strerror(errno));
		return -1;
	}
	return 0;
}

static int
resume_locked(struct sandbox *sb, char **cause)
{
	struct cgroups	 cg;
	char		*path;

	switch (sandbox_local_state(sb)) {
	case SANDBOX_RUNNING:
		return 0;
	case SANDBOX_STOPPED:
	case SANDBOX_UNREACHABLE:	/* not a local sandbox's */
		*cause = xprintf("sandbox '%s' is stopped (holt sandbox start "
		    "%s)", sb->id, sb->id);
		return -1;
	case SANDBOX_PAUSED:
		break;
	}
	cgroups_load(sb, &cg);
	if (cg.freezer != NULL && freezer_set(&cg, 0) != 0) {
		*cause = xprintf("sandbox '%s': cannot thaw %s", sb->id,
		    cg.freezer);
		cgroups_release(&cg);
		return -1;
	}
	cgroups_release(&cg);
	path = sandbox_path(sb, "run/paused");
	unlink(path);
	free(path);
	return envd_simple_op(sb, "resume", NULL, cause);
}

/*
 * One lifecycle change at a time per sandbox: two starts at once would
 * launch two envds on one socket. flock on run/lock, released on close
 * (or when the process dies).
 */
static int
lifecycle_lock(struct sandbox *sb)
{
	char	*path = sandbox_path(sb, "run/lock");
	int	 fd;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(path);
	if (fd == -1)
		return -1;
	while (flock(fd, LOCK_EX) == -1) {
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

static int
locked(struct sandbox *sb, int (*fn)(struct sandbox *, char **),
    char **cause)
{
	int	 fd, rc;

	fd = lifecycle_lock(sb);
	rc = fn(sb, cause);
	if (fd != -1)
		close(fd);
	return rc;
}

static int
reset_root_locked(struct sandbox *sb, char **cause)
{
	int	 was = sandbox_local_state(sb) != SANDBOX_STOPPED;

	if (!sandbox_root_on(sb)) {
		*cause = xprintf("sandbox '%s' has no root layer of its own "
		    "(made where holt had no user namespace to give it one)",
		    sb->id);
		return -1;
	}
	if (stop_locked(sb, cause) != 0 || sandbox_root_reset(sb, cause) != 0)
		return -1;
	return was ? start_locked(sb, cause) : 0;
}

/*
 * Does a command run in the sandbox? Every exec runs under a holt-shim
 * (holt-envd(8)); one with a child is a command at work, while the shim
 * kept ready has none and services run without one. O(processes on the
 * host), once per idle check.
 */
static int
local_busy(struct sandbox *sb)
{
	DIR		*d;
	struct dirent	*de;
	pid_t		 envd = sandbox_pid(sb), *shims = NULL;
	struct proc_stat ps;
	char		 path[300], ns[64], mine[64], comm[32];
	size_t		 nshims = 0, i;
	ssize_t		 n;
	int		 busy = 0, pass, fd;

	if (envd <= 0)
		return 0;
	snprintf(path, sizeof path, "/proc/%ld/ns/pid", (long)envd);
	if ((n = readlink(path, mine, sizeof mine - 1)) <= 0)
		return 0;
	mine[n] = '\0';
	/* Pass 0: the shims of this sandbox; pass 1: their children. */
	for (pass = 0; pass < 2 && !busy; pass++) {
		if ((d = opendir("/proc")) == NULL)
			break;
		while (!busy && (de = readdir(d)) != NULL) {
			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof path, "/proc/%s/ns/pid", de->d_name);
			if ((n = readlink(path, ns, sizeof ns - 1)) <= 0)
				continue;
			ns[n] = '\0';
			if (strcmp(ns, mine) != 0 ||
			    proc_stat_read((pid_t)atol(de->d_name), &ps) != 0)
				continue;
			if (pass == 1) {
				for (i = 0; i < nshims && !busy; i++)
					busy = ps.ppid == shims[i];
				continue;
			}
			snprintf(path, sizeof path, "/proc/%s/comm", de->d_name);
			if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
				continue;
			n = read(fd, comm, sizeof comm - 1);
			close(fd);
			if (n > 0 && strncmp(comm, "holt-shim\n", 10) == 0) {
				shims = xreallocarray(shims, nshims + 1,
				    sizeof *shims);
				shims[nshims++] = ps.pid;
			}
		}
		closedir(d);
	}
	free(shims);
	return busy;
}

static int
local_reset_root(struct sandbox *sb, char **cause)
{
	return locked(sb, reset_root_locked, cause);
}

static int
local_start(struct sandbox *sb, char **cause)
{
	return locked(sb, start_locked, cause);
}

static int
local_stop(struct sandbox *sb, char **cause)
{
	return locked(sb, stop_locked, cause);
}

static int
local_pause(struct sandbox *sb, char **cause)
{
	return locked(sb, pause_locked, cause);
}

static int
local_resume(struct sandbox *sb, char **cause)
{
	return locked(sb, resume_locked, cause);
}

static int
local_rm(struct sandbox *sb, char **cause)
{
	return local_stop(sb, cause);
}

const struct sandbox_provider sandbox_local_provider = {
	.name = "local",
	.create = sandbox_local_create,
	.start = local_start,
	.stop = local_stop,
	.pause = local_pause,
	.resume = local_resume,
	.rm = local_rm,
	.state = sandbox_local_state,
	.connect = sandbox_local_connect,
	.busy = local_busy,
	.reset_root = local_reset_root,
};
