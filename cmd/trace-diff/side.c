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
#include "rec.h"
#include "rules.h"
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

void
first_site(const char *loc, size_t n, sbuf *out)
{
	const char *end = loc + n, *br = memmem(loc, n, "<br>", 4), *sh;

	if (br)
		end = br;
	/* kernel-map appends " (site share NN%)" when a kernel has several sites */
	sh = memmem(loc, (size_t)(end - loc), " (site share ", 13);
	if (sh)
		end = sh;
	sb_reset(out);
	sb_add(out, loc, (size_t)(end - loc));
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
	if (REC_HAS(g, gpu_time, graph_us)) {
		st->has_graph = 1;
		st->graph_us += g->graph_us;
	}
	if (REC_HAS(g, gpu_time, steps))
		st->steps += g->steps;
}

static void
add_step(struct side *s, strtab *str, const struct rec_step *p, int whole)
{
	struct stage *st = stage_of(s, str, p->stage, whole);

	xgrow(&st->step_us, &st->capstep, st->nstep + 1, sizeof *st->step_us);
	st->step_us[st->nstep++] = p->cpu_us;
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

void
side_read(struct side *s, strtab *str, FILE *fp, const char *name, int pass, int whole)
{
	rec_reader r;
	/* the input records by role: formal first, then single, then mapping (as the report) */
	char *fw[3] = { NULL, NULL, NULL }, *model[3] = { NULL, NULL, NULL };
	char *path[3] = { NULL, NULL, NULL };
	int i;

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
		} u;

		switch (t) {
		case RT_input:
			REC_READ(&r, input, &u.in);
			i = rstr_eq(u.in.role, "formal") ? 0 : rstr_eq(u.in.role, "mapping") ? 2 : 1;
			if (i != 1)
				s->dual = 1;
			if (!fw[i]) {
				set_str(&fw[i], u.in.framework);
				set_str(&path[i], u.in.path);
				if (REC_HAS(&u.in, input, model))
					set_str(&model[i], u.in.model);
			}
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
	for (i = 0; i < 3; i++) {
		free(fw[i]);
		free(model[i]);
		free(path[i]);
	}
	if (!s->framework)
		s->framework = xstrdup("none");
	if (!s->path)
		s->path = xstrdup("");
	/* finite records can still add up to inf (two of 1e308) */
	for (i = 0; i < (int)s->nst; i++) {
		const struct stage *st = &s->st[i];
		if (!isfinite(st->total_us) || !isfinite(st->busy_us + st->idle_us +
		    st->idle_launch_us + st->graph_us))
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
		free(s->st[i].f);
		free(s->st[i].o);
	}
	free(s->st);
	imap_free(&s->kix);
	free(s->path);
	free(s->framework);
	free(s->model);
	free(s->health);
	memset(s, 0, sizeof *s);
}
