/*
 * rank-skew: compare the ranks of a tensor- or expert-parallel run from
 * their staged kernel records (one trace per rank, in one stream): per rank
 * and stage its GPU busy, kernel and communication time, how long it waited
 * inside collectives and how often it arrived last; per collective matched
 * across the ranks its skew and wait; the kernels that take longer on the
 * straggler, and where its lateness is (issue 31).  Every input record passes through; the analysis follows
 * at the end of the input.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "num.h"
#include "opt.h"
#include "rec.h"
#include "skew.h"
#include "trace.h"
#include "xalloc.h"

enum { O_NO_PASS = OPT_LONG, O_RANKS };

static const struct opt opts[] = {
	{ "align", 'a', "HOW", "end (default): align clocks on a collective's end; none" },
	{ "no-pass", O_NO_PASS, NULL, "write only rank-skew's records, not the input's" },
	{ "quiet", 'q', NULL, "no warnings" },
	{ "ranks", O_RANKS, "LIST", "ranks expected, e.g. 0-7 or 0,2,4 (missing ones are reported)" },
	{ "top", 'n', "N", "rank_kernel_delta records per stage (default 10, 0: all)" },
	{ NULL, 0, NULL, NULL }
};

static const struct tool tool = {
	"[-q] [-a end|none] [-n N] [--no-pass] [--ranks LIST]\n"
	" [file ...]",
	"Compare the ranks of a tensor- or expert-parallel run: per rank and stage its\n"
	"GPU busy, kernel, communication and wait time (rank_row); each collective\n"
	"matched across the ranks with its skew and wait (collective_row); the kernels\n"
	"that take longer on the straggler (rank_kernel_delta), and where its lateness\n"
	"is: its host, its GPU idle gaps or its kernels (late_* of its rank_row).\n"
	"Reads trace-stage records of one trace per rank (triage-records(5)).",
	opts
};

static struct skew sk;
static long long tp_size = 1;	/* the largest tp_size of the input records */
#define TP_EXPECT_MAX 1000000	/* as many ranks as --ranks may name */
static long long seq;		/* traces read so far */

static void
on_trace(void *ctx, struct trace_reader *r, struct trace *tr)
{
	(void)ctx;
	skew_add_trace(&sk, r, tr, seq++);
}

static void
on_line(void *ctx, struct trace_reader *r, enum rec_type t)
{
	struct rec_input in;

	(void)ctx;
	if (t != RT_input)
		return;
	REC_READ(&r->rd, input, &in);
	if (in.tp_size > tp_size)
		tp_size = in.tp_size;
}

/* One rank of --ranks arg; exit 2 unless s is a whole number from 0. */
static long long
rank_num(const char *s, const char *arg)
{
	const char *errstr;
	long long v;

	if (!parse_num(s, 0, LLONG_MAX, &v, &errstr))
		opt_bad(&tool, "ranks", strcmp(errstr, "too small") == 0 ?
		    "ranks are whole numbers from 0" : errstr, arg);
	return v;
}

/* --ranks: "0-7", "0,2,4,5", "0-3,8"; each rank is expected. */
static void
parse_ranks(const char *arg)
{
	char *copy = xstrdup(arg), *tok, *save = NULL, *dash;
	long long lo, hi;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		/* "-1" is a (refused) rank, not a range: look for the dash after a first '-' */
		dash = strchr(tok + (*tok == '-'), '-');
		if (dash)
			*dash = '\0';
		lo = hi = rank_num(tok, arg);
		if (dash)
			hi = rank_num(dash + 1, arg);
		if (hi < lo || hi - lo > 1000000)
			opt_bad(&tool, "ranks", "not a range of at most a million ranks", arg);
		for (; lo <= hi; lo++)
			skew_expect(&sk, lo);
	}
	free(copy);
	if (sk.nexpect == 0)
		opt_bad(&tool, "ranks", "empty", arg);
}

/*
 * Server args give the TP size: when every rank seen is below it, the
 * ranks 0 .. tp_size-1 are expected, so that a missing rank file shows.
 */
static void
expect_tp_ranks(void)
{
	size_t i;
	long long r;

	if (tp_size <= 1 || sk.nexpect || sk.nrs == 0)
		return;
	if (tp_size > TP_EXPECT_MAX) {
		/* a corrupt server_args: expecting a billion ranks was a hang */
		warn_msg("tp_size %lld is no tensor-parallel size (more than %d): no rank is expected "
		    "from it", tp_size, TP_EXPECT_MAX);
		return;
	}
	for (i = 0; i < sk.nrs; i++)
		if (sk.rs[i].rank >= tp_size)
			return;
	for (r = 0; r < tp_size; r++)
		skew_expect(&sk, r);
}

int
main(int argc, char **argv)
{
	struct trace_ops ops = { 0 };
	struct trace_reader rd;
	const char *errstr;
	int c, i, no_pass = 0;
	FILE *fp;

	tool_init(argc, argv);
	sk.align_end = 1;
	sk.top = 10;
	while ((c = opt_next(&tool, argc, argv)) != -1) {
		switch (c) {
		case 'a':
			if (!strcmp(optarg, "end"))
				sk.align_end = 1;
			else if (!strcmp(optarg, "none"))
				sk.align_end = 0;
			else
				opt_bad(&tool, "align", "not end or none", optarg);
			break;
		case 'n':
			if (!parse_num(optarg, 0, LLONG_MAX, &sk.top, &errstr))
				opt_bad(&tool, "top", errstr, optarg);
			break;
		case O_NO_PASS:
			no_pass = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case O_RANKS:
			parse_ranks(optarg);
			break;
		default:
			opt_usage(&tool, EXIT_USAGE);
		}
	}
	sk.str = strtab_new();
	ops.collect = TR_MASK(kernel) | TR_MASK(launch);	/* launches: the collectives' calls */
	ops.pass = !no_pass;
	ops.repeat_t = 1;	/* the ranks' streams one after another, each from t 0 */
	ops.on_trace = on_trace;
	ops.on_line = on_line;
	trace_reader_init(&rd, sk.str, &ops);
	for (i = optind; i < (argc > optind ? argc : optind + 1); i++) {
		const char *name = i < argc ? argv[i] : "-";
		fp = rec_open(name);
		trace_read(&rd, fp, strcmp(name, "-") ? name : "<stdin>");
		if (fp != stdin)
			fclose(fp);
	}
	trace_reader_free(&rd);
	if (sk.nrs == 0) {
		fflush(stdout);
		if (sk.unranked)
			die(EXIT_EMPTY, "nothing to compare: no trace names a rank (trace-extract "
			    "takes it from the file name: TP-0, tp1, rank2, worker3, rank-4)");
		die(EXIT_EMPTY, "nothing to compare: no kernels in %lld trace%s", seq,
		    seq == 1 ? "" : "s");
	}
	expect_tp_ranks();
	skew_report(&sk);
	skew_free(&sk);
	strtab_free(sk.str);
	return tool_finish(EXIT_OK);
}
