/*
 * The diff view (issue 17): trace-diff's records as a document, the same
 * tables in every format.  The verdicts first, then per stage the GPU time
 * figures, the kernels (largest absolute change first; a row shown when it
 * reaches 1.0 % of its stage on either side, as trace-diff marks it), the
 * fuse-row transitions and the overlap rows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "rules.h"
#include "xalloc.h"

static const char *metric_label(const char *m);

static const struct col verdict_cols[] = {
	{ "scope", "Scope", 0 },
	{ "verdict", "Verdict", 0 },
	{ "metric", "Metric", 0 },
	{ "base", "Baseline", 1 },
	{ "cand", "Candidate", 1 },
	{ "delta_pct", "Change", 1 },
	{ "threshold_pct", "Threshold", 1 },
	{ "kernels", "Kernels that account for it", 0 },
	{ "reason", "Reason", 0 },
};

static const struct col metric_cols[] = {
	{ "metric", "Figure", 0 },
	{ "base", "Baseline", 1 },
	{ "cand", "Candidate", 1 },
	{ "delta", "Change", 1 },
	{ "delta_pct", "Change %", 1 },
};

static const struct col row_cols[] = {
	{ "kernel", "Kernel", 0 },
	{ "status", "Status", 0 },
	{ "base_us", "Baseline", 1 },
	{ "cand_us", "Candidate", 1 },
	{ "delta_us", "Change", 1 },
	{ "delta_pct", "Change %", 1 },
	{ "base_launches", "Launches (baseline)", 1 },
	{ "cand_launches", "Launches (candidate)", 1 },
	{ "location", "Python location", 0 },
};

static const struct col fuse_cols[] = {
	{ "pattern", "Pattern", 0 },
	{ "transition", "Transition", 0 },
	{ "base_status", "Baseline", 0 },
	{ "cand_status", "Candidate", 0 },
	{ "base_us", "Baseline time", 1 },
	{ "cand_us", "Candidate time", 1 },
};

static const struct col overlap_cols[] = {
	{ "kernel", "Kernel", 0 },
	{ "base_us", "Baseline", 1 },
	{ "cand_us", "Candidate", 1 },
	{ "delta_us", "Change", 1 },
	{ "base_exclusive_pct", "Exclusive (baseline)", 1 },
	{ "cand_exclusive_pct", "Exclusive (candidate)", 1 },
	{ "base_verdict", "Verdict (baseline)", 0 },
	{ "cand_verdict", "Verdict (candidate)", 0 },
};

#define NCOLS(c) (sizeof c / sizeof c[0])

/* ---- cells ---- */

/*
 * A signed change: "+1.23 ms", "-0.50 ms"; no change "0.00 ms", and one
 * that is not zero but rounds to it "+<0.01 ms" or "-<0.01 ms" (fmt_ms).
 */
static void
cell_dms(struct cell *c, double us)
{
	sbuf b = SBUF_INIT;

	if (us > 0)
		sb_addc(&b, '+');
	fmt_ms(&b, us);
	cell_num(c, us, sb_str(&b));
	sb_free(&b);
}

static void
cell_dpct(struct cell *c, double p)
{
	char buf[48];

	if (fabs(p) < 0.05)
		snprintf(buf, sizeof buf, "0.0%%");
	else
		snprintf(buf, sizeof buf, "%+.1f%%", p);
	cell_num(c, p, buf);
}

/* A member as a cell by its unit (ms for *_us, percent for *_pct, else a count); "-" when absent. */
static void
diff_cell_member(struct cell *c, const struct item *it, const char *m, int sign)
{
	size_t n = strlen(m);
	double v;

	if (item_get(it, m) < 0) {
		cell_text(c, "-");
		return;
	}
	v = item_num(it, m, 0);
	if (n > 3 && strcmp(m + n - 3, "_us") == 0)
		sign ? cell_dms(c, v) : cell_ms(c, v);
	else if (n > 4 && strcmp(m + n - 4, "_pct") == 0)
		sign ? cell_dpct(c, v) : cell_pct(c, v);
	else
		cell_int(c, (long long)v);
}

/* ---- finding records ---- */

static int
in_stage(const struct item *it, const char *stage, sbuf *b)
{
	return strcmp(item_str(it, "stage", b, ""), stage) == 0;
}

static const struct item *
find_side(const struct run *run, const char *side)
{
	return find_item(run, RT_diff_input, "side", side, "");
}

static const struct item *
find_verdict(const struct run *run, const char *scope)
{
	return find_item(run, RT_verdict, "scope", scope, "");
}

/* The stages, in trace-diff's order: its stage verdicts', then any other row's. */
static size_t
diff_stages(const struct run *run, char ***out)
{
	char **v = NULL;
	size_t n = 0, cap = 0, i, j;
	sbuf b = SBUF_INIT;

	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		const char *st;
		if (it->type == RT_verdict)
			st = item_str(it, "scope", &b, "");
		else if (it->type == RT_diff_row || it->type == RT_diff_metric ||
		    it->type == RT_diff_fuse || it->type == RT_diff_overlap)
			st = item_str(it, "stage", &b, "");
		else
			continue;
		if (strcmp(st, "overall") == 0 && it->type == RT_verdict)
			continue;
		for (j = 0; j < n && strcmp(v[j], st) != 0; j++)
			;
		if (j == n) {
			xgrow(&v, &cap, n + 1, sizeof *v);
			v[n++] = xstrdup(st);
		}
	}
	sb_free(&b);
	*out = v;
	return n;
}

/* ---- header ---- */

/* The last component of a path ("runs/base/" gives "base"), appended to out. */
static void
base_name(const char *path, sbuf *out)
{
	size_t n = strlen(path), b;

	while (n > 1 && path[n - 1] == '/')	/* a directory given with its slash */
		n--;
	for (b = n; b > 0 && path[b - 1] != '/'; b--)
		;
	sb_add(out, path + b, n - b);
}

/* "path (SGLang, single trace; decode: 2 steps)" */
static void
side_fact(struct doc *d, const char *key, const struct item *it)
{
	sbuf v = SBUF_INIT, b = SBUF_INIT;
	int i = item_get(it, "steps"), k, n, dual;
	const char *fw;

	dual = strcmp(item_str(it, "mode", &b, "single"), "single") != 0;
	sb_adds(&v, *item_str(it, "path", &b, "") ? sb_str(&b) : "(path unknown)");
	fw = item_str(it, "framework", &b, "none");
	sb_printf(&v, " (%s, %s", strcmp(fw, "none") ? framework_display(fw) :
	    "no serving framework detected", dual ? "mapping/formal traces" : "single trace");
	if (i >= 0 && it->doc.tok[i].type == JSMN_OBJECT && it->doc.tok[i].size > 0) {
		n = it->doc.tok[i].size;
		sb_adds(&v, "; steps:");
		/* a key token holds its value: the value is the next token */
		for (k = 0, i++; k < n; k++, i = json_skip(&it->doc, i)) {
			long long steps = 0;
			json_str(&it->doc, i, &b, NULL);
			json_coerce_int(&it->doc, i + 1, &steps);
			sb_printf(&v, "%s %s %lld", k ? "," : "", stage_label(sb_str(&b)), steps);
		}
	}
	if (item_get(it, "health") >= 0 && strcmp(item_str(it, "health", &b, "ok"), "ok") != 0)
		sb_printf(&v, "; trace health %s", sb_str(&b));
	sb_addc(&v, ')');
	{
		static const char *const members[] = { "path", "mode", "framework", "model",
		    "health", "stages", "steps", NULL };
		add_field_members(d, strcmp(key, "Baseline") == 0 ? "baseline" : "candidate", it,
		    members);
	}
	add_fact(d, key, sb_str(&v));
	sb_free(&v);
	sb_free(&b);
}

/* "regression in stage decode: GPU time per step +30.0% (threshold 10.0%)" */
static void
verdict_phrase(const struct item *v, sbuf *out)
{
	sbuf b = SBUF_INIT, st = SBUF_INIT;
	const char *verdict = item_str(v, "verdict", &b, "");

	sb_reset(out);
	sb_adds(out, verdict);
	if (strcmp(verdict, "incomparable") == 0) {
		if (item_get(v, "reason") >= 0)
			sb_printf(out, ": %s", item_str(v, "reason", &b, ""));
	} else if (item_get(v, "delta_pct") >= 0) {
		const char *stage = item_str(v, "stage", &st, item_str(v, "scope", &b, ""));
		sb_printf(out, " in stage %s: GPU time%s %+.1f%% (threshold %.1f%%)",
		    stage_label(stage), item_bool(v, "per_step") ? " per step" : "",
		    item_num(v, "delta_pct", 0), item_num(v, "threshold_pct", 0));
		if (item_get(v, "reason") >= 0)
			sb_printf(out, "; %s", item_str(v, "reason", &b, ""));
	}
	sb_free(&b);
	sb_free(&st);
}

/*
 * The Model line of two runs that name no model: their model families
 * (from their Python frames), or that neither says which model ran, since
 * two models built of one library's kernels compare like one model's runs.
 */
static void
model_family_fact(struct doc *d, const struct item *bi, const struct item *ci)
{
	sbuf b = SBUF_INIT, c = SBUF_INIT, t = SBUF_INIT;
	const char *bf = bi ? item_str(bi, "model_family", &b, NULL) : NULL;
	const char *cf = ci ? item_str(ci, "model_family", &c, NULL) : NULL;

	if (bf && cf && strcmp(bf, cf) != 0)
		sb_printf(&t, "model family %s vs %s, from the traces' Python frames", bf, cf);
	else if (bf && cf)
		sb_printf(&t, "model family %s in both, from the traces' Python frames", bf);
	else if (bf || cf)
		sb_printf(&t, "model family %s in the %s (from its Python frames); the %s names "
		    "none", bf ? bf : cf, bf ? "baseline" : "candidate", bf ? "candidate" :
		    "baseline");
	else
		sb_adds(&t, "neither run names one (no --model, and no model code among the "
		    "traces' Python frames): the comparison assumes one model, and another "
		    "model built of the same kernels would read as a regression or an "
		    "improvement; name it with --model for both runs");
	add_fact(d, "Model", sb_str(&t));
	sb_free(&b);
	sb_free(&c);
	sb_free(&t);
}

static void
header(const struct run *run, struct doc *d, const struct item *bi, const struct item *ci)
{
	sbuf b = SBUF_INIT, c = SBUF_INIT, t = SBUF_INIT;
	const struct item *all = find_verdict(run, "overall");
	const char *bm, *cm;

	/* what each run analyzed, by its last path component */
	if (bi && *item_str(bi, "path", &b, ""))
		base_name(sb_str(&b), &t);
	else
		sb_adds(&t, "baseline");
	sb_adds(&t, " vs ");
	if (ci && *item_str(ci, "path", &c, ""))
		base_name(sb_str(&c), &t);
	else
		sb_adds(&t, "candidate");
	d->title = sb_detach(&t);
	add_field_str(d, "mode", "diff");
	add_fact(d, "Mode", "trace diff: a baseline run and a candidate run compared stage by "
	    "stage (trace-diff(1))");
	if (bi)
		side_fact(d, "Baseline", bi);
	if (ci)
		side_fact(d, "Candidate", ci);
	bm = bi ? item_str(bi, "model", &b, NULL) : NULL;
	cm = ci ? item_str(ci, "model", &c, NULL) : NULL;
	if (bm && cm && strcmp(bm, cm) != 0) {
		sb_printf(&t, "%s vs %s", bm, cm);
		add_fact(d, "Model", sb_str(&t));
	} else if (bm || cm)
		add_fact(d, "Model", bm ? bm : cm);
	if (cm || bm)
		d->model = xstrdup(cm ? cm : bm);
	else
		model_family_fact(d, bi, ci);
	/* the GPUs: comparable across hardware, and said (issue 25) */
	bm = bi ? item_str(bi, "gpu", &b, NULL) : NULL;
	cm = ci ? item_str(ci, "gpu", &c, NULL) : NULL;
	sb_reset(&t);
	if (bm && cm && strcmp(bm, cm) != 0)
		sb_printf(&t, "hardware differs: %s vs %s", bm, cm);
	else if (bm && cm)
		sb_adds(&t, bm);
	else if (bm || cm)
		/* one side's GPU alone is not both runs' */
		sb_printf(&t, "%s (the %s's; the %s's trace names no GPU)", bm ? bm : cm,
		    bm ? "baseline" : "candidate", bm ? "candidate" : "baseline");
	if (t.len)
		add_fact(d, "GPU", sb_str(&t));
	if (ci)
		d->framework = xstrdup(item_str(ci, "framework", &c, "none"));
	if (cm || bm)
		add_field_str(d, "model", cm ? cm : bm);
	if (all) {
		add_field_str(d, "verdict", item_str(all, "verdict", &b, ""));
		verdict_phrase(all, &t);
		add_fact(d, "Verdict", sb_str(&t));
	}
	sb_free(&b);
	sb_free(&c);
	sb_free(&t);
}

/* What each stage's times mean: per step, or totals and why. */
static void
notes(const struct run *run, struct doc *d, char **stages, size_t ns)
{
	sbuf b = SBUF_INIT, n = SBUF_INIT;
	size_t i;

	for (i = 0; i < ns; i++) {
		const struct item *v = find_verdict(run, stages[i]);
		int hb, hc;
		if (!v || item_get(v, "metric") < 0)
			continue;
		hb = item_get(v, "base_steps") >= 0;
		hc = item_get(v, "cand_steps") >= 0;
		sb_reset(&n);
		if (item_bool(v, "per_step"))
			sb_printf(&n, "%s: the baseline has %lld steps and the candidate %lld, so "
			    "times are per step.", stage_label(stages[i]),
			    item_int(v, "base_steps", 0), item_int(v, "cand_steps", 0));
		else if (hb != hc)
			sb_printf(&n, "%s: only the %s has step markers, so times are totals over "
			    "the stage.", stage_label(stages[i]), hb ? "baseline" : "candidate");
		if (n.len)
			add_note(d, sb_str(&n));
	}
	sb_free(&b);
	sb_free(&n);
}

/* ---- sections ---- */

static void
verdict_section(const struct run *run, struct doc *d)
{
	struct section *sec = add_section(d, "verdict", "Verdict");
	struct tab *t = add_tab(sec, "verdict", NULL, verdict_cols, NCOLS(verdict_cols));
	sbuf b = SBUF_INIT, k = SBUF_INIT;
	size_t i;

	sec->intro = xstrdup("A stage regresses when its GPU time (the sum of its kernel "
	    "durations; per step when the runs have different step counts) grows by more than "
	    "the threshold, and improves when it shrinks by more; overall is the stage that "
	    "moved most. Runs of another model, model family, framework, world size or stages "
	    "are incomparable, and so are runs that name no model and share under a third of "
	    "their GPU time in kernel families; runs on other GPUs are compared. A collective's "
	    "time includes waiting for the other ranks: the Reason says how much when both "
	    "runs were analyzed with --all-ranks.");
	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		struct cell *c;
		int j, n, x;
		if (it->type != RT_verdict)
			continue;
		c = add_row(t);
		cell_text(&c[0], stage_label(item_str(it, "scope", &b, "")));
		cell_text(&c[1], item_str(it, "verdict", &b, ""));
		cell_text(&c[2], item_get(it, "metric") >= 0 ?
		    metric_label(item_str(it, "metric", &b, "-")) : "-");
		if (item_get(it, "base") >= 0) {	/* the metric's values: microseconds */
			cell_ms(&c[3], item_num(it, "base", 0));
			cell_ms(&c[4], item_num(it, "cand", 0));
		} else {
			cell_text(&c[3], "-");
			cell_text(&c[4], "-");
		}
		diff_cell_member(&c[5], it, "delta_pct", 1);
		diff_cell_member(&c[6], it, "threshold_pct", 0);
		/* kernels: one a line, "name +1.23 ms" */
		sb_reset(&k);
		if ((x = item_get(it, "kernels")) >= 0 && it->doc.tok[x].type == JSMN_ARRAY) {
			n = it->doc.tok[x].size;
			for (j = 0, x++; j < n; j++, x = json_skip(&it->doc, x)) {
				int kn = json_get(&it->doc, x, "kernel"), kd = json_get(&it->doc, x, "delta_us");
				double du = 0;
				char *s;
				if (kn < 0)
					continue;
				json_str(&it->doc, kn, &b, NULL);
				s = short_name(sb_str(&b));
				if (kd >= 0)
					json_todouble(&it->doc, kd, &du);
				sb_printf(&k, "%s%s %+.2f ms", k.len ? "\n" : "", s, du / 1000);
				free(s);
			}
		}
		cell_text(&c[7], k.len ? sb_str(&k) : "-");
		cell_text(&c[8], item_str(it, "reason", &b, "-"));
	}
	t->empty = xstrdup("No verdict records.");
	sb_free(&b);
	sb_free(&k);
}

/* A figure as the report names it ("kernel_us": "GPU time (kernel sum)"). */
static const char *
metric_label(const char *m)
{
	static const struct {
		const char *m, *label;
	} L[] = {
		{ "kernel_us", "GPU time (kernel sum)" },
		{ "busy_us", "GPU busy" },
		{ "idle_us", "GPU idle" },
		{ "idle_launch_us", "Idle waiting for the host" },
		{ "idle_sync_us", "Idle waiting on a synchronization" },
		{ "graph_pct", "Busy in CUDA graphs" },
		{ "step_p50_us", "Step period p50" },
		{ "step_busy_p50_us", "GPU busy per step p50" },
		{ "steps", "Steps" },
	};
	size_t i;

	for (i = 0; i < sizeof L / sizeof L[0]; i++)
		if (strcmp(L[i].m, m) == 0)
			return L[i].label;
	return m;
}

/*
 * The step period is of the host's step markers: where trace-diff found a
 * run's steps' GPU work longer than their period (base_host_ahead,
 * cand_host_ahead), the host queued them ahead of the GPU and the
 * period's change is not the GPU's; say so under the table.  NULL: nothing
 * to say.
 */
static char *
step_caveat(const struct run *run, const char *stage)
{
	const struct item *p = NULL, *busy = NULL;
	static const char *const side[2] = { "base", "cand" };
	static const char *const side_name[2] = { "the baseline", "the candidate" };
	sbuf b = SBUF_INIT, out = SBUF_INIT;
	char key[32];
	size_t i;
	int k, n = 0;

	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		const char *m;
		if (it->type != RT_diff_metric || !in_stage(it, stage, &b))
			continue;
		m = item_str(it, "metric", &b, "");
		if (strcmp(m, "step_p50_us") == 0)
			p = it;
		else if (strcmp(m, "step_busy_p50_us") == 0)
			busy = it;
	}
	if (p && busy && item_bool(p, "base_host_ahead") && item_bool(p, "cand_host_ahead")) {
		sb_adds(&out, "In both runs the steps' GPU work (busy p50 ");
		fmt_ms(&out, item_num(busy, "base", 0));
		sb_adds(&out, " and ");
		fmt_ms(&out, item_num(busy, "cand", 0));
		sb_adds(&out, ") is longer than their period (p50 ");
		fmt_ms(&out, item_num(p, "base", 0));
		sb_adds(&out, " and ");
		fmt_ms(&out, item_num(p, "cand", 0));
		sb_adds(&out, ")");
		n = 2;
	}
	for (k = 0; p && busy && !n && k < 2; k++) {
		snprintf(key, sizeof key, "%s_host_ahead", side[k]);
		if (!item_bool(p, key))
			continue;
		sb_printf(&out, "In %s the steps' GPU work (busy p50 ", side_name[k]);
		fmt_ms(&out, item_num(busy, side[k], 0));
		sb_adds(&out, ") is longer than their period (p50 ");
		fmt_ms(&out, item_num(p, side[k], 0));
		sb_adds(&out, ")");
		n = 1;
	}
	if (n)
		sb_printf(&out, ": the host queued steps ahead of the GPU, so the step period "
		    "there is the host's rate of submitting them, not the GPU's step time; "
		    "compare GPU busy per step p50.");
	sb_free(&b);
	return n ? sb_detach(&out) : (sb_free(&out), NULL);
}

static void
gpu_tables(const struct run *run, struct section *sec, const char *stage)
{
	struct tab *t = NULL;
	sbuf b = SBUF_INIT, l = SBUF_INIT;
	char buf[48];
	size_t i;

	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		struct cell *c;
		const char *m;
		if (it->type != RT_diff_metric || !in_stage(it, stage, &b))
			continue;
		if (!t) {
			t = add_tab(sec, "diff_gpu", stage, metric_cols, NCOLS(metric_cols));
			t->empty = xstrdup("No figures.");
		}
		c = add_row(t);
		m = item_str(it, "metric", &b, "");
		sb_reset(&l);
		sb_printf(&l, "%s%s", metric_label(m), item_bool(it, "per_step") ? " per step" : "");
		cell_text(&c[0], sb_str(&l));
		/* the figure's unit from its name */
		if (strstr(m, "_us")) {
			cell_ms(&c[1], item_num(it, "base", 0));
			cell_ms(&c[2], item_num(it, "cand", 0));
			cell_dms(&c[3], item_num(it, "delta", 0));
		} else if (strstr(m, "_pct")) {
			double v = item_num(it, "delta", 0);
			cell_pct(&c[1], item_num(it, "base", 0));
			cell_pct(&c[2], item_num(it, "cand", 0));
			/* a share's change is in percentage points */
			if (fabs(v) < 0.05)
				snprintf(buf, sizeof buf, "0.0 pt");
			else
				snprintf(buf, sizeof buf, "%+.1f pt", v);
			cell_num(&c[3], v, buf);
		} else {
			long long v = (long long)item_num(it, "delta", 0);
			cell_int(&c[1], (long long)item_num(it, "base", 0));
			cell_int(&c[2], (long long)item_num(it, "cand", 0));
			if (v)
				snprintf(buf, sizeof buf, "%+lld", v);
			else
				snprintf(buf, sizeof buf, "0");
			cell_num(&c[3], (double)v, buf);
		}
		diff_cell_member(&c[4], it, "delta_pct", 1);
	}
	if (t)
		t->more = step_caveat(run, stage);
	sb_free(&b);
	sb_free(&l);
}

/* The stage's headline from its verdict and row counts. */
static char *
stage_headline(const struct item *v, const char *stage, const long long *counts)
{
	sbuf h = SBUF_INIT, b = SBUF_INIT;

	sb_printf(&h, "%s: ", stage_label(stage));
	if (v && item_get(v, "metric") >= 0) {
		sb_printf(&h, "GPU time%s ", item_bool(v, "per_step") ? " per step" : "");
		fmt_ms(&h, item_num(v, "base", 0));
		sb_adds(&h, " -> ");
		fmt_ms(&h, item_num(v, "cand", 0));
		if (item_get(v, "delta_pct") >= 0)
			sb_printf(&h, " (%+.1f%%)", item_num(v, "delta_pct", 0));
		sb_printf(&h, ", %s", item_str(v, "verdict", &b, ""));
	} else if (v)
		sb_printf(&h, "%s (%s)", item_str(v, "verdict", &b, ""),
		    item_str(v, "reason", &b, "no reason given"));
	sb_printf(&h, "; %lld changed, %lld new, %lld removed, %lld the same.", counts[1],
	    counts[2], counts[3], counts[0]);
	sb_free(&b);
	return sb_detach(&h);
}

static int
status_index(const char *s)
{
	return !strcmp(s, "same") ? 0 : !strcmp(s, "changed") ? 1 : !strcmp(s, "new") ? 2 :
	    !strcmp(s, "removed") ? 3 : -1;
}

static void
row_tables(const struct run *run, struct section *sec, const char *stage)
{
	struct tab *t = add_tab(sec, "diff", stage, row_cols, NCOLS(row_cols));
	const struct item *v = find_verdict(run, stage);
	const char **names = NULL;
	char **shorts;
	size_t nn = 0, capn = 0, r = 0, i, hidden = 0;
	long long counts[4] = { 0, 0, 0, 0 };
	double hidden_delta = 0;
	int per_step = 0;
	sbuf b = SBUF_INIT, x = SBUF_INIT, f = SBUF_INIT;

	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		int s;
		if (it->type != RT_diff_row || !in_stage(it, stage, &b))
			continue;
		if ((s = status_index(item_str(it, "status", &b, ""))) >= 0)
			counts[s]++;
		per_step |= item_bool(it, "per_step");
		if (!item_bool(it, "shown")) {
			hidden++;
			hidden_delta += item_num(it, "delta_us", 0);
			continue;
		}
		xgrow(&names, &capn, nn + 1, sizeof *names);
		names[nn++] = xstrdup(item_str(it, "kernel", &b, ""));
	}
	shorts = xcalloc(nn ? nn : 1, sizeof *shorts);
	short_names(names, nn, shorts);
	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		struct cell *c;
		if (it->type != RT_diff_row || !in_stage(it, stage, &b) || !item_bool(it, "shown"))
			continue;
		c = add_row(t);
		sb_reset(&x);
		sb_reset(&f);
		sb_adds(&x, shorts[r]);
		sb_adds(&f, names[r]);
		if (item_get(it, "base_kernel") >= 0) {
			char *s = short_name(item_str(it, "base_kernel", &b, ""));
			sb_printf(&x, "\nwas %s", s);
			sb_printf(&f, "\nwas %s", sb_str(&b));
			free(s);
		} else if (item_get(it, "base_names") >= 0) {
			sb_printf(&x, "\n%lld names in the baseline, %lld in the candidate",
			    item_int(it, "base_names", 0), item_int(it, "cand_names", 0));
			sb_printf(&f, "\n%lld names in the baseline, %lld in the candidate",
			    item_int(it, "base_names", 0), item_int(it, "cand_names", 0));
		}
		c[0].text = sb_detach(&x);
		if (strcmp(c[0].text, sb_str(&f)) != 0)
			c[0].full = xstrdup(sb_str(&f));
		free(shorts[r]);
		r++;
		sb_reset(&x);
		sb_adds(&x, item_str(it, "status", &b, ""));
		if (strcmp(item_str(it, "match", &b, ""), "family") == 0)
			sb_adds(&x, " (family)");
		cell_text(&c[1], sb_str(&x));
		cell_ms(&c[2], item_num(it, "base_us", 0));
		cell_ms(&c[3], item_num(it, "cand_us", 0));
		cell_dms(&c[4], item_num(it, "delta_us", 0));
		diff_cell_member(&c[5], it, "delta_pct", 1);
		cell_int(&c[6], item_int(it, "base_launches", 0));
		cell_int(&c[7], item_int(it, "cand_launches", 0));
		sb_reset(&x);
		sb_adds(&x, item_str(it, "location", &b, "-"));
		if (item_get(it, "base_location") >= 0)
			sb_printf(&x, "\nmoved from %s", item_str(it, "base_location", &b, ""));
		cell_text(&c[8], sb_str(&x));
	}
	for (i = 0; i < nn; i++)
		free((char *)names[i]);
	free(names);
	free(shorts);
	t->headline = stage_headline(v, stage, counts);
	t->total = xstrdup(per_step ? "Kernels by the size of their change, largest first; "
	    "times per step." : "Kernels by the size of their change, largest first.");
	if (hidden) {
		sb_reset(&x);
		sb_printf(&x, "%zu more kernel name%s below 1.0%% of the stage in both runs: "
		    "together ", hidden, hidden == 1 ? "" : "s");
		if (fabs(hidden_delta) < 5.0)
			sb_adds(&x, "0.00 ms.");
		else
			sb_printf(&x, "%+.2f ms.", hidden_delta / 1000);
		t->more = sb_detach(&x);
	}
	t->empty = xstrdup("No kernel reaches 1.0% of the stage in either run.");
	sb_free(&b);
	sb_free(&x);
	sb_free(&f);
}

static void
fuse_tables(const struct run *run, struct section *sec, const char *stage)
{
	struct tab *t = NULL;
	sbuf b = SBUF_INIT;
	size_t i;

	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		struct cell *c;
		if (it->type != RT_diff_fuse || !in_stage(it, stage, &b))
			continue;
		if (!t)
			t = add_tab(sec, "diff_fuse", stage, fuse_cols, NCOLS(fuse_cols));
		c = add_row(t);
		cell_text(&c[0], item_str(it, "pattern", &b, ""));
		cell_text(&c[1], item_str(it, "transition", &b, ""));
		cell_text(&c[2], item_str(it, "base_status", &b, "-"));
		cell_text(&c[3], item_str(it, "cand_status", &b, "-"));
		diff_cell_member(&c[4], it, "base_us", 0);
		diff_cell_member(&c[5], it, "cand_us", 0);
	}
	sb_free(&b);
}

static void
overlap_tables(const struct run *run, struct section *sec, const char *stage)
{
	struct tab *t = NULL;
	const char **names = NULL;
	char **shorts;
	size_t nn = 0, capn = 0, r = 0, i;
	sbuf b = SBUF_INIT;

	for (i = 0; i < run->n; i++)
		if (run->it[i].type == RT_diff_overlap && in_stage(&run->it[i], stage, &b)) {
			xgrow(&names, &capn, nn + 1, sizeof *names);
			names[nn++] = xstrdup(item_str(&run->it[i], "kernel", &b, ""));
		}
	if (nn == 0) {
		sb_free(&b);
		return;
	}
	shorts = xcalloc(nn, sizeof *shorts);
	short_names(names, nn, shorts);
	t = add_tab(sec, "diff_overlap", stage, overlap_cols, NCOLS(overlap_cols));
	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		struct cell *c;
		if (it->type != RT_diff_overlap || !in_stage(it, stage, &b))
			continue;
		c = add_row(t);
		c[0].text = shorts[r];
		if (strcmp(shorts[r], names[r]) != 0)
			c[0].full = xstrdup(names[r]);
		r++;
		diff_cell_member(&c[1], it, "base_us", 0);
		diff_cell_member(&c[2], it, "cand_us", 0);
		diff_cell_member(&c[3], it, "delta_us", 1);
		diff_cell_member(&c[4], it, "base_exclusive_pct", 0);
		diff_cell_member(&c[5], it, "cand_exclusive_pct", 0);
		cell_text(&c[6], item_str(it, "base_verdict", &b, "-"));
		cell_text(&c[7], item_str(it, "cand_verdict", &b, "-"));
	}
	for (i = 0; i < nn; i++)
		free((char *)names[i]);
	free(names);
	free(shorts);
	sb_free(&b);
}

/*
 * The diff's charts (issue 31): before the verdicts, each stage's GPU time
 * in both runs (the verdict's figure); before each stage's kernel table,
 * the changes of its first rows (the largest), slower and faster apart.
 */
static void
diff_charts(const struct run *run, struct doc *d)
{
	sbuf s = SBUF_INIT, b = SBUF_INIT;
	size_t i, j, r, n = 0;
	int per_step = 0;

	sb_adds(&s, "{\"kind\":\"hbar\",\"cls\":\"dbar\",\"title\":\"GPU time per stage in "
	    "both runs\",\"names\":[\"baseline\",\"candidate\"],\"legend\":[{\"name\":"
	    "\"baseline\",\"color\":\"base\"},{\"name\":\"candidate\",\"color\":\"cand\"}],"
	    "\"rows\":[");
	for (i = 0; i < run->n; i++) {
		const struct item *v = &run->it[i];
		if (v->type != RT_verdict || item_get(v, "metric") < 0 || item_get(v, "base") < 0 ||
		    strcmp(item_str(v, "scope", &b, ""), "overall") == 0)
			continue;
		per_step |= item_bool(v, "per_step");
		sb_adds(&s, n++ ? ",{\"label\":" : "{\"label\":");
		{
			sbuf sc = SBUF_INIT;
			spec_str(&s, stage_label(item_str(v, "stage", &b, item_str(v, "scope", &sc, ""))));
			sb_free(&sc);
		}
		sb_adds(&s, ",\"v\":[");
		spec_num(&s, item_num(v, "base", 0));
		sb_addc(&s, ',');
		spec_num(&s, item_num(v, "cand", 0));
		sb_adds(&s, "],\"c\":[\"base\",\"cand\"]}");
	}
	sb_adds(&s, "],\"axis\":");
	spec_str(&s, per_step ? "GPU time per step (ms), the sum of the kernel durations" :
	    "GPU time (ms), the sum of the kernel durations");
	sb_addc(&s, '}');
	if (n)
		add_chart(d, "verdict", NULL, sb_detach(&s));
	sb_reset(&s);
	for (i = 0; i < d->nsecs; i++)
		for (j = 0; j < d->secs[i].ntabs; j++) {
			const struct tab *t = &d->secs[i].tabs[j];
			int dc = tab_col(t, "delta_us");
			size_t m;
			if (strcmp(t->id, "diff") != 0 || !t->stage || !t->nrows || dc < 0)
				continue;
			m = t->nrows < 10 ? t->nrows : 10;
			sb_reset(&s);
			sb_adds(&s, "{\"kind\":\"hbar\",\"cls\":\"kbar\",\"title\":\"The largest "
			    "changes of the stage's kernels\",\"axis\":\"change in GPU time (ms): "
			    "candidate minus baseline\",\"names\":[\"change\"],\"legend\":[{\"name\":"
			    "\"slower\",\"color\":\"slower\"},{\"name\":\"faster\",\"color\":"
			    "\"faster\"}],\"rows\":[");
			for (r = 0; r < m; r++) {
				const struct cell *c = &t->cells[r * t->ncols];
				const struct cell *x = &c[dc];
				const char *nl = strchr(c[0].text, '\n');
				char *lab = nl ? xstrndup(c[0].text, (size_t)(nl - c[0].text)) :
				    xstrdup(c[0].text);
				sb_adds(&s, r ? ",{\"label\":" : "{\"label\":");
				spec_str(&s, lab);
				sb_adds(&s, ",\"full\":");
				spec_str(&s, c[0].full ? c[0].full : c[0].text);
				sb_adds(&s, ",\"v\":[");
				spec_num(&s, x->has_num ? x->num : 0);
				sb_adds(&s, x->has_num && x->num > 0 ? "],\"c\":[\"slower\"]}" :
				    "],\"c\":[\"faster\"]}");
				free(lab);
			}
			sb_adds(&s, "]}");
			add_chart(d, "diff", t->stage, sb_detach(&s));
		}
	sb_free(&s);
	sb_free(&b);
}

int
diff_build(const struct run *run, struct doc *d)
{
	const struct item *bi = find_side(run, "base"), *ci = find_side(run, "cand");
	struct section *sec;
	char **stages;
	size_t ns, i;

	if (!bi && !ci && !has_type(run, RT_diff_row) && !has_type(run, RT_verdict))
		return 0;
	ns = diff_stages(run, &stages);
	header(run, d, bi, ci);
	notes(run, d, stages, ns);
	verdict_section(run, d);
	sec = add_section(d, "diff_gpu", "GPU time");
	sec->intro = xstrdup("The stage's GPU time figures of step-stats(1) in both runs: "
	    "times per step where the step counts differ; the CUDA-graph share changes in "
	    "percentage points.");
	for (i = 0; i < ns; i++)
		gpu_tables(run, sec, stages[i]);
	if (sec->ntabs == 0) {
		struct tab *t = add_tab(sec, "diff_gpu", NULL, metric_cols, NCOLS(metric_cols));
		t->empty = xstrdup("No stage is in both runs.");
	}
	sec = add_section(d, "diff", "Kernels");
	sec->intro = xstrdup("Each kernel of a stage in either run, matched by name, else by "
	    "family (template arguments, tile sizes and hashes left out: a retuned kernel is "
	    "changed, not new and removed). Same: on both sides and within 1.0% of the larger "
	    "time with as many launches per step; new: only in the candidate; removed: only in "
	    "the baseline.");
	for (i = 0; i < ns; i++)
		row_tables(run, sec, stages[i]);
	if (ns == 0) {
		struct tab *t = add_tab(sec, "diff", NULL, row_cols, NCOLS(row_cols));
		t->empty = xstrdup("No kernel rows in either run.");
	}
	if (has_type(run, RT_diff_fuse)) {
		sec = add_section(d, "diff_fuse", "Fusions");
		sec->intro = xstrdup("Fuse rows of either run: appeared (a new opportunity), "
		    "resolved (an opportunity gone), fused (an opportunity now in use), lost (a "
		    "fusion in use that no longer is), gained (in use only in the candidate), same.");
		for (i = 0; i < ns; i++)
			fuse_tables(run, sec, stages[i]);
	}
	if (has_type(run, RT_diff_overlap)) {
		sec = add_section(d, "diff_overlap", "Overlap");
		sec->intro = xstrdup("Overlap rows of both runs (mapping/formal mode) by kernel: "
		    "time, the share no other stream hides, and the verdict on each side.");
		for (i = 0; i < ns; i++)
			overlap_tables(run, sec, stages[i]);
	}
	diff_charts(run, d);
	for (i = 0; i < ns; i++)
		free(stages[i]);
	free(stages);
	return 1;
}

int
doc_is_diff(const struct doc *d)
{
	size_t i;

	for (i = 0; i < d->nsecs; i++)
		if (strcmp(d->secs[i].id, "diff") == 0)
			return 1;
	return 0;
}

const char *
doc_default_table(const struct doc *d)
{
	return doc_is_diff(d) ? "diff" : "kernel";
}
