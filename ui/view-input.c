/*
 * view-input.c: the input line, where the user writes to the agent. Enter
 * sends, C-j or Alt-Enter starts a new line (the line grows to five rows),
 * Up and Down walk the history of sent messages, C-r searches it; the
 * editing keys are readline's (tui_edit_key). A line that starts with "/"
 * is a command (slash.c); Tab completes commands and @paths, and an @path
 * to a workspace file sends the file with the message (input-file.c).
 *
 * A bracketed paste is one block of text, never keys: its newlines do not
 * send. A long one shows as a tag, "[pasted 120 lines]", that C-v expands;
 * the text goes out in its place. The text is UTF-8 in one buffer with a
 * byte cursor.
 */
#include <stdlib.h>
#include <string.h>

#include "ui.h"

#define INPUT_HISTORY	100
#define INPUT_FOLD	5	/* a paste of more lines shows as a tag */
#define INPUT_CC_MS	1000	/* C-c twice this fast: interrupt */

struct paste {
	char		*tag;		/* "[pasted 120 lines]" */
	char		*text;
};

struct input {
	struct buf	 text;
	size_t		 cursor;
	char		*history[INPUT_HISTORY];
	int		 nhistory;
	int		 hpos;		/* nhistory: not browsing */
	int		 w, h;

	struct paste	*pastes;
	size_t		 npastes;

	int		 searching;	/* C-r */
	struct buf	 query;
	int		 found;		/* history index, or -1 */
	char		*before;	/* the text C-r started from */

	uint64_t	 last_cc;	/* the last C-c on an empty line */
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
view_input_drop_pastes(struct input *in)
{
	size_t	 i;

	for (i = 0; i < in->npastes; i++) {
		free(in->pastes[i].tag);
		free(in->pastes[i].text);
	}
	free(in->pastes);
	in->pastes = NULL;
	in->npastes = 0;
}

static void
view_input_set(struct input *in, const char *text)
{
	buf_reset(&in->text);
	buf_adds(&in->text, text);
	in->cursor = in->text.len;
}

/* The text with every paste tag replaced by its text; caller frees. */
static char *
view_input_expand(struct input *in)
{
	struct buf	 b = BUF_INIT;
	const char	*s = buf_str(&in->text), *hit;
	size_t		 i;
	char		*out = xstrdup(s), *next;

	for (i = 0; i < in->npastes; i++) {
		if ((hit = strstr(out, in->pastes[i].tag)) == NULL)
			continue;	/* the user deleted it */
		buf_reset(&b);
		buf_add(&b, out, (size_t)(hit - out));
		buf_adds(&b, in->pastes[i].text);
		buf_adds(&b, hit + strlen(in->pastes[i].tag));
		next = xstrdup(buf_str(&b));
		free(out);
		out = next;
	}
	buf_release(&b);
	return out;
}

void
view_input_paste(struct pane *p, const char *text, size_t len)
{
	struct input	*in = p->data;
	struct paste	*pa;
	size_t		 i, lines = 1;
	char		*tag;

	for (i = 0; i < len; i++)
		lines += text[i] == '\n' && i + 1 < len;
	if (lines <= INPUT_FOLD) {
		tui_edit_insert(&in->text, &in->cursor, text, len);
		view_input_changed(p);
		return;
	}
	if (in->npastes > 0)
		tag = xprintf("[pasted %zu lines #%zu]", lines, in->npastes + 1);
	else
		tag = xprintf("[pasted %zu lines]", lines);
	in->pastes = xreallocarray(in->pastes, in->npastes + 1,
	    sizeof *in->pastes);
	pa = &in->pastes[in->npastes++];
	pa->tag = tag;
	pa->text = xstrndup(text, len);
	tui_edit_insert(&in->text, &in->cursor, tag, strlen(tag));
	view_input_changed(p);
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
	view_input_drop_pastes(in);
	buf_release(&in->text);
	buf_release(&in->query);
	free(in->before);
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

	if (in->searching) {
		hint = xprintf("(history search) '%s': %s", buf_str(&in->query),
		    in->found >= 0 ? in->history[in->found] : "no match");
		for (x = 0; hint[x] != '\0'; x++) {
			if (hint[x] == '\n')
				hint[x] = ' ';
		}
		text_draw_role(win, 0, 0, hint, strlen(hint), in->w, ROLE_HINT);
		free(hint);
		return;
	}
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

static void	view_input_remember(struct input *, const char *);

/* The newest history entry older than FROM that contains the query. */
static int
view_input_search(struct input *in, int from)
{
	int	 i;

	for (i = from - 1; i >= 0; i--) {
		if (strstr(in->history[i], buf_str(&in->query)) != NULL)
			return i;
	}
	return -1;
}

static void
view_input_search_end(struct input *in, int accept)
{
	if (accept && in->found >= 0)
		view_input_set(in, in->history[in->found]);
	else if (!accept && in->before != NULL)
		view_input_set(in, in->before);
	free(in->before);
	in->before = NULL;
	in->searching = 0;
	in->hpos = in->nhistory;
}

/* C-r: 1 if the search took KEY; else the search ended, KEY goes on. */
static int
view_input_search_key(struct input *in, int key)
{
	int	 i;
	size_t	 qcur;

	switch (key) {
	case KEYC_CTRL('r'):
		if (in->found > 0 &&
		    (i = view_input_search(in, in->found)) >= 0)
			in->found = i;
		return 1;
	case 27:
	case KEYC_CTRL('g'):
	case KEYC_CTRL('c'):
		view_input_search_end(in, 0);
		return 1;
	case '\r':
		view_input_search_end(in, 1);
		return 1;
	case 127:
	case KEYC_CTRL('h'):
	case KEYC_FN | KEY_BACKSPACE:
		if (in->query.len > 0) {
			while (in->query.len > 0 && (in->query.data[--in->query.len]
			    & 0xc0) == 0x80)
				;
			in->query.data[in->query.len] = '\0';
		}
		in->found = view_input_search(in, in->nhistory);
		return 1;
	}
	if ((key & (KEYC_FN | KEYC_META)) || key < 0x20) {
		view_input_search_end(in, 1);
		return 0;
	}
	qcur = in->query.len;
	tui_edit_key(&in->query, &qcur, key);
	in->found = view_input_search(in, in->nhistory);
	return 1;
}

static void
view_input_send(struct pane *p)
{
	struct input	*in = p->data;
	char		*text, *msg, *cause = NULL;

	if (in->text.len == 0)
		return;
	if (slash_is_command(buf_str(&in->text))) {
		/* A command, never a message; kept in the history. */
		if (slash_run(p->tui, buf_str(&in->text)) != 0)
			return;	/* left in the line, to correct */
		view_input_remember(in, buf_str(&in->text));
		return;
	}
	text = view_input_expand(in);
	if ((msg = input_file_attach(tui_state(p->tui), text[0] == '/' ?
	    text + 1 : text, &cause)) == NULL) {
		tui_flash(p->tui, "%s", cause);
		free(cause);
		free(text);
		return;
	}
	tui_send_message(p->tui, msg);
	free(msg);
	view_input_remember(in, text);
	free(text);
}

/*
 * Tab: a /command's name, or the @path under the cursor. One match is
 * completed; several complete their common start and are listed on the
 * status row; none says so, and the line stays as it was.
 */
static void
view_input_complete(struct pane *p)
{
	struct input	*in = p->data;
	struct buf	 common = BUF_INIT, choices = BUF_INIT;
	const char	*s = buf_str(&in->text);
	size_t		 start = in->cursor, n, wlen;

	while (start > 0 && strchr(" \t\n", s[start - 1]) == NULL)
		start--;
	wlen = in->cursor - start;
	if (start == 0 && s[0] == '/') {
		n = slash_complete(s + 1, wlen - 1, &common, &choices);
		start = 1;
		wlen--;
	} else if (s[start] == '@') {
		n = input_file_complete(tui_state(p->tui), s + start + 1,
		    wlen - 1, &common, &choices);
		start++;
		wlen--;
	} else {
		char *pfx = keys_name(keys_prefix());

		tui_flash(p->tui, "Tab completes /commands and @paths here; "
		    "%s o moves to the next pane", pfx);
		free(pfx);
		n = (size_t)-1;
	}
	if (n == 0)
		tui_flash(p->tui, "nothing to complete");
	else if (n != (size_t)-1 && common.len >= wlen) {
		tui_edit_insert(&in->text, &in->cursor, common.data + wlen,
		    common.len - wlen);
		if (n == 1 && (common.len == 0 ||
		    common.data[common.len - 1] != '/'))
			tui_edit_insert(&in->text, &in->cursor, " ", 1);
		if (n > 1)
			tui_flash(p->tui, "%s", buf_str(&choices));
	}
	buf_release(&common);
	buf_release(&choices);
}

/* Into the history, and the line is cleared. */
static void
view_input_remember(struct input *in, const char *sent)
{
	if (in->nhistory == INPUT_HISTORY) {
		free(in->history[0]);
		memmove(in->history, in->history + 1,
		    (INPUT_HISTORY - 1) * sizeof *in->history);
		in->nhistory--;
	}
	in->history[in->nhistory++] = xstrdup(sent);
	in->hpos = in->nhistory;
	buf_reset(&in->text);
	in->cursor = 0;
	view_input_drop_pastes(in);
}

static int
view_input_key(struct pane *p, int key, enum ui_action a)
{
	struct input	*in = p->data;
	size_t		 i;
	uint64_t	 now;

	if (in->searching) {
		if (view_input_search_key(in, key)) {
			view_input_changed(p);
			return 1;
		}
		a = keys_lookup(SCOPE_INPUT, key);
	}
	switch (key) {
	case KEYC_CTRL('r'):
		if (in->nhistory == 0) {
			tui_flash(p->tui, "no history to search yet");
			return 1;
		}
		in->searching = 1;
		buf_reset(&in->query);
		buf_adds(&in->query, "");
		in->found = in->nhistory - 1;
		free(in->before);
		in->before = xstrdup(buf_str(&in->text));
		view_input_changed(p);
		return 1;
	case KEYC_CTRL('c'):
		/* Clears the line; twice on an empty line: interrupt. */
		now = mono_ms();
		if (in->text.len > 0) {
			buf_reset(&in->text);
			in->cursor = 0;
			view_input_drop_pastes(in);
			in->last_cc = 0;
		} else if (in->last_cc != 0 && now - in->last_cc < INPUT_CC_MS) {
			in->last_cc = 0;
			tui_do(p->tui, ACT_INTERRUPT);
		} else {
			in->last_cc = now;
			tui_flash(p->tui, "C-c again to interrupt the agent");
		}
		view_input_changed(p);
		return 1;
	case '\t':
		/* Completes; never moves the focus out of a line with text. */
		if (in->text.len == 0)
			return 0;
		view_input_complete(p);
		view_input_changed(p);
		return 1;
	case KEYC_CTRL('v'):
		if (in->npastes > 0) {
			char *all = view_input_expand(in);

			view_input_drop_pastes(in);
			view_input_set(in, all);
			free(all);
		}
		view_input_changed(p);
		return 1;
	}
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
