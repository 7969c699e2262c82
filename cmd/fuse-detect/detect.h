/*
 * Fusion-opportunity detection for one (trace, stage) group
 * (fuse-detect.md §5-§8) and the cells of its rows (§7).
 *
 * The caller owns the rows and the catalog; a fresult_t owns only its own
 * arrays (fresult_free).  Cells are written to caller-owned sbufs, which
 * are reset first.
 */
#ifndef FUSE_DETECT_H
#define FUSE_DETECT_H

#include <stddef.h>

#include "catalog.h"
#include "match.h"
#include "payload.h"
#include "sbuf.h"

/* One kernel row of the stage, in table order (descending total time). */
typedef struct {
	char *name;		/* canonical kernel name */
	char *location;		/* rendered location cell (§2) */
	char *cpu_op;		/* rendered CPU-op cell */
	char *category;		/* the row's kernel category */
	double total_us;
	entry_t *entry;		/* NULL when the row has none */
	haystack_t hs;		/* built by the caller with haystack_build */
} frow_t;

/* Run context: everything detection reads besides the rows (§1 step 4, §8). */
typedef struct {
	const char *framework;	/* resolved formal framework */
	const char *model;	/* model path, already lowercased */
	long long tp_size;
	/*
	 * The corrections (not under --compat reference): patterns about MoE
	 * routing and experts need an MoE kernel in the stage (moe_present).
	 */
	int corrected;
	int moe_present;
} fctx_t;

/* Why a pattern did or did not produce a rendered row (--explain). */
enum verdict {
	V_EMPTY_STAGE,		/* stage total <= 0 */
	V_FRAMEWORK,		/* framework not among the path hints */
	V_TP,			/* require_tp and tp_size < min_tp_size */
	V_MODEL_INCLUDE,	/* model has none of model_include */
	V_MODEL_EXCLUDE,	/* model has one of model_exclude */
	V_NO_MOE,		/* an MoE pattern, and no MoE kernel in the stage */
	V_NO_HIT,		/* no active hit and the split groups incomplete */
	V_ZERO_TIME,		/* related time <= 0 */
	V_MIN_SHARE,		/* split match below min_share */
	V_BLOCKED,		/* named in an accepted pattern's subsumes */
	V_CONSUMED,		/* a related row was taken by an accepted pattern */
	V_RENDER_BAR,		/* accepted, but share < 1.0 % (§1 step 5) */
	V_ACCEPTED		/* rendered */
};

/* verdict_name: the stable identifier of a verdict ("below_min_share"). */
const char *verdict_name(enum verdict v);

/* The evaluation of one catalog pattern against one stage. */
typedef struct {
	const pattern_t *p;
	enum verdict v;
	int direct;		/* has_active_match */
	size_t groups_hit;	/* split groups with at least one row */
	size_t *rows;		/* related rows (§6 step 6), union order */
	size_t nrows;
	double related_us;
	double share;		/* pct(related_us, stage total), unrounded */
	size_t by;		/* V_BLOCKED / V_CONSUMED: the accepted pattern */
	size_t row;		/* V_CONSUMED: the first row already taken */
} cand_t;

typedef struct {
	cand_t *c;		/* one per catalog pattern, in catalog order */
	size_t n;
	size_t *out;		/* rendered rows: indexes into c, in table order */
	size_t nout;
	double total_us;
} fresult_t;

/*
 * fuse_detect: evaluate every catalog pattern against the rows of one
 * stage whose GPU total is total_us (§8), select greedily (§8 step 6)
 * and apply the 1.0 % render bar (§1 step 5).  Fills *res, which the
 * caller releases with fresult_free.  Never fails.
 */
void fuse_detect(const catalog_t *cat, const frow_t *rows, size_t nrows,
    double total_us, const fctx_t *ctx, fresult_t *res);
void fresult_free(fresult_t *res);

/*
 * Cells of a candidate (§7): Confirmed/Candidate; whether the fusion is
 * "in use" (an active keyword: the fused kernel or path already runs) or
 * "missing" (only the separate kernels it would fuse); the pattern's
 * origin and match kind as the reference's status cell (§6 step 9).
 */
const char *fuse_confidence(const cand_t *c);
const char *fuse_status(const cand_t *c);
const char *fuse_origin(const cand_t *c);

/* Evidence kernels (§7.1); "-" when no related row reaches 1 %. */
void fuse_evidence(const cand_t *c, const frow_t *rows, double total_us, sbuf *out);

/* Current kernel Python location (§7.2); "-" when empty. */
void fuse_locations(const cand_t *c, const frow_t *rows, sbuf *out);

/* Rationale (§7.4): one of four templates ending in the pattern's hint. */
void fuse_rationale(const cand_t *c, sbuf *out);

/* One human-readable sentence on why the candidate got its verdict. */
void fuse_explain(const fresult_t *res, const cand_t *c, const frow_t *rows,
    const fctx_t *ctx, sbuf *out);

#endif
