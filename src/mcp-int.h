/*
 * mcp-int.h: what the MCP client (mcp.c) and its transports share. A
 * transport carries whole JSON-RPC messages to and from one server:
 * mcp-stdio.c (a process on the host), mcp-sandbox.c (a process in the
 * sandbox, through envd), mcp-http.c (streamable HTTP). It hands each
 * message it receives to mcp_server_recv, and tells mcp_server_gone once
 * when the server is gone; after either may have stopped it (s->tp is
 * NULL then), it touches nothing of its own.
 */
#ifndef MCP_INT_H
#define MCP_INT_H

#include "mcp.h"

struct mcp_server;

struct mcp_transport {
	const char	*name;
	int		(*start)(struct mcp_server *, char **cause);
	/* One message, no newline; -1 with *cause if it cannot be sent. */
	int		(*send)(struct mcp_server *, const char *, size_t,
			    char **cause);
	void		(*stop)(struct mcp_server *);	/* frees s->tp */
};

struct mcp_server {
	struct mcp			*mcp;
	char				*name;
	char				*command;
	char				**argv;		/* command and args */
	cJSON				*env;		/* {"K": "V"} */
	char				*url;
	int				 host;		/* where = host */
	long long			 timeout_s;
	const struct mcp_transport	*transport;
	void				*tp;		/* transport state */
	struct event_base		*base;
	const struct mcp_host		*mh;
	int				 bang_lines;	/* "!why": it failed */
};

extern const struct mcp_transport mcp_stdio_transport;
extern const struct mcp_transport mcp_sandbox_transport;
extern const struct mcp_transport mcp_http_transport;

void	 mcp_server_recv(struct mcp_server *, const char *, size_t);
void	 mcp_server_gone(struct mcp_server *, const char *why);
/* The same, with the tail of what it said on stderr (err: the
 * transport's, which is freed with it). */
void	 mcp_server_died(struct mcp_server *, const char *why, struct buf *err);
/*
 * Newline-delimited messages (stdio): data is added to in and each whole
 * line handed to mcp_server_recv. -1: the server was stopped meanwhile
 * (in is freed with it) - a line too long stops it.
 */
int	 mcp_server_feed(struct mcp_server *, struct buf *in, const char *,
	     size_t);

/* Split a line into words: blanks separate, '...' and "..." quote. */
char	**mcp_words(const char *, char **cause);
void	 mcp_words_free(char **);

#endif
