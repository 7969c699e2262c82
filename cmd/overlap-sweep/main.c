/*
 * overlap-sweep: the overlap-opportunity table of the mapping/formal flow
 * (spec overlap.md).  Reads the formal record stream, passes every record
 * through, and at end of input appends one overlap_row record per table row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "num.h"
#include "opt.h"
#include "overlap.h"
#include "rec.h"
#include "rules.h"
#include "text.h"
#include "xalloc.h"

#define NSTAGES 3	/* extend, decode, all: the stage_index order */

static const char *stage_names[NSTAGES] = { "extend", "decode", "all" };

/*
 * A trace of one side that a bundle refers to: its place in the sort order
 * of §3.6 and, on the mapping side, its raw CPU data (taken from the trace
 * reader), which lives as long as a bundle refers to it.
 */
typedef struct {
	int refs;
	long long t;		/* the trace's index in the stream */
	size_t order;		/* position in the stream, breaks sort-key ties */
	int sidx;		/* stage_index of the trace's path stage */
	char *base;		/* file name of the path */
	rawdata_t raw;
} kept_t;

/* A stage bundle (§3.6): one trace's overlap kernels of one stage. */
typedef struct {
	kept_t *tr;
	oev_t *ev;
	size_t n;
} bundle_t;

typedef struct {
	int mapping;		/* mapping side: keep CPU ops and frames */
	size_t seq;
	bundle_t b[NSTAGES];
	const char *pid_substring;
} side_t;

/* Formal stage payloads (§1 step 3): per stage, the last trace's entries. */
typedef struct {
	char *stage;
	long long t;
	payload_t p;
} fpayload_t;

static long long table_limit;
static fpayload_t *fpay;
static size_t nfpay, capfpay;
static kernel_map_t kmap;

static const struct opt opts[] = {
	{ "mapping", 'm', "FILE", "the mapping trace's records (with its site records)" },
	{ "overlap-table-limit", 'l', "N", "overlap rows per stage (0 or less: all)" },
	{ "pid-substring", 'p', "TEXT", "analyze only GPU pids containing TEXT" },
	{ "drop-events", OPT_LONG, NULL,
	    "leave the kernel, launch, cpu_op and sync records out of the output" },
	{ NULL, 0, NULL, NULL }
};

static const struct tool tool = {
	"[-q] [-m FILE] [-l N] [-p TEXT] [--drop-events] [file ...]",
	"The overlap-opportunity table of the mapping/formal flow (overlap-sweep(1)):\n"
	"reads the formal record stream, passes every record through, and at its end\n"
	"appends one overlap_row record per table row, then per row an overlap_exposed\n"
	"record (where its kernel ran exposed).  FILE holds the mapping trace's staged\n"
	"records followed by kernel-map --sites-only's site records.  Without --mapping\n"
	"the records only pass through (with --drop-events, all but the events').",
	opts
};

/* ---- kept traces and bundles ---- */

static void
kept_release(kept_t *k)
{
	if (!k || k->refs > 0)
		return;
	rawdata_free(&k->raw);
	free(k->base);
	free(k);
}

/* Is trace a ahead of b in the (stage_index, file name) order of §3.6? */
static int
kept_before(const kept_t *a, const kept_t *b)
{
	int c;

	if (a->sidx != b->sidx)
		return a->sidx < b->sidx;
	c = strcmp(a->base, b->base);
	if (c != 0)
		return c < 0;
	return a->order < b->order;
}

/*
 * Offer a trace's events of one stage to the bundle map: the first trace in
 * sorted order wins the stage.  Traces arrive in stream order, so a later
 * one replaces the bundle only when it sorts strictly earlier.
 */
static void
bundle_offer(side_t *sd, int st, kept_t *tr, const oev_t *ev, size_t n)
{
	bundle_t *b = &sd->b[st];
	kept_t *old = b->tr;

	if (old && !kept_before(tr, old))
		return;
	free(b->ev);
	b->ev = xmalloc((n ? n : 1) * sizeof *b->ev);
	memcpy(b->ev, ev, n * sizeof *ev);
	b->n = n;
	b->tr = tr;
	tr->refs++;
	if (old) {
		old->refs--;
		kept_release(old);
	}
}

/*
 * select_heaviest_pid (§2.6 step 4) over the trace's overlap kernels: the
 * pid with the largest summed duration, preferring TP00 pids when no pid
 * substring was given.  Returns NOSTR when no kernel qualifies.
 */
static uint32_t
select_pid(const side_t *sd, const struct trace_reader *r, const struct trace *tr)
{
	imap ix = { 0 };
	uint32_t *pids = NULL, best = NOSTR;
	double *sum = NULL, bsum = 0;
	size_t n = 0, cap = 0, i;
	int pass, filtered = sd->pid_substring && *sd->pid_substring;

	for (i = 0; i < tr->nk; i++) {
		const struct tkernel *k = &tr->k[i];
		uint32_t pid = trace_thread_pid(r, k->thread);
		int isnew;
		uint64_t *v;
		if (filtered && !strstr(S(pid), sd->pid_substring))
			continue;
		v = imap_insert(&ix, pid, n, &isnew);
		if (isnew) {
			size_t c2 = cap;
			xgrow(&pids, &c2, n + 1, sizeof *pids);
			if (c2 != cap)
				sum = xreallocarray(sum, c2, sizeof *sum);
			cap = c2;
			pids[n] = pid;
			sum[n] = 0.0;
			n++;
		}
		sum[*v] += k->dur;
	}
	for (pass = filtered ? 1 : 0; pass < 2 && best == NOSTR; pass++) {
		for (i = 0; i < n; i++) {
			if (pass == 0 && !strstr(S(pids[i]), "TP00"))
				continue;
			if (best == NOSTR || sum[i] > bsum) {
				best = pids[i];
				bsum = sum[i];
			}
		}
	}
	free(pids);
	free(sum);
	imap_free(&ix);
	return best;
}

/*
 * Canonical name and overlap category of an interned raw kernel name,
 * computed once per distinct name: kernel names repeat thousands of times
 * and the keyword scan dominated the run.
 */
static void
name_rules(uint32_t raw, uint32_t *canon, int *cat)
{
	static uint32_t *cc;	/* canon + 1, 0 = not yet computed */
	static int *ct;
	static size_t cap;
	static sbuf b;
	const char *c;

	if (raw >= cap) {
		size_t old = cap;
		xgrow(&cc, &cap, (size_t)raw + 1, sizeof *cc);
		ct = xreallocarray(ct, cap, sizeof *ct);
		memset(cc + old, 0, (cap - old) * sizeof *cc);
	}
	if (!cc[raw]) {
		sb_reset(&b);
		canonicalize_name(S(raw), SLEN(raw), &b);
		cc[raw] = intern(sb_str(&b), b.len) + 1;
		c = overlap_classify(S(raw), SLEN(raw));
		ct[raw] = strcmp(c, "compute") == 0 ? OC_COMPUTE :
		    strcmp(c, "communication") == 0 ? OC_COMMUNICATION :
		    strcmp(c, "memory") == 0 ? OC_MEMORY :
		    strcmp(c, "elementwise") == 0 ? OC_ELEMENTWISE : OC_OTHER;
	}
	*canon = cc[raw] - 1;
	*cat = ct[raw];
}

/* The stream of a kernel without one (§2.6): its thread's name, then "tid=<tid>". */
static uint32_t
kernel_stream(const struct trace_reader *r, const imap *tnames, const struct tkernel *k,
    sbuf *b)
{
	const uint64_t *v;

	if (k->stream != NOSTR && SLEN(k->stream) > 0)
		return k->stream;
	if ((v = imap_get(tnames, k->thread)))
		return (uint32_t)*v;
	sb_reset(b);
	sb_adds(b, "tid=");
	sb_adds(b, S(trace_thread_tid(r, k->thread)));
	return intern(b->s, b->len);
}

/* The trace is complete: build its overlap events and offer its stages. */
static void
on_trace(void *ctx, struct trace_reader *r, struct trace *tr)
{
	side_t *sd = ctx;
	uint32_t pid = select_pid(sd, r, tr);
	oev_t *ev[NSTAGES] = { NULL };
	size_t nev[NSTAGES] = { 0 }, cap[NSTAGES] = { 0 }, i, idx = 0;
	sbuf b = SBUF_INIT;
	imap tnames = { 0 };
	kept_t *kp = xcalloc(1, sizeof *kp);
	const char *path = S(tr->path), *slash = strrchr(path, '/');
	int st, others;

	kp->order = sd->seq++;
	kp->t = tr->t;
	kp->sidx = stage_index(S(tr->stage));
	kp->base = xstrdup(slash ? slash + 1 : path);
	/* only non-empty names are kept; a later one overrides (§2.6 step 1) */
	for (i = 0; i < tr->ntn; i++)
		*imap_put(&tnames, tr->tn[i].thread, NULL) = tr->tn[i].name;
	for (i = 0; pid != NOSTR && i < tr->nk; i++) {
		const struct tkernel *k = &tr->k[i];
		oev_t *e;
		if (trace_thread_pid(r, k->thread) != pid)
			continue;
		/* before trace-stage has run, a kernel is in its trace's path stage */
		st = k->stage != NOSTR ? stage_index(S(k->stage)) : kp->sidx;
		if (st > 2)
			die(EXIT_DATA, "%s: trace %lld: unknown kernel stage '%s'", r->rd.name,
			    tr->t, k->stage != NOSTR ? S(k->stage) : S(tr->stage));
		xgrow(&ev[st], &cap[st], nev[st] + 1, sizeof *ev[st]);
		e = &ev[st][nev[st]++];
		memset(e, 0, sizeof *e);
		name_rules(k->name, &e->canon, &e->cat);
		e->stream = kernel_stream(r, &tnames, k, &b);
		e->has_eid = k->ext_src != EXT_NONE;
		e->eid = k->ext;
		e->win = e->band = NOSTR;
		if (sd->mapping && tr->py_context) {
			uint32_t names[6];
			struct tpyband *bd;
			size_t nb;
			e->win = pylist_intern(names, trace_py_names(r, tr, k->py_window, names, 6));
			bd = trace_py_band(r, tr, k->py_window_band, &nb);
			e->band = pyband_intern(bd, nb);
			free(bd);
		}
		e->idx = idx++;
		e->ts = k->ts;
		e->dur = k->dur;
		e->end = k->ts + k->dur;
	}
	sb_free(&b);
	imap_free(&tnames);
	if (sd->mapping) {
		if (tr->py_context) {
			uint32_t names[6];
			kp->raw.py = 1;
			kp->raw.opchain = xmalloc((tr->nop ? tr->nop : 1) * sizeof *kp->raw.opchain);
			for (i = 0; i < tr->nop; i++)
				kp->raw.opchain[i] = pylist_intern(names,
				    trace_py_names(r, tr, tr->op[i].py_scopes, names, 6));
		}
		kp->raw.ops = tr->op;
		kp->raw.nops = tr->nop;
		kp->raw.fr = tr->fr;
		kp->raw.nfr = tr->nfr;
		tr->op = NULL;
		tr->fr = NULL;
		tr->nop = tr->nfr = tr->capop = tr->capfr = 0;
	}
	/* render_stages: `all` only when it is the sole stage (§3.4) */
	others = nev[0] > 0 || nev[1] > 0;
	for (st = 0; st < NSTAGES; st++) {
		if (nev[st] && !(st == 2 && others))
			bundle_offer(sd, st, kp, ev[st], nev[st]);
		free(ev[st]);
	}
	kept_release(kp);
}

/* Which records a side keeps (§2.6, §6.3 step 1, §6.5). */
static int
keep(void *ctx, struct trace_reader *r, enum rec_type t, const void *rec)
{
	const side_t *sd = ctx;

	(void)r;
	switch (t) {
	case RT_kernel:
		return ((const struct rec_kernel *)rec)->overlap;
	case RT_thread_name:
		return ((const struct rec_thread_name *)rec)->name.n > 0;
	case RT_cpu_op: {
		/* only complete events with their own External id: no corr fallback (§6.3) */
		const struct rec_cpu_op *o = rec;
		return sd->mapping && REC_HAS(o, cpu_op, external_id) && o->dur > 0;
	}
	case RT_frame: {
		/* a trace with Python contexts has its chains resolved: no frame is read */
		const struct rec_frame *f = rec;
		return sd->mapping && !r->tr.py_context && f->dur > 0 &&
		    !scope_builtin_frame(f->name.s, f->name.n);
	}
	default:
		return 1;
	}
}

/* Site records: the mapping map (mapping side), the formal stage payloads (formal side). */
static void
on_line(void *ctx, struct trace_reader *r, enum rec_type t)
{
	const side_t *sd = ctx;
	struct rec_site s;
	payload_t *p = NULL;
	char *scope, *stage;
	int global = 0;

	if (t != RT_site)
		return;
	REC_READ(&r->rd, site, &s);
	scope = rstr_dup(s.scope);
	stage = rstr_dup(s.stage);
	if (sd->mapping && strcmp(scope, "mapping_global") == 0) {
		global = 1;
	} else if (sd->mapping && strcmp(scope, "mapping_stage") == 0) {
		p = kernel_map_stage(&kmap, stage, 1);
	} else if (!sd->mapping && strcmp(scope, "formal_stage") == 0) {
		size_t i;
		if (!REC_HAS(&s, site, t))
			rec_die(&r->rd, "site record: a formal_stage site needs member 't'");
		for (i = 0; i < nfpay; i++)
			if (strcmp(fpay[i].stage, stage) == 0)
				break;
		if (i == nfpay) {
			xgrow(&fpay, &capfpay, nfpay + 1, sizeof *fpay);
			memset(&fpay[nfpay], 0, sizeof *fpay);
			fpay[nfpay].stage = xstrdup(stage);
			fpay[nfpay].t = s.t;
			nfpay++;
		} else if (fpay[i].t != s.t) {
			/* a later trace's payload of the same stage wins (§1 step 3) */
			payload_free(&fpay[i].p);
			fpay[i].t = s.t;
		}
		p = &fpay[i].p;
	}
	if (p || global) {
		entry_t e;
		rec_parse(&r->rd);
		if (entry_from_json(&r->rd.doc, 0, &e) < 0)
			rec_die(&r->rd, "site record is not a payload entry");
		if (global)
			kernel_map_add_global(&kmap, &e);
		else
			*payload_add(p) = e;
	}
	free(scope);
	free(stage);
}

/* --drop-events: the formal stream's event records are not copied (rec_is_event) */
static int drop_events;

/*
 * Read one record stream of a side.  With `pass`, every line is copied to
 * stdout.  `collect` turns the overlap bookkeeping on (off in single-trace
 * mode).
 */
static void
read_stream(side_t *sd, FILE *fp, const char *name, int pass, int collect)
{
	struct trace_reader rd;
	struct trace_ops ops = { 0 };

	ops.ctx = sd;
	ops.pass = pass;
	if (drop_events)	/* rec_is_event's types */
		ops.consume = TR_MASK(kernel) | TR_MASK(launch) | TR_MASK(cpu_op) | TR_MASK(sync) |
		    TR_MASK(kernel_stages) | TR_MASK(kernel_name);
	if (collect) {
		ops.collect = TR_MASK(kernel) | TR_MASK(thread_name);
		if (sd->mapping)
			ops.collect |= TR_MASK(cpu_op) | TR_MASK(frame);
		ops.keep = keep;
		ops.on_trace = on_trace;
		ops.on_line = on_line;
	}
	trace_reader_init(&rd, ov_str, &ops);
	trace_read(&rd, fp, name);
	trace_reader_free(&rd);
}

/* pick_stage_value (§3.5) over the bundle map. */
static const bundle_t *
pick_bundle(const side_t *sd, int st)
{
	int i, n = 0, only = -1;

	if (sd->b[st].tr)
		return &sd->b[st];
	if (sd->b[2].tr)
		return &sd->b[2];
	for (i = 0; i < NSTAGES; i++)
		if (sd->b[i].tr) {
			n++;
			only = i;
		}
	return n == 1 ? &sd->b[only] : NULL;
}

/* pick_stage_value over the formal payloads. */
static const payload_t *
pick_payload(const char *stage)
{
	size_t i;

	for (i = 0; i < nfpay; i++)
		if (strcmp(fpay[i].stage, stage) == 0)
			return &fpay[i].p;
	for (i = 0; i < nfpay; i++)
		if (strcmp(fpay[i].stage, "all") == 0)
			return &fpay[i].p;
	return nfpay == 1 ? &fpay[0].p : NULL;
}

/* The rows written so far: the next one's id (issue 29). */
static long long nrows_written;

static void
emit_row(const char *stage, const orow_t *r)
{
	rec_begin(RT_overlap_row);
	rec_cstr(RM_overlap_row_stage, stage);
	rec_cstr(RM_overlap_row_priority, r->priority);
	rec_cstr(RM_overlap_row_verdict, r->verdict);
	rec_str(RM_overlap_row_kernel, S(r->kernel), SLEN(r->kernel));
	if (r->scope != NOSTR)
		rec_str(RM_overlap_row_python_scope, S(r->scope), SLEN(r->scope));
	else
		rec_cstr(RM_overlap_row_python_scope, "unmapped");
	rec_num(RM_overlap_row_total_us, r->total_us);
	rec_num(RM_overlap_row_share_pct, r->share_pct);
	rec_num(RM_overlap_row_exclusive_ratio, r->exclusive_ratio);
	rec_num(RM_overlap_row_hidden_ratio, r->hidden_ratio);
	rec_cstr(RM_overlap_row_dep_risk, r->risk);
	rec_cstr(RM_overlap_row_dependency_signal, r->signal);
	rec_cstr(RM_overlap_row_recommendation, r->recommendation);
	rec_id(RM_overlap_row_id, "overlap", ++nrows_written);
	rec_end();
}

/*
 * The mapping side of each stage's source map (§6.3-6.6) depends on the
 * mapping trace alone, so it is built as soon as the mapping is read: while
 * the formal records are still being made upstream, and so that the mapping
 * trace's CPU data can be freed before the formal side is read.
 */
static srcmap_t premap[NSTAGES];
static int have_premap[NSTAGES];
/*
 * 1 + the stage whose map premap[st] would repeat (the same mapping
 * bundle, lookups reaching the same payloads), 0: a map of its own.  A
 * trace of one stage serves all three: built once (issue 21).
 */
static int same_map[NSTAGES];

static void
build_mapping_maps(const side_t *mapping)
{
	int st;

	for (st = 0; st < NSTAGES; st++) {
		const bundle_t *mb = pick_bundle(mapping, st);
		int o;
		if (!mb)
			continue;
		have_premap[st] = 1;
		for (o = 0; o < st; o++)
			if (have_premap[o] && !same_map[o] && pick_bundle(mapping, o) == mb &&
			    kernel_map_same_lookup(&kmap, stage_names[o], stage_names[st]))
				break;
		if (o < st) {
			same_map[st] = o + 1;
			continue;
		}
		srcmap_build(&premap[st], mb->ev, mb->n, &mb->tr->raw, &kmap, stage_names[st]);
	}
	srcmap_cache_free();
}

/*
 * Give every stage that will use a repeated map one of its own, before any
 * is changed by its formal payload: copies for all but the last user, which
 * takes the map itself unless its own stage uses it.
 */
static void
unshare_maps(const int *use)
{
	int o, st, last;

	for (o = 0; o < NSTAGES; o++) {
		if (!have_premap[o] || same_map[o])
			continue;
		for (last = -1, st = o + 1; st < NSTAGES; st++)
			if (use[st] && same_map[st] == o + 1)
				last = st;
		for (st = o + 1; st < NSTAGES; st++) {
			if (!use[st] || same_map[st] != o + 1)
				continue;
			if (st == last && !use[o]) {
				premap[st] = premap[o];
				memset(&premap[o], 0, sizeof premap[o]);
			} else {
				srcmap_copy(&premap[st], &premap[o]);
			}
			same_map[st] = 0;
		}
	}
}

/* The per-stage loop of §1 step 5. */
static void
emit_tables(side_t *formal)
{
	int st, others = formal->b[0].tr || formal->b[1].tr, use[NSTAGES];

	for (st = 0; st < NSTAGES; st++)
		use[st] = formal->b[st].tr && !(st == 2 && others) && have_premap[st];
	unshare_maps(use);
	for (st = 0; st < NSTAGES; st++) {
		bundle_t *fb = &formal->b[st];
		srcmap_t *sm = &premap[st];
		agg_t *agg;
		orow_t *rows;
		size_t nagg, nrows, i;
		long long first;
		double busy;

		if (!fb->tr || (st == 2 && others))
			continue;
		if (!have_premap[st])
			continue;
		busy = ov_sweep(fb->ev, fb->n);
		agg = ov_aggregate(fb->ev, fb->n, &nagg);
		srcmap_merge_payload(sm, pick_payload(stage_names[st]));
		rows = ov_rows(fb->ev, fb->n, busy, agg, nagg, sm, table_limit, &nrows);
		first = nrows_written + 1;
		for (i = 0; i < nrows; i++)
			emit_row(stage_names[st], &rows[i]);
		ov_write_exposed(fb->tr->t, stage_names[st], fb->ev, fb->n, rows, nrows, first);
		free(rows);
		free(agg);
	}
}

static void
side_free(side_t *sd)
{
	int st;

	for (st = 0; st < NSTAGES; st++) {
		free(sd->b[st].ev);
		if (sd->b[st].tr) {
			sd->b[st].tr->refs--;
			kept_release(sd->b[st].tr);
		}
	}
	memset(sd->b, 0, sizeof sd->b);
}

int
main(int argc, char **argv)
{
	const char *mapfile = NULL, *pid_substring = NULL, *errstr;
	side_t formal = { 0 }, mapping = { 0 };
	int c, i;
	size_t k;

	tool_init(argc, argv);
	while ((c = opt_next(&tool, argc, argv)) != -1) {
		switch (c) {
		case 'l':
			if (!parse_num(optarg, -(1LL << 62), 1LL << 62, &table_limit, &errstr))
				opt_bad(&tool, "overlap-table-limit", errstr, optarg);
			break;
		case 'm':
			mapfile = optarg;
			break;
		case 'p':
			pid_substring = optarg;
			break;
		case OPT_LONG:
			drop_events = 1;
			break;
		default:
			opt_usage(&tool, EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	/* max(0, --overlap-table-limit): a negative limit means unlimited */
	if (table_limit < 0)
		table_limit = 0;
	mapping.mapping = 1;
	mapping.pid_substring = formal.pid_substring = pid_substring;

	ov_str = strtab_new();
	if (mapfile) {
		FILE *fp = rec_open(mapfile);
		read_stream(&mapping, fp, strcmp(mapfile, "-") ? mapfile : "<stdin>", 0, 1);
		if (fp != stdin)
			fclose(fp);
		kernel_map_end_global(&kmap);
		build_mapping_maps(&mapping);
		side_free(&mapping);
	}
	if (argc == 0) {
		read_stream(&formal, stdin, "<stdin>", 1, mapfile != NULL);
	} else {
		for (i = 0; i < argc; i++) {
			FILE *fp = rec_open(argv[i]);
			read_stream(&formal, fp, strcmp(argv[i], "-") ? argv[i] : "<stdin>", 1,
			    mapfile != NULL);
			if (fp != stdin)
				fclose(fp);
		}
	}
	rec_require_records();
	/* single-trace mode never has overlap rows (§1 step 1) */
	if (mapfile)
		emit_tables(&formal);

	side_free(&formal);
	for (k = 0; k < NSTAGES; k++)
		srcmap_free(&premap[k]);
	for (k = 0; k < nfpay; k++) {
		free(fpay[k].stage);
		payload_free(&fpay[k].p);
	}
	free(fpay);
	kernel_map_free(&kmap);
	scope_cache_free();
	pylist_free();
	strtab_free(ov_str);
	return tool_finish(EXIT_OK);
}
