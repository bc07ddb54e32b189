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
 * services are E2B processes left running (op_service).
 */
#include <sys/socket.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "e2b-client.h"
#include "sandbox.h"

struct e2b_bridge {
	int			 fd;
	pthread_mutex_t		 lock;		/* fd writes, refs, used_ms */
	int			 refs;
	struct e2b_client	*client;
	struct e2b_sbx		 sbx;
	long			 timeout_s;
	uint64_t		 used_ms;	/* the timeout last set then */
#define BRIDGE_PTYS	16
	long			 ptys[BRIDGE_PTYS];	/* pids on a terminal */
#define BRIDGE_WATCHES	16
	struct bridge_exec	*watches[BRIDGE_WATCHES];
	int			 closed;	/* holt closed its end */
};

struct bridge_exec {
	struct e2b_bridge	*br;
	cJSON			*req;
	double			 id;
	long			 pid;
	int			 pty;
	uint64_t		 start_ms;
	uint64_t		 deadline_ms;	/* 0: none */
	int			 timed_out;
	long long		 off_out, off_err, off_pty;
	int			 exited;
	int			 cancel;	/* a watch: unwatch came */
};

static void
bridge_unref(struct e2b_bridge *br)
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
static void
bridge_send(struct e2b_bridge *br, cJSON *j)
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

static cJSON *
reply_new(double id)
{
	cJSON	*j = cJSON_CreateObject();

	cJSON_AddNumberToObject(j, "id", id);
	return j;
}

static void
send_ok(struct e2b_bridge *br, double id, cJSON *j)
{
	if (j == NULL)
		j = reply_new(id);
	cJSON_AddBoolToObject(j, "ok", 1);
	bridge_send(br, j);
	cJSON_Delete(j);
}

static void
send_error(struct e2b_bridge *br, double id, const char *msg)
{
	cJSON	*j = reply_new(id);

	cJSON_AddStringToObject(j, "error", msg);
	bridge_send(br, j);
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
static char *
bridge_path(const cJSON *req, const char *key)
{
	const char	*p = json_str(req, key);

	if (p == NULL || *p == '\0')
		return xstrdup("/workspace");
	if (*p == '/')
		return xstrdup(p);
	return xprintf("/workspace/%s", p);
}

/* E2B's Connect errors in holt-envd's words, the path quoted. */
static char *
fs_error(const char *what, const char *path, const char *code,
    const char *cause)
{
	if (code != NULL && strcmp(code, "not_found") == 0)
		return xprintf("%s '%s': No such file or directory", what,
		    path);
	return xprintf("%s '%s': %s", what, path, cause);
}

static cJSON *
process_sel(long pid)
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
			j = reply_new(ex->id);
			cJSON_AddStringToObject(j, "event", streams[i]);
			cJSON_AddNumberToObject(j, "pid", (double)ex->pid);
			envd_data_set(j, b.data, b.len);
			cJSON_AddNumberToObject(j, "offset", (double)*offs[i]);
			*offs[i] += (long long)b.len;
			bridge_send(ex->br, j);
			cJSON_Delete(j);
		}
		buf_release(&b);
	}
}

static void
exec_end(struct bridge_exec *ex, const cJSON *end)
{
	cJSON		*j = reply_new(ex->id);
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
	bridge_send(ex->br, j);
	cJSON_Delete(j);
	ex->exited = 1;
}

static void
exec_timeout(struct bridge_exec *ex)
{
	cJSON	*req, *r;
	char	*cause = NULL;

	ex->timed_out = 1;
	req = process_sel(ex->pid);
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
		req = process_sel(pid);
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
	req = process_sel(pid);
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
		j = reply_new(ex->id);
		if (strcmp(json_str(ex->req, "op"), "attach") == 0) {
			cJSON_AddStringToObject(j, "event", "attached");
			cJSON_AddBoolToObject(j, "running", 1);
		} else
			cJSON_AddStringToObject(j, "event", "started");
		cJSON_AddNumberToObject(j, "pid", (double)ex->pid);
		bridge_send(ex->br, j);
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
		within = bridge_path(req, "within");
		st = cJSON_CreateObject();
		cJSON_AddStringToObject(st, "path", within);
		r = e2b_envd_rpc(&br->sbx, "filesystem.Filesystem/Stat", NULL,
		    st, &code, cause);
		cJSON_Delete(st);
		if (r == NULL) {
			char *m = fs_error("path", json_str(req, "within"), code,
			    *cause);
			free(*cause);
			*cause = m;
			goto fail;
		}
		cwd = strcmp(json_str(cJSON_GetObjectItem(r, "entry"),
		    "type") != NULL ? json_str(cJSON_GetObjectItem(r, "entry"),
		    "type") : "", "FILE_TYPE_DIRECTORY") == 0 ?
		    xstrdup(within) : bridge_path(req, "cwd");
		cJSON_Delete(r);
		cJSON_AddStringToObject(p, "cmd", "/bin/sh");
		cJSON_AddItemToArray(args, cJSON_CreateString("-c"));
		cJSON_AddItemToArray(args, cJSON_CreateString(
		    "f=$1; shift; exec \"$@\" <\"$f\""));
		cJSON_AddItemToArray(args, cJSON_CreateString("sh"));
		cJSON_AddItemToArray(args, cJSON_CreateString(within));
		first = 0;
	} else
		cwd = bridge_path(req, "cwd");
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
		s = process_sel(ex->pid);
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
	send_error(br, ex->id, cause);
	free(cause);
out:
	cJSON_Delete(s);
	cJSON_Delete(ex->req);
	free(ex);
	bridge_unref(br);
	return NULL;
}

/* ---- watch: filesystem.Filesystem/WatchDir ---- */

static int
watch_ended(struct bridge_exec *ex)
{
	int	 ended;

	pthread_mutex_lock(&ex->br->lock);
	ended = ex->cancel || ex->br->closed;
	pthread_mutex_unlock(&ex->br->lock);
	return ended;
}

static int
watch_msg(void *arg, const cJSON *msg)
{
	static const char *const kinds[][2] = {
		{ "EVENT_TYPE_CREATE", "create" }, { "EVENT_TYPE_WRITE", "modify" },
		{ "EVENT_TYPE_REMOVE", "delete" },
		{ "EVENT_TYPE_RENAME", "move_from" },
		{ "EVENT_TYPE_CHMOD", "attrib" },
	};
	struct bridge_exec	*ex = arg;
	const cJSON		*fs;
	const char		*type, *name, *et;
	cJSON			*j;
	char			*path;
	size_t			 i;

	if (watch_ended(ex))
		return 1;
	if (msg == NULL)
		return 0;
	/* WatchDirResponse's oneof is at its top: {"start": {}}. */
	if (cJSON_GetObjectItem(msg, "start") != NULL && !ex->exited) {
		ex->exited = 1;		/* here: the reply is sent */
		send_ok(ex->br, ex->id, NULL);
		return 0;
	}
	if ((fs = cJSON_GetObjectItem(msg, "filesystem")) == NULL ||
	    (name = json_str(fs, "name")) == NULL ||
	    (type = json_str(fs, "type")) == NULL)
		return 0;
	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		if (strcmp(type, kinds[i][0]) != 0)
			continue;
		path = *name == '/' ? xstrdup(name) : xprintf("%s/%s",
		    json_str(ex->req, "path"), name);
		et = json_str(cJSON_GetObjectItem(fs, "entry"), "type");
		j = reply_new(ex->id);
		cJSON_AddStringToObject(j, "event", "change");
		cJSON_AddStringToObject(j, "path", path);
		cJSON_AddStringToObject(j, "kind", kinds[i][1]);
		cJSON_AddBoolToObject(j, "dir", et != NULL &&
		    strcmp(et, "FILE_TYPE_DIRECTORY") == 0);
		bridge_send(ex->br, j);
		cJSON_Delete(j);
		free(path);
	}
	return 0;
}

static void *
watch_thread(void *arg)
{
	struct bridge_exec	*ex = arg;
	struct e2b_bridge	*br = ex->br;
	cJSON			*q = cJSON_CreateObject();
	char			*cause = NULL, *path;
	size_t			 i;

	path = bridge_path(ex->req, "path");
	cJSON_DeleteItemFromObject(ex->req, "path");
	cJSON_AddStringToObject(ex->req, "path", path);
	cJSON_AddStringToObject(q, "path", path);
	cJSON_AddBoolToObject(q, "recursive", json_bool(ex->req, "recursive",
	    1));
	cJSON_AddBoolToObject(q, "includeEntry", 1);
	free(path);
	if (e2b_envd_stream(&br->sbx, "filesystem.Filesystem/WatchDir", NULL,
	    q, watch_msg, ex, &cause) == -1 && !ex->exited) {
		path = fs_error("path", json_str(ex->req, "path"),
		    strstr(cause, "not_found") != NULL ? "not_found" : NULL,
		    cause);
		send_error(br, ex->id, path);
		free(path);
	}
	free(cause);
	cJSON_Delete(q);
	pthread_mutex_lock(&br->lock);
	for (i = 0; i < BRIDGE_WATCHES; i++) {
		if (br->watches[i] == ex)
			br->watches[i] = NULL;
	}
	pthread_mutex_unlock(&br->lock);
	cJSON_Delete(ex->req);
	free(ex);
	bridge_unref(br);
	return NULL;
}

/* Make it known to unwatch, or -1 when there are too many. */
static int
watch_register(struct e2b_bridge *br, struct bridge_exec *ex)
{
	size_t	 i;
	int	 r = -1;

	pthread_mutex_lock(&br->lock);
	for (i = 0; i < BRIDGE_WATCHES && r == -1; i++) {
		if (br->watches[i] == NULL) {
			br->watches[i] = ex;
			r = 0;
		}
	}
	pthread_mutex_unlock(&br->lock);
	return r;
}

static int
op_unwatch(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	double	 id = json_num(req, "watch", -1);
	size_t	 i;
	int	 found = 0;

	(void)reply;
	pthread_mutex_lock(&br->lock);
	for (i = 0; i < BRIDGE_WATCHES; i++) {
		if (br->watches[i] != NULL && br->watches[i]->id == id) {
			br->watches[i]->cancel = 1;
			found = 1;
		}
	}
	pthread_mutex_unlock(&br->lock);
	if (!found)
		*cause = xprintf("unwatch: no watch %.0f", id);
	return found ? 0 : -1;
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
	if (watch && watch_register(br, ex) != 0) {
		send_error(br, id, "watch: too many watches on one connection");
		cJSON_Delete(req);
		free(ex);
		bridge_unref(br);
		return;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, watch ? watch_thread : exec_thread,
	    ex) != 0) {
		/* Not started: nothing else has seen ex yet but unwatch. */
		pthread_mutex_lock(&br->lock);
		for (watch = 0; watch < BRIDGE_WATCHES; watch++) {
			if (br->watches[watch] == ex)
				br->watches[watch] = NULL;
		}
		pthread_mutex_unlock(&br->lock);
		send_error(br, id, "cannot start a thread");
		cJSON_Delete(req);
		free(ex);
		bridge_unref(br);
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
	sel = process_sel((long)json_num(req, "pid", 0));
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
	sel = process_sel((long)json_num(req, "pid", 0));
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

/* ---- files ---- */

/* proto3 JSON: an int64 is a string, other numbers numbers. */
static double
pb_num(const cJSON *o, const char *key)
{
	const cJSON	*v = cJSON_GetObjectItem(o, key);

	if (cJSON_IsNumber(v))
		return v->valuedouble;
	if (cJSON_IsString(v))
		return strtod(v->valuestring, NULL);
	return 0;
}

/* A google.protobuf.Timestamp ("2026-12-02T02:14:13.123Z") in ms. */
static double
pb_time_ms(const char *s)
{
	struct tm	 tm;
	const char	*p;
	double		 frac = 0;

	memset(&tm, 0, sizeof tm);
	if (s == NULL || (p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return 0;
	if (*p == '.')
		frac = strtod(p, NULL);
	return ((double)timegm(&tm) + frac) * 1000;
}

static const char *
entry_type(const cJSON *e)
{
	const char	*t = json_str(e, "type"), *link;

	/* Older envds give symlinkTarget, newer ones isSymlink or a type. */
	if (((link = json_str(e, "symlinkTarget")) != NULL && *link != '\0') ||
	    json_bool(e, "isSymlink", 0))
		return "symlink";
	if (t == NULL)
		return "other";
	if (strcmp(t, "FILE_TYPE_SYMLINK") == 0)
		return "symlink";
	if (strcmp(t, "FILE_TYPE_FILE") == 0)
		return "file";
	if (strcmp(t, "FILE_TYPE_DIRECTORY") == 0)
		return "dir";
	return "other";
}

/* An E2B EntryInfo as holt-envd's stat/list fields. */
static void
entry_fields(cJSON *to, const cJSON *e)
{
	cJSON_AddStringToObject(to, "type", entry_type(e));
	cJSON_AddNumberToObject(to, "size", pb_num(e, "size"));
	cJSON_AddNumberToObject(to, "mode", (double)((long)pb_num(e, "mode") &
	    07777));
	cJSON_AddNumberToObject(to, "mtime_ms",
	    pb_time_ms(json_str(e, "modifiedTime")));
}

/* A filesystem.Filesystem call on path; its reply, or NULL and *cause. */
static cJSON *
fs_call(struct e2b_bridge *br, const char *method, cJSON *q,
    const char *what, const char *shown, char **cause)
{
	cJSON	*r;
	char	*code = NULL, *m;

	r = e2b_envd_rpc(&br->sbx, method, NULL, q, &code, cause);
	cJSON_Delete(q);
	if (r == NULL) {
		m = fs_error(what, shown, code, *cause);
		free(*cause);
		*cause = m;
	}
	free(code);
	return r;
}

static cJSON *
fs_path_req(const char *path)
{
	cJSON	*q = cJSON_CreateObject();

	cJSON_AddStringToObject(q, "path", path);
	return q;
}

static int
op_stat(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	char		*path = bridge_path(req, "path");
	cJSON		*r;
	const cJSON	*e;

	r = fs_call(br, "filesystem.Filesystem/Stat", fs_path_req(path),
	    "path", json_str(req, "path") != NULL ? json_str(req, "path") : "",
	    cause);
	free(path);
	if (r == NULL)
		return -1;
	e = cJSON_GetObjectItem(r, "entry");
	entry_fields(*reply, e);
	if (json_str(e, "symlinkTarget") != NULL)
		cJSON_AddStringToObject(*reply, "target",
		    json_str(e, "symlinkTarget"));
	cJSON_Delete(r);
	return 0;
}

static int
op_list(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	char		*path = bridge_path(req, "path");
	cJSON		*q = fs_path_req(path), *r, *arr, *o;
	const cJSON	*e;
	const char	*p;
	size_t		 n = strlen(path);

	cJSON_AddNumberToObject(q, "depth", json_num(req, "depth", 1));
	r = fs_call(br, "filesystem.Filesystem/ListDir", q, "path",
	    json_str(req, "path") != NULL ? json_str(req, "path") : ".",
	    cause);
	if (r == NULL) {
		free(path);
		return -1;
	}
	arr = cJSON_AddArrayToObject(*reply, "entries");
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(r, "entries")) {
		if ((p = json_str(e, "path")) == NULL)
			continue;
		if (strncmp(p, path, n) == 0 && p[n] == '/')
			p += n + 1;
		else if (strcmp(path, "/") == 0 && *p == '/')
			p++;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", p);
		entry_fields(o, e);
		cJSON_AddItemToArray(arr, o);
	}
	cJSON_Delete(r);
	free(path);
	return 0;
}

static char *
file_get(struct e2b_bridge *br, const char *path, const char *shown,
    size_t *lenp, char **cause)
{
	char	*data, *m;
	int	 gone;

	if ((data = e2b_envd_file_get(&br->sbx, path, lenp, &gone, cause))
	    == NULL) {
		m = fs_error("path", shown, gone ? "not_found" : NULL, *cause);
		free(*cause);
		*cause = m;
	}
	return data;
}

static int
op_read(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	char		*path = bridge_path(req, "path"), *data;
	size_t		 len, off, n;
	double		 o = json_num(req, "offset", 0);
	double		 l = json_num(req, "length", ENVD_READ_MAX);

	data = file_get(br, path, json_str(req, "path") != NULL ?
	    json_str(req, "path") : "", &len, cause);
	free(path);
	if (data == NULL)
		return -1;
	off = o > 0 ? (o < (double)len ? (size_t)o : len) : 0;
	n = l > 0 && l < ENVD_READ_MAX ? (size_t)l : ENVD_READ_MAX;
	if (n > len - off)
		n = len - off;
	envd_data_set(*reply, data + off, n);
	cJSON_AddNumberToObject(*reply, "size", (double)len);
	cJSON_AddBoolToObject(*reply, "eof", off + n == len);
	free(data);
	return 0;
}

/* write: E2B's upload replaces the file and makes its parents. */
static int
op_write(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	char		*path = bridge_path(req, "path"), *old = NULL, *dir;
	const char	*shown = json_str(req, "path") != NULL ?
			    json_str(req, "path") : "";
	struct buf	 b;
	size_t		 oldlen = 0;
	int		 r = -1, gone;
	cJSON		*st;

	buf_init(&b);
	if (envd_data_get(req, &b) != 0) {
		*cause = xstrdup("write: bad base64");
		goto out;
	}
	if (!json_bool(req, "parents", 1) && strrchr(path, '/') != path) {
		dir = xstrndup(path, (size_t)(strrchr(path, '/') - path));
		st = fs_call(br, "filesystem.Filesystem/Stat", fs_path_req(dir),
		    "path", shown, cause);
		free(dir);
		if (st == NULL)
			goto out;
		cJSON_Delete(st);
	}
	if (json_bool(req, "append", 0)) {
		old = e2b_envd_file_get(&br->sbx, path, &oldlen, &gone, cause);
		if (old == NULL && !gone)
			goto out;
		free(*cause);
		*cause = NULL;
		if (old != NULL) {
			struct buf	 all;

			buf_init(&all);
			buf_add(&all, old, oldlen);
			buf_add(&all, b.data, b.len);
			buf_release(&b);
			b = all;
		}
	}
	if (e2b_envd_file_put(&br->sbx, path, b.data != NULL ? b.data : "",
	    b.len, cause) != 0) {
		char *m = fs_error("path", shown, NULL, *cause);

		free(*cause);
		*cause = m;
		goto out;
	}
	cJSON_AddNumberToObject(*reply, "size", (double)b.len);
	r = 0;
out:
	free(old);
	free(path);
	buf_release(&b);
	return r;
}

static int
op_remove(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	char		*path = bridge_path(req, "path");
	const char	*shown = json_str(req, "path") != NULL ?
			    json_str(req, "path") : "";
	cJSON		*r, *q;
	int		 rc = -1;

	(void)reply;
	/* E2B removes a tree whole: without "recursive", only an empty one. */
	if (!json_bool(req, "recursive", 0)) {
		q = fs_path_req(path);
		cJSON_AddNumberToObject(q, "depth", 1);
		r = e2b_envd_rpc(&br->sbx, "filesystem.Filesystem/ListDir",
		    NULL, q, NULL, cause);
		cJSON_Delete(q);
		free(*cause);
		*cause = NULL;
		if (r != NULL && cJSON_GetArraySize(cJSON_GetObjectItem(r,
		    "entries")) > 0) {
			cJSON_Delete(r);
			*cause = xprintf("path '%s': Directory not empty",
			    shown);
			goto out;
		}
		cJSON_Delete(r);
	}
	if ((r = fs_call(br, "filesystem.Filesystem/Remove", fs_path_req(path),
	    "path", shown, cause)) == NULL)
		goto out;
	cJSON_Delete(r);
	rc = 0;
out:
	free(path);
	return rc;
}

static int
op_move(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	char	*from = bridge_path(req, "from"), *to = bridge_path(req, "to");
	cJSON	*q = cJSON_CreateObject(), *r;

	(void)reply;
	cJSON_AddStringToObject(q, "source", from);
	cJSON_AddStringToObject(q, "destination", to);
	r = fs_call(br, "filesystem.Filesystem/Move", q, "path",
	    json_str(req, "from") != NULL ? json_str(req, "from") : "", cause);
	free(from);
	free(to);
	cJSON_Delete(r);
	return r != NULL ? 0 : -1;
}

/*
 * ---- services ----
 * E2B supervises nothing: a service is a process started with the tag
 * "holt-service:NAME:PORT", its output appended to a log under /tmp, left
 * running when its stream is let go (E2B keeps a process whose client
 * went). ls is E2B's process list; one that ended is gone from it, and is
 * not started again.
 */
#define SVC_TAG		"holt-service:"
#define SVC_LOGS	"/tmp/holt-services"

static int
svc_name_ok(const char *s)
{
	static const char	 ok[] = "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.";

	return s != NULL && *s != '\0' && *s != '.' && strlen(s) <= 64 &&
	    s[strspn(s, ok)] == '\0';
}

/* The process of service name in List's reply, or NULL; its port. */
static const cJSON *
svc_find(const cJSON *list, const char *name, long *port)
{
	const cJSON	*p;
	const char	*tag;
	size_t		 n = strlen(SVC_TAG), len = strlen(name);

	cJSON_ArrayForEach(p, cJSON_GetObjectItem(list, "processes")) {
		if ((tag = json_str(p, "tag")) == NULL ||
		    strncmp(tag, SVC_TAG, n) != 0 ||
		    strncmp(tag + n, name, len) != 0 || tag[n + len] != ':')
			continue;
		if (port != NULL)
			*port = atol(tag + n + len + 1);
		return p;
	}
	return NULL;
}

static cJSON *
svc_list(struct e2b_bridge *br, char **cause)
{
	cJSON	*q = cJSON_CreateObject(), *r;

	r = e2b_envd_rpc(&br->sbx, "process.Process/List", NULL, q, NULL,
	    cause);
	cJSON_Delete(q);
	return r;
}

/* The command a service runs (the last argument of its wrapper). */
static const char *
svc_cmd(const cJSON *p)
{
	const cJSON	*args = cJSON_GetObjectItem(cJSON_GetObjectItem(p,
			    "config"), "args");
	int		 n = cJSON_GetArraySize(args);

	return n > 0 && cJSON_IsString(cJSON_GetArrayItem(args, n - 1)) ?
	    cJSON_GetArrayItem(args, n - 1)->valuestring : "";
}

static int
svc_started(void *arg, const cJSON *msg)
{
	long	*pid = arg;
	const cJSON *st;

	if (msg == NULL)
		return 0;
	st = cJSON_GetObjectItem(cJSON_GetObjectItem(msg, "event"), "start");
	if (st == NULL)
		return 0;
	*pid = (long)json_num(st, "pid", 0);
	return 1;	/* let the stream go: the process runs on */
}

static int
svc_start(struct e2b_bridge *br, const char *name, const char *cmd,
    long port, long *pid, char **cause)
{
	cJSON	*q = cJSON_CreateObject(), *p, *args;
	char	*script, *tag;
	int	 r;

	script = xprintf("mkdir -p " SVC_LOGS " && exec /bin/sh -c \"$1\" "
	    ">>" SVC_LOGS "/%s.log 2>&1", name);
	tag = xprintf(SVC_TAG "%s:%ld", name, port);
	p = cJSON_AddObjectToObject(q, "process");
	cJSON_AddStringToObject(p, "cmd", "/bin/sh");
	args = cJSON_AddArrayToObject(p, "args");
	cJSON_AddItemToArray(args, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(args, cJSON_CreateString(script));
	cJSON_AddItemToArray(args, cJSON_CreateString("holt-service"));
	cJSON_AddItemToArray(args, cJSON_CreateString(cmd));
	cJSON_AddStringToObject(p, "cwd", "/workspace");
	cJSON_AddStringToObject(q, "tag", tag);
	*pid = 0;
	r = e2b_envd_stream(&br->sbx, "process.Process/Start", NULL, q,
	    svc_started, pid, cause);
	free(script);
	free(tag);
	cJSON_Delete(q);
	if (r == 1)
		return 0;
	if (r == 0)
		*cause = xprintf("service '%s': ended at once", name);
	return -1;
}

static int
svc_kill(struct e2b_bridge *br, const cJSON *p, char **cause)
{
	cJSON	*q = process_sel((long)json_num(p, "pid", 0)), *r;

	cJSON_AddStringToObject(q, "signal", "SIGNAL_SIGKILL");
	r = e2b_envd_rpc(&br->sbx, "process.Process/SendSignal", NULL, q,
	    NULL, cause);
	cJSON_Delete(q);
	cJSON_Delete(r);
	return r != NULL ? 0 : -1;
}

/* cmd, or argv quoted for sh. */
static char *
svc_req_cmd(const cJSON *req)
{
	const cJSON	*a;
	struct buf	 b = BUF_INIT;
	const char	*s;

	if (json_str(req, "cmd") != NULL)
		return xstrdup(json_str(req, "cmd"));
	cJSON_ArrayForEach(a, cJSON_GetObjectItem(req, "argv")) {
		if (!cJSON_IsString(a))
			continue;
		buf_adds(&b, b.len > 0 ? " '" : "'");
		for (s = a->valuestring; *s != '\0'; s++) {
			if (*s == '\'')
				buf_adds(&b, "'\\''");
			else
				buf_addc(&b, *s);
		}
		buf_addc(&b, '\'');
	}
	return b.len > 0 ? buf_detach(&b, NULL) : NULL;
}

static int
svc_logs(struct e2b_bridge *br, const char *name, long lines, cJSON *reply,
    char **cause)
{
	char	*path = xprintf(SVC_LOGS "/%s.log", name), *data, *p;
	size_t	 len;
	int	 gone;

	data = e2b_envd_file_get(&br->sbx, path, &len, &gone, cause);
	free(path);
	if (data == NULL && !gone)
		return -1;
	if (data == NULL) {
		free(*cause);
		*cause = NULL;
		data = xstrdup("");
		len = 0;
	}
	p = data + len;
	if (p > data && p[-1] == '\n')
		p--;
	while (p > data && lines > 0) {
		if (*--p == '\n' && --lines == 0)
			p++;
	}
	envd_data_set(reply, p, len - (size_t)(p - data));
	free(data);
	return 0;
}

static int
op_service(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	const char	*act = json_str(req, "action");
	const char	*name = json_str(req, "name");
	const cJSON	*p, *e;
	cJSON		*list, *arr, *o;
	char		*cmd = NULL;
	long		 port = (long)json_num(req, "port", 0), pid;
	int		 r = -1;

	if (act == NULL)
		act = "";
	if (strcmp(act, "ls") != 0 && !svc_name_ok(name)) {
		*cause = xstrdup("service: a name of letters, digits, '-', "
		    "'_' and '.' is required");
		return -1;
	}
	if (strcmp(act, "logs") == 0)
		return svc_logs(br, name, (long)json_num(req, "lines", 100),
		    *reply, cause);
	if ((list = svc_list(br, cause)) == NULL)
		return -1;
	p = strcmp(act, "ls") == 0 ? NULL : svc_find(list, name, NULL);
	if (strcmp(act, "ls") == 0) {
		arr = cJSON_AddArrayToObject(*reply, "services");
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(list, "processes")) {
			name = json_str(e, "tag");
			if (name == NULL || strncmp(name, SVC_TAG,
			    strlen(SVC_TAG)) != 0)
				continue;
			o = cJSON_CreateObject();
			cmd = xstrndup(name + strlen(SVC_TAG),
			    strcspn(name + strlen(SVC_TAG), ":"));
			svc_find(list, cmd, &port);
			cJSON_AddStringToObject(o, "name", cmd);
			free(cmd);
			cmd = NULL;
			cJSON_AddStringToObject(o, "cmd", svc_cmd(e));
			cJSON_AddNumberToObject(o, "port", (double)port);
			cJSON_AddStringToObject(o, "state", "running");
			cJSON_AddNumberToObject(o, "pid", json_num(e, "pid", 0));
			cJSON_AddNumberToObject(o, "restarts", 0);
			cJSON_AddItemToArray(arr, o);
		}
		r = 0;
	} else if (strcmp(act, "create") == 0 || strcmp(act, "restart") == 0) {
		if (strcmp(act, "create") == 0)
			cmd = svc_req_cmd(req);
		else if (p != NULL) {
			cmd = xstrdup(svc_cmd(p));
			svc_find(list, name, &port);
		}
		if (cmd == NULL || *cmd == '\0')
			*cause = strcmp(act, "create") == 0 ?
			    xstrdup("service create: cmd or argv is required") :
			    xprintf("service '%s': not running", name);
		else if ((p == NULL || svc_kill(br, p, cause) == 0) &&
		    svc_start(br, name, cmd, port, &pid, cause) == 0) {
			cJSON_AddNumberToObject(*reply, "pid", (double)pid);
			r = 0;
		}
	} else if (strcmp(act, "stop") == 0 || strcmp(act, "remove") == 0) {
		if (p == NULL)
			*cause = xprintf("service '%s': not running", name);
		else
			r = svc_kill(br, p, cause);
	} else
		*cause = xprintf("service: no action '%s'", act);
	free(cmd);
	cJSON_Delete(list);
	return r;
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
	{ "resize", op_resize }, { "ps", op_ps }, { "read", op_read },
	{ "write", op_write }, { "list", op_list }, { "stat", op_stat },
	{ "remove", op_remove }, { "move", op_move }, { "unwatch", op_unwatch },
	{ "service", op_service },
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
		send_error(br, id, "no op");
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
		reply = reply_new(id);
		if (bridge_ops[i].fn(br, req, &reply, &cause) == 0)
			send_ok(br, id, reply);
		else {
			cJSON_Delete(reply);
			send_error(br, id, cause);
			free(cause);
		}
		cJSON_Delete(req);
		return;
	}
	m = utf8_vis(op, 0);
	cause = xprintf("op '%s': not available in an e2b sandbox", m);
	send_error(br, id, cause);
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
	bridge_unref(br);
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
		bridge_unref(br);
		return -1;
	}
	pthread_attr_destroy(&attr);
	return sv[0];
}
