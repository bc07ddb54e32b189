/*
 * server.c: the holt server. One libevent loop serves the client socket and
 * drives every session's agent (model streams, sandbox connections, timers).
 *
 * Clients are checked with SO_PEERCRED (same uid only) and must say hello
 * first. A bad frame (not JSON, over the size limit, a request before
 * hello, an unknown type) drops that client with a logged reason; the server
 * and the other clients carry on. Events are encoded once and the same bytes
 * queued to every attached client; a client that stops reading loses the
 * live-only events (deltas, output past the logged part) first and is
 * dropped when its queue passes CLIENT_QUEUE_MAX, so one slow client cannot
 * grow the server without bound. The same limit holds for replies (a client
 * that keeps asking for snapshots and never reads them).
 *
 * A client is dropped in many places (its queue is full while an event of
 * its own request fans out, a bad frame, EOF): dropping only marks it dead
 * and moves it off the list, and the loop frees it on its next round, so no
 * caller ever holds a freed client.
 *
 * Requests come before bulk output: the listening socket and clients that
 * are not attached (holt ls, send, ...) have the loop's higher priority,
 * their replies are written at once, and the loop stops running bulk
 * callbacks (sandbox output, model streams, writes to attached clients)
 * every SRV_BULK_SLICE_MS to look for requests, so a flood of output
 * delays a request by at most about one slice of the loop's time.
 *
 * A client that attaches with "files": true also gets "files" messages when
 * the workspace changes inside the sandbox (server-watch.c: envd's watch,
 * so it follows the sandbox wherever it runs, not this host's view of it).
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "agent.h"
#include "client.h"
#include "otlp.h"
#include "sandbox.h"
#include "server.h"
#include "session.h"

#define CLIENT_FRAME_MAX	(1U * 1024 * 1024)	/* from a client */
#define CLIENT_LIVE_MAX		(1U * 1024 * 1024)	/* then drop live-only */
#define CLIENT_QUEUE_MAX	(64U * 1024 * 1024)	/* then drop the client */
#define SNAPSHOT_DEFAULT	2000
/*
 * A snapshot's events stop at this many bytes of log, newest kept, well
 * under FRAME_MAX: a long session with big outputs still attaches.
 */
#define SNAPSHOT_BYTES		(8U * 1024 * 1024)
#define SRV_BULK_SLICE_MS	2	/* bulk callbacks before a look at requests */
#define SRV_PARK_MS		1000	/* at rest twice in a row: closed */

/* Loop priorities: libevent runs only the most urgent level that is ready. */
#define SRV_PRI_REQUEST		0	/* the listener, unattached clients */
#define SRV_PRI_BULK		1	/* everything else (the default) */
#define SRV_PRIORITIES		2

struct srv_session;

struct srv_client {
	unsigned int		 id;
	struct bufferevent	*bev;
	struct frame_decoder	 dec;
	int			 hello;
	int			 readonly;
	int			 files;		/* wants "files" messages */
	struct srv_session	*attached;
	int			 dead;		/* dropped, freed by srv_reap */
	struct srv_client	*next;
};

struct srv_session {
	char			*name;
	struct agent		*agent;
	char			*error;		/* could not be opened */
	struct event		*approval_timer;
	struct event		*kill_timer;
	int			 killing;	/* 1 stop, 2 stop and remove */
	int			 headless;	/* holt run's, not opened */
	struct server_watch	*watch;		/* while a client wants files */
	cJSON			*rest;		/* at rest: what ls shows */
	off_t			 rest_size;	/* of its log, when read */
	int			 idle_ticks;	/* at rest for so many */
	struct srv_session	*next;
};

static struct event_base	*srv_base;
static struct event		*srv_listener;
static struct event		*srv_listener_pause;
static struct srv_client	*srv_clients;
static struct srv_client	*srv_dead;	/* dropped, not freed yet */
static struct event		*srv_reaper;
static struct event		*srv_parker;
static struct srv_session	*srv_sessions;
static unsigned int		 srv_next_id = 1;
static char			*srv_path;
static int			 srv_exiting;

static void	srv_client_drop(struct srv_client *, const char *);
static void	srv_session_close(struct srv_session *);

/*
 * An attached client's stream is bulk; a client that is not attached sends
 * requests, which go before bulk.
 */
static void
srv_client_attach(struct srv_client *c, struct srv_session *s)
{
	c->attached = s;
	bufferevent_priority_set(c->bev, s != NULL ? SRV_PRI_BULK :
	    SRV_PRI_REQUEST);
}

/*
 * Queue bytes to a client, or drop it if it has not read what it was sent
 * before: 0 queued, -1 dropped (or dropped before).
 */
static int
srv_queue(struct srv_client *c, const char *data, size_t len)
{
	if (c->dead)
		return -1;
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) >
	    CLIENT_QUEUE_MAX) {
		srv_client_drop(c, "too slow: its queue is full");
		return -1;
	}
	bufferevent_write(c->bev, data, len);
	return 0;
}

static void
srv_send(struct srv_client *c, cJSON *msg)
{
	struct evbuffer	*out;
	char		*data;
	size_t		 len;
	int		 queued;

	if (c->dead)
		return;
	if ((data = frame_encode(msg, &len)) == NULL) {
		/* Only a reply can grow this big; say so instead of it. */
		log_warnx("client %d: a reply too large for a frame",
		    (int)bufferevent_getfd(c->bev));
		msg = cJSON_CreateObject();
		cJSON_AddStringToObject(msg, "type", "error");
		cJSON_AddStringToObject(msg, "message", "reply too large");
		data = frame_encode(msg, &len);
		cJSON_Delete(msg);
	}
	queued = srv_queue(c, data, len);
	free(data);
	if (queued != 0)
		return;
	/*
	 * A reply to an unattached client is written now rather than when
	 * the loop next gets round to it; what the socket does not take
	 * now, the bufferevent writes later, and it sees any error. (A
	 * bufferevent keeps its output's start frozen to all but itself.)
	 */
	if (c->attached == NULL) {
		out = bufferevent_get_output(c->bev);
		evbuffer_unfreeze(out, 1);
		evbuffer_write(out, bufferevent_getfd(c->bev));
		evbuffer_freeze(out, 1);
	}
}

static void
srv_reply_ok(struct srv_client *c, cJSON *extra)
{
	cJSON	*msg = extra != NULL ? extra : cJSON_CreateObject();

	cJSON_DeleteItemFromObjectCaseSensitive(msg, "type");
	cJSON_AddStringToObject(msg, "type", "ok");
	srv_send(c, msg);
	cJSON_Delete(msg);
}

static void
srv_reply_error(struct srv_client *c, const char *fmt, ...) printflike(2, 3);

static void
srv_reply_error(struct srv_client *c, const char *fmt, ...)
{
	cJSON	*msg;
	char	*text;
	va_list	 ap;

	va_start(ap, fmt);
	xvasprintf(&text, fmt, ap);
	va_end(ap);
	msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "type", "error");
	cJSON_AddStringToObject(msg, "message", text);
	srv_send(c, msg);
	cJSON_Delete(msg);
	free(text);
}

/* Sessions. */

static struct srv_session *
srv_session_find(const char *name)
{
	struct srv_session	*s;

	if (name == NULL)
		return NULL;
	for (s = srv_sessions; s != NULL; s = s->next) {
		if (strcmp(s->name, name) == 0)
			return s;
	}
	return NULL;
}

static int
srv_session_rw_clients(struct srv_session *s)
{
	struct srv_client	*c;
	int			 n = 0;

	for (c = srv_clients; c != NULL; c = c->next) {
		if (c->attached == s && !c->readonly)
			n++;
	}
	return n;
}

/* Queue the same frame bytes to every client attached to s. */
static void
srv_fanout(struct srv_session *s, const char *data, size_t len, int live_only)
{
	struct srv_client	*c, *next;
	size_t			 queued;

	for (c = srv_clients; c != NULL; c = next) {
		next = c->next;
		if (c->attached != s)
			continue;
		queued = evbuffer_get_length(bufferevent_get_output(c->bev));
		if (live_only && queued > CLIENT_LIVE_MAX &&
		    queued <= CLIENT_QUEUE_MAX)
			continue;
		srv_queue(c, data, len);
	}
}

/*
 * The workspace changed in the sandbox: tell the clients that asked, as
 * {"type": "files", "session", "dirs": [...], "all"}.
 */
static void
srv_watch_changed(void *arg, const cJSON *dirs, int all)
{
	struct srv_session	*s = arg;
	struct srv_client	*c, *next;
	cJSON			*msg;
	char			*data;
	size_t			 len;

	msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "type", "files");
	cJSON_AddStringToObject(msg, "session", s->name);
	cJSON_AddItemReferenceToObject(msg, "dirs", (cJSON *)dirs);
	cJSON_AddBoolToObject(msg, "all", all);
	data = frame_encode(msg, &len);
	cJSON_Delete(msg);
	if (data == NULL)
		return;
	for (c = srv_clients; c != NULL; c = next) {
		next = c->next;
		if (c->attached == s && c->files)
			srv_queue(c, data, len);
	}
	free(data);
}

/* Watch the session's workspace while some attached client wants it. */
static void
srv_session_watch(struct srv_session *s)
{
	struct srv_client	*c;
	cJSON			*st;
	int			 want = 0;

	for (c = srv_clients; c != NULL; c = c->next) {
		if (c->attached == s && c->files)
			want = 1;
	}
	if (want && s->watch == NULL && s->agent != NULL) {
		st = agent_state_json(s->agent);
		if (json_str(st, "sandbox") != NULL)
			s->watch = server_watch_new(srv_base,
			    json_str(st, "sandbox"), srv_watch_changed, s);
		cJSON_Delete(st);
	} else if (!want && s->watch != NULL) {
		server_watch_free(s->watch);
		s->watch = NULL;
	}
}

static void
srv_approval_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct srv_session	*s = arg;
	char			*cause = NULL;
	const char		*answer = config_get("approval_default");

	if (s->agent == NULL || srv_session_rw_clients(s) > 0)
		return;
	log_info("session '%s': approval timed out, answering %s", s->name,
	    answer);
	if (agent_approve(s->agent, NULL, answer, NULL, strcmp(answer,
	    "deny") == 0 ? "nobody answered in time" : NULL, NULL, 0, "timeout",
	    &cause) != 0) {
		log_warnx("session '%s': %s", s->name, cause);
		free(cause);
	}
}

static void
srv_arm_approval_timer(struct srv_session *s)
{
	long long	 secs = config_get_num("approval_timeout");
	struct timeval	 tv;

	if (secs <= 0 || s->agent == NULL)
		return;
	if (agent_get_state(s->agent) != AGENT_WAITING ||
	    srv_session_rw_clients(s) > 0) {
		evtimer_del(s->approval_timer);
		return;
	}
	if (evtimer_pending(s->approval_timer, NULL))
		return;
	tv.tv_sec = (time_t)secs;
	tv.tv_usec = 0;
	evtimer_add(s->approval_timer, &tv);
}

static void
srv_agent_event(void *arg, const cJSON *ev)
{
	struct srv_session	*s = arg;
	cJSON			*msg;
	char			*data;
	size_t			 len;
	const char		*type = json_str(ev, "type");
	int			 live_only;

	msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "type", "event");
	cJSON_AddStringToObject(msg, "session", s->name);
	cJSON_AddItemReferenceToObject(msg, "event", (cJSON *)ev);
	data = frame_encode(msg, &len);
	cJSON_Delete(msg);
	if (data == NULL) {
		/* Logged (clients attaching later see it) but not sent live. */
		log_warnx("session '%s': an event too large to send live",
		    s->name);
		return;
	}
	live_only = type != NULL && (strcmp(type, "assistant.delta") == 0 ||
	    (strcmp(type, "tool.output") == 0 &&
	    cJSON_GetObjectItemCaseSensitive(ev, "seq") == NULL));
	srv_fanout(s, data, len, live_only);
	free(data);
}

static void
srv_agent_state(void *arg)
{
	struct srv_session	*s = arg;
	cJSON			*msg;
	char			*data;
	size_t			 len;

	if (s->agent == NULL)
		return;
	msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "type", "state");
	cJSON_AddItemToObject(msg, "session", agent_state_json(s->agent));
	data = frame_encode(msg, &len);
	cJSON_Delete(msg);
	if (data == NULL)
		return;
	srv_fanout(s, data, len, 0);
	free(data);
	srv_arm_approval_timer(s);
}

static void
srv_session_finish_kill(struct srv_session *s)
{
	char		*cause = NULL;
	cJSON		*meta;
	struct sandbox	*sbx;
	int		 rm = s->killing == 2;
	char		*name = xstrdup(s->name);

	srv_session_close(s);
	if (rm) {
		if (session_remove(name, &cause) != 0) {
			log_warnx("kill-session '%s': %s", name, cause);
			free(cause);
		}
	} else if ((meta = session_load(name, &cause)) != NULL) {
		if (json_str(meta, "sandbox") != NULL && (sbx =
		    sandbox_open_damaged(json_str(meta, "sandbox"), &cause)) !=
		    NULL) {
			free(cause);
			cause = NULL;
			if (sandbox_stop(sbx, &cause) != 0) {
				log_warnx("kill-session '%s': %s", name, cause);
				free(cause);
			}
			sandbox_free(sbx);
		} else
			free(cause);
		cJSON_Delete(meta);
	} else
		free(cause);
	free(name);
}

static void
srv_kill_timeout(evutil_socket_t fd, short what, void *arg)
{
	srv_session_finish_kill(arg);
}

static void
srv_agent_finished(void *arg, const char *reason, const char *source)
{
	struct srv_session	*s = arg;

	if (s->killing)
		srv_session_finish_kill(s);
}

static const struct agent_cb srv_agent_cb = {
	srv_agent_event, srv_agent_state, srv_agent_finished
};

/* A session the server knows of, not opened yet. */
static struct srv_session *
srv_session_new(const char *name)
{
	struct srv_session	*s;

	s = xcalloc(1, sizeof *s);
	s->name = xstrdup(name);
	s->approval_timer = evtimer_new(srv_base, srv_approval_timeout, s);
	s->kill_timer = evtimer_new(srv_base, srv_kill_timeout, s);
	s->next = srv_sessions;
	srv_sessions = s;
	return s;
}

/*
 * Open a session's agent. A headless run's session (holt run) is not
 * taken over unless asked (attach, send...: explicit): it is known,
 * without an agent, and ls says whether holt run runs it now.
 */
/* The size of a session's log: another process may have written it. */
static off_t
srv_log_size(const char *name)
{
	char		*dir = session_dir(name), *path;
	struct stat	 sb;
	off_t		 size = -1;

	path = paths_join(dir, "events.jsonl");
	if (stat(path, &sb) == 0)
		size = sb.st_size;
	free(path);
	free(dir);
	return size;
}

/* Read what ls shows of a session at rest: 1, 0 not at rest, -1 error. */
static int
srv_session_rest(struct srv_session *s, char **cause)
{
	cJSON	*info;
	off_t	 size = srv_log_size(s->name);
	int	 rc;

	if ((rc = session_at_rest(s->name, &info, cause)) == 1) {
		cJSON_Delete(s->rest);
		s->rest = info;
		s->rest_size = size;
	}
	return rc;
}

/*
 * Close the agent of a session at rest (no run, nothing asked, no client):
 * its log, its lock and its history are let go, and what ls shows of it
 * stays. The next request that needs it opens it again.
 */
static void
srv_session_park(struct srv_session *s)
{
	cJSON	*info = agent_state_json(s->agent);

	cJSON_DeleteItemFromObjectCaseSensitive(info, "steps");
	cJSON_DeleteItemFromObjectCaseSensitive(info, "pending");
	cJSON_AddBoolToObject(info, "at_rest", 1);
	cJSON_Delete(s->rest);
	s->rest = info;
	s->rest_size = srv_log_size(s->name);
	server_watch_free(s->watch);
	s->watch = NULL;
	evtimer_del(s->approval_timer);
	agent_free(s->agent);
	s->agent = NULL;
	s->idle_ticks = 0;
}

static int
srv_session_has_clients(struct srv_session *s)
{
	struct srv_client	*c;

	for (c = srv_clients; c != NULL; c = c->next) {
		if (c->attached == s && !c->dead)
			return 1;
	}
	return 0;
}

/* Every SRV_PARK_MS: sessions at rest that long are closed. */
static void
srv_park_check(evutil_socket_t fd, short what, void *arg)
{
	struct srv_session	*s;
	struct timeval		 tv = { SRV_PARK_MS / 1000,
				    (SRV_PARK_MS % 1000) * 1000 };

	for (s = srv_sessions; s != NULL; s = s->next) {
		if (s->agent == NULL || s->killing ||
		    !agent_at_rest(s->agent) || srv_session_has_clients(s))
			s->idle_ticks = 0;
		else if (++s->idle_ticks > 1)
			srv_session_park(s);
	}
	evtimer_add(srv_parker, &tv);
}

static struct srv_session *
srv_session_open(const char *name, int explicit, char **cause)
{
	struct srv_session	*s;
	int			 rc;

	if ((s = srv_session_find(name)) != NULL && s->agent != NULL)
		return s;
	if (s == NULL)
		s = srv_session_new(name);
	free(s->error);
	s->error = NULL;
	/* A session opened now uses holt.conf as it is now (prices, models). */
	if (config_refresh(cause) != 0) {
		log_warnx("%s; the configuration read before stays", *cause);
		free(*cause);
		*cause = NULL;
	}
	if (!explicit && session_headless(name)) {
		s->headless = 1;
		return s;
	}
	/* At rest: nothing to carry on, so nothing held until asked. */
	if (!explicit && (rc = srv_session_rest(s, cause)) != 0) {
		if (rc == 1)
			return s;
		s->error = xstrdup(*cause);
		log_warnx("%s", *cause);
		return NULL;
	}
	s->agent = agent_open(name, srv_base, &srv_agent_cb, s, cause);
	if (s->agent == NULL) {
		s->error = xstrdup(*cause);
		log_warnx("%s", *cause);
		return NULL;
	}
	cJSON_Delete(s->rest);
	s->rest = NULL;
	s->idle_ticks = 0;
	agent_start(s->agent);
	return s;
}

/* Forget a session: its clients are told and detached. */
static void
srv_session_close(struct srv_session *s)
{
	struct srv_session	**sp;
	struct srv_client	*c, *next;
	cJSON			*msg;

	for (c = srv_clients; c != NULL; c = next) {
		next = c->next;		/* srv_send may drop c */
		if (c->attached != s)
			continue;
		msg = cJSON_CreateObject();
		cJSON_AddStringToObject(msg, "type", "exit");
		cJSON_AddStringToObject(msg, "session", s->name);
		cJSON_AddStringToObject(msg, "reason", "the session was killed");
		srv_send(c, msg);
		cJSON_Delete(msg);
		srv_client_attach(c, NULL);
	}
	for (sp = &srv_sessions; *sp != NULL; sp = &(*sp)->next) {
		if (*sp == s) {
			*sp = s->next;
			break;
		}
	}
	server_watch_free(s->watch);
	agent_free(s->agent);
	cJSON_Delete(s->rest);
	event_free(s->approval_timer);
	event_free(s->kill_timer);
	free(s->error);
	free(s->name);
	free(s);
}

/*
 * What ls shows of a session at rest, its sandbox's state as it is now if
 * the sandbox is on this machine (another one is never waited on: what
 * was known when the session came to rest stays).
 */
static cJSON *
srv_rest_info(struct srv_session *s)
{
	cJSON		*info = cJSON_Duplicate(s->rest, 1);
	struct sandbox	*sbx;
	char		*cause = NULL;

	if (json_str(info, "sandbox") != NULL && (sbx =
	    sandbox_open(json_str(info, "sandbox"), &cause)) != NULL) {
		if (strcmp(sandbox_provider_spec(sbx), "local") == 0) {
			cJSON_DeleteItemFromObjectCaseSensitive(info,
			    "sandbox_state");
			cJSON_AddStringToObject(info, "sandbox_state",
			    sandbox_state_name(sandbox_state(sbx)));
		}
		sandbox_free(sbx);
	}
	free(cause);
	/* Closed at rest, it can be run by another process meanwhile. */
	if (session_locked(s->name)) {
		cJSON_ReplaceItemInObjectCaseSensitive(info, "state",
		    cJSON_CreateString("working"));
		cJSON_AddStringToObject(info, "error", "run by another holt "
		    "process (holt run)");
	}
	return info;
}

static cJSON *
srv_session_info(struct srv_session *s)
{
	cJSON		*info, *meta;
	char		*cause = NULL, *dir, *path, *text;
	struct stat	 sb;

	if (s->agent != NULL)
		info = agent_state_json(s->agent);
	else if (s->rest != NULL)
		info = srv_rest_info(s);
	else if (s->headless) {
		info = cJSON_CreateObject();
		cJSON_AddStringToObject(info, "name", s->name);
		if (session_locked(s->name)) {
			cJSON_AddStringToObject(info, "state", "working");
			cJSON_AddStringToObject(info, "error", "run by holt run");
		} else {
			cJSON_AddStringToObject(info, "state", "idle");
			xasprintf(&text, "a headless run: holt run --resume %s "
			    "goes on with it", s->name);
			cJSON_AddStringToObject(info, "error", text);
			free(text);
		}
	} else {
		info = cJSON_CreateObject();
		cJSON_AddStringToObject(info, "name", s->name);
		cJSON_AddStringToObject(info, "state", "error");
		cJSON_AddStringToObject(info, "error", s->error != NULL ?
		    s->error : "not open");
	}
	if ((meta = session_load(s->name, &cause)) != NULL) {
		if (json_str(meta, "created") != NULL)
			cJSON_AddStringToObject(info, "created",
			    json_str(meta, "created"));
		cJSON_Delete(meta);
	} else
		free(cause);
	dir = session_dir(s->name);
	path = paths_join(dir, "events.jsonl");
	if (stat(path, &sb) == 0)
		cJSON_AddNumberToObject(info, "last_activity",
		    (double)sb.st_mtime);
	free(path);
	free(dir);
	return info;
}

/* Requests. */

static struct srv_session *
srv_need_session(struct srv_client *c, const cJSON *req)
{
	const char		*name = json_str(req, "session");
	struct srv_session	*s;
	char			*cause = NULL;

	if (name == NULL) {
		srv_reply_error(c, "no session given");
		return NULL;
	}
	if ((s = srv_session_find(name)) != NULL && s->agent != NULL)
		return s;
	if (!session_exists(name)) {
		srv_reply_error(c, "session '%s': no such session", name);
		return NULL;
	}
	if ((s = srv_session_open(name, 1, &cause)) == NULL) {
		srv_reply_error(c, "%s", cause);
		free(cause);
		return NULL;
	}
	return s;
}

static void
srv_do_ls(struct srv_client *c)
{
	struct srv_session	*s;
	cJSON			*rep, *list;
	char			**names;
	size_t			 n, i;
	char			*cause = NULL;

	/*
	 * Sessions created by another process since we started, and those
	 * that could not be opened (another process ran them; it may be
	 * gone now): never a stale reason.
	 */
	names = session_list(&n);
	for (i = 0; i < n; i++) {
		s = srv_session_find(names[i]);
		if ((s == NULL || (s->agent == NULL && !s->killing &&
		    !s->headless && session_locked(names[i]) == 0 &&
		    ((s->error != NULL && (strstr(s->error, "another holt") !=
		    NULL || strstr(s->error, "too many open files") != NULL)) ||
		    (s->rest != NULL && srv_log_size(names[i]) !=
		    s->rest_size)))) &&
		    srv_session_open(names[i], 0, &cause) == NULL) {
			free(cause);
			cause = NULL;
		}
		free(names[i]);
	}
	free(names);
	rep = cJSON_CreateObject();
	list = cJSON_AddArrayToObject(rep, "sessions");
	for (s = srv_sessions; s != NULL; s = s->next) {
		if (!session_exists(s->name))
			continue;
		cJSON_AddItemToArray(list, srv_session_info(s));
	}
	srv_reply_ok(c, rep);
}

/* The session whose agent uses this sandbox, if one of ours does. */
static struct srv_session *
srv_session_of_sandbox(const char *sandbox)
{
	struct srv_session	*s;
	cJSON			*st;
	const char		*id;
	int			 mine;

	for (s = srv_sessions; s != NULL; s = s->next) {
		if (s->agent == NULL)
			continue;
		st = agent_state_json(s->agent);
		id = json_str(st, "sandbox");
		mine = id != NULL && strcmp(id, sandbox) == 0;
		cJSON_Delete(st);
		if (mine)
			return s;
	}
	return NULL;
}

/*
 * net.ask, from a sandbox's proxy: a host no rule settles. The session
 * using the sandbox asks its human (agent_ask_host); the reply waits for
 * the answer. By client id, not pointer: the proxy may be gone by then.
 */
static void
srv_net_answer(void *arg, const char *decision, const char *reason)
{
	unsigned int		*id = arg;
	struct srv_client	*c;
	cJSON			*rep;

	for (c = srv_clients; c != NULL; c = c->next) {
		if (c->id != *id || c->dead)
			continue;
		rep = cJSON_CreateObject();
		cJSON_AddStringToObject(rep, "decision", decision);
		if (reason != NULL)
			cJSON_AddStringToObject(rep, "reason", reason);
		srv_reply_ok(c, rep);
		break;
	}
	free(id);
}

/* A rewind's files are back, or not: the reply, by client id. */
static void
srv_rewind_answer(void *arg, const char *error)
{
	unsigned int		*id = arg;
	struct srv_client	*c;

	for (c = srv_clients; c != NULL; c = c->next) {
		if (c->id != *id || c->dead)
			continue;
		if (error != NULL)
			srv_reply_error(c, "%s", error);
		else
			srv_reply_ok(c, NULL);
		break;
	}
	free(id);
}

static void
srv_do_net_ask(struct srv_client *c, const cJSON *req)
{
	struct srv_session	*s;
	const char		*sbx = json_str(req, "sandbox");
	const char		*host = json_str(req, "host");
	unsigned int		*id;
	cJSON			*rep;

	if (sbx == NULL || host == NULL) {
		srv_reply_error(c, "net.ask: sandbox and host are needed");
		return;
	}
	if ((s = srv_session_of_sandbox(sbx)) == NULL) {
		rep = cJSON_CreateObject();
		cJSON_AddStringToObject(rep, "decision", "deny");
		cJSON_AddStringToObject(rep, "reason", "no session uses the "
		    "sandbox: nobody to ask");
		srv_reply_ok(c, rep);
		return;
	}
	id = xmalloc(sizeof *id);
	*id = c->id;
	agent_ask_host(s->agent, host, (int)json_num(req, "port", 0),
	    srv_net_answer, id);
}

/* For server-idle.c: does a session of ours hold this sandbox? */
static int
srv_sandbox_in_use(void *arg, const char *sandbox)
{
	struct srv_session	*s;
	struct srv_client	*c;

	(void)arg;
	if ((s = srv_session_of_sandbox(sandbox)) == NULL)
		return 0;
	if (agent_run_active(s->agent))
		return 1;
	for (c = srv_clients; c != NULL; c = c->next) {
		if (c->attached == s && !c->dead)
			return 1;
	}
	return 0;
}

static void
srv_do_attach(struct srv_client *c, const cJSON *req)
{
	struct srv_session	*s, *old;
	cJSON			*rep, *events, *ev;
	char			*warning = NULL, *cause = NULL;
	const char		*streamed;
	int			 last, skip, truncated = 0;

	if ((s = srv_need_session(c, req)) == NULL)
		return;
	/* After a reboot the sandbox is stopped: attaching starts it. */
	if (agent_wake(s->agent, &cause) != 0) {
		log_warnx("session '%s': %s", s->name, cause);
		free(cause);
		cause = NULL;
	}
	last = (int)json_num(req, "last", SNAPSHOT_DEFAULT);
	if (last < 0)
		last = SNAPSHOT_DEFAULT;
	events = eventlog_read_tail(s->name, last == 0 ? 1 : (size_t)last,
	    SNAPSHOT_BYTES, &truncated, &warning, &cause);
	if (events == NULL) {
		srv_reply_error(c, "%s", cause);
		free(cause);
		return;
	}
	free(warning);
	for (skip = cJSON_GetArraySize(events) - last; skip > 0; skip--) {
		ev = cJSON_DetachItemFromArray(events, 0);
		cJSON_Delete(ev);
	}
	old = c->attached;
	srv_client_attach(c, s);
	c->readonly = json_bool(req, "readonly", 0);
	c->files = json_bool(req, "files", 0);
	rep = cJSON_CreateObject();
	cJSON_AddStringToObject(rep, "type", "snapshot");
	cJSON_AddItemToObject(rep, "session", agent_state_json(s->agent));
	/*
	 * The text the model has streamed so far is live only (not logged):
	 * without it, a screen attached mid-stream (as holt new's is, a moment
	 * after the run starts) would begin the message at its second chunk.
	 */
	if ((streamed = agent_streamed(s->agent)) != NULL && *streamed != '\0') {
		cJSON *d = cJSON_CreateObject();

		cJSON_AddStringToObject(d, "type", "assistant.delta");
		cJSON_AddStringToObject(d, "text", streamed);
		cJSON_AddItemToArray(events, d);
	}
	cJSON_AddItemToObject(rep, "events", events);
	if (truncated)
		cJSON_AddBoolToObject(rep, "truncated", 1);
	srv_send(c, rep);
	cJSON_Delete(rep);
	srv_arm_approval_timer(s);
	if (old != NULL && old != s)
		srv_session_watch(old);
	srv_session_watch(s);
}

static void
srv_do_kill_session(struct srv_client *c, const cJSON *req)
{
	const char		*name = json_str(req, "session");
	struct srv_session	*s = srv_session_find(name);
	struct timeval		 tv = { 5, 0 };
	char			*cause = NULL;

	if (name == NULL || !session_exists(name)) {
		srv_reply_error(c, "session '%s': no such session",
		    name != NULL ? name : "");
		return;
	}
	if (s == NULL)
		s = srv_session_new(name);
	s->killing = json_bool(req, "rm", 0) ? 2 : 1;
	srv_reply_ok(c, NULL);
	if (s->agent != NULL && agent_run_active(s->agent)) {
		agent_interrupt(s->agent, "kill-session");
		if (srv_session_find(name) == s && s->agent != NULL &&
		    agent_run_active(s->agent)) {
			evtimer_add(s->kill_timer, &tv);	/* a tool winds down */
			return;
		}
		if (srv_session_find(name) != s)
			return;		/* finished: already done */
	}
	srv_session_finish_kill(s);
	(void)cause;
}

static void
srv_dispatch(struct srv_client *c, cJSON *req)
{
	const char		*type = json_str(req, "type");
	struct srv_session	*s;
	char			*cause = NULL, *by;
	cJSON			*rep;
	int			 rc;

	if (type == NULL) {
		srv_client_drop(c, "a frame without a type");
		return;
	}
	if (!c->hello) {
		if (strcmp(type, "hello") != 0) {
			srv_client_drop(c, "a request before hello");
			return;
		}
		if ((int)json_num(req, "version", 0) != HOLT_PROTOCOL_VERSION) {
			srv_reply_error(c, "protocol version %d is not %d: the "
			    "server and client are different versions of holt "
			    "(holt kill-server, then try again)",
			    (int)json_num(req, "version", 0),
			    HOLT_PROTOCOL_VERSION);
			bufferevent_flush(c->bev, EV_WRITE, BEV_FLUSH);
			return;
		}
		c->hello = 1;
		rep = cJSON_CreateObject();
		cJSON_AddStringToObject(rep, "type", "hello");
		cJSON_AddNumberToObject(rep, "version", HOLT_PROTOCOL_VERSION);
		cJSON_AddNumberToObject(rep, "pid", (double)getpid());
		srv_send(c, rep);
		cJSON_Delete(rep);
		return;
	}
	if (strcmp(type, "hello") == 0) {
		srv_client_drop(c, "a second hello");
		return;
	}
	if (strcmp(type, "ls") == 0) {
		srv_do_ls(c);
		return;
	}
	if (strcmp(type, "open") == 0) {
		if (srv_need_session(c, req) != NULL)
			srv_reply_ok(c, NULL);
		return;
	}
	if (strcmp(type, "attach") == 0) {
		srv_do_attach(c, req);
		return;
	}
	if (strcmp(type, "net.ask") == 0) {
		srv_do_net_ask(c, req);
		return;
	}
	if (strcmp(type, "detach") == 0) {
		s = c->attached;
		srv_client_attach(c, NULL);
		srv_reply_ok(c, NULL);
		if (s != NULL) {
			srv_arm_approval_timer(s);
			srv_session_watch(s);
		}
		return;
	}
	if (strcmp(type, "kill-session") == 0) {
		srv_do_kill_session(c, req);
		return;
	}
	if (strcmp(type, "kill-server") == 0) {
		/* Answer before the loop ends: write it out now, blocking. */
		struct evbuffer *out = bufferevent_get_output(c->bev);
		int fd = (int)bufferevent_getfd(c->bev);
		cJSON *ok = cJSON_CreateObject();
		char *data;
		size_t len;
		cJSON_AddStringToObject(ok, "type", "ok");
		cJSON_AddNumberToObject(ok, "pid", (double)getpid());
		data = frame_encode(ok, &len);
		cJSON_Delete(ok);
		evbuffer_drain(out, evbuffer_get_length(out));
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		file_write_all(fd, data, len);
		free(data);
		srv_exiting = 1;
		event_base_loopexit(srv_base, NULL);
		return;
	}
	if (strcmp(type, "send") != 0 && strcmp(type, "approve") != 0 &&
	    strcmp(type, "interrupt") != 0 && strcmp(type, "mode") != 0 &&
	    strcmp(type, "state") != 0 && strcmp(type, "compact") != 0 &&
	    strcmp(type, "model") != 0 && strcmp(type, "rewind") != 0 &&
	    strcmp(type, "rules") != 0 && strcmp(type, "clear") != 0) {
		srv_client_drop(c, "an unknown request type");
		return;
	}
	if ((s = srv_need_session(c, req)) == NULL)
		return;
	if (strcmp(type, "state") == 0) {
		rep = cJSON_CreateObject();
		cJSON_AddItemToObject(rep, "session", srv_session_info(s));
		srv_reply_ok(c, rep);
		return;
	}
	if (strcmp(type, "rules") == 0) {
		/* The session's own rules; "delete": N removes the Nth. */
		if (cJSON_IsNumber(cJSON_GetObjectItem(req, "delete"))) {
			if (c->readonly && c->attached == s) {
				srv_reply_error(c, "this client is read-only "
				    "(attach -r)");
				return;
			}
			if (agent_delete_rule(s->agent, (int)json_num(req,
			    "delete", 0), &cause) != 0) {
				srv_reply_error(c, "%s", cause);
				free(cause);
				return;
			}
		}
		rep = cJSON_CreateObject();
		cJSON_AddStringToObject(rep, "re_type", "rules");
		cJSON_AddItemToObject(rep, "rules", agent_rules(s->agent));
		srv_reply_ok(c, rep);
		return;
	}
	if (c->readonly && c->attached == s) {
		srv_reply_error(c, "this client is read-only (attach -r)");
		return;
	}
	by = xprintf("user");
	if (strcmp(type, "send") == 0) {
		if (agent_message(s->agent, json_str(req, "text"), by,
		    &cause) != 0)
			goto fail;
	} else if (strcmp(type, "approve") == 0) {
		rc = agent_approve(s->agent, json_str(req, "request_id"),
		    json_str(req, "decision") != NULL ? json_str(req,
		    "decision") : "", json_str(req, "rule"), json_str(req,
		    "message"), json_str(req, "command"), json_bool(req,
		    "override", 0), by, &cause);
		if (rc == -2) {
			/* A denied edit: the client may ask to override. */
			rep = cJSON_CreateObject();
			cJSON_AddStringToObject(rep, "type", "error");
			cJSON_AddStringToObject(rep, "message", cause);
			cJSON_AddBoolToObject(rep, "override", 1);
			cJSON_AddStringToObject(rep, "request_id",
			    json_str(req, "request_id") != NULL ?
			    json_str(req, "request_id") : "");
			srv_send(c, rep);
			cJSON_Delete(rep);
			free(cause);
			free(by);
			return;
		}
		if (rc != 0)
			goto fail;
		free(by);
		srv_reply_ok(c, agent_answered(s->agent));
		return;
	} else if (strcmp(type, "interrupt") == 0)
		agent_interrupt(s->agent, by);
	else if (strcmp(type, "rewind") == 0) {
		/* A number, or its text (the screen's /rewind sends text). */
		const char *ts = json_str(req, "to_step");
		unsigned int *id = xmalloc(sizeof *id);
		*id = c->id;
		rc = agent_rewind(s->agent, ts != NULL ? atoi(ts) :
		    (int)json_num(req, "to_step", 0),
		    json_bool(req, "files", 1), json_bool(req, "conversation", 1),
		    json_str(req, "id"), by, srv_rewind_answer, id, &cause);
		if (rc != 1)
			free(id);
		if (rc == 1) {
			free(by);
			return;		/* srv_rewind_answer replies */
		}
		if (rc != 0)
			goto fail;
	} else if (strcmp(type, "mode") == 0) {
		if (agent_set_mode(s->agent, json_str(req, "mode") != NULL ?
		    json_str(req, "mode") : "", &cause) != 0)
			goto fail;
	} else if (strcmp(type, "compact") == 0) {
		if (agent_compact_now(s->agent, json_str(req, "focus"),
		    &cause) != 0)
			goto fail;
	} else if (strcmp(type, "clear") == 0) {
		if (agent_clear(s->agent, by, &cause) != 0)
			goto fail;
	} else if (strcmp(type, "model") == 0) {
		if (agent_set_model(s->agent, json_str(req, "model"), by,
		    &cause) != 0)
			goto fail;
	}
	free(by);
	srv_reply_ok(c, NULL);
	return;
fail:
	free(by);
	srv_reply_error(c, "%s", cause);
	free(cause);
}

/* Clients. */

/*
 * Drop a client: off the list, no more callbacks, freed by srv_reap when
 * the loop next comes round. Whoever is handling it may go on using it
 * (srv_send and srv_queue ignore a dead client).
 */
static void
srv_client_drop(struct srv_client *c, const char *why)
{
	struct srv_client	**cp;
	struct srv_session	*s = c->attached;

	if (c->dead)
		return;
	if (why != NULL)
		log_warnx("client %u dropped: %s", c->id, why);
	for (cp = &srv_clients; *cp != NULL; cp = &(*cp)->next) {
		if (*cp == c) {
			*cp = c->next;
			break;
		}
	}
	c->dead = 1;
	c->attached = NULL;
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	bufferevent_setcb(c->bev, NULL, NULL, NULL, NULL);
	c->next = srv_dead;
	srv_dead = c;
	if (srv_reaper != NULL)
		event_active(srv_reaper, EV_TIMEOUT, 0);
	if (s != NULL) {
		srv_arm_approval_timer(s);
		srv_session_watch(s);
	}
}

/* Free the clients dropped since the loop last came round. */
static void
srv_reap(evutil_socket_t fd, short what, void *arg)
{
	struct srv_client	*c;

	while ((c = srv_dead) != NULL) {
		srv_dead = c->next;
		bufferevent_free(c->bev);
		frame_decoder_release(&c->dec);
		free(c);
	}
}

static void
srv_client_read(struct bufferevent *bev, void *arg)
{
	struct srv_client	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	cJSON			*req;
	char			*cause = NULL, tmp[16384];
	size_t			 n;
	int			 rc;

	while ((n = evbuffer_remove(in, tmp, sizeof tmp)) > 0 &&
	    n != (size_t)-1)
		frame_decoder_feed(&c->dec, tmp, n);
	for (;;) {
		rc = frame_decoder_next(&c->dec, &req, &cause);
		if (rc == 0)
			return;
		if (rc == -1) {
			char *why = xprintf("bad frame: %s", cause);
			free(cause);
			srv_client_drop(c, why);
			free(why);
			return;
		}
		srv_dispatch(c, req);
		cJSON_Delete(req);
		/* The request may have dropped this client (freed later). */
		if (c->dead || srv_exiting)
			return;
	}
}

static void
srv_client_event(struct bufferevent *bev, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		srv_client_drop(arg, NULL);
}

static void
srv_client_new(int fd)
{
	struct srv_client	*c;
	struct ucred		 cred;
	socklen_t		 clen = sizeof cred;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 ||
	    cred.uid != getuid()) {
		log_warnx("refused a client of uid %ld (only uid %ld may "
		    "connect)", (long)cred.uid, (long)getuid());
		close(fd);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->id = srv_next_id++;
	frame_decoder_init(&c->dec, CLIENT_FRAME_MAX);
	c->bev = bufferevent_socket_new(srv_base, fd, BEV_OPT_CLOSE_ON_FREE);
	bufferevent_priority_set(c->bev, SRV_PRI_REQUEST);
	bufferevent_setcb(c->bev, srv_client_read, NULL, srv_client_event, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	c->next = srv_clients;
	srv_clients = c;
}

/* Out of descriptors: stop accepting for a second rather than spin. */
static void
srv_accept_resume(evutil_socket_t fd, short what, void *arg)
{
	event_add(srv_listener, NULL);
}

static void
srv_accept(evutil_socket_t lfd, short what, void *arg)
{
	struct timeval	 tv = { 1, 0 };
	int		 fd, i;

	for (i = 0; i < 16; i++) {	/* then let the loop run a round */
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd != -1) {
			srv_client_new(fd);
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
		    errno == ECONNABORTED)
			return;
		log_warn("accept");
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			event_del(srv_listener);
			evtimer_add(srv_listener_pause, &tv);
		}
		return;
	}
}

static void
srv_signal(evutil_socket_t sig, short what, void *arg)
{
	log_info("signal %d: exiting", (int)sig);
	srv_exiting = 1;
	event_base_loopexit(srv_base, NULL);
}

int
server_main(int foreground)
{
	struct sockaddr_un	 sun;
	struct event		*ev_term, *ev_int, *ev_hup;
	struct server_idle	*idle;
	struct event_config	*cfg;
	struct timeval		 slice = { 0, SRV_BULK_SLICE_MS * 1000 };
	char			**names, *cause = NULL, *logpath;
	size_t			 n, i;
	int			 fd;
	mode_t			 old;

	srv_path = client_socket_path();
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		fatal("socket");
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(srv_path) >= sizeof sun.sun_path)
		fatalx("%s: socket path too long", srv_path);
	xstrlcpy(sun.sun_path, srv_path, sizeof sun.sun_path);
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0)
		fatalx("a server is already running on %s", srv_path);
	close(fd);
	unlink(srv_path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		fatal("socket");
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sun, sizeof sun) != 0)
		fatal("%s", srv_path);
	umask(old);
	chmod(srv_path, 0600);
	if (listen(fd, 64) != 0)
		fatal("listen");
	file_set_nonblock(fd);

	logpath = xprintf("%s.log", srv_path);
	log_open(logpath);
	free(logpath);
	log_prog = "holt server";
	log_info("server %ld started on %s", (long)getpid(), srv_path);
	signal(SIGPIPE, SIG_IGN);
	secret_init();
	file_raise_fd_limit();
	otlp_export_enable();	/* for sessions with otel_endpoint */

	/*
	 * Two priorities, and a look at requests after SRV_BULK_SLICE_MS of
	 * bulk callbacks: see the top of this file.
	 */
	if ((cfg = event_config_new()) == NULL ||
	    event_config_set_max_dispatch_interval(cfg, &slice, -1,
	    SRV_PRI_BULK) != 0 ||
	    (srv_base = event_base_new_with_config(cfg)) == NULL ||
	    event_base_priority_init(srv_base, SRV_PRIORITIES) != 0)
		fatalx("cannot set up the event loop");
	event_config_free(cfg);
	srv_listener = event_new(srv_base, fd, EV_READ | EV_PERSIST,
	    srv_accept, NULL);
	event_priority_set(srv_listener, SRV_PRI_REQUEST);
	event_add(srv_listener, NULL);
	srv_listener_pause = evtimer_new(srv_base, srv_accept_resume, NULL);
	srv_reaper = event_new(srv_base, -1, 0, srv_reap, NULL);
	srv_parker = evtimer_new(srv_base, srv_park_check, NULL);
	srv_park_check(-1, 0, NULL);
	event_priority_set(srv_reaper, SRV_PRI_REQUEST);
	ev_term = evsignal_new(srv_base, SIGTERM, srv_signal, NULL);
	ev_int = evsignal_new(srv_base, SIGINT, srv_signal, NULL);
	ev_hup = evsignal_new(srv_base, SIGHUP, srv_signal, NULL);
	event_add(ev_term, NULL);
	event_add(ev_int, NULL);
	if (!foreground)
		event_add(ev_hup, NULL);

	idle = server_idle_new(srv_base, srv_sandbox_in_use, NULL);

	/* Every session comes back from its log and carries on. */
	session_sweep();
	names = session_list(&n);
	for (i = 0; i < n; i++) {
		if (srv_session_open(names[i], 0, &cause) == NULL) {
			free(cause);
			cause = NULL;
		}
		free(names[i]);
	}
	free(names);

	event_base_dispatch(srv_base);

	server_idle_free(idle);
	while (srv_clients != NULL)
		srv_client_drop(srv_clients, NULL);
	srv_reap(-1, 0, NULL);
	event_free(srv_reaper);
	srv_reaper = NULL;
	event_free(srv_parker);
	while (srv_sessions != NULL) {
		struct srv_session *s = srv_sessions;
		srv_sessions = s->next;
		agent_free(s->agent);
		cJSON_Delete(s->rest);
		event_free(s->approval_timer);
		event_free(s->kill_timer);
		free(s->error);
		free(s->name);
		free(s);
	}
	event_free(srv_listener);
	event_free(srv_listener_pause);
	close(fd);
	event_free(ev_term);
	event_free(ev_int);
	event_free(ev_hup);
	event_base_free(srv_base);
	unlink(srv_path);
	otlp_export_stop(1000);
	log_info("server %ld exited", (long)getpid());
	free(srv_path);
	return EXIT_OK;
}
