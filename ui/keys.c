/*
 * keys.c: every key binding of the screen, in one table. The client looks
 * keys up here (scope by scope, the innermost first) and the help screen
 * prints this same table, so the two cannot disagree. Lookup is a linear
 * scan: the table is short and a key press is rare.
 */
#include <stdlib.h>
#include <string.h>

#include "ui.h"

#define FN(k)	(KEYC_FN | (k))
#define ESC	27
#define ENTER	'\r'

struct key_binding {
	enum key_scope	 scope;
	int		 key;
	enum ui_action	 action;
	const char	*help;		/* NULL: an alias, not listed */
};

static int	keys_prefix_key = KEYC_CTRL('b');

static const char *keys_scope_names[SCOPE_COUNT] = {
	"global", "prefix", "panes", "agent", "files", "input", "approval",
	"diff", "viewer"
};

static const struct key_binding keys_table[] = {
	{ SCOPE_GLOBAL, '\t', ACT_FOCUS_NEXT, "focus the next pane" },
	{ SCOPE_GLOBAL, FN(KEY_BTAB), ACT_FOCUS_PREV, "focus the previous pane" },
	{ SCOPE_GLOBAL, ESC, ACT_INTERRUPT, "interrupt the agent; twice: /rewind" },
	{ SCOPE_GLOBAL, FN(KEY_F(1)), ACT_HELP, "show this help" },
	{ SCOPE_GLOBAL, FN(KEY_RESIZE), ACT_REDRAW, NULL },

	{ SCOPE_PREFIX, 'd', ACT_DETACH, "detach (the agent keeps working)" },
	{ SCOPE_PREFIX, '?', ACT_HELP, "show this help" },
	{ SCOPE_PREFIX, 'z', ACT_ZOOM, "zoom the focused pane" },
	{ SCOPE_PREFIX, 'm', ACT_MODE, "switch mode: manual, auto, strict" },
	{ SCOPE_PREFIX, 'D', ACT_DIFF, "show the diff" },
	{ SCOPE_PREFIX, 'o', ACT_FOCUS_NEXT, "focus the next pane" },
	{ SCOPE_PREFIX, FN(KEY_LEFT), ACT_FOCUS_LEFT, "focus the pane to the left" },
	{ SCOPE_PREFIX, FN(KEY_RIGHT), ACT_FOCUS_RIGHT, "focus the pane to the right" },
	{ SCOPE_PREFIX, FN(KEY_UP), ACT_FOCUS_UP, "focus the pane above" },
	{ SCOPE_PREFIX, FN(KEY_DOWN), ACT_FOCUS_DOWN, "focus the pane below" },
	{ SCOPE_PREFIX, '1', ACT_FOCUS_TREE, "focus the files" },
	{ SCOPE_PREFIX, '2', ACT_FOCUS_AGENT, "focus the agent transcript" },
	{ SCOPE_PREFIX, '3', ACT_FOCUS_OUTPUT, "focus the output" },
	{ SCOPE_PREFIX, '4', ACT_FOCUS_INPUT, "focus the input line" },
	{ SCOPE_PREFIX, 'T', ACT_THEME, "switch to the next theme" },
	{ SCOPE_PREFIX, 'r', ACT_REDRAW, "redraw the screen" },

	{ SCOPE_PANE, '?', ACT_HELP, "show this help" },
	{ SCOPE_PANE, 'z', ACT_ZOOM, "zoom the focused pane" },
	{ SCOPE_PANE, 'D', ACT_DIFF, "show the diff" },
	{ SCOPE_PANE, FN(KEY_UP), ACT_UP, "move or scroll up" },
	{ SCOPE_PANE, 'k', ACT_UP, NULL },
	{ SCOPE_PANE, FN(KEY_DOWN), ACT_DOWN, "move or scroll down" },
	{ SCOPE_PANE, 'j', ACT_DOWN, NULL },
	{ SCOPE_PANE, FN(KEY_PPAGE), ACT_PAGE_UP, "scroll a page up" },
	{ SCOPE_PANE, FN(KEY_NPAGE), ACT_PAGE_DOWN, "scroll a page down" },
	{ SCOPE_PANE, FN(KEY_HOME), ACT_HOME, "go to the top" },
	{ SCOPE_PANE, 'g', ACT_HOME, NULL },
	{ SCOPE_PANE, FN(KEY_END), ACT_END, "go to the end (follow)" },
	{ SCOPE_PANE, 'G', ACT_END, NULL },
	{ SCOPE_PANE, 'i', ACT_CLOSE, "back to the input line" },

	{ SCOPE_AGENT, ENTER, ACT_ENTER, "expand or fold a tool call" },
	{ SCOPE_AGENT, FN(KEY_ENTER), ACT_ENTER, NULL },
	{ SCOPE_AGENT, '/', ACT_SEARCH, "search the transcript" },
	{ SCOPE_AGENT, 'n', ACT_SEARCH_NEXT, "next match" },

	{ SCOPE_TREE, ENTER, ACT_ENTER, "open a file, fold a directory" },
	{ SCOPE_TREE, FN(KEY_ENTER), ACT_ENTER, NULL },
	{ SCOPE_TREE, FN(KEY_LEFT), ACT_LEFT, "fold the directory" },
	{ SCOPE_TREE, 'h', ACT_LEFT, NULL },
	{ SCOPE_TREE, FN(KEY_RIGHT), ACT_RIGHT, "unfold the directory" },
	{ SCOPE_TREE, 'l', ACT_RIGHT, NULL },

	{ SCOPE_INPUT, ENTER, ACT_SEND, "send the message" },
	{ SCOPE_INPUT, FN(KEY_ENTER), ACT_SEND, NULL },
	{ SCOPE_INPUT, KEYC_META | ENTER, ACT_NEWLINE, "new line" },
	{ SCOPE_INPUT, '\n', ACT_NEWLINE, "new line (C-j)" },
	{ SCOPE_INPUT, FN(KEY_UP), ACT_HISTORY_UP, "previous message" },
	{ SCOPE_INPUT, FN(KEY_DOWN), ACT_HISTORY_DOWN, "next message" },
	{ SCOPE_INPUT, FN(KEY_PPAGE), ACT_PAGE_UP, "scroll the transcript up" },
	{ SCOPE_INPUT, FN(KEY_NPAGE), ACT_PAGE_DOWN, "scroll the transcript down" },
	{ SCOPE_INPUT, KEYC_CTRL('u'), ACT_CLEAR, "clear the line" },

	{ SCOPE_APPROVAL, 'y', ACT_ALLOW, "allow once" },
	{ SCOPE_APPROVAL, 'a', ACT_ALWAYS, "always allow (edit the rule)" },
	{ SCOPE_APPROVAL, 'n', ACT_DENY, "deny" },
	{ SCOPE_APPROVAL, 'e', ACT_EDIT, "edit the command, then run it" },
	{ SCOPE_APPROVAL, 'm', ACT_MESSAGE, "deny with a message to the agent" },
	{ SCOPE_APPROVAL, FN(KEY_PPAGE), ACT_PAGE_UP, "scroll the diff up" },
	{ SCOPE_APPROVAL, FN(KEY_NPAGE), ACT_PAGE_DOWN, "scroll the diff down" },
	{ SCOPE_APPROVAL, '\t', ACT_WIDER, "rule prompt: use the wider rule" },
	{ SCOPE_APPROVAL, KEYC_CTRL('o'), ACT_ARM,
	    "answer a request that showed while you typed" },

	{ SCOPE_DIFF, 'n', ACT_NEXT_HUNK, "next hunk" },
	{ SCOPE_DIFF, '}', ACT_NEXT_FILE, "next file (1-9: that file of the list)" },
	{ SCOPE_DIFF, '{', ACT_PREV_FILE, "previous file" },
	{ SCOPE_DIFF, 'p', ACT_PREV_HUNK, "previous hunk" },
	{ SCOPE_DIFF, 'r', ACT_REVERT, "revert the hunk (asks)" },
	{ SCOPE_DIFF, 'c', ACT_COMMENT, "comment on the hunk (sent to the agent)" },
	{ SCOPE_DIFF, 'C', ACT_COMMIT, "commit the changes (asks the message)" },
	{ SCOPE_DIFF, 'P', ACT_PR, "push and open a pull request (asks the title)" },
	{ SCOPE_DIFF, 'L', ACT_PR_LOCAL, "commit onto a branch of the source repository" },
	{ SCOPE_DIFF, 'y', ACT_YES, NULL },
	{ SCOPE_DIFF, 'N', ACT_NO, NULL },
	{ SCOPE_DIFF, 'g', ACT_HOME, NULL },
	{ SCOPE_DIFF, 'G', ACT_END, NULL },
	{ SCOPE_DIFF, 'q', ACT_CLOSE, "close" },
	{ SCOPE_DIFF, ESC, ACT_CLOSE, NULL },

	{ SCOPE_VIEWER, 'q', ACT_CLOSE, "close" },
	{ SCOPE_VIEWER, ESC, ACT_CLOSE, NULL },
	{ SCOPE_VIEWER, 'g', ACT_HOME, NULL },
	{ SCOPE_VIEWER, 'G', ACT_END, NULL },
};

/* Keys every full-screen view scrolls with (diff, viewer, help). */
static const struct key_binding keys_scroll[] = {
	{ SCOPE_VIEWER, FN(KEY_UP), ACT_UP, NULL },
	{ SCOPE_VIEWER, 'k', ACT_UP, NULL },
	{ SCOPE_VIEWER, FN(KEY_DOWN), ACT_DOWN, NULL },
	{ SCOPE_VIEWER, 'j', ACT_DOWN, NULL },
	{ SCOPE_VIEWER, FN(KEY_PPAGE), ACT_PAGE_UP, NULL },
	{ SCOPE_VIEWER, ' ', ACT_PAGE_DOWN, NULL },
	{ SCOPE_VIEWER, FN(KEY_NPAGE), ACT_PAGE_DOWN, NULL },
	{ SCOPE_VIEWER, FN(KEY_HOME), ACT_HOME, NULL },
	{ SCOPE_VIEWER, FN(KEY_END), ACT_END, NULL },
};

int
keys_set_prefix(const char *spec, char **cause)
{
	if (spec == NULL || *spec == '\0')
		return 0;
	if ((spec[0] == 'C' || spec[0] == 'c') && spec[1] == '-' &&
	    spec[2] >= '@' && spec[2] <= 'z' && spec[3] == '\0') {
		keys_prefix_key = KEYC_CTRL(spec[2]);
		return 0;
	}
	if (spec[0] == '^' && spec[1] != '\0' && spec[2] == '\0') {
		keys_prefix_key = KEYC_CTRL(spec[1]);
		return 0;
	}
	*cause = xprintf("prefix '%s': expected a control key such as C-b",
	    spec);
	return -1;
}

int
keys_prefix(void)
{
	return keys_prefix_key;
}

enum ui_action
keys_lookup(enum key_scope scope, int key)
{
	size_t	i;

	for (i = 0; i < nitems(keys_table); i++) {
		if (keys_table[i].scope == scope && keys_table[i].key == key)
			return keys_table[i].action;
	}
	if (scope == SCOPE_DIFF || scope == SCOPE_VIEWER) {
		for (i = 0; i < nitems(keys_scroll); i++) {
			if (keys_scroll[i].key == key)
				return keys_scroll[i].action;
		}
	}
	return ACT_NONE;
}

char *
keys_name(int key)
{
	const char	*fn;
	char		*s, *inner;
	char		 ch[8];

	if (key & KEYC_META) {
		inner = keys_name(key & ~KEYC_META);
		s = xprintf("M-%s", inner);
		free(inner);
		return s;
	}
	if (key & KEYC_FN) {
		switch (key & ~KEYC_FN) {
		case KEY_UP:	fn = "Up"; break;
		case KEY_DOWN:	fn = "Down"; break;
		case KEY_LEFT:	fn = "Left"; break;
		case KEY_RIGHT:	fn = "Right"; break;
		case KEY_PPAGE:	fn = "PgUp"; break;
		case KEY_NPAGE:	fn = "PgDn"; break;
		case KEY_HOME:	fn = "Home"; break;
		case KEY_END:	fn = "End"; break;
		case KEY_BTAB:	fn = "S-Tab"; break;
		case KEY_ENTER:	fn = "KP-Enter"; break;
		case KEY_F(1):	fn = "F1"; break;
		default:	fn = "?"; break;
		}
		return xstrdup(fn);
	}
	switch (key) {
	case '\r':	return xstrdup("Enter");
	case '\t':	return xstrdup("Tab");
	case ESC:	return xstrdup("Esc");
	case ' ':	return xstrdup("Space");
	}
	if (key < 32)
		return xprintf("C-%c", key + 'a' - 1);
	if (key < 128) {
		ch[0] = (char)key;
		ch[1] = '\0';
		return xstrdup(ch);
	}
	return xprintf("U+%04X", key);
}

void
keys_help(struct buf *b)
{
	size_t	 i;
	char	*name, *pfx, *keys;
	int	 s;

	pfx = keys_name(keys_prefix_key);
	for (s = 0; s < SCOPE_COUNT; s++) {
		buf_addf(b, "%s\n", keys_scope_names[s]);
		for (i = 0; i < nitems(keys_table); i++) {
			if ((int)keys_table[i].scope != s ||
			    keys_table[i].help == NULL)
				continue;
			name = keys_name(keys_table[i].key);
			if (s == SCOPE_PREFIX)
				keys = xprintf("%s %s", pfx, name);
			else
				keys = xstrdup(name);
			buf_addf(b, "  %-14s %s\n", keys, keys_table[i].help);
			free(keys);
			free(name);
		}
	}
	buf_addf(b, "viewer, diff and help also scroll with Up Down j k PgUp "
	    "PgDn Space Home End\n");
	free(pfx);
}
