/*
 * ui.h: the full-screen client (holt's TUI).
 *
 * tui_main() is the only entry point the rest of holt needs: it connects to
 * the server, attaches to one session and runs the screen until the user
 * detaches or the server goes away. Everything else in this header is shared
 * by the files of ui/ and is not used outside it.
 *
 * The screen is a set of panes; each pane shows one view, a const struct view
 * vtable (init/free/draw/key/resize, plus event for server events). Views
 * never draw on their own: they mark their pane dirty and tui.c draws every
 * dirty pane once before the loop sleeps ("mark dirty, draw once").
 */
#ifndef UI_H
#define UI_H

#include <curses.h>

#include "holt.h"

/*
 * Connects, attaches to SESSION (read-only when READONLY), runs the screen.
 * THEME is a theme name or file path (NULL: the "theme" option). Returns 0
 * on detach or normal exit, -1 with *cause set when the session cannot be
 * attached or the connection fails.
 */
int	 tui_main(const char *session, int readonly, const char *theme,
	     char **cause);
/*
 * watch.c: holt sandbox watch: the file tree and the output of every
 * command of sandbox ID (id or name), live, until q. 0, or -1 + *cause.
 */
int	 watch_main(const char *id, const char *theme, char **cause);
/* holt demo: open the diff review when the run finishes. */
void	 tui_demo_mode(int);

/*
 * theme.c: semantic colour roles. One X-macro table names every role, its
 * theme-file name and the 8-colour fallback; theme files map roles to
 * colours. Views ask for theme_attr(ROLE_x) and never name a colour.
 */
#define UI_ROLES \
	X(NORMAL,	"normal",	-1, -1, 0) \
	X(BORDER,	"border",	-1, -1, 0) \
	X(BORDER_FOCUS,	"border.focus",	COLOR_CYAN, -1, A_BOLD) \
	X(TITLE,	"title",	-1, -1, A_BOLD) \
	X(STATUS,	"status",	COLOR_BLACK, COLOR_CYAN, 0) \
	X(STATUS_ALERT,	"status.alert",	COLOR_WHITE, COLOR_RED, A_BOLD) \
	X(STATUS_BUSY,	"status.busy",	COLOR_BLACK, COLOR_YELLOW, 0) \
	X(STATUS_IDLE,	"status.idle",	COLOR_BLACK, COLOR_GREEN, 0) \
	X(USER,		"user",		COLOR_CYAN, -1, A_BOLD) \
	X(ASSISTANT,	"assistant",	-1, -1, 0) \
	X(CODE,		"code",		COLOR_YELLOW, -1, 0) \
	X(TOOL,		"tool",		COLOR_BLUE, -1, A_BOLD) \
	X(OK,		"ok",		COLOR_GREEN, -1, A_BOLD) \
	X(FAIL,		"fail",		COLOR_RED, -1, A_BOLD) \
	X(DENIED,	"denied",	COLOR_MAGENTA, -1, A_BOLD) \
	X(PENDING,	"pending",	COLOR_YELLOW, -1, A_BOLD) \
	X(DIM,		"dim",		-1, -1, A_DIM) \
	X(ERROR,	"error",	COLOR_RED, -1, A_BOLD) \
	X(SELECTED,	"selected",	-1, -1, A_REVERSE) \
	X(MATCH,	"match",	COLOR_BLACK, COLOR_YELLOW, 0) \
	X(DIR,		"dir",		COLOR_BLUE, -1, A_BOLD) \
	X(GIT_MODIFIED,	"git.modified",	COLOR_YELLOW, -1, 0) \
	X(GIT_ADDED,	"git.added",	COLOR_GREEN, -1, 0) \
	X(GIT_DELETED,	"git.deleted",	COLOR_RED, -1, 0) \
	X(GIT_UNTRACKED, "git.untracked", COLOR_MAGENTA, -1, 0) \
	X(LINENO,	"lineno",	-1, -1, A_DIM) \
	X(DIFF_ADD,	"diff.add",	COLOR_GREEN, -1, 0) \
	X(DIFF_DEL,	"diff.del",	COLOR_RED, -1, 0) \
	X(DIFF_HUNK,	"diff.hunk",	COLOR_CYAN, -1, 0) \
	X(MODAL,	"modal",	-1, -1, 0) \
	X(MODAL_BORDER,	"modal.border",	COLOR_YELLOW, -1, A_BOLD) \
	X(INPUT,	"input",	-1, -1, 0) \
	X(HINT,		"hint",		-1, -1, A_DIM) \
	X(SYN_KEYWORD,	"syntax.keyword", COLOR_MAGENTA, -1, A_BOLD) \
	X(SYN_STRING,	"syntax.string", COLOR_GREEN, -1, 0) \
	X(SYN_COMMENT,	"syntax.comment", -1, -1, A_DIM) \
	X(SYN_NUMBER,	"syntax.number", COLOR_CYAN, -1, 0) \
	X(HEADING,	"heading",	-1, -1, A_BOLD | A_UNDERLINE)

enum ui_role {
#define X(id, name, fg, bg, at) ROLE_##id,
	UI_ROLES
#undef X
	ROLE_COUNT
};

/* Loads NAME (a theme name or a path); on error keeps the defaults. */
int	 theme_load(const char *name, char **cause);
/* The text of a theme file; NAME is for messages. All or nothing. */
int	 theme_parse(const char *data, size_t len, const char *name,
	     char **cause);
char	*theme_describe(enum ui_role);	/* "role = fg bg attrs", caller frees */
void	 theme_start(void);		/* after initscr: allocate pairs */
attr_t	 theme_attr(enum ui_role);
int	 theme_pair(enum ui_role);
const char *theme_name(void);
/* SGR colour from program output (0-255 or 24-bit 0x1RRGGBB): a pair. */
int	 theme_sgr_pair(int fg, int bg);
char	*theme_find(const char *name);	/* path of a theme, caller frees */
char	*theme_next(void);	/* the next theme's name, caller frees */

/*
 * keys.c: the key table. Every binding is a line of one table (scope, key,
 * action, help); dispatch and the help screen both read it, so help never
 * lies. Keys are wide characters, or KEYC_FN|KEY_x for curses function keys,
 * with KEYC_META for Alt.
 */
#define KEYC_FN		0x01000000
#define KEYC_META	0x02000000
#define KEYC_CTRL(c)	((c) & 0x1f)

enum ui_action {
	ACT_NONE,
	/* global */
	ACT_DETACH, ACT_FOCUS_NEXT, ACT_FOCUS_PREV, ACT_FOCUS_LEFT,
	ACT_FOCUS_RIGHT, ACT_FOCUS_UP, ACT_FOCUS_DOWN, ACT_ZOOM, ACT_HELP,
	ACT_MODE, ACT_DIFF, ACT_REDRAW, ACT_INTERRUPT, ACT_QUIT,
	ACT_FOCUS_TREE, ACT_FOCUS_AGENT, ACT_FOCUS_OUTPUT, ACT_FOCUS_INPUT,
	ACT_THEME,
	/* scrolling and moving (panes) */
	ACT_UP, ACT_DOWN, ACT_PAGE_UP, ACT_PAGE_DOWN, ACT_HOME, ACT_END,
	ACT_ENTER, ACT_SEARCH, ACT_SEARCH_NEXT, ACT_LEFT, ACT_RIGHT, ACT_CLOSE,
	/* input line */
	ACT_SEND, ACT_NEWLINE, ACT_HISTORY_UP, ACT_HISTORY_DOWN, ACT_CLEAR,
	/* approval */
	ACT_ALLOW, ACT_ALWAYS, ACT_DENY, ACT_EDIT, ACT_MESSAGE, ACT_WIDER,
	ACT_ARM,
	/* diff */
	ACT_NEXT_HUNK, ACT_PREV_HUNK, ACT_NEXT_FILE, ACT_PREV_FILE, ACT_REVERT, ACT_COMMENT, ACT_YES, ACT_NO,
	ACT_COMMIT, ACT_PR, ACT_PR_LOCAL
};

enum key_scope {
	SCOPE_GLOBAL,	/* anywhere */
	SCOPE_PREFIX,	/* after the prefix key */
	SCOPE_PANE,	/* tree, agent, output (not the input line) */
	SCOPE_AGENT,
	SCOPE_TREE,
	SCOPE_INPUT,
	SCOPE_APPROVAL,
	SCOPE_DIFF,
	SCOPE_VIEWER,
	SCOPE_COUNT
};

int	 keys_set_prefix(const char *spec, char **cause);	/* "C-b" */
int	 keys_prefix(void);
enum ui_action keys_lookup(enum key_scope, int key);
char	*keys_name(int key);		/* "C-b", "PgUp", caller frees */
/* Help text, one binding a line: "scope  key  description". */
void	 keys_help(struct buf *);

/*
 * text.c: UTF-8 measured in terminal cells, wrapping and drawing. Wide
 * characters (CJK, emoji) count two cells; invalid bytes one.
 */
int	 text_width(const char *, size_t);
/* Bytes of S (length LEN) that fit in COLS cells; *used gets the cells. */
size_t	 text_fit(const char *s, size_t len, int cols, int *used);
/* The next wrapped row of S from *off: its length; breaks at a space. */
size_t	 text_wrap_next(const char *s, size_t len, size_t off, int cols);
/* Draw at most COLS cells of S; returns the cells used. */
int	 text_draw(WINDOW *, int y, int x, const char *s, size_t len, int cols,
	     attr_t);
int	 text_draw_role(WINDOW *, int y, int x, const char *s, size_t len,
	     int cols, enum ui_role);
/* Draw S with its SGR escapes as colours (program output), from ROLE;
 * the SGR escapes in PRE (the start of a wrapped line) apply first. */
int	 text_draw_sgr(WINDOW *, int y, int x, const char *s, size_t len,
	     int cols, enum ui_role, const char *pre, size_t prelen);
void	 text_sgr_apply(const char *params, size_t len, attr_t base,
	     int basepair, attr_t *attr, int *fg, int *bg);
void	 text_clear_to(WINDOW *, int y, int x, int to, attr_t);

/*
 * syntax.c: code and Markdown colours. syntax_lang: the language of a
 * fence's name ("c", "py", "ts", "sh", "diff" ...), or -1. syntax_draw:
 * one line of code in LANG (-1: plain) at most COLS cells; returns the
 * cells used. syntax_draw_inline: a line of text with `code`, **bold** and
 * [links](url) drawn, their marks not.
 */
int	 syntax_lang(const char *name, size_t len);
int	 syntax_draw(WINDOW *, int y, int x, const char *s, size_t len,
	     int cols, int lang);
int	 syntax_draw_inline(WINDOW *, int y, int x, const char *s, size_t len,
	     int cols, enum ui_role);

/* The panes of the screen. */
enum pane_id {
	PANE_TREE,
	PANE_AGENT,
	PANE_OUTPUT,
	PANE_INPUT,
	PANE_COUNT
};

struct pane;
struct tui;

struct view {
	const char	*name;
	enum key_scope	 scope;
	void		(*init)(struct pane *);
	void		(*free)(struct pane *);
	void		(*draw)(struct pane *, WINDOW *);
	/* Returns 1 if it took the key. ACTION is the table's meaning. */
	int		(*key)(struct pane *, int key, enum ui_action);
	void		(*resize)(struct pane *, int w, int h);
	void		(*event)(struct pane *, const cJSON *event, int live);
	void		(*tick)(struct pane *, uint64_t now);	/* may be NULL */
	/*
	 * Button 1 at X, Y inside the pane (may be NULL). AGAIN: the pane
	 * had the focus already, so a click on what is selected opens it
	 * (a second click, or a double click, acts as Enter).
	 */
	void		(*click)(struct pane *, int x, int y, int again);
};

struct pane {
	const struct view *view;
	struct tui	*tui;
	void		*data;
	WINDOW		*win;
	int		 x, y, w, h;	/* the whole pane, border included */
	int		 dirty;
	int		 hidden;
	int		 want_h;	/* rows the view asks for (input) */
	char		*title;		/* set by the view */
};

extern const struct view view_tree, view_agent, view_output, view_input;

void	 pane_set_title(struct pane *, const char *, ...) printflike(2, 3);
void	 pane_dirty(struct pane *);

/* tui.c: what views may ask of the client. */
void	 tui_send(struct tui *, cJSON *);	/* takes the object */
void	 tui_send_message(struct tui *, const char *text);
void	 tui_flash(struct tui *, const char *, ...) printflike(2, 3);
void	 tui_flash_hold(struct tui *, uint64_t ms);	/* show it longer */
const cJSON *tui_state(struct tui *);	/* the session's STATE, or NULL */
const char *tui_session(struct tui *);
int	 tui_readonly(struct tui *);
void	 tui_redraw_all(struct tui *);
/* What a key bound to A does (detach, help, diff, interrupt ...). */
int	 tui_do(struct tui *, enum ui_action);
void	 tui_set_mode(struct tui *, const char *mode);
/* The workspace changed under the screen (a revert): reread the tree. */
void	 tui_files_changed(struct tui *);
/* A request TYPE about the session, with KEY = VALUE when VALUE is set;
 * -1 (and *cause) on a read-only client. The server's answer, an error
 * included, comes back as any other. */
int	 tui_session_request(struct tui *, const char *type, const char *key,
	     const char *value, char **cause);
/* A line editor prompt over the input line; CB gets the text or NULL. */
typedef void (*tui_prompt_cb)(struct tui *, void *, const char *);
void	 tui_prompt(struct tui *, const char *label, const char *initial,
	     tui_prompt_cb, void *);
/* The same inside the approval modal, over its key hints. */
void	 tui_prompt_modal(struct tui *, const char *label,
	     const char *initial, tui_prompt_cb, void *);
/* Close the open prompt as Esc does (its CB gets NULL). */
void	 tui_prompt_cancel(struct tui *);
/* Tab in the prompt calls CB with the current text (rule: wider/narrower). */
void	 tui_prompt_on_tab(struct tui *, tui_prompt_cb);
void	 tui_prompt_set(struct tui *, const char *);
/* Line editing shared by the prompt and the input line: 1 if it took KEY. */
int	 tui_edit_key(struct buf *, size_t *cursor, int key);
/* Insert S (LEN bytes) at *cursor, which moves past it. */
void	 tui_edit_insert(struct buf *, size_t *cursor, const char *s,
	     size_t len);
/*
 * Slow work (a push, a pull request) in a thread: RUN gets ARG in the
 * thread and returns a message; DONE gets it back on the loop, then it is
 * freed. One job at a time: 0 started, -1 busy.
 */
typedef char *(*tui_job_run)(void *);
typedef void (*tui_job_done)(struct tui *, void *, const char *);
int	 tui_job(struct tui *, tui_job_run, tui_job_done, void *);

/* Full-screen overlays (viewer, diff, help): at most one at a time. */
struct overlay;
struct overlay_ops {
	void	(*draw)(struct overlay *, WINDOW *, int w, int h);
	int	(*key)(struct overlay *, int key);	/* 0: close */
	void	(*free)(struct overlay *);
	enum key_scope scope;
};
struct overlay {
	const struct overlay_ops *ops;
	struct tui	*tui;
	void		*data;
};
void	 tui_overlay(struct tui *, const struct overlay_ops *, void *data);
void	 tui_overlay_dirty(struct tui *);

/*
 * slash.c: the input's slash commands, one table. slash_is_command: LINE
 * is a command (starts with one "/"). slash_run runs it, or says on the
 * status row why not (unknown, bad arguments); never sent to the model.
 * slash_complete: the commands starting with WORD (LEN bytes, no "/"):
 * their count, their longest common start in COMMON, "/a /b" in CHOICES.
 */
int	 slash_is_command(const char *line);
int	 slash_run(struct tui *, const char *line);
size_t	 slash_complete(const char *word, size_t len, struct buf *common,
	     struct buf *choices);
void	 slash_help(struct buf *);
/* The server's answer to /rules: the list, in the viewer. */
void	 slash_rules_show(struct tui *, const cJSON *rules);
/* Completion: COMMON becomes its common start with NAME (the Nth match). */
void	 slash_narrow(struct buf *common, const char *name, size_t n);

/* view-viewer.c / view-help.c / view-diff.c / view-approval.c */
void	 viewer_open(struct tui *, const char *path, const char *title);
/* The same for bytes read elsewhere (taken). */
void	 viewer_open_data(struct tui *, char *data, size_t len,
	     const char *title);
/* Text in the viewer; it takes DATA (LEN bytes). */
void	 viewer_show(struct tui *, char *data, size_t len, const char *title,
	     int numbers);
void	 help_open(struct tui *);
void	 diff_open(struct tui *);
struct approval;
struct approval *approval_new(struct tui *);
void	 approval_free(struct approval *);
void	 approval_event(struct approval *, const cJSON *event);
void	 approval_state(struct approval *, const cJSON *state);
int	 approval_count(struct approval *);
int	 approval_height(struct approval *, int w);	/* rows wanted */
int	 approval_key(struct approval *, int key);	/* 1 if taken */
/*
 * After the queue may have changed: a new head request is guarded when
 * TYPING (the input has text or a key went to it just now). A guarded
 * request takes no key until approval_arm (C-o, or a quiet second).
 */
void	 approval_check(struct approval *, int typing);
/* The server refused an edited command (a deny rule): 1 if the modal asks
 * the user to confirm running it anyway. */
int	 approval_refused(struct approval *, const char *id, const char *why);
int	 approval_guarded(struct approval *);
void	 approval_arm(struct approval *);
void	 approval_draw(struct approval *, WINDOW *, int w, int h);

/*
 * view-tree.c: the workspace moved or git state may have changed; sandbox
 * (its id, or NULL) on another machine has its files read through envd,
 * while its state (STATE.sandbox_state; NULL: unknown) is "running".
 */
void	 view_tree_set_root(struct pane *, const char *workspace,
	     const char *base, const char *sandbox, const char *state);

/* tree-sandbox.c: the files of a sandbox not on this machine. */
struct tree_sandbox;
/* NULL: no such sandbox, or a local one (its workspace is here). */
struct tree_sandbox *tree_sandbox_open(const char *id);
void	 tree_sandbox_free(struct tree_sandbox *);
/* The sandbox's state is "running" (or not); 1 if it runs again. */
int	 tree_sandbox_running(struct tree_sandbox *, int running);
cJSON	*tree_sandbox_list(struct tree_sandbox *, const char *path,
	     char **cause);
char	*tree_sandbox_read(struct tree_sandbox *, const char *path,
	     size_t *lenp, char **cause);
/* The server's "files" message: these directories (relative) changed. */
void	 view_tree_changed(struct pane *, const cJSON *dirs, int all);

/* view-input.c: bytes in the input line (0: empty); a bracketed paste. */
size_t	 view_input_len(struct pane *);
void	 view_input_paste(struct pane *, const char *text, size_t len);

/*
 * input-file.c: @path in the input. input_file_complete: the workspace
 * entries (of STATE's workspace) that start with WORD, as slash_complete.
 * input_file_attach: TEXT with every @path's file after it (caller frees),
 * or NULL and *cause when one cannot be read.
 */
size_t	 input_file_complete(const cJSON *state, const char *word, size_t len,
	     struct buf *common, struct buf *choices);
char	*input_file_attach(const cJSON *state, const char *text, char **cause);

/* view-output.c: counts for tests and the bench. */
size_t	 view_output_lines(struct pane *);

#endif
