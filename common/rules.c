/* Classification and ranking rules shared by the analysis filters. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kcat.h"
#include "opt.h"
#include "rules.h"
#include "text.h"
#include "words.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Does the span contain any of the NULL-terminated needles? */
static int
has_any(const char *p, size_t n, const char *const *needles)
{
	for (; *needles; needles++)
		if (text_has(p, n, *needles))
			return 1;
	return 0;
}

static int
starts_any(const char *p, size_t n, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (text_starts(p, n, *prefixes))
			return 1;
	return 0;
}

/* ASCII-lowercased heap copy of a span, NUL-terminated (kept in an sbuf). */
static void
lower_copy(const char *p, size_t n, sbuf *out)
{
	sb_reset(out);
	sb_add(out, p, n);
	text_lower(out->s, out->len);
}

int
stage_index(const char *stage)
{
	if (!stage)
		return 99;
	if (strcmp(stage, "extend") == 0 || strcmp(stage, "prefill") == 0)
		return 0;
	if (strcmp(stage, "decode") == 0)
		return 1;
	if (strcmp(stage, "all") == 0)
		return 2;
	return 99;
}

const char *
stage_label(const char *stage)
{
	if (stage && strcmp(stage, "extend") == 0)
		return "extend/prefill";
	return stage;
}

const char *
parse_stage(const char *path)
{
	const char *comp[7];
	size_t clen[7];
	size_t ncomp = 0, i;
	const char *p = path, *q;
	sbuf name = SBUF_INIT, seg = SBUF_INIT;
	const char *stage = "all";

	/*
	 * Walk the components keeping the last six; an absolute path
	 * contributes the root "/" as its first component, the way the
	 * reference's path-parts split does.
	 */
	if (*p == '/') {
		comp[ncomp] = "/";
		clen[ncomp++] = 1;
	}
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		q = strchr(p, '/');
		if (!q)
			q = p + strlen(p);
		if (ncomp == 6) {
			memmove(comp, comp + 1, 5 * sizeof comp[0]);
			memmove(clen, clen + 1, 5 * sizeof clen[0]);
			ncomp = 5;
		}
		comp[ncomp] = p;
		clen[ncomp++] = (size_t)(q - p);
		p = q;
	}
	sb_addc(&seg, '/');
	for (i = 0; i < ncomp; i++) {
		if (i)
			sb_addc(&name, ' ');
		sb_add(&name, comp[i], clen[i]);
		sb_add(&seg, comp[i], clen[i]);
		sb_addc(&seg, '/');
	}
	text_lower(name.s, name.len);
	text_lower(seg.s, seg.len);
	if (text_has(name.s, name.len, "-extend") || text_has(name.s, name.len, "-prefill") ||
	    text_has(name.s, name.len, "_extend") || text_has(name.s, name.len, "_prefill"))
		stage = "extend";
	else if (text_has(seg.s, seg.len, "/extend/") || text_has(seg.s, seg.len, "/prefill/"))
		stage = "extend";
	else if (text_has(name.s, name.len, "-decode") || text_has(name.s, name.len, "_decode"))
		stage = "decode";
	else if (text_has(seg.s, seg.len, "/decode/"))
		stage = "decode";
	sb_free(&name);
	sb_free(&seg);
	return stage;
}

/*
 * One rank pattern: `word` followed by digits.  With `anchored`, the word
 * must start the name or follow '_'/'-', and the digits must end the name
 * or be followed by '_', '.' or '-' (the greedy \d+ cannot stop inside a
 * digit run, so only the whole run counts).
 */
static int
rank_pattern(const char *l, size_t n, const char *word, int anchored,
    long long *rank)
{
	size_t wl = strlen(word), i, j, k;
	long long v;

	for (i = 0; i + wl <= n; i++) {
		if (memcmp(l + i, word, wl) != 0)
			continue;
		if (anchored && i > 0 && l[i - 1] != '_' && l[i - 1] != '-')
			continue;
		j = i + wl;
		if (j >= n || l[j] < '0' || l[j] > '9')
			continue;
		for (v = 0, k = j; j < n && l[j] >= '0' && l[j] <= '9'; j++)
			v = v < 100000000000000000LL ? v * 10 + (l[j] - '0') : v;
		if (anchored && j < n && l[j] != '_' && l[j] != '.' && l[j] != '-')
			continue;
		if (j - k > 18)
			continue;	/* no rank has 19 digits: cut, it would name another */
		*rank = v;
		return 1;
	}
	return 0;
}

int
parse_tp_rank(const char *name, long long *rank)
{
	sbuf l = SBUF_INIT;
	int ok;

	lower_copy(name, strlen(name), &l);
	ok = rank_pattern(l.s, l.len, "tp", 1, rank) ||
	    rank_pattern(l.s, l.len, "tp-", 0, rank) ||
	    rank_pattern(l.s, l.len, "rank", 1, rank) ||
	    rank_pattern(l.s, l.len, "worker", 1, rank);
	sb_free(&l);
	return ok;
}

int
category_moves_memory(const char *c)
{
	return !strcmp(c, "memory") || !strcmp(c, "memcpy") || !strcmp(c, "memset") ||
	    !strcmp(c, "copy");
}

int
gpu_work_category(const char *lower, size_t n)
{
	static const char *const cats[] = { "kernel", "gpu_memcpy", "gpu_memset", "memcpy",
		"memset", NULL };
	const char *const *c;

	for (c = cats; *c; c++)
		if (strlen(*c) == n && memcmp(lower, *c, n) == 0)
			return 1;
	return 0;
}

/*
 * The number after `key` in s ("context_12" -> 12), or -1 when key is
 * absent or not followed by digits.
 */
static long
count_after(const char *s, size_t n, const char *key)
{
	const char *p = memmem(s, n, key, strlen(key));
	long v = -1;

	if (!p)
		return -1;
	for (p += strlen(key); p < s + n && *p >= '0' && *p <= '9'; p++)
		v = (v < 0 ? 0 : v * 10) + (*p - '0');
	return v;
}

/*
 * The corrected rule: vLLM's execute_..._context_N(...)_generation_M(...)
 * markers count the batch's prefill (context) and decode (generation)
 * requests, so the counts decide, a batch with both going with prefill;
 * SGLang's step[EXTEND ...] is a prefill marker.  The reference's
 * substring test reads generation_2..9 as no stage and calls
 * context_1_generation_12 decode.  The stage words are whole words
 * (words.h): step[DECODE bs=16], capture_32_decode, model_forward_prefill
 * name a stage, DLRM's "## decoder fp8 None ##" record_function (a
 * training trace's decoder layer) none.
 */
static const char *
annotation_stage_corrected(const char *s, size_t n)
{
	sbuf l = SBUF_INIT;
	long ctx, gen;
	const char *st = NULL;
	words w = { 0 };

	sb_add(&l, s, n);
	text_lower(l.s, l.len);
	ctx = count_after(l.s, l.len, "context_");
	gen = count_after(l.s, l.len, "generation_");
	sb_free(&l);
	if (ctx >= 0 && gen >= 0)
		return ctx > 0 ? "extend" : gen > 0 ? "decode" : NULL;
	words_add(&w, s, n);	/* the case kept: ChunkedPrefill is Chunked|Prefill */
	if (words_find_keyword(&w, "decode") >= 0)
		st = "decode";
	else if (words_find_keyword(&w, "prefill") >= 0 || words_find_keyword(&w, "extend") >= 0)
		st = "extend";
	words_free(&w);
	return st;
}

const char *
annotation_stage(const char *name, size_t n)
{
	sbuf t = SBUF_INIT;
	const char *st = NULL;

	text_normalize(name, n, &t);
	if (t.len && !compat_reference) {
		st = annotation_stage_corrected(t.s, t.len);
	} else if (t.len) {
		text_lower(t.s, t.len);
		if (text_has(t.s, t.len, "generation_1") || text_has(t.s, t.len, "decode"))
			st = "decode";
		else if (text_has(t.s, t.len, "generation_0") || text_has(t.s, t.len, "prefill"))
			st = "extend";
	}
	sb_free(&t);
	return st;
}

/* Kernel-table keyword lists (kernel-table.md §2.2). */
static const char *const kt_comm_strong[] = {
	"nccl", "allreduce", "all_reduce", "reduce_scatter", "allgather",
	"all_gather", "alltoall", "all_to_all", "cross_device_reduce", "deepep",
	"mooncake", NULL
};
static const char *const kt_comm_weak[] = { "broadcast", "dispatch", "combine", NULL };
static const char *const kt_mem_strong[] = { "memcpy", "memset", "dma", "prefetch", NULL };
static const char *const kt_mem_weak[] = { "copy", "fill", NULL };
static const char *const kt_compute_hint[] = {
	"gemm", "gemv", "matmul", "cublas", "cutlass", "wgmma", "mma", "bmm",
	"nvjet", "fmha", "attention", "flash_attn", "flashattention",
	"flash_attention", "grouped_mm", "groupgemm", "moe", "expert", NULL
};
static const char *const kt_hybrid[] = {
	"gdn", "gated_delta", "mamba", "selective_scan", "ssd", "causal_conv",
	"ssm", NULL
};
static const char *const kt_attention[] = {
	"flash_attn", "flashattention", "flash_attention", "fmha", "attention",
	"mla", "paged_attention", "decode_attention", NULL
};
static const char *const kt_moe[] = {
	"fused_moe", "grouped_mm", "groupgemm", "group_gemm", "moe", "expert",
	"groupproblemshape", NULL
};
static const char *const kt_gemm[] = {
	"gemm", "gemv", "matmul", "cublas", "cutlass", "wgmma", "mma", "bmm",
	"nvjet", NULL
};
static const char *const kt_norm[] = {
	"rmsnorm", "layernorm", "_norm_", " norm", "normkernel", NULL
};
static const char *const kt_rope[] = { "rotary", "rope", "mrope", NULL };
static const char *const kt_softmax[] = { "softmax", NULL };
static const char *const kt_activation[] = {
	"silu", "gelu", "relu", "act_and_mul", "sigmoid", NULL
};
static const char *const kt_quantize[] = {
	"quant", "fp8", "mxfp", "nvfp4", "dequant", "cvt", NULL
};
static const char *const kt_reduce_topk[] = {
	"topk", "reduce", "argmax", "argtopk", "sampling", "multinomial", NULL
};
static const char *const kt_sampling_io[] = {
	"prepare_inputs", "write_req_to", "catarraybatched", "prepare_next",
	"copy_next", NULL
};
static const char *const kt_elementwise[] = {
	"elementwise", "vectorized_elementwise_kernel",
	"unrolled_elementwise_kernel", "gpu_kernel_impl", "binary_internal",
	"unaryfunctor", "add_kernel", "sub_kernel", "mul_kernel", "div_",
	"floor_kernel", "log_kernel", "neg_kernel", NULL
};

static const struct {
	const char *category;
	const char *const *keywords;
} kt_patterns[] = {
	{ "hybrid_linear", kt_hybrid },
	{ "attention", kt_attention },
	{ "moe", kt_moe },
	{ "gemm", kt_gemm },
	{ "norm", kt_norm },
	{ "rope", kt_rope },
	{ "softmax", kt_softmax },
	{ "activation", kt_activation },
	{ "quantize", kt_quantize },
	{ "reduce_topk", kt_reduce_topk },
	{ "sampling_io", kt_sampling_io },
	{ "elementwise", kt_elementwise },
};

const char *
classify_kernel(const char *raw, size_t n)
{
	sbuf l = SBUF_INIT;
	const char *cat = "other";
	int compute_like;
	size_t k;

	if (!compat_reference)
		return kernel_category(raw, n);
	lower_copy(raw, n, &l);
	if (has_any(l.s, l.len, kt_comm_strong)) {
		cat = "communication";
		goto out;
	}
	if (has_any(l.s, l.len, kt_mem_strong)) {
		cat = "memory";
		goto out;
	}
	compute_like = has_any(l.s, l.len, kt_compute_hint);
	if (!compute_like && has_any(l.s, l.len, kt_mem_weak)) {
		cat = "memory";
		goto out;
	}
	for (k = 0; k < NELEM(kt_patterns); k++) {
		if (has_any(l.s, l.len, kt_patterns[k].keywords)) {
			cat = kt_patterns[k].category;
			goto out;
		}
	}
	if (!compute_like && has_any(l.s, l.len, kt_comm_weak))
		cat = "communication";
out:
	sb_free(&l);
	return cat;
}

/* Overlap-table keyword lists (overlap.md §2.7). */
static const char *const ov_comm_strong[] = {
	"allreduce", "all_reduce", "reduce_scatter", "allgather", "all_gather",
	"nccl", "cross_device_reduce", "deepep", "a2a", "alltoall",
	"allreduce_fusion", "mooncake", NULL
};
static const char *const ov_elementwise[] = {
	"sigmoid", "silu", "gelu", "relu", "softmax", "layernorm", "rmsnorm",
	"norm", "rotary", "rope", "topk", "gate", "bias", "_cast", "index",
	"gather", "scatter", "masked", "elementwise", "activation", NULL
};
static const char *const ov_compute[] = {
	"cublas", "cudnn", "cutlass", "triton", "gemm", "gemv", "matmul",
	"grouped_mm", "flash", "attention", "fmha", "marlin", "fused_moe",
	"moe_kernel", "groupgemm", "mma", "wgmma", "conv", "bmm", "mm_kernel",
	NULL
};

int
overlap_name_hint(const char *lower, size_t n)
{
	static const char *const *const lists[] = {
		ov_comm_strong, kt_comm_weak, kt_mem_strong, kt_mem_weak, ov_compute
	};
	size_t i;

	if ((n >= 5 && !memcmp(lower, "void ", 5)) || (n >= 7 && !memcmp(lower, "ampere_", 7)) ||
	    (n >= 5 && (!memcmp(lower, "sm80_", 5) || !memcmp(lower, "sm90_", 5))))
		return 1;
	for (i = 0; i < NELEM(lists); i++)
		if (has_any(lower, n, lists[i]))
			return 1;
	return 0;
}

const char *
overlap_classify(const char *raw, size_t n)
{
	sbuf l = SBUF_INIT;
	const char *cat = "other";

	lower_copy(raw, n, &l);
	if (has_any(l.s, l.len, kt_mem_strong))
		cat = "memory";
	else if (has_any(l.s, l.len, ov_comm_strong))
		cat = "communication";
	else if (has_any(l.s, l.len, ov_compute))
		cat = "compute";
	else if (has_any(l.s, l.len, ov_elementwise))
		cat = "elementwise";
	else if (has_any(l.s, l.len, kt_mem_weak))
		cat = "memory";
	else if (has_any(l.s, l.len, kt_comm_weak))
		cat = "communication";
	sb_free(&l);
	return cat;
}

static const char *const low_signal_tokens[] = {
	"__torch_function__", "__torch_dispatch__", "__call__", "_call_impl",
	"_wrapped_call_impl",
	"model_executor/parameter.py:", "model_executor/cuda_graph_runner.py:",
	"compilation/cuda_graph.py:", "pyexecutor/cuda_graph_runner.py:",
	"pyexecutor/py_executor.py:", "_torch/utils.py:",
	"torch/fx/graph_module.py:", NULL
};

/*
 * Frames of instrumentation that wraps every op (C25): SGLang's kernel
 * shape profiler interposes a dispatch wrapper whose impl() is on the stack
 * of each kernel it records, above the layer that launched it.
 */
static const char *const low_signal_ours[] = {
	"srt/utils/kernel_shape_profiler.py:", NULL
};

int
is_low_signal(const char *loc, size_t n)
{
	const char *const *t;

	loc = text_strip(loc, n, &n);
	if (n == 0)
		return 0;
	for (t = low_signal_tokens; *t; t++)
		if (text_has_ci(loc, n, *t))
			return 1;
	for (t = low_signal_ours; *t && !compat_reference; t++)
		if (text_has_ci(loc, n, *t))
			return 1;
	return 0;
}

int
source_location_priority(const char *loc, size_t n)
{
	int pen;

	loc = text_strip(loc, n, &n);
	if (n == 0 || (n == 10 && memcmp(loc, "unresolved", 10) == 0))
		return -100;
	pen = is_low_signal(loc, n) ? 80 : 0;
	if (text_starts(loc, n, "python/sglang/"))
		return 300 - pen;
	if (text_starts(loc, n, "sglang/"))
		return 290 - pen;
	if (text_starts(loc, n, "vllm/"))
		return 285 - pen;
	if (text_starts(loc, n, "python/tokenspeed/") || text_starts(loc, n, "tokenspeed/"))
		return 283 - pen;
	if (text_starts(loc, n, "tensorrt_llm/"))
		return 280 - pen;
	if (text_starts(loc, n, "sgl_kernel/"))
		return 260 - pen;
	if (text_starts(loc, n, "python/"))
		return 180 - pen;
	if (text_starts(loc, n, "torch/") || text_has(loc, n, "/torch/"))
		return 20;
	if (text_has(loc, n, ".py:"))
		return 120 - pen;
	return 0;
}

static const char *const noise_prefixes[] = {
	"threading.py(", "multiprocessing/", "contextlib.py(",
	"torch/utils/_contextlib.py(", "runpy.py(", "asyncio/", "selectors.py(",
	"queue.py(", "socket.py(", "tqdm/_monitor.py(", "<string>(",
	"<built-in method ", NULL
};
static const char *const low_level_prefixes[] = {
	"triton/runtime/", "triton/backends/", "torch/_ops.py",
	"torch/nn/modules/module.py", NULL
};

int
frame_priority(const char *raw, size_t n)
{
	sbuf norm = SBUF_INIT;
	const char *s;
	size_t sn;
	int pen, pr;

	raw = text_strip(raw, n, &n);
	if (starts_any(raw, n, noise_prefixes))
		return -20;
	normalize_source_location(raw, n, &norm);
	s = sb_str(&norm);
	sn = norm.len;
	pen = is_low_signal(s, sn) ? 80 : 0;
	if (text_starts(s, sn, "python/sglang/"))
		pr = 300 - pen;
	else if (text_starts(s, sn, "sglang/"))
		pr = 290 - pen;
	else if (text_starts(s, sn, "vllm/"))
		pr = 285 - pen;
	else if (text_starts(s, sn, "python/tokenspeed/") || text_starts(s, sn, "tokenspeed/"))
		pr = 283 - pen;
	else if (text_starts(s, sn, "tensorrt_llm/"))
		pr = 280 - pen;
	else if (text_starts(s, sn, "sgl_kernel/"))
		pr = 260 - pen;
	else if (text_starts(s, sn, "triton_kernels/"))
		pr = 220 - pen;
	else if (starts_any(s, sn, low_level_prefixes))
		pr = 0;
	else if (text_starts(raw, n, "/data/") || text_starts(raw, n, "/Users/")) {
		if (text_has(raw, n, "/sglang/"))
			pr = 120;
		else if (text_has(raw, n, "/vllm/"))
			pr = 118;
		else if (text_has(raw, n, "/tokenspeed/") || text_has(raw, n, "/TokenSpeed/"))
			pr = 117;
		else if (text_has(raw, n, "/TensorRT-LLM/") || text_has(raw, n, "/tensorrt_llm/"))
			pr = 116;
		else
			pr = 100;
	} else if (text_has(raw, n, ".py(") && text_has(raw, n, "/sglang/"))
		pr = 110;
	else if (text_has(raw, n, ".py(") && text_has(raw, n, "/vllm/"))
		pr = 108;
	else if (text_has(raw, n, ".py(") &&
	    (text_has(raw, n, "/tokenspeed/") || text_has(raw, n, "/TokenSpeed/")))
		pr = 107;
	else if (text_has(raw, n, ".py(") &&
	    (text_has(raw, n, "/TensorRT-LLM/") || text_has(raw, n, "/tensorrt_llm/")))
		pr = 106;
	else if (text_has(s, sn, ".py:") &&
	    (text_has(raw, n, "site-packages") || text_starts(s, sn, "torch/")))
		pr = 45;
	else if (text_has(s, sn, ".py:"))
		pr = 35;
	else
		pr = 0;	/* the reference's "<built-in method " -10 rule is unreachable */
	sb_free(&norm);
	return pr;
}

static const char *const preferred_prefixes[] = {
	"python/sglang/", "sglang/", "vllm/", "python/tokenspeed/", "tokenspeed/",
	"tensorrt_llm/", "sgl_kernel/", NULL
};

int
is_preferred_location(const char *loc, size_t n)
{
	loc = text_strip(loc, n, &n);
	return starts_any(loc, n, preferred_prefixes);
}

int
preferred_stack_location(const char *stack, size_t n, sbuf *out)
{
	sbuf norm = SBUF_INIT;
	const char *part, *end = stack + n, *arrow;
	size_t pl;
	int best = 0, found = 0, pr;

	sb_reset(out);
	if (!stack || n == 0)
		return 0;
	for (part = stack;; part = arrow + 2) {
		arrow = memmem(part, (size_t)(end - part), "->", 2);
		pl = (size_t)((arrow ? arrow : end) - part);
		{
			const char *s = text_strip(part, pl, &pl);
			normalize_source_location(s, pl, &norm);
			pr = source_location_priority(sb_str(&norm), norm.len);
			/* ">=" so that the right-most part wins a tie */
			if (pr > 0 && (!found || pr >= best)) {
				best = pr;
				found = 1;
				sb_reset(out);
				sb_add(out, sb_str(&norm), norm.len);
			}
		}
		if (!arrow)
			break;
	}
	sb_free(&norm);
	return found;
}

const char *
framework_canonical(const char *s)
{
	sbuf t = SBUF_INIT;
	const char *r = "auto";
	size_t i;
	static const struct {
		const char *in, *out;
	} alias[] = {
		{ "", "auto" }, { "auto", "auto" },
		{ "sglang", "sglang" }, { "sgl", "sglang" },
		{ "vllm", "vllm" },
		{ "trt", "trtllm" }, { "tllm", "trtllm" }, { "trtllm", "trtllm" },
		{ "tensorrt-llm", "trtllm" }, { "tensorrtllm", "trtllm" },
		{ "tokenspeed", "tokenspeed" }, { "token-speed", "tokenspeed" },
		{ "ts", "tokenspeed" },
	};

	if (!s)
		return "auto";
	text_normalize(s, strlen(s), &t);
	text_lower(t.s, t.len);
	for (i = 0; i < t.len; i++)
		if (t.s[i] == '_')
			t.s[i] = '-';
	for (i = 0; i < NELEM(alias); i++)
		if (strcmp(sb_str(&t), alias[i].in) == 0) {
			r = alias[i].out;
			break;
		}
	sb_free(&t);
	return r;
}

const char *
framework_display(const char *c)
{
	if (!c)
		return "auto";
	if (strcmp(c, "sglang") == 0)
		return "SGLang";
	if (strcmp(c, "vllm") == 0)
		return "vLLM";
	if (strcmp(c, "trtllm") == 0)
		return "TensorRT-LLM";
	if (strcmp(c, "tokenspeed") == 0)
		return "TokenSpeed";
	return c;
}

const char *
framework_text_hint(const char *s, size_t n)
{
	sbuf t = SBUF_INIT;
	const char *r = NULL;

	text_normalize(s, n, &t);
	text_lower(t.s, t.len);
	if (t.len == 0)
		r = NULL;
	else if (text_has(t.s, t.len, "tokenspeed") || text_has(t.s, t.len, "token-speed") ||
	    text_has(t.s, t.len, "/ts/"))
		r = "tokenspeed";
	else if (text_has(t.s, t.len, "tensorrt_llm") || text_has(t.s, t.len, "tensorrt-llm") ||
	    text_has(t.s, t.len, "trtllm") || text_has(t.s, t.len, "pyexecutor"))
		r = "trtllm";
	else if (text_has(t.s, t.len, "vllm"))
		r = "vllm";
	else if (text_has(t.s, t.len, "python/sglang/") || text_has(t.s, t.len, "sgl_kernel/") ||
	    text_has(t.s, t.len, "sglang/"))
		r = "sglang";
	sb_free(&t);
	return r;
}

size_t
sample_position(size_t i, size_t n)
{
	/* true division then round-half-even; with divisor 15 no tie occurs */
	return (size_t)nearbyint((double)(i * (n - 1)) / 15.0);
}

int
graph_launch_name(const char *s, size_t n)
{
	return (n >= 15 && !memcmp(s, "cudaGraphLaunch", 15)) ||
	    (n >= 14 && !memcmp(s, "hipGraphLaunch", 14)) ||
	    (n >= 13 && !memcmp(s, "cuGraphLaunch", 13));
}
