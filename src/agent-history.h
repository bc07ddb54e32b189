/*
 * agent-history.h: reading a session's conversation from its log at open
 * (DESIGN 7, 14), in memory that does not grow with the log.
 *
 * The log is walked once. Lines of the conversation are not parsed when
 * met: their place in the file is noted, and a compaction drops the notes
 * its summary covers, a /clear those before it (but for the kinds kept:
 * user messages and the like). What is left is parsed at the end, or when a rewind needs the
 * history as it stands, and handed to add in the log's order.
 */
#ifndef AGENT_HISTORY_H
#define AGENT_HISTORY_H

#include "session.h"

struct history_cb {
	int	(*history)(const char *type);	/* in the conversation */
	int	(*kept)(const char *type);	/* kept past a compaction */
	/* Not in it: 1 parse it for note, 0 not (read from l, or unwanted). */
	int	(*other)(void *arg, const struct eventlog_line *l);
	void	(*add)(void *arg, cJSON *ev);	/* takes ev, in order */
	void	(*note)(void *arg, const cJSON *ev);	/* every one parsed */
	uint64_t (*through)(void *arg);		/* after a rewind */
};

int	 history_read(const char *name, struct eventlog *,
	     const struct history_cb *, void *arg, char **warning,
	     char **cause);
/* A step's checkpoint.taken keeps its tool.call's seq and what it got. */
void	 history_step_note(cJSON *ck, const cJSON *call);

#endif
