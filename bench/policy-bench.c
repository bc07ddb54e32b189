/*
 * policy-bench: decisions per second of the command policy for typical
 * command lines, and the time to decide a 100 KB line. The reference beside
 * them is one bare pcre2 match of one rule against the same line, what a
 * policy that did not parse shell would cost. Times are CPU time.
 *
 *	policy-bench [SECONDS-PER-CASE]
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "holt.h"
#include "policy.h"

static double
now(void)
{
	struct timespec	 ts;

	/* CPU time of this process: the budget is per core, and the machine
	   may be busy with other work. */
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Decisions per second over about secs seconds. */
static double
rate(struct policy *p, const char *line, double secs, enum policy_verdict *v)
{
	struct policy_result	*res;
	double			 t0 = now(), t;
	unsigned long		 n = 0, i;

	do {
		for (i = 0; i < 1000; i++) {
			res = policy_check_command(p, POLICY_AUTO, line);
			*v = res->verdict;
			policy_result_free(res);
		}
		n += 1000;
		t = now() - t0;
	} while (t < secs);
	return (double)n / t;
}

static double
bare_rate(const char *line, double secs)
{
	pcre2_code		*re;
	pcre2_match_data	*md;
	int			 err;
	PCRE2_SIZE		 off;
	double			 t0 = now(), t;
	unsigned long		 n = 0, i;

	re = pcre2_compile((PCRE2_SPTR)"^git (status|diff|log|show)(\\s|$)",
	    PCRE2_ZERO_TERMINATED, PCRE2_UTF, &err, &off, NULL);
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	md = pcre2_match_data_create_from_pattern(re, NULL);
	do {
		for (i = 0; i < 10000; i++)
			pcre2_match(re, (PCRE2_SPTR)line, strlen(line), 0, 0, md,
			    NULL);
		n += 10000;
		t = now() - t0;
	} while (t < secs);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return (double)n / t;
}

int
main(int argc, char **argv)
{
	static const char *rules[][2] = {
		{ "allow", "^(ls|cat|head|tail|wc|pwd)(\\s|$)" },
		{ "allow", "^git (status|diff|log|show)(\\s|$)" },
		{ "allow", "^npm (test|ci|run [\\w:-]+)$" },
		{ "allow", "^npm test -- --watch=false$" },
		{ "deny", "^(curl|wget|nc|ssh|scp)(\\s|$)" },
		{ "write-deny", "^tests/" },
	};
	static const char *lines[][2] = {
		{ "git status", "git status" },
		{ "npm test -- --watch=false", "npm test -- --watch=false" },
		{ "5-part pipeline", "cat src/a.c | grep -n TODO | cut -c1-80 | "
		    "head -n 20 | wc -l" },
		{ "git global options", "git --no-pager -C . log --oneline -5" },
		{ "glob argument", "grep -n TODO *.c" },
	};
	struct policy		*p;
	struct policy_result	*res;
	enum policy_verdict	 v;
	struct buf		 b = BUF_INIT;
	char			*cause = NULL;
	double			 secs = argc > 1 ? atof(argv[1]) : 1.0, r, t0, best;
	size_t			 i;
	int			 k;

	if (secs <= 0 || secs > 60)
		secs = 1.0;
	p = policy_new();
	for (i = 0; i < nitems(rules); i++) {
		if (policy_add_rule(p, rules[i][0], rules[i][1], "user",
		    &cause) != 0)
			fatalx("%s", cause);
	}
	r = bare_rate("git status", secs);
	printf("reference: one bare pcre2 match     %10.0f /s\n", r);
	for (i = 0; i < nitems(lines); i++) {
		r = rate(p, lines[i][1], secs, &v);
		printf("decision: %-26s %10.0f /s  (%s)\n", lines[i][0], r,
		    policy_verdict_name(v));
	}

	/* 100 KB: one long argument, and many short ones. */
	buf_adds(&b, "git commit -m '");
	while (b.len < 100 * 1024)
		buf_adds(&b, "fix the parser; ");
	buf_adds(&b, "'");
	best = 1e9;
	for (k = 0; k < 20; k++) {
		t0 = now();
		res = policy_check_command(p, POLICY_AUTO, buf_str(&b));
		r = now() - t0;
		if (r < best)
			best = r;
		policy_result_free(res);
	}
	printf("decision: 100 KB argument         %10.3f ms\n", best * 1e3);
	buf_reset(&b);
	while (b.len < 100 * 1024)
		buf_adds(&b, "ls src/a.c src/b.c | wc -l && ");
	buf_adds(&b, "true");
	best = 1e9;
	for (k = 0; k < 20; k++) {
		t0 = now();
		res = policy_check_command(p, POLICY_AUTO, buf_str(&b));
		r = now() - t0;
		if (r < best)
			best = r;
		policy_result_free(res);
	}
	printf("decision: 100 KB of commands      %10.3f ms  (%s)\n",
	    best * 1e3, "more than 1024 commands: asks");
	buf_release(&b);
	policy_free(p);
	return 0;
}
