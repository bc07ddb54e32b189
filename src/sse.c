/*
 * sse.c: incremental Server-Sent Events parser (see sse.h).
 *
 * Bytes are copied once into the current line; a line is interpreted as
 * soon as its end is seen. Memory is bounded by max_line + max_event.
 */
#include <stdlib.h>
#include <string.h>

#include "holt.h"
#include "sse.h"

struct sse_parser {
	size_t		 max_line;
	size_t		 max_event;
	sse_cb		 cb;
	void		*arg;

	struct buf	 line;
	struct buf	 data;
	struct buf	 type;
	struct buf	 id;
	long		 retry;
	int		 last_cr;	/* previous chunk ended in "\r" */
	int		 at_start;	/* still looking for a byte-order mark */
	size_t		 bom_n;		/* BOM bytes matched so far */
	unsigned long	 events;
};

static const char sse_bom[] = "\xef\xbb\xbf";

struct sse_parser *
sse_new(size_t max_line, size_t max_event, sse_cb cb, void *arg)
{
	struct sse_parser	*p;

	p = xcalloc(1, sizeof *p);
	p->max_line = max_line != 0 ? max_line : SSE_MAX_LINE;
	p->max_event = max_event != 0 ? max_event : SSE_MAX_EVENT;
	p->cb = cb;
	p->arg = arg;
	buf_init(&p->line);
	buf_init(&p->data);
	buf_init(&p->type);
	buf_init(&p->id);
	p->retry = -1;
	p->at_start = 1;
	return p;
}

void
sse_free(struct sse_parser *p)
{
	if (p == NULL)
		return;
	buf_release(&p->line);
	buf_release(&p->data);
	buf_release(&p->type);
	buf_release(&p->id);
	free(p);
}

unsigned long
sse_events(struct sse_parser *p)
{
	return p->events;
}

static int
sse_dispatch(struct sse_parser *p)
{
	struct sse_event	 ev;
	int			 rc;

	if (p->data.len == 0) {
		/* No data field: the standard drops the event. */
		buf_reset(&p->type);
		return 0;
	}
	p->data.len--;			/* the last "\n" added by data: */
	p->data.data[p->data.len] = '\0';
	ev.type = p->type.len != 0 ? buf_str(&p->type) : "message";
	ev.data = buf_str(&p->data);
	ev.data_len = p->data.len;
	ev.id = buf_str(&p->id);
	ev.retry = p->retry;
	p->events++;
	rc = p->cb(p->arg, &ev);
	buf_reset(&p->data);
	buf_reset(&p->type);
	return rc;
}

static int
sse_line(struct sse_parser *p, const char *line, size_t len, char **cause)
{
	const char	*colon, *value;
	size_t		 flen, vlen, i;

	if (len == 0)
		return sse_dispatch(p);
	if (line[0] == ':')
		return 0;		/* comment */
	if ((colon = memchr(line, ':', len)) != NULL) {
		flen = colon - line;
		value = colon + 1;
		vlen = len - flen - 1;
		if (vlen > 0 && *value == ' ') {
			value++;
			vlen--;
		}
	} else {
		flen = len;
		value = "";
		vlen = 0;
	}

	if (flen == 5 && memcmp(line, "event", 5) == 0) {
		buf_reset(&p->type);
		buf_add(&p->type, value, vlen);
	} else if (flen == 4 && memcmp(line, "data", 4) == 0) {
		if (p->data.len + vlen + 1 > p->max_event) {
			*cause = xprintf("event stream: event longer than %zu "
			    "bytes", p->max_event);
			return -1;
		}
		buf_add(&p->data, value, vlen);
		buf_addc(&p->data, '\n');
	} else if (flen == 2 && memcmp(line, "id", 2) == 0) {
		if (memchr(value, '\0', vlen) == NULL) {
			buf_reset(&p->id);
			buf_add(&p->id, value, vlen);
		}
	} else if (flen == 5 && memcmp(line, "retry", 5) == 0) {
		if (vlen == 0 || vlen > 9)
			return 0;
		for (i = 0; i < vlen; i++) {
			if (value[i] < '0' || value[i] > '9')
				return 0;
		}
		p->retry = strtol(value, NULL, 10);
	}
	/* Other fields are ignored, as the standard says. */
	return 0;
}

int
sse_feed(struct sse_parser *p, const void *buf, size_t len, char **cause)
{
	const char	*s = buf, *end = s + len, *q;
	int		 rc;

	while (p->at_start && s < end) {
		if ((unsigned char)*s == (unsigned char)sse_bom[p->bom_n]) {
			s++;
			if (++p->bom_n == 3)
				p->at_start = 0;
		} else {
			p->at_start = 0;
			buf_add(&p->line, sse_bom, p->bom_n);
		}
	}

	while (s < end) {
		if (p->last_cr) {
			p->last_cr = 0;
			if (*s == '\n') {
				s++;
				continue;
			}
		}
		for (q = s; q < end && *q != '\r' && *q != '\n'; q++)
			/* nothing */;
		if (p->line.len + (size_t)(q - s) > p->max_line) {
			*cause = xprintf("event stream: line longer than %zu "
			    "bytes", p->max_line);
			return -1;
		}
		buf_add(&p->line, s, q - s);
		if (q == end)
			break;
		if (*q == '\r')
			p->last_cr = 1;
		s = q + 1;
		rc = sse_line(p, p->line.data != NULL ? p->line.data : "",
		    p->line.len, cause);
		buf_reset(&p->line);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
sse_finish(struct sse_parser *p)
{
	return p->line.len != 0 || p->data.len != 0 || p->type.len != 0 ||
	    (p->at_start && p->bom_n != 0);
}
