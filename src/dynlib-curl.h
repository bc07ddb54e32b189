/*
 * dynlib-curl.h: libcurl, loaded when first used.
 *
 * holt-full links neither libcurl nor libgit2. Loading them maps some forty
 * libraries (OpenSSL, GnuTLS, mbed TLS, Kerberos, LDAP, ...) and relocating
 * those makes about 6 MB resident in every process that has them, the idle
 * server's included, though it has made no request and touched no
 * repository. A file that calls libcurl includes this header after
 * <curl/curl.h>: each function listed below is then a macro reading its
 * address from a table that dlopen and dlsym fill on first use, once per
 * process (dynlib.c). The cost is an indirect call.
 *
 * A libcurl function missing from this list fails to link ("undefined
 * reference to ..."): add it to both the X() list and the #define lines.
 *
 * Call order: dynlib_load_curl loads the library or returns -1 with *cause;
 * call it where a failure can be reported. Any listed function loads it too,
 * and exits the process (fatal) if it cannot. Load it before forking a child
 * that cannot reach the library's files (a chroot). Thread-safe.
 */
#ifndef DYNLIB_CURL_H
#define DYNLIB_CURL_H

#include <curl/curl.h>

#ifndef HOLT_LIBCURL_SONAME
#define HOLT_LIBCURL_SONAME	"libcurl.so.4"
#endif

#define DYNLIB_CURL_FUNCS \
	X(curl_easy_cleanup) \
	X(curl_easy_escape) \
	X(curl_easy_getinfo) \
	X(curl_easy_init) \
	X(curl_easy_perform) \
	X(curl_easy_setopt) \
	X(curl_easy_strerror) \
	X(curl_free) \
	X(curl_global_init) \
	X(curl_multi_add_handle) \
	X(curl_multi_assign) \
	X(curl_multi_cleanup) \
	X(curl_multi_info_read) \
	X(curl_multi_init) \
	X(curl_multi_perform) \
	X(curl_multi_poll) \
	X(curl_multi_remove_handle) \
	X(curl_multi_setopt) \
	X(curl_multi_socket_action) \
	X(curl_multi_wakeup) \
	X(curl_slist_append) \
	X(curl_slist_free_all)

#define X(f) __typeof__(&f) f;
struct dynlib_curl_fns {
	DYNLIB_CURL_FUNCS
};
#undef X

int	 dynlib_load_curl(char **cause);
/*
 * What every holt request sets: no redirects, http(s) only, 15 s to
 * connect, timeout_s in all (0: none), no signals, errors into err
 * (CURL_ERROR_SIZE bytes).
 */
void	 dynlib_curl_easy_defaults(void *easy, long timeout_s, char *err);
const struct dynlib_curl_fns *dynlib_curl(void);

#define DYNLIB_CURL(f)	(dynlib_curl()->f)

/* curl.h wraps these three in type-checking macros: that check is lost. */
#undef curl_easy_getinfo
#undef curl_easy_setopt
#undef curl_multi_setopt

#define curl_easy_cleanup DYNLIB_CURL(curl_easy_cleanup)
#define curl_easy_escape DYNLIB_CURL(curl_easy_escape)
#define curl_easy_getinfo DYNLIB_CURL(curl_easy_getinfo)
#define curl_easy_init DYNLIB_CURL(curl_easy_init)
#define curl_easy_perform DYNLIB_CURL(curl_easy_perform)
#define curl_easy_setopt DYNLIB_CURL(curl_easy_setopt)
#define curl_easy_strerror DYNLIB_CURL(curl_easy_strerror)
#define curl_free DYNLIB_CURL(curl_free)
#define curl_global_init DYNLIB_CURL(curl_global_init)
#define curl_multi_add_handle DYNLIB_CURL(curl_multi_add_handle)
#define curl_multi_assign DYNLIB_CURL(curl_multi_assign)
#define curl_multi_cleanup DYNLIB_CURL(curl_multi_cleanup)
#define curl_multi_info_read DYNLIB_CURL(curl_multi_info_read)
#define curl_multi_init DYNLIB_CURL(curl_multi_init)
#define curl_multi_perform DYNLIB_CURL(curl_multi_perform)
#define curl_multi_poll DYNLIB_CURL(curl_multi_poll)
#define curl_multi_remove_handle DYNLIB_CURL(curl_multi_remove_handle)
#define curl_multi_setopt DYNLIB_CURL(curl_multi_setopt)
#define curl_multi_socket_action DYNLIB_CURL(curl_multi_socket_action)
#define curl_multi_wakeup DYNLIB_CURL(curl_multi_wakeup)
#define curl_slist_append DYNLIB_CURL(curl_slist_append)
#define curl_slist_free_all DYNLIB_CURL(curl_slist_free_all)

#endif
