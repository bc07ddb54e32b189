/*
 * cmd-demo.c: holt demo, holt at work with no API key and no network. It
 * makes a small Python project whose test fails, starts a session named
 * "demo" on it with a scripted model (script: provider, the script is built
 * in) and attaches the full screen: the agent reads the code, runs the
 * tests (they fail), fixes the bug, asks before a command the allowlist
 * does not cover, starts a web server in the sandbox and fetches a page from
 * it, reruns the tests (they pass), and the diff review opens. The session
 * is a real one: detach with C-b d and come back with holt attach -t demo.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "agent.h"
#include "client.h"
#include "session.h"
#include "ui.h"
#include "dynlib-git2.h"

#define DEMO_SESSION "demo"

static const char demo_calc[] =
    "\"\"\"Small arithmetic helpers for the demo shop.\"\"\"\n"
    "\n"
    "\n"
    "def add(a, b):\n"
    "    return a - b\n"
    "\n"
    "\n"
    "def total(prices):\n"
    "    result = 0\n"
    "    for p in prices:\n"
    "        result = add(result, p)\n"
    "    return result\n";

static const char demo_test[] =
    "import unittest\n"
    "\n"
    "from calc import add, total\n"
    "\n"
    "\n"
    "class TestCalc(unittest.TestCase):\n"
    "    def test_add(self):\n"
    "        self.assertEqual(add(2, 3), 5)\n"
    "\n"
    "    def test_total(self):\n"
    "        self.assertEqual(total([1, 2, 3.5]), 6.5)\n"
    "\n"
    "\n"
    "if __name__ == \"__main__\":\n"
    "    unittest.main()\n";

static const char demo_index[] =
    "<!doctype html>\n<title>demo shop</title>\n"
    "<h1>The demo shop is open</h1>\n";

static const char demo_readme[] =
    "# demo shop\n\nRun the tests with `python3 -m unittest -v`.\n";

/* The scripted agent; delays so a person can follow it. */
static const char demo_script[] =
"{ \"chunk_bytes\": 6, \"chunk_delay_ms\": 25, \"turns\": [\n"
"  { \"delay_ms\": 700, \"text\": \"I'll start by looking at the project.\",\n"
"    \"tool_calls\": [ { \"name\": \"list_dir\", \"arguments\": {} } ] },\n"
"  { \"delay_ms\": 700, \"text\": \"A calculator and its tests. Let me read both.\",\n"
"    \"tool_calls\": [ { \"name\": \"read_file\", \"arguments\": { \"path\": \"calc.py\" } },\n"
"                    { \"name\": \"read_file\", \"arguments\": { \"path\": \"test_calc.py\" } } ] },\n"
"  { \"delay_ms\": 700, \"text\": \"Now the tests, to see what fails.\",\n"
"    \"tool_calls\": [ { \"name\": \"run_tests\", \"arguments\": {} } ] },\n"
"  { \"expect\": { \"last_tool_result_contains\": \"TESTS FAILED\" }, \"delay_ms\": 900,\n"
"    \"text\": \"Both tests fail: `add()` subtracts instead of adding, and `total()` is built on it. One character to fix.\",\n"
"    \"tool_calls\": [ { \"name\": \"edit_file\", \"arguments\": { \"path\": \"calc.py\",\n"
"      \"old_string\": \"    return a - b\\n\", \"new_string\": \"    return a + b\\n\" } } ] },\n"
"  { \"delay_ms\": 700, \"text\": \"Let me also check the shop page is served: I'll start a web server in the sandbox.\",\n"
"    \"tool_calls\": [ { \"name\": \"start_service\", \"arguments\": { \"name\": \"web\",\n"
"      \"command\": \"python3 -m http.server 8000\", \"port\": 8000 } } ] },\n"
"  { \"delay_ms\": 900, \"text\": \"Fetching the page. curl is not on the allowlist, so you will be asked.\",\n"
"    \"tool_calls\": [ { \"name\": \"run_command\", \"arguments\": {\n"
"      \"command\": \"sleep 1; curl -s http://127.0.0.1:8000/index.html\" } } ] },\n"
"  { \"delay_ms\": 700, \"text\": \"And the tests again.\",\n"
"    \"tool_calls\": [ { \"name\": \"run_tests\", \"arguments\": {} } ] },\n"
"  { \"delay_ms\": 700,\n"
"    \"text\": \"Done. `add()` returned `a - b`; it now returns `a + b`, and the last test run above says whether both tests pass. The web server runs on port 8000 in the sandbox (`holt sandbox forward` shows it in your browser). The diff opens now for your review; later, `/diff` shows it again.\",\n"
"    \"tool_calls\": [] } ] }\n";

/* The demo's own rule, as "always allow" would save it. */
static const char demo_policy[] =
    "# added for the demo: the shop's web server\n"
    "allow ^python3 -m http\\.server 8000$\n";

static int
demo_write(const char *dir, const char *name, const char *text, char **cause)
{
	char	*path = paths_join(dir, name);
	int	 rc;

	rc = file_write_atomic(path, text, strlen(text), 0644);
	if (rc != 0)
		*cause = xprintf("%s: %s", path, strerror(errno));
	free(path);
	return rc;
}

/* A git repository with the sample project, committed. */
static int
demo_project(const char *dir, char **cause)
{
	git_repository	*repo = NULL;
	git_index	*index = NULL;
	git_signature	*sig = NULL;
	git_oid		 tree_id, commit_id;
	git_tree	*tree = NULL;
	int		 rc = -1;

	file_rm_rf(dir);
	if (file_mkdir_p(dir, 0755) != 0) {
		*cause = xprintf("%s: %s", dir, strerror(errno));
		return -1;
	}
	if (demo_write(dir, "calc.py", demo_calc, cause) != 0 ||
	    demo_write(dir, "test_calc.py", demo_test, cause) != 0 ||
	    demo_write(dir, "index.html", demo_index, cause) != 0 ||
	    demo_write(dir, "README.md", demo_readme, cause) != 0 ||
	    demo_write(dir, ".gitignore", "__pycache__/\n", cause) != 0)
		return -1;
	git_libgit2_init();
	if (git_repository_init(&repo, dir, 0) != 0 ||
	    git_repository_index(&index, repo) != 0 ||
	    git_index_add_bypath(index, "calc.py") != 0 ||
	    git_index_add_bypath(index, "test_calc.py") != 0 ||
	    git_index_add_bypath(index, "index.html") != 0 ||
	    git_index_add_bypath(index, "README.md") != 0 ||
	    git_index_add_bypath(index, ".gitignore") != 0 ||
	    git_index_write(index) != 0 ||
	    git_index_write_tree(&tree_id, index) != 0 ||
	    git_tree_lookup(&tree, repo, &tree_id) != 0 ||
	    git_signature_now(&sig, "holt demo", "demo@holt.invalid") != 0 ||
	    git_commit_create_v(&commit_id, repo, "HEAD", sig, sig, NULL,
	    "The demo shop", tree, 0) != 0) {
		const git_error *e = git_error_last();
		*cause = xprintf("demo project: %s", e != NULL ? e->message :
		    "git failed");
		goto out;
	}
	rc = 0;
out:
	git_signature_free(sig);
	git_tree_free(tree);
	git_index_free(index);
	git_repository_free(repo);
	return rc;
}

static int
demo_kill_old(char **cause)
{
	cJSON	*req, *rep;
	int	 i;

	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "type", "kill-session");
	cJSON_AddStringToObject(req, "session", DEMO_SESSION);
	cJSON_AddBoolToObject(req, "rm", 1);
	if ((rep = client_request(req, 1, cause)) == NULL)
		return -1;
	cJSON_Delete(rep);
	for (i = 0; i < 400 && session_exists(DEMO_SESSION); i++)
		usleep(25000);
	return 0;
}

static int
cmd_demo_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "new", no_argument, NULL, 'n' },
		{ "detached", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct session_new	 sn;
	char			*dir, *project, *script, *model, *cause = NULL;
	char			*name, *sdir;
	cJSON			*req, *rep;
	int			 ch, fresh = 0, detached = 0, rc;

	while ((ch = getopt_long(argc, argv, "dh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'n':
			fresh = 1;
			break;
		case 'd':
			detached = 1;
			break;
		case 'h':
			printf("usage: holt demo [--new] [-d]\n\nSee holt at work "
			    "on a small project, with a scripted agent: no API "
			    "key,\nno network. The session is called 'demo': "
			    "detach with C-b d, come back\nwith 'holt attach -t "
			    "demo'. --new starts it over; -d does not attach.\n");
			return EXIT_OK;
		default:
			fprintf(stderr, "usage: holt demo [--new] [-d]\n");
			return EXIT_USAGE;
		}
	}
	if (session_exists(DEMO_SESSION) && !fresh) {
		if (detached) {
			printf("%s\n", DEMO_SESSION);
			return EXIT_OK;
		}
		rc = tui_main(DEMO_SESSION, 0, NULL, &cause);
		goto done;
	}
	if (session_exists(DEMO_SESSION) && demo_kill_old(&cause) != 0) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		free(cause);
		return EXIT_ERR;
	}

	dir = paths_join(paths_data_dir(), "demo");
	project = paths_join(dir, "shop");
	script = paths_join(dir, "script.json");
	if (file_mkdir_p(dir, 0700) != 0 || demo_project(project, &cause) != 0 ||
	    file_write_atomic(script, demo_script, strlen(demo_script),
	    0600) != 0) {
		if (cause == NULL)
			cause = xprintf("%s: %s", dir, strerror(errno));
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		free(cause);
		free(dir);
		free(project);
		free(script);
		return EXIT_ERR;
	}
	model = xprintf("script:%s", script);
	memset(&sn, 0, sizeof sn);
	sn.name = DEMO_SESSION;
	sn.repo = project;
	sn.model = model;
	sn.mode = "auto";
	sn.net = "off";
	sn.test_command = "python3 -m unittest -v";
	sn.task = "The tests fail: find out why and fix it. Then check that the "
	    "shop page is served.";
	secret_init();
	name = session_create(&sn, &cause);
	free(model);
	free(dir);
	free(project);
	free(script);
	if (name == NULL) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		free(cause);
		return EXIT_SANDBOX;
	}
	sdir = session_dir(name);
	demo_write(sdir, "policy", demo_policy, &cause);
	free(sdir);
	free(cause);
	cause = NULL;

	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "type", "open");
	cJSON_AddStringToObject(req, "session", name);
	if ((rep = client_request(req, 1, &cause)) == NULL) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		free(cause);
		free(name);
		return EXIT_ERR;
	}
	cJSON_Delete(rep);
	if (detached) {
		printf("%s\n", name);
		free(name);
		return EXIT_OK;
	}
	tui_demo_mode(1);
	rc = tui_main(name, 0, NULL, &cause);
	free(name);
done:
	if (rc != 0) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		free(cause);
		return EXIT_ERR;
	}
	printf("The demo session is still there: 'holt attach -t demo' brings "
	    "it back,\n'holt log -t demo' shows what happened, 'holt diff -t "
	    "demo' the change.\n\nTo use a real model, set ANTHROPIC_API_KEY or "
	    "OPENAI_API_KEY (or point base_url\nin holt.conf at a local "
	    "OpenAI-compatible server such as Ollama or llama.cpp),\nthen run "
	    "'holt' in a git repository. See holt(1) and holt.conf(5).\n");
	return EXIT_OK;
}

const struct cmd_entry cmd_demo_entry = {
	"demo", "[--new] [-d]", "see holt at work, no key needed", cmd_demo_exec
};
