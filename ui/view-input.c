/*
 * view-input.c: the input line, where the user writes to the agent. Enter
 * sends, C-j or Alt-Enter starts a new line (the line grows to five rows),
 * Up and Down walk the history of sent messages. The text is UTF-8 in one
 * buffer with a byte cursor.
 */
#include <stdlib.h>
#include <string.h>

#include "ui.h"

#define INPUT_HISTORY	100

struct input {
	struct buf	 text;
	size_t		 cursor;
	char		*history[INPUT_HISTORY];
	int		 nhistory;
	int		 hpos;		/* nhistory: not browsing */
	int		 w, h;
};

static int
view_input_rows(struct input *in)
{
	int	 n = 1;
	size_t	 i;

	for (i = 0; i < in->text.len; i++) {
		if (in->text.data[i] == '\n')
			n++;
	}
	return n;
}

static void
view_input_changed(struct pane *p)
{
	struct input	*in = p->data;
	int		 rows = view_input_rows(in);

	if (rows > 5)
		rows = 5;
	if (rows != p->want_h) {
		p->want_h = rows;
		tui_redraw_all(p->tui);
	}
	pane_dirty(p);
}

static void
view_input_init(struct pane *p)
{
	struct input	*in = xcalloc(1, sizeof *in);

	buf_init(&in->text);
	p->data = in;
	p->want_h = 1;
}

static void
view_input_free(struct pane *p)
{
	struct input	*in = p->data;
	int		 i;

	if (in == NULL)
		return;
	for (i = 0; i < in->nhistory; i++)
		free(in->history[i]);
	buf_release(&in->text);
	free(in);
	p->data = NULL;
}

static void
view_input_resize(struct pane *p, int w, int h)
{
	struct input	*in = p->data;

	in->w = w;
	in->h = h;
}

static void
view_input_draw(struct pane *p, WINDOW *win)
{
	struct input	*in = p->data;
	const char	*s = buf_str(&in->text), *line, *nl, *lead;
	int		 row = 0, cy = 0, cx = 2, x, first, rows;
	size_t		 len, skip;
	char		*hint, *pfx;

	rows = view_input_rows(in);
	first = rows > in->h ? rows - in->h : 0;
	if (in->text.len == 0) {
		/* The hint names the prefix in effect (C-g inside tmux). */
		pfx = keys_name(keys_prefix());
		hint = tui_readonly(p->tui) ? xstrdup("read-only: watching") :
		    xprintf("message the agent   (Enter send · C-j new line · "
		    "Esc interrupt · %s d detach · %s ? help)", pfx, pfx);
		text_draw_role(win, 0, 0, ">", 1, 1, ROLE_USER);
		text_draw_role(win, 0, 2, hint, strlen(hint), in->w - 2,
		    ROLE_HINT);
		free(hint);
		free(pfx);
		wmove(win, 0, 2);
		return;
	}
	for (line = s; line != NULL; line = nl != NULL ? nl + 1 : NULL, row++) {
		nl = strchr(line, '\n');
		len = nl != NULL ? (size_t)(nl - line) : strlen(line);
		if (row >= first && row - first < in->h) {
			lead = row == 0 ? ">" : "·";
			text_draw_role(win, row - first, 0, lead, strlen(lead),
			    1, ROLE_USER);
			skip = 0;
			/* The cursor's row scrolls sideways to keep it in. */
			if (in->cursor >= (size_t)(line - s) &&
			    in->cursor <= (size_t)(line - s) + len) {
				x = text_width(line, in->cursor - (line - s));
				if (x >= in->w - 3)
					skip = text_fit(line, len, x - in->w + 4,
					    NULL);
				cy = row - first;
				cx = 2 + text_width(line + skip,
				    in->cursor - (line - s) - skip);
			}
			text_draw_role(win, row - first, 2, line + skip,
			    len - skip, in->w - 2, ROLE_INPUT);
		}
	}
	wmove(win, cy, cx);
}

static void
view_input_history(struct input *in, int dir)
{
	int	 pos = in->hpos + dir;

	if (pos < 0 || pos > in->nhistory)
		return;
	in->hpos = pos;
	buf_reset(&in->text);
	if (pos < in->nhistory)
		buf_adds(&in->text, in->history[pos]);
	in->cursor = in->text.len;
}

static void
view_input_send(struct pane *p)
{
	struct input	*in = p->data;

	if (in->text.len == 0)
		return;
	tui_send_message(p->tui, buf_str(&in->text));
	if (in->nhistory == INPUT_HISTORY) {
		free(in->history[0]);
		memmove(in->history, in->history + 1,
		    (INPUT_HISTORY - 1) * sizeof *in->history);
		in->nhistory--;
	}
	in->history[in->nhistory++] = xstrdup(buf_str(&in->text));
	in->hpos = in->nhistory;
	buf_reset(&in->text);
	in->cursor = 0;
}

static int
view_input_key(struct pane *p, int key, enum ui_action a)
{
	struct input	*in = p->data;
	size_t		 i;

	switch (a) {
	case ACT_SEND:
		view_input_send(p);
		break;
	case ACT_NEWLINE:
		buf_grow(&in->text, 1);
		memmove(in->text.data + in->cursor + 1,
		    in->text.data + in->cursor, in->text.len - in->cursor + 1);
		in->text.data[in->cursor++] = '\n';
		in->text.len++;
		break;
	case ACT_HISTORY_UP:
		/* In a multi-line message, Up moves to the line above. */
		for (i = in->cursor; i > 0 && in->text.data[i - 1] != '\n'; i--)
			;
		if (i > 0) {
			in->cursor = i - 1;
			break;
		}
		view_input_history(in, -1);
		break;
	case ACT_HISTORY_DOWN:
		for (i = in->cursor; i < in->text.len &&
		    in->text.data[i] != '\n'; i++)
			;
		if (i < in->text.len) {
			in->cursor = i + 1;
			break;
		}
		view_input_history(in, 1);
		break;
	case ACT_CLEAR:
		buf_reset(&in->text);
		in->cursor = 0;
		break;
	case ACT_PAGE_UP:
	case ACT_PAGE_DOWN:
		return 0;	/* the agent pane scrolls, see tui.c */
	default:
		if (!tui_edit_key(&in->text, &in->cursor, key))
			return 0;
		break;
	}
	view_input_changed(p);
	return 1;
}

size_t
view_input_len(struct pane *p)
{
	struct input	*in = p->data;

	return in != NULL ? in->text.len : 0;
}

const struct view view_input = {
	"input", SCOPE_INPUT, view_input_init, view_input_free,
	view_input_draw, view_input_key, view_input_resize, NULL, NULL
};
