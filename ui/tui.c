/*
 * tui.c: the client's loop and screen. One poll() loop reads the terminal,
 * the server socket (events, state, and the workspace's changes as the
 * sandbox sees them) and a self-pipe for signals; nothing in it blocks. Code that changes what is shown only marks
 * a pane dirty; tui_draw runs once before the loop sleeps, redraws the dirty
 * panes into their windows (wnoutrefresh) and calls doupdate() once.
 *
 * Layout (DESIGN 9): a status bar on the first row, the file tree beside the
 * agent transcript, the output pane below them and the input line at the
 * bottom; full-screen overlays (diff, viewer, help) and the approval modal
 * sit over the panes. Below 80x24 only a "terminal too small" notice shows.
 */
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "client.h"
#include "ui.h"

#define TUI_MIN_COLS	80
#define TUI_MIN_ROWS	24
#define TUI_READ_MAX	(256 * 1024)	/* server bytes per loop turn */
#define TUI_FRAME_MS	16	/* panes are redrawn at most this often */
#define TUI_INPUT_MAX	5		/* rows of the input line */
#define TUI_TYPING_MS	500	/* a key this recent: the user is typing */
#define TUI_QUIET_MS	1000	/* quiet this long: a guarded modal arms */
#define TUI_TMUX_PREFIX	"C-g"	/* the prefix inside tmux */
#define TUI_STATUS_WIDE	120	/* narrower: the urgent status first */
#define TUI_KEY_PASTE	(KEY_MAX + 1)	/* a bracketed paste starts */
#define TUI_KEY_PASTED	(KEY_MAX + 2)	/* and ends */
#define TUI_PASTE_MAX	(4 * 1024 * 1024)


struct tui {
	char		*session;
	int		 readonly;

	int		 fd;
	struct frame_decoder dec;
	struct buf	 out;
	int		 next_id;
	cJSON		*state;

	struct pane	 panes[PANE_COUNT];
	WINDOW		*frames[PANE_COUNT];
	WINDOW		*status;
	WINDOW		*modal;
	WINDOW		*over;
	int		 focus;
	int		 zoom;		/* pane index, or -1 */
	int		 prefix;	/* the prefix key was pressed */

	struct approval	*approval;
	struct overlay	 overlay;
	int		 overlay_on;
	int		 overlay_dirty;
	int		 modal_dirty;
	int		 pasting;	/* inside a bracketed paste */
	int		 paste_cr;	/* its last byte was a CR */
	struct buf	 paste;
	uint64_t	 last_typed;	/* a key went to the panes (ms) */
	uint64_t	 last_esc;	/* Esc Esc: /rewind (ms) */

	int		 prompt_on;
	char		*prompt_label;
	struct buf	 prompt_text;
	size_t		 prompt_cursor;
	tui_prompt_cb	 prompt_cb;
	tui_prompt_cb	 prompt_tab;
	void		*prompt_arg;
	int		 prompt_modal;	/* drawn inside the approval modal */

	char		*flash;
	uint64_t	 flash_until;

	struct tui_bg	*job;
	int		 detach_warned;

	size_t		 read_since_trim;
	uint64_t	 last_trim;

	int		 rows, cols;
	int		 too_small;
	int		 status_dirty;
	int		 layout_dirty;
	uint64_t	 last_frame;	/* the panes were last drawn (ms) */
	int		 keyed;		/* keys came: draw all at once */

	int		 done;
	int		 detached;
	char		*exit_cause;
};

static int		tui_sigpipe[2] = { -1, -1 };
static struct termios	tui_saved_tio;
static int		tui_saved_ok;
static volatile sig_atomic_t tui_got_winch, tui_got_term;

static const struct view *tui_views[PANE_COUNT] = {
	&view_tree, &view_agent, &view_output, &view_input
};

/* Restore the terminal from a signal handler: only async-signal-safe calls. */
static void
tui_restore_raw(void)
{
	static const char seq[] = "\033[?1000l\033[?1002l\033[?1006l"
	    "\033[?2004l\033[0m\033[?25h\033[?1049l\r\n";
	ssize_t	 n;

	n = write(STDOUT_FILENO, seq, sizeof seq - 1);
	(void)n;
	if (tui_saved_ok)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &tui_saved_tio);
}

static void
tui_crash(int sig)
{
	tui_restore_raw();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
tui_signal(int sig)
{
	int	 saved = errno;
	char	 c = (char)sig;
	ssize_t	 n;

	if (sig == SIGWINCH)
		tui_got_winch = 1;
	else
		tui_got_term = 1;
	if (tui_sigpipe[1] != -1) {
		n = write(tui_sigpipe[1], &c, 1);
		(void)n;
	}
	errno = saved;
}

static void
tui_signals(void)
{
	struct sigaction	 sa;
	int			 crash[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE,
				     SIGILL };
	size_t			 i;

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = tui_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGWINCH, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sa.sa_handler = tui_crash;
	sa.sa_flags = SA_RESETHAND;
	for (i = 0; i < nitems(crash); i++)
		sigaction(crash[i], &sa, NULL);
}

/* -------------------------------------------------------------------- */
/* The connection. */

void
tui_send(struct tui *t, cJSON *m)
{
	char	*data;
	size_t	 len;

	if (cJSON_GetObjectItem(m, "id") == NULL)
		cJSON_AddNumberToObject(m, "id", ++t->next_id);
	if ((data = frame_encode(m, &len)) == NULL) {
		tui_flash(t, "too large to send (over %u bytes)", FRAME_MAX);
		cJSON_Delete(m);
		return;
	}
	buf_add(&t->out, data, len);
	free(data);
	cJSON_Delete(m);
}

static cJSON *
tui_request(struct tui *t, const char *type)
{
	cJSON	*m = cJSON_CreateObject();

	cJSON_AddStringToObject(m, "type", type);
	cJSON_AddStringToObject(m, "session", t->session);
	return m;
}

int
tui_session_request(struct tui *t, const char *type, const char *key,
    const char *value, char **cause)
{
	cJSON	*m;

	if (t->readonly) {
		*cause = xstrdup("read-only: this client cannot change the "
		    "session");
		return -1;
	}
	m = tui_request(t, type);
	if (key != NULL && value != NULL)
		cJSON_AddStringToObject(m, key, value);
	tui_send(t, m);
	return 0;
}

void
tui_send_message(struct tui *t, const char *text)
{
	cJSON	*m;

	if (t->readonly) {
		tui_flash(t, "read-only: messages are not sent");
		return;
	}
	m = tui_request(t, "send");
	cJSON_AddStringToObject(m, "text", text);
	tui_send(t, m);
}

const cJSON *
tui_state(struct tui *t)
{
	return t->state;
}

const char *
tui_session(struct tui *t)
{
	return t->session;
}

int
tui_readonly(struct tui *t)
{
	return t->readonly;
}

void
tui_flash(struct tui *t, const char *fmt, ...)
{
	va_list	 ap;

	free(t->flash);
	va_start(ap, fmt);
	xvasprintf(&t->flash, fmt, ap);
	va_end(ap);
	t->flash_until = mono_ms() + 4000;
	t->status_dirty = 1;
}

struct tui_bg {
	pthread_mutex_t	 lock;
	tui_job_run	 run;
	tui_job_done	 done_cb;
	void		*arg;
	char		*result;
	int		 done;
};

static void *
tui_job_thread(void *p)
{
	struct tui_bg	*j = p;
	char		*r = j->run(j->arg);

	pthread_mutex_lock(&j->lock);
	j->result = r;
	j->done = 1;
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

int
tui_job(struct tui *t, tui_job_run run, tui_job_done done, void *arg)
{
	struct tui_bg	*j;
	pthread_t	 th;
	pthread_attr_t	 attr;

	if (t->job != NULL)
		return -1;
	j = xcalloc(1, sizeof *j);
	pthread_mutex_init(&j->lock, NULL);
	j->run = run;
	j->done_cb = done;
	j->arg = arg;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, tui_job_thread, j) != 0) {
		j->result = run(arg);
		j->done = 1;
	}
	pthread_attr_destroy(&attr);
	t->job = j;
	return 0;
}

/* A finished job's result, on the loop. */
static void
tui_job_collect(struct tui *t)
{
	struct tui_bg	*j = t->job;
	int		 done;

	if (j == NULL)
		return;
	pthread_mutex_lock(&j->lock);
	done = j->done;
	pthread_mutex_unlock(&j->lock);
	if (!done)
		return;
	t->job = NULL;
	j->done_cb(t, j->arg, j->result);
	free(j->result);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

void
tui_flash_hold(struct tui *t, uint64_t ms)
{
	if (t->flash != NULL)
		t->flash_until = mono_ms() + ms;
}

void
pane_dirty(struct pane *p)
{
	p->dirty = 1;
}

void
pane_set_title(struct pane *p, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	xvasprintf(&s, fmt, ap);
	va_end(ap);
	if (p->title != NULL && strcmp(p->title, s) == 0) {
		free(s);
		return;
	}
	free(p->title);
	p->title = s;
	p->dirty = 1;	/* the frame, drawn with the pane, carries it */
}

void
tui_redraw_all(struct tui *t)
{
	t->layout_dirty = 1;
}

/* -------------------------------------------------------------------- */
/* Server messages. */

static int	tui_demo;

/* holt demo: the diff review opens by itself when the run is done. */
void
tui_demo_mode(int on)
{
	tui_demo = on;
}

/* The user is typing: the input has text or a key went to it just now. */
static int
tui_typing(struct tui *t)
{
	return view_input_len(&t->panes[PANE_INPUT]) > 0 ||
	    mono_ms() - t->last_typed < TUI_TYPING_MS;
}

static void
tui_dispatch_event(struct tui *t, const cJSON *ev, int live)
{
	const char	*type = json_str(ev, "type");
	int		 i;

	for (i = 0; i < PANE_COUNT; i++) {
		if (t->panes[i].view->event != NULL)
			t->panes[i].view->event(&t->panes[i], ev, live);
	}
	approval_event(t->approval, ev);
	approval_check(t->approval, tui_typing(t));
	t->status_dirty = 1;
	t->modal_dirty = 1;
	if (tui_demo && live && type != NULL &&
	    strcmp(type, "run.finished") == 0 && json_str(ev, "reason") != NULL &&
	    strcmp(json_str(ev, "reason"), "done") == 0)
		diff_open(t);
}

static void
tui_set_state(struct tui *t, const cJSON *st)
{
	const char	*ws, *base;

	if (st == NULL || !cJSON_IsObject(st))
		return;
	cJSON_Delete(t->state);
	t->state = cJSON_Duplicate(st, 1);
	approval_state(t->approval, t->state);
	approval_check(t->approval, tui_typing(t));
	t->modal_dirty = 1;
	ws = json_str(t->state, "workspace");
	base = json_str(t->state, "base_commit");
	view_tree_set_root(&t->panes[PANE_TREE], ws, base,
	    json_str(t->state, "sandbox"), json_str(t->state,
	    "sandbox_state"));
	t->status_dirty = 1;
}

static void
tui_message(struct tui *t, cJSON *m)
{
	const char	*type = json_str(m, "type");
	const cJSON	*evs, *ev;

	if (type == NULL)
		return;
	if (strcmp(type, "snapshot") == 0) {
		tui_set_state(t, cJSON_GetObjectItem(m, "session"));
		evs = cJSON_GetObjectItem(m, "events");
		cJSON_ArrayForEach(ev, evs)
			tui_dispatch_event(t, ev, 0);
		if (json_bool(m, "truncated", 0)) {
			tui_flash(t, "older events not shown: holt log -t %s",
			    t->session);
			tui_flash_hold(t, 5000);
		}
	} else if (strcmp(type, "event") == 0) {
		ev = cJSON_GetObjectItem(m, "event");
		if (ev != NULL)
			tui_dispatch_event(t, ev, 1);
	} else if (strcmp(type, "state") == 0)
		tui_set_state(t, cJSON_GetObjectItem(m, "session"));
	else if (strcmp(type, "files") == 0) {
		view_tree_changed(&t->panes[PANE_TREE],
		    cJSON_GetObjectItem(m, "dirs"), json_bool(m, "all", 0));
	}
	else if (strcmp(type, "ok") == 0 &&
	    cJSON_IsArray(cJSON_GetObjectItem(m, "rules")))
		slash_rules_show(t, cJSON_GetObjectItem(m, "rules"));
	else if (strcmp(type, "error") == 0) {
		tui_flash(t, "error: %s", json_str(m, "message") != NULL ?
		    json_str(m, "message") : "?");
		if (json_bool(m, "override", 0) && json_str(m, "message"))
			approval_refused(t->approval, json_str(m, "request_id"),
			    json_str(m, "message"));
	} else if (strcmp(type, "exit") == 0) {
		free(t->exit_cause);
		t->exit_cause = xprintf("session %s ended: %s", t->session,
		    json_str(m, "reason") != NULL ? json_str(m, "reason") :
		    "the server closed it");
		t->done = 1;
	}
}

/* Keys wait on the terminal (a poll that does not block). */
static int
tui_keys_waiting(void)
{
	struct pollfd	 pfd = { .fd = STDIN_FILENO, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

static void
tui_read_server(struct tui *t)
{
	char	 data[65536];
	ssize_t	 n;
	size_t	 total = 0;
	cJSON	*m;
	char	*why = NULL;
	int	 rc;

	while (total < TUI_READ_MAX) {
		/* A key waiting goes first: its echo must not wait. */
		if (total > 0 && tui_keys_waiting())
			break;
		n = read(t->fd, data, sizeof data);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			t->exit_cause = xprintf("server connection: %s",
			    strerror(errno));
			t->done = 1;
			return;
		}
		if (n == 0) {
			/* A new server rebuilds the session from its log. */
			t->exit_cause = xprintf("server exited: holt attach -t "
			    "%s brings the session back", t->session);
			t->done = 1;
			break;
		}
		frame_decoder_feed(&t->dec, data, (size_t)n);
		total += (size_t)n;
		t->read_since_trim += (size_t)n;
		while ((rc = frame_decoder_next(&t->dec, &m, &why)) == 1) {
			tui_message(t, m);
			cJSON_Delete(m);
		}
		if (rc == -1) {
			t->exit_cause = xprintf("server connection: %s", why);
			free(why);
			t->done = 1;
			return;
		}
	}
}

static void
tui_write_server(struct tui *t)
{
	ssize_t	 n;

	while (t->out.len > 0) {
		n = write(t->fd, t->out.data, t->out.len);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN) {
				t->exit_cause = xprintf("server connection: %s",
				    strerror(errno));
				t->done = 1;
			}
			return;
		}
		buf_remove_front(&t->out, (size_t)n);
	}
}

/* -------------------------------------------------------------------- */
/* Layout and drawing. */

static void
tui_place(WINDOW **w, int h, int x, int y, int width)
{
	if (*w != NULL)
		delwin(*w);
	*w = NULL;
	if (h > 0 && width > 0)
		*w = newwin(h, width, y, x);
	if (*w != NULL)
		keypad(*w, FALSE);
}

static void
tui_place_pane(struct tui *t, int i, int x, int y, int w, int h)
{
	struct pane	*p = &t->panes[i];
	int		 border = (i != PANE_INPUT);

	p->x = x;
	p->y = y;
	p->w = w;
	p->h = h;
	p->hidden = (w <= 2 || h <= (border ? 2 : 0));
	if (p->hidden) {
		tui_place(&t->frames[i], 0, 0, 0, 0);
		tui_place(&p->win, 0, 0, 0, 0);
		return;
	}
	if (border) {
		tui_place(&t->frames[i], h, x, y, w);
		tui_place(&p->win, h - 2, x + 1, y + 1, w - 2);
		if (p->view->resize != NULL)
			p->view->resize(p, w - 2, h - 2);
	} else {
		tui_place(&t->frames[i], 0, 0, 0, 0);
		tui_place(&p->win, h, x, y, w);
		if (p->view->resize != NULL)
			p->view->resize(p, w, h);
	}
	p->dirty = 1;
}

static int
tui_input_rows(struct tui *t)
{
	int	 n = t->panes[PANE_INPUT].want_h;

	if ((t->prompt_on && !t->prompt_modal) || n < 1)
		return 1;
	return n > TUI_INPUT_MAX ? TUI_INPUT_MAX : n;
}

static void
tui_layout(struct tui *t)
{
	int	 inh, top, mainh, toph, outh, treew, i;

	getmaxyx(stdscr, t->rows, t->cols);
	t->too_small = (t->cols < TUI_MIN_COLS || t->rows < TUI_MIN_ROWS);
	t->layout_dirty = 0;
	t->status_dirty = 1;
	t->overlay_dirty = 1;
	erase();
	wnoutrefresh(stdscr);
	if (t->too_small) {
		for (i = 0; i < PANE_COUNT; i++)
			tui_place_pane(t, i, 0, 0, 0, 0);
		tui_place(&t->status, 0, 0, 0, 0);
		tui_place(&t->modal, 0, 0, 0, 0);
		tui_place(&t->over, 0, 0, 0, 0);
		return;
	}
	tui_place(&t->status, 1, 0, 0, t->cols);
	tui_place(&t->over, t->rows - 1, 0, 1, t->cols);
	inh = tui_input_rows(t);
	top = 1;
	mainh = t->rows - top - inh;
	if (t->zoom >= 0 && t->zoom != PANE_INPUT) {
		for (i = 0; i < PANE_INPUT; i++) {
			if (i == t->zoom)
				tui_place_pane(t, i, 0, top, t->cols, mainh);
			else
				tui_place_pane(t, i, 0, 0, 0, 0);
		}
	} else {
		outh = mainh * 2 / 5;
		if (outh < 5)
			outh = 5;
		toph = mainh - outh;
		treew = t->cols / 4;
		if (treew < 20)
			treew = 20;
		if (treew > 40)
			treew = 40;
		tui_place_pane(t, PANE_TREE, 0, top, treew, toph);
		tui_place_pane(t, PANE_AGENT, treew, top, t->cols - treew,
		    toph);
		tui_place_pane(t, PANE_OUTPUT, 0, top + toph, t->cols, outh);
	}
	tui_place_pane(t, PANE_INPUT, 0, t->rows - inh, t->cols, inh);
}

static void
tui_draw_frame(struct tui *t, int i)
{
	struct pane	*p = &t->panes[i];
	WINDOW		*f = t->frames[i];
	enum ui_role	 role;
	const char	*title;
	int		 w;

	if (f == NULL)
		return;
	role = (i == t->focus) ? ROLE_BORDER_FOCUS : ROLE_BORDER;
	werase(f);
	wattr_set(f, theme_attr(role) & ~A_COLOR, (short)theme_pair(role),
	    NULL);
	box(f, 0, 0);
	title = p->title != NULL ? p->title : p->view->name;
	w = getmaxx(f);
	mvwaddch(f, 0, 1, ' ');
	text_draw_role(f, 0, 2, title, strlen(title), w - 5,
	    i == t->focus ? ROLE_BORDER_FOCUS : ROLE_TITLE);
	waddch(f, ' ');
	if (t->zoom == i)
		text_draw_role(f, 0, w - 9, " zoom ", 6, 6, ROLE_TITLE);
	wnoutrefresh(f);
}

/*
 * Redraw is cheap for the input line and dear for the panes under an
 * output flood (a full pane and its bytes to the terminal), so the panes
 * are drawn at most once per TUI_FRAME_MS, and the input line, after a
 * key, at once and first: a key's echo never waits behind pane redraws.
 */
static void
tui_draw_pane(struct tui *t, int i)
{
	struct pane	*p = &t->panes[i];

	p->dirty = 0;
	tui_draw_frame(t, i);
	werase(p->win);
	p->view->draw(p, p->win);
	wnoutrefresh(p->win);
}

static int
tui_frame_due(struct tui *t)
{
	return t->keyed || t->layout_dirty ||
	    mono_ms() - t->last_frame >= TUI_FRAME_MS;
}

static const char *
tui_spinner(void)
{
	static const char *frames[] = {
		"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"
	};

	return frames[(mono_ms() / 100) % nitems(frames)];
}

static void
tui_fmt_tokens(struct buf *b, double n)
{
	if (n >= 1e6)
		buf_addf(b, "%.1fM", n / 1e6);
	else if (n >= 1e3)
		buf_addf(b, "%.1fk", n / 1e3);
	else
		buf_addf(b, "%.0f", n);
}

static void
tui_status_seg(WINDOW *w, int *x, int cols, const char *s, enum ui_role role)
{
	if (*x >= cols)
		return;
	if (*x > 0) {
		*x += text_draw_role(w, 0, *x, " │ ", 5, cols - *x,
		    ROLE_STATUS);
	}
	*x += text_draw_role(w, 0, *x, s, strlen(s), cols - *x, role);
}

/* The state ("waiting for you") and the approval count: what must show. */
static void
tui_status_urgent(struct tui *t, WINDOW *w, int *x)
{
	struct buf	 b = BUF_INIT;
	const char	*state = json_str(t->state, "state");
	enum ui_role	 role = ROLE_STATUS_IDLE;
	int		 n;

	if (state == NULL)
		state = "?";
	if (strcmp(state, "working") == 0) {
		buf_addf(&b, " %s working ", tui_spinner());
		role = ROLE_STATUS_BUSY;
	} else if (strcmp(state, "waiting") == 0) {
		buf_addf(&b, " waiting for you ");
		role = ROLE_STATUS_ALERT;
	} else if (strcmp(state, "error") == 0) {
		buf_addf(&b, " error ");
		role = ROLE_STATUS_ALERT;
	} else
		buf_addf(&b, " %s ", state);
	tui_status_seg(w, x, t->cols, buf_str(&b), role);
	if ((n = approval_count(t->approval)) > 0) {
		buf_reset(&b);
		buf_addf(&b, " %d approval%s ", n, n == 1 ? "" : "s");
		tui_status_seg(w, x, t->cols, buf_str(&b), ROLE_STATUS_ALERT);
	}
	buf_release(&b);
}

/*
 * The status bar. On a narrow screen (under TUI_STATUS_WIDE columns) the
 * state and the approval count come right after the session's name, so
 * "waiting for you" is never cut off; a long notice never covers them.
 */
static void
tui_draw_status(struct tui *t)
{
	WINDOW		*w = t->status;
	const cJSON	*st = t->state, *ctx;
	struct buf	 b = BUF_INIT;
	const char	*s;
	int		 x = 0, fl, narrow = t->cols < TUI_STATUS_WIDE, keep;

	if (w == NULL)
		return;
	wattr_set(w, theme_attr(ROLE_STATUS) & ~A_COLOR,
	    (short)theme_pair(ROLE_STATUS), NULL);
	mvwhline(w, 0, 0, ' ', t->cols);
	x = text_draw_role(w, 0, 0, " holt", 5, t->cols, ROLE_STATUS);
	tui_status_seg(w, &x, t->cols, t->session, ROLE_STATUS);
	if (narrow)
		tui_status_urgent(t, w, &x);
	keep = narrow ? x : 0;
	buf_addf(&b, "sbx %s", (s = json_str(st, "sandbox_state")) != NULL ?
	    s : "?");
	tui_status_seg(w, &x, t->cols, buf_str(&b), ROLE_STATUS);
	if ((s = json_str(st, "model")) != NULL && *s != '\0')
		tui_status_seg(w, &x, t->cols, s, ROLE_STATUS);
	buf_reset(&b);
	buf_addf(&b, "step %.0f/%.0f", json_num(st, "step", 0),
	    json_num(st, "steps_cap", 0));
	tui_status_seg(w, &x, t->cols, buf_str(&b), ROLE_STATUS);
	buf_reset(&b);
	tui_fmt_tokens(&b, json_num(st, "input_tokens", 0) +
	    json_num(st, "output_tokens", 0));
	buf_addf(&b, " tok $%.2f", json_num(st, "cost_usd", 0));
	tui_status_seg(w, &x, t->cols, buf_str(&b), ROLE_STATUS);
	if ((ctx = cJSON_GetObjectItemCaseSensitive(st, "context")) != NULL) {
		/* The share of the model's window the conversation takes. */
		buf_reset(&b);
		buf_addf(&b, "ctx %.0f%%%s", json_num(ctx, "percent", 0),
		    json_bool(ctx, "compacting", 0) ? " compacting" : "");
		tui_status_seg(w, &x, t->cols, buf_str(&b), ROLE_STATUS);
	}
	tui_status_seg(w, &x, t->cols, (s = json_str(st, "mode")) != NULL ?
	    s : "?", ROLE_STATUS);
	if (!narrow) {
		keep = 0;
		tui_status_urgent(t, w, &x);
	}
	if (t->readonly)
		tui_status_seg(w, &x, t->cols, "read-only", ROLE_STATUS);
	if (t->flash != NULL && mono_ms() < t->flash_until) {
		fl = text_width(t->flash, strlen(t->flash));
		if (x + 3 + fl > t->cols) {
			/* A long message takes the bar, but for what must show. */
			mvwhline(w, 0, keep, ' ', t->cols - keep);
			text_draw_role(w, 0, keep + 1, t->flash,
			    strlen(t->flash), t->cols - keep - 2,
			    ROLE_STATUS_ALERT);
		} else {
			text_draw_role(w, 0, t->cols - fl - 1, t->flash,
			    strlen(t->flash), fl, ROLE_STATUS);
		}
	}
	buf_release(&b);
	wnoutrefresh(w);
}

/*
 * The open prompt: on the input line, or, for a question of the approval
 * modal, on the modal's row above its key hints (the input keeps what the
 * user typed).
 */
static void
tui_draw_prompt(struct tui *t)
{
	WINDOW	*w = t->panes[PANE_INPUT].win;
	int	 x, cw, cols, y = 0, x0 = 0;

	if (t->prompt_modal && t->modal != NULL) {
		w = t->modal;
		y = getmaxy(w) - 3;
		x0 = 2;
		cols = getmaxx(w) - 4;
		mvwhline(w, y, x0, ' ', cols);
	} else if (w != NULL) {
		cols = getmaxx(w);
		werase(w);
	} else
		return;
	x = text_draw_role(w, y, x0, t->prompt_label, strlen(t->prompt_label),
	    cols, ROLE_PENDING);
	x += text_draw_role(w, y, x0 + x, " ", 1, cols - x, ROLE_INPUT);
	cw = text_width(t->prompt_text.data, t->prompt_cursor);
	/* Keep the cursor on screen: show the tail of a long answer. */
	if (x + cw >= cols) {
		size_t skip = text_fit(t->prompt_text.data, t->prompt_cursor,
		    x + cw - cols + 1, NULL);
		text_draw_role(w, y, x0 + x, t->prompt_text.data + skip,
		    t->prompt_text.len - skip, cols - x, ROLE_INPUT);
		wmove(w, y, x0 + cols - 1);
	} else {
		text_draw_role(w, y, x0 + x, buf_str(&t->prompt_text),
		    t->prompt_text.len, cols - x, ROLE_INPUT);
		wmove(w, y, x0 + x + cw);
	}
	wnoutrefresh(w);
}

/*
 * Only what a key changed on the input line (or the open prompt), out to
 * the terminal now; a layout change or an overlay waits for tui_draw.
 */
static void
tui_draw_input(struct tui *t)
{
	struct pane	*p = &t->panes[PANE_INPUT];

	if (t->layout_dirty || t->too_small || t->overlay_on)
		return;
	if (t->prompt_on)
		tui_draw_prompt(t);
	else if (p->dirty && !p->hidden && p->win != NULL &&
	    t->focus == PANE_INPUT)
		tui_draw_pane(t, PANE_INPUT);
	else
		return;
	doupdate();
}

/*
 * Milliseconds until the panes that wait for their frame are due, or -1:
 * none waits. Panes not drawn now (hidden, under an overlay) do not count,
 * nor does the status bar (its spinner turns at the loop's own pace).
 */
static int
tui_frame_wait(struct tui *t)
{
	uint64_t	 since = mono_ms() - t->last_frame;
	struct pane	*p;
	int		 i;

	if (t->overlay_on)
		return -1;
	for (i = 0; i < PANE_COUNT; i++) {
		p = &t->panes[i];
		if (p->dirty && !p->hidden && p->win != NULL)
			break;
	}
	if (i == PANE_COUNT)
		return -1;
	return since >= TUI_FRAME_MS ? 0 : (int)(TUI_FRAME_MS - since);
}

static void
tui_draw(struct tui *t)
{
	const char	*msg;
	int		 i, any = 0, mh, mw, due = tui_frame_due(t);

	if (t->layout_dirty)
		tui_layout(t);
	if (t->too_small) {
		erase();
		msg = "terminal too small";
		mvaddstr(t->rows / 2, 0, msg);
		mvprintw(t->rows / 2 + 1, 0, "%dx%d, need %dx%d", t->cols,
		    t->rows, TUI_MIN_COLS, TUI_MIN_ROWS);
		refresh();
		return;
	}
	if (t->flash != NULL && mono_ms() >= t->flash_until) {
		free(t->flash);
		t->flash = NULL;
		t->status_dirty = 1;
	}
	if (!due) {
		tui_draw_input(t);	/* the rest at the next frame */
		return;
	}
	t->last_frame = mono_ms();
	t->keyed = 0;
	if (t->status_dirty) {
		tui_draw_status(t);
		t->status_dirty = 0;
	}
	if (t->overlay_on) {
		if (t->overlay_dirty && t->over != NULL) {
			werase(t->over);
			t->overlay.ops->draw(&t->overlay, t->over,
			    getmaxx(t->over), getmaxy(t->over));
			wnoutrefresh(t->over);
		}
		t->overlay_dirty = 0;
		if (t->prompt_on)	/* over the overlay's last row */
			tui_draw_prompt(t);
	} else {
		for (i = 0; i < PANE_COUNT; i++) {
			struct pane *p = &t->panes[i];

			if (!p->dirty || p->hidden || p->win == NULL)
				continue;
			any = 1;
			if (i == PANE_INPUT && t->prompt_on &&
			    !t->prompt_modal) {
				p->dirty = 0;
				continue;
			}
			tui_draw_pane(t, i);
		}
		if (t->prompt_on && !t->prompt_modal)
			tui_draw_prompt(t);
		if (approval_count(t->approval) > 0) {
			if (any || t->modal_dirty || t->modal == NULL) {
				mw = t->cols * 4 / 5;
				mh = approval_height(t->approval, mw);
				if (mh > t->rows * 2 / 3)
					mh = t->rows * 2 / 3;
				if (mh < 8)
					mh = 8;
				tui_place(&t->modal, mh, (t->cols - mw) / 2,
				    (t->rows - mh) / 2, mw);
				if (t->modal != NULL) {
					werase(t->modal);
					approval_draw(t->approval, t->modal,
					    mw, mh);
					wnoutrefresh(t->modal);
				}
				t->modal_dirty = 0;
			}
		} else if (t->modal != NULL) {
			tui_place(&t->modal, 0, 0, 0, 0);
			t->layout_dirty = 1;
		}
	}
	/* The cursor sits in the line being edited, else it is hidden. */
	if (t->prompt_on && (t->panes[PANE_INPUT].win || t->modal)) {
		curs_set(1);
		tui_draw_prompt(t);
	} else if (t->focus == PANE_INPUT && !t->overlay_on &&
	    approval_count(t->approval) == 0 && t->panes[PANE_INPUT].win) {
		curs_set(1);
		wnoutrefresh(t->panes[PANE_INPUT].win);
	} else
		curs_set(0);
	doupdate();
}

/* -------------------------------------------------------------------- */
/* Prompts and overlays. */

void
tui_prompt(struct tui *t, const char *label, const char *initial,
    tui_prompt_cb cb, void *arg)
{
	free(t->prompt_label);
	t->prompt_label = xstrdup(label);
	buf_reset(&t->prompt_text);
	if (initial != NULL)
		buf_adds(&t->prompt_text, initial);
	t->prompt_cursor = t->prompt_text.len;
	t->prompt_cb = cb;
	t->prompt_tab = NULL;
	t->prompt_arg = arg;
	t->prompt_on = 1;
	t->prompt_modal = 0;
	t->layout_dirty = 1;
}

void
tui_prompt_modal(struct tui *t, const char *label, const char *initial,
    tui_prompt_cb cb, void *arg)
{
	tui_prompt(t, label, initial, cb, arg);
	t->prompt_modal = 1;
	t->modal_dirty = 1;
}

static void
tui_prompt_end(struct tui *t, int ok)
{
	tui_prompt_cb	 cb = t->prompt_cb;
	void		*arg = t->prompt_arg;
	char		*text = xstrdup(buf_str(&t->prompt_text));

	t->prompt_on = 0;
	t->prompt_modal = 0;
	t->layout_dirty = 1;
	t->overlay_dirty = 1;
	t->modal_dirty = 1;
	cb(t, arg, ok ? text : NULL);
	free(text);
}

void
tui_prompt_cancel(struct tui *t)
{
	if (t->prompt_on)
		tui_prompt_end(t, 0);
}

/* Insert the UTF-8 form of KEY into B at *cur. */
static void
tui_insert_key(struct buf *b, size_t *cur, int key)
{
	char		 u[4];
	size_t		 n;
	unsigned int	 c = (unsigned int)key;

	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | (c >> 6));
		u[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | (c >> 12));
		u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (c >> 18));
		u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	tui_edit_insert(b, cur, u, n);
}

/*
 * Readline's words: letters, digits and any byte of a multi-byte UTF-8
 * character. One kill buffer is shared by the input and the prompts, as
 * readline's is.
 */
static struct buf	tui_killed = BUF_INIT;

static int
tui_word_byte(unsigned char c)
{
	return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z') || c == '_';
}

static size_t
tui_word_back(const struct buf *b, size_t cur)
{
	while (cur > 0 && !tui_word_byte((unsigned char)b->data[cur - 1]))
		cur--;
	while (cur > 0 && tui_word_byte((unsigned char)b->data[cur - 1]))
		cur--;
	return cur;
}

static size_t
tui_word_forward(const struct buf *b, size_t cur)
{
	while (cur < b->len && !tui_word_byte((unsigned char)b->data[cur]))
		cur++;
	while (cur < b->len && tui_word_byte((unsigned char)b->data[cur]))
		cur++;
	return cur;
}

/* Cut FROM..TO of B into the kill buffer. */
static void
tui_kill(struct buf *b, size_t from, size_t to)
{
	if (to <= from)
		return;
	buf_reset(&tui_killed);
	buf_add(&tui_killed, b->data + from, to - from);
	memmove(b->data + from, b->data + to, b->len - to + 1);
	b->len -= to - from;
}

void
tui_edit_insert(struct buf *b, size_t *cur, const char *s, size_t len)
{
	buf_grow(b, len);
	b->data[b->len] = '\0';
	memmove(b->data + *cur + len, b->data + *cur, b->len - *cur + 1);
	memcpy(b->data + *cur, s, len);
	b->len += len;
	*cur += len;
}

int
tui_edit_key(struct buf *b, size_t *cur, int key)
{
	size_t	 start;

	if (b->data == NULL)
		buf_adds(b, "");	/* the editing below needs a NUL */
	switch (key) {
	case KEYC_CTRL('w'):
		start = tui_word_back(b, *cur);
		tui_kill(b, start, *cur);
		*cur = start;
		return 1;
	case KEYC_META | 'd':
		tui_kill(b, *cur, tui_word_forward(b, *cur));
		return 1;
	case KEYC_META | 'b':
		*cur = tui_word_back(b, *cur);
		return 1;
	case KEYC_META | 'f':
		*cur = tui_word_forward(b, *cur);
		return 1;
	case KEYC_CTRL('y'):
		if (tui_killed.len > 0)
			tui_edit_insert(b, cur, tui_killed.data, tui_killed.len);
		return 1;
	case KEYC_FN | KEY_LEFT:
		while (*cur > 0 && (b->data[--(*cur)] & 0xc0) == 0x80)
			;
		return 1;
	case KEYC_FN | KEY_RIGHT:
		if (*cur < b->len) {
			(*cur)++;
			while (*cur < b->len && (b->data[*cur] & 0xc0) == 0x80)
				(*cur)++;
		}
		return 1;
	case KEYC_FN | KEY_HOME:
	case KEYC_CTRL('a'):
		*cur = 0;
		return 1;
	case KEYC_FN | KEY_END:
	case KEYC_CTRL('e'):
		*cur = b->len;
		return 1;
	case KEYC_FN | KEY_BACKSPACE:
	case 127:
	case KEYC_CTRL('h'):
		if (*cur == 0)
			return 1;
		start = *cur;
		while (start > 0 && (b->data[--start] & 0xc0) == 0x80)
			;
		memmove(b->data + start, b->data + *cur, b->len - *cur + 1);
		b->len -= *cur - start;
		*cur = start;
		return 1;
	case KEYC_FN | KEY_DC:
	case KEYC_CTRL('d'):
		if (*cur >= b->len)
			return 1;
		start = *cur + 1;
		while (start < b->len && (b->data[start] & 0xc0) == 0x80)
			start++;
		memmove(b->data + *cur, b->data + start, b->len - start + 1);
		b->len -= start - *cur;
		return 1;
	case KEYC_CTRL('u'):
		tui_kill(b, 0, *cur);
		*cur = 0;
		return 1;
	case KEYC_CTRL('k'):
		tui_kill(b, *cur, b->len);
		return 1;
	}
	if ((key & (KEYC_FN | KEYC_META)) || key < 0x20 || key == 0x7f)
		return 0;
	tui_insert_key(b, cur, key);
	return 1;
}

static void
tui_prompt_key(struct tui *t, int key)
{
	if (key == '\r' || key == (KEYC_FN | KEY_ENTER)) {
		tui_prompt_end(t, 1);
		return;
	}
	if (key == 27 || key == KEYC_CTRL('c') || key == KEYC_CTRL('g')) {
		tui_prompt_end(t, 0);
		return;
	}
	if (key == '\t' && t->prompt_tab != NULL) {
		t->prompt_tab(t, t->prompt_arg, buf_str(&t->prompt_text));
		return;
	}
	tui_edit_key(&t->prompt_text, &t->prompt_cursor, key);
}

void
tui_prompt_on_tab(struct tui *t, tui_prompt_cb cb)
{
	t->prompt_tab = cb;
}

void
tui_prompt_set(struct tui *t, const char *text)
{
	buf_reset(&t->prompt_text);
	buf_adds(&t->prompt_text, text);
	t->prompt_cursor = t->prompt_text.len;
}

void
tui_overlay(struct tui *t, const struct overlay_ops *ops, void *data)
{
	if (t->overlay_on && t->overlay.ops->free != NULL)
		t->overlay.ops->free(&t->overlay);
	t->overlay.ops = ops;
	t->overlay.tui = t;
	t->overlay.data = data;
	t->overlay_on = (ops != NULL);
	t->overlay_dirty = 1;
	t->layout_dirty = 1;
}

void
tui_overlay_dirty(struct tui *t)
{
	t->overlay_dirty = 1;
}

/* -------------------------------------------------------------------- */
/* Keys. */

static void
tui_focus(struct tui *t, int i)
{
	if (i == t->focus)
		return;
	t->panes[t->focus].dirty = 1;
	t->focus = i;
	t->panes[i].dirty = 1;
	if (t->zoom >= 0 && t->zoom != i) {
		t->zoom = -1;
		t->layout_dirty = 1;
	}
}

static void
tui_focus_dir(struct tui *t, enum ui_action a)
{
	int	f = t->focus;

	switch (a) {
	case ACT_FOCUS_LEFT:
		if (f == PANE_AGENT)
			f = PANE_TREE;
		break;
	case ACT_FOCUS_RIGHT:
		if (f == PANE_TREE)
			f = PANE_AGENT;
		break;
	case ACT_FOCUS_UP:
		if (f == PANE_INPUT)
			f = PANE_OUTPUT;
		else if (f == PANE_OUTPUT)
			f = PANE_AGENT;
		break;
	case ACT_FOCUS_DOWN:
		if (f == PANE_TREE || f == PANE_AGENT)
			f = PANE_OUTPUT;
		else if (f == PANE_OUTPUT)
			f = PANE_INPUT;
		break;
	default:
		break;
	}
	tui_focus(t, f);
}

static void
tui_cycle_mode(struct tui *t)
{
	static const char *modes[] = { "manual", "auto", "strict" };
	const char	*cur = json_str(t->state, "mode");
	size_t		 i, next = 0;

	if (t->readonly) {
		tui_flash(t, "read-only: the mode stays");
		return;
	}
	for (i = 0; cur != NULL && i < nitems(modes); i++) {
		if (strcmp(cur, modes[i]) == 0)
			next = (i + 1) % nitems(modes);
	}
	tui_set_mode(t, modes[next]);
}

void
tui_set_mode(struct tui *t, const char *mode)
{
	cJSON	*m;

	if (t->readonly) {
		tui_flash(t, "read-only: the mode stays");
		return;
	}
	m = tui_request(t, "mode");
	cJSON_AddStringToObject(m, "mode", mode);
	tui_send(t, m);
	tui_flash(t, "mode: %s", mode);
}

static void
tui_interrupt(struct tui *t)
{
	if (t->readonly) {
		tui_flash(t, "read-only: cannot interrupt");
		return;
	}
	tui_send(t, tui_request(t, "interrupt"));
	tui_flash(t, "interrupt sent");
}

static void
tui_next_theme(struct tui *t)
{
	char	*name = theme_next(), *cause = NULL;

	if (theme_load(name, &cause) != 0) {
		tui_flash(t, "%s", cause);
		free(cause);
	} else
		tui_flash(t, "theme: %s", name);
	free(name);
	clearok(curscr, TRUE);
	t->layout_dirty = 1;
}

/* Global actions; 1 if it was one. */
static int	tui_action(struct tui *, enum ui_action);

void
tui_files_changed(struct tui *t)
{
	view_tree_changed(&t->panes[PANE_TREE], NULL, 1);
}

int
tui_do(struct tui *t, enum ui_action a)
{
	return tui_action(t, a);
}

static int
tui_action(struct tui *t, enum ui_action a)
{
	switch (a) {
	case ACT_DETACH:
		/* A push in flight dies with the screen: say so once. */
		if (t->job != NULL && !t->detach_warned) {
			t->detach_warned = 1;
			tui_flash(t, "a push is still running; detach again to "
			    "stop it");
			return 1;
		}
		t->done = 1;
		t->detached = 1;
		return 1;
	case ACT_FOCUS_NEXT:
		tui_focus(t, (t->focus + 1) % PANE_COUNT);
		return 1;
	case ACT_FOCUS_PREV:
		tui_focus(t, (t->focus + PANE_COUNT - 1) % PANE_COUNT);
		return 1;
	case ACT_FOCUS_LEFT:
	case ACT_FOCUS_RIGHT:
	case ACT_FOCUS_UP:
	case ACT_FOCUS_DOWN:
		tui_focus_dir(t, a);
		return 1;
	case ACT_FOCUS_TREE:
	case ACT_FOCUS_AGENT:
	case ACT_FOCUS_OUTPUT:
	case ACT_FOCUS_INPUT:
		tui_focus(t, PANE_TREE + (int)(a - ACT_FOCUS_TREE));
		return 1;
	case ACT_ZOOM:
		t->zoom = (t->zoom == t->focus || t->focus == PANE_INPUT) ?
		    -1 : t->focus;
		t->layout_dirty = 1;
		return 1;
	case ACT_HELP:
		help_open(t);
		return 1;
	case ACT_MODE:
		tui_cycle_mode(t);
		return 1;
	case ACT_DIFF:
		diff_open(t);
		return 1;
	case ACT_THEME:
		tui_next_theme(t);
		return 1;
	case ACT_REDRAW:
		clearok(curscr, TRUE);
		t->layout_dirty = 1;
		return 1;
	case ACT_INTERRUPT:
		/* Esc interrupts; Esc Esc lists the steps to rewind to. */
		if (t->last_esc != 0 && mono_ms() - t->last_esc < 800) {
			t->last_esc = 0;
			slash_run(t, "/rewind");
			return 1;
		}
		t->last_esc = mono_ms();
		tui_interrupt(t);
		return 1;
	case ACT_CLOSE:
		tui_focus(t, PANE_INPUT);
		return 1;
	default:
		return 0;
	}
}

static struct pane *
tui_pane_at(struct tui *t, int x, int y)
{
	struct pane	*p;
	int		 i;

	for (i = 0; i < PANE_COUNT; i++) {
		p = &t->panes[i];
		if (!p->hidden && x >= p->x && x < p->x + p->w &&
		    y >= p->y && y < p->y + p->h)
			return p;
	}
	return NULL;
}

static void
tui_mouse(struct tui *t)
{
	MEVENT		 me;
	struct pane	*p;
	int		 i, again, by, bx, h, w;

	if (getmouse(&me) != OK || t->overlay_on)
		return;
	if ((p = tui_pane_at(t, me.x, me.y)) == NULL)
		return;
	if (me.bstate & BUTTON1_PRESSED) {
		again = t->focus == (int)(p - t->panes);
		tui_focus(t, (int)(p - t->panes));
		if (p->view->click == NULL || p->win == NULL)
			return;
		getbegyx(p->win, by, bx);
		getmaxyx(p->win, h, w);
		if (me.y >= by && me.y < by + h && me.x >= bx && me.x < bx + w) {
			p->view->click(p, me.x - bx, me.y - by, again);
			pane_dirty(p);
		}
	} else if (me.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
		for (i = 0; i < 3; i++) {
			p->view->key(p, 0, (me.bstate & BUTTON4_PRESSED) ?
			    ACT_UP : ACT_DOWN);
		}
	}
}

static void
tui_key(struct tui *t, int key)
{
	struct pane	*p;
	enum ui_action	 a;

	if (key == (KEYC_FN | KEY_MOUSE)) {
		tui_mouse(t);
		return;
	}
	if (t->prefix) {
		t->prefix = 0;
		t->status_dirty = 1;
		if ((a = keys_lookup(SCOPE_PREFIX, key)) != ACT_NONE)
			tui_action(t, a);
		return;
	}
	if (key == keys_prefix()) {
		t->prefix = 1;
		return;
	}
	if (t->prompt_on) {
		tui_prompt_key(t, key);
		return;
	}
	if (t->overlay_on) {
		if (t->overlay.ops->key(&t->overlay, key) == 0)
			tui_overlay(t, NULL, NULL);
		t->overlay_dirty = 1;
		return;
	}
	if (approval_count(t->approval) > 0) {
		approval_check(t->approval, tui_typing(t));
		if (approval_guarded(t->approval) &&
		    keys_lookup(SCOPE_APPROVAL, key) == ACT_ARM) {
			approval_arm(t->approval);
			t->modal_dirty = 1;
			return;
		}
		if (!approval_guarded(t->approval) &&
		    approval_key(t->approval, key)) {
			t->modal_dirty = 1;
			t->status_dirty = 1;
			return;
		}
	}
	t->last_typed = mono_ms();
	p = &t->panes[t->focus];
	a = keys_lookup(p->view->scope, key);
	if (a == ACT_NONE && p->view->scope != SCOPE_INPUT)
		a = keys_lookup(SCOPE_PANE, key);
	if (p->view->key(p, key, a))
		return;
	if (t->focus == PANE_INPUT && (a == ACT_PAGE_UP || a == ACT_PAGE_DOWN)) {
		p = &t->panes[PANE_AGENT];
		p->view->key(p, 0, a);
		return;
	}
	if (tui_action(t, a))
		return;
	if ((a = keys_lookup(SCOPE_GLOBAL, key)) != ACT_NONE)
		tui_action(t, a);
}

/*
 * A bracketed paste is text, never keys: it goes whole into the input
 * line (or the open prompt, on one line), however many newlines it has.
 */
static void
tui_paste_key(struct tui *t, int rc, wint_t wc)
{
	struct pane	*in = &t->panes[PANE_INPUT];
	size_t		 i;

	if (rc == KEY_CODE_YES && wc == TUI_KEY_PASTED) {
		t->pasting = 0;
		t->last_typed = mono_ms();
		if (t->prompt_on) {
			for (i = 0; i < t->paste.len; i++) {
				if (t->paste.data[i] == '\n')
					t->paste.data[i] = ' ';
			}
			tui_edit_insert(&t->prompt_text, &t->prompt_cursor,
			    t->paste.data, t->paste.len);
		} else if (t->readonly)
			tui_flash(t, "read-only: messages are not sent");
		else if (t->paste.len > 0) {
			tui_focus(t, PANE_INPUT);
			view_input_paste(in, t->paste.data, t->paste.len);
		}
		buf_reset(&t->paste);
		return;
	}
	if (rc == KEY_CODE_YES || t->paste.len >= TUI_PASTE_MAX)
		return;
	/* Terminals send a line end as CR (tmux does); CR LF is one. */
	if (wc == '\n' && t->paste_cr) {
		t->paste_cr = 0;
		return;
	}
	t->paste_cr = wc == '\r';
	if (wc == '\r')
		wc = '\n';
	if (wc < 0x20 && wc != '\n' && wc != '\t')
		return;
	i = t->paste.len;
	tui_insert_key(&t->paste, &i, (int)wc);
}

static void
tui_read_keys(struct tui *t)
{
	wint_t	 wc;
	int	 rc, key, n = 0;

	while ((t->pasting || n++ < 256) && !t->done) {
		rc = get_wch(&wc);
		if (rc == ERR)
			break;
		if (rc == KEY_CODE_YES && wc == TUI_KEY_PASTE) {
			t->pasting = 1;
			buf_reset(&t->paste);
			continue;
		}
		if (t->pasting) {
			tui_paste_key(t, rc, wc);
			continue;
		}
		key = (rc == KEY_CODE_YES) ? (int)(KEYC_FN | wc) : (int)wc;
		if (key == (KEYC_FN | KEY_RESIZE)) {
			t->layout_dirty = 1;
			continue;
		}
		if (key == 27) {
			/* Alt sends Esc and the key together. */
			rc = get_wch(&wc);
			if (rc == OK && (wc == '[' || wc == 'O')) {
				/* A key sequence curses did not know, or
				 * one torn by a slow link: drop it whole
				 * rather than type its letters. */
				while ((rc = get_wch(&wc)) == OK &&
				    !(wc >= 0x40 && wc <= 0x7e))
					;
				continue;
			}
			if (rc == OK)
				key = KEYC_META | (int)wc;
			else if (rc == KEY_CODE_YES)
				key = KEYC_META | KEYC_FN | (int)wc;
		}
		if (key == (KEYC_FN | KEY_ENTER))
			key = '\r';
		tui_key(t, key);
		t->keyed = 1;
	}
}

/* -------------------------------------------------------------------- */

static void
tui_resize(struct tui *t)
{
	struct winsize	 ws;

	tui_got_winch = 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 &&
	    ws.ws_row > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	t->layout_dirty = 1;
}

/*
 * Terminals send cursor keys in normal or application mode whatever their
 * terminfo entry says (tmux, screen, ssh from another terminal): know both.
 */
static void
tui_define_keys(void)
{
	static const struct {
		const char	*seq;
		int		 key;
	} keys[] = {
		{ "\033[A", KEY_UP }, { "\033[B", KEY_DOWN },
		{ "\033[C", KEY_RIGHT }, { "\033[D", KEY_LEFT },
		{ "\033OA", KEY_UP }, { "\033OB", KEY_DOWN },
		{ "\033OC", KEY_RIGHT }, { "\033OD", KEY_LEFT },
		{ "\033[H", KEY_HOME }, { "\033[F", KEY_END },
		{ "\033OH", KEY_HOME }, { "\033OF", KEY_END },
		{ "\033[1~", KEY_HOME }, { "\033[4~", KEY_END },
		{ "\033[7~", KEY_HOME }, { "\033[8~", KEY_END },
		{ "\033[5~", KEY_PPAGE }, { "\033[6~", KEY_NPAGE },
		{ "\033[3~", KEY_DC }, { "\033[Z", KEY_BTAB },
		{ "\033[200~", TUI_KEY_PASTE }, { "\033[201~", TUI_KEY_PASTED },
	};
	size_t	 i;

	for (i = 0; i < nitems(keys); i++) {
		if (key_defined(keys[i].seq) == 0)
			define_key(keys[i].seq, keys[i].key);
	}
}

static int
tui_attach(struct tui *t, char **cause)
{
	cJSON		*m, *r = NULL;
	char		*why = NULL;
	const char	*type;
	int		 rc;

	m = tui_request(t, "attach");
	cJSON_AddBoolToObject(m, "readonly", t->readonly);
	cJSON_AddBoolToObject(m, "files", 1);	/* the tree follows the sandbox */
	cJSON_AddNumberToObject(m, "last", 2000);
	rc = frame_write_fd(t->fd, m);
	cJSON_Delete(m);
	for (;;) {
		if (rc == 0)
			rc = frame_read_fd(t->fd, &r, &why);
		if (rc <= 0) {
			*cause = xprintf("session '%s': %s", t->session,
			    why != NULL ? why : rc == 0 ? "server closed the "
			    "connection" : strerror(errno));
			free(why);
			return -1;
		}
		type = json_str(r, "type");
		if (type != NULL && strcmp(type, "error") == 0) {
			*cause = xprintf("session '%s': %s", t->session,
			    json_str(r, "message") != NULL ?
			    json_str(r, "message") : "cannot attach");
			cJSON_Delete(r);
			return -1;
		}
		if (type != NULL && strcmp(type, "snapshot") == 0)
			break;
		cJSON_Delete(r);	/* an "ok" before the snapshot */
		r = NULL;
	}
	tui_message(t, r);
	cJSON_Delete(r);
	return 0;
}

static uint64_t
tui_tick(struct tui *t)
{
	uint64_t	 now = mono_ms();
	const char	*st = json_str(t->state, "state");
	int		 i;

	for (i = 0; i < PANE_COUNT; i++) {
		if (t->panes[i].view->tick != NULL)
			t->panes[i].view->tick(&t->panes[i], now);
	}
	if (st != NULL && strcmp(st, "working") == 0)
		t->status_dirty = 1;
	/* A guarded request arms itself once the typing has stopped. */
	if (approval_guarded(t->approval) &&
	    view_input_len(&t->panes[PANE_INPUT]) == 0 &&
	    now - t->last_typed >= TUI_QUIET_MS) {
		approval_arm(t->approval);
		t->modal_dirty = 1;
	}
	tui_job_collect(t);
	/*
	 * A stream of output leaves the heap full of freed frames and parse
	 * trees; hand the pages back now and then (it walks the heap, so at
	 * most once a second, and only after megabytes came in).
	 */
	if (t->read_since_trim > 4 * 1024 * 1024 && now - t->last_trim > 1000) {
		malloc_trim(0);
		t->read_since_trim = 0;
		t->last_trim = now;
	}
	return now;
}

int
tui_main(const char *session, int readonly, const char *theme, char **cause)
{
	struct tui	 tt, *t = &tt;
	struct pollfd	 pfd[4];
	char		*why = NULL, drain[64];
	int		 i, n, rc = 0, theme_err = 0, tmux_prefix, wait;
	const char	*prefix;

	memset(t, 0, sizeof *t);
	t->session = xstrdup(session != NULL ? session : "default");
	t->readonly = readonly;
	t->zoom = -1;
	t->focus = PANE_INPUT;
	t->fd = -1;
	buf_init(&t->out);
	buf_init(&t->prompt_text);
	frame_decoder_init(&t->dec, FRAME_MAX);

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		*cause = xstrdup("the screen needs a terminal (use holt log "
		    "or holt send without one)");
		free(t->session);
		return -1;
	}
	prefix = config_get("prefix");
	/*
	 * Inside tmux, C-b is tmux's own prefix: C-b d would detach tmux,
	 * not holt. Unless holt.conf says otherwise, take C-g, which neither
	 * tmux nor screen binds, and say so.
	 */
	tmux_prefix = getenv("TMUX") != NULL && *getenv("TMUX") != '\0' &&
	    strcmp(config_source("prefix"), "default") == 0;
	if (tmux_prefix)
		prefix = TUI_TMUX_PREFIX;
	if (keys_set_prefix(prefix, &why) != 0) {
		log_warnx("%s", why);
		free(why);
		why = NULL;
	}
	if (theme == NULL)
		theme = config_get("theme");
	if (theme_load(theme, &why) != 0)
		theme_err = 1;

	if ((t->fd = client_connect(1, cause)) == -1)
		goto fail;
	t->approval = approval_new(t);
	for (i = 0; i < PANE_COUNT; i++) {
		t->panes[i].view = tui_views[i];
		t->panes[i].tui = t;
		t->panes[i].view->init(&t->panes[i]);
	}
	if (tui_attach(t, cause) != 0)
		goto fail;
	file_set_nonblock(t->fd);

	if (pipe2(tui_sigpipe, O_CLOEXEC | O_NONBLOCK) == -1)
		fatal("pipe2");
	if (tcgetattr(STDIN_FILENO, &tui_saved_tio) == 0)
		tui_saved_ok = 1;
	tui_signals();
	/* Long enough for a key sequence over a slow link or a loaded
	 * machine to arrive whole; Esc alone costs this much delay. */
	set_escdelay(100);
	if (initscr() == NULL) {
		*cause = xstrdup("cannot start the screen (is TERM set?)");
		goto fail;
	}
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	tui_define_keys();
	nodelay(stdscr, TRUE);
	mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	/* Bracketed paste: a paste comes as one block, not as keys. */
	if (write(STDOUT_FILENO, "\033[?2004h", 8) != 8)
		log_debug("bracketed paste: %s", strerror(errno));
	mouseinterval(0);
	theme_start();
	if (tmux_prefix) {
		tui_flash(t, "inside tmux the prefix is %s (C-b stays tmux's): "
		    "%s d detaches; prefix in holt.conf changes it",
		    TUI_TMUX_PREFIX, TUI_TMUX_PREFIX);
		tui_flash_hold(t, 10000);
	}
	if (theme_err) {
		tui_flash(t, "%s; using the default theme", why);
		t->flash_until = mono_ms() + 15000;
		free(why);
		why = NULL;
	}
	t->layout_dirty = 1;

	while (!t->done) {
		if (tui_got_term)
			break;
		if (tui_got_winch)
			tui_resize(t);
		tui_tick(t);
		tui_draw(t);
		if (t->out.len > 0)
			tui_write_server(t);

		n = 0;
		pfd[n].fd = STDIN_FILENO;
		pfd[n++].events = POLLIN;
		pfd[n].fd = t->fd;
		pfd[n++].events = POLLIN | (t->out.len > 0 ? POLLOUT : 0);
		pfd[n].fd = tui_sigpipe[0];
		pfd[n++].events = POLLIN;
		/* Wake for spinners, flashes and delayed work: 100 ms; for
		 * panes that wait for their frame, sooner. */
		wait = tui_frame_wait(t);
		if (poll(pfd, (nfds_t)n, wait >= 0 && wait < 100 ? wait :
		    100) == -1) {
			if (errno == EINTR)
				continue;
			fatal("poll");
		}
		if (pfd[2].revents & POLLIN) {
			while (read(tui_sigpipe[0], drain, sizeof drain) > 0)
				;
		}
		/* Keys first, and their echo out before the server's data. */
		if (pfd[0].revents & POLLIN) {
			tui_read_keys(t);
			tui_draw_input(t);
		}
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))
			tui_read_server(t);
		if (pfd[1].revents & POLLOUT)
			tui_write_server(t);
		if (pfd[0].revents & (POLLHUP | POLLERR)) {
			t->exit_cause = xstrdup("terminal closed");
			break;
		}
	}
	if (t->detached) {
		cJSON *m = cJSON_CreateObject();

		cJSON_AddStringToObject(m, "type", "detach");
		tui_send(t, m);
		file_set_nonblock(t->fd);
		tui_write_server(t);
	}
	tui_overlay(t, NULL, NULL);
	if (write(STDOUT_FILENO, "\033[?2004l", 8) != 8)
		log_debug("bracketed paste: %s", strerror(errno));
	endwin();
	if (t->detached)
		printf("[detached (from session %s)]\n", t->session);
	else if (t->exit_cause != NULL)
		printf("[%s]\n", t->exit_cause);
	else if (tui_got_term)
		printf("[terminated]\n");
	goto out;

fail:
	rc = -1;
	free(why);
out:
	for (i = 0; i < PANE_COUNT; i++) {
		if (t->panes[i].view != NULL && t->panes[i].view->free != NULL)
			t->panes[i].view->free(&t->panes[i]);
		free(t->panes[i].title);
	}
	approval_free(t->approval);
	buf_release(&t->paste);
	if (t->fd != -1)
		close(t->fd);
	for (i = 0; i < 2; i++) {
		if (tui_sigpipe[i] != -1)
			close(tui_sigpipe[i]);
		tui_sigpipe[i] = -1;
	}
	cJSON_Delete(t->state);
	buf_release(&t->out);
	buf_release(&t->prompt_text);
	frame_decoder_release(&t->dec);
	free(t->prompt_label);
	free(t->flash);
	free(t->exit_cause);
	free(t->session);
	return rc;
}
