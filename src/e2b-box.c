/*
 * e2b-box.c: what E2B knows of a sandbox and holt does not (template,
 * metadata, envs, the envd access token, when its timeout runs out), kept
 * beside meta.json in data/sandboxes/<id>/e2b.json, written atomically. A
 * sandbox without that file was not made through E2B's API and is not
 * reachable through it. Also the API key that holt e2b key prints.
 */
#include <sys/random.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2b.h"

char *
e2b_random_hex(size_t bytes)
{
	unsigned char	 r[64];
	char		*s;
	size_t		 i;

	if (bytes > sizeof r)
		BUG();
	if (getrandom(r, bytes, 0) != (ssize_t)bytes)
		fatal("getrandom");
	s = xmalloc(2 * bytes + 1);
	for (i = 0; i < bytes; i++)
		snprintf(s + 2 * i, 3, "%02x", r[i]);
	return s;
}

static char *
box_path(const char *id)
{
	char	*dir, *path;

	dir = paths_join(paths_sandboxes_dir(), id);
	path = paths_join(dir, "e2b.json");
	free(dir);
	return path;
}

static cJSON *
string_object(const cJSON *from)
{
	const cJSON	*it;
	cJSON		*o = cJSON_CreateObject();

	if (!cJSON_IsObject(from))
		return o;
	cJSON_ArrayForEach(it, from) {
		if (cJSON_IsString(it))
			cJSON_AddStringToObject(o, it->string, it->valuestring);
	}
	return o;
}

struct e2b_box *
e2b_box_load(const char *id)
{
	struct e2b_box	*b;
	char		*path, *cause = NULL;
	cJSON		*j;
	const char	*tok;

	path = box_path(id);
	if (access(path, F_OK) != 0) {
		free(path);
		return NULL;
	}
	if ((j = json_load_file(path, &cause)) == NULL) {
		log_warnx("%s", cause);
		free(cause);
		free(path);
		return NULL;
	}
	free(path);
	if ((tok = json_str(j, "token")) == NULL) {
		log_warnx("sandbox '%s': e2b.json has no token", id);
		cJSON_Delete(j);
		return NULL;
	}
	b = xcalloc(1, sizeof *b);
	b->id = xstrdup(id);
	b->token = xstrdup(tok);
	b->template = xstrdup(json_str(j, "template") != NULL ?
	    json_str(j, "template") : "base");
	b->started = xstrdup(json_str(j, "started") != NULL ?
	    json_str(j, "started") : "");
	b->metadata = string_object(cJSON_GetObjectItem(j, "metadata"));
	b->envs = string_object(cJSON_GetObjectItem(j, "envs"));
	b->end_ms = (uint64_t)json_num(j, "end_ms", 0);
	b->paused_left_ms = (uint64_t)json_num(j, "paused_left_ms", 0);
	if (json_str(j, "policy") != NULL)
		b->policy = xstrdup(json_str(j, "policy"));
	if (json_str(j, "mode") != NULL)
		b->mode = xstrdup(json_str(j, "mode"));
	if (json_str(j, "ask") != NULL)
		b->ask = xstrdup(json_str(j, "ask"));
	if (json_str(j, "rules") != NULL)
		b->rules = xstrdup(json_str(j, "rules"));
	cJSON_Delete(j);
	return b;
}

int
e2b_box_save(struct e2b_box *b, char **cause)
{
	cJSON	*j;
	char	*path;
	int	 rc;

	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "template", b->template);
	cJSON_AddStringToObject(j, "token", b->token);
	cJSON_AddStringToObject(j, "started", b->started);
	cJSON_AddItemToObject(j, "metadata", cJSON_Duplicate(b->metadata, 1));
	cJSON_AddItemToObject(j, "envs", cJSON_Duplicate(b->envs, 1));
	cJSON_AddNumberToObject(j, "end_ms", (double)b->end_ms);
	cJSON_AddNumberToObject(j, "paused_left_ms", (double)b->paused_left_ms);
	/* For its proxy (holt-proxy reads them): the network's rules. */
	if (b->policy != NULL)
		cJSON_AddStringToObject(j, "policy", b->policy);
	if (b->mode != NULL)
		cJSON_AddStringToObject(j, "mode", b->mode);
	if (b->ask != NULL)
		cJSON_AddStringToObject(j, "ask", b->ask);
	if (b->rules != NULL)
		cJSON_AddStringToObject(j, "rules", b->rules);
	path = box_path(b->id);
	rc = json_save_file(path, j, cause);
	free(path);
	cJSON_Delete(j);
	return rc;
}

void
e2b_box_free(struct e2b_box *b)
{
	if (b == NULL)
		return;
	free(b->id);
	free(b->template);
	free(b->token);
	free(b->started);
	free(b->policy);
	free(b->mode);
	free(b->ask);
	free(b->rules);
	cJSON_Delete(b->metadata);
	cJSON_Delete(b->envs);
	free(b);
}

char *
e2b_key_get(char **cause)
{
	char	*path, *key, *nl;
	size_t	 len;

	path = paths_join(paths_config_dir(), "e2b-key");
	if ((key = file_read(path, &len, 4096)) != NULL) {
		if ((nl = strchr(key, '\n')) != NULL)
			*nl = '\0';
		if (strlen(key) >= 16) {
			free(path);
			return key;
		}
		free(key);
		*cause = xprintf("%s: not a key (remove it to make a new one)",
		    path);
		free(path);
		return NULL;
	}
	if (errno != ENOENT) {
		*cause = xprintf("%s: %s", path, strerror(errno));
		free(path);
		return NULL;
	}
	if (file_mkdir_p(paths_config_dir(), 0700) != 0) {
		*cause = xprintf("%s: %s", paths_config_dir(), strerror(errno));
		free(path);
		return NULL;
	}
	nl = e2b_random_hex(20);
	key = xprintf("e2b_%s", nl);
	free(nl);
	nl = xprintf("%s\n", key);
	if (file_write_atomic(path, nl, strlen(nl), 0600) != 0) {
		*cause = xprintf("%s: %s", path, strerror(errno));
		free(nl);
		free(key);
		free(path);
		return NULL;
	}
	free(nl);
	free(path);
	return key;
}
