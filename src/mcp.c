/*
 * mcp.c: the MCP client (mcp.h): JSON-RPC 2.0 with each server of a
 * session, the tools it lists, and the calls the model makes.
 *
 *	initialize -> notifications/initialized -> tools/list (cursor ...)
 *	tools/call {name, arguments, _meta.progressToken} -> result
 *
 * The protocol version is negotiated: holt asks for the newest it speaks
 * and takes any of mcp_versions the server answers with. holt declares no
 * client capability, so a server has no reason to ask for sampling,
 * elicitation or roots; if it asks anyway it gets "method not found".
 *
 * A server's trouble (it exits, hangs past its timeout, answers garbage or
 * too much) stops it (mcp_srv_down): every call in flight on it fails with
 * the reason, and the next call starts it again. Calls end through a zero
 * timer, never inside the caller's own call.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "mcp-int.h"

#define MCP_LIST_PAGES	100		/* tools/list pages of one listing */
#define MCP_CLIENT	"holt"

static const char *mcp_versions[] = {
	"2025-06-18", "2025-03-26", "2024-11-05"
};

enum mcp_state { MS_DOWN, MS_STARTING, MS_READY };

struct mcp_srv {
	struct mcp_server	 s;		/* first: transports see this */
	enum mcp_state		 state;
	long long		 next_id;
	long long		 init_id;
	long long		 list_id;	/* tools/list in flight, or 0 */
	int			 list_pages;
	cJSON			*listing;	/* tools of the pages so far */
	cJSON			*tools;		/* as last listed, or NULL */
	int			 list_wanted;	/* list once ready */
	int			 list_failed;	/* this run: do not wait again */
	int			 fail_told;	/* host->failed since listed */
	struct event		*timer;		/* initialize, tools/list */
	struct mcp_srv		*next;
};

struct mcp_call {
	struct mcp		*mcp;
	struct mcp_srv		*srv;		/* NULL once finished */
	char			*tool;		/* the server's name for it */
	cJSON			*args;
	size_t			 cap;
	long long		 id;		/* JSON-RPC id once sent, else 0 */
	mcp_progress_fn		 progress;
	mcp_done_fn		 done;
	void			*arg;
	struct event		*timer;		/* timeout, then the end */
	int			 ending;
	char			*text;
	int			 error;
	int			 interrupted;
	struct mcp_call		*next;
};

struct mcp {
	struct mcp_host		 host;
	struct mcp_srv		*srvs;
	struct mcp_call		*calls;
};

static void	mcp_srv_down(struct mcp_srv *, const char *, ...)
		    printflike(2, 3);
static void	mcp_call_send(struct mcp_call *);

/* Words and the configuration. */

char **
mcp_words(const char *s, char **cause)
{
	char		**w = NULL;
	size_t		  n = 0;
	struct buf	  b = BUF_INIT;
	char		  q;

	for (;;) {
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '\0')
			break;
		buf_reset(&b);
		buf_addc(&b, '\0');	/* an empty quoted word is a word */
		b.len = 0;
		while (*s != '\0' && !isspace((unsigned char)*s)) {
			if (*s != '\'' && *s != '"') {
				buf_addc(&b, *s++);
				continue;
			}
			q = *s++;
			while (*s != '\0' && *s != q)
				buf_addc(&b, *s++);
			if (*s == '\0') {
				*cause = xprintf("unclosed %c", q);
				buf_release(&b);
				w = xreallocarray(w, n + 1, sizeof *w);
				w[n] = NULL;
				mcp_words_free(w);
				return NULL;
			}
			s++;
		}
		w = xreallocarray(w, n + 2, sizeof *w);
		w[n++] = xstrdup(buf_str(&b));
		w[n] = NULL;
	}
	buf_release(&b);
	if (w == NULL)
		w = xcalloc(1, sizeof *w);
	return w;
}

void
mcp_words_free(char **w)
{
	size_t	 i;

	if (w == NULL)
		return;
	for (i = 0; w[i] != NULL; i++)
		free(w[i]);
	free(w);
}

static const char *
mcp_conf(const char *name, const char *key)
{
	char		*k = xprintf("mcp.%s.%s", name, key);
	const char	*v = config_get(k);

	free(k);
	return v != NULL && *v != '\0' ? v : NULL;
}

static void
mcp_srv_free(struct mcp_srv *srv)
{
	if (srv->s.tp != NULL)
		srv->s.transport->stop(&srv->s);
	if (srv->timer != NULL)
		event_free(srv->timer);
	free(srv->s.name);
	free(srv->s.command);
	mcp_words_free(srv->s.argv);
	cJSON_Delete(srv->s.env);
	free(srv->s.url);
	cJSON_Delete(srv->listing);
	cJSON_Delete(srv->tools);
	free(srv);
}

static void	mcp_srv_timeout(evutil_socket_t, short, void *);

/* One [mcp NAME] section; NULL (and a warning) if it cannot be used. */
static struct mcp_srv *
mcp_srv_new(struct mcp *m, const char *name)
{
	struct mcp_srv	*srv = xcalloc(1, sizeof *srv);
	const char	*command = mcp_conf(name, "command");
	const char	*args = mcp_conf(name, "args");
	const char	*env = mcp_conf(name, "env");
	const char	*url = mcp_conf(name, "url");
	const char	*where = mcp_conf(name, "where");
	const char	*timeout = mcp_conf(name, "timeout");
	char		*cause = NULL, *line, **ew, *eq;
	size_t		 i;

	srv->s.mcp = m;
	srv->s.name = xstrdup(name);
	srv->s.base = m->host.base;
	srv->s.mh = &m->host;
	srv->s.host = where != NULL && strcmp(where, "host") == 0;
	srv->s.timeout_s = timeout != NULL ? strtoll(timeout, NULL, 10) :
	    MCP_TIMEOUT_S;
	srv->s.env = cJSON_CreateObject();
	srv->timer = evtimer_new(m->host.base, mcp_srv_timeout, srv);
	if ((command == NULL) == (url == NULL)) {
		cause = xstrdup("it needs either command or url");
		goto fail;
	}
	if (url != NULL) {
		srv->s.url = xstrdup(url);
		srv->s.transport = &mcp_http_transport;
		return srv;
	}
	line = xprintf("%s %s", command, args != NULL ? args : "");
	srv->s.argv = mcp_words(line, &cause);
	free(line);
	if (srv->s.argv == NULL)
		goto fail;
	srv->s.command = xstrdup(srv->s.argv[0]);
	if (env != NULL) {
		if ((ew = mcp_words(env, &cause)) == NULL)
			goto fail;
		for (i = 0; ew[i] != NULL; i++) {
			if ((eq = strchr(ew[i], '=')) == NULL || eq == ew[i]) {
				cause = xprintf("env: '%s' is not NAME=VALUE",
				    ew[i]);
				mcp_words_free(ew);
				goto fail;
			}
			*eq = '\0';
			cJSON_DeleteItemFromObjectCaseSensitive(srv->s.env,
			    ew[i]);
			cJSON_AddStringToObject(srv->s.env, ew[i], eq + 1);
		}
		mcp_words_free(ew);
	}
	srv->s.transport = srv->s.host ? &mcp_stdio_transport :
	    &mcp_sandbox_transport;
	return srv;
fail:
	log_warnx("session '%s': mcp '%s': %s (the server is left out)",
	    m->host.session, name, cause);
	free(cause);
	mcp_srv_free(srv);
	return NULL;
}

struct mcp *
mcp_new(const struct mcp_host *host)
{
	struct mcp		*m;
	struct mcp_srv		*srv, **tail;
	const char *const	*names;
	size_t			 n, i;

	if ((n = config_mcp_names(&names)) == 0)
		return NULL;
	m = xcalloc(1, sizeof *m);
	m->host = *host;
	tail = &m->srvs;
	for (i = 0; i < n; i++) {
		if ((srv = mcp_srv_new(m, names[i])) == NULL)
			continue;
		*tail = srv;
		tail = &srv->next;
	}
	return m;
}

void
mcp_free(struct mcp *m)
{
	struct mcp_srv	*srv;
	struct mcp_call	*c;

	if (m == NULL)
		return;
	while ((c = m->calls) != NULL) {
		m->calls = c->next;
		event_free(c->timer);
		free(c->tool);
		cJSON_Delete(c->args);
		free(c->text);
		free(c);
	}
	while ((srv = m->srvs) != NULL) {
		m->srvs = srv->next;
		mcp_srv_free(srv);
	}
	free(m);
}

/* Sending. */

static void
mcp_srv_send(struct mcp_srv *srv, cJSON *msg)
{
	char	*s, *cause = NULL;

	cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
	s = json_print(msg);
	cJSON_Delete(msg);
	if (srv->s.tp == NULL) {
		free(s);
		return;
	}
	if (srv->s.transport->send(&srv->s, s, strlen(s), &cause) != 0) {
		mcp_srv_down(srv, "%s", cause);
		free(cause);
	}
	free(s);
}

static cJSON *
mcp_request(struct mcp_srv *srv, const char *method, long long *id)
{
	cJSON	*msg = cJSON_CreateObject();

	*id = ++srv->next_id;
	cJSON_AddNumberToObject(msg, "id", (double)*id);
	cJSON_AddStringToObject(msg, "method", method);
	return msg;
}

static void
mcp_srv_arm(struct mcp_srv *srv)
{
	struct timeval	 tv = { (time_t)srv->s.timeout_s, 0 };

	evtimer_add(srv->timer, &tv);
}

static void
mcp_changed(struct mcp *m)
{
	if (m->host.changed != NULL)
		m->host.changed(m->host.arg);
}

/* Calls: their end. */

static void
mcp_call_end_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mcp_call	 *c = arg, **cp;
	struct mcp	 *m = c->mcp;

	(void)fd;
	(void)what;
	for (cp = &m->calls; *cp != NULL; cp = &(*cp)->next) {
		if (*cp == c) {
			*cp = c->next;
			break;
		}
	}
	if (c->done != NULL)
		c->done(c->arg, c->text, c->error, c->interrupted);
	event_free(c->timer);
	free(c->tool);
	cJSON_Delete(c->args);
	free(c->text);
	free(c);
}

/* End a call (once): its callback follows from a zero timer. */
static void
mcp_call_end(struct mcp_call *c, char *text, int error, int interrupted)
{
	struct timeval	 tv = { 0, 0 };

	if (c->ending) {
		free(text);
		return;
	}
	c->ending = 1;
	c->srv = NULL;
	c->text = text;
	c->error = error;
	c->interrupted = interrupted;
	event_del(c->timer);
	event_assign(c->timer, c->mcp->host.base, -1, 0, mcp_call_end_cb, c);
	evtimer_add(c->timer, &tv);
}

static void
mcp_call_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct mcp_call	*c = arg;
	struct mcp_srv	*srv = c->srv;

	(void)fd;
	(void)what;
	if (srv == NULL)
		return;
	mcp_call_end(c, xprintf("mcp server '%s': tool '%s' did not answer "
	    "within %lld s (its timeout); the server was stopped and will be "
	    "started again on the next call", srv->s.name, c->tool,
	    srv->s.timeout_s), 1, 0);
	mcp_srv_down(srv, "a call timed out after %lld s", srv->s.timeout_s);
}

static void
mcp_call_arm(struct mcp_call *c)
{
	struct timeval	 tv = { (time_t)c->srv->s.timeout_s, 0 };

	evtimer_add(c->timer, &tv);
}

/* The server is gone or unusable: stop it, fail what it had. */
static void
mcp_srv_down(struct mcp_srv *srv, const char *fmt, ...)
{
	struct mcp	*m = srv->s.mcp;
	struct mcp_call	*c;
	va_list		 ap;
	char		*why;
	int		 listing = srv->list_id != 0 || srv->list_wanted;

	va_start(ap, fmt);
	xvasprintf(&why, fmt, ap);
	va_end(ap);
	log_warnx("session '%s': mcp server '%s': %s", m->host.session,
	    srv->s.name, why);
	if (srv->s.tp != NULL)
		srv->s.transport->stop(&srv->s);
	srv->s.tp = NULL;
	srv->state = MS_DOWN;
	evtimer_del(srv->timer);
	for (c = m->calls; c != NULL; c = c->next) {
		if (c->srv == srv)
			mcp_call_end(c, xprintf("mcp server '%s' failed: %s. The "
			    "call did not complete (it may have run in part); "
			    "the server will be started again on the next "
			    "call", srv->s.name, why), 1, 0);
	}
	cJSON_Delete(srv->listing);
	srv->listing = NULL;
	srv->list_id = 0;
	srv->list_wanted = 0;
	if (listing) {
		srv->list_failed = 1;
		if (!srv->fail_told && m->host.failed != NULL)
			m->host.failed(m->host.arg, srv->s.name, why);
		srv->fail_told = 1;
		mcp_changed(m);
	}
	free(why);
}

/* Starting: the transport, then initialize. */

static void
mcp_srv_start(struct mcp_srv *srv)
{
	cJSON	*msg, *params, *ci;
	char	*cause = NULL;

	if (srv->state != MS_DOWN)
		return;
	if (srv->s.transport->start(&srv->s, &cause) != 0) {
		mcp_srv_down(srv, "cannot start: %s", cause);
		free(cause);
		return;
	}
	srv->state = MS_STARTING;
	msg = mcp_request(srv, "initialize", &srv->init_id);
	params = cJSON_AddObjectToObject(msg, "params");
	cJSON_AddStringToObject(params, "protocolVersion", mcp_versions[0]);
	cJSON_AddObjectToObject(params, "capabilities");
	ci = cJSON_AddObjectToObject(params, "clientInfo");
	cJSON_AddStringToObject(ci, "name", MCP_CLIENT);
	cJSON_AddStringToObject(ci, "version", PACKAGE_VERSION);
	mcp_srv_arm(srv);
	mcp_srv_send(srv, msg);
}

static void
mcp_srv_list(struct mcp_srv *srv, const char *cursor)
{
	cJSON	*msg, *params;

	srv->list_wanted = 0;
	if (cursor == NULL) {
		cJSON_Delete(srv->listing);
		srv->listing = cJSON_CreateArray();
		srv->list_pages = 0;
	}
	msg = mcp_request(srv, "tools/list", &srv->list_id);
	if (cursor != NULL) {
		params = cJSON_AddObjectToObject(msg, "params");
		cJSON_AddStringToObject(params, "cursor", cursor);
	}
	mcp_srv_arm(srv);
	mcp_srv_send(srv, msg);
}

static void
mcp_srv_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct mcp_srv	*srv = arg;

	(void)fd;
	(void)what;
	mcp_srv_down(srv, "no answer to %s within %lld s", srv->state ==
	    MS_STARTING ? "initialize" : "tools/list", srv->s.timeout_s);
}

static void
mcp_srv_ready(struct mcp_srv *srv, const cJSON *result)
{
	struct mcp	*m = srv->s.mcp;
	struct mcp_call	*c;
	cJSON		*msg;
	const char	*v = json_str(result, "protocolVersion");
	size_t		 i;

	for (i = 0; v != NULL && i < nitems(mcp_versions); i++) {
		if (strcmp(v, mcp_versions[i]) == 0)
			break;
	}
	if (v == NULL || i == nitems(mcp_versions)) {
		mcp_srv_down(srv, "it speaks MCP version '%s'; holt speaks "
		    "%s, %s and %s", v != NULL ? v : "(none)", mcp_versions[0],
		    mcp_versions[1], mcp_versions[2]);
		return;
	}
	evtimer_del(srv->timer);
	msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "method", "notifications/initialized");
	mcp_srv_send(srv, msg);
	if (srv->s.tp == NULL)
		return;
	srv->state = MS_READY;
	if (srv->tools == NULL || srv->list_wanted)
		mcp_srv_list(srv, NULL);
	for (c = m->calls; c != NULL && srv->s.tp != NULL; c = c->next) {
		if (c->srv == srv && c->id == 0)
			mcp_call_send(c);
	}
}

static void
mcp_srv_listed(struct mcp_srv *srv, const cJSON *result)
{
	const cJSON	*tools = cJSON_GetObjectItemCaseSensitive(result,
	    "tools"), *t;
	const char	*cursor = json_str(result, "nextCursor");

	srv->list_id = 0;
	if (!cJSON_IsArray(tools)) {
		mcp_srv_down(srv, "tools/list answered without a tools array");
		return;
	}
	cJSON_ArrayForEach(t, tools) {
		if (cJSON_IsObject(t) && json_str(t, "name") != NULL)
			cJSON_AddItemToArray(srv->listing,
			    cJSON_Duplicate(t, 1));
	}
	if (cursor != NULL && *cursor != '\0' &&
	    ++srv->list_pages < MCP_LIST_PAGES) {
		mcp_srv_list(srv, cursor);
		return;
	}
	evtimer_del(srv->timer);
	cJSON_Delete(srv->tools);
	srv->tools = srv->listing;
	srv->listing = NULL;
	srv->fail_told = 0;
	log_info("session '%s': mcp server '%s': %d tools", srv->s.mcp->host.session,
	    srv->s.name, cJSON_GetArraySize(srv->tools));
	if (srv->list_wanted)
		mcp_srv_list(srv, NULL);
	else
		mcp_changed(srv->s.mcp);
}

/* Results. */

/* What the model is given for one content block. */
static void
mcp_content_text(struct buf *b, const cJSON *c)
{
	const char	*type = json_str(c, "type"), *s;
	const cJSON	*res;

	if (type == NULL)
		type = "(untyped)";
	if (strcmp(type, "text") == 0 && (s = json_str(c, "text")) != NULL) {
		buf_adds(b, s);
		return;
	}
	if (strcmp(type, "image") == 0 || strcmp(type, "audio") == 0) {
		s = json_str(c, "data");
		buf_addf(b, "[%s (%s, %zu bytes) not shown: holt passes only "
		    "text to the model]", type, json_str(c, "mimeType") != NULL ?
		    json_str(c, "mimeType") : "unknown type", s != NULL ?
		    strlen(s) / 4 * 3 : 0);
		return;
	}
	if (strcmp(type, "resource") == 0 || strcmp(type, "resource_link") ==
	    0) {
		res = cJSON_GetObjectItemCaseSensitive(c, "resource");
		s = json_str(res != NULL ? res : c, "uri");
		buf_addf(b, "[%s %s not shown: holt passes only text to the "
		    "model]", strcmp(type, "resource") == 0 ? "resource" :
		    "link to resource", s != NULL ? s : "(no uri)");
		return;
	}
	buf_addf(b, "[%s content not shown: holt passes only text to the "
	    "model]", type);
}

static char *
mcp_result_text(const cJSON *result, size_t cap, int *error)
{
	struct buf	 b = BUF_INIT;
	const cJSON	*content, *c, *sc;
	char		*s, *capped;
	int		 n = 0;

	*error = json_bool(result, "isError", 0);
	content = cJSON_GetObjectItemCaseSensitive(result, "content");
	cJSON_ArrayForEach(c, content) {
		if (n++ > 0)
			buf_addc(&b, '\n');
		mcp_content_text(&b, c);
	}
	sc = cJSON_GetObjectItemCaseSensitive(result, "structuredContent");
	if (n == 0 && sc != NULL) {
		s = json_print(sc);
		buf_adds(&b, s);
		free(s);
	}
	capped = tools_cap_output(buf_str(&b), b.len, cap);
	buf_release(&b);
	return capped;
}

static struct mcp_call *
mcp_find_call(struct mcp_srv *srv, long long id)
{
	struct mcp_call	*c;

	for (c = srv->s.mcp->calls; c != NULL; c = c->next) {
		if (c->srv == srv && c->id == id)
			return c;
	}
	return NULL;
}

static void
mcp_srv_reply(struct mcp_srv *srv, long long id, const cJSON *msg)
{
	const cJSON	*result = cJSON_GetObjectItemCaseSensitive(msg, "result");
	const cJSON	*err = cJSON_GetObjectItemCaseSensitive(msg, "error");
	const char	*em = json_str(err, "message");
	struct mcp_call	*c;
	char		*text;
	int		 error;

	if (id == srv->init_id && srv->state == MS_STARTING) {
		if (!cJSON_IsObject(result))
			mcp_srv_down(srv, "initialize failed: %s", em != NULL ?
			    em : "no result");
		else
			mcp_srv_ready(srv, result);
		return;
	}
	if (id == srv->list_id && id != 0) {
		if (!cJSON_IsObject(result))
			mcp_srv_down(srv, "tools/list failed: %s", em != NULL ?
			    em : "no result");
		else
			mcp_srv_listed(srv, result);
		return;
	}
	if ((c = mcp_find_call(srv, id)) == NULL)
		return;		/* a call given up on */
	if (cJSON_IsObject(result)) {
		text = mcp_result_text(result, c->cap, &error);
		mcp_call_end(c, text, error, 0);
	} else
		mcp_call_end(c, xprintf("mcp server '%s': tool '%s' failed: %s "
		    "(code %.0f)", srv->s.name, c->tool, em != NULL ? em :
		    "no result and no error", json_num(err, "code", 0)), 1, 0);
}

/* A request from the server: ping is answered, anything else refused. */
static void
mcp_srv_request(struct mcp_srv *srv, const cJSON *id, const char *method)
{
	cJSON	*msg = cJSON_CreateObject(), *err;

	cJSON_AddItemToObject(msg, "id", cJSON_Duplicate(id, 1));
	if (strcmp(method, "ping") == 0)
		cJSON_AddObjectToObject(msg, "result");
	else {
		log_info("session '%s': mcp server '%s' asked for '%s': refused",
		    srv->s.mcp->host.session, srv->s.name, method);
		err = cJSON_AddObjectToObject(msg, "error");
		cJSON_AddNumberToObject(err, "code", -32601);
		cJSON_AddStringToObject(err, "message", strncmp(method,
		    "sampling/", 9) == 0 ? "holt does not offer sampling to "
		    "MCP servers" : strncmp(method, "elicitation/", 12) == 0 ?
		    "holt does not offer elicitation to MCP servers" :
		    "method not offered by holt");
	}
	mcp_srv_send(srv, msg);
}

static void
mcp_srv_notified(struct mcp_srv *srv, const char *method, const cJSON *params)
{
	struct mcp_call	*c;
	char		*line;
	double		 total;

	if (strcmp(method, "notifications/tools/list_changed") == 0) {
		if (srv->state == MS_READY && srv->list_id == 0)
			mcp_srv_list(srv, NULL);
		else
			srv->list_wanted = 1;
		return;
	}
	if (strcmp(method, "notifications/progress") != 0)
		return;
	c = mcp_find_call(srv, (long long)json_num(params, "progressToken",
	    -1));
	if (c == NULL || c->ending)
		return;
	total = json_num(params, "total", -1);
	if (total > 0)
		line = xprintf("progress %g/%g%s%s\n", json_num(params,
		    "progress", 0), total, json_str(params, "message") != NULL ?
		    ": " : "", json_str(params, "message") != NULL ?
		    json_str(params, "message") : "");
	else
		line = xprintf("progress %g%s%s\n", json_num(params, "progress",
		    0), json_str(params, "message") != NULL ? ": " : "",
		    json_str(params, "message") != NULL ?
		    json_str(params, "message") : "");
	/* Work that says it is getting on is not hung: a new timeout. */
	mcp_call_arm(c);
	if (c->progress != NULL && c->done != NULL)
		c->progress(c->arg, line);
	free(line);
}

void
mcp_server_recv(struct mcp_server *s, const char *data, size_t len)
{
	struct mcp_srv	*srv = (struct mcp_srv *)s;
	cJSON		*msg;
	const cJSON	*id;
	const char	*method;
	char		*vis, *raw;

	while (len > 0 && isspace((unsigned char)*data)) {
		data++;
		len--;
	}
	if (len == 0)
		return;
	msg = cJSON_ParseWithLength(data, len);
	if (!cJSON_IsObject(msg)) {
		cJSON_Delete(msg);
		raw = xstrndup(data, len > 60 ? 60 : len);
		vis = utf8_vis(raw, UTF8_VIS_TEXT);
		mcp_srv_down(srv, "it answered what is not JSON-RPC: '%s%s'",
		    vis, len > 60 ? "..." : "");
		free(vis);
		free(raw);
		return;
	}
	id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	method = json_str(msg, "method");
	if (method != NULL && id != NULL)
		mcp_srv_request(srv, id, method);
	else if (method != NULL)
		mcp_srv_notified(srv, method, cJSON_GetObjectItemCaseSensitive(
		    msg, "params"));
	else if (cJSON_IsNumber(id))
		mcp_srv_reply(srv, (long long)id->valuedouble, msg);
	else if (!cJSON_IsString(id))
		mcp_srv_down(srv, "it sent a JSON-RPC message with neither a "
		    "method nor an id");
	cJSON_Delete(msg);
}

int
mcp_server_feed(struct mcp_server *s, struct buf *in, const char *data,
    size_t len)
{
	char	*nl, *line;
	size_t	 n, from;

	buf_add(in, data, len);
	/* Only the new bytes can end a line: O(bytes), not O(line^2). */
	for (from = in->len - len; in->len > from && (nl = memchr(in->data +
	    from, '\n', in->len - from)) != NULL; from = 0) {
		n = (size_t)(nl - in->data);
		line = xstrndup(in->data, n);
		buf_remove_front(in, n + 1);
		if (s->bang_lines && *line == '!') {
			mcp_server_gone(s, line + 1);
			free(line);
			return -1;
		}
		if (n > MCP_MESSAGE_MAX) {
			free(line);
			mcp_server_gone(s, "it sent a message over the "
			    "limit of " MCP_MESSAGE_MAX_TEXT);
			return -1;
		}
		mcp_server_recv(s, line, n);
		free(line);
		if (s->tp == NULL)
			return -1;
	}
	if (in->len > MCP_MESSAGE_MAX) {
		mcp_server_gone(s, "it sent a message over the limit of "
		    MCP_MESSAGE_MAX_TEXT);
		return -1;
	}
	return 0;
}

void
mcp_server_died(struct mcp_server *s, const char *why, struct buf *err)
{
	char	*tail, *msg;

	while (err->len > 0 && isspace((unsigned char)err->data[err->len - 1]))
		err->len--;
	if (err->len == 0) {
		mcp_server_gone(s, why);
		return;
	}
	buf_addc(err, '\0');
	tail = utf8_vis(err->data, UTF8_VIS_TEXT);
	msg = xprintf("%s; its last words: %s", why, tail);
	mcp_server_gone(s, msg);
	free(msg);
	free(tail);
}

void
mcp_server_gone(struct mcp_server *s, const char *why)
{
	mcp_srv_down((struct mcp_srv *)s, "%s", why);
}

/* What the session asks. */

int
mcp_prepare(struct mcp *m)
{
	struct mcp_srv	*srv;
	int		 ready = 1;

	if (m == NULL)
		return 1;
	for (srv = m->srvs; srv != NULL; srv = srv->next) {
		if (srv->list_failed)
			continue;
		if (srv->list_id != 0 || (srv->tools == NULL &&
		    srv->state == MS_STARTING)) {
			ready = 0;
			continue;
		}
		if (srv->tools != NULL)
			continue;
		srv->list_wanted = 1;
		mcp_srv_start(srv);
		if (!srv->list_failed)
			ready = 0;
	}
	return ready;
}

void
mcp_rearm(struct mcp *m)
{
	struct mcp_srv	*srv;

	for (srv = m != NULL ? m->srvs : NULL; srv != NULL; srv = srv->next)
		srv->list_failed = 0;
}

void
mcp_idle(struct mcp *m)
{
	struct mcp_srv	*srv;
	struct mcp_call	*c;

	for (srv = m != NULL ? m->srvs : NULL; srv != NULL; srv = srv->next) {
		if (srv->s.transport != &mcp_sandbox_transport ||
		    srv->s.tp == NULL || srv->list_id != 0)
			continue;
		for (c = m->calls; c != NULL && c->srv != srv; c = c->next)
			;
		if (c != NULL)
			continue;
		srv->s.transport->stop(&srv->s);
		srv->state = MS_DOWN;
		evtimer_del(srv->timer);
	}
}

int
mcp_is_tool(const char *name)
{
	return name != NULL && strncmp(name, MCP_PREFIX,
	    strlen(MCP_PREFIX)) == 0;
}

/* Names the model's APIs take: [A-Za-z0-9_-]{1,64}. */
static int
mcp_name_ok(const char *s)
{
	size_t	 n = 0;

	for (; *s != '\0'; s++, n++) {
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return 0;
	}
	return n > 0 && n <= 64;
}

cJSON *
mcp_tools(struct mcp *m)
{
	struct mcp_srv	*srv;
	const cJSON	*t, *schema;
	cJSON		*out = cJSON_CreateArray(), *o, *p;
	const char	*d;
	char		*name;

	for (srv = m != NULL ? m->srvs : NULL; srv != NULL; srv = srv->next) {
		cJSON_ArrayForEach(t, srv->tools) {
			name = xprintf(MCP_PREFIX "%s__%s", srv->s.name,
			    json_str(t, "name"));
			if (!mcp_name_ok(name)) {
				free(name);
				continue;
			}
			o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name", name);
			free(name);
			d = json_str(t, "description");
			name = xprintf("(MCP server %s) %s", srv->s.name,
			    d != NULL ? d : "");
			cJSON_AddStringToObject(o, "description", name);
			free(name);
			schema = cJSON_GetObjectItemCaseSensitive(t,
			    "inputSchema");
			p = cJSON_IsObject(schema) ? cJSON_Duplicate(schema, 1) :
			    cJSON_CreateObject();
			cJSON_DeleteItemFromObjectCaseSensitive(p, "$schema");
			if (json_str(p, "type") == NULL)
				cJSON_AddStringToObject(p, "type", "object");
			cJSON_AddItemToObject(o, "parameters", p);
			cJSON_AddItemToArray(out, o);
		}
	}
	return out;
}

static void
mcp_call_send(struct mcp_call *c)
{
	struct mcp_srv	*srv = c->srv;
	cJSON		*msg, *params, *meta;

	msg = mcp_request(srv, "tools/call", &c->id);
	params = cJSON_AddObjectToObject(msg, "params");
	cJSON_AddStringToObject(params, "name", c->tool);
	cJSON_AddItemToObject(params, "arguments", c->args != NULL ?
	    cJSON_Duplicate(c->args, 1) : cJSON_CreateObject());
	meta = cJSON_AddObjectToObject(params, "_meta");
	cJSON_AddNumberToObject(meta, "progressToken", (double)c->id);
	mcp_srv_send(srv, msg);
}

static int
mcp_has_tool(struct mcp_srv *srv, const char *tool)
{
	const cJSON	*t;

	cJSON_ArrayForEach(t, srv->tools) {
		if (json_str(t, "name") != NULL &&
		    strcmp(json_str(t, "name"), tool) == 0)
			return 1;
	}
	return 0;
}

/* The server of tool name (mcp__S__T), or NULL; *tool: T. */
static struct mcp_srv *
mcp_find_srv(struct mcp *m, const char *name, const char **tool)
{
	struct mcp_srv	*srv;
	const char	*s = name + strlen(MCP_PREFIX), *sep;

	sep = strstr(s, "__");
	*tool = sep != NULL ? sep + 2 : "";
	for (srv = m->srvs; srv != NULL && sep != NULL; srv = srv->next) {
		if (strlen(srv->s.name) == (size_t)(sep - s) &&
		    strncmp(srv->s.name, s, (size_t)(sep - s)) == 0)
			return srv;
	}
	return NULL;
}

int
mcp_changes_files(struct mcp *m, const char *name)
{
	struct mcp_srv	*srv;
	const char	*tool;

	if (m == NULL || !mcp_is_tool(name))
		return 0;
	srv = mcp_find_srv(m, name, &tool);
	return srv != NULL && srv->s.transport == &mcp_sandbox_transport;
}

struct mcp_call *
mcp_call(struct mcp *m, const char *name, const cJSON *args, size_t cap,
    mcp_progress_fn progress, mcp_done_fn done, void *arg)
{
	struct mcp_call	*c = xcalloc(1, sizeof *c);
	struct mcp_srv	*srv;
	const char	*tool;

	c->mcp = m;
	c->cap = cap;
	c->progress = progress;
	c->done = done;
	c->arg = arg;
	c->args = cJSON_IsObject(args) ? cJSON_Duplicate(args, 1) : NULL;
	c->timer = evtimer_new(m->host.base, mcp_call_timeout, c);
	c->next = m->calls;
	m->calls = c;
	srv = mcp_find_srv(m, name, &tool);
	c->tool = xstrdup(tool);
	if (srv == NULL) {
		mcp_call_end(c, xprintf("%s: no such MCP server in holt.conf",
		    name), 1, 0);
		return c;
	}
	if (srv->tools != NULL && !mcp_has_tool(srv, c->tool)) {
		mcp_call_end(c, xprintf("%s: mcp server '%s' has no tool '%s'",
		    name, srv->s.name, c->tool), 1, 0);
		return c;
	}
	c->srv = srv;
	mcp_call_arm(c);
	if (srv->state == MS_READY)
		mcp_call_send(c);
	else
		mcp_srv_start(srv);	/* ready sends it */
	return c;
}

void
mcp_call_cancel(struct mcp_call *c)
{
	struct mcp_srv	*srv = c->srv;
	cJSON		*msg, *params;

	if (c->ending)
		return;
	if (srv != NULL && c->id != 0 && srv->s.tp != NULL) {
		msg = cJSON_CreateObject();
		cJSON_AddStringToObject(msg, "method", "notifications/cancelled");
		params = cJSON_AddObjectToObject(msg, "params");
		cJSON_AddNumberToObject(params, "requestId", (double)c->id);
		cJSON_AddStringToObject(params, "reason", "interrupted by the "
		    "user");
		mcp_srv_send(srv, msg);
	}
	mcp_call_end(c, xstrdup("Interrupted by the user."), 1, 1);
}

void
mcp_call_forget(struct mcp_call *c)
{
	mcp_call_cancel(c);
	c->done = NULL;
}
