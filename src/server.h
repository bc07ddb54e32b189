/*
 * server.h: the per-user daemon (DESIGN 1, 8). It owns the sessions and
 * runs their agent loops in one libevent loop, so work goes on while no
 * client is attached. server_main does not return until kill-server or a
 * fatal signal.
 */
#ifndef SERVER_H
#define SERVER_H

#include <event2/event.h>

#include "holt.h"

int	 server_main(int foreground);

/*
 * server-watch.c: follow a sandbox's /workspace through envd's "watch".
 * CB gets, at most every 50 ms, the directories (relative to /workspace,
 * "" for itself) whose entries changed; an empty list means only contents
 * changed; ALL set means anything may have changed (the list is then
 * empty). It reconnects by itself while the sandbox is stopped or paused.
 * DIRS is borrowed.
 */
struct server_watch;
typedef void (*server_watch_cb)(void *arg, const cJSON *dirs, int all);
struct server_watch *server_watch_new(struct event_base *,
	    const char *sandbox, server_watch_cb, void *arg);
void	 server_watch_free(struct server_watch *);

/*
 * server-idle.c: pause the sandboxes idle longer than their idle_pause.
 * IN_USE says whether a session of the server holds the sandbox (a
 * client attached, a run going on).
 */
struct server_idle;
typedef int (*server_idle_in_use)(void *arg, const char *sandbox);
struct server_idle *server_idle_new(struct event_base *, server_idle_in_use,
	    void *arg);
void	 server_idle_free(struct server_idle *);

#endif
