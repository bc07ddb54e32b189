/*
 * mcp-sandbox.c: an MCP server run inside the session's sandbox (where =
 * sandbox, the default), started through envd like any command: "exec"
 * with stdin kept open, messages in by "stdin" requests, out as the
 * command's stdout events. It runs as the sandbox's user, in /workspace,
 * with the sandbox's fixed environment and its env key, so it reaches no
 * more than the agent's own commands do. stop kills its process tree.
 */
#include <stdlib.h>
#include <string.h>

#include "envd-conn.h"
#include "mcp-int.h"
#include "sandbox.h"

#define BOX_ERR_TAIL	512		/* bytes of stderr kept */

struct mcp_box {
	struct envd_conn	*envd;
	uint64_t		 req;
	long			 pid;		/* 0 until started */
	struct buf		 in;		/* from it, a line at a time */
	struct buf		 early;		/* to it, before it started */
	struct buf		 err;		/* the tail of its stderr */
};

static int
box_ignore(void *arg, const cJSON *f)
{
	(void)arg;
	(void)f;
	return 1;
}

static void
box_stdin(struct mcp_box *b, const char *data, size_t len)
{
	cJSON	*req = cJSON_CreateObject();

	cJSON_AddStringToObject(req, "op", "stdin");
	cJSON_AddNumberToObject(req, "pid", (double)b->pid);
	envd_data_set(req, data, len);
	envd_conn_send(b->envd, req, box_ignore, NULL);
	cJSON_Delete(req);
}

static void
box_gone(struct mcp_server *s, const char *why)
{
	struct mcp_box	*b = s->tp;

	b->req = 0;	/* envd is done with it */
	mcp_server_died(s, why, &b->err);
}

static int
box_reply(void *arg, const cJSON *f)
{
	struct mcp_server	*s = arg;
	struct mcp_box		*b = s->tp;
	struct buf		 data = BUF_INIT;
	const char		*ev = json_str(f, "event"), *err;
	char			*why;
	int			 rc = 0;

	if ((err = json_str(f, "error")) != NULL) {
		why = xprintf("sandbox: %s", err);
		box_gone(s, why);
		free(why);
		return 1;
	}
	if (ev == NULL)
		ev = json_str(f, "type");
	if (ev == NULL)
		return 0;
	if (strcmp(ev, "started") == 0) {
		b->pid = (long)json_num(f, "pid", 0);
		if (b->early.len > 0)
			box_stdin(b, b->early.data, b->early.len);
		buf_reset(&b->early);
		return 0;
	}
	if (strcmp(ev, "stdout") == 0 || strcmp(ev, "stderr") == 0) {
		if (envd_data_get(f, &data) != 0)
			;
		else if (strcmp(ev, "stdout") == 0)
			rc = mcp_server_feed(s, &b->in, data.data != NULL ?
			    data.data : "", data.len);
		else {
			buf_add(&b->err, data.data, data.len);
			if (b->err.len > BOX_ERR_TAIL)
				buf_remove_front(&b->err, b->err.len -
				    BOX_ERR_TAIL);
		}
		buf_release(&data);
		/* Stopped from inside: envd was told to forget it. */
		return rc != 0 ? 1 : 0;
	}
	if (strcmp(ev, "exit") != 0)
		return 0;
	if (json_num(f, "signal", 0) > 0)
		why = xprintf("it was killed by signal %.0f", json_num(f,
		    "signal", 0));
	else
		why = xprintf("it exited with status %.0f", json_num(f, "code",
		    -1));
	b->pid = 0;
	box_gone(s, why);
	free(why);
	return 1;
}

static int
box_start(struct mcp_server *s, char **cause)
{
	struct mcp_box	*b;
	struct envd_conn *envd;
	cJSON		*req, *argv;
	size_t		 i;

	if (s->mh->envd == NULL ||
	    (envd = s->mh->envd(s->mh->arg, cause)) == NULL) {
		if (s->mh->envd == NULL)
			*cause = xstrdup("no sandbox");
		return -1;
	}
	b = xcalloc(1, sizeof *b);
	b->envd = envd;
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "exec");
	argv = cJSON_AddArrayToObject(req, "argv");
	for (i = 0; s->argv[i] != NULL; i++)
		cJSON_AddItemToArray(argv, cJSON_CreateString(s->argv[i]));
	cJSON_AddItemToObject(req, "env", cJSON_Duplicate(s->env, 1));
	cJSON_AddStringToObject(req, "cwd", "/workspace");
	cJSON_AddBoolToObject(req, "stdin", 1);
	s->tp = b;
	b->req = envd_conn_send(envd, req, box_reply, s);
	cJSON_Delete(req);
	return 0;
}

static int
box_send(struct mcp_server *s, const char *msg, size_t len, char **cause)
{
	struct mcp_box	*b = s->tp;
	struct buf	 line = BUF_INIT;

	if (!envd_conn_alive(b->envd)) {
		*cause = xstrdup("the sandbox connection is gone");
		return -1;
	}
	if (b->pid == 0) {
		buf_add(&b->early, msg, len);
		buf_addc(&b->early, '\n');
		return 0;
	}
	buf_add(&line, msg, len);
	buf_addc(&line, '\n');
	box_stdin(b, line.data, line.len);
	buf_release(&line);
	return 0;
}

static void
box_stop(struct mcp_server *s)
{
	struct mcp_box	*b = s->tp;
	cJSON		*req;

	s->tp = NULL;
	if (b == NULL)
		return;
	if (b->req != 0)
		envd_conn_forget(b->envd, b->req);
	if (b->pid > 0 && envd_conn_alive(b->envd)) {
		req = cJSON_CreateObject();
		cJSON_AddStringToObject(req, "op", "signal");
		cJSON_AddNumberToObject(req, "pid", (double)b->pid);
		cJSON_AddStringToObject(req, "signal", "KILL");
		envd_conn_send(b->envd, req, box_ignore, NULL);
		cJSON_Delete(req);
	}
	buf_release(&b->in);
	buf_release(&b->early);
	buf_release(&b->err);
	free(b);
}

const struct mcp_transport mcp_sandbox_transport = {
	"sandbox", box_start, box_send, box_stop
};
