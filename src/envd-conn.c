/*
 * envd-conn.c: the asynchronous envd client. A bufferevent carries frames;
 * outstanding requests are a short list (a session has one command and a
 * file op or two in flight), so lookup is a linear scan.
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "envd-conn.h"

struct envd_req {
	uint64_t	 id;
	envd_reply_cb	 cb;
	void		*arg;
	struct envd_req	*next;
};

struct envd_conn {
	struct bufferevent	*bev;
	struct frame_decoder	 dec;
	uint64_t		 next_id;
	struct envd_req		*reqs;
	envd_closed_cb		 closed;
	void			*arg;
	int			 dead;
	int			*in_read;	/* set while dispatching */
};

static void
envd_conn_fail(struct envd_conn *ec, const char *why)
{
	struct envd_req	*r;
	cJSON		*err;

	if (ec->dead)
		return;
	ec->dead = 1;
	while ((r = ec->reqs) != NULL) {
		ec->reqs = r->next;
		err = cJSON_CreateObject();
		cJSON_AddNumberToObject(err, "id", (double)r->id);
		cJSON_AddStringToObject(err, "error", why);
		r->cb(r->arg, err);
		cJSON_Delete(err);
		free(r);
	}
	if (ec->closed != NULL)
		ec->closed(ec->arg, why);
}

static void
envd_conn_read(struct bufferevent *bev, void *arg)
{
	struct envd_conn	*ec = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct envd_req		*r, **rp;
	cJSON			*frame;
	char			*cause = NULL;
	size_t			 n;
	int			 rc, freed = 0;
	uint64_t		 id;

	while ((n = evbuffer_get_length(in)) > 0) {
		unsigned char *p = evbuffer_pullup(in, (ssize_t)n);
		frame_decoder_feed(&ec->dec, p, n);
		evbuffer_drain(in, n);
	}
	ec->in_read = &freed;
	for (;;) {
		rc = frame_decoder_next(&ec->dec, &frame, &cause);
		if (rc == 0)
			break;
		if (rc == -1) {
			char *why = xprintf("envd: %s", cause);
			free(cause);
			envd_conn_fail(ec, why);
			free(why);
			break;
		}
		id = (uint64_t)json_num(frame, "id", 0);
		for (rp = &ec->reqs; (r = *rp) != NULL; rp = &r->next) {
			if (r->id == id)
				break;
		}
		if (r != NULL && r->cb(r->arg, frame) == 1) {
			/* The callback may have changed the list: find again. */
			for (rp = &ec->reqs; *rp != NULL; rp = &(*rp)->next) {
				if ((*rp)->id == id) {
					r = *rp;
					*rp = r->next;
					free(r);
					break;
				}
			}
		}
		cJSON_Delete(frame);
		if (freed || ec->dead)
			break;
	}
	if (!freed)
		ec->in_read = NULL;
	else
		free(ec);
}

static void
envd_conn_event(struct bufferevent *bev, short what, void *arg)
{
	struct envd_conn	*ec = arg;

	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		envd_conn_fail(ec, (what & BEV_EVENT_EOF) ?
		    "the sandbox closed the connection" :
		    "the connection to the sandbox failed");
}

struct envd_conn *
envd_conn_new(struct event_base *base, int fd, envd_closed_cb closed, void *arg)
{
	struct envd_conn	*ec;

	ec = xcalloc(1, sizeof *ec);
	file_set_nonblock(fd);
	ec->bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	frame_decoder_init(&ec->dec, FRAME_MAX);
	ec->next_id = 1;
	ec->closed = closed;
	ec->arg = arg;
	bufferevent_setcb(ec->bev, envd_conn_read, NULL, envd_conn_event, ec);
	bufferevent_enable(ec->bev, EV_READ | EV_WRITE);
	return ec;
}

void
envd_conn_free(struct envd_conn *ec)
{
	struct envd_req	*r;

	if (ec == NULL)
		return;
	while ((r = ec->reqs) != NULL) {
		ec->reqs = r->next;
		free(r);
	}
	/*
	 * What was sent last (a kill of a command being given up) goes out
	 * now if the socket takes it at once: freeing would drop it. The
	 * bufferevent keeps its output's start frozen; it is ours to drain.
	 */
	if (!ec->dead) {
		struct evbuffer *out = bufferevent_get_output(ec->bev);

		evbuffer_unfreeze(out, 1);
		(void)evbuffer_write(out, bufferevent_getfd(ec->bev));
	}
	bufferevent_free(ec->bev);
	frame_decoder_release(&ec->dec);
	if (ec->in_read != NULL)
		*ec->in_read = 1;	/* envd_conn_read frees it */
	else
		free(ec);
}

uint64_t
envd_conn_send(struct envd_conn *ec, cJSON *req, envd_reply_cb cb, void *arg)
{
	struct envd_req	*r, **rp;
	char		*data;
	size_t		 len;
	cJSON		*err;
	uint64_t	 id = ec->next_id++;

	cJSON_DeleteItemFromObjectCaseSensitive(req, "id");
	cJSON_AddNumberToObject(req, "id", (double)id);
	data = NULL;
	if (!ec->dead && (data = frame_encode(req, &len)) == NULL)
		log_warnx("envd request %llu: too large (over %u bytes)",
		    (unsigned long long)id, FRAME_MAX);
	if (data == NULL) {
		if (cb == NULL)
			return id;
		err = cJSON_CreateObject();
		cJSON_AddNumberToObject(err, "id", (double)id);
		cJSON_AddStringToObject(err, "error", ec->dead ?
		    "no connection to the sandbox" : "request too large for "
		    "the sandbox (over 16 MiB)");
		cb(arg, err);
		cJSON_Delete(err);
		return id;
	}
	if (cb != NULL) {
		r = xcalloc(1, sizeof *r);
		r->id = id;
		r->cb = cb;
		r->arg = arg;
		for (rp = &ec->reqs; *rp != NULL; rp = &(*rp)->next)
			;
		*rp = r;
	}
	bufferevent_write(ec->bev, data, len);
	free(data);
	return id;
}

void
envd_conn_forget(struct envd_conn *ec, uint64_t id)
{
	struct envd_req	*r, **rp;

	for (rp = &ec->reqs; (r = *rp) != NULL; rp = &r->next) {
		if (r->id == id) {
			*rp = r->next;
			free(r);
			return;
		}
	}
}

int
envd_conn_alive(struct envd_conn *ec)
{
	return ec != NULL && !ec->dead;
}
