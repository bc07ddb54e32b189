/*
 * mcp-stdio.c: an MCP server run on the host (where = host), speaking
 * newline-delimited JSON-RPC on its stdin and stdout.
 *
 * The server gets holt's environment without the keys holt guards (the
 * model providers' and the git tokens, and secret_vars), plus its env
 * key; it runs in its own process group, which stop kills. Its stderr is
 * not the protocol: the last bytes of it are kept to say why it died.
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp-int.h"

#define STDIO_ERR_TAIL	512		/* bytes of stderr kept */

extern char **environ;

struct mcp_stdio {
	pid_t		 pid;
	int		 in_fd;		/* its stdin */
	int		 out_fd;	/* its stdout */
	int		 err_fd;
	struct event	*rev;
	struct event	*wev;
	struct event	*eev;
	struct event	*gone;		/* its output ended: a moment to exit */
	struct buf	 in;		/* from it, a line at a time */
	struct buf	 out;		/* to it, not yet written */
	struct buf	 err;		/* the tail of its stderr */
};

static const char *stdio_guarded[] = {
	"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN",
	"HOLT_GIT_TOKEN", "E2B_API_KEY"
};

static int
stdio_guarded_var(const char *kv)
{
	const char	*extra = config_get("secret_vars");
	char		*name = xstrndup(kv, strcspn(kv, "=")), **w, *cause;
	size_t		 i;
	int		 hit = 0;

	for (i = 0; i < nitems(stdio_guarded) && !hit; i++)
		hit = strcmp(name, stdio_guarded[i]) == 0;
	if (!hit && extra != NULL && (w = mcp_words(extra, &cause)) != NULL) {
		for (i = 0; w[i] != NULL && !hit; i++)
			hit = fnmatch(w[i], name, 0) == 0;
		mcp_words_free(w);
	}
	free(name);
	return hit;
}

/* In the child: the environment it runs with. */
static char **
stdio_env(struct mcp_server *s)
{
	char		**env = NULL;
	size_t		  n = 0, i;
	const cJSON	 *e;
	char		 *name;
	int		  set;

	for (i = 0; environ[i] != NULL; i++) {
		name = xstrndup(environ[i], strcspn(environ[i], "="));
		set = cJSON_GetObjectItemCaseSensitive(s->env, name) != NULL;
		free(name);
		if (set || stdio_guarded_var(environ[i]))
			continue;
		env = xreallocarray(env, n + 2, sizeof *env);
		env[n++] = environ[i];
	}
	cJSON_ArrayForEach(e, s->env) {
		env = xreallocarray(env, n + 2, sizeof *env);
		env[n++] = xprintf("%s=%s", e->string, e->valuestring);
	}
	env = xreallocarray(env, n + 1, sizeof *env);
	env[n] = NULL;
	return env;
}

static void
stdio_gone(struct mcp_server *s, const char *what)
{
	struct mcp_stdio	*st = s->tp;
	char			*why;
	int			 status;

	if (waitpid(st->pid, &status, WNOHANG) == st->pid) {
		st->pid = -1;
		if (WIFEXITED(status))
			why = xprintf("it exited with status %d",
			    WEXITSTATUS(status));
		else
			why = xprintf("it was killed by signal %d",
			    WTERMSIG(status));
	} else
		why = xprintf("it %s", what);
	mcp_server_died(s, why, &st->err);
	free(why);
}

static void
stdio_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mcp_server	*s = arg;
	char			 buf[65536];
	struct timeval		 tv = { 0, 50000 };
	ssize_t			 n;
	int			 i;

	(void)what;
	for (i = 0; i < 16; i++) {
		n = read(fd, buf, sizeof buf);
		if (n > 0) {
			if (mcp_server_feed(s, &((struct mcp_stdio *)s->tp)->in,
			    buf, (size_t)n) != 0)
				return;
			continue;
		}
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		/* A moment for it to exit, so its status can be told. */
		event_del(((struct mcp_stdio *)s->tp)->rev);
		evtimer_add(((struct mcp_stdio *)s->tp)->gone, &tv);
		return;
	}
}

static void
stdio_gone_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	stdio_gone(arg, "closed its output");
}

static void
stdio_err_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mcp_stdio	*st = ((struct mcp_server *)arg)->tp;
	char			 buf[4096];
	ssize_t			 n;

	(void)what;
	if ((n = read(fd, buf, sizeof buf)) <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			event_del(st->eev);
		return;
	}
	buf_add(&st->err, buf, (size_t)n);
	if (st->err.len > STDIO_ERR_TAIL)
		buf_remove_front(&st->err, st->err.len - STDIO_ERR_TAIL);
}

static int
stdio_flush(struct mcp_server *s)
{
	struct mcp_stdio	*st = s->tp;
	ssize_t			 n;

	while (st->out.len > 0) {
		n = write(st->in_fd, st->out.data, st->out.len);
		if (n > 0) {
			buf_remove_front(&st->out, (size_t)n);
			continue;
		}
		if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
			event_add(st->wev, NULL);
			return 0;
		}
		return -1;
	}
	return 0;
}

static void
stdio_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mcp_server	*s = arg;

	(void)fd;
	(void)what;
	if (stdio_flush(s) != 0)
		stdio_gone(s, "closed its input");
}

static int
stdio_start(struct mcp_server *s, char **cause)
{
	struct mcp_stdio	*st;
	int			 i[2], o[2], e[2];
	pid_t			 pid;
	char			**env;

	if (pipe2(i, O_CLOEXEC) != 0 || pipe2(o, O_CLOEXEC) != 0 ||
	    pipe2(e, O_CLOEXEC) != 0)
		fatal("pipe2");
	if ((pid = fork()) == -1) {
		*cause = xprintf("fork: %s", strerror(errno));
		close(i[0]); close(i[1]); close(o[0]); close(o[1]);
		close(e[0]); close(e[1]);
		return -1;
	}
	if (pid == 0) {
		setsid();
		signal(SIGPIPE, SIG_DFL);
		dup2(i[0], 0);
		dup2(o[1], 1);
		dup2(e[1], 2);
		env = stdio_env(s);
		execvpe(s->argv[0], s->argv, env);
		dprintf(2, "cannot run '%s': %s\n", s->argv[0],
		    strerror(errno));
		_exit(127);
	}
	close(i[0]);
	close(o[1]);
	close(e[1]);
	st = xcalloc(1, sizeof *st);
	st->pid = pid;
	st->in_fd = i[1];
	st->out_fd = o[0];
	st->err_fd = e[0];
	file_set_nonblock(st->in_fd);
	file_set_nonblock(st->out_fd);
	file_set_nonblock(st->err_fd);
	st->rev = event_new(s->base, st->out_fd, EV_READ | EV_PERSIST,
	    stdio_read_cb, s);
	st->wev = event_new(s->base, st->in_fd, EV_WRITE, stdio_write_cb, s);
	st->eev = event_new(s->base, st->err_fd, EV_READ | EV_PERSIST,
	    stdio_err_cb, s);
	st->gone = evtimer_new(s->base, stdio_gone_cb, s);
	event_add(st->rev, NULL);
	event_add(st->eev, NULL);
	s->tp = st;
	return 0;
}

static int
stdio_send(struct mcp_server *s, const char *msg, size_t len, char **cause)
{
	struct mcp_stdio	*st = s->tp;

	if (st->out.len > MCP_MESSAGE_MAX) {
		*cause = xstrdup("it does not read its input");
		return -1;
	}
	buf_add(&st->out, msg, len);
	buf_addc(&st->out, '\n');
	if (stdio_flush(s) != 0) {
		*cause = xprintf("writing to it: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void
stdio_stop(struct mcp_server *s)
{
	struct mcp_stdio	*st = s->tp;

	s->tp = NULL;
	if (st == NULL)
		return;
	if (st->pid > 0) {
		kill(-st->pid, SIGKILL);
		kill(st->pid, SIGKILL);
		while (waitpid(st->pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	event_free(st->rev);
	event_free(st->wev);
	event_free(st->eev);
	event_free(st->gone);
	close(st->in_fd);
	close(st->out_fd);
	close(st->err_fd);
	buf_release(&st->in);
	buf_release(&st->out);
	buf_release(&st->err);
	free(st);
}

const struct mcp_transport mcp_stdio_transport = {
	"stdio", stdio_start, stdio_send, stdio_stop
};
