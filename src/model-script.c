/*
 * model-script.c: the mock script (DESIGN 11), read by the script:
 * provider and by tests/mock-llm alike:
 *
 *	{ "turns": [ { "expect": {...}, "text": "...", "tool_calls": [...],
 *	               "usage": {"input_tokens": N, "output_tokens": N},
 *	               "delay_ms": N, "chunk_delay_ms": N },
 *	             { "fail": { "status": 429, "retry_after_s": 1 } },
 *	             { "broken": "truncate" } ],
 *	  "chunk_bytes": 7, "chunk_delay_ms": 0 }
 *
 * Each request takes the next turn. "expect" may hold
 * last_tool_result_contains, last_user_message_contains (strings) and
 * tools_include (a name or a list of names); a request that does not meet
 * it is refused. A turn that has neither "fail" nor "broken" answers.
 * chunk_bytes and chunk_delay_ms (per turn or for the whole script) stream
 * the text in pieces of that many bytes, that many ms apart.
 *
 * A summary request of a compaction (DESIGN 14: its last message is the
 * fixed summary prompt) takes no turn: it is answered by the script's
 * top-level "summary" turn, else by a short fixed summary.
 *
 * Turn selection survives a restart of the process: the first request of
 * a script model starts after the k-th answering turn, k being the number
 * of assistant messages already in its history; later requests take the
 * turns in order.
 */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "model-int.h"

struct model_script {
	char		*path;
	cJSON		*root;
	const cJSON	*turns;
	int		 nturns;
	int		 cursor;
	int		 started;
	cJSON		*summary;	/* the default summary turn */
};

struct model_script *
model_script_load(const char *path, char **cause)
{
	struct model_script	*sc;
	cJSON			*root;
	const cJSON		*turns, *t, *v;
	char			*why = NULL;
	int			 i = 0;

	if ((root = json_load_file(path, &why)) == NULL) {
		*cause = xprintf("script '%s': %s", path, why);
		free(why);
		return NULL;
	}
	turns = cJSON_GetObjectItemCaseSensitive(root, "turns");
	if (!cJSON_IsArray(turns)) {
		*cause = xprintf("script '%s': no \"turns\" array", path);
		cJSON_Delete(root);
		return NULL;
	}
	cJSON_ArrayForEach(t, turns) {
		i++;
		if (!cJSON_IsObject(t)) {
			*cause = xprintf("script '%s': turn %d is not an "
			    "object", path, i);
			goto bad;
		}
		v = cJSON_GetObjectItemCaseSensitive(t, "tool_calls");
		if (v != NULL && !cJSON_IsArray(v)) {
			*cause = xprintf("script '%s': turn %d: tool_calls is "
			    "not an array", path, i);
			goto bad;
		}
		v = cJSON_GetObjectItemCaseSensitive(t, "fail");
		if (v != NULL && (!cJSON_IsObject(v) ||
		    json_num(v, "status", 0) < 100)) {
			*cause = xprintf("script '%s': turn %d: fail needs a "
			    "status", path, i);
			goto bad;
		}
	}
	sc = xcalloc(1, sizeof *sc);
	sc->path = xstrdup(path);
	sc->root = root;
	sc->turns = turns;
	sc->nturns = cJSON_GetArraySize(turns);
	sc->summary = cJSON_CreateObject();
	cJSON_AddStringToObject(sc->summary, "text", "Summary: the work so far "
	    "(from the script).");
	return sc;
bad:
	cJSON_Delete(root);
	return NULL;
}

void
model_script_free(struct model_script *sc)
{
	if (sc == NULL)
		return;
	cJSON_Delete(sc->root);
	cJSON_Delete(sc->summary);
	free(sc->path);
	free(sc);
}

const char *
model_script_path(struct model_script *sc)
{
	return sc->path;
}

int
model_script_num(struct model_script *sc, const cJSON *turn, const char *key,
    int dflt)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(turn, key);

	if (cJSON_IsNumber(v))
		return v->valueint;
	return (int)json_num(sc->root, key, dflt);
}

static int
model_script_answers(const cJSON *turn)
{
	return cJSON_GetObjectItemCaseSensitive(turn, "fail") == NULL &&
	    cJSON_GetObjectItemCaseSensitive(turn, "broken") == NULL;
}

const cJSON *
model_script_next(struct model_script *sc, const cJSON *messages,
    int *turn_no, char **cause)
{
	const cJSON	*m, *t;
	const char	*role;
	int		 k = 0, i = 0, seen = 0;

	m = cJSON_GetArrayItem(messages, cJSON_GetArraySize(messages) - 1);
	role = json_str(m, "role");
	if (role != NULL && strcmp(role, "user") == 0 &&
	    context_is_summary_prompt(json_str(m, "content"))) {
		t = cJSON_GetObjectItemCaseSensitive(sc->root, "summary");
		*turn_no = 0;
		return cJSON_IsObject(t) ? t : sc->summary;
	}
	if (!sc->started) {
		sc->started = 1;
		cJSON_ArrayForEach(m, messages) {
			role = json_str(m, "role");
			if (role != NULL && strcmp(role, "assistant") == 0)
				k++;
		}
		if (k > 0) {
			sc->cursor = sc->nturns;
			cJSON_ArrayForEach(t, sc->turns) {
				i++;
				if (model_script_answers(t) && ++seen == k) {
					sc->cursor = i;
					break;
				}
			}
		}
	}
	if (sc->cursor >= sc->nturns) {
		*cause = xprintf("script '%s': no turn left for this request "
		    "(the script has %d turns)", sc->path, sc->nturns);
		return NULL;
	}
	*turn_no = sc->cursor + 1;
	return cJSON_GetArrayItem(sc->turns, sc->cursor++);
}

static const char *
model_script_last(const cJSON *messages, const char *role)
{
	const cJSON	*m;
	const char	*r, *found = NULL;

	cJSON_ArrayForEach(m, messages) {
		r = json_str(m, "role");
		if (r != NULL && strcmp(r, role) == 0)
			found = json_str(m, "content");
	}
	return found;
}

static char *
model_script_contains(const cJSON *expect, const char *key,
    const cJSON *messages, const char *role, const char *what)
{
	const char	*want = json_str(expect, key), *have;

	if (want == NULL)
		return NULL;
	if ((have = model_script_last(messages, role)) == NULL)
		return xprintf("expect %s '%s': the request has no %s", key,
		    want, what);
	if (strstr(have, want) == NULL)
		return xprintf("expect %s '%s': the %s is '%.200s'", key, want,
		    what, have);
	return NULL;
}

char *
model_script_expect(const cJSON *turn, const cJSON *messages,
    const cJSON *tools)
{
	const cJSON	*expect, *want, *w, *t;
	const char	*name;
	char		*why;
	int		 found;

	expect = cJSON_GetObjectItemCaseSensitive(turn, "expect");
	if (!cJSON_IsObject(expect))
		return NULL;
	why = model_script_contains(expect, "last_tool_result_contains",
	    messages, "tool", "last tool result");
	if (why != NULL)
		return why;
	why = model_script_contains(expect, "last_user_message_contains",
	    messages, "user", "last user message");
	if (why != NULL)
		return why;
	want = cJSON_GetObjectItemCaseSensitive(expect, "tools_include");
	if (cJSON_IsString(want) || cJSON_IsArray(want)) {
		for (w = cJSON_IsArray(want) ? want->child : want; w != NULL;
		    w = cJSON_IsArray(want) ? w->next : NULL) {
			if (!cJSON_IsString(w))
				continue;
			found = 0;
			cJSON_ArrayForEach(t, tools) {
				name = json_str(t, "name");
				if (name != NULL &&
				    strcmp(name, w->valuestring) == 0)
					found = 1;
			}
			if (!found)
				return xprintf("expect tools_include '%s': "
				    "the request offers no such tool",
				    w->valuestring);
		}
	}
	return NULL;
}
