/*
 * agent-tools.h: running one tool call in the sandbox (private to the
 * agent). A tool_exec runs asynchronously over the session's envd
 * connection, reports output as it comes and ends with exactly one call of
 * its done callback, after which the caller frees it.
 */
#ifndef AGENT_TOOLS_H
#define AGENT_TOOLS_H

#include "envd-conn.h"

struct mcp;

struct tool_ctx {
	const char	*test_command;
	long long	 timeout_s;	/* default per command */
	size_t		 output_cap;	/* what the model is given */
	const char	*command;	/* run this instead (edited by the user) */
	/*
	 * run_command and run_tests: told the command's pid once envd has
	 * started it; with rejoin_pid set, no command is started: the one
	 * with that pid (started by an earlier process) is attached to, its
	 * output replayed from the start envd keeps and its exit awaited.
	 * Attaching fails (envd no longer knows it) as the tool failing.
	 */
	void		(*started)(void *arg, long pid);
	long		 rejoin_pid;
	struct mcp	*mcp;		/* the session's MCP servers, or NULL */
};

struct tool_result {
	char		*result;	/* text for the model */
	int		 has_exit;
	int		 exit_code;
	int		 timed_out;
	int		 interrupted;
	int		 failed;	/* the tool itself failed */
	/*
	 * failed because the sandbox's connection was lost (envd's error
	 * said "lost") after the command started: it may run on there.
	 */
	int		 lost;
	uint64_t	 duration_ms;
};

typedef void (*tool_output_fn)(void *arg, const char *stream,
	    const char *data, size_t len);
typedef void (*tool_done_fn)(void *arg, struct tool_result *);

struct tool_exec;
struct tool_exec *tool_exec_start(struct envd_conn *, const char *name,
	    const cJSON *args, const struct tool_ctx *, tool_output_fn,
	    tool_done_fn, void *arg);
void	 tool_exec_cancel(struct tool_exec *);	/* done follows, interrupted */
void	 tool_exec_free(struct tool_exec *);

/* What the policy judges for a call: a command, a write path, or nothing. */
enum tool_subject { TOOL_READ, TOOL_COMMAND, TOOL_WRITE, TOOL_MCP,
	TOOL_UNKNOWN };
enum tool_subject tool_subject(const char *name, const cJSON *args,
	    const struct tool_ctx *, char **subject, char **cause);

/* A unified diff of what a write_file/edit_file call would change. */
typedef void (*tool_preview_fn)(void *arg, const char *diff, const char *error);
void	 tool_preview_write(struct envd_conn *, const char *name,
	    const cJSON *args, tool_preview_fn, void *arg);

char	*tool_shell_quote(const char *);
char	*tool_diff_text(const char *path, const char *old, size_t oldlen,
	    const char *new, size_t newlen);

#endif
