/*
 * One table of the report as CSV (RFC 4180) or TSV: a header of the
 * column names (the records' member names), the stage first; numbers as
 * plain numbers in the column's unit (microseconds, percent) rounded to
 * the figure's precision, an empty cell for a figure the run does not
 * have; a shortened name's short form in a <key>_short column beside the
 * whole one; a list cell's values joined with "; " (issue 31); text as
 * dsv_field writes it.
 */
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "num.h"
#include "render.h"
#include "xalloc.h"

void
dsv_field(sbuf *out, const char *raw, char sep)
{
	sbuf b = SBUF_INIT;
	const char *p;
	int quote;

	/* TSV has no quoting: a tab or line break kept would end the cell or the row */
	esc_ctrl(raw, strlen(raw), sep == '\t' ? 0 : ESC_KEEP_TAB | ESC_KEEP_NL | ESC_KEEP_CR, &b);
	quote = sep != '\t' && strpbrk(sb_str(&b), ",\"\r\n") != NULL;
	if (quote)
		sb_addc(out, '"');
	/* the guard reads the cell as written: TSV's "\x09=..." is no formula */
	if (!raw_cells && esc_is_formula(sb_str(&b), b.len))
		sb_addc(out, '\'');
	for (p = sb_str(&b); *p; p++) {
		if (quote && *p == '"')
			sb_addc(out, '"');
		sb_addc(out, *p);
	}
	if (quote)
		sb_addc(out, '"');
	sb_free(&b);
}

/*
 * A text cell of column `key`: a list column's values (one a line; arrays
 * in JSON) joined with "; ", any other text whole.
 */
static void
text_field(sbuf *out, const char *s, const char *key, char sep)
{
	sbuf b = SBUF_INIT;
	const char *p;

	if (!col_is_list(key)) {
		dsv_field(out, s, sep);
		return;
	}
	for (p = s; *p; p++) {
		if (*p == '\n')
			sb_adds(&b, "; ");
		else
			sb_addc(&b, *p);
	}
	dsv_field(out, b.s ? b.s : "", sep);
	sb_free(&b);
}

int
dsv_write(const struct doc *d, const char *table, char sep, sbuf *out)
{
	const char *eol = sep == ',' ? "\r\n" : "\n";
	const struct tab *first = NULL;
	char *shorts;
	size_t i, j, r, c;
	char buf[64];

	for (i = 0; i < d->nsecs && !first; i++)
		for (j = 0; j < d->secs[i].ntabs && !first; j++)
			if (strcmp(d->secs[i].tabs[j].id, table) == 0)
				first = &d->secs[i].tabs[j];
	if (!first)
		return -1;
	/* which columns have a _short companion: once per table, not per cell */
	shorts = xcalloc(first->ncols ? first->ncols : 1, 1);
	for (c = 0; c < first->ncols; c++)
		shorts[c] = (char)doc_col_has_short(d, table, c);
	sb_adds(out, "stage");
	for (c = 0; c < first->ncols; c++) {
		sb_addc(out, sep);
		sb_adds(out, first->cols[c].key);
		if (shorts[c]) {
			sb_addc(out, sep);
			sb_adds(out, first->cols[c].key);
			sb_adds(out, "_short");
		}
	}
	sb_adds(out, eol);
	for (i = 0; i < d->nsecs; i++)
		for (j = 0; j < d->secs[i].ntabs; j++) {
			const struct tab *t = &d->secs[i].tabs[j];
			if (strcmp(t->id, table) != 0)
				continue;
			for (r = 0; r < t->nrows; r++) {
				dsv_field(out, t->stage ? t->stage : "", sep);
				for (c = 0; c < t->ncols; c++) {
					const struct cell *x = &t->cells[r * t->ncols + c];
					sb_addc(out, sep);
					if (x->has_num)
						sb_adds(out, fig_num(x->num, t->cols[c].key, buf));
					else if (!t->cols[c].num && !x->none)
						text_field(out, x->full ? x->full : x->text,
						    t->cols[c].key, sep);
					/* a figure the run does not have: an empty cell */
					if (c < first->ncols && shorts[c]) {
						sb_addc(out, sep);
						if (!x->none)
							text_field(out, x->text, t->cols[c].key, sep);
					}
				}
				sb_adds(out, eol);
			}
		}
	free(shorts);
	return 0;
}

const char *
dsv_empty_reason(const struct doc *d, const char *table)
{
	const struct tab *first = NULL;
	size_t i, j;

	for (i = 0; i < d->nsecs; i++)
		for (j = 0; j < d->secs[i].ntabs; j++) {
			const struct tab *t = &d->secs[i].tabs[j];
			if (strcmp(t->id, table) != 0)
				continue;
			if (t->nrows)
				return NULL;
			if (!first)
				first = t;
		}
	return first ? first->empty : NULL;
}

/* The next table of d named id after position *si, *ti (start both at 0), or NULL. */
static const struct tab *
next_tab(const struct doc *d, const char *id, size_t *si, size_t *ti)
{
	for (; *si < d->nsecs; (*si)++, *ti = 0)
		while (*ti < d->secs[*si].ntabs) {
			const struct tab *t = &d->secs[*si].tabs[(*ti)++];
			if (strcmp(t->id, id) == 0)
				return t;
		}
	return NULL;
}

/*
 * A bundle's runs as one table: "run", "stage", then the union of the
 * runs' columns in the order they first appear (a run without launch
 * delays lacks two); a cell a run does not have is empty.  Returns the
 * number of runs that have the table.
 */
size_t
dsv_write_bundle(struct doc *const *dp, size_t n, const char *table, char sep, sbuf *out)
{
	const char *eol = sep == ',' ? "\r\n" : "\n";
	const char *keys[128];
	char shortk[128] = { 0 }, buf[64];
	size_t nk = 0, i, r, c, k, have = 0;

	for (i = 0; i < n; i++) {
		const struct tab *tb;
		size_t si = 0, ti = 0;
		while ((tb = next_tab(dp[i], table, &si, &ti)) != NULL)
			for (c = 0; c < tb->ncols; c++) {
				for (k = 0; k < nk && strcmp(keys[k], tb->cols[c].key) != 0; k++)
					;
				if (k == nk && nk < sizeof keys / sizeof keys[0])
					keys[nk++] = tb->cols[c].key;
				if (k < nk && doc_col_has_short(dp[i], table, c))
					shortk[k] = 1;
			}
	}
	if (!nk)
		return 0;
	sb_adds(out, "run");
	sb_addc(out, sep);
	sb_adds(out, "stage");
	for (k = 0; k < nk; k++) {
		sb_addc(out, sep);
		sb_adds(out, keys[k]);
		if (shortk[k]) {
			sb_addc(out, sep);
			sb_adds(out, keys[k]);
			sb_adds(out, "_short");
		}
	}
	sb_adds(out, eol);
	for (i = 0; i < n; i++) {
		const struct tab *tb;
		size_t si = 0, ti = 0;
		int any = 0;
		while ((tb = next_tab(dp[i], table, &si, &ti)) != NULL) {
			any = 1;
			for (r = 0; r < tb->nrows; r++) {
				dsv_field(out, dp[i]->title ? dp[i]->title : "", sep);
				sb_addc(out, sep);
				dsv_field(out, tb->stage ? tb->stage : "", sep);
				for (k = 0; k < nk; k++) {
					const struct cell *x = NULL;
					for (c = 0; c < tb->ncols; c++)
						if (strcmp(tb->cols[c].key, keys[k]) == 0) {
							x = &tb->cells[r * tb->ncols + c];
							break;
						}
					sb_addc(out, sep);
					if (x && x->has_num)
						sb_adds(out, fig_num(x->num, keys[k], buf));
					else if (x && !tb->cols[c].num && !x->none)
						text_field(out, x->full ? x->full : x->text, keys[k], sep);
					if (shortk[k]) {
						sb_addc(out, sep);
						if (x && x->text && !x->none)
							text_field(out, x->text, keys[k], sep);
					}
				}
				sb_adds(out, eol);
			}
		}
		have += any;
	}
	return have;
}
