/*
 * e2b-api.c: E2B's control plane (JSON, X-API-KEY checked by the caller):
 * create, get, list, connect (resumes), timeout, pause, kill. The shapes
 * are those the official SDK sends and reads. An unknown id is a 404 and
 * never a new sandbox; an expired timeout pauses the sandbox (E2B's
 * auto-pause), it does not kill it.
 */
#include <event2/buffer.h>
#include <sys/queue.h>

#include <event2/keyvalq_struct.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "e2b.h"

static char *
time_ms(uint64_t ms)
{
	time_t		 t = (time_t)(ms / 1000);
	struct tm	 tm;
	char		 when[32];

	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	return xprintf("%s.%03uZ", when, (unsigned)(ms % 1000));
}

static const char *
state_name(struct sandbox *sb)
{
	return sandbox_state(sb) == SANDBOX_RUNNING ? "running" : "paused";
}

/* The detail of GET /sandboxes/{id} and of a list entry. */
cJSON *
e2b_api_sandbox_json(struct e2b_box *b, struct sandbox *sb)
{
	cJSON		*j = cJSON_CreateObject();
	char		*end;
	long long	 mem = sandbox_memory(sb);
	uint64_t	 end_ms = b->end_ms;

	if (end_ms == 0)
		end_ms = json_now_ms() + b->paused_left_ms;
	cJSON_AddStringToObject(j, "sandboxID", b->id);
	cJSON_AddStringToObject(j, "templateID", b->template);
	if (*sandbox_name(sb) != '\0')
		cJSON_AddStringToObject(j, "alias", sandbox_name(sb));
	cJSON_AddStringToObject(j, "clientID", "holt");
	cJSON_AddStringToObject(j, "startedAt", b->started);
	end = time_ms(end_ms);
	cJSON_AddStringToObject(j, "endAt", end);
	free(end);
	cJSON_AddNumberToObject(j, "cpuCount", sysconf(_SC_NPROCESSORS_ONLN));
	if (mem == 0)
		mem = (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
	cJSON_AddNumberToObject(j, "memoryMB", (double)(mem / (1024 * 1024)));
	cJSON_AddNumberToObject(j, "diskSizeMB", 0);
	cJSON_AddStringToObject(j, "envdVersion", E2B_ENVD_VERSION);
	cJSON_AddItemToObject(j, "metadata", cJSON_Duplicate(b->metadata, 1));
	cJSON_AddStringToObject(j, "state", state_name(sb));
	cJSON_AddItemToObject(j, "volumeMounts", cJSON_CreateArray());
	return j;
}

/* What create and connect answer: enough for the SDK to reach envd. */
static void
reply_sandbox(struct evhttp_request *req, int code, struct e2b_box *b)
{
	cJSON	*j = cJSON_CreateObject();

	cJSON_AddStringToObject(j, "sandboxID", b->id);
	cJSON_AddStringToObject(j, "templateID", b->template);
	cJSON_AddStringToObject(j, "clientID", "holt");
	cJSON_AddStringToObject(j, "envdVersion", E2B_ENVD_VERSION);
	cJSON_AddStringToObject(j, "envdAccessToken", b->token);
	cJSON_AddNullToObject(j, "domain");
	e2b_reply_json(req, code, j);
	cJSON_Delete(j);
}

/* "timeout" in seconds: absent gives dflt, anything else bad is -1. */
static long
body_timeout(const cJSON *body, long dflt)
{
	const cJSON	*t = cJSON_GetObjectItem(body, "timeout");

	if (t == NULL || cJSON_IsNull(t))
		return dflt;
	if (!cJSON_IsNumber(t) || t->valuedouble < 0 ||
	    t->valuedouble > E2B_MAX_TIMEOUT_S)
		return -1;
	return (long)t->valuedouble;
}

static int
strings_only(const cJSON *o)
{
	const cJSON	*it;

	if (o == NULL || cJSON_IsNull(o))
		return 1;
	if (!cJSON_IsObject(o))
		return 0;
	cJSON_ArrayForEach(it, o) {
		if (!cJSON_IsString(it))
			return 0;
	}
	return 1;
}

/* The request's JSON object, or NULL with a 400 sent. */
static cJSON *
body_or_400(struct evhttp_request *req)
{
	char	*cause = NULL;
	cJSON	*body;

	if ((body = e2b_body_json(req, E2B_MAX_RPC_BODY, &cause)) == NULL) {
		e2b_reply_error(req, evbuffer_get_length(
		    evhttp_request_get_input_buffer(req)) > E2B_MAX_RPC_BODY ?
		    413 : 400, "%s", cause);
		free(cause);
	}
	return body;
}

/*
 * The SDK's network options as rules for the sandbox's proxy, which
 * judges host names: each allowOut name is a net-allow, a denyOut of all
 * traffic (0.0.0.0/0) a net-deny of every host after them (E2B's allowOut
 * wins over its denyOut). Addresses, ranges and what the proxy cannot do
 * (rewrite requests, tunnel through another proxy) are a clear error.
 * The rules' text, "" for none, or NULL with *cause.
 */
static char *
net_rules(const cJSON *network, char **cause)
{
	const cJSON	*allow, *deny, *it;
	struct buf	 b = BUF_INIT;
	struct policy	*check = policy_new_empty();
	char		*err = NULL;

	if (network == NULL || cJSON_IsNull(network))
		goto out;
	allow = cJSON_GetObjectItem(network, "allowOut");
	deny = cJSON_GetObjectItem(network, "denyOut");
	if (!cJSON_IsObject(network) || (allow != NULL &&
	    !cJSON_IsArray(allow)) || (deny != NULL && !cJSON_IsArray(deny))) {
		*cause = xstrdup("network: an object; allowOut and denyOut "
		    "arrays of strings");
		goto fail;
	}
	if (cJSON_GetObjectItem(network, "egressProxy") != NULL ||
	    cJSON_GetObjectItem(network, "rules") != NULL) {
		*cause = xstrdup("network: egressProxy and rules are not "
		    "served here: holt's proxy neither tunnels nor rewrites "
		    "requests");
		goto fail;
	}
	buf_adds(&b, "# the network options of the E2B program that made "
	    "the sandbox\n");
	cJSON_ArrayForEach(it, allow) {
		if (!cJSON_IsString(it) || strchr(it->valuestring, '/') != NULL ||
		    policy_net_is_ip(it->valuestring)) {
			*cause = xprintf("network.allowOut '%s': holt's sandboxes "
			    "reach hosts by name only (their proxy refuses "
			    "addresses); name the host", cJSON_IsString(it) ?
			    it->valuestring : "?");
			goto fail;
		}
		if (policy_add_rule(check, "net-allow", it->valuestring, "e2b",
		    &err) != 0) {
			*cause = xprintf("network.allowOut: %s", err);
			free(err);
			goto fail;
		}
		buf_addf(&b, "net-allow %s\n", it->valuestring);
	}
	cJSON_ArrayForEach(it, deny) {
		if (!cJSON_IsString(it) || (strcmp(it->valuestring,
		    "0.0.0.0/0") != 0 && strcmp(it->valuestring, "::/0") != 0)) {
			*cause = xprintf("network.denyOut '%s': only all traffic "
			    "(0.0.0.0/0) can be denied here, as holt's proxy "
			    "judges host names, not addresses", cJSON_IsString(it) ?
			    it->valuestring : "?");
			goto fail;
		}
	}
	if (cJSON_GetArraySize(deny) > 0)
		buf_adds(&b, "net-deny *\n");
out:
	policy_free(check);
	return buf_detach(&b, NULL);
fail:
	policy_free(check);
	buf_release(&b);
	return NULL;
}

static void
api_create(struct e2b_server *srv, struct evhttp_request *req)
{
	struct sandbox_opts	 o;
	struct sandbox		*sb;
	struct e2b_box		*b;
	cJSON			*body, *meta, *envs, *net;
	const cJSON		*tpl;
	char			*cause = NULL, *rules = NULL, *path;
	long			 timeout;
	int			 rc;

	if ((body = body_or_400(req)) == NULL)
		return;
	tpl = cJSON_GetObjectItem(body, "templateID");
	meta = cJSON_GetObjectItem(body, "metadata");
	envs = cJSON_GetObjectItem(body, "envVars");
	net = cJSON_GetObjectItem(body, "allow_internet_access");
	if (tpl != NULL && !cJSON_IsString(tpl)) {
		e2b_reply_error(req, 400, "templateID: not a string");
		goto out;
	}
	if (!strings_only(meta) || !strings_only(envs)) {
		e2b_reply_error(req, 400, "metadata and envVars: objects of "
		    "strings");
		goto out;
	}
	if ((timeout = body_timeout(body, E2B_DEFAULT_TIMEOUT_S)) < 0) {
		e2b_reply_error(req, 400, "timeout: seconds, from 0 to %d",
		    E2B_MAX_TIMEOUT_S);
		goto out;
	}
	if ((rules = net_rules(cJSON_GetObjectItem(body, "network"),
	    &cause)) == NULL) {
		e2b_reply_error(req, 400, "%s", cause);
		free(cause);
		goto out;
	}
	/* holt.conf's memory, pids and network (by default the policy's
	 * proxy, never more than holt gives its own sandboxes):
	 * allow_internet_access false is no network, true at least the
	 * proxy. */
	sandbox_opts_config(&o);
	/* Here, whatever holt.conf's provider: an e2b one may be us. */
	o.provider = "local";
	if (cJSON_IsFalse(net))
		o.net = SANDBOX_NET_OFF;
	else if (cJSON_IsTrue(net) && o.net == SANDBOX_NET_OFF)
		o.net = SANDBOX_NET_POLICY;
	if ((sb = sandbox_create(&o, &cause)) == NULL) {
		e2b_reply_error(req, 500, "sandbox: %s", cause);
		free(cause);
		goto out;
	}
	b = xcalloc(1, sizeof *b);
	b->id = xstrdup(sandbox_id(sb));
	b->template = xstrdup(tpl != NULL ? tpl->valuestring : "base");
	b->token = e2b_random_hex(24);
	b->started = json_time_now();
	b->metadata = cJSON_IsObject(meta) ? cJSON_Duplicate(meta, 1) :
	    cJSON_CreateObject();
	b->envs = cJSON_IsObject(envs) ? cJSON_Duplicate(envs, 1) :
	    cJSON_CreateObject();
	b->end_ms = json_now_ms() + (uint64_t)timeout * 1000;
	if (srv->policy != NULL) {
		b->mode = xstrdup(policy_mode_name(srv->mode));
		if (srv->policy_file != NULL)
			b->policy = xstrdup(srv->policy_file);
	}
	if (srv->control != NULL) {
		b->ask = xstrdup(e2b_control_path(srv->control));
		b->rules = xstrdup(srv->rules_file);
	}
	/* For its proxy, which reads them beside the other rules. */
	rc = 0;
	if (*rules != '\0') {
		path = xprintf("%s/%s/%s", paths_sandboxes_dir(), b->id,
		    E2B_NET_RULES);
		if ((rc = file_write_atomic(path, rules, strlen(rules),
		    0600)) != 0)
			cause = xprintf("%s: %s", path, strerror(errno));
		free(path);
	}
	if (rc != 0 || e2b_box_save(b, &cause) != 0) {
		e2b_reply_error(req, 500, "%s", cause);
		free(cause);
		if (sandbox_rm(sb, &cause) != 0) {
			log_warnx("sandbox '%s': %s", b->id, cause);
			free(cause);
		}
		e2b_box_free(b);
		sandbox_free(sb);
		goto out;
	}
	log_info("sandbox '%s': created (template %s, timeout %lds)", b->id,
	    b->template, timeout);
	b->next = srv->boxes;
	srv->boxes = b;
	reply_sandbox(req, 201, b);
	sandbox_free(sb);
out:
	free(rules);
	cJSON_Delete(body);
}

/* The box and sandbox of id, or a 404 sent and NULL. */
static struct e2b_box *
find(struct e2b_server *srv, struct evhttp_request *req, const char *id,
    struct sandbox **sbp)
{
	struct e2b_box	*b;
	char		*cause = NULL;

	if ((b = e2b_server_box(srv, id)) == NULL ||
	    (*sbp = sandbox_open(id, &cause)) == NULL) {
		free(cause);
		e2b_reply_error(req, 404, "sandbox '%s': not found", id);
		return NULL;
	}
	return b;
}

static void
save_or_warn(struct e2b_box *b)
{
	char	*cause = NULL;

	if (e2b_box_save(b, &cause) != 0) {
		log_warnx("%s", cause);
		free(cause);
	}
}

/* Pause and keep what was left of the timeout. */
static int
pause_box(struct e2b_box *b, struct sandbox *sb, char **cause)
{
	uint64_t	 now = json_now_ms();

	if (sandbox_pause(sb, cause) != 0)
		return -1;
	b->paused_left_ms = b->end_ms > now ? b->end_ms - now : 0;
	b->end_ms = 0;
	save_or_warn(b);
	return 0;
}

static void
api_connect(struct evhttp_request *req, struct e2b_box *b, struct sandbox *sb)
{
	cJSON			*body;
	char			*cause = NULL;
	long			 timeout;
	int			 code = 200;
	enum sandbox_state	 st;

	if ((body = body_or_400(req)) == NULL)
		return;
	timeout = body_timeout(body, E2B_DEFAULT_TIMEOUT_S);
	cJSON_Delete(body);
	if (timeout < 0) {
		e2b_reply_error(req, 400, "timeout: seconds, from 0 to %d",
		    E2B_MAX_TIMEOUT_S);
		return;
	}
	st = sandbox_state(sb);
	if (st == SANDBOX_PAUSED) {
		if (sandbox_resume(sb, &cause) != 0)
			goto fail;
		code = 201;
	} else if (st == SANDBOX_STOPPED) {
		if (sandbox_start(sb, &cause) != 0)
			goto fail;
		code = 201;
	}
	if (code == 201 || b->end_ms < json_now_ms() + (uint64_t)timeout * 1000)
		b->end_ms = json_now_ms() + (uint64_t)timeout * 1000;
	b->paused_left_ms = 0;
	save_or_warn(b);
	reply_sandbox(req, code, b);
	return;
fail:
	e2b_reply_error(req, 500, "sandbox '%s': %s", b->id, cause);
	free(cause);
}

static void
api_timeout(struct evhttp_request *req, struct e2b_box *b)
{
	cJSON	*body;
	long	 timeout;

	if ((body = body_or_400(req)) == NULL)
		return;
	timeout = body_timeout(body, -1);
	cJSON_Delete(body);
	if (timeout < 0) {
		e2b_reply_error(req, 400, "timeout: seconds, from 0 to %d",
		    E2B_MAX_TIMEOUT_S);
		return;
	}
	if (b->end_ms == 0)
		b->paused_left_ms = (uint64_t)timeout * 1000;
	else
		b->end_ms = json_now_ms() + (uint64_t)timeout * 1000;
	save_or_warn(b);
	evhttp_send_reply(req, 204, NULL, NULL);
}

static void
api_pause(struct evhttp_request *req, struct e2b_box *b, struct sandbox *sb)
{
	char	*cause = NULL;

	if (sandbox_state(sb) != SANDBOX_RUNNING) {
		e2b_reply_error(req, 409, "sandbox '%s': already paused", b->id);
		return;
	}
	if (pause_box(b, sb, &cause) != 0) {
		e2b_reply_error(req, 500, "sandbox '%s': %s", b->id, cause);
		free(cause);
		return;
	}
	log_info("sandbox '%s': paused", b->id);
	evhttp_send_reply(req, 204, NULL, NULL);
}

static void
api_kill(struct e2b_server *srv, struct evhttp_request *req,
    struct e2b_box *b, struct sandbox *sb)
{
	char	*cause = NULL, *id;

	if (sandbox_rm(sb, &cause) != 0) {
		e2b_reply_error(req, 500, "sandbox '%s': %s", b->id, cause);
		free(cause);
		return;
	}
	id = xstrdup(b->id);
	log_info("sandbox '%s': killed", id);
	e2b_server_forget_box(srv, id);
	free(id);
	evhttp_send_reply(req, 204, NULL, NULL);
}

/* Does the box match "k=v&k2=v2" (GET /v2/sandboxes?metadata=...)? */
static int
metadata_match(struct e2b_box *b, const char *query)
{
	struct evkeyvalq	 kv;
	struct evkeyval		*p;
	const char		*v;
	int			 ok = 1;

	TAILQ_INIT(&kv);
	if (evhttp_parse_query_str(query, &kv) != 0)
		return 0;
	TAILQ_FOREACH(p, &kv, next) {
		v = json_str(b->metadata, p->key);
		if (v == NULL || strcmp(v, p->value) != 0)
			ok = 0;
	}
	evhttp_clear_headers(&kv);
	return ok;
}

static void
api_list(struct e2b_server *srv, struct evhttp_request *req)
{
	struct sandbox	**list;
	struct e2b_box	 *b;
	size_t		  n, i;
	char		 *state, *meta;
	cJSON		 *arr = cJSON_CreateArray();

	state = e2b_query(req, "state");
	meta = e2b_query(req, "metadata");
	list = sandbox_list(&n);
	for (i = 0; i < n; i++) {
		if ((b = e2b_server_box(srv, sandbox_id(list[i]))) == NULL)
			continue;
		if (state != NULL && strstr(state, state_name(list[i])) == NULL)
			continue;
		if (meta != NULL && !metadata_match(b, meta))
			continue;
		cJSON_AddItemToArray(arr, e2b_api_sandbox_json(b, list[i]));
	}
	sandbox_list_free(list, n);
	free(state);
	free(meta);
	e2b_reply_json(req, 200, arr);
	cJSON_Delete(arr);
}

void
e2b_api_handle(struct e2b_server *srv, struct evhttp_request *req,
    const char *path)
{
	enum evhttp_cmd_type	 m = evhttp_request_get_command(req);
	struct e2b_box		*b;
	struct sandbox		*sb = NULL;
	char			 id[80];
	const char		*rest, *slash;
	cJSON			*j;

	if (strncmp(path, "/v2/", 4) == 0)
		path += 3;
	if (strcmp(path, "/sandboxes") == 0) {
		if (m == EVHTTP_REQ_POST)
			api_create(srv, req);
		else if (m == EVHTTP_REQ_GET)
			api_list(srv, req);
		else
			e2b_reply_error(req, 405, "%s: use GET or POST", path);
		return;
	}
	if (strncmp(path, "/sandboxes/", 11) != 0)
		goto unknown;
	rest = path + 11;
	slash = strchr(rest, '/');
	if ((slash != NULL ? (size_t)(slash - rest) : strlen(rest)) >=
	    sizeof id || rest == slash || *rest == '\0')
		goto unknown;
	xstrlcpy(id, rest, slash != NULL ? (size_t)(slash - rest) + 1 :
	    sizeof id);
	rest = slash != NULL ? slash : "";
	if (strcmp(rest, "") != 0 && strcmp(rest, "/connect") != 0 &&
	    strcmp(rest, "/resume") != 0 && strcmp(rest, "/timeout") != 0 &&
	    strcmp(rest, "/pause") != 0 && strcmp(rest, "/metrics") != 0)
		goto unknown;
	if ((b = find(srv, req, id, &sb)) == NULL)
		return;
	if (*rest == '\0' && m == EVHTTP_REQ_GET) {
		j = e2b_api_sandbox_json(b, sb);
		e2b_reply_json(req, 200, j);
		cJSON_Delete(j);
	} else if (*rest == '\0' && m == EVHTTP_REQ_DELETE)
		api_kill(srv, req, b, sb);
	else if (m != EVHTTP_REQ_POST && strcmp(rest, "/metrics") != 0)
		e2b_reply_error(req, 405, "%s: wrong method", path);
	else if (strcmp(rest, "/metrics") == 0) {
		j = cJSON_CreateArray();
		e2b_reply_json(req, 200, j);
		cJSON_Delete(j);
	} else if (strcmp(rest, "/connect") == 0 ||
	    strcmp(rest, "/resume") == 0)
		api_connect(req, b, sb);
	else if (strcmp(rest, "/timeout") == 0)
		api_timeout(req, b);
	else if (strcmp(rest, "/pause") == 0)
		api_pause(req, b, sb);
	else
		e2b_reply_error(req, 405, "%s: wrong method", path);
	sandbox_free(sb);
	return;
unknown:
	e2b_reply_error(req, 404, "no such route: %s", path);
}

void
e2b_api_expire(struct e2b_server *srv)
{
	struct e2b_box	*b;
	struct sandbox	*sb;
	char		*cause = NULL;
	uint64_t	 now = json_now_ms();

	for (b = srv->boxes; b != NULL; b = b->next) {
		if (b->end_ms == 0 || b->end_ms > now)
			continue;
		if ((sb = sandbox_open(b->id, &cause)) == NULL) {
			free(cause);
			cause = NULL;
			b->end_ms = 0;
			continue;
		}
		if (sandbox_state(sb) != SANDBOX_RUNNING) {
			b->end_ms = 0;
			save_or_warn(b);
		} else if (pause_box(b, sb, &cause) != 0) {
			log_warnx("sandbox '%s': timeout: %s", b->id, cause);
			free(cause);
			cause = NULL;
			b->end_ms = now + 10000;	/* try again */
		} else
			log_info("sandbox '%s': timeout, paused", b->id);
		sandbox_free(sb);
	}
}
