/*
 * paths.c: the file layout of DESIGN 3. HOLT_HOME=H puts everything under H
 * (config/, data/, run/), which is how tests keep away from a user's
 * sessions; otherwise the XDG directories are used.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "holt.h"

static char *
home_sub(const char *sub)
{
	const char	*h = getenv("HOLT_HOME");

	if (h != NULL && *h != '\0')
		return xprintf("%s/%s", h, sub);
	return NULL;
}

static char *
xdg(const char *var, const char *fallback)
{
	const char	*v = getenv(var), *home = getenv("HOME");

	if (v != NULL && *v == '/')
		return xprintf("%s/holt", v);
	if (home == NULL || *home == '\0')
		home = "/";
	return xprintf("%s/%s/holt", home, fallback);
}

const char *
paths_config_dir(void)
{
	static char	*dir;

	if (dir == NULL && (dir = home_sub("config")) == NULL)
		dir = xdg("XDG_CONFIG_HOME", ".config");
	return dir;
}

const char *
paths_data_dir(void)
{
	static char	*dir;

	if (dir == NULL && (dir = home_sub("data")) == NULL)
		dir = xdg("XDG_DATA_HOME", ".local/share");
	return dir;
}

const char *
paths_run_dir(void)
{
	static char	*dir;
	const char	*v;
	struct stat	 sb;

	if (dir != NULL)
		return dir;
	if ((dir = home_sub("run")) == NULL) {
		v = getenv("XDG_RUNTIME_DIR");
		if (v != NULL && *v == '/')
			dir = xprintf("%s/holt", v);
		else
			dir = xprintf("/tmp/holt-%ld", (long)getuid());
	}
	if (file_mkdir_p(dir, 0700) != 0)
		fatal("%s", dir);
	/* The directory guards the sockets: it must be ours and private. */
	if (lstat(dir, &sb) != 0)
		fatal("%s", dir);
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != getuid())
		fatalx("%s: not a directory owned by uid %ld", dir,
		    (long)getuid());
	if ((sb.st_mode & 077) != 0 && chmod(dir, 0700) != 0)
		fatal("%s: chmod", dir);
	return dir;
}

const char *
paths_sandboxes_dir(void)
{
	static char	*dir;

	if (dir == NULL)
		dir = paths_join(paths_data_dir(), "sandboxes");
	return dir;
}

const char *
paths_sessions_dir(void)
{
	static char	*dir;

	if (dir == NULL)
		dir = paths_join(paths_data_dir(), "sessions");
	return dir;
}

char *
paths_join(const char *a, const char *b)
{
	size_t	 n = strlen(a);

	if (n != 0 && a[n - 1] == '/')
		return xprintf("%s%s", a, b);
	return xprintf("%s/%s", a, b);
}

const char *
paths_self_dir(void)
{
	static char	 dir[PATH_MAX];
	ssize_t		 n;
	char		*slash;

	if (dir[0] != '\0')
		return dir;
	n = readlink("/proc/self/exe", dir, sizeof dir - 1);
	if (n <= 0) {
		xstrlcpy(dir, ".", sizeof dir);
		return dir;
	}
	dir[n] = '\0';
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir)
		*slash = '\0';
	return dir;
}

/*
 * Find a helper program (holt-envd): $HOLT_<NAME> for tests, then beside the
 * running binary (a build tree), then the installed libexec directory.
 */
char *
paths_find_helper(const char *name)
{
	char		 var[64], *p;
	const char	*v;
	size_t		 i;

	xstrlcpy(var, "HOLT_", sizeof var);
	for (i = 0; name[i] != '\0' && i + 6 < sizeof var; i++) {
		char c = name[i];
		if (c == '-')
			c = '_';
		var[5 + i] = (char)(c >= 'a' && c <= 'z' ? c - 32 : c);
		var[6 + i] = '\0';
	}
	if ((v = getenv(var)) != NULL && access(v, X_OK) == 0)
		return xstrdup(v);
	p = xprintf("%s/%s", paths_self_dir(), name);
	if (access(p, X_OK) == 0)
		return p;
	free(p);
	p = xprintf("%s/%s", HOLT_LIBEXECDIR, name);
	if (access(p, X_OK) == 0)
		return p;
	free(p);
	return NULL;
}
