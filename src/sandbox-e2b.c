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
 * envd protocol in E2B calls. Checkpoints are kept in the E2B sandbox
 * itself (below, before the provider's table).
 *
 * State is asked of E2B each time (one HTTP round trip), as the local
 * provider derives its own from run/ each time; a server that does not
 * answer makes it unreachable.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
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

/* 1 and *st if known, *fresh when younger than E2B_STATE_TTL_MS. */
static int
state_cached(struct sandbox *sb, enum sandbox_state *st, int *fresh)
{
	size_t	 i;
	int	 found = 0;

	pthread_mutex_lock(&e2b_states_lock);
	for (i = 0; i < E2B_STATE_CACHED && !found; i++) {
		if (strcmp(e2b_states[i].id, sandbox_id(sb)) == 0 &&
		    e2b_states[i].at_ms != 0) {
			*st = e2b_states[i].state;
			*fresh = json_now_ms() - e2b_states[i].at_ms <
			    E2B_STATE_TTL_MS;
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

static int
ignore_msg(void *arg, const cJSON *msg)
{
	(void)arg;
	(void)msg;
	return 0;
}

/*
 * The sandbox, resumed if paused (E2B's connect): its client, with sbx
 * filled; NULL with *cause.
 */
static struct e2b_client *
e2b_reach(struct sandbox *sb, struct e2b_sbx *sbx, char **cause)
{
	struct e2b_client	*c;

	if (e2b_id(sb) == NULL) {
		*cause = xprintf("sandbox '%s': meta.json names no E2B "
		    "sandbox", sandbox_id(sb));
		return NULL;
	}
	if ((c = e2b_client_for(sb, cause)) == NULL)
		return NULL;
	state_note(sb, STATE_FORGET);
	if (e2b_client_connect(c, e2b_id(sb), e2b_timeout_s(sb), sbx,
	    cause) != 0) {
		e2b_prefix(sb, cause);
		e2b_client_free(c);
		return NULL;
	}
	sbx->timeout_s = e2b_timeout_s(sb);
	return c;
}

/* A script's stdout and end, as e2b_root_sh collects them. */
struct e2b_sh {
	struct buf	 out;
	int		 code;
	int		 ended;
};

/* An end event's exit code; -1 when a signal ended it. */
static int
end_code(const cJSON *end)
{
	const char	*status = json_str(end, "status");

	if (status != NULL && strncmp(status, "signal", 6) == 0)
		return -1;
	return (int)json_num(end, "exitCode", 0);
}

static int
sh_msg(void *arg, const cJSON *msg)
{
	struct e2b_sh	*sh = arg;
	const cJSON	*ev = cJSON_GetObjectItem(msg, "event"), *x;

	if (msg == NULL)
		return 0;
	if ((x = cJSON_GetObjectItem(ev, "data")) != NULL &&
	    json_str(x, "stdout") != NULL && sh->out.len < 65536)
		envd_b64_decode(json_str(x, "stdout"), &sh->out);
	else if ((x = cJSON_GetObjectItem(ev, "end")) != NULL) {
		sh->ended = 1;
		sh->code = end_code(x);
	}
	return 0;
}

/*
 * Start script as root in sbx (E2B's root, else by sudo: holt e2b
 * serve's sandboxes), giving each message to msg; merge: its stderr goes
 * with its stdout.
 */
static int
e2b_root_start(struct e2b_sbx *sbx, const char *script, int merge,
    e2b_envd_msg_cb msg, void *arg, char **cause)
{
	cJSON	*q = cJSON_CreateObject(), *p, *args;
	int	 r;

	p = cJSON_AddObjectToObject(q, "process");
	cJSON_AddStringToObject(p, "cmd", "/bin/sh");
	args = cJSON_AddArrayToObject(p, "args");
	cJSON_AddItemToArray(args, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(args, cJSON_CreateString(merge ?
	    "exec 2>&1; if [ \"$(id -u)\" = 0 ]; then exec /bin/sh -c \"$1\"; "
	    "fi; exec sudo -n /bin/sh -c \"$1\"" :
	    "if [ \"$(id -u)\" = 0 ]; then exec /bin/sh -c \"$1\"; fi; "
	    "exec sudo -n /bin/sh -c \"$1\""));
	cJSON_AddItemToArray(args, cJSON_CreateString("holt"));
	cJSON_AddItemToArray(args, cJSON_CreateString(script));
	r = e2b_envd_stream(sbx, "process.Process/Start", "root", q, msg, arg,
	    cause);
	cJSON_Delete(q);
	return r;
}

/*
 * Run script as root in sbx to its end: 0, its output into out (may be
 * NULL); else -1 and *cause, "LABEL: WHAT: " and its last line.
 */
static int
e2b_sbx_sh(struct e2b_sbx *sbx, const char *label, const char *what,
    const char *script, struct buf *out, char **cause)
{
	struct e2b_sh	 sh;
	char		*m, *last;
	int		 r = -1;

	memset(&sh, 0, sizeof sh);
	buf_init(&sh.out);
	if (e2b_root_start(sbx, script, 1, sh_msg, &sh, cause) != 0) {
		m = xprintf("%s: %s", label, *cause);
		free(*cause);
		*cause = m;
	} else if (!sh.ended || sh.code != 0) {
		while (sh.out.len > 0 && sh.out.data[sh.out.len - 1] == '\n')
			sh.out.len--;
		buf_addc(&sh.out, '\0');
		last = strrchr(sh.out.data, '\n');
		*cause = xprintf("%s: %s: %s", label, what, last != NULL ?
		    last + 1 : sh.out.data);
	} else {
		if (out != NULL)
			buf_add(out, sh.out.data, sh.out.len);
		r = 0;
	}
	buf_release(&sh.out);
	return r;
}

/* The same in sb, resumed first. */
static int
e2b_root_sh(struct sandbox *sb, const char *what, const char *script,
    struct buf *out, char **cause)
{
	struct e2b_client	*c;
	struct e2b_sbx		 sbx;
	char			*label;
	int			 r;

	if ((c = e2b_reach(sb, &sbx, cause)) == NULL)
		return -1;
	label = xprintf("sandbox '%s'", sandbox_id(sb));
	r = e2b_sbx_sh(&sbx, label, what, script, out, cause);
	free(label);
	e2b_sbx_release(&sbx);
	e2b_client_free(c);
	return r;
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
 * Checkpoints (DESIGN 15) are kept in the E2B sandbox, by root, in
 * E2B_CHECKPOINTS: each one GNU tar's incremental dump of /workspace and
 * /home/user against the one it follows (N.tar, the listed-incremental
 * state after it N.snap, its parent N.parent), so a checkpoint costs what
 * changed since the last. "head" is the checkpoint the files are from now:
 * after a restore, the next one follows it, and the ones taken after it
 * stay there. Restoring N extracts its chain from the first, each with
 * --incremental, which also deletes what was not there at that point.
 */
#define E2B_CHECKPOINTS	"/var/lib/holt-checkpoints"

static const char e2b_checkpoint_sh[] =
    "set -e; d=" E2B_CHECKPOINTS "; mkdir -p $d; chmod 700 $d; cd $d\n"
    "last=$(cat last 2>/dev/null || echo 0); n=$((last + 1))\n"
    "head=$(cat head 2>/dev/null || echo 0)\n"
    "rm -f $n.snap; if [ $head -gt 0 ]; then cp $head.snap $n.snap; fi\n"
    "rc=0; tar --create --file=$n.tar --listed-incremental=$n.snap "
    "--no-check-device --verbose -C / workspace home/user >$n.list "
    "2>$n.err || rc=$?\n"
    "if [ $rc -gt 1 ]; then tail -n 1 $n.err; exit 1; fi\n"
    "echo $head >$n.parent; echo $n >last; echo $n >head\n"
    "echo $n $(find /workspace /home/user 2>/dev/null | wc -l) "
    "$(grep -vc '/$' $n.list || true) $(stat -c %s $n.tar)\n";

/* $1's chain, from the first: "chain" to extract in that order. */
#define E2B_CHAIN_SH \
    "set -e; cd " E2B_CHECKPOINTS " 2>/dev/null || " \
    "{ echo \"checkpoint $1: none taken\" >&2; exit 1; }\n" \
    "test -f $1.tar || { echo \"checkpoint $1: no such checkpoint\" >&2; " \
    "exit 1; }\n" \
    "chain=; i=$1; while [ $i -gt 0 ]; do chain=\"$i $chain\"; " \
    "i=$(cat $i.parent); done\n"

static const char e2b_restore_sh[] = E2B_CHAIN_SH
    "for i in $chain; do tar --extract --incremental --file=$i.tar "
    "-C /; done\n"
    "echo $1 >head\n";

/* The files as checkpoint $1 had them, a tar on stdout. */
static const char e2b_fork_sh[] = E2B_CHAIN_SH
    "t=$(mktemp -d)\n"
    "for i in $chain; do tar --extract --incremental --file=$i.tar "
    "-C $t; done\n"
    "tar -C $t -cf - workspace home/user; rm -rf $t\n";

/*
 * A fork's files: a tar of /workspace and /home/user as they are (at 0)
 * or as checkpoint at had them, made by root in the source (a restore of
 * the chain into a directory of its own), kept in a file here, sent to
 * the new sandbox and unpacked there by root.
 */
struct e2b_dump {
	int		 fd;
	int		 failed;
	int		 ended;
	int		 code;
	struct buf	 err;
};

static int
dump_msg(void *arg, const cJSON *msg)
{
	struct e2b_dump	*d = arg;
	const cJSON	*ev = cJSON_GetObjectItem(msg, "event"), *x;
	struct buf	 b;

	if (msg == NULL)
		return 0;
	if ((x = cJSON_GetObjectItem(ev, "data")) != NULL) {
		buf_init(&b);
		if (json_str(x, "stdout") != NULL) {
			if (envd_b64_decode(json_str(x, "stdout"), &b) != 0 ||
			    file_write_all(d->fd, b.data, b.len) != 0)
				d->failed = 1;
		} else if (json_str(x, "stderr") != NULL && d->err.len < 4096)
			envd_b64_decode(json_str(x, "stderr"), &d->err);
		buf_release(&b);
	} else if ((x = cJSON_GetObjectItem(ev, "end")) != NULL) {
		d->ended = 1;
		d->code = end_code(x);
	}
	return 0;
}

#define E2B_FORK_TAR	"/tmp/holt-fork.tar"

static int
e2b_fork_copy(struct sandbox *src, long long at, struct e2b_sbx *dst,
    char **cause)
{
	struct e2b_client	*c;
	struct e2b_sbx		 sbx;
	struct e2b_dump		 d;
	struct stat		 st;
	FILE			*f;
	void			*map;
	char			*script;
	int			 r = -1;

	if ((c = e2b_reach(src, &sbx, cause)) == NULL)
		return -1;
	if ((f = tmpfile()) == NULL)
		fatal("tmpfile");
	memset(&d, 0, sizeof d);
	d.fd = fileno(f);
	buf_init(&d.err);
	script = at > 0 ? xprintf("set -- %lld\n%s", at, e2b_fork_sh) :
	    xstrdup("exec tar -C / -cf - workspace home/user");
	if (e2b_root_start(&sbx, script, 0, dump_msg, &d, cause) != 0)
		e2b_prefix(src, cause);
	else if (!d.ended || d.code != 0 || d.failed) {
		buf_addc(&d.err, '\0');
		*cause = xprintf("sandbox '%s': fork: %s", sandbox_id(src),
		    d.failed ? "writing its copy here" : d.err.data);
	} else if (fstat(d.fd, &st) != 0 || st.st_size == 0 ||
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
	    d.fd, 0)) == MAP_FAILED)
		*cause = xprintf("sandbox '%s': fork: its copy here: %s",
		    sandbox_id(src), strerror(errno));
	else {
		if (e2b_envd_file_put(dst, E2B_FORK_TAR, map, (size_t)st.st_size,
		    cause) == 0 && e2b_sbx_sh(dst, "fork", "unpacking",
		    "tar -x -C / -f " E2B_FORK_TAR "; rc=$?; rm -f "
		    E2B_FORK_TAR "; exit $rc", NULL, cause) == 0)
			r = 0;
		munmap(map, (size_t)st.st_size);
	}
	free(script);
	buf_release(&d.err);
	fclose(f);
	e2b_sbx_release(&sbx);
	e2b_client_free(c);
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
	memset(&co, 0, sizeof co);
	co.template = t != NULL && *t != '\0' ? t : "base";
	co.timeout_s = e2b_timeout_of(o->idle_pause_ms);
	/* A fork: on the same server, of the same template and timeout. */
	if (o->fork_of != NULL) {
		c = e2b_client_for(o->fork_of, cause);
		if ((t = json_str(cJSON_GetObjectItem(sandbox_meta(o->fork_of),
		    "e2b"), "template")) != NULL)
			co.template = t;
		co.timeout_s = e2b_timeout_s(o->fork_of);
	} else
		c = e2b_client_new(NULL, NULL, cause);
	if (c == NULL)
		return -1;
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
	if (e2b_make_workspace(&sbx, cause) != 0 || (o->fork_of != NULL &&
	    e2b_fork_copy(o->fork_of, o->fork_at, &sbx, cause) != 0)) {
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

static enum sandbox_state
e2b_state(struct sandbox *sb)
{
	struct e2b_client	*c;
	cJSON			*j;
	char			*cause = NULL;
	const char		*st;
	int			 gone;
	enum sandbox_state	 r = SANDBOX_STOPPED;
	int			 fresh;

	if (state_cached(sb, &r, &fresh) && fresh)
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

static void *
state_ask(void *arg)
{
	struct sandbox	*sb;
	char		*id = arg, *cause = NULL;

	if ((sb = sandbox_open(id, &cause)) != NULL) {
		e2b_state(sb);
		sandbox_free(sb);
	}
	free(cause);
	free(id);
	return NULL;
}

/*
 * For the server's frequent statuses: the last state E2B gave, at once,
 * asked again in a thread when older than E2B_STATE_TTL_MS; the first
 * time, asked now.
 */
static enum sandbox_state
e2b_state_known(struct sandbox *sb)
{
	enum sandbox_state	 st;
	int			 fresh;
	pthread_t		 t;
	pthread_attr_t		 attr;
	char			*id;

	if (!state_cached(sb, &st, &fresh))
		return e2b_state(sb);
	if (fresh)
		return st;
	state_note(sb, st);	/* one asking at a time: fresh meanwhile */
	id = xstrdup(sandbox_id(sb));
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, state_ask, id) != 0)
		free(id);
	pthread_attr_destroy(&attr);
	return st;
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

	/* Connect resumes a paused one: holt's tools wake it on use. */
	if ((c = e2b_reach(sb, &sbx, cause)) == NULL)
		return -1;
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

static int
e2b_checkpoint(struct sandbox *sb, struct checkpoint_info *ci, char **cause)
{
	struct buf		 out = BUF_INIT;
	unsigned long long	 id, files, changed, bytes;

	if (e2b_root_sh(sb, "checkpoint", e2b_checkpoint_sh, &out, cause) != 0)
		return -1;
	buf_addc(&out, '\0');
	if (sscanf(out.data, "%llu %llu %llu %llu", &id, &files, &changed,
	    &bytes) != 4) {
		*cause = xprintf("sandbox '%s': checkpoint: it said '%.80s'",
		    sandbox_id(sb), out.data);
		buf_release(&out);
		return -1;
	}
	buf_release(&out);
	memset(ci, 0, sizeof *ci);
	ci->id = (long long)id;
	ci->time_ms = json_now_ms();
	ci->files = files;
	ci->changed = changed;
	ci->bytes = bytes;
	return 0;
}

static int
e2b_restore(struct sandbox *sb, long long id, char **cause)
{
	char	*script;
	int	 r;

	/* The id as the script's $1: the script itself stays a constant. */
	script = xprintf("set -- %lld\n%s", id, e2b_restore_sh);
	r = e2b_root_sh(sb, "restore", script, NULL, cause);
	free(script);
	return r;
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
	.state_known = e2b_state_known,
	.connect = e2b_connect,
	.checkpoint = e2b_checkpoint,
	.restore = e2b_restore,
};
