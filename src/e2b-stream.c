/*
 * e2b-stream.c: the server streams of E2B's envd API (Connect protocol,
 * JSON codec): envelopes of 1 byte of flags, a 4-byte big-endian length
 * and a JSON message, sent as chunks of one HTTP/1.1 reply and ended by an
 * end-of-stream envelope. A stream holds its own connection to the
 * sandbox's holt-envd, reads it only while the client keeps up (so envd
 * slows the command rather than holt growing), and hands each of envd's
 * frames to its owner's callback (e2b-process.c, e2b-files.c). A client
 * that goes away only closes that envd connection: what it ran goes on.
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2b.h"

#define STREAM_HIGH_WATER	(4 * 1024 * 1024)	/* bytes queued to a client */
#define KEEPALIVE_S		30
#define STREAM_READ_MAX		(1024 * 1024)	/* from envd, at once */

static void
stream_free(struct e2b_stream *st)
{
	e2b_ask_free(st->ask);
	cJSON_Delete(st->held);
	if (st->bev != NULL)
		bufferevent_free(st->bev);	/* closes the envd socket */
	if (st->keepalive != NULL)
		event_free(st->keepalive);
	free(st->sandbox);
	free(st->tag);
	cJSON_Delete(st->config);
	free(st);
}

static void
stream_drained(struct evhttp_connection *evcon, void *arg)
{
	struct e2b_stream	*st = arg;

	(void)evcon;
	if (st->read_paused && st->bev != NULL) {
		st->read_paused = 0;
		bufferevent_enable(st->bev, EV_READ);
	}
}

void
e2b_stream_send_buf(struct e2b_stream *st, unsigned char flags,
    struct evbuffer *b)
{
	unsigned char	 hdr[5];
	size_t		 len = evbuffer_get_length(b), queued;

	if (st->req == NULL)
		return;
	hdr[0] = flags;
	hdr[1] = (unsigned char)(len >> 24);
	hdr[2] = (unsigned char)(len >> 16);
	hdr[3] = (unsigned char)(len >> 8);
	hdr[4] = (unsigned char)len;
	evbuffer_prepend(b, hdr, sizeof hdr);
	queued = evbuffer_get_length(bufferevent_get_output(
	    evhttp_connection_get_bufferevent(st->evcon)));
	if (queued + len > STREAM_HIGH_WATER && st->bev != NULL) {
		/* Stop reading envd until the client took it: envd then
		 * slows the command rather than holt growing. */
		st->read_paused = 1;
		bufferevent_disable(st->bev, EV_READ);
	}
	evhttp_send_reply_chunk_with_cb(st->req, b, stream_drained, st);
}

static void
stream_send(struct e2b_stream *st, unsigned char flags, const char *text,
    size_t len)
{
	struct evbuffer	*b = evbuffer_new();

	evbuffer_add(b, text, len);
	e2b_stream_send_buf(st, flags, b);
	evbuffer_free(b);
}

void
e2b_stream_send(struct e2b_stream *st, const char *text, size_t len)
{
	stream_send(st, 0, text, len);
}

void
e2b_stream_send_json(struct e2b_stream *st, unsigned char flags,
    const cJSON *j)
{
	char	*s = json_print(j);

	stream_send(st, flags, s, strlen(s));
	free(s);
}

static void
stream_closed(struct evhttp_connection *evcon, void *arg)
{
	struct e2b_stream	*st = arg;
	struct evhttp_request	*req = st->req;

	(void)evcon;
	log_debug("sandbox '%s': client left a stream", st->sandbox);
	st->req = NULL;
	/* Orphaned by the client's going: ours to free. Otherwise (the
	 * server is shutting down) the connection frees it. */
	if (req != NULL && evhttp_request_get_connection(req) == NULL)
		evhttp_send_reply_end(req);
	stream_free(st);
}

void
e2b_stream_end(struct e2b_stream *st, const char *code, const char *message)
{
	cJSON	*j = cJSON_CreateObject(), *e;

	if (code != NULL) {
		e = cJSON_AddObjectToObject(j, "error");
		cJSON_AddStringToObject(e, "code", code);
		cJSON_AddStringToObject(e, "message", message);
	}
	e2b_stream_send_json(st, 0x02, j);
	cJSON_Delete(j);
	if (st->req != NULL) {
		evhttp_connection_set_closecb(st->evcon, NULL, NULL);
		evhttp_send_reply_end(st->req);
		st->req = NULL;
	}
	stream_free(st);
}

static int
is_output(const char *ev)
{
	return ev != NULL && (strcmp(ev, "stdout") == 0 ||
	    strcmp(ev, "stderr") == 0 || strcmp(ev, "pty") == 0);
}

#define ONES		0x0101010101010101ULL
#define HIGHS		(ONES * 0x80)

/* Per byte of x (all below 0x80), its high bit: the byte is in lo..hi. */
static uint64_t
swar_in(uint64_t x, unsigned lo, unsigned hi)
{
	return (x + ONES * (0x80 - lo)) & ~(x + ONES * (0x7f - hi)) & HIGHS;
}

/* Per byte of x (all below 0x80), its high bit: the byte is c. */
static uint64_t
swar_eq(uint64_t x, unsigned c)
{
	uint64_t	 v = x ^ (ONES * c);

	return ~(((v & ~HIGHS) + ~HIGHS) | v | ~HIGHS);
}

/* 8 bytes of base64 text, what may go into a JSON string unescaped. */
static int
b64_ok8(uint64_t x)
{
	return (x & HIGHS) == 0 && (swar_in(x | ONES * 0x20, 'a', 'z') |
	    swar_in(x, '0', '9') | swar_eq(x, '+') | swar_eq(x, '/') |
	    swar_eq(x, '=')) == HIGHS;
}

/* Base64 text, 8 bytes at a time: this runs over all of a stream. */
static int
b64_ok(const unsigned char *s, size_t n)
{
	unsigned char	 last[8];
	uint64_t	 x;
	size_t		 i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&x, s + i, 8);
		if (!b64_ok8(x))
			return 0;
	}
	memset(last, 'A', sizeof last);
	memcpy(last, s + i, n - i);
	memcpy(&x, last, 8);
	return b64_ok8(x);
}

/* The n bytes of in at off, base64 (checked in place, chain by chain). */
static int
b64_ok_at(struct evbuffer *in, size_t off, size_t n)
{
	struct evbuffer_ptr	 ptr;
	struct evbuffer_iovec	*v;
	int			 nv, i, ok = 1;
	size_t			 left = n, k;

	if (n % 4 != 0 || evbuffer_ptr_set(in, &ptr, off, EVBUFFER_PTR_SET))
		return 0;
	if (n == 0)
		return 1;
	nv = evbuffer_peek(in, (ev_ssize_t)n, &ptr, NULL, 0);
	v = xcalloc((size_t)nv, sizeof *v);
	nv = evbuffer_peek(in, (ev_ssize_t)n, &ptr, v, nv);
	for (i = 0; i < nv && left > 0 && ok; i++) {
		k = v[i].iov_len < left ? v[i].iov_len : left;
		ok = b64_ok(v[i].iov_base, k);
		left -= k;
	}
	free(v);
	return ok && left == 0;
}

/*
 * An output frame as envd writes it when asked for base64 ("b64"), of n
 * bytes after its length: {...,"data_b64":"PAYLOAD"}. Only the few bytes
 * before the payload are parsed (with an empty payload); the payload,
 * checked where it lies, is moved on to the client as it is by
 * e2b_stream_output: parsing, decoding, encoding and copying it again
 * were where the time of a stream went. NULL when the frame is not of that
 * shape.
 */
static cJSON *
stream_output(struct e2b_stream *st, struct evbuffer *in, size_t n)
{
	static const char	 key[] = ",\"data_b64\":\"";
	char			 head[256 + 2], tail[2], *k;
	size_t			 hn = n < 256 ? n : 256, voff;
	struct evbuffer_ptr	 ptr;
	cJSON			*f;

	if (n < sizeof key + 2 ||
	    evbuffer_ptr_set(in, &ptr, 4 + n - 2, EVBUFFER_PTR_SET) != 0 ||
	    evbuffer_copyout_from(in, &ptr, tail, 2) != 2 ||
	    tail[0] != '"' || tail[1] != '}' ||
	    evbuffer_ptr_set(in, &ptr, 4, EVBUFFER_PTR_SET) != 0 ||
	    evbuffer_copyout_from(in, &ptr, head, hn) != (ev_ssize_t)hn ||
	    (k = memmem(head, hn, key, sizeof key - 1)) == NULL)
		return NULL;
	voff = (size_t)(k - head) + sizeof key - 1;
	if (voff > n - 2 || !b64_ok_at(in, 4 + voff, n - 2 - voff))
		return NULL;
	memcpy(head + voff, "\"}", 2);
	if ((f = cJSON_ParseWithLength(head, voff + 2)) == NULL ||
	    !is_output(json_str(f, "event"))) {
		cJSON_Delete(f);
		return NULL;
	}
	st->out_in = in;
	st->out_off = 4 + voff;
	st->out_len = n - 2 - voff;
	return f;
}

size_t
e2b_stream_output(struct e2b_stream *st, struct evbuffer *b)
{
	size_t	 n = st->out_len;

	if (st->out_in == NULL || n == 0)
		return 0;
	evbuffer_drain(st->out_in, st->out_off);
	evbuffer_remove_buffer(st->out_in, b, n);
	st->out_taken = st->out_off + n;
	st->out_len = 0;
	return n;
}

/*
 * The next of envd's frames, read in place from the bufferevent (the
 * caller drains its *lenp bytes once it is handled): 1, 0 when it has not
 * all come, -1 with *cause. Output may come as base64 passed on as it is
 * (stream_output), so its bytes need no UTF-8 repair; the other frames
 * get it, as everything from a peer does.
 */
static int
stream_next(struct e2b_stream *st, struct evbuffer *in, cJSON **fp,
    size_t *lenp, char **cause)
{
	unsigned char	 h[4], *p;
	size_t		 n;

	*fp = NULL;
	if (evbuffer_copyout(in, h, 4) != 4)
		return 0;
	n = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
	if (n > FRAME_MAX) {
		*cause = xprintf("envd: a frame of %zu bytes", n);
		return -1;
	}
	if (evbuffer_get_length(in) < 4 + n)
		return 0;
	*lenp = 4 + n;
	if ((*fp = stream_output(st, in, n)) != NULL)
		return 1;
	p = evbuffer_pullup(in, 4 + n);
	*fp = cJSON_ParseWithLength((const char *)p + 4, n);
	if (*fp == NULL || !cJSON_IsObject(*fp)) {
		cJSON_Delete(*fp);
		*fp = NULL;
		*cause = xstrdup("envd: a frame that is not a JSON object");
		return -1;
	}
	if (!is_output(json_str(*fp, "event")))
		utf8_repair_json(*fp);
	return 1;
}

static void
stream_read(struct bufferevent *bev, void *arg)
{
	struct e2b_stream	*st = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	cJSON			*f;
	char			*cause = NULL;
	size_t			 len;
	int			 r;

	while ((r = stream_next(st, in, &f, &len, &cause)) != 0) {
		if (r < 0) {
			e2b_stream_end(st, "internal", cause);
			free(cause);
			return;
		}
		r = st->frame(st, f);
		cJSON_Delete(f);
		if (r)
			return;		/* st is gone, and in with it */
		evbuffer_drain(in, len - st->out_taken);
		st->out_in = NULL;
		st->out_len = st->out_taken = 0;
	}
}

static void
stream_event(struct bufferevent *bev, short what, void *arg)
{
	struct e2b_stream	*st = arg;
	char			*m;

	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
		m = xprintf("sandbox '%s': its envd went away", st->sandbox);
		e2b_stream_end(st, "unavailable", m);
		free(m);
	}
}

static void
stream_keepalive(evutil_socket_t fd, short ev, void *arg)
{
	struct e2b_stream	*st = arg;

	(void)fd;
	(void)ev;
	e2b_stream_send(st, st->keepalive_msg, strlen(st->keepalive_msg));
}

struct e2b_stream *
e2b_stream_new(struct e2b_server *srv, struct evhttp_request *req,
    struct sandbox *sb)
{
	struct e2b_stream	*st;
	struct timeval		 tv = { KEEPALIVE_S, 0 };

	st = xcalloc(1, sizeof *st);
	st->srv = srv;
	st->req = req;
	st->evcon = evhttp_request_get_connection(req);
	st->sandbox = xstrdup(sandbox_id(sb));
	st->keepalive_msg = "{\"event\":{\"keepalive\":{}}}";
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/connect+json");
	evhttp_send_reply_start(req, 200, NULL);
	evhttp_connection_set_closecb(st->evcon, stream_closed, st);
	st->keepalive = event_new(srv->base, -1, EV_PERSIST, stream_keepalive,
	    st);
	event_add(st->keepalive, &tv);
	return st;
}

int
e2b_stream_envd(struct e2b_stream *st, struct sandbox *sb, cJSON *req,
    e2b_stream_frame_cb cb)
{
	char	*cause = NULL, *frame;
	size_t	 len;
	int	 fd;

	if ((fd = sandbox_connect(sb, &cause)) == -1) {
		e2b_stream_end(st, "unavailable", cause);
		free(cause);
		return -1;
	}
	file_set_nonblock(fd);
	st->frame = cb;
	st->bev = bufferevent_socket_new(st->srv->base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(st->bev, stream_read, NULL, stream_event, st);
	/* Whole frames of output at a time, not libevent's 16 KiB. */
	bufferevent_set_max_single_read(st->bev, STREAM_READ_MAX);
	bufferevent_enable(st->bev, EV_READ);
	cJSON_AddNumberToObject(req, "id", 1);
	frame = frame_encode(req, &len);
	bufferevent_write(st->bev, frame, len);
	free(frame);
	return 0;
}

cJSON *
e2b_stream_request(struct evhttp_request *req)
{
	const char	*ct = evhttp_find_header(
	    evhttp_request_get_input_headers(req), "Content-Type");
	char		*body;
	size_t		 len;
	uint32_t	 n;
	cJSON		*j;

	if (ct == NULL || strncmp(ct, "application/connect+json", 24) != 0) {
		e2b_reply_connect_error(req, "invalid_argument", "streaming "
		    "calls take Content-Type application/connect+json");
		return NULL;
	}
	if ((body = e2b_body(req, E2B_MAX_RPC_BODY, &len)) == NULL) {
		e2b_reply_connect_error(req, "resource_exhausted",
		    "request over 1 MiB");
		return NULL;
	}
	n = len >= 5 ? (uint32_t)(unsigned char)body[1] << 24 |
	    (uint32_t)(unsigned char)body[2] << 16 |
	    (uint32_t)(unsigned char)body[3] << 8 | (unsigned char)body[4] : 0;
	if (len < 5 || (body[0] & 0x01) || n != len - 5 ||
	    (j = cJSON_ParseWithLength(body + 5, n)) == NULL ||
	    !cJSON_IsObject(j)) {
		if (len >= 5 && (body[0] & 0x01))
			e2b_reply_connect_error(req, "unimplemented",
			    "compressed messages are not supported");
		else
			e2b_reply_connect_error(req, "invalid_argument",
			    "request: not one enveloped JSON object");
		free(body);
		return NULL;
	}
	free(body);
	return j;
}
