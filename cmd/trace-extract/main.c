/*
 * trace-extract: read torch.profiler (Kineto) Chrome-trace files, plain or
 * gzip, in one streaming pass and write the triage record stream
 * (triage-records(5)): kernels, CPU ops and launches with the Python code
 * around them (pyctx.h; with --frames, the Python frames instead),
 * annotations, thread names, the correlation map and per-trace statistics.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "err.h"
#include "extract.h"
#include "imap.h"
#include "json.h"
#include "links.h"
#include "num.h"
#include "opt.h"
#include "progress.h"
#include "pyctx.h"
#include "pyscope.h"
#include "rec.h"
#include "reslimit.h"
#include "rules.h"
#include "scan.h"
#include "scanq.h"
#include "shapes.h"
#include "spool.h"
#include "strtab.h"
#include "text.h"
#include "xalloc.h"
#include "zio.h"

static const char *role = "single";
static const char *framework = "auto";
static const char *fallback;
static int progress_flag;		/* 1 force on, -1 off, 0 auto */
static const char *progress_label;	/* --progress-label: names the work in progress lines */
static int strict;
static int python_ids;		/* frames carry python_id / parent_id */
static int name_refs;		/* --name-refs: long kernel names in kernel_name records */
static int frame_records;	/* --frames: every frame a record, no Python contexts */
static int all_ops;		/* --all-ops: every CPU op a record */
static int no_windows;		/* --no-windows: no kernel's py_window */
static struct ranksel ranksel;	/* --all-ranks, --rank: which ranks of a directory */
static int list_ranks;		/* --list-ranks: print the ranks, write no records */

static int extract_operand(const char *arg, int *tindex);
static int print_ranks(const char *arg);
static void rank_note(const struct tlist *traces);
static void dropped_note(const char *dir, const struct dropped *d);
static void put_model(const char *json, const char *const *paths, size_t npaths,
    const struct modelhint *first);
struct trace_state;
static void feed_hints(struct trace_state *s, const json_doc *d, const int *idx);
static void input_at_exit(void);

enum { O_FALLBACK = OPT_LONG, O_NO_PROGRESS, O_PYTHON_IDS, O_ALL_RANKS, O_RANK, O_LIST_RANKS,
	O_PROGRESS_LABEL, O_CAPTURED, O_FRAMES, O_MODEL, O_ALL_OPS, O_NO_WINDOWS, O_NAME_REFS };

static const char *model_opt;	/* --model: the model, when server args do not say */

static const struct opt opts[] = {
	{ "all-ops", O_ALL_OPS, NULL, "every CPU op a record, not only those a kernel is matched to" },
	{ "all-ranks", O_ALL_RANKS, NULL, "every rank's traces of a profile directory, not the lowest rank's" },
	{ "framework", 'f', "NAME", "auto (default), sglang, vllm, trtllm or tokenspeed" },
	{ "no-windows", O_NO_WINDOWS, NULL,
	    "no py_window on kernel records (only a mapping trace's are read)" },
	{ "framework-fallback", O_FALLBACK, "NAME", "used when auto-detection finds no hint" },
	{ "framework-captured", O_CAPTURED, "NAME",
	    "what a live server answered as: wins over the path's and trace's hints" },
	{ "frames", O_FRAMES, NULL, "every Python frame as a frame record, no py_* contexts" },
	{ "list-ranks", O_LIST_RANKS, NULL, "print the ranks of each operand's traces, one a line" },
	{ "model", O_MODEL, "NAME", "the model (a name or path), for the header and model-specific fusions" },
	{ "name-refs", O_NAME_REFS, NULL,
	    "each long kernel name once, in a kernel_name record, and kernel records that refer to it" },
	{ "progress", 'p', NULL, "show progress on stderr even when it is not a terminal" },
	{ "no-progress", O_NO_PROGRESS, NULL, "no progress, even on a terminal" },
	{ "progress-label", O_PROGRESS_LABEL, "TEXT",
	    "name the work in progress lines (a role, an operand) before the file's name, which "
	    "a TEXT holding the file's path already names" },
	{ "python-ids", O_PYTHON_IDS, NULL, "give frame records their python_id and parent_id" },
	{ "quiet", 'q', NULL, "no warnings or progress" },
	{ "rank", O_RANK, "N", "rank N's traces of a profile directory only" },
	{ "role", 'r', "ROLE", "single (default), mapping or formal" },
	{ "strict", 's', NULL, "data-quality warnings become errors (exit 1)" },
	{ NULL, 0, NULL, NULL }
};

static const struct tool tool = {
	"[-pqs] [-r ROLE] [-f NAME] [--framework-fallback NAME]\n"
	" [--all-ranks | --rank N] [--frames [--python-ids]]\n"
	" [--all-ops] [--no-windows] [--name-refs]\n"
	" [trace-or-dir ...]\n"
	"--list-ranks [-q] trace-or-dir ...",
	"Read torch.profiler Chrome-trace files (.json or .json.gz, or - for stdin) or\n"
	"profile directories and write the triage record stream (JSON lines, see\n"
	"triage-records(5)).",
	opts
};

int
main(int argc, char **argv)
{
	int c, i, rval = EXIT_OK, r, tindex = 0;
	const char *errstr;

	tool_init(argc, argv);
	atexit(input_at_exit);
	while ((c = opt_next(&tool, argc, argv)) != -1) {
		switch (c) {
		case 'f':
			framework = optarg;
			break;
		case O_FALLBACK:
			fallback = optarg;
			break;
		case O_CAPTURED:
			framework_captured = optarg;
			break;
		case 'p':
			progress_flag = 1;
			break;
		case O_NO_PROGRESS:
			progress_flag = -1;
			break;
		case O_PROGRESS_LABEL:
			progress_label = optarg;
			break;
		case O_NAME_REFS:
			name_refs = 1;
			break;
		case O_PYTHON_IDS:
			python_ids = 1;
			break;
		case O_FRAMES:
			frame_records = 1;
			break;
		case O_ALL_OPS:
			all_ops = 1;
			break;
		case O_NO_WINDOWS:
			no_windows = 1;
			break;
		case O_MODEL:
			if (!*optarg)
				opt_bad(&tool, "model", "empty", optarg);
			model_opt = optarg;
			break;
		case O_ALL_RANKS:
			if (ranksel.mode == RANKS_ONE)
				opt_bad(&tool, "all-ranks", "not with --rank", "--all-ranks");
			ranksel.mode = RANKS_ALL;
			break;
		case O_RANK:
			if (ranksel.mode == RANKS_ALL)
				opt_bad(&tool, "rank", "not with --all-ranks", optarg);
			if (!parse_num(optarg, 0, LLONG_MAX, &ranksel.rank, &errstr))
				opt_bad(&tool, "rank", errstr, optarg);
			ranksel.mode = RANKS_ONE;
			break;
		case O_LIST_RANKS:
			list_ranks = 1;
			break;
		case 'q':
			quiet = 1;
			progress_flag = -1;
			break;
		case 'r':
			role = optarg;
			break;
		case 's':
			strict = 1;
			break;
		default:
			opt_usage(&tool, EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (model_opt && compat_reference)
		opt_bad(&tool, "model", "not a mode of the reference (--compat reference)", model_opt);
	if (strcmp(role, "single") && strcmp(role, "mapping") && strcmp(role, "formal")) {
		opt_bad(&tool, "role", "not single, mapping or formal", role);
	}
	if (strcmp(framework_canonical(framework), "auto") == 0 && strcmp(framework, "auto") &&
	    *framework) {
		opt_bad(&tool, "framework", "not auto, sglang, vllm, trtllm or tokenspeed",
		    framework);
	}
	if (list_ranks) {
		if (argc == 0 || ranksel.mode == RANKS_ONE) {
			err_msg(argc == 0 ? "--list-ranks needs a profile directory" :
			    "--list-ranks and --rank cannot be combined");
			opt_usage(&tool, EXIT_USAGE);
		}
		for (i = 0; i < argc; i++) {
			r = print_ranks(argv[i]);
			if (r != EXIT_OK && (rval == EXIT_OK || rval == EXIT_EMPTY))
				rval = r;
		}
		return tool_finish(rval);
	}
	if (argc == 0) {
		r = extract_operand("-", &tindex);
		rval = r;
	}
	for (i = 0; i < argc; i++) {
		r = extract_operand(argv[i], &tindex);
		if (r != EXIT_OK && (rval == EXIT_OK || rval == EXIT_EMPTY))
			rval = r;
	}
	return tool_finish(rval);
}

/* ---- per-trace extraction ---- */

/* Cached classification of an interned name or category. */
enum {
	NF_META = 1 << 0,	/* process_name, thread_name, ... */
	NF_CALL = 1 << 1,	/* lowercase name starts with "## call " */
	NF_PYSCOPE = 1 << 2,	/* looks like a Python scope */
	NF_HINT = 1 << 3,	/* overlap name hints */
	NF_LAUNCH = 1 << 4,	/* name contains "launch" */
	NF_MEMCPY = 1 << 5,	/* name contains "memcpy" (cudaMemcpyAsync, hipMemcpyWithStream) */
	NF_MEMSET = 1 << 6,	/* name contains "memset" */
	NF_SYNC = 1 << 7,	/* name contains "synchronize" (cudaDeviceSynchronize, ...) */
	CF_NONKERNEL = 1 << 8,	/* python_function, cpu_op or trace */
	CF_ANNOT = 1 << 9,	/* contains "annotation" */
	CF_KERNEL = 1 << 10,	/* contains kernel or starts with gpu_ */
	CF_LAUNCH = 1 << 11,	/* cuda_runtime or cuda_driver */
	CF_UA = 1 << 12,	/* exactly user_annotation */
	CF_GUA = 1 << 13,	/* exactly gpu_user_annotation */
	CF_PYFN = 1 << 14,	/* raw cat == python_function */
	CF_CPUOP = 1 << 15,	/* raw cat == cpu_op */
	CF_GPUWORK = 1 << 16,	/* kernel, gpu_memcpy, gpu_memset, legacy Kernel/Memcpy/Memset */
	CF_OPERATOR = 1 << 17,	/* raw cat == Operator (Kineto before PyTorch 1.10), not under --compat reference */
	F_DONE = 1 << 30
};

struct cache {
	strtab *tab;
	unsigned *flags;
	char **stage;		/* annotation stage per name (static strings) */
	size_t cap;
};

static unsigned
name_flags(const char *raw, size_t n)
{
	sbuf nn = SBUF_INIT;
	unsigned f = 0;
	const char *s;

	text_normalize(raw, n, &nn);
	s = sb_str(&nn);
	if (!strcmp(s, "process_name") || !strcmp(s, "thread_name") ||
	    !strcmp(s, "process_sort_index") || !strcmp(s, "thread_sort_index"))
		f |= NF_META;
	text_lower(nn.s, nn.len);
	s = sb_str(&nn);
	if (!strncmp(s, "## call ", 8))
		f |= NF_CALL;
	if (strstr(s, ".py(") || !strncmp(s, "python/", 7) || !strncmp(s, "nn.module:", 10))
		f |= NF_PYSCOPE;
	if (overlap_name_hint(s, nn.len))
		f |= NF_HINT;
	if (strstr(s, "launch"))
		f |= NF_LAUNCH;
	if (strstr(s, "memcpy"))
		f |= NF_MEMCPY;
	if (strstr(s, "memset"))
		f |= NF_MEMSET;
	if (strstr(s, "synchronize"))
		f |= NF_SYNC;
	sb_free(&nn);
	return f;
}

static unsigned
cat_flags(const char *raw, size_t n)
{
	sbuf c = SBUF_INIT;
	unsigned f = 0;
	const char *s;

	if (n == 15 && !memcmp(raw, "python_function", 15))
		f |= CF_PYFN;
	if (n == 6 && !memcmp(raw, "cpu_op", 6))
		f |= CF_CPUOP;
	text_normalize(raw, n, &c);
	text_lower(c.s, c.len);
	s = sb_str(&c);
	if (strstr(s, "python_function") || strstr(s, "cpu_op") || strstr(s, "trace"))
		f |= CF_NONKERNEL;
	if (strstr(s, "annotation"))
		f |= CF_ANNOT;
	if (strstr(s, "kernel") || !strncmp(s, "gpu_", 4))
		f |= CF_KERNEL;
	if (!strcmp(s, "cuda_runtime") || !strcmp(s, "cuda_driver"))
		f |= CF_LAUNCH;
	/*
	 * Kineto before PyTorch 1.10 wrote "Runtime" and "Operator" for what
	 * is now cuda_runtime and cpu_op; the reference reads neither, so such
	 * a trace has no launches and no CPU ops (docs/deviations.md C13).
	 */
	if (!compat_reference && n == 7 && !memcmp(raw, "Runtime", 7))
		f |= CF_LAUNCH;
	if (!compat_reference && n == 8 && !memcmp(raw, "Operator", 8))
		f |= CF_CPUOP | CF_NONKERNEL | CF_OPERATOR;
	if (!strcmp(s, "user_annotation"))
		f |= CF_UA;
	if (!strcmp(s, "gpu_user_annotation"))
		f |= CF_GUA;
	if (gpu_work_category(s, c.len))
		f |= CF_GPUWORK;
	sb_free(&c);
	return f;
}

static unsigned
lookup(struct cache *c, const char *s, size_t n, int is_cat, uint32_t *idp)
{
	uint32_t id = strtab_intern(c->tab, s, n);

	if (id >= c->cap) {
		size_t old = c->cap;
		xgrow(&c->flags, &c->cap, id + 1, sizeof *c->flags);
		memset(c->flags + old, 0, (c->cap - old) * sizeof *c->flags);
	}
	if (!(c->flags[id] & F_DONE))
		c->flags[id] = F_DONE | (is_cat ? cat_flags(s, n) : name_flags(s, n));
	if (idp)
		*idp = id;
	return c->flags[id];
}

enum skip_reason {
	SK_TS_BAD, SK_DUR_BAD, SK_TS_NONFINITE, SK_DUR_NONFINITE, SK_ARGS, SK_DUR_ABSURD,
	SK_NREASON
};
static const char *skip_names[SK_NREASON] = {
	"ts_null_or_not_a_number", "dur_null_or_not_a_number", "ts_not_finite",
	"dur_not_finite", "args_not_an_object", "dur_over_a_year"
};

/*
 * A duration beyond a year (in microseconds) is a corrupt value, and a few
 * of them would overflow every sum to infinity.
 */
#define DUR_ABSURD_US 3.2e13

/*
 * The time base is the first event's ts rounded down to a whole 10^9 us
 * (about 17 minutes), so relative times stay below about 2^30 us, where a
 * double resolves 2.4e-7 us; near the 1.7e15 us of an epoch clock it
 * resolves only 0.25 us (issue 25).  Timestamps outside [0, 1e17) keep
 * base 0: they are corrupt, and trace-health says so.
 */
#define BASE_UNIT 1000000000LL
#define TS_ABSURD_US 1e17

/*
 * One GPU of the document's deviceProperties (Kineto; computeProperties
 * in traces of 2021), as the device record carries it.  has: bit per
 * field of the order of dev_fields, set when the trace gave it.
 */
enum { DF_ID, DF_MEM, DF_MAJOR, DF_MINOR, DF_SMS, DF_WARP, DF_TPB, DF_TPSM, DF_REGS,
	DF_SMEM_BLOCK, DF_SMEM_SM, DF_COUNT };
struct device {
	char *name;			/* heap, NULL when absent */
	long long v[DF_COUNT];
	unsigned has;
};

/* What distributedInfo says (torch.distributed through Kineto). */
struct dist {
	int has_rank, has_world, has_tp;
	long long rank, world, tp;
};

/* The kind of a launch record (triage-records(5) launch kind). */
enum { LK_KERNEL, LK_MEMCPY, LK_MEMSET };

/*
 * The document's top-level members that say what ran where (Kineto writes
 * them before or after traceEvents): the GPUs (deviceProperties; the 2021
 * format's computeProperties, with other member names) and the ranks
 * (distributedInfo).
 */
static const char *const doc_keys[] = { "deviceProperties", "computeProperties",
	"distributedInfo", "record_shapes", "with_stack", "profile_memory", "with_flops",
	"with_modules", NULL };
/* the profiler's options among them (Kineto writes each only when it is on) */
#define FLAG_FIRST 3
#define FLAG_COUNT 5

struct trace_state {
	int t;
	const char *path;
	struct modelhint *mh;	/* the pending input record's hints to feed (not owned) */
	struct framehint *fh;
	const json_doc *d;	/* the event being read (owned by the scanner) */
	struct cache names, cats;
	struct links *links;	/* the correlation map and what it decides (links.h) */
	unsigned long long events, by_ph_x, by_ph_m, by_ph_other;
	unsigned long long kernels, cpu_ops, launches, frames, annotations, thread_names, syncs;
	unsigned long long skipped[SK_NREASON];
	unsigned long long kernel_no_dur;	/* kernel-like events with dur missing/<= 0 */
	unsigned long long kernel_zero_dur;	/* of them, GPU work with a dur of 0 */
	unsigned long long launch_zero_dur;	/* launches whose GPU items all have dur 0 */
	unsigned long long not_gpu_work;	/* kernel-like events of other categories */
	unsigned long long neg_dur;
	unsigned repl;				/* U+FFFD replacements */
	unsigned long long *catcount;
	size_t catcap;
	sbuf name, cat, pid, tid, tmp;	/* decoded text behind the views below */
	sbuf cutname;			/* a name past NAME_CUT_BYTES, cut (cut_name) */
	unsigned long long cut_names;	/* names cut so */
	struct rstr vname, vcat, vpid, vtid;	/* the event's name, cat, pid, tid as text */
	uint32_t vname_id;		/* vname's id in names (UINT32_MAX: not looked up) */
	unsigned char *kuse;		/* per names id: kernel records with it, up to 2 */
	size_t capkuse;
	struct rstr lastcat;		/* the category of the event before, and its lookup */
	unsigned lastcf;
	uint32_t lastcatid;
	int lastcopy;			/* is_copy_cat of the last category */
	progress *prog;
	zio *z;
	/* Python contexts (not with --frames): the frames, and the records kept until the end */
	struct pyctx *pc;
	struct spool *rsp;
	FILE *rfp;
	unsigned long long raw_off;	/* input consumed as of the event (scanq.h), for progress */
	struct shapes *sh;		/* the launching ops' input shapes (not with --frames) */
	unsigned char *capmark;		/* per frame-name id: 1 plain, 2 capture marker */
	size_t capcap;
	/*
	 * Issue 25.  The time base: an integer subtracted, exactly, from every
	 * ts written, so that the tools compute on small numbers (time_base_us
	 * on the trace record).  What the document's top level says of the
	 * GPUs and the ranks.  The runtime calls of copies and sets, kept as
	 * launch records when their correlation reaches GPU work.
	 */
	long long base;
	int base_set;
	char basetxt[24];		/* the base's digits, and how many (relative_ts's fast path) */
	size_t baselen;
	int gzip;			/* the input was gzip (zio_is_gzip, before the close) */
	struct device *dev;
	size_t ndev, capdev;
	unsigned flags_seen, flags_on;	/* the profiler's options the document states (doc_keys) */
	struct dist dist;
};

/* The thread of the event being read, in the Python-context tables. */
static uint32_t
py_thread(struct trace_state *s)
{
	return pyctx_thread(s->pc, s->vpid.s, s->vpid.n, s->vtid.s, s->vtid.n);
}

/*
 * One more event of a kind whose count is limited (reslimit.h, issue 27):
 * past the limit the trace ends with exit 1 before its memory does.  Its
 * records never leave the spool.
 */
static void
count_limited(struct trace_state *s, unsigned long long *n, enum limit_id id,
    const char *what)
{
	if (++*n <= limit_get(id))
		return;
	fflush(stdout);
	die(EXIT_DATA, "'%s': more than %llu %s in one trace, %s; no trace of one run holds "
	    "that many (a generated or merged file?); raise the limit to read it anyway, at "
	    "the cost of memory", s->path, limit_get(id), what, limit_text(id));
}

/* The members every event record starts with, per record type (rectab.h). */
struct evmembers {
	enum rec_member t, name, cat, pid, tid, ts, dur;
};

static const struct evmembers evm[RT_COUNT] = {
	[RT_kernel] = { RM_kernel_t, RM_kernel_name, RM_kernel_cat, RM_kernel_pid,
	    RM_kernel_tid, RM_kernel_ts, RM_kernel_dur },
	[RT_cpu_op] = { RM_cpu_op_t, RM_cpu_op_name, RM_COUNT, RM_cpu_op_pid, RM_cpu_op_tid,
	    RM_cpu_op_ts, RM_cpu_op_dur },
	[RT_launch] = { RM_launch_t, RM_launch_name, RM_COUNT, RM_launch_pid, RM_launch_tid,
	    RM_launch_ts, RM_launch_dur },
	[RT_sync] = { RM_sync_t, RM_sync_name, RM_COUNT, RM_sync_pid, RM_sync_tid,
	    RM_sync_ts, RM_sync_dur },
	[RT_frame] = { RM_frame_t, RM_frame_name, RM_COUNT, RM_frame_pid, RM_frame_tid,
	    RM_frame_ts, RM_frame_dur },
	[RT_annotation] = { RM_annotation_t, RM_annotation_name, RM_annotation_cat,
	    RM_annotation_pid, RM_annotation_tid, RM_annotation_ts, RM_annotation_dur },
};

/*
 * Where an event's members are: token indexes into the event's doc, -1 when
 * absent; in the order of event_keys (top level, then args).
 */
struct event_ix {
	int ph, name, cat, ts, dur, pid, tid, args;
	int a_ext, a_corr, a_stream, a_cstream, a_name, a_bytes, a_ext_legacy, a_pyid, a_pypid;
};

/* What one event is, once read. */
struct event {
	struct event_ix ix;
	long long ext, corr;
	int has_ext, has_corr;
	int ts_ok, dur_ok;		/* get_time's results */
	double ts, dur;			/* ts relative to the trace's base, as written */
	unsigned cf, nf;		/* category and name flags */
	char rts[48];			/* the ts written, when the base is not 0 */
	size_t rtslen;			/* its length; 0: the trace's own text */
};

/* Write a time value: the trace's own number text when it is a plain JSON number. */
static void
put_time(struct trace_state *s, enum rec_member m, int i, double v)
{
	size_t n;
	const char *p;
	char buf[40];
	enum json_kind k = i >= 0 ? json_kind(s->d, i) : JK_MISSING;

	if (k == JK_INT || k == JK_FLOAT) {
		p = json_span(s->d, i, &n);
		if (k == JK_INT || !json_nonfinite_literal(p, n)) {
			rec_numtext(m, p, n);
			return;
		}
	}
	num_json(v, buf);
	rec_numtext(m, buf, strlen(buf));
}

/*
 * Python str() of the value at token i (§1.2 to-text) as a span: the
 * event's own text when it reads the same (a string of plain ASCII, an
 * integer other than -0), else the text decoded into buf.  Valid until the
 * next event, or the next use of buf.
 */
static struct rstr
pystr(struct trace_state *s, int i, sbuf *buf)
{
	const json_doc *d = s->d;

	if (i >= 0) {
		const jsmntok_t *t = &d->tok[i];
		const char *p = d->js + t->start;
		size_t n = (size_t)(t->end - t->start);
		if (t->type == JSMN_STRING && json_plain_len(p, n) == n)
			return (struct rstr){ p, n };
		if (t->type == JSMN_PRIMITIVE && n && p[0] >= '0' && p[0] <= '9') {
			/* a non-negative integer prints as its text */
			size_t k = 1;
			while (k < n && p[k] >= '0' && p[k] <= '9')
				k++;
			if (k == n)
				return (struct rstr){ p, n };
		}
	}
	json_pystr(d, i, buf, &s->repl);
	return (struct rstr){ sb_str(buf), buf->len };
}

/*
 * A kernel's name, often hundreds of bytes of C++ template and as many
 * times over as the kernel ran, is kept in the spool as a byte no JSON
 * text holds (NAME_REF) and its id in the trace's names table; put_kept
 * writes the name back, quoted as rec_str would have.  On a kernel-dense
 * trace names were half of the spool's bytes (issue 30).
 */
#define NAME_REF '\001'
#define NAME_REF_MIN 12		/* names up to this long are kept as they are */

/*
 * An event's name past 64 KiB, which every tool would carry in several
 * records and hold (a 100 MB kernel name in a 102 KB gzip took 820 MB in
 * one process and 734 MB of stream): its first bytes, cut on a UTF-8
 * boundary, then "…[N bytes, hash H]" with a hash of the whole name, so
 * that two such names stay apart.  No real kernel, op or frame name comes
 * near it.  Not under --compat reference.
 */
#define NAME_CUT_BYTES 65536

static void
cut_name(struct trace_state *s)
{
	size_t k = NAME_CUT_BYTES - 64;
	uint64_t h = hash_bytes(s->vname.s, s->vname.n);

	while (k > 0 && ((unsigned char)s->vname.s[k] & 0xc0) == 0x80)
		k--;
	sb_reset(&s->cutname);
	sb_add(&s->cutname, s->vname.s, k);
	sb_printf(&s->cutname, "\342\200\246[%zu bytes, hash %016llx]", s->vname.n,
	    (unsigned long long)h);
	s->vname.s = sb_str(&s->cutname);
	s->vname.n = s->cutname.len;
	s->cut_names++;
}

/*
 * Start the record of an X event: type, trace index, name, the category
 * when `cat` is not NULL, pid, tid, ts and dur.
 */
static void
begin_event(struct trace_state *s, enum rec_type type, const struct rstr *cat,
    const struct event *e)
{
	const struct evmembers *m = &evm[type];

	rec_begin(type);
	rec_int(m->t, s->t);
	if (type == RT_kernel && s->vname_id != UINT32_MAX && s->vname.n > NAME_REF_MIN) {
		if (name_refs) {	/* a name of one kernel record stays in it (ref_name) */
			if (s->vname_id >= s->capkuse) {
				size_t k = s->capkuse;
				xgrow(&s->kuse, &s->capkuse, (size_t)s->vname_id + 1, 1);
				memset(s->kuse + k, 0, s->capkuse - k);
			}
			if (s->kuse[s->vname_id] < 2)
				s->kuse[s->vname_id]++;
		}
		/* the spool keeps a reference to the name (put_kept expands it) */
		char ref[16], *q = ref + sizeof ref;
		uint32_t v = s->vname_id;
		do
			*--q = (char)('0' + v % 10);
		while ((v /= 10) != 0);
		*--q = NAME_REF;
		rec_verbatim(m->name, q, (size_t)(ref + sizeof ref - q));
	} else
		rec_str(m->name, s->vname.s, s->vname.n);
	if (cat)
		rec_str(m->cat, cat->s, cat->n);
	rec_str(m->pid, s->vpid.s, s->vpid.n);
	rec_str(m->tid, s->vtid.s, s->vtid.n);
	if (e->rtslen)
		rec_numtext(m->ts, e->rts, e->rtslen);
	else
		put_time(s, m->ts, e->ix.ts, e->ts);
	put_time(s, m->dur, e->ix.dur, e->dur);
}

/*
 * The trace's time base (issue 25), from the first event whose ts was
 * read: its integer part, from the text when the number is plain, rounded
 * down to BASE_UNIT.  0 under --compat reference (the reference computes on
 * the absolute times, and its tables are reproduced from them).
 */
static void
set_base(struct trace_state *s, const struct event *e)
{
	long long ip = -1;
	size_t n, k;
	const char *p;

	s->base_set = 1;
	if (compat_reference || e->ts_ok != 1)
		return;
	if (e->ix.ts >= 0 && s->d->tok[e->ix.ts].type == JSMN_PRIMITIVE) {
		p = json_span(s->d, e->ix.ts, &n);
		for (k = 0, ip = 0; k < n && p[k] >= '0' && p[k] <= '9' && k < 17; k++)
			ip = ip * 10 + (p[k] - '0');
		if (k == 0 || (k < n && p[k] >= '0' && p[k] <= '9'))
			ip = -1;	/* negative, or 1e17 and beyond */
	}
	if (ip < 0 && e->ts >= 0 && e->ts < TS_ABSURD_US)
		ip = (long long)e->ts;
	if (ip >= 0 && ip < (long long)TS_ABSURD_US)
		s->base = ip - ip % BASE_UNIT;
	if (s->base)
		s->baselen = (size_t)snprintf(s->basetxt, sizeof s->basetxt, "%lld", s->base);
}

/*
 * The event's ts relative to the base, exactly: subtracted on the trace's
 * own digits (num_text_minus), in doubles only for text that is not a
 * plain decimal.  e->ts becomes the relative value.
 */
static void
relative_ts(struct trace_state *s, struct event *e)
{
	size_t n = 0;
	const char *p;
	double v;

	e->rtslen = 0;
	if (!s->base)
		return;
	if (e->ts_ok == 1 && e->ix.ts >= 0 && s->d->tok[e->ix.ts].type == JSMN_PRIMITIVE) {
		size_t k, lead = s->baselen - 9, ilen;
		p = json_span(s->d, e->ix.ts, &n);
		for (ilen = 0; ilen < n && p[ilen] >= '0' && p[ilen] <= '9'; ilen++)
			;
		if (ilen == s->baselen && n - ilen <= 23 && (ilen == n || p[ilen] == '.') &&
		    memcmp(p, s->basetxt, lead) == 0) {
			/* the base's leading digits, then nine of its zeros: the rest is the answer */
			for (k = lead; k < ilen - 1 && p[k] == '0'; k++)
				;
			n -= k;
			memcpy(e->rts, p + k, n);
		} else
			n = num_text_minus(p, n, s->base, e->rts);
	}
	if (n == 0) {
		num_json(e->ts - (double)s->base, e->rts);
		n = strlen(e->rts);
	}
	e->rtslen = n;
	if (!num_fast_decimal(e->rts, n, &v))
		v = strtod(e->rts, NULL);
	e->ts = v;
}

/* Read a time field per §1.2: 1 ok, 0 missing (value 0.0), -1 null/bad, -2 non-finite. */
static int
get_time(struct trace_state *s, int i, double *v)
{
	enum json_kind k;

	/* a plain decimal number, the common case: converted at once */
	if (i >= 0 && s->d->tok[i].type == JSMN_PRIMITIVE) {
		const char *p = s->d->js + s->d->tok[i].start;
		size_t n = (size_t)(s->d->tok[i].end - s->d->tok[i].start);
		if (n && (p[0] == '-' || (p[0] >= '0' && p[0] <= '9')) && num_fast_decimal(p, n, v))
			return 1;
	}
	k = json_kind(s->d, i);

	*v = 0.0;
	if (k == JK_MISSING)
		return 0;
	if (k == JK_NULL || !json_todouble(s->d, i, v))
		return -1;
	if (!isfinite(*v))
		return -2;
	return 1;
}

/*
 * The members the extraction reads, at the top level and in args: the
 * scanner finds them (scan_run_select), tokenizing strictly valid events
 * no further.  The order is struct event_ix's.
 */
static struct json_keys event_keys = {
	8, 7,
	{ JSON_KEY("ph"), JSON_KEY("name"), JSON_KEY("cat"), JSON_KEY("ts"), JSON_KEY("dur"),
	  JSON_KEY("pid"), JSON_KEY("tid"), JSON_KEY("args") },
	{ JSON_KEY("External id"), JSON_KEY("correlation"), JSON_KEY("stream"),
	  JSON_KEY("cuda_stream"), JSON_KEY("name"), JSON_KEY("bytes"),
	  /* Kineto before PyTorch 1.10, on runtime calls and GPU items (C23) */
	  JSON_KEY("external id"),
	  /* the last two only with --python-ids (event_keys.ninner) */
	  JSON_KEY("Python id"), JSON_KEY("Python parent id") },
	7
};
_Static_assert(sizeof(struct event_ix) == 17 * sizeof(int), "event_ix follows event_keys");

/* A memcpy or memset category (gpu_memcpy, gpu_memset; legacy Memcpy, Memset). */
static int
is_copy_cat(struct rstr c)
{
	return memmem(c.s, c.n, "emcpy", 5) != NULL || memmem(c.s, c.n, "emset", 5) != NULL;
}

/* Count the event under its category (for the stats record); returns the category flags. */
static unsigned
count_category(struct trace_state *s, const json_doc *d, const struct event_ix *ix)
{
	unsigned cf;
	uint32_t catid;

	(void)d;
	if (ix->cat >= 0) {
		s->vcat = pystr(s, ix->cat, &s->cat);
	} else {
		s->vcat.s = "";
		s->vcat.n = 0;
	}
	/* events of one category come in runs: compare with the one before first */
	if (s->lastcat.s && s->vcat.n == s->lastcat.n &&
	    memcmp(s->vcat.s, s->lastcat.s, s->vcat.n) == 0) {
		cf = s->lastcf;
		catid = s->lastcatid;
	} else {
		cf = lookup(&s->cats, s->vcat.s, s->vcat.n, 1, &catid);
		s->lastcat.s = strtab_str(s->cats.tab, catid);
		s->lastcat.n = s->vcat.n;
		s->lastcf = cf;
		s->lastcatid = catid;
		s->lastcopy = is_copy_cat(s->vcat);
	}
	if (catid >= s->catcap) {
		size_t old = s->catcap;
		xgrow(&s->catcount, &s->catcap, catid + 1, sizeof *s->catcount);
		memset(s->catcount + old, 0, (s->catcap - old) * sizeof *s->catcount);
	}
	s->catcount[catid]++;
	return cf;
}

/* A "M" event: a thread_name with a non-empty name becomes a record. */
static void
metadata_event(struct trace_state *s, const json_doc *d, const struct event_ix *ix)
{
	s->by_ph_m++;
	if (ix->name < 0 || json_kind(d, ix->name) != JK_STR)
		return;
	struct rstr tn;

	(void)d;
	s->vname = pystr(s, ix->name, &s->name);
	if (s->vname.n != 11 || memcmp(s->vname.s, "thread_name", 11) != 0 || ix->a_name < 0)
		return;
	tn = pystr(s, ix->a_name, &s->tmp);
	if (!tn.n)
		return;
	s->vpid = pystr(s, ix->pid, &s->pid);
	s->vtid = pystr(s, ix->tid, &s->tid);
	rec_begin(RT_thread_name);
	rec_int(RM_thread_name_t, s->t);
	rec_str(RM_thread_name_pid, s->vpid.s, s->vpid.n);
	rec_str(RM_thread_name_tid, s->vtid.s, s->vtid.n);
	rec_str(RM_thread_name_name, tn.s, tn.n);
	rec_end();
	s->thread_names++;
}

/*
 * The times of an X event (§1.2): returns 0 when the event is skipped (a
 * null, non-numeric or non-finite time, an absurd duration, a non-object
 * args), counted by reason.
 */
static int
read_times(struct trace_state *s, const json_doc *d, struct event *e)
{
	if (e->ix.args >= 0 && d->tok[e->ix.args].type != JSMN_OBJECT &&
	    json_truthy(d, e->ix.args)) {
		s->skipped[SK_ARGS]++;
		return 0;
	}
	e->ts_ok = get_time(s, e->ix.ts, &e->ts);
	e->dur_ok = get_time(s, e->ix.dur, &e->dur);
	if (e->ts_ok == -1 || e->dur_ok == -1) {
		s->skipped[e->ts_ok == -1 ? SK_TS_BAD : SK_DUR_BAD]++;
		return 0;
	}
	if (e->ts_ok == -2 || e->dur_ok == -2) {
		s->skipped[e->ts_ok == -2 ? SK_TS_NONFINITE : SK_DUR_NONFINITE]++;
		return 0;
	}
	if (e->dur_ok == 1 && fabs(e->dur) > DUR_ABSURD_US) {
		s->skipped[SK_DUR_ABSURD]++;
		return 0;
	}
	return 1;
}

static void
put_frame(struct trace_state *s, const json_doc *d, const struct event *e)
{
	long long v;

	s->frames++;
	if (s->pc) {
		uint32_t id = pyctx_name(s->pc, s->vname.s, s->vname.n);
		pyctx_frame(s->pc, py_thread(s), id, e->ts, e->dur);
		if (id >= s->capcap) {
			size_t old = s->capcap;
			xgrow(&s->capmark, &s->capcap, (size_t)id + 1, 1);
			memset(s->capmark + old, 0, s->capcap - old);
		}
		if (!s->capmark[id])
			s->capmark[id] = frame_is_capture_marker(s->vname.s, s->vname.n) ? 2 : 1;
		if (s->capmark[id] == 1)
			return;		/* only capture markers stay records (trace-health) */
	}
	begin_event(s, RT_frame, NULL, e);
	/* No tool reads the Python ids; they cost a sixth of the stream. */
	if (python_ids && e->ix.a_pyid >= 0 && json_coerce_int(d, e->ix.a_pyid, &v))
		rec_int(RM_frame_python_id, v);
	if (python_ids && e->ix.a_pypid >= 0 && json_coerce_int(d, e->ix.a_pypid, &v))
		rec_int(RM_frame_parent_id, v);
	rec_end();
}

static void
put_cpu_op(struct trace_state *s, const json_doc *d, const struct event *e)
{
	count_limited(s, &s->cpu_ops, LIM_CPU_OPS, "CPU ops");
	if (s->pc) {
		uint32_t th = py_thread(s);
		pyctx_op(s->pc, th, e->ts, e->dur, e->has_ext);
		if (e->ix.args >= 0 && d->tok[e->ix.args].type == JSMN_OBJECT)
			shapes_op(s->sh, th, e->ts, e->dur, e->has_ext, e->ext, s->vname.s,
			    s->vname.n, d->js + d->tok[e->ix.args].start,
			    (size_t)(d->tok[e->ix.args].end - d->tok[e->ix.args].start));
		else
			shapes_op(s->sh, th, e->ts, e->dur, e->has_ext, e->ext, s->vname.s,
			    s->vname.n, NULL, 0);
	}
	links_op(s->links, e->has_ext, e->ext, e->has_corr, e->corr);
	begin_event(s, RT_cpu_op, NULL, e);
	if (e->has_ext)
		rec_int(RM_cpu_op_external_id, e->ext);
	if (e->has_corr)
		rec_int(RM_cpu_op_correlation, e->corr);
	rec_end();
	if (!e->has_ext && e->has_corr)
		links_need(s->links, e->corr);
}

/*
 * A launch record.  Besides the kernel and graph launches (kind LK_KERNEL,
 * a name with "launch"), the runtime calls of copies and sets
 * (cudaMemcpyAsync, hipMemsetAsync, ...) are launches of their GPU work
 * (issue 25): they are kept only when a GPU item carries their
 * correlation, which is known at the trace's end (replay_line), so each
 * one's correlation is kept in order.
 */
static void
put_launch(struct trace_state *s, const struct event *e, int kind)
{
	if (s->pc) {
		uint32_t th = py_thread(s);
		pyctx_launch(s->pc, th, e->ts);
		/* a graph launch replays the kernels of many ops: none is its op */
		shapes_launch(s->sh, th, e->ts, e->corr, e->has_ext, e->ext,
		    memmem(s->vname.s, s->vname.n, "GraphLaunch", 11) != NULL);
	}
	if (kind == LK_KERNEL)
		count_limited(s, &s->launches, LIM_CPU_OPS, "launch calls");
	links_launch(s->links, e->corr, kind != LK_KERNEL);
	begin_event(s, RT_launch, NULL, e);
	rec_int(RM_launch_correlation, e->corr);
	if (e->has_ext)
		rec_int(RM_launch_external_id, e->ext);
	if (kind != LK_KERNEL)
		rec_cstr(RM_launch_kind, kind == LK_MEMCPY ? "memcpy" : "memset");
	rec_end();
}

/*
 * A blocking synchronize call (cudaDeviceSynchronize, hipStreamSynchronize,
 * cuEventSynchronize, ...): its return against the end of the GPU work
 * launched before it tells whether host and GPU share one clock (trace-stage,
 * issue 25 follow-up).
 */
static void
put_sync(struct trace_state *s, const struct event *e)
{
	count_limited(s, &s->syncs, LIM_CPU_OPS, "synchronize calls");
	begin_event(s, RT_sync, NULL, e);
	if (e->has_corr)
		rec_int(RM_sync_correlation, e->corr);
	rec_end();
}


static void
put_kernel(struct trace_state *s, const json_doc *d, const struct event *e, int overlap)
{
	int st = json_truthy(d, e->ix.a_stream) ? e->ix.a_stream :
	    json_truthy(d, e->ix.a_cstream) ? e->ix.a_cstream : -1;

	count_limited(s, &s->kernels, LIM_KERNELS, "GPU kernels");
	links_kernel(s->links, e->has_corr, e->corr, !compat_reference, e->has_ext, e->ext);
	if (s->pc) {
		/* a window: the scopes open at an overlap kernel's start (issue 30: --no-windows) */
		pyctx_kernel(s->pc, e->ts, overlap && !no_windows);
		shapes_kernel(s->sh, e->has_corr, e->corr, e->dur, s->lastcopy);
	}
	begin_event(s, RT_kernel, &s->vcat, e);
	if (st >= 0) {
		struct rstr v = pystr(s, st, &s->tmp);
		rec_str(RM_kernel_stream, v.s, v.n);
	}
	if (e->has_ext)
		rec_int(RM_kernel_external_id, e->ext);
	if (e->has_corr)
		rec_int(RM_kernel_correlation, e->corr);
	if (e->ix.a_bytes >= 0 && (e->cf & CF_GPUWORK) && s->lastcopy) {
		long long v;
		if (json_coerce_int(d, e->ix.a_bytes, &v) && v >= 0)
			rec_int(RM_kernel_bytes, v);
	}
	if (overlap)
		rec_bool(RM_kernel_overlap, 1);
	rec_end();
	if (!e->has_ext && e->has_corr)
		links_need(s->links, e->corr);
}

/*
 * "ProfilerStep#<N>": torch.profiler's step range.  Kineto before PyTorch
 * 1.10 wrote it, as every record_function range, under cat "Operator"; it
 * is also the step marker there (docs/deviations.md C13), an annotation
 * record beside its CPU op.
 */
static int
profiler_step(const struct rstr *name)
{
	size_t i = 13;

	if (name->n <= 13 || memcmp(name->s, "ProfilerStep#", 13) != 0)
		return 0;
	while (i < name->n && name->s[i] >= '0' && name->s[i] <= '9')
		i++;
	return i == name->n;
}

static void
put_annotation(struct trace_state *s, const json_doc *d, const struct event *e)
{
	static const struct rstr ua = { "user_annotation", 15 }, gua = { "gpu_user_annotation", 19 };
	const char *stg;
	long long v;

	s->annotations++;
	begin_event(s, RT_annotation, (e->cf & CF_GUA) ? &gua : &ua, e);
	if (e->ix.a_ext >= 0 && json_coerce_int(d, e->ix.a_ext, &v))
		rec_int(RM_annotation_external_id, v);
	stg = annotation_stage(s->vname.s, s->vname.n);
	if (stg)
		rec_cstr(RM_annotation_stage, stg);
	rec_end();
}

/*
 * The kernel-table detector (kernel-table.md Appendix A.1) and the narrower
 * overlap detector (overlap.md §2.5) on an X event whose times were read:
 * returns 1 for a kernel record, with *overlap set when both accept it.
 */
static int
is_kernel(struct trace_state *s, const struct event *e, int *overlap)
{
	int kernel_like = 0;

	*overlap = 0;
	if (!(e->nf & NF_META) && !(e->cf & CF_NONKERNEL) && !(e->cf & CF_ANNOT) &&
	    !(e->nf & NF_CALL)) {
		if (e->cf & CF_KERNEL)
			kernel_like = *overlap = 1;
		else if (!(e->nf & NF_PYSCOPE) && (e->ix.a_stream >= 0 || e->ix.a_cstream >= 0)) {
			kernel_like = 1;
			*overlap = (e->nf & NF_HINT) != 0;
		}
	}
	/*
	 * Sync events and runtime calls are not GPU work, whatever their stream
	 * (deviations.md C3), with or without a duration: a zero-length
	 * "Stream Wait Event" is no GPU item skipped (issue 25).
	 */
	if (kernel_like && !compat_reference && !(e->cf & CF_GPUWORK)) {
		s->not_gpu_work++;
		return 0;
	}
	/* the complete-duration predicate (§1.4.1) */
	if (kernel_like && !(e->ts_ok == 1 && e->dur_ok == 1 && e->dur > 0)) {
		s->kernel_no_dur++;
		/*
		 * A dur of exactly 0 is work shorter than the timer's resolution
		 * (whole microseconds in older traces); its launch did run it.
		 */
		if (!compat_reference && e->ts_ok == 1 && e->dur_ok == 1 && e->dur == 0) {
			s->kernel_zero_dur++;
			if (e->has_corr)
				links_zero(s->links, e->corr);
		}
		return 0;
	}
	return kernel_like;
}

static int
on_event(void *ctx, const json_doc *d, const int *idx, unsigned long long off)
{
	struct trace_state *s = ctx;
	struct event e;
	size_t pl;
	const char *ph;
	int overlap;

	(void)off;
	s->events++;
	if ((s->events & 0xffff) == 0)
		progress_update(s->prog, s->raw_off, zio_raw_size(s->z), s->events);
	if (s->mh || s->fh)
		feed_hints(s, d, idx);
	if (d->ntok == 0)
		return 0;	/* jsmn refused a validated event: none is known; skip */
	s->d = d;
	memcpy(&e.ix, idx, (event_keys.ntop + event_keys.ninner) * sizeof *idx);
	if (event_keys.ninner < 9)
		e.ix.a_pyid = e.ix.a_pypid = -1;
	e.has_ext = e.ix.a_ext >= 0 && json_coerce_int(d, e.ix.a_ext, &e.ext);
	/*
	 * Kineto before PyTorch 1.10 wrote a launch's and a GPU item's External
	 * id as "external id", the ops' as "External id": the same id, which the
	 * reference does not read (docs/deviations.md C23).
	 */
	if (!e.has_ext && !compat_reference && e.ix.a_ext_legacy >= 0)
		e.has_ext = json_coerce_int(d, e.ix.a_ext_legacy, &e.ext);
	e.has_corr = e.ix.a_corr >= 0 && json_coerce_int(d, e.ix.a_corr, &e.corr);
	if (e.has_ext && e.has_corr)
		links_pair(s->links, e.corr, e.ext);
	e.cf = count_category(s, d, &e.ix);

	if (e.ix.ph < 0 || json_kind(d, e.ix.ph) != JK_STR) {
		s->by_ph_other++;
		return 0;
	}
	ph = json_span(d, e.ix.ph, &pl);
	if (pl == 1 && ph[0] == 'M') {
		metadata_event(s, d, &e.ix);
		return 0;
	}
	if (pl != 1 || ph[0] != 'X') {
		s->by_ph_other++;
		return 0;
	}
	s->by_ph_x++;
	if (!read_times(s, d, &e))
		return 0;
	if (!s->base_set && e.ts_ok == 1)
		set_base(s, &e);
	relative_ts(s, &e);
	if (e.ix.name >= 0) {
		s->vname = pystr(s, e.ix.name, &s->name);
		if (s->vname.n > NAME_CUT_BYTES && !compat_reference)
			cut_name(s);
	} else {
		s->vname.s = "";
		s->vname.n = 0;
	}
	/* Frames and CPU ops can be neither kernels nor launches: skip the name rules. */
	s->vname_id = UINT32_MAX;
	e.nf = (e.cf & (CF_PYFN | CF_CPUOP)) ? 0 :
	    lookup(&s->names, s->vname.s, s->vname.n, 0, &s->vname_id);
	if (e.ix.name < 0)
		e.nf &= ~NF_META;
	s->vpid = pystr(s, e.ix.pid, &s->pid);
	s->vtid = pystr(s, e.ix.tid, &s->tid);
	if (e.dur_ok == 1 && e.dur < 0)
		s->neg_dur++;

	if (e.cf & CF_PYFN)
		put_frame(s, d, &e);
	if (e.cf & CF_CPUOP)
		put_cpu_op(s, d, &e);
	if ((e.cf & CF_LAUNCH) && (e.nf & NF_LAUNCH) && e.has_corr)
		put_launch(s, &e, LK_KERNEL);
	else if ((e.cf & CF_LAUNCH) && (e.nf & (NF_MEMCPY | NF_MEMSET)) && e.has_corr &&
	    !compat_reference)
		put_launch(s, &e, (e.nf & NF_MEMCPY) ? LK_MEMCPY : LK_MEMSET);
	else if ((e.cf & CF_LAUNCH) && e.has_corr && s->pc)
		/* other runtime calls with a correlation: no launch record, but their copies have an op */
		shapes_launch(s->sh, py_thread(s), e.ts, e.corr, e.has_ext, e.ext, 0);
	if ((e.cf & CF_LAUNCH) && (e.nf & NF_SYNC) && e.ts_ok == 1 && e.dur_ok == 1 &&
	    !compat_reference)
		put_sync(s, &e);
	if (is_kernel(s, &e, &overlap))
		put_kernel(s, d, &e, overlap);
	if (e.ts_ok == 1 && e.dur_ok == 1 && e.dur > 0 &&
	    ((e.cf & (CF_UA | CF_GUA)) || ((e.cf & CF_OPERATOR) && profiler_step(&s->vname))))
		put_annotation(s, d, &e);
	return 0;
}

static int
any_skipped(const struct trace_state *s)
{
	int i;

	for (i = 0; i < SK_NREASON; i++)
		if (s->skipped[i])
			return 1;
	return 0;
}

static void
cache_free(struct cache *c)
{
	strtab_free(c->tab);
	free(c->flags);
	memset(c, 0, sizeof *c);
}

/*
 * The trace record, at the trace's end.  The rank is the one the trace's
 * own distributedInfo gives, else its file name's (issue 25: a file named
 * ..._tp8... is rank 0 of 8 by its distributedInfo); under --compat
 * reference the file name's only, as the reference reads it.
 */
static void
put_trace(const struct trace_state *s)
{
	long long rank;
	const char *b = strrchr(s->path, '/');
	int named;

	rec_begin(RT_trace);
	rec_int(RM_trace_v, REC_VERSION);
	rec_int(RM_trace_t, s->t);
	rec_cstr(RM_trace_role, role);
	rec_cstr(RM_trace_path, s->path);
	rec_cstr(RM_trace_stage, strcmp(s->path, "-") ? parse_stage(s->path) : "all");
	b = b ? b + 1 : s->path;
	named = ranksel.mode == RANKS_LOWEST ? parse_tp_rank(b, &rank) : rank_of_name(b, &rank);
	if (s->dist.has_rank && !compat_reference) {
		rec_int(RM_trace_rank, s->dist.rank);
		rec_cstr(RM_trace_rank_source, "trace");
	} else if (named) {
		rec_int(RM_trace_rank, rank);
		if (!compat_reference)
			rec_cstr(RM_trace_rank_source, "name");
	}
	if (s->dist.has_world && !compat_reference)
		rec_int(RM_trace_world_size, s->dist.world);
	if (s->dist.has_tp && !compat_reference)
		rec_int(RM_trace_tp_size, s->dist.tp);
	rec_bool(RM_trace_gzip, s->gzip);
	if (s->pc)
		rec_bool(RM_trace_py_context, 1);
	if (s->base)
		rec_int(RM_trace_time_base_us, s->base);
	if (s->flags_seen && !compat_reference) {
		sbuf f = SBUF_INIT;
		int k;
		sb_addc(&f, '{');
		for (k = 0; k < FLAG_COUNT; k++)
			if (s->flags_seen & 1u << k)
				sb_printf(&f, "%s\"%s\":%s", f.len > 1 ? "," : "", doc_keys[FLAG_FIRST + k],
				    (s->flags_on & 1u << k) ? "true" : "false");
		sb_addc(&f, '}');
		rec_json(RM_trace_capture_flags, f.s, f.len);
		sb_free(&f);
	}
	rec_end();
}

/* The device records: one per GPU the document describes (interfaces with issue 28). */
static void
put_devices(const struct trace_state *s)
{
	static const enum rec_member m[DF_COUNT] = {
		RM_device_id, RM_device_total_global_mem, RM_device_compute_major,
		RM_device_compute_minor, RM_device_num_sms, RM_device_warp_size,
		RM_device_max_threads_per_block, RM_device_max_threads_per_sm,
		RM_device_regs_per_block, RM_device_shared_mem_per_block,
		RM_device_shared_mem_per_sm
	};
	size_t i;
	int f;

	if (compat_reference)
		return;
	for (i = 0; i < s->ndev; i++) {
		const struct device *d = &s->dev[i];
		rec_begin(RT_device);
		rec_int(RM_device_t, s->t);
		if (d->has & 1u << DF_ID)
			rec_int(RM_device_id, d->v[DF_ID]);
		if (d->name)
			rec_cstr(RM_device_name, d->name);
		for (f = DF_MEM; f < DF_COUNT; f++)
			if (d->has & 1u << f)
				rec_int(m[f], d->v[f]);
		rec_end();
	}
}


/* Member names per device field: Kineto's, then the 2021 format's. */
static const char *const dev_names[DF_COUNT][2] = {
	{ "id", NULL }, { "totalGlobalMem", NULL }, { "computeMajor", "major" },
	{ "computeMinor", "minor" }, { "numSms", "multiProcessorCount" }, { "warpSize", NULL },
	{ "maxThreadsPerBlock", NULL },
	{ "maxThreadsPerMultiprocessor", "maxThreadsPerMultiProcessor" },
	{ "regsPerBlock", NULL }, { "sharedMemPerBlock", NULL },
	{ "sharedMemPerMultiprocessor", "maxSharedMemoryPerMultiProcessor" }
};

/* At most this many devices are kept (a node has 8 or 16; a damaged file may list more). */
#define MAX_DEVICES 256

static void
read_devices(struct trace_state *s, const json_doc *d)
{
	int i, k, f, j, n;
	long long v;
	sbuf name = SBUF_INIT;

	if (json_kind(d, 0) != JK_ARR)
		return;
	n = d->tok[0].size;
	for (k = 0, i = 1; k < n && s->ndev < MAX_DEVICES; k++, i = json_skip(d, i)) {
		struct device *dv;
		if (json_kind(d, i) != JK_OBJ)
			continue;
		xgrow(&s->dev, &s->capdev, s->ndev + 1, sizeof *s->dev);
		dv = &s->dev[s->ndev++];
		memset(dv, 0, sizeof *dv);
		j = json_get(d, i, "name");
		if (json_kind(d, j) == JK_STR) {
			json_str(d, j, &name, &s->repl);
			dv->name = xstrdup(sb_str(&name));
		}
		for (f = 0; f < DF_COUNT; f++) {
			j = json_get(d, i, dev_names[f][0]);
			if (j < 0 && dev_names[f][1])
				j = json_get(d, i, dev_names[f][1]);
			if (j >= 0 && (json_kind(d, j) == JK_INT || json_kind(d, j) == JK_FLOAT) &&
			    json_coerce_int(d, j, &v) && v >= 0) {
				dv->v[f] = v;
				dv->has |= 1u << f;
			}
		}
	}
	sb_free(&name);
}

/* Does a process group's pg_desc name tensor parallelism ("tp", "tp:0", "TP_GROUP", "tensor...")? */
static int
tp_desc(const json_doc *d, int i)
{
	sbuf t = SBUF_INIT;
	int r;

	if (json_kind(d, i) != JK_STR)
		return 0;
	json_str(d, i, &t, NULL);
	text_lower(t.s, t.len);
	r = (t.len >= 2 && !memcmp(t.s, "tp", 2) && (t.len == 2 || !((t.s[2] >= 'a' &&
	    t.s[2] <= 'z') || (t.s[2] >= '0' && t.s[2] <= '9')))) || strstr(sb_str(&t), "tensor");
	sb_free(&t);
	return r;
}

static void
read_dist(struct trace_state *s, const json_doc *d)
{
	int i, g, k, n, j, r, nr;
	long long v;

	if (json_kind(d, 0) != JK_OBJ)
		return;
	i = json_get(d, 0, "rank");
	if (json_kind(d, i) == JK_INT && json_coerce_int(d, i, &v) && v >= 0) {
		s->dist.rank = v;
		s->dist.has_rank = 1;
	}
	else if (i >= 0)
		warn_msg("'%s': distributedInfo's rank is no rank (a whole number from 0): "
		    "ignored", s->path);
	i = json_get(d, 0, "world_size");
	if (json_kind(d, i) == JK_INT && json_coerce_int(d, i, &v) && v >= 1) {
		s->dist.world = v;
		s->dist.has_world = 1;
	} else if (i >= 0)
		warn_msg("'%s': distributedInfo's world_size is no size (a whole number from 1): "
		    "ignored", s->path);
	if (s->dist.has_rank && s->dist.has_world && s->dist.rank >= s->dist.world) {
		/* one of them is wrong, and which is unknown: neither is said */
		warn_msg("'%s': distributedInfo says rank %lld in a world of %lld ranks, which "
		    "cannot be: both ignored", s->path, s->dist.rank, s->dist.world);
		s->dist.has_rank = s->dist.has_world = 0;
		return;
	}
	/* the TP group: a process group that says it is one and holds this rank */
	g = json_get(d, 0, "pg_config");
	if (!s->dist.has_rank || json_kind(d, g) != JK_ARR)
		return;
	n = d->tok[g].size;
	for (k = 0, i = g + 1; k < n; k++, i = json_skip(d, i)) {
		int in = 0;
		if (json_kind(d, i) != JK_OBJ || !tp_desc(d, json_get(d, i, "pg_desc")))
			continue;
		j = json_get(d, i, "ranks");
		if (json_kind(d, j) != JK_ARR)
			continue;
		nr = d->tok[j].size;
		for (r = 0, j++; r < nr; r++, j = json_skip(d, j))
			if (json_coerce_int(d, j, &v) && v == s->dist.rank)
				in = 1;
		if (in) {
			s->dist.tp = nr;
			s->dist.has_tp = 1;
			return;
		}
	}
}

static int
on_member(void *ctx, int which, const json_doc *d)
{
	struct trace_state *s = ctx;

	if (d->ntok == 0)
		return 0;
	if (which <= 1 && s->ndev == 0)
		read_devices(s, d);
	else if (which == 2)
		read_dist(s, d);
	else if (which >= FLAG_FIRST && which < FLAG_FIRST + FLAG_COUNT &&
	    json_kind(d, 0) != JK_OBJ && json_kind(d, 0) != JK_ARR) {
		s->flags_seen |= 1u << (which - FLAG_FIRST);
		if (json_truthy(d, 0))
			s->flags_on |= 1u << (which - FLAG_FIRST);
	}
	return 0;
}

static const struct scan_members doc_members = { doc_keys, on_member };

static void
put_stats(const struct trace_state *s, const struct scan_stats *st)
{
	sbuf o = SBUF_INIT;
	uint32_t id;
	size_t i;

	rec_begin(RT_stats);
	rec_int(RM_stats_t, s->t);
	rec_int(RM_stats_events, (long long)s->events);
	rec_int(RM_stats_ph_x, (long long)s->by_ph_x);
	rec_int(RM_stats_ph_m, (long long)s->by_ph_m);
	rec_int(RM_stats_ph_other, (long long)s->by_ph_other);
	rec_int(RM_stats_kernels, (long long)s->kernels);
	rec_int(RM_stats_cpu_ops, (long long)s->cpu_ops);
	rec_int(RM_stats_launches, (long long)s->launches);
	rec_int(RM_stats_frames, (long long)s->frames);
	rec_int(RM_stats_annotations, (long long)s->annotations);
	if (!compat_reference)
		rec_int(RM_stats_not_gpu_work, (long long)s->not_gpu_work);
	sb_addc(&o, '{');
	for (id = 0; id < strtab_count(s->cats.tab); id++) {
		if (id)
			sb_addc(&o, ',');
		json_quote(&o, strtab_str(s->cats.tab, id), strtab_len(s->cats.tab, id));
		sb_printf(&o, ":%llu", s->catcount[id]);
	}
	sb_addc(&o, '}');
	rec_json(RM_stats_by_cat, o.s, o.len);
	sb_reset(&o);
	sb_addc(&o, '{');
	for (i = 0; i < SK_NREASON; i++)
		sb_printf(&o, "%s\"%s\":%llu", i ? "," : "", skip_names[i], s->skipped[i]);
	sb_addc(&o, '}');
	rec_json(RM_stats_skipped, o.s, o.len);
	sb_reset(&o);
	sb_printf(&o, "{\"bom\":%llu,\"control_chars\":%llu,\"trailing_commas\":%llu,"
	    "\"missing_close_bracket\":%llu,\"non_object_events\":%llu,"
	    "\"nan_inf_literals\":%llu,\"replacement_chars\":%u,"
	    "\"kernels_without_positive_dur\":%llu,\"negative_dur\":%llu,"
	    "\"duplicate_trace_events\":%llu",
	    st->bom, st->ctrl, st->trailing_commas, st->missing_close, st->nonobject,
	    st->literals, s->repl, s->kernel_no_dur, s->neg_dur, st->dup_trace_events);
	if (!compat_reference)
		sb_printf(&o, ",\"kernels_zero_dur\":%llu,\"launches_zero_dur\":%llu",
		    s->kernel_zero_dur, s->launch_zero_dur);
	sb_addc(&o, '}');
	rec_json(RM_stats_warnings, o.s, o.len);
	sb_free(&o);
	rec_cstr(RM_stats_shape, st->shape == 'a' ? "array" : st->shape == 'o' ? "object" :
	    "other");
	rec_end();
}

/*
 * The trace's data-quality warnings, one line per kind with counts.
 * Returns EXIT_DATA when --strict makes them errors, else EXIT_OK.
 */
static int
warn_trace(const struct trace_state *s, const struct scan_stats *st)
{
	const char *path = s->path;
	size_t i;

	if (st->bom)
		warn_msg("'%s': UTF-8 byte order mark at the start (ignored)", path);
	if (st->ctrl)
		warn_msg("'%s': %llu raw control character%s inside strings (accepted)", path,
		    st->ctrl, st->ctrl == 1 ? "" : "s");
	if (s->repl)
		warn_msg("'%s': %u invalid UTF-8 sequence%s or lone surrogate%s shown as U+FFFD",
		    path, s->repl, s->repl == 1 ? "" : "s", s->repl == 1 ? "" : "s");
	if (st->literals)
		warn_msg("'%s': %llu NaN/Infinity literal%s (not standard JSON; accepted)", path,
		    st->literals, st->literals == 1 ? "" : "s");
	if (st->trailing_commas)
		warn_msg("'%s': %llu trailing comma%s before ']' or '}' (accepted)", path,
		    st->trailing_commas, st->trailing_commas == 1 ? "" : "s");
	if (st->missing_close)
		warn_msg("'%s': the event array has no closing ']' (accepted)", path);
	if (st->nonobject)
		warn_msg("'%s': %llu trace event%s not JSON object%s (skipped)", path,
		    st->nonobject, st->nonobject == 1 ? " is" : "s are", st->nonobject == 1 ? "" : "s");
	if (st->dup_trace_events)
		warn_msg("'%s': more than one traceEvents array (all were read; a trace viewer "
		    "shows the last alone)", path);
	if (s->cut_names)
		warn_msg("'%s': %llu event name%s longer than %d KiB cut to that, each with a hash "
		    "of the whole name (no real kernel or op is named so)", path, s->cut_names,
		    s->cut_names == 1 ? "" : "s", NAME_CUT_BYTES >> 10);
	for (i = 0; i < SK_NREASON; i++)
		if (s->skipped[i])
			warn_msg("'%s': %llu event%s skipped: %s", path, s->skipped[i],
			    s->skipped[i] == 1 ? "" : "s", skip_names[i]);
	/* the zero ones apart: work shorter than the clock, not an event lost (trace-health says info) */
	if (s->kernel_no_dur > s->kernel_zero_dur)
		warn_msg("'%s': %llu GPU event%s with missing, null or negative dur (skipped)",
		    path, s->kernel_no_dur - s->kernel_zero_dur,
		    s->kernel_no_dur - s->kernel_zero_dur == 1 ? "" : "s");
	if (s->kernel_zero_dur)
		warn_msg("'%s': %llu GPU item%s of zero duration, shorter than the trace's clock "
		    "resolution (no kernel row%s, as in the reference)", path, s->kernel_zero_dur,
		    s->kernel_zero_dur == 1 ? "" : "s", s->kernel_zero_dur == 1 ? "" : "s");
	if (strict && (s->kernel_no_dur || st->ctrl || s->repl || st->literals ||
	    st->trailing_commas || st->nonobject || st->dup_trace_events || any_skipped(s))) {
		err_msg("'%s': data-quality warnings are errors under --strict", path);
		return EXIT_DATA;
	}
	return EXIT_OK;
}

/* A trace without events: say what the document held instead. */
static void
say_empty(const char *path, const struct scan_stats *st)
{
	if (st->shape != 'o' && st->shape != 'a')
		err_msg("'%s': no trace events: the document is neither a JSON object nor an "
		    "array", path);
	else if (!st->has_events)
		err_msg("'%s': no trace events: the document has no traceEvents array", path);
	else if (st->nonobject)
		err_msg("'%s': no trace events: the event array holds %llu elements, none of "
		    "them an object", path, st->nonobject);
	else
		err_msg("'%s': no trace events: the event array is empty", path);
}

static void
trace_state_free(struct trace_state *s)
{
	size_t i;

	cache_free(&s->names);
	free(s->kuse);
	cache_free(&s->cats);
	links_free(s->links);
	free(s->catcount);
	sb_free(&s->name);
	sb_free(&s->cutname);
	sb_free(&s->cat);
	sb_free(&s->pid);
	sb_free(&s->tid);
	sb_free(&s->tmp);
	if (s->rfp) {
		rec_output(NULL);
		fclose(s->rfp);
	}
	spool_free(s->rsp);
	pyctx_free(s->pc);
	shapes_free(s->sh);
	free(s->capmark);
	for (i = 0; i < s->ndev; i++)
		free(s->dev[i].name);
	free(s->dev);
}

/* ---- the records kept until the Python contexts are known ---- */

/* A list of frame-name ids as a JSON array. */
static void
put_ids(enum rec_member m, struct pylist l, sbuf *b)
{
	size_t i;

	sb_reset(b);
	sb_addc(b, '[');
	for (i = 0; i < l.n; i++) {
		char d[12], *p = d + sizeof d;
		uint32_t v = l.v[i];
		do {
			*--p = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		if (i)
			sb_addc(b, ',');
		sb_add(b, p, (size_t)(d + sizeof d - p));
	}
	sb_addc(b, ']');
	rec_json(m, b->s, b->len);
}

/* Where the replay of the kept records is. */
struct replay {
	size_t nop, nln, nk;
	sbuf b;
	sbuf x;			/* a kept kernel record with its name written back */
	unsigned char *named;	/* --name-refs: names[id] has its kernel_name record */
	size_t cap_named;
};

/*
 * --name-refs (issue 30): the kernel record names its kernel as name_ref,
 * in the place of name (triage-records(5)), and the trace's first record
 * of each such name is preceded by its kernel_name record: a long name
 * crosses each pipe once, and the readers after intern it once.  Only
 * names of two kernel records or more: a name of one (a trace of distinct
 * names) would cost a record and every reader's table more than it saves.
 */
static const char *
ref_name(const struct trace_state *s, const char *line, size_t *n, struct replay *rp,
    const char *p, const char *q, uint32_t id)
{
	size_t i;

	if (id >= rp->cap_named) {
		i = rp->cap_named;
		xgrow(&rp->named, &rp->cap_named, (size_t)id + 1, 1);
		memset(rp->named + i, 0, rp->cap_named - i);
	}
	if (!rp->named[id]) {
		rp->named[id] = 1;
		rec_begin(RT_kernel_name);
		rec_int(RM_kernel_name_t, s->t);
		rec_int(RM_kernel_name_id, id);
		rec_str(RM_kernel_name_name, strtab_str(s->names.tab, id),
		    strtab_len(s->names.tab, id));
		rec_end();
	}
	sb_reset(&rp->x);
	sb_add(&rp->x, line, (size_t)(p - line) - 6);	/* up to `,"` of `,"name":` */
	sb_adds(&rp->x, "name_ref\":");
	sb_add(&rp->x, p + 1, (size_t)(q - p - 1));
	sb_add(&rp->x, q, (size_t)(line + *n - q));
	*n = rp->x.len;
	return sb_str(&rp->x);
}

/*
 * A kept kernel record whose name is a reference (begin_event) with the
 * name written back, in rp->x (or referred to: ref_name); any other line
 * as it is.  The reference follows `"name":` right after the trace index,
 * and a comma follows it.
 */
static const char *
expand_name(const struct trace_state *s, const char *line, size_t *n, struct replay *rp)
{
	static const char head[] = "{\"type\":\"kernel\",\"t\":";
	const char *p = line + sizeof head - 1, *e = line + *n, *q;
	uint32_t id = 0;

	if (*n < sizeof head - 1 || memcmp(line, head, sizeof head - 1) != 0)
		return line;
	while (p < e && *p >= '0' && *p <= '9')
		p++;
	if (e - p < 9 || memcmp(p, ",\"name\":", 8) != 0 || p[8] != NAME_REF)
		return line;
	p += 8;
	for (q = p + 1; q < e && *q >= '0' && *q <= '9'; q++)
		id = id * 10 + (uint32_t)(*q - '0');
	if (q == e || *q != ',' || id >= strtab_count(s->names.tab))
		die(EXIT_DATA, "internal error: a kept record of '%s' lost its name", s->path);
	if (name_refs && id < s->capkuse && s->kuse[id] > 1)
		return ref_name(s, line, n, rp, p, q, id);
	sb_reset(&rp->x);
	sb_add(&rp->x, line, (size_t)(p - line));
	json_quote(&rp->x, strtab_str(s->names.tab, id), strtab_len(s->names.tab, id));
	sb_add(&rp->x, q, (size_t)(e - q));
	*n = rp->x.len;
	return sb_str(&rp->x);
}

/*
 * One kept record line, with its Python context when it has one; a copy's
 * or set's call (put_launch) that no GPU item's correlation names is
 * dropped.
 */
static void
replay_line(struct trace_state *s, const char *line, size_t n, struct replay *rp)
{
#define IS(type) (n > sizeof "{\"type\":\"" type "\"" - 1 && \
	memcmp(line, "{\"type\":\"" type "\"", sizeof "{\"type\":\"" type "\"" - 1) == 0)
	uint32_t loc;
	struct pylist stack, scopes, win;
	const char *band;
	size_t bandlen, li;

	line = expand_name(s, line, &n, rp);
	if (IS("cpu_op") && (s->pc || links_op_bits(s->links))) {
		size_t oi = rp->nop++;
		if (!links_op_keep(s->links, oi))
			return;		/* no kernel is matched to it */
		if (s->pc)
			pyctx_op_result(s->pc, oi, &loc, &stack, &scopes);
		if (s->pc && (loc != PY_NONE || scopes.n)) {
			rec_extend(RT_cpu_op, RM_cpu_op_py_loc - 1, line, n);
			if (loc != PY_NONE) {
				rec_int(RM_cpu_op_py_loc, loc);
				put_ids(RM_cpu_op_py_stack, stack, &rp->b);
			}
			if (scopes.n)
				put_ids(RM_cpu_op_py_scopes, scopes, &rp->b);
			rec_end();
			return;
		}
	} else if (IS("launch")) {
		li = rp->nln++;
		if (!links_launch_keep(s->links, li))
			return;		/* a copy's or set's call with no GPU work of its own */
		if (links_launch_zero(s->links, li))
			s->launch_zero_dur++;
		if (s->pc) {
			pyctx_launch_result(s->pc, li, &loc, &stack);
			if (loc != PY_NONE) {
				rec_extend(RT_launch, RM_launch_py_loc - 1, line, n);
				rec_int(RM_launch_py_loc, loc);
				put_ids(RM_launch_py_stack, stack, &rp->b);
				rec_end();
				return;
			}
		}
	} else if (IS("kernel") && s->pc) {
		uint32_t sid;
		double frac;
		int shaped = shapes_kernel_result(s->sh, rp->nk, &sid, &frac);
		pyctx_kernel_result(s->pc, rp->nk++, &win, &band, &bandlen);
		if (win.n || shaped) {
			rec_extend(RT_kernel, (win.n ? RM_kernel_py_window : RM_kernel_shape) - 1,
			    line, n);
			if (win.n) {
				put_ids(RM_kernel_py_window, win, &rp->b);
				if (band)
					rec_json(RM_kernel_py_window_band, band, bandlen);
			}
			if (shaped) {
				rec_int(RM_kernel_shape, sid);
				if (frac != 1.0)
					rec_num(RM_kernel_shape_frac, frac);
			}
			rec_end();
			return;
		}
	}
	rec_line(line, n);
#undef IS
}

static void put_trace(const struct trace_state *s);
static void put_devices(const struct trace_state *s);

/*
 * The trace's end: its trace record (whose time base, ranks and devices
 * are known only now), the device records, then, with Python contexts,
 * the frame names they use, then the kept records in their order, each
 * with its context.
 */
static void
put_kept(struct trace_state *s)
{
	char *buf;
	size_t cap = 1 << 20, have = 0;
	unsigned long long off = 0, size;
	uint32_t id, nnames;
	struct replay rp = { 0, 0, 0, SBUF_INIT, SBUF_INIT, NULL, 0 };

	rec_output(NULL);
	if (fclose(s->rfp) != 0)
		die(EXIT_DATA, "cannot keep the records of '%s' aside: %s", s->path, strerror(errno));
	s->rfp = NULL;
	put_trace(s);
	put_devices(s);
	links_resolve(s->links, all_ops);
	s->launches += links_copies_kept(s->links);
	if (s->pc) {
		if (links_op_bits(s->links))
			pyctx_drop_ops(s->pc, links_op_bits(s->links));
		pyctx_resolve(s->pc);
		nnames = pyctx_name_count(s->pc);
		for (id = 0; id < nnames; id++) {
			size_t n;
			const char *name;
			if (!pyctx_name_used(s->pc, id))
				continue;
			name = pyctx_name_str(s->pc, id, &n);
			rec_begin(RT_frame_name);
			rec_int(RM_frame_name_t, s->t);
			rec_int(RM_frame_name_id, id);
			rec_str(RM_frame_name_name, name, n);
			rec_end();
		}
	}
	if (s->sh)
		shapes_resolve(s->sh, s->t);
	size = spool_size(s->rsp);
	buf = xmalloc(cap);
	while (off < size || have) {
		size_t k = size - off < cap - have ? (size_t)(size - off) : cap - have, start = 0;
		char *nl;
		spool_read(s->rsp, off, buf + have, k);
		off += k;
		have += k;
		while ((nl = memchr(buf + start, '\n', have - start)) != NULL) {
			replay_line(s, buf + start, (size_t)(nl - (buf + start)), &rp);
			start = (size_t)(nl - buf) + 1;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (have == cap) {	/* a record longer than the buffer */
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		if (off == size && have) {
			/* every kept record ends with a newline; nothing can be left over */
			die(EXIT_DATA, "internal error: a kept record of '%s' lost its end", s->path);
		}
	}
	free(buf);
	sb_free(&rp.b);
	sb_free(&rp.x);
	free(rp.named);
}

/* Extract one trace file; returns an exit code. */
/*
 * The input record of a file or directory operand, which goes first but
 * needs what the traces' frames say (the framework, the model family):
 * the first trace's extraction pass gathers that as it reads (issue 30:
 * reading it once more for the hints cost as much again on a trace of
 * under 200,000 events), and the record is written when that pass ends,
 * before any of the trace's records leave the spool.
 */
struct input_ctx {
	const char *real;
	int is_dir;
	const char *sa;			/* server args JSON, or NULL */
	const char *fw, *src;		/* fw NULL: from fh, once fed */
	sbuf *evidence;
	struct tlist *traces;
	struct dropped *dropped;
	struct framehint *fh;		/* fed by trace t0's pass, or NULL */
	struct modelhint *mh;		/* idem */
	int fh_done, mh_done;		/* the pass fed them to their end */
	int t0;
	int cut;			/* the run died during that pass */
	int stream;			/* standard input or a pipe: readable once, never again */
	/*
	 * What the first trace says of its deployment, for a report that
	 * pairs two runs (the mapping's against the formal's): its world size
	 * and its first GPU (name, SMs or CUs, bytes of memory; -1 unknown).
	 */
	int has_world, has_gpu;
	long long world, gpu_sms, gpu_mem;
	char *gpu;
};

static struct input_ctx *pending;	/* an input record not written yet */

static void
put_input(struct input_ctx *c)
{
	const char **paths = xcalloc(c->traces->n + 1, sizeof *paths);
	sbuf l = SBUF_INIT;
	size_t i;

	if (!c->fw && c->cut && !c->fh_done) {
		/* the pass stopped short: the traces read for it, as resolve_framework does */
		for (i = 0; !c->fw && !c->stream && i < (c->is_dir ? c->traces->n : 1); i++)
			c->fw = trace_frames_hint(c->traces->v[i].path, c->evidence);
		c->fw = framework_over_path(c->fw, fallback, &c->src, c->evidence);
	} else if (!c->fw)
		c->fw = resolve_framework_finish(c->fh, c->is_dir, fallback, c->traces, &c->src,
		    c->evidence);
	rec_begin(RT_input);
	rec_int(RM_input_v, REC_VERSION);
	rec_cstr(RM_input_role, role);
	rec_cstr(RM_input_path, c->real);
	rec_cstr(RM_input_framework, c->fw);
	rec_cstr(RM_input_framework_source, c->src);
	if (c->evidence->len)
		rec_str(RM_input_framework_evidence, c->evidence->s, c->evidence->len);
	for (i = 0; i < c->traces->n; i++)
		paths[i] = c->traces->v[i].path;
	/* a stream's model hint is its pass's or none: it cannot be read again */
	put_model(c->sa, paths, c->stream && (!c->mh || (c->cut && !c->mh_done)) ? 0 :
	    c->traces->n, c->cut && !c->mh_done ? NULL : c->mh);
	free(paths);
	sb_addc(&l, '[');
	for (i = 0; i < c->traces->n; i++) {
		if (i)
			sb_addc(&l, ',');
		json_quote(&l, c->traces->v[i].path, strlen(c->traces->v[i].path));
	}
	sb_addc(&l, ']');
	rec_json(RM_input_traces, l.s, l.len);
	sb_free(&l);
	if (!compat_reference && c->has_world)
		rec_int(RM_input_world_size, c->world);
	if (!compat_reference && c->has_gpu) {
		rec_cstr(RM_input_gpu, c->gpu ? c->gpu : "");
		if (c->gpu_sms >= 0)
			rec_int(RM_input_gpu_sms, c->gpu_sms);
		if (c->gpu_mem >= 0)
			rec_int(RM_input_gpu_mem, c->gpu_mem);
	}
	free(c->gpu);
	c->gpu = NULL;
	rec_end();
	if (ranksel.mode == RANKS_LOWEST && c->traces->nranks > 1 && !compat_reference)
		rank_note(c->traces);
	if (!compat_reference)
		dropped_note(c->real, c->dropped);
}

/* Write the pending input record (to standard output), if any. */
static void
input_flush(void)
{
	struct input_ctx *c = pending;

	if (!c)
		return;
	pending = NULL;
	put_input(c);
}

/*
 * A run that dies while the first trace is read (a resource limit, issue
 * 21) still writes its input record, the same as a whole pass gives: a
 * hint the pass had not finished is read on its own, as before issue 30
 * (a reading that keeps no events, so no limit stops it).
 */
static void
input_at_exit(void)
{
	if (!pending)
		return;
	rec_abandon();
	rec_output(NULL);
	pending->cut = 1;
	input_flush();
	fflush(stdout);
}

/* One event for the pending input record's hints (idx in event_keys' order). */
static void
feed_hints(struct trace_state *s, const json_doc *d, const int *idx)
{
	struct event_ix ix;

	memcpy(&ix, idx, event_keys.ntop * sizeof *idx);	/* the top-level members */
	if (d->ntok == 0)
		ix.name = ix.cat = ix.dur = -1;
	if (s->mh && model_hint_event(s->mh, d, ix.name, ix.cat, ix.dur)) {
		s->mh = NULL;
		if (pending)
			pending->mh_done = 1;
	}
	if (s->fh && frames_hint_event(s->fh, d, ix.name, ix.cat)) {
		s->fh = NULL;
		if (pending)
			pending->fh_done = 1;
	}
}

static int
extract_trace(const char *path, int t)
{
	struct trace_state s;
	struct scan_stats st;
	char err[1024];
	int r, rc;
	sbuf title = SBUF_INIT;

	memset(&s, 0, sizeof s);
	s.t = t;
	s.path = path;
	s.names.tab = strtab_new();
	s.cats.tab = strtab_new();
	/* a terminal on stdin is almost always a forgotten operand or pipe */
	if (strcmp(path, "-") == 0 && isatty(0))
		note_msg("reading the trace from standard input, a terminal: name a trace file "
		    "or directory, or pipe one in (Ctrl-D ends the input)");
	s.z = zio_open(path);
	if (!s.z) {
		input_flush();
		err_msg("cannot open '%s': %s", path, strerror(errno));
		trace_state_free(&s);
		return EXIT_DATA;
	}
	if (pending && pending->t0 == t) {
		s.mh = pending->mh;
		s.fh = pending->fh;
	}
	if (strcmp(path, "-") == 0 && zio_empty(s.z)) {
		/* nothing was given, rather than a file broken to nothing (issue 27) */
		err_msg("'-': empty input: standard input is closed or empty (nothing was piped "
		    "in); nothing to analyze");
		zio_close(s.z);
		s.z = NULL;
		trace_state_free(&s);
		return EXIT_EMPTY;
	}
	/* every record waits for the trace's end, where the trace record goes first */
	if (!frame_records) {
		s.pc = pyctx_new();
		s.sh = shapes_new();
	}
	s.rsp = spool_new();
	s.links = links_new();
	s.rfp = spool_stream(s.rsp);
	rec_output(s.rfp);
	if (progress_label) {
		/*
		 * The file once: a label that names it already (the driver's
		 * "mapping: PATH") is the title; one that names its directory
		 * gets the file's base name (issue 31).
		 */
		const char *b = strrchr(path, '/');
		if (strstr(progress_label, path))
			sb_adds(&title, progress_label);
		else
			sb_printf(&title, "%s: %s", progress_label, b && b[1] ? b + 1 : path);
	}
	s.prog = progress_start(progress_label ? title.s : path, progress_flag);
	event_keys.ninner = python_ids ? 9 : 7;	/* no tool reads the Python ids */
	/* the scan on a thread of its own, the events' handling on this one (issue 30) */
	r = scanq_run_members(s.z, path, &event_keys, on_event, &doc_members, &s, &st, err,
	    sizeof err, &s.raw_off);
	if (pending) {
		/* the input record, before this trace's records: to standard output */
		if (pending->t0 == t && r != SCAN_ERROR) {
			pending->has_world = s.dist.has_world;
			pending->world = s.dist.world;
			if (s.ndev) {
				pending->has_gpu = 1;
				pending->gpu = s.dev[0].name ? xstrdup(s.dev[0].name) : NULL;
				pending->gpu_sms = s.dev[0].has & 1u << DF_SMS ? s.dev[0].v[DF_SMS] : -1;
				pending->gpu_mem = s.dev[0].has & 1u << DF_MEM ? s.dev[0].v[DF_MEM] : -1;
			}
		}
		rec_output(NULL);
		input_flush();
		rec_output(s.rfp);
	}
	progress_update(s.prog, zio_raw_offset(s.z), zio_raw_size(s.z), s.events);
	progress_stop(&s.prog);
	sb_free(&title);
	s.gzip = zio_is_gzip(s.z);
	zio_close(s.z);
	if (r == SCAN_ERROR) {
		/* the trace's records never leave the spool: no part of a broken trace goes on */
		trace_state_free(&s);
		fflush(stdout);
		err_msg("%s", err);
		return EXIT_DATA;
	}
	put_kept(&s);
	links_put_corrs(s.links, s.t);
	put_stats(&s, &st);
	rc = warn_trace(&s, &st);
	if (s.events == 0 && rc == EXIT_OK) {
		say_empty(path, &st);
		rc = EXIT_EMPTY;
	}
	trace_state_free(&s);
	return rc;
}

/*
 * Could model (a name or path: "Qwen/Qwen3-8B") be of family ("qwen3_moe")?
 * The family's leading letters ("qwen") in the model's, case aside: loose
 * on purpose, since one model file serves several models (SGLang's
 * deepseek_v2.py runs DeepSeek-V3), so only a plain contradiction warns.
 */
static int
family_fits(const char *model, const char *family)
{
	char lead[32], low[512];
	size_t i, n = 0;

	for (i = 0; family[i] && n + 1 < sizeof lead && ((family[i] >= 'a' && family[i] <= 'z') ||
	    (family[i] >= 'A' && family[i] <= 'Z')); i++)
		lead[n++] = (char)(family[i] | 0x20);
	lead[n] = '\0';
	for (i = 0; model[i] && i + 1 < sizeof low; i++)
		low[i] = (char)(model[i] >= 'A' && model[i] <= 'Z' ? model[i] | 0x20 : model[i]);
	low[i] = '\0';
	return n < 2 || strstr(low, lead) != NULL;
}

/*
 * The input record's server args, model and TP size (capture-and-cli.md
 * §2, fuse-detect.md §8), and the model family (issue 26): --model or the
 * server args name the model; the family comes from the traces' own
 * frames (the first of paths[0..npaths) that shows one).  Under --compat
 * reference only the server args count.
 */
static void
put_model(const char *json, const char *const *paths, size_t npaths,
    const struct modelhint *first)
{
	json_doc d = { 0 };
	int i, have_args;
	long long tp = 1;
	double dv;
	sbuf model = SBUF_INIT, fam = SBUF_INIT, ev = SBUF_INIT;
	const char *src = NULL, *fsrc = NULL;
	size_t k;

	have_args = json && json_parse(&d, json, strlen(json)) >= 0 && json_truthy(&d, 0);
	if (!have_args) {
		rec_null(RM_input_server_args);
	} else {
		rec_json(RM_input_server_args, json, strlen(json));
		if (d.tok[0].type == JSMN_OBJECT) {
			i = json_get(&d, 0, "model_path");
			if (!json_truthy(&d, i))
				i = json_get(&d, 0, "model");
			if (json_truthy(&d, i)) {
				json_pystr(&d, i, &model, NULL);
				src = "server_args";
			}
			i = json_get(&d, 0, "tp_size");
			if (json_truthy(&d, i)) {
				if (json_kind(&d, i) == JK_FLOAT && json_todouble(&d, i, &dv) && isfinite(dv))
					tp = (long long)dv;	/* int() truncates a float */
				else if (!json_coerce_int(&d, i, &tp)) {
					warn_msg("server args: tp_size is not an integer; using 1");
					tp = 1;
				}
			}
		} else
			warn_msg("server args are not a JSON object; no model or TP size taken from them");
	}
	if (model_opt) {
		sb_reset(&model);
		sb_adds(&model, model_opt);
		src = "option";
	}
	for (k = 0; !compat_reference && k < npaths && k < 3; k++)
		if (k == 0 && first ? model_hint_result(first, &fam, &ev, &fsrc) :
		    trace_model_hint(paths[k], &fam, &ev, &fsrc))
			break;
	/* (a local path, "/data/ckpt", names no family to contradict) */
	if (src && fam.len && model.len && model.s[0] != '/' && model.s[0] != '.' &&
	    !family_fits(model.s, fam.s))
		warn_msg("the model named (%s, from %s) and the model family the trace's frames "
		    "run (%s: %s) differ in name: the model-specific fuse patterns follow the "
		    "model named", model.s, !strcmp(src, "option") ? "--model" : "the server args",
		    fam.s, ev.s);
	if (src)
		rec_str(RM_input_model, model.s, model.len);
	if (fam.len)
		rec_str(RM_input_model_family, fam.s, fam.len);
	if (src || fam.len)
		rec_cstr(RM_input_model_source, src ? src : fsrc);
	if (fam.len)
		rec_str(RM_input_model_evidence, ev.s, ev.len);
	rec_int(RM_input_tp_size, tp);
	sb_free(&model);
	sb_free(&fam);
	sb_free(&ev);
	json_doc_free(&d);
}

static int
extract_operand(const char *arg, int *tindex)
{
	char real[PATH_MAX];
	struct tlist traces = { 0 };
	struct dropped dropped = { 0 };
	char *trace_dir = NULL;
	sbuf sa = SBUF_INIT, evidence = SBUF_INIT;
	struct stat st;
	int rc, r, is_dir = 0, have_sa = 0, any_ok = 0;
	size_t i;
	const char *fw;
	struct input_ctx in = { 0 };

	/*
	 * Standard input, a pipe (<(cmd) gives /dev/fd/N) or a character device
	 * is one stream: readable once, so no discovery and no content sniffing.
	 */
	if (strcmp(arg, "-") == 0 ||
	    (stat(arg, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))) {
		/*
		 * No path, folder or server args to look at: the framework is the
		 * option's, the capture's, or (not under --compat reference) what
		 * the stream's own frames say, learnt by its one pass as a file's
		 * is, the input record written when that pass ends.
		 */
		tlist_add(&traces, arg, 0, 0);
		in.real = arg;
		in.stream = 1;
		in.traces = &traces;
		in.dropped = &dropped;
		in.evidence = &evidence;
		fw = framework_canonical(framework);
		in.src = "option";
		if (strcmp(fw, "auto") != 0)
			in.fw = fw;
		else if (framework_captured && !compat_reference &&
		    strcmp(framework_canonical(framework_captured), "auto") != 0) {
			in.fw = framework_canonical(framework_captured);
			in.src = "capture";
		} else if (compat_reference)
			in.fw = default_framework(fallback, &in.src);
		else
			in.fh = frames_hint_new();
		if (!compat_reference)
			in.mh = model_hint_new();
		in.t0 = *tindex;
		pending = &in;
		rc = extract_trace(arg, (*tindex)++);
		input_flush();
		frames_hint_free(in.fh);
		model_hint_free(in.mh);
		tlist_free(&traces);
		sb_free(&evidence);
		return rc;
	}
	if (!realpath(arg, real)) {
		err_msg("cannot open '%s': %s", arg, strerror(errno));
		return EXIT_DATA;
	}
	if (stat(real, &st) == 0 && S_ISDIR(st.st_mode))
		is_dir = 1;
	if ((rc = discover_targets(real, &ranksel, &traces, &trace_dir, &dropped)) != 0) {
		free(trace_dir);
		dropped_free(&dropped);
		return rc;
	}
	if (trace_dir)
		have_sa = load_server_args_dir(trace_dir, &sa);
	if (have_sa == 0)
		have_sa = load_server_args_for(real, &sa);
	if (have_sa < 0) {
		tlist_free(&traces);
		free(trace_dir);
		sb_free(&sa);
		dropped_free(&dropped);
		return EXIT_DATA;
	}
	in.real = real;
	in.is_dir = is_dir;
	in.sa = have_sa > 0 ? sa.s : NULL;
	in.traces = &traces;
	in.dropped = &dropped;
	in.evidence = &evidence;
	in.fw = resolve_framework(framework, fallback, real, is_dir, in.sa, &traces, &in.src,
	    &evidence, &in.fh);
	if (!compat_reference && traces.n > 0)
		in.mh = model_hint_new();
	in.t0 = *tindex;
	pending = &in;
	if (!in.fh && !in.mh)
		input_flush();	/* nothing to learn from the first trace's pass */
	rc = EXIT_OK;
	for (i = 0; i < traces.n; i++) {
		r = extract_trace(traces.v[i].path, (*tindex)++);
		if (r == EXIT_OK)
			any_ok = 1;
		else if (r == EXIT_DATA)
			rc = EXIT_DATA;
	}
	input_flush();		/* (no trace was read) */
	if (rc == EXIT_OK && !any_ok)
		rc = EXIT_EMPTY;
	dropped_free(&dropped);
	frames_hint_free(in.fh);
	model_hint_free(in.mh);
	tlist_free(&traces);
	free(trace_dir);
	sb_free(&sa);
	sb_free(&evidence);
	return rc;
}

/*
 * A note when a directory holds traces of several ranks and the default
 * mode analyzes one (issue 14): the report must not pass for the job's.
 */
static void
rank_note(const struct tlist *traces)
{
	char text[512];
	long long r;
	const char *b;

	if (!traces->n)
		return;
	b = strrchr(traces->v[0].path, '/');
	r = traces->v[0].rank;
	if (traces->v[0].has_rank || rank_of_name(b ? b + 1 : traces->v[0].path, &r))
		snprintf(text, sizeof text, "Rank %lld of %zu analyzed (the traces name ranks "
		    "%.300s): the tables are that rank's. triage --all-ranks analyzes every rank "
		    "and compares them (rank-skew(1)).", r, traces->nranks, traces->ranks);
	else
		snprintf(text, sizeof text, "One trace of a directory whose traces name %zu "
		    "ranks (%.300s) analyzed. triage --all-ranks analyzes every rank and compares "
		    "them (rank-skew(1)).", traces->nranks, traces->ranks);
	rec_begin(RT_note);
	rec_cstr(RM_note_id, "ranks_analyzed");
	rec_cstr(RM_note_text, text);
	rec_end();
}

/*
 * --list-ranks: the ranks an operand's traces name, ascending, one a line
 * (what --rank accepts).  Returns an exit code: 3 when no trace names a
 * rank.
 */
static int
print_ranks(const char *arg)
{
	char real[PATH_MAX];
	struct tlist traces = { 0 };
	struct ranksel all = { RANKS_ALL, 0 };
	char *trace_dir = NULL;
	size_t i;
	int rc, any = 0;
	long long last = 0;

	if (!realpath(arg, real)) {
		err_msg("cannot open '%s': %s", arg, strerror(errno));
		return EXIT_DATA;
	}
	if ((rc = discover_targets(real, &all, &traces, &trace_dir, NULL)) != 0) {
		free(trace_dir);
		return rc;
	}
	/* the targets come in rank order: print each rank at its first trace */
	for (i = 0; i < traces.n; i++) {
		long long r = traces.v[i].rank;
		if (!traces.v[i].has_rank || (any && r == last))
			continue;
		printf("%lld\n", r);
		last = r;
		any = 1;
	}
	if (!any) {
		err_msg("no trace under '%s' names a rank (by its distributedInfo or its file name)",
		    real);
		rc = EXIT_EMPTY;
	}
	tlist_free(&traces);
	free(trace_dir);
	return rc;
}

/*
 * Discovery that leaves traces out says so (issue 25), in a note for the
 * report and on stderr: how many, why, and the first few names, relative
 * to the operand.  Other ranks are the rank note's (rank_note); traces
 * that name no rank are warned about by discovery already.
 */
static void
dropped_note(const char *dir, const struct dropped *d)
{
	static const char *const whys[] = { "another directory", "older", "merged", "no rank",
		"damaged", "annotated" };
	static const char *const words[] = {
		"in another directory than the one analyzed",
		"older than a trace of the same rank and stage",
		"merged-* files beside per-rank ones", "naming no rank",
		"unreadable (truncated or malformed: still being written, or damaged)",
		"made by trace-annotate (annotated copies, not captures)" };
	sbuf t = SBUF_INIT;
	size_t i, k, n = 0, shown, dl = strlen(dir);
	size_t per[6] = { 0, 0, 0, 0, 0, 0 };

	for (i = 0; i < d->n; i++)
		for (k = 0; k < 6; k++)
			if (!strcmp(d->why[i], whys[k])) {
				per[k]++;
				n++;
			}
	if (!n)
		return;
	sb_printf(&t, "%zu trace file%s under the input %s not analyzed:", n, n == 1 ? "" : "s",
	    n == 1 ? "was" : "were");
	for (k = 0, shown = 0; k < 6; k++) {
		size_t m = 0;
		if (!per[k])
			continue;
		sb_printf(&t, "%s %zu %s (", shown++ ? ";" : "", per[k], words[k]);
		for (i = 0; i < d->n; i++) {
			const char *p = d->path[i];
			if (strcmp(d->why[i], whys[k]) != 0)
				continue;
			if (m == 3) {
				sb_adds(&t, ", ...");
				break;
			}
			if (!strncmp(p, dir, dl) && p[dl] == '/')
				p += dl + 1;
			sb_printf(&t, "%s%.200s", m++ ? ", " : "", p);
		}
		sb_addc(&t, ')');
	}
	sb_adds(&t, ". Name a trace file, or a directory holding only the traces of one run, to "
	    "analyze another.");
	warn_msg("'%s': %s", dir, t.s);
	rec_begin(RT_note);
	rec_cstr(RM_note_id, "traces_not_analyzed");
	rec_str(RM_note_text, t.s, t.len);
	rec_end();
	sb_free(&t);
}
