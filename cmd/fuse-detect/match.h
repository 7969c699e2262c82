/*
 * Text matching and cell formatting of the fuse table (fuse-detect.md §4,
 * §7.2): the reference's lowercase, the row haystack, keyword tests and
 * format_location_for_fusion_display.  All text is valid UTF-8; results
 * go to caller-owned sbufs, which are reset first.
 */
#ifndef FUSE_MATCH_H
#define FUSE_MATCH_H

#include <stddef.h>

#include "catalog.h"
#include "sbuf.h"
#include "words.h"

/*
 * py_lower: the reference's str.lower() as far as it can change what the
 * matcher sees: ASCII letters, plus the only two code points whose
 * lowercase contains ASCII (U+0130 -> "i" U+0307, U+212A KELVIN SIGN ->
 * "k"; edge case 34).  Other non-ASCII letters keep their case (a
 * documented deviation; every catalog needle is ASCII).
 */
void py_lower(const char *p, size_t n, sbuf *out);

/*
 * sbs: an sbuf's text, "" when empty.  Used instead of sb_str because an
 * sbuf that was grown but never written holds no terminating NUL.
 */
static inline const char *
sbs(const sbuf *b)
{
	return b->len ? b->s : "";
}

/* A kernel row's search text (§4 steps 1-2), built once per row. */
typedef struct {
	sbuf hay;		/* py_lower(name + " " + location + " " + cpu_op) */
	sbuf compact;		/* compact(hay) */
} haystack_t;

void haystack_build(haystack_t *h, const char *name, const char *loc,
    const char *cpu_op);
void haystack_free(haystack_t *h);

/*
 * row_matches (§4 step 3): 1 when some needle of the list is a substring
 * of the lowered haystack, or has a non-empty compact form that is a
 * substring of the compacted one.  An empty list matches nothing.
 */
int kw_match(const haystack_t *h, const kwlist_t *kw);

/*
 * The corrected matching (issue 26, docs/deviations.md C16): keywords
 * match whole words (words.h) of one field, never substrings: the
 * kernel's identity (kname_identity: no template arguments, a launch
 * wrapper read as the kernel it runs) is field 0, then each Python site of
 * the location cell (its " (site share N%)" left out), then each CPU op.
 * Sets *nloc to the number of site fields.
 */
void haystack_words(words *w, const char *name, const char *loc, const char *cpu_op,
    unsigned *nloc);

/*
 * The first needle of kw that matches whole words of w: its index, the
 * field it matched in (*field, when not NULL), or -1.  A needle that only
 * names the pattern's model (needle_t.model_name) is skipped.
 */
long kw_find(const words *w, const kwlist_t *kw, unsigned *field);

/* "name", "Python location" or "CPU op": what field f of haystack_words is. */
const char *field_kind(unsigned f, unsigned nloc);

/*
 * format_location_for_fusion_display (§7.2 step 2): normalize, then
 * rewrite "PATH:LINE<ws>FUNC" (regex ^(.+?):(\d+)\s+(.+)$ with Unicode
 * \d and \s, edge cases 20 and 38) as "FUNC @ PATH:LINE"; anything else
 * is returned normalized.
 */
void format_fusion_location(const char *p, size_t n, sbuf *out);

#endif
