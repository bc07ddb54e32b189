/*
 * agent-history.c: the conversation of a session read from its log at
 * open, parsing only the lines it keeps (see agent-history.h).
 */
#include <stdlib.h>
#include <string.h>

#include "agent-history.h"

struct note {
	uint64_t	 seq;
	off_t		 off;
	size_t		 len;
	cJSON		*ev;		/* parsed already, or NULL */
	int		 kept;
	int		 call;		/* a tool.call */
};

struct history_read {
	const struct history_cb	*cb;
	void			*arg;
	struct eventlog		*log;
	struct note		*notes;
	size_t			 n, size;
	uint64_t		 through;	/* notes dropped up to here */
	char			*error;
};

void
history_step_note(cJSON *ck, const cJSON *call)
{
	const cJSON	*args = cJSON_GetObjectItemCaseSensitive(call,
			    "arguments");
	const char	*what;

	if (cJSON_GetObjectItemCaseSensitive(ck, "_call_seq") != NULL)
		return;
	what = json_str(args, "command") != NULL ? json_str(args, "command") :
	    json_str(args, "path");
	cJSON_AddNumberToObject(ck, "_call_seq", json_num(call, "seq", 0));
	cJSON_AddStringToObject(ck, "_what", what != NULL ? what : "");
}

static void
history_note(struct history_read *hr, const struct eventlog_line *l,
    cJSON *ev, int kept)
{
	struct note	*n;

	if (hr->n == hr->size) {
		hr->size = hr->size == 0 ? 256 : hr->size * 2;
		hr->notes = xreallocarray(hr->notes, hr->size, sizeof *n);
	}
	n = &hr->notes[hr->n++];
	n->seq = l->seq;
	n->off = l->off;
	n->len = l->len;
	n->ev = ev;
	n->kept = kept;
	n->call = strcmp(l->type, "tool.call") == 0;
}

/* A compaction's summary covers up to through: its notes go. */
static void
history_drop(struct history_read *hr, uint64_t through)
{
	size_t	 i, j = 0;

	if (through <= hr->through)
		return;
	for (i = 0; i < hr->n; i++) {
		if (hr->notes[i].seq > through || hr->notes[i].kept)
			hr->notes[j++] = hr->notes[i];
	}
	hr->n = j;
	hr->through = through;
}

/* Parse what is noted and hand it on, in order. */
static void
history_flush(struct history_read *hr)
{
	struct note	*n;
	cJSON		*ev;
	char		*cause = NULL;
	size_t		 i;

	for (i = 0; i < hr->n; i++) {
		n = &hr->notes[i];
		ev = n->ev;
		if (ev == NULL && (ev = eventlog_read_at(hr->log, n->off, n->len,
		    &cause)) == NULL) {
			if (hr->error == NULL)
				hr->error = cause;
			else
				free(cause);
			cause = NULL;
			continue;
		}
		hr->cb->add(hr->arg, ev);
	}
	hr->n = 0;
}

/* The tool.call of a checkpoint: the nearest noted one with its id. */
static void
history_find_call(struct history_read *hr, cJSON *ck)
{
	const char	*id = json_str(ck, "call_id");
	char		*cause = NULL;
	cJSON		*call;
	size_t		 i;
	int		 found;

	for (i = hr->n; id != NULL && i-- > 0; ) {
		if (!hr->notes[i].call)
			continue;
		if ((call = eventlog_read_at(hr->log, hr->notes[i].off,
		    hr->notes[i].len, &cause)) == NULL) {
			free(cause);
			cause = NULL;
			continue;
		}
		found = json_str(call, "call_id") != NULL &&
		    strcmp(json_str(call, "call_id"), id) == 0;
		if (found)
			history_step_note(ck, call);
		cJSON_Delete(call);
		if (found)
			return;
	}
}

static int
history_wants(void *arg, const struct eventlog_line *l)
{
	struct history_read	*hr = arg;
	const char		*t = l->type;

	if (hr->cb->history(t)) {
		/* Parsed now: what decides what is dropped, and steps. */
		if (strcmp(t, "context.compacted") == 0 ||
		    strcmp(t, "conversation.cleared") == 0 ||
		    strcmp(t, "checkpoint.taken") == 0 ||
		    strcmp(t, "session.rewound") == 0 ||
		    strcmp(t, "session.forked") == 0)
			return 1;
		history_note(hr, l, NULL, hr->cb->kept(t));
		return 0;
	}
	return hr->cb->other(hr->arg, l);
}

static void
history_event(void *arg, cJSON *ev, const struct eventlog_line *l)
{
	struct history_read	*hr = arg;
	const char		*t = l->type;
	uint64_t		 through;

	hr->cb->note(hr->arg, ev);
	if (!hr->cb->history(t)) {
		cJSON_Delete(ev);
		return;
	}
	if (strcmp(t, "session.rewound") == 0 ||
	    strcmp(t, "session.forked") == 0) {
		/* A cut needs the history as it stands. */
		history_flush(hr);
		hr->cb->add(hr->arg, ev);
		hr->through = hr->cb->through(hr->arg);
		return;
	}
	if (strcmp(t, "checkpoint.taken") == 0)
		history_find_call(hr, ev);
	history_note(hr, l, ev, hr->cb->kept(t));
	through = (uint64_t)json_num(ev, "through_seq", 0);
	if (strcmp(t, "context.compacted") == 0 &&
	    json_str(ev, "summary") != NULL)
		history_drop(hr, through);
	else if (strcmp(t, "conversation.cleared") == 0)
		history_drop(hr, l->seq);	/* nothing before it is sent */
}

int
history_read(const char *name, struct eventlog *log,
    const struct history_cb *cb, void *arg, char **warning, char **cause)
{
	struct history_read	 hr;
	size_t			 i;
	int			 rc;

	memset(&hr, 0, sizeof hr);
	hr.cb = cb;
	hr.arg = arg;
	hr.log = log;
	rc = eventlog_walk(name, history_wants, history_event, &hr, warning,
	    cause);
	if (rc == 0)
		history_flush(&hr);
	if (rc == 0 && hr.error != NULL) {
		*cause = hr.error;
		hr.error = NULL;
		rc = -1;
	}
	for (i = 0; i < hr.n; i++)
		cJSON_Delete(hr.notes[i].ev);
	free(hr.notes);
	free(hr.error);
	return rc;
}
