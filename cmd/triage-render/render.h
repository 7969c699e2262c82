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
/* The same for member m of the object at token obj of d (a record's nested objects). */
const char *obj_str(const json_doc *d, int obj, const char *m, sbuf *buf, const char *dflt);
double obj_num(const json_doc *d, int obj, const char *m, double dflt);
long long obj_int(const json_doc *d, int obj, const char *m, long long dflt);

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

/*
 * A column.  key is the figure's one name: the record member it comes
 * from (triage-records(5)), the CSV header and the JSON member alike
 * (issue 31).
 */
struct col {
	const char *key;	/* machine name (CSV header, JSON member) */
	const char *title;	/* what people read */
	int num;		/* a number: right-aligned, sortable as one */
};

/*
 * Is column `key` a list, several values a cell, one a line (Python
 * sites, CPU ops, evidence)?  JSON writes its cells as arrays, CSV and
 * TSV join the values with "; ".
 */
int col_is_list(const char *key);

/*
 * Column sets (issue 31): the kernel table's duration statistics per
 * launch (mean_us, min_us, max_us, p50_us, p90_us) are in the machine
 * formats always, in markdown only with --stats (in place of the Python
 * location and CPU op), in HTML on the GPU time's hover; the GPU table's
 * copies (of its GPU items) are the machine formats' alone.  col_shown: does
 * markdown (and HTML's table) show column c of t?  col_is_stat: is it one
 * of the statistics?
 */
struct tab;
struct doc;
extern int stats_view;		/* --stats */
int col_shown(const struct tab *t, size_t c);
int col_is_stat(const struct tab *t, size_t c);

/*
 * The table ids a report may have, for --table (checked before the
 * records are read) and for add_tab, which refuses others (an internal
 * error: a new table is named here first).  NULL-terminated.
 */
extern const char *const table_ids[];
int is_table_id(const char *id);

struct cell {
	char *text;		/* as people read it */
	char *full;		/* the whole text when text is shortened, else NULL */
	double num;		/* the number behind a numeric cell (raw unit of the column) */
	int has_num;
	int none;		/* a text the run does not have: "-", null in JSON, empty in CSV */
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
	char **rowid;		/* per row, its record's id (issue 29) or NULL; NULL: none */
	size_t caprowid;
	/*
	 * Rows people need not read (issue 31): the health checks that
	 * passed, a straggler's kernels when their excess is negligible.
	 * md and html leave them out and show `folded` in their place (after
	 * the rows they show, or alone when none is left); json, csv and tsv
	 * keep every row, for machines.  fold: per row, 1 to leave out (NULL:
	 * none; capfold rows allocated).
	 */
	unsigned char *fold;
	size_t capfold;
	char *folded;		/* "13 other checks passed.", or NULL */
};

struct section {
	const char *id;		/* kernels, overlap, fuse, gpu, health, ranks, ... */
	const char *title;
	char *intro;		/* a sentence before the tables, or NULL */
	struct tab *tabs;
	size_t ntabs, captabs;
};

/*
 * A header fact as people read it (label and text, md and HTML), and a
 * field of the JSON document's "facts" object (name and JSON value; issue
 * 31).  add_fact makes both, the field named after the label in
 * snake_case with the text as a string; add_field adds or replaces a
 * field alone (e.g. framework "sglang" beside the label's
 * "SGLang (from the trace: ...)").
 */
struct fact {
	char *key, *value;
};

struct field {
	char *name, *json;
};

/*
 * A chart of the HTML page (charts.c, issue 31): drawn by the page's
 * script before the table `tab` of stage `stage`, from `spec`, a JSON
 * object the section that made it wrote:
 *   kind    "hbar" (horizontal bars, a row each) or "vbar" (vertical bars
 *           along an x axis, e.g. the steps)
 *   cls     the class of the bars (tests count them)
 *   title   what the chart shows; axis, xaxis: the axes' labels, units
 *           included ("GPU time (ms)")
 *   names   the name of each value of a row (a series)
 *   legend  [{name, color}]; color a category or a series key
 *   stacked a row's values one after another rather than side by side
 *   rows    [{label, full (hover), v: [microseconds, or null], c: [colors]}]
 */
struct chart {
	const char *tab;	/* the table it goes before: its id (static) */
	char *stage;		/* and stage, or NULL */
	char *spec;		/* JSON (heap) */
};

/* Add a chart; spec is taken (heap JSON). */
void add_chart(struct doc *d, const char *tab, const char *stage, char *spec);
/* The page's charts of a run's sections (charts.c): stages, steps, ranks. */
void doc_charts(const struct run *run, struct doc *d);
/* The column of t named key, or -1. */
int tab_col(const struct tab *t, const char *key);
/* JSON text helpers for specs: a quoted string, a number or null. */
void spec_str(sbuf *out, const char *s);
void spec_num(sbuf *out, double v);

struct doc {
	char *title;
	struct fact *facts;
	size_t nfacts, capfacts;
	struct field *fields;
	size_t nfields, capfields;
	char **notes;
	size_t nnotes, capnotes;
	const char *verdict;	/* trace-health's worst verdict (ok, degraded, unusable), or NULL */
	char *health;		/* the banner's text: what failed, or that all passed */
	struct section *secs;
	size_t nsecs, capsecs;
	struct chart *charts;
	size_t ncharts, capcharts;
	char *model, *framework;	/* for bundles: grouping keys */
	char *family;		/* the model family the frames show, when no model is named */
};

void doc_build(const struct run *run, struct doc *d);
void doc_free(struct doc *d);

/*
 * ---- build.c: building blocks for the section files ----
 *
 * Every string argument is copied; the doc owns what is added to it.
 * Sections and tables are returned for filling and stay valid until the
 * next add_section / add_tab on the same parent (they live in arrays).
 */
void add_fact(struct doc *d, const char *key, const char *value);
/* A field of the JSON facts: json is JSON text (copied); a field of that name is replaced. */
void add_field(struct doc *d, const char *name, const char *json);
void add_field_str(struct doc *d, const char *name, const char *text);	/* a JSON string */
/* A field of an object of the item's members named in members (NULL-terminated), as they are. */
void add_field_members(struct doc *d, const char *name, const struct item *it,
    const char *const *members);
void add_note(struct doc *d, const char *text);	/* a text already noted is not repeated */
struct section *add_section(struct doc *d, const char *id, const char *title);
/* cols is not copied: a static table of columns. stage NULL: not per stage. */
struct tab *add_tab(struct section *s, const char *id, const char *stage,
    const struct col *cols, size_t ncols);
/* A new row of t->ncols empty cells, to be filled in column order. */
struct cell *add_row(struct tab *t);
/*
 * Give the table's last row the id of the record it shows (its "id"
 * member, triage-records(5)), the id trace-annotate's findings carry
 * (issue 29); nothing when the record has none.
 */
void row_id(struct tab *t, const struct item *it);
/* Leave the table's last row out of md and html (struct tab, fold). */
void row_fold(struct tab *t);
/* Is row r folded?  How many rows do md and html show? */
int row_folded(const struct tab *t, size_t r);
size_t rows_shown(const struct tab *t);
void cell_text(struct cell *c, const char *text);	/* NULL: "" */
void cell_none(struct cell *c);	/* no value: "-" for people, none for machines */
/* Member m of it as a text cell; cell_none when absent. */
void cell_str_member(struct cell *c, const struct item *it, const char *m);
void cell_num(struct cell *c, double v, const char *text);	/* text shown, v behind it */
void cell_ms(struct cell *c, double us);	/* fmt_ms's text, us behind it */
void cell_pct(struct cell *c, double pct);	/* "12.3%" */
void cell_int(struct cell *c, long long v);
/*
 * A number member of a record as a cell: milliseconds for members named
 * *_us, percent for *_pct, else an integer; "-" when the member is absent.
 */
void cell_member(struct cell *c, const struct item *it, const char *m);
/* printf into a new heap string. */
char *printf_dup(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Is the item a record of the type named `type` (known to the table or not)? */
int item_is(const struct item *it, const char *type);
/* Does the run hold a record of type t? */
int has_type(const struct run *run, enum rec_type t);
/*
 * The first item of type t whose string member `member` (dflt when absent)
 * is `value`, or NULL.
 */
const struct item *find_item(const struct run *run, enum rec_type t, const char *member,
    const char *value, const char *dflt);
/*
 * The distinct stages of the items of `type`, in report order (extend,
 * decode, all, then others as met; a missing stage is "all").  *out is a
 * heap array of heap strings (free_strings); returns how many.
 */
size_t stages_of(const struct run *run, enum rec_type type, char ***out);
/*
 * The distinct ranks of the run's rank_row records (rank-skew), in first-seen
 * order: at most max into seen; returns how many, *more the distinct ranks
 * past max (counted once per record then, so a bound).
 */
size_t ranks_seen(const struct run *run, long long *seen, size_t max, int *more);
void free_strings(char **v, size_t n);
/* Is the item's stage (default "all") `stage`?  b is scratch. */
int item_in_stage(const struct item *it, const char *stage, sbuf *b);

/*
 * ---- breakdown.c: the GPU-time section's breakdowns (issue 32) ----
 *
 * Each adds its table of the stage to sec when the run holds its records
 * (step-stats' launch_delay, stream_time, annotation_time), else nothing.
 */
void launch_tab(const struct run *run, struct section *sec, const char *stage);
void stream_tab(const struct run *run, struct section *sec, const char *stage);
void annotation_tab(const struct run *run, struct section *sec, const char *stage);
/*
 * The kernel table's launch-delay cells (p50, max) of a kernel_row item:
 * its kernel_delay record's, joined on trace, stage and kernel; "-" when
 * it has none.
 */
void delay_cells(const struct run *run, const struct item *row, struct cell *p50,
    struct cell *max);
/* A delay in microseconds: "3.0 us" under a millisecond, else "1.23 ms". */
void fmt_delay(sbuf *out, double us);

/* ---- health.c, ranks.c: the sections of trace-health and rank-skew ---- */

/* The health banner (d->health) and the "Trace health" section. */
void health_section(const struct run *run, struct doc *d);
/* The "Ranks" section: per-rank times, stragglers, collectives, kernel deltas. */
void ranks_section(const struct run *run, struct doc *d);
/*
 * roofline.c: kernel-roofline's records (issue 28).  roofline_present: the
 * run has a roofline to show (modeled kernels, or ops with shapes but no
 * model).  roofline_cells fills the kernel table's four efficiency cells
 * (TFLOP/s, GB/s, % of roof, bound) of a stage's kernel; roofline_section
 * adds the Roofline section; roofline_chart adds the stage's HTML
 * roofline chart (kind "roof": bw, peaks, pts) before its Roofline table.
 */
int roofline_present(const struct run *run);
void roofline_cells(const struct run *run, const char *stage, const char *kernel,
    struct cell *c);
void roofline_section(const struct run *run, struct doc *d);
void roofline_chart(const struct run *run, const char *stage, struct doc *d);

/* probe.c: the "Probe requests" fact of a live capture's probe records. */
void probe_fact(const struct run *run, struct doc *d);

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

/*
 * A figure of column `key` as the machine formats write it (CSV, TSV, the
 * JSON document; issue 31): rounded to the precision the figure has --
 * microseconds (*_us) to 3 decimals, the nanoseconds of the trace;
 * percentages (*_pct) to 3 decimals; ratios (*_ratio) to 5; other numbers
 * to 6 -- without trailing zeros, so 29461.400999999998 is "29461.401"
 * and 120.0 is "120".  A value that is not finite is "" (JSON: null).
 * buf: 64 bytes; returns buf.
 */
char *fig_num(double v, const char *key, char *buf);
/*
 * Does column c of the doc's tables `table` carry a <key>_short companion
 * in the machine formats (the shortened text beside the whole one)?
 * Kernel names always; another column when any of its cells, in any
 * stage, was shortened -- so that every row of the table has the same
 * columns (issue 31).
 */
int doc_col_has_short(const struct doc *d, const char *table, size_t c);

/* Formatting helpers shared by the writers. */
/*
 * us microseconds as milliseconds: "1.23 ms"; a time that is not zero but
 * would print as "0.00 ms" is "<0.01 ms" ("-<0.01 ms" below zero).
 * --compat reference prints the reference's "%.2f ms" (compat.c).
 */
void fmt_ms(sbuf *out, double us);
void fmt_pct(sbuf *out, double pct);	/* "12.3%" */

/* ---- the writers ---- */

void md_write(const struct doc *d, int level, sbuf *out);	/* level: "#" of the title */
void md_legend(sbuf *out, int level);
/* summary: a bundle's summary of its runs (bundle.c), or NULL. */
void html_write(const struct doc *const *docs, size_t n, const struct doc *summary,
    const char *title, sbuf *out);
/*
 * One table as CSV (sep ',') or TSV: a header of column keys, the stage
 * as the first column.  Returns 0, or -1 when the doc has no such table.
 */
int dsv_write(const struct doc *d, const char *table, char sep, sbuf *out);
/*
 * Why the doc's table has no rows (its first part's "empty" text: "The
 * overlap table needs two traces ..."), or NULL when it has rows, no such
 * text, or no such table: a CSV of a bare header says nothing by itself.
 */
const char *dsv_empty_reason(const struct doc *d, const char *table);
/*
 * A bundle's runs dp[0..n) as one table: a "run" column (each doc's title,
 * the run's label), the stage, then the union of the runs' columns in the
 * order they first appear, empty where a run lacks one.  Returns how many
 * runs have the table (0: nothing written).
 */
size_t dsv_write_bundle(struct doc *const *dp, size_t n, const char *table, char sep, sbuf *out);
/*
 * The text raw as one cell of CSV (sep ',') or TSV (sep '\t'), appended
 * to out; compat.c's CSV and TSV too.  CSV keeps the cell's tabs, LF and
 * CR, and quotes a cell holding a comma, a double quote, CR or LF as RFC
 * 4180 says (its quotes doubled); TSV has no quoting, so a tab, LF and CR
 * show as "\x09", "\x0a", "\x0d".  Other control characters are shown
 * as esc_ctrl shows them in both, and a cell that, as written, a
 * spreadsheet would read as a formula (esc_is_formula) gets a leading
 * "'" unless --raw-cells (issue 27).
 */
void dsv_field(sbuf *out, const char *raw, char sep);
extern int raw_cells;		/* --raw-cells: no "'" before formula-like cells */
void jsondoc_write(const struct doc *const *docs, size_t n, const struct doc *summary, sbuf *out);

/*
 * ---- bundle.c: a bundle's summary (issue 31) ----
 * One row per run (model, framework, GPU, GPU time per stage, step
 * median, health) and its chart, from the runs' records and documents;
 * docs[i] is the document of runs[i].
 */
void bundle_summary(const struct run *runs, const struct doc *const *docs, size_t n,
    struct doc *out);
/* The summary's table in markdown (after the bundle's contents). */
void md_table_of(const struct doc *d, sbuf *out);

/* The table ids a doc has, for --output DIR/ (one file each). */
size_t doc_table_ids(const struct doc *d, const char **ids, size_t max);

#endif
