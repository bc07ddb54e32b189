/*
 * cmd-server.c: holt server and holt kill-server.
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "server.h"

static int
cmd_server_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int	 ch, foreground = 0, fd;
	char	*cause = NULL;

	while ((ch = getopt_long(argc, argv, "fh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			foreground = 1;
			break;
		case 'h':
			printf("usage: holt server [-f]\n\n"
			    "Run the server that owns the sessions. Any holt "
			    "command starts it when needed;\n-f keeps it in the "
			    "foreground (its log goes beside its socket).\n");
			return EXIT_OK;
		default:
			fprintf(stderr, "usage: holt server [-f]\n");
			return EXIT_USAGE;
		}
	}
	if (cmd_wants_help(argc, argv))
		return EXIT_OK;
	if (foreground)
		return server_main(1);
	/* In the background: the same as any client starting it. */
	if ((fd = client_connect(1, &cause)) == -1) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		free(cause);
		return EXIT_ERR;
	}
	close(fd);
	return EXIT_OK;
}

const struct cmd_entry cmd_server_entry = {
	"server", "[-f]", "run the server", cmd_server_exec
};
