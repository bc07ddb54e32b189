/*
 * slash.c: the input line's slash commands. Every command is a line of one
 * table (name, arguments, help, what it does): the input runs them and
 * completes their names with Tab, and /help lists this same table, so a
 * command is added by adding a line and its function. A line that starts
 * with "/" is a command, never a message: an unknown one is an error, and
 * "//" sends a message that starts with one "/".
 */
#include <stdlib.h>
#include <string.h>

#include "ui.h"

struct slash_cmd {
	const char	*name;
	const char	*args;
	const char	*help;
	/* ARGS is what follows the name, trimmed ("" if nothing). */
	int		(*exec)(struct tui *, const char *args, char **cause);
};

static int
slash_help_exec(struct tui *t, const char *args, char **cause)
{
	tui_do(t, ACT_HELP);
	return 0;
}

static int
slash_mode_exec(struct tui *t, const char *args, char **cause)
{
	static const char *modes[] = { "manual", "auto", "strict", "trust" };
	size_t		 i;

	if (*args == '\0') {
		tui_flash(t, "mode: %s (manual, auto, strict or trust)",
		    json_str(tui_state(t), "mode") ? json_str(tui_state(t),
		    "mode") : "?");
		return 0;
	}
	for (i = 0; i < nitems(modes); i++) {
		if (strcmp(args, modes[i]) == 0) {
			tui_set_mode(t, args);
			return 0;
		}
	}
	*cause = xprintf("mode '%s': manual, auto, strict or trust", args);
	return -1;
}

static int
slash_model_exec(struct tui *t, const char *args, char **cause)
{
	const char	*cur = json_str(tui_state(t), "model");

	if (*args == '\0') {
		tui_flash(t, "model: %s", cur != NULL ? cur : "?");
		return 0;
	}
	if (tui_session_request(t, "model", "model", args, cause) != 0)
		return -1;
	tui_flash(t, "model: %s from the next request", args);
	return 0;
}

static int
slash_compact_exec(struct tui *t, const char *args, char **cause)
{
	if (tui_session_request(t, "compact", "focus", *args != '\0' ? args :
	    NULL, cause) != 0)
		return -1;
	tui_flash(t, "compacting the conversation");
	return 0;
}

static int
slash_clear_exec(struct tui *t, const char *args, char **cause)
{
	if (*args != '\0') {
		*cause = xprintf("/clear takes no argument");
		return -1;
	}
	if (tui_session_request(t, "clear", NULL, NULL, cause) != 0)
		return -1;
	tui_flash(t, "a new conversation: the sandbox and its files are kept");
	return 0;
}

static int
slash_cost_exec(struct tui *t, const char *args, char **cause)
{
	const cJSON	*st = tui_state(t);

	const cJSON	*run = cJSON_GetObjectItem(st, "run");
	const cJSON	*cx = cJSON_GetObjectItem(st, "context");

	tui_flash(t, "session: %.0f tokens in (%.0f cached), %.0f out, $%.4f; "
	    "run: %.0f in (%.0f cached), %.0f out, $%.4f; context %.0f of %.0f "
	    "tokens (%.0f%%)", json_num(st, "input_tokens", 0),
	    json_num(st, "cached_input_tokens", 0),
	    json_num(st, "output_tokens", 0), json_num(st, "cost_usd", 0),
	    json_num(run, "input_tokens", 0),
	    json_num(run, "cached_input_tokens", 0),
	    json_num(run, "output_tokens", 0), json_num(run, "cost_usd", 0),
	    json_num(cx, "tokens", 0), json_num(cx, "window", 0),
	    json_num(cx, "percent", 0));
	tui_flash_hold(t, 8000);
	return 0;
}

static int
slash_diff_exec(struct tui *t, const char *args, char **cause)
{
	tui_do(t, ACT_DIFF);
	return 0;
}

static int
slash_quit_exec(struct tui *t, const char *args, char **cause)
{
	tui_do(t, ACT_DETACH);
	return 0;
}

/*
 * /rewind: the steps (step, tool call, files it changed) to pick from,
 * then one keystroke more, y, to confirm; holt rewind does the rest.
 */
static void
slash_rewind_confirm(struct tui *t, void *arg, const char *text)
{
	char	*step = arg, *cause = NULL;

	if (text != NULL && (strcmp(text, "y") == 0 || strcmp(text, "Y") == 0)) {
		if (tui_session_request(t, "rewind", "to_step", step,
		    &cause) != 0) {
			tui_flash(t, "%s", cause);
			free(cause);
		} else
			tui_flash(t, "rewound to before step %s", step);
	} else
		tui_flash(t, "rewind cancelled");
	free(step);
}

static void
slash_rewind_pick(struct tui *t, void *arg, const char *text)
{
	const cJSON	*s;
	char		*label;
	int		 n;

	if (text == NULL || *text == '\0')
		return;
	n = atoi(text);
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(tui_state(t), "steps")) {
		if ((int)json_num(s, "step", 0) == n)
			break;
	}
	if (n <= 0 || s == NULL) {
		tui_flash(t, "step '%s': no such step", text);
		return;
	}
	label = xprintf("rewind files and conversation to before step %d "
	    "(%s %.40s)? y to confirm:", n, json_str(s, "name"), json_str(s, "what"));
	tui_prompt(t, label, "", slash_rewind_confirm, xprintf("%d", n));
	free(label);
}

static int
slash_rewind_exec(struct tui *t, const char *args, char **cause)
{
	const cJSON	*steps = cJSON_GetObjectItem(tui_state(t), "steps"), *s;
	struct buf	 b = BUF_INIT;
	char		 last[16];

	if (cJSON_GetArraySize(steps) == 0) {
		*cause = xstrdup("no steps to rewind to yet");
		return -1;
	}
	if (*args != '\0') {
		slash_rewind_pick(t, NULL, args);
		return 0;
	}
	cJSON_ArrayForEach(s, steps) {
		buf_addf(&b, "%s%.0f %s %.16s (%.0f changed)", b.len > 0 ?
		    " · " : "", json_num(s, "step", 0), json_str(s, "name"),
		    json_str(s, "what"), json_num(s, "changed", 0));
	}
	tui_flash(t, "%s", b.data);
	tui_flash_hold(t, 30000);
	buf_release(&b);
	s = cJSON_GetArrayItem(steps, cJSON_GetArraySize(steps) - 1);
	snprintf(last, sizeof last, "%.0f", json_num(s, "step", 0));
	tui_prompt(t, "rewind to before step:", last, slash_rewind_pick, NULL);
	return 0;
}

static int
slash_rules_exec(struct tui *t, const char *args, char **cause)
{
	cJSON	*m;
	char	*end;
	long	 n = 0;

	if (strncmp(args, "delete", 6) == 0) {
		n = strtol(args + 6, &end, 10);
		if (n <= 0 || *end != '\0') {
			*cause = xstrdup("usage: /rules delete N (N as /rules "
			    "lists them)");
			return -1;
		}
	} else if (*args != '\0') {
		*cause = xprintf("'%s': /rules, or /rules delete N", args);
		return -1;
	}
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "type", "rules");
	cJSON_AddStringToObject(m, "session", tui_session(t));
	if (n > 0)
		cJSON_AddNumberToObject(m, "delete", (double)n);
	tui_send(t, m);
	if (n > 0)
		tui_flash(t, "rule %ld: deleting", n);
	return 0;
}

void
slash_rules_show(struct tui *t, const cJSON *rules)
{
	struct buf	 b = BUF_INIT;
	const cJSON	*r;
	size_t		 len;
	int		 n = 0;
	char		*data;

	buf_adds(&b, "The session's own rules (saved by \"always\"); they "
	    "apply after the\nbuilt-in and the user's. /rules delete N "
	    "removes one.\n\n");
	cJSON_ArrayForEach(r, rules) {
		if (cJSON_IsString(r))
			buf_addf(&b, "%3d  %s\n", ++n, r->valuestring);
	}
	if (n == 0)
		buf_adds(&b, "  (none yet)\n");
	data = buf_detach(&b, &len);
	viewer_show(t, data, len, "session rules", 0);
}

static const struct slash_cmd slash_table[] = {
	{ "clear", "", "a new conversation in the same sandbox",
	    slash_clear_exec },
	{ "compact", "[FOCUS]", "summarize the conversation now",
	    slash_compact_exec },
	{ "cost", "", "tokens, cached tokens and cost of the run and session",
	    slash_cost_exec },
	{ "diff", "", "review the diff", slash_diff_exec },
	{ "help", "", "keys and commands", slash_help_exec },
	{ "mode", "[MODE]", "show or set the mode: manual, auto, strict, trust",
	    slash_mode_exec },
	{ "model", "[MODEL]", "show the model, or switch to another",
	    slash_model_exec },
	{ "quit", "", "detach (the agent keeps working)", slash_quit_exec },
	{ "rewind", "[STEP]", "pick a step; files and conversation go back to "
	    "before it", slash_rewind_exec },
	{ "rules", "[delete N]", "the session's own rules; delete one",
	    slash_rules_exec },
};

static const struct slash_cmd *
slash_find(const char *name, size_t len)
{
	size_t	 i;

	for (i = 0; i < nitems(slash_table); i++) {
		if (strlen(slash_table[i].name) == len &&
		    strncmp(slash_table[i].name, name, len) == 0)
			return &slash_table[i];
	}
	return NULL;
}

int
slash_is_command(const char *line)
{
	return line[0] == '/' && line[1] != '/';
}

int
slash_run(struct tui *t, const char *line)
{
	const struct slash_cmd	*c;
	const char		*name = line + 1, *args;
	size_t			 len = strcspn(name, " \t\n");
	char			*cause = NULL, *trimmed;
	size_t			 n;

	if ((c = slash_find(name, len)) == NULL) {
		tui_flash(t, "/%.*s: no such command (/help lists them)",
		    (int)len, name);
		return -1;
	}
	args = name + len + strspn(name + len, " \t\n");
	trimmed = xstrdup(args);
	for (n = strlen(trimmed); n > 0 && strchr(" \t\n", trimmed[n - 1]);
	    n--)
		trimmed[n - 1] = '\0';
	if (c->exec(t, trimmed, &cause) != 0) {
		tui_flash(t, "/%s: %s", c->name, cause);
		free(cause);
		free(trimmed);
		return -1;
	}
	free(trimmed);
	return 0;
}

size_t
slash_complete(const char *word, size_t len, struct buf *common,
    struct buf *choices)
{
	size_t	 i, n = 0;
	const char *name;

	buf_reset(common);
	for (i = 0; i < nitems(slash_table); i++) {
		name = slash_table[i].name;
		if (strncmp(name, word, len) != 0)
			continue;
		buf_addf(choices, "%s/%s", n > 0 ? " " : "", name);
		slash_narrow(common, name, n++);
	}
	return n;
}

void
slash_narrow(struct buf *common, const char *name, size_t n)
{
	size_t	 k;

	if (n == 0) {
		buf_reset(common);
		buf_adds(common, name);
		return;
	}
	for (k = 0; k < common->len && name[k] == common->data[k]; k++)
		;
	common->len = k;
	common->data[k] = '\0';
}

void
slash_help(struct buf *b)
{
	size_t	 i;
	char	*usage;

	buf_adds(b, "commands (in the input line; Tab completes)\n");
	for (i = 0; i < nitems(slash_table); i++) {
		usage = xprintf("/%s%s%s", slash_table[i].name,
		    *slash_table[i].args != '\0' ? " " : "",
		    slash_table[i].args);
		buf_addf(b, "  %-14s %s\n", usage, slash_table[i].help);
		free(usage);
	}
	buf_addf(b, "  %-14s %s\n", "@PATH", "a workspace file, sent with "
	    "the message (Tab completes)");
}
