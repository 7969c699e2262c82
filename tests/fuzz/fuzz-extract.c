/*
 * libFuzzer harness for trace-extract's per-event extraction: the input is
 * the JSON text of one event object (as the scanner hands it out), given to
 * the tool's own on_event() with a fresh trace state.  The tool's source is
 * compiled into this file so its static functions can be reached; its main()
 * is renamed.  Records go to stdout, which the harness points at /dev/null.
 */
#define main trace_extract_main
#include "../../cmd/trace-extract/main.c"
#undef main

#include <unistd.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static int init;
	struct trace_state s;
	static json_doc d;
	char *ev;

	if (!init) {
		if (!freopen("/dev/null", "w", stdout))
			abort();
		init = 1;
	}
	/* on_event expects scanner-validated text; validate the same way */
	{
		char path[64], err[512];
		struct scan_stats st;
		int fd = fuzz_memfd(data, size);
		zio *z;
		int r;

		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		z = zio_open(path);
		if (!z)
			abort();
		r = scan_run(z, "fuzz", NULL, NULL, &st, err, sizeof err, NULL);
		zio_close(z);
		close(fd);
		if (r != SCAN_OK || st.shape != 'o' || st.has_events)
			return 0;
	}
	ev = malloc(size ? size : 1);
	memcpy(ev, data, size);
	memset(&s, 0, sizeof s);
	s.path = "fuzz";
	s.names.tab = strtab_new();
	s.cats.tab = strtab_new();
	if (json_parse(&d, ev, size) == 0)
		on_event(&s, &d, 0);
	cache_free(&s.names);
	cache_free(&s.cats);
	imap_free(&s.corr);
	free(s.need);
	free(s.catcount);
	sb_free(&s.name);
	sb_free(&s.cat);
	sb_free(&s.pid);
	sb_free(&s.tid);
	sb_free(&s.tmp);
	free(ev);
	return 0;
}
