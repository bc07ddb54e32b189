/*
 * cmd-session.c: placeholder commands, not built yet.
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

const struct cmd_entry cmd_new_entry = {
	"new", "[-d] [-s NAME] [TASK...]", "start a session", cmd_not_yet
};

const struct cmd_entry cmd_attach_entry = {
	"attach", "[-r] [-t NAME]", "attach to a session", cmd_not_yet
};

const struct cmd_entry cmd_ls_entry = {
	"ls", "[--json]", "list sessions", cmd_not_yet
};

const struct cmd_entry cmd_send_entry = {
	"send", "-t NAME MESSAGE", "send a message to the agent", cmd_not_yet
};

const struct cmd_entry cmd_approve_entry = {
	"approve", "-t NAME [--id ID] allow|deny|always", "answer an approval", cmd_not_yet
};

const struct cmd_entry cmd_interrupt_entry = {
	"interrupt", "-t NAME", "interrupt the agent", cmd_not_yet
};

const struct cmd_entry cmd_log_entry = {
	"log", "-t NAME [-f] [--json]", "print the event log", cmd_not_yet
};

const struct cmd_entry cmd_kill_session_entry = {
	"kill-session", "-t NAME [--rm]", "end a session", cmd_not_yet
};

