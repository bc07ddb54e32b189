/*
 * model-anthropic.c: the Anthropic Messages wire format. Request bodies
 * take the system prompt out as the top-level "system", turn tool results
 * into tool_result blocks of a user message and merge consecutive messages
 * of one role (the API wants user and assistant to alternate). The stream
 * is typed events: message_start, content_block_start (text, tool_use),
 * content_block_delta (text_delta, input_json_delta), content_block_stop,
 * message_delta (stop_reason, usage), message_stop, ping and error.
 */
#include <stdlib.h>
#include <string.h>

#include "model-int.h"

static cJSON *
model_anthropic_text(const char *text)
{
	cJSON	*b = cJSON_CreateObject();

	cJSON_AddStringToObject(b, "type", "text");
	cJSON_AddStringToObject(b, "text", text);
	return b;
}

static void
model_anthropic_cache(cJSON *block)
{
	cJSON	*cc;

	if (block == NULL)
		return;
	cc = cJSON_AddObjectToObject(block, "cache_control");
	cJSON_AddStringToObject(cc, "type", "ephemeral");
}

/* Blocks of one neutral message; *role is "user" or "assistant". */
static cJSON *
model_anthropic_blocks(const cJSON *m, const char **role)
{
	const char	*r = json_str(m, "role"), *content, *s;
	const cJSON	*calls, *call, *args;
	cJSON		*blocks, *b, *input;

	content = json_str(m, "content");
	if (content == NULL)
		content = "";
	blocks = cJSON_CreateArray();
	if (r != NULL && strcmp(r, "assistant") == 0) {
		*role = "assistant";
		if (*content != '\0')
			cJSON_AddItemToArray(blocks,
			    model_anthropic_text(content));
		calls = cJSON_GetObjectItemCaseSensitive(m, "tool_calls");
		cJSON_ArrayForEach(call, calls) {
			b = cJSON_CreateObject();
			cJSON_AddStringToObject(b, "type", "tool_use");
			s = json_str(call, "id");
			cJSON_AddStringToObject(b, "id", s != NULL ? s : "");
			s = json_str(call, "name");
			cJSON_AddStringToObject(b, "name", s != NULL ? s : "");
			args = cJSON_GetObjectItemCaseSensitive(call,
			    "arguments");
			input = NULL;
			if (cJSON_IsObject(args))
				input = cJSON_Duplicate(args, 1);
			else if (cJSON_IsString(args) && (input =
			    cJSON_Parse(args->valuestring)) != NULL &&
			    !cJSON_IsObject(input)) {
				cJSON_Delete(input);
				input = NULL;
			}
			if (input == NULL)
				input = cJSON_CreateObject();
			cJSON_AddItemToObject(b, "input", input);
			cJSON_AddItemToArray(blocks, b);
		}
		if (cJSON_GetArraySize(blocks) == 0)
			cJSON_AddItemToArray(blocks,
			    model_anthropic_text("(no reply)"));
		return blocks;
	}
	*role = "user";
	if (r != NULL && strcmp(r, "tool") == 0) {
		b = cJSON_CreateObject();
		cJSON_AddStringToObject(b, "type", "tool_result");
		s = json_str(m, "tool_call_id");
		cJSON_AddStringToObject(b, "tool_use_id", s != NULL ? s : "");
		cJSON_AddStringToObject(b, "content", content);
		cJSON_AddItemToArray(blocks, b);
	} else
		cJSON_AddItemToArray(blocks, model_anthropic_text(
		    *content != '\0' ? content : "(empty)"));
	return blocks;
}

cJSON *
model_anthropic_body(const char *model, const cJSON *messages,
    const cJSON *tools, long long max_tokens)
{
	cJSON		*body, *msgs, *last = NULL, *blocks, *b, *m, *t, *arr;
	const cJSON	*it, *params;
	const char	*role, *last_role = NULL, *s;
	struct buf	 system = BUF_INIT;

	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "model", model);
	cJSON_AddNumberToObject(body, "max_tokens", (double)max_tokens);
	msgs = cJSON_CreateArray();
	cJSON_ArrayForEach(it, messages) {
		s = json_str(it, "role");
		if (s != NULL && strcmp(s, "system") == 0) {
			if (system.len != 0)
				buf_adds(&system, "\n\n");
			s = json_str(it, "content");
			buf_adds(&system, s != NULL ? s : "");
			continue;
		}
		blocks = model_anthropic_blocks(it, &role);
		if (last != NULL && strcmp(role, last_role) == 0) {
			/* Same role twice: one message with both's blocks. */
			arr = cJSON_GetObjectItemCaseSensitive(last, "content");
			while ((b = cJSON_DetachItemFromArray(blocks, 0)) !=
			    NULL)
				cJSON_AddItemToArray(arr, b);
			cJSON_Delete(blocks);
			continue;
		}
		m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "role", role);
		cJSON_AddItemToObject(m, "content", blocks);
		cJSON_AddItemToArray(msgs, m);
		last = m;
		last_role = role;
	}
	/*
	 * Prompt caching: an agent sends the same growing conversation at
	 * every step, so mark the system prompt (with the tools before it)
	 * and the end of the conversation as cache breakpoints; the next
	 * request then reads all but its new messages from the cache. Below
	 * the model's minimum length the marks are ignored.
	 */
	if (system.len != 0) {
		arr = cJSON_AddArrayToObject(body, "system");
		b = model_anthropic_text(buf_str(&system));
		model_anthropic_cache(b);
		cJSON_AddItemToArray(arr, b);
	}
	buf_release(&system);
	if (last != NULL) {
		arr = cJSON_GetObjectItemCaseSensitive(last, "content");
		model_anthropic_cache(cJSON_GetArrayItem(arr,
		    cJSON_GetArraySize(arr) - 1));
	}
	cJSON_AddItemToObject(body, "messages", msgs);
	if (cJSON_IsArray(tools) && cJSON_GetArraySize(tools) > 0) {
		arr = cJSON_AddArrayToObject(body, "tools");
		cJSON_ArrayForEach(it, tools) {
			t = cJSON_CreateObject();
			s = json_str(it, "name");
			cJSON_AddStringToObject(t, "name", s != NULL ? s : "");
			if ((s = json_str(it, "description")) != NULL)
				cJSON_AddStringToObject(t, "description", s);
			params = cJSON_GetObjectItemCaseSensitive(it,
			    "parameters");
			if (cJSON_IsObject(params))
				cJSON_AddItemToObject(t, "input_schema",
				    cJSON_Duplicate(params, 1));
			else {
				b = cJSON_AddObjectToObject(t, "input_schema");
				cJSON_AddStringToObject(b, "type", "object");
			}
			cJSON_AddItemToArray(arr, t);
		}
		/* Tools come first in the cached prefix: their own mark. */
		model_anthropic_cache(cJSON_GetArrayItem(arr,
		    cJSON_GetArraySize(arr) - 1));
	}
	cJSON_AddBoolToObject(body, "stream", 1);
	return body;
}

static void
model_anthropic_usage(struct model_stream *ms, const cJSON *usage)
{
	const cJSON	*v;

	if (!cJSON_IsObject(usage))
		return;
	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(usage,
	    "input_tokens")))
		ms->in = (long long)v->valuedouble +
		    (long long)json_num(usage, "cache_creation_input_tokens", 0) +
		    (long long)json_num(usage, "cache_read_input_tokens", 0);
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(usage,
	    "cache_read_input_tokens")))
		ms->cached = (long long)json_num(usage,
		    "cache_read_input_tokens", 0);
	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(usage,
	    "output_tokens")))
		ms->out = (long long)v->valuedouble;
}

static int
model_anthropic_error(struct model_stream *ms, const cJSON *obj)
{
	const cJSON		*e = cJSON_GetObjectItemCaseSensitive(obj, "error");
	const char		*type = json_str(e, "type"), *msg;
	enum model_error	 err = MODEL_ERR_OTHER;

	msg = json_str(e, "message");
	if (type == NULL)
		type = "error";
	if (strcmp(type, "overloaded_error") == 0 ||
	    strcmp(type, "api_error") == 0)
		err = MODEL_ERR_SERVER;
	else if (strcmp(type, "rate_limit_error") == 0)
		err = MODEL_ERR_RATE;
	else if (msg != NULL && strstr(msg, "prompt is too long") != NULL)
		err = MODEL_ERR_CONTEXT;
	return model_stream_fail(ms, err, "anthropic: the server reported an "
	    "error in the stream: %s: %s", type, msg != NULL ? msg :
	    "(no message)");
}

static int
model_anthropic_index(struct model_stream *ms, const cJSON *obj,
    const char *type, int create, struct model_slot **sp)
{
	const cJSON	*idx = cJSON_GetObjectItemCaseSensitive(obj, "index");

	if (!cJSON_IsNumber(idx) || idx->valuedouble < 0 ||
	    idx->valuedouble > 1000000)
		return model_stream_fail(ms, MODEL_ERR_STREAM,
		    "anthropic: malformed stream: event %lu (%s) has no valid "
		    "index", ms->nevents, type);
	*sp = model_stream_slot(ms, idx->valueint, create);
	if (*sp == NULL)
		return model_stream_fail(ms, MODEL_ERR_STREAM,
		    "anthropic: malformed stream: event %lu (%s) names content "
		    "block %d, which was not started", ms->nevents, type,
		    idx->valueint);
	return 0;
}

int
model_anthropic_event(struct model_stream *ms, const struct sse_event *ev)
{
	const cJSON		*cb, *delta, *v;
	struct model_slot	*s;
	const char		*type, *dtype;
	cJSON			*obj;
	int			 rc = 0;

	obj = cJSON_ParseWithLength(ev->data, ev->data_len);
	utf8_repair_json(obj);
	if (obj == NULL || !cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		return model_stream_fail(ms, MODEL_ERR_STREAM,
		    "anthropic: malformed stream: event %lu (%s) is not a JSON "
		    "object: %.80s", ms->nevents, ev->type, ev->data);
	}
	type = json_str(obj, "type");
	if (type == NULL)
		type = ev->type;

	if (strcmp(type, "ping") == 0)
		;
	else if (strcmp(type, "error") == 0)
		rc = model_anthropic_error(ms, obj);
	else if (strcmp(type, "message_start") == 0) {
		ms->started = 1;
		v = cJSON_GetObjectItemCaseSensitive(obj, "message");
		model_anthropic_usage(ms,
		    cJSON_GetObjectItemCaseSensitive(v, "usage"));
	} else if (!ms->started) {
		rc = model_stream_fail(ms, MODEL_ERR_STREAM,
		    "anthropic: malformed stream: event %lu (%s) came before "
		    "message_start", ms->nevents, type);
	} else if (strcmp(type, "content_block_start") == 0) {
		if ((rc = model_anthropic_index(ms, obj, type, 1, &s)) != 0)
			goto out;
		cb = cJSON_GetObjectItemCaseSensitive(obj, "content_block");
		dtype = json_str(cb, "type");
		if (dtype != NULL && strcmp(dtype, "tool_use") == 0) {
			s->tool = 1;
			free(s->id);
			free(s->name);
			s->id = xstrdup(json_str(cb, "id") != NULL ?
			    json_str(cb, "id") : "");
			s->name = xstrdup(json_str(cb, "name") != NULL ?
			    json_str(cb, "name") : "");
			v = cJSON_GetObjectItemCaseSensitive(cb, "input");
			if (cJSON_IsObject(v) && v->child != NULL) {
				free(s->input);
				s->input = json_print(v);
			}
		} else if (dtype != NULL && strcmp(dtype, "text") == 0) {
			s->text = 1;
			v = cJSON_GetObjectItemCaseSensitive(cb, "text");
			if (cJSON_IsString(v))
				model_stream_text(ms, v->valuestring,
				    strlen(v->valuestring));
		}
	} else if (strcmp(type, "content_block_delta") == 0) {
		if ((rc = model_anthropic_index(ms, obj, type, 0, &s)) != 0)
			goto out;
		delta = cJSON_GetObjectItemCaseSensitive(obj, "delta");
		dtype = json_str(delta, "type");
		if (dtype == NULL)
			rc = model_stream_fail(ms, MODEL_ERR_STREAM,
			    "anthropic: malformed stream: event %lu "
			    "(content_block_delta) has no delta type",
			    ms->nevents);
		else if (strcmp(dtype, "text_delta") == 0) {
			v = cJSON_GetObjectItemCaseSensitive(delta, "text");
			if (cJSON_IsString(v))
				model_stream_text(ms, v->valuestring,
				    strlen(v->valuestring));
		} else if (strcmp(dtype, "input_json_delta") == 0) {
			v = cJSON_GetObjectItemCaseSensitive(delta,
			    "partial_json");
			if (s->text)
				rc = model_stream_fail(ms, MODEL_ERR_STREAM,
				    "anthropic: malformed stream: event %lu: "
				    "input_json_delta for a text block",
				    ms->nevents);
			else if (s->tool && cJSON_IsString(v))
				buf_adds(&s->args, v->valuestring);
			/* server_tool_use ...: run by the API, not ours */
		}
		/* thinking_delta, signature_delta ...: not ours */
	} else if (strcmp(type, "content_block_stop") == 0) {
		if ((rc = model_anthropic_index(ms, obj, type, 0, &s)) != 0)
			goto out;
		s->stopped = 1;
	} else if (strcmp(type, "message_delta") == 0) {
		delta = cJSON_GetObjectItemCaseSensitive(obj, "delta");
		if ((v = cJSON_GetObjectItemCaseSensitive(delta,
		    "stop_reason")) != NULL && cJSON_IsString(v)) {
			free(ms->stop_reason);
			ms->stop_reason = xstrdup(v->valuestring);
			ms->finished = 1;
		}
		model_anthropic_usage(ms,
		    cJSON_GetObjectItemCaseSensitive(obj, "usage"));
	} else if (strcmp(type, "message_stop") == 0) {
		ms->complete = 1;
		ms->finished = 1;
	}
	/* Unknown event types are ignored, as the API asks. */
out:
	cJSON_Delete(obj);
	return rc;
}

int
model_anthropic_whole(struct model_stream *ms, const cJSON *obj)
{
	const cJSON		*b, *input;
	struct model_slot	*s;
	const char		*type = json_str(obj, "type"), *str;
	int			 i = 0;

	if (type != NULL && strcmp(type, "error") == 0) {
		model_anthropic_error(ms, obj);
		return -1;
	}
	if (type == NULL || strcmp(type, "message") != 0)
		return 0;
	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(obj,
	    "content")) {
		str = json_str(b, "type");
		if (str != NULL && strcmp(str, "text") == 0 &&
		    json_str(b, "text") != NULL)
			buf_adds(&ms->text, json_str(b, "text"));
		else if (str != NULL && strcmp(str, "tool_use") == 0) {
			if ((s = model_stream_slot(ms, i, 1)) == NULL)
				break;
			s->tool = 1;
			s->id = xstrdup(json_str(b, "id") != NULL ?
			    json_str(b, "id") : "");
			s->name = xstrdup(json_str(b, "name") != NULL ?
			    json_str(b, "name") : "");
			input = cJSON_GetObjectItemCaseSensitive(b, "input");
			if (cJSON_IsObject(input))
				s->input = json_print(input);
		}
		i++;
	}
	if ((str = json_str(obj, "stop_reason")) != NULL)
		ms->stop_reason = xstrdup(str);
	model_anthropic_usage(ms, cJSON_GetObjectItemCaseSensitive(obj,
	    "usage"));
	return 1;
}
