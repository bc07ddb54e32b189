/*
 * cmd-e2b.c: holt e2b serve and holt e2b key (holt(1), E2B): a local
 * E2B, so programs written against E2B's SDK run against holt's sandboxes.
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "e2b.h"

static const char e2b_usage[] =
    "serve [--listen ADDR:PORT] [--policy FILE] [--mode strict|auto|"
    "manual|trust] [--name NAME] [--ask-timeout SECONDS] | key";

static void
e2b_print_usage(FILE *f)
{
	fprintf(f, "usage: holt e2b %s\n", e2b_usage);
}

static void
e2b_stop(evutil_socket_t sig, short ev, void *arg)
{
	(void)ev;
	log_info("signal %d: stopping", (int)sig);
	event_base_loopexit(arg, NULL);
}

/* The policy of --policy and --mode: defaults, the user's, then FILE. */
static int
e2b_load_policy(struct e2b_server *srv, const char *file, const char *mode)
{
	char	*user, *cause = NULL;

	if (mode != NULL && policy_mode_parse(mode, &srv->mode) != 0) {
		fprintf(stderr, "holt e2b: --mode '%s': use strict, auto, "
		    "manual or trust\n", mode);
		return -1;
	}
	if (mode == NULL)
		srv->mode = POLICY_STRICT;
	srv->policy = policy_new();
	/* E2B's programs work in the user's home: the write rules too. */
	policy_set_root(srv->policy, E2B_HOME);
	/* The sandbox's /tmp is its own: written as freely as the home. */
	policy_set_tmp(srv->policy, "/tmp");
	user = paths_join(paths_config_dir(), "policy");
	if (policy_load_file(srv->policy, user, "user", &cause) != 0 ||
	    (file != NULL && policy_load_file(srv->policy, file, file,
	    &cause) != 0)) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt e2b: %s\n", cause);
		free(cause);
		free(user);
		return -1;
	}
	free(user);
	/* Kept with each sandbox made, for its proxy's net rules. */
	if (file != NULL && (srv->policy_file = realpath(file, NULL)) == NULL)
		srv->policy_file = xstrdup(file);
	return 0;
}

static int
e2b_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "policy", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "name", required_argument, NULL, 'n' },
		{ "ask-timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char		*listen = E2B_DEFAULT_LISTEN, *pfile = NULL;
	const char		*mode = NULL, *name = "e2b";
	long			 ask_timeout = 600;
	char			*end;
	struct event_base	*base;
	struct e2b_server	*srv;
	struct event		*sint, *sterm;
	char			*cause = NULL;
	int			 ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			listen = optarg;
			break;
		case 'p':
			pfile = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		case 't':
			ask_timeout = strtol(optarg, &end, 10);
			if (*end != '\0' || ask_timeout < 1 ||
			    ask_timeout > 86400) {
				fprintf(stderr, "holt e2b: --ask-timeout '%s': "
				    "seconds, from 1 to 86400\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			e2b_print_usage(stdout);
			return EXIT_OK;
		default:
			e2b_print_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		e2b_print_usage(stderr);
		return EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);
	log_prog = "holt e2b";
	base = event_base_new();
	if ((srv = e2b_server_new(base, listen, &cause)) == NULL) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt e2b: %s\n", cause);
		free(cause);
		event_base_free(base);
		return EXIT_ERR;
	}
	srv->name = name;
	srv->ask_timeout_s = (int)ask_timeout;
	if ((pfile != NULL || mode != NULL) &&
	    e2b_load_policy(srv, pfile, mode) != 0) {
		e2b_server_free(srv);
		event_base_free(base);
		return EXIT_USAGE;
	}
	/* Where holt -L NAME approve answers what the policy asks. */
	if ((srv->mode == POLICY_AUTO || srv->mode == POLICY_MANUAL) &&
	    (srv->control = e2b_control_new(srv, &cause)) == NULL) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt e2b: %s\n", cause);
		free(cause);
		e2b_server_free(srv);
		event_base_free(base);
		return EXIT_ERR;
	}
	sint = evsignal_new(base, SIGINT, e2b_stop, base);
	sterm = evsignal_new(base, SIGTERM, e2b_stop, base);
	evsignal_add(sint, NULL);
	evsignal_add(sterm, NULL);
	event_base_dispatch(base);
	event_free(sint);
	event_free(sterm);
	e2b_server_free(srv);
	event_base_free(base);
	return EXIT_OK;
}

static int
cmd_e2b_exec(int argc, char **argv)
{
	char	*key, *cause = NULL;

	if (argc < 2 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0) {
		e2b_print_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	if (strcmp(argv[1], "serve") == 0)
		return e2b_serve(argc - 1, argv + 1);
	if (strcmp(argv[1], "key") == 0) {
		if (argc > 2 && (strcmp(argv[2], "-h") == 0 ||
		    strcmp(argv[2], "--help") == 0)) {
			printf("usage: holt e2b key\n");
			return EXIT_OK;
		}
		if (argc != 2) {
			e2b_print_usage(stderr);
			return EXIT_USAGE;
		}
		if ((key = e2b_key_get(&cause)) == NULL) {
			utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt e2b: %s\n", cause);
			free(cause);
			return EXIT_ERR;
		}
		printf("%s\n", key);
		free(key);
		return EXIT_OK;
	}
	fprintf(stderr, "holt e2b: '%s': no such subcommand\n", argv[1]);
	e2b_print_usage(stderr);
	return EXIT_USAGE;
}

const struct cmd_entry cmd_e2b_entry = {
	"e2b", e2b_usage, "serve E2B's sandbox API on a local port",
	cmd_e2b_exec
};
