/*
 * The report document of one run: header facts and notes, then the
 * sections (GPU time, kernels, overlap, fuse, ...) as tables per stage,
 * built from the run's records.  The writers only lay it out.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gpuspec.h"
#include "num.h"
#include "render.h"
#include "rules.h"
#include "text.h"
#include "xalloc.h"

void
fmt_ms(sbuf *out, double us)
{
	char buf[64];

	snprintf(buf, sizeof buf, "%.2f", us / 1000.0);
	/* "0.00 ms" would say a kernel of 4 us took no time */
	if (us != 0 && (strcmp(buf, "0.00") == 0 || strcmp(buf, "-0.00") == 0))
		sb_adds(out, us < 0 ? "-<0.01 ms" : "<0.01 ms");
	else
		sb_printf(out, "%s ms", buf);
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
		/* "-" is the standard input (trace-extract's operand) */
		sb_printf(out, "%s%s", k ? ", " : "",
		    strcmp(sb_str(&s), "-") ? sb_str(&s) : "standard input");
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

/*
 * The Model fact of an input record: "Qwen/Qwen3-8B (from server_args.json;
 * model family qwen3, from the trace's Python frames)", or without a named
 * model "qwen3_moe, from the trace's Python frames (24 Python frames of
 * sglang/srt/models/qwen3_moe.py)".
 */
static void
model_fact(const struct item *in, struct doc *d)
{
	sbuf m = SBUF_INIT, fam = SBUF_INIT, src = SBUF_INIT, ev = SBUF_INIT, out = SBUF_INIT;
	const char *model = item_str(in, "model", &m, NULL), *family = item_str(in, "model_family",
	    &fam, NULL), *source = item_str(in, "model_source", &src, ""), *evidence =
	    item_str(in, "model_evidence", &ev, NULL);
	const char *from_frames = strcmp(source, "ops") == 0 ? "the trace's CPU op names" :
	    "the trace's Python frames";

	if (model) {
		sb_adds(&out, model);
		if (strcmp(source, "option") == 0)
			sb_adds(&out, " (from --model");
		else if (strcmp(source, "server_args") == 0)
			sb_adds(&out, " (from server_args.json");
		else
			sb_adds(&out, " (");
		if (family)
			sb_printf(&out, "%smodel family %s, from the trace's frames",
			    out.s[out.len - 1] == '(' ? "" : "; ", family);
		sb_adds(&out, ")");
		if (out.len >= 3 && strcmp(out.s + out.len - 3, " ()") == 0)
			out.len -= 3, out.s[out.len] = '\0';
	} else if (family) {
		sb_printf(&out, "%s, from %s", family, from_frames);
		if (evidence)
			sb_printf(&out, " (%s)", evidence);
	}
	add_fact(d, "Model", sb_str(&out));
	sb_free(&m);
	sb_free(&fam);
	sb_free(&src);
	sb_free(&ev);
	sb_free(&out);
}

size_t
ranks_seen(const struct run *run, long long *seen, size_t max, int *more)
{
	size_t i, j, n = 0;

	*more = 0;
	for (i = 0; i < run->n; i++) {
		long long r;
		if (run->it[i].type != RT_rank_row)
			continue;
		r = item_int(&run->it[i], "rank", -1);
		for (j = 0; j < n && seen[j] != r; j++)
			;
		if (j < n)
			continue;
		if (n < max)
			seen[n++] = r;
		else
			(*more)++;	/* beyond max the count is a bound: ranks repeat per stage */
	}
	return n;
}

/* The ranks rank-skew compared, distinct (a bound past 64); 0 without them. */
static size_t
ranks_compared(const struct run *run)
{
	long long seen[64];
	int more;
	size_t n = ranks_seen(run, seen, sizeof seen / sizeof seen[0], &more);

	return n + (size_t)more;
}

/*
 * A device record as the header says it (issue 25 follow-up): its name,
 * or, when deviceProperties leave it empty or generic (ROCm 6.2 and 7 write
 * "" or "AMD Radeon Graphics"), the part of the GPU table
 * (common/gpuspec.h) its compute units, memory and version fit, said to be
 * matched so; an AMD GPU's gfx target (from the table's part, or the one
 * all fitting parts share; else its family, gfx94… for HIP's 9.4), never
 * a CUDA compute capability; compute units for AMD, SMs for NVIDIA.
 */
static void
gpu_fact(const struct item *dev, sbuf *name, sbuf *v)
{
	const struct gputab *tab = gputab_builtin();
	long long maj = item_int(dev, "compute_major", -1), min = item_int(dev, "compute_minor", 0);
	long long sms = item_int(dev, "num_sms", -1), warp = item_int(dev, "warp_size", -1);
	double mem = item_num(dev, "total_global_mem", -1);
	const char *nm = item_str(dev, "name", name, ""), *why, *gfx = NULL;
	const struct gpu *g, *fit[4];
	size_t nfit, i;
	char buf[512];
	int amd = warp == 64 || strstr(nm, "AMD") != NULL;
	const char *units = amd ? "CUs" : "SMs";

	g = gpu_match(tab, nm, sms, maj >= 0 ? (int)maj : -1, (int)min,
	    mem > 0 ? (long long)mem : -1, &why, buf, sizeof buf);
	nfit = gpu_generic_fits(tab, sms, maj >= 0 ? (int)maj : -1, (int)min,
	    mem > 0 ? (long long)mem : -1, fit, 4);
	if (gpu_name_generic(nm) && g) {
		sb_adds(v, g->name);
		sb_printf(v, " (matched by its %lld %s, %.0f GiB and GFX version %lld.%lld: the "
		    "trace names %s", sms, units, mem / (1024.0 * 1024 * 1024), maj, min,
		    *nm ? "it only " : "no GPU");
		if (*nm) {
			sb_addc(v, '\'');
			sb_adds(v, nm);
			sb_addc(v, '\'');
		}
		sb_addc(v, ')');
	} else {
		sb_adds(v, *nm ? nm : "unnamed GPU");
		if (gpu_name_generic(nm) && nfit > 1) {
			sb_printf(v, " (%s: its %lld %s, %.0f GiB and GFX version %lld.%lld fit ",
			    *nm ? "a generic name" : "the trace names none", sms, units,
			    mem / (1024.0 * 1024 * 1024), maj, min);
			for (i = 0; i < nfit && i < 4; i++)
				sb_printf(v, "%s%s", i == 0 ? "" : i + 1 == nfit ? " and " : ", ",
				    fit[i]->name);
			sb_adds(v, nfit > 4 ? ", ...)" : ")");
		}
	}
	if (amd) {
		/* the part's target, else the one all parts the figures fit share */
		gfx = g ? g->gfx : NULL;
		if (!g && nfit > 0 && nfit <= 4) {
			gfx = fit[0]->gfx;
			for (i = 1; gfx && i < nfit; i++)
				if (!fit[i]->gfx || strcmp(fit[i]->gfx, gfx) != 0)
					gfx = NULL;
		}
		if (gfx)
			sb_printf(v, ", %s", gfx);
		else if (maj >= 0)
			sb_printf(v, ", a gfx%lld%lld… target (HIP version %lld.%lld)", maj, min, maj,
			    min);
	} else if (maj >= 0) {
		sb_printf(v, ", compute capability %lld.%lld", maj, min);
	}
	if (sms > 0)
		sb_printf(v, ", %lld %s", sms, units);
	if (mem > 0)
		sb_printf(v, ", %.0f GiB", mem / (1024.0 * 1024 * 1024));
}

/*
 * The analyzed trace's identity (issue 25): "Rank: 0 of 8" from the trace
 * record, and the GPU from the device record of the analyzed process
 * (gpu_pids.selected: Kineto's GPU pid is the device index), with how many
 * the node has.
 */
static void
identity(const struct run *run, const struct item *trace, struct doc *d)
{
	sbuf b = SBUF_INIT, v = SBUF_INIT, name = SBUF_INIT;
	long long t = item_int(trace, "t", 0), rank = item_int(trace, "rank", -1);
	long long world = item_int(trace, "world_size", -1), sel = -1, ndev = 0;
	const struct item *dev = NULL, *first = NULL;
	size_t i;

	if (rank >= 0) {
		const char *src = item_str(trace, "rank_source", &b, "");
		sb_printf(&v, "%lld", rank);
		if (world > 0)
			sb_printf(&v, " of %lld", world);
		if (!strcmp(src, "trace"))
			sb_adds(&v, " (the trace's distributedInfo)");
		else if (!strcmp(src, "name"))
			sb_adds(&v, " (the trace's file name)");
		add_fact(d, "Rank", v.s);
	} else if (world > 0) {
		sb_printf(&v, "%lld", world);
		add_fact(d, "World size", v.s);
	}
	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		if (it->type == RT_gpu_pids && item_int(it, "t", -1) == t) {
			char *end;
			const char *p = item_str(it, "selected", &b, "");
			sel = strtoll(p, &end, 10);
			if (!*p || *end)
				sel = -1;
		}
	}
	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		if (it->type != RT_device || item_int(it, "t", -1) != t)
			continue;
		ndev++;
		if (!first)
			first = it;
		if (sel >= 0 && item_int(it, "id", -2) == sel)
			dev = it;
	}
	if (!dev)
		dev = first;
	if (dev) {
		sb_reset(&v);
		gpu_fact(dev, &name, &v);
		if (ndev > 1)
			sb_printf(&v, " (the node lists %lld GPUs)", ndev);
		add_fact(d, "GPU", v.s);
	}
	sb_free(&b);
	sb_free(&v);
	sb_free(&name);
}

/*
 * A single profile's traces are one run's (a directory's prefill/ and
 * decode/ traces): when their device records name different GPUs, they are
 * not, and their stages' figures add up other runs.  Said in a note and on
 * stderr.
 */
static void
mixed_gpus(const struct run *run, struct doc *d)
{
	sbuf names = SBUF_INIT, b = SBUF_INIT, t = SBUF_INIT;
	long long lastt = LLONG_MIN;
	size_t i, ntr = 0, nnames = 0;

	for (i = 0; i < run->n; i++)
		if (run->it[i].type == RT_trace)
			ntr++;
	for (i = 0; i < run->n && ntr > 1; i++) {
		const struct item *it = &run->it[i];
		const char *nm, *p;
		size_t k;
		int seen = 0;
		/* a trace's first device record names its GPU */
		if (it->type != RT_device || item_int(it, "t", -1) == lastt)
			continue;
		lastt = item_int(it, "t", -1);
		nm = item_str(it, "name", &b, "");
		if (!*nm)
			continue;
		for (p = names.s, k = 0; p && k < nnames; k++, p += strlen(p) + 1)
			seen |= strcmp(p, nm) == 0;
		if (!seen) {
			sb_add(&names, nm, strlen(nm) + 1);
			nnames++;
		}
	}
	if (nnames > 1) {
		const char *p = names.s;
		sb_printf(&t, "The %zu traces analyzed together ran on different GPUs (", ntr);
		for (i = 0; i < nnames; i++, p += strlen(p) + 1)
			sb_printf(&t, "%s%s", i ? ", " : "", p);
		sb_adds(&t, "): they are not one run's traces (a profile directory's prefill/ and "
		    "decode/ traces), and a stage's figures add up different runs; name one trace "
		    "file, or a directory of one run's traces.");
		add_note(d, t.s);
		warn_msg("%s", t.s);
	}
	sb_free(&names);
	sb_free(&b);
	sb_free(&t);
}

/* An input record's first GPU as the note says it (heap), or NULL when it names none. */
static char *
input_gpu(const struct item *in)
{
	sbuf b = SBUF_INIT;
	long long sms = item_int(in, "gpu_sms", -1), mem = item_int(in, "gpu_mem", -1);
	const char *nm;

	if (item_get(in, "gpu") < 0)
		return NULL;
	nm = item_str(in, "gpu", &b, "");
	if (*nm) {
		char *r = xstrdup(nm);
		sb_free(&b);
		return r;
	}
	sb_free(&b);
	if (sms < 0 || mem < 0)
		return NULL;
	return printf_dup("an unnamed GPU (%lld SMs/CUs, %.0f GiB)", sms,
	    (double)mem / (1024.0 * 1024 * 1024));
}

/*
 * A mapping trace gives the formal trace its Python sites and input
 * shapes, which are a deployment's: when the two input records say their
 * first traces ran on other GPUs or other world sizes, under other
 * frameworks or of other model families, the report says so (and stderr).
 * Returns 1 then.
 */
static int
deployment_note(const struct item *m, const struct item *f, struct doc *d)
{
	char *gm = input_gpu(m), *gf = input_gpu(f);
	long long wm = item_int(m, "world_size", -1), wf = item_int(f, "world_size", -1);
	long long sm = item_int(m, "gpu_sms", -1), sf = item_int(f, "gpu_sms", -1);
	long long mm = item_int(m, "gpu_mem", -1), mf = item_int(f, "gpu_mem", -1);
	sbuf t = SBUF_INIT;
	sbuf nm = SBUF_INIT, nf = SBUF_INIT;
	/* two names are compared; a name left empty (ROCm 7), by the figures alone */
	int named = *item_str(m, "gpu", &nm, "") && *item_str(f, "gpu", &nf, "");
	int gpu_differs = gm && gf && (named ? strcmp(nm.s, nf.s) != 0 :
	    (sm >= 0 && sf >= 0 && sm != sf) || (mm >= 0 && mf >= 0 && mm != mf));
	int world_differs = wm >= 0 && wf >= 0 && wm != wf;
	sbuf fm = SBUF_INIT, ff = SBUF_INIT, am = SBUF_INIT, af = SBUF_INIT;
	const char *xm = item_str(m, "framework", &fm, "none"), *xf = item_str(f, "framework", &ff,
	    "none");
	const char *ym = item_str(m, "model_family", &am, NULL), *yf = item_str(f, "model_family",
	    &af, NULL);
	int fw_differs = strcmp(xm, xf) != 0, fam_differs = ym && yf && strcmp(ym, yf) != 0;
	int differs = gpu_differs || world_differs || fw_differs || fam_differs;

	if (differs) {
		sb_adds(&t, "The mapping and formal traces come from different deployments (");
		if (gpu_differs)
			sb_printf(&t, "%s vs %s; ", gm, gf);
		if (world_differs)
			sb_printf(&t, "world size %lld vs %lld; ", wm, wf);
		if (fw_differs)
			sb_printf(&t, "%s vs %s; ", framework_display(xm), framework_display(xf));
		if (fam_differs)
			sb_printf(&t, "model family %s vs %s; ", ym, yf);
		t.len -= 2;	/* the last "; " */
		t.s[t.len] = '\0';
		sb_adds(&t, "): the Python sites and input shapes the mapping gives are another "
		    "run's.");
		add_note(d, t.s);
		warn_msg("%s", t.s);
	}
	sb_free(&t);
	sb_free(&nm);
	sb_free(&nf);
	sb_free(&fm);
	sb_free(&ff);
	sb_free(&am);
	sb_free(&af);
	free(gm);
	free(gf);
	return differs;
}

static void
header(const struct run *run, struct doc *d)
{
	const struct item *m = find_input(run, "mapping"), *f = find_input(run, "formal");
	const struct item *s = find_input(run, "single"), *main = f ? f : s ? s : m;
	sbuf b = SBUF_INIT, v = SBUF_INIT, src = SBUF_INIT, ev = SBUF_INIT;
	const char *fw = "none", *title;
	size_t i;
	int apart = 0;		/* the mapping is another deployment's */

	/* the JSON document's facts are the figures; the labels' phrases are md and HTML's */
	{
		size_t nr = ranks_compared(run);
		if (m || f) {
			if (m && f)	/* (--compat reference renders elsewhere: compat.c) */
				apart = deployment_note(m, f, d);
			add_field_str(d, "mode", "mapping_formal");
			add_fact(d, "Mode", "mapping/formal (a graph-off mapping trace gives the Python "
			    "sites, a graph-on formal trace the schedule)");
		} else if (nr) {
			/* the job's size, when the traces say it and it differs */
			const struct item *tr = find_item(run, RT_trace, "role", "single", "single");
			long long w = tr ? item_int(tr, "world_size", -1) : -1;
			char *t = w > (long long)nr ? printf_dup("all ranks (%zu of %lld)", nr, w) :
			    printf_dup("all ranks (%zu)", nr);
			add_field_str(d, "mode", "all_ranks");
			add_fact(d, "Mode", t);
			free(t);
		} else {
			/* a profile directory of several traces (prefill/ and decode/): said so */
			const struct item *in = find_input(run, "single");
			int ti = in ? item_get(in, "traces") : -1;
			int nt = ti >= 0 && in->doc.tok[ti].type == JSMN_ARRAY ? in->doc.tok[ti].size : 1;
			char *t = nt > 1 ? printf_dup("single profile, %d traces analyzed together", nt) :
			    xstrdup("single trace");
			add_field_str(d, "mode", "single");
			add_fact(d, "Mode", t);
			free(t);
		}
	}
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
	/*
	 * The model: the formal input's first, then the mapping's (§1 step 4);
	 * where it came from; without a named model, the model family the
	 * trace's frames show (issue 26); a mapping of another deployment
	 * names the formal trace's model no more than its GPU.
	 */
	title = NULL;
	for (i = 0; i < 3 && !title; i++) {
		const struct item *in = i == 0 ? f : i == 1 && !apart ? m : i == 2 ? s : NULL;
		if (in && ((title = item_str(in, "model", &b, NULL)) != NULL ||
		    item_str(in, "model_family", &b, NULL) != NULL)) {
			model_fact(in, d);
			/* a named model titles the report and groups bundles; a family does not */
			if (title) {
				d->model = xstrdup(title);
			} else {
				d->family = xstrdup(item_str(in, "model_family", &b, ""));
				title = "";
			}
		}
	}
	if (!d->model)
		add_field(d, "model", "null");
	if (d->family)	/* what the markdown's Model line says, for machines too */
		add_field_str(d, "model_family", d->family);
	if (s) {
		size_t nr = ranks_compared(run);
		sb_reset(&v);
		input_traces(s, &v);
		traces_field(d, "traces", s);
		if (nr > 1) {
			/* --all-ranks: every rank's trace was read, the tables are one rank's */
			char *t = printf_dup("%zu ranks' traces of %s; the tables are from %s", nr,
			    item_str(s, "path", &b, "?"), sb_str(&v));
			add_fact(d, "Traces", t);
			free(t);
		} else
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
	{
		/* the analyzed trace: the formal one of a pair, else the first */
		const struct item *tr = find_item(run, RT_trace, "role", f ? "formal" : s ? "single" :
		    "mapping", "single");
		if (tr)
			identity(run, tr, d);
	}
	if (s && !m && !f)
		mixed_gpus(run, d);
	sb_reset(&v);
	if (d->model) {
		const char *slash = strrchr(d->model, '/');
		sb_adds(&v, slash && slash[1] ? slash + 1 : d->model);
	} else if (main) {
		const char *p = item_str(main, "path", &b, "");
		const char *slash = strrchr(p, '/');
		sb_adds(&v, strcmp(p, "-") == 0 ? "standard input" : slash && slash[1] ? slash + 1 : p);
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

/*
 * The kernel table's columns.  Keys are kernel_row's member names
 * (triage-records(5); issue 31), the launch delays' are step-stats'
 * kernel_delay (issue 32) and the efficiency's kernel_eff's (issue 28):
 * each set is there only when its records are.  The duration statistics
 * are always there; markdown shows them with --stats (col_shown).
 */
#define KCOLS_HEAD \
	{ "kernel", "Kernel", 0 }, { "category", "Category", 0 }, \
	{ "total_us", "GPU time", 1 }, { "share_pct", "Share", 1 }, \
	{ "launches", "Launches", 1 }
#define KCOLS_DELAY \
	{ "launch_delay_p50_us", "Launch delay p50", 1 }, \
	{ "launch_delay_max_us", "Launch delay max", 1 }
#define KCOLS_STATS \
	{ "mean_us", "Mean", 1 }, { "min_us", "Min", 1 }, { "max_us", "Max", 1 }, \
	{ "p50_us", "p50", 1 }, { "p90_us", "p90", 1 }
#define KCOLS_SITES \
	{ "location", "Python location (site share)", 0 }, { "cpu_op", "CPU op", 0 }
#define KCOLS_ROOF \
	{ "tflops", "TFLOP/s", 1 }, { "gbps", "GB/s", 1 }, { "pct_of_roof", "% of roof", 1 }, \
	{ "bound", "Bound", 0 }
static const struct col kernel_cols[] = { KCOLS_HEAD, KCOLS_STATS, KCOLS_SITES };
static const struct col kernel_cols_d[] = { KCOLS_HEAD, KCOLS_DELAY, KCOLS_STATS, KCOLS_SITES };
static const struct col kernel_cols_r[] = { KCOLS_HEAD, KCOLS_STATS, KCOLS_SITES, KCOLS_ROOF };
static const struct col kernel_cols_dr[] = { KCOLS_HEAD, KCOLS_DELAY, KCOLS_STATS, KCOLS_SITES,
	KCOLS_ROOF };
#define NCOLS(a) (sizeof(a) / sizeof(a)[0])

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
		xqsort(v, n, sizeof *v, cmp_catsum);
	*out = v;
	return n;
}

/*
 * The stage's headline, each share with its base named (issue 25): "decode:
 * 9.81 ms of kernel time (9.52 ms GPU busy, overlaps once) in 412 kernels
 * over 5 steps; of the kernel time: gemm 61%, attention 22%; GPU idle 4% of
 * the span; 97% of the busy time in CUDA graphs."
 */
static char *
headline(const struct run *run, const char *stage)
{
	struct catsum *cs;
	size_t ncs, i, shown = 0;
	double total;
	sbuf b = SBUF_INIT, cats = SBUF_INIT;
	size_t j;
	const struct item *g = NULL;

	ncs = category_sums(run, stage, &cs, &total);
	for (i = 0; i < ncs && shown < 3; i++)
		if (pct(cs[i].us, total) >= 5.0)
			sb_printf(&cats, "%s %s %.0f%%", shown++ ? "," : "", cs[i].cat,
			    pct(cs[i].us, total));
	/*
	 * step-stats' figures for the stage, when they are in the stream: of
	 * each trace with the stage, summed (a profile directory's traces of one
	 * stage, whose kernel time the categories sum too), the shares weighted
	 */
	long long k = -1, steps = -1, c = 0;
	double span = -1, idle = -1, gp = -1, busy = -1, comm = 0, commov = 0, other = 0;
	double gpw = 0;
	size_t ng = 0;

	for (j = 0; j < run->n; j++) {
		sbuf s = SBUF_INIT;
		const struct item *x = &run->it[j];
		if (item_is(x, "gpu_time") && item_in_stage(x, stage, &s)) {
			double xb = item_num(x, "busy_us", -1);
			g = x;
			if (ng++ == 0) {
				k = item_int(x, "kernels", -1), steps = item_int(x, "steps", -1);
				span = item_num(x, "span_us", -1), idle = item_num(x, "idle_us", -1);
				gp = item_num(x, "graph_pct", -1), busy = xb;
			} else {
				k = k >= 0 ? k + item_int(x, "kernels", 0) : -1;
				steps = steps >= 0 ? steps + item_int(x, "steps", 0) : -1;
				span = span >= 0 ? span + item_num(x, "span_us", 0) : -1;
				idle = idle >= 0 ? idle + item_num(x, "idle_us", 0) : -1;
				busy = busy >= 0 ? busy + item_num(x, "busy_us", 0) : -1;
			}
			if (item_get(x, "graph_pct") >= 0 && xb > 0)
				gpw += item_num(x, "graph_pct", 0) * xb;
			c += item_int(x, "copies", 0);
			comm += item_num(x, "comm_total_us", 0);
			commov += item_num(x, "comm_overlap_pct", 0) * item_num(x, "comm_total_us", 0);
			other += item_num(x, "other_stages_us", 0);
		}
		sb_free(&s);
	}
	if (ng > 1 && gp >= 0)
		gp = busy > 0 ? gpw / busy : 0;
	sb_printf(&b, "%s: ", stage_label(stage));
	fmt_ms(&b, total);
	sb_adds(&b, " of kernel time");
	if (ng > 1)
		sb_printf(&b, " over %zu traces", ng);
	if (g) {
		/* the union differs from the sum when items overlap */
		if (busy >= 0 && fabs(busy - total) > 0.005 * (total > 0 ? total : 1)) {
			sb_adds(&b, " (");
			fmt_ms(&b, busy);
			sb_adds(&b, " GPU busy: overlapping items counted once)");
		}
		if (k >= 0) {	/* the count of kernels, copies and sets (issue 25) */
			if (c > 0)
				sb_printf(&b, " in %lld GPU item%s (%lld kernel%s, %lld %s)", k,
				    k == 1 ? "" : "s", k - c, k - c == 1 ? "" : "s", c,
				    c == 1 ? "copy or set" : "copies and sets");
			else
				sb_printf(&b, " in %lld kernel%s", k, k == 1 ? "" : "s");
		}
		if (steps > 0)
			sb_printf(&b, " over %lld step%s", steps, steps == 1 ? "" : "s");
		if (shown)
			sb_printf(&b, "; of the kernel time:%s", cats.s);
		if (comm > 0) {	/* issue 32 */
			sb_adds(&b, "; collectives ");
			fmt_ms(&b, comm);
			sb_printf(&b, ", %.0f%% of it under compute", ng > 1 ? commov / comm :
			    item_num(g, "comm_overlap_pct", 0));
		}
		if (span > 0 && idle >= 0)
			sb_printf(&b, "; GPU idle %.0f%% of the span", pct(idle, span));
		/* interleaved stages (issue 25): the span's time that is neither */
		if (span > 0 && other > 0)
			sb_printf(&b, ", only other stages' work %.0f%% of it", pct(other, span));
		if (gp >= 0)
			sb_printf(&b, "; %.0f%% of the busy time in CUDA graphs", gp);
	} else if (shown)
		sb_printf(&b, "; of the kernel time:%s", cats.s);
	sb_addc(&b, '.');
	for (i = 0; i < ncs; i++)
		free(cs[i].cat);
	free(cs);
	sb_free(&cats);
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
 * A cell of Python sites (kernel, overlap, fuse and graph-escape tables):
 * one site a line, each in the one spelling of text_site_display, so the
 * same site reads the same in every table and format.
 */
static void
cell_sites(struct cell *c, const char *joined)
{
	sbuf b = SBUF_INIT, one = SBUF_INIT;
	const char *p = joined, *q;

	for (;;) {
		q = strstr(p, "<br>");
		text_site_display(p, q ? (size_t)(q - p) : strlen(p), &one);
		sb_add(&b, sb_str(&one), one.len);
		if (!q)
			break;
		sb_addc(&b, '\n');
		p = q + 4;
	}
	c->text = b.s ? sb_detach(&b) : xstrdup("");
	sb_free(&one);
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
	c->text = printf_dup("%.1f us", us);
	c->num = us;
	c->has_num = 1;
}

static void
kernel_section(const struct run *run, struct doc *d)
{
	struct section *sec = add_section(d, "kernels", "Kernels");
	char **stages;
	size_t ns = stages_of(run, RT_kernel_row, &stages), si, i;
	int delays = has_type(run, RT_kernel_delay), roof = roofline_present(run);
	const struct col *cols = delays ? (roof ? kernel_cols_dr : kernel_cols_d) :
	    roof ? kernel_cols_r : kernel_cols;
	size_t ncols = delays ? (roof ? NCOLS(kernel_cols_dr) : NCOLS(kernel_cols_d)) :
	    roof ? NCOLS(kernel_cols_r) : NCOLS(kernel_cols);
	sbuf b = SBUF_INIT;

	sec->intro = xstrdup("Kernels at or above 1.0% of their stage's GPU time, heaviest "
	    "first, with the Python code and CPU op that launched them. Shares are of the stage "
	    "total (the sum of its kernel durations).");
	for (si = 0; si < ns; si++) {
		struct tab *t = add_tab(sec, "kernel", stages[si], cols, ncols);
		const char **names = NULL;
		char **shorts;
		size_t nn = 0, capn = 0, hidden = 0, r = 0;
		double hidden_us = 0, hidden_pct, total = 0;
		long long launches = 0, kinds = 0, lastt = LLONG_MIN;
		size_t ntr = 0;

		for (i = 0; i < run->n; i++) {
			const struct item *it = &run->it[i];
			if (it->type != RT_kernel_row || !item_in_stage(it, stages[si], &b))
				continue;
			kinds++;
			launches += item_int(it, "launches", 0);
			/*
			 * Rows of one stage from several traces are not merged (kernel-table.md
			 * §5.9): each has its own trace's stage total, counted once here.
			 */
			if (ntr == 0 || item_int(it, "t", 0) != lastt) {
				lastt = item_int(it, "t", 0);
				total += item_num(it, "stage_total_us", 0);
				ntr++;
			}
			if (!item_bool(it, "shown")) {
				hidden++;
				hidden_us += item_num(it, "total_us", 0);
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
			row_id(t, it);
			c[0].text = shorts[r];
			if (strcmp(shorts[r], names[r]) != 0)
				c[0].full = xstrdup(names[r]);
			r++;
			cell_text(&c[1], item_str(it, "category", &b, "other"));
			cell_ms(&c[2], item_num(it, "total_us", 0));
			cell_pct(&c[3], item_num(it, "share_pct", 0));
			cell_int(&c[4], item_int(it, "launches", 0));
			if (delays)
				delay_cells(run, it, &c[tab_col(t, "launch_delay_p50_us")],
				    &c[tab_col(t, "launch_delay_max_us")]);
			cell_stat(&c[tab_col(t, "mean_us")], it, "mean_us");
			cell_stat(&c[tab_col(t, "min_us")], it, "min_us");
			cell_stat(&c[tab_col(t, "max_us")], it, "max_us");
			cell_stat(&c[tab_col(t, "p50_us")], it, "p50_us");
			cell_stat(&c[tab_col(t, "p90_us")], it, "p90_us");
			cell_sites(&c[tab_col(t, "location")], item_str(it, "location", &b, "unresolved"));
			cell_list(&c[tab_col(t, "cpu_op")], item_str(it, "cpu_op", &b, "-"));
			if (roof)
				roofline_cells(run, stages[si], item_str(it, "kernel", &b, ""),
				    &c[tab_col(t, "tflops")]);
		}
		for (i = 0; i < nn; i++)
			free((char *)names[i]);
		free(names);
		free(shorts);
		if (!has_type(run, RT_gpu_time))
			t->headline = headline(run, stages[si]);
		sb_reset(&b);
		sb_adds(&b, "Stage kernel time (the sum of kernel durations, the base of Share) ");
		fmt_ms(&b, total);
		/* the headline's word: copies and sets are rows of this table too */
		sb_printf(&b, " in %lld GPU item%s of %lld name%s", launches,
		    launches == 1 ? "" : "s", kinds, kinds == 1 ? "" : "s");
		if (ntr > 1)
			sb_printf(&b, " over %zu traces, whose rows are not merged: each row's Share is "
			    "of its own trace's part of the stage", ntr);
		sb_addc(&b, '.');
		t->total = sb_detach(&b);
		hidden_pct = pct(hidden_us, total);
		if (hidden)
			t->more = printf_dup("%zu more kernel name%s below the 1.0%% bar or the row "
			    "limit: %.1f%% of the stage's GPU time.", hidden, hidden == 1 ? "" : "s",
			    hidden_pct);
		t->empty = xstrdup("No kernel reaches 1.0% of the stage's GPU time.");
	}
	if (ns == 0) {
		struct tab *t = add_tab(sec, "kernel", NULL, cols, ncols);
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
			row_id(t, it);
			cell_text(&c[0], item_str(it, "priority", &b, ""));
			cell_text(&c[1], item_str(it, "verdict", &b, ""));
			c[2].text = shorts[r];
			if (strcmp(shorts[r], names[r]) != 0)
				c[2].full = xstrdup(names[r]);
			r++;
			cell_sites(&c[3], item_str(it, "python_scope", &b, "unmapped"));
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
 * The kernel names of a fuse table's evidence cells, each once, with the
 * short names they get: unique across the table (kname_short_all), so two
 * different kernels of one cell or row never read alike.
 */
struct evnames {
	char **name, **shorts;
	size_t n, cap;
};

/* The name of an evidence item "NAME (9.0%)", or 0 when it is none ("and 3 more (1.2%)", "-"). */
static int
evidence_item(const char *p, size_t n, size_t *len)
{
	const char *par;
	size_t k;

	if (n >= 4 && memcmp(p, "and ", 4) == 0)
		return 0;
	for (k = n; k > 0 && p[k - 1] != '('; k--)
		;
	if (k < 3 || p[n - 1] != ')' || p[k - 2] != ' ')
		return 0;
	par = p + k - 1;
	*len = (size_t)(par - 1 - p);
	return *len > 0;
}

static void
evnames_add(struct evnames *e, const char *joined)
{
	const char *p = joined, *q;
	size_t len, i;

	for (;;) {
		q = strstr(p, "<br>");
		if (evidence_item(p, q ? (size_t)(q - p) : strlen(p), &len)) {
			for (i = 0; i < e->n && !(strlen(e->name[i]) == len &&
			    memcmp(e->name[i], p, len) == 0); i++)
				;
			if (i == e->n) {
				xgrow(&e->name, &e->cap, e->n + 1, sizeof *e->name);
				e->name[e->n++] = xstrndup(p, len);
			}
		}
		if (!q)
			break;
		p = q + 4;
	}
}

static void
evnames_free(struct evnames *e)
{
	size_t i;

	for (i = 0; i < e->n; i++) {
		free(e->name[i]);
		if (e->shorts)
			free(e->shorts[i]);
	}
	free(e->name);
	free(e->shorts);
	memset(e, 0, sizeof *e);
}

/*
 * An evidence cell ("name (9.0%)<br>name (6.0%)"): one kernel a line, each
 * name by its short name of the table; the whole text kept for hover and
 * machines.
 */
static void
cell_evidence(struct cell *c, const char *joined, const struct evnames *e)
{
	sbuf b = SBUF_INIT;
	const char *p = joined, *q;
	struct cell whole = { 0 };
	size_t n, len, i;

	for (;;) {
		q = strstr(p, "<br>");
		n = q ? (size_t)(q - p) : strlen(p);
		i = e->n;
		if (evidence_item(p, n, &len))
			for (i = 0; i < e->n && !(strlen(e->name[i]) == len &&
			    memcmp(e->name[i], p, len) == 0); i++)
				;
		if (i < e->n) {
			sb_adds(&b, e->shorts[i]);
			sb_add(&b, p + len, n - len);
		} else
			sb_add(&b, p, n);
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
		struct evnames ev = { 0 };
		for (i = 0; i < run->n; i++) {
			const struct item *it = &run->it[i];
			if (it->type != RT_fuse_row || !item_in_stage(it, stages[si], &b) ||
			    (strcmp(item_str(it, "status", &b, ""), "in use") == 0) != in_use)
				continue;
			evnames_add(&ev, item_str(it, "evidence", &b, "-"));
		}
		ev.shorts = xcalloc(ev.n + 1, sizeof *ev.shorts);
		short_names((const char *const *)ev.name, ev.n, ev.shorts);
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
			row_id(t, it);
			nrows++;
			cell_text(&c[0], item_str(it, "pattern", &b, ""));
			if (in_use) {
				cell_ms(&c[1], item_num(it, "related_us", 0));
				cell_pct(&c[2], item_num(it, "share_pct", 0));
				cell_evidence(&c[3], item_str(it, "evidence", &b, "-"), &ev);
				cell_sites(&c[4], item_str(it, "current_locations", &b, "-"));
				continue;
			}
			cell_text(&c[1], item_str(it, "confidence", &b, ""));
			cell_ms(&c[2], item_num(it, "related_us", 0));
			cell_pct(&c[3], item_num(it, "share_pct", 0));
			cell_evidence(&c[4], item_str(it, "evidence", &b, "-"), &ev);
			cell_sites(&c[5], item_str(it, "current_locations", &b, "-"));
			cell_list(&c[6], item_str(it, "candidate_path", &b, ""));
			cell_text(&c[7], item_str(it, "rationale", &b, ""));
		}
		evnames_free(&ev);
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

/*
 * Issue 25: every column names its base.  The busy time is split each
 * instant once (compute, then communication not under compute, then
 * memory under neither); the step figures are of the steps' periods.
 */
static const struct col gpu_cols[] = {
	/*
	 * gpu_time's kernels counts every GPU item; the machine formats name it
	 * items and count the kernels and the copies and sets apart, beside
	 * the kernel time (col_shown: markdown's headline says them)
	 */
	{ "items", "GPU items", 1 },
	{ "kernels", "Kernels", 1 },
	{ "copies", "Copies and sets", 1 },
	{ "kernel_us", "Kernel time", 1 },
	{ "busy_us", "GPU busy", 1 },
	{ "idle_us", "GPU idle", 1 },
	{ "idle_launch_us", "Idle waiting for the host", 1 },
	{ "idle_sync_us", "Idle waiting on a synchronization", 1 },
	/* busy + idle + this is the span; shown where it is not 0 (col_shown) */
	{ "other_stages_us", "Only other stages busy", 1 },
	{ "span_us", "Span", 1 },
	{ "compute_us", "Busy: compute", 1 },
	{ "comm_us", "Busy: communication, no compute", 1 },
	{ "memcpy_us", "Busy: memory only", 1 },
	{ "comm_total_us", "Communication total", 1 },
	{ "comm_overlap_pct", "Communication under compute", 1 },
	{ "graph_pct", "Busy in CUDA graphs", 1 },
	{ "steps", "Steps", 1 },
	{ "step_p50_us", "Step period p50", 1 },
	{ "step_p90_us", "Step period p90", 1 },
	{ "step_max_us", "Step period max", 1 },
	{ "step_last_us", "Last step period", 1 },
	{ "tokens_per_s", "Tokens/s", 1 },
	/* for machines: the caveat under the table says it to people (step_caveats) */
	{ "step_busy_p50_us", "Step GPU busy p50", 1 },
};

/* Append text to a cell's text (its number stays). */
static void
cell_suffix(struct cell *c, const char *text)
{
	char *s = printf_dup("%s%s", c->text ? c->text : "", text);

	free(c->text);
	c->text = s;
}

static const struct col step_cols[] = {
	{ "index", "Step", 1 },
	{ "name", "Marker", 0 },
	{ "batch", "Batch", 1 },
	{ "tokens", "Tokens", 1 },
	{ "period_us", "Period", 1 },
	{ "cpu_us", "CPU marker", 1 },
	{ "gpu_busy_us", "GPU busy", 1 },
	{ "gpu_span_us", "GPU span", 1 },
	{ "kernels", "GPU items", 1 },
	/* in a stage with collectives (issue 32) */
	{ "comm_total_us", "Communication total", 1 },
	/*
	 * over the step's own items (step-stats(1)): a collective hidden under
	 * the next step's kernels counts in the stage's figure, not here
	 */
	{ "comm_overlap_pct", "Communication under the step's compute", 1 },
};

static const struct col escape_cols[] = {
	{ "kernel", "Kernel", 0 },
	{ "launches", "Eager launches", 1 },
	{ "total_us", "GPU time", 1 },
	{ "share_pct", "Share", 1 },
	{ "location", "Python location", 0 },
};

/*
 * The kernel table's row limit in a stage, as kernel-map applied it
 * (--kernel-table-limit): when a row at or above the 1.0% bar is hidden,
 * the rows shown are the limit; else none bound (0).
 */
static size_t
kernel_row_limit(const struct run *run, const char *stage)
{
	size_t i, shown = 0;
	int cut = 0;
	sbuf b = SBUF_INIT;

	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		if (it->type != RT_kernel_row || !item_in_stage(it, stage, &b))
			continue;
		if (item_bool(it, "shown"))
			shown++;
		else if (item_num(it, "share_pct", 0) >= 1.0)
			cut = 1;
	}
	sb_free(&b);
	return cut ? shown : 0;
}

/*
 * The graph_escape rows of a stage, when step-stats wrote any, under the
 * kernel table's bar and row limit (the records keep every row): a
 * graph-mode trace mostly in eager mode has as many eager kernels as
 * kernels, most far below a percent.
 */
static void
escapes(const struct run *run, struct section *sec, const char *stage)
{
	struct tab *t;
	const char **names = NULL;
	char **shorts;
	size_t nn = 0, capn = 0, r = 0, i, limit = kernel_row_limit(run, stage), hidden = 0;
	double hidden_pct = 0;
	sbuf b = SBUF_INIT;

	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		if (it->type != RT_graph_escape || !item_in_stage(it, stage, &b))
			continue;
		if (item_num(it, "share_pct", 0) < 1.0 || (limit && nn >= limit)) {
			hidden++;
			hidden_pct += item_num(it, "share_pct", 0);
			continue;
		}
		xgrow(&names, &capn, nn + 1, sizeof *names);
		names[nn++] = xstrdup(item_str(it, "kernel", &b, ""));
	}
	if (nn == 0 && hidden == 0) {
		sb_free(&b);
		return;
	}
	t = add_tab(sec, "escape", stage, escape_cols, sizeof escape_cols / sizeof escape_cols[0]);
	shorts = xcalloc(nn ? nn : 1, sizeof *shorts);
	short_names(names, nn, shorts);
	for (i = 0; i < run->n && r < nn; i++) {
		const struct item *it = &run->it[i];
		struct cell *cl;
		if (it->type != RT_graph_escape || !item_in_stage(it, stage, &b) ||
		    item_num(it, "share_pct", 0) < 1.0)
			continue;
		cl = add_row(t);
		row_id(t, it);
		cl[0].text = shorts[r];
		if (strcmp(shorts[r], names[r]) != 0)
			cl[0].full = xstrdup(names[r]);
		r++;
		cell_member(&cl[1], it, "launches");
		cell_member(&cl[2], it, "total_us");
		cell_member(&cl[3], it, "share_pct");
		cell_sites(&cl[4], item_str(it, "location", &b, "-"));
	}
	for (i = 0; i < nn; i++)
		free((char *)names[i]);
	free(names);
	free(shorts);
	if (hidden)
		t->more = printf_dup("%zu more eager kernel name%s below the 1.0%% bar or the row "
		    "limit: %.1f%% of the stage's GPU time.", hidden, hidden == 1 ? "" : "s",
		    hidden_pct);
	t->empty = xstrdup("No eager kernel reaches 1.0% of the stage's GPU time.");
	t->total = xstrdup("Kernels launched outside CUDA graphs in this graph-mode stage, "
	    "largest first:");
	sb_free(&b);
}

/*
 * What the step periods, taken on the host's clock, do not say by
 * themselves: that the host queued steps ahead of the GPU (the complete
 * steps' GPU busy time, p50, longer than their period p50: the rate is the
 * host's submission, above the GPU's), or that a rate from the last step
 * alone comes from a period its GPU work spans little of (a blocked copy,
 * a stall).  NULL when neither.
 */
static char *
step_caveats(const struct run *run, const char *stage)
{
	sbuf b = SBUF_INIT, out = SBUF_INIT;
	double lastp = -1, lastspan = -1;
	size_t i;
	const struct item *g = NULL;

	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		if (!item_in_stage(it, stage, &b))
			continue;
		if (it->type == RT_gpu_time)
			g = it;
		if (it->type == RT_step && item_int(it, "kernels", 0) > 0 && item_bool(it, "last")) {
			lastp = item_num(it, "period_us", -1);
			lastspan = item_num(it, "gpu_span_us", -1);
		}
	}
	/* step-stats' steps_host_ahead: busy p50 more than 5 % over the period p50 */
	if (g && item_bool(g, "steps_host_ahead")) {
		sb_adds(&out, "The complete steps' GPU work (busy p50 ");
		fmt_ms(&out, item_num(g, "step_busy_p50_us", 0));
		sb_adds(&out, ") is longer than their period (p50 ");
		fmt_ms(&out, item_num(g, "step_p50_us", 0));
		sb_printf(&out, ", on the host's clock): the host queued steps ahead of the "
		    "GPU, so the periods%s are the host's rate of submitting them, faster than "
		    "the GPU ran them.", item_get(g, "tokens_per_s") >= 0 ?
		    " and tokens per second" : "");
	}
	if (g && item_bool(g, "tokens_from_last") && lastp > 0 && lastspan >= 0 &&
	    lastspan < 0.5 * lastp) {
		if (out.len)
			sb_addc(&out, ' ');
		sb_adds(&out, "Tokens per second are the last step's alone, and its GPU work spans ");
		fmt_ms(&out, lastspan);
		sb_adds(&out, " of its ");
		fmt_ms(&out, lastp);
		sb_printf(&out, " period (%.0f%%): the rest is time the GPU did not work for "
		    "this step (the idle and synchronization figures above say where), so the "
		    "rate says little of a steady state.", 100.0 * lastspan / lastp);
	}
	sb_free(&b);
	return out.len ? sb_detach(&out) : (sb_free(&out), NULL);
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
	sec->intro = xstrdup("How busy the GPU was per stage (the union of its kernels', "
	    "copies' and sets' intervals), how long it sat idle between them (no item of any "
	    "stage running) and how much of that was spent waiting for the host to submit "
	    "work, or with work queued while the host sat blocked in a synchronizing call; the "
	    "busy time split by kind, "
	    "each instant once (compute; then communication while no compute runs; then "
	    "memory while neither does), the collectives' total and how much of it ran under "
	    "compute, and its part run in CUDA graphs; the steps' periods (from one step's "
	    "start to the next's) and tokens per second; what the launch delays (from a "
	    "launch call's end to its work's start) say about who waited for whom, the "
	    "streams, and the GPU time inside the trace's GPU annotations.  The headline's "
	    "category shares are of the kernel time, the sum of the kernels' durations, as "
	    "in the kernel table (step-stats(1) defines each figure).");
	ns = stages_of(run, RT_gpu_time, &stages);
	for (si = 0; si < ns; si++) {
		struct tab *t = add_tab(sec, "gpu", stages[si], gpu_cols,
		    sizeof gpu_cols / sizeof gpu_cols[0]);
		struct tab *st;
		size_t nsc = sizeof step_cols / sizeof step_cols[0] - 2;
		for (i = 0; i < run->n; i++) {
			const struct item *it = &run->it[i];
			struct cell *cl;
			if (it->type != RT_gpu_time || !item_in_stage(it, stages[si], &b))
				continue;
			if (item_num(it, "comm_total_us", 0) > 0)
				nsc = sizeof step_cols / sizeof step_cols[0];	/* their collectives too */
			cl = add_row(t);
			row_id(t, it);
			for (c = 0; c < t->ncols; c++) {
				const char *key = t->cols[c].key;
				if (!strcmp(key, "items"))
					cell_int(&cl[c], item_int(it, "kernels", 0));
				else if (!strcmp(key, "kernels"))
					cell_int(&cl[c], item_int(it, "kernels", 0) -
					    item_int(it, "copies", 0));
				else if (!strcmp(key, "copies"))	/* absent when 0 */
					cell_int(&cl[c], item_int(it, "copies", 0));
				else if (!strcmp(key, "other_stages_us"))	/* absent when 0 */
					cell_ms(&cl[c], item_num(it, "other_stages_us", 0));
				else
					cell_member(&cl[c], it, key);
				/* no complete step had a count: the last step's rate (issue 25) */
				if (!strcmp(t->cols[c].key, "tokens_per_s") &&
				    item_bool(it, "tokens_from_last"))
					cell_suffix(&cl[c], " (last step)");
			}
		}
		t->headline = headline(run, stages[si]);
		t->empty = xstrdup("No GPU work in this stage.");
		launch_tab(run, sec, stages[si]);
		stream_tab(run, sec, stages[si]);
		annotation_tab(run, sec, stages[si]);
		st = add_tab(sec, "step", stages[si], step_cols, nsc);
		for (i = 0; i < run->n; i++) {
			const struct item *it = &run->it[i];
			struct cell *cl;
			if (it->type != RT_step || !item_in_stage(it, stages[si], &b))
				continue;
			cl = add_row(st);
			row_id(st, it);
			cell_member(&cl[0], it, "index");
			cell_text(&cl[1], item_str(it, "name", &b, ""));
			for (c = 2; c < st->ncols; c++) {
				cell_member(&cl[c], it, st->cols[c].key);
				if (!strcmp(st->cols[c].key, "period_us") && item_bool(it, "last"))
					cell_suffix(&cl[c], " (last)");
			}
		}
		st->empty = xstrdup("No step markers in this stage (ProfilerStep#N, SGLang "
		    "step[...], vLLM execute_...): no per-step figures.");
		st->more = step_caveats(run, stages[si]);
		st->total = printf_dup("Steps, from the trace's step markers: the period (to the "
		    "next step's start; the last step's, marked, to the later of its marker's end "
		    "and its GPU work's end, on the host's clock), the CPU marker's own duration, "
		    "and the GPU work it launched%s; the stage's step percentiles are of the "
		    "complete periods of steps with GPU work, the last step's period apart:",
		    nsc == sizeof step_cols / sizeof step_cols[0] ? " (a collective under another "
		    "step's kernels is under compute in the stage's figure, not in its step's)" : "");
		escapes(run, sec, stages[si]);
	}
	free_strings(stages, ns);
	sb_free(&b);
}

/* ---- charts ---- */

/*
 * Per stage of the kernel table, a stacked bar of its kernel time by
 * category (all its rows, shown or not): the headline's base, so that the
 * legend's shares are the headline's (issue 25); the GPU's idle time is
 * the GPU-time table's, of the span.  The other charts come from the
 * tables (charts.c) and the Roofline section (roofline.c).
 */
static void
charts(const struct run *run, struct doc *d)
{
	char **stages;
	size_t ns = stages_of(run, RT_kernel_row, &stages), si, i;
	sbuf s = SBUF_INIT;

	for (si = 0; si < ns; si++) {
		struct catsum *cs;
		double total;
		size_t n = category_sums(run, stages[si], &cs, &total);

		sb_reset(&s);
		sb_adds(&s, "{\"kind\":\"hbar\",\"cls\":\"seg\",\"stacked\":true,\"pct\":true,"
		    "\"title\":");
		spec_str(&s, "Kernel time by category (shares of the sum of kernel durations, as in "
		    "the headline)");
		sb_adds(&s, ",\"axis\":");
		spec_str(&s, "kernel durations summed (ms)");
		sb_adds(&s, ",\"names\":[");
		for (i = 0; i < n; i++) {
			if (i)
				sb_addc(&s, ',');
			spec_str(&s, cs[i].cat);
		}
		sb_adds(&s, "],\"legend\":[");
		for (i = 0; i < n; i++) {
			sb_adds(&s, i ? ",{\"name\":" : "{\"name\":");
			spec_str(&s, cs[i].cat);
			sb_adds(&s, ",\"color\":");
			spec_str(&s, cs[i].cat);
			sb_addc(&s, '}');
		}
		sb_adds(&s, "],\"rows\":[{\"label\":");
		spec_str(&s, stage_label(stages[si]));
		sb_adds(&s, ",\"v\":[");
		for (i = 0; i < n; i++) {
			if (i)
				sb_addc(&s, ',');
			spec_num(&s, cs[i].us);
		}
		sb_adds(&s, "],\"c\":[");
		for (i = 0; i < n; i++) {
			if (i)
				sb_addc(&s, ',');
			spec_str(&s, cs[i].cat);
		}
		sb_adds(&s, "]}]}");
		if (n)
			add_chart(d, "kernel", stages[si], sb_detach(&s));
		for (i = 0; i < n; i++)
			free(cs[i].cat);
		free(cs);
		roofline_chart(run, stages[si], d);
	}
	free_strings(stages, ns);
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
	roofline_section(run, d);
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
			free(t->fold);
			free(t->folded);
			for (k = 0; k < t->caprowid; k++)
				free(t->rowid[k]);
			free(t->rowid);
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
	free(d->family);
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
