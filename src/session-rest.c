/*
 * session-rest.c: a session at rest (DESIGN 7). A session whose log ends
 * with no run going on (every user message answered by a run.finished, or
 * a rewind or fork that closed it) needs nothing in memory to wait: the
 * server keeps only what holt ls shows of it, read here from session.json
 * and the log, one line at a time, and opens its agent when someone
 * attaches or asks it something.
 */
#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>

#include "session.h"

struct rest {
	int		 open_run;	/* a user message not yet answered */
	const char	*state;		/* of the last run */
	int		 steps;
	double		 in, out, cached, cost;
};

/* model.usage is read where it lies; the others are parsed. */
static int
rest_wants(void *arg, const struct eventlog_line *l)
{
	struct rest	*r = arg;
	const char	*type = l->type;

	if (strcmp(type, "model.usage") == 0) {
		r->in += eventlog_line_num(l, "input_tokens");
		r->out += eventlog_line_num(l, "output_tokens");
		r->cached += eventlog_line_num(l, "cached_input_tokens");
		r->cost += eventlog_line_num(l, "cost_usd");
		return 0;
	}
	return strcmp(type, "user.message") == 0 ||
	    strcmp(type, "run.finished") == 0 ||
	    strcmp(type, "context.compacted") == 0 ||
	    strcmp(type, "conversation.cleared") == 0 ||
	    strcmp(type, "session.rewound") == 0 ||
	    strcmp(type, "session.forked") == 0;
}

static void
rest_event(void *arg, cJSON *ev, const struct eventlog_line *l)
{
	struct rest	*r = arg;
	const char	*type = json_str(ev, "type"), *reason;

	(void)l;
	if (strcmp(type, "user.message") == 0) {
		r->open_run = 1;
		r->state = "idle";
	} else if (strcmp(type, "run.finished") == 0) {
		r->open_run = 0;
		reason = json_str(ev, "reason");
		r->state = reason == NULL ? "idle" : strcmp(reason, "done") ==
		    0 ? "finished" : strcmp(reason, "error") == 0 ? "error" :
		    "idle";
		r->steps = (int)json_num(ev, "steps", 0);
	} else if (strcmp(type, "context.compacted") == 0 ||
	    strcmp(type, "conversation.cleared") == 0)
		r->state = "idle";
	else if (strcmp(type, "session.forked") == 0 ||
	    json_bool(ev, "conversation", 1)) {
		r->open_run = 0;	/* the cut closed it */
		r->state = "idle";
		r->steps = 0;
	}
	cJSON_Delete(ev);
}

int
session_at_rest(const char *name, cJSON **info, char **cause)
{
	struct rest	 r = { 0, "idle", 0, 0, 0, 0, 0 };
	cJSON		*meta, *o;
	char		*warning = NULL, *dir, *path;
	const char	*model, *mode;
	struct stat	 sb;

	*info = NULL;
	if ((meta = session_load(name, cause)) == NULL)
		return -1;
	/* A log missing or empty: opening the session says what is wrong. */
	dir = session_dir(name);
	path = paths_join(dir, "events.jsonl");
	free(dir);
	if (stat(path, &sb) != 0 || sb.st_size == 0) {
		free(path);
		cJSON_Delete(meta);
		return 0;
	}
	free(path);
	if (eventlog_walk(name, rest_wants, rest_event, &r, &warning,
	    cause) != 0) {
		cJSON_Delete(meta);
		return -1;
	}
	if (warning != NULL || r.open_run || json_str(meta, "sandbox") ==
	    NULL) {
		free(warning);		/* opening the session tells it */
		cJSON_Delete(meta);
		return 0;
	}
	model = json_str(meta, "model");
	mode = json_str(meta, "mode");
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", name);
	cJSON_AddStringToObject(o, "state", r.state);
	cJSON_AddStringToObject(o, "sandbox", json_str(meta, "sandbox"));
	cJSON_AddStringToObject(o, "model", model != NULL && *model != '\0' ?
	    model : config_get("model"));
	cJSON_AddStringToObject(o, "mode", mode != NULL ? mode :
	    config_get("mode"));
	cJSON_AddNumberToObject(o, "step", r.steps);
	cJSON_AddNumberToObject(o, "steps_cap", json_num(meta, "steps_cap",
	    (double)config_get_num("steps")));
	cJSON_AddNumberToObject(o, "input_tokens", r.in);
	cJSON_AddNumberToObject(o, "output_tokens", r.out);
	cJSON_AddNumberToObject(o, "cached_input_tokens", r.cached);
	cJSON_AddNumberToObject(o, "cost_usd", r.cost);
	cJSON_AddBoolToObject(o, "at_rest", 1);
	cJSON_Delete(meta);
	*info = o;
	return 1;
}
