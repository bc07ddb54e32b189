/*
 * mcp.h: the MCP servers of one session (DESIGN 18), as tools.
 *
 * Each [mcp NAME] section of holt.conf is a server: a program speaking
 * JSON-RPC 2.0 over its stdin and stdout (command, args, env), run inside
 * the session's sandbox through envd (where = sandbox, the default) or on
 * the host (where = host), or a streamable HTTP endpoint (url). Its tools
 * reach the model as mcp__NAME__TOOL with their JSON input schemas.
 *
 * A server is started when its tools are first listed and again, after it
 * died, on the next call. A call that the server fails - it exits, does
 * not answer within its timeout, answers what is not JSON-RPC or a message
 * over MCP_MESSAGE_MAX - ends with a message for the model; the server is
 * stopped and the session goes on. Requests from a server that holt does
 * not offer (sampling, elicitation, roots) are answered with a JSON-RPC
 * error; a ping is answered.
 *
 * Call order: mcp_new (reads holt.conf) -> mcp_prepare before each model
 * request (0: tools are being listed, host->changed follows) -> mcp_tools
 * -> mcp_call ... -> mcp_free (stops every server; no callback follows).
 */
#ifndef MCP_H
#define MCP_H

#include <event2/event.h>

#include "holt.h"

#define MCP_PREFIX		"mcp__"
#define MCP_TIMEOUT_S		60		/* default per-call timeout */
#define MCP_MESSAGE_MAX		(4U * 1024 * 1024)	/* bytes of one message */
#define MCP_MESSAGE_MAX_TEXT	"4 MiB"

struct envd_conn;

/* What the session lends its servers. */
struct mcp_host {
	struct event_base	*base;
	/* The sandbox's envd connection, made if need be (where = sandbox). */
	struct envd_conn	*(*envd)(void *arg, char **cause);
	/* The tool list changed, or a listing ended: ask mcp_prepare again. */
	void			(*changed)(void *arg);
	void			*arg;
	const char		*session;	/* for the log */
	/*
	 * A server could not be started or its tools listed: it is left out
	 * of the run. Said once until its tools are listed again.
	 */
	void			(*failed)(void *arg, const char *server,
				    const char *why);
};

struct mcp;
struct mcp_call;

struct mcp *mcp_new(const struct mcp_host *);	/* NULL: no [mcp] section */
void	 mcp_free(struct mcp *);
/* 1: every server's tools are known (or it failed); 0: wait for changed. */
int	 mcp_prepare(struct mcp *);
/* A new run: servers whose listing failed are tried again. */
void	 mcp_rearm(struct mcp *);
/*
 * A run ended: the servers in the sandbox are stopped (a process running
 * there keeps it from pausing when idle); the next call starts them.
 */
void	 mcp_idle(struct mcp *);
/* [{name: mcp__S__T, description, parameters}]; the caller frees it. */
cJSON	*mcp_tools(struct mcp *);
int	 mcp_is_tool(const char *name);
/*
 * 1 if a call of tool name (mcp__S__T) can change the sandbox's files: its
 * server runs there (where = sandbox). A host or HTTP server cannot.
 */
int	 mcp_changes_files(struct mcp *, const char *name);

/* The end of a call: text for the model, error set if the call failed. */
typedef void (*mcp_done_fn)(void *arg, char *text, int error, int interrupted);
/* Progress the server reports, as a line of text. */
typedef void (*mcp_progress_fn)(void *arg, const char *text);

/*
 * Call tool name (mcp__S__T) with args (an object, or NULL); cap bounds the
 * text given back. done is called exactly once, never from inside mcp_call;
 * the call frees itself after it.
 */
struct mcp_call *mcp_call(struct mcp *, const char *name, const cJSON *args,
	     size_t cap, mcp_progress_fn, mcp_done_fn, void *arg);
/* Give up a call: the server is told; done follows with interrupted. */
void	 mcp_call_cancel(struct mcp_call *);
/* Give up a call and its callbacks: nothing is called any more. */
void	 mcp_call_forget(struct mcp_call *);

#endif
