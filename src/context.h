/*
 * context.h: the conversation a session sends to its model, and how it is
 * kept inside the model's window (DESIGN 14).
 *
 * A context is built from the session's history (the events the
 * conversation needs, with their seq) and the last context.compacted
 * event: system prompt + project instructions, then, once compacted, every
 * user message up to the compaction verbatim and the summary, then the
 * events after it (the recent tail), with the tool results before the trim
 * mark cut to a line. The event log itself is never rewritten; compaction
 * only moves the marks.
 *
 * Sizes are estimated before a request is sent: bytes of the messages over
 * CONTEXT_BYTES_PER_TOKEN, times a factor calibrated by the input tokens
 * the provider counted for the last request.
 *
 * Call order: context_new -> context_apply for each context.compacted of
 * the log -> context_messages / context_plan before each request ->
 * context_calibrate after each reply -> context_free.
 */
#ifndef CONTEXT_H
#define CONTEXT_H

#include <stdint.h>

#include "holt.h"

#define CONTEXT_BYTES_PER_TOKEN	3.5	/* English and code, conservative */
#define CONTEXT_DEFAULT_WINDOW	8192	/* an unknown (local) model */

struct context;

/* What context_plan says the next request needs. */
struct context_plan {
	long long	 tokens;	/* the request as it is now */
	uint64_t	 trim_through;	/* tool results up to here cut */
	uint64_t	 through;	/* summary up to here (0: none needed) */
	long long	 tokens_after;	/* with trim_through applied */
};

struct context *context_new(const char *spec);
void	 context_free(struct context *);
/* The window of spec: context_window of holt.conf, else the table. */
long long context_window_of(const char *spec);
void	 context_set_model(struct context *, const char *spec);
long long context_window(struct context *);
int	 context_compact_at(struct context *);	/* percent */
/* A context.compacted event (from the log or just made). */
void	 context_apply(struct context *, const cJSON *ev);
uint64_t context_through(struct context *);
/* No compaction (a rewind cut them away): context_apply those left. */
void	 context_forget(struct context *);
const char *context_summary(struct context *);
void	 context_set_instructions(struct context *, const char *);

/*
 * The provider-neutral messages (model.h) for history, events with seq <
 * until only (0: all), tool results with seq <= trim cut (trim 0: as the
 * context's own mark).
 */
cJSON	*context_messages(struct context *, const cJSON *history,
	     const char *system, uint64_t until, uint64_t trim);
long long context_tokens(struct context *, const cJSON *messages,
	     const cJSON *tools);
/* After a reply: the provider counted input tokens for messages. */
void	 context_calibrate(struct context *, const cJSON *messages,
	     const cJSON *tools, long long input_tokens);
/* The last context.compacted asked for more room (a rejected request). */
void	 context_distrust(struct context *);

/*
 * Before a request: 1 when the conversation is over compact_at percent of
 * the window (or force), with the plan filled: trim first; through is set
 * when trimming alone is not enough. 0 when nothing is needed.
 */
int	 context_plan(struct context *, const cJSON *history,
	     const char *system, const cJSON *tools, int force,
	     struct context_plan *);
/* The fixed summary prompt, with the user's focus if any (caller frees). */
char	*context_summary_prompt(const char *focus);
int	 context_is_summary_prompt(const char *text);
/* The messages of the summary request for plan p (caller frees). */
cJSON	*context_summary_request(struct context *, const cJSON *history,
	     const char *system, const struct context_plan *p,
	     const char *focus);
/*
 * The deterministic summary when the model's failed: the summary so far
 * and what the dropped turns did, bounded (caller frees).
 */
char	*context_fallback(struct context *, const cJSON *history,
	     uint64_t through, const char *why);

#endif
