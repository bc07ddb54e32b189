/*
 * cmd-git.c: holt diff, holt commit and holt pr: review a session's changes
 * against its base commit and ship them (git.c, github.c). They work on the
 * session's files directly (session.json, the sandbox's workspace), so they
 * need no server.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holt.h"
#include "git.h"
#include "session.h"

extern const struct cmd_entry cmd_diff_entry, cmd_commit_entry, cmd_pr_entry;

struct gsession {
	char	*name;
	char	*dir;
	char	*workspace;
	char	*repo;
	char	*base;
	char	*branch;
	cJSON	*json;
};

static void
gsession_free(struct gsession *s)
{
	free(s->dir);
	free(s->workspace);
	cJSON_Delete(s->json);
	memset(s, 0, sizeof *s);
}

/* Load a session's metadata. -1: no such session (exit 2), -2: broken. */
static int
gsession_load(const char *name, struct gsession *s, char **cause)
{
	char		*path, *sbx;
	const char	*sid;

	memset(s, 0, sizeof *s);
	if (*name == '\0' || *name == '.' || strchr(name, '/') != NULL) {
		*cause = xprintf("session '%s': not a session name", name);
		return -1;
	}
	s->name = (char *)name;
	s->dir = paths_join(paths_sessions_dir(), name);
	path = paths_join(s->dir, "session.json");
	if (access(path, F_OK) != 0) {
		*cause = xprintf("session '%s': no such session (holt ls lists "
		    "them)", name);
		free(path);
		gsession_free(s);
		return -1;
	}
	s->json = json_load_file(path, cause);
	free(path);
	if (s->json == NULL) {
		gsession_free(s);
		return -2;
	}
	sid = json_str(s->json, "sandbox");
	s->repo = (char *)json_str(s->json, "repo");
	s->base = (char *)json_str(s->json, "base_commit");
	s->branch = (char *)json_str(s->json, "branch");
	if (sid == NULL || *sid == '\0' || strchr(sid, '/') != NULL ||
	    *sid == '.') {
		*cause = xprintf("session '%s': session.json names no sandbox",
		    name);
		gsession_free(s);
		return -2;
	}
	if (s->base == NULL || *s->base == '\0') {
		*cause = xprintf("session '%s': no base commit (the session was "
		    "not started from a repository)", name);
		gsession_free(s);
		return -2;
	}
	sbx = paths_join(paths_sandboxes_dir(), sid);
	s->workspace = paths_join(sbx, "workspace");
	free(sbx);
	return 0;
}

static int
gsession_exit(int r)
{
	return r == -1 ? EXIT_USAGE : EXIT_ERR;
}

/* The text of the last assistant.message of the session's log, or NULL. */
static char *
git_last_summary(struct gsession *s)
{
	char		*path, *text, *line, *next, *found = NULL;
	const char	*t;
	cJSON		*ev;
	size_t		 len;

	path = paths_join(s->dir, "events.jsonl");
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
			continue;
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

static void
cmd_git_usage(const struct cmd_entry *ce, const char *more)
{
	cmd_usage(ce, stdout);
	printf("%s", more);
}

/* --- holt diff --- */

static int
cmd_diff_exec(int argc, char **argv)
{
	const struct option longopts[] = {
		{ "stat", no_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct gsession	 s;
	const char	*name = NULL, *nc;
	char		*cause = NULL, *text;
	cJSON		*j;
	int		 ch, stat = 0, json = 0, r, colour;

	while ((ch = getopt_long(argc, argv, "t:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 't':
			name = optarg;
			break;
		case 's':
			stat = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			cmd_git_usage(&cmd_diff_entry,
			    "Show the session's changes against its base commit: "
			    "staged, unstaged and\nnew files, deletions, renames, "
			    "binary files and mode changes.\n"
			    "  -t NAME   the session\n"
			    "  --stat    a summary, as git diff --stat\n"
			    "  --json    the changes as JSON (holt(1))\n");
			return EXIT_OK;
		default:
			cmd_usage(&cmd_diff_entry, stderr);
			return EXIT_USAGE;
		}
	}
	if (name == NULL || optind != argc || (stat && json)) {
		cmd_usage(&cmd_diff_entry, stderr);
		return EXIT_USAGE;
	}
	if ((r = gsession_load(name, &s, &cause)) != 0) {
		fprintf(stderr, "holt: %s\n", cause);
		free(cause);
		return gsession_exit(r);
	}
	if (json) {
		if ((j = git_diff(s.workspace, s.base, &cause)) != NULL) {
			text = cJSON_PrintUnformatted(j);
			printf("%s\n", text);
			free(text);
			cJSON_Delete(j);
		}
	} else if (stat) {
		git_print_stat(s.workspace, s.base, stdout, 80, &cause);
	} else {
		nc = getenv("NO_COLOR");
		colour = isatty(STDOUT_FILENO) && (nc == NULL || *nc == '\0');
		git_print_diff(s.workspace, s.base, stdout, colour, &cause);
	}
	gsession_free(&s);
	if (cause != NULL) {
		fprintf(stderr, "holt: session '%s': %s\n", name, cause);
		free(cause);
		return EXIT_ERR;
	}
	return EXIT_OK;
}

/* --- holt commit --- */

static int
cmd_commit_exec(int argc, char **argv)
{
	const struct option longopts[] = {
		{ "author", required_argument, NULL, 'a' },
		{ "message", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct gsession	 s;
	const char	*name = NULL, *msg = NULL, *author = NULL;
	char		*cause = NULL, *commit = NULL, *n, *e;
	int		 ch, r;

	while ((ch = getopt_long(argc, argv, "t:m:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 't':
			name = optarg;
			break;
		case 'm':
			msg = optarg;
			break;
		case 'a':
			author = optarg;
			break;
		case 'h':
			cmd_git_usage(&cmd_commit_entry,
			    "Commit everything the session changed in its "
			    "workspace (as git add -A).\n"
			    "  -t NAME             the session\n"
			    "  -m MESSAGE          the commit message\n"
			    "  --author 'N <E>'    the author (default: your "
			    "global git identity)\n");
			return EXIT_OK;
		default:
			cmd_usage(&cmd_commit_entry, stderr);
			return EXIT_USAGE;
		}
	}
	if (name == NULL || msg == NULL || optind != argc) {
		cmd_usage(&cmd_commit_entry, stderr);
		return EXIT_USAGE;
	}
	if (*msg == '\0') {
		fprintf(stderr, "holt: commit: the message is empty\n");
		return EXIT_USAGE;
	}
	if (author != NULL) {
		if (git_parse_author(author, &n, &e) != 0) {
			fprintf(stderr, "holt: author '%s': expected 'Name "
			    "<email>'\n", author);
			return EXIT_USAGE;
		}
		free(n);
		free(e);
	}
	if ((r = gsession_load(name, &s, &cause)) != 0) {
		fprintf(stderr, "holt: %s\n", cause);
		free(cause);
		return gsession_exit(r);
	}
	r = git_commit_all(s.workspace, s.base, msg, author, &commit, &cause);
	gsession_free(&s);
	if (r == -1) {
		fprintf(stderr, "holt: session '%s': %s\n", name, cause);
		free(cause);
		return EXIT_ERR;
	}
	if (r == 0) {
		fprintf(stderr, "holt: session '%s': nothing to commit\n", name);
		free(commit);
		return EXIT_ERR;
	}
	printf("%.12s\n", commit);
	free(commit);
	return EXIT_OK;
}

/* --- holt pr --- */

static int
cmd_pr_local(struct gsession *s, const char *commit, const char *branch)
{
	char	*cause = NULL;

	if (s->repo == NULL || *s->repo == '\0' || strstr(s->repo, "://") ||
	    *s->repo != '/') {
		fprintf(stderr, "holt: session '%s': --local needs a session "
		    "started from a local repository (its repo is '%s')\n",
		    s->name, s->repo != NULL ? s->repo : "");
		return EXIT_USAGE;
	}
	if (git_push_local(s->workspace, commit, branch, s->repo,
	    &cause) != 0) {
		fprintf(stderr, "holt: session '%s': %s\n", s->name, cause);
		free(cause);
		return EXIT_ERR;
	}
	printf("pushed branch '%s' to '%s'\n", branch, s->repo);
	return EXIT_OK;
}

static int
cmd_pr_exec(int argc, char **argv)
{
	const struct option longopts[] = {
		{ "title", required_argument, NULL, 'T' },
		{ "body", required_argument, NULL, 'b' },
		{ "body-file", required_argument, NULL, 'B' },
		{ "branch", required_argument, NULL, 'r' },
		{ "base", required_argument, NULL, 'a' },
		{ "draft", no_argument, NULL, 'd' },
		{ "local", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct gsession	 s;
	struct github_pr pr;
	const char	*name = NULL, *title = NULL, *body = NULL;
	const char	*body_file = NULL, *branch_opt = NULL, *base = NULL;
	const char	*api, *token;
	char		*cause = NULL, *summary = NULL, *dtitle = NULL;
	char		*fbody = NULL, *msg, *commit = NULL, *branch = NULL;
	char		*url = NULL, *owner = NULL, *repo = NULL;
	char		*clean, *password = NULL;
	cJSON		*ev;
	size_t		 len;
	int		 ch, r, draft = 0, local = 0, rc = EXIT_ERR;

	while ((ch = getopt_long(argc, argv, "t:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 't':
			name = optarg;
			break;
		case 'T':
			title = optarg;
			break;
		case 'b':
			body = optarg;
			break;
		case 'B':
			body_file = optarg;
			break;
		case 'r':
			branch_opt = optarg;
			break;
		case 'a':
			base = optarg;
			break;
		case 'd':
			draft = 1;
			break;
		case 'l':
			local = 1;
			break;
		case 'h':
			cmd_git_usage(&cmd_pr_entry,
			    "Commit the session's changes if there are any, push "
			    "them to a branch and open\na pull request "
			    "(POST /repos/{owner}/{repo}/pulls).\n"
			    "  -t NAME           the session\n"
			    "  --title T         the title (default: the first "
			    "line of the agent's summary)\n"
			    "  --body B          the description (default: the "
			    "agent's summary)\n"
			    "  --body-file F     the description from a file\n"
			    "  --branch B        the branch (default: "
			    "holt/SESSION)\n"
			    "  --base B          the branch to merge into "
			    "(default: the session's)\n"
			    "  --draft           open a draft\n"
			    "  --local           push the branch into the local "
			    "repository the session\n"
			    "                    came from; open nothing\n");
			return EXIT_OK;
		default:
			cmd_usage(&cmd_pr_entry, stderr);
			return EXIT_USAGE;
		}
	}
	if (name == NULL || optind != argc || (body != NULL &&
	    body_file != NULL)) {
		cmd_usage(&cmd_pr_entry, stderr);
		return EXIT_USAGE;
	}
	if (body_file != NULL) {
		if ((fbody = file_read(body_file, &len, 1U << 20)) == NULL) {
			fprintf(stderr, "holt: body file '%s': %s\n", body_file,
			    strerror(errno));
			return EXIT_USAGE;
		}
		body = fbody;
	}
	if ((r = gsession_load(name, &s, &cause)) != 0) {
		fprintf(stderr, "holt: %s\n", cause);
		free(cause);
		free(fbody);
		return gsession_exit(r);
	}

	/* Title and body default to the agent's last summary. */
	summary = git_last_summary(&s);
	if (title == NULL) {
		if (summary != NULL) {
			dtitle = xstrndup(summary, strcspn(summary, "\n"));
			if (strlen(dtitle) > 72)
				dtitle[72] = '\0';
		} else
			dtitle = xprintf("holt: %s", name);
		title = dtitle;
	}
	if (body == NULL)
		body = summary != NULL ? summary : "";
	if (base == NULL)
		base = s.branch != NULL && *s.branch != '\0' ? s.branch : "main";
	branch = branch_opt != NULL ? xstrdup(branch_opt) :
	    xprintf("holt/%s", name);

	/* Commit what is not committed yet; the commit stays if later fails. */
	msg = *body != '\0' ? xprintf("%s\n\n%s", title, body) : xstrdup(title);
	r = git_commit_all(s.workspace, s.base, msg, NULL, &commit, &cause);
	free(msg);
	if (r == -1)
		goto fail;
	if (r == 1)
		fprintf(stderr, "holt: committed %.12s\n", commit);
	if (strncmp(commit, s.base, strlen(s.base)) == 0) {
		cause = xprintf("no changes since the base commit %.12s; "
		    "nothing to propose", s.base);
		goto fail;
	}

	if (local) {
		rc = cmd_pr_local(&s, commit, branch);
		goto out;
	}
	if (s.repo == NULL || *s.repo == '\0') {
		cause = xstrdup("the session has no repository to push to");
		goto fail;
	}
	if (*s.repo == '/') {
		if ((url = git_origin_url(s.repo, &cause)) == NULL)
			goto fail;
	} else
		url = xstrdup(s.repo);
	/* A token written into the URL is used, never shown. */
	clean = git_url_strip(url, &password);
	free(url);
	url = clean;
	token = password != NULL ? password : git_token();
	if (github_parse_url(url, &owner, &repo) != 0) {
		cause = xprintf("repository '%s': cannot tell owner and name "
		    "from it", url);
		goto fail;
	}
	fprintf(stderr, "holt: pushing branch '%s' to '%s'\n", branch, url);
	if (git_push_branch(s.workspace, commit, branch, url, token,
	    &cause) != 0)
		goto fail;
	if ((api = getenv("HOLT_GITHUB_API")) == NULL || *api == '\0')
		api = config_get("github_api_url");
	if (github_pr_open(api, token, owner, repo, branch, base, title, body,
	    draft, &pr, &cause) != 0)
		goto fail;
	if (pr.existing)
		fprintf(stderr, "holt: a pull request for '%s' is already open; "
		    "the push updated it\n", branch);
	printf("%s\n", pr.url);
	ev = cJSON_CreateObject();
	cJSON_AddStringToObject(ev, "url", pr.url);
	cJSON_AddNumberToObject(ev, "number", pr.number);
	cJSON_AddStringToObject(ev, "branch", branch);
	cJSON_AddStringToObject(ev, "base", base);
	if (pr.existing)
		cJSON_AddBoolToObject(ev, "existing", 1);
	if (session_event_append(name, "pr.opened", ev, &cause) != 0) {
		fprintf(stderr, "holt: session '%s': recording the pull request: "
		    "%s\n", name, cause);
		free(cause);
		cause = NULL;
	}
	cJSON_Delete(ev);
	github_pr_release(&pr);
	rc = EXIT_OK;
	goto out;
fail:
	fprintf(stderr, "holt: session '%s': %s\n", name, cause);
	free(cause);
	rc = EXIT_ERR;
out:
	gsession_free(&s);
	free(summary);
	free(dtitle);
	free(fbody);
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

const struct cmd_entry cmd_diff_entry = {
	"diff", "-t NAME [--stat] [--json]", "show the session's changes",
	cmd_diff_exec
};

const struct cmd_entry cmd_commit_entry = {
	"commit", "-t NAME -m MESSAGE [--author 'NAME <EMAIL>']",
	"commit the session's changes", cmd_commit_exec
};

const struct cmd_entry cmd_pr_entry = {
	"pr", "-t NAME [--title T] [--body B | --body-file F] [--branch B] "
	"[--base B] [--draft] [--local]", "push and open a pull request",
	cmd_pr_exec
};
