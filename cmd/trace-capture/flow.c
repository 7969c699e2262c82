/*
 * The capture flows (spec capture-and-cli.md §6): the SGLang flow, the
 * remote flow shared by vLLM, TensorRT-LLM and TokenSpeed, and the
 * dispatcher over the stage workloads.
 */
#include <sys/stat.h>

#include <ftw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "err.h"
#include "json.h"
#include "num.h"
#include "rules.h"
#include "sbuf.h"
#include "xalloc.h"

/* ---- start / stop ---- */

/*
 * POST /stop_profile.  Returns the http_call result; the description of a
 * failure goes to err.
 */
static int
stop_profile(const struct opts *o, sbuf *err)
{
	struct http_res r = { 0 };
	char *url = url_of(o, "/stop_profile");
	/* Sent even after a signal, so the profiler is not left running. */
	int rc = http_call_always("POST", url, NULL, got_signal ? 10.0 : T_STOP, &r);

	if (rc != HTTP_OK)
		http_describe("POST", url, &r, err);
	free(url);
	http_res_free(&r);
	return rc;
}

/*
 * A failure after start_profile was sent (or attempted): report it, still
 * try to stop the profiler so it is not left running, and exit 4.
 */
static void __attribute__((noreturn))
fail_after_start(const struct opts *o, const char *msg, const char *hint)
{
	sbuf err = SBUF_INIT;

	err_msg("%s", msg);
	if (hint)
		err_msg("%s", hint);
	if (stop_profile(o, &err) == HTTP_OK)
		die(EXIT_CAPTURE, "stop_profile was still sent, and accepted");
	die(EXIT_CAPTURE, "stop_profile was still sent, and failed too: %s",
	    err.s);
}

/*
 * A start that timed out may still be running on the server: a stop sent
 * now can come before it, and the profiler would then run on.  Said
 * instead of the configuration hint, which is about a refused start.
 */
static const char *
start_timeout_hint(const struct http_res *r)
{
	if (r->status != 0 || strncmp(r->err, "timed out", 9) != 0)
		return NULL;
	return "warning: the server may still be starting its profiler; if the start "
	    "completes after the stop sent now, the profiler runs on: check the server and "
	    "POST /stop_profile again (a longer --request-timeout waits for a slow start)";
}

static const char *
start_hint(const char *fw)
{
	if (strcmp(fw, "vllm") == 0)
		return "vLLM live torch profiling requires the server to be "
		    "launched with --profiler-config '{\"profiler\":\"torch\","
		    "\"torch_profiler_dir\":\"...\"}' and to expose POST /start_profile.";
	if (strcmp(fw, "trtllm") == 0)
		return "TensorRT-LLM live torch profiling requires a server build "
		    "that exposes POST /start_profile plus the env vars "
		    "TLLM_PROFILE_START_STOP=<start>-<stop> and "
		    "TLLM_TORCH_PROFILE_TRACE=/shared/path.";
	if (strcmp(fw, "tokenspeed") == 0)
		return "TokenSpeed live torch profiling requires a server build that "
		    "exposes POST /start_profile and POST /stop_profile. The helper "
		    "passes output_dir, activities, and profile_id in the start payload.";
	return NULL;
}

static double
wait_timeout(const struct opts *o, double dflt)
{
	return o->wait_timeout >= 0 ? o->wait_timeout : dflt;
}

static double
poll_interval(const struct opts *o)
{
	return o->poll_interval > 0 ? o->poll_interval : 0.5;
}

/* ---- SGLang (§6.2) ---- */

/*
 * A new file of ours in a folder made for this capture: O_EXCL and
 * O_NOFOLLOW, so nothing planted under the name is written through
 * (issue 27).
 */
static void
write_file(const char *path, const char *s, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	FILE *fp = fd >= 0 ? fdopen(fd, "wb") : NULL;

	if (fp == NULL || fwrite(s, 1, n, fp) != n ||
	    (n > 0 && s[n - 1] != '\n' && fputc('\n', fp) == EOF) ||
	    fclose(fp) != 0)
		die(EXIT_CAPTURE, "cannot write '%s': %s", path, strerror(errno));
}

static char *
sglang_flow(const struct opts *o, const char *root, const struct plan *p,
    const char *num_steps, int by_stage, const char *prefix)
{
	struct timespec ts;
	char epoch[32];
	sbuf d = SBUF_INIT, body = SBUF_INIT, err = SBUF_INIT, sa = SBUF_INIT;
	struct http_res r = { 0 };
	struct snap before = { 0 }, found = { 0 };
	char *url;
	const char *label = p->stage ? p->stage : "legacy";
	int rc;

	make_dirs(root);
	clock_gettime(CLOCK_REALTIME, &ts);
	sb_printf(&d, "%s/%s", root,
	    num_repr((double)ts.tv_sec + ts.tv_nsec / 1e9, epoch));
	/* this capture's own folder: made now, never one that was there */
	if (mkdir(d.s, 0777) != 0)
		die(EXIT_CAPTURE, "cannot create directory '%s': %s", d.s, strerror(errno));

	url = url_of(o, "/server_info");
	if (http_call("GET", url, NULL, T_INFO, &r) == HTTP_OK && r.body.len > 0 &&
	    json_valid(r.body.s, r.body.len)) {
		sb_printf(&sa, "%s/server_args.json", d.s);
		write_file(sa.s, r.body.s, r.body.len);
	}
	free(url);

	note_msg("%s: %lld warm-up request%s, start_profile, %lld capture "
	    "request%s, stop_profile", label, p->warm_n, p->warm_n == 1 ? "" : "s", p->cap_n,
	    p->cap_n == 1 ? "" : "s");
	if (probes(o, NULL, p, 0, p->warm_n, p->warm_tok, "warm-up", &err) != 0)
		die(EXIT_CAPTURE, "%s", err.s);

	sb_adds(&body, "{\"output_dir\": ");
	json_quote(&body, d.s, d.len);
	sb_adds(&body, ", \"num_steps\": ");
	json_quote(&body, num_steps, strlen(num_steps));
	sb_printf(&body, ", \"activities\": [\"CPU\", \"GPU\"], "
	    "\"profile_by_stage\": %s, \"merge_profiles\": %s, "
	    "\"profile_prefix\": ", by_stage ? "true" : "false",
	    o->merge_profiles ? "true" : "false");
	json_quote(&body, prefix, strlen(prefix));
	if (o->has_start_step)
		sb_printf(&body, ", \"start_step\": \"%lld\"", o->start_step);
	sb_addc(&body, '}');
	snap_take(d.s, &before);
	url = url_of(o, "/start_profile");
	rc = http_call("POST", url, body.s, T_START_SGL, &r);
	if (rc != HTTP_OK) {
		sb_adds(&err, "cannot start the SGLang profiler: ");
		http_describe("POST", url, &r, &err);
		free(url);	/* before the exit: nothing of it left unreachable */
		fail_after_start(o, err.s, start_timeout_hint(&r));
	}
	free(url);

	sleep_s(o->probe_delay);
	if (got_signal)
		fail_after_start(o, "interrupted by a signal", NULL);
	if (probes(o, NULL, p, p->warm_n, p->cap_n, p->cap_tok, "capture", &err) != 0)
		fail_after_start(o, err.s, NULL);
	/* SGLang stops by itself after num_steps; a refused stop is normal. */
	if (stop_profile(o, &err) != HTTP_OK)
		note_msg("%s: stop_profile not accepted (ignored, as SGLang stops "
		    "after num_steps): %s", label, err.s);

	note_msg("%s: waiting up to %g s for traces in '%s'", label,
	    wait_timeout(o, 180), d.s);
	wait_new_traces(d.s, &before, wait_timeout(o, 180), poll_interval(o),
	    &found);
	note_msg("%s: %zu trace file(s) complete", label, found.n);

	snap_free(&before);
	snap_free(&found);
	sb_free(&body);
	sb_free(&err);
	sb_free(&sa);
	http_res_free(&r);
	return sb_detach(&d);
}

/* ---- vLLM, TensorRT-LLM, TokenSpeed (§6.3) ---- */

/*
 * Move dir sfd's `name` to dfd's `dname` without replacing anything there:
 * renameat2 with RENAME_NOREPLACE, or link and unlink where the file
 * system has no such rename.  Returns 0, or -1 with errno (EEXIST: the
 * name is taken).  Never an lstat then a rename, which a file appearing
 * in between would lose.
 */
static int
move_noreplace(int sfd, const char *name, int dfd, const char *dname)
{
	if (renameat2(sfd, name, dfd, dname, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
		return -1;
	if (linkat(sfd, name, dfd, dname, 0) != 0)
		return -1;
	if (unlinkat(sfd, name, 0) != 0) {
		int e = errno;
		unlinkat(dfd, dname, 0);
		errno = e;
		return -1;
	}
	return 0;
}

/*
 * The folder holding `path` (a trace the watcher found below `root`),
 * opened one component at a time from root's descriptor with O_NOFOLLOW,
 * along the folder's real path: a link inside the output folder to
 * another folder inside it ("latest -> .") leads to it, but a trace
 * reached through a link to anywhere else is never moved (issue 27).
 * Returns the descriptor and sets *name to the file's last component,
 * or exits 4 naming the trace.
 */
static int
open_parent(int rootfd, const char *realroot, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/'), *p, *q;
	char *par = xstrndup(path, slash ? (size_t)(slash - path) : 0), *real;
	size_t rl = strlen(realroot);
	sbuf comp = SBUF_INIT;
	int fd, nfd;

	*name = slash ? slash + 1 : path;
	real = realpath(par[0] ? par : "/", NULL);
	/* inside: the root itself or below it (a root of "/" holds everything) */
	if (!real || strncmp(real, realroot, rl) != 0 ||
	    (rl > 1 && real[rl] != '/' && real[rl] != '\0'))
		die(EXIT_CAPTURE, "'%s' lies outside the output folder '%s'%s: a trace there is "
		    "never moved (point --output-dir at the folder the server writes to)", path,
		    realroot, real ? " (behind a symbolic link)" : "");
	if ((fd = dup(rootfd)) < 0)
		die(EXIT_CAPTURE, "cannot use '%s': %s", realroot, strerror(errno));
	for (p = real + rl; *p == '/'; p++)
		;
	while (*p) {
		q = strchr(p, '/');
		sb_reset(&comp);
		sb_add(&comp, p, q ? (size_t)(q - p) : strlen(p));
		nfd = openat(fd, comp.s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0)
			die(EXIT_CAPTURE, "cannot move '%s': the folder '%s' %s while the traces were "
			    "moved", path, real, errno == ELOOP || errno == ENOTDIR ?
			    "became a symbolic link" : strerror(errno));
		close(fd);
		fd = nfd;
		if (!q)
			break;
		for (p = q; *p == '/'; p++)
			;
	}
	sb_free(&comp);
	free(real);
	free(par);
	return fd;
}

/*
 * <root>/<stage> as a folder of ours: made here, or one that is there
 * already as a real folder; a symbolic link (vLLM profiler folders are
 * often world-writable) or anything else is refused with exit 4 before it
 * is used (issue 27).  Returns its descriptor (O_NOFOLLOW) when
 * want_fd, else -1.
 */
static int
stage_dir(const char *root, const char *stage, int want_fd)
{
	sbuf dir = SBUF_INIT;
	struct stat st;
	int fd = -1;

	sb_printf(&dir, "%s/%s", root, stage);
	if (mkdir(dir.s, 0777) != 0 && errno != EEXIST)
		die(EXIT_CAPTURE, "cannot create directory '%s': %s", dir.s, strerror(errno));
	if (lstat(dir.s, &st) != 0)
		die(EXIT_CAPTURE, "cannot use '%s': %s", dir.s, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die(EXIT_CAPTURE, "'%s' is %s, not a folder: trace-capture makes its stage folders "
		    "itself (remove it, or choose another --output-dir)", dir.s,
		    S_ISLNK(st.st_mode) ? "a symbolic link" : "something else");
	if (want_fd && (fd = open(dir.s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		die(EXIT_CAPTURE, "cannot use '%s': %s", dir.s,
		    errno == ELOOP ? "it became a symbolic link" : strerror(errno));
	sb_free(&dir);
	return fd;
}

/* <root>/<stage> absent, or a real folder (stage_dir makes it later). */
static void
stage_check(const char *root, const char *stage)
{
	sbuf dir = SBUF_INIT;
	struct stat st;

	sb_printf(&dir, "%s/%s", root, stage);
	if (lstat(dir.s, &st) == 0)
		close(stage_dir(root, stage, 1));
	sb_free(&dir);
}

/*
 * Move the stage's new traces into <root>/<stage>/ (flattened).  A trace
 * already in that folder stays; which folder a trace is in is decided by
 * device and inode, not by its path's spelling, so links in the output
 * folder ("latest -> .") neither hide one nor move one twice (issue 21).
 * Every move is made between folders opened without following a link:
 * nothing outside the output folder is moved, nothing lands outside it
 * (issue 27).  A name that is taken gets a time prefix, then a counter.
 */
static char *
move_to_stage(const char *root, const char *stage, const struct snap *found)
{
	sbuf dir = SBUF_INIT, dst = SBUF_INIT;
	struct stat sd, sp, sf;
	struct timespec ts;
	dev_t *mdev = NULL;
	ino_t *mino = NULL;
	size_t i, k, nm = 0;
	int rootfd, sfd, pfd;
	char *realroot;

	sb_printf(&dir, "%s/%s", root, stage);
	if ((rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (realroot = realpath(root, NULL)) == NULL)
		die(EXIT_CAPTURE, "cannot use '%s': %s", root, strerror(errno));
	sfd = stage_dir(root, stage, 1);
	if (fstat(sfd, &sd) != 0)
		die(EXIT_CAPTURE, "cannot use '%s': %s", dir.s, strerror(errno));
	mdev = xcalloc(found->n ? found->n : 1, sizeof *mdev);
	mino = xcalloc(found->n ? found->n : 1, sizeof *mino);
	for (i = 0; i < found->n; i++) {
		const char *src = found->e[i].path, *name;
		int tries;

		if (got_signal)
			die(EXIT_CAPTURE, "interrupted by a signal while moving the traces to '%s'",
			    dir.s);
		pfd = open_parent(rootfd, realroot, src, &name);
		if (fstat(pfd, &sp) == 0 && sp.st_dev == sd.st_dev && sp.st_ino == sd.st_ino) {
			close(pfd);
			continue;	/* in the stage folder already */
		}
		if (fstatat(pfd, name, &sf, AT_SYMLINK_NOFOLLOW) != 0)
			die(EXIT_CAPTURE, "cannot move '%s': %s", src, strerror(errno));
		if (!S_ISREG(sf.st_mode)) {
			warn_msg("'%s' is not a regular file (a symbolic link?): left where it is",
			    src);
			close(pfd);
			continue;
		}
		for (k = 0; k < nm && !(mdev[k] == sf.st_dev && mino[k] == sf.st_ino); k++)
			;
		if (k < nm) {
			close(pfd);
			continue;	/* the same file under a second name: moved already */
		}
		sb_reset(&dst);
		sb_adds(&dst, name);
		for (tries = 0; move_noreplace(pfd, name, sfd, dst.s) != 0; tries++) {
			if (errno != EEXIST || tries >= 100)
				die(EXIT_CAPTURE, "cannot move '%s' to '%s/%s': %s%s", src, dir.s, dst.s,
				    strerror(errno), errno == EXDEV ? " (the trace is on another "
				    "file system: point --output-dir at it)" : "");
			clock_gettime(CLOCK_REALTIME, &ts);
			sb_reset(&dst);
			if (tries == 0)
				sb_printf(&dst, "%lld%09ld-%s", (long long)ts.tv_sec, ts.tv_nsec, name);
			else
				sb_printf(&dst, "%lld%09ld-%d-%s", (long long)ts.tv_sec, ts.tv_nsec,
				    tries, name);
		}
		close(pfd);
		mdev[nm] = sf.st_dev;
		mino[nm++] = sf.st_ino;
	}
	close(sfd);
	close(rootfd);
	free(realroot);
	free(mdev);
	free(mino);
	sb_free(&dst);
	return sb_detach(&dir);
}

static char *
remote_flow(const struct opts *o, const char *out, int out_is_file,
    const struct plan *p)
{
	const char *fw = o->framework, *label = p->stage ? p->stage : "legacy";
	struct snap before = { 0 }, found = { 0 };
	struct http_res r = { 0 };
	sbuf body = SBUF_INIT, err = SBUF_INIT, id = SBUF_INIT;
	char *model, *url, *ret;
	double settle;
	size_t i, newest;
	int rc;

	snap_take(out, &before);
	model = discover_model(o);
	note_msg("%s: model '%s'; %lld warm-up request%s, start_profile, %lld "
	    "capture request%s, stop_profile", label, model, p->warm_n,
	    p->warm_n == 1 ? "" : "s", p->cap_n, p->cap_n == 1 ? "" : "s");
	if (p->warm_n > 0 &&
	    probes(o, model, p, 0, p->warm_n, p->warm_tok, "warm-up", &err) != 0)
		die(EXIT_CAPTURE, "%s", err.s);

	if (strcmp(fw, "tokenspeed") == 0) {
		sb_adds(&id, o->prefix[0] ? o->prefix : "triage-trace");
		if (p->stage)
			sb_printf(&id, "-%s", p->stage);
		sb_adds(&body, "{\"output_dir\": ");
		json_quote(&body, out, strlen(out));
		sb_adds(&body, ", \"activities\": [\"CPU\", \"GPU\"], \"with_stack\": "
		    "true, \"record_shapes\": false, \"profile_id\": ");
		json_quote(&body, id.s, id.len);
		sb_addc(&body, '}');
	}
	url = url_of(o, "/start_profile");
	/* Any 2xx counts as started, JSON or not (a deliberate deviation). */
	rc = http_call("POST", url, body.len ? body.s : NULL, T_START, &r);
	if (rc != HTTP_OK) {
		sb_printf(&err, "cannot start the %s profiler: ",
		    framework_display(fw));
		http_describe("POST", url, &r, &err);
		free(url);	/* before the exit: nothing of it left unreachable */
		fail_after_start(o, err.s, start_timeout_hint(&r) ? start_timeout_hint(&r) :
		    start_hint(fw));
	}
	free(url);

	settle = o->settle_delay >= 0 ? o->settle_delay : 5.0;
	sleep_s(o->probe_delay > settle ? o->probe_delay : settle);
	if (got_signal)
		fail_after_start(o, "interrupted by a signal", NULL);
	if (probes(o, model, p, p->warm_n, p->cap_n, p->cap_tok, "capture", &err) != 0)
		fail_after_start(o, err.s, NULL);
	if (stop_profile(o, &err) != HTTP_OK)
		die(EXIT_CAPTURE, "Failed to stop %s profiler via %s/stop_profile: %s",
		    framework_display(fw), o->base, err.s);

	note_msg("%s: waiting up to %g s for new traces in '%s'", label,
	    wait_timeout(o, 60), out);
	wait_new_traces(out, &before, wait_timeout(o, 60), poll_interval(o), &found);
	note_msg("%s: %zu new trace file(s) complete", label, found.n);

	if (p->stage && !out_is_file) {
		ret = move_to_stage(out, p->stage, &found);
	} else if (out_is_file) {
		ret = xstrdup(out);
	} else {
		/* The folder holding the newest new trace. */
		newest = 0;
		for (i = 1; i < found.n; i++)
			if (found.e[i].mtime_ns > found.e[newest].mtime_ns)
				newest = i;
		ret = xstrdup(found.e[newest].path);
		*strrchr(ret, '/') = '\0';
	}
	free(model);
	snap_free(&before);
	snap_free(&found);
	sb_free(&body);
	sb_free(&err);
	sb_free(&id);
	http_res_free(&r);
	return ret;
}

/* ---- dispatcher (§6.1) ---- */

/*
 * The sglang-torch-profile-* directory this run made, removed at exit
 * unless the capture succeeded (issue 19: a failed capture left it behind).
 */
static char *made_root;
static int capture_done;

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void
remove_made_root(void)
{
	if (made_root && !capture_done)
		nftw(made_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void
capture_keep_output(void)
{
	capture_done = 1;
}

/* Absolute output folder, or a fresh sglang-torch-profile-* temp dir. */
static char *
sglang_root(const struct opts *o)
{
	const char *tmp = getenv("TMPDIR");
	sbuf b = SBUF_INIT;

	if (o->output_dir)
		return abs_path(o->output_dir);
	sb_printf(&b, "%s/sglang-torch-profile-XXXXXX",
	    tmp && tmp[0] ? tmp : "/tmp");
	if (mkdtemp(b.s) == NULL)
		die(EXIT_CAPTURE, "cannot create a temporary directory in '%s': %s",
		    tmp && tmp[0] ? tmp : "/tmp", strerror(errno));
	made_root = xstrdup(b.s);
	atexit(remove_made_root);
	return sb_detach(&b);
}

/* A path the reference treats as a file: its last suffix is .json or .gz. */
int
file_like_path(const char *p)
{
	const char *b = strrchr(p, '/'), *dot;

	b = b ? b + 1 : p;
	dot = strrchr(b, '.');
	return dot && dot != b && (strcmp(dot, ".json") == 0 ||
	    strcmp(dot, ".gz") == 0);
}

char *
run_capture(const struct opts *o)
{
	static const char *const both[] = { "prefill", "decode", NULL };
	static const char *const pre[] = { "prefill", NULL };
	static const char *const dec[] = { "decode", NULL };
	const char *const *stages = NULL;
	struct plan p;
	char *root, *ret, *sub, *real;
	char num[32];
	sbuf pfx = SBUF_INIT, sd = SBUF_INIT;
	int i, is_file;

	if (strcmp(o->workload, "both") == 0)
		stages = both;
	else if (strcmp(o->workload, "prefill") == 0)
		stages = pre;
	else if (strcmp(o->workload, "decode") == 0)
		stages = dec;

	if (strcmp(o->framework, "sglang") == 0) {
		root = sglang_root(o);
		if (stages == NULL) {
			build_plan(o, NULL, &p);
			snprintf(num, sizeof num, "%lld", o->num_steps);
			ret = sglang_flow(o, root, &p, num, o->profile_by_stage,
			    o->prefix);
			free(p.prompt);
			free(root);
			return ret;
		}
		/* The guard step: SGLang counts the step before checking (§6.2). */
		snprintf(num, sizeof num, "%lld", (o->num_steps > 1 ? o->num_steps : 1) + 1);
		make_dirs(root);
		for (i = 0; stages[i]; i++)
			stage_dir(root, stages[i], 0);
		for (i = 0; stages[i]; i++) {
			build_plan(o, stages[i], &p);
			sb_reset(&pfx);
			if (o->prefix[0])
				sb_printf(&pfx, "%s-%s", o->prefix, stages[i]);
			else
				sb_adds(&pfx, stages[i]);
			sb_reset(&sd);
			sb_printf(&sd, "%s/%s", root, stages[i]);
			sub = sglang_flow(o, sd.s, &p, num, 0, pfx.s);
			free(sub);
			free(p.prompt);
		}
		sb_free(&pfx);
		sb_free(&sd);
		if ((real = realpath(root, NULL)) == NULL)
			return root;
		free(root);
		return real;
	}

	root = abs_path(o->output_dir);
	is_file = file_like_path(root);
	if (is_file) {
		char *slash = strrchr(root, '/');
		*slash = '\0';
		make_dirs(slash == root ? "/" : root);
		*slash = '/';
	} else {
		make_dirs(root);
	}
	if (stages == NULL) {
		build_plan(o, NULL, &p);
		ret = remote_flow(o, root, is_file, &p);
		free(p.prompt);
		free(root);
		return ret;
	}
	/* a stage folder that is a symbolic link: refused before any request */
	for (i = 0; stages[i]; i++)
		stage_check(root, stages[i]);
	for (i = 0; stages[i]; i++) {
		build_plan(o, stages[i], &p);
		sub = remote_flow(o, root, 0, &p);
		free(sub);
		free(p.prompt);
	}
	real = realpath(root, NULL);
	if (real) {
		free(root);
		return real;
	}
	return root;
}
