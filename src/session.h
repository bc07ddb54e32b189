/*
 * session.h: a session's files (DESIGN 3 and 7).
 *
 *	data/sessions/<name>/session.json	what the session is (atomic writes)
 *	data/sessions/<name>/events.jsonl	the durable event log
 *	data/sessions/<name>/policy		rules added by "always allow"
 *
 * The event log is the truth: the conversation, the step count and what is
 * pending are all rebuilt from it. Appends take an flock so that a one-shot
 * command (holt pr) can record an event while the server owns the session.
 */
#ifndef SESSION_H
#define SESSION_H

#include "holt.h"

/* session.json, as a cJSON object with these fields:
 * name, sandbox, model, base_url, mode, repo, base_commit, branch, created,
 * test_command, steps_cap, net. */
int	 session_name_valid(const char *name, char **cause);
char	*session_dir(const char *name);		/* caller frees */
int	 session_exists(const char *name);
cJSON	*session_load(const char *name, char **cause);	/* NULL: unknown or corrupt */
int	 session_save(const char *name, const cJSON *meta, char **cause);
char	**session_list(size_t *n);		/* names, sorted; free each + array */
int	 session_locked(const char *name);	/* another process runs it */
int	 session_headless(const char *name);	/* made by holt run */
void	 session_sweep(void);	/* what holt new processes that died left */

/*
 * The event log. An eventlog is an open events.jsonl with the last seq
 * known. eventlog_append adds "seq" and "ts" to the event (which it does not
 * take), writes it as one line and, when sync is set, fdatasyncs: the
 * durable points of DESIGN 7.
 */
struct eventlog;
struct eventlog *eventlog_open(const char *name, char **cause);
void	 eventlog_close(struct eventlog *);
/*
 * 0 if the line could not be written or synced (errno says why, the disk
 * is full): nothing of it stays in the file, and the seq is not used.
 */
uint64_t eventlog_append(struct eventlog *, cJSON *ev, int sync);
const char *eventlog_path(struct eventlog *);
int	 eventlog_has_room(struct eventlog *);	/* a full disk has room again */
uint64_t eventlog_last_seq(struct eventlog *);
/*
 * Read the whole log as an array of events. A torn last line (a crash in
 * the middle of a write) is dropped with a warning in *warning; a corrupt
 * line elsewhere is an error naming the file and line.
 */
cJSON	*eventlog_read(const char *name, char **warning, char **cause);
/* The same for the last N events only (0: all), parsing no more than those. */
cJSON	*eventlog_read_last(const char *name, size_t last, char **warning,
	     char **cause);
/*
 * The same, and at most max_bytes of log lines (0: no bound), the newest;
 * *truncated is set when older events were left out for either bound.
 */
cJSON	*eventlog_read_tail(const char *name, size_t last, size_t max_bytes,
	     int *truncated, char **warning, char **cause);
/*
 * Read the log one line at a time, in O(longest line) memory, checked as
 * eventlog_read does: each event whose type want accepts (want NULL: all)
 * is handed to fn, which takes it. 0, or -1 with *cause; *warning as
 * above.
 */
int	 eventlog_scan(const char *name, int (*want)(const char *type),
	     void (*fn)(void *, cJSON *), void *arg, char **warning,
	     char **cause);
/*
 * session-rest.c: 1 and *info (what holt ls shows: name, state, sandbox,
 * model, mode, step, steps_cap, tokens, cost_usd, at_rest) when no run of
 * the session is going on, 0 when one is (the session must be opened to
 * carry on), -1 with *cause when it cannot be read.
 */
int	 session_at_rest(const char *name, cJSON **info, char **cause);
/*
 * The same, the reader choosing line by line: want sees each line's seq,
 * type and place in the file before it is parsed (1: parse it and hand
 * it to fn, 0: only check it); a line holt did not write is parsed first.
 */
struct eventlog_line {
	const char	*path;
	unsigned int	 lineno;
	uint64_t	 seq;
	const char	*type;
	off_t		 off;	/* where it starts in the file */
	size_t		 len;	/* without its newline */
	const char	*data;	/* the line, len bytes */
};
/*
 * The number a key of the line's event holds, without parsing it (0 when
 * it has none): for a flat event holt wrote (model.usage), whose strings
 * cannot hold the key's quotes unescaped.
 */
double	 eventlog_line_num(const struct eventlog_line *, const char *key);
int	 eventlog_walk(const char *name,
	     int (*want)(void *, const struct eventlog_line *),
	     void (*fn)(void *, cJSON *, const struct eventlog_line *),
	     void *arg, char **warning, char **cause);
/* The event of the line at off, len bytes long (from eventlog_walk). */
cJSON	*eventlog_read_at(struct eventlog *, off_t off, size_t len,
	     char **cause);
/* One-shot append for other processes (holt pr): open, append, sync, close. */
int	 session_event_append(const char *name, const char *type, cJSON *fields,
	     char **cause);
cJSON	*evlog_new(const char *type);	/* {"type": type} */

/*
 * session-rewind.c: rewinds and forks in the conversation (DESIGN 15).
 * A step is a checkpointed tool call (checkpoint.taken's "step").
 */
const cJSON *session_find_step(const cJSON *events, int step);
int	 session_step_index(const cJSON *events, int step);	/* its tool.call */
/* Apply a session.rewound or session.forked to a history being rebuilt. */
void	 session_history_apply(cJSON *history, const cJSON *ev);

/* secret.c: values that must never be logged, shown or sent to a model. */
void	 secret_init(void);
void	 secret_add(const char *value);
char	*secret_redact(const char *);	/* caller frees */
void	 secret_redact_json(cJSON *);	/* every string inside, in place */

#endif
