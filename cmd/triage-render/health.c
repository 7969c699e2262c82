/*
 * Can this trace be trusted?  The banner under the header says the
 * verdict of trace-health(1) for each trace and what its failing checks
 * affect; the "Trace health" section lists every check (issue 16, 18).
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

void
health_section(const struct run *run, struct doc *d)
{
	struct section *sec = NULL;
	struct tab *t = NULL;
	sbuf banner = SBUF_INIT, lim = SBUF_INIT, b = SBUF_INIT, p = SBUF_INIT;
	size_t i, ntraces = 0, nchecks = 0, nbad = 0, nlim = 0, ninfo = 0;
	const char *worst = "ok";

	for (i = 0; i < run->n; i++)
		if (item_is(&run->it[i], "health"))
			ntraces++;
	if (!ntraces)
		return;
	sec = add_section(d, "health", "Trace health");
	sec->intro = xstrdup("The data-quality checks of trace-health(1) for each trace: "
	    "what was found and which tables it makes less trustworthy.  A defect (warn, "
	    "fail: data missing or wrong) makes the verdict degraded or unusable; a "
	    "limitation of the capture settings (limited) says what the report cannot "
	    "show; info is expected behaviour, worth knowing.");
	t = add_tab(sec, "health", NULL, health_cols, sizeof health_cols / sizeof health_cols[0]);
	for (i = 0; i < run->n; i++) {
		const struct item *it = &run->it[i];
		const json_doc *jd = &it->doc;
		const char *path, *verdict;
		int arr, k, c;
		size_t bad_here = 0, lim_here = 0;

		if (!item_is(it, "health"))
			continue;
		path = base(item_str(it, "path", &p, ""));
		if (strcmp(item_str(it, "role", &b, "single"), "single") != 0) {
			/* "mapping: t.json" */
			char *lab = printf_dup("%s: %s", b.s, path);
			sb_reset(&p);
			sb_adds(&p, lab);
			free(lab);
			path = p.s;
		}
		verdict = item_str(it, "verdict", &b, "ok");
		if (strcmp(verdict, "unusable") == 0 ||
		    (strcmp(verdict, "degraded") == 0 && strcmp(worst, "ok") == 0))
			worst = strcmp(verdict, "unusable") == 0 ? "unusable" : "degraded";
		arr = item_get(it, "checks");
		if (arr < 0 || json_kind(jd, arr) != JK_ARR)
			continue;
		for (k = 0, c = arr + 1; k < jd->tok[arr].size; k++, c = json_skip(jd, c)) {
			struct cell *cl;
			char *aff;
			const char *status;
			sbuf s1 = SBUF_INIT, s2 = SBUF_INIT, s3 = SBUF_INIT;

			if (json_kind(jd, c) != JK_OBJ)
				continue;
			nchecks++;
			status = obj_str(jd, c, "status", &s1, "ok");
			aff = affects_list(jd, json_get(jd, c, "affects"));
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
			cell_text(&cl[5], aff);
			if (strcmp(status, "info") == 0) {
				ninfo++;
			} else if (strcmp(status, "limited") == 0) {
				/* "limited: no ...": the banner says it once, after the defects */
				const char *t = cl[4].text;
				if (!strncmp(t, "limited: ", 9))
					t += 9;
				nlim++;
				if (ntraces > 1 && !lim_here)
					sb_printf(&lim, "%s%s: ", lim.len ? "; " : "", path);
				else if (lim.len)
					sb_adds(&lim, "; ");
				sb_adds(&lim, t);
				lim_here++;
			} else if (strcmp(status, "ok") != 0) {
				nbad++;
				if (ntraces > 1 && !bad_here)
					sb_printf(&banner, "%s%s:", banner.len ? " " : "", path);
				sb_printf(&banner, "%s%s", banner.len ? " " : "", cl[4].text);
				if (*aff) {
					/* "kernel, overlap, fuse": "the kernel, overlap and fuse tables" */
					const char *last = strrchr(aff, ',');
					if (last)
						sb_printf(&banner, " (affects the %.*s and %s tables)",
						    (int)(last - aff), aff, last + 2);
					else
						sb_printf(&banner, " (affects the %s table)", aff);
				}
				sb_addc(&banner, '.');
				/* with several traces, the banner names each failing trace once */
				bad_here++;
			}
			free(aff);
			sb_free(&s1);
			sb_free(&s2);
			sb_free(&s3);
		}
	}
	t->empty = xstrdup("trace-health wrote no checks.");
	d->verdict = worst;
	if (nbad && nlim)
		d->health = printf_dup("%s Limited by the capture settings: %s.", banner.s, lim.s);
	else if (nbad)
		d->health = xstrdup(banner.s);
	else if (nlim)
		d->health = printf_dup("No defect found. Limited by the capture settings: %s.", lim.s);
	else
		d->health = printf_dup("All %zu checks passed%s.", nchecks,
		    ntraces > 1 ? " on every trace" : "");
	t->total = printf_dup("%zu check%s on %zu trace%s: %zu %s, %zu %s, %zu for information.",
	    nchecks, nchecks == 1 ? "" : "s", ntraces, ntraces == 1 ? "" : "s", nbad,
	    nbad == 1 ? "defect" : "defects", nlim, nlim == 1 ? "limitation" : "limitations", ninfo);
	sb_free(&banner);
	sb_free(&lim);
	sb_free(&b);
	sb_free(&p);
}
