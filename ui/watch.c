/*
 * watch.c: holt sandbox watch ID, the screen's file tree and output pane
 * on any sandbox, with no session: a human sees what an E2B program (or
 * anything else) does in it, live, and touches nothing.
 *
 * Two envd connections: one carries the inotify watches of /workspace and
 * /home/user and an attach to every running command (found by "ps" every
 * WATCH_PS_MS, first with the output envd still holds), the other the
 * blocking list and ps calls. A change re-reads the tree at most every
 * WATCH_TREE_MS. Output keeps the last WATCH_LINES lines. When the sandbox
 * is paused or stopped the screen says so and connects again once it runs.
 */
#include <sys/socket.h>
#include <sys/time.h>

#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "git.h"
#include "sandbox.h"
#include "ui.h"

#define WATCH_PS_MS	300
#define WATCH_TREE_MS	150
#define WATCH_RETRY_MS	1000
#define WATCH_LINES	5000
#define WATCH_TREE_MAX	3000
#define WATCH_DEPTH	4

struct watch_cmd {
	long		 pid;
	int		 running;
	struct buf	 part[2];	/* stdout, stderr: an unended line */
	struct watch_cmd *next;
};

struct watch_line {
	char		*text;
	enum ui_role	 role;
};

struct watch {
	char			*id;
	struct sandbox		*sb;
	int			 efd;	/* watches and attaches */
	int			 bfd;	/* list and ps */
	struct frame_decoder	 dec;
	const char		*state;
	uint64_t		 next_ps, next_retry, tree_due;
	struct watch_cmd	*cmds;
	long			 last_pid;	/* of the last line */
	int			 ncmds, nrunning;

	struct watch_line	*tree;
	size_t			 ntree;
	int			 tree_top;
	struct watch_line	 lines[WATCH_LINES];
	size_t			 first, nlines;	/* a ring */
	int			 out_back;	/* lines scrolled back */
	int			 focus;		/* 0 tree, 1 output */
	int			 dirty, done;
};

static void
watch_push(struct watch *w, enum ui_role role, const char *fmt, ...)
    printflike(3, 4);

static void
watch_push(struct watch *w, enum ui_role role, const char *fmt, ...)
{
	struct watch_line	*l;
	va_list			 ap;

	if (w->nlines == WATCH_LINES) {
		free(w->lines[w->first].text);
		w->first = (w->first + 1) % WATCH_LINES;
		w->nlines--;
	}
	l = &w->lines[(w->first + w->nlines) % WATCH_LINES];
	va_start(ap, fmt);
	xvasprintf(&l->text, fmt, ap);
	va_end(ap);
	l->role = role;
	w->nlines++;
	if (w->out_back > 0 && w->out_back < (int)w->nlines)
		w->out_back++;	/* what the user looks at stays put */
	w->dirty = 1;
}

static struct watch_cmd *
watch_cmd_find(struct watch *w, long pid)
{
	struct watch_cmd	*c;

	for (c = w->cmds; c != NULL; c = c->next) {
		if (c->pid == pid)
			return c;
	}
	return NULL;
}

static void
watch_header(struct watch *w, struct watch_cmd *c)
{
	if (w->last_pid != c->pid)
		watch_push(w, ROLE_TOOL, "-- pid %ld --", c->pid);
	w->last_pid = c->pid;
}

static void
watch_output(struct watch *w, struct watch_cmd *c, int err, const char *p,
    size_t n)
{
	struct buf	*b = &c->part[err];
	const char	*nl;
	size_t		 len;

	buf_add(b, p, n);
	while ((nl = memchr(b->data, '\n', b->len)) != NULL) {
		len = nl - b->data;
		if (len > 0 && b->data[len - 1] == '\r')
			len--;
		watch_header(w, c);
		watch_push(w, err ? ROLE_ERROR : ROLE_NORMAL, "%.*s", (int)len,
		    b->data);
		buf_remove_front(b, nl - b->data + 1);
	}
}

static void
watch_exit(struct watch *w, struct watch_cmd *c, const cJSON *f)
{
	int	 i, code = (int)json_num(f, "code", -1);

	for (i = 0; i < 2; i++) {
		if (c->part[i].len > 0)
			watch_output(w, c, i, "\n", 1);
	}
	if (!c->running)
		return;
	c->running = 0;
	w->nrunning--;
	watch_header(w, c);
	if (json_num(f, "signal", 0) > 0)
		watch_push(w, ROLE_FAIL, "-- pid %ld killed by signal %d --",
		    c->pid, (int)json_num(f, "signal", 0));
	else
		watch_push(w, code == 0 ? ROLE_OK : ROLE_FAIL,
		    "-- pid %ld exit %d --", c->pid, code);
}

/* ---- envd ---- */

static void
watch_disconnect(struct watch *w, const char *state)
{
	struct watch_cmd	*c;

	if (w->efd != -1)
		close(w->efd);
	if (w->bfd != -1)
		close(w->bfd);
	w->efd = w->bfd = -1;
	frame_decoder_release(&w->dec);
	frame_decoder_init(&w->dec, FRAME_MAX);
	/* Attached again when it runs: the output envd holds comes again. */
	while ((c = w->cmds) != NULL) {
		w->cmds = c->next;
		buf_release(&c->part[0]);
		buf_release(&c->part[1]);
		free(c);
	}
	w->nrunning = 0;
	w->state = state;
	w->next_retry = mono_ms() + WATCH_RETRY_MS;
	w->dirty = 1;
}

static int
watch_send(struct watch *w, cJSON *req)
{
	int	 rc = frame_write_fd(w->efd, req);

	cJSON_Delete(req);
	return rc;
}

static void
watch_connect(struct watch *w)
{
	static const char	*roots[] = { "/workspace", "/home/user" };
	struct timeval		 tv = { 2, 0 };
	char			*cause = NULL;
	cJSON			*req;
	size_t			 i;

	w->next_retry = mono_ms() + WATCH_RETRY_MS;
	if (sandbox_state(w->sb) != SANDBOX_RUNNING) {
		w->state = sandbox_state_name(sandbox_state(w->sb));
		w->dirty = 1;
		return;
	}
	if ((w->efd = sandbox_connect(w->sb, &cause)) == -1 ||
	    (w->bfd = sandbox_connect(w->sb, &cause)) == -1) {
		free(cause);
		watch_disconnect(w, "unreachable");
		return;
	}
	/* Paused between a look and a call, envd answers nothing: give up
	 * on a call after a while, and connect again later. */
	setsockopt(w->bfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	for (i = 0; i < nitems(roots); i++) {
		req = cJSON_CreateObject();
		cJSON_AddNumberToObject(req, "id", (double)(i + 1));
		cJSON_AddStringToObject(req, "op", "watch");
		cJSON_AddStringToObject(req, "path", roots[i]);
		if (watch_send(w, req) != 0) {
			watch_disconnect(w, "unreachable");
			return;
		}
	}
	w->state = "running";
	w->tree_due = mono_ms();
	w->next_ps = 0;
	w->dirty = 1;
}

static int
watch_entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct watch_line *)a)->text,
	    ((const struct watch_line *)b)->text);
}

/* Below these, only the directory itself is shown. */
static int
watch_hidden(const char *path)
{
	static const char	*skip[] = { ".git", "node_modules", ".npm",
	    ".cache", "__pycache__" };
	const char		*p = path, *slash;
	size_t			 i;

	while ((slash = strchr(p, '/')) != NULL) {
		for (i = 0; i < nitems(skip); i++) {
			if ((size_t)(slash - p) == strlen(skip[i]) &&
			    strncmp(p, skip[i], slash - p) == 0)
				return 1;
		}
		p = slash + 1;
	}
	return 0;
}

static void
watch_tree(struct watch *w)
{
	static const char	*roots[] = { "/workspace", "/home/user" };
	struct watch_line	*t = NULL;
	size_t			 n = 0, i, r, start;
	const cJSON		*e;
	cJSON			*entries;
	char			*cause = NULL;
	const char		*path, *name;
	int			 depth;

	for (r = 0; r < nitems(roots); r++) {
		t = xreallocarray(t, n + 1, sizeof *t);
		t[n].text = xprintf("%s/", roots[r]);
		t[n++].role = ROLE_DIR;
		if ((entries = envd_list(w->bfd, roots[r], WATCH_DEPTH,
		    &cause)) == NULL) {
			free(cause);
			cause = NULL;
			continue;
		}
		start = n;
		cJSON_ArrayForEach(e, entries) {
			if ((path = json_str(e, "path")) == NULL ||
			    watch_hidden(path) || n - start >= WATCH_TREE_MAX)
				continue;
			t = xreallocarray(t, n + 1, sizeof *t);
			t[n].text = xprintf("%s%s", path, strcmp(json_str(e,
			    "type") != NULL ? json_str(e, "type") : "", "dir") ==
			    0 ? "/" : "");
			t[n++].role = strcmp(json_str(e, "type") != NULL ?
			    json_str(e, "type") : "", "dir") == 0 ? ROLE_DIR :
			    ROLE_NORMAL;
		}
		cJSON_Delete(entries);
		qsort(t + start, n - start, sizeof *t, watch_entry_cmp);
		/* "a/b/c" is drawn as "    c", indented by its depth. */
		for (i = start; i < n; i++) {
			path = t[i].text;
			depth = 1;
			name = path;
			while (strchr(name, '/') != NULL &&
			    strchr(name, '/')[1] != '\0') {
				name = strchr(name, '/') + 1;
				depth++;
			}
			name = xprintf("%*s%s", depth * 2, "", name);
			free(t[i].text);
			t[i].text = (char *)name;
		}
	}
	for (i = 0; i < w->ntree; i++)
		free(w->tree[i].text);
	free(w->tree);
	w->tree = t;
	w->ntree = n;
	w->dirty = 1;
}

static void
watch_ps(struct watch *w)
{
	struct watch_cmd	*c;
	const cJSON		*e;
	cJSON			*req, *rep;
	char			*cause = NULL;
	long			 pid;

	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "ps");
	if ((rep = envd_call(w->bfd, req, &cause)) == NULL) {
		free(cause);
		watch_disconnect(w, "unreachable");
		return;
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(rep, "commands")) {
		pid = (long)json_num(e, "pid", 0);
		if (!json_bool(e, "running", 0) || watch_cmd_find(w, pid) != NULL)
			continue;
		c = xcalloc(1, sizeof *c);
		c->pid = pid;
		c->running = 1;
		c->next = w->cmds;
		w->cmds = c;
		w->ncmds++;
		w->nrunning++;
		req = cJSON_CreateObject();
		cJSON_AddNumberToObject(req, "id", (double)(1000 + pid));
		cJSON_AddStringToObject(req, "op", "attach");
		cJSON_AddNumberToObject(req, "pid", (double)pid);
		cJSON_AddNumberToObject(req, "offset", 0);
		if (watch_send(w, req) != 0) {
			cJSON_Delete(rep);
			watch_disconnect(w, "unreachable");
			return;
		}
		w->dirty = 1;
	}
	cJSON_Delete(rep);
}

/* ---- d: the diff of each repository ---- */

#define WATCH_DIFF_MS	10000

static enum ui_role
watch_diff_role(const char *line)
{
	if (strncmp(line, "+++", 3) == 0 || strncmp(line, "---", 3) == 0 ||
	    strncmp(line, "diff ", 5) == 0)
		return ROLE_TITLE;
	if (line[0] == '+')
		return ROLE_DIFF_ADD;
	if (line[0] == '-')
		return ROLE_DIFF_DEL;
	if (line[0] == '@')
		return ROLE_DIFF_HUNK;
	return ROLE_NORMAL;
}

/*
 * The diff of the repository at dir against its last commit, run by git in
 * the sandbox as holt diff runs it for a sandbox elsewhere.
 */
static void
watch_diff_one(struct watch *w, const char *dir)
{
	struct buf	 out = BUF_INIT, err = BUF_INIT;
	char		*cmd, *cause = NULL, *line, *nl;
	int		 rc;

	cmd = git_remote_diff_command(dir, "HEAD", 0);
	rc = envd_exec_simple(w->bfd, cmd, WATCH_DIFF_MS, &out, &err, &cause);
	free(cmd);
	w->last_pid = 0;
	watch_push(w, ROLE_TOOL, "-- diff of %s --", dir);
	if (rc != 0)
		watch_push(w, ROLE_ERROR, "git: %s", rc < 0 ? cause :
		    buf_str(&err));
	else if (out.len == 0)
		watch_push(w, ROLE_DIM, "(no changes)");
	for (line = out.data; rc == 0 && line != NULL && *line != '\0';
	    line = nl != NULL ? nl + 1 : NULL) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		watch_push(w, watch_diff_role(line), "%s", line);
	}
	free(cause);
	buf_release(&out);
	buf_release(&err);
}

/* Every repository (a directory with .git) in the roots, two deep. */
static void
watch_diff(struct watch *w)
{
	static const char	*roots[] = { "/workspace", "/home/user" };
	const cJSON		*e;
	cJSON			*entries;
	const char		*path;
	char			*cause = NULL, *dir;
	size_t			 r, n, found = 0;

	if (w->bfd == -1)
		return;
	for (r = 0; r < nitems(roots); r++) {
		if ((entries = envd_list(w->bfd, roots[r], 3, &cause)) == NULL) {
			free(cause);
			cause = NULL;
			continue;
		}
		cJSON_ArrayForEach(e, entries) {
			path = json_str(e, "path");
			if (path == NULL || strcmp(json_str(e, "type") != NULL ?
			    json_str(e, "type") : "", "dir") != 0 ||
			    (n = strlen(path)) < 4 ||
			    strcmp(path + n - 4, ".git") != 0 ||
			    (n > 4 && path[n - 5] != '/') ||
			    strchr(path, '\'') != NULL)
				continue;
			dir = xprintf("%s/%.*s", roots[r], (int)(n > 4 ? n - 5 :
			    0), path);
			if (n == 4)
				dir[strlen(roots[r])] = '\0';
			watch_diff_one(w, dir);
			free(dir);
			found++;
		}
		cJSON_Delete(entries);
	}
	if (found == 0)
		watch_push(w, ROLE_DIM, "-- no git repository in /workspace or "
		    "/home/user --");
	w->out_back = 0;
}

static void
watch_frame(struct watch *w, const cJSON *f)
{
	const char		*ev = json_str(f, "event");
	struct watch_cmd	*c;
	struct buf		 data = BUF_INIT;

	if (ev == NULL)
		return;
	if (strcmp(ev, "change") == 0) {
		if (w->tree_due == 0)
			w->tree_due = mono_ms() + WATCH_TREE_MS;
		return;
	}
	if ((c = watch_cmd_find(w, (long)json_num(f, "pid", 0))) == NULL)
		return;
	if (strcmp(ev, "stdout") == 0 || strcmp(ev, "stderr") == 0 ||
	    strcmp(ev, "pty") == 0) {
		if (envd_data_get(f, &data) == 0)
			watch_output(w, c, strcmp(ev, "stderr") == 0,
			    data.data, data.len);
		buf_release(&data);
	} else if (strcmp(ev, "exit") == 0)
		watch_exit(w, c, f);
}

static void
watch_read(struct watch *w)
{
	char	 buf[65536], *cause = NULL;
	ssize_t	 n;
	cJSON	*f;

	if ((n = read(w->efd, buf, sizeof buf)) <= 0) {
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			return;
		watch_disconnect(w, "unreachable");
		return;
	}
	frame_decoder_feed(&w->dec, buf, n);
	for (;;) {
		if (frame_decoder_next(&w->dec, &f, &cause) < 0) {
			free(cause);
			watch_disconnect(w, "unreachable");
			return;
		}
		if (f == NULL)
			return;
		watch_frame(w, f);
		cJSON_Delete(f);
	}
}

/* ---- the screen ---- */

static void
watch_draw(struct watch *w)
{
	int			 tw, ow, h, y, i, start, back;
	size_t			 k;
	struct watch_line	*l;
	char			*s;

	erase();
	h = LINES - 2;
	tw = COLS / 3 < 24 ? (COLS < 48 ? COLS / 2 : 24) : COLS / 3;
	ow = COLS - tw - 1;
	s = xprintf(" holt | watch %s | %s | %d command%s, %d running | Tab "
	    "pane, arrows scroll, d diff, q quit", w->id, w->state, w->ncmds,
	    w->ncmds == 1 ? "" : "s", w->nrunning);
	text_clear_to(stdscr, 0, 0, COLS, theme_attr(ROLE_STATUS));
	text_draw_role(stdscr, 0, 0, s, strlen(s), COLS, ROLE_STATUS);
	free(s);
	text_draw_role(stdscr, 1, 0, " files", 6, tw, w->focus == 0 ?
	    ROLE_BORDER_FOCUS : ROLE_TITLE);
	text_draw_role(stdscr, 1, tw + 1, " output", 7, ow, w->focus == 1 ?
	    ROLE_BORDER_FOCUS : ROLE_TITLE);
	for (y = 1; y < LINES; y++)
		mvaddch(y, tw, ACS_VLINE | theme_attr(ROLE_BORDER));
	if (w->tree_top > (int)w->ntree - h)
		w->tree_top = (int)w->ntree - h;
	if (w->tree_top < 0)
		w->tree_top = 0;
	for (i = 0; i < h && w->tree_top + i < (int)w->ntree; i++) {
		l = &w->tree[w->tree_top + i];
		text_draw_role(stdscr, 2 + i, 0, l->text, strlen(l->text), tw,
		    l->role);
	}
	back = w->out_back;
	if (back > (int)w->nlines - h)
		back = w->out_back = (int)w->nlines - h > 0 ?
		    (int)w->nlines - h : 0;
	start = (int)w->nlines - h - back;
	if (start < 0)
		start = 0;
	for (i = 0; i < h && start + i < (int)w->nlines; i++) {
		k = (w->first + start + i) % WATCH_LINES;
		l = &w->lines[k];
		text_draw_sgr(stdscr, 2 + i, tw + 1, l->text, strlen(l->text),
		    ow, l->role, NULL, 0);
	}
	refresh();
	w->dirty = 0;
}

static void
watch_key(struct watch *w, int key)
{
	int	 page = LINES - 3 > 1 ? LINES - 3 : 1, d = 0;

	switch (key) {
	case 'q':
	case KEYC_CTRL('c'):
		w->done = 1;
		return;
	case '\t':
		w->focus = !w->focus;
		break;
	case 'd':
		watch_diff(w);
		break;
	case KEY_UP:
	case 'k':
		d = -1;
		break;
	case KEY_DOWN:
	case 'j':
		d = 1;
		break;
	case KEY_PPAGE:
		d = -page;
		break;
	case KEY_NPAGE:
		d = page;
		break;
	case KEY_HOME:
		d = -1000000;
		break;
	case KEY_END:
		d = 1000000;
		break;
	case KEY_RESIZE:
		break;
	default:
		return;
	}
	if (w->focus == 0)
		w->tree_top += d;
	else {
		w->out_back -= d;
		if (w->out_back < 0)
			w->out_back = 0;
	}
	w->dirty = 1;
}

int
watch_main(const char *id, const char *theme, char **cause)
{
	struct watch	 ww, *w = &ww;
	struct pollfd	 pfd[2];
	uint64_t	 now;
	char		*why = NULL;
	int		 key, n;
	size_t		 i;

	memset(w, 0, sizeof *w);
	w->efd = w->bfd = -1;
	if ((w->sb = sandbox_open(id, cause)) == NULL)
		return -1;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		*cause = xstrdup("the screen needs a terminal");
		sandbox_free(w->sb);
		return -1;
	}
	w->id = xstrdup(sandbox_id(w->sb));
	frame_decoder_init(&w->dec, FRAME_MAX);
	if (theme == NULL)
		theme = config_get("theme");
	if (theme_load(theme, &why) != 0) {
		log_warnx("%s", why);
		free(why);
	}
	setlocale(LC_ALL, "");
	if (initscr() == NULL) {
		*cause = xstrdup("cannot start the screen (is TERM set?)");
		sandbox_free(w->sb);
		free(w->id);
		return -1;
	}
	raw();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	theme_start();
	w->state = "connecting";
	watch_connect(w);
	w->dirty = 1;
	while (!w->done) {
		now = mono_ms();
		if (w->efd == -1 && now >= w->next_retry)
			watch_connect(w);
		if (w->efd != -1 && now >= w->next_ps) {
			/* A paused envd would never answer: look first. */
			if (sandbox_state(w->sb) != SANDBOX_RUNNING)
				watch_disconnect(w, sandbox_state_name(
				    sandbox_state(w->sb)));
			else
				watch_ps(w);
			w->next_ps = now + WATCH_PS_MS;
		}
		if (w->efd != -1 && w->tree_due != 0 && now >= w->tree_due) {
			w->tree_due = 0;
			watch_tree(w);
		}
		if (w->dirty)
			watch_draw(w);
		pfd[0].fd = STDIN_FILENO;
		pfd[0].events = POLLIN;
		pfd[1].fd = w->efd;
		pfd[1].events = POLLIN;
		n = poll(pfd, w->efd != -1 ? 2 : 1, 100);
		if (n > 0 && w->efd != -1 && (pfd[1].revents & (POLLIN |
		    POLLHUP | POLLERR)))
			watch_read(w);
		while ((key = getch()) != ERR)
			watch_key(w, key == KEY_RESIZE ? KEY_RESIZE : key);
	}
	endwin();
	watch_disconnect(w, "");
	frame_decoder_release(&w->dec);
	for (i = 0; i < w->ntree; i++)
		free(w->tree[i].text);
	free(w->tree);
	for (i = 0; i < w->nlines; i++)
		free(w->lines[(w->first + i) % WATCH_LINES].text);
	sandbox_free(w->sb);
	free(w->id);
	return 0;
}
