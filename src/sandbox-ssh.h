/*
 * sandbox-ssh.h: what sandbox-ssh.c and sandbox-ssh-relay.c share,
 * private to them.
 */
#ifndef SANDBOX_SSH_H
#define SANDBOX_SSH_H

/*
 * The argv of `ssh ... DEST ssh_holt REMOTE` (holt.conf's ssh_command and
 * ssh_holt, one multiplexed connection per destination). Caller frees
 * with strv_free.
 */
char	**sandbox_ssh_argv(const char *dest, const char *remote);
/* The last line of text, without "holt: "; caller frees. */
char	 *sandbox_ssh_last_line(const char *text);

/*
 * A socket to the sandbox's envd through a relay process that runs argv
 * (ssh to the remote `holt sandbox bridge`), re-runs it when the
 * connection drops and re-joins running commands by pid and offset.
 * "hello" has been answered; mode as sandbox_provider's connect. id and
 * spec name the sandbox in errors.
 */
int	  sandbox_ssh_relay(const char *id, const char *spec, char **argv,
	      int mode, char **cause);

#endif
