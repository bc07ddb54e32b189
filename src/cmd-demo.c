/*
 * cmd-demo.c: placeholder commands, not built yet.
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

const struct cmd_entry cmd_demo_entry = {
	"demo", "", "see holt at work, no key needed", cmd_not_yet
};

