/*
 * trace-capture internals: the options every part reads, the HTTP layer
 * (http.c, the only file that talks to libcurl), the trace watcher
 * (watch.c), detection and probes (probe.c) and the per-framework capture
 * flows (flow.c).
 *
 * Ownership: strings in struct opts belong to argv or to main(); every
 * function that returns a char * hands the caller a heap string to free.
 */
#ifndef CAPTURE_H
#define CAPTURE_H

#include <signal.h>
#include <stddef.h>

#include "sbuf.h"

/* Parsed command line.  Numbers are kept raw; the flows clamp them (§7). */
struct opts {
	const char *url;		/* as given */
	char *base;			/* url without trailing '/' (heap) */
	const char *framework;		/* canonical: sglang, vllm, trtllm, tokenspeed */
	const char *output_dir;		/* NULL when not given (or empty) */
	const char *prefix;		/* --profile-prefix, else --default-profile-prefix */
	int prefix_given;		/* --profile-prefix was given: notes may name it */
	const char *records;		/* --records FILE, or NULL */
	long long num_steps, warmup_steps, probe_requests;
	long long probe_max_new_tokens;	/* 0: unset */
	long long start_step;
	int has_start_step;
	int profile_by_stage, pbs_given, merge_profiles;
	const char *probe_prompt;
	double probe_delay;
	const char *workload;		/* legacy, prefill, decode, both */
	long long prefill_in, prefill_out, decode_in, decode_out;
	/* Non-reference extensions; negative means "the reference default". */
	double wait_timeout;
	double settle_delay;
	double poll_interval;
};

/* ---- http.c ---- */

enum {
	HTTP_OK = 0,		/* transfer done, status 2xx */
	HTTP_STATUS = 1,	/* transfer done, status outside 2xx */
	HTTP_TRANSPORT = 2	/* no usable response: refused, timed out, ... */
};

struct http_res {
	long status;		/* 0 when no response arrived */
	sbuf body;		/* response body (capped, see http.c) */
	sbuf location;		/* a redirect response's target */
	int redirect_refused;	/* 1 not asked to, 2 another origin, 3 too many hops */
	char err[512];		/* transport error text */
};

/*
 * Connect and inactivity limits in seconds (request < 0: per-call
 * default); follow: --follow-redirects (same-origin redirects, at most 5).
 */
void http_init(double connect_timeout, double request_timeout, int follow);
void http_cleanup(void);

/*
 * The server (--url, issue 21): returns the base of every request URL
 * (heap): scheme://host[:port][/path] without the path's trailing '/'.
 * User info is sent as credentials with every request and never printed;
 * a query is appended to every request; a fragment is dropped.  Exits 2
 * when the URL is not an http:// or https:// URL (the message masks the
 * password).
 */
char *http_set_base(const char *url);


/*
 * One request, one connection.  body == NULL sends a POST with no body
 * (Content-Length: 0); method "GET" ignores body.  `timeout` is the
 * per-call inactivity limit in seconds unless --request-timeout overrides
 * it: no byte at all for that long (header bytes count), or a response
 * header still incomplete that long after it began, abandons the request,
 * and the message says which phase timed out.  A redirect response is
 * HTTP_STATUS unless --follow-redirects was given and it stays on the
 * server's origin.  Returns HTTP_OK, HTTP_STATUS or HTTP_TRANSPORT; r is
 * reset first and must be released with http_res_free().
 */
int http_call(const char *method, const char *url, const char *body,
    double timeout, struct http_res *r);
/* Same, but not abandoned when got_signal is set (for stop_profile). */
int http_call_always(const char *method, const char *url, const char *body,
    double timeout, struct http_res *r);
void http_res_free(struct http_res *r);

/*
 * Append "METHOD URL: HTTP 404: <body excerpt>" or "METHOD URL: <transport
 * error>" to out: the one shape every capture failure is reported in.
 * Passwords in URLs are masked.
 */
void http_describe(const char *method, const char *url,
    const struct http_res *r, sbuf *out);

/* ---- watch.c ---- */

/* A set of trace candidates with their size and mtime (identity). */
struct snap {
	struct snap_ent {
		char *path;
		long long size, mtime_ns;
	} *e;
	size_t n, cap;
};

/* Record every trace candidate under path (a directory, or one file). */
void snap_take(const char *path, struct snap *s);
void snap_free(struct snap *s);

/*
 * Wait until `path` holds at least one trace that is not in `before` (or
 * whose size or mtime changed since), and every such new candidate is
 * complete: its size and mtime unchanged across two polls, a gzip stream
 * that ends with its trailer, and a closing '}' or ']'.  Polls every
 * `poll` seconds up to `timeout` seconds; on timeout exits 4 naming the
 * folder watched and the incomplete files.  The new traces, sorted by
 * file name, are left in *found.
 */
void wait_new_traces(const char *path, const struct snap *before,
    double timeout, double poll, struct snap *found);

/* ---- probe.c ---- */

/* Reference timeouts in seconds (§8). */
#define T_INFO		60.0
#define T_READY		5.0
#define T_MODELS	60.0
#define T_PROBE		300.0
#define T_START_SGL	300.0
#define T_START		60.0
#define T_STOP		300.0

/* One stage's workload (§7.3); prompt is owned (heap). */
struct plan {
	const char *stage;	/* "prefill", "decode" or NULL for legacy */
	char *prompt;
	long long warm_n, warm_tok, cap_n, cap_tok;
};

/* The plan of a stage ("prefill", "decode") or of legacy (NULL). */
void build_plan(const struct opts *o, const char *stage, struct plan *p);

/* <base><path>, heap. */
char *url_of(const struct opts *o, const char *path);

/* First model id of GET /v1/models; exits 4 with the §9 messages. */
char *discover_model(const struct opts *o);

/*
 * Send `count` probes with indices offset.. and `tokens` output tokens:
 * SGLang /generate when model is NULL, else OpenAI chat with the
 * completions fallback.  Returns 0, or -1 with "<what> request k of n
 * failed: ..." appended to err.
 */
int probes(const struct opts *o, const char *model, const struct plan *p,
    long long offset, long long count, long long tokens, const char *what,
    sbuf *err);

/*
 * detect_framework_from_url (§5.6): the text hint of the absolute output
 * folder (may be NULL), then GET /server_info, /readiness, /v1/models;
 * SGLang when nothing matches.  Exits 4 when the server does not answer
 * at all.
 */
const char *detect_framework(const struct opts *o, const char *outdir_abs);

/* ---- records.c: the probe records (issue 19) ---- */

struct probe_rec {
	const char *stage;		/* "prefill", "decode", NULL (legacy); static */
	const char *phase;		/* "warm-up", "capture"; static */
	long long index;
	char endpoint[32];		/* the path that answered last */
	int ok;
	long status;			/* HTTP status, 0 without a response */
	double latency_us;
	long long tokens;		/* completion tokens, when has_tokens */
	int has_tokens, empty;
};

/* Keep one probe's record (copied). */
void probe_log(const struct probe_rec *r);
/* Fill r->empty, r->tokens and r->has_tokens from an answer body. */
void probe_answer(const char *body, size_t len, struct probe_rec *r);
/* Write the kept records to path as "probe" lines; 0, or -1 after a message. */
int probe_log_write(const char *path);

/* ---- flow.c ---- */

/*
 * Run the capture for o->framework and return the target path to print
 * (heap).  Every failure exits 4 (or 2 for bad combinations found late).
 */
char *run_capture(const struct opts *o);
/*
 * The capture succeeded: keep the temporary sglang-torch-profile-*
 * directory it made (without --output-dir).  Until this is called, that
 * directory is removed at exit, so a failed capture leaves nothing behind.
 */
void capture_keep_output(void);

/* 1 when the reference would treat p as a file path (.json or .gz suffix). */
int file_like_path(const char *p);

/* ---- sys.c: helpers of main.c and flow.c ---- */

/* mkdir -p; exits 4 naming the directory on failure. */
void make_dirs(const char *path);
/* Absolute form of path ('~' expanded, not symlink-resolved); heap. */
char *abs_path(const char *path);
/*
 * Sleep for a fractional number of seconds (no-op when <= 0); returns
 * early when a termination signal arrives.
 */
void sleep_s(double s);

/*
 * Set by SIGINT/SIGTERM/SIGHUP.  Requests in flight are abandoned and the
 * flows stop the profiler before exiting; only stop_profile itself runs
 * while it is set (http_call's `always` argument).
 */
extern volatile sig_atomic_t got_signal;
/* Monotonic clock in seconds. */
double now_mono(void);
/*
 * Catch the termination signals into got_signal, so that a profiler
 * already started is stopped; a second signal ends the program at once.
 */
void catch_signals(void);

#endif
