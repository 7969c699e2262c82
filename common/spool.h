/*
 * A spool: bytes appended once and read back later, held in memory up to a
 * limit and beyond it in a temporary file (in $TMPDIR, else /tmp), unlinked
 * as soon as it is made so that nothing is left behind whatever happens.
 * trace-extract keeps a trace's records and Python frames in spools until
 * the trace's end, when the frames' context of each record is known; the
 * external sort (xsort.h) keeps its runs in one.
 */
#ifndef SPOOL_H
#define SPOOL_H

#include <stddef.h>
#include <stdio.h>

struct spool;

/*
 * A new, empty spool.  The memory limit is TRIAGE_SPOOL_MEM bytes when that
 * is set in the environment (tests make it small to exercise the file),
 * else 4 MiB.
 */
struct spool *spool_new(void);

/* A spool whose memory limit is at most max bytes (0: the default). */
struct spool *spool_new_limit(size_t max);

/* That memory limit, in bytes (other buffers of the same data are sized by it too). */
size_t spool_limit(void);
void spool_free(struct spool *sp);		/* NULL is a no-op */

/*
 * Append n bytes; returns the offset they start at.  A temporary file that
 * cannot be made or written ends the run (exit 1, naming the directory and
 * the reason).
 */
unsigned long long spool_append(struct spool *sp, const void *p, size_t n);

/* Bytes appended so far. */
unsigned long long spool_size(const struct spool *sp);

/* Copy bytes [off, off + n) back into buf; they must have been appended.  Dies like spool_append. */
void spool_read(struct spool *sp, unsigned long long off, void *buf, size_t n);

/*
 * A write-only stdio stream that appends to sp (fopencookie), for the record
 * writer (rec_output); fclose() it before reading the spool back.
 */
FILE *spool_stream(struct spool *sp);

#endif
