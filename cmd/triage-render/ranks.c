/*
 * Which rank is the straggler?  The "Ranks" section lays out rank-skew(1)'s
 * records per stage: each rank's times and late arrivals, the collectives
 * with the most skew, the straggler's kernels that run longer than the
 * median rank's, and what could not be matched (issue 20).
 */
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "xalloc.h"

enum { TOP_COLLECTIVES = 10 };	/* the collectives shown per stage, most skew first */

static const struct col rank_cols[] = {
	{ "rank", "Rank", 1 },
	{ "busy_us", "GPU busy", 1 },
	{ "kernel_us", "Kernel time", 1 },
	{ "comm_us", "Communication", 1 },
	{ "wait_us", "Waiting in collectives", 1 },
	{ "last_arrivals", "Arrived last", 1 },
	{ "matched", "Collectives matched", 1 },
	{ "offset_us", "Clock offset", 1 },
	{ "straggler", "Straggler", 0 },
};

static const struct col coll_cols[] = {
	{ "kind", "Kind", 0 },
	{ "ordinal", "#", 1 },
	{ "skew_us", "Arrival skew", 1 },
	{ "wait_us", "Wait", 1 },
	{ "last_rank", "Last rank", 1 },
	{ "name", "Kernel", 0 },
};

static const struct col delta_cols[] = {
	{ "rank", "Rank", 1 },
	{ "kernel", "Kernel", 0 },
	{ "rank_us", "On this rank", 1 },
	{ "median_us", "Median rank", 1 },
	{ "delta_us", "Excess", 1 },
	{ "launches", "Launches", 1 },
};

struct idx {
	const struct item *it;
	double key;
};

static int
cmp_desc(const void *a, const void *b)
{
	double x = ((const struct idx *)a)->key, y = ((const struct idx *)b)->key;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The items of type/stage, sorted by member `by` descending (NULL: record order). */
static size_t
pick(const struct run *run, const char *type, const char *stage, const char *by,
    struct idx **out)
{
	struct idx *v = NULL;
	size_t n = 0, cap = 0, i;
	sbuf b = SBUF_INIT;

	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		if (!item_is(it, type) || !item_in_stage(it, stage, &b))
			continue;
		xgrow(&v, &cap, n + 1, sizeof *v);
		v[n].it = it;
		v[n++].key = by ? item_num(it, by, 0) : 0;
	}
	if (by && n > 1)
		qsort(v, n, sizeof *v, cmp_desc);
	sb_free(&b);
	*out = v;
	return n;
}

/* One sentence on how the clocks were aligned, from the rank_align record. */
static char *
alignment(const struct idx *al, size_t n)
{
	sbuf b = SBUF_INIT, m = SBUF_INIT;

	if (!n)
		return NULL;
	if (strcmp(item_str(al[0].it, "method", &m, ""), "end") == 0 &&
	    item_get(al[0].it, "kind") >= 0)
		sb_printf(&b, "Clocks aligned on the end of the first matched %s (rank %lld's); "
		    "after alignment the matched collectives end within %.0f us of each other.",
		    item_str(al[0].it, "kind", &m, ""), item_int(al[0].it, "ref_rank", 0),
		    item_num(al[0].it, "end_spread_us", 0));
	else
		sb_adds(&b, "Timestamps taken as they are (no clock alignment).");
	sb_free(&m);
	return sb_detach(&b);
}

/* The rank_gap records as sentences: what could not be matched and why. */
static char *
gaps(const struct idx *g, size_t n)
{
	sbuf b = SBUF_INIT, s = SBUF_INIT, k = SBUF_INIT;
	size_t i;

	for (i = 0; i < n; i++) {
		const char *reason = item_str(g[i].it, "reason", &s, "");
		const char *kind = item_str(g[i].it, "kind", &k, NULL);
		int r = item_get(g[i].it, "ranks");
		sb_printf(&b, "%sNot matched%s%s: %s", b.len ? " " : "", kind ? " " : "",
		    kind ? kind : "", reason);
		if (r >= 0) {
			size_t len;
			const char *span = json_span(&g[i].it->doc, r, &len);
			sb_printf(&b, " (ranks: %.*s)", (int)(len > 200 ? 200 : len), span);
		}
		sb_addc(&b, '.');
	}
	sb_free(&s);
	sb_free(&k);
	return b.len ? sb_detach(&b) : (sb_free(&b), NULL);
}

static void
stage_tables(const struct run *run, struct section *sec, const char *stage)
{
	struct idx *rows, *colls, *deltas, *al, *gp;
	size_t nr = pick(run, "rank_row", stage, NULL, &rows);
	size_t nc = pick(run, "collective_row", stage, "skew_us", &colls);
	size_t nd = pick(run, "rank_kernel_delta", stage, "delta_us", &deltas);
	size_t na = pick(run, "rank_align", stage, NULL, &al);
	size_t ng = pick(run, "rank_gap", stage, NULL, &gp);
	struct tab *t;
	sbuf b = SBUF_INIT;
	size_t i, c, show;
	long long straggler = -1, last = 0;
	double wmin = 0, wmax = 0;
	char **names, **shorts;

	t = add_tab(sec, "rank", stage, rank_cols, sizeof rank_cols / sizeof rank_cols[0]);
	for (i = 0; i < nr; i++) {
		struct cell *cl = add_row(t);
		const struct item *it = rows[i].it;
		double w = item_num(it, "wait_us", 0);
		row_id(t, it);
		for (c = 0; c + 1 < t->ncols; c++)
			if (strcmp(t->cols[c].key, "rank") == 0)
				cell_int(&cl[c], item_int(it, "rank", 0));
			else
				cell_member(&cl[c], it, t->cols[c].key);
		cell_text(&cl[c], item_bool(it, "straggler") ? "yes" : "");
		if (item_bool(it, "straggler")) {
			straggler = item_int(it, "rank", 0);
			last = item_int(it, "last_arrivals", 0);
		}
		if (i == 0 || w < wmin)
			wmin = w;
		if (i == 0 || w > wmax)
			wmax = w;
	}
	if (straggler >= 0) {
		sbuf lo = SBUF_INIT, hi = SBUF_INIT;
		fmt_ms(&lo, wmin);
		fmt_ms(&hi, wmax);
		t->headline = printf_dup("%s: rank %lld is the straggler (last to arrive at %lld "
		    "of %zu matched collectives); the ranks waited %s to %s in collectives.",
		    stage, straggler, last, nc, lo.s, hi.s);
		sb_free(&lo);
		sb_free(&hi);
	} else if (nr > 1) {
		t->headline = printf_dup("%s: no straggler (no collective matched on every rank).",
		    stage);
	}
	t->total = alignment(al, na);
	t->more = gaps(gp, ng);
	t->empty = xstrdup("No rank of this stage has kernels.");

	t = add_tab(sec, "collective", stage, coll_cols, sizeof coll_cols / sizeof coll_cols[0]);
	show = nc < TOP_COLLECTIVES ? nc : TOP_COLLECTIVES;
	names = xcalloc(show ? show : 1, sizeof *names);
	shorts = xcalloc(show ? show : 1, sizeof *shorts);
	for (i = 0; i < show; i++)
		names[i] = xstrdup(item_str(colls[i].it, "name", &b, ""));
	short_names((const char *const *)names, show, shorts);
	for (i = 0; i < show; i++) {
		struct cell *cl = add_row(t);
		const struct item *it = colls[i].it;
		row_id(t, it);
		cell_text(&cl[0], item_str(it, "kind", &b, ""));
		cell_member(&cl[1], it, "ordinal");
		cell_member(&cl[2], it, "skew_us");
		cell_member(&cl[3], it, "wait_us");
		cell_member(&cl[4], it, "last_rank");
		cl[5].text = shorts[i];
		cl[5].full = strcmp(shorts[i], names[i]) ? names[i] : (free(names[i]), NULL);
	}
	free(names);
	free(shorts);
	if (nc > show)
		t->more = printf_dup("%zu more matched collective%s with less skew.", nc - show,
		    nc - show == 1 ? "" : "s");
	t->total = xstrdup("The collectives whose ranks arrived furthest apart:");
	t->empty = xstrdup("No collective matched across the ranks.");

	t = add_tab(sec, "rank_kernel", stage, delta_cols, sizeof delta_cols / sizeof delta_cols[0]);
	names = xcalloc(nd ? nd : 1, sizeof *names);
	shorts = xcalloc(nd ? nd : 1, sizeof *shorts);
	for (i = 0; i < nd; i++)
		names[i] = xstrdup(item_str(deltas[i].it, "kernel", &b, ""));
	short_names((const char *const *)names, nd, shorts);
	for (i = 0; i < nd; i++) {
		struct cell *cl = add_row(t);
		const struct item *it = deltas[i].it;
		row_id(t, it);
		cell_int(&cl[0], item_int(it, "rank", 0));
		cl[1].text = shorts[i];
		cl[1].full = strcmp(shorts[i], names[i]) ? names[i] : (free(names[i]), NULL);
		for (c = 2; c < t->ncols; c++)
			cell_member(&cl[c], it, t->cols[c].key);
	}
	free(names);
	free(shorts);
	t->total = xstrdup("The straggler's kernels that take longer than on the median rank:");
	t->empty = xstrdup("No kernel of the straggler runs longer than on the median rank.");

	free(rows);
	free(colls);
	free(deltas);
	free(al);
	free(gp);
	sb_free(&b);
}

void
ranks_section(const struct run *run, struct doc *d)
{
	struct section *sec;
	char **stages;
	size_t ns, si;

	ns = stages_of(run, RT_rank_row, &stages);
	if (!ns)
		return;
	sec = add_section(d, "ranks", "Ranks");
	sec->intro = xstrdup("Every rank of the run compared, stage by stage (rank-skew(1)): "
	    "its GPU time, the time it waited inside collectives for the others, and how "
	    "often it arrived last. The straggler is the rank that arrived last most often; "
	    "what makes it late is in its other kernels. The other tables are the lowest "
	    "rank's.");
	for (si = 0; si < ns; si++)
		stage_tables(run, sec, stages[si]);
	free_strings(stages, ns);
}
