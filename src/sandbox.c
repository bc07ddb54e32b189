/*
 * sandbox.c: sandboxes on disk (DESIGN 3): ids and names, meta.json, state
 * derived from the run/ directory, and the control socket's client end.
 * Creating is sandbox-create.c; launching, stopping and freezing the
 * processes is sandbox-local.c. Nothing here needs those, so a front end
 * that only talks to running sandboxes links without them.
 *
 * data/sandboxes/<id>/
 *	meta.json	id, name, created, provider, net, limits (atomic writes)
 *	workspace/	/workspace inside
 *	home/		/home/user inside
 *	run/		envd.sock (0600), envd.pid ("PID STARTTIME"), envd.log,
 *			paused ("freezer" or "signal"), cgroups, last-used,
 *			envd/ (envd's own state: services.json, logs/)
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "sandbox-local.h"
#include "sandbox-provider.h"

static int	sandbox_unknown;

static const struct sandbox_provider *provider_of(const char *);

int
sandbox_errno_unknown(void)
{
	return sandbox_unknown;
}

int
sandbox_is_id(const char *s)
{
	size_t	 i;

	if (strncmp(s, "sbx-", 4) != 0 || strlen(s) != 16)
		return 0;
	for (i = 4; i < 16; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	}
	return 1;
}

int
sandbox_name_ok(const char *s)
{
	size_t	 i;

	if (*s == '\0' || strlen(s) > 64 || *s == '-' || *s == '.')
		return 0;
	if (strncmp(s, "sbx-", 4) == 0)
		return 0;
	for (i = 0; s[i] != '\0'; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' &&
		    s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		    s[i] == '-' || s[i] == '_' || s[i] == '.'))
			return 0;
	}
	return 1;
}

char *
sandbox_path(struct sandbox *sb, const char *rel)
{
	return paths_join(sb->dir, rel);
}

struct sandbox *
sandbox_load(const char *id, char **cause)
{
	struct sandbox	*sb;
	char		*dir, *path;
	cJSON		*meta, *limits;
	const char	*s;
	double		 uid;

	dir = paths_join(paths_sandboxes_dir(), id);
	path = paths_join(dir, "meta.json");
	if ((meta = json_load_file(path, cause)) == NULL) {
		free(dir);
		free(path);
		return NULL;
	}
	s = json_str(meta, "id");
	if (s == NULL || strcmp(s, id) != 0) {
		*cause = xprintf("%s: corrupt file (its id is not '%s')", path,
		    id);
		cJSON_Delete(meta);
		free(dir);
		free(path);
		return NULL;
	}
	free(path);
	sb = xcalloc(1, sizeof *sb);
	sb->id = xstrdup(id);
	sb->dir = dir;
	sb->name = xstrdup((s = json_str(meta, "name")) != NULL ? s : "");
	sb->created = xstrdup((s = json_str(meta, "created")) != NULL ? s : "");
	s = json_str(meta, "net");
	/* Made before "policy" existed: off. */
	if (s == NULL || sandbox_net_parse(s, &sb->net) != 0)
		sb->net = SANDBOX_NET_OFF;
	limits = cJSON_GetObjectItemCaseSensitive(meta, "limits");
	sb->memory = (long long)json_num(limits, "memory", 0);
	sb->pids = (int)json_num(limits, "pids", 0);
	uid = json_num(meta, "host_uid", 0);
	if (uid < 0 || uid > 2147483647.0 || uid != (double)(uid_t)uid) {
		*cause = xprintf("%s/meta.json: bad host_uid", dir);
		free(sb->id);
		free(sb->name);
		free(sb->created);
		free(sb);
		free(dir);
		cJSON_Delete(meta);
		return NULL;
	}
	sb->host_uid = (uid_t)uid;
	sb->meta = meta;
	s = json_str(meta, "provider");
	sb->provider = xstrdup(s != NULL && *s != '\0' ? s : "local");
	if ((sb->prov = provider_of(sb->provider)) == NULL) {
		if (sandbox_foreign != NULL)
			sandbox_foreign(sb->provider);
		*cause = xprintf("sandbox '%s': provider '%s' is not one this "
		    "holt has", id, sb->provider);
		sandbox_free(sb);
		return NULL;
	}
	return sb;
}

void (*sandbox_foreign)(const char *);

/* "ssh:host" is the provider "ssh". */
static const struct sandbox_provider *
provider_of(const char *spec)
{
	char				 name[32];
	size_t				 len = strcspn(spec, ":");

	if (len >= sizeof name)
		return NULL;
	memcpy(name, spec, len);
	name[len] = '\0';
	return sandbox_provider_find(name);
}

const struct sandbox_provider *
sandbox_provider_find(const char *name)
{
	size_t	 i;

	for (i = 0; sandbox_providers[i] != NULL; i++) {
		if (strcmp(sandbox_providers[i]->name, name) == 0)
			return sandbox_providers[i];
	}
	return NULL;
}

const struct sandbox_provider *
sandbox_provider_parse(const char *spec, const char **arg, char **cause)
{
	const struct sandbox_provider	*p;
	const char			*colon = strchr(spec, ':');
	size_t				 i;
	struct buf			 names;

	*arg = colon != NULL ? colon + 1 : NULL;
	if ((p = provider_of(spec)) == NULL) {
		buf_init(&names);
		for (i = 0; sandbox_providers[i] != NULL; i++)
			buf_addf(&names, "%s%s", i > 0 ? ", " : "",
			    sandbox_providers[i]->name);
		*cause = xprintf("provider '%s': not one of %s", spec,
		    buf_str(&names));
		buf_release(&names);
		return NULL;
	}
	if (p->check == NULL && *arg != NULL) {
		*cause = xprintf("provider '%s': %s takes no argument", spec,
		    p->name);
		return NULL;
	}
	if (p->check != NULL && p->check(*arg, cause) != 0)
		return NULL;
	return p;
}

const char *
sandbox_provider_spec(struct sandbox *sb)
{
	return sb->provider;
}

const char *
sandbox_provider_arg(struct sandbox *sb)
{
	const char	*colon = strchr(sb->provider, ':');

	return colon != NULL ? colon + 1 : NULL;
}

cJSON *
sandbox_meta(struct sandbox *sb)
{
	return sb->meta;
}

int (*sandbox_wake)(struct sandbox *, char **);

int
sandbox_duration_parse(const char *s, long long *ms)
{
	char		*end;
	long long	 v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || v < 0 || v > 1000000000LL)
		return -1;
	if (strcmp(end, "ms") == 0)
		;
	else if (*end == '\0' || strcmp(end, "s") == 0)
		v *= 1000;
	else if (strcmp(end, "m") == 0)
		v *= 60 * 1000;
	else if (strcmp(end, "h") == 0)
		v *= 3600 * 1000;
	else if (strcmp(end, "d") == 0)
		v *= 86400 * 1000;
	else
		return -1;
	*ms = v;
	return 0;
}

long long
sandbox_idle_pause(struct sandbox *sb)
{
	long long	 ms;

	if (cJSON_GetObjectItemCaseSensitive(sb->meta, "idle_pause_ms") != NULL)
		return (long long)json_num(sb->meta, "idle_pause_ms", 0);
	/* Made before the setting existed: holt.conf's. */
	if (sandbox_duration_parse(config_get("idle_pause"), &ms) != 0)
		ms = 30 * 60 * 1000;
	return ms;
}

const char *
sandbox_net_name(int net)
{
	switch (net) {
	case SANDBOX_NET_ON:
		return "on";
	case SANDBOX_NET_POLICY:
		return "policy";
	}
	return "off";
}

int
sandbox_net_parse(const char *s, int *net)
{
	if (strcmp(s, "off") == 0)
		*net = SANDBOX_NET_OFF;
	else if (strcmp(s, "on") == 0)
		*net = SANDBOX_NET_ON;
	else if (strcmp(s, "policy") == 0)
		*net = SANDBOX_NET_POLICY;
	else
		return -1;
	return 0;
}

const char *
sandbox_image(struct sandbox *sb)
{
	const char	*s = json_str(sb->meta, "image");

	return s != NULL && *s != '\0' ? s : "host";
}

void
sandbox_free(struct sandbox *sb)
{
	if (sb == NULL)
		return;
	free(sb->id);
	free(sb->name);
	free(sb->dir);
	free(sb->created);
	free(sb->provider);
	cJSON_Delete(sb->meta);
	free(sb);
}

static int
sandbox_cmp(const void *a, const void *b)
{
	struct sandbox	*x = *(struct sandbox * const *)a;
	struct sandbox	*y = *(struct sandbox * const *)b;
	int		 c;

	if ((c = strcmp(x->created, y->created)) != 0)
		return c;
	return strcmp(x->id, y->id);
}

struct sandbox **
sandbox_list(size_t *np)
{
	DIR		 *d;
	struct dirent	 *de;
	struct sandbox	**list = NULL, *sb;
	size_t		  n = 0;
	char		 *cause;

	*np = 0;
	if ((d = opendir(paths_sandboxes_dir())) == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (!sandbox_is_id(de->d_name))
			continue;
		if ((sb = sandbox_load(de->d_name, &cause)) == NULL) {
			log_warnx("%s", cause);
			free(cause);
			continue;
		}
		list = xreallocarray(list, n + 1, sizeof *list);
		list[n++] = sb;
	}
	closedir(d);
	if (n > 1)
		qsort(list, n, sizeof *list, sandbox_cmp);
	*np = n;
	return list;
}

void
sandbox_list_free(struct sandbox **list, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		sandbox_free(list[i]);
	free(list);
}

struct sandbox *
sandbox_open(const char *idn, char **cause)
{
	struct sandbox	**list, *sb = NULL;
	char		 *dir;
	struct stat	  st;
	size_t		  n, i, found = 0;

	sandbox_unknown = 0;
	if (sandbox_is_id(idn)) {
		dir = paths_join(paths_sandboxes_dir(), idn);
		if (stat(dir, &st) != 0) {
			free(dir);
			sandbox_unknown = 1;
			*cause = xprintf("sandbox '%s': no such sandbox", idn);
			return NULL;
		}
		free(dir);
		return sandbox_load(idn, cause);
	}
	if (sandbox_name_ok(idn)) {
		list = sandbox_list(&n);
		for (i = 0; i < n; i++) {
			if (strcmp(list[i]->name, idn) != 0)
				continue;
			if (found++ == 0) {
				sb = list[i];
				list[i] = NULL;
			}
		}
		sandbox_list_free(list, n);
		if (found == 1)
			return sb;
		if (found > 1) {
			sandbox_free(sb);
			*cause = xprintf("sandbox '%s': the name is not unique "
			    "(use the id)", idn);
			sandbox_unknown = 1;
			return NULL;
		}
	}
	sandbox_unknown = 1;
	*cause = xprintf("sandbox '%s': no such sandbox (holt sandbox ls "
	    "lists them)", idn);
	return NULL;
}

/*
 * For stop and rm only: a sandbox whose meta.json is missing or corrupt
 * is still a directory with processes that must be stoppable and
 * removable. Opened as sandbox_open does when it can; else, for an id
 * whose directory exists, a bare sandbox (local, no name, no limits) and
 * *cause saying what was wrong with the file. NULL if there is nothing.
 */
struct sandbox *
sandbox_open_damaged(const char *idn, char **cause)
{
	struct sandbox	*sb;
	char		*dir, *why = NULL;
	struct stat	 st;

	*cause = NULL;
	if ((sb = sandbox_open(idn, &why)) != NULL)
		return sb;
	dir = paths_join(paths_sandboxes_dir(), idn);
	if (!sandbox_is_id(idn) || stat(dir, &st) != 0 ||
	    !S_ISDIR(st.st_mode)) {
		free(dir);
		*cause = why;
		return NULL;
	}
	*cause = xprintf("%s (taken as a local sandbox to stop or remove "
	    "it)", why);
	free(why);
	sb = xcalloc(1, sizeof *sb);
	sb->id = xstrdup(idn);
	sb->dir = dir;
	sb->name = xstrdup("");
	sb->created = xstrdup("");
	sb->net = SANDBOX_NET_OFF;
	sb->meta = cJSON_CreateObject();
	cJSON_AddStringToObject(sb->meta, "id", idn);
	sb->host_uid = getuid();
	sb->provider = xstrdup("local");
	sb->prov = sandbox_provider_find("local");
	return sb;
}

const char *
sandbox_id(struct sandbox *sb)
{
	return sb->id;
}

const char *
sandbox_name(struct sandbox *sb)
{
	return sb->name;
}

const char *
sandbox_dir(struct sandbox *sb)
{
	return sb->dir;
}

const char *
sandbox_created(struct sandbox *sb)
{
	return sb->created;
}

int
sandbox_net(struct sandbox *sb)
{
	return sb->net;
}

long long
sandbox_memory(struct sandbox *sb)
{
	return sb->memory;
}

int
sandbox_pids(struct sandbox *sb)
{
	return sb->pids;
}

char *
sandbox_workspace(struct sandbox *sb)
{
	return sandbox_path(sb, "workspace");
}

char *
sandbox_socket_path(struct sandbox *sb)
{
	return sandbox_path(sb, "run/envd.sock");
}

uint64_t
sandbox_last_used(struct sandbox *sb)
{
	char		*path = sandbox_path(sb, "run/last-used");
	struct stat	 st;
	uint64_t	 t = 0;

	if (stat(path, &st) == 0)
		t = (uint64_t)st.st_mtim.tv_sec * 1000 +
		    (uint64_t)st.st_mtim.tv_nsec / 1000000;
	free(path);
	return t;
}

/* "Last used" is a file's mtime: cheap, no fsync on every exec. */
void
sandbox_touch(struct sandbox *sb)
{
	char	*path = sandbox_path(sb, "run/last-used");
	int	 fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) != -1) {
		futimens(fd, NULL);
		close(fd);
	}
	free(path);
}

const char *
sandbox_state_name(enum sandbox_state st)
{
	switch (st) {
	case SANDBOX_RUNNING:
		return "running";
	case SANDBOX_PAUSED:
		return "paused";
	case SANDBOX_STOPPED:
		return "stopped";
	case SANDBOX_UNREACHABLE:
		return "unreachable";
	}
	return "unknown";
}

/*
 * A socket path may be longer than sun_path holds; then go through the
 * directory's descriptor (/proc/self/fd/N/envd.sock), which is short.
 */
int
sandbox_sockaddr(struct sandbox *sb, struct sockaddr_un *sun, int *dirfd)
{
	char	*path = sandbox_socket_path(sb), *run;

	memset(sun, 0, sizeof *sun);
	sun->sun_family = AF_UNIX;
	*dirfd = -1;
	if (strlen(path) < sizeof sun->sun_path) {
		xstrlcpy(sun->sun_path, path, sizeof sun->sun_path);
		free(path);
		return 0;
	}
	free(path);
	run = sandbox_path(sb, "run");
	*dirfd = open(run, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(run);
	if (*dirfd == -1)
		return -1;
	snprintf(sun->sun_path, sizeof sun->sun_path,
	    "/proc/self/fd/%d/envd.sock", *dirfd);
	return 0;
}

/* Is something listening on the control socket? (Cheap: no hello.) */
int
sandbox_socket_alive(struct sandbox *sb)
{
	struct sockaddr_un	 sun;
	int			 s, dirfd, ok;

	if (sandbox_sockaddr(sb, &sun, &dirfd) != 0)
		return 0;
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1) {
		if (dirfd != -1)
			close(dirfd);
		return 0;
	}
	/*
	 * Not blocking: a paused envd accepts nothing, and once its backlog
	 * is full of probes like this one a blocking connect would wait
	 * until it is resumed. A full backlog (EAGAIN) is a listener too.
	 */
	ok = connect(s, (struct sockaddr *)&sun, sizeof sun) == 0 ||
	    errno == EAGAIN;
	close(s);
	if (dirfd != -1)
		close(dirfd);
	return ok;
}

/* State and start time of a process; -1 if gone. */
int
sandbox_proc_stat(pid_t pid, char *state, unsigned long long *start)
{
	struct proc_stat	 ps;

	if (proc_stat_read(pid, &ps) != 0)
		return -1;
	*state = ps.state;
	*start = ps.start;
	return 0;
}

/* envd's host pid if it is alive and really ours (not a reused pid). */
pid_t
sandbox_pid(struct sandbox *sb)
{
	char			*path, *data, st;
	long			 pid;
	unsigned long long	 start, now;

	path = sandbox_path(sb, "run/envd.pid");
	data = file_read(path, NULL, 256);
	free(path);
	if (data == NULL)
		return 0;
	if (sscanf(data, "%ld %llu", &pid, &start) != 2 || pid <= 1) {
		free(data);
		return 0;
	}
	free(data);
	if (sandbox_proc_stat((pid_t)pid, &st, &now) != 0 || now != start ||
	    st == 'Z')
		return 0;
	return (pid_t)pid;
}

enum sandbox_state
sandbox_local_state(struct sandbox *sb)
{
	char		*path;
	struct stat	 st;
	int		 paused;

	if (sandbox_pid(sb) <= 0)
		return SANDBOX_STOPPED;
	if (!sandbox_socket_alive(sb))
		return SANDBOX_STOPPED;
	path = sandbox_path(sb, "run/paused");
	paused = stat(path, &st) == 0;
	free(path);
	return paused ? SANDBOX_PAUSED : SANDBOX_RUNNING;
}

int
sandbox_wait_readable(int fd, int ms)
{
	struct pollfd	 pfd = { fd, POLLIN, 0 };
	int		 r;

	do
		r = poll(&pfd, 1, ms);
	while (r == -1 && errno == EINTR);
	return r;
}

/* Connect and send hello (id 0); the reply is not read here. */
static int
connect_hello(struct sandbox *sb, int say, char **cause)
{
	struct sockaddr_un	 sun;
	int			 s, dirfd, r;
	cJSON			*req;

	if (sandbox_sockaddr(sb, &sun, &dirfd) != 0) {
		*cause = xprintf("sandbox '%s': %s", sb->id, strerror(errno));
		return -1;
	}
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		fatal("socket");
	r = connect(s, (struct sockaddr *)&sun, sizeof sun);
	if (dirfd != -1)
		close(dirfd);
	if (r != 0) {
		*cause = xprintf("sandbox '%s': connect: %s", sb->id,
		    strerror(errno));
		close(s);
		return -1;
	}
	if (!say)
		return s;
	req = sandbox_hello_new();
	r = frame_write_fd(s, req);
	cJSON_Delete(req);
	if (r != 0) {
		*cause = xprintf("sandbox '%s': write: %s", sb->id,
		    strerror(errno));
		close(s);
		return -1;
	}
	return s;
}

/* Connect without the state checks: sandbox_start uses it during launch. */
int
sandbox_connect_raw(struct sandbox *sb, int timeout_ms, char **cause)
{
	int	 s;
	cJSON	*reply = NULL;
	char	*err = NULL;

	if ((s = connect_hello(sb, 1, cause)) == -1)
		return -1;
	if (sandbox_wait_readable(s, timeout_ms) <= 0 ||
	    frame_read_fd(s, &reply, &err) != 1) {
		*cause = xprintf("sandbox '%s': envd does not answer%s%s",
		    sb->id, err != NULL ? ": " : "", err != NULL ? err : "");
		free(err);
		close(s);
		return -1;
	}
	if (json_str(reply, "error") != NULL) {
		*cause = xprintf("sandbox '%s': hello: %s", sb->id,
		    json_str(reply, "error"));
		cJSON_Delete(reply);
		close(s);
		return -1;
	}
	cJSON_Delete(reply);
	return s;
}

static int
connect_checked(struct sandbox *sb, int wait, char **cause)
{
	char		*path;
	struct stat	 st;
	int		 paused, fd;

	/* As sandbox_state, but the connect that checks is the one we keep. */
	if (sandbox_pid(sb) > 0) {
		path = sandbox_path(sb, "run/paused");
		paused = stat(path, &st) == 0;
		free(path);
		if (paused && (sandbox_wake == NULL ||
		    sandbox_wake(sb, cause) != 0)) {
			if (sandbox_wake == NULL)
				*cause = xprintf("sandbox '%s' is paused (holt "
				    "sandbox resume %s)", sb->id, sb->id);
			return -1;
		}
		if (wait == 1)
			fd = sandbox_connect_raw(sb, 5000, cause);
		else
			fd = connect_hello(sb, wait == 0, cause);
		if (fd != -1)
			return fd;
		if (sandbox_socket_alive(sb))
			return -1;	/* it is there but does not answer */
		free(*cause);
	}
	*cause = xprintf("sandbox '%s' is stopped (holt sandbox start %s)",
	    sb->id, sb->id);
	return -1;
}

int
sandbox_local_connect(struct sandbox *sb, int mode, char **cause)
{
	return connect_checked(sb, mode, cause);
}

enum sandbox_state
sandbox_state(struct sandbox *sb)
{
	return sb->prov->state(sb);
}

enum sandbox_state
sandbox_state_known(struct sandbox *sb)
{
	if (sb->prov->state_known != NULL)
		return sb->prov->state_known(sb);
	return sb->prov->state(sb);
}

int
sandbox_connect(struct sandbox *sb, char **cause)
{
	return sb->prov->connect(sb, SANDBOX_CONNECT_WAIT, cause);
}

int
sandbox_connect_nowait(struct sandbox *sb, char **cause)
{
	return sb->prov->connect(sb, SANDBOX_CONNECT_NOWAIT, cause);
}

int
sandbox_connect_later(struct sandbox *sb, char **cause)
{
	return sb->prov->connect(sb, SANDBOX_CONNECT_LATER, cause);
}

/* The light half of the local provider: what needs no process started. */
const struct sandbox_provider sandbox_local_light = {
	.name = "local",
	.state = sandbox_local_state,
	.connect = sandbox_local_connect,
};

/* The hello frame (id 0) of this version of the envd protocol. */
cJSON *
sandbox_hello_new(void)
{
	cJSON	*req = cJSON_CreateObject();

	cJSON_AddNumberToObject(req, "id", 0);
	cJSON_AddStringToObject(req, "op", "hello");
	cJSON_AddNumberToObject(req, "version", ENVD_VERSION);
	return req;
}

