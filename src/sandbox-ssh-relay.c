/*
 * sandbox-ssh-relay.c: a connection to a remote sandbox's envd that
 * survives the ssh connection under it (DESIGN 17). The caller gets one
 * end of a socket pair; a detached relay process holds the other and
 * runs `ssh HOST holt sandbox bridge ID`, passing frames both ways and
 * noting, for each request still open, what it needs to go on: the pid
 * of a command and how far into each of its streams the caller has got.
 *
 * When ssh ends (the network dropped, the ControlMaster was killed), the
 * relay runs it again, for up to holt.conf's ssh_retry_s (unless the
 * host's holt answers that it cannot connect: a sandbox stopped there),
 * and sends each open request again: a running command as "attach" {pid,
 * stdout_offset, stderr_offset}, which envd answers with the output from
 * there on (it keeps a command's output for that), its "attached" reply
 * swallowed; anything else as it was. An exec whose "started" had not
 * come is sent again with the "token" the relay gave it, so envd re-joins
 * it if it had started. The caller sees one unbroken stream. A
 * connection that never worked, or cannot be made again in time, ends
 * each open request with an error naming the host ("lost": true for the
 * latter), then the socket.
 *
 * A watch is made again too, under its id, followed by one "change" of
 * its directory (what changed while the connection was down is unknown).
 *
 * After a "forward" request the connection carries a TCP stream, which
 * cannot be resumed: the relay only copies bytes, and ends with ssh.
 *
 * Costs: each frame is parsed and encoded once more (O(frame)); a
 * stalled side stops the relay reading the other past RELAY_BUF bytes,
 * so memory stays bounded.
 */
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "sandbox-provider.h"
#include "sandbox-ssh.h"

#define RELAY_BUF	(1024 * 1024)	/* bytes queued one way */
#define RELAY_HELLO_MS	60000		/* the first connection, ssh included */

enum { OUT_STDOUT, OUT_STDERR, OUT_PTY, OUT_N };

struct relay_req {
	double			 id;
	cJSON			*req;
	int			 stream;	/* RELAY_* */
#define RELAY_ONCE	0	/* one reply */
#define RELAY_COMMAND	1	/* exec, attach: until "exit" */
#define RELAY_WATCH	2	/* watch: until unwatch */
	long			 pid;
	double			 off[OUT_N];
	int			 swallow;	/* drop the next "attached" */
	struct relay_req	*next;
};

struct relay {
	const char		*spec;
	char			**argv;
	int			 cl;		/* the caller's socket */
	pid_t			 pid;		/* ssh */
	int			 rin, rout, rerr;
	struct frame_decoder	 cdec, rdec;
	struct buf		 tocl, torem, err;
	struct relay_req	*reqs;
	int			 raw;		/* a forwarded TCP stream */
	int			 live;		/* a frame came on this ssh */
	int			 ever;		/* on any ssh */
	int			 status;	/* of the last ssh */
	uint64_t		 spawned;	/* when this ssh started */
	uint64_t		 lost;		/* when it last worked */
	uint64_t		 retry_ms;	/* to make it again: ssh_retry_s */
	int			 failures;	/* since it last worked */
};

static uint64_t
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static int
ssh_spawn(struct relay *r)
{
	int	 pin[2], pout[2], perr[2], null;

	if (pipe2(pin, O_CLOEXEC) != 0 || pipe2(pout, O_CLOEXEC) != 0 ||
	    pipe2(perr, O_CLOEXEC) != 0)
		return -1;
	if ((r->pid = fork()) == -1)
		return -1;
	if (r->pid == 0) {
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		dup2(perr[1], 2);
		if ((null = open("/dev/null", O_RDONLY)) != -1 && null > 2)
			close(null);
		signal(SIGPIPE, SIG_DFL);
		execvp(r->argv[0], r->argv);
		dprintf(2, "%s: %s\n", r->argv[0], strerror(errno));
		_exit(255);
	}
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	r->rin = pin[1];
	r->rout = pout[0];
	r->rerr = perr[0];
	nonblock(r->rin);
	nonblock(r->rout);
	nonblock(r->rerr);
	frame_decoder_release(&r->rdec);
	frame_decoder_init(&r->rdec, 0);
	buf_reset(&r->err);
	r->live = 0;
	r->spawned = now_ms();
	return 0;
}

static void
ssh_end(struct relay *r)
{
	char	 b[4096];
	ssize_t	 n;

	if (r->rin != -1)
		close(r->rin);
	/* What ssh said last is why it ended. */
	if (r->rerr != -1) {
		fcntl(r->rerr, F_SETFL, fcntl(r->rerr, F_GETFL) & ~O_NONBLOCK);
		while ((n = read(r->rerr, b, sizeof b)) > 0)
			if (r->err.len < 65536)
				buf_add(&r->err, b, (size_t)n);
		close(r->rerr);
	}
	if (r->rout != -1)
		close(r->rout);
	r->rin = r->rout = r->rerr = -1;
	r->status = 0;
	if (r->pid > 0)
		while (waitpid(r->pid, &r->status, 0) == -1 && errno == EINTR)
			;
	r->pid = 0;
}

static void
queue(struct buf *b, const cJSON *f)
{
	char	*enc;
	size_t	 len;

	if ((enc = frame_encode(f, &len)) == NULL)
		return;
	buf_add(b, enc, len);
	free(enc);
}

static struct relay_req *
req_find(struct relay *r, double id)
{
	struct relay_req	*q;

	for (q = r->reqs; q != NULL; q = q->next)
		if (q->id == id)
			return q;
	return NULL;
}

static void
req_done(struct relay *r, struct relay_req *q)
{
	struct relay_req	**pp;

	for (pp = &r->reqs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == q) {
			*pp = q->next;
			cJSON_Delete(q->req);
			free(q);
			return;
		}
	}
}

/*
 * An exec sent again after a dropped connection may have started the
 * first time: its token has envd re-join that command, not run it twice.
 */
static void
exec_token(cJSON *f)
{
	unsigned char	 r[12];
	char		 hex[2 * sizeof r + 1];
	size_t		 i;

	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		fatal("getrandom");
	for (i = 0; i < sizeof r; i++)
		snprintf(hex + 2 * i, 3, "%02x", r[i]);
	cJSON_AddStringToObject(f, "token", hex);
}

/* A frame from the caller: noted, and sent on. */
static void
from_client(struct relay *r, cJSON *f)
{
	struct relay_req	*q;
	const char		*op = json_str(f, "op");

	if (op != NULL && strcmp(op, "exec") == 0 &&
	    json_str(f, "token") == NULL)
		exec_token(f);
	queue(&r->torem, f);
	if (op != NULL && strcmp(op, "forward") == 0) {
		/* From here on, bytes: what follows the frame is the stream's. */
		r->raw = 1;
		buf_add(&r->torem, r->cdec.in.data + r->cdec.off,
		    r->cdec.in.len - r->cdec.off);
		frame_decoder_release(&r->cdec);
		frame_decoder_init(&r->cdec, 0);
		cJSON_Delete(f);
		return;
	}
	/* An unwatch ends its watch: it is not made again. */
	if (op != NULL && strcmp(op, "unwatch") == 0 &&
	    (q = req_find(r, json_num(f, "watch", -1))) != NULL &&
	    q->stream == RELAY_WATCH)
		req_done(r, q);
	q = xcalloc(1, sizeof *q);
	q->id = json_num(f, "id", -1);
	q->req = f;
	if (op != NULL && (strcmp(op, "exec") == 0 ||
	    strcmp(op, "attach") == 0)) {
		q->stream = RELAY_COMMAND;
		if (strcmp(op, "attach") == 0)
			q->pid = (long)json_num(f, "pid", 0);
	} else if (op != NULL && strcmp(op, "watch") == 0)
		q->stream = RELAY_WATCH;
	q->next = r->reqs;
	r->reqs = q;
}

static int
stream_index(const char *ev)
{
	if (strcmp(ev, "stdout") == 0)
		return OUT_STDOUT;
	if (strcmp(ev, "stderr") == 0)
		return OUT_STDERR;
	if (strcmp(ev, "pty") == 0)
		return OUT_PTY;
	return -1;
}

/* A frame from envd: noted, and passed to the caller (or swallowed). */
static void
from_remote(struct relay *r, cJSON *f)
{
	struct relay_req	*q = req_find(r, json_num(f, "id", -1));
	const char		*ev = json_str(f, "event");
	struct buf		 data = BUF_INIT;
	int			 i;

	r->live = r->ever = 1;
	if (q == NULL)
		goto pass;
	/*
	 * A watch lives on after its "ok". Made again, its "ok" is not news,
	 * but what changed while it was down is unknown: one "change" of the
	 * watched directory has the caller look again.
	 */
	if (q->stream == RELAY_WATCH && ev == NULL && json_bool(f, "ok", 0)) {
		if (q->swallow) {
			q->swallow = 0;
			cJSON_Delete(f);
			f = cJSON_CreateObject();
			cJSON_AddNumberToObject(f, "id", q->id);
			cJSON_AddStringToObject(f, "event", "change");
			cJSON_AddStringToObject(f, "path", json_str(q->req,
			    "path") != NULL ? json_str(q->req, "path") :
			    "/workspace");
			cJSON_AddStringToObject(f, "kind", "modify");
			cJSON_AddBoolToObject(f, "dir", 1);
		}
		goto pass;
	}
	if (ev == NULL || strcmp(ev, "exit") == 0) {
		req_done(r, q);
		goto pass;
	}
	if (strcmp(ev, "started") == 0)
		q->pid = (long)json_num(f, "pid", 0);
	else if (strcmp(ev, "attached") == 0) {
		q->pid = (long)json_num(f, "pid", 0);
		if (q->swallow) {
			q->swallow = 0;
			cJSON_Delete(f);
			return;
		}
	} else if ((i = stream_index(ev)) != -1 &&
	    envd_data_get(f, &data) == 0)
		q->off[i] = json_num(f, "offset", 0) + (double)data.len;
	buf_release(&data);
pass:
	queue(&r->tocl, f);
	cJSON_Delete(f);
}

/* After a new ssh: every open request again, commands by pid. */
static void
resend(struct relay *r)
{
	struct relay_req	*q;
	cJSON			*a;

	buf_reset(&r->torem);
	for (q = r->reqs; q != NULL; q = q->next) {
		if (q->stream == RELAY_WATCH)
			q->swallow = 1;
		if (q->stream != RELAY_COMMAND || q->pid <= 0) {
			queue(&r->torem, q->req);
			continue;
		}
		a = cJSON_CreateObject();
		cJSON_AddNumberToObject(a, "id", q->id);
		cJSON_AddStringToObject(a, "op", "attach");
		cJSON_AddNumberToObject(a, "pid", (double)q->pid);
		cJSON_AddNumberToObject(a, "stdout_offset",
		    q->off[q->off[OUT_PTY] > 0 ? OUT_PTY : OUT_STDOUT]);
		cJSON_AddNumberToObject(a, "pty_offset", q->off[OUT_PTY]);
		cJSON_AddNumberToObject(a, "stderr_offset", q->off[OUT_STDERR]);
		queue(&r->torem, a);
		cJSON_Delete(a);
		q->swallow = 1;
	}
}

/*
 * The end: each open request gets why, then the socket closes. A lost
 * connection's error says "lost": true, so that the caller knows a
 * command may run on there, to be re-joined once the host is back.
 */
#define RELAY_LOST	"the connection was lost and could not be made again"

static void __attribute__((noreturn))
give_up(struct relay *r, const char *what)
{
	struct relay_req	*q;
	char			*line = sandbox_ssh_last_line(buf_str(&r->err));
	char			*msg;
	cJSON			*f;

	msg = xprintf("%s: %s: %s", r->spec, what, line);
	for (q = r->reqs; q != NULL; q = q->next) {
		f = cJSON_CreateObject();
		cJSON_AddNumberToObject(f, "id", q->id);
		cJSON_AddStringToObject(f, "error", msg);
		if (strcmp(what, RELAY_LOST) == 0)
			cJSON_AddBoolToObject(f, "lost", 1);
		queue(&r->tocl, f);
		cJSON_Delete(f);
	}
	fcntl(r->cl, F_SETFL, fcntl(r->cl, F_GETFL) & ~O_NONBLOCK);
	file_write_all(r->cl, r->tocl.data, r->tocl.len);
	_exit(0);
}

/*
 * ssh ended under us: run it again. An ssh that worked (a frame came, or
 * it lasted) restarts the clock; one that ends at once is tried again
 * after a growing pause, until r->retry_ms have gone by.
 */
static void
reconnect(struct relay *r)
{
	uint64_t	 now;
	int		 down;

	ssh_end(r);
	down = !WIFEXITED(r->status) || WEXITSTATUS(r->status) == 255;
	if (r->raw)
		give_up(r, "the forwarded connection was lost with ssh");
	if (!r->ever)
		give_up(r, down ? "cannot reach the host" : "the remote holt");
	/*
	 * ssh worked and the host's holt refused at once (the sandbox was
	 * stopped there): that is an answer, not a dropped connection.
	 */
	if (!down && !r->live && now_ms() - r->spawned < 5000)
		give_up(r, "the remote holt");
	now = now_ms();
	if (r->live || now - r->spawned > 5000) {
		r->lost = now;
		r->failures = 0;
	} else if (++r->failures > 1)
		poll(NULL, 0, r->failures > 10 ? 1000 : 100 * r->failures);
	for (;;) {
		if (now_ms() - r->lost > r->retry_ms)
			give_up(r, RELAY_LOST);
		if (ssh_spawn(r) == 0)
			break;
		poll(NULL, 0, 1000);
	}
	resend(r);
}

static int
pump_out(int fd, struct buf *b)
{
	ssize_t	 n;

	if (b->len == 0)
		return 0;
	n = write(fd, b->data, b->len);
	if (n > 0)
		buf_remove_front(b, (size_t)n);
	else if (n == -1 && errno != EAGAIN && errno != EINTR)
		return -1;
	return 0;
}

/* Bytes in from one side; -1 when it has ended. */
static int
pump_in(int fd, struct frame_decoder *dec, struct buf *raw, int is_raw)
{
	char	 b[65536];
	ssize_t	 n = read(fd, b, sizeof b);

	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
		return -1;
	if (n > 0) {
		if (is_raw)
			buf_add(raw, b, (size_t)n);
		else
			frame_decoder_feed(dec, b, (size_t)n);
	}
	return 0;
}

static void
drain(struct relay *r, struct frame_decoder *dec, int client)
{
	cJSON	*f;
	char	*why = NULL;
	int	 rc;

	while (!r->raw && (rc = frame_decoder_next(dec, &f, &why)) == 1) {
		if (client)
			from_client(r, f);
		else
			from_remote(r, f);
	}
	free(why);
}

/*
 * The caller is gone: so are we. ssh sees the end of its input and ends
 * the bridge there (which leaves running commands running); it is not
 * waited for.
 */
static void __attribute__((noreturn))
caller_gone(struct relay *r)
{
	if (r->rin != -1)
		close(r->rin);
	_exit(0);
}

static void __attribute__((noreturn))
relay_main(struct relay *r)
{
	struct pollfd	 pfd[4];

	frame_decoder_init(&r->cdec, 0);
	frame_decoder_init(&r->rdec, 0);
	nonblock(r->cl);
	if (ssh_spawn(r) != 0)
		give_up(r, "cannot run ssh");
	for (;;) {
		pfd[0].fd = r->cl;
		pfd[0].events = (r->torem.len < RELAY_BUF ? POLLIN : 0) |
		    (r->tocl.len > 0 ? POLLOUT : 0);
		pfd[1].fd = r->rout;
		pfd[1].events = r->tocl.len < RELAY_BUF ? POLLIN : 0;
		pfd[2].fd = r->rin;
		pfd[2].events = r->torem.len > 0 ? POLLOUT : 0;
		pfd[3].fd = r->rerr;
		pfd[3].events = POLLIN;
		if (poll(pfd, 4, -1) == -1) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (pump_in(r->cl, &r->cdec, &r->torem, r->raw) != 0)
				caller_gone(r);
			drain(r, &r->cdec, 1);
		}
		if ((pfd[0].revents & POLLOUT) && pump_out(r->cl, &r->tocl) != 0)
			caller_gone(r);
		if (pfd[3].revents & (POLLIN | POLLHUP)) {
			char b[4096];
			ssize_t n = read(r->rerr, b, sizeof b);
			if (n > 0 && r->err.len < 65536)
				buf_add(&r->err, b, (size_t)n);
			else if (n == 0) {
				close(r->rerr);
				r->rerr = -1;
			}
		}
		if ((pfd[2].revents & (POLLOUT | POLLERR)) &&
		    pump_out(r->rin, &r->torem) != 0)
			pfd[1].revents |= POLLHUP;
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (pump_in(r->rout, &r->rdec, &r->tocl, r->raw) == 0) {
				drain(r, &r->rdec, 0);
				continue;
			}
			reconnect(r);
		}
	}
}

/* Fork the relay, detached (its own session: a ^C is not for it). */
static int
relay_fork(int fd, const char *spec, char **argv)
{
	long long	 retry_s = config_get_num("ssh_retry_s");
	struct relay	 r;
	pid_t		 pid;
	int		 null, sig;

	if ((pid = fork()) == -1)
		return -1;
	if (pid != 0) {
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			;
		return 0;
	}
	if (fork() != 0)
		_exit(0);
	setsid();
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	{
		sigset_t all;
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
	}
	if (dup2(fd, 3) == -1)
		_exit(1);
	if ((null = open("/dev/null", O_RDWR)) != -1) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	close_range(4, ~0U, 0);
	memset(&r, 0, sizeof r);
	r.spec = spec;
	r.argv = argv;
	r.cl = 3;
	r.rin = r.rout = r.rerr = -1;
	r.retry_ms = retry_s > 0 ? (uint64_t)retry_s * 1000 : 60000;
	relay_main(&r);
}

int
sandbox_ssh_relay(const char *id, const char *spec, char **argv, int mode,
    char **cause)
{
	int	 sv[2];
	cJSON	*hello, *reply = NULL;
	char	*err = NULL;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		*cause = xprintf("sandbox '%s': socketpair: %s", id,
		    strerror(errno));
		return -1;
	}
	if (relay_fork(sv[1], spec, argv) != 0) {
		*cause = xprintf("sandbox '%s': fork: %s", id, strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	close(sv[1]);
	/* One hello in every mode: a host that is down is said here. */
	hello = sandbox_hello_new();
	if (frame_write_fd(sv[0], hello) != 0 ||
	    sandbox_wait_readable(sv[0], RELAY_HELLO_MS) <= 0 ||
	    frame_read_fd(sv[0], &reply, &err) != 1) {
		*cause = xprintf("sandbox '%s': %s: no answer%s%s", id, spec,
		    err != NULL ? ": " : "", err != NULL ? err : "");
		goto fail;
	}
	if (json_str(reply, "error") != NULL) {
		*cause = xprintf("sandbox '%s': %s", id, json_str(reply,
		    "error"));
		goto fail;
	}
	cJSON_Delete(reply);
	/* NOWAIT's caller skips a hello reply: it gets one. */
	if (mode == SANDBOX_CONNECT_NOWAIT && frame_write_fd(sv[0], hello) != 0) {
		*cause = xprintf("sandbox '%s': %s: %s", id, spec,
		    strerror(errno));
		cJSON_Delete(hello);
		close(sv[0]);
		return -1;
	}
	cJSON_Delete(hello);
	return sv[0];

fail:
	free(err);
	cJSON_Delete(reply);
	cJSON_Delete(hello);
	close(sv[0]);
	return -1;
}
