/*
 * e2b-control.c: where a human answers what holt e2b serve's policy asks
 * about. The server listens on run/NAME (0600, peers of another uid
 * refused), the socket holt -L NAME uses, and speaks just enough of the
 * client protocol for holt approve: hello, then approve {session: the
 * sandbox id, request_id, decision}; and for its sandboxes' proxies,
 * net.ask {sandbox, host, port}, answered {decision, reason} once a human
 * did (e2b-ask.c). Anything else is answered with an error; a bad frame
 * drops that peer only. Beside the socket, run/NAME.policy holds the
 * "always" rules of the run, for the proxies to read.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2b.h"

struct e2b_control {
	struct e2b_server	*srv;
	struct evconnlistener	*lev;
	char			*path;
	char			*rules;		/* run/NAME.policy */
};

struct control_peer {
	struct e2b_server	*srv;
	struct bufferevent	*bev;
	struct frame_decoder	 dec;
	int			 hello;
	struct e2b_ask		*ask;		/* its net.ask, waiting */
};

static void
peer_free(struct control_peer *p)
{
	e2b_ask_withdraw(p->ask, "the proxy left");
	bufferevent_free(p->bev);
	frame_decoder_release(&p->dec);
	free(p);
}

static void
peer_send(struct control_peer *p, cJSON *j)
{
	char	*f;
	size_t	 len;

	if ((f = frame_encode(j, &len)) != NULL)
		bufferevent_write(p->bev, f, len);
	free(f);
	cJSON_Delete(j);
}

static void
peer_error(struct control_peer *p, const char *message)
{
	cJSON	*j = cJSON_CreateObject();

	cJSON_AddStringToObject(j, "type", "error");
	cJSON_AddStringToObject(j, "message", message);
	peer_send(p, j);
}

/* The answer to a proxy's net.ask. */
static void
peer_answered(void *arg, int allow, const char *why)
{
	struct control_peer	*p = arg;
	cJSON			*j = cJSON_CreateObject();

	p->ask = NULL;
	cJSON_AddStringToObject(j, "type", "ok");
	cJSON_AddStringToObject(j, "decision", allow ? "allow" : "deny");
	if (why != NULL)
		cJSON_AddStringToObject(j, "reason", why);
	peer_send(p, j);
}

/*
 * net.ask {sandbox, host, port}: a sandbox's proxy asks about a host no
 * rule settles; answered when a human does (one at a time per peer).
 */
static void
peer_net_ask(struct control_peer *p, const cJSON *req)
{
	const char	*sbx = json_str(req, "sandbox");
	const char	*host = json_str(req, "host");
	char		*why;
	int		 port = (int)json_num(req, "port", 0);

	if (sbx == NULL || host == NULL || p->ask != NULL ||
	    e2b_server_box(p->srv, sbx) == NULL) {
		peer_error(p, "net.ask: the sandbox (one of this server's) and "
		    "host are needed, one ask at a time");
		return;
	}
	why = xprintf("no net-allow rule names '%s'", host);
	p->ask = e2b_ask_new(p->srv, sbx, E2B_ASK_HOST, host, port, why,
	    peer_answered, p);
	free(why);
}

static void
peer_request(struct control_peer *p, const cJSON *req)
{
	const char	*type = json_str(req, "type"), *sbx, *d, *rid;
	char		*cause = NULL;
	cJSON		*j;

	if (type == NULL)
		type = "";
	if (!p->hello && strcmp(type, "hello") == 0) {
		p->hello = 1;
		j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "type", "hello");
		cJSON_AddNumberToObject(j, "version", HOLT_PROTOCOL_VERSION);
		cJSON_AddNumberToObject(j, "pid", (double)getpid());
		peer_send(p, j);
		return;
	}
	if (p->hello && strcmp(type, "net.ask") == 0) {
		peer_net_ask(p, req);
		return;
	}
	if (!p->hello || strcmp(type, "approve") != 0) {
		peer_error(p, "this is holt e2b serve: it answers approve "
		    "and net.ask only");
		return;
	}
	sbx = json_str(req, "session");
	d = json_str(req, "decision");
	rid = json_str(req, "request_id");
	if (sbx == NULL || d == NULL || (strcmp(d, "allow") != 0 &&
	    strcmp(d, "deny") != 0 && strcmp(d, "always") != 0)) {
		peer_error(p, "approve: -t SANDBOX-ID and allow, deny or always");
		return;
	}
	if (e2b_ask_decide(p->srv, sbx, rid != NULL ?
	    strtoull(rid, NULL, 10) : 0, d, &cause) != 0) {
		peer_error(p, cause);
		free(cause);
		return;
	}
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "type", "ok");
	peer_send(p, j);
}

static void
peer_read(struct bufferevent *bev, void *arg)
{
	struct control_peer	*p = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	char			 buf[4096], *cause = NULL;
	size_t			 n;
	cJSON			*f;

	while ((n = evbuffer_remove(in, buf, sizeof buf)) > 0 &&
	    n != (size_t)-1)
		frame_decoder_feed(&p->dec, buf, n);
	for (;;) {
		if (frame_decoder_next(&p->dec, &f, &cause) < 0) {
			log_warnx("approval socket: %s", cause);
			free(cause);
			peer_free(p);
			return;
		}
		if (f == NULL)
			return;
		peer_request(p, f);
		cJSON_Delete(f);
	}
}

static void
peer_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		peer_free(arg);
}

static void
control_accept(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int len, void *arg)
{
	struct e2b_control	*c = arg;
	struct control_peer	*p;
	struct ucred		 cred;
	socklen_t		 clen = sizeof cred;

	(void)lev;
	(void)sa;
	(void)len;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 ||
	    cred.uid != getuid()) {
		close(fd);
		return;
	}
	p = xcalloc(1, sizeof *p);
	p->srv = c->srv;
	frame_decoder_init(&p->dec, 64 * 1024);
	p->bev = bufferevent_socket_new(c->srv->base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(p->bev, peer_read, NULL, peer_event, p);
	bufferevent_enable(p->bev, EV_READ);
}

struct e2b_control *
e2b_control_new(struct e2b_server *srv, char **cause)
{
	struct e2b_control	*c;
	struct sockaddr_un	 sun;
	mode_t			 old;
	int			 fd;

	c = xcalloc(1, sizeof *c);
	c->srv = srv;
	c->path = paths_join(paths_run_dir(), srv->name);
	c->rules = xprintf("%s.policy", c->path);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(c->path) >= sizeof sun.sun_path) {
		*cause = xprintf("%s: socket path too long", c->path);
		goto fail;
	}
	xstrlcpy(sun.sun_path, c->path, sizeof sun.sun_path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		fatal("socket");
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0) {
		close(fd);
		*cause = xprintf("%s: a server already listens there (--name "
		    "picks another)", c->path);
		goto fail;
	}
	close(fd);
	unlink(c->path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		fatal("socket");
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		umask(old);
		*cause = xprintf("%s: %s", c->path, strerror(errno));
		close(fd);
		goto fail;
	}
	umask(old);
	file_set_nonblock(fd);
	c->lev = evconnlistener_new(srv->base, control_accept, c,
	    LEV_OPT_CLOSE_ON_FREE, 16, fd);
	if (c->lev == NULL) {
		*cause = xprintf("%s: %s", c->path, strerror(errno));
		close(fd);
		unlink(c->path);
		goto fail;
	}
	/* "always" rules of this run, which the proxies read: none yet. */
	if ((fd = open(c->rules, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1) {
		*cause = xprintf("%s: %s", c->rules, strerror(errno));
		evconnlistener_free(c->lev);
		unlink(c->path);
		goto fail;
	}
	close(fd);
	srv->rules_file = c->rules;
	return c;
fail:
	free(c->rules);
	free(c->path);
	free(c);
	return NULL;
}

const char *
e2b_control_path(struct e2b_control *c)
{
	return c->path;
}

void
e2b_control_free(struct e2b_control *c)
{
	if (c == NULL)
		return;
	evconnlistener_free(c->lev);
	unlink(c->path);
	unlink(c->rules);
	c->srv->rules_file = NULL;
	free(c->rules);
	free(c->path);
	free(c);
}
