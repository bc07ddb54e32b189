/*
 * buf.c: growable, NUL-terminated byte buffers. Growth doubles, so appending
 * n bytes one at a time costs O(n) overall.
 */
#include <stdlib.h>
#include <string.h>

#include "holt.h"

void
buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = b->alloc = 0;
}

void
buf_release(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

void
buf_grow(struct buf *b, size_t extra)
{
	size_t	 want;

	if (extra > SIZE_MAX - b->len - 1)
		fatalx("buffer overflow");
	want = b->len + extra + 1;
	if (want <= b->alloc)
		return;
	if (b->alloc < 64)
		b->alloc = 64;
	while (b->alloc < want)
		b->alloc = b->alloc > SIZE_MAX / 2 ? want : b->alloc * 2;
	b->data = xrealloc(b->data, b->alloc);
}

void
buf_add(struct buf *b, const void *p, size_t n)
{
	buf_grow(b, n);
	if (n != 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void
buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	va_list	 aq;
	int	 n;

	if (fmt == NULL)	/* also tells -fsanitize=undefined builds */
		BUG();
	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		BUG();
	buf_grow(b, (size_t)n);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void
buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	buf_vaddf(b, fmt, ap);
	va_end(ap);
}

void
buf_remove_front(struct buf *b, size_t n)
{
	if (n >= b->len) {
		buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

char *
buf_detach(struct buf *b, size_t *lenp)
{
	char	*p;

	if (b->data == NULL) {
		buf_grow(b, 0);
		b->data[0] = '\0';	/* an empty buffer is "" too */
	}
	p = b->data;
	if (lenp != NULL)
		*lenp = b->len;
	buf_init(b);
	return p;
}

const char *
buf_str(struct buf *b)
{
	return b->data != NULL ? b->data : "";
}
