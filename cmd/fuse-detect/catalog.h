/*
 * The fusion-pattern catalog (fuse-detect.md §5-§7, Appendix C;
 * fuse-patterns(5)): one pattern per JSON line, loaded from the copy
 * compiled into the binary or from --patterns files.
 *
 * A catalog owns every pattern and every string in it; catalog_free()
 * releases them all.  Needles are kept in the three forms the matcher
 * needs (fuse-detect.md §4) so nothing is recomputed per row.
 */
#ifndef FUSE_CATALOG_H
#define FUSE_CATALOG_H

#include <stddef.h>

/* One keyword: as written, lowercased (test a), compacted (test b). */
typedef struct {
	char *raw;
	char *lower;
	char *compact;		/* "" when the needle has no [0-9A-Za-z] */
	/*
	 * A split keyword that only names the pattern's model (one of its
	 * model_include tokens): every kernel of the model's file has it, so
	 * the corrected matching does not take it as an operation's kernel.
	 */
	int model_name;
} needle_t;

typedef struct {
	needle_t *v;
	size_t n;
} kwlist_t;

typedef struct {
	char **v;
	size_t n;
} strlist_t;

/* Framework hint bits derived from candidate_path (§5 step 2). */
enum {
	HINT_SGLANG = 1 << 0,
	HINT_VLLM = 1 << 1,
	HINT_TRTLLM = 1 << 2,
	HINT_TOKENSPEED = 1 << 3
};

enum origin { ORIGIN_MAINLINE, ORIGIN_UPSTREAM, ORIGIN_OTHER };

/* Data types a pattern can need (the "dtypes" member; a trace's evidence). */
enum {
	DT_FP8 = 1 << 0,
	DT_FP4 = 1 << 1,
	DT_INT8 = 1 << 2,
	DT_INT4 = 1 << 3
};

typedef struct {
	char *pattern;
	char *candidate_path;	/* the array joined with "<br>" (§7.3) */
	char *rationale;	/* the hint sentence H of §7.4 */
	char *origin_text;
	enum origin origin;
	kwlist_t active;
	kwlist_t *groups;	/* split groups, in order */
	size_t ngroups;
	strlist_t model_include, model_exclude, subsumes;
	long long min_tp_size, priority;
	int require_tp;
	double min_share, likely_share;
	unsigned hints;		/* HINT_* set; 0 passes every framework */
	size_t span;		/* pattern_span (§6 step 9) */
	/*
	 * Read in default mode only (issue 26; --compat reference ignores
	 * them): other implementations of the fused path (AMD aiter, CK, the
	 * ROCm builds), counted as active keywords; per split group, the kernel
	 * categories that can be one of its separate kernels (ngroups lists,
	 * "generic" standing for other, elementwise, copy, indexing, layout and
	 * reduce_topk); the data types the trace must show one of (DT_*, 0:
	 * any); the model families one of which the model must name.
	 */
	kwlist_t also_active;
	strlist_t *group_cats;
	unsigned dtypes;
	strlist_t model_family;
} pattern_t;

typedef struct {
	pattern_t *p;
	size_t n, cap;
} catalog_t;

/*
 * catalog_load_builtin: append the patterns compiled in from
 * data/fuse-patterns.jsonl.  A defect there is a build problem, but it is
 * still reported like a file error (exit 1, "<built-in catalog>:LINE").
 */
void catalog_load_builtin(catalog_t *c);

/*
 * catalog_load_file: append the patterns of a fuse-patterns(5) file ("-"
 * is stdin).  Blank lines and lines whose first non-blank character is
 * '#' are skipped.  Dies with exit 1 and "FILE:LINE: ..." on an
 * unreadable file or a malformed line.
 */
void catalog_load_file(catalog_t *c, const char *path);

void catalog_free(catalog_t *c);

#endif
