/*
 * sandbox-mask.c: hiding what only root may read in the host trees a sandbox
 * sees read-only (/etc).
 *
 * bwrap maps the sandbox user to the user who runs holt. When that is root,
 * every file of the read-only /etc is readable inside, /etc/shadow and the
 * SSH host keys included. sandbox_mask_argv lists the bwrap arguments that
 * cover each file and directory that others may not read: a file with
 * /dev/null bound over it, a directory with an empty read-only tmpfs. For
 * any other user the kernel's permissions already do this and nothing needs
 * covering, so callers use it only as root.
 *
 * Cost: one lstat per entry of the tree, a few milliseconds for /etc, paid
 * at every start of a sandbox.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "holt.h"
#include "sandbox-mask.h"

#define SANDBOX_MASK_DEPTH 16

struct sandbox_mask_list {
	char	**argv;
	size_t	  n;
};

static void
sandbox_mask_add(struct sandbox_mask_list *l, const char *s)
{
	l->argv = xreallocarray(l->argv, l->n + 2, sizeof *l->argv);
	l->argv[l->n++] = xstrdup(s);
	l->argv[l->n] = NULL;
}

static void
sandbox_mask_walk(struct sandbox_mask_list *l, const char *dir, int depth)
{
	struct dirent	*de;
	struct stat	 st;
	char		*path;
	DIR		*d;

	if (depth > SANDBOX_MASK_DEPTH || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		path = xprintf("%s/%s", dir, de->d_name);
		if (lstat(path, &st) != 0) {
			free(path);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			if ((st.st_mode & (S_IROTH | S_IXOTH)) !=
			    (S_IROTH | S_IXOTH)) {
				sandbox_mask_add(l, "--tmpfs");
				sandbox_mask_add(l, path);
				sandbox_mask_add(l, "--remount-ro");
				sandbox_mask_add(l, path);
			} else
				sandbox_mask_walk(l, path, depth + 1);
		} else if (S_ISREG(st.st_mode) && (st.st_mode & S_IROTH) == 0) {
			sandbox_mask_add(l, "--ro-bind");
			sandbox_mask_add(l, "/dev/null");
			sandbox_mask_add(l, path);
		}
		free(path);
	}
	closedir(d);
}

/*
 * The bwrap arguments that cover, under top, what others may not read: a
 * NULL-terminated array the caller frees with sandbox_mask_free. Give them
 * to bwrap after the mount of top itself. Empty (not NULL) when there is
 * nothing to cover or top cannot be read.
 */
char **
sandbox_mask_argv(const char *top)
{
	struct sandbox_mask_list	l = { NULL, 0 };

	l.argv = xcalloc(1, sizeof *l.argv);
	sandbox_mask_walk(&l, top, 0);
	return l.argv;
}

void
sandbox_mask_free(char **argv)
{
	strv_free(argv);
}
