/*
 * sandbox.h: local persistent sandboxes (DESIGN 3-4) and the blocking side
 * of the envd protocol.
 *
 * A struct sandbox is one sandbox's metadata, read from
 * data/sandboxes/<id>/meta.json; it holds no connection and no process.
 * sandbox_create launches the sandbox (bubblewrap with holt-envd as pid 1)
 * and returns it running; sandbox_open finds an existing one by id or
 * unique name and never creates one. State is derived each time it is asked
 * (pid file, process start time, control socket), so any process may open a
 * sandbox another process created.
 *
 * Talking to a running sandbox: sandbox_connect returns a blocking,
 * close-on-exec socket on which "hello" has been answered; the caller then
 * speaks the envd protocol (holt-envd(8), PROTOCOL) itself, or uses the
 * envd_* helpers below for one-shot work. Frames are holt.h's.
 */
#ifndef SANDBOX_H
#define SANDBOX_H

#include <stdint.h>

#include "holt.h"

struct sandbox;	/* opaque: one sandbox's metadata */

/* UNREACHABLE: its provider cannot be asked (the ssh host is down). */
enum sandbox_state { SANDBOX_RUNNING, SANDBOX_PAUSED, SANDBOX_STOPPED,
	SANDBOX_UNREACHABLE };

struct sandbox_opts {
	const char	*name;		/* NULL: none */
	int		 net;		/* SANDBOX_NET_* */
#define SANDBOX_NET_OFF		0	/* loopback only */
#define SANDBOX_NET_ON		1	/* the host's network */
#define SANDBOX_NET_POLICY	2	/* loopback, and holt's proxy */
	long long	 memory;	/* bytes, 0: no limit */
	int		 pids;		/* max processes, 0: no limit */
	const char	*image;		/* NULL: the host's; or a rootfs dir */
	long long	 idle_pause_ms;	/* paused when idle that long; 0 never */
	/* Fill the new directory before the first start (a fork), or NULL. */
	int		(*fill)(const char *dir, void *arg, char **cause);
	void		*fill_arg;
	const char	*forked_from;	/* recorded in meta.json */
	/*
	 * A fork on a provider that makes it itself (fill is the local
	 * provider's way): of this sandbox, at this checkpoint (0: now).
	 */
	struct sandbox	*fork_of;
	long long	 fork_at;
	const char	*provider;	/* "ssh:host"...; NULL: holt.conf's */
};

/*
 * holt.conf's defaults for a new sandbox (net, memory, pids), which every
 * way of making one starts from before its own flags; name stays NULL.
 */
void	 sandbox_opts_config(struct sandbox_opts *);
/* Create and start a sandbox. */
struct sandbox *sandbox_create(const struct sandbox_opts *, char **cause);
/*
 * Find a sandbox by id or unique name. NULL with *cause set when it does not
 * exist (sandbox_errno_unknown() is then 1) or its meta.json is corrupt.
 */
struct sandbox *sandbox_open(const char *id_or_name, char **cause);
int	 sandbox_errno_unknown(void);	/* last sandbox_open: no such one */
/* Every sandbox, sorted by creation time; corrupt ones are warned about. */
struct sandbox **sandbox_list(size_t *n);
void	 sandbox_list_free(struct sandbox **, size_t);
void	 sandbox_free(struct sandbox *);

const char *sandbox_id(struct sandbox *);
const char *sandbox_name(struct sandbox *);	/* "" when unnamed */
const char *sandbox_dir(struct sandbox *);	/* data/sandboxes/<id> */
const char *sandbox_created(struct sandbox *);	/* RFC 3339 */
int	 sandbox_net(struct sandbox *);	/* SANDBOX_NET_* */
const char *sandbox_net_name(int);	/* "off", "on", "policy" */
int	 sandbox_net_parse(const char *, int *);	/* -1: none of those */
long long sandbox_memory(struct sandbox *);
int	 sandbox_pids(struct sandbox *);
uint64_t sandbox_last_used(struct sandbox *);	/* ms since the epoch */
long long sandbox_idle_pause(struct sandbox *);	/* ms; 0: never */
/* "30m", "90s", "2h", "500ms", "0": ms into *ms; -1 if it is none */
int	 sandbox_duration_parse(const char *, long long *ms);
/* meta.json's provider: "local", "ssh:[user@]host" (sandbox-provider.h) */
const char *sandbox_provider_spec(struct sandbox *);
/*
 * Set by the light front end: a sandbox whose provider is not linked in
 * is handed to holt-full (the callback does not return).
 */
extern void (*sandbox_foreign)(const char *spec);
/*
 * Set by the CLI's sandbox commands: connecting to a paused sandbox
 * (exec, sh, put, get, a forwarded connection) resumes it first. NULL
 * (the server): a paused sandbox is an error, as it says.
 */
extern int (*sandbox_wake)(struct sandbox *, char **cause);
/* A command (not a service) runs in it: seen from the host's /proc. */
int	 sandbox_busy(struct sandbox *);
char	*sandbox_workspace(struct sandbox *);	/* host path of workspace/, caller frees */
char	*sandbox_socket_path(struct sandbox *);	/* run/envd.sock, caller frees */

enum sandbox_state sandbox_state(struct sandbox *);
/*
 * The same, at once: a provider that must ask another machine answers
 * what it last knew and asks again in the background. For the status the
 * server sends; sandbox_state where the answer decides what to do.
 */
enum sandbox_state sandbox_state_known(struct sandbox *);
const char *sandbox_state_name(enum sandbox_state);

int	 sandbox_start(struct sandbox *, char **cause);	/* no-op unless stopped */
int	 sandbox_stop(struct sandbox *, char **cause);	/* no-op if stopped */
/* stop and rm only: opens even with a missing or corrupt meta.json. */
struct sandbox *sandbox_open_damaged(const char *idn, char **cause);
int	 sandbox_pause(struct sandbox *, char **cause);
int	 sandbox_resume(struct sandbox *, char **cause);
int	 sandbox_rm(struct sandbox *, char **cause);	/* stop + delete */
/* Delete the record of one on another provider, not asking it. */
int	 sandbox_forget(struct sandbox *, char **cause);
/* Drop the root overlay's upper layer (installs); restarts a running one. */
int	 sandbox_reset_root(struct sandbox *, char **cause);
const char *sandbox_image(struct sandbox *);	/* "host" or a path */
/* A connected envd socket, "hello" answered, blocking, CLOEXEC. */
int	 sandbox_connect(struct sandbox *, char **cause);
/*
 * The same with "hello" (id 0) sent but its reply not awaited, to save a
 * round trip: the caller's next frames may be sent at once, and it must
 * skip the frame with id 0 that comes first.
 */
int	 sandbox_connect_nowait(struct sandbox *, char **cause);
/*
 * Connected, and nothing sent: the caller sends sandbox_hello_new() in the
 * same write as its first request (one wake-up of envd less).
 */
int	 sandbox_connect_later(struct sandbox *, char **cause);
cJSON	*sandbox_hello_new(void);
void	 sandbox_touch(struct sandbox *);	/* update "last used" */

/*
 * sandbox-checkpoint.c: checkpoints of the sandbox's files (checkpoint.h).
 * sandbox_restore stops a running sandbox, puts checkpoint id back, calls
 * record (to log what was done; tag is the caller's, kept in the journal)
 * and starts it again, services and all. sandbox_recover finishes a
 * restore a crash cut short, calling record again with its tag.
 */
struct checkpoint_info;
int	 sandbox_checkpoint(struct sandbox *, struct checkpoint_info *,
	     char **cause);
int	 sandbox_restore(struct sandbox *, long long id, const char *tag,
	     int (*record)(void *, const char *tag, char **), void *arg,
	     char **cause);
int	 sandbox_recover(struct sandbox *, int (*record)(void *, const char *,
	     char **), void *arg, char **cause);
/*
 * The same in a thread, off the caller's loop: cb(arg, ci, NULL) or
 * cb(arg, NULL, error) is called from base's loop when it is done (NULL:
 * it could not be started; take it with sandbox_checkpoint). After
 * sandbox_checkpoint_cancel, cb is never called.
 */
struct event_base;
struct sandbox_checkpoint_job;
typedef void (*sandbox_checkpoint_cb)(void *, const struct checkpoint_info *,
	     const char *);
struct sandbox_checkpoint_job *sandbox_checkpoint_start(struct sandbox *,
	     struct event_base *, sandbox_checkpoint_cb, void *);
void	 sandbox_checkpoint_cancel(struct sandbox_checkpoint_job *);
/*
 * A restore the same way: the sandbox is stopped here, the files put
 * back in a thread, then record is called and the sandbox started from
 * base's loop, and cb(arg, NULL) or cb(arg, error). NULL (*cause set):
 * it failed before anything was written. The sandbox must outlive it
 * unless sandbox_restore_cancel (cb is then never called; a restore cut
 * short is finished by sandbox_recover).
 */
struct sandbox_restore_job;
typedef void (*sandbox_restore_cb)(void *, const char *);
struct sandbox_restore_job *sandbox_restore_start(struct sandbox *,
	     struct event_base *, long long id, const char *tag,
	     int (*record)(void *, const char *, char **),
	     sandbox_restore_cb, void *arg, char **cause);
void	 sandbox_restore_cancel(struct sandbox_restore_job *);
/* A new sandbox from checkpoint at (0: from now), started. */
struct sandbox *sandbox_fork(struct sandbox *, long long at, const char *name,
	     char **cause);

/* sandbox-seccomp.c: the BPF program for bwrap --seccomp, in a memfd. */
int	 sandbox_seccomp_fd(char **cause);

/*
 * envd-client.c: blocking calls for one-shot users (the CLI, tests). Each
 * takes a socket from sandbox_connect; they may be mixed on one socket but
 * not used while an exec started by the caller is still streaming.
 */
#define ENVD_VERSION 1
#define ENVD_READ_MAX (4U * 1024 * 1024)	/* bytes per read/write frame */

/* Payload encoding: "data" when valid UTF-8 without NUL, else "data_b64". */
void	 envd_data_set(cJSON *, const void *, size_t);
int	 envd_data_get(const cJSON *, struct buf *);	/* -1: bad base64 */
char	*envd_b64_encode(const void *, size_t);	/* caller frees */
void	 envd_b64_add(struct buf *, const void *, size_t);
int	 envd_utf8_ok(const void *, size_t);
int	 envd_b64_decode(const char *, struct buf *);

/* Send req (an "id" is added) and wait for the reply with that id. */
cJSON	*envd_call(int fd, cJSON *req, char **cause);	/* takes req */
char	*envd_read_file(int fd, const char *path, size_t *lenp, char **cause);
int	 envd_write_file(int fd, const char *path, const void *, size_t,
	     int mode, char **cause);
cJSON	*envd_list(int fd, const char *path, int depth, char **cause);
/*
 * Run cmd (by /bin/sh -c) and collect its output; out/err may be NULL.
 * Returns the exit code (128 + signal when killed, 124 on timeout), -1 on a
 * protocol error.
 */
int	 envd_exec_simple(int fd, const char *cmd, int timeout_ms,
	     struct buf *out, struct buf *err, char **cause);
/*
 * Run argv (taken) with in's bytes, to its end, as its standard input;
 * its stderr (the first 4 KiB) into err, which may be NULL. Returns the
 * exit code (128 + signal when killed; one that ends before its input
 * does is not fed the rest), -1 on a protocol error.
 */
int	 envd_exec_feed(int fd, cJSON *argv, int in, struct buf *err,
	     char **cause);
/* The other way: argv's (taken) standard output written to out. */
int	 envd_exec_drain(int fd, cJSON *argv, int out, struct buf *err,
	     char **cause);
/*
 * sandbox-copy.c: /workspace of a sandbox elsewhere (a provider other
 * than local) and its copy here, workspace/ in its directory. copy_in
 * sends dir into it; copy_out makes dir what it has, extracted by tar in
 * a bubblewrap jail where only dir is writable, as the sandbox's files
 * are the agent's and trusted with nothing else here.
 */
int	 sandbox_copy_in(struct sandbox *, const char *dir, char **cause);
int	 sandbox_copy_out(struct sandbox *, const char *dir, char **cause);

#endif
