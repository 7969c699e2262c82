/*
 * libFuzzer harness for the record reader: the input is a record stream
 * (JSON lines) read with rec_reader from a memfd; each line's type is read,
 * the line tokenized and its common members fetched with the typed getters,
 * as the filters do.  Frame-like lines also go through rec_match(), whose
 * values must equal the getters' (abort otherwise).  die() (malformed line)
 * returns here through longjmp.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "json.h"
#include "rec.h"
#include "sbuf.h"

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static const char *keys[] = { "t", "name", "ts", "dur", "stage", "pid", "correlation",
		"external_id", "sel", "by_cat", NULL };
	int fd = fuzz_memfd(data, size), k, i;
	FILE *fp = fdopen(fd, "r");
	volatile int started = 0;
	rec_reader r;
	sbuf s = SBUF_INIT, out = SBUF_INIT;
	double d;
	long long v;
	size_t n;

	if (!fp)
		abort();
	rec_reader_init(&r, fp, "fuzz");
	started = 1;
	fuzz_die_armed = 1;
	if (setjmp(fuzz_die_jmp) == 0) {
		while (rec_next(&r)) {
			long long t;
			const char *ns, *ps, *ts;
			size_t nn, pn, tn;
			double vts, vdur;

			rec_type(&r, &n);
			if (rec_match(&r, REC_FRAME_LAYOUT, &t, &ns, &nn, &ps, &pn, &ts, &tn,
			    &vts, &vdur)) {
				/* a matched line is valid JSON: the getters must agree */
				if (!rec_get_int(&r, "t", &v) || v != t ||
				    !rec_get_str(&r, "name", &s) || s.len != nn || memcmp(s.s, ns, nn) ||
				    !rec_get_num(&r, "ts", &d) || memcmp(&d, &vts, sizeof d) ||
				    !rec_get_num(&r, "dur", &d) || memcmp(&d, &vdur, sizeof d))
					abort();
			}
			if (rec_is(&r, "kernel") || rec_is(&r, "stats") || (r.len & 1)) {
				rec_parse(&r);
				for (k = 0; keys[k]; k++) {
					rec_get_str(&r, keys[k], &s);
					rec_get_num(&r, keys[k], &d);
					rec_get_int(&r, keys[k], &v);
					i = rec_get(&r, keys[k]);
					if (i >= 0) {
						json_pystr(&r.doc, i, &s, NULL);
						sb_reset(&out);
						json_write_compact(&r.doc, i, &out);
					}
				}
			}
		}
	}
	fuzz_die_armed = 0;
	(void)started;
	rec_reader_free(&r);
	fclose(fp);
	sb_free(&s);
	sb_free(&out);
	return 0;
}
