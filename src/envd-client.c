/*
 * envd-client.c: the blocking side of the envd protocol (holt-envd(8)), for
 * one-shot users such as the CLI. Also the payload encoding both ends share:
 * bytes travel as "data" when they are valid UTF-8 without NUL (cheap and
 * readable), else as "data_b64".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"

static const char b64_chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *
envd_b64_encode(const void *p, size_t n)
{
	struct buf	 b = BUF_INIT;

	envd_b64_add(&b, p, n);
	return buf_detach(&b, NULL);
}

void
envd_b64_add(struct buf *b, const void *p, size_t n)
{
	const unsigned char	*s = p;
	char			*o;
	size_t			 i;
	unsigned int		 v;

	buf_grow(b, ((n + 2) / 3) * 4);
	o = b->data + b->len;
	for (i = 0; i + 2 < n; i += 3) {
		v = ((unsigned int)s[i] << 16) | ((unsigned int)s[i + 1] << 8) |
		    s[i + 2];
		*o++ = b64_chars[(v >> 18) & 63];
		*o++ = b64_chars[(v >> 12) & 63];
		*o++ = b64_chars[(v >> 6) & 63];
		*o++ = b64_chars[v & 63];
	}
	if (i < n) {
		v = (unsigned int)s[i] << 16;
		if (i + 1 < n)
			v |= (unsigned int)s[i + 1] << 8;
		*o++ = b64_chars[(v >> 18) & 63];
		*o++ = b64_chars[(v >> 12) & 63];
		*o++ = i + 1 < n ? b64_chars[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	b->len = (size_t)(o - b->data);
}

static int
b64_value(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int
envd_b64_decode(const char *s, struct buf *b)
{
	unsigned int	 v = 0;
	int		 bits = 0, d;
	char		 tmp[4096];
	size_t		 n = 0;

	for (; *s != '\0' && *s != '='; s++) {
		if ((d = b64_value((unsigned char)*s)) == -1)
			return -1;
		v = (v << 6) | (unsigned int)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			tmp[n++] = (char)((v >> bits) & 0xff);
			if (n == sizeof tmp) {
				buf_add(b, tmp, n);
				n = 0;
			}
		}
	}
	buf_add(b, tmp, n);
	return 0;
}

/* Valid UTF-8 (no overlongs, no surrogates) and no NUL. */
int
envd_utf8_ok(const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t	 i = 0, k, need;
	uint32_t cp;

	while (i < n) {
		/* Eight ASCII bytes, none NUL, at a time. */
		while (i + 8 <= n) {
			uint64_t w;
			memcpy(&w, s + i, 8);
			if ((w & 0x8080808080808080ULL) != 0 ||
			    ((w - 0x0101010101010101ULL) & ~w &
			    0x8080808080808080ULL) != 0)
				break;
			i += 8;
		}
		if (i >= n)
			break;
		if (s[i] >= 0x01 && s[i] < 0x80) {
			i++;
			continue;
		}
		if (s[i] == 0)
			return 0;
		if ((s[i] & 0xe0) == 0xc0) {
			need = 1;
			cp = s[i] & 0x1f;
		} else if ((s[i] & 0xf0) == 0xe0) {
			need = 2;
			cp = s[i] & 0x0f;
		} else if ((s[i] & 0xf8) == 0xf0) {
			need = 3;
			cp = s[i] & 0x07;
		} else
			return 0;
		if (i + need >= n)
			return 0;
		for (k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) ||
		    (need == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += need + 1;
	}
	return 1;
}

void
envd_data_set(cJSON *obj, const void *p, size_t n)
{
	char	*s;

	if (envd_utf8_ok(p, n)) {
		s = xstrndup(p, n);
		cJSON_AddStringToObject(obj, "data", s);
	} else {
		s = envd_b64_encode(p, n);
		cJSON_AddStringToObject(obj, "data_b64", s);
	}
	free(s);
}

int
envd_data_get(const cJSON *obj, struct buf *b)
{
	const char	*s;

	if ((s = json_str(obj, "data")) != NULL) {
		buf_adds(b, s);
		return 0;
	}
	if ((s = json_str(obj, "data_b64")) != NULL)
		return envd_b64_decode(s, b);
	return 0;
}

static int	envd_next_id = 1000000;

cJSON *
envd_call(int fd, cJSON *req, char **cause)
{
	cJSON		*reply;
	int		 id = envd_next_id++, r;
	const char	*err;

	cJSON_DeleteItemFromObject(req, "id");
	cJSON_AddNumberToObject(req, "id", id);
	if (frame_write_fd(fd, req) != 0) {
		*cause = xprintf("envd: write: %s", strerror(errno));
		cJSON_Delete(req);
		return NULL;
	}
	cJSON_Delete(req);
	for (;;) {
		r = frame_read_fd(fd, &reply, cause);
		if (r == 0)
			*cause = xstrdup("envd closed the connection");
		if (r <= 0)
			return NULL;
		if ((int)json_num(reply, "id", -1) != id) {
			cJSON_Delete(reply);	/* someone else's event */
			continue;
		}
		if ((err = json_str(reply, "error")) != NULL) {
			*cause = xstrdup(err);
			cJSON_Delete(reply);
			return NULL;
		}
		return reply;
	}
}

char *
envd_read_file(int fd, const char *path, size_t *lenp, char **cause)
{
	struct buf	 b = BUF_INIT;
	cJSON		*req, *reply;
	size_t		 before;
	int		 eof;

	for (;;) {
		req = cJSON_CreateObject();
		cJSON_AddStringToObject(req, "op", "read");
		cJSON_AddStringToObject(req, "path", path);
		cJSON_AddNumberToObject(req, "offset", (double)b.len);
		cJSON_AddNumberToObject(req, "length", ENVD_READ_MAX);
		if ((reply = envd_call(fd, req, cause)) == NULL) {
			buf_release(&b);
			return NULL;
		}
		before = b.len;
		if (envd_data_get(reply, &b) != 0) {
			cJSON_Delete(reply);
			buf_release(&b);
			*cause = xstrdup("envd: bad base64 in read reply");
			return NULL;
		}
		eof = json_bool(reply, "eof", 1);
		cJSON_Delete(reply);
		if (eof || b.len == before)
			break;
	}
	return buf_detach(&b, lenp);
}

static int
write_op(int fd, const char *path, const void *p, size_t n, int mode,
    int append, char **cause)
{
	cJSON	*req, *reply;

	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "write");
	cJSON_AddStringToObject(req, "path", path);
	if (mode >= 0)
		cJSON_AddNumberToObject(req, "mode", mode);
	if (append)
		cJSON_AddBoolToObject(req, "append", 1);
	envd_data_set(req, p, n);
	if ((reply = envd_call(fd, req, cause)) == NULL)
		return -1;
	cJSON_Delete(reply);
	return 0;
}

/*
 * Small files go in one atomic write. Bigger ones are written to a
 * temporary name beside the target in pieces, then moved over it, so the
 * target is still replaced atomically.
 */
int
envd_write_file(int fd, const char *path, const void *p, size_t n, int mode,
    char **cause)
{
	const char	*c = p;
	char		*tmp;
	size_t		 off, chunk;
	cJSON		*req, *reply;

	if (n <= ENVD_READ_MAX)
		return write_op(fd, path, p, n, mode, 0, cause);
	tmp = xprintf("%s.holt-put.%ld", path, (long)getpid());
	for (off = 0; off < n; off += chunk) {
		chunk = n - off > ENVD_READ_MAX ? ENVD_READ_MAX : n - off;
		if (write_op(fd, tmp, c + off, chunk, mode, off != 0,
		    cause) != 0) {
			free(tmp);
			return -1;
		}
	}
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "move");
	cJSON_AddStringToObject(req, "from", tmp);
	cJSON_AddStringToObject(req, "to", path);
	free(tmp);
	if ((reply = envd_call(fd, req, cause)) == NULL)
		return -1;
	cJSON_Delete(reply);
	return 0;
}

cJSON *
envd_list(int fd, const char *path, int depth, char **cause)
{
	cJSON	*req, *reply, *entries;

	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "list");
	cJSON_AddStringToObject(req, "path", path);
	cJSON_AddNumberToObject(req, "depth", depth);
	if ((reply = envd_call(fd, req, cause)) == NULL)
		return NULL;
	entries = cJSON_DetachItemFromObject(reply, "entries");
	cJSON_Delete(reply);
	if (entries == NULL)
		*cause = xstrdup("envd: list reply without entries");
	return entries;
}

int
envd_exec_simple(int fd, const char *cmd, int timeout_ms, struct buf *out,
    struct buf *err, char **cause)
{
	cJSON		*req, *ev;
	int		 id = envd_next_id++, r, code;
	const char	*type, *e;

	req = cJSON_CreateObject();
	cJSON_AddNumberToObject(req, "id", id);
	cJSON_AddStringToObject(req, "op", "exec");
	cJSON_AddStringToObject(req, "cmd", cmd);
	if (timeout_ms > 0)
		cJSON_AddNumberToObject(req, "timeout_ms", timeout_ms);
	r = frame_write_fd(fd, req);
	cJSON_Delete(req);
	if (r != 0) {
		*cause = xprintf("envd: write: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		r = frame_read_fd(fd, &ev, cause);
		if (r == 0)
			*cause = xstrdup("envd closed the connection");
		if (r <= 0)
			return -1;
		if ((int)json_num(ev, "id", -1) != id) {
			cJSON_Delete(ev);
			continue;
		}
		if ((e = json_str(ev, "error")) != NULL) {
			*cause = xstrdup(e);
			cJSON_Delete(ev);
			return -1;
		}
		type = json_str(ev, "event");
		if (type == NULL)
			type = "";
		if (strcmp(type, "stdout") == 0 && out != NULL)
			envd_data_get(ev, out);
		else if (strcmp(type, "stderr") == 0 && err != NULL)
			envd_data_get(ev, err);
		else if (strcmp(type, "exit") == 0) {
			if (json_bool(ev, "timed_out", 0))
				code = EXIT_TIMEOUT;
			else if (json_num(ev, "signal", 0) > 0)
				code = 128 + (int)json_num(ev, "signal", 0);
			else
				code = (int)json_num(ev, "code", 0);
			cJSON_Delete(ev);
			return code;
		}
		cJSON_Delete(ev);
	}
}

/* Read frames until the one with id; others are given to each (or freed). */
static cJSON *
envd_wait_id(int fd, int id, void (*each)(cJSON *, void *), void *arg,
    char **cause)
{
	cJSON	*ev;
	int	 r;

	for (;;) {
		r = frame_read_fd(fd, &ev, cause);
		if (r == 0)
			*cause = xstrdup("envd closed the connection");
		if (r <= 0)
			return NULL;
		if ((int)json_num(ev, "id", -1) == id)
			return ev;
		if (each != NULL)
			each(ev, arg);
		cJSON_Delete(ev);
	}
}

/* The stderr of the command being fed, kept for its error. */
struct envd_feed {
	int		 id;
	struct buf	*err;
	cJSON		*exit;
};

static void
envd_feed_event(cJSON *ev, void *arg)
{
	struct envd_feed	*f = arg;
	const char		*type = json_str(ev, "event");

	if ((int)json_num(ev, "id", -1) != f->id || type == NULL)
		return;
	if (strcmp(type, "stderr") == 0 && f->err != NULL &&
	    f->err->len < 4096)
		envd_data_get(ev, f->err);
	else if (strcmp(type, "exit") == 0 && f->exit == NULL)
		f->exit = cJSON_Duplicate(ev, 1);
}

int
envd_exec_feed(int fd, cJSON *argv, int in, struct buf *err, char **cause)
{
	struct envd_feed	 f = { envd_next_id++, err, NULL };
	cJSON			*req, *ev;
	char			 chunk[256 * 1024];
	ssize_t			 n;
	int			 id, code = -1, eof = 0;
	long			 pid;

	req = cJSON_CreateObject();
	cJSON_AddNumberToObject(req, "id", f.id);
	cJSON_AddStringToObject(req, "op", "exec");
	cJSON_AddItemToObject(req, "argv", argv);
	cJSON_AddBoolToObject(req, "stdin", 1);
	if (frame_write_fd(fd, req) != 0) {
		cJSON_Delete(req);
		*cause = xprintf("envd: write: %s", strerror(errno));
		return -1;
	}
	cJSON_Delete(req);
	if ((ev = envd_wait_id(fd, f.id, NULL, NULL, cause)) == NULL)
		return -1;
	if (json_str(ev, "error") != NULL) {
		*cause = xstrdup(json_str(ev, "error"));
		cJSON_Delete(ev);
		return -1;
	}
	pid = (long)json_num(ev, "pid", 0);
	cJSON_Delete(ev);
	/* One chunk in flight: holt-envd queues at most 1 MiB of input. */
	while (!eof) {
		do
			n = read(in, chunk, sizeof chunk);
		while (n == -1 && errno == EINTR);
		if (n == -1) {
			*cause = xprintf("read: %s", strerror(errno));
			goto out;
		}
		eof = n == 0;
		req = cJSON_CreateObject();
		cJSON_AddNumberToObject(req, "id", id = envd_next_id++);
		cJSON_AddStringToObject(req, "op", "stdin");
		cJSON_AddNumberToObject(req, "pid", (double)pid);
		envd_data_set(req, chunk, (size_t)n);
		if (eof)
			cJSON_AddBoolToObject(req, "eof", 1);
		if (frame_write_fd(fd, req) != 0) {
			cJSON_Delete(req);
			*cause = xprintf("envd: write: %s", strerror(errno));
			goto out;
		}
		cJSON_Delete(req);
		if ((ev = envd_wait_id(fd, id, envd_feed_event, &f, cause)) ==
		    NULL)
			goto out;
		if (json_str(ev, "error") != NULL && f.exit == NULL) {
			*cause = xstrdup(json_str(ev, "error"));
			cJSON_Delete(ev);
			goto out;
		}
		cJSON_Delete(ev);
		if (f.exit != NULL)
			break;
	}
	while (f.exit == NULL) {
		if ((ev = envd_wait_id(fd, f.id, NULL, NULL, cause)) == NULL)
			goto out;
		envd_feed_event(ev, &f);
		cJSON_Delete(ev);
	}
	if (json_num(f.exit, "signal", 0) > 0)
		code = 128 + (int)json_num(f.exit, "signal", 0);
	else
		code = (int)json_num(f.exit, "code", 0);
out:
	cJSON_Delete(f.exit);
	return code;
}

/* The command being drained: its stdout to a descriptor. */
struct envd_drain {
	int		 out;
	int		 failed;	/* a write to out failed */
	struct buf	*err;
};

int
envd_exec_drain(int fd, cJSON *argv, int out, struct buf *err, char **cause)
{
	struct envd_drain	 d = { out, 0, err };
	struct buf		 data;
	cJSON			*req, *ev;
	const char		*type;
	int			 id = envd_next_id++, code = -1;

	req = cJSON_CreateObject();
	cJSON_AddNumberToObject(req, "id", id);
	cJSON_AddStringToObject(req, "op", "exec");
	cJSON_AddItemToObject(req, "argv", argv);
	if (frame_write_fd(fd, req) != 0) {
		cJSON_Delete(req);
		*cause = xprintf("envd: write: %s", strerror(errno));
		return -1;
	}
	cJSON_Delete(req);
	buf_init(&data);
	for (;;) {
		if ((ev = envd_wait_id(fd, id, NULL, NULL, cause)) == NULL)
			break;
		type = json_str(ev, "event");
		if (json_str(ev, "error") != NULL) {
			*cause = xstrdup(json_str(ev, "error"));
			cJSON_Delete(ev);
			break;
		}
		if (type != NULL && strcmp(type, "stdout") == 0) {
			buf_reset(&data);
			if (envd_data_get(ev, &data) != 0 || (!d.failed &&
			    file_write_all(d.out, data.data, data.len) != 0))
				d.failed = 1;
		} else if (type != NULL && strcmp(type, "stderr") == 0 &&
		    d.err != NULL && d.err->len < 4096)
			envd_data_get(ev, d.err);
		else if (type != NULL && strcmp(type, "exit") == 0) {
			if (json_num(ev, "signal", 0) > 0)
				code = 128 + (int)json_num(ev, "signal", 0);
			else
				code = (int)json_num(ev, "code", 0);
			cJSON_Delete(ev);
			break;
		}
		cJSON_Delete(ev);
	}
	buf_release(&data);
	if (code != -1 && d.failed) {
		*cause = xprintf("writing its output: %s", strerror(errno));
		code = -1;
	}
	return code;
}
