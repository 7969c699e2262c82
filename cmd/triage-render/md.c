/*
 * The report as markdown for people and agents: a title, the header facts
 * as a list, a heading per section and per stage, tables with short names,
 * a totals line and what the bar left out, sentences instead of empty
 * tables, and a legend.
 */
#include <stdio.h>
#include <string.h>

#include "esc.h"
#include "render.h"
#include "rules.h"

static void
hashes(sbuf *out, int n)
{
	while (n-- > 0)
		sb_addc(out, '#');
	sb_addc(out, ' ');
}

/*
 * Text from the records -- names, paths, model ids, notes -- is escaped
 * wherever it is written, cells and lines alike: it shows as the text it
 * is, never as a heading, a quote, a link, an image or HTML (issue 27).
 * A cell's lines are joined with <br>.  line_start: the text begins a line.
 */
static void
md_text(sbuf *out, const char *s, int line_start)
{
	esc_md(s, strlen(s), line_start, out);
}

static void
md_cell(sbuf *out, const char *s)
{
	md_text(out, s, 0);
}

static void
md_table(sbuf *out, const struct tab *t)
{
	size_t r, c;

	if (t->nrows == 0) {
		md_text(out, t->empty ? t->empty : "No rows.", 1);
		sb_adds(out, "\n\n");
		return;
	}
	if (rows_shown(t) == 0) {	/* every row folded: its sentence alone */
		md_text(out, t->folded ? t->folded : t->empty ? t->empty : "No rows.", 1);
		sb_adds(out, "\n\n");
		return;
	}
	/* the columns of the view: --stats swaps the kernel table's (col_shown) */
	sb_adds(out, "|");
	for (c = 0; c < t->ncols; c++) {
		if (!col_shown(t, c))
			continue;
		sb_adds(out, " ");
		md_cell(out, t->cols[c].title);
		sb_adds(out, " |");
	}
	sb_adds(out, "\n|");
	for (c = 0; c < t->ncols; c++)
		if (col_shown(t, c))
			sb_adds(out, t->cols[c].num ? " ---: |" : " --- |");
	sb_addc(out, '\n');
	for (r = 0; r < t->nrows; r++) {
		if (row_folded(t, r))
			continue;
		sb_adds(out, "|");
		for (c = 0; c < t->ncols; c++) {
			if (!col_shown(t, c))
				continue;
			sb_addc(out, ' ');
			md_cell(out, t->cells[r * t->ncols + c].text);
			sb_adds(out, " |");
		}
		sb_addc(out, '\n');
	}
	sb_addc(out, '\n');
	if (t->folded) {
		md_text(out, t->folded, 1);
		sb_adds(out, "\n\n");
	}
}

void
md_legend(sbuf *out, int level)
{
	hashes(out, level + 1);
	sb_adds(out, "Legend\n\n");
	sb_adds(out,
	    "- **Share**: a kernel's GPU time over its stage's total, the sum of the stage's "
	    "kernel durations (kernels on different streams may overlap, so shares can add "
	    "up to more than the busy time); in the overlap table, over the stage's GPU busy "
	    "time in the formal trace (the union of its kernels' intervals), so one kernel's "
	    "two shares differ.\n"
	    "- **Overlap verdicts**: *headroom*: the kernel runs mostly exposed (no other "
	    "stream busy meanwhile), so overlapping it could hide it; *low-roi-hidden*: it is "
	    "already mostly hidden under other streams.\n"
	    "- **Priority**: P1 act (low dependency risk), P2 check dependencies first, P4 "
	    "and P5 skip (hidden, or under 1% of the stage).\n"
	    "- **Dep risk**: whether the neighbouring kernels on the same stream look "
	    "dependent on it: low, high or unclear.\n"
	    "- **Exclusive / Hidden**: the part of the kernel's time no other stream is busy, "
	    "and the part spent under another stream's work.\n"
	    "- **Confidence**: *Confirmed*: the separate kernels a fusion would replace take at "
	    "least the pattern's expected share; *Candidate*: they are there, below it.\n\n");
}

void
md_write(const struct doc *d, int level, sbuf *out)
{
	size_t i, j;

	hashes(out, level);
	sb_adds(out, "Triage report: ");
	md_text(out, d->title, 0);
	sb_adds(out, "\n\n");
	for (i = 0; i < d->nfacts; i++) {
		sb_adds(out, "- **");
		md_text(out, d->facts[i].key, 0);
		sb_adds(out, "**: ");
		md_cell(out, d->facts[i].value);
		sb_addc(out, '\n');
	}
	sb_addc(out, '\n');
	if (d->health) {
		sb_printf(out, "> **Trace health: %s.** ", d->verdict);
		md_text(out, d->health, 0);
		sb_adds(out, "\n\n");
	}
	for (i = 0; i < d->nnotes; i++) {
		sb_adds(out, "> Note: ");
		md_text(out, d->notes[i], 0);
		sb_adds(out, "\n\n");
	}
	for (i = 0; i < d->nsecs; i++) {
		const struct section *s = &d->secs[i];
		hashes(out, level + 1);
		md_text(out, s->title, 0);
		sb_adds(out, "\n\n");
		if (s->intro) {
			md_text(out, s->intro, 1);
			sb_adds(out, "\n\n");
		}
		for (j = 0; j < s->ntabs; j++) {
			const struct tab *t = &s->tabs[j];
			/* a stage's tables share its heading */
			if (t->stage && (j == 0 || !s->tabs[j - 1].stage ||
			    strcmp(s->tabs[j - 1].stage, t->stage) != 0)) {
				hashes(out, level + 2);
				md_text(out, stage_label(t->stage), 0);
				sb_adds(out, "\n\n");
			}
			if (t->headline) {
				sb_adds(out, "**");
				md_text(out, t->headline, 0);
				sb_adds(out, "**\n\n");
			}
			if (t->total) {
				md_text(out, t->total, 1);
				sb_adds(out, "\n\n");
			}
			md_table(out, t);
			if (t->more) {
				md_text(out, t->more, 1);
				sb_adds(out, "\n\n");
			}
		}
	}
}

void
md_table_of(const struct doc *d, sbuf *out)
{
	size_t i, j;

	for (i = 0; i < d->nsecs; i++) {
		const struct section *s = &d->secs[i];
		if (s->intro) {
			md_text(out, s->intro, 1);
			sb_adds(out, "\n\n");
		}
		for (j = 0; j < s->ntabs; j++)
			md_table(out, &s->tabs[j]);
	}
}
