/*
 * triage-render internals.
 *
 * The records of a run are kept as they arrive (model.c), then turned into
 * one report document (doc.c): header facts, notes, and sections of
 * tables with named columns, each table per stage with its totals line,
 * what the bar left out, and a sentence when it is empty.  Every output
 * format writes that document: markdown (md.c), HTML (html.c), CSV/TSV of
 * one table (dsv.c) and one JSON document (jsondoc.c).  With --compat
 * reference, compat.c writes the reference analyzer's layout instead.
 *
 * Ownership: a doc owns every string in it (doc_free); items own their
 * lines.  Times are microseconds in records and numbers, milliseconds in
 * the cells people read (as the cell says).
 */
#ifndef RENDER_H
#define RENDER_H

#include <stddef.h>

#include "json.h"
#include "rec.h"
#include "sbuf.h"

enum { F_MD, F_JSON, F_JSONL, F_CSV, F_TSV, F_HTML };

/* ---- compat.c: the reference's layout ---- */

void compat_record(rec_reader *r);
void compat_report(int fmt, sbuf *out);

/* ---- model.c: the records of a run ---- */

struct item {
	enum rec_type type;	/* RT_UNKNOWN for types this renderer does not know */
	char *line;		/* the record (heap) */
	json_doc doc;		/* its tokens */
};

struct run {
	char *label;		/* bundles: the run's operand; NULL otherwise */
	struct item *it;
	size_t n, cap;
};

/* Keep the reader's current line in run (validated when its type is known). */
void run_add(struct run *run, rec_reader *r);
void run_free(struct run *run);

/* The value of member `m` of an item, by name: -1 when absent. */
int item_get(const struct item *it, const char *m);
/* The member as text (decoded), as a number, as an integer; defaults when absent. */
const char *item_str(const struct item *it, const char *m, sbuf *buf, const char *dflt);
double item_num(const struct item *it, const char *m, double dflt);
long long item_int(const struct item *it, const char *m, long long dflt);
int item_bool(const struct item *it, const char *m);

/* ---- names.c: short kernel names ---- */

/*
 * Short names for a table's kernel names: C++ symbols demangled, template
 * and argument lists elided, long names cut in the middle, each short name
 * unique among names[0..n) (a clash keeps more of the names).  out[i] is a
 * heap string for names[i].
 */
void short_names(const char *const *names, size_t n, char **out);
extern int names_full;		/* --names full: no shortening */
/* One name shortened on its own (no uniqueness across a table); heap. */
char *short_name(const char *name);

/* ---- doc.c: the report document ---- */

struct col {
	const char *key;	/* machine name (CSV header, JSON member) */
	const char *title;	/* what people read */
	int num;		/* a number: right-aligned, sortable as one */
};

struct cell {
	char *text;		/* as people read it */
	char *full;		/* the whole text when text is shortened, else NULL */
	double num;		/* the number behind a numeric cell (raw unit of the column) */
	int has_num;
};

struct tab {
	const char *id;		/* kernel, overlap, fuse, fuse_in_use, gpu, step, escape, ... */
	char *stage;		/* NULL when the table is not per stage */
	const struct col *cols;
	size_t ncols;
	struct cell *cells;	/* nrows * ncols */
	size_t nrows, caprows;
	char *headline;		/* one line saying what dominates, or NULL */
	char *total;		/* the totals line, or NULL */
	char *more;		/* what the bar or a limit left out, or NULL */
	char *empty;		/* the sentence shown when nrows == 0 */
};

struct section {
	const char *id;		/* kernels, overlap, fuse, gpu, health, ranks, ... */
	const char *title;
	char *intro;		/* a sentence before the tables, or NULL */
	struct tab *tabs;
	size_t ntabs, captabs;
};

struct fact {
	char *key, *value;
};

/* Per stage, for charts: GPU time by category, idle time, step durations. */
struct stagechart {
	char *stage;
	char **cat;
	double *cat_us;
	size_t ncat;
	double idle_us;		/* < 0: unknown */
	double *step_us;
	size_t nstep;
};

struct doc {
	char *title;
	struct fact *facts;
	size_t nfacts, capfacts;
	char **notes;
	size_t nnotes, capnotes;
	char *health;		/* the banner: verdict and failing checks, or NULL */
	struct section *secs;
	size_t nsecs, capsecs;
	struct stagechart *charts;
	size_t ncharts;
	char *model, *framework;	/* for bundles: grouping keys */
};

void doc_build(const struct run *run, struct doc *d);
void doc_free(struct doc *d);

/*
 * Building blocks of a document, for the views outside doc.c.  Strings are
 * copied; a new table's or row's cells are filled in column order with
 * the doc_cell_* functions (numbers keep their raw value for the machine
 * formats: microseconds, percent, counts); a note equal to an earlier one
 * is not repeated.
 */
void doc_fact(struct doc *d, const char *key, const char *value);
void doc_note(struct doc *d, const char *text);
struct section *doc_section(struct doc *d, const char *id, const char *title);
struct tab *doc_tab(struct section *s, const char *id, const char *stage,
    const struct col *cols, size_t ncols);
struct cell *doc_row(struct tab *t);
void doc_cell_text(struct cell *c, const char *text);
void doc_cell_num(struct cell *c, double v, const char *text);
void doc_cell_ms(struct cell *c, double us);		/* "1.23 ms" */
void doc_cell_pct(struct cell *c, double pct);		/* "12.3%" */
void doc_cell_int(struct cell *c, long long v);

/* ---- diff.c: the view of trace-diff's records (issue 17) ---- */

/*
 * When the run holds trace-diff records, build d (zeroed by the caller) as
 * the comparison of two runs and return 1; else return 0 and leave d.
 */
int diff_build(const struct run *run, struct doc *d);
/* Is d a diff (it has the diff table)?  Its legend is in its section intros. */
int doc_is_diff(const struct doc *d);
/* The table csv/tsv writes without --table: "diff" for a diff, else "kernel". */
const char *doc_default_table(const struct doc *d);

/* Formatting helpers shared by the writers. */
void fmt_ms(sbuf *out, double us);	/* "1.23 ms" */
void fmt_pct(sbuf *out, double pct);	/* "12.3%" */

/* ---- the writers ---- */

void md_write(const struct doc *d, int level, sbuf *out);	/* level: "#" of the title */
void md_legend(sbuf *out, int level);
void html_write(const struct doc *const *docs, size_t n, const char *title, sbuf *out);
/*
 * One table as CSV (sep ',') or TSV: a header of column keys, the stage
 * as the first column.  Returns 0, or -1 when the doc has no such table.
 */
int dsv_write(const struct doc *d, const char *table, char sep, sbuf *out);
void jsondoc_write(const struct doc *const *docs, size_t n, sbuf *out);

/* The table ids a doc has, for --output DIR/ (one file each). */
size_t doc_table_ids(const struct doc *d, const char **ids, size_t max);

#endif
