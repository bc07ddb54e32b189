/*
 * e2b-process.c: process.Process of E2B's envd. Start and Connect are
 * server streams (e2b-stream.c) that turn envd's exec and attach events
 * into ProcessEvents: start, data (base64), end. The unary calls (List,
 * SendInput, CloseStdin, SendSignal, Update) are one envd request each.
 * Every command may first be judged by holt's policy; one the policy asks
 * about waits, its stream open, for holt approve (e2b-control.c).
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2b.h"

/* What Start was asked to run, for List and for tags. */
struct e2b_proc {
	char		*sandbox;
	long		 pid;
	char		*tag;
	cJSON		*config;	/* ProcessConfig as sent */
	struct e2b_proc	*next;
};


static struct e2b_proc *
proc_find(struct e2b_server *srv, const char *sandbox, long pid,
    const char *tag)
{
	struct e2b_proc	*p;

	for (p = srv->procs; p != NULL; p = p->next) {
		if (strcmp(p->sandbox, sandbox) != 0)
			continue;
		if (tag != NULL ? p->tag != NULL && strcmp(p->tag, tag) == 0 :
		    p->pid == pid)
			return p;
	}
	return NULL;
}

static void
proc_add(struct e2b_server *srv, const char *sandbox, long pid,
    const char *tag, const cJSON *config)
{
	struct e2b_proc	*p;

	if ((p = proc_find(srv, sandbox, pid, NULL)) == NULL) {
		p = xcalloc(1, sizeof *p);
		p->sandbox = xstrdup(sandbox);
		p->pid = pid;
		p->next = srv->procs;
		srv->procs = p;
	} else {
		free(p->tag);
		cJSON_Delete(p->config);
	}
	p->tag = tag != NULL ? xstrdup(tag) : NULL;
	p->config = cJSON_Duplicate(config, 1);
}

void
e2b_process_free_all(struct e2b_server *srv)
{
	struct e2b_proc	*p;

	while ((p = srv->procs) != NULL) {
		srv->procs = p->next;
		free(p->sandbox);
		free(p->tag);
		cJSON_Delete(p->config);
		free(p);
	}
}

static void
send_start(struct e2b_stream *st, long pid)
{
	char	 s[64];
	int	 n;

	n = snprintf(s, sizeof s, "{\"event\":{\"start\":{\"pid\":%ld}}}", pid);
	e2b_stream_send(st, s, (size_t)n);
}

/*
 * A chunk of output, base64: it needs no JSON escaping, so no cJSON here.
 * It comes as envd sent it (moved, not copied), or from b64.
 */
static void
send_data(struct e2b_stream *st, const char *stream, const char *b64)
{
	struct evbuffer	*b = evbuffer_new();
	size_t		 n;

	evbuffer_add_printf(b, "{\"event\":{\"data\":{\"%s\":\"", stream);
	n = evbuffer_get_length(b);
	if (b64 != NULL)
		evbuffer_add(b, b64, strlen(b64));
	else
		e2b_stream_output(st, b);
	if (evbuffer_get_length(b) > n) {
		evbuffer_add(b, "\"}}}", 4);
		e2b_stream_send_buf(st, 0, b);
	}
	evbuffer_free(b);
}

/* Returns 1 when the stream is over (and freed). */
static int
stream_frame(struct e2b_stream *st, const cJSON *f)
{
	const char	*ev = json_str(f, "event"), *err = json_str(f, "error");
	struct buf	 data = BUF_INIT;
	cJSON		*j, *end;
	char		*status, *b64;
	double		 code, sig;

	if (ev == NULL) {
		if (err != NULL) {
			e2b_stream_end(st, e2b_envd_code(err), err);
			return 1;
		}
		return 0;
	}
	if (strcmp(ev, "started") == 0 || strcmp(ev, "attached") == 0) {
		if (strcmp(ev, "started") == 0 && st->config != NULL)
			proc_add(st->srv, st->sandbox,
			    (long)json_num(f, "pid", 0), st->tag, st->config);
		send_start(st, (long)json_num(f, "pid", 0));
	} else if (strcmp(ev, "stdout") == 0 || strcmp(ev, "stderr") == 0 ||
	    strcmp(ev, "pty") == 0) {
		if (st->out_in != NULL)
			send_data(st, ev, NULL);
		else if (envd_data_get(f, &data) == 0 && data.len > 0) {
			b64 = envd_b64_encode(data.data, data.len);
			send_data(st, ev, b64);
			free(b64);
		}
		buf_release(&data);
	} else if (strcmp(ev, "exit") == 0) {
		if (json_bool(f, "timed_out", 0)) {
			status = xprintf("command timed out after %ld ms",
			    st->timeout_ms);
			e2b_stream_end(st, "deadline_exceeded", status);
			free(status);
			return 1;
		}
		code = json_num(f, "code", -1);
		sig = json_num(f, "signal", 0);
		j = cJSON_CreateObject();
		end = cJSON_AddObjectToObject(cJSON_AddObjectToObject(j,
		    "event"), "end");
		if (sig > 0) {
			status = xprintf("signal: %d", (int)sig);
			code = -1;
		} else
			status = xprintf("exit status %d", (int)code);
		cJSON_AddNumberToObject(end, "exitCode", code);
		cJSON_AddBoolToObject(end, "exited", sig <= 0);
		cJSON_AddStringToObject(end, "status", status);
		if (code != 0)
			cJSON_AddStringToObject(end, "error", status);
		free(status);
		e2b_stream_send_json(st, 0, j);
		cJSON_Delete(j);
		e2b_stream_end(st, NULL, NULL);
		return 1;
	}
	return 0;
}

/* ---- policy ---- */

/*
 * The command line the policy judges: the SDK's "/bin/bash -l -c CMD" is
 * CMD; anything else is its argv, quoted.
 */
static char *
policy_line(const char *cmd, const cJSON *args)
{
	const cJSON	*a;
	struct buf	 b = BUF_INIT;
	char		*q;
	int		 n = cJSON_GetArraySize(args);

	if ((strcmp(cmd, "/bin/bash") == 0 || strcmp(cmd, "bash") == 0 ||
	    strcmp(cmd, "/bin/sh") == 0 || strcmp(cmd, "sh") == 0) &&
	    n >= 2 && n <= 3) {
		a = cJSON_GetArrayItem(args, n - 2);
		if (cJSON_IsString(a) && strcmp(a->valuestring, "-c") == 0 &&
		    (n == 2 || strcmp(cJSON_GetArrayItem(args, 0)->valuestring,
		    "-l") == 0) && cJSON_IsString(cJSON_GetArrayItem(args,
		    n - 1)))
			return xstrdup(cJSON_GetArrayItem(args, n - 1)->
			    valuestring);
	}
	q = policy_shell_quote(cmd);
	buf_adds(&b, q);
	free(q);
	cJSON_ArrayForEach(a, args) {
		q = policy_shell_quote(a->valuestring);
		buf_addc(&b, ' ');
		buf_adds(&b, q);
		free(q);
	}
	return buf_detach(&b, NULL);
}

/*
 * The policy's verdict on a command; *line is what it judged and *why, for
 * a command that may not run at once, the reason (both the caller's).
 */
static enum policy_verdict
policy_judge(struct e2b_server *srv, const char *cmd, const cJSON *args,
    const char *cwd, char **line, char **why)
{
	struct policy_result	*r;
	enum policy_verdict	 v;

	*line = policy_line(cmd, args);
	*why = NULL;
	if (srv->policy == NULL)
		return POLICY_ALLOW;
	r = policy_check_command_in(srv->policy, srv->mode, cwd, *line);
	v = r->verdict;
	if (v == POLICY_DENY)
		*why = xprintf("holt policy: '%s' denied: %s", *line,
		    r->reason != NULL ? r->reason : "no rule allows it");
	else if (v == POLICY_ASK)
		*why = xstrdup(r->reason != NULL ? r->reason :
		    "no rule settles it");
	policy_result_free(r);
	return v;
}

/* ---- asks ---- */

/* holt approve's answer to a command's ask: run it, or end its stream. */
static void
ask_answered(void *arg, int allow, const char *why)
{
	struct e2b_stream	*st = arg;
	struct sandbox		*sb;
	cJSON			*exec = st->held;
	char			*cause = NULL;

	st->ask = NULL;
	st->held = NULL;
	if (!allow)
		e2b_stream_end(st, "permission_denied", why);
	else if ((sb = sandbox_open(st->sandbox, &cause)) == NULL) {
		e2b_stream_end(st, "unavailable", cause);
		free(cause);
	} else {
		e2b_stream_envd(st, sb, exec, stream_frame);
		sandbox_free(sb);
	}
	cJSON_Delete(exec);
}

/* ---- Start and Connect ---- */

static int
strings_array(const cJSON *a)
{
	const cJSON	*it;

	if (a == NULL)
		return 1;
	if (!cJSON_IsArray(a))
		return 0;
	cJSON_ArrayForEach(it, a) {
		if (!cJSON_IsString(it))
			return 0;
	}
	return 1;
}

static void
process_start(struct e2b_server *srv, struct evhttp_request *req,
    struct e2b_box *box, struct sandbox *sb)
{
	const char		*to = evhttp_find_header(
	    evhttp_request_get_input_headers(req), "Connect-Timeout-Ms");
	struct e2b_stream	*st;
	cJSON			*in, *proc, *args, *envs, *pty, *size, *ereq, *argv;
	cJSON			*env;
	const cJSON		*it;
	const char		*cmd;
	char			*why, *cwdp, *line;
	enum policy_verdict	 verdict;

	if ((in = e2b_stream_request(req)) == NULL)
		return;
	proc = cJSON_GetObjectItem(in, "process");
	cmd = json_str(proc, "cmd");
	args = cJSON_GetObjectItem(proc, "args");
	envs = cJSON_GetObjectItem(proc, "envs");
	if (cmd == NULL || *cmd == '\0' || !strings_array(args) ||
	    (envs != NULL && !cJSON_IsObject(envs))) {
		e2b_reply_connect_error(req, "invalid_argument",
		    "process: cmd (a string), args (strings) and envs needed");
		cJSON_Delete(in);
		return;
	}
	st = e2b_stream_new(srv, req, sb);
	cwdp = e2b_path(json_str(proc, "cwd"));
	verdict = policy_judge(srv, cmd, args, cwdp, &line, &why);
	if (verdict == POLICY_DENY || (verdict == POLICY_ASK &&
	    srv->mode == POLICY_STRICT)) {
		if (verdict == POLICY_ASK) {
			free(why);
			why = xprintf("holt policy: '%s' is not allowed in "
			    "strict mode", line);
		}
		log_info("sandbox '%s': %s", box->id, why);
		e2b_stream_end(st, "permission_denied", why);
		free(why);
		free(line);
		free(cwdp);
		cJSON_Delete(in);
		return;
	}
	st->config = cJSON_Duplicate(proc, 1);
	if (json_str(in, "tag") != NULL)
		st->tag = xstrdup(json_str(in, "tag"));
	ereq = cJSON_CreateObject();
	cJSON_AddStringToObject(ereq, "op", "exec");
	cJSON_AddBoolToObject(ereq, "b64", 1);	/* passed on as it comes */
	argv = cJSON_AddArrayToObject(ereq, "argv");
	cJSON_AddItemToArray(argv, cJSON_CreateString(cmd));
	cJSON_ArrayForEach(it, args)
		cJSON_AddItemToArray(argv, cJSON_CreateString(it->valuestring));
	cJSON_AddStringToObject(ereq, "cwd", cwdp);
	free(cwdp);
	env = cJSON_Duplicate(box->envs, 1);
	cJSON_ArrayForEach(it, envs) {
		if (cJSON_IsString(it)) {
			cJSON_DeleteItemFromObject(env, it->string);
			cJSON_AddStringToObject(env, it->string,
			    it->valuestring);
		}
	}
	cJSON_AddItemToObject(ereq, "env", env);
	if (to != NULL && (st->timeout_ms = strtol(to, NULL, 10)) > 0)
		cJSON_AddNumberToObject(ereq, "timeout_ms", st->timeout_ms);
	if ((pty = cJSON_GetObjectItem(in, "pty")) != NULL) {
		size = cJSON_GetObjectItem(pty, "size");
		pty = cJSON_AddObjectToObject(ereq, "pty");
		cJSON_AddNumberToObject(pty, "cols", json_num(size, "cols", 80));
		cJSON_AddNumberToObject(pty, "rows", json_num(size, "rows", 24));
	} else if (json_bool(in, "stdin", 0))
		cJSON_AddBoolToObject(ereq, "stdin", 1);
	cJSON_Delete(in);
	if (verdict == POLICY_ASK) {
		st->held = ereq;
		st->ask = e2b_ask_new(srv, box->id, E2B_ASK_COMMAND, line, 0,
		    why, ask_answered, st);
		free(line);
		free(why);
		return;
	}
	free(line);
	log_debug("sandbox '%s': start %s", box->id, cmd);
	e2b_stream_envd(st, sb, ereq, stream_frame);
	cJSON_Delete(ereq);
}

/* The pid a ProcessSelector names, or -1 with an error sent. */
static long
selector_pid(struct e2b_server *srv, struct evhttp_request *req,
    struct sandbox *sb, const cJSON *in, int stream)
{
	const cJSON	*sel = cJSON_GetObjectItem(in, "process");
	const char	*tag = json_str(sel, "tag");
	struct e2b_proc	*p;
	long		 pid;
	char		*m;

	if (tag != NULL) {
		if ((p = proc_find(srv, sandbox_id(sb), 0, tag)) != NULL)
			return p->pid;
		m = xprintf("process with tag '%s': not found", tag);
		goto fail;
	}
	if ((pid = (long)json_num(sel, "pid", -1)) > 0)
		return pid;
	m = xstrdup("process: pid or tag needed");
fail:
	if (!stream)
		e2b_reply_connect_error(req, tag != NULL ? "not_found" :
		    "invalid_argument", m);
	free(m);
	return -1;
}

static void
process_connect(struct e2b_server *srv, struct evhttp_request *req,
    struct sandbox *sb)
{
	const char		*to = evhttp_find_header(
	    evhttp_request_get_input_headers(req), "Connect-Timeout-Ms");
	struct e2b_stream	*st;
	cJSON			*in, *ereq;
	long			 pid;

	if ((in = e2b_stream_request(req)) == NULL)
		return;
	if ((pid = selector_pid(srv, req, sb, in, 0)) < 0) {
		cJSON_Delete(in);
		return;
	}
	cJSON_Delete(in);
	st = e2b_stream_new(srv, req, sb);
	if (to != NULL)
		st->timeout_ms = strtol(to, NULL, 10);
	ereq = cJSON_CreateObject();
	cJSON_AddStringToObject(ereq, "op", "attach");
	cJSON_AddNumberToObject(ereq, "pid", pid);
	cJSON_AddNumberToObject(ereq, "offset", 0);
	cJSON_AddBoolToObject(ereq, "b64", 1);
	e2b_stream_envd(st, sb, ereq, stream_frame);
	cJSON_Delete(ereq);
}

/* ---- unary calls ---- */

/* One envd request; the reply, or NULL with the Connect error sent. */
static cJSON *
unary_envd(struct evhttp_request *req, struct sandbox *sb, cJSON *ereq)
{
	char	*cause = NULL;
	cJSON	*rep;
	int	 fd;

	if ((fd = e2b_envd_connect(sb, &cause)) == -1) {
		cJSON_Delete(ereq);
		e2b_reply_connect_error(req, "unavailable", cause);
		free(cause);
		return NULL;
	}
	rep = envd_call(fd, ereq, &cause);
	close(fd);
	if (rep == NULL) {
		e2b_reply_connect_error(req, e2b_envd_code(cause), cause);
		free(cause);
	}
	return rep;
}

static void
reply_empty(struct evhttp_request *req)
{
	cJSON	*j = cJSON_CreateObject();

	e2b_reply_json(req, 200, j);
	cJSON_Delete(j);
}

static void
process_list(struct e2b_server *srv, struct evhttp_request *req,
    struct sandbox *sb)
{
	cJSON		*ereq, *rep, *out, *arr, *pi, *cfg;
	const cJSON	*c;
	struct e2b_proc	*p;
	long		 pid;

	ereq = cJSON_CreateObject();
	cJSON_AddStringToObject(ereq, "op", "ps");
	if ((rep = unary_envd(req, sb, ereq)) == NULL)
		return;
	out = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(out, "processes");
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(rep, "commands")) {
		if (!json_bool(c, "running", 0))
			continue;
		pid = (long)json_num(c, "pid", 0);
		p = proc_find(srv, sandbox_id(sb), pid, NULL);
		pi = cJSON_CreateObject();
		if (p != NULL)
			cfg = cJSON_Duplicate(p->config, 1);
		else {
			cfg = cJSON_CreateObject();
			cJSON_AddStringToObject(cfg, "cmd", "");
		}
		if (cJSON_GetObjectItem(cfg, "args") == NULL)
			cJSON_AddArrayToObject(cfg, "args");
		if (cJSON_GetObjectItem(cfg, "envs") == NULL)
			cJSON_AddObjectToObject(cfg, "envs");
		cJSON_AddItemToObject(pi, "config", cfg);
		cJSON_AddNumberToObject(pi, "pid", pid);
		if (p != NULL && p->tag != NULL)
			cJSON_AddStringToObject(pi, "tag", p->tag);
		cJSON_AddItemToArray(arr, pi);
	}
	cJSON_Delete(rep);
	e2b_reply_json(req, 200, out);
	cJSON_Delete(out);
}

static const char *
signal_name(const cJSON *s)
{
	if (cJSON_IsNumber(s)) {
		if (s->valueint == 9)
			return "KILL";
		if (s->valueint == 15)
			return "TERM";
	} else if (cJSON_IsString(s)) {
		if (strcmp(s->valuestring, "SIGNAL_SIGKILL") == 0)
			return "KILL";
		if (strcmp(s->valuestring, "SIGNAL_SIGTERM") == 0)
			return "TERM";
	}
	return NULL;
}

static void
process_unary(struct e2b_server *srv, struct evhttp_request *req,
    struct sandbox *sb, const char *method)
{
	cJSON		*in, *ereq, *rep, *input, *size;
	char		*cause = NULL;
	const char	*sig;
	long		 pid;
	struct buf	 data = BUF_INIT;

	if ((in = e2b_body_json(req, E2B_MAX_RPC_BODY, &cause)) == NULL) {
		e2b_reply_connect_error(req, "invalid_argument", cause);
		free(cause);
		return;
	}
	if ((pid = selector_pid(srv, req, sb, in, 0)) < 0) {
		cJSON_Delete(in);
		return;
	}
	ereq = cJSON_CreateObject();
	cJSON_AddNumberToObject(ereq, "pid", pid);
	if (strcmp(method, "SendInput") == 0) {
		input = cJSON_GetObjectItem(in, "input");
		if (!cJSON_IsString(cJSON_GetObjectItem(input, "stdin")) &&
		    !cJSON_IsString(cJSON_GetObjectItem(input, "pty")))
			goto bad;
		if (envd_b64_decode(json_str(input, "stdin") != NULL ?
		    json_str(input, "stdin") : json_str(input, "pty"),
		    &data) != 0)
			goto bad;
		cJSON_AddStringToObject(ereq, "op", "stdin");
		envd_data_set(ereq, data.data, data.len);
		buf_release(&data);
	} else if (strcmp(method, "CloseStdin") == 0) {
		cJSON_AddStringToObject(ereq, "op", "stdin");
		cJSON_AddBoolToObject(ereq, "eof", 1);
	} else if (strcmp(method, "SendSignal") == 0) {
		if ((sig = signal_name(cJSON_GetObjectItem(in, "signal"))) ==
		    NULL)
			goto bad;
		cJSON_AddStringToObject(ereq, "op", "signal");
		cJSON_AddStringToObject(ereq, "signal", sig);
	} else {
		size = cJSON_GetObjectItem(cJSON_GetObjectItem(in, "pty"),
		    "size");
		if (size == NULL)
			goto bad;
		cJSON_AddStringToObject(ereq, "op", "resize");
		cJSON_AddNumberToObject(ereq, "cols", json_num(size, "cols", 80));
		cJSON_AddNumberToObject(ereq, "rows", json_num(size, "rows", 24));
	}
	cJSON_Delete(in);
	if ((rep = unary_envd(req, sb, ereq)) != NULL) {
		cJSON_Delete(rep);
		reply_empty(req);
	}
	return;
bad:
	buf_release(&data);
	cJSON_Delete(ereq);
	cJSON_Delete(in);
	e2b_reply_connect_error(req, "invalid_argument", "bad request");
}

void
e2b_process_handle(struct e2b_server *srv, struct evhttp_request *req,
    struct e2b_box *box, struct sandbox *sb, const char *method)
{
	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		e2b_reply_connect_error(req, "unimplemented", "use POST");
		return;
	}
	if (strcmp(method, "Start") == 0)
		process_start(srv, req, box, sb);
	else if (strcmp(method, "Connect") == 0)
		process_connect(srv, req, sb);
	else if (strcmp(method, "List") == 0)
		process_list(srv, req, sb);
	else if (strcmp(method, "SendInput") == 0 ||
	    strcmp(method, "CloseStdin") == 0 ||
	    strcmp(method, "SendSignal") == 0 || strcmp(method, "Update") == 0)
		process_unary(srv, req, sb, method);
	else
		e2b_reply_connect_error(req, "unimplemented",
		    "no such method in process.Process");
}
