/*
 * checkpoint-int.h: what checkpoint.c (the store and taking checkpoints)
 * shares with checkpoint-restore.c (putting them back). Not for others.
 */
#ifndef CHECKPOINT_INT_H
#define CHECKPOINT_INT_H

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
	char			 dirty[256];	/* objects/xx/ to fsync */
	size_t			 nnew;		/* objects made since the sync */
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
