/*
 * The links between a trace's records that trace-extract resolves at the
 * trace's end (issue 30): the correlation map (correlation -> External id,
 * written as corr records for the kernels and CPU ops that carry a
 * correlation but no External id), which copy and set calls launched GPU
 * work of the trace, and which CPU ops a kernel is matched to.
 *
 * The events come in any order, so each link is a join of two sets known
 * only at the end.  They are joined by sorting (xsort.h: runs in a
 * temporary file past a fixed budget) and merging, never by tables in
 * memory: a trace of ten million kernels and launches costs the same few
 * megabytes as one of a thousand, and a bit per launch and per CPU op for
 * the answers.  Every id is the trace's own integer (args.correlation,
 * args["External id"]).
 */
#ifndef LINKS_H
#define LINKS_H

#include <stddef.h>

struct links;

struct links *links_new(void);
void links_free(struct links *l);		/* NULL is a no-op */

/*
 * The events, in file order.
 *
 * links_pair: an event with both a correlation and an External id; the
 * map's entry for the correlation is the last such event's.
 * links_need: a kernel or CPU op record with a correlation and no External
 * id of its own: a corr record is written for it when the map has one.
 * links_kernel: a kernel record; gpu: its correlation counts as GPU work
 * reached (not under --compat reference); has_ext: it carries its own id.
 * links_zero: a GPU item skipped for a dur of 0, with its correlation.
 * links_launch: the next launch record; copy: a copy's or set's call
 * (written only when a GPU item carries its correlation).
 * links_op: the next cpu_op record.
 */
void links_pair(struct links *l, long long corr, long long ext);
void links_need(struct links *l, long long corr);
void links_kernel(struct links *l, int has_corr, long long corr, int gpu, int has_ext,
    long long ext);
void links_zero(struct links *l, long long corr);
void links_launch(struct links *l, long long corr, int copy);
void links_op(struct links *l, int has_ext, long long ext, int has_corr, long long corr);

/*
 * Join everything, once, after the last event.  all_ops: every CPU op is
 * written (--all-ops).  Then the answers below hold.
 */
void links_resolve(struct links *l, int all_ops);

/*
 * Launch record i (0-based, in order): written?  A kernel launch always
 * is; a copy's or set's call when a GPU item carries its correlation.
 * links_launch_zero: a kernel launch whose GPU items were all skipped for
 * a dur of 0 (the stats record's launch_zero_dur).
 */
int links_launch_keep(const struct links *l, size_t i);
int links_launch_zero(const struct links *l, size_t i);
/* How many copy and set calls are written. */
unsigned long long links_copies_kept(const struct links *l);

/*
 * CPU op record i: written?  Yes when its External id, its own or the one
 * its correlation maps to, is one a kernel record carries (its own, or
 * through its correlation), or with all_ops.  links_op_bits: the same as a
 * bitmap (op i is bit i % 8 of byte i / 8), NULL when every op is written.
 */
int links_op_keep(const struct links *l, size_t i);
const unsigned char *links_op_bits(const struct links *l);

/*
 * Write the corr records of trace t (the record output, rec.h): one per
 * distinct needed correlation the map has, by correlation ascending.
 */
void links_put_corrs(struct links *l, long long t);

#endif
