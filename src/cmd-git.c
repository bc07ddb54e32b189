/*
 * cmd-git.c: holt diff, holt commit and holt pr: review a session's changes
 * against its base commit and ship them (git.c, github.c). They work on the
 * session's files directly (session.json, the sandbox's workspace), so they
 * need no server.
 */
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holt.h"
#include "git.h"

extern const struct cmd_entry cmd_diff_entry, cmd_commit_entry, cmd_pr_entry;

/* Open -t NAME's session; prints the error. 0 ok, else the exit status. */
static int
cmd_git_session(const char *name, struct git_session **gs)
{
	char	*cause = NULL;
	int	 unknown;

	if ((*gs = git_session_open(name, &unknown, &cause)) != NULL)
		return 0;
	utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
	free(cause);
	return unknown ? EXIT_USAGE : EXIT_ERR;
}

static void
cmd_git_note(void *arg, const char *msg)
{
	utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", msg);
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
	struct git_session *s;
	const char	*name = NULL, *nc, *ws, *base;
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
	/* A sandbox on another provider: git runs there. */
	if ((r = git_remote_diff(name, stat, json, stdout, &cause)) != 0) {
		if (r == 1)
			return EXIT_OK;
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: session '%s': %s\n",
		    name, cause);
		free(cause);
		return EXIT_ERR;
	}
	if ((r = cmd_git_session(name, &s)) != 0)
		return r;
	ws = git_session_workspace(s);
	base = git_session_base(s);
	if (json) {
		if ((j = git_diff(ws, base, &cause)) != NULL) {
			text = cJSON_PrintUnformatted(j);
			utf8_vis_print(stdout, UTF8_VIS_JSON, "%s\n", text);
			free(text);
			cJSON_Delete(j);
		}
	} else if (stat) {
		struct winsize	 w;
		int		 width = 80;

		/* As git: the terminal's width, else 80. */
		if (isatty(STDOUT_FILENO) &&
		    ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0)
			width = w.ws_col;
		git_print_stat(ws, base, stdout, width, &cause);
	} else {
		nc = getenv("NO_COLOR");
		colour = isatty(STDOUT_FILENO) && (nc == NULL || *nc == '\0');
		git_print_diff(ws, base, stdout, colour, &cause);
	}
	git_session_free(s);
	if (cause != NULL) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: session '%s': %s\n", name, cause);
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
	struct git_session *s;
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
	if ((r = cmd_git_session(name, &s)) != 0)
		return r;
	r = git_commit_all(git_session_workspace(s), git_session_base(s), msg,
	    author, &commit, &cause);
	git_session_free(s);
	if (r == -1) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: session '%s': %s\n", name, cause);
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
	struct git_session *s;
	struct git_pr_opts o;
	struct github_pr pr;
	const char	*name = NULL, *title = NULL, *body = NULL;
	const char	*body_file = NULL, *branch = NULL, *base = NULL;
	char		*cause = NULL, *fbody = NULL;
	size_t		 len;
	int		 ch, r, draft = 0, local = 0, rc;

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
			branch = optarg;
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
			    "                    came from; open nothing\n"
			    "The token is HOLT_GIT_TOKEN, GITHUB_TOKEN or "
			    "git_token (holt.conf); the API\n"
			    "is github_api_url (holt.conf) or HOLT_GITHUB_API.\n");
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
	if ((r = cmd_git_session(name, &s)) != 0) {
		free(fbody);
		return r;
	}
	memset(&o, 0, sizeof o);
	o.title = title;
	o.body = body;
	o.branch = branch;
	o.base = base;
	o.draft = draft;
	o.local = local;
	o.note = cmd_git_note;
	if (git_session_pr(s, &o, &pr, &cause) != 0) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: session '%s': %s\n", name, cause);
		free(cause);
		rc = EXIT_ERR;
	} else {
		if (pr.url != NULL)
			printf("%s\n", pr.url);
		github_pr_release(&pr);
		rc = EXIT_OK;
	}
	git_session_free(s);
	free(fbody);
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
