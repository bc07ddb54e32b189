/*
 * policy-shell.c: the policy's shell parser.
 *
 * It reads a command line the way sh and bash would and returns the simple
 * commands in it, flattened: the commands of pipelines, lists, subshells,
 * groups, if/while/until/for bodies, and those inside $(...), `...`,
 * <(...), >(...) and unquoted here-documents. Words come out with quotes and
 * escapes removed and flags saying what would still be expanded at run time
 * (variables, globs, braces, substitutions), so that the policy can refuse
 * to guess. It never executes or expands anything.
 *
 * It is a recursive-descent parser over one pass of the input: linear in the
 * input's length. Nesting is bounded (POLICY_SHELL_MAX_DEPTH) so hostile
 * input cannot exhaust the stack, and so is the number of commands. What it
 * does not understand (case, select, coproc, array assignments, unbalanced
 * quotes) is an error: the policy then asks, it never allows.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "holt.h"
#include "policy.h"

/* Terminators of a list. */
#define T_EOF		0x1
#define T_RPAREN	0x2
#define T_RBRACE	0x4
#define T_THEN		0x8
#define T_ELIF		0x10
#define T_ELSE		0x20
#define T_FI		0x40
#define T_DO		0x80
#define T_DONE		0x100

enum psh_reserved {
	R_NONE, R_IF, R_THEN, R_ELIF, R_ELSE, R_FI, R_DO, R_DONE, R_WHILE,
	R_UNTIL, R_FOR, R_CASE, R_ESAC, R_SELECT, R_FUNCTION, R_COPROC,
	R_LBRACE, R_RBRACE, R_DBRACK, R_BANG, R_IN
};
static const struct {
	const char		*word;
	enum psh_reserved	 r;
	int			 term;	/* as a closer: its terminator bit */
} psh_reserved_words[] = {
	{ "if", R_IF, 0 }, { "then", R_THEN, T_THEN }, { "elif", R_ELIF, T_ELIF },
	{ "else", R_ELSE, T_ELSE }, { "fi", R_FI, T_FI }, { "do", R_DO, T_DO },
	{ "done", R_DONE, T_DONE }, { "while", R_WHILE, 0 },
	{ "until", R_UNTIL, 0 }, { "for", R_FOR, 0 }, { "case", R_CASE, 0 },
	{ "esac", R_ESAC, -1 }, { "select", R_SELECT, 0 },
	{ "function", R_FUNCTION, 0 }, { "coproc", R_COPROC, 0 },
	{ "{", R_LBRACE, 0 }, { "}", R_RBRACE, T_RBRACE },
	{ "[[", R_DBRACK, 0 }, { "!", R_BANG, 0 }, { "in", R_IN, -1 },
};

struct psh_heredoc {
	char	*delim;
	int	 strip;		/* <<- */
	int	 quoted;	/* no expansion in the body */
};

struct psh {
	const char		*s;
	size_t			 len;
	size_t			 pos;
	unsigned int		 depth;
	int			 flags;		/* PC_F_* of commands made now */
	struct policy_parse	*out;
	size_t			 alloc;		/* of out->cmds */
	size_t			*allocp;	/* shared with children */
	struct psh_heredoc	*pending;
	size_t			 npending;
	int			 amp_redir;	/* the last redirection was &> */
};

/* A command being built. */
struct psh_cmd {
	struct policy_cmd	 c;
	size_t			 aw, aa, ar;	/* allocated words, assigns, redirs */
};

static int	psh_list(struct psh *, int);
static int	psh_command(struct psh *);
static int	psh_dollar(struct psh *, struct buf *, int *, int);
static int	psh_backtick(struct psh *, struct buf *, int *, int);
static int	psh_dq(struct psh *, struct buf *, int *, int);

static int
psh_error(struct psh *ps, const char *fmt, ...)
{
	va_list	 ap;

	if (ps->out->error == NULL) {
		va_start(ap, fmt);
		xvasprintf(&ps->out->error, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int
psh_is_blank(int c)
{
	return c == ' ' || c == '\t';
}

/* Characters that end an unquoted word. */
static int
psh_is_meta(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' ||
	    c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
}

static int
psh_peekc(struct psh *ps, size_t off)
{
	if (ps->pos + off >= ps->len)
		return -1;
	return (unsigned char)ps->s[ps->pos + off];
}

static void
psh_word_free(struct policy_word *w)
{
	free(w->text);
	w->text = NULL;
}

static void
psh_cmd_release(struct policy_cmd *c)
{
	size_t	 i;

	for (i = 0; i < c->nassigns; i++)
		psh_word_free(&c->assigns[i]);
	free(c->assigns);
	for (i = 0; i < c->nwords; i++)
		psh_word_free(&c->words[i]);
	free(c->words);
	for (i = 0; i < c->nredirs; i++)
		psh_word_free(&c->redirs[i].target);
	free(c->redirs);
	memset(c, 0, sizeof *c);
}

static void
psh_add_word(struct psh_cmd *b, struct policy_word *w)
{
	if (b->c.nwords == b->aw) {
		b->aw = b->aw == 0 ? 4 : b->aw * 2;
		b->c.words = xreallocarray(b->c.words, b->aw, sizeof *b->c.words);
	}
	b->c.words[b->c.nwords++] = *w;
	w->text = NULL;
}

static void
psh_add_assign(struct psh_cmd *b, struct policy_word *w)
{
	if (b->c.nassigns == b->aa) {
		b->aa = b->aa == 0 ? 2 : b->aa * 2;
		b->c.assigns = xreallocarray(b->c.assigns, b->aa,
		    sizeof *b->c.assigns);
	}
	b->c.assigns[b->c.nassigns++] = *w;
	w->text = NULL;
}

static struct policy_redir *
psh_add_redir(struct psh_cmd *b)
{
	struct policy_redir	*r;

	if (b->c.nredirs == b->ar) {
		b->ar = b->ar == 0 ? 2 : b->ar * 2;
		b->c.redirs = xreallocarray(b->c.redirs, b->ar,
		    sizeof *b->c.redirs);
	}
	r = &b->c.redirs[b->c.nredirs++];
	memset(r, 0, sizeof *r);
	return r;
}

/*
 * Reserve the slot of the next command, so that a command comes before the
 * commands of its own substitutions, in reading order.
 */
static int
psh_reserve(struct psh *ps, size_t *idx)
{
	struct policy_parse	*out = ps->out;

	if (out->ncmds >= POLICY_SHELL_MAX_CMDS)
		return psh_error(ps, "more than %d commands",
		    POLICY_SHELL_MAX_CMDS);
	if (out->ncmds == *ps->allocp) {
		*ps->allocp = *ps->allocp == 0 ? 8 : *ps->allocp * 2;
		out->cmds = xreallocarray(out->cmds, *ps->allocp,
		    sizeof *out->cmds);
	}
	*idx = out->ncmds++;
	memset(&out->cmds[*idx], 0, sizeof out->cmds[*idx]);
	out->cmds[*idx].depth = ps->depth;
	out->cmds[*idx].flags = ps->flags;
	return 0;
}

static void
psh_emit(struct psh *ps, size_t idx, struct psh_cmd *b)
{
	struct policy_cmd	*c = &ps->out->cmds[idx];

	b->c.depth = c->depth;
	b->c.flags = c->flags;
	*c = b->c;
	memset(b, 0, sizeof *b);
}

static int
psh_enter(struct psh *ps)
{
	if (ps->depth >= POLICY_SHELL_MAX_DEPTH)
		return psh_error(ps, "nesting deeper than %d levels",
		    POLICY_SHELL_MAX_DEPTH);
	ps->depth++;
	return 0;
}

/* Blanks, line continuations and comments; not newlines. */
static void
psh_skip(struct psh *ps)
{
	int	 c;

	for (;;) {
		c = psh_peekc(ps, 0);
		if (psh_is_blank(c))
			ps->pos++;
		else if (c == '\\' && psh_peekc(ps, 1) == '\n')
			ps->pos += 2;
		else if (c == '#') {
			while (ps->pos < ps->len && ps->s[ps->pos] != '\n')
				ps->pos++;
		} else
			return;
	}
}

/* A command of its own for an expansion that may run code. */
static int
psh_expansion(struct psh *ps, const char *what)
{
	struct policy_cmd	*c;
	size_t			 idx;

	if (psh_reserve(ps, &idx) != 0)
		return -1;
	c = &ps->out->cmds[idx];
	c->kind = PC_EXPANSION;
	c->words = xcalloc(1, sizeof *c->words);
	c->words[0].text = xstrdup(what);
	c->words[0].flags = PW_UNSAFE;
	c->nwords = 1;
	return 0;
}

/* Read the bodies of pending here-documents, after a newline. */
static int
psh_heredoc_body(struct psh *ps, struct psh_heredoc *h)
{
	struct buf	 body = BUF_INIT, ln = BUF_INIT;
	struct psh	 sub;
	const char	*seg;
	size_t		 start, end, n, bs, dl = strlen(h->delim);
	int		 flags = 0, r = 0;

	while (ps->pos < ps->len) {
		/*
		 * One logical line: in an unquoted here-document \newline
		 * joins lines before the delimiter is looked for, so
		 * "E\<nl>OF" ends it, as in sh and bash.
		 */
		buf_reset(&ln);
		for (;;) {
			start = ps->pos;
			end = start;
			while (end < ps->len && ps->s[end] != '\n')
				end++;
			seg = ps->s + start;
			if (h->strip) {
				while (seg < ps->s + end && *seg == '\t')
					seg++;
			}
			n = (size_t)(ps->s + end - seg);
			ps->pos = end < ps->len ? end + 1 : end;
			for (bs = 0; bs < n && seg[n - 1 - bs] == '\\'; bs++)
				;
			if (!h->quoted && (bs % 2) == 1 && end < ps->len) {
				buf_add(&ln, seg, n - 1);
				continue;
			}
			buf_add(&ln, seg, n);
			break;
		}
		if (ln.len == dl && memcmp(buf_str(&ln), h->delim, dl) == 0)
			break;
		buf_add(&body, buf_str(&ln), ln.len);
		buf_addc(&body, '\n');
	}
	buf_release(&ln);
	if (!h->quoted && body.len != 0) {
		/* Unquoted: $(...) and `...` in the body run. */
		memset(&sub, 0, sizeof sub);
		sub.s = buf_str(&body);
		sub.len = body.len;
		sub.depth = ps->depth;
		sub.flags = ps->flags | PC_F_SUBST;
		sub.out = ps->out;
		sub.allocp = ps->allocp;
		if (psh_enter(&sub) != 0)
			r = -1;
		else {
			struct buf	 junk = BUF_INIT;

			r = psh_dq(&sub, &junk, &flags, 1);
			buf_release(&junk);
			if (r == 0 && (flags & PW_UNSAFE))
				r = psh_expansion(ps, "here-document");
		}
		while (sub.npending > 0)
			free(sub.pending[--sub.npending].delim);
		free(sub.pending);
	}
	buf_release(&body);
	return r;
}

static int
psh_newline(struct psh *ps)
{
	size_t	 i;
	int	 r = 0;

	ps->pos++;	/* the '\n' */
	for (i = 0; i < ps->npending; i++) {
		if (r == 0 && psh_heredoc_body(ps, &ps->pending[i]) != 0)
			r = -1;
		free(ps->pending[i].delim);
	}
	ps->npending = 0;
	return r;
}

/* Blanks, comments and newlines. */
static int
psh_skip_nl(struct psh *ps)
{
	for (;;) {
		psh_skip(ps);
		if (psh_peekc(ps, 0) != '\n')
			return 0;
		if (psh_newline(ps) != 0)
			return -1;
	}
}

static enum psh_reserved
psh_peek_reserved(struct psh *ps, size_t *lenp, int *term)
{
	size_t	 j = ps->pos, n, i;
	int	 c;

	while (j < ps->len) {
		c = (unsigned char)ps->s[j];
		if (psh_is_meta(c))
			break;
		if (c == '\'' || c == '"' || c == '\\' || c == '$' || c == '`')
			return R_NONE;
		j++;
	}
	n = j - ps->pos;
	if (n == 0 || n > 8)
		return R_NONE;
	for (i = 0; i < nitems(psh_reserved_words); i++) {
		if (strlen(psh_reserved_words[i].word) == n &&
		    memcmp(ps->s + ps->pos, psh_reserved_words[i].word, n) == 0) {
			if (lenp != NULL)
				*lenp = n;
			if (term != NULL)
				*term = psh_reserved_words[i].term;
			return psh_reserved_words[i].r;
		}
	}
	return R_NONE;
}

static int
psh_eat(struct psh *ps, enum psh_reserved want, const char *name)
{
	size_t	 n;

	if (psh_skip_nl(ps) != 0)
		return -1;
	if (psh_peek_reserved(ps, &n, NULL) != want)
		return psh_error(ps, "expected '%s' at offset %zu", name, ps->pos);
	ps->pos += n;
	return 0;
}

/* A sub-parser for a string of its own (backquotes). */
static int
psh_sub(struct psh *ps, const char *s, size_t len)
{
	struct psh	 sub;
	size_t		 i;
	int		 r, saved = ps->flags;

	memset(&sub, 0, sizeof sub);
	sub.s = s;
	sub.len = len;
	sub.depth = ps->depth;
	sub.flags = ps->flags | PC_F_SUBST;
	sub.out = ps->out;
	sub.allocp = ps->allocp;
	if (psh_enter(&sub) != 0)
		return -1;
	r = psh_list(&sub, T_EOF);
	for (i = 0; i < sub.npending; i++)
		free(sub.pending[i].delim);
	free(sub.pending);
	ps->flags = saved;
	return r;
}

/* $'...': ANSI-C quoting. A decoded NUL ends the string, as in bash. */
static int
psh_ansi_c(struct psh *ps, struct buf *b, int *flags)
{
	const char	*s = ps->s;
	size_t		 i = ps->pos + 2;
	unsigned long	 v;
	int		 nul = 0, n, c, maxd;
	char		 u[4];

	for (;;) {
		if (i >= ps->len)
			return psh_error(ps, "unterminated $' quote");
		c = (unsigned char)s[i];
		if (c == '\'')
			break;
		if (c != '\\' || i + 1 >= ps->len) {
			if (!nul)
				buf_addc(b, (char)c);
			i++;
			continue;
		}
		c = (unsigned char)s[i + 1];
		i += 2;
		v = 0;
		switch (c) {
		case 'a': v = 7; break;
		case 'b': v = 8; break;
		case 'e': case 'E': v = 27; break;
		case 'f': v = 12; break;
		case 'n': v = 10; break;
		case 'r': v = 13; break;
		case 't': v = 9; break;
		case 'v': v = 11; break;
		case '\'':
			/*
			 * sh (dash) has no $'...': for it the quote ends
			 * here, and what bash reads as one word it reads as
			 * more words, even commands.
			 */
			*flags |= PW_UNSAFE;
			v = (unsigned long)c;
			break;
		case '\\': case '"': case '?': v = (unsigned long)c; break;
		case 'c':
			if (i < ps->len) {
				v = (unsigned char)s[i] & 0x1f;
				i++;
			}
			break;
		case 'x': case 'u': case 'U':
			maxd = c == 'x' ? 2 : (c == 'u' ? 4 : 8);
			for (n = 0; n < maxd && i < ps->len &&
			    isxdigit((unsigned char)s[i]); n++, i++)
				v = v * 16 + (unsigned long)(isdigit((unsigned char)s[i]) ?
				    s[i] - '0' : (tolower((unsigned char)s[i]) - 'a' + 10));
			if (n == 0) {
				if (!nul) {
					buf_addc(b, '\\');
					buf_addc(b, (char)c);
				}
				continue;
			}
			if (c != 'x' && v > 0x7f) {
				if (v > 0x10ffff)
					v = 0xfffd;
				if (v < 0x800) {
					u[0] = (char)(0xc0 | (v >> 6));
					u[1] = (char)(0x80 | (v & 0x3f));
					n = 2;
				} else if (v < 0x10000) {
					u[0] = (char)(0xe0 | (v >> 12));
					u[1] = (char)(0x80 | ((v >> 6) & 0x3f));
					u[2] = (char)(0x80 | (v & 0x3f));
					n = 3;
				} else {
					u[0] = (char)(0xf0 | (v >> 18));
					u[1] = (char)(0x80 | ((v >> 12) & 0x3f));
					u[2] = (char)(0x80 | ((v >> 6) & 0x3f));
					u[3] = (char)(0x80 | (v & 0x3f));
					n = 4;
				}
				if (!nul)
					buf_add(b, u, (size_t)n);
				continue;
			}
			break;
		default:
			if (c >= '0' && c <= '7') {
				v = (unsigned long)(c - '0');
				for (n = 1; n < 3 && i < ps->len &&
				    s[i] >= '0' && s[i] <= '7'; n++, i++)
					v = v * 8 + (unsigned long)(s[i] - '0');
				v &= 0xff;
				break;
			}
			if (!nul) {
				buf_addc(b, '\\');
				buf_addc(b, (char)c);
			}
			continue;
		}
		if (v == 0)
			nul = 1;
		else if (!nul)
			buf_addc(b, (char)v);
	}
	ps->pos = i + 1;
	return 0;
}

/* ${...}: find its end, parsing substitutions inside it. */
static int
psh_param(struct psh *ps, struct buf *b, int *flags, int in_dq)
{
	struct buf	 junk = BUF_INIT;
	size_t		 start = ps->pos, i, n;
	const char	*p;
	int		 c, jf = 0, r = 0;

	if (psh_enter(ps) != 0)
		return -1;
	ps->pos += 2;
	for (;;) {
		c = psh_peekc(ps, 0);
		if (c == -1) {
			r = psh_error(ps, "unterminated ${ at offset %zu", start);
			break;
		}
		if (c == '}') {
			ps->pos++;
			break;
		}
		if (c == '\\') {
			ps->pos += psh_peekc(ps, 1) == -1 ? 1 : 2;
		} else if (c == '$') {
			if ((r = psh_dollar(ps, &junk, &jf, in_dq)) != 0)
				break;
		} else if (c == '`') {
			if ((r = psh_backtick(ps, &junk, &jf, in_dq)) != 0)
				break;
		} else if (c == '"') {
			ps->pos++;
			if ((r = psh_dq(ps, &junk, &jf, 0)) != 0)
				break;
		} else if (c == '\'' && !in_dq) {
			p = memchr(ps->s + ps->pos + 1, '\'', ps->len - ps->pos - 1);
			if (p == NULL) {
				r = psh_error(ps, "unterminated single quote");
				break;
			}
			ps->pos = (size_t)(p - ps->s) + 1;
		} else
			ps->pos++;
	}
	ps->depth--;
	buf_release(&junk);
	if (r != 0)
		return r;
	*flags |= PW_VAR | (jf & (PW_SUBST | PW_UNSAFE | PW_ARITH));
	buf_add(b, ps->s + start, ps->pos - start);

	/*
	 * Expansions that evaluate text as code: ${x@P} (prompt expansion
	 * runs $(...) held in x), ${!x} (x may name a[$(cmd)]), a subscript
	 * that is not a plain number (arithmetic on variables' contents).
	 */
	p = ps->s + start + 2;
	n = ps->pos - start - 3;
	if (n >= 2 && p[n - 2] == '@' && p[n - 1] == 'P')
		*flags |= PW_UNSAFE;
	i = 0;
	if (n > 0 && p[0] == '!' && n > 1 && p[n - 1] != '@' && p[n - 1] != '*')
		*flags |= PW_UNSAFE;
	if (n > 0 && (p[0] == '!' || p[0] == '#'))
		i = 1;
	while (i < n && (isalnum((unsigned char)p[i]) || p[i] == '_'))
		i++;
	if (i < n && p[i] == '[') {
		for (i++; i < n && p[i] != ']'; i++) {
			if (!isdigit((unsigned char)p[i]) && p[i] != '@' &&
			    p[i] != '*' && p[i] != '-')
				*flags |= PW_UNSAFE;
		}
	}
	return 0;
}

/*
 * Arithmetic text from "from" to its closing "))" (or "]" for $[...]):
 * the substitutions inside it run, so they are parsed and their commands
 * are parts. Returns 1 and *endp after the closer; 0 if the parentheses
 * close as something else ($( (a) ) is a command substitution), with what
 * was made dropped; -1 on error.
 */
static int
psh_arith_scan(struct psh *ps, size_t from, int bracket, size_t *endp)
{
	struct buf	 junk = BUF_INIT;
	const char	*q;
	size_t		 save = ps->pos, mark = ps->out->ncmds;
	size_t		 npending = ps->npending;
	int		 depth = 0, c, jf = 0, r;

	ps->pos = from;
	for (;;) {
		c = psh_peekc(ps, 0);
		if (c == -1) {
			r = psh_error(ps, "unterminated arithmetic at offset %zu",
			    save);
			break;
		}
		if (c == '$') {
			if ((r = psh_dollar(ps, &junk, &jf, 1)) != 0)
				break;
			continue;
		}
		if (c == '`') {
			if ((r = psh_backtick(ps, &junk, &jf, 1)) != 0)
				break;
			continue;
		}
		if (c == '"') {
			ps->pos++;
			if ((r = psh_dq(ps, &junk, &jf, 0)) != 0)
				break;
			continue;
		}
		if (c == '\'') {
			q = memchr(ps->s + ps->pos + 1, '\'', ps->len - ps->pos - 1);
			if (q == NULL) {
				r = psh_error(ps, "unterminated single quote");
				break;
			}
			ps->pos = (size_t)(q - ps->s) + 1;
			continue;
		}
		if (c == '\\') {
			ps->pos += psh_peekc(ps, 1) == -1 ? 1 : 2;
			continue;
		}
		ps->pos++;
		if (bracket) {
			if (c == '[')
				depth++;
			else if (c == ']' && depth-- == 0) {
				r = 1;
				break;
			}
			continue;
		}
		if (c == '(')
			depth++;
		else if (c == ')') {
			if (depth > 0)
				depth--;
			else if (psh_peekc(ps, 0) == ')') {
				ps->pos++;
				r = 1;
				break;
			} else {
				r = 0;
				break;
			}
		}
	}
	buf_release(&junk);
	if (r == 1)
		*endp = ps->pos;
	if (r == 0) {
		while (ps->out->ncmds > mark)
			psh_cmd_release(&ps->out->cmds[--ps->out->ncmds]);
		while (ps->npending > npending)
			free(ps->pending[--ps->npending].delim);
	}
	ps->pos = save;
	return r;
}

/* Text of arithmetic that reads names evaluates them, recursively. */
static int
psh_arith_unsafe(const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if (isalpha((unsigned char)s[i]) || s[i] == '_' || s[i] == '$' ||
		    s[i] == '`')
			return 1;
	}
	return 0;
}

/* $((...)): 1 if it is arithmetic (pos moved), 0 if not, -1 error. */
static int
psh_arith(struct psh *ps, struct buf *b, int *flags)
{
	size_t	 start = ps->pos, end;
	int	 r;

	if (psh_enter(ps) != 0)
		return -1;
	r = psh_arith_scan(ps, ps->pos + 3, 0, &end);
	ps->depth--;
	if (r != 1)
		return r;
	ps->pos = end;
	buf_add(b, ps->s + start, end - start);
	*flags |= PW_ARITH;
	if (psh_arith_unsafe(ps->s + start + 3, end - start - 5))
		*flags |= PW_UNSAFE;
	return 1;
}

/* $(...): the commands inside are parsed as a list of their own. */
static int
psh_cmdsubst(struct psh *ps, struct buf *b, int *flags, size_t skip)
{
	size_t	 start = ps->pos;
	int	 saved = ps->flags;

	if (psh_enter(ps) != 0)
		return -1;
	ps->pos += skip;
	ps->flags |= PC_F_SUBST;
	if (psh_list(ps, T_RPAREN) != 0)
		return -1;
	ps->flags = saved;
	ps->depth--;
	if (psh_peekc(ps, 0) != ')')
		return psh_error(ps, "unterminated $( at offset %zu", start);
	ps->pos++;
	buf_add(b, ps->s + start, ps->pos - start);
	return 0;
}

static int
psh_dollar(struct psh *ps, struct buf *b, int *flags, int in_dq)
{
	size_t	 start = ps->pos, i;
	int	 c = psh_peekc(ps, 1), r;

	if (c == '\'' && !in_dq) {
		*flags |= PW_QUOTED;
		return psh_ansi_c(ps, b, flags);
	}
	if (c == '"' && !in_dq) {
		ps->pos += 2;
		*flags |= PW_QUOTED;
		return psh_dq(ps, b, flags, 0);
	}
	if (c == '(') {
		if (psh_peekc(ps, 2) == '(') {
			if ((r = psh_arith(ps, b, flags)) != 0)
				return r == 1 ? 0 : -1;
		}
		*flags |= PW_SUBST;
		return psh_cmdsubst(ps, b, flags, 2);
	}
	if (c == '[') {
		if (psh_enter(ps) != 0)
			return -1;
		r = psh_arith_scan(ps, ps->pos + 2, 1, &i);
		ps->depth--;
		if (r != 1)
			return -1;
		ps->pos = i;
		buf_add(b, ps->s + start, ps->pos - start);
		*flags |= PW_ARITH | PW_UNSAFE;
		return 0;
	}
	if (c == '{')
		return psh_param(ps, b, flags, in_dq);
	if (c != -1 && (isalpha(c) || c == '_')) {
		i = ps->pos + 1;
		while (i < ps->len && (isalnum((unsigned char)ps->s[i]) ||
		    ps->s[i] == '_'))
			i++;
		ps->pos = i;
		buf_add(b, ps->s + start, i - start);
		*flags |= PW_VAR;
		return 0;
	}
	if (c != -1 && (isdigit(c) || strchr("@*#?-$!", c) != NULL)) {
		ps->pos += 2;
		buf_add(b, ps->s + start, 2);
		*flags |= PW_VAR;
		return 0;
	}
	buf_addc(b, '$');
	ps->pos++;
	return 0;
}

static int
psh_backtick(struct psh *ps, struct buf *b, int *flags, int in_dq)
{
	struct buf	 inner = BUF_INIT;
	size_t		 start = ps->pos, i = ps->pos + 1;
	int		 c, r;

	for (;;) {
		if (i >= ps->len) {
			buf_release(&inner);
			return psh_error(ps, "unterminated backquote at offset %zu",
			    start);
		}
		c = (unsigned char)ps->s[i];
		if (c == '`')
			break;
		if (c == '\\' && i + 1 < ps->len && (ps->s[i + 1] == '`' ||
		    ps->s[i + 1] == '\\' || ps->s[i + 1] == '$' ||
		    (in_dq && ps->s[i + 1] == '"'))) {
			buf_addc(&inner, ps->s[i + 1]);
			i += 2;
			continue;
		}
		buf_addc(&inner, (char)c);
		i++;
	}
	ps->pos = i + 1;
	r = psh_sub(ps, buf_str(&inner), inner.len);
	buf_release(&inner);
	if (r != 0)
		return -1;
	buf_add(b, ps->s + start, ps->pos - start);
	*flags |= PW_SUBST;
	return 0;
}

/*
 * The inside of "...", after the opening quote. heredoc: the body of an
 * unquoted here-document, which ends at the end of input, not at a quote.
 */
static int
psh_dq(struct psh *ps, struct buf *b, int *flags, int heredoc)
{
	int	 c, n;

	*flags |= PW_QUOTED;
	for (;;) {
		c = psh_peekc(ps, 0);
		if (c == -1) {
			if (heredoc)
				return 0;
			return psh_error(ps, "unterminated double quote");
		}
		if (c == '"' && !heredoc) {
			ps->pos++;
			return 0;
		}
		if (c == '\\') {
			n = psh_peekc(ps, 1);
			if (n == '\n') {
				ps->pos += 2;
				continue;
			}
			if (n == '$' || n == '`' || n == '\\' ||
			    (n == '"' && !heredoc)) {
				buf_addc(b, (char)n);
				ps->pos += 2;
				continue;
			}
			buf_addc(b, '\\');
			ps->pos++;
			continue;
		}
		if (c == '$') {
			if (psh_dollar(ps, b, flags, 1) != 0)
				return -1;
			continue;
		}
		if (c == '`') {
			if (psh_backtick(ps, b, flags, 1) != 0)
				return -1;
			continue;
		}
		buf_addc(b, (char)c);
		ps->pos++;
	}
}

/*
 * One word at pos (which is not blank nor an operator). *rawp: where it
 * started, to tell assignments (unquoted NAME=) from words.
 */
static int
psh_word(struct psh *ps, struct policy_word *w)
{
	struct buf	 b = BUF_INIT;
	const char	*p;
	int		 c, flags = 0, lbrack = 0, lbrace = 0, brace_list = 0;
	size_t		 start = ps->pos;

	for (;;) {
		c = psh_peekc(ps, 0);
		if (c == -1 || psh_is_meta(c))
			break;
		switch (c) {
		case '\\':
			if (psh_peekc(ps, 1) == '\n') {
				ps->pos += 2;
				continue;
			}
			if (psh_peekc(ps, 1) == -1) {
				buf_addc(&b, '\\');
				ps->pos++;
				continue;
			}
			buf_addc(&b, ps->s[ps->pos + 1]);
			flags |= PW_QUOTED;
			ps->pos += 2;
			continue;
		case '\'':
			p = memchr(ps->s + ps->pos + 1, '\'', ps->len - ps->pos - 1);
			if (p == NULL) {
				buf_release(&b);
				return psh_error(ps, "unterminated single quote at "
				    "offset %zu", ps->pos);
			}
			buf_add(&b, ps->s + ps->pos + 1,
			    (size_t)(p - ps->s) - ps->pos - 1);
			ps->pos = (size_t)(p - ps->s) + 1;
			flags |= PW_QUOTED;
			continue;
		case '"':
			ps->pos++;
			if (psh_dq(ps, &b, &flags, 0) != 0) {
				buf_release(&b);
				return -1;
			}
			continue;
		case '$':
			if (psh_dollar(ps, &b, &flags, 0) != 0) {
				buf_release(&b);
				return -1;
			}
			continue;
		case '`':
			if (psh_backtick(ps, &b, &flags, 0) != 0) {
				buf_release(&b);
				return -1;
			}
			continue;
		case '*':
		case '?':
			flags |= PW_GLOB;
			break;
		case '[':
			lbrack = 1;
			break;
		case ']':
			if (lbrack)
				flags |= PW_GLOB;
			break;
		case '{':
			lbrace = 1;
			break;
		case ',':
			if (lbrace)
				brace_list = 1;
			break;
		case '.':
			if (lbrace && psh_peekc(ps, 1) == '.')
				brace_list = 1;
			break;
		case '}':
			if (brace_list)
				flags |= PW_BRACE;
			break;
		case '~':
			if (ps->pos == start)
				flags |= PW_TILDE;
			break;
		}
		buf_addc(&b, (char)c);
		ps->pos++;
	}
	w->text = buf_detach(&b, NULL);
	w->flags = flags;
	return 0;
}

/* NAME=, NAME+=, NAME[...]= written without quotes. */
static int
psh_is_assignment(const char *raw, size_t len, int *unsafe)
{
	size_t	 i = 0;

	*unsafe = 0;
	if (len == 0 || !(isalpha((unsigned char)raw[0]) || raw[0] == '_'))
		return 0;
	while (i < len && (isalnum((unsigned char)raw[i]) || raw[i] == '_'))
		i++;
	if (i < len && raw[i] == '[') {
		for (i++; i < len && raw[i] != ']'; i++) {
			if (!isdigit((unsigned char)raw[i]))
				*unsafe = 1;
		}
		if (i >= len)
			return 0;
		i++;
	}
	if (i < len && raw[i] == '+')
		i++;
	return i < len && raw[i] == '=';
}

/* <(...) or >(...) at pos. */
static int
psh_procsubst(struct psh *ps, struct policy_word *w)
{
	struct buf	 b = BUF_INIT;
	int		 flags = PW_PROCSUBST;

	if (psh_cmdsubst(ps, &b, &flags, 2) != 0) {
		buf_release(&b);
		return -1;
	}
	w->text = buf_detach(&b, NULL);
	w->flags = flags;
	return 0;
}

static int
psh_at_redir(struct psh *ps)
{
	size_t	 i = ps->pos;
	int	 c = psh_peekc(ps, 0);

	if (c == '<' || c == '>')
		return psh_peekc(ps, 1) != '(';
	if (c == '&')
		return psh_peekc(ps, 1) == '>';
	while (i < ps->len && i - ps->pos < 10 && isdigit((unsigned char)ps->s[i]))
		i++;
	return i > ps->pos && i < ps->len && (ps->s[i] == '<' || ps->s[i] == '>');
}

static int
psh_redir(struct psh *ps, struct psh_cmd *b)
{
	struct policy_redir	*r;
	struct policy_word	 w = { NULL, 0 };
	struct psh_heredoc	*h;
	int			 fd = -1, c;
	size_t			 i;
	enum policy_redir_op	 op;
	const char		*s = ps->s + ps->pos;
	size_t			 left = ps->len - ps->pos;

	if (isdigit((unsigned char)*s)) {
		fd = 0;
		while (left > 0 && isdigit((unsigned char)*s)) {
			if (fd < 100000)
				fd = fd * 10 + (*s - '0');
			s++;
			left--;
			ps->pos++;
		}
	}
#define RP(str, o) (left >= strlen(str) && memcmp(s, str, strlen(str)) == 0 && \
	    ((op = (o)), ps->pos += strlen(str), 1))
	if (RP("<<<", PR_HERESTRING) || RP("<<-", PR_HEREDOC) ||
	    RP("<<", PR_HEREDOC) || RP("<>", PR_RW) || RP("<&", PR_DUP_IN) ||
	    RP("<", PR_IN) || RP(">>", PR_APPEND) || RP(">|", PR_CLOBBER) ||
	    RP(">&", PR_DUP_OUT) || RP(">", PR_OUT) ||
	    (fd == -1 && (RP("&>>", PR_ALL_APPEND) || RP("&>", PR_ALL))))
		ps->amp_redir = *s == '&';
	else
		return psh_error(ps, "bad redirection at offset %zu", ps->pos);
#undef RP
	psh_skip(ps);
	c = psh_peekc(ps, 0);
	if ((c == '<' || c == '>') && psh_peekc(ps, 1) == '(') {
		if (psh_procsubst(ps, &w) != 0)
			return -1;
	} else if (c == -1 || psh_is_meta(c))
		return psh_error(ps, "missing target of a redirection at offset "
		    "%zu", ps->pos);
	else if (psh_word(ps, &w) != 0)
		return -1;

	/* >&word with a word that is not a descriptor writes a file. */
	if (op == PR_DUP_OUT && (w.flags & PW_EXPANDS) == 0 &&
	    strcmp(w.text, "-") != 0) {
		for (i = 0; w.text[i] != '\0'; i++) {
			if (!isdigit((unsigned char)w.text[i]))
				break;
		}
		if (w.text[i] != '\0' || i == 0)
			op = fd == -1 ? PR_ALL : PR_OUT;
	}
	if (op == PR_HEREDOC && (w.flags & (PW_SUBST|PW_PROCSUBST|PW_ARITH))) {
		/* sh and bash do not agree on what such a delimiter runs. */
		free(w.text);
		return psh_error(ps, "a here-document delimiter with a "
		    "substitution at offset %zu", ps->pos);
	}
	if (op == PR_HEREDOC) {
		ps->pending = xreallocarray(ps->pending, ps->npending + 1,
		    sizeof *ps->pending);
		h = &ps->pending[ps->npending++];
		h->delim = xstrdup(w.text);
		h->strip = left > 2 && s[2] == '-';
		h->quoted = (w.flags & PW_QUOTED) != 0;
	}
	r = psh_add_redir(b);
	r->fd = fd;
	r->op = op;
	r->target = w;
	return 0;
}

/* Redirections after a compound command: a command of their own. */
static int
psh_compound_redirs(struct psh *ps)
{
	struct psh_cmd	 b;
	size_t		 idx;

	memset(&b, 0, sizeof b);
	for (;;) {
		psh_skip(ps);
		if (ps->pos >= ps->len || !psh_at_redir(ps))
			break;
		if (psh_redir(ps, &b) != 0) {
			psh_cmd_release(&b.c);
			return -1;
		}
	}
	if (b.c.nredirs == 0)
		return 0;
	if (psh_reserve(ps, &idx) != 0) {
		psh_cmd_release(&b.c);
		return -1;
	}
	psh_emit(ps, idx, &b);
	return 0;
}

/* (( ... )) at pos: text up to the matching )). */
static int
psh_arith_cmd(struct psh *ps)
{
	struct psh_cmd		 b;
	struct policy_word	 w;
	size_t			 i, idx, start = ps->pos;
	int			 r;

	if (psh_enter(ps) != 0)
		return -1;
	r = psh_arith_scan(ps, ps->pos + 2, 0, &i);
	ps->depth--;
	if (r == 0)
		return psh_error(ps, "unbalanced (( at offset %zu", start);
	if (r != 1)
		return -1;
	i -= 2;		/* at the closing )) */
	memset(&b, 0, sizeof b);
	b.c.kind = PC_ARITH;
	w.text = xstrndup(ps->s + start, i + 2 - start);
	w.flags = PW_ARITH;
	ps->pos = i + 2;
	if (psh_reserve(ps, &idx) != 0) {
		free(w.text);
		return -1;
	}
	psh_add_word(&b, &w);
	psh_emit(ps, idx, &b);
	return 0;
}

/* [[ ... ]]: operators inside are words of the test. */
static int
psh_test(struct psh *ps)
{
	struct psh_cmd		 b;
	struct policy_word	 w;
	size_t			 idx, start = ps->pos;
	int			 c, done = 0;

	memset(&b, 0, sizeof b);
	if (psh_reserve(ps, &idx) != 0)
		return -1;
	b.c.kind = PC_TEST;
	ps->pos += 2;
	w.text = xstrdup("[[");
	w.flags = 0;
	psh_add_word(&b, &w);
	while (!done) {
		if (psh_skip_nl(ps) != 0)
			goto fail;
		c = psh_peekc(ps, 0);
		if (c == -1) {
			psh_error(ps, "unterminated [[ at offset %zu", start);
			goto fail;
		}
		if ((c == '&' && psh_peekc(ps, 1) == '&') ||
		    (c == '|' && psh_peekc(ps, 1) == '|')) {
			w.text = xstrndup(ps->s + ps->pos, 2);
			w.flags = 0;
			ps->pos += 2;
		} else if (c == '(' || c == ')' || c == '<' || c == '>' ||
		    c == '|') {
			w.text = xstrndup(ps->s + ps->pos, 1);
			w.flags = 0;
			ps->pos++;
		} else if (c == ';' || c == '&') {
			psh_error(ps, "unexpected '%c' in [[ at offset %zu", c,
			    ps->pos);
			goto fail;
		} else {
			if (psh_word(ps, &w) != 0)
				goto fail;
			if (w.flags == 0 && strcmp(w.text, "]]") == 0)
				done = 1;
		}
		psh_add_word(&b, &w);
	}
	psh_emit(ps, idx, &b);
	return psh_compound_redirs(ps);
fail:
	psh_cmd_release(&b.c);
	return -1;
}

static int
psh_funcdef(struct psh *ps, struct psh_cmd *b, size_t idx)
{
	int	 r;

	b->c.kind = PC_FUNCDEF;
	psh_emit(ps, idx, b);
	if (psh_skip_nl(ps) != 0 || psh_enter(ps) != 0)
		return -1;
	r = psh_command(ps);
	ps->depth--;
	return r;
}

static int
psh_simple(struct psh *ps)
{
	struct psh_cmd		 b;
	struct policy_word	 w;
	size_t			 idx, start, i;
	int			 c, unsafe, amp = 0;

	memset(&b, 0, sizeof b);
	if (psh_reserve(ps, &idx) != 0)
		return -1;
	for (;;) {
		psh_skip(ps);
		c = psh_peekc(ps, 0);
		if (c == -1 || c == '\n' || c == ';' || c == ')' ||
		    (c == '|') || (c == '&' && psh_peekc(ps, 1) != '>'))
			break;
		if (psh_at_redir(ps)) {
			if (psh_redir(ps, &b) != 0)
				goto fail;
			amp |= ps->amp_redir;
			continue;
		}
		if (amp) {
			/*
			 * sh has no &>: "a &>f b" is "a &" then ">f b" to
			 * it, and b runs. Words after it cannot be judged.
			 */
			psh_error(ps, "words after '&>' at offset %zu: sh runs "
			    "them as a command of their own", ps->pos);
			goto fail;
		}
		if ((c == '<' || c == '>') && psh_peekc(ps, 1) == '(') {
			if (psh_procsubst(ps, &w) != 0)
				goto fail;
			psh_add_word(&b, &w);
			continue;
		}
		if (c == '(') {
			/* NAME() body: a function definition. */
			if (b.c.nwords == 1 && b.c.nassigns == 0) {
				i = ps->pos + 1;
				while (i < ps->len && psh_is_blank(ps->s[i]))
					i++;
				if (i < ps->len && ps->s[i] == ')') {
					ps->pos = i + 1;
					return psh_funcdef(ps, &b, idx);
				}
			}
			psh_error(ps, "unexpected '(' at offset %zu", ps->pos);
			goto fail;
		}
		start = ps->pos;
		if (psh_word(ps, &w) != 0)
			goto fail;
		if (b.c.nwords == 0 &&
		    psh_is_assignment(ps->s + start, ps->pos - start, &unsafe)) {
			if (psh_peekc(ps, 0) == '(' && ps->pos > start &&
			    ps->s[ps->pos - 1] == '=') {
				free(w.text);
				psh_error(ps, "array assignments are not supported "
				    "(offset %zu)", start);
				goto fail;
			}
			if (unsafe)
				w.flags |= PW_UNSAFE;
			psh_add_assign(&b, &w);
		} else
			psh_add_word(&b, &w);
	}
	if (b.c.nwords == 0 && b.c.nassigns == 0 && b.c.nredirs == 0) {
		if (c == -1)
			psh_error(ps, "a command is missing at the end");
		else
			psh_error(ps, "unexpected '%c' at offset %zu", c, ps->pos);
		goto fail;
	}
	psh_emit(ps, idx, &b);
	return 0;
fail:
	psh_cmd_release(&b.c);
	return -1;
}

static int
psh_compound_list(struct psh *ps, int term)
{
	if (psh_enter(ps) != 0)
		return -1;
	if (psh_list(ps, term) != 0)
		return -1;
	ps->depth--;
	return 0;
}

static int
psh_for(struct psh *ps)
{
	struct psh_cmd		 b;
	struct policy_word	 w;
	size_t			 idx, n;
	int			 c;

	psh_skip(ps);
	if (psh_peekc(ps, 0) == '(' && psh_peekc(ps, 1) == '(') {
		if (psh_arith_cmd(ps) != 0)
			return -1;
		ps->out->cmds[ps->out->ncmds - 1].flags |= PC_F_FOR;
	} else {
		c = psh_peekc(ps, 0);
		if (c == -1 || psh_is_meta(c))
			return psh_error(ps, "a name is missing after 'for'");
		memset(&b, 0, sizeof b);
		b.c.kind = PC_FOR;
		if (psh_reserve(ps, &idx) != 0)
			return -1;
		if (psh_word(ps, &w) != 0)
			return -1;
		psh_add_word(&b, &w);
		if (psh_skip_nl(ps) != 0)
			goto fail;
		if (psh_peek_reserved(ps, &n, NULL) == R_IN) {
			ps->pos += n;
			for (;;) {
				psh_skip(ps);
				c = psh_peekc(ps, 0);
				if (c == -1 || c == ';' || c == '\n')
					break;
				if (psh_is_meta(c)) {
					psh_error(ps, "unexpected '%c' in 'for' at "
					    "offset %zu", c, ps->pos);
					goto fail;
				}
				if (psh_word(ps, &w) != 0)
					goto fail;
				psh_add_word(&b, &w);
			}
		}
		psh_emit(ps, idx, &b);
	}
	psh_skip(ps);
	if (psh_peekc(ps, 0) == ';')
		ps->pos++;
	if (psh_eat(ps, R_DO, "do") != 0 || psh_compound_list(ps, T_DONE) != 0 ||
	    psh_eat(ps, R_DONE, "done") != 0)
		return -1;
	return psh_compound_redirs(ps);
fail:
	psh_cmd_release(&b.c);
	return -1;
}

static int
psh_command(struct psh *ps)
{
	struct psh_cmd		 b;
	struct policy_word	 w;
	enum psh_reserved	 r;
	size_t			 n, idx;
	int			 c, saved;

	psh_skip(ps);
	c = psh_peekc(ps, 0);
	if (c == '(') {
		if (psh_peekc(ps, 1) == '(')
			return psh_arith_cmd(ps) == 0 ? psh_compound_redirs(ps) : -1;
		ps->pos++;
		saved = ps->flags;
		ps->flags |= PC_F_SUBSHELL;
		if (psh_compound_list(ps, T_RPAREN) != 0)
			return -1;
		ps->flags = saved;
		if (psh_peekc(ps, 0) != ')')
			return psh_error(ps, "unterminated ( ");
		ps->pos++;
		return psh_compound_redirs(ps);
	}
	r = psh_peek_reserved(ps, &n, NULL);
	switch (r) {
	case R_NONE:
	case R_BANG:
		return psh_simple(ps);
	case R_LBRACE:
		ps->pos += n;
		if (psh_compound_list(ps, T_RBRACE) != 0 ||
		    psh_eat(ps, R_RBRACE, "}") != 0)
			return -1;
		return psh_compound_redirs(ps);
	case R_IF:
		ps->pos += n;
		if (psh_compound_list(ps, T_THEN) != 0 ||
		    psh_eat(ps, R_THEN, "then") != 0 ||
		    psh_compound_list(ps, T_ELIF|T_ELSE|T_FI) != 0)
			return -1;
		for (;;) {
			if (psh_skip_nl(ps) != 0)
				return -1;
			r = psh_peek_reserved(ps, &n, NULL);
			if (r != R_ELIF)
				break;
			ps->pos += n;
			if (psh_compound_list(ps, T_THEN) != 0 ||
			    psh_eat(ps, R_THEN, "then") != 0 ||
			    psh_compound_list(ps, T_ELIF|T_ELSE|T_FI) != 0)
				return -1;
		}
		if (r == R_ELSE) {
			ps->pos += n;
			if (psh_compound_list(ps, T_FI) != 0)
				return -1;
		}
		if (psh_eat(ps, R_FI, "fi") != 0)
			return -1;
		return psh_compound_redirs(ps);
	case R_WHILE:
	case R_UNTIL:
		ps->pos += n;
		if (psh_compound_list(ps, T_DO) != 0 ||
		    psh_eat(ps, R_DO, "do") != 0 ||
		    psh_compound_list(ps, T_DONE) != 0 ||
		    psh_eat(ps, R_DONE, "done") != 0)
			return -1;
		return psh_compound_redirs(ps);
	case R_FOR:
		ps->pos += n;
		return psh_for(ps);
	case R_FUNCTION:
		ps->pos += n;
		psh_skip(ps);
		c = psh_peekc(ps, 0);
		if (c == -1 || psh_is_meta(c))
			return psh_error(ps, "a name is missing after 'function'");
		memset(&b, 0, sizeof b);
		if (psh_reserve(ps, &idx) != 0)
			return -1;
		if (psh_word(ps, &w) != 0)
			return -1;
		psh_add_word(&b, &w);
		psh_skip(ps);
		if (psh_peekc(ps, 0) == '(') {
			ps->pos++;
			psh_skip(ps);
			if (psh_peekc(ps, 0) != ')') {
				psh_cmd_release(&b.c);
				return psh_error(ps, "expected ')' at offset %zu",
				    ps->pos);
			}
			ps->pos++;
		}
		return psh_funcdef(ps, &b, idx);
	case R_DBRACK:
		return psh_test(ps);
	case R_CASE:
	case R_SELECT:
	case R_COPROC:
		return psh_error(ps, "'%.*s' is not supported", (int)n,
		    ps->s + ps->pos);
	default:
		return psh_error(ps, "unexpected '%.*s' at offset %zu", (int)n,
		    ps->s + ps->pos, ps->pos);
	}
}

static int
psh_pipeline(struct psh *ps)
{
	size_t	 n;

	psh_skip(ps);
	while (psh_peek_reserved(ps, &n, NULL) == R_BANG) {
		ps->pos += n;
		psh_skip(ps);
	}
	for (;;) {
		if (psh_command(ps) != 0)
			return -1;
		psh_skip(ps);
		if (psh_peekc(ps, 0) != '|' || psh_peekc(ps, 1) == '|')
			return 0;
		ps->pos += psh_peekc(ps, 1) == '&' ? 2 : 1;
		if (psh_skip_nl(ps) != 0)
			return -1;
	}
}

static int
psh_and_or(struct psh *ps)
{
	int	 c;

	for (;;) {
		if (psh_pipeline(ps) != 0)
			return -1;
		psh_skip(ps);
		c = psh_peekc(ps, 0);
		if (!((c == '&' || c == '|') && psh_peekc(ps, 1) == c))
			return 0;
		ps->pos += 2;
		if (psh_skip_nl(ps) != 0)
			return -1;
	}
}

static int
psh_list(struct psh *ps, int term)
{
	enum psh_reserved	 r;
	int			 c, t, have = 0;
	size_t			 n;

	for (;;) {
		psh_skip(ps);
		c = psh_peekc(ps, 0);
		if (c == -1) {
			if (term & T_EOF)
				return 0;
			return psh_error(ps, "unexpected end of input");
		}
		if (c == '\n') {
			if (psh_newline(ps) != 0)
				return -1;
			have = 0;
			continue;
		}
		if (c == ';' || c == '&') {
			if (!have || psh_peekc(ps, 1) == ';' ||
			    psh_peekc(ps, 1) == '&')
				return psh_error(ps, "unexpected '%c' at offset %zu",
				    c, ps->pos);
			ps->pos++;
			have = 0;
			continue;
		}
		if (c == ')') {
			if (term & T_RPAREN)
				return 0;
			return psh_error(ps, "unexpected ')' at offset %zu",
			    ps->pos);
		}
		if (have)
			return psh_error(ps, "unexpected '%c' at offset %zu", c,
			    ps->pos);
		r = psh_peek_reserved(ps, &n, &t);
		if (r != R_NONE && t != 0) {
			if (t > 0 && (term & t))
				return 0;
			return psh_error(ps, "unexpected '%.*s' at offset %zu",
			    (int)n, ps->s + ps->pos, ps->pos);
		}
		if (psh_and_or(ps) != 0)
			return -1;
		have = 1;
	}
}

struct policy_parse *
policy_shell_parse(const char *s, size_t len)
{
	struct policy_parse	*out;
	struct psh		 ps;
	size_t			 i, alloc = 0;

	out = xcalloc(1, sizeof *out);
	if (len > POLICY_SHELL_MAX_LEN) {
		xasprintf(&out->error, "command longer than %d bytes",
		    POLICY_SHELL_MAX_LEN);
		return out;
	}
	if (memchr(s, '\0', len) != NULL) {
		out->error = xstrdup("NUL byte in the command");
		return out;
	}
	memset(&ps, 0, sizeof ps);
	ps.s = s;
	ps.len = len;
	ps.out = out;
	ps.allocp = &alloc;
	if (psh_list(&ps, T_EOF) != 0 && out->error == NULL)
		out->error = xstrdup("cannot parse");
	for (i = 0; i < ps.npending; i++)
		free(ps.pending[i].delim);
	free(ps.pending);
	if (out->error != NULL) {
		for (i = 0; i < out->ncmds; i++)
			psh_cmd_release(&out->cmds[i]);
		free(out->cmds);
		out->cmds = NULL;
		out->ncmds = 0;
	}
	return out;
}

void
policy_shell_free(struct policy_parse *pp)
{
	size_t	 i;

	if (pp == NULL)
		return;
	for (i = 0; i < pp->ncmds; i++)
		psh_cmd_release(&pp->cmds[i]);
	free(pp->cmds);
	free(pp->error);
	free(pp);
}

char *
policy_shell_quote(const char *s)
{
	struct buf	 b = BUF_INIT;
	const char	*p;

	if (*s == '\0')
		return xstrdup("''");
	for (p = s; *p != '\0'; p++) {
		if (!isalnum((unsigned char)*p) && strchr("_@%+=:,./[]-", *p) == NULL)
			break;
	}
	if (*p == '\0')
		return xstrdup(s);
	buf_addc(&b, '\'');
	for (p = s; *p != '\0'; p++) {
		if (*p == '\'')
			buf_adds(&b, "'\\''");
		else
			buf_addc(&b, *p);
	}
	buf_addc(&b, '\'');
	return buf_detach(&b, NULL);
}
