/*
 * model.c: model providers (model.h): the request life cycle, HTTP through
 * libcurl's multi interface inside the caller's libevent loop, retries with
 * backoff, timeouts, error classification and the script: provider's
 * replay.
 *
 * Each struct model owns one curl multi handle bound to one event_base, so
 * connections are reused between the requests of a conversation. Nothing
 * here blocks: curl tells us which sockets and timeouts to watch
 * (CURLMOPT_SOCKETFUNCTION, CURLMOPT_TIMERFUNCTION) and we call
 * curl_multi_socket_action when libevent says they are ready.
 *
 * User callbacks are never called from inside model_request, and done and
 * error are called from a zero timer, outside curl, so a callback may start
 * the next request, cancel any request or free the model. Only delta is
 * called while curl is delivering data; a cancel from there is completed by
 * a zero timer. The curl build must resolve names asynchronously (Debian's
 * does, with threads), or a DNS lookup would stall the loop.
 */
#include <sys/time.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "model-int.h"
#include "dynlib-curl.h"

#define MODEL_ERRBODY_MAX	(64U * 1024)
#define MODEL_WAIT_CAP_MS	30000
#define MODEL_RETRY_AFTER_CAP_MS 120000
#define MODEL_MAX_TOKENS	8192
#define MODEL_SCRIPT_IN		100	/* usage when a turn gives none */
#define MODEL_SCRIPT_OUT	20

struct model {
	enum model_kind	 kind;
	char		*spec;
	char		*name;		/* model name, or the script's path */
	char		*url;		/* endpoint, "" for script: */
	char		*key;		/* NULL: no key (compatible server) */
	const char	*key_env;	/* OPENAI_API_KEY ... */
	const char	*key_conf;	/* openai_api_key ... */
	struct model_script *script;
	struct curl_slist *headers;
	int		 no_stream_options;	/* the server refused them */

	CURLM		*multi;
	struct event_base *evbase;
	struct event	*timer;
	int		 in_curl;	/* inside curl_multi_socket_action */
	struct model_request *requests;
};

enum model_state {
	REQ_START,		/* wake: start the next attempt */
	REQ_RUNNING,		/* HTTP transfer in curl's hands */
	REQ_SCRIPT,		/* wake: play the chosen script turn */
	REQ_STREAM,		/* wake: stream the next piece of its text */
	REQ_FINISH,		/* wake: call done or error, then free */
	REQ_REAP		/* wake: cancelled, free */
};

struct model_request {
	struct model	*m;
	struct model_cb	 cb;
	void		*arg;
	enum model_state state;
	struct event	*wake;
	struct event	*idle;
	char		*body;		/* HTTP request body */
	cJSON		*messages;	/* script: copies */
	cJSON		*tools;
	int		 attempt;
	int		 cancelled;
	int		 in_cb;		/* inside a user callback */
	int		 in_final;	/* inside done/error */

	/* One attempt. */
	CURL		*easy;
	struct model_stream *ms;
	long		 status;
	long		 retry_after;	/* seconds, -1 if not given */
	struct buf	 errbody;
	int		 got_body;
	int		 idle_fired;
	uint64_t	 started;	/* mono_ms of the attempt */
	enum model_error serr;
	char		*scause;	/* stream error seen while receiving */
	char		 errbuf[CURL_ERROR_SIZE];
	char		*location;	/* where a 3xx points */
	const cJSON	*turn;		/* script: */
	int		 turn_no;
	size_t		 text_off;	/* script: text streamed so far */

	/* The outcome. */
	int		 failed;
	enum model_error err;
	char		*errmsg;
	struct model_reply *reply;
	struct model_reply sreply;	/* script: the reply */
	int		 have_sreply;

	struct model_request *next;
};

static void	model_request_free(struct model_request *);
static void	model_request_unlink(struct model_request *);
static void	model_attempt_done(struct model_request *, CURLcode);
static void	model_strip_stream_options(struct model_request *);

const char *
model_error_name(enum model_error err)
{
	static const char *names[] = { "auth", "not_found", "context", "rate",
	    "server", "network", "timeout", "stream", "script", "cancelled",
	    "other" };

	if ((size_t)err < nitems(names))
		return names[err];
	return "other";
}

const char *
model_spec(struct model *m)
{
	return m->spec;
}

const char *
model_url(struct model *m)
{
	return m->url;
}

/*
 * Replace every run of 6 or more characters that also occurs in the secret
 * (providers echo keys partly: "sk-proj-****abcd"). O(len * secret) with a
 * short message.
 */
char *
model_redact(const char *text, const char *secret)
{
	struct buf	 b = BUF_INIT;
	size_t		 slen, tlen, i, n, best;

	if (text == NULL)
		return xstrdup("");
	if (secret == NULL || (slen = strlen(secret)) == 0)
		return xstrdup(text);
	tlen = strlen(text);
	for (i = 0; i < tlen; ) {
		best = 0;
		for (n = 6; n <= slen && i + n <= tlen; n++) {
			if (memmem(secret, slen, text + i, n) == NULL)
				break;
			best = n;
		}
		if (best == 0 && slen < 6 && i + slen <= tlen &&
		    memcmp(text + i, secret, slen) == 0)
			best = slen;
		if (best != 0) {
			buf_adds(&b, "[redacted]");
			i += best;
		} else
			buf_addc(&b, text[i++]);
	}
	return buf_detach(&b, NULL);
}

/* A short, printable detail from a provider's error body. */
static char *
model_error_detail(const char *body, const char **type, const char **code,
    cJSON **objp)
{
	cJSON		*obj;
	const cJSON	*e;
	const char	*msg = NULL;
	struct buf	 b = BUF_INIT;
	size_t		 i;

	*type = *code = NULL;
	*objp = obj = cJSON_Parse(body != NULL ? body : "");
	utf8_repair_json(obj);
	if (cJSON_IsObject(obj)) {
		e = cJSON_GetObjectItemCaseSensitive(obj, "error");
		if (cJSON_IsObject(e)) {
			msg = json_str(e, "message");
			*type = json_str(e, "type");
			*code = json_str(e, "code");
		} else if (cJSON_IsString(e))
			msg = e->valuestring;
		if (msg == NULL)
			msg = json_str(obj, "message");
		if (msg == NULL)
			msg = json_str(obj, "detail");
	}
	if (msg == NULL)
		msg = body != NULL ? body : "";
	for (i = 0; msg[i] != '\0' && i < 300; i++)
		buf_addc(&b, isprint((unsigned char)msg[i]) ? msg[i] : ' ');
	if (msg[i] != '\0')
		buf_adds(&b, "...");
	if (b.len == 0)
		buf_adds(&b, "no details");
	return buf_detach(&b, NULL);
}

enum model_error
model_http_error(const char *provider, long status, const char *body,
    const char *model, const char *url, char **msg)
{
	const char		*type, *code, *env, *conf;
	char			*detail;
	cJSON			*obj;
	enum model_error	 err;
	int			 context;

	detail = model_error_detail(body, &type, &code, &obj);
	context = (code != NULL && strstr(code, "context_length") != NULL) ||
	    strstr(detail, "context length") != NULL ||
	    strstr(detail, "context_length") != NULL ||
	    strstr(detail, "prompt is too long") != NULL ||
	    strstr(detail, "maximum context") != NULL ||
	    strstr(detail, "context window") != NULL;
	if (strcmp(provider, "anthropic") == 0) {
		env = "ANTHROPIC_API_KEY";
		conf = "anthropic_api_key";
	} else {
		env = "OPENAI_API_KEY";
		conf = "openai_api_key";
	}
	if (status == 401 || status == 403) {
		err = MODEL_ERR_AUTH;
		if (strcmp(provider, "script") == 0)
			*msg = xprintf("script: the API key was refused (HTTP "
			    "%ld: %s)", status, detail);
		else
			*msg = xprintf("%s: the API key was refused (HTTP %ld: "
			    "%s); set %s or %s in holt.conf", provider, status,
			    detail, env, conf);
	} else if (status == 404) {
		err = MODEL_ERR_NOT_FOUND;
		*msg = xprintf("%s: model '%s' not found at %s (HTTP 404: %s)",
		    provider, model, url, detail);
	} else if (context && status >= 400 && status < 500) {
		err = MODEL_ERR_CONTEXT;
		*msg = xprintf("%s: the conversation is too long for model "
		    "'%s' (HTTP %ld: %s)", provider, model, status, detail);
	} else if (status == 429) {
		err = MODEL_ERR_RATE;
		*msg = xprintf("%s: rate limited (HTTP 429: %s)", provider,
		    detail);
	} else if (status >= 500 || status == 408) {
		err = MODEL_ERR_SERVER;
		*msg = xprintf("%s: server error (HTTP %ld: %s)", provider,
		    status, detail);
	} else {
		err = MODEL_ERR_OTHER;
		*msg = xprintf("%s: the request was refused (HTTP %ld: %s)",
		    provider, status, detail);
	}
	(void)type;
	cJSON_Delete(obj);
	free(detail);
	return err;
}

static int
model_env_int(const char *name, int dflt, int min, int max)
{
	const char	*s = getenv(name);
	char		*end;
	long		 v;

	if (s == NULL || *s == '\0')
		return dflt;
	v = strtol(s, &end, 10);
	if (*end != '\0' || v < min || v > max)
		return dflt;
	return (int)v;
}

/* A config duration in seconds (fractions allowed), in ms; 0 is none. */
static long
model_conf_ms(const char *key)
{
	const char	*s = config_get(key);
	double		 v;

	if (s == NULL || *s == '\0')
		return 0;
	v = strtod(s, NULL);
	if (v <= 0)
		return 0;
	return (long)(v * 1000);
}

static void
model_tv(struct timeval *tv, long ms)
{
	tv->tv_sec = ms / 1000;
	tv->tv_usec = (ms % 1000) * 1000;
}

static void
model_wake_in(struct model_request *req, enum model_state state, long ms)
{
	struct timeval	 tv;

	req->state = state;
	model_tv(&tv, ms);
	evtimer_add(req->wake, &tv);
}

static void
model_finish(struct model_request *req, enum model_error err, char *msg)
{
	req->failed = 1;
	req->err = err;
	free(req->errmsg);
	req->errmsg = model_redact(msg, req->m->key);
	free(msg);
	model_wake_in(req, REQ_FINISH, 0);
}

static void
model_finish_done(struct model_request *req, struct model_reply *reply)
{
	req->reply = reply;
	model_wake_in(req, REQ_FINISH, 0);
}

/* Wait and try again, or give up after the last try. */
static void
model_retry(struct model_request *req, enum model_error err, char *msg)
{
	int	 tries, base, wait, half;
	char	*why;

	tries = model_env_int("HOLT_MODEL_TRIES", 5, 1, 100);
	if (req->attempt >= tries) {
		why = xprintf("%s; gave up after %d tries", msg, req->attempt);
		free(msg);
		model_finish(req, err, why);
		return;
	}
	if (req->retry_after * 1000 > MODEL_RETRY_AFTER_CAP_MS) {
		/* A quota for the day, not a hiccup: say so now. */
		why = xprintf("%s; the server asks to wait %ld s before "
		    "trying again", msg, req->retry_after);
		free(msg);
		model_finish(req, err, why);
		return;
	}
	if (req->retry_after >= 0)
		wait = (int)req->retry_after * 1000;
	else {
		base = model_env_int("HOLT_MODEL_BACKOFF_MS", 1000, 0,
		    MODEL_WAIT_CAP_MS);
		wait = base;
		for (tries = 1; tries < req->attempt && wait < MODEL_WAIT_CAP_MS;
		    tries++)
			wait *= 2;
		if (wait > MODEL_WAIT_CAP_MS)
			wait = MODEL_WAIT_CAP_MS;
		/* Equal jitter: half fixed, half random. */
		half = wait / 2;
		wait = half + (half > 0 ? (int)arc4random_uniform(half + 1) : 0);
	}
	why = model_redact(msg, req->m->key);
	free(msg);
	model_wake_in(req, REQ_START, wait);
	if (req->cb.retry != NULL) {
		req->in_cb++;
		req->cb.retry(req->arg, why, wait);
		req->in_cb--;
	}
	free(why);
	/* A cancel from the callback has scheduled the reap: nothing more. */
}

static void
model_req_delta(void *arg, const char *text, size_t len)
{
	struct model_request	*req = arg;

	if (req->cancelled || req->cb.delta == NULL)
		return;
	req->in_cb++;
	req->cb.delta(req->arg, text, len);
	req->in_cb--;
}

/* curl glue ------------------------------------------------------------ */

static void
model_check_multi(struct model *m)
{
	struct model_request	*req;
	CURLMsg			*msg;
	CURLcode		 code;
	int			 left;
	char			*p;

	while ((msg = curl_multi_info_read(m->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		code = msg->data.result;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &p);
		req = (struct model_request *)p;
		if (req->cancelled)
			continue;	/* the reap removes it */
		curl_easy_getinfo(req->easy, CURLINFO_RESPONSE_CODE,
		    &req->status);
		free(req->location);
		req->location = NULL;
		if (curl_easy_getinfo(req->easy, CURLINFO_REDIRECT_URL, &p) ==
		    CURLE_OK && p != NULL)
			req->location = xstrdup(p);
		curl_multi_remove_handle(m->multi, req->easy);
		curl_easy_cleanup(req->easy);
		req->easy = NULL;
		evtimer_del(req->idle);
		model_attempt_done(req, code);
	}
}

static void
model_socket_action(struct model *m, curl_socket_t fd, int flags)
{
	int	 running;

	m->in_curl++;
	curl_multi_socket_action(m->multi, fd, flags, &running);
	m->in_curl--;
	model_check_multi(m);
}

static void
model_event_cb(evutil_socket_t fd, short what, void *arg)
{
	int	 flags = 0;

	if (what & EV_READ)
		flags |= CURL_CSELECT_IN;
	if (what & EV_WRITE)
		flags |= CURL_CSELECT_OUT;
	model_socket_action(arg, fd, flags);
}

static void
model_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	model_socket_action(arg, CURL_SOCKET_TIMEOUT, 0);
}

static int
model_curl_socket(CURL *e, curl_socket_t s, int what, void *userp,
    void *socketp)
{
	struct model	*m = userp;
	struct event	*ev = socketp;
	short		 kind;

	if (what == CURL_POLL_REMOVE) {
		if (ev != NULL) {
			event_free(ev);
			curl_multi_assign(m->multi, s, NULL);
		}
		return 0;
	}
	kind = EV_PERSIST;
	if (what & CURL_POLL_IN)
		kind |= EV_READ;
	if (what & CURL_POLL_OUT)
		kind |= EV_WRITE;
	if (ev != NULL) {
		event_del(ev);
		event_assign(ev, m->evbase, s, kind, model_event_cb, m);
	} else {
		ev = event_new(m->evbase, s, kind, model_event_cb, m);
		curl_multi_assign(m->multi, s, ev);
	}
	event_add(ev, NULL);
	return 0;
}

static int
model_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct model	*m = userp;
	struct timeval	 tv;

	if (timeout_ms < 0) {
		evtimer_del(m->timer);
		return 0;
	}
	model_tv(&tv, timeout_ms);
	evtimer_add(m->timer, &tv);
	return 0;
}

static void
model_bind(struct model *m, struct event_base *base)
{
	if (m->multi != NULL && m->evbase == base)
		return;
	if (m->requests != NULL && m->evbase != base)
		BUG();	/* one event_base per model */
	if (m->multi != NULL) {
		curl_multi_cleanup(m->multi);
		event_free(m->timer);
	}
	m->evbase = base;
	m->multi = curl_multi_init();
	if (m->multi == NULL)
		fatalx("curl_multi_init failed");
	m->timer = evtimer_new(base, model_timer_cb, m);
	curl_multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, model_curl_socket);
	curl_multi_setopt(m->multi, CURLMOPT_SOCKETDATA, m);
	curl_multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, model_curl_timer);
	curl_multi_setopt(m->multi, CURLMOPT_TIMERDATA, m);
}

static size_t
model_write_cb(char *ptr, size_t size, size_t n, void *arg)
{
	struct model_request	*req = arg;
	size_t			 len = size * n;
	struct timeval		 tv;
	long			 idle;

	if (req->cancelled)
		return 0;
	if ((idle = model_conf_ms("idle_timeout")) > 0) {
		model_tv(&tv, idle);
		evtimer_add(req->idle, &tv);
	}
	if (req->status == 0)
		curl_easy_getinfo(req->easy, CURLINFO_RESPONSE_CODE,
		    &req->status);
	req->got_body = 1;
	if (req->status < 200 || req->status >= 300) {
		if (req->errbody.len < MODEL_ERRBODY_MAX)
			buf_add(&req->errbody, ptr, len);
		return len;
	}
	if (model_stream_feed(req->ms, ptr, len, &req->serr,
	    &req->scause) != 0)
		return 0;
	return req->cancelled ? 0 : len;
}

static size_t
model_header_cb(char *ptr, size_t size, size_t n, void *arg)
{
	struct model_request	*req = arg;
	size_t			 len = size * n, i;
	char			 num[16];
	struct timeval		 tv;
	long			 idle;

	if ((idle = model_conf_ms("idle_timeout")) > 0) {
		model_tv(&tv, idle);
		evtimer_add(req->idle, &tv);
	}
	if (len >= 5 && strncmp(ptr, "HTTP/", 5) == 0) {
		req->retry_after = -1;	/* a new response (after 100 ...) */
		req->status = 0;
	} else if (len > 12 && strncasecmp(ptr, "retry-after:", 12) == 0) {
		for (i = 12; i < len && ptr[i] == ' '; i++)
			;
		if (i < len && isdigit((unsigned char)ptr[i]) &&
		    len - i < sizeof num) {
			memcpy(num, ptr + i, len - i);
			num[len - i] = '\0';
			req->retry_after = strtol(num, NULL, 10);
		}
	}
	return len;
}

static void
model_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct model_request	*req = arg;

	if (req->cancelled || req->easy == NULL)
		return;
	req->idle_fired = 1;
	curl_multi_remove_handle(req->m->multi, req->easy);
	curl_easy_cleanup(req->easy);
	req->easy = NULL;
	model_attempt_done(req, CURLE_OK);
}

static void
model_start_http(struct model_request *req)
{
	struct model	*m = req->m;
	struct timeval	 tv;
	long		 total, idle;
	CURL		*e;

	req->attempt++;
	req->status = 0;
	req->retry_after = -1;
	buf_reset(&req->errbody);
	req->got_body = 0;
	req->idle_fired = 0;
	req->started = mono_ms();
	free(req->scause);
	req->scause = NULL;
	model_stream_free(req->ms);
	req->ms = model_stream_new(m->kind, model_req_delta, req);
	req->errbuf[0] = '\0';

	if ((e = curl_easy_init()) == NULL)
		fatalx("curl_easy_init failed");
	req->easy = e;
	curl_easy_setopt(e, CURLOPT_URL, m->url);
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(req->body));
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, m->headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, model_write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, req);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, model_header_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, req);
	curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)req);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, req->errbuf);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "holt/" PACKAGE_VERSION);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 30000L);
	if ((total = model_conf_ms("request_timeout")) > 0)
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, total);
	if ((idle = model_conf_ms("idle_timeout")) > 0) {
		model_tv(&tv, idle);
		evtimer_add(req->idle, &tv);
	}
	log_debug("model: %s: try %d: POST %s (%zu bytes)", m->spec,
	    req->attempt, m->url, strlen(req->body));
	req->state = REQ_RUNNING;
	if (curl_multi_add_handle(m->multi, e) != CURLM_OK)
		fatalx("curl_multi_add_handle failed");
}

static void
model_attempt_done(struct model_request *req, CURLcode code)
{
	struct model		*m = req->m;
	const char		*prov = model_kind_name(m->kind);
	struct model_reply	*reply;
	enum model_error	 err;
	char			*msg = NULL;

	log_debug("model: %s: try %d: HTTP %ld, curl %d, %lu events, %llu ms",
	    m->spec, req->attempt, req->status, (int)code, req->ms != NULL ?
	    req->ms->nevents : 0UL, (unsigned long long)(mono_ms() -
	    req->started));
	if (req->scause != NULL) {
		/*
		 * An overload or rate error reported in the stream before any
		 * of the reply came (Anthropic's overloaded_error) is retried
		 * like the HTTP status would be: nothing was shown yet.
		 */
		if ((req->serr == MODEL_ERR_SERVER ||
		    req->serr == MODEL_ERR_RATE) && req->ms != NULL &&
		    req->ms->text.len == 0 && req->ms->nslots == 0) {
			model_retry(req, req->serr, xstrdup(req->scause));
			return;
		}
		model_finish(req, req->serr, xstrdup(req->scause));
		return;
	}
	if (req->idle_fired) {
		model_finish(req, MODEL_ERR_TIMEOUT, xprintf("%s: no data from "
		    "%s for %s s (idle_timeout)", prov, m->url,
		    config_get("idle_timeout")));
		return;
	}
	if (code == CURLE_OPERATION_TIMEDOUT && (model_conf_ms(
	    "request_timeout") == 0 || mono_ms() - req->started + 100 >=
	    (uint64_t)model_conf_ms("request_timeout"))) {
		/* Not retried: the whole request_timeout is spent. (Else it
		 * was the connect timeout, retried below.) */
		model_finish(req, MODEL_ERR_TIMEOUT, xprintf("%s: no complete "
		    "reply from %s within %s s (request_timeout)", prov, m->url,
		    config_get("request_timeout")));
		return;
	}
	if (code != CURLE_OK) {
		if (req->got_body && req->status >= 200 && req->status < 300) {
			model_finish(req, MODEL_ERR_STREAM, xprintf("%s: "
			    "malformed stream: the connection was lost after "
			    "%lu events: %s", prov, req->ms != NULL ?
			    req->ms->nevents : 0UL, req->errbuf[0] != '\0' ?
			    req->errbuf : curl_easy_strerror(code)));
			return;
		}
		model_retry(req, MODEL_ERR_NETWORK, xprintf("%s: cannot reach "
		    "%s: %s", prov, m->url, req->errbuf[0] != '\0' ?
		    req->errbuf : curl_easy_strerror(code)));
		return;
	}
	if (req->status >= 200 && req->status < 300) {
		if (model_stream_finish(req->ms, &reply, &err, &msg) != 0)
			model_finish(req, err, msg);
		else
			model_finish_done(req, reply);
		return;
	}
	if (m->kind == MODEL_OPENAI && req->status == 400 &&
	    !m->no_stream_options &&
	    strstr(buf_str(&req->errbody), "stream_options") != NULL) {
		/*
		 * An older compatible server that does not know
		 * stream_options: ask again without it (and no usage).
		 */
		m->no_stream_options = 1;
		model_strip_stream_options(req);
		model_wake_in(req, REQ_START, 0);
		return;
	}
	if (req->status >= 300 && req->status < 400) {
		model_finish(req, MODEL_ERR_OTHER, xprintf("%s: %s redirects "
		    "elsewhere (HTTP %ld%s%s); set base_url to the final "
		    "address", prov, m->url, req->status,
		    req->location != NULL ? " to " : "",
		    req->location != NULL ? req->location : ""));
		return;
	}
	err = model_http_error(prov, req->status, buf_str(&req->errbody),
	    m->name, m->url, &msg);
	if (req->status == 429 || req->status >= 500 || req->status == 408)
		model_retry(req, err, msg);
	else
		model_finish(req, err, msg);
}

static void
model_strip_stream_options(struct model_request *req)
{
	cJSON	*body;

	if ((body = cJSON_Parse(req->body)) == NULL)
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(body, "stream_options");
	free(req->body);
	req->body = json_print(body);
	cJSON_Delete(body);
}

/* script: -------------------------------------------------------------- */

/* Stream the turn's text, a piece per chunk_delay_ms, then answer. */
static void
model_script_reply(struct model_request *req)
{
	struct model_reply	*r = &req->sreply;
	struct model_script	*sc = req->m->script;
	const cJSON		*calls, *c, *usage, *args;
	const char		*text, *id, *name;
	cJSON			*out, *o;
	size_t			 len, step;
	int			 i = 0, chunk, delay;
	char			*gen;

	text = json_str(req->turn, "text");
	if (text == NULL)
		text = "";
	len = strlen(text);
	chunk = model_script_num(sc, req->turn, "chunk_bytes", 0);
	delay = model_script_num(sc, req->turn, "chunk_delay_ms", 0);
	step = chunk > 0 ? (size_t)chunk : (len > 0 ? len : 1);
	while (req->text_off < len) {
		model_req_delta(req, text + req->text_off,
		    len - req->text_off < step ? len - req->text_off : step);
		if (req->cancelled)
			return;
		req->text_off += step;
		if (delay > 0 && req->text_off < len) {
			model_wake_in(req, REQ_STREAM, delay);
			return;
		}
	}

	out = cJSON_CreateArray();
	calls = cJSON_GetObjectItemCaseSensitive(req->turn, "tool_calls");
	cJSON_ArrayForEach(c, calls) {
		i++;
		o = cJSON_CreateObject();
		if ((id = json_str(c, "id")) != NULL)
			cJSON_AddStringToObject(o, "id", id);
		else {
			gen = xprintf("call_%d_%d", req->turn_no, i);
			cJSON_AddStringToObject(o, "id", gen);
			free(gen);
		}
		name = json_str(c, "name");
		cJSON_AddStringToObject(o, "name", name != NULL ? name : "");
		args = cJSON_GetObjectItemCaseSensitive(c, "arguments");
		if (cJSON_IsObject(args))
			cJSON_AddItemToObject(o, "arguments",
			    cJSON_Duplicate(args, 1));
		else
			cJSON_AddObjectToObject(o, "arguments");
		cJSON_AddItemToArray(out, o);
	}
	usage = cJSON_GetObjectItemCaseSensitive(req->turn, "usage");
	r->text = xstrdup(text);
	r->tool_calls = out;
	r->input_tokens = (long long)json_num(usage, "input_tokens",
	    MODEL_SCRIPT_IN);
	r->output_tokens = (long long)json_num(usage, "output_tokens",
	    MODEL_SCRIPT_OUT);
	r->stop_reason = xstrdup(i > 0 ? "tool_use" : "end_turn");
	req->have_sreply = 1;
	model_finish_done(req, r);
}

static void
model_script_play(struct model_request *req)
{
	const cJSON	*fail, *b;
	const char	*broken, *text, *kind;
	char		*why, *body, *msg;
	enum model_error err;
	long		 status;
	size_t		 half;

	if ((why = model_script_expect(req->turn, req->messages,
	    req->tools)) != NULL) {
		model_finish(req, MODEL_ERR_SCRIPT, xprintf("script '%s': turn "
		    "%d: %s", model_script_path(req->m->script), req->turn_no,
		    why));
		free(why);
		return;
	}
	if ((fail = cJSON_GetObjectItemCaseSensitive(req->turn, "fail")) !=
	    NULL) {
		status = (long)json_num(fail, "status", 500);
		req->retry_after = (long)json_num(fail, "retry_after_s", -1);
		b = cJSON_GetObjectItemCaseSensitive(fail, "body");
		kind = json_str(fail, "kind");
		if (cJSON_IsString(b))
			body = xstrdup(b->valuestring);
		else if (b != NULL)
			body = json_print(b);
		else if (kind != NULL && strcmp(kind, "context_length") == 0)
			body = xstrdup("{\"error\":{\"message\":\"maximum "
			    "context length exceeded\",\"code\":"
			    "\"context_length_exceeded\"}}");
		else
			body = xprintf("{\"error\":{\"message\":\"scripted "
			    "failure (turn %d)\"}}", req->turn_no);
		err = model_http_error("script", status, body, req->m->name,
		    "script", &msg);
		free(body);
		if (status == 429 || status >= 500 || status == 408)
			model_retry(req, err, msg);
		else
			model_finish(req, err, msg);
		return;
	}
	if ((broken = json_str(req->turn, "broken")) != NULL) {
		/* As over HTTP: some text may have streamed before the cut. */
		text = json_str(req->turn, "text");
		if (text != NULL && (half = strlen(text) / 2) > 0) {
			model_req_delta(req, text, half);
			if (req->cancelled)
				return;
		}
		model_finish(req, MODEL_ERR_STREAM, xprintf("script: malformed "
		    "stream: turn %d is broken (%s)", req->turn_no, broken));
		return;
	}
	req->text_off = 0;
	model_script_reply(req);
}

static void
model_start_script(struct model_request *req)
{
	char	*cause = NULL;
	long	 delay;

	req->attempt++;
	req->retry_after = -1;
	req->turn = model_script_next(req->m->script, req->messages,
	    &req->turn_no, &cause);
	if (req->turn == NULL) {
		model_finish(req, MODEL_ERR_SCRIPT, cause);
		return;
	}
	delay = (long)json_num(req->turn, "delay_ms", 0);
	if (delay > 0)
		model_wake_in(req, REQ_SCRIPT, delay);
	else
		model_script_play(req);
}

/* requests ------------------------------------------------------------- */

static void
model_wake_cb(evutil_socket_t fd, short what, void *arg)
{
	struct model_request	*req = arg;
	struct model_cb		 cb;

	switch (req->state) {
	case REQ_START:
		if (req->m->kind == MODEL_SCRIPT)
			model_start_script(req);
		else
			model_start_http(req);
		break;
	case REQ_SCRIPT:
		model_script_play(req);
		break;
	case REQ_STREAM:
		model_script_reply(req);
		break;
	case REQ_FINISH:
		/*
		 * Off the model's list first: the callback may start the next
		 * request, or even free the model.
		 */
		model_request_unlink(req);
		cb = req->cb;
		req->in_final = 1;
		if (req->failed) {
			if (cb.error != NULL)
				cb.error(req->arg, req->err, req->errmsg);
		} else if (cb.done != NULL)
			cb.done(req->arg, req->reply);
		model_request_free(req);
		break;
	case REQ_REAP:
		model_request_free(req);
		break;
	case REQ_RUNNING:
		break;
	}
}

struct model_request *
model_request(struct model *m, struct event_base *base,
    const cJSON *messages, const cJSON *tools, const struct model_cb *cb,
    void *arg)
{
	struct model_request	*req;
	cJSON			*body;
	const char		*mt;
	long long		 max_tokens;

	req = xcalloc(1, sizeof *req);
	req->m = m;
	req->cb = *cb;
	req->arg = arg;
	req->retry_after = -1;
	buf_init(&req->errbody);
	if (m->kind == MODEL_SCRIPT) {
		req->messages = messages != NULL ?
		    cJSON_Duplicate(messages, 1) : cJSON_CreateArray();
		req->tools = tools != NULL ? cJSON_Duplicate(tools, 1) :
		    cJSON_CreateArray();
		if (m->evbase != base) {
			if (m->requests != NULL)
				BUG();
			m->evbase = base;
		}
	} else {
		model_bind(m, base);
		if (m->kind == MODEL_OPENAI) {
			body = model_openai_body(m->name, messages, tools);
			if (m->no_stream_options)
				cJSON_DeleteItemFromObjectCaseSensitive(body,
				    "stream_options");
		}
		else {
			mt = config_get("max_tokens");
			max_tokens = mt != NULL ? strtoll(mt, NULL, 10) : 0;
			if (max_tokens <= 0)
				max_tokens = MODEL_MAX_TOKENS;
			body = model_anthropic_body(m->name, messages, tools,
			    max_tokens);
		}
		req->body = json_print(body);
		cJSON_Delete(body);
	}
	req->wake = evtimer_new(base, model_wake_cb, req);
	req->idle = evtimer_new(base, model_idle_cb, req);
	req->next = m->requests;
	m->requests = req;
	model_wake_in(req, REQ_START, 0);
	return req;
}

static void
model_request_unlink(struct model_request *req)
{
	struct model_request	**pp;

	if (req->m == NULL)
		return;
	for (pp = &req->m->requests; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == req) {
			*pp = req->next;
			break;
		}
	}
	if (req->easy != NULL) {
		curl_multi_remove_handle(req->m->multi, req->easy);
		curl_easy_cleanup(req->easy);
		req->easy = NULL;
	}
	req->m = NULL;
}

static void
model_request_free(struct model_request *req)
{
	model_request_unlink(req);
	event_free(req->wake);
	event_free(req->idle);
	model_stream_free(req->ms);
	buf_release(&req->errbody);
	free(req->scause);
	free(req->errmsg);
	free(req->location);
	free(req->body);
	cJSON_Delete(req->messages);
	cJSON_Delete(req->tools);
	if (req->have_sreply) {
		free(req->sreply.text);
		cJSON_Delete(req->sreply.tool_calls);
		free(req->sreply.stop_reason);
	}
	free(req);
}

void
model_request_cancel(struct model_request *req)
{
	if (req == NULL || req->in_final || req->cancelled)
		return;
	req->cancelled = 1;
	memset(&req->cb, 0, sizeof req->cb);
	if (req->in_cb > 0 || req->m->in_curl > 0) {
		/* Inside a callback or inside curl: finish from the loop. */
		evtimer_del(req->idle);
		model_wake_in(req, REQ_REAP, 0);
		return;
	}
	model_request_free(req);
}

/* models --------------------------------------------------------------- */

struct model *
model_new(const char *spec, const char *base_url, char **cause)
{
	static int		 curl_ready;
	struct model		*m;
	const char		*colon, *dflt, *key, *path;
	char			*prov, *base, *h;
	size_t			 n;

	if (spec == NULL || *spec == '\0') {
		*cause = xstrdup("no model given; use --model PROVIDER:NAME, "
		    "e.g. openai:gpt-4.1, or set model in holt.conf");
		return NULL;
	}
	if ((colon = strchr(spec, ':')) == NULL) {
		*cause = xprintf("model '%s': give it as PROVIDER:NAME, e.g. "
		    "openai:%s or anthropic:%s", spec, spec, spec);
		return NULL;
	}
	prov = xstrndup(spec, colon - spec);
	if (colon[1] == '\0') {
		*cause = xprintf("model '%s': no model name after '%s:'", spec,
		    prov);
		free(prov);
		return NULL;
	}
	m = xcalloc(1, sizeof *m);
	m->spec = xstrdup(spec);
	m->name = xstrdup(colon + 1);
	if (strcmp(prov, "script") == 0) {
		free(prov);
		m->kind = MODEL_SCRIPT;
		m->url = xstrdup("");
		if ((m->script = model_script_load(m->name, cause)) == NULL) {
			model_free(m);
			return NULL;
		}
		return m;
	}
	if (strcmp(prov, "openai") == 0) {
		m->kind = MODEL_OPENAI;
		dflt = "https://api.openai.com/v1";
		path = "/chat/completions";
		m->key_env = "OPENAI_API_KEY";
		m->key_conf = "openai_api_key";
	} else if (strcmp(prov, "anthropic") == 0) {
		m->kind = MODEL_ANTHROPIC;
		dflt = "https://api.anthropic.com";
		path = "/v1/messages";
		m->key_env = "ANTHROPIC_API_KEY";
		m->key_conf = "anthropic_api_key";
	} else {
		*cause = xprintf("model '%s': unknown provider '%s' (use "
		    "openai:MODEL, anthropic:MODEL or script:FILE)", spec,
		    prov);
		free(prov);
		model_free(m);
		return NULL;
	}
	free(prov);

	if (base_url == NULL || *base_url == '\0')
		base_url = config_get("base_url");
	if (base_url == NULL || *base_url == '\0')
		base_url = dflt;
	if (strncmp(base_url, "http://", 7) != 0 &&
	    strncmp(base_url, "https://", 8) != 0) {
		*cause = xprintf("base URL '%s': not an http:// or https:// "
		    "URL", base_url);
		model_free(m);
		return NULL;
	}
	base = xstrdup(base_url);
	n = strlen(base);
	while (n > 0 && base[n - 1] == '/')
		base[--n] = '\0';
	m->url = xprintf("%s%s", base, path);

	key = getenv(m->key_env);
	if (key == NULL || *key == '\0')
		key = config_get(m->key_conf);
	if (key != NULL && *key != '\0')
		m->key = xstrdup(key);
	else if (strcmp(base_url, dflt) == 0) {
		*cause = xprintf("%s: no API key; set %s or %s in holt.conf",
		    model_kind_name(m->kind), m->key_env, m->key_conf);
		free(base);
		model_free(m);
		return NULL;
	}
	free(base);

	if (!curl_ready) {
		if (dynlib_load_curl(cause) != 0) {
			model_free(m);
			return NULL;
		}
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
			fatalx("curl_global_init failed");
		curl_ready = 1;
	}
	m->headers = curl_slist_append(m->headers,
	    "Content-Type: application/json");
	m->headers = curl_slist_append(m->headers, "Accept: text/event-stream");
	m->headers = curl_slist_append(m->headers, "Expect:");
	if (m->kind == MODEL_ANTHROPIC) {
		m->headers = curl_slist_append(m->headers,
		    "anthropic-version: 2023-06-01");
		if (m->key != NULL) {
			h = xprintf("x-api-key: %s", m->key);
			m->headers = curl_slist_append(m->headers, h);
			explicit_bzero(h, strlen(h));
			free(h);
		}
	} else if (m->key != NULL) {
		h = xprintf("Authorization: Bearer %s", m->key);
		m->headers = curl_slist_append(m->headers, h);
		explicit_bzero(h, strlen(h));
		free(h);
	}
	return m;
}

void
model_free(struct model *m)
{
	struct curl_slist	*l;
	struct model_request	*req;

	if (m == NULL)
		return;
	while ((req = m->requests) != NULL) {
		m->requests = req->next;
		if (req->easy != NULL) {
			curl_multi_remove_handle(m->multi, req->easy);
			curl_easy_cleanup(req->easy);
			req->easy = NULL;
		}
		req->m = NULL;
		model_request_free(req);
	}
	if (m->multi != NULL)
		curl_multi_cleanup(m->multi);
	if (m->timer != NULL)
		event_free(m->timer);
	for (l = m->headers; l != NULL; l = l->next)
		explicit_bzero(l->data, strlen(l->data));
	if (m->headers != NULL)		/* a script model never loads libcurl */
		curl_slist_free_all(m->headers);
	if (m->key != NULL) {
		explicit_bzero(m->key, strlen(m->key));
		free(m->key);
	}
	model_script_free(m->script);
	free(m->spec);
	free(m->name);
	free(m->url);
	free(m);
}

double
model_price(const char *spec, long long in, long long cached, long long out)
{
	const char	*v;
	char		*key;
	double		 pin, pout, pcached;
	int		 n;

	key = xprintf("price.%s", spec);
	v = config_get(key);
	free(key);
	if (v == NULL || (n = sscanf(v, "%lf %lf %lf", &pin, &pout,
	    &pcached)) < 2)
		return 0;
	if (n < 3)
		pcached = pin;
	if (cached > in)
		cached = in;
	return ((double)(in - cached) * pin + (double)cached * pcached +
	    (double)out * pout) / 1e6;
}
