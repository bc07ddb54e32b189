/*
 * sandbox-e2b.c: the e2b provider (DESIGN 17): a holt sandbox whose
 * machine is an E2B sandbox, in E2B's cloud or on any server that speaks
 * its API (holt e2b serve).
 *
 * Locally the sandbox is only its directory and meta.json, which names the
 * E2B sandbox ("e2b": {id, template, api_url, sandbox_url}); the key is
 * never written there: it is read from E2B_API_KEY or holt.conf at each
 * use. Create makes the E2B sandbox; start and resume are E2B's connect;
 * E2B has no stop, so stop pauses it (its files are kept, as a stopped
 * sandbox's are). E2B's own timeout (idle_pause) pauses it when holt
 * leaves it unused that long, and the next connect resumes it.
 * Connecting gives a socket served by e2b-bridge.c, which speaks holt's
 * envd protocol in E2B calls.
 *
 * State is asked of E2B each time (one HTTP round trip), as the local
 * provider derives its own from run/ each time; a server that does not
 * answer makes it unreachable.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2b-client.h"
#include "sandbox.h"
#include "sandbox-provider.h"

#define SANDBOX_E2B_TIMEOUT_S	1800	/* idle_pause 0: E2B needs one */

static const char *
e2b_id(struct sandbox *sb)
{
	return json_str(cJSON_GetObjectItem(sandbox_meta(sb), "e2b"), "id");
}

/* E2B's timeout: idle_pause, which E2B needs to be more than 0. */
static long
e2b_timeout_of(long long idle_pause_ms)
{
	if (idle_pause_ms <= 0)
		return SANDBOX_E2B_TIMEOUT_S;
	return idle_pause_ms < 1000 ? 1 : (long)(idle_pause_ms / 1000);
}

/* Kept in meta.json's "e2b": holt's own idle pause is left to E2B. */
static long
e2b_timeout_s(struct sandbox *sb)
{
	return (long)json_num(cJSON_GetObjectItem(sandbox_meta(sb), "e2b"),
	    "timeout_s", SANDBOX_E2B_TIMEOUT_S);
}

/*
 * A client for this sandbox: the key from the environment or holt.conf,
 * the URLs it was made with (so that a changed E2B_API_URL never moves a
 * sandbox to another server silently).
 */
static struct e2b_client *
e2b_client_for(struct sandbox *sb, char **cause)
{
	const cJSON	*e = cJSON_GetObjectItem(sandbox_meta(sb), "e2b");
	struct e2b_client *c;
	char		*why = NULL;

	if ((c = e2b_client_new(json_str(e, "api_url"),
	    json_str(e, "sandbox_url"), &why)) == NULL) {
		*cause = xprintf("sandbox '%s': %s", sandbox_id(sb), why);
		free(why);
	}
	return c;
}

static void
e2b_prefix(struct sandbox *sb, char **cause)
{
	char	*m = xprintf("sandbox '%s': %s", sandbox_id(sb), *cause);

	free(*cause);
	*cause = m;
}

static int
ignore_msg(void *arg, const cJSON *msg)
{
	(void)arg;
	(void)msg;
	return 0;
}

/* E2B's templates have /home/user; holt's tools work in /workspace. */
static int
e2b_make_workspace(struct e2b_sbx *sbx, char **cause)
{
	cJSON	*q = cJSON_CreateObject(), *p, *args;
	int	 r;

	p = cJSON_AddObjectToObject(q, "process");
	cJSON_AddStringToObject(p, "cmd", "/bin/sh");
	args = cJSON_AddArrayToObject(p, "args");
	cJSON_AddItemToArray(args, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(args, cJSON_CreateString("test -d /workspace || "
	    "{ mkdir -p /workspace && chown user: /workspace; }"));
	r = e2b_envd_stream(sbx, "process.Process/Start", "root", q,
	    ignore_msg, NULL, cause);
	cJSON_Delete(q);
	return r;
}

/*
 * The provider's create: make the E2B sandbox now (it runs from then on)
 * and note in meta.json where to find it again.
 */
static int
e2b_create(const char *dir, cJSON *meta, const struct sandbox_opts *o,
    char **cause)
{
	struct e2b_create_opts	 co;
	struct e2b_client	*c;
	struct e2b_sbx		 sbx;
	cJSON			*e, *md;
	const char		*t = config_get("e2b_template");
	char			*why = NULL;

	(void)dir;
	if ((c = e2b_client_new(NULL, NULL, cause)) == NULL)
		return -1;
	memset(&co, 0, sizeof co);
	co.template = t != NULL && *t != '\0' ? t : "base";
	co.timeout_s = e2b_timeout_of(o->idle_pause_ms);
	co.internet = o->net != SANDBOX_NET_OFF;
	md = cJSON_CreateObject();
	cJSON_AddStringToObject(md, "holt.sandbox", json_str(meta, "id"));
	co.metadata = md;
	if (e2b_client_create(c, &co, &sbx, cause) != 0) {
		cJSON_Delete(md);
		e2b_client_free(c);
		return -1;
	}
	cJSON_Delete(md);
	if (e2b_make_workspace(&sbx, cause) != 0) {
		if (e2b_client_kill(c, sbx.id, &why) != 0)
			free(why);
		e2b_sbx_release(&sbx);
		e2b_client_free(c);
		return -1;
	}
	e = cJSON_AddObjectToObject(meta, "e2b");
	cJSON_AddStringToObject(e, "id", sbx.id);
	cJSON_AddStringToObject(e, "template", sbx.template);
	cJSON_AddNumberToObject(e, "timeout_s", (double)co.timeout_s);
	/* E2B pauses it: holt's server has no idle pause of its own to do. */
	cJSON_DeleteItemFromObject(meta, "idle_pause_ms");
	cJSON_AddNumberToObject(meta, "idle_pause_ms", 0);
	cJSON_AddStringToObject(e, "api_url", e2b_client_api_url(c));
	if (e2b_client_sandbox_url(c) != NULL)
		cJSON_AddStringToObject(e, "sandbox_url",
		    e2b_client_sandbox_url(c));
	e2b_sbx_release(&sbx);
	e2b_client_free(c);
	return 0;
}

/*
 * States asked of E2B in the last E2B_STATE_TTL_MS, by holt sandbox id:
 * the server asks each session's sandbox's state for every status it
 * gives, and each answer is a round trip to E2B. Our own pause, resume
 * and connect forget the entry.
 */
#define E2B_STATE_TTL_MS	2000
#define E2B_STATE_CACHED	16
static struct {
	char			 id[32];
	enum sandbox_state	 state;
	uint64_t		 at_ms;
} e2b_states[E2B_STATE_CACHED];
static pthread_mutex_t	 e2b_states_lock = PTHREAD_MUTEX_INITIALIZER;

static int
state_cached(struct sandbox *sb, enum sandbox_state *st)
{
	size_t	 i;
	int	 found = 0;

	pthread_mutex_lock(&e2b_states_lock);
	for (i = 0; i < E2B_STATE_CACHED && !found; i++) {
		if (strcmp(e2b_states[i].id, sandbox_id(sb)) == 0 &&
		    json_now_ms() - e2b_states[i].at_ms < E2B_STATE_TTL_MS) {
			*st = e2b_states[i].state;
			found = 1;
		}
	}
	pthread_mutex_unlock(&e2b_states_lock);
	return found;
}

/* Note a state; STATE_FORGET forgets the sandbox's. */
#define STATE_FORGET	((enum sandbox_state)-1)
static void
state_note(struct sandbox *sb, enum sandbox_state st)
{
	size_t	 i, slot = 0;

	pthread_mutex_lock(&e2b_states_lock);
	for (i = 0; i < E2B_STATE_CACHED; i++) {
		if (strcmp(e2b_states[i].id, sandbox_id(sb)) == 0) {
			slot = i;
			break;
		}
		if (e2b_states[i].at_ms < e2b_states[slot].at_ms)
			slot = i;
	}
	if (st == STATE_FORGET)
		memset(&e2b_states[slot], 0, sizeof e2b_states[slot]);
	else {
		xstrlcpy(e2b_states[slot].id, sandbox_id(sb),
		    sizeof e2b_states[slot].id);
		e2b_states[slot].state = st;
		e2b_states[slot].at_ms = json_now_ms();
	}
	pthread_mutex_unlock(&e2b_states_lock);
}

static enum sandbox_state
e2b_state(struct sandbox *sb)
{
	struct e2b_client	*c;
	cJSON			*j;
	char			*cause = NULL;
	const char		*st;
	int			 gone;
	enum sandbox_state	 r = SANDBOX_STOPPED;

	if (state_cached(sb, &r))
		return r;
	if (e2b_id(sb) == NULL || (c = e2b_client_for(sb, &cause)) == NULL) {
		free(cause);
		return SANDBOX_STOPPED;
	}
	if ((j = e2b_client_get(c, e2b_id(sb), &gone, &cause)) == NULL) {
		/* Gone at E2B: stopped, and starting it says so. */
		if (!gone) {
			log_debug("sandbox '%s': %s", sandbox_id(sb), cause);
			r = SANDBOX_UNREACHABLE;
		}
		free(cause);
	} else if ((st = json_str(j, "state")) != NULL &&
	    strcmp(st, "running") == 0)
		r = SANDBOX_RUNNING;
	else
		r = SANDBOX_PAUSED;
	cJSON_Delete(j);
	e2b_client_free(c);
	state_note(sb, r);
	return r;
}

/* Resume it (connect), or say it is gone. */
static int
e2b_start(struct sandbox *sb, char **cause)
{
	struct e2b_client	*c;
	struct e2b_sbx		 sbx;
	int			 r;

	if (e2b_id(sb) == NULL) {
		*cause = xprintf("sandbox '%s': meta.json names no E2B "
		    "sandbox", sandbox_id(sb));
		return -1;
	}
	if ((c = e2b_client_for(sb, cause)) == NULL)
		return -1;
	state_note(sb, STATE_FORGET);
	if ((r = e2b_client_connect(c, e2b_id(sb), e2b_timeout_s(sb),
	    &sbx, cause)) == 0)
		e2b_sbx_release(&sbx);
	else if (strstr(*cause, "E2B said 404") != NULL) {
		free(*cause);
		*cause = xprintf("E2B no longer has '%s' (killed, or its "
		    "server lost it): holt sandbox rm %s", e2b_id(sb),
		    sandbox_id(sb));
	}
	if (r != 0)
		e2b_prefix(sb, cause);
	e2b_client_free(c);
	return r;
}

static int
e2b_resume(struct sandbox *sb, char **cause)
{
	return e2b_start(sb, cause);
}

/* E2B has no stop: pausing keeps its files, as stopping would. */
static int
e2b_pause(struct sandbox *sb, char **cause)
{
	struct e2b_client	*c;
	int			 r = 0;

	if (e2b_state(sb) != SANDBOX_RUNNING)
		return 0;
	if ((c = e2b_client_for(sb, cause)) == NULL)
		return -1;
	state_note(sb, STATE_FORGET);
	if (e2b_client_pause(c, e2b_id(sb), cause) != 0) {
		e2b_prefix(sb, cause);
		r = -1;
	}
	e2b_client_free(c);
	return r;
}

static int
e2b_stop(struct sandbox *sb, char **cause)
{
	return e2b_pause(sb, cause);
}

/* Kill it at E2B (gone already is fine); the caller removes the rest. */
static int
e2b_kill(struct sandbox *sb, char **cause)
{
	struct e2b_client	*c;
	int			 r = 0;

	if (e2b_id(sb) == NULL)
		return 0;
	if ((c = e2b_client_for(sb, cause)) == NULL)
		return -1;
	state_note(sb, STATE_FORGET);
	if (e2b_client_kill(c, e2b_id(sb), cause) != 0) {
		if (strstr(*cause, "E2B said 404") != NULL) {
			free(*cause);
			*cause = NULL;
		} else {
			e2b_prefix(sb, cause);
			r = -1;
		}
	}
	e2b_client_free(c);
	return r;
}

static int
e2b_connect(struct sandbox *sb, int mode, char **cause)
{
	struct e2b_client	*c;
	struct e2b_sbx		 sbx;
	cJSON			*hello;
	int			 fd, r;

	if (e2b_id(sb) == NULL) {
		*cause = xprintf("sandbox '%s' is stopped (holt sandbox start "
		    "%s)", sandbox_id(sb), sandbox_id(sb));
		return -1;
	}
	if ((c = e2b_client_for(sb, cause)) == NULL)
		return -1;
	/* Connect resumes a paused one: holt's tools wake it on use. */
	state_note(sb, STATE_FORGET);
	if (e2b_client_connect(c, e2b_id(sb), e2b_timeout_s(sb), &sbx,
	    cause) != 0) {
		e2b_prefix(sb, cause);
		e2b_client_free(c);
		return -1;
	}
	if ((fd = e2b_bridge_open(c, &sbx, e2b_timeout_s(sb), cause)) == -1) {
		e2b_sbx_release(&sbx);
		e2b_client_free(c);
		return -1;
	}
	if (mode == SANDBOX_CONNECT_NOWAIT) {
		hello = sandbox_hello_new();
		r = frame_write_fd(fd, hello);
		cJSON_Delete(hello);
		if (r != 0) {
			*cause = xprintf("sandbox '%s': write: %s",
			    sandbox_id(sb), strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

const struct sandbox_provider sandbox_e2b_provider = {
	.name = "e2b",
	.create = e2b_create,
	.start = e2b_start,
	.stop = e2b_stop,
	.pause = e2b_pause,
	.resume = e2b_resume,
	.rm = e2b_kill,
	.state = e2b_state,
	.connect = e2b_connect,
};
