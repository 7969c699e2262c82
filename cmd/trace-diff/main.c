/*
 * trace-diff: compare the records of two runs, a baseline and a candidate
 * (each a pipeline's output or a saved `triage --format jsonl` report),
 * stage by stage: kernel by kernel (diff_row), GPU time figures
 * (diff_metric), fusions and overlap rows, and one verdict per stage and
 * overall.  With --gate, a stage whose GPU time per step grew by more
 * than the gate ends the run with exit 5 (a CI gate); runs of another
 * model, framework or stages end it with exit 6 unless --force (issue 17).
 *
 * The candidate is the input stream and passes through (unless
 * --no-pass); the baseline is a file.  The comparison follows at the end.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "err.h"
#include "num.h"
#include "opt.h"
#include "rec.h"
#include "xalloc.h"

enum { O_BASELINE = OPT_LONG, O_FORCE, O_GATE, O_NO_PASS, O_WHOLE };

static const struct opt opts[] = {
	{ "baseline", O_BASELINE, "FILE", "the baseline run's records (required; - for stdin)" },
	{ "force", O_FORCE, NULL, "compare runs of another model, framework or stages (no exit 6)" },
	{ "gate", O_GATE, "PCT", "exit 5 when a stage's GPU time per step grows by more than PCT %" },
	{ "no-pass", O_NO_PASS, NULL, "write only trace-diff's records, not the candidate's" },
	{ "quiet", 'q', NULL, "no warnings" },
	{ "whole-run", O_WHOLE, NULL, "compare each run as a whole: all its stages as one (\"all\")" },
	{ NULL, 0, NULL, NULL }
};

static const struct tool tool = {
	"[-q] --baseline FILE [--gate PCT] [--force] [--no-pass]\n"
	" [--whole-run] [file]",
	"Compare two runs' records (triage-records(5)), the candidate (file or stdin)\n"
	"with the baseline (--baseline FILE): per stage and kernel, matched by name\n"
	"then by family (diff_row); GPU time figures (diff_metric); fuse-row\n"
	"transitions (diff_fuse); overlap rows (diff_overlap); a verdict per stage\n"
	"and overall.  Times are per step when the step counts differ.  Exit 5: a\n"
	"stage regressed beyond --gate; exit 6: the runs are not comparable.",
	opts
};

/* --gate: a percentage, finite and not negative. */
static double
parse_pct(const char *s)
{
	double v;

	if (!num_py_float(s, strlen(s), &v) || !isfinite(v))
		opt_bad(&tool, "gate", "not a number", s);
	if (v < 0)
		opt_bad(&tool, "gate", "negative", s);
	return v;
}

static void
read_side(struct side *s, strtab *str, const char *path, int pass, int whole)
{
	FILE *fp = rec_open(path);
	const char *name = strcmp(path, "-") ? path : "<stdin>";

	side_read(s, str, fp, name, pass, whole);
	if (fp != stdin)
		fclose(fp);
}

/* A side without kernel rows: nothing to compare (exit 3), saying what it holds. */
static void
check_side(const struct side *s, const char *path)
{
	const char *name = strcmp(path, "-") ? path : "<stdin>";

	if (s->rows)
		return;
	fflush(stdout);
	if (s->diffs)
		die(EXIT_EMPTY, "nothing to compare: the %s '%s' holds trace-diff records, not a "
		    "run's (give the records of one run: triage --format jsonl)", s->what, name);
	die(EXIT_EMPTY, "nothing to compare: the %s '%s' has no kernel_row records (run "
	    "kernel-map, or save a report with triage --format jsonl)", s->what, name);
}

int
main(int argc, char **argv)
{
	struct side base, cand;
	struct opts o = { DIFF_THRESHOLD_PCT, 0, 0 };
	const char *baseline = NULL, *in = "-";
	strtab *str;
	int c, pass = 1, whole = 0, status;

	tool_init(argc, argv);
	while ((c = opt_next(&tool, argc, argv)) != -1) {
		switch (c) {
		case O_BASELINE:
			baseline = optarg;
			break;
		case O_FORCE:
			o.force = 1;
			break;
		case O_GATE:
			o.threshold = parse_pct(optarg);
			o.gate = 1;
			break;
		case O_WHOLE:
			whole = 1;
			break;
		case O_NO_PASS:
			pass = 0;
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			opt_usage(&tool, EXIT_USAGE);
		}
	}
	if (argc - optind > 1) {
		err_msg("one candidate file at most (got %d)", argc - optind);
		opt_usage(&tool, EXIT_USAGE);
	}
	if (optind < argc)
		in = argv[optind];
	if (!baseline) {
		err_msg("--baseline FILE is required");
		opt_usage(&tool, EXIT_USAGE);
	}
	if (compat_reference) {	/* no output of the reference to reproduce */
		err_msg("--compat reference: the reference analyzer does not compare runs");
		opt_usage(&tool, EXIT_USAGE);
	}
	if (!strcmp(baseline, "-") && !strcmp(in, "-")) {
		err_msg("the baseline and the candidate cannot both be the standard input");
		opt_usage(&tool, EXIT_USAGE);
	}
	str = strtab_new();
	memset(&base, 0, sizeof base);
	memset(&cand, 0, sizeof cand);
	base.what = "baseline";
	cand.what = "candidate";
	read_side(&base, str, baseline, 0, whole);
	read_side(&cand, str, in, pass, whole);
	check_side(&base, baseline);
	check_side(&cand, in);
	status = diff_report(&base, &cand, str, &o);
	side_free(&base);
	side_free(&cand);
	strtab_free(str);
	return tool_finish(status);
}
