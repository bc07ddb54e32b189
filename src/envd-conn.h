/*
 * envd-conn.h: an asynchronous connection to a sandbox's holt-envd, driven by
 * a libevent loop (the server's, or holt run's). Requests get an "id"; every
 * frame that echoes it goes to the request's callback until the callback
 * returns 1 (done). The connection owns the fd.
 */
#ifndef ENVD_CONN_H
#define ENVD_CONN_H

#include <event2/event.h>

#include "holt.h"

struct envd_conn;
/* Called for each frame of a request; return 1 when the request is over. */
typedef int (*envd_reply_cb)(void *arg, const cJSON *frame);
/* Called once when the connection breaks; outstanding requests get a
 * synthetic {"error": why} frame first. */
typedef void (*envd_closed_cb)(void *arg, const char *why);

struct envd_conn *envd_conn_new(struct event_base *, int fd, envd_closed_cb,
	    void *arg);
void	 envd_conn_free(struct envd_conn *);
/* Sends req (adds "id"; req is not taken). Returns the id. */
uint64_t envd_conn_send(struct envd_conn *, cJSON *req, envd_reply_cb, void *arg);
/* Forget a request: its callback is not called again. */
void	 envd_conn_forget(struct envd_conn *, uint64_t id);
int	 envd_conn_alive(struct envd_conn *);

#endif
