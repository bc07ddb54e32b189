/*
 * log.c: messages. Commands print to stderr as "holt: message"; the server
 * and envd also append to a log file with a timestamp, since nobody watches
 * their stderr.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "holt.h"

const char	*log_prog = "holt";
static FILE	*log_file;
static int	 log_verbose;

void
log_open(const char *path)
{
	FILE	*f;

	if ((f = fopen(path, "ae")) == NULL)
		return;
	setvbuf(f, NULL, _IOLBF, 0);
	if (log_file != NULL)
		fclose(log_file);
	log_file = f;
}

int
log_fileno(void)
{
	return log_file != NULL ? fileno(log_file) : -1;
}

void
log_set_verbose(int v)
{
	log_verbose = v;
}

static void
log_vwrite(int to_stderr, const char *fmt, va_list ap, const char *suffix)
{
	char		*msg;
	struct timespec	 ts;
	struct tm	 tm;
	char		 when[32];

	xvasprintf(&msg, fmt, ap);
	if (to_stderr) {
		if (suffix != NULL)
			fprintf(stderr, "%s: %s: %s\n", log_prog, msg, suffix);
		else
			fprintf(stderr, "%s: %s\n", log_prog, msg);
	}
	if (log_file != NULL) {
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(log_file, "%s.%03ldZ [%ld] %s%s%s\n", when,
		    ts.tv_nsec / 1000000, (long)getpid(), msg,
		    suffix != NULL ? ": " : "", suffix != NULL ? suffix : "");
	}
	free(msg);
}

void
log_debug(const char *fmt, ...)
{
	va_list	 ap;

	if (!log_verbose && log_file == NULL)
		return;
	va_start(ap, fmt);
	log_vwrite(log_verbose > 1, fmt, ap, NULL);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vwrite(log_file == NULL && log_verbose, fmt, ap, NULL);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	log_vwrite(log_file == NULL, fmt, ap, strerror(saved));
	va_end(ap);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vwrite(log_file == NULL, fmt, ap, NULL);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list	 ap;
	int	 saved = errno;

	va_start(ap, fmt);
	log_vwrite(1, fmt, ap, strerror(saved));
	va_end(ap);
	exit(EXIT_ERR);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vwrite(1, fmt, ap, NULL);
	va_end(ap);
	exit(EXIT_ERR);
}
