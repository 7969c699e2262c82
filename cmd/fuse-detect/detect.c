/* Matching catalog patterns against one stage's kernel rows, and the row cells. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect.h"
#include "kname.h"
#include "num.h"
#include "strtab.h"
#include "text.h"
#include "xalloc.h"

#define RENDER_MIN_SHARE 1.0	/* MIN_RENDER_SHARE_PCT (§1 step 5, §7.1) */
#define NONE ((size_t)-1)

const char *
verdict_name(enum verdict v)
{
	static const char *const names[] = {
		[V_EMPTY_STAGE] = "empty_stage",
		[V_FRAMEWORK] = "gated_framework",
		[V_TP] = "gated_tp",
		[V_MODEL_INCLUDE] = "gated_model_include",
		[V_MODEL_EXCLUDE] = "gated_model_exclude",
		[V_MODEL_FAMILY] = "gated_model_family",
		[V_DTYPE] = "gated_dtype",
		[V_NO_MOE] = "gated_no_moe_kernels",
		[V_NO_HIT] = "no_keyword_hit",
		[V_ZERO_TIME] = "no_related_time",
		[V_MIN_SHARE] = "below_min_share",
		[V_BLOCKED] = "blocked_by_subsumes",
		[V_CONSUMED] = "rows_consumed",
		[V_RENDER_BAR] = "below_render_bar",
		[V_ACCEPTED] = "accepted",
	};

	return names[v];
}

/* Does the framework pass the pattern's path hints (§5 step 2)? */
static int
framework_passes(const pattern_t *p, const char *framework)
{
	sbuf norm = SBUF_INIT;
	unsigned bit = 0;
	int pass;

	text_normalize(framework, strlen(framework), &norm);
	text_lower(norm.s, norm.len);
	if (norm.len == 0 || strcmp(norm.s, "auto") == 0 || p->hints == 0) {
		sb_free(&norm);
		return 1;
	}
	if (strcmp(norm.s, "sglang") == 0)
		bit = HINT_SGLANG;
	else if (strcmp(norm.s, "vllm") == 0)
		bit = HINT_VLLM;
	else if (strcmp(norm.s, "trtllm") == 0)
		bit = HINT_TRTLLM;
	else if (strcmp(norm.s, "tokenspeed") == 0)
		bit = HINT_TOKENSPEED;
	pass = (p->hints & bit) != 0;
	sb_free(&norm);
	return pass;
}

/*
 * Is the pattern about MoE routing or experts?  Its name says so.  Such a
 * pattern's split groups (router/gate, topk/softmax) also match dense
 * models' kernels: a vision model's softmax made "Fused MoE router"
 * Confirmed at 46 % (docs/deviations.md).
 */
static int
moe_pattern(const pattern_t *p)
{
	const char *n = p->pattern;

	return text_has_ci(n, strlen(n), "moe") || text_has_ci(n, strlen(n), "expert") ||
	    text_has_ci(n, strlen(n), "router");
}

/*
 * Can a kernel of this category be one of the separate kernels split
 * group g stands for (the pattern's split_categories, catalog.h)?  A
 * fusion before attention is not evidenced by the attention kernels it
 * feeds, a norm or quantization fusion not by the GEMMs next to it
 * ("mxfp4" in a GEMM's name), a KV-cache write not by the paged attention
 * that reads the cache.
 */
static int
category_allowed(const pattern_t *p, size_t g, const char *cat)
{
	static const char *const generic[] = { "other", "elementwise", "copy", "indexing",
		"layout", "reduce_topk", NULL };
	const strlist_t *l = &p->group_cats[g];
	size_t i, k;

	for (i = 0; i < l->n; i++) {
		if (strcmp(l->v[i], cat) == 0)
			return 1;
		if (strcmp(l->v[i], "generic") == 0)
			for (k = 0; generic[k]; k++)
				if (strcmp(generic[k], cat) == 0)
					return 1;
	}
	return 0;
}

static int
model_has_any(const char *model, const strlist_t *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (text_has(model, strlen(model), l->v[i]))
			return 1;
	return 0;
}

/*
 * Evaluate one pattern up to the point where it becomes a candidate
 * (§5, §6).  ids[] holds each row's identity (name, location, cpu_op);
 * stamp[] is scratch of one slot per identity, tagged with `tag` so it
 * needs no clearing between patterns.
 */
enum verdict
fuse_gate(const pattern_t *p, const fctx_t *ctx)
{
	if (!framework_passes(p, ctx->framework))
		return V_FRAMEWORK;
	if (p->require_tp && ctx->tp_size < p->min_tp_size)
		return V_TP;
	if (!ctx->corrected) {
		if (p->model_include.n && !model_has_any(ctx->model, &p->model_include))
			return V_MODEL_INCLUDE;
		if (p->model_exclude.n && model_has_any(ctx->model, &p->model_exclude))
			return V_MODEL_EXCLUDE;
		return V_ACCEPTED;
	}
	/* corrected: the model family inferred from the trace counts as the model's name */
	if (p->model_include.n && !model_has_any(ctx->model, &p->model_include) &&
	    !model_has_any(ctx->family, &p->model_include))
		return V_MODEL_INCLUDE;
	if (p->model_exclude.n && (model_has_any(ctx->model, &p->model_exclude) ||
	    model_has_any(ctx->family, &p->model_exclude)))
		return V_MODEL_EXCLUDE;
	if (p->model_family.n && !model_has_any(ctx->model, &p->model_family) &&
	    !model_has_any(ctx->family, &p->model_family))
		return V_MODEL_FAMILY;
	return V_ACCEPTED;
}

size_t
fuse_hit_bits(const catalog_t *cat)
{
	size_t i, n = 0;

	for (i = 0; i < cat->n; i++)
		n += 1 + cat->p[i].ngroups;
	return n;
}

static int
bit(const uint64_t *b, size_t i)
{
	return (int)(b[i / 64] >> (i % 64) & 1);
}

int
fuse_row_hits(const catalog_t *cat, const unsigned char *pass, const haystack_t *hs,
    frow_t *row)
{
	size_t nb = fuse_hit_bits(cat), words = (nb + 63) / 64, i, g, k = 0;
	int any = 0;

	uint64_t *b;

	memset(row->hits0, 0, sizeof row->hits0);
	row->hits = words <= 2 ? NULL : xcalloc(words, sizeof *row->hits);
	b = row->hits ? row->hits : row->hits0;
	for (i = 0; i < cat->n; i++) {
		const pattern_t *p = &cat->p[i];
		if (!pass[i]) {
			k += 1 + p->ngroups;	/* detection stops at the gate: no bits */
			continue;
		}
		for (g = 0; g <= p->ngroups; g++, k++)
			if (kw_match(hs, g == 0 ? &p->active : &p->groups[g - 1])) {
				b[k / 64] |= (uint64_t)1 << (k % 64);
				any = 1;
			}
	}
	return any;
}

int
fuse_row_hits_words(const catalog_t *cat, const unsigned char *pass, const words *w,
    frow_t *row)
{
	size_t nb = fuse_hit_bits(cat), words_n = (nb + 63) / 64, i, g, k = 0;
	int any = 0, h;
	uint64_t *b;

	memset(row->hits0, 0, sizeof row->hits0);
	row->hits = words_n <= 2 ? NULL : xcalloc(words_n, sizeof *row->hits);
	b = row->hits ? row->hits : row->hits0;
	for (i = 0; i < cat->n; i++) {
		const pattern_t *p = &cat->p[i];
		if (!pass[i]) {
			k += 1 + p->ngroups;
			continue;
		}
		for (g = 0; g <= p->ngroups; g++, k++) {
			if (g == 0)
				h = kw_find(w, &p->active, NULL) >= 0 || kw_find(w, &p->also_active, NULL) >= 0;
			else
				h = kw_find(w, &p->groups[g - 1], NULL) >= 0;
			if (h) {
				b[k / 64] |= (uint64_t)1 << (k % 64);
				any = 1;
			}
		}
	}
	return any;
}

unsigned
dtype_evidence(const words *w)
{
	static const struct {
		const char *word;
		unsigned bit;
	} dt[] = {
		{ "fp8", DT_FP8 }, { "float8", DT_FP8 }, { "e4m3", DT_FP8 }, { "e5m2", DT_FP8 },
		{ "w8a8fp8", DT_FP8 }, { "fp4", DT_FP4 }, { "nvfp4", DT_FP4 }, { "mxfp4", DT_FP4 },
		{ "e2m1", DT_FP4 }, { "int8", DT_INT8 }, { "w8a8", DT_INT8 }, { "int4", DT_INT4 },
		{ "w4a16", DT_INT4 }, { "awq", DT_INT4 }, { "gptq", DT_INT4 }, { "scaled_mm", DT_FP8 },
	};
	unsigned bits = 0;
	size_t i;

	for (i = 0; i < sizeof dt / sizeof dt[0]; i++) {
		sbuf k = SBUF_INIT;
		words_compact(dt[i].word, strlen(dt[i].word), &k);
		if (words_find(w, sb_str(&k), k.len) >= 0)
			bits |= dt[i].bit;
		sb_free(&k);
	}
	return bits;
}

void
fuse_row_free_hits(frow_t *row)
{
	free(row->hits);
	row->hits = NULL;
}

static void
evaluate(cand_t *c, const frow_t *rows, size_t nrows, const uint32_t *ids,
    uint32_t *stamp, uint32_t tag, double total_us, const fctx_t *ctx, size_t bit0)
{
	const pattern_t *p = c->p;
	unsigned char *hit;
	size_t r, g, ngroups = p->ngroups;
	nsum sum = NSUM_INIT;
	int any_active = 0;

	if ((c->v = fuse_gate(p, ctx)) != V_ACCEPTED)
		return;
	if (ctx->corrected && p->dtypes && !(p->dtypes & ctx->dtypes)) {
		c->v = V_DTYPE;
		return;
	}
	if (ctx->corrected && !ctx->moe_present && moe_pattern(p)) {
		c->v = V_NO_MOE;
		return;
	}

	/* hit[r * (ngroups + 1)]: active; + 1 + g: split group g. */
	hit = xcalloc(nrows * (ngroups + 1) + 1, 1);
	for (r = 0; r < nrows; r++) {
		unsigned char *h = hit + r * (ngroups + 1);
		size_t all = 0;

		const uint64_t *b = rows[r].hits ? rows[r].hits : rows[r].hits0;

		h[0] = (unsigned char)bit(b, bit0);
		for (g = 0; g < ngroups; g++) {
			h[1 + g] = (unsigned char)bit(b, bit0 + 1 + g);
			/*
			 * Corrected: only a kernel of a category the group stands
			 * for is one of its separate kernels (C6, C16): not a GEMM
			 * for a norm fusion, nor the attention kernel for the KV
			 * cache write before it.
			 */
			if (h[1 + g] && ctx->corrected && !category_allowed(p, g, rows[r].category))
				h[1 + g] = 0;
			all += h[1 + g];
		}
		/*
		 * Corrected: a kernel named "fused..." that covers every split
		 * group by itself is the fusion already running ("in use").
		 */
		if (ctx->corrected && !h[0] && ngroups > 0 && all == ngroups && rows[r].fused)
			h[0] = 1;
		any_active |= h[0];
	}
	c->direct = any_active;
	for (g = 0; g < ngroups; g++) {
		for (r = 0; r < nrows; r++)
			if (hit[r * (ngroups + 1) + 1 + g])
				break;
		if (r < nrows)
			c->groups_hit++;
	}
	if (!c->direct && !(ngroups > 0 && c->groups_hit == ngroups)) {
		c->v = V_NO_HIT;
		free(hit);
		return;
	}

	/*
	 * The union takes the active rows first, then group by group (§6
	 * step 6); partial groups count too when there is an active hit
	 * (edge case 7), and without one every group matched anyway.
	 */
	c->rows = xmalloc((nrows + 1) * sizeof *c->rows);
	/*
	 * Corrected: a fusion in use is the time of its fused kernels; the
	 * partial split groups the reference adds (edge case 7) are other
	 * kernels (62.1 % "in use" of a decode trace was its MoE GEMMs).
	 */
	for (g = 0; g <= (ctx->corrected && c->direct ? 0 : ngroups); g++) {
		for (r = 0; r < nrows; r++) {
			if (!hit[r * (ngroups + 1) + g] || stamp[ids[r]] == tag)
				continue;
			stamp[ids[r]] = tag;
			c->rows[c->nrows++] = r;
		}
	}
	free(hit);
	for (r = 0; r < c->nrows; r++)
		nsum_add(&sum, rows[c->rows[r]].total_us);
	c->related_us = nsum_value(&sum);
	c->share = pct(c->related_us, total_us);
	if (!(c->related_us > 0)) {
		c->v = V_ZERO_TIME;
		return;
	}
	if (!c->direct && c->share < c->p->min_share) {
		c->v = V_MIN_SHARE;
		return;
	}
	c->v = V_ACCEPTED;	/* provisional: selection may still drop it */
}

/*
 * Sort key of §8 step 5, descending: 1 when a ranks strictly before b.
 * Corrected, a fusion in use comes first: its fused kernels are never
 * taken as the separate kernels of another fusion (fused_qknorm_warp, the
 * in-place QK RMSNorm running, was evidence of a missing QK norm + RoPE).
 */
static int
ranks_before(const cand_t *a, const cand_t *b, int corrected)
{
	if (corrected && a->direct != b->direct)
		return a->direct;
	if (a->p->priority != b->p->priority)
		return a->p->priority > b->p->priority;
	if (a->p->span != b->p->span)
		return a->p->span > b->p->span;
	if (a->nrows != b->nrows)
		return a->nrows > b->nrows;
	return a->related_us > b->related_us;
}

void
fuse_detect(const catalog_t *cat, const frow_t *rows, size_t nrows,
    double total_us, const fctx_t *ctx, fresult_t *res)
{
	strtab *keys = strtab_new();
	sbuf key = SBUF_INIT;
	uint32_t *ids, *stamp;
	size_t *order, *owner, norder = 0, i, j, k, r, nkeys, bit0;

	memset(res, 0, sizeof *res);
	res->total_us = total_us;
	res->n = cat->n;
	res->c = xcalloc(cat->n + 1, sizeof *res->c);
	res->out = xcalloc(cat->n + 1, sizeof *res->out);

	/* Row identity is the (name, location, cpu_op) triple (§6 step 6). */
	ids = xcalloc(nrows + 1, sizeof *ids);
	for (r = 0; r < nrows; r++) {
		sb_reset(&key);
		sb_adds(&key, rows[r].name);
		sb_addc(&key, '\0');
		sb_adds(&key, rows[r].location);
		sb_addc(&key, '\0');
		sb_adds(&key, rows[r].cpu_op);
		ids[r] = strtab_intern(keys, key.s, key.len);
	}
	nkeys = strtab_count(keys);
	stamp = xcalloc(nkeys + 1, sizeof *stamp);
	owner = xmalloc((nkeys + 1) * sizeof *owner);
	for (k = 0; k <= nkeys; k++)
		owner[k] = NONE;
	order = xcalloc(cat->n + 1, sizeof *order);

	for (i = 0, bit0 = 0; i < cat->n; bit0 += 1 + cat->p[i].ngroups, i++) {
		cand_t *c = &res->c[i];

		c->p = &cat->p[i];
		c->by = c->row = NONE;
		if (!(total_us > 0)) {
			c->v = V_EMPTY_STAGE;
			continue;
		}
		evaluate(c, rows, nrows, ids, stamp, (uint32_t)i + 1, total_us, ctx, bit0);
		if (c->v != V_ACCEPTED)
			continue;
		/* Stable insertion, descending: equal keys keep catalog order. */
		for (j = norder; j > 0 && ranks_before(c, &res->c[order[j - 1]], ctx->corrected); j--)
			order[j] = order[j - 1];
		order[j] = i;
		norder++;
	}

	/* Greedy selection (§8 step 6), then the render bar (§1 step 5). */
	for (j = 0; j < norder; j++) {
		cand_t *c = &res->c[order[j]];
		int blocked = 0;

		/* Only accepted patterns block, below the render bar or not (edge case 8). */
		for (k = 0; k < j && !blocked; k++) {
			cand_t *a = &res->c[order[k]];
			size_t s;

			if (a->v != V_ACCEPTED && a->v != V_RENDER_BAR)
				continue;
			for (s = 0; s < a->p->subsumes.n; s++) {
				if (strcmp(a->p->subsumes.v[s], c->p->pattern) == 0) {
					blocked = 1;
					c->by = order[k];
					break;
				}
			}
		}
		if (blocked) {
			c->v = V_BLOCKED;
			continue;
		}
		for (r = 0; r < c->nrows; r++) {
			if (owner[ids[c->rows[r]]] != NONE) {
				c->v = V_CONSUMED;
				c->by = owner[ids[c->rows[r]]];
				c->row = c->rows[r];
				break;
			}
		}
		if (c->v == V_CONSUMED)
			continue;
		for (r = 0; r < c->nrows; r++)
			owner[ids[c->rows[r]]] = order[j];
		if (c->share >= RENDER_MIN_SHARE)
			res->out[res->nout++] = order[j];
		else
			c->v = V_RENDER_BAR;
	}

	free(order);
	free(owner);
	free(stamp);
	free(ids);
	sb_free(&key);
	strtab_free(keys);
}

void
fresult_free(fresult_t *res)
{
	size_t i;

	for (i = 0; i < res->n; i++)
		free(res->c[i].rows);
	free(res->c);
	free(res->out);
	memset(res, 0, sizeof *res);
}

const char *
fuse_confidence(const cand_t *c)
{
	return c->direct || c->share >= c->p->likely_share ? "Confirmed" : "Candidate";
}

const char *
fuse_status(const cand_t *c)
{
	return c->direct ? "in use" : "missing";
}

const char *
fuse_origin(const cand_t *c)
{
	switch (c->p->origin) {
	case ORIGIN_MAINLINE:
		return c->direct ? "mainline direct" : "mainline split";
	case ORIGIN_UPSTREAM:
		return c->direct ? "upstream direct" : "upstream split";
	default:
		return c->direct ? "pending direct" : "pending split";
	}
}

void
fuse_evidence(const cand_t *c, const frow_t *rows, double total_us, const fctx_t *ctx,
    sbuf *out)
{
	size_t r, shown = 0;
	double s;

	sb_reset(out);
	if (ctx && ctx->corrected) {
		/* every related row: the first three, then the rest summed */
		nsum rest = NSUM_INIT;
		for (r = 0; r < c->nrows; r++) {
			const frow_t *row = &rows[c->rows[r]];
			if (r < 3) {
				sb_printf(out, "%s%s (%.1f%%)", r ? "<br>" : "", row->name,
				    pct(row->total_us, total_us));
				continue;
			}
			nsum_add(&rest, row->total_us);
		}
		if (c->nrows > 3)
			sb_printf(out, "<br>and %zu more (%.1f%%)", c->nrows - 3,
			    pct(nsum_value(&rest), total_us));
		if (c->nrows == 0)
			sb_adds(out, "-");
		return;
	}
	for (r = 0; r < c->nrows && shown < 3; r++) {
		const frow_t *row = &rows[c->rows[r]];

		s = pct(row->total_us, total_us);
		if (s < RENDER_MIN_SHARE)
			continue;
		if (shown++)
			sb_adds(out, "<br>");
		sb_printf(out, "%s (%.1f%%)", row->name, s);
	}
	if (shown == 0)
		sb_adds(out, "-");
}

/* A small list of distinct strings, capped (the two dedups of §7.2). */
typedef struct {
	char **v;
	size_t n, cap, max;
} uniq_t;

/* Strip and add unless empty, already present or full.  Returns 1 if added. */
static int
uniq_add(uniq_t *u, const char *p, size_t n)
{
	size_t i, len;
	const char *t = text_strip(p, n, &len);

	if (len == 0 || u->n >= u->max)
		return 0;
	for (i = 0; i < u->n; i++)
		if (strlen(u->v[i]) == len && memcmp(u->v[i], t, len) == 0)
			return 0;
	xgrow(&u->v, &u->cap, u->n + 1, sizeof *u->v);
	u->v[u->n++] = xstrndup(t, len);
	return 1;
}

static void
uniq_free(uniq_t *u)
{
	size_t i;

	for (i = 0; i < u->n; i++)
		free(u->v[i]);
	free(u->v);
	u->v = NULL;
	u->n = u->cap = 0;
}

/* kernel_row_locations with limit 4 (§7.2 step 1), appended to all. */
static void
row_locations(const frow_t *row, uniq_t *rowvals, sbuf *tmp)
{
	const char *loc = row->location, *p, *q, *s = row->sitelocs;
	size_t i, nvals = 0;

	(void)tmp;
	/* the sites' A.2 display locations, recomputed when the row was read (edge case 36) */
	for (i = 0; i < row->nsitelocs; i++, s += strlen(s) + 1) {
		nvals++;
		uniq_add(rowvals, s, strlen(s));
	}
	if (nvals > 0 || !loc[0] || strcmp(loc, "unresolved") == 0)
		return;
	/* The fallback of edge case 21: the rendered cell split on "<br>". */
	for (p = loc;; p = q + 4) {
		q = strstr(p, "<br>");
		uniq_add(rowvals, p, q ? (size_t)(q - p) : strlen(p));
		if (!q)
			break;
	}
}

void
fuse_locations(const cand_t *c, const frow_t *rows, sbuf *out)
{
	uniq_t all = { NULL, 0, 0, 4 };
	sbuf tmp = SBUF_INIT, fmt = SBUF_INIT;
	size_t r, i;

	for (r = 0; r < c->nrows && all.n < all.max; r++) {
		uniq_t rowvals = { NULL, 0, 0, 4 };

		row_locations(&rows[c->rows[r]], &rowvals, &tmp);
		for (i = 0; i < rowvals.n; i++) {
			format_fusion_location(rowvals.v[i], strlen(rowvals.v[i]), &fmt);
			uniq_add(&all, sbs(&fmt), fmt.len);
		}
		uniq_free(&rowvals);
	}
	sb_reset(out);
	for (i = 0; i < all.n; i++) {
		if (i)
			sb_adds(out, "<br>");
		sb_adds(out, all.v[i]);
	}
	if (all.n == 0)
		sb_adds(out, "-");
	uniq_free(&all);
	sb_free(&tmp);
	sb_free(&fmt);
}

/* The framework a pattern's candidate path belongs to, as people write it; NULL: none. */
static const char *
path_framework(const pattern_t *p)
{
	if (p->hints & HINT_SGLANG)
		return "SGLang";
	if (p->hints & HINT_VLLM)
		return "vLLM";
	if (p->hints & HINT_TRTLLM)
		return "TensorRT-LLM";
	if (p->hints & HINT_TOKENSPEED)
		return "TokenSpeed";
	return NULL;
}

/* The first element of the candidate path ("python/sglang/srt/layers/layernorm.py"). */
static void
first_path(const pattern_t *p, sbuf *out)
{
	const char *e = strstr(p->candidate_path, "<br>");

	sb_reset(out);
	sb_add(out, p->candidate_path, e ? (size_t)(e - p->candidate_path) :
	    strlen(p->candidate_path));
}

void
fuse_matched(const cand_t *c, const frow_t *rows, const fctx_t *ctx, size_t max,
    int short_kernel, sbuf *out)
{
	const pattern_t *p = c->p;
	words w = { 0 };
	sbuf k = SBUF_INIT;
	size_t g, r, shown = 0;

	/*
	 * The active keywords first, then each split group: its first matching
	 * row; corrected, a fusion in use is only its fused kernels.
	 */
	for (g = 0; g <= (ctx->corrected && c->direct ? 0 : p->ngroups) && shown < max; g++) {
		for (r = 0; r < c->nrows; r++) {
			const frow_t *row = &rows[c->rows[r]];
			unsigned nloc, field = 0;
			long i;
			const needle_t *nd = NULL;

			if (ctx->corrected) {
				haystack_words(&w, row->name, row->location, row->cpu_op, &nloc);
				if (g == 0) {
					if ((i = kw_find(&w, &p->active, &field)) >= 0)
						nd = &p->active.v[i];
					else if ((i = kw_find(&w, &p->also_active, &field)) >= 0)
						nd = &p->also_active.v[i];
				} else if ((i = kw_find(&w, &p->groups[g - 1], &field)) >= 0 &&
				    category_allowed(p, g - 1, row->category)) {
					nd = &p->groups[g - 1].v[i];
				}
			} else {
				haystack_t hs = { SBUF_INIT, SBUF_INIT };
				const kwlist_t *kw = g == 0 ? &p->active : &p->groups[g - 1];
				size_t j;
				haystack_build(&hs, row->name, row->location, row->cpu_op);
				for (j = 0; j < kw->n && !nd; j++) {
					kwlist_t one = { &kw->v[j], 1 };
					if (kw_match(&hs, &one))
						nd = &kw->v[j];
				}
				haystack_free(&hs);
				nloc = 1;
				field = 0;
			}
			if (!nd)
				continue;
			if (short_kernel)
				kname_short(row->name, strlen(row->name), 48, &k);
			else {
				sb_reset(&k);
				sb_adds(&k, row->name);
			}
			sb_printf(out, "%s'%s' in %s", shown++ ? ", " : "", nd->raw, sbs(&k));
			if (ctx->corrected)
				sb_printf(out, " (%s)", field_kind(field, nloc));
			break;
		}
	}
	words_free(&w);
	sb_free(&k);
}

void
fuse_rationale(const cand_t *c, const frow_t *rows, const fctx_t *ctx, sbuf *out)
{
	const pattern_t *p = c->p;
	sbuf m = SBUF_INIT, path = SBUF_INIT;
	const char *fw = path_framework(p);

	sb_reset(out);
	if (!ctx->corrected) {
		if (p->origin == ORIGIN_MAINLINE && c->direct)
			sb_printf(out, "`%s` is present in this trace (%.1f%% related GPU time). %s",
			    p->pattern, c->share, p->rationale);
		else if (p->origin == ORIGIN_MAINLINE)
			sb_printf(out, "Split kernels in this family take %.1f%% of GPU time. "
			    "This tree already has a matching path. %s", c->share, p->rationale);
		else if (p->origin == ORIGIN_UPSTREAM)
			sb_printf(out, "Matches an upstream path (%.1f%% related GPU time). %s",
			    c->share, p->rationale);
		else
			sb_printf(out, "Matches an open upstream path (%.1f%% related GPU time). %s",
			    c->share, p->rationale);
		return;
	}
	/* corrected: what matched, and whose path it is */
	fuse_matched(c, rows, ctx, 4, 1, &m);
	first_path(p, &path);
	if (c->direct)
		sb_printf(out, "`%s` is present in this trace (%.1f%% related GPU time): %s.",
		    p->pattern, c->share, sbs(&m));
	else
		sb_printf(out, "Split kernels of this fusion take %.1f%% of GPU time: %s.", c->share,
		    sbs(&m));
	if (strncmp(sbs(&path), "PR #", 4) == 0)
		sb_printf(out, " The fused path is an open change (%s%s%s).", sbs(&path),
		    fw ? ", " : "", fw ? fw : "");
	else if (p->origin == ORIGIN_MAINLINE)
		sb_printf(out, " %s has the fused path: %s.", fw ? fw : "The framework", sbs(&path));
	else
		sb_printf(out, " The fused path comes from another project (%s%s%s).", sbs(&path),
		    fw ? ", in " : "", fw ? fw : "");
	if (p->rationale[0])
		sb_printf(out, " %s", p->rationale);
	sb_free(&m);
	sb_free(&path);
}

/* "fp8, fp4 or int8" for DT_* bits. */
static void
dtype_names(unsigned bits, sbuf *out)
{
	static const char *const names[] = { "fp8", "fp4", "int8", "int4" };
	size_t i, n = 0, k = 0;

	for (i = 0; i < 4; i++)
		n += (bits >> i) & 1;
	for (i = 0; i < 4; i++)
		if ((bits >> i) & 1)
			sb_printf(out, "%s%s", k++ ? (k == n ? " or " : ", ") : "", names[i]);
}

/* "sglang/vllm" style list of hint names. */
static const char *
hint_names(unsigned hints, sbuf *out)
{
	static const char *const names[] = { "sglang", "vllm", "trtllm", "tokenspeed" };
	size_t i;

	sb_reset(out);
	for (i = 0; i < 4; i++)
		if (hints & (1u << i))
			sb_printf(out, "%s%s", out->len ? "/" : "", names[i]);
	return sbs(out);
}

static void
join_list(sbuf *out, const strlist_t *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		sb_printf(out, "%s'%s'", i ? ", " : "", l->v[i]);
}

void
fuse_explain(const fresult_t *res, const cand_t *c, const frow_t *rows,
    const fctx_t *ctx, sbuf *out)
{
	const pattern_t *p = c->p;
	const char *kind = c->direct ? "direct" : "split";
	sbuf tmp = SBUF_INIT;

	sb_reset(out);
	switch (c->v) {
	case V_EMPTY_STAGE:
		sb_printf(out, "stage has no GPU time");
		break;
	case V_FRAMEWORK:
		sb_printf(out, "candidate path is %s code, framework is '%s'",
		    hint_names(p->hints, &tmp), ctx->framework);
		break;
	case V_TP:
		sb_printf(out, "tp_size %lld is below min_tp_size %lld",
		    ctx->tp_size, p->min_tp_size);
		break;
	case V_MODEL_INCLUDE:
		sb_printf(out, "model '%s'", ctx->model);
		if (ctx->corrected)
			sb_printf(out, " (model family '%s')", ctx->family);
		sb_adds(out, " contains none of ");
		join_list(out, &p->model_include);
		break;
	case V_MODEL_EXCLUDE:
		sb_printf(out, "model '%s'", ctx->model);
		if (ctx->corrected)
			sb_printf(out, " (model family '%s')", ctx->family);
		sb_adds(out, " contains one of ");
		join_list(out, &p->model_exclude);
		break;
	case V_MODEL_FAMILY:
		sb_printf(out, "a pattern of the models ");
		join_list(out, &p->model_family);
		sb_printf(out, "; model '%s', model family '%s' (triage --model NAME names it)",
		    ctx->model, ctx->family);
		break;
	case V_DTYPE:
		sb_adds(out, "a pattern for ");
		dtype_names(p->dtypes, out);
		sb_adds(out, " data, and no kernel name, CPU op or server-args quantization of the "
		    "stage shows it");
		if (ctx->dtypes) {
			sb_adds(out, " (it shows ");
			dtype_names(ctx->dtypes, out);
			sb_adds(out, ")");
		}
		break;
	case V_NO_MOE:
		sb_adds(out, "a pattern about MoE routing or experts, and no kernel of the stage "
		    "is in category moe");
		break;
	case V_NO_HIT:
		if (p->ngroups)
			sb_printf(out, "no active keyword hit; %zu of %zu split groups matched",
			    c->groups_hit, p->ngroups);
		else
			sb_printf(out, "no active keyword hit; no split groups");
		break;
	case V_ZERO_TIME:
		sb_printf(out, "%s match, but its %zu rows have no GPU time", kind, c->nrows);
		break;
	case V_MIN_SHARE:
		sb_printf(out, "split match of %.3f%% is below min_share %g%%",
		    c->share, p->min_share);
		break;
	case V_BLOCKED:
		sb_printf(out, "%s match of %.3f%% blocked: subsumed by accepted '%s'",
		    kind, c->share, res->c[c->by].p->pattern);
		break;
	case V_CONSUMED:
		sb_printf(out, "%s match of %.3f%% dropped: row '%s' already taken by '%s'",
		    kind, c->share, rows[c->row].name, res->c[c->by].p->pattern);
		break;
	case V_RENDER_BAR:
		sb_printf(out, "%s match accepted (it consumes its %zu rows), but "
		    "%.3f%% is below the 1.0%% render bar", kind, c->nrows, c->share);
		break;
	case V_ACCEPTED:
		sb_printf(out, "%s match, %zu rows, %.3f%%, %s", kind, c->nrows,
		    c->share, fuse_confidence(c));
		break;
	}
	/* which keyword matched which kernel, where there was a match */
	if (c->nrows && (c->v == V_ACCEPTED || c->v == V_RENDER_BAR || c->v == V_MIN_SHARE ||
	    c->v == V_BLOCKED || c->v == V_CONSUMED)) {
		sb_adds(out, "; matched ");
		fuse_matched(c, rows, ctx, 8, ctx->corrected, out);
	}
	sb_free(&tmp);
}
