/*
 * policy-net.c: the net-allow / net-deny rules (holt-policy(5), DESIGN 5
 * and 13), which the sandbox's proxy asks about every host a command
 * connects to. A rule's pattern is a host name, or a glob whose '*'
 * matches any run of characters: "*.debian.org" is every subdomain of
 * debian.org, not debian.org itself. Matching is on names only: a literal
 * IP address never matches, and is refused.
 *
 * Within one source the first matching rule decides; across sources the
 * strictest (a deny anywhere wins), as for commands. What no rule settles
 * asks in auto and manual mode, is refused in strict and passes in trust.
 */
#include <arpa/inet.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "holt.h"
#include "policy.h"

struct policy_net_rule {
	int		 deny;
	char		*glob;
	char		*source;
	unsigned int	 line;
};

struct policy_net {
	struct policy_net_rule	*rules;
	size_t			 n;
};

/* The public package registries (DESIGN 13), and nothing else. */
static const char policy_net_defaults[] =
    "# the public package registries\n"
    "net-allow deb.debian.org\n"
    "net-allow security.debian.org\n"
    "net-allow *.debian.org\n"
    "net-allow registry.npmjs.org\n"
    "net-allow registry.yarnpkg.com\n"
    "net-allow pypi.org\n"
    "net-allow files.pythonhosted.org\n"
    "net-allow crates.io\n"
    "net-allow *.crates.io\n"
    "net-allow proxy.golang.org\n"
    "net-allow sum.golang.org\n"
    "net-allow rubygems.org\n"
    "net-allow *.rubygems.org\n"
    "net-allow repo.maven.apache.org\n"
    "net-allow repo1.maven.org\n";

void
policy_net_free(struct policy_net *n)
{
	size_t	 i;

	if (n == NULL)
		return;
	for (i = 0; i < n->n; i++) {
		free(n->rules[i].glob);
		free(n->rules[i].source);
	}
	free(n->rules);
	free(n);
}

int
policy_net_is_action(const char *s, size_t len)
{
	return (len == 9 && strncmp(s, "net-allow", 9) == 0) ||
	    (len == 8 && strncmp(s, "net-deny", 8) == 0);
}

/*
 * A host name as the proxy compares it: lower case, no final dot, letters
 * digits '-' '.' (and '_', seen in the wild), at most 253 bytes; NULL if
 * it is not one.
 */
char *
policy_net_host_norm(const char *host)
{
	char	*h;
	size_t	 i, len = strlen(host);

	if (len > 0 && host[len - 1] == '.')
		len--;
	if (len == 0 || len > 253)
		return NULL;
	h = xstrndup(host, len);
	for (i = 0; i < len; i++) {
		h[i] = (char)tolower((unsigned char)h[i]);
		if (!isalnum((unsigned char)h[i]) && strchr("-._", h[i]) == NULL) {
			free(h);
			return NULL;
		}
	}
	if (h[0] == '.' || strstr(h, "..") != NULL) {
		free(h);
		return NULL;
	}
	return h;
}

int
policy_net_is_ip(const char *host)
{
	unsigned char	 a[16];
	char		*h = xstrdup(host), *p;
	int		 ip;

	/* [::1] as in a URL */
	p = h;
	if (*p == '[' && p[strlen(p) - 1] == ']') {
		p[strlen(p) - 1] = '\0';
		p++;
	}
	ip = inet_pton(AF_INET, p, a) == 1 || inet_pton(AF_INET6, p, a) == 1;
	/* 127.1, 0x7f.1, 2130706433: what resolvers also take for addresses */
	if (!ip && *p != '\0' && strspn(p, "0123456789.xXabcdefABCDEF") ==
	    strlen(p) && strchr("0123456789", p[strlen(p) - 1]) != NULL &&
	    strchr("0123456789", *p) != NULL)
		ip = 1;
	free(h);
	return ip;
}

int
policy_net_add(struct policy_net **np, const char *action, const char *glob,
    const char *source, unsigned int line, char **msg)
{
	struct policy_net	*n;
	struct policy_net_rule	*r;
	char			*norm;
	const char		*p;
	size_t			 i;

	for (p = glob; *p != '\0'; p++) {
		if (!isalnum((unsigned char)*p) && strchr("-._*", *p) == NULL) {
			*msg = xprintf("'%s': a host name or a glob such as "
			    "*.example.org (letters, digits, '-', '.', '*')",
			    glob);
			return -1;
		}
	}
	if (*glob == '\0') {
		*msg = xprintf("'%s' needs a host name", action);
		return -1;
	}
	if (policy_net_is_ip(glob)) {
		*msg = xprintf("'%s': an IP address; net rules name hosts (a "
		    "literal address is always refused)", glob);
		return -1;
	}
	if ((n = *np) == NULL)
		n = *np = xcalloc(1, sizeof *n);
	norm = xstrdup(glob);
	for (p = norm; *p != '\0'; p++)
		norm[p - norm] = (char)tolower((unsigned char)*p);
	n->rules = xreallocarray(n->rules, n->n + 1, sizeof *n->rules);
	r = &n->rules[n->n++];
	r->deny = strcmp(action, "net-deny") == 0;
	r->glob = norm;
	r->source = xstrdup(source);
	r->line = line;
	/* Added by call: after the last of its source. */
	if (line == 0) {
		r->line = 1;
		for (i = n->n - 1; i > 0; i--) {
			if (strcmp(n->rules[i - 1].source, source) == 0) {
				r->line = n->rules[i - 1].line + 1;
				break;
			}
		}
	}
	return 0;
}

void
policy_net_merge(struct policy_net **into, struct policy_net *from)
{
	struct policy_net	*n;

	if (from == NULL)
		return;
	if ((n = *into) == NULL) {
		*into = from;
		return;
	}
	n->rules = xreallocarray(n->rules, n->n + from->n, sizeof *n->rules);
	memcpy(n->rules + n->n, from->rules, from->n * sizeof *n->rules);
	n->n += from->n;
	free(from->rules);
	free(from);
}

int
policy_net_load_defaults(struct policy_net **np, char **cause)
{
	const char	*line = policy_net_defaults, *end, *sp;
	char		*action, *glob;
	unsigned int	 lineno = 0;
	int		 rc = 0;

	for (; rc == 0 && *line != '\0'; line = end + 1) {
		lineno++;
		end = strchr(line, '\n');
		if (*line == '#' || (sp = strchr(line, ' ')) == NULL ||
		    sp > end)
			continue;
		action = xstrndup(line, (size_t)(sp - line));
		glob = xstrndup(sp + 1, (size_t)(end - sp - 1));
		rc = policy_net_add(np, action, glob, "default", lineno, cause);
		free(action);
		free(glob);
	}
	return rc;
}

/* Glob match, '*' any run (dots included); O(len * stars). */
static int
glob_match(const char *g, const char *s)
{
	const char	*star = NULL, *back = NULL;

	while (*s != '\0') {
		if (*g == '*') {
			star = g++;
			back = s;
		} else if (*g == *s) {
			g++;
			s++;
		} else if (star != NULL) {
			g = star + 1;
			s = ++back;
		} else
			return 0;
	}
	while (*g == '*')
		g++;
	return *g == '\0';
}

static struct policy_result *
host_result(const char *host, enum policy_verdict v,
    const struct policy_net_rule *r, const char *reason)
{
	struct policy_result	*res = xcalloc(1, sizeof *res);
	struct policy_part	*part;

	res->verdict = v;
	res->parts = xcalloc(1, sizeof *res->parts);
	res->nparts = 1;
	part = &res->parts[0];
	part->command = xprintf("host %s", host);
	part->verdict = v;
	part->reason = xstrdup(reason);
	if (r != NULL) {
		part->rule = xstrdup(r->glob);
		part->source = xstrdup(r->source);
		part->line = r->line;
		part->action = xstrdup(r->deny ? "net-deny" : "net-allow");
	}
	res->reason = xstrdup(reason);
	return res;
}

struct policy_result *
policy_net_check(struct policy_net *n, enum policy_mode mode,
    const char *host)
{
	const struct policy_net_rule	*r, *allow = NULL, *deny = NULL;
	const char			*src = NULL;
	struct policy_result		*res;
	char				*h, *why;
	size_t				 i;
	int				 settled = 0;

	if (policy_net_is_ip(host))
		return host_result(host, POLICY_DENY, NULL, "a literal IP "
		    "address: net rules name hosts, and an address is never "
		    "allowed (use the host's name)");
	if ((h = policy_net_host_norm(host)) == NULL)
		return host_result(host, POLICY_DENY, NULL, "not a host name");
	for (i = 0; n != NULL && i < n->n; i++) {
		r = &n->rules[i];
		/* First match within a source: skip the rest of it. */
		if (settled && src != NULL && strcmp(src, r->source) == 0)
			continue;
		if (src == NULL || strcmp(src, r->source) != 0) {
			src = r->source;
			settled = 0;
		}
		if (!glob_match(r->glob, h))
			continue;
		settled = 1;
		if (r->deny && deny == NULL)
			deny = r;
		else if (!r->deny && allow == NULL)
			allow = r;
	}
	if (deny != NULL)
		res = host_result(h, POLICY_DENY, deny, "denied by a rule");
	else if (allow != NULL)
		res = host_result(h, POLICY_ALLOW, allow, "allowed by a rule");
	else {
		switch (mode) {
		case POLICY_TRUST:
			res = host_result(h, POLICY_ALLOW, NULL, "no rule; "
			    "trust mode allows it");
			break;
		case POLICY_STRICT:
			why = xprintf("no net-allow rule names it (add "
			    "'net-allow %s' to the policy)", h);
			res = host_result(h, POLICY_DENY, NULL, why);
			free(why);
			break;
		default:
			res = host_result(h, POLICY_ASK, NULL, "no rule "
			    "settles it");
			break;
		}
	}
	free(h);
	return res;
}

void
policy_net_dump(struct policy_net *n, FILE *f)
{
	size_t		 i;
	const char	*src = NULL;

	for (i = 0; n != NULL && i < n->n; i++) {
		if (src == NULL || strcmp(src, n->rules[i].source) != 0) {
			src = n->rules[i].source;
			fprintf(f, "# %s: host rules\n", src);
		}
		fprintf(f, "%s %s\n", n->rules[i].deny ? "net-deny" :
		    "net-allow", n->rules[i].glob);
	}
}
