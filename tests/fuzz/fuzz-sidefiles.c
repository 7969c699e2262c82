/*
 * libFuzzer harness for the side files the tools read beside the record
 * stream.  The first byte picks one:
 *   even  a fuse-patterns(5) catalog (fuse-detect --patterns), loaded with
 *         fuse-detect's own catalog reader after the built-in catalog;
 *   odd   a mapping's site records (kernel-map --mapping): each becomes a
 *         payload entry as kernel-map loads them, then every entry's name,
 *         cut, extended and recased, is looked up through the stage
 *         aliases and the relaxed lookup's index, and written back.
 * Leak checks are off: a malformed line ends the run through die(), which
 * the tools do by exiting, leaving what the reader held.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "fuzz.h"
#include "payload.h"
#include "rec.h"
#include "sbuf.h"
#include "xalloc.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int __lsan_is_turned_off(void);

int
__lsan_is_turned_off(void)
{
	return 1;
}

static int
cmp_entry(const void *a, const void *b)
{
	return strcmp(((const entry_t *)a)->kernel, ((const entry_t *)b)->kernel);
}

static void
lookups(kernel_map_t *km)
{
	static const char *const stages[] = { "extend", "prefill", "decode", "all" };
	sbuf q = SBUF_INIT, loc = SBUF_INIT, op = SBUF_INIT, js = SBUF_INIT;
	size_t s, i, k;

	for (s = 0; s <= km->nstages; s++) {
		payload_t *p = s < km->nstages ? &km->stages[s] : &km->global;
		for (i = 0; i < p->n && i < 64; i++) {
			const char *name = p->e[i].kernel;
			size_t n = strlen(name);
			for (k = 0; k < 4; k++) {
				const entry_t *e;
				sb_reset(&q);
				if (k == 0)
					sb_add(&q, name, n / 2);
				else if (k == 1)
					sb_printf(&q, "%s_tail", name);
				else if (k == 2) {
					sb_adds(&q, name);
					for (size_t j = 0; j < q.len; j++)
						if (q.s[j] >= 'a' && q.s[j] <= 'z')
							q.s[j] -= 'a' - 'A';
				} else
					sb_printf(&q, "x%sx", name + (n > 3 ? 3 : 0));
				e = lookup_kernel_map_entry(km, stages[(i + k) % 4], sb_str(&q));
				best_site_summary(e, &loc, &op);
				if (e) {
					sb_reset(&js);
					entry_to_json(e, &js);
				}
			}
		}
	}
	sb_free(&q);
	sb_free(&loc);
	sb_free(&op);
	sb_free(&js);
}

static void
mapping(FILE *fp)
{
	kernel_map_t km = { 0 };
	rec_reader r;
	struct rec_site st;
	size_t i;

	rec_reader_init(&r, fp, "fuzz");
	fuzz_die_armed = 1;
	if (setjmp(fuzz_die_jmp) == 0) {
		while (rec_next(&r)) {
			payload_t *p = NULL;
			if (rec_type_of(&r) != RT_site)
				continue;
			REC_READ(&r, site, &st);
			if (rstr_eq(st.scope, "mapping_stage") && REC_HAS(&st, site, stage)) {
				char *stage = rstr_dup(st.stage);
				p = kernel_map_stage(&km, stage, 1);
				free(stage);
			} else if (rstr_eq(st.scope, "mapping_global")) {
				p = &km.global;
			}
			if (p) {
				rec_parse(&r);
				if (entry_from_json(&r.doc, 0, payload_add(p)) < 0)
					rec_die(&r, "site record is not a payload entry");
			}
		}
		for (i = 0; i < km.nstages; i++)
			xqsort(km.stages[i].e, km.stages[i].n, sizeof(entry_t), cmp_entry);
		xqsort(km.global.e, km.global.n, sizeof(entry_t), cmp_entry);
		lookups(&km);
	}
	fuzz_die_armed = 0;
	rec_reader_free(&r);
	kernel_map_free(&km);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	int fd;
	FILE *fp;
	char path[64];

	if (size == 0)
		return 0;
	fd = fuzz_memfd(data + 1, size - 1);
	if (data[0] % 2 == 0) {
		catalog_t c = { 0 };
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		fuzz_die_armed = 1;
		if (setjmp(fuzz_die_jmp) == 0) {
			catalog_load_builtin(&c);
			catalog_load_file(&c, path);
		}
		fuzz_die_armed = 0;
		catalog_free(&c);
		close(fd);
		return 0;
	}
	if ((fp = fdopen(fd, "r")) == NULL)
		abort();
	mapping(fp);
	fclose(fp);
	return 0;
}
