/*
 * Unit tests of the command policy (policy.c, policy-shell.c): the corpus
 * of tests/policy-corpus.txt in every mode, rules files and their errors,
 * sources, "suggest a rule", the parser's limits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "holt.h"
#include "policy.h"

static char *
src_path(const char *rel)
{
	const char	*top = getenv("HOLT_SRC_DIR");

	return xprintf("%s/%s", top != NULL ? top : ".", rel);
}

static struct policy *
corpus_policy(void)
{
	struct policy	*p;
	char		*path, *cause = NULL;

	p = policy_new();
	path = src_path("tests/policy-corpus.policy");
	if (policy_load_file(p, path, "corpus", &cause) != 0)
		fail_msg("%s", cause);
	free(path);
	return p;
}

static enum policy_verdict
verdict_of(char c)
{
	switch (c) {
	case '+':
		return POLICY_ALLOW;
	case '?':
		return POLICY_ASK;
	case '-':
		return POLICY_DENY;
	}
	fail_msg("bad verdict character '%c'", c);
	return POLICY_DENY;
}

/* \n \t \r \\ \xHH */
static char *
unescape(const char *s)
{
	struct buf	 b = BUF_INIT;
	char		 hex[3];

	for (; *s != '\0'; s++) {
		if (*s != '\\' || s[1] == '\0') {
			buf_addc(&b, *s);
			continue;
		}
		s++;
		switch (*s) {
		case 'n': buf_addc(&b, '\n'); break;
		case 't': buf_addc(&b, '\t'); break;
		case 'r': buf_addc(&b, '\r'); break;
		case 'x':
			hex[0] = s[1];
			hex[1] = s[1] != '\0' ? s[2] : '\0';
			hex[2] = '\0';
			buf_addc(&b, (char)strtol(hex, NULL, 16));
			s += 2;
			break;
		default: buf_addc(&b, *s); break;
		}
	}
	return buf_detach(&b, NULL);
}

static void
test_corpus(void **state)
{
	static const enum policy_mode modes[] = {
		POLICY_MANUAL, POLICY_AUTO, POLICY_STRICT, POLICY_TRUST
	};
	struct policy		*p = corpus_policy();
	struct policy_result	*res;
	char			*path, *data, *line, *next, *cmd;
	size_t			 len, m;
	int			 n = 0, bad = 0, esc;

	path = src_path("tests/policy-corpus.txt");
	data = file_read(path, &len, 1024 * 1024);
	assert_non_null(data);
	for (line = data; line != NULL && *line != '\0'; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (*line == '#' || *line == '\0')
			continue;
		esc = *line == '@';
		if (esc)
			line++;
		assert_true(strlen(line) > 5 && line[4] == ' ');
		cmd = esc ? unescape(line + 5) : xstrdup(line + 5);
		for (m = 0; m < 4; m++) {
			res = policy_check_command(p, modes[m], cmd);
			if (res->verdict != verdict_of(line[m])) {
				print_message("# corpus: %s mode: '%s': %s, "
				    "expected %s (%s)\n", policy_mode_name(modes[m]),
				    line + 5, policy_verdict_name(res->verdict),
				    policy_verdict_name(verdict_of(line[m])),
				    res->reason);
				bad++;
			}
			/* Never allowed with a part that is not allowed. */
			if (res->verdict == POLICY_ALLOW) {
				size_t i;

				for (i = 0; i < res->nparts; i++)
					assert_int_equal(res->parts[i].verdict,
					    POLICY_ALLOW);
			}
			policy_result_free(res);
		}
		free(cmd);
		n++;
	}
	free(data);
	free(path);
	policy_free(p);
	assert_true(n >= 200);
	assert_int_equal(bad, 0);
}

static struct policy_result *
check(struct policy *p, const char *cmd)
{
	return policy_check_command(p, POLICY_AUTO, cmd);
}

static void
test_parts_and_rules(void **state)
{
	struct policy		*p = corpus_policy();
	struct policy_result	*res;

	res = check(p, "npm test && curl x | sh");
	assert_int_equal(res->verdict, POLICY_DENY);
	assert_int_equal(res->nparts, 3);
	assert_string_equal(res->parts[0].command, "npm test");
	assert_int_equal(res->parts[0].verdict, POLICY_ALLOW);
	assert_string_equal(res->parts[0].rule, "^npm (test|ci|run [\\w:-]+)$");
	assert_string_equal(res->parts[0].source, "corpus");
	assert_int_equal(res->parts[0].line, 5);
	assert_string_equal(res->parts[1].command, "curl x");
	assert_int_equal(res->parts[1].verdict, POLICY_DENY);
	assert_string_equal(res->parts[1].action, "deny");
	assert_string_equal(res->parts[2].command, "sh");
	assert_int_equal(res->parts[2].verdict, POLICY_ASK);
	assert_null(res->parts[2].rule);
	assert_non_null(strstr(res->reason, "curl x"));
	policy_result_free(res);

	/* Quote removal and re-quoting: what is matched. */
	res = check(p, "git commit -m \"fix the 'parser'\"");
	assert_string_equal(res->parts[0].command,
	    "git commit -m 'fix the '\\''parser'\\'''");
	policy_result_free(res);
	res = check(p, "/usr/bin/../bin/ls -la");
	assert_string_equal(res->parts[0].command, "ls -la");
	assert_int_equal(res->verdict, POLICY_ALLOW);
	policy_result_free(res);

	/* A write is its own part, relative to /workspace. */
	res = check(p, "cat a > /workspace/src/../tests/x");
	assert_int_equal(res->nparts, 2);
	assert_string_equal(res->parts[1].command, "write tests/x");
	assert_true(res->parts[1].write);
	assert_string_equal(res->parts[1].action, "write-deny");
	policy_result_free(res);

	/* Nothing to run. */
	res = check(p, "  # just a comment");
	assert_int_equal(res->verdict, POLICY_ALLOW);
	assert_int_equal(res->nparts, 0);
	policy_result_free(res);
	policy_free(p);
}

/* Global options moved after the subcommand: the form rules see. */
static void
test_global_options(void **state)
{
	static const char *cases[][2] = {
		{ "git -C . push origin", "git push origin -C ." },
		{ "git --no-pager -c color.ui=always log", "git log" },
		{ "git --git-dir=.git --work-tree=. status",
		    "git status --git-dir=.git --work-tree=." },
		{ "git -pC. diff -- a", "git diff -- a -pC." },
		{ "npm --silent -w pkg test", "npm test --silent -w pkg" },
		{ "npm -ws --loglevel=warn run build",
		    "npm run build -ws --loglevel=warn" },
		{ "cargo +nightly -q build", "cargo build +nightly -q" },
		{ "kubectl -n x --context=y get pods",
		    "kubectl get pods -n x --context=y" },
		{ "docker -D --log-level debug ps", "docker ps -D --log-level debug" },
		{ "go -C sub build ./...", "go build ./... -C sub" },
		{ "git status", "git status" },
	};
	static const char *problems[][2] = {
		{ "git --frob push", "unknown option '--frob' before" },
		{ "npm -X test", "unknown option '-X' before" },
		{ "docker -H ssh://h ps", "docker -H can make it run a program" },
		{ "cargo --config x=y build", "cargo --config can make it run" },
		{ "git -C sub status", "git in '/workspace/sub'" },
		{ "git --git-dir=.git -C sub status", "known only at run time" },
		{ "git -C sub/.. status", "known only at run time" },
		{ "git --bare log", "git in '/workspace'" },
		{ "cd a && git log", "git in '/workspace/a'" },
	};
	struct policy		*p = policy_new();
	struct policy_result	*res;
	size_t			 i;

	for (i = 0; i < nitems(cases); i++) {
		res = check(p, cases[i][0]);
		assert_string_equal(res->parts[0].command, cases[i][1]);
		policy_result_free(res);
	}
	for (i = 0; i < nitems(problems); i++) {
		res = check(p, problems[i][0]);
		if (strstr(res->reason, problems[i][1]) == NULL)
			fail_msg("'%s': '%s' has no '%s'", problems[i][0],
			    res->reason, problems[i][1]);
		assert_int_equal(res->verdict, POLICY_ASK);
		policy_result_free(res);
	}
	policy_free(p);
}

static void
test_json(void **state)
{
	struct policy		*p = corpus_policy();
	struct policy_result	*res;
	cJSON			*j, *parts, *p0;

	res = check(p, "ls && curl x");
	j = policy_result_json(res);
	assert_string_equal(json_str(j, "verdict"), "deny");
	parts = cJSON_GetObjectItem(j, "parts");
	assert_int_equal(cJSON_GetArraySize(parts), 2);
	p0 = cJSON_GetArrayItem(parts, 1);
	assert_string_equal(json_str(p0, "command"), "curl x");
	assert_string_equal(json_str(p0, "verdict"), "deny");
	assert_string_equal(json_str(p0, "rule"), "^(curl|wget|nc|ssh|scp)(\\s|$)");
	assert_string_equal(json_str(p0, "source"), "corpus");
	assert_non_null(json_str(p0, "reason"));
	cJSON_Delete(j);
	policy_result_free(res);
	policy_free(p);
}

static void
test_modes(void **state)
{
	enum policy_mode	 m;

	assert_int_equal(policy_mode_parse("strict", &m), 0);
	assert_int_equal(m, POLICY_STRICT);
	assert_string_equal(policy_mode_name(m), "strict");
	assert_int_equal(policy_mode_parse("yolo", &m), -1);
	assert_int_equal(policy_mode_parse(NULL, &m), -1);
	assert_string_equal(policy_verdict_name(POLICY_ASK), "ask");
}

static char *
write_tmp(const char *text)
{
	char	*path = xstrdup("/tmp/holt-policy-test-XXXXXX");
	int	 fd;

	fd = mkstemp(path);
	assert_true(fd != -1);
	assert_int_equal(file_write_all(fd, text, strlen(text)), 0);
	close(fd);
	return path;
}

static void
test_load_errors(void **state)
{
	struct policy		*p = policy_new_empty();
	struct policy_result	*res;
	char			*path, *cause = NULL;

	/* A bad pattern refuses the whole file, naming file and line. */
	path = write_tmp("allow ^ls$\n# c\n\ndeny ^(curl\nallow ^cat\n");
	assert_int_equal(policy_load_file(p, path, "user", &cause), -1);
	assert_non_null(strstr(cause, path));
	assert_non_null(strstr(cause, "line 4"));
	assert_non_null(strstr(cause, "missing closing parenthesis"));
	free(cause);
	cause = NULL;
	res = check(p, "ls");
	assert_int_equal(res->verdict, POLICY_ASK);	/* nothing kept */
	policy_result_free(res);
	unlink(path);
	free(path);

	path = write_tmp("permit ^ls\n");
	assert_int_equal(policy_load_file(p, path, "user", &cause), -1);
	assert_non_null(strstr(cause, "unknown action 'permit'"));
	free(cause);
	cause = NULL;
	unlink(path);
	free(path);

	path = write_tmp("allow\n");
	assert_int_equal(policy_load_file(p, path, "user", &cause), -1);
	assert_non_null(strstr(cause, "needs a pattern"));
	free(cause);
	cause = NULL;
	unlink(path);
	free(path);

	/* A workspace may only tighten. */
	path = write_tmp("deny ^make\nallow ^curl\n");
	assert_int_equal(policy_load_file(p, path, "workspace", &cause), -1);
	assert_non_null(strstr(cause, "only tighten"));
	assert_non_null(strstr(cause, "line 2"));
	free(cause);
	cause = NULL;
	unlink(path);
	free(path);
	path = write_tmp("write-allow ^tests/\n");
	assert_int_equal(policy_load_file(p, path, "workspace", &cause), -1);
	free(cause);
	cause = NULL;
	unlink(path);
	free(path);
	assert_int_equal(policy_add_rule(p, "allow", "^x", "workspace", &cause),
	    -1);
	free(cause);
	cause = NULL;

	/* A missing file is no error; comments after whitespace. */
	assert_int_equal(policy_load_file(p, "/nonexistent/policy", "user",
	    &cause), 0);
	path = write_tmp("allow ^ls$   # list\nwrite-deny ^secret/ # no\n");
	assert_int_equal(policy_load_file(p, path, "user", &cause), 0);
	res = check(p, "ls");
	assert_int_equal(res->verdict, POLICY_ALLOW);
	policy_result_free(res);
	res = policy_check_write(p, POLICY_AUTO, "secret/key");
	assert_int_equal(res->verdict, POLICY_DENY);
	policy_result_free(res);
	unlink(path);
	free(path);
	policy_free(p);
}

static void
test_sources(void **state)
{
	struct policy		*p = policy_new();
	struct policy_result	*res;
	char			*cause = NULL, *path;
	FILE			*f;
	char			 buf[4096];
	size_t			 n;

	/* Strictest across sources: a later allow cannot undo a deny. */
	assert_int_equal(policy_add_rule(p, "deny", "^cat secret", "workspace",
	    &cause), 0);
	assert_int_equal(policy_add_rule(p, "allow", "^cat", "session",
	    &cause), 0);
	res = check(p, "cat secret.txt");
	assert_int_equal(res->verdict, POLICY_DENY);
	assert_string_equal(res->parts[0].source, "workspace");
	policy_result_free(res);
	res = check(p, "cat other");
	assert_int_equal(res->verdict, POLICY_ALLOW);
	policy_result_free(res);
	assert_int_equal(policy_add_rule(p, "frob", "^x", "session", &cause),
	    -1);
	free(cause);
	cause = NULL;
	assert_int_equal(policy_add_rule(p, "allow", "(", "session", &cause),
	    -1);
	assert_non_null(strstr(cause, "bad pattern"));
	free(cause);
	cause = NULL;

	/* policy_dump names sources and lines. */
	f = tmpfile();
	policy_dump(p, f);
	rewind(f);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "# default: built in, read-only"));
	assert_non_null(strstr(buf, "deny        ^cat secret    # workspace:1"));
	assert_non_null(strstr(buf, "# session:1"));

	/* policy_append_rule checks, then appends. */
	path = xstrdup("/tmp/holt-policy-append-XXXXXX");
	close(mkstemp(path));
	assert_int_equal(policy_append_rule(path, "allow", "^npm run x$",
	    &cause), 0);
	assert_int_equal(policy_append_rule(path, "allow", "(", &cause), -1);
	free(cause);
	cause = NULL;
	assert_int_equal(policy_load_file(p, path, "session", &cause), 0);
	res = check(p, "npm run x");
	assert_int_equal(res->verdict, POLICY_ALLOW);
	policy_result_free(res);
	unlink(path);
	free(path);
	policy_free(p);
}

static void
test_write_api(void **state)
{
	struct policy		*p = corpus_policy();
	struct policy_result	*res;

	res = policy_check_write(p, POLICY_AUTO, "src/main.c");
	assert_int_equal(res->verdict, POLICY_ALLOW);
	assert_string_equal(res->parts[0].command, "write src/main.c");
	policy_result_free(res);
	res = policy_check_write(p, POLICY_MANUAL, "src/main.c");
	assert_int_equal(res->verdict, POLICY_ASK);
	policy_result_free(res);
	res = policy_check_write(p, POLICY_TRUST, "tests/a.test.js");
	assert_int_equal(res->verdict, POLICY_DENY);
	policy_result_free(res);
	res = policy_check_write(p, POLICY_AUTO, "src/../../etc/passwd");
	assert_int_equal(res->verdict, POLICY_ASK);
	policy_result_free(res);
	res = policy_check_write(p, POLICY_STRICT, "/etc/passwd");
	assert_int_equal(res->verdict, POLICY_DENY);
	policy_result_free(res);
	res = policy_check_write(p, POLICY_AUTO, ".git/config");
	assert_int_equal(res->verdict, POLICY_ASK);
	policy_result_free(res);
	res = policy_check_write(p, POLICY_AUTO, "package.json");
	assert_int_equal(res->verdict, POLICY_ASK);
	policy_result_free(res);
	res = policy_check_write(p, POLICY_AUTO, "");
	assert_int_equal(res->verdict, POLICY_ASK);
	policy_result_free(res);
	policy_free(p);
}

/* The verdict on line, started in cwd; the part n's command, if asked. */
static void
expect_in(struct policy *p, enum policy_mode mode, const char *cwd,
    const char *line, enum policy_verdict v, size_t n, const char *part)
{
	struct policy_result	*res;

	res = policy_check_command_in(p, mode, cwd, line);
	assert_int_equal(res->verdict, v);
	if (part != NULL) {
		assert_true(res->nparts > n);
		assert_non_null(strstr(res->parts[n].command, part));
	}
	policy_result_free(res);
}

/* E2B's sandboxes: write rules about /home/user, commands started there. */
static void
test_root(void **state)
{
	struct policy		*p = corpus_policy();
	struct policy_result	*res;

	policy_set_root(p, "/home/user/");
	res = policy_check_write(p, POLICY_AUTO, "/home/user/tests/a.js");
	assert_int_equal(res->verdict, POLICY_DENY);
	assert_string_equal(res->parts[0].command, "write tests/a.js");
	policy_result_free(res);
	expect_in(p, POLICY_AUTO, "/home/user", "echo x >tests/a",
	    POLICY_DENY, 1, "write tests/a");
	expect_in(p, POLICY_AUTO, "/home/user/repo", "echo x >tests/a",
	    POLICY_ALLOW, 1, "write repo/tests/a");
	expect_in(p, POLICY_AUTO, "/home/user/repo",
	    "cd .. && echo x >tests/a", POLICY_DENY, 0, NULL);
	expect_in(p, POLICY_AUTO, NULL, "echo x >~/a", POLICY_ALLOW, 1,
	    "write a");
	res = policy_check_command_in(p, POLICY_STRICT, NULL,
	    "echo x >/workspace/a");
	assert_int_equal(res->verdict, POLICY_DENY);
	assert_non_null(strstr(res->reason, "outside /home/user"));
	policy_result_free(res);
	policy_free(p);
}

/* The sandbox's own /tmp: commands and the files API judged alike. */
static void
test_tmp(void **state)
{
	struct policy		*p = policy_new();
	struct policy_result	*res;
	char			*cause = NULL;

	policy_set_root(p, "/home/user");
	expect_in(p, POLICY_STRICT, NULL, "echo x >/tmp/f", POLICY_DENY, 1,
	    "write /tmp/f");
	policy_set_tmp(p, "/tmp");
	expect_in(p, POLICY_STRICT, NULL, "echo x >/tmp/f", POLICY_ALLOW, 1,
	    "write /tmp/f");
	expect_in(p, POLICY_STRICT, "/tmp", "echo x >f", POLICY_ALLOW, 1,
	    "write /tmp/f");
	expect_in(p, POLICY_STRICT, NULL, "rm -rf /tmp", POLICY_DENY, 0, NULL);
	expect_in(p, POLICY_AUTO, NULL, "echo x >/tmpx/f", POLICY_ASK, 1,
	    "write /tmpx/f");
	res = policy_check_write(p, POLICY_STRICT, "/tmp/a/b");
	assert_int_equal(res->verdict, POLICY_ALLOW);
	policy_result_free(res);
	res = policy_check_write(p, POLICY_MANUAL, "/tmp/a/b");
	assert_int_equal(res->verdict, POLICY_ASK);
	policy_result_free(res);
	assert_int_equal(policy_add_rule(p, "write-deny", "^/tmp/secret",
	    "user", &cause), 0);
	expect_in(p, POLICY_AUTO, NULL, "echo x >/tmp/secret", POLICY_DENY, 1,
	    "write /tmp/secret");
	res = policy_check_write(p, POLICY_AUTO, "/tmp/secret");
	assert_int_equal(res->verdict, POLICY_DENY);
	policy_result_free(res);
	policy_free(p);
}

static void
test_suggest(void **state)
{
	struct policy	*p = corpus_policy();
	char		*r, *w = NULL;

	r = policy_suggest_rule(p, "npm run test:unit --silent", &w);
	assert_string_equal(r, "^npm run test:unit --silent$");
	free(r);
	free(w);
	r = policy_suggest_rule(p, "npm install", &w);
	assert_string_equal(r, "^npm install$");
	assert_string_equal(w, "^npm install(\\s|$)");
	free(r);
	free(w);
	r = policy_suggest_rule(p, "cargo run build:x", &w);
	assert_string_equal(r, "^cargo run build:x$");
	assert_string_equal(w, "^cargo run [\\w:-]+$");
	free(r);
	free(w);
	/* Only the parts that need it; the allowed ones are not in it. */
	r = policy_suggest_rule(p, "ls && cargo build && pytest -q", &w);
	assert_string_equal(r, "^(?:cargo build|pytest -q)$");
	free(r);
	free(w);
	/* Never for a denied part, an asked one, or one not judgeable. */
	assert_null(policy_suggest_rule(p, "cargo build && curl x", &w));
	assert_null(w);
	assert_null(policy_suggest_rule(p, "git push", &w));
	assert_null(policy_suggest_rule(p, "eval x", &w));
	assert_null(policy_suggest_rule(p, "make > ../x", &w));
	assert_null(policy_suggest_rule(p, "ls '", &w));
	assert_null(policy_suggest_rule(p, "ls", &w));	/* already allowed */
	assert_null(policy_suggest_rule(p, "сurl x", &w));
	/* A suggested rule, added, allows the command and nothing denied. */
	{
		struct policy_result	*res;
		char			*cause = NULL;

		r = policy_suggest_rule(p, "python3 -m pytest tests/x.py", &w);
		assert_non_null(r);
		assert_int_equal(policy_add_rule(p, "allow", r, "session",
		    &cause), 0);
		res = check(p, "python3 -m pytest tests/x.py");
		assert_int_equal(res->verdict, POLICY_ALLOW);
		policy_result_free(res);
		res = check(p, "python3 -m pytest tests/x.py; curl x");
		assert_int_equal(res->verdict, POLICY_DENY);
		policy_result_free(res);
		free(r);
		free(w);
	}
	policy_free(p);
}

static void
test_limits(void **state)
{
	struct policy		*p = corpus_policy();
	struct policy_result	*res;
	struct buf		 b = BUF_INIT;
	uint64_t		 t0;
	int			 i;

	/* Deep nesting: bounded, an ask with a reason, no stack overflow. */
	for (i = 0; i < 5000; i++)
		buf_adds(&b, "( ");
	buf_adds(&b, "ls");
	for (i = 0; i < 5000; i++)
		buf_adds(&b, " )");
	res = check(p, buf_str(&b));
	assert_int_equal(res->verdict, POLICY_ASK);
	assert_non_null(strstr(res->reason, "nesting deeper"));
	policy_result_free(res);
	buf_reset(&b);
	for (i = 0; i < 5000; i++)
		buf_adds(&b, "$(");
	for (i = 0; i < 5000; i++)
		buf_addc(&b, ')');
	res = check(p, buf_str(&b));
	assert_int_equal(res->verdict, POLICY_ASK);
	policy_result_free(res);
	buf_reset(&b);
	for (i = 0; i < 3000; i++)
		buf_adds(&b, "\"${x:-");
	res = check(p, buf_str(&b));
	assert_int_equal(res->verdict, POLICY_ASK);
	policy_result_free(res);
	buf_reset(&b);
	/* Wrappers inside wrappers: bounded too. */
	buf_reset(&b);
	for (i = 0; i < 200; i++)
		buf_adds(&b, "env nice timeout 5 ");
	buf_adds(&b, "ls");
	res = check(p, buf_str(&b));
	assert_int_equal(res->verdict, POLICY_ASK);
	assert_non_null(strstr(res->reason, "too deep"));
	policy_result_free(res);
	res = check(p, "sh -c \"bash -c 'sh -c \\\"curl x\\\"'\"");
	assert_int_equal(res->verdict, POLICY_DENY);
	policy_result_free(res);

	/* A 100 KB argument: decided, and fast. */
	buf_reset(&b);
	buf_adds(&b, "cat '");
	for (i = 0; i < 100 * 1024; i++)
		buf_addc(&b, 'a' + i % 26);
	buf_adds(&b, "' && curl x");
	t0 = mono_ms();
	res = check(p, buf_str(&b));
	assert_true(mono_ms() - t0 < 200);
	assert_int_equal(res->verdict, POLICY_DENY);
	policy_result_free(res);

	/* Too many parts (writes count): asked, and cheap. */
	buf_reset(&b);
	buf_adds(&b, "ls");
	for (i = 0; i < 200000; i++)
		buf_adds(&b, " >a");
	t0 = mono_ms();
	res = check(p, buf_str(&b));
	assert_true(mono_ms() - t0 < 2000);
	assert_int_equal(res->verdict, POLICY_ASK);
	assert_int_equal(res->nparts, POLICY_MAX_PARTS);
	assert_non_null(strstr(res->reason, "more than 4096 parts"));
	policy_result_free(res);

	/* Too many commands, too long a line: asked, not allowed. */
	buf_reset(&b);
	for (i = 0; i < POLICY_SHELL_MAX_CMDS + 1; i++)
		buf_adds(&b, "ls;");
	res = check(p, buf_str(&b));
	assert_int_equal(res->verdict, POLICY_ASK);
	policy_result_free(res);
	buf_reset(&b);
	buf_adds(&b, "ls ");
	while (b.len <= POLICY_SHELL_MAX_LEN)
		buf_adds(&b, "aaaaaaaaaaaaaaa ");
	res = check(p, buf_str(&b));
	assert_int_equal(res->verdict, POLICY_ASK);
	policy_result_free(res);
	buf_release(&b);
	policy_free(p);
}

static void
test_parser(void **state)
{
	struct policy_parse	*pp;
	const char		*s;

	s = "A=1 B=\"x y\" cmd 'a'\"b\"\\c $HOME ${x} $(inner) *.c {a,b} ~/x "
	    "2>&1 >>out <in <<<str";
	pp = policy_shell_parse(s, strlen(s));
	assert_null(pp->error);
	assert_int_equal(pp->ncmds, 2);
	assert_int_equal(pp->cmds[0].nassigns, 2);
	assert_string_equal(pp->cmds[0].assigns[1].text, "B=x y");
	assert_int_equal(pp->cmds[0].nwords, 8);
	assert_string_equal(pp->cmds[0].words[0].text, "cmd");
	assert_string_equal(pp->cmds[0].words[1].text, "abc");
	assert_true(pp->cmds[0].words[1].flags & PW_QUOTED);
	assert_true(pp->cmds[0].words[2].flags & PW_VAR);
	assert_true(pp->cmds[0].words[4].flags & PW_SUBST);
	assert_true(pp->cmds[0].words[5].flags & PW_GLOB);
	assert_true(pp->cmds[0].words[6].flags & PW_BRACE);
	assert_true(pp->cmds[0].words[7].flags & PW_TILDE);
	assert_int_equal(pp->cmds[0].nredirs, 4);
	assert_int_equal(pp->cmds[0].redirs[0].fd, 2);
	assert_int_equal(pp->cmds[0].redirs[0].op, PR_DUP_OUT);
	assert_int_equal(pp->cmds[0].redirs[1].op, PR_APPEND);
	assert_int_equal(pp->cmds[0].redirs[3].op, PR_HERESTRING);
	assert_string_equal(pp->cmds[1].words[0].text, "inner");
	assert_true(pp->cmds[1].flags & PC_F_SUBST);
	policy_shell_free(pp);

	s = "cat <<EOF; echo `b \\`c\\``\n$(d)\nEOF\n";
	pp = policy_shell_parse(s, strlen(s));
	assert_null(pp->error);
	assert_int_equal(pp->ncmds, 5);
	assert_string_equal(pp->cmds[2].words[0].text, "b");
	assert_string_equal(pp->cmds[3].words[0].text, "c");
	assert_string_equal(pp->cmds[4].words[0].text, "d");
	policy_shell_free(pp);

	s = "x\0y";
	pp = policy_shell_parse(s, 3);
	assert_non_null(pp->error);
	policy_shell_free(pp);
	pp = policy_shell_parse("echo 'abc", 9);
	assert_non_null(strstr(pp->error, "unterminated single quote"));
	policy_shell_free(pp);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_parts_and_rules),
		cmocka_unit_test(test_global_options),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_sources),
		cmocka_unit_test(test_write_api),
		cmocka_unit_test(test_root),
		cmocka_unit_test(test_tmp),
		cmocka_unit_test(test_suggest),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_parser),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
