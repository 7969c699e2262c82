/*
 * Kernel categories, corrected: the rules of data/kernel-categories.jsonl
 * (compiled in), which know AMD (hipBLASLt/Tensile Cijk_, Composable
 * Kernel, AITER), Triton (attn_fwd, triton_poi_), CUTLASS DSL, cuDNN and
 * current FlashInfer/FlashAttention/TRT-LLM names, and give memcpy and
 * memset their own categories (docs/deviations.md, "Corrections").
 * classify_kernel (rules.h) uses them unless --compat reference is given.
 *
 * A rule is one JSON object a line: "category"; "any", substrings of the
 * lowercased raw name; "prefix", its prefixes; "unless", substrings that
 * veto the rule; "why", a sentence.  The first rule that matches wins;
 * no rule: "other".
 */
#ifndef KCAT_H
#define KCAT_H

#include <stddef.h>

/*
 * The category of the raw kernel name s[0..n): a static string, valid for
 * the run.  Dies with exit 1 naming the rule when the compiled-in table
 * is malformed (a build error caught by the tests).
 */
const char *kernel_category(const char *s, size_t n);

#endif
