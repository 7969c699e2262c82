/*
 * The HTML page's charts (issue 31): each is a JSON spec (render.h, struct
 * chart) that the page's script draws as SVG with its axes, units and
 * legend.  The sections' files add the charts only they can make (the
 * stage's categories in doc.c, the diff's in diff.c); this file makes the
 * ones that follow from a table: the heaviest kernels before each kernel
 * table, the steps before each step table, the ranks before each rank
 * table.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "json.h"
#include "kname.h"
#include "num.h"
#include "render.h"
#include "rules.h"
#include "xalloc.h"

enum { TOP_KERNELS = 10 };	/* bars of the heaviest-kernels chart */
/* Characters of a bar label: what fits left of the bars at 11 px. */
#define CHART_LABEL 52

void
add_chart(struct doc *d, const char *tab, const char *stage, char *spec)
{
	xgrow(&d->charts, &d->capcharts, d->ncharts + 1, sizeof *d->charts);
	d->charts[d->ncharts].tab = tab;
	d->charts[d->ncharts].stage = stage ? xstrdup(stage) : NULL;
	d->charts[d->ncharts].spec = spec;
	d->ncharts++;
}

int
tab_col(const struct tab *t, const char *key)
{
	size_t c;

	for (c = 0; c < t->ncols; c++)
		if (strcmp(t->cols[c].key, key) == 0)
			return (int)c;
	return -1;
}

/*
 * A string of a spec: its control characters shown as the tables show
 * them (esc_ctrl, issue 27), then JSON-quoted; the page escapes < > & when
 * it embeds the specs.
 */
void
spec_str(sbuf *out, const char *s)
{
	sbuf t = SBUF_INIT;

	esc_ctrl(s, strlen(s), ESC_KEEP_TAB | ESC_KEEP_NL, &t);
	json_quote(out, sb_str(&t), t.len);
	sb_free(&t);
}

void
spec_num(sbuf *out, double v)
{
	char buf[40];

	sb_adds(out, isfinite(v) ? num_json(v, buf) : "null");
}

/* The number of cell (r, key) of t, or NAN when the table or cell has none. */
static double
cell_val(const struct tab *t, size_t r, const char *key)
{
	int c = tab_col(t, key);
	const struct cell *x;

	if (c < 0)
		return NAN;
	x = &t->cells[r * t->ncols + (size_t)c];
	return x->has_num ? x->num : NAN;
}

static const char *
cell_txt(const struct tab *t, size_t r, const char *key, int whole)
{
	int c = tab_col(t, key);
	const struct cell *x;

	if (c < 0)
		return "";
	x = &t->cells[r * t->ncols + (size_t)c];
	return whole && x->full ? x->full : x->text;
}

/* The heaviest kernels of a kernel table: a bar each, coloured by category. */
static void
top_chart(struct doc *d, const struct tab *t)
{
	sbuf s = SBUF_INIT;
	const char **cats = NULL, *full[TOP_KERNELS];
	char *label[TOP_KERNELS];
	size_t ncat = 0, cap = 0, r, k, n = t->nrows < TOP_KERNELS ? t->nrows : TOP_KERNELS;

	if (n == 0)
		return;
	/* the bars' labels: short names of their own width, unique among the bars */
	for (r = 0; r < n; r++)
		full[r] = cell_txt(t, r, "kernel", 1);
	kname_short_all(full, n, CHART_LABEL, label);
	sb_adds(&s, "{\"kind\":\"hbar\",\"cls\":\"bar\",\"title\":");
	spec_str(&s, n < t->nrows ? "The heaviest kernels (the first ten rows of the table)" :
	    "The kernels of the table");
	sb_adds(&s, ",\"axis\":\"GPU time (ms): the kernel's durations summed\","
	    "\"names\":[\"GPU time\"],\"rows\":[");
	for (r = 0; r < n; r++) {
		const char *cat = cell_txt(t, r, "category", 0);
		sb_adds(&s, r ? ",{\"label\":" : "{\"label\":");
		spec_str(&s, label[r]);
		free(label[r]);
		sb_adds(&s, ",\"full\":");
		spec_str(&s, cell_txt(t, r, "kernel", 1));
		sb_adds(&s, ",\"v\":[");
		spec_num(&s, cell_val(t, r, "total_us"));
		sb_adds(&s, "],\"c\":[");
		spec_str(&s, cat);
		sb_adds(&s, "]}");
		for (k = 0; k < ncat && strcmp(cats[k], cat) != 0; k++)
			;
		if (k == ncat) {
			xgrow(&cats, &cap, ncat + 1, sizeof *cats);
			cats[ncat++] = cat;
		}
	}
	sb_adds(&s, "],\"legend\":[");
	for (k = 0; k < ncat; k++) {
		sb_adds(&s, k ? ",{\"name\":" : "{\"name\":");
		spec_str(&s, cats[k]);
		sb_adds(&s, ",\"color\":");
		spec_str(&s, cats[k]);
		sb_addc(&s, '}');
	}
	sb_adds(&s, "]}");
	free(cats);
	add_chart(d, "kernel", t->stage, sb_detach(&s));
}

/*
 * The steps of a step table along an x axis labelled with the table's own
 * step index: each step's period (issue 25; without one, its marker's CPU
 * span) and, when step-stats measured it, the GPU's busy time within it.
 */
static void
step_chart(struct doc *d, const struct tab *t)
{
	sbuf s = SBUF_INIT;
	size_t r;
	int gpu = 0, period = 0;
	const char *what;

	if (t->nrows == 0)
		return;
	for (r = 0; r < t->nrows; r++)
		if (!isnan(cell_val(t, r, "gpu_busy_us")))
			gpu = 1;
	for (r = 0; r < t->nrows; r++)
		if (!isnan(cell_val(t, r, "period_us")))
			period = 1;
	what = period ? "step period" : "step time (CPU)";
	sb_adds(&s, "{\"kind\":\"vbar\",\"cls\":[\"step\",\"stepgpu\"],\"title\":");
	spec_str(&s, period ? (gpu ? "Each step's period (from its start to the next step's) and "
	    "the GPU's busy time in it" : "Each step's period (from its start to the next step's)") :
	    gpu ? "Each step's time on the CPU (its marker's span) and the GPU's busy time within "
	    "it" : "Each step's time on the CPU (its marker's span)");
	sb_adds(&s, ",\"axis\":\"time (ms)\",\"xaxis\":\"step (its index in the table)\","
	    "\"names\":[");
	spec_str(&s, what);
	sb_adds(&s, gpu ? ",\"GPU busy\"]" : "]");
	sb_adds(&s, ",\"legend\":[{\"name\":");
	spec_str(&s, what);
	sb_adds(&s, ",\"color\":\"cpu\"}");
	sb_adds(&s, gpu ? ",{\"name\":\"GPU busy in the step\",\"color\":\"gpu\"}]" : "]");
	sb_adds(&s, ",\"rows\":[");
	for (r = 0; r < t->nrows; r++) {
		double idx = cell_val(t, r, "index");
		char lab[32];
		snprintf(lab, sizeof lab, "%.0f", isnan(idx) ? (double)r : idx);
		sb_adds(&s, r ? ",{\"label\":" : "{\"label\":");
		spec_str(&s, lab);
		sb_adds(&s, ",\"full\":");
		spec_str(&s, cell_txt(t, r, "name", 0));
		sb_adds(&s, ",\"v\":[");
		spec_num(&s, cell_val(t, r, period ? "period_us" : "cpu_us"));
		if (gpu) {
			sb_addc(&s, ',');
			spec_num(&s, cell_val(t, r, "gpu_busy_us"));
		}
		sb_adds(&s, gpu ? "],\"c\":[\"cpu\",\"gpu\"]}" : "],\"c\":[\"cpu\"]}");
	}
	sb_adds(&s, "]}");
	add_chart(d, "step", t->stage, sb_detach(&s));
}

/* Per rank of a rank table: its GPU busy, communication and collective wait. */
static void
rank_chart(struct doc *d, const struct tab *t)
{
	sbuf s = SBUF_INIT;
	size_t r;

	if (t->nrows == 0)
		return;
	sb_adds(&s, "{\"kind\":\"hbar\",\"cls\":\"rbar\",\"title\":\"Per rank: GPU busy, "
	    "communication and waiting in collectives\",\"axis\":\"time in the stage (ms)\","
	    "\"names\":[\"GPU busy\",\"communication\",\"waiting in collectives\"],"
	    "\"legend\":[{\"name\":\"GPU busy\",\"color\":\"busy\"},{\"name\":\"communication\","
	    "\"color\":\"comm\"},{\"name\":\"waiting in collectives\",\"color\":\"wait\"}],"
	    "\"rows\":[");
	for (r = 0; r < t->nrows; r++) {
		sbuf lab = SBUF_INIT;
		sb_printf(&lab, "rank %.0f%s", cell_val(t, r, "rank"),
		    strcmp(cell_txt(t, r, "straggler", 0), "yes") == 0 ? " (straggler)" : "");
		sb_adds(&s, r ? ",{\"label\":" : "{\"label\":");
		spec_str(&s, sb_str(&lab));
		sb_adds(&s, ",\"v\":[");
		spec_num(&s, cell_val(t, r, "busy_us"));
		sb_addc(&s, ',');
		spec_num(&s, cell_val(t, r, "comm_us"));
		sb_addc(&s, ',');
		spec_num(&s, cell_val(t, r, "wait_us"));
		sb_adds(&s, "],\"c\":[\"busy\",\"comm\",\"wait\"]}");
		sb_free(&lab);
	}
	sb_adds(&s, "]}");
	add_chart(d, "rank", t->stage, sb_detach(&s));
}

void
doc_charts(const struct run *run, struct doc *d)
{
	size_t i, j;

	(void)run;
	for (i = 0; i < d->nsecs; i++)
		for (j = 0; j < d->secs[i].ntabs; j++) {
			const struct tab *t = &d->secs[i].tabs[j];
			if (!t->stage)
				continue;
			if (strcmp(t->id, "kernel") == 0)
				top_chart(d, t);
			else if (strcmp(t->id, "step") == 0)
				step_chart(d, t);
			else if (strcmp(t->id, "rank") == 0)
				rank_chart(d, t);
		}
}
