/*
 * session-fork.c: holt fork (DESIGN 15): a new session with the history of
 * another up to a step, in a new sandbox made from that step's checkpoint
 * (or from the sandbox as it is now). The new log is the old one's events
 * before the step, as they were, then session.forked; nothing of the old
 * session changes.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "sandbox.h"
#include "session.h"

static char *
session_fork_name(const char *from, char **cause)
{
	char	*name, *why = NULL;
	int	 i;

	for (i = 1; i < 1000; i++) {
		name = xprintf("%s-%d", from, i);
		if (session_name_valid(name, &why) != 0) {
			free(name);
			*cause = why;
			return NULL;
		}
		if (!session_exists(name))
			return name;
		free(name);
	}
	*cause = xprintf("session '%s': no free name for a fork; give one "
	    "with -s", from);
	return NULL;
}

char *
session_fork(const char *from, int step, const char *newname, char **cause)
{
	cJSON		*meta = NULL, *events = NULL, *ev, *m;
	const cJSON	*ck;
	struct sandbox	*sbx = NULL, *nsb = NULL;
	struct eventlog	*el;
	struct buf	 log = BUF_INIT;
	char		*name = NULL, *dir = NULL, *path, *warning = NULL, *line;
	char		*now;
	long long	 checkpoint = 0;
	int		 cut, i = 0;

	if ((meta = session_load(from, cause)) == NULL)
		return NULL;
	if ((events = eventlog_read(from, &warning, cause)) == NULL)
		goto fail;
	free(warning);
	cut = cJSON_GetArraySize(events);
	if (step > 0) {
		if ((ck = session_find_step(events, step)) == NULL ||
		    (cut = session_step_index(events, step)) < 0) {
			*cause = xprintf("session '%s': no step %d", from, step);
			goto fail;
		}
		checkpoint = (long long)json_num(ck, "checkpoint", 0);
	}
	if (newname != NULL) {
		if (session_name_valid(newname, cause) != 0)
			goto fail;
		name = xstrdup(newname);
	} else if ((name = session_fork_name(from, cause)) == NULL)
		goto fail;
	/* The directory reserves the name. */
	dir = session_dir(name);
	if (file_mkdir_p(paths_sessions_dir(), 0700) != 0 ||
	    mkdir(dir, 0700) != 0) {
		*cause = errno == EEXIST ? xprintf("session '%s' already "
		    "exists", name) : xprintf("%s: %s", dir, strerror(errno));
		free(dir);
		dir = NULL;
		goto fail;
	}
	if ((sbx = sandbox_open(json_str(meta, "sandbox") != NULL ?
	    json_str(meta, "sandbox") : "", cause)) == NULL)
		goto fail;
	if ((nsb = sandbox_fork(sbx, checkpoint, NULL, cause)) == NULL)
		goto fail;

	cJSON_ArrayForEach(ev, events) {
		if (i++ >= cut)
			break;
		line = json_print(ev);
		buf_adds(&log, line);
		buf_addc(&log, '\n');
		free(line);
	}
	path = paths_join(dir, "events.jsonl");
	if (file_write_atomic(path, log.data != NULL ? log.data : "", log.len,
	    0600) != 0) {
		*cause = xprintf("%s: %s", path, strerror(errno));
		free(path);
		goto fail;
	}
	free(path);
	if ((el = eventlog_open(name, cause)) == NULL)
		goto fail;
	ev = evlog_new("session.forked");
	cJSON_AddStringToObject(ev, "from", from);
	if (step > 0) {
		cJSON_AddNumberToObject(ev, "at_step", step);
		cJSON_AddNumberToObject(ev, "checkpoint", (double)checkpoint);
	}
	cJSON_AddStringToObject(ev, "sandbox", sandbox_id(nsb));
	cJSON_AddStringToObject(ev, "from_sandbox", sandbox_id(sbx));
	eventlog_append(el, ev, 1);
	cJSON_Delete(ev);
	eventlog_close(el);

	m = cJSON_Duplicate(meta, 1);
	cJSON_ReplaceItemInObjectCaseSensitive(m, "name",
	    cJSON_CreateString(name));
	cJSON_ReplaceItemInObjectCaseSensitive(m, "sandbox",
	    cJSON_CreateString(sandbox_id(nsb)));
	now = json_time_now();
	cJSON_ReplaceItemInObjectCaseSensitive(m, "created",
	    cJSON_CreateString(now));
	free(now);
	cJSON_DeleteItemFromObjectCaseSensitive(m, "forked_from");
	cJSON_AddStringToObject(m, "forked_from", from);
	/* session.json last: it is what makes the session exist. */
	if (session_save(name, m, cause) != 0) {
		cJSON_Delete(m);
		goto fail;
	}
	cJSON_Delete(m);
	buf_release(&log);
	free(dir);
	cJSON_Delete(events);
	cJSON_Delete(meta);
	sandbox_free(sbx);
	sandbox_free(nsb);
	return name;
fail:
	if (nsb != NULL) {
		char *c2 = NULL;
		if (sandbox_rm(nsb, &c2) != 0)
			free(c2);
	}
	if (dir != NULL)
		file_rm_rf(dir);
	buf_release(&log);
	free(dir);
	free(name);
	cJSON_Delete(events);
	cJSON_Delete(meta);
	sandbox_free(sbx);
	sandbox_free(nsb);
	return NULL;
}
