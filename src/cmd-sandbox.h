/*
 * cmd-sandbox.h: what cmd-sandbox.c (create and the lifecycle, in
 * holt-full) and cmd-sandbox-light.c (the rest, also in the light front
 * end) share. Private to them.
 */
#ifndef CMD_SANDBOX_H
#define CMD_SANDBOX_H

#include "sandbox.h"

struct opt {
	const char	*name;		/* without "--" */
	int		 has_arg;
};

#define MAX_OPTS 8
#define MAX_POS 4
struct args {
	const char	*val[MAX_OPTS];	/* last value (or "" for a flag) */
	char		**multi;	/* every value of option 0 (--env) */
	size_t		 nmulti;
	char		*pos[MAX_POS];
	int		 npos;
	char		**cmd;		/* after "--", or after the positionals */
	int		 ncmd;
};

int	 args_parse(const char *sub, int argc, char **argv,
	     const struct opt *, size_t nopts, int maxpos, int multi0,
	     struct args *);
void	 sub_usage(const char *name, FILE *);
void	 all_usage(FILE *);
int	 bad_usage(const char *name);
struct sandbox *open_or_fail(const char *idn, int *rc);
int	 fail(const char *cause, int rc);
/*
 * Run "sandbox SUB ..." (argv[0] is "sandbox"); the subcommands that start
 * or stop processes go to full (its argv[0] is SUB).
 */
int	 cmd_sandbox_dispatch(int argc, char **argv, int (*full)(int, char **));

#endif
