/*
 * git-remote.c: holt diff for a session whose sandbox is on another
 * provider (ssh, e2b), whose files are there and not in workspace/ here.
 * git runs in the sandbox, through envd, against the session's base
 * commit; its text is printed with control characters made visible, as
 * anything else the sandbox says. Nothing it wrote is parsed here, so a
 * hostile workspace can do no more than print odd text. Costs one exec
 * (and a connection, an ssh session for ssh:); the diff is held in
 * memory while it comes.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holt.h"
#include "git.h"
#include "sandbox.h"
#include "session.h"

#define GIT_REMOTE_TIMEOUT_MS	(120 * 1000)

static int
is_hex_id(const char *s)
{
	size_t	 n = strspn(s, "0123456789abcdef");

	return (n == 40 || n == 64) && s[n] == '\0';
}

/*
 * In the sandbox, in dir: the tracked changes against base (the index and
 * the working tree, as holt diff shows them), then each new file not
 * ignored, as a diff from nothing. --no-ext-diff and --no-textconv: the
 * repository's config names no program to run.
 */
char *
git_remote_diff_command(const char *dir, const char *base, int stat)
{
	const char	*git = "git --no-pager -c core.quotepath=off "
			    "-c color.ui=never";

	return xprintf("cd '%s' && %s diff --no-ext-diff --no-textconv "
	    "%s%s -- || exit $?; %s ls-files -z -o --exclude-standard | "
	    "xargs -0 -r -n 1 %s diff --no-index --no-ext-diff %s-- "
	    "/dev/null; exit 0", dir, git, stat ? "--stat " : "", base, git,
	    git, stat ? "--stat " : "");
}

int
git_remote_diff(const char *name, int stat, int json, FILE *f,
    char **cause)
{
	struct sandbox	*sb;
	cJSON		*meta;
	const char	*sid, *base;
	struct buf	 out = BUF_INIT, err = BUF_INIT;
	char		*cmd, *why = NULL;
	int		 fd, rc;

	if ((meta = session_load(name, &why)) == NULL) {
		free(why);
		return 0;	/* git_session_open says what is wrong */
	}
	sid = json_str(meta, "sandbox");
	base = json_str(meta, "base_commit");
	if (sid == NULL || base == NULL || !is_hex_id(base) ||
	    (sb = sandbox_open(sid, &why)) == NULL) {
		free(why);
		cJSON_Delete(meta);
		return 0;
	}
	if (strcmp(sandbox_provider_spec(sb), "local") == 0) {
		sandbox_free(sb);
		cJSON_Delete(meta);
		return 0;
	}
	/* --json: from a copy of the files here (git_session_open). */
	rc = 0;
	if (json)
		goto out;
	rc = -1;
	if (sandbox_state(sb) == SANDBOX_STOPPED &&
	    sandbox_start(sb, cause) != 0)
		goto out;
	if ((fd = sandbox_connect(sb, cause)) == -1)
		goto out;
	cmd = git_remote_diff_command("/workspace", base, stat);
	rc = envd_exec_simple(fd, cmd, GIT_REMOTE_TIMEOUT_MS, &out, &err,
	    cause);
	free(cmd);
	close(fd);
	if (rc == 0) {
		utf8_vis_print(f, UTF8_VIS_TEXT, "%s", buf_str(&out));
		rc = 1;
	} else {
		if (rc > 0)
			*cause = xprintf("git in sandbox '%s' (exit %d): %s",
			    sandbox_id(sb), rc, buf_str(&err));
		rc = -1;
	}
out:
	buf_release(&out);
	buf_release(&err);
	sandbox_free(sb);
	cJSON_Delete(meta);
	return rc;
}
