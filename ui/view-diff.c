/*
 * view-diff.c: the full-screen diff (D): the session's changes against its
 * base commit, file by file and hunk by hunk; n/p move between hunks, r
 * reverts a hunk (after a y), c sends a comment on a hunk to the agent, C
 * commits, P pushes and opens a pull request (in a thread: the network
 * must not hold the screen).
 *
 * The diff itself comes from the git module (git_diff, git_revert_hunk in
 * src/git.h), as JSON: {"base","files":[{"path","status","binary","hunks":
 * [{"header","lines":[{"origin","text"}]}]}]}. This view never computes a
 * diff.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"
#include "git.h"

enum drow_kind { DR_FILE, DR_HUNK, DR_LINE, DR_NOTE, DR_LIST };

struct drow {
	enum drow_kind	 kind;
	const char	*text;
	char		 origin;
	int		 file, hunk;	/* indexes in the JSON */
	long		 oldno, newno;	/* line numbers, 0: none */
	int		 add, del;	/* DR_LIST: the file's counts */
};

struct diffview {
	cJSON		*diff;
	struct drow	*rows;
	size_t		 nrows, arows;
	size_t		*hunks;		/* row index of each hunk header */
	size_t		 nhunks;
	size_t		*files;		/* row index of each file header */
	size_t		 nfiles;
	size_t		 cur;		/* current hunk */
	size_t		 top;
	int		 h;
	int		 confirm;	/* r was pressed: waiting for y */
	char		*error;
};

static void
diff_row(struct diffview *d, enum drow_kind k, const char *text, char origin,
    int file, int hunk)
{
	if (d->nrows == d->arows) {
		d->arows = d->arows ? d->arows * 2 : 256;
		d->rows = xreallocarray(d->rows, d->arows, sizeof *d->rows);
	}
	d->rows[d->nrows].kind = k;
	d->rows[d->nrows].text = text != NULL ? text : "";
	d->rows[d->nrows].origin = origin;
	d->rows[d->nrows].file = file;
	d->rows[d->nrows].hunk = hunk;
	d->rows[d->nrows].oldno = d->rows[d->nrows].newno = 0;
	d->rows[d->nrows].add = d->rows[d->nrows].del = 0;
	d->nrows++;
}

/*
 * The file list at the top: a row per file with its status and counts;
 * 1-9 jump to a file, { and } to the previous and next.
 */
static void
diff_list(struct diffview *d, const cJSON *files)
{
	const cJSON	*f, *h, *l;
	const char	*o;
	int		 fi = 0;

	cJSON_ArrayForEach(f, files) {
		o = json_str(f, "status");
		diff_row(d, DR_LIST, json_str(f, "path"), o != NULL && *o !=
		    '\0' ? (char)toupper((unsigned char)*o) : 'M', fi++, -1);
		cJSON_ArrayForEach(h, cJSON_GetObjectItem(f, "hunks")) {
			cJSON_ArrayForEach(l, cJSON_GetObjectItem(h, "lines")) {
				o = json_str(l, "origin");
				if (o != NULL && *o == '+')
					d->rows[d->nrows - 1].add++;
				else if (o != NULL && *o == '-')
					d->rows[d->nrows - 1].del++;
			}
		}
	}
	if (fi > 0)
		diff_row(d, DR_NOTE, "", ' ', -1, -1);
}

static void
diff_build(struct diffview *d)
{
	const cJSON	*files, *f, *hunks, *h, *lines, *l;
	const char	*o;
	int		 fi = 0, hi;
	long		 oldno, newno;
	struct drow	*r;

	d->nrows = 0;
	free(d->hunks);
	d->hunks = NULL;
	d->nhunks = 0;
	free(d->files);
	d->files = NULL;
	d->nfiles = 0;
	files = cJSON_GetObjectItem(d->diff, "files");
	diff_list(d, files);
	cJSON_ArrayForEach(f, files) {
		d->files = xreallocarray(d->files, d->nfiles + 1,
		    sizeof *d->files);
		d->files[d->nfiles++] = d->nrows;
		o = json_str(f, "status");
		diff_row(d, DR_FILE, json_str(f, "path"), o != NULL && *o != '\0' ?
		    (char)toupper((unsigned char)*o) : 'M', fi, -1);
		if (json_bool(f, "binary", 0))
			diff_row(d, DR_NOTE, "binary file", ' ', fi, -1);
		hunks = cJSON_GetObjectItem(f, "hunks");
		hi = 0;
		cJSON_ArrayForEach(h, hunks) {
			d->hunks = xreallocarray(d->hunks, d->nhunks + 1,
			    sizeof *d->hunks);
			d->hunks[d->nhunks++] = d->nrows;
			diff_row(d, DR_HUNK, json_str(h, "header"), '@', fi,
			    hi);
			/* "@@ -12,5 +12,6 @@": where the numbers start. */
			oldno = newno = 0;
			if ((o = json_str(h, "header")) != NULL &&
			    (o = strchr(o, '-')) != NULL) {
				oldno = strtol(o + 1, NULL, 10);
				if ((o = strchr(o, '+')) != NULL)
					newno = strtol(o + 1, NULL, 10);
			}
			lines = cJSON_GetObjectItem(h, "lines");
			cJSON_ArrayForEach(l, lines) {
				o = json_str(l, "origin");
				diff_row(d, DR_LINE, json_str(l, "text"),
				    o != NULL && *o != '\0' ? *o : ' ', fi, hi);
				r = &d->rows[d->nrows - 1];
				if (r->origin != '+' && oldno > 0)
					r->oldno = oldno++;
				if (r->origin != '-' && newno > 0)
					r->newno = newno++;
			}
			hi++;
		}
		fi++;
	}
	if (d->cur >= d->nhunks)
		d->cur = d->nhunks > 0 ? d->nhunks - 1 : 0;
}

static int
diff_load(struct tui *t, struct diffview *d)
{
	const cJSON	*st = tui_state(t);
	const char	*ws = json_str(st, "workspace");
	char		*cause = NULL;
	cJSON		*j;

	free(d->error);
	d->error = NULL;
	if (ws == NULL) {
		d->error = xstrdup("diff: the session has no workspace");
		return -1;
	}
	if ((j = git_diff(ws, json_str(st, "base_commit"), &cause)) == NULL) {
		d->error = xprintf("diff: %s", cause != NULL ? cause : "failed");
		free(cause);
		return -1;
	}
	cJSON_Delete(d->diff);
	d->diff = j;
	diff_build(d);
	return 0;
}

static void
diff_draw(struct overlay *o, WINDOW *win, int w, int h)
{
	struct diffview	*d = o->data;
	struct drow	*r;
	struct buf	 b = BUF_INIT;
	enum ui_role	 role;
	size_t		 i, cur_row = (size_t)-1;
	int		 y, x;
	char		 lead[2] = { 0, 0 };
	const char	*hint;

	d->h = h - 2;
	wattr_set(win, theme_attr(ROLE_BORDER_FOCUS) & ~A_COLOR,
	    (short)theme_pair(ROLE_BORDER_FOCUS), NULL);
	box(win, 0, 0);
	buf_addf(&b, " diff against %s ", json_str(d->diff, "base") != NULL ?
	    json_str(d->diff, "base") : "the base commit");
	if (d->nhunks > 0)
		buf_addf(&b, "· hunk %zu of %zu ", d->cur + 1, d->nhunks);
	text_draw_role(win, 0, 2, buf_str(&b), b.len, w - 4, ROLE_TITLE);
	if (d->confirm)
		hint = " revert this hunk? y: yes, any other key: no ";
	else
		hint = " n/p hunk · r revert · c comment · C commit · "
		    "P pull request · L to the source repository · q close ";
	text_draw_role(win, h - 1, 2, hint, strlen(hint), w - 4,
	    d->confirm ? ROLE_PENDING : ROLE_DIM);
	if (d->error != NULL) {
		text_draw_role(win, 1, 2, d->error, strlen(d->error), w - 4,
		    ROLE_ERROR);
		buf_release(&b);
		return;
	}
	if (d->nrows == 0) {
		text_draw_role(win, 1, 2, "no changes", 10, w - 4, ROLE_DIM);
		buf_release(&b);
		return;
	}
	if (d->nhunks > 0)
		cur_row = d->hunks[d->cur];
	if (d->top >= d->nrows)
		d->top = d->nrows - 1;
	for (y = 1, i = d->top; i < d->nrows && y < h - 1; i++, y++) {
		r = &d->rows[i];
		x = 2;
		switch (r->kind) {
		case DR_FILE:
			lead[0] = r->origin;
			text_draw_role(win, y, x, lead, 1, 1, ROLE_GIT_MODIFIED);
			text_draw_role(win, y, x + 2, r->text, strlen(r->text),
			    w - x - 4, ROLE_TITLE);
			break;
		case DR_HUNK:
			text_draw_role(win, y, x, r->text, strlen(r->text),
			    w - x - 2, i == cur_row ? ROLE_SELECTED :
			    ROLE_DIFF_HUNK);
			break;
		case DR_NOTE:
			text_draw_role(win, y, x, r->text, strlen(r->text),
			    w - x - 2, ROLE_DIM);
			break;
		case DR_LIST:
			buf_reset(&b);
			buf_addf(&b, "%2d %c ", r->file + 1, r->origin);
			x += text_draw_role(win, y, x, buf_str(&b), b.len,
			    w - x - 2, ROLE_LINENO);
			x += text_draw_role(win, y, x, r->text, strlen(r->text),
			    w - x - 2, ROLE_NORMAL);
			buf_reset(&b);
			buf_addf(&b, "  +%d", r->add);
			x += text_draw_role(win, y, x, buf_str(&b), b.len,
			    w - x - 2, ROLE_DIFF_ADD);
			buf_reset(&b);
			buf_addf(&b, " -%d", r->del);
			text_draw_role(win, y, x, buf_str(&b), b.len, w - x - 2,
			    ROLE_DIFF_DEL);
			break;
		case DR_LINE:
			role = r->origin == '+' ? ROLE_DIFF_ADD :
			    r->origin == '-' ? ROLE_DIFF_DEL : ROLE_NORMAL;
			/* The old and the new line number, then the line. */
			buf_reset(&b);
			if (r->oldno > 0)
				buf_addf(&b, "%5ld ", r->oldno);
			else
				buf_adds(&b, "      ");
			if (r->newno > 0)
				buf_addf(&b, "%5ld ", r->newno);
			else
				buf_adds(&b, "      ");
			x += text_draw_role(win, y, x, buf_str(&b), b.len,
			    w - x - 2, ROLE_LINENO);
			lead[0] = r->origin;
			text_draw_role(win, y, x, lead, 1, 1, role);
			text_draw_role(win, y, x + 1, r->text,
			    strcspn(r->text, "\n"), w - x - 3, role);
			break;
		}
	}
	buf_release(&b);
}

static void
diff_goto(struct diffview *d, size_t hunk)
{
	if (d->nhunks == 0)
		return;
	d->cur = hunk;
	d->top = d->hunks[hunk] > 0 ? d->hunks[hunk] - 1 : 0;
}

static const cJSON *
diff_cur_file(struct diffview *d, const cJSON **hunk)
{
	struct drow	*r;
	const cJSON	*f;

	if (d->nhunks == 0)
		return NULL;
	r = &d->rows[d->hunks[d->cur]];
	f = cJSON_GetArrayItem(cJSON_GetObjectItem(d->diff, "files"), r->file);
	if (hunk != NULL)
		*hunk = cJSON_GetArrayItem(cJSON_GetObjectItem(f, "hunks"),
		    r->hunk);
	return f;
}

/* The file the view is in: of the current hunk, or the top row's. */
static size_t
diff_cur_file_index(struct diffview *d)
{
	size_t	 i;

	for (i = d->nfiles; i > 0; i--) {
		if (d->files[i - 1] <= d->top + 1)
			return i - 1;
	}
	return 0;
}

/* To file N (from 0): its header at the top, its first hunk current. */
static void
diff_goto_file(struct diffview *d, int n)
{
	size_t	 k;

	if (n < 0 || (size_t)n >= d->nfiles)
		return;
	d->top = d->files[n];
	for (k = 0; k < d->nhunks; k++) {
		if (d->hunks[k] > d->files[n]) {
			d->cur = k;
			break;
		}
	}
}

static void
diff_revert(struct tui *t, struct diffview *d)
{
	const cJSON	*st = tui_state(t), *f;
	char		*cause = NULL;
	struct drow	*r;

	if (tui_readonly(t)) {
		tui_flash(t, "read-only: no reverts");
		return;
	}
	if ((f = diff_cur_file(d, NULL)) == NULL)
		return;
	r = &d->rows[d->hunks[d->cur]];
	if (git_revert_hunk(json_str(st, "workspace"), json_str(st,
	    "base_commit"), json_str(f, "path"), r->hunk, &cause) != 0) {
		tui_flash(t, "revert: %s", cause != NULL ? cause : "failed");
		free(cause);
		return;
	}
	tui_flash(t, "reverted a hunk of '%s'", json_str(f, "path"));
	diff_load(t, d);
	/* The view stays where it was: on the hunk now in that place. */
	if (d->nhunks > 0)
		diff_goto(d, d->cur);
	/* The tree's marks: a file back to its base is no longer M. */
	tui_files_changed(t);
}

static void
diff_comment_cb(struct tui *t, void *arg, const char *text)
{
	struct diffview	*d = arg;
	const cJSON	*f;
	char		*msg;

	if (text == NULL || *text == '\0' || (f = diff_cur_file(d, NULL)) == NULL)
		return;
	msg = git_hunk_quote(f, d->rows[d->hunks[d->cur]].hunk, text);
	if (msg == NULL)
		return;
	tui_send_message(t, msg);
	tui_flash(t, "comment sent to the agent");
	free(msg);
}

static void
diff_commit_cb(struct tui *t, void *arg, const char *text)
{
	struct diffview	*d = arg;
	const cJSON	*st = tui_state(t);
	char		*commit = NULL, *cause = NULL;
	int		 rc;

	if (text == NULL)
		return;
	if (*text == '\0') {
		tui_flash(t, "commit: no message, nothing done");
		return;
	}
	rc = git_commit_all(json_str(st, "workspace"), json_str(st,
	    "base_commit"), text, NULL, &commit, &cause);
	if (rc < 0)
		tui_flash(t, "commit: %s", cause != NULL ? cause : "failed");
	else if (rc == 0)
		tui_flash(t, "commit: nothing to commit");
	else
		tui_flash(t, "committed %.12s", commit);
	free(commit);
	free(cause);
	diff_load(t, d);
}

struct diff_pr {
	char	*session;
	char	*title;
	int	 local;		/* into the source repository */
};

static char *
diff_pr_run(void *arg)
{
	struct diff_pr		*p = arg;
	struct git_session	*gs;
	struct git_pr_opts	 o;
	struct github_pr	 pr;
	char			*cause = NULL, *r;
	int			 unknown = 0;

	if ((gs = git_session_open(p->session, &unknown, &cause)) == NULL) {
		r = xprintf("pull request: %s", cause);
		free(cause);
		return r;
	}
	memset(&o, 0, sizeof o);
	memset(&pr, 0, sizeof pr);
	o.title = *p->title != '\0' ? p->title : NULL;
	o.local = p->local;
	if (git_session_pr(gs, &o, &pr, &cause) != 0) {
		r = xprintf("pull request: %s", cause != NULL ? cause :
		    "failed");
		free(cause);
	} else if (p->local)
		r = xstrdup("pull request: committed onto the source "
		    "repository's branch");
	else if (pr.url != NULL)
		r = xprintf("pull request %s: %s", pr.existing ?
		    "already open" : "opened", pr.url);
	else
		r = xstrdup("pull request: branch pushed");
	github_pr_release(&pr);
	git_session_free(gs);
	return r;
}

static void
diff_pr_done(struct tui *t, void *arg, const char *result)
{
	struct diff_pr	*p = arg;

	tui_flash(t, "%s", result);
	tui_flash_hold(t, 20000);	/* a URL to copy, or what went wrong */
	free(p->session);
	free(p->title);
	free(p);
}

static void
diff_pr_start(struct tui *t, const char *text, int local)
{
	struct diff_pr	*p;

	if (text == NULL)
		return;
	p = xcalloc(1, sizeof *p);
	p->local = local;
	p->session = xstrdup(tui_session(t));
	p->title = xstrdup(text);
	if (tui_job(t, diff_pr_run, diff_pr_done, p) != 0) {
		tui_flash(t, "pull request: one is already on its way");
		free(p->session);
		free(p->title);
		free(p);
		return;
	}
	tui_flash(t, "pull request: committing and pushing...");
}

static void
diff_pr_cb(struct tui *t, void *arg, const char *text)
{
	diff_pr_start(t, text, 0);
}

static void
diff_local_cb(struct tui *t, void *arg, const char *text)
{
	diff_pr_start(t, text, 1);
}

static int
diff_key(struct overlay *o, int key)
{
	struct diffview	*d = o->data;
	size_t		 page = d->h > 2 ? (size_t)d->h - 1 : 1;

	if (d->confirm) {
		d->confirm = 0;
		if (key == 'y')
			diff_revert(o->tui, d);
		return 1;
	}
	if (key >= '1' && key <= '9') {
		diff_goto_file(d, key - '1');
		return 1;
	}
	switch (keys_lookup(SCOPE_DIFF, key)) {
	case ACT_CLOSE:
		return 0;
	case ACT_NEXT_HUNK:
		if (d->cur + 1 < d->nhunks)
			diff_goto(d, d->cur + 1);
		break;
	case ACT_PREV_HUNK:
		if (d->cur > 0)
			diff_goto(d, d->cur - 1);
		break;
	case ACT_NEXT_FILE:
	case ACT_PREV_FILE:
		diff_goto_file(d, (int)diff_cur_file_index(d) +
		    (keys_lookup(SCOPE_DIFF, key) == ACT_NEXT_FILE ? 1 : -1));
		break;
	case ACT_REVERT:
		if (d->nhunks > 0)
			d->confirm = 1;
		break;
	case ACT_COMMENT:
		if (tui_readonly(o->tui)) {
			tui_flash(o->tui, "read-only: comments are not sent");
			break;
		}
		if (d->nhunks > 0)
			tui_prompt(o->tui, "comment on this hunk:", "",
			    diff_comment_cb, d);
		break;
	case ACT_COMMIT:
	case ACT_PR:
	case ACT_PR_LOCAL:
		if (tui_readonly(o->tui)) {
			tui_flash(o->tui, "read-only: no commits");
			break;
		}
		switch (keys_lookup(SCOPE_DIFF, key)) {
		case ACT_COMMIT:
			tui_prompt(o->tui, "commit message:", "",
			    diff_commit_cb, d);
			break;
		case ACT_PR:
			tui_prompt(o->tui, "pull request title (empty: the "
			    "agent's summary):", "", diff_pr_cb, d);
			break;
		default:
			tui_prompt(o->tui, "commit title for the source "
			    "repository (empty: the agent's summary):", "",
			    diff_local_cb, d);
			break;
		}
		break;
	case ACT_UP:
		if (d->top > 0)
			d->top--;
		break;
	case ACT_DOWN:
		if (d->top + 1 < d->nrows)
			d->top++;
		break;
	case ACT_PAGE_UP:
		d->top = d->top > page ? d->top - page : 0;
		break;
	case ACT_PAGE_DOWN:
		d->top += page;
		break;
	case ACT_HOME:
		d->top = 0;
		break;
	case ACT_END:
		d->top = d->nrows > page ? d->nrows - page : 0;
		break;
	default:
		break;
	}
	return 1;
}

static void
diff_free(struct overlay *o)
{
	struct diffview	*d = o->data;

	cJSON_Delete(d->diff);
	free(d->rows);
	free(d->hunks);
	free(d->files);
	free(d->error);
	free(d);
}

static const struct overlay_ops diff_ops = {
	diff_draw, diff_key, diff_free, SCOPE_DIFF
};

void
diff_open(struct tui *t)
{
	struct diffview	*d = xcalloc(1, sizeof *d);

	diff_load(t, d);
	tui_overlay(t, &diff_ops, d);
}
