/*
 * secret.c: values that must never reach the event log, a model's context,
 * a sandbox or the screen: the API keys, git tokens and the values of the
 * variables named in secret_vars. Redaction replaces each occurrence with
 * "[redacted]". O(text x secrets), and secrets are few.
 */
#include <stdlib.h>
#include <string.h>

#include "session.h"

static char	**secrets;
static size_t	  nsecrets;

void
secret_add(const char *value)
{
	size_t	 i;

	/* Short values would redact ordinary words; no real key is short. */
	if (value == NULL || strlen(value) < 6)
		return;
	for (i = 0; i < nsecrets; i++) {
		if (strcmp(secrets[i], value) == 0)
			return;
	}
	secrets = xreallocarray(secrets, nsecrets + 1, sizeof *secrets);
	secrets[nsecrets++] = xstrdup(value);
}

void
secret_init(void)
{
	static const char *vars[] = {
		"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN",
		"HOLT_GIT_TOKEN", "GH_TOKEN", "OPENROUTER_API_KEY",
		"E2B_API_KEY",
	};
	static const char *keys[] = {
		"openai_api_key", "anthropic_api_key", "git_token",
		"e2b_api_key",
	};
	const char	*list;
	char		*copy, *name, *save;
	size_t		 i;

	for (i = 0; i < nitems(vars); i++)
		secret_add(getenv(vars[i]));
	for (i = 0; i < nitems(keys); i++)
		secret_add(config_get(keys[i]));
	list = config_get("secret_vars");
	if (list != NULL && *list != '\0') {
		copy = xstrdup(list);
		for (name = strtok_r(copy, " ,", &save); name != NULL;
		    name = strtok_r(NULL, " ,", &save))
			secret_add(getenv(name));
		free(copy);
	}
}

char *
secret_redact(const char *s)
{
	struct buf	 b = BUF_INIT;
	const char	*p, *hit, *best;
	size_t		 i, bestlen = 0;

	if (nsecrets == 0)
		return xstrdup(s);
	p = s;
	for (;;) {
		best = NULL;
		for (i = 0; i < nsecrets; i++) {
			hit = strstr(p, secrets[i]);
			if (hit != NULL && (best == NULL || hit < best)) {
				best = hit;
				bestlen = strlen(secrets[i]);
			}
		}
		if (best == NULL)
			break;
		buf_add(&b, p, (size_t)(best - p));
		buf_adds(&b, "[redacted]");
		p = best + bestlen;
	}
	buf_adds(&b, p);
	return buf_detach(&b, NULL);
}

void
secret_redact_json(cJSON *obj)
{
	cJSON	*c;
	char	*r;

	if (nsecrets == 0 || obj == NULL)
		return;
	if (cJSON_IsString(obj) && obj->valuestring != NULL) {
		for (size_t i = 0; i < nsecrets; i++) {
			if (strstr(obj->valuestring, secrets[i]) != NULL) {
				r = secret_redact(obj->valuestring);
				cJSON_SetValuestring(obj, r);
				free(r);
				break;
			}
		}
		return;
	}
	cJSON_ArrayForEach(c, obj)
		secret_redact_json(c);
}
