/*
 * holt-light.c: main() of the holt command. The commands that scripts,
 * shell prompts and status bars run most (ls, send, approve, interrupt,
 * log, kill-session, kill-server, version) only talk to the server or read
 * a log, and run here, in a binary that loads no more than cJSON: a few
 * milliseconds. Everything else is passed, argv unchanged, to holt-full
 * (the whole program: the screen, the agent, the server, git, the
 * sandboxes), which loads libcurl, libgit2 and ncurses, some 30 shared
 * libraries and 10 ms of start-up.
 */
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holt.h"
#include "sandbox-provider.h"

extern const struct cmd_entry cmd_ls_entry, cmd_send_entry, cmd_approve_entry,
    cmd_interrupt_entry, cmd_compact_entry, cmd_log_entry,
    cmd_kill_session_entry,
    cmd_kill_server_entry, cmd_sandbox_light_entry;

static const struct cmd_entry *light_table[] = {
	&cmd_ls_entry,
	&cmd_send_entry,
	&cmd_approve_entry,
	&cmd_interrupt_entry,
	&cmd_compact_entry,
	&cmd_log_entry,
	&cmd_kill_session_entry,
	&cmd_kill_server_entry,
	/* exec, sh, put, get, ls...; create and the lifecycle go to holt-full */
	&cmd_sandbox_light_entry,
	NULL
};

/* holt.c's table is not linked here; cmd.c needs one to exist. */
const struct cmd_entry *cmd_table[] = { NULL };

/*
 * Nor are the providers (sandbox-provider.c): only the local one's light
 * half. A sandbox on another is holt-full's (light_foreign).
 */
const struct sandbox_provider *const sandbox_providers[] = {
	&sandbox_local_light,
	NULL
};

static char	**light_argv;

static void
exec_full(char **argv)
{
	char	*full;

	if ((full = paths_find_helper("holt-full")) == NULL)
		fatalx("holt-full is missing (beside holt, or in %s): "
		    "reinstall holt", HOLT_LIBEXECDIR);
	execv(full, argv);
	fatal("%s", full);
}

static void
light_foreign(const char *spec)
{
	(void)spec;
	fflush(stdout);
	exec_full(light_argv);
}

int
main(int argc, char **argv)
{
	const struct cmd_entry	**ce;
	char			**orig = argv, *cause = NULL;
	int			 ch, verbose = 0;

	/*
	 * Only the character type (UTF-8 widths): loading every category
	 * costs a dozen files on each start, and numbers stay "1.5".
	 */
	light_argv = argv;
	sandbox_foreign = light_foreign;
	setlocale(LC_CTYPE, "");
	signal(SIGPIPE, SIG_IGN);
	opterr = 0;	/* holt-full says what is wrong */
	if ((ch = cmd_global_options(argc, argv, &verbose)) == -'V') {
		printf("holt %s\n", PACKAGE_VERSION);
		return EXIT_OK;
	}
	if (ch < 0)
		exec_full(orig);
	argc -= ch;
	argv += ch;
	if (argc == 0 || (cmd_socket_name != NULL &&
	    strchr(cmd_socket_name, '/') != NULL))
		exec_full(orig);
	if (strcmp(argv[0], "version") == 0 && !cmd_wants_help(argc, argv)) {
		printf("holt %s\n", PACKAGE_VERSION);
		return EXIT_OK;
	}
	for (ce = light_table; *ce != NULL; ce++) {
		if (strcmp((*ce)->name, argv[0]) == 0)
			break;
	}
	if (*ce == NULL)
		exec_full(orig);
	log_set_verbose(verbose);
	if (!cmd_wants_help(argc, argv) && config_load(NULL, &cause) != 0) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		free(cause);
		return EXIT_USAGE;
	}
	optind = 0;
	return (*ce)->exec(argc, argv);
}
