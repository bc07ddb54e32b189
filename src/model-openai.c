/*
 * model-openai.c: the OpenAI Chat Completions wire format, which most
 * other servers speak too (OpenRouter, Ollama, llama.cpp, vLLM): request
 * bodies from the provider-neutral conversation, and the streamed chunks
 * ("data: {chunk}" ... "data: [DONE]") into text and tool calls. Tool
 * calls are assembled by their index; their arguments come as a JSON
 * string cut into many pieces.
 */
#include <stdlib.h>
#include <string.h>

#include "model-int.h"

static cJSON *
model_openai_message(const cJSON *m)
{
	const char	*role = json_str(m, "role"), *content, *id, *name;
	const cJSON	*calls, *call, *args;
	cJSON		*out, *arr, *c, *fn;
	char		*s;

	if (role == NULL)
		return NULL;
	content = json_str(m, "content");
	out = cJSON_CreateObject();
	cJSON_AddStringToObject(out, "role", role);
	if (strcmp(role, "tool") == 0) {
		id = json_str(m, "tool_call_id");
		cJSON_AddStringToObject(out, "tool_call_id", id != NULL ? id : "");
		cJSON_AddStringToObject(out, "content",
		    content != NULL ? content : "");
		return out;
	}
	if (strcmp(role, "assistant") != 0) {
		cJSON_AddStringToObject(out, "content",
		    content != NULL ? content : "");
		return out;
	}
	calls = cJSON_GetObjectItemCaseSensitive(m, "tool_calls");
	if (!cJSON_IsArray(calls) || cJSON_GetArraySize(calls) == 0) {
		/* Without tool calls, content may not be null. */
		cJSON_AddStringToObject(out, "content",
		    content != NULL ? content : "");
		return out;
	}
	if (content != NULL && *content != '\0')
		cJSON_AddStringToObject(out, "content", content);
	else
		cJSON_AddNullToObject(out, "content");
	arr = cJSON_AddArrayToObject(out, "tool_calls");
	cJSON_ArrayForEach(call, calls) {
		id = json_str(call, "id");
		name = json_str(call, "name");
		args = cJSON_GetObjectItemCaseSensitive(call, "arguments");
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "id", id != NULL ? id : "");
		cJSON_AddStringToObject(c, "type", "function");
		fn = cJSON_AddObjectToObject(c, "function");
		cJSON_AddStringToObject(fn, "name", name != NULL ? name : "");
		if (cJSON_IsString(args))
			cJSON_AddStringToObject(fn, "arguments",
			    args->valuestring);
		else if (args != NULL) {
			s = json_print(args);
			cJSON_AddStringToObject(fn, "arguments", s);
			free(s);
		} else
			cJSON_AddStringToObject(fn, "arguments", "{}");
		cJSON_AddItemToArray(arr, c);
	}
	return out;
}

cJSON *
model_openai_body(const char *model, const cJSON *messages, const cJSON *tools)
{
	cJSON		*body, *arr, *t, *fn, *so, *m;
	const cJSON	*it, *params;
	const char	*s;

	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "model", model);
	arr = cJSON_AddArrayToObject(body, "messages");
	cJSON_ArrayForEach(it, messages) {
		if ((m = model_openai_message(it)) != NULL)
			cJSON_AddItemToArray(arr, m);
	}
	if (cJSON_IsArray(tools) && cJSON_GetArraySize(tools) > 0) {
		arr = cJSON_AddArrayToObject(body, "tools");
		cJSON_ArrayForEach(it, tools) {
			t = cJSON_CreateObject();
			cJSON_AddStringToObject(t, "type", "function");
			fn = cJSON_AddObjectToObject(t, "function");
			s = json_str(it, "name");
			cJSON_AddStringToObject(fn, "name", s != NULL ? s : "");
			if ((s = json_str(it, "description")) != NULL)
				cJSON_AddStringToObject(fn, "description", s);
			params = cJSON_GetObjectItemCaseSensitive(it,
			    "parameters");
			if (cJSON_IsObject(params))
				cJSON_AddItemToObject(fn, "parameters",
				    cJSON_Duplicate(params, 1));
			cJSON_AddItemToArray(arr, t);
		}
	}
	cJSON_AddBoolToObject(body, "stream", 1);
	so = cJSON_AddObjectToObject(body, "stream_options");
	cJSON_AddBoolToObject(so, "include_usage", 1);
	return body;
}

static int
model_openai_tool_delta(struct model_stream *ms, const cJSON *tc, int pos)
{
	const cJSON		*idx, *fn, *args;
	struct model_slot	*s;
	const char		*id, *name;
	int			 index;
	char			*p;

	if (!cJSON_IsObject(tc))
		return model_stream_fail(ms, MODEL_ERR_STREAM,
		    "openai: malformed stream: event %lu: a tool call delta "
		    "is not an object", ms->nevents);
	idx = cJSON_GetObjectItemCaseSensitive(tc, "index");
	index = cJSON_IsNumber(idx) ? idx->valueint : pos;
	if (index < 0 || index > 1000000)
		return model_stream_fail(ms, MODEL_ERR_STREAM,
		    "openai: malformed stream: event %lu: tool call index %d",
		    ms->nevents, index);
	if ((s = model_stream_slot(ms, index, 1)) == NULL)
		return model_stream_fail(ms, MODEL_ERR_STREAM,
		    "openai: malformed stream: too many tool calls");
	s->tool = 1;
	if ((id = json_str(tc, "id")) != NULL && *id != '\0' && s->id == NULL)
		s->id = xstrdup(id);
	fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
	if (!cJSON_IsObject(fn))
		return 0;
	if ((name = json_str(fn, "name")) != NULL && *name != '\0' &&
	    s->name == NULL)
		s->name = xstrdup(name);
	args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
	if (cJSON_IsString(args))
		buf_adds(&s->args, args->valuestring);
	else if (cJSON_IsObject(args)) {
		p = json_print(args);
		buf_adds(&s->args, p);
		free(p);
	}
	return 0;
}

static int
model_openai_error(struct model_stream *ms, const cJSON *e)
{
	const char		*msg = NULL, *type = NULL, *code = NULL;
	enum model_error	 err = MODEL_ERR_SERVER;

	if (cJSON_IsObject(e)) {
		msg = json_str(e, "message");
		type = json_str(e, "type");
		code = json_str(e, "code");
	} else if (cJSON_IsString(e))
		msg = e->valuestring;
	if ((code != NULL && strstr(code, "context_length") != NULL) ||
	    (msg != NULL && strstr(msg, "context length") != NULL))
		err = MODEL_ERR_CONTEXT;
	else if ((type != NULL && strstr(type, "rate_limit") != NULL) ||
	    (code != NULL && strstr(code, "rate_limit") != NULL))
		err = MODEL_ERR_RATE;
	return model_stream_fail(ms, err, "openai: the server reported an "
	    "error in the stream: %s", msg != NULL ? msg : "(no message)");
}

/* prompt_tokens counts cached ones too; details say how many were. */
static void
model_openai_usage(struct model_stream *ms, const cJSON *usage)
{
	const cJSON	*d;

	ms->in = (long long)json_num(usage, "prompt_tokens", 0);
	ms->out = (long long)json_num(usage, "completion_tokens", 0);
	d = cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens_details");
	ms->cached = (long long)json_num(d, "cached_tokens", 0);
}

int
model_openai_event(struct model_stream *ms, const struct sse_event *ev)
{
	const cJSON	*choices, *choice, *delta, *content, *calls, *tc;
	const cJSON	*usage, *fr, *e;
	cJSON		*obj;
	int		 pos = 0, rc = 0;

	if (strcmp(ev->data, "[DONE]") == 0) {
		ms->complete = 1;
		ms->finished = 1;
		return 0;
	}
	obj = cJSON_ParseWithLength(ev->data, ev->data_len);
	utf8_repair_json(obj);
	if (obj == NULL || !cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		return model_stream_fail(ms, MODEL_ERR_STREAM,
		    "openai: malformed stream: event %lu is not a JSON object: "
		    "%.80s", ms->nevents, ev->data);
	}
	if ((e = cJSON_GetObjectItemCaseSensitive(obj, "error")) != NULL &&
	    !cJSON_IsNull(e)) {
		rc = model_openai_error(ms, e);
		goto out;
	}
	usage = cJSON_GetObjectItemCaseSensitive(obj, "usage");
	if (cJSON_IsObject(usage)) {
		model_openai_usage(ms, usage);
	}
	choices = cJSON_GetObjectItemCaseSensitive(obj, "choices");
	if (choices != NULL && !cJSON_IsArray(choices)) {
		rc = model_stream_fail(ms, MODEL_ERR_STREAM,
		    "openai: malformed stream: event %lu: choices is not an "
		    "array", ms->nevents);
		goto out;
	}
	cJSON_ArrayForEach(choice, choices) {
		if (json_num(choice, "index", 0) != 0)
			continue;	/* we ask for one choice */
		delta = cJSON_GetObjectItemCaseSensitive(choice, "delta");
		if (cJSON_IsObject(delta)) {
			content = cJSON_GetObjectItemCaseSensitive(delta,
			    "content");
			if (cJSON_IsString(content))
				model_stream_text(ms, content->valuestring,
				    strlen(content->valuestring));
			/* A refusal is the model's answer: show it. */
			content = cJSON_GetObjectItemCaseSensitive(delta,
			    "refusal");
			if (cJSON_IsString(content))
				model_stream_text(ms, content->valuestring,
				    strlen(content->valuestring));
			calls = cJSON_GetObjectItemCaseSensitive(delta,
			    "tool_calls");
			cJSON_ArrayForEach(tc, calls) {
				if ((rc = model_openai_tool_delta(ms, tc,
				    pos++)) != 0)
					goto out;
			}
		}
		fr = cJSON_GetObjectItemCaseSensitive(choice, "finish_reason");
		if (cJSON_IsString(fr)) {
			free(ms->stop_reason);
			ms->stop_reason = xstrdup(fr->valuestring);
			ms->finished = 1;
		}
	}
out:
	cJSON_Delete(obj);
	return rc;
}

int
model_openai_whole(struct model_stream *ms, const cJSON *obj)
{
	const cJSON		*e, *choices, *choice, *msg, *tc, *fn, *args;
	const cJSON		*usage;
	struct model_slot	*s;
	const char		*str;
	int			 i = 0;

	if ((e = cJSON_GetObjectItemCaseSensitive(obj, "error")) != NULL &&
	    !cJSON_IsNull(e)) {
		model_openai_error(ms, e);
		return -1;
	}
	choices = cJSON_GetObjectItemCaseSensitive(obj, "choices");
	choice = cJSON_GetArrayItem(choices, 0);
	msg = cJSON_GetObjectItemCaseSensitive(choice, "message");
	if (!cJSON_IsObject(msg))
		return 0;
	if ((str = json_str(msg, "content")) != NULL)
		buf_adds(&ms->text, str);
	cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(msg,
	    "tool_calls")) {
		if ((s = model_stream_slot(ms, i++, 1)) == NULL)
			break;
		s->tool = 1;
		if ((str = json_str(tc, "id")) != NULL)
			s->id = xstrdup(str);
		fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
		if ((str = json_str(fn, "name")) != NULL)
			s->name = xstrdup(str);
		args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
		if (cJSON_IsString(args))
			buf_adds(&s->args, args->valuestring);
		else if (cJSON_IsObject(args))
			s->input = json_print(args);
	}
	if ((str = json_str(choice, "finish_reason")) != NULL)
		ms->stop_reason = xstrdup(str);
	usage = cJSON_GetObjectItemCaseSensitive(obj, "usage");
	model_openai_usage(ms, usage);
	return 1;
}
