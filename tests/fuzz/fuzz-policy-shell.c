/*
 * fuzz-policy-shell: libFuzzer target for the policy's shell parser and the
 * decisions built on it. The input is a command line; it is parsed raw
 * (any bytes, no NUL terminator), then judged in every mode, a rule is
 * suggested for it, and the result printed as JSON. Besides ASan's checks
 * it aborts if a line is allowed while one of its parts is not.
 *
 *	make fuzz-policy FUZZ_SECONDS=60	(configure --enable-fuzz CC=clang)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "holt.h"
#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct policy *fuzz_policy;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum policy_mode modes[] = {
		POLICY_MANUAL, POLICY_AUTO, POLICY_STRICT, POLICY_TRUST
	};
	struct policy_parse	*pp;
	struct policy_result	*res;
	char			*line, *rule, *wider = NULL, *cause = NULL;
	cJSON			*j;
	size_t			 m, i;

	if (fuzz_policy == NULL) {
		fuzz_policy = policy_new();
		if (policy_add_rule(fuzz_policy, "allow", "^(npm|make|cargo)"
		    "(\\s|$)", "user", &cause) != 0 ||
		    policy_add_rule(fuzz_policy, "deny", "^(curl|wget)(\\s|$)",
		    "user", &cause) != 0 ||
		    policy_add_rule(fuzz_policy, "write-deny", "^tests/", "user",
		    &cause) != 0)
			abort();
	}
	pp = policy_shell_parse((const char *)data, size);
	policy_shell_free(pp);

	if (size > 64 * 1024 || memchr(data, '\0', size) != NULL)
		return 0;
	line = xstrndup((const char *)data, size);
	for (m = 0; m < nitems(modes); m++) {
		res = policy_check_command(fuzz_policy, modes[m], line);
		if (res->verdict == POLICY_ALLOW) {
			for (i = 0; i < res->nparts; i++) {
				if (res->parts[i].verdict != POLICY_ALLOW)
					abort();
			}
		}
		if (m == 1) {
			j = policy_result_json(res);
			free(json_print(j));
			cJSON_Delete(j);
		}
		policy_result_free(res);
	}
	res = policy_check_write(fuzz_policy, POLICY_AUTO, line);
	policy_result_free(res);
	rule = policy_suggest_rule(fuzz_policy, line, &wider);
	free(rule);
	free(wider);
	free(line);
	return 0;
}
