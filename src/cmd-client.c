/*
 * cmd-client.c: the session commands that only talk to the server or read
 * a log: ls, send, approve, interrupt, log, kill-session, kill-server. They
 * are what scripts and prompts run most, so they stay out of the heavy
 * binary (no libcurl, libgit2 or ncurses to load): see holt-light.c.
 */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "otlp.h"
#include "session.h"

volatile sig_atomic_t	 cmd_stop;

void
cmd_on_signal(int sig)
{
	cmd_stop = 1;
}

int
cmd_fail(const char *cause)
{
	int	 rc = EXIT_ERR;

	utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
	if (strstr(cause, "no such session") != NULL)
		rc = EXIT_USAGE;
	return rc;
}

/* A request to the server about one session. */
cJSON *
cmd_session_request(const char *type, const char *name, cJSON *req, int *rc)
{
	cJSON	*rep;
	char	*cause = NULL;

	if (req == NULL)
		req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "type", type);
	if (name != NULL)
		cJSON_AddStringToObject(req, "session", name);
	if ((rep = client_request(req, 1, &cause)) == NULL) {
		*rc = cmd_fail(cause);
		free(cause);
		return NULL;
	}
	*rc = EXIT_OK;
	return rep;
}

/* Human text of one event, unescaped; cmd_format_event escapes it. */
static void
cmd_format_event_raw(const cJSON *ev, struct buf *b)
{
	const char	*type = json_str(ev, "type"), *s;
	const cJSON	*tc, *args, *d;
	char		*a;

	if (type == NULL)
		return;
	if (strcmp(type, "assistant.delta") == 0)
		return;
	buf_addf(b, "%4.0f ", json_num(ev, "seq", 0));
	if (strcmp(type, "user.message") == 0)
		buf_addf(b, "> %s\n", json_str(ev, "text"));
	else if (strcmp(type, "assistant.message") == 0) {
		s = json_str(ev, "text");
		buf_addf(b, "agent: %s\n", s != NULL && *s != '\0' ? s : "(tools)");
		cJSON_ArrayForEach(tc, cJSON_GetObjectItem(ev, "tool_calls")) {
			args = cJSON_GetObjectItem(tc, "arguments");
			a = args != NULL ? json_print(args) : xstrdup("{}");
			buf_addf(b, "       call %s %s\n", json_str(tc, "name"), a);
			free(a);
		}
	} else if (strcmp(type, "approval.needed") == 0) {
		s = json_str(ev, "command");
		buf_addf(b, "? approval %s: %s %s (verdict %s)\n",
		    json_str(ev, "request_id"), s != NULL ? "run" : "write",
		    s != NULL ? s : json_str(ev, "path"), json_str(ev, "verdict"));
	} else if (strcmp(type, "approval.decided") == 0) {
		buf_addf(b, "  %s %s by %s%s%s\n", json_str(ev, "request_id"),
		    json_str(ev, "decision"), json_str(ev, "by"),
		    json_str(ev, "rule") != NULL ? ", rule " : "",
		    json_str(ev, "rule") != NULL ? json_str(ev, "rule") : "");
		if ((s = json_str(ev, "command")) != NULL)
			buf_addf(b, "       edited by the user to: %s\n"
			    "       the agent's command was: %s\n", s,
			    json_str(ev, "original") ? json_str(ev, "original") :
			    "?");
		if (json_bool(ev, "override", 0))
			buf_addf(b, "       run over the policy's deny (%s)\n",
			    json_str(ev, "denied_by") ? json_str(ev,
			    "denied_by") : "?");
	} else if (strcmp(type, "tool.finished") == 0) {
		s = json_str(ev, "result");
		d = cJSON_GetObjectItem(ev, "denied");
		buf_addf(b, "  %s %s", json_str(ev, "name") ?
		    json_str(ev, "name") : json_str(ev, "call_id"),
		    cJSON_IsObject(d) ? "⊘ denied" :
		    json_bool(ev, "interrupted", 0) ? "interrupted" :
		    json_bool(ev, "error", 0) ? "failed" : "done");
		if (cJSON_IsObject(d))
			buf_addf(b, " by %s%s%s", json_str(d, "by") ?
			    json_str(d, "by") : "?", json_str(d, "rule") ?
			    ", rule " : "", json_str(d, "rule") ?
			    json_str(d, "rule") : "");
		if (cJSON_IsNumber(cJSON_GetObjectItem(ev, "exit_code")))
			buf_addf(b, ", exit %.0f", json_num(ev, "exit_code", 0));
		buf_addf(b, " (%.0f ms)\n", json_num(ev, "duration_ms", 0));
		if (json_str(ev, "command") != NULL)
			buf_addf(b, "       ran: %s\n", json_str(ev, "command"));
		if (s != NULL) {
			size_t n = strlen(s);
			buf_addf(b, "       %.*s%s\n", (int)(n > 300 ? 300 : n), s,
			    n > 300 ? " ..." : "");
		}
	} else if (strcmp(type, "tool.output") == 0 && json_str(ev, "stream") &&
	    strcmp(json_str(ev, "stream"), "cut") == 0)
		buf_addf(b, "  | ··· %.0f bytes (%.0f lines) left out of the log "
		    "···\n", json_num(ev, "omitted_bytes", 0),
		    json_num(ev, "omitted_lines", 0));
	else if (strcmp(type, "tool.output") == 0)
		buf_addf(b, "  | %s", json_str(ev, "data") ? json_str(ev, "data") :
		    "\n");
	else if (strcmp(type, "run.finished") == 0)
		buf_addf(b, "run finished: %s after %.0f steps\n",
		    json_str(ev, "reason"), json_num(ev, "steps", 0));
	else if (strcmp(type, "error") == 0)
		buf_addf(b, "error: %s\n", json_str(ev, "message"));
	else if (strcmp(type, "mcp.failed") == 0)
		buf_addf(b, "mcp server '%s' left out of the run: %s\n",
		    json_str(ev, "server"), json_str(ev, "message"));
	else if (strcmp(type, "model.usage") == 0)
		buf_addf(b, "  tokens %.0f in (%.0f cached), %.0f out, $%.4f%s%s\n",
		    json_num(ev, "input_tokens", 0),
		    json_num(ev, "cached_input_tokens", 0),
		    json_num(ev, "output_tokens", 0), json_num(ev, "cost_usd", 0),
		    json_str(ev, "purpose") != NULL ? ", " : "",
		    json_str(ev, "purpose") != NULL ? json_str(ev, "purpose") : "");
	else if (strcmp(type, "context.compacted") == 0)
		buf_addf(b, "context compacted by %s: %.0f -> %.0f tokens, "
		    "through event %.0f%s\n", json_str(ev, "by"),
		    json_num(ev, "tokens_before", 0),
		    json_num(ev, "tokens_after", 0),
		    json_num(ev, "through_seq", 0),
		    json_str(ev, "fallback") != NULL ? " (no summary)" : "");
	else if (strcmp(type, "conversation.cleared") == 0)
		buf_addf(b, "new conversation (cleared by %s); the model sees "
		    "nothing above\n", json_str(ev, "by"));
	else if (strcmp(type, "model.changed") == 0)
		buf_addf(b, "model %s (was %s), window %.0f tokens\n",
		    json_str(ev, "model"), json_str(ev, "previous"),
		    json_num(ev, "context_window", 0));
	else if (strcmp(type, "instructions.loaded") == 0) {
		buf_adds(b, "instructions:");
		cJSON_ArrayForEach(tc, cJSON_GetObjectItem(ev, "files"))
			buf_addf(b, " %s", cJSON_IsString(tc) ? tc->valuestring :
			    "?");
		buf_adds(b, cJSON_GetArraySize(cJSON_GetObjectItem(ev, "files"))
		    > 0 ? "\n" : " none\n");
	}
	else if (strcmp(type, "checkpoint.taken") == 0)
		buf_addf(b, "  step %.0f: checkpoint %.0f before %s (%.0f changed, "
		    "%.0f bytes stored)\n", json_num(ev, "step", 0),
		    json_num(ev, "checkpoint", 0), json_str(ev, "name") ?
		    json_str(ev, "name") : "?", json_num(ev, "changed", 0),
		    json_num(ev, "bytes", 0));
	else if (strcmp(type, "session.rewound") == 0)
		buf_addf(b, "rewound to before step %.0f (%s)\n",
		    json_num(ev, "to_step", 0), !json_bool(ev, "files", 1) ?
		    "conversation only" : !json_bool(ev, "conversation", 1) ?
		    "files only" : "files and conversation");
	else if (strcmp(type, "session.forked") == 0)
		buf_addf(b, "forked from session %s%s (sandbox %s)\n",
		    json_str(ev, "from"), cJSON_GetObjectItem(ev, "at_step") ?
		    " before a step" : "", json_str(ev, "sandbox"));
	else if (strcmp(type, "session.created") == 0)
		buf_addf(b, "session %s created (sandbox %s, model %s)\n",
		    json_str(ev, "name"), json_str(ev, "sandbox"),
		    json_str(ev, "model"));
	else
		buf_addf(b, "%s\n", type);
}

/*
 * Human text of one event, for holt log and the line-mode viewer: every
 * byte of it the agent, a command or the model made is escaped, lines and
 * tabs kept.
 */
void
cmd_format_event(const cJSON *ev, struct buf *b)
{
	struct buf	 raw = BUF_INIT;

	cmd_format_event_raw(ev, &raw);
	utf8_vis_add(b, buf_str(&raw), raw.len, UTF8_VIS_TEXT);
	buf_release(&raw);
}

/* How long ago t was, shortly; "-" when it is not known (t is 0). */
static void
cmd_age(char *out, size_t len, time_t now, time_t t)
{
	double	 secs = difftime(now, t);

	if (t == 0) {
		snprintf(out, len, "-");
		return;
	}
	if (secs < 0)
		secs = 0;
	if (secs < 60)
		snprintf(out, len, "%.0fs", secs);
	else if (secs < 3600)
		snprintf(out, len, "%.0fm", secs / 60);
	else if (secs < 86400 * 2)
		snprintf(out, len, "%.0fh", secs / 3600);
	else
		snprintf(out, len, "%.0fd", secs / 86400);
}

static time_t
cmd_parse_time(const char *s)
{
	struct tm	 tm;

	memset(&tm, 0, sizeof tm);
	if (s == NULL || strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) == NULL)
		return 0;
	return timegm(&tm);
}

int
cmd_ls_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	cJSON		*rep, *s, *list;
	char		*out, age[16], act[16], state[32];
	int		 ch, json = 0, rc;
	time_t		 now = time(NULL);

	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			json = 1;
			break;
		case 'h':
			printf("usage: holt ls [--json]\n\nList sessions: name, "
			    "state (working, waiting, idle, finished, error),\n"
			    "sandbox state, age, last activity, steps, cost.\n");
			return EXIT_OK;
		default:
			fprintf(stderr, "usage: holt ls [--json]\n");
			return EXIT_USAGE;
		}
	}
	if ((rep = cmd_session_request("ls", NULL, NULL, &rc)) == NULL)
		return rc;
	list = cJSON_GetObjectItem(rep, "sessions");
	if (json) {
		out = json_print(list);
		utf8_vis_print(stdout, UTF8_VIS_JSON, "%s\n", out);
		free(out);
		cJSON_Delete(rep);
		return EXIT_OK;
	}
	if (cJSON_GetArraySize(list) == 0)
		printf("no sessions (holt new starts one)\n");
	else
		printf("%-20s %-10s %-9s %-5s %-8s %-7s %s\n", "NAME", "STATE",
		    "SANDBOX", "AGE", "ACTIVE", "STEPS", "COST");
	cJSON_ArrayForEach(s, list) {
		cmd_age(age, sizeof age, now,
		    cmd_parse_time(json_str(s, "created")));
		cmd_age(act, sizeof act, now,
		    (time_t)json_num(s, "last_activity", 0));
		snprintf(state, sizeof state, "%s", json_str(s, "state"));
		/* The error may quote the model or the sandbox. */
		utf8_vis_print(stdout, 0,
		    "%-20s %-10s %-9s %-5s %-8s %3.0f/%-3.0f $%.4f%s%s",
		    json_str(s, "name"), state, json_str(s, "sandbox_state") ?
		    json_str(s, "sandbox_state") : "-", age, act,
		    json_num(s, "step", 0), json_num(s, "steps_cap", 0),
		    json_num(s, "cost_usd", 0), json_str(s, "error") ? "  " : "",
		    json_str(s, "error") ? json_str(s, "error") : "");
		putchar('\n');
	}
	cJSON_Delete(rep);
	return EXIT_OK;
}

const struct cmd_entry cmd_ls_entry = {
	"ls", "[--json]", "list sessions", cmd_ls_exec
};

/* -t NAME parsing shared by send, approve, interrupt, kill-session. */
static int
cmd_target(int argc, char **argv, const char *usage, const struct option *lo,
    const char *shortopts, int (*opt)(int, const char *, void *), void *arg,
    const char **name)
{
	int	 ch;

	*name = NULL;
	while ((ch = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		if (ch == 't')
			*name = optarg;
		else if (ch == 'h') {
			printf("usage: holt %s %s\n", argv[0], usage);
			return 1;
		} else if (opt == NULL || opt(ch, optarg, arg) != 0) {
			fprintf(stderr, "usage: holt %s %s\n", argv[0], usage);
			return -1;
		}
	}
	if (*name == NULL) {
		fprintf(stderr, "holt %s: -t NAME is needed\nusage: holt %s %s\n",
		    argv[0], argv[0], usage);
		return -1;
	}
	return 0;
}

/* The words from optind on, with a space between each two. */
static void
cmd_join(struct buf *b, int argc, char **argv)
{
	int	 i;

	for (i = optind; i < argc; i++) {
		if (b->len > 0)
			buf_addc(b, ' ');
		buf_adds(b, argv[i]);
	}
}

static const struct option help_only[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static int
cmd_send_exec(int argc, char **argv)
{
	const char	*name;
	struct buf	 text = BUF_INIT;
	cJSON		*req, *rep;
	int		 r, rc;

	if ((r = cmd_target(argc, argv, "-t NAME MESSAGE...", help_only, "t:h",
	    NULL, NULL, &name)) != 0)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	cmd_join(&text, argc, argv);
	if (text.len == 0) {
		fprintf(stderr, "holt send: a MESSAGE is needed\n");
		return EXIT_USAGE;
	}
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "text", text.data);
	buf_release(&text);
	if ((rep = cmd_session_request("send", name, req, &rc)) == NULL)
		return rc;
	cJSON_Delete(rep);
	return EXIT_OK;
}

const struct cmd_entry cmd_send_entry = {
	"send", "-t NAME MESSAGE", "send a message to the agent", cmd_send_exec
};

struct approve_opts {
	const char	*id;
	const char	*rule;
	const char	*message;
	const char	*command;
	int		 override;
};

static int
cmd_approve_opt(int ch, const char *optarg, void *arg)
{
	struct approve_opts	*ao = arg;

	switch (ch) {
	case 'i':
		ao->id = optarg;
		return 0;
	case 'R':
		ao->rule = optarg;
		return 0;
	case 'm':
		ao->message = optarg;
		return 0;
	case 'c':
		ao->command = optarg;
		return 0;
	case 'O':
		ao->override = 1;
		return 0;
	}
	return -1;
}

static int
cmd_approve_exec(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "id", required_argument, NULL, 'i' },
		{ "rule", required_argument, NULL, 'R' },
		{ "message", required_argument, NULL, 'm' },
		{ "command", required_argument, NULL, 'c' },
		{ "override", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char usage[] = "-t NAME [--id ID] [--rule RULE] "
	    "[--message TEXT] [--command CMD [--override]] allow|deny|always";
	struct approve_opts	 ao;
	const char		*name, *decision;
	cJSON			*req, *rep;
	int			 r, rc;

	memset(&ao, 0, sizeof ao);
	if ((r = cmd_target(argc, argv, usage, lo, "t:m:h", cmd_approve_opt, &ao,
	    &name)) != 0)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	if (optind != argc - 1) {
		fprintf(stderr, "usage: holt approve %s\n", usage);
		return EXIT_USAGE;
	}
	decision = argv[optind];
	if (strcmp(decision, "allow") != 0 && strcmp(decision, "deny") != 0 &&
	    strcmp(decision, "always") != 0) {
		fprintf(stderr, "holt approve: '%s': allow, deny or always\n",
		    decision);
		return EXIT_USAGE;
	}
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "decision", decision);
	if (ao.id != NULL)
		cJSON_AddStringToObject(req, "request_id", ao.id);
	if (ao.rule != NULL)
		cJSON_AddStringToObject(req, "rule", ao.rule);
	if (ao.message != NULL)
		cJSON_AddStringToObject(req, "message", ao.message);
	if (ao.command != NULL)
		cJSON_AddStringToObject(req, "command", ao.command);
	if (ao.override)
		cJSON_AddBoolToObject(req, "override", 1);
	if ((rep = cmd_session_request("approve", name, req, &rc)) == NULL)
		return rc;
	/* Say what was answered: without --id, which request that was. */
	/* The subject is the agent's command or path. */
	utf8_vis_print(stdout, 0, "%s: %s", json_str(rep, "request_id") !=
	    NULL ? json_str(rep, "request_id") : "?", decision);
	if (json_str(rep, "subject") != NULL)
		utf8_vis_print(stdout, 0, " %s", json_str(rep, "subject"));
	if (ao.command != NULL && strcmp(decision, "deny") != 0)
		printf(", edited to: %s%s", ao.command, ao.override ?
		    " (over the policy's deny)" : "");
	if (json_str(rep, "rule") != NULL)
		utf8_vis_print(stdout, 0, ", rule added: %s",
		    json_str(rep, "rule"));
	printf("\n");
	cJSON_Delete(rep);
	return EXIT_OK;
}

const struct cmd_entry cmd_approve_entry = {
	"approve", "-t NAME [--id ID] allow|deny|always", "answer an approval",
	cmd_approve_exec
};

static int
cmd_interrupt_exec(int argc, char **argv)
{
	const char	*name;
	cJSON		*rep;
	int		 r, rc;

	if ((r = cmd_target(argc, argv, "-t NAME", help_only, "t:h", NULL, NULL,
	    &name)) != 0)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	if ((rep = cmd_session_request("interrupt", name, NULL, &rc)) == NULL)
		return rc;
	cJSON_Delete(rep);
	return EXIT_OK;
}

static int
cmd_compact_exec(int argc, char **argv)
{
	const char	*name;
	struct buf	 focus = BUF_INIT;
	cJSON		*req, *rep;
	int		 r, rc;

	if ((r = cmd_target(argc, argv, "-t NAME [FOCUS...]", help_only, "t:h",
	    NULL, NULL, &name)) != 0)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	cmd_join(&focus, argc, argv);
	req = cJSON_CreateObject();
	if (focus.len > 0)
		cJSON_AddStringToObject(req, "focus", focus.data);
	buf_release(&focus);
	if ((rep = cmd_session_request("compact", name, req, &rc)) == NULL)
		return rc;
	cJSON_Delete(rep);
	return EXIT_OK;
}

const struct cmd_entry cmd_compact_entry = {
	"compact", "-t NAME [FOCUS...]", "compact the conversation now",
	cmd_compact_exec
};

const struct cmd_entry cmd_interrupt_entry = {
	"interrupt", "-t NAME", "interrupt the agent", cmd_interrupt_exec
};

static int
cmd_kill_opt(int ch, const char *optarg, void *arg)
{
	if (ch == 'R') {
		*(int *)arg = 1;
		return 0;
	}
	return -1;
}

static int
cmd_kill_session_exec(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "rm", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*name;
	cJSON		*req, *rep;
	int		 r, rc, rm = 0, i;

	if ((r = cmd_target(argc, argv, "-t NAME [--rm]", lo, "t:h",
	    cmd_kill_opt, &rm, &name)) != 0)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	if (!session_exists(name)) {
		fprintf(stderr, "holt: session '%s': no such session\n", name);
		return EXIT_USAGE;
	}
	req = cJSON_CreateObject();
	cJSON_AddBoolToObject(req, "rm", rm);
	if ((rep = cmd_session_request("kill-session", name, req, &rc)) == NULL)
		return rc;
	cJSON_Delete(rep);
	/* The server finishes it in the background; wait for --rm to land. */
	for (i = 0; rm && i < 400 && session_exists(name); i++)
		usleep(25000);
	return EXIT_OK;
}

const struct cmd_entry cmd_kill_session_entry = {
	"kill-session", "-t NAME [--rm]", "end a session", cmd_kill_session_exec
};

struct cmd_log_opts {
	int		 follow;
	int		 json;
	const char	*otlp;		/* --otlp URL */
};

struct cmd_log_print {
	int		 json;
	struct buf	*b;
};

static void
cmd_log_print(void *arg, cJSON *ev)
{
	struct cmd_log_print	*lp = arg;
	char			*out;

	if (lp->json) {
		out = json_print(ev);
		utf8_vis_print(stdout, UTF8_VIS_JSON, "%s\n", out);
		free(out);
	} else {
		buf_reset(lp->b);
		cmd_format_event(ev, lp->b);
		fputs(buf_str(lp->b), stdout);
	}
	cJSON_Delete(ev);
}

static int
cmd_log_opt(int ch, const char *optarg, void *arg)
{
	struct cmd_log_opts	*o = arg;

	if (ch == 'f') {
		o->follow = 1;
		return 0;
	}
	if (ch == 'j') {
		o->json = 1;
		return 0;
	}
	if (ch == 'o') {
		o->otlp = optarg;
		return 0;
	}
	return -1;
}

/* holt log --otlp: the log's finished runs as traces, in one POST. */
static int
cmd_log_otlp(const char *name, const cJSON *events, const char *endpoint)
{
	struct otlp_trace	*t;
	cJSON			*meta, *spans = cJSON_CreateArray();
	const cJSON		*ev;
	char			*body, *url, *cause = NULL;
	int			 runs = 0, rc;

	meta = session_load(name, &cause);
	free(cause);
	cause = NULL;
	t = otlp_trace_new(name, json_str(meta, "sandbox"),
	    json_str(meta, "model") != NULL ? json_str(meta, "model") :
	    config_get("model"));
	cJSON_ArrayForEach(ev, events) {
		otlp_trace_feed(t, ev, spans);
		if (strcmp(json_str(ev, "type") != NULL ? json_str(ev, "type") :
		    "", "run.finished") == 0)
			runs++;
	}
	otlp_trace_free(t);
	cJSON_Delete(meta);
	url = otlp_traces_url(endpoint);
	body = otlp_request_json(spans);
	rc = otlp_post(url, body, 15, 60, &cause);
	if (rc != 0)
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: otlp %s\n", cause);
	else
		printf("%d spans of %d runs sent to %s\n",
		    cJSON_GetArraySize(spans), runs, url);
	free(cause);
	free(body);
	free(url);
	cJSON_Delete(spans);
	return rc == 0 ? EXIT_OK : EXIT_ERR;
}

static int
cmd_log_exec(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "follow", no_argument, NULL, 'f' },
		{ "otlp", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*name;
	char		*dir, *path, *cause = NULL, *warning = NULL;
	int		 r;
	struct cmd_log_opts flags = { 0, 0, NULL };
	cJSON		*events, *ev;
	struct buf	 b = BUF_INIT, pending = BUF_INIT;
	struct cmd_log_print	 lp;
	FILE		*f;
	char		 tmp[65536];
	size_t		 n;
	long		 off;

	if ((r = cmd_target(argc, argv, "-t NAME [-f] [--json | --otlp URL]",
	    lo, "t:fh", cmd_log_opt, &flags, &name)) != 0)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	if (flags.otlp != NULL && (flags.follow || flags.json)) {
		fprintf(stderr, "holt log: --otlp sends the log; it takes "
		    "neither -f nor --json\n");
		return EXIT_USAGE;
	}
	if (session_name_valid(name, &cause) != 0 || !session_exists(name)) {
		free(cause);
		fprintf(stderr, "holt: session '%s': no such session\n", name);
		return EXIT_USAGE;
	}
	if (flags.otlp != NULL) {
		if ((events = eventlog_read(name, &warning, &cause)) == NULL) {
			utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n",
			    cause);
			free(cause);
			return EXIT_ERR;
		}
		free(warning);
		r = cmd_log_otlp(name, events, flags.otlp);
		cJSON_Delete(events);
		return r;
	}
	/* One line at a time: a long session's log is never all in memory. */
	lp.json = flags.json;
	lp.b = &b;
	if (eventlog_scan(name, NULL, cmd_log_print, &lp, &warning,
	    &cause) != 0) {
		fflush(stdout);
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		free(cause);
		buf_release(&b);
		return EXIT_ERR;
	}
	if (warning != NULL) {
		fflush(stdout);
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", warning);
		free(warning);
	}
	fflush(stdout);
	if (!flags.follow) {
		buf_release(&b);
		return EXIT_OK;
	}
	/* Follow: read what is appended, whole lines only. */
	dir = session_dir(name);
	path = paths_join(dir, "events.jsonl");
	free(dir);
	f = fopen(path, "r");
	free(path);
	if (f == NULL)
		return EXIT_ERR;
	fseek(f, 0, SEEK_END);
	off = ftell(f);
	signal(SIGINT, cmd_on_signal);
	signal(SIGTERM, cmd_on_signal);
	signal(SIGPIPE, cmd_on_signal);
	while (!cmd_stop && session_exists(name)) {
		clearerr(f);
		fseek(f, off, SEEK_SET);
		while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) {
			buf_add(&pending, tmp, n);
			off += (long)n;
		}
		while (pending.len > 0) {
			char *nl = memchr(pending.data, '\n', pending.len);
			if (nl == NULL)
				break;
			*nl = '\0';
			if ((ev = cJSON_Parse(pending.data)) != NULL) {
				if (flags.json)
					utf8_vis_print(stdout, UTF8_VIS_JSON,
					    "%s\n", pending.data);
				else {
					buf_reset(&b);
					cmd_format_event(ev, &b);
					fputs(buf_str(&b), stdout);
				}
				cJSON_Delete(ev);
			}
			buf_remove_front(&pending, (size_t)(nl - pending.data) + 1);
		}
		if (fflush(stdout) != 0)
			break;
		usleep(100000);
	}
	fclose(f);
	buf_release(&b);
	buf_release(&pending);
	return EXIT_OK;
}

const struct cmd_entry cmd_log_entry = {
	"log", "-t NAME [-f] [--json | --otlp URL]",
	"print the event log, or send it as OTLP traces", cmd_log_exec
};

static int
cmd_kill_server_exec(int argc, char **argv)
{
	cJSON	*req, *rep;
	char	*cause = NULL, *path;
	int	 i;
	pid_t	 pid;

	if (cmd_wants_help(argc, argv)) {
		printf("usage: holt kill-server\n\nStop the server. Sessions "
		    "and their sandboxes stay; the next holt command\nstarts "
		    "a server that picks them up again.\n");
		return EXIT_OK;
	}
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "type", "kill-server");
	if ((rep = client_request(req, 0, &cause)) == NULL) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		free(cause);
		return EXIT_ERR;
	}
	/* Return once it is gone, so a next command starts a fresh one. */
	pid = (pid_t)json_num(rep, "pid", 0);
	cJSON_Delete(rep);
	path = client_socket_path();
	for (i = 0; i < 500 && (access(path, F_OK) == 0 ||
	    (pid > 0 && kill(pid, 0) == 0)); i++)
		usleep(10000);
	free(path);
	return EXIT_OK;
}

const struct cmd_entry cmd_kill_server_entry = {
	"kill-server", "", "stop the server", cmd_kill_server_exec
};
