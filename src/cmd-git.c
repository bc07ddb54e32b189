/*
 * cmd-git.c: placeholder commands, not built yet.
 */
#include "holt.h"

static int
cmd_not_yet(int argc, char **argv)
{
	if (cmd_wants_help(argc, argv)) {
		printf("holt %s: not yet\n", argv[0]);
		return EXIT_OK;
	}
	fprintf(stderr, "holt: %s: not yet\n", argc > 0 ? argv[0] : "holt");
	return EXIT_ERR;
}

const struct cmd_entry cmd_diff_entry = {
	"diff", "-t NAME [--stat] [--json]", "show the session's changes", cmd_not_yet
};

const struct cmd_entry cmd_commit_entry = {
	"commit", "-t NAME -m MESSAGE", "commit the session's changes", cmd_not_yet
};

const struct cmd_entry cmd_pr_entry = {
	"pr", "-t NAME [options]", "push and open a pull request", cmd_not_yet
};

