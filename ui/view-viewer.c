/*
 * view-viewer.c: full-screen read-only text: the file viewer (a workspace
 * file with line numbers, opened from the tree) and the help screen (the key
 * table, from keys.c). The text is read once and indexed by line, so
 * scrolling a large file costs the rows shown. Lines are not wrapped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

#define VIEWER_MAX	(16 * 1024 * 1024)	/* bytes of a file shown */

struct viewer {
	char		*title;
	char		*data;
	size_t		 len;
	size_t		*lines;		/* offsets of line starts */
	size_t		 nlines;
	size_t		 top;
	int		 numbers;
	int		 h;
};

static void
viewer_index(struct viewer *v)
{
	size_t	 i, alloc = 1024;

	v->lines = xreallocarray(NULL, alloc, sizeof *v->lines);
	v->nlines = 0;
	v->lines[v->nlines++] = 0;
	for (i = 0; i < v->len; i++) {
		if (v->data[i] != '\n' || i + 1 == v->len)
			continue;
		if (v->nlines == alloc) {
			alloc *= 2;
			v->lines = xreallocarray(v->lines, alloc,
			    sizeof *v->lines);
		}
		v->lines[v->nlines++] = i + 1;
	}
}

static void
viewer_draw(struct overlay *o, WINDOW *win, int w, int h)
{
	struct viewer	*v = o->data;
	size_t		 i, end, start;
	int		 y, x, numw = 0;
	char		 num[32];
	const char	*hint = " q close · j/k PgUp/PgDn scroll ";

	v->h = h - 2;
	wattr_set(win, theme_attr(ROLE_BORDER_FOCUS) & ~A_COLOR,
	    (short)theme_pair(ROLE_BORDER_FOCUS), NULL);
	box(win, 0, 0);
	text_draw_role(win, 0, 2, v->title, strlen(v->title), w - 4,
	    ROLE_TITLE);
	text_draw_role(win, h - 1, w - 2 - (int)strlen(hint), hint,
	    strlen(hint), (int)strlen(hint), ROLE_DIM);
	if (v->numbers)
		numw = snprintf(num, sizeof num, "%zu", v->nlines) + 1;
	if (v->top + (size_t)v->h > v->nlines)
		v->top = v->nlines > (size_t)v->h ? v->nlines - v->h : 0;
	for (y = 0, i = v->top; i < v->nlines && y < v->h; i++, y++) {
		start = v->lines[i];
		end = (i + 1 < v->nlines) ? v->lines[i + 1] : v->len;
		while (end > start && (v->data[end - 1] == '\n' ||
		    v->data[end - 1] == '\r'))
			end--;
		x = 2;
		if (v->numbers) {
			snprintf(num, sizeof num, "%*zu", numw - 1, i + 1);
			text_draw_role(win, y + 1, x, num, strlen(num), numw,
			    ROLE_LINENO);
			x += numw + 1;
		}
		text_draw_role(win, y + 1, x, v->data + start, end - start,
		    w - x - 2, ROLE_NORMAL);
	}
}

static int
viewer_key(struct overlay *o, int key)
{
	struct viewer	*v = o->data;
	size_t		 page = v->h > 2 ? (size_t)v->h - 1 : 1;

	switch (keys_lookup(SCOPE_VIEWER, key)) {
	case ACT_CLOSE:
		return 0;
	case ACT_UP:
		if (v->top > 0)
			v->top--;
		break;
	case ACT_DOWN:
		v->top++;
		break;
	case ACT_PAGE_UP:
		v->top = v->top > page ? v->top - page : 0;
		break;
	case ACT_PAGE_DOWN:
		v->top += page;
		break;
	case ACT_HOME:
		v->top = 0;
		break;
	case ACT_END:
		v->top = v->nlines;
		break;
	default:
		if (key == '?' || key == (KEYC_FN | KEY_F(1)))
			return 0;
		break;
	}
	return 1;
}

static void
viewer_free(struct overlay *o)
{
	struct viewer	*v = o->data;

	free(v->title);
	free(v->data);
	free(v->lines);
	free(v);
}

static const struct overlay_ops viewer_ops = {
	viewer_draw, viewer_key, viewer_free, SCOPE_VIEWER
};

void
viewer_show(struct tui *t, char *data, size_t len, const char *title,
    int numbers)
{
	struct viewer	*v = xcalloc(1, sizeof *v);

	v->data = data;
	v->len = len;
	v->title = xprintf(" %s ", title);
	v->numbers = numbers;
	viewer_index(v);
	tui_overlay(t, &viewer_ops, v);
}

void
viewer_open(struct tui *t, const char *path, const char *title)
{
	const char	*why;
	char		*data;
	size_t		 len;

	if ((data = file_read_regular(path, &len, VIEWER_MAX, &why)) == NULL) {
		tui_flash(t, "'%s': %s", title, errno == EFBIG ?
		    "too large to show" : why);
		return;
	}
	viewer_open_data(t, data, len, title);
}

void
viewer_open_data(struct tui *t, char *data, size_t len, const char *title)
{
	if (memchr(data, '\0', len) != NULL) {
		free(data);
		tui_flash(t, "'%s': a binary file", title);
		return;
	}
	viewer_show(t, data, len, title, 1);
}

void
help_open(struct tui *t)
{
	struct buf	 b = BUF_INIT;
	size_t		 len;
	char		*data;

	buf_addf(&b, "holt %s: key bindings (from the key table)\n\n",
	    PACKAGE_VERSION);
	keys_help(&b);
	buf_addc(&b, '\n');
	slash_help(&b);
	data = buf_detach(&b, &len);
	viewer_show(t, data, len, "help", 0);
}
