/*
 * kernel-roofline: each kernel's work against the GPU's roofline (issue 28).
 *
 * Reads the record stream after kernel-map (and step-stats).  Per trace it
 * keeps the op_shape records (the recorded inputs of the ops that launched
 * GPU work, modeled once each: model.h), the device records and, per
 * (stage, kernel, shape class), the launches, time, FLOPs and bytes of the
 * analyzed process's kernels; at the trace's stats record it writes one
 * kernel_eff record per such row and one roofline record per stage, against
 * the GPU table's peaks (gpuspec.h), then the stats line.  Every record passes
 * through; memory is the aggregates, not the kernels.
 *
 * With --mapping FILE (the mapping trace of a mapping/formal pair), the
 * formal trace's kernels that no op with shapes launched (CUDA-graph
 * replays) take the per-launch mean of the mapping's kernels of the same
 * stage and name.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gpuspec.h"
#include "imap.h"
#include "json.h"
#include "model.h"
#include "num.h"
#include "opt.h"
#include "rec.h"
#include "rules.h"
#include "sbuf.h"
#include "spool.h"
#include "strtab.h"
#include "text.h"
#include "trace.h"
#include "xalloc.h"

#define NONE UINT32_MAX
#define PEND_BLOCK 4096		/* waiting kernels read back at a time */
#define UNMODELED_SHOWN 12

enum { O_SPECS = OPT_LONG, O_GPU, O_MAPPING, O_DROP };

static const struct opt opts[] = {
	{ "gpu", O_GPU, "NAME", "the GPU, whatever the trace's device records say" },
	{ "gpu-specs", O_SPECS, "FILE", "replace the built-in GPU table (gpu-specs(5))" },
	{ "mapping", O_MAPPING, "FILE",
	    "formal run: model CUDA-graph kernels from this mapping trace's records" },
	{ "drop-events", O_DROP, NULL,
	    "leave the kernel, launch, cpu_op and sync records out of the output" },
	{ NULL, 0, NULL, NULL }
};

static const struct tool tool = {
	"[-q] [--gpu NAME] [--gpu-specs F] [--mapping F]\n [--drop-events] [file]",
	"Model the FLOPs and bytes of every kernel whose launching CPU op recorded\n"
	"its input shapes, and compare them with the GPU's dense peaks: one\n"
	"\"kernel_eff\" record per stage, kernel and shape, and one \"roofline\"\n"
	"record per stage (the share of GPU time modeled, its time at the roofline).\n"
	"Every input record passes through (with --drop-events, all but the events').",
	opts
};

/* One modeled op_shape of the trace. */
struct shp {
	struct mresult m;
	uint32_t op;
};

/* A row: (stage, kernel, class, source). */
struct agg {
	uint32_t stage, kernel, cls, op;
	int dtype, bound, mapped;
	long long launches;
	double time, flops, bytes;
};

/* Unmodeled time: (stage, op, reason). */
struct unm {
	uint32_t stage, op;
	const char *reason;
	long long launches;
	double us;
};

struct stagesum {
	uint32_t stage;
	double us, modeled;
	long long steps;
};

struct dev {
	long long id, sm, mem;
	int ccmaj, ccmin;
	char *name;
};

/* The mapping's rows by (stage, kernel), summed over classes. */
struct mapped {
	long long launches;
	double flops, bytes, time, dtime;	/* dtime: the dominant class's time */
	int dtype, bound;
	uint32_t op;
};

static struct {
	const char *specs_file, *gpu_opt, *mapping_file;
	int drop_events;		/* --drop-events */
	struct gputab tab;
	const struct gpu *forced;
	strtab *str;
	uint32_t *canon, *tf32;		/* per raw name id: canonical id; 1 TF32, 2 a collective (NONE: not yet) */
	size_t ncache;
	/* the trace being read */
	int open;
	long long t;
	uint32_t trace_stage;
	char *selected;
	int graph_launches;
	imap shape_ix;
	struct shp *shp;
	size_t nshp, capshp;
	strtab *aggkeys, *unmkeys;
	struct agg *agg;
	size_t nagg, capagg;
	struct unm *unm;
	size_t nunm, capunm;
	struct stagesum *st;
	size_t nst, capst;
	struct dev *dev;
	size_t ndev, capdev;
	/* --mapping */
	strtab *mapkeys;
	struct mapped *map;
	size_t nmap, capmap;
	int collecting;			/* reading the mapping file: no output */
	long long kernel_traces;
	long long nkern, nsel;		/* kernel records read, and those of the analyzed process */
	/*
	 * Kernels waiting for their stages (struct kview, in record order): a
	 * spool, read from its front as the kernel_stages runs come, so that
	 * memory stays a few megabytes whatever their number (issue 30).
	 */
	struct spool *pend;
	size_t npend, pcur;
	struct kview *pbuf;		/* read from the spool a block at a time: */
	size_t pfrom, pn;		/* pbuf holds records [pfrom, pfrom + pn) */
	size_t nkrec, kcovered;		/* the trace's kernel records, and those its kernel_stages covered */
	int kst_seen;
} run;

static uint32_t
intern(const char *s, size_t n)
{
	return strtab_intern(run.str, s, n);
}

static uint32_t
intern_c(const char *s)
{
	return intern(s, strlen(s));
}

static const char *
S(uint32_t id)
{
	return strtab_str(run.str, id);
}

/* ---- per-trace state ---- */

static void
trace_reset(void)
{
	size_t i;

	imap_free(&run.shape_ix);
	run.nshp = run.nagg = run.nunm = run.nst = 0;
	run.npend = run.pcur = run.nkrec = run.kcovered = 0;
	spool_free(run.pend);
	run.pend = NULL;
	free(run.pbuf);
	run.pbuf = NULL;
	run.pfrom = run.pn = 0;
	run.kst_seen = 0;
	strtab_free(run.aggkeys);
	strtab_free(run.unmkeys);
	run.aggkeys = strtab_new();
	run.unmkeys = strtab_new();
	for (i = 0; i < run.ndev; i++)
		free(run.dev[i].name);
	run.ndev = 0;
	free(run.selected);
	run.selected = NULL;
	run.graph_launches = 0;
	run.trace_stage = NONE;
}

static struct stagesum *
stage_of(uint32_t stage)
{
	size_t i;

	for (i = 0; i < run.nst; i++)
		if (run.st[i].stage == stage)
			return &run.st[i];
	xgrow(&run.st, &run.capst, run.nst + 1, sizeof *run.st);
	memset(&run.st[run.nst], 0, sizeof run.st[0]);
	run.st[run.nst].stage = stage;
	return &run.st[run.nst++];
}

/*
 * The canonical name of a raw kernel name (kernel-map's row key), whether
 * it runs on tensor cores in fp32 (*tf32) and whether it is a collective
 * (*comm, by classify_kernel), cached per raw name: the category rules cost
 * more than the rest of a kernel record, and a trace repeats its names
 * (issue 30).
 */
static uint32_t
canonical(uint32_t id, int *tf32, int *comm)
{
	struct rstr raw = { S(id), strtab_len(run.str, id) };
	size_t old = run.ncache;

	if (id >= run.ncache) {
		xgrow(&run.canon, &run.ncache, (size_t)id + 1, sizeof *run.canon);
		run.tf32 = xreallocarray(run.tf32, run.ncache, sizeof *run.tf32);
		for (; old < run.ncache; old++)
			run.canon[old] = run.tf32[old] = NONE;
	}
	if (run.canon[id] == NONE) {
		sbuf b = SBUF_INIT;
		canonicalize_name(raw.s, raw.n, &b);
		run.canon[id] = intern(b.s ? b.s : "", b.len);
		/* an fp32 GEMM kernel on tensor cores says so in its name */
		run.tf32[id] = text_has_ci(raw.s, raw.n, "tf32") ||
		    text_has_ci(raw.s, raw.n, "tensorop_s") || text_has_ci(raw.s, raw.n, "xmma_gemm_f32f32_tf32");
		if (!strcmp(classify_kernel(raw.s, raw.n), "communication"))
			run.tf32[id] |= 2;
		sb_free(&b);
	}
	*tf32 = (int)(run.tf32[id] & 1);
	*comm = (int)(run.tf32[id] >> 1 & 1);
	return run.canon[id];
}

static struct agg *
agg_of(uint32_t stage, uint32_t kernel, uint32_t cls, int mapped)
{
	uint32_t key[4] = { stage, kernel, cls, (uint32_t)mapped }, id, before;

	before = strtab_count(run.aggkeys);
	id = strtab_intern(run.aggkeys, (const char *)key, sizeof key);
	if (strtab_count(run.aggkeys) > before) {
		xgrow(&run.agg, &run.capagg, run.nagg + 1, sizeof *run.agg);
		memset(&run.agg[run.nagg], 0, sizeof run.agg[0]);
		run.agg[run.nagg].stage = stage;
		run.agg[run.nagg].kernel = kernel;
		run.agg[run.nagg].cls = cls;
		run.agg[run.nagg].mapped = mapped;
		run.agg[run.nagg].op = NONE;
		run.nagg++;
	}
	return &run.agg[id];
}

/*
 * The ops of an aggregate: one class and shape can come from several ops
 * (aten::addmm with a bias beside aten::mm), which the row then names
 * together, in the order they came, rather than the last one alone.
 */
static void
agg_op(struct agg *a, uint32_t op)
{
	const char *part = S(op), *comma, *have, *p;
	size_t n;
	sbuf b = SBUF_INIT;

	if (a->op == NONE || a->op == op) {
		a->op = op;
		return;
	}
	/* op may name several already (a mapping row's): each part once */
	for (; *part; part = comma ? comma + 2 : part + n) {
		comma = strstr(part, ", ");
		n = comma ? (size_t)(comma - part) : strlen(part);
		have = S(a->op);
		for (p = have; n && (p = memmem(p, strlen(p), part, n)) != NULL; p++)
			if ((p == have || (p >= have + 2 && p[-2] == ',' && p[-1] == ' ')) &&
			    (p[n] == '\0' || (p[n] == ',' && p[n + 1] == ' ')))
				break;
		if (p || n == 0)
			continue;	/* named already */
		sb_reset(&b);
		sb_printf(&b, "%s, %.*s", have, (int)n, part);
		a->op = intern(b.s, b.len);
	}
	sb_free(&b);
}

static void
unmodeled(uint32_t stage, uint32_t op, const char *reason, double us)
{
	uint32_t rid = intern_c(reason), key[3] = { stage, op, rid }, id, before;

	before = strtab_count(run.unmkeys);
	id = strtab_intern(run.unmkeys, (const char *)key, sizeof key);
	if (strtab_count(run.unmkeys) > before) {
		xgrow(&run.unm, &run.capunm, run.nunm + 1, sizeof *run.unm);
		memset(&run.unm[run.nunm], 0, sizeof run.unm[0]);
		run.unm[run.nunm].stage = stage;
		run.unm[run.nunm].op = op;
		run.unm[run.nunm].reason = S(rid);
		run.nunm++;
	}
	run.unm[id].launches++;
	run.unm[id].us += us;
}

/* ---- records ---- */

static void
read_shape(rec_reader *r)
{
	struct rec_op_shape x;
	struct shp *s;
	char *op;
	int isnew;
	uint64_t *v;

	REC_READ(r, op_shape, &x);
	v = imap_put(&run.shape_ix, (uint64_t)x.id, &isnew);
	if (!isnew)
		return;		/* ids are unique within a trace; the first counts */
	xgrow(&run.shp, &run.capshp, run.nshp + 1, sizeof *run.shp);
	*v = run.nshp;
	s = &run.shp[run.nshp++];
	op = rstr_dup(x.op);
	s->op = intern(x.op.s, x.op.n);
	model_op(op, REC_HAS(&x, op_shape, dims) ? x.dims.s : NULL, x.dims.n,
	    REC_HAS(&x, op_shape, types) ? x.types.s : NULL, x.types.n,
	    REC_HAS(&x, op_shape, concrete) ? x.concrete.s : NULL, x.concrete.n, &s->m);
	free(op);
}

static void
read_device(rec_reader *r)
{
	struct rec_device x;
	struct dev *d;

	REC_READ(r, device, &x);
	xgrow(&run.dev, &run.capdev, run.ndev + 1, sizeof *run.dev);
	d = &run.dev[run.ndev++];
	d->id = x.id;
	d->name = REC_HAS(&x, device, name) ? rstr_dup(x.name) : xstrdup("");
	d->sm = REC_HAS(&x, device, num_sms) ? x.num_sms : -1;
	d->mem = REC_HAS(&x, device, total_global_mem) ? x.total_global_mem : -1;
	d->ccmaj = REC_HAS(&x, device, compute_major) ? (int)x.compute_major : -1;
	d->ccmin = REC_HAS(&x, device, compute_minor) ? (int)x.compute_minor : -1;
}

/*
 * A memcpy or memset from its own bytes (-1: not recorded): DtoD reads and
 * writes them, a memset writes them; a copy to or from the host has no model.
 */
static int
copy_model(struct rstr name, long long bytes, double *traffic, const char **why)
{
	int memset = text_has(name.s, name.n, "Memset");

	if (!memset && !text_has(name.s, name.n, "DtoD")) {
		*why = "a host-device copy: bounded by the host link, not the GPU's memory";
		return 0;
	}
	if (bytes < 0) {
		*why = "a copy whose bytes the trace does not record";
		return 0;
	}
	*traffic = memset ? (double)bytes : 2.0 * (double)bytes;
	return 1;
}

static const char *const no_op_graph = "no CPU op with recorded shapes launched it "
    "(CUDA-graph replays, or launches outside any op)";
static const char *const no_op = "no CPU op with recorded shapes launched it";
static const char *const no_shapes = "the trace records no input shapes (profiled without "
    "record_shapes)";
static const char *const collective = "collective communication: bounded by the "
    "interconnect, not modeled";

/*
 * A kernel record as the figures need it.  Under trace-stage --late-stages
 * the record comes without its stage and sel, which the trace's
 * kernel_stages give later: it waits in run.pend until then (issue 30).
 */
struct kview {
	uint32_t name;			/* the raw name, interned */
	unsigned copy : 1, has_bytes : 1, has_shape : 1, has_frac : 1;
	double dur, shape_frac;
	long long bytes, shape;
	size_t ord;			/* its place among the trace's kernel records */
};

static void
account(const struct kview *k, uint32_t stage)
{
	struct rstr name = { S(k->name), strtab_len(run.str, k->name) };
	uint32_t kname, label;
	struct stagesum *ss;
	uint64_t *v;
	int tf32, comm;
	double traffic;
	const char *why = NULL;

	run.nsel++;
	ss = stage_of(stage);
	ss->us += k->dur;
	kname = canonical(k->name, &tf32, &comm);
	if (k->copy) {
		/* a copy is modeled by its own bytes, never by its op's shapes */
		if (!copy_model(name, k->has_bytes ? k->bytes : -1, &traffic, &why))
			unmodeled(stage, k->name, why, k->dur);
		else {
			struct agg *a = agg_of(stage, kname, intern_c("bytes moved"), 0);
			agg_op(a, intern_c(text_has(name.s, name.n, "Memset") ? "memset" : "memcpy"));
			a->dtype = DT_NONE;
			a->launches++;
			a->time += k->dur;
			a->bytes += traffic;
			ss->modeled += k->dur;
		}
		return;
	}
	if (k->has_shape && (v = imap_get(&run.shape_ix, (uint64_t)k->shape))) {
		const struct shp *s = &run.shp[*v];
		double f = k->has_frac && k->shape_frac >= 0 && k->shape_frac <= 1 ? k->shape_frac : 1;
		struct agg *a;
		if (!s->m.ok) {
			unmodeled(stage, s->op, s->m.reason, k->dur);
			return;
		}
		a = agg_of(stage, kname, intern_c(s->m.cls), 0);
		agg_op(a, s->op);
		a->dtype = s->m.fp32_gemm && tf32 ? DT_TF32 : s->m.dtype;
		a->bound |= s->m.bound;
		a->launches++;
		a->time += k->dur;
		a->flops += f * s->m.flops;
		a->bytes += f * s->m.bytes;
		ss->modeled += k->dur;
		return;
	}
	if (comm)
		label = intern_c("(collective)"), why = collective;
	else if (k->has_shape)
		label = intern_c("-"), why = "its op_shape record is missing";
	else
		label = intern_c("-"), why = run.nshp == 0 ? no_shapes :
		    run.graph_launches ? no_op_graph : no_op;
	if (run.nmap) {
		uint32_t key[2] = { stage, kname };
		uint32_t id = strtab_find(run.mapkeys, (const char *)key, sizeof key);
		if (id != NONE && run.map[id].launches > 0) {
			const struct mapped *m = &run.map[id];
			struct agg *a = agg_of(stage, kname, intern_c("mapping trace, per launch"), 1);
			agg_op(a, m->op);
			a->dtype = m->dtype;
			a->bound |= m->bound;
			a->launches++;
			a->time += k->dur;
			a->flops += m->flops / (double)m->launches;
			a->bytes += m->bytes / (double)m->launches;
			ss->modeled += k->dur;
			return;
		}
	}
	unmodeled(stage, label, why, k->dur);
}

static void
read_kernel(rec_reader *r)
{
	struct rec_kernel k;
	struct kview v;
	int late;

	REC_READ(r, kernel, &k);
	run.nkern++;
	if (!run.open || k.t != run.t)
		return;
	v.ord = run.nkrec++;
	late = !REC_HAS(&k, kernel, stage) && !REC_HAS(&k, kernel, sel);
	if (!late && !k.sel)
		return;
	v.name = intern(k.name.s, k.name.n);
	v.copy = text_has(k.cat.s, k.cat.n, "emcpy") || text_has(k.cat.s, k.cat.n, "emset");
	v.has_bytes = REC_HAS(&k, kernel, bytes);
	v.bytes = k.bytes;
	v.has_shape = REC_HAS(&k, kernel, shape);
	v.shape = k.shape;
	v.has_frac = REC_HAS(&k, kernel, shape_frac);
	v.shape_frac = k.shape_frac;
	v.dur = k.dur;
	if (late) {
		if (!run.pend)
			run.pend = spool_new();
		spool_append(run.pend, &v, sizeof v);
		run.npend++;
		return;
	}
	account(&v, REC_HAS(&k, kernel, stage) ? intern(k.stage.s, k.stage.n) :
	    run.trace_stage != NONE ? run.trace_stage : intern_c("all"));
}

/* A run of a kernel_stages record: its kernels waiting in run.pend, if sel, are counted. */
static void
stage_run(void *ctx, size_t from, size_t n, const char *stage, int sel)
{
	uint32_t id = stage ? intern(stage, strlen(stage)) :
	    run.trace_stage != NONE ? run.trace_stage : intern_c("all");
	const struct kview *v;

	(void)ctx;
	for (; run.pcur < run.npend; run.pcur++) {
		if (run.pcur >= run.pfrom + run.pn) {
			/* the next block of those appended so far */
			size_t k = run.npend - run.pcur < PEND_BLOCK ? run.npend - run.pcur : PEND_BLOCK;
			if (!run.pbuf)
				run.pbuf = xmalloc(PEND_BLOCK * sizeof *run.pbuf);
			spool_read(run.pend, (unsigned long long)run.pcur * sizeof *v, run.pbuf,
			    k * sizeof *v);
			run.pfrom = run.pcur;
			run.pn = k;
		}
		v = &run.pbuf[run.pcur - run.pfrom];
		if (v->ord >= from + n)
			break;
		if (sel && v->ord >= from)
			account(v, id);
	}
}

static void
read_stages(rec_reader *r)
{
	struct rec_kernel_stages x;

	REC_READ(r, kernel_stages, &x);
	if (!run.open || x.t != run.t)
		return;
	run.kcovered = trace_stage_runs(r, &x, run.kcovered, run.nkrec, stage_run, NULL);
	run.kst_seen = 1;
}

/* ---- the trace's figures ---- */

static int
cmp_agg(const void *pa, const void *pb)
{
	const struct agg *a = pa, *b = pb;
	int c = stage_index(S(a->stage)) - stage_index(S(b->stage));

	if (c)
		return c;
	if (a->stage != b->stage)
		return strcmp(S(a->stage), S(b->stage));
	if (a->time != b->time)
		return a->time > b->time ? -1 : 1;
	return strcmp(S(a->kernel), S(b->kernel));
}

static int
cmp_unm(const void *pa, const void *pb)
{
	const struct unm *a = pa, *b = pb;

	if (a->us != b->us)
		return a->us > b->us ? -1 : 1;
	return strcmp(S(a->op), S(b->op));
}

/* The analyzed process's GPU: the table entry, or NULL and why. */
static const struct gpu *
trace_gpu(const char **why, char *buf, size_t len, const char **src)
{
	const struct dev *d = NULL;
	size_t i;

	*src = "option";
	if (run.forced)
		return run.forced;
	*src = "device";
	if (run.ndev == 0) {
		*why = "the trace has no device record (Kineto's deviceProperties); --gpu NAME "
		    "names the GPU";
		return NULL;
	}
	if (run.ndev == 1)
		d = &run.dev[0];
	for (i = 0; !d && run.selected && i < run.ndev; i++) {
		char id[32];
		snprintf(id, sizeof id, "%lld", run.dev[i].id);
		if (!strcmp(id, run.selected))
			d = &run.dev[i];
	}
	for (i = 1; !d && i < run.ndev; i++)
		if (strcmp(run.dev[i].name, run.dev[0].name) || run.dev[i].sm != run.dev[0].sm ||
		    run.dev[i].mem != run.dev[0].mem)
			break;
	if (!d && i == run.ndev)
		d = &run.dev[0];	/* every device alike */
	if (!d) {
		*why = "the trace's devices differ and none is the analyzed process";
		return NULL;
	}
	return gpu_match(&run.tab, d->name, d->sm, d->ccmaj, d->ccmin, d->mem, why, buf, len);
}

static void
json_peaks(const struct gpu *g, sbuf *o)
{
	int dt;
	char b[40];

	sb_reset(o);
	sb_addc(o, '{');
	for (dt = DT_NONE + 1; dt < DT_COUNT; dt++)
		if (g->tflops[dt] > 0)
			sb_printf(o, "%s\"%s\":%s", o->len > 1 ? "," : "", dtype_key(dt),
			    num_json(g->tflops[dt], b));
	if (g->fp64_tensor > 0)
		sb_printf(o, "%s\"fp64_tensor\":%s", o->len > 1 ? "," : "",
		    num_json(g->fp64_tensor, b));
	sb_addc(o, '}');
}

/* A row's time at the roofline (0: none), and whether compute bounds it. */
static double
roof_of(const struct gpu *g, const struct agg *a, int *compute, double *peak)
{
	double tm, tc;

	*compute = 0;
	*peak = 0;
	if (!g || g->mem_gbps <= 0)
		return 0;
	tm = a->bytes / (g->mem_gbps * 1e3);
	if (a->dtype == DT_NONE || a->flops == 0)
		return tm;
	*peak = gpu_peak(g, a->dtype, 1);
	if (*peak <= 0)
		return 0;
	tc = a->flops / (*peak * 1e6);
	*compute = tc >= tm;
	return tc >= tm ? tc : tm;
}

static void
write_eff(const struct agg *a, const struct gpu *g)
{
	double roof, peak;
	int compute;

	rec_begin(RT_kernel_eff);
	rec_int(RM_kernel_eff_t, run.t);
	rec_cstr(RM_kernel_eff_stage, S(a->stage));
	rec_cstr(RM_kernel_eff_kernel, S(a->kernel));
	rec_cstr(RM_kernel_eff_shape, S(a->cls));
	if (a->op != NONE)
		rec_cstr(RM_kernel_eff_op, S(a->op));
	if (a->dtype != DT_NONE)
		rec_cstr(RM_kernel_eff_dtype, dtype_key(a->dtype));
	if (a->mapped)
		rec_cstr(RM_kernel_eff_source, "mapping");
	if (a->bound)
		rec_cstr(RM_kernel_eff_estimate, "bound");
	rec_int(RM_kernel_eff_launches, a->launches);
	rec_num(RM_kernel_eff_time_us, a->time);
	rec_num(RM_kernel_eff_flops, a->flops);
	rec_num(RM_kernel_eff_bytes, a->bytes);
	if (a->time > 0) {
		rec_num(RM_kernel_eff_tflops, a->flops / a->time / 1e6);
		rec_num(RM_kernel_eff_gbps, a->bytes / a->time / 1e3);
	}
	if (a->bytes > 0)
		rec_num(RM_kernel_eff_intensity, a->flops / a->bytes);
	roof = roof_of(g, a, &compute, &peak);
	if (peak > 0)
		rec_num(RM_kernel_eff_peak_tflops, peak);
	if (roof > 0) {
		rec_cstr(RM_kernel_eff_bound, compute ? "compute" : "memory");
		rec_num(RM_kernel_eff_roof_us, roof);
		if (a->time > 0)
			rec_num(RM_kernel_eff_pct_of_roof, 100.0 * roof / a->time);
	}
	rec_end();
}

static void
write_roofline(const struct stagesum *ss, const struct gpu *g, const char *why, const char *src,
    const struct agg *rows, size_t nrows, sbuf *tmp)
{
	double actual = 0, roof = 0, r, peak;
	size_t i, k, shown = 0;
	int compute, est = 0;

	for (i = 0; i < nrows; i++) {
		if (rows[i].stage != ss->stage)
			continue;
		if ((r = roof_of(g, &rows[i], &compute, &peak)) > 0) {
			actual += rows[i].time;
			roof += r;
			est |= rows[i].bound;
		}
	}
	rec_begin(RT_roofline);
	rec_int(RM_roofline_t, run.t);
	rec_cstr(RM_roofline_stage, S(ss->stage));
	if (g) {
		rec_cstr(RM_roofline_gpu, g->name);
		rec_cstr(RM_roofline_gpu_source, src);
		if (g->mem_gbps > 0)
			rec_num(RM_roofline_mem_gbps, g->mem_gbps);
		json_peaks(g, tmp);
		rec_json(RM_roofline_peaks, tmp->s, tmp->len);
	} else
		rec_cstr(RM_roofline_gpu_reason, why);
	rec_num(RM_roofline_stage_us, ss->us);
	rec_num(RM_roofline_modeled_us, ss->modeled);
	rec_num(RM_roofline_modeled_pct, pct(ss->modeled, ss->us));
	if (actual > 0) {
		rec_num(RM_roofline_actual_us, actual);
		rec_num(RM_roofline_roof_us, roof);
		rec_num(RM_roofline_roof_pct, pct(roof, actual));
		rec_num(RM_roofline_headroom_us, actual - roof);
	}
	if (ss->steps > 0) {
		rec_int(RM_roofline_steps, ss->steps);
		if (actual > 0)
			rec_num(RM_roofline_headroom_per_step_us, (actual - roof) / (double)ss->steps);
	}
	if (est)
		rec_bool(RM_roofline_estimated, 1);
	sb_reset(tmp);
	sb_addc(tmp, '[');
	for (k = 0; k < run.nunm && shown < UNMODELED_SHOWN; k++) {
		const struct unm *u = &run.unm[k];
		char b[40];
		if (u->stage != ss->stage)
			continue;
		if (shown++)
			sb_addc(tmp, ',');
		sb_adds(tmp, "{\"op\":");
		json_quote(tmp, S(u->op), strlen(S(u->op)));
		sb_adds(tmp, ",\"reason\":");
		json_quote(tmp, u->reason, strlen(u->reason));
		sb_printf(tmp, ",\"launches\":%lld,\"us\":%s}", u->launches, num_json(u->us, b));
	}
	sb_addc(tmp, ']');
	if (shown)
		rec_json(RM_roofline_unmodeled, tmp->s, tmp->len);
	rec_end();
}

/* The mapping's rows by (stage, kernel): sums, and the dominant class's type and op. */
static void
fold_mapping(void)
{
	size_t i;

	for (i = 0; i < run.nagg; i++) {
		const struct agg *a = &run.agg[i];
		uint32_t key[2] = { a->stage, a->kernel }, id, before;
		struct mapped *m;
		if (a->mapped)
			continue;
		before = strtab_count(run.mapkeys);
		id = strtab_intern(run.mapkeys, (const char *)key, sizeof key);
		if (strtab_count(run.mapkeys) > before) {
			xgrow(&run.map, &run.capmap, run.nmap + 1, sizeof *run.map);
			memset(&run.map[run.nmap++], 0, sizeof run.map[0]);
		}
		m = &run.map[id];
		m->launches += a->launches;
		m->flops += a->flops;
		m->bytes += a->bytes;
		m->time += a->time;
		m->bound |= a->bound;
		if (a->time > m->dtime) {
			m->dtime = a->time;
			m->dtype = a->dtype;
			m->op = a->op;
		}
	}
}

static void
trace_end(void)
{
	const struct gpu *g;
	const char *why = NULL, *src = NULL;
	char buf[512];
	size_t i;
	sbuf tmp = SBUF_INIT;

	run.open = 0;
	if (run.kst_seen && run.kcovered != run.nkrec)
		die(EXIT_DATA, "the kernel_stages records of trace %lld cover %zu of its %zu kernel "
		    "records (the stream lost records?)", run.t, run.kcovered, run.nkrec);
	if (run.nst)
		run.kernel_traces++;
	if (run.collecting) {
		fold_mapping();
		return;
	}
	g = trace_gpu(&why, buf, sizeof buf, &src);
	xqsort(run.agg, run.nagg, sizeof *run.agg, cmp_agg);
	xqsort(run.unm, run.nunm, sizeof *run.unm, cmp_unm);
	for (i = 0; i < run.nagg; i++)
		write_eff(&run.agg[i], g);
	for (i = 1; i < run.nst; i++) {	/* stages in stage order */
		size_t j = i;
		while (j > 0 && (stage_index(S(run.st[j - 1].stage)) > stage_index(S(run.st[j].stage))
		    || (stage_index(S(run.st[j - 1].stage)) == stage_index(S(run.st[j].stage)) &&
		    strcmp(S(run.st[j - 1].stage), S(run.st[j].stage)) > 0))) {
			struct stagesum x = run.st[j];
			run.st[j] = run.st[j - 1];
			run.st[j - 1] = x;
			j--;
		}
	}
	for (i = 0; i < run.nst; i++)
		if (run.st[i].us > 0)
			write_roofline(&run.st[i], g, why, src, run.agg, run.nagg, &tmp);
	sb_free(&tmp);
}

static void
filter(FILE *fp, const char *name)
{
	rec_reader r;
	struct rec_trace tr;
	struct rec_gpu_pids gp;
	struct rec_step sp;
	struct rec_launch ln;
	int pass = !run.collecting;

	rec_reader_init(&r, fp, name);
	while (rec_next(&r)) {
		enum rec_type t = rec_type_of(&r);
		switch (t) {
		case RT_kernel:
			read_kernel(&r);
			break;
		case RT_kernel_stages:
			read_stages(&r);
			break;
		case RT_op_shape:
			if (run.open)
				read_shape(&r);
			break;
		case RT_device:
			if (run.open)
				read_device(&r);
			break;
		case RT_launch:
			if (run.open && !run.graph_launches) {
				REC_READ(&r, launch, &ln);
				run.graph_launches = text_has(ln.name.s, ln.name.n, "GraphLaunch");
			}
			break;
		case RT_gpu_pids:
			if (run.open) {
				REC_READ(&r, gpu_pids, &gp);
				free(run.selected);
				run.selected = rstr_dup(gp.selected);
			}
			break;
		case RT_step:
			if (run.open) {
				REC_READ(&r, step, &sp);
				stage_of(intern(sp.stage.s, sp.stage.n))->steps++;
			}
			break;
		case RT_trace:
			REC_READ(&r, trace, &tr);
			if (run.open)
				trace_end();	/* a trace without its stats record */
			trace_reset();
			run.open = 1;
			run.t = tr.t;
			if (REC_HAS(&tr, trace, stage))
				run.trace_stage = intern(tr.stage.s, tr.stage.n);
			break;
		case RT_stats:
			if (run.open)
				trace_end();
			break;
		default:
			break;
		}
		if (pass && !(run.drop_events && rec_is_event(t)))
			rec_line(r.line, r.len);
	}
	if (run.open)
		trace_end();
	rec_reader_free(&r);
}

/* --gpu NAME: an entry's name (any case), else the table's patterns. */
static const struct gpu *
forced_gpu(const char *name)
{
	char buf[512];
	const char *why;
	const struct gpu *g;
	size_t i;
	sbuf names = SBUF_INIT;

	for (i = 0; i < run.tab.n; i++)
		if (!strcasecmp(run.tab.g[i].name, name))
			return &run.tab.g[i];
	if ((g = gpu_match(&run.tab, name, -1, -1, -1, -1, &why, buf, sizeof buf)))
		return g;
	/* a part of entries' names ("H100"): the one it names, or which it could mean */
	{
		size_t n = 0, last = 0;
		for (i = 0; i < run.tab.n; i++)
			if (*name && strcasestr(run.tab.g[i].name, name)) {
				sb_printf(&names, "%s%s", n ? ", " : "", run.tab.g[i].name);
				n++;
				last = i;
			}
		if (n == 1) {
			sb_free(&names);
			return &run.tab.g[last];
		}
		if (n > 1) {
			warnx("--gpu: '%s' could be %s: name one of them", name, names.s);
			sb_free(&names);
			opt_usage(&tool, EXIT_USAGE);
		}
	}
	for (i = 0; i < run.tab.n; i++)
		sb_printf(&names, "%s%s", i ? ", " : "", run.tab.g[i].name);
	warnx("--gpu: %s; the table has: %s", why, names.s ? names.s : "nothing");
	sb_free(&names);
	opt_usage(&tool, EXIT_USAGE);
}

int
main(int argc, char **argv)
{
	const char *in = "-";
	FILE *fp;
	int c;

	tool_init(argc, argv);
	while ((c = opt_next(&tool, argc, argv)) != -1) {
		switch (c) {
		case O_SPECS:
			run.specs_file = optarg;
			break;
		case O_GPU:
			run.gpu_opt = optarg;
			break;
		case O_MAPPING:
			run.mapping_file = optarg;
			break;
		case O_DROP:
			run.drop_events = 1;
			break;
		default:
			opt_usage(&tool, EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1)
		opt_usage(&tool, EXIT_USAGE);
	if (argc == 1)
		in = argv[0];
	if (run.mapping_file && !strcmp(run.mapping_file, "-") && !strcmp(in, "-")) {
		warnx("cannot read both the mapping file and the records from stdin");
		opt_usage(&tool, EXIT_USAGE);
	}
	if (run.specs_file && !strcmp(run.specs_file, "-") &&
	    ((!strcmp(in, "-")) || (run.mapping_file && !strcmp(run.mapping_file, "-")))) {
		warnx("cannot read the GPU table and records from stdin");
		opt_usage(&tool, EXIT_USAGE);
	}
	run.str = strtab_new();
	run.mapkeys = strtab_new();
	gputab_load(&run.tab, run.specs_file);
	if (run.gpu_opt)
		run.forced = forced_gpu(run.gpu_opt);
	trace_reset();
	if (run.mapping_file) {
		run.collecting = 1;
		fp = rec_open(run.mapping_file);
		filter(fp, strcmp(run.mapping_file, "-") ? run.mapping_file : "<stdin>");
		if (fp != stdin)
			fclose(fp);
		run.collecting = 0;
		run.kernel_traces = 0;
		trace_reset();
	}
	fp = rec_open(in);
	filter(fp, strcmp(in, "-") ? in : "<stdin>");
	if (fp != stdin)
		fclose(fp);
	rec_require_records();
	if (run.nkern && !run.nsel)
		warn_msg("%lld kernel records but none of the analyzed process (no 'sel': run "
		    "trace-stage first): nothing modeled", run.nkern);
	trace_reset();
	strtab_free(run.aggkeys);
	strtab_free(run.unmkeys);
	strtab_free(run.mapkeys);
	strtab_free(run.str);
	imap_free(&run.shape_ix);
	free(run.shp);
	free(run.agg);
	free(run.unm);
	free(run.st);
	free(run.dev);
	free(run.map);
	free(run.canon);
	free(run.tf32);
	gputab_free(&run.tab);
	return tool_finish(EXIT_OK);
}
