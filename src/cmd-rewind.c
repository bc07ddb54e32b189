/*
 * cmd-rewind.c: holt rewind and holt fork (holt(1), REWIND AND FORK).
 * A rewind is the server's to do (it owns the session's log and agent);
 * a fork makes a new session beside the old one, which it only reads.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "client.h"
#include "session.h"

static int
cmd_step(const char *cmd, const char *s, int *step)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v <= 0 || v > 1000000000) {
		fprintf(stderr, "holt %s: step '%s': a step number (holt log "
		    "-t NAME shows them)\n", cmd, s);
		return -1;
	}
	*step = (int)v;
	return 0;
}

static int
cmd_rewind_exec(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "to", required_argument, NULL, 'o' },
		{ "files-only", no_argument, NULL, 'F' },
		{ "conversation-only", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char usage[] = "-t NAME --to STEP [--files-only | "
	    "--conversation-only]";
	const char	*name = NULL;
	int		 ch, step = 0, files = 1, conversation = 1, rc;
	cJSON		*req, *rep;
	char		*id;

	while ((ch = getopt_long(argc, argv, "t:h", lo, NULL)) != -1) {
		switch (ch) {
		case 't':
			name = optarg;
			break;
		case 'o':
			if (cmd_step("rewind", optarg, &step) != 0)
				return EXIT_USAGE;
			break;
		case 'F':
			conversation = 0;
			break;
		case 'C':
			files = 0;
			break;
		case 'h':
			printf("usage: holt rewind %s\n\nPut the session's files "
			    "and conversation back to what they were\nbefore "
			    "STEP (holt log -t NAME lists the steps).\n", usage);
			return EXIT_OK;
		default:
			fprintf(stderr, "usage: holt rewind %s\n", usage);
			return EXIT_USAGE;
		}
	}
	if (name == NULL || step == 0 || optind != argc || (!files &&
	    !conversation)) {
		fprintf(stderr, "holt rewind: %s\nusage: holt rewind %s\n",
		    name == NULL ? "-t NAME is needed" : step == 0 ?
		    "--to STEP is needed" : optind != argc ? "too many "
		    "arguments" : "--files-only and --conversation-only "
		    "exclude each other", usage);
		return EXIT_USAGE;
	}
	req = cJSON_CreateObject();
	/* Resent if the server dies on it: the id makes it happen once. */
	id = xprintf("rw-%llu-%ld", (unsigned long long)json_now_ms(),
	    (long)getpid());
	cJSON_AddStringToObject(req, "id", id);
	free(id);
	cJSON_AddNumberToObject(req, "to_step", step);
	cJSON_AddBoolToObject(req, "files", files);
	cJSON_AddBoolToObject(req, "conversation", conversation);
	if ((rep = cmd_session_request("rewind", name, req, &rc)) == NULL)
		return rc;
	cJSON_Delete(rep);
	return EXIT_OK;
}

const struct cmd_entry cmd_rewind_entry = {
	"rewind", "-t NAME --to STEP [--files-only|--conversation-only]",
	"put files and conversation back to before a step", cmd_rewind_exec
};

static int
cmd_fork_exec(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "at", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char usage[] = "-t NAME [--at STEP] [-s NEWNAME]";
	const char	*name = NULL, *newname = NULL;
	char		*cause = NULL, *made;
	int		 ch, step = 0, rc;

	while ((ch = getopt_long(argc, argv, "t:s:h", lo, NULL)) != -1) {
		switch (ch) {
		case 't':
			name = optarg;
			break;
		case 's':
			newname = optarg;
			break;
		case 'a':
			if (cmd_step("fork", optarg, &step) != 0)
				return EXIT_USAGE;
			break;
		case 'h':
			printf("usage: holt fork %s\n\nA new session with the "
			    "history of NAME up to STEP (default: all of\nit), "
			    "in a new sandbox with the files as they were then; "
			    "prints its name.\n", usage);
			return EXIT_OK;
		default:
			fprintf(stderr, "usage: holt fork %s\n", usage);
			return EXIT_USAGE;
		}
	}
	if (name == NULL || optind != argc) {
		fprintf(stderr, "holt fork: %s\nusage: holt fork %s\n",
		    name == NULL ? "-t NAME is needed" : "too many arguments",
		    usage);
		return EXIT_USAGE;
	}
	if ((made = session_fork(name, step, newname, &cause)) == NULL) {
		rc = strstr(cause, "no such") != NULL || strstr(cause,
		    "no step") != NULL || strstr(cause, "exists") != NULL ||
		    strstr(cause, "a name is") != NULL ? EXIT_USAGE : EXIT_ERR;
		fprintf(stderr, "holt: %s\n", cause);
		free(cause);
		return rc;
	}
	printf("%s\n", made);
	free(made);
	return EXIT_OK;
}

const struct cmd_entry cmd_fork_entry = {
	"fork", "-t NAME [--at STEP] [-s NEWNAME]",
	"a new session from another, in a copy of its sandbox", cmd_fork_exec
};
