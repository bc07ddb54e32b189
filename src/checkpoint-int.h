/*
 * checkpoint-int.h: what checkpoint.c (the store and taking checkpoints)
 * shares with checkpoint-restore.c (putting them back). Not for others.
 */
#ifndef CHECKPOINT_INT_H
#define CHECKPOINT_INT_H

#include <sys/stat.h>

#include "checkpoint.h"

struct checkpoint_store {
	char			*sbxdir;
	int			 sbxfd;		/* data/sandboxes/<id> */
	int			 dirfd;		/* its checkpoints/ */
	int			 objfd;		/* checkpoints/objects */
	int			 lockfd;
	struct checkpoint_info	*list;
	size_t			 nlist;
	long long		 next;
	uint64_t		 total;		/* bytes of objects */
	struct ckpt_pending	*pending;	/* objects not yet in place */
	size_t			 npending;
	int			 noclone;	/* FICLONE failed: copy */
};

/* An object written to a temporary, named by ckpt_obj_flush. */
struct ckpt_pending {
	char		 tmp[32];
	char		 path[68];	/* xx/yyyy... */
	uint64_t	 size;
	int		 fd;		/* open until synced, for the first few */
	int		 skip;		/* there already, or twice in the queue */
};

/* One entry of a tree object. */
struct ckpt_entry {
	char		 type;		/* f file, l symlink, d dir, p fifo,
					   w overlay whiteout */
	unsigned	 mode;		/* permission bits, CKPT_OPAQUE */
	long long	 uid, gid;	/* from the owner of workspace/ */
	uint64_t	 size;
	long long	 mtime_ns;
	char		 hash[65];
	char		*name;
};

/* A directory of the root overlay that hides the image's below. */
#define CKPT_OPAQUE	0100000
#define CKPT_OPAQUE_XATTR "trusted.overlay.opaque"
#define CKPT_OVERLAY_WORK ".work"	/* root/.work: overlayfs's, not kept */

struct ckpt_tree {
	struct ckpt_entry	*e;
	size_t			 n;
};

/* A parsed commit: the roots' trees and the hard-link groups. */
struct ckpt_commit {
	char		 root[3][65];	/* "" when absent; checkpoint_roots order */
	char		**links;	/* "ROOT PATH PATH ..." lines, escaped */
	size_t		 nlinks;
};

/* The stat cache (checkpoint-index.c): a directory and its entries. */
struct ckpt_ient {
	char		*name;
	char		 type;		/* as in ckpt_entry */
	unsigned	 mode;		/* as in its tree's line */
	long long	 uid, gid;	/* relative, as in its tree's line */
	uint64_t	 dev, ino, size;
	long long	 mtime, ctime;
	long long	 hashed;	/* when its content was read */
	char		 hash[65];
};

struct ckpt_idir {
	char		*path;		/* ROOT/DIR/... */
	uint64_t	 dev, ino;
	long long	 mtime, ctime;
	long long	 scanned;	/* when its names were read */
	char		 tree[65];	/* its tree object, "" unknown */
	struct ckpt_ient *e;		/* sorted by name */
	size_t		 n;
	int		 seen;
	int		 borrowed;	/* 1: path and names in the index's
					   blob; 2: names only (another's) */
};

struct ckpt_index {
	struct ckpt_idir **dirs;
	size_t		 n;
	size_t		*slot;		/* path -> 1 + index into dirs */
	size_t		 cap;
	char		*blob;		/* the file as loaded */
};

/* The lstats of a scan, made by a few threads before it. */
struct ckpt_pstat {
	struct stat	 sb;
	int		 err;		/* 0, or why it has no stat */
};

struct ckpt_pdir {
	char		*path;		/* ROOT/DIR/... */
	int		 fd;
	struct stat	 sb;		/* its own, when its names were read */
	long long	 scanned;
	char		**names;	/* sorted; NULL: taken, or unread */
	size_t		 n;
	int		 borrowed;	/* names are the old index's */
	struct ckpt_pstat *st;		/* one per name */
};

struct ckpt_prefetch {
	struct ckpt_pdir **dirs;	/* sorted by path */
	size_t		 n;
};

int	 ckpt_prefetch(struct ckpt_prefetch *, struct ckpt_index *old, int fd,
	     const char *path, const struct stat *);
struct ckpt_pdir *ckpt_prefetch_dir(struct ckpt_prefetch *, const char *path,
	     const struct stat *);
void	 ckpt_prefetch_free(struct ckpt_prefetch *);
/* The cache's names of a directory with this stat can be trusted. */
int	 ckpt_idir_unchanged(const struct ckpt_idir *, const struct stat *);

void	 ckpt_index_load(struct checkpoint_store *, struct ckpt_index *,
	     long long uid, long long gid);
int	 ckpt_index_save(struct checkpoint_store *, struct ckpt_index *,
	     long long uid, long long gid);
void	 ckpt_index_free(struct ckpt_index *);
struct ckpt_idir *ckpt_index_dir(struct ckpt_index *, const char *path);
void	 ckpt_index_add(struct ckpt_index *, struct ckpt_idir *);
struct ckpt_ient *ckpt_idir_find(struct ckpt_idir *, const char *name);
void	 ckpt_idir_free(struct ckpt_idir *);
uint64_t ckpt_fnv(const char *);

/*
 * Objects are queued by the puts and made durable and named by the flush
 * (all of them, or none with ckpt_obj_abort): call it before naming the
 * new objects anywhere or reading them.
 */
int	 ckpt_obj_put_mem(struct checkpoint_store *, const void *, size_t,
	     char hash[65]);
int	 ckpt_obj_put_fd(struct checkpoint_store *, int fd, char hash[65]);
uint64_t ckpt_obj_new_bytes(struct checkpoint_store *);
int	 ckpt_obj_flush(struct checkpoint_store *, const char *line,
	     int *journalled);
void	 ckpt_obj_abort(struct checkpoint_store *);
/* Sync the whole store and empty the journal (a copy shares objects). */
int	 ckpt_journal_clear(struct checkpoint_store *);
/* The names in a directory, sorted, without . and .. (NULL: errno). */
char	**ckpt_names(int fd, size_t *n);
long long ckpt_now_ns(void);
/* A checkpoint's line in the list, and adding it (synced unless the
 * journal holds it already). */
char	*ckpt_list_line(const struct checkpoint_info *);
int	 ckpt_list_add(struct checkpoint_store *, const struct checkpoint_info *,
	     int sync, char **cause);
int	 ckpt_obj_open(struct checkpoint_store *, const char *hash);
char	*ckpt_obj_read(struct checkpoint_store *, const char *hash, size_t *);
int	 ckpt_tree_read(struct checkpoint_store *, const char *hash,
	     struct ckpt_tree *, char **cause);
void	 ckpt_tree_release(struct ckpt_tree *);
int	 ckpt_commit_read(struct checkpoint_store *, const char *hash,
	     struct ckpt_commit *, char **cause);
void	 ckpt_commit_release(struct ckpt_commit *);
void	 ckpt_escape(struct buf *, const char *);
char	*ckpt_unescape(const char *, size_t);
/* rm -rf of one entry of dirfd, never following a symlink. */
int	 ckpt_remove_at(int dirfd, const char *name);
int	 ckpt_take(struct checkpoint_store *, struct checkpoint_info *,
	     int record, char **cause);
/* Who owns workspace/: entries' owners are kept relative to it. */
void	 ckpt_base_owner(int sbxfd, uid_t *, gid_t *);
int	 ckpt_tree_empty(struct checkpoint_store *, char hash[65]);
int	 ckpt_list_save(struct checkpoint_store *, char **cause);

#endif
