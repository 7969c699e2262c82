/* Serving-framework resolution (kernel-table.md Appendix B, capture-and-cli.md §5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "extract.h"
#include "json.h"
#include "opt.h"
#include "rules.h"
#include "scan.h"
#include "text.h"
#include "xalloc.h"
#include "zio.h"

/* --framework-captured (extract.h): defined here, beside its one reader, so
 * that the fuzz harnesses linking this file without main.c link. */
const char *framework_captured;

static const char *tokenspeed_keys[] = {
	"attn_tp_size", "dense_tp_size", "moe_tp_size", "enable_mla_l1_5_cache",
	"mla_chunk_multiplier", "comm_fusion_max_num_tokens", "enable_allreduce_fusion", NULL
};
static const char *sglang_keys[] = {
	"attention_backend", "sampling_backend", "disable_cuda_graph",
	"disable_piecewise_cuda_graph", "chunked_prefill_size", "schedule_policy", NULL
};

static int
has_key(const json_doc *d, const char **keys)
{
	int i, k, n = d->tok[0].size;
	sbuf t = SBUF_INIT, kn = SBUF_INIT;

	for (i = 1, k = 0; k < n; k++) {
		size_t j;
		json_str(d, i, &t, NULL);
		text_normalize(t.s ? t.s : "", t.len, &kn);
		text_lower(kn.s, kn.len);
		for (j = 0; keys[j]; j++)
			if (!strcmp(sb_str(&kn), keys[j])) {
				sb_free(&t);
				sb_free(&kn);
				return 1;
			}
		i = json_skip(d, i + 1);
	}
	sb_free(&t);
	sb_free(&kn);
	return 0;
}

const char *
server_args_hint(const char *jsontext)
{
	json_doc d = { 0 };
	sbuf low = SBUF_INIT;
	const char *hint = NULL;

	if (!jsontext || json_parse(&d, jsontext, strlen(jsontext)) < 0 ||
	    d.tok[0].type != JSMN_OBJECT || d.tok[0].size == 0)
		goto out;
	/* The reference serializes with sorted keys; substring tests do not
	 * depend on member order, so the minified text serves. */
	sb_adds(&low, jsontext);
	text_lower(low.s, low.len);
	if (strstr(low.s, "tokenspeed") || strstr(low.s, "token-speed")) {
		hint = "tokenspeed";
		goto out;
	}
	if (has_key(&d, tokenspeed_keys)) {
		hint = "tokenspeed";
		goto out;
	}
	if ((hint = framework_text_hint(jsontext, strlen(jsontext))) != NULL)
		goto out;
	if (has_key(&d, sglang_keys))
		hint = "sglang";
out:
	json_doc_free(&d);
	sb_free(&low);
	return hint;
}

struct hintctx {
	sbuf text;
	int n;
	const json_doc *d;	/* the event being read (owned by the scanner) */
};

static void
add_pystr(struct hintctx *h, int i)
{
	sbuf t = SBUF_INIT;

	if (i >= 0)
		json_pystr(h->d, i, &t, NULL);
	sb_add(&h->text, t.s ? t.s : "", t.len);
	sb_addc(&h->text, ' ');
	sb_free(&t);
}

static int
hint_event(void *ctx, const json_doc *d, unsigned long long off)
{
	struct hintctx *h = ctx;
	int args, k, n, i;

	(void)off;
	if (d->ntok == 0)
		return 1;
	h->d = d;
	add_pystr(h, json_get(h->d, 0, "name"));
	add_pystr(h, json_get(h->d, 0, "cat"));
	add_pystr(h, json_get(h->d, 0, "pid"));
	args = json_get(h->d, 0, "args");
	if (args >= 0 && h->d->tok[args].type == JSMN_OBJECT) {
		n = h->d->tok[args].size;
		for (k = 0, i = args + 1; k < n && k < 8; k++) {
			add_pystr(h, i);
			if (json_kind(h->d, i + 1) == JK_STR)
				add_pystr(h, i + 1);
			i = json_skip(h->d, i + 1);
		}
	}
	return ++h->n >= 256;
}

const char *
trace_content_hint(const char *path)
{
	struct hintctx h = { SBUF_INIT, 0, NULL };
	struct scan_stats st;
	char err[512];
	zio *z = zio_open(path);
	const char *hint = NULL;
	int r;

	if (!z)
		return NULL;
	r = scan_run(z, path, hint_event, &h, &st, err, sizeof err, NULL);
	zio_close(z);
	/* A load error means no hint, except that stopping early is not one. */
	if (r != SCAN_ERROR && h.text.len)
		hint = framework_text_hint(h.text.s, h.text.len);
	sb_free(&h.text);
	return hint;
}

/*
 * The corrected content hint: which framework's code the trace's own
 * Python frames (python/sglang/..., vllm/..., tensorrt_llm/...) and op
 * names (sgl_kernel::, vllm::, trtllm::) belong to, by majority, over the
 * head of the trace: until one framework has 64 hits or 200,000 events
 * were read.  The reference's hint reads 256 events' text and takes the
 * first name it meets, so an SGLang trace that calls one vllm:: op reads
 * as vLLM, and most traces give no hint at all.
 */
struct framehint {
	unsigned long long hits[4], events;
	sbuf name;
};

struct framehint *
frames_hint_new(void)
{
	return xcalloc(1, sizeof(struct framehint));
}

void
frames_hint_free(struct framehint *h)
{
	if (!h)
		return;
	sb_free(&h->name);
	free(h);
}

static const char *const fh_names[4] = { "sglang", "vllm", "trtllm", "tokenspeed" };
static const char *const fh_frame[4] = { "sglang/", "vllm/", "tensorrt_llm/", "tokenspeed/" };
static const char *const fh_op[4] = { "sgl_kernel::", "vllm::", "trtllm::", "tokenspeed::" };

int
frames_hint_event(struct framehint *h, const json_doc *d, int in, int ic)
{
	int k, pyfn;

	if (d->ntok == 0 || in < 0 || json_kind(d, in) != JK_STR)
		return ++h->events >= 200000;
	pyfn = ic >= 0 && json_str_eq(d, ic, "python_function", 15);
	json_str(d, in, &h->name, NULL);
	for (k = 0; k < 4; k++) {
		const char *pat = pyfn ? fh_frame[k] : fh_op[k];
		if (memmem(h->name.s ? h->name.s : "", h->name.len, pat, strlen(pat)) &&
		    ++h->hits[k] >= 64) {
			h->events++;	/* this event was read too */
			return 1;
		}
	}
	return ++h->events >= 200000;
}

static int
frame_hint_event(void *ctx, const json_doc *d, unsigned long long off)
{
	(void)off;
	return frames_hint_event(ctx, d, json_get(d, 0, "name"), json_get(d, 0, "cat"));
}

const char *
frames_hint_result(const struct framehint *h, sbuf *evidence)
{
	int k, best = -1;

	for (k = 0; k < 4; k++)
		if (h->hits[k] && (best < 0 || h->hits[k] > h->hits[best]))
			best = k;
	if (best < 0)
		return NULL;
	sb_reset(evidence);
	sb_printf(evidence, "%llu Python %s of %s in the first %llu event%s",
	    h->hits[best], h->hits[best] == 1 ? "frame or op" : "frames or ops", fh_frame[best],
	    h->events, h->events == 1 ? "" : "s");
	return fh_names[best];
}

const char *
trace_frames_hint(const char *path, sbuf *evidence)
{
	struct framehint *h;
	struct scan_stats st;
	char err[512];
	zio *z = zio_open(path);
	const char *r;

	if (!z)
		return NULL;
	h = frames_hint_new();
	scan_run(z, path, frame_hint_event, h, &st, err, sizeof err, NULL);
	zio_close(z);
	r = frames_hint_result(h, evidence);
	frames_hint_free(h);
	return r;
}

/*
 * A framework the input's path names (not under --compat reference, which
 * takes it at once): the traces' own Python frames, when they name
 * another, win (docs/deviations.md C26; a trace copied as vllm_run.json.gz
 * had the vLLM catalog applied to SGLang code).
 */
static const char *path_hint;
static char *path_hint_of;
#define PATH_OVERRULED 8ULL

const char *
framework_over_path(const char *frames_fw, const char *fallback, const char **source,
    sbuf *evidence)
{
	if (path_hint) {
		/* the code outweighs the name from PATH_OVERRULED frames or ops on */
		if (frames_fw && strcmp(frames_fw, path_hint) != 0 &&
		    strtoull(sb_str(evidence), NULL, 10) >= PATH_OVERRULED) {
			warn_msg("'%s': its path names %s, its traces' Python code %s (%s): the "
			    "code is taken", path_hint_of, framework_display(path_hint),
			    framework_display(frames_fw), sb_str(evidence));
			*source = "trace";
			return frames_fw;
		}
		sb_reset(evidence);
		*source = "path";
		return path_hint;
	}
	*source = "trace";
	return frames_fw ? frames_fw : default_framework(fallback, source);
}

const char *
resolve_framework(const char *explicit_fw, const char *fallback, const char *abspath,
    int is_dir, const char *server_args_json, const struct tlist *traces, const char **source,
    sbuf *evidence, struct framehint **defer)
{
	const char *c = framework_canonical(explicit_fw ? explicit_fw : "auto");
	const char *h;
	sbuf own = SBUF_INIT;
	struct tlist rec = { 0 };
	size_t i, start;

	sb_reset(evidence);
	*source = "option";
	if (strcmp(c, "auto") != 0)
		return c;
	/*
	 * The live server said what it is: that beats any hint in the path
	 * or the trace (issue 19: the capture said vLLM, the report SGLang).
	 * The reference takes it only when nothing else hints.
	 */
	if (framework_captured && !compat_reference &&
	    strcmp(framework_canonical(framework_captured), "auto") != 0) {
		*source = "capture";
		return framework_canonical(framework_captured);
	}
	*source = "server_args";
	if ((h = server_args_hint(server_args_json)) != NULL)
		return h;
	*source = "path";
	path_hint = NULL;
	if ((h = framework_text_hint(abspath, strlen(abspath))) != NULL) {
		if (compat_reference)
			return h;
		path_hint = h;
		free(path_hint_of);
		path_hint_of = xstrdup(abspath);
	}
	*source = "server_args";
	if (load_server_args_for(abspath, &own) > 0) {
		h = server_args_hint(own.s);
		sb_free(&own);
		if (h)
			return h;
	}
	*source = "trace";
	if (defer && !compat_reference && traces && traces->n > 0 &&
	    (is_dir || strcmp(traces->v[0].path, abspath) == 0)) {
		/* the first trace's own pass reads its frames (issue 30) */
		*defer = frames_hint_new();
		return NULL;
	}
	if (is_dir && traces && !compat_reference) {
		/* the traces that will be analyzed, not others below the directory */
		for (i = 0, h = NULL; i < traces->n && !h; i++)
			h = trace_frames_hint(traces->v[i].path, evidence);
		return framework_over_path(h, fallback, source, evidence);
	} else if (!is_dir) {
		if (!compat_reference)
			return framework_over_path(trace_frames_hint(abspath, evidence), fallback,
			    source, evidence);
		if ((h = trace_content_hint(abspath)) != NULL)
			return h;
	} else {
		discover_files(abspath, 1, &rec);
		start = rec.n > 3 ? rec.n - 3 : 0;
		for (i = start; i < rec.n; i++)
			if ((h = compat_reference ? trace_content_hint(rec.v[i].path) :
			    trace_frames_hint(rec.v[i].path, evidence)) != NULL)
				break;
		tlist_free(&rec);
		if (h)
			return h;
	}
	return default_framework(fallback, source);
}

const char *
resolve_framework_finish(struct framehint *h, int is_dir, const char *fallback,
    const struct tlist *traces, const char **source, sbuf *evidence)
{
	const char *fw = frames_hint_result(h, evidence);
	size_t i;

	/* a directory's other traces, in order, as resolve_framework reads them */
	for (i = 1; !fw && is_dir && i < traces->n; i++)
		fw = trace_frames_hint(traces->v[i].path, evidence);
	return framework_over_path(fw, fallback, source, evidence);
}

const char *
default_framework(const char *fallback, const char **source)
{
	if (fallback && strcmp(framework_canonical(fallback), "auto") != 0) {
		*source = "capture";
		return framework_canonical(fallback);
	}
	/* the reference assumes SGLang for any trace without a hint */
	*source = compat_reference ? "default" : "none";
	return compat_reference ? "sglang" : "none";
}
