/*
 * view-tree.c: the workspace's file tree. The workspace is a directory on
 * this host (STATE.workspace), or for a sandbox on another machine
 * (STATE.sandbox's provider is not local) its /workspace, read through
 * envd (tree-sandbox.c); a directory is read only when it is unfolded,
 * so a tree of 100,000 files costs what is shown. Changes come from the
 * server ("files" messages: envd watches the workspace inside the sandbox,
 * so writes by the agent, by holt sandbox exec or by a service all show);
 * only the changed directories that are loaded are read again, after a
 * short delay that folds a burst of writes into one reload.
 *
 * Git markers (M, A, D, ?) come from libgit2's status against the session's
 * base commit (or HEAD), recomputed in a thread a little after the last
 * change and kept as a sorted list of paths (none for a sandbox elsewhere:
 * its repository is not here). Workspace content is hostile: symbolic
 * links are shown, never followed, and the viewer opens only regular
 * files inside the workspace.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <pthread.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define git_diff git2_diff
#include <git2.h>
#undef git_diff

#include "ui.h"
#include "git.h"
#include "dynlib-git2.h"

#define TREE_RELOAD_MS	100
#define TREE_GIT_MS	400

struct node {
	char		*name;
	struct node	*parent;
	struct node	**kids;
	size_t		 nkids;
	int		 dir;
	int		 link;
	int		 open;
	int		 loaded;
	int		 stale;
	int		 depth;
	int		 keep;		/* tree_load: reused */
};

struct gitmark {
	char		*path;
	char		 mark;
};

struct tree {
	char		*root_path;
	struct tree_sandbox *sbx;	/* NULL: root_path is here */
	char		*base;
	struct node	*root;
	struct node	**flat;
	size_t		 nflat, aflat;
	int		 flat_dirty;
	size_t		 sel, top;
	int		 w, h;

	uint64_t	 reload_at;	/* 0: nothing pending */
	uint64_t	 git_at;

	struct gitmark	*marks;
	size_t		 nmarks;
	int		 git_ok;
	struct gitjob	*job;		/* status running in a thread */
};

static int	tree_git_started;

static void
node_free(struct node *n)
{
	size_t	 i;

	if (n == NULL)
		return;
	for (i = 0; i < n->nkids; i++)
		node_free(n->kids[i]);
	free(n->kids);
	free(n->name);
	free(n);
}

static char *
tree_node_path(struct tree *t, struct node *n, int relative)
{
	struct buf	 b = BUF_INIT;
	struct node	*stack[PATH_MAX / 2], *p;
	int		 depth = 0, i;
	size_t		 len;

	for (p = n; p != NULL && p->parent != NULL && depth < (int)nitems(stack);
	    p = p->parent)
		stack[depth++] = p;
	if (!relative)
		buf_adds(&b, t->sbx != NULL ? "/workspace" : t->root_path);
	for (i = depth - 1; i >= 0; i--) {
		if (b.len > 0)
			buf_addc(&b, '/');
		buf_adds(&b, stack[i]->name);
	}
	if (b.len == 0)
		buf_adds(&b, relative ? "" : "/");
	return buf_detach(&b, &len);
}

static int
tree_cmp(const void *a, const void *b)
{
	const struct node	*x = *(struct node *const *)a;
	const struct node	*y = *(struct node *const *)b;

	if (x->dir != y->dir)
		return y->dir - x->dir;
	return strcmp(x->name, y->name);
}

struct kids {
	struct node	**v;
	size_t		 n, a;
};

/* Child name of n, into k: the node n had (its folds kept), or a new one. */
static void
tree_kid(struct node *n, struct kids *k, const char *name, int dir, int link)
{
	struct node	*c, key, *kp = &key, **found = NULL;
	size_t		 i;

	if (n->parent == NULL && strcmp(name, ".git") == 0)
		return;
	key.name = (char *)name;
	for (i = 0; i < 2 && found == NULL && n->nkids > 0; i++) {
		key.dir = (int)i;
		found = bsearch(&kp, n->kids, n->nkids, sizeof *n->kids,
		    tree_cmp);
	}
	if (found != NULL && (*found)->dir == dir) {
		c = *found;
		c->keep = 1;
	} else {
		c = xcalloc(1, sizeof *c);
		c->name = xstrdup(name);
		c->dir = dir;
		c->link = link;
	}
	c->parent = n;
	c->depth = n->depth + 1;
	if (k->n == k->a) {
		k->a = k->a ? k->a * 2 : 32;
		k->v = xreallocarray(k->v, k->a, sizeof *k->v);
	}
	k->v[k->n++] = c;
}

/* The entries of directory path on this host. */
static void
tree_read_here(const char *path, struct node *n, struct kids *k)
{
	DIR		*d;
	struct dirent	*de;
	struct stat	 st;
	int		 dfd;

	if ((d = opendir(path)) == NULL)
		return;
	dfd = dirfd(d);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_type == DT_UNKNOWN) {
			if (fstatat(dfd, de->d_name, &st,
			    AT_SYMLINK_NOFOLLOW) == -1)
				continue;
			de->d_type = S_ISDIR(st.st_mode) ? DT_DIR :
			    S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
		}
		tree_kid(n, k, de->d_name, de->d_type == DT_DIR,
		    de->d_type == DT_LNK);
	}
	closedir(d);
}

/* The entries of directory path in a sandbox elsewhere, through envd. */
static void
tree_read_sandbox(struct tree *t, const char *path, struct node *n,
    struct kids *k)
{
	cJSON		*entries;
	const cJSON	*e;
	const char	*name, *type;
	char		*cause = NULL;

	if ((entries = tree_sandbox_list(t->sbx, path, &cause)) == NULL) {
		log_debug("files: %s: %s", path, cause);
		free(cause);
		return;
	}
	cJSON_ArrayForEach(e, entries) {
		if ((name = json_str(e, "path")) == NULL ||
		    strchr(name, '/') != NULL)
			continue;
		type = json_str(e, "type") != NULL ? json_str(e, "type") : "";
		tree_kid(n, k, name, strcmp(type, "dir") == 0,
		    strcmp(type, "symlink") == 0);
	}
	cJSON_Delete(entries);
}

/* Read a directory, keeping the nodes (and their folds) of known names. */
static void
tree_load(struct tree *t, struct node *n)
{
	struct kids	 k = { NULL, 0, 0 };
	size_t		 i;
	char		*path;

	path = tree_node_path(t, n, 0);
	n->loaded = 1;
	n->stale = 0;
	if (t->sbx != NULL)
		tree_read_sandbox(t, path, n, &k);
	else
		tree_read_here(path, n, &k);
	free(path);
	for (i = 0; i < n->nkids; i++) {
		if (n->kids[i]->keep)
			n->kids[i]->keep = 0;
		else
			node_free(n->kids[i]);
	}
	free(n->kids);
	if (k.n > 1)
		qsort(k.v, k.n, sizeof *k.v, tree_cmp);
	n->kids = k.v;
	n->nkids = k.n;
	t->flat_dirty = 1;
}

static void
tree_flatten_node(struct tree *t, struct node *n)
{
	size_t	 i;

	for (i = 0; i < n->nkids; i++) {
		if (t->nflat == t->aflat) {
			t->aflat = t->aflat ? t->aflat * 2 : 256;
			t->flat = xreallocarray(t->flat, t->aflat,
			    sizeof *t->flat);
		}
		t->flat[t->nflat++] = n->kids[i];
		if (n->kids[i]->dir && n->kids[i]->open)
			tree_flatten_node(t, n->kids[i]);
	}
}

static void
tree_flatten(struct tree *t)
{
	struct node	*selected = NULL;
	size_t		 i;

	if (t->sel < t->nflat)
		selected = t->flat[t->sel];
	t->nflat = 0;
	if (t->root != NULL)
		tree_flatten_node(t, t->root);
	t->flat_dirty = 0;
	/* Keep the selection on the same node when it is still there. */
	for (i = 0; selected != NULL && i < t->nflat; i++) {
		if (t->flat[i] == selected) {
			t->sel = i;
			return;
		}
	}
	if (t->sel >= t->nflat)
		t->sel = t->nflat > 0 ? t->nflat - 1 : 0;
}

/* -------------------------------------------------------------------- */
/* Git status. */

static int
tree_mark_cmp(const void *a, const void *b)
{
	return strcmp(((const struct gitmark *)a)->path,
	    ((const struct gitmark *)b)->path);
}

static void
tree_marks_clear(struct tree *t)
{
	size_t	 i;

	for (i = 0; i < t->nmarks; i++)
		free(t->marks[i].path);
	free(t->marks);
	t->marks = NULL;
	t->nmarks = 0;
}

/*
 * The status runs in a thread: on a large workspace it reads every
 * directory, which must not stall the screen. One job at a time; the view
 * takes its result on a tick, or leaves it to the thread to free when the
 * view went away first.
 */
struct gitjob {
	pthread_mutex_t	 lock;
	char		*root;
	char		*base;
	struct gitmark	*marks;
	size_t		 nmarks;
	int		 ok;
	int		 done;
	int		 abandoned;
};

static void
gitjob_free(struct gitjob *j)
{
	size_t	 i;

	for (i = 0; i < j->nmarks; i++)
		free(j->marks[i].path);
	free(j->marks);
	free(j->root);
	free(j->base);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

static void
tree_git_compute(struct gitjob *j)
{
	git_repository		*repo = NULL;
	git_status_list		*list = NULL;
	git_status_options	 opts;
	git_object		*obj = NULL;
	git_tree		*base = NULL;
	const git_status_entry	*e;
	const char		*path;
	size_t			 i, n, a = 0;
	char			 mark;

	if (git_repository_open_ext(&repo, j->root,
	    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0)
		return;
	j->ok = 1;
	git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION);
	opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED |
	    GIT_STATUS_OPT_RENAMES_HEAD_TO_INDEX;
	if (j->base != NULL && git_revparse_single(&obj, repo, j->base) == 0 &&
	    git_object_peel((git_object **)&base, obj, GIT_OBJECT_TREE) == 0)
		opts.baseline = base;
	if (git_status_list_new(&list, repo, &opts) != 0)
		goto out;
	n = git_status_list_entrycount(list);
	for (i = 0; i < n; i++) {
		e = git_status_byindex(list, i);
		path = NULL;
		mark = 0;
		if (e->status & (GIT_STATUS_WT_NEW)) {
			mark = '?';
			path = e->index_to_workdir->new_file.path;
		} else if (e->status & (GIT_STATUS_INDEX_NEW)) {
			mark = 'A';
			path = e->head_to_index->new_file.path;
		} else if (e->status & (GIT_STATUS_WT_DELETED |
		    GIT_STATUS_INDEX_DELETED)) {
			mark = 'D';
			path = e->index_to_workdir != NULL ?
			    e->index_to_workdir->old_file.path :
			    e->head_to_index->old_file.path;
		} else if (e->status & (GIT_STATUS_WT_MODIFIED |
		    GIT_STATUS_INDEX_MODIFIED | GIT_STATUS_WT_RENAMED |
		    GIT_STATUS_INDEX_RENAMED | GIT_STATUS_WT_TYPECHANGE |
		    GIT_STATUS_INDEX_TYPECHANGE)) {
			mark = 'M';
			path = e->index_to_workdir != NULL ?
			    e->index_to_workdir->new_file.path :
			    e->head_to_index->new_file.path;
		}
		if (path == NULL || mark == 0)
			continue;
		if (j->nmarks == a) {
			a = a ? a * 2 : 64;
			j->marks = xreallocarray(j->marks, a, sizeof *j->marks);
		}
		j->marks[j->nmarks].path = xstrdup(path);
		j->marks[j->nmarks].mark = mark;
		j->nmarks++;
	}
	if (j->nmarks > 1)
		qsort(j->marks, j->nmarks, sizeof *j->marks, tree_mark_cmp);
out:
	git_status_list_free(list);
	git_tree_free(base);
	git_object_free(obj);
	git_repository_free(repo);
}

static void *
tree_git_thread(void *arg)
{
	struct gitjob	*j = arg;
	int		 abandoned;

	tree_git_compute(j);
	/* A status of a big tree leaves this thread's heap full of freed
	 * pages; give them back, the screen's RSS is a budget. */
	malloc_trim(0);
	pthread_mutex_lock(&j->lock);
	j->done = 1;
	abandoned = j->abandoned;
	pthread_mutex_unlock(&j->lock);
	if (abandoned)
		gitjob_free(j);
	return NULL;
}

static void
tree_git_start(struct tree *t)
{
	struct gitjob	*j;
	pthread_t	 th;
	pthread_attr_t	 attr;

	if (t->job != NULL) {
		t->git_at = mono_ms() + TREE_GIT_MS;	/* after this one */
		return;
	}
	t->git_at = 0;
	if (!tree_git_started) {
		git_lib_setup();
		tree_git_started = 1;
	}
	j = xcalloc(1, sizeof *j);
	pthread_mutex_init(&j->lock, NULL);
	j->root = xstrdup(t->root_path);
	j->base = t->base != NULL ? xstrdup(t->base) : NULL;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, tree_git_thread, j) != 0) {
		tree_git_compute(j);	/* no thread: do it here */
		j->done = 1;
	}
	pthread_attr_destroy(&attr);
	t->job = j;
}

/* The job's result, when it is there: 1 if the marks changed. */
static int
tree_git_collect(struct tree *t)
{
	struct gitjob	*j = t->job;
	int		 done;

	if (j == NULL)
		return 0;
	pthread_mutex_lock(&j->lock);
	done = j->done;
	pthread_mutex_unlock(&j->lock);
	if (!done)
		return 0;
	tree_marks_clear(t);
	t->marks = j->marks;
	t->nmarks = j->nmarks;
	t->git_ok = j->ok;
	j->marks = NULL;
	j->nmarks = 0;
	gitjob_free(j);
	t->job = NULL;
	return 1;
}

static void
tree_git_abandon(struct tree *t)
{
	struct gitjob	*j = t->job;
	int		 done;

	if (j == NULL)
		return;
	pthread_mutex_lock(&j->lock);
	done = j->done;
	j->abandoned = 1;
	pthread_mutex_unlock(&j->lock);
	if (done)
		gitjob_free(j);
	t->job = NULL;
}

/* The marker of a file, or of a directory with a change below it. */
static char
tree_mark(struct tree *t, struct node *n)
{
	char	*rel, *dirp;
	size_t	 lo = 0, hi = t->nmarks, mid, len;
	int	 c;
	char	 m = 0;

	if (t->nmarks == 0)
		return 0;
	rel = tree_node_path(t, n, 1);
	dirp = n->dir ? xprintf("%s/", rel) : xstrdup(rel);
	len = strlen(dirp);
	while (lo < hi) {	/* the first path >= dirp */
		mid = (lo + hi) / 2;
		if (strcmp(t->marks[mid].path, dirp) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->nmarks) {
		c = strncmp(t->marks[lo].path, dirp, len);
		if (c == 0 && (n->dir || t->marks[lo].path[len] == '\0'))
			m = (n->dir && strcmp(t->marks[lo].path, dirp) != 0) ?
			    'M' : t->marks[lo].mark;
	}
	free(rel);
	free(dirp);
	return m;
}

/* -------------------------------------------------------------------- */

static void
tree_reset(struct tree *t)
{
	tree_git_abandon(t);
	node_free(t->root);
	t->root = NULL;
	t->nflat = 0;
	t->sel = t->top = 0;
	tree_marks_clear(t);
}

void
view_tree_set_root(struct pane *p, const char *workspace, const char *base,
    const char *sandbox, const char *state)
{
	struct tree	*t = p->data;
	int		 running = state == NULL || strcmp(state, "running") == 0;

	if (workspace == NULL || *workspace == '\0')
		return;
	if (base != NULL && (t->base == NULL || strcmp(t->base, base) != 0)) {
		free(t->base);
		t->base = xstrdup(base);
		t->git_at = mono_ms();
	}
	if (t->root_path != NULL && strcmp(t->root_path, workspace) == 0) {
		/* A sandbox elsewhere that runs again: read it again. */
		if (t->sbx != NULL && tree_sandbox_running(t->sbx, running) &&
		    t->root != NULL) {
			t->root->stale = 1;
			t->reload_at = mono_ms();
		}
		return;
	}
	tree_reset(t);
	tree_sandbox_free(t->sbx);
	if ((t->sbx = tree_sandbox_open(sandbox)) != NULL)
		tree_sandbox_running(t->sbx, running);
	free(t->root_path);
	t->root_path = xstrdup(workspace);
	t->root = xcalloc(1, sizeof *t->root);
	t->root->name = xstrdup("");
	t->root->dir = 1;
	t->root->open = 1;
	tree_load(t, t->root);
	t->git_at = mono_ms();
	pane_set_title(p, "files");
	pane_dirty(p);
}

/* The node of a directory (relative path) if it is loaded, else NULL. */
static struct node *
tree_find_dir(struct tree *t, const char *rel)
{
	struct node	*n = t->root, key, *kp = &key, **found;
	const char	*slash;
	char		*name;

	while (n != NULL && *rel != '\0') {
		if (!n->loaded)
			return NULL;
		if ((slash = strchr(rel, '/')) == NULL)
			slash = rel + strlen(rel);
		name = xstrndup(rel, (size_t)(slash - rel));
		key.name = name;
		key.dir = 1;
		found = n->nkids > 0 ? bsearch(&kp, n->kids, n->nkids,
		    sizeof *n->kids, tree_cmp) : NULL;
		free(name);
		n = found != NULL ? *found : NULL;
		rel = *slash == '/' ? slash + 1 : slash;
	}
	return n != NULL && n->loaded ? n : NULL;
}

static void
tree_stale_all(struct node *n)
{
	size_t	 i;

	if (!n->loaded)
		return;
	n->stale = 1;
	for (i = 0; i < n->nkids; i++) {
		if (n->kids[i]->dir)
			tree_stale_all(n->kids[i]);
	}
}

void
view_tree_changed(struct pane *p, const cJSON *dirs, int all)
{
	struct tree	*t = p->data;
	const cJSON	*d;
	struct node	*n;
	uint64_t	 now = mono_ms();

	if (t->root == NULL)
		return;
	if (all)
		tree_stale_all(t->root);
	cJSON_ArrayForEach(d, dirs) {
		if (cJSON_IsString(d) && (n = tree_find_dir(t,
		    d->valuestring)) != NULL)
			n->stale = 1;
	}
	if (t->reload_at == 0)
		t->reload_at = now + TREE_RELOAD_MS;
	t->git_at = now + TREE_GIT_MS;
}

static void
tree_reload_stale(struct tree *t, struct node *n)
{
	size_t	 i;

	if (n->stale)
		tree_load(t, n);
	for (i = 0; i < n->nkids; i++) {
		if (n->kids[i]->dir && n->kids[i]->open)
			tree_reload_stale(t, n->kids[i]);
	}
}

static void
view_tree_tick(struct pane *p, uint64_t now)
{
	struct tree	*t = p->data;

	if (t->root == NULL)
		return;
	if (t->reload_at != 0 && now >= t->reload_at) {
		t->reload_at = 0;
		tree_reload_stale(t, t->root);
		pane_dirty(p);
	}
	if (t->git_at != 0 && now >= t->git_at && t->sbx == NULL)
		tree_git_start(t);
	if (tree_git_collect(t))
		pane_dirty(p);
}

static void
view_tree_init(struct pane *p)
{
	struct tree	*t = xcalloc(1, sizeof *t);

	t->w = 20;
	t->h = 10;
	p->data = t;
	pane_set_title(p, "files");
}

static void
view_tree_free(struct pane *p)
{
	struct tree	*t = p->data;

	if (t == NULL)
		return;
	tree_reset(t);
	tree_sandbox_free(t->sbx);
	free(t->flat);
	free(t->root_path);
	free(t->base);
	free(t);
	p->data = NULL;
}

static void
view_tree_resize(struct pane *p, int w, int h)
{
	struct tree	*t = p->data;

	t->w = w;
	t->h = h;
}

static void
view_tree_draw(struct pane *p, WINDOW *win)
{
	struct tree	*t = p->data;
	struct node	*n;
	enum ui_role	 role, mrole;
	const char	*fold;
	size_t		 i;
	int		 y, x, focused = (p->tui != NULL);
	char		 m, ms[2];

	if (t->root == NULL) {
		text_draw_role(win, 0, 0, "(no workspace)", 14, t->w, ROLE_DIM);
		return;
	}
	if (t->flat_dirty)
		tree_flatten(t);
	if (t->nflat == 0) {
		text_draw_role(win, 0, 0, "(empty)", 7, t->w, ROLE_DIM);
		return;
	}
	if (t->sel < t->top)
		t->top = t->sel;
	if (t->sel >= t->top + (size_t)t->h)
		t->top = t->sel - (size_t)t->h + 1;
	for (y = 0, i = t->top; i < t->nflat && y < t->h; i++, y++) {
		n = t->flat[i];
		x = (n->depth - 1) * 2;
		if (x > t->w / 2)
			x = t->w / 2;
		role = n->dir ? ROLE_DIR : n->link ? ROLE_DIM : ROLE_NORMAL;
		if (i == t->sel && focused)
			text_clear_to(win, y, 0, t->w, theme_attr(ROLE_SELECTED));
		fold = n->dir ? (n->open ? "▾ " : "▸ ") : "  ";
		x += text_draw_role(win, y, x, fold, strlen(fold), t->w - x,
		    i == t->sel ? ROLE_SELECTED : ROLE_DIM);
		x += text_draw(win, y, x, n->name, strlen(n->name), t->w - x - 2,
		    i == t->sel ? theme_attr(ROLE_SELECTED) : theme_attr(role));
		if (n->dir && x < t->w - 2)
			text_draw(win, y, x, "/", 1, 1, i == t->sel ?
			    theme_attr(ROLE_SELECTED) : theme_attr(role));
		if ((m = tree_mark(t, n)) != 0) {
			ms[0] = m;
			ms[1] = '\0';
			mrole = m == 'M' ? ROLE_GIT_MODIFIED : m == 'A' ?
			    ROLE_GIT_ADDED : m == 'D' ? ROLE_GIT_DELETED :
			    ROLE_GIT_UNTRACKED;
			text_draw_role(win, y, t->w - 1, ms, 1, 1, mrole);
		}
	}
}

/* A file of a sandbox elsewhere: envd reads it there, as a file op. */
static void
tree_open_sandbox_file(struct pane *p, struct node *n)
{
	struct tree	*t = p->data;
	char		*path, *rel, *data, *cause = NULL;
	size_t		 len;

	path = tree_node_path(t, n, 0);
	rel = tree_node_path(t, n, 1);
	if (n->dir || n->link)
		tui_flash(p->tui, "'%s': not a regular file in the workspace",
		    rel);
	else if ((data = tree_sandbox_read(t->sbx, path, &len, &cause)) ==
	    NULL) {
		tui_flash(p->tui, "'%s': %s", rel, cause);
		free(cause);
	} else
		viewer_open_data(p->tui, data, len, rel);
	free(path);
	free(rel);
}

static void
tree_open_file(struct pane *p, struct node *n)
{
	struct tree	*t = p->data;
	char		*path, *rel, *real, *rroot;
	struct stat	 st;

	if (t->sbx != NULL) {
		tree_open_sandbox_file(p, n);
		return;
	}
	path = tree_node_path(t, n, 0);
	rel = tree_node_path(t, n, 1);
	real = realpath(path, NULL);
	rroot = realpath(t->root_path, NULL);
	if (real == NULL || rroot == NULL || strncmp(real, rroot,
	    strlen(rroot)) != 0 || real[strlen(rroot)] != '/' ||
	    lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
		tui_flash(p->tui, "'%s': not a regular file in the workspace",
		    rel);
	else
		viewer_open(p->tui, real, rel);
	free(real);
	free(rroot);
	free(path);
	free(rel);
}

static void
tree_fold(struct tree *t, struct node *n, int open)
{
	if (!n->dir || n->open == open)
		return;
	n->open = open;
	if (open && (!n->loaded || n->stale))
		tree_load(t, n);
	t->flat_dirty = 1;
}

static int
view_tree_key(struct pane *p, int key, enum ui_action a)
{
	struct tree	*t = p->data;
	struct node	*n;
	size_t		 page = t->h > 1 ? (size_t)t->h - 1 : 1;

	if (t->flat_dirty)
		tree_flatten(t);
	n = t->sel < t->nflat ? t->flat[t->sel] : NULL;
	switch (a) {
	case ACT_UP:
		if (key == 0 && t->top > 0)
			t->top--;
		if (t->sel > 0)
			t->sel--;
		break;
	case ACT_DOWN:
		if (t->sel + 1 < t->nflat)
			t->sel++;
		break;
	case ACT_PAGE_UP:
		t->sel = t->sel > page ? t->sel - page : 0;
		break;
	case ACT_PAGE_DOWN:
		t->sel = t->sel + page < t->nflat ? t->sel + page :
		    (t->nflat > 0 ? t->nflat - 1 : 0);
		break;
	case ACT_HOME:
		t->sel = 0;
		break;
	case ACT_END:
		t->sel = t->nflat > 0 ? t->nflat - 1 : 0;
		break;
	case ACT_ENTER:
		if (n == NULL)
			break;
		if (n->dir)
			tree_fold(t, n, !n->open);
		else
			tree_open_file(p, n);
		break;
	case ACT_LEFT:
		if (n == NULL)
			break;
		if (n->dir && n->open)
			tree_fold(t, n, 0);
		else if (n->parent != NULL && n->parent != t->root) {
			tree_fold(t, n->parent, 0);
			tree_flatten(t);
			for (t->sel = 0; t->sel < t->nflat &&
			    t->flat[t->sel] != n->parent; t->sel++)
				;
		}
		break;
	case ACT_RIGHT:
		if (n != NULL && n->dir)
			tree_fold(t, n, 1);
		break;
	default:
		return 0;
	}
	pane_dirty(p);
	return 1;
}

/* A click selects a row; on the selected row it opens or folds it. */
static void
view_tree_click(struct pane *p, int x, int y, int again)
{
	struct tree	*t = p->data;
	size_t		 i = t->top + (size_t)y;

	if (t->flat_dirty)
		tree_flatten(t);
	if (y < 0 || i >= t->nflat)
		return;
	if (again && i == t->sel)
		view_tree_key(p, 0, ACT_ENTER);
	else
		t->sel = i;
}

const struct view view_tree = {
	"files", SCOPE_TREE, view_tree_init, view_tree_free, view_tree_draw,
	view_tree_key, view_tree_resize, NULL, view_tree_tick, view_tree_click
};
