/*
 * view-agent.c: the agent transcript. Assistant text streams in as it
 * arrives (word-wrapped, markdown code blocks set off), each tool call is one
 * line with its status (spinner, ✓, ✗, denied, interrupted), exit code and
 * duration; Enter on a selected call shows its arguments and result.
 *
 * The transcript is a list of items; rows are made from an item only when it
 * is drawn, at the current width, so a resize costs nothing until the next
 * draw and a draw costs the rows on screen, not the length of the session.
 * The view either follows the end or is anchored at (item, row) at the top.
 */
#include <stdlib.h>
#include <string.h>

#include "ui.h"

#define AGENT_MAX_ITEMS	5000	/* then the oldest 1000 go */
#define AGENT_MAX_SHOW	400	/* lines of an expanded argument or result */

enum item_kind { IT_USER, IT_TEXT, IT_TOOL, IT_INFO, IT_ERROR };
enum tool_status {
	TS_QUEUED, TS_PENDING, TS_RUNNING, TS_OK, TS_FAIL, TS_DENIED,
	TS_INTERRUPTED
};

struct item {
	enum item_kind	 kind;
	struct buf	 text;		/* text; for a tool: its summary */
	int		 streaming;
	char		*call_id;
	char		*name;
	char		*args;
	char		*result;
	enum tool_status status;
	int		 exit_code;
	int		 has_exit;
	int		 timed_out;
	double		 duration_ms;
	int		 expanded;
	char		*denied;	/* the rule, or who denied it */
	char		*diff;		/* an edit or write, as a diff */
};

struct row {
	const char	*s;
	size_t		 len;
	enum ui_role	 role;
	int		 indent;
	int		 tool;		/* the tool line of an item */
	const char	*lead;		/* drawn in the indent */
	int		 code;		/* a line of a fenced block */
	int		 lang;		/* its language (syntax_lang), or -1 */
	int		 md;		/* text with inline Markdown */
};

struct rows {
	struct row	*v;
	size_t		 n, alloc;
};

struct agent {
	struct item	**items;
	size_t		 n, alloc;
	int		 follow;
	size_t		 top_item;
	size_t		 top_row;
	int		 w, h;
	long		 sel;		/* selected item, -1 none */
	long		*hit;		/* by row drawn: its tool item or -1 */
	int		 nhit;
	char		*search;
	size_t		 first_vis, last_vis;

	uint64_t	 step_start;	/* the model's turn began (ms) */
	uint64_t	 tool_start;	/* the running command began */
	size_t		 streamed;	/* bytes of text this turn */
};

static void
rows_add(struct rows *r, const char *s, size_t len, enum ui_role role,
    int indent, const char *lead)
{
	if (r->n == r->alloc) {
		r->alloc = r->alloc ? r->alloc * 2 : 16;
		r->v = xreallocarray(r->v, r->alloc, sizeof *r->v);
	}
	r->v[r->n].s = s;
	r->v[r->n].len = len;
	r->v[r->n].role = role;
	r->v[r->n].indent = indent;
	r->v[r->n].tool = 0;
	r->v[r->n].lead = lead;
	r->v[r->n].code = 0;
	r->v[r->n].lang = -1;
	r->v[r->n].md = 0;
	r->n++;
}

/*
 * A Markdown line's block form: a heading ("## x": its text, *role
 * HEADING) or a list item ("- x", "* x", "1. x": *lead "•" or kept, and
 * the indent of its text). Returns the bytes of marks to skip.
 */
static size_t
rows_md_block(const char *line, size_t len, enum ui_role *role, int *hang)
{
	size_t	 i = 0, d;

	*hang = 0;
	while (i < len && i < 6 && line[i] == '#')
		i++;
	if (i > 0 && i < len && line[i] == ' ') {
		*role = ROLE_HEADING;
		return i + 1;
	}
	for (i = 0; i < len && line[i] == ' '; i++)
		;
	if (i + 1 < len && strchr("-*+", line[i]) != NULL &&
	    line[i + 1] == ' ') {
		*hang = (int)i + 2;
		return 0;
	}
	for (d = i; d < len && line[d] >= '0' && line[d] <= '9'; d++)
		;
	if (d > i && d + 1 < len && (line[d] == '.' || line[d] == ')') &&
	    line[d + 1] == ' ')
		*hang = (int)(d + 2);
	return 0;
}

/* Wrap the lines of S into rows of WIDTH - INDENT cells. */
static void
rows_text(struct rows *r, const char *s, int width, enum ui_role role,
    int indent, int markdown, size_t maxlines)
{
	const char	*line, *nl;
	size_t		 len, off, n, lines = 0, skip;
	int		 code = 0, cols = width - indent, lang = -1, hang;
	enum ui_role	 lrole;

	if (cols < 4)
		cols = 4;
	for (line = s; line != NULL && *line != '\0';
	    line = nl != NULL ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		len = nl != NULL ? (size_t)(nl - line) : strlen(line);
		if (maxlines != 0 && ++lines > maxlines) {
			rows_add(r, "…", strlen("…"), ROLE_DIM, indent, NULL);
			break;
		}
		if (markdown && len >= 3 && strncmp(line, "```", 3) == 0) {
			code = !code;
			/* "```python": the block's language, for colours. */
			lang = code ? syntax_lang(line + 3, strcspn(line + 3,
			    " \t{\n")) : -1;
			rows_add(r, line, len, ROLE_DIM, indent, NULL);
			continue;
		}
		if (len == 0) {
			rows_add(r, "", 0, role, indent, NULL);
			continue;
		}
		if (code) {
			for (off = 0; off < len; off += n) {
				n = text_fit(line + off, len - off, cols - 2,
				    NULL);
				if (n == 0) {
					/* A wide character: whole, never cut. */
					n = 1;
					while (off + n < len &&
					    (line[off + n] & 0xc0) == 0x80)
						n++;
				}
				rows_add(r, line + off, n, ROLE_CODE,
				    indent + 2, "│");
				r->v[r->n - 1].code = 1;
				r->v[r->n - 1].lang = lang;
			}
			continue;
		}
		lrole = role;
		hang = 0;
		if (markdown && (skip = rows_md_block(line, len, &lrole,
		    &hang)) > 0) {
			line += skip;
			len -= skip;
		}
		/* A list item's wrapped rows hang under its text. */
		for (off = 0; off < len; off += n) {
			n = text_wrap_next(line, len, off, off == 0 ? cols :
			    cols - hang);
			rows_add(r, line + off, n, lrole, indent + (off == 0 ?
			    0 : hang), NULL);
			/* 2: a list item's first row, its mark drawn "•". */
			r->v[r->n - 1].md = markdown ? (off == 0 && hang > 0 &&
			    strchr("-*+", line[hang - 2]) != NULL ? 2 : 1) : 0;
		}
	}
}

/* A diff, a row a line, coloured by its first byte; rows are cut. */
static void
rows_diff(struct rows *r, const char *diff)
{
	const char	*line, *nl;
	size_t		 len;
	enum ui_role	 role;

	for (line = diff; *line != '\0'; line = nl != NULL ? nl + 1 : "") {
		nl = strchr(line, '\n');
		len = nl != NULL ? (size_t)(nl - line) : strlen(line);
		role = ROLE_ASSISTANT;
		if (*line == '+')
			role = ROLE_DIFF_ADD;
		else if (*line == '-')
			role = ROLE_DIFF_DEL;
		else if (*line == '@')
			role = ROLE_DIFF_HUNK;
		rows_add(r, line, len, role, 4, NULL);
	}
}

static void
agent_item_rows(struct item *it, int width, struct rows *r)
{
	r->n = 0;
	switch (it->kind) {
	case IT_USER:
		rows_text(r, buf_str(&it->text), width, ROLE_USER, 2, 0, 0);
		if (r->n > 0)
			r->v[0].lead = ">";
		break;
	case IT_TEXT:
		rows_text(r, buf_str(&it->text), width, ROLE_ASSISTANT, 0, 1,
		    0);
		break;
	case IT_INFO:
		rows_text(r, buf_str(&it->text), width, ROLE_DIM, 0, 0, 0);
		break;
	case IT_ERROR:
		rows_text(r, buf_str(&it->text), width, ROLE_ERROR, 0, 0, 0);
		break;
	case IT_TOOL:
		rows_add(r, buf_str(&it->text), it->text.len, ROLE_TOOL, 0,
		    NULL);
		r->v[r->n - 1].tool = 1;
		if (!it->expanded)
			break;
		if (it->diff != NULL)
			rows_diff(r, it->diff);
		else {
			rows_add(r, "arguments:", 10, ROLE_DIM, 4, NULL);
			rows_text(r, it->args != NULL ? it->args : "", width,
			    ROLE_ASSISTANT, 6, 0, AGENT_MAX_SHOW);
		}
		if (it->result != NULL) {
			rows_add(r, "result:", 7, ROLE_DIM, 4, NULL);
			rows_text(r, it->result, width, ROLE_ASSISTANT, 6, 0,
			    AGENT_MAX_SHOW);
		}
		break;
	}
	if (r->n == 0)
		rows_add(r, "", 0, ROLE_ASSISTANT, 0, NULL);
}

static size_t
agent_item_nrows(struct agent *a, struct item *it)
{
	struct rows	 r = { NULL, 0, 0 };
	size_t		 n;

	agent_item_rows(it, a->w, &r);
	n = r.n;
	free(r.v);
	return n;
}

static void
item_free(struct item *it)
{
	buf_release(&it->text);
	free(it->call_id);
	free(it->name);
	free(it->args);
	free(it->result);
	free(it->denied);
	free(it->diff);
	free(it);
}

static struct item *
agent_add(struct agent *a, enum item_kind kind)
{
	struct item	*it;
	size_t		 drop = 1000, i;

	if (a->n >= AGENT_MAX_ITEMS) {
		for (i = 0; i < drop; i++)
			item_free(a->items[i]);
		memmove(a->items, a->items + drop,
		    (a->n - drop) * sizeof *a->items);
		a->n -= drop;
		a->top_item = a->top_item > drop ? a->top_item - drop : 0;
		a->sel = a->sel >= (long)drop ? a->sel - (long)drop : -1;
		a->nhit = 0;	/* stale until the next draw */
	}
	if (a->n == a->alloc) {
		a->alloc = a->alloc ? a->alloc * 2 : 64;
		a->items = xreallocarray(a->items, a->alloc, sizeof *a->items);
	}
	it = xcalloc(1, sizeof *it);
	it->kind = kind;
	buf_init(&it->text);
	a->items[a->n++] = it;
	return it;
}

static struct item *
agent_find_call(struct agent *a, const char *call_id)
{
	size_t	 i;

	if (call_id == NULL)
		return NULL;
	for (i = a->n; i > 0; i--) {
		if (a->items[i - 1]->kind == IT_TOOL &&
		    a->items[i - 1]->call_id != NULL &&
		    strcmp(a->items[i - 1]->call_id, call_id) == 0)
			return a->items[i - 1];
	}
	return NULL;
}

/* A tool call in one line: its most telling argument. */
/* The lines of S, at most MAX (0: all), prefixed with LEAD, into B. */
static int
agent_diff_lines(struct buf *b, const char *s, size_t len, char lead,
    int max)
{
	const char	*end = s + len, *nl;
	int		 n = 0;

	while (s < end) {
		nl = memchr(s, '\n', (size_t)(end - s));
		if (max == 0 || n < max)
			buf_addf(b, "%c%.*s\n", lead, (int)((nl != NULL ? nl :
			    end) - s), s);
		n++;
		s = nl != NULL ? nl + 1 : end;
	}
	return n;
}

/*
 * edit_file and write_file are shown as what they change: a stat on the
 * tool's line ("+3 -2") and, expanded, a diff. An edit's diff is its old
 * and new text less the lines they share at either end (one kept as
 * context); a write is all added lines (what it replaces is not known
 * here).
 */
static void
agent_edit_diff(struct item *it, const cJSON *args)
{
	const char	*o = json_str(args, "old_string");
	const char	*n = json_str(args, "new_string");
	const char	*c = json_str(args, "content");
	const char	*path = json_str(args, "path");
	const char	*oe, *ne, *p;
	struct buf	 b = BUF_INIT;
	int		 add, del;
	size_t		 pre = 0, i;

	if (path == NULL || it->name == NULL)
		return;
	if (strcmp(it->name, "edit_file") == 0 && o != NULL && n != NULL) {
		/* Shared leading lines: cut at the last newline both have. */
		for (i = 0; o[i] != '\0' && o[i] == n[i]; i++) {
			if (o[i] == '\n')
				pre = i + 1;
		}
		oe = o + strlen(o);
		ne = n + strlen(n);
		while (oe > o + pre && ne > n + pre && oe[-1] == ne[-1])
			oe--, ne--;
		/* Back to a line start, so whole lines are shown. */
		while (oe < o + strlen(o) && oe > o + pre && oe[-1] != '\n')
			oe++, ne++;
		buf_addf(&b, "@@ %s @@\n", path);
		if (pre > 0) {
			for (p = o + pre - 1; p > o && p[-1] != '\n'; p--)
				;
			agent_diff_lines(&b, p, (size_t)(o + pre - 1 - p), ' ', 1);
		}
		del = agent_diff_lines(&b, o + pre, (size_t)(oe - (o + pre)),
		    '-', AGENT_MAX_SHOW);
		add = agent_diff_lines(&b, n + pre, (size_t)(ne - (n + pre)),
		    '+', AGENT_MAX_SHOW);
		if (*oe != '\0')
			agent_diff_lines(&b, oe, strcspn(oe, "\n"), ' ', 1);
	} else if (strcmp(it->name, "write_file") == 0 && c != NULL) {
		buf_addf(&b, "@@ %s (written whole) @@\n", path);
		del = 0;
		add = agent_diff_lines(&b, c, strlen(c), '+', AGENT_MAX_SHOW);
		if (add > AGENT_MAX_SHOW)
			buf_addf(&b, " … %d more lines\n", add - AGENT_MAX_SHOW);
	} else
		return;
	buf_addf(&it->text, "  +%d -%d", add, del);
	free(it->diff);
	it->diff = buf_detach(&b, &i);
}

/* One line: newlines and tabs of a command become spaces. */
static void
agent_one_line(struct buf *b)
{
	size_t	 i;

	for (i = 0; i < b->len; i++) {
		if (b->data[i] == '\n' || b->data[i] == '\t')
			b->data[i] = ' ';
	}
}

static void
agent_tool_summary(struct item *it, const cJSON *args)
{
	static const char *keys[] = { "command", "path", "pattern", "name",
	    "filter" };
	const char	*v;
	size_t		 i;

	buf_reset(&it->text);
	buf_adds(&it->text, it->name != NULL ? it->name : "?");
	if (it->name != NULL && strncmp(it->name, "mcp__", 5) == 0 &&
	    cJSON_IsObject(args)) {
		/* An MCP tool: its arguments, as JSON, on the one line. */
		char *j = json_print(args);
		size_t n = strlen(j);
		if (n > 200) {
			for (n = 200; n > 0 && (j[n] & 0xc0) == 0x80; n--)
				;	/* not inside a character */
		}
		buf_addc(&it->text, ' ');
		buf_add(&it->text, j, n);
		free(j);
		agent_one_line(&it->text);
		return;
	}
	for (i = 0; i < nitems(keys); i++) {
		if ((v = json_str(args, keys[i])) != NULL) {
			buf_addc(&it->text, ' ');
			buf_adds(&it->text, v);
			break;
		}
	}
	agent_one_line(&it->text);
}

static void
view_agent_init(struct pane *p)
{
	struct agent	*a = xcalloc(1, sizeof *a);

	a->follow = 1;
	a->sel = -1;
	a->w = 80;
	a->h = 10;
	a->step_start = a->tool_start = mono_ms();
	p->data = a;
	pane_set_title(p, "agent");
}

static void
view_agent_free(struct pane *p)
{
	struct agent	*a = p->data;
	size_t		 i;

	if (a == NULL)
		return;
	for (i = 0; i < a->n; i++)
		item_free(a->items[i]);
	free(a->items);
	free(a->hit);
	free(a->search);
	free(a);
	p->data = NULL;
}

static void
view_agent_resize(struct pane *p, int w, int h)
{
	struct agent	*a = p->data;

	a->w = w;
	a->h = h;
	a->top_row = 0;
}

static const char *
agent_glyph(struct item *it, enum ui_role *role)
{
	static const char *spin[] = {
		"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"
	};

	switch (it->status) {
	case TS_QUEUED:
		*role = ROLE_DIM;
		return "·";
	case TS_PENDING:
		*role = ROLE_PENDING;
		return "?";
	case TS_RUNNING:
		*role = ROLE_PENDING;
		return spin[(mono_ms() / 100) % nitems(spin)];
	case TS_OK:
		*role = ROLE_OK;
		return "✓";
	case TS_FAIL:
		*role = ROLE_FAIL;
		return "✗";
	case TS_DENIED:
		*role = ROLE_DENIED;
		return "⊘";
	case TS_INTERRUPTED:
		*role = ROLE_DENIED;
		return "!";
	}
	*role = ROLE_DIM;
	return " ";
}

static void
agent_fmt_duration(struct buf *b, double ms)
{
	if (ms < 1000)
		buf_addf(b, "%.0f ms", ms);
	else if (ms < 60000)
		buf_addf(b, "%.1f s", ms / 1000);
	else
		buf_addf(b, "%.0fm%02.0fs", ms / 60000,
		    (double)((long)(ms / 1000) % 60));
}

static void
agent_draw_tool(struct agent *a, WINDOW *win, int y, struct item *it,
    int selected)
{
	struct buf	 right = BUF_INIT;
	enum ui_role	 role, rrole = ROLE_DIM;
	const char	*g;
	int		 rw, x;

	g = agent_glyph(it, &role);
	text_draw_role(win, y, 0, g, strlen(g), 2, role);
	switch (it->status) {
	case TS_PENDING:
		buf_adds(&right, "needs you");
		rrole = ROLE_PENDING;
		break;
	case TS_DENIED:
		buf_adds(&right, "denied");
		if (it->denied != NULL) {
			/* The rule, within a third of the row. */
			buf_adds(&right, ": ");
			buf_add(&right, it->denied, text_fit(it->denied,
			    strlen(it->denied), a->w / 3, NULL));
		}
		rrole = ROLE_DENIED;
		break;
	case TS_INTERRUPTED:
		buf_adds(&right, "interrupted");
		rrole = ROLE_DENIED;
		break;
	case TS_RUNNING:
		buf_adds(&right, "running");
		break;
	default:
		if (it->timed_out)
			buf_adds(&right, "timed out  ");
		else if (it->has_exit && it->exit_code != 0)
			buf_addf(&right, "exit %d  ", it->exit_code);
		if (it->status == TS_OK || it->status == TS_FAIL)
			agent_fmt_duration(&right, it->duration_ms);
		if (it->status == TS_FAIL)
			rrole = ROLE_FAIL;
		break;
	}
	rw = text_width(buf_str(&right), right.len);
	x = 2;
	if (selected)
		text_clear_to(win, y, x, a->w, theme_attr(ROLE_SELECTED));
	text_draw(win, y, x, buf_str(&it->text), it->text.len,
	    a->w - x - rw - 2, selected ? theme_attr(ROLE_SELECTED) :
	    theme_attr(ROLE_TOOL));
	if (rw > 0 && a->w - rw - 1 > x)
		text_draw_role(win, y, a->w - rw - 1, buf_str(&right),
		    right.len, rw, rrole);
	buf_release(&right);
}

static void
agent_draw_row(struct agent *a, WINDOW *win, int y, struct item *it,
    struct row *r, long idx)
{
	const char	*m;
	size_t		 plen, off = 0;
	int		 x;

	if (r->tool) {
		agent_draw_tool(a, win, y, it, idx == a->sel);
		if (y >= 0 && y < a->nhit)
			a->hit[y] = idx;
		return;
	}
	if (r->lead != NULL)
		text_draw_role(win, y, r->indent - 2 < 0 ? 0 : r->indent - 2,
		    r->lead, strlen(r->lead), 1, r->role == ROLE_CODE ?
		    ROLE_DIM : r->role);
	if (r->code)
		syntax_draw(win, y, r->indent, r->s, r->len, a->w - r->indent,
		    r->lang);
	else if (r->md == 2 && (off = strspn(r->s, " ")) + 2 <= r->len) {
		/* "  - item": the mark becomes a bullet. */
		x = r->indent + text_width(r->s, off);
		text_draw_role(win, y, x, "•", strlen("•"), a->w - x,
		    ROLE_DIM);
		syntax_draw_inline(win, y, x + 2, r->s + off + 2, r->len - off -
		    2, a->w - x - 2, r->role);
	} else if (r->md)
		syntax_draw_inline(win, y, r->indent, r->s, r->len,
		    a->w - r->indent, r->role);
	else
		text_draw_role(win, y, r->indent, r->s, r->len,
		    a->w - r->indent, r->role);
	if (a->search == NULL || *a->search == '\0')
		return;
	plen = strlen(a->search);
	while (off + plen <= r->len) {
		m = strcasestr(r->s + off, a->search);
		if (m == NULL || (size_t)(m - r->s) + plen > r->len)
			break;
		x = r->indent + text_width(r->s, (size_t)(m - r->s));
		if (x >= a->w)
			break;
		text_draw_role(win, y, x, m, plen, a->w - x, ROLE_MATCH);
		off = (size_t)(m - r->s) + plen;
	}
}

/*
 * While the agent works, the pane's last row says what it does and for
 * how long: the model's turn with the tokens streamed so far (bytes / 4,
 * the usual estimate), or the running command.
 */
static int
agent_working_line(struct pane *p, struct buf *b)
{
	struct agent	*a = p->data;
	const char	*st = json_str(tui_state(p->tui), "state");
	uint64_t	 now = mono_ms();
	struct item	*it;
	size_t		 i;
	static const char *spin[] = {
		"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"
	};

	if (st == NULL || strcmp(st, "working") != 0)
		return 0;
	buf_addf(b, "%s ", spin[(now / 100) % nitems(spin)]);
	for (i = a->n; i > 0; i--) {
		it = a->items[i - 1];
		if (it->kind == IT_TOOL && it->status == TS_RUNNING) {
			buf_addf(b, "running %s · ", buf_str(&it->text));
			agent_fmt_duration(b, (double)(now - a->tool_start));
			return 1;
		}
	}
	buf_adds(b, "the model is working · ");
	agent_fmt_duration(b, (double)(now - a->step_start));
	buf_addf(b, " · %zu tokens so far", (a->streamed + 3) / 4);
	buf_adds(b, "   (Esc interrupts)");
	return 1;
}

static void	view_agent_draw_body(struct pane *, WINDOW *);

static void
view_agent_draw(struct pane *p, WINDOW *win)
{
	struct agent	*a = p->data;
	struct buf	 b = BUF_INIT;

	if (a->h > 3 && agent_working_line(p, &b)) {
		a->h--;
		view_agent_draw_body(p, win);
		a->h++;
		text_clear_to(win, a->h - 1, 0, a->w, theme_attr(ROLE_NORMAL));
		text_draw_role(win, a->h - 1, 0, b.data, b.len, a->w,
		    ROLE_PENDING);
	} else
		view_agent_draw_body(p, win);
	buf_release(&b);
}

static void
view_agent_draw_body(struct pane *p, WINDOW *win)
{
	struct agent	*a = p->data;
	struct rows	 r = { NULL, 0, 0 };
	size_t		 i, k;
	int		 y;

	if (a->nhit != a->h) {
		a->nhit = a->h > 0 ? a->h : 0;
		a->hit = xreallocarray(a->hit, (size_t)a->nhit + 1,
		    sizeof *a->hit);
	}
	for (y = 0; y < a->nhit; y++)
		a->hit[y] = -1;
	if (a->n == 0) {
		text_draw_role(win, 0, 0, "(nothing yet)", 13, a->w, ROLE_DIM);
		return;
	}
	if (a->follow) {
		/* Bottom-up from the last item: only what fits is made. */
		y = a->h;
		for (i = a->n; i > 0 && y > 0; i--) {
			agent_item_rows(a->items[i - 1], a->w, &r);
			for (k = r.n; k > 0 && y > 0; k--) {
				y--;
				agent_draw_row(a, win, y, a->items[i - 1],
				    &r.v[k - 1], (long)i - 1);
				a->top_item = i - 1;
				a->top_row = k - 1;
			}
		}
		a->first_vis = a->top_item;
		a->last_vis = a->n - 1;
		/* Fewer rows than the pane: move them to the top. */
		if (y > 0) {
			werase(win);
			a->follow = 0;
			a->top_item = 0;
			a->top_row = 0;
			view_agent_draw_body(p, win);
			a->follow = 1;
		}
		free(r.v);
		return;
	}
	y = 0;
	a->first_vis = a->top_item;
	for (i = a->top_item; i < a->n && y < a->h; i++) {
		agent_item_rows(a->items[i], a->w, &r);
		for (k = (i == a->top_item ? a->top_row : 0); k < r.n &&
		    y < a->h; k++)
			agent_draw_row(a, win, y++, a->items[i], &r.v[k],
			    (long)i);
		a->last_vis = i;
	}
	free(r.v);
}

/* Rows from the anchor to the end, stopping once past LIMIT. */
static size_t
agent_rows_below(struct agent *a, size_t limit)
{
	size_t	 i, n = 0, k;

	for (i = a->top_item; i < a->n && n <= limit; i++) {
		k = agent_item_nrows(a, a->items[i]);
		if (i == a->top_item)
			k = k > a->top_row ? k - a->top_row : 0;
		n += k;
	}
	return n;
}

static void
agent_scroll(struct agent *a, long delta)
{
	size_t	 n;

	if (a->n == 0)
		return;
	if (delta < 0) {
		a->follow = 0;
		while (delta < 0) {
			if (a->top_row > 0) {
				a->top_row--;
				delta++;
				continue;
			}
			if (a->top_item == 0)
				break;
			a->top_item--;
			n = agent_item_nrows(a, a->items[a->top_item]);
			a->top_row = n > 0 ? n - 1 : 0;
			delta++;
		}
		return;
	}
	while (delta > 0 && !a->follow) {
		n = agent_item_nrows(a, a->items[a->top_item]);
		if (a->top_row + 1 < n)
			a->top_row++;
		else if (a->top_item + 1 < a->n) {
			a->top_item++;
			a->top_row = 0;
		}
		delta--;
		if (agent_rows_below(a, (size_t)a->h) <= (size_t)a->h)
			a->follow = 1;
	}
}

static void
agent_show(struct agent *a, size_t i)
{
	if (i >= a->first_vis && i <= a->last_vis && !a->follow)
		return;
	if (a->follow && i >= a->first_vis)
		return;
	a->follow = 0;
	a->top_item = i;
	a->top_row = 0;
}

static void
agent_select(struct agent *a, int dir)
{
	long	 i = a->sel;

	if (i < 0)
		i = dir < 0 ? (long)a->last_vis + 1 : (long)a->first_vis - 1;
	for (i += dir; i >= 0 && i < (long)a->n; i += dir) {
		if (a->items[i]->kind == IT_TOOL) {
			a->sel = i;
			agent_show(a, (size_t)i);
			return;
		}
	}
}

static int
agent_matches(struct item *it, const char *pat)
{
	return strcasestr(buf_str(&it->text), pat) != NULL ||
	    (it->args != NULL && strcasestr(it->args, pat) != NULL) ||
	    (it->result != NULL && strcasestr(it->result, pat) != NULL);
}

static void
agent_search_next(struct pane *p)
{
	struct agent	*a = p->data;
	size_t		 i;

	if (a->search == NULL || a->n == 0)
		return;
	i = a->follow ? a->n : a->top_item;
	while (i > 0) {
		i--;
		if (agent_matches(a->items[i], a->search)) {
			a->follow = 0;
			a->top_item = i;
			a->top_row = 0;
			if (a->items[i]->kind == IT_TOOL) {
				a->sel = (long)i;
				/* A match in the arguments or result: show them. */
				if (strcasestr(buf_str(&a->items[i]->text),
				    a->search) == NULL)
					a->items[i]->expanded = 1;
			}
			return;
		}
	}
	tui_flash(p->tui, "'%s': no more matches", a->search);
}

static void
agent_search_cb(struct tui *t, void *arg, const char *text)
{
	struct pane	*p = arg;
	struct agent	*a = p->data;

	if (text == NULL)
		return;
	free(a->search);
	a->search = *text != '\0' ? xstrdup(text) : NULL;
	a->follow = 1;
	agent_search_next(p);
	pane_dirty(p);
}

static int
view_agent_key(struct pane *p, int key, enum ui_action act)
{
	struct agent	*a = p->data;
	struct item	*it;

	switch (act) {
	case ACT_UP:
		if (key == 0)
			agent_scroll(a, -1);	/* the wheel */
		else
			agent_select(a, -1);
		break;
	case ACT_DOWN:
		if (key == 0)
			agent_scroll(a, 1);
		else
			agent_select(a, 1);
		break;
	case ACT_PAGE_UP:
		agent_scroll(a, -(a->h > 2 ? a->h - 2 : 1));
		break;
	case ACT_PAGE_DOWN:
		agent_scroll(a, a->h > 2 ? a->h - 2 : 1);
		break;
	case ACT_HOME:
		a->follow = 0;
		a->top_item = 0;
		a->top_row = 0;
		break;
	case ACT_END:
		a->follow = 1;
		a->sel = -1;
		break;
	case ACT_ENTER:
		if (a->sel < 0)
			agent_select(a, -1);
		if (a->sel < 0)
			break;
		it = a->items[a->sel];
		it->expanded = !it->expanded;
		if (!a->follow)
			agent_show(a, (size_t)a->sel);
		break;
	case ACT_SEARCH:
		tui_prompt(p->tui, "search:", a->search, agent_search_cb, p);
		return 1;
	case ACT_SEARCH_NEXT:
		agent_search_next(p);
		break;
	default:
		return 0;
	}
	pane_dirty(p);
	return 1;
}

/* The user edited the command: show what runs, marked as edited. */
static void
agent_tool_edited(struct item *it, const char *command)
{
	if (command == NULL)
		return;
	buf_reset(&it->text);
	buf_addf(&it->text, "%s %s", it->name != NULL ? it->name : "?",
	    command);
	agent_one_line(&it->text);
	buf_adds(&it->text, "  (edited)");
}

static char *
agent_json_text(const cJSON *v)
{
	if (v == NULL)
		return NULL;
	if (cJSON_IsString(v))
		return xstrdup(v->valuestring);
	return cJSON_Print(v);
}

/* When the model's turn and the running command began, for the clock. */
static void
agent_track(struct agent *a, const char *type, const cJSON *ev)
{
	uint64_t	 now = mono_ms();
	const char	*s;

	if (strcmp(type, "assistant.delta") == 0) {
		if ((s = json_str(ev, "text")) != NULL)
			a->streamed += strlen(s);
	} else if (strcmp(type, "tool.started") == 0)
		a->tool_start = now;
	else if (strcmp(type, "user.message") == 0 ||
	    strcmp(type, "tool.finished") == 0 ||
	    strcmp(type, "approval.decided") == 0 ||
	    strcmp(type, "assistant.message") == 0) {
		a->step_start = now;
		a->streamed = 0;
	}
}

static void
view_agent_event(struct pane *p, const cJSON *ev, int live)
{
	struct agent	*a = p->data;
	const char	*type = json_str(ev, "type"), *s;
	const cJSON	*args, *d;
	struct item	*it;
	char		*txt;

	if (type == NULL)
		return;
	agent_track(a, type, ev);
	if (strcmp(type, "user.message") == 0) {
		it = agent_add(a, IT_USER);
		buf_adds(&it->text, (s = json_str(ev, "text")) ? s : "");
	} else if (strcmp(type, "assistant.delta") == 0) {
		it = a->n > 0 ? a->items[a->n - 1] : NULL;
		if (it == NULL || it->kind != IT_TEXT || !it->streaming) {
			it = agent_add(a, IT_TEXT);
			it->streaming = 1;
		}
		buf_adds(&it->text, (s = json_str(ev, "text")) ? s : "");
	} else if (strcmp(type, "assistant.message") == 0) {
		s = json_str(ev, "text");
		it = a->n > 0 ? a->items[a->n - 1] : NULL;
		if (it != NULL && it->kind == IT_TEXT && it->streaming) {
			it->streaming = 0;
			buf_reset(&it->text);
			buf_adds(&it->text, s != NULL ? s : "");
			if (it->text.len == 0) {
				item_free(it);
				a->n--;
			}
		} else if (s != NULL && *s != '\0') {
			it = agent_add(a, IT_TEXT);
			buf_adds(&it->text, s);
		}
	} else if (strcmp(type, "tool.call") == 0) {
		it = agent_add(a, IT_TOOL);
		it->call_id = xstrdup((s = json_str(ev, "call_id")) ? s : "");
		it->name = xstrdup((s = json_str(ev, "name")) ? s : "?");
		args = cJSON_GetObjectItem(ev, "arguments");
		if (cJSON_IsString(args)) {
			cJSON *parsed = cJSON_Parse(args->valuestring);

			agent_tool_summary(it, parsed);
			cJSON_Delete(parsed);
		} else
			agent_tool_summary(it, args);
		it->args = agent_json_text(args);
		if (cJSON_IsString(args)) {
			cJSON *parsed = cJSON_Parse(args->valuestring);

			agent_edit_diff(it, parsed);
			cJSON_Delete(parsed);
		} else
			agent_edit_diff(it, args);
	} else if (strcmp(type, "approval.needed") == 0) {
		if ((it = agent_find_call(a, json_str(ev, "call_id"))) != NULL)
			it->status = TS_PENDING;
	} else if (strcmp(type, "approval.decided") == 0) {
		if ((it = agent_find_call(a, json_str(ev, "call_id"))) == NULL)
			return;
		s = json_str(ev, "decision");
		if (s != NULL && strcmp(s, "deny") == 0)
			it->status = TS_DENIED;
		else if (it->status == TS_PENDING)
			it->status = TS_QUEUED;
		agent_tool_edited(it, json_str(ev, "command"));
	} else if (strcmp(type, "tool.started") == 0) {
		if ((it = agent_find_call(a, json_str(ev, "call_id"))) != NULL) {
			it->status = TS_RUNNING;
			agent_tool_edited(it, json_str(ev, "command"));
		}
	} else if (strcmp(type, "tool.finished") == 0) {
		if ((it = agent_find_call(a, json_str(ev, "call_id"))) == NULL)
			return;
		it->duration_ms = json_num(ev, "duration_ms", 0);
		it->timed_out = json_bool(ev, "timed_out", 0);
		if (cJSON_GetObjectItem(ev, "exit_code") != NULL &&
		    cJSON_IsNumber(cJSON_GetObjectItem(ev, "exit_code"))) {
			it->has_exit = 1;
			it->exit_code = (int)json_num(ev, "exit_code", 0);
		}
		free(it->result);
		it->result = agent_json_text(cJSON_GetObjectItem(ev, "result"));
		agent_tool_edited(it, json_str(ev, "command"));
		if ((d = cJSON_GetObjectItem(ev, "denied")) != NULL &&
		    cJSON_IsObject(d)) {
			/* The engine says it was refused, and why. */
			it->status = TS_DENIED;
			free(it->denied);
			if ((s = json_str(d, "rule")) != NULL)
				it->denied = xstrdup(s);
			else
				it->denied = xprintf("by %s", json_str(d, "by") ?
				    json_str(d, "by") : "the user");
		} else if (json_bool(ev, "interrupted", 0))
			it->status = TS_INTERRUPTED;
		else if (it->status == TS_DENIED)
			;
		else if (it->timed_out || (it->has_exit && it->exit_code != 0))
			it->status = TS_FAIL;
		else if (json_bool(ev, "denied", 0))
			it->status = TS_DENIED;
		else if (json_bool(ev, "error", 0) || (it->result != NULL &&
		    strncmp(it->result, "error", 5) == 0))
			it->status = TS_FAIL;
		else
			it->status = TS_OK;
	} else if (strcmp(type, "run.finished") == 0) {
		it = agent_add(a, IT_INFO);
		buf_addf(&it->text, "— run finished: %s (%.0f steps)",
		    (s = json_str(ev, "reason")) ? s : "?",
		    json_num(ev, "steps", 0));
	} else if (strcmp(type, "error") == 0) {
		it = agent_add(a, IT_ERROR);
		buf_addf(&it->text, "error: %s",
		    (s = json_str(ev, "message")) ? s : "?");
	} else if (strcmp(type, "mcp.failed") == 0) {
		it = agent_add(a, IT_ERROR);
		s = json_str(ev, "server");
		buf_addf(&it->text, "mcp server '%s' left out of the run: %s",
		    s != NULL ? s : "?", json_str(ev, "message") != NULL ?
		    json_str(ev, "message") : "?");
	} else if (strcmp(type, "pr.opened") == 0) {
		it = agent_add(a, IT_INFO);
		buf_addf(&it->text, "— pull request opened: %s",
		    (s = json_str(ev, "url")) ? s : "?");
	} else if (strcmp(type, "instructions.loaded") == 0) {
		/* Shown once: the event comes only when the text changes. */
		it = agent_add(a, IT_INFO);
		buf_adds(&it->text, "— project instructions:");
		cJSON_ArrayForEach(d, cJSON_GetObjectItem(ev, "files"))
			buf_addf(&it->text, " %s", cJSON_IsString(d) ?
			    d->valuestring : "?");
		if (cJSON_GetArraySize(cJSON_GetObjectItem(ev, "files")) == 0)
			buf_adds(&it->text, " none");
		if ((s = json_str(ev, "text")) != NULL && *s != '\0')
			buf_addf(&it->text, "\n%s", s);
	} else if (strcmp(type, "context.compacted") == 0) {
		it = agent_add(a, IT_INFO);
		buf_addf(&it->text, "— conversation compacted (%s): %.0f → %.0f "
		    "tokens%s", (s = json_str(ev, "by")) ? s : "?",
		    json_num(ev, "tokens_before", 0),
		    json_num(ev, "tokens_after", 0),
		    json_str(ev, "fallback") != NULL ? ", without a summary" :
		    "");
	} else if (strcmp(type, "conversation.cleared") == 0) {
		it = agent_add(a, IT_INFO);
		buf_addf(&it->text, "— new conversation (/clear by %s): the model "
		    "no longer sees what is above; the sandbox and its files are "
		    "kept", (s = json_str(ev, "by")) ? s : "?");
	} else if (strcmp(type, "model.changed") == 0) {
		it = agent_add(a, IT_INFO);
		buf_addf(&it->text, "— model: %s", (s = json_str(ev, "model")) ?
		    s : "?");
	} else if (strcmp(type, "session.created") == 0) {
		it = agent_add(a, IT_INFO);
		txt = json_print(ev);
		buf_addf(&it->text, "— session created");
		free(txt);
	} else
		return;
	(void)live;
	pane_dirty(p);
}

static void
view_agent_tick(struct pane *p, uint64_t now)
{
	struct agent	*a = p->data;
	size_t		 i, lim = 0;

	(void)now;
	if (json_str(tui_state(p->tui), "state") != NULL &&
	    strcmp(json_str(tui_state(p->tui), "state"), "working") == 0) {
		pane_dirty(p);	/* the clock on the last row */
		return;
	}
	for (i = a->n; i > 0 && lim++ < 200; i--) {
		if (a->items[i - 1]->kind == IT_TOOL &&
		    a->items[i - 1]->status == TS_RUNNING &&
		    i - 1 >= a->first_vis && i - 1 <= a->last_vis) {
			pane_dirty(p);
			return;
		}
	}
}

/* A click on a tool call's line selects it; on the selected one, opens it. */
static void
view_agent_click(struct pane *p, int x, int y, int again)
{
	struct agent	*a = p->data;
	long		 i;

	if (y < 0 || y >= a->nhit || (i = a->hit[y]) < 0 || i >= (long)a->n ||
	    a->items[i]->kind != IT_TOOL)
		return;
	if (again && i == a->sel)
		view_agent_key(p, 0, ACT_ENTER);
	else
		a->sel = i;
}

const struct view view_agent = {
	"agent", SCOPE_AGENT, view_agent_init, view_agent_free,
	view_agent_draw, view_agent_key, view_agent_resize, view_agent_event,
	view_agent_tick, view_agent_click
};
