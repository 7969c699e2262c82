/* Python-scope text rules of the overlap table (overlap.md §6.2, §6.7, §6.8, §9.3). */
#include <stdlib.h>
#include <string.h>

#include "overlap.h"
#include "text.h"
#include "xalloc.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *low_signal_tokens[] = {
	"__torch_function__", "__torch_dispatch__", "__call__", "_call_impl",
	"_wrapped_call_impl",
	"model_executor/parameter.py(", "model_executor/parameter.py:",
	"model_executor/cuda_graph_runner.py(", "model_executor/cuda_graph_runner.py:",
	"compilation/cuda_graph.py(", "compilation/cuda_graph.py:",
	"pyexecutor/cuda_graph_runner.py(", "pyexecutor/cuda_graph_runner.py:",
	"pyexecutor/py_executor.py(", "pyexecutor/py_executor.py:",
	"_torch/utils.py(", "_torch/utils.py:",
	"torch/fx/graph_module.py(", "torch/fx/graph_module.py:",
};

/* is_low_signal_scope (§6.2): canonicalize, lowercase, look for the tokens. */
int
scope_is_low_signal(const char *s, size_t n)
{
	sbuf c = SBUF_INIT;
	size_t i;
	int hit = 0;

	canonicalize_python_scope_name(s, n, &c);
	if (c.len) {
		text_lower(c.s, c.len);
		for (i = 0; i < NELEM(low_signal_tokens) && !hit; i++)
			hit = text_has(c.s, c.len, low_signal_tokens[i]);
	}
	sb_free(&c);
	return hit;
}

/* source_scope_priority (§6.8); used by the alias score of §7.1. */
int
source_scope_priority(const char *s, size_t n)
{
	sbuf c = SBUF_INIT;
	int pen, pri = 0;

	canonicalize_python_scope_name(s, n, &c);
	if (c.len == 0 || (c.len == 8 && memcmp(c.s, "unmapped", 8) == 0)) {
		sb_free(&c);
		return 0;
	}
	pen = scope_is_low_signal(c.s, c.len) ? 80 : 0;
	if (text_starts(c.s, c.len, "python/sglang/"))
		pri = 300 - pen;
	else if (text_starts(c.s, c.len, "sglang/"))
		pri = 290 - pen;
	else if (text_starts(c.s, c.len, "vllm/"))
		pri = 285 - pen;
	else if (text_starts(c.s, c.len, "python/tokenspeed/") || text_starts(c.s, c.len, "tokenspeed/"))
		pri = 283 - pen;
	else if (text_starts(c.s, c.len, "tensorrt_llm/"))
		pri = 280 - pen;
	else if (text_starts(c.s, c.len, "sgl_kernel/"))
		pri = 260 - pen;
	else if (text_has(c.s, c.len, ".py("))
		pri = 120 - pen;
	sb_free(&c);
	return pri;
}

/*
 * choose_best_scope (§6.7): position in the chain plus the first matching
 * prefix bonus, minus every penalty that applies.  Returns the index of the
 * first best-scoring element; the chain must not be empty.
 */
size_t
choose_best_scope(const uint32_t *chain, size_t n)
{
	size_t i, best = 0;
	long bscore = 0;

	for (i = 0; i < n; i++) {
		const char *s = S(chain[i]);
		size_t l = SLEN(chain[i]);
		long score = (long)i;

		if (text_starts(s, l, "python/sglang/"))
			score += 50;
		else if (text_starts(s, l, "sglang/"))
			score += 48;
		else if (text_starts(s, l, "vllm/"))
			score += 46;
		else if (text_starts(s, l, "python/tokenspeed/") || text_starts(s, l, "tokenspeed/"))
			score += 45;
		else if (text_starts(s, l, "tensorrt_llm/"))
			score += 44;
		else if (text_starts(s, l, "sgl_kernel/"))
			score += 30;
		else if (text_has(s, l, ".py("))
			score += 10;
		if (text_has(s, l, "utils.py") && text_has(s, l, "__call__"))
			score -= 15;
		if (text_has(s, l, "scheduler_profiler_mixin.py"))
			score -= 20;
		if (scope_is_low_signal(s, l))
			score -= 25;
		if (i == 0 || score > bscore) {
			bscore = score;
			best = i;
		}
	}
	return best;
}

/*
 * Split a scope per §9.3: the anchored match of (.+?)\(\d+\):\s*(.+)$ gives
 * path and function; otherwise the whole text is the path.  Placeholder
 * scopes have neither.
 */
static void
scope_parts(const char *s, const char **path, size_t *pl, const char **func, size_t *fl)
{
	size_t n = strlen(s), i, j, k;

	*path = s;
	*pl = 0;
	*func = s;
	*fl = 0;
	if (n == 0 || strcmp(s, "unmapped") == 0 || strcmp(s, "n/a") == 0)
		return;
	for (i = 1; i < n; i++) {
		if (s[i] == '\n')
			break;		/* the lazy path cannot cross a newline */
		if (s[i] != '(')
			continue;
		j = i + 1;
		while (j < n && s[j] >= '0' && s[j] <= '9')
			j++;
		if (j == i + 1 || j + 1 >= n || s[j] != ')' || s[j + 1] != ':')
			continue;
		k = j + 2;
		while (k < n && text_ws_len(s + k, n - k))
			k += text_ws_len(s + k, n - k);
		if (k >= n) {
			/* \s* gives back its last character so (.+) can match it. */
			size_t back = j + 2;
			if (k == back)
				continue;
			k = n - 1;
			while (k > back && ((unsigned char)s[k] & 0xc0) == 0x80)
				k--;
		}
		if (memchr(s + k, '\n', n - k))
			continue;
		*pl = i;
		*func = s + k;
		*fl = n - k;
		return;
	}
	*pl = n;
}

/* same_scope_family (§9.3). */
int
same_scope_family(const char *a, const char *b)
{
	const char *pa, *fa, *pb, *fb;
	size_t pal, fal, pbl, fbl;

	scope_parts(a, &pa, &pal, &fa, &fal);
	scope_parts(b, &pb, &pbl, &fb, &fbl);
	if (pal == 0 || pbl == 0)
		return 0;
	if (pal == pbl && memcmp(pa, pb, pal) == 0)
		return 1;
	return fal && fbl && fal == fbl && memcmp(fa, fb, fal) == 0;
}

/* Cache of canonical scope names by raw frame-name id. */
static uint32_t *canon_of;
static unsigned char *flags_of;
static size_t ncache;

uint32_t
scope_of_raw(uint32_t raw, int *flags)
{
	if (raw >= ncache) {
		size_t old = ncache, want = (size_t)raw + 1, i;
		size_t cap = old ? old : 256;
		while (cap < want)
			cap *= 2;
		canon_of = xreallocarray(canon_of, cap, sizeof *canon_of);
		flags_of = xrealloc(flags_of, cap);
		for (i = old; i < cap; i++)
			canon_of[i] = NOSTR;
		ncache = cap;
	}
	if (canon_of[raw] == NOSTR) {
		sbuf c = SBUF_INIT;
		canonicalize_python_scope_name(S(raw), SLEN(raw), &c);
		flags_of[raw] = (scope_is_meaningful(c.s ? c.s : "", c.len) ? SCOPE_MEANINGFUL : 0) |
		    (scope_is_fallback(c.s ? c.s : "", c.len) ? SCOPE_FALLBACK : 0);
		/* interning may add ids but never moves the cache entry for raw */
		canon_of[raw] = intern(c.s, c.len);
		sb_free(&c);
	}
	*flags = flags_of[raw];
	return canon_of[raw];
}

void
scope_cache_free(void)
{
	free(canon_of);
	free(flags_of);
	canon_of = NULL;
	flags_of = NULL;
	ncache = 0;
}
