/*
 * dynlib.c: load libcurl and libgit2 on first use (see dynlib-curl.h for why).
 *
 * Each library is opened once with RTLD_NOW, so a missing dependency shows
 * at load time rather than at some later call, and never closed. After the
 * first load a call costs one atomic load and an indirect call.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "holt.h"
#include "dynlib-curl.h"
#include "dynlib-git2.h"

struct dynlib {
	const char	*soname;
	const char	*what;
	const char	*const *names;
	void		**fns;
	size_t		 n;
	int		 loaded;	/* atomic: the table is complete */
	char		*error;		/* the first failure, kept */
};

static pthread_mutex_t		dynlib_lock = PTHREAD_MUTEX_INITIALIZER;

#define X(f) #f,
static const char *const	dynlib_curl_names[] = { DYNLIB_CURL_FUNCS };
static const char *const	dynlib_git2_names[] = { DYNLIB_GIT2_FUNCS };
#undef X

static struct dynlib_curl_fns	dynlib_curl_table;
static struct dynlib_git2_fns	dynlib_git2_table;

static struct dynlib dynlib_curl_lib = {
	HOLT_LIBCURL_SONAME, "libcurl", dynlib_curl_names,
	(void **)&dynlib_curl_table, nitems(dynlib_curl_names), 0, NULL
};
static struct dynlib dynlib_git2_lib = {
	HOLT_LIBGIT2_SONAME, "libgit2", dynlib_git2_names,
	(void **)&dynlib_git2_table, nitems(dynlib_git2_names), 0, NULL
};

/* The tables are arrays of function pointers in the lists' order. */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof dynlib_curl_table == sizeof dynlib_curl_names,
    "dynlib_curl_fns is not an array of pointers");
_Static_assert(sizeof dynlib_git2_table == sizeof dynlib_git2_names,
    "dynlib_git2_fns is not an array of pointers");
#endif

static int
dynlib_load(struct dynlib *dl, char **cause)
{
	void		*h, *fn;
	size_t		 i;
	const char	*err;

	if (__atomic_load_n(&dl->loaded, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&dynlib_lock);
	if (dl->loaded || dl->error != NULL)
		goto out;
	if ((h = dlopen(dl->soname, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		err = dlerror();
		dl->error = xprintf("%s: cannot load %s: %s", dl->what,
		    dl->soname, err != NULL ? err : "unknown error");
		goto out;
	}
	for (i = 0; i < dl->n; i++) {
		if ((fn = dlsym(h, dl->names[i])) == NULL) {
			dl->error = xprintf("%s: %s has no %s", dl->what,
			    dl->soname, dl->names[i]);
			goto out;	/* h stays open: harmless */
		}
		dl->fns[i] = fn;
	}
	__atomic_store_n(&dl->loaded, 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&dynlib_lock);
	if (dl->loaded)
		return 0;
	if (cause != NULL)
		*cause = xstrdup(dl->error);
	return -1;
}

int
dynlib_load_curl(char **cause)
{
	return dynlib_load(&dynlib_curl_lib, cause);
}

int
dynlib_load_git2(char **cause)
{
	return dynlib_load(&dynlib_git2_lib, cause);
}

const struct dynlib_curl_fns *
dynlib_curl(void)
{
	char	*cause;

	if (dynlib_load(&dynlib_curl_lib, &cause) != 0)
		fatalx("%s", cause);
	return &dynlib_curl_table;
}

const struct dynlib_git2_fns *
dynlib_git2(void)
{
	char	*cause;

	if (dynlib_load(&dynlib_git2_lib, &cause) != 0)
		fatalx("%s", cause);
	return &dynlib_git2_table;
}

void
dynlib_curl_easy_defaults(void *easy, long timeout_s, char *err)
{
	CURL	*c = easy;

	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https,http");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, CURLPROTO_HTTPS|CURLPROTO_HTTP);
#endif
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 15L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
}
