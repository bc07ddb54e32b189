/*
 * model.h: the model providers (DESIGN 6): one streaming request at a time
 * per call, driven by the caller's libevent loop and never blocking it.
 *
 *	openai:MODEL	 Chat Completions, POST {base}/chat/completions,
 *			 base default https://api.openai.com/v1 (any compatible
 *			 server: OpenRouter, Ollama, llama.cpp, vLLM)
 *	anthropic:MODEL	 Messages API, POST {base}/v1/messages,
 *			 base default https://api.anthropic.com
 *	script:FILE	 replays a mock script (DESIGN 11) without HTTP
 *
 * Conversation, provider-neutral, as a cJSON array of messages:
 *   {"role":"system"|"user","content":"text"}
 *   {"role":"assistant","content":"text","tool_calls":[{"id":"...",
 *	"name":"...","arguments":{...object...}}]}
 *   {"role":"tool","tool_call_id":"...","name":"...","content":"result"}
 * Tools: cJSON array of {"name","description","parameters": JSON schema}.
 *
 * Keys come from OPENAI_API_KEY / ANTHROPIC_API_KEY, else openai_api_key /
 * anthropic_api_key in holt.conf. A key never appears in a message this
 * module produces (provider error texts are scrubbed of it).
 *
 * Call order: model_new; model_request any number of times (each with the
 * same event_base), each ending in exactly one of cb->done or cb->error,
 * after which the request frees itself; or model_request_cancel, after which
 * no callback is called. model_free cancels what is still in flight; it may
 * be called from a done or error callback, not from delta or retry.
 *
 * Retries: 429, 5xx and connection failures are retried with exponential
 * backoff and jitter (5 tries, waits capped at 30 s, Retry-After honoured
 * up to 120 s, longer is an error at once); cb->retry tells about each
 * wait. Once a reply has started streaming, a failure is final
 * (MODEL_ERR_STREAM): tool calls are handed over only whole, so nothing
 * half-received is kept. A 3xx is not followed (the key stays put).
 * Environment for tests: HOLT_MODEL_BACKOFF_MS (first wait, default 1000),
 * HOLT_MODEL_TRIES (default 5). Timeouts: request_timeout (whole request)
 * and idle_timeout (no byte from the server), seconds, from holt.conf.
 */
#ifndef MODEL_H
#define MODEL_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct event_base;

struct model;		/* a configured provider */
struct model_request;	/* one streaming request in flight */

struct model_reply {
	char		*text;		/* whole assistant text ("" if none) */
	cJSON		*tool_calls;	/* [{id, name, arguments(object)}], never NULL */
	long long	 input_tokens;	/* all of the prompt, cached or not */
	long long	 cached_input_tokens;	/* of those, read from the cache */
	long long	 output_tokens;
	char		*stop_reason;	/* "end_turn"/"tool_use"/"stop"/... as given */
};

enum model_error {
	MODEL_ERR_AUTH,		/* 401/403: the key was refused or is missing */
	MODEL_ERR_NOT_FOUND,	/* 404: no such model (or wrong base URL) */
	MODEL_ERR_CONTEXT,	/* the conversation is too long for the model */
	MODEL_ERR_RATE,		/* 429 after every retry */
	MODEL_ERR_SERVER,	/* 5xx/overloaded after every retry */
	MODEL_ERR_NETWORK,	/* could not connect, after every retry */
	MODEL_ERR_TIMEOUT,	/* request_timeout or idle_timeout */
	MODEL_ERR_STREAM,	/* malformed or cut reply stream */
	MODEL_ERR_SCRIPT,	/* script: turn missing or expectation failed */
	MODEL_ERR_CANCELLED,	/* not passed: a cancel has no callback */
	MODEL_ERR_OTHER		/* any other refusal (HTTP 400 ...) */
};

struct model_cb {
	/* Streamed text as it arrives; may be NULL. */
	void	(*delta)(void *arg, const char *text, size_t len);
	/* About to wait wait_ms and try again; informational, may be NULL. */
	void	(*retry)(void *arg, const char *why, int wait_ms);
	/* The reply, owned by the model, valid during the callback only. */
	void	(*done)(void *arg, struct model_reply *);
	void	(*error)(void *arg, enum model_error, const char *message);
};

/*
 * spec is "openai:gpt-4.1", "anthropic:claude-sonnet-4-5" or "script:FILE".
 * base_url (NULL or "": the base_url of holt.conf, else the provider's
 * default). Fails, with *cause, on a bad spec, an unreadable or invalid
 * script, or a missing key for a provider's default endpoint.
 */
struct model *model_new(const char *spec, const char *base_url, char **cause);
void	 model_free(struct model *);
const char *model_spec(struct model *);
const char *model_url(struct model *);	/* endpoint, "" for script: */
struct model_request *model_request(struct model *, struct event_base *,
	    const cJSON *messages, const cJSON *tools, const struct model_cb *,
	    void *arg);
void	 model_request_cancel(struct model_request *);
/*
 * USD, from holt.conf "price.SPEC = IN OUT [CACHED]", per million tokens
 * (CACHED: input read from the provider's cache, default IN); 0 if
 * unknown. in counts all input tokens, cached ones included.
 */
double	 model_price(const char *spec, long long in, long long cached,
	    long long out);
const char *model_error_name(enum model_error);	/* "auth", "stream", ... */

#endif
