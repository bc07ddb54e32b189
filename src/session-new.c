/*
 * session-new.c: creating and removing sessions. A new session gets its own
 * sandbox (named after the session), the repository cloned or copied into
 * the sandbox's workspace on the host side (libgit2; tokens stay here), and
 * a session.json. Nothing is left half-made: on failure the sandbox and the
 * session directory are removed again.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "git.h"
#include "policy.h"
#include "sandbox.h"
#include "session.h"

#define SESSION_CREATING	"creating"	/* sandbox id, pid, start */

static void	session_creating(const char *, const char *);

static const char no_model_help[] =
    "no model is configured. Set one of:\n"
    "  ANTHROPIC_API_KEY=...   (model = anthropic:claude-sonnet-4-5)\n"
    "  OPENAI_API_KEY=...      (model = openai:gpt-4.1)\n"
    "  model = openai:NAME and base_url = http://127.0.0.1:11434/v1 in "
    "holt.conf\n"
    "                          (a local OpenAI-compatible server: Ollama, "
    "llama.cpp, vLLM)\n"
    "or see holt at work without any: holt demo";

/* The model to use when none is given: what the keys in the environment allow. */
static const char *
default_model(void)
{
	const char	*m = config_get("model");

	if (m != NULL && *m != '\0')
		return m;
	if (getenv("ANTHROPIC_API_KEY") != NULL && *getenv("ANTHROPIC_API_KEY"))
		return "anthropic:claude-sonnet-4-5";
	if (getenv("OPENAI_API_KEY") != NULL && *getenv("OPENAI_API_KEY"))
		return "openai:gpt-4.1";
	return NULL;
}

static char *
derive_name(const char *repo)
{
	const char	*base = "session", *p;
	char		*name, *s;
	size_t		 n;

	if (repo != NULL) {
		n = strlen(repo);
		while (n > 1 && repo[n - 1] == '/')
			n--;
		for (p = repo + n; p > repo && p[-1] != '/' && p[-1] != ':'; p--)
			;
		name = xstrndup(p, (size_t)(repo + n - p));
		if (strlen(name) > 4 && strcmp(name + strlen(name) - 4, ".git") == 0)
			name[strlen(name) - 4] = '\0';
		if (strcmp(name, ".") == 0 || *name == '\0') {
			free(name);
			name = NULL;
			{
				char cwd[4096];
				if (getcwd(cwd, sizeof cwd) != NULL &&
				    (p = strrchr(cwd, '/')) != NULL && p[1] != '\0')
					name = xstrdup(p + 1);
			}
		}
		if (name != NULL) {
			for (s = name; *s != '\0'; s++) {
				if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' &&
				    *s <= 'Z') || (*s >= '0' && *s <= '9') ||
				    *s == '-' || *s == '_' || *s == '.'))
					*s = '-';
			}
			while (*name == '.' || *name == '-')
				memmove(name, name + 1, strlen(name));
			if (*name != '\0' && strlen(name) <= 48)
				return name;
			free(name);
		}
	}
	return xstrdup(base);
}

static void
clone_progress(unsigned int got, unsigned int total, unsigned long long bytes,
    void *arg)
{
	const struct session_new *sn = arg;
	char	*msg;

	if (sn->progress == NULL)
		return;
	msg = xprintf("cloning: %u/%u objects, %.1f MiB", got, total,
	    (double)bytes / (1024 * 1024));
	sn->progress(sn->progress_arg, msg);
	free(msg);
}

int
session_new_option(struct session_new *sn, int ch, const char *arg,
    char **cause)
{
	char	*end;
	long	 n;

	switch (ch) {
	case 's':
		sn->name = arg;
		return 1;
	case 'r':
		sn->repo = arg;
		return 1;
	case 'B':
		sn->branch = arg;
		return 1;
	case 'm':
		sn->model = arg;
		return 1;
	case 'u':
		sn->base_url = arg;
		return 1;
	case 'M':
		sn->mode = arg;
		return 1;
	case 'T':
		sn->test_command = arg;
		return 1;
	case 'N':
		sn->net = arg;
		return 1;
	case 'P':
		sn->provider = arg;
		return 1;
	case 'D':
	case 'n':
		n = strtol(arg, &end, 10);
		if (*end != '\0' || n < (ch == 'D' ? 0 : 1) || n > 100000) {
			*cause = xprintf("--%s '%s': a %s number", ch == 'D' ?
			    "depth" : "steps", arg, ch == 'D' ? "whole" :
			    "positive");
			return -1;
		}
		if (ch == 'D')
			sn->depth = (int)n;
		else
			sn->steps = (int)n;
		return 1;
	}
	return 0;
}

char *
session_create(const struct session_new *sn, char **cause)
{
	struct sandbox_opts	 so;
	struct sandbox		*sbx = NULL;
	struct git_import_opts	 gio;
	enum policy_mode	 mode;
	cJSON			*meta = NULL, *ev, *evs;
	struct eventlog		*el = NULL;
	char			*name = NULL, *base = NULL, *ws = NULL, *dir;
	char			*created = NULL, *repo_abs = NULL, *tmp;
	const char		*model, *net, *modename;
	int			 netv;
	char			*branch = NULL, *ws2;
	int			 i, is_url;

	/* The [repo ...] section of holt.conf applies to this repository. */
	if (sn->repo != NULL) {
		char *real = strstr(sn->repo, "://") == NULL ?
		    realpath(sn->repo, NULL) : NULL;
		config_select_repo(real != NULL ? real : sn->repo);
		free(real);
	}
	model = sn->model != NULL ? sn->model : default_model();
	if (model == NULL || *model == '\0') {
		*cause = xstrdup(no_model_help);
		return NULL;
	}
	if (strncmp(model, "openai:", 7) != 0 &&
	    strncmp(model, "anthropic:", 10) != 0 &&
	    strncmp(model, "script:", 7) != 0) {
		*cause = xprintf("model '%s': use openai:NAME, anthropic:NAME "
		    "or script:FILE", model);
		return NULL;
	}
	modename = sn->mode != NULL ? sn->mode : config_get("mode");
	if (policy_mode_parse(modename, &mode) != 0) {
		*cause = xprintf("mode '%s': manual, auto, strict or trust",
		    modename);
		return NULL;
	}
	net = sn->net != NULL ? sn->net : config_get("net");
	if (sandbox_net_parse(net, &netv) != 0) {
		*cause = xprintf("net '%s': off, on or policy", net);
		return NULL;
	}

	if (sn->name != NULL) {
		if (session_name_valid(sn->name, cause) != 0)
			return NULL;
		if (session_exists(sn->name)) {
			*cause = xprintf("session '%s' already exists (holt "
			    "attach -t %s, or kill-session --rm it)", sn->name,
			    sn->name);
			return NULL;
		}
		name = xstrdup(sn->name);
	} else {
		base = derive_name(sn->repo);
		name = xstrdup(base);
		for (i = 2; session_exists(name) && i < 1000; i++) {
			free(name);
			name = xprintf("%s-%d", base, i);
		}
		free(base);
		base = NULL;
	}
	is_url = sn->repo != NULL && (strstr(sn->repo, "://") != NULL ||
	    strncmp(sn->repo, "git@", 4) == 0) &&
	    strncmp(sn->repo, "file://", 7) != 0;
	if (sn->repo != NULL && !is_url) {
		if ((repo_abs = realpath(strncmp(sn->repo, "file://", 7) == 0 ?
		    sn->repo + 7 : sn->repo, NULL)) == NULL) {
			*cause = xprintf("repository '%s': %s", sn->repo,
			    strerror(errno));
			free(name);
			return NULL;
		}
	} else if (sn->repo != NULL) {
		/* A user:token@ in the URL is used for the clone, never kept. */
		char *pw = NULL;
		repo_abs = git_url_strip(sn->repo, &pw);
		if (pw != NULL) {
			secret_add(pw);
			free(pw);
		}
	}

	session_sweep();
	/* The session directory first: it reserves the name. */
	dir = session_dir(name);
	if (file_mkdir_p(dir, 0700) != 0) {
		*cause = xprintf("%s: %s", dir, strerror(errno));
		free(dir);
		goto fail;
	}
	free(dir);

	sandbox_opts_config(&so);
	so.name = name;
	so.net = netv;
	so.provider = sn->provider;
	if ((sbx = sandbox_create(&so, &tmp)) == NULL) {
		/* The name may be taken by a leftover sandbox: go unnamed. */
		free(tmp);
		so.name = NULL;
		if ((sbx = sandbox_create(&so, cause)) == NULL)
			goto fail;
	}
	session_creating(name, sandbox_id(sbx));

	if (repo_abs != NULL) {
		if (sn->progress != NULL)
			sn->progress(sn->progress_arg, "copying the repository");
		memset(&gio, 0, sizeof gio);
		gio.branch = sn->branch;
		gio.depth = sn->depth;
		gio.progress = clone_progress;
		gio.progress_arg = (void *)sn;
		ws = sandbox_workspace(sbx);
		if (git_import(is_url ? sn->repo : repo_abs, ws, &gio, &base,
		    &tmp) != 0) {
			*cause = xprintf("repository '%s': %s", repo_abs, tmp);
			free(tmp);
			goto fail;
		}
		/* Before the agent can touch the workspace: the PR's base. */
		if (sn->branch == NULL)
			branch = git_default_branch(is_url ? ws : repo_abs, is_url);
		/* A sandbox elsewhere gets it too. */
		if (strcmp(sandbox_provider_spec(sbx), "local") != 0 &&
		    sandbox_copy_in(sbx, ws, cause) != 0)
			goto fail;
	}

	meta = cJSON_CreateObject();
	cJSON_AddStringToObject(meta, "name", name);
	cJSON_AddStringToObject(meta, "sandbox", sandbox_id(sbx));
	cJSON_AddStringToObject(meta, "model", model);
	if (sn->base_url != NULL)
		cJSON_AddStringToObject(meta, "base_url", sn->base_url);
	cJSON_AddStringToObject(meta, "mode", policy_mode_name(mode));
	if (repo_abs != NULL)
		cJSON_AddStringToObject(meta, "repo", repo_abs);
	else
		cJSON_AddNullToObject(meta, "repo");
	if (base != NULL)
		cJSON_AddStringToObject(meta, "base_commit", base);
	else
		cJSON_AddNullToObject(meta, "base_commit");
	if (sn->branch != NULL)
		cJSON_AddStringToObject(meta, "branch", sn->branch);
	else if (branch != NULL)
		cJSON_AddStringToObject(meta, "branch", branch);
	created = json_time_now();
	cJSON_AddStringToObject(meta, "created", created);
	if (sn->test_command != NULL)
		cJSON_AddStringToObject(meta, "test_command", sn->test_command);
	else if (*config_get("test_command") != '\0')
		cJSON_AddStringToObject(meta, "test_command",
		    config_get("test_command"));
	cJSON_AddNumberToObject(meta, "steps_cap", sn->steps > 0 ? sn->steps :
	    (double)config_get_num("steps"));
	cJSON_AddStringToObject(meta, "net", net);
	if (sn->headless)
		cJSON_AddBoolToObject(meta, "headless", 1);

	if ((el = eventlog_open(name, cause)) == NULL)
		goto fail;
	evs = cJSON_CreateArray();
	ev = evlog_new("session.created");
	cJSON_AddStringToObject(ev, "name", name);
	cJSON_AddStringToObject(ev, "sandbox", sandbox_id(sbx));
	cJSON_AddStringToObject(ev, "model", model);
	cJSON_AddStringToObject(ev, "mode", policy_mode_name(mode));
	if (repo_abs != NULL)
		cJSON_AddStringToObject(ev, "repo", repo_abs);
	if (base != NULL)
		cJSON_AddStringToObject(ev, "base_commit", base);
	if (sn->task != NULL && *sn->task != '\0') {
		cJSON_AddItemToArray(evs, ev);
		ev = evlog_new("user.message");
		cJSON_AddStringToObject(ev, "text", sn->task);
	}
	cJSON_AddItemToArray(evs, ev);
	cJSON_ArrayForEach(ev, evs) {
		secret_redact_json(ev);
		if (eventlog_append(el, ev, 1) == 0) {
			*cause = xprintf("%s: %s", eventlog_path(el),
			    strerror(errno));
			cJSON_Delete(evs);
			goto fail;
		}
	}
	cJSON_Delete(evs);
	eventlog_close(el);
	el = NULL;
	/* session.json last: it is what makes the session exist. */
	if (session_save(name, meta, cause) != 0)
		goto fail;
	dir = session_dir(name);
	ws2 = paths_join(dir, SESSION_CREATING);
	unlink(ws2);
	free(ws2);
	free(dir);
	cJSON_Delete(meta);
	sandbox_free(sbx);
	free(ws);
	free(base);
	free(branch);
	free(created);
	free(repo_abs);
	return name;

fail:
	eventlog_close(el);
	if (sbx != NULL) {
		char *c2 = NULL;
		if (sandbox_rm(sbx, &c2) != 0)
			free(c2);
		sandbox_free(sbx);
	}
	dir = session_dir(name);
	file_rm_rf(dir);
	free(dir);
	cJSON_Delete(meta);
	free(ws);
	free(base);
	free(branch);
	free(created);
	free(repo_abs);
	free(name);
	return NULL;
}

/*
 * A session being made: its sandbox exists before its session.json does,
 * and a holt new killed meanwhile (in a long repository copy) would leave
 * the sandbox running with nothing pointing at it. "creating" in the
 * session directory says which sandbox and which process (pid and start
 * time); session_sweep removes both once that process is gone.
 */
static void
session_creating(const char *name, const char *sbx_id)
{
	struct proc_stat	 ps;
	char			*dir, *path, *text;

	memset(&ps, 0, sizeof ps);
	proc_stat_read(getpid(), &ps);
	dir = session_dir(name);
	path = paths_join(dir, SESSION_CREATING);
	text = xprintf("%s %ld %llu\n", sbx_id, (long)getpid(), ps.start);
	if (file_write_atomic(path, text, strlen(text), 0600) != 0)
		log_warn("%s", path);
	free(text);
	free(path);
	free(dir);
}

/* Half-made sessions of holt new processes that died: see above. */
void
session_sweep(void)
{
	DIR			*d;
	struct dirent		*de;
	struct proc_stat	 ps;
	struct sandbox		*sbx;
	char			*dir, *path, *data, id[64], *cause = NULL;
	long			 pid;
	unsigned long long	 start;

	if ((d = opendir(paths_sessions_dir())) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || session_exists(de->d_name))
			continue;
		dir = session_dir(de->d_name);
		path = paths_join(dir, SESSION_CREATING);
		data = file_read(path, NULL, 256);
		free(path);
		if (data == NULL || sscanf(data, "%63s %ld %llu", id, &pid,
		    &start) != 3 || (proc_stat_read((pid_t)pid, &ps) == 0 &&
		    ps.start == start)) {
			free(data);	/* not one of ours, or still at work */
			free(dir);
			continue;
		}
		free(data);
		log_info("session '%s': removing what a holt new that died "
		    "left (sandbox %s)", de->d_name, id);
		if ((sbx = sandbox_open_damaged(id, &cause)) != NULL) {
			free(cause);
			cause = NULL;
			if (sandbox_rm(sbx, &cause) != 0) {
				log_warnx("%s", cause);
				free(cause);
				cause = NULL;
			}
			sandbox_free(sbx);
		} else {
			free(cause);
			cause = NULL;
		}
		file_rm_rf(dir);
		free(dir);
	}
	closedir(d);
}

int
session_remove(const char *name, char **cause)
{
	cJSON		*meta;
	struct sandbox	*sbx;
	const char	*id;
	char		*dir, *c2 = NULL;

	if (session_name_valid(name, cause) != 0)
		return -1;
	if ((meta = session_load(name, cause)) == NULL) {
		/* A corrupt session.json must not make it unremovable. */
		if (!session_exists(name))
			return -1;
		free(*cause);
		*cause = NULL;
	} else if ((id = json_str(meta, "sandbox")) != NULL &&
	    (sbx = sandbox_open_damaged(id, &c2)) != NULL) {
		free(c2);
		c2 = NULL;
		if (sandbox_rm(sbx, cause) != 0) {
			sandbox_free(sbx);
			cJSON_Delete(meta);
			return -1;
		}
		sandbox_free(sbx);
	} else
		free(c2);
	cJSON_Delete(meta);
	dir = session_dir(name);
	if (file_rm_rf(dir) != 0) {
		*cause = xprintf("%s: %s", dir, strerror(errno));
		free(dir);
		return -1;
	}
	free(dir);
	return 0;
}
