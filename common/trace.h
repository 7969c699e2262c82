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
	long long ext, corr;
	unsigned char ext_src;		/* EXT_*: own, or resolved through the corr map */
	unsigned has_corr : 1, overlap : 1, sel : 1;
};

/* A "cpu_op" or "launch" record. */
struct tcall {
	double ts, dur;
	uint32_t name, thread;
	long long ext, corr;
	unsigned char ext_src;		/* EXT_*; launches are never resolved */
	unsigned has_corr : 1;
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
	struct tkernel *k;
	size_t nk, capk;
	struct tcall *op, *ln;		/* cpu ops, launches */
	size_t nop, capop, nln, capln;
	struct tframe *fr;
	size_t nfr, capfr;
	struct tannot *an;
	size_t nan, capan;
	struct tthreadname *tn;
	size_t ntn, captn;
	imap corr;			/* correlation -> External id ("corr" records) */
	struct rec_stats stats;		/* its spans point into stats_line */
	char *stats_line;
};

/* Free a trace's arrays and strings of its own; the struct becomes empty. */
void trace_free(struct trace *tr);

struct trace_reader;

/*
 * What a tool sets before reading.  Type masks are TR_MASK(type) bits.
 *   collect   types stored in the trace (kernel, cpu_op, launch, frame,
 *             annotation, thread_name, corr); trace and stats records are
 *             always read
 *   consume   types not copied to stdout
 *   pass      copy lines to stdout (those not consumed)
 *   keep      called with each decoded record of a collected type (a
 *             struct rec_<type>); returns 0 to drop it.  NULL keeps all.
 *   on_trace  the trace is complete (its stats record read, the corr map
 *             applied): called before the stats line is copied
 *   on_line   every line of a type not collected, before it is copied
 */
#define TR_MASK(type) (1u << RT_##type)

struct trace_ops {
	unsigned collect, consume;
	int pass;
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

#endif
