/*
 * e2b-bridge-files.c: holt-envd's file requests (read, write, list, stat,
 * remove, move) and watch, in E2B's /files and filesystem.Filesystem.
 * E2B's replies are proto3 JSON: an int64 (a size) may be a string, a
 * time a Timestamp, a mode Go's (with its type bits above 07777).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "e2b-bridge.h"

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
		m = e2b_bridge_fs_error(what, shown, code, *cause);
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

int
e2b_bridge_stat(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	char		*path = e2b_bridge_path(req, "path");
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

int
e2b_bridge_list(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	char		*path = e2b_bridge_path(req, "path");
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
		m = e2b_bridge_fs_error("path", shown, gone ? "not_found" : NULL, *cause);
		free(*cause);
		*cause = m;
	}
	return data;
}

int
e2b_bridge_read(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	char		*path = e2b_bridge_path(req, "path"), *data;
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
int
e2b_bridge_write(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	char		*path = e2b_bridge_path(req, "path"), *old = NULL, *dir;
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
		char *m = e2b_bridge_fs_error("path", shown, NULL, *cause);

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

int
e2b_bridge_remove(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	char		*path = e2b_bridge_path(req, "path");
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

int
e2b_bridge_move(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
    char **cause)
{
	char	*from = e2b_bridge_path(req, "from"), *to = e2b_bridge_path(req, "to");
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
		e2b_bridge_ok(ex->br, ex->id, NULL);
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
		j = e2b_bridge_reply(ex->id);
		cJSON_AddStringToObject(j, "event", "change");
		cJSON_AddStringToObject(j, "path", path);
		cJSON_AddStringToObject(j, "kind", kinds[i][1]);
		cJSON_AddBoolToObject(j, "dir", et != NULL &&
		    strcmp(et, "FILE_TYPE_DIRECTORY") == 0);
		e2b_bridge_send(ex->br, j);
		cJSON_Delete(j);
		free(path);
	}
	return 0;
}

void *
e2b_bridge_watch_thread(void *arg)
{
	struct bridge_exec	*ex = arg;
	struct e2b_bridge	*br = ex->br;
	cJSON			*q = cJSON_CreateObject();
	char			*cause = NULL, *path;
	size_t			 i;

	path = e2b_bridge_path(ex->req, "path");
	cJSON_DeleteItemFromObject(ex->req, "path");
	cJSON_AddStringToObject(ex->req, "path", path);
	cJSON_AddStringToObject(q, "path", path);
	cJSON_AddBoolToObject(q, "recursive", json_bool(ex->req, "recursive",
	    1));
	cJSON_AddBoolToObject(q, "includeEntry", 1);
	free(path);
	if (e2b_envd_stream(&br->sbx, "filesystem.Filesystem/WatchDir", NULL,
	    q, watch_msg, ex, &cause) == -1 && !ex->exited) {
		path = e2b_bridge_fs_error("path", json_str(ex->req, "path"),
		    strstr(cause, "not_found") != NULL ? "not_found" : NULL,
		    cause);
		e2b_bridge_error(br, ex->id, path);
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
	e2b_bridge_unref(br);
	return NULL;
}

/* Make it known to unwatch, or -1 when there are too many. */
int
e2b_bridge_watch_register(struct e2b_bridge *br, struct bridge_exec *ex)
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

int
e2b_bridge_unwatch(struct e2b_bridge *br, const cJSON *req, cJSON **reply,
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
