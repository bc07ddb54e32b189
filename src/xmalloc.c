/*
 * xmalloc.c: allocation wrappers. Running out of memory is not something
 * holt tries to survive; it says so and stops.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "holt.h"

void *
xmalloc(size_t size)
{
	void	*p;

	if (size == 0)
		size = 1;
	if ((p = malloc(size)) == NULL)
		fatalx("out of memory (%zu bytes)", size);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void	*p;

	if (n == 0 || size == 0)
		n = size = 1;
	if ((p = calloc(n, size)) == NULL)
		fatalx("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *
xrealloc(void *old, size_t size)
{
	void	*p;

	if (size == 0)
		size = 1;
	if ((p = realloc(old, size)) == NULL)
		fatalx("out of memory (%zu bytes)", size);
	return p;
}

void *
xreallocarray(void *old, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		fatalx("allocation overflow (%zu x %zu)", n, size);
	return xrealloc(old, n * size);
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char	*p;
	size_t	 len;

	len = strnlen(s, n);
	p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

int
xvasprintf(char **ret, const char *fmt, va_list ap)
{
	int	 n;

	if ((n = vasprintf(ret, fmt, ap)) == -1)
		fatalx("out of memory (vasprintf)");
	return n;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = xvasprintf(ret, fmt, ap);
	va_end(ap);
	return n;
}

char *
xprintf(const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	xvasprintf(&s, fmt, ap);
	va_end(ap);
	return s;
}

size_t
xstrlcpy(char *dst, const char *src, size_t size)
{
	size_t	 len = strlen(src);

	if (size != 0) {
		size_t n = len >= size ? size - 1 : len;
		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

void
strv_free(char **v)
{
	size_t	 i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}
