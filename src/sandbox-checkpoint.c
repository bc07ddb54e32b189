/*
 * sandbox-checkpoint.c: checkpoints, restores and forks of whole sandboxes
 * (DESIGN 15), on top of checkpoint.c's store. A restore stops the sandbox
 * first (nothing may write while the files are put back) and starts it
 * again after, which restarts its services on the restored files. A fork
 * is a new sandbox made from a checkpoint, with the same limits, network
 * and services, and a store that shares the checkpoints' objects.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "checkpoint.h"
#include "sandbox.h"
#include "sandbox-local.h"
#include "sandbox-provider.h"

/* Take one and prune: what a thread may do (no config, no log, no sb). */
static int
sandbox_checkpoint_dir(const char *dir, uint64_t max, const char *wait,
    struct checkpoint_info *ci, char **cause, char **why)
{
	struct checkpoint_store	*st;
	int			 rc, i;

	/* Test hook: hold the checkpoint until that file exists. */
	for (i = 0; wait != NULL && *wait != '\0' && i < 6000 &&
	    access(wait, F_OK) != 0; i++)
		usleep(10000);
	if ((st = checkpoint_store_open(dir, cause)) == NULL)
		return -1;
	rc = checkpoint_take(st, ci, cause);
	if (rc == 0 && checkpoint_prune(st, max, why) != 0)
		rc = 0;	/* taken; *why says what pruning met */
	checkpoint_store_close(st);
	return rc;
}

int
sandbox_checkpoint(struct sandbox *sb, struct checkpoint_info *ci,
    char **cause)
{
	char	*why = NULL;
	int	 rc;

	if (sb->prov != &sandbox_local_provider) {
		if (sb->prov->checkpoint == NULL)
			return sandbox_is_local(sb, "checkpoint", cause) - 1;
		return sb->prov->checkpoint(sb, ci, cause);
	}
	rc = sandbox_checkpoint_dir(sb->dir, (uint64_t)config_get_num(
	    "checkpoint_max"), getenv(CHECKPOINT_TEST_WAIT_ENV), ci, cause,
	    &why);
	if (why != NULL) {
		log_warnx("sandbox '%s': pruning checkpoints: %s", sb->id, why);
		free(why);
	}
	return rc;
}

/*
 * A checkpoint in a thread of its own: a big workspace's scan must not
 * hold the server's loop (every session and screen). The thread has
 * copies of what it needs; it says it is done with a byte on a pipe, and
 * the loop then joins it and calls back.
 */
struct sandbox_checkpoint_job {
	char			*dir, *id, *wait;
	uint64_t		 max;
	pthread_t		 thread;
	int			 threaded;
	int			 fd[2];
	struct event		*ev;
	int			 rc;
	struct checkpoint_info	 ci;
	char			*cause, *why;
	sandbox_checkpoint_cb	 cb;		/* NULL: cancelled */
	void			*arg;
};

static void *
sandbox_checkpoint_thread(void *arg)
{
	struct sandbox_checkpoint_job	*j = arg;

	j->rc = sandbox_checkpoint_dir(j->dir, j->max, j->wait, &j->ci,
	    &j->cause, &j->why);
	while (write(j->fd[1], "", 1) == -1 && errno == EINTR)
		;
	return NULL;
}

static void
sandbox_checkpoint_job_free(struct sandbox_checkpoint_job *j)
{
	if (j->ev != NULL)
		event_free(j->ev);
	if (j->fd[0] != -1) {
		close(j->fd[0]);
		close(j->fd[1]);
	}
	free(j->dir);
	free(j->id);
	free(j->wait);
	free(j->cause);
	free(j->why);
	free(j);
}

static void
sandbox_checkpoint_done(int fd, short events, void *arg)
{
	struct sandbox_checkpoint_job	*j = arg;
	char				 c;

	(void)events;
	if (read(fd, &c, 1) != 1)
		return;
	if (j->threaded)
		pthread_join(j->thread, NULL);
	if (j->why != NULL)
		log_warnx("sandbox '%s': pruning checkpoints: %s", j->id, j->why);
	if (j->cb != NULL)
		j->cb(j->arg, j->rc == 0 ? &j->ci : NULL, j->cause);
	sandbox_checkpoint_job_free(j);
}

/*
 * NULL when it cannot be set up (no pipe): the caller takes the
 * checkpoint itself. Else cb is called from the loop, always later.
 */
struct sandbox_checkpoint_job *
sandbox_checkpoint_start(struct sandbox *sb, struct event_base *base,
    sandbox_checkpoint_cb cb, void *arg)
{
	struct sandbox_checkpoint_job	*j = xcalloc(1, sizeof *j);
	const char			*wait = getenv(CHECKPOINT_TEST_WAIT_ENV);

	j->dir = xstrdup(sb->dir);
	j->id = xstrdup(sb->id);
	j->wait = wait != NULL && *wait != '\0' ? xstrdup(wait) : NULL;
	j->max = (uint64_t)config_get_num("checkpoint_max");
	j->cb = cb;
	j->arg = arg;
	if (pipe2(j->fd, O_CLOEXEC) != 0) {
		j->fd[0] = j->fd[1] = -1;
		sandbox_checkpoint_job_free(j);
		return NULL;
	}
	j->ev = event_new(base, j->fd[0], EV_READ, sandbox_checkpoint_done, j);
	if (j->ev == NULL || event_add(j->ev, NULL) != 0) {
		sandbox_checkpoint_job_free(j);
		return NULL;
	}
	if (sb->prov == &sandbox_local_provider &&
	    pthread_create(&j->thread, NULL, sandbox_checkpoint_thread, j) == 0) {
		j->threaded = 1;
		return j;
	}
	/* Other providers take theirs their own way, here and now. */
	j->rc = sandbox_checkpoint(sb, &j->ci, &j->cause);
	while (write(j->fd[1], "", 1) == -1 && errno == EINTR)
		;
	return j;
}

/* The callback is not called; the thread ends on its own. */
void
sandbox_checkpoint_cancel(struct sandbox_checkpoint_job *j)
{
	if (j != NULL)
		j->cb = NULL;
}

static int
sandbox_restore_locked(struct sandbox *sb, struct checkpoint_store *st,
    long long id, const char *tag, int (*record)(void *, const char *,
    char **), void *arg, char **cause)
{
	struct checkpoint_info	 ci;
	char			*why = NULL;
	long long		 pending;
	int			 running = sandbox_state(sb) != SANDBOX_STOPPED;

	if (checkpoint_find(st, id, &ci) != 0) {
		*cause = xprintf("checkpoint %lld: no such checkpoint (pruned, "
		    "or never taken in sandbox '%s')", id, sb->id);
		return -1;
	}
	if (running && sandbox_stop(sb, cause) != 0)
		return -1;
	if (checkpoint_restore(st, id, tag, cause) != 0 ||
	    (record != NULL && record(arg, tag, cause) != 0)) {
		/* Half done stays stopped: the next restore finishes it. */
		if ((why = checkpoint_pending(st, &pending)) != NULL) {
			free(why);
			return -1;
		}
		if (running && sandbox_start(sb, &why) != 0)
			free(why);
		return -1;
	}
	if (checkpoint_restore_done(st) != 0) {
		*cause = xprintf("sandbox '%s': restore journal: %s", sb->id,
		    strerror(errno));
		return -1;
	}
	if (running && sandbox_start(sb, cause) != 0)
		return -1;
	return 0;
}

int
sandbox_restore(struct sandbox *sb, long long id, const char *tag,
    int (*record)(void *, const char *, char **), void *arg, char **cause)
{
	struct checkpoint_store	*st;
	int			 rc;

	if (sb->prov != &sandbox_local_provider) {
		/* The provider's restore is its own to finish after a crash. */
		if (sb->prov->restore == NULL)
			return sandbox_is_local(sb, "restore", cause) - 1;
		if (sb->prov->restore(sb, id, cause) != 0)
			return -1;
		return record != NULL ? record(arg, tag, cause) : 0;
	}
	if ((st = checkpoint_store_open(sb->dir, cause)) == NULL)
		return -1;
	rc = sandbox_restore_locked(sb, st, id, tag, record, arg, cause);
	checkpoint_store_close(st);
	return rc;
}

int
sandbox_recover(struct sandbox *sb, int (*record)(void *, const char *,
    char **), void *arg, char **cause)
{
	struct checkpoint_store	*st;
	char			*tag;
	long long		 id;
	int			 rc = 0;

	if (sb->prov != &sandbox_local_provider)
		return 0;	/* no restore of its files is ever pending here */
	if ((st = checkpoint_store_open(sb->dir, cause)) == NULL)
		return -1;
	if ((tag = checkpoint_pending(st, &id)) != NULL) {
		log_warnx("sandbox '%s': finishing a restore of checkpoint %lld "
		    "cut short", sb->id, id);
		rc = sandbox_restore_locked(sb, st, id, tag, record, arg, cause);
		free(tag);
		/* A restore stops a running sandbox: it ran before the crash. */
		if (rc == 0 && sandbox_state(sb) == SANDBOX_STOPPED)
			rc = sandbox_start(sb, cause);
	}
	checkpoint_store_close(st);
	return rc;
}

/* What a fork's new sandbox is filled with, before its first start. */
struct fork_fill {
	struct sandbox		*src;
	long long		 at;
};

static int
sandbox_fork_fill(const char *dir, void *arg, char **cause)
{
	struct fork_fill	*ff = arg;
	struct checkpoint_store	*st;
	struct checkpoint_info	 ci;
	char			*from, *to, *data;
	struct stat		 sb;
	size_t			 len;
	int			 rc = -1;

	if ((st = checkpoint_store_open(ff->src->dir, cause)) == NULL)
		return -1;
	if (ff->at == 0) {
		/* Now: a checkpoint of the live sandbox, kept like any. */
		if (checkpoint_take(st, &ci, cause) != 0)
			goto out;
		ff->at = ci.id;
	}
	if (checkpoint_export(st, ff->at, dir, cause) != 0 ||
	    checkpoint_store_clone(st, dir, cause) != 0)
		goto out;
	/* The services, so the copy runs what the original ran. */
	from = xprintf("%s/run/envd/services.json", ff->src->dir);
	if ((data = file_read(from, &len, 0)) != NULL) {
		to = xprintf("%s/run/envd/services.json", dir);
		if (file_write_atomic(to, data, len, 0600) != 0)
			log_warn("%s", to);
		/* envd reads it as the sandbox's own uid, where it has one. */
		free(from);
		from = xprintf("%s/run/envd", dir);
		if (stat(from, &sb) == 0 && chown(to, sb.st_uid, sb.st_gid) != 0)
			log_warn("%s", to);
		free(to);
		free(data);
	}
	free(from);
	rc = 0;
out:
	checkpoint_store_close(st);
	return rc;
}

struct sandbox *
sandbox_fork(struct sandbox *src, long long at, const char *name,
    char **cause)
{
	struct sandbox_opts	 o;
	struct fork_fill	 ff;

	memset(&o, 0, sizeof o);
	o.name = name;
	o.net = src->net;
	o.memory = src->memory;
	o.pids = src->pids;
	o.idle_pause_ms = sandbox_idle_pause(src);
	o.forked_from = src->id;
	if (src->prov != &sandbox_local_provider) {
		/* Its provider copies it: on the same one, as it is. */
		if (src->prov->checkpoint == NULL) {
			sandbox_is_local(src, "fork", cause);
			return NULL;
		}
		o.provider = src->provider;
		o.fork_of = src;
		o.fork_at = at;
		return sandbox_create(&o, cause);
	}
	/* The root overlay is exported on top of the same image. */
	if (strcmp(sandbox_image(src), "host") != 0)
		o.image = sandbox_image(src);
	ff.src = src;
	ff.at = at;
	o.fill = sandbox_fork_fill;
	o.fill_arg = &ff;
	o.provider = "local";	/* where its files are, whatever holt.conf says */
	return sandbox_create(&o, cause);
}
