/* Words of identifiers and whole-word keyword tests (words.h). */
#include <stdlib.h>
#include <string.h>

#include "words.h"
#include "xalloc.h"

static int
is_lower(unsigned char c)
{
	return c >= 'a' && c <= 'z';
}

static int
is_upper(unsigned char c)
{
	return c >= 'A' && c <= 'Z';
}

static int
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int
is_alnum(unsigned char c)
{
	return is_lower(c) || is_upper(c) || is_digit(c);
}

void
words_reset(words *w)
{
	sb_reset(&w->low);
	w->n = 0;
	w->nfields = 0;
}

void
words_free(words *w)
{
	sb_free(&w->low);
	free(w->w);
	memset(w, 0, sizeof *w);
}

static void
push(words *w, size_t off, size_t len)
{
	xgrow(&w->w, &w->cap, w->n + 1, sizeof *w->w);
	w->w[w->n].off = (uint32_t)off;
	w->w[w->n].len = (uint32_t)len;
	w->w[w->n].field = w->nfields;
	w->n++;
}

/*
 * Is there a word break between s[i-1] and s[i], both letters or digits?
 * lower|Upper (fusedAdd), letter|digit and digit|letter (fp|8, 8|k), and
 * the last capital of an acronym before a capitalized word (RMS|Norm).
 */
static int
breaks(const unsigned char *s, size_t i, size_t n)
{
	unsigned char a = s[i - 1], b = s[i];

	if (is_digit(a) != is_digit(b))
		return 1;
	if (is_lower(a) && is_upper(b))
		return 1;
	return is_upper(a) && is_upper(b) && i + 1 < n && is_lower(s[i + 1]);
}

/*
 * Words that kernel names write glued together but that name two things:
 * "kvcache" is kv|cache (so "cache" matches store_kvcache as it matches
 * store_kv_cache), "rmsnorm" rms|norm, "topk" top|k.  Each is split where
 * the list says, and only when it is the whole word.
 */
static const struct {
	const char *word;
	unsigned char cut[3];	/* lengths of the parts but the last, 0-terminated */
} glued[] = {
	{ "kvcache", { 2 } }, { "kvbuffer", { 2 } }, { "qknorm", { 2 } }, { "rmsnorm", { 3 } },
	{ "layernorm", { 5 } }, { "groupnorm", { 5 } }, { "batchnorm", { 5 } },
	{ "instancenorm", { 8 } }, { "allreduce", { 3 } }, { "allgather", { 3 } },
	{ "reducescatter", { 6 } }, { "alltoall", { 3, 2 } }, { "topk", { 3 } }, { "topp", { 3 } },
	{ "mrope", { 1 } },
};

/* Push the word at off (len bytes, lowercased in w->low), split if it is glued. */
static void
push_word(words *w, size_t off, size_t len)
{
	size_t g, k;

	for (g = 0; g < sizeof glued / sizeof glued[0]; g++) {
		if (strlen(glued[g].word) != len || memcmp(w->low.s + off, glued[g].word, len) != 0)
			continue;
		for (k = 0; k < 3 && glued[g].cut[k]; k++) {
			push(w, off, glued[g].cut[k]);
			off += glued[g].cut[k];
			len -= glued[g].cut[k];
		}
		break;
	}
	push(w, off, len);
}

void
words_add(words *w, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t base = w->low.len, i = 0, start;

	if (n > UINT32_MAX / 2 || base > UINT32_MAX / 2)
		n = 0;		/* beyond any name: no words rather than wrapped offsets */
	sb_add(&w->low, s, n);
	for (i = 0; i < n; i++)
		if (is_upper(u[i]))
			w->low.s[base + i] = (char)(u[i] + ('a' - 'A'));
	i = 0;
	while (i < n) {
		if (!is_alnum(u[i])) {
			i++;
			continue;
		}
		start = i++;
		while (i < n && is_alnum(u[i]) && !breaks(u, i, n))
			i++;
		push_word(w, base + start, i - start);
	}
	w->nfields++;
}

long
words_find(const words *w, const char *k, size_t m)
{
	size_t i, j, p;

	if (m == 0)
		return -1;
	for (i = 0; i < w->n; i++) {
		const char *t = w->low.s;
		if (w->w[i].len > m || memcmp(t + w->w[i].off, k, w->w[i].len) != 0)
			continue;
		/* consume whole words while they continue the keyword */
		for (p = 0, j = i; j < w->n && w->w[j].field == w->w[i].field && p < m; j++) {
			const struct word *x = &w->w[j];
			if (x->len > m - p || memcmp(t + x->off, k + p, x->len) != 0)
				break;
			p += x->len;
		}
		if (p == m)
			return (long)i;
	}
	return -1;
}

void
words_compact(const char *s, size_t n, sbuf *out)
{
	size_t i;

	sb_reset(out);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (is_alnum(c))
			sb_addc(out, (char)(is_upper(c) ? c + ('a' - 'A') : c));
	}
}

long
words_find_keyword(const words *w, const char *keyword)
{
	sbuf k = SBUF_INIT;
	long r;

	words_compact(keyword, strlen(keyword), &k);
	r = words_find(w, sb_str(&k), k.len);
	sb_free(&k);
	return r;
}
