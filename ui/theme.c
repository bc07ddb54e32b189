/*
 * theme.c: colour themes. Views draw with semantic roles (UI_ROLES in ui.h);
 * a theme file maps roles to colours, one role a line:
 *
 *	# comment
 *	status       = black cyan		# a comment after " # "
 *	border.focus = #5fafff default bold
 *	diff.add     = 2
 *
 * A colour is "default", a name (black red green yellow blue magenta cyan
 * white, "bright-" of each), an index 0-255 or #rrggbb; then optional
 * attributes bold dim reverse underline italic. The terminal decides what is
 * shown: direct colour when its terminfo has it, else the nearest of 256, else
 * the nearest of 8; NO_COLOR (non-empty) keeps only the attributes.
 *
 * Pairs 1..ROLE_COUNT belong to the roles; program output (SGR colours) takes
 * pairs after them from a small cache, so a flood of colours costs a bounded
 * number of pairs.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ui.h"

#define THEME_RGB	0x1000000	/* colour is 24-bit RGB in the low bits */
#define THEME_DEFAULT	(-1)

struct theme_role {
	const char	*name;
	int		 fg, bg;
	attr_t		 attr;
};

static const struct theme_role theme_builtin[ROLE_COUNT] = {
#define X(id, name, fg, bg, at) { name, fg, bg, at },
	UI_ROLES
#undef X
};
static struct theme_role theme_roles[ROLE_COUNT] = {
#define X(id, name, fg, bg, at) { name, fg, bg, at },
	UI_ROLES
#undef X
};

static char	*theme_current;
static int	 theme_colours;		/* 0 none, 8, 256, or 1<<24 */
static int	 theme_started;

#define SGR_CACHE 1024
static struct {
	int	 fg, bg, pair;
} theme_sgr_cache[SGR_CACHE];
static int	 theme_sgr_next;

static const char *theme_names[] = {
	"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"
};

const char *
theme_name(void)
{
	return theme_current != NULL ? theme_current : "default";
}

char *
theme_find(const char *name)
{
	const char	*dirs[4];
	char		*p, *up;
	size_t		 i, n = 0;

	if (strchr(name, '/') != NULL)
		return xstrdup(name);
	/* HOLT_THEMES_DIR first (a build outside the source tree, tests). */
	if (getenv("HOLT_THEMES_DIR") != NULL) {
		p = xprintf("%s/%s.theme", getenv("HOLT_THEMES_DIR"), name);
		if (access(p, R_OK) == 0)
			return p;
		free(p);
	}
	/* The user's, the installed ones, then a build tree's. */
	up = xprintf("%s/..", paths_self_dir());
	dirs[n++] = paths_config_dir();
	dirs[n++] = HOLT_DATADIR;
	dirs[n++] = paths_self_dir();
	dirs[n++] = up;
	for (i = 0; i < n; i++) {
		if (dirs[i] == NULL)
			continue;
		p = xprintf("%s/themes/%s.theme", dirs[i], name);
		if (access(p, R_OK) == 0) {
			free(up);
			return p;
		}
		free(p);
	}
	free(up);
	return NULL;
}

static int
theme_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The name of the theme after the current one, in name order. */
char *
theme_next(void)
{
	const char	*dirs[5];
	char		*up, *path, **names = NULL, *next = NULL, *dot;
	size_t		 i, n = 0, k, a = 0;
	DIR		*d;
	struct dirent	*de;

	up = xprintf("%s/..", paths_self_dir());
	dirs[0] = paths_config_dir();
	dirs[1] = HOLT_DATADIR;
	dirs[2] = paths_self_dir();
	dirs[3] = up;
	dirs[4] = getenv("HOLT_THEMES_DIR");	/* itself the themes directory */
	for (i = 0; i < nitems(dirs); i++) {
		if (dirs[i] == NULL)
			continue;
		path = i == 4 ? xstrdup(dirs[i]) : xprintf("%s/themes", dirs[i]);
		d = opendir(path);
		free(path);
		while (d != NULL && (de = readdir(d)) != NULL) {
			if ((dot = strrchr(de->d_name, '.')) == NULL ||
			    strcmp(dot, ".theme") != 0 || dot == de->d_name)
				continue;
			if (n == a) {
				a = a ? a * 2 : 16;
				names = xreallocarray(names, a, sizeof *names);
			}
			names[n++] = xstrndup(de->d_name,
			    (size_t)(dot - de->d_name));
		}
		if (d != NULL)
			closedir(d);
	}
	free(up);
	if (n == 0)
		return xstrdup("default");
	qsort(names, n, sizeof *names, theme_cmp);
	for (k = 0; k < n && next == NULL; k++) {
		if (strcmp(names[k], theme_name()) > 0)
			next = xstrdup(names[k]);
	}
	if (next == NULL)
		next = xstrdup(names[0]);
	for (k = 0; k < n; k++)
		free(names[k]);
	free(names);
	return next;
}

/* A colour word: -2 if it is not one. */
static int
theme_parse_colour(const char *w)
{
	unsigned long	 v;
	char		*end;
	size_t		 i;

	if (strcmp(w, "default") == 0)
		return THEME_DEFAULT;
	for (i = 0; i < nitems(theme_names); i++) {
		if (strcmp(w, theme_names[i]) == 0)
			return (int)i;
		if (strncmp(w, "bright-", 7) == 0 &&
		    strcmp(w + 7, theme_names[i]) == 0)
			return (int)i + 8;
	}
	if (*w == '#') {
		if (strlen(w) != 7)
			return -2;
		errno = 0;
		v = strtoul(w + 1, &end, 16);
		if (errno != 0 || *end != '\0')
			return -2;
		return THEME_RGB | (int)v;
	}
	if (isdigit((unsigned char)*w)) {
		errno = 0;
		v = strtoul(w, &end, 10);
		if (errno != 0 || *end != '\0' || v > 255)
			return -2;
		return (int)v;
	}
	return -2;
}

static attr_t
theme_parse_attr(const char *w)
{
	if (strcmp(w, "bold") == 0)
		return A_BOLD;
	if (strcmp(w, "dim") == 0)
		return A_DIM;
	if (strcmp(w, "reverse") == 0)
		return A_REVERSE;
	if (strcmp(w, "underline") == 0)
		return A_UNDERLINE;
	if (strcmp(w, "italic") == 0)
		return A_ITALIC;
	if (strcmp(w, "none") == 0)
		return A_NORMAL;
	return (attr_t)-1;
}

static int
theme_parse_line(struct theme_role *roles, char *line, char **why)
{
	char		*eq, *key, *val, *w, *save = NULL;
	int		 c, ncol = 0, fg = THEME_DEFAULT, bg = THEME_DEFAULT;
	attr_t		 a, attr = 0;
	size_t		 i;

	key = line + strspn(line, " \t");
	if (*key == '#')
		return 0;
	/* A trailing comment is " # ..."; "#rrggbb" is a colour. */
	for (eq = key; (eq = strchr(eq, '#')) != NULL; eq++) {
		if (isspace((unsigned char)eq[-1]) && (eq[1] == '\0' ||
		    isspace((unsigned char)eq[1]))) {
			*eq = '\0';
			break;
		}
	}
	if (*key == '\0' || *key == '\n')
		return 0;
	if ((eq = strchr(key, '=')) == NULL) {
		*why = xstrdup("expected 'role = colour'");
		return -1;
	}
	val = eq + 1;
	while (eq > key && isspace((unsigned char)eq[-1]))
		eq--;
	*eq = '\0';
	for (i = 0; i < ROLE_COUNT; i++) {
		if (strcmp(roles[i].name, key) == 0)
			break;
	}
	if (i == ROLE_COUNT) {
		*why = xprintf("unknown role '%s'", key);
		return -1;
	}
	for (w = strtok_r(val, " \t\r\n", &save); w != NULL;
	    w = strtok_r(NULL, " \t\r\n", &save)) {
		if ((c = theme_parse_colour(w)) != -2 && ncol < 2) {
			if (ncol++ == 0)
				fg = c;
			else
				bg = c;
			continue;
		}
		if ((a = theme_parse_attr(w)) == (attr_t)-1) {
			*why = xprintf("bad colour or attribute '%s'", w);
			return -1;
		}
		attr |= a;
	}
	if (ncol == 0 && attr == 0) {
		*why = xprintf("no colour for '%s'", key);
		return -1;
	}
	roles[i].fg = fg;
	roles[i].bg = bg;
	roles[i].attr = attr;
	return 0;
}

int
theme_parse(const char *data, size_t len, const char *name, char **cause)
{
	struct theme_role	 roles[ROLE_COUNT];
	char			*copy, *line, *next, *why = NULL;
	int			 lineno = 0;

	if (memchr(data, '\0', len) != NULL) {
		*cause = xprintf("theme '%s': not a text file", name);
		return -1;
	}
	copy = xstrndup(data, len);
	/* A theme is whole: what it does not set is the built-in default. */
	memcpy(roles, theme_builtin, sizeof roles);
	for (line = copy; line != NULL && *line != '\0'; line = next) {
		lineno++;
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (theme_parse_line(roles, line, &why) != 0) {
			*cause = xprintf("theme '%s' line %d: %s", name, lineno,
			    why);
			free(why);
			free(copy);
			return -1;
		}
	}
	free(copy);
	memcpy(theme_roles, roles, sizeof theme_roles);
	if (theme_started)
		theme_start();
	return 0;
}

int
theme_load(const char *name, char **cause)
{
	char	*path, *data;
	size_t	 len;
	int	 rc;

	if (name == NULL || *name == '\0')
		name = "default";
	if ((path = theme_find(name)) == NULL) {
		if (strcmp(name, "default") == 0)
			return 0;	/* the built-in table is the default */
		*cause = xprintf("theme '%s': not found (themes/%s.theme)",
		    name, name);
		return -1;
	}
	if ((data = file_read(path, &len, 1024 * 1024)) == NULL) {
		*cause = xprintf("theme '%s': %s", path, strerror(errno));
		free(path);
		return -1;
	}
	if ((rc = theme_parse(data, len, path, cause)) == 0) {
		free(theme_current);
		theme_current = xstrdup(name);
	}
	free(data);
	free(path);
	return rc;
}

/* What a role is set to, as a theme line would say it (tests). */
char *
theme_describe(enum ui_role r)
{
	struct buf	 b = BUF_INIT;
	const int	 c[2] = { theme_roles[r].fg, theme_roles[r].bg };
	attr_t		 a = theme_roles[r].attr;
	size_t		 len;
	int		 i;

	buf_addf(&b, "%s =", theme_roles[r].name);
	for (i = 0; i < 2; i++) {
		if (c[i] == THEME_DEFAULT)
			buf_adds(&b, " default");
		else if (c[i] & THEME_RGB)
			buf_addf(&b, " #%06x", c[i] & 0xffffff);
		else
			buf_addf(&b, " %d", c[i]);
	}
	if (a & A_BOLD)
		buf_adds(&b, " bold");
	if (a & A_DIM)
		buf_adds(&b, " dim");
	if (a & A_REVERSE)
		buf_adds(&b, " reverse");
	if (a & A_UNDERLINE)
		buf_adds(&b, " underline");
	if (a & A_ITALIC)
		buf_adds(&b, " italic");
	return buf_detach(&b, &len);
}

/* The nearest of the 8 basic colours to an RGB colour. */
static int
theme_rgb_to_8(int rgb)
{
	int	r = (rgb >> 16) & 0xff, g = (rgb >> 8) & 0xff, b = rgb & 0xff;

	return (r > 127 ? 1 : 0) | (g > 127 ? 2 : 0) | (b > 127 ? 4 : 0);
}

static int
theme_rgb_to_256(int rgb)
{
	int	r = (rgb >> 16) & 0xff, g = (rgb >> 8) & 0xff, b = rgb & 0xff;
	int	ri, gi, bi, grey;

	if (abs(r - g) < 10 && abs(g - b) < 10) {
		grey = (r + g + b) / 3;
		if (grey < 8)
			return 16;
		if (grey > 238)
			return 231;
		return 232 + (grey - 8) / 10;
	}
	ri = (r < 48) ? 0 : (r < 115) ? 1 : (r - 35) / 40;
	gi = (g < 48) ? 0 : (g < 115) ? 1 : (g - 35) / 40;
	bi = (b < 48) ? 0 : (b < 115) ? 1 : (b - 35) / 40;
	return 16 + 36 * ri + 6 * gi + bi;
}

static const int theme_index_rgb[16] = {
	0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd,
	0xe5e5e5, 0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff,
	0x00ffff, 0xffffff
};

/* A theme colour as the terminal can show it. */
static int
theme_colour(int c)
{
	int	rgb;

	if (c == THEME_DEFAULT)
		return -1;
	if (theme_colours >= 0x1000000) {
		if (c & THEME_RGB)
			return c & 0xffffff;
		if (c < 16)
			return theme_index_rgb[c];
		return c;	/* indexes are rare in direct mode: keep */
	}
	if (c & THEME_RGB) {
		rgb = c & 0xffffff;
		if (theme_colours >= 256)
			return theme_rgb_to_256(rgb);
		return theme_rgb_to_8(rgb);
	}
	if (c >= theme_colours)
		return c < 16 ? c - 8 : 7;
	return c;
}

void
theme_start(void)
{
	const char	*nc = getenv("NO_COLOR");
	int		 i;

	theme_started = 1;
	theme_sgr_next = 0;
	memset(theme_sgr_cache, 0, sizeof theme_sgr_cache);
	theme_colours = 0;
	if ((nc != NULL && *nc != '\0') || !has_colors())
		return;
	start_color();
	use_default_colors();
	theme_colours = COLORS >= 0x1000000 ? 0x1000000 : COLORS >= 256 ?
	    256 : 8;
	for (i = 0; i < ROLE_COUNT; i++) {
		init_extended_pair(i + 1, theme_colour(theme_roles[i].fg),
		    theme_colour(theme_roles[i].bg));
	}
}

int
theme_pair(enum ui_role r)
{
	if (theme_colours == 0)
		return 0;
	return (int)r + 1;
}

attr_t
theme_attr(enum ui_role r)
{
	attr_t	a = theme_roles[r].attr;

	if (theme_colours == 0) {
		/* Without colour, coloured roles still need to stand out. */
		if (a == 0 && theme_roles[r].bg != THEME_DEFAULT)
			a = A_REVERSE;
		return a;
	}
	return a | COLOR_PAIR(r + 1);
}

int
theme_sgr_pair(int fg, int bg)
{
	int	i, pair;

	if (theme_colours == 0 || (fg < 0 && bg < 0))
		return 0;
	for (i = 0; i < theme_sgr_next; i++) {
		if (theme_sgr_cache[i].fg == fg && theme_sgr_cache[i].bg == bg)
			return theme_sgr_cache[i].pair;
	}
	pair = ROLE_COUNT + 1 + theme_sgr_next;
	if (theme_sgr_next >= SGR_CACHE || pair >= COLOR_PAIRS)
		return 0;
	init_extended_pair(pair, theme_colour(fg), theme_colour(bg));
	theme_sgr_cache[theme_sgr_next].fg = fg;
	theme_sgr_cache[theme_sgr_next].bg = bg;
	theme_sgr_cache[theme_sgr_next].pair = pair;
	theme_sgr_next++;
	return pair;
}
