/*
 * kernel-map: attribute each trace's kernels to Python source sites and
 * build the kernel table (kernel-table.md §4-§5, Appendix C).
 *
 * Reads the record stream of trace-extract | trace-stage, keeps one trace
 * at a time, and when a trace's "stats" record arrives turns it into
 * compact per-stage aggregates.  Writes "site" records (the payloads) and
 * "kernel_row" records, and passes every record it does not consume.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "km.h"
#include "num.h"
#include "payload.h"
#include "rec.h"
#include "rules.h"
#include "sbuf.h"
#include "xalloc.h"

static const char *mapping_file;
static int sites_only;
static const char *sites_path;		/* --sites-file */
static FILE *sites_fp;

static rec_reader rd;
static trace_t cur;
static int open_trace;
static int sglang = 1;			/* framework of the latest input record */
static u64map threads;
static uint32_t nthreads;

static long long ntraces, nkernel_traces;
static uint32_t *cat_names;		/* events by category, from stats records */
static long long *cat_counts;
static size_t ncats, capcats;

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "kernel-table-limit", required_argument, NULL, 'n' },
	{ "mapping", required_argument, NULL, 'm' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "sites-file", required_argument, NULL, 'S' },
	{ "sites-only", no_argument, NULL, 's' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static const char usage_text[] =
    "usage: kernel-map [-hq] [--kernel-table-limit n]\n"
    "                  [--mapping file | --sites-only [--sites-file file]] [file]\n";

static void __attribute__((noreturn))
usage(int code)
{
	fputs(usage_text, code ? stderr : stdout);
	exit(code);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
bad_record(const char *fmt, ...)
{
	va_list ap;
	sbuf b = SBUF_INIT;

	va_start(ap, fmt);
	sb_vprintf(&b, fmt, ap);
	va_end(ap);
	die(EXIT_DATA, "%s:%zu: %s", rd.name, rd.lineno, sb_str(&b));
}

/* ---- reading one record's fields ---- */

static uint32_t
get_text(const char *key, int required)
{
	sbuf b = SBUF_INIT;
	int i = rec_get(&rd, key);
	uint32_t id;

	if (i < 0 && required) {
		size_t n;
		const char *t = rec_type(&rd, &n);
		bad_record("%.*s record without '%s'", (int)n, t, key);
	}
	if (json_kind(&rd.doc, i) == JK_STR)
		json_str(&rd.doc, i, &b, NULL);
	else
		json_pystr(&rd.doc, i, &b, NULL);	/* numbers as Python str() */
	id = km_intern(sb_str(&b), b.len);
	sb_free(&b);
	return id;
}

static double
get_num(const char *key)
{
	double v;

	if (!rec_get_num(&rd, key, &v)) {
		size_t n;
		const char *t = rec_type(&rd, &n);
		bad_record("%.*s record without a numeric '%s'", (int)n, t, key);
	}
	return v;
}

static uint32_t
thread_of(uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	uint32_t t = u64map_get(&threads, key);

	if (t == NONE) {
		t = nthreads++;
		u64map_put(&threads, key, t);
	}
	return t;
}

/* The record belongs to the open trace: check its "t". */
static void
need_trace(void)
{
	long long t;

	if (!open_trace)
		bad_record("record outside a trace (no 'trace' record before it)");
	if (!rec_get_int(&rd, "t", &t) || t != cur.t)
		bad_record("record for trace %lld inside trace %lld", t, cur.t);
}

static void
read_kernel(void)
{
	kernel_t *k;
	int sel = 0;
	long long v;
	uint32_t st;

	if (!rec_get_bool(&rd, "sel", &sel) || !sel)
		return;
	need_trace();
	xgrow(&cur.k, &cur.capk, cur.nk + 1, sizeof cur.k[0]);
	k = &cur.k[cur.nk];
	memset(k, 0, sizeof *k);
	k->name = get_text("name", 1);
	k->canon = km_canon(k->name);
	k->category = km_category(k->name);
	k->ts = get_num("ts");
	k->dur = get_num("dur");
	if (rec_get_int(&rd, "external_id", &v)) {
		k->ext = v;
		k->has_ext = 1;
	}
	if (rec_get_int(&rd, "correlation", &v)) {
		k->corr = v;
		k->has_corr = 1;
	}
	st = rec_get(&rd, "stage") >= 0 ? get_text("stage", 0) : cur.stage;
	k->stage = st;
	k->loc = k->stack = k->op = NONE;
	cur.nk++;
}

static void
read_timed(timed_t **arr, size_t *n, size_t *cap, const char *idkey)
{
	timed_t *e;
	uint32_t pid, tid;
	long long v;

	need_trace();
	xgrow(arr, cap, *n + 1, sizeof **arr);
	e = &(*arr)[*n];
	memset(e, 0, sizeof *e);
	e->name = get_text("name", 1);
	pid = get_text("pid", 0);
	tid = get_text("tid", 0);
	e->thread = thread_of(pid, tid);
	e->ts = get_num("ts");
	e->dur = get_num("dur");
	if (rec_get_int(&rd, idkey, &v)) {
		e->id = v;
		e->has_id = 1;
	}
	/* A cpu op without External id may get one from the corr map later. */
	if (!e->has_id && strcmp(idkey, "external_id") == 0 &&
	    rec_get_int(&rd, "correlation", &v)) {
		e->id = v;
		e->has_id = -1;
	}
	(*n)++;
}

static void
read_frame(void)
{
	frame_t *f;
	uint32_t raw, pid, tid;
	struct rec_frame fr;
	static uint32_t lastpid, lasttid;

	xgrow(&cur.fr, &cur.capfr, cur.nfr + 1, sizeof cur.fr[0]);
	f = &cur.fr[cur.nfr];
	if (open_trace && rec_frame(&rd, &fr) && fr.t == cur.t) {
		raw = km_intern(fr.name, fr.name_len);
		if (!fr.same_thread) {
			lastpid = km_intern(fr.pid, fr.pid_len);
			lasttid = km_intern(fr.tid, fr.tid_len);
		}
		pid = lastpid;
		tid = lasttid;
		f->ts = fr.ts;
		f->dur = fr.dur;
	} else {
		need_trace();
		raw = get_text("name", 1);
		pid = get_text("pid", 0);
		tid = get_text("tid", 0);
		f->ts = get_num("ts");
		f->dur = get_num("dur");
	}
	f->thread = thread_of(pid, tid);
	f->norm = km_frame_norm(raw);
	f->prio = km_frame_prio(raw);
	f->seq = (uint32_t)cur.nfr++;
}

static void
read_corr(void)
{
	long long c, x;
	uint32_t i;

	need_trace();
	if (!rec_get_int(&rd, "correlation", &c) || !rec_get_int(&rd, "external_id", &x))
		bad_record("corr record without integer 'correlation' and 'external_id'");
	i = u64map_get(&cur.corr, (uint64_t)c);
	if (i == NONE) {
		xgrow(&cur.corr_ext, &cur.capcorr, cur.ncorr + 1, sizeof cur.corr_ext[0]);
		i = (uint32_t)cur.ncorr++;
		u64map_put(&cur.corr, (uint64_t)c, i);
	}
	cur.corr_ext[i] = x;		/* later entries overwrite (§1.4.6) */
}

static void
read_stats_cats(void)
{
	int o = rec_get(&rd, "by_cat"), i, k, n;
	long long v;
	sbuf b = SBUF_INIT;

	if (json_kind(&rd.doc, o) != JK_OBJ)
		return;
	n = rd.doc.tok[o].size;
	for (k = 0, i = o + 1; k < n; k++, i = json_skip(&rd.doc, i + 1)) {
		uint32_t id;
		size_t j;
		json_str(&rd.doc, i, &b, NULL);
		if (!json_coerce_int(&rd.doc, i + 1, &v))
			continue;
		id = km_intern(sb_str(&b), b.len);
		for (j = 0; j < ncats && cat_names[j] != id; j++)
			;
		if (j == ncats) {
			xgrow(&cat_names, &capcats, ncats + 1, sizeof cat_names[0]);
			cat_counts = xrealloc(cat_counts, capcats * sizeof cat_counts[0]);
			cat_names[j] = id;
			cat_counts[j] = 0;
			ncats++;
		}
		cat_counts[j] += v;
	}
	sb_free(&b);
}

/* ---- output ---- */

static void
open_new_trace(void)
{
	long long t;
	uint32_t path;

	if (open_trace)
		bad_record("trace record inside trace %lld (its stats record is missing)", cur.t);
	if (!rec_get_int(&rd, "t", &t))
		bad_record("trace record without an integer 't'");
	memset(&cur, 0, sizeof cur);
	cur.t = t;
	path = rec_get(&rd, "path") >= 0 ? get_text("path", 0) : km_intern("", 0);
	cur.path = path;
	if (rec_get(&rd, "stage") >= 0)
		cur.stage = get_text("stage", 0);
	else
		cur.stage = km_intern(parse_stage(km_s(path)), strlen(parse_stage(km_s(path))));
	cur.sglang = sglang;
	open_trace = 1;
}

/* The trace's stats record arrived: analyze it and keep only aggregates. */
static void
end_trace(void)
{
	size_t i;

	/* cpu ops without External id take it from the correlation map (§1.4.4) */
	for (i = 0; i < cur.nop; i++) {
		timed_t *o = &cur.op[i];
		if (o->has_id == -1) {
			uint32_t c = u64map_get(&cur.corr, (uint64_t)o->id);
			o->has_id = c != NONE;
			if (c != NONE)
				o->id = cur.corr_ext[c];
		}
	}
	ntraces++;
	if (cur.nk > 0) {
		nkernel_traces++;
		process_trace(&cur, mapping_file == NULL, !sites_only);
		if (mapping_file)
			flush_pending();	/* the mapping map is final already */
	}
	trace_reset(&cur);
	open_trace = 0;
}

static void
read_input_record(void)
{
	sbuf fw = SBUF_INIT;

	if (rec_get_str(&rd, "framework", &fw))
		sglang = strcmp(sb_str(&fw), "sglang") == 0;
	sb_free(&fw);
}

static int
cmp_entry_name(const void *pa, const void *pb)
{
	return strcmp(((const entry_t *)pa)->kernel, ((const entry_t *)pb)->kernel);
}

/* --mapping FILE: the mapping map from its site records; its input records are echoed. */
static void
load_mapping(const char *path)
{
	FILE *fp = rec_open(path);
	rec_reader r;
	sbuf scope = SBUF_INIT, stage = SBUF_INIT;
	size_t i;

	rec_reader_init(&r, fp, path);
	while (rec_next(&r)) {
		if (rec_is(&r, "input")) {
			rec_line(r.line, r.len);
			continue;
		}
		if (!rec_is(&r, "site"))
			continue;
		if (!rec_get_str(&r, "scope", &scope))
			die(EXIT_DATA, "%s:%zu: site record without 'scope'", path, r.lineno);
		if (strcmp(scope.s, "mapping_stage") == 0) {
			payload_t *p;
			if (!rec_get_str(&r, "stage", &stage))
				die(EXIT_DATA, "%s:%zu: mapping_stage site without 'stage'", path, r.lineno);
			p = kernel_map_stage(&km_map, sb_str(&stage), 1);
			if (entry_from_json(&r.doc, 0, payload_add(p)) < 0)
				die(EXIT_DATA, "%s:%zu: site record without 'kernel'", path, r.lineno);
		} else if (strcmp(scope.s, "mapping_global") == 0) {
			if (entry_from_json(&r.doc, 0, payload_add(&km_map.global)) < 0)
				die(EXIT_DATA, "%s:%zu: site record without 'kernel'", path, r.lineno);
		}
	}
	if (fp != stdin)
		fclose(fp);
	rec_reader_free(&r);
	sb_free(&scope);
	sb_free(&stage);
	/* lookups iterate in ascending byte order of the name (§5.4) */
	for (i = 0; i < km_map.nstages; i++)
		if (km_map.stages[i].n)
			qsort(km_map.stages[i].e, km_map.stages[i].n, sizeof(entry_t), cmp_entry_name);
	if (km_map.global.n)
		qsort(km_map.global.e, km_map.global.n, sizeof(entry_t), cmp_entry_name);
}

static void
no_kernels(void)
{
	sbuf b = SBUF_INIT;
	size_t i;

	for (i = 0; i < ncats; i++)
		sb_printf(&b, "%s%s %lld", i ? ", " : "",
		    *km_s(cat_names[i]) ? km_s(cat_names[i]) : "uncategorized", cat_counts[i]);
	if (ntraces == 0)
		die(EXIT_EMPTY, "no traces in the input");
	die(EXIT_EMPTY, "no GPU kernels to analyze in %lld trace%s (events by category: %s)",
	    ntraces, ntraces == 1 ? "" : "s", b.len ? b.s : "none");
}

int
main(int argc, char **argv)
{
	const char *errstr, *in = "-";
	FILE *fp;
	size_t tn;
	const char *type;
	int c;

	tool_init(argc, argv);
	while ((c = getopt_long(argc, argv, "hq", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(0);
		case 'm':
			mapping_file = optarg;
			break;
		case 'n':
			if (!parse_num(optarg, LLONG_MIN, LLONG_MAX, &km_limit, &errstr)) {
				warnx("bad --kernel-table-limit value, %s: %s", errstr, optarg);
				usage(EXIT_USAGE);
			}
			break;
		case 'q':
			quiet = 1;
			break;
		case 's':
			sites_only = 1;
			break;
		case 'S':
			sites_path = optarg;
			break;
		case 'V':
			print_version();
		default:
			usage(EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1)
		usage(EXIT_USAGE);
	if (argc == 1)
		in = argv[0];
	if (mapping_file && sites_only) {
		warnx("--mapping and --sites-only cannot be combined");
		usage(EXIT_USAGE);
	}
	if (sites_path && !sites_only) {
		warnx("--sites-file goes with --sites-only");
		usage(EXIT_USAGE);
	}
	if (sites_path && !(sites_fp = fopen(sites_path, "w")))
		die(EXIT_DATA, "cannot create '%s': %s", sites_path, strerror(errno));
	if (mapping_file && strcmp(mapping_file, "-") == 0 && strcmp(in, "-") == 0) {
		warnx("cannot read both the mapping file and the records from stdin");
		usage(EXIT_USAGE);
	}

	km_str = strtab_new();
	if (mapping_file) {
		load_mapping(mapping_file);
		write_mapping_sites();
	}
	fp = rec_open(in);
	rec_reader_init(&rd, fp, strcmp(in, "-") == 0 ? "<stdin>" : in);
	while (rec_next(&rd)) {
		int pass = 1;

		type = rec_type(&rd, &tn);
#define IS(s) (tn == sizeof(s) - 1 && memcmp(type, s, tn) == 0)
		if (IS("kernel")) {
			read_kernel();
		} else if (IS("cpu_op")) {
			read_timed(&cur.op, &cur.nop, &cur.capop, "external_id");
			pass = sites_only;
		} else if (IS("launch")) {
			read_timed(&cur.ln, &cur.nln, &cur.capln, "correlation");
			pass = sites_only;
		} else if (IS("frame")) {
			read_frame();
			pass = sites_only;
		} else if (IS("corr")) {
			read_corr();
			pass = sites_only;
		} else if (IS("trace")) {
			open_new_trace();
		} else if (IS("input")) {
			read_input_record();
		} else if (IS("stats")) {
			need_trace();
			read_stats_cats();
			/* the trace's site (and, with --mapping, row) records precede its stats */
			{
				char *line = xstrndup(rd.line, rd.len);
				size_t len = rd.len;
				end_trace();
				rec_line(line, len);
				free(line);
			}
			pass = 0;
		}
		/* what a later kernel-map --mapping reads: inputs and sites */
		if (pass && sites_fp && (IS("input") || IS("site")))
			fprintf(sites_fp, "%.*s\n", (int)rd.len, rd.line);
#undef IS
		if (pass)
			rec_line(rd.line, rd.len);
	}
	if (open_trace)
		die(EXIT_DATA, "%s: input truncated: trace %lld has no stats record", rd.name, cur.t);
	if (fp != stdin)
		fclose(fp);
	rec_reader_free(&rd);

	if (!mapping_file) {
		finish_mapping();
		rec_also(sites_fp);
		write_mapping_sites();
		rec_also(NULL);
	}
	if (sites_fp && (ferror(sites_fp) | fclose(sites_fp)))
		die(EXIT_DATA, "cannot write '%s': %s", sites_path, strerror(errno));
	if (!sites_only)
		flush_pending();
	if (!sites_only && nkernel_traces == 0)
		no_kernels();
	if (sites_only && nkernel_traces == 0)
		warn_msg("no GPU kernels in the mapping input; the mapping map is empty");
	table_free();
	u64map_free(&threads);
	strtab_free(km_str);
	return tool_finish(EXIT_OK);
}
