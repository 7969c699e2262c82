/*
 * kernel-map internals: the attribution of one trace's kernels to Python
 * sites (kernel-table.md §4), and site statistics and payloads (§5.2-§5.5).
 * All strings are ids in the tool's one string table; times are
 * microseconds as in the trace.
 */
#ifndef KM_H
#define KM_H

#include <stddef.h>
#include <stdint.h>

#include "imap.h"
#include "payload.h"
#include "strtab.h"
#include "trace.h"

extern strtab *km_str;		/* every interned string */

/* Per-string derived values, computed once per distinct raw text. */
uint32_t km_canon(uint32_t raw);		/* canonicalize_name */
const char *km_category(uint32_t raw);		/* classify_kernel */
uint32_t km_frame_norm(uint32_t raw);		/* normalize_source_location */
int km_frame_prio(uint32_t raw);		/* frame_priority */
uint32_t km_intern(const char *s, size_t n);
const char *km_s(uint32_t id);			/* NOSTR gives NULL */
void km_cache_free(void);

/* What kernel-map derives for one kernel of a trace. */
typedef struct {
	uint32_t canon, stage;
	const char *category;
	uint32_t loc, stack, op;	/* attribution result (§4.6) */
	unsigned need : 1;		/* attribute it */
	unsigned graph : 1;		/* its launch call was a CUDA/HIP graph launch */
} kattr_t;

/* One complete trace: the reader's arrays (kernels of the selected process) and ours. */
typedef struct {
	struct trace *tr;
	const struct trace_reader *rd;	/* its reader: the names of py_* contexts */
	kattr_t *ka;			/* one per tr->k */
	int sglang;			/* mapping framework is exactly sglang */
} kmtrace_t;

/* Resolve (loc, stack, op) of every kernel with `need` set (§4.1-§4.6). */
void attribute_kernels(kmtrace_t *kt);

/*
 * Insertion-ordered counter of string ids.  The first key lives in the
 * struct: nearly every site has one CPU op and one stack, and a trace of
 * a million distinct kernels has a million sites (issue 21).
 */
typedef struct {
	uint32_t key0, n, cap;	/* cap: room in `more` */
	long long cnt0;
	struct cpair {
		uint32_t key;
		long long cnt;
	} *more;		/* keys 1 .. n - 1 with their counts */
} counter_t;

typedef struct {
	uint32_t loc;
	double total;
	long long count;
	counter_t ops, stacks;
} site_acc;

typedef struct {
	uint32_t canon;
	uint32_t site0;		/* indexes into sitestats.s, insertion order: the first */
	uint32_t *site;		/* and the others (most kernels have one site) */
	size_t n, cap;
} kern_acc;

/* sites[kernel][location] (§5.2), both levels insertion-ordered. */
typedef struct {
	kern_acc *k;
	size_t nk, capk;
	site_acc *s;
	size_t ns, caps;
	imap kmap, smap;
} sitestats;

void sitestats_free(sitestats *st);
/* Add kernels idx[0..n) of kt (their attribution must be resolved). */
void sitestats_add(sitestats *st, const kmtrace_t *kt, const size_t *idx, size_t n);
/* merge_site_stats (§5.3): add src into dst. */
void sitestats_merge(sitestats *dst, const sitestats *src);
/*
 * The same, taking src's memory when dst is empty (merging into nothing
 * gives a copy of src, to the last bit); src is left empty either way.
 */
void sitestats_merge_move(sitestats *dst, sitestats *src);

/* canonical id -> category, last write wins (§2.2). */
typedef struct {
	imap m;
	const char **cat;
	size_t n, cap;
} catmap;

void catmap_set(catmap *c, uint32_t canon, const char *cat);
const char *catmap_get(const catmap *c, uint32_t canon);	/* NULL if absent */
void catmap_free(catmap *c);

/* build_stage_payload (§5.4): entries in ascending byte order of name. */
void build_payload(const sitestats *st, const catmap *cats, payload_t *out);
/*
 * The same entries, in the same order, handed to fn one at a time and
 * freed after it returns: for a payload that is only written, never held
 * (issue 21).
 */
void build_payload_each(const sitestats *st, const catmap *cats,
    void (*fn)(void *ctx, const entry_t *e), void *ctx);

/*
 * sample_kernels_for_mapping (§5.5.2) of kernels idx[0..n) of kt: at most
 * 16 per canonical name, sorted by (ts, raw name).  Returns the count
 * written to out (room for n).
 */
size_t sample_kernels(const kmtrace_t *kt, const size_t *idx, size_t n, size_t *out);

/* ---- table.c: the passes over a trace and the records they write ---- */

extern long long km_limit;	/* --kernel-table-limit; <= 0 keeps all rows */
extern int km_formal_with_mapping;	/* --mapping: sites come from a graph-off trace */
extern kernel_map_t km_map;	/* the mapping map (§5.5), final before rows */

/*
 * Analyze one complete trace with at least one kernel: attribute its
 * kernels, merge the mapping statistics when `build_map`, and when
 * `formal` write its formal_stage site records and queue its rows.
 */
void process_trace(kmtrace_t *kt, int build_map, int formal);
/*
 * Without --mapping: build km_map's stage payloads from the merged mapping
 * statistics and write the mapping_stage site records, then the
 * mapping_global ones (§5.5), the global payload written entry by entry
 * and never held (km_map.global stays empty; issue 21).  Without
 * `hold_stages` (--sites-only: no rows to look up) the stage payloads are
 * written the same way and km_map stays empty.
 */
void finish_mapping(int hold_stages);
/* With --mapping: the mapping_stage and mapping_global site records of km_map. */
void write_mapping_sites(void);
/* Write the queued kernel_row records (km_map must be final) and drop them. */
void flush_pending(void);
/* Free the queue and km_map without writing. */
void table_free(void);

#endif
