/*
 * context.c: the conversation a session sends to its model, its size
 * against the model's window, and compaction (DESIGN 14).
 *
 * Building the messages is O(events of the history); once a session is
 * compacted the messages hold only the user's messages, the summary and
 * the tail, so the request stays small however long the log grows.
 */
#include <stdlib.h>
#include <string.h>

#include "context.h"

#define CONTEXT_TAIL_SHARE	35	/* percent of the window kept as tail */
#define CONTEXT_TARGET_SHARE	50	/* percent after a compaction */
#define CONTEXT_FALLBACK_LINES	60	/* tool calls a fallback summary lists */
#define CONTEXT_CUT_MIN		200	/* a tool result this short stays */

struct context {
	char		*spec;
	long long	 window;
	int		 compact_at;
	double		 calib;		/* provider tokens / estimated */
	char		*summary;
	uint64_t	 through;	/* summary covers events up to here */
	uint64_t	 trim;		/* tool results up to here are cut */
	uint64_t	 start;		/* the conversation begins after this */
	char		*instructions;
};

/*
 * Windows in tokens, by model name prefix, longest prefix first where they
 * overlap. Providers' published figures; a local model (Ollama, llama.cpp)
 * is often run with much less than its nominal window, hence the small
 * default for an unknown name.
 */
static const struct {
	const char	*prefix;
	long long	 window;
} context_windows[] = {
	{ "anthropic:claude-", 200000 },
	{ "openai:gpt-4.1", 1047576 },
	{ "openai:gpt-5", 400000 },
	{ "openai:gpt-4o", 128000 },
	{ "openai:gpt-4-turbo", 128000 },
	{ "openai:gpt-4", 8192 },
	{ "openai:gpt-3.5-turbo", 16385 },
	{ "openai:o1", 200000 },
	{ "openai:o3", 200000 },
	{ "openai:o4-mini", 200000 },
	{ "openai:codex-mini", 200000 },
	{ "script:", 1000000 },		/* no model: never compacted by size */
};

long long
context_window_of(const char *spec)
{
	long long	 w = config_get_num("context_window");
	size_t		 i, best = 0, n;
	long long	 found = CONTEXT_DEFAULT_WINDOW;

	if (w > 0)
		return w;
	for (i = 0; spec != NULL && i < nitems(context_windows); i++) {
		n = strlen(context_windows[i].prefix);
		if (n > best && strncmp(spec, context_windows[i].prefix, n) == 0) {
			best = n;
			found = context_windows[i].window;
		}
	}
	return found;
}

struct context *
context_new(const char *spec)
{
	struct context	*cx;

	cx = xcalloc(1, sizeof *cx);
	cx->calib = 1.0;
	context_set_model(cx, spec);
	return cx;
}

void
context_free(struct context *cx)
{
	if (cx == NULL)
		return;
	free(cx->spec);
	free(cx->summary);
	free(cx->instructions);
	free(cx);
}

void
context_set_model(struct context *cx, const char *spec)
{
	long long	 at = config_get_num("compact_at");

	free(cx->spec);
	cx->spec = xstrdup(spec != NULL ? spec : "");
	cx->window = context_window_of(cx->spec);
	cx->compact_at = at >= 10 && at <= 100 ? (int)at : 80;
	cx->calib = 1.0;	/* another tokenizer */
}

long long
context_window(struct context *cx)
{
	return cx->window;
}

int
context_compact_at(struct context *cx)
{
	return cx->compact_at;
}

static uint64_t
context_seq(const cJSON *ev)
{
	return (uint64_t)json_num(ev, "seq", 0);
}

void
context_apply(struct context *cx, const cJSON *ev)
{
	const char	*type = json_str(ev, "type"), *s;
	uint64_t	 through, trim;

	if (type != NULL && strcmp(type, "conversation.cleared") == 0) {
		/* A new conversation: nothing before it is sent again. */
		free(cx->summary);
		cx->summary = NULL;
		cx->start = context_seq(ev);
		cx->through = cx->trim = cx->start;
		return;
	}
	if (type == NULL || strcmp(type, "context.compacted") != 0)
		return;
	s = json_str(ev, "summary");
	through = (uint64_t)json_num(ev, "through_seq", 0);
	trim = (uint64_t)json_num(ev, "trimmed_through", 0);
	if (s != NULL && through > cx->through) {
		free(cx->summary);
		cx->summary = xstrdup(s);
		cx->through = through;
	}
	if (trim > cx->trim)
		cx->trim = trim;
}

/* The line a cut tool result becomes (caller frees). */
static char *
context_cut_text(size_t n)
{
	return xprintf("[output cut to save room in the context window: %zu "
	    "bytes; run the tool again if it is still needed]", n);
}

void
context_forget(struct context *cx)
{
	free(cx->summary);
	cx->summary = NULL;
	cx->through = cx->trim = cx->start = 0;
}

uint64_t
context_through(struct context *cx)
{
	return cx->through;
}

const char *
context_summary(struct context *cx)
{
	return cx->summary;
}

void
context_set_instructions(struct context *cx, const char *text)
{
	free(cx->instructions);
	cx->instructions = text != NULL && *text != '\0' ? xstrdup(text) : NULL;
}

static cJSON *
context_add(cJSON *to, const char *role, const char *content)
{
	cJSON	*m = cJSON_CreateObject();

	cJSON_AddStringToObject(m, "role", role);
	cJSON_AddStringToObject(m, "content", content != NULL ? content : "");
	cJSON_AddItemToArray(to, m);
	return m;
}

static const char context_summary_intro[] =
    "The earlier part of this conversation was compacted to save room in the "
    "context window. The user's messages above are all kept verbatim; this "
    "is the summary of everything else up to here:\n\n";

cJSON *
context_messages(struct context *cx, const cJSON *history, const char *system,
    uint64_t until, uint64_t trim)
{
	cJSON		*msgs, *m, *deferred, *outstanding, *ev, *tc, *calls, *o;
	const char	*type, *id, *result;
	char		*s;
	uint64_t	 seq;

	if (trim == 0)
		trim = cx->trim;
	msgs = cJSON_CreateArray();
	if (cx->instructions != NULL) {
		s = xprintf("%s\n\n# Project instructions\n\n%s", system,
		    cx->instructions);
		context_add(msgs, "system", s);
		free(s);
	} else
		context_add(msgs, "system", system);

	/* Compacted: every user message verbatim, then the summary. */
	if (cx->summary != NULL) {
		cJSON_ArrayForEach(ev, history) {
			if (context_seq(ev) > cx->through)
				break;
			if (context_seq(ev) > cx->start &&
			    strcmp(json_str(ev, "type"), "user.message") == 0)
				context_add(msgs, "user", json_str(ev, "text"));
		}
		s = xprintf("%s%s", context_summary_intro, cx->summary);
		context_add(msgs, "user", s);
		free(s);
	}

	/*
	 * Tool results must follow their assistant message directly; a user
	 * message typed while tools ran waits until they are all answered.
	 */
	deferred = cJSON_CreateArray();
	outstanding = cJSON_CreateObject();	/* call id -> tool name */
	cJSON_ArrayForEach(ev, history) {
		seq = context_seq(ev);
		if (seq <= cx->through)
			continue;	/* summarized, or before a /clear */
		if (until != 0 && seq >= until)
			break;
		type = json_str(ev, "type");
		if (strcmp(type, "user.message") == 0) {
			context_add(outstanding->child != NULL ? deferred : msgs,
			    "user", json_str(ev, "text"));
		} else if (strcmp(type, "assistant.message") == 0) {
			/* Unanswered calls of an older message: close them. */
			cJSON_Delete(outstanding);
			outstanding = cJSON_CreateObject();
			m = context_add(msgs, "assistant", json_str(ev, "text"));
			calls = cJSON_GetObjectItemCaseSensitive(ev, "tool_calls");
			if (cJSON_GetArraySize(calls) > 0) {
				cJSON_AddItemToObject(m, "tool_calls",
				    cJSON_Duplicate(calls, 1));
				cJSON_ArrayForEach(tc, calls) {
					id = json_str(tc, "id");
					if (id != NULL)
						cJSON_AddStringToObject(outstanding,
						    id, json_str(tc, "name") ?
						    json_str(tc, "name") : "");
				}
			}
		} else if (strcmp(type, "tool.finished") == 0) {
			id = json_str(ev, "call_id");
			if (id == NULL || (o = cJSON_GetObjectItemCaseSensitive(
			    outstanding, id)) == NULL)
				continue;
			result = json_str(ev, "result");
			if (result == NULL)
				result = "";
			s = NULL;
			if (seq <= trim && strlen(result) > CONTEXT_CUT_MIN)
				result = s = context_cut_text(strlen(result));
			m = context_add(msgs, "tool", result);
			free(s);
			cJSON_AddStringToObject(m, "tool_call_id", id);
			cJSON_AddStringToObject(m, "name", o->valuestring);
			cJSON_DeleteItemFromObjectCaseSensitive(outstanding, id);
			if (outstanding->child == NULL) {
				while ((m = cJSON_DetachItemFromArray(deferred, 0))
				    != NULL)
					cJSON_AddItemToArray(msgs, m);
			}
		}
	}
	while ((m = cJSON_DetachItemFromArray(deferred, 0)) != NULL)
		cJSON_AddItemToArray(msgs, m);
	cJSON_Delete(deferred);
	cJSON_Delete(outstanding);
	return msgs;
}

static size_t
context_bytes(const cJSON *j)
{
	char	*s;
	size_t	 n;

	if (j == NULL)
		return 0;
	s = cJSON_PrintUnformatted(j);
	n = s != NULL ? strlen(s) : 0;
	free(s);
	return n;
}

static double
context_raw(const cJSON *messages, const cJSON *tools)
{
	return (double)(context_bytes(messages) + context_bytes(tools)) /
	    CONTEXT_BYTES_PER_TOKEN;
}

long long
context_tokens(struct context *cx, const cJSON *messages, const cJSON *tools)
{
	return (long long)(context_raw(messages, tools) * cx->calib) + 1;
}

void
context_calibrate(struct context *cx, const cJSON *messages,
    const cJSON *tools, long long input_tokens)
{
	double	 raw = context_raw(messages, tools), f;

	/* A tiny or uncounted request says little about the tokenizer. */
	if (input_tokens <= 0 || raw < 256)
		return;
	f = (double)input_tokens / raw;
	if (f < 0.5)
		f = 0.5;
	if (f > 4)
		f = 4;
	cx->calib = f;
}

void
context_distrust(struct context *cx)
{
	cx->calib *= 1.5;
	if (cx->calib > 4)
		cx->calib = 4;
}

/* Bytes an event adds to the conversation, roughly. */
static size_t
context_event_bytes(const cJSON *ev, uint64_t trim)
{
	const char	*type = json_str(ev, "type"), *s;
	size_t		 n = 16;

	if (strcmp(type, "user.message") == 0 ||
	    strcmp(type, "assistant.message") == 0) {
		if ((s = json_str(ev, "text")) != NULL)
			n += strlen(s);
		n += context_bytes(cJSON_GetObjectItemCaseSensitive(ev,
		    "tool_calls"));
	} else if (strcmp(type, "tool.finished") == 0) {
		if ((s = json_str(ev, "result")) != NULL)
			n += context_seq(ev) <= trim &&
			    strlen(s) > CONTEXT_CUT_MIN ? 160 : strlen(s);
	} else
		n = 0;
	return n;
}

int
context_plan(struct context *cx, const cJSON *history, const char *system,
    const cJSON *tools, int force, struct context_plan *p)
{
	cJSON		*msgs;
	const cJSON	*ev;
	uint64_t	 start = 0, last = 0, seq;
	double		 budget, tail = 0;
	long long	 limit;

	memset(p, 0, sizeof *p);
	msgs = context_messages(cx, history, system, 0, 0);
	p->tokens = context_tokens(cx, msgs, tools);
	cJSON_Delete(msgs);
	limit = cx->window * cx->compact_at / 100;
	if (!force && p->tokens <= limit)
		return 0;

	/*
	 * The tail starts at an assistant message (its tool results follow
	 * it, so no call is cut from its answer), as early as its share of
	 * the window allows; by hand, only the last turn is kept.
	 */
	budget = force ? 0 : (double)cx->window * CONTEXT_TAIL_SHARE / 100 *
	    CONTEXT_BYTES_PER_TOKEN / cx->calib;
	cJSON_ArrayForEach(ev, history)
		last = context_seq(ev);
	/* cJSON keeps the last item as the first one's prev. */
	for (ev = history->child != NULL ? history->child->prev : NULL;
	    ev != NULL; ev = ev == history->child ? NULL : ev->prev) {
		seq = context_seq(ev);
		if (seq <= cx->through)
			break;
		tail += (double)context_event_bytes(ev, cx->trim);
		if (strcmp(json_str(ev, "type"), "assistant.message") != 0)
			continue;
		if (start != 0 && tail > budget)
			break;
		start = seq;
	}
	if (start == 0)
		start = last + 1;	/* no turn to keep: summarize all */

	/* Cut the old tool results first: no model call. */
	p->trim_through = start - 1 > cx->trim ? start - 1 : cx->trim;
	msgs = context_messages(cx, history, system, 0, p->trim_through);
	p->tokens_after = context_tokens(cx, msgs, tools);
	cJSON_Delete(msgs);
	if (!force && p->tokens_after <= cx->window * CONTEXT_TARGET_SHARE / 100)
		return 1;
	if (start - 1 > cx->through)
		p->through = start - 1;
	else
		p->trim_through = last;	/* nothing left to summarize */
	return 1;
}

static const char context_prompt[] =
    "This conversation is about to be compacted: everything above will be "
    "replaced by your summary, so that the work can go on within the "
    "model's context window. Write the summary now, as plain text under "
    "these headings: Task; Decisions made; Files changed; The user's "
    "corrections and instructions (quote them verbatim); Open problems; "
    "Next steps. Be specific: name files, functions, commands and error "
    "messages. Do not call any tool.";

char *
context_summary_prompt(const char *focus)
{
	if (focus != NULL && *focus != '\0')
		return xprintf("%s\nFocus the summary on: %s", context_prompt,
		    focus);
	return xstrdup(context_prompt);
}

cJSON *
context_summary_request(struct context *cx, const cJSON *history,
    const char *system, const struct context_plan *p, const char *focus)
{
	cJSON	*msgs;
	char	*prompt;

	msgs = context_messages(cx, history, system, p->through + 1,
	    p->trim_through);
	prompt = context_summary_prompt(focus);
	context_add(msgs, "user", prompt);
	free(prompt);
	return msgs;
}

int
context_is_summary_prompt(const char *text)
{
	return text != NULL && strncmp(text, context_prompt,
	    sizeof context_prompt - 1) == 0;
}

/* One line for a tool call: its name and what it touched. */
static void
context_call_line(struct buf *b, const cJSON *tc)
{
	const cJSON	*args = cJSON_GetObjectItemCaseSensitive(tc, "arguments");
	const char	*what = json_str(args, "path");

	if (what == NULL)
		what = json_str(args, "command");
	if (what == NULL)
		what = json_str(args, "pattern");
	buf_addf(b, "- %s %.160s\n", json_str(tc, "name") != NULL ?
	    json_str(tc, "name") : "?", what != NULL ? what : "");
}

char *
context_fallback(struct context *cx, const cJSON *history, uint64_t through,
    const char *why)
{
	struct buf	 b = BUF_INIT, calls = BUF_INIT;
	const cJSON	*ev, *tc;
	size_t		 n = 0, skip = 0, i = 0;

	cJSON_ArrayForEach(ev, history) {
		if (context_seq(ev) > cx->through && context_seq(ev) <= through &&
		    strcmp(json_str(ev, "type"), "assistant.message") == 0)
			n += (size_t)cJSON_GetArraySize(
			    cJSON_GetObjectItemCaseSensitive(ev, "tool_calls"));
	}
	if (n > CONTEXT_FALLBACK_LINES)
		skip = n - CONTEXT_FALLBACK_LINES;
	cJSON_ArrayForEach(ev, history) {
		if (context_seq(ev) <= cx->through || context_seq(ev) > through ||
		    strcmp(json_str(ev, "type"), "assistant.message") != 0)
			continue;
		cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(ev,
		    "tool_calls")) {
			if (i++ >= skip)
				context_call_line(&calls, tc);
		}
	}
	if (cx->summary != NULL)
		buf_addf(&b, "%s\n\n", cx->summary);
	buf_addf(&b, "The turns after that, up to event %llu, were dropped "
	    "without a summary (%s).", (unsigned long long)through, why);
	if (calls.len > 0)
		buf_addf(&b, " The tool calls they made%s:\n%s",
		    skip > 0 ? " (the last ones)" : "", buf_str(&calls));
	buf_release(&calls);
	return buf_detach(&b, NULL);
}
