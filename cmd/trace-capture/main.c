/* trace-capture: capture prefill and decode torch-profiler traces from a live LLM server. */
#include <sys/stat.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "err.h"
#include "num.h"
#include "rules.h"
#include "sbuf.h"
#include "xalloc.h"

static void usage(int code) __attribute__((noreturn));
static long long num_arg(const char *opt, const char *s, long long min,
    long long max);
static double float_arg(const char *opt, const char *s, double min);
static const char *choice(const char *opt, const char *s,
    const char *const *choices);
static void check_remote(const struct opts *o);
static void catch_signals(void);

volatile sig_atomic_t got_signal;

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
	O_POLL, O_CONNECT, O_REQUEST, O_VERSION
};

static const struct option longopts[] = {
	{ "connect-timeout", required_argument, NULL, O_CONNECT },
	{ "decode-input-len", required_argument, NULL, O_DEC_IN },
	{ "decode-output-len", required_argument, NULL, O_DEC_OUT },
	{ "framework", required_argument, NULL, O_FRAMEWORK },
	{ "help", no_argument, NULL, 'h' },
	{ "merge-profiles", no_argument, NULL, O_MERGE },
	{ "no-merge-profiles", no_argument, NULL, O_NO_MERGE },
	{ "no-profile-by-stage", no_argument, NULL, O_NO_PBS },
	{ "num-steps", required_argument, NULL, O_NUM_STEPS },
	{ "output-dir", required_argument, NULL, O_OUTPUT_DIR },
	{ "poll-interval", required_argument, NULL, O_POLL },
	{ "prefill-input-len", required_argument, NULL, O_PRE_IN },
	{ "prefill-output-len", required_argument, NULL, O_PRE_OUT },
	{ "probe-delay", required_argument, NULL, O_PROBE_DELAY },
	{ "probe-max-new-tokens", required_argument, NULL, O_PROBE_MAX },
	{ "probe-prompt", required_argument, NULL, O_PROBE_PROMPT },
	{ "probe-requests", required_argument, NULL, O_PROBE_REQ },
	{ "profile-by-stage", no_argument, NULL, O_PBS },
	{ "profile-prefix", required_argument, NULL, O_PREFIX },
	{ "profile-workload", required_argument, NULL, O_WORKLOAD },
	{ "quiet", no_argument, NULL, 'q' },
	{ "request-timeout", required_argument, NULL, O_REQUEST },
	{ "settle-delay", required_argument, NULL, O_SETTLE },
	{ "start-step", required_argument, NULL, O_START_STEP },
	{ "url", required_argument, NULL, O_URL },
	{ "version", no_argument, NULL, O_VERSION },
	{ "wait-timeout", required_argument, NULL, O_WAIT },
	{ "warmup-steps", required_argument, NULL, O_WARMUP },
	{ NULL, 0, NULL, 0 }
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
	char *outdir_abs = NULL, *target;
	size_t n;
	int ch;

	tool_init(argc, argv);
	argv[0] = (char *)progname;	/* getopt_long's messages */
	while ((ch = getopt_long(argc, argv, "hq", longopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(EXIT_OK);
		case 'q':
			quiet = 1;
			break;
		case O_URL:
			o.url = optarg;
			break;
		case O_FRAMEWORK:
			fw = choice("--framework", optarg, fw_choices);
			break;
		case O_OUTPUT_DIR:
			o.output_dir = optarg[0] ? optarg : NULL;
			break;
		case O_PREFIX:
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
		case O_VERSION:
			print_version();
		default:
			usage(EXIT_USAGE);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", progname,
		    argv[optind]);
		usage(EXIT_USAGE);
	}
	if (o.url == NULL || o.url[0] == '\0') {
		fprintf(stderr, "%s: --url is required\n", progname);
		usage(EXIT_USAGE);
	}
	if (strncmp(o.url, "http://", 7) != 0 && strncmp(o.url, "https://", 8) != 0)
		die(EXIT_USAGE, "bad --url value, not an http:// or https:// URL: %s",
		    o.url);

	n = strlen(o.url);
	while (n > 0 && o.url[n - 1] == '/')
		n--;
	o.base = xstrndup(o.url, n);
	if (o.output_dir)
		outdir_abs = abs_path(o.output_dir);

	catch_signals();
	http_init(connect_timeout, request_timeout);
	o.framework = framework_canonical(fw);
	if (strcmp(o.framework, "auto") == 0)
		o.framework = detect_framework(&o, outdir_abs);
	else
		note_msg("framework: %s (from --framework)",
		    framework_display(o.framework));
	if (strcmp(o.framework, "sglang") != 0)
		check_remote(&o);

	target = run_capture(&o);
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
	if (o->prefix[0] && (strcmp(o->framework, "vllm") == 0 ||
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

void
make_dirs(const char *path)
{
	char *p = xstrdup(path), *s;
	struct stat st;

	for (s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST)
			die(EXIT_CAPTURE, "cannot create directory '%s': %s", p,
			    strerror(errno));
		*s = c;
		if (c == '\0')
			break;
	}
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		die(EXIT_CAPTURE, "cannot create directory '%s': %s", path,
		    errno ? strerror(errno) : "not a directory");
	free(p);
}

char *
abs_path(const char *path)
{
	sbuf b = SBUF_INIT;
	const char *home = getenv("HOME");
	char *cwd;

	if (path[0] == '~' && (path[1] == '/' || path[1] == '\0') && home &&
	    home[0]) {
		sb_adds(&b, home);
		path++;
		sb_adds(&b, path);
	} else if (path[0] != '/') {
		if ((cwd = getcwd(NULL, 0)) == NULL)
			die(EXIT_CAPTURE, "cannot get the current directory: %s",
			    strerror(errno));
		sb_printf(&b, "%s/%s", strcmp(cwd, "/") ? cwd : "", path);
		free(cwd);
	} else {
		sb_adds(&b, path);
	}
	while (b.len > 1 && b.s[b.len - 1] == '/')
		b.s[--b.len] = '\0';
	return sb_detach(&b);
}

void
sleep_s(double s)
{
	struct timespec ts;

	if (!(s > 0))
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (!got_signal && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void
on_signal(int sig)
{
	got_signal = sig;
}

/*
 * Catch the termination signals so that a profiler already started is
 * stopped.  A second signal ends the program at once (SA_RESETHAND).  A
 * signal ignored on entry (SIGINT in a background job) stays ignored.
 */
static void
catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

double
now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
usage(int code)
{
	FILE *fp = code == EXIT_OK ? stdout : stderr;

	fprintf(fp,
"usage: trace-capture [-hq] --url url [--framework name] [--output-dir dir]\n"
"           [--profile-prefix prefix] [--profile-workload workload]\n"
"           [--num-steps n] [--warmup-steps n] [--probe-requests n]\n"
"           [--probe-prompt text] [--probe-max-new-tokens n]\n"
"           [--probe-delay seconds] [--prefill-input-len n]\n"
"           [--prefill-output-len n] [--decode-input-len n]\n"
"           [--decode-output-len n] [--start-step n]\n"
"           [--profile-by-stage | --no-profile-by-stage]\n"
"           [--merge-profiles | --no-merge-profiles]\n"
"           [--wait-timeout seconds] [--settle-delay seconds]\n"
"           [--poll-interval seconds] [--connect-timeout seconds]\n"
"           [--request-timeout seconds]\n"
"       trace-capture --version\n");
	if (code == EXIT_OK)
		exit(tool_finish(EXIT_OK));
	exit(code);
}
