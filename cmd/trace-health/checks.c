/*
 * Judge a trace's facts: each check's status against its thresholds
 * (trace-health(1) lists them), the tables it makes untrustworthy, and one
 * sentence that says what was found.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "health.h"
#include "json.h"
#include "num.h"

#define AF_ALL (AF_KERNEL | AF_OVERLAP | AF_FUSE | AF_GPU_TIME | AF_STEP)

/* The word for n of something: one, else many. */
static const char *
pl(long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* Start a check: its id and value, status ok, an empty detail. */
static void
begin(struct check *c, const char *id, long long value)
{
	c->id = id;
	c->status = ST_OK;
	c->value = value;
	c->affects = 0;
	sb_reset(&c->detail);
}

/* affects: the tables a defect spoils, or what a limitation costs; none for ok and info */
static void
judge(struct check *c, enum status s, unsigned affects)
{
	c->status = s;
	c->affects = s == ST_OK || s == ST_INFO ? 0 : affects;
}

/*
 * A stage the trace names (by its path or by annotations) without a kernel
 * of the analyzed process has empty tables; a trace without kernels has
 * nothing at all.  Value: stages without kernels (1 for a kernel-less trace).
 */
static void
no_kernels(struct check *c, const struct facts *f)
{
	long long bad = 0;
	size_t i;

	if (f->nk == 0) {
		begin(c, "no_kernels", 1);
		sb_printf(&c->detail, "no GPU kernels in the trace (%lld events, %lld launches, "
		    "%lld CPU ops)", f->events, f->nln, f->cpu_ops);
		judge(c, ST_FAIL, AF_ALL);
		return;
	}
	for (i = 0; i < f->nst; i++)
		bad += f->st[i].kernels == 0;
	begin(c, "no_kernels", bad);
	if (f->nst == 0) {
		sb_printf(&c->detail, "%lld %s on the analyzed process; the trace names no stage",
		    f->nk_sel, pl(f->nk_sel, "kernel", "kernels"));
		return;
	}
	if (!bad)
		sb_adds(&c->detail, "kernels in every stage:");
	for (i = 0; i < f->nst; i++) {
		const struct stage_facts *s = &f->st[i];
		if (!bad) {
			sb_printf(&c->detail, "%s %s %lld", i ? "," : "", s->name, s->kernels);
			continue;
		}
		if (s->kernels)
			continue;
		if (c->detail.len)
			sb_adds(&c->detail, "; ");
		if (s->from_path)
			sb_printf(&c->detail, "%s (named by the path): no kernels on the analyzed "
			    "process", s->name);
		else
			sb_printf(&c->detail, "%s: no kernels on the analyzed process, though %lld "
			    "%s it and %lld %s in them", s->name, s->windows,
			    pl(s->windows, "annotation names", "annotations name"), s->launches,
			    pl(s->launches, "launch falls", "launches fall"));
	}
	judge(c, bad ? ST_FAIL : ST_OK, AF_ALL);
}

/*
 * Graph work without kernels: CUDA-graph launches whose replayed kernels
 * were not recorded, and launches made while a graph was being captured
 * (recorded into the graph, never run).  Fails when at least half of the
 * graph launches lack their kernels, or when captured launches are at
 * least half of all launches (a capture trace: its tables describe the
 * warm-up, not the serving).
 */
static void
graph_launch(struct check *c, const struct facts *f)
{
	int fail = (f->graph_missing && f->graph_missing * 2 >= f->graph) ||
	    (f->captured && f->captured * 2 >= f->nln);

	begin(c, "graph_launch_without_kernels", f->graph_missing + f->captured);
	if (f->graph_missing)
		sb_printf(&c->detail, "%lld of %lld CUDA-graph launches %s no recorded kernel: "
		    "the replayed graphs' GPU work is missing", f->graph_missing, f->graph,
		    pl(f->graph_missing, "has", "have"));
	if (f->captured)
		sb_printf(&c->detail, "%s%lld of %lld launches %s made inside %lld CUDA-graph "
		    "%s (torch.cuda.graph capture_begin .. capture_end): recorded into a graph, "
		    "never run, so without kernels", c->detail.len ? "; " : "", f->captured, f->nln,
		    pl(f->captured, "was", "were"), f->capture_regions,
		    pl(f->capture_regions, "capture", "captures"));
	if (c->value) {
		judge(c, fail ? ST_FAIL : ST_WARN, AF_KERNEL | AF_OVERLAP | AF_FUSE | AF_GPU_TIME);
		return;
	}
	if (f->graph)
		sb_printf(&c->detail, "%lld CUDA-graph %s", f->graph,
		    pl(f->graph, "launch, with its kernels", "launches, each with its kernels"));
	else
		sb_adds(&c->detail, "no CUDA-graph launches");
}

/*
 * Eager launches (neither graph launches nor captured) whose kernel was
 * never recorded: their GPU time is in no table.  Warn from 1 %, fail from
 * 50 % of the eager launches.
 */
static void
launch_without_kernel(struct check *c, const struct facts *f)
{
	long long z = f->launch_zero_dur < f->eager_missing ? f->launch_zero_dur : f->eager_missing;
	long long m = f->eager_missing - z, n = f->eager;

	begin(c, "launch_without_kernel", m);
	if (n == 0) {
		sb_adds(&c->detail, "no kernel launches outside CUDA graphs");
		return;
	}
	if (m == 0) {
		sb_printf(&c->detail, "each of %lld CUDA %s has its kernel", n,
		    pl(n, "launch", "launches"));
		/* a kernel of dur 0 ran, shorter than the timer's resolution (issue 25) */
		if (z)
			sb_printf(&c->detail, " (%lld with a kernel of zero duration, shorter than "
			    "the trace's clock resolution)", z);
		return;
	}
	sb_printf(&c->detail, "%lld of %lld CUDA launches %s no recorded kernel "
	    "(launch-to-kernel coverage %.1f%%)", m, n, pl(m, "has", "have"),
	    pct((double)(n - m), (double)n));
	if (m * 100 < n) {
		sb_adds(&c->detail, ", under the 1% threshold");
		return;
	}
	if (z)
		sb_printf(&c->detail, "; %lld more %s a kernel of zero duration", z,
		    pl(z, "has", "have"));
	if (f->skipped)
		sb_printf(&c->detail, "; %lld %s skipped (skipped_events), perhaps their kernels",
		    f->skipped, pl(f->skipped, "event was", "events were"));
	if (f->tail_missing >= 2)
		sb_printf(&c->detail, "; the last %lld in time are among them (truncated)",
		    f->tail_missing);
	judge(c, m * 2 >= n ? ST_FAIL : ST_WARN, AF_KERNEL | AF_OVERLAP | AF_FUSE | AF_GPU_TIME);
}

/*
 * Compute kernels without a launch record: kernel-map then finds their
 * Python location through the External id alone, or not at all.  Warn
 * from 1 %; never fails, the GPU time itself is right.
 */
static void
kernel_without_launch(struct check *c, const struct facts *f)
{
	long long m = f->compute_no_launch, n = f->compute, b = f->compute_before;
	long long rest = m - b;

	begin(c, "kernel_without_launch", rest);
	if (m == 0) {
		sb_printf(&c->detail, "each of %lld compute %s on the analyzed process has its "
		    "launch", n, pl(n, "kernel", "kernels"));
		return;
	}
	if (rest * 100 < n && b) {
		/*
		 * Launched before the profiler recorded the host, run once it
		 * recorded the GPU: every capture starts so (issue 25).
		 */
		sb_printf(&c->detail, "%lld of %lld compute kernels on the analyzed process %s "
		    "launched before the profiler recorded the host (correlation ids below the "
		    "first launch's): %s ran as the capture began, %s on the External id alone",
		    b, n, pl(b, "was", "were"), pl(b, "it", "they"),
		    pl(b, "its source location rests", "their source locations rest"));
		if (rest)
			sb_printf(&c->detail, "; %lld more without a launch record, under the 1%% "
			    "threshold", rest);
		judge(c, ST_INFO, 0);
		return;
	}
	sb_printf(&c->detail, "%lld of %lld compute kernels on the analyzed process %s no "
	    "launch record (%.1f%%): %s on the External id alone",
	    rest, n, pl(rest, "has", "have"), pct((double)rest, (double)n),
	    pl(rest, "its source location rests", "their source locations rest"));
	if (b)
		sb_printf(&c->detail, "; %lld more %s launched before the capture began", b,
		    pl(b, "was", "were"));
	if (rest * 100 < n) {
		sb_adds(&c->detail, ", under the 1% threshold");
		return;
	}
	judge(c, ST_WARN, AF_KERNEL | AF_FUSE);
}

static void
no_python_stacks(struct check *c, const struct facts *f)
{
	begin(c, "no_python_stacks", f->frames);
	if (f->frames) {
		sb_printf(&c->detail, "%lld Python %s", f->frames, pl(f->frames, "frame", "frames"));
		return;
	}
	sb_adds(&c->detail, "limited: no python_function events (the profiler ran without "
	    "with_stack): kernels get no Python source location");
	judge(c, ST_LIMITED, AF_KERNEL | AF_OVERLAP | AF_FUSE);
}

static void
no_cpu_ops(struct check *c, const struct facts *f)
{
	begin(c, "no_cpu_ops", f->cpu_ops);
	if (f->cpu_ops) {
		sb_printf(&c->detail, "%lld CPU %s", f->cpu_ops, pl(f->cpu_ops, "op", "ops"));
		return;
	}
	sb_adds(&c->detail, "limited: no cpu_op events (a GPU-only capture): the kernel table's "
	    "CPU op column and the fusion evidence from op names are empty");
	judge(c, ST_LIMITED, AF_KERNEL | AF_FUSE);
}

/*
 * Input shapes: Kineto states record_shapes among the profiler's options
 * (the trace record's capture_flags) when it writes them at all.
 */
static void
no_shapes(struct check *c, const struct facts *f)
{
	begin(c, "no_shapes", f->with_shapes);
	if (!f->flags_known) {
		sb_adds(&c->detail, "the trace does not say whether input shapes were recorded");
		return;
	}
	if (f->with_shapes || f->cpu_ops == 0) {
		sb_adds(&c->detail, f->with_shapes ? "input shapes recorded (record_shapes)" :
		    "no CPU ops to carry input shapes");
		return;
	}
	sb_adds(&c->detail, "limited: the profiler ran without record_shapes: CPU ops carry no "
	    "input shapes, so nothing tells a kernel's problem size (batch, sequence, width)");
	judge(c, ST_LIMITED, AF_KERNEL);
}

/* Several GPU processes in one file: the kernel table reads one of them. */
static void
merged_devices(struct check *c, const struct facts *f)
{
	begin(c, "merged_devices", (long long)f->npids);
	if (f->npids == 0) {
		sb_adds(&c->detail, "no GPU process");
		return;
	}
	if (f->npids == 1) {
		sb_printf(&c->detail, "one GPU process (pid %s)", f->sel_name);
		return;
	}
	sb_printf(&c->detail, "kernels on %zu GPU processes; analyzing pid %s, the others hold "
	    "%.2f ms (%.1f%% of kernel time)", f->npids, f->sel_name, f->other_us / 1000.0,
	    pct(f->other_us, f->total_us));
	judge(c, ST_WARN, AF_OVERLAP | AF_GPU_TIME);
}

/*
 * The launch-to-start latency distribution (trace-stage's gpu_pids
 * record): an item that starts on a GPU with nothing queued long after its
 * launch call returned, and every item long after its call began, or
 * items long before their call, mean the host's and the GPU's clocks
 * disagree, unless a blocking call returned right after the GPU work it
 * waited for.  trace-stage then stages kernels at their launch calls.
 */
static void
clock_offset(struct check *c, const struct facts *f)
{
	begin(c, "clock_offset", f->has_offset ? (long long)(f->offset_us + (f->offset_us < 0 ?
	    -0.5 : 0.5)) : 0);
	if (!f->has_latency) {
		sb_adds(&c->detail, "no kernel has a launch record: the clocks cannot be compared");
		return;
	}
	if (!f->has_offset) {
		sb_printf(&c->detail, "launch to start: median %.3f us", f->latency_p50);
		if (f->idle_starts)
			sb_printf(&c->detail, "; of %lld %s that start on a GPU with nothing running or "
			    "queued the quickest starts %.3f us %s its launch call returned",
			    f->idle_starts, pl(f->idle_starts, "item", "items"),
			    fabs(f->idle_start_min), f->idle_start_min < 0 ? "before" : "after");
		else
			sb_adds(&c->detail, "; no item starts on a GPU with nothing running or queued "
			    "(each waits behind earlier work: the host ran ahead of the GPU)");
		if (f->sync_call[0])
			sb_printf(&c->detail, "; %s waited %.3f ms and returned %.3f us after the GPU "
			    "work launched before it ended: host and GPU share one clock", f->sync_call,
			    f->sync_wait / 1000.0, f->sync_return);
		return;
	}
	if (f->offset_us > 0)
		sb_printf(&c->detail, "%lld %s that %s on a GPU with nothing running or queued %s "
		    "%.3f ms after %s launch call returned, and no item starts sooner than %.3f ms "
		    "after its call began (a launch reaches an idle GPU in 5 to 50 us): the GPU "
		    "clock runs about %.1f ms ahead of the host's", f->idle_starts,
		    pl(f->idle_starts, "item", "items"), pl(f->idle_starts, "starts", "start"),
		    pl(f->idle_starts, "starts", "all start at least"), f->idle_start_min / 1000.0,
		    pl(f->idle_starts, "its", "their"), f->start_min / 1000.0,
		    f->offset_us / 1000.0);
	else
		sb_printf(&c->detail, "kernels start up to %.3f ms before their launch calls: the "
		    "GPU clock runs at least %.1f ms behind the host's", -f->offset_us / 1000.0,
		    -f->offset_us / 1000.0);
	sb_adds(&c->detail, "; stages follow the launch times (trace-stage), and the idle time "
	    "waiting for the host is not measured");
	judge(c, ST_WARN, AF_GPU_TIME | AF_STEP);
}

/* GPU work cannot start before the call that launched it; when it does, the clocks disagree. */
static void
clock_skew(struct check *c, const struct facts *f)
{
	begin(c, "clock_skew", f->skew);
	if (f->skew && f->has_offset && f->offset_us < 0) {
		sb_printf(&c->detail, "%lld %s before %s launch call: the clock offset above",
		    f->skew, pl(f->skew, "kernel starts", "kernels start"), pl(f->skew, "its", "their"));
		return;
	}
	if (!f->skew) {
		sb_adds(&c->detail, "no kernel starts before its launch call");
		return;
	}
	sb_printf(&c->detail, "%lld %s before %s launch call, by up to %.3f us: the CPU and "
	    "GPU clocks disagree", f->skew, pl(f->skew, "kernel starts", "kernels start"),
	    pl(f->skew, "its", "their"), f->skew_max);
	judge(c, ST_WARN, AF_GPU_TIME | AF_STEP);
}

/*
 * One stream runs one kernel at a time, except for programmatic dependent
 * launch; overlap otherwise means two processes' kernels on one track.
 * Merged processes fail (every sum counts two processes); the rest warns.
 */
static void
stream_overlap(struct check *c, const struct facts *f)
{
	begin(c, "stream_overlap", f->overlaps);
	if (!f->overlaps) {
		sb_adds(&c->detail, "no kernels overlap on a stream");
		return;
	}
	sb_printf(&c->detail, "%lld %s before the previous kernel on the same stream ends",
	    f->overlaps, pl(f->overlaps, "kernel starts", "kernels start"));
	switch (f->cause) {
	case OV_MERGED:
		sb_printf(&c->detail, ", by up to %.3f us; %lld of them repeat the kernel before "
		    "them: merged ranks or duplicated processes", f->overlap_max, f->overlaps_same);
		judge(c, ST_FAIL, AF_KERNEL | AF_OVERLAP | AF_FUSE | AF_GPU_TIME);
		break;
	case OV_PDL:
		sb_printf(&c->detail, ", each by less than 10 us (at most %.3f us) and each outlasting "
		    "the one before: programmatic dependent launch", f->overlap_max);
		if (f->arch)
			sb_printf(&c->detail, " (%s: %s)", f->arch, f->arch_tag);
		else
			sb_adds(&c->detail, " (Hopper or Blackwell; neither the trace nor a kernel "
			    "name tells the architecture)");
		/* expected on sm90 and later: a kernel may begin as the one before winds down */
		sb_adds(&c->detail, "; expected, and counted once in the busy time");
		judge(c, ST_INFO, 0);
		break;
	case OV_NEGLIGIBLE:
		/* at most 1% of the kernels and 0.1% of their time: no figure moves */
		sb_printf(&c->detail, ", by up to %.3f us, %.3f us in all (%.4f%% of the kernel time): "
		    "too little to change a figure; timestamp error, as far as the pattern tells",
		    f->overlap_max, f->overlap_us, pct(f->overlap_us, f->sel_us));
		judge(c, ST_INFO, 0);
		break;
	default:
		sb_printf(&c->detail, ", by up to %.3f us: merged processes, clock errors or "
		    "concurrent launches; the pattern does not tell which", f->overlap_max);
		judge(c, ST_WARN, AF_KERNEL | AF_OVERLAP | AF_GPU_TIME);
		break;
	}
}

static void
absurd_timestamps(struct check *c, const struct facts *f)
{
	begin(c, "absurd_timestamps", f->absurd);
	if (!f->absurd) {
		sb_adds(&c->detail, "every kernel timestamp lies between 0 and 1e17 us, and every "
		    "kernel with a launch call starts within an hour of it");
		return;
	}
	sb_printf(&c->detail, "%lld %s (outside 0 .. 1e17 us, or more than an hour after its "
	    "launch call)", f->absurd,
	    pl(f->absurd, "kernel has a negative or absurd timestamp",
	    "kernels have negative or absurd timestamps"));
	judge(c, ST_WARN, AF_GPU_TIME | AF_STEP);
}

/*
 * What a cut survives as: an event array without its ']' (a cut inside an
 * event fails trace-extract), and a run of at least two launches at the
 * end whose kernels never came.  Value: that run's length.
 */
static void
truncated(struct check *c, const struct facts *f)
{
	long long tail = f->tail_missing >= 2 ? f->tail_missing : 0;

	begin(c, "truncated", tail);
	if (!tail && !f->missing_close) {
		sb_adds(&c->detail, "the event array is closed and the last launches have their "
		    "kernels");
		return;
	}
	if (f->missing_close)
		sb_adds(&c->detail, "the event array has no closing ']' (the format allows it; a "
		    "writer stopped early leaves the same)");
	if (tail)
		sb_printf(&c->detail, "%sthe last %lld launches have no kernels: the capture "
		    "stopped before the GPU ran them", f->missing_close ? "; " : "", tail);
	judge(c, ST_WARN, AF_KERNEL | AF_GPU_TIME | AF_STEP);
}

/*
 * More than one traceEvents member: this report reads every array (a
 * stream cannot take the first back), a JSON reader the last alone
 * (Perfetto, chrome://tracing, Python's json), so the report and the
 * timeline show other events; a trace can hide its events from either.
 */
static void
event_arrays(struct check *c, const struct facts *f)
{
	begin(c, "duplicate_event_arrays", f->event_arrays);
	if (!f->event_arrays) {
		sb_adds(&c->detail, "one traceEvents array");
		return;
	}
	sb_printf(&c->detail, "%lld traceEvents arrays: this report reads them all, a JSON "
	    "reader (a trace viewer, Python's json) the last alone, so the two show other "
	    "events", f->event_arrays + 1);
	judge(c, ST_WARN, AF_ALL);
}

/* Events trace-extract could not read; fail from 10 % of the events. */
static void
skipped_events(struct check *c, const struct facts *f)
{
	begin(c, "skipped_events", f->skipped);
	if (!f->skipped && f->zero_dur) {
		sb_printf(&c->detail, "none of %lld events skipped; %lld GPU %s of zero duration "
		    "(shorter than the trace's clock resolution) %s no kernel rows, as in the "
		    "reference", f->events, f->zero_dur, pl(f->zero_dur, "item", "items"),
		    pl(f->zero_dur, "has", "have"));
		judge(c, ST_INFO, 0);
		return;
	}
	if (!f->skipped) {
		sb_printf(&c->detail, "none of %lld events skipped", f->events);
		return;
	}
	sb_printf(&c->detail, "%lld of %lld %s skipped (%s)", f->skipped, f->events,
	    pl(f->events, "event", "events"), f->skipped_why);
	judge(c, f->skipped * 10 >= f->events ? ST_FAIL : ST_WARN, AF_KERNEL | AF_GPU_TIME);
}

static void
short_capture(struct check *c, const struct facts *f, const struct health_opts *o)
{
	begin(c, "short_capture", f->steps);
	if (f->steps == 0) {
		if (o->expect_steps) {
			sb_printf(&c->detail, "no step annotations (ProfilerStep#N, step[...], "
			    "execute_..._generation_...), %lld asked for", o->expect_steps);
			judge(c, ST_WARN, AF_STEP | AF_GPU_TIME);
			return;
		}
		sb_adds(&c->detail, "limited: no step annotations (ProfilerStep#N, step[...], "
		    "execute_..._generation_...): no per-step figures (step period, tokens per "
		    "second)");
		judge(c, ST_LIMITED, AF_STEP);
		return;
	}
	sb_printf(&c->detail, "%lld %s (%s)", f->steps, pl(f->steps, "step", "steps"), f->step_kind);
	if (f->steps < o->expect_steps) {
		sb_printf(&c->detail, ", fewer than the %lld asked for", o->expect_steps);
		judge(c, ST_WARN, AF_STEP | AF_GPU_TIME);
	}
}

enum status
checks_run(struct check c[NCHECK], const struct facts *f, const struct health_opts *o)
{
	enum status worst = ST_OK;
	int i = 0;

	no_kernels(&c[i++], f);
	graph_launch(&c[i++], f);
	launch_without_kernel(&c[i++], f);
	kernel_without_launch(&c[i++], f);
	no_python_stacks(&c[i++], f);
	no_cpu_ops(&c[i++], f);
	no_shapes(&c[i++], f);
	merged_devices(&c[i++], f);
	clock_offset(&c[i++], f);
	clock_skew(&c[i++], f);
	stream_overlap(&c[i++], f);
	absurd_timestamps(&c[i++], f);
	truncated(&c[i++], f);
	event_arrays(&c[i++], f);
	skipped_events(&c[i++], f);
	short_capture(&c[i++], f, o);
	/* only defects make the verdict */
	for (i = 0; i < NCHECK; i++)
		if (c[i].status >= ST_WARN && c[i].status > worst)
			worst = c[i].status;
	return worst;
}

void
checks_free(struct check c[NCHECK])
{
	int i;

	for (i = 0; i < NCHECK; i++)
		sb_free(&c[i].detail);
}

const char *
status_name(enum status s)
{
	return s == ST_FAIL ? "fail" : s == ST_WARN ? "warn" : s == ST_LIMITED ? "limited" :
	    s == ST_INFO ? "info" : "ok";
}

const char *
verdict_name(enum status worst)
{
	return worst == ST_FAIL ? "unusable" : worst == ST_WARN ? "degraded" : "ok";
}

void
checks_json(sbuf *out, const struct check c[NCHECK])
{
	static const char *const table[] = { "kernel", "overlap", "fuse", "gpu_time", "step" };
	int i, j, n;

	sb_addc(out, '[');
	for (i = 0; i < NCHECK; i++) {
		sb_printf(out, "%s{\"id\":\"%s\",\"status\":\"%s\",\"value\":%lld,\"detail\":",
		    i ? "," : "", c[i].id, status_name(c[i].status), c[i].value);
		json_quote(out, c[i].detail.s ? c[i].detail.s : "", c[i].detail.len);
		sb_adds(out, ",\"affects\":[");
		for (j = n = 0; j < 5; j++)
			if (c[i].affects & 1u << j)
				sb_printf(out, "%s\"%s\"", n++ ? "," : "", table[j]);
		sb_adds(out, "]}");
	}
	sb_addc(out, ']');
}
