/* Matching catalog patterns against one stage's kernel rows, and the row cells. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect.h"
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

/* Does a split group name GEMMs (a GEMM-replacing pattern's group)? */
static int
gemm_group(const kwlist_t *g)
{
	static const char *const words[] = { "gemm", "matmul", "_mm", "nvjet", "cublas",
		"cutlass", "linear", "gemv", NULL };
	size_t i, w;

	for (i = 0; i < g->n; i++)
		for (w = 0; words[w]; w++)
			if (strstr(g->v[i].lower, words[w]))
				return 1;
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
	if (p->model_include.n && !model_has_any(ctx->model, &p->model_include))
		return V_MODEL_INCLUDE;
	if (p->model_exclude.n && model_has_any(ctx->model, &p->model_exclude))
		return V_MODEL_EXCLUDE;
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
			 * Corrected: a GEMM is not one of the separate kernels a
			 * norm, quantization or activation fusion replaces, even
			 * when its name carries a data type ("mxfp4") or an
			 * epilogue; it is evidence only for a group of GEMMs.
			 */
			if (h[1 + g] && ctx->corrected && (strcmp(rows[r].category, "gemm") == 0 ||
			    strcmp(rows[r].category, "moe") == 0) &&
			    !gemm_group(&p->groups[g]))
				h[1 + g] = 0;
			all += h[1 + g];
		}
		/*
		 * Corrected: a kernel named "fused..." that covers every split
		 * group by itself is the fusion already running ("in use").
		 */
		if (ctx->corrected && !h[0] && ngroups > 0 && all == ngroups &&
		    text_has_ci(rows[r].name, strlen(rows[r].name), "fused"))
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
	for (g = 0; g <= ngroups; g++) {
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

/* Sort key of §8 step 5, descending: 1 when a ranks strictly before b. */
static int
ranks_before(const cand_t *a, const cand_t *b)
{
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
		for (j = norder; j > 0 && ranks_before(c, &res->c[order[j - 1]]); j--)
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
fuse_evidence(const cand_t *c, const frow_t *rows, double total_us, sbuf *out)
{
	size_t r, shown = 0;
	double s;

	sb_reset(out);
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

void
fuse_rationale(const cand_t *c, sbuf *out)
{
	const pattern_t *p = c->p;

	sb_reset(out);
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
		sb_printf(out, "model '%s' contains none of ", ctx->model);
		join_list(out, &p->model_include);
		break;
	case V_MODEL_EXCLUDE:
		sb_printf(out, "model '%s' contains one of ", ctx->model);
		join_list(out, &p->model_exclude);
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
	sb_free(&tmp);
}
