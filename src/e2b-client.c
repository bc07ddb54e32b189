/*
 * e2b-client.c: the blocking E2B API client (e2b-client.h). One libcurl
 * easy handle per call: a call is a round trip to a remote server, so the
 * handle's set-up is not what it costs. The key and the access token go
 * only into request headers; no message built here contains them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "dynlib-curl.h"
#include "e2b-client.h"
#include "sandbox.h"

#define E2B_CALL_TIMEOUT_S	120	/* one control or unary call */
#define E2B_FILE_MAX		(256U * 1024 * 1024)
#define E2B_FRAME_MAX		(16U * 1024 * 1024)

struct e2b_client {
	char	*api_url;	/* no trailing slash */
	char	*sandbox_url;	/* NULL: per sandbox, from its domain */
	char	*domain;	/* default "e2b.app" */
	char	*key;
};

/* One HTTP exchange. */
struct e2b_http {
	const char	*method;
	char		*url;
	struct curl_slist *headers;
	const void	*body;
	size_t		 body_len;
	long		 timeout_s;	/* 0: none (streams) */
	size_t		 max;		/* of the reply's body */
	/* A stream: each envelope's JSON goes to cb. */
	e2b_envd_msg_cb	 cb;
	void		*cb_arg;
	int		 cb_ret;
	int		 ended;		/* end-of-stream envelope seen */
	int		 delivered;	/* a message went to cb */
	uint64_t	 ticked_ms;
	char		*end_error;	/* its error, if any */

	long		 status;
	struct buf	 reply;
	int		 too_big;
};

static char *
env_or_conf(const char *env, const char *key)
{
	const char	*v;

	if ((v = getenv(env)) != NULL && *v != '\0')
		return xstrdup(v);
	if ((v = config_get(key)) != NULL && *v != '\0')
		return xstrdup(v);
	return NULL;
}

static char *
strip_slash(char *s)
{
	size_t	 n;

	if (s != NULL && (n = strlen(s)) > 0 && s[n - 1] == '/')
		s[n - 1] = '\0';
	return s;
}

struct e2b_client *
e2b_client_new(const char *api_url, const char *sandbox_url, char **cause)
{
	struct e2b_client	*c;
	char			*key;
	const char		*d;

	if ((key = env_or_conf("E2B_API_KEY", "e2b_api_key")) == NULL) {
		*cause = xstrdup("no E2B key: set E2B_API_KEY (or e2b_api_key "
		    "in holt.conf)");
		return NULL;
	}
	if (dynlib_load_curl(cause) != 0) {
		free(key);
		return NULL;
	}
	c = xcalloc(1, sizeof *c);
	c->key = key;
	if (api_url != NULL)
		c->api_url = strip_slash(xstrdup(api_url));
	else if ((c->api_url = strip_slash(env_or_conf("E2B_API_URL",
	    "e2b_api_url"))) == NULL)
		c->api_url = xstrdup(E2B_CLIENT_DEFAULT_API);
	if (sandbox_url != NULL)
		c->sandbox_url = strip_slash(xstrdup(sandbox_url));
	else if (api_url == NULL)
		c->sandbox_url = strip_slash(env_or_conf("E2B_SANDBOX_URL",
		    "e2b_sandbox_url"));
	d = getenv("E2B_DOMAIN");
	c->domain = xstrdup(d != NULL && *d != '\0' ? d : "e2b.app");
	return c;
}

void
e2b_client_free(struct e2b_client *c)
{
	if (c == NULL)
		return;
	free(c->api_url);
	free(c->sandbox_url);
	free(c->domain);
	if (c->key != NULL)
		explicit_bzero(c->key, strlen(c->key));
	free(c->key);
	free(c);
}

const char *
e2b_client_api_url(struct e2b_client *c)
{
	return c->api_url;
}

const char *
e2b_client_sandbox_url(struct e2b_client *c)
{
	return c->sandbox_url;
}

/* Connect's envelopes: 1 byte of flags, 4 of length, the JSON. */
static void
stream_feed(struct e2b_http *h)
{
	const unsigned char	*p;
	uint32_t		 len;
	unsigned char		 flags;
	cJSON			*j;
	const cJSON		*err;

	while (h->reply.len >= 5 && h->cb_ret == 0 && !h->ended) {
		p = (const unsigned char *)h->reply.data;
		flags = p[0];
		len = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 |
		    (uint32_t)p[3] << 8 | p[4];
		if (len > E2B_FRAME_MAX) {
			h->end_error = xprintf("a message of %u bytes", len);
			h->ended = 1;
			return;
		}
		if (h->reply.len < 5 + (size_t)len)
			return;
		j = cJSON_ParseWithLength((const char *)p + 5, len);
		buf_remove_front(&h->reply, 5 + (size_t)len);
		if (j == NULL) {
			h->end_error = xstrdup("a message that is not JSON");
			h->ended = 1;
			return;
		}
		if (flags & 0x02) {
			h->ended = 1;
			err = cJSON_GetObjectItem(j, "error");
			if (err != NULL)
				h->end_error = xprintf("%s: %s",
				    json_str(err, "code") != NULL ?
				    json_str(err, "code") : "error",
				    json_str(err, "message") != NULL ?
				    json_str(err, "message") : "");
		} else {
			h->delivered = 1;
			h->cb_ret = h->cb(h->cb_arg, j);
		}
		cJSON_Delete(j);
	}
}

static size_t
http_write_cb(char *ptr, size_t size, size_t n, void *arg)
{
	struct e2b_http	*h = arg;

	if (h->reply.len + n > h->max) {
		h->too_big = 1;
		return 0;
	}
	buf_add(&h->reply, ptr, n * size);
	if (h->cb != NULL && h->status == 200) {
		stream_feed(h);
		if (h->cb_ret != 0 || h->ended)
			return h->ended && h->cb_ret == 0 ? n * size : 0;
	}
	return n * size;
}

/* A stream's tick: its callback with no message, once a second. */
static int
http_progress_cb(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
    curl_off_t un)
{
	struct e2b_http	*h = arg;
	uint64_t	 now = json_now_ms();

	(void)dt; (void)dn; (void)ut; (void)un;
	if (now - h->ticked_ms < 1000)
		return 0;
	h->ticked_ms = now;
	return (h->cb_ret = h->cb(h->cb_arg, NULL)) != 0;
}

static size_t
http_header_cb(char *ptr, size_t size, size_t n, void *arg)
{
	struct e2b_http	*h = arg;
	int		 code;

	/* The status line, so that a stream knows it is one early. */
	if (n * size > 12 && strncmp(ptr, "HTTP/", 5) == 0 &&
	    sscanf(strchr(ptr, ' ') + 1, "%d", &code) == 1)
		h->status = code;
	return n * size;
}

static void
http_init(struct e2b_http *h, const char *method, char *url)
{
	memset(h, 0, sizeof *h);
	h->method = method;
	h->url = url;
	h->timeout_s = E2B_CALL_TIMEOUT_S;
	h->max = E2B_FRAME_MAX;
	buf_init(&h->reply);
}

static void
http_release(struct e2b_http *h)
{
	free(h->url);
	curl_slist_free_all(h->headers);
	free(h->end_error);
	buf_release(&h->reply);
}

static void
http_header(struct e2b_http *h, const char *fmt, const char *v)
{
	char	*s = xprintf(fmt, v);

	h->headers = curl_slist_append(h->headers, s);
	explicit_bzero(s, strlen(s));
	free(s);
}

/* Run it: 0 when a reply came (any status), -1 when none did. */
static int
http_perform(struct e2b_http *h, const char *server, char **cause)
{
	CURL		*c;
	CURLcode	 cc;
	char		 err[CURL_ERROR_SIZE] = "";

	if ((c = curl_easy_init()) == NULL) {
		*cause = xstrdup("curl_easy_init failed");
		return -1;
	}
	h->headers = curl_slist_append(h->headers, "Expect:");
	curl_easy_setopt(c, CURLOPT_URL, h->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, h->method);
	if (h->body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, h->body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)h->body_len);
	} else if (strcmp(h->method, "GET") != 0)
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
	if (strcmp(h->method, "GET") == 0)
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	dynlib_curl_easy_defaults(c, h->timeout_s, err);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, http_header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
	if (h->cb != NULL) {
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, http_progress_cb);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, h);
	}
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &h->status);
	curl_easy_cleanup(c);
	if ((cc == CURLE_WRITE_ERROR || cc == CURLE_ABORTED_BY_CALLBACK) &&
	    (h->cb_ret != 0 || h->ended))
		return 0;
	if (h->too_big) {
		*cause = xprintf("E2B at %s: a reply over %zu bytes", server,
		    h->max);
		return -1;
	}
	if (cc != CURLE_OK) {
		*cause = xprintf("E2B at %s: %s (is it up? check E2B_API_URL "
		    "and E2B_SANDBOX_URL)", server, *err != '\0' ? err :
		    curl_easy_strerror(cc));
		return -1;
	}
	return 0;
}

/* s with every secret in it replaced (a server may echo what it got). */
static char *
redact(char *s, const char *secret)
{
	struct buf	 b;
	const char	*p = s, *q;
	size_t		 n;

	if (secret == NULL || (n = strlen(secret)) < 6 ||
	    strstr(s, secret) == NULL)
		return s;
	buf_init(&b);
	while ((q = strstr(p, secret)) != NULL) {
		buf_add(&b, p, (size_t)(q - p));
		buf_adds(&b, "[redacted]");
		p = q + n;
	}
	buf_adds(&b, p);
	free(s);
	return buf_detach(&b, NULL);
}

/* The message of an error reply: {"message": ...} or its text. */
static char *
http_error(struct e2b_http *h, const char *hint, char **code)
{
	cJSON		*j;
	const char	*m = NULL;
	char		*s, *text;

	buf_addc(&h->reply, '\0');
	h->reply.len--;
	j = cJSON_Parse(h->reply.data != NULL ? h->reply.data : "");
	if (j != NULL)
		m = json_str(j, "message");
	if (code != NULL && j != NULL && json_str(j, "code") != NULL)
		*code = xstrdup(json_str(j, "code"));
	text = utf8_vis(m != NULL ? m : buf_str(&h->reply), 0);
	if (strlen(text) > 300)
		text[300] = '\0';
	if (h->status == 401 || h->status == 403)
		s = xprintf("E2B said %ld: check %s%s%s", h->status, hint,
		    *text != '\0' ? ": " : "", text);
	else
		s = xprintf("E2B said %ld%s%s", h->status,
		    *text != '\0' ? ": " : "", text);
	free(text);
	cJSON_Delete(j);
	return s;
}

/*
 * A control plane call: method, path below api_url, a JSON body or NULL.
 * The reply's JSON (a JSON null for an empty one), or NULL with *cause;
 * *status gets the HTTP status.
 */
static cJSON *
api_call(struct e2b_client *c, const char *method, const char *path,
    const cJSON *body, long *status, char **cause)
{
	struct e2b_http	 h;
	char		*text = NULL;
	cJSON		*j = NULL;

	http_init(&h, method, xprintf("%s%s", c->api_url, path));
	http_header(&h, "X-API-KEY: %s", c->key);
	h.headers = curl_slist_append(h.headers,
	    "Content-Type: application/json");
	if (body != NULL) {
		text = json_print(body);
		h.body = text;
		h.body_len = strlen(text);
	}
	if (http_perform(&h, c->api_url, cause) != 0)
		goto out;
	*status = h.status;
	if (h.status < 200 || h.status > 299) {
		*cause = redact(http_error(&h, "E2B_API_KEY", NULL), c->key);
		goto out;
	}
	if (h.reply.len == 0)
		j = cJSON_CreateNull();
	else if ((j = cJSON_ParseWithLength(h.reply.data, h.reply.len))
	    == NULL)
		*cause = xprintf("E2B at %s: %s %s: a reply that is not JSON",
		    c->api_url, method, path);
out:
	free(text);
	http_release(&h);
	return j;
}

static char *
escape(const char *s)
{
	CURL	*c = curl_easy_init();
	char	*e, *r;

	e = curl_easy_escape(c, s, 0);
	r = xstrdup(e != NULL ? e : "");
	curl_free(e);
	curl_easy_cleanup(c);
	return r;
}

static int
sbx_fill(struct e2b_client *c, const cJSON *j, const char *id,
    struct e2b_sbx *sbx, char **cause)
{
	const char	*s;

	memset(sbx, 0, sizeof *sbx);
	if ((s = json_str(j, "sandboxID")) == NULL)
		s = id;
	if (s == NULL || *s == '\0') {
		*cause = xprintf("E2B at %s: a sandbox without sandboxID",
		    c->api_url);
		return -1;
	}
	sbx->client = c;
	sbx->id = xstrdup(s);
	sbx->template = xstrdup((s = json_str(j, "templateID")) != NULL ? s :
	    "base");
	if ((s = json_str(j, "envdAccessToken")) != NULL && *s != '\0')
		sbx->token = xstrdup(s);
	sbx->envd_version = xstrdup((s = json_str(j, "envdVersion")) != NULL ?
	    s : "");
	if ((s = json_str(j, "domain")) != NULL && *s != '\0')
		sbx->domain = xstrdup(s);
	if (c->sandbox_url != NULL)
		sbx->envd_url = xstrdup(c->sandbox_url);
	else
		sbx->envd_url = xprintf("https://%d-%s.%s",
		    E2B_CLIENT_ENVD_PORT, sbx->id, sbx->domain != NULL ?
		    sbx->domain : c->domain);
	return 0;
}

/* sbx from a reply (taken), or -1 when there was none. */
static int
sbx_from(struct e2b_client *c, cJSON *j, const char *id, struct e2b_sbx *sbx,
    char **cause)
{
	int	 r;

	if (j == NULL)
		return -1;
	r = sbx_fill(c, j, id, sbx, cause);
	cJSON_Delete(j);
	return r;
}

static cJSON *api_sandbox(struct e2b_client *, const char *, const char *,
	    const char *, const cJSON *, int *, char **);

void
e2b_sbx_release(struct e2b_sbx *sbx)
{
	free(sbx->id);
	free(sbx->template);
	if (sbx->token != NULL)
		explicit_bzero(sbx->token, strlen(sbx->token));
	free(sbx->token);
	free(sbx->envd_version);
	free(sbx->domain);
	free(sbx->envd_url);
	memset(sbx, 0, sizeof *sbx);
}

int
e2b_client_create(struct e2b_client *c, const struct e2b_create_opts *o,
    struct e2b_sbx *sbx, char **cause)
{
	cJSON	*req = cJSON_CreateObject(), *j;
	long	 status;

	cJSON_AddStringToObject(req, "templateID", o->template != NULL ?
	    o->template : "base");
	cJSON_AddNumberToObject(req, "timeout", (double)o->timeout_s);
	cJSON_AddBoolToObject(req, "autoPause", 1);
	cJSON_AddBoolToObject(req, "secure", 1);
	cJSON_AddBoolToObject(req, "allow_internet_access", o->internet);
	if (o->metadata != NULL)
		cJSON_AddItemToObject(req, "metadata",
		    cJSON_Duplicate(o->metadata, 1));
	if (o->envs != NULL)
		cJSON_AddItemToObject(req, "envVars",
		    cJSON_Duplicate(o->envs, 1));
	j = api_call(c, "POST", "/sandboxes", req, &status, cause);
	cJSON_Delete(req);
	return sbx_from(c, j, NULL, sbx, cause);
}

int
e2b_client_connect(struct e2b_client *c, const char *id, long timeout_s,
    struct e2b_sbx *sbx, char **cause)
{
	cJSON	*req = cJSON_CreateObject(), *j;

	cJSON_AddNumberToObject(req, "timeout", (double)timeout_s);
	j = api_sandbox(c, "POST", id, "/connect", req, NULL, cause);
	cJSON_Delete(req);
	return sbx_from(c, j, id, sbx, cause);
}

/* A call on /sandboxes/{id}[suffix]; its JSON reply, or NULL. */
static cJSON *
api_sandbox(struct e2b_client *c, const char *method, const char *id,
    const char *suffix, const cJSON *body, int *gone, char **cause)
{
	char	*e = escape(id), *path;
	long	 status = 0;
	cJSON	*j;

	path = xprintf("/sandboxes/%s%s", e, suffix);
	j = api_call(c, method, path, body, &status, cause);
	free(path);
	free(e);
	if (gone != NULL)
		*gone = j == NULL && status == 404;
	return j;
}

cJSON *
e2b_client_get(struct e2b_client *c, const char *id, int *gone,
    char **cause)
{
	return api_sandbox(c, "GET", id, "", NULL, gone, cause);
}

cJSON *
e2b_client_list(struct e2b_client *c, char **cause)
{
	long	 status;

	return api_call(c, "GET", "/v2/sandboxes?state=running&state=paused",
	    NULL, &status, cause);
}

static int
api_done(cJSON *j)
{
	cJSON_Delete(j);
	return j != NULL ? 0 : -1;
}

int
e2b_client_pause(struct e2b_client *c, const char *id, char **cause)
{
	return api_done(api_sandbox(c, "POST", id, "/pause", NULL, NULL,
	    cause));
}

int
e2b_client_kill(struct e2b_client *c, const char *id, char **cause)
{
	return api_done(api_sandbox(c, "DELETE", id, "", NULL, NULL, cause));
}

int
e2b_client_set_timeout(struct e2b_client *c, const char *id, long timeout_s,
    char **cause)
{
	cJSON	*req = cJSON_CreateObject();
	int	 r;

	cJSON_AddNumberToObject(req, "timeout", (double)timeout_s);
	r = api_done(api_sandbox(c, "POST", id, "/timeout", req, NULL, cause));
	cJSON_Delete(req);
	return r;
}

/*
 * An envd request. A sandbox paused meanwhile (E2B's proxy answers 502:
 * its timeout ran out, or someone paused it) is resumed by connect, and
 * the request made once more, if nothing of its reply was used yet.
 */
static int
envd_perform(struct e2b_sbx *sbx, struct e2b_http *h, char **cause)
{
	struct e2b_sbx	 again;
	char		*why = NULL;

	if (http_perform(h, sbx->envd_url, cause) != 0)
		return -1;
	if (h->status != 502 || h->delivered)
		return 0;
	if (e2b_client_connect(sbx->client, sbx->id, sbx->timeout_s > 0 ?
	    sbx->timeout_s : E2B_CLIENT_RESUME_S, &again, &why) != 0) {
		free(why);
		return 0;	/* the 502 is the answer */
	}
	e2b_sbx_release(&again);
	h->status = 0;
	buf_reset(&h->reply);
	return http_perform(h, sbx->envd_url, cause);
}

/* The headers every envd request carries. */
static void
envd_headers(struct e2b_http *h, struct e2b_sbx *sbx, const char *user)
{
	char	*cred, *b64, port[16];

	if (sbx->token != NULL)
		http_header(h, "X-Access-Token: %s", sbx->token);
	http_header(h, "E2b-Sandbox-Id: %s", sbx->id);
	snprintf(port, sizeof port, "%d", E2B_CLIENT_ENVD_PORT);
	http_header(h, "E2b-Sandbox-Port: %s", port);
	cred = xprintf("%s:", user != NULL ? user : "user");
	b64 = envd_b64_encode(cred, strlen(cred));
	http_header(h, "Authorization: Basic %s", b64);
	free(b64);
	free(cred);
}

cJSON *
e2b_envd_rpc(struct e2b_sbx *sbx, const char *method, const char *user,
    const cJSON *req, char **code, char **cause)
{
	struct e2b_http	 h;
	char		*text = json_print(req);
	cJSON		*j = NULL;

	http_init(&h, "POST", xprintf("%s/%s", sbx->envd_url, method));
	envd_headers(&h, sbx, user);
	h.headers = curl_slist_append(h.headers,
	    "Content-Type: application/json");
	h.headers = curl_slist_append(h.headers, "Connect-Protocol-Version: 1");
	h.body = text;
	h.body_len = strlen(text);
	if (envd_perform(sbx, &h, cause) != 0)
		goto out;
	if (h.status != 200) {
		*cause = redact(http_error(&h, "the sandbox's access token",
		    code), sbx->token);
		goto out;
	}
	if ((j = cJSON_ParseWithLength(h.reply.data != NULL ? h.reply.data :
	    "{}", h.reply.len != 0 ? h.reply.len : 2)) == NULL)
		*cause = xprintf("envd at %s: %s: a reply that is not JSON",
		    sbx->envd_url, method);
out:
	free(text);
	http_release(&h);
	return j;
}

int
e2b_envd_stream(struct e2b_sbx *sbx, const char *method, const char *user,
    const cJSON *req, e2b_envd_msg_cb cb, void *arg, char **cause)
{
	struct e2b_http	 h;
	char		*text = json_print(req);
	size_t		 n = strlen(text);
	unsigned char	*env = xmalloc(n + 5);
	int		 r = -1;

	env[0] = 0;
	env[1] = (unsigned char)(n >> 24);
	env[2] = (unsigned char)(n >> 16);
	env[3] = (unsigned char)(n >> 8);
	env[4] = (unsigned char)n;
	memcpy(env + 5, text, n);
	http_init(&h, "POST", xprintf("%s/%s", sbx->envd_url, method));
	envd_headers(&h, sbx, user);
	h.headers = curl_slist_append(h.headers,
	    "Content-Type: application/connect+json");
	h.headers = curl_slist_append(h.headers, "Connect-Protocol-Version: 1");
	h.body = env;
	h.body_len = n + 5;
	h.timeout_s = 0;
	h.max = 2 * E2B_FRAME_MAX + 5;
	h.cb = cb;
	h.cb_arg = arg;
	if (envd_perform(sbx, &h, cause) != 0)
		goto out;
	if (h.status != 200) {
		*cause = redact(http_error(&h, "the sandbox's access token",
		    NULL), sbx->token);
		goto out;
	}
	if (h.cb_ret != 0) {
		r = h.cb_ret;
		goto out;
	}
	if (h.end_error != NULL)
		*cause = xprintf("envd: %s", h.end_error);
	else if (!h.ended)
		*cause = xprintf("envd at %s: the stream broke off",
		    sbx->envd_url);
	else
		r = 0;
out:
	free(env);
	free(text);
	http_release(&h);
	return r;
}

static char *
files_url(struct e2b_sbx *sbx, const char *path)
{
	char	*e = escape(path), *url;

	url = xprintf("%s/files?path=%s&username=user", sbx->envd_url, e);
	free(e);
	return url;
}

char *
e2b_envd_file_get(struct e2b_sbx *sbx, const char *path, size_t *lenp,
    int *gone, char **cause)
{
	struct e2b_http	 h;
	char		*data = NULL;

	*gone = 0;
	http_init(&h, "GET", files_url(sbx, path));
	envd_headers(&h, sbx, NULL);
	h.max = E2B_FILE_MAX;
	if (envd_perform(sbx, &h, cause) != 0)
		goto out;
	if (h.status != 200) {
		*gone = h.status == 404;
		*cause = redact(http_error(&h, "the sandbox's access token",
		    NULL), sbx->token);
		goto out;
	}
	buf_addc(&h.reply, '\0');
	data = buf_detach(&h.reply, lenp);
	(*lenp)--;
out:
	http_release(&h);
	return data;
}

/* multipart/form-data with one part, "file": what every envd takes. */
int
e2b_envd_file_put(struct e2b_sbx *sbx, const char *path, const void *data,
    size_t len, char **cause)
{
	struct e2b_http	 h;
	struct buf	 body;
	char		*rnd, *ct;
	int		 r = -1;

	rnd = xprintf("holt%llx%zx", (unsigned long long)json_now_ms(), len);
	buf_init(&body);
	buf_addf(&body, "--%s\r\nContent-Disposition: form-data; name=\"file\"; "
	    "filename=\"file\"\r\nContent-Type: application/octet-stream\r\n\r\n",
	    rnd);
	buf_add(&body, data, len);
	buf_addf(&body, "\r\n--%s--\r\n", rnd);
	http_init(&h, "POST", files_url(sbx, path));
	envd_headers(&h, sbx, NULL);
	ct = xprintf("multipart/form-data; boundary=%s", rnd);
	http_header(&h, "Content-Type: %s", ct);
	h.body = body.data;
	h.body_len = body.len;
	if (envd_perform(sbx, &h, cause) != 0)
		goto out;
	if (h.status != 200 && h.status != 201 && h.status != 204) {
		*cause = redact(http_error(&h, "the sandbox's access token",
		    NULL), sbx->token);
		goto out;
	}
	r = 0;
out:
	free(ct);
	free(rnd);
	buf_release(&body);
	http_release(&h);
	return r;
}
