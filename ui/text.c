/*
 * text.c: UTF-8 text on a terminal grid. Widths come from wcwidth (CJK and
 * emoji take two cells), an invalid byte or a control character (C0, DEL,
 * C1, the bidi overrides: utf8_cp_is_control, as the command line escapes
 * them) takes one cell and is drawn as '?', a tab takes TEXT_TAB cells, and CSI escape
 * sequences ("ESC [ ... final", such as SGR colours kept in program output)
 * take none. Every function costs O(bytes looked at), so views only measure
 * what they draw.
 */
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "ui.h"

#define TEXT_TAB 4

/* One character at S: its length in bytes, code point and width. */
static size_t
text_next(const unsigned char *s, size_t len, wchar_t *wc, int *w)
{
	unsigned int	 c = s[0], cp;
	size_t		 n, i;
	int		 cw;

	if (c == 0x1b && len > 1 && s[1] == '[') {
		for (i = 2; i < len; i++) {
			if (s[i] >= 0x40 && s[i] <= 0x7e) {
				*wc = 0;
				*w = 0;
				return i + 1;
			}
		}
		*wc = 0;
		*w = 0;
		return len;
	}
	if (c < 0x80) {
		*wc = (wchar_t)c;
		if (c == '\t')
			*w = TEXT_TAB;
		else
			*w = (c < 0x20 || c == 0x7f) ? 1 : 1;
		return 1;
	}
	if ((c & 0xe0) == 0xc0) {
		n = 2;
		cp = c & 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		n = 3;
		cp = c & 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		n = 4;
		cp = c & 0x07;
	} else
		goto bad;
	if (n > len)
		goto bad;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			goto bad;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		goto bad;
	if (utf8_cp_is_control(cp)) {	/* C1, bidi overrides: as C0 */
		*wc = (wchar_t)-1;
		*w = 1;
		return n;
	}
	*wc = (wchar_t)cp;
	cw = wcwidth(*wc);
	if (cw < 0)
		cw = 1;
	*w = cw;
	return n;
bad:
	*wc = (wchar_t)-1;
	*w = 1;
	return 1;
}

int
text_width(const char *s, size_t len)
{
	size_t	 off = 0;
	int	 w, total = 0;
	wchar_t	 wc;

	while (off < len) {
		off += text_next((const unsigned char *)s + off, len - off,
		    &wc, &w);
		total += w;
	}
	return total;
}

size_t
text_fit(const char *s, size_t len, int cols, int *used)
{
	size_t	 off = 0, n;
	int	 w, total = 0;
	wchar_t	 wc;

	while (off < len) {
		n = text_next((const unsigned char *)s + off, len - off, &wc,
		    &w);
		if (total + w > cols)
			break;
		total += w;
		off += n;
	}
	if (used != NULL)
		*used = total;
	return off;
}

size_t
text_wrap_next(const char *s, size_t len, size_t off, int cols)
{
	size_t	 fit, i;

	if (cols < 1)
		cols = 1;
	fit = text_fit(s + off, len - off, cols, NULL);
	if (fit == 0 && off < len) {
		/* A wide character in one column: take it anyway. */
		fit = 1;
		while (off + fit < len && (s[off + fit] & 0xc0) == 0x80)
			fit++;
		return fit;
	}
	if (off + fit >= len)
		return len - off;
	/* Break after the last space of the row, if there is one. */
	for (i = fit; i > 0; i--) {
		if (s[off + i - 1] == ' ')
			return i;
	}
	return fit;
}

/* Add wide characters to the window, flushing the batch. */
static void
text_flush(WINDOW *win, wchar_t *batch, int *nb)
{
	if (*nb > 0)
		waddnwstr(win, batch, *nb);
	*nb = 0;
}

static int
text_draw_common(WINDOW *win, int y, int x, const char *s, size_t len,
    int cols, attr_t base, int basepair, int sgr, const char *pre,
    size_t prelen)
{
	wchar_t		 batch[256];
	const unsigned char *u = (const unsigned char *)s;
	size_t		 off = 0, n;
	int		 w, used = 0, nb = 0, i, fg = -1, bg = -1, pair = basepair;
	attr_t		 attr = base;
	wchar_t		 wc;

	if (cols <= 0)
		return 0;
	/* The colours set earlier on a wrapped line still hold. */
	for (off = 0; sgr && off < prelen; off += n) {
		n = text_next((const unsigned char *)pre + off, prelen - off,
		    &wc, &w);
		if (n > 2 && pre[off] == 0x1b && pre[off + n - 1] == 'm') {
			text_sgr_apply(pre + off + 2, n - 3, base, basepair,
			    &attr, &fg, &bg);
			pair = (fg == -1 && bg == -1) ? basepair :
			    theme_sgr_pair(fg, bg);
		}
	}
	off = 0;
	wmove(win, y, x);
	wattr_set(win, attr, (short)pair, &pair);
	while (off < len) {
		n = text_next(u + off, len - off, &wc, &w);
		if (used + w > cols)
			break;
		if (n > 2 && u[off] == 0x1b && sgr && u[off + n - 1] == 'm') {
			text_flush(win, batch, &nb);
			text_sgr_apply(s + off + 2, n - 3, base, basepair,
			    &attr, &fg, &bg);
			pair = (fg == -1 && bg == -1) ? basepair :
			    theme_sgr_pair(fg, bg);
			wattr_set(win, attr, (short)pair, &pair);
			off += n;
			continue;
		}
		if (wc == 0 && w == 0) {
			off += n;
			continue;
		}
		if (nb + TEXT_TAB >= (int)nitems(batch))
			text_flush(win, batch, &nb);
		if (wc == '\t') {
			for (i = 0; i < TEXT_TAB; i++)
				batch[nb++] = L' ';
		} else if (wc == (wchar_t)-1 || wc < 0x20 || wc == 0x7f)
			batch[nb++] = L'?';
		else
			batch[nb++] = wc;
		used += w;
		off += n;
	}
	text_flush(win, batch, &nb);
	return used;
}

int
text_draw(WINDOW *win, int y, int x, const char *s, size_t len, int cols,
    attr_t attr)
{
	return text_draw_common(win, y, x, s, len, cols, attr & ~A_COLOR,
	    PAIR_NUMBER(attr), 0, NULL, 0);
}

int
text_draw_role(WINDOW *win, int y, int x, const char *s, size_t len,
    int cols, enum ui_role role)
{
	return text_draw_common(win, y, x, s, len, cols,
	    theme_attr(role) & ~A_COLOR, theme_pair(role), 0, NULL, 0);
}

int
text_draw_sgr(WINDOW *win, int y, int x, const char *s, size_t len, int cols,
    enum ui_role role, const char *pre, size_t prelen)
{
	return text_draw_common(win, y, x, s, len, cols,
	    theme_attr(role) & ~A_COLOR, theme_pair(role), 1, pre, prelen);
}

/* One SGR sequence's parameters ("1;31", "38;5;208", "38;2;r;g;b"). */
void
text_sgr_apply(const char *p, size_t len, attr_t base, int basepair,
    attr_t *attr, int *fg, int *bg)
{
	int	 v[32], nv = 0, i, cur = 0, have = 0;
	size_t	 k;

	for (k = 0; k < len && nv < (int)nitems(v); k++) {
		if (p[k] >= '0' && p[k] <= '9') {
			cur = cur * 10 + (p[k] - '0');
			if (cur > 0xffffff)
				cur = 0xffffff;
			have = 1;
		} else if (p[k] == ';' || p[k] == ':') {
			v[nv++] = have ? cur : 0;
			cur = have = 0;
		} else
			return;	/* not plain SGR: ignore */
	}
	if (nv < (int)nitems(v))
		v[nv++] = have ? cur : 0;
	for (i = 0; i < nv; i++) {
		switch (v[i]) {
		case 0:
			*attr = base;
			*fg = *bg = -1;
			break;
		case 1:
			*attr |= A_BOLD;
			break;
		case 2:
			*attr |= A_DIM;
			break;
		case 3:
			*attr |= A_ITALIC;
			break;
		case 4:
			*attr |= A_UNDERLINE;
			break;
		case 7:
			*attr |= A_REVERSE;
			break;
		case 22:
			*attr &= ~(A_BOLD | A_DIM);
			break;
		case 23:
			*attr &= ~A_ITALIC;
			break;
		case 24:
			*attr &= ~A_UNDERLINE;
			break;
		case 27:
			*attr &= ~A_REVERSE;
			break;
		case 39:
			*fg = -1;
			break;
		case 49:
			*bg = -1;
			break;
		case 38:
		case 48:
			if (i + 2 < nv && v[i + 1] == 5) {
				if (v[i] == 38)
					*fg = v[i + 2] & 0xff;
				else
					*bg = v[i + 2] & 0xff;
				i += 2;
			} else if (i + 4 < nv && v[i + 1] == 2) {
				k = 0x1000000 | ((v[i + 2] & 0xff) << 16) |
				    ((v[i + 3] & 0xff) << 8) | (v[i + 4] & 0xff);
				if (v[i] == 38)
					*fg = (int)k;
				else
					*bg = (int)k;
				i += 4;
			} else
				i = nv;
			break;
		default:
			if (v[i] >= 30 && v[i] <= 37)
				*fg = v[i] - 30;
			else if (v[i] >= 40 && v[i] <= 47)
				*bg = v[i] - 40;
			else if (v[i] >= 90 && v[i] <= 97)
				*fg = v[i] - 90 + 8;
			else if (v[i] >= 100 && v[i] <= 107)
				*bg = v[i] - 100 + 8;
			break;
		}
	}
	(void)basepair;
}

/* Fill the rest of a row with spaces. */
void
text_clear_to(WINDOW *win, int y, int x, int to, attr_t attr)
{
	wattr_set(win, attr & ~A_COLOR, (short)PAIR_NUMBER(attr), NULL);
	if (x < to)
		mvwhline(win, y, x, ' ', to - x);
}
