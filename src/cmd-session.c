/*
 * cmd-session.c: the session commands, thin clients of the server:
 * new, attach, ls, send, approve, interrupt, log, kill-session, and holt
 * with no command.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "client.h"
#include "session.h"
#include "ui.h"

/*
 * A session named NAME, or else the one session whose name starts with it
 * (as tmux's -t does). Returns NAME itself when nothing matches, so the
 * error names what was typed.
 */
static char *
cmd_match_session(const char *name, char **cause)
{
	char		**names, *found = NULL;
	size_t		 n, i, len = strlen(name), hits = 0;
	struct buf	 all = BUF_INIT;

	if (session_exists(name))
		return xstrdup(name);
	names = session_list(&n);
	for (i = 0; i < n; i++) {
		if (strncmp(names[i], name, len) == 0) {
			buf_addf(&all, "%s%s", hits++ > 0 ? ", " : "", names[i]);
			free(found);
			found = xstrdup(names[i]);
		}
		free(names[i]);
	}
	free(names);
	if (hits > 1) {
		*cause = xprintf("session '%s': ambiguous (%s)", name,
		    buf_str(&all));
		free(found);
		found = NULL;
	} else if (hits == 0)
		found = xstrdup(name);
	buf_release(&all);
	return found;
}

/* -t NAME (or a unique start of it), or the session most recently active. */
static char *
cmd_pick_session(const char *name, char **cause)
{
	char		**names, *dir, *path, *best = NULL;
	size_t		 n, i;
	struct stat	 sb;
	time_t		 newest = 0;

	if (name != NULL)
		return cmd_match_session(name, cause);
	names = session_list(&n);
	for (i = 0; i < n; i++) {
		dir = session_dir(names[i]);
		path = paths_join(dir, "events.jsonl");
		if (stat(path, &sb) == 0 && (best == NULL || sb.st_mtime >= newest)) {
			free(best);
			best = xstrdup(names[i]);
			newest = sb.st_mtime;
		}
		free(path);
		free(dir);
		free(names[i]);
	}
	free(names);
	if (best == NULL)
		*cause = xstrdup("no sessions (holt new starts one)");
	return best;
}

/* The plain viewer: the snapshot and the live stream as lines. */
static int
cmd_attach_lines(const char *name, int readonly)
{
	cJSON		*req, *msg, *ev;
	char		*cause = NULL;
	struct buf	 b = BUF_INIT;
	const char	*type;
	struct pollfd	 pfd;
	int		 fd, r;

	if ((fd = client_connect(1, &cause)) == -1)
		goto fail;
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "type", "attach");
	cJSON_AddStringToObject(req, "session", name);
	cJSON_AddBoolToObject(req, "readonly", readonly);
	if ((msg = client_call(fd, req, &cause)) == NULL)
		goto fail;
	cJSON_ArrayForEach(ev, cJSON_GetObjectItem(msg, "events")) {
		buf_reset(&b);
		cmd_format_event(ev, &b);
		fputs(buf_str(&b), stdout);
	}
	fflush(stdout);
	cJSON_Delete(msg);
	signal(SIGINT, cmd_on_signal);
	signal(SIGTERM, cmd_on_signal);
	while (!cmd_stop) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		if ((r = frame_read_fd(fd, &msg, &cause)) <= 0)
			break;
		type = json_str(msg, "type");
		if (type != NULL && strcmp(type, "event") == 0) {
			buf_reset(&b);
			cmd_format_event(cJSON_GetObjectItem(msg, "event"), &b);
			fputs(buf_str(&b), stdout);
			fflush(stdout);
		} else if (type != NULL && strcmp(type, "exit") == 0) {
			cJSON_Delete(msg);
			break;
		}
		cJSON_Delete(msg);
	}
	free(cause);
	close(fd);
	buf_release(&b);
	return EXIT_OK;
fail:
	buf_release(&b);
	r = cmd_fail(cause);
	free(cause);
	return r;
}

static int
cmd_attach_to(const char *name, int readonly, int lines, const char *theme)
{
	char	*cause = NULL;
	int	 rc;

	if (!lines && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
		if (tui_main(name, readonly, theme, &cause) != 0) {
			rc = cmd_fail(cause);
			free(cause);
			return rc;
		}
		return EXIT_OK;
	}
	return cmd_attach_lines(name, readonly);
}

static int
cmd_attach_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "lines", no_argument, NULL, 'l' },
		{ "theme", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*target = NULL, *theme = NULL;
	char		*name, *cause = NULL;
	int		 ch, readonly = 0, lines = 0, rc;

	while ((ch = getopt_long(argc, argv, "rt:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			readonly = 1;
			break;
		case 't':
			target = optarg;
			break;
		case 'l':
			lines = 1;
			break;
		case 'T':
			theme = optarg;
			break;
		case 'h':
			printf("usage: holt attach [-r] [-t NAME] [--lines] "
			    "[--theme THEME]\n\nAttach to a session (the most "
			    "recently active one without -t).\n-r: read-only "
			    "(cannot approve or send). --lines: a plain line "
			    "viewer.\n");
			return EXIT_OK;
		default:
			fprintf(stderr, "usage: holt attach [-r] [-t NAME]\n");
			return EXIT_USAGE;
		}
	}
	if ((name = cmd_pick_session(target, &cause)) == NULL) {
		rc = cmd_fail(cause);
		free(cause);
		return rc;
	}
	if (!session_exists(name)) {
		fprintf(stderr, "holt: session '%s': no such session\n", name);
		free(name);
		return EXIT_USAGE;
	}
	rc = cmd_attach_to(name, readonly, lines, theme);
	free(name);
	return rc;
}

const struct cmd_entry cmd_attach_entry = {
	"attach", "[-r] [-t NAME]", "attach to a session", cmd_attach_exec
};

static void
cmd_new_progress(void *arg, const char *msg)
{
	fprintf(stderr, "\rholt: %s\033[K", msg);
}

/* The git repository around the current directory, or NULL. */
static char *
cmd_repo_here(void)
{
	char		 cwd[PATH_MAX], *p, *git, *copy, *dir, *save;
	const char	*ceil = getenv("GIT_CEILING_DIRECTORIES");

	if (getcwd(cwd, sizeof cwd) == NULL)
		return NULL;
	for (;;) {
		/* As git: never look in or above a ceiling directory. */
		if (ceil != NULL && *ceil != '\0') {
			int stop = 0;
			copy = xstrdup(ceil);
			for (dir = strtok_r(copy, ":", &save); dir != NULL;
			    dir = strtok_r(NULL, ":", &save)) {
				size_t n = strlen(dir);
				if (strncmp(cwd, dir, n) == 0 && (cwd[n] == '\0' ||
				    (strlen(cwd) < n)))
					stop = 1;
				if (strlen(cwd) < n && strncmp(dir, cwd,
				    strlen(cwd)) == 0)
					stop = 1;
			}
			free(copy);
			if (stop)
				return NULL;
		}
		git = xprintf("%s/.git", cwd);
		if (access(git, F_OK) == 0) {
			free(git);
			return xstrdup(cwd);
		}
		free(git);
		if ((p = strrchr(cwd, '/')) == NULL || p == cwd)
			return NULL;
		*p = '\0';
	}
}


/* holt with no command: this repository's session, or a new one. */
static int
cmd_default(void)
{
	char		*repo, **names, *cause = NULL, *name = NULL;
	size_t		 n, i;
	cJSON		*meta;
	struct session_new sn;
	int		 rc;
	char		*lsargv[] = { (char *)"ls", NULL };

	if ((repo = cmd_repo_here()) == NULL) {
		printf("usage: holt [COMMAND [ARGS...]]   (holt help lists the "
		    "commands)\n\nNot in a git repository. Start with 'holt "
		    "new --repo PATH', or see 'holt demo'.\n\n");
		fflush(stdout);
		optind = 0;
		return cmd_ls_exec(1, lsargv);
	}
	names = session_list(&n);
	for (i = 0; i < n; i++) {
		if (name == NULL && (meta = session_load(names[i], &cause)) != NULL) {
			if (json_str(meta, "repo") != NULL &&
			    strcmp(json_str(meta, "repo"), repo) == 0)
				name = xstrdup(names[i]);
			cJSON_Delete(meta);
		} else {
			free(cause);
			cause = NULL;
		}
		free(names[i]);
	}
	free(names);
	if (name == NULL) {
		memset(&sn, 0, sizeof sn);
		sn.repo = repo;
		if (isatty(STDERR_FILENO))
			sn.progress = cmd_new_progress;
		secret_init();
		if ((name = session_create(&sn, &cause)) == NULL) {
			if (isatty(STDERR_FILENO))
				fputc('\n', stderr);
			utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
			free(cause);
			free(repo);
			return EXIT_USAGE;
		}
		if (isatty(STDERR_FILENO))
			fprintf(stderr, "\rholt: session '%s' started\033[K\n",
			    name);
	}
	free(repo);
	rc = cmd_attach_to(name, 0, 0, NULL);
	free(name);
	return rc;
}

/*
 * holt new --fork-of NAME -n K TASK: K forks of NAME as it is now, each
 * given TASK, side by side in holt ls (Archil's and E2B's fork, to keep
 * the best). -s PREFIX names them PREFIX-1 ... PREFIX-K.
 */
static int
cmd_new_forks(const char *from, int k, const char *prefix, const char *task)
{
	cJSON	*req, *rep;
	char	*name, *want, *cause = NULL;
	int	 i, rc = EXIT_OK;

	if (task == NULL) {
		fprintf(stderr, "holt new: --fork-of needs a TASK\n");
		return EXIT_USAGE;
	}
	secret_init();
	for (i = 1; i <= k; i++) {
		want = prefix != NULL ? xprintf("%s-%d", prefix, i) : NULL;
		name = session_fork(from, 0, want, &cause);
		free(want);
		if (name == NULL) {
			fprintf(stderr, "holt: %s\n", cause);
			rc = strstr(cause, "no such") != NULL || strstr(cause,
			    "exists") != NULL ? EXIT_USAGE : EXIT_ERR;
			free(cause);
			return rc;
		}
		req = cJSON_CreateObject();
		cJSON_AddStringToObject(req, "text", task);
		if ((rep = cmd_session_request("send", name, req, &rc)) == NULL) {
			free(name);
			return rc;
		}
		cJSON_Delete(rep);
		printf("%s\n", name);
		fflush(stdout);
		free(name);
	}
	return EXIT_OK;
}

static int
cmd_new_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "repo", required_argument, NULL, 'r' },
		{ "branch", required_argument, NULL, 'B' },
		{ "depth", required_argument, NULL, 'D' },
		{ "model", required_argument, NULL, 'm' },
		{ "base-url", required_argument, NULL, 'u' },
		{ "mode", required_argument, NULL, 'M' },
		{ "net", required_argument, NULL, 'N' },
		{ "provider", required_argument, NULL, 'P' },
		{ "steps", required_argument, NULL, 'S' },
		{ "test-command", required_argument, NULL, 'T' },
		{ "fork-of", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct session_new	 sn;
	const char		*fork_of = NULL;
	long			 forks = 1;
	char			*end;
	struct buf		 task = BUF_INIT;
	cJSON			*req, *rep;
	char			*name, *cause = NULL;
	int			 ch, detached = 0, i, rc;

	if (argc == 0)
		return cmd_default();
	memset(&sn, 0, sizeof sn);
	while ((ch = getopt_long(argc, argv, "+ds:n:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			detached = 1;
			break;
		case 'f':
			fork_of = optarg;
			break;
		case 'n':
			forks = strtol(optarg, &end, 10);
			if (*end != '\0' || forks < 1 || forks > 64) {
				fprintf(stderr, "holt new: -n '%s': a number of "
				    "forks from 1 to 64\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			printf("usage: holt new [-d] [-s NAME] [--repo PATH|URL] "
			    "[--branch B] [--depth N]\n                [--model M] "
			    "[--base-url URL] [--mode manual|auto|strict|trust]\n"
			    "                [--net off|on|policy] [--provider P] "
			    "[--steps N] "
			    "[--test-command CMD] [TASK...]\n       holt new "
			    "--fork-of NAME [-n K] [-s NAME] TASK...\n\nStart "
			    "a session "
			    "in a new sandbox and attach to it; -d: do not "
			    "attach\n(print the session's name). With a TASK, the "
			    "agent starts on it at once.\nWith --fork-of, K forks "
			    "of session NAME start on TASK side by side\n(their "
			    "names are printed).\n");
			return EXIT_OK;
		case 'S':
			ch = 'n';	/* --steps is session_new_option's n */
			/* FALLTHROUGH */
		default:
			if ((rc = session_new_option(&sn, ch, optarg, &cause)) == 1)
				continue;
			if (rc == -1) {
				utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt new: %s\n", cause);
				free(cause);
				return EXIT_USAGE;
			}
			fprintf(stderr, "usage: holt new [-d] [-s NAME] "
			    "[options] [TASK...]\n");
			return EXIT_USAGE;
		}
	}
	for (i = optind; i < argc; i++) {
		if (task.len > 0)
			buf_addc(&task, ' ');
		buf_adds(&task, argv[i]);
	}
	sn.task = task.len > 0 ? task.data : NULL;
	if (fork_of != NULL) {
		rc = cmd_new_forks(fork_of, (int)forks, sn.name, sn.task);
		buf_release(&task);
		return rc;
	}
	if (forks != 1) {
		fprintf(stderr, "holt new: -n needs --fork-of\n");
		buf_release(&task);
		return EXIT_USAGE;
	}
	if (isatty(STDERR_FILENO))
		sn.progress = cmd_new_progress;
	secret_init();
	if ((name = session_create(&sn, &cause)) == NULL) {
		if (isatty(STDERR_FILENO) && sn.repo != NULL)
			fputc('\n', stderr);
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		rc = strncmp(cause, "sandbox", 7) == 0 ? EXIT_SANDBOX : EXIT_USAGE;
		free(cause);
		buf_release(&task);
		return rc;
	}
	buf_release(&task);
	if (isatty(STDERR_FILENO) && sn.repo != NULL)
		fprintf(stderr, "\r\033[K");
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "type", "open");
	cJSON_AddStringToObject(req, "session", name);
	if ((rep = client_request(req, 1, &cause)) == NULL) {
		rc = cmd_fail(cause);
		free(cause);
		free(name);
		return rc;
	}
	cJSON_Delete(rep);
	if (detached) {
		printf("%s\n", name);
		free(name);
		return EXIT_OK;
	}
	rc = cmd_attach_to(name, 0, 0, NULL);
	free(name);
	return rc;
}

const struct cmd_entry cmd_new_entry = {
	"new", "[-d] [-s NAME] [--repo PATH] [--model M] [--mode M] "
	"[--net off|on|policy] [TASK...]", "start a session", cmd_new_exec
};
