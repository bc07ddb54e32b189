/*
 * fuzz-sse: libFuzzer target for the SSE parser and both providers'
 * stream assembly. The first byte picks the format and the chunk size;
 * the rest is the stream, fed in chunks.
 */
#include <stdint.h>
#include <stdlib.h>

#include "model-int.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model_stream	*ms;
	struct model_reply	*reply;
	enum model_error	 err;
	char			*cause = NULL;
	size_t			 chunk, off, n;

	if (size < 1)
		return 0;
	chunk = (data[0] >> 1) + 1;
	ms = model_stream_new((data[0] & 1) ? MODEL_ANTHROPIC : MODEL_OPENAI,
	    NULL, NULL);
	for (off = 1; off < size; off += n) {
		n = size - off < chunk ? size - off : chunk;
		if (model_stream_feed(ms, data + off, n, &err, &cause) != 0)
			break;
	}
	if (cause == NULL)
		model_stream_finish(ms, &reply, &err, &cause);
	free(cause);
	model_stream_free(ms);
	return 0;
}
