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
#include <stdint.h>

#include "catalog.h"
#include "match.h"
#include "payload.h"
#include "sbuf.h"

/* One kernel row of the stage, in table order (descending total time). */
typedef struct {
	char *name;		/* canonical kernel name (owned) */
	const char *location;	/* rendered location cell (§2) */
	const char *cpu_op;	/* rendered CPU-op cell */
	const char *category;	/* the row's kernel category */
	double total_us;
	/*
	 * What detection reads of the row's kernel-map entry: the display
	 * location (A.2) of each site that has a location, NUL-terminated,
	 * back to back, nsitelocs of them (0 when the row has no entry).
	 * location, cpu_op, category and sitelocs belong to the caller's
	 * string table: many rows share them, and a stage may hold a million
	 * rows (issue 21).
	 */
	const char *sitelocs;
	unsigned nsitelocs;
	/*
	 * Which keywords the row hits (fuse_row_hits): per catalog pattern in
	 * order, one bit for its active keywords, then one per split group.
	 * The haystack they were matched in is not kept.
	 */
	uint64_t hits0[2];	/* up to 128 bits here (rows move: no pointer to them) */
	uint64_t *hits;		/* longer: owned; NULL when hits0 holds them */
	unsigned char fused;	/* corrected: "fused" is a word of the kernel's identity */
} frow_t;

/* The bits a row's hits take for catalog cat (fuse_row_hits). */
size_t fuse_hit_bits(const catalog_t *cat);

/* Run context: everything detection reads besides the rows (§1 step 4, §8). */
typedef struct {
	const char *framework;	/* resolved formal framework */
	const char *model;	/* model path, already lowercased */
	long long tp_size;
	/*
	 * The corrections (not under --compat reference): patterns about MoE
	 * routing and experts need an MoE kernel in the stage (moe_present);
	 * model-gated patterns read the model family too (family, lowercased,
	 * "" when unknown); dtype-gated ones the data types the stage's kernel
	 * names, CPU ops and the server args' quantization show (DT_* bits).
	 */
	int corrected;
	int moe_present;
	const char *family;
	unsigned dtypes;
} fctx_t;

/* Why a pattern did or did not produce a rendered row (--explain). */
enum verdict {
	V_EMPTY_STAGE,		/* stage total <= 0 */
	V_FRAMEWORK,		/* framework not among the path hints */
	V_TP,			/* require_tp and tp_size < min_tp_size */
	V_MODEL_INCLUDE,	/* model has none of model_include */
	V_MODEL_EXCLUDE,	/* model has one of model_exclude */
	V_MODEL_FAMILY,		/* corrected: model and family name none of model_family */
	V_DTYPE,		/* corrected: the trace shows none of the pattern's dtypes */
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
 * The gates of §5 that do not depend on the rows: framework, TP size,
 * model include and exclude.  V_ACCEPTED when the pattern passes them.
 */
enum verdict fuse_gate(const pattern_t *p, const fctx_t *ctx);

/*
 * Set row->hits for the row's haystack: kw_match of the active keywords
 * and split groups (§6) of every pattern i with pass[i] set, the patterns
 * that passed fuse_gate (the others' bits stay 0: detection never reads
 * them).  Returns 1 when any bit is set; a row without one takes no part
 * in detection.  Release with fuse_row_free_hits.
 */
int fuse_row_hits(const catalog_t *cat, const unsigned char *pass, const haystack_t *hs,
    frow_t *row);
/* The same for the corrected matching: whole words (haystack_words), also_active too. */
int fuse_row_hits_words(const catalog_t *cat, const unsigned char *pass, const words *w,
    frow_t *row);

/* The DT_* data types the words of a row (or of server args' quantization) name. */
unsigned dtype_evidence(const words *w);
void fuse_row_free_hits(frow_t *row);

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

/*
 * Evidence kernels (§7.1); "-" when no related row reaches 1 %.  With
 * ctx->corrected the cell lists its related rows so that their shares add
 * up to the row's: up to three, then "and N more (S%)".
 */
void fuse_evidence(const cand_t *c, const frow_t *rows, double total_us, const fctx_t *ctx,
    sbuf *out);

/* Current kernel Python location (§7.2); "-" when empty. */
void fuse_locations(const cand_t *c, const frow_t *rows, sbuf *out);

/*
 * Rationale (§7.4): one of four templates ending in the pattern's hint;
 * with ctx->corrected, what matched (kernel and keyword) and where the
 * fused path is, instead of "This tree already has a matching path".
 */
void fuse_rationale(const cand_t *c, const frow_t *rows, const fctx_t *ctx, sbuf *out);

/*
 * What matched, for the rationale and --explain: per matched group (and
 * the active keywords), "'keyword' in kernel (field)", the kernel shortened
 * (kname_short); at most `max` items.  Appends to out.
 */
void fuse_matched(const cand_t *c, const frow_t *rows, const fctx_t *ctx, size_t max,
    int short_kernel, sbuf *out);

/* One human-readable sentence on why the candidate got its verdict. */
void fuse_explain(const fresult_t *res, const cand_t *c, const frow_t *rows,
    const fctx_t *ctx, sbuf *out);

#endif
