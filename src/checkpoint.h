/*
 * checkpoint.h: checkpoints of a sandbox's files (DESIGN 15).
 *
 *	data/sandboxes/<id>/checkpoints/objects/ab/cdef...	content, by SHA-256
 *	data/sandboxes/<id>/checkpoints/list			the checkpoints
 *	data/sandboxes/<id>/checkpoints/index			the stat cache
 *	data/sandboxes/<id>/checkpoints/journal		new objects' bytes
 *	data/sandboxes/<id>/checkpoints/restore			redo journal
 *
 * A checkpoint covers the sandbox's roots (workspace/, home/ and, where it
 * exists, the root overlay's root/) exactly: every file, ignored or not,
 * modes, mtimes, symlinks, FIFOs, hard links and empty directories. Objects
 * are files (blobs) and directories (trees, which name their entries'
 * objects) and a commit naming the roots' trees, as in git: an unchanged
 * directory is the same tree, so a checkpoint stores only what changed.
 * The scan is incremental like git's index: a file whose stat matches the
 * cache is not read again, a directory none of whose entries changed is
 * the same tree again (checkpoint-scan.c, checkpoint-index.c).
 *
 * The roots belong to the agent: they are walked with openat, never
 * following a symlink, FIFOs and devices are never opened, and nothing
 * is ever written outside them.
 *
 * Call order: checkpoint_store_open (takes the store's lock) ->
 * checkpoint_take / checkpoint_restore / checkpoint_list ... ->
 * checkpoint_store_close. Any process may do this: the lock serialises
 * the server's agent and a one-shot command.
 */
#ifndef CHECKPOINT_H
#define CHECKPOINT_H

#include <stdint.h>

#include "holt.h"

/* sha256.c */
struct sha256 {
	uint32_t	 h[8];
	uint64_t	 len;
	unsigned char	 buf[64];
	size_t		 used;
};
void	 sha256_init(struct sha256 *);
void	 sha256_update(struct sha256 *, const void *, size_t);
void	 sha256_final(struct sha256 *, unsigned char out[32]);
void	 sha256_hex(const unsigned char h[32], char out[65]);

struct checkpoint_store;

struct checkpoint_info {
	long long	 id;		/* 1, 2, ... per sandbox */
	char		 commit[65];	/* the commit object */
	uint64_t	 time_ms;
	uint64_t	 files;		/* entries in the checkpoint */
	uint64_t	 changed;	/* entries not in the one before */
	uint64_t	 bytes;		/* bytes this one added to the store */
};

/* The roots a checkpoint covers, relative to the sandbox's directory. */
extern const char *const checkpoint_roots[];

struct checkpoint_store *checkpoint_store_open(const char *sandbox_dir,
	     char **cause);
/* The same without waiting: NULL with *cause NULL when another has it. */
struct checkpoint_store *checkpoint_store_open_now(const char *sandbox_dir,
	     char **cause);
void	 checkpoint_store_close(struct checkpoint_store *);

/*
 * Take a checkpoint of the sandbox's roots. Fails (nothing recorded) when
 * a file cannot be read (mode 000), or the store cannot be written (disk
 * full): a checkpoint is whole or not taken.
 */
int	 checkpoint_take(struct checkpoint_store *, struct checkpoint_info *,
	     char **cause);
/* The checkpoints kept, oldest first (an array of checkpoint_info). */
struct checkpoint_info *checkpoint_list(struct checkpoint_store *, size_t *n);
int	 checkpoint_find(struct checkpoint_store *, long long id,
	     struct checkpoint_info *);
/* Drop the oldest until the store is within max bytes (0: no bound). */
int	 checkpoint_prune(struct checkpoint_store *, uint64_t max,
	     char **cause);
uint64_t checkpoint_store_bytes(struct checkpoint_store *);

/*
 * Make the sandbox's roots exactly what checkpoint id holds, changing only
 * what differs. The sandbox must not run meanwhile (the caller stops it).
 * A redo journal, written first, makes it all or nothing across a crash:
 * the restore is idempotent, so an unfinished one (checkpoint_pending
 * finds it) is finished by running it again. The caller records what it
 * must (its tag, kept in the journal), then calls checkpoint_restore_done.
 */
int	 checkpoint_restore(struct checkpoint_store *, long long id,
	     const char *tag, char **cause);
int	 checkpoint_restore_done(struct checkpoint_store *);
/* An unfinished restore: its tag (caller frees) and checkpoint, or NULL. */
char	*checkpoint_pending(struct checkpoint_store *, long long *id);
/* Write checkpoint id's roots into a new sandbox's directory (a fork). */
int	 checkpoint_export(struct checkpoint_store *, long long id,
	     const char *dst_sandbox_dir, char **cause);
/* Give a fork's new store the same checkpoints (objects hard-linked). */
int	 checkpoint_store_clone(struct checkpoint_store *,
	     const char *dst_sandbox_dir, char **cause);

/* Test hook: stop (SIGSTOP to self) after this many restored entries. */
#define CHECKPOINT_TEST_STOP_ENV "HOLT_TEST_RESTORE_STOP"
/* Test hook: a server's checkpoint waits until this file exists (60 s). */
#define CHECKPOINT_TEST_WAIT_ENV "HOLT_TEST_CHECKPOINT_WAIT"
/* Test hook: a server's restore waits until this file exists (60 s). */
#define CHECKPOINT_TEST_RESTORE_WAIT_ENV "HOLT_TEST_RESTORE_WAIT"

#endif
