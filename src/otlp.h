/*
 * otlp.h: a session's event log as OpenTelemetry traces (DESIGN 18), in
 * OTLP/HTTP JSON: a trace per run, its root span the run, and under it a
 * span per model request (the GenAI semantic conventions' attributes) and
 * per tool call. Every span carries holt.session and holt.sandbox.id.
 *
 * The ids are derived from the session, its run and the event that opened
 * the span, so exporting a log twice (live, then with holt log --otlp)
 * gives the same trace and span ids.
 *
 * Call order: otlp_trace_new -> otlp_trace_feed for each event of the
 * log, in order (a finished span is appended to the array given) ->
 * otlp_trace_free. otlp_request_json makes the body of one POST.
 *
 * otlp-export.c sends spans from a server or a headless run in the
 * background: a bounded queue and a thread of its own, so an endpoint that
 * is slow or down never holds up a session; what cannot be sent is dropped
 * and counted in the server's log (a headless run's stderr).
 */
#ifndef OTLP_H
#define OTLP_H

#include "holt.h"

#define OTLP_QUEUE_MAX		4096	/* spans waiting to be sent */
#define OTLP_BATCH_MAX		512	/* spans in one POST */
#define OTLP_CONNECT_S		2	/* the live export waits at most */
#define OTLP_TIMEOUT_S		5	/* this long for one POST */
#define OTLP_FLUSH_MS		2000	/* a headless run's exit waits */

struct otlp_trace;

/* model: the session's model, for requests whose event does not say. */
struct otlp_trace *otlp_trace_new(const char *session, const char *sandbox,
	     const char *model);
void	 otlp_trace_free(struct otlp_trace *);
/* spans NULL: the state only (a log read again when a server starts). */
void	 otlp_trace_feed(struct otlp_trace *, const cJSON *ev, cJSON *spans);

/* The ExportTraceServiceRequest for spans (caller frees). */
char	*otlp_request_json(const cJSON *spans);
/* ENDPOINT/v1/traces, unless it ends so already (caller frees). */
char	*otlp_traces_url(const char *endpoint);
/* One POST of body, waiting timeout_s at most: 0, or -1 and *cause. */
int	 otlp_post(const char *url, const char *body, long connect_s,
	     long timeout_s, char **cause);

/* otlp-export.c: the live export (a server's, a headless run's). */
void	 otlp_export_enable(void);
int	 otlp_export_enabled(void);
/* Queue spans (an array, taken) for endpoint; never blocks. */
void	 otlp_export_spans(const char *endpoint, cJSON *spans);
/* Send what is queued, waiting wait_ms at most; log what was dropped. */
void	 otlp_export_stop(int wait_ms);

#endif
