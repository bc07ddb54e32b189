/*
 * client.h: talking to the holt server (DESIGN 8). client_connect finds the
 * server's socket (-S PATH, -L NAME or "default" in the runtime directory),
 * starts the server when none answers (a lock file makes racing clients
 * start exactly one), and does the hello exchange. The fd is blocking and
 * close-on-exec.
 *
 * Protocol (frames of holt.h): the client sends {"type": ...} requests and
 * gets {"type":"ok",...} or {"type":"error","message":...} replies in order;
 * after "attach", {"type":"event"} and {"type":"state"} frames come too.
 */
#ifndef CLIENT_H
#define CLIENT_H

#include "holt.h"

char	*client_socket_path(void);		/* caller frees */
int	 client_connect(int start, char **cause);	/* start: the server if need be */
/* Send req (taken) and wait for its reply, skipping event/state frames. */
cJSON	*client_call(int fd, cJSON *req, char **cause);
/* One request on a fresh connection; NULL with *cause on error replies. */
cJSON	*client_request(cJSON *req, int start, char **cause);

/* cmd-client.c: shared by the session commands. */
#include <signal.h>
struct buf;
extern volatile sig_atomic_t cmd_stop;	/* set by cmd_on_signal */
void	 cmd_on_signal(int);
int	 cmd_fail(const char *cause);	/* prints; exit status for it */
void	 cmd_format_event(const cJSON *, struct buf *);	/* a line of text */
int	 cmd_ls_exec(int, char **);
/* A request (taken; NULL: none) about session name; NULL: printed, *rc. */
cJSON	*cmd_session_request(const char *type, const char *name, cJSON *req,
	     int *rc);

#endif
