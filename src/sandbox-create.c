/*
 * sandbox-create.c: making a new sandbox (id, directories, meta.json, then
 * the first start) and deleting one. Apart from sandbox.c because it
 * starts processes (sandbox-local.c), which the light front end never
 * links.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "sandbox.h"
#include "sandbox-local.h"
#include "sandbox-provider.h"

static void
sandbox_new_id(char *id, size_t len)
{
	unsigned char	 r[6];
	size_t		 i;

	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		fatal("getrandom");
	xstrlcpy(id, "sbx-", len);
	for (i = 0; i < sizeof r; i++)
		snprintf(id + 4 + 2 * i, len - 4 - 2 * i, "%02x", r[i]);
}

void
sandbox_opts_config(struct sandbox_opts *o)
{
	memset(o, 0, sizeof *o);
	if (sandbox_net_parse(config_get("net"), &o->net) != 0)
		o->net = SANDBOX_NET_POLICY;
	o->memory = config_get_num("memory");
	o->pids = (int)config_get_num("pids");
	if (sandbox_duration_parse(config_get("idle_pause"),
	    &o->idle_pause_ms) != 0)
		o->idle_pause_ms = 30 * 60 * 1000;
}

/*
 * The local provider's side of a new sandbox: workspace/, home/ and run/
 * in its directory, and a host uid of its own when we are root.
 */
int
sandbox_local_create(const char *dir, cJSON *meta,
    const struct sandbox_opts *o, char **cause)
{
	const char	*subs[] = { "workspace", "home", "run", "run/envd" };
	const char	*id = json_str(meta, "id");
	char		*path;
	uid_t		 host_uid = 0;
	size_t		 i;

	/*
	 * Root: the sandbox's processes are host uids of their own, which
	 * own what they may write (sandbox_uid_pick), and its system
	 * directories are overlays (sandbox-root.c). It takes a user
	 * namespace of ours; without one (some containers) they stay root's,
	 * and --pids cannot bind them without a pids cgroup.
	 */
	if (geteuid() == 0) {
		if (sandbox_userns_ok())
			host_uid = sandbox_uid_pick(id);
		else if (o->image != NULL) {
			*cause = xprintf("--image %s: this system gives holt no "
			    "user namespace to mount an image in", o->image);
			return -1;
		}
		else if (o->pids > 0 && !sandbox_pids_cgroup())
			log_warnx("--pids %d: not enforced (root, and neither a "
			    "pids cgroup nor a user namespace to run the "
			    "sandbox as another uid)", o->pids);
	}
	for (i = 0; i < nitems(subs); i++) {
		path = paths_join(dir, subs[i]);
		if (mkdir(path, 0700) != 0 || (host_uid != 0 &&
		    strcmp(subs[i], "run") != 0 &&
		    chown(path, host_uid, (gid_t)host_uid) != 0)) {
			*cause = xprintf("%s: %s", path, strerror(errno));
			free(path);
			return -1;
		}
		free(path);
	}
	if (host_uid != 0)
		cJSON_AddNumberToObject(meta, "host_uid", (double)host_uid);
	cJSON_AddStringToObject(meta, "image", o->image != NULL ? o->image :
	    "host");
	return 0;
}

/* holt.conf's provider, or local. */
static const char *
provider_spec(const struct sandbox_opts *o)
{
	const char	*spec = o->provider;

	if (spec == NULL || *spec == '\0')
		spec = config_get("provider");
	return spec != NULL && *spec != '\0' ? spec : "local";
}

static int
name_free(const char *name, char **cause)
{
	struct sandbox	**list;
	size_t		  n, i;
	int		  rc = 0;

	if (!sandbox_name_ok(name)) {
		*cause = xprintf("name '%s': use letters, digits, '-', '_' "
		    "and '.' (at most 64, not starting with sbx-)", name);
		return -1;
	}
	list = sandbox_list(&n);
	for (i = 0; i < n && rc == 0; i++) {
		if (strcmp(list[i]->name, name) == 0) {
			*cause = xprintf("name '%s': already used by sandbox "
			    "'%s'", name, list[i]->id);
			rc = -1;
		}
	}
	sandbox_list_free(list, n);
	return rc;
}

/* A new directory data/sandboxes/<id>, with a new id. */
static char *
new_dir(char *id, size_t len, char **cause)
{
	char	*dir;

	if (file_mkdir_p(paths_sandboxes_dir(), 0700) != 0) {
		*cause = xprintf("%s: %s", paths_sandboxes_dir(),
		    strerror(errno));
		return NULL;
	}
	do {
		sandbox_new_id(id, len);
		dir = paths_join(paths_sandboxes_dir(), id);
		if (mkdir(dir, 0700) == 0)
			return dir;
		if (errno != EEXIST) {
			*cause = xprintf("%s: %s", dir, strerror(errno));
			free(dir);
			return NULL;
		}
		free(dir);
	} while (1);
}

struct sandbox *
sandbox_create(const struct sandbox_opts *o, char **cause)
{
	const struct sandbox_provider	*prov;
	struct sandbox			*sb;
	char				 id[32], *dir, *path, *now, *json;
	const char			*spec = provider_spec(o), *arg;
	int				 fd, dfd, rc;
	cJSON				*meta, *limits;

	if ((prov = sandbox_provider_parse(spec, &arg, cause)) == NULL)
		return NULL;
	if (o->fill != NULL && prov != &sandbox_local_provider) {
		*cause = xprintf("provider '%s': cannot fork a sandbox onto "
		    "it", spec);
		return NULL;
	}
	if (o->name != NULL && name_free(o->name, cause) != 0)
		return NULL;
	if ((dir = new_dir(id, sizeof id, cause)) == NULL)
		return NULL;

	meta = cJSON_CreateObject();
	cJSON_AddStringToObject(meta, "id", id);
	cJSON_AddStringToObject(meta, "name", o->name != NULL ? o->name : "");
	now = json_time_now();
	cJSON_AddStringToObject(meta, "created", now);
	free(now);
	cJSON_AddStringToObject(meta, "provider", spec);
	cJSON_AddStringToObject(meta, "net", sandbox_net_name(o->net));
	limits = cJSON_AddObjectToObject(meta, "limits");
	cJSON_AddNumberToObject(limits, "memory", (double)o->memory);
	cJSON_AddNumberToObject(limits, "pids", o->pids);
	cJSON_AddNumberToObject(meta, "idle_pause_ms", (double)o->idle_pause_ms);
	if (o->forked_from != NULL)
		cJSON_AddStringToObject(meta, "forked_from", o->forked_from);
	if (prov->create(dir, meta, o, cause) != 0) {
		cJSON_Delete(meta);
		file_rm_rf(dir);
		free(dir);
		return NULL;
	}
	/*
	 * meta.json is written now and made durable (fsync of the file and
	 * the directory) while the sandbox starts: the two overlap, and
	 * create returns only once both are done.
	 */
	path = paths_join(dir, "meta.json");
	json = cJSON_Print(meta);
	cJSON_Delete(meta);
	if (json == NULL)
		fatalx("out of memory (json)");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd == -1 || file_write_all(fd, json, strlen(json)) != 0) {
		*cause = xprintf("%s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		cJSON_free(json);
		free(path);
		goto undo;
	}
	cJSON_free(json);
	free(path);
	if (o->fill != NULL && o->fill(dir, o->fill_arg, cause) != 0) {
		close(fd);
		goto undo;
	}

	if ((sb = sandbox_load(id, cause)) == NULL) {
		close(fd);
		goto undo;
	}
	rc = sandbox_start(sb, cause);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fsync(fd) != 0 || dfd == -1 || fsync(dfd) != 0)
		log_warn("%s", dir);
	close(fd);
	if (dfd != -1)
		close(dfd);
	free(dir);
	if (rc != 0) {
		/* A sandbox that never ran is not kept half-made. */
		path = NULL;
		sandbox_rm(sb, &path);
		free(path);
		file_rm_rf(sb->dir);
		sandbox_free(sb);
		return NULL;
	}
	sandbox_touch(sb);
	return sb;

undo:
	/* The provider's side too: a record is all sandbox_rm needs. */
	if ((sb = sandbox_open_damaged(id, &path)) != NULL) {
		char *why = NULL;
		if (sb->prov->rm != NULL)
			sb->prov->rm(sb, &why);
		free(why);
		sandbox_free(sb);
	}
	free(path);
	file_rm_rf(dir);
	free(dir);
	return NULL;
}

/*
 * The record of a sandbox on another provider, without asking it: for a
 * host gone for good. A local one's record is its files: rm it.
 */
int
sandbox_forget(struct sandbox *sb, char **cause)
{
	if (sb->prov == &sandbox_local_provider) {
		*cause = xprintf("sandbox '%s': --forget is for a sandbox on "
		    "another provider (holt sandbox rm %s)", sb->id, sb->id);
		return -1;
	}
	if (file_rm_rf(sb->dir) != 0) {
		*cause = xprintf("%s: %s", sb->dir, strerror(errno));
		return -1;
	}
	return 0;
}

int
sandbox_rm(struct sandbox *sb, char **cause)
{
	if (sb->prov->rm != NULL && sb->prov->rm(sb, cause) != 0)
		return -1;
	if (file_rm_rf(sb->dir) != 0) {
		*cause = xprintf("%s: %s", sb->dir, strerror(errno));
		return -1;
	}
	return 0;
}
