/* Python frame names: canonical scopes and frame classes (overlap.md §6.2). */
#include <string.h>

#include "pyscope.h"
#include "text.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *framework_prefixes[] = {
	"python/sglang/", "sglang/", "vllm/", "python/tokenspeed/",
	"tokenspeed/", "tensorrt_llm/", "sgl_kernel/",
};

static const char *ignore_prefixes[] = {
	"threading.py(", "selectors.py(", "contextlib.py(", "queue.py(",
	"logging/", "logging/__init__.py(", "socket.py(", "asyncio/",
	"concurrent/futures/", "tqdm/", "uvicorn/", "fastapi/", "starlette/",
	"http/", "torch/_ops.py(", "torch/nn/modules/module.py(",
	"torch/utils/_contextlib.py(", "torch/autograd/", "torch/_tensor.py(",
	"torch/distributed/", "torch/_dynamo/", "torch/_inductor/",
};

/*
 * canonicalize_python_scope_name (§6.2): normalize, replace hex addresses,
 * and rewrite "path(N): func" with a repo-relative path.  The result is left
 * in out (reset first).
 */
void
canonicalize_python_scope_name(const char *s, size_t n, sbuf *out)
{
	sbuf t = SBUF_INIT, path = SBUF_INIT;
	size_t pl, lo, ll, fo;

	text_normalize(s, n, &t);
	sb_reset(out);
	if (t.len && memchr(t.s, '0', t.len)) {
		sbuf h = SBUF_INIT;
		text_hex_addr(t.s, t.len, &h);
		sb_free(&t);
		t = h;
	}
	if (!t.len || !text_match_pyloc(t.s, t.len, &pl, &lo, &ll, &fo)) {
		sb_add(out, t.s ? t.s : "", t.len);
		sb_free(&t);
		return;
	}
	normalize_repo_relative_path(t.s, pl, &path);
	sb_add(out, path.s ? path.s : "", path.len);
	sb_addc(out, '(');
	sb_add(out, t.s + lo, ll);
	sb_add(out, "): ", 3);
	sb_add(out, t.s + fo, t.len - fo);
	sb_free(&t);
	sb_free(&path);
}

static int
starts_any(const char *s, size_t n, const char **list, size_t nlist)
{
	size_t i;

	for (i = 0; i < nlist; i++)
		if (text_starts(s, n, list[i]))
			return 1;
	return 0;
}

/* is_meaningful_python_scope (§6.2), on an already canonical name. */
int
scope_is_meaningful(const char *s, size_t n)
{
	if (n == 0 || text_starts(s, n, "<built-in method") || text_starts(s, n, "nn.Module:"))
		return 0;
	if (starts_any(s, n, ignore_prefixes, NELEM(ignore_prefixes)))
		return 0;
	if (starts_any(s, n, framework_prefixes, NELEM(framework_prefixes)))
		return 1;
	return text_has(s, n, ".py(");
}

/* is_fallback_python_scope (§6.2), on an already canonical name. */
int
scope_is_fallback(const char *s, size_t n)
{
	if (n == 0 || text_starts(s, n, "<built-in method") || text_starts(s, n, "nn.Module:") ||
	    text_starts(s, n, "threading.py("))
		return 0;
	return text_has(s, n, ".py(") || text_starts(s, n, "python/");
}

int
scope_builtin_frame(const char *s, size_t n)
{
	return n >= 9 && memcmp(s, "<built-in", 9) == 0 && !memmem(s, n, ".py(", 4) &&
	    !memmem(s, n, "): ", 3);
}

int
frame_is_capture_marker(const char *s, size_t n)
{
	return text_has(s, n, "torch/cuda/graphs.py(") &&
	    (text_ends(s, n, ": capture_begin") || text_ends(s, n, ": capture_end"));
}
