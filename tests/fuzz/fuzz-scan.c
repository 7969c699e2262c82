/*
 * libFuzzer harness for the event scanner: the input is a whole trace file
 * (plain or gzip; zio sniffs it), read through a memfd with zio_open() and
 * split by scan_run().  Every event span handed out is tokenized with jsmn
 * the way trace-extract does, and must be a complete JSON object.
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
on_event(void *ctx, const char *ev, size_t len, unsigned long long off)
{
	(void)ctx;
	/* The scanner validated the grammar, so the span is one object. */
	if (len < 2 || ev[0] != '{' || ev[len - 1] != '}' || json_parse(&doc, ev, len) < 0 ||
	    doc.tok[0].type != JSMN_OBJECT || json_skip(&doc, 0) != doc.ntok) {
		fprintf(stderr, "bad event span at %llu: %.*s\n", off, (int)(len > 2000 ? 2000 : len), ev);
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
