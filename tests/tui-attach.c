/*
 * tui-attach: runs the screen (tui_main) against a server socket, for the
 * screen's tests: tui-attach [-r] [-L NAME | -S PATH] [-T THEME] [-t NAME].
 */
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "ui.h"

int
main(int argc, char **argv)
{
	const char	*session = "default", *theme = NULL;
	char		*cause = NULL;
	int		 ch, readonly = 0;

	setlocale(LC_ALL, "");
	signal(SIGPIPE, SIG_IGN);
	while ((ch = getopt(argc, argv, "L:rS:t:T:")) != -1) {
		switch (ch) {
		case 'L':
			cmd_socket_name = optarg;
			break;
		case 'r':
			readonly = 1;
			break;
		case 'S':
			cmd_socket_path = optarg;
			break;
		case 't':
			session = optarg;
			break;
		case 'T':
			theme = optarg;
			break;
		default:
			fprintf(stderr, "usage: tui-attach [-r] [-L NAME | "
			    "-S PATH] [-T THEME] [-t NAME]\n");
			return EXIT_USAGE;
		}
	}
	if (config_load(NULL, &cause) != 0) {
		fprintf(stderr, "holt: %s\n", cause);
		free(cause);
		cause = NULL;
	}
	if (tui_main(session, readonly, theme, &cause) != 0) {
		fprintf(stderr, "holt: %s\n", cause);
		free(cause);
		return EXIT_ERR;
	}
	return EXIT_OK;
}
