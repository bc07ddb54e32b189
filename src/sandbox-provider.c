/*
 * sandbox-provider.c: the providers holt has (sandbox-provider.h), and
 * sandbox.h's lifecycle calls, which go to the sandbox's provider. Adding
 * a provider is one line in sandbox_providers[].
 */
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "sandbox-local.h"
#include "sandbox-provider.h"

const struct sandbox_provider *const sandbox_providers[] = {
	&sandbox_local_provider,
	&sandbox_ssh_provider,
	&sandbox_e2b_provider,
	NULL
};

static int
unsupported(struct sandbox *sb, const char *what, char **cause)
{
	*cause = xprintf("sandbox '%s': %s is not done on provider '%s'",
	    sb->id, what, sb->provider);
	return -1;
}

int
sandbox_start(struct sandbox *sb, char **cause)
{
	return sb->prov->start(sb, cause);
}

int
sandbox_stop(struct sandbox *sb, char **cause)
{
	return sb->prov->stop(sb, cause);
}

int
sandbox_pause(struct sandbox *sb, char **cause)
{
	if (sb->prov->pause == NULL)
		return unsupported(sb, "pause", cause);
	return sb->prov->pause(sb, cause);
}

int
sandbox_resume(struct sandbox *sb, char **cause)
{
	if (sb->prov->resume == NULL)
		return unsupported(sb, "resume", cause);
	return sb->prov->resume(sb, cause);
}

int
sandbox_busy(struct sandbox *sb)
{
	return sb->prov->busy != NULL && sb->prov->busy(sb);
}

int
sandbox_reset_root(struct sandbox *sb, char **cause)
{
	if (sb->prov->reset_root == NULL)
		return unsupported(sb, "reset-root", cause);
	return sb->prov->reset_root(sb, cause);
}

/* Checkpoints, restore and fork copy the sandbox's files here. */
int
sandbox_is_local(struct sandbox *sb, const char *what, char **cause)
{
	if (sb->prov == &sandbox_local_provider)
		return 1;
	unsupported(sb, what, cause);
	return 0;
}
