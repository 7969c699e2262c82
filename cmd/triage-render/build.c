/*
 * The building blocks of a report document (render.h): facts, notes,
 * sections, tables, rows and cells, and lookups over a run's items that
 * every section file uses.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

#include "json.h"
#include "num.h"
#include "render.h"
#include "rules.h"
#include "xalloc.h"

int stats_view;

const char *const table_ids[] = {
	"gpu", "launch", "stream", "annotation", "step", "escape", "kernel", "roofline",
	"unmodeled", "overlap", "fuse", "fuse_in_use", "rank", "collective", "rank_kernel",
	"health", "verdict", "diff_gpu", "diff", "diff_fuse", "diff_overlap", "runs", NULL
};

int
is_table_id(const char *id)
{
	size_t i;

	for (i = 0; table_ids[i]; i++)
		if (strcmp(table_ids[i], id) == 0)
			return 1;
	return 0;
}

int
col_is_stat(const struct tab *t, size_t c)
{
	static const char *const stats[] = { "mean_us", "min_us", "max_us", "p50_us", "p90_us",
	    NULL };
	size_t i;

	if (strcmp(t->id, "kernel") != 0)
		return 0;
	for (i = 0; stats[i]; i++)
		if (strcmp(t->cols[c].key, stats[i]) == 0)
			return 1;
	return 0;
}

int
col_shown(const struct tab *t, size_t c)
{
	const char *k = t->cols[c].key;

	/* the GPU items' kernels, copies and sets and their time: the headline says them */
	if (strcmp(t->id, "gpu") == 0) {
		if (strcmp(k, "other_stages_us") == 0) {
			/* where the span is more than busy and idle: other stages ran */
			size_t r;
			for (r = 0; r < t->nrows; r++)
				if (t->cells[r * t->ncols + c].num > 0)
					return 1;
			return 0;
		}
		return strcmp(k, "kernels") != 0 && strcmp(k, "copies") != 0 &&
		    strcmp(k, "kernel_us") != 0 && strcmp(k, "step_busy_p50_us") != 0;
	}
	if (strcmp(t->id, "kernel") != 0)
		return 1;
	if (col_is_stat(t, c))
		return stats_view;
	/* --stats: the statistics take the place of the sites' columns */
	return !stats_view || (strcmp(k, "location") != 0 && strcmp(k, "cpu_op") != 0);
}

static struct field *
find_field(struct doc *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->nfields; i++)
		if (strcmp(d->fields[i].name, name) == 0)
			return &d->fields[i];
	return NULL;
}

void
add_field(struct doc *d, const char *name, const char *json)
{
	struct field *f = find_field(d, name);

	if (f) {
		free(f->json);
		f->json = xstrdup(json);
		return;
	}
	xgrow(&d->fields, &d->capfields, d->nfields + 1, sizeof *d->fields);
	d->fields[d->nfields].name = xstrdup(name);
	d->fields[d->nfields].json = xstrdup(json);
	d->nfields++;
}

void
add_field_str(struct doc *d, const char *name, const char *text)
{
	sbuf b = SBUF_INIT;

	json_quote(&b, text, strlen(text));
	add_field(d, name, sb_str(&b));
	sb_free(&b);
}

void
add_field_members(struct doc *d, const char *name, const struct item *it,
    const char *const *members)
{
	sbuf b = SBUF_INIT;
	size_t i, n;
	int k, first = 1;

	sb_addc(&b, '{');
	for (i = 0; members[i]; i++) {
		const char *s;
		if ((k = item_get(it, members[i])) < 0)
			continue;
		sb_printf(&b, "%s\"%s\":", first ? "" : ",", members[i]);
		if (it->doc.tok[k].type == JSMN_STRING) {	/* its span has no quotes */
			sbuf v = SBUF_INIT;
			json_str(&it->doc, k, &v, NULL);
			json_quote(&b, sb_str(&v), v.len);
			sb_free(&v);
		} else {
			s = json_span(&it->doc, k, &n);
			sb_add(&b, s, n);
		}
		first = 0;
	}
	sb_addc(&b, '}');
	add_field(d, name, sb_str(&b));
	sb_free(&b);
}

char *
fig_num(double v, const char *key, char *buf)
{
	size_t n = strlen(key), len;
	int dec = 6;

	if (!isfinite(v)) {
		buf[0] = '\0';
		return buf;
	}
	if (fabs(v) >= 1e15)	/* past what fixed decimals print in 64 bytes */
		return num_json(v, buf);
	if ((n > 3 && strcmp(key + n - 3, "_us") == 0) || (n > 4 && strcmp(key + n - 4, "_pct") == 0))
		dec = 3;
	else if (n > 6 && strcmp(key + n - 6, "_ratio") == 0)
		dec = 5;
	snprintf(buf, 64, "%.*f", dec, v);
	len = strlen(buf);
	while (len > 0 && buf[len - 1] == '0')
		buf[--len] = '\0';
	if (len > 0 && buf[len - 1] == '.')
		buf[--len] = '\0';
	if (strcmp(buf, "-0") == 0)
		strcpy(buf, "0");
	return buf;
}

int
col_is_list(const char *key)
{
	return strcmp(key, "location") == 0 || strcmp(key, "cpu_op") == 0 ||
	    strcmp(key, "evidence") == 0 || strcmp(key, "current_locations") == 0 ||
	    strcmp(key, "candidate_path") == 0;
}

int
doc_col_has_short(const struct doc *d, const char *table, size_t c)
{
	size_t i, j, r;

	for (i = 0; i < d->nsecs; i++)
		for (j = 0; j < d->secs[i].ntabs; j++) {
			const struct tab *t = &d->secs[i].tabs[j];
			if (strcmp(t->id, table) != 0 || c >= t->ncols)
				continue;
			if (strcmp(t->cols[c].key, "kernel") == 0)
				return 1;
			for (r = 0; r < t->nrows; r++)
				if (t->cells[r * t->ncols + c].full)
					return 1;
		}
	return 0;
}

/* "Mapping traces" -> "mapping_traces": a label as a field name. */
static char *
field_name(const char *label)
{
	char *s = xstrdup(label), *p;

	for (p = s; *p; p++)
		*p = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') :
		    (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ? *p : '_';
	return s;
}

void
add_fact(struct doc *d, const char *key, const char *value)
{
	char *name = field_name(key);

	xgrow(&d->facts, &d->capfacts, d->nfacts + 1, sizeof *d->facts);
	d->facts[d->nfacts].key = xstrdup(key);
	d->facts[d->nfacts].value = xstrdup(value);
	d->nfacts++;
	/* a field given already (the figure rather than its phrase) stays */
	if (!find_field(d, name))
		add_field_str(d, name, value);
	free(name);
}

void
add_note(struct doc *d, const char *text)
{
	size_t i;

	for (i = 0; i < d->nnotes; i++)
		if (strcmp(d->notes[i], text) == 0)
			return;
	xgrow(&d->notes, &d->capnotes, d->nnotes + 1, sizeof *d->notes);
	d->notes[d->nnotes++] = xstrdup(text);
}

struct section *
add_section(struct doc *d, const char *id, const char *title)
{
	struct section *s;

	xgrow(&d->secs, &d->capsecs, d->nsecs + 1, sizeof *d->secs);
	s = &d->secs[d->nsecs++];
	memset(s, 0, sizeof *s);
	s->id = id;
	s->title = title;
	return s;
}

struct tab *
add_tab(struct section *s, const char *id, const char *stage, const struct col *cols,
    size_t ncols)
{
	struct tab *t;

	if (!is_table_id(id))
		die(EXIT_DATA, "internal error: table '%s' is not in table_ids", id);
	xgrow(&s->tabs, &s->captabs, s->ntabs + 1, sizeof *s->tabs);
	t = &s->tabs[s->ntabs++];
	memset(t, 0, sizeof *t);
	t->id = id;
	t->stage = stage ? xstrdup(stage) : NULL;
	t->cols = cols;
	t->ncols = ncols;
	return t;
}

/* A new row; its cells are filled with cell_text / cell_num in column order. */
struct cell *
add_row(struct tab *t)
{
	struct cell *c;

	xgrow(&t->cells, &t->caprows, (t->nrows + 1) * t->ncols, sizeof *t->cells);
	/* xgrow counts cells, so keep caprows in cells */
	c = &t->cells[t->nrows * t->ncols];
	memset(c, 0, t->ncols * sizeof *c);
	t->nrows++;
	return c;
}

void
row_fold(struct tab *t)
{
	size_t old = t->capfold;

	if (!t->nrows)
		return;
	xgrow(&t->fold, &t->capfold, t->nrows, sizeof *t->fold);
	if (t->capfold > old)
		memset(t->fold + old, 0, t->capfold - old);
	t->fold[t->nrows - 1] = 1;
}

int
row_folded(const struct tab *t, size_t r)
{
	return r < t->capfold && t->fold[r];
}

size_t
rows_shown(const struct tab *t)
{
	size_t r, n = 0;

	for (r = 0; r < t->nrows; r++)
		n += !row_folded(t, r);
	return n;
}

void
row_id(struct tab *t, const struct item *it)
{
	sbuf b = SBUF_INIT;
	const char *id = item_str(it, "id", &b, NULL);
	size_t i, old = t->caprowid;

	if (id && t->nrows) {
		xgrow(&t->rowid, &t->caprowid, t->nrows, sizeof *t->rowid);
		for (i = old; i < t->caprowid; i++)
			t->rowid[i] = NULL;
		t->rowid[t->nrows - 1] = xstrdup(id);
	}
	sb_free(&b);
}

void
cell_text(struct cell *c, const char *text)
{
	c->text = xstrdup(text ? text : "");
}

void
cell_none(struct cell *c)
{
	c->text = xstrdup("-");
	c->none = 1;
}

void
cell_str_member(struct cell *c, const struct item *it, const char *m)
{
	sbuf b = SBUF_INIT;

	if (item_get(it, m) < 0)
		cell_none(c);
	else
		cell_text(c, item_str(it, m, &b, ""));
	sb_free(&b);
}

/* A number shown as text (e.g. "1.23 ms") with its raw value. */
void
cell_num(struct cell *c, double v, const char *text)
{
	c->text = xstrdup(text);
	c->num = v;
	c->has_num = 1;
}

void
cell_ms(struct cell *c, double us)
{
	sbuf b = SBUF_INIT;

	fmt_ms(&b, us);
	cell_num(c, us, sb_str(&b));
	sb_free(&b);
}

void
cell_pct(struct cell *c, double pct)
{
	sbuf b = SBUF_INIT;

	fmt_pct(&b, pct);
	cell_num(c, pct, sb_str(&b));
	sb_free(&b);
}

void
cell_int(struct cell *c, long long v)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%lld", v);
	cell_num(c, (double)v, buf);
}

char *
printf_dup(const char *fmt, ...)
{
	va_list ap;
	sbuf b = SBUF_INIT;

	va_start(ap, fmt);
	sb_vprintf(&b, fmt, ap);
	va_end(ap);
	return sb_detach(&b);
}

/* Is the item a record of the type named `type` (known to the table or not)? */
int
item_is(const struct item *it, const char *type)
{
	int i = item_get(it, "type");

	return i >= 0 && json_str_eq(&it->doc, i, type, strlen(type));
}

int
has_type(const struct run *run, enum rec_type t)
{
	size_t i;

	for (i = 0; i < run->n; i++)
		if (run->it[i].type == t)
			return 1;
	return 0;
}

const struct item *
find_item(const struct run *run, enum rec_type t, const char *member, const char *value,
    const char *dflt)
{
	sbuf b = SBUF_INIT;
	const struct item *found = NULL;
	size_t i;

	for (i = 0; i < run->n && !found; i++)
		if (run->it[i].type == t &&
		    strcmp(item_str(&run->it[i], member, &b, dflt), value) == 0)
			found = &run->it[i];
	sb_free(&b);
	return found;
}

/* ---- the run's stages ---- */

/* The distinct stages of items of `type`, in report order (extend, decode, all, others). */
size_t
stages_of(const struct run *run, enum rec_type type, char ***out)
{
	char **v = NULL;
	size_t n = 0, cap = 0, i, j;
	sbuf b = SBUF_INIT;

	for (i = 0; i < run->n; i++) {
		const char *st;
		if (run->it[i].type != type)
			continue;
		st = item_str(&run->it[i], "stage", &b, "all");
		if (!*st)
			st = "all";
		for (j = 0; j < n && strcmp(v[j], st) != 0; j++)
			;
		if (j == n) {
			xgrow(&v, &cap, n + 1, sizeof *v);
			v[n++] = xstrdup(st);
		}
	}
	sb_free(&b);
	/* stable insertion sort by stage order */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && stage_index(v[j - 1]) > stage_index(v[j]); j--) {
			char *x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	*out = v;
	return n;
}

void
free_strings(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int
item_in_stage(const struct item *it, const char *stage, sbuf *b)
{
	const char *st = item_str(it, "stage", b, "all");

	return strcmp(*st ? st : "all", stage) == 0;
}

/*
 * A number member as a cell: ms for *_us, percent for *_pct, else an
 * integer, rounded when the member has a fraction (a rate: tokens/s) and
 * kept whole as the cell's number for the machine formats; "-" when absent.
 */
void
cell_member(struct cell *c, const struct item *it, const char *m)
{
	size_t n = strlen(m);
	double v;

	if (item_get(it, m) < 0) {
		cell_text(c, "-");
		return;
	}
	v = item_num(it, m, 0);
	if (n > 3 && strcmp(m + n - 3, "_us") == 0)
		cell_ms(c, v);
	else if (n > 4 && strcmp(m + n - 4, "_pct") == 0)
		cell_pct(c, v);
	else if (v == (double)(long long)v)
		cell_int(c, (long long)v);
	else {
		char buf[32];
		/* 67.57 tokens/s reads 68, where a cut made it 67 */
		snprintf(buf, sizeof buf, "%.0f", v);
		cell_num(c, v, buf);
	}
}

