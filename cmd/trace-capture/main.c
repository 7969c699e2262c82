/* trace-capture: capture prefill and decode torch-profiler traces from a live LLM server. */
#include <sys/stat.h>

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "err.h"
#include "esc.h"
#include "num.h"
#include "opt.h"
#include "rules.h"
#include "sbuf.h"
#include "xalloc.h"

static long long num_arg(const char *opt, const char *s, long long min,
    long long max);
static double float_arg(const char *opt, const char *s, double min);
static const char *choice(const char *opt, const char *s,
    const char *const *choices);
static void check_remote(const struct opts *o);


/* The reference's --framework choices, in its order (§1.3). */
static const char *const fw_choices[] = { "auto", "sglang", "vllm", "trtllm",
    "tllm", "tensorrt-llm", "tokenspeed", "token-speed", "ts", NULL };
static const char *const wl_choices[] = { "legacy", "prefill", "decode",
    "both", NULL };

enum {
	O_URL = 256, O_FRAMEWORK, O_OUTPUT_DIR, O_PREFIX, O_NUM_STEPS,
	O_WARMUP, O_PBS, O_NO_PBS, O_MERGE, O_NO_MERGE, O_PROBE_REQ,
	O_PROBE_PROMPT, O_PROBE_MAX, O_PROBE_DELAY, O_WORKLOAD, O_PRE_IN,
	O_PRE_OUT, O_DEC_IN, O_DEC_OUT, O_START_STEP, O_WAIT, O_SETTLE,
	O_POLL, O_CONNECT, O_REQUEST, O_DEFAULT_PREFIX, O_RECORDS, O_FOLLOW
};

static const struct opt opts[] = {
	{ "url", O_URL, "URL", "the server: http://host:port (required)" },
	{ "framework", O_FRAMEWORK, "NAME",
	    "auto (default: detected), sglang, vllm, trtllm, tokenspeed" },
	{ "output-dir", O_OUTPUT_DIR, "DIR",
	    "where the traces go (for vLLM, TensorRT-LLM and TokenSpeed:\n"
	    "                           the server's torch profiler directory)" },
	{ "profile-prefix", O_PREFIX, "P", "trace file prefix (default triage-trace)" },
	{ "default-profile-prefix", O_DEFAULT_PREFIX, "P",
	    "the prefix when --profile-prefix is not given (for drivers; never noted)" },
	{ "records", O_RECORDS, "FILE", "write a probe record per request sent to FILE" },
	{ "profile-workload", O_WORKLOAD, "W",
	    "both (default: a prefill and a decode capture), prefill, decode, legacy" },
	{ "num-steps", O_NUM_STEPS, "N", "profiled steps (default 5)" },
	{ "warmup-steps", O_WARMUP, "N", "requests before the profiler starts (default 10)" },
	{ "probe-requests", O_PROBE_REQ, "N", "requests sent while profiling (default 1)" },
	{ "probe-prompt", O_PROBE_PROMPT, "TEXT", "the legacy workload's prompt" },
	{ "probe-max-new-tokens", O_PROBE_MAX, "N", "output tokens of the legacy probes" },
	{ "probe-delay", O_PROBE_DELAY, "S", "seconds between start_profile and the probes" },
	{ "prefill-input-len", O_PRE_IN, "N", "prefill workload input tokens (4090)" },
	{ "prefill-output-len", O_PRE_OUT, "N", "prefill workload output tokens (1)" },
	{ "decode-input-len", O_DEC_IN, "N", "decode workload input tokens (1)" },
	{ "decode-output-len", O_DEC_OUT, "N", "decode workload output tokens (2048)" },
	{ "start-step", O_START_STEP, "N", "SGLang: the step to start profiling at" },
	{ "profile-by-stage", O_PBS, NULL, "SGLang: profile prefill and decode separately" },
	{ "no-profile-by-stage", O_NO_PBS, NULL, "SGLang: one profile of both" },
	{ "merge-profiles", O_MERGE, NULL, "SGLang: merge the rank files" },
	{ "no-merge-profiles", O_NO_MERGE, NULL, "SGLang: keep one file per rank (default)" },
	{ "wait-timeout", O_WAIT, "S", "give up when no complete trace appears within S" },
	{ "settle-delay", O_SETTLE, "S", "wait S after stop before looking for traces" },
	{ "poll-interval", O_POLL, "S", "look for traces every S seconds" },
	{ "connect-timeout", O_CONNECT, "S", "connection limit per request (default 10)" },
	{ "request-timeout", O_REQUEST, "S", "inactivity limit per request" },
	{ "follow-redirects", O_FOLLOW, NULL, "follow redirects to the same server (at most 5)" },
	{ NULL, 0, NULL, NULL }
};

static const struct tool tool = {
	"[-q] --url URL [--framework NAME] [--output-dir DIR]\n"
	" [--profile-prefix P] [--profile-workload W]\n"
	" [--num-steps N] [--warmup-steps N] [option ...]",
	"Capture torch profiler traces from a running SGLang, vLLM, TensorRT-LLM or\n"
	"TokenSpeed server: start the profiler, send the workload, stop it and wait\n"
	"until the traces are complete.  Prints the trace path (a file or a profile\n"
	"directory) and the framework, one per line.",
	opts
};

/* Counts and lengths: wide enough for any real run, small enough to never overflow. */
#define NMAX	1000000000LL

int
main(int argc, char **argv)
{
	struct opts o = {
		.prefix = "triage-trace",
		.num_steps = 5, .warmup_steps = 10, .probe_requests = 1,
		.profile_by_stage = 1,
		.probe_prompt = "Repeat the word profiler many times with spaces "
		    "so the server performs several decode steps. Do not add "
		    "explanations.",
		.probe_delay = 0.5,
		.workload = "both",
		.prefill_in = 4090, .prefill_out = 1,
		.decode_in = 1, .decode_out = 2048,
		.wait_timeout = -1, .settle_delay = -1, .poll_interval = -1,
	};
	const char *fw = "auto";
	double connect_timeout = 10, request_timeout = -1;
	int follow_redirects = 0;
	char *outdir_abs = NULL, *target;
	int ch;

	tool_init(argc, argv);
	while ((ch = opt_next(&tool, argc, argv)) != -1) {
		switch (ch) {
		case O_URL:
			o.url = optarg;
			break;
		case O_FRAMEWORK:
			fw = choice("--framework", optarg, fw_choices);
			break;
		case O_OUTPUT_DIR:
			o.output_dir = optarg[0] ? optarg : NULL;
			break;
		case O_DEFAULT_PREFIX:
			if (!o.prefix_given)
				o.prefix = optarg;
			break;
		case O_RECORDS:
			o.records = optarg;
			break;
		case O_PREFIX:
			o.prefix_given = 1;
			o.prefix = optarg;
			break;
		case O_NUM_STEPS:
			o.num_steps = num_arg("--num-steps", optarg, -NMAX, 1000000);
			break;
		case O_WARMUP:
			o.warmup_steps = num_arg("--warmup-steps", optarg, -NMAX, 1000000);
			break;
		case O_PBS:
		case O_NO_PBS:
			o.profile_by_stage = ch == O_PBS;
			o.pbs_given = 1;
			break;
		case O_MERGE:
		case O_NO_MERGE:
			o.merge_profiles = ch == O_MERGE;
			break;
		case O_PROBE_REQ:
			o.probe_requests = num_arg("--probe-requests", optarg, -NMAX,
			    1000000);
			break;
		case O_PROBE_PROMPT:
			o.probe_prompt = optarg;
			break;
		case O_PROBE_MAX:
			o.probe_max_new_tokens = num_arg("--probe-max-new-tokens",
			    optarg, -NMAX, NMAX);
			break;
		case O_PROBE_DELAY:
			o.probe_delay = float_arg("--probe-delay", optarg, -HUGE_VAL);
			break;
		case O_WORKLOAD:
			o.workload = choice("--profile-workload", optarg, wl_choices);
			break;
		case O_PRE_IN:
			o.prefill_in = num_arg("--prefill-input-len", optarg, -NMAX,
			    1000000);
			break;
		case O_PRE_OUT:
			o.prefill_out = num_arg("--prefill-output-len", optarg, -NMAX,
			    NMAX);
			break;
		case O_DEC_IN:
			o.decode_in = num_arg("--decode-input-len", optarg, -NMAX,
			    1000000);
			break;
		case O_DEC_OUT:
			o.decode_out = num_arg("--decode-output-len", optarg, -NMAX, NMAX);
			break;
		case O_START_STEP:
			o.start_step = num_arg("--start-step", optarg, -NMAX, NMAX);
			o.has_start_step = 1;
			break;
		case O_WAIT:
			o.wait_timeout = float_arg("--wait-timeout", optarg, 0);
			break;
		case O_SETTLE:
			o.settle_delay = float_arg("--settle-delay", optarg, 0);
			break;
		case O_POLL:
			o.poll_interval = float_arg("--poll-interval", optarg, 0.01);
			break;
		case O_CONNECT:
			connect_timeout = float_arg("--connect-timeout", optarg, 0.001);
			break;
		case O_REQUEST:
			request_timeout = float_arg("--request-timeout", optarg, 0.001);
			break;
		case O_FOLLOW:
			follow_redirects = 1;
			break;
		default:
			opt_usage(&tool, EXIT_USAGE);
		}
	}
	if (optind < argc) {
		err_msg("unexpected argument '%s'", argv[optind]);
		opt_usage(&tool, EXIT_USAGE);
	}
	if (o.url == NULL || o.url[0] == '\0') {
		err_msg("--url is required");
		opt_usage(&tool, EXIT_USAGE);
	}
	if (strncmp(o.url, "http://", 7) != 0 && strncmp(o.url, "https://", 8) != 0) {
		sbuf shown = SBUF_INIT;
		esc_url(o.url, &shown);
		die(EXIT_USAGE, "bad --url value, not an http:// or https:// URL: %s", shown.s);
	}

	/*
	 * The driver reads the path printed at the end as one line: a line
	 * break in it would name another folder (issue 27).
	 */
	if (o.output_dir && strchr(o.output_dir, '\n'))
		die(EXIT_USAGE, "bad --output-dir value, it holds a line break: %s", o.output_dir);
	if (strchr(o.prefix, '\n'))
		die(EXIT_USAGE, "bad --profile-prefix value, it holds a line break: %s", o.prefix);

	/* no credentials, query or fragment in the base: see http_set_base */
	o.base = http_set_base(o.url);
	if (o.output_dir)
		outdir_abs = abs_path(o.output_dir);

	catch_signals();
	http_init(connect_timeout, request_timeout, follow_redirects);
	o.framework = framework_canonical(fw);
	if (strcmp(o.framework, "auto") == 0)
		o.framework = detect_framework(&o, outdir_abs);
	else
		note_msg("framework: %s (from --framework)",
		    framework_display(o.framework));
	if (strcmp(o.framework, "sglang") != 0)
		check_remote(&o);

	target = run_capture(&o);
	if (strchr(target, '\n'))
		die(EXIT_CAPTURE, "the trace path the server gave holds a line break: %s", target);
	capture_keep_output();
	if (o.records && probe_log_write(o.records) != 0)
		return tool_finish(EXIT_DATA);
	printf("%s\n%s\n", target, o.framework);
	free(target);
	free(outdir_abs);
	free(o.base);
	http_cleanup();
	return tool_finish(EXIT_OK);
}

/*
 * Option combinations that only SGLang supports, and the output path the
 * remote frameworks need; found before any profiler request is sent.
 */
static void
check_remote(const struct opts *o)
{
	const char *disp = framework_display(o->framework);
	char *abs;
	struct stat st;

	if (o->has_start_step)
		die(EXIT_USAGE, "--start-step is only supported for SGLang live capture.");
	if (o->merge_profiles)
		die(EXIT_USAGE, "--merge-profiles is only supported for SGLang live "
		    "capture. Disable it when profiling vLLM, TensorRT-LLM, or "
		    "TokenSpeed.");
	if (o->pbs_given && o->profile_by_stage)
		note_msg("note: --profile-by-stage applies to SGLang only; ignored "
		    "for %s", disp);
	if (o->output_dir == NULL)
		die(EXIT_USAGE, "%s live capture requires --output-dir to point at "
		    "the server-side torch profiler trace path that is visible from "
		    "this machine.", disp);
	abs = abs_path(o->output_dir);
	if (strcmp(o->workload, "legacy") != 0 && (file_like_path(abs) ||
	    (stat(abs, &st) == 0 && !S_ISDIR(st.st_mode))))
		die(EXIT_USAGE, "--profile-workload %s requires a directory output "
		    "path for %s so each stage trace can be labeled.", o->workload,
		    disp);
	free(abs);
	if (o->prefix_given && o->prefix[0] && (strcmp(o->framework, "vllm") == 0 ||
	    strcmp(o->framework, "trtllm") == 0))
		note_msg("note: %s ignores --profile-prefix on the HTTP profiler "
		    "control path.", disp);
}

static long long
num_arg(const char *opt, const char *s, long long min, long long max)
{
	const char *errstr;
	long long v;

	if (!parse_num(s, min, max, &v, &errstr))
		die(EXIT_USAGE, "bad %s value, %s: %s", opt, errstr, s);
	return v;
}

/* A finite float (Python float() syntax) of at least `min`. */
static double
float_arg(const char *opt, const char *s, double min)
{
	double v;

	if (!num_py_float(s, strlen(s), &v) || !isfinite(v))
		die(EXIT_USAGE, "bad %s value, invalid: %s", opt, s);
	if (v < min)
		die(EXIT_USAGE, "bad %s value, too small: %s", opt, s);
	return v;
}

static const char *
choice(const char *opt, const char *s, const char *const *choices)
{
	sbuf b = SBUF_INIT;
	int i;

	for (i = 0; choices[i]; i++)
		if (strcmp(s, choices[i]) == 0)
			return choices[i];
	for (i = 0; choices[i]; i++)
		sb_printf(&b, "%s'%s'", i ? ", " : "", choices[i]);
	die(EXIT_USAGE, "argument %s: invalid choice: '%s' (choose from %s)", opt,
	    s, b.s);
}
