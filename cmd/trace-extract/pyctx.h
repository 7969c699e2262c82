/*
 * The Python context of a trace's CPU ops, launches and kernels, resolved
 * while trace-extract reads the trace, so that its Python frames (nine
 * events in ten of a stack-traced trace) never travel down the pipeline.
 *
 * The frames are kept aside as they come (spool.h: memory up to a limit,
 * then a temporary file), grouped by thread.  At the trace's end one sweep
 * per thread, over its frames in start order against the sorted query
 * times of its ops and launches, gives
 *   - kernel-map's location frame and stack of each op (at ts + min(1,
 *     dur / 2)) and launch (at ts), kernel-table.md §4.3;
 *   - overlap-sweep's scope chain of each op with an External id of its own
 *     and a positive duration (at ts), overlap.md §6.3;
 * and one sweep over all threads' frames by start, against the start times
 * of the overlap kernels, gives overlap-sweep's time-window chain of each,
 * overlap.md §6.5.  Each rule is the one the tool itself applies to frame
 * records (attr.c, srcmap.c), on the same frames in the same order, so the
 * results are the same.
 *
 * Memory: the queries wait in queues (xsort.h: a temporary file past a
 * fixed budget); when the trace has frames, the queries and results take a
 * few words per op, launch and kernel at the end (none without frames,
 * issue 30); the frames open at one time, fixed buffers; the frames of a thread whose
 * starts go backwards in the file (never seen in real traces) are sorted in
 * memory.  Names are ids of the trace's frame-name table; PY_NONE is none.
 */
#ifndef PYCTX_H
#define PYCTX_H

#include <stddef.h>
#include <stdint.h>

#define PY_NONE UINT32_MAX

struct pyctx;

struct pyctx *pyctx_new(void);
void pyctx_free(struct pyctx *pc);		/* NULL is a no-op */

/* The thread id of (pid, tid) as the records write them (Python str()). */
uint32_t pyctx_thread(struct pyctx *pc, const char *pid, size_t pn, const char *tid,
    size_t tn);

/* The id of a frame name (its text as the frame record would hold it). */
uint32_t pyctx_name(struct pyctx *pc, const char *s, size_t n);
const char *pyctx_name_str(const struct pyctx *pc, uint32_t id, size_t *n);
uint32_t pyctx_name_count(const struct pyctx *pc);
/* Does a result refer to this name (so that a frame_name record must define it)? */
int pyctx_name_used(const struct pyctx *pc, uint32_t id);

/* A python_function event, in file order.  Times in microseconds. */
void pyctx_frame(struct pyctx *pc, uint32_t thread, uint32_t name, double ts, double dur);

/*
 * Queries, numbered in call order per kind (the i-th cpu_op record is op i,
 * and so on).  `scopes`: the op has an External id of its own (its scope
 * chain is wanted when dur > 0).  Kernels: every kernel record, `overlap`
 * set on those the overlap detector accepts (only they get a window).
 */
void pyctx_op(struct pyctx *pc, uint32_t thread, double ts, double dur, int scopes);
void pyctx_launch(struct pyctx *pc, uint32_t thread, double ts);
void pyctx_kernel(struct pyctx *pc, double ts, int overlap);

/*
 * Before pyctx_resolve: no context for op i unless bit i of keep is set
 * (bit i % 8 of byte i / 8; a bit per pyctx_op call, links.h).  The ops no kernel is matched to are not
 * written (issue 30); their contexts, and the frame names only they use,
 * need not be found.
 */
void pyctx_drop_ops(struct pyctx *pc, const unsigned char *keep);

/* Run the sweeps; call once, after the trace's last event. */
void pyctx_resolve(struct pyctx *pc);

/* A list of frame-name ids (valid until pyctx_free). */
struct pylist {
	const uint32_t *v;
	size_t n;
};

/*
 * The results.  loc: the location frame or PY_NONE (then the stack is
 * empty too); stack: outermost first; scopes and window: in chain order.
 * band: NULL, or the JSON text of the window's candidates
 * ([[name id, ts, dur], ...]) when one starts or ends inside the
 * tolerance margin (triage-records(5), py_window_band).
 */
void pyctx_op_result(const struct pyctx *pc, size_t i, uint32_t *loc, struct pylist *stack,
    struct pylist *scopes);
void pyctx_launch_result(const struct pyctx *pc, size_t i, uint32_t *loc,
    struct pylist *stack);
void pyctx_kernel_result(const struct pyctx *pc, size_t i, struct pylist *window,
    const char **band, size_t *bandlen);

#endif
