/*
 * e2b-server.c: the HTTP side of holt e2b serve. One evhttp server on one
 * port serves both halves of E2B's API: a request that names a sandbox in
 * the E2b-Sandbox-Id header goes to that sandbox's envd API (checked
 * against its X-Access-Token), any other to the control plane (checked
 * against the X-API-KEY that holt e2b key prints). Bodies are bounded by
 * evhttp (413 past E2B_MAX_BODY), and a bad request is answered and
 * forgotten: nothing here exits on a client's input.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <event2/bufferevent.h>
#include <event2/buffer.h>
#include <sys/queue.h>

#include <event2/keyvalq_struct.h>

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2b.h"

static const struct {
	const char	*code;
	int		 http;
} connect_codes[] = {
	{ "canceled", 499 }, { "unknown", 500 }, { "invalid_argument", 400 },
	{ "deadline_exceeded", 504 }, { "not_found", 404 },
	{ "already_exists", 409 }, { "permission_denied", 403 },
	{ "resource_exhausted", 429 }, { "failed_precondition", 400 },
	{ "aborted", 409 }, { "out_of_range", 400 }, { "unimplemented", 501 },
	{ "internal", 500 }, { "unavailable", 503 }, { "data_loss", 500 },
	{ "unauthenticated", 401 },
};

void
e2b_reply_json(struct evhttp_request *req, int code, const cJSON *j)
{
	struct evbuffer	*b = evbuffer_new();
	char		*s;

	if (j != NULL) {
		s = json_print(j);
		evbuffer_add(b, s, strlen(s));
		free(s);
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Content-Type", "application/json");
	}
	evhttp_send_reply(req, code, NULL, b);
	evbuffer_free(b);
}

void
e2b_reply_error(struct evhttp_request *req, int code, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;
	cJSON	*j;

	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	j = cJSON_CreateObject();
	cJSON_AddNumberToObject(j, "code", code);
	cJSON_AddStringToObject(j, "message", msg);
	e2b_reply_json(req, code, j);
	cJSON_Delete(j);
	free(msg);
}

void
e2b_reply_connect_error(struct evhttp_request *req, const char *code,
    const char *message)
{
	cJSON	*j;
	size_t	 i;
	int	 http = 500;

	for (i = 0; i < nitems(connect_codes); i++) {
		if (strcmp(connect_codes[i].code, code) == 0)
			http = connect_codes[i].http;
	}
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "code", code);
	cJSON_AddStringToObject(j, "message", message);
	e2b_reply_json(req, http, j);
	cJSON_Delete(j);
}

void
e2b_reply_stream_error(struct evhttp_request *req, const char *code,
    const char *message)
{
	struct evbuffer	*b = evbuffer_new();
	unsigned char	 hdr[5];
	cJSON		*j = cJSON_CreateObject(), *e;
	char		*s;
	size_t		 len;

	e = cJSON_AddObjectToObject(j, "error");
	cJSON_AddStringToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	s = json_print(j);
	cJSON_Delete(j);
	len = strlen(s);
	hdr[0] = 0x02;	/* end of stream */
	hdr[1] = (unsigned char)(len >> 24);
	hdr[2] = (unsigned char)(len >> 16);
	hdr[3] = (unsigned char)(len >> 8);
	hdr[4] = (unsigned char)len;
	evbuffer_add(b, hdr, sizeof hdr);
	evbuffer_add(b, s, len);
	free(s);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/connect+json");
	evhttp_send_reply(req, 200, NULL, b);
	evbuffer_free(b);
}

const char *
e2b_envd_code(const char *m)
{
	if (m == NULL)
		return "unknown";
	if (strstr(m, "No such file") != NULL || strstr(m, "no such") != NULL)
		return "not_found";
	if (strstr(m, "File exists") != NULL)
		return "already_exists";
	if (strstr(m, "Permission denied") != NULL ||
	    strstr(m, "outside") != NULL || strstr(m, "not below") != NULL ||
	    strstr(m, "Operation not permitted") != NULL)
		return "permission_denied";
	if (strstr(m, "Not a directory") != NULL ||
	    strstr(m, "Is a directory") != NULL ||
	    strstr(m, "not empty") != NULL ||
	    strstr(m, "Directory not empty") != NULL)
		return "invalid_argument";
	return "internal";
}

char *
e2b_body(struct evhttp_request *req, size_t max, size_t *lenp)
{
	struct evbuffer	*in = evhttp_request_get_input_buffer(req);
	size_t		 len = evbuffer_get_length(in);
	char		*s;

	if (len > max)
		return NULL;
	s = xmalloc(len + 1);
	evbuffer_copyout(in, s, len);
	s[len] = '\0';
	if (lenp != NULL)
		*lenp = len;
	return s;
}

cJSON *
e2b_body_json(struct evhttp_request *req, size_t max, char **cause)
{
	char	*s;
	size_t	 len;
	cJSON	*j;

	if ((s = e2b_body(req, max, &len)) == NULL) {
		*cause = xprintf("request body over %zu bytes", max);
		return NULL;
	}
	if (len == 0) {
		free(s);
		return cJSON_CreateObject();
	}
	j = cJSON_ParseWithLength(s, len);
	free(s);
	if (j == NULL || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		*cause = xstrdup("request body: not a JSON object");
		return NULL;
	}
	return j;
}

char *
e2b_query(struct evhttp_request *req, const char *key)
{
	const struct evhttp_uri	*u = evhttp_request_get_evhttp_uri(req);
	const char		*q, *v;
	struct evkeyvalq	 kv;
	char			*r = NULL;

	if (u == NULL || (q = evhttp_uri_get_query(u)) == NULL)
		return NULL;
	TAILQ_INIT(&kv);
	if (evhttp_parse_query_str(q, &kv) != 0)
		return NULL;
	if ((v = evhttp_find_header(&kv, key)) != NULL)
		r = xstrdup(v);
	evhttp_clear_headers(&kv);
	return r;
}

int
e2b_envd_connect(struct sandbox *sb, char **cause)
{
	struct timeval	 tv = { E2B_ENVD_TIMEOUT_S, 0 };
	cJSON		*hello;
	int		 fd, rc;

	/* The timeouts hold from the hello on (its reply, id 0, is skipped
	 * by envd_call like any frame not its own). */
	if ((fd = sandbox_connect_later(sb, cause)) == -1)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	hello = sandbox_hello_new();
	rc = frame_write_fd(fd, hello);
	cJSON_Delete(hello);
	if (rc != 0) {
		*cause = xprintf("sandbox '%s': envd: %s", sandbox_id(sb),
		    strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

char *
e2b_path(const char *path)
{
	if (path == NULL || *path == '\0')
		return xstrdup(E2B_HOME);
	if (*path == '/')
		return xstrdup(path);
	if (path[0] == '~' && (path[1] == '/' || path[1] == '\0'))
		return xprintf("%s%s", E2B_HOME, path + 1);
	return xprintf("%s/%s", E2B_HOME, path);
}

/* Compares without stopping early, so timing tells nothing of the key. */
static int
secret_equal(const char *a, const char *b)
{
	size_t		 la = strlen(a), lb = strlen(b), i;
	unsigned char	 d = la != lb;

	for (i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

struct e2b_box *
e2b_server_box(struct e2b_server *srv, const char *id)
{
	struct e2b_box	*b;

	for (b = srv->boxes; b != NULL; b = b->next) {
		if (strcmp(b->id, id) == 0)
			return b;
	}
	if (strncmp(id, "sbx-", 4) != 0 || strchr(id, '/') != NULL ||
	    strlen(id) > 64)
		return NULL;
	if ((b = e2b_box_load(id)) != NULL) {
		b->next = srv->boxes;
		srv->boxes = b;
	}
	return b;
}

void
e2b_server_forget_box(struct e2b_server *srv, const char *id)
{
	struct e2b_box	**bp, *b;

	for (bp = &srv->boxes; (b = *bp) != NULL; bp = &b->next) {
		if (strcmp(b->id, id) == 0) {
			*bp = b->next;
			e2b_box_free(b);
			return;
		}
	}
}

/* A request for a sandbox's own API (envd's, in E2B). */
static void
envd_route(struct e2b_server *srv, struct evhttp_request *req,
    const char *id, const char *path)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	struct e2b_box		*box;
	struct sandbox		*sb;
	const char		*tok;
	char			*cause = NULL;
	enum sandbox_state	 st;

	if ((box = e2b_server_box(srv, id)) == NULL ||
	    (sb = sandbox_open(id, &cause)) == NULL) {
		free(cause);
		e2b_reply_error(req, 502, "sandbox '%s': not found", id);
		return;
	}
	if (strcmp(path, "/health") == 0) {
		st = sandbox_state(sb);
		if (st == SANDBOX_RUNNING)
			evhttp_send_reply(req, 204, NULL, NULL);
		else
			e2b_reply_error(req, 502, "sandbox '%s': %s", id,
			    sandbox_state_name(st));
		sandbox_free(sb);
		return;
	}
	tok = evhttp_find_header(h, "X-Access-Token");
	if (tok == NULL || !secret_equal(tok, box->token)) {
		e2b_reply_error(req, 401, "sandbox '%s': %s X-Access-Token",
		    id, tok == NULL ? "no" : "wrong");
		sandbox_free(sb);
		return;
	}
	if ((st = sandbox_state(sb)) != SANDBOX_RUNNING) {
		e2b_reply_error(req, 502, "sandbox '%s': %s (Sandbox.connect "
		    "resumes it)", id, sandbox_state_name(st));
		sandbox_free(sb);
		return;
	}
	if (strcmp(path, "/files") == 0)
		e2b_files_handle(srv, req, box, sb);
	else if (strncmp(path, "/process.Process/", 17) == 0)
		e2b_process_handle(srv, req, box, sb, path + 17);
	else if (strncmp(path, "/filesystem.Filesystem/", 23) == 0)
		e2b_fs_handle(srv, req, box, sb, path + 23);
	else
		e2b_reply_error(req, 404, "no such route: %s", path);
	sandbox_free(sb);
}

/*
 * A stream's events are small writes: without TCP_NODELAY each could wait
 * for the client's delayed ACK (40 ms).
 */
static void
nodelay(struct evhttp_request *req)
{
	struct evhttp_connection	*evcon;
	evutil_socket_t			 fd;
	int				 one = 1;

	if ((evcon = evhttp_request_get_connection(req)) != NULL &&
	    (fd = bufferevent_getfd(evhttp_connection_get_bufferevent(
	    evcon))) != -1)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void
e2b_server_route(struct evhttp_request *req, void *arg)
{
	struct e2b_server	*srv = arg;
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	const struct evhttp_uri	*u = evhttp_request_get_evhttp_uri(req);
	const char		*path, *id, *key;

	nodelay(req);
	path = u != NULL ? evhttp_uri_get_path(u) : NULL;
	if (path == NULL || *path != '/') {
		e2b_reply_error(req, 400, "bad request path");
		return;
	}
	if ((id = evhttp_find_header(h, "E2b-Sandbox-Id")) != NULL) {
		envd_route(srv, req, id, path);
		return;
	}
	if (strcmp(path, "/health") == 0) {
		e2b_reply_json(req, 200, NULL);
		return;
	}
	key = evhttp_find_header(h, "X-API-KEY");
	if (key == NULL || !secret_equal(key, srv->key)) {
		e2b_reply_error(req, 401, "%s X-API-KEY (holt e2b key prints "
		    "the key)", key == NULL ? "no" : "wrong");
		return;
	}
	e2b_api_handle(srv, req, path);
}

static void
tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	e2b_api_expire(arg);
}

static int
split_listen(const char *listen, char **host, unsigned short *port)
{
	const char	*colon = strrchr(listen, ':');
	char		*end;
	long		 p;

	if (colon == NULL || colon == listen)
		return -1;
	p = strtol(colon + 1, &end, 10);
	if (*end != '\0' || end == colon + 1 || p < 0 || p > 65535)
		return -1;
	*host = xstrndup(listen, colon - listen);
	if ((*host)[0] == '[' && (*host)[strlen(*host) - 1] == ']') {
		memmove(*host, *host + 1, strlen(*host));
		(*host)[strlen(*host) - 1] = '\0';
	}
	*port = (unsigned short)p;
	return 0;
}

struct e2b_server *
e2b_server_new(struct event_base *base, const char *listen, char **cause)
{
	struct e2b_server	*srv;
	struct evhttp_bound_socket *bs;
	struct sockaddr_storage	 ss;
	socklen_t		 sl = sizeof ss;
	char			*host, addr[INET6_ADDRSTRLEN];
	unsigned short		 port;
	struct timeval		 one = { 1, 0 };
	struct sandbox		**list;
	size_t			 n, i;

	if (split_listen(listen, &host, &port) != 0) {
		*cause = xprintf("--listen '%s': use ADDR:PORT, such as %s",
		    listen, E2B_DEFAULT_LISTEN);
		return NULL;
	}
	srv = xcalloc(1, sizeof *srv);
	srv->base = base;
	srv->mode = POLICY_TRUST;
	srv->name = "e2b";
	srv->ask_timeout_s = 600;
	if ((srv->key = e2b_key_get(cause)) == NULL) {
		free(host);
		free(srv);
		return NULL;
	}
	srv->http = evhttp_new(base);
	evhttp_set_max_body_size(srv->http, E2B_MAX_BODY);
	evhttp_set_max_headers_size(srv->http, 64 * 1024);
	evhttp_set_timeout(srv->http, 300);
	evhttp_set_allowed_methods(srv->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_PATCH |
	    EVHTTP_REQ_HEAD);
	evhttp_set_gencb(srv->http, e2b_server_route, srv);
	if ((bs = evhttp_bind_socket_with_handle(srv->http, host, port)) ==
	    NULL) {
		*cause = xprintf("--listen '%s': %s", listen, strerror(errno));
		free(host);
		e2b_server_free(srv);
		return NULL;
	}
	free(host);
	if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&ss,
	    &sl) == 0) {
		if (ss.ss_family == AF_INET6) {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->
			    sin6_addr, addr, sizeof addr);
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
			printf("holt e2b: listening on http://[%s]:%u\n", addr,
			    port);
		} else {
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->
			    sin_addr, addr, sizeof addr);
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
			printf("holt e2b: listening on http://%s:%u\n", addr,
			    port);
		}
		fflush(stdout);
	}
	/* Timeouts run on from the boxes' files across restarts. */
	list = sandbox_list(&n);
	for (i = 0; i < n; i++)
		e2b_server_box(srv, sandbox_id(list[i]));
	sandbox_list_free(list, n);
	srv->tick = event_new(base, -1, EV_PERSIST, tick, srv);
	event_add(srv->tick, &one);
	return srv;
}

void
e2b_server_free(struct e2b_server *srv)
{
	struct e2b_box	*b;

	if (srv == NULL)
		return;
	e2b_control_free(srv->control);
	e2b_process_free_all(srv);
	if (srv->tick != NULL)
		event_free(srv->tick);
	if (srv->http != NULL)
		evhttp_free(srv->http);
	e2b_ask_free_all(srv);
	cJSON_Delete(srv->always_writes);
	while ((b = srv->boxes) != NULL) {
		srv->boxes = b->next;
		e2b_box_free(b);
	}
	if (srv->policy != NULL)
		policy_free(srv->policy);
	free(srv->policy_file);
	free(srv->key);
	free(srv);
}
