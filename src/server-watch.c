/*
 * server-watch.c: a session's workspace as the sandbox sees it. One envd
 * connection per watched sandbox carries a recursive "watch" of /workspace
 * (inotify inside the sandbox, so it works wherever the sandbox runs); the
 * changes are folded into the set of directories whose entries changed and
 * handed on at most every SERVER_WATCH_MS, so a burst of 100,000 writes
 * costs the clients one message. Changes below /workspace/.git are left
 * out: clients show the work tree, and their own git status reads .git.
 *
 * The connection is made only while the sandbox runs; when it is stopped,
 * paused or the connection breaks, it is retried every SERVER_WATCH_RETRY_MS
 * and the next message says "all" (anything may have changed meanwhile).
 */
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "envd-conn.h"
#include "sandbox.h"
#include "server.h"

#define SERVER_WATCH_MS		50
#define SERVER_WATCH_RETRY_MS	1000
#define SERVER_WATCH_DIRS	64	/* then say "all" */
#define SERVER_WATCH_ROOT	"/workspace"

struct server_watch {
	struct event_base	*base;
	char			*sandbox;
	server_watch_cb		 cb;
	void			*arg;

	struct envd_conn	*envd;
	struct event		*retry;
	struct event		*flush;

	char			**dirs;		/* changed, relative */
	size_t			 ndirs;
	int			 all;
	int			 pending;	/* a flush is due */
};

static void	server_watch_connect(evutil_socket_t, short, void *);

static void
server_watch_arm(struct event *ev, int ms)
{
	struct timeval	 tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(ev, &tv);
}

static void
server_watch_flush(evutil_socket_t fd, short what, void *arg)
{
	struct server_watch	*w = arg;
	cJSON			*dirs;
	size_t			 i;

	int			 all = w->all;

	dirs = cJSON_CreateArray();
	for (i = 0; i < w->ndirs; i++) {
		if (!all)
			cJSON_AddItemToArray(dirs, cJSON_CreateString(w->dirs[i]));
		free(w->dirs[i]);
	}
	w->ndirs = 0;
	w->pending = 0;
	w->all = 0;
	/* Last: the callback may free w (its last client went away). */
	w->cb(w->arg, dirs, all);
	cJSON_Delete(dirs);
}

static void
server_watch_due(struct server_watch *w)
{
	if (!w->pending) {
		w->pending = 1;
		server_watch_arm(w->flush, SERVER_WATCH_MS);
	}
}

/* A change at PATH (absolute, in the sandbox): note its directory. */
static void
server_watch_note(struct server_watch *w, const char *path, const char *kind)
{
	size_t	 rlen = strlen(SERVER_WATCH_ROOT), i;
	char	*dir, *slash;

	if (strncmp(path, SERVER_WATCH_ROOT, rlen) != 0 ||
	    (path[rlen] != '/' && path[rlen] != '\0'))
		return;
	path += rlen;
	while (*path == '/')
		path++;
	if (strcmp(path, ".git") == 0 || strncmp(path, ".git/", 5) == 0)
		return;
	server_watch_due(w);
	/* Only entries coming and going change a listing. */
	if (strcmp(kind, "modify") == 0 || strcmp(kind, "attrib") == 0)
		return;
	if (w->all)
		return;
	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	else
		*dir = '\0';
	for (i = 0; i < w->ndirs; i++) {
		if (strcmp(w->dirs[i], dir) == 0) {
			free(dir);
			return;
		}
	}
	if (w->ndirs == SERVER_WATCH_DIRS) {
		free(dir);
		w->all = 1;
		return;
	}
	if (w->dirs == NULL)
		w->dirs = xreallocarray(NULL, SERVER_WATCH_DIRS,
		    sizeof *w->dirs);
	w->dirs[w->ndirs++] = dir;
}

static int
server_watch_reply(void *arg, const cJSON *frame)
{
	struct server_watch	*w = arg;
	const char		*event = json_str(frame, "event");

	if (json_str(frame, "error") != NULL) {
		log_warnx("sandbox '%s': watch: %s", w->sandbox,
		    json_str(frame, "error"));
		return 1;
	}
	if (event != NULL && strcmp(event, "change") == 0 &&
	    json_str(frame, "path") != NULL)
		server_watch_note(w, json_str(frame, "path"),
		    json_str(frame, "kind") != NULL ?
		    json_str(frame, "kind") : "");
	return 0;
}

static void
server_watch_closed(void *arg, const char *why)
{
	struct server_watch	*w = arg;

	log_debug("sandbox '%s': watch: %s", w->sandbox, why);
	/* The connection is freed by the retry, outside its own callback. */
	server_watch_arm(w->retry, SERVER_WATCH_RETRY_MS);
}

static void
server_watch_connect(evutil_socket_t fd0, short what, void *arg)
{
	struct server_watch	*w = arg;
	struct sandbox		*sbx;
	cJSON			*req;
	char			*cause = NULL;
	int			 fd;

	if (w->envd != NULL) {
		envd_conn_free(w->envd);
		w->envd = NULL;
	}
	if ((sbx = sandbox_open(w->sandbox, &cause)) == NULL) {
		log_debug("watch: %s", cause);
		free(cause);
		server_watch_arm(w->retry, SERVER_WATCH_RETRY_MS);
		return;
	}
	if (sandbox_state(sbx) != SANDBOX_RUNNING ||
	    (fd = sandbox_connect(sbx, &cause)) == -1) {
		free(cause);
		sandbox_free(sbx);
		server_watch_arm(w->retry, SERVER_WATCH_RETRY_MS);
		return;
	}
	sandbox_free(sbx);
	w->envd = envd_conn_new(w->base, fd, server_watch_closed, w);
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "watch");
	cJSON_AddStringToObject(req, "path", SERVER_WATCH_ROOT);
	cJSON_AddBoolToObject(req, "recursive", 1);
	envd_conn_send(w->envd, req, server_watch_reply, w);
	cJSON_Delete(req);
	/* What changed while nobody watched is unknown. */
	w->all = 1;
	server_watch_due(w);
}

struct server_watch *
server_watch_new(struct event_base *base, const char *sandbox,
    server_watch_cb cb, void *arg)
{
	struct server_watch	*w;

	w = xcalloc(1, sizeof *w);
	w->base = base;
	w->sandbox = xstrdup(sandbox);
	w->cb = cb;
	w->arg = arg;
	w->retry = evtimer_new(base, server_watch_connect, w);
	w->flush = evtimer_new(base, server_watch_flush, w);
	server_watch_connect(-1, 0, w);
	return w;
}

void
server_watch_free(struct server_watch *w)
{
	size_t	 i;

	if (w == NULL)
		return;
	envd_conn_free(w->envd);
	event_free(w->retry);
	event_free(w->flush);
	for (i = 0; i < w->ndirs; i++)
		free(w->dirs[i]);
	free(w->dirs);
	free(w->sandbox);
	free(w);
}
