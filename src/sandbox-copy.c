/*
 * sandbox-copy.c: the workspace of a sandbox on another machine (any
 * provider but local) copied in and out as a tar stream through envd, so
 * that what holt does on this machine's copy (the repository's import;
 * diff, commit and pull requests) sees what the sandbox has.
 *
 * Out is the dangerous way: the archive is made by the sandbox, that is
 * by the agent, so it is unpacked by tar in a bubblewrap jail in which the
 * whole system is read-only but dir: no link or name in it can make tar
 * write anywhere else. The copy is then what the local provider's
 * workspace/ always is: the agent's files, which holt's git code reads
 * as hostile.
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"

static cJSON *
tar_argv(const char *mode)
{
	cJSON	*argv = cJSON_CreateArray();

	cJSON_AddItemToArray(argv, cJSON_CreateString("tar"));
	cJSON_AddItemToArray(argv, cJSON_CreateString(mode));
	cJSON_AddItemToArray(argv, cJSON_CreateString("-"));
	cJSON_AddItemToArray(argv, cJSON_CreateString("-C"));
	cJSON_AddItemToArray(argv, cJSON_CreateString("/workspace"));
	if (strcmp(mode, "-cf") == 0)
		cJSON_AddItemToArray(argv, cJSON_CreateString("."));
	return argv;
}

/* Start argv with its stdin (in) or stdout (!in) on a pipe; its end. */
static pid_t
spawn_piped(char *const argv[], int in, int *fd)
{
	int	 p[2];
	pid_t	 pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		fatal("pipe2");
	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid == 0) {
		dup2(in ? p[0] : p[1], in ? STDIN_FILENO : STDOUT_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in ? p[0] : p[1]);
	*fd = in ? p[1] : p[0];
	return pid;
}

static int
wait_ok(pid_t pid)
{
	int	 status;

	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int
copy_fail(struct sandbox *sb, const char *way, char *why, struct buf *err,
    char **cause)
{
	*cause = xprintf("sandbox '%s': copying the workspace %s: %s",
	    sandbox_id(sb), way, why != NULL ? why : err->len > 0 ?
	    buf_str(err) : "tar failed");
	free(why);
	buf_release(err);
	return -1;
}

int
sandbox_copy_in(struct sandbox *sb, const char *dir, char **cause)
{
	char *const	 argv[] = { "tar", "-C", (char *)dir, "-cf", "-", ".",
			    NULL };
	struct buf	 err = BUF_INIT;
	char		*why = NULL;
	int		 fd, p, code;
	pid_t		 pid;

	if ((fd = sandbox_connect(sb, cause)) == -1)
		return -1;
	pid = spawn_piped(argv, 0, &p);
	code = envd_exec_feed(fd, tar_argv("-xf"), p, &err, &why);
	close(p);
	close(fd);
	if (!wait_ok(pid) || code != 0)
		return copy_fail(sb, "in", why, &err, cause);
	buf_release(&err);
	return 0;
}

int
sandbox_copy_out(struct sandbox *sb, const char *dir, char **cause)
{
	char *const	 argv[] = { "bwrap", "--ro-bind", "/", "/",
			    "--dev", "/dev", "--bind", (char *)dir, (char *)dir,
			    "--unshare-all", "--die-with-parent",
			    "--new-session", "--", "/bin/sh", "-c",
			    "find \"$1\" -mindepth 1 -delete && "
			    "exec tar -x --no-same-owner -f - -C \"$1\"",
			    "sh", (char *)dir, NULL };
	struct buf	 err = BUF_INIT;
	char		*why = NULL;
	int		 fd, p, code;
	pid_t		 pid;

	if (file_mkdir_p(dir, 0700) != 0) {
		*cause = xprintf("%s: %s", dir, strerror(errno));
		return -1;
	}
	if ((fd = sandbox_connect(sb, cause)) == -1)
		return -1;
	pid = spawn_piped(argv, 1, &p);
	code = envd_exec_drain(fd, tar_argv("-cf"), p, &err, &why);
	close(p);
	close(fd);
	if (!wait_ok(pid) || code != 0)
		return copy_fail(sb, "out", why, &err, cause);
	buf_release(&err);
	return 0;
}
