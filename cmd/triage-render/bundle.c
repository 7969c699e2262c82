/*
 * A bundle's summary (issue 31): one row per run -- its model, framework,
 * GPU, GPU time per stage, step median and health verdict -- and, in
 * HTML, a chart of the runs' GPU time stacked by stage, so that runs can
 * be compared before reading each report.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpuspec.h"
#include "render.h"
#include "rules.h"
#include "xalloc.h"

static const struct col run_cols[] = {
	{ "run", "Run", 0 },
	{ "model", "Model", 0 },
	{ "framework", "Framework", 0 },
	{ "gpu", "GPU", 0 },
	{ "extend_us", "extend/prefill GPU time", 1 },
	{ "decode_us", "decode GPU time", 1 },
	{ "all_us", "GPU time (no stage)", 1 },
	{ "step_p50_us", "Step p50", 1 },
	/* the GPU's step time where the host queued steps ahead (step-stats' steps_host_ahead) */
	{ "step_busy_p50_us", "Step GPU busy p50", 1 },
	{ "step_stage", "Step stage", 0 },
	{ "health", "Health", 0 },
};
#define NRCOLS (sizeof run_cols / sizeof run_cols[0])

/* The stages of the summary's columns, in their order. */
static const char *const stage_cols[] = { "extend", "decode", "all" };

/*
 * The run's GPU: the name of its first device record (trace-extract's
 * deviceProperties, when it writes them), "and N more" when the run has
 * devices of other names; NULL when it has none.
 */
static char *
run_gpu(const struct run *run)
{
	sbuf b = SBUF_INIT;
	char *first = NULL;
	size_t i, other = 0;

	for (i = 0; i < run->n; i++) {
		const char *nm;
		const struct item *dv = &run->it[i];
		if (!item_is(dv, "device") || item_get(dv, "name") < 0)
			continue;
		nm = item_str(dv, "name", &b, "");
		if (gpu_name_generic(nm)) {
			/* an empty or generic name (ROCm 6.2, 7): the part its figures fit, as the header */
			const struct gpu *g;
			const char *why;
			char wb[256];
			g = gpu_match(gputab_builtin(), nm, item_int(dv, "num_sms", -1),
			    (int)item_int(dv, "compute_major", -1), (int)item_int(dv, "compute_minor", 0),
			    item_int(dv, "total_global_mem", -1), &why, wb, sizeof wb);
			sb_reset(&b);
			sb_adds(&b, g ? g->name : "unnamed GPU");
			if (g)
				sb_adds(&b, " (matched)");
			nm = b.s;
		}
		if (!first)
			first = xstrdup(nm);
		else if (strcmp(first, nm) != 0)
			other++;
	}
	sb_free(&b);
	if (first && other) {
		char *s = printf_dup("%s and %zu other%s", first, other, other == 1 ? "" : "s");
		free(first);
		return s;
	}
	return first;
}

/* The stage's GPU time: its kernel rows' stage total (the kernel table's); NAN when none. */
static double
stage_time(const struct run *run, const char *stage)
{
	sbuf b = SBUF_INIT;
	size_t i;
	double v = NAN;

	for (i = 0; i < run->n && isnan(v); i++)
		if (run->it[i].type == RT_kernel_row && item_in_stage(&run->it[i], stage, &b))
			v = item_num(&run->it[i], "stage_total_us", NAN);
	sb_free(&b);
	return v;
}

/*
 * The gpu_time record of the run's step median: decode's when it has steps
 * (the serving loop's period), else the first stage's that has; *stage
 * names it.  NULL when no stage has steps.
 */
static const struct item *
step_median(const struct run *run, const char **stage)
{
	static const char *const order[] = { "decode", "extend", "all" };
	sbuf b = SBUF_INIT;
	size_t i, k;
	const struct item *g = NULL;

	*stage = NULL;
	for (k = 0; k < 3 && !g; k++)
		for (i = 0; i < run->n && !g; i++) {
			const struct item *it = &run->it[i];
			if (item_is(it, "gpu_time") && item_in_stage(it, order[k], &b) &&
			    item_get(it, "step_p50_us") >= 0) {
				g = it;
				*stage = order[k];
			}
		}
	sb_free(&b);
	return g;
}

static void
cell_ms_or_none(struct cell *c, double us)
{
	if (isnan(us))
		cell_text(c, "-");
	else
		cell_ms(c, us);
}

void
bundle_summary(const struct run *runs, const struct doc *const *docs, size_t n,
    struct doc *out)
{
	struct section *sec;
	struct tab *t;
	sbuf s = SBUF_INIT;
	size_t i, k, have[3] = { 0, 0, 0 };

	memset(out, 0, sizeof *out);
	out->title = printf_dup("Summary of the %zu runs", n);
	sec = add_section(out, "runs", "Runs");
	sec->intro = xstrdup("One row per run, in the bundle's order: its GPU time per stage "
	    "(the sum of its kernel durations, as its kernel table gives it), its step median "
	    "(decode's when it has steps) on the host's clock and the GPU busy time of the same "
	    "steps (where it is longer, marked host ahead, the host queued steps ahead of the "
	    "GPU and the busy time is the GPU's step time) and the traces' health.");
	t = add_tab(sec, "runs", NULL, run_cols, NRCOLS);
	t->empty = xstrdup("No runs.");
	for (i = 0; i < n; i++) {
		const struct run *run = &runs[i];
		const struct doc *d = docs[i];
		struct cell *c = add_row(t);
		const char *st;
		char *gpu = run_gpu(run);
		const struct item *g;

		cell_text(&c[0], d->title);
		if (d->model)
			cell_text(&c[1], d->model);
		else if (d->family && *d->family) {
			/* the header's words: the family its frames show */
			char *f = printf_dup("%s (from its frames)", d->family);
			cell_text(&c[1], f);
			free(f);
		} else
			cell_none(&c[1]);
		cell_text(&c[2], !d->framework || strcmp(d->framework, "none") == 0 ? "none" :
		    framework_display(d->framework));
		if (gpu)
			cell_text(&c[3], gpu);
		else
			cell_none(&c[3]);
		free(gpu);
		for (k = 0; k < 3; k++) {
			double v = stage_time(run, stage_cols[k]);
			cell_ms_or_none(&c[4 + k], v);
			have[k] += !isnan(v);
		}
		g = step_median(run, &st);
		cell_ms_or_none(&c[7], g ? item_num(g, "step_p50_us", NAN) : NAN);
		if (g && item_bool(g, "steps_host_ahead")) {
			/* for people: the period is the host's; the number stays for machines */
			char *x = printf_dup("%s (host ahead)", c[7].text);
			free(c[7].text);
			c[7].text = x;
		}
		cell_ms_or_none(&c[8], g ? item_num(g, "step_busy_p50_us", NAN) : NAN);
		if (st)
			cell_text(&c[9], st);
		else
			cell_none(&c[9]);
		if (d->verdict)
			cell_text(&c[10], d->verdict);
		else
			cell_none(&c[10]);
	}
	/* the chart: each run's stages stacked */
	sb_adds(&s, "{\"kind\":\"hbar\",\"cls\":\"ubar\",\"stacked\":true,\"title\":\"GPU time "
	    "of each run by stage\",\"axis\":\"GPU time (ms): the kernel durations summed per "
	    "stage\",\"names\":[\"extend\",\"decode\",\"all\"],\"legend\":[");
	for (k = 0; k < 3; k++) {
		if (!have[k])
			continue;
		if (s.s[s.len - 1] != '[')
			sb_addc(&s, ',');
		sb_adds(&s, "{\"name\":");
		spec_str(&s, stage_cols[k]);
		sb_adds(&s, ",\"color\":");
		spec_str(&s, stage_cols[k]);
		sb_addc(&s, '}');
	}
	sb_adds(&s, "],\"rows\":[");
	for (i = 0; i < t->nrows; i++) {
		const struct cell *c = &t->cells[i * t->ncols];
		sb_adds(&s, i ? ",{\"label\":" : "{\"label\":");
		spec_str(&s, c[0].text);
		sb_adds(&s, ",\"v\":[");
		for (k = 0; k < 3; k++) {
			if (k)
				sb_addc(&s, ',');
			spec_num(&s, c[4 + k].has_num ? c[4 + k].num : NAN);
		}
		sb_adds(&s, "],\"c\":[\"extend\",\"decode\",\"all\"]}");
	}
	sb_adds(&s, "]}");
	add_chart(out, "runs", NULL, sb_detach(&s));
}
