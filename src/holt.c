/*
 * holt.c: main() of the holt client and the command table. Global options
 * (-L NAME, -S PATH, -v) come before the command, as in tmux.
 */
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "holt.h"

extern const struct cmd_entry cmd_new_entry, cmd_attach_entry, cmd_ls_entry,
    cmd_send_entry, cmd_approve_entry, cmd_log_entry, cmd_interrupt_entry,
    cmd_compact_entry,
    cmd_kill_session_entry, cmd_run_entry, cmd_diff_entry, cmd_commit_entry,
    cmd_pr_entry, cmd_sandbox_entry, cmd_policy_entry, cmd_server_entry,
    cmd_kill_server_entry, cmd_demo_entry, cmd_config_entry, cmd_e2b_entry,
    cmd_rewind_entry, cmd_fork_entry;
static const struct cmd_entry cmd_version_entry, cmd_help_entry;

const struct cmd_entry *cmd_table[] = {
	&cmd_new_entry,
	&cmd_attach_entry,
	&cmd_ls_entry,
	&cmd_send_entry,
	&cmd_approve_entry,
	&cmd_interrupt_entry,
	&cmd_compact_entry,
	&cmd_log_entry,
	&cmd_kill_session_entry,
	&cmd_rewind_entry,
	&cmd_fork_entry,
	&cmd_run_entry,
	&cmd_diff_entry,
	&cmd_commit_entry,
	&cmd_pr_entry,
	&cmd_sandbox_entry,
	&cmd_e2b_entry,
	&cmd_policy_entry,
	&cmd_config_entry,
	&cmd_server_entry,
	&cmd_kill_server_entry,
	&cmd_demo_entry,
	&cmd_version_entry,
	&cmd_help_entry,
	NULL
};

const struct cmd_entry *
cmd_find(const char *name)
{
	const struct cmd_entry	**ce;

	for (ce = cmd_table; *ce != NULL; ce++) {
		if (strcmp((*ce)->name, name) == 0)
			return *ce;
	}
	return NULL;
}

static void
usage(FILE *f)
{
	const struct cmd_entry	**ce;

	fprintf(f, "usage: holt [-v] [-L NAME | -S PATH] [COMMAND [ARGS...]]\n\n"
	    "Pair with an AI coding agent in a persistent sandbox.\n\n"
	    "commands:\n");
	for (ce = cmd_table; *ce != NULL; ce++)
		fprintf(f, "  %-14s %s\n", (*ce)->name, (*ce)->summary);
	fprintf(f, "\n'holt help COMMAND' or 'holt COMMAND --help' for more; "
	    "see holt(1).\n");
}

static int
cmd_version_exec(int argc, char **argv)
{
	if (argv != NULL && cmd_wants_help(argc, argv)) {
		printf("usage: holt version\n\nPrint holt's version.\n");
		return EXIT_OK;
	}
	printf("holt %s\n", PACKAGE_VERSION);
	return EXIT_OK;
}

static const struct cmd_entry cmd_version_entry = {
	"version", "", "print the version", cmd_version_exec
};

static int
cmd_help_exec(int argc, char **argv)
{
	const struct cmd_entry	*ce;
	char			*sub[] = { NULL, (char *)"--help", NULL };

	if (argc < 2) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		printf("usage: holt help [COMMAND]\n\nList the commands, or "
		    "describe COMMAND (the same as holt COMMAND --help).\n");
		return EXIT_OK;
	}
	if ((ce = cmd_find(argv[1])) == NULL) {
		fprintf(stderr, "holt: unknown command '%s' (holt help lists "
		    "them)\n", argv[1]);
		return EXIT_USAGE;
	}
	sub[0] = (char *)ce->name;
	return ce->exec(2, sub);
}

static const struct cmd_entry cmd_help_entry = {
	"help", "[COMMAND]", "describe a command", cmd_help_exec
};

int
main(int argc, char **argv)
{
	const struct cmd_entry	*ce;
	int			 ch, verbose = 0;

	setlocale(LC_ALL, "");
	signal(SIGPIPE, SIG_IGN);
	switch ((ch = cmd_global_options(argc, argv, &verbose))) {
	case -'V':
		return cmd_version_exec(0, NULL);
	case -'h':
		usage(stdout);
		return EXIT_OK;
	case -'?':
		usage(stderr);
		return EXIT_USAGE;
	}
	argc -= ch;
	argv += ch;
	log_set_verbose(verbose);
	if (cmd_socket_name != NULL && strchr(cmd_socket_name, '/') != NULL) {
		fprintf(stderr, "holt: -L '%s': a name, not a path (use -S)\n",
		    cmd_socket_name);
		return EXIT_USAGE;
	}

	if (argc == 0) {
		/* No command: attach or start a session here (holt(1)). */
		char *cause = NULL;
		if (config_load(NULL, &cause) != 0) {
			utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
			free(cause);
			return EXIT_USAGE;
		}
		ce = cmd_find("new");
		return ce->exec(0, argv);
	}
	if ((ce = cmd_find(argv[0])) == NULL) {
		fprintf(stderr, "holt: unknown command '%s' (holt help lists "
		    "them)\n", argv[0]);
		return EXIT_USAGE;
	}
	/* A broken holt.conf stops every command but these, which must work. */
	if (strcmp(ce->name, "config") != 0 && strcmp(ce->name, "help") != 0 &&
	    strcmp(ce->name, "version") != 0 && !cmd_wants_help(argc, argv)) {
		char *cause = NULL;
		if (config_load(NULL, &cause) != 0) {
			utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
			free(cause);
			return EXIT_USAGE;
		}
	}
	optind = 0;	/* commands parse their own options with getopt */
	return ce->exec(argc, argv);
}
