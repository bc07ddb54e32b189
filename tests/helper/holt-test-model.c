/*
 * holt-test-model: runs model requests through the real path (libcurl
 * multi inside a libevent loop, or the script: replay) and prints what
 * came back, for the shell tests.
 *
 *	holt-test-model [-b BASE_URL] [-m MESSAGES.json] [-t TOOLS.json]
 *	    [-p PROMPT] [-n REQUESTS] [-r RESULT] [-x CANCEL_AFTER_DELTAS]
 *	    [-f] [-v] [-C KEY=VALUE]... SPEC
 *
 * Prints "retry: WHY (wait N ms)" per retry, then per request
 * "text: ...", "tool_calls: JSON", "usage: IN OUT", "stop: REASON", or
 * "error: KIND: MESSAGE" (exit 5). With -n, each reply's tool calls are
 * answered with RESULT ("result of NAME" by default) and the next request
 * is sent with the longer history; -f frees the model from inside the last
 * done or error callback. Exit 1 if the streamed deltas do not
 * add up to the final text.
 *
 *	holt-test-model -F FILE openai|anthropic
 *
 * feeds a saved stream through the stream assembly alone, 64 KiB at a
 * time, and prints "bytes B events E ms T text T tool_calls C" (for the
 * benchmarks).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "holt.h"
#include "model-int.h"

struct state {
	struct model		*m;
	struct event_base	*base;
	cJSON			*messages;
	cJSON			*tools;
	struct buf		 deltas;
	unsigned long		 ndeltas;
	int			 cancel_after;
	struct model_request	*req;
	int			 left;
	int			 rc;
	const char		*result;
	int			 n;
	int			 free_in_cb;	/* -f: model_free from done/error */
};

static void	 start(struct state *);

static void
on_delta(void *arg, const char *text, size_t len)
{
	struct state	*st = arg;

	buf_add(&st->deltas, text, len);
	if (++st->ndeltas == (unsigned long)st->cancel_after) {
		model_request_cancel(st->req);
		printf("cancelled after %lu deltas\n", st->ndeltas);
		st->left = 0;
		event_base_loopexit(st->base, NULL);
	}
}

static void
on_retry(void *arg, const char *why, int wait_ms)
{
	printf("retry: %s (wait %d ms)\n", why, wait_ms);
	fflush(stdout);
}

static void
on_done(void *arg, struct model_reply *r)
{
	struct state	*st = arg;
	char		*calls;
	cJSON		*a, *call, *t;
	const char	*name;

	calls = json_print(r->tool_calls);
	if (st->n > 1)
		printf("[%d]\n", st->n - st->left + 1);
	printf("text: %s\ntool_calls: %s\nusage: %lld %lld\nstop: %s\n",
	    r->text, calls, r->input_tokens, r->output_tokens, r->stop_reason);
	free(calls);
	if (strcmp(buf_str(&st->deltas), r->text) != 0) {
		printf("deltas differ: '%s'\n", buf_str(&st->deltas));
		st->rc = 1;
	}
	buf_reset(&st->deltas);

	a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "role", "assistant");
	cJSON_AddStringToObject(a, "content", r->text);
	cJSON_AddItemToObject(a, "tool_calls",
	    cJSON_Duplicate(r->tool_calls, 1));
	cJSON_AddItemToArray(st->messages, a);
	cJSON_ArrayForEach(call, r->tool_calls) {
		name = json_str(call, "name");
		t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "role", "tool");
		cJSON_AddStringToObject(t, "tool_call_id", json_str(call, "id"));
		cJSON_AddStringToObject(t, "name", name);
		if (st->result != NULL)
			cJSON_AddStringToObject(t, "content", st->result);
		else {
			char *s = xprintf("result of %s", name);
			cJSON_AddStringToObject(t, "content", s);
			free(s);
		}
		cJSON_AddItemToArray(st->messages, t);
	}
	if (cJSON_GetArraySize(r->tool_calls) == 0 && st->left > 1) {
		t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "role", "user");
		cJSON_AddStringToObject(t, "content", "go on");
		cJSON_AddItemToArray(st->messages, t);
	}
	st->req = NULL;
	if (--st->left > 0)
		start(st);
	else {
		if (st->free_in_cb) {
			model_free(st->m);
			st->m = NULL;
		}
		event_base_loopexit(st->base, NULL);
	}
}

static void
on_error(void *arg, enum model_error err, const char *msg)
{
	struct state	*st = arg;

	printf("error: %s: %s\n", model_error_name(err), msg);
	st->rc = EXIT_MODEL;
	st->req = NULL;
	st->left = 0;
	if (st->free_in_cb) {
		model_free(st->m);
		st->m = NULL;
	}
	event_base_loopexit(st->base, NULL);
}

static const struct model_cb callbacks = {
	on_delta, on_retry, on_done, on_error
};

static void
start(struct state *st)
{
	st->req = model_request(st->m, st->base, st->messages, st->tools,
	    &callbacks, st);
}

static cJSON *
load_array(const char *path)
{
	char	*data;
	cJSON	*a;

	if ((data = file_read(path, NULL, 16U * 1024 * 1024)) == NULL)
		fatal("%s", path);
	a = cJSON_Parse(data);
	free(data);
	if (!cJSON_IsArray(a))
		fatalx("%s: not a JSON array", path);
	return a;
}

static void
count_delta(void *arg, const char *text, size_t len)
{
	*(size_t *)arg += len;
}

static int
feed_file(const char *path, const char *kind)
{
	struct model_stream	*ms;
	struct model_reply	*r;
	enum model_error	 err;
	char			*data, *cause = NULL;
	size_t			 len, off, n, text = 0;
	uint64_t		 t0, t1;

	if ((data = file_read(path, &len, 1024U * 1024 * 1024)) == NULL)
		fatal("%s", path);
	t0 = mono_ms();
	ms = model_stream_new(strcmp(kind, "anthropic") == 0 ?
	    MODEL_ANTHROPIC : MODEL_OPENAI, count_delta, &text);
	for (off = 0; off < len; off += n) {
		n = len - off < 65536 ? len - off : 65536;
		if (model_stream_feed(ms, data + off, n, &err, &cause) != 0)
			break;
	}
	if (cause == NULL && model_stream_finish(ms, &r, &err, &cause) == 0) {
		t1 = mono_ms();
		printf("bytes %zu events %lu ms %llu text %zu tool_calls %d\n",
		    len, ms->nevents, (unsigned long long)(t1 - t0), text,
		    cJSON_GetArraySize(r->tool_calls));
	} else
		printf("error: %s: %s\n", model_error_name(err), cause);
	model_stream_free(ms);
	free(data);
	return cause == NULL ? 0 : EXIT_MODEL;
}

static cJSON *
default_tools(void)
{
	return cJSON_Parse("[{\"name\":\"read_file\",\"description\":\"Read "
	    "a file\",\"parameters\":{\"type\":\"object\",\"properties\":"
	    "{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}},"
	    "{\"name\":\"run_command\",\"description\":\"Run a command\","
	    "\"parameters\":{\"type\":\"object\",\"properties\":{\"command\":"
	    "{\"type\":\"string\"}},\"required\":[\"command\"]}}]");
}

int
main(int argc, char **argv)
{
	struct state	 st;
	const char	*base_url = NULL, *prompt = "Hello", *mfile = NULL;
	const char	*tfile = NULL, *feed = NULL;
	char		*cause = NULL, *eq, *k;
	uint64_t	 t0;
	cJSON		*msg;
	int		 ch;

	log_prog = "holt-test-model";
	memset(&st, 0, sizeof st);
	st.n = 1;
	buf_init(&st.deltas);
	while ((ch = getopt(argc, argv, "b:C:fF:m:n:p:r:t:vx:")) != -1) {
		switch (ch) {
		case 'b':
			base_url = optarg;
			break;
		case 'C':
			if ((eq = strchr(optarg, '=')) == NULL)
				fatalx("-C wants KEY=VALUE");
			k = xstrndup(optarg, eq - optarg);
			config_set(k, eq + 1, "command line");
			free(k);
			break;
		case 'f':
			st.free_in_cb = 1;
			break;
		case 'F':
			feed = optarg;
			break;
		case 'm':
			mfile = optarg;
			break;
		case 'n':
			st.n = atoi(optarg);
			break;
		case 'p':
			prompt = optarg;
			break;
		case 'r':
			st.result = optarg;
			break;
		case 't':
			tfile = optarg;
			break;
		case 'v':
			log_set_verbose(2);	/* debug lines on stderr */
			break;
		case 'x':
			st.cancel_after = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: holt-test-model [-b URL] "
			    "[-m FILE] [-t FILE] [-p PROMPT] [-n N] [-r RESULT] "
			    "[-x N] [-C KEY=VALUE] SPEC\n");
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "holt-test-model: one SPEC expected\n");
		return EXIT_USAGE;
	}
	if (feed != NULL)
		return feed_file(feed, argv[optind]);
	if (mfile != NULL)
		st.messages = load_array(mfile);
	else {
		st.messages = cJSON_CreateArray();
		msg = cJSON_CreateObject();
		cJSON_AddStringToObject(msg, "role", "system");
		cJSON_AddStringToObject(msg, "content", "You are a test.");
		cJSON_AddItemToArray(st.messages, msg);
		msg = cJSON_CreateObject();
		cJSON_AddStringToObject(msg, "role", "user");
		cJSON_AddStringToObject(msg, "content", prompt);
		cJSON_AddItemToArray(st.messages, msg);
	}
	st.tools = tfile != NULL ? load_array(tfile) : default_tools();

	if ((st.m = model_new(argv[optind], base_url, &cause)) == NULL) {
		printf("model_new: %s\n", cause);
		free(cause);
		cJSON_Delete(st.messages);
		cJSON_Delete(st.tools);
		return EXIT_USAGE;
	}
	st.base = event_base_new();
	st.left = st.n;
	t0 = mono_ms();
	start(&st);
	event_base_dispatch(st.base);
	fprintf(stderr, "elapsed_ms: %llu\n",
	    (unsigned long long)(mono_ms() - t0));
	model_free(st.m);
	event_base_free(st.base);
	cJSON_Delete(st.messages);
	cJSON_Delete(st.tools);
	buf_release(&st.deltas);
	return st.rc;
}
