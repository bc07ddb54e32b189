/*
 * cmd.c: what every command shares: usage lines and --help.
 */
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
