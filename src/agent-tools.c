/*
 * agent-tools.c: the tools of DESIGN 6, run in the session's sandbox over
 * envd. Names and argument names are part of the contract with the model:
 *
 *	read_file{path, offset?, limit?}	write_file{path, content}
 *	edit_file{path, old_string, new_string, replace_all?}
 *	list_dir{path?}	search{pattern, path?, glob?}
 *	run_command{command, timeout_s?}	run_tests{filter?}
 *	start_service{name, command, port?}	service_logs{name, lines?}
 *
 * Paths are relative to /workspace and may not leave it (envd resolves them
 * inside the sandbox's own mount namespace, so a symlink cannot lead out).
 * What the model is given is capped: the head and the tail of the output
 * with a marker between.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "agent.h"
#include "agent-tools.h"
#include "mcp.h"
#include "sandbox.h"
#include "dynlib-git2.h"

#define READ_MAX	(256U * 1024)		/* bytes read_file fetches */
#define READ_LINES	2000			/* default line limit */

struct tool_exec {
	struct envd_conn	*envd;
	char			*name;
	cJSON			*args;
	struct tool_ctx		 ctx;
	tool_output_fn		 output;
	tool_done_fn		 done;
	void			*arg;

	uint64_t		 req;		/* envd request in flight */
	long			 pid;		/* of a running command */
	int			 cancelled;
	int			 finished;
	uint64_t		 t0;

	/* Output kept for the model: the head, and a ring of the tail. */
	struct buf		 head;
	struct buf		 tail;
	size_t			 total;
	int			 is_tests;
	/* edit_file: the new content waiting to be written */
	char			*path;
	struct mcp_call		*mcall;		/* a tool of an MCP server */
};

static const char *
frame_event(const cJSON *f)
{
	const char	*e = json_str(f, "event");

	return e != NULL ? e : json_str(f, "type");
}

cJSON *
tools_schema(void)
{
	static const char schema[] = "["
	"{\"name\":\"read_file\",\"description\":\"Read a text file of the "
	"workspace. Returns numbered lines. offset is the first line (1-based),"
	" limit the number of lines (default 2000).\",\"parameters\":{\"type\":"
	"\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"offset\":"
	"{\"type\":\"integer\"},\"limit\":{\"type\":\"integer\"}},\"required\":"
	"[\"path\"]}},"
	"{\"name\":\"write_file\",\"description\":\"Create or replace a file "
	"with the given content (parents are created).\",\"parameters\":{\"type"
	"\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"content"
	"\":{\"type\":\"string\"}},\"required\":[\"path\",\"content\"]}},"
	"{\"name\":\"edit_file\",\"description\":\"Replace old_string with "
	"new_string in a file. old_string must occur exactly once unless "
	"replace_all is true.\",\"parameters\":{\"type\":\"object\",\"properties"
	"\":{\"path\":{\"type\":\"string\"},\"old_string\":{\"type\":\"string\"},"
	"\"new_string\":{\"type\":\"string\"},\"replace_all\":{\"type\":\"boolean"
	"\"}},\"required\":[\"path\",\"old_string\",\"new_string\"]}},"
	"{\"name\":\"list_dir\",\"description\":\"List a directory of the "
	"workspace (default: its top).\",\"parameters\":{\"type\":\"object\","
	"\"properties\":{\"path\":{\"type\":\"string\"}}}},"
	"{\"name\":\"search\",\"description\":\"Search file contents with an "
	"extended regular expression; optional path and file-name glob.\","
	"\"parameters\":{\"type\":\"object\",\"properties\":{\"pattern\":{\"type"
	"\":\"string\"},\"path\":{\"type\":\"string\"},\"glob\":{\"type\":"
	"\"string\"}},\"required\":[\"pattern\"]}},"
	"{\"name\":\"run_command\",\"description\":\"Run a shell command in "
	"/workspace. It is checked against the command policy first.\","
	"\"parameters\":{\"type\":\"object\",\"properties\":{\"command\":{\"type"
	"\":\"string\"},\"timeout_s\":{\"type\":\"integer\"}},\"required\":"
	"[\"command\"]}},"
	"{\"name\":\"run_tests\",\"description\":\"Run the project's tests. "
	"Says TESTS PASSED or TESTS FAILED, the exit code and the end of the "
	"output.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"filter"
	"\":{\"type\":\"string\"}}}},"
	"{\"name\":\"start_service\",\"description\":\"Start a long-running "
	"command (a server) supervised in the sandbox.\",\"parameters\":{\"type"
	"\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"command\""
	":{\"type\":\"string\"},\"port\":{\"type\":\"integer\"}},\"required\":"
	"[\"name\",\"command\"]}},"
	"{\"name\":\"service_logs\",\"description\":\"The last lines of a "
	"service's log.\",\"parameters\":{\"type\":\"object\",\"properties\":{"
	"\"name\":{\"type\":\"string\"},\"lines\":{\"type\":\"integer\"}},"
	"\"required\":[\"name\"]}}"
	"]";

	return cJSON_Parse(schema);
}

const char *
tools_output_cap_marker(void)
{
	return "\n[... %zu bytes omitted ...]\n";
}

char *
tools_cap_output(const char *s, size_t len, size_t cap)
{
	struct buf	 b = BUF_INIT;
	size_t		 half;

	if (len <= cap || cap < 64) {
		buf_add(&b, s, len);
		return buf_detach(&b, NULL);
	}
	half = cap / 2;
	buf_add(&b, s, half);
	buf_addf(&b, "\n[... %zu bytes omitted ...]\n", len - 2 * half);
	buf_add(&b, s + len - half, half);
	return buf_detach(&b, NULL);
}

char *
tool_shell_quote(const char *s)
{
	struct buf	 b = BUF_INIT;

	buf_addc(&b, '\'');
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			buf_adds(&b, "'\\''");
		else
			buf_addc(&b, *s);
	}
	buf_addc(&b, '\'');
	return buf_detach(&b, NULL);
}

/*
 * A path from the model, made absolute under /workspace. Leaving the
 * workspace with ".." is refused here; symlinks are envd's business.
 */
static char *
tool_path(const char *p, char **cause)
{
	const char	*s;
	int		 depth = 0;
	size_t		 n;

	if (p == NULL || *p == '\0')
		p = ".";
	if (strncmp(p, "/workspace", 10) == 0 && (p[10] == '/' || p[10] == '\0'))
		p = p[10] == '\0' ? "." : p + 11;
	if (*p == '/') {
		*cause = xprintf("path '%s': paths are relative to /workspace",
		    p);
		return NULL;
	}
	for (s = p; *s != '\0'; s += n) {
		n = strcspn(s, "/");
		if (n == 2 && s[0] == '.' && s[1] == '.') {
			if (--depth < 0) {
				*cause = xprintf("path '%s': leaves /workspace",
				    p);
				return NULL;
			}
		} else if (n != 0 && !(n == 1 && s[0] == '.'))
			depth++;
		if (s[n] == '/')
			n++;
	}
	if (strcmp(p, ".") == 0)
		return xstrdup("/workspace");
	return xprintf("/workspace/%s", p);
}

static void
tool_finish(struct tool_exec *te, struct tool_result *r)
{
	if (te->finished)
		return;
	te->finished = 1;
	r->duration_ms = mono_ms() - te->t0;
	te->done(te->arg, r);
	free(r->result);
}

static void
tool_fail(struct tool_exec *te, const char *fmt, ...) printflike(2, 3);

static void
tool_fail(struct tool_exec *te, const char *fmt, ...)
{
	struct tool_result	 r;
	va_list			 ap;

	memset(&r, 0, sizeof r);
	va_start(ap, fmt);
	xvasprintf(&r.result, fmt, ap);
	va_end(ap);
	r.failed = 1;
	tool_finish(te, &r);
}

static void
tool_ok(struct tool_exec *te, char *text)
{
	struct tool_result	 r;

	memset(&r, 0, sizeof r);
	r.result = text;
	tool_finish(te, &r);
}

/* Commands: run_command, run_tests, search. */

static void
tool_keep(struct tool_exec *te, const char *data, size_t len)
{
	size_t	 half = te->ctx.output_cap / 2;

	te->total += len;
	if (te->head.len < half) {
		size_t n = half - te->head.len < len ? half - te->head.len : len;
		buf_add(&te->head, data, n);
		data += n;
		len -= n;
	}
	if (len == 0)
		return;
	buf_add(&te->tail, data, len);
	if (te->tail.len > half * 2)
		buf_remove_front(&te->tail, te->tail.len - half);
}

static char *
tool_output_text(struct tool_exec *te)
{
	struct buf	 b = BUF_INIT;
	size_t		 half = te->ctx.output_cap / 2, keep;

	buf_add(&b, te->head.data != NULL ? te->head.data : "", te->head.len);
	if (te->total > te->head.len) {
		keep = te->tail.len < half ? te->tail.len : half;
		if (te->total - te->head.len > keep)
			buf_addf(&b, "\n[... %zu bytes omitted ...]\n",
			    te->total - te->head.len - keep);
		buf_add(&b, te->tail.data + te->tail.len - keep, keep);
	}
	return buf_detach(&b, NULL);
}

/*
 * grep names what it found in a directory "./NAME": the model gets the
 * path it would give read_file, /workspace/DIR/NAME.
 */
static char *
search_paths(const char *out, const char *dir)
{
	struct buf	 b = BUF_INIT;
	const char	*p, *nl;

	for (p = out; *p != '\0'; p = nl) {
		nl = strchr(p, '\n');
		nl = nl != NULL ? nl + 1 : p + strlen(p);
		if (strncmp(p, "./", 2) == 0) {
			buf_adds(&b, dir);
			p++;
		}
		buf_add(&b, p, (size_t)(nl - p));
	}
	return buf_detach(&b, NULL);
}

static int
tool_exec_reply(void *arg, const cJSON *f)
{
	struct tool_exec	*te = arg;
	struct tool_result	 r;
	struct buf		 data = BUF_INIT;
	const char		*ev = frame_event(f), *err;
	char			*out;

	if ((err = json_str(f, "error")) != NULL) {
		te->req = 0;
		memset(&r, 0, sizeof r);
		r.result = xprintf("%s: %s", te->name, err);
		r.failed = 1;
		/* The command may run on there: the caller may re-join it. */
		r.lost = te->pid > 0 && json_bool(f, "lost", 0);
		tool_finish(te, &r);
		return 1;
	}
	if (ev == NULL)
		return 0;
	if (strcmp(ev, "started") == 0 || strcmp(ev, "attached") == 0) {
		te->pid = (long)json_num(f, "pid", 0);
		if (strcmp(ev, "started") == 0 && te->ctx.started != NULL)
			te->ctx.started(te->arg, te->pid);
		if (te->cancelled)
			tool_exec_cancel(te);
		return 0;
	}
	if (strcmp(ev, "stdout") == 0 || strcmp(ev, "stderr") == 0 ||
	    strcmp(ev, "pty") == 0) {
		if (envd_data_get(f, &data) == 0 && data.len > 0) {
			tool_keep(te, data.data, data.len);
			te->output(te->arg, ev, data.data, data.len);
		}
		buf_release(&data);
		return 0;
	}
	if (strcmp(ev, "exit") != 0)
		return 0;
	te->req = 0;
	memset(&r, 0, sizeof r);
	r.has_exit = 1;
	r.exit_code = (int)json_num(f, "code", -1);
	r.timed_out = json_bool(f, "timed_out", 0);
	r.interrupted = te->cancelled;
	if (r.exit_code == -1 && json_num(f, "signal", 0) > 0)
		r.exit_code = 128 + (int)json_num(f, "signal", 0);
	out = tool_output_text(te);
	if (te->is_tests) {
		char *tail = tools_cap_output(out, strlen(out), te->ctx.output_cap);
		r.result = xprintf("%s (exit %d%s)\n%s", r.exit_code == 0 ?
		    "TESTS PASSED" : "TESTS FAILED", r.exit_code,
		    r.timed_out ? ", timed out" : "", tail);
		free(tail);
	} else if (strcmp(te->name, "search") == 0) {
		if (r.exit_code == 1 && te->total == 0)
			r.result = xstrdup("no matches");
		else if (r.exit_code > 1)
			r.result = xprintf("search failed (exit %d)\n%s",
			    r.exit_code, out);
		else
			r.result = search_paths(out, te->path);
		r.has_exit = 0;
	} else {
		r.result = xprintf("exit code %d%s%s\n%s", r.exit_code,
		    r.timed_out ? " (timed out: the command and its children "
		    "were killed)" : "", r.interrupted ? " (interrupted)" : "",
		    out);
	}
	free(out);
	tool_finish(te, &r);
	return 1;
}

static void
tool_run(struct tool_exec *te, cJSON *req)
{
	te->req = envd_conn_send(te->envd, req, tool_exec_reply, te);
	cJSON_Delete(req);
}

static cJSON *
exec_request(const struct tool_ctx *ctx, const char *cmd, long long timeout_s)
{
	cJSON	*req = cJSON_CreateObject();

	if (ctx->rejoin_pid > 0) {
		cJSON_AddStringToObject(req, "op", "attach");
		cJSON_AddNumberToObject(req, "pid", (double)ctx->rejoin_pid);
		cJSON_AddNumberToObject(req, "offset", 0);
		return req;
	}

	cJSON_AddStringToObject(req, "op", "exec");
	cJSON_AddStringToObject(req, "cmd", cmd);
	cJSON_AddStringToObject(req, "cwd", "/workspace");
	if (timeout_s > 0)
		cJSON_AddNumberToObject(req, "timeout_ms",
		    (double)timeout_s * 1000);
	return req;
}

static void
tool_start_command(struct tool_exec *te)
{
	const char	*cmd = te->ctx.command != NULL ? te->ctx.command :
			    json_str(te->args, "command");
	long long	 t = (long long)json_num(te->args, "timeout_s",
			    (double)te->ctx.timeout_s);

	if (cmd == NULL || *cmd == '\0') {
		tool_fail(te, "run_command: 'command' is required");
		return;
	}
	if (t <= 0 || t > te->ctx.timeout_s * 4)
		t = te->ctx.timeout_s;
	tool_run(te, exec_request(&te->ctx, cmd, t));
}

static void
tool_start_tests(struct tool_exec *te)
{
	const char	*filter = json_str(te->args, "filter");
	char		*cmd, *q;

	if (te->ctx.test_command == NULL || *te->ctx.test_command == '\0') {
		tool_fail(te, "run_tests: no test command is configured for "
		    "this session (test_command); use run_command");
		return;
	}
	te->is_tests = 1;
	if (te->ctx.command != NULL)
		cmd = xstrdup(te->ctx.command);
	else if (filter != NULL && *filter != '\0') {
		q = tool_shell_quote(filter);
		cmd = xprintf("%s %s", te->ctx.test_command, q);
		free(q);
	} else
		cmd = xstrdup(te->ctx.test_command);
	tool_run(te, exec_request(&te->ctx, cmd, te->ctx.timeout_s));
	free(cmd);
}

/*
 * grep, on the file or directory envd resolved as read_file resolves a
 * path ("within": no link leads out of /workspace, a FIFO or a device is
 * refused), handed over open: a directory as the working directory, a file
 * as stdin. grep -r follows no link below it and skips FIFOs and devices
 * (-D skip). The pattern and the glob are arguments, never code.
 */
static const char search_script[] =
    "if test -d /proc/self/fd/0; then "
    "exec grep -rnIE -D skip --exclude-dir=.git --exclude-dir=node_modules "
    "${2:+\"--include=$2\"} -e \"$1\" -- .; "
    "else exec grep -nIEH -D skip --label=\"$3\" -e \"$1\" -; fi";

static void
tool_start_search(struct tool_exec *te)
{
	const char	*pattern = json_str(te->args, "pattern");
	const char	*glob = json_str(te->args, "glob");
	char		*path, *cause = NULL;
	cJSON		*req, *argv;

	if (pattern == NULL || *pattern == '\0') {
		tool_fail(te, "search: 'pattern' is required");
		return;
	}
	if ((path = tool_path(json_str(te->args, "path"), &cause)) == NULL) {
		tool_fail(te, "search: %s", cause);
		free(cause);
		return;
	}
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "exec");
	argv = cJSON_AddArrayToObject(req, "argv");
	cJSON_AddItemToArray(argv, cJSON_CreateString("/bin/sh"));
	cJSON_AddItemToArray(argv, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(argv, cJSON_CreateString(search_script));
	cJSON_AddItemToArray(argv, cJSON_CreateString("search"));
	cJSON_AddItemToArray(argv, cJSON_CreateString(pattern));
	cJSON_AddItemToArray(argv, cJSON_CreateString(glob != NULL ? glob :
	    ""));
	cJSON_AddItemToArray(argv, cJSON_CreateString(path));
	cJSON_AddStringToObject(req, "within", path);
	cJSON_AddNumberToObject(req, "timeout_ms", 60000);
	te->path = path;
	tool_run(te, req);
}

/* Files: read_file, write_file, edit_file, list_dir. */

static int
is_binary(const char *p, size_t n)
{
	return memchr(p, '\0', n < 8192 ? n : 8192) != NULL;
}

static int
tool_read_reply(void *arg, const cJSON *f)
{
	struct tool_exec	*te = arg;
	struct buf		 data = BUF_INIT, out = BUF_INIT;
	const char		*err, *p, *end, *nl;
	long			 offset, limit, line = 1, shown = 0;
	double			 size;

	te->req = 0;
	if ((err = json_str(f, "error")) != NULL) {
		tool_fail(te, "read_file: %s", err);
		return 1;
	}
	if (envd_data_get(f, &data) != 0) {
		tool_fail(te, "read_file: bad data from the sandbox");
		return 1;
	}
	size = json_num(f, "size", (double)data.len);
	if (is_binary(buf_str(&data), data.len)) {
		tool_ok(te, xprintf("%s: binary file, %.0f bytes; not shown",
		    te->path, size));
		buf_release(&data);
		return 1;
	}
	offset = (long)json_num(te->args, "offset", 1);
	limit = (long)json_num(te->args, "limit", READ_LINES);
	if (offset < 1)
		offset = 1;
	if (limit < 1 || limit > READ_LINES * 5)
		limit = READ_LINES;
	p = buf_str(&data);
	end = p + data.len;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		if (line >= offset && shown < limit) {
			buf_addf(&out, "%6ld\t", line);
			buf_add(&out, p, (size_t)(nl - p));
			buf_addc(&out, '\n');
			shown++;
		}
		line++;
		p = nl + 1;
		if (shown >= limit)
			break;
	}
	if (data.len == 0)
		buf_adds(&out, "(empty file)\n");
	else if (p < end || size > (double)data.len)
		buf_addf(&out, "[... file continues: %.0f bytes in all; use "
		    "offset and limit to read more ...]\n", size);
	buf_release(&data);
	tool_ok(te, buf_detach(&out, NULL));
	return 1;
}

static int
tool_write_reply(void *arg, const cJSON *f)
{
	struct tool_exec	*te = arg;
	const char		*err;

	te->req = 0;
	if ((err = json_str(f, "error")) != NULL) {
		tool_fail(te, "%s: %s", te->name, err);
		return 1;
	}
	tool_ok(te, xprintf("%s: written", te->path + strlen("/workspace/")));
	return 1;
}

static void
tool_send_write(struct tool_exec *te, const char *content, size_t len)
{
	cJSON	*req = cJSON_CreateObject();

	cJSON_AddStringToObject(req, "op", "write");
	cJSON_AddStringToObject(req, "path", te->path);
	envd_data_set(req, content, len);
	te->req = envd_conn_send(te->envd, req, tool_write_reply, te);
	cJSON_Delete(req);
}

/*
 * edit_file: the replacement, or NULL with *cause when old_string is missing
 * or not unique (and replace_all is not set): then nothing changes.
 */
static char *
tool_apply_edit(const cJSON *args, const char *old, size_t oldlen,
    size_t *newlen, char **cause)
{
	const char	*from = json_str(args, "old_string");
	const char	*to = json_str(args, "new_string");
	int		 all = json_bool(args, "replace_all", 0);
	struct buf	 b = BUF_INIT;
	const char	*p, *hit, *end = old + oldlen;
	size_t		 flen, count = 0;

	if (from == NULL || to == NULL) {
		*cause = xstrdup("'old_string' and 'new_string' are required");
		return NULL;
	}
	flen = strlen(from);
	if (flen == 0) {
		*cause = xstrdup("'old_string' is empty");
		return NULL;
	}
	for (p = old; (hit = memmem(p, (size_t)(end - p), from, flen)) != NULL;
	    p = hit + flen)
		count++;
	if (count == 0) {
		*cause = xstrdup("'old_string' was not found; nothing changed");
		return NULL;
	}
	if (count > 1 && !all) {
		*cause = xprintf("'old_string' occurs %zu times; give more "
		    "context to make it unique, or set replace_all; nothing "
		    "changed", count);
		return NULL;
	}
	for (p = old; (hit = memmem(p, (size_t)(end - p), from, flen)) != NULL;
	    p = hit + flen) {
		buf_add(&b, p, (size_t)(hit - p));
		buf_adds(&b, to);
	}
	buf_add(&b, p, (size_t)(end - p));
	return buf_detach(&b, newlen);
}

static int
tool_edit_reply(void *arg, const cJSON *f)
{
	struct tool_exec	*te = arg;
	struct buf		 data = BUF_INIT;
	const char		*err;
	char			*new, *cause = NULL;
	size_t			 newlen;

	te->req = 0;
	if ((err = json_str(f, "error")) != NULL) {
		tool_fail(te, "edit_file: %s", err);
		return 1;
	}
	if (envd_data_get(f, &data) != 0) {
		tool_fail(te, "edit_file: bad data from the sandbox");
		return 1;
	}
	new = tool_apply_edit(te->args, buf_str(&data), data.len, &newlen,
	    &cause);
	buf_release(&data);
	if (new == NULL) {
		tool_fail(te, "edit_file %s: %s", te->path + 11, cause);
		free(cause);
		return 1;
	}
	tool_send_write(te, new, newlen);
	free(new);
	return 1;
}

static cJSON *
read_request(const char *path)
{
	cJSON	*req = cJSON_CreateObject();

	cJSON_AddStringToObject(req, "op", "read");
	cJSON_AddStringToObject(req, "path", path);
	cJSON_AddNumberToObject(req, "length", READ_MAX);
	return req;
}

static int
tool_list_reply(void *arg, const cJSON *f)
{
	struct tool_exec	*te = arg;
	struct buf		 out = BUF_INIT;
	const cJSON		*entries, *e;
	const char		*err, *name, *type;
	size_t			 n = 0;

	te->req = 0;
	if ((err = json_str(f, "error")) != NULL) {
		tool_fail(te, "list_dir: %s", err);
		return 1;
	}
	entries = cJSON_GetObjectItemCaseSensitive(f, "entries");
	cJSON_ArrayForEach(e, entries) {
		name = json_str(e, "path");
		if (name == NULL)
			name = json_str(e, "name");
		type = json_str(e, "type");
		if (name == NULL)
			continue;
		if (n++ >= 1000) {
			buf_adds(&out, "[... more entries not shown ...]\n");
			break;
		}
		if (type != NULL && strcmp(type, "dir") == 0)
			buf_addf(&out, "%s/\n", name);
		else if (type != NULL && strcmp(type, "symlink") == 0)
			buf_addf(&out, "%s@\n", name);
		else if (type != NULL && strcmp(type, "other") == 0)
			buf_addf(&out, "%s  (not a regular file)\n", name);
		else
			buf_addf(&out, "%s  (%.0f bytes)\n", name,
			    json_num(e, "size", 0));
	}
	if (n == 0)
		buf_adds(&out, "(empty directory)\n");
	tool_ok(te, buf_detach(&out, NULL));
	return 1;
}

/* Services: start_service, service_logs. */

static int
tool_service_reply(void *arg, const cJSON *f)
{
	struct tool_exec	*te = arg;
	struct buf		 data = BUF_INIT;
	const char		*err;

	te->req = 0;
	if ((err = json_str(f, "error")) != NULL) {
		tool_fail(te, "%s: %s", te->name, err);
		return 1;
	}
	if (strcmp(te->name, "service_logs") == 0) {
		if (envd_data_get(f, &data) != 0 || data.len == 0) {
			const char *s = json_str(f, "logs");
			buf_adds(&data, s != NULL ? s : "(no output yet)");
		}
		tool_ok(te, tools_cap_output(data.data, data.len,
		    te->ctx.output_cap));
		buf_release(&data);
		return 1;
	}
	tool_ok(te, xprintf("service '%s' started%s", json_str(te->args,
	    "name"), json_num(te->args, "port", 0) > 0 ? "; it listens on "
	    "the sandbox's loopback" : ""));
	return 1;
}

static void
tool_start_service(struct tool_exec *te, int logs)
{
	const char	*name = json_str(te->args, "name");
	const char	*cmd = te->ctx.command != NULL ? te->ctx.command :
			    json_str(te->args, "command");
	cJSON		*req;

	if (name == NULL || *name == '\0' || (!logs && (cmd == NULL ||
	    *cmd == '\0'))) {
		tool_fail(te, "%s: 'name'%s required", te->name,
		    logs ? " is" : " and 'command' are");
		return;
	}
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "service");
	cJSON_AddStringToObject(req, "action", logs ? "logs" : "create");
	cJSON_AddStringToObject(req, "name", name);
	if (logs)
		cJSON_AddNumberToObject(req, "lines",
		    json_num(te->args, "lines", 100));
	else {
		cJSON_AddStringToObject(req, "cmd", cmd);
		if (json_num(te->args, "port", 0) > 0)
			cJSON_AddNumberToObject(req, "port",
			    json_num(te->args, "port", 0));
	}
	te->req = envd_conn_send(te->envd, req, tool_service_reply, te);
	cJSON_Delete(req);
}

/* MCP tools: the call's progress is its output, its text the result. */
static void
tool_mcp_progress(void *arg, const char *text)
{
	struct tool_exec	*te = arg;

	te->output(te->arg, "stdout", text, strlen(text));
}

static void
tool_mcp_done(void *arg, char *text, int error, int interrupted)
{
	struct tool_exec	*te = arg;
	struct tool_result	 r;

	te->mcall = NULL;
	memset(&r, 0, sizeof r);
	r.result = xstrdup(text != NULL ? text : "");
	r.failed = error && !interrupted;
	r.interrupted = interrupted;
	tool_finish(te, &r);
}

struct tool_exec *
tool_exec_start(struct envd_conn *envd, const char *name, const cJSON *args,
    const struct tool_ctx *ctx, tool_output_fn output, tool_done_fn done,
    void *arg)
{
	struct tool_exec	*te;
	char			*cause = NULL;
	cJSON			*req;
	const char		*content;

	te = xcalloc(1, sizeof *te);
	te->envd = envd;
	te->name = xstrdup(name);
	te->args = args != NULL ? cJSON_Duplicate(args, 1) : cJSON_CreateObject();
	te->ctx = *ctx;
	if (te->ctx.output_cap < 1024)
		te->ctx.output_cap = 1024;
	if (te->ctx.timeout_s <= 0)
		te->ctx.timeout_s = 600;
	te->output = output;
	te->done = done;
	te->arg = arg;
	te->t0 = mono_ms();

	if (mcp_is_tool(name) && ctx->mcp != NULL)
		te->mcall = mcp_call(ctx->mcp, name, te->args,
		    te->ctx.output_cap, tool_mcp_progress, tool_mcp_done, te);
	else if (strcmp(name, "run_command") == 0)
		tool_start_command(te);
	else if (strcmp(name, "run_tests") == 0)
		tool_start_tests(te);
	else if (strcmp(name, "search") == 0)
		tool_start_search(te);
	else if (strcmp(name, "start_service") == 0)
		tool_start_service(te, 0);
	else if (strcmp(name, "service_logs") == 0)
		tool_start_service(te, 1);
	else if (strcmp(name, "read_file") == 0 || strcmp(name, "write_file") == 0 ||
	    strcmp(name, "edit_file") == 0 || strcmp(name, "list_dir") == 0) {
		te->path = tool_path(json_str(te->args, "path"), &cause);
		if (te->path == NULL) {
			tool_fail(te, "%s: %s", name, cause);
			free(cause);
		} else if (strcmp(name, "list_dir") == 0) {
			req = cJSON_CreateObject();
			cJSON_AddStringToObject(req, "op", "list");
			cJSON_AddStringToObject(req, "path", te->path);
			cJSON_AddNumberToObject(req, "depth", 1);
			te->req = envd_conn_send(envd, req, tool_list_reply, te);
			cJSON_Delete(req);
		} else if (strcmp(te->path, "/workspace") == 0)
			tool_fail(te, "%s: 'path' names a file", name);
		else if (strcmp(name, "write_file") == 0) {
			content = json_str(te->args, "content");
			if (content == NULL)
				tool_fail(te, "write_file: 'content' is required");
			else
				tool_send_write(te, content, strlen(content));
		} else {
			req = read_request(te->path);
			te->req = envd_conn_send(envd, req, name[0] == 'r' ?
			    tool_read_reply : tool_edit_reply, te);
			cJSON_Delete(req);
		}
	} else
		tool_fail(te, "no tool named '%s'; the tools are read_file, "
		    "write_file, edit_file, list_dir, search, run_command, "
		    "run_tests, start_service, service_logs", name);
	return te;
}

void
tool_exec_cancel(struct tool_exec *te)
{
	struct tool_result	 r;
	cJSON			*req;

	if (te->finished)
		return;
	te->cancelled = 1;
	if (te->mcall != NULL) {
		mcp_call_cancel(te->mcall);	/* done follows */
		return;
	}
	if (te->pid > 0) {
		/* Kill it; its exit frame finishes the tool as interrupted. */
		req = cJSON_CreateObject();
		cJSON_AddStringToObject(req, "op", "signal");
		cJSON_AddNumberToObject(req, "pid", (double)te->pid);
		cJSON_AddStringToObject(req, "signal", "KILL");
		envd_conn_send(te->envd, req, NULL, NULL);
		cJSON_Delete(req);
		return;
	}
	if (te->req != 0 && strcmp(te->name, "run_command") != 0 &&
	    strcmp(te->name, "run_tests") != 0) {
		envd_conn_forget(te->envd, te->req);
		te->req = 0;
		memset(&r, 0, sizeof r);
		r.interrupted = 1;
		r.result = xstrdup("interrupted");
		tool_finish(te, &r);
	}
	/* A command not started yet: killed when "started" arrives. */
}

void
tool_exec_free(struct tool_exec *te)
{
	if (te == NULL)
		return;
	if (te->req != 0 && envd_conn_alive(te->envd))
		envd_conn_forget(te->envd, te->req);
	if (te->mcall != NULL)
		mcp_call_forget(te->mcall);
	free(te->name);
	cJSON_Delete(te->args);
	buf_release(&te->head);
	buf_release(&te->tail);
	free(te->path);
	free(te);
}

enum tool_subject
tool_subject(const char *name, const cJSON *args, const struct tool_ctx *ctx,
    char **subject, char **cause)
{
	const char	*s, *filter;
	char		*path, *q;

	*subject = NULL;
	if (mcp_is_tool(name)) {
		*subject = xstrdup(name);
		return TOOL_MCP;
	}
	if (strcmp(name, "run_command") == 0 || strcmp(name, "start_service") == 0) {
		s = json_str(args, "command");
		*subject = xstrdup(s != NULL ? s : "");
		return TOOL_COMMAND;
	}
	if (strcmp(name, "run_tests") == 0) {
		filter = json_str(args, "filter");
		if (ctx->test_command == NULL || *ctx->test_command == '\0')
			return TOOL_READ;	/* fails cleanly when run */
		if (filter != NULL && *filter != '\0') {
			q = tool_shell_quote(filter);
			*subject = xprintf("%s %s", ctx->test_command, q);
			free(q);
		} else
			*subject = xstrdup(ctx->test_command);
		return TOOL_COMMAND;
	}
	if (strcmp(name, "write_file") == 0 || strcmp(name, "edit_file") == 0) {
		if ((path = tool_path(json_str(args, "path"), cause)) == NULL)
			return TOOL_UNKNOWN;
		*subject = xstrdup(strcmp(path, "/workspace") == 0 ? "." :
		    path + strlen("/workspace/"));
		free(path);
		return TOOL_WRITE;
	}
	return TOOL_READ;
}

/* Diffs of proposed writes, for manual mode (libgit2 does the diffing). */

static int
diff_line_cb(const git_diff_delta *d, const git_diff_hunk *h,
    const git_diff_line *l, void *arg)
{
	struct buf	*b = arg;

	if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION)
		buf_addc(b, l->origin);
	buf_add(b, l->content, l->content_len);
	return 0;
}

char *
tool_diff_text(const char *path, const char *old, size_t oldlen,
    const char *new, size_t newlen)
{
	struct buf	 b = BUF_INIT;
	git_diff_options opts = GIT_DIFF_OPTIONS_INIT;

	git_libgit2_init();
	buf_addf(&b, "--- a/%s\n+++ b/%s\n", path, path);
	if (git_diff_buffers(old, oldlen, path, new, newlen, path, &opts, NULL,
	    NULL, NULL, diff_line_cb, &b) != 0)
		buf_adds(&b, "(no diff available)\n");
	return buf_detach(&b, NULL);
}

struct preview {
	char		*name;
	cJSON		*args;
	char		*path;
	tool_preview_fn	 fn;
	void		*arg;
};

static int
preview_reply(void *arg, const cJSON *f)
{
	struct preview	*pv = arg;
	struct buf	 data = BUF_INIT;
	const char	*err = json_str(f, "error"), *content;
	char		*new = NULL, *diff, *cause = NULL;
	size_t		 newlen = 0;
	const char	*rel = pv->path + strlen("/workspace/");

	/* A missing file is an empty one for write_file. */
	if (err == NULL)
		envd_data_get(f, &data);
	if (strcmp(pv->name, "write_file") == 0) {
		content = json_str(pv->args, "content");
		diff = tool_diff_text(rel, buf_str(&data), data.len,
		    content != NULL ? content : "", content != NULL ?
		    strlen(content) : 0);
		pv->fn(pv->arg, diff, NULL);
		free(diff);
	} else if (err != NULL) {
		cause = xprintf("edit_file %s: %s", rel, err);
		pv->fn(pv->arg, NULL, cause);
		free(cause);
	} else if ((new = tool_apply_edit(pv->args, buf_str(&data), data.len,
	    &newlen, &cause)) == NULL) {
		char *msg = xprintf("edit_file %s: %s", rel, cause);
		pv->fn(pv->arg, NULL, msg);
		free(msg);
		free(cause);
	} else {
		diff = tool_diff_text(rel, buf_str(&data), data.len, new, newlen);
		pv->fn(pv->arg, diff, NULL);
		free(diff);
		free(new);
	}
	buf_release(&data);
	free(pv->name);
	cJSON_Delete(pv->args);
	free(pv->path);
	free(pv);
	return 1;
}

void
tool_preview_write(struct envd_conn *envd, const char *name, const cJSON *args,
    tool_preview_fn fn, void *arg)
{
	struct preview	*pv;
	char		*cause = NULL, *path;
	cJSON		*req;

	if ((path = tool_path(json_str(args, "path"), &cause)) == NULL) {
		fn(arg, NULL, cause);
		free(cause);
		return;
	}
	pv = xcalloc(1, sizeof *pv);
	pv->name = xstrdup(name);
	pv->args = cJSON_Duplicate(args, 1);
	pv->path = path;
	pv->fn = fn;
	pv->arg = arg;
	req = read_request(path);
	envd_conn_send(envd, req, preview_reply, pv);
	cJSON_Delete(req);
}
