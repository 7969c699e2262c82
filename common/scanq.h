/*
 * The trace-event scanner on a thread of its own (issue 30).
 *
 * scan_run_members with keys finds and tokenizes each event (about a third
 * of trace-extract's time on a kernel-dense trace) before its callback
 * reads it.  Here the scan runs on a second thread, which copies each event
 * (its text, its tokens and its selection) into a bounded queue of blocks;
 * the calling thread takes them in order and calls the callbacks, so the
 * two halves of the work overlap on two cores while every callback sees
 * what, and in the order, it would have seen from scan_run_members.
 */
#ifndef SCANQ_H
#define SCANQ_H

#include "json.h"
#include "scan.h"
#include "zio.h"

/*
 * scan_run_members(z, name, keys, sfn, NULL, members, ...) with the scan on
 * a thread of its own; keys and sfn are required (the selecting scan).
 * sfn and members->fn run on the calling thread, one at a time, in document
 * order, with docs valid only during the call, as there.  z must not be
 * read by the caller until this returns: *raw_off (may be NULL) is, during
 * each callback, the compressed input consumed (zio_raw_offset) as of at
 * least that event, for progress.  Returns as scan_run_members; errbuf
 * holds the scan's message on SCAN_ERROR.  A callback's non-zero return
 * stops the callbacks at once (the scan thread stops at its next event, so
 * st may count events past it) and SCAN_STOPPED is returned.  The queue
 * holds at most SCANQ_BLOCKS blocks of SCANQ_BLOCK_BYTES; an event larger
 * than a block is not copied but handed over where the scanner holds it,
 * the scan thread waiting for its callback, so the memory of large events
 * is the one-thread scan's.  A die() on the scan thread (memory ran out)
 * reaches the calling thread after the events before it: it dies there
 * with the same message and code (err_thread_die).  With TRIAGE_NO_THREADS set
 * in the environment (zio.h), or when no thread can be made, the scan runs
 * on the calling thread instead, with the same results.
 */
#define SCANQ_BLOCKS 8
#define SCANQ_BLOCK_BYTES (256u << 10)

int scanq_run_members(zio *z, const char *name, const struct json_keys *keys,
    scan_select_fn sfn, const struct scan_members *members, void *ctx, struct scan_stats *st,
    char *errbuf, size_t errlen, unsigned long long *raw_off);

#endif
