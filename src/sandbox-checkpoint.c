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

/*
 * Test hooks: hold the work until that file exists (60 s at most), with
 * that name and ".held" made meanwhile, so a test knows it is held.
 */
static void
sandbox_test_wait(const char *wait)
{
	char	*held;
	int	 i, fd;

	if (wait == NULL || access(wait, F_OK) == 0)
		return;
	held = xprintf("%s.held", wait);
	if ((fd = open(held, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) != -1)
		close(fd);
	free(held);
	for (i = 0; i < 6000 && access(wait, F_OK) != 0; i++)
		usleep(10000);
}

static char *
sandbox_test_wait_env(const char *name)
{
	const char	*wait = getenv(name);

	return wait != NULL && *wait != '\0' ? xstrdup(wait) : NULL;
}

/* Take one and prune: what a thread may do (no config, no log, no sb). */
static int
sandbox_checkpoint_dir(const char *dir, uint64_t max, const char *wait,
    struct checkpoint_info *ci, char **cause, char **why)
{
	struct checkpoint_store	*st;
	int			 rc;

	sandbox_test_wait(wait);
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
	char	*why = NULL, *wait;
	int	 rc;

	if (sb->prov != &sandbox_local_provider) {
		if (sb->prov->checkpoint == NULL)
			return sandbox_is_local(sb, "checkpoint", cause) - 1;
		return sb->prov->checkpoint(sb, ci, cause);
	}
	wait = sandbox_test_wait_env(CHECKPOINT_TEST_WAIT_ENV);
	rc = sandbox_checkpoint_dir(sb->dir, (uint64_t)config_get_num(
	    "checkpoint_max"), wait, ci, cause, &why);
	free(wait);
	if (why != NULL) {
		log_warnx("sandbox '%s': pruning checkpoints: %s", sb->id, why);
		free(why);
	}
	return rc;
}

/*
 * Work in a thread of its own, off the server's loop (a big workspace
 * would hold every session and screen): it says it is done with a byte
 * on a pipe, and the loop then joins it and calls done, which frees.
 */
struct sandbox_thread {
	pthread_t		 thread;
	int			 threaded;
	int			 fd[2];
	struct event		*ev;
	void			(*work)(void *);
	void			(*done)(void *);
	void			*arg;
};

static void
sandbox_thread_signal(struct sandbox_thread *t)
{
	while (write(t->fd[1], "", 1) == -1 && errno == EINTR)
		;
}

static void *
sandbox_thread_main(void *arg)
{
	struct sandbox_thread	*t = arg;

	t->work(t->arg);
	sandbox_thread_signal(t);
	return NULL;
}

static void
sandbox_thread_end(int fd, short events, void *arg)
{
	struct sandbox_thread	*t = arg;
	char			 c;

	(void)events;
	if (read(fd, &c, 1) != 1)
		return;
	if (t->threaded)
		pthread_join(t->thread, NULL);
	t->done(t->arg);
}

static void
sandbox_thread_clean(struct sandbox_thread *t)
{
	if (t->ev != NULL)
		event_free(t->ev);
	if (t->fd[0] != -1) {
		close(t->fd[0]);
		close(t->fd[1]);
	}
}

/* -1: no pipe or event (clean it all the same). */
static int
sandbox_thread_init(struct sandbox_thread *t, struct event_base *base)
{
	if (pipe2(t->fd, O_CLOEXEC) != 0) {
		t->fd[0] = t->fd[1] = -1;
		return -1;
	}
	t->ev = event_new(base, t->fd[0], EV_READ, sandbox_thread_end, t);
	if (t->ev == NULL || event_add(t->ev, NULL) != 0)
		return -1;
	return 0;
}

/*
 * Run work in a thread (or here and now when not threaded or no thread
 * can be made); done is called from the loop, always later.
 */
static void
sandbox_thread_run(struct sandbox_thread *t, int threaded,
    void (*work)(void *), void (*done)(void *), void *arg)
{
	t->work = work;
	t->done = done;
	t->arg = arg;
	if (threaded && pthread_create(&t->thread, NULL, sandbox_thread_main,
	    t) == 0) {
		t->threaded = 1;
		return;
	}
	work(arg);
	sandbox_thread_signal(t);
}

/* A checkpoint in a thread; the thread has copies of what it needs. */
struct sandbox_checkpoint_job {
	struct sandbox_thread	 t;
	char			*dir, *id, *wait;
	uint64_t		 max;
	int			 rc;
	int			 taken;		/* by the provider, here */
	struct checkpoint_info	 ci;
	char			*cause, *why;
	sandbox_checkpoint_cb	 cb;		/* NULL: cancelled */
	void			*arg;
};

static void
sandbox_checkpoint_work(void *arg)
{
	struct sandbox_checkpoint_job	*j = arg;

	if (!j->taken)
		j->rc = sandbox_checkpoint_dir(j->dir, j->max, j->wait, &j->ci,
		    &j->cause, &j->why);
}

static void
sandbox_checkpoint_job_free(struct sandbox_checkpoint_job *j)
{
	sandbox_thread_clean(&j->t);
	free(j->dir);
	free(j->id);
	free(j->wait);
	free(j->cause);
	free(j->why);
	free(j);
}

static void
sandbox_checkpoint_done(void *arg)
{
	struct sandbox_checkpoint_job	*j = arg;

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
	int				 local;

	local = sb->prov == &sandbox_local_provider;
	j->dir = xstrdup(sb->dir);
	j->id = xstrdup(sb->id);
	j->wait = sandbox_test_wait_env(CHECKPOINT_TEST_WAIT_ENV);
	j->max = (uint64_t)config_get_num("checkpoint_max");
	j->cb = cb;
	j->arg = arg;
	if (sandbox_thread_init(&j->t, base) != 0) {
		sandbox_checkpoint_job_free(j);
		return NULL;
	}
	if (!local) {
		/* Other providers take theirs their own way, here and now. */
		j->rc = sandbox_checkpoint(sb, &j->ci, &j->cause);
		j->taken = 1;
	}
	sandbox_thread_run(&j->t, local, sandbox_checkpoint_work,
	    sandbox_checkpoint_done, j);
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
sandbox_find_checkpoint(struct checkpoint_store *st, long long id,
    const char *sbid, char **cause)
{
	struct checkpoint_info	 ci;

	if (checkpoint_find(st, id, &ci) == 0)
		return 0;
	*cause = xprintf("checkpoint %lld: no such checkpoint (pruned, or "
	    "never taken in sandbox '%s')", id, sbid);
	return -1;
}

/*
 * A restore's first half: the checkpoint is there (st NULL: looked for
 * later, the store being busy), the sandbox stopped.
 */
static int
sandbox_restore_begin(struct sandbox *sb, struct checkpoint_store *st,
    long long id, int *running, char **cause)
{
	*running = sandbox_state(sb) != SANDBOX_STOPPED;
	if (st != NULL && sandbox_find_checkpoint(st, id, sb->id, cause) != 0)
		return -1;
	if (*running && sandbox_stop(sb, cause) != 0)
		return -1;
	return 0;
}

/*
 * Its last, once checkpoint_restore returned rc: record it, drop the
 * journal and start the sandbox again.
 */
static int
sandbox_restore_end(struct sandbox *sb, struct checkpoint_store *st, int rc,
    int running, const char *tag, int (*record)(void *, const char *,
    char **), void *arg, char **cause)
{
	char		*why = NULL;
	long long	 pending;

	if (rc != 0 || (record != NULL && record(arg, tag, cause) != 0)) {
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

static int
sandbox_restore_locked(struct sandbox *sb, struct checkpoint_store *st,
    long long id, const char *tag, int (*record)(void *, const char *,
    char **), void *arg, char **cause)
{
	int	 running, rc;

	if (sandbox_restore_begin(sb, st, id, &running, cause) != 0)
		return -1;
	rc = checkpoint_restore(st, id, tag, cause);
	return sandbox_restore_end(sb, st, rc, running, tag, record, arg,
	    cause);
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

/*
 * A restore in a thread: the loop stops the sandbox, the thread puts the
 * files back, the loop records it and starts the sandbox again. The store
 * stays open (and locked) from first to last.
 */
struct sandbox_restore_job {
	struct sandbox_thread	 t;
	struct sandbox		*sb;
	int			 local;	/* 0: the provider did it */
	struct checkpoint_store	*st;	/* NULL: opened by the thread */
	char			*dir, *sbid;
	long long		 id;
	char			*tag, *wait, *cause;
	int			 rc, running;
	int			(*record)(void *, const char *, char **);
	sandbox_restore_cb	 cb;	/* NULL: cancelled */
	void			*arg;
};

static void
sandbox_restore_work(void *arg)
{
	struct sandbox_restore_job	*j = arg;

	if (!j->local)
		return;
	/* The store was busy (a fork reading it): waited for here. */
	if (j->st == NULL && ((j->st = checkpoint_store_open(j->dir,
	    &j->cause)) == NULL || sandbox_find_checkpoint(j->st, j->id,
	    j->sbid, &j->cause) != 0)) {
		j->rc = -1;
		return;
	}
	sandbox_test_wait(j->wait);
	j->rc = checkpoint_restore(j->st, j->id, j->tag, &j->cause);
}

static void
sandbox_restore_job_free(struct sandbox_restore_job *j)
{
	sandbox_thread_clean(&j->t);
	if (j->st != NULL)
		checkpoint_store_close(j->st);
	free(j->dir);
	free(j->sbid);
	free(j->tag);
	free(j->wait);
	free(j->cause);
	free(j);
}

static void
sandbox_restore_done(void *arg)
{
	struct sandbox_restore_job	*j = arg;
	char				*why = NULL;

	/* Cancelled: the journal has it finished at the sandbox's next open. */
	if (j->cb != NULL && j->st != NULL)
		j->rc = sandbox_restore_end(j->sb, j->st, j->rc, j->running,
		    j->tag, j->record, j->arg, &j->cause);
	else if (j->cb != NULL && j->local && j->running &&
	    sandbox_start(j->sb, &why) != 0)
		free(why);	/* no store: nothing was written */
	if (j->cb != NULL)
		j->cb(j->arg, j->rc == 0 ? NULL : j->cause != NULL ? j->cause :
		    "the restore failed");
	sandbox_restore_job_free(j);
}

/* The store, if no other process has it now (then the thread waits). */
static int
sandbox_restore_open(struct sandbox_restore_job *j, char **cause)
{
	char	*why = NULL;

	if ((j->st = checkpoint_store_open_now(j->dir, &why)) == NULL &&
	    why != NULL) {
		*cause = why;
		return -1;
	}
	return 0;
}

struct sandbox_restore_job *
sandbox_restore_start(struct sandbox *sb, struct event_base *base,
    long long id, const char *tag, int (*record)(void *, const char *,
    char **), sandbox_restore_cb cb, void *arg, char **cause)
{
	struct sandbox_restore_job	*j = xcalloc(1, sizeof *j);
	int				 local;

	local = sb->prov == &sandbox_local_provider;
	j->sb = sb;
	j->local = local;
	j->dir = xstrdup(sb->dir);
	j->sbid = xstrdup(sb->id);
	j->id = id;
	j->tag = tag != NULL ? xstrdup(tag) : NULL;
	j->wait = sandbox_test_wait_env(CHECKPOINT_TEST_RESTORE_WAIT_ENV);
	j->record = record;
	j->cb = cb;
	j->arg = arg;
	if (sandbox_thread_init(&j->t, base) != 0) {
		*cause = xprintf("sandbox '%s': restore: %s", sb->id,
		    strerror(errno));
		goto fail;
	}
	if (!local)	/* the provider's, here and now */
		j->rc = sandbox_restore(sb, id, tag, record, arg, &j->cause);
	else if (sandbox_restore_open(j, cause) != 0 ||
	    sandbox_restore_begin(sb, j->st, id, &j->running, cause) != 0)
		goto fail;
	sandbox_thread_run(&j->t, local, sandbox_restore_work,
	    sandbox_restore_done, j);
	return j;
fail:
	sandbox_restore_job_free(j);
	return NULL;
}

/* The callback is not called; the thread ends on its own. */
void
sandbox_restore_cancel(struct sandbox_restore_job *j)
{
	if (j != NULL)
		j->cb = NULL;
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
