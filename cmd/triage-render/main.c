/*
 * triage-render: turn the record stream into the triage report people and
 * machines read: markdown (default), one self-contained HTML page, CSV or
 * TSV of one table, one JSON document, or the records themselves (jsonl).
 * With --bundle, the runs of a stream (each opened by a "run" record)
 * become one document grouped by model and framework, with a table of
 * contents.  With --compat reference, the reference analyzer's layout
 * (compat.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "esc.h"
#include "ofile.h"
#include "opt.h"
#include "rec.h"
#include "render.h"
#include "rules.h"
#include "xalloc.h"

enum { O_BUNDLE = OPT_LONG, O_NAMES, O_TABLE, O_RAW_CELLS, O_COPY, O_CHECK_OUTPUT, O_STATS,
	O_NO_LINK };

static const struct opt opts[] = {
	{ "bundle", O_BUNDLE, NULL, "one document of many runs (each opened by a run record)" },
	{ "format", 'f', "FMT", "md (default), html, json (one document), jsonl (the records), "
	    "csv or tsv (one table)" },
	{ "names", O_NAMES, "WHICH", "short (default in md and html) or full kernel names" },
	{ "output", 'o', "PATH", "write to PATH instead of stdout, whole or not at all (- is "
	    "stdout); with csv or tsv, a directory (ending in /) gets one file per table" },
	{ "raw-cells", O_RAW_CELLS, NULL, "csv/tsv: no ' before cells that start like a formula" },
	{ "stats", O_STATS, NULL, "md and html: the kernel table's duration statistics per launch "
	    "(mean, min, max, p50, p90) in place of its Python and CPU-op columns" },
	{ "table", O_TABLE, "NAME", "csv/tsv: kernel (default), overlap, fuse, fuse_in_use, gpu, "
	    "step, escape, rank, collective, rank_kernel, health, verdict, diff_gpu, diff, "
	    "diff_fuse, diff_overlap, runs (checked before the records are read)" },
	{ "copy", O_COPY, "FILE", "write FILE unchanged to -o PATH by the same rules (for triage)" },
	{ "check-output", O_CHECK_OUTPUT, NULL, "only check that -o PATH can be written (exit 0 or 2)" },
	{ "no-link", O_NO_LINK, NULL, "refuse an -o PATH that is a symbolic link (a name triage made)" },
	{ NULL, 0, NULL, NULL }
};

static const struct tool tool = {
	"[-q] [-f md|html|json|jsonl|csv|tsv] [-o PATH]\n"
	" [--table NAME] [--bundle] [--names short|full] [--stats]\n"
	" [--raw-cells] [file ...]\n"
	"--copy FILE -o PATH\n"
	"--check-output -o PATH",
	"Render the triage report from the record stream of the filters\n"
	"(triage-records(5)): kernel, overlap and fuse rows, notes, and the sections\n"
	"of step-stats, trace-health and rank-skew when their records are there.",
	opts
};

static struct {
	int fmt;
	int bundle;
	const char *out;
	const char *table;
	sbuf records;		/* jsonl: the records as they came */
	struct run *runs;
	size_t nruns, capruns;
	struct doc *docs, **dps;	/* render's, held here so that an exit leaves them reachable */
	struct doc summary;	/* a bundle's */
} R = { F_MD, 0, NULL, NULL, SBUF_INIT, NULL, 0, 0, NULL, NULL, { 0 } };

int names_full;
int raw_cells;

static struct run *
new_run(const char *label)
{
	struct run *r;

	xgrow(&R.runs, &R.capruns, R.nruns + 1, sizeof *R.runs);
	r = &R.runs[R.nruns++];
	memset(r, 0, sizeof *r);
	r->label = label ? xstrdup(label) : NULL;
	return r;
}

static void
read_stream(FILE *fp, const char *name)
{
	rec_reader r;

	rec_reader_init(&r, fp, name);
	while (rec_next(&r)) {
		enum rec_type t = rec_type_of(&r);
		if (compat_reference) {
			compat_record(&r);
			continue;
		}
		if (R.fmt == F_JSONL) {
			sb_add(&R.records, r.line, r.len);
			sb_addc(&R.records, '\n');
			continue;
		}
		if (t == RT_run && R.bundle) {
			struct rec_run x;
			char *label;
			REC_READ(&r, run, &x);
			label = rstr_dup(x.label);
			new_run(label);
			free(label);
			continue;
		}
		if (R.nruns == 0)
			new_run(NULL);
		run_add(&R.runs[R.nruns - 1], &r);
	}
	rec_reader_free(&r);
}

/* Bundles: runs grouped by model, then framework, then their order. */
static int
cmp_doc(const void *pa, const void *pb)
{
	const struct doc *a = *(const struct doc *const *)pa, *b = *(const struct doc *const *)pb;
	int c = strcmp(a->model ? a->model : "~", b->model ? b->model : "~");

	if (c)
		return c;
	c = strcmp(a->framework ? a->framework : "", b->framework ? b->framework : "");
	return c ? c : (a < b ? -1 : a > b);
}

/* A bundle's framework group: its display name, or that none was detected. */
static const char *
fw_group(const char *fw)
{
	if (!fw || strcmp(fw, "none") == 0)
		return "PyTorch (no serving framework detected)";
	return framework_display(fw);
}

static void
md_bundle(struct doc **docs, size_t n, const struct doc *summary, sbuf *out)
{
	size_t i;
	const char *gm = NULL, *gf = NULL;

	sb_printf(out, "# Triage bundle: %zu run%s\n\n", n, n == 1 ? "" : "s");
	if (summary) {
		sb_adds(out, "## Summary\n\n");
		md_table_of(summary, out);
	}
	sb_adds(out, "## Contents\n\n");
	for (i = 0; i < n; i++) {
		const char *m = docs[i]->model ? docs[i]->model : "(model unknown)";
		const char *f = fw_group(docs[i]->framework);
		/* model ids and run labels are text, escaped like every name (issue 27) */
		if (!gm || strcmp(gm, m) != 0) {
			sb_adds(out, "- ");
			esc_md(m, strlen(m), 0, out);
			sb_addc(out, '\n');
			gf = NULL;
		}
		if (!gf || strcmp(gf, f) != 0) {
			sb_adds(out, "  - ");
			esc_md(f, strlen(f), 0, out);
			sb_addc(out, '\n');
		}
		sb_adds(out, "    - [");
		esc_md(docs[i]->title, strlen(docs[i]->title), 0, out);
		sb_printf(out, "](#run-%zu)\n", i + 1);
		gm = m;
		gf = f;
	}
	sb_addc(out, '\n');
	gm = gf = NULL;
	for (i = 0; i < n; i++) {
		const char *m = docs[i]->model ? docs[i]->model : "(model unknown)";
		const char *f = fw_group(docs[i]->framework);
		if (!gm || strcmp(gm, m) != 0 || strcmp(gf, f) != 0) {
			sb_adds(out, "## ");
			esc_md(m, strlen(m), 0, out);
			sb_adds(out, ": ");
			esc_md(f, strlen(f), 0, out);
			sb_adds(out, "\n\n");
		}
		sb_printf(out, "<a id=\"run-%zu\"></a>\n\n", i + 1);
		md_write(docs[i], 3, out);
		gm = m;
		gf = f;
	}
	md_legend(out, 1);
}

/*
 * Write text to path whole or not at all (common/ofile.h); exits on failure.
 * made: a name the renderer made (a table's file in a directory), never
 * written through a link.
 */
static void
write_file(const char *path, const sbuf *text, int made)
{
	sbuf why = SBUF_INIT;
	int rc = (made ? ofile_put_made : ofile_put)(path, text->s ? text->s : "", text->len,
	    &why);

	if (rc != 0)
		die(rc, "%s", why.s);
	sb_free(&why);
}

/* --copy FILE: FILE's bytes to path as they are, streamed (made: --no-link). */
static void
copy_file(const char *src, const char *path, int made)
{
	struct ofile o;
	sbuf why = SBUF_INIT;
	char buf[1 << 16];
	FILE *fp = strcmp(src, "-") ? fopen(src, "rb") : stdin;
	size_t n;
	int rc;

	if (!fp)
		die(EXIT_DATA, "cannot open '%s': %s", src, strerror(errno));
	if ((rc = (made ? ofile_open_made : ofile_open)(&o, path, &why)) != 0)
		die(rc, "%s", why.s);
	while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
		if ((rc = ofile_write(&o, buf, n, &why)) != 0)
			die(rc, "%s", why.s);
	if (ferror(fp)) {
		int e = errno;
		ofile_abort(&o);
		die(EXIT_DATA, "cannot read '%s': %s", src, strerror(e));
	}
	if ((rc = ofile_commit(&o, &why)) != 0)
		die(rc, "%s", why.s);
	if (fp != stdin)
		fclose(fp);
	sb_free(&why);
}

static int
is_dir_path(const char *p)
{
	struct stat st;
	size_t n = strlen(p);

	return (n && p[n - 1] == '/') || (stat(p, &st) == 0 && S_ISDIR(st.st_mode));
}

/*
 * A bundle as CSV or TSV: the summary's "runs" table, or one table of
 * every run (the kernel table by default), the run's label first.
 */
static void
bundle_dsv(struct doc **dp, size_t n, const struct doc *summary, const char *table, char sep,
    sbuf *out)
{
	const char *t = table ? table : doc_default_table(dp[0]);

	if (strcmp(t, "runs") == 0) {
		if (!summary || dsv_write(summary, "runs", sep, out) < 0)
			die(EXIT_USAGE, "no table 'runs': a bundle of two runs or more has it");
		return;
	}
	if (dsv_write_bundle((struct doc *const *)dp, n, t, sep, out) == 0)
		die(EXIT_USAGE, "no run of the bundle has a table '%s'", t);
}

/* csv/tsv into a directory: one file per table of the (first) run (--table: that one). */
static void
dsv_dir(struct doc **docs, char sep)
{
	const char *ids[32];
	size_t n = docs ? doc_table_ids(docs[0], ids, 32) : 0, i;

	if (R.table) {
		for (i = 0; i < n && strcmp(ids[i], R.table) != 0; i++)
			;
		if (i == n)
			die(EXIT_USAGE, "no table '%s' in this report", R.table);
		ids[0] = ids[i];
		n = 1;
	}
	sbuf path = SBUF_INIT, text = SBUF_INIT;

	if (mkdir(R.out, 0777) != 0 && errno != EEXIST)
		die(EXIT_DATA, "cannot create directory '%s': %s", R.out, strerror(errno));
	/* the names are made here: a link planted at any of them refuses all, first */
	for (int pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			sb_reset(&path);
			sb_printf(&path, "%s%s%s.%s", R.out,
			    R.out[strlen(R.out) - 1] == '/' ? "" : "/", ids[i], sep == ',' ? "csv" : "tsv");
			if (pass == 0) {
				sbuf why = SBUF_INIT;
				int rc = ofile_no_link(path.s, &why);
				if (rc)
					die(rc, "%s", why.s);
				sb_free(&why);
				continue;
			}
			sb_reset(&text);
			dsv_write(docs[0], ids[i], sep, &text);
			write_file(path.s, &text, 1);
		}
	sb_free(&path);
	sb_free(&text);
}

static void
render(sbuf *text)
{
	struct doc *d = xcalloc(R.nruns ? R.nruns : 1, sizeof *d), **dp, *summary = NULL;
	size_t i, n = R.nruns;

	if (n == 0) {
		new_run(NULL);
		n = 1;
	}
	dp = R.dps = xcalloc(n, sizeof *dp);
	R.docs = d;
	for (i = 0; i < n; i++) {
		doc_build(&R.runs[i], &d[i]);
		if (R.runs[i].label) {
			free(d[i].title);
			d[i].title = xstrdup(R.runs[i].label);
		}
		dp[i] = &d[i];
	}
	if (R.bundle && n > 1)
		xqsort(dp, n, sizeof *dp, cmp_doc);
	if (R.bundle && n > 1) {
		/* the summary's rows in the bundle's order: each doc with its run */
		struct run *rs = xcalloc(n, sizeof *rs);
		for (i = 0; i < n; i++)
			rs[i] = R.runs[dp[i] - d];
		bundle_summary(rs, (const struct doc *const *)dp, n, &R.summary);
		free(rs);
		summary = &R.summary;
	}
	switch (R.fmt) {
	case F_HTML:
		html_write((const struct doc *const *)dp, n, summary,
		    n > 1 ? "Triage bundle" : dp[0]->title, text);
		break;
	case F_JSON:
		jsondoc_write((const struct doc *const *)dp, n, summary, text);
		break;
	case F_CSV:
	case F_TSV:
		if (R.out && is_dir_path(R.out)) {
			dsv_dir(dp, R.fmt == F_CSV ? ',' : '\t');
			break;
		}
		if (R.bundle && n > 1) {
			/* one table of every run, a run column first; the summary is "runs" */
			bundle_dsv(dp, n, summary, R.table, R.fmt == F_CSV ? ',' : '\t', text);
			break;
		}
		if (dsv_write(dp[0], R.table ? R.table : doc_default_table(dp[0]),
		    R.fmt == F_CSV ? ',' : '\t', text) < 0) {
			const char *ids[32];
			size_t k, nid = doc_table_ids(dp[0], ids, 32);
			sbuf l = SBUF_INIT;
			for (k = 0; k < nid; k++)
				sb_printf(&l, "%s%s", k ? ", " : "", ids[k]);
			die(EXIT_USAGE, "no table '%s' in this report; it has: %s", R.table,
			    nid ? l.s : "none");
		} else {
			const char *t = R.table ? R.table : doc_default_table(dp[0]);
			const char *why = dsv_empty_reason(dp[0], t);
			if (why)
				note_msg("the %s table has no rows: %s", t, why);
		}
		break;
	default:
		if (R.bundle) {
			md_bundle(dp, n, summary, text);
		} else {
			for (i = 0; i < n; i++)
				md_write(dp[i], 1, text);
			if (n && !doc_is_diff(dp[0]))	/* a diff has its own words */
				md_legend(text, 1);
		}
		break;
	}
	for (i = 0; i < n; i++)
		doc_free(&d[i]);
	doc_free(&R.summary);
	free(d);
	free(dp);
	R.docs = NULL;
	R.dps = NULL;
}

int
main(int argc, char **argv)
{
	sbuf text = SBUF_INIT, why = SBUF_INIT;
	const char *copy_src = NULL;
	int c, i, check_only = 0, no_link = 0, rc;

	tool_init(argc, argv);
	while ((c = opt_next(&tool, argc, argv)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "md") || !strcmp(optarg, "markdown"))
				R.fmt = F_MD;
			else if (!strcmp(optarg, "json"))
				R.fmt = F_JSON;
			else if (!strcmp(optarg, "jsonl"))
				R.fmt = F_JSONL;
			else if (!strcmp(optarg, "csv"))
				R.fmt = F_CSV;
			else if (!strcmp(optarg, "tsv"))
				R.fmt = F_TSV;
			else if (!strcmp(optarg, "html"))
				R.fmt = F_HTML;
			else
				opt_bad(&tool, "format", "not md, html, json, jsonl, csv or tsv", optarg);
			break;
		case 'o':
			R.out = optarg;
			break;
		case O_BUNDLE:
			R.bundle = 1;
			break;
		case O_NAMES:
			if (strcmp(optarg, "short") && strcmp(optarg, "full"))
				opt_bad(&tool, "names", "not short or full", optarg);
			names_full = strcmp(optarg, "full") == 0;
			break;
		case O_TABLE:
			/* a table no report has is an error now, before any record is read */
			if (!is_table_id(optarg)) {
				sbuf l = SBUF_INIT;
				size_t k;
				for (k = 0; table_ids[k]; k++)
					sb_printf(&l, "%s%s", k ? ", " : "", table_ids[k]);
				err_msg("bad --table value, not a table of the report (%s): %s", l.s,
				    optarg);
				sb_free(&l);
				opt_usage(&tool, EXIT_USAGE);
			}
			R.table = optarg;
			break;
		case O_STATS:
			stats_view = 1;
			break;
		case O_RAW_CELLS:
			raw_cells = 1;
			break;
		case O_COPY:
			copy_src = optarg;
			break;
		case O_CHECK_OUTPUT:
			check_only = 1;
			break;
		case O_NO_LINK:
			no_link = 1;
			break;
		default:
			opt_usage(&tool, EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (R.out && strcmp(R.out, "-") == 0)
		R.out = NULL;	/* -o -: standard output */
	if (no_link && R.out && (rc = ofile_no_link(R.out, &why)) != 0)
		die(rc, "%s", why.s);
	if (check_only || copy_src) {
		if (argc > 0) {
			err_msg("--copy and --check-output take no operands");
			opt_usage(&tool, EXIT_USAGE);
		}
		if (check_only && (rc = ofile_check(R.out ? R.out : "-", &why)) != 0)
			die(rc, "%s", why.s);
		if (copy_src)
			copy_file(copy_src, R.out ? R.out : "-", no_link);
		sb_free(&why);
		return tool_finish(EXIT_OK);
	}
	/* a target that cannot work is exit 2 now, not after reading the records */
	if (R.out && !((R.fmt == F_CSV || R.fmt == F_TSV) && is_dir_path(R.out)) &&
	    (rc = ofile_check(R.out, &why)) != 0)
		die(rc, "%s", why.s);
	if (compat_reference && (R.fmt == F_HTML || R.fmt == F_JSONL || R.bundle)) {
		err_msg("--compat reference has the reference's formats only: md, json, csv, tsv");
		opt_usage(&tool, EXIT_USAGE);
	}
	if (R.table && R.fmt != F_CSV && R.fmt != F_TSV) {
		err_msg("--table goes with --format csv or tsv");
		opt_usage(&tool, EXIT_USAGE);
	}
	for (i = 0; i < (argc ? argc : 1); i++) {
		const char *name = argc ? argv[i] : "-";
		FILE *fp = rec_open(name);
		read_stream(fp, strcmp(name, "-") ? name : "<stdin>");
		if (fp != stdin)
			fclose(fp);
	}
	rec_require_records();	/* no report of nothing */
	if (compat_reference)
		compat_report(R.fmt, &text);
	else if (R.fmt == F_JSONL)
		sb_add(&text, R.records.s ? R.records.s : "", R.records.len);
	else
		render(&text);
	if (R.out && !((R.fmt == F_CSV || R.fmt == F_TSV) && is_dir_path(R.out)))
		write_file(R.out, &text, no_link);
	else if (!R.out)
		fwrite(text.s ? text.s : "", 1, text.len, stdout);
	for (i = 0; i < (int)R.nruns; i++)
		run_free(&R.runs[i]);
	free(R.runs);
	sb_free(&R.records);
	sb_free(&text);
	return tool_finish(EXIT_OK);
}
