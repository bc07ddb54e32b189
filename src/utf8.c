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
 */
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

int
utf8_valid(const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i = 0, len, bad;

	while (i < n) {
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
