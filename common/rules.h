/*
 * Classification and ranking rules of the reference analyzer that more than
 * one tool needs.  Each function cites the spec section it reproduces.
 * Strings are (pointer, length) spans of valid UTF-8.
 */
#ifndef RULES_H
#define RULES_H

#include <stddef.h>

#include "sbuf.h"

/*
 * Returned strings are static constants (never freed); functions filling
 * an sbuf reset it first.  Case folding is ASCII-only (docs/deviations.md).
 */

/* Stage names and order (kernel-table.md §3; "prefill" is an alias of extend). */
int stage_index(const char *stage);		/* extend/prefill 0, decode 1, all 2, else 99 (NULL too) */
const char *stage_label(const char *stage);	/* "extend/prefill" for extend, else stage */

/*
 * parse_stage (kernel-table.md §3.1): "extend", "decode" or "all" from the
 * last six components of a path (the root "/" counts as one).  Pass the
 * absolute, symlink-free path, as the reference does.
 */
const char *parse_stage(const char *abspath);

/*
 * parse_tp_rank (capture-and-cli.md §4.2) on a file name (not a path):
 * returns 1 and sets *rank, or 0 when no pattern matches.  Ranks above
 * 10^17 saturate.
 */
int parse_tp_rank(const char *name, long long *rank);

/*
 * Stage of a user annotation from its name: "decode", "extend" or NULL;
 * with --compat reference by the reference's substrings (§3.2.1), else
 * by the batch counts of vLLM markers and the whole words decode,
 * prefill and extend (SGLang's step[EXTEND ...]; not DLRM's "decoder"):
 * docs/deviations.md C8.
 */
const char *annotation_stage(const char *name, size_t n);

/*
 * The category of a RAW kernel name: with --compat reference the
 * reference's classify_kernel (kernel-table.md §2.2), else the corrected
 * rules of kcat.h.  A static string.
 */
const char *classify_kernel(const char *raw, size_t n);

/*
 * The name test of the overlap kernel detector (overlap.md §2.5 step 7) on
 * an already lowercased name: a void/ampere_/sm80_/sm90_ prefix or any
 * keyword of the §2.7 lists.
 */
int overlap_name_hint(const char *lower, size_t n);

/*
 * Is an event category (lowercased, normalized) GPU work: kernel,
 * gpu_memcpy, gpu_memset, or the legacy Kernel, Memcpy, Memset?  Not
 * cuda_sync, runtime or driver calls, annotations.
 */
int gpu_work_category(const char *lower, size_t n);

/*
 * Is a runtime call named s[0..n) a CUDA-graph launch (cudaGraphLaunch,
 * cuGraphLaunch, hipGraphLaunch and their suffixed forms)?  The kernels it
 * submits are replayed from a graph, not launched eagerly (step-stats(1)).
 */
int graph_launch_name(const char *s, size_t n);

/*
 * Does a classify_kernel category move memory rather than compute: memory
 * (the reference's), memcpy, memset or copy (the corrected ones)?
 */
int category_moves_memory(const char *cat);

/* classify_kernel of the overlap table (overlap.md §2.7); a different list. */
const char *overlap_classify(const char *raw, size_t n);

/* is_low_signal (kernel-table.md §4.7) of a location: 1 or 0. */
int is_low_signal(const char *loc, size_t n);

/* source_location_priority (kernel-table.md §4.7): -100 .. 300. */
int source_location_priority(const char *loc, size_t n);

/* frame_priority (kernel-table.md §4.4) of a raw python_function name: -20 .. 300. */
int frame_priority(const char *raw, size_t n);

/* is_preferred (kernel-table.md §4.7): starts with a serving-framework root. */
int is_preferred_location(const char *loc, size_t n);

/*
 * preferred_stack_location (kernel-table.md §4.7): best frame of a
 * " -> "-joined stack (highest source priority above 0, right-most on
 * ties), normalized.  Returns 1 and leaves it in out, or 0 with out empty.
 */
int preferred_stack_location(const char *stack, size_t n, sbuf *out);

/*
 * Framework names (capture-and-cli.md §5.1).  framework_canonical maps any
 * spelling to "auto", "sglang", "vllm", "trtllm" or "tokenspeed";
 * framework_display gives "SGLang", "vLLM", "TensorRT-LLM", "TokenSpeed".
 */
const char *framework_canonical(const char *s);
const char *framework_display(const char *canonical);

/* Text hint (capture-and-cli.md §5.2): a canonical framework or NULL. */
const char *framework_text_hint(const char *s, size_t n);

/*
 * Sampling positions (kernel-table.md §5.5.2): for a group of n items
 * (n > 16) the i-th sampled index, round(i * (n - 1) / 15), i in 0..15.
 */
size_t sample_position(size_t i, size_t n);

#endif
