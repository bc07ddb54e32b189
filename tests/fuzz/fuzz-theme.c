/*
 * fuzz-theme: libFuzzer target for the theme file parser; the input is a
 * theme file. Parsing must never crash, and a file it refuses must leave
 * every role as it was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*cause = NULL, *before[ROLE_COUNT], *after;
	int	 i, rc;

	for (i = 0; i < ROLE_COUNT; i++)
		before[i] = theme_describe((enum ui_role)i);
	rc = theme_parse((const char *)data, size, "fuzz", &cause);
	for (i = 0; i < ROLE_COUNT; i++) {
		after = theme_describe((enum ui_role)i);
		if (rc != 0 && strcmp(before[i], after) != 0)
			abort();
		free(after);
		free(before[i]);
	}
	free(cause);
	return 0;
}
