/*
 * github.c: pull requests through the GitHub REST API, or a compatible
 * forge's (the API base is configurable for GitHub Enterprise). One blocking
 * libcurl request per call, bounded by timeouts: used by the holt pr command
 * and by the server's worker, never on an event loop. The token goes in the
 * Authorization header only; redirects are not followed, so it cannot be
 * carried to another host.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "holt.h"
#include "git.h"
#include "dynlib-curl.h"

#define GITHUB_API_VERSION "2022-11-28"

struct github_resp {
	long		 status;
	struct buf	 body;
	long long	 ratelimit_remaining;	/* -1: not sent */
	long long	 ratelimit_reset;	/* epoch seconds, 0: not sent */
	long long	 retry_after;		/* seconds, -1: not sent */
};

int
github_parse_url(const char *url, char **owner, char **repo)
{
	const char	*p, *slash;
	char		*path, *end;
	size_t		 n;

	if ((p = strstr(url, "://")) != NULL) {
		p += 3;
		if ((p = strchr(p, '/')) == NULL)
			return -1;
		p++;
	} else if ((p = strchr(url, ':')) != NULL && strchr(url, '@') != NULL &&
	    strchr(url, '@') < p) {
		p++;	/* git@host:owner/repo.git */
	} else
		return -1;
	path = xstrdup(p);
	n = strcspn(path, "?#");
	path[n] = '\0';
	while (n > 0 && path[n - 1] == '/')
		path[--n] = '\0';
	if (n > 4 && strcmp(path + n - 4, ".git") == 0)
		path[n - 4] = '\0';
	/* The last two components: {owner}/{repo}. */
	end = strrchr(path, '/');
	if (end == NULL || end == path || end[1] == '\0') {
		free(path);
		return -1;
	}
	*end = '\0';
	slash = strrchr(path, '/');
	*owner = xstrdup(slash != NULL ? slash + 1 : path);
	*repo = xstrdup(end + 1);
	free(path);
	if (**owner == '\0') {
		free(*owner);
		free(*repo);
		return -1;
	}
	return 0;
}

static size_t
github_write_cb(char *ptr, size_t size, size_t n, void *arg)
{
	struct github_resp	*r = arg;

	if (r->body.len + size * n > 8U * 1024 * 1024)
		return 0;
	buf_add(&r->body, ptr, size * n);
	return size * n;
}

static size_t
github_header_cb(char *ptr, size_t size, size_t n, void *arg)
{
	struct github_resp	*r = arg;
	size_t			 len = size * n;
	char			*line, *colon, *v;

	line = xstrndup(ptr, len);
	if ((colon = strchr(line, ':')) != NULL) {
		*colon = '\0';
		v = colon + 1;
		while (isspace((unsigned char)*v))
			v++;
		if (strcasecmp(line, "x-ratelimit-remaining") == 0)
			r->ratelimit_remaining = strtoll(v, NULL, 10);
		else if (strcasecmp(line, "x-ratelimit-reset") == 0)
			r->ratelimit_reset = strtoll(v, NULL, 10);
		else if (strcasecmp(line, "retry-after") == 0)
			r->retry_after = strtoll(v, NULL, 10);
	}
	free(line);
	return len;
}

/* One request. 0: a response (any status) in r; -1: no response. */
static int
github_request(const char *method, const char *url, const char *token,
    const char *body, struct github_resp *r, char **cause)
{
	CURL			*c;
	struct curl_slist	*h = NULL;
	char			*auth, err[CURL_ERROR_SIZE];
	CURLcode		 cc;
	static int		 inited;

	if (!inited) {
		if (dynlib_load_curl(cause) != 0)
			return -1;
		curl_global_init(CURL_GLOBAL_DEFAULT);
		inited = 1;
	}
	memset(r, 0, sizeof *r);
	buf_init(&r->body);
	r->ratelimit_remaining = -1;
	r->retry_after = -1;
	if ((c = curl_easy_init()) == NULL) {
		*cause = xstrdup("libcurl: cannot start a request");
		return -1;
	}
	auth = xprintf("Authorization: Bearer %s", token);
	h = curl_slist_append(h, auth);
	explicit_bzero(auth, strlen(auth));
	free(auth);
	h = curl_slist_append(h, "Accept: application/vnd.github+json");
	h = curl_slist_append(h, "X-GitHub-Api-Version: " GITHUB_API_VERSION);
	h = curl_slist_append(h, "User-Agent: holt/" PACKAGE_VERSION);
	if (body != NULL)
		h = curl_slist_append(h, "Content-Type: application/json");
	err[0] = '\0';
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (body != NULL)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	dynlib_curl_easy_defaults(c, 60L, err);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, github_write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, github_header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	cc = curl_easy_perform(c);
	if (cc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (cc != CURLE_OK) {
		*cause = xprintf("could not reach '%s': %s (is the network "
		    "up?)", url, *err != '\0' ? err : curl_easy_strerror(cc));
		buf_release(&r->body);
		return -1;
	}
	return 0;
}

/* GitHub's error message, with the validation errors' messages. */
static char *
github_message(struct github_resp *r)
{
	cJSON		*j, *errs, *e;
	struct buf	 b = BUF_INIT;
	const char	*m;

	j = cJSON_Parse(buf_str(&r->body));
	if (j == NULL || (m = json_str(j, "message")) == NULL) {
		cJSON_Delete(j);
		return xprintf("HTTP %ld", r->status);
	}
	buf_adds(&b, m);
	errs = cJSON_GetObjectItemCaseSensitive(j, "errors");
	cJSON_ArrayForEach(e, errs) {
		if ((m = json_str(e, "message")) != NULL)
			buf_addf(&b, "; %s", m);
		else if (json_str(e, "code") != NULL)
			buf_addf(&b, "; %s %s", json_str(e, "field") != NULL ?
			    json_str(e, "field") : "", json_str(e, "code"));
	}
	cJSON_Delete(j);
	return buf_detach(&b, NULL);
}

static int
github_rate_limited(struct github_resp *r)
{
	return (r->status == 403 || r->status == 429) &&
	    (r->ratelimit_remaining == 0 || r->retry_after >= 0 ||
	    r->status == 429);
}

static char *
github_rate_cause(const char *api, struct github_resp *r)
{
	time_t		 when, now = time(NULL);
	struct tm	 tm;
	char		 ts[32];

	if (r->retry_after >= 0)
		when = now + r->retry_after;
	else if (r->ratelimit_reset > 0)
		when = (time_t)r->ratelimit_reset;
	else
		return xprintf("rate limited by '%s' (HTTP %ld); try again "
		    "later; the branch is pushed, re-run holt pr", api,
		    r->status);
	gmtime_r(&when, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S UTC", &tm);
	return xprintf("rate limited by '%s' (HTTP %ld) until %s (in %lld "
	    "s); the branch is pushed, re-run holt pr then", api, r->status, ts,
	    (long long)(when > now ? when - now : 0));
}

static int
github_pr_from_json(const char *text, struct github_pr *pr)
{
	cJSON	*j;
	int	 rc = -1;

	if ((j = cJSON_Parse(text)) == NULL)
		return -1;
	if (cJSON_IsArray(j)) {
		cJSON	*first = cJSON_GetArrayItem(j, 0);

		cJSON_DetachItemViaPointer(j, first);
		cJSON_Delete(j);
		j = first;
	}
	if (j != NULL && json_str(j, "html_url") != NULL) {
		pr->url = xstrdup(json_str(j, "html_url"));
		pr->number = (int)json_num(j, "number", 0);
		rc = 0;
	}
	cJSON_Delete(j);
	return rc;
}

/* The open PR of head, if there is one: GET {pulls}?head=owner:head. */
static int
github_pr_find(const char *pulls, const char *token, const char *owner,
    const char *head, struct github_pr *pr, char **cause)
{
	struct github_resp	 r;
	CURL			*c = curl_easy_init();
	char			*url, *q;
	int			 rc = -1;

	q = xprintf("%s:%s", owner, head);
	{
		char	*e = curl_easy_escape(c, q, 0);

		free(q);
		q = xstrdup(e);
		curl_free(e);
	}
	curl_easy_cleanup(c);
	url = xprintf("%s?head=%s&state=open", pulls, q);
	free(q);
	if (github_request("GET", url, token, NULL, &r, cause) != 0) {
		free(url);
		return -1;
	}
	if (r.status == 200 && github_pr_from_json(buf_str(&r.body), pr) == 0)
		rc = 0;
	else
		*cause = xprintf("no open pull request for '%s' found", head);
	buf_release(&r.body);
	free(url);
	return rc;
}

int
github_pr_open(const char *api, const char *token, const char *owner,
    const char *repo, const char *head, const char *base, const char *title,
    const char *body, int draft, struct github_pr *pr, char **cause)
{
	struct github_resp	 r;
	cJSON			*req;
	char			*url, *text, *msg, *ign = NULL;
	size_t			 n;
	int			 rc = -1;

	memset(pr, 0, sizeof *pr);
	if (token == NULL) {
		*cause = xprintf("no token for '%s': set HOLT_GIT_TOKEN or "
		    "GITHUB_TOKEN (or git_token in holt.conf) to a token that "
		    "may create pull requests", api);
		return -1;
	}
	n = strlen(api);
	while (n > 0 && api[n - 1] == '/')
		n--;
	url = xprintf("%.*s/repos/%s/%s/pulls", (int)n, api, owner, repo);
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "title", title);
	cJSON_AddStringToObject(req, "head", head);
	cJSON_AddStringToObject(req, "base", base);
	cJSON_AddStringToObject(req, "body", body != NULL ? body : "");
	cJSON_AddBoolToObject(req, "draft", draft);
	text = json_print(req);
	cJSON_Delete(req);
	if (github_request("POST", url, token, text, &r, cause) != 0)
		goto out;
	msg = github_message(&r);
	switch (r.status) {
	case 200:
	case 201:
		if (github_pr_from_json(buf_str(&r.body), pr) != 0)
			*cause = xprintf("'%s': the answer has no html_url",
			    url);
		else
			rc = 0;
		break;
	case 401:
		*cause = xprintf("'%s' refused the token (401 %s): set "
		    "HOLT_GIT_TOKEN or GITHUB_TOKEN to a valid token", api,
		    msg);
		break;
	case 403:
	case 429:
		if (github_rate_limited(&r))
			*cause = github_rate_cause(api, &r);
		else
			*cause = xprintf("the token may not open pull requests "
			    "on '%s/%s' (%ld %s): it needs write access to "
			    "pull requests (scope 'repo' or 'pull_requests: "
			    "write')", owner, repo, r.status, msg);
		break;
	case 404:
		*cause = xprintf("repository '%s/%s' not found at '%s' (404), "
		    "or the token cannot see it", owner, repo, api);
		break;
	case 422:
		if (strstr(msg, "already exists") != NULL &&
		    github_pr_find(url, token, owner, head, pr, &ign) == 0) {
			pr->existing = 1;
			rc = 0;
			break;
		}
		free(ign);
		*cause = xprintf("'%s/%s' did not accept the pull request "
		    "(422): %s", owner, repo, msg);
		break;
	default:
		*cause = xprintf("'%s': HTTP %ld: %s", url, r.status, msg);
		break;
	}
	free(msg);
	buf_release(&r.body);
out:
	free(text);
	free(url);
	return rc;
}

void
github_pr_release(struct github_pr *pr)
{
	free(pr->url);
	pr->url = NULL;
}
