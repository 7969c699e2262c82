/*
 * kernel-roofline's records in the report (issue 28): the efficiency
 * columns of the kernel table, the Roofline section (per stage: the
 * headline, the modeled kernels against the roofline, the time no model
 * covers) and the points of the HTML roofline chart.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "num.h"
#include "render.h"
#include "rules.h"
#include "xalloc.h"

/* The "no shapes at all" reason of kernel-roofline: such a trace gets no section. */
static const char no_shapes_prefix[] = "the trace records no input shapes";

int
roofline_present(const struct run *run)
{
	size_t i;
	int k;
	sbuf b = SBUF_INIT;

	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		int u;
		if (it->type == RT_kernel_eff) {
			sb_free(&b);
			return 1;
		}
		if (it->type != RT_roofline || (u = item_get(it, "unmodeled")) < 0 ||
		    it->doc.tok[u].type != JSMN_ARRAY)
			continue;
		for (k = u + 1; k < json_skip(&it->doc, u); k = json_skip(&it->doc, k)) {
			obj_str(&it->doc, k, "reason", &b, "");
			if (strncmp(sb_str(&b), no_shapes_prefix, sizeof no_shapes_prefix - 1)) {
				sb_free(&b);
				return 1;
			}
		}
	}
	sb_free(&b);
	return 0;
}

/* A kernel's rows of a stage summed: time, FLOPs, bytes, roof time of the roofed part. */
struct effsum {
	double time, flops, bytes, roofed_time, roof;
	int n, compute, memory;
};

static void
eff_sum(const struct run *run, const char *stage, const char *kernel, struct effsum *s)
{
	size_t i;
	sbuf b = SBUF_INIT, k = SBUF_INIT, bd = SBUF_INIT;

	memset(s, 0, sizeof *s);
	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		double roof;
		if (it->type != RT_kernel_eff || !item_in_stage(it, stage, &b) ||
		    strcmp(item_str(it, "kernel", &k, ""), kernel))
			continue;
		s->n++;
		s->time += item_num(it, "time_us", 0);
		s->flops += item_num(it, "flops", 0);
		s->bytes += item_num(it, "bytes", 0);
		roof = item_num(it, "roof_us", -1);
		if (roof >= 0) {
			s->roofed_time += item_num(it, "time_us", 0);
			s->roof += roof;
		}
		item_str(it, "bound", &bd, "");
		s->compute += !strcmp(sb_str(&bd), "compute");
		s->memory += !strcmp(sb_str(&bd), "memory");
	}
	sb_free(&b);
	sb_free(&k);
	sb_free(&bd);
}

static void
cell_rate(struct cell *c, double v, const char *unit)
{
	char buf[64];

	if (v >= 100)
		snprintf(buf, sizeof buf, "%.0f %s", v, unit);
	else if (v >= 1)
		snprintf(buf, sizeof buf, "%.1f %s", v, unit);
	else
		snprintf(buf, sizeof buf, "%.3g %s", v, unit);
	cell_num(c, v, buf);
}

void
roofline_cells(const struct run *run, const char *stage, const char *kernel, struct cell *c)
{
	struct effsum s;

	eff_sum(run, stage, kernel, &s);
	if (!s.n || s.time <= 0) {
		cell_text(&c[0], "-");
		cell_text(&c[1], "-");
		cell_text(&c[2], "-");
		cell_none(&c[3]);
		return;
	}
	if (s.flops > 0)
		cell_rate(&c[0], s.flops / s.time / 1e6, "TFLOP/s");
	else
		cell_text(&c[0], "-");
	cell_rate(&c[1], s.bytes / s.time / 1e3, "GB/s");
	if (s.roofed_time > 0)
		cell_pct(&c[2], 100.0 * s.roof / s.roofed_time);
	else
		cell_text(&c[2], "-");
	if (s.compute || s.memory)
		cell_text(&c[3], s.compute && s.memory ? "mixed" : s.compute ? "compute" : "memory");
	else
		cell_none(&c[3]);	/* no GPU peaks: no bound */
}

static const struct col roof_cols[] = {
	{ "kernel", "Kernel", 0 },
	{ "op", "CPU op", 0 },
	{ "shape", "Shape", 0 },
	{ "time_us", "GPU time", 1 },
	{ "launches", "Launches", 1 },
	{ "tflops", "TFLOP/s", 1 },
	{ "gbps", "GB/s", 1 },
	{ "intensity", "FLOP/byte", 1 },
	{ "bound", "Bound", 0 },
	{ "roof_us", "At the roof", 1 },
	{ "pct_of_roof", "% of roof", 1 },
	{ "dtype", "Type", 0 },
	{ "estimate", "Estimate", 0 },
	{ "source", "Shapes from", 0 },
	{ "flops", "FLOPs", 1 },
	{ "bytes", "Bytes", 1 },
};

static const struct col unm_cols[] = {
	{ "op", "CPU op", 0 },
	{ "reason", "Why not modeled", 0 },
	{ "time_us", "GPU time", 1 },
	{ "share_pct", "Share", 1 },
	{ "launches", "Launches", 1 },
};

static void
cell_opt_num(struct cell *c, const struct item *it, const char *m, const char *fmt)
{
	double v = item_num(it, m, NAN);
	char buf[64];

	if (isnan(v)) {
		cell_text(c, "-");
		return;
	}
	snprintf(buf, sizeof buf, fmt, v);
	cell_num(c, v, buf);
}

/* A share for a sentence: one decimal, but never 100 for less than all of it. */
static void
share(sbuf *b, double p)
{
	/* one decimal, modeled and not alike: 1.7% and 98.3%, not 2% and 98.3% */
	if (p == 0 || p == 100)
		sb_printf(b, "%.0f%%", p);
	else if (p > 0 && p < 0.05)
		sb_adds(b, "under 0.1%");
	else if (p < 100 && p >= 99.95)
		sb_adds(b, "99.9%");	/* short of all of it: never "100.0%" */
	else
		sb_printf(b, "%.1f%%", p);
}

/* "decode: modeled 86% of the GPU time (...); at the roofline ... 61% of it." */
static char *
headline(const struct item *rl, const char *stage)
{
	sbuf b = SBUF_INIT, g = SBUF_INIT;
	double st = item_num(rl, "stage_us", 0), mod = item_num(rl, "modeled_us", 0);
	double act = item_num(rl, "actual_us", -1), roof = item_num(rl, "roof_us", -1);
	long long steps = item_int(rl, "steps", 0);

	sb_printf(&b, "%s: modeled ", stage_label(stage));
	share(&b, item_num(rl, "modeled_pct", 0));
	sb_adds(&b, " of the GPU time (");
	fmt_ms(&b, mod);
	sb_adds(&b, " of ");
	fmt_ms(&b, st);
	sb_adds(&b, ")");
	if (item_get(rl, "gpu") < 0) {
		sb_printf(&b, "; no roofline: %s.", item_str(rl, "gpu_reason", &g, "no GPU"));
	} else if (act > 0) {
		sb_printf(&b, "; at the roofline of the %s the modeled kernels would take ",
		    item_str(rl, "gpu", &g, ""));
		share(&b, pct(roof, act));
		sb_adds(&b, " of their ");
		fmt_ms(&b, act);
		sb_adds(&b, " (");
		fmt_ms(&b, act - roof);
		sb_adds(&b, " less");
		if (steps > 1) {
			sb_adds(&b, ", ");
			fmt_ms(&b, (act - roof) / (double)steps);
			sb_adds(&b, " a step");
		}
		sb_adds(&b, ")");
		if (item_bool(rl, "estimated"))
			sb_adds(&b, "; an upper bound, since some shapes record only maxima");
		sb_adds(&b, ".");
	} else if (item_get(rl, "mem_gbps") < 0)
		/* every roof is the lower of the compute and the memory time */
		sb_printf(&b, "; the %s's table entry has no memory bandwidth, which every "
		    "kernel's roofline needs.", item_str(rl, "gpu", &g, ""));
	else
		sb_printf(&b, "; the %s's table entry has no peak for these kernels' types.",
		    item_str(rl, "gpu", &g, ""));
	sb_free(&g);
	return sb_detach(&b);
}

void
roofline_section(const struct run *run, struct doc *d)
{
	struct section *sec;
	char **stages;
	size_t ns, si, i;
	sbuf b = SBUF_INIT, v = SBUF_INIT;

	if (!roofline_present(run))
		return;
	sec = add_section(d, "roofline", "Roofline");
	sec->intro = xstrdup("Each kernel's work from the shapes its CPU op recorded (FLOPs and "
	    "the bytes its operands and results need at least), against the GPU's dense peak "
	    "for the type and its memory bandwidth (kernel-roofline(1) gives every model and "
	    "gpu-specs(5) every figure's source). % of roof: the time at the roofline over the "
	    "time taken; 100% is the roofline, above it the kernel beat the model (data from "
	    "cache, or an upper-bound estimate). No GPU in the table, or an op without a model: "
	    "no percentage.");
	ns = stages_of(run, RT_roofline, &stages);
	for (si = 0; si < ns; si++) {
		const struct item *rl = NULL;
		struct tab *t = add_tab(sec, "roofline", stages[si], roof_cols,
		    sizeof roof_cols / sizeof roof_cols[0]);
		struct tab *u;
		double st = 0, hidden_us = 0;
		size_t hidden = 0;
		int k, n;

		size_t nrl = 0;

		for (i = 0; i < run->n; i++)
			if (run->it[i].type == RT_roofline && item_in_stage(&run->it[i], stages[si], &b)) {
				rl = &run->it[i];
				st += item_num(rl, "stage_us", 0);	/* the bar: of every trace's rows */
				nrl++;
			}
		if (rl) {
			t->headline = headline(rl, stages[si]);
			if (nrl > 1) {
				/* a profile's traces of one stage: the figures are per trace */
				char *h = printf_dup("%s (The figures are the last of the %zu traces with "
				    "this stage; each one's roofline record is in -f jsonl.)", t->headline, nrl);
				free(t->headline);
				t->headline = h;
			}
			if (item_get(rl, "gpu") >= 0) {
				sb_reset(&v);
				sb_printf(&v, "GPU: %s (%s); ", item_str(rl, "gpu", &b, ""),
				    !strcmp(item_str(rl, "gpu_source", &b, ""), "option") ?
				    "named by --gpu" : "from the trace's device record");
				if (item_get(rl, "mem_gbps") >= 0)
					sb_printf(&v, "memory %.0f GB/s.", item_num(rl, "mem_gbps", 0));
				else
					sb_adds(&v, "memory bandwidth not in the GPU table (gpu-specs(5)).");
				t->total = sb_detach(&v);
			}
		}
		for (i = 0; i < run->n; i++) {
			const struct item *it = &run->it[i];
			struct cell *c;
			if (it->type != RT_kernel_eff || !item_in_stage(it, stages[si], &b))
				continue;
			/* the kernel table's bar: rows under 1.0% of the stage are counted, not shown */
			if (st > 0 && pct(item_num(it, "time_us", 0), st) < 1.0) {
				hidden++;
				hidden_us += item_num(it, "time_us", 0);
				continue;
			}
			c = add_row(t);
			{
				char *s = short_name(item_str(it, "kernel", &b, ""));
				c[0].text = s;
				if (strcmp(s, sb_str(&b)))
					c[0].full = xstrdup(sb_str(&b));
			}
			cell_str_member(&c[1], it, "op");
			cell_str_member(&c[2], it, "shape");
			cell_ms(&c[3], item_num(it, "time_us", 0));
			cell_int(&c[4], item_int(it, "launches", 0));
			if (item_num(it, "flops", 0) > 0)
				cell_opt_num(&c[5], it, "tflops", "%.1f");
			else
				cell_text(&c[5], "-");
			cell_opt_num(&c[6], it, "gbps", "%.0f");
			if (item_num(it, "flops", 0) > 0)
				cell_opt_num(&c[7], it, "intensity", "%.1f");
			else
				cell_text(&c[7], "-");
			cell_str_member(&c[8], it, "bound");
			if (item_get(it, "roof_us") >= 0)
				cell_ms(&c[9], item_num(it, "roof_us", 0));
			else
				cell_text(&c[9], "-");
			if (item_get(it, "pct_of_roof") >= 0)
				cell_pct(&c[10], item_num(it, "pct_of_roof", 0));
			else
				cell_text(&c[10], "-");
			cell_str_member(&c[11], it, "dtype");
			cell_text(&c[12], item_str(it, "estimate", &b, "exact"));
			cell_text(&c[13], item_str(it, "source", &b, "trace"));
			cell_opt_num(&c[14], it, "flops", "%.4g");
			cell_opt_num(&c[15], it, "bytes", "%.4g");
		}
		if (hidden)
			t->more = printf_dup("%zu more modeled row%s below 1.0%% of the stage's GPU "
			    "time: %.1f%% of it (every row is in the records, -f jsonl).", hidden,
			    hidden == 1 ? "" : "s", pct(hidden_us, st));
		t->empty = xstrdup(hidden ? "No modeled row reaches 1.0% of the stage's GPU time." :
		    "No kernel of this stage has a model.");
		u = add_tab(sec, "unmodeled", stages[si], unm_cols,
		    sizeof unm_cols / sizeof unm_cols[0]);
		u->empty = xstrdup("Every kernel of this stage has a model.");
		if (rl && (k = item_get(rl, "unmodeled")) >= 0 && rl->doc.tok[k].type == JSMN_ARRAY) {
			int e = json_skip(&rl->doc, k);
			double left = st - item_num(rl, "modeled_us", 0), shown = 0;
			for (n = k + 1; n < e; n = json_skip(&rl->doc, n)) {
				struct cell *c = add_row(u);
				double us = obj_num(&rl->doc, n, "us", 0);
				cell_text(&c[0], obj_str(&rl->doc, n, "op", &b, "-"));
				cell_text(&c[1], obj_str(&rl->doc, n, "reason", &b, ""));
				cell_ms(&c[2], us);
				cell_pct(&c[3], pct(us, st));
				cell_int(&c[4], obj_int(&rl->doc, n, "launches", 0));
				shown += us;
			}
			if (left - shown > 0.5e-3 * st && left > shown)
				u->more = printf_dup("More unmodeled ops, %.1f%% of the stage's GPU time, "
				    "are not listed.", pct(left - shown, st));
			sb_reset(&b);
			sb_adds(&b, "Not modeled: ");
			share(&b, pct(left > 0 ? left : 0, st));
			sb_adds(&b, " of the stage's GPU time.");
			u->headline = xstrdup(b.s);
		}
	}
	free_strings(stages, ns);
	sb_free(&b);
	sb_free(&v);
}

void
roofline_chart(const struct run *run, const char *stage, struct doc *d)
{
	size_t i, npts = 0;
	sbuf b = SBUF_INIT, p = SBUF_INIT;
	double bw = 0;
	char *peaks = NULL;
	int k;

	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		if (it->type != RT_roofline || !item_in_stage(it, stage, &b) || item_get(it, "gpu") < 0)
			continue;
		bw = item_num(it, "mem_gbps", 0);
		k = item_get(it, "peaks");
		if (k >= 0) {
			free(peaks);
			peaks = xstrndup(it->doc.js + it->doc.tok[k].start,
			    (size_t)(it->doc.tok[k].end - it->doc.tok[k].start));
		}
	}
	if (bw <= 0) {
		free(peaks);
		sb_free(&b);
		return;
	}
	sb_adds(&p, "{\"kind\":\"roof\",\"cls\":\"point\",\"title\":");
	spec_str(&p, "The modeled kernels against the roofline (log-log)");
	sb_adds(&p, ",\"axis\":");
	spec_str(&p, "achieved TFLOP/s");
	sb_adds(&p, ",\"xaxis\":");
	spec_str(&p, "arithmetic intensity (FLOP per byte)");
	sb_adds(&p, ",\"bw\":");
	spec_num(&p, bw);
	/* the peaks object as the record has it: type names and numbers only */
	sb_printf(&p, ",\"peaks\":%s,\"pts\":[", peaks ? peaks : "{}");
	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		double x = item_num(it, "intensity", 0), y = item_num(it, "tflops", 0);
		char *s;
		if (it->type != RT_kernel_eff || !item_in_stage(it, stage, &b) || !(x > 0) || !(y > 0))
			continue;
		if (npts++)
			sb_addc(&p, ',');
		s = short_name(item_str(it, "kernel", &b, ""));
		sb_adds(&p, "{\"name\":");
		spec_str(&p, s);
		free(s);
		sb_adds(&p, ",\"shape\":");
		spec_str(&p, item_str(it, "shape", &b, ""));
		sb_adds(&p, ",\"x\":");
		spec_num(&p, x);
		sb_adds(&p, ",\"y\":");
		spec_num(&p, y);
		sb_adds(&p, ",\"us\":");
		spec_num(&p, item_num(it, "time_us", 0));
		sb_adds(&p, ",\"pct\":");
		spec_num(&p, item_num(it, "pct_of_roof", -1));
		sb_adds(&p, ",\"dtype\":");
		spec_str(&p, item_str(it, "dtype", &b, ""));
		sb_addc(&p, '}');
	}
	sb_adds(&p, "]}");
	if (npts)
		add_chart(d, "roofline", stage, sb_detach(&p));
	free(peaks);
	sb_free(&p);
	sb_free(&b);
}
