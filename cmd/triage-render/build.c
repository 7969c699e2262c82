/*
 * The building blocks of a report document (render.h): facts, notes,
 * sections, tables, rows and cells, and lookups over a run's items that
 * every section file uses.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "rules.h"
#include "xalloc.h"

void
add_fact(struct doc *d, const char *key, const char *value)
{
	xgrow(&d->facts, &d->capfacts, d->nfacts + 1, sizeof *d->facts);
	d->facts[d->nfacts].key = xstrdup(key);
	d->facts[d->nfacts].value = xstrdup(value);
	d->nfacts++;
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

/* A number member as a cell: ms for *_us, percent for *_pct, else an integer; "-" when absent. */
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
	else
		cell_int(c, (long long)v);
}

