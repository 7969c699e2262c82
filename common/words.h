/*
 * Words of identifiers and paths, and whole-word keyword tests (issue 26).
 *
 * Kernel names, Python locations and op names are matched against
 * keywords by word, never by substring: "rope" is no word of
 * "tensor_operation", "cat" none of "scatter".  A word is a run of ASCII
 * letters and digits, cut further where the case or the kind of
 * character changes: "FusedAddRMSNormKernel" is Fused|Add|RMS|Norm|Kernel,
 * "fp8" is fp|8, "MT128x256x32" is MT|128|x|256|x|32.  Every other byte
 * (punctuation, spaces, non-ASCII) separates words.  A few words kernel
 * names write glued are two: "kvcache" is kv|cache, "rmsnorm" rms|norm,
 * "topk" top|k (the list is in words.c).
 *
 * A keyword matches when its compact form (its ASCII letters and digits,
 * lowercased: "kv_cache" -> "kvcache") is the concatenation of a run of
 * consecutive words of one field: "kv_cache" matches store_kvcache (one
 * word) and StoreKVCacheParams (KV|Cache), "fused_add_rmsnorm" matches
 * FusedAddRMSNorm, "rmsnorm" does not match "rms" alone.  Fields are the
 * separate texts added to one word list (a kernel name, each Python site,
 * a CPU op); a run never crosses from one into the next.
 */
#ifndef WORDS_H
#define WORDS_H

#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"

struct word {
	uint32_t off, len;	/* into the list's lowercased text */
	uint32_t field;		/* which added field the word belongs to */
};

/* A word list: owns its text and array (words_free); zero-initialize. */
typedef struct {
	sbuf low;		/* the fields, lowercased, back to back */
	struct word *w;
	size_t n, cap;
	uint32_t nfields;
} words;

/* Empty the list, keeping its memory. */
void words_reset(words *w);
void words_free(words *w);

/* Append the words of s[0..n) as a new field. */
void words_add(words *w, const char *s, size_t n);

/*
 * Does a run of consecutive words of one field concatenate to the
 * compact keyword k[0..m) (lowercase ASCII letters and digits)?  Returns
 * the index of the run's first word, or -1; m == 0 matches nothing.
 */
long words_find(const words *w, const char *k, size_t m);

/* words_find for a keyword as written: compacted first ("cache write" -> "cachewrite"). */
long words_find_keyword(const words *w, const char *keyword);

/* The compact form of a keyword (its [0-9A-Za-z], lowercased) into out (reset first). */
void words_compact(const char *s, size_t n, sbuf *out);

#endif
