/*
 * sandbox-landlock.h: Landlock scoping for the processes of a sandbox.
 *
 * holt-envd calls sandbox_landlock_scope once at start, single-threaded,
 * before it starts any command: from then on it and everything it starts
 * can neither connect to an abstract unix socket nor send a signal outside
 * the sandbox's own Landlock domain. Bubblewrap's namespaces do not cover
 * the first with --net on, where the sandbox shares the host's network
 * namespace and with it the host's abstract sockets (X11, D-Bus, ...).
 */
#ifndef SANDBOX_LANDLOCK_H
#define SANDBOX_LANDLOCK_H

/*
 * 0: scoped. 1: the kernel cannot scope (Landlock off or older than ABI 6,
 * Linux 6.12): nothing done, *cause says why. -1: failed, *cause set.
 * Sets no_new_privs, as Landlock requires.
 */
int	sandbox_landlock_scope(char **cause);

#endif
