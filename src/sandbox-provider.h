/*
 * sandbox-provider.h: where a sandbox runs (DESIGN 17). A provider is one
 * const struct sandbox_provider, the operations of sandbox.h that depend
 * on where the sandbox's processes are: the local machine (sandbox-local.c,
 * bubblewrap here), another machine over OpenSSH (sandbox-ssh.c), a cloud.
 * Every sandbox has a record here whatever its provider:
 * data/sandboxes/<id>/meta.json, whose "provider" names it ("local" when
 * absent: made before providers existed) with its argument after a colon
 * ("ssh:user@host"). sandbox_load looks the provider up in
 * sandbox_providers[] and keeps it in the struct sandbox; sandbox.h's
 * sandbox_start, sandbox_connect and the rest call through it, so no
 * caller (sessions, the agent, the CLI) asks which provider it has.
 *
 * Adding a provider: write src/sandbox-NAME.c defining
 * `const struct sandbox_provider sandbox_NAME_provider` (name "NAME";
 * create, start, stop, state and connect are required; a NULL one of the
 * others is "not on this provider", and sandbox.h's call says so), add it
 * to libholt in src/sandbox.am, declare it below, and add one line to
 * sandbox_providers[] in sandbox-provider.c. The connection it returns speaks holt-envd's
 * protocol (holt-envd(8)), however it is carried.
 *
 * The light front end (holt-light.c) links none of this: it has its own
 * sandbox_provider_find, which knows the local provider's light half
 * (state and connect, from sandbox.c) and hands anything else to
 * holt-full.
 */
#ifndef SANDBOX_PROVIDER_H
#define SANDBOX_PROVIDER_H

#include "sandbox.h"

/* sandbox_connect's modes, as sandbox.h's three connect calls. */
#define SANDBOX_CONNECT_WAIT	1	/* hello answered */
#define SANDBOX_CONNECT_NOWAIT	0	/* hello sent, reply not read */
#define SANDBOX_CONNECT_LATER	2	/* nothing sent */

struct sandbox_provider {
	const char	*name;	/* "local", "ssh": the spec before ':' */
	/*
	 * The spec's argument ("user@host" of "ssh:user@host"; NULL when
	 * there is none) is well-formed for this provider. NULL: takes none.
	 */
	int		(*check)(const char *arg, char **cause);
	/*
	 * Make the sandbox on the provider's side. dir (the new record's
	 * directory) exists, meta is the meta.json about to be written
	 * (id, name, provider, net, limits set): add what the provider must
	 * find again. It is not yet running: sandbox_start follows. On
	 * failure nothing is left on the provider's side.
	 */
	int		(*create)(const char *dir, cJSON *meta,
			    const struct sandbox_opts *, char **cause);
	int		(*start)(struct sandbox *, char **cause);
	int		(*stop)(struct sandbox *, char **cause);
	int		(*pause)(struct sandbox *, char **cause);
	int		(*resume)(struct sandbox *, char **cause);
	/* Delete the provider's side (stopped first); the record is ours. */
	int		(*rm)(struct sandbox *, char **cause);
	enum sandbox_state (*state)(struct sandbox *);
	/*
	 * The last state known, at once, without waiting on the provider
	 * (for what the server sends often); NULL: state.
	 */
	enum sandbox_state (*state_known)(struct sandbox *);
	/* A socket speaking envd's protocol; mode SANDBOX_CONNECT_*. */
	int		(*connect)(struct sandbox *, int mode, char **cause);
	int		(*busy)(struct sandbox *);	/* NULL: never busy */
	int		(*reset_root)(struct sandbox *, char **cause);
	/*
	 * Checkpoints of the sandbox's files (DESIGN 15), kept by the
	 * provider; restore puts checkpoint id back and restarts the
	 * sandbox's services. NULL: none on this provider.
	 */
	int		(*checkpoint)(struct sandbox *, struct checkpoint_info *,
			    char **cause);
	int		(*restore)(struct sandbox *, long long id, char **cause);
};

extern const struct sandbox_provider *const sandbox_providers[];
extern const struct sandbox_provider sandbox_local_provider;
extern const struct sandbox_provider sandbox_local_light;
extern const struct sandbox_provider sandbox_ssh_provider;
extern const struct sandbox_provider sandbox_e2b_provider;

/*
 * The provider of a spec ("local", "ssh:host"); *arg points into spec
 * after the colon, or is NULL. NULL with *cause when there is none such
 * or its argument is wrong.
 */
const struct sandbox_provider *sandbox_provider_parse(const char *spec,
	     const char **arg, char **cause);
/* By name alone (no argument); NULL if unknown. */
const struct sandbox_provider *sandbox_provider_find(const char *name);

/* sandbox.c: the record's side, for providers. */
const char *sandbox_provider_arg(struct sandbox *);	/* "h"; NULL: none */
cJSON	*sandbox_meta(struct sandbox *);	/* meta.json, borrowed */
int	 sandbox_wait_readable(int fd, int ms);	/* poll: >0 readable, 0 timeout */
/* The local provider's light half (sandbox.c): no process is started. */
enum sandbox_state sandbox_local_state(struct sandbox *);
int	 sandbox_local_connect(struct sandbox *, int mode, char **cause);

#endif
