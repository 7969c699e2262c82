/*
 * The GPU-time section's breakdowns of issue 32, from step-stats' records:
 * the launch delays and what they say, the streams, the GPU annotations,
 * and the launch-delay cells of the kernel table.
 */
#include <math.h>
#include <string.h>

#include "num.h"
#include "render.h"
#include "xalloc.h"

void
fmt_delay(sbuf *out, double us)
{
	if (fabs(us) < 1000.0)
		sb_printf(out, "%.1f us", us);
	else
		fmt_ms(out, us);
}

/* A member in microseconds as a cell shown by fmt_delay; "-" when absent. */
static void
cell_delay(struct cell *c, const struct item *it, const char *m)
{
	sbuf b = SBUF_INIT;
	double v;

	if (item_get(it, m) < 0) {
		cell_text(c, "-");
		return;
	}
	v = item_num(it, m, 0);
	fmt_delay(&b, v);
	cell_num(c, v, sb_str(&b));
	sb_free(&b);
}

/* The first item of type t in the stage, or NULL. */
static const struct item *
stage_item(const struct run *run, enum rec_type t, const char *stage)
{
	sbuf b = SBUF_INIT;
	const struct item *found = NULL;
	size_t i;

	for (i = 0; i < run->n && !found; i++)
		if (run->it[i].type == t && item_in_stage(&run->it[i], stage, &b))
			found = &run->it[i];
	sb_free(&b);
	return found;
}

/* ---- launch delays ---- */

static const struct col launch_cols[] = {
	{ "launches", "Launches", 1 },
	{ "p50_us", "Delay p50", 1 },
	{ "p90_us", "Delay p90", 1 },
	{ "max_us", "Delay max", 1 },
	{ "over", "Delays over 100 us", 1 },
	{ "verdict", "Verdict", 0 },
};

/* A launch_delay verdict as people read it. */
static const char *
verdict_text(const char *v)
{
	static const char *const map[][2] = {
		{ "host_bound", "host-bound" }, { "gpu_bound", "GPU-bound" },
		{ "bursty", "host-bound between bursts" }, { "stalled", "stalled" },
		{ "balanced", "neither" },
	};
	size_t i;

	for (i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(v, map[i][0]) == 0)
			return map[i][1];
	return "-";
}

/*
 * The one line saying what the distribution means (step-stats(1) gives
 * the verdicts), with the host-bound idle figure it agrees with.
 */
static char *
launch_line(const struct item *ld, const struct item *g)
{
	sbuf b = SBUF_INIT, v = SBUF_INIT;
	const char *verdict = item_str(ld, "verdict", &v, "");
	double p50 = item_num(ld, "p50_us", 0);
	double span = g ? item_num(g, "span_us", 0) : 0;
	double host = g ? item_num(g, "idle_launch_us", 0) : 0;
	double idle = g ? item_num(g, "idle_us", 0) : 0;

	if (item_get(ld, "clock_offset_us") >= 0) {
		sb_adds(&b, "Launch delays not interpreted: the host's and the GPU's clocks "
		    "disagree by ");
		fmt_delay(&b, fabs(item_num(ld, "clock_offset_us", 0)));
		sb_adds(&b, " (trace-stage), so every kernel seems to start that much after "
		    "or before its launch call.");
		sb_free(&v);
		return sb_detach(&b);
	}
	if (strcmp(verdict, "host_bound") == 0) {
		sb_adds(&b, "Launches arrived as the GPU went idle: host-bound (launch delay p50 ");
		fmt_delay(&b, p50);
		sb_adds(&b, "; the GPU waited for the host ");
		fmt_ms(&b, host);
		sb_printf(&b, ", %.0f%% of the span).", pct(host, span));
	} else if (strcmp(verdict, "bursty") == 0) {
		sb_adds(&b, "The host ran ");
		fmt_delay(&b, p50);
		sb_adds(&b, " ahead within bursts (the launch delay p50), but between them the GPU "
		    "waited for it ");
		fmt_ms(&b, host);
		sb_printf(&b, ", %.0f%% of the span: host-bound between bursts.", pct(host, span));
	} else if (strcmp(verdict, "stalled") == 0) {
		sb_adds(&b, "The GPU idled ");
		fmt_ms(&b, idle - host);
		sb_printf(&b, " (%.0f%% of the span) with work queued that did not start: stalled "
		    "on dependencies (other streams, events or processes), not on the host (the "
		    "GPU waited for the host %.0f%% of the span", pct(idle - host, span),
		    pct(host, span));
		if (p50 >= item_num(ld, "threshold_us", 100)) {
			/* a stall and a queue: the median delay is the queue's (the host ahead) */
			sb_adds(&b, "). Besides the stall the host ran ahead of the GPU: the median "
			    "launch queued ");
			fmt_delay(&b, p50);
			sb_adds(&b, " behind earlier work (GPU-bound).");
		} else {
			sb_adds(&b, "; launch delay p50 ");
			fmt_delay(&b, p50);
			sb_adds(&b, ").");
		}
	} else if (strcmp(verdict, "gpu_bound") == 0) {
		sb_adds(&b, "The host ran ");
		fmt_delay(&b, p50);
		sb_printf(&b, " ahead of the GPU (the launch delay p50): GPU-bound; the GPU waited "
		    "for the host %.0f%% of the span.", pct(host, span));
	} else {
		sb_adds(&b, "Launches arrived just ahead of the GPU: neither host- nor GPU-bound "
		    "(launch delay p50 ");
		fmt_delay(&b, p50);
		sb_printf(&b, "; the GPU waited for the host %.0f%% of the span).",
		    pct(host, span));
	}
	/* besides waiting for the host: idle time with work queued */
	if ((strcmp(verdict, "host_bound") == 0 || strcmp(verdict, "bursty") == 0) && span > 0 &&
	    pct(idle - host, span) >= 10.0) {
		sb_adds(&b, " Another ");
		fmt_ms(&b, idle - host);
		sb_printf(&b, " of idle time (%.0f%% of the span) had work queued that did not "
		    "start: dependencies on other streams, events or processes.",
		    pct(idle - host, span));
	}
	/* issue 25: the part of the queued idle time the host spent blocked too */
	if (g && span > 0 && pct(item_num(g, "idle_sync_us", 0), span) >= 10.0) {
		sbuf c = SBUF_INIT;
		sb_adds(&b, " Of the idle time, ");
		fmt_ms(&b, item_num(g, "idle_sync_us", 0));
		sb_printf(&b, " (%.0f%% of the span) the host sat blocked in a synchronizing call "
		    "while the GPU waited with work queued: both waited on a synchronization "
		    "(an event, a synchronous copy or a stream behind one), not on each other; "
		    "the longest such wait ", pct(item_num(g, "idle_sync_us", 0), span));
		fmt_ms(&b, item_num(g, "sync_gap_us", 0));
		sb_printf(&b, ", in %s.", item_str(g, "sync_gap_call", &c, "a blocking call"));
		sb_free(&c);
	}
	sb_free(&v);
	return sb_detach(&b);
}

void
launch_tab(const struct run *run, struct section *sec, const char *stage)
{
	const struct item *ld = stage_item(run, RT_launch_delay, stage);
	sbuf v = SBUF_INIT;
	struct tab *t;
	struct cell *c;

	if (!ld)
		return;
	t = add_tab(sec, "launch", stage, launch_cols, sizeof launch_cols / sizeof launch_cols[0]);
	c = add_row(t);
	cell_member(&c[0], ld, "launches");
	cell_delay(&c[1], ld, "p50_us");
	cell_delay(&c[2], ld, "p90_us");
	cell_delay(&c[3], ld, "max_us");
	cell_member(&c[4], ld, "over");
	item_str(ld, "verdict", &v, "");
	if (!v.len) {
		cell_none(&c[5]);	/* no verdict: "-", null for machines */
	} else {
		cell_text(&c[5], verdict_text(v.s));
		/* json, csv and tsv keep the record's own word (verdict_short has the label) */
		if (strcmp(c[5].text, v.s) != 0)
			c[5].full = xstrdup(v.s);
	}
	t->total = launch_line(ld, stage_item(run, RT_gpu_time, stage));
	sb_free(&v);
}

/*
 * A table of one row per record of type `type` in the stage: the first
 * ntext columns text members (the default where a record lacks one), the
 * rest numbers; `total` the line above it.  No record, no table.
 */
static void
record_tab(const struct run *run, struct section *sec, const char *stage,
    enum rec_type type, const char *id, const struct col *cols, size_t ncols,
    size_t ntext, const char *const *defaults, const char *total)
{
	struct tab *t = NULL;
	sbuf b = SBUF_INIT;
	size_t i, c;

	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		struct cell *cl;
		if (it->type != type || !item_in_stage(it, stage, &b))
			continue;
		if (!t)
			t = add_tab(sec, id, stage, cols, ncols);
		cl = add_row(t);
		for (c = 0; c < ntext; c++)
			cell_text(&cl[c], item_str(it, cols[c].key, &b, defaults[c]));
		for (; c < t->ncols; c++)
			cell_member(&cl[c], it, t->cols[c].key);
	}
	if (t)
		t->total = xstrdup(total);
	sb_free(&b);
}

/* ---- streams ---- */

static const struct col stream_cols[] = {
	{ "stream", "Stream", 0 },
	{ "kind", "Kind", 0 },
	{ "kernels", "GPU items", 1 },
	{ "kernel_us", "Kernel time", 1 },
	{ "busy_us", "Busy", 1 },
	{ "idle_us", "Idle in its span", 1 },
	{ "span_us", "Its span", 1 },
};

void
stream_tab(const struct run *run, struct section *sec, const char *stage)
{
	static const char *const defaults[] = { "", "compute" };

	record_tab(run, sec, stage, RT_stream_time, "stream", stream_cols,
	    sizeof stream_cols / sizeof stream_cols[0], 2, defaults,
	    "Per stream: its kernels, copies and sets, its busy time (the union of their "
	    "intervals), and its idle time within its own span, from its first item's start "
	    "to its last one's end; its kind is what most of its kernel time was:");
}

/* ---- GPU annotations ---- */

static const struct col annotation_cols[] = {
	{ "name", "GPU annotation", 0 },
	{ "count", "Ranges", 1 },
	{ "busy_us", "GPU busy inside", 1 },
	{ "share_pct", "Share of stage busy", 1 },
	{ "range_us", "Range time", 1 },
};

void
annotation_tab(const struct run *run, struct section *sec, const char *stage)
{
	static const char *const defaults[] = { "" };

	record_tab(run, sec, stage, RT_annotation_time, "annotation", annotation_cols,
	    sizeof annotation_cols / sizeof annotation_cols[0], 1, defaults,
	    "GPU annotations (the trace's gpu_user_annotation ranges, Kineto's GPU side of "
	    "record_function and NVTX-like ranges): per name, the GPU's busy time inside its "
	    "ranges with work of the range's own stream, its share of the stage's busy time, "
	    "and how long the ranges were open; names nest, so the shares do not add up:");
}

/* ---- the kernel table's cells ---- */

/*
 * The kernel_delay record of step-stats for a kernel row (the same trace,
 * stage and kernel name: step-stats writes one per key), or NULL.
 */
static const struct item *
row_delay(const struct run *run, const struct item *row)
{
	sbuf st = SBUF_INIT, kn = SBUF_INIT;
	const struct item *found = NULL;
	long long t = item_int(row, "t", 0);
	const char *stage = item_str(row, "stage", &st, "all");
	const char *kernel = item_str(row, "kernel", &kn, "");
	size_t i, klen = kn.len;

	for (i = 0; i < run->n && !found; i++) {
		const struct item *it = &run->it[i];
		int m;
		if (it->type != RT_kernel_delay || item_int(it, "t", 0) != t)
			continue;
		m = item_get(it, "stage");
		if (m < 0 || !json_str_eq(&it->doc, m, stage, strlen(stage)))
			continue;
		m = item_get(it, "kernel");
		if (m >= 0 && json_str_eq(&it->doc, m, kernel, klen))
			found = it;
	}
	sb_free(&st);
	sb_free(&kn);
	return found;
}

void
delay_cells(const struct run *run, const struct item *row, struct cell *p50, struct cell *max)
{
	const struct item *dl = row_delay(run, row);

	if (!dl) {	/* no launch submitted it first: inside a graph replay, or no launch record */
		cell_text(p50, "-");
		cell_text(max, "-");
		return;
	}
	cell_delay(p50, dl, "p50_us");
	cell_delay(max, dl, "max_us");
}
