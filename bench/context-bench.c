/*
 * context-bench: the time to build the request for a compacted 10,000-step
 * session (DESIGN 14): the context's plan (is compaction needed?), its
 * messages, their token estimate and the provider's body, printed as the
 * bytes sent. The history is the one agent.c holds after a compaction at
 * step 9,960 (every user message, the runs' ends, the compaction, the last
 * 40 steps whole), and, for comparison, the whole history unpruned. The
 * reference beside it is printing the same body alone (cJSON), the least
 * any request costs. Times are CPU time, the mean of many builds.
 *
 *	context-bench [STEPS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "holt.h"
#include "agent.h"
#include "context.h"
#include "model-int.h"

#define TAIL_STEPS	40

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static cJSON *
event(cJSON *history, unsigned long *seq, const char *type)
{
	cJSON	*ev = cJSON_CreateObject();

	cJSON_AddNumberToObject(ev, "seq", (double)++*seq);
	cJSON_AddStringToObject(ev, "type", type);
	cJSON_AddItemToArray(history, ev);
	return ev;
}

/* One step: the model calls a tool, which answers 600 bytes. */
static void
step(cJSON *history, unsigned long *seq, int n)
{
	cJSON	*ev, *calls, *tc, *args;
	char	 id[32], text[64], path[32], result[601];

	snprintf(id, sizeof id, "call_%d", n);
	snprintf(text, sizeof text, "step %d: reading the next file", n);
	snprintf(path, sizeof path, "src/f%d.c", n);
	memset(result, 'x', sizeof result - 1);
	result[sizeof result - 1] = '\0';
	ev = event(history, seq, "assistant.message");
	cJSON_AddStringToObject(ev, "text", text);
	calls = cJSON_AddArrayToObject(ev, "tool_calls");
	tc = cJSON_CreateObject();
	cJSON_AddStringToObject(tc, "id", id);
	cJSON_AddStringToObject(tc, "name", "read_file");
	args = cJSON_AddObjectToObject(tc, "arguments");
	cJSON_AddStringToObject(args, "path", path);
	cJSON_AddItemToArray(calls, tc);
	ev = event(history, seq, "tool.call");
	cJSON_AddStringToObject(ev, "call_id", id);
	cJSON_AddStringToObject(ev, "name", "read_file");
	cJSON_AddItemToObject(ev, "arguments", cJSON_Duplicate(args, 1));
	ev = event(history, seq, "tool.started");
	cJSON_AddStringToObject(ev, "call_id", id);
	ev = event(history, seq, "tool.finished");
	cJSON_AddStringToObject(ev, "call_id", id);
	cJSON_AddStringToObject(ev, "name", "read_file");
	cJSON_AddStringToObject(ev, "result", result);
}

/*
 * The history of steps steps, a user message every 100, compacted at
 * steps - TAIL_STEPS; pruned: as agent.c keeps it after the compaction.
 */
static cJSON *
history_make(int steps, int pruned, cJSON **compaction)
{
	cJSON		*h = cJSON_CreateArray(), *ev, *next, *c;
	unsigned long	 seq = 0, through = 0;
	char		 text[64], *summary;
	int		 i;

	summary = xmalloc(4001);
	memset(summary, 's', 4000);
	summary[4000] = '\0';
	for (i = 1; i <= steps; i++) {
		if (i % 100 == 1) {
			snprintf(text, sizeof text, "the user at step %d", i);
			ev = event(h, &seq, "user.message");
			cJSON_AddStringToObject(ev, "text", text);
		}
		if (i == steps - TAIL_STEPS)
			through = seq;
		step(h, &seq, i);
	}
	c = cJSON_CreateObject();
	cJSON_AddNumberToObject(c, "seq", (double)++seq);
	cJSON_AddStringToObject(c, "type", "context.compacted");
	cJSON_AddStringToObject(c, "summary", summary);
	cJSON_AddNumberToObject(c, "through_seq", (double)through);
	cJSON_AddNumberToObject(c, "trimmed_through", (double)through);
	free(summary);
	for (ev = h->child; pruned && ev != NULL; ev = next) {
		next = ev->next;
		if (json_num(ev, "seq", 0) <= (double)through &&
		    strcmp(json_str(ev, "type"), "user.message") != 0)
			cJSON_Delete(cJSON_DetachItemViaPointer(h, ev));
	}
	*compaction = c;
	return h;
}

/* Build the request once: plan, messages, tokens, body, its bytes. */
static size_t
build(struct context *cx, const cJSON *history, const cJSON *tools,
    cJSON **body)
{
	struct context_plan	 plan;
	cJSON			*msgs;
	char			*out;
	size_t			 n;

	context_plan(cx, history, "You are holt's agent.", tools, 0, &plan);
	msgs = context_messages(cx, history, "You are holt's agent.", 0, 0);
	context_tokens(cx, msgs, tools);
	*body = model_openai_body("gpt-4o", msgs, tools);
	cJSON_Delete(msgs);
	out = json_print(*body);
	n = strlen(out);
	free(out);
	return n;
}

static void
measure(const char *what, int steps, int pruned)
{
	struct context	*cx = context_new("openai:gpt-4o");
	cJSON		*c, *h = history_make(steps, pruned, &c), *tools, *body;
	double		 t0, t, tref;
	size_t		 bytes = 0;
	int		 i, n;
	char		*out;

	context_apply(cx, c);
	tools = tools_schema();
	t0 = now();
	for (n = 0; (t = now() - t0) < 1.0 || n < 5; n++) {
		bytes = build(cx, h, tools, &body);
		cJSON_Delete(body);
	}
	t = t / n;
	build(cx, h, tools, &body);
	t0 = now();
	for (i = 0; i < n; i++) {
		out = json_print(body);
		free(out);
	}
	tref = (now() - t0) / n;
	printf("build the request of a compacted %d-step session (%s, %d "
	    "events held, %zu bytes): %.3f ms (budget 5 ms); printing the "
	    "body alone: %.3f ms (x%.1f)\n", steps, what, cJSON_GetArraySize(h),
	    bytes, t * 1e3, tref * 1e3, tref > 0 ? t / tref : 0);
	cJSON_Delete(body);
	cJSON_Delete(tools);
	cJSON_Delete(h);
	cJSON_Delete(c);
	context_free(cx);
}

int
main(int argc, char **argv)
{
	int	 steps = argc > 1 ? atoi(argv[1]) : 10000;

	if (steps <= TAIL_STEPS) {
		fprintf(stderr, "usage: context-bench [STEPS > %d]\n",
		    TAIL_STEPS);
		return 1;
	}
	measure("history as held", steps, 1);
	measure("whole history", steps, 0);
	return 0;
}
