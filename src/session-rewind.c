/*
 * session-rewind.c: what a rewind or a fork does to a conversation
 * (DESIGN 15). The event log is never rewritten: a session.rewound event
 * says "from here on, the conversation is what it was before step N", and
 * whoever rebuilds the conversation from the log (agent.c, at open and
 * live) applies it here. Steps are the tool calls that can change files,
 * numbered 1, 2, ... in the order of their checkpoint.taken events, never
 * reused (a step rewound away keeps its number).
 */
#include <string.h>

#include "session.h"

/* The checkpoint.taken event of step in events (an array), or NULL. */
const cJSON *
session_find_step(const cJSON *events, int step)
{
	const cJSON	*ev;
	const char	*type;

	cJSON_ArrayForEach(ev, events) {
		type = json_str(ev, "type");
		if (type != NULL && strcmp(type, "checkpoint.taken") == 0 &&
		    (int)json_num(ev, "step", 0) == step)
			return ev;
	}
	return NULL;
}

/*
 * The position of the tool.call that step checkpointed, or -1. Call ids
 * are the model's and may repeat across messages: the call is the nearest
 * tool.call with that id before the checkpoint.
 */
int
session_step_index(const cJSON *events, int step)
{
	const cJSON	*ck = session_find_step(events, step), *ev;
	const char	*id, *type;
	int		 i = 0, found = -1;

	if (ck == NULL || (id = json_str(ck, "call_id")) == NULL)
		return -1;
	cJSON_ArrayForEach(ev, events) {
		if (ev == ck)
			return found;
		type = json_str(ev, "type");
		if (type != NULL && strcmp(type, "tool.call") == 0 &&
		    json_str(ev, "call_id") != NULL &&
		    strcmp(json_str(ev, "call_id"), id) == 0)
			found = i;
		i++;
	}
	return -1;
}

/*
 * Close what the cut left open: the last assistant message's calls that
 * have no result get one saying they were not run, and an open run ends,
 * so the model is asked again only when the user says something.
 */
static void
session_history_close(cJSON *history, const char *why, double seq)
{
	cJSON		*ev, *last = NULL, *tc, *f;
	const char	*type, *id;
	int		 answered, open_run = 0;

	cJSON_ArrayForEach(ev, history) {
		type = json_str(ev, "type");
		if (strcmp(type, "assistant.message") == 0)
			last = ev;
		else if (strcmp(type, "user.message") == 0)
			open_run = 1;
		else if (strcmp(type, "run.finished") == 0)
			open_run = 0;
	}
	if (last != NULL) {
		cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(last,
		    "tool_calls")) {
			if ((id = json_str(tc, "id")) == NULL)
				continue;
			answered = 0;
			for (ev = last->next; ev != NULL; ev = ev->next) {
				if (strcmp(json_str(ev, "type"), "tool.finished")
				    == 0 && json_str(ev, "call_id") != NULL &&
				    strcmp(json_str(ev, "call_id"), id) == 0)
					answered = 1;
			}
			if (answered)
				continue;
			f = evlog_new("tool.finished");
			cJSON_AddNumberToObject(f, "seq", seq);
			cJSON_AddStringToObject(f, "call_id", id);
			cJSON_AddStringToObject(f, "name", json_str(tc, "name") ?
			    json_str(tc, "name") : "");
			cJSON_AddBoolToObject(f, "interrupted", 1);
			cJSON_AddStringToObject(f, "result", why);
			cJSON_AddItemToArray(history, f);
		}
	}
	if (open_run) {
		f = evlog_new("run.finished");
		cJSON_AddNumberToObject(f, "seq", seq);
		cJSON_AddStringToObject(f, "reason", "interrupted");
		cJSON_AddStringToObject(f, "source", "rewind");
		cJSON_AddItemToArray(history, f);
	}
}

void
session_history_apply(cJSON *history, const cJSON *ev)
{
	const char	*type = json_str(ev, "type");
	double		 seq = json_num(ev, "seq", 0);
	int		 at, n;

	if (strcmp(type, "session.forked") == 0) {
		session_history_close(history, "Not run: the session was forked "
		    "from another one before this call.", seq);
		return;
	}
	if (strcmp(type, "session.rewound") != 0 ||
	    !json_bool(ev, "conversation", 1))
		return;
	at = session_step_index(history, (int)json_num(ev, "to_step", 0));
	if (at < 0)
		return;
	for (n = cJSON_GetArraySize(history); n > at; n--)
		cJSON_DeleteItemFromArray(history, n - 1);
	session_history_close(history, "Not run: the user rewound the session "
	    "to before this call; the files are as they were before it.", seq);
}
