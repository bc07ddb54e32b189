/*
 * e2b-bridge.h: what the e2b-bridge*.c files share, private to them. The
 * bridge (e2b-bridge.c) reads holt-envd's requests from its socket and
 * answers commands itself; files and watch are e2b-bridge-files.c's,
 * services e2b-bridge-service.c's. Frames go out whole, under br->lock,
 * through e2b_bridge_send; a request's handler returns 0 with fields added
 * to *reply, or -1 with *cause.
 */
#ifndef E2B_BRIDGE_H
#define E2B_BRIDGE_H

#include <pthread.h>
#include <stdint.h>

#include "e2b-client.h"
#include "sandbox.h"

/* One connection of holt's: its socket's far end and the sandbox. */
struct e2b_bridge {
	int			 fd;
	pthread_mutex_t		 lock;		/* fd writes, refs, used_ms */
	int			 refs;
	struct e2b_client	*client;
	struct e2b_sbx		 sbx;
	long			 timeout_s;
	uint64_t		 used_ms;	/* the timeout last set then */
#define BRIDGE_PTYS	16
	long			 ptys[BRIDGE_PTYS];	/* pids on a terminal */
#define BRIDGE_WATCHES	16
	struct bridge_exec	*watches[BRIDGE_WATCHES];
	int			 closed;	/* holt closed its end */
};

/* A stream in a thread of its own: a command's (exec, attach), a watch's. */
struct bridge_exec {
	struct e2b_bridge	*br;
	cJSON			*req;
	double			 id;
	long			 pid;
	int			 pty;
	uint64_t		 start_ms;
	uint64_t		 deadline_ms;	/* 0: none */
	int			 timed_out;
	long long		 off_out, off_err, off_pty;
	int			 exited;
	int			 cancel;	/* a watch: unwatch came */
};

/* e2b-bridge.c */
void	 e2b_bridge_unref(struct e2b_bridge *);
void	 e2b_bridge_send(struct e2b_bridge *, cJSON *);
cJSON	*e2b_bridge_reply(double id);
/* Reply ok, with reply's fields (taken; NULL: none). */
void	 e2b_bridge_ok(struct e2b_bridge *, double id, cJSON *reply);
void	 e2b_bridge_error(struct e2b_bridge *, double id, const char *);
/* A request's path (key) as E2B's: relative ones are below /workspace. */
char	*e2b_bridge_path(const cJSON *, const char *key);
/* An E2B error in holt-envd's words: "path 'x': No such file ...". */
char	*e2b_bridge_fs_error(const char *what, const char *path,
	     const char *code, const char *cause);
cJSON	*e2b_bridge_pid(long pid);	/* {"process": {"pid": pid}} */

/* e2b-bridge-files.c */
int	 e2b_bridge_stat(struct e2b_bridge *, const cJSON *, cJSON **, char **);
int	 e2b_bridge_list(struct e2b_bridge *, const cJSON *, cJSON **, char **);
int	 e2b_bridge_read(struct e2b_bridge *, const cJSON *, cJSON **, char **);
int	 e2b_bridge_write(struct e2b_bridge *, const cJSON *, cJSON **, char **);
int	 e2b_bridge_remove(struct e2b_bridge *, const cJSON *, cJSON **,
	     char **);
int	 e2b_bridge_move(struct e2b_bridge *, const cJSON *, cJSON **, char **);
int	 e2b_bridge_unwatch(struct e2b_bridge *, const cJSON *, cJSON **,
	     char **);
/* A watch's thread (its ex registered first, or -1: too many). */
void	*e2b_bridge_watch_thread(void *);
int	 e2b_bridge_watch_register(struct e2b_bridge *, struct bridge_exec *);

/* e2b-bridge-service.c */
int	 e2b_bridge_service(struct e2b_bridge *, const cJSON *, cJSON **,
	     char **);

#endif
