/*
 * policy.c: rules, sources and decisions of the command policy
 * (holt-policy(5)).
 *
 * A rule set is a list of files (built-in defaults, the user's policy, the
 * session's rules, the workspace's policy, or a rule given by an API call),
 * each a list of rules "ACTION PATTERN" compiled once with pcre2 and JIT.
 * A decision parses the command line (policy-shell.c), turns each simple
 * command into "items" - what is matched, after normalisation and looking
 * through wrappers - and the files they write, and judges each item: first
 * matching rule within a file, strictest across files, strictest across
 * items. Cost: one pcre2 match per rule per item in the worst case; the
 * built-in set has a dozen rules, so a typical decision is a few
 * microseconds.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "holt.h"
#include "policy.h"

enum policy_action {
	PA_ALLOW, PA_ASK, PA_DENY, PA_WRITE_ALLOW, PA_WRITE_ASK, PA_WRITE_DENY,
	PA_TOOL_ALLOW, PA_TOOL_ASK, PA_TOOL_DENY, PA_NONE
};
static const char *policy_action_names[] = {
	"allow", "ask", "deny", "write-allow", "write-ask", "write-deny",
	"tool-allow", "tool-ask", "tool-deny"
};
/* What a rule judges: commands, writes, or tool names (MCP, DESIGN 18). */
enum policy_family { PF_COMMAND, PF_WRITE, PF_TOOL };
#define policy_family(a) ((enum policy_family)((a) / 3))

struct policy_rule {
	enum policy_action	 action;
	int			 jit;	/* compiled by the JIT */
	char			*pattern;
	unsigned int		 line;
	pcre2_code		*re;
};

struct policy_group {
	char			*source;
	char			*path;	/* NULL: built in or added by call */
	struct policy_rule	*rules;
	size_t			 nrules;
};

struct policy {
	struct policy_group	*groups;
	size_t			 ngroups;
	struct policy_net	*net;	/* net-allow/net-deny: policy-net.c */
	pcre2_match_data	*md;
	pcre2_match_context	*mctx;
	char			*root;	/* of write rules; NULL: /workspace */
	char			*tmp;	/* the sandbox's own /tmp; NULL: none */
};

/* The built-in defaults: reading and inspecting; the rest is asked. */
static const char policy_defaults[] =
    "# reading and inspecting\n"
    "allow ^(ls|cat|head|tail|wc|pwd|echo|printf|true|false|basename|dirname"
    "|realpath|readlink|stat|du|df|which|type|whoami|id|uname|date"
    "|printenv|seq|sleep|cut|tr|diff|cmp|comm|nl|od|sha256sum|sha1sum"
    "|md5sum|grep|egrep|fgrep|jq|test|\\[|\\[\\[|cd|pushd|popd)(\\s|$)\n"
    "allow ^(:|break|continue|exit|return|shift|wait)(\\s|$)\n"
    "allow ^command -[vV](\\s|$)\n"
    "allow ^find(?!.*\\s-(delete|fprint0?|fprintf|fls)(\\s|$))(\\s|$)\n"
    "allow ^rg(?!.*\\s--pre(=|\\s|$))(\\s|$)\n"
    "allow ^git (status|diff|log|show|rev-parse|ls-files|blame|shortlog"
    "|describe)(?!.*\\s--(output|ext-diff|textconv)(=|\\s|$))(\\s|$)\n"
    "allow ^git branch(\\s+(-a|-r|-v|-vv|--list|--show-current|--all"
    "|--remotes))*$\n"
    "# writes: anywhere in the workspace but a .git or .holt at any depth\n"
    "write-ask (^|/)\\.(git|holt)(/|$)\n"
    "write-allow ^\n";

/* Names whose prefix assignment (NAME=v cmd) changes nothing that matters. */
static const char *policy_safe_vars[] = {
	"CI", "NODE_ENV", "DEBUG", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
	"LC_COLLATE", "LC_NUMERIC", "LC_TIME", "TZ", "TERM", "NO_COLOR",
	"FORCE_COLOR", "COLUMNS", "LINES", "RUST_BACKTRACE", "RUST_LOG",
	"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "CARGO_TERM_COLOR",
	"NODE_NO_WARNINGS", "VERBOSE", "CLICOLOR", "GIT_PAGER_IN_USE"
};

/*
 * Names that make a shell, an interpreter or a tool run code or read
 * configuration the agent can write: never auto-allowed in front of any
 * command, wrapper or export. A name ending in '*' is a prefix.
 */
static const char *policy_code_vars[] = {
	"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS1", "PS2", "PS3", "PS4",
	"PROMPT_COMMAND", "BASH_FUNC_*", "BASH_LOADABLES_PATH", "BASH_XTRACEFD",
	"IFS", "ZDOTDIR", "FPATH", "PATH", "HOME", "XDG_CONFIG_HOME",
	"XDG_CONFIG_DIRS", "CDPATH", "LD_*", "DYLD_*", "GCONV_PATH", "LOCPATH",
	"MALLOC_*", "GLIBC_TUNABLES", "PYTHON*", "NODE_*", "PERL*", "RUBY*",
	"GEM_*", "BUNDLE_*", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
	"JDK_JAVA_OPTIONS", "CLASSPATH", "LUA_*", "TCLLIBPATH", "R_PROFILE*",
	"R_ENVIRON*", "GIT_*", "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE",
	"EDITOR", "VISUAL", "BROWSER", "SSH_ASKPASS", "SUDO_ASKPASS",
	"NPM_CONFIG_*", "npm_config_*", "YARN_*", "CARGO_*", "RUSTC*",
	"RUSTFLAGS", "RUSTDOCFLAGS", "GOFLAGS", "GOTOOLCHAIN", "GOENV", "CC",
	"CXX", "CPP", "LD", "MAKEFLAGS", "MFLAGS", "MAKEFILES", "TAR_OPTIONS",
	"RIPGREP_CONFIG_PATH", "GREP_OPTIONS", "GNUPGHOME", "DOCKER_*",
	"KUBECONFIG", "OPENSSL_CONF", "OPENSSL_ENGINES", "PHPRC",
	"PHP_INI_SCAN_DIR", "DOTNET_*", "CORECLR_*", "RSYNC_RSH",
	"RSYNC_CONNECT_PROG", "CVS_RSH", "PSQLRC", "LESS", "LESSKEY*",
	"SYSTEMD_PAGER", "VIMINIT", "EXINIT", "MYVIMRC", "FCEDIT", "HISTFILE",
	"EMACSLOADPATH"
};

/* ------------------------------------------------------------------ */
/* names */

const char *
policy_verdict_name(enum policy_verdict v)
{
	switch (v) {
	case POLICY_ALLOW:
		return "allow";
	case POLICY_ASK:
		return "ask";
	case POLICY_DENY:
		return "deny";
	}
	return "?";
}

const char *
policy_mode_name(enum policy_mode m)
{
	switch (m) {
	case POLICY_MANUAL:
		return "manual";
	case POLICY_AUTO:
		return "auto";
	case POLICY_STRICT:
		return "strict";
	case POLICY_TRUST:
		return "trust";
	}
	return "?";
}

int
policy_mode_parse(const char *s, enum policy_mode *m)
{
	if (s == NULL)
		return -1;
	if (strcmp(s, "manual") == 0)
		*m = POLICY_MANUAL;
	else if (strcmp(s, "auto") == 0)
		*m = POLICY_AUTO;
	else if (strcmp(s, "strict") == 0)
		*m = POLICY_STRICT;
	else if (strcmp(s, "trust") == 0)
		*m = POLICY_TRUST;
	else
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* rule sets */

struct policy *
policy_new_empty(void)
{
	struct policy	*p;

	p = xcalloc(1, sizeof *p);
	p->md = pcre2_match_data_create(4, NULL);
	p->mctx = pcre2_match_context_create(NULL);
	if (p->md == NULL || p->mctx == NULL)
		fatalx("out of memory");
	/* Bound a pathological user pattern instead of hanging on it. */
	pcre2_set_match_limit(p->mctx, 1000000);
	pcre2_set_depth_limit(p->mctx, 10000);
	return p;
}

static int policy_load_buf(struct policy *, const char *, size_t,
    const char *, const char *, char **);

struct policy *
policy_new(void)
{
	struct policy	*p;
	char		*cause = NULL;

	p = policy_new_empty();
	if (policy_load_buf(p, policy_defaults, sizeof policy_defaults - 1,
	    "default", NULL, &cause) != 0)
		fatalx("built-in policy: %s", cause);
	if (policy_net_load_defaults(&p->net, &cause) != 0)
		fatalx("built-in policy: %s", cause);
	return p;
}

static void
policy_group_release(struct policy_group *g)
{
	size_t	 i;

	for (i = 0; i < g->nrules; i++) {
		free(g->rules[i].pattern);
		pcre2_code_free(g->rules[i].re);
	}
	free(g->rules);
	free(g->source);
	free(g->path);
}

void
policy_free(struct policy *p)
{
	size_t	 i;

	if (p == NULL)
		return;
	free(p->root);
	free(p->tmp);
	for (i = 0; i < p->ngroups; i++)
		policy_group_release(&p->groups[i]);
	free(p->groups);
	policy_net_free(p->net);
	pcre2_match_data_free(p->md);
	pcre2_match_context_free(p->mctx);
	free(p);
}

static int
policy_action_parse(const char *s, size_t n, enum policy_action *a)
{
	size_t	 i;

	for (i = 0; i < nitems(policy_action_names); i++) {
		if (strlen(policy_action_names[i]) == n &&
		    memcmp(policy_action_names[i], s, n) == 0) {
			*a = (enum policy_action)i;
			return 0;
		}
	}
	return -1;
}

static int
policy_compile(struct policy_rule *r, const char *pattern, char **msg)
{
	PCRE2_UCHAR	 buf[256];
	PCRE2_SIZE	 off;
	int		 error;

	r->re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
	    PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &error, &off, NULL);
	if (r->re == NULL) {
		pcre2_get_error_message(error, buf, sizeof buf);
		*msg = xprintf("bad pattern '%s': %s at offset %zu", pattern,
		    (char *)buf, (size_t)off);
		return -1;
	}
	/* Without JIT (unsupported CPU) the interpreter still matches. */
	r->jit = pcre2_jit_compile(r->re, PCRE2_JIT_COMPLETE) == 0;
	r->pattern = xstrdup(pattern);
	return 0;
}

static struct policy_group *
policy_group_add(struct policy *p, const char *source, const char *path)
{
	struct policy_group	*g;

	p->groups = xreallocarray(p->groups, p->ngroups + 1, sizeof *p->groups);
	g = &p->groups[p->ngroups++];
	memset(g, 0, sizeof *g);
	g->source = xstrdup(source);
	g->path = path != NULL ? xstrdup(path) : NULL;
	return g;
}

static void
policy_group_append(struct policy_group *g, struct policy_rule *r)
{
	g->rules = xreallocarray(g->rules, g->nrules + 1, sizeof *g->rules);
	g->rules[g->nrules++] = *r;
}

static int
policy_tightens(enum policy_action a)
{
	return a != PA_ALLOW && a != PA_WRITE_ALLOW && a != PA_TOOL_ALLOW;
}

/*
 * Parse a whole rules file into a new group; on any error nothing is kept.
 * name is what messages call the file.
 */
static int
policy_load_buf(struct policy *p, const char *data, size_t len,
    const char *source, const char *path, char **cause)
{
	struct policy_group	 g;
	struct policy_rule	 r;
	struct policy_net	*net = NULL;
	const char		*line, *end, *e, *a, *pat;
	char			*pattern, *msg = NULL, *kind;
	const char		*name = path != NULL ? path : source;
	unsigned int		 lineno = 0;
	size_t			 n;
	int			 workspace = strcmp(source, "workspace") == 0;
	int			 rc;

	memset(&g, 0, sizeof g);
	for (line = data; line < data + len; line = end + 1) {
		lineno++;
		end = memchr(line, '\n', (size_t)(data + len - line));
		if (end == NULL)
			end = data + len;
		a = line;
		while (a < end && isspace((unsigned char)*a))
			a++;
		if (a == end || *a == '#')
			continue;
		e = a;
		while (e < end && !isspace((unsigned char)*e))
			e++;
		memset(&r, 0, sizeof r);
		r.line = lineno;
		kind = NULL;
		if (policy_net_is_action(a, (size_t)(e - a))) {
			kind = xstrndup(a, (size_t)(e - a));
			r.action = PA_NONE;
		} else if (policy_action_parse(a, (size_t)(e - a),
		    &r.action) != 0) {
			msg = xprintf("unknown action '%.*s' (allow, ask, deny, "
			    "write-allow, write-ask, write-deny, net-allow, "
			    "net-deny, tool-allow, tool-ask, tool-deny)",
			    (int)(e - a), a);
			goto fail;
		}
		if (workspace && kind != NULL && strcmp(kind, "net-allow") == 0) {
			free(kind);
			msg = xstrdup("a workspace policy may only tighten: "
			    "'net-allow' refused");
			goto fail;
		}
		if (kind == NULL && workspace && !policy_tightens(r.action)) {
			msg = xprintf("a workspace policy may only tighten: '%s' "
			    "refused", policy_action_names[r.action]);
			goto fail;
		}
		pat = e;
		while (pat < end && isspace((unsigned char)*pat))
			pat++;
		/* A '#' after whitespace starts a comment. */
		for (e = pat; e < end; e++) {
			if (*e == '#' && e > pat && isspace((unsigned char)e[-1]))
				break;
		}
		while (e > pat && isspace((unsigned char)e[-1]))
			e--;
		n = (size_t)(e - pat);
		if (kind != NULL) {
			/* A host rule: policy-net.c keeps it. */
			pattern = xstrndup(pat, n);
			rc = policy_net_add(&net, kind, pattern, source, lineno,
			    &msg);
			free(pattern);
			free(kind);
			if (rc != 0)
				goto fail;
			if (end == data + len)
				break;
			continue;
		}
		if (n == 0) {
			msg = xprintf("'%s' needs a pattern",
			    policy_action_names[r.action]);
			goto fail;
		}
		if (memchr(pat, '\0', n) != NULL) {
			msg = xstrdup("NUL byte in the pattern");
			goto fail;
		}
		pattern = xstrndup(pat, n);
		if (policy_compile(&r, pattern, &msg) != 0) {
			free(pattern);
			goto fail;
		}
		free(pattern);
		policy_group_append(&g, &r);
		if (end == data + len)
			break;
	}
	p->groups = xreallocarray(p->groups, p->ngroups + 1, sizeof *p->groups);
	g.source = xstrdup(source);
	g.path = path != NULL ? xstrdup(path) : NULL;
	p->groups[p->ngroups++] = g;
	policy_net_merge(&p->net, net);
	return 0;
fail:
	*cause = xprintf("policy '%s': line %u: %s", name, lineno, msg);
	free(msg);
	policy_group_release(&g);
	policy_net_free(net);
	return -1;
}

int
policy_load_file(struct policy *p, const char *path, const char *source,
    char **cause)
{
	const char	*why = NULL;
	char		*data;
	size_t		 len;
	int		 r;

	/*
	 * The workspace's file is the repository's: a FIFO there is refused,
	 * never waited on. The user's own (--policy <(...)) may be a pipe.
	 */
	if (strcmp(source, "workspace") == 0)
		data = file_read_regular(path, &len, 4 * 1024 * 1024, &why);
	else
		data = file_read(path, &len, 4 * 1024 * 1024);
	if (data == NULL) {
		if (errno == ENOENT)
			return 0;
		*cause = xprintf("policy '%s': %s", path, why != NULL ? why :
		    strerror(errno));
		return -1;
	}
	r = policy_load_buf(p, data, len, source, path, cause);
	free(data);
	return r;
}

int
policy_add_rule(struct policy *p, const char *action, const char *pattern,
    const char *source, char **cause)
{
	struct policy_group	*g = NULL;
	struct policy_rule	 r;
	char			*msg = NULL;
	size_t			 i;

	memset(&r, 0, sizeof r);
	if (policy_net_is_action(action, strlen(action))) {
		if (strcmp(source, "workspace") == 0 &&
		    strcmp(action, "net-allow") == 0) {
			*cause = xstrdup("a workspace policy may only tighten: "
			    "'net-allow' refused");
			return -1;
		}
		return policy_net_add(&p->net, action, pattern, source, 0,
		    cause);
	}
	if (policy_action_parse(action, strlen(action), &r.action) != 0) {
		*cause = xprintf("unknown action '%s'", action);
		return -1;
	}
	if (strcmp(source, "workspace") == 0 && !policy_tightens(r.action)) {
		*cause = xprintf("a workspace policy may only tighten: '%s' "
		    "refused", action);
		return -1;
	}
	if (*pattern == '\0') {
		*cause = xprintf("'%s' needs a pattern", action);
		return -1;
	}
	if (policy_compile(&r, pattern, &msg) != 0) {
		*cause = msg;
		return -1;
	}
	for (i = p->ngroups; i > 0; i--) {
		if (strcmp(p->groups[i - 1].source, source) == 0) {
			g = &p->groups[i - 1];
			break;
		}
	}
	if (g == NULL)
		g = policy_group_add(p, source, NULL);
	r.line = g->nrules == 0 ? 1 : g->rules[g->nrules - 1].line + 1;
	policy_group_append(g, &r);
	return 0;
}

void
policy_dump(struct policy *p, FILE *f)
{
	struct policy_group	*g;
	struct policy_rule	*r;
	size_t			 i, j;

	for (i = 0; i < p->ngroups; i++) {
		g = &p->groups[i];
		if (g->path != NULL)
			fprintf(f, "# %s: %s\n", g->source, g->path);
		else if (strcmp(g->source, "default") == 0)
			fprintf(f, "# %s: built in, read-only\n", g->source);
		else
			fprintf(f, "# %s\n", g->source);
		for (j = 0; j < g->nrules; j++) {
			r = &g->rules[j];
			fprintf(f, "%-11s %s    # %s:%u\n",
			    policy_action_names[r->action], r->pattern, g->source,
			    r->line);
		}
	}
	policy_net_dump(p->net, f);
}

struct policy_result *
policy_check_host(struct policy *p, enum policy_mode mode, const char *host)
{
	return policy_net_check(p->net, mode, host);
}

static int	rule_matches(struct policy *, const struct policy_rule *,
		    const char *);
static int	action_rank(enum policy_action);

/*
 * A tool of an MCP server, by its full name (mcp__SERVER__TOOL): the
 * first tool-* rule of each file that matches, the strictest across
 * files; then the mode, as for a command. No rule asks in auto mode.
 */
struct policy_result *
policy_check_tool(struct policy *p, enum policy_mode mode, const char *name)
{
	struct policy_result		*res;
	struct policy_part		*part;
	const struct policy_group	*g, *jg = NULL;
	const struct policy_rule	*r, *jr = NULL;
	size_t				 gi, ri;
	int				 rank;

	for (gi = 0; gi < p->ngroups; gi++) {
		g = &p->groups[gi];
		for (ri = 0; ri < g->nrules; ri++) {
			r = &g->rules[ri];
			if (policy_family(r->action) != PF_TOOL ||
			    !rule_matches(p, r, name))
				continue;
			if (jr == NULL ||
			    action_rank(r->action) > action_rank(jr->action)) {
				jr = r;
				jg = g;
			}
			break;
		}
	}
	res = xcalloc(1, sizeof *res);
	res->parts = part = xcalloc(1, sizeof *part);
	res->nparts = 1;
	part->command = xprintf("tool %s", name);
	rank = jr != NULL ? action_rank(jr->action) : 0;
	if (rank == 3) {
		part->verdict = POLICY_DENY;
		part->reason = xstrdup("denied by a rule");
	} else if (rank == 2 || (rank == 0 && mode == POLICY_AUTO)) {
		part->verdict = mode == POLICY_STRICT ? POLICY_DENY :
		    mode == POLICY_TRUST ? POLICY_ALLOW : POLICY_ASK;
		part->reason = xstrdup(rank == 2 ? "a rule asks" :
		    "no rule settles this tool");
	} else if (mode == POLICY_MANUAL) {
		part->verdict = POLICY_ASK;
		part->reason = xstrdup("manual mode asks for every tool");
	} else if (rank == 1) {
		part->verdict = POLICY_ALLOW;
		part->reason = xstrdup("allowed by a rule");
	} else {
		part->verdict = mode == POLICY_STRICT ? POLICY_DENY :
		    POLICY_ALLOW;
		part->reason = xstrdup(mode == POLICY_STRICT ? "no rule allows "
		    "this tool (strict mode)" : "no rule denies this tool "
		    "(trust mode)");
	}
	if (jr != NULL) {
		part->rule = xstrdup(jr->pattern);
		part->source = xstrdup(jg->source);
		part->line = jr->line;
		part->action = xstrdup(policy_action_names[jr->action]);
		res->reason = xprintf("%s: %s '%s' (%s:%u)", part->command,
		    part->reason, part->rule, part->source, part->line);
	} else
		res->reason = xprintf("%s: %s", part->command, part->reason);
	res->verdict = part->verdict;
	return res;
}

/* ------------------------------------------------------------------ */
/* items: what is matched */

#define ITEM_MAX_FORMS	3
#define NORM_MAX_DEPTH	16
#define WORKSPACE	"/workspace"
#define SANDBOX_HOME	"/home/user"
#define MAX_CWDS	8

struct pitem {
	char		*forms[ITEM_MAX_FORMS];	/* [0]: all rules; rest ask/deny */
	size_t		 nforms;
	char		**words;	/* rendered name and arguments */
	size_t		 nwords;
	char		*problem;	/* never auto-allowed, because */
	int		 write;
	int		 transparent;	/* wrapper, or harmless on its own */
	int		 anyopts;	/* some arguments may be any option */
	size_t		 optword;	/* in words, the first such; 0: xargs */
};

struct pctx {
	struct policy	*p;
	struct pitem	*items;
	size_t		 nitems, aitems;
	const char	*root;		/* write rules' paths are below it */
	const char	*tmp;		/* or absolute, below this; or NULL */
	const char	*start;		/* where the command starts */
	char		*cwds[MAX_CWDS];	/* after each cd */
	size_t		 ncwds;
	int		 cwd_unknown;
	unsigned int	 depth;
	int		 overflow;	/* more than POLICY_MAX_PARTS */
	struct pitem	 scratch;	/* where the parts beyond go */
};

/* A command being normalised: borrowed words plus what was learnt. */
struct pcmd {
	const struct policy_word *assigns;
	size_t			 nassigns;
	const struct policy_word *words;
	size_t			 nwords;
	int			 args_unknown;	/* xargs, find -exec: more args */
	int			 xargs;		/* ... and they may be options */
	const char		*via;		/* "xargs", "find -exec" */
};

static int policy_norm_line(struct pctx *, const char *, size_t);

static void item_release(struct pitem *);

/*
 * A new part. Beyond POLICY_MAX_PARTS they are made and thrown away (so
 * that a line of 300,000 redirections costs no more than its parsing),
 * and the line asks.
 */
static struct pitem *
item_new(struct pctx *c)
{
	struct pitem	*it;

	if (c->nitems >= POLICY_MAX_PARTS) {
		c->overflow = 1;
		item_release(&c->scratch);
		memset(&c->scratch, 0, sizeof c->scratch);
		return &c->scratch;
	}
	if (c->nitems == c->aitems) {
		c->aitems = c->aitems == 0 ? 8 : c->aitems * 2;
		c->items = xreallocarray(c->items, c->aitems, sizeof *c->items);
	}
	it = &c->items[c->nitems++];
	memset(it, 0, sizeof *it);
	return it;
}

static void
item_release(struct pitem *it)
{
	size_t	 i;

	for (i = 0; i < it->nforms; i++)
		free(it->forms[i]);
	for (i = 0; i < it->nwords; i++)
		free(it->words[i]);
	free(it->words);
	free(it->problem);
}

static void
item_form(struct pitem *it, char *s)
{
	size_t	 i;

	for (i = 0; i < it->nforms; i++) {
		if (strcmp(it->forms[i], s) == 0) {
			free(s);
			return;
		}
	}
	if (it->nforms == ITEM_MAX_FORMS) {
		free(s);
		return;
	}
	it->forms[it->nforms++] = s;
}

static void
item_problem(struct pitem *it, const char *fmt, ...)
{
	va_list	 ap;

	if (it->problem != NULL)
		return;
	va_start(ap, fmt);
	xvasprintf(&it->problem, fmt, ap);
	va_end(ap);
}

static int
word_safe_char(int c)
{
	return isalnum(c) || (c != 0 && strchr("_@%+=:,./-", c) != NULL);
}

/* A word as it is matched: literal words shell-quoted when needed. */
static char *
word_render(const struct policy_word *w)
{
	struct buf	 b = BUF_INIT;
	const char	*p;

	if ((w->flags & PW_EXPANDS) == 0) {
		if ((w->flags & PW_TILDE) && w->text[0] == '~') {
			char	*q;

			/* ~/a b is ~'/a b': the tilde stays unquoted. */
			buf_addc(&b, '~');
			if (w->text[1] != '\0') {
				q = policy_shell_quote(w->text + 1);
				buf_adds(&b, q);
				free(q);
			}
			return buf_detach(&b, NULL);
		}
		return policy_shell_quote(w->text);
	}
	for (p = w->text; *p != '\0'; p++) {
		if (!word_safe_char((unsigned char)*p) && strchr("${}()[]*?~", *p)
		    == NULL)
			break;
	}
	if (*p == '\0')
		return xstrdup(w->text);
	buf_addc(&b, '"');
	for (p = w->text; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			buf_addc(&b, '\\');
		buf_addc(&b, *p);
	}
	buf_addc(&b, '"');
	return buf_detach(&b, NULL);
}

static int
has_ctrl(const char *s)
{
	for (; *s != '\0'; s++) {
		if (((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n') ||
		    *s == 0x7f)
			return 1;
	}
	return 0;
}

static int
has_nonascii_or_ctrl(const char *s)
{
	for (; *s != '\0'; s++) {
		if ((unsigned char)*s >= 0x7f || (unsigned char)*s < 0x20)
			return 1;
	}
	return 0;
}

/*
 * Lexical canonical form of an absolute path: no ".", "..", "//". Symlinks
 * are not followed: the sandbox, not the policy, holds against them.
 */
static char *
path_canon(const char *path)
{
	struct buf	 b = BUF_INIT;
	const char	*p = path, *e;
	size_t		 n, i;

	buf_addc(&b, '/');
	while (*p != '\0') {
		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		e = strchr(p, '/');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (n == 1 && p[0] == '.')
			;
		else if (n == 2 && p[0] == '.' && p[1] == '.') {
			i = b.len;
			while (i > 1 && b.data[i - 1] == '/')
				i--;
			while (i > 1 && b.data[i - 1] != '/')
				i--;
			b.len = i;
			b.data[b.len] = '\0';
		} else {
			if (b.len > 1 && b.data[b.len - 1] != '/')
				buf_addc(&b, '/');
			buf_add(&b, p, n);
		}
		p += n;
	}
	if (b.len > 1 && b.data[b.len - 1] == '/') {
		b.len--;
		b.data[b.len] = '\0';
	}
	return buf_detach(&b, NULL);
}

/* "/usr/bin/rm" -> "rm"; NULL if not a system binary directory. */
static char *
path_system_name(const char *canon)
{
	static const char *dirs[] = {
		"/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/",
		"/usr/local/sbin/"
	};
	size_t	 i, n;

	for (i = 0; i < nitems(dirs); i++) {
		n = strlen(dirs[i]);
		if (strncmp(canon, dirs[i], n) == 0 && canon[n] != '\0' &&
		    strchr(canon + n, '/') == NULL)
			return xstrdup(canon + n);
	}
	return NULL;
}

static const char *
base_name(const char *s)
{
	const char	*p = strrchr(s, '/');

	return p != NULL && p[1] != '\0' ? p + 1 : s;
}

/*
 * What a program named by a path outside the system directories says it
 * is, for the rules: its base name, but "git push" for git's own
 * git-push. *judged is the name it is judged as: "ld.so" for the dynamic
 * loader (ld-linux-x86-64.so.2, ld-musl-x86_64.so.1, ...), which runs the
 * program it is given.
 */
static char *
path_alias(const char *base, const char **judged)
{
	*judged = base;
	if (strcmp(base, "ld.so") == 0 || (strncmp(base, "ld-", 3) == 0 &&
	    strstr(base, ".so") != NULL) || strncmp(base, "ld64.so", 7) == 0)
		*judged = "ld.so";
	else if (strncmp(base, "git-", 4) == 0 && base[4] != '\0')
		return xprintf("git %s", base + 4);
	return xstrdup(base);
}

/* ------------------------------------------------------------------ */
/* writes */

static int
write_removes(const char *what)
{
	return strcmp(what, "rm") == 0 || strcmp(what, "rmdir") == 0 ||
	    strcmp(what, "mv") == 0 || strcmp(what, "shred") == 0 ||
	    strcmp(what, "find -delete") == 0 || strcmp(what, "unlink") == 0;
}

/*
 * One written path. Inside the workspace it is matched relative to it, and
 * also with a trailing '/' by write-ask/write-deny rules: removing or
 * moving a directory writes what is below it.
 */
/* Whether canon is dir or below it. */
static int
path_below(const char *canon, const char *dir)
{
	size_t	 n = strlen(dir);

	return strncmp(canon, dir, n) == 0 && (canon[n] == '\0' ||
	    canon[n] == '/');
}

static void
write_item_path(struct pctx *c, const char *abs, const char *what)
{
	struct pitem	*it;
	char		*canon = path_canon(abs);
	size_t		 wl = strlen(c->root);
	int		 ws = strcmp(c->root, WORKSPACE) == 0;

	it = item_new(c);
	it->write = 1;
	if (strcmp(canon, c->root) == 0) {
		item_form(it, xstrdup("."));
		if (write_removes(what))
			item_problem(it, "%s would remove the whole %s", what,
			    ws ? "workspace" : c->root);
	} else if (strncmp(canon, c->root, wl) == 0 && canon[wl] == '/') {
		item_form(it, xstrdup(canon + wl + 1));
		item_form(it, xprintf("%s/", canon + wl + 1));
	} else if (c->tmp != NULL && path_below(canon, c->tmp)) {
		/* The sandbox's own scratch: judged by the rules, as it is. */
		item_form(it, xstrdup(canon));
		item_form(it, xprintf("%s/", canon));
		if (write_removes(what) && strcmp(canon, c->tmp) == 0)
			item_problem(it, "%s would remove the whole %s", what,
			    c->tmp);
	} else {
		item_form(it, xstrdup(canon));
		item_problem(it, "%s '%s' is outside %s", what, canon,
		    ws ? "the workspace" : c->root);
	}
	free(canon);
}

static int
write_special(const char *t)
{
	size_t	 i;

	if (strcmp(t, "/dev/null") == 0 || strcmp(t, "/dev/stdout") == 0 ||
	    strcmp(t, "/dev/stderr") == 0)
		return 1;
	if (strncmp(t, "/dev/fd/", 8) == 0 && t[8] != '\0') {
		for (i = 8; t[i] != '\0'; i++) {
			if (!isdigit((unsigned char)t[i]))
				return 0;
		}
		return 1;
	}
	return 0;
}

/* A file the command writes: one item per place it may be. */
static void
write_target(struct pctx *c, const struct policy_word *w, const char *what)
{
	struct pitem	*it;
	char		*abs;
	size_t		 i;

	if ((w->flags & PW_PROCSUBST) && (w->flags & ~(PW_PROCSUBST|PW_SUBST|
	    PW_QUOTED)) == 0)
		return;		/* >(cmd): the command is judged itself */
	if (w->flags & PW_EXPANDS) {
		it = item_new(c);
		it->write = 1;
		item_form(it, word_render(w));
		item_problem(it, "%s '%s' is not a literal path", what, w->text);
		return;
	}
	if (write_special(w->text))
		return;
	if (w->text[0] == '\0' || has_ctrl(w->text)) {
		it = item_new(c);
		it->write = 1;
		item_form(it, policy_shell_quote(w->text));
		item_problem(it, "%s is an odd file name", what);
		return;
	}
	if (w->flags & PW_TILDE) {
		if (w->text[1] != '\0' && w->text[1] != '/') {
			it = item_new(c);
			it->write = 1;
			item_form(it, xstrdup(w->text));
			item_problem(it, "%s '%s' is another user's home", what,
			    w->text);
			return;
		}
		abs = xprintf("%s%s", SANDBOX_HOME, w->text + 1);
		write_item_path(c, abs, what);
		free(abs);
		return;
	}
	if (w->text[0] == '/') {
		write_item_path(c, w->text, what);
		return;
	}
	if (c->cwd_unknown) {
		it = item_new(c);
		it->write = 1;
		item_form(it, policy_shell_quote(w->text));
		item_problem(it, "%s '%s' is relative to a directory that cd "
		    "made unknown", what, w->text);
		return;
	}
	if (c->ncwds == 0) {
		abs = xprintf("%s/%s", c->start, w->text);
		write_item_path(c, abs, what);
		free(abs);
		return;
	}
	/* After a cd the write may happen here or there: judge each. */
	abs = xprintf("%s/%s", c->start, w->text);
	write_item_path(c, abs, what);
	free(abs);
	for (i = 0; i < c->ncwds; i++) {
		abs = xprintf("%s/%s", c->cwds[i], w->text);
		write_item_path(c, abs, what);
		free(abs);
	}
}

static void
write_unknown(struct pctx *c, const char *name, const char *via)
{
	struct pitem	*it;

	it = item_new(c);
	it->write = 1;
	item_form(it, xprintf("(files of %s)", name));
	item_problem(it, "%s through %s writes files only known at run time",
	    name, via);
}

static void
note_cd(struct pctx *c, const struct pcmd *pc)
{
	const struct policy_word	*w = NULL;
	char				*abs, *canon;
	size_t				 i;

	for (i = 1; i < pc->nwords; i++) {
		if (pc->words[i].text[0] != '-' || (pc->words[i].flags &
		    PW_QUOTED)) {
			w = &pc->words[i];
			break;
		}
		/* cd -P follows links: "sub/.." is then elsewhere */
		if (strchr(pc->words[i].text, 'P') != NULL)
			c->cwd_unknown = 1;
	}
	if (strcmp(pc->words[0].text, "cd") != 0 || w == NULL ||
	    (w->flags & (PW_EXPANDS|PW_TILDE)) || c->cwd_unknown ||
	    c->ncwds == MAX_CWDS) {
		c->cwd_unknown = 1;
		return;
	}
	if (w->text[0] == '/')
		abs = xstrdup(w->text);
	else if (c->ncwds > 0)
		abs = xprintf("%s/%s", c->cwds[c->ncwds - 1], w->text);
	else
		abs = xprintf("%s/%s", c->start, w->text);
	canon = path_canon(abs);
	free(abs);
	c->cwds[c->ncwds++] = canon;
}

/* Operands of cp/mv/... : words that are not options. */
static int
is_option(const struct policy_word *w, int *ended)
{
	if (*ended)
		return 0;
	if ((w->flags & PW_QUOTED) == 0 && strcmp(w->text, "--") == 0) {
		*ended = 1;
		return 1;
	}
	return w->text[0] == '-' && w->text[1] != '\0';
}

/* The files a command writes, for the well-known writers. */
static void
note_writes(struct pctx *c, const struct pcmd *pc, const char *name)
{
	const struct policy_word	*w, *last = NULL, *target = NULL;
	size_t				 i, noperands = 0;
	int				 ended = 0, inplace = 0, script = 0;
	int				 fmtpatch = 0;
	const char			*t;

	if (strcmp(name, "git") == 0) {
		/* git diff/log/show --output=FILE, format-patch -o DIR */
		for (i = 1; i < pc->nwords; i++) {
			t = pc->words[i].text;
			if (strcmp(t, "format-patch") == 0)
				fmtpatch = 1;
			if (strncmp(t, "--output=", 9) == 0 ||
			    strncmp(t, "--output-directory=", 19) == 0) {
				struct policy_word tw = pc->words[i];

				tw.text = strchr(t, '=') + 1;
				write_target(c, &tw, "git --output");
			} else if ((strcmp(t, "--output") == 0 ||
			    strcmp(t, "--output-directory") == 0 ||
			    (strcmp(t, "-o") == 0 && fmtpatch)) &&
			    i + 1 < pc->nwords)
				write_target(c, &pc->words[++i], "git --output");
		}
		return;
	}
	if (strcmp(name, "time") == 0) {
		/* time -o FILE, --output=FILE: before the timed command */
		for (i = 1; i < pc->nwords; i++) {
			t = pc->words[i].text;
			if (t[0] != '-')
				break;
			if ((strcmp(t, "-o") == 0 || strcmp(t, "--output") == 0) &&
			    i + 1 < pc->nwords)
				write_target(c, &pc->words[++i], name);
			else if (strncmp(t, "--output=", 9) == 0) {
				struct policy_word tw = pc->words[i];

				tw.text = (char *)t + 9;
				write_target(c, &tw, name);
			} else if (strcmp(t, "-f") == 0 || strcmp(t, "--format") == 0)
				i++;
		}
		return;
	}
	if (strcmp(name, "tee") == 0 || strcmp(name, "touch") == 0 ||
	    strcmp(name, "sponge") == 0 ||
	    strcmp(name, "truncate") == 0 || strcmp(name, "mkdir") == 0 ||
	    strcmp(name, "rm") == 0 || strcmp(name, "rmdir") == 0 ||
	    strcmp(name, "unlink") == 0 || strcmp(name, "shred") == 0) {
		if (pc->args_unknown) {
			write_unknown(c, name, pc->via);
			return;
		}
		for (i = 1; i < pc->nwords; i++) {
			w = &pc->words[i];
			if (is_option(w, &ended)) {
				/* options with an argument: not files */
				if (w->text[2] == '\0' &&
				    ((strcmp(name, "truncate") == 0 &&
				    strchr("sr", w->text[1]) != NULL) ||
				    (strcmp(name, "touch") == 0 &&
				    strchr("rdt", w->text[1]) != NULL) ||
				    (strcmp(name, "mkdir") == 0 &&
				    w->text[1] == 'm')))
					i++;
				continue;
			}
			write_target(c, w, name);
		}
		return;
	}
	if (strcmp(name, "cp") == 0 || strcmp(name, "mv") == 0 ||
	    strcmp(name, "install") == 0 || strcmp(name, "ln") == 0 ||
	    strcmp(name, "rsync") == 0) {
		if (pc->args_unknown) {
			write_unknown(c, name, pc->via);
			return;
		}
		for (i = 1; i < pc->nwords; i++) {
			w = &pc->words[i];
			if (is_option(w, &ended)) {
				t = w->text;
				if (strcmp(t, "-t") == 0 && i + 1 < pc->nwords)
					target = &pc->words[++i];
				else if (strncmp(t, "--target-directory=", 19) == 0 ||
				    (t[1] == 't' && t[2] != '\0' && t[0] == '-')) {
					/* handled below as a literal */
					struct policy_word tw = *w;

					tw.text = (char *)(t[1] == 't' ? t + 2 :
					    t + 19);
					write_target(c, &tw, name);
				} else if (strcmp(t, "-S") == 0 ||
				    ((strcmp(name, "install") == 0) &&
				    (strcmp(t, "-m") == 0 || strcmp(t, "-o") == 0 ||
				    strcmp(t, "-g") == 0)))
					i++;
				else if (strcmp(name, "install") == 0 &&
				    strcmp(t, "-d") == 0)
					inplace = 1;	/* every operand is made */
				continue;
			}
			noperands++;
			last = w;
			/*
			 * mv removes its sources; install -d makes them all;
			 * a link made by ln may lead out of the workspace.
			 */
			if (strcmp(name, "mv") == 0 || inplace ||
			    strcmp(name, "ln") == 0)
				write_target(c, w, name);
		}
		if (target != NULL)
			write_target(c, target, name);
		else if (last != NULL && strcmp(name, "mv") != 0 && !inplace &&
		    strcmp(name, "ln") != 0 && noperands > 1)
			write_target(c, last, name);
		return;
	}
	if (strcmp(name, "sed") == 0 || strcmp(name, "perl") == 0) {
		for (i = 1; i < pc->nwords; i++) {
			w = &pc->words[i];
			t = w->text;
			if (t[0] == '-' && t[1] != '-' && strchr(t, 'i') != NULL)
				inplace = 1;
			if (strncmp(t, "--in-place", 10) == 0)
				inplace = 1;
		}
		if (!inplace)
			return;
		if (pc->args_unknown) {
			write_unknown(c, name, pc->via);
			return;
		}
		for (i = 1; i < pc->nwords; i++) {
			w = &pc->words[i];
			t = w->text;
			if (is_option(w, &ended)) {
				if (strcmp(t, "-e") == 0 || strcmp(t, "-f") == 0 ||
				    strcmp(t, "--expression") == 0 ||
				    strcmp(t, "--file") == 0 ||
				    (t[0] == '-' && t[1] != '-' &&
				    t[strlen(t) - 1] == 'e')) {
					i++;
					script = 1;
				} else if (strncmp(t, "--expression=", 13) == 0 ||
				    strncmp(t, "--file=", 7) == 0)
					script = 1;
				continue;
			}
			if (!script) {
				script = 1;	/* the first operand is the script */
				continue;
			}
			write_target(c, w, name);
		}
		return;
	}
	if (strcmp(name, "dd") == 0) {
		for (i = 1; i < pc->nwords; i++) {
			w = &pc->words[i];
			if (strncmp(w->text, "of=", 3) == 0) {
				struct policy_word tw = *w;

				tw.text = w->text + 3;
				if (pc->args_unknown)
					write_unknown(c, name, pc->via);
				else
					write_target(c, &tw, name);
			}
		}
		return;
	}
}

/* ------------------------------------------------------------------ */
/* commands */

static int
safe_var(const char *assign)
{
	size_t	 i, n = strcspn(assign, "+=[");

	for (i = 0; i < nitems(policy_safe_vars); i++) {
		if (strlen(policy_safe_vars[i]) == n &&
		    strncmp(policy_safe_vars[i], assign, n) == 0)
			return 1;
	}
	return 0;
}

/* Does NAME=value (or NAME alone) set one of policy_code_vars? */
static int
code_var(const char *assign)
{
	size_t		 i, n = strcspn(assign, "+=["), k;
	const char	*v;

	if (safe_var(assign))
		return 0;
	for (i = 0; i < nitems(policy_code_vars); i++) {
		v = policy_code_vars[i];
		k = strlen(v);
		if (v[k - 1] == '*' ? (n >= k - 1 && strncmp(v, assign, k - 1) ==
		    0) : (n == k && strncmp(v, assign, n) == 0))
			return 1;
	}
	return 0;
}

static void
code_var_problem(struct pitem *it, const char *assign, const char *name)
{
	item_problem(it, "'%.*s' in the environment of %s can make it run code "
	    "or read configuration that is not judged",
	    (int)strcspn(assign, "+=["), assign, name);
}

/*
 * May this word become one or more options when the shell expands it? A
 * variable or a substitution may split into any words; a glob or a brace
 * expansion whose first character is not literal may give a file named
 * "-delete" or "--output=x". After "--" words are operands, except for
 * find, whose expression follows its paths.
 */
static int
word_options(const struct policy_word *w, const char *name, int *ended)
{
	if ((w->flags & PW_QUOTED) == 0 && strcmp(w->text, "--") == 0 &&
	    strcmp(name, "find") != 0) {
		*ended = 1;
		return 0;
	}
	if (w->flags & (PW_VAR|PW_SUBST|PW_ARITH|PW_UNSAFE))
		return 1;
	if (w->flags & (PW_GLOB|PW_BRACE))
		return strchr("-*?[{@+!", w->text[0]) != NULL;
	return 0;
}

static int norm_cmd(struct pctx *, const struct pcmd *);

/* The item of one command: forms, rendered words, problems. */
static struct pitem *
cmd_item(struct pctx *c, const struct pcmd *pc, const char *name,
    const char *alt_name, size_t first_arg)
{
	struct pitem	*it;
	struct buf	 full = BUF_INIT, args = BUF_INIT;
	char		*r;
	size_t		 i;
	int		 prefixed = 0, ended = 0;

	it = item_new(c);
	it->anyopts = pc->xargs;
	it->words = xreallocarray(NULL, pc->nwords - first_arg + 1,
	    sizeof *it->words);
	for (i = 0; i < pc->nassigns; i++) {
		if (pc->assigns[i].flags & PW_UNSAFE)
			item_problem(it, "the assignment '%s' evaluates an array "
			    "subscript, which may run commands", pc->assigns[i].text);
		if (has_ctrl(pc->assigns[i].text))
			item_problem(it, "control character in an assignment");
		if (safe_var(pc->assigns[i].text))
			continue;
		if (code_var(pc->assigns[i].text))
			code_var_problem(it, pc->assigns[i].text, name);
		r = word_render(&pc->assigns[i]);
		buf_adds(&full, r);
		buf_addc(&full, ' ');
		free(r);
		prefixed = 1;
	}
	it->words[it->nwords++] = xstrdup(name);
	for (i = first_arg; i < pc->nwords; i++) {
		if (!ended && word_options(&pc->words[i], name, &ended) &&
		    !it->anyopts++)
			it->optword = it->nwords;
		r = word_render(&pc->words[i]);
		buf_addc(&args, ' ');
		buf_adds(&args, r);
		it->words[it->nwords++] = r;
		if (pc->words[i].flags & PW_UNSAFE)
			item_problem(it, "'%s' may run commands when expanded",
			    pc->words[i].text);
		if (has_ctrl(pc->words[i].text))
			item_problem(it, "control character in an argument");
	}
	/* The form all rules see, then without prefixes, then by base name. */
	buf_adds(&full, name);
	buf_add(&full, args.data, args.len);
	item_form(it, buf_detach(&full, NULL));
	if (prefixed)
		item_form(it, xprintf("%s%s", name, buf_str(&args)));
	if (alt_name != NULL)
		item_form(it, xprintf("%s%s", alt_name, buf_str(&args)));
	buf_release(&args);
	return it;
}

/* Words from index i on, as a command of their own (a wrapper's). */
static int
norm_rest(struct pctx *c, const struct pcmd *pc, size_t i,
    const struct policy_word *assigns, size_t nassigns, int args_unknown,
    const char *via)
{
	struct pcmd	 sub;
	int		 r;

	if (c->depth >= NORM_MAX_DEPTH)
		return -1;
	memset(&sub, 0, sizeof sub);
	sub.assigns = assigns;
	sub.nassigns = nassigns;
	sub.words = pc->words + i;
	sub.nwords = pc->nwords - i;
	sub.args_unknown = pc->args_unknown || args_unknown;
	sub.xargs = pc->xargs || (via != NULL && strcmp(via, "xargs") == 0);
	sub.via = via != NULL ? via : pc->via;
	c->depth++;
	r = norm_cmd(c, &sub);
	c->depth--;
	return r;
}

/* Items move when more are added: hold an index, not a pointer. */
#define ITEM(c, i) (&(c)->items[(i)])

/*
 * Wrappers: the command they run is judged too. argopts: short options
 * with an argument; flags: short options without. An option not listed
 * makes what follows unknown (never auto-allowed).
 */
struct wrapper {
	const char	*name;
	const char	*argopts;
	const char	*flags;
	const char	*longarg;	/* long options with a separate argument */
	const char	*longflags;	/* long options without */
	int		 positional;	/* words before the command (timeout 5) */
};
static const struct wrapper wrappers[] = {
	{ "env", "uC", "i0v", " --unset --chdir ", " --ignore-environment "
	    "--null --debug ", 0 },
	{ "nice", "n", "", " --adjustment ", "", 0 },
	{ "nohup", "", "", "", "", 0 },
	{ "setsid", "", "cfw", "", " --ctty --fork --wait ", 0 },
	{ "timeout", "sk", "v", " --signal --kill-after ", " --preserve-status "
	    "--foreground --verbose ", 1 },
	{ "time", "fo", "pav", " --format --output ", " --portability "
	    "--append --verbose ", 0 },
	{ "stdbuf", "ioe", "", " --input --output --error ", "", 0 },
	{ "xargs", "aEdILnPs", "0prtxil", " --arg-file --delimiter --max-args "
	    "--max-procs --max-chars --max-lines --eof --process-slot-var ",
	    " --null --no-run-if-empty --verbose --exit --interactive "
	    "--open-tty ", 0 },
	{ "command", "", "p", "", "", 0 },
	{ "builtin", "", "", "", "", 0 },
	{ "exec", "a", "cl", "", "", 0 },
	{ "sudo", "ugCDhprtTU", "AbEHnPSk", " --user --group --chdir "
	    "--close-from --host --prompt --role --type --command-timeout "
	    "--other-user ", " --askpass --background --preserve-env "
	    "--set-home --non-interactive --stdin --reset-timestamp ", 0 },
	{ "doas", "uC", "n", "", "", 0 },
	{ "busybox", "", "", "", "", 0 },
	{ "ionice", "cnp", "tu", " --class --classdata --pid ", " --ignore ",
	    0 },
	{ "taskset", "", "ac", "", " --all-tasks --cpu-list ", 1 },
	{ "chrt", "T P D", "abfiormRv", "", " --all-tasks --batch --fifo "
	    "--idle --other --rr --reset-on-fork --verbose ", 1 },
	{ "unbuffer", "", "p", "", "", 0 },
	{ "catchsegv", "", "", "", "", 0 },
	/* The dynamic loader runs the program it is given. */
	{ "ld.so", "", "", "", " --inhibit-cache ", 0 },
};

/* Is w one of the words of list, " a b c "? */
static int
word_in(const char *list, const char *w)
{
	const char	*p = list;
	size_t		 n = strlen(w);

	if (n == 0)
		return 0;
	while ((p = strstr(p, w)) != NULL) {
		if (p > list && p[-1] == ' ' && p[n] == ' ')
			return 1;
		p++;
	}
	return 0;
}

static void
norm_wrapper(struct pctx *c, const struct pcmd *pc, const struct wrapper *wr,
    size_t si)
{
	const struct policy_word	*w;
	struct policy_word		*assigns = NULL;
	size_t				 i, j, nassigns = pc->nassigns;
	const char			*t;
	char				*lname;
	int				 pos = wr->positional, is_env;
	int				 ended = 0;

	/* env and sudo take NAME=VALUE before the command. */
	is_env = strcmp(wr->name, "env") == 0 || strcmp(wr->name, "sudo") == 0;
	if (is_env) {
		assigns = xreallocarray(NULL, pc->nassigns + pc->nwords,
		    sizeof *assigns);
		if (pc->nassigns > 0)
			memcpy(assigns, pc->assigns, pc->nassigns *
			    sizeof *assigns);
	}
	for (i = 1; i < pc->nwords; i++) {
		w = &pc->words[i];
		t = w->text;
		if (w->flags & PW_EXPANDS) {
			item_problem(ITEM(c, si), "%s: '%s' is not a literal word, "
			    "so what it runs is unknown", wr->name, t);
			goto out;
		}
		if (is_env && t[0] != '-' && strchr(t, '=') != NULL) {
			/* env NAME=VALUE: an assignment for the command. */
			assigns[nassigns++] = *w;
			continue;
		}
		if (is_env && strcmp(t, "-") == 0)
			continue;	/* env -: env -i */
		if (!ended && strcmp(t, "--") == 0) {
			ended = 1;	/* timeout -- 5 cmd: still a duration */
			continue;
		}
		if (ended || t[0] != '-' || t[1] == '\0' ||
		    pos < wr->positional) {
			if (pos > 0) {
				pos--;
				continue;
			}
			break;
		}
		if (t[1] == '-') {
			lname = xstrndup(t, strcspn(t, "="));
			if (strcmp(lname, "--chdir") == 0)
				c->cwd_unknown = 1;
			if (strchr(t, '=') != NULL && (word_in(wr->longarg, lname) ||
			    word_in(wr->longflags, lname)))
				;
			else if (word_in(wr->longarg, lname))
				i++;
			else if (!word_in(wr->longflags, lname)) {
				item_problem(ITEM(c, si), "%s: unknown option '%s', "
				    "so what it runs is unknown", wr->name, t);
				free(lname);
				goto out;
			}
			free(lname);
			continue;
		}
		if (strcmp(wr->name, "nice") == 0 && isdigit((unsigned char)t[1]))
			continue;	/* nice -10 */
		if (strcmp(wr->name, "env") == 0 && t[1] == 'S') {
			item_problem(ITEM(c, si), "env -S runs a string that is "
			    "not judged");
			goto out;
		}
		for (j = 1; t[j] != '\0'; j++) {
			/* env -C DIR, sudo -D DIR: relative paths move */
			if ((strcmp(wr->name, "env") == 0 && t[j] == 'C') ||
			    (strcmp(wr->name, "sudo") == 0 && t[j] == 'D'))
				c->cwd_unknown = 1;
			if (strchr(wr->argopts, t[j]) != NULL && t[j] != ' ') {
				if (t[j + 1] == '\0')
					i++;
				break;
			}
			if (strchr(wr->flags, t[j]) == NULL || t[j] == ' ') {
				item_problem(ITEM(c, si), "%s: unknown option "
				    "'-%c', so what it runs is unknown", wr->name,
				    t[j]);
				goto out;
			}
			/* xargs -i[R], -l[N]: the argument is attached. */
			if (strcmp(wr->name, "xargs") == 0 && (t[j] == 'i' ||
			    t[j] == 'l'))
				break;
		}
	}
	if (i >= pc->nwords)
		goto out;	/* nothing wrapped: judged as itself */
	ITEM(c, si)->transparent = 1;
	if (norm_rest(c, pc, i, is_env ? assigns : pc->assigns, nassigns,
	    strcmp(wr->name, "xargs") == 0, wr->name) != 0) {
		ITEM(c, si)->transparent = 0;
		item_problem(ITEM(c, si), "wrappers nested too deep");
	}
out:
	free(assigns);
}

/* sh -c STRING: the string is parsed and judged as a command line. */
static void
norm_shell(struct pctx *c, const struct pcmd *pc, size_t si)
{
	const struct policy_word	*w;
	const char			*t;
	size_t				 i;
	int				 dash_c = 0;

	for (i = 1; i < pc->nwords; i++) {
		w = &pc->words[i];
		t = w->text;
		if (w->flags & PW_EXPANDS) {
			if (!dash_c)
				item_problem(ITEM(c, si), "'%s' is not a literal "
				    "word", t);
			break;
		}
		if (strcmp(t, "--") == 0 || strcmp(t, "-") == 0) {
			i++;
			break;
		}
		if ((t[0] == '-' || t[0] == '+') && t[1] != '\0') {
			if (t[1] == '-') {
				if (strcmp(t, "--rcfile") == 0 ||
				    strcmp(t, "--init-file") == 0 ||
				    strcmp(t, "--login") == 0) {
					item_problem(ITEM(c, si), "%s %s runs a "
					    "file that cannot be judged",
					    pc->words[0].text, t);
					return;
				}
				continue;
			}
			if (strchr(t, 'c') != NULL && t[0] == '-')
				dash_c = 1;
			/*
			 * A login or interactive shell first runs ~/.profile
			 * or ~/.bashrc, which the agent can write.
			 */
			if (t[0] == '-' && strpbrk(t + 1, "li") != NULL) {
				item_problem(ITEM(c, si), "%s %s first runs its "
				    "startup files (~/.profile, ~/.bashrc), which "
				    "cannot be judged", pc->words[0].text, t);
				return;
			}
			if (t[strlen(t) - 1] == 'o' || t[strlen(t) - 1] == 'O')
				i++;
			continue;
		}
		break;
	}
	if (!dash_c) {
		/* A script file is judged as a command; stdin is anything. */
		for (; i < pc->nwords; i++) {
			if (pc->words[i].text[0] != '-')
				return;
		}
		item_problem(ITEM(c, si), "%s reads commands from its input, "
		    "which cannot be judged", pc->words[0].text);
		return;
	}
	if (i >= pc->nwords) {
		item_problem(ITEM(c, si), "%s -c without a command",
		    pc->words[0].text);
		return;
	}
	w = &pc->words[i];
	if (w->flags & PW_EXPANDS) {
		item_problem(ITEM(c, si), "%s -c '%s': the string is not "
		    "literal, so it cannot be judged", pc->words[0].text, w->text);
		return;
	}
	if (c->depth >= NORM_MAX_DEPTH) {
		item_problem(ITEM(c, si), "shells nested too deep");
		return;
	}
	ITEM(c, si)->transparent = 1;
	c->depth++;
	if (policy_norm_line(c, w->text, strlen(w->text)) != 0)
		ITEM(c, si)->transparent = 0;
	c->depth--;
}

static int
find_is_expr(const char *t)
{
	return t[0] == '-' || t[0] == '(' || t[0] == '!' || t[0] == ')';
}

/* find: judged itself; -exec commands and -delete/-fprint writes too. */
static void
norm_find(struct pctx *c, const struct pcmd *pc, size_t si)
{
	const struct policy_word	*w;
	struct pcmd			 sub;
	size_t				 i, j, start;

	for (i = 1; i < pc->nwords; i++) {
		w = &pc->words[i];
		if (strcmp(w->text, "-delete") == 0) {
			for (j = 1; j < pc->nwords; j++) {
				if (find_is_expr(pc->words[j].text))
					break;
				write_target(c, &pc->words[j], "find -delete");
			}
			if (j == 1) {
				struct policy_word dot = { (char *)".", 0 };

				write_target(c, &dot, "find -delete");
			}
			continue;
		}
		if ((strcmp(w->text, "-fprint") == 0 ||
		    strcmp(w->text, "-fprint0") == 0 ||
		    strcmp(w->text, "-fls") == 0 ||
		    strcmp(w->text, "-fprintf") == 0) && i + 1 < pc->nwords) {
			write_target(c, &pc->words[i + 1], w->text);
			i++;
			continue;
		}
		if (strcmp(w->text, "-exec") == 0 || strcmp(w->text, "-execdir") == 0
		    || strcmp(w->text, "-ok") == 0 || strcmp(w->text, "-okdir") == 0) {
			start = i + 1;
			for (j = start; j < pc->nwords; j++) {
				if (strcmp(pc->words[j].text, ";") == 0 ||
				    strcmp(pc->words[j].text, "+") == 0)
					break;
			}
			if (j >= pc->nwords || j == start) {
				item_problem(ITEM(c, si), "find %s without a "
				    "command ended by ';' or '+'", w->text);
				return;
			}
			/* -execdir runs in each directory find visits */
			if (strcmp(w->text, "-execdir") == 0 ||
			    strcmp(w->text, "-okdir") == 0)
				c->cwd_unknown = 1;
			memset(&sub, 0, sizeof sub);
			sub.words = pc->words + start;
			sub.nwords = j - start;
			sub.args_unknown = 1;
			sub.via = "find -exec";
			if (c->depth < NORM_MAX_DEPTH) {
				c->depth++;
				norm_cmd(c, &sub);
				c->depth--;
			} else
				item_problem(ITEM(c, si), "commands nested too "
				    "deep");
			i = j;
		}
	}
}

/*
 * Global options: those a program takes before its subcommand. They are
 * moved after the command's other words, so that "git -C . push" is
 * matched as "git push -C .": a rule about a subcommand holds whatever
 * comes before it. An option not listed may or may not take an argument,
 * so the subcommand is unknown and the command is never auto-allowed;
 * "runs" lists the options that name a program or a configuration that
 * may run one, or a file written.
 */
struct globals {
	const char	*name;
	const char	*argopts;	/* short options with an argument */
	const char	*flags;		/* short options without */
	const char	*longarg;	/* " --x " with a separate argument */
	const char	*longflags;	/* " --x " without; also "-ws" words */
	const char	*runs;		/* " --x -y " never auto-allowed */
};
static const struct globals globals[] = {
	{ "cargo", "CZ", "hqvV", " --color --config --explain ",
	    " --frozen --locked --offline --verbose --quiet --version --list "
	    "--help ", " --config " },
	{ "docker", "Hcl", "Dhv", " --host --context --log-level --config "
	    "--tlscacert --tlscert --tlskey ", " --debug --tls --tlsverify "
	    "--version --help ", " -H --host -c --context --config " },
	{ "git", "Cc", "hpPv", " --git-dir --work-tree --namespace "
	    "--config-env --attr-source --super-prefix ", " --no-pager "
	    "--paginate --bare --no-replace-objects --no-lazy-fetch "
	    "--no-optional-locks --no-advice --literal-pathspecs "
	    "--glob-pathspecs --noglob-pathspecs --icase-pathspecs --html-path "
	    "--man-path --info-path --version --help --exec-path --list-cmds ",
	    " --exec-path --config-env " },
	{ "go", "C", "", "", "", "" },
	{ "kubectl", "nsv", "h", " --namespace --context --kubeconfig "
	    "--cluster --user --server --token --as --as-group --as-uid "
	    "--request-timeout --v --cache-dir --certificate-authority "
	    "--client-certificate --client-key --tls-server-name --username "
	    "--password --profile --profile-output --log-file --log-dir "
	    "--vmodule ", " --insecure-skip-tls-verify --match-server-version "
	    "--warnings-as-errors --add-dir-header --alsologtostderr "
	    "--logtostderr --skip-headers --help ", " --kubeconfig "
	    "--profile-output --log-file --log-dir " },
	{ "npm", "Cw", "dfghilpqsvy", " --prefix --workspace --loglevel "
	    "--registry --cache --tag --omit --include --userconfig "
	    "--globalconfig --script-shell --node-options --shell --editor "
	    "--browser --viewer --git --cwd --otp --scope --location ",
	    " --global --silent --quiet --verbose --yes --no-yes --offline "
	    "--prefer-offline --prefer-online --json --parseable --long "
	    "--dry-run --force --no-audit --no-fund --ignore-scripts "
	    "--foreground-scripts --workspaces --include-workspace-root "
	    "--no-color --color --usage --version --help --legacy-peer-deps "
	    "-ws -dd -ddd ", " --userconfig --globalconfig --script-shell "
	    "--node-options --shell --editor --browser --viewer --git "
	    "--init-module --onload-script " },
};

/* What git's global options say about the repository it uses. */
struct gitopts {
	char	*alias_name;	/* -c alias.NAME=VALUE */
	char	*alias_val;
	char	*dir;		/* -C, absolute, NULL: not given */
	char	*gitdir;	/* --git-dir, absolute */
	int	 gitdir_rel;	/* --git-dir was relative */
	int	 unknown;	/* a directory not known statically */
};

static void
gitopts_release(struct gitopts *go)
{
	free(go->alias_name);
	free(go->alias_val);
	free(go->dir);
	free(go->gitdir);
}

/* dir joined to base (NULL: the workspace or cd's), canonical. */
static char *
git_path(struct pctx *c, const char *base, const struct policy_word *w,
    const char *t, int *unknown)
{
	char	*abs, *canon;
	size_t	 i;

	/* git changes directory for real: ".." after a link is elsewhere */
	if ((w->flags & (PW_EXPANDS|PW_TILDE)) || strcmp(t, "..") == 0 ||
	    strncmp(t, "../", 3) == 0 || strstr(t, "/../") != NULL ||
	    (strlen(t) >= 3 && strcmp(t + strlen(t) - 3, "/..") == 0)) {
		*unknown = 1;
		return NULL;
	}
	if (t[0] == '/')
		return path_canon(t);
	if (base == NULL && c->cwd_unknown) {
		*unknown = 1;
		return NULL;
	}
	if (base == NULL) {
		/* relative to the cd's of the line: known if all agree */
		for (i = 0; i < c->ncwds; i++) {
			if (strcmp(c->cwds[i], c->cwds[0]) != 0) {
				*unknown = 1;
				return NULL;
			}
		}
		base = c->ncwds > 0 ? c->cwds[0] : c->start;
	}
	abs = xprintf("%s/%s", base, t);
	canon = path_canon(abs);
	free(abs);
	return canon;
}

/* A git -c setting: dropped when harmless, else kept and judged. */
static int
git_setting(const struct policy_word *w, const char *kv, char **problem,
    struct gitopts *go)
{
	static const char *safe[] = {
		"color.", "user.name", "user.email", "advice.", "core.quotepath",
		"init.defaultbranch", "log.", "column.", "i18n.", "format.pretty",
		"diff.noprefix", "diff.mnemonicprefix", "diff.renames",
		"diff.algorithm", "status.", "grep.", "merge.conflictstyle"
	};
	size_t	 k, n;

	if (w->flags & PW_EXPANDS) {
		if (*problem == NULL)
			*problem = xstrdup("git -c with a setting that is not "
			    "literal");
		return 1;
	}
	n = strcspn(kv, "=");
	if (strncasecmp(kv, "alias.", 6) == 0 && n > 6) {
		free(go->alias_name);
		free(go->alias_val);
		go->alias_name = xstrndup(kv + 6, n - 6);
		go->alias_val = xstrdup(kv[n] == '=' ? kv + n + 1 : "");
		return 1;
	}
	for (k = 0; k < nitems(safe); k++) {
		if (strncasecmp(kv, safe[k], strlen(safe[k])) == 0)
			return 0;
	}
	if (*problem == NULL)
		*problem = xprintf("git -c '%.*s' can make git run commands",
		    (int)n, kv);
	return 1;
}

/*
 * The words of a command with global options, those moved after the
 * others (or dropped: git --no-pager, harmless git -c). *problem says why
 * the command cannot be judged; for git, *go what the options say.
 */
static struct policy_word *
globals_filter(struct pctx *c, const struct globals *g, const struct pcmd *pc,
    size_t *nwords, char **problem, struct gitopts *go)
{
	const struct policy_word	*w, *arg;
	struct policy_word		*out, *moved;
	const char			*t, *v, *attached;
	char				*lname, *p;
	size_t				 i, j, no = 0, nm = 0;
	int				 git = strcmp(g->name, "git") == 0;
	int				 eq, keep;

	out = xreallocarray(NULL, pc->nwords, sizeof *out);
	moved = xreallocarray(NULL, pc->nwords, sizeof *moved);
	out[no++] = pc->words[0];
	for (i = 1; i < pc->nwords; i++) {
		w = &pc->words[i];
		t = w->text;
		arg = NULL;
		attached = NULL;
		if ((w->flags & PW_EXPANDS) || strcmp(t, "--") == 0)
			break;
		if (t[0] == '+' && i == 1 && strcmp(g->name, "cargo") == 0) {
			moved[nm++] = *w;	/* cargo +nightly */
			continue;
		}
		if (t[0] != '-' || t[1] == '\0')
			break;
		if (t[1] == '-' || (t[2] != '\0' && word_in(g->longflags, t))) {
			lname = xstrndup(t, strcspn(t, "="));
			eq = strchr(t, '=') != NULL;
			if (word_in(g->longarg, lname) && !eq) {
				if (i + 1 < pc->nwords)
					arg = &pc->words[i + 1];
			} else if (!eq && !word_in(g->longflags, lname)) {
				if (*problem == NULL)
					*problem = xprintf("%s: unknown option "
					    "'%s' before the subcommand, so what "
					    "it runs is unknown", g->name, t);
				free(lname);
				break;
			}
		} else {
			/* a cluster of short options; the last may take one */
			for (j = 1; t[j] != '\0' &&
			    strchr(g->flags, t[j]) != NULL; j++)
				;
			if (t[j] == '\0')
				lname = xstrdup(t);
			else if (strchr(g->argopts, t[j]) != NULL) {
				lname = xprintf("-%c", t[j]);
				if (t[j + 1] != '\0')
					attached = t + j + 1;
				else if (i + 1 < pc->nwords)
					arg = &pc->words[i + 1];
			} else {
				if (*problem == NULL)
					*problem = xprintf("%s: unknown option "
					    "'-%c' before the subcommand, so what "
					    "it runs is unknown", g->name, t[j]);
				break;
			}
		}
		if (word_in(g->runs, lname) && *problem == NULL)
			*problem = xprintf("%s %s can make it run a program or "
			    "write a file that is not judged", g->name, t);
		/* the argument: the next word, or attached (-Cdir, --x=v) */
		if (arg != NULL)
			v = arg->text;
		else if (t[1] == '-')
			v = (v = strchr(t, '=')) != NULL ? v + 1 : NULL;
		else
			v = attached;
		keep = 1;
		if (git && strcmp(lname, "--no-pager") == 0)
			keep = 0;
		else if (git && strcmp(lname, "--bare") == 0) {
			/* the directory it runs in is the repository */
			free(go->gitdir);
			go->gitdir = git_path(c, go->dir, w, ".", &go->unknown);
			go->gitdir_rel = 1;
		}
		else if (git && strcmp(lname, "-c") == 0 && v != NULL)
			keep = git_setting(arg != NULL ? arg : w, v, problem, go);
		else if (git && (strcmp(lname, "-C") == 0 ||
		    strcmp(lname, "--git-dir") == 0) && v != NULL) {
			p = git_path(c, go->dir, arg != NULL ? arg : w, v,
			    &go->unknown);
			if (strcmp(lname, "-C") == 0) {
				/* a relative --git-dir is taken from the last -C */
				if (go->gitdir != NULL && v[0] != '/' &&
				    go->gitdir_rel)
					go->unknown = 1;
				free(go->dir);
				go->dir = p;
			} else {
				go->gitdir_rel = v[0] != '/';
				free(go->gitdir);
				go->gitdir = p;
			}
		}
		free(lname);
		if (keep) {
			moved[nm++] = *w;
			if (arg != NULL)
				moved[nm++] = *arg;
		}
		if (arg != NULL)
			i++;
	}
	for (; i < pc->nwords; i++)
		out[no++] = pc->words[i];
	for (j = 0; j < nm; j++)
		out[no++] = moved[j];
	free(moved);
	*nwords = no;
	return out;
}

/*
 * git reads the configuration of the repository it finds from where it
 * runs, and a configuration can run programs (core.fsmonitor, core.pager,
 * diff.external, filters, ...). holt made /workspace/.git and asks before
 * any write into a .git at any depth; a repository found anywhere else (a
 * subdirectory's own .git, a bare repository, --git-dir) may be the
 * agent's, so git run there is never auto-allowed.
 */
static void
git_repo_check(struct pctx *c, struct pitem *it, const struct gitopts *go)
{
	const char	*where = NULL;
	size_t		 i;

	if (go->unknown || (c->cwd_unknown && go->gitdir == NULL &&
	    (go->dir == NULL || go->dir[0] != '/')))
		where = "a directory known only at run time";
	else if (go->gitdir != NULL) {
		if (strcmp(go->gitdir, WORKSPACE "/.git") != 0)
			where = go->gitdir;
	} else if (go->dir != NULL) {
		if (strcmp(go->dir, WORKSPACE) != 0)
			where = go->dir;
	} else {
		for (i = 0; i < c->ncwds && where == NULL; i++) {
			if (strcmp(c->cwds[i], WORKSPACE) != 0)
				where = c->cwds[i];
		}
	}
	if (where != NULL)
		item_problem(it, "git in '%s' may use a repository and its "
		    "configuration the agent made there (core.fsmonitor, "
		    "core.pager, ...): only " WORKSPACE "/.git is holt's", where);
}

/* Builtins that take variable names, where a[expr] is evaluated. */
static void
check_varnames(struct pitem *it, const struct pcmd *pc, const char *name)
{
	static const char *takes_names[] = {
		"printf", "read", "test", "[", "[[", "unset", "declare", "typeset",
		"local", "export", "readonly", "mapfile", "readarray", "wait",
		"getopts"
	};
	const char	*t, *lb;
	size_t		 i, k;

	if (strcmp(name, "let") == 0) {
		item_problem(it, "let evaluates arithmetic, which may run commands "
		    "through variables");
		return;
	}
	for (k = 0; k < nitems(takes_names); k++) {
		if (strcmp(name, takes_names[k]) == 0)
			break;
	}
	if (k == nitems(takes_names))
		return;
	for (i = 1; i < pc->nwords; i++) {
		t = pc->words[i].text;
		if ((lb = strchr(t, '[')) == NULL || strchr(lb, ']') == NULL)
			continue;
		for (lb++; *lb != ']'; lb++) {
			if (!isdigit((unsigned char)*lb) && *lb != '@' && *lb != '*')
				break;
		}
		if (*lb != ']') {
			item_problem(it, "%s '%s': an array subscript is evaluated "
			    "as arithmetic, which may run commands", name, t);
			return;
		}
	}
	if (strcmp(name, "[[") == 0) {
		for (i = 1; i < pc->nwords; i++) {
			t = pc->words[i].text;
			if (strcmp(t, "-eq") == 0 || strcmp(t, "-ne") == 0 ||
			    strcmp(t, "-lt") == 0 || strcmp(t, "-le") == 0 ||
			    strcmp(t, "-gt") == 0 || strcmp(t, "-ge") == 0) {
				item_problem(it, "[[ %s evaluates its operands as "
				    "arithmetic, which may run commands", t);
				return;
			}
		}
	}
}

/*
 * Builtins that set the variables their arguments name: not one that runs
 * code (export BASH_ENV=x, read PATH, printf -v PATH), nor one a glob or
 * a variable names (printf * with files "-v", "PATH", "x" sets PATH=x).
 */
static void
note_setvars(struct pitem *it, const struct pcmd *pc, const char *name)
{
	const struct policy_word	*w;
	size_t				 i, n;
	int				 ended = 0;

	if (strcmp(name, "printf") == 0) {
		if (pc->nwords > 1 && word_options(&pc->words[1], name, &ended))
			item_problem(it, "printf '%s' may expand to -v NAME, "
			    "which sets any variable (PATH ...)",
			    pc->words[1].text);
		else if (pc->nwords > 2 && strcmp(pc->words[1].text, "-v") == 0 &&
		    ((pc->words[2].flags & PW_EXPANDS) ||
		    code_var(pc->words[2].text)))
			code_var_problem(it, pc->words[2].text,
			    "every later command");
		return;
	}
	if (!word_in(" export declare typeset local readonly read mapfile "
	    "readarray getopts ", name))
		return;
	for (i = 1; i < pc->nwords; i++) {
		w = &pc->words[i];
		n = strcspn(w->text, "=");
		if ((w->flags & PW_EXPANDS) && strcspn(w->text, "$`*?[{") < n) {
			item_problem(it, "%s '%s' may set any variable (PATH ...)",
			    name, w->text);
			return;
		}
		if (w->text[0] != '-' && code_var(w->text)) {
			code_var_problem(it, w->text, "every later command");
			return;
		}
	}
}

static int
is_shell(const char *t)
{
	static const char *shells[] = {
		"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash",
		"posh", "fish", "csh", "tcsh"
	};
	size_t	 i;

	for (i = 0; i < nitems(shells); i++) {
		if (strcmp(t, shells[i]) == 0)
			return 1;
	}
	return 0;
}

static int
special_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Is name one that norm_cmd treats specially? (sorted, for bsearch) */
static int
special_name(const char *name)
{
	static const char *names[] = {
		".", "[", "[[", "alias", "ash", "bash", "builtin", "busybox",
		"catchsegv", "cd", "chrt", "command", "cp", "csh", "dash", "dd",
		"declare", "doas", "enable", "env", "eval", "exec", "export",
		"find", "fish", "getopts", "git", "hash", "install", "ionice",
		"ksh", "ld.so", "let", "ln", "local", "mapfile", "mkdir", "mksh", "mv",
		"nice", "nohup", "perl", "popd", "posh", "printf", "pushd", "rbash",
		"read", "readarray", "readonly", "rm", "rmdir", "rsync", "sed",
		"setsid", "sh", "shred", "source", "sponge", "stdbuf", "sudo",
		"taskset", "tcsh", "tee", "test", "time", "timeout", "touch",
		"trap", "truncate", "typeset", "unbuffer", "unlink", "unset",
		"wait", "xargs", "yash", "zsh"
	};

	return bsearch(&name, names, nitems(names), sizeof names[0],
	    special_cmp) != NULL;
}

/*
 * The special names that only the shell has (a program of that name,
 * given by path, does none of what they do to the shell): sorted.
 */
static int
shell_builtin(const char *name)
{
	static const char *names[] = {
		".", "alias", "builtin", "cd", "command", "declare", "enable",
		"eval", "exec", "export", "getopts", "hash", "let", "local",
		"mapfile", "popd", "pushd", "read", "readarray", "readonly",
		"source", "trap", "typeset", "unset", "wait"
	};

	return bsearch(&name, names, nitems(names), sizeof names[0],
	    special_cmp) != NULL;
}

static int
norm_cmd(struct pctx *c, const struct pcmd *pc0)
{
	const struct policy_word	*w0;
	struct policy_word		*gwords = NULL;
	struct pcmd			 gpc;
	const struct pcmd		*pc = pc0;
	const struct globals		*g = NULL;
	struct gitopts			 go;
	char				*canon = NULL, *sys = NULL, *name;
	char				*gprob = NULL, *alias = NULL;
	const char			*alt = NULL, *t, *judged;
	size_t				 k, si, i;
	int				 by_path = 0;

	if (pc->nwords == 0)
		return 0;
	w0 = &pc->words[0];
	t = w0->text;
	if (w0->flags & PW_EXPANDS) {
		cmd_item(c, pc, t, NULL, 1);
		si = c->nitems - 1;
		if (w0->flags & (PW_SUBST|PW_PROCSUBST))
			item_problem(ITEM(c, si), "the command name comes from a "
			    "substitution");
		else if (w0->flags & (PW_VAR|PW_ARITH|PW_UNSAFE))
			item_problem(ITEM(c, si), "the command name is a variable");
		else if (w0->flags & PW_GLOB)
			item_problem(ITEM(c, si), "the command name is a glob");
		else
			item_problem(ITEM(c, si), "the command name is a brace "
			    "expansion");
		return 0;
	}
	if (*t == '\0') {
		cmd_item(c, pc, "''", NULL, 1);
		item_problem(ITEM(c, c->nitems - 1), "the command name is empty");
		return 0;
	}
	if (has_nonascii_or_ctrl(t)) {
		name = policy_shell_quote(t);
		cmd_item(c, pc, name, NULL, 1);
		free(name);
		item_problem(ITEM(c, c->nitems - 1), "the command name has "
		    "non-ASCII or control characters (a lookalike?)");
		return 0;
	}
	if (strchr(t, '/') != NULL) {
		if (t[0] == '/') {
			canon = path_canon(t);
			sys = path_system_name(canon);
		}
		if (sys != NULL)
			name = xstrdup(sys);
		else {
			name = policy_shell_quote(canon != NULL ? canon : t);
			alt = base_name(canon != NULL ? canon : t);
			by_path = 1;
		}
	} else
		name = policy_shell_quote(t);
	t = sys != NULL ? sys : (canon != NULL ? canon : t);
	/*
	 * A program by a path that is no system directory's may be anything,
	 * so it is never allowed for what it runs; but it is judged as what
	 * its name says as well (a shell's string, a wrapper's command, git's
	 * subcommand), so that naming a program by path dodges no rule.
	 */
	if (by_path) {
		alt = alias = path_alias(alt, &judged);
		/* ./cd is a program: it changes no directory of the shell's. */
		if (!shell_builtin(judged))
			t = judged;
	}

	memset(&go, 0, sizeof go);
	for (k = 0; k < nitems(globals) && pc->nwords > 1; k++) {
		if (strcmp(t, globals[k].name) == 0) {
			g = &globals[k];
			gpc = *pc;
			gwords = globals_filter(c, g, pc, &gpc.nwords, &gprob,
			    &go);
			gpc.words = gwords;
			pc = &gpc;
			break;
		}
	}
	cmd_item(c, pc, name, alt, 1);
	free(name);
	si = c->nitems - 1;
	if (gprob != NULL)
		item_problem(ITEM(c, si), "%s", gprob);
	if (strcmp(t, "git") == 0)
		git_repo_check(c, ITEM(c, si), &go);

	/* Most commands are nothing special: one lookup and done. */
	if (!special_name(t))
		goto done;
	if (pc->xargs && (is_shell(t) || strcmp(t, "eval") == 0 ||
	    strcmp(t, "find") == 0)) {
		item_problem(ITEM(c, si), "xargs gives %s arguments from its "
		    "input, which may be a command", t);
		goto done;
	}
	for (k = 0; pc->xargs && k < nitems(wrappers); k++) {
		if (strcmp(t, wrappers[k].name) == 0) {
			item_problem(ITEM(c, si), "xargs gives %s arguments from "
			    "its input, which may be a command", t);
			goto done;
		}
	}

	/* What cannot be judged statically. */
	if (strcmp(t, "eval") == 0)
		item_problem(ITEM(c, si), "eval runs a string that cannot be "
		    "judged");
	else if (strcmp(t, "source") == 0 || strcmp(t, ".") == 0)
		item_problem(ITEM(c, si), "%s runs a file that cannot be judged",
		    t);
	else if (strcmp(t, "trap") == 0 && pc->nwords > 2)
		item_problem(ITEM(c, si), "trap runs a string later, which "
		    "cannot be judged");
	else if (strcmp(t, "alias") == 0 && pc->nwords > 1)
		item_problem(ITEM(c, si), "alias changes what later words mean");
	else if (strcmp(t, "enable") == 0 && pc->nwords > 1)
		item_problem(ITEM(c, si), "enable changes what later command "
		    "names mean");
	else if (strcmp(t, "hash") == 0 && pc->nwords > 1 &&
	    strcmp(pc->words[1].text, "-r") != 0 &&
	    strcmp(pc->words[1].text, "-l") != 0)
		item_problem(ITEM(c, si), "hash -p changes what later command "
		    "names run");
	if (ITEM(c, si)->problem != NULL)
		goto done;
	check_varnames(ITEM(c, si), pc, t);
	note_setvars(ITEM(c, si), pc, t);

	if (strcmp(t, "cd") == 0 || strcmp(t, "pushd") == 0 ||
	    strcmp(t, "popd") == 0)
		note_cd(c, pc);
	note_writes(c, pc, t);
	if (ITEM(c, si)->anyopts && word_in(" find git perl sed ", t)) {
		/* -delete, --output=FILE, -i: what it writes is unknown */
		struct pitem	*it = item_new(c);

		it->write = 1;
		item_form(it, xprintf("(files of %s)", t));
		item_problem(it, "%s may get options that write files (-delete, "
		    "--output=FILE, -i) from %s", t, ITEM(c, si)->optword > 0 ?
		    "a word the shell expands" : "xargs");
	}
	for (k = 0; k < nitems(wrappers); k++) {
		if (strcmp(t, wrappers[k].name) != 0)
			continue;
		if (strcmp(t, "command") == 0 && pc->nwords > 1 &&
		    (strcmp(pc->words[1].text, "-v") == 0 ||
		    strcmp(pc->words[1].text, "-V") == 0))
			break;
		norm_wrapper(c, pc, &wrappers[k], si);
		goto done;
	}
	if (is_shell(t)) {
		norm_shell(c, pc, si);
		/* The shell sees its prefixes, the string's commands not. */
		for (i = 0; i < pc->nassigns; i++) {
			if (!safe_var(pc->assigns[i].text))
				ITEM(c, si)->transparent = 0;
		}
	} else if (strcmp(t, "find") == 0)
		norm_find(c, pc, si);
	else if (go.alias_name != NULL) {
		for (i = 1; i < pc->nwords; i++) {
			if (pc->words[i].text[0] != '-')
				break;
		}
		if (i < pc->nwords && strcmp(pc->words[i].text,
		    go.alias_name) == 0) {
			if (go.alias_val[0] != '!')
				item_problem(ITEM(c, si), "git alias '%s' stands "
				    "for 'git %s': judge that instead",
				    go.alias_name, go.alias_val);
			else if (c->depth >= NORM_MAX_DEPTH)
				item_problem(ITEM(c, si), "aliases nested too deep");
			else {
				/* A shell alias: git runs it with sh -c. */
				ITEM(c, si)->transparent = 1;
				c->depth++;
				if (policy_norm_line(c, go.alias_val + 1,
				    strlen(go.alias_val + 1)) != 0)
					ITEM(c, si)->transparent = 0;
				c->depth--;
			}
		}
	}
done:
	if (by_path)
		ITEM(c, si)->transparent = 0;
	free(gwords);
	free(alias);
	free(gprob);
	gitopts_release(&go);
	free(canon);
	free(sys);
	return 0;
}

/* One parsed command (any kind). */
static void
norm_redirs(struct pctx *c, const struct policy_cmd *pcmd)
{
	size_t	 i;

	for (i = 0; i < pcmd->nredirs; i++) {
		const struct policy_redir *r = &pcmd->redirs[i];

		/*
		 * bash opens a network connection for < /dev/tcp/HOST/PORT
		 * (writes there are outside the workspace anyway).
		 */
		if ((r->op == PR_HERESTRING || r->op == PR_DUP_IN) &&
		    (r->target.flags & PW_UNSAFE)) {
			struct pitem *it = item_new(c);

			item_form(it, xprintf("<<< %s", r->target.text));
			item_problem(it, "'%s' may run commands when expanded",
			    r->target.text);
		}
		if ((r->op == PR_IN || r->op == PR_RW) &&
		    (strncmp(r->target.text, "/dev/tcp/", 9) == 0 ||
		    strncmp(r->target.text, "/dev/udp/", 9) == 0 ||
		    (r->target.flags & (PW_VAR|PW_SUBST|PW_ARITH|PW_GLOB|
		    PW_BRACE|PW_UNSAFE)))) {
			struct pitem *it = item_new(c);

			item_form(it, xprintf("< %s", r->target.text));
			if (r->target.text[0] == '/')
				item_problem(it, "'%s' is a network connection",
				    r->target.text);
			else
				item_problem(it, "reading '%s', which may be a "
				    "network connection (/dev/tcp/...)",
				    r->target.text);
		}
		switch (r->op) {
		case PR_OUT:
		case PR_APPEND:
		case PR_CLOBBER:
		case PR_RW:
		case PR_ALL:
		case PR_ALL_APPEND:
			write_target(c, &r->target, "redirection");
			break;
		case PR_DUP_OUT:
			if (r->target.flags & PW_EXPANDS)
				write_target(c, &r->target, "redirection");
			break;
		default:
			break;
		}
	}
}

static void norm_parsed_kind(struct pctx *, const struct policy_cmd *);

/* One parsed command: what it runs, then the files it redirects to. */
static void
norm_parsed(struct pctx *c, const struct policy_cmd *pcmd)
{
	norm_parsed_kind(c, pcmd);
	norm_redirs(c, pcmd);
}

static void
norm_parsed_kind(struct pctx *c, const struct policy_cmd *pcmd)
{
	struct pitem	*it;
	struct pcmd	 pc;
	const char	*t;
	size_t		 i;
	int		 w;

	switch (pcmd->kind) {
	case PC_FUNCDEF:
		it = item_new(c);
		item_form(it, xprintf("%s()", pcmd->nwords > 0 ?
		    pcmd->words[0].text : "?"));
		item_problem(it, "a function definition changes what later "
		    "command names mean");
		return;
	case PC_ARITH:
		it = item_new(c);
		t = pcmd->nwords > 0 ? pcmd->words[0].text : "";
		item_form(it, xstrdup(t));
		for (; *t != '\0'; t++) {
			if (isalpha((unsigned char)*t) || *t == '$' || *t == '`' ||
			    *t == '_')
				break;
		}
		if (*t != '\0')
			item_problem(it, "arithmetic on variables may run commands");
		else if ((pcmd->flags & PC_F_FOR) == 0)
			item_problem(it, "sh reads (( )) as two subshells and "
			    "runs what is inside as a command");
		else
			it->transparent = 1;	/* for ((;;)) */
		return;
	case PC_FOR:
		for (i = 1; i < pcmd->nwords; i++) {
			if (pcmd->words[i].flags & PW_UNSAFE) {
				it = item_new(c);
				item_form(it, xprintf("for %s in ...",
				    pcmd->words[0].text));
				item_problem(it, "'%s' may run commands when "
				    "expanded", pcmd->words[i].text);
				return;
			}
		}
		return;
	case PC_EXPANSION:
		it = item_new(c);
		item_form(it, xprintf("(%s)", pcmd->nwords > 0 ?
		    pcmd->words[0].text : "expansion"));
		item_problem(it, "the %s expands ${x@P}, ${!x}, arithmetic or a "
		    "subscript, which may run commands", pcmd->nwords > 0 ?
		    pcmd->words[0].text : "expansion");
		return;
	case PC_TEST:
		/*
		 * For sh, [[ is a command like any other: its < > are
		 * redirections, its && || ( ) separators. Only [[ ]] that
		 * both read the same way can be judged.
		 */
		for (i = 1; i + 1 < pcmd->nwords; i++) {
			t = pcmd->words[i].text;
			if ((pcmd->words[i].flags & PW_QUOTED) == 0 &&
			    (strcmp(t, "<") == 0 || strcmp(t, ">") == 0 ||
			    strcmp(t, "&&") == 0 || strcmp(t, "||") == 0 ||
			    strcmp(t, "(") == 0 || strcmp(t, ")") == 0 ||
			    strcmp(t, "|") == 0)) {
				it = item_new(c);
				item_form(it, xstrdup("[[ ... ]]"));
				item_problem(it, "'%s' in [[ ]]: sh reads it as a "
				    "redirection or a separator, bash does not", t);
				return;
			}
		}
		break;
	case PC_SIMPLE:
		break;
	}
	if (pcmd->nwords == 0) {
		if (pcmd->nassigns == 0)
			return;
		/*
		 * NAME=value alone: lower-case names are shell variables,
		 * but for zsh's path, fpath, cdpath and module_path, tied
		 * to PATH and the like.
		 */
		w = 1;
		for (i = 0; i < pcmd->nassigns; i++) {
			t = pcmd->assigns[i].text;
			if (strncmp(t, "path", 4) == 0 || strncmp(t, "fpath", 5) ==
			    0 || strncmp(t, "cdpath", 6) == 0 ||
			    strncmp(t, "module_path", 11) == 0)
				w = 0;
			while (*t != '=' && *t != '[' && *t != '+' && *t != '\0') {
				if (!islower((unsigned char)*t) && *t != '_' &&
				    !isdigit((unsigned char)*t))
					w = 0;
				t++;
			}
		}
		memset(&pc, 0, sizeof pc);
		it = item_new(c);
		{
			struct buf	 b = BUF_INIT;
			char		*r;

			for (i = 0; i < pcmd->nassigns; i++) {
				r = word_render(&pcmd->assigns[i]);
				if (code_var(pcmd->assigns[i].text))
					code_var_problem(it,
					    pcmd->assigns[i].text, "the shell");
				if (i > 0)
					buf_addc(&b, ' ');
				buf_adds(&b, r);
				free(r);
				if (pcmd->assigns[i].flags & PW_UNSAFE)
					item_problem(it, "the assignment '%s' "
					    "evaluates an array subscript, which "
					    "may run commands",
					    pcmd->assigns[i].text);
			}
			item_form(it, buf_detach(&b, NULL));
		}
		it->transparent = w;
		return;
	}
	memset(&pc, 0, sizeof pc);
	pc.assigns = pcmd->assigns;
	pc.nassigns = pcmd->nassigns;
	pc.words = pcmd->words;
	pc.nwords = pcmd->nwords;
	norm_cmd(c, &pc);
}

static int
policy_norm_line(struct pctx *c, const char *line, size_t len)
{
	struct policy_parse	*pp;
	struct pitem		*it;
	size_t			 i;

	pp = policy_shell_parse(line, len);
	if (pp->error != NULL) {
		it = item_new(c);
		if (len > 200)
			item_form(it, xprintf("%.200s...", line));
		else
			item_form(it, xstrndup(line, len));
		item_problem(it, "cannot parse: %s", pp->error);
		policy_shell_free(pp);
		return -1;
	}
	for (i = 0; i < pp->ncmds; i++)
		norm_parsed(c, &pp->cmds[i]);
	policy_shell_free(pp);
	return 0;
}

static void
pctx_release(struct pctx *c)
{
	size_t	 i;

	item_release(&c->scratch);
	for (i = 0; i < c->nitems; i++)
		item_release(&c->items[i]);
	free(c->items);
	for (i = 0; i < c->ncwds; i++)
		free(c->cwds[i]);
}

/* ------------------------------------------------------------------ */
/* judging */

static int
rule_matches_len(struct policy *p, const struct policy_rule *r, const char *s,
    size_t len)
{
	int	 rc;

	/* pcre2_jit_match skips pcre2_match's checks: half the cost. */
	if (r->jit)
		rc = pcre2_jit_match(r->re, (PCRE2_SPTR)s, len, 0, 0, p->md,
		    p->mctx);
	else
		rc = pcre2_match(r->re, (PCRE2_SPTR)s, len, 0, 0, p->md,
		    p->mctx);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	/* A rule that errs (match limit) counts when it tightens. */
	return policy_tightens(r->action);
}

static int
rule_matches(struct policy *p, const struct policy_rule *r, const char *s)
{
	return rule_matches_len(p, r, s, strlen(s));
}

/* Hostile arguments: what xargs or a glob may add to a command. */
#define XARGS_PROBE " -delete --output=/x --pre=sh -exec sh -c x ;"

static int
action_rank(enum policy_action a)
{
	switch (a) {
	case PA_ALLOW:
	case PA_WRITE_ALLOW:
	case PA_TOOL_ALLOW:
		return 1;
	case PA_ASK:
	case PA_WRITE_ASK:
	case PA_TOOL_ASK:
		return 2;
	case PA_DENY:
	case PA_WRITE_DENY:
	case PA_TOOL_DENY:
		return 3;
	default:
		return 0;
	}
}

struct judged {
	const struct policy_rule	*rule;
	const struct policy_group	*group;
	const struct policy_rule	*probed;	/* allowed but not hostile */
};

static void
judge_rules(struct policy *p, const struct pitem *it, struct judged *j)
{
	const struct policy_group	*g;
	const struct policy_rule	*r;
	size_t				 gi, ri, fi, len[ITEM_MAX_FORMS], plen = 0;
	char				*probe = NULL;	/* form 0 and hostile args */

	for (fi = 0; fi < it->nforms; fi++)
		len[fi] = strlen(it->forms[fi]);

	j->rule = NULL;
	j->group = NULL;
	j->probed = NULL;
	for (gi = 0; gi < p->ngroups; gi++) {
		g = &p->groups[gi];
		for (fi = 0; fi < it->nforms; fi++) {
			for (ri = 0; ri < g->nrules; ri++) {
				r = &g->rules[ri];
				if (policy_family(r->action) != (it->write ?
				    PF_WRITE : PF_COMMAND))
					continue;
				if (!rule_matches_len(p, r, it->forms[fi], len[fi]))
					continue;
				/* Other forms only tighten. */
				if (fi > 0 && action_rank(r->action) == 1)
					break;
				/*
				 * xargs appends arguments from its input, a
				 * glob or a variable may give options: an
				 * allow counts only if it allows hostile ones.
				 */
				if (it->anyopts && action_rank(r->action) == 1) {
					if (probe == NULL) {
						probe = xprintf("%s" XARGS_PROBE,
						    it->forms[fi]);
						plen = strlen(probe);
					}
					if (!rule_matches_len(p, r, probe, plen)) {
						if (j->probed == NULL)
							j->probed = r;
						continue;
					}
				}
				if (j->rule == NULL ||
				    action_rank(r->action) > action_rank(j->rule->action)) {
					j->rule = r;
					j->group = g;
				}
				break;
			}
		}
	}
	free(probe);
}

/*
 * A safety net for wrappers: if the wrapped command was not found where
 * the wrapper runs it (an option holt reads wrongly), a deny or ask rule
 * may still match a tail of its words; then it is not judged by what it
 * runs but asks. Costs one match per rule per word, for wrappers only.
 */
static void
judge_wrapper_tails(struct policy *p, struct pitem *it)
{
	const struct policy_group	*g;
	const struct policy_rule	*r;
	struct buf			 b = BUF_INIT;
	size_t				 k, i, gi, ri;

	for (k = 1; k < it->nwords && it->problem == NULL; k++) {
		buf_reset(&b);
		for (i = k; i < it->nwords; i++) {
			if (i > k)
				buf_addc(&b, ' ');
			buf_adds(&b, it->words[i]);
		}
		for (gi = 0; gi < p->ngroups; gi++) {
			g = &p->groups[gi];
			for (ri = 0; ri < g->nrules; ri++) {
				r = &g->rules[ri];
				if (r->action != PA_DENY && r->action != PA_ASK)
					continue;
				if (!rule_matches(p, r, buf_str(&b)))
					continue;
				item_problem(it, "'%s' may run '%s', which rule '%s' "
				    "(%s:%u) %s", it->words[0], buf_str(&b),
				    r->pattern, g->source, r->line, r->action ==
				    PA_DENY ? "denies" : "asks about");
				break;
			}
			if (it->problem != NULL)
				break;
		}
	}
	buf_release(&b);
}

static void
judge_item(struct policy *p, enum policy_mode mode, struct pitem *it,
    struct policy_part *part)
{
	struct judged	 j;
	int		 rank;
	const char	*what = it->write ? "write" : "command";

	if (it->transparent && !it->write && it->nwords > 1)
		judge_wrapper_tails(p, it);
	judge_rules(p, it, &j);
	memset(part, 0, sizeof *part);
	part->write = it->write;
	part->command = it->write ? xprintf("write %s", it->forms[0]) :
	    xstrdup(it->forms[0]);
	rank = j.rule != NULL ? action_rank(j.rule->action) : 0;
	if (rank == 3) {
		part->verdict = POLICY_DENY;
		part->reason = xstrdup("denied by a rule");
		goto rule;
	}
	if (it->problem != NULL) {
		if (mode == POLICY_STRICT) {
			part->verdict = POLICY_DENY;
			part->reason = xprintf("%s; strict mode refuses what "
			    "cannot be judged", it->problem);
		} else {
			part->verdict = POLICY_ASK;
			part->reason = xstrdup(it->problem);
		}
		return;
	}
	if (rank == 2) {
		if (mode == POLICY_STRICT) {
			part->verdict = POLICY_DENY;
			part->reason = xstrdup("a rule asks; strict mode refuses "
			    "instead");
		} else if (mode == POLICY_TRUST) {
			part->verdict = POLICY_ALLOW;
			part->reason = xstrdup("a rule asks; trust mode runs it");
		} else {
			part->verdict = POLICY_ASK;
			part->reason = xstrdup("a rule asks");
		}
		goto rule;
	}
	if (rank == 1) {
		if (mode == POLICY_MANUAL) {
			part->verdict = POLICY_ASK;
			part->reason = xprintf("manual mode asks for every %s",
			    what);
			return;
		}
		part->verdict = POLICY_ALLOW;
		part->reason = xstrdup("allowed by a rule");
		goto rule;
	}
	if (it->transparent) {
		part->verdict = POLICY_ALLOW;
		part->reason = xstrdup(it->write ? "nothing is written" :
		    "judged by what it runs");
		return;
	}
	switch (mode) {
	case POLICY_TRUST:
		/* trust runs what no rule denies: an expansion may hide one */
		if (!it->anyopts || it->write)
			break;
		part->verdict = POLICY_ASK;
		part->reason = xprintf("%s may get options a deny rule names "
		    "(--force ...) from %s%s%s", it->words[0], it->optword > 0 ?
		    "'" : "xargs", it->optword > 0 ? it->words[it->optword] : "",
		    it->optword > 0 ? "'" : "");
		return;
	case POLICY_AUTO:
	case POLICY_STRICT:
		if (j.probed == NULL)
			break;
		if (it->optword > 0)
			part->reason = xprintf("'%s' may expand to options "
			    "(-delete, --output=FILE, ...), which rule '%s' does "
			    "not allow", it->words[it->optword], j.probed->pattern);
		else
			part->reason = xprintf("xargs may add options (-delete, "
			    "--output=FILE, ...), which rule '%s' does not "
			    "allow", j.probed->pattern);
		part->verdict = mode == POLICY_AUTO ? POLICY_ASK : POLICY_DENY;
		return;
	default:
		break;
	}
	switch (mode) {
	case POLICY_MANUAL:
		part->verdict = POLICY_ASK;
		part->reason = xprintf("manual mode asks for every %s", what);
		break;
	case POLICY_AUTO:
		part->verdict = POLICY_ASK;
		part->reason = xprintf("no rule settles this %s", what);
		break;
	case POLICY_STRICT:
		part->verdict = POLICY_DENY;
		part->reason = xprintf("no rule allows this %s (strict mode)",
		    what);
		break;
	case POLICY_TRUST:
		part->verdict = POLICY_ALLOW;
		part->reason = xprintf("no rule denies this %s (trust mode)",
		    what);
		break;
	}
	return;
rule:
	part->rule = xstrdup(j.rule->pattern);
	part->source = xstrdup(j.group->source);
	part->line = j.rule->line;
	part->action = xstrdup(policy_action_names[j.rule->action]);
}

static struct policy_result *
policy_judge(struct policy *p, enum policy_mode mode, struct pctx *c)
{
	struct policy_result	*res;
	struct pitem		*it;
	size_t			 i, best = 0;

	if (c->overflow) {
		/* The cap leaves room for this one. */
		c->overflow = 0;
		c->nitems = POLICY_MAX_PARTS - 1;
		item_release(&c->items[c->nitems]);
		it = item_new(c);
		item_form(it, xprintf("(more than %d parts)", POLICY_MAX_PARTS));
		item_problem(it, "the line has more than %d parts",
		    POLICY_MAX_PARTS);
	}
	res = xcalloc(1, sizeof *res);
	res->verdict = POLICY_ALLOW;
	if (c->nitems == 0) {
		res->reason = xstrdup("nothing to run");
		return res;
	}
	res->parts = xcalloc(c->nitems, sizeof *res->parts);
	res->nparts = c->nitems;
	for (i = 0; i < c->nitems; i++) {
		judge_item(p, mode, &c->items[i], &res->parts[i]);
		if (res->parts[i].verdict > res->verdict ||
		    (i == 0 && res->parts[i].verdict == res->verdict)) {
			res->verdict = res->parts[i].verdict;
			best = i;
		}
	}
	if (res->parts[best].rule != NULL)
		res->reason = xprintf("%s: %s '%s' (%s:%u)",
		    res->parts[best].command, res->parts[best].reason,
		    res->parts[best].rule, res->parts[best].source,
		    res->parts[best].line);
	else
		res->reason = xprintf("%s: %s", res->parts[best].command,
		    res->parts[best].reason);
	return res;
}

void
policy_set_root(struct policy *p, const char *dir)
{
	free(p->root);
	p->root = dir != NULL ? path_canon(dir) : NULL;
}

void
policy_set_tmp(struct policy *p, const char *dir)
{
	free(p->tmp);
	p->tmp = dir != NULL ? path_canon(dir) : NULL;
}

static void
pctx_init(struct pctx *c, struct policy *p, const char *cwd)
{
	memset(c, 0, sizeof *c);
	c->p = p;
	c->root = p->root != NULL ? p->root : WORKSPACE;
	c->tmp = p->tmp;
	c->start = cwd != NULL && cwd[0] == '/' ? cwd : c->root;
}

struct policy_result *
policy_check_command(struct policy *p, enum policy_mode mode,
    const char *cmdline)
{
	return policy_check_command_in(p, mode, NULL, cmdline);
}

struct policy_result *
policy_check_command_in(struct policy *p, enum policy_mode mode,
    const char *cwd, const char *cmdline)
{
	struct policy_result	*res;
	struct pctx		 c;
	char			*start = cwd != NULL && cwd[0] == '/' ?
	    path_canon(cwd) : NULL;

	pctx_init(&c, p, start);
	policy_norm_line(&c, cmdline, strlen(cmdline));
	res = policy_judge(p, mode, &c);
	pctx_release(&c);
	free(start);
	return res;
}

struct policy_result *
policy_check_write(struct policy *p, enum policy_mode mode, const char *path)
{
	struct policy_result	*res;
	struct policy_word	 w;
	struct pctx		 c;

	pctx_init(&c, p, NULL);
	w.text = (char *)path;
	w.flags = path[0] == '~' ? PW_TILDE : 0;
	if (*path == '\0') {
		struct pitem *it = item_new(&c);

		it->write = 1;
		item_form(it, xstrdup("''"));
		item_problem(it, "empty path");
	} else
		write_target(&c, &w, "path");
	if (c.nitems == 0) {
		/* /dev/null and the like: nothing is written. */
		struct pitem *it = item_new(&c);

		it->write = 1;
		item_form(it, xstrdup(path));
		it->transparent = 1;
	}
	res = policy_judge(p, mode, &c);
	pctx_release(&c);
	return res;
}

void
policy_result_free(struct policy_result *res)
{
	size_t	 i;

	if (res == NULL)
		return;
	for (i = 0; i < res->nparts; i++) {
		free(res->parts[i].command);
		free(res->parts[i].rule);
		free(res->parts[i].source);
		free(res->parts[i].reason);
		free(res->parts[i].action);
	}
	free(res->parts);
	free(res->reason);
	free(res);
}

static void
json_add_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

cJSON *
policy_result_json(const struct policy_result *res)
{
	cJSON				*o, *parts, *po;
	const struct policy_part	*pt;
	size_t				 i;

	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "verdict", policy_verdict_name(res->verdict));
	json_add_str_or_null(o, "reason", res->reason);
	parts = cJSON_AddArrayToObject(o, "parts");
	for (i = 0; i < res->nparts; i++) {
		pt = &res->parts[i];
		po = cJSON_CreateObject();
		cJSON_AddStringToObject(po, "command", pt->command);
		cJSON_AddStringToObject(po, "verdict",
		    policy_verdict_name(pt->verdict));
		json_add_str_or_null(po, "rule", pt->rule);
		json_add_str_or_null(po, "source", pt->source);
		if (pt->line != 0)
			cJSON_AddNumberToObject(po, "line", pt->line);
		json_add_str_or_null(po, "action", pt->action);
		cJSON_AddStringToObject(po, "reason", pt->reason);
		cJSON_AddBoolToObject(po, "write", pt->write);
		cJSON_AddItemToArray(parts, po);
	}
	return o;
}

/* ------------------------------------------------------------------ */
/* suggesting a rule */

static void
regex_escape(struct buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
		if (isalnum((unsigned char)*s) || *s == ' ' ||
		    strchr("_-/:=,@%~", *s) != NULL)
			buf_addc(b, *s);
		else {
			buf_addc(b, '\\');
			buf_addc(b, *s);
		}
	}
}

static int
all_in(const char *s, const char *extra)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++) {
		if (!isalnum((unsigned char)*s) && strchr(extra, *s) == NULL)
			return 0;
	}
	return 1;
}

static char *
suggest_wider(const struct pitem *it)
{
	struct buf	 b = BUF_INIT;
	size_t		 i = 1;

	if (it->nwords == 0)
		return NULL;
	buf_addc(&b, '^');
	regex_escape(&b, it->words[0]);
	if (it->nwords > 1 && all_in(it->words[1], "-") &&
	    islower((unsigned char)it->words[1][0])) {
		buf_addc(&b, ' ');
		regex_escape(&b, it->words[1]);
		i = 2;
	}
	if (i == it->nwords) {
		buf_adds(&b, "(\\s|$)");
		return buf_detach(&b, NULL);
	}
	for (; i < it->nwords; i++) {
		if (all_in(it->words[i], "_:-"))
			buf_adds(&b, " [\\w:-]+");
		else if (all_in(it->words[i], "_./:=@,+-") &&
		    it->words[i][0] != '-')
			buf_adds(&b, " [\\w./:=@,+-]+");
		else if (all_in(it->words[i], "_./:=@,+-"))
			buf_adds(&b, " -[\\w./:=@,+-]+");
		else {
			buf_release(&b);
			return NULL;
		}
	}
	buf_addc(&b, '$');
	return buf_detach(&b, NULL);
}

static int
suggest_check(const char *pattern, struct pitem **need, size_t n)
{
	struct policy_rule	 r;
	pcre2_match_data	*md;
	char			*msg = NULL;
	size_t			 i;
	int			 ok = 1;

	memset(&r, 0, sizeof r);
	if (policy_compile(&r, pattern, &msg) != 0) {
		free(msg);
		return 0;
	}
	md = pcre2_match_data_create_from_pattern(r.re, NULL);
	for (i = 0; i < n && ok; i++) {
		if (pcre2_match(r.re, (PCRE2_SPTR)need[i]->forms[0],
		    strlen(need[i]->forms[0]), 0, 0, md, NULL) < 0)
			ok = 0;
	}
	pcre2_match_data_free(md);
	pcre2_code_free(r.re);
	free(r.pattern);
	return ok;
}

char *
policy_suggest_rule(struct policy *p, const char *cmdline, char **wider)
{
	struct pctx		 c;
	struct pitem		*it, **need = NULL;
	struct policy_part	 part;
	struct buf		 nb = BUF_INIT, wb = BUF_INIT;
	char			*w, *out = NULL;
	size_t			 i, n = 0;
	int			 wide_ok = 1, fail = 0;

	if (wider != NULL)
		*wider = NULL;
	pctx_init(&c, p, NULL);
	policy_norm_line(&c, cmdline, strlen(cmdline));
	need = xcalloc(c.nitems + 1, sizeof *need);
	for (i = 0; i < c.nitems && !fail; i++) {
		it = &c.items[i];
		judge_item(p, POLICY_AUTO, it, &part);
		/* Denied, asked by a rule, or not judgeable: no rule helps. */
		if (part.verdict != POLICY_ALLOW) {
			if (it->write || it->problem != NULL || part.rule != NULL)
				fail = 1;
			else if (has_nonascii_or_ctrl(it->forms[0]))
				fail = 1;
			else
				need[n++] = it;
		}
		free(part.command);
		free(part.rule);
		free(part.source);
		free(part.reason);
		free(part.action);
	}
	if (fail || n == 0)
		goto out;
	if (n > 1) {
		buf_adds(&nb, "^(?:");
		buf_adds(&wb, "^(?:");
	} else
		buf_addc(&nb, '^');
	for (i = 0; i < n; i++) {
		if (i > 0) {
			buf_addc(&nb, '|');
			buf_addc(&wb, '|');
		}
		regex_escape(&nb, need[i]->forms[0]);
		w = suggest_wider(need[i]);
		if (w == NULL)
			wide_ok = 0;
		else {
			if (n > 1)
				buf_adds(&wb, w + 1);
			else
				buf_adds(&wb, w);
			free(w);
		}
	}
	buf_adds(&nb, n > 1 ? ")$" : "$");
	if (n > 1)
		buf_addc(&wb, ')');
	out = buf_detach(&nb, NULL);
	if (!suggest_check(out, need, n)) {
		free(out);
		out = NULL;
		goto out;
	}
	if (wider != NULL && wide_ok && wb.len > 0 &&
	    strcmp(buf_str(&wb), out) != 0 && suggest_check(buf_str(&wb), need,
	    n))
		*wider = buf_detach(&wb, NULL);
out:
	buf_release(&nb);
	buf_release(&wb);
	free(need);
	pctx_release(&c);
	return out;
}

int
policy_append_rule(const char *path, const char *action, const char *pattern,
    char **cause)
{
	struct policy	*p;
	char		*line;
	int		 fd, r;

	p = policy_new_empty();
	r = policy_add_rule(p, action, pattern, "check", cause);
	policy_free(p);
	if (r != 0)
		return -1;
	if (strchr(pattern, '\n') != NULL) {
		*cause = xstrdup("a pattern cannot hold a newline");
		return -1;
	}
	fd = open(path, O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC, 0600);
	if (fd == -1) {
		*cause = xprintf("policy '%s': %s", path, strerror(errno));
		return -1;
	}
	line = xprintf("%s %s\n", action, pattern);
	r = file_append_sync(fd, line, strlen(line));
	if (r != 0)
		*cause = xprintf("policy '%s': %s", path, strerror(errno));
	free(line);
	close(fd);
	return r != 0 ? -1 : 0;
}
