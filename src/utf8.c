/*
 * utf8.c: text that crosses a boundary (a client's request, a model's
 * stream, a command's output, a file name from the sandbox) is made valid
 * UTF-8 before holt keeps or forwards it. cJSON takes any bytes inside a
 * string and prints them back raw, so one stray byte would make every later
 * line of the event log, and every later model request, invalid JSON.
 *
 * Each maximal ill-formed subsequence becomes U+FFFD, as Unicode's
 * "substitution of maximal subparts" says: overlong forms, surrogates,
 * code points past U+10FFFF and truncated sequences are all ill-formed.
 *
 * Text that leaves for a terminal (a file name in holt diff --stat, a
 * message in holt log, an error) goes through utf8_vis: a name or a
 * message the agent or a repository made could otherwise retitle the
 * window, clear the screen or write into the user's clipboard.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "holt.h"

#define UTF8_REPLACEMENT	"\xef\xbf\xbd"

/*
 * The length of the well-formed sequence at p (at most n bytes), or 0 if
 * it is ill-formed; *bad is then how many bytes the one U+FFFD replaces.
 */
static size_t
utf8_seq(const unsigned char *p, size_t n, size_t *bad)
{
	size_t		 len, i;
	unsigned char	 lo = 0x80, hi = 0xbf;

	*bad = 1;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;		/* overlong */
		else if (p[0] == 0xed)
			hi = 0x9f;		/* surrogates */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		if (p[0] == 0xf0)
			lo = 0x90;		/* overlong */
		else if (p[0] == 0xf4)
			hi = 0x8f;		/* past U+10FFFF */
	} else
		return 0;
	for (i = 1; i < len; i++) {
		if (i >= n || p[i] < lo || p[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return len;
}

/*
 * Every frame of command output passes here: ASCII, the common case, is
 * checked eight bytes at a time, so the check costs a fraction of the
 * frame's own parse.
 */
int
utf8_valid(const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, len, bad;
	uint64_t		 w;

	while (i < n) {
		while (n - i >= 8) {
			memcpy(&w, p + i, 8);
			if (w & 0x8080808080808080ULL)
				break;
			i += 8;
		}
		if (i >= n)
			break;
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if ((len = utf8_seq(p + i, n - i, &bad)) == 0)
			return 0;
		i += len;
	}
	return 1;
}

char *
utf8_repair(const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s;
	struct buf		 b;
	size_t			 i = 0, len, bad;

	if (utf8_valid(s, n))
		return NULL;
	buf_init(&b);
	while (i < n) {
		if ((len = utf8_seq(p + i, n - i, &bad)) != 0) {
			buf_add(&b, s + i, len);
			i += len;
		} else {
			buf_add(&b, UTF8_REPLACEMENT, 3);
			i += bad;
		}
	}
	return buf_detach(&b, NULL);
}

/* Every string and key in the tree made valid UTF-8: how many were not. */
unsigned int
utf8_repair_json(cJSON *obj)
{
	cJSON		*c;
	char		*fixed;
	size_t		 len;
	unsigned int	 n = 0;

	if (obj == NULL)
		return 0;
	if (obj->string != NULL && (fixed = utf8_repair(obj->string,
	    strlen(obj->string))) != NULL) {
		if (obj->type & cJSON_StringIsConst)
			obj->type &= ~cJSON_StringIsConst;
		else
			cJSON_free(obj->string);
		len = strlen(fixed) + 1;
		if ((obj->string = cJSON_malloc(len)) == NULL)
			fatalx("out of memory (json key)");
		memcpy(obj->string, fixed, len);
		free(fixed);
		n++;
	}
	if (cJSON_IsString(obj) && obj->valuestring != NULL &&
	    (fixed = utf8_repair(obj->valuestring,
	    strlen(obj->valuestring))) != NULL) {
		cJSON_SetValuestring(obj, fixed);
		free(fixed);
		n++;
	}
	for (c = obj->child; c != NULL; c = c->next)
		n += utf8_repair_json(c);
	return n;
}

/*
 * Whether the code point of a well-formed sequence is a control a terminal
 * acts on or that reorders what it shows: C1 (U+0080-U+009F, which
 * terminals may read as ESC [ and the like) and the bidirectional
 * overrides and isolates (U+202A-U+202E, U+2066-U+2069).
 */
static unsigned int
utf8_cp(const unsigned char *p, size_t len)
{
	if (len == 2)
		return ((p[0] & 0x1fU) << 6) | (p[1] & 0x3fU);
	if (len == 3)
		return ((p[0] & 0x0fU) << 12) | ((p[1] & 0x3fU) << 6) |
		    (p[2] & 0x3fU);
	return 0x10000;		/* 4 bytes: no control among them */
}

int
utf8_cp_is_control(unsigned int cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

static int
utf8_is_control(const unsigned char *p, size_t len)
{
	return utf8_cp_is_control(utf8_cp(p, len));
}

static void
utf8_vis_byte(struct buf *b, unsigned char c)
{
	switch (c) {
	case '\n':
		buf_adds(b, "\\n");
		break;
	case '\r':
		buf_adds(b, "\\r");
		break;
	case '\t':
		buf_adds(b, "\\t");
		break;
	default:
		buf_addf(b, "\\%03o", c);
		break;
	}
}

void
utf8_vis_add(struct buf *b, const char *s, size_t n, int flags)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, len, bad, k;
	unsigned char		 c;

	while (i < n) {
		c = p[i];
		if (c >= 0x20 && c < 0x7f) {
			buf_addc(b, (char)c);
			i++;
			continue;
		}
		if (c < 0x80) {
			if ((flags & (UTF8_VIS_TEXT|UTF8_VIS_JSON)) &&
			    (c == '\n' || c == '\t' || (c == '\r' &&
			    i + 1 < n && p[i + 1] == '\n')))
				buf_addc(b, (char)c);
			else if (flags & UTF8_VIS_JSON)
				buf_addf(b, "\\u%04x", c);
			else
				utf8_vis_byte(b, c);
			i++;
			continue;
		}
		if ((len = utf8_seq(p + i, n - i, &bad)) == 0)
			len = bad;
		else if (!utf8_is_control(p + i, len)) {
			buf_add(b, s + i, len);
			i += len;
			continue;
		}
		if (flags & UTF8_VIS_JSON) {
			/* Inside a JSON string: \\uXXXX, or U+FFFD. */
			if (utf8_seq(p + i, n - i, &bad) == 0)
				buf_adds(b, UTF8_REPLACEMENT);
			else
				buf_addf(b, "\\u%04x", utf8_cp(p + i, len));
		} else {
			for (k = 0; k < len; k++)	/* ill-formed, or a control */
				utf8_vis_byte(b, p[i + k]);
		}
		i += len;
	}
}

char *
utf8_vis(const char *s, int flags)
{
	struct buf	 b = BUF_INIT;

	utf8_vis_add(&b, s != NULL ? s : "", s != NULL ? strlen(s) : 0,
	    flags);
	return buf_detach(&b, NULL);
}

int
utf8_vis_print(FILE *f, int flags, const char *fmt, ...)
{
	struct buf	 b = BUF_INIT, out = BUF_INIT;
	va_list		 ap;
	int		 r;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	utf8_vis_add(&out, buf_str(&b), b.len, flags);
	r = fwrite(buf_str(&out), 1, out.len, f) == out.len ? 0 : -1;
	buf_release(&b);
	buf_release(&out);
	return r;
}
