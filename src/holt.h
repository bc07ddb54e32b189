/*
 * holt.h: what every part of holt shares: allocation wrappers, logging and
 * errors, growable buffers, the framed-JSON wire format, the file layout under
 * HOLT_HOME, atomic file writes, small JSON helpers, the configuration and the
 * command table.
 *
 * Conventions (STYLE.md): a returned char * belongs to the caller, a const
 * char * is borrowed. Recoverable failures return -1 or NULL and hand back a
 * heap message through char **cause, which the caller prints and frees.
 */
#ifndef HOLT_H
#define HOLT_H

#include "config.h"

#include <sys/types.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#define HOLT_PROTOCOL_VERSION 1

#ifndef nitems
#define nitems(a) (sizeof (a) / sizeof (a)[0])
#endif

#define printflike(a, b) __attribute__((format(printf, a, b)))

/* xmalloc.c: allocation that aborts on out-of-memory. */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
void	 strv_free(char **);	/* a NULL-ended array of strings; NULL ok */
char	*xstrndup(const char *, size_t);
int	 xasprintf(char **, const char *, ...) printflike(2, 3);
int	 xvasprintf(char **, const char *, va_list);
char	*xprintf(const char *, ...) printflike(1, 2);
size_t	 xstrlcpy(char *, const char *, size_t);

/* log.c: messages for the user (stderr) and for the server's log file. */
extern const char *log_prog;	/* "holt", "holt-envd": prefix of messages */
void	 log_open(const char *path);	/* also write to this file (server) */
void	 log_set_verbose(int);
int	 log_fileno(void);	/* the log file's descriptor, or -1 */
void	 log_debug(const char *, ...) printflike(1, 2);
void	 log_info(const char *, ...) printflike(1, 2);
void	 log_warn(const char *, ...) printflike(1, 2);
void	 log_warnx(const char *, ...) printflike(1, 2);	/* no errno */
__attribute__((noreturn)) void fatal(const char *, ...) printflike(1, 2);
__attribute__((noreturn)) void fatalx(const char *, ...) printflike(1, 2);
#define BUG() fatalx("BUG: %s:%d %s", __FILE__, __LINE__, __func__)

/* buf.c: a growable byte buffer, always NUL-terminated (git's strbuf). */
struct buf {
	char	*data;
	size_t	 len;
	size_t	 alloc;
};
#define BUF_INIT { NULL, 0, 0 }
void	 buf_init(struct buf *);
void	 buf_release(struct buf *);
void	 buf_reset(struct buf *);
void	 buf_grow(struct buf *, size_t);
void	 buf_add(struct buf *, const void *, size_t);
void	 buf_adds(struct buf *, const char *);
void	 buf_addc(struct buf *, char);
void	 buf_addf(struct buf *, const char *, ...) printflike(2, 3);
void	 buf_vaddf(struct buf *, const char *, va_list);
void	 buf_remove_front(struct buf *, size_t);
char	*buf_detach(struct buf *, size_t *);	/* caller frees; buf is reset */
const char *buf_str(struct buf *);		/* "" when empty, never NULL */

/*
 * frame.c: the wire format of both sockets (client<->server, host<->envd):
 * a 4-byte big-endian length, then that many bytes of one JSON object.
 * FRAME_MAX bounds what a peer may send; a larger length is a protocol error
 * and the connection is dropped.
 */
#define FRAME_MAX (16U * 1024 * 1024)
/* Header + JSON; NULL (errno EMSGSIZE) past FRAME_MAX. */
char	*frame_encode(const cJSON *, size_t *lenp);
/*
 * Incremental decoding: feed bytes with frame_decoder_feed, then take whole
 * frames with frame_decoder_next until it returns 0. -1 means the stream is
 * broken (oversized length, not a JSON object): *cause says why.
 */
struct frame_decoder {
	struct buf	 in;
	size_t		 off;	/* consumed bytes at the front of in */
	size_t		 max;
};
void	 frame_decoder_init(struct frame_decoder *, size_t max);
void	 frame_decoder_release(struct frame_decoder *);
void	 frame_decoder_feed(struct frame_decoder *, const void *, size_t);
int	 frame_decoder_next(struct frame_decoder *, cJSON **, char **cause);
/* Blocking helpers for simple clients: 0 ok, -1 error (errno or *cause). */
int	 frame_write_fd(int fd, const cJSON *);
/* Two frames in one write (b may follow a, a may be NULL); -1 as above. */
int	 frame_write2_fd(int fd, const cJSON *a, const cJSON *b);
int	 frame_read_fd(int fd, cJSON **, char **cause);	/* 1 frame, 0 EOF, -1 error */

/*
 * paths.c: where holt keeps things (DESIGN 3). HOLT_HOME overrides the XDG
 * defaults. The returned strings are static, valid for the process.
 */
const char *paths_config_dir(void);	/* holt.conf, policy */
const char *paths_data_dir(void);	/* sessions/, sandboxes/ */
const char *paths_run_dir(void);	/* sockets, locks; created 0700 */
const char *paths_sandboxes_dir(void);
const char *paths_sessions_dir(void);
char	*paths_join(const char *, const char *);	/* caller frees */
const char *paths_self_dir(void);	/* directory of the running binary */
char	*paths_find_helper(const char *name);	/* holt-envd etc., caller frees */

/* file.c: files that must not be torn. */
int	 file_mkdir_p(const char *, mode_t);
int	 file_write_atomic(const char *path, const void *, size_t, mode_t);
int	 file_append_sync(int fd, const void *, size_t);	/* write all + fdatasync */
char	*file_read(const char *path, size_t *lenp, size_t max);	/* NUL-ended */
/* All of an open fd (at most max bytes, 0: no limit), which it closes. */
char	*file_read_fd(int fd, size_t *lenp, size_t max);
/*
 * The same for a file the agent or a repository may have made: never
 * blocks, and anything but a regular file is refused. NULL: *why says why
 * (static text), errno is EINVAL for a file of another kind.
 */
char	*file_read_regular(const char *path, size_t *lenp, size_t max,
	    const char **why);
const char *file_type_name(mode_t);	/* "a FIFO", "a directory", ... */
int	 file_rm_rf(const char *);
int	 file_set_cloexec(int);
int	 file_set_nonblock(int);
int	 file_write_all(int fd, const void *, size_t);
/*
 * A server holds a log and a lock per session: the soft limit on open
 * files goes up to the hard one at start (1024 is 500 sessions). Children
 * that run other programs get the limit holt started with back.
 */
void	 file_raise_fd_limit(void);
void	 file_restore_fd_limit(void);
/* A message for an open that failed with errno: EMFILE/ENFILE say which
 * limit was reached and what to do (caller frees). */
char	*file_open_error(const char *what, int errnum);
/* Text into an existing file (/proc, /sys: in one write); 0 or -1. */
int	 file_write_str(const char *path, const char *text);

/* One line of /proc/PID/stat: who a process is and where it hangs. */
struct proc_stat {
	pid_t			 pid, ppid, pgid, sid;
	char			 state;
	unsigned long long	 start;		/* clock ticks since boot */
};
int	 proc_stat_read(pid_t, struct proc_stat *);	/* -1: gone */
uint64_t file_du(const char *path);	/* bytes used below path */

/* json.c: small cJSON helpers. */
const char *json_str(const cJSON *, const char *key);	/* NULL if absent */
double	 json_num(const cJSON *, const char *key, double dflt);
int	 json_bool(const cJSON *, const char *key, int dflt);
char	*json_print(const cJSON *);		/* compact, caller frees */
cJSON	*json_load_file(const char *path, char **cause);
int	 json_save_file(const char *path, const cJSON *, char **cause);
char	*json_time_now(void);	/* RFC 3339 UTC with ms, caller frees */
uint64_t json_now_ms(void);	/* wall clock, ms since the epoch */
uint64_t mono_ms(void);		/* monotonic clock, ms */
uint64_t mono_us(void);		/* monotonic clock, us */

/* utf8.c: text made valid UTF-8 where it enters (U+FFFD for bad bytes). */
int	 utf8_valid(const char *, size_t);
char	*utf8_repair(const char *, size_t);	/* NULL: valid already */
unsigned int utf8_repair_json(cJSON *);		/* strings fixed, in place */
/*
 * Text the agent or a repository made, made safe to print on a terminal:
 * every control character (C0, DEL, C1, the bidirectional overrides) and
 * every ill-formed byte becomes a backslash escape as git quotes names
 * (\033, \n, \302\233). UTF8_VIS_TEXT keeps newlines, tabs and the CR of
 * a CRLF (for messages, not names). UTF8_VIS_JSON is for JSON that cJSON
 * printed (which escapes C0 only): C1 and the overrides become \u escapes
 * and an ill-formed byte U+FFFD, so the JSON stays valid and means the
 * same. utf8_vis_print formats, escapes the whole result and writes it:
 * 0, or -1 on a write error.
 */
#define UTF8_VIS_TEXT	0x1
#define UTF8_VIS_JSON	0x2
int	 utf8_cp_is_control(unsigned int);	/* the screen's test too */
void	 utf8_vis_add(struct buf *, const char *, size_t, int flags);
char	*utf8_vis(const char *, int flags);	/* caller frees */
int	 utf8_vis_print(FILE *, int flags, const char *, ...) printflike(3, 4);

/*
 * config.c: holt.conf (holt.conf(5)). "key = value" lines, '#' comments,
 * "[repo PATH-OR-URL]" sections. Lookups return the innermost value that is
 * set: command line, then the repository section, then the file, then the
 * built-in default, and config_source says which.
 */
int	 config_load(const char *path, char **cause);	/* NULL path: default */
/* Read holt.conf again if it changed since (a long-running server). */
int	 config_refresh(char **cause);
void	 config_set(const char *key, const char *value, const char *source);
void	 config_select_repo(const char *repo);
const char *config_get(const char *key);
const char *config_source(const char *key);
long long config_get_num(const char *key);
int	 config_get_bool(const char *key);
void	 config_dump(FILE *);	/* "key = value  # source" for each key */
/* The [mcp NAME] sections, in the file's order; their keys are
 * config_get("mcp.NAME.KEY"). The array stays valid until a refresh. */
size_t	 config_mcp_names(const char *const **);

/*
 * cmd.c: the command table (git's commands[], tmux's cmd_entry). One
 * const struct cmd_entry per src/cmd-*.c; holt.c dispatches on argv[0].
 */
struct cmd_entry {
	const char	*name;
	const char	*usage;		/* "[-d] [-s NAME] [TASK...]" */
	const char	*summary;	/* one line for holt --help */
	int		(*exec)(int argc, char **argv);	/* argv[0] is name */
};
extern const struct cmd_entry *cmd_table[];
const struct cmd_entry *cmd_find(const char *name);
void	 cmd_usage(const struct cmd_entry *, FILE *);
int	 cmd_wants_help(int argc, char **argv);
int	 cmd_global_options(int argc, char **argv, int *verbose);	/* -h or --help anywhere before -- */
/* Global options, set by holt.c before a command runs. */
extern const char *cmd_socket_name;	/* -L NAME */
extern const char *cmd_socket_path;	/* -S PATH */

/* Exit statuses shared by every command (holt(1) EXIT STATUS). */
#define EXIT_OK		0
#define EXIT_ERR	1	/* a failure not listed below */
#define EXIT_USAGE	2	/* bad arguments, unknown name, bad policy */
#define EXIT_LIMIT	3	/* step or budget limit */
#define EXIT_DENIED	4	/* stopped by a denial */
#define EXIT_MODEL	5	/* model error */
#define EXIT_SANDBOX	6	/* sandbox error */
#define EXIT_POLICY_ASK	10	/* holt policy check: ask */
#define EXIT_POLICY_DENY 11	/* holt policy check: deny */
#define EXIT_TIMEOUT	124	/* holt sandbox exec: command timed out */

#include "compat.h"

#endif
