/*
 * e2b.h: holt e2b serve, E2B's sandbox API on one local port (holt(1),
 * E2B), private to the e2b-*.c files.
 *
 * e2b-server.c owns the evhttp server: it checks keys and tokens and routes
 * each request, by the E2b-Sandbox-Id header, to the control plane
 * (e2b-api.c: create, connect, pause, timeout, kill, list) or to the
 * sandbox's own API (e2b-process.c: process.Process over the Connect
 * protocol, its streams in e2b-stream.c; e2b-files.c:
 * filesystem.Filesystem, /files, /health). e2b-ask.c keeps what the
 * policy asks a human about; e2b-control.c is where holt approve answers,
 * and where the sandboxes' proxies ask. Every E2B sandbox is
 * an ordinary holt sandbox; e2b-box.c keeps what E2B adds (template,
 * metadata, envs, access token, end of life) in
 * data/sandboxes/<id>/e2b.json. Everything runs on one libevent loop.
 */
#ifndef E2B_H
#define E2B_H

#include <event2/event.h>
#include <event2/http.h>

#include "holt.h"
#include "policy.h"
#include "sandbox.h"

#define E2B_ENVD_VERSION	"0.5.7"
#define E2B_HOME		"/home/user"	/* where programs work */
/* In data/sandboxes/<id>/: the SDK's network options, for its proxy. */
#define E2B_NET_RULES		"e2b-net.policy"
#define E2B_DEFAULT_LISTEN	"127.0.0.1:49999"
#define E2B_DEFAULT_TIMEOUT_S	300
#define E2B_MAX_TIMEOUT_S	(24 * 3600)
#define E2B_MAX_BODY		(256U * 1024 * 1024)	/* POST /files */
#define E2B_MAX_RPC_BODY	(1U * 1024 * 1024)	/* JSON requests */

/* e2b-box.c: E2B's record of one sandbox. */
struct e2b_box {
	char		*id;		/* the holt sandbox id */
	char		*template;
	char		*token;		/* X-Access-Token for its envd */
	char		*started;	/* RFC 3339 */
	cJSON		*metadata;	/* object of strings */
	cJSON		*envs;		/* object of strings */
	uint64_t	 end_ms;	/* wall clock; paused past it */
	uint64_t	 paused_left_ms;	/* timeout left when paused */
	char		*policy;	/* --policy FILE it was made under */
	char		*mode;		/* and --mode; NULL: none */
	char		*ask;		/* where its proxy asks: run/NAME */
	char		*rules;		/* and reads "always": run/NAME.policy */
	struct e2b_box	*next;
};

struct e2b_box *e2b_box_load(const char *id);	/* NULL: not an E2B one */
int	 e2b_box_save(struct e2b_box *, char **cause);
void	 e2b_box_free(struct e2b_box *);
char	*e2b_random_hex(size_t bytes);		/* caller frees */
/* Where holt e2b keeps its API key (config/e2b-key); made on first use. */
char	*e2b_key_get(char **cause);

/* e2b-server.c */
struct e2b_server {
	struct event_base	*base;
	struct evhttp		*http;
	char			*key;
	const char		*name;		/* of the control socket */
	struct e2b_control	*control;
	struct policy		*policy;	/* NULL: every command runs */
	char			*policy_file;	/* --policy, absolute */
	enum policy_mode	 mode;
	int			 ask_timeout_s;
	struct e2b_box		*boxes;		/* the E2B sandboxes known */
	struct e2b_proc		*procs;		/* commands started here */
	struct e2b_ask		*asks;		/* what waits for a human */
	cJSON			*always_writes;	/* paths "always" allowed */
	char			*rules_file;	/* session rules, for proxies */
	/* The files API's judging of one request (e2b-files.c). */
	struct evhttp_request	*approved;	/* a human allowed its writes */
	cJSON			*asking;	/* paths that would ask */
	char			*asking_why;
	struct event		*tick;
	uint64_t		 next_ask;
};

struct e2b_server *e2b_server_new(struct event_base *, const char *listen,
	    char **cause);
void	 e2b_server_free(struct e2b_server *);
struct e2b_box *e2b_server_box(struct e2b_server *, const char *id);
/* Route a request (evhttp's callback; again, for one a human allowed). */
void	 e2b_server_route(struct evhttp_request *, void *srv);
void	 e2b_server_forget_box(struct e2b_server *, const char *id);

/* Replies (e2b-server.c). */
void	 e2b_reply_json(struct evhttp_request *, int code, const cJSON *);
/* The control plane's error shape: {"code": N, "message": ...}. */
void	 e2b_reply_error(struct evhttp_request *, int code, const char *fmt,
	    ...) printflike(3, 4);
/* A Connect unary error: HTTP status from the code, {"code","message"}. */
void	 e2b_reply_connect_error(struct evhttp_request *, const char *code,
	    const char *message);
/* A server stream that ends at once with an error (Connect's way). */
void	 e2b_reply_stream_error(struct evhttp_request *, const char *code,
	    const char *message);
/* The request body as a NUL-terminated string, or NULL when too big. */
char	*e2b_body(struct evhttp_request *, size_t max, size_t *lenp);
cJSON	*e2b_body_json(struct evhttp_request *, size_t max, char **cause);
/* A query parameter of the request's URI, or NULL; caller frees. */
char	*e2b_query(struct evhttp_request *, const char *key);
/*
 * A blocking envd connection for one request, as sandbox_connect, but a
 * call that gets no answer for E2B_ENVD_TIMEOUT_S fails: a sandbox frozen
 * under a request must not stop the whole server.
 */
#define E2B_ENVD_TIMEOUT_S	30
int	 e2b_envd_connect(struct sandbox *, char **cause);
/* The Connect code of an envd error message ("not_found", ...). */
const char *e2b_envd_code(const char *message);

/* e2b-api.c: the control plane. path starts after the host. */
void	 e2b_api_handle(struct e2b_server *, struct evhttp_request *,
	    const char *path);
cJSON	*e2b_api_sandbox_json(struct e2b_box *, struct sandbox *);
/* Pause sandboxes whose timeout ran out (called every second). */
void	 e2b_api_expire(struct e2b_server *);

/*
 * e2b-stream.c: server streams (Connect). e2b_stream_new sends the reply's
 * headers at once, so every later failure is an end-of-stream error, as
 * Connect has it. e2b_stream_envd connects to the sandbox's envd, sends req
 * (an "id" is added) and gives each frame to frame, which returns 1 when it
 * has ended the stream (and so freed it); 0, or -1 with the stream ended.
 * e2b_stream_end sends the end-of-stream envelope, with an error when code
 * is not NULL, and frees the stream. e2b_stream_request is the one message
 * of a server-streaming request, or NULL with an error sent.
 */
struct e2b_stream;
typedef int (*e2b_stream_frame_cb)(struct e2b_stream *, const cJSON *);
struct e2b_stream {
	struct e2b_server	*srv;
	struct evhttp_request	*req;		/* NULL once the client left */
	struct evhttp_connection *evcon;
	struct bufferevent	*bev;		/* to holt-envd */
	struct event		*keepalive;
	char			*sandbox;
	char			*tag;
	cJSON			*config;	/* Start's, registered on start */
	long			 timeout_ms;
	int			 read_paused;
	struct e2b_ask		*ask;		/* waiting for a human */
	cJSON			*held;		/* envd request it holds back */
	e2b_stream_frame_cb	 frame;
	const char		*keepalive_msg;	/* sent every 30 s */
	/* An output frame's payload, kept out of the frame (which has
	 * "data_b64":"") for e2b_stream_output; out_in NULL when none. */
	struct evbuffer		*out_in;
	size_t			 out_off, out_len, out_taken;
};

struct e2b_stream *e2b_stream_new(struct e2b_server *, struct evhttp_request *,
	    struct sandbox *);
int	 e2b_stream_envd(struct e2b_stream *, struct sandbox *, cJSON *req,
	    e2b_stream_frame_cb);
cJSON	*e2b_stream_request(struct evhttp_request *);
void	 e2b_stream_send(struct e2b_stream *, const char *json, size_t);
void	 e2b_stream_send_json(struct e2b_stream *, unsigned char flags,
	    const cJSON *);
void	 e2b_stream_send_buf(struct e2b_stream *, unsigned char flags,
	    struct evbuffer *);
void	 e2b_stream_end(struct e2b_stream *, const char *code,
	    const char *message);
/*
 * In frame's call for an output frame whose payload was kept out of it:
 * moves the payload (base64, checked) onto the end of b, no copy made,
 * and returns its length; 0 when there is none.
 */
size_t	 e2b_stream_output(struct e2b_stream *, struct evbuffer *b);

/* e2b-process.c: process.Process. */
void	 e2b_process_handle(struct e2b_server *, struct evhttp_request *,
	    struct e2b_box *, struct sandbox *, const char *method);
void	 e2b_process_free_all(struct e2b_server *);

/*
 * e2b-ask.c: what waits for a human (auto and manual modes). e2b_ask_new
 * logs the ask on standard error and arms its timeout; cb is called once,
 * with allow and, when refused, why, after the ask is freed: on holt
 * approve's answer (e2b_ask_decide) or the timeout. e2b_ask_free withdraws
 * it (what waited went away): cb is not called.
 */
enum e2b_ask_kind { E2B_ASK_COMMAND, E2B_ASK_WRITE, E2B_ASK_HOST };
typedef void (*e2b_ask_cb)(void *arg, int allow, const char *why);
struct e2b_ask *e2b_ask_new(struct e2b_server *, const char *sandbox,
	    enum e2b_ask_kind, const char *subject, int port, const char *why,
	    e2b_ask_cb cb, void *arg);
/* A write's paths (strings), which "always" allows for the run. */
void	 e2b_ask_set_paths(struct e2b_ask *, const cJSON *paths);
void	 e2b_ask_free(struct e2b_ask *);
void	 e2b_ask_withdraw(struct e2b_ask *, const char *why);	/* logged */
void	 e2b_ask_free_all(struct e2b_server *);
/* Answer the ask id (0: the oldest) of a sandbox: allow, deny, always. */
int	 e2b_ask_decide(struct e2b_server *, const char *sandbox,
	    uint64_t id, const char *decision, char **cause);
/* Whether "always" allowed writing abs. */
int	 e2b_ask_always_write(struct e2b_server *, const char *abs);

/*
 * e2b-control.c: the unix socket run/NAME, where holt -L NAME approve
 * finds the server (the client protocol's hello and approve only) and the
 * sandboxes' proxies ask about hosts (net.ask); it keeps run/NAME.policy,
 * the run's "always" rules (srv->rules_file).
 */
struct e2b_control *e2b_control_new(struct e2b_server *, char **cause);
void	 e2b_control_free(struct e2b_control *);
const char *e2b_control_path(struct e2b_control *);
/* e2b-files.c: filesystem.Filesystem, GET/POST /files. */
void	 e2b_fs_handle(struct e2b_server *, struct evhttp_request *,
	    struct e2b_box *, struct sandbox *, const char *method);
void	 e2b_files_handle(struct e2b_server *, struct evhttp_request *,
	    struct e2b_box *, struct sandbox *);
/* A path of the E2B API as envd's: relative ones are below /home/user. */
char	*e2b_path(const char *path);
/*
 * Whether the policy lets the files API write abs for req (0), or -1 with
 * *why: the write rules, as for a command's redirection. In auto and
 * manual modes what would ask a human is added to srv->asking, and
 * e2b_files_hold then makes the request wait for the answer.
 */
int	 e2b_files_judge(struct e2b_server *, struct evhttp_request *,
	    const char *abs, char **why);

#endif
