/*
 * git-tool.c: the calls of git.h that no command of its own reaches, for the
 * shell tests (as git's t/helper/test-tool).
 *
 *	git-tool import SRC WORKSPACE [-b BRANCH] [-d DEPTH] [-p]
 *	git-tool revert-hunk WORKSPACE BASE PATH N
 *	git-tool revert-file WORKSPACE BASE PATH
 *	git-tool quote WORKSPACE BASE PATH N [COMMENT]
 *	git-tool has-changes WORKSPACE
 *	git-tool diff-async WORKSPACE BASE	(git_diff_start, poll, finish)
 *	git-tool diff-time WORKSPACE BASE N	(median ms of N git_diff calls)
 *	git-tool push [-u] WORKSPACE COMMIT BRANCH URL	(token: git_token;
 *		-u: git_open_workspace skips its checks, so that a test sees
 *		what the push's jail alone stops)
 *	git-tool push-local [-u] WORKSPACE COMMIT BRANCH PATH	(the same,
 *		into a local repository: holt pr --local)
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holt.h"
#include "git.h"

static void
progress(unsigned int received, unsigned int total, unsigned long long bytes,
    void *arg)
{
	fprintf(stderr, "\rreceiving objects: %u/%u, %llu bytes", received,
	    total, bytes);
}

static int
fail(char *cause)
{
	fprintf(stderr, "git-tool: %s\n", cause);
	free(cause);
	return 1;
}

int
main(int argc, char **argv)
{
	struct git_import_opts	 o;
	char			*cause = NULL, *base, *q;
	cJSON			*d, *f;
	int			 ch, r;

	if (argc < 3) {
		fprintf(stderr, "usage: git-tool import|revert-hunk|"
		    "revert-file|quote|has-changes ARGS\n");
		return 2;
	}
	if (strcmp(argv[1], "import") == 0) {
		memset(&o, 0, sizeof o);
		optind = 4;
		while ((ch = getopt(argc, argv, "b:d:p")) != -1) {
			switch (ch) {
			case 'b':
				o.branch = optarg;
				break;
			case 'd':
				o.depth = atoi(optarg);
				break;
			case 'p':
				o.progress = progress;
				break;
			default:
				return 2;
			}
		}
		if (argc < 4)
			return 2;
		if (git_import(argv[2], argv[3], &o, &base, &cause) != 0)
			return fail(cause);
		if (o.progress != NULL)
			fprintf(stderr, "\n");
		printf("%s\n", base);
		free(base);
		return 0;
	}
	if (strcmp(argv[1], "revert-hunk") == 0 && argc == 6) {
		if (git_revert_hunk(argv[2], argv[3], argv[4], atoi(argv[5]),
		    &cause) != 0)
			return fail(cause);
		return 0;
	}
	if (strcmp(argv[1], "revert-file") == 0 && argc == 5) {
		if (git_revert_file(argv[2], argv[3], argv[4], &cause) != 0)
			return fail(cause);
		return 0;
	}
	if (strcmp(argv[1], "quote") == 0 && argc >= 6) {
		if ((d = git_diff(argv[2], argv[3], &cause)) == NULL)
			return fail(cause);
		cJSON_ArrayForEach(f, cJSON_GetObjectItem(d, "files")) {
			if (strcmp(json_str(f, "path"), argv[4]) != 0)
				continue;
			q = git_hunk_quote(f, atoi(argv[5]), argc > 6 ?
			    argv[6] : NULL);
			if (q == NULL)
				break;
			fputs(q, stdout);
			free(q);
			cJSON_Delete(d);
			return 0;
		}
		cJSON_Delete(d);
		fprintf(stderr, "git-tool: no such hunk\n");
		return 1;
	}
	if (strcmp(argv[1], "diff-async") == 0 && argc == 4) {
		struct git_job	*job;
		struct pollfd	 pfd;

		if ((job = git_diff_start(argv[2], argv[3], &cause)) == NULL)
			return fail(cause);
		while (git_job_step(job) == 0) {
			pfd.fd = git_job_fd(job);
			pfd.events = POLLIN;
			if (poll(&pfd, 1, 10000) != 1) {
				git_job_free(job);
				fprintf(stderr, "git-tool: no answer\n");
				return 1;
			}
		}
		if ((d = git_diff_finish(job, &cause)) == NULL)
			return fail(cause);
		q = cJSON_PrintUnformatted(d);
		printf("%s\n", q);
		free(q);
		cJSON_Delete(d);
		return 0;
	}
	if (strcmp(argv[1], "diff-time") == 0 && argc == 5) {
		int	 i, k, runs = atoi(argv[4]);
		double	*ms, t;

		if (runs < 1 || runs > 1000)
			return 2;
		ms = xcalloc(runs, sizeof *ms);
		for (i = 0; i < runs; i++) {
			t = (double)mono_ms();
			if ((d = git_diff(argv[2], argv[3], &cause)) == NULL)
				return fail(cause);
			ms[i] = (double)mono_ms() - t;
			cJSON_Delete(d);
		}
		for (i = 1; i < runs; i++) {	/* insertion sort: few runs */
			t = ms[i];
			for (k = i; k > 0 && ms[k - 1] > t; k--)
				ms[k] = ms[k - 1];
			ms[k] = t;
		}
		printf("%.0f\n", ms[runs / 2]);
		free(ms);
		return 0;
	}
	if ((strcmp(argv[1], "push") == 0 ||
	    strcmp(argv[1], "push-local") == 0) && argc >= 6) {
		int	 local = strcmp(argv[1], "push-local") == 0;

		if (strcmp(argv[2], "-u") == 0) {
			git_test_unchecked = 1;
			argv++;
			argc--;
		}
		if (argc != 6)
			return 2;
		if (local)
			r = git_push_local(argv[2], argv[3], argv[4], argv[5],
			    &cause);
		else
			r = git_push_branch(argv[2], argv[3], argv[4], argv[5],
			    git_token(), &cause);
		if (r != 0)
			return fail(cause);
		return 0;
	}
	if (strcmp(argv[1], "has-changes") == 0 && argc == 3) {
		if ((r = git_has_changes(argv[2], &cause)) == -1)
			return fail(cause);
		printf("%s\n", r ? "yes" : "no");
		return 0;
	}
	fprintf(stderr, "git-tool: bad arguments\n");
	return 2;
}
