/*
 * otlp-export.c: the live export of spans (otel_endpoint in holt.conf), by
 * the server or by a headless run. The event loop only queues; one thread
 * of its own POSTs, at most OTLP_BATCH_MAX spans at a time and
 * OTLP_TIMEOUT_S for each, so an endpoint that is down, or one that never
 * answers, costs a session nothing. Spans over OTLP_QUEUE_MAX, those of a
 * POST that failed, and those still unsent when the process stops are
 * dropped; the log (the server's, or a command's stderr) says how many (at
 * the first drop, then at most every OTLP_LOG_S seconds for the same
 * reason, and at the stop).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "dynlib-curl.h"
#include "otlp.h"

#define OTLP_LOG_S	10	/* seconds between two notes of drops */

static pthread_mutex_t	 otlp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 otlp_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t	 otlp_idle = PTHREAD_COND_INITIALIZER;
static int		 otlp_enabled;
static int		 otlp_started;
static int		 otlp_busy;	/* a POST is under way */
static int		 otlp_inflight;	/* its spans */
static int		 otlp_stopped;	/* what ends after is not counted */
static cJSON		*otlp_queue;	/* spans, oldest first */
static int		 otlp_queued;
static char		*otlp_url;
static unsigned long long otlp_sent, otlp_dropped, otlp_noted;
static time_t		 otlp_noted_at;
static char		*otlp_why;	/* the last reason for a drop */
static char		*otlp_noted_why;

void
otlp_export_enable(void)
{
	otlp_enabled = 1;
}

int
otlp_export_enabled(void)
{
	return otlp_enabled;
}

/* Under the lock: say what was dropped, now and then. */
static void
otlp_note(int force)
{
	time_t	 now = time(NULL);

	if (otlp_dropped == 0 || (!force && otlp_dropped == otlp_noted))
		return;
	/* A new reason (another endpoint) is told at once. */
	if (!force && otlp_noted != 0 && now - otlp_noted_at < OTLP_LOG_S &&
	    otlp_noted_why != NULL && otlp_why != NULL &&
	    strcmp(otlp_noted_why, otlp_why) == 0)
		return;
	log_warnx("otlp: %llu spans dropped (%llu sent): %s", otlp_dropped,
	    otlp_sent, otlp_why != NULL ? otlp_why : "?");
	otlp_noted = otlp_dropped;
	otlp_noted_at = now;
	free(otlp_noted_why);
	otlp_noted_why = otlp_why != NULL ? xstrdup(otlp_why) : NULL;
}

/* Under the lock: n spans lost; why names the endpoint. */
static void
otlp_count(unsigned long long n, const char *why)
{
	otlp_dropped += n;
	free(otlp_why);
	if (strncmp(why, "'", 1) == 0)
		otlp_why = xstrdup(why);
	else
		otlp_why = xprintf("'%s': %s", otlp_url != NULL ? otlp_url :
		    "?", why);
}

/* Under the lock: n spans lost, and said if it is time. */
static void
otlp_drop(unsigned long long n, const char *why)
{
	otlp_count(n, why);
	otlp_note(0);
}

static void *
otlp_thread(void *arg)
{
	cJSON	*batch, *span;
	char	*url, *body, *cause = NULL;
	int	 n, rc;

	pthread_mutex_lock(&otlp_lock);
	for (;;) {
		while (otlp_queued == 0) {
			otlp_busy = 0;
			pthread_cond_broadcast(&otlp_idle);
			pthread_cond_wait(&otlp_wake, &otlp_lock);
		}
		otlp_busy = 1;
		otlp_inflight = 0;
		batch = cJSON_CreateArray();
		for (n = 0; n < OTLP_BATCH_MAX && otlp_queued > 0; n++) {
			span = cJSON_DetachItemFromArray(otlp_queue, 0);
			cJSON_AddItemToArray(batch, span);
			otlp_queued--;
		}
		otlp_inflight = n;
		url = xstrdup(otlp_url);
		pthread_mutex_unlock(&otlp_lock);

		body = otlp_request_json(batch);
		cJSON_Delete(batch);
		rc = otlp_post(url, body, OTLP_CONNECT_S, OTLP_TIMEOUT_S,
		    &cause);
		free(body);
		free(url);

		pthread_mutex_lock(&otlp_lock);
		otlp_inflight = 0;
		if (otlp_stopped)
			;	/* counted by otlp_export_stop */
		else if (rc == 0)
			otlp_sent += (unsigned long long)n;
		else
			otlp_drop((unsigned long long)n, cause);
		free(cause);
		cause = NULL;
	}
	return arg;
}

/* Under the lock: the thread, once; libcurl loaded here, where it can fail. */
static int
otlp_start(void)
{
	pthread_t	 th;
	char		*cause = NULL;

	if (otlp_started)
		return 0;
	if (dynlib_load_curl(&cause) != 0) {
		log_warnx("otlp: %s", cause);
		free(cause);
		return -1;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	otlp_queue = cJSON_CreateArray();
	if (pthread_create(&th, NULL, otlp_thread, NULL) != 0) {
		log_warnx("otlp: cannot start the export thread");
		return -1;
	}
	pthread_detach(th);
	otlp_started = 1;
	return 0;
}

void
otlp_export_spans(const char *endpoint, cJSON *spans)
{
	cJSON	*span;
	char	*url;

	if (cJSON_GetArraySize(spans) == 0) {
		cJSON_Delete(spans);
		return;
	}
	url = otlp_traces_url(endpoint);
	pthread_mutex_lock(&otlp_lock);
	if (otlp_url == NULL || strcmp(otlp_url, url) != 0) {
		free(otlp_url);
		otlp_url = url;	/* holt.conf changed: the next POST */
	} else
		free(url);
	if (otlp_start() != 0) {
		otlp_drop((unsigned long long)cJSON_GetArraySize(spans),
		    "no libcurl");
		pthread_mutex_unlock(&otlp_lock);
		cJSON_Delete(spans);
		return;
	}
	while ((span = cJSON_DetachItemFromArray(spans, 0)) != NULL) {
		if (otlp_queued >= OTLP_QUEUE_MAX) {
			cJSON_Delete(span);
			otlp_drop(1, "the queue is full (the endpoint is slow "
			    "or down)");
			continue;
		}
		cJSON_AddItemToArray(otlp_queue, span);
		otlp_queued++;
	}
	pthread_cond_signal(&otlp_wake);
	pthread_mutex_unlock(&otlp_lock);
	cJSON_Delete(spans);
}

void
otlp_export_stop(int wait_ms)
{
	struct timespec	 until;
	char		*why;

	pthread_mutex_lock(&otlp_lock);
	if (otlp_started && !otlp_stopped) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += wait_ms / 1000;
		until.tv_nsec += (long)(wait_ms % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		while ((otlp_queued > 0 || otlp_busy) &&
		    pthread_cond_timedwait(&otlp_idle, &otlp_lock, &until) == 0)
			;
		/* The thread is left to the exit: a POST may hang. */
		if (otlp_queued > 0 || otlp_busy) {
			why = xprintf("not sent within %d ms of the end",
			    wait_ms);
			otlp_count((unsigned long long)(otlp_queued +
			    otlp_inflight), why);
			free(why);
		}
		otlp_stopped = 1;
		otlp_note(1);	/* the last word: the whole count */
	}
	pthread_mutex_unlock(&otlp_lock);
}
