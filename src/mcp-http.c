/*
 * mcp-http.c: an MCP server at a URL (streamable HTTP, url = ...).
 *
 * Every message holt sends is a POST to the URL (Accept: application/json,
 * text/event-stream; Mcp-Session-Id once the server gave one, and
 * MCP-Protocol-Version once negotiated). The server answers a request
 * with one JSON body or with an event stream that carries its progress
 * notifications, its own requests and, last, the response; a notification
 * or a response gets 202 and no body.
 *
 * Once the session is initialized, a GET to the URL opens the stream on
 * which the server sends what belongs to no request (tools/list_changed
 * among them). A server that does not offer it answers 405, and no GET is
 * made again; a stream that drops or fails is opened again after a wait
 * that doubles from MCP_GET_WAIT_MS to MCP_GET_WAIT_MAX_MS (and starts
 * over once a stream carried an event), with the last event's id.
 *
 * The transfers run in a worker thread with its own curl multi handle, so
 * that a POST answering a server's request can go while the stream of the
 * call that caused it is still open, and nothing blocks the loop. The
 * worker hands every message back as one line on a pipe, compact JSON,
 * which the loop reads like a stdio server's output; a transport failure
 * is a line starting with '!' (bang_lines).
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>

#include "mcp-int.h"
#include "sse.h"
#include "dynlib-curl.h"

#define MCP_GET_WAIT_MS		1000	/* first wait before a new GET */
#define MCP_GET_WAIT_MAX_MS	30000

struct http_post;

struct mcp_http {
	/* The loop's. */
	int			 rfd;
	struct event		*rev;
	struct buf		 in;
	pthread_t		 thread;

	/* Shared, under lock. */
	pthread_mutex_t		 lock;
	struct buf		 queue;		/* lines to POST */
	int			 stop;

	/* The worker's. */
	int			 wfd;
	char			*url;
	CURLM			*multi;
	char			*session_id;
	char			*version;	/* MCP-Protocol-Version */
	struct http_post	*posts;
	int			 failed;
	struct http_post	*get;		/* the GET stream, or NULL */
	int			 get_wanted;	/* initialized: open it */
	int			 get_off;	/* the server offers none */
	uint64_t		 get_at;	/* mono_ms of the next GET */
	uint64_t		 get_wait;	/* the wait after this one */
	char			*last_event_id;
};

struct http_post {
	struct mcp_http		*h;
	CURL			*easy;
	struct curl_slist	*headers;
	char			*body;
	int			 is_request;	/* has an id and a method */
	int			 is_init;
	int			 is_initialized;	/* notifications/initialized */
	int			 is_get;
	int			 kind;		/* 0 unknown, 1 JSON, 2 stream */
	struct buf		 resp;
	struct sse_parser	*sse;
	int			 over;		/* too big: abandoned */
	struct http_post	*next;
};

/* The worker: lines to the loop. */

static void
http_emit(struct mcp_http *h, const char *line, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		/* The loop's end may be closed (stop): no SIGPIPE. */
		n = send(h->wfd, line, len, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		line += n;
		len -= (size_t)n;
	}
}

static void
http_fail(struct mcp_http *h, const char *fmt, ...) printflike(2, 3);

static void
http_fail(struct mcp_http *h, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg, *line;

	if (h->failed)
		return;
	h->failed = 1;
	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	line = xprintf("!%s\n", msg);
	http_emit(h, line, strlen(line));
	free(line);
	free(msg);
}

/* One JSON-RPC message (or a batch of them) from the server. */
static void
http_message(struct http_post *p, const char *data, size_t len)
{
	cJSON		*j = cJSON_ParseWithLength(data, len), *it;
	const cJSON	*r;
	char		*s, *line;

	if (j == NULL) {
		/* Not JSON: passed on as it is, for the loop to judge. */
		s = xstrndup(data, len);
		for (line = s; *line != '\0'; line++) {
			if (*line == '\n' || *line == '\r')
				*line = ' ';
		}
		line = xprintf("%s\n", s);
		http_emit(p->h, line, strlen(line));
		free(line);
		free(s);
		return;
	}
	if (p->is_init && (r = cJSON_GetObjectItemCaseSensitive(j,
	    "result")) != NULL && json_str(r, "protocolVersion") != NULL) {
		free(p->h->version);
		p->h->version = xstrdup(json_str(r, "protocolVersion"));
	}
	if (!cJSON_IsArray(j)) {
		it = j;
		j = cJSON_CreateArray();
		cJSON_AddItemToArray(j, it);
	}
	cJSON_ArrayForEach(it, j) {
		s = json_print(it);
		line = xprintf("%s\n", s);
		http_emit(p->h, line, strlen(line));
		free(line);
		free(s);
	}
	cJSON_Delete(j);
}

static int
http_sse_cb(void *arg, const struct sse_event *ev)
{
	struct http_post	*p = arg;

	if (p->is_get && ev->id[0] != '\0') {
		free(p->h->last_event_id);
		p->h->last_event_id = xstrdup(ev->id);
	}
	if (p->is_get)
		p->h->get_wait = MCP_GET_WAIT_MS;	/* it works: start over */
	if (ev->data_len > 0)
		http_message(p, ev->data, ev->data_len);
	return 0;
}

static size_t
http_write_cb(char *ptr, size_t size, size_t n, void *arg)
{
	struct http_post	*p = arg;
	char			*ct = NULL, *cause = NULL;

	n *= size;
	if (p->kind == 0) {
		curl_easy_getinfo(p->easy, CURLINFO_CONTENT_TYPE, &ct);
		p->kind = ct != NULL && strncasecmp(ct, "text/event-stream",
		    17) == 0 ? 2 : 1;
		if (p->kind == 2)
			p->sse = sse_new(MCP_MESSAGE_MAX + 1024,
			    MCP_MESSAGE_MAX + 1024, http_sse_cb, p);
	}
	if (p->kind == 2) {
		if (sse_feed(p->sse, ptr, n, &cause) != 0) {
			free(cause);
			p->over = 1;
			return 0;
		}
		return n;
	}
	if (p->resp.len + n > MCP_MESSAGE_MAX) {
		p->over = 1;
		return 0;
	}
	buf_add(&p->resp, ptr, n);
	return n;
}

static size_t
http_header_cb(char *ptr, size_t size, size_t n, void *arg)
{
	struct http_post	*p = arg;
	size_t			 len = size * n, k = strlen("mcp-session-id:");
	char			*v;

	if (len > k && strncasecmp(ptr, "mcp-session-id:", k) == 0) {
		ptr += k;
		len -= k;
		while (len > 0 && (*ptr == ' ' || *ptr == '\t')) {
			ptr++;
			len--;
		}
		while (len > 0 && strchr(" \t\r\n", ptr[len - 1]) != NULL)
			len--;
		v = xstrndup(ptr, len);
		free(p->h->session_id);
		p->h->session_id = v;
		return size * n;
	}
	return len;
}

static void
http_add_header(struct http_post *p, const char *name, const char *value)
{
	char	*hdr;

	if (value == NULL)
		return;
	hdr = xprintf("%s: %s", name, value);
	p->headers = curl_slist_append(p->headers, hdr);
	free(hdr);
}

/* A transfer to the URL, with the session's headers; the caller adds it. */
static struct http_post *
http_transfer_new(struct mcp_http *h, const char *accept)
{
	struct http_post	*p = xcalloc(1, sizeof *p);

	p->h = h;
	if ((p->easy = curl_easy_init()) == NULL)
		fatalx("curl_easy_init failed");
	http_add_header(p, "Accept", accept);
	http_add_header(p, "Mcp-Session-Id", h->session_id);
	http_add_header(p, "MCP-Protocol-Version", h->version);
	curl_easy_setopt(p->easy, CURLOPT_URL, h->url);
	curl_easy_setopt(p->easy, CURLOPT_WRITEFUNCTION, http_write_cb);
	curl_easy_setopt(p->easy, CURLOPT_WRITEDATA, p);
	curl_easy_setopt(p->easy, CURLOPT_HEADERFUNCTION, http_header_cb);
	curl_easy_setopt(p->easy, CURLOPT_HEADERDATA, p);
	curl_easy_setopt(p->easy, CURLOPT_PRIVATE, (char *)p);
	curl_easy_setopt(p->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->easy, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(p->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	return p;
}

static void
http_transfer_add(struct mcp_http *h, struct http_post *p)
{
	curl_easy_setopt(p->easy, CURLOPT_HTTPHEADER, p->headers);
	curl_multi_add_handle(h->multi, p->easy);
	p->next = h->posts;
	h->posts = p;
}

static void
http_post_start(struct mcp_http *h, const char *line)
{
	struct http_post	*p;
	cJSON			*j = cJSON_Parse(line);
	const char		*method = json_str(j, "method");

	p = http_transfer_new(h, "application/json, text/event-stream");
	p->body = xstrdup(line);
	p->is_request = method != NULL &&
	    cJSON_GetObjectItemCaseSensitive(j, "id") != NULL;
	p->is_init = p->is_request && strcmp(method, "initialize") == 0;
	p->is_initialized = method != NULL && !p->is_request &&
	    strcmp(method, "notifications/initialized") == 0;
	cJSON_Delete(j);
	http_add_header(p, "Content-Type", "application/json");
	curl_easy_setopt(p->easy, CURLOPT_POSTFIELDS, p->body);
	curl_easy_setopt(p->easy, CURLOPT_POSTFIELDSIZE, (long)strlen(p->body));
	http_transfer_add(h, p);
}

/* The stream of what belongs to no request. */
static void
http_get_start(struct mcp_http *h)
{
	struct http_post	*p = http_transfer_new(h, "text/event-stream");

	p->is_get = 1;
	http_add_header(p, "Last-Event-ID", h->last_event_id);
	curl_easy_setopt(p->easy, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(p->easy, CURLOPT_TCP_KEEPALIVE, 1L);
	http_transfer_add(h, p);
	h->get = p;
}

/* The GET stream ended: never again (405, not a stream), or again later. */
static void
http_get_done(struct mcp_http *h, struct http_post *p, CURLcode code,
    long status)
{
	h->get = NULL;
	if (p->over)
		http_fail(h, "it sent a message over the limit of "
		    MCP_MESSAGE_MAX_TEXT);
	else if (code == CURLE_OK && status == 404 && h->session_id != NULL)
		http_fail(h, "%s: the server ended the session (HTTP 404)",
		    h->url);
	else if (code == CURLE_OK && (status == 405 || (status >= 200 &&
	    status <= 299 && p->kind != 2)))
		h->get_off = 1;
	else {
		h->get_at = mono_ms() + h->get_wait;
		h->get_wait = h->get_wait * 2 > MCP_GET_WAIT_MAX_MS ?
		    MCP_GET_WAIT_MAX_MS : h->get_wait * 2;
	}
}

/* The poll's timeout: at most a second, less when a GET is due. */
static int
http_get_due(struct mcp_http *h)
{
	uint64_t	 now;

	if (!h->get_wanted || h->get != NULL || h->get_off || h->failed)
		return 1000;
	now = mono_ms();
	if (now >= h->get_at) {
		http_get_start(h);
		return 0;		/* curl_multi_perform starts it */
	}
	return h->get_at - now < 1000 ? (int)(h->get_at - now) : 1000;
}

static void
http_post_free(struct mcp_http *h, struct http_post *p)
{
	struct http_post	**pp;

	for (pp = &h->posts; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	curl_multi_remove_handle(h->multi, p->easy);
	curl_easy_cleanup(p->easy);
	curl_slist_free_all(p->headers);
	if (h->get == p)
		h->get = NULL;
	free(p->body);
	buf_release(&p->resp);
	sse_free(p->sse);
	free(p);
}

static void
http_post_done(struct mcp_http *h, struct http_post *p, CURLcode code)
{
	long	 status = 0;

	curl_easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &status);
	if (p->is_get) {
		http_get_done(h, p, code, status);
		http_post_free(h, p);
		return;
	}
	if (p->is_initialized && code == CURLE_OK && status >= 200 &&
	    status <= 299)
		h->get_wanted = 1;
	if (p->over)
		http_fail(h, "it sent a message over the limit of "
		    MCP_MESSAGE_MAX_TEXT);
	else if (code != CURLE_OK)
		http_fail(h, "%s: %s", h->url, curl_easy_strerror(code));
	else if (status == 404 && h->session_id != NULL)
		http_fail(h, "%s: the server ended the session (HTTP 404)",
		    h->url);
	else if (status < 200 || status > 299)
		http_fail(h, "%s: HTTP %ld", h->url, status);
	else if (p->kind == 1 && p->resp.len > 0)
		http_message(p, p->resp.data, p->resp.len);
	else if (p->kind == 2 && sse_finish(p->sse) != 0 && p->is_request)
		http_fail(h, "%s: the event stream was cut", h->url);
	http_post_free(h, p);
}

static void *
http_worker(void *arg)
{
	struct mcp_http	*h = arg;
	struct buf	 lines = BUF_INIT;
	CURLMsg		*msg;
	char		*nl, *line;
	int		 running, left, stop, wait_ms;

	for (;;) {
		pthread_mutex_lock(&h->lock);
		stop = h->stop;
		buf_add(&lines, h->queue.data, h->queue.len);
		buf_reset(&h->queue);
		pthread_mutex_unlock(&h->lock);
		if (stop)
			break;
		while (lines.len > 0 && (nl = memchr(lines.data, '\n',
		    lines.len)) != NULL) {
			line = xstrndup(lines.data, (size_t)(nl - lines.data));
			buf_remove_front(&lines, (size_t)(nl - lines.data) + 1);
			if (!h->failed)
				http_post_start(h, line);
			free(line);
		}
		curl_multi_perform(h->multi, &running);
		while ((msg = curl_multi_info_read(h->multi, &left)) != NULL) {
			char *p;
			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &p);
			http_post_done(h, (struct http_post *)p,
			    msg->data.result);
		}
		wait_ms = http_get_due(h);
		curl_multi_poll(h->multi, NULL, 0, wait_ms, NULL);
	}
	while (h->posts != NULL)
		http_post_free(h, h->posts);
	buf_release(&lines);
	return NULL;
}

/* The loop's side. */

static void
http_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mcp_server	*s = arg;
	struct mcp_http		*h = s->tp;
	char			 buf[65536];
	ssize_t			 n;

	(void)what;
	if ((n = read(fd, buf, sizeof buf)) <= 0) {
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		mcp_server_gone(s, "its connection ended");
		return;
	}
	mcp_server_feed(s, &h->in, buf, (size_t)n);
}

static int
http_start(struct mcp_server *s, char **cause)
{
	static int	 global;
	struct mcp_http	*h;
	int		 p[2];

	if (dynlib_load_curl(cause) != 0)
		return -1;
	if (!global) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
			*cause = xstrdup("curl_global_init failed");
			return -1;
		}
		global = 1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0) {
		*cause = xprintf("socketpair: %s", strerror(errno));
		return -1;
	}
	s->bang_lines = 1;
	h = xcalloc(1, sizeof *h);
	h->rfd = p[0];
	h->wfd = p[1];
	file_set_nonblock(h->rfd);
	h->url = xstrdup(s->url);
	h->get_wait = MCP_GET_WAIT_MS;
	h->multi = curl_multi_init();
	pthread_mutex_init(&h->lock, NULL);
	h->rev = event_new(s->base, h->rfd, EV_READ | EV_PERSIST, http_read_cb,
	    s);
	event_add(h->rev, NULL);
	if (pthread_create(&h->thread, NULL, http_worker, h) != 0)
		fatalx("pthread_create failed");
	s->tp = h;
	return 0;
}

static int
http_send(struct mcp_server *s, const char *msg, size_t len, char **cause)
{
	struct mcp_http	*h = s->tp;

	(void)cause;
	pthread_mutex_lock(&h->lock);
	buf_add(&h->queue, msg, len);
	buf_addc(&h->queue, '\n');
	pthread_mutex_unlock(&h->lock);
	curl_multi_wakeup(h->multi);
	return 0;
}

static void
http_stop(struct mcp_server *s)
{
	struct mcp_http	*h = s->tp;

	s->tp = NULL;
	if (h == NULL)
		return;
	pthread_mutex_lock(&h->lock);
	h->stop = 1;
	pthread_mutex_unlock(&h->lock);
	/* A worker blocked handing a line over gets an error, not a wait. */
	shutdown(h->rfd, SHUT_RDWR);
	curl_multi_wakeup(h->multi);
	pthread_join(h->thread, NULL);
	curl_multi_cleanup(h->multi);
	pthread_mutex_destroy(&h->lock);
	event_free(h->rev);
	close(h->rfd);
	close(h->wfd);
	buf_release(&h->in);
	buf_release(&h->queue);
	free(h->url);
	free(h->session_id);
	free(h->version);
	free(h->last_event_id);
	free(h);
}

const struct mcp_transport mcp_http_transport = {
	"http", http_start, http_send, http_stop
};
