/*
 * sandbox-ssh.c: the ssh provider (DESIGN 17). The sandbox is a local one
 * of holt on another machine, HOST, made and driven by that machine's
 * holt (holt.conf's ssh_holt, "holt" on the remote PATH by default)
 * through the user's own OpenSSH client (holt.conf's ssh_command, "ssh"):
 * their ~/.ssh/config, keys, agent and ProxyJump apply. Every ssh shares
 * one connection per destination, a ControlMaster whose socket is in
 * holt's run directory and which outlives us for ControlPersist.
 *
 * The record here (data/sandboxes/<id>/meta.json) keeps "provider":
 * "ssh:[user@]host" and "remote_id", the sandbox's id over there. The
 * lifecycle is the remote's `holt sandbox start|stop|...`; the state is
 * its `holt sandbox ls --json`; a connection to envd is a relay process
 * (sandbox-ssh-relay.c) in front of `ssh HOST holt sandbox bridge ID`,
 * which re-makes a dropped connection and re-joins running commands.
 * A host that cannot be reached is an error naming it, and the state
 * "unreachable": never a sandbox here instead.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "sandbox.h"
#include "sandbox-local.h"
#include "sandbox-provider.h"
#include "sandbox-ssh.h"

#define SSH_OUT_MAX	(4U * 1024 * 1024)	/* what a remote holt prints */
/*
 * A state asked of the host is kept this long in the record's run/state:
 * the server asks it for every status it sends, and each ask is an ssh
 * session (a login shell on the host: from a few to hundreds of ms).
 */
#define SSH_STATE_TTL_MS	2000

/* user@host: no option ("-..."), no space, no shell character. */
static int
ssh_check(const char *arg, char **cause)
{
	size_t	 i;

	if (arg == NULL || *arg == '\0') {
		*cause = xstrdup("provider 'ssh': say which host, "
		    "ssh:[USER@]HOST");
		return -1;
	}
	if (*arg == '-' || *arg == '@')
		goto bad;
	for (i = 0; arg[i] != '\0'; i++) {
		if (!((arg[i] >= 'a' && arg[i] <= 'z') || (arg[i] >= 'A' &&
		    arg[i] <= 'Z') || (arg[i] >= '0' && arg[i] <= '9') ||
		    strchr("-_.@:[]%", arg[i]) != NULL))
			goto bad;
	}
	return 0;
bad:
	*cause = xprintf("provider 'ssh:%s': not a [USER@]HOST", arg);
	return -1;
}

/*
 * The ControlPath: a short name (sun_path holds 108 bytes, and ssh adds
 * a suffix while it makes the socket) from a hash of the destination.
 */
static char *
control_path(const char *dest)
{
	struct sha256	 h;
	unsigned char	 md[32];
	char		 name[32], *dir, *path;

	sha256_init(&h);
	sha256_update(&h, dest, strlen(dest));
	sha256_final(&h, md);
	snprintf(name, sizeof name, "ssh-%02x%02x%02x%02x%02x%02x", md[0],
	    md[1], md[2], md[3], md[4], md[5]);
	dir = xstrdup(paths_run_dir());
	if (strlen(dir) + strlen(name) + 20 > 100) {
		/* A deep HOLT_HOME: a private directory under /tmp. */
		free(dir);
		dir = xprintf("/tmp/holt-ssh-%lu", (unsigned long)getuid());
		if (mkdir(dir, 0700) != 0 && errno != EEXIST)
			log_warn("%s", dir);
	}
	path = paths_join(dir, name);
	free(dir);
	return path;
}

static void
argv_add(char ***argv, size_t *n, const char *s)
{
	*argv = xreallocarray(*argv, *n + 2, sizeof **argv);
	(*argv)[(*n)++] = xstrdup(s);
	(*argv)[*n] = NULL;
}

/*
 * ssh_command's words, the multiplexing options, the destination, then
 * ssh_holt and the remote holt's arguments as one command line (the
 * remote's shell splits it: our arguments are ids and flags, no quoting
 * needed).
 */
char **
sandbox_ssh_argv(const char *dest, const char *remote)
{
	char		**argv = NULL, *words, *w, *save, *cp, *cmd;
	size_t		  n = 0;

	words = xstrdup(*config_get("ssh_command") != '\0' ?
	    config_get("ssh_command") : "ssh");
	for (w = strtok_r(words, " \t", &save); w != NULL;
	    w = strtok_r(NULL, " \t", &save))
		argv_add(&argv, &n, w);
	free(words);
	cp = control_path(dest);
	argv_add(&argv, &n, "-T");
	argv_add(&argv, &n, "-oControlMaster=auto");
	w = xprintf("-oControlPath=%s", cp);
	argv_add(&argv, &n, w);
	free(w);
	free(cp);
	argv_add(&argv, &n, "-oControlPersist=600");
	argv_add(&argv, &n, "-oBatchMode=yes");
	argv_add(&argv, &n, "-oConnectTimeout=10");
	argv_add(&argv, &n, "-oServerAliveInterval=15");
	argv_add(&argv, &n, "-oLogLevel=ERROR");
	argv_add(&argv, &n, dest);
	cmd = xprintf("%s %s", *config_get("ssh_holt") != '\0' ?
	    config_get("ssh_holt") : "holt", remote);
	argv_add(&argv, &n, cmd);
	free(cmd);
	return argv;
}

/* The last non-empty line of what ssh or the remote holt said. */
char *
sandbox_ssh_last_line(const char *text)
{
	const char	*end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == '\r' ||
	    end[-1] == ' '))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	if (strncmp(start, "holt: ", 6) == 0)
		start += 6;
	return start == end ? xstrdup("no message") :
	    xprintf("%.*s", (int)(end - start), start);
}

/*
 * Run `ssh DEST ssh_holt REMOTE`, collecting stdout in out (may be
 * NULL). 0 if the remote holt exited 0; else -1, *cause naming the host:
 * ssh's own failure (255) is "cannot reach", the remote holt's is its
 * message. *unreachable is set for the former.
 */
static int
ssh_run(const char *dest, const char *remote, struct buf *out,
    int *unreachable, char **cause)
{
	char		**argv, buf[8192], *line;
	int		  po[2] = { -1, -1 }, pe[2] = { -1, -1 }, status = 0;
	int		  null, open_fds = 2, ign;
	struct buf	  err = BUF_INIT, dummy = BUF_INIT;
	struct pollfd	  pfd[2];
	struct sigaction  sa, old;
	pid_t		  pid;
	ssize_t		  n;

	if (unreachable != NULL)
		*unreachable = 0;
	if (out == NULL)
		out = &dummy;
	if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
		*cause = xprintf("ssh:%s: pipe: %s", dest, strerror(errno));
		close(po[0]);
		close(po[1]);
		return -1;
	}
	/* Its status is needed: not reaped for us (forward ignores them). */
	sigaction(SIGCHLD, NULL, &old);
	if ((ign = old.sa_handler == SIG_IGN)) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = SIG_DFL;
		sigaction(SIGCHLD, &sa, NULL);
	}
	argv = sandbox_ssh_argv(dest, remote);
	if ((pid = fork()) == -1) {
		*cause = xprintf("ssh:%s: fork: %s", dest, strerror(errno));
		close(po[0]);
		close(po[1]);
		close(pe[0]);
		close(pe[1]);
		strv_free(argv);
		if (ign)
			sigaction(SIGCHLD, &old, NULL);
		return -1;
	}
	if (pid == 0) {
		null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		dprintf(2, "%s: %s\n", argv[0], strerror(errno));
		_exit(255);
	}
	close(po[1]);
	close(pe[1]);
	pfd[0].fd = po[0];
	pfd[1].fd = pe[0];
	while (open_fds > 0) {
		pfd[0].events = pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			fatal("poll");
		}
		for (int i = 0; i < 2; i++) {
			if (pfd[i].fd == -1 || pfd[i].revents == 0)
				continue;
			n = read(pfd[i].fd, buf, sizeof buf);
			if (n <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open_fds--;
				continue;
			}
			if (i == 0 && out->len < SSH_OUT_MAX)
				buf_add(out, buf, (size_t)n);
			else if (i == 1 && err.len < 65536)
				buf_add(&err, buf, (size_t)n);
		}
	}
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (ign)
		sigaction(SIGCHLD, &old, NULL);
	strv_free(argv);
	buf_release(&dummy);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		buf_release(&err);
		return 0;
	}
	line = sandbox_ssh_last_line(buf_str(&err));
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 255) {
		if (unreachable != NULL)
			*unreachable = 1;
		*cause = xprintf("ssh:%s: cannot reach the host: %s", dest,
		    line);
	} else if (WEXITSTATUS(status) == 127)
		*cause = xprintf("ssh:%s: %s (is holt installed there? "
		    "ssh_holt in holt.conf says how to run it)", dest, line);
	else
		*cause = xprintf("ssh:%s: %s", dest, line);
	free(line);
	buf_release(&err);
	return -1;
}

static const char *
remote_id(struct sandbox *sb)
{
	const char	*id = json_str(sandbox_meta(sb), "remote_id");

	return id != NULL && sandbox_is_id(id) ? id : "sbx-000000000000";
}

/* The remote holt's cmd for sb; *cause names sb. */
static int
remote_run(struct sandbox *sb, const char *cmd, struct buf *out,
    char **cause)
{
	char	*why = NULL;

	if (ssh_run(sandbox_provider_arg(sb), cmd, out, NULL, &why) == 0)
		return 0;
	*cause = xprintf("sandbox '%s': %s", sandbox_id(sb), why);
	free(why);
	return -1;
}

/* The state noted in run/state if it is younger than max_ms (-1: any). */
static int
state_kept(struct sandbox *sb, enum sandbox_state *st, int max_ms)
{
	char		*path = paths_join(sandbox_dir(sb), "run/state"), *s;
	struct stat	 sst;
	struct timespec	 now;
	int64_t		 age;
	int		 i, rc = -1;

	if (stat(path, &sst) == 0) {
		clock_gettime(CLOCK_REALTIME, &now);
		age = ((int64_t)now.tv_sec - sst.st_mtim.tv_sec) * 1000 +
		    ((int64_t)now.tv_nsec - sst.st_mtim.tv_nsec) / 1000000;
		if ((max_ms < 0 || (age >= 0 && age < max_ms)) &&
		    (s = file_read(path, NULL, 64)) != NULL) {
			for (i = SANDBOX_RUNNING; i <= SANDBOX_UNREACHABLE; i++)
				if (strcmp(s, sandbox_state_name(i)) == 0) {
					*st = (enum sandbox_state)i;
					rc = 0;
				}
			free(s);
		}
	}
	free(path);
	return rc;
}

static void
state_note(struct sandbox *sb, enum sandbox_state st)
{
	char		*path = paths_join(sandbox_dir(sb), "run/state");
	const char	*s = sandbox_state_name(st);

	if (sandbox_write_run(path, s, strlen(s)) != 0)
		log_debug("%s: %s", path, strerror(errno));
	free(path);
}

/* `holt sandbox VERB REMOTE_ID` over there; then it is in state after. */
static int
remote_verb(struct sandbox *sb, const char *verb, enum sandbox_state after,
    char **cause)
{
	char	*cmd = xprintf("sandbox %s %s", verb, remote_id(sb));
	int	 rc = remote_run(sb, cmd, NULL, cause);

	free(cmd);
	if (rc == 0)
		state_note(sb, after);
	return rc;
}

static int
ssh_create(const char *dir, cJSON *meta, const struct sandbox_opts *o,
    char **cause)
{
	const char	*spec = json_str(meta, "provider"), *dest;
	char		*cmd, *path, *rid;
	struct buf	 out = BUF_INIT;
	int		 rc;

	dest = strchr(spec, ':') + 1;
	if (o->image != NULL) {
		*cause = xprintf("--image: not on provider '%s' (the host's "
		    "holt makes it from its own files)", spec);
		return -1;
	}
	path = paths_join(dir, "run");
	if (mkdir(path, 0700) != 0) {
		*cause = xprintf("%s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	free(path);
	if (o->fork_of != NULL && o->fork_at > 0)
		cmd = xprintf("sandbox fork %s --at %lld", remote_id(o->fork_of),
		    o->fork_at);
	else if (o->fork_of != NULL)
		cmd = xprintf("sandbox fork %s", remote_id(o->fork_of));
	else
		cmd = xprintf("sandbox create --net %s --memory %lld --pids %d "
		    "--idle-pause %lldms", sandbox_net_name(o->net), o->memory,
		    o->pids, o->idle_pause_ms);
	rc = ssh_run(dest, cmd, &out, NULL, cause);
	free(cmd);
	if (rc != 0) {
		buf_release(&out);
		return -1;
	}
	rid = sandbox_ssh_last_line(buf_str(&out));
	buf_release(&out);
	if (!sandbox_is_id(rid)) {
		*cause = xprintf("ssh:%s: the remote holt said '%s', not a "
		    "sandbox id", dest, rid);
		free(rid);
		return -1;
	}
	cJSON_AddStringToObject(meta, "remote_id", rid);
	free(rid);
	/*
	 * The host's holt pauses it when idle (its server, if one runs):
	 * only it sees whether a command runs there. Never this one's.
	 */
	cJSON_ReplaceItemInObjectCaseSensitive(meta, "idle_pause_ms",
	    cJSON_CreateNumber(0));
	return 0;
}

static int
ssh_start(struct sandbox *sb, char **cause)
{
	return remote_verb(sb, "start", SANDBOX_RUNNING, cause);
}

static int
ssh_stop(struct sandbox *sb, char **cause)
{
	return remote_verb(sb, "stop", SANDBOX_STOPPED, cause);
}

static int
ssh_pause(struct sandbox *sb, char **cause)
{
	return remote_verb(sb, "pause", SANDBOX_PAUSED, cause);
}

static int
ssh_resume(struct sandbox *sb, char **cause)
{
	return remote_verb(sb, "resume", SANDBOX_RUNNING, cause);
}

static int
ssh_rm(struct sandbox *sb, char **cause)
{
	if (json_str(sandbox_meta(sb), "remote_id") == NULL)
		return 0;	/* never made over there */
	return remote_verb(sb, "rm", SANDBOX_STOPPED, cause);
}

static enum sandbox_state
ssh_state(struct sandbox *sb)
{
	struct buf		 out = BUF_INIT;
	char			*cause = NULL;
	int			 unreachable;
	cJSON			*arr, *o;
	enum sandbox_state	 st = SANDBOX_STOPPED;
	const char		*s;

	if (state_kept(sb, &st, SSH_STATE_TTL_MS) == 0)
		return st;
	if (ssh_run(sandbox_provider_arg(sb), "sandbox ls --json", &out,
	    &unreachable, &cause) != 0) {
		log_debug("sandbox '%s': %s", sandbox_id(sb), cause);
		free(cause);
		buf_release(&out);
		st = unreachable ? SANDBOX_UNREACHABLE : SANDBOX_STOPPED;
		state_note(sb, st);
		return st;
	}
	arr = cJSON_Parse(buf_str(&out));
	buf_release(&out);
	cJSON_ArrayForEach(o, arr) {
		if ((s = json_str(o, "id")) == NULL ||
		    strcmp(s, remote_id(sb)) != 0)
			continue;
		s = json_str(o, "state");
		if (s != NULL && strcmp(s, "running") == 0)
			st = SANDBOX_RUNNING;
		else if (s != NULL && strcmp(s, "paused") == 0)
			st = SANDBOX_PAUSED;
	}
	cJSON_Delete(arr);
	state_note(sb, st);
	return st;
}

/*
 * Ask the host again in a detached process, which notes the answer in
 * run/state; one at a time (run/state.busy, taken from one that died
 * after a minute). Only the log file's descriptor is kept: the caller's
 * sockets and locks are not held while ssh waits on the host.
 */
static void
state_refresh(struct sandbox *sb)
{
	char		*lock = paths_join(sandbox_dir(sb), "run/state.busy");
	struct stat	 st;
	int		 fd, logfd;
	pid_t		 pid;

	fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd == -1 && errno == EEXIST && stat(lock, &st) == 0 &&
	    time(NULL) - st.st_mtime > 60) {
		unlink(lock);
		fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	if (fd == -1) {
		free(lock);
		return;
	}
	close(fd);
	if ((pid = fork()) == 0) {
		if (fork() != 0)
			_exit(0);
		setsid();
		if ((fd = open("/dev/null", O_RDWR)) != -1) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		if ((logfd = log_fileno()) > 3)
			close_range(3, (unsigned int)logfd - 1, 0);
		close_range(logfd >= 3 ? (unsigned int)logfd + 1 : 3, ~0U, 0);
		ssh_state(sb);
		unlink(lock);
		_exit(0);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			;
	else
		unlink(lock);
	free(lock);
}

static enum sandbox_state
ssh_state_known(struct sandbox *sb)
{
	enum sandbox_state	 st;

	if (state_kept(sb, &st, SSH_STATE_TTL_MS) == 0)
		return st;
	if (state_kept(sb, &st, -1) != 0)
		return ssh_state(sb);	/* never asked: now */
	state_refresh(sb);
	return st;
}

static int
ssh_checkpoint(struct sandbox *sb, struct checkpoint_info *ci, char **cause)
{
	struct buf	 out = BUF_INIT;
	char		*cmd;
	cJSON		*o = NULL;
	const char	*s;
	int		 rc;

	cmd = xprintf("sandbox checkpoint %s --json", remote_id(sb));
	rc = remote_run(sb, cmd, &out, cause);
	free(cmd);
	if (rc == 0 && ((o = cJSON_Parse(buf_str(&out))) == NULL ||
	    json_num(o, "checkpoint", 0) <= 0)) {
		*cause = xprintf("sandbox '%s': ssh:%s: the remote holt's "
		    "checkpoint said '%s'", sandbox_id(sb),
		    sandbox_provider_arg(sb), buf_str(&out));
		rc = -1;
	}
	buf_release(&out);
	if (rc != 0) {
		cJSON_Delete(o);
		return -1;
	}
	memset(ci, 0, sizeof *ci);
	ci->id = (long long)json_num(o, "checkpoint", 0);
	if ((s = json_str(o, "commit")) != NULL)
		xstrlcpy(ci->commit, s, sizeof ci->commit);
	ci->time_ms = (uint64_t)json_num(o, "time_ms", 0);
	ci->files = (uint64_t)json_num(o, "files", 0);
	ci->changed = (uint64_t)json_num(o, "changed", 0);
	ci->bytes = (uint64_t)json_num(o, "bytes", 0);
	cJSON_Delete(o);
	return 0;
}

static int
ssh_restore(struct sandbox *sb, long long id, char **cause)
{
	char	*cmd = xprintf("sandbox restore %s %lld", remote_id(sb), id);
	int	 rc = remote_run(sb, cmd, NULL, cause);

	free(cmd);
	return rc;
}

static int
ssh_connect(struct sandbox *sb, int mode, char **cause)
{
	char			**argv, *cmd;
	int			  fd;
	enum sandbox_state	  st;

	cmd = xprintf("sandbox bridge %s", remote_id(sb));
	argv = sandbox_ssh_argv(sandbox_provider_arg(sb), cmd);
	free(cmd);
	fd = sandbox_ssh_relay(sandbox_id(sb), sandbox_provider_spec(sb),
	    argv, mode, cause);
	strv_free(argv);
	/* The host's holt names its own id: say it as the user knows it. */
	if (fd != -1)
		return fd;
	if (state_kept(sb, &st, SSH_STATE_TTL_MS) != 0)
		st = ssh_state(sb);
	if (st == SANDBOX_STOPPED || st == SANDBOX_PAUSED) {
		free(*cause);
		*cause = xprintf("sandbox '%s' is %s (holt sandbox %s %s)",
		    sandbox_id(sb), sandbox_state_name(st), st ==
		    SANDBOX_PAUSED ? "resume" : "start", sandbox_id(sb));
	}
	return fd;
}

const struct sandbox_provider sandbox_ssh_provider = {
	.name = "ssh",
	.check = ssh_check,
	.create = ssh_create,
	.start = ssh_start,
	.stop = ssh_stop,
	.pause = ssh_pause,
	.resume = ssh_resume,
	.rm = ssh_rm,
	.state = ssh_state,
	.state_known = ssh_state_known,
	.connect = ssh_connect,
	.checkpoint = ssh_checkpoint,
	.restore = ssh_restore,
};
