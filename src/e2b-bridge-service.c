/*
 * e2b-bridge-service.c: holt-envd's service requests in an E2B sandbox.
 */
#include <stdlib.h>
#include <string.h>

#include "e2b-bridge.h"

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
	cJSON	*q = e2b_bridge_pid((long)json_num(p, "pid", 0)), *r;

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

int
e2b_bridge_service(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
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
