/*
 * otlp.c: the spans of a session's event log, in OTLP/JSON (otlp.h).
 *
 * A run opens with the first event of a turn (the user's message) and
 * closes with run.finished; a model request is one span ending at its
 * model.usage, which says how long the request took; a tool call spans
 * tool.call to tool.finished, the approval it waited for included. Spans
 * are appended once they end, so a live export sends each span once.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "checkpoint.h"
#include "dynlib-curl.h"
#include "otlp.h"

#define OTLP_KIND_INTERNAL	1
#define OTLP_KIND_CLIENT	3
#define OTLP_STATUS_ERROR	2

struct otlp_call {
	char			*id;
	char			*name;
	uint64_t		 start;		/* ns since the epoch */
	uint64_t		 seq;
	struct otlp_call	*next;
};

struct otlp_trace {
	char			*session;
	char			*sandbox;
	char			*model;

	int			 run_open;
	uint64_t		 run_seq;
	uint64_t		 run_start;
	unsigned char		 trace_id[16];
	unsigned char		 run_span[8];
	uint64_t		 last;		/* the last event's time */
	struct otlp_call	*calls;
};

struct otlp_trace *
otlp_trace_new(const char *session, const char *sandbox, const char *model)
{
	struct otlp_trace	*t = xcalloc(1, sizeof *t);

	t->session = xstrdup(session != NULL ? session : "");
	t->sandbox = xstrdup(sandbox != NULL ? sandbox : "");
	t->model = xstrdup(model != NULL ? model : "");
	return t;
}

static void
otlp_call_free(struct otlp_call *c)
{
	free(c->id);
	free(c->name);
	free(c);
}

void
otlp_trace_free(struct otlp_trace *t)
{
	struct otlp_call	*c, *next;

	if (t == NULL)
		return;
	for (c = t->calls; c != NULL; c = next) {
		next = c->next;
		otlp_call_free(c);
	}
	free(t->session);
	free(t->sandbox);
	free(t->model);
	free(t);
}

/* An event's ts (RFC 3339, UTC, ms) in ns since the epoch; 0 if bad. */
static uint64_t
otlp_time(const cJSON *ev)
{
	const char	*s = json_str(ev, "ts"), *p;
	struct tm	 tm;
	uint64_t	 ms = 0;
	int		 digits = 0;
	time_t		 secs;

	memset(&tm, 0, sizeof tm);
	if (s == NULL || (p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return 0;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (digits++ < 3)
				ms = ms * 10 + (uint64_t)(*p - '0');
		}
		for (; digits < 3; digits++)
			ms *= 10;
	}
	if ((secs = timegm(&tm)) < 0)
		return 0;
	return ((uint64_t)secs * 1000 + ms) * 1000000;
}

/* An id of n bytes from what names its span: the same input, the same id. */
static void
otlp_id(struct otlp_trace *t, const char *what, uint64_t seq,
    const char *extra, unsigned char *out, size_t n)
{
	struct sha256	 h;
	unsigned char	 d[32];
	char		 num[32];

	sha256_init(&h);
	sha256_update(&h, t->session, strlen(t->session) + 1);
	sha256_update(&h, what, strlen(what) + 1);
	snprintf(num, sizeof num, "%llu", (unsigned long long)seq);
	sha256_update(&h, num, strlen(num) + 1);
	if (extra != NULL)
		sha256_update(&h, extra, strlen(extra) + 1);
	sha256_update(&h, t->trace_id, sizeof t->trace_id);
	sha256_final(&h, d);
	memcpy(out, d, n);
	if (out[0] == 0)
		out[0] = 1;	/* an all-zero id is invalid */
}

static char *
otlp_hex(const unsigned char *id, size_t n)
{
	static const char	 digits[] = "0123456789abcdef";
	char			*s = xmalloc(n * 2 + 1);
	size_t			 i;

	for (i = 0; i < n; i++) {
		s[i * 2] = digits[id[i] >> 4];
		s[i * 2 + 1] = digits[id[i] & 15];
	}
	s[n * 2] = '\0';
	return s;
}

static void
otlp_add_hex(cJSON *o, const char *key, const unsigned char *id, size_t n)
{
	char	*s = otlp_hex(id, n);

	cJSON_AddStringToObject(o, key, s);
	free(s);
}

/* Int64 fields are decimal strings in OTLP/JSON. */
static void
otlp_add_u64(cJSON *o, const char *key, uint64_t v)
{
	char	 s[32];

	snprintf(s, sizeof s, "%llu", (unsigned long long)v);
	cJSON_AddStringToObject(o, key, s);
}

static cJSON *
otlp_attr(cJSON *attrs, const char *key)
{
	cJSON	*a = cJSON_CreateObject(), *v = cJSON_CreateObject();

	cJSON_AddStringToObject(a, "key", key);
	cJSON_AddItemToObject(a, "value", v);
	cJSON_AddItemToArray(attrs, a);
	return v;
}

static void
otlp_attr_str(cJSON *attrs, const char *key, const char *value)
{
	if (value != NULL)
		cJSON_AddStringToObject(otlp_attr(attrs, key), "stringValue",
		    value);
}

static void
otlp_attr_int(cJSON *attrs, const char *key, long long value)
{
	char	 s[32];

	snprintf(s, sizeof s, "%lld", value);
	cJSON_AddStringToObject(otlp_attr(attrs, key), "intValue", s);
}

static void
otlp_attr_double(cJSON *attrs, const char *key, double value)
{
	cJSON_AddNumberToObject(otlp_attr(attrs, key), "doubleValue", value);
}

static void
otlp_attr_bool(cJSON *attrs, const char *key, int value)
{
	cJSON_AddBoolToObject(otlp_attr(attrs, key), "boolValue", value);
}

/*
 * A span of the open run (parent: the run's span, unless it is the run),
 * with the session's attributes; the caller adds its own.
 */
static cJSON *
otlp_span(struct otlp_trace *t, const unsigned char *span_id,
    const unsigned char *parent, const char *name, int kind,
    uint64_t start, uint64_t end, cJSON **attrs)
{
	cJSON	*s = cJSON_CreateObject();

	if (end < start)
		end = start;
	otlp_add_hex(s, "traceId", t->trace_id, sizeof t->trace_id);
	otlp_add_hex(s, "spanId", span_id, 8);
	if (parent != NULL)
		otlp_add_hex(s, "parentSpanId", parent, 8);
	cJSON_AddStringToObject(s, "name", name);
	cJSON_AddNumberToObject(s, "kind", kind);
	otlp_add_u64(s, "startTimeUnixNano", start);
	otlp_add_u64(s, "endTimeUnixNano", end);
	*attrs = cJSON_AddArrayToObject(s, "attributes");
	otlp_attr_str(*attrs, "holt.session", t->session);
	otlp_attr_str(*attrs, "holt.sandbox.id", t->sandbox);
	return s;
}

static void
otlp_status_error(cJSON *span, const char *message)
{
	cJSON	*st = cJSON_AddObjectToObject(span, "status");

	cJSON_AddNumberToObject(st, "code", OTLP_STATUS_ERROR);
	cJSON_AddStringToObject(st, "message", message);
}

static void
otlp_run_open(struct otlp_trace *t, const cJSON *ev, uint64_t start)
{
	char	 salt[64];

	t->run_open = 1;
	t->run_seq = (uint64_t)json_num(ev, "seq", 0);
	t->run_start = start;
	/* The run's time too: a session made again under an old name. */
	snprintf(salt, sizeof salt, "%llu", (unsigned long long)start);
	memset(t->trace_id, 0, sizeof t->trace_id);
	otlp_id(t, "trace", t->run_seq, salt, t->trace_id, sizeof t->trace_id);
	otlp_id(t, "run", t->run_seq, NULL, t->run_span, sizeof t->run_span);
}

/* A model request: GenAI's "chat MODEL" client span. */
static cJSON *
otlp_model_span(struct otlp_trace *t, const cJSON *ev, uint64_t now)
{
	const char	*spec = json_str(ev, "model"), *colon;
	char		*system, *name;
	unsigned char	 id[8];
	uint64_t	 start = t->last;
	double		 ms = json_num(ev, "duration_ms", -1);
	cJSON		*span, *attrs;

	if (spec == NULL || *spec == '\0')
		spec = t->model;
	colon = strchr(spec, ':');
	system = colon != NULL ? xstrndup(spec, (size_t)(colon - spec)) :
	    xstrdup("");
	if (colon != NULL)
		spec = colon + 1;
	if (ms >= 0 && (uint64_t)ms * 1000000 <= now)
		start = now - (uint64_t)ms * 1000000;
	if (t->run_open && start < t->run_start)
		start = t->run_start;	/* the log's times are in ms */
	otlp_id(t, "model", (uint64_t)json_num(ev, "seq", 0), NULL, id, 8);
	name = xprintf("chat %s", spec);
	span = otlp_span(t, id, t->run_open ? t->run_span : NULL, name,
	    OTLP_KIND_CLIENT, start, now, &attrs);
	free(name);
	otlp_attr_str(attrs, "gen_ai.operation.name", "chat");
	otlp_attr_str(attrs, "gen_ai.system", *system != '\0' ? system : NULL);
	otlp_attr_str(attrs, "gen_ai.request.model", spec);
	otlp_attr_int(attrs, "gen_ai.usage.input_tokens",
	    (long long)json_num(ev, "input_tokens", 0));
	otlp_attr_int(attrs, "gen_ai.usage.output_tokens",
	    (long long)json_num(ev, "output_tokens", 0));
	otlp_attr_int(attrs, "holt.usage.cached_input_tokens",
	    (long long)json_num(ev, "cached_input_tokens", 0));
	otlp_attr_double(attrs, "holt.cost_usd", json_num(ev, "cost_usd", 0));
	otlp_attr_str(attrs, "holt.purpose", json_str(ev, "purpose"));
	free(system);
	return span;
}

/* A tool call: GenAI's "execute_tool NAME" span, a child of its run. */
static cJSON *
otlp_tool_span(struct otlp_trace *t, struct otlp_call *c, const cJSON *ev,
    uint64_t now)
{
	unsigned char	 id[8];
	char		*name, *why;
	cJSON		*span, *attrs;
	const cJSON	*code = cJSON_GetObjectItem(ev, "exit_code");
	int		 denied = json_bool(ev, "denied", 0);

	otlp_id(t, "tool", c->seq, c->id, id, 8);
	name = xprintf("execute_tool %s", c->name);
	span = otlp_span(t, id, t->run_span, name, OTLP_KIND_INTERNAL,
	    c->start < t->run_start ? t->run_start : c->start, now, &attrs);
	free(name);
	otlp_attr_str(attrs, "gen_ai.operation.name", "execute_tool");
	otlp_attr_str(attrs, "gen_ai.tool.name", c->name);
	otlp_attr_str(attrs, "gen_ai.tool.call.id", c->id);
	if (cJSON_IsNumber(code))
		otlp_attr_int(attrs, "holt.tool.exit_code",
		    (long long)code->valuedouble);
	otlp_attr_bool(attrs, "holt.tool.denied", denied);
	if (json_bool(ev, "interrupted", 0))
		otlp_attr_bool(attrs, "holt.tool.interrupted", 1);
	if (json_bool(ev, "timed_out", 0))
		otlp_attr_bool(attrs, "holt.tool.timed_out", 1);
	if (cJSON_IsNumber(code) && code->valuedouble != 0) {
		why = xprintf("exit %d", (int)code->valuedouble);
		otlp_status_error(span, why);
		free(why);
	}
	return span;
}

static struct otlp_call *
otlp_call_take(struct otlp_trace *t, const char *id)
{
	struct otlp_call	**cp, *c;

	for (cp = &t->calls; *cp != NULL; cp = &(*cp)->next) {
		if (id != NULL && strcmp((*cp)->id, id) == 0) {
			c = *cp;
			*cp = c->next;
			return c;
		}
	}
	return NULL;
}

static void
otlp_add(cJSON *spans, cJSON *span)
{
	if (spans != NULL)
		cJSON_AddItemToArray(spans, span);
	else
		cJSON_Delete(span);
}

static void
otlp_run_close(struct otlp_trace *t, const cJSON *ev, uint64_t now,
    cJSON *spans)
{
	struct otlp_call	*c;
	const char		*reason = json_str(ev, "reason");
	cJSON			*span, *attrs;

	/* Calls the log never finished end with their run. */
	while ((c = t->calls) != NULL) {
		t->calls = c->next;
		otlp_add(spans, otlp_tool_span(t, c, ev, now));
		otlp_call_free(c);
	}
	span = otlp_span(t, t->run_span, NULL, "invoke_agent holt",
	    OTLP_KIND_INTERNAL, t->run_start, now, &attrs);
	otlp_attr_str(attrs, "gen_ai.operation.name", "invoke_agent");
	otlp_attr_str(attrs, "gen_ai.agent.name", "holt");
	otlp_attr_str(attrs, "holt.run.reason", reason);
	otlp_attr_int(attrs, "holt.run.steps", (long long)json_num(ev, "steps",
	    0));
	if (reason != NULL && strcmp(reason, "error") == 0)
		otlp_status_error(span, "the run ended in an error");
	otlp_add(spans, span);
	t->run_open = 0;
}

/* The events spans are made of; the rest (tool.output...) cost nothing. */
static int
otlp_wants(const char *type)
{
	static const char	*types[] = { "user.message", "assistant.message",
	    "tool.call", "tool.finished", "run.finished", "model.usage",
	    "model.changed" };
	size_t			 i;

	for (i = 0; type != NULL && i < nitems(types); i++) {
		if (strcmp(type, types[i]) == 0)
			return 1;
	}
	return 0;
}

void
otlp_trace_feed(struct otlp_trace *t, const cJSON *ev, cJSON *spans)
{
	const char		*type = json_str(ev, "type"), *s;
	uint64_t		 now;
	struct otlp_call	*c;

	if (!otlp_wants(type) || (now = otlp_time(ev)) == 0)
		return;
	if (strcmp(type, "model.changed") == 0 &&
	    (s = json_str(ev, "model")) != NULL) {
		free(t->model);
		t->model = xstrdup(s);
	}
	/* A turn opens a run; a summary asked for by hand does not. */
	if (!t->run_open && (strcmp(type, "user.message") == 0 ||
	    strcmp(type, "assistant.message") == 0 ||
	    strcmp(type, "tool.call") == 0 ||
	    (strcmp(type, "model.usage") == 0 &&
	    json_str(ev, "purpose") == NULL)))
		otlp_run_open(t, ev, now);

	if (strcmp(type, "model.usage") == 0) {
		if (!t->run_open) {
			/* Its own trace, as a root span. */
			memset(t->trace_id, 0, sizeof t->trace_id);
			otlp_id(t, "trace", (uint64_t)json_num(ev, "seq", 0),
			    json_str(ev, "ts"), t->trace_id,
			    sizeof t->trace_id);
		}
		otlp_add(spans, otlp_model_span(t, ev, now));
	} else if (strcmp(type, "tool.call") == 0 && t->run_open &&
	    (s = json_str(ev, "call_id")) != NULL) {
		c = xcalloc(1, sizeof *c);
		c->id = xstrdup(s);
		c->name = xstrdup(json_str(ev, "name") != NULL ?
		    json_str(ev, "name") : "?");
		c->start = now;
		c->seq = (uint64_t)json_num(ev, "seq", 0);
		c->next = t->calls;
		t->calls = c;
	} else if (strcmp(type, "tool.finished") == 0 &&
	    (c = otlp_call_take(t, json_str(ev, "call_id"))) != NULL) {
		otlp_add(spans, otlp_tool_span(t, c, ev, now));
		otlp_call_free(c);
	} else if (strcmp(type, "run.finished") == 0 && t->run_open)
		otlp_run_close(t, ev, now, spans);
	t->last = now;
}

char *
otlp_request_json(const cJSON *spans)
{
	cJSON	*req, *rs, *res, *attrs, *ss, *scope;
	char	*out;

	req = cJSON_CreateObject();
	rs = cJSON_CreateObject();
	cJSON_AddItemToArray(cJSON_AddArrayToObject(req, "resourceSpans"), rs);
	res = cJSON_AddObjectToObject(rs, "resource");
	attrs = cJSON_AddArrayToObject(res, "attributes");
	otlp_attr_str(attrs, "service.name", "holt");
	otlp_attr_str(attrs, "service.version", PACKAGE_VERSION);
	ss = cJSON_CreateObject();
	cJSON_AddItemToArray(cJSON_AddArrayToObject(rs, "scopeSpans"), ss);
	scope = cJSON_AddObjectToObject(ss, "scope");
	cJSON_AddStringToObject(scope, "name", "holt");
	cJSON_AddStringToObject(scope, "version", PACKAGE_VERSION);
	cJSON_AddItemToObject(ss, "spans", cJSON_Duplicate(spans, 1));
	out = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	return out;
}

char *
otlp_traces_url(const char *endpoint)
{
	size_t	 n = strlen(endpoint);

	while (n > 0 && endpoint[n - 1] == '/')
		n--;
	if (n >= 10 && strncmp(endpoint + n - 10, "/v1/traces", 10) == 0)
		return xstrndup(endpoint, n);
	return xprintf("%.*s/v1/traces", (int)n, endpoint);
}

/* The receiver's answer: kept short, for an error message. */
static size_t
otlp_write_cb(char *data, size_t size, size_t n, void *arg)
{
	struct buf	*b = arg;

	if (b->len < 512)
		buf_add(b, data, size * n < 512 ? size * n : 512);
	return size * n;
}

int
otlp_post(const char *url, const char *body, long connect_s, long timeout_s,
    char **cause)
{
	CURL			*c;
	struct curl_slist	*h = NULL;
	char			 err[CURL_ERROR_SIZE];
	struct buf		 reply = BUF_INIT;
	CURLcode		 cc;
	long			 status = 0;

	if (dynlib_load_curl(cause) != 0)
		return -1;
	if ((c = curl_easy_init()) == NULL) {
		*cause = xstrdup("libcurl: cannot start a request");
		return -1;
	}
	err[0] = '\0';
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "User-Agent: holt/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	dynlib_curl_easy_defaults(c, timeout_s, err);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, connect_s);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, otlp_write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &reply);
	cc = curl_easy_perform(c);
	if (cc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (cc != CURLE_OK)
		*cause = xprintf("'%s': %s", url, *err != '\0' ? err :
		    curl_easy_strerror(cc));
	else if (status < 200 || status > 299)
		*cause = xprintf("'%s': HTTP %ld %.200s", url, status,
		    buf_str(&reply));
	buf_release(&reply);
	return cc == CURLE_OK && status >= 200 && status <= 299 ? 0 : -1;
}
