/*
 * Which rank is the straggler, and where is its lateness?  The "Ranks"
 * section lays out rank-skew(1)'s records per stage: each rank's times and
 * late arrivals, the collectives with the most skew, where the straggler's
 * lateness is (its host, its GPU idle gaps or its kernels) and, when its
 * kernels account for enough of it, those that run longer than the other
 * ranks' median; and what could not be matched (issue 20, 31).
 */
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "xalloc.h"

enum { TOP_COLLECTIVES = 10 };	/* the collectives shown per stage, most skew first */

/*
 * The straggler's slow-kernel list is shown when its kernels account for
 * at least this share of its lateness (issue 31): their time excess over
 * the other ranks', or its GPU's extra busy time before the late
 * collectives, whichever is larger.  Below a tenth, making every kernel
 * as fast as on the other ranks would leave it nearly as late: the list
 * would point at the wrong place, its rows microseconds of run-to-run
 * noise.  The rows stay in json, csv and tsv.
 */
#define KERNEL_SHARE 0.10

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
	{ "median_us", "Other ranks' median", 1 },
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
		xqsort(v, n, sizeof *v, cmp_desc);
	sb_free(&b);
	*out = v;
	return n;
}

static int
cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
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
		    "after alignment a matched collective's ends spread %.0f us across the ranks "
		    "(the median over the collectives).",
		    item_str(al[0].it, "kind", &m, ""), item_int(al[0].it, "ref_rank", 0),
		    item_num(al[0].it, "end_spread_us", 0));
	else
		sb_adds(&b, "Timestamps taken as they are (no clock alignment).");
	sb_free(&m);
	return sb_detach(&b);
}

/*
 * The rank_gap records as sentences: what could not be matched and why,
 * each rank concerned with its count (and, for names, its kernel), at most
 * eight of them; the record's JSON never reaches the report as it is.
 */
static char *
gaps(const struct idx *g, size_t n)
{
	sbuf b = SBUF_INIT, s = SBUF_INIT, k = SBUF_INIT, nm = SBUF_INIT;
	size_t i;

	for (i = 0; i < n; i++) {
		const json_doc *d = &g[i].it->doc;
		const char *reason = item_str(g[i].it, "reason", &s, "");
		const char *kind = item_str(g[i].it, "kind", &k, NULL);
		int r = item_get(g[i].it, "ranks"), e, j, shown = 0, total = 0;
		long long ord = item_int(g[i].it, "ordinal", 0);

		sb_printf(&b, "%sNot matched%s%s: ", b.len ? " " : "", kind ? " " : "",
		    kind ? kind : "");
		if (strcmp(reason, "missing") == 0)
			sb_adds(&b, "ranks without kernels in this stage");
		else if (strcmp(reason, "count") == 0)
			sb_adds(&b, "the ranks hold different numbers of them");
		else if (strcmp(reason, "names") == 0)
			sb_printf(&b, "the kernels differ between ranks at number %lld", ord);
		else
			sb_adds(&b, reason);
		if (r >= 0 && json_kind(d, r) == JK_ARR) {
			total = d->tok[r].size;
			for (j = 0, e = r + 1; j < total; j++, e = json_skip(d, e)) {
				if (json_kind(d, e) != JK_OBJ || shown == 8)
					continue;
				sb_adds(&b, shown ? ", " : " (");
				sb_printf(&b, "rank %lld", obj_int(d, e, "rank", -1));
				if (strcmp(reason, "missing") != 0)
					sb_printf(&b, ": %lld", obj_int(d, e, "count", 0));
				if (json_get(d, e, "name") >= 0)
					sb_printf(&b, " %s", obj_str(d, e, "name", &nm, ""));
				shown++;
			}
			if (shown && total > shown)
				sb_printf(&b, ", %d more", total - shown);
			if (shown)
				sb_addc(&b, ')');
		}
		sb_addc(&b, '.');
	}
	sb_free(&s);
	sb_free(&k);
	sb_free(&nm);
	return b.len ? sb_detach(&b) : (sb_free(&b), NULL);
}

/* "1.23 ms" of a time in microseconds, into b (reset first); returns b's text. */
static const char *
ms(sbuf *b, double us)
{
	sb_reset(b);
	fmt_ms(b, us);
	return b->s;
}

/* "+1.23 ms" or "-1.23 ms" (b reset first); returns b's text. */
static const char *
signed_ms(sbuf *b, double us)
{
	sb_reset(b);
	sb_addc(b, us < 0 ? '-' : '+');
	fmt_ms(b, us < 0 ? -us : us);
	return b->s;
}

/*
 * Where the straggler (its rank_row, with rank-skew's late_* members) is
 * late: a headline (*head) and the figures (the return), before its
 * slow-kernel table; NULL for records without those members.  *show:
 * whether the table's rows are worth showing (KERNEL_SHARE).
 */
static char *
where_late(const struct item *it, const char *stage, char **head, int *show)
{
	sbuf o = SBUF_INIT, a = SBUF_INIT, c = SBUF_INIT, w = SBUF_INIT;
	double late = item_num(it, "late_us", 0), launch = item_num(it, "late_launch_us", 0);
	double idle = item_num(it, "late_idle_us", 0), busy = item_num(it, "late_busy_us", 0);
	double excess = item_num(it, "kernel_excess_us", 0);
	long long rank = item_int(it, "rank", 0), n = item_int(it, "late_collectives", 0);
	const char *in = item_str(it, "late_in", &w, "");
	const char *them = n == 1 ? "it" : "them";
	int has_launch = item_get(it, "late_launch_us") >= 0;

	*show = 1;
	*head = NULL;
	if (item_get(it, "late_us") < 0 || !*in) {
		sb_free(&w);
		return NULL;
	}
	*show = late > 0 && (excess >= late * KERNEL_SHARE || busy >= late * KERNEL_SHARE);
	if (!(late > 0)) {
		*head = printf_dup("%s: rank %lld arrived last without starting later than the "
		    "other ranks' median: no lateness to place.", stage, rank);
		sb_free(&w);
		return NULL;
	}
	sb_printf(&o, "%s: rank %lld's lateness is %s: at the %lld collective%s it arrived last "
	    "at, it started %s after the other ranks", stage, rank,
	    strcmp(in, "host") == 0 ? "on its host" : strcmp(in, "idle") == 0 ?
	    "in its GPU idle gaps" : strcmp(in, "kernels") == 0 ? "in its kernels" :
	    "in no one place", n, n == 1 ? "" : "s", ms(&a, late));
	if (strcmp(in, "host") == 0)
		sb_printf(&o, ", and its launch calls of %s came %s after the others'.", them,
		    ms(&a, launch));
	else if (strcmp(in, "idle") == 0 && has_launch && launch > 0)
		sb_printf(&o, ", launched %s only %s later, and its GPU sat idle %s longer before "
		    "%s.", them, ms(&c, launch), ms(&a, idle), them);
	else if (strcmp(in, "idle") == 0 && has_launch)
		sb_printf(&o, ", launched %s no later than they did, and its GPU sat idle %s longer "
		    "before %s.", them, ms(&a, idle), them);
	else if (strcmp(in, "idle") == 0)
		sb_printf(&o, ", and its GPU sat idle %s longer before %s.", ms(&a, idle), them);
	else if (strcmp(in, "kernels") == 0)
		sb_printf(&o, ", and its GPU ran kernels %s longer before %s.", ms(&a, busy), them);
	else
		sb_adds(&o, ".");
	*head = sb_detach(&o);
	sb_printf(&o, "Against the other ranks' median, summed over those collectives: its start "
	    "%s", signed_ms(&a, late));
	if (has_launch)
		sb_printf(&o, ", its launch calls %s", signed_ms(&a, launch));
	else
		sb_adds(&o, ", its launch calls not in the traces");
	sb_printf(&o, ", its GPU's idle time before them %s", signed_ms(&a, idle));
	sb_printf(&o, " and busy time %s; its kernels take %s %s than the other ranks' "
	    "(median) in the whole stage.", signed_ms(&a, busy),
	    ms(&c, excess < 0 ? -excess : excess), excess < 0 ? "less" : "more");
	if (strcmp(in, "host") == 0)
		sb_adds(&o, " The GPU cannot start what the host has not launched: the time is "
		    "in the host's work before those launches (Python, data loading, CPU ops).");
	else if (strcmp(in, "idle") == 0)
		sb_adds(&o, " Launched in time, the collectives waited on a GPU with nothing "
		    "running: a dependency (an event, a copy, another stream) came late.");
	else if (strcmp(in, "kernels") == 0 && excess < late * KERNEL_SHARE)
		sb_adds(&o, " Its GPU was still busy with other work before them, yet its kernels "
		    "take about as long as the other ranks' in all: the same work ran before the "
		    "collectives instead of beside or after them (their order, not their speed).");
	else if (strcmp(in, "kernels") == 0)
		sb_adds(&o, " Its GPU was still busy with other work before them.");
	if (!*show)
		sb_printf(&o, " Its kernels account for under %.0f%% of the lateness: no "
		    "slow-kernel list.", KERNEL_SHARE * 100);
	sb_free(&a);
	sb_free(&c);
	sb_free(&w);
	return sb_detach(&o);
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
	const struct item *lag = NULL;
	char *where = NULL, *where_head = NULL;
	int show_deltas = 1;
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
			else if (nc == 0 && (strcmp(t->cols[c].key, "wait_us") == 0 ||
			    strcmp(t->cols[c].key, "last_arrivals") == 0))
				cell_text(&cl[c], "-");	/* nothing matched: nothing measured */
			else
				cell_member(&cl[c], it, t->cols[c].key);
		cell_text(&cl[c], item_bool(it, "straggler") ? "yes" : "");
		if (item_bool(it, "straggler")) {
			lag = it;
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
	} else if (nr > 1 && nc > 0) {
		t->headline = printf_dup("%s: no straggler: at the %zu matched collective%s the "
		    "ranks arrived together (within the clocks' agreement, rank-skew(1)).", stage, nc,
		    nc == 1 ? "" : "s");
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

	if (lag)
		where = where_late(lag, stage, &where_head, &show_deltas);
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
		if (!show_deltas)
			row_fold(t);
	}
	free(names);
	free(shorts);
	if (where && show_deltas && nd) {
		char *tot = printf_dup("%s The straggler's kernels that take longer than the "
		    "other ranks' median:", where);
		free(where);
		t->total = tot;
	} else if (where) {
		t->total = where;
		if (nd)	/* the rows are folded: the sentence says why */
			t->folded = printf_dup("%zu kernel%s of the straggler with more time than the "
			    "other ranks' median, not listed (-f json has them).", nd, nd == 1 ? "" : "s");
	} else if (lag)
		t->total = xstrdup("The straggler's kernels that take longer than the other "
		    "ranks' median:");
	t->headline = where_head;
	t->empty = xstrdup(lag ? "No kernel of the straggler runs longer than the other ranks' "
	    "median." : "No straggler in this stage, so no kernels of one to compare.");

	free(rows);
	free(colls);
	free(deltas);
	free(al);
	free(gp);
	sb_free(&b);
}

/*
 * "Ranks 0, 2, 4 and 5 of the run's 8 compared (the traces of the others
 * are not here)" when the traces' world size is larger than the ranks
 * compared: the straggler and the waits are among those alone.
 */
static void
partial_ranks(const struct run *run, sbuf *out)
{
	const struct item *tr = find_item(run, RT_trace, "role", "single", "single");
	long long w = tr ? item_int(tr, "world_size", -1) : -1, seen[64];
	int more;
	size_t i, n = ranks_seen(run, seen, sizeof seen / sizeof seen[0], &more);

	if (w <= (long long)n || more)
		return;
	qsort(seen, n, sizeof *seen, cmp_ll);
	sb_adds(out, n == 1 ? "Rank " : "Ranks ");
	for (i = 0; i < n; i++)
		sb_printf(out, "%s%lld", i == 0 ? "" : i + 1 == n ? " and " : ", ", seen[i]);
	sb_printf(out, " of the run's %lld compared (the other ranks' traces are not here: "
	    "the straggler and the waits are among these)", w);
}

void
ranks_section(const struct run *run, struct doc *d)
{
	struct section *sec;
	char **stages;
	size_t ns, si;
	sbuf b = SBUF_INIT;

	ns = stages_of(run, RT_rank_row, &stages);
	if (!ns)
		return;
	sec = add_section(d, "ranks", "Ranks");
	sb_reset(&b);
	partial_ranks(run, &b);
	sec->intro = printf_dup("%s, stage by stage (rank-skew(1)): "
	    "its GPU time, the time it waited inside collectives for the others, and how "
	    "often it arrived last. The straggler is the rank that arrived last most often; "
	    "its lateness is on its host (the collectives launched late), in its GPU's idle "
	    "gaps before them, or in its kernels. The other tables are the lowest rank's.",
	    b.len ? b.s : "Every rank of the run compared");
	sb_free(&b);
	for (si = 0; si < ns; si++)
		stage_tables(run, sec, stages[si]);
	free_strings(stages, ns);
}
