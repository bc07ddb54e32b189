/*
 * envd.h: holt-envd's parts, private to it (envd.c: the loop, clients,
 * commands, services, forwards; envd-file.c: file operations).
 */
#ifndef ENVD_H
#define ENVD_H

#include "sandbox.h"

/*
 * envd-file.c: file operations confined to /workspace, /home/user and /tmp.
 * Each takes the request and returns the reply to send (with "error" on
 * failure); the caller adds the id.
 */
void	 envd_file_init(void);	/* opens the roots; after the chdir */
cJSON	*envd_file_op(const char *op, const cJSON *req);
int	 envd_file_is_op(const char *op);
/* Resolve a directory for watch: returns an O_PATH fd, or -1 + *cause. */
int	 envd_file_open_dir(const char *path, char **abs, char **cause);
/*
 * Open a path for exec's "within": a regular file or a directory, resolved
 * as file operations resolve theirs, never blocking. Returns the fd (*isdir
 * says which), or -1 + *cause.
 */
int	 envd_file_open_within(const char *path, int *isdir, char **cause);

/*
 * envd-sudo.c: sudo inside the sandbox. envd_sudo_start forks the root
 * helper (while envd is still the sandbox's root); envd_sudo_main is
 * holt-envd run under the name "sudo".
 */
#define ENVD_SUDO_SOCK "/run/holt/root/sudo.sock"
void	 envd_sudo_start(const char *path);
int	 envd_sudo_main(int argc, char **argv);

/* envd-proxy.c: 127.0.0.1:PORT inside, handed to holt-proxy. */
#define ENVD_PROXY_PORT 3128
int	 envd_proxy_listen(int port);
void	 envd_proxy_accept(int listener, int handoff);

#endif
