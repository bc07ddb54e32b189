/*
 * cmd-run.c: holt run --headless, the agent without a screen, for scripts
 * and CI. Events go to standard output as JSON lines (the same objects the
 * server streams to clients); the exit status says how the run ended.
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent.h"
#include "otlp.h"
#include "session.h"

struct run_state {
	struct event_base	*base;
	struct agent		*agent;
	int			 ask_stdin;
	const char		*reason;
	const char		*source;
	char			*reason_buf;
	struct event		*ev_stdin;
	struct event		*ev_int;
	struct event		*ev_term;
	int			 waiting;	/* for a line on stdin */
	int			 dispatching;	/* the loop runs */
	int			 eof;
	struct buf		 line;
	struct event		*ev_answer;
};

static void	run_answer(evutil_socket_t, short, void *);

static void
run_print(void *arg, const cJSON *ev)
{
	struct run_state	*rs = arg;
	char			*s = json_print(ev);
	const char		*type = json_str(ev, "type");

	utf8_vis_print(stdout, UTF8_VIS_JSON, "%s\n", s);
	fflush(stdout);
	free(s);
	if (rs->ask_stdin && type != NULL &&
	    strcmp(type, "approval.needed") == 0) {
		const char *what = json_str(ev, "command");
		if (what == NULL)
			what = json_str(ev, "path");
		utf8_vis_print(stderr, 0, "holt: approve %s '%s'? "
		    "[allow/deny/always] ", json_str(ev, "command") != NULL ?
		    "command" : "write to", what != NULL ? what : "?");
		fflush(stderr);
		rs->waiting = 1;
		event_active(rs->ev_answer, EV_TIMEOUT, 0);
	}
}

static void
run_finished(void *arg, const char *reason, const char *source)
{
	struct run_state	*rs = arg;

	free(rs->reason_buf);
	rs->reason_buf = xprintf("%s%c%s", reason, '\0', source != NULL ?
	    source : "");
	rs->reason = rs->reason_buf;
	rs->source = rs->reason_buf + strlen(reason) + 1;
	if (rs->dispatching)
		event_base_loopexit(rs->base, NULL);
}

/* Answer a waiting approval with the next line of stdin, if there is one. */
static void
run_answer(evutil_socket_t fd, short what, void *arg)
{
	struct run_state	*rs = arg;
	char			*nl, *cause = NULL;
	const char		*d;

	while (rs->waiting) {
		nl = rs->line.len > 0 ? memchr(rs->line.data, '\n', rs->line.len) :
		    NULL;
		if (nl == NULL) {
			if (!rs->eof)
				return;
			/* No one left to answer: what is asked is denied. */
			rs->waiting = 0;
			if (agent_approve(rs->agent, NULL, "deny", NULL,
			    "no answer (end of input)", NULL, 0, "stdin",
			    &cause) != 0)
				free(cause);
			return;
		}
		*nl = '\0';
		d = rs->line.data;
		if (strcmp(d, "y") == 0 || strcmp(d, "yes") == 0)
			d = "allow";
		else if (strcmp(d, "n") == 0 || strcmp(d, "no") == 0)
			d = "deny";
		else if (strcmp(d, "a") == 0)
			d = "always";
		if (agent_approve(rs->agent, NULL, d, NULL, NULL, NULL, 0, "stdin",
		    &cause) != 0) {
			utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
			free(cause);
			cause = NULL;
		} else
			rs->waiting = 0;
		buf_remove_front(&rs->line, (size_t)(nl - rs->line.data) + 1);
	}
}

static void
run_stdin(evutil_socket_t fd, short what, void *arg)
{
	struct run_state	*rs = arg;
	char			 tmp[512];
	ssize_t			 n;

	n = read(fd, tmp, sizeof tmp);
	if (n <= 0) {
		event_del(rs->ev_stdin);
		rs->eof = 1;
		if (rs->line.len > 0 && rs->line.data[rs->line.len - 1] != '\n')
			buf_addc(&rs->line, '\n');
	} else
		buf_add(&rs->line, tmp, (size_t)n);
	run_answer(-1, 0, rs);
}

static void
run_sigint(evutil_socket_t fd, short what, void *arg)
{
	struct run_state	*rs = arg;

	agent_interrupt(rs->agent, "signal");
}

static int
run_exit_status(const char *reason, const char *source)
{
	if (reason == NULL)
		return EXIT_ERR;
	if (strcmp(reason, "done") == 0)
		return EXIT_OK;
	if (strcmp(reason, "step_limit") == 0 || strcmp(reason, "budget") == 0)
		return EXIT_LIMIT;
	if (strcmp(reason, "denied") == 0)
		return EXIT_DENIED;
	if (strcmp(reason, "interrupted") == 0)
		return 130;
	if (source != NULL && strcmp(source, "sandbox") == 0)
		return EXIT_SANDBOX;
	return EXIT_MODEL;
}

static void
run_progress(void *arg, const char *msg)
{
	fprintf(stderr, "holt: %s\r", msg);
}

static const char run_usage_text[] =
    "usage: holt run [-s NAME] [--repo PATH|URL] [--branch B] [--depth N]\n"
    "                [--model M] [--base-url URL] [--mode manual|auto|strict|trust]\n"
    "                [--ask deny|stdin] [--steps N] [--test-command CMD]\n"
    "                [--net off|on|policy] [--provider P] --headless "
    "TASK...\n"
    "       holt run --resume NAME [--headless] [--ask deny|stdin] [TASK...]\n"
    "\n"
    "Run the agent without a screen: events as JSON lines on standard output,\n"
    "a final run.finished. Exit status: 0 done, 3 step or budget limit,\n"
    "4 stopped by a denial, 5 model error, 6 sandbox error, 2 usage.\n";

static int
cmd_run_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "repo", required_argument, NULL, 'r' },
		{ "branch", required_argument, NULL, 'B' },
		{ "depth", required_argument, NULL, 'D' },
		{ "model", required_argument, NULL, 'm' },
		{ "base-url", required_argument, NULL, 'u' },
		{ "mode", required_argument, NULL, 'M' },
		{ "ask", required_argument, NULL, 'a' },
		{ "steps", required_argument, NULL, 'n' },
		{ "test-command", required_argument, NULL, 'T' },
		{ "net", required_argument, NULL, 'N' },
		{ "provider", required_argument, NULL, 'P' },
		{ "headless", no_argument, NULL, 'H' },
		{ "resume", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct session_new	 sn;
	struct run_state	 rs;
	struct agent_cb		 cb = { run_print, NULL, run_finished };
	struct buf		 task = BUF_INIT;
	const char		*resume = NULL, *ask = "deny";
	char			*name = NULL, *cause = NULL;
	int			 ch, headless = 0, i, rc;

	memset(&sn, 0, sizeof sn);
	memset(&rs, 0, sizeof rs);
	while ((ch = getopt_long(argc, argv, "+s:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'a':
			ask = optarg;
			if (strcmp(ask, "deny") != 0 && strcmp(ask, "stdin") != 0) {
				fprintf(stderr, "holt run: --ask '%s': deny or "
				    "stdin\n", ask);
				return EXIT_USAGE;
			}
			break;
		case 'H':
			headless = 1;
			break;
		case 'R':
			resume = optarg;
			break;
		case 'h':
			fputs(run_usage_text, stdout);
			return EXIT_OK;
		default:
			switch (session_new_option(&sn, ch, optarg, &cause)) {
			case 1:
				continue;
			case -1:
				utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt run: %s\n", cause);
				free(cause);
				return EXIT_USAGE;
			}
			goto usage;
		}
	}
	for (i = optind; i < argc; i++) {
		if (task.len > 0)
			buf_addc(&task, ' ');
		buf_adds(&task, argv[i]);
	}
	if (!headless && resume == NULL) {
		fprintf(stderr, "holt run: without --headless, use 'holt new' "
		    "(the full screen)\n");
		buf_release(&task);
		return EXIT_USAGE;
	}
	if (resume == NULL && task.len == 0) {
		fprintf(stderr, "holt run: a TASK is needed\n");
		goto usage;
	}

	secret_init();
	if (resume != NULL && (sn.repo != NULL || sn.branch != NULL ||
	    sn.depth != 0 || sn.model != NULL || sn.base_url != NULL ||
	    sn.net != NULL || sn.test_command != NULL || sn.name != NULL ||
	    sn.provider != NULL)) {
		/* Said rather than ignored: they shape a new session only. */
		utf8_vis_print(stderr, 0, "holt run: session '%s': --resume "
		    "keeps the session's repository, model, base URL, network "
		    "and test command; of the session options it takes --mode "
		    "and --steps\n", resume);
		buf_release(&task);
		return EXIT_USAGE;
	}
	if (resume != NULL) {
		if (!session_exists(resume)) {
			fprintf(stderr, "holt: session '%s': no such session\n",
			    resume);
			buf_release(&task);
			return EXIT_USAGE;
		}
		name = xstrdup(resume);
	} else {
		sn.task = task.data;
		if (isatty(STDERR_FILENO))
			sn.progress = run_progress;
		sn.headless = 1;
		if ((name = session_create(&sn, &cause)) == NULL) {
			utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
			rc = strncmp(cause, "sandbox", 7) == 0 ? EXIT_SANDBOX :
			    EXIT_USAGE;
			free(cause);
			buf_release(&task);
			return rc;
		}
	}

	otlp_export_enable();	/* otel_endpoint: spans sent live */
	rs.base = event_base_new();
	rs.ask_stdin = strcmp(ask, "stdin") == 0;
	rs.agent = agent_open(name, rs.base, &cb, &rs, &cause);
	if (rs.agent == NULL) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		rc = strstr(cause, "sandbox") != NULL ? EXIT_SANDBOX : EXIT_ERR;
		free(cause);
		event_base_free(rs.base);
		free(name);
		buf_release(&task);
		return rc;
	}
	agent_set_ask(rs.agent, rs.ask_stdin ? AGENT_ASK_WAIT : AGENT_ASK_DENY);
	if (sn.steps > 0)
		agent_set_steps(rs.agent, sn.steps);
	if (resume != NULL && sn.mode != NULL &&
	    agent_set_mode(rs.agent, sn.mode, &cause) != 0) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt run: %s\n", cause);
		free(cause);
		cause = NULL;
	}
	rs.ev_answer = event_new(rs.base, -1, 0, run_answer, &rs);
	if (rs.ask_stdin) {
		rs.ev_stdin = event_new(rs.base, STDIN_FILENO,
		    EV_READ | EV_PERSIST, run_stdin, &rs);
		event_add(rs.ev_stdin, NULL);
	}
	rs.ev_int = evsignal_new(rs.base, SIGINT, run_sigint, &rs);
	event_add(rs.ev_int, NULL);
	rs.ev_term = evsignal_new(rs.base, SIGTERM, run_sigint, &rs);
	event_add(rs.ev_term, NULL);

	if (resume == NULL) {
		/* The events of creation come first on the stream too. */
		cJSON *events, *ev;
		char *warning = NULL;
		if ((events = eventlog_read(name, &warning, &cause)) != NULL) {
			cJSON_ArrayForEach(ev, events)
				run_print(&rs, ev);
			cJSON_Delete(events);
		} else
			free(cause);
		free(warning);
		cause = NULL;
	}
	agent_start(rs.agent);
	if (agent_get_state(rs.agent) == AGENT_WAITING) {
		/*
		 * An approval was pending when the last process stopped:
		 * agent_start asked it again (run_print prompts for stdin).
		 */
		if (!rs.ask_stdin && agent_approve(rs.agent, NULL, "deny", NULL,
		    "no one to ask (--ask deny)", NULL, 0, "policy", &cause) != 0) {
			free(cause);
			cause = NULL;
		}
	}
	if (resume != NULL && task.len > 0) {
		rs.reason = NULL;	/* a run that ended as it opened */
		if (agent_message(rs.agent, task.data, "user", &cause) != 0) {
			utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
			free(cause);
		}
	}
	if (rs.reason != NULL) {
		/* It ended as it opened (its final answer was logged). */
		rc = run_exit_status(rs.reason, rs.source);
	} else if (!agent_run_active(rs.agent)) {
		fprintf(stderr, "holt: session '%s' has no unfinished run; "
		    "give a TASK to go on with it\n", name);
		rc = EXIT_USAGE;
	} else {
		rs.dispatching = 1;
		event_base_dispatch(rs.base);
		rc = run_exit_status(rs.reason, rs.source);
	}
	otlp_export_stop(OTLP_FLUSH_MS);	/* what is queued, bounded */
	agent_free(rs.agent);
	if (rs.ev_stdin != NULL)
		event_free(rs.ev_stdin);
	event_free(rs.ev_int);
	event_free(rs.ev_term);
	event_free(rs.ev_answer);
	event_base_free(rs.base);
	free(rs.reason_buf);
	buf_release(&rs.line);
	buf_release(&task);
	free(name);
	return rc;

usage:
	fputs(run_usage_text, stderr);
	buf_release(&task);
	return EXIT_USAGE;
}

const struct cmd_entry cmd_run_entry = {
	"run", "[options] --headless TASK... | --resume NAME [TASK...]",
	"run the agent without a screen", cmd_run_exec
};
