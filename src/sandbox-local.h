/*
 * sandbox-local.h: what sandbox.c and sandbox-local.c share, private to
 * them. struct sandbox is the metadata of meta.json; nothing here holds a
 * process or a connection.
 */
#ifndef SANDBOX_LOCAL_H
#define SANDBOX_LOCAL_H

#include <sys/un.h>

struct sandbox {
	char		*id;
	char		*name;
	char		*dir;
	char		*created;
	int		 net;
	long long	 memory;
	int		 pids;
	uid_t		 host_uid;	/* 0: the caller's; see sandbox_uid_pick */
	cJSON		*meta;
	char		*provider;	/* meta.json's, "local" when absent */
	const struct sandbox_provider *prov;
};

int	 sandbox_is_id(const char *);
int	 sandbox_name_ok(const char *);
struct sandbox *sandbox_load(const char *id, char **cause);
pid_t	 sandbox_pid(struct sandbox *);	/* envd's host pid if alive, else 0 */
int	 sandbox_proc_stat(pid_t, char *state, unsigned long long *start);
char	*sandbox_path(struct sandbox *, const char *rel);	/* caller frees */
int	 sandbox_sockaddr(struct sandbox *, struct sockaddr_un *, int *dirfd);
int	 sandbox_socket_alive(struct sandbox *);
int	 sandbox_connect_raw(struct sandbox *, int timeout_ms, char **cause);

/* sandbox-create.c: the local provider's create */
int	 sandbox_local_create(const char *dir, cJSON *meta,
	     const struct sandbox_opts *, char **cause);
/* sandbox-provider.c: 1 if sb is local, else 0 and *cause says so */
int	 sandbox_is_local(struct sandbox *, const char *what, char **cause);

/* sandbox-local.c */
int	 sandbox_write_run(const char *path, const char *, size_t);
int	 sandbox_pids_cgroup(void);
int	 sandbox_userns_ok(void);
uid_t	 sandbox_uid_pick(const char *id);

/*
 * sandbox-root.c: the overlays of /usr /etc /var /opt /root over the image
 * (DESIGN 13), for a sandbox with a host uid of its own. prepare runs in
 * the starting process, mount in the launching child just before bwrap.
 */
int	 sandbox_root_on(struct sandbox *);
const char *sandbox_root_image(struct sandbox *);	/* "host" or a path */
int	 sandbox_root_prepare(struct sandbox *, char **cause);
int	 sandbox_root_mount(struct sandbox *, int userns, const char *envd,
	     char **cause);
int	 sandbox_root_reset(struct sandbox *, char **cause);
const char *sandbox_root_stage(void);

#endif
