/*
 * agent.c: the agent loop of one session (DESIGN 6, 7).
 *
 *	model request -> assistant.message -> for each tool call: policy ->
 *	(approval) -> run in the sandbox -> tool.finished -> next request
 *
 * bounded by the step cap and the token and cost budgets. The event log is
 * the only state that matters: the conversation given to the model is
 * rebuilt from it before every request (O(events), a few ms for 10,000),
 * and agent_open rebuilds what was in flight, so a run killed at any point
 * carries on from its log. A command's pid in the sandbox is logged
 * (tool.running) as soon as envd has started it; a call with a pid and no
 * tool.finished is re-joined by that pid through envd (agent_rejoin), so
 * the model gets the command's real output and exit code, and a command
 * that reached the sandbox runs exactly once. A tool.started with no pid,
 * or one envd no longer knows, is closed as interrupted and the model is
 * told the command may or may not have run (at-least-once).
 *
 * A write to the log that fails (the disk is full) stops the session
 * taking work: its state is error, what the user asks for is refused, and
 * the events of work already under way wait in memory, in order, not sent
 * to clients (they would see a history the log does not have). A timer
 * tries them again every LOG_RETRY_MS; once they are all written the
 * session goes on where it stood.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent.h"
#include "agent-history.h"
#include "agent-tools.h"
#include "checkpoint.h"
#include "context.h"
#include "envd-conn.h"
#include "mcp.h"
#include "model.h"
#include "otlp.h"
#include "policy.h"
#include "sandbox.h"
#include "session.h"

#define OUTPUT_LOG_MAX	(64U * 1024)	/* tool.output head logged per call */
#define OUTPUT_TAIL_MAX	(64U * 1024)	/* and its tail, logged at the end */
#define OUTPUT_TAIL_CHUNK (16U * 1024)	/* bytes of the tail per event */
#define LOG_RETRY_MS	1000		/* a full disk: try the log again */
#define AGENT_INTERRUPTED "The command was interrupted: holt stopped (a " \
    "crash or a restart) while it ran. It may or may not have run, in " \
    "whole or in part; check the state before running it again."
#define AGENT_OUTPUT_GONE "The connection to the sandbox was lost while the " \
    "command ran, and when it was made again the sandbox no longer knew " \
    "the command: its output is gone. It may or may not have run to its " \
    "end; check the state before running it again."
#define AGENT_LOST_RETRY_MS 2000	/* a lost sandbox: try it again */
#define INSTRUCTIONS_MAX (64U * 1024)	/* bytes of one instructions file */
/* Sorted: history_type looks them up for every line of a log. */
static const char *const history_types[] = {
	"approval.decided", "approval.needed", "assistant.message",
	"checkpoint.taken", "context.compacted", "conversation.cleared",
	"run.finished", "session.created", "session.forked",
	"session.rewound", "tool.call", "tool.finished", "tool.running",
	"tool.started", "user.message"
};

struct call {
	char		*id;
	char		*name;
	cJSON		*args;
	char		*request_id;
	int		 logged;	/* tool.call is in the log */
	int		 asked;		/* approval.needed is in the log */
	int		 previewing;	/* fetching the diff for the question */
	int		 decided;
	char		*decision;	/* allow, always, deny */
	char		*command;	/* edited by the user: run this */
	char		*message;	/* deny with a message */
	char		*deny_reason;	/* policy's reason */
	char		*deny_by;	/* policy, user, timeout ... */
	char		*deny_rule;	/* the rule that denied it */
	int		 started;
	long		 pid;		/* tool.running: its pid in the sandbox */
	int		 finished;
	int		 checkpointing;	/* its checkpoint is being taken */
	int		 checkpointed;	/* checkpoint.taken is in the log */
	int		 no_checkpoint;	/* it failed: the call cannot be undone */
};

/* A checkpoint taken off the loop, for the call it is before. */
struct ckpt_ctx {
	struct agent			*a;
	char				*call_id;
	struct sandbox_checkpoint_job	*job;
	struct ckpt_ctx			*next;
};

/*
 * A host the sandbox's proxy asks about (--net policy, no rule settles
 * it): an approval of its own, with host and port instead of a command,
 * answered through agent_approve like any; cb gets "allow" or "deny".
 */
struct host_ask {
	char			*request_id;
	char			*host;
	int			 port;
	agent_host_cb		 cb;
	void			*arg;
	struct host_ask		*next;
};

struct agent;
static struct host_ask *agent_take_host_ask(struct agent *, const char *);
static void agent_host_ask_free(struct host_ask *);

struct agent {
	char			*name;
	cJSON			*meta;
	struct event_base	*base;
	struct agent_cb		 cb;
	void			*arg;
	struct ckpt_ctx		*ckpts;		/* checkpoints being taken */
	struct sandbox_restore_job *rewind;	/* files being put back */
	void			(*rewind_cb)(void *, const char *);
	void			*rewind_arg;

	struct eventlog		*log;
	cJSON			*history;	/* events the conversation needs */
	uint64_t		 pruned_through;	/* dropped up to here */
	int			 pruned_steps;	/* of the run going on */

	struct policy		*policy;
	enum policy_mode	 mode;
	char			*rules_path;	/* the session's own rules */

	struct model		*model;
	struct model		*model_next;	/* /model, from the next request */
	struct model_request	*req;
	cJSON			*sent;		/* the messages of req */
	struct buf		 delta;

	struct sandbox		*sbx;
	struct envd_conn	*envd;
	struct mcp		*mcp;		/* [mcp NAME] servers, or NULL */
	int			 mcp_waiting;	/* a request waits for their tools */
	struct tool_ctx		 tctx;
	char			*test_command;

	enum agent_state	 state;
	enum agent_ask		 ask;
	int			 run_active;
	int			 steps;
	int			 steps_cap;
	int			 pending_user;	/* messages since the last request */
	int			 last_denied;
	int			 interrupting;
	long long		 in_tok, out_tok, cached_tok;
	double			 cost;
	long long		 run_in, run_out, run_cached;	/* this run */
	double			 run_cost;

	struct context		*cx;
	long long		 cx_tokens;	/* the last request's estimate */
	uint64_t		 req_started;	/* the model request (mono ms) */
	struct otlp_trace	*otlp;		/* otel_endpoint: spans live */
	char			*otlp_endpoint;
	int			 compacting;	/* a summary request is req */
	int			 compacted;	/* this step was compacted */
	int			 context_retried; /* a too-long request, retried */
	int			 compact_pending; /* by hand, at the next request */
	char			*compact_focus;
	const char		*compact_by;
	struct context_plan	 plan;
	enum agent_state	 compact_state;	/* to go back to, when idle */
	char			*instructions;	/* as last read and shown */
	long long		 budget_tokens;
	double			 budget_usd;

	struct call		*calls;
	size_t			 ncalls;
	struct tool_exec	*tool;
	int			 tool_done;
	size_t			 logged_output;	/* head bytes in the log */
	size_t			 logged_lines;
	size_t			 output_off;	/* bytes of output so far */
	size_t			 output_lines;
	struct buf		 output_tail;	/* the last bytes, for the log */
	struct event		*kick;
	int			 lock_fd;	/* one agent per session */
	int			 last_step;	/* of checkpoint.taken, ever */
	int			 opening;	/* in agent_open: no callbacks */
	char			*warning;	/* told at agent_start */
	cJSON			*answered;	/* what agent_approve decided */
	struct host_ask		*host_asks;	/* oldest first */
	enum agent_state	 host_prev;	/* the state before the first */

	int			 rejoining;	/* a.tool is attached by pid */
	/*
	 * The sandbox's connection was lost under a running command (the
	 * ssh provider gave up making it again): the call waits, tried
	 * again every AGENT_LOST_RETRY_MS, and is re-joined once the
	 * sandbox can be reached.
	 */
	int			 lost;
	int			 lost_rejoin;	/* a.tool re-joins such a one */
	struct event		*lost_timer;
	char			*log_error;	/* the log cannot be written */
	cJSON			*unlogged;	/* events waiting for it, in order */
	enum agent_state	 held;		/* the state behind the error */
	struct event		*log_retry;
};

static void	agent_process(struct agent *);
static cJSON	*agent_tools(struct agent *);
static void	agent_finish_run(struct agent *, const char *, const char *);
static void	agent_request(struct agent *);
static const char *agent_model_spec(struct agent *);
static int	agent_rewind_recorded(void *, const char *, char **);
static int	agent_rewind_done(const cJSON *, const char *);
static int	agent_rewinding(struct agent *, char **);
static void	agent_no_undo(struct agent *, struct call *,
		    struct policy_result *);

const char *
agent_state_name(enum agent_state s)
{
	switch (s) {
	case AGENT_IDLE:
		return "idle";
	case AGENT_WORKING:
		return "working";
	case AGENT_WAITING:
		return "waiting";
	case AGENT_FINISHED:
		return "finished";
	case AGENT_ERROR:
		return "error";
	}
	return "?";
}

static int
cmp_type(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

static int
history_type(const char *type)
{
	return bsearch(type, history_types, nitems(history_types),
	    sizeof history_types[0], cmp_type) != NULL;
}

/* While the log cannot be written the state shows that, and keeps s. */
static void
agent_set_state(struct agent *a, enum agent_state s)
{
	if (a->log_error != NULL) {
		a->held = s;
		s = AGENT_ERROR;
	}
	a->state = s;
	if (a->cb.state != NULL)
		a->cb.state(a->arg);
}

/*
 * The history holds what the next request needs, not every event: once a
 * compaction's summary covers events up to its through_seq, those before
 * it are dropped but for the user's messages (sent verbatim), the
 * compactions, the runs' ends and the steps (checkpoint.taken, with the
 * seq of its tool.call and what it was given, for /rewind). Memory is then
 * the recent tail, whatever the length of the log.
 */
static int
history_kept(const char *type)
{
	return strcmp(type, "user.message") == 0 ||
	    strcmp(type, "context.compacted") == 0 ||
	    strcmp(type, "conversation.cleared") == 0 ||
	    strcmp(type, "run.finished") == 0 ||
	    strcmp(type, "checkpoint.taken") == 0 ||
	    strcmp(type, "session.created") == 0;
}

static void
agent_history_prune(struct agent *a)
{
	uint64_t	 through = context_through(a->cx), seq;
	cJSON		*ev, *next;
	const char	*type;

	if (through <= a->pruned_through)
		return;
	for (ev = a->history->child; ev != NULL; ev = next) {
		next = ev->next;
		seq = (uint64_t)json_num(ev, "seq", 0);
		if (seq > through)
			break;
		if (seq <= a->pruned_through)
			continue;
		type = json_str(ev, "type");
		if (strcmp(type, "run.finished") == 0)
			a->pruned_steps = 0;
		else if (strcmp(type, "assistant.message") == 0)
			a->pruned_steps++;	/* of a run still going */
		if (!history_kept(type))
			cJSON_Delete(cJSON_DetachItemViaPointer(a->history, ev));
	}
	a->pruned_through = through;
}

/* A step: the seq of its tool.call and what it was given, kept with it. */
static void
agent_history_step(struct agent *a, cJSON *ck)
{
	const char	*id = json_str(ck, "call_id");
	const cJSON	*ev;

	if (id == NULL || a->history->child == NULL)
		return;
	/* Back from the last (cJSON's first item's prev is the last). */
	for (ev = a->history->child->prev; ; ev = ev->prev) {
		if (strcmp(json_str(ev, "type"), "tool.call") == 0 &&
		    json_str(ev, "call_id") != NULL &&
		    strcmp(json_str(ev, "call_id"), id) == 0) {
			history_step_note(ck, ev);
			return;
		}
		if (ev == a->history->child)
			return;
	}
}

static void	agent_history_apply(struct agent *, const cJSON *);

/* An event of the log into the history (taken), in the log's order. */
static void
agent_history_add(struct agent *a, cJSON *ev)
{
	const char	*type = json_str(ev, "type");

	if (type == NULL || !history_type(type)) {
		cJSON_Delete(ev);
		return;
	}
	if (strcmp(type, "session.rewound") == 0 ||
	    strcmp(type, "session.forked") == 0) {
		agent_history_apply(a, ev);
		cJSON_Delete(ev);
		return;
	}
	if (strcmp(type, "checkpoint.taken") == 0)
		agent_history_step(a, ev);
	cJSON_AddItemToArray(a->history, ev);
	if (strcmp(type, "context.compacted") == 0 ||
	    strcmp(type, "conversation.cleared") == 0) {
		context_apply(a->cx, ev);
		agent_history_prune(a);
	}
}

struct history_load {
	struct agent	*a;
	uint64_t	 until;
};

static int
history_load_wants(const char *type)
{
	return history_type(type);
}

static void
history_load_event(void *arg, cJSON *ev)
{
	struct history_load	*hl = arg;

	if ((uint64_t)json_num(ev, "seq", 0) > hl->until)
		cJSON_Delete(ev);
	else
		agent_history_add(hl->a, ev);
}

/*
 * The history as it was at seq until, read again from the log: a rewind
 * to a step older than a compaction needs what the compaction dropped.
 */
static int
agent_history_load(struct agent *a, uint64_t until, char **cause)
{
	struct history_load	 hl = { a, until };
	char			*warning = NULL;
	int			 rc;

	cJSON_Delete(a->history);
	a->history = cJSON_CreateArray();
	context_forget(a->cx);
	a->pruned_through = 0;
	a->pruned_steps = 0;
	rc = eventlog_scan(a->name, history_load_wants, history_load_event,
	    &hl, &warning, cause);
	free(warning);
	return rc;
}

/* A compaction or a clear after seq: cutting there drops it. */
static int
agent_compacted_after(struct agent *a, uint64_t seq)
{
	const cJSON	*ev;
	const char	*type;

	if (a->history->child == NULL)
		return 0;
	for (ev = a->history->child->prev; json_num(ev, "seq", 0) >
	    (double)seq; ev = ev->prev) {
		type = json_str(ev, "type");
		if (strcmp(type, "context.compacted") == 0 ||
		    strcmp(type, "conversation.cleared") == 0)
			return 1;
		if (ev == a->history->child)
			break;
	}
	return 0;
}

/*
 * A rewind or a fork cuts the history; a compaction it cut away no longer
 * holds, so the context's marks are those of the compactions left, and
 * what those dropped is read back from the log first.
 */
static void
agent_history_apply(struct agent *a, const cJSON *ev)
{
	const cJSON	*h, *ck;
	uint64_t	 call_seq = 0, ck_seq = 0;
	char		*cause = NULL;
	int		 step = (int)json_num(ev, "to_step", 0);

	if (strcmp(json_str(ev, "type"), "session.rewound") == 0 &&
	    json_bool(ev, "conversation", 1) &&
	    (ck = session_find_step(a->history, step)) != NULL) {
		call_seq = (uint64_t)json_num(ck, "_call_seq", 0);
		ck_seq = (uint64_t)json_num(ck, "seq", 0);
	}
	/* Up to the step's checkpoint.taken: the cut below finds it there. */
	if (call_seq != 0 && (session_step_index(a->history, step) < 0 ||
	    agent_compacted_after(a, call_seq)) &&
	    agent_history_load(a, ck_seq, &cause) != 0) {
		log_warnx("session '%s': %s", a->name, cause);
		free(cause);
	}
	session_history_apply(a->history, ev);
	context_forget(a->cx);
	cJSON_ArrayForEach(h, a->history)
		context_apply(a->cx, h);	/* its compactions and clears */
	a->pruned_through = context_through(a->cx);
}

/* A logged event: into the conversation, and on to the clients. */
static void
agent_pass_on(struct agent *a, cJSON *ev)
{
	const char	*type = json_str(ev, "type");

	if (a->otlp != NULL && type != NULL) {
		cJSON *spans = cJSON_CreateArray();

		otlp_trace_feed(a->otlp, ev, spans);
		otlp_export_spans(a->otlp_endpoint, spans);
	}
	agent_history_add(a, cJSON_Duplicate(ev, 1));
	if (a->cb.event != NULL)
		a->cb.event(a->arg, ev);
	cJSON_Delete(ev);
}

static void	agent_emit_live(struct agent *, cJSON *);
static void	agent_kick(struct agent *);

/* The log could not be written: stop, say so, and try again later. */
static void
agent_log_failed(struct agent *a)
{
	struct timeval	 tv = { LOG_RETRY_MS / 1000,
			    (LOG_RETRY_MS % 1000) * 1000 };
	cJSON		*ev;
	int		 saved = errno;

	if (a->log_error == NULL) {
		a->log_error = xprintf("%s%s: %s", saved == ENOSPC ||
		    saved == EDQUOT ? "disk full: " : "", eventlog_path(a->log),
		    strerror(saved));
		log_warnx("session '%s': %s; it waits for the log to be "
		    "writable", a->name, a->log_error);
		ev = evlog_new("error");
		cJSON_AddStringToObject(ev, "message", a->log_error);
		cJSON_AddBoolToObject(ev, "unlogged", 1);
		agent_emit_live(a, ev);
		agent_set_state(a, a->state);
	}
	evtimer_add(a->log_retry, &tv);
}

/*
 * Write what waits for the log: 0 when it is all written (the session
 * goes on), -1 while the log still cannot be written.
 */
static int
agent_log_flush(struct agent *a)
{
	cJSON	*ev;
	int	 sync;

	/* With nothing waiting, only room on the disk says it is over. */
	if (a->log_error != NULL && a->unlogged->child == NULL &&
	    !eventlog_has_room(a->log)) {
		agent_log_failed(a);
		return -1;
	}
	while ((ev = a->unlogged->child) != NULL) {
		sync = json_bool(ev, "_sync", 1);
		cJSON_DeleteItemFromObjectCaseSensitive(ev, "_sync");
		if (eventlog_append(a->log, ev, sync) == 0) {
			cJSON_AddBoolToObject(ev, "_sync", sync);
			agent_log_failed(a);
			return -1;
		}
		cJSON_DetachItemViaPointer(a->unlogged, ev);
		agent_pass_on(a, ev);
	}
	if (a->log_error != NULL) {
		log_info("session '%s': its log is writable again", a->name);
		free(a->log_error);
		a->log_error = NULL;
		evtimer_del(a->log_retry);
		agent_set_state(a, a->held);
		agent_kick(a);
	}
	return 0;
}

static void
agent_log_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	agent_log_flush(arg);
}

/*
 * Append an event to the log (sync at durable points) and pass it on; if
 * the log cannot take it, it waits, in order, for agent_log_flush.
 */
static void
agent_emit(struct agent *a, cJSON *ev, int sync)
{
	secret_redact_json(ev);
	if (a->log_error == NULL && eventlog_append(a->log, ev, sync) != 0) {
		agent_pass_on(a, ev);
		return;
	}
	cJSON_AddBoolToObject(ev, "_sync", sync);
	cJSON_AddItemToArray(a->unlogged, ev);
	if (a->log_error == NULL)
		agent_log_failed(a);
}

/*
 * What a user asks for is taken only when the log can take it: 0 if it
 * can (what waited is written first), else -1 and *cause says why.
 */
static int
agent_log_ready(struct agent *a, char **cause)
{
	if (a->log_error == NULL || agent_log_flush(a) == 0)
		return 0;
	*cause = xprintf("session '%s': %s (nothing was done; the session "
	    "goes on by itself once its log can be written)", a->name,
	    a->log_error);
	return -1;
}

/* An event the user asked for: logged now, or refused with *cause. */
static int
agent_emit_asked(struct agent *a, cJSON *ev, char **cause)
{
	secret_redact_json(ev);
	if (agent_log_ready(a, cause) != 0) {
		cJSON_Delete(ev);
		return -1;
	}
	if (eventlog_append(a->log, ev, 1) == 0) {
		agent_log_failed(a);
		cJSON_Delete(ev);
		return agent_log_ready(a, cause);	/* fails: no room */
	}
	agent_pass_on(a, ev);
	return 0;
}

static void
agent_emit_live(struct agent *a, cJSON *ev)
{
	secret_redact_json(ev);
	if (a->cb.event != NULL)
		a->cb.event(a->arg, ev);
	cJSON_Delete(ev);
}

static void
agent_error_event(struct agent *a, const char *msg)
{
	cJSON	*ev = evlog_new("error");

	cJSON_AddStringToObject(ev, "message", msg);
	agent_emit(a, ev, 1);
}

static void
agent_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent	*a = arg;

	if (a->tool != NULL && a->tool_done) {
		tool_exec_free(a->tool);
		a->tool = NULL;
		a->tool_done = 0;
	}
	agent_process(a);
}

static void
agent_kick(struct agent *a)
{
	struct timeval	 tv = { 0, 0 };

	evtimer_add(a->kick, &tv);
}

/* Calls. */

static void
call_clear(struct call *c)
{
	free(c->id);
	free(c->name);
	cJSON_Delete(c->args);
	free(c->request_id);
	free(c->decision);
	free(c->command);
	free(c->message);
	free(c->deny_reason);
	free(c->deny_by);
	free(c->deny_rule);
}

static void
agent_clear_calls(struct agent *a)
{
	size_t	 i;

	for (i = 0; i < a->ncalls; i++)
		call_clear(&a->calls[i]);
	free(a->calls);
	a->calls = NULL;
	a->ncalls = 0;
}

static void
agent_set_calls(struct agent *a, const cJSON *tool_calls)
{
	const cJSON	*tc;
	struct call	*c;
	const cJSON	*args;

	agent_clear_calls(a);
	cJSON_ArrayForEach(tc, tool_calls) {
		a->calls = xreallocarray(a->calls, a->ncalls + 1,
		    sizeof *a->calls);
		c = &a->calls[a->ncalls++];
		memset(c, 0, sizeof *c);
		c->id = xstrdup(json_str(tc, "id") != NULL ? json_str(tc, "id") :
		    "call");
		c->name = xstrdup(json_str(tc, "name") != NULL ?
		    json_str(tc, "name") : "");
		args = cJSON_GetObjectItemCaseSensitive(tc, "arguments");
		c->args = cJSON_IsObject(args) ? cJSON_Duplicate(args, 1) :
		    cJSON_CreateObject();
	}
}

static struct call *
agent_find_call(struct agent *a, const char *id)
{
	size_t	 i;

	if (id == NULL)
		return NULL;
	for (i = 0; i < a->ncalls; i++) {
		if (strcmp(a->calls[i].id, id) == 0)
			return &a->calls[i];
	}
	return NULL;
}

/* The conversation, rebuilt from the log. */

static const char system_prompt[] =
    "You are the coding agent of holt, working with a developer who watches "
    "and approves what you do. You work inside a sandboxed Linux machine; the "
    "project is in /workspace, your working directory, and every path you "
    "give is relative to it. Use the tools to read, search, edit and test the "
    "code. Shell commands pass an allowlist first: a denied command comes "
    "back as a tool result, so adapt instead of retrying the same thing. "
    "Keep edits small and focused. When the task is done, answer with a "
    "short summary of what you changed and why, and call no tool.";

static char *
agent_system(struct agent *a)
{
	if (a->test_command != NULL && *a->test_command != '\0')
		return xprintf("%s\nThe tests run with: %s (tool run_tests).",
		    system_prompt, a->test_command);
	return xstrdup(system_prompt);
}

static cJSON *
agent_messages(struct agent *a)
{
	cJSON	*msgs;
	char	*sys = agent_system(a);

	msgs = context_messages(a->cx, a->history, sys, 0, 0);
	free(sys);
	return msgs;
}

/* A deny decision: who made it and the rule, for tool.finished. */
static void
agent_note_denial(struct call *c, const char *by, const char *rule)
{
	if (c->decision == NULL || strcmp(c->decision, "deny") != 0)
		return;
	free(c->deny_by);
	c->deny_by = xstrdup(by != NULL ? by : "user");
	free(c->deny_rule);
	c->deny_rule = rule != NULL ? xstrdup(rule) : NULL;
}

/*
 * One instructions file of the workspace. The workspace is hostile: the
 * name is opened without following a link (a link could point at any file
 * of the host) and only a regular file is read, at most INSTRUCTIONS_MAX.
 */
static char *
agent_workspace_text(const char *ws, const char *name)
{
	char		*path, *text = NULL;
	struct stat	 sb;
	ssize_t		 n;
	size_t		 len = 0;
	int		 fd;

	path = paths_join(ws, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	free(path);
	if (fd == -1)
		return NULL;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return NULL;
	}
	text = xmalloc(INSTRUCTIONS_MAX + 1);
	while (len < INSTRUCTIONS_MAX && (n = read(fd, text + len,
	    INSTRUCTIONS_MAX - len)) > 0)
		len += (size_t)n;
	close(fd);
	text[len] = '\0';
	return text;
}

/*
 * The project instructions (DESIGN 14): the user's config/AGENTS.md, then
 * the workspace's AGENTS.md, else its CLAUDE.md. Read before every request
 * (two small reads), so that an edit is seen at the next step; a change
 * is told once as instructions.loaded. They are only text for the model:
 * the policy is never read from them.
 */
static void
agent_instructions(struct agent *a)
{
	struct buf	 b = BUF_INIT;
	cJSON		*ev, *files;
	char		*path, *user, *proj, *ws;
	const char	*pname = "AGENTS.md";

	path = paths_join(paths_config_dir(), "AGENTS.md");
	user = file_read(path, NULL, INSTRUCTIONS_MAX);
	free(path);
	ws = sandbox_workspace(a->sbx);
	if ((proj = agent_workspace_text(ws, pname)) == NULL) {
		pname = "CLAUDE.md";
		proj = agent_workspace_text(ws, pname);
	}
	free(ws);
	files = cJSON_CreateArray();
	if (user != NULL && *user != '\0') {
		buf_addf(&b, "## The user's instructions (config/AGENTS.md)\n\n"
		    "%s\n", user);
		cJSON_AddItemToArray(files, cJSON_CreateString(
		    "config/AGENTS.md"));
	}
	if (proj != NULL && *proj != '\0') {
		buf_addf(&b, "%s## The project's instructions (%s)\n\n%s\n",
		    b.len > 0 ? "\n" : "", pname, proj);
		cJSON_AddItemToArray(files, cJSON_CreateString(pname));
	}
	free(user);
	free(proj);
	if (strcmp(buf_str(&b), a->instructions != NULL ? a->instructions :
	    "") == 0) {
		cJSON_Delete(files);
		buf_release(&b);
		return;
	}
	free(a->instructions);
	a->instructions = xstrdup(buf_str(&b));
	context_set_instructions(a->cx, a->instructions);
	ev = evlog_new("instructions.loaded");
	cJSON_AddItemToObject(ev, "files", files);
	cJSON_AddStringToObject(ev, "text", a->instructions);
	agent_emit(a, ev, 0);
	buf_release(&b);
}

/* Rebuild what was in flight from the log (agent_open). */
static void
agent_rebuild(struct agent *a)
{
	cJSON		*ev, *last_assistant = NULL, *finished = NULL;
	const char	*type;
	struct call	*c;
	int		 idx = 0, last_finish = -1, run_start = -1;

	cJSON_ArrayForEach(ev, a->history) {
		type = json_str(ev, "type");
		if (strcmp(type, "run.finished") == 0) {
			last_finish = idx;
			finished = ev;
			run_start = -1;
		} else if (strcmp(type, "user.message") == 0 && run_start == -1)
			run_start = idx;
		idx++;
	}
	a->run_active = run_start != -1 && run_start > last_finish;
	/* The status line's step of a finished run survives a restart. */
	a->steps = a->run_active || finished == NULL ? 0 :
	    (int)json_num(finished, "steps", 0);
	if (a->run_active)
		a->steps += a->pruned_steps;	/* before a compaction */
	idx = 0;
	cJSON_ArrayForEach(ev, a->history) {
		type = json_str(ev, "type");
		if (idx > last_finish && strcmp(type, "assistant.message") == 0) {
			if (a->run_active && idx > run_start)
				a->steps++;
			last_assistant = ev;
		}
		idx++;
	}
	if (!a->run_active || last_assistant == NULL)
		return;
	agent_set_calls(a, cJSON_GetObjectItemCaseSensitive(last_assistant,
	    "tool_calls"));
	for (ev = last_assistant->next; ev != NULL; ev = ev->next) {
		type = json_str(ev, "type");
		if ((c = agent_find_call(a, json_str(ev, "call_id"))) == NULL)
			continue;
		if (strcmp(type, "tool.call") == 0)
			c->logged = 1;
		else if (strcmp(type, "approval.needed") == 0) {
			c->asked = 1;
			free(c->request_id);
			c->request_id = xstrdup(json_str(ev, "request_id"));
		} else if (strcmp(type, "approval.decided") == 0) {
			c->decided = 1;
			free(c->request_id);
			c->request_id = xstrdup(json_str(ev, "request_id") ?
			    json_str(ev, "request_id") : "");
			c->decision = xstrdup(json_str(ev, "decision") ?
			    json_str(ev, "decision") : "deny");
			if (json_str(ev, "command") != NULL)
				c->command = xstrdup(json_str(ev, "command"));
			if (json_str(ev, "message") != NULL)
				c->message = xstrdup(json_str(ev, "message"));
			if (json_str(ev, "reason") != NULL)
				c->deny_reason = xstrdup(json_str(ev, "reason"));
			agent_note_denial(c, json_str(ev, "by"),
			    json_str(ev, "rule"));
		} else if (strcmp(type, "tool.started") == 0)
			c->started = 1;
		else if (strcmp(type, "tool.running") == 0)
			c->pid = (long)json_num(ev, "pid", 0);
		else if (strcmp(type, "checkpoint.taken") == 0)
			c->checkpointed = 1;
		else if (strcmp(type, "tool.finished") == 0)
			c->finished = 1;
	}
}

/* Running a call. */

static size_t
agent_count_lines(const char *data, size_t len)
{
	const char	*p = data, *end = data + len;
	size_t		 n = 0;

	while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		n++;
		p++;
	}
	return n;
}

static void
agent_tool_output(void *arg, const char *stream, const char *data, size_t len)
{
	struct agent	*a = arg;
	struct call	*c = NULL;
	size_t		 i, lines, drop;
	cJSON		*ev;
	char		*s;

	for (i = 0; i < a->ncalls; i++) {
		if (a->calls[i].started && !a->calls[i].finished) {
			c = &a->calls[i];
			break;
		}
	}
	if (c == NULL)
		return;
	ev = evlog_new("tool.output");
	cJSON_AddStringToObject(ev, "call_id", c->id);
	cJSON_AddStringToObject(ev, "stream", stream);
	cJSON_AddNumberToObject(ev, "offset", (double)a->output_off);
	s = xstrndup(data, len);
	cJSON_AddStringToObject(ev, "data", s);
	free(s);
	a->output_off += len;
	lines = agent_count_lines(data, len);
	a->output_lines += lines;
	/*
	 * The first OUTPUT_LOG_MAX bytes are logged; the rest is live only,
	 * and its last OUTPUT_TAIL_MAX bytes are logged when the call ends
	 * (agent_output_tail). The tail buffer is trimmed at twice its size,
	 * so the memmove costs O(1) a byte.
	 */
	if (a->logged_output < OUTPUT_LOG_MAX) {
		a->logged_output += len;
		a->logged_lines += lines;
		agent_emit(a, ev, 0);
		return;
	}
	agent_emit_live(a, ev);
	buf_add(&a->output_tail, data, len);
	if (a->output_tail.len > 2 * OUTPUT_TAIL_MAX) {
		drop = a->output_tail.len - OUTPUT_TAIL_MAX;
		memmove(a->output_tail.data, a->output_tail.data + drop,
		    OUTPUT_TAIL_MAX);
		a->output_tail.len = OUTPUT_TAIL_MAX;
	}
}

/*
 * The end of a command's output is where its summary is (test results,
 * the error): what the log left out of the middle is marked, with its
 * bytes and lines, and the last OUTPUT_TAIL_MAX bytes are logged, so a
 * screen that attaches later and holt log show the end, not only the head.
 * Every event has the offset of its bytes, so a screen that saw them live
 * skips them.
 */
static void
agent_output_tail(struct agent *a, struct call *c)
{
	size_t	 keep, start, skipped, off, n, tail_lines;
	cJSON	*ev;
	char	*s;

	if (a->output_tail.len == 0)
		return;
	keep = a->output_tail.len < OUTPUT_TAIL_MAX ? a->output_tail.len :
	    OUTPUT_TAIL_MAX;
	start = a->output_tail.len - keep;
	while (keep > 1 && ((unsigned char)a->output_tail.data[start] &
	    0xc0) == 0x80) {
		start++;
		keep--;
	}
	skipped = a->output_off - keep - a->logged_output;
	if (skipped > 0) {
		/* Start the tail at a line, if one starts near. */
		s = memchr(a->output_tail.data + start, '\n',
		    keep < 4096 ? keep : 4096);
		if (s != NULL && s + 1 < a->output_tail.data +
		    a->output_tail.len) {
			n = (size_t)(s + 1 - (a->output_tail.data + start));
			start += n;
			skipped += n;
			keep -= n;
		}
		tail_lines = agent_count_lines(a->output_tail.data + start,
		    keep);
		ev = evlog_new("tool.output");
		cJSON_AddStringToObject(ev, "call_id", c->id);
		cJSON_AddStringToObject(ev, "stream", "cut");
		cJSON_AddNumberToObject(ev, "offset", (double)a->logged_output);
		cJSON_AddNumberToObject(ev, "omitted_bytes", (double)skipped);
		cJSON_AddNumberToObject(ev, "omitted_lines", (double)
		    (a->output_lines - a->logged_lines - tail_lines));
		agent_emit(a, ev, 0);
	}
	for (off = 0; off < keep; off += n) {
		n = keep - off < OUTPUT_TAIL_CHUNK ? keep - off :
		    OUTPUT_TAIL_CHUNK;
		/* Never split a UTF-8 character between two events. */
		while (off + n < keep && n > 4 && ((unsigned char)
		    a->output_tail.data[start + off + n] & 0xc0) == 0x80)
			n--;
		ev = evlog_new("tool.output");
		cJSON_AddStringToObject(ev, "call_id", c->id);
		cJSON_AddStringToObject(ev, "stream", "tail");
		cJSON_AddNumberToObject(ev, "offset", (double)(a->output_off -
		    keep + off));
		s = xstrndup(a->output_tail.data + start + off, n);
		cJSON_AddStringToObject(ev, "data", s);
		free(s);
		agent_emit(a, ev, 0);
	}
	buf_reset(&a->output_tail);
}

/*
 * DENIED: the call was refused (the "denied" field says by whom and which
 * rule, so no reader has to guess it from the text). A command the user
 * edited is logged as what ran, and the model is told it was changed.
 */
static void
agent_finish_call(struct agent *a, struct call *c, struct tool_result *r,
    int denied)
{
	cJSON	*ev, *d;
	char	*told = NULL;

	ev = evlog_new("tool.finished");
	cJSON_AddStringToObject(ev, "call_id", c->id);
	cJSON_AddStringToObject(ev, "name", c->name);
	if (c->command != NULL && !denied) {
		cJSON_AddStringToObject(ev, "command", c->command);
		told = xprintf("The user changed your command to: %s\n\n%s",
		    c->command, r->result != NULL ? r->result : "");
	}
	if (denied) {
		d = cJSON_AddObjectToObject(ev, "denied");
		cJSON_AddStringToObject(d, "by", c->deny_by != NULL ?
		    c->deny_by : "user");
		if (c->deny_rule != NULL)
			cJSON_AddStringToObject(d, "rule", c->deny_rule);
		if (c->message != NULL)
			cJSON_AddStringToObject(d, "message", c->message);
		else if (c->deny_reason != NULL)
			cJSON_AddStringToObject(d, "reason", c->deny_reason);
	}
	if (r->has_exit)
		cJSON_AddNumberToObject(ev, "exit_code", r->exit_code);
	if (r->timed_out)
		cJSON_AddBoolToObject(ev, "timed_out", 1);
	cJSON_AddNumberToObject(ev, "duration_ms", (double)r->duration_ms);
	if (r->interrupted)
		cJSON_AddBoolToObject(ev, "interrupted", 1);
	if (r->failed)
		cJSON_AddBoolToObject(ev, "error", 1);
	cJSON_AddStringToObject(ev, "result", told != NULL ? told :
	    r->result != NULL ? r->result : "");
	free(told);
	c->finished = 1;
	agent_emit(a, ev, 1);
}

static void
agent_finish_call_text(struct agent *a, struct call *c, const char *text,
    int denied)
{
	struct tool_result	 r;

	memset(&r, 0, sizeof r);
	r.result = (char *)text;
	r.failed = !denied;
	agent_finish_call(a, c, &r, denied);
}

/*
 * envd started the command: its pid is logged (a durable point), so that
 * after a crash the next process re-joins this very command instead of
 * calling it interrupted.
 */
static void
agent_tool_running(void *arg, long pid)
{
	struct agent	*a = arg;
	size_t		 i;
	cJSON		*ev;

	for (i = 0; i < a->ncalls; i++) {
		if (a->calls[i].started && !a->calls[i].finished) {
			a->calls[i].pid = pid;
			ev = evlog_new("tool.running");
			cJSON_AddStringToObject(ev, "call_id", a->calls[i].id);
			cJSON_AddNumberToObject(ev, "pid", (double)pid);
			agent_emit(a, ev, 1);
			return;
		}
	}
}

static int agent_can_rejoin(struct call *);
static void agent_lost(struct agent *, struct call *, const char *);

static void
agent_tool_done(void *arg, struct tool_result *r)
{
	struct agent	*a = arg;
	size_t		 i;

	for (i = 0; i < a->ncalls; i++) {
		if (a->calls[i].started && !a->calls[i].finished) {
			if (r->lost && agent_can_rejoin(&a->calls[i])) {
				agent_lost(a, &a->calls[i], r->result);
				break;
			}
			if (a->rejoining && r->failed) {
				/* envd no longer knows the pid. */
				free(r->result);
				r->result = xstrdup(a->lost_rejoin ?
				    AGENT_OUTPUT_GONE : AGENT_INTERRUPTED);
				r->failed = 0;
				r->interrupted = 1;
			}
			a->lost_rejoin = 0;
			agent_output_tail(a, &a->calls[i]);
			agent_finish_call(a, &a->calls[i], r, 0);
			break;
		}
	}
	a->rejoining = 0;
	buf_reset(&a->output_tail);
	a->tool_done = 1;
	agent_kick(a);
}

static int
agent_envd(struct agent *a, char **cause);

static void
agent_execute(struct agent *a, struct call *c)
{
	cJSON		*ev;
	char		*cause = NULL;
	struct tool_ctx	 ctx = a->tctx;

	if (agent_envd(a, &cause) != 0) {
		char *msg = xprintf("sandbox: %s", cause);
		agent_finish_call_text(a, c, msg, 0);
		agent_error_event(a, msg);
		free(msg);
		free(cause);
		agent_finish_run(a, "error", "sandbox");
		return;
	}
	ev = evlog_new("tool.started");
	cJSON_AddStringToObject(ev, "call_id", c->id);
	cJSON_AddStringToObject(ev, "name", c->name);
	if (c->command != NULL)
		cJSON_AddStringToObject(ev, "command", c->command);
	c->started = 1;
	/*
	 * Not a durable point (DESIGN 7): lost only with the machine, and
	 * then the command is run again, which at-least-once allows.
	 */
	agent_emit(a, ev, 0);
	a->logged_output = a->logged_lines = 0;
	a->output_off = a->output_lines = 0;
	buf_reset(&a->output_tail);
	ctx.command = c->command;
	ctx.started = agent_tool_running;
	agent_set_state(a, AGENT_WORKING);
	a->tool_done = 0;
	a->rejoining = 0;
	a->tool = tool_exec_start(a->envd, c->name, c->args, &ctx,
	    agent_tool_output, agent_tool_done, a);
}

/*
 * After a crash: the command of c was running in the sandbox (its pid is
 * in the log) and may still be, or have finished since. Attach to it by
 * pid through envd, replaying the output envd kept, and take its real
 * exit; only if envd no longer knows it is the call interrupted. Returns
 * -1 if it cannot even try (no pid, no sandbox).
 */
static int
agent_can_rejoin(struct call *c)
{
	return c->pid > 0 && (strcmp(c->name, "run_command") == 0 ||
	    strcmp(c->name, "run_tests") == 0);
}

static int
agent_rejoin(struct agent *a, struct call *c)
{
	struct tool_ctx	 ctx = a->tctx;
	char		*cause = NULL;

	if (!agent_can_rejoin(c))
		return -1;
	if (agent_envd(a, &cause) != 0) {
		log_warnx("session '%s': cannot re-join pid %ld: %s", a->name,
		    c->pid, cause);
		free(cause);
		return -1;
	}
	log_info("session '%s': re-joining call %s, pid %ld", a->name, c->id,
	    c->pid);
	ctx.command = c->command;
	ctx.rejoin_pid = c->pid;
	/* What envd replays was logged before (its head): live only now. */
	a->logged_output = OUTPUT_LOG_MAX;
	a->logged_lines = a->output_off = a->output_lines = 0;
	buf_reset(&a->output_tail);
	a->tool_done = 0;
	a->rejoining = 1;
	a->tool = tool_exec_start(a->envd, c->name, c->args, &ctx,
	    agent_tool_output, agent_tool_done, a);
	return 0;
}

static void
agent_lost_arm(struct agent *a)
{
	struct timeval	 tv = { AGENT_LOST_RETRY_MS / 1000,
			    (AGENT_LOST_RETRY_MS % 1000) * 1000 };

	evtimer_add(a->lost_timer, &tv);
}

/*
 * The connection to the sandbox was lost under c's command and could not
 * be made again: the command may run on there. The call waits; it is
 * re-joined by its pid once the sandbox can be reached (agent_lost_cb),
 * or, if the sandbox no longer knows it then, told its output is gone.
 */
static void
agent_lost(struct agent *a, struct call *c, const char *why)
{
	char	*msg;

	msg = xprintf("sandbox: %s; the command (pid %ld) may still be "
	    "running there: it is re-joined once the sandbox can be reached",
	    why, c->pid);
	agent_error_event(a, msg);
	free(msg);
	a->lost = 1;	/* the kick that frees the tool does no more */
	agent_lost_arm(a);
}

static void
agent_lost_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent	*a = arg;
	size_t		 i;

	if (!a->lost)
		return;
	if (a->tool != NULL) {		/* not yet freed */
		agent_lost_arm(a);
		return;
	}
	/* The old connection ended with the relay: a new one is made. */
	envd_conn_free(a->envd);
	a->envd = NULL;
	for (i = 0; i < a->ncalls; i++) {
		if (!a->calls[i].started || a->calls[i].finished)
			continue;
		if (agent_rejoin(a, &a->calls[i]) != 0) {
			agent_lost_arm(a);
			return;
		}
		a->lost = 0;
		a->lost_rejoin = 1;
		return;
	}
	a->lost = 0;
	agent_kick(a);
}

static char *
agent_request_id(struct agent *a, struct call *c)
{
	return xprintf("r%llu", (unsigned long long)eventlog_last_seq(a->log) + 1);
}

static void
agent_decide(struct agent *a, struct call *c, const char *decision,
    const char *by, const char *rule, const char *reason)
{
	cJSON	*ev;

	if (c->request_id == NULL)
		c->request_id = agent_request_id(a, c);
	ev = evlog_new("approval.decided");
	cJSON_AddStringToObject(ev, "request_id", c->request_id);
	cJSON_AddStringToObject(ev, "call_id", c->id);
	cJSON_AddStringToObject(ev, "decision", decision);
	cJSON_AddStringToObject(ev, "by", by);
	if (rule != NULL)
		cJSON_AddStringToObject(ev, "rule", rule);
	if (reason != NULL)
		cJSON_AddStringToObject(ev, "reason", reason);
	c->decided = 1;
	free(c->decision);
	c->decision = xstrdup(decision);
	if (reason != NULL && c->deny_reason == NULL)
		c->deny_reason = xstrdup(reason);
	agent_note_denial(c, by, rule);
	agent_emit(a, ev, 1);
}

static void
agent_denied(struct agent *a, struct call *c)
{
	char	*text;

	if (c->message != NULL)
		text = xprintf("Denied by the user: %s", c->message);
	else if (c->deny_reason != NULL)
		text = xprintf("Denied: %s. Do not retry the same thing; find "
		    "another way or ask the user.", c->deny_reason);
	else
		text = xstrdup("Denied by the user. Do not retry the same "
		    "thing; find another way or ask the user.");
	agent_finish_call_text(a, c, text, 1);
	free(text);
}

static void
agent_ask(struct agent *a, struct call *c, const char *kind,
    const char *subject, struct policy_result *pr, const char *diff)
{
	cJSON	*ev, *parts;
	char	*wider = NULL, *rule = NULL;

	free(c->request_id);
	c->request_id = agent_request_id(a, c);
	ev = evlog_new("approval.needed");
	cJSON_AddStringToObject(ev, "request_id", c->request_id);
	cJSON_AddStringToObject(ev, "call_id", c->id);
	cJSON_AddStringToObject(ev, "tool", c->name);
	if (strcmp(kind, "tool") == 0)	/* an MCP tool: what it is given */
		cJSON_AddItemToObject(ev, "arguments", c->args != NULL ?
		    cJSON_Duplicate(c->args, 1) : cJSON_CreateObject());
	else
		cJSON_AddStringToObject(ev, kind, subject);
	/* Which call of the reply: its calls are asked about one by one. */
	cJSON_AddNumberToObject(ev, "call", (double)(c - a->calls) + 1);
	cJSON_AddNumberToObject(ev, "calls", (double)a->ncalls);
	cJSON_AddStringToObject(ev, "cwd", "/workspace");
	if (pr != NULL) {
		cJSON_AddStringToObject(ev, "verdict",
		    policy_verdict_name(pr->verdict));
		parts = policy_result_json(pr);
		cJSON_AddItemToObject(ev, "parts", cJSON_DetachItemFromObject(
		    parts, "parts"));
		cJSON_Delete(parts);
		if (pr->reason != NULL)
			cJSON_AddStringToObject(ev, "reason", pr->reason);
	} else
		cJSON_AddStringToObject(ev, "verdict", "ask");
	if (strcmp(kind, "command") == 0 &&
	    (rule = policy_suggest_rule(a->policy, subject, &wider)) != NULL) {
		cJSON *s = cJSON_AddObjectToObject(ev, "suggestion");
		cJSON_AddStringToObject(s, "rule", rule);
		if (wider != NULL)
			cJSON_AddStringToObject(s, "wider", wider);
	}
	free(rule);
	free(wider);
	if (diff != NULL)
		cJSON_AddStringToObject(ev, "diff", diff);
	c->asked = 1;
	agent_emit(a, ev, 1);
	if (a->ask == AGENT_ASK_DENY) {
		agent_decide(a, c, "deny", "policy", NULL,
		    "no one to ask (--ask deny)");
		agent_denied(a, c);
		agent_kick(a);
		return;
	}
	agent_set_state(a, AGENT_WAITING);
}

struct preview_ctx {
	struct agent	*a;
	char		*call_id;
	char		*subject;
};

static void
agent_preview_done(void *arg, const char *diff, const char *error)
{
	struct preview_ctx	*pc = arg;
	struct agent		*a = pc->a;
	struct call		*c = agent_find_call(a, pc->call_id);

	if (c != NULL && c->previewing && !c->finished) {
		c->previewing = 0;
		if (error != NULL) {
			/* The edit cannot apply: fail it, nothing to ask. */
			agent_finish_call_text(a, c, error, 0);
			agent_kick(a);
		} else {
			struct policy_result *pr = policy_check_write(a->policy,
			    a->mode, pc->subject);
			agent_no_undo(a, c, pr);
			agent_ask(a, c, "path", pc->subject, pr, diff);
			policy_result_free(pr);
		}
	}
	free(pc->call_id);
	free(pc->subject);
	free(pc);
}

static void
agent_checkpoint_failed(struct agent *a, struct call *c, const char *cause)
{
	char	*msg;
	cJSON	*ev;

	msg = xprintf("checkpoint before %s failed: %s; it could not be "
	    "undone, so it is not run without asking", c->name, cause);
	ev = evlog_new("error");
	cJSON_AddStringToObject(ev, "message", msg);
	cJSON_AddStringToObject(ev, "call_id", c->id);
	cJSON_AddStringToObject(ev, "kind", "checkpoint");
	agent_emit(a, ev, 1);
	free(msg);
	c->no_checkpoint = 1;
}

static void
agent_checkpoint_taken(struct agent *a, struct call *c,
    const struct checkpoint_info *ci)
{
	cJSON	*ev;

	ev = evlog_new("checkpoint.taken");
	cJSON_AddNumberToObject(ev, "checkpoint", (double)ci->id);
	cJSON_AddNumberToObject(ev, "step", ++a->last_step);
	cJSON_AddStringToObject(ev, "call_id", c->id);
	cJSON_AddStringToObject(ev, "name", c->name);
	cJSON_AddNumberToObject(ev, "files", (double)ci->files);
	cJSON_AddNumberToObject(ev, "changed", (double)ci->changed);
	cJSON_AddNumberToObject(ev, "bytes", (double)ci->bytes);
	c->checkpointed = 1;
	agent_emit(a, ev, 0);
}

static void
agent_checkpoint_done(void *arg, const struct checkpoint_info *ci,
    const char *cause)
{
	struct ckpt_ctx	*cc = arg, **pp;
	struct agent	*a = cc->a;
	struct call	*c = agent_find_call(a, cc->call_id);

	for (pp = &a->ckpts; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == cc) {
			*pp = cc->next;
			break;
		}
	}
	if (c != NULL && c->checkpointing) {
		c->checkpointing = 0;
		if (!c->finished && ci != NULL)
			agent_checkpoint_taken(a, c, ci);
		else if (!c->finished)
			agent_checkpoint_failed(a, c, cause);
		agent_kick(a);
	}
	free(cc->call_id);
	free(cc);
}

/*
 * A checkpoint before a call that can change files (DESIGN 15), so that
 * it can be undone. It is taken in a thread (a big workspace would hold
 * every session's loop); the call waits for it: 1 while it does. When
 * none can be taken, that is said in the log and the call is marked: in
 * auto mode it then asks (agent_no_undo).
 */
static int
agent_checkpoint(struct agent *a, struct call *c)
{
	struct checkpoint_info	 ci;
	struct ckpt_ctx		*cc;
	char			*cause = NULL;

	if (c->checkpointing)
		return 1;
	if (c->checkpointed || c->no_checkpoint)
		return 0;
	cc = xcalloc(1, sizeof *cc);
	cc->a = a;
	cc->call_id = xstrdup(c->id);
	cc->job = sandbox_checkpoint_start(a->sbx, a->base,
	    agent_checkpoint_done, cc);
	if (cc->job != NULL) {
		cc->next = a->ckpts;
		a->ckpts = cc;
		c->checkpointing = 1;
		return 1;
	}
	free(cc->call_id);
	free(cc);
	if (sandbox_checkpoint(a->sbx, &ci, &cause) != 0) {
		agent_checkpoint_failed(a, c, cause);
		free(cause);
	} else
		agent_checkpoint_taken(a, c, &ci);
	return 0;
}

/* Without a checkpoint, what auto mode would allow is asked about. */
static void
agent_no_undo(struct agent *a, struct call *c, struct policy_result *pr)
{
	if (!c->no_checkpoint || a->mode != POLICY_AUTO ||
	    pr->verdict != POLICY_ALLOW)
		return;
	pr->verdict = POLICY_ASK;
	free(pr->reason);
	pr->reason = xstrdup("no checkpoint could be taken, so this could "
	    "not be undone");
}

/* Judge one call and start it, ask about it, or refuse it. */
static int
agent_judge(struct agent *a, struct call *c)
{
	struct policy_result	*pr;
	enum tool_subject	 kind;
	char			*subject = NULL, *cause = NULL, *msg;
	const char		*rule;
	int			 waits = 0;

	kind = tool_subject(c->name, c->args, &a->tctx, &subject, &cause);
	switch (kind) {
	case TOOL_READ:
		agent_execute(a, c);
		free(subject);
		return 1;
	case TOOL_UNKNOWN:
		msg = xprintf("%s: %s", c->name, cause);
		agent_finish_call_text(a, c, msg, 0);
		free(msg);
		free(cause);
		free(subject);
		return 0;
	case TOOL_COMMAND:
		pr = policy_check_command(a->policy, a->mode, subject);
		break;
	case TOOL_MCP:
		pr = policy_check_tool(a->policy, a->mode, subject);
		break;
	case TOOL_WRITE:
	default:
		pr = policy_check_write(a->policy, a->mode, subject);
		break;
	}
	if (pr->verdict != POLICY_DENY && (kind != TOOL_MCP ||
	    mcp_changes_files(a->mcp, c->name))) {
		if (agent_checkpoint(a, c)) {
			policy_result_free(pr);
			free(subject);
			return 1;	/* judged again once it is taken */
		}
		agent_no_undo(a, c, pr);
	}
	rule = pr->nparts > 0 && pr->parts[0].rule != NULL ?
	    pr->parts[0].rule : NULL;
	/*
	 * run_tests runs the test command the user configured: what the
	 * rules leave open is allowed by that configuration (the filter is
	 * quoted, so it is data). Deny rules and manual mode still hold.
	 */
	if (strcmp(c->name, "run_tests") == 0 && pr->verdict == POLICY_ASK &&
	    a->mode != POLICY_MANUAL && !c->no_checkpoint) {
		agent_decide(a, c, "allow", "policy", NULL,
		    "the session's test command (test_command)");
		agent_execute(a, c);
		policy_result_free(pr);
		free(subject);
		return 1;
	}
	switch (pr->verdict) {
	case POLICY_ALLOW:
		agent_decide(a, c, "allow", "policy", rule, pr->reason);
		agent_execute(a, c);
		waits = 1;
		break;
	case POLICY_DENY:
		agent_decide(a, c, "deny", "policy", rule, pr->reason != NULL ?
		    pr->reason : "the policy denies it");
		agent_denied(a, c);
		break;
	case POLICY_ASK:
		if (kind == TOOL_WRITE && a->ask != AGENT_ASK_DENY) {
			/* Show the human what the write would change. */
			struct preview_ctx *pc = xcalloc(1, sizeof *pc);
			pc->a = a;
			pc->call_id = xstrdup(c->id);
			pc->subject = xstrdup(subject);
			c->previewing = 1;
			agent_set_state(a, AGENT_WAITING);
			if (agent_envd(a, &cause) != 0) {
				free(cause);
				c->previewing = 0;
				free(pc->call_id);
				free(pc->subject);
				free(pc);
				agent_ask(a, c, "path", subject, pr, NULL);
			} else
				tool_preview_write(a->envd, c->name, c->args,
				    agent_preview_done, pc);
		} else
			agent_ask(a, c, kind == TOOL_WRITE ? "path" :
			    kind == TOOL_MCP ? "tool" : "command", subject, pr,
			    NULL);
		waits = 1;
		break;
	}
	policy_result_free(pr);
	free(subject);
	return waits;
}

/* Take the calls of the last assistant message one by one. */
static void
agent_process(struct agent *a)
{
	struct call	*c;
	cJSON		*ev;
	size_t		 i;

	if (!a->run_active || a->req != NULL || a->tool != NULL ||
	    a->log_error != NULL || a->lost)
		return;
	for (i = 0; i < a->ncalls; i++) {
		c = &a->calls[i];
		if (c->finished)
			continue;
		if (a->interrupting) {
			agent_finish_call_text(a, c, "Not run: the user "
			    "interrupted.", 0);
			continue;
		}
		if (!c->logged) {
			ev = evlog_new("tool.call");
			cJSON_AddStringToObject(ev, "call_id", c->id);
			cJSON_AddStringToObject(ev, "name", c->name);
			cJSON_AddItemToObject(ev, "arguments",
			    cJSON_Duplicate(c->args, 1));
			c->logged = 1;
			agent_emit(a, ev, 0);
		}
		if (c->decided) {
			if (strcmp(c->decision, "deny") == 0) {
				agent_denied(a, c);
				continue;
			}
			agent_execute(a, c);
			return;
		}
		if (c->asked || c->previewing) {
			agent_set_state(a, AGENT_WAITING);
			return;
		}
		if (c->checkpointing)
			return;		/* agent_checkpoint_done kicks */
		if (agent_judge(a, c))
			return;
	}
	if (a->interrupting) {
		agent_finish_run(a, "interrupted", "user");
		return;
	}
	agent_request(a);
}

/* Model requests. */

static void
agent_model_delta(void *arg, const char *text, size_t len)
{
	struct agent	*a = arg;
	cJSON		*ev;
	char		*s;

	buf_add(&a->delta, text, len);
	ev = evlog_new("assistant.delta");
	s = xstrndup(text, len);
	cJSON_AddStringToObject(ev, "text", s);
	free(s);
	agent_emit_live(a, ev);
}

static void
agent_model_retry(void *arg, const char *why, int wait_ms)
{
	struct agent	*a = arg;
	cJSON		*ev = evlog_new("model.retry");

	cJSON_AddStringToObject(ev, "message", why);
	cJSON_AddNumberToObject(ev, "wait_ms", wait_ms);
	agent_emit_live(a, ev);
}

static int
agent_over_budget(struct agent *a)
{
	if (a->budget_tokens > 0 && a->in_tok + a->out_tok >= a->budget_tokens)
		return 1;
	if (a->budget_usd > 0 && a->cost >= a->budget_usd)
		return 1;
	return 0;
}

/*
 * Some servers give every call the same id, or none: results are matched
 * to calls by id, so make them unique (the model gets them back as made).
 */
static void
agent_unique_ids(struct agent *a, cJSON *calls)
{
	cJSON		*tc, *prev, *id;
	const char	*s;
	int		 i = 0, dup;
	char		*fresh;

	cJSON_ArrayForEach(tc, calls) {
		i++;
		s = json_str(tc, "id");
		dup = s == NULL || *s == '\0';
		for (prev = calls->child; !dup && prev != tc; prev = prev->next) {
			if (json_str(prev, "id") != NULL &&
			    strcmp(json_str(prev, "id"), s) == 0)
				dup = 1;
		}
		if (!dup)
			continue;
		fresh = xprintf("call_%llu_%d", (unsigned long long)
		    eventlog_last_seq(a->log) + 1, i);
		id = cJSON_CreateString(fresh);
		free(fresh);
		if (cJSON_GetObjectItemCaseSensitive(tc, "id") != NULL)
			cJSON_ReplaceItemInObjectCaseSensitive(tc, "id", id);
		else
			cJSON_AddItemToObject(tc, "id", id);
	}
}

/* model.usage for one reply, counted for the run and the session. */
static void
agent_usage(struct agent *a, struct model_reply *r, const char *purpose)
{
	cJSON	*ev;
	double	 cost;

	cost = model_price(model_spec(a->model), r->input_tokens,
	    r->cached_input_tokens, r->output_tokens);
	a->in_tok += r->input_tokens;
	a->out_tok += r->output_tokens;
	a->cached_tok += r->cached_input_tokens;
	a->cost += cost;
	a->run_in += r->input_tokens;
	a->run_out += r->output_tokens;
	a->run_cached += r->cached_input_tokens;
	a->run_cost += cost;
	ev = evlog_new("model.usage");
	cJSON_AddNumberToObject(ev, "input_tokens", (double)r->input_tokens);
	cJSON_AddNumberToObject(ev, "output_tokens", (double)r->output_tokens);
	cJSON_AddNumberToObject(ev, "cached_input_tokens",
	    (double)r->cached_input_tokens);
	cJSON_AddNumberToObject(ev, "cost_usd", cost);
	if (purpose != NULL)
		cJSON_AddStringToObject(ev, "purpose", purpose);
	cJSON_AddStringToObject(ev, "model", model_spec(a->model));
	cJSON_AddNumberToObject(ev, "duration_ms", (double)(mono_ms() -
	    a->req_started));
	agent_emit(a, ev, 0);
}

static void
agent_model_done(void *arg, struct model_reply *r)
{
	struct agent	*a = arg;
	cJSON		*ev, *calls, *tools;

	a->req = NULL;
	buf_reset(&a->delta);
	a->context_retried = 0;
	tools = agent_tools(a);
	context_calibrate(a->cx, a->sent, tools, r->input_tokens);
	cJSON_Delete(tools);
	cJSON_Delete(a->sent);
	a->sent = NULL;
	ev = evlog_new("assistant.message");
	cJSON_AddStringToObject(ev, "text", r->text != NULL ? r->text : "");
	calls = cJSON_Duplicate(r->tool_calls, 1);
	agent_unique_ids(a, calls);
	cJSON_AddItemToObject(ev, "tool_calls", calls);
	agent_set_calls(a, calls);
	/*
	 * The usage first: the message's fsync makes both durable, so a
	 * budget never undercounts a message the log has after a crash.
	 */
	agent_usage(a, r, NULL);
	agent_emit(a, ev, 1);

	if (a->ncalls == 0) {
		agent_finish_run(a, a->last_denied ? "denied" : "done", NULL);
		return;
	}
	if (agent_over_budget(a)) {
		agent_finish_run(a, "budget", NULL);
		return;
	}
	agent_set_state(a, AGENT_WORKING);
	agent_kick(a);
}

static void	agent_compact(struct agent *, const char *, const char *, int);

static void
agent_model_error(void *arg, enum model_error err, const char *message)
{
	struct agent	*a = arg;

	a->req = NULL;
	buf_reset(&a->delta);
	cJSON_Delete(a->sent);
	a->sent = NULL;
	if (err == MODEL_ERR_CANCELLED)
		return;
	/* Too long after all (the estimate was off): compact, retry once. */
	if (err == MODEL_ERR_CONTEXT && !a->context_retried) {
		a->context_retried = 1;
		a->steps--;
		context_distrust(a->cx);
		agent_compact(a, "auto", NULL, 1);
		return;
	}
	agent_error_event(a, message);
	agent_finish_run(a, "error", "model");
}

static const struct model_cb agent_model_cb = {
	agent_model_delta, agent_model_retry, agent_model_done,
	agent_model_error
};

/*
 * The run ends "denied" only when the model stops right after a step whose
 * every call was refused (it gave up at the denial); a denial earlier in
 * a run that then carried on and finished is "done".
 */
static void
agent_last_step_denied(struct agent *a)
{
	size_t	 i;

	a->last_denied = a->ncalls > 0;
	for (i = 0; i < a->ncalls; i++) {
		if (a->calls[i].decision == NULL ||
		    strcmp(a->calls[i].decision, "deny") != 0)
			a->last_denied = 0;
	}
}

/* The session's model, made at its first use. */
static int
agent_model(struct agent *a)
{
	const char	*spec, *base_url;
	char		*cause = NULL, *msg;

	if (a->model_next != NULL && a->req == NULL) {
		model_free(a->model);
		a->model = a->model_next;
		a->model_next = NULL;
	}
	if (a->model != NULL)
		return 0;
	spec = agent_model_spec(a);
	base_url = json_str(a->meta, "base_url");
	a->model = model_new(spec, base_url != NULL && *base_url != '\0' ?
	    base_url : NULL, &cause);
	if (a->model == NULL) {
		msg = xprintf("model: %s", cause);
		agent_error_event(a, msg);
		free(msg);
		free(cause);
		return -1;
	}
	return 0;
}

/* Compaction (DESIGN 14). */

/* After a compaction: on with the run, or back to idle. */
static void
agent_compact_next(struct agent *a)
{
	a->compacting = 0;
	if (a->run_active) {
		a->compacted = 1;
		agent_request(a);
		return;
	}
	agent_set_state(a, a->compact_state);
}

/*
 * Log context.compacted: one line, fsync'd, so a crash leaves it whole or
 * not there; until it is there the conversation is what it was.
 */
static void
agent_compact_log(struct agent *a, const char *summary, const char *fallback)
{
	cJSON		*ev, *msgs, *tools;
	char		*sys;
	long long	 after;
	uint64_t	 last = eventlog_last_seq(a->log);

	ev = evlog_new("context.compacted");
	if (summary != NULL)
		cJSON_AddStringToObject(ev, "summary", summary);
	else if (context_summary(a->cx) != NULL)
		cJSON_AddStringToObject(ev, "summary", context_summary(a->cx));
	else
		cJSON_AddNullToObject(ev, "summary");
	cJSON_AddNumberToObject(ev, "through_seq", (double)(summary != NULL ?
	    a->plan.through : context_through(a->cx)));
	cJSON_AddNumberToObject(ev, "trimmed_through",
	    (double)a->plan.trim_through);
	context_apply(a->cx, ev);

	/* Still too long (a huge last turn): cut every tool result. */
	sys = agent_system(a);
	tools = agent_tools(a);
	msgs = context_messages(a->cx, a->history, sys, 0, 0);
	after = context_tokens(a->cx, msgs, tools);
	cJSON_Delete(msgs);
	if (after > context_window(a->cx) * context_compact_at(a->cx) / 100 &&
	    a->plan.trim_through < last) {
		cJSON_ReplaceItemInObjectCaseSensitive(ev, "trimmed_through",
		    cJSON_CreateNumber((double)last));
		context_apply(a->cx, ev);
		msgs = context_messages(a->cx, a->history, sys, 0, 0);
		after = context_tokens(a->cx, msgs, tools);
		cJSON_Delete(msgs);
	}
	free(sys);
	cJSON_Delete(tools);
	a->cx_tokens = after;
	cJSON_AddNumberToObject(ev, "tokens_before", (double)a->plan.tokens);
	cJSON_AddNumberToObject(ev, "tokens_after", (double)after);
	cJSON_AddStringToObject(ev, "by", a->compact_by);
	if (a->compact_focus != NULL)
		cJSON_AddStringToObject(ev, "focus", a->compact_focus);
	if (fallback != NULL)
		cJSON_AddStringToObject(ev, "fallback", fallback);
	agent_emit(a, ev, 1);
	free(a->compact_focus);
	a->compact_focus = NULL;
}

static void
agent_compact_fallback(struct agent *a, const char *why)
{
	char	*summary;

	summary = context_fallback(a->cx, a->history, a->plan.through, why);
	agent_compact_log(a, summary, why);
	free(summary);
}

static void
agent_compact_done(void *arg, struct model_reply *r)
{
	struct agent	*a = arg;

	a->req = NULL;
	agent_usage(a, r, "compaction");
	if (r->text == NULL || *r->text == '\0')
		agent_compact_fallback(a, "the model's summary was empty");
	else
		agent_compact_log(a, r->text, NULL);
	agent_compact_next(a);
}

/* The summary request failed: never a dead end, drop instead. */
static void
agent_compact_error(void *arg, enum model_error err, const char *message)
{
	struct agent	*a = arg;
	char		*why;

	a->req = NULL;
	if (err == MODEL_ERR_CANCELLED)
		return;
	why = xprintf("the summary request failed: %s", message);
	log_warnx("session '%s': %s", a->name, why);
	agent_compact_fallback(a, why);
	free(why);
	agent_compact_next(a);
}

static const struct model_cb agent_compact_cb = {
	NULL, agent_model_retry, agent_compact_done, agent_compact_error
};

/*
 * Make room: cut old tool results, and if that is not enough ask the
 * model for a summary of all but the recent tail. by is "auto" or "user";
 * force compacts even below compact_at.
 */
static void
agent_compact(struct agent *a, const char *by, const char *focus, int force)
{
	cJSON	*tools, *msgs, *m;
	char	*sys;
	int	 need;

	a->compact_by = by;
	if (focus != NULL && a->compact_focus == NULL)
		a->compact_focus = xstrdup(focus);
	sys = agent_system(a);
	tools = agent_tools(a);
	need = context_plan(a->cx, a->history, sys, tools, force, &a->plan);
	if (!need) {
		free(sys);
		cJSON_Delete(tools);
		agent_compact_next(a);
		return;
	}
	if (a->plan.through == 0) {
		agent_compact_log(a, NULL, NULL);	/* trimming was enough */
		free(sys);
		cJSON_Delete(tools);
		agent_compact_next(a);
		return;
	}
	m = evlog_new("context.compacting");
	cJSON_AddStringToObject(m, "by", by);
	agent_emit_live(a, m);
	msgs = context_summary_request(a->cx, a->history, sys, &a->plan,
	    a->compact_focus);
	free(sys);
	a->compacting = 1;
	agent_set_state(a, AGENT_WORKING);
	a->req_started = mono_ms();
	a->req = model_request(a->model, a->base, msgs, tools,
	    &agent_compact_cb, a);
	cJSON_Delete(msgs);
	cJSON_Delete(tools);
}

static void
agent_request(struct agent *a)
{
	cJSON		*tools;
	int		 compacted = a->compacted;

	/* The MCP servers' tools are listed first (their changed kicks). */
	if (!mcp_prepare(a->mcp)) {
		a->mcp_waiting = 1;
		agent_set_state(a, AGENT_WORKING);
		return;
	}
	a->compacted = 0;
	if (a->steps >= a->steps_cap) {
		agent_finish_run(a, "step_limit", NULL);
		return;
	}
	if (agent_over_budget(a)) {
		agent_finish_run(a, "budget", NULL);
		return;
	}
	if (agent_model(a) != 0) {
		agent_finish_run(a, "error", "model");
		return;
	}
	agent_instructions(a);
	if (!compacted) {
		/* By hand (asked for mid-step), or over compact_at. */
		agent_compact(a, a->compact_pending ? "user" : "auto", NULL,
		    a->compact_pending);
		a->compact_pending = 0;
		return;
	}
	agent_last_step_denied(a);
	agent_clear_calls(a);
	a->steps++;
	a->pending_user = 0;
	agent_set_state(a, AGENT_WORKING);
	cJSON_Delete(a->sent);
	a->sent = agent_messages(a);
	tools = agent_tools(a);
	a->cx_tokens = context_tokens(a->cx, a->sent, tools);
	a->req_started = mono_ms();
	a->req = model_request(a->model, a->base, a->sent, tools,
	    &agent_model_cb, a);
	cJSON_Delete(tools);
}

int
agent_compact_now(struct agent *a, const char *focus, char **cause)
{
	if (a->compacting) {
		*cause = xprintf("session '%s': a compaction is already running",
		    a->name);
		return -1;
	}
	if (agent_rewinding(a, cause))
		return -1;
	if (a->run_active) {
		/* Between two steps: done before the next request. */
		a->compact_pending = 1;
		free(a->compact_focus);
		a->compact_focus = focus != NULL && *focus != '\0' ?
		    xstrdup(focus) : NULL;
		return 0;
	}
	if (agent_model(a) != 0) {
		*cause = xprintf("session '%s': no model to summarize with",
		    a->name);
		return -1;
	}
	agent_instructions(a);
	a->compact_state = a->state;
	agent_compact(a, "user", focus != NULL && *focus != '\0' ? focus :
	    NULL, 1);
	return 0;
}

int
agent_clear(struct agent *a, const char *by, char **cause)
{
	cJSON	*ev, *msgs, *tools;

	if (a->run_active || a->compacting) {
		*cause = xprintf("session '%s': the agent is working; interrupt "
		    "it (Esc) before a new conversation", a->name);
		return -1;
	}
	if (agent_rewinding(a, cause))
		return -1;
	ev = evlog_new("conversation.cleared");
	cJSON_AddStringToObject(ev, "by", by != NULL ? by : "user");
	if (agent_emit_asked(a, ev, cause) != 0)
		return -1;
	a->compact_pending = 0;
	msgs = agent_messages(a);
	tools = tools_schema();
	a->cx_tokens = context_tokens(a->cx, msgs, tools);
	cJSON_Delete(msgs);
	cJSON_Delete(tools);
	agent_set_state(a, AGENT_IDLE);
	return 0;
}

static void
agent_run_begin(struct agent *a)
{
	a->run_active = 1;
	a->steps = 0;
	mcp_rearm(a->mcp);
	a->run_in = a->run_out = a->run_cached = 0;
	a->run_cost = 0;
}

static void
agent_finish_run(struct agent *a, const char *reason, const char *source)
{
	cJSON	*ev;
	size_t	 i;
	char	*text;

	/* Every call gets an answer, so the conversation stays whole. */
	for (i = 0; i < a->ncalls; i++) {
		if (a->calls[i].finished)
			continue;
		text = xprintf("Not run: the run ended (%s).", reason);
		agent_finish_call_text(a, &a->calls[i], text, 0);
		free(text);
	}
	ev = evlog_new("run.finished");
	cJSON_AddStringToObject(ev, "reason", reason);
	cJSON_AddNumberToObject(ev, "steps", a->steps);
	if (source != NULL)
		cJSON_AddStringToObject(ev, "source", source);
	agent_emit(a, ev, 1);
	a->run_active = 0;
	mcp_idle(a->mcp);
	a->interrupting = 0;
	a->last_denied = 0;
	agent_clear_calls(a);
	if (strcmp(reason, "done") == 0)
		agent_set_state(a, AGENT_FINISHED);
	else if (strcmp(reason, "error") == 0)
		agent_set_state(a, AGENT_ERROR);
	else
		agent_set_state(a, AGENT_IDLE);
	if (a->cb.finished != NULL)
		a->cb.finished(a->arg, reason, source);
	/* A message that came in while the run ended starts the next one. */
	if (a->pending_user > 0 && strcmp(reason, "interrupted") != 0) {
		a->pending_user = 0;
		agent_run_begin(a);
		agent_kick(a);
	}
}

/* The sandbox connection. */

static struct envd_conn *
agent_mcp_envd(void *arg, char **cause)
{
	struct agent	*a = arg;

	return agent_envd(a, cause) == 0 ? a->envd : NULL;
}

/* The MCP servers' tools are known now: a request waiting goes on. */
static void
agent_mcp_changed(void *arg)
{
	struct agent	*a = arg;

	if (a->mcp_waiting) {
		a->mcp_waiting = 0;
		agent_kick(a);
	}
}

/* A server left out of the run: the user sees why (mcp.failed). */
static void
agent_mcp_failed(void *arg, const char *server, const char *why)
{
	struct agent	*a = arg;
	cJSON		*ev = evlog_new("mcp.failed");

	cJSON_AddStringToObject(ev, "server", server);
	cJSON_AddStringToObject(ev, "message", why);
	agent_emit(a, ev, 0);
}

/* The tools the model is offered: holt's own and the MCP servers'. */
static cJSON *
agent_tools(struct agent *a)
{
	cJSON	*tools = tools_schema(), *more, *t;

	if (a->mcp == NULL)
		return tools;
	more = mcp_tools(a->mcp);
	while ((t = cJSON_DetachItemFromArray(more, 0)) != NULL)
		cJSON_AddItemToArray(tools, t);
	cJSON_Delete(more);
	return tools;
}

static void
agent_envd_closed(void *arg, const char *why)
{
	struct agent	*a = arg;

	log_warnx("session '%s': %s", a->name, why);
}

static int
agent_envd(struct agent *a, char **cause)
{
	int	 fd;

	if (agent_rewinding(a, cause))
		return -1;	/* stopped until its files are back */
	if (a->envd != NULL && envd_conn_alive(a->envd)) {
		/*
		 * Paused while idle (--idle-pause), the connection stays:
		 * resume. (Asked only of a sandbox that pauses so.)
		 */
		if (sandbox_idle_pause(a->sbx) > 0 &&
		    sandbox_state(a->sbx) == SANDBOX_PAUSED &&
		    sandbox_resume(a->sbx, cause) != 0)
			return -1;
		return 0;
	}
	if (a->envd != NULL) {
		if (a->tool != NULL)
			return -1;
		envd_conn_free(a->envd);
		a->envd = NULL;
	}
	switch (sandbox_state(a->sbx)) {
	case SANDBOX_STOPPED:
		if (sandbox_start(a->sbx, cause) != 0)
			return -1;
		break;
	case SANDBOX_PAUSED:
		if (sandbox_resume(a->sbx, cause) != 0)
			return -1;
		break;
	case SANDBOX_RUNNING:
	case SANDBOX_UNREACHABLE:	/* connect says why */
		break;
	}
	if ((fd = sandbox_connect(a->sbx, cause)) == -1)
		return -1;
	sandbox_touch(a->sbx);
	a->envd = envd_conn_new(a->base, fd, agent_envd_closed, a);
	return 0;
}

/* Rewind (DESIGN 15). */

static int
agent_rewind_done(const cJSON *events, const char *id)
{
	const cJSON	*e;

	cJSON_ArrayForEach(e, events) {
		if (strcmp(json_str(e, "type"), "session.rewound") == 0 &&
		    json_str(e, "id") != NULL &&
		    strcmp(json_str(e, "id"), id) == 0)
			return 1;
	}
	return 0;
}

static int
steps_wants(const char *type)
{
	return strcmp(type, "checkpoint.taken") == 0 ||
	    strcmp(type, "session.rewound") == 0;
}

static void
steps_add(void *arg, cJSON *ev)
{
	cJSON_AddItemToArray(arg, ev);
}

/*
 * The steps and rewinds of the log, read one line at a time: the history
 * in memory no longer holds every step's events.
 */
static cJSON *
agent_read_steps(struct agent *a, char **cause)
{
	cJSON	*events = cJSON_CreateArray();
	char	*warning = NULL;

	if (eventlog_scan(a->name, steps_wants, steps_add, events, &warning,
	    cause) != 0) {
		cJSON_Delete(events);
		return NULL;
	}
	free(warning);
	return events;
}

/*
 * Log the session.rewound a restore's journal describes (its tag), once:
 * after a crash it may already be there. Called between the restore and
 * the journal's removal, so the files and the log agree whatever happens.
 */
static int
agent_rewind_recorded(void *arg, const char *tag, char **cause)
{
	struct agent	*a = arg;
	cJSON		*ev = NULL, *events;
	const char	*id;

	if (tag == NULL || (ev = cJSON_Parse(tag)) == NULL ||
	    (id = json_str(ev, "id")) == NULL) {
		cJSON_Delete(ev);
		return 0;	/* a restore by hand: nothing to log */
	}
	if ((events = agent_read_steps(a, cause)) == NULL) {
		cJSON_Delete(ev);
		return -1;
	}
	if (!agent_rewind_done(events, id)) {
		cJSON_AddStringToObject(ev, "type", "session.rewound");
		if (a->opening)
			eventlog_append(a->log, ev, 1);	/* read back later */
		else {
			agent_emit(a, ev, 1);
			ev = NULL;
		}
	}
	cJSON_Delete(ev);
	cJSON_Delete(events);
	return 0;
}

/* A files rewind is under way: nothing else may use the sandbox. */
static int
agent_rewinding(struct agent *a, char **cause)
{
	if (a->rewind == NULL)
		return 0;
	*cause = xprintf("session '%s' is rewinding its files: wait for it",
	    a->name);
	return 1;
}

static void
agent_rewound(struct agent *a)
{
	agent_clear_calls(a);
	a->steps = 0;
	agent_set_state(a, AGENT_IDLE);
}

/* The files are back (error NULL), from the loop. */
static void
agent_rewind_end(void *arg, const char *error)
{
	struct agent	*a = arg;

	a->rewind = NULL;
	if (error == NULL)
		agent_rewound(a);
	if (a->rewind_cb != NULL)
		a->rewind_cb(a->rewind_arg, error);
	a->rewind_cb = NULL;
}

int
agent_rewind(struct agent *a, int step, int files, int conversation,
    const char *rid, const char *by, void (*done)(void *, const char *),
    void *arg, char **cause)
{
	cJSON		*events, *tag;
	const cJSON	*ck;
	char		*s, *id;
	long long	 checkpoint;
	int		 rc;

	if (a->run_active) {
		*cause = xprintf("session '%s' is working: interrupt it first "
		    "(holt interrupt -t %s)", a->name, a->name);
		return -1;
	}
	if (agent_rewinding(a, cause))
		return -1;
	if ((events = agent_read_steps(a, cause)) == NULL)
		return -1;
	/* A client resends a request the server died on: done once. */
	if (rid != NULL && agent_rewind_done(events, rid)) {
		cJSON_Delete(events);
		return 0;
	}
	if ((ck = session_find_step(events, step)) == NULL) {
		if (a->last_step > 0)
			*cause = xprintf("session '%s': no step %d (the steps "
			    "are 1 to %d)", a->name, step, a->last_step);
		else
			*cause = xprintf("session '%s': no step %d (no "
			    "checkpoint was taken yet)", a->name, step);
		cJSON_Delete(events);
		return -1;
	}
	checkpoint = (long long)json_num(ck, "checkpoint", 0);
	cJSON_Delete(events);
	if (conversation && session_find_step(a->history, step) == NULL) {
		*cause = xprintf("session '%s': step %d is not in the "
		    "conversation any more (a rewind went back before it); "
		    "--files-only can still put its files back", a->name, step);
		return -1;
	}
	if (rid != NULL && *rid != '\0' && strlen(rid) < 128)
		id = xstrdup(rid);
	else
		id = xprintf("rw-%llu-%llu", (unsigned long long)json_now_ms(),
		    (unsigned long long)eventlog_last_seq(a->log) + 1);
	tag = cJSON_CreateObject();
	cJSON_AddStringToObject(tag, "id", id);
	free(id);
	cJSON_AddNumberToObject(tag, "to_step", step);
	cJSON_AddNumberToObject(tag, "checkpoint", (double)checkpoint);
	cJSON_AddBoolToObject(tag, "files", files);
	cJSON_AddBoolToObject(tag, "conversation", conversation);
	if (by != NULL)
		cJSON_AddStringToObject(tag, "by", by);
	s = json_print(tag);
	cJSON_Delete(tag);
	if (files) {
		/* The sandbox stops and starts: its connection goes. */
		envd_conn_free(a->envd);
		a->envd = NULL;
		a->rewind = sandbox_restore_start(a->sbx, a->base, checkpoint,
		    s, agent_rewind_recorded, agent_rewind_end, a, cause);
		free(s);
		if (a->rewind == NULL)
			return -1;
		a->rewind_cb = done;
		a->rewind_arg = arg;
		return 1;
	}
	rc = agent_rewind_recorded(a, s, cause);
	free(s);
	if (rc == 0)
		agent_rewound(a);
	return rc;
}

/* Public. */

/* The totals: model.usage is read where it lies, not parsed. */
static int
agent_open_other(void *arg, const struct eventlog_line *l)
{
	struct agent	*a = arg;

	if (strcmp(l->type, "model.usage") == 0) {
		a->in_tok += (long long)eventlog_line_num(l, "input_tokens");
		a->out_tok += (long long)eventlog_line_num(l, "output_tokens");
		a->cached_tok += (long long)eventlog_line_num(l,
		    "cached_input_tokens");
		a->cost += eventlog_line_num(l, "cost_usd");
		return 0;
	}
	return strcmp(l->type, "instructions.loaded") == 0;
}

/* What the live traces were fed: the conversation's events and usage. */
static int
agent_otlp_wants(const char *type)
{
	return history_type(type) || strcmp(type, "model.usage") == 0 ||
	    strcmp(type, "instructions.loaded") == 0;
}

static void
agent_otlp_event(void *arg, cJSON *ev)
{
	struct agent	*a = arg;

	otlp_trace_feed(a->otlp, ev, NULL);	/* sent already */
	cJSON_Delete(ev);
}

/* An event of the log, at agent_open: the totals and what it last read. */
static void
agent_open_note(void *arg, const cJSON *ev)
{
	struct agent	*a = arg;
	const char	*type = json_str(ev, "type");

	if (strcmp(type, "model.usage") == 0) {
		a->in_tok += (long long)json_num(ev, "input_tokens", 0);
		a->out_tok += (long long)json_num(ev, "output_tokens", 0);
		a->cached_tok += (long long)json_num(ev, "cached_input_tokens",
		    0);
		a->cost += json_num(ev, "cost_usd", 0);
	} else if (strcmp(type, "instructions.loaded") == 0 &&
	    json_str(ev, "text") != NULL) {
		free(a->instructions);
		a->instructions = xstrdup(json_str(ev, "text"));
		context_set_instructions(a->cx, a->instructions);
	} else if (strcmp(type, "checkpoint.taken") == 0 &&
	    (int)json_num(ev, "step", 0) > a->last_step)
		a->last_step = (int)json_num(ev, "step", 0);
}

static void
agent_open_add(void *arg, cJSON *ev)
{
	agent_history_add(arg, ev);
}

static uint64_t
agent_open_through(void *arg)
{
	return context_through(((struct agent *)arg)->cx);
}

static const struct history_cb agent_open_cb = {
	history_type, history_kept, agent_open_other, agent_open_add,
	agent_open_note, agent_open_through
};

/* The model of the session: session.json, else holt.conf. */
static const char *
agent_model_spec(struct agent *a)
{
	const char	*spec = json_str(a->meta, "model");

	return spec != NULL && *spec != '\0' ? spec : config_get("model");
}

/*
 * Something the user must hear of when the session starts (an error event
 * at agent_start, so attaching shows it), and the server log now.
 */
static void
agent_warn(struct agent *a, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg, *old = a->warning;

	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	log_warnx("session '%s': %s", a->name, msg);
	if (old == NULL)
		a->warning = msg;
	else {
		a->warning = xprintf("%s; %s", old, msg);
		free(old);
		free(msg);
	}
}

/*
 * The repository's own .holt/policy, which may only tighten. The workspace
 * is hostile: the file must be a regular file really inside it (no link
 * out to a host file), and a broken one is reported, not fatal, so that a
 * repository cannot stop its own sessions.
 */
static void
agent_workspace_policy(struct agent *a)
{
	char		*ws, *path, *real = NULL, *realws = NULL, *cause = NULL;
	struct stat	 sb;

	ws = sandbox_workspace(a->sbx);
	path = xprintf("%s/%s", ws, POLICY_WORKSPACE_FILE);
	if (lstat(path, &sb) != 0)
		goto out;
	realws = realpath(ws, NULL);
	real = realpath(path, NULL);
	if (!S_ISREG(sb.st_mode) || realws == NULL || real == NULL ||
	    strncmp(real, realws, strlen(realws)) != 0 ||
	    real[strlen(realws)] != '/') {
		agent_warn(a, "the workspace's %s is not a regular file inside "
		    "the workspace: ignored", POLICY_WORKSPACE_FILE);
		goto out;
	}
	if (policy_load_file(a->policy, real, "workspace", &cause) != 0) {
		agent_warn(a, "the workspace's policy is ignored: %s", cause);
		free(cause);
	}
out:
	free(real);
	free(realws);
	free(path);
	free(ws);
}

/* The policy: built-in, the user's, the session's, the workspace's. */
static int
agent_load_policy(struct agent *a, char **cause)
{
	struct policy	*old = a->policy;
	char		*dir;

	a->policy = policy_new();
	dir = paths_join(paths_config_dir(), "policy");
	if (policy_load_file(a->policy, dir, "user", cause) != 0 ||
	    policy_load_file(a->policy, a->rules_path, "session", cause) != 0) {
		free(dir);
		policy_free(a->policy);
		a->policy = old;
		return -1;
	}
	free(dir);
	agent_workspace_policy(a);
	policy_free(old);
	return 0;
}

cJSON *
agent_rules(struct agent *a)
{
	cJSON	*list = cJSON_CreateArray();
	char	*data, *line, *next;
	size_t	 len;

	if ((data = file_read(a->rules_path, &len, 0)) == NULL)
		return list;
	for (line = data; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (*line != '\0' && *line != '#')
			cJSON_AddItemToArray(list, cJSON_CreateString(line));
	}
	free(data);
	return list;
}

int
agent_delete_rule(struct agent *a, int n, char **cause)
{
	struct buf	 b = BUF_INIT;
	char		*data, *line, *next;
	size_t		 len;
	int		 i = 0, found = 0, rc;

	if ((data = file_read(a->rules_path, &len, 0)) == NULL) {
		*cause = xstrdup("this session has no rules of its own");
		return -1;
	}
	for (line = data; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (*line != '\0' && *line != '#' && ++i == n) {
			found = 1;
			continue;
		}
		buf_addf(&b, "%s\n", line);
	}
	free(data);
	if (!found) {
		buf_release(&b);
		*cause = xprintf("rule %d: no such rule (the session has %d)",
		    n, i);
		return -1;
	}
	rc = file_write_atomic(a->rules_path, b.data != NULL ? b.data : "",
	    b.len, 0600);
	buf_release(&b);
	if (rc != 0) {
		*cause = xprintf("%s: %s", a->rules_path, strerror(errno));
		return -1;
	}
	return agent_load_policy(a, cause);
}

struct agent *
agent_open(const char *name, struct event_base *base, const struct agent_cb *cb,
    void *arg, char **cause)
{
	struct agent	*a;
	char		*warning = NULL, *dir, *msg = NULL;
	const char	*sbx, *mode;
	int		 rc;

	a = xcalloc(1, sizeof *a);
	a->name = xstrdup(name);
	a->base = base;
	if (cb != NULL)
		a->cb = *cb;
	a->arg = arg;
	a->history = cJSON_CreateArray();
	a->unlogged = cJSON_CreateArray();
	a->kick = evtimer_new(base, agent_kick_cb, a);
	a->lost_timer = evtimer_new(base, agent_lost_cb, a);
	a->log_retry = evtimer_new(base, agent_log_retry_cb, a);
	a->lock_fd = -1;
	if ((a->meta = session_load(name, cause)) == NULL)
		goto fail;

	/* Two agents on one log would interleave it: one runs, one refuses. */
	dir = session_dir(name);
	msg = paths_join(dir, "lock");
	free(dir);
	a->lock_fd = open(msg, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(msg);
	msg = NULL;
	if (a->lock_fd == -1) {
		dir = xprintf("session '%s'", name);
		*cause = file_open_error(dir, errno);
		free(dir);
		goto fail;
	}
	if (flock(a->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		*cause = xprintf("session '%s' is being run by another holt "
		    "process (the server, or holt run)", name);
		goto fail;
	}

	if (json_str(a->meta, "repo") != NULL)
		config_select_repo(json_str(a->meta, "repo"));
	sbx = json_str(a->meta, "sandbox");
	if (sbx == NULL) {
		dir = session_dir(name);
		*cause = xprintf("session '%s': %s/session.json names no "
		    "sandbox (its \"sandbox\" field is missing or not a "
		    "string)", name, dir);
		free(dir);
		goto fail;
	}
	if ((a->sbx = sandbox_open(sbx, &msg)) == NULL &&
	    (errno == EMFILE || errno == ENFILE)) {
		/* Not gone: holt is out of file descriptors. */
		free(msg);
		dir = xprintf("session '%s': its sandbox '%s'", name, sbx);
		*cause = file_open_error(dir, errno);
		free(dir);
		goto fail;
	}
	if (a->sbx == NULL) {
		*cause = xprintf("session '%s': its sandbox '%s' is gone (%s); "
		    "the session cannot go on without it", name, sbx,
		    msg != NULL ? msg : "no sandbox");
		free(msg);
		goto fail;
	}

	dir = session_dir(name);
	a->rules_path = paths_join(dir, "policy");
	free(dir);
	if (agent_load_policy(a, cause) != 0)
		goto fail;
	mode = json_str(a->meta, "mode");
	if (mode == NULL || policy_mode_parse(mode, &a->mode) != 0)
		policy_mode_parse(config_get("mode"), &a->mode);

	a->test_command = xstrdup(json_str(a->meta, "test_command") != NULL ?
	    json_str(a->meta, "test_command") : config_get("test_command"));
	a->tctx.test_command = a->test_command;
	a->tctx.timeout_s = config_get_num("command_timeout");
	a->tctx.output_cap = (size_t)config_get_num("output_cap");
	{
		struct mcp_host mh = { base, agent_mcp_envd, agent_mcp_changed,
		    a, a->name, agent_mcp_failed };

		a->mcp = mcp_new(&mh);
		a->tctx.mcp = a->mcp;
	}
	a->steps_cap = (int)json_num(a->meta, "steps_cap",
	    (double)config_get_num("steps"));
	if (a->steps_cap <= 0)
		a->steps_cap = 25;
	a->budget_tokens = config_get_num("budget_tokens");
	a->budget_usd = strtod(config_get("budget_usd"), NULL);

	if ((a->log = eventlog_open(name, cause)) == NULL)
		goto fail;
	/* A rewind a crash cut short is finished before anything else. */
	a->opening = 1;
	rc = sandbox_recover(a->sbx, agent_rewind_recorded, a, &msg);
	a->opening = 0;
	if (rc != 0) {
		log_warnx("session '%s': %s", name, msg);
		a->warning = xprintf("an unfinished rewind could not be "
		    "finished: %s", msg);
		free(msg);
		msg = NULL;
	}
	/* The server and holt run export traces live (otel_endpoint). */
	if (otlp_export_enabled() && *config_get("otel_endpoint") != '\0') {
		a->otlp_endpoint = xstrdup(config_get("otel_endpoint"));
		a->otlp = otlp_trace_new(name, sbx, agent_model_spec(a));
	}
	/*
	 * The traces go on where they stood: every event they saw, in order
	 * (a walk of its own: tracing is asked for, and rare).
	 */
	if (a->otlp != NULL && eventlog_scan(name, agent_otlp_wants,
	    agent_otlp_event, a, &warning, cause) != 0)
		goto fail;
	free(warning);
	warning = NULL;
	/* One line at a time, keeping only what the conversation needs. */
	a->cx = context_new(agent_model_spec(a));
	if (history_read(name, a->log, &agent_open_cb, a, &warning,
	    cause) != 0)
		goto fail;
	if (warning != NULL) {
		agent_warn(a, "%s", warning);	/* the user sees it too */
		free(warning);
	}
	agent_rebuild(a);
	{
		cJSON *msgs = agent_messages(a), *tools = agent_tools(a);
		a->cx_tokens = context_tokens(a->cx, msgs, tools);
		cJSON_Delete(msgs);
		cJSON_Delete(tools);
	}
	config_select_repo(NULL);	/* the server holds many sessions */
	a->state = a->run_active ? AGENT_WORKING : AGENT_IDLE;
	if (!a->run_active) {
		cJSON *last = cJSON_GetArrayItem(a->history,
		    cJSON_GetArraySize(a->history) - 1);
		if (last != NULL && strcmp(json_str(last, "type"),
		    "run.finished") == 0) {
			const char *reason = json_str(last, "reason");
			if (reason != NULL && strcmp(reason, "done") == 0)
				a->state = AGENT_FINISHED;
			else if (reason != NULL && strcmp(reason, "error") == 0)
				a->state = AGENT_ERROR;
		}
	}
	return a;
fail:
	config_select_repo(NULL);
	agent_free(a);
	return NULL;
}

void
agent_free(struct agent *a)
{
	if (a == NULL)
		return;
	if (a->req != NULL)
		model_request_cancel(a->req);
	if (a->rewind != NULL) {
		sandbox_restore_cancel(a->rewind);
		if (a->rewind_cb != NULL)
			a->rewind_cb(a->rewind_arg, "the session ended before "
			    "its files were back; they are put back when it "
			    "is opened again");
	}
	while (a->ckpts != NULL) {
		struct ckpt_ctx *cc = a->ckpts;

		a->ckpts = cc->next;
		sandbox_checkpoint_cancel(cc->job);
		free(cc->call_id);
		free(cc);
	}
	if (a->tool != NULL)
		tool_exec_free(a->tool);
	mcp_free(a->mcp);	/* before envd: its servers use it */
	while (a->host_asks != NULL) {
		struct host_ask *h = agent_take_host_ask(a, NULL);

		h->cb(h->arg, "deny", "the session ended");
		agent_host_ask_free(h);
	}
	envd_conn_free(a->envd);
	model_free(a->model);
	model_free(a->model_next);
	cJSON_Delete(a->sent);
	context_free(a->cx);
	otlp_trace_free(a->otlp);
	free(a->otlp_endpoint);
	free(a->instructions);
	free(a->compact_focus);
	if (a->kick != NULL)
		event_free(a->kick);
	if (a->lost_timer != NULL)
		event_free(a->lost_timer);
	if (a->log_retry != NULL)
		event_free(a->log_retry);
	if (cJSON_GetArraySize(a->unlogged) > 0)
		log_warnx("session '%s': %d events never reached the log (%s)",
		    a->name, cJSON_GetArraySize(a->unlogged), a->log_error);
	cJSON_Delete(a->unlogged);
	free(a->log_error);
	agent_clear_calls(a);
	cJSON_Delete(a->history);
	cJSON_Delete(a->meta);
	eventlog_close(a->log);
	if (a->policy != NULL)
		policy_free(a->policy);
	sandbox_free(a->sbx);
	if (a->lock_fd != -1)
		close(a->lock_fd);
	free(a->warning);
	cJSON_Delete(a->answered);
	buf_release(&a->delta);
	buf_release(&a->output_tail);
	free(a->rules_path);
	free(a->test_command);
	free(a->name);
	free(a);
}

void
agent_set_ask(struct agent *a, enum agent_ask ask)
{
	a->ask = ask;
}

void
agent_set_steps(struct agent *a, int steps)
{
	if (steps > 0)
		a->steps_cap = steps;
}

/* The last event of the conversation is an answer without tool calls. */
static int
agent_answered_last(struct agent *a)
{
	cJSON	*last = cJSON_GetArrayItem(a->history,
	    cJSON_GetArraySize(a->history) - 1);

	return last != NULL && strcmp(json_str(last, "type"),
	    "assistant.message") == 0 &&
	    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(last,
	    "tool_calls")) == 0;
}

/*
 * Rebuilt after a crash: was every call of the step before the final
 * answer denied (the run's reason is then denied, as it would have been)?
 */
static int
agent_step_all_denied(struct agent *a)
{
	cJSON		*ev, *prev = NULL, *call;
	const char	*id;
	int		 denied, any = 0;

	for (ev = cJSON_GetArrayItem(a->history, cJSON_GetArraySize(
	    a->history) - 1)->prev; ev != NULL; ev = ev->prev) {
		if (strcmp(json_str(ev, "type"), "assistant.message") == 0) {
			prev = ev;
			break;
		}
		if (strcmp(json_str(ev, "type"), "user.message") == 0)
			return 0;
	}
	if (prev == NULL)
		return 0;
	cJSON_ArrayForEach(call, cJSON_GetObjectItemCaseSensitive(prev,
	    "tool_calls")) {
		id = json_str(call, "id");
		denied = 0;
		for (ev = prev->next; ev != NULL && id != NULL; ev = ev->next) {
			if (strcmp(json_str(ev, "type"), "approval.decided") ==
			    0 && json_str(ev, "call_id") != NULL &&
			    strcmp(json_str(ev, "call_id"), id) == 0 &&
			    json_str(ev, "decision") != NULL &&
			    strcmp(json_str(ev, "decision"), "deny") == 0)
				denied = 1;
		}
		if (!denied)
			return 0;
		any = 1;
	}
	return any;
}

/* A copy of the approval.needed event that asked about c, or NULL. */
static cJSON *
agent_pending_event(struct agent *a, struct call *c)
{
	const char	*rid = c->request_id;
	cJSON		*ev;

	for (ev = a->history->child; ev != NULL; ev = ev->next) {
		if (strcmp(json_str(ev, "type"), "approval.needed") == 0 &&
		    rid != NULL && json_str(ev, "request_id") != NULL &&
		    strcmp(json_str(ev, "request_id"), rid) == 0)
			return cJSON_Duplicate(ev, 1);
	}
	return NULL;
}

void
agent_start(struct agent *a)
{
	size_t		 i;
	struct call	*c;
	const char	*msg;
	cJSON		*again;
	int		 waiting = 0;

	if (a->warning != NULL) {
		agent_error_event(a, a->warning);
		free(a->warning);
		a->warning = NULL;
	}

	for (i = 0; i < a->ncalls; i++) {
		c = &a->calls[i];
		if (!c->started || c->finished)
			continue;
		if (a->run_active && agent_rejoin(a, c) == 0)
			continue;
		msg = AGENT_INTERRUPTED;
		{
			struct tool_result r;
			memset(&r, 0, sizeof r);
			r.result = (char *)msg;
			r.interrupted = 1;
			agent_finish_call(a, c, &r, 0);
		}
	}
	/*
	 * The run's last word was the model's final answer (no tool calls)
	 * and the process stopped before run.finished: the run is over, and
	 * the model is not asked again.
	 */
	if (a->run_active && a->ncalls == 0 && agent_answered_last(a)) {
		agent_finish_run(a, agent_step_all_denied(a) ? "denied" :
		    "done", NULL);
		return;
	}
	/*
	 * A question that was waiting when the last process stopped is asked
	 * again, logged again with its request id: whoever answers now (a
	 * headless run's --ask, a client) sees it, not only a state.
	 */
	for (i = 0; i < a->ncalls; i++) {
		c = &a->calls[i];
		if (c->asked && !c->decided && !c->finished &&
		    (again = agent_pending_event(a, c)) != NULL) {
			cJSON_DeleteItemFromObjectCaseSensitive(again, "seq");
			cJSON_DeleteItemFromObjectCaseSensitive(again, "ts");
			cJSON_AddBoolToObject(again, "again", 1);
			agent_emit(a, again, 1);
			waiting = 1;
		}
	}
	if (a->run_active) {
		agent_set_state(a, waiting ? AGENT_WAITING : AGENT_WORKING);
		agent_kick(a);
	} else if (a->cb.state != NULL)
		a->cb.state(a->arg);
}

int
agent_message(struct agent *a, const char *text, const char *by, char **cause)
{
	cJSON	*ev;

	if (text == NULL || *text == '\0') {
		*cause = xstrdup("empty message");
		return -1;
	}
	if (agent_rewinding(a, cause))
		return -1;
	ev = evlog_new("user.message");
	cJSON_AddStringToObject(ev, "text", text);
	if (by != NULL)
		cJSON_AddStringToObject(ev, "by", by);
	if (agent_emit_asked(a, ev, cause) != 0)
		return -1;
	if (a->run_active) {
		a->pending_user++;	/* given to the model at the next step */
		return 0;
	}
	agent_run_begin(a);
	a->last_denied = 0;
	agent_set_state(a, AGENT_WORKING);
	agent_kick(a);
	return 0;
}

static int
agent_save_rule_as(struct agent *a, const char *action, const char *rule,
    char **cause)
{
	struct buf	 b = BUF_INIT;
	char		*old;
	size_t		 len;
	int		 rc;

	if (policy_add_rule(a->policy, action, rule, "session", cause) != 0)
		return -1;
	if ((old = file_read(a->rules_path, &len, 0)) != NULL) {
		buf_add(&b, old, len);
		free(old);
		if (b.len > 0 && b.data[b.len - 1] != '\n')
			buf_addc(&b, '\n');
	} else
		buf_adds(&b, "# rules added by \"always allow\" in this session\n");
	buf_addf(&b, "%s %s\n", action, rule);
	rc = file_write_atomic(a->rules_path, b.data, b.len, 0600);
	buf_release(&b);
	if (rc != 0) {
		*cause = xprintf("%s: %s", a->rules_path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The command the user typed instead of the agent's is judged like any
 * other: a deny holds (returns -2 with the rule in *cause) unless the user
 * overrides it explicitly. *original gets the agent's command, *rule_out
 * the deny rule that was overridden (or NULL).
 */
static int
agent_judge_edit(struct agent *a, struct call *c, const char *command,
    int override, char **original, char **rule_out, char **cause)
{
	struct policy_result	*pr;
	const struct policy_part *p = NULL;
	char			*tmp = NULL;
	size_t			 i;
	int			 rc = 0;

	*rule_out = NULL;
	if (tool_subject(c->name, c->args, &a->tctx, original, &tmp) !=
	    TOOL_COMMAND) {
		free(tmp);
		free(*original);
		*original = NULL;
		*cause = xprintf("approval '%s': only a command can be edited "
		    "(%s)", c->request_id, c->name);
		return -1;
	}
	pr = policy_check_command(a->policy, a->mode, command);
	if (pr->verdict == POLICY_DENY) {
		for (i = 0; i < pr->nparts && p == NULL; i++) {
			if (pr->parts[i].verdict == POLICY_DENY)
				p = &pr->parts[i];
		}
		if (p != NULL && p->rule != NULL && p->source != NULL)
			*rule_out = xprintf("'%s' (%s)", p->rule, p->source);
		else if (p != NULL && p->rule != NULL)
			*rule_out = xprintf("'%s'", p->rule);
		if (!override) {
			*cause = xprintf("command '%s': denied by %s%s; answer "
			    "again with override to run it anyway", command,
			    *rule_out != NULL ? "rule " : "the policy: ",
			    *rule_out != NULL ? *rule_out : pr->reason != NULL ?
			    pr->reason : "deny");
			free(*rule_out);
			*rule_out = NULL;
			free(*original);
			*original = NULL;
			rc = -2;
		} else if (*rule_out == NULL)
			*rule_out = xstrdup(pr->reason != NULL ? pr->reason :
			    "deny");
	}
	policy_result_free(pr);
	return rc;
}

/* The command of the call whose tool runs now, if any (caller frees). */
static char *
agent_running_command(struct agent *a)
{
	char	*subject = NULL, *tmp = NULL;
	size_t	 i;

	for (i = 0; i < a->ncalls; i++) {
		if (!a->calls[i].started || a->calls[i].finished)
			continue;
		if (tool_subject(a->calls[i].name, a->calls[i].args, &a->tctx,
		    &subject, &tmp) != TOOL_COMMAND) {
			free(subject);
			subject = NULL;
		}
		free(tmp);
		return subject;
	}
	return NULL;
}

void
agent_ask_host(struct agent *a, const char *host, int port, agent_host_cb cb,
    void *arg)
{
	struct host_ask	*h, **hp;
	cJSON		*ev;
	char		*cmd;

	if (a->ask == AGENT_ASK_DENY) {
		cb(arg, "deny", "no one to ask (--ask deny)");
		return;
	}
	h = xcalloc(1, sizeof *h);
	h->request_id = xprintf("n%llu", (unsigned long long)
	    eventlog_last_seq(a->log) + 1);
	h->host = xstrdup(host);
	h->port = port;
	h->cb = cb;
	h->arg = arg;
	ev = evlog_new("approval.needed");
	cJSON_AddStringToObject(ev, "request_id", h->request_id);
	cJSON_AddStringToObject(ev, "tool", "net");
	cJSON_AddStringToObject(ev, "host", host);
	cJSON_AddNumberToObject(ev, "port", port);
	if ((cmd = agent_running_command(a)) != NULL) {
		cJSON_AddStringToObject(ev, "by_command", cmd);
		free(cmd);
	}
	cJSON_AddStringToObject(ev, "verdict", "ask");
	cJSON_AddStringToObject(ev, "reason", "no net-allow rule names this "
	    "host");
	cJSON_AddItemToObject(ev, "suggestion", cJSON_CreateObject());
	cJSON_AddStringToObject(cJSON_GetObjectItem(ev, "suggestion"), "rule",
	    host);
	for (hp = &a->host_asks; *hp != NULL; hp = &(*hp)->next)
		;
	*hp = h;
	if (a->state != AGENT_WAITING) {
		a->host_prev = a->state;
		agent_set_state(a, AGENT_WAITING);
	}
	agent_emit(a, ev, 1);
}

/* The host ask request_id names (NULL: the oldest), unlinked. */
static struct host_ask *
agent_take_host_ask(struct agent *a, const char *request_id)
{
	struct host_ask	*h, **hp;

	for (hp = &a->host_asks; (h = *hp) != NULL; hp = &h->next) {
		if (request_id == NULL || strcmp(h->request_id, request_id) == 0) {
			*hp = h->next;
			return h;
		}
	}
	return NULL;
}

static void
agent_host_ask_free(struct host_ask *h)
{
	free(h->request_id);
	free(h->host);
	free(h);
}

static int
agent_approve_host(struct agent *a, struct host_ask *h, const char *decision,
    const char *rule, const char *by, char **cause)
{
	cJSON	*ev;
	size_t	 i;
	int	 waiting = 0;

	if (strcmp(decision, "always") == 0) {
		if (rule == NULL || *rule == '\0')
			rule = h->host;
		if (agent_save_rule_as(a, "net-allow", rule, cause) != 0) {
			/* Not answered: it stays waiting. */
			h->next = a->host_asks;
			a->host_asks = h;
			return -1;
		}
	}
	ev = evlog_new("approval.decided");
	cJSON_AddStringToObject(ev, "request_id", h->request_id);
	cJSON_AddStringToObject(ev, "decision", decision);
	cJSON_AddStringToObject(ev, "by", by != NULL ? by : "user");
	cJSON_AddStringToObject(ev, "host", h->host);
	if (strcmp(decision, "always") == 0)
		cJSON_AddStringToObject(ev, "rule", rule);
	agent_emit(a, ev, 1);
	cJSON_Delete(a->answered);
	a->answered = cJSON_CreateObject();
	cJSON_AddStringToObject(a->answered, "request_id", h->request_id);
	cJSON_AddStringToObject(a->answered, "subject", h->host);
	h->cb(h->arg, strcmp(decision, "deny") == 0 ? "deny" : "allow",
	    strcmp(decision, "deny") == 0 ? "denied by the user" : NULL);
	agent_host_ask_free(h);
	for (i = 0; i < a->ncalls; i++)
		waiting |= a->calls[i].asked && !a->calls[i].decided;
	if (a->host_asks == NULL && !waiting && a->state == AGENT_WAITING)
		agent_set_state(a, a->host_prev);
	return 0;
}

/* "Always" for a write: that path exactly, as a write-allow pattern. */
static char *
agent_path_rule(const char *path)
{
	struct buf	 b = BUF_INIT;
	size_t		 len;

	buf_addc(&b, '^');
	for (; path != NULL && *path != '\0'; path++) {
		if (strchr("\\^$.|?*+()[]{}", *path) != NULL)
			buf_addc(&b, '\\');
		buf_addc(&b, *path);
	}
	buf_addc(&b, '$');
	return buf_detach(&b, &len);
}

int
agent_approve(struct agent *a, const char *request_id, const char *decision,
    const char *rule, const char *message, const char *command,
    int override, const char *by, char **cause)
{
	struct host_ask	*h;
	struct call	*c = NULL;
	size_t		 i;
	cJSON		*ev;
	char		*subject = NULL, *wider = NULL, *suggested = NULL;
	char		*tmp = NULL, *original = NULL, *overridden = NULL;
	int		 rc;
	enum tool_subject kind;

	if (strcmp(decision, "allow") != 0 && strcmp(decision, "deny") != 0 &&
	    strcmp(decision, "always") != 0) {
		*cause = xprintf("decision '%s': allow, deny or always", decision);
		return -1;
	}
	if (agent_log_ready(a, cause) != 0)
		return -1;
	if ((h = agent_take_host_ask(a, request_id)) != NULL)
		return agent_approve_host(a, h, decision, rule, by, cause);
	for (i = 0; i < a->ncalls; i++) {
		/* With no id, the first question still open. */
		if (a->calls[i].asked && a->calls[i].request_id != NULL &&
		    (request_id == NULL ? !a->calls[i].decided :
		    strcmp(a->calls[i].request_id, request_id) == 0)) {
			c = &a->calls[i];
			break;
		}
	}
	if (c == NULL || !a->run_active) {
		*cause = request_id != NULL ? xprintf("approval '%s': no such "
		    "request is waiting", request_id) :
		    xstrdup("no approval is waiting");
		return -1;
	}
	if (c->decided) {
		*cause = xprintf("approval '%s': already decided (%s)",
		    c->request_id, c->decision);
		return -1;
	}
	if (command != NULL && *command == '\0')
		command = NULL;
	if (command != NULL && strcmp(decision, "deny") != 0 &&
	    (rc = agent_judge_edit(a, c, command, override, &original,
	    &overridden, cause)) != 0)
		return rc;
	if (strcmp(decision, "always") == 0 && a->mode == POLICY_MANUAL) {
		*cause = xstrdup("manual mode asks for every command and "
		    "write, so an always rule would have no effect; allow it "
		    "once, or switch to auto mode first");
		return -1;
	}
	kind = tool_subject(c->name, c->args, &a->tctx, &subject, &tmp);
	free(tmp);
	tmp = NULL;
	if (strcmp(decision, "always") == 0 && (kind == TOOL_WRITE ||
	    kind == TOOL_MCP) && (rule == NULL || *rule == '\0'))
		rule = suggested = agent_path_rule(subject);
	free(subject);
	subject = NULL;
	if (strcmp(decision, "always") == 0) {
		if (rule == NULL || *rule == '\0') {
			if (tool_subject(c->name, c->args, &a->tctx, &subject,
			    &tmp) != TOOL_COMMAND || (suggested =
			    policy_suggest_rule(a->policy, subject, &wider))
			    == NULL) {
				free(tmp);
				free(subject);
				*cause = xstrdup("no safe rule can be proposed for "
				    "this; allow it once, or give a rule");
				return -1;
			}
			free(subject);
			free(wider);
			rule = suggested;
		}
		if (agent_save_rule_as(a, kind == TOOL_WRITE ? "write-allow" :
		    kind == TOOL_MCP ? "tool-allow" : "allow", rule,
		    cause) != 0) {
			free(suggested);
			return -1;
		}
	}
	ev = evlog_new("approval.decided");
	cJSON_AddStringToObject(ev, "request_id", c->request_id);
	cJSON_AddStringToObject(ev, "call_id", c->id);
	cJSON_AddStringToObject(ev, "decision", decision);
	cJSON_AddStringToObject(ev, "by", by != NULL ? by : "user");
	if (strcmp(decision, "always") == 0)
		cJSON_AddStringToObject(ev, "rule", rule);
	if (message != NULL && *message != '\0') {
		cJSON_AddStringToObject(ev, "message", message);
		c->message = xstrdup(message);
	}
	if (original != NULL) {
		cJSON_AddStringToObject(ev, "command", command);
		cJSON_AddStringToObject(ev, "original", original);
		if (overridden != NULL) {
			cJSON_AddBoolToObject(ev, "override", 1);
			cJSON_AddStringToObject(ev, "denied_by", overridden);
		}
		c->command = xstrdup(command);
	}
	free(original);
	free(overridden);
	c->decided = 1;
	c->decision = xstrdup(decision);
	cJSON_Delete(a->answered);
	a->answered = cJSON_CreateObject();
	cJSON_AddStringToObject(a->answered, "request_id", c->request_id);
	subject = tmp = NULL;	/* the always branch freed its own */
	if (tool_subject(c->name, c->args, &a->tctx, &subject, &tmp) !=
	    TOOL_UNKNOWN && subject != NULL)
		cJSON_AddStringToObject(a->answered, "subject", subject);
	free(subject);
	free(tmp);
	if (strcmp(decision, "always") == 0)
		cJSON_AddStringToObject(a->answered, "rule", rule);
	agent_emit(a, ev, 1);
	free(suggested);
	agent_set_state(a, AGENT_WORKING);
	agent_kick(a);
	return 0;
}

const char *
agent_streamed(struct agent *a)
{
	return a->req != NULL ? buf_str(&a->delta) : NULL;
}

cJSON *
agent_answered(struct agent *a)
{
	cJSON	*r = a->answered;

	a->answered = NULL;
	return r;
}

void
agent_interrupt(struct agent *a, const char *by)
{
	size_t	 i;

	if (!a->run_active)
		return;
	a->interrupting = 1;
	if (a->req != NULL) {
		model_request_cancel(a->req);
		a->req = NULL;
		a->compacting = 0;
		cJSON_Delete(a->sent);
		a->sent = NULL;
		buf_reset(&a->delta);
		agent_finish_run(a, "interrupted", "user");
		return;
	}
	if (a->tool != NULL && !a->tool_done) {
		tool_exec_cancel(a->tool);	/* its end finishes the run */
		return;
	}
	if (a->lost) {
		a->lost = 0;
		evtimer_del(a->lost_timer);
		for (i = 0; i < a->ncalls; i++) {
			if (a->calls[i].started && !a->calls[i].finished)
				agent_finish_call_text(a, &a->calls[i],
				    "Interrupted while the sandbox could not be "
				    "reached: the command may still be running "
				    "there, its output is not known.", 0);
		}
	}
	for (i = 0; i < a->ncalls; i++) {
		struct call *c = &a->calls[i];
		if (c->asked && !c->decided && !c->finished) {
			agent_decide(a, c, "deny", by != NULL ? by : "user",
			    NULL, "interrupted");
			agent_finish_call_text(a, c, "Not run: the user "
			    "interrupted.", 0);
		}
	}
	agent_kick(a);
}

int
agent_set_mode(struct agent *a, const char *mode, char **cause)
{
	enum policy_mode	 m;

	if (policy_mode_parse(mode, &m) != 0) {
		*cause = xprintf("mode '%s': manual, auto, strict or trust", mode);
		return -1;
	}
	a->mode = m;
	cJSON_DeleteItemFromObjectCaseSensitive(a->meta, "mode");
	cJSON_AddStringToObject(a->meta, "mode", policy_mode_name(m));
	if (session_save(a->name, a->meta, cause) != 0)
		return -1;
	if (a->cb.state != NULL)
		a->cb.state(a->arg);
	return 0;
}

/*
 * /model: the next request goes to spec (one in flight ends on the old
 * model). The new window applies at once: when idle and over it, the
 * conversation is compacted now.
 */
int
agent_set_model(struct agent *a, const char *spec, const char *by,
    char **cause)
{
	struct model	*m;
	const char	*base_url = json_str(a->meta, "base_url");
	char		*prev;
	cJSON		*ev;

	if (spec == NULL || *spec == '\0') {
		*cause = xstrdup("a model is needed, PROVIDER:NAME");
		return -1;
	}
	if (a->compacting) {
		*cause = xprintf("session '%s': a compaction is running; switch "
		    "the model when it is done", a->name);
		return -1;
	}
	if ((m = model_new(spec, base_url != NULL && *base_url != '\0' ?
	    base_url : NULL, cause)) == NULL)
		return -1;
	prev = xstrdup(agent_model_spec(a));
	cJSON_DeleteItemFromObjectCaseSensitive(a->meta, "model");
	cJSON_AddStringToObject(a->meta, "model", spec);
	if (session_save(a->name, a->meta, cause) != 0) {
		cJSON_DeleteItemFromObjectCaseSensitive(a->meta, "model");
		cJSON_AddStringToObject(a->meta, "model", prev);
		free(prev);
		model_free(m);
		return -1;
	}
	model_free(a->model_next);
	a->model_next = m;
	if (a->req == NULL) {
		model_free(a->model);
		a->model = a->model_next;
		a->model_next = NULL;
	}
	context_set_model(a->cx, spec);
	ev = evlog_new("model.changed");
	cJSON_AddStringToObject(ev, "model", spec);
	cJSON_AddStringToObject(ev, "previous", prev);
	cJSON_AddNumberToObject(ev, "context_window",
	    (double)context_window(a->cx));
	cJSON_AddStringToObject(ev, "by", by != NULL ? by : "user");
	agent_emit(a, ev, 1);
	free(prev);
	if (!a->run_active && a->model != NULL) {
		a->compact_state = a->state;
		agent_compact(a, "auto", NULL, 0);
	} else if (a->cb.state != NULL)
		a->cb.state(a->arg);
	return 0;
}

int
agent_wake(struct agent *a, char **cause)
{
	int	 rc;

	rc = agent_envd(a, cause);
	if (a->cb.state != NULL)
		a->cb.state(a->arg);
	return rc;
}

const char *
agent_name(struct agent *a)
{
	return a->name;
}

enum agent_state
agent_get_state(struct agent *a)
{
	return a->state;
}

int
agent_run_active(struct agent *a)
{
	return a->run_active;
}

/*
 * A script: model that has answered keeps its place in the script in
 * memory only (model-script.c): closing its session would lose it.
 */
int
agent_at_rest(struct agent *a)
{
	if (a->model != NULL && *model_url(a->model) == '\0')
		return 0;
	return !a->run_active && a->req == NULL && a->tool == NULL &&
	    !a->compacting && !a->compact_pending && a->host_asks == NULL &&
	    a->log_error == NULL && (a->state == AGENT_IDLE ||
	    a->state == AGENT_FINISHED || a->state == AGENT_ERROR);
}

/*
 * The steps that can be rewound to (DESIGN 15), for the screen's /rewind:
 * step, tool, what it was given (command or path) and how many files the
 * checkpoint before it found changed. O(history).
 */
static cJSON *
agent_steps_json(struct agent *a)
{
	cJSON		*steps, *o, *ev;
	const char	*what;

	steps = cJSON_CreateArray();
	cJSON_ArrayForEach(ev, a->history) {
		if (strcmp(json_str(ev, "type"), "checkpoint.taken") != 0)
			continue;
		what = json_str(ev, "_what");
		o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "step", json_num(ev, "step", 0));
		cJSON_AddStringToObject(o, "name", json_str(ev, "name") ?
		    json_str(ev, "name") : "?");
		cJSON_AddStringToObject(o, "what", what != NULL ? what : "");
		cJSON_AddNumberToObject(o, "changed", json_num(ev, "changed", 0));
		cJSON_AddItemToArray(steps, o);
	}
	return steps;
}

cJSON *
agent_state_json(struct agent *a)
{
	cJSON		*st, *pending, *ev, *o;
	size_t		 i;
	char		*ws;

	st = cJSON_CreateObject();
	cJSON_AddStringToObject(st, "name", a->name);
	cJSON_AddStringToObject(st, "state", agent_state_name(a->state));
	cJSON_AddItemToObject(st, "steps", agent_steps_json(a));
	if (a->log_error != NULL)
		cJSON_AddStringToObject(st, "error", a->log_error);
	cJSON_AddStringToObject(st, "sandbox", sandbox_id(a->sbx));
	cJSON_AddStringToObject(st, "sandbox_state",
	    sandbox_state_name(sandbox_state_known(a->sbx)));
	cJSON_AddStringToObject(st, "model", agent_model_spec(a));
	cJSON_AddStringToObject(st, "mode", policy_mode_name(a->mode));
	cJSON_AddNumberToObject(st, "step", a->steps);
	cJSON_AddNumberToObject(st, "steps_cap", a->steps_cap);
	cJSON_AddNumberToObject(st, "input_tokens", (double)a->in_tok);
	cJSON_AddNumberToObject(st, "output_tokens", (double)a->out_tok);
	cJSON_AddNumberToObject(st, "cached_input_tokens", (double)a->cached_tok);
	cJSON_AddNumberToObject(st, "cost_usd", a->cost);
	o = cJSON_AddObjectToObject(st, "run");
	cJSON_AddNumberToObject(o, "input_tokens", (double)a->run_in);
	cJSON_AddNumberToObject(o, "output_tokens", (double)a->run_out);
	cJSON_AddNumberToObject(o, "cached_input_tokens", (double)a->run_cached);
	cJSON_AddNumberToObject(o, "cost_usd", a->run_cost);
	o = cJSON_AddObjectToObject(st, "context");
	cJSON_AddNumberToObject(o, "tokens", (double)a->cx_tokens);
	cJSON_AddNumberToObject(o, "window", (double)context_window(a->cx));
	cJSON_AddNumberToObject(o, "percent", context_window(a->cx) > 0 ?
	    (double)(a->cx_tokens * 100 / context_window(a->cx)) : 0);
	cJSON_AddNumberToObject(o, "compact_at", context_compact_at(a->cx));
	cJSON_AddBoolToObject(o, "compacting", a->compacting);
	pending = cJSON_AddArrayToObject(st, "pending");
	for (i = 0; i < a->ncalls; i++) {
		if (!a->calls[i].asked || a->calls[i].decided)
			continue;
		if ((ev = agent_pending_event(a, &a->calls[i])) != NULL)
			cJSON_AddItemToArray(pending, ev);
	}
	ws = sandbox_workspace(a->sbx);
	cJSON_AddStringToObject(st, "workspace", ws);
	free(ws);
	if (json_str(a->meta, "base_commit") != NULL)
		cJSON_AddStringToObject(st, "base_commit",
		    json_str(a->meta, "base_commit"));
	else
		cJSON_AddNullToObject(st, "base_commit");
	cJSON_AddStringToObject(st, "test_command", a->test_command != NULL ?
	    a->test_command : "");
	if (json_str(a->meta, "repo") != NULL)
		cJSON_AddStringToObject(st, "repo", json_str(a->meta, "repo"));
	return st;
}
