/*
 * syntax.c: colours for the code the agent writes in its messages (fenced
 * Markdown blocks) and for its inline Markdown. One table of languages
 * (names, keywords, comment marks); a line is coloured on its own, word by
 * word, as it is drawn, so a long transcript costs nothing until shown. A
 * block comment that spans lines is coloured on its first line only: the
 * cost of keeping no state between rows.
 */
#include <string.h>

#include "ui.h"

struct syntax_lang {
	const char	*names;		/* " c h cpp " */
	const char	*keywords;	/* " if else " */
	const char	*line_comment;	/* "//", "#" or NULL */
	int		 block_comment;	/* C's slash-star comments */
};

static const struct syntax_lang syntax_langs[] = {
	{ " c h cpp c++ cc hpp ",
	  " auto break case char const continue default do double else enum "
	  "extern float for goto if inline int long register return short "
	  "signed sizeof static struct switch typedef union unsigned void "
	  "volatile while bool true false NULL size_t ssize_t uint64_t "
	  "int64_t uint32_t int32_t uint8_t #include #define #ifdef #ifndef "
	  "#endif #if #else #elif #pragma ", "//", 1 },
	{ " python py python3 ",
	  " and as assert async await break class continue def del elif else "
	  "except False finally for from global if import in is lambda None "
	  "nonlocal not or pass raise return True try while with yield self ",
	  "#", 0 },
	{ " js javascript ts typescript jsx tsx mjs node ",
	  " async await break case catch class const continue debugger default "
	  "delete do else export extends false finally for from function if "
	  "implements import in instanceof interface let new null of return "
	  "super switch this throw true try type typeof undefined var void "
	  "while yield enum readonly ", "//", 1 },
	{ " sh shell bash zsh console shellsession ",
	  " if then else elif fi for in do done case esac while until function "
	  "return local export set unset exit echo cd source readonly shift "
	  "trap ", "#", 0 },
	{ " diff patch ", "", NULL, 0 },
};

int
syntax_lang(const char *name, size_t len)
{
	char	 want[32];
	size_t	 i;

	if (len == 0 || len > sizeof want - 3)
		return -1;
	want[0] = ' ';
	for (i = 0; i < len; i++)
		want[i + 1] = (name[i] >= 'A' && name[i] <= 'Z') ?
		    (char)(name[i] + 32) : name[i];
	want[len + 1] = ' ';
	want[len + 2] = '\0';
	for (i = 0; i < nitems(syntax_langs); i++) {
		if (strstr(syntax_langs[i].names, want) != NULL)
			return (int)i;
	}
	return -1;
}

static int
syntax_word_byte(unsigned char c)
{
	return c == '_' || c == '#' || (c >= '0' && c <= '9') ||
	    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int
syntax_keyword(const struct syntax_lang *l, const char *w, size_t len)
{
	const char	*p = l->keywords;

	while ((p = strstr(p, " ")) != NULL && p[1] != '\0') {
		p++;
		if (strncmp(p, w, len) == 0 && p[len] == ' ')
			return 1;
	}
	return 0;
}

/* Draw S[0..n) at *x in ROLE, within COLS cells of x0. */
static void
syntax_put(WINDOW *win, int y, int *x, int end, const char *s, size_t n,
    enum ui_role role)
{
	if (*x < end && n > 0)
		*x += text_draw_role(win, y, *x, s, n, end - *x, role);
}

int
syntax_draw(WINDOW *win, int y, int x0, const char *s, size_t len, int cols,
    int lang)
{
	const struct syntax_lang *l;
	size_t		 i = 0, j;
	int		 x = x0, end = x0 + cols;
	char		 q;
	enum ui_role	 role;

	if (lang < 0 || lang >= (int)nitems(syntax_langs))
		return text_draw_role(win, y, x0, s, len, cols, ROLE_CODE);
	l = &syntax_langs[lang];
	if (l->line_comment == NULL) {
		/* diff: the line's first byte says it all. */
		role = ROLE_CODE;
		if (len > 0 && s[0] == '+')
			role = ROLE_DIFF_ADD;
		else if (len > 0 && s[0] == '-')
			role = ROLE_DIFF_DEL;
		else if (len > 1 && s[0] == '@' && s[1] == '@')
			role = ROLE_DIFF_HUNK;
		return text_draw_role(win, y, x0, s, len, cols, role);
	}
	while (i < len && x < end) {
		if (strncmp(s + i, l->line_comment,
		    strlen(l->line_comment)) == 0) {
			syntax_put(win, y, &x, end, s + i, len - i,
			    ROLE_SYN_COMMENT);
			break;
		}
		if (l->block_comment && i + 1 < len && s[i] == '/' &&
		    s[i + 1] == '*') {
			for (j = i + 2; j + 1 < len && !(s[j] == '*' &&
			    s[j + 1] == '/'); j++)
				;
			j = j + 1 < len ? j + 2 : len;
			syntax_put(win, y, &x, end, s + i, j - i,
			    ROLE_SYN_COMMENT);
			i = j;
			continue;
		}
		if (s[i] == '"' || s[i] == '\'' || s[i] == '`') {
			q = s[i];
			for (j = i + 1; j < len && s[j] != q; j++) {
				if (s[j] == '\\' && j + 1 < len)
					j++;
			}
			j = j < len ? j + 1 : len;
			syntax_put(win, y, &x, end, s + i, j - i,
			    ROLE_SYN_STRING);
			i = j;
			continue;
		}
		if (syntax_word_byte((unsigned char)s[i])) {
			for (j = i; j < len && syntax_word_byte(
			    (unsigned char)s[j]); j++)
				;
			role = ROLE_CODE;
			if (s[i] >= '0' && s[i] <= '9')
				role = ROLE_SYN_NUMBER;
			else if (syntax_keyword(l, s + i, j - i))
				role = ROLE_SYN_KEYWORD;
			syntax_put(win, y, &x, end, s + i, j - i, role);
			i = j;
			continue;
		}
		/* Anything else up to the next interesting byte. */
		for (j = i + 1; j < len && !syntax_word_byte(
		    (unsigned char)s[j]) && strchr("\"'`/#", s[j]) == NULL;
		    j++)
			;
		syntax_put(win, y, &x, end, s + i, j - i, ROLE_CODE);
		i = j;
	}
	return x - x0;
}

/*
 * Inline Markdown: `code`, **bold** and [text](url) (shown as its text,
 * underlined). The marks are not drawn. A span that a wrap cuts is drawn
 * plain on its next row.
 */
int
syntax_draw_inline(WINDOW *win, int y, int x0, const char *s, size_t len,
    int cols, enum ui_role role)
{
	size_t		 i = 0, j, k;
	int		 x = x0, end = x0 + cols, bold = 0;
	attr_t		 at;

	while (i < len && x < end) {
		if (s[i] == '`' && (j = i + 1 + strcspn(s + i + 1, "`")) < len) {
			syntax_put(win, y, &x, end, s + i + 1, j - i - 1,
			    ROLE_CODE);
			i = j + 1;
			continue;
		}
		if (i + 1 < len && s[i] == '*' && s[i + 1] == '*') {
			bold = !bold;
			i += 2;
			continue;
		}
		if (s[i] == '[' && (j = i + 1 + strcspn(s + i + 1, "]")) + 1 <
		    len && s[j + 1] == '(' && (k = j + 2 + strcspn(s + j + 2,
		    ")")) < len) {
			at = theme_attr(role) | A_UNDERLINE;
			if (x < end)
				x += text_draw(win, y, x, s + i + 1, j - i - 1,
				    end - x, at);
			i = k + 1;
			continue;
		}
		for (j = i + 1; j < len && strchr("`*[", s[j]) == NULL; j++)
			;
		at = theme_attr(role) | (bold ? A_BOLD : 0);
		if (x < end)
			x += text_draw(win, y, x, s + i, j - i, end - x, at);
		i = j;
	}
	return x - x0;
}
