/*
 * model-int.h: what the model-*.c files share and the unit tests reach;
 * nothing outside src/model*.c and tests includes it.
 *
 * A model_stream turns the bytes of one streamed reply (SSE) into deltas
 * and, at the end, one model_reply. It knows both wire formats; it never
 * does I/O, so tests feed it byte arrays cut at every possible place.
 */
#ifndef MODEL_INT_H
#define MODEL_INT_H

#include "holt.h"
#include "model.h"
#include "sse.h"

enum model_kind {
	MODEL_OPENAI,
	MODEL_ANTHROPIC,
	MODEL_SCRIPT
};

struct model_slot {		/* a tool call being assembled */
	int		 index;		/* provider's index (tool / content block) */
	int		 tool;		/* anthropic: a tool_use block */
	int		 text;		/* anthropic: a text block */
	char		*id;
	char		*name;
	struct buf	 args;		/* JSON text, in pieces */
	char		*input;		/* anthropic: input given at start */
	int		 stopped;	/* anthropic: content_block_stop seen */
};

struct model_stream {
	enum model_kind	 kind;
	struct sse_parser *sse;
	void		(*delta)(void *, const char *, size_t);
	void		*arg;

	struct buf	 text;
	struct buf	 head;		/* the first bytes, while no event came */
	struct model_slot *slots;
	size_t		 nslots;
	long long	 in, out;
	long long	 cached;	/* input tokens read from the cache */
	char		*stop_reason;
	int		 complete;	/* [DONE] / message_stop seen */
	int		 finished;	/* finish_reason / message_delta seen */
	int		 started;	/* anthropic: message_start seen */
	unsigned long	 nevents;

	enum model_error err;
	char		*cause;		/* set by the event handlers */

	struct model_reply reply;
	int		 have_reply;
};

struct model_stream *model_stream_new(enum model_kind,
	    void (*delta)(void *, const char *, size_t), void *arg);
void	 model_stream_free(struct model_stream *);
/* 0, or -1 with *err and *cause (a copy, caller frees). */
int	 model_stream_feed(struct model_stream *, const void *, size_t,
	    enum model_error *, char **cause);
/* At a clean end of the body: 0 and the reply (owned by the stream), or -1. */
int	 model_stream_finish(struct model_stream *, struct model_reply **,
	    enum model_error *, char **cause);
int	 model_stream_fail(struct model_stream *, enum model_error,
	    const char *, ...) printflike(3, 4);
struct model_slot *model_stream_slot(struct model_stream *, int index,
	    int create);
void	 model_stream_text(struct model_stream *, const char *, size_t);
const char *model_kind_name(enum model_kind);

/*
 * A whole (not streamed) reply, for servers that ignore "stream": true:
 * 1 if obj was one and the stream now holds it, -1 if it was an error
 * object (the stream holds the error), 0 if it is neither.
 */
int	 model_openai_whole(struct model_stream *, const cJSON *);
int	 model_anthropic_whole(struct model_stream *, const cJSON *);

/* model-openai.c */
cJSON	*model_openai_body(const char *model, const cJSON *messages,
	    const cJSON *tools);
int	 model_openai_event(struct model_stream *, const struct sse_event *);

/* model-anthropic.c */
cJSON	*model_anthropic_body(const char *model, const cJSON *messages,
	    const cJSON *tools, long long max_tokens);
int	 model_anthropic_event(struct model_stream *, const struct sse_event *);

/* model-script.c: the mock script format (DESIGN 11). */
struct model_script;
struct model_script *model_script_load(const char *path, char **cause);
void	 model_script_free(struct model_script *);
const char *model_script_path(struct model_script *);
/*
 * The next turn for a request with this history, or NULL (and *cause) when
 * the script has no turn left. The first call places the cursor after the
 * k-th answering turn, k = assistant messages in the history, so that a
 * process that restarts mid-conversation carries on where it was.
 */
const cJSON *model_script_next(struct model_script *, const cJSON *messages,
	    int *turn_no, char **cause);
/* NULL if the turn's "expect" holds, else why not (caller frees). */
char	*model_script_expect(const cJSON *turn, const cJSON *messages,
	    const cJSON *tools);
/* A number of the turn, else of the script's top level, else dflt. */
int	 model_script_num(struct model_script *, const cJSON *turn,
	    const char *key, int dflt);

/* model.c */
char	*model_redact(const char *text, const char *secret);	/* caller frees */
enum model_error model_http_error(const char *provider, long status,
	    const char *body, const char *model, const char *url, char **msg);

#endif
