/*
 * cmd-config.c: holt config show, the effective configuration with where
 * each value came from (default, file:line, [repo] section, command line).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "holt.h"

static int
cmd_config_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "repo", required_argument, NULL, 'r' },
		{ "file", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*repo = NULL, *file = NULL;
	char		*cause = NULL, *real;
	int		 ch;

	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			repo = optarg;
			break;
		case 'f':
			file = optarg;
			break;
		case 'h':
			printf("usage: holt config show [--repo PATH] [--file FILE]"
			    "\n\nPrint the effective configuration (holt.conf(5)) "
			    "and, for each value, where\nit comes from: default, "
			    "FILE:LINE, or the [repo] section for --repo.\n");
			return EXIT_OK;
		default:
			fprintf(stderr, "usage: holt config show [--repo PATH]\n");
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || strcmp(argv[optind], "show") != 0) {
		fprintf(stderr, "usage: holt config show [--repo PATH] "
		    "[--file FILE]\n");
		return EXIT_USAGE;
	}
	if (config_load(file, &cause) != 0) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		free(cause);
		return EXIT_USAGE;
	}
	if (repo != NULL) {
		real = realpath(repo, NULL);
		config_select_repo(real != NULL ? real : repo);
		free(real);
	}
	config_dump(stdout);
	return EXIT_OK;
}

const struct cmd_entry cmd_config_entry = {
	"config", "show [--repo PATH]", "show the configuration", cmd_config_exec
};
