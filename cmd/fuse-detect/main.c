/*
 * fuse-detect: match the serving framework's known fusion patterns against
 * the kernel rows of every (trace, stage) and emit the fuse-opportunity
 * table as fuse_row records (fuse-detect.md; fuse-detect(1)).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "detect.h"
#include "err.h"
#include "json.h"
#include "match.h"
#include "num.h"
#include "opt.h"
#include "payload.h"
#include "rec.h"
#include "sbuf.h"
#include "strtab.h"
#include "text.h"
#include "words.h"
#include "xalloc.h"

#define NONE ((size_t)-1)
#define MAX_TRACE_INDEX 1000000	/* beyond this a "t" is not an index we track */

enum explain_mode { EXPLAIN_OFF, EXPLAIN_STDERR, EXPLAIN_RECORDS };

/* What an input record contributes to detection (§1 step 4, §8 steps 2-3). */
typedef struct {
	char *framework;	/* NULL: the record has none */
	int is_mapping;
	int args_truthy;	/* server_args is a non-empty object or other truthy value */
	char *model;		/* lowercased model path; "" when none */
	char *family;		/* lowercased model family; "" when none */
	unsigned dtypes;	/* DT_* the server args' quantization names */
	long long tp_size;
} input_t;

/* The input in force when a trace record opened trace t. */
typedef struct {
	int known;
	int is_mapping;
	size_t formal;		/* index into inputs, or NONE */
} tinfo_t;

/*
 * The kernel rows of one (t, stage) that hit a keyword of the catalog,
 * collected until the group ends; the others only say whether an MoE
 * kernel ran.
 */
typedef struct {
	int open;
	long long t;
	sbuf stage;
	double total_us;
	frow_t *rows;
	size_t n, cap;
	int moe;		/* a row of the group, kept or not, is an MoE kernel */
	unsigned dtypes;	/* DT_* its rows' kernel names, sites and CPU ops show */
	int mapping;		/* a mapping trace's: no fuse table, no rows kept */
	fctx_t ctx;		/* the detection context, known when the group opens */
	unsigned char *pass;	/* per catalog pattern: passes fuse_gate for ctx */
} group_t;

/* A (t, stage) whose rows have been seen. */
typedef struct {
	long long t;
	char *stage;
} done_t;

static enum explain_mode explain;
static done_t *done;
static size_t ndone, done_cap;
static input_t *inputs;
static size_t ninputs, inputs_cap, cur_formal = NONE, cur_mapping = NONE;
static tinfo_t *traces;
static size_t traces_cap;
static group_t grp;
static catalog_t cat;
static strtab *rowstr;		/* the rows' shared strings (frow_t) */
static int warned_no_input;

/*
 * tp_size of a server-args object (§8 step 3): falsy becomes 1, then
 * Python int().  Where int() would raise (a string like "2.0", NaN, a
 * list) the reference crashes; we warn and use 1 instead.
 */
static long long
args_tp_size(const json_doc *d, int obj, const char *where)
{
	int i = json_get(d, obj, "tp_size");
	sbuf t = SBUF_INIT;
	const char *s;
	long long v = 1;
	double x;
	size_t n;

	if (!json_truthy(d, i))
		return 1;
	switch (json_kind(d, i)) {
	case JK_TRUE:
		return 1;
	case JK_INT:
		s = json_span(d, i, &n);
		if (num_py_int(s, n, &v))
			return v;
		return s[0] == '-' ? INT64_MIN : INT64_MAX;	/* beyond int64: only the sign matters */
	case JK_FLOAT:
		if (json_todouble(d, i, &x) && isfinite(x)) {
			x = trunc(x);
			if (x >= 9.2e18)
				return INT64_MAX;
			if (x <= -9.2e18)
				return INT64_MIN;
			return (long long)x;
		}
		break;
	case JK_STR:
		json_str(d, i, &t, NULL);
		if (num_py_int(t.s, t.len, &v)) {
			sb_free(&t);
			return v;
		}
		break;
	default:
		break;
	}
	json_pystr(d, i, &t, NULL);
	warn_msg("%s: server_args tp_size '%s' is not an integer; using 1", where,
	    sbs(&t));
	sb_free(&t);
	return 1;
}

/*
 * The data types the server args' quantization names (issue 26): SGLang's
 * quantization and kv_cache_dtype, vLLM's quantization (fp8, w8a8_fp8,
 * modelopt_fp4, mxfp4, w8a8_int8, awq, gptq...), read as words.
 */
static unsigned
args_dtypes(const json_doc *d)
{
	static const char *const keys[] = { "quantization", "kv_cache_dtype", NULL };
	unsigned bits = 0;
	size_t k;

	for (k = 0; keys[k]; k++) {
		int i = json_get(d, 0, keys[k]);
		sbuf v = SBUF_INIT;
		words w = { 0 };
		if (i < 0 || json_kind(d, i) != JK_STR)
			continue;
		json_str(d, i, &v, NULL);
		words_add(&w, sbs(&v), v.len);
		bits |= dtype_evidence(&w);
		/* "modelopt" alone is NVIDIA ModelOpt's FP8 */
		if (words_find(&w, "modelopt", 8) == 0 && w.n == 1)
			bits |= DT_FP8;
		words_free(&w);
		sb_free(&v);
	}
	return bits;
}

/* Remember an input record's framework and server args. */
static void
read_input(rec_reader *r)
{
	sbuf s = SBUF_INIT, where = SBUF_INIT;
	struct rec_input x;
	json_doc d = { 0 };
	input_t *in;
	int v;

	REC_READ(r, input, &x);
	xgrow(&inputs, &inputs_cap, ninputs + 1, sizeof *inputs);
	in = &inputs[ninputs];
	memset(in, 0, sizeof *in);
	in->tp_size = 1;
	in->framework = rstr_dup(x.framework);
	in->is_mapping = rstr_eq(x.role, "mapping");
	if (REC_HAS(&x, input, server_args)) {
		rec_parse_json(r, &d, x.server_args);
		in->args_truthy = json_truthy(&d, 0);
		if (json_kind(&d, 0) == JK_OBJ) {
			v = json_get(&d, 0, "model_path");
			if (!json_truthy(&d, v))
				v = json_get(&d, 0, "model");
			if (json_truthy(&d, v))
				json_pystr(&d, v, &s, NULL);
			sb_printf(&where, "%s:%zu", r->name, r->lineno);
			in->tp_size = args_tp_size(&d, 0, sbs(&where));
			in->dtypes = args_dtypes(&d);
		}
	}
	/* a model named by --model rather than by server args */
	if (!compat_reference && s.len == 0 && REC_HAS(&x, input, model))
		sb_add(&s, x.model.s, x.model.n);
	py_lower(sbs(&s), s.len, &where);
	in->model = xstrdup(sbs(&where));
	sb_reset(&s);
	if (!compat_reference && REC_HAS(&x, input, model_family))
		py_lower(x.model_family.s, x.model_family.n, &s);
	in->family = xstrdup(sbs(&s));
	if (in->is_mapping)
		cur_mapping = ninputs;
	else
		cur_formal = ninputs;
	ninputs++;
	sb_free(&s);
	sb_free(&where);
	json_doc_free(&d);
}

static void
read_trace(rec_reader *r)
{
	struct rec_trace x;
	size_t old = traces_cap;

	REC_READ(r, trace, &x);
	if (x.t < 0 || x.t > MAX_TRACE_INDEX)
		return;
	xgrow(&traces, &traces_cap, (size_t)x.t + 1, sizeof *traces);
	if (traces_cap > old)
		memset(traces + old, 0, (traces_cap - old) * sizeof *traces);
	traces[x.t].known = 1;
	traces[x.t].is_mapping = rstr_eq(x.role, "mapping");
	traces[x.t].formal = cur_formal;
}

static void
explain_one(const fresult_t *res, const cand_t *c, const fctx_t *ctx)
{
	sbuf detail = SBUF_INIT;

	fuse_explain(res, c, grp.rows, ctx, &detail);
	if (explain == EXPLAIN_RECORDS) {
		rec_begin(RT_fuse_explain);
		rec_int(RM_fuse_explain_t, grp.t);
		rec_str(RM_fuse_explain_stage, sbs(&grp.stage), grp.stage.len);
		rec_cstr(RM_fuse_explain_pattern, c->p->pattern);
		rec_cstr(RM_fuse_explain_verdict, verdict_name(c->v));
		rec_str(RM_fuse_explain_detail, sbs(&detail), detail.len);
		rec_end();
	} else {
		fflush(stdout);
		err_msg("explain: t=%lld %s: %s: %s: %s",
		    grp.t, sbs(&grp.stage), c->p->pattern, verdict_name(c->v),
		    sbs(&detail));
	}
	sb_free(&detail);
}

/* The rows written so far: the next one's id (issue 29). */
static long long nrows_written;

/*
 * The names of a candidate's related kernel rows, as a JSON array, at most
 * FUSE_EVIDENCE_KERNELS of them: what trace-annotate marks on the timeline
 * (issue 29).  The evidence cell shows three; this is their whole list.
 */
#define FUSE_EVIDENCE_KERNELS 50

static void
evidence_kernels(const cand_t *c, const frow_t *rows, sbuf *out)
{
	size_t r;

	sb_reset(out);
	sb_addc(out, '[');
	for (r = 0; r < c->nrows && r < FUSE_EVIDENCE_KERNELS; r++) {
		const char *name = rows[c->rows[r]].name;
		if (r)
			sb_addc(out, ',');
		json_quote(out, name, strlen(name));
	}
	sb_addc(out, ']');
}

static void
emit_row(const fresult_t *res, const cand_t *c)
{
	sbuf cell = SBUF_INIT;

	rec_begin(RT_fuse_row);
	rec_int(RM_fuse_row_t, grp.t);
	rec_str(RM_fuse_row_stage, sbs(&grp.stage), grp.stage.len);
	rec_cstr(RM_fuse_row_pattern, c->p->pattern);
	rec_cstr(RM_fuse_row_confidence, fuse_confidence(c));
	rec_num(RM_fuse_row_related_us, c->related_us);
	rec_num(RM_fuse_row_share_pct, c->share);
	fuse_evidence(c, grp.rows, res->total_us, &grp.ctx, &cell);
	rec_str(RM_fuse_row_evidence, sbs(&cell), cell.len);
	fuse_locations(c, grp.rows, &cell);
	rec_str(RM_fuse_row_current_locations, sbs(&cell), cell.len);
	rec_cstr(RM_fuse_row_candidate_path, c->p->candidate_path);
	fuse_rationale(c, grp.rows, &grp.ctx, &cell);
	rec_str(RM_fuse_row_rationale, sbs(&cell), cell.len);
	rec_cstr(RM_fuse_row_status, fuse_status(c));
	rec_int(RM_fuse_row_priority, c->p->priority);
	rec_cstr(RM_fuse_row_origin, fuse_origin(c));
	evidence_kernels(c, grp.rows, &cell);
	rec_json(RM_fuse_row_evidence_kernels, cell.s, cell.len);
	rec_id(RM_fuse_row_id, "fuse", ++nrows_written);
	rec_end();
	sb_free(&cell);
}

static void
row_free(frow_t *row)
{
	free(row->name);
	fuse_row_free_hits(row);
}

static const char *
shared(const char *s, size_t n)
{
	if (!rowstr)
		rowstr = strtab_new();
	return strtab_str(rowstr, strtab_intern(rowstr, s, n));
}

static void
group_clear(void)
{
	size_t i;

	for (i = 0; i < grp.n; i++)
		row_free(&grp.rows[i]);
	grp.n = 0;
	grp.open = 0;
	grp.moe = 0;
	grp.dtypes = 0;
	grp.mapping = 0;
}


/*
 * The open group's detection context: the formal input in force when the
 * group's trace began (so several inputs in one stream each keep their
 * own framework); the server args fall back to the latest mapping input's
 * when the formal ones are falsy (§1 step 4).  Records that change these
 * end a group, so the context found when its first row comes holds for
 * all of them.  Returns 0 for a mapping trace's group.
 */
static int
group_context(fctx_t *ctx)
{
	const input_t *formal = NULL, *args = NULL;
	size_t fi = cur_formal;
	fctx_t dflt = { "sglang", "", 1, 0, 0, "", 0 };

	*ctx = dflt;
	if (grp.t >= 0 && (size_t)grp.t < traces_cap && traces[grp.t].known) {
		if (traces[grp.t].is_mapping)
			return 0;	/* the reference builds fuse tables for formal traces only */
		fi = traces[grp.t].formal;
	}
	if (fi != NONE)
		formal = &inputs[fi];
	if (formal && formal->framework) {
		ctx->framework = formal->framework;
		/* one deployment: a formal trace nothing named (stdin) takes the mapping's */
		if (!compat_reference && strcmp(ctx->framework, "none") == 0 && cur_mapping != NONE &&
		    inputs[cur_mapping].framework)
			ctx->framework = inputs[cur_mapping].framework;
	} else if (!warned_no_input++) {
		warn_msg("no input record names the framework; assuming sglang");
	}
	if (formal && formal->args_truthy)
		args = formal;
	else if (cur_mapping != NONE && inputs[cur_mapping].args_truthy)
		args = &inputs[cur_mapping];
	if (args) {
		ctx->model = args->model;
		ctx->tp_size = args->tp_size;
		ctx->dtypes = args->dtypes;
	}
	/* a --model option is on the input record, not in its server args */
	if (formal && !formal->args_truthy && formal->model[0])
		ctx->model = formal->model;
	if (formal && formal->family[0])
		ctx->family = formal->family;
	else if (cur_mapping != NONE && inputs[cur_mapping].family[0])
		ctx->family = inputs[cur_mapping].family;
	ctx->corrected = !compat_reference;
	return 1;
}

/* Detect and emit the open group's fuse rows. */
static void
group_flush(void)
{
	fctx_t ctx = grp.ctx;
	fresult_t res;
	size_t i;

	if (!grp.open)
		return;
	if (grp.mapping) {
		group_clear();
		return;
	}
	ctx.moe_present = grp.moe;
	ctx.dtypes |= grp.dtypes;
	grp.ctx.dtypes = ctx.dtypes;
	fuse_detect(&cat, grp.rows, grp.n, grp.total_us, &ctx, &res);
	for (i = 0; i < res.nout; i++)
		emit_row(&res, &res.c[res.out[i]]);
	if (explain != EXPLAIN_OFF)
		for (i = 0; i < res.n; i++)
			explain_one(&res, &res.c[i], &ctx);
	fresult_free(&res);
	group_clear();
}

/*
 * seen_group: has (t, stage) had a group already?  Records it if not.
 * Detection needs a stage's whole row list at once, so a second run of
 * rows for the same group is a broken stream, not a new group.
 */
static int
seen_group(long long t, const char *stage)
{
	size_t i;

	for (i = 0; i < ndone; i++)
		if (done[i].t == t && strcmp(done[i].stage, stage) == 0)
			return 1;
	xgrow(&done, &done_cap, ndone + 1, sizeof *done);
	done[ndone].t = t;
	done[ndone].stage = xstrdup(stage);
	ndone++;
	return 0;
}

static words hw;		/* the corrected haystack, reused row after row */

static void
read_kernel_row(rec_reader *r)
{
	struct rec_kernel_row x;
	char *stage;
	frow_t *row;
	haystack_t hs = { SBUF_INIT, SBUF_INIT };
	size_t i;
	int keep;

	REC_READ(r, kernel_row, &x);
	stage = rstr_dup(x.stage);
	if (grp.open && (grp.t != x.t || strcmp(sbs(&grp.stage), stage) != 0))
		group_flush();
	if (!grp.open) {
		if (seen_group(x.t, stage))
			rec_die(r, "kernel rows of trace %lld stage '%s' are not contiguous", x.t,
			    stage);
		grp.open = 1;
		grp.t = x.t;
		sb_reset(&grp.stage);
		sb_adds(&grp.stage, stage);
		grp.total_us = x.stage_total_us;
		grp.mapping = !group_context(&grp.ctx);
		if (!grp.pass)
			grp.pass = xcalloc(cat.n + 1, 1);
		for (i = 0; i < cat.n; i++)
			grp.pass[i] = fuse_gate(&cat.p[i], &grp.ctx) == V_ACCEPTED;
	}
	free(stage);
	xgrow(&grp.rows, &grp.cap, grp.n + 1, sizeof *grp.rows);
	row = &grp.rows[grp.n];
	memset(row, 0, sizeof *row);
	row->name = rstr_dup(x.kernel);
	row->location = shared(x.location.s, x.location.n);
	row->cpu_op = shared(x.cpu_op.s, x.cpu_op.n);
	row->category = shared(x.category.s, x.category.n);
	row->total_us = x.total_us;
	/*
	 * The row is matched against the catalog once, here; detection reads
	 * the bits.  A row that hits no keyword takes no part in it (§6), so
	 * it is not kept: a stage of a million distinct kernel names costs
	 * little to hold (issue 21).
	 */
	if (strcmp(row->category, "moe") == 0)
		grp.moe = 1;
	if (compat_reference) {
		haystack_build(&hs, row->name, row->location, row->cpu_op);
		keep = !grp.mapping && fuse_row_hits(&cat, grp.pass, &hs, row);
		haystack_free(&hs);
	} else {
		/* whole words of the kernel's identity, its sites and CPU ops (issue 26) */
		unsigned nloc;
		haystack_words(&hw, row->name, row->location, row->cpu_op, &nloc);
		long f = words_find(&hw, "fused", 5);
		row->fused = f >= 0 && hw.w[f].field == 0;	/* the identity is field 0, first */
		grp.dtypes |= dtype_evidence(&hw);
		keep = !grp.mapping && fuse_row_hits_words(&cat, grp.pass, &hw, row);
	}
	if (REC_HAS(&x, kernel_row, entry)) {
		json_doc d = { 0 };
		entry_t e = { 0 };
		sbuf locs = SBUF_INIT, tmp = SBUF_INIT;

		rec_parse_json(r, &d, x.entry);
		if (json_kind(&d, 0) != JK_OBJ || entry_from_json(&d, 0, &e) < 0) {
			entry_free(&e);
			rec_die(r, "kernel_row record: member 'entry' is not a site entry or null");
		}
		/* of the entry, detection reads only its sites' display locations */
		for (i = 0; keep && i < e.nsites; i++) {
			if (!e.sites[i].location || !e.sites[i].location[0])
				continue;
			site_display_location(&e.sites[i], &tmp);
			sb_add(&locs, sbs(&tmp), tmp.len);
			sb_addc(&locs, '\0');
			row->nsitelocs++;
		}
		if (keep)
			row->sitelocs = shared(sbs(&locs), locs.len);
		entry_free(&e);
		sb_free(&locs);
		sb_free(&tmp);
		json_doc_free(&d);
	}
	if (keep)
		grp.n++;
	else
		row_free(row);
}

static void
filter(FILE *fp, const char *name)
{
	rec_reader r;

	rec_reader_init(&r, fp, name);
	while (rec_next(&r)) {
		enum rec_type t = rec_type_of(&r);
		if (t == RT_kernel_row) {
			read_kernel_row(&r);
			rec_line(r.line, r.len);
			continue;
		}
		/* A group's rows are contiguous, so any other record ends it. */
		group_flush();
		if (t == RT_input)
			read_input(&r);
		else if (t == RT_trace)
			read_trace(&r);
		rec_line(r.line, r.len);
	}
	rec_reader_free(&r);
}

static const struct opt opts[] = {
	{ "explain", 'x', "[=WHERE]",
	    "why each pattern did or did not match: stderr (default) or records" },
	{ "patterns", 'p', "FILE", "replace the built-in catalog (may be repeated)" },
	{ NULL, 0, NULL, NULL }
};

static const struct tool tool = {
	"[-q] [--explain[=stderr|records]] [-p FILE] [file ...]",
	"Match the serving framework's fusion patterns (fuse-patterns(5)) against the\n"
	"kernel_row records of every trace and stage, and write the fuse-opportunity\n"
	"table as fuse_row records after each stage's rows.  Every record passes\n"
	"through.  The catalog is built in; --patterns FILE replaces it.",
	opts
};

int
main(int argc, char **argv)
{
	const char **pfiles;
	size_t npfiles = 0, i;
	int ch;
	FILE *fp;

	tool_init(argc, argv);
	pfiles = xcalloc((size_t)argc + 1, sizeof *pfiles);
	while ((ch = opt_next(&tool, argc, argv)) != -1) {
		switch (ch) {
		case 'p':
			pfiles[npfiles++] = optarg;
			break;
		case 'x':
			if (!optarg || strcmp(optarg, "stderr") == 0)
				explain = EXPLAIN_STDERR;
			else if (strcmp(optarg, "records") == 0)
				explain = EXPLAIN_RECORDS;
			else
				opt_bad(&tool, "explain", "not stderr or records", optarg);
			break;
		default:
			opt_usage(&tool, EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	for (i = 0; i < npfiles; i++) {
		if (strcmp(pfiles[i], "-") == 0 && (argc == 0 || strcmp(argv[0], "-") == 0)) {
			err_msg("cannot read both patterns and records from stdin");
			opt_usage(&tool, EXIT_USAGE);
		}
	}

	/* --patterns files replace the built-in catalog, in the order given. */
	if (npfiles == 0)
		catalog_load_builtin(&cat);
	for (i = 0; i < npfiles; i++)
		catalog_load_file(&cat, pfiles[i]);
	free(pfiles);

	if (argc == 0) {
		filter(stdin, "<stdin>");
	} else {
		for (; *argv; argv++) {
			fp = rec_open(*argv);
			filter(fp, fp == stdin ? "<stdin>" : *argv);
			if (fp != stdin)
				fclose(fp);
		}
	}
	group_flush();
	rec_require_records();

	for (i = 0; i < ninputs; i++) {
		free(inputs[i].framework);
		free(inputs[i].model);
		free(inputs[i].family);
	}
	words_free(&hw);
	free(inputs);
	for (i = 0; i < ndone; i++)
		free(done[i].stage);
	free(done);
	free(traces);
	free(grp.rows);
	free(grp.pass);
	sb_free(&grp.stage);
	strtab_free(rowstr);
	catalog_free(&cat);
	return tool_finish(EXIT_OK);
}
