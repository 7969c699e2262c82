/*
 * The report as one JSON document (json.load reads it): per run its
 * header facts, notes and, per table, row objects keyed by column name;
 * numbers in the column's unit, list cells as arrays, kernel names whole
 * with the short form beside them.
 */
#include <string.h>

#include "json.h"
#include "num.h"
#include "render.h"

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

/* Columns whose cells hold several values, one a line. */
static int
is_list(const char *key)
{
	return strcmp(key, "python_location") == 0 || strcmp(key, "cpu_op") == 0 ||
	    strcmp(key, "evidence_kernels") == 0 || strcmp(key, "current_python_locations") == 0 ||
	    strcmp(key, "candidate_fused_path") == 0;
}

/*
 * Does column c carry a _short companion on every row?  Kernel names
 * always, other columns when any of their cells was shortened, so that
 * every row of a table has the same members.
 */
static int
has_short(const struct tab *t, size_t c)
{
	size_t r;

	if (strcmp(t->cols[c].key, "kernel") == 0)
		return 1;
	for (r = 0; r < t->nrows; r++)
		if (t->cells[r * t->ncols + c].full)
			return 1;
	return 0;
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
table(sbuf *out, const struct tab *t)
{
	size_t r, c;
	char buf[40];
	int ids = has_ids(t);

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
			if (x->has_num)
				sb_adds(out, num_json(x->num, buf));
			else if (t->cols[c].num)
				sb_adds(out, "null");	/* a number the run does not have ("-") */
			else if (is_list(t->cols[c].key))
				list(out, x->text);
			else
				str(out, x->full ? x->full : x->text);
			if (has_short(t, c)) {
				sb_adds(out, ",\"");
				sb_adds(out, t->cols[c].key);
				sb_adds(out, "_short\":");
				str(out, x->text);
			}
		}
		sb_addc(out, '}');
	}
	sb_adds(out, "]}");
}

static void
one(sbuf *out, const struct doc *d)
{
	size_t i, j;
	int first = 1;

	sb_adds(out, "{\"title\":");
	str(out, d->title);
	sb_adds(out, ",\"facts\":{");
	for (i = 0; i < d->nfacts; i++) {
		if (i)
			sb_addc(out, ',');
		str(out, d->facts[i].key);
		sb_addc(out, ':');
		str(out, d->facts[i].value);
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
			table(out, &d->secs[i].tabs[j]);
		}
	sb_adds(out, "]}");
}

void
jsondoc_write(const struct doc *const *docs, size_t n, sbuf *out)
{
	size_t i;

	sb_adds(out, "{\"schema\":2,\"reports\":[");
	for (i = 0; i < n; i++) {
		if (i)
			sb_addc(out, ',');
		one(out, docs[i]);
	}
	sb_adds(out, "]}\n");
}
