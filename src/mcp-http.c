/*
 * mcp-http.c: an MCP server at a URL (streamable HTTP). Not carried yet:
 * starting one fails with a clear message, so its calls fail and the
 * session goes on.
 */
#include "mcp-int.h"

static int
http_start(struct mcp_server *s, char **cause)
{
	*cause = xprintf("url '%s': streamable HTTP servers are not "
	    "supported by this holt yet", s->url);
	return -1;
}

static int
http_send(struct mcp_server *s, const char *msg, size_t len, char **cause)
{
	(void)s;
	(void)msg;
	(void)len;
	*cause = xstrdup("not connected");
	return -1;
}

static void
http_stop(struct mcp_server *s)
{
	s->tp = NULL;
}

const struct mcp_transport mcp_http_transport = {
	"http", http_start, http_send, http_stop
};
