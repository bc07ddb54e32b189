/*
 * policy.h: the command policy (holt-policy(5), DESIGN 5).
 *
 * Every command the agent wants to run and every file it wants to write is
 * judged here before it reaches the sandbox. A command line is parsed as
 * shell (policy-shell.c) into simple commands; each is normalised (quote
 * removal, /usr/bin/rm is rm, wrappers such as env, timeout, sudo, sh -c
 * are looked through) and matched on its own against pcre2 rules, first
 * match within a file, strictest across files and across parts. What cannot
 * be judged statically (eval, a variable as command name, a function
 * definition, ...) is never allowed without a human.
 *
 * Call order: policy_new() (built-in defaults), then policy_load_file() for
 * the user's file, the session's rules and the workspace's file, then any
 * number of policy_check_command() / policy_check_write(). A struct policy
 * is not thread-safe (it keeps one pcre2 match block); use one per thread.
 * Results belong to the caller: policy_result_free().
 */
#ifndef POLICY_H
#define POLICY_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

enum policy_verdict { POLICY_ALLOW, POLICY_ASK, POLICY_DENY };
enum policy_mode { POLICY_MANUAL, POLICY_AUTO, POLICY_STRICT, POLICY_TRUST };

const char *policy_verdict_name(enum policy_verdict);	/* "allow" ... */
const char *policy_mode_name(enum policy_mode);		/* "auto" ... */
int	 policy_mode_parse(const char *, enum policy_mode *);	/* -1 unknown */

struct policy;	/* opaque rule set */

struct policy *policy_new(void);	/* built-in defaults only */
struct policy *policy_new_empty(void);	/* no rules at all (tests) */
void	 policy_free(struct policy *);

/*
 * Load a rules file. source is "user", "session", "workspace", or a name
 * for the file (holt policy check --policy). A missing file is not an error
 * (returns 0). A bad line or pattern fails the whole file (-1, *cause names
 * file, line and pcre2's message) and nothing of it is kept. A "workspace"
 * file may only tighten: allow and write-allow lines refuse the file.
 */
int	 policy_load_file(struct policy *, const char *path, const char *source,
	    char **cause);
/* One rule, appended to the rules of source (created on first use). */
int	 policy_add_rule(struct policy *, const char *action, const char *pattern,
	    const char *source, char **cause);
/* Append "ACTION PATTERN" to a rules file (fsync'd), after checking it. */
int	 policy_append_rule(const char *path, const char *action,
	    const char *pattern, char **cause);
/* The workspace's own policy file, relative to the workspace root. */
#define POLICY_WORKSPACE_FILE ".holt/policy"

/*
 * A decision. Each part is one simple command (or one file write, whose
 * command is "write PATH") with its verdict, the rule that decided it
 * (NULL when none did), that rule's source and line, and why.
 */
struct policy_part {
	char			*command;	/* normalised, as matched */
	enum policy_verdict	 verdict;
	char			*rule;		/* pattern, or NULL */
	char			*source;	/* "default", "user", ..., or NULL */
	unsigned int		 line;		/* of the rule, 0 if none */
	char			*reason;
	int			 write;		/* 1: a file write */
	char			*action;	/* "allow", "write-deny", ... or NULL */
};
struct policy_result {
	enum policy_verdict	 verdict;	/* the strictest part's */
	struct policy_part	*parts;
	size_t			 nparts;
	char			*reason;	/* of the deciding part */
};

struct policy_result *policy_check_command(struct policy *, enum policy_mode,
	    const char *cmdline);
/* The same, for a command started in cwd (absolute; NULL: the root). */
struct policy_result *policy_check_command_in(struct policy *,
	    enum policy_mode, const char *cwd, const char *cmdline);
/*
 * The directory the write rules' paths are relative to, where commands
 * start: /workspace unless set (E2B's sandboxes: /home/user). A write
 * outside it is never auto-allowed.
 */
void	 policy_set_root(struct policy *, const char *dir);
/*
 * A directory that is the sandbox's own scratch (E2B's sandboxes: /tmp):
 * a write there is judged by the write rules on its absolute path
 * ("/tmp/f"), so the defaults allow it as they allow one below the root;
 * without it, a write there is outside the root like any other.
 */
void	 policy_set_tmp(struct policy *, const char *dir);
/* path is relative to the root (an absolute path is taken as it is). */
struct policy_result *policy_check_write(struct policy *, enum policy_mode,
	    const char *path);
/*
 * A host the sandbox's proxy is asked to connect to: one part, "host
 * NAME", judged by the net-allow/net-deny rules (policy-net.c).
 */
struct policy_result *policy_check_host(struct policy *, enum policy_mode,
	    const char *host);
/*
 * A tool of an MCP server, mcp__SERVER__TOOL (DESIGN 18): one part, "tool
 * NAME", judged by the tool-allow/tool-ask/tool-deny rules (pcre2 on the
 * name) and the mode; in auto mode what no rule settles asks.
 */
struct policy_result *policy_check_tool(struct policy *, enum policy_mode,
	    const char *name);
void	 policy_result_free(struct policy_result *);
/* {"verdict":..,"reason":..,"parts":[{"command","verdict","rule","source",
   "line","reason","action","write"}]} (DESIGN 5, with extra fields) */
cJSON	*policy_result_json(const struct policy_result *);

/*
 * "Always allow": the narrowest sensible pattern that allows the parts of
 * cmdline that rules do not already allow in auto mode, e.g.
 * "^npm run test:unit$", and through *wider (if not NULL) a wider one,
 * "^npm run [\w:-]+$", or NULL. Returns NULL if no rule can make the line
 * allowed: a part is denied, asked by a rule, or cannot be judged.
 */
char	*policy_suggest_rule(struct policy *, const char *cmdline, char **wider);
void	 policy_dump(struct policy *, FILE *);	/* holt policy show */

/*
 * policy-shell.c: the shell parser. It turns a command line into a flat
 * list of simple commands (commands inside $(...), `...`, <(...) and
 * here-documents included, flagged SUBST), with quotes removed. Input it
 * cannot parse gives error set and no commands. Exposed for the fuzzer and
 * the unit tests; the rest of holt uses policy_check_command.
 */
#define POLICY_SHELL_MAX_DEPTH	32	/* nesting of ( { $( ` sh -c ... */
#define POLICY_SHELL_MAX_CMDS	1024
#define POLICY_SHELL_MAX_LEN	(1024 * 1024)
#define POLICY_MAX_PARTS	4096	/* commands and writes of one line */

struct policy_word {
	char		*text;	/* quotes removed; expansions kept as written */
	int		 flags;
#define PW_QUOTED	0x1	/* some of it was quoted or escaped */
#define PW_VAR		0x2	/* $name, ${...}, $1, ... */
#define PW_SUBST	0x4	/* $(...) or `...` */
#define PW_ARITH	0x8	/* $((...)) or $[...] */
#define PW_GLOB		0x10	/* unquoted * ? [...] */
#define PW_BRACE	0x20	/* unquoted {a,b} or {1..3} */
#define PW_TILDE	0x40	/* unquoted leading ~ */
#define PW_PROCSUBST	0x80	/* <(...) or >(...) */
#define PW_UNSAFE	0x100	/* ${x@P}, a[expr]: may run code when expanded */
#define PW_EXPANDS	(PW_VAR|PW_SUBST|PW_ARITH|PW_GLOB|PW_BRACE|PW_PROCSUBST|PW_UNSAFE)
};

enum policy_redir_op {
	PR_IN, PR_OUT, PR_APPEND, PR_CLOBBER, PR_RW, PR_DUP_IN, PR_DUP_OUT,
	PR_ALL, PR_ALL_APPEND, PR_HEREDOC, PR_HERESTRING
};
struct policy_redir {
	int			 fd;	/* -1: default */
	enum policy_redir_op	 op;
	struct policy_word	 target;	/* here-doc: the delimiter */
};

enum policy_cmd_kind {
	PC_SIMPLE,	/* words (possibly none: only assignments/redirections) */
	PC_FUNCDEF,	/* NAME() ... or function NAME: words[0] is NAME */
	PC_ARITH,	/* (( ... )) or for ((;;)): words[0] is the text */
	PC_TEST,	/* [[ ... ]]: words are the test's */
	PC_FOR,		/* for NAME in WORDS: words[0] is NAME */
	PC_EXPANSION	/* a here-document whose expansion may run code */
};
struct policy_cmd {
	enum policy_cmd_kind	 kind;
	struct policy_word	*assigns;	/* NAME=value prefixes */
	size_t			 nassigns;
	struct policy_word	*words;
	size_t			 nwords;
	struct policy_redir	*redirs;
	size_t			 nredirs;
	unsigned int		 depth;
	int			 flags;
#define PC_F_SUBST	0x1	/* inside a substitution or here-document */
#define PC_F_SUBSHELL	0x2	/* inside ( ) */
#define PC_F_FOR	0x4	/* PC_ARITH of for ((;;)) */
};
struct policy_parse {
	struct policy_cmd	*cmds;
	size_t			 ncmds;
	char			*error;	/* NULL: parsed */
};

struct policy_parse *policy_shell_parse(const char *, size_t);
void	 policy_shell_free(struct policy_parse *);
/* Shell-quote a word for display ("a b" -> 'a b'); caller frees. */
char	*policy_shell_quote(const char *);

/* policy-net.c: host rules; policy.c hands them the net-* lines. */
struct policy_net;
int	 policy_net_is_action(const char *, size_t);
/* 0, or -1 with *msg; line 0: after the source's last. */
int	 policy_net_add(struct policy_net **, const char *action,
	     const char *glob, const char *source, unsigned int line, char **msg);
void	 policy_net_merge(struct policy_net **, struct policy_net *);	/* takes it */
int	 policy_net_load_defaults(struct policy_net **, char **cause);
void	 policy_net_free(struct policy_net *);
struct policy_result *policy_net_check(struct policy_net *, enum policy_mode,
	     const char *host);
void	 policy_net_dump(struct policy_net *, FILE *);
int	 policy_net_is_ip(const char *);
char	*policy_net_host_norm(const char *);	/* NULL: not a host name */

#endif
