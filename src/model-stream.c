/*
 * model-stream.c: assembles one streamed reply from its SSE bytes, for
 * either wire format (the format-specific events are in model-openai.c and
 * model-anthropic.c). Text deltas go out as they arrive; tool calls are
 * kept aside and only handed over, whole and parsed, at a clean end, so a
 * cut or broken stream leaves nothing half-applied.
 */
#include <stdlib.h>
#include <string.h>

#include "model-int.h"

const char *
model_kind_name(enum model_kind kind)
{
	switch (kind) {
	case MODEL_OPENAI:
		return "openai";
	case MODEL_ANTHROPIC:
		return "anthropic";
	case MODEL_SCRIPT:
		return "script";
	}
	return "?";
}

static int
model_stream_event(void *arg, const struct sse_event *ev)
{
	struct model_stream	*ms = arg;

	ms->nevents++;
	if (ms->complete)
		return 0;	/* anything after the end is ignored */
	if (ms->kind == MODEL_ANTHROPIC)
		return model_anthropic_event(ms, ev);
	return model_openai_event(ms, ev);
}

struct model_stream *
model_stream_new(enum model_kind kind,
    void (*delta)(void *, const char *, size_t), void *arg)
{
	struct model_stream	*ms;

	ms = xcalloc(1, sizeof *ms);
	ms->kind = kind;
	ms->delta = delta;
	ms->arg = arg;
	ms->sse = sse_new(0, 0, model_stream_event, ms);
	buf_init(&ms->text);
	buf_init(&ms->head);
	ms->err = MODEL_ERR_STREAM;
	return ms;
}

static void
model_stream_clear_reply(struct model_stream *ms)
{
	if (!ms->have_reply)
		return;
	free(ms->reply.text);
	cJSON_Delete(ms->reply.tool_calls);
	free(ms->reply.stop_reason);
	memset(&ms->reply, 0, sizeof ms->reply);
	ms->have_reply = 0;
}

void
model_stream_free(struct model_stream *ms)
{
	size_t	 i;

	if (ms == NULL)
		return;
	sse_free(ms->sse);
	buf_release(&ms->text);
	buf_release(&ms->head);
	for (i = 0; i < ms->nslots; i++) {
		free(ms->slots[i].id);
		free(ms->slots[i].name);
		free(ms->slots[i].input);
		buf_release(&ms->slots[i].args);
	}
	free(ms->slots);
	free(ms->stop_reason);
	free(ms->cause);
	model_stream_clear_reply(ms);
	free(ms);
}

int
model_stream_fail(struct model_stream *ms, enum model_error err,
    const char *fmt, ...)
{
	va_list	 ap;

	if (ms->cause == NULL) {
		ms->err = err;
		va_start(ap, fmt);
		xvasprintf(&ms->cause, fmt, ap);
		va_end(ap);
	}
	return -1;
}

struct model_slot *
model_stream_slot(struct model_stream *ms, int index, int create)
{
	struct model_slot	*s;
	size_t			 i;

	for (i = 0; i < ms->nslots; i++) {
		if (ms->slots[i].index == index)
			return &ms->slots[i];
	}
	if (!create)
		return NULL;
	if (ms->nslots >= 1024)
		return NULL;	/* the caller calls it malformed */
	ms->slots = xreallocarray(ms->slots, ms->nslots + 1, sizeof *ms->slots);
	s = &ms->slots[ms->nslots++];
	memset(s, 0, sizeof *s);
	s->index = index;
	buf_init(&s->args);
	return s;
}

void
model_stream_text(struct model_stream *ms, const char *text, size_t len)
{
	if (len == 0)
		return;
	buf_add(&ms->text, text, len);
	if (ms->delta != NULL)
		ms->delta(ms->arg, text, len);
}

int
model_stream_feed(struct model_stream *ms, const void *data, size_t len,
    enum model_error *err, char **cause)
{
	char	*why = NULL;
	int	 rc;

	if (ms->cause == NULL && ms->nevents == 0 && ms->head.len < SSE_MAX_LINE)
		buf_add(&ms->head, data, len);
	if (ms->cause == NULL) {
		rc = sse_feed(ms->sse, data, len, &why);
		if (rc == -1) {
			model_stream_fail(ms, MODEL_ERR_STREAM,
			    "%s: malformed stream: %s", model_kind_name(ms->kind),
			    why);
			free(why);
		}
	}
	if (ms->cause != NULL) {
		*err = ms->err;
		*cause = xstrdup(ms->cause);
		return -1;
	}
	return 0;
}

static int
model_slot_cmp(const void *a, const void *b)
{
	const struct model_slot *sa = a, *sb = b;

	return (sa->index > sb->index) - (sa->index < sb->index);
}

static int
model_stream_build(struct model_stream *ms)
{
	const char		*name = model_kind_name(ms->kind);
	struct model_slot	*s;
	cJSON			*calls, *call, *args;
	const char		*json, *end;
	size_t			 i;
	int			 n = 0;
	char			*id;

	if (ms->nslots > 1)
		qsort(ms->slots, ms->nslots, sizeof *ms->slots, model_slot_cmp);
	calls = cJSON_CreateArray();
	for (i = 0; i < ms->nslots; i++) {
		s = &ms->slots[i];
		if (ms->kind == MODEL_ANTHROPIC && !s->tool)
			continue;
		n++;
		if (s->name == NULL || *s->name == '\0') {
			cJSON_Delete(calls);
			return model_stream_fail(ms, MODEL_ERR_STREAM,
			    "%s: malformed stream: tool call %d has no name",
			    name, s->index);
		}
		if (s->args.len != 0 && strcmp(s->args.data, "null") != 0)
			json = s->args.data;
		else if (s->input != NULL)
			json = s->input;
		else
			json = "{}";
		args = cJSON_ParseWithOpts(json, &end, 1);
		if ((args == NULL || !cJSON_IsObject(args)) &&
		    ms->stop_reason != NULL &&
		    (strcmp(ms->stop_reason, "max_tokens") == 0 ||
		    strcmp(ms->stop_reason, "length") == 0)) {
			cJSON_Delete(args);
			cJSON_Delete(calls);
			return model_stream_fail(ms, MODEL_ERR_OTHER,
			    "%s: the reply reached the output token limit "
			    "(%s) in the middle of tool call '%s'", name,
			    ms->stop_reason, s->name);
		}
		if (args == NULL || !cJSON_IsObject(args)) {
			cJSON_Delete(args);
			cJSON_Delete(calls);
			return model_stream_fail(ms, MODEL_ERR_STREAM,
			    "%s: malformed stream: the arguments of tool call "
			    "'%s' are not a JSON object: %.80s", name, s->name,
			    json);
		}
		call = cJSON_CreateObject();
		if (s->id != NULL && *s->id != '\0')
			id = xstrdup(s->id);
		else
			id = xprintf("call_%d", n);
		cJSON_AddStringToObject(call, "id", id);
		free(id);
		cJSON_AddStringToObject(call, "name", s->name);
		cJSON_AddItemToObject(call, "arguments", args);
		cJSON_AddItemToArray(calls, call);
	}
	ms->reply.text = xstrdup(buf_str(&ms->text));
	ms->reply.tool_calls = calls;
	ms->reply.input_tokens = ms->in;
	ms->reply.cached_input_tokens = ms->cached;
	ms->reply.output_tokens = ms->out;
	ms->reply.stop_reason = xstrdup(ms->stop_reason != NULL ?
	    ms->stop_reason : "");
	ms->have_reply = 1;
	return 0;
}

/*
 * A body without any event: a server that ignored "stream": true answers
 * with the whole reply as one JSON object, or an error object. 1 if it was
 * one of those (the stream now holds the reply or the error).
 */
static int
model_stream_whole(struct model_stream *ms)
{
	cJSON	*obj;
	int	 rc;

	if (ms->head.len == 0 || ms->head.len >= SSE_MAX_LINE)
		return 0;
	obj = cJSON_ParseWithLength(ms->head.data, ms->head.len);
	utf8_repair_json(obj);
	if (!cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		return 0;
	}
	if (ms->kind == MODEL_ANTHROPIC)
		rc = model_anthropic_whole(ms, obj);
	else
		rc = model_openai_whole(ms, obj);
	cJSON_Delete(obj);
	if (rc == 1) {
		ms->complete = ms->finished = 1;
		if (ms->delta != NULL && ms->text.len != 0)
			ms->delta(ms->arg, ms->text.data, ms->text.len);
	}
	return rc != 0;
}

int
model_stream_finish(struct model_stream *ms, struct model_reply **reply,
    enum model_error *err, char **cause)
{
	const char	*name = model_kind_name(ms->kind);
	const char	*end = ms->kind == MODEL_ANTHROPIC ? "message_stop" :
			    "data: [DONE]";
	int		 partial;

	if (ms->cause == NULL && !ms->complete) {
		partial = sse_finish(ms->sse);
		if (ms->nevents == 0 && model_stream_whole(ms))
			;	/* a whole JSON reply, or its error */
		else if (ms->nevents == 0) {
			model_stream_fail(ms, MODEL_ERR_STREAM,
			    "%s: malformed stream: the reply ended without "
			    "any event%s", name,
			    partial ? " (the body is not an event stream)" :
			    " (empty body)");
		} else if (partial || !ms->finished) {
			/* A compatible server may omit [DONE] after a
			 * finish_reason; anything else is a cut stream. */
			model_stream_fail(ms, MODEL_ERR_STREAM,
			    "%s: malformed stream: the reply was cut off "
			    "after %lu events%s, before %s", name, ms->nevents,
			    partial ? ", in the middle of an event" : "", end);
		}
	}
	if (ms->cause == NULL && !ms->have_reply)
		model_stream_build(ms);
	if (ms->cause != NULL) {
		*err = ms->err;
		*cause = xstrdup(ms->cause);
		return -1;
	}
	*reply = &ms->reply;
	return 0;
}
