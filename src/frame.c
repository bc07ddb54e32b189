/*
 * frame.c: length-prefixed JSON frames, the wire format of the client and
 * envd sockets. A frame is a 4-byte big-endian length then one JSON object.
 * The decoder never trusts the length: anything above its maximum breaks the
 * stream before a byte of it is buffered.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holt.h"

char *
frame_encode(const cJSON *obj, size_t *lenp)
{
	char	*json, *out;
	size_t	 n;

	if ((json = cJSON_PrintUnformatted(obj)) == NULL)
		fatalx("out of memory (frame)");
	n = strlen(json);
	if (n > FRAME_MAX) {
		/* Too big for any peer to take: the caller says so. */
		cJSON_free(json);
		errno = EMSGSIZE;
		return NULL;
	}
	out = xmalloc(n + 4);
	out[0] = (char)((n >> 24) & 0xff);
	out[1] = (char)((n >> 16) & 0xff);
	out[2] = (char)((n >> 8) & 0xff);
	out[3] = (char)(n & 0xff);
	memcpy(out + 4, json, n);
	cJSON_free(json);
	*lenp = n + 4;
	return out;
}

void
frame_decoder_init(struct frame_decoder *fd, size_t max)
{
	buf_init(&fd->in);
	fd->off = 0;
	fd->max = max == 0 ? FRAME_MAX : max;
}

void
frame_decoder_release(struct frame_decoder *fd)
{
	buf_release(&fd->in);
	fd->off = 0;
}

void
frame_decoder_feed(struct frame_decoder *fd, const void *p, size_t n)
{
	/* Compact lazily: only when the consumed prefix dominates. */
	if (fd->off != 0 && fd->off >= fd->in.len / 2) {
		buf_remove_front(&fd->in, fd->off);
		fd->off = 0;
	}
	buf_add(&fd->in, p, n);
}

int
frame_decoder_next(struct frame_decoder *fd, cJSON **objp, char **cause)
{
	const unsigned char	*p;
	size_t			 avail, n;
	cJSON			*obj;

	*objp = NULL;
	avail = fd->in.len - fd->off;
	if (avail < 4)
		return 0;
	p = (const unsigned char *)fd->in.data + fd->off;
	n = ((size_t)p[0] << 24) | ((size_t)p[1] << 16) |
	    ((size_t)p[2] << 8) | (size_t)p[3];
	if (n > fd->max) {
		if (cause != NULL)
			*cause = xprintf("frame of %zu bytes is over the "
			    "limit of %zu", n, fd->max);
		return -1;
	}
	if (avail - 4 < n)
		return 0;
	obj = cJSON_ParseWithLength((const char *)p + 4, n);
	utf8_repair_json(obj);	/* a peer's bad bytes stop here */
	fd->off += 4 + n;
	if (fd->off == fd->in.len) {
		buf_reset(&fd->in);
		fd->off = 0;
	}
	if (obj == NULL || !cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		if (cause != NULL)
			*cause = xstrdup("frame is not a JSON object");
		return -1;
	}
	*objp = obj;
	return 1;
}

int
frame_write_fd(int fd, const cJSON *obj)
{
	char	*data;
	size_t	 len;
	int	 rc;

	if ((data = frame_encode(obj, &len)) == NULL)
		return -1;
	rc = file_write_all(fd, data, len);
	free(data);
	return rc;
}

int
frame_write2_fd(int fd, const cJSON *a, const cJSON *b)
{
	char	*x, *y;
	size_t	 xlen, ylen;
	int	 rc;

	if (a == NULL)
		return frame_write_fd(fd, b);
	if ((x = frame_encode(a, &xlen)) == NULL)
		return -1;
	if ((y = frame_encode(b, &ylen)) == NULL) {
		free(x);
		return -1;
	}
	x = xrealloc(x, xlen + ylen);
	memcpy(x + xlen, y, ylen);
	free(y);
	rc = file_write_all(fd, x, xlen + ylen);
	free(x);
	return rc;
}

static int
read_full(int fd, void *p, size_t n)
{
	size_t	 done = 0;
	ssize_t	 r;

	while (done < n) {
		r = read(fd, (char *)p + done, n - done);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return -1;
		if (r == 0)
			return done == 0 ? 0 : -1;
		done += (size_t)r;
	}
	return 1;
}

int
frame_read_fd(int fd, cJSON **objp, char **cause)
{
	unsigned char	 hdr[4];
	size_t		 n;
	char		*data;
	int		 r;

	*objp = NULL;
	if ((r = read_full(fd, hdr, 4)) <= 0) {
		if (r == -1 && cause != NULL)
			*cause = xprintf("read: %s", errno != 0 ?
			    strerror(errno) : "connection closed mid-frame");
		return r;
	}
	n = ((size_t)hdr[0] << 24) | ((size_t)hdr[1] << 16) |
	    ((size_t)hdr[2] << 8) | (size_t)hdr[3];
	if (n > FRAME_MAX) {
		if (cause != NULL)
			*cause = xprintf("frame of %zu bytes is over the limit", n);
		return -1;
	}
	data = xmalloc(n + 1);
	if (read_full(fd, data, n) != 1 && n != 0) {
		free(data);
		if (cause != NULL)
			*cause = xstrdup("connection closed mid-frame");
		return -1;
	}
	*objp = cJSON_ParseWithLength(data, n);
	free(data);
	utf8_repair_json(*objp);
	if (*objp == NULL || !cJSON_IsObject(*objp)) {
		cJSON_Delete(*objp);
		*objp = NULL;
		if (cause != NULL)
			*cause = xstrdup("frame is not a JSON object");
		return -1;
	}
	return 1;
}
