/*
 * cmd-policy.c: holt policy check | show | suggest (holt-policy(5)).
 *
 * check judges a command line (or, with --write, a path) the way the agent
 * engine does, and prints each part with its verdict, the rule that decided
 * it and why; the exit status is the verdict (0 allow, 10 ask, 11 deny).
 * show prints the effective rules with their sources; suggest prints the
 * rule "always allow" would propose.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holt.h"
#include "policy.h"

struct cmd_policy_opts {
	enum policy_mode	 mode;
	int			 json;
	int			 no_defaults;
	const char		*write;
	const char		*host;
	const char		*tool;
	const char		*files[16];
	size_t			 nfiles;
	const char		*session;
	const char		*workspace;
	int			 mode_set;
};

static void
cmd_policy_usage(FILE *f)
{
	fprintf(f,
	    "usage: holt policy check [--mode MODE] [--policy FILE] [--session NAME]\n"
	    "                         [--workspace DIR] [--no-defaults] [--json]\n"
	    "                         -- COMMAND ...\n"
	    "       holt policy check [options] --write PATH\n"
	    "       holt policy check [options] --host NAME\n"
	    "       holt policy check [options] --tool NAME\n"
	    "       holt policy show [--policy FILE] [--session NAME] "
	    "[--workspace DIR]\n"
	    "       holt policy suggest [options] -- COMMAND ...\n"
	    "\n"
	    "  --mode MODE      manual, auto, strict or trust (default: holt.conf's mode)\n"
	    "  --policy FILE    rules from FILE instead of the user's policy file\n"
	    "                   (may be given more than once)\n"
	    "  --session NAME   also the rules of session NAME (\"always allow\")\n"
	    "  --workspace DIR  also DIR/" POLICY_WORKSPACE_FILE
	    " (may only tighten)\n"
	    "  --no-defaults    without the built-in rules\n"
	    "  --json           print the decision as JSON\n"
	    "  --write PATH     judge a file write instead of a command\n"
	    "  --host NAME      judge a host the sandbox's proxy is asked for\n"
	    "  --tool NAME      judge an MCP tool, mcp__SERVER__TOOL\n"
	    "\n"
	    "Exit status of check: 0 allow, 10 ask, 11 deny, 2 usage or bad policy.\n");
}

/* Options shared by the subcommands; returns the index of the first operand. */
static int
cmd_policy_parse(int argc, char **argv, struct cmd_policy_opts *o)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "policy", required_argument, NULL, 'p' },
		{ "session", required_argument, NULL, 's' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "no-defaults", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "write", required_argument, NULL, 'W' },
		{ "host", required_argument, NULL, 'H' },
		{ "tool", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int	 ch;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+hm:p:s:w:njW:H:t:", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'm':
			if (policy_mode_parse(optarg, &o->mode) != 0) {
				fprintf(stderr, "holt policy: mode '%s': unknown "
				    "(manual, auto, strict, trust)\n", optarg);
				return -1;
			}
			o->mode_set = 1;
			break;
		case 'p':
			if (o->nfiles == nitems(o->files)) {
				fprintf(stderr, "holt policy: too many --policy "
				    "files\n");
				return -1;
			}
			o->files[o->nfiles++] = optarg;
			break;
		case 's':
			if (*optarg == '\0' || strchr(optarg, '/') != NULL ||
			    strcmp(optarg, "..") == 0 || strcmp(optarg, ".") == 0) {
				fprintf(stderr, "holt policy: session '%s': not a "
				    "session name\n", optarg);
				return -1;
			}
			o->session = optarg;
			break;
		case 'w':
			o->workspace = optarg;
			break;
		case 'n':
			o->no_defaults = 1;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'W':
			o->write = optarg;
			break;
		case 'H':
			o->host = optarg;
			break;
		case 't':
			o->tool = optarg;
			break;
		case 'h':
			cmd_policy_usage(stdout);
			return -2;
		default:
			if (optopt != 0)
				fprintf(stderr, "holt policy: option '-%c': "
				    "unknown or missing its argument\n", optopt);
			else
				fprintf(stderr, "holt policy: option '%s': unknown "
				    "or missing its argument\n", argv[optind - 1]);
			cmd_policy_usage(stderr);
			return -1;
		}
	}
	return optind;
}

/* The rule set: defaults, user or --policy files, session, workspace. */
static struct policy *
cmd_policy_load(struct cmd_policy_opts *o)
{
	struct policy	*p;
	char		*cause = NULL, *path, *dir;
	size_t		 i;
	int		 r = 0;

	p = o->no_defaults ? policy_new_empty() : policy_new();
	if (o->nfiles == 0) {
		path = paths_join(paths_config_dir(), "policy");
		r = policy_load_file(p, path, "user", &cause);
		free(path);
	}
	for (i = 0; r == 0 && i < o->nfiles; i++) {
		if (access(o->files[i], R_OK) != 0) {
			cause = xprintf("policy '%s': %s", o->files[i],
			    strerror(errno));
			r = -1;
		} else
			r = policy_load_file(p, o->files[i], o->files[i], &cause);
	}
	if (r == 0 && o->session != NULL) {
		dir = paths_join(paths_sessions_dir(), o->session);
		path = paths_join(dir, "policy");
		r = policy_load_file(p, path, "session", &cause);
		free(path);
		free(dir);
	}
	if (r == 0 && o->workspace != NULL) {
		path = paths_join(o->workspace, POLICY_WORKSPACE_FILE);
		r = policy_load_file(p, path, "workspace", &cause);
		free(path);
	}
	if (r != 0) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		free(cause);
		policy_free(p);
		return NULL;
	}
	return p;
}

static char *
cmd_policy_join(int argc, char **argv)
{
	struct buf	 b = BUF_INIT;
	int		 i;

	for (i = 0; i < argc; i++) {
		if (i > 0)
			buf_addc(&b, ' ');
		buf_adds(&b, argv[i]);
	}
	return buf_detach(&b, NULL);
}

/* Commands may hold control characters: never send them to a terminal. */
static void
cmd_policy_puts(const char *s, FILE *f)
{
	for (; *s != '\0'; s++) {
		if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '\t')
			fputs("\\t", f);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
}

static void
cmd_policy_print(const struct policy_result *res, enum policy_mode mode,
    FILE *f)
{
	const struct policy_part	*pt;
	size_t				 i;

	fprintf(f, "%s (%s mode): ", policy_verdict_name(res->verdict),
	    policy_mode_name(mode));
	cmd_policy_puts(res->reason, f);
	fputc('\n', f);
	for (i = 0; i < res->nparts; i++) {
		pt = &res->parts[i];
		fprintf(f, "  %-5s  ", policy_verdict_name(pt->verdict));
		cmd_policy_puts(pt->command, f);
		fputs("\n         ", f);
		cmd_policy_puts(pt->reason, f);
		if (pt->rule != NULL) {
			fprintf(f, ": %s ", pt->action);
			cmd_policy_puts(pt->rule, f);
			fprintf(f, "  (%s:%u)", pt->source, pt->line);
		}
		fputc('\n', f);
	}
}

static int
cmd_policy_mode(struct cmd_policy_opts *o)
{
	char	*cause = NULL;

	if (o->mode_set)
		return 0;
	o->mode = POLICY_AUTO;
	if (config_load(NULL, &cause) != 0) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		free(cause);
		return -1;
	}
	if (policy_mode_parse(config_get("mode"), &o->mode) != 0)
		o->mode = POLICY_AUTO;
	return 0;
}

static int
cmd_policy_check(int argc, char **argv)
{
	struct cmd_policy_opts	 o;
	struct policy		*p;
	struct policy_result	*res;
	cJSON			*j;
	char			*line, *s;
	int			 first, rc;

	memset(&o, 0, sizeof o);
	if ((first = cmd_policy_parse(argc, argv, &o)) < 0)
		return first == -2 ? EXIT_OK : EXIT_USAGE;
	if (o.write == NULL && o.host == NULL && o.tool == NULL &&
	    first >= argc) {
		fprintf(stderr, "holt policy check: a command is missing (holt "
		    "policy check -- COMMAND)\n");
		return EXIT_USAGE;
	}
	if ((o.write != NULL || o.host != NULL || o.tool != NULL) &&
	    first < argc) {
		fprintf(stderr, "holt policy check: --%s takes a %s, not a "
		    "command\n", o.write != NULL ? "write" : o.host != NULL ?
		    "host" : "tool", o.write != NULL ? "path" : o.host != NULL ?
		    "host name" : "tool name");
		return EXIT_USAGE;
	}
	if ((o.write != NULL) + (o.host != NULL) + (o.tool != NULL) > 1) {
		fprintf(stderr, "holt policy check: one of --write, --host and "
		    "--tool, not more\n");
		return EXIT_USAGE;
	}
	if (cmd_policy_mode(&o) != 0)
		return EXIT_USAGE;
	if ((p = cmd_policy_load(&o)) == NULL)
		return EXIT_USAGE;
	if (o.write != NULL) {
		line = xstrdup(o.write);
		res = policy_check_write(p, o.mode, line);
	} else if (o.host != NULL) {
		line = xstrdup(o.host);
		res = policy_check_host(p, o.mode, line);
	} else if (o.tool != NULL) {
		line = xstrdup(o.tool);
		res = policy_check_tool(p, o.mode, line);
	} else {
		line = cmd_policy_join(argc - first, argv + first);
		res = policy_check_command(p, o.mode, line);
	}
	if (o.json) {
		j = policy_result_json(res);
		cJSON_AddStringToObject(j, "mode", policy_mode_name(o.mode));
		s = json_print(j);
		printf("%s\n", s);
		free(s);
		cJSON_Delete(j);
	} else
		cmd_policy_print(res, o.mode, stdout);
	switch (res->verdict) {
	case POLICY_ALLOW:
		rc = EXIT_OK;
		break;
	case POLICY_ASK:
		rc = EXIT_POLICY_ASK;
		break;
	default:
		rc = EXIT_POLICY_DENY;
		break;
	}
	policy_result_free(res);
	policy_free(p);
	free(line);
	return rc;
}

static int
cmd_policy_show(int argc, char **argv)
{
	struct cmd_policy_opts	 o;
	struct policy		*p;
	int			 first;

	memset(&o, 0, sizeof o);
	if ((first = cmd_policy_parse(argc, argv, &o)) < 0)
		return first == -2 ? EXIT_OK : EXIT_USAGE;
	if (first < argc) {
		fprintf(stderr, "holt policy show: unexpected '%s'\n",
		    argv[first]);
		return EXIT_USAGE;
	}
	if ((p = cmd_policy_load(&o)) == NULL)
		return EXIT_USAGE;
	policy_dump(p, stdout);
	policy_free(p);
	return EXIT_OK;
}

static int
cmd_policy_suggest(int argc, char **argv)
{
	struct cmd_policy_opts	 o;
	struct policy		*p;
	char			*line, *rule, *wider = NULL;
	int			 first;

	memset(&o, 0, sizeof o);
	if ((first = cmd_policy_parse(argc, argv, &o)) < 0)
		return first == -2 ? EXIT_OK : EXIT_USAGE;
	if (first >= argc) {
		fprintf(stderr, "holt policy suggest: a command is missing\n");
		return EXIT_USAGE;
	}
	if ((p = cmd_policy_load(&o)) == NULL)
		return EXIT_USAGE;
	line = cmd_policy_join(argc - first, argv + first);
	rule = policy_suggest_rule(p, line, &wider);
	if (rule == NULL) {
		fputs("holt policy suggest: no rule can allow '", stderr);
		cmd_policy_puts(line, stderr);
		fputs("' (a part is denied, asked by a rule, cannot be judged, "
		    "or is already allowed)\n", stderr);
		free(line);
		policy_free(p);
		return EXIT_ERR;
	}
	printf("allow %s\n", rule);
	if (wider != NULL)
		printf("allow %s\n", wider);
	free(rule);
	free(wider);
	free(line);
	policy_free(p);
	return EXIT_OK;
}

static int
cmd_policy_exec(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0) {
		cmd_policy_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	if (strcmp(argv[1], "check") == 0)
		return cmd_policy_check(argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return cmd_policy_show(argc - 1, argv + 1);
	if (strcmp(argv[1], "suggest") == 0)
		return cmd_policy_suggest(argc - 1, argv + 1);
	fprintf(stderr, "holt policy: unknown subcommand '%s' (check, show, "
	    "suggest)\n", argv[1]);
	return EXIT_USAGE;
}

const struct cmd_entry cmd_policy_entry = {
	"policy", "check|show|suggest ...", "check commands against the policy",
	cmd_policy_exec
};
