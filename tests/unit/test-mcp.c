/* Unit tests of the MCP client's pure parts: the words of args and env. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "holt.h"
#include "mcp-int.h"

/* The words joined with '|', or "ERR: cause". */
static char *
words(const char *s)
{
	struct buf	 b = BUF_INIT;
	char		**w, *cause = NULL;
	size_t		 i;

	if ((w = mcp_words(s, &cause)) == NULL) {
		buf_addf(&b, "ERR: %s", cause);
		free(cause);
		return buf_detach(&b, NULL);
	}
	for (i = 0; w[i] != NULL; i++)
		buf_addf(&b, "%s%s", i > 0 ? "|" : "", w[i]);
	mcp_words_free(w);
	return buf_detach(&b, NULL);
}

static void
check(const char *in, const char *want)
{
	char	*got = words(in);

	assert_string_equal(got, want);
	free(got);
}

static void
test_words(void **state)
{
	(void)state;
	check("", "");
	check("   \t ", "");
	check("node  /x/index.js stdio", "node|/x/index.js|stdio");
	check("a 'b c' \"d e\" f", "a|b c|d e|f");
	check("pre'fix mid'post", "prefix midpost");
	check("'' x", "|x");
	check("K=\"a b\" L=c", "K=a b|L=c");
	check("say \"it's\"", "say|it's");
	check("'unclosed", "ERR: unclosed '");
	check("x \"also", "ERR: unclosed \"");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
