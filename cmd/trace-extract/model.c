/*
 * The model family a trace shows (issue 26): which model's code its
 * Python frames run, and which model classes its nn.Module frames and CPU
 * ops name, over the head of the trace.  The family whose code ran longest
 * in one call wins (a diffusion pipeline's __call__ over its text
 * encoders, which run first), then the one seen most.
 */
#include <stdlib.h>
#include <string.h>

#include "extract.h"
#include "json.h"
#include "scan.h"
#include "xalloc.h"

#define HEAD_EVENTS 200000	/* as the framework hint: a graph-mode trace has no model frames */
#define MAX_FAMILIES 64

/* Model files of the frameworks: a directory, then the family's file. */
static const struct {
	const char *dir;	/* ".../<dir><family>.py" */
	const char *prefix;	/* the file name's prefix before the family ("modeling_") */
	int subdir;		/* the file sits in a directory of its own (transformers) */
} model_dirs[] = {
	{ "sglang/srt/models/", "", 0 },
	{ "vllm/model_executor/models/", "", 0 },
	{ "tensorrt_llm/_torch/models/", "modeling_", 0 },
	{ "tensorrt_llm/models/", "", 1 },
	{ "tokenspeed/models/", "", 0 },
	{ "transformers/models/", "modeling_", 1 },
	/* diffusion: diffusers' and xDiT's pipelines and denoising transformers */
	{ "diffusers/pipelines/", "pipeline_", 1 },
	{ "diffusers/models/transformers/", "transformer_", 0 },
	{ "xfuser/model_executor/pipelines/", "pipeline_", 0 },
	{ "xfuser/model_executor/models/transformers/", "transformer_", 0 },
};

/* Files of those directories that are no model. */
static const char *const not_models[] = { "utils", "__init__", "registry", "interfaces",
	"interfaces_base", "adapters", "transformers", "config", "configuration", "vision",
	"module", "model", NULL };

/* Class-name endings that say the class is a whole model or one of its layers. */
static const char *const class_ends[] = { "ForCausalLM", "ForConditionalGeneration",
	"DecoderLayer", NULL };

struct family {
	char name[64];
	unsigned long long frames, ops;	/* all hits: Python frames (files, classes), CPU ops */
	unsigned long long files;	/* the frames in its model files */
	double longest;		/* the longest of its frames and ops, microseconds */
	char file[96];		/* the model file of its longest file frame, for the evidence */
	double file_longest;	/* that frame's duration */
	char first[96];		/* the first model file seen */
	int multi;		/* its frames ran in more than one model file */
};

struct modelhint {
	struct family f[MAX_FAMILIES];
	size_t n;
	unsigned long long events;
	sbuf name;
};

static int
is_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static struct family *
count(struct modelhint *h, const char *fam, size_t n, int op, const char *file, size_t fn,
    double dur)
{
	struct family *f;
	size_t i;

	if (n == 0 || n >= sizeof h->f[0].name)
		return NULL;
	for (i = 0; i < h->n; i++)
		if (strlen(h->f[i].name) == n && memcmp(h->f[i].name, fam, n) == 0)
			break;
	if (i == h->n) {
		if (h->n == MAX_FAMILIES)
			return NULL;
		memset(&h->f[i], 0, sizeof h->f[i]);
		memcpy(h->f[i].name, fam, n);
		h->n++;
	}
	f = &h->f[i];
	if (file && fn < sizeof f->first && !f->first[0]) {
		memcpy(f->first, file, fn);
		f->first[fn] = '\0';
	} else if (file && (strlen(f->first) != fn || memcmp(f->first, file, fn) != 0)) {
		f->multi = 1;
	}
	if (file && fn < sizeof f->file && (!f->file[0] || dur > f->file_longest)) {
		memcpy(f->file, file, fn);
		f->file[fn] = '\0';
		f->file_longest = dur;
	}
	if (file)
		f->files++;
	if (op)
		f->ops++;
	else
		f->frames++;
	if (dur > f->longest)
		f->longest = dur;
	return f;
}

/* "…/sglang/srt/models/qwen3_moe.py(120): forward": the family qwen3_moe. */
static struct family *
frame_family(struct modelhint *h, const char *s, size_t n, double dur)
{
	size_t d, i, k;

	/* every directory above holds one of these: most frames are none of theirs */
	if (!memmem(s, n, "models/", 7) && !memmem(s, n, "pipelines/", 10))
		return NULL;
	for (d = 0; d < sizeof model_dirs / sizeof model_dirs[0]; d++) {
		const char *at = memmem(s, n, model_dirs[d].dir, strlen(model_dirs[d].dir));
		const char *p, *end = s + n, *py;
		if (!at)
			continue;
		p = at + strlen(model_dirs[d].dir);
		if (model_dirs[d].subdir) {
			const char *slash = memchr(p, '/', (size_t)(end - p));
			if (!slash)
				continue;
			p = slash + 1;
		}
		py = memmem(p, (size_t)(end - p), ".py", 3);
		if (!py || memchr(p, '/', (size_t)(py - p)))
			continue;
		k = strlen(model_dirs[d].prefix);
		if ((size_t)(py - p) <= k || memcmp(p, model_dirs[d].prefix, k) != 0)
			continue;
		p += k;
		for (i = 0; not_models[i]; i++)
			if ((size_t)(py - p) == strlen(not_models[i]) &&
			    memcmp(p, not_models[i], (size_t)(py - p)) == 0)
				break;
		if (not_models[i])
			continue;
		return count(h, p, (size_t)(py - p), 0, at, (size_t)(py + 3 - at), dur);
	}
	return NULL;
}

/*
 * A model class, "Qwen3MoeForCausalLM" (an nn.Module frame names it
 * "nn.Module: Qwen3MoeForCausalLM_0"), as a family: its words before the
 * ending, snake_cased ("qwen3_moe"; "DeepseekV2" is deepseek_v2).
 */
static struct family *
class_family(struct modelhint *h, const char *s, size_t n, int op, double dur)
{
	size_t e, k, i, len;
	char out[64];

	while (n && !is_ident_char(s[n - 1]))
		n--;
	/* the _N instance suffix of nn.Module frames */
	for (k = n; k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9'; k--)
		;
	if (k < n && k > 0 && s[k - 1] == '_')
		n = k - 1;
	for (e = 0; class_ends[e]; e++) {
		size_t m = strlen(class_ends[e]);
		if (n > m && memcmp(s + n - m, class_ends[e], m) == 0)
			break;
	}
	if (!class_ends[e])
		return NULL;
	len = n - strlen(class_ends[e]);
	for (k = len; k > 0 && is_ident_char(s[k - 1]); k--)
		;
	if (len - k < 2 || !(s[k] >= 'A' && s[k] <= 'Z'))
		return NULL;
	for (i = k, n = 0; i < len && n + 2 < sizeof out; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'Z') {
			char p = i > k ? s[i - 1] : 0;
			if (n && ((p >= 'a' && p <= 'z') || (p >= '0' && p <= '9')))
				out[n++] = '_';
			c = (char)(c + ('a' - 'A'));
		}
		out[n++] = c;
	}
	return count(h, out, n, op, NULL, 0, dur);
}

struct modelhint *
model_hint_new(void)
{
	return xcalloc(1, sizeof(struct modelhint));
}

void
model_hint_free(struct modelhint *h)
{
	if (!h)
		return;
	sb_free(&h->name);
	free(h);
}

int
model_hint_event(struct modelhint *h, const json_doc *d, int in, int ic, int idur)
{
	double dur = 0;
	const char *s;
	size_t n;

	if (d->ntok == 0 || in < 0 || json_kind(d, in) != JK_STR)
		return ++h->events >= HEAD_EVENTS;
	if (idur < 0 || !json_todouble(d, idur, &dur) || !(dur > 0 && dur < 3.2e13))
		dur = 0;	/* absent, garbage or past a year: no length */
	json_str(d, in, &h->name, NULL);
	s = h->name.s ? h->name.s : "";
	n = h->name.len;
	if (ic >= 0 && json_str_eq(d, ic, "python_function", 15)) {
		if (n > 11 && memcmp(s, "nn.Module: ", 11) == 0)
			class_family(h, s + 11, n - 11, 0, dur);
		else
			frame_family(h, s, n, dur);
	} else if (ic >= 0 && (json_str_eq(d, ic, "cpu_op", 6) ||
	    json_str_eq(d, ic, "user_annotation", 15))) {
		class_family(h, s, n, 1, dur);
	}
	return ++h->events >= HEAD_EVENTS;
}

static int
model_event(void *ctx, const json_doc *d, unsigned long long off)
{
	(void)off;
	return model_hint_event(ctx, d, json_get(d, 0, "name"), json_get(d, 0, "cat"),
	    json_get(d, 0, "dur"));
}

/* A duration for the evidence: "248.7 ms", "5.0 us". */
static void
put_dur(sbuf *b, double us)
{
	if (us >= 1000)
		sb_printf(b, "%.1f ms", us / 1000.0);
	else
		sb_printf(b, "%.1f us", us);
}

/* Does family a beat b: the longer call, then more hits, then the first seen. */
static int
beats(const struct family *a, const struct family *b)
{
	if (a->longest != b->longest)
		return a->longest > b->longest;
	return a->frames + a->ops > b->frames + b->ops;
}

int
trace_model_hint(const char *path, sbuf *family, sbuf *evidence, const char **source)
{
	struct modelhint *h;
	struct scan_stats st;
	char err[512];
	zio *z = zio_open(path);
	int r;

	if (!z)
		return 0;
	h = model_hint_new();
	scan_run(z, path, model_event, h, &st, err, sizeof err, NULL);
	zio_close(z);
	r = model_hint_result(h, family, evidence, source);
	model_hint_free(h);
	return r;
}

int
model_hint_result(const struct modelhint *h, sbuf *family, sbuf *evidence, const char **source)
{
	size_t i, best = 0;

	for (i = 1; i < h->n; i++)
		if (beats(&h->f[i], &h->f[best]))
			best = i;
	if (h->n == 0)
		return 0;
	sb_reset(family);
	sb_adds(family, h->f[best].name);
	sb_reset(evidence);
	*source = h->f[best].frames >= h->f[best].ops ? "frames" : "ops";
	if (h->f[best].files && h->f[best].multi)
		sb_printf(evidence, "%llu Python frames of its model files, the longest in %s",
		    h->f[best].files, h->f[best].file);
	else if (h->f[best].files)
		sb_printf(evidence, "%llu Python frame%s of %s", h->f[best].files,
		    h->f[best].files == 1 ? "" : "s", h->f[best].file);
	if (h->f[best].frames > h->f[best].files)
		sb_printf(evidence, "%s%llu nn.Module frame%s of its model class",
		    evidence->len ? ", " : "", h->f[best].frames - h->f[best].files,
		    h->f[best].frames - h->f[best].files == 1 ? "" : "s");
	if (h->f[best].ops)
		sb_printf(evidence, "%s%llu CPU op%s named after its model class",
		    evidence->len ? ", " : "", h->f[best].ops, h->f[best].ops == 1 ? "" : "s");
	if (h->n > 1) {
		/* the others it beat, in that order (at most three named) */
		size_t order[4], k, j, m, no = 0;
		int by_time;
		unsigned char *used = xcalloc(h->n, 1);
		used[best] = 1;
		for (k = 1; k < h->n && no < 3; k++) {
			for (m = h->n, j = 0; j < h->n; j++)
				if (!used[j] && (m == h->n || beats(&h->f[j], &h->f[m])))
					m = j;
			used[m] = 1;
			order[no++] = m;
		}
		by_time = h->f[order[0]].longest < h->f[best].longest;
		sb_printf(evidence, "; of %zu model families seen %s (", h->n,
		    by_time ? "its code ran longest in one call" : "it was seen most");
		if (by_time)
			put_dur(evidence, h->f[best].longest);
		else
			sb_printf(evidence, "%llu times", h->f[best].frames + h->f[best].ops);
		for (k = 0; k < no; k++) {
			sb_printf(evidence, "; %s ", h->f[order[k]].name);
			if (by_time)
				put_dur(evidence, h->f[order[k]].longest);
			else
				sb_printf(evidence, "%llu", h->f[order[k]].frames + h->f[order[k]].ops);
		}
		sb_adds(evidence, h->n - 1 > no ? "; ...)" : ")");
		free(used);
	}
	return 1;
}
