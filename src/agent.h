/*
 * agent.h: the agent loop of one session (DESIGN 6 and 7).
 *
 * An agent is opened on a session: it reads session.json and the event
 * log, rebuilds the conversation and what was in flight, connects to the
 * session's sandbox and, with agent_start, carries on where the log ends.
 * Everything it does is an event: appended to events.jsonl (fsync'd at the
 * durable points) and passed to the event callback, which the server fans
 * out to clients and holt run prints as JSONL.
 *
 * Call order: session_create (once) -> agent_open -> agent_start ->
 * agent_message / agent_approve / agent_interrupt ... -> agent_free.
 */
#ifndef AGENT_H
#define AGENT_H

#include <event2/event.h>

#include "holt.h"

struct agent;

enum agent_state {
	AGENT_IDLE,		/* no run; waiting for a message */
	AGENT_WORKING,		/* model request or tool in flight */
	AGENT_WAITING,		/* an approval is pending */
	AGENT_FINISHED,		/* the last run ended done */
	AGENT_ERROR		/* the last run ended in an error */
};

/* How an "ask" verdict is answered when nobody may be there. */
enum agent_ask {
	AGENT_ASK_WAIT,		/* wait for agent_approve (clients, stdin) */
	AGENT_ASK_DENY		/* deny at once (holt run --ask deny) */
};

struct agent_cb {
	void	(*event)(void *arg, const cJSON *ev);	/* borrowed */
	void	(*state)(void *arg);
	void	(*finished)(void *arg, const char *reason, const char *source);
};

struct session_new {
	const char	*name;		/* NULL: derived from the repo */
	const char	*repo;		/* path or URL, or NULL */
	const char	*branch;
	int		 depth;
	const char	*model;
	const char	*base_url;
	const char	*mode;
	const char	*net;
	const char	*provider;	/* NULL: holt.conf's */
	const char	*test_command;
	int		 steps;
	const char	*task;		/* first user message, or NULL */
	void		(*progress)(void *, const char *);
	void		*progress_arg;
	int		 headless;	/* holt run's: the server leaves it */
};

/*
 * The options holt new and holt run share: -s, --repo (r), --branch (B),
 * --depth (D), --model (m), --base-url (u), --mode (M), --test-command (T),
 * --net (N), --provider (P), --steps (n). 1 taken, 0 not one of them, -1 bad value.
 */
int	 session_new_option(struct session_new *, int ch, const char *arg,
	     char **cause);
/* Create a session: sandbox, repository, session.json, session.created.
 * Returns the session's name (caller frees). */
char	*session_create(const struct session_new *, char **cause);
/*
 * session-fork.c: a new session with from's history before step (0: all
 * of it) in a sandbox forked from that step's checkpoint (0: from now).
 * newname NULL: FROM-1, FROM-2, ... Returns the new name (caller frees).
 */
char	*session_fork(const char *from, int step, const char *newname,
	     char **cause);
/* Remove a session's files and its sandbox. */
int	 session_remove(const char *name, char **cause);

struct agent *agent_open(const char *name, struct event_base *,
	     const struct agent_cb *, void *arg, char **cause);
void	 agent_free(struct agent *);
void	 agent_set_ask(struct agent *, enum agent_ask);
void	 agent_set_steps(struct agent *, int);
void	 agent_start(struct agent *);
int	 agent_message(struct agent *, const char *text, const char *by,
	     char **cause);
/*
 * COMMAND (may be NULL): the user's edit of the agent's command, judged by
 * the policy; a denied edit returns -2 (*cause names the rule) unless
 * OVERRIDE. Other failures return -1.
 */
int	 agent_approve(struct agent *, const char *request_id,
	     const char *decision, const char *rule, const char *message,
	     const char *command, int override, const char *by, char **cause);
/* What the last agent_approve answered: {request_id, subject, rule?};
 * the caller frees it. NULL if nothing was answered since. */
cJSON	*agent_answered(struct agent *);
/* The session's own rules ("allow ^x$" lines, from always), and
 * deleting the Nth (from 1); the policy follows at once. */
cJSON	*agent_rules(struct agent *);
int	 agent_delete_rule(struct agent *, int n, char **cause);
/* The text of the model's reply streamed so far (borrowed), or NULL. */
const char *agent_streamed(struct agent *);
void	 agent_interrupt(struct agent *, const char *by);
int	 agent_set_mode(struct agent *, const char *mode, char **cause);
/* /model: switch the model from the next request (model.changed). */
int	 agent_set_model(struct agent *, const char *spec, const char *by,
	     char **cause);
/*
 * /compact, holt compact: summarize the conversation now (idle) or before
 * the next request (mid-run); focus (may be NULL) steers the summary.
 */
int	 agent_compact_now(struct agent *, const char *focus, char **cause);
/*
 * /clear: a new conversation in the same sandbox (conversation.cleared);
 * nothing before it is sent to the model again. Refused mid-run.
 */
int	 agent_clear(struct agent *, const char *by, char **cause);
/*
 * Put the files (files) and the conversation (conversation) back to what
 * they were before step (DESIGN 15); the session must not be working.
 * id (or NULL) names the request: one already done is not done again.
 * 0: done; 1: the files are put back off the loop, and done(arg, NULL)
 * or done(arg, error) is called from it once they are; -1: *cause.
 */
int	 agent_rewind(struct agent *, int step, int files, int conversation,
	     const char *id, const char *by, void (*done)(void *,
	     const char *), void *arg, char **cause);
/* Start or resume the sandbox (after a reboot it is stopped) and connect. */
int	 agent_wake(struct agent *, char **cause);
const char *agent_name(struct agent *);
enum agent_state agent_get_state(struct agent *);
const char *agent_state_name(enum agent_state);
cJSON	*agent_state_json(struct agent *);	/* STATE of the protocol */
int	 agent_run_active(struct agent *);
/* Nothing going on, asked or unwritten: it may be closed until needed. */
int	 agent_at_rest(struct agent *);
/*
 * The sandbox's proxy asks about a host no rule settles: an approval.needed
 * with host and port (and by_command, the command running now), answered
 * by agent_approve ("always" adds a session net-allow rule). cb gets
 * "allow" or "deny" and a reason (or NULL), once, maybe at once.
 */
typedef void (*agent_host_cb)(void *arg, const char *decision,
	    const char *reason);
void	 agent_ask_host(struct agent *, const char *host, int port,
	     agent_host_cb, void *arg);

/* agent-tools.c: the tools the model sees (DESIGN 6). */
cJSON	*tools_schema(void);
const char *tools_output_cap_marker(void);
char	*tools_cap_output(const char *, size_t len, size_t cap);

#endif
