/*
 * git.c: a session's repository, seen from the host with libgit2: import
 * (clone into the workspace), diff against the base commit, revert, commit
 * and push. The rules for the hostile workspace are in git.h; this file is
 * where they are kept: the checks before libgit2 reads anything
 * (git_open_workspace), the fixed configuration, the O_NOFOLLOW file
 * helpers (ws_*), the jail that runs work-tree operations chrooted in the
 * workspace and the push's, whose root holds the workspace and the system's
 * files only (git_job_*, at the end). Costs: opening a workspace walks .git
 * with lstat (a few ms for ten thousand loose objects); a diff stats every
 * tracked file and hashes only those whose stat data changed; the jail is a
 * fork.
 */
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <poll.h>
#include <signal.h>

#include <sched.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "holt.h"
#include "git.h"

/* libgit2's diff type is renamed: git_diff() is holt's (git.h). */
#define git_diff git2_diff
#include <git2.h>
#include <git2/sys/repository.h>
#undef git_diff
#include "dynlib-git2.h"

/* Set up libgit2 once: no system or global configuration, ever. */
void
git_lib_setup(void)
{
	static int	 done;
	int		 levels[] = { GIT_CONFIG_LEVEL_PROGRAMDATA,
	    GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG,
	    GIT_CONFIG_LEVEL_GLOBAL };
	size_t		 i;

	if (done)
		return;
	done = 1;
	git_libgit2_init();
	/*
	 * Owner validation guards against a repository found by searching
	 * upwards from the cwd; holt opens one exact path it created (no
	 * search), whose files the sandbox's user may own.
	 */
	git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
	/* The host's ~/.gitconfig may hold insteadOf rules, proxies, tokens. */
	for (i = 0; i < nitems(levels); i++)
		git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i], "");
}

static char *
git_errmsg(void)
{
	const git_error	*e = git_error_last();

	if (e == NULL || e->message == NULL)
		return xstrdup("unknown libgit2 error");
	return xstrdup(e->message);
}

static void
git_set_cause(char **cause, const char *fmt, const char *arg)
{
	char	*m = git_errmsg(), *c;

	*cause = xprintf(fmt, arg, m);
	if (strstr(m, "index.lock") != NULL ||
	    strstr(m, "index is locked") != NULL) {
		/* The agent's own git holds the index, or died holding it. */
		c = xprintf("%s (git in the sandbox is using the index; try "
		    "again, or remove .git/index.lock if nothing is)", *cause);
		free(*cause);
		*cause = c;
	}
	free(m);
}

/* --- the workspace's files, reached without following symlinks --- */

/*
 * Open the directory that holds rel (relative to root), walking one
 * component at a time with O_NOFOLLOW so a symlinked directory cannot lead
 * out: not in the workspace, and not in the user's working tree, where a
 * tracked directory may have become a link to ~/.ssh. create: make missing
 * directories. follow_root: root itself may be a link (the user's own
 * path to the repository). what names root in errors. *leaf points into
 * rel.
 */
static int
tree_open_parent(const char *what, const char *root, int follow_root,
    const char *rel, int create, const char **leaf, char **cause)
{
	char		*copy, *p, *slash;
	int		 fd, nfd;

	if (*rel == '\0' || *rel == '/' || strstr(rel, "//") != NULL) {
		*cause = xprintf("path '%s': not a relative path", rel);
		return -1;
	}
	fd = open(root, O_RDONLY|O_DIRECTORY|O_CLOEXEC|
	    (follow_root ? 0 : O_NOFOLLOW));
	if (fd == -1) {
		*cause = xprintf("%s '%s': %s", what, root, strerror(errno));
		return -1;
	}
	copy = xstrdup(rel);
	p = copy;
	while ((slash = strchr(p, '/')) != NULL) {
		*slash = '\0';
		if (strcmp(p, "..") == 0 || strcmp(p, ".") == 0) {
			*cause = xprintf("path '%s': '%s' not allowed", rel, p);
			goto fail;
		}
		nfd = openat(fd, p, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC);
		if (nfd == -1 && errno == ENOENT && create) {
			if (mkdirat(fd, p, 0755) == -1 && errno != EEXIST) {
				*cause = xprintf("path '%s': %s", rel,
				    strerror(errno));
				goto fail;
			}
			nfd = openat(fd, p,
			    O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC);
		}
		if (nfd == -1) {
			*cause = xprintf("path '%s': '%s': %s", rel, p,
			    errno == ELOOP || errno == ENOTDIR ?
			    "a symlink or not a directory (refused)" :
			    strerror(errno));
			goto fail;
		}
		close(fd);
		fd = nfd;
		p = slash + 1;
	}
	if (strcmp(p, "..") == 0 || strcmp(p, ".") == 0 || *p == '\0') {
		*cause = xprintf("path '%s': not a file name", rel);
		goto fail;
	}
	*leaf = rel + (p - copy);
	free(copy);
	return fd;
fail:
	free(copy);
	close(fd);
	return -1;
}

static int
ws_open_parent(const char *ws, const char *rel, int create, const char **leaf,
    char **cause)
{
	return tree_open_parent("workspace", ws, 0, rel, create, leaf, cause);
}

/* Write a file (or, with S_IFLNK in mode, a symlink) atomically. */
static int
ws_write(const char *ws, const char *rel, const void *data, size_t len,
    mode_t mode, char **cause)
{
	const char	*leaf;
	char		 tmp[64];
	int		 dfd, fd, try;

	if ((dfd = ws_open_parent(ws, rel, 1, &leaf, cause)) == -1)
		return -1;
	for (try = 0; try < 100; try++) {
		snprintf(tmp, sizeof tmp, ".holt-tmp-%ld-%d", (long)getpid(),
		    rand());
		if (S_ISLNK(mode)) {
			char	*target = xstrndup(data, len);

			fd = symlinkat(target, dfd, tmp);
			free(target);
			if (fd == 0)
				break;
		} else {
			fd = openat(dfd, tmp, O_WRONLY|O_CREAT|O_EXCL|
			    O_NOFOLLOW|O_CLOEXEC, 0600);
			if (fd != -1)
				break;
		}
		if (errno != EEXIST)
			break;
	}
	if (fd == -1) {
		*cause = xprintf("path '%s': %s", rel, strerror(errno));
		close(dfd);
		return -1;
	}
	if (!S_ISLNK(mode)) {
		if (file_write_all(fd, data, len) == -1 ||
		    fchmod(fd, (mode & 0111) ? 0755 : 0644) == -1 ||
		    fsync(fd) == -1) {
			*cause = xprintf("path '%s': %s", rel, strerror(errno));
			close(fd);
			unlinkat(dfd, tmp, 0);
			close(dfd);
			return -1;
		}
		close(fd);
	}
	/* An empty directory gives its place (never a full one). */
	if (renameat(dfd, tmp, dfd, leaf) == -1 && (errno != EISDIR ||
	    unlinkat(dfd, leaf, AT_REMOVEDIR) == -1 ||
	    renameat(dfd, tmp, dfd, leaf) == -1)) {
		*cause = xprintf("path '%s': %s", rel, errno == ENOTEMPTY ||
		    errno == EEXIST ? "a directory that is not empty" :
		    strerror(errno));
		unlinkat(dfd, tmp, 0);
		close(dfd);
		return -1;
	}
	fsync(dfd);
	close(dfd);
	return 0;
}

static int
ws_remove(const char *ws, const char *rel, char **cause)
{
	const char	*leaf;
	int		 dfd;

	if ((dfd = ws_open_parent(ws, rel, 0, &leaf, cause)) == -1)
		return -1;
	if (unlinkat(dfd, leaf, 0) == -1 && errno != ENOENT) {
		*cause = xprintf("path '%s': %s", rel, strerror(errno));
		close(dfd);
		return -1;
	}
	close(dfd);
	return 0;
}

/*
 * Read leaf of dfd, a regular file: a symlink, a FIFO or a device is
 * refused (O_NONBLOCK: a FIFO is seen, never waited on). rel names it.
 */
static char *
at_read_regular(int dfd, const char *leaf, const char *rel, size_t *lenp,
    struct stat *sb, char **cause)
{
	char	*data;
	int	 fd;

	fd = openat(dfd, leaf, O_RDONLY|O_NOFOLLOW|O_CLOEXEC|O_NONBLOCK);
	if (fd == -1 || fstat(fd, sb) == -1 || !S_ISREG(sb->st_mode)) {
		*cause = xprintf("path '%s': %s", rel, fd == -1 ?
		    (errno == ELOOP ? "a symlink" : strerror(errno)) :
		    "not a regular file");
		if (fd != -1)
			close(fd);
		return NULL;
	}
	if ((data = file_read_fd(fd, lenp, 0)) == NULL)
		*cause = xprintf("path '%s': %s", rel, strerror(errno));
	return data;
}

/* Read a regular file of the workspace; a symlink is refused. */
static char *
ws_read(const char *ws, const char *rel, size_t *lenp, mode_t *modep,
    char **cause)
{
	const char	*leaf;
	struct stat	 sb;
	char		*data;
	int		 dfd;

	if ((dfd = ws_open_parent(ws, rel, 0, &leaf, cause)) == -1)
		return NULL;
	data = at_read_regular(dfd, leaf, rel, lenp, &sb, cause);
	close(dfd);
	if (data != NULL)
		*modep = sb.st_mode;
	return data;
}

/* --- opening the hostile workspace --- */

static const char *gitdir_bad;	/* nftw has no context argument */

static int
gitdir_walk_cb(const char *path, const struct stat *sb, int type,
    struct FTW *ftw)
{
	if (type == FTW_SL || type == FTW_SLN || S_ISLNK(sb->st_mode)) {
		gitdir_bad = "symlink";
		return 1;
	}
	if (type == FTW_F && (!S_ISREG(sb->st_mode))) {
		gitdir_bad = "special file";
		return 1;
	}
	return 0;
}

/* Whether a config file has include or includeIf sections. */
static int
config_has_include(const char *path)
{
	char	*text, *p;
	size_t	 len;
	int	 found = 0;

	if ((text = file_read(path, &len, 16U << 20)) == NULL)
		return 0;
	for (p = text; *p != '\0'; p++) {
		if (*p != '[')
			continue;
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncasecmp(p, "include", 7) == 0) {
			found = 1;
			break;
		}
	}
	free(text);
	return found;
}

/* The configuration used instead of the workspace's own. */
static const char git_safe_config[] =
    "# written by holt: the configuration of every workspace it opens\n"
    "[core]\n"
    "\trepositoryformatversion = 0\n"
    "\tbare = false\n"
    "\tfilemode = true\n"
    "\tsymlinks = true\n"
    "\tignorecase = false\n"
    "\tautocrlf = false\n"
    "\tsafecrlf = false\n"
    "\tprecomposeunicode = false\n"
    "\tprotectHFS = true\n"
    "\tprotectNTFS = true\n"
    "\tlogallrefupdates = true\n";

/*
 * The fixed configuration, parsed once into an in-memory snapshot before any
 * jail is entered (the file is not reachable from inside it).
 */
static git_config *git_safe_cfg;

static int
git_safe_config_prepare(char **cause)
{
	git_config	*cfg;
	char		*path;
	struct stat	 sb;

	if (git_safe_cfg != NULL)
		return 0;
	git_lib_setup();
	path = paths_join(paths_run_dir(), "git-workspace.conf");
	if (stat(path, &sb) == -1 ||
	    (size_t)sb.st_size != sizeof git_safe_config - 1) {
		if (file_write_atomic(path, git_safe_config,
		    sizeof git_safe_config - 1, 0600) == -1) {
			*cause = xprintf("'%s': %s", path, strerror(errno));
			free(path);
			return -1;
		}
	}
	if (git_config_new(&cfg) != 0 ||
	    git_config_add_file_ondisk(cfg, path, GIT_CONFIG_LEVEL_LOCAL,
	    NULL, 1) != 0 || git_config_snapshot(&git_safe_cfg, cfg) != 0) {
		git_set_cause(cause, "'%s': %s", path);
		free(path);
		return -1;
	}
	git_config_free(cfg);
	free(path);
	return 0;
}

static int
git_use_safe_config(git_repository *repo, char **cause)
{
	if (git_safe_config_prepare(cause) != 0)
		return -1;
	git_repository_set_config(repo, git_safe_cfg);
	return 0;
}

#if LIBGIT2_VER_MAJOR == 1 && LIBGIT2_VER_MINOR < 7
#define GIT_NO_SHALLOW 1
#endif

/* Set in the children of git_job_start: the work is theirs, not ours. */
static int	 git_in_worker;

#ifdef GIT_NO_SHALLOW
/*
 * A shallow clone (holt new --depth, made by git, below) lacks the parents
 * of its oldest commits, which .git/shallow lists. libgit2 before 1.7 does
 * not read that file: a revision walk that reaches such a commit (a push
 * hides the remote's commits and walks below them; a merge base, as the
 * commit and the push's fast-forward checks ask for, paints below base)
 * looks up a parent and fails with "object not found". So a worker opening
 * a shallow workspace adds an object database backend, tried after the
 * real ones, that answers for exactly those missing parents with a commit
 * without parents, as git's own shallow walk stops there. Its ids cannot
 * match its content, so libgit2's hash check is off in that worker; such a
 * commit is never sent: a walk reaches it only as the remote's, and were
 * it packed, its real id would differ and the server would refuse the push
 * for a missing object. Costs reading the shallow commits once.
 */
struct shallow_odb {
	git_odb_backend	 backend;
	git_oid		*ids;
	size_t		 n;
};

static const char shallow_commit[] =
    "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
    "author holt <holt@localhost> 0 +0000\n"
    "committer holt <holt@localhost> 0 +0000\n"
    "\n"
    "beyond the shallow clone's history\n";

static int
shallow_has(struct shallow_odb *so, const git_oid *id)
{
	size_t	 i;

	for (i = 0; i < so->n; i++)
		if (git_oid_equal(&so->ids[i], id))
			return 1;
	return 0;
}

static int
shallow_read(void **data, size_t *len, git_object_t *type,
    git_odb_backend *b, const git_oid *id)
{
	if (!shallow_has((struct shallow_odb *)b, id))
		return GIT_ENOTFOUND;
	if ((*data = git_odb_backend_data_alloc(b,
	    sizeof shallow_commit - 1)) == NULL)
		return -1;
	memcpy(*data, shallow_commit, sizeof shallow_commit - 1);
	*len = sizeof shallow_commit - 1;
	*type = GIT_OBJECT_COMMIT;
	return 0;
}

static int
shallow_read_header(size_t *len, git_object_t *type, git_odb_backend *b,
    const git_oid *id)
{
	if (!shallow_has((struct shallow_odb *)b, id))
		return GIT_ENOTFOUND;
	*len = sizeof shallow_commit - 1;
	*type = GIT_OBJECT_COMMIT;
	return 0;
}

static int
shallow_exists(git_odb_backend *b, const git_oid *id)
{
	return shallow_has((struct shallow_odb *)b, id);
}

static void
shallow_free(git_odb_backend *b)
{
	struct shallow_odb	*so = (struct shallow_odb *)b;

	free(so->ids);
	free(so);
}

/* 0 done (or not shallow), -1 with *cause. */
static int
git_shallow_graft(git_repository *repo, const char *ws, char **cause)
{
	struct shallow_odb	*so;
	git_odb			*odb = NULL;
	git_commit		*c;
	git_oid			 oid;
	char			*path, *text, *line, *next;
	size_t			 len, i, n;

	path = paths_join(git_repository_path(repo), "shallow");
	text = file_read(path, &len, 16U << 20);
	free(path);
	if (text == NULL)
		return 0;
	so = xcalloc(1, sizeof *so);
	for (line = text; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (git_oid_fromstr(&oid, line) != 0 ||
		    git_commit_lookup(&c, repo, &oid) != 0)
			continue;
		n = git_commit_parentcount(c);
		for (i = 0; i < n; i++) {
			so->ids = xreallocarray(so->ids, so->n + 1,
			    sizeof *so->ids);
			git_oid_cpy(&so->ids[so->n++],
			    git_commit_parent_id(c, i));
		}
		git_commit_free(c);
	}
	free(text);
	so->backend.version = GIT_ODB_BACKEND_VERSION;
	so->backend.read = shallow_read;
	so->backend.read_header = shallow_read_header;
	so->backend.exists = shallow_exists;
	so->backend.free = shallow_free;
	if (git_repository_odb(&odb, repo) != 0 ||
	    git_odb_add_backend(odb, &so->backend, 0) != 0) {
		git_set_cause(cause, "workspace '%s': shallow clone: %s", ws);
		git_odb_free(odb);
		shallow_free(&so->backend);
		return -1;
	}
	git_odb_free(odb);
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	return 0;
}
#endif

/*
 * Open a workspace by the rules of git.h. Checks happen before libgit2
 * reads anything: the workspace and its .git are real directories, .git
 * holds no symlink or special file, no alternates, no commondir (a linked
 * worktree's pointer elsewhere) and its config no include.
 */
int	 git_test_unchecked;

static git_repository *
git_open_workspace(const char *ws, char **cause)
{
	git_repository	*repo;
	struct stat	 sb;
	char		*gitdir, *p;
	const char	*bad[] = { "objects/info/alternates", "commondir",
	    "gitdir", "objects/info/http-alternates" };
	size_t		 i;

	git_lib_setup();
	if (lstat(ws, &sb) == -1) {
		*cause = xprintf("workspace '%s': %s", ws, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(sb.st_mode)) {
		*cause = xprintf("workspace '%s': not a directory", ws);
		return NULL;
	}
	gitdir = paths_join(ws, ".git");
	if (git_test_unchecked)
		goto open;
	errno = 0;
	if (lstat(gitdir, &sb) == -1 || !S_ISDIR(sb.st_mode)) {
		*cause = xprintf("workspace '%s': .git is %s (refused: holt "
		    "only opens a .git directory inside the workspace)", ws,
		    errno == ENOENT ? "missing" : S_ISLNK(sb.st_mode) ?
		    "a symlink" : "not a directory");
		free(gitdir);
		return NULL;
	}
	gitdir_bad = NULL;
	if (nftw(gitdir, gitdir_walk_cb, 16, FTW_PHYS) != 0 ||
	    gitdir_bad != NULL) {
		*cause = xprintf("workspace '%s': .git holds a %s (refused)",
		    ws, gitdir_bad != NULL ? gitdir_bad : "unreadable file");
		free(gitdir);
		return NULL;
	}
	for (i = 0; i < nitems(bad); i++) {
		p = paths_join(gitdir, bad[i]);
		if (lstat(p, &sb) == 0) {
			*cause = xprintf("workspace '%s': .git/%s points "
			    "outside the workspace (refused; remove it)", ws,
			    bad[i]);
			free(p);
			free(gitdir);
			return NULL;
		}
		free(p);
	}
	p = paths_join(gitdir, "config");
	if (config_has_include(p)) {
		*cause = xprintf("workspace '%s': .git/config has an include "
		    "(refused; remove it)", ws);
		free(p);
		free(gitdir);
		return NULL;
	}
	free(p);

	/*
	 * Opened as bare, so core.worktree and core.bare are not looked at;
	 * the work tree is set to the workspace itself.
	 */
open:
	if (git_repository_open_ext(&repo, gitdir, GIT_REPOSITORY_OPEN_NO_SEARCH|
	    GIT_REPOSITORY_OPEN_BARE|GIT_REPOSITORY_OPEN_NO_DOTGIT,
	    NULL) != 0) {
		git_set_cause(cause, "workspace '%s': %s", ws);
		free(gitdir);
		return NULL;
	}
	free(gitdir);
	if (git_use_safe_config(repo, cause) != 0 ||
	    git_repository_set_workdir(repo, ws, 0) != 0) {
		if (*cause == NULL)
			git_set_cause(cause, "workspace '%s': %s", ws);
		git_repository_free(repo);
		return NULL;
	}
#ifdef GIT_NO_SHALLOW
	if (git_in_worker && git_shallow_graft(repo, ws, cause) != 0) {
		git_repository_free(repo);
		return NULL;
	}
#endif
	return repo;
}

static int
git_lookup_commit(git_repository *repo, const char *rev, git_commit **c,
    char **cause)
{
	git_oid		 oid;
	git_object	*obj;

	if (git_oid_fromstr(&oid, rev) == 0) {
		if (git_commit_lookup(c, repo, &oid) == 0)
			return 0;
	} else if (git_revparse_single(&obj, repo, rev) == 0) {
		if (git_object_peel((git_object **)c, obj,
		    GIT_OBJECT_COMMIT) == 0) {
			git_object_free(obj);
			return 0;
		}
		git_object_free(obj);
	}
	*cause = xprintf("commit '%s': not in the workspace's repository",
	    rev);
	return -1;
}

/* --- token and credentials --- */

const char *
git_token(void)
{
	const char	*t;

	if ((t = getenv("HOLT_GIT_TOKEN")) != NULL && *t != '\0')
		return t;
	if ((t = getenv("GITHUB_TOKEN")) != NULL && *t != '\0')
		return t;
	if ((t = config_get("git_token")) != NULL && *t != '\0')
		return t;
	return NULL;
}

struct git_cred {
	const char	*token;
	char		*host;		/* the token goes to this host only */
	int		 calls;
	int		 no_token;
	int		 refused;	/* the server did not take it */
	git_progress_cb	 progress;
	void		*progress_arg;
	char		*rejected;	/* push: a ref's status from the server */
};

/* The host[:port] of an URL, or NULL. */
static char *
url_host(const char *url)
{
	const char	*p, *end, *at;

	if ((p = strstr(url, "://")) == NULL)
		return NULL;
	p += 3;
	end = p + strcspn(p, "/?#");
	at = memchr(p, '@', end - p);
	if (at != NULL)
		p = at + 1;
	return xstrndup(p, end - p);
}

static int
git_cred_cb(git_credential **out, const char *url, const char *user,
    unsigned int allowed, void *arg)
{
	struct git_cred	*gc = arg;
	char		*host;

	if (++gc->calls > 3 || ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) &&
	    gc->calls > 1)) {
		gc->refused = 1;
		git_error_set_str(GIT_ERROR_NET, "authentication refused");
		return GIT_EAUTH;
	}
	if (allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) {
		if (gc->token == NULL) {
			gc->no_token = 1;
			git_error_set_str(GIT_ERROR_NET, "no token");
			return GIT_EAUTH;
		}
		host = url_host(url);
		if (host == NULL || gc->host == NULL ||
		    strcasecmp(host, gc->host) != 0) {
			/* A redirect elsewhere does not get the token. */
			free(host);
			gc->no_token = 1;
			git_error_set_str(GIT_ERROR_NET, "no token for this host");
			return GIT_EAUTH;
		}
		free(host);
		return git_credential_userpass_plaintext_new(out,
		    "x-access-token", gc->token);
	}
	if (allowed & GIT_CREDENTIAL_SSH_KEY)
		return git_credential_ssh_key_from_agent(out,
		    user != NULL ? user : "git");
	if (allowed & GIT_CREDENTIAL_USERNAME)
		return git_credential_username_new(out,
		    user != NULL ? user : "git");
	git_error_set_str(GIT_ERROR_NET, "no usable credential type");
	return GIT_EAUTH;
}

static int
git_progress_wrap(const git_indexer_progress *st, void *arg)
{
	struct git_cred	*gc = arg;

	if (gc->progress != NULL)
		gc->progress(st->received_objects, st->total_objects,
		    (unsigned long long)st->received_bytes, gc->progress_arg);
	return 0;
}

/* A message for a failed network operation, naming what to do. */
static char *
git_net_cause(const char *what, const char *url, struct git_cred *gc)
{
	char	*m, *c;

	if (gc->no_token)
		return xprintf("%s '%s': the server asks for a token and none "
		    "is set (set HOLT_GIT_TOKEN or GITHUB_TOKEN, or git_token "
		    "in holt.conf)", what, url);
	if (gc->refused)
		return xprintf("%s '%s': authentication failed: the token is "
		    "wrong or lacks access to this repository", what, url);
	m = git_errmsg();
	if (strstr(m, "connect") != NULL || strstr(m, "resolve") != NULL ||
	    strstr(m, "timed out") != NULL)
		c = xprintf("%s '%s': %s (is the network up?)", what, url, m);
	else
		c = xprintf("%s '%s': %s", what, url, m);
	free(m);
	return c;
}

/* Split user:password@ off an URL; the password becomes the token. */
char *
git_url_strip(const char *url, char **password)
{
	const char	*p, *end, *at, *colon;
	char		*out;

	*password = NULL;
	if ((p = strstr(url, "://")) == NULL)
		return xstrdup(url);
	p += 3;
	end = p + strcspn(p, "/?#");
	at = NULL;
	for (colon = p; colon < end; colon++)
		if (*colon == '@')
			at = colon;
	if (at == NULL)
		return xstrdup(url);
	if (strncmp(url, "ssh://", 6) == 0 && memchr(p, ':', at - p) == NULL)
		return xstrdup(url);	/* ssh://git@host: the user stays */
	colon = memchr(p, ':', at - p);
	if (colon != NULL)
		*password = xstrndup(colon + 1, at - colon - 1);
	xasprintf(&out, "%.*s%s", (int)(p - url), url, at + 1);
	return out;
}

static int
is_url(const char *s)
{
	return strstr(s, "://") != NULL ||
	    (strchr(s, '@') != NULL && strchr(s, ':') != NULL &&
	    strchr(s, '/') != NULL && *s != '/' && *s != '.');
}

/* --- import --- */

static int
dir_is_empty(const char *path)
{
	struct stat	 sb;
	int		 empty = 1;
	DIR		*d;
	struct dirent	*de;

	if (lstat(path, &sb) == -1)
		return errno == ENOENT;
	if (!S_ISDIR(sb.st_mode) || (d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0) {
			empty = 0;
			break;
		}
	}
	closedir(d);
	return empty;
}

/*
 * Copy one path of the user's working tree into the workspace, or remove
 * it there when the tree has no file at that path. Every component is
 * opened without following links: a tracked directory that became a link
 * in the user's checkout (d -> ~/.ssh) has no files below it as far as the
 * import is concerned, as for git, and nothing of the host is copied.
 * A FIFO or a device is skipped, never read.
 */
/*
 * Remove rel from the workspace and the directories it leaves empty, as
 * git does, so that a link or file now in their place can be written.
 */
static int
import_remove(const char *ws, const char *rel, char **cause)
{
	const char	*leaf;
	char		*dir, *slash, *why = NULL;
	int		 dfd;

	/* No parent (removed with an earlier path): nothing to remove. */
	if ((dfd = ws_open_parent(ws, rel, 0, &leaf, &why)) == -1) {
		free(why);
		return 0;
	}
	if (unlinkat(dfd, leaf, 0) == -1 && errno != ENOENT) {
		*cause = xprintf("path '%s': %s", rel, strerror(errno));
		close(dfd);
		return -1;
	}
	close(dfd);
	dir = xstrdup(rel);
	while ((slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		if ((dfd = ws_open_parent(ws, dir, 0, &leaf, &why)) == -1) {
			free(why);
			break;
		}
		if (unlinkat(dfd, leaf, AT_REMOVEDIR) == -1) {
			close(dfd);
			break;
		}
		close(dfd);
	}
	free(dir);
	return 0;
}

static int
import_copy(const char *from_wd, const char *ws, const char *rel, int pass,
    char **cause)
{
	struct stat	 sb;
	const char	*leaf;
	char		*data, *why = NULL, link[PATH_MAX];
	size_t		 len;
	ssize_t		 n;
	int		 dfd, r;

	if ((dfd = tree_open_parent("repository", from_wd, 1, rel, 0, &leaf,
	    &why)) == -1) {
		free(why);	/* a parent is missing, or is a link */
		return pass == 0 ? import_remove(ws, rel, cause) : 0;
	}
	if (fstatat(dfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) == -1) {
		close(dfd);
		return pass == 0 ? import_remove(ws, rel, cause) : 0;
	}
	if (pass == 0) {
		close(dfd);
		return 0;
	}
	if (S_ISLNK(sb.st_mode)) {
		n = readlinkat(dfd, leaf, link, sizeof link);
		close(dfd);
		if (n == -1 || (size_t)n == sizeof link)
			return 0;
		return ws_write(ws, rel, link, n, S_IFLNK, cause);
	}
	if (!S_ISREG(sb.st_mode)) {
		close(dfd);
		return 0;
	}
	data = at_read_regular(dfd, leaf, rel, &len, &sb, cause);
	close(dfd);
	if (data == NULL)
		return -1;
	r = ws_write(ws, rel, data, len, sb.st_mode, cause);
	free(data);
	return r;
}

/* The user's uncommitted and untracked files, copied into the workspace. */
static int
import_overlay(git_repository *user, const char *ws, char **cause)
{
	git_status_options	 so = GIT_STATUS_OPTIONS_INIT;
	git_status_list		*list;
	const git_status_entry	*e;
	const git_diff_delta	*d[2];
	const char		*wd = git_repository_workdir(user);
	size_t			 i, n, k;
	int			 pass;

	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED|
	    GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS|
	    GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (git_status_list_new(&list, user, &so) != 0) {
		git_set_cause(cause, "'%s': %s", wd);
		return -1;
	}
	/*
	 * Removals first: a directory whose files are gone (d/x) can then
	 * give its place to the link or file now at d.
	 */
	n = git_status_list_entrycount(list);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			e = git_status_byindex(list, i);
			d[0] = e->head_to_index;
			d[1] = e->index_to_workdir;
			for (k = 0; k < 2; k++) {
				if (d[k] == NULL)
					continue;
				if (import_copy(wd, ws, d[k]->old_file.path,
				    pass, cause) != 0 ||
				    (strcmp(d[k]->old_file.path,
				    d[k]->new_file.path) != 0 &&
				    import_copy(wd, ws, d[k]->new_file.path,
				    pass, cause) != 0)) {
					git_status_list_free(list);
					return -1;
				}
			}
		}
	}
	git_status_list_free(list);
	return 0;
}

#ifdef GIT_NO_SHALLOW
static void	 git_close_pair(int [2]);
static void	 git_env_scrub(void);

/*
 * A shallow clone by the git command: libgit2 before 1.7 cannot make one.
 * git runs as the libgit2 clone would, in the import child, on its
 * process group (killed with it): no system or global configuration, no
 * hooks, no templates, no terminal prompt, ssh in batch mode through the
 * user's agent. The token reaches it through a credential helper that
 * copies, for the clone's host only, what holt wrote into a pipe on fd 3:
 * it is on no command line, in no environment and in no file.
 */
static const char git_cli_helper[] =
    "credential.helper=!f() { test \"$1\" = get || exit 0; h=; "
    "while read -r l && test -n \"$l\"; do case $l in host=*) "
    "h=${l#host=};; esac; done; if test \"$h\" = \"$HOLT_GIT_HOST\"; "
    "then exec cat <&3; fi; }; f";

/* The git command on PATH, or NULL. Caller frees. */
static char *
git_cli_path(void)
{
	const char	*path = getenv("PATH"), *p, *end;
	char		*cand;

	if (path == NULL || *path == '\0')
		path = "/usr/bin:/bin";
	for (p = path;; p = end + 1) {
		end = p + strcspn(p, ":");
		if (*p == '/') {
			cand = xprintf("%.*s/git", (int)(end - p), p);
			if (access(cand, X_OK) == 0)
				return cand;
			free(cand);
		}
		if (*end == '\0')
			return NULL;
	}
}

/* What git says on stderr: progress counters and its last complaint. */
struct git_cli_err {
	unsigned int		 got, total;
	unsigned long long	 bytes;
	char			*fatal;
	char			*last;
};

static void
git_cli_line(struct git_cli_err *ge, const char *line)
{
	const char	*p;
	double		 n;
	char		 unit[8];

	if (strncmp(line, "Receiving objects:", 18) == 0) {
		if ((p = strchr(line, '(')) != NULL)
			sscanf(p, "(%u/%u)", &ge->got, &ge->total);
		if ((p = strstr(line, "), ")) != NULL &&
		    sscanf(p + 3, "%lf %7s", &n, unit) == 2) {
			if (strcmp(unit, "KiB") == 0)
				n *= 1024;
			else if (strcmp(unit, "MiB") == 0)
				n *= 1024 * 1024;
			else if (strcmp(unit, "GiB") == 0)
				n *= 1024.0 * 1024 * 1024;
			ge->bytes = (unsigned long long)n;
		}
		return;
	}
	if (strncmp(line, "fatal: ", 7) == 0 ||
	    (ge->fatal == NULL && strncmp(line, "error: ", 7) == 0)) {
		free(ge->fatal);
		ge->fatal = xstrdup(line + 7);
	} else if (*line != '\0' && strncmp(line, "remote: ", 8) != 0 &&
	    strstr(line, "objects:") == NULL &&
	    strstr(line, "deltas:") == NULL &&
	    strncmp(line, "Please make sure you have", 25) != 0 &&
	    strcmp(line, "and the repository exists.") != 0) {
		free(ge->last);
		ge->last = xstrdup(line);
	}
}

/* The message for a failed git clone, as git_net_cause says it. */
static char *
git_cli_cause(const char *url, struct git_cli_err *ge, int status)
{
	const char	*m = ge->fatal != NULL ? ge->fatal : ge->last;

	/* Over ssh, the cause is what ssh said before git's last word. */
	if (m != NULL && ge->last != NULL &&
	    strstr(m, "Could not read from remote repository") != NULL)
		m = ge->last;

	if (m != NULL && (strstr(m, "could not read Username") != NULL ||
	    strstr(m, "could not read Password") != NULL))
		return xprintf("clone of '%s': the server asks for a token and "
		    "none is set (set HOLT_GIT_TOKEN or GITHUB_TOKEN, or "
		    "git_token in holt.conf)", url);
	if (m != NULL && strstr(m, "Authentication failed") != NULL)
		return xprintf("clone of '%s': authentication failed: the token "
		    "is wrong or lacks access to this repository", url);
	if (m != NULL && (strstr(m, "connect") != NULL ||
	    strstr(m, "resolve") != NULL || strstr(m, "timed out") != NULL ||
	    strstr(m, "Connection refused") != NULL))
		return xprintf("clone of '%s': %s (is the network up?)", url, m);
	if (m != NULL)
		return xprintf("clone of '%s': git: %s", url, m);
	if (WIFSIGNALED(status))
		return xprintf("clone of '%s': git was killed by signal %d",
		    url, WTERMSIG(status));
	return xprintf("clone of '%s': git failed (status %d)", url,
	    WIFEXITED(status) ? WEXITSTATUS(status) : status);
}

static int
git_clone_cli(const char *url, const char *ws,
    const struct git_import_opts *opts, const char *token, char **cause)
{
	struct git_cli_err	 ge;
	struct buf		 err = BUF_INIT;
	const char		*argv[24], *envp[16], *e;
	char			*git, *host, *cred = NULL, *envs[8], depth[16];
	char			 chunk[4096];
	size_t			 na = 0, ne = 0, ns = 0, i, k;
	pid_t			 pid;
	ssize_t			 n;
	int			 efd[2] = { -1, -1 }, tfd[2] = { -1, -1 };
	int			 nul, status, r = -1;

	memset(&ge, 0, sizeof ge);
	if ((git = git_cli_path()) == NULL) {
		*cause = xprintf("clone of '%s' with --depth %d: the git command "
		    "is missing (libgit2 %s cannot make shallow clones; install "
		    "the package git)", url, opts->depth, LIBGIT2_VERSION);
		return -1;
	}
	if (token != NULL && strpbrk(token, "\n\r") != NULL) {
		*cause = xstrdup("the git token holds a line break");
		free(git);
		return -1;
	}
	host = url_host(url);
	envs[ns++] = xprintf("HOLT_GIT_HOST=%s", host != NULL ? host : "");
	free(host);
	envs[ns++] = xprintf("PATH=%s", (e = getenv("PATH")) != NULL ? e :
	    "/usr/bin:/bin");
	if ((e = getenv("HOME")) != NULL && *e == '/' &&
	    strchr(e, '\'') == NULL) {
		envs[ns++] = xprintf("HOME=%s", e);
		/*
		 * ssh reads the passwd entry's home, libgit2 (and the push)
		 * HOME's: the host keys are HOME's, as for the libgit2 clone.
		 */
		envs[ns++] = xprintf("GIT_SSH_COMMAND=ssh -o BatchMode=yes "
		    "-o UserKnownHostsFile='%s/.ssh/known_hosts'", e);
	} else
		envs[ns++] = xstrdup("GIT_SSH_COMMAND=ssh -o BatchMode=yes");
	if ((e = getenv("SSH_AUTH_SOCK")) != NULL)
		envs[ns++] = xprintf("SSH_AUTH_SOCK=%s", e);
	for (i = 0; i < ns; i++)
		envp[ne++] = envs[i];
	envp[ne++] = "LC_ALL=C";
	envp[ne++] = "GIT_TERMINAL_PROMPT=0";
	envp[ne++] = "GIT_CONFIG_NOSYSTEM=1";
	envp[ne++] = "GIT_CONFIG_GLOBAL=/dev/null";
	envp[ne] = NULL;

	snprintf(depth, sizeof depth, "%d", opts->depth);
	argv[na++] = "git";
	argv[na++] = "-c";
	argv[na++] = git_cli_helper;
	argv[na++] = "-c";
	argv[na++] = "credential.useHttpPath=false";
	argv[na++] = "-c";
	argv[na++] = "protocol.file.allow=never";
	argv[na++] = "-c";
	argv[na++] = "core.hooksPath=/dev/null";
	argv[na++] = "clone";
	argv[na++] = "--progress";
	argv[na++] = "--template=";
	argv[na++] = "--depth";
	argv[na++] = depth;
	if (opts->branch != NULL) {
		argv[na++] = "--branch";
		argv[na++] = opts->branch;
	}
	argv[na++] = "--";
	argv[na++] = url;
	argv[na++] = ws;
	argv[na] = NULL;

	/* The credentials fit the pipe's buffer: written before the fork. */
	if (token != NULL)
		cred = xprintf("username=x-access-token\npassword=%s\n", token);
	if (pipe2(efd, O_CLOEXEC) != 0 || pipe2(tfd, O_CLOEXEC) != 0 ||
	    (cred != NULL && file_write_all(tfd[1], cred, strlen(cred)) != 0)) {
		*cause = xprintf("pipe: %s", strerror(errno));
		goto out;
	}
	close(tfd[1]);
	tfd[1] = -1;
	if ((pid = fork()) == -1) {
		*cause = xprintf("fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		/* Out of 0 to 3 first: dup2 then clears close-on-exec. */
		if ((nul = open("/dev/null", O_RDWR|O_CLOEXEC)) == -1 ||
		    (nul = fcntl(nul, F_DUPFD_CLOEXEC, 10)) == -1 ||
		    (efd[1] = fcntl(efd[1], F_DUPFD_CLOEXEC, 10)) == -1 ||
		    (tfd[0] = fcntl(tfd[0], F_DUPFD_CLOEXEC, 10)) == -1 ||
		    dup2(nul, 0) == -1 || dup2(nul, 1) == -1 ||
		    dup2(efd[1], 2) == -1 || dup2(tfd[0], 3) == -1)
			_exit(127);
		close_range(4, ~0U, 0);
		execve(git, (char **)argv, (char **)envp);
		_exit(127);
	}
	close(efd[1]);
	efd[1] = -1;
	close(tfd[0]);
	tfd[0] = -1;
	/* git's progress comes as lines ended by \r or \n. */
	for (;;) {
		n = read(efd[0], chunk, sizeof chunk);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		buf_add(&err, chunk, n);
		for (;;) {
			for (k = 0; k < err.len && err.data[k] != '\n' &&
			    err.data[k] != '\r'; k++)
				;
			if (k == err.len)
				break;
			err.data[k] = '\0';
			git_cli_line(&ge, err.data);
			buf_remove_front(&err, k + 1);
		}
		if (err.len > 65536)
			buf_remove_front(&err, err.len);
		if (opts->progress != NULL)
			opts->progress(ge.got, ge.total, ge.bytes,
			    opts->progress_arg);
	}
	if (err.len > 0)
		git_cli_line(&ge, buf_str(&err));
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 &&
	    ge.fatal == NULL && ge.last == NULL)
		*cause = xprintf("clone of '%s': cannot run '%s'", url, git);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		*cause = git_cli_cause(url, &ge, status);
	else
		r = 0;
out:
	git_close_pair(efd);
	git_close_pair(tfd);
	if (cred != NULL) {
		explicit_bzero(cred, strlen(cred));
		free(cred);
	}
	for (i = 0; i < ns; i++)
		free(envs[i]);
	free(ge.fatal);
	free(ge.last);
	buf_release(&err);
	free(git);
	return r;
}
#endif

static int
git_import_impl(const char *src, const char *ws,
    const struct git_import_opts *opts, char **base_commit, char **cause)
{
	git_clone_options	 co = GIT_CLONE_OPTIONS_INIT;
	git_repository		*repo = NULL, *user = NULL;
	struct git_cred		 gc;
	git_reference		*head = NULL;
	git_oid			 oid;
	const git_oid		*hoid;
	char			*url = NULL, *password = NULL, hex[GIT_OID_HEXSZ + 1];
	int			 rc = -1, local;
#ifdef GIT_NO_SHALLOW
	char			*tok;
	int			 r;
#endif

	git_lib_setup();
	memset(&gc, 0, sizeof gc);
	if (!dir_is_empty(ws)) {
		*cause = xprintf("workspace '%s': not empty", ws);
		return -1;
	}
	local = !is_url(src) || strncmp(src, "file://", 7) == 0;
	if (strncmp(src, "file://", 7) == 0)
		src += 7;
	if (local) {
		if (git_repository_open_ext(&user, src, 0, NULL) != 0) {
			git_set_cause(cause, "repository '%s': %s", src);
			return -1;
		}
		url = xstrdup(git_repository_is_bare(user) ?
		    git_repository_path(user) : git_repository_workdir(user));
		co.local = GIT_CLONE_LOCAL_NO_LINKS;	/* never share inodes */
	} else {
		url = git_url_strip(src, &password);
		gc.token = password != NULL ? password : git_token();
		gc.host = url_host(url);
	}
	gc.progress = opts != NULL ? opts->progress : NULL;
	gc.progress_arg = opts != NULL ? opts->progress_arg : NULL;
	co.fetch_opts.callbacks.credentials = git_cred_cb;
	co.fetch_opts.callbacks.transfer_progress = git_progress_wrap;
	co.fetch_opts.callbacks.payload = &gc;
	co.fetch_opts.follow_redirects = GIT_REMOTE_REDIRECT_INITIAL;
	if (opts != NULL && opts->branch != NULL)
		co.checkout_branch = opts->branch;
	/*
	 * Shallow fetches came with libgit2 1.7, for the network transports
	 * only (its local transport refuses them); before, git makes the
	 * clone (git_clone_cli).
	 */
	if (opts != NULL && opts->depth > 0 && local)
		log_warnx("--depth %d: a local repository is copied with its "
		    "whole history", opts->depth);
	else if (opts != NULL && opts->depth > 0) {
#ifndef GIT_NO_SHALLOW
		co.fetch_opts.depth = opts->depth;
#else
		/*
		 * The token is copied out of the environment, which is then
		 * wiped (as a push child's is) while git runs under us.
		 */
		tok = gc.token != NULL ? xstrdup(gc.token) : NULL;
		gc.token = NULL;
		git_env_scrub();
		r = git_clone_cli(url, ws, opts, tok, cause);
		if (tok != NULL) {
			explicit_bzero(tok, strlen(tok));
			free(tok);
		}
		if (r != 0)
			goto out;
		if (git_repository_open_ext(&repo, ws,
		    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0) {
			git_set_cause(cause, "clone of '%s': %s", url);
			goto out;
		}
		goto cloned;
#endif
	}
	if (git_clone(&repo, url, ws, &co) != 0) {
		*cause = git_net_cause("clone of", url, &gc);
		goto out;
	}
#ifdef GIT_NO_SHALLOW
cloned:
#endif
	if (git_repository_head(&head, repo) != 0 ||
	    (hoid = git_reference_target(head)) == NULL) {
		git_set_cause(cause, "clone of '%s': no HEAD commit: %s", url);
		goto out;
	}
	git_oid_cpy(&oid, hoid);
	if (user != NULL && !git_repository_is_bare(user)) {
		git_reference	*uh = NULL;
		int		 same = 0;

		if (git_repository_head(&uh, user) == 0 &&
		    git_reference_target(uh) != NULL &&
		    git_oid_equal(git_reference_target(uh), &oid))
			same = 1;
		git_reference_free(uh);
		if (same && import_overlay(user, ws, cause) != 0)
			goto out;
	}
	git_oid_tostr(hex, sizeof hex, &oid);
	*base_commit = xstrdup(hex);
	rc = 0;
out:
	git_reference_free(head);
	git_repository_free(repo);
	git_repository_free(user);
	free(url);
	free(gc.host);
	if (password != NULL) {
		explicit_bzero(password, strlen(password));
		free(password);
	}
	return rc;
}

char *
git_origin_url(const char *path, char **cause)
{
	git_repository	*repo;
	git_remote	*remote;
	char		*url;

	git_lib_setup();
	if (git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH,
	    NULL) != 0) {
		git_set_cause(cause, "repository '%s': %s", path);
		return NULL;
	}
	if (git_remote_lookup(&remote, repo, "origin") != 0 ||
	    git_remote_url(remote) == NULL) {
		*cause = xprintf("repository '%s': no remote 'origin' to open "
		    "a pull request on (use --local to push into it)", path);
		git_repository_free(repo);
		return NULL;
	}
	url = xstrdup(git_remote_url(remote));
	git_remote_free(remote);
	git_repository_free(repo);
	return url;
}

/* --- diff --- */

static int
git_make_diff(git_repository *repo, const char *base, int typechange,
    git2_diff **diff, git_commit **basep, char **cause)
{
	git_diff_options	 o = GIT_DIFF_OPTIONS_INIT;
	git_diff_find_options	 fo = GIT_DIFF_FIND_OPTIONS_INIT;
	git_commit		*c;
	git_tree		*tree;

	if (git_lookup_commit(repo, base, &c, cause) != 0)
		return -1;
	if (git_commit_tree(&tree, c) != 0) {
		git_set_cause(cause, "commit '%s': %s", base);
		git_commit_free(c);
		return -1;
	}
	/* Without typechange, a file that became a link is delete + add. */
	o.flags = GIT_DIFF_INCLUDE_UNTRACKED|GIT_DIFF_RECURSE_UNTRACKED_DIRS|
	    GIT_DIFF_SHOW_UNTRACKED_CONTENT|GIT_DIFF_IGNORE_SUBMODULES;
	if (typechange)
		o.flags |= GIT_DIFF_INCLUDE_TYPECHANGE;
	o.ignore_submodules = GIT_SUBMODULE_IGNORE_ALL;
	if (git_diff_tree_to_workdir_with_index(diff, repo, tree, &o) != 0) {
		git_set_cause(cause, "diff against '%s': %s", base);
		git_tree_free(tree);
		git_commit_free(c);
		return -1;
	}
	git_tree_free(tree);
	fo.flags = GIT_DIFF_FIND_RENAMES|GIT_DIFF_FIND_FOR_UNTRACKED;
	if (git_diff_find_similar(*diff, &fo) != 0) {
		git_set_cause(cause, "diff against '%s': %s", base);
		git_diff_free(*diff);
		git_commit_free(c);
		return -1;
	}
	if (basep != NULL)
		*basep = c;
	else
		git_commit_free(c);
	return 0;
}

static const char *
git_status_name(git_delta_t s)
{
	switch (s) {
	case GIT_DELTA_ADDED:
	case GIT_DELTA_UNTRACKED:
	case GIT_DELTA_COPIED:
		return "added";
	case GIT_DELTA_DELETED:
		return "deleted";
	case GIT_DELTA_RENAMED:
		return "renamed";
	case GIT_DELTA_TYPECHANGE:
		return "typechange";
	default:
		return "modified";
	}
}

static void
add_mode(cJSON *o, const char *key, uint32_t mode)
{
	char	 m[16];

	if (mode == 0)
		m[0] = '\0';
	else
		snprintf(m, sizeof m, "%06o", (unsigned)mode);
	cJSON_AddStringToObject(o, key, m);
}

/*
 * Text for JSON: valid UTF-8, each invalid byte replaced by U+FFFD (a file
 * in Latin-1 still diffs as text). Caller frees.
 */
static char *
git_utf8(const char *p, size_t len)
{
	struct buf		 b = BUF_INIT;
	const unsigned char	*s = (const unsigned char *)p;
	size_t			 i = 0, n, k;
	uint32_t		 cp;

	while (i < len) {
		if (s[i] < 0x80) {
			buf_addc(&b, (char)s[i++]);
			continue;
		}
		if (s[i] >= 0xc2 && s[i] <= 0xdf)
			n = 1, cp = s[i] & 0x1f;
		else if (s[i] >= 0xe0 && s[i] <= 0xef)
			n = 2, cp = s[i] & 0x0f;
		else if (s[i] >= 0xf0 && s[i] <= 0xf4)
			n = 3, cp = s[i] & 0x07;
		else
			n = 0, cp = 0;
		for (k = 1; n != 0 && k <= n; k++) {
			if (i + k >= len || (s[i + k] & 0xc0) != 0x80)
				break;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (n == 0 || k <= n || (n == 2 && cp < 0x800) ||
		    (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff)) {
			buf_add(&b, "\xef\xbf\xbd", 3);
			i++;
			continue;
		}
		buf_add(&b, s + i, n + 1);
		i += n + 1;
	}
	return buf_detach(&b, NULL);
}

static cJSON *
git_patch_json(git_patch *patch)
{
	const git_diff_delta	*d = git_patch_get_delta(patch);
	const git_diff_hunk	*h;
	const git_diff_line	*l;
	cJSON			*f, *hunks, *hj, *lines, *lj;
	size_t			 nh, nl, i, j, add, del;
	char			 origin[2], *text;
	int			 binary;

	f = cJSON_CreateObject();
	text = git_utf8(d->new_file.path, strlen(d->new_file.path));
	cJSON_AddStringToObject(f, "path", text);
	free(text);
	text = git_utf8(d->old_file.path, strlen(d->old_file.path));
	cJSON_AddStringToObject(f, "old_path", text);
	free(text);
	cJSON_AddStringToObject(f, "status", git_status_name(d->status));
	binary = (d->flags & GIT_DIFF_FLAG_BINARY) != 0;
	cJSON_AddBoolToObject(f, "binary", binary);
	add_mode(f, "old_mode", d->status == GIT_DELTA_ADDED ||
	    d->status == GIT_DELTA_UNTRACKED ? 0 : d->old_file.mode);
	add_mode(f, "new_mode", d->status == GIT_DELTA_DELETED ? 0 :
	    d->new_file.mode);
	git_patch_line_stats(NULL, &add, &del, patch);
	cJSON_AddNumberToObject(f, "additions", binary ? 0 : add);
	cJSON_AddNumberToObject(f, "deletions", binary ? 0 : del);
	hunks = cJSON_AddArrayToObject(f, "hunks");
	nh = binary ? 0 : git_patch_num_hunks(patch);
	for (i = 0; i < nh; i++) {
		if (git_patch_get_hunk(&h, &nl, patch, i) != 0)
			break;
		hj = cJSON_CreateObject();
		text = git_utf8(h->header, strcspn(h->header, "\n"));
		cJSON_AddStringToObject(hj, "header", text);
		free(text);
		cJSON_AddNumberToObject(hj, "old_start", h->old_start);
		cJSON_AddNumberToObject(hj, "old_lines", h->old_lines);
		cJSON_AddNumberToObject(hj, "new_start", h->new_start);
		cJSON_AddNumberToObject(hj, "new_lines", h->new_lines);
		lines = cJSON_AddArrayToObject(hj, "lines");
		for (j = 0; j < nl; j++) {
			if (git_patch_get_line_in_hunk(&l, patch, i, j) != 0)
				break;
			if (l->origin != ' ' && l->origin != '+' &&
			    l->origin != '-')
				continue;	/* "no newline" markers */
			lj = cJSON_CreateObject();
			origin[0] = l->origin;
			origin[1] = '\0';
			cJSON_AddStringToObject(lj, "origin", origin);
			text = git_utf8(l->content, l->content_len > 0 &&
			    l->content[l->content_len - 1] == '\n' ?
			    l->content_len - 1 : l->content_len);
			cJSON_AddStringToObject(lj, "text", text);
			free(text);
			cJSON_AddItemToArray(lines, lj);
		}
		cJSON_AddItemToArray(hunks, hj);
	}
	return f;
}

/*
 * A submodule entry (gitlink): libgit2 would open the nested repository to
 * tell whether it is dirty when it makes the patch, so the patch is made
 * here from the two commit ids alone, as git prints it.
 */
static int
delta_is_gitlink(const git_diff_delta *d)
{
	return d->old_file.mode == GIT_FILEMODE_COMMIT ||
	    d->new_file.mode == GIT_FILEMODE_COMMIT;
}

static int
gitlink_side(const git_diff_file *f, int absent, char *hex, size_t len)
{
	if (absent || f->mode != GIT_FILEMODE_COMMIT)
		return 0;
	git_oid_tostr(hex, len, &f->id);
	return 1;
}

static cJSON *
gitlink_json(const git_diff_delta *d)
{
	cJSON	*f, *hunks, *h, *lines, *l;
	char	 o[GIT_OID_HEXSZ + 1], n[GIT_OID_HEXSZ + 1], *t;
	int	 ho, hn;

	ho = gitlink_side(&d->old_file, d->status == GIT_DELTA_ADDED ||
	    d->status == GIT_DELTA_UNTRACKED, o, sizeof o);
	hn = gitlink_side(&d->new_file, d->status == GIT_DELTA_DELETED, n,
	    sizeof n);
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "path", d->new_file.path);
	cJSON_AddStringToObject(f, "old_path", d->old_file.path);
	cJSON_AddStringToObject(f, "status", git_status_name(d->status));
	cJSON_AddBoolToObject(f, "binary", 0);
	add_mode(f, "old_mode", d->status == GIT_DELTA_ADDED ||
	    d->status == GIT_DELTA_UNTRACKED ? 0 : d->old_file.mode);
	add_mode(f, "new_mode", d->status == GIT_DELTA_DELETED ? 0 :
	    d->new_file.mode);
	cJSON_AddNumberToObject(f, "additions", hn);
	cJSON_AddNumberToObject(f, "deletions", ho);
	hunks = cJSON_AddArrayToObject(f, "hunks");
	if (!ho && !hn)
		return f;
	h = cJSON_CreateObject();
	t = xprintf("@@ -%s +%s @@", ho ? "1" : "0,0", hn ? "1" : "0,0");
	cJSON_AddStringToObject(h, "header", t);
	free(t);
	cJSON_AddNumberToObject(h, "old_start", ho);
	cJSON_AddNumberToObject(h, "old_lines", ho);
	cJSON_AddNumberToObject(h, "new_start", hn);
	cJSON_AddNumberToObject(h, "new_lines", hn);
	lines = cJSON_AddArrayToObject(h, "lines");
	if (ho) {
		l = cJSON_CreateObject();
		cJSON_AddStringToObject(l, "origin", "-");
		t = xprintf("Subproject commit %s", o);
		cJSON_AddStringToObject(l, "text", t);
		free(t);
		cJSON_AddItemToArray(lines, l);
	}
	if (hn) {
		l = cJSON_CreateObject();
		cJSON_AddStringToObject(l, "origin", "+");
		t = xprintf("Subproject commit %s", n);
		cJSON_AddStringToObject(l, "text", t);
		free(t);
		cJSON_AddItemToArray(lines, l);
	}
	cJSON_AddItemToArray(hunks, h);
	return f;
}

/* The patch of a gitlink, as git diff prints it. */
static void
gitlink_print(const git_diff_delta *d, FILE *f, int colour)
{
	char	 o[GIT_OID_HEXSZ + 1], n[GIT_OID_HEXSZ + 1];
	int	 ho, hn;

	ho = gitlink_side(&d->old_file, d->status == GIT_DELTA_ADDED ||
	    d->status == GIT_DELTA_UNTRACKED, o, sizeof o);
	hn = gitlink_side(&d->new_file, d->status == GIT_DELTA_DELETED, n,
	    sizeof n);
	fprintf(f, "%sdiff --git a/%s b/%s\n", colour ? "\033[1m" : "",
	    d->old_file.path, d->new_file.path);
	if (!ho)
		fprintf(f, "new file mode %06o\n", (unsigned)d->new_file.mode);
	else if (!hn)
		fprintf(f, "deleted file mode %06o\n",
		    (unsigned)d->old_file.mode);
	fprintf(f, "index %.7s..%.7s\n", ho ? o : "0000000",
	    hn ? n : "0000000");
	fprintf(f, "--- %s%s\n+++ %s%s%s\n", ho ? "a/" : "/dev/null",
	    ho ? d->old_file.path : "", hn ? "b/" : "/dev/null",
	    hn ? d->new_file.path : "", colour ? "\033[m" : "");
	fprintf(f, "%s@@ -%s +%s @@%s\n", colour ? "\033[36m" : "",
	    ho ? "1" : "0,0", hn ? "1" : "0,0", colour ? "\033[m" : "");
	if (ho)
		fprintf(f, "%s-Subproject commit %s%s\n", colour ?
		    "\033[31m" : "", o, colour ? "\033[m" : "");
	if (hn)
		fprintf(f, "%s+Subproject commit %s%s\n", colour ?
		    "\033[32m" : "", n, colour ? "\033[m" : "");
}

/*
 * libgit2 gives a type change (file to link, link to file) no content; the
 * same diff without type changes has it as a delete and an add of the path,
 * whose hunks are the file's (as git diff prints it).
 */
static void
git_typechange_fill(cJSON *f, git2_diff *split)
{
	const git_diff_delta	*d;
	const char		*path = json_str(f, "path");
	git_patch		*p;
	cJSON			*pj, *hunks, *h;
	size_t			 i, n = git_diff_num_deltas(split);
	double			 add = 0, del = 0;

	hunks = cJSON_GetObjectItemCaseSensitive(f, "hunks");
	for (i = 0; i < n; i++) {
		d = git_diff_get_delta(split, i);
		if (strcmp(d->status == GIT_DELTA_DELETED ? d->old_file.path :
		    d->new_file.path, path) != 0)
			continue;
		if (git_patch_from_diff(&p, split, i) != 0 || p == NULL)
			continue;
		pj = git_patch_json(p);
		git_patch_free(p);
		if (json_bool(pj, "binary", 0))
			cJSON_ReplaceItemInObject(f, "binary",
			    cJSON_CreateBool(1));
		add += json_num(pj, "additions", 0);
		del += json_num(pj, "deletions", 0);
		while ((h = cJSON_DetachItemFromArray(cJSON_GetObjectItem(pj,
		    "hunks"), 0)) != NULL) {
			/* The delete first, as git prints it. */
			if (d->status == GIT_DELTA_DELETED)
				cJSON_InsertItemInArray(hunks, 0, h);
			else
				cJSON_AddItemToArray(hunks, h);
		}
		cJSON_Delete(pj);
	}
	cJSON_ReplaceItemInObject(f, "additions", cJSON_CreateNumber(add));
	cJSON_ReplaceItemInObject(f, "deletions", cJSON_CreateNumber(del));
}

static cJSON *
git_diff_impl(const char *ws, const char *base, char **cause)
{
	git_repository	*repo;
	git2_diff	*diff, *split = NULL;
	git_patch	*patch;
	git_commit	*c;
	cJSON		*out, *files, *f;
	size_t		 i, n;
	char		 hex[GIT_OID_HEXSZ + 1];

	if ((repo = git_open_workspace(ws, cause)) == NULL)
		return NULL;
	if (git_make_diff(repo, base, 1, &diff, &c, cause) != 0) {
		git_repository_free(repo);
		return NULL;
	}
	out = cJSON_CreateObject();
	git_oid_tostr(hex, sizeof hex, git_commit_id(c));
	cJSON_AddStringToObject(out, "base", hex);
	files = cJSON_AddArrayToObject(out, "files");
	n = git_diff_num_deltas(diff);
	for (i = 0; i < n; i++) {
		if (delta_is_gitlink(git_diff_get_delta(diff, i))) {
			cJSON_AddItemToArray(files,
			    gitlink_json(git_diff_get_delta(diff, i)));
			continue;
		}
		if (git_patch_from_diff(&patch, diff, i) != 0) {
			git_set_cause(cause, "diff of '%s': %s", ws);
			cJSON_Delete(out);
			out = NULL;
			break;
		}
		if (patch == NULL)
			continue;
		f = git_patch_json(patch);
		cJSON_AddItemToArray(files, f);
		if (git_patch_get_delta(patch)->status == GIT_DELTA_TYPECHANGE) {
			if (split == NULL && git_make_diff(repo, base, 0, &split,
			    NULL, cause) != 0) {
				git_patch_free(patch);
				cJSON_Delete(out);
				out = NULL;
				break;
			}
			git_typechange_fill(f, split);
		}
		git_patch_free(patch);
	}
	git_diff_free(split);
	git_commit_free(c);
	git_diff_free(diff);
	git_repository_free(repo);
	return out;
}

struct print_ctx {
	FILE	*f;
	int	 colour;
	int	 vis;	/* a terminal: the agent's bytes escaped */
};

/* Diff text out: raw into a pipe (git apply takes it), escaped on a tty. */
static void
git_print_text(struct print_ctx *pc, const char *s, size_t len)
{
	struct buf	 b = BUF_INIT;

	if (!pc->vis) {
		fwrite(s, 1, len, pc->f);
		return;
	}
	utf8_vis_add(&b, s, len, UTF8_VIS_TEXT);
	fwrite(buf_str(&b), 1, b.len, pc->f);
	buf_release(&b);
}

static int
git_print_cb(const git_diff_delta *d, const git_diff_hunk *h,
    const git_diff_line *l, void *arg)
{
	struct print_ctx	*pc = arg;
	const char		*on = "";

	if (pc->colour) {
		switch (l->origin) {
		case GIT_DIFF_LINE_FILE_HDR:
			on = "\033[1m";
			break;
		case GIT_DIFF_LINE_HUNK_HDR:
			on = "\033[36m";
			break;
		case GIT_DIFF_LINE_ADDITION:
			on = "\033[32m";
			break;
		case GIT_DIFF_LINE_DELETION:
			on = "\033[31m";
			break;
		}
	}
	fputs(on, pc->f);
	if (l->origin == GIT_DIFF_LINE_CONTEXT ||
	    l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION)
		fputc(l->origin, pc->f);
	if (*on != '\0' && l->content_len > 0 &&
	    l->content[l->content_len - 1] == '\n') {
		git_print_text(pc, l->content, l->content_len - 1);
		fputs("\033[m\n", pc->f);
	} else {
		git_print_text(pc, l->content, l->content_len);
		if (*on != '\0')
			fputs("\033[m", pc->f);
	}
	return 0;
}

/* how: 1 colour, 2 a terminal (the caller's, not the jail's pipe). */
static int
git_print_diff_impl(const char *ws, const char *base, FILE *f, int how,
    char **cause)
{
	git_repository		*repo;
	git2_diff		*diff;
	git_patch		*patch = NULL;
	struct print_ctx	 pc = { f, how & 1, how & 2 };
	size_t			 i, n;
	int			 rc = 0;

	if ((repo = git_open_workspace(ws, cause)) == NULL)
		return -1;
	if (git_make_diff(repo, base, 0, &diff, NULL, cause) != 0) {
		git_repository_free(repo);
		return -1;
	}
	/* A type change is delete + add; git prints the delete first. */
	n = git_diff_num_deltas(diff);
	for (i = 0; i < n && rc == 0; i++) {
		size_t			 k = i;
		const git_diff_delta	*d = git_diff_get_delta(diff, i), *e;

		if (delta_is_gitlink(d)) {
			gitlink_print(d, f, pc.colour);
			continue;
		}
		if (i + 1 < n && (e = git_diff_get_delta(diff, i + 1)) != NULL &&
		    e->status == GIT_DELTA_DELETED &&
		    d->status != GIT_DELTA_DELETED &&
		    strcmp(e->old_file.path, d->new_file.path) == 0) {
			git_patch	*p2;

			if (git_patch_from_diff(&p2, diff, i + 1) != 0 ||
			    git_patch_print(p2, git_print_cb, &pc) != 0)
				rc = -1;
			git_patch_free(p2);
			k = i++;
		}
		if (rc == 0 && (git_patch_from_diff(&patch, diff, k) != 0 ||
		    (patch != NULL && git_patch_print(patch, git_print_cb,
		    &pc) != 0)))
			rc = -1;
		git_patch_free(patch);
		patch = NULL;
	}
	if (rc != 0)
		git_set_cause(cause, "diff of '%s': %s", ws);
	git_diff_free(diff);
	git_repository_free(repo);
	return rc;
}

/* "a/{b => c}/d": a rename's name as git diff --stat prints it. */
static char *
stat_rename_name(const char *a, const char *b)
{
	size_t		 la = strlen(a), lb = strlen(b), pfx = 0, sfx = 0, i;
	const char	*oa, *ob;
	long		 ma, mb;

	for (i = 0; a[i] != '\0' && a[i] == b[i]; i++) {
		if (a[i] == '/')
			pfx = i + 1;
	}
	oa = a + la;
	ob = b + lb;
	while (oa >= a + pfx - (pfx ? 1 : 0) && ob >= b + pfx - (pfx ? 1 : 0) &&
	    *oa == *ob) {
		if (*oa == '/')
			sfx = la - (oa - a);
		if (oa == a || ob == b)
			break;
		oa--;
		ob--;
	}
	ma = (long)la - (long)pfx - (long)sfx;
	mb = (long)lb - (long)pfx - (long)sfx;
	if (ma < 0)
		ma = 0;
	if (mb < 0)
		mb = 0;
	if (pfx + sfx == 0)
		return xprintf("%s => %s", a, b);
	return xprintf("%.*s{%.*s => %.*s}%s", (int)pfx, a, (int)ma, a + pfx,
	    (int)mb, b + pfx, a + la - sfx);
}

/* A name for --stat: the agent's bytes escaped, widths measured after. */
static char *
stat_name(const git_diff_delta *d, const char *path)
{
	char	*a, *b, *name;

	if (d->status != GIT_DELTA_RENAMED)
		return utf8_vis(path, 0);
	a = utf8_vis(d->old_file.path, 0);
	b = utf8_vis(d->new_file.path, 0);
	name = stat_rename_name(a, b);
	free(a);
	free(b);
	return name;
}

struct stat_file {
	char		*name;
	size_t		 add, del;
	int		 binary;
	uint64_t	 old_size, new_size;
};

static int
decimal_width(size_t n)
{
	int	 w = 1;

	while (n >= 10) {
		n /= 10;
		w++;
	}
	return w;
}

static size_t
scale_linear(size_t it, size_t width, size_t max)
{
	if (it == 0)
		return 0;
	return 1 + (it * (width - 1) / max);
}

/*
 * git diff --stat, line for line (git's diff.c show_stats): names, counts
 * and a graph scaled to width; a file that changed type (one delete and one
 * add of the same path in this diff) is one line, as in git.
 */
static int
git_print_stat_impl(const char *ws, const char *base, FILE *f, int width,
    char **cause)
{
	git_repository		*repo;
	git2_diff		*diff;
	git_patch		*patch;
	const git_diff_delta	*d;
	struct stat_file	*sf = NULL, *x;
	size_t			 n, i, nf = 0, add, del, max_change = 0;
	size_t			 max_len = 0, total_add = 0, total_del = 0;
	int			 number_width, name_width, graph_width, bin = 0;
	const char		*path;
	char			*name;

	if ((repo = git_open_workspace(ws, cause)) == NULL)
		return -1;
	if (git_make_diff(repo, base, 0, &diff, NULL, cause) != 0) {
		git_repository_free(repo);
		return -1;
	}
	n = git_diff_num_deltas(diff);
	sf = xcalloc(n + 1, sizeof *sf);
	for (i = 0; i < n; i++) {
		d = git_diff_get_delta(diff, i);
		patch = NULL;
		if (delta_is_gitlink(d)) {
			add = d->status != GIT_DELTA_DELETED;
			del = d->status != GIT_DELTA_ADDED &&
			    d->status != GIT_DELTA_UNTRACKED;
		} else {
			if (git_patch_from_diff(&patch, diff, i) != 0 ||
			    patch == NULL)
				continue;
			git_patch_line_stats(NULL, &add, &del, patch);
		}
		path = d->new_file.path != NULL ? d->new_file.path :
		    d->old_file.path;
		if (nf > 0 && strcmp(sf[nf - 1].name, path) == 0 &&
		    !sf[nf - 1].binary && !(d->flags & GIT_DIFF_FLAG_BINARY)) {
			x = &sf[nf - 1];	/* the add half of a type change */
		} else {
			x = &sf[nf++];
			x->name = stat_name(d, path);
		}
		if (d->flags & GIT_DIFF_FLAG_BINARY) {
			x->binary = bin = 1;
			x->old_size = d->status == GIT_DELTA_ADDED ||
			    d->status == GIT_DELTA_UNTRACKED ? 0 :
			    d->old_file.size;
			x->new_size = d->status == GIT_DELTA_DELETED ? 0 :
			    d->new_file.size;
		} else {
			x->add += add;
			x->del += del;
		}
		git_patch_free(patch);
	}
	for (i = 0; i < nf; i++) {
		x = &sf[i];
		if (strlen(x->name) > max_len)
			max_len = strlen(x->name);
		if (!x->binary && x->add + x->del > max_change)
			max_change = x->add + x->del;
		total_add += x->add;
		total_del += x->del;
	}
	if (nf == 0)
		goto done;

	number_width = decimal_width(max_change);
	if (bin && number_width < 3)
		number_width = 3;	/* "Bin" */
	if (width < 16 + 6 + number_width)
		width = 16 + 6 + number_width;
	graph_width = (int)max_change;
	name_width = (int)max_len;
	if (name_width + number_width + 6 + graph_width > width) {
		if (graph_width > width * 3 / 8 - number_width - 6) {
			graph_width = width * 3 / 8 - number_width - 6;
			if (graph_width < 6)
				graph_width = 6;
		}
		if (name_width > width - number_width - 6 - graph_width)
			name_width = width - number_width - 6 - graph_width;
		else
			graph_width = width - number_width - 6 - name_width;
	}
	for (i = 0; i < nf; i++) {
		x = &sf[i];
		name = x->name;
		if ((int)strlen(name) > name_width) {
			const char	*tail = name + strlen(name) -
			    (name_width - 3), *slash = strchr(tail, '/');

			if (slash != NULL)
				tail = slash;
			fprintf(f, " ...%-*s | ", name_width - 3, tail);
		} else
			fprintf(f, " %-*s | ", name_width, name);
		if (x->binary) {
			fprintf(f, "%*s %llu -> %llu bytes\n", number_width,
			    "Bin", (unsigned long long)x->old_size,
			    (unsigned long long)x->new_size);
			continue;
		}
		add = x->add;
		del = x->del;
		fprintf(f, "%*zu%s", number_width, add + del,
		    add + del != 0 ? " " : "");
		if ((size_t)graph_width <= max_change && max_change > 0) {
			size_t	total = scale_linear(add + del, graph_width,
			    max_change);

			if (total < 2 && add != 0 && del != 0)
				total = 2;
			if (add < del) {
				add = scale_linear(add, graph_width, max_change);
				del = total - add;
			} else {
				del = scale_linear(del, graph_width, max_change);
				add = total - del;
			}
		}
		for (; add > 0; add--)
			fputc('+', f);
		for (; del > 0; del--)
			fputc('-', f);
		fputc('\n', f);
	}
	fprintf(f, " %zu file%s changed", nf, nf == 1 ? "" : "s");
	if (total_add != 0 || total_del == 0)
		fprintf(f, ", %zu insertion%s(+)", total_add,
		    total_add == 1 ? "" : "s");
	if (total_del != 0 || total_add == 0)
		fprintf(f, ", %zu deletion%s(-)", total_del,
		    total_del == 1 ? "" : "s");
	fputc('\n', f);
done:
	for (i = 0; i < nf; i++)
		free(sf[i].name);
	free(sf);
	git_diff_free(diff);
	git_repository_free(repo);
	return 0;
}

/* --- revert --- */

/* The patch of path (new or old name) in the workspace's diff. */
static int
git_find_patch(git_repository *repo, const char *base, const char *path,
    git2_diff **diffp, git_patch **patchp, git_commit **basep, char **cause)
{
	const git_diff_delta	*d;
	size_t			 i, n;

	if (git_make_diff(repo, base, 1, diffp, basep, cause) != 0)
		return -1;
	n = git_diff_num_deltas(*diffp);
	for (i = 0; i < n; i++) {
		d = git_diff_get_delta(*diffp, i);
		if ((d->new_file.path != NULL &&
		    strcmp(d->new_file.path, path) == 0) ||
		    (d->status == GIT_DELTA_DELETED &&
		    strcmp(d->old_file.path, path) == 0)) {
			if (git_patch_from_diff(patchp, *diffp, i) != 0 ||
			    *patchp == NULL) {
				git_set_cause(cause, "diff of '%s': %s", path);
				break;
			}
			return 0;
		}
	}
	if (i == n)
		*cause = xprintf("path '%s': no change to revert", path);
	git_diff_free(*diffp);
	git_commit_free(*basep);
	return -1;
}

static int
git_revert_hunk_impl(const char *ws, const char *base, const char *path,
    int hunk_index, char **cause)
{
	git_repository		*repo;
	git2_diff		*diff;
	git_patch		*patch;
	git_commit		*c;
	const git_diff_hunk	*h;
	const git_diff_line	*l;
	const git_diff_delta	*d;
	git_index		*idx;
	struct buf		 oldside = BUF_INIT, newside = BUF_INIT, out = BUF_INIT;
	char			*data = NULL;
	size_t			 len, nl, j, line, off, start;
	mode_t			 mode;
	int			 rc = -1;

	if ((repo = git_open_workspace(ws, cause)) == NULL)
		return -1;
	if (git_find_patch(repo, base, path, &diff, &patch, &c, cause) != 0) {
		git_repository_free(repo);
		return -1;
	}
	d = git_patch_get_delta(patch);
	if (d->flags & GIT_DIFF_FLAG_BINARY) {
		*cause = xprintf("path '%s': a binary file has no hunks "
		    "(revert the file)", path);
		goto out;
	}
	if (d->status == GIT_DELTA_DELETED ||
	    d->status == GIT_DELTA_TYPECHANGE) {
		*cause = xprintf("path '%s': %s; revert the whole file", path,
		    git_status_name(d->status));
		goto out;
	}
	if (hunk_index < 0 || (size_t)hunk_index >= git_patch_num_hunks(patch) ||
	    git_patch_get_hunk(&h, &nl, patch, hunk_index) != 0) {
		*cause = xprintf("path '%s': no hunk %d (it has %zu)", path,
		    hunk_index, git_patch_num_hunks(patch));
		goto out;
	}
	for (j = 0; j < nl; j++) {
		if (git_patch_get_line_in_hunk(&l, patch, hunk_index, j) != 0)
			break;
		if (l->origin == ' ' || l->origin == '-')
			buf_add(&oldside, l->content, l->content_len);
		if (l->origin == ' ' || l->origin == '+')
			buf_add(&newside, l->content, l->content_len);
	}
	if ((data = ws_read(ws, path, &len, &mode, cause)) == NULL)
		goto out;
	/* Byte offset of the hunk's first new line. */
	start = h->new_lines > 0 ? (size_t)h->new_start - 1 :
	    (size_t)h->new_start;
	for (off = 0, line = 0; line < start && off < len; off++) {
		if (data[off] == '\n')
			line++;
	}
	if (line != start || len - off < newside.len ||
	    memcmp(data + off, newside.data == NULL ? "" : newside.data,
	    newside.len) != 0) {
		*cause = xprintf("path '%s': changed since the diff was "
		    "taken; look again", path);
		goto out;
	}
	buf_add(&out, data, off);
	buf_add(&out, buf_str(&oldside), oldside.len);
	buf_add(&out, data + off + newside.len, len - off - newside.len);
	if (out.len == 0 && (d->status == GIT_DELTA_ADDED ||
	    d->status == GIT_DELTA_UNTRACKED)) {
		/* The whole of a new file: it goes, as with revert-file. */
		if (ws_remove(ws, path, cause) != 0)
			goto out;
		if (git_repository_index(&idx, repo) == 0) {
			git_index_remove_bypath(idx, path);
			git_index_write(idx);
			git_index_free(idx);
		}
	} else if (ws_write(ws, path, buf_str(&out), out.len, mode,
	    cause) != 0)
		goto out;
	rc = 0;
out:
	free(data);
	buf_release(&oldside);
	buf_release(&newside);
	buf_release(&out);
	git_patch_free(patch);
	git_diff_free(diff);
	git_commit_free(c);
	git_repository_free(repo);
	return rc;
}

/* Put path back as in tree (or remove it), in the files and the index. */
static int
git_restore_path(git_repository *repo, git_index *idx, git_tree *tree,
    const char *ws, const char *path, char **cause)
{
	git_tree_entry	*te;
	git_blob	*blob;
	git_index_entry	 ie;
	uint32_t	 mode;

	if (git_tree_entry_bypath(&te, tree, path) != 0) {
		if (ws_remove(ws, path, cause) != 0)
			return -1;
		git_index_remove_bypath(idx, path);
		return 0;
	}
	mode = git_tree_entry_filemode(te);
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(te)) != 0) {
		git_set_cause(cause, "path '%s': %s", path);
		git_tree_entry_free(te);
		return -1;
	}
	if (ws_write(ws, path, git_blob_rawcontent(blob),
	    git_blob_rawsize(blob), mode == GIT_FILEMODE_LINK ? S_IFLNK :
	    mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644, cause) != 0) {
		git_blob_free(blob);
		git_tree_entry_free(te);
		return -1;
	}
	memset(&ie, 0, sizeof ie);
	ie.mode = mode;
	ie.path = path;
	git_oid_cpy(&ie.id, git_tree_entry_id(te));
	ie.file_size = (uint32_t)git_blob_rawsize(blob);
	git_index_add(idx, &ie);
	git_blob_free(blob);
	git_tree_entry_free(te);
	return 0;
}

static int
git_revert_file_impl(const char *ws, const char *base, const char *path,
    char **cause)
{
	git_repository		*repo;
	git2_diff		*diff;
	git_patch		*patch;
	git_commit		*c;
	git_tree		*tree = NULL;
	git_index		*idx = NULL;
	const git_diff_delta	*d;
	char			*lock;
	int			 rc = -1;

	if ((repo = git_open_workspace(ws, cause)) == NULL)
		return -1;
	if (git_find_patch(repo, base, path, &diff, &patch, &c, cause) != 0) {
		git_repository_free(repo);
		return -1;
	}
	d = git_patch_get_delta(patch);
	lock = paths_join(git_repository_path(repo), "index.lock");
	if (access(lock, F_OK) == 0) {
		/* Before any file changes, not after. */
		*cause = xprintf("workspace '%s': the index is locked (git in "
		    "the sandbox is using it; try again, or remove "
		    ".git/index.lock if nothing is)", ws);
		free(lock);
		goto out;
	}
	free(lock);
	if (git_commit_tree(&tree, c) != 0 ||
	    git_repository_index(&idx, repo) != 0) {
		git_set_cause(cause, "workspace '%s': %s", ws);
		goto out;
	}
	if (d->new_file.path != NULL && strcmp(d->new_file.path,
	    d->old_file.path) != 0 && git_restore_path(repo, idx, tree, ws,
	    d->new_file.path, cause) != 0)
		goto out;
	if (git_restore_path(repo, idx, tree, ws, d->old_file.path,
	    cause) != 0)
		goto out;
	if (git_index_write(idx) != 0) {
		git_set_cause(cause, "workspace '%s': index: %s", ws);
		goto out;
	}
	rc = 0;
out:
	git_index_free(idx);
	git_tree_free(tree);
	git_patch_free(patch);
	git_diff_free(diff);
	git_commit_free(c);
	git_repository_free(repo);
	return rc;
}

char *
git_hunk_quote(const cJSON *file, int hunk_index, const char *comment)
{
	const cJSON	*hunks, *h, *lines, *l;
	struct buf	 b = BUF_INIT;
	const char	*path = json_str(file, "path");
	int		 start, count;

	hunks = cJSON_GetObjectItemCaseSensitive(file, "hunks");
	if (hunk_index < 0 || (h = cJSON_GetArrayItem(hunks,
	    hunk_index)) == NULL)
		return NULL;
	start = (int)json_num(h, "new_start", 0);
	count = (int)json_num(h, "new_lines", 0);
	buf_addf(&b, "About %s, lines %d-%d:\n", path != NULL ? path : "?",
	    start, count > 0 ? start + count - 1 : start);
	buf_addf(&b, "> %s\n", json_str(h, "header") != NULL ?
	    json_str(h, "header") : "@@");
	lines = cJSON_GetObjectItemCaseSensitive(h, "lines");
	cJSON_ArrayForEach(l, lines) {
		buf_addf(&b, "> %s%s\n", json_str(l, "origin") != NULL ?
		    json_str(l, "origin") : " ", json_str(l, "text") != NULL ?
		    json_str(l, "text") : "");
	}
	if (comment != NULL && *comment != '\0')
		buf_addf(&b, "\n%s\n", comment);
	return buf_detach(&b, NULL);
}

/* --- commit and push --- */

int
git_parse_author(const char *s, char **name, char **email)
{
	const char	*lt, *gt;
	size_t		 n;

	if ((lt = strchr(s, '<')) == NULL || (gt = strchr(lt, '>')) == NULL ||
	    gt[1] != '\0' || gt == lt + 1)
		return -1;
	n = lt - s;
	while (n > 0 && s[n - 1] == ' ')
		n--;
	if (n == 0)
		return -1;
	*name = xstrndup(s, n);
	*email = xstrndup(lt + 1, gt - lt - 1);
	return 0;
}

/* The host user's identity from their global git config only. */
static int
git_global_identity(char **name, char **email)
{
	const char	*home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
	char		*paths[2];
	git_config	*cfg;
	git_buf		 n = GIT_BUF_INIT, e = GIT_BUF_INIT;
	size_t		 i;
	int		 found = 0;

	git_lib_setup();
	if (home == NULL)
		return -1;
	paths[0] = xprintf("%s/.gitconfig", home);
	paths[1] = xdg != NULL && *xdg != '\0' ? xprintf("%s/git/config",
	    xdg) : xprintf("%s/.config/git/config", home);
	for (i = 0; i < 2 && !found; i++) {
		if (access(paths[i], R_OK) != 0 ||
		    git_config_open_ondisk(&cfg, paths[i]) != 0)
			continue;
		if (git_config_get_string_buf(&n, cfg, "user.name") == 0 &&
		    git_config_get_string_buf(&e, cfg, "user.email") == 0 &&
		    n.size > 0) {
			*name = xstrdup(n.ptr);
			*email = xstrdup(e.ptr);
			found = 1;
		}
		git_buf_dispose(&n);
		git_buf_dispose(&e);
		git_config_free(cfg);
	}
	free(paths[0]);
	free(paths[1]);
	return found ? 0 : -1;
}

static int
git_has_changes_impl(const char *ws, char **cause)
{
	git_repository		*repo;
	git_status_options	 so = GIT_STATUS_OPTIONS_INIT;
	git_status_list		*list;
	int			 n;

	if ((repo = git_open_workspace(ws, cause)) == NULL)
		return -1;
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED|
	    GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS|
	    GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (git_status_list_new(&list, repo, &so) != 0) {
		git_set_cause(cause, "workspace '%s': %s", ws);
		git_repository_free(repo);
		return -1;
	}
	n = git_status_list_entrycount(list) > 0;
	git_status_list_free(list);
	git_repository_free(repo);
	return n;
}

/* A nested repository shows as "dir/": never added (nor entered). */
static int
git_add_cb(const char *path, const char *spec, void *arg)
{
	size_t	 n = strlen(path);

	return n > 0 && path[n - 1] == '/' ? 1 : 0;
}

static int
git_commit_all_impl(const char *ws, const char *base, const char *message,
    const char *author, char **commit, char **cause)
{
	git_repository	*repo;
	git_index	*idx = NULL;
	git_commit	*basec = NULL, *headc = NULL, *parent;
	git_tree	*tree = NULL;
	git_reference	*head = NULL, *ref = NULL;
	git_signature	*sig = NULL;
	git_oid		 toid, coid;
	const git_oid	*hoid;
	char		*name = NULL, *email = NULL, hex[GIT_OID_HEXSZ + 1];
	const git_commit *parents[1];
	int		 rc = -1;

	if (git_parse_author(author, &name, &email) != 0) {
		*cause = xprintf("author '%s': expected 'Name <email>'",
		    author);
		return -1;
	}
	if ((repo = git_open_workspace(ws, cause)) == NULL)
		goto out;
	if (git_lookup_commit(repo, base, &basec, cause) != 0)
		goto out;
	parent = basec;
	if (git_repository_head(&head, repo) == 0 &&
	    (hoid = git_reference_target(head)) != NULL &&
	    git_commit_lookup(&headc, repo, hoid) == 0 &&
	    (git_oid_equal(hoid, git_commit_id(basec)) ||
	    git_graph_descendant_of(repo, hoid, git_commit_id(basec)) == 1))
		parent = headc;
	else if (head != NULL)
		log_warnx("workspace '%s': HEAD does not descend from the base "
		    "commit; committing on the base commit", ws);
	if (git_repository_index(&idx, repo) != 0 ||
	    git_index_add_all(idx, NULL, GIT_INDEX_ADD_DEFAULT, git_add_cb,
	    NULL) != 0 ||
	    git_index_update_all(idx, NULL, NULL, NULL) != 0 ||
	    git_index_write_tree(&toid, idx) != 0) {
		git_set_cause(cause, "workspace '%s': staging: %s", ws);
		goto out;
	}
	if (git_oid_equal(&toid, git_commit_tree_id(parent))) {
		git_oid_tostr(hex, sizeof hex, git_commit_id(parent));
		*commit = xstrdup(hex);
		rc = 0;
		goto out;
	}
	/* The index first: if it is locked, nothing has happened yet. */
	if (git_index_write(idx) != 0) {
		git_set_cause(cause, "workspace '%s': index: %s", ws);
		goto out;
	}
	parents[0] = parent;
	if (git_tree_lookup(&tree, repo, &toid) != 0 ||
	    git_signature_now(&sig, name, email) != 0 ||
	    git_commit_create(&coid, repo, NULL, sig, sig, NULL, message,
	    tree, 1, parents) != 0) {
		git_set_cause(cause, "workspace '%s': commit: %s", ws);
		goto out;
	}
	/* Move HEAD's branch (or detached HEAD) to the new commit. */
	if (head != NULL && git_reference_type(head) == GIT_REFERENCE_DIRECT &&
	    !git_repository_head_detached(repo) &&
	    git_reference_set_target(&ref, head, &coid, "holt commit") == 0)
		;
	else if (git_repository_head_unborn(repo) != 1 &&
	    !git_repository_head_detached(repo) && head != NULL)
		git_reference_create(&ref, repo, git_reference_name(head),
		    &coid, 1, "holt commit");
	else
		git_repository_set_head_detached(repo, &coid);
	git_oid_tostr(hex, sizeof hex, &coid);
	*commit = xstrdup(hex);
	rc = 1;
out:
	free(name);
	free(email);
	git_signature_free(sig);
	git_tree_free(tree);
	git_reference_free(ref);
	git_reference_free(head);
	git_commit_free(headc);
	git_commit_free(basec);
	git_index_free(idx);
	git_repository_free(repo);
	return rc;
}

static int
git_push_update_cb(const char *refname, const char *status, void *arg)
{
	struct git_cred	*gc = arg;

	if (status != NULL && gc->rejected == NULL)
		gc->rejected = xstrdup(status);
	return 0;
}

static int
git_push_branch_impl(const char *ws, const char *commit, const char *branch,
    const char *url, const char *token, char **cause)
{
	git_repository			*repo;
	git_remote			*remote = NULL;
	git_remote_create_options	 ro = GIT_REMOTE_CREATE_OPTIONS_INIT;
	git_push_options		 po = GIT_PUSH_OPTIONS_INIT;
	git_reference			*ref = NULL, *nref = NULL;
	git_commit			*c = NULL;
	struct git_cred			 gc;
	git_strarray			 specs;
	char				*refname, *spec;
	char				*clean = NULL, *password = NULL;
	const git_oid			*old;
	int				 rc = -1, err;

	memset(&gc, 0, sizeof gc);
	refname = xprintf("refs/heads/%s", branch);
	spec = xprintf("%s:%s", refname, refname);
	if (!git_reference_is_valid_name(refname)) {
		*cause = xprintf("branch '%s': not a valid branch name", branch);
		goto out_free;
	}
	if ((repo = git_open_workspace(ws, cause)) == NULL)
		goto out_free;
	if (git_lookup_commit(repo, commit, &c, cause) != 0)
		goto out;
	/* The local branch: create, or move forward if it is ours. */
	if (git_reference_lookup(&ref, repo, refname) == 0) {
		old = git_reference_target(ref);
		if (old == NULL || (!git_oid_equal(old, git_commit_id(c)) &&
		    git_graph_descendant_of(repo, git_commit_id(c), old) != 1)) {
			*cause = xprintf("branch '%s' exists in the workspace "
			    "with other commits (not an ancestor of this one); "
			    "choose another with --branch", branch);
			goto out;
		}
	}
	if (git_reference_create(&nref, repo, refname, git_commit_id(c), 1,
	    "holt pr") != 0) {
		git_set_cause(cause, "branch '%s': %s", branch);
		goto out;
	}

	/* user:password@ in the URL: the password is a token, kept out. */
	clean = git_url_strip(url, &password);
	url = clean;
	if (token == NULL)
		token = password;
	ro.repository = repo;
	ro.name = NULL;		/* in memory only, nothing from the config */
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF|
	    GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	if (git_remote_create_with_opts(&remote, url, &ro) != 0) {
		git_set_cause(cause, "remote '%s': %s", url);
		goto out;
	}
	gc.token = token;
	gc.host = url_host(url);
	po.callbacks.credentials = git_cred_cb;
	po.callbacks.push_update_reference = git_push_update_cb;
	po.callbacks.payload = &gc;
	po.follow_redirects = GIT_REMOTE_REDIRECT_INITIAL;
	specs.strings = &spec;
	specs.count = 1;
	err = git_remote_push(remote, &specs, &po);
	if (err == GIT_ENONFASTFORWARD || (gc.rejected != NULL &&
	    (strstr(gc.rejected, "fast-forward") != NULL ||
	    strstr(gc.rejected, "fetch first") != NULL))) {
		*cause = xprintf("push of branch '%s' to '%s' rejected: the "
		    "remote branch has commits this one does not have "
		    "(non-fast-forward); the commit is kept in the workspace, "
		    "push it to another branch with --branch", branch, url);
		goto out;
	}
	if (err != 0) {
		*cause = git_net_cause("push to", url, &gc);
		goto out;
	}
	if (gc.rejected != NULL) {
		*cause = xprintf("push of branch '%s' to '%s' rejected by the "
		    "server: %s", branch, url, gc.rejected);
		goto out;
	}
	rc = 0;
out:
	git_remote_free(remote);
	git_reference_free(ref);
	git_reference_free(nref);
	git_commit_free(c);
	git_repository_free(repo);
out_free:
	free(gc.host);
	free(gc.rejected);
	free(refname);
	free(spec);
	free(clean);
	if (password != NULL) {
		explicit_bzero(password, strlen(password));
		free(password);
	}
	return rc;
}

struct writepack_ctx {
	git_odb_writepack	*wp;
	git_indexer_progress	 st;
};

static int
git_pack_feed(void *buf, size_t size, void *arg)
{
	struct writepack_ctx	*w = arg;

	return w->wp->append(w->wp, buf, size, &w->st);
}

/*
 * Push into a local repository (the one the session came from). libgit2
 * cannot push into a non-bare repository, so the objects go over as a pack
 * built from the workspace and written into the target's object database,
 * and the branch is set there. The target's HEAD, index and files are not
 * touched; its checked-out branch is refused, as git's receive-pack does.
 * It runs in the push's jail (git_push_local, below), where the target's
 * git directory (gitdir, path is for messages) is all there is of it.
 */
static int
git_push_local_impl(const char *ws, const char *commit, const char *branch,
    const char *path, const char *gitdir, char **cause)
{
	git_repository		*repo = NULL, *dst = NULL;
	git_commit		*c = NULL;
	git_revwalk		*walk = NULL;
	git_packbuilder		*pb = NULL;
	git_odb			*odb = NULL;
	git_reference		*ref = NULL, *nref = NULL, *head = NULL;
	git_strarray		 refs = { NULL, 0 };
	struct writepack_ctx	 w;
	git_oid			 oid;
	char			*refname;
	const git_oid		*old;
	size_t			 i;
	int			 rc = -1;

	memset(&w, 0, sizeof w);
	refname = xprintf("refs/heads/%s", branch);
	if (!git_reference_is_valid_name(refname)) {
		*cause = xprintf("branch '%s': not a valid branch name", branch);
		goto out;
	}
	if ((repo = git_open_workspace(ws, cause)) == NULL)
		goto out;
	if (git_lookup_commit(repo, commit, &c, cause) != 0)
		goto out;
	if (git_repository_open_ext(&dst, gitdir,
	    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0) {
		git_set_cause(cause, "repository '%s': %s", path);
		goto out;
	}
	if (git_repository_head(&head, dst) == 0 &&
	    strcmp(git_reference_name(head), refname) == 0 &&
	    !git_repository_is_bare(dst)) {
		*cause = xprintf("branch '%s' is checked out in '%s' (refused, "
		    "its files would not match); choose another with --branch",
		    branch, path);
		goto out;
	}
	if (git_reference_lookup(&ref, dst, refname) == 0 &&
	    (old = git_reference_target(ref)) != NULL &&
	    !git_oid_equal(old, git_commit_id(c))) {
		if (git_graph_descendant_of(repo, git_commit_id(c), old) != 1) {
			*cause = xprintf("push of branch '%s' to '%s' rejected: "
			    "the branch there has commits this one does not "
			    "have (non-fast-forward); the commit is kept in the "
			    "workspace, push it to another branch with --branch",
			    branch, path);
			goto out;
		}
	}

	/* Pack what the target lacks: the commits down to what it has. */
	if (git_revwalk_new(&walk, repo) != 0 ||
	    git_revwalk_push(walk, git_commit_id(c)) != 0 ||
	    git_reference_list(&refs, dst) != 0)
		goto gerr;
	for (i = 0; i < refs.count; i++) {
		git_commit	*have;

		if (git_reference_name_to_id(&oid, dst, refs.strings[i]) == 0 &&
		    git_commit_lookup(&have, repo, &oid) == 0) {
			git_revwalk_hide(walk, &oid);
			git_commit_free(have);
		}
	}
	if (git_packbuilder_new(&pb, repo) != 0 ||
	    git_packbuilder_insert_walk(pb, walk) != 0 ||
	    git_repository_odb(&odb, dst) != 0 ||
	    git_odb_write_pack(&w.wp, odb, NULL, NULL) != 0 ||
	    git_packbuilder_foreach(pb, git_pack_feed, &w) != 0 ||
	    w.wp->commit(w.wp, &w.st) != 0)
		goto gerr;
	if (git_reference_create(&nref, dst, refname, git_commit_id(c), 1,
	    "holt pr --local") != 0)
		goto gerr;
	rc = 0;
	goto out;
gerr:
	git_set_cause(cause, "push to '%s': %s", path);
out:
	if (w.wp != NULL)
		w.wp->free(w.wp);
	git_strarray_dispose(&refs);
	git_odb_free(odb);
	git_packbuilder_free(pb);
	git_revwalk_free(walk);
	git_reference_free(head);
	git_reference_free(ref);
	git_reference_free(nref);
	git_commit_free(c);
	git_repository_free(dst);
	git_repository_free(repo);
	free(refname);
	return rc;
}

/* --- the jail: libgit2 confined to the workspace --- */

/*
 * libgit2 resolves some workspace paths with realpath() (attribute lookup
 * does, for every file of a diff), which follows a symlink the agent planted
 * out of the workspace. So every operation on the work tree runs in a child
 * process in its own user and mount namespaces, chrooted into the workspace:
 * there, "/" is the workspace and every symlink resolves inside it, as in
 * the sandbox. Costs a fork (about a millisecond). Where user namespaces are
 * not allowed, the child goes on unconfined and says so once (the checks of
 * git_open_workspace and the O_NOFOLLOW writes still hold).
 */
enum git_jail_op {
	JAIL_DIFF_JSON,
	JAIL_PRINT_DIFF,
	JAIL_PRINT_STAT,
	JAIL_REVERT_HUNK,
	JAIL_REVERT_FILE,
	JAIL_HAS_CHANGES,
	JAIL_COMMIT,
	JAIL_PUSH,		/* its own jail: git_push_jail_enter */
	JAIL_PUSH_LOCAL,	/* the same, with the target's git directory */
	JAIL_IMPORT		/* not confined: network, and no workspace yet */
};

struct git_jail_call {
	enum git_jail_op	 op;
	const char		*base;
	const char		*path;
	const char		*message;
	const char		*author;
	const char		*commit;
	const char		*branch;
	const char		*url;
	const char		*token;
	const char		*gitdir;	/* push --local: the target's */
	const char		*commondir;
	int			 n;
	int			 progress;	/* import: report progress */
};

/* Set once the jail failed half-way: later children do not try. */
static int	 git_jail_broken;

/*
 * Into a new user and mount namespace, in which we are who we were: 1 if
 * the kernel says no (go on unconfined), -1 if it failed half-way. A
 * workspace owned by another uid while we are root (a sandbox's own host
 * uid, see git_ws_give_back) needs that uid mapped too, or root inside
 * could not even enter it; only a process left outside may write such a
 * map, so a child of ours, still on the host, writes it for us.
 */
static int
jail_unshare(const char *ws)
{
	struct stat	 st;
	char		 map[128], path[64], c;
	uid_t		 uid = geteuid();
	gid_t		 gid = getegid();
	pid_t		 pid, self = getpid();
	int		 sync[2], status, ok;

	if (uid != 0 || stat(ws, &st) != 0 || st.st_uid == 0) {
		if (unshare(CLONE_NEWUSER|CLONE_NEWNS) != 0)
			return 1;
		file_write_str("/proc/self/setgroups", "deny");
		snprintf(map, sizeof map, "%lu %lu 1", (unsigned long)uid,
		    (unsigned long)uid);
		if (file_write_str("/proc/self/uid_map", map) != 0)
			return -1;
		snprintf(map, sizeof map, "%lu %lu 1", (unsigned long)gid,
		    (unsigned long)gid);
		if (file_write_str("/proc/self/gid_map", map) != 0)
			return -1;
		return 0;
	}
	if (pipe2(sync, O_CLOEXEC) != 0 || (pid = fork()) == -1)
		return 1;
	if (pid == 0) {
		close(sync[1]);
		if (read(sync[0], &c, 1) != 1)
			_exit(1);
		snprintf(map, sizeof map, "0 0 1\n%lu %lu 1\n",
		    (unsigned long)st.st_uid, (unsigned long)st.st_uid);
		snprintf(path, sizeof path, "/proc/%ld/uid_map", (long)self);
		ok = file_write_str(path, map) == 0;
		snprintf(map, sizeof map, "0 0 1\n%lu %lu 1\n",
		    (unsigned long)st.st_gid, (unsigned long)st.st_gid);
		snprintf(path, sizeof path, "/proc/%ld/gid_map", (long)self);
		ok = ok && file_write_str(path, map) == 0;
		_exit(ok ? 0 : 1);
	}
	close(sync[0]);
	ok = unshare(CLONE_NEWUSER|CLONE_NEWNS) == 0;
	if (write(sync[1], ok ? "y" : "n", 1) != 1)
		ok = 0;
	close(sync[1]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (!ok)
		return 1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/*
 * 0: confined, 1: not possible here (go on unconfined), -1: failed after
 * the namespaces were made (some LSMs allow unshare but not its use), so
 * this process cannot go on; the parent retries unconfined.
 */
static int
git_jail_enter(const char *ws)
{
	int	 r;

	if (git_jail_broken || getenv("HOLT_GIT_NO_JAIL") != NULL)
		return 1;
	if ((r = jail_unshare(ws)) != 0)
		return r;
	if (chroot(ws) != 0 || chdir("/") != 0)
		return -1;
	return 0;
}

/*
 * The push's jail. A push needs more of the host than the work-tree jail
 * gives: the system's libraries and /etc (name resolution, CA certificates,
 * Kerberos), a few devices, and for ssh the user's agent socket and
 * ~/.ssh/known_hosts. So the child builds a root of its own: a tmpfs,
 * mounted in its private mount namespace, on which exactly these are bound
 * (read-only but for the workspace, which keeps its host path so messages
 * name it as the user knows it), then chroots into it. The rest of the
 * host (the user's home, other repositories, holt's files) does not exist
 * there, so whatever the workspace's repository names, libgit2 cannot read
 * it. It is what the sandbox sees of the host, and less.
 */
struct jail_bind {
	const char	*src;
	int		 rw;
};

/* Flags a bind mount keeps when remounted read-only in a user namespace. */
static unsigned long
jail_locked_flags(const char *path)
{
	struct statvfs	 sv;
	unsigned long	 f = 0;

	if (statvfs(path, &sv) != 0)
		return 0;
	if (sv.f_flag & ST_NOSUID)
		f |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV)
		f |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		f |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		f |= MS_RELATIME;
	return f;
}

/* Bind src at the same path under root: 0 done, -1 failed. */
static int
jail_bind(const char *root, const char *src, int rw)
{
	struct stat	 sb;
	char		*dst, *slash;
	int		 fd;

	if (stat(src, &sb) != 0)
		return -1;
	dst = xprintf("%s%s", root, src);
	slash = strrchr(dst, '/');
	*slash = '\0';
	if (file_mkdir_p(dst, 0755) != 0) {
		free(dst);
		return -1;
	}
	*slash = '/';
	if (S_ISDIR(sb.st_mode)) {
		if (mkdir(dst, 0755) != 0 && errno != EEXIST)
			goto fail;
	} else {
		fd = open(dst, O_WRONLY|O_CREAT|O_NOFOLLOW|O_CLOEXEC, 0600);
		if (fd == -1)
			goto fail;
		close(fd);
	}
	if (mount(src, dst, NULL, MS_BIND|MS_REC, NULL) != 0)
		goto fail;
	if (!rw && mount(NULL, dst, NULL, MS_REMOUNT|MS_BIND|MS_RDONLY|
	    jail_locked_flags(dst), NULL) != 0)
		goto fail;
	free(dst);
	return 0;
fail:
	free(dst);
	return -1;
}

static int
url_is_ssh(const char *url)
{
	return strncmp(url, "ssh://", 6) == 0 ||
	    strncmp(url, "git+ssh://", 10) == 0 ||
	    strncmp(url, "ssh+git://", 10) == 0 ||
	    (strstr(url, "://") == NULL && is_url(url));
}

/*
 * As git_jail_enter (0, 1 or -1), for a push of the workspace to url; or,
 * url NULL, into the local repository whose git directories are gitdir and
 * commondir (bound read-write; the workspace is then read-only).
 */
static int
git_push_jail_enter(const char *ws, const char *url, const char *gitdir,
    const char *commondir)
{
	static const char *const top[] = { "/usr", "/etc", "/bin", "/sbin",
	    "/lib", "/lib32", "/lib64", "/libx32" };
	static const char *const dev[] = { "/dev/null", "/dev/zero",
	    "/dev/random", "/dev/urandom" };
	struct jail_bind	 b[16];
	struct stat		 sb;
	char			 link[PATH_MAX], *root, *p;
	char			*resolv = NULL, *kh = NULL;
	const char		*home, *sock;
	size_t			 i, nb = 0;
	ssize_t			 n;
	int			 r = -1;

	if (git_jail_broken || getenv("HOLT_GIT_NO_JAIL") != NULL)
		return 1;
	/* What the push needs, looked up while the host is in view. */
	b[nb++] = (struct jail_bind){ ws, url != NULL };
	if (commondir != NULL)
		b[nb++] = (struct jail_bind){ commondir, 1 };
	if (gitdir != NULL && (commondir == NULL ||
	    strcmp(gitdir, commondir) != 0))
		b[nb++] = (struct jail_bind){ gitdir, 1 };
	if (url != NULL && url_is_ssh(url)) {
		sock = getenv("SSH_AUTH_SOCK");
		if (sock != NULL && *sock == '/' && stat(sock, &sb) == 0 &&
		    S_ISSOCK(sb.st_mode))
			b[nb++] = (struct jail_bind){ sock, 1 };
		home = getenv("HOME");
		if (home != NULL && *home == '/') {
			kh = xprintf("%s/.ssh/known_hosts", home);
			if (stat(kh, &sb) == 0 && S_ISREG(sb.st_mode))
				b[nb++] = (struct jail_bind){ kh, 0 };
		}
	}
	/* /etc/resolv.conf may be a link into /run (systemd-resolved). */
	if ((resolv = realpath("/etc/resolv.conf", NULL)) != NULL &&
	    strncmp(resolv, "/etc/", 5) != 0 &&
	    strncmp(resolv, "/usr/", 5) != 0 &&
	    (p = strrchr(resolv, '/')) != NULL && p != resolv) {
		*p = '\0';
		b[nb++] = (struct jail_bind){ resolv, 0 };
	}
	for (i = 0; i < nitems(dev); i++)
		if (stat(dev[i], &sb) == 0 && S_ISCHR(sb.st_mode))
			b[nb++] = (struct jail_bind){ dev[i], 1 };

	root = paths_join(paths_run_dir(), "git-jail");
	if (mkdir(root, 0700) != 0 && errno != EEXIST) {
		r = 1;
		goto out;
	}
	if ((r = jail_unshare(ws)) != 0)
		goto out;
	r = -1;
	if (mount(NULL, "/", NULL, MS_REC|MS_PRIVATE, NULL) != 0 ||
	    mount("holt-git", root, "tmpfs", MS_NOSUID|MS_NODEV,
	    "mode=0755,size=1m") != 0)
		goto out;
	/* The user's paths first: their directories are made in the tmpfs. */
	for (i = 0; i < nb; i++)
		if (jail_bind(root, b[i].src, b[i].rw) != 0)
			goto out;
	for (i = 0; i < nitems(top); i++) {
		if (lstat(top[i], &sb) != 0)
			continue;
		if (S_ISLNK(sb.st_mode)) {
			if ((n = readlink(top[i], link, sizeof link - 1)) <= 0)
				goto out;
			link[n] = '\0';
			p = xprintf("%s%s", root, top[i]);
			n = symlink(link, p);
			free(p);
			if (n != 0)
				goto out;
		} else if (S_ISDIR(sb.st_mode) && jail_bind(root, top[i], 0) != 0)
			goto out;
	}
	if (mount(NULL, root, NULL, MS_REMOUNT|MS_RDONLY|MS_NOSUID|MS_NODEV,
	    NULL) != 0 || chroot(root) != 0 || chdir("/") != 0)
		goto out;
	r = 0;
out:
	free(root);
	free(resolv);
	free(kh);
	return r;
}

/*
 * Wipe the environment of a push child but for what libgit2 and libssh2
 * read (HOME for known_hosts, the agent's socket): a token exported by the
 * user must not be readable in /proc/PID/environ while the push runs. The
 * strings are zeroed where they are, since that file shows the memory the
 * process started with, not environ.
 */
static void
git_env_scrub(void)
{
	extern char	**environ;
	static const char *const keep[] = { "HOME=", "SSH_AUTH_SOCK=",
	    "PATH=", "LANG=", "LC_ALL=", "LC_CTYPE=", "TZ=" };
	char		**e, **out;
	size_t		 i;

	for (e = out = environ; *e != NULL; e++) {
		for (i = 0; i < nitems(keep); i++)
			if (strncmp(*e, keep[i], strlen(keep[i])) == 0)
				break;
		if (i < nitems(keep))
			*out++ = *e;
		else
			explicit_bzero(*e, strlen(*e));
	}
	*out = NULL;
}

/* In an import child: progress goes to the parent as text lines. */
static int	 git_progress_fd = -1;

static void
git_child_progress(unsigned int received, unsigned int total,
    unsigned long long bytes, void *arg)
{
	char	 line[96];
	int	 n;

	n = snprintf(line, sizeof line, "%u %u %llu\n", received, total,
	    bytes);
	if (git_progress_fd != -1 && n > 0)
		file_write_all(git_progress_fd, line, n);
}

static int
git_jail_child(const char *ws, struct git_jail_call *jc, FILE *out,
    char **cause)
{
	cJSON	*j;
	char	*text, *commit = NULL;
	int	 r;

	switch (jc->op) {
	case JAIL_DIFF_JSON:
		if ((j = git_diff_impl(ws, jc->base, cause)) == NULL)
			return -1;
		text = cJSON_PrintUnformatted(j);
		fputs(text, out);
		free(text);
		cJSON_Delete(j);
		return 0;
	case JAIL_PRINT_DIFF:
		return git_print_diff_impl(ws, jc->base, out, jc->n, cause);
	case JAIL_PRINT_STAT:
		return git_print_stat_impl(ws, jc->base, out, jc->n, cause);
	case JAIL_REVERT_HUNK:
		return git_revert_hunk_impl(ws, jc->base, jc->path, jc->n,
		    cause);
	case JAIL_REVERT_FILE:
		return git_revert_file_impl(ws, jc->base, jc->path, cause);
	case JAIL_HAS_CHANGES:
		if ((r = git_has_changes_impl(ws, cause)) == -1)
			return -1;
		fputc(r ? '1' : '0', out);
		return 0;
	case JAIL_PUSH:
		return git_push_branch_impl(ws, jc->commit, jc->branch, jc->url,
		    jc->token, cause);
	case JAIL_PUSH_LOCAL:
		return git_push_local_impl(ws, jc->commit, jc->branch,
		    jc->path, jc->gitdir, cause);
	case JAIL_IMPORT: {
		struct git_import_opts	 io;

		memset(&io, 0, sizeof io);
		io.branch = jc->branch;
		io.depth = jc->n;
		if (jc->progress)
			io.progress = git_child_progress;
		if (git_import_impl(jc->url, ws, &io, &commit, cause) != 0)
			return -1;
		fputs(commit, out);
		free(commit);
		return 0;
	}
	case JAIL_COMMIT:
		r = git_commit_all_impl(ws, jc->base, jc->message, jc->author,
		    &commit, cause);
		if (r == -1)
			return -1;
		fprintf(out, "%d %s", r, commit);
		free(commit);
		return 0;
	}
	return -1;
}

/*
 * A running operation: the child, the read end of its pipe and what it has
 * sent so far. The child sends: 'J' or 'U' (confined or not), '0' or '1'
 * (ok or failed), then the output or the message; 'R' first means the jail
 * failed half-way and the operation must be run again unconfined.
 */
struct git_job {
	pid_t			 pid;
	int			 fd;
	int			 pfd;	/* import progress, or -1 */
	struct buf		 pin;
	int			 done;
	char			*ws;
	struct git_jail_call	 jc;	/* strings owned */
	struct buf		 in;
};

static char *
xstrdup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

static void
git_close_pair(int fds[2])
{
	if (fds[0] != -1)
		close(fds[0]);
	if (fds[1] != -1)
		close(fds[1]);
	fds[0] = fds[1] = -1;
}

/* The token from the parent: its length (0: none), -1 on error. */
static ssize_t
git_read_token(int fd, struct buf *b)
{
	char	 chunk[512];
	ssize_t	 n;

	while ((n = read(fd, chunk, sizeof chunk)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 || b->len + n > 4096)
			return -1;
		buf_add(b, chunk, n);
	}
	explicit_bzero(chunk, sizeof chunk);
	return (ssize_t)b->len;
}

/*
 * An import child leads a process group of its own, so that killing the
 * group on a timeout also ends the git it may run (git_clone_cli) and
 * git's helpers. Out of the caller's group it would miss the terminal's
 * interrupt: it is told of its parent's death instead, and takes the group
 * with it.
 */
static void
git_import_group_end(int sig)
{
	(void)sig;
	kill(0, SIGKILL);
}

static void
git_import_group(pid_t parent)
{
	struct sigaction	 sa;

	if (setpgid(0, 0) != 0 || getpgrp() != getpid())
		return;		/* kill(0) would reach the caller's group */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = git_import_group_end;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		kill(0, SIGKILL);
}

static struct git_job *
git_job_start(const char *ws, const struct git_jail_call *jc, char **cause)
{
	struct git_job		*job;
	struct git_jail_call	 cjc;
	struct stat		 sb;
	struct buf		 tok = BUF_INIT;
	char			*text = NULL, *ccause = NULL;
	size_t			 len = 0;
	pid_t			 pid, parent = getpid();
	int			 fds[2], pfds[2], tfds[2], j, r;
	FILE			*f;

	errno = 0;
	if (jc->op != JAIL_IMPORT &&
	    (lstat(ws, &sb) == -1 || !S_ISDIR(sb.st_mode))) {
		*cause = xprintf("workspace '%s': %s", ws, errno != 0 ?
		    strerror(errno) : "not a directory");
		return NULL;
	}
	if (git_safe_config_prepare(cause) != 0)
		return NULL;
	tzset();	/* commit times: /etc/localtime is not in the jail */
	fflush(NULL);
	pfds[0] = pfds[1] = tfds[0] = tfds[1] = -1;
	if (jc->op == JAIL_PUSH && jc->token != NULL &&
	    strlen(jc->token) > 4096) {
		*cause = xstrdup("the git token is too long (over 4096 bytes)");
		return NULL;
	}
	if (pipe2(fds, O_CLOEXEC) != 0 || (jc->progress &&
	    pipe2(pfds, O_CLOEXEC) != 0) || (jc->op == JAIL_PUSH &&
	    pipe2(tfds, O_CLOEXEC) != 0)) {
		*cause = xprintf("pipe: %s", strerror(errno));
		git_close_pair(fds);
		git_close_pair(pfds);
		return NULL;
	}
	/*
	 * A push's token goes to its child over a pipe, written before the
	 * fork (it fits the pipe's buffer, so this cannot block or meet a
	 * dead reader); the child reads it once it is confined.
	 */
	if (tfds[1] != -1 && jc->token != NULL &&
	    file_write_all(tfds[1], jc->token, strlen(jc->token)) == -1) {
		*cause = xprintf("pipe: %s", strerror(errno));
		git_close_pair(fds);
		git_close_pair(pfds);
		git_close_pair(tfds);
		return NULL;
	}
	if ((pid = fork()) == -1) {
		*cause = xprintf("fork: %s", strerror(errno));
		git_close_pair(fds);
		git_close_pair(pfds);
		git_close_pair(tfds);
		return NULL;
	}
	if (pid == 0) {
		git_in_worker = 1;
		close(fds[0]);
		if (pfds[0] != -1)
			close(pfds[0]);
		git_progress_fd = pfds[1];
		cjc = *jc;
		if (jc->op == JAIL_IMPORT)
			git_import_group(parent);
		if (jc->op == JAIL_PUSH) {
			close(tfds[1]);
			cjc.token = NULL;
			j = git_push_jail_enter(ws, jc->url, NULL, NULL);
			git_env_scrub();
		} else if (jc->op == JAIL_PUSH_LOCAL)
			j = git_push_jail_enter(ws, NULL, jc->gitdir,
			    jc->commondir);
		else
			j = jc->op == JAIL_IMPORT ? 2 : git_jail_enter(ws);
		if (j == -1) {
			text = xprintf("R1%s", strerror(errno));
			file_write_all(fds[1], text, strlen(text));
			_exit(1);
		}
		if (jc->op == JAIL_PUSH) {
			if (git_read_token(tfds[0], &tok) > 0)
				cjc.token = buf_str(&tok);
			close(tfds[0]);
		}
		f = open_memstream(&text, &len);
		fputs(j == 0 ? "J" : j == 2 ? "N" : "U", f);
		fputs("0", f);
		r = git_jail_child(j == 0 && jc->op != JAIL_PUSH &&
		    jc->op != JAIL_PUSH_LOCAL ? "/" : ws, &cjc, f, &ccause);
		fclose(f);
		if (r != 0) {
			free(text);
			text = xprintf("%s1%s", j == 0 ? "J" : j == 2 ? "N" : "U",
			    ccause != NULL ? ccause : "failed");
			len = strlen(text);
		}
		file_write_all(fds[1], text, len);
		_exit(0);
	}
	if (jc->op == JAIL_IMPORT)
		setpgid(pid, pid);	/* as the child does: no race */
	close(fds[1]);
	git_close_pair(tfds);
	file_set_nonblock(fds[0]);
	if (pfds[1] != -1) {
		close(pfds[1]);
		file_set_nonblock(pfds[0]);
	}
	job = xcalloc(1, sizeof *job);
	job->pid = pid;
	job->fd = fds[0];
	job->pfd = pfds[0];
	buf_init(&job->pin);
	job->ws = xstrdup(ws);
	job->jc = *jc;
	job->jc.base = xstrdup_or_null(jc->base);
	job->jc.path = xstrdup_or_null(jc->path);
	job->jc.message = xstrdup_or_null(jc->message);
	job->jc.author = xstrdup_or_null(jc->author);
	job->jc.commit = xstrdup_or_null(jc->commit);
	job->jc.branch = xstrdup_or_null(jc->branch);
	job->jc.url = xstrdup_or_null(jc->url);
	job->jc.token = xstrdup_or_null(jc->token);
	job->jc.gitdir = xstrdup_or_null(jc->gitdir);
	job->jc.commondir = xstrdup_or_null(jc->commondir);
	buf_init(&job->in);
	return job;
}

int
git_job_fd(struct git_job *job)
{
	return job->fd;
}

int
git_job_step(struct git_job *job)
{
	char	 chunk[65536];
	ssize_t	 n;

	while (!job->done) {
		n = read(job->fd, chunk, sizeof chunk);
		if (n == 0) {
			job->done = 1;
			break;
		}
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			job->done = 1;
			break;
		}
		buf_add(&job->in, chunk, n);
	}
	return 1;
}

void
git_job_free(struct git_job *job)
{
	if (job == NULL)
		return;
	if (job->fd != -1)
		close(job->fd);
	if (job->pfd != -1)
		close(job->pfd);
	buf_release(&job->pin);
	if (job->pid > 0) {
		if (!job->done && job->jc.op == JAIL_IMPORT)
			kill(-job->pid, SIGKILL);	/* and git, if running */
		if (!job->done)
			kill(job->pid, SIGKILL);
		while (waitpid(job->pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	free(job->ws);
	free((char *)job->jc.base);
	free((char *)job->jc.path);
	free((char *)job->jc.message);
	free((char *)job->jc.author);
	free((char *)job->jc.commit);
	free((char *)job->jc.branch);
	free((char *)job->jc.url);
	free((char *)job->jc.gitdir);
	free((char *)job->jc.commondir);
	if (job->jc.token != NULL) {
		explicit_bzero((char *)job->jc.token, strlen(job->jc.token));
		free((char *)job->jc.token);
	}
	buf_release(&job->in);
	free(job);
}

static int git_job_wait(const char *, struct git_jail_call *, int,
    git_progress_cb, void *, struct buf *, char **);
static int git_net_timeout(void);
static int git_push_branch_impl(const char *, const char *, const char *,
    const char *, const char *, char **);

/* The result of a finished job; frees it. 0 ok (*out), -1 with *cause. */
/*
 * A workspace owned by a host uid of its own (a sandbox made by root where
 * no pids cgroup could hold it) must stay that uid's: what a git operation
 * made there as root (objects, refs, reverted files, a clone) is given
 * back, or the sandbox's user could not change it. The walk goes by
 * descriptor and never follows a symbolic link, so a tree the sandbox
 * changes meanwhile cannot lead it outside the workspace.
 */
static void
ws_give_back_at(int dfd, uid_t uid, gid_t gid, int depth)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	int		 fd, cfd;

	if (depth > 256 || (fd = dup(dfd)) == -1)
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (st.st_uid == 0 && fchownat(dfd, de->d_name, uid, gid,
		    AT_SYMLINK_NOFOLLOW) != 0)
			log_debug("%s: %s", de->d_name, strerror(errno));
		if (!S_ISDIR(st.st_mode))
			continue;
		cfd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (cfd != -1) {
			ws_give_back_at(cfd, uid, gid, depth + 1);
			close(cfd);
		}
	}
	closedir(d);
}

void
git_ws_give_back(const char *ws)
{
	struct stat	 st;
	int		 fd;

	if (geteuid() != 0)
		return;
	fd = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return;
	if (fstat(fd, &st) == 0 && st.st_uid != 0)
		ws_give_back_at(fd, st.st_uid, st.st_gid, 0);
	close(fd);
}

static int
git_job_collect(struct git_job *job, struct buf *out, char **cause)
{
	static int	 warned;
	struct buf	*in = &job->in;
	int		 status = 0, r = -1;

	close(job->fd);
	job->fd = -1;
	while (waitpid(job->pid, &status, 0) == -1 && errno == EINTR)
		;
	job->pid = 0;
	switch (job->jc.op) {
	case JAIL_REVERT_HUNK:
	case JAIL_REVERT_FILE:
	case JAIL_COMMIT:
	case JAIL_PUSH:
	case JAIL_IMPORT:
		git_ws_give_back(job->ws);
		break;
	default:
		break;
	}
	if (in->len < 2) {
		*cause = xprintf("workspace '%s': the git worker died (status "
		    "%d)", job->ws, status);
		goto out;
	}
	if (in->data[0] == 'R' && !git_jail_broken) {
		log_warnx("workspace '%s': cannot confine libgit2 to it (%s); "
		    "it runs unconfined", job->ws, in->data + 2);
		git_jail_broken = warned = 1;
		r = git_job_wait(job->ws, &job->jc, job->jc.op == JAIL_PUSH ?
		    git_net_timeout() : 0, NULL, NULL, out, cause);
		goto out;
	}
	if (in->data[0] == 'U' && !warned) {
		log_warnx("workspace '%s': user namespaces are not available: "
		    "libgit2 runs unconfined", job->ws);
		warned = 1;
	}
	if (in->data[1] != '0') {
		/* Name the workspace as the user knows it, not as "/". */
		struct buf	 m = BUF_INIT;
		const char	*p = in->data + 2, *hit;

		while ((hit = strstr(p, "workspace '/'")) != NULL) {
			buf_add(&m, p, hit - p);
			buf_addf(&m, "workspace '%s'", job->ws);
			p = hit + strlen("workspace '/'");
		}
		buf_adds(&m, p);
		*cause = buf_detach(&m, NULL);
		goto out;
	}
	buf_add(out, in->data + 2, in->len - 2);
	r = 0;
out:
	git_job_free(job);
	return r;
}

/*
 * Run one operation in a child and wait for it, at most timeout_s seconds
 * (0: no limit); a child past its time is killed. 1 timed out.
 */
/* Progress lines from an import child: to the caller's callback. */
static int
git_job_progress(struct git_job *job, git_progress_cb cb, void *arg)
{
	char			 chunk[4096], *nl;
	ssize_t			 n;
	unsigned int		 got, total;
	unsigned long long	 bytes;
	int			 any = 0;

	while ((n = read(job->pfd, chunk, sizeof chunk)) > 0) {
		buf_add(&job->pin, chunk, n);
		any = 1;
	}
	while (job->pin.len > 0 &&
	    (nl = memchr(job->pin.data, '\n', job->pin.len)) != NULL) {
		*nl = '\0';
		if (cb != NULL && sscanf(job->pin.data, "%u %u %llu", &got,
		    &total, &bytes) == 3)
			cb(got, total, bytes, arg);
		buf_remove_front(&job->pin, nl + 1 - job->pin.data);
	}
	if (n == 0) {
		close(job->pfd);
		job->pfd = -1;
	}
	return any;
}

/*
 * Wait for a job, giving up after timeout_s seconds without news from it
 * (0: no limit): its end, or for an import, a progress line. 1: timed out
 * (the child is killed).
 */
static int
git_job_wait(const char *ws, struct git_jail_call *jc, int timeout_s,
    git_progress_cb cb, void *arg, struct buf *out, char **cause)
{
	struct git_job	*job;
	struct pollfd	 pfd[2];
	uint64_t	 end = mono_ms() + (uint64_t)timeout_s * 1000, now;
	int		 nfd;

	if ((job = git_job_start(ws, jc, cause)) == NULL)
		return -1;
	while (git_job_step(job) == 0) {
		pfd[0].fd = job->fd;
		pfd[0].events = POLLIN;
		nfd = 1;
		if (job->pfd != -1) {
			pfd[1].fd = job->pfd;
			pfd[1].events = POLLIN;
			nfd = 2;
		}
		if (timeout_s <= 0)
			poll(pfd, nfd, -1);
		else {
			if ((now = mono_ms()) >= end) {
				git_job_free(job);
				return 1;
			}
			poll(pfd, nfd, (int)(end - now));
		}
		if (job->pfd != -1 && git_job_progress(job, cb, arg))
			end = mono_ms() + (uint64_t)timeout_s * 1000;
	}
	if (job->pfd != -1)
		git_job_progress(job, cb, arg);
	return git_job_collect(job, out, cause);
}

/* Run one operation in the jail and wait for it. */
static int
git_jail_run(const char *ws, struct git_jail_call *jc, struct buf *out,
    char **cause)
{
	return git_job_wait(ws, jc, 0, NULL, NULL, out, cause);
}

/* Remove what is in a directory (it was empty before a failed clone). */
static void
git_empty_dir(const char *path)
{
	DIR		*d;
	struct dirent	*de;
	char		*p;

	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		p = paths_join(path, de->d_name);
		file_rm_rf(p);
		free(p);
	}
	closedir(d);
}

static int
git_net_timeout(void)
{
	const char	*e = getenv("HOLT_GIT_TIMEOUT");

	if (e != NULL && atoi(e) > 0)
		return atoi(e);
	return 300;
}

/*
 * The clone runs in a child too, for the same reason as the push: it is
 * killed after HOLT_GIT_TIMEOUT seconds without progress. Its progress
 * comes back as lines on a second pipe, for the caller's callback.
 */
int
git_import(const char *src, const char *ws, const struct git_import_opts *opts,
    char **base_commit, char **cause)
{
	struct git_jail_call	 jc = { .op = JAIL_IMPORT, .url = src };
	struct buf		 out = BUF_INIT;
	char			*clean, *pw = NULL;
	int			 r, existed, timeout = git_net_timeout();

	if (opts != NULL) {
		jc.branch = opts->branch;
		jc.n = opts->depth;
		jc.progress = opts->progress != NULL;
	}
	existed = access(ws, F_OK) == 0;
	r = git_job_wait(ws, &jc, timeout, opts != NULL ? opts->progress :
	    NULL, opts != NULL ? opts->progress_arg : NULL, &out, cause);
	if (r == 1) {
		/* The killed child could not clean up: leave it as it was. */
		if (!existed)
			file_rm_rf(ws);
		else
			git_empty_dir(ws);
		clean = git_url_strip(src, &pw);
		*cause = xprintf("clone of '%s' timed out after %d s without "
		    "progress (is the network up?)", clean, timeout);
		free(clean);
		if (pw != NULL) {
			explicit_bzero(pw, strlen(pw));
			free(pw);
		}
		buf_release(&out);
		return -1;
	}
	if (r == 0)
		*base_commit = buf_detach(&out, NULL);
	buf_release(&out);
	return r;
}

/*
 * The push runs in a child confined to the workspace and what the network
 * needs (git_push_jail_enter); the token reaches it over a pipe. libgit2
 * (1.5) has no network timeout: a server that accepts and then says nothing
 * would hold a push for ever, so the child is killed after HOLT_GIT_TIMEOUT
 * seconds (default 300).
 */
int
git_push_branch(const char *ws, const char *commit, const char *branch,
    const char *url, const char *token, char **cause)
{
	struct git_jail_call	 jc = { .op = JAIL_PUSH, .commit = commit,
	    .branch = branch };
	struct buf		 out = BUF_INIT;
	char			*clean, *pw = NULL;
	int			 r, timeout = git_net_timeout();

	/* user:password@ in the URL: the password is a token, kept out. */
	clean = git_url_strip(url, &pw);
	jc.url = clean;
	jc.token = token != NULL ? token : pw;
	r = git_job_wait(ws, &jc, timeout, NULL, NULL, &out, cause);
	buf_release(&out);
	if (r == 1)
		*cause = xprintf("push to '%s' timed out after %d s (is the "
		    "network up?); the commit is kept, run it again", clean,
		    timeout);
	free(clean);
	if (pw != NULL) {
		explicit_bzero(pw, strlen(pw));
		free(pw);
	}
	return r == 1 ? -1 : r;
}

/* A git directory's path as the jail binds it: no trailing slash. */
static char *
git_dir_path(const char *p)
{
	char	*s = xstrdup(p);
	size_t	 len = strlen(s);

	while (len > 1 && s[len - 1] == '/')
		s[--len] = '\0';
	return s;
}

/*
 * The local push runs in the push's jail, which holds the target's git
 * directory besides the workspace (read-only there): the workspace's
 * repository cannot name another of the host's object stores or files
 * for libgit2 to read and copy into the target.
 */
int
git_push_local(const char *ws, const char *commit, const char *branch,
    const char *path, char **cause)
{
	struct git_jail_call	 jc = { .op = JAIL_PUSH_LOCAL,
	    .commit = commit, .branch = branch, .path = path };
	git_repository		*dst;
	struct buf		 out = BUF_INIT;
	char			*gitdir, *commondir;
	int			 r;

	git_lib_setup();
	if (git_repository_open_ext(&dst, path, GIT_REPOSITORY_OPEN_NO_SEARCH,
	    NULL) != 0) {
		git_set_cause(cause, "repository '%s': %s", path);
		return -1;
	}
	jc.gitdir = gitdir = git_dir_path(git_repository_path(dst));
	jc.commondir = commondir = git_dir_path(git_repository_commondir(dst));
	git_repository_free(dst);
	r = git_jail_run(ws, &jc, &out, cause);
	buf_release(&out);
	free(gitdir);
	free(commondir);
	return r;
}

struct git_job *
git_diff_start(const char *ws, const char *base, char **cause)
{
	struct git_jail_call	 jc = { .op = JAIL_DIFF_JSON, .base = base };

	return git_job_start(ws, &jc, cause);
}

cJSON *
git_diff_finish(struct git_job *job, char **cause)
{
	struct buf	 out = BUF_INIT;
	cJSON		*j;

	while (git_job_step(job) == 0) {
		struct pollfd	 pfd = { job->fd, POLLIN, 0 };

		poll(&pfd, 1, -1);
	}
	if (git_job_collect(job, &out, cause) != 0)
		return NULL;
	if ((j = cJSON_Parse(buf_str(&out))) == NULL)
		*cause = xstrdup("bad diff from the git worker");
	buf_release(&out);
	return j;
}

cJSON *
git_diff(const char *ws, const char *base, char **cause)
{
	struct git_jail_call	 jc = { .op = JAIL_DIFF_JSON, .base = base };
	struct buf		 out = BUF_INIT;
	cJSON			*j;

	if (git_jail_run(ws, &jc, &out, cause) != 0)
		return NULL;
	if ((j = cJSON_Parse(buf_str(&out))) == NULL)
		*cause = xprintf("workspace '%s': bad diff from the worker", ws);
	buf_release(&out);
	return j;
}

static int
git_jail_print(const char *ws, struct git_jail_call *jc, FILE *f,
    char **cause)
{
	struct buf	 out = BUF_INIT;

	if (git_jail_run(ws, jc, &out, cause) != 0)
		return -1;
	fwrite(buf_str(&out), 1, out.len, f);
	buf_release(&out);
	return 0;
}

int
git_print_diff(const char *ws, const char *base, FILE *f, int colour,
    char **cause)
{
	struct git_jail_call	 jc = { .op = JAIL_PRINT_DIFF, .base = base,
	    .n = (colour ? 1 : 0) | (isatty(fileno(f)) ? 2 : 0) };

	return git_jail_print(ws, &jc, f, cause);
}

int
git_print_stat(const char *ws, const char *base, FILE *f, int width,
    char **cause)
{
	struct git_jail_call	 jc = { .op = JAIL_PRINT_STAT, .base = base,
	    .n = width };

	return git_jail_print(ws, &jc, f, cause);
}

int
git_revert_hunk(const char *ws, const char *base, const char *path,
    int hunk_index, char **cause)
{
	struct git_jail_call	 jc = { .op = JAIL_REVERT_HUNK, .base = base,
	    .path = path, .n = hunk_index };
	struct buf		 out = BUF_INIT;
	int			 r;

	r = git_jail_run(ws, &jc, &out, cause);
	buf_release(&out);
	return r;
}

int
git_revert_file(const char *ws, const char *base, const char *path,
    char **cause)
{
	struct git_jail_call	 jc = { .op = JAIL_REVERT_FILE, .base = base,
	    .path = path };
	struct buf		 out = BUF_INIT;
	int			 r;

	r = git_jail_run(ws, &jc, &out, cause);
	buf_release(&out);
	return r;
}

int
git_has_changes(const char *ws, char **cause)
{
	struct git_jail_call	 jc = { .op = JAIL_HAS_CHANGES };
	struct buf		 out = BUF_INIT;
	int			 r;

	if (git_jail_run(ws, &jc, &out, cause) != 0)
		return -1;
	r = strcmp(buf_str(&out), "1") == 0;
	buf_release(&out);
	return r;
}

int
git_commit_all(const char *ws, const char *base, const char *message,
    const char *author, char **commit, char **cause)
{
	struct git_jail_call	 jc = { .op = JAIL_COMMIT, .base = base,
	    .message = message };
	struct buf		 out = BUF_INIT;
	char			*name, *email, *who = NULL;
	int			 r;

	/* The identity is the host user's: read it here, not in the jail. */
	if (author != NULL) {
		if (git_parse_author(author, &name, &email) != 0) {
			*cause = xprintf("author '%s': expected 'Name "
			    "<email>'", author);
			return -1;
		}
	} else if (git_global_identity(&name, &email) != 0) {
		name = xstrdup("holt");
		email = xstrdup("holt@localhost");
	}
	who = xprintf("%s <%s>", name, email);
	free(name);
	free(email);
	jc.author = who;
	if (git_jail_run(ws, &jc, &out, cause) != 0) {
		free(who);
		return -1;
	}
	free(who);
	if (out.len < 3 || (out.data[0] != '0' && out.data[0] != '1')) {
		*cause = xprintf("workspace '%s': bad answer from the worker",
		    ws);
		buf_release(&out);
		return -1;
	}
	r = out.data[0] - '0';
	*commit = xstrdup(out.data + 2);
	buf_release(&out);
	return r;
}

/*
 * The branch a repository's work is based on: for a local repository, the
 * branch checked out there; for a workspace cloned from an URL, the remote's
 * default branch as the clone recorded it (refs/remotes/origin/HEAD).
 * NULL if there is none (detached, unknown). Caller frees.
 */
char *
git_default_branch(const char *path, int workspace)
{
	git_repository	*repo;
	git_reference	*ref = NULL;
	const char	*t, *name = NULL;
	char		*cause = NULL, *out = NULL;

	git_lib_setup();
	if (workspace) {
		if ((repo = git_open_workspace(path, &cause)) == NULL) {
			free(cause);
			return NULL;
		}
		if (git_reference_lookup(&ref, repo,
		    "refs/remotes/origin/HEAD") == 0 &&
		    (t = git_reference_symbolic_target(ref)) != NULL &&
		    strncmp(t, "refs/remotes/origin/", 20) == 0)
			name = t + 20;
	} else {
		if (git_repository_open_ext(&repo, path,
		    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0)
			return NULL;
		if (git_repository_head(&ref, repo) == 0 &&
		    git_reference_is_branch(ref))
			name = git_reference_shorthand(ref);
	}
	if (name != NULL && *name != '\0')
		out = xstrdup(name);
	git_reference_free(ref);
	git_repository_free(repo);
	return out;
}
