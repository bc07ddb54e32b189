/*
 * e2b-files.c: the sandbox's files through E2B's API: filesystem.Filesystem
 * (Connect, unary JSON: Stat, ListDir, MakeDir, Move, Remove) and the plain
 * HTTP /files (GET reads a file; POST writes one or more, as
 * multipart/form-data or application/octet-stream). Each request is a few
 * calls to holt-envd, whose file operations are confined to /workspace,
 * /home/user and /tmp of the sandbox; a relative path is below /home/user,
 * as in E2B. They are blocking calls on the loop: a call costs what envd
 * takes to read or write the file, up to E2B_MAX_BODY.
 */
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "e2b.h"

static void files_asking_clear(struct e2b_server *);
static int files_hold(struct e2b_server *, struct evhttp_request *,
    const char *, int);

static const char *
base_name(const char *path)
{
	const char	*s = strrchr(path, '/');

	return s != NULL && s[1] != '\0' ? s + 1 : path;
}

static void
add_permissions(cJSON *o, const char *type, int mode)
{
	char	 p[11];
	int	 i;

	p[0] = strcmp(type, "dir") == 0 ? 'd' :
	    strcmp(type, "symlink") == 0 ? 'l' : '-';
	for (i = 0; i < 9; i++)
		p[1 + i] = (mode & (0400 >> i)) ? "rwxrwxrwx"[i] : '-';
	p[10] = '\0';
	cJSON_AddStringToObject(o, "permissions", p);
}

/* filesystem.EntryInfo of an envd stat or list entry at abs. */
static cJSON *
entry_info(const char *abs, const cJSON *st)
{
	cJSON		*e = cJSON_CreateObject();
	const char	*type = json_str(st, "type"), *t;
	char		 size[32], when[48];
	double		 ms = json_num(st, "mtime_ms", 0);
	time_t		 sec = (time_t)(ms / 1000);
	struct tm	 tm;

	if (type == NULL)
		type = "other";
	cJSON_AddStringToObject(e, "name", base_name(abs));
	t = strcmp(type, "file") == 0 ? "FILE_TYPE_FILE" :
	    strcmp(type, "dir") == 0 ? "FILE_TYPE_DIRECTORY" :
	    strcmp(type, "symlink") == 0 ? "FILE_TYPE_SYMLINK" :
	    "FILE_TYPE_UNSPECIFIED";
	cJSON_AddStringToObject(e, "type", t);
	cJSON_AddStringToObject(e, "path", abs);
	snprintf(size, sizeof size, "%.0f", json_num(st, "size", 0));
	cJSON_AddStringToObject(e, "size", size);
	cJSON_AddNumberToObject(e, "mode", json_num(st, "mode", 0));
	add_permissions(e, type, (int)json_num(st, "mode", 0));
	cJSON_AddStringToObject(e, "owner", "user");
	cJSON_AddStringToObject(e, "group", "user");
	gmtime_r(&sec, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	cJSON_AddStringToObject(e, "modifiedTime", when);
	if (json_str(st, "target") != NULL)
		cJSON_AddStringToObject(e, "symlinkTarget",
		    json_str(st, "target"));
	return e;
}

/* A connected envd, or -1 with a Connect error sent. */
static int
fs_connect(struct evhttp_request *req, struct sandbox *sb)
{
	char	*cause = NULL;
	int	 fd;

	if ((fd = e2b_envd_connect(sb, &cause)) == -1) {
		e2b_reply_connect_error(req, "unavailable", cause);
		free(cause);
	}
	return fd;
}

/* envd request op on path; the reply, or NULL with *cause. */
static cJSON *
path_call(int fd, const char *op, const char *path, char **cause)
{
	cJSON	*r = cJSON_CreateObject();

	cJSON_AddStringToObject(r, "op", op);
	cJSON_AddStringToObject(r, "path", path);
	return envd_call(fd, r, cause);
}

static cJSON *
fs_stat(int fd, const char *abs, char **cause)
{
	cJSON	*st, *e;

	if ((st = path_call(fd, "stat", abs, cause)) == NULL)
		return NULL;
	e = entry_info(abs, st);
	cJSON_Delete(st);
	return e;
}

static cJSON *
fs_list(int fd, const char *abs, int depth, char **cause)
{
	cJSON		*entries, *out, *arr;
	const cJSON	*it;
	char		*p;
	const char	*rel;

	if ((entries = envd_list(fd, abs, depth, cause)) == NULL)
		return NULL;
	out = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(out, "entries");
	cJSON_ArrayForEach(it, entries) {
		if ((rel = json_str(it, "path")) == NULL)
			continue;
		p = strcmp(abs, "/") == 0 ? xprintf("/%s", rel) :
		    xprintf("%s/%s", abs, rel);
		cJSON_AddItemToArray(arr, entry_info(p, it));
		free(p);
	}
	cJSON_Delete(entries);
	return out;
}

/* mkdir -p in the sandbox; already_exists if it is there. */
static cJSON *
fs_mkdir(int fd, const char *abs, char **cause, const char **code)
{
	cJSON		*st, *r;
	struct buf	 err = BUF_INIT;
	char		*q, *cmd;
	int		 rc;

	if ((st = path_call(fd, "stat", abs, cause)) != NULL) {
		cJSON_Delete(st);
		*code = "already_exists";
		free(*cause);
		*cause = xprintf("path '%s': already exists", abs);
		return NULL;
	}
	free(*cause);
	*cause = NULL;
	q = policy_shell_quote(abs);
	cmd = xprintf("mkdir -p -- %s", q);
	free(q);
	rc = envd_exec_simple(fd, cmd, 10000, NULL, &err, cause);
	free(cmd);
	if (rc != 0) {
		if (rc > 0)
			*cause = xprintf("path '%s': %s", abs, buf_str(&err));
		buf_release(&err);
		*code = "permission_denied";
		return NULL;
	}
	buf_release(&err);
	r = cJSON_CreateObject();
	if ((st = fs_stat(fd, abs, cause)) == NULL) {
		cJSON_Delete(r);
		return NULL;
	}
	cJSON_AddItemToObject(r, "entry", st);
	return r;
}

/* ---- WatchDir ---- */

static const struct {
	const char	*envd;
	const char	*e2b;
} watch_kinds[] = {
	{ "create", "EVENT_TYPE_CREATE" }, { "move_to", "EVENT_TYPE_CREATE" },
	{ "delete", "EVENT_TYPE_REMOVE" }, { "move_from", "EVENT_TYPE_RENAME" },
	{ "modify", "EVENT_TYPE_WRITE" }, { "attrib", "EVENT_TYPE_CHMOD" },
};

/* envd's reply, then its "change" events, as WatchDirResponses. */
static int
watch_frame(struct e2b_stream *st, const cJSON *f)
{
	const char	*ev = json_str(f, "event"), *err = json_str(f, "error");
	const char	*path = json_str(f, "path"), *kind = json_str(f, "kind");
	const char	*root = st->tag, *name;
	size_t		 i, n = strlen(root);
	cJSON		*j, *e;

	if (ev == NULL) {
		if (err != NULL) {
			e2b_stream_end(st, e2b_envd_code(err), err);
			return 1;
		}
		e2b_stream_send(st, "{\"start\":{}}", strlen("{\"start\":{}}"));
		return 0;
	}
	if (strcmp(ev, "change") != 0 || path == NULL || kind == NULL)
		return 0;
	if (strncmp(path, root, n) == 0 && path[n] == '/')
		name = path + n + 1;
	else if (strcmp(path, root) == 0)
		return 0;	/* the directory itself */
	else
		name = path;
	/* envd's own temporary files (an atomic write) are not news. */
	if (strstr(base_name(name), ".holt-tmp.") != NULL ||
	    strstr(base_name(name), ".holt-put.") != NULL)
		return 0;
	for (i = 0; i < nitems(watch_kinds); i++) {
		if (strcmp(watch_kinds[i].envd, kind) == 0)
			break;
	}
	if (i == nitems(watch_kinds))
		return 0;
	j = cJSON_CreateObject();
	e = cJSON_AddObjectToObject(j, "filesystem");
	cJSON_AddStringToObject(e, "name", name);
	cJSON_AddStringToObject(e, "type", watch_kinds[i].e2b);
	e2b_stream_send_json(st, 0, j);
	cJSON_Delete(j);
	return 0;
}

/*
 * filesystem.Filesystem/WatchDir: envd's inotify watch of a directory
 * (recursive or not) for as long as the client holds the stream.
 */
static void
fs_watch(struct e2b_server *srv, struct evhttp_request *req,
    struct sandbox *sb)
{
	struct e2b_stream	*st;
	cJSON			*in, *ereq;
	const char		*path;

	if ((in = e2b_stream_request(req)) == NULL)
		return;
	if ((path = json_str(in, "path")) == NULL) {
		e2b_reply_stream_error(req, "invalid_argument", "path needed");
		cJSON_Delete(in);
		return;
	}
	st = e2b_stream_new(srv, req, sb);
	st->keepalive_msg = "{\"keepalive\":{}}";
	st->tag = e2b_path(path);	/* the root, for names */
	ereq = cJSON_CreateObject();
	cJSON_AddStringToObject(ereq, "op", "watch");
	cJSON_AddStringToObject(ereq, "path", st->tag);
	cJSON_AddBoolToObject(ereq, "recursive", json_bool(in, "recursive", 0));
	cJSON_Delete(in);
	e2b_stream_envd(st, sb, ereq, watch_frame);
	cJSON_Delete(ereq);
}

void
e2b_fs_handle(struct e2b_server *srv, struct evhttp_request *req,
    struct e2b_box *box, struct sandbox *sb, const char *method)
{
	cJSON		*in, *out = NULL, *r;
	char		*cause = NULL, *abs = NULL, *to = NULL;
	const char	*code = NULL;
	int		 fd, depth;

	(void)box;
	if (strcmp(method, "WatchDir") == 0) {
		fs_watch(srv, req, sb);
		return;
	}
	if (strcmp(method, "Stat") != 0 && strcmp(method, "ListDir") != 0 &&
	    strcmp(method, "MakeDir") != 0 && strcmp(method, "Move") != 0 &&
	    strcmp(method, "Remove") != 0) {
		e2b_reply_connect_error(req, "unimplemented", "holt does not "
		    "serve this method of filesystem.Filesystem");
		return;
	}
	if ((in = e2b_body_json(req, E2B_MAX_RPC_BODY, &cause)) == NULL) {
		e2b_reply_connect_error(req, "invalid_argument", cause);
		free(cause);
		return;
	}
	if (strcmp(method, "Move") == 0) {
		if (json_str(in, "source") == NULL ||
		    json_str(in, "destination") == NULL) {
			e2b_reply_connect_error(req, "invalid_argument",
			    "source and destination needed");
			cJSON_Delete(in);
			return;
		}
		abs = e2b_path(json_str(in, "source"));
		to = e2b_path(json_str(in, "destination"));
	} else if (json_str(in, "path") == NULL) {
		e2b_reply_connect_error(req, "invalid_argument", "path needed");
		cJSON_Delete(in);
		return;
	} else
		abs = e2b_path(json_str(in, "path"));
	depth = (int)json_num(in, "depth", 1);
	cJSON_Delete(in);
	if (strcmp(method, "MakeDir") == 0 || strcmp(method, "Move") == 0 ||
	    strcmp(method, "Remove") == 0) {
		files_asking_clear(srv);
		if (e2b_files_judge(srv, req, abs, &cause) != 0 ||
		    (to != NULL && e2b_files_judge(srv, req, to, &cause) != 0)) {
			files_asking_clear(srv);
			e2b_reply_connect_error(req, "permission_denied", cause);
			free(cause);
			goto out;
		}
		if (files_hold(srv, req, sandbox_id(sb), 1))
			goto out;
	}
	if ((fd = fs_connect(req, sb)) == -1)
		goto out;
	if (strcmp(method, "Stat") == 0) {
		if ((r = fs_stat(fd, abs, &cause)) != NULL) {
			out = cJSON_CreateObject();
			cJSON_AddItemToObject(out, "entry", r);
		}
	} else if (strcmp(method, "ListDir") == 0)
		out = fs_list(fd, abs, depth < 1 ? 1 : depth, &cause);
	else if (strcmp(method, "MakeDir") == 0)
		out = fs_mkdir(fd, abs, &cause, &code);
	else if (strcmp(method, "Remove") == 0) {
		r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "op", "remove");
		cJSON_AddStringToObject(r, "path", abs);
		cJSON_AddBoolToObject(r, "recursive", 1);
		if ((r = envd_call(fd, r, &cause)) != NULL) {
			cJSON_Delete(r);
			out = cJSON_CreateObject();
		}
	} else {
		r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "op", "move");
		cJSON_AddStringToObject(r, "from", abs);
		cJSON_AddStringToObject(r, "to", to);
		if ((r = envd_call(fd, r, &cause)) != NULL) {
			cJSON_Delete(r);
			if ((r = fs_stat(fd, to, &cause)) != NULL) {
				out = cJSON_CreateObject();
				cJSON_AddItemToObject(out, "entry", r);
			}
		}
	}
	close(fd);
	if (out != NULL)
		e2b_reply_json(req, 200, out);
	else
		e2b_reply_connect_error(req, code != NULL ? code :
		    e2b_envd_code(cause), cause != NULL ? cause : "failed");
	cJSON_Delete(out);
	free(cause);
out:
	free(abs);
	free(to);
}

/* ---- the policy ---- */

int
e2b_files_judge(struct e2b_server *srv, struct evhttp_request *req,
    const char *abs, char **why)
{
	struct policy_result	*r;
	int			 rc = 0;

	if (srv->policy == NULL || req == srv->approved ||
	    e2b_ask_always_write(srv, abs))
		return 0;
	r = policy_check_write(srv->policy, srv->mode, abs);
	if (r->verdict == POLICY_ASK && srv->control != NULL) {
		/* Asked once the whole request is judged (files_hold). */
		if (srv->asking == NULL)
			srv->asking = cJSON_CreateArray();
		cJSON_AddItemToArray(srv->asking, cJSON_CreateString(abs));
		if (srv->asking_why == NULL)
			srv->asking_why = xstrdup(r->reason != NULL ?
			    r->reason : "no rule settles it");
		policy_result_free(r);
		return 0;
	}
	if (r->verdict == POLICY_DENY)
		*why = xprintf("holt policy: writing '%s' denied: %s", abs,
		    r->reason != NULL ? r->reason : "no rule allows it");
	else if (r->verdict == POLICY_ASK)
		*why = xprintf("holt policy: writing '%s' needs approval (%s), "
		    "and the files API does not wait for one", abs,
		    r->reason != NULL ? r->reason : "no rule settles it");
	if (r->verdict != POLICY_ALLOW)
		rc = -1;
	policy_result_free(r);
	return rc;
}

static void
files_asking_clear(struct e2b_server *srv)
{
	cJSON_Delete(srv->asking);
	srv->asking = NULL;
	free(srv->asking_why);
	srv->asking_why = NULL;
}

/* A request of the files API waiting for a human. */
struct files_held {
	struct e2b_server	*srv;
	struct evhttp_request	*req;
	struct e2b_ask		*ask;
	struct event		*watch;		/* for the client's leaving */
	int			 connect;	/* a Connect call, else /files */
};

static void
files_held_free(struct files_held *h)
{
	struct evhttp_connection *evcon;

	if ((evcon = evhttp_request_get_connection(h->req)) != NULL)
		evhttp_connection_set_closecb(evcon, NULL, NULL);
	if (h->watch != NULL)
		event_free(h->watch);
	free(h);
}

/* The server is going away: the connection frees the request. */
static void
files_closed(struct evhttp_connection *evcon, void *arg)
{
	struct files_held	*h = arg;

	(void)evcon;
	e2b_ask_free(h->ask);
	if (evhttp_request_get_connection(h->req) == NULL)
		evhttp_send_reply(h->req, 499, "Client Closed Request", NULL);
	files_held_free(h);
}

/*
 * evhttp does not read a connection whose request waits for its reply:
 * we watch it, so a client that leaves withdraws the ask and nothing is
 * written. Bytes sent meanwhile (a next request) are left to evhttp.
 */
static void
files_watch(evutil_socket_t fd, short ev, void *arg)
{
	struct files_held	*h = arg;
	char			 c;
	ssize_t			 n;

	(void)ev;
	n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		event_del(h->watch);
		return;
	}
	e2b_ask_withdraw(h->ask, "the client left");
	evhttp_send_reply(h->req, 499, "Client Closed Request", NULL);
	files_held_free(h);
}

/* holt approve's answer: the request is done again, allowed, or refused. */
static void
files_answered(void *arg, int allow, const char *why)
{
	struct files_held	*h = arg;
	struct e2b_server	*srv = h->srv;
	struct evhttp_request	*req = h->req;
	int			 connect = h->connect;

	files_held_free(h);
	if (!allow && connect)
		e2b_reply_connect_error(req, "permission_denied", why);
	else if (!allow)
		e2b_reply_error(req, 403, "%s", why);
	else {
		srv->approved = req;
		e2b_server_route(req, srv);
		srv->approved = NULL;
	}
}

/*
 * If the request's judging found writes that ask a human, make it wait
 * for the answer (1); 0 when nothing asks.
 */
static int
files_hold(struct e2b_server *srv, struct evhttp_request *req,
    const char *sandbox, int connect)
{
	struct files_held	*h;
	struct evhttp_connection *evcon;
	struct buf		 b = BUF_INIT;
	const cJSON		*p;

	if (srv->asking == NULL)
		return 0;
	cJSON_ArrayForEach(p, srv->asking) {
		if (b.len > 0)
			buf_adds(&b, "', '");
		buf_adds(&b, p->valuestring);
	}
	h = xcalloc(1, sizeof *h);
	h->srv = srv;
	h->req = req;
	h->connect = connect;
	h->ask = e2b_ask_new(srv, sandbox, E2B_ASK_WRITE, buf_str(&b), 0,
	    srv->asking_why, files_answered, h);
	e2b_ask_set_paths(h->ask, srv->asking);
	buf_release(&b);
	files_asking_clear(srv);
	if ((evcon = evhttp_request_get_connection(req)) != NULL) {
		evhttp_connection_set_closecb(evcon, files_closed, h);
		h->watch = event_new(srv->base, bufferevent_getfd(
		    evhttp_connection_get_bufferevent(evcon)), EV_READ |
		    EV_PERSIST, files_watch, h);
		event_add(h->watch, NULL);
	}
	return 1;
}

/* ---- /files ---- */

static void
files_error(struct evhttp_request *req, const char *cause)
{
	const char	*code = e2b_envd_code(cause);
	int		 http = 500;

	if (strcmp(code, "not_found") == 0)
		http = 404;
	else if (strcmp(code, "permission_denied") == 0)
		http = 403;
	else if (strcmp(code, "invalid_argument") == 0)
		http = 400;
	e2b_reply_error(req, http, "%s", cause);
}

static void
free_data(const void *data, size_t len, void *arg)
{
	(void)len;
	(void)arg;
	free((void *)data);
}

static void
files_get(struct evhttp_request *req, struct sandbox *sb)
{
	struct evbuffer	*b;
	char		*path, *abs, *data, *cause = NULL;
	size_t		 len;
	int		 fd;

	if ((path = e2b_query(req, "path")) == NULL) {
		e2b_reply_error(req, 400, "GET /files: path needed");
		return;
	}
	abs = e2b_path(path);
	free(path);
	if ((fd = e2b_envd_connect(sb, &cause)) == -1) {
		e2b_reply_error(req, 502, "%s", cause);
		goto out;
	}
	data = envd_read_file(fd, abs, &len, &cause);
	close(fd);
	if (data == NULL) {
		files_error(req, cause);
		goto out;
	}
	b = evbuffer_new();
	/* No copy: the reply owns data until it is written. */
	evbuffer_add_reference(b, data, len, free_data, NULL);
	evhttp_add_header(evhttp_request_get_output_headers(req),
	    "Content-Type", "application/octet-stream");
	evhttp_send_reply(req, 200, NULL, b);
	evbuffer_free(b);
out:
	free(cause);
	free(abs);
}

/* Undo FormData's escapes of a file name: %22 %0D %0A. */
static char *
form_name(const char *s, size_t n)
{
	struct buf	 b = BUF_INIT;
	size_t		 i;

	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n) {
			if (strncmp(s + i, "%22", 3) == 0) {
				buf_addc(&b, '"');
				i += 2;
				continue;
			}
			if (strncmp(s + i, "%0D", 3) == 0) {
				buf_addc(&b, '\r');
				i += 2;
				continue;
			}
			if (strncmp(s + i, "%0A", 3) == 0) {
				buf_addc(&b, '\n');
				i += 2;
				continue;
			}
		}
		buf_addc(&b, s[i]);
	}
	return buf_detach(&b, NULL);
}

/*
 * Write one file and add its entry to out; -1 with a reply sent. With no
 * envd connection (fd -1) only ask the policy.
 */
static int
write_one(struct e2b_server *srv, struct evhttp_request *req, int fd,
    const char *path, const char *data, size_t len, cJSON *out)
{
	char	*abs = e2b_path(path), *cause = NULL;
	cJSON	*e;

	if (fd == -1 && e2b_files_judge(srv, req, abs, &cause) != 0) {
		e2b_reply_error(req, 403, "%s", cause);
		free(cause);
		free(abs);
		return -1;
	}
	if (fd == -1) {
		free(abs);
		return 0;
	}
	if (envd_write_file(fd, abs, data, len, -1, &cause) != 0) {
		files_error(req, cause);
		free(cause);
		free(abs);
		return -1;
	}
	e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "name", base_name(abs));
	cJSON_AddStringToObject(e, "type", "file");
	cJSON_AddStringToObject(e, "path", abs);
	cJSON_AddItemToArray(out, e);
	free(abs);
	return 0;
}

/* Each part of a multipart/form-data body; -1 with a reply sent. */
static int
write_multipart(struct e2b_server *srv, struct evhttp_request *req, int fd,
    const char *ct, const char *body, size_t len, const char *qpath,
    cJSON *out)
{
	const char	*bp = strstr(ct, "boundary="), *p, *end, *hdr, *fn;
	const char	*data;
	char		*delim, *name;
	size_t		 dl;
	int		 rc = 0, nparts = 0;

	if (bp == NULL) {
		e2b_reply_error(req, 400, "multipart body without boundary");
		return -1;
	}
	bp += 9;
	if (*bp == '"')
		bp++;
	delim = xprintf("\r\n--%.*s", (int)strcspn(bp, "\";"), bp);
	dl = strlen(delim);
	/* The first delimiter has no CRLF before it. */
	if (len < dl - 2 || memcmp(body, delim + 2, dl - 2) != 0)
		goto bad;
	p = body + dl - 2;
	for (;;) {
		if ((size_t)(body + len - p) >= 2 && memcmp(p, "--", 2) == 0)
			break;		/* the closing delimiter */
		if ((size_t)(body + len - p) < 2 || memcmp(p, "\r\n", 2) != 0)
			goto bad;
		hdr = p + 2;
		if ((data = memmem(hdr, body + len - hdr, "\r\n\r\n", 4)) ==
		    NULL)
			goto bad;
		data += 4;
		if ((end = memmem(data, body + len - data, delim, dl)) == NULL)
			goto bad;
		fn = memmem(hdr, data - hdr, "filename=\"", 10);
		if (fn != NULL) {
			fn += 10;
			name = form_name(fn, strcspn(fn, "\"\r\n"));
		} else
			name = NULL;
		if (qpath == NULL && (name == NULL || *name == '\0')) {
			free(name);
			e2b_reply_error(req, 400, "POST /files: a part without "
			    "a file name, and no path");
			rc = -1;
			break;
		}
		rc = write_one(srv, req, fd, qpath != NULL ? qpath : name,
		    data, end - data, out);
		free(name);
		if (rc != 0)
			break;
		nparts++;
		p = end + dl;
	}
	free(delim);
	if (rc == 0 && nparts == 0) {
		e2b_reply_error(req, 400, "POST /files: no file in the body");
		return -1;
	}
	return rc;
bad:
	free(delim);
	e2b_reply_error(req, 400, "POST /files: malformed multipart body");
	return -1;
}

/* Each file of the body (fd -1: only judged); -1 with a reply sent. */
static int
files_write(struct e2b_server *srv, struct evhttp_request *req, int fd,
    const char *ct, const char *body, size_t len, const char *path,
    cJSON *out)
{
	if (*ct == 'a')
		return write_one(srv, req, fd, path, body, len, out);
	return write_multipart(srv, req, fd, ct, body, len, path, out);
}

static void
files_post(struct e2b_server *srv, struct evhttp_request *req,
    struct sandbox *sb)
{
	struct evkeyvalq	*h = evhttp_request_get_input_headers(req);
	const char		*ct = evhttp_find_header(h, "Content-Type");
	const char		*ce = evhttp_find_header(h, "Content-Encoding");
	char			*path, *body, *cause = NULL;
	size_t			 len;
	int			 fd, rc;
	cJSON			*out;

	if (ce != NULL && strcmp(ce, "identity") != 0) {
		e2b_reply_error(req, 415, "Content-Encoding '%s': not "
		    "supported, send the file as it is", ce);
		return;
	}
	if (ct == NULL || (strncmp(ct, "multipart/form-data", 19) != 0 &&
	    strncmp(ct, "application/octet-stream", 24) != 0)) {
		e2b_reply_error(req, 415, "POST /files: send "
		    "multipart/form-data or application/octet-stream");
		return;
	}
	path = e2b_query(req, "path");
	if (*ct == 'a' && path == NULL) {
		e2b_reply_error(req, 400, "POST /files: path needed");
		return;
	}
	if ((body = e2b_body(req, E2B_MAX_BODY, &len)) == NULL) {
		e2b_reply_error(req, 413, "POST /files: body too large");
		free(path);
		return;
	}
	/* Every file judged first: none is written if one may not be. */
	files_asking_clear(srv);
	if (files_write(srv, req, -1, ct, body, len, path, NULL) != 0 ||
	    files_hold(srv, req, sandbox_id(sb), 0)) {
		files_asking_clear(srv);
		free(body);
		free(path);
		return;
	}
	if ((fd = e2b_envd_connect(sb, &cause)) == -1) {
		e2b_reply_error(req, 502, "%s", cause);
		free(cause);
		free(body);
		free(path);
		return;
	}
	out = cJSON_CreateArray();
	rc = files_write(srv, req, fd, ct, body, len, path, out);
	close(fd);
	if (rc == 0)
		e2b_reply_json(req, 200, out);
	cJSON_Delete(out);
	free(body);
	free(path);
}

void
e2b_files_handle(struct e2b_server *srv, struct evhttp_request *req,
    struct e2b_box *box, struct sandbox *sb)
{
	(void)box;
	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_GET:
		files_get(req, sb);
		break;
	case EVHTTP_REQ_POST:
		files_post(srv, req, sb);
		break;
	default:
		e2b_reply_error(req, 405, "/files: use GET or POST");
		break;
	}
}
