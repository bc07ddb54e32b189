/*
 * tree-sandbox.c: the file tree's way to a sandbox whose files are not on
 * this machine (any provider but local: ssh, e2b). Its directories are
 * listed, and its files read, through envd's "list" and "read" over one
 * connection, made when first needed and made again when it has ended
 * (the ssh provider's relay re-makes a dropped ssh connection under it).
 * The changes come, as for a local sandbox, from the server's "files"
 * messages, which envd's watch feeds.
 *
 * Calls block: one directory (or file) at a time, as the user unfolds
 * (or opens) it. None is made while the server says the sandbox is not
 * running (stopped, paused, its host unreachable), so a host that is down
 * does not hold the screen.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"
#include "ui.h"

struct tree_sandbox {
	char	*id;
	int	 fd;
	int	 running;	/* as the server last said */
};

struct tree_sandbox *
tree_sandbox_open(const char *id)
{
	struct tree_sandbox	*ts;
	struct sandbox		*sb;
	char			*cause = NULL;
	int			 local;

	if (id == NULL || (sb = sandbox_open(id, &cause)) == NULL) {
		free(cause);
		return NULL;
	}
	local = strcmp(sandbox_provider_spec(sb), "local") == 0;
	sandbox_free(sb);
	if (local)
		return NULL;
	ts = xcalloc(1, sizeof *ts);
	ts->id = xstrdup(id);
	ts->fd = -1;
	ts->running = 1;
	return ts;
}

/* The server's word on its state; 1 if it runs again. */
int
tree_sandbox_running(struct tree_sandbox *ts, int running)
{
	int	 again = running && !ts->running;

	ts->running = running;
	return again;
}

void
tree_sandbox_free(struct tree_sandbox *ts)
{
	if (ts == NULL)
		return;
	if (ts->fd != -1)
		close(ts->fd);
	free(ts->id);
	free(ts);
}

/*
 * The connection, made again when the last one has ended: nothing else is
 * sent on it, so an idle one that is readable has been closed.
 */
static int
tree_sandbox_connect(struct tree_sandbox *ts, char **cause)
{
	struct sandbox	*sb;
	struct pollfd	 pfd;

	if (ts->fd != -1) {
		pfd.fd = ts->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 0) == 0)
			return 0;
		close(ts->fd);
		ts->fd = -1;
	}
	if (!ts->running) {
		*cause = xstrdup("the sandbox is not running");
		return -1;
	}
	if ((sb = sandbox_open(ts->id, cause)) == NULL)
		return -1;
	ts->fd = sandbox_connect(sb, cause);
	sandbox_free(sb);
	return ts->fd == -1 ? -1 : 0;
}

cJSON *
tree_sandbox_list(struct tree_sandbox *ts, const char *path, char **cause)
{
	if (tree_sandbox_connect(ts, cause) != 0)
		return NULL;
	return envd_list(ts->fd, path, 1, cause);
}

char *
tree_sandbox_read(struct tree_sandbox *ts, const char *path, size_t *lenp,
    char **cause)
{
	if (tree_sandbox_connect(ts, cause) != 0)
		return NULL;
	return envd_read_file(ts->fd, path, lenp, cause);
}
