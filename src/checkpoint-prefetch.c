/*
 * checkpoint-prefetch.c: the lstats of a scan (checkpoint-scan.c), made by
 * a few threads at once before it. They are most of a checkpoint's time
 * when little changed; the scan then walks the tree as before, in the
 * same order, and takes each directory's names and its entries' stats
 * from here instead of asking the kernel: its trees, commit and stat
 * cache are those of a scan alone.
 *
 * A work item is a directory (open, with its own stat): a thread reads
 * its names (from the cache when the directory did not change, as the
 * scan would), lstats each, and queues its subdirectories. What changes
 * in between is only a hint missed: the scan asks the kernel for any
 * directory whose stat is not the one seen here.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint-int.h"

#define PREFETCH_MAX	4	/* threads */
#define PREFETCH_QUEUE	256	/* open directories waiting; past: the scan's */

struct pf_item {
	int		 fd;
	char		*path;
	struct stat	 sb;
};

struct pf_pool {
	pthread_mutex_t		 lock;
	pthread_cond_t		 cond;
	struct pf_item		*todo;
	size_t			 ntodo;
	size_t			 active;
	struct ckpt_index	*old;
	dev_t			 dev;
	struct ckpt_prefetch	*out;
};

/* Threads for a scan: HOLT_CHECKPOINT_THREADS, else the CPUs, at most 4. */
static int
prefetch_threads(void)
{
	const char	*s = getenv("HOLT_CHECKPOINT_THREADS");
	long		 n;

	if (s != NULL && *s != '\0')
		n = strtol(s, NULL, 10);
	else
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	return n > PREFETCH_MAX ? PREFETCH_MAX : (int)n;
}

static int
pf_full(struct pf_pool *p)
{
	int	 full;

	pthread_mutex_lock(&p->lock);
	full = p->ntodo >= PREFETCH_QUEUE;
	pthread_mutex_unlock(&p->lock);
	return full;
}

static void
pf_push(struct pf_pool *p, int fd, char *path, const struct stat *sb)
{
	struct pf_item	*it;

	pthread_mutex_lock(&p->lock);
	p->todo = xreallocarray(p->todo, p->ntodo + 1, sizeof *p->todo);
	it = &p->todo[p->ntodo++];
	it->fd = fd;
	it->path = path;
	it->sb = *sb;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/*
 * Queue a subdirectory the scan will walk into, unless too many wait
 * (each holds a descriptor): then the scan stats that one itself.
 */
static void
pf_subdir(struct pf_pool *p, struct ckpt_pdir *d, size_t i)
{
	const struct stat	*sb = &d->st[i].sb;
	int			 fd;

	if (d->st[i].err != 0 || !S_ISDIR(sb->st_mode) || sb->st_dev != p->dev)
		return;
	if (strcmp(d->path, "root") == 0 &&
	    strcmp(d->names[i], CKPT_OVERLAY_WORK) == 0)
		return;
	if (pf_full(p))
		return;
	fd = openat(d->fd, d->names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd != -1)
		pf_push(p, fd, xprintf("%s/%s", d->path, d->names[i]), sb);
}

static struct ckpt_pdir *
pf_dir(struct pf_pool *p, struct pf_item *it)
{
	struct ckpt_pdir	*d = xcalloc(1, sizeof *d);
	struct ckpt_idir	*o = ckpt_index_dir(p->old, it->path);
	size_t			 i;

	d->path = it->path;
	d->fd = it->fd;
	d->sb = it->sb;
	d->scanned = ckpt_now_ns();
	if (ckpt_idir_unchanged(o, &it->sb)) {
		d->names = xcalloc(o->n + 1, sizeof *d->names);
		for (i = 0; i < o->n; i++)
			d->names[i] = o->e[i].name;
		d->n = o->n;
		d->borrowed = 1;
	} else if ((d->names = ckpt_names(it->fd, &d->n)) == NULL)
		d->n = 0;
	d->st = xcalloc(d->n + 1, sizeof *d->st);
	for (i = 0; i < d->n; i++) {
		if (fstatat(it->fd, d->names[i], &d->st[i].sb,
		    AT_SYMLINK_NOFOLLOW) != 0)
			d->st[i].err = errno;
		pf_subdir(p, d, i);
	}
	close(it->fd);
	d->fd = -1;
	return d;
}

static void
pf_done(struct pf_pool *p, struct ckpt_pdir *d)
{
	struct ckpt_prefetch	*out = p->out;

	pthread_mutex_lock(&p->lock);
	out->dirs = xreallocarray(out->dirs, out->n + 1, sizeof *out->dirs);
	out->dirs[out->n++] = d;
	p->active--;
	if (p->active == 0 && p->ntodo == 0)
		pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

static void *
pf_worker(void *arg)
{
	struct pf_pool	*p = arg;
	struct pf_item	 it;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		while (p->ntodo == 0 && p->active != 0)
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->ntodo == 0) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		it = p->todo[--p->ntodo];
		p->active++;
		pthread_mutex_unlock(&p->lock);
		pf_done(p, pf_dir(p, &it));
	}
}

static int
pdir_cmp(const void *va, const void *vb)
{
	const struct ckpt_pdir	*a = *(struct ckpt_pdir *const *)va;
	const struct ckpt_pdir	*b = *(struct ckpt_pdir *const *)vb;

	return strcmp(a->path, b->path);
}

/*
 * Stat the tree under fd (the root named path, its stat sb) with a few
 * threads; 0 and nothing to free when one would do (the scan stats).
 */
int
ckpt_prefetch(struct ckpt_prefetch *out, struct ckpt_index *old, int fd,
    const char *path, const struct stat *sb)
{
	struct pf_pool	 p;
	pthread_t	 t[PREFETCH_MAX];
	int		 n, i, started = 0, dfd;

	memset(out, 0, sizeof *out);
	if ((n = prefetch_threads()) < 2 || (dfd = dup(fd)) == -1)
		return 0;
	memset(&p, 0, sizeof p);
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.cond, NULL);
	p.old = old;
	p.dev = sb->st_dev;
	p.out = out;
	pf_push(&p, dfd, xstrdup(path), sb);
	for (i = 0; i < n; i++) {
		if (pthread_create(&t[started], NULL, pf_worker, &p) == 0)
			started++;
	}
	if (started == 0)
		pf_worker(&p);
	for (i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(p.todo);
	pthread_cond_destroy(&p.cond);
	pthread_mutex_destroy(&p.lock);
	if (out->n > 1)
		qsort(out->dirs, out->n, sizeof *out->dirs, pdir_cmp);
	return 1;
}

/* What was seen of the directory path, if it still has the stat sb. */
struct ckpt_pdir *
ckpt_prefetch_dir(struct ckpt_prefetch *pf, const char *path,
    const struct stat *sb)
{
	struct ckpt_pdir	 key, *kp = &key, **found;

	if (pf->n == 0)
		return NULL;
	key.path = (char *)path;
	found = bsearch(&kp, pf->dirs, pf->n, sizeof *pf->dirs, pdir_cmp);
	if (found == NULL || (*found)->names == NULL ||
	    (*found)->sb.st_dev != sb->st_dev ||
	    (*found)->sb.st_ino != sb->st_ino ||
	    (*found)->sb.st_mtim.tv_sec != sb->st_mtim.tv_sec ||
	    (*found)->sb.st_mtim.tv_nsec != sb->st_mtim.tv_nsec ||
	    (*found)->sb.st_ctim.tv_sec != sb->st_ctim.tv_sec ||
	    (*found)->sb.st_ctim.tv_nsec != sb->st_ctim.tv_nsec)
		return NULL;
	return *found;
}

void
ckpt_prefetch_free(struct ckpt_prefetch *pf)
{
	struct ckpt_pdir	*d;
	size_t			 i, j;

	for (i = 0; i < pf->n; i++) {
		d = pf->dirs[i];
		if (d->names != NULL && !d->borrowed) {
			for (j = 0; j < d->n; j++)
				free(d->names[j]);
		}
		free(d->names);
		free(d->st);
		free(d->path);
		free(d);
	}
	free(pf->dirs);
	memset(pf, 0, sizeof *pf);
}
