/*
 * External merge sort of fixed-size records (issue 30): a trace's kernels,
 * launches and their joins can outgrow any memory budget, so records are
 * gathered in a buffer, each full buffer is sorted and written as a run to
 * a spool (spool.h: an unlinked temporary file in $TMPDIR), and reading
 * merges the runs.  Memory: the buffer (TRIAGE_SPOOL_MEM, 4 MiB by
 * default, twice that while it is sorted) and a read buffer per run while
 * merging, whatever the number of records.
 *
 * The sort is stable: records that compare equal come out in the order
 * they were added.  A NULL comparator keeps that order: a first-in,
 * first-out queue of any length in bounded memory.
 *
 * Errors: a temporary file that cannot be made, written or read back ends
 * the run with exit 1, naming the directory (spool.h).
 */
#ifndef XSORT_H
#define XSORT_H

#include <stddef.h>

struct xsort;

/* Order of two records: negative, 0 or positive, as for qsort_r. */
typedef int (*xsort_cmp)(const void *a, const void *b, void *ctx);

/*
 * Comparators for records that begin with their key: a long long, an
 * unsigned long long or a double, ascending (ctx unused).
 */
int xsort_by_ll(const void *a, const void *b, void *ctx);
int xsort_by_ull(const void *a, const void *b, void *ctx);
int xsort_by_double(const void *a, const void *b, void *ctx);

/*
 * A new, empty sort of records of `size` bytes (at least 1), ordered by
 * cmp (NULL: insertion order) with ctx passed through.  Owned by the
 * caller, freed with xsort_free.
 */
struct xsort *xsort_new(size_t size, xsort_cmp cmp, void *ctx);
void xsort_free(struct xsort *x);		/* NULL is a no-op */

/*
 * Add a copy of one record.  Only before the first xsort_next: adding
 * after reading began is an internal error (exit 1).
 */
void xsort_add(struct xsort *x, const void *rec);

/* Records added so far. */
unsigned long long xsort_count(const struct xsort *x);

/*
 * Runs written to the temporary file so far (0: every record in memory; a
 * queue's are one).
 */
size_t xsort_runs(const struct xsort *x);

/*
 * Before the first xsort_next: when no record has gone to a run, the
 * records in the order they were added (*n of them), which the caller may
 * reorder in place (a selection instead of a sort, for a percentile);
 * NULL when some are on disk.  The sort is to be read or freed after.
 */
void *xsort_memory(struct xsort *x, size_t *n);

/*
 * The next record in order, or NULL after the last.  The first call ends
 * the adding.  The record is the sort's, valid until the next call (or
 * xsort_rewind, xsort_free).
 */
const void *xsort_next(struct xsort *x);

/* Read from the first record again (a second pass in the same order). */
void xsort_rewind(struct xsort *x);

#endif
