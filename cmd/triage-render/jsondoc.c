/*
 * The report as one JSON document (json.load reads it): per run its
 * header facts as named fields, notes and, per table, row objects keyed
 * by column name (the records' member names); numbers in the column's
 * unit at the figure's precision (fig_num), null where the run has none,
 * list cells as arrays, kernel names whole with the short form beside
 * them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "num.h"
#include "render.h"
#include "xalloc.h"

static void
str(sbuf *out, const char *s)
{
	json_quote(out, s, strlen(s));
}

/* A list cell (one value per line) as a JSON array. */
static void
list(sbuf *out, const char *s)
{
	const char *p = s, *nl;
	int first = 1;

	sb_addc(out, '[');
	while (*p) {
		nl = strchr(p, '\n');
		if (!first)
			sb_addc(out, ',');
		json_quote(out, p, nl ? (size_t)(nl - p) : strlen(p));
		first = 0;
		if (!nl)
			break;
		p = nl + 1;
	}
	sb_addc(out, ']');
}

/* Does any row of t carry its record's id (issue 29)? */
static int
has_ids(const struct tab *t)
{
	size_t r;

	for (r = 0; r < t->caprowid && r < t->nrows; r++)
		if (t->rowid[r])
			return 1;
	return 0;
}

static void
table(sbuf *out, const struct doc *d, const struct tab *t)
{
	size_t r, c;
	char buf[64];
	int ids = has_ids(t);
	/* which columns have a _short companion: once per table, not per cell */
	char *shorts = xcalloc(t->ncols ? t->ncols : 1, 1);

	for (c = 0; c < t->ncols; c++)
		shorts[c] = (char)doc_col_has_short(d, t->id, c);
	sb_adds(out, "{\"table\":");
	str(out, t->id);
	sb_adds(out, ",\"stage\":");
	if (t->stage)
		str(out, t->stage);
	else
		sb_adds(out, "null");
	if (t->headline) {
		sb_adds(out, ",\"headline\":");
		str(out, t->headline);
	}
	if (t->total) {
		sb_adds(out, ",\"total\":");
		str(out, t->total);
	}
	if (t->more) {
		sb_adds(out, ",\"left_out\":");
		str(out, t->more);
	}
	if (t->nrows == 0 && t->empty) {
		sb_adds(out, ",\"empty\":");
		str(out, t->empty);
	}
	sb_adds(out, ",\"rows\":[");
	for (r = 0; r < t->nrows; r++) {
		sb_adds(out, r ? ",{" : "{");
		if (ids) {	/* the row's id first, null for a row without one */
			sb_adds(out, "\"id\":");
			if (r < t->caprowid && t->rowid[r])
				str(out, t->rowid[r]);
			else
				sb_adds(out, "null");
			if (t->ncols)
				sb_addc(out, ',');
		}
		for (c = 0; c < t->ncols; c++) {
			const struct cell *x = &t->cells[r * t->ncols + c];
			if (c)
				sb_addc(out, ',');
			str(out, t->cols[c].key);
			sb_addc(out, ':');
			if (x->has_num && isfinite(x->num))
				sb_adds(out, fig_num(x->num, t->cols[c].key, buf));
			else if (t->cols[c].num || x->none)
				sb_adds(out, "null");	/* a figure the run does not have ("-") */
			else if (col_is_list(t->cols[c].key))
				list(out, x->text);
			else
				str(out, x->full ? x->full : x->text);
			if (shorts[c]) {
				sb_adds(out, ",\"");
				sb_adds(out, t->cols[c].key);
				sb_adds(out, "_short\":");
				if (x->none)
					sb_adds(out, "null");
				else
					str(out, x->text);
			}
		}
		sb_addc(out, '}');
	}
	sb_adds(out, "]}");
	free(shorts);
}

static void
one(sbuf *out, const struct doc *d)
{
	size_t i, j;
	int first = 1;

	sb_adds(out, "{\"title\":");
	str(out, d->title);
	/* the facts as named fields, their values the figures (issue 31) */
	sb_adds(out, ",\"facts\":{");
	for (i = 0; i < d->nfields; i++) {
		if (i)
			sb_addc(out, ',');
		str(out, d->fields[i].name);
		sb_addc(out, ':');
		sb_adds(out, d->fields[i].json);
	}
	sb_adds(out, "},\"notes\":[");
	for (i = 0; i < d->nnotes; i++) {
		if (i)
			sb_addc(out, ',');
		str(out, d->notes[i]);
	}
	sb_adds(out, "],\"health\":");
	if (d->health) {
		sb_adds(out, "{\"verdict\":");
		str(out, d->verdict);
		sb_adds(out, ",\"text\":");
		str(out, d->health);
		sb_addc(out, '}');
	} else
		sb_adds(out, "null");
	sb_adds(out, ",\"tables\":[");
	for (i = 0; i < d->nsecs; i++)
		for (j = 0; j < d->secs[i].ntabs; j++) {
			if (!first)
				sb_addc(out, ',');
			first = 0;
			table(out, d, &d->secs[i].tabs[j]);
		}
	sb_adds(out, "]}");
}

/*
 * Schema 3 (issue 31): facts as named fields, column keys the records'
 * member names, figures at their precision; a bundle's "summary" table.
 */
void
jsondoc_write(const struct doc *const *docs, size_t n, const struct doc *summary, sbuf *out)
{
	size_t i, j, k;

	sb_adds(out, "{\"schema\":3,\"reports\":[");
	for (i = 0; i < n; i++) {
		if (i)
			sb_addc(out, ',');
		one(out, docs[i]);
	}
	sb_addc(out, ']');
	if (summary)
		for (j = 0; j < summary->nsecs; j++)
			for (k = 0; k < summary->secs[j].ntabs; k++) {
				sb_adds(out, ",\"summary\":");
				table(out, summary, &summary->secs[j].tabs[k]);
			}
	sb_adds(out, "}\n");
}
