/*
 * libFuzzer harness for the record reader: the input is a record stream
 * (JSON lines) read with rec_reader from a memfd; each line of a known type
 * is decoded with rec_read(), as the filters do, and its JSON members are
 * parsed and written back.  die() (a malformed line) returns here through
 * longjmp.  tests/fixtures/common/rec-read-check.c checks that the fast and
 * the general decoding agree.
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
	int fd = fuzz_memfd(data, size);
	FILE *fp = fdopen(fd, "r");
	rec_reader r;
	sbuf out = SBUF_INIT;
	json_doc d = { 0 };
	union {
		uint64_t has;
		char bytes[1024];
	} rec;

	if (!fp)
		abort();
	rec_reader_init(&r, fp, "fuzz");
	fuzz_die_armed = 1;
	if (setjmp(fuzz_die_jmp) == 0) {
		while (rec_next(&r)) {
			enum rec_type t = rec_type_of(&r);
			const struct rec_typeinfo *ti;
			unsigned i;

			if (t == RT_UNKNOWN)
				continue;
			rec_read(&r, t, &rec);
			ti = &rec_types[t];
			for (i = 0; i < ti->n; i++) {
				const struct rec_memberinfo *mi = &rec_members[ti->first + i];
				const struct rstr *s = (const void *)(rec.bytes + mi->offset);
				if (mi->kind != RK_JSON || !(rec.has >> i & 1))
					continue;
				rec_parse_json(&r, &d, *s);
				sb_reset(&out);
				json_write_compact(&d, 0, &out);
			}
		}
	}
	fuzz_die_armed = 0;
	rec_reader_free(&r);
	fclose(fp);
	sb_free(&out);
	json_doc_free(&d);
	return 0;
}
