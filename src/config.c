/*
 * config.c: holt.conf (holt.conf(5)).
 *
 *	# comment
 *	model = anthropic:claude-sonnet-4-5
 *	steps = 40
 *	price.openai:gpt-4.1 = 2.00 8.00	# USD per million tokens in, out
 *	[repo ~/src/parser]
 *	test_command = npm test
 *	[mcp everything]		# an MCP server (DESIGN 18)
 *	command = npx
 *	args = -y @modelcontextprotocol/server-everything
 *
 * The keys of an [mcp NAME] section are kept as "mcp.NAME.KEY" (command,
 * args, env, url, where, timeout); config_mcp_names lists the sections.
 *
 * Every option has one name for the file, the command line (--steps) and
 * `holt config show`. Values are layered: default < file < [repo] section <
 * command line. An unknown key is harmless (a warning); a malformed line or
 * a bad value for a known key refuses the file, naming file and line.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "holt.h"

enum config_type { CT_STR, CT_NUM, CT_BOOL, CT_ENUM, CT_SIZE };

struct config_opt {
	const char	*key;
	enum config_type type;
	const char	*dflt;
	const char	*choices;	/* CT_ENUM: "a|b|c" */
	const char	*help;
};

static const struct config_opt config_opts[] = {
	{ "model", CT_STR, "", NULL, "the model, PROVIDER:NAME" },
	{ "base_url", CT_STR, "", NULL, "API base URL of the provider" },
	{ "openai_api_key", CT_STR, "", NULL, "key for openai: (else OPENAI_API_KEY)" },
	{ "anthropic_api_key", CT_STR, "", NULL, "key for anthropic: (else ANTHROPIC_API_KEY)" },
	{ "mode", CT_ENUM, "auto", "manual|auto|strict|trust", "approval mode" },
	{ "steps", CT_NUM, "25", NULL, "step cap of one run" },
	{ "budget_tokens", CT_NUM, "0", NULL, "token budget of a session (0: none)" },
	{ "budget_usd", CT_STR, "0", NULL, "cost budget of a session in USD (0: none)" },
	{ "test_command", CT_STR, "", NULL, "what run_tests runs" },
	{ "net", CT_ENUM, "policy", "off|on|policy", "sandbox network" },
	{ "memory", CT_SIZE, "2G", NULL, "sandbox memory limit" },
	{ "pids", CT_NUM, "512", NULL, "sandbox process limit" },
	{ "provider", CT_STR, "local", NULL, "where new sandboxes run: local, ssh:[USER@]HOST" },
	{ "ssh_command", CT_STR, "ssh", NULL, "the ssh client and its options, for ssh: providers" },
	{ "ssh_holt", CT_STR, "holt", NULL, "the holt command on an ssh: provider's host" },
	{ "ssh_retry_s", CT_NUM, "60", NULL, "seconds to make a dropped ssh connection again" },
	{ "idle_pause", CT_STR, "30m", NULL, "pause a sandbox idle that long (0: never)" },
	{ "command_timeout", CT_NUM, "600", NULL, "seconds a command may run" },
	{ "checkpoint_max", CT_SIZE, "2G", NULL, "disk a sandbox's checkpoints may use (0: no bound)" },
	{ "output_cap", CT_SIZE, "32K", NULL, "tool output given to the model" },
	{ "context_window", CT_NUM, "0", NULL, "the model's window in tokens (0: from the built-in table)" },
	{ "compact_at", CT_NUM, "80", NULL, "percent of the window at which the conversation is compacted" },
	{ "max_tokens", CT_NUM, "8192", NULL, "most tokens of one reply (anthropic:)" },
	{ "request_timeout", CT_NUM, "300", NULL, "seconds for one model request" },
	{ "idle_timeout", CT_NUM, "90", NULL, "seconds without stream data" },
	{ "theme", CT_STR, "default", NULL, "colour theme (themes/NAME.theme)" },
	{ "prefix", CT_STR, "C-b", NULL, "prefix key of the TUI" },
	{ "approval_timeout", CT_NUM, "0", NULL, "seconds an approval waits while detached (0: forever)" },
	{ "approval_default", CT_ENUM, "deny", "allow|deny", "answer after approval_timeout" },
	{ "secret_vars", CT_STR, "", NULL, "more variable names whose values are redacted" },
	{ "git_token", CT_STR, "", NULL, "token for https git and the PR API (else GITHUB_TOKEN, HOLT_GIT_TOKEN)" },
	{ "github_api_url", CT_STR, "https://api.github.com", NULL, "API base for pull requests" },
	{ "e2b_api_key", CT_STR, "", NULL, "key for --provider e2b (else E2B_API_KEY)" },
	{ "e2b_api_url", CT_STR, "", NULL, "E2B's API (else E2B_API_URL, then https://api.e2b.app)" },
	{ "e2b_sandbox_url", CT_STR, "", NULL, "one URL for every E2B sandbox's envd (else E2B_SANDBOX_URL)" },
	{ "e2b_template", CT_STR, "base", NULL, "template of new e2b sandboxes" },
	{ "otel_endpoint", CT_STR, "", NULL, "OTLP/HTTP endpoint the server sends traces to (POST URL/v1/traces)" },
};

struct config_val {
	char		*key;
	char		*value;
	char		*source;
	char		*repo;		/* set in [repo X] */
	int		 cmdline;
	struct config_val *next;
};

static struct config_val	*config_vals;
static struct config_val	*config_old;	/* replaced, never freed */
static char			*config_repo;
static int			 config_loaded;
static char			**config_mcp;	/* [mcp NAME] sections, in order */
static size_t			 config_nmcp;
static struct stat		 config_stat;	/* holt.conf when read */

static const struct config_opt *
config_find_opt(const char *key)
{
	size_t	 i;

	for (i = 0; i < nitems(config_opts); i++) {
		if (strcmp(config_opts[i].key, key) == 0)
			return &config_opts[i];
	}
	return NULL;
}

static int
config_parse_size(const char *v, long long *out)
{
	char		*end;
	long long	 n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || end == v || n < 0)
		return -1;
	switch (toupper((unsigned char)*end)) {
	case '\0':
		break;
	case 'K':
		n <<= 10; end++;
		break;
	case 'M':
		n <<= 20; end++;
		break;
	case 'G':
		n <<= 30; end++;
		break;
	default:
		return -1;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0')
		return -1;
	*out = n;
	return 0;
}

/* Check a value against its option; NULL if fine, else a message. */
static char *
config_check(const struct config_opt *o, const char *v)
{
	char		*end;
	const char	*p, *bar;
	long long	 n;
	size_t		 len = strlen(v);

	switch (o->type) {
	case CT_STR:
		return NULL;
	case CT_NUM:
		errno = 0;
		n = strtoll(v, &end, 10);
		if (errno != 0 || end == v || *end != '\0' || n < 0)
			return xprintf("%s: '%s' is not a number", o->key, v);
		return NULL;
	case CT_SIZE:
		if (config_parse_size(v, &n) != 0)
			return xprintf("%s: '%s' is not a size (like 512M)",
			    o->key, v);
		return NULL;
	case CT_BOOL:
		if (strcmp(v, "yes") == 0 || strcmp(v, "no") == 0 ||
		    strcmp(v, "on") == 0 || strcmp(v, "off") == 0 ||
		    strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
			return NULL;
		return xprintf("%s: '%s' is not yes or no", o->key, v);
	case CT_ENUM:
		for (p = o->choices; p != NULL; p = bar != NULL ? bar + 1 : NULL) {
			bar = strchr(p, '|');
			if ((bar != NULL ? (size_t)(bar - p) : strlen(p)) == len &&
			    strncmp(p, v, len) == 0)
				return NULL;
		}
		return xprintf("%s: '%s' is not one of %s", o->key, v,
		    o->choices);
	}
	return NULL;
}

static void
config_add(const char *key, const char *value, const char *source,
    const char *repo, int cmdline)
{
	struct config_val	*cv = xcalloc(1, sizeof *cv);

	cv->key = xstrdup(key);
	cv->value = xstrdup(value);
	cv->source = xstrdup(source);
	cv->repo = repo != NULL ? xstrdup(repo) : NULL;
	cv->cmdline = cmdline;
	cv->next = config_vals;
	config_vals = cv;
}

static char *
trim(char *s)
{
	char	*e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Strip a trailing comment: '#' at the start or after white space. */
static void
strip_comment(char *s)
{
	char	*p;

	for (p = s; *p != '\0'; p++) {
		if (*p == '#' && (p == s || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			return;
		}
	}
}

/*
 * holt.conf changed since it was read (a long-running server): read it
 * again, so what comes next (a session the server opens) uses it. The
 * values it replaces are kept, never freed: callers may hold them.
 */
int
config_refresh(char **cause)
{
	struct config_val	*cv, **cvp;
	struct stat		 sb;
	char			*path = paths_join(paths_config_dir(),
				    "holt.conf");
	int			 rc;

	if (stat(path, &sb) != 0)
		memset(&sb, 0, sizeof sb);
	free(path);
	if (!config_loaded || (sb.st_mtim.tv_sec == config_stat.st_mtim.tv_sec &&
	    sb.st_mtim.tv_nsec == config_stat.st_mtim.tv_nsec &&
	    sb.st_size == config_stat.st_size && sb.st_ino == config_stat.st_ino))
		return 0;
	cvp = &config_vals;
	while ((cv = *cvp) != NULL) {
		if (cv->cmdline) {
			cvp = &cv->next;
			continue;
		}
		*cvp = cv->next;
		cv->next = config_old;
		config_old = cv;
	}
	while (config_nmcp > 0)
		free(config_mcp[--config_nmcp]);
	rc = config_load(NULL, cause);
	return rc;
}

/*
 * [mcp NAME]: NAME becomes part of the tools' names (mcp__NAME__TOOL), so
 * it is letters, digits, '-' and '_', without "__". The first section of
 * a name is where it stands in the list; a second adds to it.
 */
static char *
config_mcp_section(const char *name, char **mcp)
{
	const char	*p;
	size_t		 i;

	if (*name == '\0' || strstr(name, "__") != NULL ||
	    strlen(name) > 32)
		return xprintf("mcp '%s': a name is 1 to 32 letters, digits, "
		    "'-' or '_' (not \"__\")", name);
	for (p = name; *p != '\0'; p++) {
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
			return xprintf("mcp '%s': a name is 1 to 32 letters, "
			    "digits, '-' or '_' (not \"__\")", name);
	}
	*mcp = xstrdup(name);
	for (i = 0; i < config_nmcp; i++) {
		if (strcmp(config_mcp[i], name) == 0)
			return NULL;
	}
	config_mcp = xreallocarray(config_mcp, config_nmcp + 1,
	    sizeof *config_mcp);
	config_mcp[config_nmcp++] = xstrdup(name);
	return NULL;
}

static char *
config_mcp_check(const char *mcp, const char *key, const char *val)
{
	char		*end;
	long		 n;

	if (strcmp(key, "where") == 0) {
		if (strcmp(val, "sandbox") != 0 && strcmp(val, "host") != 0)
			return xprintf("mcp '%s': where: '%s' is not one of "
			    "sandbox|host", mcp, val);
	} else if (strcmp(key, "timeout") == 0) {
		n = strtol(val, &end, 10);
		if (*val == '\0' || *end != '\0' || n <= 0 || n > 86400)
			return xprintf("mcp '%s': timeout: '%s' is not a number "
			    "of seconds (1 to 86400)", mcp, val);
	} else if (strcmp(key, "url") == 0) {
		if (strncmp(val, "http://", 7) != 0 &&
		    strncmp(val, "https://", 8) != 0)
			return xprintf("mcp '%s': url: '%s' is not an http or "
			    "https URL", mcp, val);
	} else if (strcmp(key, "command") != 0 && strcmp(key, "args") != 0 &&
	    strcmp(key, "env") != 0)
		return xprintf("mcp '%s': unknown key '%s' (command, args, env, "
		    "url, where, timeout)", mcp, key);
	return NULL;
}

size_t
config_mcp_names(const char *const **names)
{
	if (!config_loaded) {
		char *cause = NULL;
		if (config_load(NULL, &cause) != 0)
			fatalx("%s", cause);
	}
	*names = (const char *const *)config_mcp;
	return config_nmcp;
}

int
config_load(const char *path, char **cause)
{
	char		*def = NULL, *data, *line, *next, *eq, *key, *val;
	char		*repo = NULL, *src, *mcp = NULL, *mkey = NULL;
	const struct config_opt *o;
	size_t		 len;
	unsigned int	 lineno = 0;
	char		*msg;

	config_loaded = 1;
	if (path == NULL)
		path = def = paths_join(paths_config_dir(), "holt.conf");
	if (def != NULL && stat(def, &config_stat) != 0)
		memset(&config_stat, 0, sizeof config_stat);
	if ((data = file_read(path, &len, 1024 * 1024)) == NULL) {
		if (errno == ENOENT && def != NULL) {
			free(def);
			return 0;
		}
		*cause = xprintf("%s: %s", path, strerror(errno));
		free(def);
		return -1;
	}
	for (line = data; line != NULL; line = next) {
		lineno++;
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		strip_comment(line);
		line = trim(line);
		if (*line == '\0')
			continue;
		if (*line == '[') {
			len = strlen(line);
			if (len < 3 || line[len - 1] != ']' ||
			    (strncmp(line, "[repo ", 6) != 0 &&
			    strncmp(line, "[mcp ", 5) != 0)) {
				*cause = xprintf("%s:%u: bad section '%s' (only "
				    "[repo PATH-OR-URL] and [mcp NAME])", path,
				    lineno, line);
				goto fail;
			}
			line[len - 1] = '\0';
			free(repo);
			repo = NULL;
			free(mcp);
			mcp = NULL;
			if (strncmp(line, "[mcp ", 5) == 0) {
				if ((msg = config_mcp_section(trim(line + 5),
				    &mcp)) != NULL) {
					*cause = xprintf("%s:%u: %s", path,
					    lineno, msg);
					free(msg);
					goto fail;
				}
				continue;
			}
			repo = xstrdup(trim(line + 6));
			continue;
		}
		if ((eq = strchr(line, '=')) == NULL) {
			*cause = xprintf("%s:%u: expected 'key = value'", path,
			    lineno);
			goto fail;
		}
		*eq = '\0';
		key = trim(line);
		val = trim(eq + 1);
		if (mcp != NULL) {
			if ((msg = config_mcp_check(mcp, key, val)) != NULL) {
				*cause = xprintf("%s:%u: %s", path, lineno, msg);
				free(msg);
				goto fail;
			}
			key = mkey = xprintf("mcp.%s.%s", mcp, key);
		} else if (strncmp(key, "price.", 6) == 0 || strncmp(key, "bind.", 5) == 0) {
			if (strncmp(key, "price.", 6) == 0) {
				double in, out, cached = 0;
				char extra;
				int n = sscanf(val, "%lf %lf %lf %c", &in, &out,
				    &cached, &extra);
				if ((n != 2 && n != 3) || in < 0 || out < 0 ||
				    cached < 0) {
					*cause = xprintf("%s:%u: %s: expected two "
					    "prices, input and output USD per "
					    "million tokens, and optionally a "
					    "third, cached input", path, lineno,
					    key);
					goto fail;
				}
			}
		} else if ((o = config_find_opt(key)) == NULL) {
			log_warnx("%s:%u: unknown option '%s' (ignored)", path,
			    lineno, key);
			continue;
		} else if ((msg = config_check(o, val)) != NULL) {
			*cause = xprintf("%s:%u: %s", path, lineno, msg);
			free(msg);
			goto fail;
		}
		src = xprintf("%s:%u", path, lineno);
		config_add(key, val, src, repo, 0);
		free(src);
		free(mkey);
		mkey = NULL;
	}
	free(repo);
	free(mcp);
	free(data);
	free(def);
	return 0;
fail:
	free(repo);
	free(mcp);
	free(data);
	free(def);
	return -1;
}

void
config_set(const char *key, const char *value, const char *source)
{
	config_add(key, value, source != NULL ? source : "command line", NULL, 1);
}

void
config_select_repo(const char *repo)
{
	free(config_repo);
	config_repo = repo != NULL ? xstrdup(repo) : NULL;
}

static const struct config_val *
config_lookup(const char *key)
{
	const struct config_val	*cv, *file = NULL, *repo = NULL;

	/* The list is newest first, so the first hit of each kind wins. */
	for (cv = config_vals; cv != NULL; cv = cv->next) {
		if (strcmp(cv->key, key) != 0)
			continue;
		if (cv->cmdline)
			return cv;
		if (cv->repo != NULL) {
			if (repo == NULL && config_repo != NULL &&
			    strcmp(cv->repo, config_repo) == 0)
				repo = cv;
		} else if (file == NULL)
			file = cv;
	}
	return repo != NULL ? repo : file;
}

const char *
config_get(const char *key)
{
	const struct config_val	*cv;
	const struct config_opt	*o;

	if (!config_loaded) {
		char *cause = NULL;
		if (config_load(NULL, &cause) != 0)
			fatalx("%s", cause);
	}
	if ((cv = config_lookup(key)) != NULL)
		return cv->value;
	if ((o = config_find_opt(key)) != NULL)
		return o->dflt;
	return NULL;
}

const char *
config_source(const char *key)
{
	const struct config_val	*cv;

	if ((cv = config_lookup(key)) != NULL)
		return cv->source;
	return "default";
}

long long
config_get_num(const char *key)
{
	const char	*v = config_get(key);
	const struct config_opt *o = config_find_opt(key);
	long long	 n = 0;

	if (v == NULL)
		return 0;
	if (o != NULL && o->type == CT_SIZE) {
		if (config_parse_size(v, &n) != 0)
			return 0;
		return n;
	}
	return strtoll(v, NULL, 10);
}

int
config_get_bool(const char *key)
{
	const char	*v = config_get(key);

	return v != NULL && (strcmp(v, "yes") == 0 || strcmp(v, "on") == 0 ||
	    strcmp(v, "true") == 0);
}

static int
config_is_secret(const char *key)
{
	return strcmp(key, "openai_api_key") == 0 ||
	    strcmp(key, "anthropic_api_key") == 0 ||
	    strcmp(key, "git_token") == 0 ||
	    strcmp(key, "e2b_api_key") == 0;
}

void
config_dump(FILE *f)
{
	const struct config_val	*cv;
	const char		*v;
	size_t			 i;

	for (i = 0; i < nitems(config_opts); i++) {
		v = config_get(config_opts[i].key);
		if (config_is_secret(config_opts[i].key) && *v != '\0')
			v = "(set, hidden)";
		fprintf(f, "%-18s = %-30s # %s\n", config_opts[i].key, v,
		    config_source(config_opts[i].key));
	}
	for (cv = config_vals; cv != NULL; cv = cv->next) {
		if (config_find_opt(cv->key) != NULL)
			continue;
		if (cv->repo != NULL && (config_repo == NULL ||
		    strcmp(cv->repo, config_repo) != 0))
			continue;
		if (config_lookup(cv->key) != cv)
			continue;
		fprintf(f, "%-18s = %-30s # %s\n", cv->key, cv->value,
		    cv->source);
	}
}
