/*
 * server.h: the per-user daemon (DESIGN 1, 8). It owns the sessions and
 * runs their agent loops in one libevent loop, so work goes on while no
 * client is attached. server_main does not return until kill-server or a
 * fatal signal.
 */
#ifndef SERVER_H
#define SERVER_H

int	 server_main(int foreground);

#endif
