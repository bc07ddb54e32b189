/*
 * proxy.c: holt-proxy, the way out of a sandbox made with --net policy
 * (DESIGN 13). It runs on the host, one per running sandbox, outside all
 * of the sandbox's namespaces. The sandbox has only a loopback; envd
 * listens on its 127.0.0.1:3128 and hands every connection it accepts to
 * us as a descriptor over a socket pair (--fd). Once a connection is
 * through, its bytes go socket to socket inside the kernel (splice(2),
 * proxy-splice.c), never through envd or our memory.
 *
 * A client speaks HTTP proxy: CONNECT host:port (HTTPS and anything else:
 * after the 200 we relay bytes and never see inside TLS), or a plain HTTP
 * request with an absolute URI (forwarded with Connection: close). Each
 * host is judged by the policy's net-allow/net-deny rules (policy-net.c):
 * the built-in registry list, the user's file, the session's rules and the
 * workspace's (which may only deny), re-read when they change; for a
 * sandbox holt e2b serve made, its --policy file, the run's "always" rules
 * and the SDK's network options (e2b-net.policy) instead of a session's. A literal
 * address is refused; a name that resolves to a loopback, private or
 * link-local address is refused, so the host's own services stay out of
 * reach. What no rule settles is refused with a message naming the host
 * and the rule that would allow it. Every decision goes to run/net.log.
 *
 * We hold no secret: nothing of the user's environment but HOLT_HOME, no
 * token, no credential; a client's Proxy-Authorization is dropped.
 *
 * HOLT_PROXY_HOSTS names a hosts file consulted before DNS, whose
 * addresses are trusted even on loopback. It exists for tests, which map
 * a registry's name to a server on 127.0.0.1; never set it otherwise.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>

#include "holt.h"
#include "policy.h"
#include "proxy.h"

#define HEAD_MAX	(32 * 1024)	/* a request's head */
#define HEAD_TIMEOUT	30		/* s to send it */
#define CONNECT_TIMEOUT	10		/* s for the target to answer */
#define ASK_TIMEOUT	600		/* s for a human to answer */

struct conn {
	struct bufferevent	*client;
	struct bufferevent	*target;
	char			*host;
	int			 port;
	int			 connect;	/* CONNECT, else plain HTTP */
	struct evbuffer		*head;		/* plain HTTP: what to send */
	struct evdns_getaddrinfo_request *dns;
	struct bufferevent	*ask;		/* net.ask to the server */
	int			 closing;	/* answered: ends once written */
	struct proxy_splice	*relay;		/* then the bytes go here */
	int			 cfd, tfd;	/* its sockets, ours to close */
	struct conn		*prev, *next;
};

static struct event_base	*base;
static struct evdns_base	*dns;
static struct conn		*conns;
static size_t			 nconns, max_conns;
static const char		*sandbox_id;
static const char		*server_path;	/* to ask a human (net.ask) */
static char			*e2b_ask_path;	/* or holt e2b serve's socket */
static char			*sandbox_dir, *log_path, *session_policy;
static FILE			*net_log;
static struct policy		*policy;
static uint64_t			 policy_sig;
static enum policy_mode		 policy_mode_now = POLICY_AUTO;

static void conn_free(struct conn *);
static void ask_event_cb(struct bufferevent *, short, void *);

/* The decision log: one line per decision (run/net.log). */
static void
net_logf(const char *verdict, struct conn *c, const char *why)
{
	char		 when[32];
	time_t		 t = time(NULL);
	struct tm	 tm;

	if (net_log == NULL)
		return;
	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(net_log, "%s %s %s:%d %s\n", when, verdict, c->host != NULL ?
	    c->host : "-", c->port, why);
	fflush(net_log);
}

/* What the policy files are now: changes with any write, add, removal. */
static uint64_t
policy_files_sig(char **paths, size_t n)
{
	struct stat	 st;
	uint64_t	 h = 1469598103934665603ULL;
	size_t		 i;

	for (i = 0; i < n; i++) {
		if (stat(paths[i], &st) != 0)
			memset(&st, 0, sizeof st);
		h = (h ^ (uint64_t)st.st_mtim.tv_sec) * 1099511628211ULL;
		h = (h ^ (uint64_t)st.st_mtim.tv_nsec) * 1099511628211ULL;
		h = (h ^ (uint64_t)st.st_size) * 1099511628211ULL;
		h = (h ^ (uint64_t)st.st_ino) * 1099511628211ULL;
	}
	return h;
}

/*
 * A sandbox no session uses but holt e2b serve made, with --policy: its
 * file and mode, from data/sandboxes/<id>/e2b.json (written after the
 * sandbox started, so looked for each time). The file, or NULL; *rules
 * the server's "always" rules file, or NULL. In auto and manual modes the
 * server is the one to ask (e2b_ask_path), on its own socket.
 */
static char *
e2b_policy(char **rules)
{
	char		*path, *cause = NULL, *file = NULL;
	cJSON		*j;
	const char	*mode;

	*rules = NULL;
	path = paths_join(sandbox_dir, "e2b.json");
	if (access(path, F_OK) == 0 &&
	    (j = json_load_file(path, &cause)) != NULL) {
		if (json_str(j, "policy") != NULL)
			file = xstrdup(json_str(j, "policy"));
		if ((mode = json_str(j, "mode")) != NULL)
			policy_mode_parse(mode, &policy_mode_now);
		if (json_str(j, "rules") != NULL)
			*rules = xstrdup(json_str(j, "rules"));
		free(e2b_ask_path);
		e2b_ask_path = json_str(j, "ask") != NULL ?
		    xstrdup(json_str(j, "ask")) : NULL;
		cJSON_Delete(j);
	}
	free(cause);
	free(path);
	return file;
}

/* Rules, re-read when a file changed. A bad file keeps the last rules. */
static void
policy_refresh(void)
{
	char		*paths[5], *cause = NULL, *ws;
	struct policy	*p;
	uint64_t	 m;
	int		 r;
	size_t		 i;

	paths[0] = paths_join(paths_config_dir(), "policy");
	paths[3] = NULL;
	paths[1] = session_policy != NULL ? xstrdup(session_policy) :
	    e2b_policy(&paths[3]);
	if (paths[1] == NULL)
		paths[1] = xstrdup("/nonexistent");
	if (paths[3] == NULL)
		paths[3] = xstrdup("/nonexistent");
	ws = paths_join(sandbox_dir, "workspace");
	paths[2] = paths_join(ws, POLICY_WORKSPACE_FILE);
	free(ws);
	/* The network options holt e2b serve was given for the sandbox. */
	paths[4] = paths_join(sandbox_dir, "e2b-net.policy");
	m = policy_files_sig(paths, nitems(paths));
	if (policy == NULL || m != policy_sig) {
		p = policy_new();
		r = policy_load_file(p, paths[0], "user", &cause);
		if (r == 0)
			r = policy_load_file(p, paths[1], session_policy !=
			    NULL ? "session" : "e2b", &cause);
		if (r == 0)
			r = policy_load_file(p, paths[3], "session", &cause);
		if (r == 0)
			r = policy_load_file(p, paths[4], "e2b-network", &cause);
		if (r == 0)
			r = policy_load_file(p, paths[2], "workspace", &cause);
		if (r != 0) {
			log_warnx("%s (keeping the rules in effect)", cause);
			free(cause);
			policy_free(p);
			if (policy == NULL)
				policy = policy_new();
		} else {
			policy_free(policy);
			policy = p;
		}
		policy_sig = m;
	}
	for (i = 0; i < nitems(paths); i++)
		free(paths[i]);
}

/* A short HTTP answer for the client, logged. */
static void
refusal_add(struct conn *c, struct evbuffer *out, int status,
    const char *reason, const char *msg)
{
	net_logf(status == 403 ? "deny" : "fail", c, msg);
	evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
	    "Connection: close\r\nX-Holt-Proxy: %s\r\nContent-Length: %zu\r\n"
	    "\r\n%s\n", status, reason, msg, strlen(msg) + 1, msg);
}

/* A short HTTP answer to the client, then the connection ends. */
static void
conn_refuse(struct conn *c, int status, const char *reason, const char *msg)
{
	refusal_add(c, bufferevent_get_output(c->client), status, reason, msg);
	if (c->target != NULL) {
		bufferevent_free(c->target);
		c->target = NULL;
	}
	bufferevent_disable(c->client, EV_READ);
	/* Freed once written (client_write_cb). */
	bufferevent_setwatermark(c->client, EV_WRITE, 0, 0);
	c->closing = 1;
}

/* Loopback, private, link-local, unspecified, multicast: not for us. */
static int
addr_internal(const struct sockaddr *sa)
{
	const struct sockaddr_in	*s4;
	const struct sockaddr_in6	*s6;
	const unsigned char		*b;
	uint32_t			 a;

	if (sa->sa_family == AF_INET) {
		s4 = (const struct sockaddr_in *)sa;
		a = ntohl(s4->sin_addr.s_addr);
		return (a >> 24) == 127 || (a >> 24) == 0 || (a >> 24) == 10 ||
		    (a >> 16) == 0xa9fe || (a >> 20) == 0xac1 ||
		    (a >> 16) == 0xc0a8 || (a >> 22) == (0x64400000U >> 22) ||
		    (a >> 28) >= 0xe;
	}
	if (sa->sa_family != AF_INET6)
		return 1;
	s6 = (const struct sockaddr_in6 *)sa;
	b = s6->sin6_addr.s6_addr;
	if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		struct sockaddr_in	 v4;

		memset(&v4, 0, sizeof v4);
		v4.sin_family = AF_INET;
		memcpy(&v4.sin_addr, b + 12, 4);
		return addr_internal((struct sockaddr *)&v4);
	}
	return IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) ||
	    IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) ||
	    IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr) ||
	    IN6_IS_ADDR_MULTICAST(&s6->sin6_addr) || (b[0] & 0xfe) == 0xfc;
}

/* relay ---------------------------------------------------------------- */

/* The relay is over: a plain request whose target never spoke gets why. */
static void
relay_end_cb(struct proxy_splice *r, enum proxy_splice_end why, void *arg)
{
	struct conn	*c = arg;
	struct evbuffer	*out;
	char		*msg;

	(void)r;
	if (why == PROXY_SPLICE_SILENT || why == PROXY_SPLICE_TIMEOUT) {
		msg = xprintf("holt: %s:%d did not answer%s", c->host, c->port,
		    why == PROXY_SPLICE_TIMEOUT ? " within 10 s" : "");
		out = evbuffer_new();
		/* Nothing was written to the client yet: this fits. */
		refusal_add(c, out, why == PROXY_SPLICE_TIMEOUT ? 504 : 502,
		    why == PROXY_SPLICE_TIMEOUT ? "Gateway Timeout" :
		    "Bad Gateway", msg);
		evbuffer_write(out, c->cfd);
		evbuffer_free(out);
		free(msg);
	}
	conn_free(c);
}

/*
 * The target answered the connect: from now on the bytes go through the
 * kernel (proxy-splice.c), and the bufferevents of the request are done.
 */
static void
conn_relay(struct conn *c)
{
	struct evbuffer	*to_target = evbuffer_new(), *to_client = evbuffer_new();
	struct timeval	 tv = { CONNECT_TIMEOUT, 0 };
	int		 cfd = bufferevent_getfd(c->client);
	int		 tfd = bufferevent_getfd(c->target);

	if (c->connect)
		evbuffer_add_printf(to_client,
		    "HTTP/1.1 200 Connection established\r\n\r\n");
	else
		evbuffer_add_buffer(to_target, c->head);
	/* Bytes the client sent after its head. */
	evbuffer_add_buffer(to_target, bufferevent_get_input(c->client));
	c->relay = proxy_splice_new(base, cfd, tfd, to_target, to_client,
	    relay_end_cb, c);
	/* Plain HTTP: the answer must start within the timeout. */
	if (!c->connect)
		proxy_splice_want_answer(c->relay, base, &tv);
	c->cfd = cfd;
	c->tfd = tfd;
	bufferevent_setfd(c->client, -1);
	bufferevent_setfd(c->target, -1);
	bufferevent_free(c->client);
	bufferevent_free(c->target);
	c->client = c->target = NULL;
}

static void
target_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;
	char		*msg;

	if ((what & BEV_EVENT_CONNECTED) != 0) {
		net_logf("open", c, "connected");
		conn_relay(c);
		return;
	}
	msg = xprintf("holt: %s:%d %s", c->host, c->port,
	    (what & BEV_EVENT_TIMEOUT) != 0 ? "did not answer within "
	    "10 s" : evutil_socket_error_to_string(
	    EVUTIL_SOCKET_ERROR()));
	(void)bev;
	conn_refuse(c, (what & BEV_EVENT_TIMEOUT) != 0 ? 504 : 502,
	    (what & BEV_EVENT_TIMEOUT) != 0 ? "Gateway Timeout" :
	    "Bad Gateway", msg);
	free(msg);
}

static void
conn_connect(struct conn *c, const struct sockaddr *sa, socklen_t len)
{
	struct timeval	 tv = { CONNECT_TIMEOUT, 0 };

	c->target = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(c->target, NULL, NULL, target_event_cb, c);
	bufferevent_set_timeouts(c->target, &tv, &tv);
	if (bufferevent_socket_connect(c->target, sa, (int)len) != 0)
		target_event_cb(c->target, BEV_EVENT_ERROR, c);
}

/* HOLT_PROXY_HOSTS (tests only): an address for host, trusted as it is. */
static int
hosts_file_lookup(const char *host, struct sockaddr_storage *ss,
    socklen_t *len)
{
	const char	*path = getenv("HOLT_PROXY_HOSTS");
	char		 line[1024], *save, *addr, *name;
	FILE		*f;
	struct sockaddr_in	*s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*s6 = (struct sockaddr_in6 *)ss;
	int		 found = 0;

	if (path == NULL || *path == '\0' || (f = fopen(path, "re")) == NULL)
		return 0;
	while (!found && fgets(line, sizeof line, f) != NULL) {
		if ((addr = strtok_r(line, " \t\r\n", &save)) == NULL ||
		    *addr == '#')
			continue;
		while (!found && (name = strtok_r(NULL, " \t\r\n", &save)) !=
		    NULL) {
			if (strcasecmp(name, host) != 0)
				continue;
			memset(ss, 0, sizeof *ss);
			if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
				s4->sin_family = AF_INET;
				*len = sizeof *s4;
				found = 1;
			} else if (inet_pton(AF_INET6, addr,
			    &s6->sin6_addr) == 1) {
				s6->sin6_family = AF_INET6;
				*len = sizeof *s6;
				found = 1;
			}
		}
	}
	fclose(f);
	return found;
}

static void
dns_cb(int err, struct evutil_addrinfo *res, void *arg)
{
	struct conn		*c = arg;
	struct evutil_addrinfo	*ai;
	char			*msg, addr[64];

	c->dns = NULL;
	if (err == EVUTIL_EAI_CANCEL)
		return;
	if (err != 0) {
		msg = xprintf("holt: host '%s': %s", c->host,
		    evutil_gai_strerror(err));
		conn_refuse(c, 502, "Bad Gateway", msg);
		free(msg);
		return;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if (addr_internal(ai->ai_addr)) {
			evutil_inet_ntop(ai->ai_family, ai->ai_family == AF_INET ?
			    (void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr :
			    (void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr,
			    addr, sizeof addr);
			msg = xprintf("holt: host '%s' resolves to %s, a "
			    "loopback, private or link-local address: refused "
			    "(the host's own services stay out of reach)",
			    c->host, addr);
			conn_refuse(c, 403, "Forbidden", msg);
			free(msg);
			evutil_freeaddrinfo(res);
			return;
		}
	}
	((struct sockaddr_in *)res->ai_addr)->sin_port = htons((uint16_t)c->port);
	conn_connect(c, res->ai_addr, (socklen_t)res->ai_addrlen);
	evutil_freeaddrinfo(res);
}

/* request ------------------------------------------------------------- */

/* host[:port] into c; -1 if it is no host and port. */
static int
parse_authority(struct conn *c, const char *s, size_t n, int def)
{
	const char	*colon, *end = s + n;
	char		*h;
	long		 port = def;

	if (n > 0 && *s == '[') {
		if ((colon = memchr(s, ']', n)) == NULL)
			return -1;
		h = xstrndup(s, (size_t)(colon + 1 - s));
		colon++;
		if (colon < end && *colon != ':') {
			free(h);
			return -1;
		}
	} else {
		colon = memchr(s, ':', n);
		h = xstrndup(s, (size_t)((colon != NULL ? colon : end) - s));
	}
	if (colon != NULL && colon < end) {
		char	*p = xstrndup(colon + 1, (size_t)(end - colon - 1)), *e;

		port = strtol(p, &e, 10);
		if (*p == '\0' || *e != '\0' || port < 1 || port > 65535) {
			free(p);
			free(h);
			return -1;
		}
		free(p);
	}
	c->host = h;
	c->port = (int)port;
	return *h == '\0' ? -1 : 0;
}

/* Allowed: resolve (or the test-only hosts file) and connect. */
static void
conn_go(struct conn *c)
{
	struct evutil_addrinfo		 hints;
	struct sockaddr_storage		 ss;
	socklen_t			 len;

	bufferevent_disable(c->client, EV_READ);
	if (hosts_file_lookup(c->host, &ss, &len)) {
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)c->port);
		conn_connect(c, (struct sockaddr *)&ss, len);
		return;
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	c->dns = evdns_getaddrinfo(dns, c->host, NULL, &hints, dns_cb, c);
}

/* The server's answer to net.ask: frames of 4-byte length, then JSON. */
static void
ask_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;
	struct evbuffer	*in = bufferevent_get_input(bev);
	unsigned char	 hdr[4];
	uint32_t	 len;
	char		*data, *msg;
	cJSON		*j;
	const char	*type, *decision, *reason;

	while (evbuffer_get_length(in) >= 4) {
		evbuffer_copyout(in, hdr, 4);
		len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 |
		    (uint32_t)hdr[2] << 8 | hdr[3];
		if (len > FRAME_MAX) {
			ask_event_cb(bev, BEV_EVENT_ERROR, c);
			return;
		}
		if (evbuffer_get_length(in) < 4 + (size_t)len)
			return;
		evbuffer_drain(in, 4);
		data = xmalloc((size_t)len + 1);
		evbuffer_remove(in, data, len);
		data[len] = '\0';
		j = cJSON_Parse(data);
		free(data);
		type = json_str(j, "type");
		if (type != NULL && strcmp(type, "hello") == 0) {
			cJSON_Delete(j);
			continue;
		}
		decision = json_str(j, "decision");
		reason = json_str(j, "reason");
		bufferevent_free(c->ask);
		c->ask = NULL;
		if (decision != NULL && strcmp(decision, "allow") == 0) {
			net_logf("allow", c, "allowed by the user");
			conn_go(c);
		} else {
			msg = xprintf("holt: host '%s' (port %d) refused: %s; "
			    "to allow it add 'net-allow %s' to the policy",
			    c->host, c->port, reason != NULL ? reason :
			    type != NULL && strcmp(type, "error") == 0 ?
			    json_str(j, "message") : "denied", c->host);
			conn_refuse(c, 403, "Forbidden", msg);
			free(msg);
		}
		cJSON_Delete(j);
		return;
	}
}

static void
ask_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;
	char		*msg;

	if ((what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) == 0)
		return;
	(void)bev;
	bufferevent_free(c->ask);
	c->ask = NULL;
	msg = xprintf("holt: host '%s' (port %d) refused: %s", c->host,
	    c->port, (what & BEV_EVENT_TIMEOUT) != 0 ? "nobody answered in "
	    "time" : "the holt server went away before anyone answered");
	conn_refuse(c, 403, "Forbidden", msg);
	free(msg);
}

/*
 * Ask the human, through the server and the session using the sandbox,
 * or holt e2b serve for a sandbox it made.
 */
static int
conn_ask(struct conn *c)
{
	struct sockaddr_un	 sun;
	struct timeval		 tv = { ASK_TIMEOUT, 0 };
	cJSON			*hello, *req;
	int			 fd;
	const char		*to = session_policy == NULL &&
	    e2b_ask_path != NULL ? e2b_ask_path : server_path;

	if (to == NULL || strlen(to) >= sizeof sun.sun_path)
		return -1;
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, to, strlen(to));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		close(fd);
		return -1;
	}
	hello = cJSON_CreateObject();
	cJSON_AddStringToObject(hello, "type", "hello");
	cJSON_AddNumberToObject(hello, "version", HOLT_PROTOCOL_VERSION);
	cJSON_AddStringToObject(hello, "client", "proxy");
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "type", "net.ask");
	cJSON_AddStringToObject(req, "sandbox", sandbox_id);
	cJSON_AddStringToObject(req, "host", c->host);
	cJSON_AddNumberToObject(req, "port", c->port);
	if (frame_write2_fd(fd, hello, req) != 0) {
		cJSON_Delete(hello);
		cJSON_Delete(req);
		close(fd);
		return -1;
	}
	cJSON_Delete(hello);
	cJSON_Delete(req);
	evutil_make_socket_nonblocking(fd);
	c->ask = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(c->ask, ask_read_cb, NULL, ask_event_cb, c);
	bufferevent_set_timeouts(c->ask, &tv, NULL);
	bufferevent_enable(c->ask, EV_READ);
	bufferevent_disable(c->client, EV_READ);
	net_logf("ask", c, "asking the session's human");
	return 0;
}

static void
conn_judge(struct conn *c)
{
	struct policy_result		*res;
	char				*msg, *norm, *reason;

	policy_refresh();
	res = policy_check_host(policy, policy_mode_now, c->host);
	/* Resolved as judged: lower case, no final dot. */
	if (res->verdict != POLICY_DENY &&
	    (norm = policy_net_host_norm(c->host)) != NULL) {
		free(c->host);
		c->host = norm;
	}
	if (res->verdict == POLICY_ASK && conn_ask(c) == 0) {
		policy_result_free(res);
		return;
	}
	if (res->verdict != POLICY_ALLOW) {
		if (policy_net_is_ip(c->host))
			msg = xprintf("holt: '%s' is an IP address; the sandbox "
			    "reaches hosts by name only", c->host);
		else
			msg = xprintf("holt: host '%s' (port %d) refused: %s; "
			    "to allow it add 'net-allow %s' to the policy "
			    "(holt policy check --host %s)", c->host, c->port,
			    res->reason, c->host, c->host);
		/*
		 * Clients show the status line where they show no body
		 * (npm, pip, git after a CONNECT): it says how, too.
		 */
		norm = policy_net_is_ip(c->host) ? NULL :
		    policy_net_host_norm(c->host);
		reason = norm == NULL ? xstrdup("Forbidden") :
		    xprintf("Forbidden (holt: to allow it add 'net-allow %s' "
		    "to the policy)", norm);
		conn_refuse(c, 403, reason, msg);
		free(reason);
		free(norm);
		free(msg);
		policy_result_free(res);
		return;
	}
	msg = xprintf("%s (%s:%u)", res->parts[0].rule != NULL ?
	    res->parts[0].rule : res->reason, res->parts[0].source != NULL ?
	    res->parts[0].source : policy_mode_name(policy_mode_now),
	    res->parts[0].line);
	net_logf("allow", c, msg);
	free(msg);
	policy_result_free(res);
	conn_go(c);
}

/* Plain HTTP: "GET http://h/p HTTP/1.1" becomes "GET /p HTTP/1.1". */
static int
conn_plain(struct conn *c, const char *method, const char *uri,
    const char *version, char *headers)
{
	const char	*auth = uri + 7, *path;
	char		*line, *save, *name;

	if (strncasecmp(uri, "http://", 7) != 0)
		return -1;
	path = auth + strcspn(auth, "/?#");
	if (parse_authority(c, auth, (size_t)(path - auth), 80) != 0)
		return -1;
	c->head = evbuffer_new();
	evbuffer_add_printf(c->head, "%s %s%s %s\r\n", method, *path == '/' ?
	    "" : "/", path, version);
	for (line = strtok_r(headers, "\r\n", &save); line != NULL;
	    line = strtok_r(NULL, "\r\n", &save)) {
		name = line;
		if (strncasecmp(name, "proxy-", 6) == 0 ||
		    strncasecmp(name, "connection:", 11) == 0 ||
		    strncasecmp(name, "keep-alive:", 11) == 0)
			continue;
		evbuffer_add_printf(c->head, "%s\r\n", line);
	}
	evbuffer_add_printf(c->head, "Connection: close\r\n\r\n");
	return 0;
}

static void
client_head_cb(struct bufferevent *bev, void *arg)
{
	struct conn		*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_ptr	 end;
	char			*head, *sp1, *sp2, *eol;
	size_t			 n;
	int			 bad;

	end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (end.pos == -1) {
		if (evbuffer_get_length(in) > HEAD_MAX)
			conn_refuse(c, 431, "Request Header Fields Too Large",
			    "holt: request head too large");
		return;
	}
	n = (size_t)end.pos + 4;
	head = xmalloc(n + 1);
	evbuffer_remove(in, head, n);
	head[n] = '\0';
	eol = strstr(head, "\r\n");
	*eol = '\0';
	sp1 = strchr(head, ' ');
	sp2 = sp1 != NULL ? strchr(sp1 + 1, ' ') : NULL;
	bad = sp1 == NULL || sp2 == NULL || strncmp(sp2 + 1, "HTTP/1.", 7) != 0;
	if (!bad) {
		*sp1 = *sp2 = '\0';
		if (strcmp(head, "CONNECT") == 0) {
			c->connect = 1;
			bad = parse_authority(c, sp1 + 1, strlen(sp1 + 1), 443);
		} else
			bad = conn_plain(c, head, sp1 + 1, sp2 + 1, eol + 2);
	}
	free(head);
	bufferevent_set_timeouts(c->client, NULL, NULL);
	if (bad) {
		conn_refuse(c, 400, "Bad Request", "holt: the sandbox's proxy "
		    "takes CONNECT host:port or a request for an http:// URL");
		return;
	}
	conn_judge(c);
}

static void
client_event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if ((what & BEV_EVENT_TIMEOUT) != 0)
		log_debug("a client sent no request within %d s", HEAD_TIMEOUT);
	conn_free(arg);
}

static void
client_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	if (c->closing)
		conn_free(c);
}

static void
conn_free(struct conn *c)
{
	if (c->dns != NULL)
		evdns_getaddrinfo_cancel(c->dns);
	if (c->ask != NULL)
		bufferevent_free(c->ask);
	if (c->client != NULL)
		bufferevent_free(c->client);
	if (c->target != NULL)
		bufferevent_free(c->target);
	if (c->head != NULL)
		evbuffer_free(c->head);
	if (c->relay != NULL) {
		proxy_splice_free(c->relay);
		close(c->cfd);
		close(c->tfd);
	}
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	nconns--;
	free(c->host);
	free(c);
}

static void
conn_new(int fd)
{
	struct conn	*c;
	struct timeval	 tv = { HEAD_TIMEOUT, 0 };
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
	    "Connection: close\r\nContent-Length: 47\r\n\r\n"
	    "holt: too many connections through the proxy\n";

	evutil_make_socket_nonblocking(fd);
	if (nconns >= max_conns) {
		if (write(fd, busy, sizeof busy - 1) < 0)
			log_debug("refusing a connection: %s", strerror(errno));
		close(fd);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->client = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(c->client, client_head_cb, client_write_cb,
	    client_event_cb, c);
	bufferevent_set_timeouts(c->client, &tv, NULL);
	bufferevent_enable(c->client, EV_READ | EV_WRITE);
	c->next = conns;
	if (conns != NULL)
		conns->prev = c;
	conns = c;
	nconns++;
}

/* envd hands us each connection it accepted inside, one per message. */
static void
handoff_cb(evutil_socket_t fd, short what, void *arg)
{
	struct msghdr	 mh;
	struct iovec	 iov;
	struct cmsghdr	*cm;
	union {
		char		buf[CMSG_SPACE(16 * sizeof(int))];
		struct cmsghdr	align;
	} u;
	char		 byte[16];
	ssize_t		 n;
	size_t		 i, nfd;
	int		 fds[16];

	(void)what;
	(void)arg;
	for (;;) {
		memset(&mh, 0, sizeof mh);
		iov.iov_base = byte;
		iov.iov_len = sizeof byte;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof u.buf;
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			/* envd is gone: the sandbox stopped. So do we. */
			log_info("sandbox %s: envd closed the hand-off socket",
			    sandbox_id);
			event_base_loopexit(base, NULL);
			return;
		}
		for (cm = CMSG_FIRSTHDR(&mh); cm != NULL;
		    cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level != SOL_SOCKET ||
			    cm->cmsg_type != SCM_RIGHTS)
				continue;
			nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			if (nfd > nitems(fds))
				nfd = nitems(fds);
			memcpy(fds, CMSG_DATA(cm), nfd * sizeof(int));
			for (i = 0; i < nfd; i++)
				conn_new(fds[i]);
		}
	}
}

/* The session using this sandbox, if any: its rules and its mode. */
static void
find_session(void)
{
	DIR		*d;
	struct dirent	*de;
	char		*path, *cause = NULL;
	cJSON		*s;
	const char	*sbx, *mode;

	if ((d = opendir(paths_sessions_dir())) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		path = xprintf("%s/%s/session.json", paths_sessions_dir(),
		    de->d_name);
		s = json_load_file(path, &cause);
		free(path);
		free(cause);
		cause = NULL;
		if (s == NULL)
			continue;
		sbx = json_str(s, "sandbox");
		if (sbx != NULL && strcmp(sbx, sandbox_id) == 0) {
			session_policy = xprintf("%s/%s/policy",
			    paths_sessions_dir(), de->d_name);
			if ((mode = json_str(s, "mode")) != NULL)
				policy_mode_parse(mode, &policy_mode_now);
			cJSON_Delete(s);
			break;
		}
		cJSON_Delete(s);
	}
	closedir(d);
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: holt-proxy --id SANDBOX-ID --fd N [--server PATH] "
	    "[--mode MODE]\n"
	    "(started by holt for a sandbox made with --net policy; see "
	    "holt(1))\n");
}

int
main(int argc, char **argv)
{
	struct rlimit	 rl;
	struct event	*ev;
	int		 fd = -1, i;

	log_prog = "holt-proxy";
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--id") == 0 && i + 1 < argc)
			sandbox_id = argv[++i];
		else if (strcmp(argv[i], "--fd") == 0 && i + 1 < argc)
			fd = atoi(argv[++i]);
		else if (strcmp(argv[i], "--server") == 0 && i + 1 < argc)
			server_path = argv[++i];
		else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
			if (policy_mode_parse(argv[++i], &policy_mode_now) != 0) {
				usage(stderr);
				return 2;
			}
		}
		else if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (sandbox_id == NULL || fd < 3 || fcntl(fd, F_GETFD) == -1) {
		usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	/*
	 * Six descriptors a connection (two sockets, a pipe each way): as
	 * many as the system lets us.
	 */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	max_conns = rl.rlim_cur > 256 ? (size_t)(rl.rlim_cur - 64) / 6 : 32;
	if (max_conns > 8192)
		max_conns = 8192;
	sandbox_dir = paths_join(paths_sandboxes_dir(), sandbox_id);
	log_path = paths_join(sandbox_dir, "run/net.log");
	if ((net_log = fopen(log_path, "ae")) == NULL)
		log_warn("%s", log_path);
	find_session();
	policy_refresh();
	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	if ((dns = evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS)) ==
	    NULL)
		dns = evdns_base_new(base, 0);
	evutil_make_socket_nonblocking(fd);
	ev = event_new(base, fd, EV_READ | EV_PERSIST, handoff_cb, NULL);
	event_add(ev, NULL);
	log_info("sandbox %s: proxy ready (%zu connections at most)",
	    sandbox_id, max_conns);
	event_base_dispatch(base);
	event_free(ev);
	while (conns != NULL)
		conn_free(conns);
	evdns_base_free(dns, 0);
	event_base_free(base);
	policy_free(policy);
	if (net_log != NULL)
		fclose(net_log);
	return 0;
}
