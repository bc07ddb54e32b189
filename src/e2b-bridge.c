/*
 * e2b-bridge.c: holt's envd protocol (holt-envd(8), PROTOCOL) served by
 * E2B's envd API, so that everything in holt that speaks to a sandbox
 * speaks to an E2B one unchanged.
 *
 * e2b_bridge_open returns one end of a socket pair; a thread reads the
 * requests from the other and answers each with E2B calls (e2b-client.h):
 * exec and attach are a process stream each, in a thread of their own so
 * that stdin and signal go on meanwhile; files are GET/POST /files and
 * filesystem.Filesystem. Frames are written whole under one lock. When
 * holt closes its end, running commands go on (as with holt-envd): their
 * streams are read to the end with nobody to tell. The bridge keeps the
 * sandbox's E2B timeout from running out while it is used, and resumes it
 * if it ran out (E2B paused it) before the next request.
 *
 * watch is WatchDir's stream, in a thread too, until unwatch or holt
 * leaves. What E2B has no equal of: attach re-joins from now on (E2B
 * keeps no past output), and forward and pause are refused by name;
 * services are E2B processes left running (e2b_bridge_service).
 */
#include <sys/socket.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2b-bridge.h"

void
e2b_bridge_unref(struct e2b_bridge *br)
{
	int	 last;

	pthread_mutex_lock(&br->lock);
	last = --br->refs == 0;
	pthread_mutex_unlock(&br->lock);
	if (!last)
		return;
	close(br->fd);
	e2b_sbx_release(&br->sbx);
	e2b_client_free(br->client);
	pthread_mutex_destroy(&br->lock);
	free(br);
}

/* One frame, whole; a closed peer is not an error here (commands go on). */
void
e2b_bridge_send(struct e2b_bridge *br, cJSON *j)
{
	char	*data;
	size_t	 len, done = 0;
	ssize_t	 n;

	if ((data = frame_encode(j, &len)) == NULL)
		return;
	pthread_mutex_lock(&br->lock);
	while (done < len) {
		n = send(br->fd, data + done, len - done, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	pthread_mutex_unlock(&br->lock);
	free(data);
}

cJSON *
e2b_bridge_reply(double id)
{
	cJSON	*j = cJSON_CreateObject();

	cJSON_AddNumberToObject(j, "id", id);
	return j;
}

void
e2b_bridge_ok(struct e2b_bridge *br, double id, cJSON *j)
{
	if (j == NULL)
		j = e2b_bridge_reply(id);
	cJSON_AddBoolToObject(j, "ok", 1);
	e2b_bridge_send(br, j);
	cJSON_Delete(j);
}

void
e2b_bridge_error(struct e2b_bridge *br, double id, const char *msg)
{
	cJSON	*j = e2b_bridge_reply(id);

	cJSON_AddStringToObject(j, "error", msg);
	e2b_bridge_send(br, j);
	cJSON_Delete(j);
}

/*
 * Keep E2B's timeout from running out while the sandbox is in use, and
 * the sandbox running: after a third of the timeout (10 s at most) since
 * the last time, E2B's connect again, which extends the timeout and
 * resumes the sandbox if it was paused meanwhile (its timeout ran out, or
 * someone paused it).
 */
static void
bridge_keep(struct e2b_bridge *br)
{
	uint64_t	 now = json_now_ms(), used, every;
	struct e2b_sbx	 again;
	char		*cause = NULL;

	every = (uint64_t)br->timeout_s * 1000 / 3;
	if (every > 10000)
		every = 10000;
	pthread_mutex_lock(&br->lock);
	used = br->used_ms;
	if (now - used > every)
		br->used_ms = now;
	pthread_mutex_unlock(&br->lock);
	if (now - used <= every)
		return;
	if (e2b_client_connect(br->client, br->sbx.id, br->timeout_s, &again,
	    &cause) == 0)
		e2b_sbx_release(&again);
	else {
		log_warnx("e2b sandbox '%s': %s", br->sbx.id, cause);
		free(cause);
	}
}

/* holt's paths are below /workspace when relative; E2B's below home. */
char *
e2b_bridge_path(const cJSON *req, const char *key)
{
	const char	*p = json_str(req, key);

	if (p == NULL || *p == '\0')
		return xstrdup("/workspace");
	if (*p == '/')
		return xstrdup(p);
	return xprintf("/workspace/%s", p);
}

/* E2B's Connect errors in holt-envd's words, the path quoted. */
char *
e2b_bridge_fs_error(const char *what, const char *path, const char *code,
    const char *cause)
{
	if (code != NULL && strcmp(code, "not_found") == 0)
		return xprintf("%s '%s': No such file or directory", what,
		    path);
	return xprintf("%s '%s': %s", what, path, cause);
}

cJSON *
e2b_bridge_pid(long pid)
{
	cJSON	*j = cJSON_CreateObject();

	cJSON_AddNumberToObject(cJSON_AddObjectToObject(j, "process"), "pid",
	    (double)pid);
	return j;
}

/* ---- commands ---- */

static int
signal_number(const char *status)
{
	static const struct { const char *name; int n; } sigs[] = {
		{ "hangup", 1 }, { "interrupt", 2 }, { "quit", 3 },
		{ "aborted", 6 }, { "killed", 9 }, { "segmentation fault", 11 },
		{ "broken pipe", 13 }, { "terminated", 15 },
	};
	size_t		 i;
	const char	*s;

	if (status == NULL || strncmp(status, "signal: ", 8) != 0)
		return 0;
	s = status + 8;
	if (*s >= '0' && *s <= '9')
		return atoi(s);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		if (strncmp(s, sigs[i].name, strlen(sigs[i].name)) == 0)
			return sigs[i].n;
	}
	return 9;
}

/* Which commands run on a terminal: their input goes as "pty". */
static void
pty_note(struct e2b_bridge *br, long pid, int on)
{
	size_t	 i;

	pthread_mutex_lock(&br->lock);
	for (i = 0; i < BRIDGE_PTYS; i++) {
		if (on && br->ptys[i] == 0) {
			br->ptys[i] = pid;
			break;
		}
		if (!on && br->ptys[i] == pid)
			br->ptys[i] = 0;
	}
	pthread_mutex_unlock(&br->lock);
}

static int
pty_is(struct e2b_bridge *br, long pid)
{
	size_t	 i;
	int	 yes = 0;

	pthread_mutex_lock(&br->lock);
	for (i = 0; i < BRIDGE_PTYS; i++)
		yes |= br->ptys[i] == pid;
	pthread_mutex_unlock(&br->lock);
	return yes;
}

static void
exec_data(struct bridge_exec *ex, const cJSON *data)
{
	static const char *const streams[] = { "stdout", "stderr", "pty" };
	long long	*offs[] = { &ex->off_out, &ex->off_err, &ex->off_pty };
	const char	*b64;
	struct buf	 b;
	cJSON		*j;
	size_t		 i;

	for (i = 0; i < 3; i++) {
		if ((b64 = json_str(data, streams[i])) == NULL)
			continue;
		buf_init(&b);
		if (envd_b64_decode(b64, &b) == 0 && b.len > 0) {
			j = e2b_bridge_reply(ex->id);
			cJSON_AddStringToObject(j, "event", streams[i]);
			cJSON_AddNumberToObject(j, "pid", (double)ex->pid);
			envd_data_set(j, b.data, b.len);
			cJSON_AddNumberToObject(j, "offset", (double)*offs[i]);
			*offs[i] += (long long)b.len;
			e2b_bridge_send(ex->br, j);
			cJSON_Delete(j);
		}
		buf_release(&b);
	}
}

static void
exec_end(struct bridge_exec *ex, const cJSON *end)
{
	cJSON		*j = e2b_bridge_reply(ex->id);
	const char	*status = json_str(end, "status");
	int		 sig = signal_number(status);

	/* proto3 JSON leaves out zeros and false: no exitCode is 0. */
	if (ex->timed_out && sig == 0)
		sig = 9;
	if (ex->pty)
		pty_note(ex->br, ex->pid, 0);
	cJSON_AddStringToObject(j, "event", "exit");
	cJSON_AddNumberToObject(j, "pid", (double)ex->pid);
	if (sig > 0) {
		cJSON_AddNullToObject(j, "code");
		cJSON_AddNumberToObject(j, "signal", sig);
	} else {
		cJSON_AddNumberToObject(j, "code", json_num(end, "exitCode", 0));
		cJSON_AddNullToObject(j, "signal");
	}
	cJSON_AddBoolToObject(j, "timed_out", ex->timed_out);
	cJSON_AddNumberToObject(j, "duration_ms",
	    (double)(json_now_ms() - ex->start_ms));
	e2b_bridge_send(ex->br, j);
	cJSON_Delete(j);
	ex->exited = 1;
}

static void
exec_timeout(struct bridge_exec *ex)
{
	cJSON	*req, *r;
	char	*cause = NULL;

	ex->timed_out = 1;
	req = e2b_bridge_pid(ex->pid);
	cJSON_AddStringToObject(req, "signal", "SIGNAL_SIGKILL");
	r = e2b_envd_rpc(&ex->br->sbx, "process.Process/SendSignal", NULL,
	    req, NULL, &cause);
	cJSON_Delete(req);
	cJSON_Delete(r);
	free(cause);
}

/*
 * Standard input: SendInput with the bytes (as "pty" on a terminal), then
 * CloseStdin for eof.
 */
static int
stdin_send(struct e2b_bridge *br, long pid, int pty, const void *data,
    size_t len, int eof, char **cause)
{
	cJSON	*req, *r;
	char	*b64;

	if (len > 0) {
		req = e2b_bridge_pid(pid);
		b64 = envd_b64_encode(data, len);
		cJSON_AddStringToObject(cJSON_AddObjectToObject(req, "input"),
		    pty ? "pty" : "stdin", b64);
		free(b64);
		r = e2b_envd_rpc(&br->sbx, "process.Process/SendInput", NULL,
		    req, NULL, cause);
		cJSON_Delete(req);
		if (r == NULL)
			return -1;
		cJSON_Delete(r);
	}
	if (!eof)
		return 0;
	req = e2b_bridge_pid(pid);
	r = e2b_envd_rpc(&br->sbx, "process.Process/CloseStdin", NULL, req,
	    NULL, cause);
	cJSON_Delete(req);
	cJSON_Delete(r);
	return r != NULL ? 0 : -1;
}

static void
exec_feed(struct bridge_exec *ex, const char *data)
{
	char	*cause = NULL;

	if (stdin_send(ex->br, ex->pid, 0, data, strlen(data), 1,
	    &cause) != 0) {
		log_warnx("e2b sandbox '%s': stdin: %s", ex->br->sbx.id, cause);
		free(cause);
	}
}

/* Each message of a Start or Connect stream; NULL: a second went by. */
static int
exec_msg(void *arg, const cJSON *msg)
{
	struct bridge_exec	*ex = arg;
	const cJSON		*ev, *x;
	cJSON			*j;

	if (msg == NULL) {
		if (ex->deadline_ms != 0 && !ex->timed_out && ex->pid > 0 &&
		    json_now_ms() >= ex->deadline_ms)
			exec_timeout(ex);
		bridge_keep(ex->br);
		return 0;
	}
	ev = cJSON_GetObjectItem(msg, "event");
	if ((x = cJSON_GetObjectItem(ev, "start")) != NULL) {
		ex->pid = (long)json_num(x, "pid", 0);
		if ((ex->pty = cJSON_IsObject(cJSON_GetObjectItem(ex->req,
		    "pty"))))
			pty_note(ex->br, ex->pid, 1);
		j = e2b_bridge_reply(ex->id);
		if (strcmp(json_str(ex->req, "op"), "attach") == 0) {
			cJSON_AddStringToObject(j, "event", "attached");
			cJSON_AddBoolToObject(j, "running", 1);
		} else
			cJSON_AddStringToObject(j, "event", "started");
		cJSON_AddNumberToObject(j, "pid", (double)ex->pid);
		e2b_bridge_send(ex->br, j);
		cJSON_Delete(j);
		/* stdin as a string: fed, then closed. */
		if ((x = cJSON_GetObjectItem(ex->req, "stdin")) != NULL &&
		    cJSON_IsString(x))
			exec_feed(ex, x->valuestring);
	} else if ((x = cJSON_GetObjectItem(ev, "data")) != NULL)
		exec_data(ex, x);
	else if ((x = cJSON_GetObjectItem(ev, "end")) != NULL)
		exec_end(ex, x);
	return 0;
}

/* The Start request of an exec. */
static cJSON *
exec_start_req(struct e2b_bridge *br, const cJSON *req, char **cause)
{
	cJSON		*s = cJSON_CreateObject(), *p, *args, *sz, *r, *st;
	const cJSON	*argv = cJSON_GetObjectItem(req, "argv"), *a, *pty;
	const char	*cmd = json_str(req, "cmd");
	char		*cwd, *within = NULL, *code = NULL;
	int		 first = 1;

	p = cJSON_AddObjectToObject(s, "process");
	args = cJSON_CreateArray();
	if (json_str(req, "within") != NULL) {
		/* The command gets it as stdin, and a directory as its cwd. */
		within = e2b_bridge_path(req, "within");
		st = cJSON_CreateObject();
		cJSON_AddStringToObject(st, "path", within);
		r = e2b_envd_rpc(&br->sbx, "filesystem.Filesystem/Stat", NULL,
		    st, &code, cause);
		cJSON_Delete(st);
		if (r == NULL) {
			char *m = e2b_bridge_fs_error("path", json_str(req, "within"), code,
			    *cause);
			free(*cause);
			*cause = m;
			goto fail;
		}
		cwd = strcmp(json_str(cJSON_GetObjectItem(r, "entry"),
		    "type") != NULL ? json_str(cJSON_GetObjectItem(r, "entry"),
		    "type") : "", "FILE_TYPE_DIRECTORY") == 0 ?
		    xstrdup(within) : e2b_bridge_path(req, "cwd");
		cJSON_Delete(r);
		cJSON_AddStringToObject(p, "cmd", "/bin/sh");
		cJSON_AddItemToArray(args, cJSON_CreateString("-c"));
		cJSON_AddItemToArray(args, cJSON_CreateString(
		    "f=$1; shift; exec \"$@\" <\"$f\""));
		cJSON_AddItemToArray(args, cJSON_CreateString("sh"));
		cJSON_AddItemToArray(args, cJSON_CreateString(within));
		first = 0;
	} else
		cwd = e2b_bridge_path(req, "cwd");
	if (cJSON_IsArray(argv) && cJSON_GetArraySize(argv) > 0) {
		cJSON_ArrayForEach(a, argv) {
			if (!cJSON_IsString(a)) {
				*cause = xstrdup("exec: argv: not all strings");
				free(cwd);
				goto fail;
			}
			if (first)
				cJSON_AddStringToObject(p, "cmd", a->valuestring);
			else
				cJSON_AddItemToArray(args,
				    cJSON_CreateString(a->valuestring));
			first = 0;
		}
	} else if (cmd != NULL) {
		if (first)
			cJSON_AddStringToObject(p, "cmd", "/bin/sh");
		else
			cJSON_AddItemToArray(args, cJSON_CreateString("/bin/sh"));
		cJSON_AddItemToArray(args, cJSON_CreateString("-c"));
		cJSON_AddItemToArray(args, cJSON_CreateString(cmd));
	} else {
		*cause = xstrdup("exec: argv or cmd is required");
		free(cwd);
		goto fail;
	}
	cJSON_AddItemToObject(p, "args", args);
	args = NULL;
	if (cJSON_IsObject(cJSON_GetObjectItem(req, "env")))
		cJSON_AddItemToObject(p, "envs", cJSON_Duplicate(
		    cJSON_GetObjectItem(req, "env"), 1));
	cJSON_AddStringToObject(p, "cwd", cwd);
	free(cwd);
	if ((pty = cJSON_GetObjectItem(req, "pty")) != NULL &&
	    cJSON_IsObject(pty)) {
		sz = cJSON_AddObjectToObject(cJSON_AddObjectToObject(s, "pty"),
		    "size");
		cJSON_AddNumberToObject(sz, "cols", json_num(pty, "cols", 80));
		cJSON_AddNumberToObject(sz, "rows", json_num(pty, "rows", 24));
	}
	if (cJSON_GetObjectItem(req, "stdin") != NULL &&
	    !cJSON_IsFalse(cJSON_GetObjectItem(req, "stdin")))
		cJSON_AddBoolToObject(s, "stdin", 1);
	free(within);
	return s;
fail:
	free(within);
	free(code);
	cJSON_Delete(args);
	cJSON_Delete(s);
	return NULL;
}

static void *
exec_thread(void *arg)
{
	struct bridge_exec	*ex = arg;
	struct e2b_bridge	*br = ex->br;
	cJSON			*s;
	const char		*op = json_str(ex->req, "op");
	char			*cause = NULL;
	double			 t;

	if (strcmp(op, "attach") == 0) {
		ex->pid = (long)json_num(ex->req, "pid", 0);
		s = e2b_bridge_pid(ex->pid);
	} else if ((s = exec_start_req(br, ex->req, &cause)) == NULL)
		goto fail;
	if ((t = json_num(ex->req, "timeout_ms", 0)) > 0)
		ex->deadline_ms = ex->start_ms + (uint64_t)t;
	if (e2b_envd_stream(&br->sbx, strcmp(op, "attach") == 0 ?
	    "process.Process/Connect" : "process.Process/Start", NULL, s,
	    exec_msg, ex, &cause) != 0 && !ex->exited)
		goto fail;
	if (!ex->exited) {
		cause = xstrdup("envd: the command's stream ended without "
		    "its exit");
		goto fail;
	}
	goto out;
fail:
	if (strcmp(op, "attach") == 0 && cause != NULL &&
	    strstr(cause, "not_found") != NULL) {
		free(cause);
		cause = xprintf("pid %ld: no such command", ex->pid);
	}
	e2b_bridge_error(br, ex->id, cause);
	free(cause);
out:
	cJSON_Delete(s);
	cJSON_Delete(ex->req);
	free(ex);
	e2b_bridge_unref(br);
	return NULL;
}

static void
bridge_exec(struct e2b_bridge *br, cJSON *req, double id)
{
	struct bridge_exec	*ex = xcalloc(1, sizeof *ex);
	pthread_t		 t;
	pthread_attr_t		 attr;
	int			 watch;

	ex->br = br;
	ex->req = req;
	ex->id = id;
	ex->start_ms = json_now_ms();
	pthread_mutex_lock(&br->lock);
	br->refs++;
	pthread_mutex_unlock(&br->lock);
	watch = strcmp(json_str(req, "op"), "watch") == 0;
	if (watch && e2b_bridge_watch_register(br, ex) != 0) {
		e2b_bridge_error(br, id, "watch: too many watches on one connection");
		cJSON_Delete(req);
		free(ex);
		e2b_bridge_unref(br);
		return;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, watch ? e2b_bridge_watch_thread : exec_thread,
	    ex) != 0) {
		/* Not started: nothing else has seen ex yet but unwatch. */
		pthread_mutex_lock(&br->lock);
		for (watch = 0; watch < BRIDGE_WATCHES; watch++) {
			if (br->watches[watch] == ex)
				br->watches[watch] = NULL;
		}
		pthread_mutex_unlock(&br->lock);
		e2b_bridge_error(br, id, "cannot start a thread");
		cJSON_Delete(req);
		free(ex);
		e2b_bridge_unref(br);
	}
	pthread_attr_destroy(&attr);
}

static int
op_stdin(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	struct buf	 b;
	long		 pid;
	int		 r, pty;

	(void)reply;
	buf_init(&b);
	if (envd_data_get(req, &b) != 0) {
		buf_release(&b);
		*cause = xstrdup("stdin: bad base64");
		return -1;
	}
	pid = (long)json_num(req, "pid", 0);
	/* A terminal has no end of input to close: ^D, as holt-envd does. */
	if ((pty = pty_is(br, pid)) && json_bool(req, "eof", 0))
		buf_addc(&b, 4);
	r = stdin_send(br, pid, pty, b.data, b.len, !pty &&
	    json_bool(req, "eof", 0), cause);
	buf_release(&b);
	return r;
}

/* E2B has SIGTERM and SIGKILL; every other signal ends it as TERM does. */
static int
op_signal(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	const cJSON	*s = cJSON_GetObjectItem(req, "signal");
	cJSON		*r, *sel;
	int		 kill;

	(void)reply;
	kill = (cJSON_IsNumber(s) && s->valueint == 9) || (cJSON_IsString(s) &&
	    (strcmp(s->valuestring, "KILL") == 0 ||
	    strcmp(s->valuestring, "SIGKILL") == 0));
	sel = e2b_bridge_pid((long)json_num(req, "pid", 0));
	cJSON_AddStringToObject(sel, "signal", kill ? "SIGNAL_SIGKILL" :
	    "SIGNAL_SIGTERM");
	r = e2b_envd_rpc(&br->sbx, "process.Process/SendSignal", NULL, sel,
	    NULL, cause);
	cJSON_Delete(sel);
	cJSON_Delete(r);
	return r != NULL ? 0 : -1;
}

static int
op_resize(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	cJSON	*sel, *sz, *r;

	(void)reply;
	sel = e2b_bridge_pid((long)json_num(req, "pid", 0));
	sz = cJSON_AddObjectToObject(cJSON_AddObjectToObject(sel, "pty"),
	    "size");
	cJSON_AddNumberToObject(sz, "cols", json_num(req, "cols", 80));
	cJSON_AddNumberToObject(sz, "rows", json_num(req, "rows", 24));
	r = e2b_envd_rpc(&br->sbx, "process.Process/Update", NULL, sel, NULL,
	    cause);
	cJSON_Delete(sel);
	cJSON_Delete(r);
	return r != NULL ? 0 : -1;
}

static int
op_ps(struct e2b_bridge *br, const cJSON *req, cJSON **reply, char **cause)
{
	cJSON		*q = cJSON_CreateObject(), *r, *arr, *c;
	const cJSON	*p;

	(void)req;
	r = e2b_envd_rpc(&br->sbx, "process.Process/List", NULL, q, NULL,
	    cause);
	cJSON_Delete(q);
	if (r == NULL)
		return -1;
	arr = cJSON_AddArrayToObject(*reply, "commands");
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(r, "processes")) {
		c = cJSON_CreateObject();
		cJSON_AddNumberToObject(c, "pid", json_num(p, "pid", 0));
		cJSON_AddBoolToObject(c, "running", 1);
		cJSON_AddBoolToObject(c, "pty", 0);
		cJSON_AddNumberToObject(c, "clients", 0);
		cJSON_AddItemToArray(arr, c);
	}
	cJSON_Delete(r);
	return 0;
}

static int
op_hello(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	char	*v;

	(void)req;
	(void)cause;
	cJSON_AddNumberToObject(*reply, "version", ENVD_VERSION);
	v = xprintf("e2b envd %s", *br->sbx.envd_version != '\0' ?
	    br->sbx.envd_version : "?");
	cJSON_AddStringToObject(*reply, "envd", v);
	free(v);
	cJSON_AddStringToObject(*reply, "sandbox", br->sbx.id);
	return 0;
}

static const struct {
	const char	*op;
	int		(*fn)(struct e2b_bridge *, const cJSON *, cJSON **,
			    char **);
} bridge_ops[] = {
	{ "hello", op_hello }, { "stdin", op_stdin }, { "signal", op_signal },
	{ "resize", op_resize }, { "ps", op_ps }, { "read", e2b_bridge_read },
	{ "write", e2b_bridge_write }, { "list", e2b_bridge_list }, { "stat", e2b_bridge_stat },
	{ "remove", e2b_bridge_remove }, { "move", e2b_bridge_move }, { "unwatch", e2b_bridge_unwatch },
	{ "service", e2b_bridge_service },
};

static void
bridge_request(struct e2b_bridge *br, cJSON *req)
{
	const char	*op = json_str(req, "op");
	double		 id = json_num(req, "id", 0);
	cJSON		*reply;
	char		*cause = NULL, *m;
	size_t		 i;

	if (op == NULL) {
		e2b_bridge_error(br, id, "no op");
		cJSON_Delete(req);
		return;
	}
	bridge_keep(br);
	if (strcmp(op, "exec") == 0 || strcmp(op, "attach") == 0 ||
	    strcmp(op, "watch") == 0) {
		bridge_exec(br, req, id);
		return;
	}
	for (i = 0; i < sizeof bridge_ops / sizeof bridge_ops[0]; i++) {
		if (strcmp(op, bridge_ops[i].op) != 0)
			continue;
		reply = e2b_bridge_reply(id);
		if (bridge_ops[i].fn(br, req, &reply, &cause) == 0)
			e2b_bridge_ok(br, id, reply);
		else {
			cJSON_Delete(reply);
			e2b_bridge_error(br, id, cause);
			free(cause);
		}
		cJSON_Delete(req);
		return;
	}
	m = utf8_vis(op, 0);
	cause = xprintf("op '%s': not available in an e2b sandbox", m);
	e2b_bridge_error(br, id, cause);
	free(cause);
	free(m);
	cJSON_Delete(req);
}

static void *
bridge_thread(void *arg)
{
	struct e2b_bridge	*br = arg;
	cJSON			*req;
	char			*cause = NULL;

	while (frame_read_fd(br->fd, &req, &cause) == 1) {
		if (!cJSON_IsObject(req)) {
			cJSON_Delete(req);
			break;
		}
		bridge_request(br, req);
	}
	free(cause);
	/* holt is gone: its commands' threads read on to their ends. */
	pthread_mutex_lock(&br->lock);
	br->closed = 1;
	pthread_mutex_unlock(&br->lock);
	shutdown(br->fd, SHUT_RDWR);
	e2b_bridge_unref(br);
	return NULL;
}

int
e2b_bridge_open(struct e2b_client *c, struct e2b_sbx *sbx, long timeout_s,
    char **cause)
{
	struct e2b_bridge	*br;
	int			 sv[2];
	pthread_t		 t;
	pthread_attr_t		 attr;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		*cause = xprintf("socketpair: %s", strerror(errno));
		return -1;
	}
	br = xcalloc(1, sizeof *br);
	br->fd = sv[1];
	br->client = c;
	br->sbx = *sbx;
	memset(sbx, 0, sizeof *sbx);
	br->timeout_s = timeout_s > 3 ? timeout_s : 3;
	br->sbx.timeout_s = br->timeout_s;
	br->used_ms = json_now_ms();
	br->refs = 1;
	pthread_mutex_init(&br->lock, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, bridge_thread, br) != 0) {
		pthread_attr_destroy(&attr);
		*cause = xstrdup("e2b: cannot start a thread");
		close(sv[0]);
		e2b_bridge_unref(br);
		return -1;
	}
	pthread_attr_destroy(&attr);
	return sv[0];
}
