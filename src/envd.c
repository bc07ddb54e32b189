/*
 * envd.c: holt-envd, pid 1 of a sandbox (holt-envd(8)). One poll(2) loop
 * serves the control socket the host handed down, runs commands (pipes or a
 * pty, each in its own session), streams their output with offsets into a
 * bounded ring per stream so a client may re-attach, enforces timeouts by
 * killing the whole process tree, supervises services (restart with
 * backoff, bounded rotated logs in the host-side state directory), relays
 * forwarded TCP connections, and reaps every orphan, as init must.
 *
 * Back-pressure: a command's pipe is read only while each client attached
 * to it has less than CLIENT_OUT_MAX queued, so a slow client slows the
 * command instead of growing envd. With no client attached, output only
 * goes into the ring and the command runs on.
 */
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "envd.h"
#include "sandbox-landlock.h"

#define CLIENT_OUT_MAX	(1024 * 1024)	/* queued bytes before throttling */
#define CLIENT_IN_MAX	(FRAME_MAX)	/* one frame, the decoder's limit */
#define RING_MAX	(64 * 1024)	/* kept per stream for attach */
/* Also a command's output read at once: larger chunks cost the E2B SDK
 * more (it joins a message's pieces again and again), not less; from
 * 64 to 256 KiB it does best. */
#define READ_CHUNK	(256 * 1024)
#define STDIN_MAX	(1024 * 1024)
#define DONE_KEEP	16		/* finished commands kept for attach */
#define SVC_LOG_MAX	(1024 * 1024)	/* then rotated to NAME.log.1 */
#define SVC_BACKOFF_MAX	30000
#define SVC_STABLE_MS	10000
#define FWD_BUF		(256 * 1024)

struct client;

struct stream {
	int		 fd;
	const char	*name;		/* stdout, stderr, pty */
	struct buf	 ring;		/* the last bytes, RING_MAX..2*RING_MAX */
	uint64_t	 end;		/* bytes ever read */
};

struct sub {
	struct client	*c;
	double		 id;
	int		 b64;	/* output always as data_b64 */
};

struct proc {
	pid_t		 pid;
	int		 pty;
	struct stream	 out, err;
	int		 in_fd;
	int		 status_fd;	/* the shim writes the command's status */
	int		 shim_lost;	/* it closed that pipe and said nothing */
	int		 reaped;	/* the shim is gone */
	unsigned long long since;	/* /proc start time of the shim, at least */
	struct buf	 in;
	int		 in_eof;
	struct sub	*subs;
	size_t		 nsubs;
	uint64_t	 start_ms;
	uint64_t	 deadline;	/* 0: none */
	int		 timed_out;
	int		 exited;
	int		 status;
	uint64_t	 duration_ms;
	char		*token;		/* the exec's, to re-join a re-sent one */
	struct proc	*next;
};

struct service {
	char		*name;
	char		*cmd;
	int		 port;
	int		 want;		/* 1: keep it running */
	pid_t		 pid;
	int		 out_fd;	/* pipe from the service */
	int		 log_fd;
	uint64_t	 log_size;
	int		 restarts;
	int		 fails;		/* quick failures in a row */
	uint64_t	 next_start;	/* 0: not scheduled */
	uint64_t	 started_ms;
	int		 last_status;
	struct service	*next;
};

struct watch {
	int		 fd;		/* inotify */
	double		 id;
	struct client	*c;
	char		**dirs;		/* by watch descriptor */
	int		 ndirs;
	struct watch	*next;
};

struct client {
	int		 fd;
	struct frame_decoder dec;
	struct buf	 out;
	size_t		 out_off;
	int		 dead;
	int		 eof;
	int		 wblocked;	/* the last write met a full socket */
	/* forward mode: raw bytes to and from a TCP connection */
	int		 tcp;
	struct buf	 to_tcp;
	int		 tcp_eof;	/* tcp side said EOF */
	struct client	*next;
};

static int		 listen_fd = -1, state_fd = -1, sig_fd = -1;
static int		 proxy_fd = -1, proxy_listen = -1;	/* --net policy */
static const char	*sandbox_id_arg = "";
static struct client	*clients;
static struct proc	*procs;
static struct service	*services;
static struct watch	*watches;
static int		 paused;
static uint64_t		 paused_at;
static int		 shutting_down;
static pid_t		 zygote_pid = -1;	/* the next shim, waiting */
static int		 zygote_fd = -1;
static uint64_t		 zygote_retry_ms;	/* after a failed fork */

/* clients ------------------------------------------------------------- */

static size_t
client_queued(struct client *c)
{
	return c->out.len - c->out_off;
}

static void	 client_drop(struct client *, const char *);

static void
client_send(struct client *c, cJSON *obj)
{
	char	*data;
	size_t	 len;

	if (c == NULL || c->dead || c->tcp != -1) {
		cJSON_Delete(obj);
		return;
	}
	data = frame_encode(obj, &len);
	cJSON_Delete(obj);
	if (data == NULL) {
		client_drop(c, "a reply too large for a frame");
		return;
	}
	if (c->out_off != 0 && c->out_off == c->out.len) {
		buf_reset(&c->out);
		c->out_off = 0;
	}
	buf_add(&c->out, data, len);
	free(data);
}

static cJSON *
event_new(double id, const char *event)
{
	cJSON	*o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "id", id);
	if (event != NULL)
		cJSON_AddStringToObject(o, "event", event);
	return o;
}

static void
reply_error(struct client *c, double id, const char *fmt, ...)
{
	cJSON	*o = event_new(id, NULL);
	va_list	 ap;
	char	*msg;

	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	cJSON_AddStringToObject(o, "error", msg);
	free(msg);
	client_send(c, o);
}

static void
reply_ok(struct client *c, double id)
{
	cJSON	*o = event_new(id, NULL);

	cJSON_AddBoolToObject(o, "ok", 1);
	client_send(c, o);
}

static void
client_drop(struct client *c, const char *why)
{
	struct proc	*p;
	struct watch	*w;
	size_t		 i;

	if (c->dead)
		return;
	if (why != NULL)
		log_warnx("client %d dropped: %s", c->fd, why);
	c->dead = 1;
	/* Its commands run on: they only lose a subscriber. */
	for (p = procs; p != NULL; p = p->next) {
		for (i = 0; i < p->nsubs; i++) {
			if (p->subs[i].c == c) {
				p->subs[i] = p->subs[--p->nsubs];
				i--;
			}
		}
	}
	for (w = watches; w != NULL; w = w->next) {
		if (w->c == c)
			w->c = NULL;
	}
}

/* procs --------------------------------------------------------------- */

static struct proc *
proc_find(pid_t pid)
{
	struct proc	*p;

	for (p = procs; p != NULL; p = p->next) {
		if (p->pid == pid)
			return p;
	}
	return NULL;
}

/* The command an exec with this token started, while it is kept. */
static struct proc *
proc_find_token(const char *token)
{
	struct proc	*p;

	for (p = procs; token != NULL && p != NULL; p = p->next) {
		if (p->token != NULL && strcmp(p->token, token) == 0)
			return p;
	}
	return NULL;
}

static void
proc_free(struct proc *p)
{
	if (p->out.fd != -1)
		close(p->out.fd);
	if (p->err.fd != -1)
		close(p->err.fd);
	if (p->in_fd != -1)
		close(p->in_fd);
	if (p->status_fd != -1)
		close(p->status_fd);
	buf_release(&p->out.ring);
	buf_release(&p->err.ring);
	buf_release(&p->in);
	free(p->subs);
	free(p->token);
	free(p);
}

static void
proc_sub(struct proc *p, struct client *c, double id, int b64)
{
	p->subs = xreallocarray(p->subs, p->nsubs + 1, sizeof *p->subs);
	p->subs[p->nsubs].c = c;
	p->subs[p->nsubs].id = id;
	p->subs[p->nsubs].b64 = b64;
	p->nsubs++;
}

/*
 * JSON string escaping for the hot path: runs of plain bytes are copied
 * whole. The input is valid UTF-8 (envd_data_set's rule), so only control
 * characters, '"' and '\\' need escapes.
 */
static void
json_escape(struct buf *b, const char *s, size_t n)
{
	static unsigned char	 special[256];
	size_t			 i, start = 0;
	unsigned char		 c;

	if (!special['"']) {
		for (i = 0; i < 0x20; i++)
			special[i] = 1;
		special['"'] = special['\\'] = 1;
	}
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (!special[c])
			continue;
		buf_add(b, s + start, i - start);
		start = i + 1;
		switch (c) {
		case '"':
			buf_add(b, "\\\"", 2);
			break;
		case '\\':
			buf_add(b, "\\\\", 2);
			break;
		case '\n':
			buf_add(b, "\\n", 2);
			break;
		case '\t':
			buf_add(b, "\\t", 2);
			break;
		case '\r':
			buf_add(b, "\\r", 2);
			break;
		default:
			buf_addf(b, "\\u%04x", c);
			break;
		}
	}
	buf_add(b, s + start, n - start);
}

/*
 * An output event after its id, encoded by hand: cJSON would copy and
 * escape the chunk several times over, and this is where a flood of output
 * spends its time. The payload comes last, as data (valid UTF-8, escaped)
 * or data_b64 (always, for a subscriber that asked for it).
 */
static void
stream_body(struct buf *body, struct proc *p, struct stream *s,
    const char *data, size_t n, int b64)
{
	char	 head[128];
	int	 plain = !b64 && envd_utf8_ok(data, n);

	buf_grow(body, n + n / 3 + 160);
	snprintf(head, sizeof head, ",\"event\":\"%s\",\"pid\":%ld,"
	    "\"offset\":%llu,\"%s\":\"", s->name, (long)p->pid,
	    (unsigned long long)s->end, plain ? "data" : "data_b64");
	buf_adds(body, head);
	if (plain)
		json_escape(body, data, n);
	else
		envd_b64_add(body, data, n);
	buf_adds(body, "\"}");
}

/* The same bytes go to every subscriber of a kind; only the id differs. */
static void
stream_emit(struct proc *p, struct stream *s, const char *data, size_t n)
{
	struct buf	 bodies[2] = { BUF_INIT, BUF_INIT }, *body;
	size_t		 i, len, k;
	unsigned char	 hdr[4];
	char		 head[128];
	struct client	*c;

	for (i = 0; i < p->nsubs; i++) {
		c = p->subs[i].c;
		if (c == NULL || c->dead || c->tcp != -1)
			continue;
		body = &bodies[p->subs[i].b64 != 0];
		if (body->len == 0)
			stream_body(body, p, s, data, n, p->subs[i].b64);
		snprintf(head, sizeof head, "{\"id\":%.17g", p->subs[i].id);
		len = strlen(head) + body->len;
		for (k = 0; k < 4; k++)
			hdr[k] = (unsigned char)((len >> (24 - 8 * k)) & 0xff);
		if (c->out_off != 0 && c->out_off == c->out.len) {
			buf_reset(&c->out);
			c->out_off = 0;
		}
		buf_add(&c->out, hdr, 4);
		buf_adds(&c->out, head);
		buf_add(&c->out, body->data, body->len);
	}
	buf_release(&bodies[0]);
	buf_release(&bodies[1]);
	buf_add(&s->ring, data, n);
	if (s->ring.len > 2 * RING_MAX)
		buf_remove_front(&s->ring, s->ring.len - RING_MAX);
	s->end += n;
}

/* Read once from a stream; 0 on EOF/error (fd closed), 1 otherwise. */
static int
stream_read(struct proc *p, struct stream *s)
{
	char	 data[READ_CHUNK];
	ssize_t	 n;

	n = read(s->fd, data, sizeof data);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 1;
	if (n <= 0) {
		close(s->fd);
		s->fd = -1;
		return 0;
	}
	stream_emit(p, s, data, (size_t)n);
	return 1;
}

static void
proc_send_exit(struct proc *p, struct client *c, double id)
{
	cJSON	*o = event_new(id, "exit");

	cJSON_AddNumberToObject(o, "pid", p->pid);
	if (WIFEXITED(p->status)) {
		cJSON_AddNumberToObject(o, "code", WEXITSTATUS(p->status));
		cJSON_AddNullToObject(o, "signal");
	} else {
		cJSON_AddNullToObject(o, "code");
		cJSON_AddNumberToObject(o, "signal", WTERMSIG(p->status));
	}
	cJSON_AddBoolToObject(o, "timed_out", p->timed_out);
	cJSON_AddNumberToObject(o, "duration_ms", (double)p->duration_ms);
	client_send(c, o);
}

/* Keep only the last DONE_KEEP finished commands. */
static void
procs_trim(void)
{
	struct proc	*p, **pp;
	int		 done = 0;

	for (pp = &procs; (p = *pp) != NULL; ) {
		if (p->exited && ++done > DONE_KEEP) {
			*pp = p->next;
			proc_free(p);
			continue;
		}
		pp = &p->next;
	}
}

static void kill_tree_hard(pid_t);
static int status_take(struct proc *, int *);
static void orphans_kill(unsigned long long);

static void
proc_exited(struct proc *p, int status)
{
	size_t	 i;
	int	 k, real;

	p->exited = 1;
	p->status = status;
	/*
	 * The shim reports the command's own status before it exits. If it
	 * did not, it was killed (the command may kill it: same uid), and
	 * its tree, now re-parented to us, would escape the command's end:
	 * kill what is left of its session and descendants.
	 */
	if (p->status_fd != -1 && status_take(p, &real) == 1)
		p->status = real;
	if (p->shim_lost) {
		kill_tree_hard(p->pid);
		orphans_kill(p->since);
	}
	p->duration_ms = mono_ms() - p->start_ms;
	/* All it wrote is in the pipes now: take it, then close them. */
	for (k = 0; k < 1024 && p->out.fd != -1; k++)
		if (!stream_read(p, &p->out))
			break;
	for (k = 0; k < 1024 && p->err.fd != -1; k++)
		if (!stream_read(p, &p->err))
			break;
	if (p->out.fd != -1) {
		close(p->out.fd);
		p->out.fd = -1;
	}
	if (p->err.fd != -1) {
		close(p->err.fd);
		p->err.fd = -1;
	}
	if (p->in_fd != -1) {
		close(p->in_fd);
		p->in_fd = -1;
	}
	for (i = 0; i < p->nsubs; i++)
		proc_send_exit(p, p->subs[i].c, p->subs[i].id);
	p->nsubs = 0;
	/* procs_trim() runs at the end of the loop: p may still be polled. */
}

/* Every process of the sandbox but envd, in *out; returns how many. */
static size_t
proc_stat_all(struct proc_stat **out)
{
	DIR			*d;
	struct dirent		*de;
	struct proc_stat	*v = NULL, pi;
	size_t			 n = 0, alloc = 0;
	pid_t			 pid;

	*out = NULL;
	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = (pid_t)atol(de->d_name);
		if (pid == 1 || pid == getpid() || proc_stat_read(pid, &pi) != 0)
			continue;
		if (n == alloc) {
			alloc = alloc == 0 ? 64 : alloc * 2;
			v = xreallocarray(v, alloc, sizeof *v);
		}
		v[n++] = pi;
	}
	closedir(d);
	*out = v;
	return n;
}

/*
 * Every process of a command: its session and process group (setsid made
 * both its pid) and anything descending from it. A daemon that made its own
 * session and was re-parented to us escapes this: see orphans_kill. O(
 * processes in the sandbox) per call.
 */
static int
kill_tree(pid_t root, int sig)
{
	struct proc_stat	*v;
	size_t			 n, i, j;
	int			 hit = 0, depth, mine;
	pid_t			 pp;

	n = proc_stat_all(&v);
	for (i = 0; i < n; i++) {
		mine = v[i].pid == root || v[i].sid == root ||
		    v[i].pgid == root;
		for (pp = v[i].ppid, depth = 0; !mine && pp > 1 && depth < 64;
		    depth++) {
			if (pp == root) {
				mine = 1;
				break;
			}
			for (j = 0; j < n && v[j].pid != pp; j++)
				;
			pp = j < n ? v[j].ppid : 0;
		}
		if (mine && kill(v[i].pid, sig) == 0)
			hit++;
	}
	free(v);
	return hit;
}

static void
kill_tree_hard(pid_t root)
{
	int	 i;

	/* A few rounds: a fork may race the first. */
	for (i = 0; i < 4; i++) {
		if (kill_tree(root, SIGKILL) == 0)
			break;
	}
}

static void
child_setup_common(void)
{
	sigset_t	 set;
	int		 fd;

	/*
	 * envd handles no signal (SIGCHLD comes through a signalfd) and
	 * ignores only SIGPIPE; main() set every other inherited disposition
	 * back to the default. So: the mask and SIGPIPE.
	 */
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
	signal(SIGPIPE, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, 0);
	/* The host made envd the OOM killer's last choice; not its children. */
	if ((fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC)) != -1) {
		if (write(fd, "0", 1) != 1)
			_exit(126);
		close(fd);
	}
}

/*
 * What a shim says on fd 3 when the command ends, in one write (at most
 * PIPE_BUF bytes, so envd reads it whole): the command's wait status, and
 * the processes left behind (children of the shim still running: daemons,
 * jobs put in the background), which envd then adopts as legitimate. A
 * shim killed before it could say this says nothing: see orphans_kill.
 */
#define SHIM_LEFT_MAX	200
struct shim_report {
	int	status;
	int	nleft;
	struct {
		pid_t			pid;
		unsigned long long	start;
	} left[SHIM_LEFT_MAX];
};

static void
shim_report(int status)
{
	struct shim_report	 r;
	struct proc_stat	*v;
	size_t			 n, i;
	pid_t			 pid;
	int			 st;

	memset(&r, 0, sizeof r);
	r.status = status;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		;
	if (pid == 0) {
		n = proc_stat_all(&v);
		for (i = 0; i < n && r.nleft < SHIM_LEFT_MAX; i++) {
			if (v[i].ppid != getpid())
				continue;
			r.left[r.nleft].pid = v[i].pid;
			r.left[r.nleft].start = v[i].start;
			r.nleft++;
		}
		free(v);
	}
	/* Said before dying: a shim killed by someone says nothing. */
	if (write(3, &r, offsetof(struct shim_report, left) +
	    (size_t)r.nleft * sizeof r.left[0]) < 0)
		_exit(126);
	close(3);
}

/*
 * Processes left behind by commands that ended normally: re-parented to
 * us, and allowed to live on (a server started with '&'). By pid and start
 * time, so a reused pid is not taken for one of them.
 */
static struct {
	pid_t			 pid;
	unsigned long long	 start;
} *adopted;
static size_t	 nadopted;

static void
adopt(pid_t pid, unsigned long long start)
{
	struct proc_stat	 pi;
	size_t			 i, j;

	/* Forget the dead first: the list stays as long as what lives. */
	for (i = j = 0; i < nadopted; i++) {
		if (proc_stat_read(adopted[i].pid, &pi) == 0 &&
		    pi.start == adopted[i].start)
			adopted[j++] = adopted[i];
	}
	nadopted = j;
	adopted = xreallocarray(adopted, nadopted + 1, sizeof *adopted);
	adopted[nadopted].pid = pid;
	adopted[nadopted].start = start;
	nadopted++;
}

/*
 * The shim's report, read whole: 1 and the command's status; 0 when the
 * shim closed the pipe without a word (killed: shim_lost); -1 not yet.
 */
static int
status_take(struct proc *p, int *status)
{
	struct shim_report	 r;
	ssize_t			 n;
	int			 i;

	n = read(p->status_fd, &r, sizeof r);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return -1;
	close(p->status_fd);
	p->status_fd = -1;
	if (n < (ssize_t)offsetof(struct shim_report, left)) {
		p->shim_lost = 1;
		return 0;
	}
	for (i = 0; i < r.nleft && i < SHIM_LEFT_MAX &&
	    (ssize_t)(offsetof(struct shim_report, left) +
	    (size_t)(i + 1) * sizeof r.left[0]) <= n; i++)
		adopt(r.left[i].pid, r.left[i].start);
	*status = r.status;
	return 1;
}

/*
 * A shim killed by its own command (same uid: it can) lets the command's
 * daemons, those that left its session, fall to us with nothing to tie
 * them to the command. They are the processes re-parented to us since the
 * shim started that are neither ours (a shim, a service) nor adopted:
 * killed with their trees. Called once the shim is reaped, when the kernel
 * has re-parented its children.
 */
static void
orphans_kill(unsigned long long since)
{
	struct proc_stat	*v;
	struct proc		*p;
	struct service		*sv;
	size_t			 n, i, k;
	int			 ours;

	n = proc_stat_all(&v);
	for (i = 0; i < n; i++) {
		if (v[i].ppid != getpid() || v[i].start < since)
			continue;
		ours = v[i].pid == zygote_pid;
		for (p = procs; p != NULL && !ours; p = p->next)
			ours = !p->reaped && p->pid == v[i].pid;
		for (sv = services; sv != NULL && !ours; sv = sv->next)
			ours = sv->pid > 0 && (sv->pid == v[i].pid ||
			    sv->pid == v[i].sid);
		for (k = 0; k < nadopted && !ours; k++)
			ours = adopted[k].pid == v[i].pid &&
			    adopted[k].start == v[i].start;
		if (!ours) {
			log_info("killing pid %ld: left by a command whose "
			    "shim was killed", (long)v[i].pid);
			kill_tree_hard(v[i].pid);
		}
	}
	free(v);
}

/* Now, in /proc's unit (clock ticks since boot), rounded down. */
static unsigned long long
boot_ticks(void)
{
	static long	 hz;
	struct timespec	 ts;

	if (hz == 0 && (hz = sysconf(_SC_CLK_TCK)) <= 0)
		hz = 100;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (unsigned long long)ts.tv_sec * (unsigned long long)hz +
	    (unsigned long long)ts.tv_nsec / (1000000000ULL / (unsigned long
	    long)hz);
}

/*
 * Every command runs under a small shim, the leader of its session and a
 * child subreaper: a daemon that double-forks and leaves the session is
 * re-parented to the shim, not to envd, so it stays in the command's tree
 * and a timeout or kill finds it. The shim starts the command with
 * posix_spawn (a vfork: no second copy of the address space on the way to
 * every command), waits for it, reports its status on fd 3 and exits the
 * same way (code, or the same signal), ignoring the signals meant for the
 * command's process group. Never returns.
 */
static void
shim(char **argv, const char *cwd)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 attr;
	sigset_t			 def;
	pid_t				 pid, main_pid;
	int				 status, main_status, nullfd, sig, r, code;
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT,
	    SIGUSR1, SIGUSR2, SIGWINCH, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE,
	    SIGALRM };
	size_t				 k;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_SET_NAME, "holt-shim");
	sigemptyset(&def);
	for (k = 0; k < nitems(ignored); k++) {
		signal(ignored[k], SIG_IGN);
		sigaddset(&def, ignored[k]);
	}
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigdefault(&attr, &def);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclose(&fa, 3);
	posix_spawn_file_actions_addchdir_np(&fa, cwd);
	r = posix_spawnp(&main_pid, argv[0], &fa, &attr, argv, environ);
	if (r != 0) {
		/* Which failed: the directory or the command. */
		if (chdir(cwd) != 0) {
			dprintf(2, "holt-envd: %s: %s\n", cwd, strerror(errno));
			code = 126;
		} else {
			dprintf(2, "holt-envd: %s: %s\n", argv[0], strerror(r));
			code = r == ENOENT ? 127 : 126;
		}
		shim_report(W_EXITCODE(code, 0));
		_exit(code);
	}
	if ((nullfd = open("/dev/null", O_RDWR)) != -1) {
		dup2(nullfd, 0);
		dup2(nullfd, 1);
		dup2(nullfd, 2);
		if (nullfd > 2)
			close(nullfd);
	}
	main_status = 0;
	for (;;) {
		pid = waitpid(-1, &status, 0);
		if (pid == -1 && errno == EINTR)
			continue;
		if (pid == -1)
			break;
		if (pid == main_pid) {
			main_status = status;
			break;
		}
	}
	shim_report(main_status);
	if (WIFSIGNALED(main_status)) {
		sig = WTERMSIG(main_status);
		signal(sig, SIG_DFL);
		prctl(PR_SET_DUMPABLE, 0);	/* no core of the shim */
		kill(getpid(), sig);
		_exit(128 + sig);
	}
	_exit(WEXITSTATUS(main_status));
}

static char **
argv_from(const cJSON *req, char **cause)
{
	const cJSON	*a = cJSON_GetObjectItemCaseSensitive(req, "argv"), *e;
	const char	*cmd = json_str(req, "cmd");
	char		**argv;
	int		  n = 0;

	if (cJSON_IsArray(a) && cJSON_GetArraySize(a) > 0) {
		argv = xcalloc((size_t)cJSON_GetArraySize(a) + 1, sizeof *argv);
		cJSON_ArrayForEach(e, a) {
			if (!cJSON_IsString(e)) {
				while (n > 0)
					free(argv[--n]);
				free(argv);
				*cause = xstrdup("argv: not all strings");
				return NULL;
			}
			argv[n++] = xstrdup(e->valuestring);
		}
		return argv;
	}
	if (cmd == NULL) {
		*cause = xstrdup("exec: needs argv or cmd");
		return NULL;
	}
	argv = xcalloc(4, sizeof *argv);
	argv[0] = xstrdup("/bin/sh");
	argv[1] = xstrdup("-c");
	argv[2] = xstrdup(cmd);
	return argv;
}

static void
argv_free(char **argv)
{
	size_t	 i;

	for (i = 0; argv[i] != NULL; i++)
		free(argv[i]);
	free(argv);
}

/*
 * The zygote: a shim forked ahead of time, waiting on a socket for its
 * command. A fork of envd costs more than a short command takes to run
 * (copying the page tables of a few MB: about 0.4 ms on a small VM), so it
 * is done between requests, off the path of the next exec. The request
 * comes as one SOCK_SEQPACKET message (all of it or nothing) with the
 * command's stdio and report pipe attached. A request that does not fit
 * (ZYGOTE_MSG_MAX), a zygote that is gone (anyone in the sandbox may kill
 * it) or a paused sandbox: the shim is forked at the time, as before.
 */
#define ZYGOTE_MSG_MAX	(64 * 1024)
#define ZYGOTE_NFDS	4		/* stdin, stdout, stderr, report */

struct zygote_hdr {
	uint32_t	 pty;
	uint32_t	 argc;
	uint32_t	 envc;
};

/*
 * In a new shim, before shim(): a session of its own, FDS as 0 to 3 (stdin,
 * stdout, stderr, the report pipe; with PTY, 0 to 2 are the terminal, made
 * the controlling one) and no other descriptor.
 */
static void
shim_stdio(const int fds[ZYGOTE_NFDS], int pty)
{
	int	 i;

	setsid();
	for (i = 0; i < ZYGOTE_NFDS; i++) {
		if (fds[i] == i)	/* kept across exec all the same */
			fcntl(i, F_SETFD, 0);
		else if (dup2(fds[i], i) == -1)
			_exit(126);
	}
	if (pty)
		ioctl(0, TIOCSCTTY, 0);
	close_range(ZYGOTE_NFDS, ~0U, 0);
}

/* One request's message: the bytes and the descriptors attached. */
struct zygote_msg {
	struct msghdr	 mh;
	struct iovec	 iov;
	union {
		struct cmsghdr	 h;
		char		 b[CMSG_SPACE(ZYGOTE_NFDS * sizeof(int))];
	}		 cm;
};

static void
zygote_msg_init(struct zygote_msg *zm, void *data, size_t len)
{
	memset(zm, 0, sizeof *zm);
	zm->iov.iov_base = data;
	zm->iov.iov_len = len;
	zm->mh.msg_iov = &zm->iov;
	zm->mh.msg_iovlen = 1;
	zm->mh.msg_control = zm->cm.b;
	zm->mh.msg_controllen = sizeof zm->cm.b;
}

/* The next NUL-terminated string of a request, or the zygote gives up. */
static char *
zygote_str(char **s, char *end)
{
	char	*r = *s, *z;

	if (r >= end || (z = memchr(r, '\0', (size_t)(end - r))) == NULL)
		_exit(126);
	*s = z + 1;
	return r;
}

/* In the zygote: wait for a request on fd 3, then become its shim. */
static void
zygote_child(int ctl)
{
	static char		 msg[ZYGOTE_MSG_MAX + 1];
	struct zygote_msg	 zm;
	struct zygote_hdr	 h;
	struct cmsghdr		*ch;
	char			*s, *end, *cwd, **argv, *k;
	int			 fds[ZYGOTE_NFDS], i, null;
	ssize_t			 n;
	uint32_t		 j;

	child_setup_common();
	prctl(PR_SET_NAME, "holt-shim");
	if (ctl != 3 && dup2(ctl, 3) == -1)
		_exit(126);
	/* 0 to 2 held open, so what arrives lands above 3. */
	if ((null = open("/dev/null", O_RDWR)) != -1) {
		for (i = 0; i < 3; i++)
			if (null != i)
				dup2(null, i);
	}
	close_range(4, ~0U, 0);

	zygote_msg_init(&zm, msg, ZYGOTE_MSG_MAX);
	do
		n = recvmsg(3, &zm.mh, MSG_CMSG_CLOEXEC);
	while (n == -1 && errno == EINTR);
	if (n <= 0)
		_exit(0);	/* envd let it go */
	ch = CMSG_FIRSTHDR(&zm.mh);
	if ((zm.mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || ch == NULL ||
	    ch->cmsg_level != SOL_SOCKET || ch->cmsg_type != SCM_RIGHTS ||
	    ch->cmsg_len != CMSG_LEN(sizeof fds) ||
	    (size_t)n < sizeof h)
		_exit(126);
	memcpy(fds, CMSG_DATA(ch), sizeof fds);
	memcpy(&h, msg, sizeof h);
	s = msg + sizeof h;
	end = msg + n;
	if (h.argc == 0 || h.argc > ZYGOTE_MSG_MAX || h.envc > ZYGOTE_MSG_MAX)
		_exit(126);
	cwd = zygote_str(&s, end);
	argv = xcalloc((size_t)h.argc + 1, sizeof *argv);
	for (j = 0; j < h.argc; j++)
		argv[j] = zygote_str(&s, end);

	shim_stdio(fds, h.pty);		/* fd 3, the socket, goes */
	for (j = 0; j < h.envc; j++) {
		k = zygote_str(&s, end);
		setenv(k, zygote_str(&s, end), 1);
	}
	shim(argv, cwd);
}

/* Fork the next zygote, when there is none. */
static void
zygote_make(void)
{
	int	 sv[2];
	pid_t	 pid;

	if (zygote_pid != -1 || paused || shutting_down ||
	    mono_ms() < zygote_retry_ms)
		return;
	/* Out of pids or memory: try again later, not every loop. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		zygote_retry_ms = mono_ms() + 100;
		return;
	}
	if ((pid = fork()) == -1) {
		close(sv[0]);
		close(sv[1]);
		zygote_retry_ms = mono_ms() + 100;
		return;
	}
	if (pid == 0)
		zygote_child(sv[1]);
	close(sv[1]);
	zygote_pid = pid;
	zygote_fd = sv[0];
}

/* It is gone or taken: forget it (reap() collects a dead one). */
static void
zygote_forget(void)
{
	if (zygote_fd != -1)
		close(zygote_fd);
	zygote_fd = -1;
	zygote_pid = -1;
}

/*
 * Hand a command to the zygote: its pid, now the command's shim, or -1
 * when it can't be (then fork as before).
 */
static pid_t
zygote_take(char **argv, const char *cwd, const cJSON *env, int pty,
    const int fds[ZYGOTE_NFDS])
{
	struct zygote_msg	 zm;
	struct zygote_hdr	 h;
	struct cmsghdr		*ch;
	struct buf		 b;
	const cJSON		*e;
	pid_t			 pid = -1;
	size_t			 i;

	if (zygote_pid == -1 || paused)
		return -1;
	memset(&h, 0, sizeof h);
	h.pty = (uint32_t)pty;
	buf_init(&b);
	buf_add(&b, &h, sizeof h);
	buf_add(&b, cwd, strlen(cwd) + 1);
	for (i = 0; argv[i] != NULL; i++)
		buf_add(&b, argv[i], strlen(argv[i]) + 1);
	h.argc = (uint32_t)i;
	cJSON_ArrayForEach(e, env) {
		if (!cJSON_IsString(e) || e->string == NULL)
			continue;
		buf_add(&b, e->string, strlen(e->string) + 1);
		buf_add(&b, e->valuestring, strlen(e->valuestring) + 1);
		h.envc++;
	}
	if (b.len > ZYGOTE_MSG_MAX) {
		buf_release(&b);
		return -1;
	}
	memcpy(b.data, &h, sizeof h);

	zygote_msg_init(&zm, b.data, b.len);
	ch = CMSG_FIRSTHDR(&zm.mh);
	ch->cmsg_level = SOL_SOCKET;
	ch->cmsg_type = SCM_RIGHTS;
	ch->cmsg_len = CMSG_LEN(ZYGOTE_NFDS * sizeof(int));
	memcpy(CMSG_DATA(ch), fds, ZYGOTE_NFDS * sizeof(int));
	if (sendmsg(zygote_fd, &zm.mh, MSG_DONTWAIT | MSG_NOSIGNAL) ==
	    (ssize_t)b.len)
		pid = zygote_pid;
	else
		kill(zygote_pid, SIGKILL);
	buf_release(&b);
	zygote_forget();
	return pid;
}

static struct proc *
proc_spawn(const cJSON *req, char **cause)
{
	char		**argv, *cwd;
	const char	 *s;
	const cJSON	 *env, *e, *pty = cJSON_GetObjectItemCaseSensitive(req,
	    "pty"), *in = cJSON_GetObjectItemCaseSensitive(req, "stdin");
	struct proc	 *p;
	int		  o[2] = { -1, -1 }, er[2] = { -1, -1 }, i[2] = { -1, -1 };
	int		  sp[2], zfds[ZYGOTE_NFDS];
	int		  master = -1, slave = -1, wfd = -1, wdir = 0;
	struct stat	  st;
	struct winsize	  ws;
	pid_t		  pid;
	double		  t;
	unsigned long long since;

	if ((argv = argv_from(req, cause)) == NULL)
		return NULL;
	/*
	 * "within": the command gets the resolved file as its stdin and, for
	 * a directory, as its working directory, never the name, which a
	 * link swapped in later could lead elsewhere.
	 */
	if ((s = json_str(req, "within")) != NULL) {
		if (cJSON_IsObject(pty)) {
			*cause = xstrdup("exec: within and pty exclude each "
			    "other");
			argv_free(argv);
			return NULL;
		}
		if ((wfd = envd_file_open_within(s, &wdir, cause)) == -1) {
			argv_free(argv);
			return NULL;
		}
	}
	s = json_str(req, "cwd");
	if (wfd != -1 && wdir)
		cwd = xstrdup("/proc/self/fd/0");
	else if (s == NULL || *s == '\0')
		cwd = xstrdup("/workspace");
	else if (*s != '/')
		cwd = xprintf("/workspace/%s", s);
	else
		cwd = xstrdup(s);
	if (!(wfd != -1 && wdir) && (stat(cwd, &st) != 0 ||
	    !S_ISDIR(st.st_mode))) {
		*cause = xprintf("cwd '%s': %s", cwd, errno != 0 &&
		    !S_ISDIR(st.st_mode) ? "not a directory" : strerror(errno));
		free(cwd);
		argv_free(argv);
		if (wfd != -1)
			close(wfd);
		return NULL;
	}
	if (cJSON_IsObject(pty)) {
		if ((master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1 ||
		    grantpt(master) != 0 || unlockpt(master) != 0 ||
		    (slave = open(ptsname(master), O_RDWR | O_NOCTTY |
		    O_CLOEXEC)) == -1) {
			*cause = xprintf("pty: %s", strerror(errno));
			if (master != -1)
				close(master);
			free(cwd);
			argv_free(argv);
			return NULL;
		}
		memset(&ws, 0, sizeof ws);
		ws.ws_col = (unsigned short)json_num(pty, "cols", 80);
		ws.ws_row = (unsigned short)json_num(pty, "rows", 24);
		ioctl(master, TIOCSWINSZ, &ws);
	} else {
		if (pipe2(o, O_CLOEXEC) != 0 || pipe2(er, O_CLOEXEC) != 0 ||
		    pipe2(i, O_CLOEXEC) != 0)
			fatal("pipe2");
		/* Bigger pipes: fewer wake-ups when output floods. */
		fcntl(o[0], F_SETPIPE_SZ, 1024 * 1024);
	}

	if (pipe2(sp, O_CLOEXEC) != 0)
		fatal("pipe2");
	since = boot_ticks();
	since = since > 0 ? since - 1 : 0;	/* the kernel's rounding */
	zfds[0] = master != -1 ? slave : wfd != -1 ? wfd : i[0];
	zfds[1] = master != -1 ? slave : o[1];
	zfds[2] = master != -1 ? slave : er[1];
	zfds[3] = sp[1];
	env = cJSON_GetObjectItemCaseSensitive(req, "env");
	if ((pid = zygote_take(argv, cwd, env, master != -1, zfds)) != -1)
		;	/* the zygote has it */
	else if ((pid = fork()) == -1) {
		*cause = xprintf("fork: %s", strerror(errno));
		close(sp[0]);
		close(sp[1]);
		if (wfd != -1)
			close(wfd);
		free(cwd);
		argv_free(argv);
		return NULL;
	}
	else if (pid == 0) {
		child_setup_common();
		shim_stdio(zfds, master != -1);
		cJSON_ArrayForEach(e, env) {
			if (cJSON_IsString(e) && e->string != NULL)
				setenv(e->string, e->valuestring, 1);
		}
		shim(argv, cwd);
	}
	free(cwd);
	argv_free(argv);
	if (wfd != -1)
		close(wfd);

	p = xcalloc(1, sizeof *p);
	p->pid = pid;
	p->start_ms = mono_ms();
	p->since = since;
	close(sp[1]);
	p->status_fd = sp[0];
	file_set_nonblock(p->status_fd);
	buf_init(&p->out.ring);
	buf_init(&p->err.ring);
	buf_init(&p->in);
	p->err.fd = -1;
	p->err.name = "stderr";
	if (master != -1) {
		close(slave);
		p->pty = 1;
		p->out.fd = master;
		p->out.name = "pty";
		p->in_fd = dup(master);
		file_set_cloexec(p->in_fd);
	} else {
		close(o[1]);
		close(er[1]);
		close(i[0]);
		p->out.fd = o[0];
		p->out.name = "stdout";
		p->err.fd = er[0];
		p->in_fd = i[1];
	}
	file_set_nonblock(p->out.fd);
	if (p->err.fd != -1)
		file_set_nonblock(p->err.fd);
	file_set_nonblock(p->in_fd);
	if (cJSON_IsString(in))
		buf_adds(&p->in, in->valuestring);
	/* stdin: true keeps it open for "stdin" requests; else EOF. */
	if (!p->pty && !cJSON_IsTrue(in))
		p->in_eof = 1;
	if (!p->pty && p->in_eof && p->in.len == 0) {
		close(p->in_fd);
		p->in_fd = -1;
	}
	t = json_num(req, "timeout_ms", 0);
	if (t > 0)
		p->deadline = p->start_ms + (uint64_t)t;
	p->next = procs;
	procs = p;
	return p;
}

static void proc_join(struct proc *, struct client *, double,
    const cJSON *, const char *);

/*
 * An exec whose token names a command still kept is one sent again (its
 * "started" was lost with a connection): it re-joins that command from
 * the start of its output instead of running it twice.
 */
static void
op_exec(struct client *c, double id, const cJSON *req)
{
	struct proc	*p;
	const char	*token = json_str(req, "token");
	char		*cause = NULL;
	cJSON		*o;

	if ((p = proc_find_token(token)) != NULL) {
		proc_join(p, c, id, req, "started");
		return;
	}
	if ((p = proc_spawn(req, &cause)) == NULL) {
		reply_error(c, id, "%s", cause);
		free(cause);
		return;
	}
	if (token != NULL)
		p->token = xstrdup(token);
	proc_sub(p, c, id, json_bool(req, "b64", 0));
	o = event_new(id, "started");
	cJSON_AddNumberToObject(o, "pid", p->pid);
	client_send(c, o);
}

static struct proc *
req_proc(struct client *c, double id, const cJSON *req)
{
	struct proc	*p;
	double		 pid = json_num(req, "pid", -1);

	if (pid <= 0 || (p = proc_find((pid_t)pid)) == NULL) {
		reply_error(c, id, "pid %.0f: no such command", pid);
		return NULL;
	}
	return p;
}

static void
op_stdin(struct client *c, double id, const cJSON *req)
{
	struct proc	*p;

	if ((p = req_proc(c, id, req)) == NULL)
		return;
	if (p->exited || p->in_fd == -1) {
		reply_error(c, id, "pid %ld: stdin is closed", (long)p->pid);
		return;
	}
	if (p->in.len > STDIN_MAX) {
		reply_error(c, id, "pid %ld: stdin buffer is full",
		    (long)p->pid);
		return;
	}
	envd_data_get(req, &p->in);
	if (json_bool(req, "eof", 0))
		p->in_eof = 1;
	reply_ok(c, id);
}

static int
signal_number(const cJSON *req)
{
	const cJSON	*s = cJSON_GetObjectItemCaseSensitive(req, "signal");
	static const struct { const char *n; int s; } names[] = {
		{ "INT", SIGINT }, { "TERM", SIGTERM }, { "KILL", SIGKILL },
		{ "HUP", SIGHUP }, { "QUIT", SIGQUIT }, { "USR1", SIGUSR1 },
		{ "USR2", SIGUSR2 }, { "STOP", SIGSTOP }, { "CONT", SIGCONT },
		{ "WINCH", SIGWINCH },
	};
	const char	*n;
	size_t		 i;

	if (cJSON_IsNumber(s))
		return s->valueint > 0 && s->valueint < NSIG ? s->valueint : -1;
	if (!cJSON_IsString(s))
		return SIGTERM;
	n = s->valuestring;
	if (strncmp(n, "SIG", 3) == 0)
		n += 3;
	for (i = 0; i < nitems(names); i++) {
		if (strcmp(names[i].n, n) == 0)
			return names[i].s;
	}
	return -1;
}

static void
op_signal(struct client *c, double id, const cJSON *req)
{
	struct proc	*p;
	int		 sig;

	if ((p = req_proc(c, id, req)) == NULL)
		return;
	if ((sig = signal_number(req)) == -1) {
		reply_error(c, id, "unknown signal");
		return;
	}
	if (!p->exited) {
		if (json_bool(req, "tree", sig == SIGKILL))
			kill_tree(p->pid, sig);
		else if (kill(-p->pid, sig) != 0)
			kill(p->pid, sig);
	}
	reply_ok(c, id);
}

static void
op_resize(struct client *c, double id, const cJSON *req)
{
	struct proc	*p;
	struct winsize	 ws;

	if ((p = req_proc(c, id, req)) == NULL)
		return;
	if (!p->pty || p->out.fd == -1) {
		reply_error(c, id, "pid %ld: no terminal", (long)p->pid);
		return;
	}
	memset(&ws, 0, sizeof ws);
	ws.ws_col = (unsigned short)json_num(req, "cols", 80);
	ws.ws_row = (unsigned short)json_num(req, "rows", 24);
	ioctl(p->out.fd, TIOCSWINSZ, &ws);
	reply_ok(c, id);
}

static void
replay(struct proc *p, struct stream *s, struct client *c, double id,
    double from, int b64)
{
	uint64_t	 start = s->end - s->ring.len, off;
	cJSON		*o;
	size_t		 chunk;
	char		*enc;

	off = from < (double)start ? start : (uint64_t)from;
	while (off < s->end) {
		chunk = s->end - off > READ_CHUNK ? READ_CHUNK : s->end - off;
		o = event_new(id, s->name);
		cJSON_AddNumberToObject(o, "pid", p->pid);
		if (b64) {
			enc = envd_b64_encode(s->ring.data + (off - start),
			    chunk);
			cJSON_AddStringToObject(o, "data_b64", enc);
			free(enc);
		} else
			envd_data_set(o, s->ring.data + (off - start), chunk);
		cJSON_AddNumberToObject(o, "offset", (double)off);
		client_send(c, o);
		off += chunk;
	}
}

/*
 * Client c follows command p as request id: event ev ("attached", or
 * "started" for a re-sent exec), then the output held from the request's
 * offsets on, then live output or its exit.
 */
static void
proc_join(struct proc *p, struct client *c, double id, const cJSON *req,
    const char *ev)
{
	double		 off = json_num(req, "offset", 0);
	cJSON		*o;
	int		 b64 = json_bool(req, "b64", 0);

	o = event_new(id, ev);
	cJSON_AddNumberToObject(o, "pid", p->pid);
	cJSON_AddBoolToObject(o, "running", !p->exited);
	client_send(c, o);
	replay(p, &p->out, c, id, json_num(req, p->pty ? "pty_offset" :
	    "stdout_offset", off), b64);
	replay(p, &p->err, c, id, json_num(req, "stderr_offset", off), b64);
	if (p->exited)
		proc_send_exit(p, c, id);
	else
		proc_sub(p, c, id, b64);
}

static void
op_attach(struct client *c, double id, const cJSON *req)
{
	struct proc	*p;

	if ((p = req_proc(c, id, req)) != NULL)
		proc_join(p, c, id, req, "attached");
}

static void
op_ps(struct client *c, double id)
{
	struct proc	*p;
	cJSON		*o = event_new(id, NULL), *a, *e;

	cJSON_AddBoolToObject(o, "ok", 1);
	a = cJSON_AddArrayToObject(o, "commands");
	for (p = procs; p != NULL; p = p->next) {
		e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "pid", p->pid);
		cJSON_AddBoolToObject(e, "running", !p->exited);
		cJSON_AddBoolToObject(e, "pty", p->pty);
		cJSON_AddNumberToObject(e, "clients", (double)p->nsubs);
		cJSON_AddItemToArray(a, e);
	}
	client_send(c, o);
}

/* services ------------------------------------------------------------ */

static struct service *
svc_find(const char *name)
{
	struct service	*s;

	for (s = services; s != NULL; s = s->next) {
		if (s->want >= 0 && strcmp(s->name, name) == 0)
			return s;
	}
	return NULL;
}

static void
svc_save(void)
{
	cJSON		*root = cJSON_CreateObject(), *a, *e;
	struct service	*s;
	char		*json;
	int		 fd;

	a = cJSON_AddArrayToObject(root, "services");
	for (s = services; s != NULL; s = s->next) {
		if (s->want < 0)
			continue;
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", s->name);
		cJSON_AddStringToObject(e, "cmd", s->cmd);
		if (s->port > 0)
			cJSON_AddNumberToObject(e, "port", s->port);
		cJSON_AddBoolToObject(e, "running", s->want);
		cJSON_AddItemToArray(a, e);
	}
	json = json_print(root);
	cJSON_Delete(root);
	fd = openat(state_fd, "services.json.tmp", O_WRONLY | O_CREAT |
	    O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1 || file_write_all(fd, json, strlen(json)) != 0 ||
	    fsync(fd) != 0 || renameat(state_fd, "services.json.tmp",
	    state_fd, "services.json") != 0)
		log_warn("services.json");
	if (fd != -1)
		close(fd);
	free(json);
}

static void
svc_log_open(struct service *s)
{
	char		*name = xprintf("logs/%s.log", s->name);
	struct stat	 st;

	if (s->log_fd != -1)
		close(s->log_fd);
	mkdirat(state_fd, "logs", 0700);
	s->log_fd = openat(state_fd, name, O_WRONLY | O_CREAT | O_APPEND |
	    O_NOFOLLOW | O_CLOEXEC, 0600);
	s->log_size = 0;
	if (s->log_fd != -1 && fstat(s->log_fd, &st) == 0)
		s->log_size = (uint64_t)st.st_size;
	free(name);
}

static void
svc_log(struct service *s, const char *data, size_t n)
{
	char	*a, *b;

	if (s->log_fd == -1 || s->log_size + n > SVC_LOG_MAX) {
		/* Rotate: one old file, so a log never holds more than 2x. */
		a = xprintf("logs/%s.log", s->name);
		b = xprintf("logs/%s.log.1", s->name);
		if (s->log_fd != -1)
			renameat(state_fd, a, state_fd, b);
		free(a);
		free(b);
		svc_log_open(s);
	}
	if (s->log_fd != -1 && file_write_all(s->log_fd, data, n) == 0)
		s->log_size += n;
}

static void
svc_note(struct service *s, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg, *line, *now;

	va_start(ap, fmt);
	xvasprintf(&msg, fmt, ap);
	va_end(ap);
	now = json_time_now();
	line = xprintf("[holt-envd %s] %s\n", now, msg);
	svc_log(s, line, strlen(line));
	free(now);
	free(line);
	free(msg);
}

static void
svc_start(struct service *s)
{
	int	 o[2], nullfd;
	pid_t	 pid;

	s->next_start = 0;
	if (pipe2(o, O_CLOEXEC) != 0)
		fatal("pipe2");
	if ((pid = fork()) == -1) {
		close(o[0]);
		close(o[1]);
		s->next_start = mono_ms() + 1000;
		return;
	}
	if (pid == 0) {
		child_setup_common();
		setsid();
		if ((nullfd = open("/dev/null", O_RDONLY)) != -1)
			dup2(nullfd, 0);
		dup2(o[1], 1);
		dup2(o[1], 2);
		close_range(3, ~0U, 0);
		if (chdir("/workspace") != 0)
			_exit(126);
		execl("/bin/sh", "sh", "-c", s->cmd, (char *)NULL);
		_exit(127);
	}
	close(o[1]);
	if (s->out_fd != -1)
		close(s->out_fd);
	s->out_fd = o[0];
	file_set_nonblock(s->out_fd);
	s->pid = pid;
	s->started_ms = mono_ms();
	svc_note(s, "started pid %ld: %s", (long)pid, s->cmd);
}

static void
svc_kill(struct service *s)
{
	if (s->pid > 0)
		kill_tree_hard(s->pid);
}

static void svc_read(struct service *);

static void
svc_exited(struct service *s, int status)
{
	uint64_t	 ran = mono_ms() - s->started_ms, delay;
	int		 k;

	/* Its last words go in the log before the note of its death. */
	for (k = 0; k < 64 && s->out_fd != -1; k++) {
		uint64_t before = s->log_size;
		svc_read(s);
		if (s->log_size == before)
			break;
	}
	s->pid = 0;
	s->last_status = status;
	if (WIFEXITED(status))
		svc_note(s, "exited with code %d", WEXITSTATUS(status));
	else
		svc_note(s, "killed by signal %d", WTERMSIG(status));
	if (!s->want || shutting_down)
		return;
	/* Backoff: 0.5 s doubling to 30 s while it keeps dying quickly. */
	if (ran >= SVC_STABLE_MS)
		s->fails = 0;
	delay = 500ULL << (s->fails < 6 ? s->fails : 6);
	if (delay > SVC_BACKOFF_MAX)
		delay = SVC_BACKOFF_MAX;
	s->fails++;
	s->restarts++;
	s->next_start = mono_ms() + delay;
	svc_note(s, "restarting in %llu ms", (unsigned long long)delay);
}

static struct service *
svc_new(const char *name, const char *cmd, int port)
{
	struct service	*s = xcalloc(1, sizeof *s);

	s->name = xstrdup(name);
	s->cmd = xstrdup(cmd);
	s->port = port;
	s->out_fd = s->log_fd = -1;
	s->next = services;
	services = s;
	return s;
}

static int
svc_name_ok(const char *n)
{
	size_t	 i;

	if (n == NULL || *n == '\0' || strlen(n) > 64 || *n == '.')
		return 0;
	for (i = 0; n[i] != '\0'; i++) {
		if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= 'A' &&
		    n[i] <= 'Z') || (n[i] >= '0' && n[i] <= '9') ||
		    n[i] == '-' || n[i] == '_' || n[i] == '.'))
			return 0;
	}
	return 1;
}

static char *
svc_tail(struct service *s, int lines)
{
	struct buf	 b = BUF_INIT;
	const char	*files[2] = { "logs/%s.log.1", "logs/%s.log" };
	char		*name, tmp[65536], *p, *out;
	int		 fd, i, seen = 0;
	ssize_t		 n;

	for (i = 0; i < 2; i++) {
		name = xprintf(files[i], s->name);
		fd = openat(state_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		free(name);
		if (fd == -1)
			continue;
		while ((n = read(fd, tmp, sizeof tmp)) > 0)
			buf_add(&b, tmp, (size_t)n);
		close(fd);
	}
	if (b.len == 0)
		return buf_detach(&b, NULL);
	p = b.data + b.len;
	if (p > b.data && p[-1] == '\n')
		p--;
	while (p > b.data) {
		if (p[-1] == '\n' && ++seen == lines)
			break;
		p--;
	}
	out = xstrdup(p);
	buf_release(&b);
	return out;
}

static void
op_service(struct client *c, double id, const cJSON *req)
{
	const char	*action = json_str(req, "action");
	const char	*name = json_str(req, "name");
	struct service	*s;
	char		*cmd, *tail;
	cJSON		*o, *a, *e;
	const cJSON	*argv;
	struct buf	 b = BUF_INIT;

	if (action == NULL)
		action = "";
	if (strcmp(action, "ls") == 0) {
		o = event_new(id, NULL);
		cJSON_AddBoolToObject(o, "ok", 1);
		a = cJSON_AddArrayToObject(o, "services");
		for (s = services; s != NULL; s = s->next) {
			if (s->want < 0)
				continue;	/* removed */
			e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "name", s->name);
			cJSON_AddStringToObject(e, "cmd", s->cmd);
			cJSON_AddNumberToObject(e, "port", s->port);
			cJSON_AddStringToObject(e, "state", s->pid > 0 ?
			    "running" : s->want ? "backoff" : "stopped");
			cJSON_AddNumberToObject(e, "pid", s->pid);
			cJSON_AddNumberToObject(e, "restarts", s->restarts);
			cJSON_AddItemToArray(a, e);
		}
		client_send(c, o);
		return;
	}
	if (!svc_name_ok(name)) {
		reply_error(c, id, "service name '%s': use letters, digits, "
		    "'-', '_' and '.'", name != NULL ? name : "");
		return;
	}
	s = svc_find(name);
	if (strcmp(action, "create") == 0) {
		argv = cJSON_GetObjectItemCaseSensitive(req, "argv");
		if (json_str(req, "cmd") != NULL)
			cmd = xstrdup(json_str(req, "cmd"));
		else if (cJSON_IsArray(argv) && cJSON_GetArraySize(argv) > 0) {
			/* Quote each word for sh -c. */
			cJSON_ArrayForEach(e, argv) {
				const char *q;
				if (!cJSON_IsString(e))
					continue;
				if (b.len != 0)
					buf_addc(&b, ' ');
				buf_addc(&b, '\'');
				for (q = e->valuestring; *q != '\0'; q++) {
					if (*q == '\'')
						buf_adds(&b, "'\\''");
					else
						buf_addc(&b, *q);
				}
				buf_addc(&b, '\'');
			}
			cmd = buf_detach(&b, NULL);
		} else {
			reply_error(c, id, "service '%s': needs cmd or argv",
			    name);
			return;
		}
		if (s != NULL) {
			svc_kill(s);
			s->want = 0;
			free(s->cmd);
			s->cmd = cmd;
			s->port = (int)json_num(req, "port", 0);
		} else {
			s = svc_new(name, cmd, (int)json_num(req, "port", 0));
			free(cmd);
		}
		s->want = 1;
		s->fails = 0;
		if (s->pid <= 0)
			svc_start(s);
		else
			s->next_start = mono_ms();	/* after it is reaped */
		svc_save();
		o = event_new(id, NULL);
		cJSON_AddBoolToObject(o, "ok", 1);
		cJSON_AddNumberToObject(o, "pid", s->pid);
		client_send(c, o);
		return;
	}
	if (s == NULL) {
		reply_error(c, id, "service '%s': no such service", name);
		return;
	}
	if (strcmp(action, "logs") == 0) {
		tail = svc_tail(s, (int)json_num(req, "lines", 100));
		o = event_new(id, NULL);
		cJSON_AddBoolToObject(o, "ok", 1);
		envd_data_set(o, tail, strlen(tail));
		free(tail);
		client_send(c, o);
		return;
	}
	if (strcmp(action, "restart") == 0) {
		s->want = 1;
		s->fails = 0;
		if (s->pid > 0) {
			svc_kill(s);
			s->next_start = mono_ms();
		} else
			svc_start(s);
		svc_save();
		reply_ok(c, id);
		return;
	}
	if (strcmp(action, "stop") == 0 || strcmp(action, "remove") == 0) {
		s->want = 0;
		s->next_start = 0;
		svc_kill(s);
		/*
		 * Removed: unlisted at once, freed at the end of the loop
		 * (-2), or once reaped (-1) if it still runs.
		 */
		if (strcmp(action, "remove") == 0)
			s->want = s->pid > 0 ? -1 : -2;
		svc_save();
		reply_ok(c, id);
		return;
	}
	reply_error(c, id, "service: unknown action '%s'", action);
}

static void
svc_load(void)
{
	int		 fd;
	struct buf	 b = BUF_INIT;
	char		 tmp[4096];
	ssize_t		 n;
	cJSON		*root, *e;
	struct service	*s;

	fd = openat(state_fd, "services.json", O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd == -1)
		return;
	while ((n = read(fd, tmp, sizeof tmp)) > 0)
		buf_add(&b, tmp, (size_t)n);
	close(fd);
	root = cJSON_ParseWithLength(b.data != NULL ? b.data : "", b.len);
	buf_release(&b);
	if (root == NULL) {
		log_warnx("services.json: corrupt file, no services started");
		return;
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root,
	    "services")) {
		if (!svc_name_ok(json_str(e, "name")) ||
		    json_str(e, "cmd") == NULL)
			continue;
		s = svc_new(json_str(e, "name"), json_str(e, "cmd"),
		    (int)json_num(e, "port", 0));
		s->want = json_bool(e, "running", 1);
		if (s->want)
			svc_start(s);
	}
	cJSON_Delete(root);
}

/* watch --------------------------------------------------------------- */

static void
watch_emit(struct watch *w, const char *path, const char *kind, int dir)
{
	cJSON	*o;

	if (w->c == NULL)
		return;
	o = event_new(w->id, "change");
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddStringToObject(o, "kind", kind);
	cJSON_AddBoolToObject(o, "dir", dir);
	client_send(w->c, o);
}

/*
 * Watch dir and, depth levels down, its directories. With report set (a
 * directory that appeared while watched), what is already in it is sent as
 * "create": it may have been made before its watch was added, and inotify
 * would never say so. A name may then be reported twice, never missed.
 */
static void
watch_add_tree(struct watch *w, const char *dir, int depth, int report)
{
	int		 wd;
	DIR		*d;
	struct dirent	*de;
	char		*sub;

	wd = inotify_add_watch(w->fd, dir, IN_CREATE | IN_DELETE | IN_MODIFY |
	    IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB |
	    IN_DONT_FOLLOW | IN_ONLYDIR | IN_EXCL_UNLINK);
	if (wd < 0)
		return;
	if (wd >= w->ndirs) {
		w->dirs = xreallocarray(w->dirs, (size_t)wd + 1,
		    sizeof *w->dirs);
		memset(w->dirs + w->ndirs, 0, ((size_t)wd + 1 -
		    (size_t)w->ndirs) * sizeof *w->dirs);
		w->ndirs = wd + 1;
	}
	free(w->dirs[wd]);
	w->dirs[wd] = xstrdup(dir);
	if (depth <= 0 || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_type != DT_DIR && !report)
			continue;
		sub = xprintf("%s/%s", dir, de->d_name);
		if (report)
			watch_emit(w, sub, "create", de->d_type == DT_DIR);
		if (de->d_type == DT_DIR)
			watch_add_tree(w, sub, depth - 1, report);
		free(sub);
	}
	closedir(d);
}

static void
op_watch(struct client *c, double id, const cJSON *req)
{
	struct watch	*w;
	char		*abs, *cause;
	int		 fd;

	if ((fd = envd_file_open_dir(json_str(req, "path") != NULL ?
	    json_str(req, "path") : "/workspace", &abs, &cause)) == -1) {
		reply_error(c, id, "%s", cause);
		free(cause);
		return;
	}
	close(fd);
	w = xcalloc(1, sizeof *w);
	if ((w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1) {
		reply_error(c, id, "inotify: %s", strerror(errno));
		free(w);
		free(abs);
		return;
	}
	w->id = id;
	w->c = c;
	watch_add_tree(w, abs, json_bool(req, "recursive", 1) ? 32 : 0, 0);
	free(abs);
	w->next = watches;
	watches = w;
	reply_ok(c, id);
}

static void
watch_read(struct watch *w)
{
	char				 data[8192], *p, *path;
	ssize_t				 n;
	const struct inotify_event	*ev;
	const char			*kind;

	n = read(w->fd, data, sizeof data);
	if (n <= 0)
		return;
	for (p = data; p < data + n; p += sizeof *ev + ev->len) {
		ev = (const struct inotify_event *)(void *)p;
		if (ev->wd < 0 || ev->wd >= w->ndirs || w->dirs[ev->wd] == NULL)
			continue;
		if (ev->mask & IN_CREATE)
			kind = "create";
		else if (ev->mask & IN_DELETE)
			kind = "delete";
		else if (ev->mask & IN_MOVED_FROM)
			kind = "move_from";
		else if (ev->mask & IN_MOVED_TO)
			kind = "move_to";
		else if (ev->mask & (IN_MODIFY | IN_CLOSE_WRITE))
			kind = "modify";
		else if (ev->mask & IN_ATTRIB)
			kind = "attrib";
		else
			continue;
		path = ev->len > 0 ? xprintf("%s/%s", w->dirs[ev->wd],
		    ev->name) : xstrdup(w->dirs[ev->wd]);
		watch_emit(w, path, kind, (ev->mask & IN_ISDIR) != 0);
		if ((ev->mask & (IN_CREATE | IN_MOVED_TO)) &&
		    (ev->mask & IN_ISDIR))
			watch_add_tree(w, path, 32, 1);
		free(path);
	}
}

static void
watch_free(struct watch *w)
{
	int	 i;

	close(w->fd);
	for (i = 0; i < w->ndirs; i++)
		free(w->dirs[i]);
	free(w->dirs);
	free(w);
}

static void
op_unwatch(struct client *c, double id, const cJSON *req)
{
	struct watch	*w;
	double		 wid = json_num(req, "watch", -1);

	for (w = watches; w != NULL; w = w->next) {
		if (w->c == c && w->id == wid) {
			w->c = NULL;
			reply_ok(c, id);
			return;
		}
	}
	reply_error(c, id, "watch %.0f: no such watch", wid);
}

/* forward ------------------------------------------------------------- */

/*
 * After its reply, the connection carries raw bytes to and from
 * 127.0.0.1:port inside the sandbox, until either side closes.
 */
static void
op_forward(struct client *c, double id, const cJSON *req)
{
	int			 port = (int)json_num(req, "port", 0), s;
	struct sockaddr_in	 sin;
	size_t			 rest;

	if (port <= 0 || port > 65535) {
		reply_error(c, id, "forward: bad port");
		return;
	}
	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1) {
		reply_error(c, id, "socket: %s", strerror(errno));
		return;
	}
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/*
	 * Loopback connects complete or fail at once, except when the
	 * listener's backlog is full: then the connect goes on in the
	 * background, and a failure shows as the stream's end.
	 */
	if (connect(s, (struct sockaddr *)&sin, sizeof sin) != 0 &&
	    errno != EINPROGRESS) {
		reply_error(c, id, "port %d: %s", port, strerror(errno));
		close(s);
		return;
	}
	reply_ok(c, id);
	c->tcp = s;
	buf_init(&c->to_tcp);
	/* Bytes after the request frame are already the stream's. */
	rest = c->dec.in.len - c->dec.off;
	if (rest > 0)
		buf_add(&c->to_tcp, c->dec.in.data + c->dec.off, rest);
	frame_decoder_release(&c->dec);
	frame_decoder_init(&c->dec, 0);
}

/* requests ------------------------------------------------------------ */

/*
 * Every process but us: kill(-1) from pid 1 of our own pid namespace. Run
 * anywhere else it would signal every process of the host that we may
 * signal, so it is refused (main() also refuses to run as anything but
 * pid 1).
 */
static void
all_signal(int sig)
{
	if (getpid() != 1)
		BUG();
	kill(-1, sig);
}

static void
op_pause(struct client *c, double id, const cJSON *req)
{
	const char	*mode = json_str(req, "mode");

	if (!paused) {
		paused = 1;
		paused_at = mono_ms();
		if (mode == NULL || strcmp(mode, "signal") == 0) {
			paused = 2;
			all_signal(SIGSTOP);
		}
	}
	reply_ok(c, id);
}

static void
op_resume(struct client *c, double id)
{
	uint64_t	 gap;
	struct proc	*p;
	struct service	*s;

	if (paused) {
		if (paused == 2)
			all_signal(SIGCONT);
		/* Time spent paused does not count against timeouts. */
		gap = mono_ms() - paused_at;
		for (p = procs; p != NULL; p = p->next) {
			if (p->deadline != 0)
				p->deadline += gap;
			p->start_ms += gap;
		}
		for (s = services; s != NULL; s = s->next) {
			if (s->next_start != 0)
				s->next_start += gap;
		}
		paused = 0;
	}
	reply_ok(c, id);
}

static void
handle(struct client *c, cJSON *req)
{
	const char	*op = json_str(req, "op");
	double		 id = json_num(req, "id", 0);
	cJSON		*r;

	if (op == NULL) {
		reply_error(c, id, "request without op");
		return;
	}
	if (strcmp(op, "hello") == 0) {
		r = event_new(id, NULL);
		cJSON_AddBoolToObject(r, "ok", 1);
		cJSON_AddNumberToObject(r, "version", ENVD_VERSION);
		cJSON_AddStringToObject(r, "envd", "holt-envd " PACKAGE_VERSION);
		cJSON_AddStringToObject(r, "sandbox", sandbox_id_arg);
		client_send(c, r);
	} else if (strcmp(op, "exec") == 0)
		op_exec(c, id, req);
	else if (strcmp(op, "stdin") == 0)
		op_stdin(c, id, req);
	else if (strcmp(op, "signal") == 0)
		op_signal(c, id, req);
	else if (strcmp(op, "resize") == 0)
		op_resize(c, id, req);
	else if (strcmp(op, "attach") == 0)
		op_attach(c, id, req);
	else if (strcmp(op, "ps") == 0)
		op_ps(c, id);
	else if (strcmp(op, "service") == 0)
		op_service(c, id, req);
	else if (strcmp(op, "watch") == 0)
		op_watch(c, id, req);
	else if (strcmp(op, "unwatch") == 0)
		op_unwatch(c, id, req);
	else if (strcmp(op, "forward") == 0)
		op_forward(c, id, req);
	else if (strcmp(op, "pause") == 0)
		op_pause(c, id, req);
	else if (strcmp(op, "resume") == 0)
		op_resume(c, id);
	else if (strcmp(op, "shutdown") == 0) {
		reply_ok(c, id);
		shutting_down = 1;
	} else if (envd_file_is_op(op)) {
		r = envd_file_op(op, req);
		cJSON_AddNumberToObject(r, "id", id);
		client_send(c, r);
	} else
		reply_error(c, id, "unknown op '%s'", op);
}

static void
client_read(struct client *c)
{
	char	 data[READ_CHUNK], *cause = NULL;
	ssize_t	 n;
	cJSON	*req;
	int	 r;

	n = read(c->fd, data, sizeof data);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		c->eof = 1;
		if (c->tcp != -1)
			return;
		client_drop(c, NULL);
		return;
	}
	if (c->tcp != -1) {
		buf_add(&c->to_tcp, data, (size_t)n);
		return;
	}
	frame_decoder_feed(&c->dec, data, (size_t)n);
	while (!c->dead && c->tcp == -1) {
		r = frame_decoder_next(&c->dec, &req, &cause);
		if (r == 0)
			break;
		if (r == -1) {
			client_drop(c, cause);
			free(cause);
			return;
		}
		handle(c, req);
		cJSON_Delete(req);
	}
}

static void
client_write(struct client *c)
{
	ssize_t	 n;

	n = write(c->fd, c->out.data + c->out_off, client_queued(c));
	c->wblocked = n == -1 && errno == EAGAIN;
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		client_drop(c, NULL);
		return;
	}
	c->out_off += (size_t)n;
	if (c->out_off == c->out.len) {
		buf_reset(&c->out);
		c->out_off = 0;
	} else if (c->out_off >= 256 * 1024 && c->out_off >= c->out.len / 2) {
		/* A client that never quite catches up: reclaim the front. */
		buf_remove_front(&c->out, c->out_off);
		c->out_off = 0;
	}
}

static void
fwd_tcp_read(struct client *c)
{
	char	 data[READ_CHUNK];
	ssize_t	 n;

	n = read(c->tcp, data, sizeof data);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		c->tcp_eof = 1;
		return;
	}
	buf_add(&c->out, data, (size_t)n);
}

static void
fwd_tcp_write(struct client *c)
{
	ssize_t	 n;

	n = write(c->tcp, c->to_tcp.data, c->to_tcp.len);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		client_drop(c, NULL);
		return;
	}
	buf_remove_front(&c->to_tcp, (size_t)n);
}

static void
client_accept(void)
{
	struct client	*c;
	int		 fd;

	fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd == -1)
		return;
	c = xcalloc(1, sizeof *c);
	c->fd = fd;
	c->tcp = -1;
	frame_decoder_init(&c->dec, CLIENT_IN_MAX);
	buf_init(&c->out);
	c->next = clients;
	clients = c;
	/* A client writes its first requests at once: no poll round for them. */
	client_read(c);
}

static void
client_free(struct client *c)
{
	close(c->fd);
	if (c->tcp != -1)
		close(c->tcp);
	buf_release(&c->to_tcp);
	frame_decoder_release(&c->dec);
	buf_release(&c->out);
	free(c);
}

/* reaping ------------------------------------------------------------- */

static void
reap(void)
{
	struct signalfd_siginfo	 si;
	struct proc		*p;
	struct service		*s, **sp;
	pid_t			 pid;
	int			 status;

	while (read(sig_fd, &si, sizeof si) == (ssize_t)sizeof si)
		;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == zygote_pid) {	/* killed while it waited */
			zygote_forget();
			continue;
		}
		if ((p = proc_find(pid)) != NULL && !p->reaped) {
			p->reaped = 1;
			if (!p->exited)
				proc_exited(p, status);
			continue;
		}
		for (sp = &services; (s = *sp) != NULL; sp = &s->next) {
			if (s->pid != pid)
				continue;
			if (s->want == -1)
				s->want = -2;	/* freed at the end of the loop */
			else
				svc_exited(s, status);
			break;
		}
		/* Anything else is an orphan we inherited: reaped, done. */
	}
	/* A waiting shim stopped (by anyone): replaced, not handed work. */
	if (zygote_pid != -1 && waitpid(zygote_pid, &status, WNOHANG |
	    WUNTRACED) == zygote_pid) {
		if (WIFSTOPPED(status))
			kill(zygote_pid, SIGKILL);	/* reaped above, later */
		zygote_forget();
	}
}

static void
svc_read(struct service *s)
{
	char	 data[READ_CHUNK];
	ssize_t	 n;

	n = read(s->out_fd, data, sizeof data);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close(s->out_fd);
		s->out_fd = -1;
		return;
	}
	svc_log(s, data, (size_t)n);
}

/* loop ---------------------------------------------------------------- */

enum kind { K_SIG, K_LISTEN, K_CLIENT, K_TCP, K_OUT, K_ERR, K_IN, K_SVC,
    K_WATCH, K_STATUS, K_PROXY };
struct slot {
	enum kind	 kind;
	void		*ptr;
};

static int
proc_throttled(struct proc *p)
{
	size_t	 i;

	for (i = 0; i < p->nsubs; i++) {
		if (client_queued(p->subs[i].c) >= CLIENT_OUT_MAX)
			return 1;
	}
	return 0;
}

static void
stdin_write(struct proc *p)
{
	ssize_t	 n;

	if (p->in.len > 0) {
		n = write(p->in_fd, p->in.data, p->in.len);
		if (n > 0)
			buf_remove_front(&p->in, (size_t)n);
		else if (n == -1 && errno != EAGAIN && errno != EINTR) {
			buf_reset(&p->in);
			p->in_eof = 1;
		}
	}
	if (p->in.len == 0 && p->in_eof) {
		/* A terminal's EOF is ^D at the start of a line. */
		if (p->pty && write(p->in_fd, "\004", 1) < 0)
			log_debug("pty eof: %s", strerror(errno));
		close(p->in_fd);
		p->in_fd = -1;
	}
}

/*
 * The shim's report: the command's end is known as soon as the shim writes
 * it, before the shim itself exits and is reaped. A pipe closed with
 * nothing in it means the shim was killed: reap() handles that.
 */
static void
status_read(struct proc *p)
{
	int	 real;

	if (status_take(p, &real) == 1)
		proc_exited(p, real);
}

static void
loop(void)
{
	struct pollfd	*pfd = NULL;
	struct slot	*slot = NULL;
	size_t		 n, alloc = 0, i;
	struct client	*c, **cp;
	struct proc	*p;
	struct service	*s, **sp;
	struct watch	*w, **wp;
	uint64_t	 now, next;
	int		 timeout, r;

#define ADD(f, ev, k, ptr_) do {					\
	if (n == alloc) {						\
		alloc = alloc == 0 ? 64 : alloc * 2;			\
		pfd = xreallocarray(pfd, alloc, sizeof *pfd);		\
		slot = xreallocarray(slot, alloc, sizeof *slot);	\
	}								\
	pfd[n].fd = (f);						\
	pfd[n].events = (short)(ev);					\
	pfd[n].revents = 0;						\
	slot[n].kind = (k);						\
	slot[n].ptr = (ptr_);						\
	n++;								\
} while (0)

	for (;;) {
		now = mono_ms();
		next = 0;
		/* Timers: command timeouts, service restarts. */
		if (!paused) {
			for (p = procs; p != NULL; p = p->next) {
				if (p->exited || p->deadline == 0)
					continue;
				if (p->deadline <= now && !p->timed_out) {
					p->timed_out = 1;
					kill_tree_hard(p->pid);
				} else if (!p->timed_out && (next == 0 ||
				    p->deadline < next))
					next = p->deadline;
			}
			for (s = services; s != NULL; s = s->next) {
				if (s->next_start == 0 || s->pid > 0)
					continue;
				if (s->next_start <= now)
					svc_start(s);
				else if (next == 0 || s->next_start < next)
					next = s->next_start;
			}
		}
		if (shutting_down) {
			for (c = clients; c != NULL; c = c->next) {
				if (!c->dead && client_queued(c) > 0) {
					fcntl(c->fd, F_SETFL, 0);
					client_write(c);
				}
			}
			all_signal(SIGKILL);
			exit(0);
		}

		/* The next exec's shim, forked while nothing waits. */
		zygote_make();

		n = 0;
		ADD(sig_fd, POLLIN, K_SIG, NULL);
		ADD(listen_fd, POLLIN, K_LISTEN, NULL);
		if (proxy_listen != -1)
			ADD(proxy_listen, POLLIN, K_PROXY, NULL);
		for (c = clients; c != NULL; c = c->next) {
			short ev = 0;
			if (c->dead)
				continue;
			if (!c->eof && (c->tcp == -1 ||
			    c->to_tcp.len < FWD_BUF))
				ev |= POLLIN;
			if (client_queued(c) > 0)
				ev |= POLLOUT;
			ADD(c->fd, ev, K_CLIENT, c);
			if (c->tcp != -1) {
				ev = 0;
				if (!c->tcp_eof && client_queued(c) < FWD_BUF)
					ev |= POLLIN;
				if (c->to_tcp.len > 0)
					ev |= POLLOUT;
				ADD(c->tcp, ev, K_TCP, c);
			}
		}
		for (p = procs; p != NULL; p = p->next) {
			int thr = proc_throttled(p);
			if (p->out.fd != -1 && !thr)
				ADD(p->out.fd, POLLIN, K_OUT, p);
			if (p->err.fd != -1 && !thr)
				ADD(p->err.fd, POLLIN, K_ERR, p);
			if (p->in_fd != -1 && (p->in.len > 0 || p->in_eof))
				ADD(p->in_fd, POLLOUT, K_IN, p);
			if (p->status_fd != -1 && !p->exited)
				ADD(p->status_fd, POLLIN, K_STATUS, p);
		}
		for (s = services; s != NULL; s = s->next) {
			if (s->out_fd != -1)
				ADD(s->out_fd, POLLIN, K_SVC, s);
		}
		for (w = watches; w != NULL; w = w->next)
			ADD(w->fd, POLLIN, K_WATCH, w);

		timeout = -1;
		if (next != 0)
			timeout = next > now ? (int)(next - now) : 0;
		r = poll(pfd, n, timeout);
		if (r == -1 && errno != EINTR)
			fatal("poll");
		for (i = 0; r > 0 && i < n; i++) {
			if (pfd[i].revents == 0)
				continue;
			switch (slot[i].kind) {
			case K_SIG:
				reap();
				break;
			case K_LISTEN:
				client_accept();
				break;
			case K_PROXY:
				envd_proxy_accept(proxy_listen, proxy_fd);
				break;
			case K_CLIENT:
				c = slot[i].ptr;
				if (c->dead)
					break;
				if (pfd[i].revents & POLLOUT)
					client_write(c);
				if (!c->dead && (pfd[i].revents &
				    (POLLIN | POLLHUP | POLLERR)))
					client_read(c);
				break;
			case K_TCP:
				c = slot[i].ptr;
				if (c->dead)
					break;
				if (pfd[i].revents & POLLOUT)
					fwd_tcp_write(c);
				if (!c->dead && (pfd[i].revents &
				    (POLLIN | POLLHUP | POLLERR)))
					fwd_tcp_read(c);
				break;
			case K_OUT:
				p = slot[i].ptr;
				if (p->out.fd != -1)
					stream_read(p, &p->out);
				break;
			case K_ERR:
				p = slot[i].ptr;
				if (p->err.fd != -1)
					stream_read(p, &p->err);
				break;
			case K_IN:
				p = slot[i].ptr;
				if (p->in_fd != -1)
					stdin_write(p);
				break;
			case K_SVC:
				s = slot[i].ptr;
				if (s->out_fd != -1)
					svc_read(s);
				break;
			case K_WATCH:
				watch_read(slot[i].ptr);
				break;
			case K_STATUS:
				p = slot[i].ptr;
				if (p->status_fd != -1 && !p->exited)
					status_read(p);
				break;
			}
		}
		/* Replies and events made above go out now, not a poll later. */
		for (c = clients; c != NULL; c = c->next) {
			if (!c->dead && !c->wblocked && client_queued(c) > 0)
				client_write(c);
		}
		/* Forwards end when both directions are done. */
		for (c = clients; c != NULL; c = c->next) {
			if (c->dead || c->tcp == -1)
				continue;
			if (c->eof && c->to_tcp.len == 0)
				shutdown(c->tcp, SHUT_WR);
			if (c->tcp_eof && client_queued(c) == 0)
				shutdown(c->fd, SHUT_WR);
			if (c->eof && c->tcp_eof && c->to_tcp.len == 0 &&
			    client_queued(c) == 0)
				client_drop(c, NULL);
		}
		for (cp = &clients; (c = *cp) != NULL; ) {
			if (c->dead) {
				*cp = c->next;
				client_free(c);
			} else
				cp = &c->next;
		}
		procs_trim();
		for (sp = &services; (s = *sp) != NULL; ) {
			if (s->want == -2) {
				*sp = s->next;
				if (s->out_fd != -1)
					close(s->out_fd);
				if (s->log_fd != -1)
					close(s->log_fd);
				free(s->name);
				free(s->cmd);
				free(s);
			} else
				sp = &s->next;
		}
		for (wp = &watches; (w = *wp) != NULL; ) {
			if (w->c == NULL) {
				*wp = w->next;
				watch_free(w);
			} else
				wp = &w->next;
		}
	}
}

static void
usage(void)
{
	fprintf(stderr, "usage: holt-envd --listen-fd N [--state-fd N] "
	    "[--id ID] [--user UID [--sudo PATH]] [--proxy-fd N]\n"
	    "(holt-envd is started by holt inside a sandbox; "
	    "see holt-envd(8))\n");
}

/*
 * --user UID: started as root of its namespace with only CAP_SETUID,
 * CAP_SETGID and CAP_SETPCAP (holt does this where the sandbox's user is a
 * host uid of its own), become UID for good before anything else: the
 * bounding set emptied, then the change of uid drops the rest.
 */
static void
become_user(const char *arg)
{
	char		*end;
	unsigned long	 v;
	uid_t		 uid;
	FILE		*f;
	char		 line[256];
	int		 r;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (*arg == '\0' || *end != '\0' || errno != 0 || v == 0 ||
	    v > 65535)
		fatalx("--user %s: not a uid", arg);
	uid = (uid_t)v;
	/* Out of the bounding set first (CAP_SETPCAP), then the rest goes. */
	for (r = 0; r <= 63; r++) {
		if (prctl(PR_CAPBSET_DROP, r) != 0 && errno != EINVAL)
			fatal("--user: PR_CAPBSET_DROP %d", r);
	}
	if (setgroups(0, NULL) != 0 || setresgid((gid_t)uid, (gid_t)uid,
	    (gid_t)uid) != 0 || setresuid(uid, uid, uid) != 0)
		fatal("--user %lu", v);
	if (getuid() != uid || geteuid() != uid || getgid() != (gid_t)uid)
		fatalx("--user %lu: still %lu", v, (unsigned long)geteuid());
	/* Changing from uid 0 cleared every capability: check it did. */
	if ((f = fopen("/proc/self/status", "re")) != NULL) {
		while (fgets(line, sizeof line, f) != NULL) {
			if ((strncmp(line, "CapEff:", 7) == 0 ||
			    strncmp(line, "CapBnd:", 7) == 0) &&
			    strspn(line + 7, "\t 0") != strlen(line + 7) - 1)
				fatalx("--user %lu: capabilities left: %s", v,
				    line);
		}
		fclose(f);
	}
}

int
main(int argc, char **argv)
{
	sigset_t	 set;
	struct sigaction sa;
	char		*cause = NULL;
	const char	*user = NULL, *sudo = NULL, *base;
	int		 ch, fd, r, sig;
	static const struct option longopts[] = {
		{ "listen-fd", required_argument, NULL, 'l' },
		{ "state-fd", required_argument, NULL, 's' },
		{ "id", required_argument, NULL, 'i' },
		{ "user", required_argument, NULL, 'u' },
		{ "sudo", required_argument, NULL, 'S' },
		{ "proxy-fd", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};

	base = strrchr(argv[0], '/') != NULL ? strrchr(argv[0], '/') + 1 :
	    argv[0];
	if (strcmp(base, "sudo") == 0)
		return envd_sudo_main(argc, argv);
	log_prog = "holt-envd";
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			listen_fd = atoi(optarg);
			break;
		case 's':
			state_fd = atoi(optarg);
			break;
		case 'i':
			sandbox_id_arg = optarg;
			break;
		case 'u':
			user = optarg;
			break;
		case 'S':
			sudo = optarg;
			break;
		case 'P':
			proxy_fd = atoi(optarg);
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
	if (listen_fd < 3 || fcntl(listen_fd, F_GETFD) == -1) {
		usage();
		return 2;
	}
	/* It stops and kills "every process": that must mean the sandbox's. */
	if (getpid() != 1)
		fatalx("must run as pid 1 of its own pid namespace (holt starts "
		    "it with bwrap --as-pid-1 --unshare-pid)");
	if (state_fd >= 0 && fcntl(state_fd, F_GETFD) == -1)
		state_fd = -1;
	if (user != NULL) {
		if (sudo != NULL)
			envd_sudo_start(sudo);
		become_user(user);
		if (chdir("/workspace") != 0)
			log_warn("/workspace");
	}
	/* Nothing inside may open our descriptors through /proc/1/fd. */
	prctl(PR_SET_DUMPABLE, 0);
	/* No abstract socket or signal outside the sandbox, even --net on. */
	if ((r = sandbox_landlock_scope(&cause)) != 0) {
		if (r == -1)
			log_warnx("%s", cause);
		else
			log_debug("%s", cause);
		free(cause);
	}
	/* Keep stdio, the listener and the state dir; close the rest. */
	for (fd = 3; fd < 1024; fd++) {
		if (fd != listen_fd && fd != state_fd && fd != proxy_fd)
			close(fd);
	}
	if (proxy_fd != -1) {
		file_set_cloexec(proxy_fd);
		if ((proxy_listen = envd_proxy_listen(ENVD_PROXY_PORT)) == -1)
			log_warn("proxy: 127.0.0.1:%d", ENVD_PROXY_PORT);
	}
	file_set_cloexec(listen_fd);
	file_set_nonblock(listen_fd);
	if (state_fd != -1)
		file_set_cloexec(state_fd);
	umask(022);
	/* Ignored signals are inherited through exec: give commands defaults. */
	for (sig = 1; sig < NSIG; sig++) {
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			signal(sig, SIG_DFL);
	}
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		fatal("signalfd");
	srandom((unsigned int)(getpid() ^ mono_ms()));
	envd_file_init();
	if (state_fd != -1)
		svc_load();
	log_info("sandbox %s: envd ready", sandbox_id_arg);
	loop();
	return 0;
}
