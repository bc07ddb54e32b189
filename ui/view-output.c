/*
 * view-output.c: the output of the running or last command (run_command,
 * run_tests, start_service): streamed, SGR colours kept and drawn, other
 * escape sequences dropped, long lines wrapped, a test run's verdict in the
 * pane's title.
 *
 * Lines live in a ring of at most OUT_MAX_LINES lines and OUT_MAX_BYTES
 * bytes (in chunks); the oldest go first, so a flood costs bounded memory. Each line has
 * a sequence number; the view follows the end or is anchored at a line and
 * row, and a draw wraps only the lines it shows, so its cost does not grow
 * with the scrollback.
 */
#include <stdlib.h>
#include <string.h>

#include "ui.h"

#define OUT_MAX_LINES	100000
#define OUT_MAX_BYTES	(12 * 1024 * 1024)
#define OUT_LINE_MAX	8192		/* a longer line is split */
#define OUT_CALLS	32

enum out_state { OS_NORMAL, OS_CR, OS_ESC, OS_CSI, OS_OSC, OS_OSC_ESC };

struct out_call {
	char		*id;
	char		*command;
	int		 tests;
};

/*
 * Lines are packed, NUL-terminated, into chunks, oldest chunk first: a
 * line costs its bytes and a pointer, not a malloc each. Lines leave in the
 * order they came, so the oldest line is always in the oldest chunk.
 */
#define OUT_CHUNK	(256 * 1024)
struct out_chunk {
	struct out_chunk *next;
	size_t		 used;
	size_t		 lines;		/* lines still kept in it */
	char		 data[];
};

struct output {
	char		**lines;	/* ring of pointers into the chunks */
	struct out_chunk *head, *tail;
	size_t		 start, count;
	uint64_t	 first_seq;
	size_t		 bytes;
	struct buf	 cur;		/* the line still open */
	enum out_state	 st;
	struct buf	 esc;

	struct out_call	 calls[OUT_CALLS];
	int		 ncalls;
	char		*current;	/* call id shown */
	char		*command;
	int		 tests;
	int		 running;
	int		 has_exit, exit_code, timed_out, interrupted;
	double		 duration_ms;
	const char	*verdict;
	size_t		 seen;		/* output offset fed so far */

	int		 follow;
	uint64_t	 top_seq;
	size_t		 top_row;
	int		 w, h;
};

/* Line SEQ (the open line is first_seq + count); NULL if gone. */
static const char *
out_line(struct output *o, uint64_t seq, size_t *len)
{
	const char	*s;

	if (seq < o->first_seq)
		return NULL;
	if (seq - o->first_seq == o->count) {
		*len = o->cur.len;
		return buf_str(&o->cur);
	}
	if (seq - o->first_seq > o->count)
		return NULL;
	s = o->lines[(o->start + (seq - o->first_seq)) % OUT_MAX_LINES];
	*len = strlen(s);
	return s;
}

static uint64_t
out_last_seq(struct output *o)
{
	return o->first_seq + o->count - (o->cur.len == 0 && o->count > 0);
}

/* A new chunk at the tail of the chunk queue. */
static struct out_chunk *
out_chunk_new(struct output *o)
{
	struct out_chunk	*c;

	c = xmalloc(sizeof *c + OUT_CHUNK);
	c->next = NULL;
	c->used = 0;
	c->lines = 0;
	if (o->tail != NULL)
		o->tail->next = c;
	else
		o->head = c;
	o->tail = c;
	o->bytes += OUT_CHUNK;
	return c;
}

/* The oldest line goes; its chunk goes with its last line. */
static void
out_evict(struct output *o)
{
	struct out_chunk	*c = o->head;

	o->lines[o->start] = NULL;
	o->start = (o->start + 1) % OUT_MAX_LINES;
	o->count--;
	o->first_seq++;
	if (c != NULL && --c->lines == 0 && c != o->tail) {
		o->head = c->next;
		o->bytes -= OUT_CHUNK;
		free(c);
	}
}

static void
out_push(struct output *o)
{
	struct out_chunk	*c = o->tail;
	size_t			 need = o->cur.len + 1;

	if (need > OUT_CHUNK)	/* out_feed splits lines long before */
		BUG();
	while (o->count > 0 && (o->count == OUT_MAX_LINES ||
	    o->bytes + OUT_CHUNK > OUT_MAX_BYTES))
		out_evict(o);
	if (c == NULL || c->used + need > OUT_CHUNK)
		c = out_chunk_new(o);
	memcpy(c->data + c->used, buf_str(&o->cur), o->cur.len);
	c->data[c->used + o->cur.len] = '\0';
	o->lines[(o->start + o->count) % OUT_MAX_LINES] = c->data + c->used;
	c->used += need;
	c->lines++;
	o->count++;
	buf_reset(&o->cur);
}

static void
out_clear(struct output *o)
{
	struct out_chunk	*c, *next;
	size_t			 i;

	for (i = 0; i < o->count; i++)
		o->lines[(o->start + i) % OUT_MAX_LINES] = NULL;
	for (c = o->head; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	o->head = o->tail = NULL;
	o->first_seq += o->count + 1;
	o->start = o->count = o->bytes = 0;
	o->seen = 0;
	buf_reset(&o->cur);
	o->st = OS_NORMAL;
	o->follow = 1;
	o->top_row = 0;
}

/* Program output in: keep text, tabs and SGR; drop other controls. */
static void
out_feed(struct output *o, const char *data, size_t len)
{
	const unsigned char	*u = (const unsigned char *)data;
	size_t			 i, run;
	unsigned char		 c;

	for (i = 0; i < len; i++) {
		c = u[i];
		switch (o->st) {
		case OS_CR:
			o->st = OS_NORMAL;
			if (c != '\n')
				buf_reset(&o->cur);	/* a progress bar */
			/* FALLTHROUGH */
		case OS_NORMAL:
			if (c >= 0x20 && c != 0x7f) {
				/* The common case: a run of plain bytes. */
				for (run = i; run < len && u[run] >= 0x20 &&
				    u[run] != 0x7f && run - i <
				    OUT_LINE_MAX - o->cur.len; run++)
					;
				buf_add(&o->cur, data + i, run - i);
				i = run - 1;
			} else if (c == '\n')
				out_push(o);
			else if (c == '\r')
				o->st = OS_CR;
			else if (c == '\t')
				buf_addc(&o->cur, '\t');
			else if (c == 0x1b)
				o->st = OS_ESC;
			break;
		case OS_ESC:
			if (c == '[') {
				buf_reset(&o->esc);
				buf_adds(&o->esc, "\033[");
				o->st = OS_CSI;
			} else if (c == ']')
				o->st = OS_OSC;
			else
				o->st = OS_NORMAL;
			break;
		case OS_CSI:
			buf_addc(&o->esc, (char)c);
			if (c >= 0x40 && c <= 0x7e) {
				if (c == 'm')
					buf_add(&o->cur, o->esc.data, o->esc.len);
				o->st = OS_NORMAL;
			} else if (o->esc.len > 64)
				o->st = OS_NORMAL;
			break;
		case OS_OSC:
			if (c == 7)
				o->st = OS_NORMAL;
			else if (c == 0x1b)
				o->st = OS_OSC_ESC;
			break;
		case OS_OSC_ESC:
			o->st = (c == '\\') ? OS_NORMAL : OS_OSC;
			break;
		}
		/* Whatever made it long (text, tabs, colours): split. */
		if (o->cur.len >= OUT_LINE_MAX)
			out_push(o);
	}
}

static void
out_title(struct pane *p)
{
	struct output	*o = p->data;
	struct buf	 b = BUF_INIT;

	if (o->command == NULL) {
		pane_set_title(p, "output");
		return;
	}
	buf_addf(&b, "output: %s", o->command);
	if (o->running)
		buf_adds(&b, "  running");
	else if (o->interrupted)
		buf_adds(&b, "  interrupted");
	else if (o->timed_out)
		buf_adds(&b, "  timed out");
	else if (o->has_exit)
		buf_addf(&b, "  exit %d", o->exit_code);
	if (!o->running && o->duration_ms > 0) {
		if (o->duration_ms < 1000)
			buf_addf(&b, "  %.0f ms", o->duration_ms);
		else
			buf_addf(&b, "  %.1f s", o->duration_ms / 1000);
	}
	if (o->verdict != NULL)
		buf_addf(&b, "  %s", o->verdict);
	pane_set_title(p, "%s", buf_str(&b));
	buf_release(&b);
}

static void
view_output_init(struct pane *p)
{
	struct output	*o = xcalloc(1, sizeof *o);

	o->lines = xcalloc(OUT_MAX_LINES, sizeof *o->lines);
	buf_init(&o->cur);
	buf_init(&o->esc);
	o->follow = 1;
	o->w = 80;
	o->h = 10;
	p->data = o;
	out_title(p);
}

static void
view_output_free(struct pane *p)
{
	struct output	*o = p->data;
	int		 i;

	if (o == NULL)
		return;
	out_clear(o);
	free(o->lines);
	buf_release(&o->cur);
	buf_release(&o->esc);
	for (i = 0; i < o->ncalls; i++) {
		free(o->calls[i].id);
		free(o->calls[i].command);
	}
	free(o->current);
	free(o->command);
	free(o);
	p->data = NULL;
}

static void
view_output_resize(struct pane *p, int w, int h)
{
	struct output	*o = p->data;

	o->w = w;
	o->h = h;
	o->top_row = 0;
}

/* Row starts of a line wrapped at the pane's width. */
static size_t
out_rows(struct output *o, const char *s, size_t len, size_t **offs,
    size_t *alloc)
{
	size_t	 n = 0, off = 0;

	do {
		if (n == *alloc) {
			*alloc = *alloc ? *alloc * 2 : 64;
			*offs = xreallocarray(*offs, *alloc, sizeof **offs);
		}
		(*offs)[n++] = off;
		if (len == 0)
			break;
		off += text_wrap_next(s, len, off, o->w);
	} while (off < len);
	return n;
}

static void
out_draw_row(struct output *o, WINDOW *win, int y, const char *s, size_t len,
    size_t *offs, size_t n, size_t k)
{
	size_t	 end = (k + 1 < n) ? offs[k + 1] : len;

	text_draw_sgr(win, y, 0, s + offs[k], end - offs[k], o->w, ROLE_NORMAL,
	    s, offs[k]);
}

static void
view_output_draw(struct pane *p, WINDOW *win)
{
	struct output	*o = p->data;
	const char	*s;
	size_t		 len, n, k, *offs = NULL, alloc = 0;
	uint64_t	 seq, last;
	int		 y;

	last = out_last_seq(o);
	if (o->count == 0 && o->cur.len == 0) {
		text_draw_role(win, 0, 0, o->command == NULL ?
		    "(no command has run)" : "(no output)", o->command == NULL ?
		    20 : 11, o->w, ROLE_DIM);
		return;
	}
	if (o->top_seq < o->first_seq) {
		o->top_seq = o->first_seq;
		o->top_row = 0;
	}
	if (o->follow) {
		y = o->h;
		for (seq = last + 1; seq > o->first_seq && y > 0; seq--) {
			if ((s = out_line(o, seq - 1, &len)) == NULL)
				break;
			n = out_rows(o, s, len, &offs, &alloc);
			for (k = n; k > 0 && y > 0; k--) {
				out_draw_row(o, win, --y, s, len, offs, n, k - 1);
				o->top_seq = seq - 1;
				o->top_row = k - 1;
			}
		}
		if (y > 0) {
			werase(win);
			o->top_seq = o->first_seq;
			o->top_row = 0;
			o->follow = 0;
			view_output_draw(p, win);
			o->follow = 1;
		}
		free(offs);
		return;
	}
	y = 0;
	for (seq = o->top_seq; seq <= last && y < o->h; seq++) {
		if ((s = out_line(o, seq, &len)) == NULL)
			break;
		n = out_rows(o, s, len, &offs, &alloc);
		for (k = (seq == o->top_seq ? o->top_row : 0); k < n &&
		    y < o->h; k++)
			out_draw_row(o, win, y++, s, len, offs, n, k);
	}
	free(offs);
}

static size_t
out_nrows(struct output *o, uint64_t seq)
{
	const char	*s;
	size_t		 len, *offs = NULL, alloc = 0, n;

	if ((s = out_line(o, seq, &len)) == NULL)
		return 1;
	n = out_rows(o, s, len, &offs, &alloc);
	free(offs);
	return n;
}

static void
out_scroll(struct output *o, long delta)
{
	uint64_t	 last = out_last_seq(o), seq;
	size_t		 below, k;

	if (o->count == 0 && o->cur.len == 0)
		return;
	if (delta < 0) {
		o->follow = 0;
		while (delta < 0) {
			if (o->top_row > 0)
				o->top_row--;
			else if (o->top_seq > o->first_seq) {
				o->top_seq--;
				k = out_nrows(o, o->top_seq);
				o->top_row = k > 0 ? k - 1 : 0;
			} else
				break;
			delta++;
		}
		return;
	}
	while (delta-- > 0 && !o->follow) {
		if (o->top_row + 1 < out_nrows(o, o->top_seq))
			o->top_row++;
		else if (o->top_seq < last) {
			o->top_seq++;
			o->top_row = 0;
		}
		below = 0;
		for (seq = o->top_seq; seq <= last && below <= (size_t)o->h;
		    seq++) {
			k = out_nrows(o, seq);
			below += (seq == o->top_seq) ? k - o->top_row : k;
		}
		if (below <= (size_t)o->h)
			o->follow = 1;
	}
}

static int
view_output_key(struct pane *p, int key, enum ui_action a)
{
	struct output	*o = p->data;

	switch (a) {
	case ACT_UP:
		out_scroll(o, -1);
		break;
	case ACT_DOWN:
		out_scroll(o, 1);
		break;
	case ACT_PAGE_UP:
		out_scroll(o, -(o->h > 2 ? o->h - 2 : 1));
		break;
	case ACT_PAGE_DOWN:
		out_scroll(o, o->h > 2 ? o->h - 2 : 1);
		break;
	case ACT_HOME:
		o->follow = 0;
		o->top_seq = o->first_seq;
		o->top_row = 0;
		break;
	case ACT_END:
		o->follow = 1;
		break;
	default:
		return 0;
	}
	pane_dirty(p);
	return 1;
}

static struct out_call *
out_find_call(struct output *o, const char *id)
{
	int	 i;

	if (id == NULL)
		return NULL;
	for (i = 0; i < o->ncalls; i++) {
		if (strcmp(o->calls[i].id, id) == 0)
			return &o->calls[i];
	}
	return NULL;
}

static void
out_remember(struct pane *p, const cJSON *ev)
{
	struct output	*o = p->data;
	const char	*name = json_str(ev, "name"), *id, *cmd = NULL;
	const cJSON	*args = cJSON_GetObjectItem(ev, "arguments");
	cJSON		*parsed = NULL;
	struct out_call	*c;

	if (name == NULL || (id = json_str(ev, "call_id")) == NULL)
		return;
	if (strcmp(name, "run_command") != 0 && strcmp(name, "run_tests") != 0
	    && strcmp(name, "start_service") != 0)
		return;
	if (cJSON_IsString(args))
		args = parsed = cJSON_Parse(args->valuestring);
	if (o->ncalls == OUT_CALLS) {
		free(o->calls[0].id);
		free(o->calls[0].command);
		memmove(o->calls, o->calls + 1, (OUT_CALLS - 1) *
		    sizeof *o->calls);
		o->ncalls--;
	}
	c = &o->calls[o->ncalls++];
	c->id = xstrdup(id);
	c->tests = strcmp(name, "run_tests") == 0;
	if (strcmp(name, "run_command") == 0)
		cmd = json_str(args, "command");
	else if (c->tests)
		cmd = json_str(tui_state(p->tui), "test_command");
	else
		cmd = json_str(args, "command");
	c->command = xstrdup(cmd != NULL && *cmd != '\0' ? cmd : name);
	cJSON_Delete(parsed);
}

static void
out_start(struct pane *p, struct out_call *c)
{
	struct output	*o = p->data;
	char		*nl;

	out_clear(o);
	free(o->current);
	o->current = xstrdup(c->id);
	free(o->command);
	o->command = xstrdup(c->command);
	if ((nl = strchr(o->command, '\n')) != NULL)
		*nl = '\0';
	o->tests = c->tests;
	o->running = 1;
	o->has_exit = o->timed_out = o->interrupted = 0;
	o->duration_ms = 0;
	o->verdict = NULL;
	out_title(p);
}

/* A dim line that says output is not shown, on a line of its own. */
static void
out_mark(struct output *o, size_t bytes, double lines, const char *why)
{
	char	*m;

	if (o->cur.len > 0)
		out_feed(o, "\n", 1);
	if (lines >= 0)
		m = xprintf("\033[2m··· %zu bytes (%.0f lines) %s ···\033[0m\n",
		    bytes, lines, why);
	else
		m = xprintf("\033[2m··· %zu bytes %s ···\033[0m\n", bytes, why);
	out_feed(o, m, strlen(m));
	free(m);
}

/*
 * One tool.output. Its offset says where its bytes are in the command's
 * output: bytes seen already (live, then again as the logged tail) are
 * skipped, and a gap (the log's cut, or live events a slow screen was not
 * sent) is marked with its size, never closed up silently.
 */
static void
out_take(struct output *o, const cJSON *ev)
{
	const char	*data = json_str(ev, "data");
	const cJSON	*offv = cJSON_GetObjectItem(ev, "offset");
	size_t		 off, len, skip = 0, gap;
	double		 lines;

	if (!cJSON_IsNumber(offv) || offv->valuedouble < 0) {
		if (data != NULL)	/* a log from before offsets */
			out_feed(o, data, strlen(data));
		return;
	}
	off = (size_t)offv->valuedouble;
	if (json_str(ev, "stream") != NULL &&
	    strcmp(json_str(ev, "stream"), "cut") == 0) {
		gap = (size_t)json_num(ev, "omitted_bytes", 0);
		if (off + gap <= o->seen)
			return;
		/* Lines are counted for the whole gap only. */
		lines = o->seen > off ? -1 : json_num(ev, "omitted_lines", 0);
		out_mark(o, off + gap - (o->seen > off ? o->seen : off), lines,
		    "left out of the log");
		o->seen = off + gap;
		return;
	}
	if (data == NULL)
		return;
	len = strlen(data);
	if (off + len <= o->seen)
		return;
	if (off > o->seen)
		out_mark(o, off - o->seen, -1, "not shown (the screen fell "
		    "behind)");
	else
		skip = o->seen - off;
	out_feed(o, data + skip, len - skip);
	o->seen = off + len;
}

static void
view_output_event(struct pane *p, const cJSON *ev, int live)
{
	struct output	*o = p->data;
	const char	*type = json_str(ev, "type"), *id, *data, *res;
	struct out_call	*c;
	const cJSON	*r;

	if (type == NULL)
		return;
	id = json_str(ev, "call_id");
	if (strcmp(type, "tool.call") == 0)
		out_remember(p, ev);
	else if (strcmp(type, "tool.started") == 0) {
		if ((c = out_find_call(o, id)) == NULL)
			return;
		if ((data = json_str(ev, "command")) != NULL) {
			/* The user edited it: the title says what runs. */
			free(c->command);
			c->command = xstrdup(data);
		}
		out_start(p, c);
	} else if (strcmp(type, "tool.output") == 0) {
		if (id == NULL)
			return;
		if (o->current == NULL || strcmp(o->current, id) != 0) {
			if ((c = out_find_call(o, id)) == NULL)
				return;
			out_start(p, c);
		}
		out_take(o, ev);
		pane_dirty(p);
	} else if (strcmp(type, "tool.finished") == 0) {
		if (o->current == NULL || id == NULL ||
		    strcmp(o->current, id) != 0)
			return;
		o->running = 0;
		r = cJSON_GetObjectItem(ev, "exit_code");
		if (cJSON_IsNumber(r)) {
			o->has_exit = 1;
			o->exit_code = r->valueint;
		}
		o->timed_out = json_bool(ev, "timed_out", 0);
		o->interrupted = json_bool(ev, "interrupted", 0);
		o->duration_ms = json_num(ev, "duration_ms", 0);
		if (o->tests) {
			res = json_str(ev, "result");
			if (res != NULL && strstr(res, "TESTS PASSED") != NULL)
				o->verdict = "TESTS PASSED";
			else if (res != NULL &&
			    strstr(res, "TESTS FAILED") != NULL)
				o->verdict = "TESTS FAILED";
			else if (o->has_exit)
				o->verdict = o->exit_code == 0 ?
				    "TESTS PASSED" : "TESTS FAILED";
		}
		out_title(p);
	}
	(void)live;
}

size_t
view_output_lines(struct pane *p)
{
	struct output	*o = p->data;

	return o->count;
}

const struct view view_output = {
	"output", SCOPE_PANE, view_output_init, view_output_free,
	view_output_draw, view_output_key, view_output_resize,
	view_output_event, NULL
};
