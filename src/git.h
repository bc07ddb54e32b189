/*
 * git.h: the host side of a session's repository (libgit2): bring a
 * repository into a sandbox's workspace, show what the agent changed against
 * the base commit, revert hunks and files, commit, push; and the forge API
 * that opens pull requests (github.c).
 *
 * The workspace is hostile: the agent may have written anything into it,
 * .git included. Every function here opens it through git_open_workspace's
 * rules: .git must be a real directory holding no symlinks, no alternates and
 * no includes; the workspace's own configuration is never used (a fixed one
 * replaces it); nothing is run (libgit2 runs no hooks or filter programs);
 * submodules are never entered; symlinks are diffed as links and never
 * followed; files are written through directory descriptors that refuse
 * symlinks, so no write can land outside the workspace. The work-tree
 * operations (diff, print, revert, commit, has_changes) and the push run
 * in a forked child confined to the workspace (own user and mount
 * namespaces, chroot):
 * each costs a fork and the caller waits for that child (waitpid on its
 * pid only, so a SIGCHLD handler that reaps everything would race it).
 *
 * Tokens reach libgit2 only through its credential callback and libcurl only
 * in the Authorization header; they are never stored in a remote URL.
 *
 * Call order: any function may come first (libgit2 is set up on first use).
 * Not thread-safe: one thread at a time (the server runs these in a worker).
 */
#ifndef GIT_H
#define GIT_H

#include <stdio.h>

#include <cjson/cJSON.h>

/* Progress of a clone: objects received of total, bytes received. */
typedef void (*git_progress_cb)(unsigned int received, unsigned int total,
    unsigned long long bytes, void *arg);

struct git_import_opts {
	const char	*branch;	/* NULL: the remote's default */
	int		 depth;		/* 0: full history */
	git_progress_cb	 progress;	/* NULL: quiet */
	void		*progress_arg;
};

/*
 * Clone src (https or ssh URL, or a local repository's path) into
 * workspace_dir, which must not exist or be empty. From a local path, the
 * working tree's uncommitted and untracked (not ignored) files are copied
 * over too; the user's checkout is only read. *base_commit gets HEAD after
 * the clone (40 hex digits, caller frees). 0 ok, -1 with *cause. The clone
 * runs in a child process (killed after HOLT_GIT_TIMEOUT seconds, default
 * 300, without progress); the progress callback is called in the caller's
 * process, from this function. --depth (an URL only: a local repository is
 * copied whole) is libgit2's from 1.7; with an older libgit2 the git
 * command makes the shallow clone (git_clone_cli in git.c: the token over a
 * pipe to its credential helper, in no argument, environment or file).
 * libgit2 older than 1.7 does not know shallow repositories: the children
 * that open one stop its history walks where git's would stop.
 */
/* Root's files in a workspace owned by another uid: given to that uid. */
void	 git_ws_give_back(const char *workspace_dir);
int	 git_import(const char *src, const char *workspace_dir,
	     const struct git_import_opts *, char **base_commit, char **cause);

/*
 * The workspace's changes against base (a commit id): staged, unstaged and
 * untracked files, renames found by similarity, binary files and mode
 * changes. The JSON is holt diff --json's:
 *   {"base":"sha","files":[{"path","old_path","status":
 *    "modified|added|deleted|renamed|typechange","binary","old_mode",
 *    "new_mode","additions","deletions","hunks":[{"header","old_start",
 *    "old_lines","new_start","new_lines","lines":[{"origin":" |+|-",
 *    "text"}]}]}]}
 * Modes are octal strings ("100644", "100755", "120000"; "" when absent).
 * Paths and texts are valid UTF-8: an invalid byte becomes U+FFFD.
 */
/*
 * Set up libgit2 once per process (idempotent): no system or global
 * configuration, no owner validation (holt opens exact paths it made,
 * whose files a sandbox's own host uid owns). Every libgit2 user calls it
 * first, the screen's status thread too.
 */
void	 git_lib_setup(void);

cJSON	*git_diff(const char *workspace, const char *base, char **cause);

/*
 * The same without blocking, for event loops (the TUI's diff view): start
 * it, watch git_job_fd for reading and call git_job_step when it is
 * readable until it returns 1, then git_diff_finish (which frees the job;
 * called early, it waits). git_job_free abandons a job (kills the child).
 */
struct git_job;
struct git_job *git_diff_start(const char *workspace, const char *base,
	     char **cause);
int	 git_job_fd(struct git_job *);
int	 git_job_step(struct git_job *);	/* 1 finished, 0 not yet */
cJSON	*git_diff_finish(struct git_job *, char **cause);
void	 git_job_free(struct git_job *);

/* The same diff printed as git diff (colour: ANSI escapes) or --stat. */
int	 git_print_diff(const char *workspace, const char *base, FILE *,
	     int colour, char **cause);
int	 git_print_stat(const char *workspace, const char *base, FILE *,
	     int width, char **cause);

/*
 * Undo changes in the workspace, atomically (temporary file + rename, in the
 * file's directory): one hunk of path (its index in git_diff's "hunks"), or
 * the whole file (back to base's content and mode; an added file is
 * removed; a renamed one is put back under its old name).
 */
int	 git_revert_hunk(const char *workspace, const char *base,
	     const char *path, int hunk_index, char **cause);
int	 git_revert_file(const char *workspace, const char *base,
	     const char *path, char **cause);

/*
 * A hunk of one file of git_diff's JSON as a message to the agent: the
 * location, the hunk quoted with "> " and the user's comment after it.
 * NULL if hunk_index is out of range. Caller frees.
 */
char	*git_hunk_quote(const cJSON *file, int hunk_index, const char *comment);

/*
 * Commit everything in the workspace (git add -A) with message and author
 * ("Name <email>", NULL: the host user's global git identity, else
 * "holt <holt@localhost>"). The parent is HEAD when HEAD descends from base,
 * else base. The commit moves HEAD (its branch, or HEAD itself if detached).
 * Returns 1 committed, 0 nothing to commit (*commit: HEAD), -1 error.
 * *commit gets the id (caller frees).
 */
int	 git_commit_all(const char *workspace, const char *base,
	     const char *message, const char *author, char **commit,
	     char **cause);

/* Whether the workspace has changes that git_commit_all would commit. */
int	 git_has_changes(const char *workspace, char **cause);

/*
 * Point refs/heads/<branch> at commit and push it to url's <branch>
 * (not forced). The local branch is moved only if it is new, already at
 * commit, or an ancestor of commit. It runs in a child killed after
 * HOLT_GIT_TIMEOUT seconds, jailed like the work-tree operations but with
 * a root of its own: the workspace, /usr, /etc, a few devices and, for ssh,
 * the agent's socket and ~/.ssh/known_hosts. token: for http(s) URLs, NULL
 * for none; it reaches the child over a pipe (not its environment, which is
 * wiped). ssh URLs use the host's ssh agent. The remote is built from url
 * alone: the workspace's remotes, insteadOf and proxy settings are not used.
 */
int	 git_push_branch(const char *workspace, const char *commit,
	     const char *branch, const char *url, const char *token,
	     char **cause);

/*
 * The same into a local repository at path (holt pr --local): the objects
 * are copied into its object database and refs/heads/<branch> is set, not
 * forced; its HEAD, index and files are not touched. It runs in the push's
 * jail, which holds the target's git directory too (read-write) and the
 * workspace read-only.
 */
int	 git_push_local(const char *workspace, const char *commit,
	     const char *branch, const char *path, char **cause);

/*
 * Set only by the tests' helper (tests/git-tool): git_open_workspace skips
 * its checks, so a test can show what the jails alone keep out.
 */
extern int git_test_unchecked;

/* The git token: HOLT_GIT_TOKEN, GITHUB_TOKEN, config git_token; or NULL. */
const char *git_token(void);

/*
 * An URL without its user:password@ (the password, if any, in *password,
 * caller frees; it is a token, never to be shown or stored).
 */
char	*git_url_strip(const char *url, char **password);

/*
 * The branch to propose into when the session names none: for a local
 * repository (workspace 0) its checked-out branch; for a workspace cloned
 * from an URL (workspace 1) the remote's default branch recorded at clone
 * time. NULL if unknown. Caller frees. Call it right after git_import to
 * store the branch in session.json before the agent can touch the workspace.
 */
char	*git_default_branch(const char *path, int workspace);

/* A local repository's remote.origin.url (its own config). Caller frees. */
char	*git_origin_url(const char *path, char **cause);

/* Parse "Name <email>". 0 ok, -1 malformed. Both caller-freed. */
int	 git_parse_author(const char *, char **name, char **email);

/*
 * github.c: pull requests through the GitHub REST API (and compatible
 * forges): POST {api}/repos/{owner}/{repo}/pulls.
 */
struct github_pr {
	char	*url;		/* html_url */
	int	 number;
	int	 existing;	/* a PR for head was already open */
};

/* owner and repo from an https, ssh or scp-like URL. 0 ok, -1 not one. */
int	 github_parse_url(const char *url, char **owner, char **repo);

/*
 * Open a pull request of branch head into base. If one is already open for
 * head (422), find it and return it with existing set. 0 ok, -1 error with
 * a message for the user (401/403 token, 404 repository, 422 validation,
 * rate limit with the reset time, network).
 */
int	 github_pr_open(const char *api, const char *token, const char *owner,
	     const char *repo, const char *head, const char *base,
	     const char *title, const char *body, int draft,
	     struct github_pr *, char **cause);
void	 github_pr_release(struct github_pr *);

/*
 * git-session.c: the above for a session (session.json, its sandbox's
 * workspace, its event log). For the CLI and the TUI's diff view.
 */
struct git_session;

/*
 * git-remote.c: holt diff of session name when its sandbox is on another
 * provider: git runs there, its text goes to f. 1 done, 0 the sandbox is
 * local or json is asked for (then git_session_open makes a copy here;
 * it also says why when the session is not readable), -1 *cause.
 */
int	 git_remote_diff(const char *name, int stat, int json, FILE *f,
	     char **cause);
/*
 * The shell command that prints, in the sandbox, the diff of the
 * repository at dir (no single quote in it) against base: tracked
 * changes, then new files. Caller frees.
 */
char	*git_remote_diff_command(const char *dir, const char *base, int stat);
/* NULL with *cause; *unknown is set if there is no such session. */
struct git_session *git_session_open(const char *name, int *unknown,
	     char **cause);
void	 git_session_free(struct git_session *);
const char *git_session_workspace(struct git_session *);
const char *git_session_base(struct git_session *);
/* The agent's last assistant.message text, or NULL. Caller frees. */
char	*git_session_summary(struct git_session *);
/* A PR's default title (first line, <= 72 bytes) and body. Caller frees. */
void	 git_session_pr_defaults(struct git_session *, char **title,
	     char **body);

struct git_pr_opts {
	const char	*title;		/* NULL: from the agent's summary */
	const char	*body;		/* NULL: from the agent's summary */
	const char	*branch;	/* NULL: holt/<session> */
	const char	*base;		/* NULL: the session's branch */
	const char	*author;	/* NULL: as git_commit_all */
	int		 draft;
	int		 local;		/* push into the source repository */
	/* Progress for the user ("committed ...", "pushing ..."). */
	void		(*note)(void *arg, const char *msg);
	void		*note_arg;
};

/*
 * The pull request flow: commit what is uncommitted (message: title, blank
 * line, body), point the branch at it, push, open the PR and record it as a
 * pr.opened event {url, number, branch, base}. With local set, push into
 * the source repository and stop (pr is left empty). Each step's failure
 * leaves the earlier ones in place, so it can be run again. 0 ok, -1 error.
 */
int	 git_session_pr(struct git_session *, const struct git_pr_opts *,
	     struct github_pr *, char **cause);

#endif
