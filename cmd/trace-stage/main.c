/*
 * trace-stage: choose the GPU process whose kernels the kernel table reads
 * and give every kernel its stage (kernel-table.md §1.4.3, §3): the path
 * stage of its trace, or else the stage of the user annotation it falls in.
 * Kernels are held per trace until its "stats" record, because annotations
 * and the correlation map can come after them; everything else streams
 * through.  Also reports data-quality problems per trace.
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "num.h"
#include "rec.h"
#include "rules.h"
#include "strtab.h"
#include "text.h"
#include "xalloc.h"

struct kern {
	uint32_t name, cat, pid, tid, stream;
	double ts, dur;
	long long ext, corr;
	unsigned has_ext : 1, has_corr : 1, has_stream : 1, overlap : 1;
	const char *stage;
};

struct annot {
	const char *stage;
	double ts, end;
	long long ext;
	int has_ext, gpu;
	size_t order;
};

struct window {
	const char *stage;
	double ts, end;
};

struct wlist {
	struct window *w;
	size_t n, cap;
	double *maxend1;	/* prefix max of end + 1e-3 */
	size_t *argmax;		/* first index achieving the prefix max of end */
};

struct extmap {		/* External id -> annotation (open addressing) */
	long long *key;
	struct annot *val;
	unsigned char *used;
	size_t cap, n;
};

static int strict;
static long long kernels_total;
static int any_trace;
static sbuf seen_cats;		/* "cat N, ..." of traces without kernels */

/* per-trace state */
static strtab *tab;
static struct kern *kv;
static size_t nk, kcap;
static struct annot *av;
static size_t na, acap;
struct corrpair { long long corr, ext; };
static struct corrpair *corrs;
static size_t ncorr, corrcap;
static char *cur_path;
static long long *launch_corr;
static size_t nlaunch, lcap;
static int cur_t = -1;
static int in_trace;		/* a trace record is open (its stats not yet seen) */
static char *cur_stage;

static void usage(int code) __attribute__((noreturn));
static void finish_trace(rec_reader *r);

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "strict", no_argument, NULL, 's' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static void
usage(int code)
{
	FILE *fp = code == EXIT_OK ? stdout : stderr;

	fprintf(fp,
	    "usage: trace-stage [-qs] [file ...]\n"
	    "Select the kernel-table GPU process and resolve each kernel's stage in a\n"
	    "trace-extract record stream (triage-records(5)).\n"
	    "  -q, --quiet     no warnings\n"
	    "  -s, --strict    data-quality warnings become errors (exit 1)\n"
	    "  -h, --help      show this help\n"
	    "      --version   show the version\n");
	exit(code == EXIT_OK ? tool_finish(EXIT_OK) : code);
}

static const char *
str_of(uint32_t id)
{
	return strtab_str(tab, id);
}

static uint32_t
intern_field(rec_reader *r, int i, sbuf *tmp)
{
	if (i < 0 || json_kind(&r->doc, i) != JK_STR)
		return strtab_intern(tab, "None", 4);
	json_str(&r->doc, i, tmp, NULL);
	return strtab_intern(tab, sb_str(tmp), tmp->len);
}

static void
read_kernel(rec_reader *r)
{
	static sbuf tmp;
	json_doc *d = &r->doc;
	struct kern k;
	int i, n, j, iname = -1, icat = -1, ipid = -1, itid = -1, its = -1,
	    idur = -1, istream = -1, iext = -1, icorr = -1, iovl = -1;
	size_t kl;
	const char *key;

	rec_parse(r);
	n = d->tok[0].size;
	for (j = 0, i = 1; j < n; j++) {
		key = json_span(d, i, &kl);
		if (kl == 4 && !memcmp(key, "name", 4)) iname = i + 1;
		else if (kl == 3 && !memcmp(key, "cat", 3)) icat = i + 1;
		else if (kl == 3 && !memcmp(key, "pid", 3)) ipid = i + 1;
		else if (kl == 3 && !memcmp(key, "tid", 3)) itid = i + 1;
		else if (kl == 2 && !memcmp(key, "ts", 2)) its = i + 1;
		else if (kl == 3 && !memcmp(key, "dur", 3)) idur = i + 1;
		else if (kl == 6 && !memcmp(key, "stream", 6)) istream = i + 1;
		else if (kl == 11 && !memcmp(key, "external_id", 11)) iext = i + 1;
		else if (kl == 11 && !memcmp(key, "correlation", 11)) icorr = i + 1;
		else if (kl == 7 && !memcmp(key, "overlap", 7)) iovl = i + 1;
		i = json_skip(d, i + 1);
	}
	memset(&k, 0, sizeof k);
	if (!in_trace)
		die(EXIT_DATA, "%s:%zu: kernel record outside a trace (no trace record before it)",
		    r->name, r->lineno);
	if (its < 0 || idur < 0 || !json_todouble(d, its, &k.ts) ||
	    !json_todouble(d, idur, &k.dur) || !isfinite(k.ts) || !isfinite(k.dur))
		die(EXIT_DATA, "%s:%zu: kernel record without numeric ts and dur", r->name,
		    r->lineno);
	k.name = intern_field(r, iname, &tmp);
	k.cat = icat >= 0 ? intern_field(r, icat, &tmp) : strtab_intern(tab, "", 0);
	k.pid = intern_field(r, ipid, &tmp);
	k.tid = intern_field(r, itid, &tmp);
	if (istream >= 0 && json_kind(d, istream) == JK_STR) {
		k.stream = intern_field(r, istream, &tmp);
		k.has_stream = 1;
	}
	k.has_ext = iext >= 0 && json_coerce_int(d, iext, &k.ext);
	k.has_corr = icorr >= 0 && json_coerce_int(d, icorr, &k.corr);
	k.overlap = iovl >= 0 && json_kind(d, iovl) == JK_TRUE;
	xgrow(&kv, &kcap, nk + 1, sizeof *kv);
	kv[nk++] = k;
}

static void
read_annotation(rec_reader *r)
{
	static sbuf tmp;
	struct annot a;
	double ts, dur;
	const char *st;

	memset(&a, 0, sizeof a);
	if (!rec_get_str(r, "stage", &tmp))
		return;
	st = annotation_stage(tmp.s, tmp.len);	/* canonical static string */
	if (!strcmp(sb_str(&tmp), "decode"))
		st = "decode";
	else if (!strcmp(sb_str(&tmp), "extend"))
		st = "extend";
	if (!st)
		return;
	if (!rec_get_num(r, "ts", &ts) || !rec_get_num(r, "dur", &dur))
		return;
	a.stage = st;
	a.ts = ts;
	a.end = ts + dur;
	a.has_ext = rec_get_int(r, "external_id", &a.ext);
	a.gpu = rec_get_str(r, "cat", &tmp) && !strcmp(sb_str(&tmp), "gpu_user_annotation");
	a.order = na;
	xgrow(&av, &acap, na + 1, sizeof *av);
	av[na++] = a;
}

int
main(int argc, char **argv)
{
	rec_reader r;
	int c, i;
	FILE *fp;
	sbuf tmp = SBUF_INIT;
	long long v;

	tool_init(argc, argv);
	while ((c = getopt_long(argc, argv, "hqs", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(EXIT_OK);
		case 'q':
			quiet = 1;
			break;
		case 's':
			strict = 1;
			break;
		case 'V':
			print_version();
		default:
			usage(EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	tab = strtab_new();
	for (i = 0; i < (argc ? argc : 1); i++) {
		const char *name = argc ? argv[i] : "-";
		fp = rec_open(name);
		rec_reader_init(&r, fp, strcmp(name, "-") ? name : "<stdin>");
		while (rec_next(&r)) {
			if (rec_is(&r, "kernel")) {
				read_kernel(&r);
				continue;
			}
			if (rec_is(&r, "trace")) {
				if (in_trace)
					die(EXIT_DATA, "%s:%zu: trace %d has no stats record; input truncated",
					    r.name, r.lineno, cur_t);
				in_trace = 1;
				cur_t = rec_get_int(&r, "t", &v) && v >= 0 && v <= INT_MAX ? (int)v : 0;
				free(cur_stage);
				cur_stage = xstrdup(rec_get_str(&r, "stage", &tmp) ? sb_str(&tmp) : "all");
				free(cur_path);
				cur_path = xstrdup(rec_get_str(&r, "path", &tmp) ? sb_str(&tmp) : "-");
				any_trace = 1;
			} else if (rec_is(&r, "annotation")) {
				read_annotation(&r);
			} else if (rec_is(&r, "corr")) {
				long long cc, ee;
				if (rec_get_int(&r, "correlation", &cc) &&
				    rec_get_int(&r, "external_id", &ee)) {
					xgrow(&corrs, &corrcap, ncorr + 1, sizeof *corrs);
					corrs[ncorr].corr = cc;
					corrs[ncorr++].ext = ee;
				}
			} else if (rec_is(&r, "launch")) {
				long long cc;
				if (rec_get_int(&r, "correlation", &cc)) {
					xgrow(&launch_corr, &lcap, nlaunch + 1, sizeof *launch_corr);
					launch_corr[nlaunch++] = cc;
				}
			} else if (rec_is(&r, "stats") && in_trace) {
				finish_trace(&r);
			}
			rec_line(r.line, r.len);
		}
		if (in_trace)
			die(EXIT_DATA, "%s: input ended inside trace %d (no stats record); "
			    "the upstream tool probably failed", r.name, cur_t);
		rec_reader_free(&r);
		if (fp != stdin)
			fclose(fp);
	}
	sb_free(&tmp);
	if (any_trace && kernels_total == 0) {
		fflush(stdout);
		warnx("no GPU kernel events to analyze; the trace holds%s", seen_cats.len ?
		    sb_str(&seen_cats) : " no events at all");
		return tool_finish(EXIT_EMPTY);
	}
	return tool_finish(EXIT_OK);
}

/* ---- pid selection (§1.4.3) ---- */

static uint32_t
select_pid(double **times, uint32_t **pids, size_t *npids)
{
	size_t i, j, n = 0, cap = 0;
	uint32_t *p = NULL;
	double *t = NULL;
	static const char *pref[] = { "TP00", "TP-0" };
	size_t best;
	int k, found;

	for (i = 0; i < nk; i++) {
		for (j = 0; j < n; j++)
			if (p[j] == kv[i].pid)
				break;
		if (j == n) {
			xgrow(&p, &cap, n + 1, sizeof *p);
			t = xrealloc(t, cap * sizeof *t);
			p[n] = kv[i].pid;
			t[n++] = 0.0;
		}
		t[j] += kv[i].dur;
	}
	*times = t;
	*pids = p;
	*npids = n;
	if (n == 0)
		return UINT32_MAX;
	for (k = 0; k < 2; k++) {
		found = 0;
		best = 0;
		for (j = 0; j < n; j++) {
			if (!strstr(str_of(p[j]), pref[k]))
				continue;
			if (!found || t[j] > t[best])
				best = j;
			found = 1;
		}
		if (found)
			return p[best];
	}
	best = 0;
	for (j = 1; j < n; j++)
		if (t[j] > t[best])
			best = j;
	return p[best];
}

/* ---- stage windows (§3.2) ---- */

static int
annot_cmp(const void *a, const void *b)
{
	const struct annot *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void
build_windows(int gpu, struct wlist *wl)
{
	struct annot *tmp = xmalloc((na ? na : 1) * sizeof *tmp);
	size_t i, m = 0;

	for (i = 0; i < na; i++)
		if (av[i].gpu == gpu)
			tmp[m++] = av[i];
	xqsort(tmp, m, sizeof *tmp, annot_cmp);
	memset(wl, 0, sizeof *wl);
	for (i = 0; i < m; i++) {
		struct window *prev = wl->n ? &wl->w[wl->n - 1] : NULL;
		if (prev && prev->stage == tmp[i].stage && tmp[i].ts <= prev->end + 1e-3) {
			if (tmp[i].end > prev->end)
				prev->end = tmp[i].end;
			continue;
		}
		xgrow(&wl->w, &wl->cap, wl->n + 1, sizeof *wl->w);
		wl->w[wl->n].stage = tmp[i].stage;
		wl->w[wl->n].ts = tmp[i].ts;
		wl->w[wl->n].end = tmp[i].end;
		wl->n++;
	}
	free(tmp);
	wl->maxend1 = xmalloc((wl->n ? wl->n : 1) * sizeof *wl->maxend1);
	wl->argmax = xmalloc((wl->n ? wl->n : 1) * sizeof *wl->argmax);
	for (i = 0; i < wl->n; i++) {
		double e1 = wl->w[i].end + 1e-3;
		if (i == 0 || e1 > wl->maxend1[i - 1]) {
			wl->maxend1[i] = e1;
			wl->argmax[i] = i;
		} else {
			wl->maxend1[i] = wl->maxend1[i - 1];
			wl->argmax[i] = wl->argmax[i - 1];
		}
	}
}

/*
 * The reference scans every window: the first containing one wins, else
 * the nearest (strictly smallest gap, first on ties).  Windows are sorted
 * by start, so the containing candidates are a prefix and the first of them
 * whose end reaches the probe is found on the prefix maximum of ends; the
 * nearest non-containing window is either the latest-ending one of that
 * prefix or the first one after it.  Returns 1 (contained), 0 (nearest in
 * *gap), -1 (no windows).
 */
static int
scan_windows(const struct wlist *wl, double probe, const char **stage, double *gap)
{
	size_t lo = 0, hi = wl->n, r, mid;
	double g1, g2, a, b;
	size_t i1;

	if (wl->n == 0)
		return -1;
	while (lo < hi) {	/* r = number of windows with ts <= probe */
		mid = (lo + hi) / 2;
		if (wl->w[mid].ts <= probe)
			lo = mid + 1;
		else
			hi = mid;
	}
	r = lo;
	if (r > 0 && wl->maxend1[r - 1] >= probe) {
		lo = 0;
		hi = r - 1;
		while (lo < hi) {
			mid = (lo + hi) / 2;
			if (wl->maxend1[mid] >= probe)
				hi = mid;
			else
				lo = mid + 1;
		}
		*stage = wl->w[lo].stage;
		return 1;
	}
	g1 = INFINITY;
	i1 = 0;
	if (r > 0) {
		i1 = wl->argmax[r - 1];
		a = fabs(probe - wl->w[i1].ts);
		b = fabs(probe - wl->w[i1].end);
		g1 = a < b ? a : b;
	}
	if (r < wl->n) {
		a = fabs(probe - wl->w[r].ts);
		b = fabs(probe - wl->w[r].end);
		g2 = a < b ? a : b;
		if (r == 0 || g2 < g1) {
			*stage = wl->w[r].stage;
			*gap = g2;
			return 0;
		}
	}
	*stage = wl->w[i1].stage;
	*gap = g1;
	return 0;
}

struct emap_ent {
	long long ext;
	struct annot a;
	int used;
};

static struct emap_ent *emap;
static size_t emap_cap;

static struct emap_ent *
emap_slot(long long ext)
{
	size_t i = hash_u64((uint64_t)ext) & (emap_cap - 1);

	while (emap[i].used && emap[i].ext != ext)
		i = (i + 1) & (emap_cap - 1);
	return &emap[i];
}

static void
build_emap(void)
{
	size_t i;
	struct emap_ent *e;

	emap_cap = 16;
	while (emap_cap < na * 2 + 2)
		emap_cap *= 2;
	emap = xcalloc(emap_cap, sizeof *emap);
	for (i = 0; i < na; i++) {
		if (!av[i].has_ext)
			continue;
		e = emap_slot(av[i].ext);
		if (!e->used) {
			e->used = 1;
			e->ext = av[i].ext;
			e->a = av[i];
		} else if (e->a.gpu != av[i].gpu) {
			if (av[i].gpu)
				e->a = av[i];
		} else if (av[i].end - av[i].ts > e->a.end - e->a.ts) {
			e->a = av[i];
		}
	}
}

static const char *
resolve_stage(const struct wlist *gw, const struct wlist *cw, double ts, int has_ext,
    long long ext)
{
	const char *st = NULL, *st2 = NULL;
	double gap = 0, gap2 = 0, probe = ts + 1e-3;
	int r1, r2, have = 0;
	struct emap_ent *e;

	if (has_ext && na) {
		e = emap_slot(ext);
		if (e->used)
			return e->a.stage;
	}
	r1 = scan_windows(gw, probe, &st, &gap);
	if (r1 == 1)
		return st;
	if (r1 == 0)
		have = 1;
	r2 = scan_windows(cw, probe, &st2, &gap2);
	if (r2 == 1)
		return st2;
	if (r2 == 0 && (!have || gap2 < gap)) {
		st = st2;
		gap = gap2;
		have = 1;
	}
	if (have && gap <= 20000.0)
		return st;
	return "all";
}

static int
ll_cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

struct sk { uint32_t stream; double ts, end; };

static int
sk_cmp(const void *a, const void *b)
{
	const struct sk *x = a, *y = b;

	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static int
corr_cmp(const void *a, const void *b)
{
	const struct corrpair *x = a, *y = b;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static long long
lookup_corr(long long c, int *ok)
{
	size_t lo = 0, hi = ncorr, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (corrs[mid].corr < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	*ok = lo < ncorr && corrs[lo].corr == c;
	return *ok ? corrs[lo].ext : 0;
}

static void
warn_quality(const char *path, uint32_t sel, const double *times, const uint32_t *pids,
    size_t npids)
{
	size_t i, j, ns = 0, overlaps = 0, missing = 0;
	struct sk *v;
	long long *kc;
	size_t nkc = 0;
	int bad = 0;
	double other = 0, total = 0, bad_ts = 0;

	/* Several GPU processes: only one is analyzed. */
	for (j = 0; j < npids; j++) {
		total += times[j];
		if (pids[j] != sel)
			other += times[j];
	}
	if (npids > 1) {
		warn_msg("'%s': kernels on %zu GPU processes; analyzing pid %s, the others hold "
		    "%.2f ms (%.1f%% of kernel time)", path, npids, str_of(sel), other / 1000.0,
		    pct(other, total));
		bad = 1;
	}
	/* Same-stream overlaps on the analyzed process (merged ranks, clock errors). */
	v = xmalloc((nk ? nk : 1) * sizeof *v);
	for (i = 0; i < nk; i++) {
		if (kv[i].pid != sel)
			continue;
		if (kv[i].ts < 0 || kv[i].ts > 1e17)
			bad_ts++;
		v[ns].stream = kv[i].has_stream ? kv[i].stream : kv[i].tid;
		v[ns].ts = kv[i].ts;
		v[ns].end = kv[i].ts + kv[i].dur;
		ns++;
	}
	xqsort(v, ns, sizeof *v, sk_cmp);
	for (i = 1; i < ns; i++)
		if (v[i].stream == v[i - 1].stream && v[i].ts < v[i - 1].end - 1e-3)
			overlaps++;
	free(v);
	if (overlaps) {
		warn_msg("'%s': %zu kernels start before the previous kernel on the same stream "
		    "ends (merged ranks or duplicated processes?)", path, overlaps);
		bad = 1;
	}
	if (bad_ts) {
		warn_msg("'%s': %.0f kernels have negative or absurd timestamps", path, bad_ts);
		bad = 1;
	}
	/* Launch coverage: launches whose kernel never appears. */
	kc = xmalloc((nk ? nk : 1) * sizeof *kc);
	for (i = 0; i < nk; i++)
		if (kv[i].has_corr)
			kc[nkc++] = kv[i].corr;
	xqsort(kc, nkc, sizeof *kc, ll_cmp);
	for (i = 0; i < nlaunch; i++)
		if (!bsearch(&launch_corr[i], kc, nkc, sizeof *kc, ll_cmp))
			missing++;
	free(kc);
	if (missing && missing * 100 >= nlaunch) {
		warn_msg("'%s': %zu of %zu CUDA launches have no recorded kernel (launch-to-kernel "
		    "coverage %.1f%%)", path, missing, nlaunch, pct((double)(nlaunch - missing),
		    (double)nlaunch));
		bad = 1;
	}
	if (strict && bad)
		die(EXIT_DATA, "'%s': data-quality warnings are errors under --strict", path);
}

static void
finish_trace(rec_reader *r)
{
	struct wlist gw, cw;
	double *times;
	uint32_t *pids, sel;
	size_t npids, i;
	int ok;
	long long e;
	const char *all_or_path;

	xqsort(corrs, ncorr, sizeof *corrs, corr_cmp);	/* one entry per correlation */
	sel = select_pid(&times, &pids, &npids);
	build_windows(1, &gw);
	build_windows(0, &cw);
	build_emap();
	all_or_path = cur_stage ? cur_stage : "all";
	for (i = 0; i < nk; i++) {
		struct kern *k = &kv[i];
		if (!k->has_ext && k->has_corr) {
			e = lookup_corr(k->corr, &ok);
			if (ok) {
				k->ext = e;
				k->has_ext = 1;
			}
		}
		if (strcmp(all_or_path, "all") != 0)
			k->stage = all_or_path;
		else
			k->stage = resolve_stage(&gw, &cw, k->ts, k->has_ext, k->ext);
	}
	if (npids) {
		sbuf o = SBUF_INIT;
		char buf[40];
		rec_begin("gpu_pids");
		rec_int("t", cur_t);
		rec_cstr("selected", str_of(sel));
		sb_addc(&o, '{');
		for (i = 0; i < npids; i++) {
			if (i)
				sb_addc(&o, ',');
			json_quote(&o, str_of(pids[i]), strlen(str_of(pids[i])));
			sb_addc(&o, ':');
			sb_adds(&o, num_json(times[i], buf));
		}
		sb_addc(&o, '}');
		rec_raw("time_us", o.s, o.len);
		rec_end();
		sb_free(&o);
	}
	for (i = 0; i < nk; i++) {
		struct kern *k = &kv[i];
		rec_begin("kernel");
		rec_int("t", cur_t);
		rec_cstr("name", str_of(k->name));
		rec_cstr("cat", str_of(k->cat));
		rec_cstr("pid", str_of(k->pid));
		rec_cstr("tid", str_of(k->tid));
		rec_num("ts", k->ts);
		rec_num("dur", k->dur);
		if (k->has_stream)
			rec_cstr("stream", str_of(k->stream));
		if (k->has_ext)
			rec_int("external_id", k->ext);
		if (k->has_corr)
			rec_int("correlation", k->corr);
		if (k->overlap)
			rec_bool("overlap", 1);
		rec_cstr("stage", k->stage);
		if (k->pid == sel)
			rec_bool("sel", 1);
		rec_end();
	}
	kernels_total += (long long)nk;
	if (nk)
		warn_quality(cur_path ? cur_path : "-", sel, times, pids, npids);
	if (nk == 0) {
		/* Say what the trace held instead, from its stats record. */
		int bc = rec_get(r, "by_cat");
		if (bc >= 0 && r->doc.tok[bc].type == JSMN_OBJECT) {
			int k2, n2 = r->doc.tok[bc].size, j = bc + 1;
			sbuf kname = SBUF_INIT;
			for (k2 = 0; k2 < n2; k2++) {
				long long cnt = 0;
				json_str(&r->doc, j, &kname, NULL);
				json_coerce_int(&r->doc, j + 1, &cnt);
				sb_printf(&seen_cats, "%s %lld %s events", seen_cats.len ? "," : "",
				    cnt, kname.len ? kname.s : "uncategorized");
				j = json_skip(&r->doc, j + 1);
			}
			sb_free(&kname);
		}
	}
	free(times);
	free(pids);
	free(gw.w);
	free(gw.maxend1);
	free(gw.argmax);
	free(cw.w);
	free(cw.maxend1);
	free(cw.argmax);
	free(emap);
	emap = NULL;
	nk = na = ncorr = nlaunch = 0;
	strtab_free(tab);
	tab = strtab_new();
	cur_t = -1;
	in_trace = 0;
}
