/*
 * proxy.h: holt-proxy's relay of an established connection (proxy-splice.c).
 *
 * proxy_splice_new relays between the sockets a and b until both sides
 * ended, then calls cb once; the caller frees the relay (from cb or later)
 * and closes the sockets, which the relay never owns. to_b and to_a (may
 * be NULL) are bytes to write first; the relay takes them over.
 */
#ifndef PROXY_H
#define PROXY_H

#include <event2/buffer.h>
#include <event2/event.h>

struct proxy_splice;

enum proxy_splice_end {
	PROXY_SPLICE_DONE,	/* both sides closed, all relayed */
	PROXY_SPLICE_ERROR,	/* a read or write failed (reset, ...) */
	PROXY_SPLICE_SILENT,	/* b ended before it sent anything */
	PROXY_SPLICE_TIMEOUT,	/* b sent nothing in time */
};

typedef void (*proxy_splice_cb)(struct proxy_splice *,
    enum proxy_splice_end, void *);

struct proxy_splice	*proxy_splice_new(struct event_base *, int, int,
			     struct evbuffer *, struct evbuffer *,
			     proxy_splice_cb, void *);
void			 proxy_splice_want_answer(struct proxy_splice *,
			     struct event_base *, const struct timeval *);
void			 proxy_splice_free(struct proxy_splice *);

#endif
