/*
 * Site payloads: the kernel -> Python location attribution that kernel-map
 * builds (kernel-table.md §5.4) and that overlap-sweep and fuse-detect read.
 *
 * A payload is an ordered list of entries, one per canonical kernel name, in
 * ascending byte order of the name (§5.4).  An entry owns its sites; all
 * strings are heap copies owned by the entry (NULL means JSON null / none),
 * and texts that read the same may be one copy (entry_share_strings): a
 * site's location, display_location and stack, and the entry's
 * best_location with its first site's.  Treat them as read-only;
 * entry_free and payload_free release everything.
 */
#ifndef PAYLOAD_H
#define PAYLOAD_H

#include <stddef.h>

#include "json.h"
#include "sbuf.h"

typedef struct {
	char *location;			/* "" possible; never NULL */
	char *display_location;		/* stored field (§5.4 step 2) */
	char *top_cpu_op;		/* NULL: none */
	char *stack;			/* NULL: none */
	long long launches;
	double total_us;		/* round(total, 3) */
	double share_pct;		/* share_pct_within_kernel, round(.., 3) */
	int has_share;
} site_t;

typedef struct {
	char *kernel;			/* canonical name (the key) */
	char *category;
	char *best_location;		/* NULL when the member was absent */
	site_t *sites;
	size_t nsites;
} entry_t;

struct relax_ix;

typedef struct {
	entry_t *e;
	size_t n, cap;
	struct relax_ix *relax;		/* relaxed_lookup's index (relax.c), or NULL */
} payload_t;

/* Free every entry and the array; the payload becomes empty.  NULL is a no-op. */
void payload_free(payload_t *p);
/* Append a zeroed entry; the pointer is valid until the next payload_add. */
entry_t *payload_add(payload_t *p);
/* Free the entry's strings and sites and zero it.  NULL is a no-op. */
void entry_free(entry_t *e);
/*
 * Make a site's location, display_location and stack, and the entry's
 * best_location with its first site's texts, one heap copy where they
 * read the same (they mostly do: a million-kernel payload is a third
 * smaller; issue 21).  entry_free knows.
 */
void entry_share_strings(entry_t *e);
/* Deep copy into dst (dst's previous contents are not freed). */
void entry_copy(entry_t *dst, const entry_t *src);

/*
 * Parse an entry from a JSON object (the "entry" member of a kernel_row, or
 * a "site" record): members kernel, category, best_location, sites[].
 * Missing category becomes "other"; a null share clears has_share.
 * Returns 0, or -1 when the object is not shaped like an entry (no object,
 * or no "kernel" string); call entry_free in both cases.
 */
int entry_from_json(const json_doc *d, int obj, entry_t *e);

/* Append the entry as a JSON object (the shape entry_from_json reads). */
void entry_to_json(const entry_t *e, sbuf *out);
/* Append only its "sites" array. */
void entry_sites_to_json(const entry_t *e, sbuf *out);

/*
 * site_display_location (kernel-table.md §4.7 display_location): the
 * site's location when it is framework code and not low-signal, else the
 * preferred part of its stack, else the location ("unresolved" if empty).
 */
void site_display_location(const site_t *s, sbuf *out);

/*
 * best_site_summary (kernel-table.md §5.8): the kernel table's location and
 * CPU-op cells for an entry (NULL entry: "unresolved", "-"), unescaped,
 * joined with "<br>".  Both sbufs are reset first.  Not under --compat
 * reference, its two sites are listed by share and a share under 1% reads
 * "<1%" (docs/deviations.md C22).
 */
void best_site_summary(const entry_t *e, sbuf *loc, sbuf *cpu_op);

/*
 * relaxed_lookup (kernel-table.md §5.7.3 with §5.7.4, relax.c): find the
 * entry for `name` in a payload (exact, prefix/substring, long-name
 * prefix, alias); exactly the result of scanning every key in payload
 * order.  Returns a pointer into p (valid while p is unchanged), or NULL.
 * Exact hits are found by binary search when p is in ascending byte order;
 * the first miss builds an index in p (p->relax, about six bytes per key
 * byte), so each later lookup costs about the name's length instead of a
 * pass over every key (issue 21).  Add and order a payload's entries
 * before its first lookup: payload_add drops the index.  Worst cases left
 * linear in the keys: a name whose every 4-byte piece is common in the
 * keys yet occurs in none of them, and long names sharing 64 or more
 * compact characters with many keys that fail the 40 % rule.
 */
const entry_t *relaxed_lookup(const payload_t *p, const char *name);

/* Free an index of relaxed_lookup; NULL is a no-op. */
void relax_ix_free(struct relax_ix *x);

/*
 * A mapping kernel map (§5.5): stage payloads plus the global payload.
 * lookup_kernel_map_entry (§5.7.2) tries the stage aliases, then global.
 */
typedef struct {
	char **stage_names;
	payload_t *stages;
	size_t nstages;
	payload_t global;	/* use kernel_map_global(): it may be a stage's */
	size_t same_stage;	/* 1 + the stage whose entries global repeats, 0: none */
	size_t same_n;		/* while reading: how many it has repeated so far */
} kernel_map_t;

/* Free all payloads and names; the map becomes empty.  NULL is a no-op. */
void kernel_map_free(kernel_map_t *m);
/*
 * The payload of `stage`, appended empty when absent and `create` is set
 * (else NULL).  Appending moves the stage array: earlier pointers die.
 */
payload_t *kernel_map_stage(kernel_map_t *m, const char *stage, int create);
/*
 * Add an entry of a mapping_global site record to m, taking e's contents
 * (e is left empty).  kernel-map writes mapping_global after the stages,
 * in the same order; while its entries repeat those of one stage already
 * read, they are compared and dropped instead of held twice (a trace with
 * one stage: a million-kernel map held once; issue 21).  Call
 * kernel_map_end_global when the records are read, before sorting.
 */
void kernel_map_add_global(kernel_map_t *m, entry_t *e);
/*
 * End the reading of mapping_global entries: when they repeated a whole
 * stage, that stage's payload serves as the global one from now on;
 * when only a part, the repeated entries are copied into global.
 */
void kernel_map_end_global(kernel_map_t *m);
/* The global payload: m->global, or the stage payload it repeats. */
payload_t *kernel_map_global(kernel_map_t *m);
/*
 * Do lookups for stages a and b try the same payloads in the same order
 * (their aliases differ only in stages m lacks or holds empty), so that
 * every name finds the same entry for both?  1 or 0.
 */
int kernel_map_same_lookup(const kernel_map_t *m, const char *a, const char *b);
/* Returns a pointer into m, or NULL. */
const entry_t *lookup_kernel_map_entry(const kernel_map_t *m, const char *stage,
    const char *name);

#endif
