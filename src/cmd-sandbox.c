/*
 * cmd-sandbox.c: the holt sandbox subcommands that start or stop a
 * sandbox's processes: create, pause, resume, stop, start, rm (holt(1),
 * SANDBOXES). The others, which only talk to a running sandbox, are in
 * cmd-sandbox-light.c.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "sandbox.h"
#include "sandbox-provider.h"
#include "cmd-sandbox.h"
#include "ui.h"

static int
parse_size(const char *s, long long *out)
{
	char		*end;
	long long	 v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || v < 0)
		return -1;
	switch (*end) {
	case 'k': case 'K':
		v *= 1024;
		end++;
		break;
	case 'm': case 'M':
		v *= 1024 * 1024;
		end++;
		break;
	case 'g': case 'G':
		v *= 1024LL * 1024 * 1024;
		end++;
		break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0')
		return -1;
	*out = v;
	return 0;
}

static int
sub_create(int argc, char **argv)
{
	static const struct opt opts[] = { { "name", 1 }, { "net", 1 },
	    { "memory", 1 }, { "pids", 1 }, { "image", 1 },
	    { "idle-pause", 1 }, { "provider", 1 } };
	struct args		 a;
	struct sandbox_opts	 o;
	struct sandbox		*sb;
	char			*cause, *end, *image = NULL;
	const char		*arg;
	long			 n;
	struct stat		 st;

	if (args_parse("create", argc, argv, opts, nitems(opts), 0, 0, &a) != 0
	    || a.ncmd != 0)
		return bad_usage("create");
	sandbox_opts_config(&o);	/* then the flags, as for a session */
	o.name = a.val[0];
	o.provider = a.val[6];
	if (o.provider != NULL &&
	    sandbox_provider_parse(o.provider, &arg, &cause) == NULL) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: --%s\n", cause);
		free(cause);
		return EXIT_USAGE;
	}
	if (a.val[1] != NULL && sandbox_net_parse(a.val[1], &o.net) != 0) {
		fprintf(stderr, "holt: --net '%s': use off, on or policy\n",
		    a.val[1]);
		return EXIT_USAGE;
	}
	if (a.val[2] != NULL && (parse_size(a.val[2], &o.memory) != 0 ||
	    (o.memory != 0 && o.memory < 16 * 1024 * 1024))) {
		fprintf(stderr, "holt: --memory '%s': a size such as 512M or "
		    "2G, at least 16M\n", a.val[2]);
		return EXIT_USAGE;
	}
	if (a.val[3] != NULL) {
		n = strtol(a.val[3], &end, 10);
		if (*end != '\0' || n < 8 || n > 1000000) {
			fprintf(stderr, "holt: --pids '%s': a number from 8 "
			    "up\n", a.val[3]);
			return EXIT_USAGE;
		}
		o.pids = (int)n;
	}
	if (a.val[5] != NULL &&
	    sandbox_duration_parse(a.val[5], &o.idle_pause_ms) != 0) {
		fprintf(stderr, "holt: --idle-pause '%s': a duration such as "
		    "30m, 90s or 2h, or 0 for never\n", a.val[5]);
		return EXIT_USAGE;
	}
	if (a.val[4] != NULL && strcmp(a.val[4], "host") != 0) {
		if ((image = realpath(a.val[4], NULL)) == NULL ||
		    stat(image, &st) != 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "holt: --image '%s': %s\n", a.val[4],
			    image == NULL ? strerror(errno) :
			    "not a directory (a root filesystem, such as one "
			    "mmdebstrap made)");
			free(image);
			return EXIT_USAGE;
		}
		if (geteuid() != 0) {
			fprintf(stderr, "holt: --image '%s': images need holt "
			    "running as root (see holt(1), SANDBOXES)\n",
			    a.val[4]);
			free(image);
			return EXIT_USAGE;
		}
		o.image = image;
	}
	sb = sandbox_create(&o, &cause);
	free(image);
	if (sb == NULL) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: %s\n", cause);
		n = strncmp(cause, "name '", 6) == 0 ? EXIT_USAGE :
		    EXIT_SANDBOX;
		free(cause);
		return (int)n;
	}
	printf("%s\n", sandbox_id(sb));
	sandbox_free(sb);
	return EXIT_OK;
}

static int
sub_lifecycle(int argc, char **argv)
{
	static const struct opt opts[] = { { "forget", 0 } };
	struct args	 a;
	struct sandbox	*sb;
	char		*cause = NULL;
	int		 rc, r;
	const char	*sub = argv[0];

	if (args_parse(sub, argc, argv, opts, nitems(opts), 1, 0, &a) != 0 ||
	    a.npos != 1 || a.ncmd != 0 ||
	    (a.val[0] != NULL && strcmp(sub, "rm") != 0))
		return bad_usage(sub);
	/* A damaged meta.json must not keep its processes running. */
	if (strcmp(sub, "stop") == 0 || strcmp(sub, "rm") == 0)
		sb = sandbox_open_damaged(a.pos[0], &cause);
	else
		sb = NULL;
	if (sb != NULL && cause != NULL) {
		utf8_vis_print(stderr, UTF8_VIS_TEXT, "holt: warning: %s\n",
		    cause);
		free(cause);
		cause = NULL;
	}
	if (sb == NULL) {
		free(cause);
		cause = NULL;
		if ((sb = open_or_fail(a.pos[0], &rc)) == NULL)
			return rc;
	}
	if (strcmp(sub, "pause") == 0)
		r = sandbox_pause(sb, &cause);
	else if (strcmp(sub, "resume") == 0)
		r = sandbox_resume(sb, &cause);
	else if (strcmp(sub, "stop") == 0)
		r = sandbox_stop(sb, &cause);
	else if (strcmp(sub, "start") == 0)
		r = sandbox_start(sb, &cause);
	else if (a.val[0] != NULL)
		r = sandbox_forget(sb, &cause);
	else
		r = sandbox_rm(sb, &cause);
	if (r == 0 && strcmp(sub, "rm") != 0)
		sandbox_touch(sb);
	sandbox_free(sb);
	if (r != 0) {
		rc = fail(cause != NULL ? cause : "failed", EXIT_SANDBOX);
		free(cause);
		return rc;
	}
	return EXIT_OK;
}

/* took_ms: how long taking it took in this process (< 0: not taken now). */
static void
checkpoint_print(const struct checkpoint_info *ci, int json, double took_ms)
{
	cJSON	*o;
	char	*s;

	if (!json) {
		printf("%lld %s %llu files %llu changed %llu bytes\n", ci->id,
		    ci->commit, (unsigned long long)ci->files,
		    (unsigned long long)ci->changed,
		    (unsigned long long)ci->bytes);
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "checkpoint", (double)ci->id);
	cJSON_AddStringToObject(o, "commit", ci->commit);
	cJSON_AddNumberToObject(o, "time_ms", (double)ci->time_ms);
	cJSON_AddNumberToObject(o, "files", (double)ci->files);
	cJSON_AddNumberToObject(o, "changed", (double)ci->changed);
	cJSON_AddNumberToObject(o, "bytes", (double)ci->bytes);
	if (took_ms >= 0)
		cJSON_AddNumberToObject(o, "took_ms", took_ms);
	s = json_print(o);
	printf("%s\n", s);
	free(s);
	cJSON_Delete(o);
}

static int
sub_checkpoint(int argc, char **argv)
{
	static const struct opt opts[] = { { "list", 0 }, { "json", 0 } };
	struct args		 a;
	struct sandbox		*sb;
	struct checkpoint_store	*st;
	struct checkpoint_info	 ci, *l;
	size_t			 n, i;
	uint64_t		 t0;
	char			*cause = NULL;
	int			 rc;

	if (args_parse("checkpoint", argc, argv, opts, nitems(opts), 1, 0, &a)
	    != 0 || a.npos != 1 || a.ncmd != 0)
		return bad_usage("checkpoint");
	if ((sb = open_or_fail(a.pos[0], &rc)) == NULL)
		return rc;
	if (a.val[0] != NULL) {
		if ((st = checkpoint_store_open(sandbox_dir(sb), &cause))
		    == NULL)
			goto fail;
		l = checkpoint_list(st, &n);
		for (i = 0; i < n; i++)
			checkpoint_print(&l[i], a.val[1] != NULL, -1);
		free(l);
		checkpoint_store_close(st);
	} else {
		t0 = mono_us();
		if (sandbox_checkpoint(sb, &ci, &cause) != 0)
			goto fail;
		checkpoint_print(&ci, a.val[1] != NULL,
		    (double)(mono_us() - t0) / 1000);
	}
	sandbox_free(sb);
	return EXIT_OK;
fail:
	rc = fail(cause, EXIT_SANDBOX);
	free(cause);
	sandbox_free(sb);
	return rc;
}

static int
parse_checkpoint(const char *s, long long *id)
{
	char	*end;

	errno = 0;
	*id = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || *id <= 0) {
		fprintf(stderr, "holt: checkpoint '%s': a checkpoint number "
		    "(holt sandbox checkpoint ID --list)\n", s);
		return -1;
	}
	return 0;
}

static int
sub_restore(int argc, char **argv)
{
	struct args	 a;
	struct sandbox	*sb;
	char		*cause = NULL;
	long long	 id;
	int		 rc;

	if (args_parse("restore", argc, argv, NULL, 0, 2, 0, &a) != 0 ||
	    a.npos != 2 || a.ncmd != 0)
		return bad_usage("restore");
	if (parse_checkpoint(a.pos[1], &id) != 0)
		return EXIT_USAGE;
	if ((sb = open_or_fail(a.pos[0], &rc)) == NULL)
		return rc;
	if (sandbox_recover(sb, NULL, NULL, &cause) != 0 ||
	    sandbox_restore(sb, id, NULL, NULL, NULL, &cause) != 0) {
		rc = fail(cause, strstr(cause, "no such checkpoint") != NULL ?
		    EXIT_USAGE : EXIT_SANDBOX);
		free(cause);
		sandbox_free(sb);
		return rc;
	}
	sandbox_free(sb);
	return EXIT_OK;
}

static int
sub_fork(int argc, char **argv)
{
	static const struct opt opts[] = { { "name", 1 }, { "at", 1 } };
	struct args	 a;
	struct sandbox	*sb, *nsb;
	char		*cause = NULL;
	long long	 at = 0;
	int		 rc;

	if (args_parse("fork", argc, argv, opts, nitems(opts), 1, 0, &a) != 0 ||
	    a.npos != 1 || a.ncmd != 0)
		return bad_usage("fork");
	if (a.val[1] != NULL && parse_checkpoint(a.val[1], &at) != 0)
		return EXIT_USAGE;
	if ((sb = open_or_fail(a.pos[0], &rc)) == NULL)
		return rc;
	if ((nsb = sandbox_fork(sb, at, a.val[0], &cause)) == NULL) {
		rc = fail(cause, strncmp(cause, "name '", 6) == 0 ||
		    strstr(cause, "no such checkpoint") != NULL ? EXIT_USAGE :
		    EXIT_SANDBOX);
		free(cause);
		sandbox_free(sb);
		return rc;
	}
	printf("%s\n", sandbox_id(nsb));
	sandbox_free(nsb);
	sandbox_free(sb);
	return EXIT_OK;
}

static int
sub_reset(int argc, char **argv)
{
	static const struct opt opts[] = { { "root", 0 } };
	struct args	 a;
	struct sandbox	*sb;
	char		*cause = NULL;
	int		 rc;

	if (args_parse("reset", argc, argv, opts, nitems(opts), 1, 0, &a) != 0
	    || a.npos != 1 || a.ncmd != 0)
		return bad_usage("reset");
	if (a.val[0] == NULL) {
		fprintf(stderr, "holt: sandbox reset: say what to reset "
		    "(--root: the installs over the image)\n");
		return bad_usage("reset");
	}
	if ((sb = open_or_fail(a.pos[0], &rc)) == NULL)
		return rc;
	rc = EXIT_OK;
	if (sandbox_reset_root(sb, &cause) != 0) {
		rc = fail(cause, EXIT_SANDBOX);
		free(cause);
	} else
		sandbox_touch(sb);
	sandbox_free(sb);
	return rc;
}

/* holt sandbox watch: the screen's tree and output on any sandbox. */
static int
sub_watch(int argc, char **argv)
{
	static const struct opt opts[] = { { "theme", 1 } };
	struct args	 a;
	char		*cause = NULL;
	int		 rc = EXIT_OK;

	if (args_parse("watch", argc, argv, opts, nitems(opts), 1, 0, &a) != 0
	    || a.npos != 1 || a.ncmd != 0)
		return bad_usage("watch");
	if (watch_main(a.pos[0], a.val[0], &cause) != 0) {
		rc = fail(cause, sandbox_errno_unknown() ? EXIT_USAGE :
		    EXIT_SANDBOX);
		free(cause);
	}
	return rc;
}

static int
cmd_sandbox_full(int argc, char **argv)
{
	if (strcmp(argv[0], "watch") == 0)
		return sub_watch(argc, argv);
	if (strcmp(argv[0], "create") == 0)
		return sub_create(argc, argv);
	if (strcmp(argv[0], "reset") == 0)
		return sub_reset(argc, argv);
	if (strcmp(argv[0], "checkpoint") == 0)
		return sub_checkpoint(argc, argv);
	if (strcmp(argv[0], "restore") == 0)
		return sub_restore(argc, argv);
	if (strcmp(argv[0], "fork") == 0)
		return sub_fork(argc, argv);
	return sub_lifecycle(argc, argv);
}

static int
cmd_sandbox_exec(int argc, char **argv)
{
	sandbox_wake = sandbox_resume;
	return cmd_sandbox_dispatch(argc, argv, cmd_sandbox_full);
}

const struct cmd_entry cmd_sandbox_entry = {
	"sandbox", "SUBCOMMAND [ARGS...]", "create and use sandboxes",
	cmd_sandbox_exec
};
