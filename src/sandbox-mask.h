/*
 * sandbox-mask.h: the bwrap arguments that hide, in a host tree a sandbox
 * sees read-only, what only root may read (sandbox-mask.c). For bwrap_argv,
 * when holt runs as root and the sandbox user is therefore the host's root.
 */
#ifndef SANDBOX_MASK_H
#define SANDBOX_MASK_H

char	**sandbox_mask_argv(const char *top);	/* NULL-terminated */
void	  sandbox_mask_free(char **);

#endif
