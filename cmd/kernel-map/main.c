/*
 * kernel-map: attribute each trace's kernels to Python source sites and
 * build the kernel table (kernel-table.md §4-§5, Appendix C).
 *
 * Reads the record stream of trace-extract | trace-stage one trace at a
 * time (the reader's queue mode: its kernels, CPU ops and launches in
 * bounded memory, issue 30), and when a trace's "stats" record arrives
 * turns it into compact per-stage aggregates by passes over them.  Writes "site" records (the payloads) and
 * "kernel_row" records, and passes every record it does not consume.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "km.h"
#include "num.h"
#include "opt.h"
#include "payload.h"
#include "rec.h"
#include "rules.h"
#include "sbuf.h"
#include "trace.h"
#include "xalloc.h"

enum { O_LIMIT = OPT_LONG, O_MAPPING, O_SITES_ONLY };

static const struct opt opts[] = {
	{ "kernel-table-limit", O_LIMIT, "N", "kernel rows shown per stage (0 or less: all)" },
	{ "mapping", O_MAPPING, "FILE", "formal run: the mapping's site records from FILE" },
	{ "sites-only", O_SITES_ONLY, NULL,
	    "mapping run: write only the input, health and site records" },
	{ NULL, 0, NULL, NULL }
};

static const struct tool tool = {
	"[-q] [--kernel-table-limit N] [--mapping FILE | --sites-only]\n"
	" [file]",
	"Attribute kernels to Python sites and build the kernel table from a staged\n"
	"record stream (trace-extract | trace-stage).  Writes \"site\" records (the\n"
	"kernel -> location payloads) and \"kernel_row\" records; frames, CPU ops\n"
	"and corr records are consumed, the rest passes through.  The\n"
	"mapping/formal flow runs it twice: --sites-only on the mapping trace, then\n"
	"--mapping with those sites on the formal trace.",
	opts
};

/* The run: what the options chose and what the traces added up to. */
static struct {
	const char *mapping_file;
	int sites_only;
	int sglang;			/* framework of the latest input record */
	long long kernel_traces;
	sbuf cats;			/* events by category of traces without kernels */
	int staged;			/* a gpu_pids record came: trace-stage ran */
} run = { NULL, 0, 1, 0, SBUF_INIT, 0 };

/*
 * Only the kernels of the selected GPU process are the table's (trace-stage);
 * a trace with Python contexts needs no frames.
 */
static int
keep(void *ctx, struct trace_reader *r, enum rec_type t, const void *rec)
{
	(void)ctx;
	if (t == RT_frame)
		return !r->tr.py_context;
	return 1;	/* kernels: the reader keeps those of the analyzed process (sel_only) */
}

static void
on_line(void *ctx, struct trace_reader *r, enum rec_type t)
{
	struct rec_input in;

	(void)ctx;
	if (t == RT_gpu_pids)
		run.staged = 1;
	/* the mapping's verdicts go on with its sites: the report covers both traces */
	if ((t == RT_health || t == RT_note) && run.sites_only)
		rec_line(r->rd.line, r->rd.len);
	if (t != RT_input)
		return;
	REC_READ(&r->rd, input, &in);
	run.sglang = rstr_eq(in.framework, "sglang");
	if (run.sites_only)	/* the formal run's header needs the mapping's inputs */
		rec_line(r->rd.line, r->rd.len);
}

/* Events by category of a trace without kernels, for the exit-3 message. */
static void
note_categories(const struct trace *tr)
{
	json_doc d = { 0 };
	sbuf name = SBUF_INIT;
	int k, n, i;

	if (!REC_HAS(&tr->stats, stats, by_cat) ||
	    json_parse(&d, tr->stats.by_cat.s, tr->stats.by_cat.n) < 0 ||
	    d.tok[0].type != JSMN_OBJECT) {
		json_doc_free(&d);
		return;
	}
	n = d.tok[0].size;
	for (k = 0, i = 1; k < n; k++, i = json_skip(&d, i + 1)) {
		long long v;
		if (!json_coerce_int(&d, i + 1, &v))
			continue;
		json_str(&d, i, &name, NULL);
		sb_printf(&run.cats, "%s%s %lld", run.cats.len ? ", " : "",
		    name.len ? name.s : "uncategorized", v);
	}
	sb_free(&name);
	json_doc_free(&d);
}

static void
on_trace(void *ctx, struct trace_reader *r, struct trace *tr)
{
	kmtrace_t kt = { 0 };

	(void)ctx;
	if (!trace_kernel_any(tr)) {
		note_categories(tr);
		return;
	}
	kt.tr = tr;
	kt.rd = r;
	kt.sglang = run.sglang;
	run.kernel_traces++;
	process_trace(&kt, run.mapping_file == NULL, !run.sites_only);
	if (run.mapping_file)
		flush_pending();	/* the mapping map is final already */
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
	struct rec_site s;
	char *scope;
	size_t i;

	rec_reader_init(&r, fp, strcmp(path, "-") ? path : "<stdin>");
	while (rec_next(&r)) {
		enum rec_type t = rec_type_of(&r);
		payload_t *p = NULL;
		int global = 0;
		/* the mapping's inputs and notes go on to the report */
		if (t == RT_input || t == RT_note) {
			rec_line(r.line, r.len);
			continue;
		}
		if (t != RT_site)
			continue;
		REC_READ(&r, site, &s);
		scope = rstr_dup(s.scope);
		if (strcmp(scope, "mapping_stage") == 0) {
			char *stage;
			if (!REC_HAS(&s, site, stage))
				rec_die(&r, "site record: a mapping_stage site needs member 'stage'");
			stage = rstr_dup(s.stage);
			p = kernel_map_stage(&km_map, stage, 1);
			free(stage);
		} else if (strcmp(scope, "mapping_global") == 0) {
			global = 1;
		}
		free(scope);
		if (p || global) {
			entry_t e;
			rec_parse(&r);
			if (entry_from_json(&r.doc, 0, &e) < 0)
				rec_die(&r, "site record is not a payload entry");
			if (global)
				kernel_map_add_global(&km_map, &e);
			else
				*payload_add(p) = e;
		}
	}
	kernel_map_end_global(&km_map);
	if (fp != stdin)
		fclose(fp);
	rec_reader_free(&r);
	/* lookups iterate in ascending byte order of the name (§5.4) */
	for (i = 0; i < km_map.nstages; i++)
		if (km_map.stages[i].n)
			xqsort(km_map.stages[i].e, km_map.stages[i].n, sizeof(entry_t), cmp_entry_name);
	if (!km_map.same_stage && km_map.global.n)
		xqsort(km_map.global.e, km_map.global.n, sizeof(entry_t), cmp_entry_name);
}

int
main(int argc, char **argv)
{
	struct trace_reader rd;
	struct trace_ops ops = { 0 };
	const char *errstr, *in = "-";
	FILE *fp;
	int c;

	tool_init(argc, argv);
	while ((c = opt_next(&tool, argc, argv)) != -1) {
		switch (c) {
		case O_LIMIT:
			if (!parse_num(optarg, LLONG_MIN, LLONG_MAX, &km_limit, &errstr))
				opt_bad(&tool, "kernel-table-limit", errstr, optarg);
			break;
		case O_MAPPING:
			run.mapping_file = optarg;
			km_formal_with_mapping = 1;
			break;
		case O_SITES_ONLY:
			run.sites_only = 1;
			break;
		default:
			opt_usage(&tool, EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1) {
		err_msg("one record file at most (got %d)", argc);
		opt_usage(&tool, EXIT_USAGE);
	}
	if (argc == 1)
		in = argv[0];
	if (run.mapping_file && run.sites_only) {
		err_msg("--mapping and --sites-only cannot be combined");
		opt_usage(&tool, EXIT_USAGE);
	}
	if (run.mapping_file && strcmp(run.mapping_file, "-") == 0 && strcmp(in, "-") == 0) {
		err_msg("cannot read both the mapping file and the records from stdin");
		opt_usage(&tool, EXIT_USAGE);
	}

	km_str = strtab_new();
	if (run.mapping_file) {
		load_mapping(run.mapping_file);
		write_mapping_sites();
	}
	ops.collect = TR_MASK(kernel) | TR_MASK(cpu_op) | TR_MASK(launch) | TR_MASK(frame) |
	    TR_MASK(corr);
	/* launches pass: step-stats reads them downstream (graph launches, host gaps) */
	ops.consume = TR_MASK(cpu_op) | TR_MASK(frame) | TR_MASK(corr);
	ops.pass = !run.sites_only;
	ops.keep = keep;
	ops.sel_only = 1;
	ops.queue = 1;	/* kernels, ops and launches in bounded memory (issue 30) */
	ops.on_trace = on_trace;
	ops.on_line = on_line;
	trace_reader_init(&rd, km_str, &ops);
	fp = rec_open(in);
	trace_read(&rd, fp, strcmp(in, "-") == 0 ? "<stdin>" : in);
	if (fp != stdin)
		fclose(fp);

	if (!run.mapping_file)
		finish_mapping(!run.sites_only);
	if (!run.sites_only) {
		flush_pending();
		if (run.kernel_traces == 0) {
			if (rd.ntraces == 0)
				die(EXIT_EMPTY, "no traces in the input");
			if (!run.staged && strstr(run.cats.len ? run.cats.s : "", "kernel"))
				die(EXIT_EMPTY, "no GPU kernels to analyze: the records carry no stages "
				    "(no gpu_pids record), so no kernel is of the analyzed process; run "
				    "trace-stage before kernel-map (events by category: %s)", run.cats.s);
			die(EXIT_EMPTY, "no GPU kernels to analyze in %lld trace%s (events by "
			    "category: %s)", rd.ntraces, rd.ntraces == 1 ? "" : "s",
			    run.cats.len ? run.cats.s : "none");
		}
	}
	trace_reader_free(&rd);
	table_free();
	km_cache_free();
	strtab_free(km_str);
	sb_free(&run.cats);
	return tool_finish(EXIT_OK);
}
