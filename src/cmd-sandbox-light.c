/*
 * cmd-sandbox-light.c: the holt sandbox subcommands that only talk to a
 * running sandbox's envd (holt(1), SANDBOXES), and the dispatcher. They
 * link with nothing but cJSON, so the light holt front end can run them
 * itself: exec's round trip is then a few milliseconds, not the full
 * program's start-up. create and the lifecycle subcommands start and stop
 * processes; they are cmd-sandbox.c's, in holt-full. Here,
 * exec streams a command's output live, sh is exec with a terminal, put and
 * get go through envd's write and read (so a symlink inside the sandbox
 * cannot lead them out), forward relays host TCP connections to a port
 * inside.
 */
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "cmd-sandbox.h"

/* options ------------------------------------------------------------- */

/*
 * Options may come before or after the positionals; "--" ends them and
 * starts the command. Without "--", the words after the last positional
 * are the command (exec ID ls -l).
 */
int
args_parse(const char *sub, int argc, char **argv, const struct opt *opts,
    size_t nopts, int maxpos, int multi0, struct args *a)
{
	int		 i;
	size_t		 k, len;
	const char	*s, *eq;

	memset(a, 0, sizeof *a);
	for (i = 1; i < argc; i++) {
		s = argv[i];
		if (strcmp(s, "--") == 0) {
			a->cmd = argv + i + 1;
			a->ncmd = argc - i - 1;
			return 0;
		}
		if (s[0] == '-' && s[1] == '-' && s[2] != '\0') {
			s += 2;
			eq = strchr(s, '=');
			len = eq != NULL ? (size_t)(eq - s) : strlen(s);
			for (k = 0; k < nopts; k++) {
				if (strlen(opts[k].name) == len &&
				    strncmp(opts[k].name, s, len) == 0)
					break;
			}
			if (k == nopts) {
				fprintf(stderr, "holt: sandbox %s: unknown "
				    "option '%s'\n", sub, argv[i]);
				return -1;
			}
			if (!opts[k].has_arg) {
				a->val[k] = "";
				continue;
			}
			if (eq != NULL)
				a->val[k] = eq + 1;
			else if (i + 1 < argc)
				a->val[k] = argv[++i];
			else {
				fprintf(stderr, "holt: sandbox %s: option "
				    "'--%s' needs a value\n", sub,
				    opts[k].name);
				return -1;
			}
			if (k == 0 && multi0) {
				a->multi = xreallocarray(a->multi,
				    a->nmulti + 1, sizeof *a->multi);
				a->multi[a->nmulti++] = (char *)a->val[k];
			}
			continue;
		}
		if (s[0] == '-' && s[1] != '\0') {
			fprintf(stderr, "holt: sandbox %s: unknown option "
			    "'%s'\n", sub, s);
			return -1;
		}
		if (a->npos == maxpos) {
			a->cmd = argv + i;
			a->ncmd = argc - i;
			return 0;
		}
		a->pos[a->npos++] = argv[i];
	}
	return 0;
}

/* usage --------------------------------------------------------------- */

static const struct {
	const char	*name;
	const char	*usage;
	const char	*help;
} subs[] = {
	{ "create", "[--name NAME] [--net off|on|policy] [--memory SIZE] "
	  "[--pids N] "
	  "[--image host|PATH] [--idle-pause DURATION] [--provider P]",
	  "create and start a sandbox, print its id" },
	{ "ls", "[--json] [--provider P]", "list sandboxes (of provider P)" },
	{ "exec", "ID [--timeout S] [--cwd DIR] [--env K=V]... [--tty] -- CMD "
	  "[ARG...]", "run a command, exit with its status" },
	{ "sh", "ID", "an interactive shell in the sandbox" },
	{ "put", "ID LOCAL REMOTE", "copy a host file into the sandbox" },
	{ "get", "ID REMOTE LOCAL", "copy a file out of the sandbox" },
	{ "pause", "ID", "freeze every process of the sandbox" },
	{ "resume", "ID", "let a paused sandbox go on" },
	{ "stop", "ID", "end every process, keep the files" },
	{ "start", "ID", "start a stopped sandbox and its services" },
	{ "rm", "ID [--forget]", "stop the sandbox and delete its files" },
	{ "reset", "ID --root", "drop what was installed over the image" },
	{ "checkpoint", "ID [--list] [--json]",
	  "checkpoint the sandbox's files, or list the checkpoints" },
	{ "restore", "ID CHECKPOINT",
	  "put the files of a checkpoint back, restart the services" },
	{ "fork", "ID [--name NAME] [--at CHECKPOINT]",
	  "a new sandbox with a copy of the files, services restarted" },
	{ "service", "ID create NAME [--port P] -- CMD | ls | logs NAME "
	  "[--lines N] | restart NAME | stop NAME",
	  "supervised long-running commands" },
	{ "forward", "ID PORT [LOCAL_PORT]",
	  "relay host 127.0.0.1:LOCAL_PORT to PORT inside, until ^C" },
	{ "watch", "ID [--theme NAME]",
	  "watch its files and the output of its commands, live (d: the diff), "
	  "until q" },
	{ "bridge", "ID",
	  "connect stdin and stdout to its envd (the ssh provider's way in)" },
};

void
sub_usage(const char *name, FILE *f)
{
	size_t	 i;

	for (i = 0; i < nitems(subs); i++) {
		if (strcmp(subs[i].name, name) == 0) {
			fprintf(f, "usage: holt sandbox %s %s\n", name,
			    subs[i].usage);
			if (f == stdout)
				printf("\n%s; see holt(1), SANDBOXES.\n",
				    subs[i].help);
			return;
		}
	}
}

void
all_usage(FILE *f)
{
	size_t	 i;

	fprintf(f, "usage: holt sandbox SUBCOMMAND [ARGS...]\n\n");
	for (i = 0; i < nitems(subs); i++)
		fprintf(f, "  %-8s %s\n", subs[i].name, subs[i].help);
	fprintf(f, "\nID is a sandbox id (sbx-...) or its unique name; "
	    "'holt sandbox SUBCOMMAND --help' for more.\n");
}

int
bad_usage(const char *name)
{
	sub_usage(name, stderr);
	return EXIT_USAGE;
}

/* Open a sandbox; print why not and set *rc (2: unknown, 6: broken). */
struct sandbox *
open_or_fail(const char *idn, int *rc)
{
	struct sandbox	*sb;
	char		*cause;

	if ((sb = sandbox_open(idn, &cause)) == NULL) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		free(cause);
		*rc = sandbox_errno_unknown() ? EXIT_USAGE : EXIT_SANDBOX;
	}
	return sb;
}

int
fail(const char *cause, int rc)
{
	utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
	return rc;
}

/* create, ls ---------------------------------------------------------- */

static void
human_size(uint64_t b, char *out, size_t len)
{
	const char	*u = "KMGT";
	double		 v = (double)b;
	int		 i = -1;

	if (b < 1024) {
		snprintf(out, len, "%lluB", (unsigned long long)b);
		return;
	}
	while (v >= 1024 && i < 3) {
		v /= 1024;
		i++;
	}
	snprintf(out, len, "%.1f%c", v, u[i]);
}

static void
time_text(uint64_t ms, char *out, size_t len)
{
	time_t		 t = (time_t)(ms / 1000);
	struct tm	 tm;

	if (ms == 0) {
		snprintf(out, len, "-");
		return;
	}
	gmtime_r(&t, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* What holt e2b serve keeps of a sandbox it made: template, metadata. */
static void
add_e2b(cJSON *o, struct sandbox *sb)
{
	char	*path, *cause = NULL;
	cJSON	*j, *e;

	path = paths_join(sandbox_dir(sb), "e2b.json");
	if (access(path, F_OK) != 0 ||
	    (j = json_load_file(path, &cause)) == NULL) {
		free(cause);
		free(path);
		return;
	}
	free(path);
	e = cJSON_AddObjectToObject(o, "e2b");
	if (json_str(j, "template") != NULL)
		cJSON_AddStringToObject(e, "template", json_str(j, "template"));
	cJSON_AddItemToObject(e, "metadata", cJSON_IsObject(cJSON_GetObjectItem(
	    j, "metadata")) ? cJSON_Duplicate(cJSON_GetObjectItem(j,
	    "metadata"), 1) : cJSON_CreateObject());
	cJSON_Delete(j);
}

/* When a running sandbox will pause if nothing uses it: "in 29m". */
static void
pauses_text(struct sandbox *sb, char *out, size_t len, uint64_t *at)
{
	long long	 idle = sandbox_idle_pause(sb), left;
	struct timespec	 ts;
	uint64_t	 now;

	*at = 0;
	if (sandbox_state(sb) != SANDBOX_RUNNING) {
		xstrlcpy(out, "-", len);
		return;
	}
	if (idle <= 0) {
		xstrlcpy(out, "never", len);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	*at = sandbox_last_used(sb) + (uint64_t)idle;
	left = (long long)*at - (long long)now;
	if (left <= 0)
		xstrlcpy(out, "due", len);
	else if (left < 60 * 1000)
		snprintf(out, len, "in %llds", (left + 999) / 1000);
	else if (left < 3600 * 1000)
		snprintf(out, len, "in %lldm", (left + 59999) / 60000);
	else
		snprintf(out, len, "in %lldh%02lldm", left / 3600000,
		    (left % 3600000) / 60000);
}

static int
sub_ls(int argc, char **argv)
{
	static const struct opt opts[] = { { "json", 0 }, { "provider", 1 } };
	struct args	  a;
	struct sandbox	**list;
	size_t		  n, i, j;
	cJSON		 *arr, *o;
	char		  disk[32], used[32], created[32], pauses[32], *s, *ws;
	uint64_t	  du, at;
	const char	 *c;

	if (args_parse("ls", argc, argv, opts, nitems(opts), 0, 0, &a) != 0 ||
	    a.ncmd != 0)
		return bad_usage("ls");
	list = sandbox_list(&n);
	/* --provider ssh:host: that host's only ("local" is plain local). */
	for (i = j = 0; i < n; i++) {
		if (a.val[1] == NULL ||
		    strcmp(sandbox_provider_spec(list[i]), a.val[1]) == 0)
			list[j++] = list[i];
		else
			sandbox_free(list[i]);
	}
	n = j;
	if (a.val[0] != NULL) {
		arr = cJSON_CreateArray();
		for (i = 0; i < n; i++) {
			o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "id", sandbox_id(list[i]));
			cJSON_AddStringToObject(o, "name",
			    sandbox_name(list[i]));
			cJSON_AddStringToObject(o, "provider",
			    sandbox_provider_spec(list[i]));
			cJSON_AddStringToObject(o, "state", sandbox_state_name(
			    sandbox_state(list[i])));
			cJSON_AddStringToObject(o, "created",
			    sandbox_created(list[i]));
			time_text(sandbox_last_used(list[i]), used, sizeof used);
			cJSON_AddStringToObject(o, "last_used", used);
			cJSON_AddNumberToObject(o, "disk_bytes",
			    (double)file_du(sandbox_dir(list[i])));
			cJSON_AddStringToObject(o, "net",
			    sandbox_net_name(sandbox_net(list[i])));
			cJSON_AddNumberToObject(o, "memory",
			    (double)sandbox_memory(list[i]));
			cJSON_AddNumberToObject(o, "pids", sandbox_pids(list[i]));
			cJSON_AddStringToObject(o, "image",
			    sandbox_image(list[i]));
			cJSON_AddNumberToObject(o, "idle_pause_ms",
			    (double)sandbox_idle_pause(list[i]));
			pauses_text(list[i], pauses, sizeof pauses, &at);
			if (at != 0) {
				time_text(at, used, sizeof used);
				cJSON_AddStringToObject(o, "pauses_at", used);
			} else
				cJSON_AddNullToObject(o, "pauses_at");
			ws = sandbox_workspace(list[i]);
			cJSON_AddStringToObject(o, "workspace", ws);
			free(ws);
			add_e2b(o, list[i]);
			cJSON_AddItemToArray(arr, o);
		}
		s = cJSON_Print(arr);
		utf8_vis_print(stdout, UTF8_VIS_JSON, "%s\n", s);
		cJSON_free(s);
		cJSON_Delete(arr);
	} else {
		printf("%-16s  %-16s  %-11s  %-20s  %-20s  %-6s  %-8s  %s\n",
		    "ID", "NAME", "STATE", "CREATED", "LAST USED", "DISK",
		    "PROVIDER", "PAUSES");
		for (i = 0; i < n; i++) {
			du = file_du(sandbox_dir(list[i]));
			human_size(du, disk, sizeof disk);
			time_text(sandbox_last_used(list[i]), used, sizeof used);
			c = sandbox_created(list[i]);
			/* 2026-11-29T08:40:01.123Z: drop the milliseconds. */
			snprintf(created, sizeof created, "%.19sZ", c);
			pauses_text(list[i], pauses, sizeof pauses, &at);
			utf8_vis_print(stdout, 0,
			    "%-16s  %-16s  %-11s  %-20s  %-20s  %-6s  %-8s  %s",
			    sandbox_id(list[i]), *sandbox_name(list[i]) != '\0' ?
			    sandbox_name(list[i]) : "-", sandbox_state_name(
			    sandbox_state(list[i])), created, used, disk,
			    sandbox_provider_spec(list[i]), pauses);
			putchar('\n');
		}
	}
	sandbox_list_free(list, n);
	return EXIT_OK;
}

/* exec ---------------------------------------------------------------- */

static int	sig_pipe[2] = { -1, -1 };

static void
sig_handler(int sig)
{
	unsigned char	 c = (unsigned char)sig;
	int		 saved = errno;

	if (write(sig_pipe[1], &c, 1) < 0)
		errno = saved;
	errno = saved;
}

static void
sig_catch(int sig)
{
	struct sigaction	 sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = sig_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(sig, &sa, NULL);
}

static void
sig_setup(void)
{
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		fatal("pipe2");
}

static int
send_frame(int fd, cJSON *obj)
{
	int	 rc = frame_write_fd(fd, obj);

	cJSON_Delete(obj);
	return rc;
}

/* a (may be NULL) and b in one write; both freed. */
static int
send_frames(int fd, cJSON *a, cJSON *b)
{
	int	 rc = frame_write2_fd(fd, a, b);

	cJSON_Delete(a);
	cJSON_Delete(b);
	return rc;
}

static cJSON *
op_new(int id, const char *op, pid_t pid)
{
	cJSON	*o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "id", id);
	cJSON_AddStringToObject(o, "op", op);
	if (pid > 0)
		cJSON_AddNumberToObject(o, "pid", pid);
	return o;
}

/* Kill a command's whole tree. */
static cJSON *
signal_op(int id, pid_t pid)
{
	cJSON	*o = op_new(id, "signal", pid);

	cJSON_AddStringToObject(o, "signal", "KILL");
	cJSON_AddBoolToObject(o, "tree", 1);
	return o;
}

static struct termios	 saved_tio;
static int		 tio_saved;

static void
tty_restore(void)
{
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	tio_saved = 0;
}

static void
send_resize(int fd, int *next_id, pid_t pid)
{
	struct winsize	 ws;
	cJSON		*o;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 &&
	    ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) != 0)
		return;
	o = op_new((*next_id)++, "resize", pid);
	cJSON_AddNumberToObject(o, "cols", ws.ws_col);
	cJSON_AddNumberToObject(o, "rows", ws.ws_row);
	send_frame(fd, o);
}

/* Our stdin is /dev/null or closed: nothing to forward. */
static int
stdin_is_null(void)
{
	struct stat	 st, null;

	if (fstat(STDIN_FILENO, &st) != 0)
		return 1;
	return S_ISCHR(st.st_mode) && stat("/dev/null", &null) == 0 &&
	    st.st_rdev == null.st_rdev;
}

/*
 * Stream one command: its stdout and stderr go to ours, our stdin to its.
 * ^C (SIGINT) interrupts its process group; a second one, or SIGTERM/HUP,
 * kills its whole tree. Returns the exit status to use.
 */
static int
stream_command(struct sandbox *sb, int fd, cJSON *hello, cJSON *req, int tty,
    int timeout_s)
{
	struct pollfd		 pfd[3];
	struct frame_decoder	 dec;
	struct winsize		 ws;
	struct termios		 tio;
	static char		 data[256 * 1024];
	char			*cause = NULL;
	const char		*ev, *err;
	struct buf		 b = BUF_INIT;
	int			 next_id = 2, in_open = 1, interrupts = 0;
	int			 broken = 0;
	int			 rc = EXIT_SANDBOX, r, done = 0;
	pid_t			 pid = 0;
	ssize_t			 n;
	unsigned char		 sig;
	cJSON			*o, *pty;

	sig_setup();
	sig_catch(SIGINT);
	sig_catch(SIGTERM);
	sig_catch(SIGHUP);
	if (tty) {
		pty = cJSON_AddObjectToObject(req, "pty");
		if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ||
		    ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) {
			cJSON_AddNumberToObject(pty, "cols", ws.ws_col);
			cJSON_AddNumberToObject(pty, "rows", ws.ws_row);
		}
		sig_catch(SIGWINCH);
		if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO,
		    &saved_tio) == 0) {
			tio = saved_tio;
			cfmakeraw(&tio);
			tcsetattr(STDIN_FILENO, TCSAFLUSH, &tio);
			tio_saved = 1;
		}
	} else if (stdin_is_null())
		in_open = 0;	/* no stdin pipe, no EOF round trip */
	else
		cJSON_AddBoolToObject(req, "stdin", 1);
	if (timeout_s > 0)
		cJSON_AddNumberToObject(req, "timeout_ms", timeout_s * 1000.0);
	if (send_frames(fd, hello, req) != 0) {
		tty_restore();
		return fail("sandbox: cannot send to envd", EXIT_SANDBOX);
	}
	frame_decoder_init(&dec, 0);
	while (!done) {
		pfd[0].fd = fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = sig_pipe[0];
		pfd[1].events = POLLIN;
		pfd[2].fd = pid > 0 && in_open ? STDIN_FILENO : -1;
		pfd[2].events = POLLIN;
		pfd[0].revents = pfd[1].revents = pfd[2].revents = 0;
		if (poll(pfd, 3, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents & POLLIN) {
			while (read(sig_pipe[0], &sig, 1) == 1) {
				if (pid <= 0)
					continue;
				if (sig == SIGWINCH) {
					send_resize(fd, &next_id, pid);
					continue;
				}
				o = op_new(next_id++, "signal", pid);
				if (sig == SIGINT && interrupts++ == 0)
					cJSON_AddStringToObject(o, "signal",
					    "INT");
				else {
					cJSON_AddStringToObject(o, "signal",
					    "KILL");
					cJSON_AddBoolToObject(o, "tree", 1);
				}
				send_frame(fd, o);
			}
		}
		if (pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(STDIN_FILENO, data, sizeof data);
			if (n == -1 && (errno == EINTR || errno == EAGAIN))
				continue;
			o = op_new(next_id++, "stdin", pid);
			if (n <= 0) {
				cJSON_AddBoolToObject(o, "eof", 1);
				in_open = 0;
			} else
				envd_data_set(o, data, (size_t)n);
			send_frame(fd, o);
		}
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(fd, data, sizeof data);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			tty_restore();
			fprintf(stderr, "holt: sandbox '%s': the connection to "
			    "envd was lost\n", sandbox_id(sb));
			break;
		}
		frame_decoder_feed(&dec, data, (size_t)n);
		while (!done && (r = frame_decoder_next(&dec, &o, &cause)) != 0) {
			if (r == -1) {
				tty_restore();
				utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: envd: %s\n", cause);
				free(cause);
				done = 1;
				break;
			}
			if ((int)json_num(o, "id", -1) != 1) {
				cJSON_Delete(o);	/* replies to stdin etc. */
				continue;
			}
			ev = json_str(o, "event");
			if ((err = json_str(o, "error")) != NULL) {
				tty_restore();
				utf8_vis_print(stderr, UTF8_VIS_TEXT,
				    "holt: sandbox '%s': %s\n", sandbox_id(sb), err);
				rc = EXIT_ERR;
				done = 1;
			} else if (ev == NULL)
				;
			else if (strcmp(ev, "started") == 0) {
				pid = (pid_t)json_num(o, "pid", 0);
				if (tty)
					send_resize(fd, &next_id, pid);
			} else if (strcmp(ev, "stdout") == 0 ||
			    strcmp(ev, "pty") == 0 || strcmp(ev, "stderr") == 0) {
				buf_reset(&b);
				envd_data_get(o, &b);
				if (!broken && file_write_all(strcmp(ev,
				    "stderr") == 0 ? STDERR_FILENO :
				    STDOUT_FILENO, b.data, b.len) != 0 &&
				    errno == EPIPE) {
					/* Nobody reads us: end it, as SIGPIPE would. */
					broken = 1;
					send_frame(fd, signal_op(next_id++, pid));
				}
			} else if (strcmp(ev, "exit") == 0) {
				tty_restore();
				if (broken)
					rc = 128 + SIGPIPE;
				else if (json_bool(o, "timed_out", 0)) {
					fprintf(stderr, "holt: sandbox exec: "
					    "timed out after %d s\n", timeout_s);
					rc = EXIT_TIMEOUT;
				} else if (json_num(o, "signal", 0) > 0)
					rc = 128 + (int)json_num(o, "signal", 0);
				else
					rc = (int)json_num(o, "code", 0);
				done = 1;
			}
			cJSON_Delete(o);
		}
	}
	tty_restore();
	frame_decoder_release(&dec);
	buf_release(&b);
	return rc;
}

static int
sub_exec(int argc, char **argv)
{
	static const struct opt opts[] = { { "env", 1 }, { "timeout", 1 },
	    { "cwd", 1 }, { "tty", 0 } };
	struct args	 a;
	struct sandbox	*sb;
	char		*cause, *end, *eq;
	int		 fd, rc, i, timeout = 0;
	size_t		 k;
	cJSON		*req, *arr, *env;

	if (args_parse("exec", argc, argv, opts, nitems(opts), 1, 1, &a) != 0)
		return bad_usage("exec");
	if (a.npos != 1 || a.ncmd == 0) {
		free(a.multi);
		return bad_usage("exec");
	}
	if (a.val[1] != NULL) {
		timeout = (int)strtol(a.val[1], &end, 10);
		if (*end != '\0' || timeout <= 0) {
			fprintf(stderr, "holt: --timeout '%s': seconds, more "
			    "than 0\n", a.val[1]);
			free(a.multi);
			return EXIT_USAGE;
		}
	}
	req = op_new(1, "exec", 0);
	arr = cJSON_AddArrayToObject(req, "argv");
	for (i = 0; i < a.ncmd; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(a.cmd[i]));
	if (a.val[2] != NULL)
		cJSON_AddStringToObject(req, "cwd", a.val[2]);
	env = cJSON_AddObjectToObject(req, "env");
	for (k = 0; k < a.nmulti; k++) {
		if ((eq = strchr(a.multi[k], '=')) == NULL || eq == a.multi[k]) {
			fprintf(stderr, "holt: --env '%s': use NAME=VALUE\n",
			    a.multi[k]);
			free(a.multi);
			cJSON_Delete(req);
			return EXIT_USAGE;
		}
		*eq = '\0';
		cJSON_AddStringToObject(env, a.multi[k], eq + 1);
		*eq = '=';
	}
	free(a.multi);
	if ((sb = open_or_fail(a.pos[0], &rc)) == NULL) {
		cJSON_Delete(req);
		return rc;
	}
	if ((fd = sandbox_connect_later(sb, &cause)) == -1) {
		rc = fail(cause, EXIT_SANDBOX);
		free(cause);
		cJSON_Delete(req);
		sandbox_free(sb);
		return rc;
	}
	sandbox_touch(sb);
	rc = stream_command(sb, fd, sandbox_hello_new(), req, a.val[3] != NULL,
	    timeout);
	close(fd);
	sandbox_free(sb);
	return rc;
}

static int
sub_sh(int argc, char **argv)
{
	struct args	 a;
	struct sandbox	*sb;
	char		*cause;
	int		 fd, rc;
	cJSON		*req;

	if (args_parse("sh", argc, argv, NULL, 0, 1, 0, &a) != 0 ||
	    a.npos != 1 || a.ncmd != 0)
		return bad_usage("sh");
	if ((sb = open_or_fail(a.pos[0], &rc)) == NULL)
		return rc;
	if ((fd = sandbox_connect(sb, &cause)) == -1) {
		rc = fail(cause, EXIT_SANDBOX);
		free(cause);
		sandbox_free(sb);
		return rc;
	}
	sandbox_touch(sb);
	req = op_new(1, "exec", 0);
	cJSON_AddStringToObject(req, "cmd", "if command -v bash >/dev/null; "
	    "then exec bash -l; else exec sh -l; fi");
	if (getenv("TERM") != NULL)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(req, "env"),
		    "TERM", getenv("TERM"));
	rc = stream_command(sb, fd, NULL, req, 1, 0);
	close(fd);
	sandbox_free(sb);
	return rc;
}

/* put, get ------------------------------------------------------------ */

static int
connect_or_fail(const char *idn, struct sandbox **sbp, int *rc)
{
	char	*cause;
	int	 fd;

	if ((*sbp = open_or_fail(idn, rc)) == NULL)
		return -1;
	if ((fd = sandbox_connect(*sbp, &cause)) == -1) {
		*rc = fail(cause, EXIT_SANDBOX);
		free(cause);
		sandbox_free(*sbp);
		*sbp = NULL;
		return -1;
	}
	sandbox_touch(*sbp);
	return fd;
}

static char *
read_stdin_all(size_t *len)
{
	struct buf	 b = BUF_INIT;
	char		 tmp[65536];
	ssize_t		 n;

	while ((n = read(STDIN_FILENO, tmp, sizeof tmp)) > 0)
		buf_add(&b, tmp, (size_t)n);
	if (n < 0) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, len);
}

static int
sub_put(int argc, char **argv)
{
	struct args	 a;
	struct sandbox	*sb;
	char		*data, *cause;
	size_t		 len;
	struct stat	 st;
	int		 fd, rc, mode = -1;

	if (args_parse("put", argc, argv, NULL, 0, 3, 0, &a) != 0 ||
	    a.npos != 3 || a.ncmd != 0)
		return bad_usage("put");
	if (strcmp(a.pos[1], "-") == 0)
		data = read_stdin_all(&len);
	else {
		if (stat(a.pos[1], &st) == 0 && S_ISDIR(st.st_mode)) {
			fprintf(stderr, "holt: '%s': is a directory (put copies "
			    "one file)\n", a.pos[1]);
			return EXIT_ERR;
		}
		data = file_read(a.pos[1], &len, 0);
		if (data != NULL && stat(a.pos[1], &st) == 0)
			mode = (int)(st.st_mode & 0777);
	}
	if (data == NULL) {
		fprintf(stderr, "holt: '%s': %s\n", a.pos[1], strerror(errno));
		return EXIT_ERR;
	}
	if ((fd = connect_or_fail(a.pos[0], &sb, &rc)) == -1) {
		free(data);
		return rc;
	}
	rc = EXIT_OK;
	if (envd_write_file(fd, a.pos[2], data, len, mode, &cause) != 0) {
		rc = fail(cause, EXIT_ERR);
		free(cause);
	}
	free(data);
	close(fd);
	sandbox_free(sb);
	return rc;
}

static int
sub_get(int argc, char **argv)
{
	struct args	 a;
	struct sandbox	*sb;
	char		*data, *cause, *local, *slash;
	size_t		 len;
	struct stat	 st;
	int		 fd, rc;

	if (args_parse("get", argc, argv, NULL, 0, 3, 0, &a) != 0 ||
	    a.npos != 3 || a.ncmd != 0)
		return bad_usage("get");
	if ((fd = connect_or_fail(a.pos[0], &sb, &rc)) == -1)
		return rc;
	data = envd_read_file(fd, a.pos[1], &len, &cause);
	close(fd);
	sandbox_free(sb);
	if (data == NULL) {
		rc = fail(cause, EXIT_ERR);
		free(cause);
		return rc;
	}
	rc = EXIT_OK;
	if (strcmp(a.pos[2], "-") == 0) {
		if (file_write_all(STDOUT_FILENO, data, len) != 0)
			rc = fail("stdout: write failed", EXIT_ERR);
		free(data);
		return rc;
	}
	if (stat(a.pos[2], &st) == 0 && S_ISDIR(st.st_mode)) {
		slash = strrchr(a.pos[1], '/');
		local = xprintf("%s/%s", a.pos[2], slash != NULL ? slash + 1 :
		    a.pos[1]);
	} else
		local = xstrdup(a.pos[2]);
	if (file_write_atomic(local, data, len, 0644) != 0) {
		fprintf(stderr, "holt: '%s': %s\n", local, strerror(errno));
		rc = EXIT_ERR;
	}
	free(local);
	free(data);
	return rc;
}

/* service ------------------------------------------------------------- */

static int
sub_service(int argc, char **argv)
{
	static const struct opt opts[] = { { "port", 1 }, { "lines", 1 } };
	struct args	 a;
	struct sandbox	*sb;
	char		*cause, *end;
	const char	*act;
	int		 fd, rc, i;
	long		 v;
	cJSON		*req, *reply, *arr, *e;
	struct buf	 b = BUF_INIT;

	if (args_parse("service", argc, argv, opts, nitems(opts), 3, 0, &a) != 0
	    || a.npos < 2)
		return bad_usage("service");
	act = a.pos[1];
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "service");
	cJSON_AddStringToObject(req, "action", act);
	if (strcmp(act, "ls") == 0) {
		if (a.npos != 2 || a.ncmd != 0)
			goto usage;
	} else if (strcmp(act, "create") == 0) {
		if (a.npos != 3 || a.ncmd == 0)
			goto usage;
		if (a.ncmd == 1)
			cJSON_AddStringToObject(req, "cmd", a.cmd[0]);
		else {
			arr = cJSON_AddArrayToObject(req, "argv");
			for (i = 0; i < a.ncmd; i++)
				cJSON_AddItemToArray(arr,
				    cJSON_CreateString(a.cmd[i]));
		}
		if (a.val[0] != NULL) {
			v = strtol(a.val[0], &end, 10);
			if (*end != '\0' || v <= 0 || v > 65535) {
				fprintf(stderr, "holt: --port '%s': a TCP "
				    "port\n", a.val[0]);
				cJSON_Delete(req);
				return EXIT_USAGE;
			}
			cJSON_AddNumberToObject(req, "port", (double)v);
		}
	} else if (strcmp(act, "logs") == 0 || strcmp(act, "restart") == 0 ||
	    strcmp(act, "stop") == 0 || strcmp(act, "rm") == 0) {
		if (a.npos != 3 || a.ncmd != 0)
			goto usage;
		if (strcmp(act, "rm") == 0) {
			cJSON_DeleteItemFromObject(req, "action");
			cJSON_AddStringToObject(req, "action", "remove");
		}
		if (a.val[1] != NULL)
			cJSON_AddNumberToObject(req, "lines",
			    strtol(a.val[1], NULL, 10));
	} else {
		fprintf(stderr, "holt: sandbox service: unknown action '%s'\n",
		    act);
		goto usage;
	}
	if (a.npos == 3)
		cJSON_AddStringToObject(req, "name", a.pos[2]);
	if ((fd = connect_or_fail(a.pos[0], &sb, &rc)) == -1) {
		cJSON_Delete(req);
		return rc;
	}
	reply = envd_call(fd, req, &cause);
	close(fd);
	sandbox_free(sb);
	if (reply == NULL) {
		rc = fail(cause, EXIT_ERR);
		free(cause);
		return rc;
	}
	if (strcmp(act, "ls") == 0) {
		printf("%-16s  %-8s  %-7s  %-8s  %-5s  %s\n", "NAME", "STATE",
		    "PID", "RESTARTS", "PORT", "COMMAND");
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(reply,
		    "services")) {
			char portbuf[16] = "-";
			if (json_num(e, "port", 0) > 0)
				snprintf(portbuf, sizeof portbuf, "%.0f",
				    json_num(e, "port", 0));
			/* The agent names its services and their commands. */
			utf8_vis_print(stdout, 0,
			    "%-16s  %-8s  %-7.0f  %-8.0f  %-5s  %s",
			    json_str(e, "name"), json_str(e, "state"),
			    json_num(e, "pid", 0), json_num(e, "restarts", 0),
			    portbuf, json_str(e, "cmd"));
			putchar('\n');
		}
	} else if (strcmp(act, "logs") == 0) {
		envd_data_get(reply, &b);
		file_write_all(STDOUT_FILENO, b.data, b.len);
		buf_release(&b);
	}
	cJSON_Delete(reply);
	return EXIT_OK;
usage:
	cJSON_Delete(req);
	return bad_usage("service");
}

/* bridge -------------------------------------------------------------- */

/*
 * Bytes from one descriptor to another; 0 on EOF from "from" (then "to"
 * is half-closed for a socket), -1 on error, 1 otherwise. Blocking: one
 * side stalled holds the other, which is the back-pressure wanted.
 */
static int
bridge_copy(int from, int to)
{
	char	 b[65536];
	ssize_t	 n;

	n = read(from, b, sizeof b);
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return 1;
	if (n <= 0) {
		shutdown(to, SHUT_WR);
		return n == 0 ? 0 : -1;
	}
	return file_write_all(to, b, (size_t)n) == 0 ? 1 : -1;
}

/*
 * The envd protocol on stdin and stdout: what an ssh provider on another
 * machine runs here (sandbox-ssh-relay.c). Nothing is sent first; the
 * other side speaks envd's protocol as if it held the socket. Ends when
 * either side does.
 */
static int
sub_bridge(int argc, char **argv)
{
	struct args	 a;
	struct sandbox	*sb;
	struct pollfd	 pfd[2];
	char		*cause;
	int		 fd, rc, open_in = 1;

	if (args_parse("bridge", argc, argv, NULL, 0, 1, 0, &a) != 0 ||
	    a.npos != 1 || a.ncmd != 0)
		return bad_usage("bridge");
	if ((sb = open_or_fail(a.pos[0], &rc)) == NULL)
		return rc;
	if ((fd = sandbox_connect_later(sb, &cause)) == -1) {
		rc = fail(cause, EXIT_SANDBOX);
		free(cause);
		sandbox_free(sb);
		return rc;
	}
	sandbox_touch(sb);
	sandbox_free(sb);
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		pfd[0].fd = open_in ? 0 : -1;
		pfd[0].events = POLLIN;
		pfd[1].fd = fd;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if ((pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    (rc = bridge_copy(0, fd)) <= 0) {
			if (rc < 0)
				break;
			open_in = 0;
		}
		if ((pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    bridge_copy(fd, 1) <= 0)
			break;
	}
	close(fd);
	return EXIT_OK;
}

/* forward ------------------------------------------------------------- */

/* Relay one accepted connection through its own envd connection. */
static void
forward_one(struct sandbox *sb, int conn, int port)
{
	struct pollfd	 pfd[2];
	char		 data[65536], *cause = NULL;
	int		 fd, open_in = 1, open_out = 1;
	ssize_t		 n;
	cJSON		*req, *reply;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if ((fd = sandbox_connect(sb, &cause)) == -1) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		_exit(1);
	}
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", "forward");
	cJSON_AddNumberToObject(req, "port", port);
	if ((reply = envd_call(fd, req, &cause)) == NULL) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: sandbox '%s': %s\n", sandbox_id(sb),
		    cause);
		_exit(1);
	}
	cJSON_Delete(reply);
	/* Raw bytes from here on, both ways, until both sides close. */
	while (open_in || open_out) {
		pfd[0].fd = open_in ? conn : -1;
		pfd[0].events = POLLIN;
		pfd[1].fd = open_out ? fd : -1;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents) {
			n = read(conn, data, sizeof data);
			if (n <= 0) {
				shutdown(fd, SHUT_WR);
				open_in = 0;
			} else if (file_write_all(fd, data, (size_t)n) != 0)
				break;
		}
		if (pfd[1].revents) {
			n = read(fd, data, sizeof data);
			if (n <= 0) {
				shutdown(conn, SHUT_WR);
				open_out = 0;
			} else if (file_write_all(conn, data, (size_t)n) != 0)
				break;
		}
	}
	_exit(0);
}

static int
sub_forward(int argc, char **argv)
{
	struct args		 a;
	struct sandbox		*sb;
	struct sockaddr_in	 sin;
	socklen_t		 slen = sizeof sin;
	struct sigaction	 sa;
	struct pollfd		 pfd[2];
	char			*end, *cause;
	long			 port, lport;
	int			 s, conn, rc, one = 1, fd;
	pid_t			 pid;
	unsigned char		 sig;

	if (args_parse("forward", argc, argv, NULL, 0, 3, 0, &a) != 0 ||
	    a.npos < 2 || a.ncmd != 0)
		return bad_usage("forward");
	port = strtol(a.pos[1], &end, 10);
	if (*end != '\0' || port <= 0 || port > 65535) {
		fprintf(stderr, "holt: port '%s': a TCP port\n", a.pos[1]);
		return EXIT_USAGE;
	}
	lport = port;
	if (a.npos == 3) {
		lport = strtol(a.pos[2], &end, 10);
		if (*end != '\0' || lport < 0 || lport > 65535) {
			fprintf(stderr, "holt: local port '%s': a TCP port, "
			    "or 0 for any\n", a.pos[2]);
			return EXIT_USAGE;
		}
	}
	if ((sb = open_or_fail(a.pos[0], &rc)) == NULL)
		return rc;
	/* Fail now, not at the first connection, if it is not running. */
	if ((fd = sandbox_connect(sb, &cause)) == -1) {
		rc = fail(cause, EXIT_SANDBOX);
		free(cause);
		sandbox_free(sb);
		return rc;
	}
	close(fd);
	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		fatal("socket");
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)lport);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sin, sizeof sin) != 0 ||
	    listen(s, 64) != 0 ||
	    getsockname(s, (struct sockaddr *)&sin, &slen) != 0) {
		fprintf(stderr, "holt: 127.0.0.1:%ld: %s\n", lport,
		    strerror(errno));
		close(s);
		sandbox_free(sb);
		return EXIT_ERR;
	}
	printf("%d\n", ntohs(sin.sin_port));
	fflush(stdout);
	fprintf(stderr, "holt: forwarding 127.0.0.1:%d to port %ld in "
	    "sandbox '%s' (^C stops)\n", ntohs(sin.sin_port), port,
	    sandbox_id(sb));
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = SA_NOCLDWAIT;
	sigaction(SIGCHLD, &sa, NULL);
	sig_setup();
	sig_catch(SIGINT);
	sig_catch(SIGTERM);
	sig_catch(SIGHUP);
	for (;;) {
		pfd[0].fd = s;
		pfd[0].events = POLLIN;
		pfd[1].fd = sig_pipe[0];
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents && read(sig_pipe[0], &sig, 1) == 1)
			break;
		if (!(pfd[0].revents & POLLIN))
			continue;
		if ((conn = accept4(s, NULL, NULL, SOCK_CLOEXEC)) == -1)
			continue;
		if ((pid = fork()) == 0) {
			close(s);
			forward_one(sb, conn, (int)port);
		}
		close(conn);
	}
	close(s);
	sandbox_free(sb);
	return EXIT_OK;
}

/* dispatch ------------------------------------------------------------ */

static const struct {
	const char	*name;
	int		(*fn)(int, char **);
} light_subs[] = {
	{ "ls", sub_ls }, { "exec", sub_exec }, { "sh", sub_sh },
	{ "put", sub_put }, { "get", sub_get }, { "service", sub_service },
	{ "forward", sub_forward }, { "bridge", sub_bridge },
};

int
cmd_sandbox_dispatch(int argc, char **argv, int (*full)(int, char **))
{
	size_t	 i;

	if (argc < 2) {
		if (cmd_wants_help(argc, argv)) {
			all_usage(stdout);
			return EXIT_OK;
		}
		all_usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		all_usage(stdout);
		return EXIT_OK;
	}
	for (i = 0; i < nitems(subs); i++) {
		if (strcmp(subs[i].name, argv[1]) == 0)
			break;
	}
	if (i == nitems(subs)) {
		fprintf(stderr, "holt: sandbox: unknown subcommand '%s'\n",
		    argv[1]);
		all_usage(stderr);
		return EXIT_USAGE;
	}
	if (cmd_wants_help(argc - 1, argv + 1)) {
		sub_usage(argv[1], stdout);
		return EXIT_OK;
	}
	for (i = 0; i < nitems(light_subs); i++) {
		if (strcmp(light_subs[i].name, argv[1]) == 0)
			return light_subs[i].fn(argc - 1, argv + 1);
	}
	return full(argc - 1, argv + 1);
}

/*
 * In the light front end, create and the lifecycle subcommands are passed
 * to holt-full with the global options they came with.
 */
static int
exec_full(int argc, char **argv)
{
	char	**nargv, *full;
	int	  n = 0, i;

	if ((full = paths_find_helper("holt-full")) == NULL) {
		fprintf(stderr, "holt: holt-full is missing (beside holt, or "
		    "in %s): reinstall holt\n", HOLT_LIBEXECDIR);
		return EXIT_ERR;
	}
	nargv = xcalloc((size_t)argc + 6, sizeof *nargv);
	nargv[n++] = full;
	if (cmd_socket_name != NULL) {
		nargv[n++] = (char *)"-L";
		nargv[n++] = (char *)cmd_socket_name;
	} else if (cmd_socket_path != NULL) {
		nargv[n++] = (char *)"-S";
		nargv[n++] = (char *)cmd_socket_path;
	}
	nargv[n++] = (char *)"sandbox";
	for (i = 0; i < argc; i++)
		nargv[n++] = argv[i];
	nargv[n] = NULL;
	execv(full, nargv);
	fprintf(stderr, "holt: %s: %s\n", full, strerror(errno));
	return EXIT_ERR;
}

/*
 * A paused sandbox a command connects to is resumed first, by holt-full
 * (the freezer is its business), as "holt sandbox resume ID" would.
 */
static int
light_wake(struct sandbox *sb, char **cause)
{
	struct sigaction	 sa, old;
	char			*full;
	pid_t			 pid;
	int			 status, null, r;

	if ((full = paths_find_helper("holt-full")) == NULL) {
		*cause = xstrdup("holt-full is missing: reinstall holt");
		return -1;
	}
	/* forward ignores SIGCHLD (no zombies): we need this one's status. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, &old);
	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid == 0) {
		if ((null = open("/dev/null", O_WRONLY)) != -1)
			dup2(null, 1);
		execl(full, "holt-full", "sandbox", "resume", sandbox_id(sb),
		    (char *)NULL);
		_exit(127);
	}
	free(full);
	while ((r = waitpid(pid, &status, 0)) == -1 && errno == EINTR)
		;
	sigaction(SIGCHLD, &old, NULL);
	if (r == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		*cause = xprintf("sandbox '%s' is paused and could not be "
		    "resumed", sandbox_id(sb));
		return -1;
	}
	return 0;
}

static int
cmd_sandbox_light_exec(int argc, char **argv)
{
	sandbox_wake = light_wake;
	return cmd_sandbox_dispatch(argc, argv, exec_full);
}

/* For the light front end's table (holt-full has cmd_sandbox_entry). */
const struct cmd_entry cmd_sandbox_light_entry = {
	"sandbox", "SUBCOMMAND [ARGS...]", "create and use sandboxes",
	cmd_sandbox_light_exec
};
