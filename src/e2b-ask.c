/*
 * e2b-ask.c: what holt e2b serve's policy asks a human about, in auto and
 * manual modes: a command (its stream waits, e2b-process.c), a write of
 * the files API (its request waits, e2b-files.c), a host a sandbox's
 * proxy would connect to (the proxy waits on run/NAME, e2b-control.c).
 * Each waits until holt approve answers (e2b-control.c), the ask times out
 * (--ask-timeout), or what waits goes away. "always" widens the rules for
 * the rest of the server's run: the suggested allow rule for a command,
 * the paths for a write, net-allow HOST for a host; rules also go to the
 * server's rules file, which the sandboxes' proxies read.
 */
#include <stdlib.h>
#include <string.h>

#include "e2b.h"

struct e2b_ask {
	uint64_t		 id;
	struct e2b_server	*srv;
	enum e2b_ask_kind	 kind;
	char			*sandbox;
	char			*subject;	/* command line, host, path(s) */
	cJSON			*paths;		/* a write's: strings */
	char			*what;		/* "'ls'", "writing '/x'", ... */
	e2b_ask_cb		 cb;
	void			*arg;
	struct event		*timer;
	struct e2b_ask		*next;
};

void
e2b_ask_free(struct e2b_ask *a)
{
	struct e2b_ask	**ap;

	if (a == NULL)
		return;
	for (ap = &a->srv->asks; *ap != NULL; ap = &(*ap)->next) {
		if (*ap == a) {
			*ap = a->next;
			break;
		}
	}
	event_free(a->timer);
	free(a->sandbox);
	free(a->subject);
	cJSON_Delete(a->paths);
	free(a->what);
	free(a);
}

void
e2b_ask_withdraw(struct e2b_ask *a, const char *why)
{
	if (a == NULL)
		return;
	log_warnx("sandbox '%s': ask %llu withdrawn: %s", a->sandbox,
	    (unsigned long long)a->id, why);
	e2b_ask_free(a);
}

void
e2b_ask_free_all(struct e2b_server *srv)
{
	while (srv->asks != NULL)
		e2b_ask_free(srv->asks);
}

/* Answer: the ask is gone, then what waited is told. */
static void
ask_answer(struct e2b_ask *a, int allow, const char *why)
{
	e2b_ask_cb	 cb = a->cb;
	void		*arg = a->arg;

	e2b_ask_free(a);
	cb(arg, allow, why);
}

static void
ask_expired(evutil_socket_t fd, short ev, void *arg)
{
	struct e2b_ask	*a = arg;
	char		*why;

	(void)fd;
	(void)ev;
	why = xprintf("holt policy: %s needs approval, and none came within "
	    "%d s", a->what, a->srv->ask_timeout_s);
	log_info("ask %llu: %s", (unsigned long long)a->id, why);
	ask_answer(a, 0, why);
	free(why);
}

struct e2b_ask *
e2b_ask_new(struct e2b_server *srv, const char *sandbox,
    enum e2b_ask_kind kind, const char *subject, int port, const char *why,
    e2b_ask_cb cb, void *arg)
{
	struct e2b_ask	*a, **ap;
	struct timeval	 tv = { srv->ask_timeout_s, 0 };
	char		*verb;

	a = xcalloc(1, sizeof *a);
	a->id = ++srv->next_ask;
	a->srv = srv;
	a->kind = kind;
	a->sandbox = xstrdup(sandbox);
	a->subject = xstrdup(subject);
	a->cb = cb;
	a->arg = arg;
	switch (kind) {
	case E2B_ASK_WRITE:
		a->what = xprintf("writing '%s'", subject);
		verb = xprintf("write '%s'", subject);
		break;
	case E2B_ASK_HOST:
		a->what = xprintf("connecting to '%s' (port %d)", subject,
		    port);
		verb = xprintf("connect to '%s' (port %d)", subject, port);
		break;
	default:
		a->what = xprintf("'%s'", subject);
		verb = xprintf("run '%s'", subject);
		break;
	}
	a->timer = evtimer_new(srv->base, ask_expired, a);
	evtimer_add(a->timer, &tv);
	for (ap = &srv->asks; *ap != NULL; ap = &(*ap)->next)
		;
	*ap = a;
	/* Always on standard error: a human has to see it. */
	log_warnx("sandbox '%s' asks to %s (%s): holt -L %s approve -t %s "
	    "--id %llu allow|deny|always", sandbox, verb, why, srv->name,
	    sandbox, (unsigned long long)a->id);
	free(verb);
	return a;
}

void
e2b_ask_set_paths(struct e2b_ask *a, const cJSON *paths)
{
	cJSON_Delete(a->paths);
	a->paths = cJSON_Duplicate(paths, 1);
}

/* A rule for the rest of the run, and for the proxies, in the rules file. */
static void
ask_add_rule(struct e2b_server *srv, const char *action, const char *pattern)
{
	char	*err = NULL;

	if (policy_add_rule(srv->policy, action, pattern, "session",
	    &err) != 0 || (srv->rules_file != NULL &&
	    policy_append_rule(srv->rules_file, action, pattern, &err) != 0)) {
		log_warnx("%s", err);
		free(err);
		return;
	}
	log_info("rule added: %s %s", action, pattern);
}

static void
ask_always(struct e2b_ask *a)
{
	struct e2b_server	*srv = a->srv;
	const cJSON		*p;
	char			*rule;

	switch (a->kind) {
	case E2B_ASK_COMMAND:
		rule = policy_suggest_rule(srv->policy, a->subject, NULL);
		if (rule != NULL)
			ask_add_rule(srv, "allow", rule);
		free(rule);
		break;
	case E2B_ASK_WRITE:
		if (srv->always_writes == NULL)
			srv->always_writes = cJSON_CreateArray();
		cJSON_ArrayForEach(p, a->paths) {
			if (!e2b_ask_always_write(srv, p->valuestring))
				cJSON_AddItemToArray(srv->always_writes,
				    cJSON_CreateString(p->valuestring));
		}
		log_info("allowed until the server stops: writing '%s'",
		    a->subject);
		break;
	case E2B_ASK_HOST:
		ask_add_rule(srv, "net-allow", a->subject);
		break;
	}
}

int
e2b_ask_always_write(struct e2b_server *srv, const char *abs)
{
	const cJSON	*p;

	cJSON_ArrayForEach(p, srv->always_writes) {
		if (strcmp(p->valuestring, abs) == 0)
			return 1;
	}
	return 0;
}

int
e2b_ask_decide(struct e2b_server *srv, const char *sandbox, uint64_t id,
    const char *decision, char **cause)
{
	struct e2b_ask	*a;
	char		*why;

	for (a = srv->asks; a != NULL; a = a->next) {
		if (strcmp(a->sandbox, sandbox) == 0 &&
		    (id == 0 || a->id == id))
			break;
	}
	if (a == NULL) {
		*cause = id == 0 ? xprintf("sandbox '%s': nothing waits for "
		    "approval", sandbox) : xprintf("sandbox '%s': no "
		    "approval %llu waits", sandbox, (unsigned long long)id);
		return -1;
	}
	log_info("ask %llu: %s", (unsigned long long)a->id, decision);
	if (strcmp(decision, "deny") == 0) {
		why = xprintf("holt policy: %s denied by the user", a->what);
		ask_answer(a, 0, why);
		free(why);
		return 0;
	}
	if (strcmp(decision, "always") == 0)
		ask_always(a);
	ask_answer(a, 1, NULL);
	return 0;
}
