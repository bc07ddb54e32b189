/*
 * sse.h: an incremental parser of Server-Sent Events (the WHATWG "event
 * stream" format), which both model providers stream their replies in.
 *
 * Feed it bytes as they arrive, cut anywhere; it calls back once per
 * complete event (a blank line ends an event). Lines may end in "\n",
 * "\r\n" or "\r", also when the "\r" and "\n" arrive in different chunks.
 * "data:" lines of one event are joined with "\n"; ":" lines are comments;
 * "event:", "id:" and "retry:" are kept as the standard says. A line or an
 * event longer than the bounds given to sse_new is an error, so a hostile
 * server cannot make us buffer without end.
 *
 * Call order: sse_new, sse_feed any number of times, sse_finish at the end
 * of the stream, sse_free. The event passed to the callback is borrowed and
 * valid only during the callback.
 */
#ifndef SSE_H
#define SSE_H

#include <stddef.h>

struct sse_event {
	const char	*type;		/* "event:" or "message" */
	const char	*data;		/* NUL-terminated, data_len bytes */
	size_t		 data_len;
	const char	*id;		/* last "id:" seen, "" if none */
	long		 retry;		/* last valid "retry:", -1 if none */
};

/*
 * Return 0 to go on; anything else stops sse_feed, which returns that
 * value (the callback sets its own error message).
 */
typedef int (*sse_cb)(void *arg, const struct sse_event *);

struct sse_parser;

/*
 * Default bounds. Some servers send a whole tool call (a file's content)
 * in one event, so they are as large as a frame may be.
 */
#define SSE_MAX_LINE	(16U * 1024 * 1024)
#define SSE_MAX_EVENT	(16U * 1024 * 1024)

struct sse_parser *sse_new(size_t max_line, size_t max_event, sse_cb, void *);
void	 sse_free(struct sse_parser *);
/* 0 ok; -1 bounds exceeded (*cause set); else what the callback returned. */
int	 sse_feed(struct sse_parser *, const void *, size_t, char **cause);
/*
 * End of stream. Returns 1 if an event or line was left unfinished (the
 * standard discards it; callers may want to call the stream truncated),
 * 0 if the stream ended cleanly between events.
 */
int	 sse_finish(struct sse_parser *);
unsigned long sse_events(struct sse_parser *);	/* events dispatched so far */

#endif
