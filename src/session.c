/*
 * session.c: session metadata and the event log (DESIGN 7).
 *
 * Appending is O(1): the log is opened O_APPEND and the last seq is kept in
 * memory. Another process may append too (holt pr records pr.opened while
 * the server runs the session), so each append holds an flock and, if the
 * file grew behind our back, rereads the tail for the last seq.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session.h"

#define EVENTLOG_ROOM	(1U * 1024 * 1024)	/* a full disk has room again */
#define EVENTLOG_CHUNK	(256U * 1024)		/* read at a time */

struct eventlog {
	char		*path;
	int		 fd;
	uint64_t	 seq;
	off_t		 end;	/* where our last append ended */
};

int
session_name_valid(const char *name, char **cause)
{
	const char	*p;

	if (*name == '\0' || strlen(name) > 64 || *name == '.' || *name == '-') {
		*cause = xprintf("session '%s': a name is 1 to 64 letters, "
		    "digits, '.', '_' or '-', not starting with '.' or '-'",
		    name);
		return -1;
	}
	for (p = name; *p != '\0'; p++) {
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' &&
		    *p != '.') {
			*cause = xprintf("session '%s': a name is letters, "
			    "digits, '.', '_' or '-'", name);
			return -1;
		}
	}
	return 0;
}

char *
session_dir(const char *name)
{
	return paths_join(paths_sessions_dir(), name);
}

/* A name that is not valid ("../x", "a/b") never names a session. */
int
session_exists(const char *name)
{
	char		*dir, *path, *cause = NULL;
	int		 rc;

	if (name == NULL || session_name_valid(name, &cause) != 0) {
		free(cause);
		return 0;
	}
	dir = session_dir(name);
	path = paths_join(dir, "session.json");
	rc = access(path, F_OK) == 0;
	free(path);
	free(dir);
	return rc;
}

/*
 * Another process runs the session now: the server, or holt run (each
 * holds an flock on its lock file while its agent is open).
 */
int
session_locked(const char *name)
{
	char	*dir, *path;
	int	 fd, held = 0;

	dir = session_dir(name);
	path = paths_join(dir, "lock");
	free(dir);
	if ((fd = open(path, O_RDWR | O_CLOEXEC)) != -1) {
		held = flock(fd, LOCK_EX | LOCK_NB) != 0;
		close(fd);
	}
	free(path);
	return held;
}

/* Made by holt run: the server does not take it over by itself. */
int
session_headless(const char *name)
{
	char	*cause = NULL;
	cJSON	*meta;
	int	 headless = 0;

	if ((meta = session_load(name, &cause)) == NULL) {
		free(cause);
		return 0;
	}
	headless = json_bool(meta, "headless", 0);
	cJSON_Delete(meta);
	return headless;
}

cJSON *
session_load(const char *name, char **cause)
{
	char	*dir, *path;
	cJSON	*meta;

	if (session_name_valid(name, cause) != 0)
		return NULL;
	dir = session_dir(name);
	path = paths_join(dir, "session.json");
	if (access(path, F_OK) != 0) {
		*cause = xprintf("session '%s': no such session", name);
		free(path);
		free(dir);
		return NULL;
	}
	meta = json_load_file(path, cause);
	free(path);
	free(dir);
	return meta;
}

int
session_save(const char *name, const cJSON *meta, char **cause)
{
	char	*dir, *path;
	int	 rc;

	dir = session_dir(name);
	if (file_mkdir_p(dir, 0700) != 0) {
		*cause = xprintf("%s: %s", dir, strerror(errno));
		free(dir);
		return -1;
	}
	path = paths_join(dir, "session.json");
	rc = json_save_file(path, meta, cause);
	free(path);
	free(dir);
	return rc;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **
session_list(size_t *np)
{
	DIR		*d;
	struct dirent	*de;
	char		**names = NULL;
	size_t		 n = 0;

	*np = 0;
	if ((d = opendir(paths_sessions_dir())) == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !session_exists(de->d_name))
			continue;
		names = xreallocarray(names, n + 1, sizeof *names);
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (n != 0)
		qsort(names, n, sizeof *names, cmp_str);
	*np = n;
	return names;
}

cJSON *
evlog_new(const char *type)
{
	cJSON	*ev = cJSON_CreateObject();

	cJSON_AddStringToObject(ev, "type", type);
	return ev;
}

/* The seq of the last complete line of the file, reading only its tail. */
static uint64_t
eventlog_tail_seq(int fd, off_t size)
{
	char		*buf, *line, *nl;
	off_t		 start;
	size_t		 n;
	ssize_t		 r;
	uint64_t	 seq = 0;
	size_t		 want = 65536;
	cJSON		*obj;

	while (size > 0) {
		start = size > (off_t)want ? size - (off_t)want : 0;
		n = (size_t)(size - start);
		buf = xmalloc(n + 1);
		r = pread(fd, buf, n, start);
		if (r != (ssize_t)n) {
			free(buf);
			return 0;
		}
		buf[n] = '\0';
		/* Drop a torn tail, then find the start of the last line. */
		if ((nl = memrchr(buf, '\n', n)) == NULL) {
			free(buf);
			if (start == 0)
				return 0;
			want *= 4;
			continue;
		}
		*nl = '\0';
		line = memrchr(buf, '\n', (size_t)(nl - buf));
		if (line == NULL && start != 0) {
			free(buf);
			want *= 4;
			continue;
		}
		line = line == NULL ? buf : line + 1;
		if ((obj = cJSON_Parse(line)) != NULL) {
			seq = (uint64_t)json_num(obj, "seq", 0);
			cJSON_Delete(obj);
		}
		free(buf);
		return seq;
	}
	return seq;
}

struct eventlog *
eventlog_open(const char *name, char **cause)
{
	struct eventlog	*el;
	char		*dir, *torn;
	struct stat	 sb;
	char		 c;
	int		 exists;

	if (session_name_valid(name, cause) != 0)
		return NULL;
	dir = session_dir(name);
	if (file_mkdir_p(dir, 0700) != 0) {
		*cause = xprintf("%s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	el = xcalloc(1, sizeof *el);
	el->path = paths_join(dir, "events.jsonl");
	free(dir);
	/*
	 * A session (session.json is written after the log's first line)
	 * whose log is gone or empty has lost its history: an error, never
	 * a fresh empty log.
	 */
	exists = session_exists(name);
	el->fd = open(el->path, O_RDWR | O_APPEND | O_CLOEXEC |
	    (exists ? 0 : O_CREAT), 0600);
	if (el->fd == -1 || fstat(el->fd, &sb) != 0) {
		*cause = errno == ENOENT ? xprintf("%s: missing: the session's "
		    "history is gone (holt kill-session --rm removes what is "
		    "left)", el->path) : file_open_error(el->path, errno);
		eventlog_close(el);
		return NULL;
	}
	if (exists && sb.st_size == 0) {
		*cause = xprintf("%s: empty: the session's history is gone "
		    "(holt kill-session --rm removes what is left)", el->path);
		eventlog_close(el);
		return NULL;
	}
	/*
	 * Stat again under the lock: another writer may have appended since,
	 * and a size read before the lock could fall inside its new line,
	 * which the cut below would then tear.
	 */
	flock(el->fd, LOCK_EX);
	if (fstat(el->fd, &sb) != 0) {
		*cause = file_open_error(el->path, errno);
		flock(el->fd, LOCK_UN);
		eventlog_close(el);
		return NULL;
	}
	/* A torn last line: cut it off so the next append starts clean. */
	if (sb.st_size > 0 && pread(el->fd, &c, 1, sb.st_size - 1) == 1 &&
	    c != '\n') {
		off_t keep = sb.st_size;
		char tmp;
		while (keep > 0 && pread(el->fd, &tmp, 1, keep - 1) == 1 &&
		    tmp != '\n')
			keep--;
		torn = xprintf("%s: dropped a torn last line (%lld bytes)",
		    el->path, (long long)(sb.st_size - keep));
		log_warnx("%s", torn);
		free(torn);
		if (ftruncate(el->fd, keep) != 0)
			log_warn("%s: truncate", el->path);
		sb.st_size = keep;
	}
	el->seq = eventlog_tail_seq(el->fd, sb.st_size);
	el->end = sb.st_size;
	flock(el->fd, LOCK_UN);
	return el;
}

void
eventlog_close(struct eventlog *el)
{
	if (el == NULL)
		return;
	if (el->fd != -1)
		close(el->fd);
	free(el->path);
	free(el);
}

uint64_t
eventlog_last_seq(struct eventlog *el)
{
	return el->seq;
}

const char *
eventlog_path(struct eventlog *el)
{
	return el->path;
}

/* Room for more lines: at least EVENTLOG_ROOM bytes free where it lives. */
int
eventlog_has_room(struct eventlog *el)
{
	struct statvfs	 sv;

	if (fstatvfs(el->fd, &sv) != 0)
		return 1;	/* cannot tell: try the write */
	return (uint64_t)sv.f_bavail * sv.f_frsize >= EVENTLOG_ROOM;
}

/*
 * A write that fails (the disk is full) leaves no part of its line behind:
 * the file is cut back to where it ended, so the next append starts on a
 * line of its own and the log never has a torn line in its middle.
 */
uint64_t
eventlog_append(struct eventlog *el, cJSON *ev, int sync)
{
	struct stat	 sb;
	char		*line, *ts;
	size_t		 len;
	off_t		 start = -1;
	cJSON		*rest, *c, *next;
	int		 pass, is_type, failed = 0, saved;

	flock(el->fd, LOCK_EX);
	if (fstat(el->fd, &sb) == 0) {
		start = sb.st_size;
		if (sb.st_size != el->end)
			el->seq = eventlog_tail_seq(el->fd, sb.st_size);
	}
	el->seq++;

	/* seq, ts and type first, so the log reads well: re-link the fields. */
	rest = ev->child;
	ev->child = NULL;
	cJSON_AddNumberToObject(ev, "seq", (double)el->seq);
	ts = json_time_now();
	cJSON_AddStringToObject(ev, "ts", ts);
	free(ts);
	for (pass = 0; pass < 2; pass++) {
		for (c = rest; c != NULL; c = next) {
			next = c->next;
			is_type = c->string != NULL && strcmp(c->string, "type") == 0;
			if (pass == 0 && !is_type)
				continue;
			if (pass == 1 && is_type)
				continue;
			if (c == rest)
				rest = next;
			if (c->prev != NULL && c->prev->next == c)
				c->prev->next = next;
			if (next != NULL)
				next->prev = c->prev;
			c->next = c->prev = NULL;
			if (c->string != NULL && (strcmp(c->string, "seq") == 0 ||
			    strcmp(c->string, "ts") == 0))
				cJSON_Delete(c);
			else
				cJSON_AddItemToArray(ev, c);	/* keeps its key */
		}
	}

	/* Whatever reached here, the log holds only valid UTF-8. */
	utf8_repair_json(ev);
	line = json_print(ev);
	len = strlen(line);
	line = xrealloc(line, len + 2);
	line[len++] = '\n';
	line[len] = '\0';
	if (file_write_all(el->fd, line, len) != 0 ||
	    (sync && fdatasync(el->fd) != 0)) {
		saved = errno;
		log_warn("%s: append", el->path);
		if (start != -1 && ftruncate(el->fd, start) != 0)
			log_warn("%s: cutting back a failed append", el->path);
		el->seq--;
		failed = 1;
		errno = saved;
	}
	free(line);
	saved = errno;
	if (fstat(el->fd, &sb) == 0)
		el->end = sb.st_size;
	flock(el->fd, LOCK_UN);
	errno = saved;
	return failed ? 0 : el->seq;
}

cJSON *
eventlog_read(const char *name, char **warning, char **cause)
{
	return eventlog_read_last(name, 0, warning, cause);
}

cJSON *
eventlog_read_last(const char *name, size_t last, char **warning,
    char **cause)
{
	int	 truncated;

	return eventlog_read_tail(name, last, 0, &truncated, warning, cause);
}

/*
 * One line of the log, all n bytes of it: exactly one JSON object with a
 * type. NUL bytes (a block of zeros after a crash) or a second object on
 * the line (two lines glued together) make it corrupt, never shorter.
 */
static cJSON *
eventlog_parse_line(const char *line, size_t n, const char **why)
{
	const char	*end = NULL;
	cJSON		*ev;

	if (memchr(line, '\0', n) != NULL) {
		*why = "NUL bytes";
		return NULL;
	}
	ev = cJSON_ParseWithLengthOpts(line, n, &end, 0);
	if (ev == NULL || !cJSON_IsObject(ev)) {
		cJSON_Delete(ev);
		*why = "not a JSON object";
		return NULL;
	}
	while (end != NULL && end < line + n && (*end == ' ' ||
	    *end == '\t' || *end == '\r'))
		end++;
	if (end != line + n) {
		cJSON_Delete(ev);
		*why = "more than one event on the line";
		return NULL;
	}
	if (json_str(ev, "type") == NULL) {
		cJSON_Delete(ev);
		*why = "no type";
		return NULL;
	}
	return ev;
}

/* Lines (newlines) in the first n bytes of fd, read a chunk at a time. */
static unsigned int
lines_before(int fd, off_t n)
{
	char		 chunk[65536];
	unsigned int	 lines = 0;
	off_t		 at = 0;
	ssize_t		 r, i;

	while (at < n) {
		r = pread(fd, chunk, (size_t)(n - at < (off_t)sizeof chunk ?
		    n - at : (off_t)sizeof chunk), at);
		if (r <= 0)
			break;
		for (i = 0; i < r; i++)
			lines += chunk[i] == '\n';
		at += r;
	}
	return lines;
}

/* A seq that does not follow the one before: a warning (the first). */
static void
eventlog_seq_check(const char *path, unsigned int lineno, uint64_t seq,
    uint64_t *prev, char **warning)
{
	if (*prev != 0 && seq != *prev + 1 && *warning == NULL)
		*warning = xprintf("%s:%u: seq %llu %s %llu on the line "
		    "before%s", path, lineno, (unsigned long long)seq,
		    seq <= *prev ? "repeats or goes back from" :
		    "skips ahead of", (unsigned long long)*prev,
		    seq <= *prev ? "" : ": events are missing");
	*prev = seq;
}

/*
 * The seq and type of a line as eventlog_append writes it ({"seq":N,
 * "ts":"...","type":"T", ...), without parsing it: 1, or 0 when the line
 * does not start so (it is then parsed whole).
 */
static int
eventlog_peek(const char *line, size_t n, uint64_t *seq, char *type,
    size_t size)
{
	static const char	 head[] = "{\"seq\":", ts[] = ",\"ts\":\"";
	static const char	 ty[] = "\",\"type\":\"";
	const char		*p = line + sizeof head - 1, *end = line + n, *q;
	uint64_t		 v = 0;

	if (n < sizeof head || memcmp(line, head, sizeof head - 1) != 0)
		return 0;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	if ((size_t)(end - p) < sizeof ts || memcmp(p, ts, sizeof ts - 1) != 0)
		return 0;
	p += sizeof ts - 1;
	if ((q = memchr(p, '"', (size_t)(end - p))) == NULL)
		return 0;
	p = q;
	if ((size_t)(end - p) < sizeof ty || memcmp(p, ty, sizeof ty - 1) != 0)
		return 0;
	p += sizeof ty - 1;
	if ((q = memchr(p, '"', (size_t)(end - p))) == NULL ||
	    (size_t)(q - p) >= size || memchr(p, '\\', (size_t)(q - p)) != NULL)
		return 0;
	memcpy(type, p, (size_t)(q - p));
	type[q - p] = '\0';
	*seq = v;
	return 1;
}

/*
 * A line no one wants is not parsed; it is checked for what a crash or a
 * bad copy leaves (NUL bytes, two lines glued: a second {"seq": cannot be
 * inside a string, whose quotes are escaped) and must end its object.
 */
static const char *
eventlog_check_line(const char *line, size_t n)
{
	static const char	 head[] = "{\"seq\":";
	const char		*p, *end = line + n;

	if (memchr(line, '\0', n) != NULL)
		return "NUL bytes";
	for (p = line + 1; (p = memchr(p, '{', (size_t)(end - p))) != NULL;
	    p++) {
		if ((size_t)(end - p) >= sizeof head - 1 &&
		    memcmp(p, head, sizeof head - 1) == 0)
			return "more than one event on the line";
	}
	while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t' ||
	    line[n - 1] == '\r'))
		n--;
	if (n == 0 || line[n - 1] != '}')
		return "not a JSON object";
	return NULL;
}

/* One line: checked and skipped, or parsed and handed on. 0, or -1. */
static int
eventlog_walk_line(struct eventlog_line *l, const char *data,
    int (*want)(void *, const struct eventlog_line *),
    void (*fn)(void *, cJSON *, const struct eventlog_line *), void *arg,
    uint64_t *prev, const char **why, char **warning)
{
	char	 type[64];
	cJSON	*ev;

	l->data = data;
	if (eventlog_peek(data, l->len, &l->seq, type, sizeof type)) {
		l->type = type;
		if (!want(arg, l)) {
			if ((*why = eventlog_check_line(data, l->len)) != NULL)
				return -1;
			eventlog_seq_check(l->path, l->lineno, l->seq, prev,
			    warning);
			return 0;
		}
	}
	if ((ev = eventlog_parse_line(data, l->len, why)) == NULL)
		return -1;
	l->seq = (uint64_t)json_num(ev, "seq", 0);
	eventlog_seq_check(l->path, l->lineno, l->seq, prev, warning);
	if (l->type == NULL) {
		l->type = json_str(ev, "type");
		if (!want(arg, l)) {
			cJSON_Delete(ev);
			return 0;
		}
	}
	fn(arg, ev, l);
	return 0;
}

int
eventlog_walk(const char *name,
    int (*want)(void *, const struct eventlog_line *),
    void (*fn)(void *, cJSON *, const struct eventlog_line *), void *arg,
    char **warning, char **cause)
{
	char			*dir, *path, *chunk, *nl;
	struct buf		 line = BUF_INIT;
	struct eventlog_line	 l;
	uint64_t		 prev = 0;
	off_t			 at = 0;
	const char		*why = NULL, *data;
	ssize_t			 r, i, from;
	int			 fd, rc = -1;

	*warning = NULL;
	dir = session_dir(name);
	path = paths_join(dir, "events.jsonl");
	free(dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		rc = errno == ENOENT ? 0 : -1;
		if (rc != 0)
			*cause = file_open_error(path, errno);
		free(path);
		return rc;
	}
	memset(&l, 0, sizeof l);
	l.path = path;
	chunk = xmalloc(EVENTLOG_CHUNK);
	for (;;) {
		r = read(fd, chunk, EVENTLOG_CHUNK);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1) {
			*cause = xprintf("%s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		for (from = 0; from < r; from = i + 1) {
			nl = memchr(chunk + from, '\n', (size_t)(r - from));
			i = nl != NULL ? nl - chunk : r;
			if (nl == NULL || line.len != 0) {
				buf_add(&line, chunk + from, (size_t)(i - from));
				if (nl == NULL)
					break;
			}
			l.lineno++;
			/* A whole line in the chunk is read where it is. */
			data = line.len != 0 ? line.data : chunk + from;
			l.len = line.len != 0 ? line.len : (size_t)(i - from);
			l.off = at + from - (off_t)(line.len != 0 ?
			    line.len - (size_t)(i - from) : 0);
			l.type = NULL;
			if (l.len != 0 && eventlog_walk_line(&l, data, want, fn,
			    arg, &prev, &why, warning) != 0) {
				*cause = xprintf("%s:%u: corrupt event log line "
				    "(%s)", path, l.lineno, why);
				goto out;
			}
			buf_reset(&line);
		}
		at += r;
	}
	if (line.len > 0)
		*warning = xprintf("%s:%u: dropped a torn last line", path,
		    l.lineno + 1);
	rc = 0;
out:
	free(chunk);
	buf_release(&line);
	free(path);
	close(fd);
	return rc;
}

struct eventlog_by_type {
	int	(*want)(const char *type);
	void	(*fn)(void *, cJSON *);
	void	*arg;
};

static int
eventlog_type_wanted(void *arg, const struct eventlog_line *l)
{
	struct eventlog_by_type	*bt = arg;

	return bt->want == NULL || bt->want(l->type);
}

static void
eventlog_type_event(void *arg, cJSON *ev, const struct eventlog_line *l)
{
	struct eventlog_by_type	*bt = arg;

	(void)l;
	bt->fn(bt->arg, ev);
}

int
eventlog_scan(const char *name, int (*want)(const char *type),
    void (*fn)(void *, cJSON *), void *arg, char **warning, char **cause)
{
	struct eventlog_by_type	 bt = { want, fn, arg };

	return eventlog_walk(name, eventlog_type_wanted, eventlog_type_event,
	    &bt, warning, cause);
}

double
eventlog_line_num(const struct eventlog_line *l, const char *key)
{
	const char	*p = l->data, *end = l->data + l->len;
	size_t		 n = strlen(key);
	char		 num[64];

	while ((p = memchr(p, '"', (size_t)(end - p))) != NULL) {
		p++;
		if ((size_t)(end - p) < n + 2 || memcmp(p, key, n) != 0 ||
		    p[n] != '"' || p[n + 1] != ':')
			continue;
		p += n + 2;
		n = (size_t)(end - p) < sizeof num - 1 ? (size_t)(end - p) :
		    sizeof num - 1;
		memcpy(num, p, n);
		num[n] = '\0';
		return strtod(num, NULL);
	}
	return 0;
}

cJSON *
eventlog_read_at(struct eventlog *el, off_t off, size_t len, char **cause)
{
	char		*data = xmalloc(len + 1);
	const char	*why;
	cJSON		*ev;
	size_t		 done;
	ssize_t		 r;

	for (done = 0; done < len; done += (size_t)r) {
		r = pread(el->fd, data + done, len - done, off + (off_t)done);
		if (r == -1 && errno == EINTR)
			r = 0;
		else if (r <= 0) {
			*cause = xprintf("%s: %s", el->path, r == 0 ?
			    "shorter than it was" : strerror(errno));
			free(data);
			return NULL;
		}
	}
	if ((ev = eventlog_parse_line(data, len, &why)) == NULL)
		*cause = xprintf("%s: corrupt event log line at byte %lld "
		    "(%s)", el->path, (long long)off, why);
	free(data);
	return ev;
}

cJSON *
eventlog_read_tail(const char *name, size_t last, size_t max_bytes,
    int *truncated, char **warning, char **cause)
{
	char		*dir, *path, *data = NULL, *line, *next, *start, *first;
	size_t		 len, nl = 0, off;
	unsigned int	 lineno;
	off_t		 base = 0;
	struct stat	 st;
	cJSON		*all, *ev;
	int		 fd;
	ssize_t		 r;
	uint64_t	 seq, prev = 0;
	const char	*why;

	*warning = NULL;
	*truncated = 0;
	dir = session_dir(name);
	path = paths_join(dir, "events.jsonl");
	free(dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		if (errno == ENOENT) {
			free(path);
			return cJSON_CreateArray();
		}
		*cause = file_open_error(path, errno);
		free(path);
		return NULL;
	}
	/*
	 * With a bound in bytes only the log's tail is read, and the byte
	 * before it (a line starts there if that byte ends a line): a long
	 * session's log is never all in memory for an attach.
	 */
	if (fstat(fd, &st) != 0)
		goto fail;
	len = (size_t)st.st_size;
	if (max_bytes != 0 && len > max_bytes + 1) {
		base = st.st_size - (off_t)(max_bytes + 1);
		len = max_bytes + 1;
	}
	data = xmalloc(len + 1);
	for (off = 0; off < len; off += (size_t)r) {
		r = pread(fd, data + off, len - off, base + (off_t)off);
		if (r == -1 && errno == EINTR) {
			r = 0;
			continue;
		}
		if (r <= 0)
			break;
	}
	if (off < len) {
		if (off == 0 && len > 0)
			goto fail;
		len = off;	/* it shrank meanwhile: what is there */
	}
	data[len] = '\0';
	/* In a tail, data[0] is the byte before the window. */
	start = base != 0 ? data + 1 : data;
	all = cJSON_CreateArray();
	line = start;
	if ((last != 0 || max_bytes != 0) && len > 0) {
		/*
		 * Only the last lines are parsed: attach to a long log is
		 * O(last). Back from the end, line start by line start, while
		 * both bounds hold.
		 */
		line = data + len;
		for (off = len; off-- > (size_t)(start - data); ) {
			if (off != 0 && data[off - 1] != '\n')
				continue;
			if (max_bytes != 0 && len - off > max_bytes)
				break;
			line = data + off;
			if (last != 0 && ++nl >= last)
				break;
		}
		*truncated = base != 0 || line != data;
	}
	/* Line numbers count from the first parsed; the rest when needed. */
	first = line;
	lineno = 0;
	for (; line < data + len; line = next) {
		lineno++;
		if ((next = memchr(line, '\n', (size_t)(data + len - line))) == NULL) {
			*warning = xprintf("%s:%u: dropped a torn last line",
			    path, lineno + lines_before(fd, base +
			    (off_t)(first - data)));
			break;
		}
		*next++ = '\0';
		if (next - 1 == line)
			continue;	/* an empty line holds nothing */
		if ((ev = eventlog_parse_line(line, (size_t)(next - 1 - line),
		    &why)) == NULL) {
			*cause = xprintf("%s:%u: corrupt event log line (%s)",
			    path, lineno + lines_before(fd, base +
			    (off_t)(first - data)), why);
			cJSON_Delete(all);
			free(data);
			free(path);
			close(fd);
			return NULL;
		}
		seq = (uint64_t)json_num(ev, "seq", 0);
		if (prev != 0 && seq != prev + 1 && *warning == NULL)
			eventlog_seq_check(path, lineno + lines_before(fd, base +
			    (off_t)(first - data)), seq, &prev, warning);
		prev = seq;
		cJSON_AddItemToArray(all, ev);
	}
	free(data);
	free(path);
	close(fd);
	return all;

fail:
	*cause = xprintf("%s: %s", path, strerror(errno));
	free(data);
	free(path);
	close(fd);
	return NULL;
}

int
session_event_append(const char *name, const char *type, cJSON *fields,
    char **cause)
{
	struct eventlog	*el;
	cJSON		*ev, *f;

	if (!session_exists(name)) {
		*cause = xprintf("session '%s': no such session", name);
		return -1;
	}
	if ((el = eventlog_open(name, cause)) == NULL)
		return -1;
	ev = evlog_new(type);
	if (fields != NULL) {
		cJSON_ArrayForEach(f, fields)
			cJSON_AddItemToObject(ev, f->string,
			    cJSON_Duplicate(f, 1));
	}
	secret_redact_json(ev);
	if (eventlog_append(el, ev, 1) == 0) {
		*cause = xprintf("%s: %s", eventlog_path(el), strerror(errno));
		cJSON_Delete(ev);
		eventlog_close(el);
		return -1;
	}
	cJSON_Delete(ev);
	eventlog_close(el);
	return 0;
}
