/*
 * The report document of one run: header facts and notes, then the
 * sections (GPU time, kernels, overlap, fuse, ...) as tables per stage,
 * built from the run's records.  The writers only lay it out.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "render.h"
#include "rules.h"
#include "xalloc.h"

void
fmt_ms(sbuf *out, double us)
{
	sb_printf(out, "%.2f ms", us / 1000.0);
}

void
fmt_pct(sbuf *out, double p)
{
	sb_printf(out, "%.1f%%", p);
}

/* ---- header ---- */

static const char *
framework_phrase(const char *fw, const char *source, const char *evidence, sbuf *out)
{
	sb_reset(out);
	if (strcmp(fw, "none") == 0) {
		sb_adds(out, "PyTorch (no serving framework detected; --framework NAME sets one)");
		return sb_str(out);
	}
	sb_adds(out, framework_display(fw));
	if (!source)
		return sb_str(out);
	if (strcmp(source, "option") == 0)
		sb_adds(out, " (from --framework)");
	else if (strcmp(source, "server_args") == 0)
		sb_adds(out, " (from server_args.json)");
	else if (strcmp(source, "path") == 0)
		sb_adds(out, " (from the path)");
	else if (strcmp(source, "capture") == 0)
		sb_adds(out, " (from the live server)");
	else if (strcmp(source, "trace") == 0)
		sb_printf(out, " (from the trace: %s)", evidence ? evidence : "its contents");
	return sb_str(out);
}

/* The traces of an input record, joined with ", ". */
static void
input_traces(const struct item *it, sbuf *out)
{
	int i = item_get(it, "traces"), k, n;
	sbuf s = SBUF_INIT;

	if (i < 0 || it->doc.tok[i].type != JSMN_ARRAY)
		return;
	n = it->doc.tok[i].size;
	for (k = 0, i++; k < n; k++, i = json_skip(&it->doc, i)) {
		json_str(&it->doc, i, &s, NULL);
		sb_printf(out, "%s%s", k ? ", " : "", sb_str(&s));
	}
	sb_free(&s);
}

/* The traces of an input record as a JSON array field of the facts. */
static void
traces_field(struct doc *d, const char *name, const struct item *it)
{
	int i = item_get(it, "traces");
	size_t n;
	const char *s;
	char *js;

	if (i < 0 || it->doc.tok[i].type != JSMN_ARRAY)
		return;
	s = json_span(&it->doc, i, &n);
	js = xstrndup(s, n);
	add_field(d, name, js);
	free(js);
}

/* The input record of a role (single, mapping, formal), or NULL. */
static const struct item *
find_input(const struct run *run, const char *role)
{
	return find_item(run, RT_input, "role", role, "single");
}

static void
header(const struct run *run, struct doc *d)
{
	const struct item *m = find_input(run, "mapping"), *f = find_input(run, "formal");
	const struct item *s = find_input(run, "single"), *main = f ? f : s ? s : m;
	sbuf b = SBUF_INIT, v = SBUF_INIT, src = SBUF_INIT, ev = SBUF_INIT;
	const char *fw = "none", *title;
	size_t i;

	/* the JSON document's facts are the figures; the labels' phrases are md and HTML's */
	add_field_str(d, "mode", m || f ? "mapping_formal" : "single");
	add_fact(d, "Mode", m || f ? "mapping/formal (a graph-off mapping trace gives the Python "
	    "sites, a graph-on formal trace the schedule)" : "single trace");
	if (main) {
		const char *source, *evidence;
		fw = item_str(main, "framework", &b, "none");
		/* one deployment: a formal trace nothing named (stdin) takes the mapping's */
		if (f && m && strcmp(fw, "none") == 0 &&
		    strcmp(item_str(m, "framework", &v, "none"), "none") != 0)
			main = m;
		fw = item_str(main, "framework", &b, "none");
		d->framework = xstrdup(fw);
		source = item_str(main, "framework_source", &src, NULL);
		evidence = item_str(main, "framework_evidence", &ev, NULL);
		add_field_str(d, "framework", fw);
		if (source)
			add_field_str(d, "framework_source", source);
		else
			add_field(d, "framework_source", "null");
		if (evidence)
			add_field_str(d, "framework_evidence", evidence);
		add_fact(d, "Framework", framework_phrase(fw, source, evidence, &v));
		if (m && f) {
			sbuf mf = SBUF_INIT;
			const char *mfw = item_str(m, "framework", &mf, "none");
			if (strcmp(mfw, fw) != 0) {
				sbuf ph = SBUF_INIT;
				add_field_str(d, "mapping_framework", mfw);
				sb_reset(&v);
				sb_printf(&v, "%s; the formal trace's differs",
				    framework_phrase(mfw, NULL, NULL, &ph));
				add_fact(d, "Mapping framework", sb_str(&v));
				sb_free(&ph);
			}
			sb_free(&mf);
		}
	}
	/* the model: the formal input's server args first, then the mapping's (§1 step 4) */
	title = NULL;
	for (i = 0; i < 3 && !title; i++) {
		const struct item *in = i == 0 ? f : i == 1 ? m : s;
		if (in && (title = item_str(in, "model", &b, NULL)) != NULL) {
			add_fact(d, "Model", title);
			d->model = xstrdup(title);
		}
	}
	if (!d->model)
		add_field(d, "model", "null");
	if (s) {
		sb_reset(&v);
		input_traces(s, &v);
		traces_field(d, "traces", s);
		add_fact(d, "Traces", sb_str(&v));
	}
	if (m) {
		sb_reset(&v);
		input_traces(m, &v);
		traces_field(d, "mapping_traces", m);
		add_fact(d, "Mapping traces", sb_str(&v));
	}
	if (f) {
		sb_reset(&v);
		input_traces(f, &v);
		traces_field(d, "formal_traces", f);
		add_fact(d, "Formal traces", sb_str(&v));
	}
	sb_reset(&v);
	if (d->model) {
		const char *slash = strrchr(d->model, '/');
		sb_adds(&v, slash && slash[1] ? slash + 1 : d->model);
	} else if (main) {
		const char *p = item_str(main, "path", &b, "");
		const char *slash = strrchr(p, '/');
		sb_adds(&v, slash && slash[1] ? slash + 1 : p);
	}
	d->title = xstrdup(v.len ? v.s : "trace");
	probe_fact(run, d);
	for (i = 0; i < run->n; i++)
		if (run->it[i].type == RT_note)
			add_note(d, item_str(&run->it[i], "text", &b, ""));
	sb_free(&b);
	sb_free(&v);
	sb_free(&src);
	sb_free(&ev);
}

/* ---- kernels ---- */

/* Column keys are kernel_row's member names (triage-records(5); issue 31). */
static const struct col kernel_cols[] = {
	{ "kernel", "Kernel", 0 },
	{ "category", "Category", 0 },
	{ "total_us", "GPU time", 1 },
	{ "share_pct", "Share", 1 },
	{ "launches", "Launches", 1 },
	{ "mean_us", "Mean", 1 },
	{ "min_us", "Min", 1 },
	{ "max_us", "Max", 1 },
	{ "p50_us", "p50", 1 },
	{ "p90_us", "p90", 1 },
	{ "location", "Python location (site share)", 0 },
	{ "cpu_op", "CPU op", 0 },
};
#define NKCOLS (sizeof kernel_cols / sizeof kernel_cols[0])

/* Category totals of a stage's rows (all of them, shown or not), largest first. */
struct catsum {
	char *cat;
	double us;
};

static int
cmp_catsum(const void *a, const void *b)
{
	const struct catsum *x = a, *y = b;

	return x->us < y->us ? 1 : x->us > y->us ? -1 : strcmp(x->cat, y->cat);
}

static size_t
category_sums(const struct run *run, const char *stage, struct catsum **out, double *total)
{
	struct catsum *v = NULL;
	size_t n = 0, cap = 0, i, j;
	sbuf b = SBUF_INIT, c = SBUF_INIT;

	*total = 0;
	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		double us;
		if (it->type != RT_kernel_row || !item_in_stage(it, stage, &b))
			continue;
		us = item_num(it, "total_us", 0);
		item_str(it, "category", &c, "other");
		for (j = 0; j < n && strcmp(v[j].cat, sb_str(&c)) != 0; j++)
			;
		if (j == n) {
			xgrow(&v, &cap, n + 1, sizeof *v);
			v[n].cat = xstrdup(sb_str(&c));
			v[n++].us = 0;
		}
		v[j].us += us;
		*total += us;
	}
	sb_free(&b);
	sb_free(&c);
	if (n)
		qsort(v, n, sizeof *v, cmp_catsum);
	*out = v;
	return n;
}

/*
 * The stage's headline: "decode: 9.81 ms GPU time in 412 kernels over 5
 * steps; gemm 61%, attention 22%; idle 4%; 97% in CUDA graphs."
 */
static char *
headline(const struct run *run, const char *stage)
{
	struct catsum *cs;
	size_t ncs, i, shown = 0;
	double total;
	sbuf b = SBUF_INIT;
	size_t j;

	ncs = category_sums(run, stage, &cs, &total);
	sb_printf(&b, "%s: ", stage_label(stage));
	fmt_ms(&b, total);
	sb_adds(&b, " of GPU time");
	/* step-stats' figures for the stage, when they are in the stream */
	for (j = 0; j < run->n; j++) {
		const struct item *it = &run->it[j];
		sbuf s = SBUF_INIT;
		if (item_is(it, "gpu_time") && item_in_stage(it, stage, &s)) {
			long long k = item_int(it, "kernels", -1), steps = item_int(it, "steps", -1);
			double span = item_num(it, "span_us", -1), idle = item_num(it, "idle_us", -1);
			double gp = item_num(it, "graph_pct", -1);
			if (k >= 0)
				sb_printf(&b, " in %lld kernels", k);
			if (steps > 0)
				sb_printf(&b, " over %lld step%s", steps, steps == 1 ? "" : "s");
			sb_adds(&b, ";");
			for (i = 0; i < ncs && shown < 3; i++)
				if (pct(cs[i].us, total) >= 5.0)
					sb_printf(&b, "%s %s %.0f%%", shown++ ? "," : "", cs[i].cat,
					    pct(cs[i].us, total));
			if (span > 0 && idle >= 0)
				sb_printf(&b, "; GPU idle %.0f%% of the span", pct(idle, span));
			if (gp >= 0)
				sb_printf(&b, "; %.0f%% in CUDA graphs", gp);
			sb_free(&s);
			goto out;
		}
		sb_free(&s);
	}
	sb_adds(&b, ";");
	for (i = 0; i < ncs && shown < 3; i++)
		if (pct(cs[i].us, total) >= 5.0)
			sb_printf(&b, "%s %s %.0f%%", shown++ ? "," : "", cs[i].cat, pct(cs[i].us, total));
out:
	if (!shown && b.len && b.s[b.len - 1] == ';')
		b.s[--b.len] = '\0';
	sb_addc(&b, '.');
	for (i = 0; i < ncs; i++)
		free(cs[i].cat);
	free(cs);
	return sb_detach(&b);
}

/* A location or CPU-op cell: kernel-map joins the sites with <br>; keep one per line. */
static void
cell_list(struct cell *c, const char *joined)
{
	sbuf b = SBUF_INIT;
	const char *p = joined, *q;

	while ((q = strstr(p, "<br>")) != NULL) {
		sb_add(&b, p, (size_t)(q - p));
		sb_addc(&b, '\n');
		p = q + 4;
	}
	sb_adds(&b, p);
	c->text = b.s ? sb_detach(&b) : xstrdup("");
}

/*
 * A duration statistic of a kernel row (per launch): microseconds, as
 * nsys and HTA show kernel durations; "-" when the row has none (records
 * of an older kernel-map).
 */
static void
cell_stat(struct cell *c, const struct item *it, const char *m)
{
	double us;

	if (item_get(it, m) < 0) {
		cell_text(c, "-");
		return;
	}
	us = item_num(it, m, 0);
	c->text = printf_dup("%.1f \u00b5s", us);
	c->num = us;
	c->has_num = 1;
}

static void
kernel_section(const struct run *run, struct doc *d)
{
	struct section *sec = add_section(d, "kernels", "Kernels");
	char **stages;
	size_t ns = stages_of(run, RT_kernel_row, &stages), si, i;
	sbuf b = SBUF_INIT;

	sec->intro = xstrdup("Kernels at or above 1.0% of their stage's GPU time, heaviest "
	    "first, with the Python code and CPU op that launched them. Shares are of the stage "
	    "total (the sum of its kernel durations).");
	for (si = 0; si < ns; si++) {
		struct tab *t = add_tab(sec, "kernel", stages[si], kernel_cols, NKCOLS);
		const char **names = NULL;
		char **shorts;
		size_t nn = 0, capn = 0, hidden = 0, r = 0;
		double hidden_pct = 0, total = 0;
		long long launches = 0, kinds = 0;

		for (i = 0; i < run->n; i++) {
			const struct item *it = &run->it[i];
			if (it->type != RT_kernel_row || !item_in_stage(it, stages[si], &b))
				continue;
			kinds++;
			launches += item_int(it, "launches", 0);
			total = item_num(it, "stage_total_us", total);
			if (!item_bool(it, "shown")) {
				hidden++;
				hidden_pct += item_num(it, "share_pct", 0);
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
			if (it->type != RT_kernel_row || !item_in_stage(it, stages[si], &b) ||
			    !item_bool(it, "shown"))
				continue;
			c = add_row(t);
			c[0].text = shorts[r];
			if (strcmp(shorts[r], names[r]) != 0)
				c[0].full = xstrdup(names[r]);
			r++;
			cell_text(&c[1], item_str(it, "category", &b, "other"));
			cell_ms(&c[2], item_num(it, "total_us", 0));
			cell_pct(&c[3], item_num(it, "share_pct", 0));
			cell_int(&c[4], item_int(it, "launches", 0));
			cell_stat(&c[5], it, "mean_us");
			cell_stat(&c[6], it, "min_us");
			cell_stat(&c[7], it, "max_us");
			cell_stat(&c[8], it, "p50_us");
			cell_stat(&c[9], it, "p90_us");
			cell_list(&c[10], item_str(it, "location", &b, "unresolved"));
			cell_list(&c[11], item_str(it, "cpu_op", &b, "-"));
		}
		for (i = 0; i < nn; i++)
			free((char *)names[i]);
		free(names);
		free(shorts);
		if (!has_type(run, RT_gpu_time))
			t->headline = headline(run, stages[si]);
		sb_reset(&b);
		sb_adds(&b, "Stage GPU time ");
		fmt_ms(&b, total);
		sb_printf(&b, " in %lld kernel launches of %lld names.", launches, kinds);
		t->total = sb_detach(&b);
		if (hidden)
			t->more = printf_dup("%zu more kernel name%s below the 1.0%% bar or the row "
			    "limit: %.1f%% of the stage's GPU time.", hidden, hidden == 1 ? "" : "s",
			    hidden_pct);
		t->empty = xstrdup("No kernel reaches 1.0% of the stage's GPU time.");
	}
	if (ns == 0) {
		struct tab *t = add_tab(sec, "kernel", NULL, kernel_cols, NKCOLS);
		t->empty = xstrdup("No kernel rows: the input held no GPU kernels on the analyzed "
		    "process.");
	}
	free_strings(stages, ns);
	sb_free(&b);
}

/* ---- overlap ---- */

static const struct col overlap_cols[] = {
	{ "priority", "Priority", 0 },
	{ "verdict", "Verdict", 0 },
	{ "kernel", "Kernel", 0 },
	{ "python_scope", "Python scope", 0 },
	{ "total_us", "GPU time", 1 },
	{ "share_pct", "Share", 1 },
	{ "exclusive_ratio", "Exclusive", 1 },
	{ "hidden_ratio", "Hidden", 1 },
	{ "dep_risk", "Dep risk", 0 },
	{ "recommendation", "Recommendation", 0 },
};

/* A ratio (0..1) shown as a percentage; the ratio behind it, as the record has it. */
static void
cell_ratio(struct cell *c, double r)
{
	sbuf b = SBUF_INIT;

	fmt_pct(&b, 100 * r);
	cell_num(c, r, sb_str(&b));
	sb_free(&b);
}

static void
overlap_section(const struct run *run, struct doc *d)
{
	struct section *sec = add_section(d, "overlap", "Overlap opportunities");
	int dual = find_input(run, "mapping") || find_input(run, "formal");
	char **stages;
	size_t ns = stages_of(run, RT_overlap_row, &stages), si, i;
	sbuf b = SBUF_INIT;

	sec->intro = xstrdup("Kernels that run exposed on the GPU (no other stream busy "
	    "meanwhile), where overlapping them with other work could hide their time.");
	for (si = 0; si < ns; si++) {
		struct tab *t = add_tab(sec, "overlap", stages[si], overlap_cols, 10);
		const char **names = NULL;
		char **shorts;
		size_t nn = 0, capn = 0, r = 0;

		for (i = 0; i < run->n; i++)
			if (run->it[i].type == RT_overlap_row &&
			    item_in_stage(&run->it[i], stages[si], &b)) {
				xgrow(&names, &capn, nn + 1, sizeof *names);
				names[nn++] = xstrdup(item_str(&run->it[i], "kernel", &b, ""));
			}
		shorts = xcalloc(nn ? nn : 1, sizeof *shorts);
		short_names(names, nn, shorts);
		for (i = 0; i < run->n; i++) {
			const struct item *it = &run->it[i];
			struct cell *c;
			if (it->type != RT_overlap_row || !item_in_stage(it, stages[si], &b))
				continue;
			c = add_row(t);
			cell_text(&c[0], item_str(it, "priority", &b, ""));
			cell_text(&c[1], item_str(it, "verdict", &b, ""));
			c[2].text = shorts[r];
			if (strcmp(shorts[r], names[r]) != 0)
				c[2].full = xstrdup(names[r]);
			r++;
			cell_text(&c[3], item_str(it, "python_scope", &b, "unmapped"));
			cell_ms(&c[4], item_num(it, "total_us", 0));
			cell_pct(&c[5], item_num(it, "share_pct", 0));
			cell_ratio(&c[6], item_num(it, "exclusive_ratio", 0));
			cell_ratio(&c[7], item_num(it, "hidden_ratio", 0));
			cell_text(&c[8], item_str(it, "dep_risk", &b, ""));
			cell_text(&c[9], item_str(it, "recommendation", &b, ""));
		}
		for (i = 0; i < nn; i++)
			free((char *)names[i]);
		free(names);
		free(shorts);
		t->empty = xstrdup("No kernel clears the 1.0% bar.");
	}
	if (ns == 0) {
		struct tab *t = add_tab(sec, "overlap", NULL, overlap_cols, 10);
		t->empty = xstrdup(dual ? "No kernel clears the 1.0% reporting bar." :
		    "The overlap table needs two traces of one deployment: a graph-off mapping "
		    "trace for the Python sites and a graph-on formal trace for the schedule "
		    "(triage --mapping-input EAGER --formal-input GRAPH).");
	}
	free_strings(stages, ns);
	sb_free(&b);
}

/*
 * An evidence cell ("name (9.0%)<br>name (6.0%)"): one kernel a line, each
 * name shortened; the whole text kept for hover and machines.
 */
static void
cell_evidence(struct cell *c, const char *joined)
{
	sbuf b = SBUF_INIT, one = SBUF_INIT;
	const char *p = joined, *q, *par;
	struct cell whole = { 0 };

	for (;;) {
		q = strstr(p, "<br>");
		sb_reset(&one);
		sb_add(&one, p, q ? (size_t)(q - p) : strlen(p));
		par = strrchr(sb_str(&one), '(');
		if (par && par > one.s && par[-1] == ' ') {
			char *name = xstrndup(one.s, (size_t)(par - 1 - one.s)), *s = short_name(name);
			sb_printf(&b, "%s %s", s, par);
			free(name);
			free(s);
		} else
			sb_adds(&b, sb_str(&one));
		if (!q)
			break;
		sb_addc(&b, '\n');
		p = q + 4;
	}
	c->text = b.s ? sb_detach(&b) : xstrdup("");
	cell_list(&whole, joined);
	if (strcmp(whole.text, c->text) != 0)
		c->full = whole.text;
	else
		free(whole.text);
	sb_free(&one);
}

/* ---- fuse ---- */

/* Column keys are fuse_row's member names (triage-records(5); issue 31). */
static const struct col fuse_cols[] = {
	{ "pattern", "Pattern", 0 },
	{ "confidence", "Confidence", 0 },
	{ "related_us", "Related GPU time", 1 },
	{ "share_pct", "Share", 1 },
	{ "evidence", "Evidence kernels", 0 },
	{ "current_locations", "Current Python location", 0 },
	{ "candidate_path", "Candidate fused path", 0 },
	{ "rationale", "Rationale", 0 },
};

static const struct col inuse_cols[] = {
	{ "pattern", "Fusion", 0 },
	{ "related_us", "GPU time", 1 },
	{ "share_pct", "Share", 1 },
	{ "evidence", "Fused kernels", 0 },
	{ "current_locations", "Python location", 0 },
};

static void
fuse_section(const struct run *run, struct doc *d, int in_use)
{
	struct section *sec = in_use ? add_section(d, "fuse_in_use", "Fusions already in use") :
	    add_section(d, "fuse", "Fuse opportunities");
	char **stages;
	size_t ns = stages_of(run, RT_fuse_row, &stages), si, i, nrows = 0;
	sbuf b = SBUF_INIT;

	sec->intro = xstrdup(in_use ? "Fusions of the framework's catalog that this trace "
	    "already runs: their fused kernels are in the trace." :
	    "Kernels that a fused path of the framework would combine, still running "
	    "separately in this trace.");
	for (si = 0; si < ns; si++) {
		struct tab *t = add_tab(sec, in_use ? "fuse_in_use" : "fuse", stages[si],
		    in_use ? inuse_cols : fuse_cols, in_use ? 5 : 8);
		for (i = 0; i < run->n; i++) {
			const struct item *it = &run->it[i];
			struct cell *c;
			int used;
			if (it->type != RT_fuse_row || !item_in_stage(it, stages[si], &b))
				continue;
			used = strcmp(item_str(it, "status", &b, ""), "in use") == 0;
			if (used != in_use)
				continue;
			c = add_row(t);
			nrows++;
			cell_text(&c[0], item_str(it, "pattern", &b, ""));
			if (in_use) {
				cell_ms(&c[1], item_num(it, "related_us", 0));
				cell_pct(&c[2], item_num(it, "share_pct", 0));
				cell_evidence(&c[3], item_str(it, "evidence", &b, "-"));
				cell_list(&c[4], item_str(it, "current_locations", &b, "-"));
				continue;
			}
			cell_text(&c[1], item_str(it, "confidence", &b, ""));
			cell_ms(&c[2], item_num(it, "related_us", 0));
			cell_pct(&c[3], item_num(it, "share_pct", 0));
			cell_evidence(&c[4], item_str(it, "evidence", &b, "-"));
			cell_list(&c[5], item_str(it, "current_locations", &b, "-"));
			cell_list(&c[6], item_str(it, "candidate_path", &b, ""));
			cell_text(&c[7], item_str(it, "rationale", &b, ""));
		}
		t->empty = xstrdup(in_use ? "None of the catalog's fused kernels runs in this stage." :
		    "No missing fusion of the catalog reaches 1.0% of the stage.");
	}
	if (ns == 0 || nrows == 0) {
		/* one sentence for the whole section rather than a table per stage */
		for (si = 0; si < sec->ntabs; si++) {
			free(sec->tabs[si].stage);
			free(sec->tabs[si].empty);
			free(sec->tabs[si].cells);
		}
		sec->ntabs = 0;
		{
			struct tab *t = add_tab(sec, in_use ? "fuse_in_use" : "fuse", NULL,
			    in_use ? inuse_cols : fuse_cols, in_use ? 5 : 8);
			if (d->framework && strcmp(d->framework, "none") == 0)
				t->empty = xstrdup("No fuse analysis: no serving framework was "
				    "detected, and the fusion catalog holds framework code paths "
				    "(--framework NAME applies that framework's).");
			else
				t->empty = xstrdup(in_use ? "None of the catalog's fused kernels runs "
				    "in this trace." : "No missing fusion of the catalog reaches 1.0% "
				    "of a stage.");
		}
	}
	free_strings(stages, ns);
	sb_free(&b);
}

/* ---- GPU time (step-stats) ---- */

static const struct col gpu_cols[] = {
	{ "kernels", "Kernels", 1 },
	{ "busy_us", "GPU busy", 1 },
	{ "idle_us", "GPU idle", 1 },
	{ "idle_launch_us", "Idle waiting for launches", 1 },
	{ "span_us", "Span", 1 },
	{ "compute_us", "Compute", 1 },
	{ "comm_us", "Communication", 1 },
	{ "memcpy_us", "Memory", 1 },
	{ "graph_pct", "In CUDA graphs", 1 },
	{ "steps", "Steps", 1 },
	{ "step_p50_us", "Step p50", 1 },
	{ "step_p90_us", "Step p90", 1 },
	{ "step_max_us", "Step max", 1 },
};

static const struct col step_cols[] = {
	{ "index", "Step", 1 },
	{ "name", "Marker", 0 },
	{ "batch", "Batch", 1 },
	{ "tokens", "Tokens", 1 },
	{ "cpu_us", "CPU time", 1 },
	{ "gpu_busy_us", "GPU busy", 1 },
	{ "gpu_span_us", "GPU span", 1 },
	{ "kernels", "Kernels", 1 },
};

static const struct col escape_cols[] = {
	{ "kernel", "Kernel", 0 },
	{ "launches", "Eager launches", 1 },
	{ "total_us", "GPU time", 1 },
	{ "share_pct", "Share", 1 },
	{ "location", "Python location", 0 },
};

/* The graph_escape rows of a stage, when step-stats wrote any. */
static void
escapes(const struct run *run, struct section *sec, const char *stage)
{
	struct tab *t;
	const char **names = NULL;
	char **shorts;
	size_t nn = 0, capn = 0, r = 0, i;
	sbuf b = SBUF_INIT;

	for (i = 0; i < run->n; i++)
		if (run->it[i].type == RT_graph_escape && item_in_stage(&run->it[i], stage, &b)) {
			xgrow(&names, &capn, nn + 1, sizeof *names);
			names[nn++] = xstrdup(item_str(&run->it[i], "kernel", &b, ""));
		}
	if (nn == 0) {
		sb_free(&b);
		return;
	}
	t = add_tab(sec, "escape", stage, escape_cols, sizeof escape_cols / sizeof escape_cols[0]);
	shorts = xcalloc(nn, sizeof *shorts);
	short_names(names, nn, shorts);
	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		struct cell *cl;
		if (it->type != RT_graph_escape || !item_in_stage(it, stage, &b))
			continue;
		cl = add_row(t);
		cl[0].text = shorts[r];
		if (strcmp(shorts[r], names[r]) != 0)
			cl[0].full = xstrdup(names[r]);
		r++;
		cell_member(&cl[1], it, "launches");
		cell_member(&cl[2], it, "total_us");
		cell_member(&cl[3], it, "share_pct");
		cell_list(&cl[4], item_str(it, "location", &b, "-"));
	}
	for (i = 0; i < nn; i++)
		free((char *)names[i]);
	free(names);
	free(shorts);
	t->total = xstrdup("Kernels launched outside CUDA graphs in this graph-mode stage, "
	    "largest first:");
	sb_free(&b);
}

static void
gpu_section(const struct run *run, struct doc *d)
{
	struct section *sec;
	char **stages;
	size_t ns, si, i, c;
	sbuf b = SBUF_INIT;

	for (i = 0; i < run->n && !item_is(&run->it[i], "gpu_time"); i++)
		;
	if (i == run->n)
		return;
	sec = add_section(d, "gpu", "GPU time");
	sec->intro = xstrdup("How busy the GPU was per stage (the union of its kernels' "
	    "intervals), how long it sat idle between them and how much of that was spent "
	    "waiting for the host to launch work, the busy time by kind (overlaps counted "
	    "once: compute, then communication, then memory), the part run in CUDA graphs, "
	    "and the steps (step-stats(1) defines each figure).");
	ns = stages_of(run, RT_gpu_time, &stages);
	for (si = 0; si < ns; si++) {
		struct tab *t = add_tab(sec, "gpu", stages[si], gpu_cols,
		    sizeof gpu_cols / sizeof gpu_cols[0]);
		struct tab *st;
		for (i = 0; i < run->n; i++) {
			const struct item *it = &run->it[i];
			struct cell *cl;
			if (it->type != RT_gpu_time || !item_in_stage(it, stages[si], &b))
				continue;
			cl = add_row(t);
			for (c = 0; c < t->ncols; c++)
				cell_member(&cl[c], it, t->cols[c].key);
		}
		t->headline = headline(run, stages[si]);
		t->empty = xstrdup("No GPU work in this stage.");
		st = add_tab(sec, "step", stages[si], step_cols, sizeof step_cols / sizeof step_cols[0]);
		for (i = 0; i < run->n; i++) {
			const struct item *it = &run->it[i];
			struct cell *cl;
			if (it->type != RT_step || !item_in_stage(it, stages[si], &b))
				continue;
			cl = add_row(st);
			cell_member(&cl[0], it, "index");
			cell_text(&cl[1], item_str(it, "name", &b, ""));
			cell_member(&cl[2], it, "batch");
			cell_member(&cl[3], it, "tokens");
			for (c = 4; c < st->ncols; c++)
				cell_member(&cl[c], it, st->cols[c].key);
		}
		st->empty = xstrdup("No step markers in this stage (ProfilerStep#N, SGLang "
		    "step[...], vLLM execute_...): no per-step figures.");
		st->total = xstrdup("Steps, from the trace's step markers:");
		escapes(run, sec, stages[si]);
	}
	free_strings(stages, ns);
	sb_free(&b);
}

/* ---- charts ---- */

/*
 * Per stage of the kernel table, a stacked bar of its GPU time by kernel
 * category (all its rows, shown or not) and, when step-stats measured it,
 * its idle time; the other charts come from the tables (charts.c).
 */
static void
charts(const struct run *run, struct doc *d)
{
	char **stages;
	size_t ns = stages_of(run, RT_kernel_row, &stages), si, i;
	sbuf b = SBUF_INIT, s = SBUF_INIT;

	for (si = 0; si < ns; si++) {
		struct catsum *cs;
		double total, idle = -1;
		size_t n = category_sums(run, stages[si], &cs, &total);

		for (i = 0; i < run->n; i++)
			if (item_is(&run->it[i], "gpu_time") && item_in_stage(&run->it[i], stages[si], &b))
				idle = item_num(&run->it[i], "idle_us", -1);
		sb_reset(&s);
		sb_adds(&s, "{\"kind\":\"hbar\",\"cls\":\"seg\",\"stacked\":true,\"pct\":true,"
		    "\"title\":");
		spec_str(&s, idle >= 0 ? "GPU time by kernel category, then the GPU's idle time" :
		    "GPU time by kernel category");
		sb_adds(&s, ",\"axis\":");
		spec_str(&s, idle >= 0 ? "time in the stage (ms): kernel durations summed, then idle" :
		    "kernel durations summed (ms)");
		sb_adds(&s, ",\"names\":[");
		for (i = 0; i < n; i++) {
			if (i)
				sb_addc(&s, ',');
			spec_str(&s, cs[i].cat);
		}
		if (idle >= 0)
			sb_adds(&s, n ? ",\"idle\"" : "\"idle\"");
		sb_adds(&s, "],\"legend\":[");
		for (i = 0; i < n; i++) {
			sb_adds(&s, i ? ",{\"name\":" : "{\"name\":");
			spec_str(&s, cs[i].cat);
			sb_adds(&s, ",\"color\":");
			spec_str(&s, cs[i].cat);
			sb_addc(&s, '}');
		}
		if (idle >= 0)
			sb_adds(&s, n ? ",{\"name\":\"idle\",\"color\":\"idle\"}" :
			    "{\"name\":\"idle\",\"color\":\"idle\"}");
		sb_adds(&s, "],\"rows\":[{\"label\":");
		spec_str(&s, stage_label(stages[si]));
		sb_adds(&s, ",\"v\":[");
		for (i = 0; i < n; i++) {
			if (i)
				sb_addc(&s, ',');
			spec_num(&s, cs[i].us);
		}
		if (idle >= 0) {
			if (n)
				sb_addc(&s, ',');
			spec_num(&s, idle);
		}
		sb_adds(&s, "],\"c\":[");
		for (i = 0; i < n; i++) {
			if (i)
				sb_addc(&s, ',');
			spec_str(&s, cs[i].cat);
		}
		if (idle >= 0)
			sb_adds(&s, n ? ",\"idle\"" : "\"idle\"");
		sb_adds(&s, "]}]}");
		if (n || idle >= 0)
			add_chart(d, "kernel", stages[si], sb_detach(&s));
		for (i = 0; i < n; i++)
			free(cs[i].cat);
		free(cs);
	}
	free_strings(stages, ns);
	sb_free(&b);
	sb_free(&s);
	doc_charts(run, d);
}

void
doc_build(const struct run *run, struct doc *d)
{
	memset(d, 0, sizeof *d);
	if (diff_build(run, d))	/* trace-diff's records: the diff view instead (diff.c) */
		return;
	header(run, d);
	gpu_section(run, d);
	kernel_section(run, d);
	overlap_section(run, d);
	fuse_section(run, d, 0);
	fuse_section(run, d, 1);
	ranks_section(run, d);
	health_section(run, d);
	charts(run, d);
}

void
doc_free(struct doc *d)
{
	size_t i, j, k;

	for (i = 0; i < d->nfacts; i++) {
		free(d->facts[i].key);
		free(d->facts[i].value);
	}
	free(d->facts);
	for (i = 0; i < d->nfields; i++) {
		free(d->fields[i].name);
		free(d->fields[i].json);
	}
	free(d->fields);
	for (i = 0; i < d->nnotes; i++)
		free(d->notes[i]);
	free(d->notes);
	for (i = 0; i < d->nsecs; i++) {
		struct section *s = &d->secs[i];
		for (j = 0; j < s->ntabs; j++) {
			struct tab *t = &s->tabs[j];
			for (k = 0; k < t->nrows * t->ncols; k++) {
				free(t->cells[k].text);
				free(t->cells[k].full);
			}
			free(t->cells);
			free(t->stage);
			free(t->headline);
			free(t->total);
			free(t->more);
			free(t->empty);
		}
		free(s->tabs);
		free(s->intro);
	}
	free(d->secs);
	for (i = 0; i < d->ncharts; i++) {
		free(d->charts[i].stage);
		free(d->charts[i].spec);
	}
	free(d->charts);
	free(d->health);
	free(d->title);
	free(d->model);
	free(d->framework);
	memset(d, 0, sizeof *d);
}

size_t
doc_table_ids(const struct doc *d, const char **ids, size_t max)
{
	size_t i, j, k, n = 0;

	for (i = 0; i < d->nsecs; i++)
		for (j = 0; j < d->secs[i].ntabs; j++) {
			const char *id = d->secs[i].tabs[j].id;
			for (k = 0; k < n && strcmp(ids[k], id) != 0; k++)
				;
			if (k == n && n < max)
				ids[n++] = id;
		}
	return n;
}
