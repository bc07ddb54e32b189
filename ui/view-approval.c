/*
 * view-approval.c: the approval modal (DESIGN 9). It shows the oldest
 * request that waits for the user: the command (or the path of a write), its
 * parsed parts with each part's verdict and rule, the working directory and,
 * for a write in manual mode, the diff of the proposed change. y allows once,
 * a always (a rule the user can edit first, Tab for the wider one), n denies,
 * e edits the command, m denies with a message to the agent. The follow-up
 * questions (which rule, the edited command, the message) are asked inside
 * the modal, under the request they are about.
 *
 * The queue is the session's "pending" list from the server, kept current by
 * approval.needed and approval.decided events; any client's answer removes a
 * request from every client.
 *
 * A request that shows while the user is typing is guarded: it takes no
 * answer key, so the next "y" or "n" of a sentence never answers a command
 * the user has not read. The keys go on to the input as before; C-o (or a
 * second of quiet with an empty input) arms the modal.
 */
#include <stdlib.h>
#include <string.h>

#include "ui.h"

struct approval {
	struct tui	*tui;
	cJSON		*queue;		/* array of approval.needed events */
	char		*prompt_id;	/* request the open prompt is for */
	int		 wider;		/* the rule prompt shows the wider rule */
	int		 scroll;	/* diff rows scrolled */
	char		*head_seen;	/* request_id of the head last checked */
	char		*edit_id;	/* an edited command the server judges */
	char		*edit_cmd;
	int		 guarded;	/* it showed while the user typed */
	const char	*asking;	/* the keys of the open follow-up */
};

struct approval *
approval_new(struct tui *t)
{
	struct approval	*a = xcalloc(1, sizeof *a);

	a->tui = t;
	a->queue = cJSON_CreateArray();
	return a;
}

void
approval_free(struct approval *a)
{
	if (a == NULL)
		return;
	cJSON_Delete(a->queue);
	free(a->prompt_id);
	free(a->head_seen);
	free(a->edit_id);
	free(a->edit_cmd);
	free(a);
}

int
approval_count(struct approval *a)
{
	return a != NULL ? cJSON_GetArraySize(a->queue) : 0;
}

static int
approval_find(struct approval *a, const char *id)
{
	const cJSON	*r;
	const char	*rid;
	int		 i = 0;

	if (id == NULL)
		return -1;
	cJSON_ArrayForEach(r, a->queue) {
		if ((rid = json_str(r, "request_id")) != NULL &&
		    strcmp(rid, id) == 0)
			return i;
		i++;
	}
	return -1;
}

static void
approval_remove(struct approval *a, const char *id)
{
	int	 i;

	if ((i = approval_find(a, id)) >= 0) {
		cJSON_DeleteItemFromArray(a->queue, i);
		if (i == 0)
			a->scroll = 0;
		/* Answered elsewhere: its question must not sit on the next. */
		if (i == 0 && a->asking != NULL)
			tui_prompt_cancel(a->tui);
	}
}

void
approval_event(struct approval *a, const cJSON *ev)
{
	const char	*type = json_str(ev, "type");

	if (type == NULL)
		return;
	if (strcmp(type, "approval.needed") == 0) {
		if (approval_find(a, json_str(ev, "request_id")) < 0)
			cJSON_AddItemToArray(a->queue, cJSON_Duplicate(ev, 1));
	} else if (strcmp(type, "approval.decided") == 0 &&
	    json_str(ev, "command") != NULL) {
		approval_remove(a, json_str(ev, "request_id"));
		tui_flash(a->tui, "%s: allow, edited to: %s",
		    json_str(ev, "request_id") ? json_str(ev, "request_id") :
		    "?", json_str(ev, "command"));
	} else if (strcmp(type, "approval.decided") == 0)
		approval_remove(a, json_str(ev, "request_id"));
	else if (strcmp(type, "run.finished") == 0 && approval_count(a) > 0) {
		/* A finished run has nothing left to approve. */
		cJSON_Delete(a->queue);
		a->queue = cJSON_CreateArray();
		if (a->asking != NULL)
			tui_prompt_cancel(a->tui);
	}
}

void
approval_state(struct approval *a, const cJSON *state)
{
	const cJSON	*p = cJSON_GetObjectItem(state, "pending"), *r;

	if (!cJSON_IsArray(p))
		return;
	cJSON_Delete(a->queue);
	a->queue = cJSON_CreateArray();
	cJSON_ArrayForEach(r, p)
		cJSON_AddItemToArray(a->queue, cJSON_Duplicate(r, 1));
	a->scroll = 0;
}

static const cJSON *
approval_head(struct approval *a)
{
	return cJSON_GetArrayItem(a->queue, 0);
}

void
approval_check(struct approval *a, int typing)
{
	const char	*id = json_str(approval_head(a), "request_id");

	if (id == NULL) {
		free(a->head_seen);
		a->head_seen = NULL;
		a->guarded = 0;
		return;
	}
	if (a->head_seen != NULL && strcmp(a->head_seen, id) == 0)
		return;
	free(a->head_seen);
	a->head_seen = xstrdup(id);
	a->guarded = typing;
}

int
approval_guarded(struct approval *a)
{
	return a != NULL && approval_count(a) > 0 && a->guarded;
}

void
approval_arm(struct approval *a)
{
	a->guarded = 0;
}

static cJSON *
approval_message(struct approval *a, const char *id, const char *decision)
{
	cJSON	*m = cJSON_CreateObject();

	cJSON_AddStringToObject(m, "type", "approve");
	cJSON_AddStringToObject(m, "session", tui_session(a->tui));
	cJSON_AddStringToObject(m, "request_id", id);
	cJSON_AddStringToObject(m, "decision", decision);
	return m;
}

static void
approval_send(struct approval *a, const char *id, const char *decision,
    const char *key, const char *value)
{
	cJSON	*m;

	if (id == NULL)
		return;
	m = approval_message(a, id, decision);
	if (key != NULL && value != NULL)
		cJSON_AddStringToObject(m, key, value);
	tui_send(a->tui, m);
	/* id belongs to the queued request: use it before removing that. */
	tui_flash(a->tui, "%s: %s", id, decision);
	approval_remove(a, id);
}

/* A follow-up question inside the modal; HINT replaces its key hints. */
static void
approval_ask(struct approval *a, const char *label, const char *initial,
    tui_prompt_cb cb, const char *hint)
{
	tui_prompt_modal(a->tui, label, initial, cb, a);
	a->asking = hint;
}

static const char *
approval_rule(const cJSON *r, int wider)
{
	const cJSON	*s = cJSON_GetObjectItem(r, "suggestion");
	const char	*v;

	if (wider && (v = json_str(s, "wider")) != NULL)
		return v;
	return json_str(s, "rule");
}

static void
approval_always_cb(struct tui *t, void *arg, const char *text)
{
	struct approval	*a = arg;

	a->asking = NULL;
	if (text != NULL)
		approval_send(a, a->prompt_id, "always", *text != '\0' ?
		    "rule" : NULL, text);
	free(a->prompt_id);
	a->prompt_id = NULL;
}

static void
approval_tab_cb(struct tui *t, void *arg, const char *text)
{
	struct approval	*a = arg;
	int		 i = approval_find(a, a->prompt_id);
	const char	*rule;

	if (i < 0)
		return;
	a->wider = !a->wider;
	rule = approval_rule(cJSON_GetArrayItem(a->queue, i), a->wider);
	tui_prompt_set(t, rule != NULL ? rule : "");
}

/*
 * An edited command goes to the server, which judges it by the policy; the
 * request stays in the queue until the server decides it, so a refused edit
 * leaves it to answer again (approval_refused).
 */
static void
approval_send_edit(struct approval *a, const char *id, const char *command,
    int override)
{
	cJSON	*m = approval_message(a, id, "allow");

	cJSON_AddStringToObject(m, "command", command);
	if (override)
		cJSON_AddBoolToObject(m, "override", 1);
	tui_send(a->tui, m);
	free(a->edit_id);
	a->edit_id = xstrdup(id);
	free(a->edit_cmd);
	a->edit_cmd = xstrdup(command);
}

static void
approval_edit_cb(struct tui *t, void *arg, const char *text)
{
	struct approval	*a = arg;

	a->asking = NULL;
	if (text != NULL && *text != '\0' && a->prompt_id != NULL)
		approval_send_edit(a, a->prompt_id, text, 0);
	free(a->prompt_id);
	a->prompt_id = NULL;
}

static void
approval_override_cb(struct tui *t, void *arg, const char *text)
{
	struct approval	*a = arg;

	a->asking = NULL;
	if (a->edit_id == NULL || approval_find(a, a->edit_id) < 0)
		return;
	if (text != NULL && strcmp(text, "yes") == 0) {
		approval_send_edit(a, a->edit_id, a->edit_cmd, 1);
		tui_flash(t, "%s: allow (edited, over the policy's deny)",
		    a->edit_id);
		return;
	}
	tui_flash(t, "%s: not run; the request still waits", a->edit_id);
}

int
approval_refused(struct approval *a, const char *id, const char *why)
{
	char	*label;

	if (a->edit_id == NULL || id == NULL || strcmp(a->edit_id, id) != 0 ||
	    approval_find(a, id) < 0)
		return 0;
	/* The server's reason names the rule; keep it up to the ';'. */
	label = xprintf("%.*s. Run it anyway? type yes:",
	    (int)strcspn(why, ";"), why);
	approval_ask(a, label, "", approval_override_cb,
	    "yes and Enter: run it anyway · Esc: back to the request");
	free(label);
	return 1;
}

static void
approval_message_cb(struct tui *t, void *arg, const char *text)
{
	struct approval	*a = arg;

	a->asking = NULL;
	if (text != NULL)
		approval_send(a, a->prompt_id, "deny", *text != '\0' ?
		    "message" : NULL, text);
	free(a->prompt_id);
	a->prompt_id = NULL;
}

/* Manual mode asks for every command and write: no rule applies there
 * (a host's net-allow rule still does). */
static int
approval_manual(struct approval *a, const cJSON *r)
{
	const char	*mode = json_str(tui_state(a->tui), "mode");

	return mode != NULL && strcmp(mode, "manual") == 0 &&
	    json_str(r, "host") == NULL;
}

int
approval_key(struct approval *a, int key)
{
	const cJSON	*r = approval_head(a);
	const char	*id, *cmd, *rule;
	enum ui_action	 act;

	if (r == NULL)
		return 0;
	act = keys_lookup(SCOPE_APPROVAL, key);
	if (act == ACT_NONE || act == ACT_WIDER || act == ACT_ARM)
		return 0;
	if (tui_readonly(a->tui)) {
		tui_flash(a->tui, "read-only: another client answers");
		return 1;
	}
	id = json_str(r, "request_id");
	free(a->prompt_id);
	a->prompt_id = id != NULL ? xstrdup(id) : NULL;
	cmd = json_str(r, "command");
	switch (act) {
	case ACT_ALLOW:
		approval_send(a, id, "allow", NULL, NULL);
		break;
	case ACT_DENY:
		approval_send(a, id, "deny", NULL, NULL);
		break;
	case ACT_ALWAYS:
		if (approval_manual(a, r)) {
			tui_flash(a->tui, "manual mode asks every time: an "
			    "always rule would have no effect (switch the mode "
			    "first)");
			break;
		}
		a->wider = 0;
		if (json_str(r, "path") != NULL) {
			approval_ask(a, "always allow writes matching "
			    "(empty: this path only):", "", approval_always_cb,
			    "Enter: save the rule and allow · Esc: back");
			break;
		}
		rule = approval_rule(r, 0);
		approval_ask(a, rule != NULL ? "always allow, rule (Tab: "
		    "wider):" : "always allow, rule (none proposed, type one):",
		    rule != NULL ? rule : "", approval_always_cb,
		    "Enter: save the rule and allow · Tab: wider or narrower "
		    "rule · Esc: back");
		tui_prompt_on_tab(a->tui, approval_tab_cb);
		break;
	case ACT_EDIT:
		if (cmd == NULL) {
			tui_flash(a->tui, "only a command can be edited");
			break;
		}
		approval_ask(a, "run instead:", cmd, approval_edit_cb,
		    "Enter: run this (the policy judges it) · Esc: back");
		break;
	case ACT_MESSAGE:
		approval_ask(a, "deny, tell the agent:", "",
		    approval_message_cb, "Enter: deny and send · Esc: back");
		break;
	case ACT_PAGE_UP:
		a->scroll = a->scroll > 5 ? a->scroll - 5 : 0;
		break;
	case ACT_PAGE_DOWN:
		a->scroll += 5;
		break;
	default:
		return 0;
	}
	return 1;
}

/* Why a part has its verdict: "rule R (source)", a reason, or none. */
static void
approval_part_why(const cJSON *part, struct buf *b)
{
	const char	*s;

	buf_reset(b);
	if ((s = json_str(part, "rule")) != NULL) {
		buf_addf(b, "rule %s", s);
		if ((s = json_str(part, "source")) != NULL)
			buf_addf(b, " (%s)", s);
	} else if ((s = json_str(part, "reason")) != NULL)
		buf_adds(b, s);
	else
		buf_adds(b, "no rule");
}

/* Rows a part's reason takes beyond its own line, at width W. */
static int
approval_part_rows(const cJSON *part, int w)
{
	struct buf	 b = BUF_INIT;
	int		 width, col = w - (11 + (w - 14) / 2 + 1) - 2, n = 0;

	size_t		 off = 0;

	approval_part_why(part, &b);
	width = text_width(buf_str(&b), b.len);
	if (width > col && w > 16) {
		/* As approval_wrap will break it. */
		while (off < b.len) {
			off += text_wrap_next(buf_str(&b), b.len, off, w - 15);
			n++;
		}
	}
	buf_release(&b);
	return n;
}

/* S wrapped at column X, COLS wide, from row Y: the next row. */
static int
approval_wrap(WINDOW *win, int y, int maxy, int x, int cols, const char *s,
    size_t len)
{
	size_t	 off = 0, n;

	while (off < len && y < maxy) {
		n = text_wrap_next(s, len, off, cols);
		text_draw_role(win, y++, x, s + off, n, cols, ROLE_DIM);
		off += n;
	}
	return y;
}

/*
 * An MCP tool's arguments (DESIGN 18) as one line of JSON, cut at
 * APPROVAL_ARGS_MAX bytes, or NULL when the request is not about one.
 */
#define APPROVAL_ARGS_MAX 2000
static char *
approval_arguments(const cJSON *r)
{
	const cJSON	*args = cJSON_GetObjectItem(r, "arguments");
	char		*s;

	if (!cJSON_IsObject(args))
		return NULL;
	s = json_print(args);
	if (strlen(s) > APPROVAL_ARGS_MAX)
		memcpy(s + APPROVAL_ARGS_MAX - 3, "...", 4);
	return s;
}

/* Rows the modal needs for the oldest request, borders included. */
int
approval_height(struct approval *a, int w)
{
	const cJSON	*r = approval_head(a), *part;
	const char	*s, *p;
	int		 h = 2 + 2, n;

	if (r == NULL)
		return 0;
	if ((s = json_str(r, "command")) != NULL || (s = json_str(r, "path")))
		h += 1 + text_width(s, strlen(s)) / (w > 16 ? w - 16 : 1);
	if ((p = approval_arguments(r)) != NULL) {
		/* An MCP tool: its name, and what it is given. */
		h += 2 + text_width(p, strlen(p)) / (w > 16 ? w - 16 : 1);
		free((char *)p);
	}
	/* A host the sandbox's proxy asks about: host:port, and by whom. */
	h += (json_str(r, "host") != NULL) + (json_str(r, "by_command") != NULL);
	h += json_str(r, "cwd") != NULL;
	h += json_str(r, "verdict") != NULL;
	if ((n = cJSON_GetArraySize(cJSON_GetObjectItem(r, "parts"))) > 0) {
		h += 1 + n;
		cJSON_ArrayForEach(part, cJSON_GetObjectItem(r, "parts"))
			h += approval_part_rows(part, w);
	}
	h += approval_rule(r, 0) != NULL;
	if ((s = json_str(r, "diff")) != NULL) {
		for (n = 2, p = s; (p = strchr(p, '\n')) != NULL; p++)
			n++;
		h += n;
	}
	return h;
}

static enum ui_role
approval_verdict_role(const char *v)
{
	if (v == NULL)
		return ROLE_DIM;
	if (strcmp(v, "allow") == 0)
		return ROLE_OK;
	if (strcmp(v, "deny") == 0)
		return ROLE_FAIL;
	return ROLE_PENDING;
}

/* LABEL then VALUE, wrapped under itself; returns the next row. */
static int
approval_field(WINDOW *win, int y, int maxy, int w, const char *label,
    const char *value, enum ui_role role)
{
	size_t	 len = strlen(value), off = 0, n;
	int	 x = 2 + 10;

	text_draw_role(win, y, 2, label, strlen(label), 10, ROLE_DIM);
	do {
		n = text_wrap_next(value, len, off, w - x - 2);
		text_draw_role(win, y++, x, value + off, n, w - x - 2, role);
		off += n;
	} while (off < len && y < maxy);
	return y;
}

void
approval_draw(struct approval *a, WINDOW *win, int w, int h)
{
	const cJSON	*r = approval_head(a), *part, *parts;
	const char	*s, *v, *diff, *line, *nl;
	char		*args;
	struct buf	 b = BUF_INIT;
	enum ui_role	 role;
	int		 y = 1, maxy = h - 3, skip, x;
	size_t		 len;

	wattr_set(win, theme_attr(ROLE_MODAL_BORDER) & ~A_COLOR,
	    (short)theme_pair(ROLE_MODAL_BORDER), NULL);
	box(win, 0, 0);
	if (r == NULL)
		return;
	buf_addf(&b, " approval needed (1 of %d)", approval_count(a));
	if (json_num(r, "calls", 1) > 1)
		buf_addf(&b, " · call %.0f of %.0f of this reply",
		    json_num(r, "call", 1), json_num(r, "calls", 1));
	buf_addc(&b, ' ');
	text_draw_role(win, 0, 2, buf_str(&b), b.len, w - 4,
	    ROLE_MODAL_BORDER);
	buf_reset(&b);
	if ((args = approval_arguments(r)) != NULL) {
		s = json_str(r, "tool");
		y = approval_field(win, y, maxy, w, "tool", s != NULL ? s : "?",
		    ROLE_TOOL);
		if (y < maxy)
			y = approval_field(win, y, maxy, w, "arguments", args,
			    ROLE_MODAL);
		free(args);
	} else if ((s = json_str(r, "command")) != NULL)
		y = approval_field(win, y, maxy, w, "command", s, ROLE_TOOL);
	else if ((s = json_str(r, "path")) != NULL)
		y = approval_field(win, y, maxy, w, "write", s, ROLE_TOOL);
	else if ((s = json_str(r, "host")) != NULL) {
		buf_addf(&b, "%s:%d", s, (int)json_num(r, "port", 0));
		y = approval_field(win, y, maxy, w, "host", buf_str(&b),
		    ROLE_TOOL);
		buf_reset(&b);
		if ((s = json_str(r, "by_command")) != NULL)
			y = approval_field(win, y, maxy, w, "by", s, ROLE_MODAL);
	}
	if ((s = json_str(r, "cwd")) != NULL)
		y = approval_field(win, y, maxy, w, "cwd", s, ROLE_MODAL);
	if ((s = json_str(r, "verdict")) != NULL)
		y = approval_field(win, y, maxy, w, "verdict", s,
		    approval_verdict_role(s));
	parts = cJSON_GetObjectItem(r, "parts");
	if (cJSON_GetArraySize(parts) > 0 && y < maxy) {
		text_draw_role(win, y++, 2, "parts", 5, 10, ROLE_DIM);
		cJSON_ArrayForEach(part, parts) {
			if (y >= maxy)
				break;
			v = json_str(part, "verdict");
			role = approval_verdict_role(v);
			x = 4;
			x += text_draw_role(win, y, x, v != NULL ? v : "?",
			    v != NULL ? strlen(v) : 1, 6, role);
			x = 11;
			s = json_str(part, "command");
			x += text_draw_role(win, y, x, s ? s : "", s ?
			    strlen(s) : 0, (w - 14) / 2, ROLE_MODAL);
			approval_part_why(part, &b);
			x = 11 + (w - 14) / 2 + 1;
			if (text_width(buf_str(&b), b.len) <= w - x - 2) {
				text_draw_role(win, y++, x, buf_str(&b), b.len,
				    w - x - 2, ROLE_DIM);
				continue;
			}
			/* Too long for its column: whole, on rows below. */
			y++;
			y = approval_wrap(win, y, maxy, 13, w - 15, buf_str(&b),
			    b.len);
		}
	}
	if ((s = approval_rule(r, 0)) != NULL && y < maxy)
		y = approval_field(win, y, maxy, w, "always", s, ROLE_DIM);
	if ((diff = json_str(r, "diff")) != NULL && y < maxy) {
		text_draw_role(win, y++, 2, "diff", 4, 10, ROLE_DIM);
		skip = a->scroll;
		for (line = diff; line != NULL && *line != '\0' && y < maxy;
		    line = nl != NULL ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			len = nl != NULL ? (size_t)(nl - line) : strlen(line);
			if (skip-- > 0)
				continue;
			role = ROLE_MODAL;
			if (len > 0 && *line == '+' && strncmp(line, "+++", 3))
				role = ROLE_DIFF_ADD;
			else if (len > 0 && *line == '-' &&
			    strncmp(line, "---", 3))
				role = ROLE_DIFF_DEL;
			else if (len > 1 && strncmp(line, "@@", 2) == 0)
				role = ROLE_DIFF_HUNK;
			text_draw_role(win, y++, 4, line, len, w - 6, role);
		}
	}
	if (tui_readonly(a->tui))
		s = "read-only: another client answers";
	else if (a->asking != NULL)
		s = a->asking;
	else if (a->guarded)
		s = "you were typing: keys go on to the input · C-o to answer "
		    "this request";
	else {
		/* Only the keys that apply to this request. */
		buf_reset(&b);
		buf_adds(&b, "y allow once · ");
		if (!approval_manual(a, r))
			buf_adds(&b, "a always · ");
		buf_adds(&b, "n deny · ");
		if (json_str(r, "command") != NULL)
			buf_adds(&b, "e edit · ");
		buf_adds(&b, "m deny with a message");
		s = buf_str(&b);
	}
	text_draw_role(win, h - 2, 2, s, strlen(s), w - 4, ROLE_PENDING);
	buf_release(&b);
}
