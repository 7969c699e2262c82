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

/*
 * One complete trace, read in the reader's queue mode (trace.h, issue 30):
 * its kernels are those of the selected process, numbered from 0 in the
 * order trace_kernel_next gives them.
 */
typedef struct {
	struct trace *tr;
	const struct trace_reader *rd;	/* its reader: the names of py_* contexts */
	int sglang;			/* mapping framework is exactly sglang */
} kmtrace_t;

/* What the attribution gives one kernel (§4.6). */
struct kres {
	unsigned long long i;		/* the kernel's number */
	uint32_t loc, stack, op;
	int graph;			/* its launch call was a CUDA/HIP graph launch */
};

/*
 * Resolve (loc, stack, op) of the kernels numbered need[0..nneed)
 * (ascending), or of every kernel when need is NULL (§4.1-§4.6): the calls
 * matched by sorting kernels and calls by id and time and merging.
 * Returns a sort (xsort.h) of struct kres, one per kernel in number order,
 * which the caller reads and frees.
 */
struct xsort *attribute_kernels(kmtrace_t *kt, const unsigned long long *need, size_t nneed);

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
/* Add one kernel: its canonical name, attribution and duration. */
void sitestats_add(sitestats *st, uint32_t canon, const struct kres *a, double dur);
/* merge_site_stats (§5.3): add src into dst. */
void sitestats_merge(sitestats *dst, const sitestats *src);
/*
 * The same, taking src's memory when dst is empty (merging into nothing
 * gives a copy of src, to the last bit); src is left empty either way.
 */
void sitestats_merge_move(sitestats *dst, sitestats *src);

/* canonical id -> category, last write wins (§2.2); keys in first-set order. */
typedef struct {
	imap m;
	const char **cat;
	uint32_t *canon;
	size_t n, cap;
} catmap;

void catmap_set(catmap *c, uint32_t canon, const char *cat);
/* Set every entry of src into dst, in src's order: as if src's sets were made on dst. */
void catmap_merge(catmap *dst, const catmap *src);
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
 * sample_kernels_for_mapping (§5.5.2) of one stage group: at most 16
 * kernels per canonical name, at sample_position's places among that
 * name's kernels in record order, sorted by (ts, raw name, then name by
 * name in byte order).  A sampler is fed the group's kernels twice: first
 * each one's canonical name (sampler_count), then each one again in the
 * same order (sampler_pick); sampler_done returns the picks (their
 * numbers, *n of them; the caller frees them).
 */
struct sampler;
struct sampler *sampler_new(void);
void sampler_count(struct sampler *s, uint32_t canon);
void sampler_pick(struct sampler *s, uint32_t canon, unsigned long long i, double ts,
    uint32_t name);
unsigned long long *sampler_done(struct sampler *s, size_t *n);

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
