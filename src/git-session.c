/*
 * git-session.c: git.c and github.c applied to a session: find its workspace
 * and base commit from session.json, default a pull request's title and body
 * from the agent's last message, and run the whole pull request flow
 * (commit, branch, push, open, record pr.opened). Used by holt diff, commit
 * and pr, and by the TUI's diff view (C and P). Blocking: call it from a
 * command or a worker, not from an event loop.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holt.h"
#include "git.h"
#include "sandbox.h"
#include "session.h"

struct git_session {
	char	*name;
	char	*dir;
	char	*workspace;
	cJSON	*meta;
	const char *repo;	/* in meta */
	const char *base;
	const char *branch;
};

void
git_session_free(struct git_session *gs)
{
	if (gs == NULL)
		return;
	free(gs->name);
	free(gs->dir);
	free(gs->workspace);
	cJSON_Delete(gs->meta);
	free(gs);
}

struct git_session *
git_session_open(const char *name, int *unknown, char **cause)
{
	struct git_session	*gs;
	struct sandbox		*sb;
	char			*path, *sbx, *why = NULL;
	const char		*sid;

	*unknown = 0;
	if (*name == '\0' || *name == '.' || strchr(name, '/') != NULL) {
		*cause = xprintf("session '%s': not a session name", name);
		*unknown = 1;
		return NULL;
	}
	gs = xcalloc(1, sizeof *gs);
	gs->name = xstrdup(name);
	gs->dir = paths_join(paths_sessions_dir(), name);
	path = paths_join(gs->dir, "session.json");
	if (access(path, F_OK) != 0) {
		*cause = xprintf("session '%s': no such session (holt ls lists "
		    "them)", name);
		*unknown = 1;
		goto fail;
	}
	if ((gs->meta = json_load_file(path, cause)) == NULL)
		goto fail;
	sid = json_str(gs->meta, "sandbox");
	gs->repo = json_str(gs->meta, "repo");
	gs->base = json_str(gs->meta, "base_commit");
	gs->branch = json_str(gs->meta, "branch");
	if (sid == NULL || *sid == '\0' || strchr(sid, '/') != NULL ||
	    *sid == '.') {
		*cause = xprintf("session '%s': session.json names no sandbox",
		    name);
		goto fail;
	}
	if (gs->base == NULL || *gs->base == '\0') {
		*cause = xprintf("session '%s': no base commit (the session was "
		    "not started from a repository)", name);
		goto fail;
	}
	/* [repo ...] sections of holt.conf (git_token, github_api_url). */
	if (gs->repo != NULL && *gs->repo != '\0')
		config_select_repo(gs->repo);
	sbx = paths_join(paths_sandboxes_dir(), sid);
	gs->workspace = paths_join(sbx, "workspace");
	free(sbx);
	/*
	 * The files of a sandbox on another provider are there: workspace/
	 * here is made a copy of them first.
	 */
	if ((sb = sandbox_open(sid, &why)) == NULL)
		free(why);	/* a record of its own is not needed here */
	else if (strcmp(sandbox_provider_spec(sb), "local") != 0 &&
	    sandbox_copy_out(sb, gs->workspace, cause) != 0) {
		sandbox_free(sb);
		goto fail;
	}
	sandbox_free(sb);
	free(path);
	return gs;
fail:
	free(path);
	git_session_free(gs);
	return NULL;
}

const char *
git_session_workspace(struct git_session *gs)
{
	return gs->workspace;
}

const char *
git_session_base(struct git_session *gs)
{
	return gs->base;
}

char *
git_session_summary(struct git_session *gs)
{
	char		*path, *text, *line, *next, *found = NULL;
	const char	*t;
	cJSON		*ev;
	size_t		 len;

	path = paths_join(gs->dir, "events.jsonl");
	text = file_read(path, &len, 1U << 30);
	free(path);
	if (text == NULL)
		return NULL;
	for (line = text; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (strstr(line, "\"assistant.message\"") == NULL)
			continue;
		if ((ev = cJSON_Parse(line)) == NULL)
			continue;	/* a torn last line */
		t = json_str(ev, "type");
		if (t != NULL && strcmp(t, "assistant.message") == 0 &&
		    (t = json_str(ev, "text")) != NULL && *t != '\0') {
			free(found);
			found = xstrdup(t);
		}
		cJSON_Delete(ev);
	}
	free(text);
	return found;
}

void
git_session_pr_defaults(struct git_session *gs, char **title, char **body)
{
	char	*summary = git_session_summary(gs);

	if (summary != NULL) {
		*title = xstrndup(summary, strcspn(summary, "\n"));
		if (strlen(*title) > 72) {
			size_t	 n = 72;

			/* Not in the middle of a UTF-8 character. */
			while (n > 0 && ((unsigned char)(*title)[n] & 0xc0) ==
			    0x80)
				n--;
			(*title)[n] = '\0';
		}
		/* GitHub refuses a body over 65536 characters. */
		if (strlen(summary) > 60000) {
			size_t	 n = 60000;

			while (n > 0 && ((unsigned char)summary[n] & 0xc0) ==
			    0x80)
				n--;
			summary[n] = '\0';
			*body = xprintf("%s\n\n(cut: the summary is longer)",
			    summary);
			free(summary);
		} else
			*body = summary;
	} else {
		*title = xprintf("holt: %s", gs->name);
		*body = xstrdup("");
	}
}

static void
git_session_note(const struct git_pr_opts *o, const char *fmt, ...)
{
	va_list	 ap;
	char	*m;

	if (o->note == NULL)
		return;
	va_start(ap, fmt);
	xvasprintf(&m, fmt, ap);
	va_end(ap);
	o->note(o->note_arg, m);
	free(m);
}

int
git_session_pr(struct git_session *gs, const struct git_pr_opts *o,
    struct github_pr *pr, char **cause)
{
	char		*dtitle = NULL, *dbody = NULL, *msg, *commit = NULL;
	char		*branch, *url = NULL, *clean, *password = NULL;
	char		*owner = NULL, *repo = NULL, *ecause = NULL;
	char		*dbase = NULL;
	const char	*title, *body, *base, *token, *api;
	cJSON		*ev;
	int		 r, rc = -1;

	memset(pr, 0, sizeof *pr);
	git_session_pr_defaults(gs, &dtitle, &dbody);
	title = o->title != NULL ? o->title : dtitle;
	body = o->body != NULL ? o->body : dbody;
	if (o->base != NULL)
		base = o->base;
	else if (gs->branch != NULL && *gs->branch != '\0')
		base = gs->branch;
	else {
		/* The source's checked-out or default branch, else main. */
		if (gs->repo != NULL && *gs->repo == '/')
			dbase = git_default_branch(gs->repo, 0);
		else
			dbase = git_default_branch(gs->workspace, 1);
		base = dbase != NULL ? dbase : "main";
	}
	branch = o->branch != NULL ? xstrdup(o->branch) :
	    xprintf("holt/%s", gs->name);

	/* Commit what is not committed yet; the commit stays if later fails. */
	msg = *body != '\0' ? xprintf("%s\n\n%s", title, body) : xstrdup(title);
	r = git_commit_all(gs->workspace, gs->base, msg, o->author, &commit,
	    cause);
	free(msg);
	if (r == -1)
		goto out;
	if (r == 1)
		git_session_note(o, "committed %.12s", commit);
	if (strncmp(commit, gs->base, strlen(gs->base)) == 0) {
		*cause = xprintf("no changes since the base commit %.12s; "
		    "nothing to propose", gs->base);
		goto out;
	}

	if (o->local) {
		if (gs->repo == NULL || *gs->repo != '/') {
			*cause = xprintf("--local needs a session started from "
			    "a local repository (its repo is '%s')",
			    gs->repo != NULL ? gs->repo : "");
			goto out;
		}
		if (git_push_local(gs->workspace, commit, branch, gs->repo,
		    cause) != 0)
			goto out;
		git_session_note(o, "pushed branch '%s' to '%s'", branch,
		    gs->repo);
		rc = 0;
		goto out;
	}
	if (gs->repo == NULL || *gs->repo == '\0') {
		*cause = xstrdup("the session has no repository to push to");
		goto out;
	}
	if (*gs->repo == '/') {
		if ((url = git_origin_url(gs->repo, cause)) == NULL)
			goto out;
	} else
		url = xstrdup(gs->repo);
	/* A token written into the URL is used, never shown. */
	clean = git_url_strip(url, &password);
	free(url);
	url = clean;
	token = password != NULL ? password : git_token();
	if (github_parse_url(url, &owner, &repo) != 0) {
		*cause = xprintf("repository '%s': cannot tell owner and name "
		    "from it", url);
		goto out;
	}
	git_session_note(o, "pushing branch '%s' to '%s'", branch, url);
	if (git_push_branch(gs->workspace, commit, branch, url, token,
	    cause) != 0)
		goto out;
	if ((api = getenv("HOLT_GITHUB_API")) == NULL || *api == '\0')
		api = config_get("github_api_url");
	if (github_pr_open(api, token, owner, repo, branch, base, title, body,
	    o->draft, pr, cause) != 0)
		goto out;
	if (pr->existing)
		git_session_note(o, "a pull request for '%s' is already open; "
		    "the push updated it", branch);
	ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "url", pr->url);
	cJSON_AddNumberToObject(ev, "number", pr->number);
	cJSON_AddStringToObject(ev, "branch", branch);
	cJSON_AddStringToObject(ev, "base", base);
	if (pr->existing)
		cJSON_AddBoolToObject(ev, "existing", 1);
	if (session_event_append(gs->name, "pr.opened", ev, &ecause) != 0) {
		git_session_note(o, "recording the pull request: %s", ecause);
		free(ecause);
	}
	cJSON_Delete(ev);
	rc = 0;
out:
	free(dtitle);
	free(dbody);
	free(dbase);
	free(commit);
	free(branch);
	free(url);
	free(owner);
	free(repo);
	if (password != NULL) {
		explicit_bzero(password, strlen(password));
		free(password);
	}
	return rc;
}
