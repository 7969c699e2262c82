/*
 * trace-health: can this trace be trusted, and which tables?  Reads a
 * staged record stream (trace-stage), passes every record through, and
 * writes one "health" record per trace, before its stats record: a verdict
 * and the outcome of each check (trace-health(1)).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "health.h"
#include "num.h"
#include "opt.h"
#include "pyscope.h"
#include "rec.h"
#include "trace.h"

static int strict;
static int rval = EXIT_OK;
static struct health_opts hopts;

/* The current trace's gpu_pids record, if any, and its device records. */
static uint32_t sel = NOSTR;
static int have_sel;
static struct side_facts side;

enum { O_EXPECT_STEPS = OPT_LONG };

static const struct opt opts[] = {
	{ "expect-steps", O_EXPECT_STEPS, "N", "warn when a trace holds fewer than N steps" },
	{ "strict", 's', NULL, "exit 1 when a trace's verdict is not ok (a defect)" },
	{ NULL, 0, NULL, NULL }
};

static const struct tool tool = {
	"[-qs] [--expect-steps N] [file ...]",
	"Check each trace of a trace-stage record stream for what makes its tables\n"
	"untrustworthy, pass every record through, and write a \"health\" record per\n"
	"trace: a verdict (ok, degraded, unusable) from its defects, and the outcome of\n"
	"every check (ok; info: expected; limited: a capture setting; warn, fail: a\n"
	"defect).",
	opts
};

static int keep(void *ctx, struct trace_reader *r, enum rec_type t, const void *rec);
static void on_line(void *ctx, struct trace_reader *r, enum rec_type t);
static void on_trace(void *ctx, struct trace_reader *r, struct trace *tr);

int
main(int argc, char **argv)
{
	struct trace_reader rd;
	struct trace_ops ops = { 0 };
	strtab *str = strtab_new();
	const char *errstr;
	int c, i;

	tool_init(argc, argv);
	while ((c = opt_next(&tool, argc, argv)) != -1) {
		switch (c) {
		case O_EXPECT_STEPS:
			if (!parse_num(optarg, 1, LLONG_MAX, &hopts.expect_steps, &errstr))
				opt_bad(&tool, "expect-steps", errstr, optarg);
			break;
		case 's':
			strict = 1;
			break;
		default:
			opt_usage(&tool, EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	ops.collect = TR_MASK(kernel) | TR_MASK(launch) | TR_MASK(frame) | TR_MASK(annotation);
	ops.pass = 1;
	ops.queue = 1;	/* kernels and launches in bounded memory (issue 30) */
	ops.keep = keep;
	ops.on_line = on_line;
	ops.on_trace = on_trace;
	trace_reader_init(&rd, str, &ops);
	for (i = 0; i < (argc ? argc : 1); i++) {
		const char *name = argc ? argv[i] : "-";
		FILE *fp = rec_open(name);
		trace_read(&rd, fp, strcmp(name, "-") ? name : "<stdin>");
		if (fp != stdin)
			fclose(fp);
	}
	rec_require_records();
	trace_reader_free(&rd);
	strtab_free(str);
	return tool_finish(rval);
}

/*
 * Of the Python frames only torch.cuda.graph's capture_begin and
 * capture_end are needed (the capture regions); a stack-traced trace has
 * hundreds of thousands of others.
 */
static int
keep(void *ctx, struct trace_reader *r, enum rec_type t, const void *rec)
{
	const struct rec_frame *f = rec;

	(void)ctx;
	(void)r;
	if (t != RT_frame)
		return 1;
	return frame_is_capture_marker(f->name.s, f->name.n);
}

/* A device record: the GPU's identity, for the checks that depend on it. */
static void
add_device(struct trace_reader *r)
{
	struct rec_device d;
	struct gpu_facts *g;
	size_t n;

	REC_READ(&r->rd, device, &d);
	if (!r->open || d.t != r->tr.t || side.ndev >= sizeof side.dev / sizeof side.dev[0])
		return;
	g = &side.dev[side.ndev];
	side.dev_id[side.ndev++] = REC_HAS(&d, device, id) ? d.id : -1;
	memset(g, 0, sizeof *g);
	g->known = 1;
	g->major = REC_HAS(&d, device, compute_major) ? d.compute_major : -1;
	g->minor = REC_HAS(&d, device, compute_minor) ? d.compute_minor : -1;
	n = d.name.n < sizeof g->name - 1 ? d.name.n : sizeof g->name - 1;
	if (d.name.s)
		memcpy(g->name, d.name.s, n);
	g->name[n] = '\0';
	/* ROCm reports its GPUs as "AMD Instinct ...", "AMD Radeon ..." (or no name), warps of 64 */
	g->amd = strstr(g->name, "AMD") != NULL || (REC_HAS(&d, device, warp_size) &&
	    d.warp_size == 64);
}

/* trace-stage's gpu_pids record names the analyzed process and measures the clocks. */
static void
on_line(void *ctx, struct trace_reader *r, enum rec_type t)
{
	struct rec_gpu_pids g;

	(void)ctx;
	if (t == RT_device) {
		add_device(r);
		return;
	}
	if (t != RT_gpu_pids)
		return;
	REC_READ(&r->rd, gpu_pids, &g);
	if (!r->open || g.t != r->tr.t)
		rec_die(&r->rd, "gpu_pids record for trace %lld outside that trace", g.t);
	sel = trace_intern(r, g.selected);
	have_sel = 1;
	side.has_latency = REC_HAS(&g, gpu_pids, idle_starts);
	side.latency_p50 = g.launch_latency_p50_us;
	side.idle_starts = g.idle_starts;
	side.idle_start_min = g.idle_start_latency_us;
	side.has_start_min = REC_HAS(&g, gpu_pids, launch_start_min_us);
	side.start_min = g.launch_start_min_us;
	side.sync_call[0] = '\0';
	if (REC_HAS(&g, gpu_pids, sync_call)) {
		/* a runtime call's name; cut, never overrun */
		size_t n = g.sync_call.n < sizeof side.sync_call - 1 ? g.sync_call.n :
		    sizeof side.sync_call - 1;
		while (n < g.sync_call.n && n > 0 && ((unsigned char)g.sync_call.s[n] & 0xC0) == 0x80)
			n--;	/* not inside a UTF-8 sequence */
		memcpy(side.sync_call, g.sync_call.s, n);
		side.sync_call[n] = '\0';
		side.sync_return = g.sync_return_us;
		side.sync_wait = g.sync_wait_us;
	}
	side.has_offset = REC_HAS(&g, gpu_pids, clock_offset_us);
	side.offset_us = g.clock_offset_us;
}

static void
write_health(const struct trace *tr, const char *role, const char *path, enum status worst,
    const struct check c[NCHECK])
{
	sbuf o = SBUF_INIT;

	checks_json(&o, c);
	rec_begin(RT_health);
	rec_int(RM_health_t, tr->t);
	rec_cstr(RM_health_role, role);
	rec_cstr(RM_health_path, path);
	rec_cstr(RM_health_verdict, verdict_name(worst));
	rec_json(RM_health_checks, o.s, o.len);
	rec_end();
	sb_free(&o);
}

static void
on_trace(void *ctx, struct trace_reader *r, struct trace *tr)
{
	struct check c[NCHECK];
	struct facts f;
	enum status worst;
	int i;

	(void)ctx;
	if (tr->nk && !have_sel)
		rec_die(&r->rd, "trace %lld has kernels but no gpu_pids record; run trace-stage "
		    "before trace-health", tr->t);
	memset(c, 0, sizeof c);
	facts_measure(&f, r, tr, have_sel ? sel : NOSTR, &side);
	worst = checks_run(c, &f, &hopts);
	write_health(tr, f.role, f.path, worst, c);
	/* defects on stderr; limitations and what is expected are the report's */
	for (i = 0; i < NCHECK; i++)
		if (c[i].status >= ST_WARN)
			warn_msg("'%s': %s", f.path, c[i].detail.s);
	if (strict && worst != ST_OK) {
		err_msg("'%s': verdict %s; data-quality warnings are errors under --strict", f.path,
		    verdict_name(worst));
		rval = EXIT_DATA;
	}
	checks_free(c);
	sel = NOSTR;
	have_sel = 0;
	memset(&side, 0, sizeof side);
}
