/*
 * cmd.c: what every command shares: usage lines and --help.
 */
#include <getopt.h>
#include <string.h>

#include "holt.h"

const char	*cmd_socket_name;
const char	*cmd_socket_path;

void
cmd_usage(const struct cmd_entry *ce, FILE *f)
{
	fprintf(f, "usage: holt %s%s%s\n", ce->name, *ce->usage != '\0' ?
	    " " : "", ce->usage);
}

int
cmd_wants_help(int argc, char **argv)
{
	int	 i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	}
	return 0;
}

/*
 * holt's own options, before the command (-L, -S, -v; -h and -V are left
 * to the caller). Returns the index of the command in argv, or -'h', -'V'
 * or -'?' for those and for anything unknown.
 */
int
cmd_global_options(int argc, char **argv, int *verbose)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int	 ch;

	/* '+': stop at the command name, its options are its own. */
	while ((ch = getopt_long(argc, argv, "+hL:S:vV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'L':
			cmd_socket_name = optarg;
			break;
		case 'S':
			cmd_socket_path = optarg;
			break;
		case 'v':
			(*verbose)++;
			break;
		case 'h':
		case 'V':
			return -ch;
		default:
			return -'?';
		}
	}
	return optind;
}
