/*
 * policy-tool: judges many command lines in one process, for tests that
 * need more than a few (tests/policy-shell-diff.py). Reads command lines
 * separated by NUL bytes on stdin and prints, for each, one line of the
 * JSON that holt policy check --json prints. Rules: the built-in defaults
 * and the files given as arguments.
 *
 *	policy-tool [-m MODE] [POLICY-FILE ...] <lines
 */
#include <stdlib.h>
#include <string.h>

#include "holt.h"
#include "policy.h"

int
main(int argc, char **argv)
{
	struct policy		*p;
	struct policy_result	*res;
	enum policy_mode	 mode = POLICY_AUTO;
	struct buf		 in = BUF_INIT;
	cJSON			*j;
	char			 chunk[65536], *cause = NULL, *s, *line, *end;
	size_t			 n;
	int			 i;

	p = policy_new();
	if (argc > 2 && strcmp(argv[1], "-m") == 0) {
		if (policy_mode_parse(argv[2], &mode) != 0)
			fatalx("mode '%s': unknown", argv[2]);
		argc -= 2;
		argv += 2;
	}
	for (i = 1; i < argc; i++) {
		if (policy_load_file(p, argv[i], argv[i], &cause) != 0)
			fatalx("%s", cause);
	}
	while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
		buf_add(&in, chunk, n);
	for (line = in.data; line != NULL && line < in.data + in.len;
	    line = end + 1) {
		end = memchr(line, '\0', (size_t)(in.data + in.len - line));
		if (end == NULL)
			end = in.data + in.len;
		res = policy_check_command(p, mode, line);
		j = policy_result_json(res);
		s = json_print(j);
		printf("%s\n", s);
		free(s);
		cJSON_Delete(j);
		policy_result_free(res);
	}
	buf_release(&in);
	policy_free(p);
	return 0;
}
