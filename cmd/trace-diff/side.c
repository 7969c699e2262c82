/*
 * One side of a comparison: the records of one run (a pipeline's output or
 * a saved `triage --format jsonl` report) reduced to what trace-diff
 * compares, stage by stage.  Everything else passes by unread.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "err.h"
#include "imap.h"
#include "gpuspec.h"
#include "rec.h"
#include "rules.h"
#include "sbuf.h"
#include "xalloc.h"

/* Stage order: extend, decode, all, then others by name (as the report's). */
static int
stage_before(const strtab *str, uint32_t a, uint32_t b)
{
	int ia = stage_index(strtab_str(str, a)), ib = stage_index(strtab_str(str, b));

	if (ia != ib)
		return ia < ib;
	return strcmp(strtab_str(str, a), strtab_str(str, b)) < 0;
}

struct stage *
side_stage(const struct side *s, uint32_t name)
{
	size_t i;

	for (i = 0; i < s->nst; i++)
		if (s->st[i].name == name)
			return &s->st[i];
	return NULL;
}

/*
 * The stage named by a record's stage member, added in stage order when
 * new.  Row indexes in kix refer to stages by position, so a stage inserted
 * before others would invalidate them: rows are indexed by the stage's
 * name id instead.
 */
static struct stage *
stage_of(struct side *s, strtab *str, struct rstr name, int whole)
{
	uint32_t id;
	struct stage *st;
	size_t i;

	if (whole || name.n == 0)
		id = strtab_intern(str, "all", 3);
	else
		id = strtab_intern(str, name.s, name.n);
	if ((st = side_stage(s, id)) != NULL)
		return st;
	xgrow(&s->st, &s->capst, s->nst + 1, sizeof *s->st);
	for (i = s->nst; i > 0 && stage_before(str, id, s->st[i - 1].name); i--)
		s->st[i] = s->st[i - 1];
	st = &s->st[i];
	memset(st, 0, sizeof *st);
	st->name = id;
	s->nst++;
	return st;
}

static int
unresolved(const sbuf *b)
{
	return b->len == 10 && memcmp(b->s, "unresolved", 10) == 0;
}

void
first_site(const char *loc, size_t n, sbuf *out)
{
	const char *p = loc, *stop = loc + n, *br, *end, *sh;

	/*
	 * The sites are listed by share, so an unresolved one can come first
	 * (C22): the first resolved site names the code, else the first site.
	 */
	sb_reset(out);
	do {
		br = memmem(p, (size_t)(stop - p), "<br>", 4);
		end = br ? br : stop;
		/* kernel-map appends " (site share NN%)" when a kernel has several sites */
		if ((sh = memmem(p, (size_t)(end - p), " (site share ", 13)))
			end = sh;
		if (p == loc || unresolved(out)) {
			sb_reset(out);
			sb_add(out, p, (size_t)(end - p));
		}
		p = br ? br + 4 : stop;
	} while (br && unresolved(out));
}

static void
add_kernel_row(struct side *s, strtab *str, const struct rec_kernel_row *k, int whole)
{
	struct stage *st = stage_of(s, str, k->stage, whole);
	uint32_t name = strtab_intern(str, k->kernel.s, k->kernel.n);
	uint64_t *v;
	struct krow *x;
	int isnew;
	sbuf loc = SBUF_INIT;

	v = imap_put(&s->kix, (uint64_t)st->name << 32 | name, &isnew);
	if (isnew) {
		xgrow(&st->k, &st->capk, st->nk + 1, sizeof *st->k);
		x = &st->k[st->nk++];
		memset(x, 0, sizeof *x);
		x->name = name;
		x->cat = strtab_intern(str, k->category.s, k->category.n);
		x->loc = NOSTR;
		if (k->location.n) {
			first_site(k->location.s, k->location.n, &loc);
			x->loc = strtab_intern(str, sb_str(&loc), loc.len);
		}
		*v = st->nk;
	} else
		x = &st->k[*v - 1];
	/* the same kernel in several traces of one stage (profile directories) */
	x->us += k->total_us;
	x->launches += k->launches;
	st->total_us += k->total_us;
	s->rows++;
	sb_free(&loc);
}

static void
add_gpu_time(struct side *s, strtab *str, const struct rec_gpu_time *g, int whole)
{
	struct stage *st = stage_of(s, str, g->stage, whole);

	st->has_gpu = 1;
	st->busy_us += g->busy_us;
	st->idle_us += g->idle_us;
	if (REC_HAS(g, gpu_time, idle_launch_us)) {
		st->has_idle_launch = 1;
		st->idle_launch_us += g->idle_launch_us;
	}
	if (REC_HAS(g, gpu_time, idle_sync_us)) {
		st->has_idle_sync = 1;
		st->idle_sync_us += g->idle_sync_us;
	}
	if (REC_HAS(g, gpu_time, graph_us)) {
		st->has_graph = 1;
		st->graph_us += g->graph_us;
	}
	if (REC_HAS(g, gpu_time, steps))
		st->steps += g->steps;
}

/*
 * A step's time: its period (issue 25), or its CPU time in a stream of
 * before.  Only the steps whose periods the report's percentiles are of
 * (step-stats: complete steps, followed by another of their process, that
 * launched GPU work): the last one holds the queue the GPU still drained,
 * and a diff of it against another run's median compared unlike figures.
 */
static void
add_step(struct side *s, strtab *str, const struct rec_step *p, int whole)
{
	struct stage *st = stage_of(s, str, p->stage, whole);

	if (REC_HAS(p, step, kernels) && p->kernels == 0)
		return;
	if (REC_HAS(p, step, batch)) {
		st->batch_sum += (double)p->batch;
		st->nbatch++;
	}
	if (REC_HAS(p, step, tokens) || (REC_HAS(p, step, batch) && p->stage.n == 6 &&
	    !memcmp(p->stage.s, "decode", 6))) {
		st->tok_sum += (double)(REC_HAS(p, step, tokens) ? p->tokens : p->batch);
		st->ntok++;
	}
	if (p->last)
		return;
	xgrow(&st->step_us, &st->capstep, st->nstep + 1, sizeof *st->step_us);
	st->step_us[st->nstep++] = REC_HAS(p, step, period_us) ? p->period_us : p->cpu_us;
	if (REC_HAS(p, step, gpu_busy_us)) {
		xgrow(&st->step_busy_us, &st->capbusy, st->nbusy + 1, sizeof *st->step_busy_us);
		st->step_busy_us[st->nbusy++] = p->gpu_busy_us;
	}
}

/* rank-skew's rows, kept until the stages are known: a stage of no kernel row is none. */
struct rrow {
	uint32_t stage;
	long long rank;
	double comm, wait;
};
struct rrows {
	struct rrow *v;
	size_t n, cap;
};

static void
keep_rank_row(struct rrows *rr, strtab *str, const struct rec_rank_row *k, int whole)
{
	xgrow(&rr->v, &rr->cap, rr->n + 1, sizeof *rr->v);
	rr->v[rr->n].stage = whole || !k->stage.n ? strtab_intern(str, "all", 3) :
	    strtab_intern(str, k->stage.s, k->stage.n);
	rr->v[rr->n].rank = k->rank;
	rr->v[rr->n].comm = k->comm_us;
	rr->v[rr->n++].wait = k->wait_us;
}

/* A rank_row, for the lowest rank of each stage (the tables' rank). */
static void
add_rank_row(struct side *s, const struct rrow *k)
{
	struct stage *st = side_stage(s, k->stage);

	if (!st || (st->has_wait && k->rank > st->wait_rank))
		return;
	if (!st->has_wait || k->rank < st->wait_rank)
		st->rank_comm_us = st->rank_wait_us = 0;
	st->has_wait = 1;
	st->wait_rank = k->rank;
	/* --whole-run sums the rank's stages */
	st->rank_comm_us += k->comm;
	st->rank_wait_us += k->wait;
}

static void
add_fuse_row(struct side *s, strtab *str, const struct rec_fuse_row *f, int whole)
{
	struct stage *st = stage_of(s, str, f->stage, whole);
	uint32_t pat = strtab_intern(str, f->pattern.s, f->pattern.n);
	int in_use = rstr_eq(f->status, "in use");
	size_t i;

	/* one row per pattern and stage (several traces of a stage: add up) */
	for (i = 0; i < st->nf && st->f[i].pattern != pat; i++)
		;
	if (i == st->nf) {
		xgrow(&st->f, &st->capf, st->nf + 1, sizeof *st->f);
		st->f[i].pattern = pat;
		st->f[i].status = strtab_intern(str, in_use ? "in use" : "missing",
		    in_use ? 6 : 7);
		st->f[i].us = 0;
		st->nf++;
	} else if (in_use)
		st->f[i].status = strtab_intern(str, "in use", 6);
	st->f[i].us += f->related_us;
}

static void
add_overlap_row(struct side *s, strtab *str, const struct rec_overlap_row *o, int whole)
{
	struct stage *st = stage_of(s, str, o->stage, whole);
	uint32_t k = strtab_intern(str, o->kernel.s, o->kernel.n);
	size_t i;

	s->overlap = 1;
	for (i = 0; i < st->no && st->o[i].kernel != k; i++)
		;
	if (i == st->no) {
		xgrow(&st->o, &st->capo, st->no + 1, sizeof *st->o);
		memset(&st->o[i], 0, sizeof st->o[i]);
		st->o[i].kernel = k;
		st->o[i].verdict = strtab_intern(str, o->verdict.s, o->verdict.n);
		st->no++;
	}
	/* exclusive time adds up; the ratio is of the summed time */
	st->o[i].excl = (st->o[i].excl * st->o[i].us + o->exclusive_ratio * o->total_us);
	st->o[i].us += o->total_us;
	st->o[i].excl = st->o[i].us > 0 ? st->o[i].excl / st->o[i].us : 0;
}

/*
 * Figures that would make a sum or a ratio meaningless: a time or count
 * that is negative, or too large to be a double (1e400 reads as inf).
 * Our filters never write them; a hand-made stream is refused by name.
 */
static void
check_num(rec_reader *r, const char *type, const char *member, double v)
{
	if (!isfinite(v) || v < 0)
		rec_die(r, "%s record: member '%s' is not a finite, non-negative number", type,
		    member);
}

static int
health_rank(const char *v)
{
	return !v ? -1 : !strcmp(v, "ok") ? 0 : !strcmp(v, "degraded") ? 1 : 2;
}

static void
set_str(char **dst, struct rstr v)
{
	free(*dst);
	*dst = rstr_dup(v);
}

/* The first trace's devices, until its gpu_pids record names the analyzed one. */
struct devs {
	long long t;		/* the first trace's index, -1 before it */
	long long sel;		/* its analyzed pid as a number, -1: none */
	struct {
		long long id;
		char *name;
		long long sms, mem;	/* -1: not in the record */
		int ccmaj, ccmin, amd;
	} v[32];
	size_t n;
};

/*
 * The analyzed GPU's name: the device whose id is the analyzed pid, else
 * the first.  A device whose name is empty or generic (ROCm 6.2 and 7) is
 * named by the GPU table's part its figures fit, as the single-trace
 * report's header names it, else "unnamed GPU" with its figures: a run on
 * an MI300X and one on a B200 are not one GPU because one name is missing.
 */
static char *
gpu_name(struct devs *dv)
{
	size_t i, pick = dv->n;
	char *r = NULL;

	for (i = 0; i < dv->n && pick == dv->n; i++)
		if (dv->v[i].id == dv->sel)
			pick = i;
	if (pick == dv->n && dv->n)
		pick = 0;
	if (pick < dv->n) {
		const char *nm = dv->v[pick].name ? dv->v[pick].name : "";
		if (!gpu_name_generic(nm)) {
			r = xstrdup(nm);
		} else {
			const struct gpu *g;
			const char *why;
			char buf[256];
			g = gpu_match(gputab_builtin(), nm, dv->v[pick].sms, dv->v[pick].ccmaj, dv->v[pick].ccmin,
			    dv->v[pick].mem, &why, buf, sizeof buf);
			sbuf b = SBUF_INIT;
			if (g)
				sb_printf(&b, "%s (matched by its figures)", g->name);
			else if (dv->v[pick].sms > 0 && dv->v[pick].mem > 0)
				sb_printf(&b, "unnamed GPU (%lld %s, %.0f GiB)", dv->v[pick].sms,
				    dv->v[pick].amd ? "CUs" : "SMs",
				    (double)dv->v[pick].mem / (1024.0 * 1024 * 1024));
			else
				sb_adds(&b, nm);
			r = b.len ? sb_detach(&b) : (sb_free(&b), NULL);
		}
	}
	for (i = 0; i < dv->n; i++)
		free(dv->v[i].name);
	return r;
}

void
side_read(struct side *s, strtab *str, FILE *fp, const char *name, int pass, int whole)
{
	rec_reader r;
	struct devs dv;
	struct rrows rr = { NULL, 0, 0 };
	/* the input records by role: formal first, then single, then mapping (as the report) */
	char *fw[3] = { NULL, NULL, NULL }, *model[3] = { NULL, NULL, NULL };
	char *path[3] = { NULL, NULL, NULL }, *family[3] = { NULL, NULL, NULL };
	int i, isnew;
	static imap seen_t;	/* the t of each trace record read (static: reachable at a die) */

	memset(&dv, 0, sizeof dv);
	dv.t = dv.sel = -1;
	s->world = -1;
	rec_reader_init(&r, fp, name);
	while (rec_next(&r)) {
		enum rec_type t = rec_type_of(&r);
		union {
			struct rec_input in;
			struct rec_kernel_row k;
			struct rec_gpu_time g;
			struct rec_step p;
			struct rec_fuse_row f;
			struct rec_overlap_row o;
			struct rec_health h;
			struct rec_trace tr;
			struct rec_device d;
			struct rec_gpu_pids gp;
			struct rec_rank_row rr;
		} u;

		switch (t) {
		case RT_input:
			REC_READ(&r, input, &u.in);
			i = rstr_eq(u.in.role, "formal") ? 0 : rstr_eq(u.in.role, "mapping") ? 2 : 1;
			if (i != 1)
				s->dual = 1;
			if (!fw[i]) {
				int mf;
				set_str(&fw[i], u.in.framework);
				set_str(&path[i], u.in.path);
				if (REC_HAS(&u.in, input, model))
					set_str(&model[i], u.in.model);
				/*
				 * The model family (issue 26) where the input record
				 * has one; read by name, whatever else the record holds.
				 */
				rec_parse(&r);
				mf = json_get(&r.doc, 0, "model_family");
				if (!family[i] && json_kind(&r.doc, mf) == JK_STR) {
					sbuf v = SBUF_INIT;
					json_str(&r.doc, mf, &v, NULL);
					if (v.len)
						family[i] = sb_detach(&v);
					sb_free(&v);
				}
			}
			break;
		case RT_trace:
			REC_READ(&r, trace, &u.tr);
			/* one report's records number their traces once: a second is another report */
			imap_put(&seen_t, (uint64_t)u.tr.t, &isnew);
			if (!isnew)
				rec_die(&r, "trace %lld again: these records hold two reports (saved runs "
				    "concatenated?); compare one run's records", u.tr.t);
			if (REC_HAS(&u.tr, trace, world_size) && u.tr.world_size > s->world)
				s->world = u.tr.world_size;
			if (dv.t < 0)
				dv.t = u.tr.t;
			break;
		case RT_device:
			REC_READ(&r, device, &u.d);
			if (u.d.t == dv.t && dv.n < sizeof dv.v / sizeof dv.v[0]) {
				dv.v[dv.n].id = REC_HAS(&u.d, device, id) ? u.d.id : -2;
				dv.v[dv.n].name = REC_HAS(&u.d, device, name) ? rstr_dup(u.d.name) : NULL;
				dv.v[dv.n].sms = REC_HAS(&u.d, device, num_sms) ? u.d.num_sms : -1;
				dv.v[dv.n].mem = REC_HAS(&u.d, device, total_global_mem) ?
				    u.d.total_global_mem : -1;
				dv.v[dv.n].ccmaj = REC_HAS(&u.d, device, compute_major) ?
				    (int)u.d.compute_major : -1;
				dv.v[dv.n].ccmin = REC_HAS(&u.d, device, compute_minor) ?
				    (int)u.d.compute_minor : 0;
				dv.v[dv.n].amd = (REC_HAS(&u.d, device, warp_size) && u.d.warp_size == 64) ||
				    (dv.v[dv.n].name && strstr(dv.v[dv.n].name, "AMD"));
				dv.n++;
			}
			break;
		case RT_gpu_pids:
			REC_READ(&r, gpu_pids, &u.gp);
			if (u.gp.t == dv.t && dv.sel < 0) {
				char *e, *p = rstr_dup(u.gp.selected);
				dv.sel = strtoll(p, &e, 10);
				if (!*p || *e)
					dv.sel = -1;
				free(p);
			}
			break;
		case RT_rank_row:
			REC_READ(&r, rank_row, &u.rr);
			check_num(&r, "rank_row", "comm_us", u.rr.comm_us);
			check_num(&r, "rank_row", "wait_us", u.rr.wait_us);
			keep_rank_row(&rr, str, &u.rr, whole);
			break;
		case RT_kernel_row:
			REC_READ(&r, kernel_row, &u.k);
			check_num(&r, "kernel_row", "total_us", u.k.total_us);
			check_num(&r, "kernel_row", "launches", (double)u.k.launches);
			add_kernel_row(s, str, &u.k, whole);
			break;
		case RT_gpu_time:
			REC_READ(&r, gpu_time, &u.g);
			check_num(&r, "gpu_time", "busy_us", u.g.busy_us);
			check_num(&r, "gpu_time", "idle_us", u.g.idle_us);
			check_num(&r, "gpu_time", "idle_launch_us", u.g.idle_launch_us);
			check_num(&r, "gpu_time", "idle_sync_us", u.g.idle_sync_us);
			check_num(&r, "gpu_time", "graph_us", u.g.graph_us);
			check_num(&r, "gpu_time", "steps", (double)u.g.steps);
			add_gpu_time(s, str, &u.g, whole);
			break;
		case RT_step:
			REC_READ(&r, step, &u.p);
			check_num(&r, "step", "cpu_us", u.p.cpu_us);
			add_step(s, str, &u.p, whole);
			break;
		case RT_fuse_row:
			REC_READ(&r, fuse_row, &u.f);
			check_num(&r, "fuse_row", "related_us", u.f.related_us);
			add_fuse_row(s, str, &u.f, whole);
			break;
		case RT_overlap_row:
			REC_READ(&r, overlap_row, &u.o);
			check_num(&r, "overlap_row", "total_us", u.o.total_us);
			check_num(&r, "overlap_row", "exclusive_ratio", u.o.exclusive_ratio);
			add_overlap_row(s, str, &u.o, whole);
			break;
		case RT_health: {
			char *v;
			REC_READ(&r, health, &u.h);
			v = rstr_dup(u.h.verdict);
			if (health_rank(v) > health_rank(s->health)) {
				free(s->health);
				s->health = v;
			} else
				free(v);
			break;
		}
		case RT_run:
			rec_die(&r, "a bundle of several runs (run records): trace-diff compares "
			    "the records of one run with another's");
		case RT_diff_input:
		case RT_diff_row:
		case RT_verdict:
			s->diffs++;
			break;
		default:
			break;
		}
		if (pass)
			rec_line(r.line, r.len);
	}
	rec_reader_free(&r);
	imap_free(&seen_t);
	for (i = 0; i < 3 && !s->framework; i++)
		if (fw[i]) {
			s->framework = fw[i];
			s->path = path[i];
			fw[i] = path[i] = NULL;
		}
	for (i = 0; i < 3 && !s->model; i++)
		if (model[i]) {
			s->model = model[i];
			model[i] = NULL;
		}
	for (i = 0; i < 3 && !s->model_family; i++)
		if (family[i]) {
			s->model_family = family[i];
			family[i] = NULL;
		}
	s->gpu = gpu_name(&dv);
	for (i = 0; i < (int)rr.n; i++)
		add_rank_row(s, &rr.v[i]);
	free(rr.v);
	for (i = 0; i < 3; i++) {
		free(fw[i]);
		free(model[i]);
		free(path[i]);
		free(family[i]);
	}
	if (!s->framework)
		s->framework = xstrdup("none");
	if (!s->path)
		s->path = xstrdup("");
	/* finite records can still add up to inf (two of 1e308) */
	for (i = 0; i < (int)s->nst; i++) {
		const struct stage *st = &s->st[i];
		if (!isfinite(st->total_us) || !isfinite(st->busy_us + st->idle_us +
		    st->idle_launch_us + st->idle_sync_us + st->graph_us))
			die(EXIT_DATA, "%s: the times of stage '%s' add up to more than a double holds",
			    name, strtab_str(str, st->name));
	}
}

void
side_free(struct side *s)
{
	size_t i;

	for (i = 0; i < s->nst; i++) {
		free(s->st[i].k);
		free(s->st[i].step_us);
		free(s->st[i].step_busy_us);
		free(s->st[i].f);
		free(s->st[i].o);
	}
	free(s->st);
	imap_free(&s->kix);
	free(s->path);
	free(s->framework);
	free(s->model);
	free(s->health);
	free(s->model_family);
	free(s->gpu);
	memset(s, 0, sizeof *s);
}

double
shared_family_pct(const struct side *a, const struct side *b, strtab *str)
{
	imap fam = { 0 };
	sbuf f = SBUF_INIT;
	double total = 0, shared = 0;
	size_t i, k;

	for (i = 0; i < b->nst; i++)
		for (k = 0; k < b->st[i].nk; k++) {
			const struct krow *x = &b->st[i].k[k];
			kernel_family(strtab_str(str, x->name), strtab_len(str, x->name), &f);
			imap_put(&fam, strtab_intern(str, sb_str(&f), f.len), NULL);
		}
	for (i = 0; i < a->nst; i++)
		for (k = 0; k < a->st[i].nk; k++) {
			const struct krow *x = &a->st[i].k[k];
			kernel_family(strtab_str(str, x->name), strtab_len(str, x->name), &f);
			total += x->us;
			if (imap_get(&fam, strtab_intern(str, sb_str(&f), f.len)))
				shared += x->us;
		}
	sb_free(&f);
	imap_free(&fam);
	/* a side without time has nothing the other lacks */
	return total > 0 ? 100 * shared / total : 100;
}
