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
#include "opt.h"
#include "rec.h"
#include "render.h"
#include "rules.h"
#include "xalloc.h"

enum { O_BUNDLE = OPT_LONG, O_NAMES, O_TABLE };

static const struct opt opts[] = {
	{ "bundle", O_BUNDLE, NULL, "one document of many runs (each opened by a run record)" },
	{ "format", 'f', "FMT", "md (default), html, json (one document), jsonl (the records),\n"
	    "                           csv or tsv (one table)" },
	{ "names", O_NAMES, "WHICH", "short (default in md and html) or full kernel names" },
	{ "output", 'o', "PATH", "write to PATH instead of stdout; with csv or tsv, a directory\n"
	    "                           (ending in /) gets one file per table" },
	{ "table", O_TABLE, "NAME", "csv/tsv: kernel (default), overlap, fuse, fuse_in_use, ..." },
	{ NULL, 0, NULL, NULL }
};

static const struct tool tool = {
	"[-q] [-f md|html|json|jsonl|csv|tsv] [-o PATH] [--table NAME] [--bundle]\n"
	" [--names short|full] [file ...]",
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
} R = { F_MD, 0, NULL, NULL, SBUF_INIT, NULL, 0, 0 };

int names_full;

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
md_bundle(struct doc **docs, size_t n, sbuf *out)
{
	size_t i;
	const char *gm = NULL, *gf = NULL;

	sb_printf(out, "# Triage bundle: %zu run%s\n\n## Contents\n\n", n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		const char *m = docs[i]->model ? docs[i]->model : "(model unknown)";
		const char *f = fw_group(docs[i]->framework);
		if (!gm || strcmp(gm, m) != 0) {
			sb_printf(out, "- %s\n", m);
			gf = NULL;
		}
		if (!gf || strcmp(gf, f) != 0)
			sb_printf(out, "  - %s\n", f);
		sb_printf(out, "    - [%s](#run-%zu)\n", docs[i]->title, i + 1);
		gm = m;
		gf = f;
	}
	sb_addc(out, '\n');
	gm = gf = NULL;
	for (i = 0; i < n; i++) {
		const char *m = docs[i]->model ? docs[i]->model : "(model unknown)";
		const char *f = fw_group(docs[i]->framework);
		if (!gm || strcmp(gm, m) != 0 || strcmp(gf, f) != 0)
			sb_printf(out, "## %s: %s\n\n", m, f);
		sb_printf(out, "<a id=\"run-%zu\"></a>\n\n", i + 1);
		md_write(docs[i], 3, out);
		gm = m;
		gf = f;
	}
	md_legend(out, 1);
}

/* Write text to path atomically: a temporary file beside it, then rename. */
static void
write_file(const char *path, const sbuf *text)
{
	sbuf tmp = SBUF_INIT;
	FILE *fp;

	sb_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	if (!(fp = fopen(tmp.s, "w")))
		die(EXIT_DATA, "cannot write '%s': %s", path, strerror(errno));
	if (fwrite(text->s ? text->s : "", 1, text->len, fp) != text->len || fflush(fp) != 0 ||
	    ferror(fp)) {
		int e = errno;
		fclose(fp);
		unlink(tmp.s);
		die(EXIT_DATA, "write error on '%s': %s", path, strerror(e));
	}
	if (fclose(fp) != 0 || rename(tmp.s, path) != 0) {
		int e = errno;
		unlink(tmp.s);
		die(EXIT_DATA, "cannot write '%s': %s", path, strerror(e));
	}
	sb_free(&tmp);
}

static int
is_dir_path(const char *p)
{
	struct stat st;
	size_t n = strlen(p);

	return (n && p[n - 1] == '/') || (stat(p, &st) == 0 && S_ISDIR(st.st_mode));
}

/* csv/tsv into a directory: one file per table of the (first) run. */
static void
dsv_dir(struct doc **docs, char sep)
{
	const char *ids[32];
	size_t n = docs ? doc_table_ids(docs[0], ids, 32) : 0, i;
	sbuf path = SBUF_INIT, text = SBUF_INIT;

	if (mkdir(R.out, 0777) != 0 && errno != EEXIST)
		die(EXIT_DATA, "cannot create directory '%s': %s", R.out, strerror(errno));
	for (i = 0; i < n; i++) {
		sb_reset(&path);
		sb_reset(&text);
		sb_printf(&path, "%s%s%s.%s", R.out, R.out[strlen(R.out) - 1] == '/' ? "" : "/",
		    ids[i], sep == ',' ? "csv" : "tsv");
		dsv_write(docs[0], ids[i], sep, &text);
		write_file(path.s, &text);
	}
	sb_free(&path);
	sb_free(&text);
}

static void
render(sbuf *text)
{
	struct doc *d = xcalloc(R.nruns ? R.nruns : 1, sizeof *d), **dp;
	size_t i, n = R.nruns;

	if (n == 0) {
		new_run(NULL);
		n = 1;
	}
	dp = xcalloc(n, sizeof *dp);
	for (i = 0; i < n; i++) {
		doc_build(&R.runs[i], &d[i]);
		if (R.runs[i].label) {
			free(d[i].title);
			d[i].title = xstrdup(R.runs[i].label);
		}
		dp[i] = &d[i];
	}
	if (R.bundle && n > 1)
		qsort(dp, n, sizeof *dp, cmp_doc);
	switch (R.fmt) {
	case F_HTML:
		html_write((const struct doc *const *)dp, n, n > 1 ? "Triage bundle" : dp[0]->title,
		    text);
		break;
	case F_JSON:
		jsondoc_write((const struct doc *const *)dp, n, text);
		break;
	case F_CSV:
	case F_TSV:
		if (R.out && is_dir_path(R.out)) {
			dsv_dir(dp, R.fmt == F_CSV ? ',' : '\t');
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
		}
		break;
	default:
		if (R.bundle) {
			md_bundle(dp, n, text);
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
	free(d);
	free(dp);
}

int
main(int argc, char **argv)
{
	sbuf text = SBUF_INIT;
	int c, i;

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
			R.table = optarg;
			break;
		default:
			opt_usage(&tool, EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (compat_reference && (R.fmt == F_HTML || R.fmt == F_JSONL || R.bundle)) {
		warnx("--compat reference has the reference's formats only: md, json, csv, tsv");
		opt_usage(&tool, EXIT_USAGE);
	}
	if (R.table && R.fmt != F_CSV && R.fmt != F_TSV) {
		warnx("--table goes with --format csv or tsv");
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
		write_file(R.out, &text);
	else if (!R.out)
		fwrite(text.s ? text.s : "", 1, text.len, stdout);
	for (i = 0; i < (int)R.nruns; i++)
		run_free(&R.runs[i]);
	free(R.runs);
	sb_free(&R.records);
	sb_free(&text);
	return tool_finish(EXIT_OK);
}
