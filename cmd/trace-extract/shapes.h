/*
 * The recorded input shapes of the CPU ops that launch GPU work (issue 28):
 * a record_shapes profile writes "Input Dims", "Input type" and "Concrete
 * Inputs" on every CPU op, and kernel-roofline needs them only for the ops
 * that launched a kernel.  This module keeps every op aside as it comes
 * (spool.h: a fixed-size entry per op, and the shape text of those that
 * have one), and at the trace's end decides which op launched each kernel:
 *
 *   kernel --correlation--> launch --> the innermost CPU op on the launch's
 *   thread whose span contains the launch and whose External id is the
 *   launch's (Kineto's link since PyTorch 1.10; kernel-map's join,
 *   kernel-table.md §4.2); when no op with that id contains the launch, the
 *   innermost op that contains it (older Kineto wrote the correlation id as
 *   the launch's External id, so the ids do not link, but the nesting does).
 *
 * CUDA-graph launches replay captured kernels of many ops: theirs get no
 * op.  Each distinct (op name, dims, types, concrete inputs) of an op that
 * launched a kernel becomes an op_shape record; each kernel gets that
 * record's id and its share of the op's work (its duration over the op's
 * compute kernels' summed duration; a memcpy or memset of the op gets no
 * share), triage-records(5).
 *
 * Memory: ops and their text stay in spools (memory up to the spool
 * limit, then a temporary file), read back sequentially three times at
 * the trace's end; launches and kernels wait in queues (xsort.h) and take
 * a few words each in memory at the end only when some op recorded its
 * shapes (issue 30).  Threads are the
 * caller's dense ids (pyctx_thread).  Times are microseconds.
 */
#ifndef SHAPES_H
#define SHAPES_H

#include <stddef.h>
#include <stdint.h>

#include "rec.h"

struct shapes;

struct shapes *shapes_new(void);
void shapes_free(struct shapes *sh);		/* NULL is a no-op */

/*
 * A cpu_op event, in file order.  args: the text of its args object (valid
 * JSON, as the scanner accepted it), NULL or empty when it has none; name:
 * the op's name as its record holds it.
 */
void shapes_op(struct shapes *sh, uint32_t thread, double ts, double dur, int has_ext,
    long long ext, const char *name, size_t namelen, const char *args, size_t argslen);

/* A launch record (graph: a CUDA/HIP graph launch, whose kernels get no op). */
void shapes_launch(struct shapes *sh, uint32_t thread, double ts, long long corr, int has_ext,
    long long ext, int graph);

/*
 * A kernel record, in record order.  copy: a memcpy or memset, which gets
 * the op but no share of its work (its own bytes model it).
 */
void shapes_kernel(struct shapes *sh, int has_corr, long long corr, double dur, int copy);

/*
 * Resolve every kernel's op and write the op_shape records of trace t (to
 * the record output).  Call once, after the trace's last event.
 */
void shapes_resolve(struct shapes *sh, long long t);

/*
 * Kernel i's op_shape id and share of its op's work; returns 0 (and
 * leaves them alone) when it has none.
 */
int shapes_kernel_result(const struct shapes *sh, size_t i, uint32_t *id, double *frac);

/* The compact form of an Input Dims/type/Concrete Inputs value (for tests and the fuzz harness). */
int shapes_compact(const char *p, size_t n, sbuf *out);

#endif
