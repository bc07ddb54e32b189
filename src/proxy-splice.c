/*
 * proxy-splice.c: holt-proxy's relay once a connection is through the
 * policy and its target answered the connect. The bytes of each direction
 * go socket -> pipe -> socket with splice(2): they stay in the kernel and
 * are never copied into the proxy, which is what a download through the
 * proxy costs (a copy through user space each way was about two thirds of
 * the time of a 100 MB download on loopback).
 *
 * A direction makes its pipe when its first bytes come, so a connection
 * held open costs no pipe. A relay owns neither socket; it tells its owner once both directions
 * reached their end (each read end-of-file, all written, the write side
 * shut down) or one of them failed. What was read before the relay started
 * (a request head, a "200 Connection established") is written first, from
 * the evbuffers given to proxy_splice_new, which the relay takes over.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "holt.h"
#include "proxy.h"

/*
 * A read takes what the pipe holds: 64 KB, the default. Larger pipes (1 MB)
 * measured no faster, and they count against the user's pipe budget
 * (fs.pipe-user-pages-soft), past which every new pipe of the user's gets
 * a single page.
 */
#define READ_MAX	(1024 * 1024)
#define ROUND_MAX	(4 * 1024 * 1024) /* a turn, then the others' */

struct half {
	struct proxy_splice	*r;
	int			 from, to;
	int			 pipe[2];
	size_t			 inpipe;	/* read, not yet written */
	size_t			 moved;		/* written, in all */
	struct evbuffer		*pending;	/* written before the pipe */
	int			 eof, shut;
	struct event		*rev, *wev;
};

struct proxy_splice {
	struct half		 up;		/* a -> b */
	struct half		 down;		/* b -> a */
	struct event		*answer;	/* b must speak by then */
	proxy_splice_cb		 cb;
	void			*arg;
	int			 ended;
};

static void	half_run(struct half *);
static int	half_pipe(struct half *);

static void
splice_end(struct proxy_splice *r, enum proxy_splice_end why)
{
	if (r->ended)
		return;
	r->ended = 1;
	/* Nothing came back yet: the target never answered. */
	if (r->answer != NULL && why != PROXY_SPLICE_TIMEOUT)
		why = PROXY_SPLICE_SILENT;
	event_del(r->up.rev);
	event_del(r->up.wev);
	event_del(r->down.rev);
	event_del(r->down.wev);
	if (r->answer != NULL)
		event_del(r->answer);
	r->cb(r, why, r->arg);
}

static void
half_read_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	half_run(arg);
}

static void
answer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	splice_end(arg, PROXY_SPLICE_TIMEOUT);
}

/* A failed read or write: the end, unless it only means "later". */
static int
half_failed(struct half *h, ssize_t n, struct event *wait)
{
	if (n >= 0)
		return 0;
	if (errno == EAGAIN || errno == EINTR) {
		event_add(wait, NULL);
		return 1;
	}
	log_debug("proxy relay: %s", strerror(errno));
	splice_end(h->r, PROXY_SPLICE_ERROR);
	return 1;
}

/* Both directions over: the end. */
static void
half_done(struct half *h)
{
	struct proxy_splice	*r = h->r;

	if (h->shut)
		return;
	h->shut = 1;
	shutdown(h->to, SHUT_WR);
	if ((r->up.shut && r->down.shut) || (h == &r->down && r->answer !=
	    NULL))
		splice_end(r, PROXY_SPLICE_DONE);
}

/*
 * Move what there is, until a socket would block. A turn moves at most
 * ROUND_MAX, then gives the loop back (the read event fires again at once
 * if there is more).
 */
static void
half_run(struct half *h)
{
	struct proxy_splice	*r = h->r;
	size_t			 round = 0;
	ssize_t			 n;

	while (!r->ended && round < ROUND_MAX) {
		if (evbuffer_get_length(h->pending) > 0) {
			n = evbuffer_write(h->pending, h->to);
			if (half_failed(h, n, h->wev))
				return;
			h->moved += (size_t)n;
		} else if (h->inpipe > 0) {
			n = splice(h->pipe[0], NULL, h->to, NULL, h->inpipe,
			    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (half_failed(h, n, h->wev))
				return;
			h->inpipe -= (size_t)n;
			h->moved += (size_t)n;
			round += (size_t)n;
		} else if (h->eof) {
			half_done(h);
			return;
		} else {
			if (h->pipe[0] == -1 && half_pipe(h) != 0)
				return;
			n = splice(h->from, NULL, h->pipe[1], NULL, READ_MAX,
			    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (half_failed(h, n, h->rev))
				return;
			if (n == 0)
				h->eof = 1;
			else if (h == &r->down && r->answer != NULL) {
				/* Then a transfer may pause (a long poll). */
				event_free(r->answer);
				r->answer = NULL;
			}
			h->inpipe += (size_t)n;
		}
	}
	if (!r->ended)
		event_add(h->rev, NULL);
}

static void
half_init(struct half *h, struct proxy_splice *r, struct event_base *base,
    int from, int to)
{
	h->r = r;
	h->from = from;
	h->to = to;
	h->pipe[0] = h->pipe[1] = -1;
	h->rev = event_new(base, from, EV_READ, half_read_cb, h);
	h->wev = event_new(base, to, EV_WRITE, half_read_cb, h);
}

/* Out of descriptors (or the pipe budget): this connection ends. */
static int
half_pipe(struct half *h)
{
	if (pipe2(h->pipe, O_CLOEXEC | O_NONBLOCK) == 0)
		return 0;
	log_warn("proxy relay: no pipe");
	h->pipe[0] = h->pipe[1] = -1;
	splice_end(h->r, PROXY_SPLICE_ERROR);
	return -1;
}

static void
half_release(struct half *h)
{
	if (h->pipe[0] != -1) {
		close(h->pipe[0]);
		close(h->pipe[1]);
	}
	if (h->rev != NULL)
		event_free(h->rev);
	if (h->wev != NULL)
		event_free(h->wev);
	if (h->pending != NULL)
		evbuffer_free(h->pending);
}

struct proxy_splice *
proxy_splice_new(struct event_base *base, int a, int b,
    struct evbuffer *to_b, struct evbuffer *to_a, proxy_splice_cb cb,
    void *arg)
{
	struct proxy_splice	*r;

	r = xcalloc(1, sizeof *r);
	r->cb = cb;
	r->arg = arg;
	r->up.pending = to_b != NULL ? to_b : evbuffer_new();
	r->down.pending = to_a != NULL ? to_a : evbuffer_new();
	half_init(&r->up, r, base, a, b);
	half_init(&r->down, r, base, b, a);
	event_add(r->up.rev, NULL);
	event_add(r->down.rev, NULL);
	if (evbuffer_get_length(r->up.pending) > 0)
		event_add(r->up.wev, NULL);
	if (evbuffer_get_length(r->down.pending) > 0)
		event_add(r->down.wev, NULL);
	return r;
}

/* b must send something within tv, or the relay ends (PROXY_SPLICE_TIMEOUT). */
void
proxy_splice_want_answer(struct proxy_splice *r, struct event_base *base,
    const struct timeval *tv)
{
	r->answer = evtimer_new(base, answer_cb, r);
	evtimer_add(r->answer, tv);
}

void
proxy_splice_free(struct proxy_splice *r)
{
	if (r == NULL)
		return;
	half_release(&r->up);
	half_release(&r->down);
	if (r->answer != NULL)
		event_free(r->answer);
	free(r);
}
