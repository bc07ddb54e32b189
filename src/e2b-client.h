/*
 * e2b-client.h: a blocking client of E2B's API (the cloud, or any server
 * that speaks it, holt e2b serve among them), for the e2b sandbox provider.
 *
 * Two parts, as E2B has them. The control plane (JSON over HTTP at
 * e2b_api_url, key in X-API-KEY): create, connect (resumes), get, list,
 * pause, timeout, kill. A sandbox's envd (at e2b_sandbox_url, else
 * https://49983-<id>.<domain>, token in X-Access-Token): Connect RPCs with
 * the JSON codec, unary and server streams, and GET/POST /files.
 *
 * Call order: e2b_client_new reads the key and URLs (environment first,
 * then holt.conf) or fails saying what to set; e2b_client_create or
 * e2b_client_connect fill a struct e2b_sbx, from which e2b_envd_* reach the
 * sandbox (and resume it, should it be paused meanwhile). Every call blocks (libcurl easy); a client and an e2b_sbx may be
 * used by several threads at once, as nothing in them changes after they
 * are filled. Errors name the server and the status, never the key or the
 * token.
 */
#ifndef E2B_CLIENT_H
#define E2B_CLIENT_H

#include <stddef.h>

#include "holt.h"

#define E2B_CLIENT_DEFAULT_API	"https://api.e2b.app"
#define E2B_CLIENT_ENVD_PORT	49983
#define E2B_CLIENT_RESUME_S	300	/* sbx.timeout_s unset */

struct e2b_client;

/* One E2B sandbox as create and connect describe it. */
struct e2b_sbx {
	struct e2b_client *client;	/* borrowed */
	char		*id;
	char		*template;
	char		*token;		/* X-Access-Token, or NULL */
	char		*envd_version;
	char		*domain;	/* NULL: the client's default */
	char		*envd_url;	/* where its envd answers */
	long		 timeout_s;	/* resuming it sets this timeout */
};

struct e2b_create_opts {
	const char	*template;	/* NULL: "base" */
	long		 timeout_s;	/* then paused (auto-pause) */
	const cJSON	*metadata;	/* object of strings, or NULL */
	const cJSON	*envs;		/* object of strings, or NULL */
	int		 internet;	/* allow_internet_access */
};

/*
 * api_url and sandbox_url: a sandbox's own (from its meta.json), or NULL
 * for E2B_API_URL / e2b_api_url and E2B_SANDBOX_URL / e2b_sandbox_url.
 */
struct e2b_client *e2b_client_new(const char *api_url,
	     const char *sandbox_url, char **cause);
void	 e2b_client_free(struct e2b_client *);
const char *e2b_client_api_url(struct e2b_client *);
const char *e2b_client_sandbox_url(struct e2b_client *);	/* or NULL */

int	 e2b_client_create(struct e2b_client *, const struct e2b_create_opts *,
	     struct e2b_sbx *, char **cause);
/* Resume if paused; the timeout starts again from now. */
int	 e2b_client_connect(struct e2b_client *, const char *id, long timeout_s,
	     struct e2b_sbx *, char **cause);
void	 e2b_sbx_release(struct e2b_sbx *);
/*
 * GET /sandboxes/{id}: its detail ("state": running or paused). NULL with
 * *gone set to 1 when E2B does not know it (404), else with *cause.
 */
cJSON	*e2b_client_get(struct e2b_client *, const char *id, int *gone,
	     char **cause);
cJSON	*e2b_client_list(struct e2b_client *, char **cause);
int	 e2b_client_pause(struct e2b_client *, const char *id, char **cause);
int	 e2b_client_kill(struct e2b_client *, const char *id, char **cause);
int	 e2b_client_set_timeout(struct e2b_client *, const char *id,
	     long timeout_s, char **cause);

/*
 * envd. e2b_envd_rpc: a unary Connect call ("process.Process/SendInput"),
 * its reply or NULL with *cause (and *code, when not NULL, set to the
 * Connect error code, e.g. "not_found"; caller frees). user: NULL for the
 * default user, else the envd user to act as ("root").
 */
cJSON	*e2b_envd_rpc(struct e2b_sbx *, const char *method, const char *user,
	     const cJSON *req, char **code, char **cause);
/*
 * A server stream ("process.Process/Start"): msg is called with each
 * message; a non-zero return stops the stream (and is returned). Returns 0
 * at its clean end, -1 with *cause at an error end or a broken stream.
 */
typedef int (*e2b_envd_msg_cb)(void *arg, const cJSON *msg);
int	 e2b_envd_stream(struct e2b_sbx *, const char *method, const char *user,
	     const cJSON *req, e2b_envd_msg_cb, void *arg, char **cause);
/* GET /files: the whole file, NUL-terminated; *gone set on 404. */
char	*e2b_envd_file_get(struct e2b_sbx *, const char *path, size_t *lenp,
	     int *gone, char **cause);
/* POST /files (octet-stream): makes parents, replaces the file. */
int	 e2b_envd_file_put(struct e2b_sbx *, const char *path, const void *,
	     size_t, char **cause);

/*
 * e2b-bridge.c: a socket that speaks holt's envd protocol (holt-envd(8))
 * to this sandbox, served by a thread of this process that turns each
 * request into E2B calls. Takes c and sbx (sbx is emptied); timeout_s is
 * the E2B timeout it keeps from running out while in use.
 */
int	 e2b_bridge_open(struct e2b_client *c, struct e2b_sbx *sbx,
	     long timeout_s, char **cause);

#endif
