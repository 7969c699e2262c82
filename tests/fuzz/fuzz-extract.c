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
#include "jshape.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/*
 * One event through on_event, its members found by the fast path (a shape
 * learnt from it, json_select_shaped) or the general one (jsmn,
 * json_select_doc): the records written go to out, the trace state's
 * counters to *counts.
 */
static int
run_event(const char *ev, size_t size, int fast, char **out, size_t *outlen,
    unsigned long long counts[8])
{
	static json_doc d;
	struct trace_state s;
	int idx[16], ok;
	FILE *mem = open_memstream(out, outlen);

	if (!mem)
		abort();
	memset(&s, 0, sizeof s);
	s.path = "fuzz";
	s.names.tab = strtab_new();
	s.cats.tab = strtab_new();
	s.links = links_new();
	if (fast) {
		/* through a memory of shapes: learnt the first time, fitted the second */
		struct json_shapes sh;
		json_shapes_init(&sh, &event_keys);
		ok = json_select_shaped(&sh, &d, ev, size, idx) == size &&
		    json_select_shaped(&sh, &d, ev, size, idx) == size;
		json_shapes_free(&sh);
	}
	else {
		ok = json_parse(&d, ev, size) == 0;
		if (ok)
			json_select_doc(&d, &event_keys, idx);
	}
	rec_output(mem);
	if (ok)
		on_event(&s, &d, idx, 0);
	rec_output(NULL);
	fclose(mem);
	counts[0] = s.events;
	counts[1] = s.kernels;
	counts[2] = s.cpu_ops;
	counts[3] = s.launches;
	counts[4] = s.frames;
	counts[5] = s.annotations;
	counts[6] = s.by_ph_x + 2 * s.by_ph_m + 4 * s.by_ph_other;
	counts[7] = s.repl + s.kernel_no_dur + s.not_gpu_work + s.neg_dur;
	trace_state_free(&s);
	return ok;
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static int init;
	char *ev, *out[2] = { NULL, NULL };
	size_t outlen[2];
	unsigned long long counts[2][8];
	int fast;

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
	/* with and without the Python ids, as the options choose */
	event_keys.ninner = size % 2 ? 7 : 5;
	python_ids = event_keys.ninner == 7;
	/* the general path, then the fast one when it takes the event: the same records */
	if (run_event(ev, size, 0, &out[0], &outlen[0], counts[0])) {
		fast = run_event(ev, size, 1, &out[1], &outlen[1], counts[1]);
		if (fast && (outlen[0] != outlen[1] || memcmp(out[0], out[1], outlen[0]) != 0 ||
		    memcmp(counts[0], counts[1], sizeof counts[0]) != 0)) {
			fprintf(stderr, "fast and general paths differ on: %.*s\n--- general\n%.*s"
			    "--- fast\n%.*s", (int)(size > 2000 ? 2000 : size), ev, (int)outlen[0],
			    out[0], (int)outlen[1], out[1]);
			abort();
		}
		free(out[1]);
	}
	free(out[0]);
	free(ev);
	return 0;
}
