/*
 * Kernel categories, corrected (issue 26, docs/deviations.md C2 and C15):
 * the rules of data/kernel-categories.jsonl (compiled in), tried in
 * order, the first that matches wins; no rule: "other".  classify_kernel
 * (rules.h) uses them unless --compat reference is given.
 *
 * A rule is one JSON object a line: "category"; "tokens", keywords that
 * match whole words (words.h: "kv_cache" matches store_kvcache and
 * KVCache, "rope" does not match tensor_operation) of the kernel's
 * identity (kname.h: its function without template arguments, so that a
 * data type in a template argument never decides), or of its whole
 * demangled name with "in": "name"; "prefix", prefixes of the lowercased
 * identity; "unless", tokens that veto the rule; "why", the reason.  A
 * rule with both tokens and prefixes needs one of each.
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

/*
 * The same, with the index of the rule that decided (0-based line of the
 * table) in *rule, or -1 for "other"; why, when not NULL, gets the rule's
 * reason (static, "" for other).
 */
const char *kernel_category_rule(const char *s, size_t n, long *rule, const char **why);

/* Is s a category some rule of the table gives (or "other")? */
int kernel_category_known(const char *s);

#endif
