/*
 * libFuzzer harness for the event scanner: the input is a whole trace file
 * (plain or gzip; zio sniffs it), read through a memfd with zio_open() and
 * split by scan_run().  Every event handed out must be a complete JSON object
 * whose tokens (from the strict fast path or the general one) equal jsmn's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "json.h"
#include "scan.h"
#include "zio.h"

static json_doc doc;

static int
on_event(void *ctx, const json_doc *ev, unsigned long long off)
{
	const char *js = ev->js;
	size_t len = ev->len;
	int i;

	(void)ctx;
	/* The scanner validated the grammar, so the span is one object ... */
	if (len < 2 || js[0] != '{' || js[len - 1] != '}' || ev->ntok < 1 ||
	    ev->tok[0].type != JSMN_OBJECT || json_skip(ev, 0) != ev->ntok ||
	    json_parse(&doc, js, len) < 0 || doc.ntok != ev->ntok) {
		fprintf(stderr, "bad event span at %llu: %.*s\n", off, (int)(len > 2000 ? 2000 : len), js);
		abort();
	}
	/* ... and its tokens, from either path, are exactly jsmn's. */
	for (i = 0; i < ev->ntok; i++)
		if (memcmp(&ev->tok[i], &doc.tok[i], sizeof doc.tok[i]) != 0) {
			fprintf(stderr, "token %d differs from jsmn's at %llu: %.*s\n", i, off,
			    (int)(len > 2000 ? 2000 : len), js);
			abort();
		}
	return 0;
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char path[64], err[1024];
	struct scan_stats st;
	int fd = fuzz_memfd(data, size), r;
	zio *z;

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	z = zio_open(path);
	if (!z)
		abort();
	r = scan_run(z, "fuzz", on_event, NULL, &st, err, sizeof err, NULL);
	if (r == SCAN_ERROR && err[0] == '\0')
		abort();	/* every error carries a message */
	if (st.bytes > 0 && st.events > st.elements)
		abort();
	zio_close(z);
	close(fd);
	return 0;
}
