/*
 * Can this trace be trusted?  The banner under the header says the worst
 * verdict of trace-health(1) and names the one or two defects that matter
 * most, briefly, with what they affect; the "Trace health" section has the
 * details: every check that is not ok, and how many others passed (issue
 * 16, 18, 31).  The machine formats keep every check.
 */
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "xalloc.h"

static const struct col health_cols[] = {
	{ "trace", "Trace", 0 },
	{ "check", "Check", 0 },
	{ "status", "Status", 0 },
	{ "value", "Value", 1 },
	{ "detail", "Detail", 0 },
	{ "affects", "Affects", 0 },
};

static const char *
base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/*
 * What a check found, in a few words for the banner (issue 31): the
 * detail is the check's whole sentence, in the table.  A check this table
 * does not know is named by its id.
 */
static const struct {
	const char *id, *defect, *limit;
} words[] = {
	{ "no_kernels", "kernels missing", NULL },
	{ "graph_launch_without_kernels", "CUDA-graph launches or captures without kernels", NULL },
	{ "launch_without_kernel", "launches without their kernels", NULL },
	{ "kernel_without_launch", "kernels without their launches", NULL },
	{ "no_python_stacks", NULL, "no Python stacks (with_stack)" },
	{ "no_cpu_ops", NULL, "no CPU ops" },
	{ "no_shapes", NULL, "no input shapes (record_shapes)" },
	{ "merged_devices", "several GPU processes in one trace", NULL },
	{ "clock_offset", "host and GPU clocks apart", NULL },
	{ "clock_skew", "kernels that start before their launch calls", NULL },
	{ "stream_overlap", "kernels overlapping on one stream", NULL },
	{ "absurd_timestamps", "impossible kernel timestamps", NULL },
	{ "truncated", "a truncated trace", NULL },
	{ "duplicate_event_arrays", "more than one traceEvents array", NULL },
	{ "skipped_events", "events skipped", NULL },
	{ "short_capture", "fewer steps than asked for", "no step markers" },
};

/*
 * The words for check `id` (limit: as a limitation), or NULL when the
 * table has none for it: the caller then uses the start of its detail.
 */
static const char *
check_words(const char *id, int limit)
{
	size_t i;

	for (i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strcmp(words[i].id, id) == 0)
			return limit && words[i].limit ? words[i].limit :
			    words[i].defect ? words[i].defect : words[i].limit;
	return NULL;
}

/*
 * The banner's words for a check: its own, else its detail up to the first
 * ':' or ';' when that is short (a check of another version), else its id.
 * fail: the check failed (its status).  Heap.
 */
static char *
banner_words(const char *id, const char *detail, int limit, int fail)
{
	const char *w = check_words(id, limit);
	size_t n;

	/*
	 * Launches recorded into CUDA graphs while they were captured never ran:
	 * a trace of captures times the capture, not serving (vLLM's start-up).
	 */
	if (fail && !strcmp(id, "graph_launch_without_kernels") &&
	    strstr(detail, "CUDA-graph capture"))
		return xstrdup("a trace of CUDA-graph captures, whose launches were recorded into "
		    "graphs and never ran: it times the capture, not serving; profile the "
		    "replays");
	if (w)
		return xstrdup(w);
	if (limit && !strncmp(detail, "limited: ", 9))
		detail += 9;
	n = strcspn(detail, ":;");
	if (n && n <= 80)
		return printf_dup("%.*s", (int)n, detail);
	return xstrdup(id);
}

/* A defect for the banner: which trace, which check, how bad, what it affects. */
struct defect {
	char *trace;		/* "formal" or the file; NULL with one trace */
	const char *id;		/* in the run's items */
	char *words;		/* banner_words */
	int fail;		/* status fail (else warn) */
	size_t naffects;
	size_t order;
};

/* Fail before warn, then the one affecting more tables, then the checks' order. */
static int
defect_cmp(const void *a, const void *b)
{
	const struct defect *x = a, *y = b;

	if (x->fail != y->fail)
		return y->fail - x->fail;
	if (x->naffects != y->naffects)
		return x->naffects < y->naffects ? 1 : -1;
	return (x->order > y->order) - (x->order < y->order);
}

/* The tables a check affects, "kernel, overlap" (heap; "" for none). */
static char *
affects_list(const json_doc *d, int arr)
{
	sbuf b = SBUF_INIT;
	int i, k;

	if (arr < 0 || json_kind(d, arr) != JK_ARR)
		return xstrdup("");
	for (k = 0, i = arr + 1; k < d->tok[arr].size; k++, i = json_skip(d, i)) {
		sbuf v = SBUF_INIT;
		if (json_kind(d, i) == JK_STR) {
			json_str(d, i, &v, NULL);
			sb_printf(&b, "%s%s", b.len ? ", " : "", sb_str(&v));
		}
		sb_free(&v);
	}
	return b.len ? sb_detach(&b) : (sb_free(&b), xstrdup(""));
}

/*
 * Are the tables of this health record's trace in the report?  With
 * --all-ranks the report's tables are the lowest rank's (its trace record
 * is in the run) and the other ranks' health records come alone: what
 * their defects touch is their rows of the rank comparison.  Only when
 * some health record's trace is shown are the others told apart.
 */
static int
shown_trace(const struct run *run, const struct item *h)
{
	sbuf a = SBUF_INIT, b = SBUF_INIT;
	size_t i;
	int hit = 0;

	item_str(h, "path", &a, "");
	for (i = 0; i < run->n && !hit; i++)
		if (item_is(&run->it[i], "trace") &&
		    strcmp(item_str(&run->it[i], "path", &b, ""), sb_str(&a)) == 0)
			hit = 1;
	sb_free(&a);
	sb_free(&b);
	return hit;
}

void
health_section(const struct run *run, struct doc *d)
{
	struct section *sec = NULL;
	struct tab *t = NULL;
	sbuf banner = SBUF_INIT, lim = SBUF_INIT, b = SBUF_INIT, p = SBUF_INIT, aff = SBUF_INIT;
	size_t i, ntraces = 0, nchecks = 0, nbad = 0, nlim = 0, ninfo = 0, nok = 0, cap = 0;
	const char *worst = "ok";
	struct defect *def = NULL;
	/* the tables any defect affects, in trace-health's order */
	static const char *const tables[] = { "kernel", "overlap", "fuse", "gpu_time", "step",
		"rank" };
	int hit[sizeof tables / sizeof tables[0]] = { 0 };
	size_t ntr = 0;			/* rank rows: an --all-ranks report */
	size_t shown = 0;		/* health records of the traces whose tables are shown */

	for (i = 0; i < run->n; i++)
		if (item_is(&run->it[i], "rank_row"))
			ntr++;
	for (i = 0; i < run->n; i++)
		if (item_is(&run->it[i], "health")) {
			ntraces++;
			if (ntr && shown_trace(run, &run->it[i]))
				shown++;
		}
	if (!ntraces)
		return;
	sec = add_section(d, "health", "Trace health");
	sec->intro = xstrdup("The data-quality checks of trace-health(1) for each trace: "
	    "what was found and which tables it makes less trustworthy.  A defect (warn, "
	    "fail: data missing or wrong) makes the verdict degraded or unusable; a "
	    "limitation of the capture settings (limited) says what the report cannot "
	    "show; info is expected behaviour, worth knowing.  The checks that passed "
	    "are counted, not listed (every check is in -f json).");
	t = add_tab(sec, "health", NULL, health_cols, sizeof health_cols / sizeof health_cols[0]);
	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		const json_doc *jd = &it->doc;
		const char *path, *verdict;
		char *who = NULL;
		int arr, k, c;

		if (!item_is(it, "health"))
			continue;
		path = base(item_str(it, "path", &p, ""));
		if (strcmp(item_str(it, "role", &b, "single"), "single") != 0) {
			/* "mapping: t.json"; the banner says "mapping trace" */
			char *lab = printf_dup("%s: %s", b.s, path);
			who = printf_dup("%s trace", b.s);
			sb_reset(&p);
			sb_adds(&p, lab);
			free(lab);
			path = p.s;
		} else if (ntraces > 1)
			who = xstrdup(path);
		verdict = item_str(it, "verdict", &b, "ok");
		if (strcmp(verdict, "unusable") == 0 ||
		    (strcmp(verdict, "degraded") == 0 && strcmp(worst, "ok") == 0))
			worst = strcmp(verdict, "unusable") == 0 ? "unusable" : "degraded";
		arr = item_get(it, "checks");
		if (arr < 0 || json_kind(jd, arr) != JK_ARR) {
			free(who);
			continue;
		}
		for (k = 0, c = arr + 1; k < jd->tok[arr].size; k++, c = json_skip(jd, c)) {
			struct cell *cl;
			char *af;
			const char *status;
			int other;
			sbuf s1 = SBUF_INIT, s2 = SBUF_INIT, s3 = SBUF_INIT;

			if (json_kind(jd, c) != JK_OBJ)
				continue;
			nchecks++;
			status = obj_str(jd, c, "status", &s1, "ok");
			af = affects_list(jd, json_get(jd, c, "affects"));
			other = shown && !shown_trace(run, it);
			if (*af && other) {
				/*
				 * another rank's trace (--all-ranks): only its rank rows
				 * are shown, and they compare GPU timings, which a defect
				 * spoils when it spoils gpu_time (missing Python stacks,
				 * say, do not)
				 */
				int timing = strstr(af, "gpu_time") != NULL;
				free(af);
				af = xstrdup(timing ? "rank" : "");
			}
			cl = add_row(t);
			cell_text(&cl[0], path);
			cell_text(&cl[1], obj_str(jd, c, "id", &s2, ""));
			cell_text(&cl[2], status);
			{
				double num = obj_num(jd, c, "value", 0);
				sbuf nb = SBUF_INIT;
				sb_printf(&nb, "%.15g", num);
				cell_num(&cl[3], num, sb_str(&nb));
				sb_free(&nb);
			}
			cell_text(&cl[4], obj_str(jd, c, "detail", &s3, ""));
			cell_text(&cl[5], af);
			if (strcmp(status, "ok") == 0) {
				nok++;
				row_fold(t);	/* passed: counted, not listed */
			} else if (strcmp(status, "info") == 0) {
				ninfo++;
			} else if (strcmp(status, "limited") == 0) {
				/*
				 * each limitation once, whichever traces have it; another
				 * rank's that touches no rank row is the table's alone
				 */
				char *w = banner_words(cl[1].text, cl[4].text, 1, 0);
				nlim++;
				if (!(other && !*af) && !strstr(lim.len ? lim.s : "", w))
					sb_printf(&lim, "%s%s", lim.len ? ", " : "", w);
				free(w);
			} else {
				size_t j, n = 0;
				nbad++;
				for (j = 0; j < sizeof tables / sizeof tables[0]; j++) {
					size_t len = strlen(tables[j]);
					const char *q = af;
					while ((q = strstr(q, tables[j])) != NULL) {
						if ((q == af || q[-1] == ' ') && (q[len] == ',' || !q[len]))
							break;
						q += len;
					}
					if (q) {
						hit[j] = 1;
						n++;
					}
				}
				xgrow(&def, &cap, nbad, sizeof *def);
				def[nbad - 1] = (struct defect){ who ? xstrdup(who) : NULL, cl[1].text,
				    banner_words(cl[1].text, cl[4].text, 0, strcmp(status, "fail") == 0),
				    strcmp(status, "fail") == 0,
				    n, nbad };
			}
			free(af);
			sb_free(&s1);
			sb_free(&s2);
			sb_free(&s3);
		}
		free(who);
	}
	t->empty = xstrdup("trace-health wrote no checks.");
	d->verdict = worst;
	if (nbad) {
		size_t j, show = nbad < 2 ? nbad : 2, na = 0, nt = 0;
		xqsort(def, nbad, sizeof *def, defect_cmp);
		for (j = 0; j < show; j++) {
			const char *w = def[j].words;
			if (j)
				sb_adds(&banner, nbad == 2 ? " and " : "; ");
			/* a trace named once for its defects in a row */
			if (def[j].trace && (!j || !def[j - 1].trace ||
			    strcmp(def[j].trace, def[j - 1].trace) != 0))
				sb_printf(&banner, "%s: ", def[j].trace);
			/* the first word capitalized when it starts the sentence (not an id) */
			if (!j && !def[j].trace && *w >= 'a' && *w <= 'z' &&
			    !memchr(w, '_', strcspn(w, " ")))
				sb_printf(&banner, "%c%s", *w - 'a' + 'A', w + 1);
			else
				sb_adds(&banner, w);
			sb_printf(&banner, " (%s)", def[j].id);
		}
		if (nbad > show)
			sb_printf(&banner, "; %zu more defect%s", nbad - show,
			    nbad - show == 1 ? "" : "s");
		for (j = 0; j < sizeof tables / sizeof tables[0]; j++)
			nt += hit[j];
		for (j = 0; j < sizeof tables / sizeof tables[0]; j++)
			if (hit[j]) {
				na++;
				sb_printf(&aff, "%s%s", na == 1 ? "" : na == nt ? " and " : ", ",
				    tables[j]);
			}
		if (nt)
			sb_printf(&banner, ": the %s table%s %s less trustworthy", aff.s,
			    nt == 1 ? "" : "s", nt == 1 ? "is" : "are");
		sb_addc(&banner, '.');
		if (lim.len)
			sb_printf(&banner, " Limited by the capture settings too: %s.", lim.s);
		d->health = sb_detach(&banner);
	} else if (lim.len)
		d->health = printf_dup("No defect found; limited by the capture settings: %s.",
		    lim.s);
	else if (nlim)
		d->health = xstrdup("No defect found; other ranks' capture settings limit what "
		    "their own traces show (the health table says how), which the rank table "
		    "does not depend on.");
	else if (ninfo)
		d->health = printf_dup("No defect found: %zu of %zu checks passed, %zu %s for "
		    "information.", nok, nchecks, ninfo, ninfo == 1 ? "is" : "are");
	else
		d->health = printf_dup("All %zu checks passed%s.", nchecks,
		    ntraces > 1 ? " on every trace" : "");
	if (nok == nchecks)
		t->folded = printf_dup("All %zu checks passed%s.", nchecks,
		    ntraces > 1 ? " on every trace" : "");
	else if (nok)
		t->folded = printf_dup("%zu other check%s passed.", nok, nok == 1 ? "" : "s");
	t->total = printf_dup("%zu check%s on %zu trace%s: %zu %s, %zu %s, %zu for information.",
	    nchecks, nchecks == 1 ? "" : "s", ntraces, ntraces == 1 ? "" : "s", nbad,
	    nbad == 1 ? "defect" : "defects", nlim, nlim == 1 ? "limitation" : "limitations", ninfo);
	for (i = 0; i < nbad; i++) {
		free(def[i].trace);
		free(def[i].words);
	}
	free(def);
	sb_free(&banner);
	sb_free(&lim);
	sb_free(&aff);
	sb_free(&b);
	sb_free(&p);
}
