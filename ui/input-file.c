/*
 * input-file.c: @path in the input line. Tab completes a path in the
 * session's workspace; a message that names @path of a workspace file is
 * sent with the file's text after it, so the agent has it without a tool
 * call. The workspace is the agent's and may be hostile: paths are walked
 * a component at a time with O_NOFOLLOW, so neither ".." nor a symbolic
 * link leads out of it, and only regular files are read, at most
 * INPUT_FILE_MAX bytes each.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ui.h"

#define INPUT_FILE_MAX	(100 * 1024)
#define INPUT_FILE_LIST	40	/* names listed on the status row */

/*
 * Open REL (LEN bytes) below the workspace of STATE, FLAGS for the last
 * component: -1 if any part is missing, "..", a link or not a directory.
 */
static int
input_file_open(const cJSON *state, const char *rel, size_t len, int flags)
{
	const char	*ws = json_str(state, "workspace");
	char		*path = xstrndup(rel, len), *part, *next;
	int		 fd, nfd;

	if (ws == NULL || (fd = open(ws, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		free(path);
		return -1;
	}
	for (part = path; part != NULL && fd != -1; part = next) {
		if ((next = strchr(part, '/')) != NULL)
			*next++ = '\0';
		if (*part == '\0' || strcmp(part, ".") == 0)
			continue;
		if (strcmp(part, "..") == 0)
			nfd = -1;
		else
			nfd = openat(fd, part, O_NOFOLLOW | O_CLOEXEC |
			    (next != NULL ? O_RDONLY | O_DIRECTORY : flags));
		close(fd);
		fd = nfd;
	}
	free(path);
	return fd;
}

size_t
input_file_complete(const cJSON *state, const char *word, size_t len,
    struct buf *common, struct buf *choices)
{
	const char	*slash = NULL, *base;
	size_t		 i, dlen, blen, n = 0;
	struct dirent	*de;
	struct stat	 sb;
	DIR		*d;
	int		 fd;
	char		*name;

	buf_reset(common);
	for (i = 0; i < len; i++) {
		if (word[i] == '/')
			slash = word + i;
	}
	dlen = slash != NULL ? (size_t)(slash - word) + 1 : 0;
	base = word + dlen;
	blen = len - dlen;
	if ((fd = input_file_open(state, word, dlen, O_RDONLY |
	    O_DIRECTORY)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, base, blen) != 0 ||
		    strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    (blen == 0 && de->d_name[0] == '.'))
			continue;
		name = fstatat(dirfd(d), de->d_name, &sb,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode) ?
		    xprintf("%.*s%s/", (int)dlen, word, de->d_name) :
		    xprintf("%.*s%s", (int)dlen, word, de->d_name);
		if (n < INPUT_FILE_LIST)
			buf_addf(choices, "%s@%s", n > 0 ? " " : "", name);
		slash_narrow(common, name, n++);
		free(name);
	}
	closedir(d);
	return n;
}

/* Append the text of workspace file REL (LEN bytes) to B: 0, or -1. */
static int
input_file_add(const cJSON *state, const char *rel, size_t len,
    struct buf *b, char **cause)
{
	struct stat	 sb;
	char		 data[8192];
	ssize_t		 got;
	size_t		 total = 0;
	int		 fd;

	if ((fd = input_file_open(state, rel, len, O_RDONLY)) == -1) {
		*cause = xprintf("@%.*s: no such file in the workspace "
		    "(or a link)", (int)len, rel);
		return -1;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		*cause = xprintf("@%.*s: not a regular file", (int)len, rel);
		return -1;
	}
	buf_addf(b, "\n\n<file path=\"%.*s\">\n", (int)len, rel);
	while (total < INPUT_FILE_MAX && (got = read(fd, data,
	    sizeof data)) > 0) {
		if ((size_t)got > INPUT_FILE_MAX - total)
			got = (ssize_t)(INPUT_FILE_MAX - total);
		buf_add(b, data, (size_t)got);
		total += (size_t)got;
	}
	close(fd);
	if (total < (size_t)sb.st_size)
		buf_addf(b, "\n[cut: the first %d KB of %lld bytes]",
		    INPUT_FILE_MAX / 1024, (long long)sb.st_size);
	buf_adds(b, "\n</file>");
	return 0;
}

char *
input_file_attach(const cJSON *state, const char *text, char **cause)
{
	struct buf	 b = BUF_INIT, files = BUF_INIT;
	const char	*s = text, *at;
	size_t		 len;
	int		 rc = 0;

	buf_adds(&b, text);
	for (s = text; rc == 0 && (at = strchr(s, '@')) != NULL; s = at + 1) {
		if (at != text && strchr(" \t\n", at[-1]) == NULL)
			continue;	/* user@example.com */
		len = strcspn(at + 1, " \t\n");
		while (len > 0 && strchr(".,;:!?)", at[len]) != NULL)
			len--;		/* "see @a.c." */
		if (len == 0)
			continue;
		rc = input_file_add(state, at + 1, len, &files, cause);
	}
	if (rc != 0) {
		buf_release(&b);
		buf_release(&files);
		return NULL;
	}
	buf_add(&b, files.data, files.len);
	buf_release(&files);
	return buf_detach(&b, &len);
}
