/*
 * sandbox-root.c: a sandbox's system directories as a machine's (DESIGN
 * 13). /usr /etc /var /opt and /root are each an overlay: the image below,
 * read-only and shared, and the sandbox's own upper layer in
 * data/sandboxes/<id>/root/, so what root installs inside stays across
 * stop/start and a reboot and never touches the image.
 *
 * The sandbox's ids 0-65535 are host uids base..base+65535 of its own
 * (sandbox_uid_pick). The image's files, owned by host root, are seen
 * through an idmapped mount as the sandbox's root's, so its root may
 * replace them (in the upper layer); host root itself is not mapped, so
 * nothing inside holds a host privilege and file permissions protect the
 * host.
 *
 * The overlays are mounted by host root, in a mount namespace of the
 * launching child only, onto a small tmpfs at STAGE; bubblewrap, which runs
 * as the sandbox's root and may not search holt's 0700 directories, binds
 * them from there. The host image is the host's /usr and a copy, made once
 * in data/images/host/, of what everyone may read of /etc and of the
 * package managers' state in /var: the host's secrets (shadow, keys,
 * root-only logs) are never below a sandbox.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/mount.h>

#include "sandbox.h"
#include "sandbox-local.h"

#define STAGE "/mnt"

/* The overlays, under / inside and under root/ on the host. */
static const char *root_dirs[] = { "usr", "etc", "var", "opt", "root" };

/* What the host image keeps of /var: the package managers' state. */
static const char *var_keep[] = { "lib/dpkg", "lib/apt", "lib/ucf",
    "lib/pam", "cache/debconf" };
static const char *var_make[] = { "cache/apt/archives/partial",
    "lib/apt/lists/partial", "log/apt", "lib/misc", "spool", "mail",
    "local", "opt", "backups", "tmp" };

const char *
sandbox_root_image(struct sandbox *sb)
{
	return sandbox_image(sb);
}

int
sandbox_root_on(struct sandbox *sb)
{
	return sb->host_uid != 0;
}

/* Copy what others may read of src into dst (made), owners kept. */
static int
copy_readable(int sfd, int dfd, const char *name, char **cause)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	char		 buf[65536], link[4096];
	int		 in, out, rc = 0;
	ssize_t		 n;

	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;
	if (S_ISLNK(st.st_mode)) {
		if ((n = readlinkat(sfd, name, link, sizeof link - 1)) <= 0)
			return 0;
		link[n] = '\0';
		if (symlinkat(link, dfd, name) != 0 && errno != EEXIST)
			goto fail;
		fchownat(dfd, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		if ((st.st_mode & S_IROTH) == 0)
			return 0;
		if ((in = openat(sfd, name, O_RDONLY | O_CLOEXEC |
		    O_NOFOLLOW)) == -1)
			return 0;
		out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL |
		    O_CLOEXEC, 0600);
		if (out == -1) {
			close(in);
			goto fail;
		}
		while ((n = read(in, buf, sizeof buf)) > 0) {
			if (file_write_all(out, buf, (size_t)n) != 0)
				break;
		}
		if (n != 0 || fchown(out, st.st_uid, st.st_gid) != 0 ||
		    fchmod(out, st.st_mode & 07777) != 0) {
			close(in);
			close(out);
			goto fail;
		}
		close(in);
		close(out);
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (mkdirat(dfd, name, 0700) != 0 && errno != EEXIST)
		goto fail;
	/* A directory others may not search is kept, empty. */
	if ((st.st_mode & S_IXOTH) != 0 &&
	    (in = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
	    O_NOFOLLOW)) != -1) {
		out = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (out == -1 || (d = fdopendir(in)) == NULL) {
			close(in);
			if (out != -1)
				close(out);
			goto fail;
		}
		while (rc == 0 && (de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") != 0 &&
			    strcmp(de->d_name, "..") != 0)
				rc = copy_readable(dirfd(d), out, de->d_name,
				    cause);
		}
		closedir(d);
		close(out);
	}
	if (rc == 0 && (fchownat(dfd, name, st.st_uid, st.st_gid, 0) != 0 ||
	    fchmodat(dfd, name, st.st_mode & 07777, 0) != 0))
		goto fail;
	return rc;
fail:
	if (*cause == NULL)
		*cause = xprintf("%s: %s", name, strerror(errno));
	return -1;
}

/*
 * The image's account files for the sandbox: its system accounts (ids
 * below 1000, and nobody), then user (1000). The host's people never.
 */
static char *
accounts_filter(const char *text, const char *add)
{
	struct buf	 b = BUF_INIT;
	const char	*p, *nl, *c1, *c2;
	long		 id;

	for (p = text; p != NULL && *p != '\0'; p = nl) {
		if ((nl = strchr(p, '\n')) != NULL)
			nl++;
		if ((c1 = strchr(p, ':')) == NULL ||
		    (c2 = strchr(c1 + 1, ':')) == NULL ||
		    (nl != NULL && c2 > nl))
			continue;
		id = strtol(c2 + 1, NULL, 10);
		if ((id >= 1000 && id != 65534) ||
		    (c1 - p == 4 && strncmp(p, "user", 4) == 0))
			continue;
		buf_add(&b, p, nl != NULL ? (size_t)(nl - p) : strlen(p));
		if (nl == NULL)
			buf_add(&b, "\n", 1);
	}
	buf_add(&b, add, strlen(add));
	return buf_detach(&b, NULL);
}

/* passwd, group (and shadow, as root's) naming user, from the image's. */
static int
accounts_write(const char *from_etc, const char *to_etc, uid_t owner,
    char **cause)
{
	static const struct {
		const char	*name;
		const char	*add;
		mode_t		 mode;
	} files[] = {
		{ "passwd", "user:x:1000:1000:user:/home/user:/bin/sh\n", 0644 },
		{ "group", "user:x:1000:\n", 0644 },
		{ "shadow", "user:*:19000:0:99999:7:::\n", 0640 },
	};
	char	*src, *dst, *text, *out;
	size_t	 i;
	int	 rc = 0;

	for (i = 0; i < nitems(files) && rc == 0; i++) {
		src = paths_join(from_etc, files[i].name);
		dst = paths_join(to_etc, files[i].name);
		/* shadow: the host's is root's alone; only its names go on. */
		text = strcmp(files[i].name, "shadow") == 0 ? NULL :
		    file_read(src, NULL, 16 * 1024 * 1024);
		if (text == NULL && strcmp(files[i].name, "shadow") == 0)
			text = xstrdup("root:*:19000:0:99999:7:::\n");
		if (strcmp(files[i].name, "shadow") == 0) {
			out = xprintf("%s%s", text, files[i].add);
		} else
			out = accounts_filter(text, files[i].add);
		if (file_write_atomic(dst, out, strlen(out), files[i].mode) != 0 ||
		    chown(dst, owner, owner) != 0) {
			*cause = xprintf("%s: %s", dst, strerror(errno));
			rc = -1;
		}
		free(out);
		free(text);
		free(src);
		free(dst);
	}
	return rc;
}

/* data/images/host: made once, whole or not at all. */
static char *
host_image(char **cause)
{
	char	*dir, *tmp, *p;
	int	 sfd, dfd, rc = 0;
	size_t	 i;

	dir = paths_join(paths_data_dir(), "images/host");
	if (access(dir, F_OK) == 0)
		return dir;
	p = paths_join(paths_data_dir(), "images");
	file_mkdir_p(p, 0700);
	free(p);
	tmp = xprintf("%s.tmp.%ld", dir, (long)getpid());
	file_rm_rf(tmp);
	if (mkdir(tmp, 0755) != 0) {
		*cause = xprintf("%s: %s", tmp, strerror(errno));
		free(tmp);
		free(dir);
		return NULL;
	}
	dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	rc = copy_readable(sfd, dfd, "etc", cause);
	p = paths_join(tmp, "etc");
	if (rc == 0)
		rc = accounts_write("/etc", p, 0, cause);
	free(p);
	if (rc == 0) {
		p = xprintf("%s/etc/hostname", tmp);
		rc = file_write_atomic(p, "holt\n", 5, 0644);
		free(p);
		p = xprintf("%s/etc/hosts", tmp);
		rc |= file_write_atomic(p, "127.0.0.1\tlocalhost\n"
		    "127.0.1.1\tholt\n::1\tlocalhost\n", 46, 0644);
		free(p);
	}
	for (i = 0; rc == 0 && i < nitems(var_make); i++) {
		p = xprintf("%s/var/%s", tmp, var_make[i]);
		rc = file_mkdir_p(p, 0755);
		free(p);
	}
	for (i = 0; rc == 0 && i < nitems(var_keep); i++) {
		/* lib/dpkg: from /var/lib into var/lib, by its last name. */
		p = xprintf("/var/%s", var_keep[i]);
		*strrchr(p, '/') = '\0';
		if (sfd != -1)
			close(sfd);
		sfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		free(p);
		p = xprintf("%s/var/%s", tmp, var_keep[i]);
		*strrchr(p, '/') = '\0';
		if (dfd != -1)
			close(dfd);
		file_mkdir_p(p, 0755);
		dfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		free(p);
		if (sfd != -1 && dfd != -1)
			rc = copy_readable(sfd, dfd,
			    strrchr(var_keep[i], '/') + 1, cause);
	}
	if (rc == 0) {
		p = xprintf("%s/var/tmp", tmp);
		rc = chmod(p, 01777);
		free(p);
		p = xprintf("%s/var/run", tmp);
		rc |= symlink("/run", p);
		free(p);
		p = xprintf("%s/var/lock", tmp);
		rc |= symlink("/run/lock", p);
		free(p);
		p = xprintf("%s/opt", tmp);
		rc |= mkdir(p, 0755);
		free(p);
		p = xprintf("%s/root", tmp);
		rc |= mkdir(p, 0700);
		free(p);
		if (rc != 0 && *cause == NULL)
			*cause = xprintf("%s: %s", tmp, strerror(errno));
	}
	if (sfd != -1)
		close(sfd);
	if (dfd != -1)
		close(dfd);
	if (rc != 0) {
		/* Some steps above fail with errno alone (a full disk). */
		if (*cause == NULL)
			*cause = xstrdup(strerror(errno));
		p = *cause;
		*cause = xprintf("host image %s: %s", dir, p);
		free(p);
		file_rm_rf(tmp);
		free(tmp);
		free(dir);
		return NULL;
	}
	/* Another start made it first: theirs is as good. */
	if (rename(tmp, dir) != 0)
		file_rm_rf(tmp);
	free(tmp);
	return dir;
}

/* The lower layer of one of root_dirs; NULL: an empty one. */
static char *
lower_dir(struct sandbox *sb, const char *image, const char *host,
    const char *d)
{
	char		*p;
	struct stat	 st;

	if (strcmp(image, "host") == 0)
		return strcmp(d, "usr") == 0 ? xstrdup("/usr") :
		    paths_join(host, d);
	p = paths_join(image, d);
	if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
		return p;
	free(p);
	(void)sb;
	return NULL;
}

/*
 * Before a start, as host root: the host image, the upper layers (owned
 * by the sandbox's root) and their overlay work dirs, and, for an image of
 * the user's, account files naming user.
 */
int
sandbox_root_prepare(struct sandbox *sb, char **cause)
{
	const char	*image = sandbox_root_image(sb);
	char		*host = NULL, *p, *lower;
	uid_t		 root = sb->host_uid - 1000;
	struct stat	 st;
	size_t		 i;
	static const char *need[] = { "usr", "etc", "usr/bin" };
	static const char *tops[] = { "bin", "sbin", "lib", "lib32", "lib64",
	    "libx32" };

	if (!sandbox_root_on(sb))
		return 0;
	if (strcmp(image, "host") == 0) {
		if ((host = host_image(cause)) == NULL)
			return -1;
	} else {
		for (i = 0; i < nitems(tops); i++) {
			p = paths_join(image, tops[i]);
			if (lstat(p, &st) == 0 && !S_ISLNK(st.st_mode)) {
				*cause = xprintf("image '%s': %s is not a link "
				    "into usr (holt needs a merged-/usr image: "
				    "bin, sbin and lib* links into usr)", image,
				    tops[i]);
				free(p);
				return -1;
			}
			free(p);
		}
		for (i = 0; i < nitems(need); i++) {
			p = paths_join(image, need[i]);
			if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
				*cause = xprintf("image '%s': no %s directory "
				    "(a root filesystem has usr/ and etc/)",
				    image, need[i]);
				free(p);
				return -1;
			}
			free(p);
		}
	}
	for (i = 0; i < nitems(root_dirs); i++) {
		p = xprintf("%s/root/.work/%s", sb->dir, root_dirs[i]);
		if (file_mkdir_p(p, 0700) != 0)
			goto fail;
		free(p);
		p = xprintf("%s/root/%s", sb->dir, root_dirs[i]);
		if (mkdir(p, 0755) == 0) {
			lower = lower_dir(sb, image, host, root_dirs[i]);
			if (lower == NULL || stat(lower, &st) != 0)
				st.st_mode = 0755;
			free(lower);
			if (chown(p, root, root) != 0 ||
			    chmod(p, st.st_mode & 07777) != 0)
				goto fail;
		} else if (errno != EEXIST)
			goto fail;
		free(p);
	}
	p = xprintf("%s/root/etc/passwd", sb->dir);
	if (strcmp(image, "host") != 0 && lstat(p, &st) != 0) {
		free(p);
		lower = paths_join(image, "etc");
		p = xprintf("%s/root/etc", sb->dir);
		if (accounts_write(lower, p, root, cause) != 0) {
			free(lower);
			free(p);
			return -1;
		}
		free(lower);
	}
	free(p);
	free(host);
	return 0;
fail:
	*cause = xprintf("%s: %s", p, strerror(errno));
	free(p);
	free(host);
	return -1;
}

/* Drop the upper layers: the image as it is, /workspace and home kept. */
int
sandbox_root_reset(struct sandbox *sb, char **cause)
{
	char	*p;

	p = sandbox_path(sb, "root");
	if (file_rm_rf(p) != 0) {
		*cause = xprintf("%s: %s", p, strerror(errno));
		free(p);
		return -1;
	}
	free(p);
	return sandbox_root_prepare(sb, cause);
}

static int
stage_mkdir(const char *name, char **cause)
{
	char	*p = paths_join(STAGE, name);

	if (mkdir(p, 0755) != 0) {
		*cause = xprintf("%s: %s", p, strerror(errno));
		free(p);
		return -1;
	}
	free(p);
	return 0;
}

static int
stage_bind(const char *src, const char *name, int file, char **cause)
{
	char	*p = paths_join(STAGE, name);
	int	 fd;

	if (file) {
		if ((fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) != -1)
			close(fd);
	} else
		mkdir(p, 0755);
	if (mount(src, p, NULL, MS_BIND | MS_REC, NULL) != 0) {
		*cause = xprintf("bind %s: %s", src, strerror(errno));
		free(p);
		return -1;
	}
	free(p);
	return 0;
}

/* src seen with the sandbox's ids (host root as its root), at STAGE/name. */
static int
stage_idmapped(const char *src, const char *name, int userns, char **cause)
{
	struct mount_attr	 attr;
	char			*p = paths_join(STAGE, name);
	int			 fd;

	memset(&attr, 0, sizeof attr);
	attr.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY |
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	attr.userns_fd = (uint64_t)userns;
	fd = (int)syscall(SYS_open_tree, AT_FDCWD, src, OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC);
	if (fd == -1 || mkdir(p, 0755) != 0 ||
	    syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr,
	    sizeof attr) != 0 ||
	    syscall(SYS_move_mount, fd, "", AT_FDCWD, p,
	    MOVE_MOUNT_F_EMPTY_PATH) != 0) {
		*cause = xprintf("idmapped mount of %s: %s", src,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		free(p);
		return -1;
	}
	close(fd);
	free(p);
	return 0;
}

/*
 * In the launching child, as host root, before bwrap: a mount namespace
 * of its own with STAGE holding the overlays, workspace, home and envd.
 * Returns -1 with *cause when the sandbox cannot have them.
 */
int
sandbox_root_mount(struct sandbox *sb, int userns, const char *envd,
    char **cause)
{
	const char	*image = sandbox_root_image(sb);
	char		*host, *lower, *opts, *dst, *p, name[32];
	size_t		 i;
	int		 rc;

	if (unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("holt", STAGE, "tmpfs", MS_NOSUID | MS_NODEV,
	    "mode=0755,size=64k") != 0) {
		*cause = xprintf("mount namespace for %s: %s", STAGE,
		    strerror(errno));
		return -1;
	}
	host = paths_join(paths_data_dir(), "images/host");
	if (stage_mkdir(".lower", cause) != 0) {
		free(host);
		return -1;
	}
	for (i = 0; i < nitems(root_dirs); i++) {
		snprintf(name, sizeof name, ".lower/%s", root_dirs[i]);
		if ((lower = lower_dir(sb, image, host, root_dirs[i])) == NULL)
			rc = stage_mkdir(name, cause);
		else
			rc = stage_idmapped(lower, name, userns, cause);
		free(lower);
		if (rc != 0 || stage_mkdir(root_dirs[i], cause) != 0) {
			free(host);
			return -1;
		}
		dst = paths_join(STAGE, root_dirs[i]);
		opts = xprintf("lowerdir=%s/%s,upperdir=%s/root/%s,"
		    "workdir=%s/root/.work/%s", STAGE, name, sb->dir,
		    root_dirs[i], sb->dir, root_dirs[i]);
		rc = mount("overlay", dst, "overlay", MS_NOSUID | MS_NODEV,
		    opts);
		free(opts);
		free(dst);
		if (rc != 0) {
			*cause = xprintf("overlay on /%s: %s", root_dirs[i],
			    strerror(errno));
			free(host);
			return -1;
		}
	}
	free(host);
	p = sandbox_path(sb, "workspace");
	rc = stage_bind(p, "workspace", 0, cause);
	free(p);
	if (rc == 0) {
		p = sandbox_path(sb, "home");
		rc = stage_bind(p, "home", 0, cause);
		free(p);
	}
	if (rc == 0)
		rc = stage_bind(envd, "envd", 1, cause);
	return rc;
}

/* Where bwrap finds what sandbox_root_mount staged. */
const char *
sandbox_root_stage(void)
{
	return STAGE;
}
