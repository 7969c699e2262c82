/*
 * The per-trace reader: collects one trace's records (from its "trace"
 * record to its "stats" record, triage-records(5)) into typed arrays,
 * interns their strings, applies the trace's correlation map once, and
 * hands the finished trace to the tool.  Lines the tool does not collect go
 * to a callback and, unless consumed, to stdout unchanged.
 *
 * Every string is an id in the caller's string table (strtab.h); NOSTR
 * marks an absent one.  Threads are dense ids for (pid, tid) pairs, the
 * same for the whole run.  Times are microseconds as in the trace.  The
 * trace and its arrays belong to the reader and are reset after on_trace
 * returns, unless the tool takes them with trace_take().
 */
#ifndef TRACE_H
#define TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "imap.h"
#include "rec.h"
#include "sbuf.h"
#include "strtab.h"

#define NOSTR UINT32_MAX

/* Where an event's External id came from. */
enum { EXT_NONE, EXT_OWN, EXT_CORR };

/* A "kernel" record: GPU work (kernel, memcpy, memset, ...). */
struct tkernel {
	double ts, dur;
	uint32_t name, cat, thread;
	uint32_t stream, stage;		/* NOSTR when the record has none */
	uint32_t rord;			/* its place among the trace's kernel records, from 0 */
	long long ext, corr;
	unsigned char ext_src;		/* EXT_*: own, or resolved through the corr map */
	unsigned has_corr : 1, overlap : 1, sel : 1;
	uint32_t py_window, py_window_band;	/* py_* JSON texts (NOSTR: absent) */
	uint32_t shape;			/* op_shape id (NOSTR: absent; issue 28) */
	double shape_frac;		/* its share of the op's work (1 when absent) */
	long long bytes;		/* a memcpy's or memset's args.bytes (-1: absent) */
};

/* What a launch submitted (its kind member, issue 25); cpu ops are LAUNCH_KERNEL. */
enum { LAUNCH_KERNEL, LAUNCH_MEMCPY, LAUNCH_MEMSET, LAUNCH_OTHER };

/* A "cpu_op" or "launch" record. */
struct tcall {
	double ts, dur;
	uint32_t name, thread;
	long long ext, corr;
	unsigned char ext_src;		/* EXT_*; launches are never resolved */
	unsigned char kind;		/* LAUNCH_*: a launch's kind */
	unsigned has_corr : 1;
	uint32_t py_loc;		/* frame_name id (NOSTR: absent) */
	uint32_t py_stack, py_scopes;	/* py_* JSON texts (NOSTR: absent) */
};

/* A "frame" record (python_function). */
struct tframe {
	double ts, dur;
	uint32_t name, thread;
};

/* An "annotation" record. */
struct tannot {
	double ts, dur;
	uint32_t name, cat, thread;
	uint32_t stage;			/* NOSTR when the name implies none */
	long long ext;
	unsigned has_ext : 1;
};

/* A "thread_name" record. */
struct tthreadname {
	uint32_t thread, name;
};

struct trace {
	long long t;
	uint32_t role, path, stage;	/* stage: from the path (extend, decode, all) */
	long long rank;
	int has_rank;
	long long world_size;		/* distributedInfo's, when has_world */
	int has_world;
	/*
	 * The integer trace-extract subtracted from every ts of the trace
	 * (time_base_us, issue 25): an absolute time is ts + time_base.
	 */
	long long time_base;
	uint32_t capture_flags;		/* the trace record's capture_flags JSON text, or NOSTR */
	int py_context;			/* records carry py_* contexts, not frames */
	imap pyname;			/* frame_name id -> name */
	struct tkernel *k;
	size_t nk, capk;
	struct tcall *op, *ln;		/* cpu ops, launches */
	size_t nop, capop, nln, capln;
	struct tcall *sy;		/* "sync" records: blocking synchronize calls */
	size_t nsy, capsy;
	struct tframe *fr;
	size_t nfr, capfr;
	struct tannot *an;
	size_t nan, capan;
	struct tthreadname *tn;
	size_t ntn, captn;
	imap corr;			/* correlation -> External id ("corr" records) */
	struct rec_stats stats;		/* its spans point into stats_line */
	char *stats_line;
	/*
	 * Queue mode (trace_ops.queue, issue 30): the kernels, CPU ops,
	 * launches and syncs wait in queues of struct tkernel and struct
	 * tcall (xsort.h: a temporary file past a fixed budget) instead of the
	 * arrays, which stay empty; nk, nop, nln and nsy count them (nk the
	 * kernels queued: with sel_only, at least those trace_kernel_next
	 * gives, which leaves out the unselected among the late-staged).  The
	 * corr records are in cq; read the kernels with trace_kernel_next and
	 * the CPU ops with trace_op_next, which give them the map's External
	 * ids.
	 */
	struct xsort *kq, *oq, *lq, *sq;
	struct xsort *cq;		/* struct tcorr by correlation (the later entry last) */
	struct xsort *kx, *ox;		/* struct tkext: the map's ids of kernels and ops, by index */
	struct xsort *rq;		/* struct trun: the kernel_stages runs, in order */
	int q_sel_only;			/* trace_kernel_next leaves out the kernels not sel */
	/*
	 * sel_only: the pid and tid, as text, of each late kernel that waits
	 * for its sel to be made a thread (trace.c lazy_put), in kernel order
	 */
	struct spool *qlazy;
	unsigned long long qlazysize;	/* bytes in it */
	sbuf qlazybuf;			/* read back a block at a time: */
	unsigned long long qlazyat;	/* the offset qlazybuf starts at */
	struct trace_reader *qr;	/* the reader, which makes the threads */
};

/* A run of kernel records' stage and sel (kernel_stages), in queue mode. */
struct trun {
	unsigned long long from, n;	/* kernel record ordinals [from, from + n) */
	uint32_t stage;			/* NOSTR for null */
	int sel;
};

/* A corr record, in queue mode. */
struct tcorr {
	long long corr, ext;
};

/* A kernel's External id from the corr map, in queue mode. */
struct tkext {
	unsigned long long k;		/* the kernel's index among those collected */
	long long ext;
};

/* Free a trace's arrays and strings of its own; the struct becomes empty. */
void trace_free(struct trace *tr);

struct trace_reader;

/*
 * What a tool sets before reading.  Type masks are TR_MASK(type) bits.
 *   collect   types stored in the trace (kernel, cpu_op, launch, sync, frame,
 *             annotation, thread_name, corr); trace and stats records are
 *             always read
 *   consume   types not copied to stdout
 *   pass      copy lines to stdout (those not consumed)
 *   keep      called with each decoded record of a collected type (a
 *             struct rec_<type>); returns 0 to drop it.  NULL keeps all.
 *   repeat_t  a stream may hold traces of one t (rank-skew reads the ranks'
 *             streams one after another); else a trace record whose t came
 *             earlier in the same stream ends the run with exit 1
 *   sel_only  collect only the kernels of the analyzed GPU process (sel),
 *             whether their records say so or the trace's kernel_stages
 *             records do; keep is called first, so it sees them all
 *   on_trace  the trace is complete (its stats record read, the corr map
 *             applied): called before the stats line is copied
 *   on_line   every line of a type not collected, before it is copied
 *   queue     kernels, CPU ops, launches and syncs go to queues, not
 *             arrays (struct trace, issue 30): memory independent of their
 *             number; the kernel_stages runs too, which trace_kernel_next
 *             applies (and with sel_only, leaves out the kernels not sel)
 *
 * Stages given late (trace-stage --late-stages, issue 30): kernel records
 * without a stage member are collected as they come, and the trace's
 * kernel_stages records, which cover every kernel record of the trace in
 * stream order, set each one's stage and sel before on_trace; a kernel
 * dropped by keep still counts in that order.  A kernel_stages record that
 * does not follow on the last one, covers more kernel records than came,
 * or a trace whose kernel_stages cover fewer than all, ends the run with
 * exit 1.  A tool's keep sees the kernel before its stage is known.  Such
 * kernels also come without the External ids the corr map gives them
 * (trace-stage's rewrite wrote those): the reader reads the trace's corr
 * records for them whatever the tool collects, and passes those records on
 * even when the tool consumes them, for the filters after it.
 */
#define TR_MASK(type) (1u << RT_##type)

struct trace_ops {
	unsigned collect, consume;
	int pass;
	int sel_only;
	int repeat_t;
	int queue;
	void *ctx;
	int (*keep)(void *ctx, struct trace_reader *r, enum rec_type t, const void *rec);
	void (*on_trace)(void *ctx, struct trace_reader *r, struct trace *tr);
	void (*on_line)(void *ctx, struct trace_reader *r, enum rec_type t);
};

struct trace_reader {
	struct trace_ops ops;
	strtab *str;			/* the caller's; every id refers to it */
	rec_reader rd;			/* the line being read (for on_line) */
	struct trace tr;
	int open;			/* a trace record came, its stats not yet */
	long long ntraces;		/* traces completed so far */
	/* private: the thread table */
	imap thread_ix;
	uint32_t *thr_pid, *thr_tid;
	size_t nthr, capthr;
	sbuf lastpid, lasttid;
	uint32_t lastthread;
	uint32_t last[4];		/* the last id of each repeated member (trace.c LAST_*) */
	unsigned char *pyok;		/* per string id: 1 a checked id list, 2 a checked band */
	size_t cappyok;
	imap seen_t;			/* private: the t of each trace of the stream read */
	imap kref;			/* private: a kernel name_ref's string id + 1, this stream */
	/* private: kernel_stages (the ordinals of the open trace's kernel records) */
	size_t nkrec;			/* kernel records of the open trace so far */
	uint32_t *kord;			/* ordinal of each collected kernel, once one was dropped */
	/*
	 * sel_only and a kernel without its stage: its pid and tid, as text,
	 * until its sel is known (the unselected are never made threads: a
	 * GPU process per kernel made every sel_only tool intern them all)
	 */
	sbuf lazy;
	size_t *lazyoff;		/* per waiting kernel: its texts' offset in lazy */
	size_t caplazy, nlazy;
	sbuf klazypid, klazytid;	/* the last late kernel's pid and tid */
	int klazy_valid;
	size_t capkord;
	size_t kst_next;		/* ordinals the trace's kernel_stages covered so far */
	size_t kst_cursor;		/* the collected kernel the next ordinal maps to, at most */
	int kst_seen;			/* the trace has kernel_stages records */
	int late;			/* a collected kernel came without its stage */
	struct xsort *kneed, *oneed;	/* queue mode: struct tkext (index, correlation) by correlation */
};

/* Prepare a reader; str is the caller's string table (not owned). */
void trace_reader_init(struct trace_reader *r, strtab *str, const struct trace_ops *ops);
void trace_reader_free(struct trace_reader *r);

/*
 * Read one record file or stream to its end (name is for messages).  Dies
 * with exit 1 on a malformed record, a record of a collected type outside
 * its trace, or input that ends inside a trace.
 */
void trace_read(struct trace_reader *r, FILE *fp, const char *name);

/*
 * Walk a kernel_stages record's runs (triage-records(5)) for a tool that
 * reads kernel records itself: checks that the record begins at `covered`
 * (the ordinals the trace's earlier kernel_stages covered) and reaches no
 * further than nkrec (the trace's kernel records so far), then calls fn
 * for each run with its ordinals [from, from + n), its stage (NULL for
 * null; valid during the call) and sel (0 or 1).  Returns the ordinals
 * covered after it.  A record that breaks these rules ends the run with
 * exit 1 and the reader's name:line.
 */
size_t trace_stage_runs(rec_reader *rd, const struct rec_kernel_stages *x, size_t covered,
    size_t nkrec, void (*fn)(void *ctx, size_t from, size_t n, const char *stage, int sel),
    void *ctx);

/*
 * Queue mode: the trace's collected kernels in record order, each with its
 * External id from the corr map when it has none of its own (as apply_corr
 * gives the arrays) and the stage and sel of the kernel_stages run that
 * covers it, one at a time.  trace_kernel_rewind starts (again)
 * from the first; trace_kernel_next returns the next, valid until the
 * following call, or NULL after the last.  Both only inside on_trace.
 */
struct tkcursor {
	struct trace *tr;
	unsigned long long i;		/* queue index of the next kernel */
	int have_x;			/* x holds the next map entry */
	struct tkext x;
	int have_run;			/* run holds the run at or after the last kernel */
	struct trun run;
	unsigned long long loff;	/* the next pid and tid text in the trace's qlazy */
	struct tkernel k;
};
void trace_kernel_rewind(struct trace *tr, struct tkcursor *c);
const struct tkernel *trace_kernel_next(struct tkcursor *c);
/* Does trace_kernel_next give any kernel?  (It reads up to the first.) */
int trace_kernel_any(struct trace *tr);

/* The same for the CPU ops, in record order, with the map's External ids. */
struct tocursor {
	struct trace *tr;
	unsigned long long i;
	int have_x;
	struct tkext x;
	struct tcall c;
};
void trace_op_rewind(struct trace *tr, struct tocursor *c);
const struct tcall *trace_op_next(struct tocursor *c);

/* The (pid, tid) strings of a thread id. */
uint32_t trace_thread_pid(const struct trace_reader *r, uint32_t thread);
uint32_t trace_thread_tid(const struct trace_reader *r, uint32_t thread);
uint32_t trace_thread_count(const struct trace_reader *r);

/* Intern a span into the reader's string table. */
uint32_t trace_intern(struct trace_reader *r, struct rstr s);

/*
 * Move the current trace out of the reader (from on_trace): the caller
 * owns *out and frees it with trace_free.
 */
void trace_take(struct trace_reader *r, struct trace *out);

/*
 * Python contexts (triage-records(5), trace py_context).  The py_* members
 * are kept as read: py_loc as its frame_name id, the lists as the interned
 * text of their JSON array, checked when first read (an array of ids, the
 * band an array of [id, ts, dur]; anything else is a malformed record).
 * frame_name records of an open trace are always read into tr->pyname and
 * pass like any record.  These turn them into names; an id the trace does
 * not define ends the run (exit 1, naming the stream and the trace).
 */
/* The name (string id) of frame_name `id`. */
uint32_t trace_py_name(const struct trace_reader *r, const struct trace *tr, uint32_t id);
/* The names of an id list (NOSTR: none): at most max into out; returns the count. */
size_t trace_py_names(const struct trace_reader *r, const struct trace *tr, uint32_t list,
    uint32_t *out, size_t max);

/* One entry of a py_window_band: a scope open around a kernel's start. */
struct tpyband {
	uint32_t name;			/* string id */
	double ts, dur;
};
/* The entries of a band (NOSTR: none), in a heap array the caller frees; *n their count. */
struct tpyband *trace_py_band(const struct trace_reader *r, const struct trace *tr,
    uint32_t band, size_t *n);

#endif
