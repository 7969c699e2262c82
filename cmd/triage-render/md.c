/*
 * The report as markdown for people and agents: a title, the header facts
 * as a list, a heading per section and per stage, tables with short names,
 * a totals line and what the bar left out, sentences instead of empty
 * tables, and a legend.
 */
#include <stdio.h>
#include <string.h>

#include "render.h"
#include "rules.h"
#include "text.h"

static void
hashes(sbuf *out, int n)
{
	while (n-- > 0)
		sb_addc(out, '#');
	sb_addc(out, ' ');
}

/* A cell: markdown-escaped, its lines joined with <br>. */
static void
md_cell(sbuf *out, const char *s)
{
	const char *p = s, *nl;

	for (;;) {
		nl = strchr(p, '\n');
		text_md_escape(p, nl ? (size_t)(nl - p) : strlen(p), out);
		if (!nl)
			break;
		sb_adds(out, "<br>");
		p = nl + 1;
	}
}

static void
md_table(sbuf *out, const struct tab *t)
{
	size_t r, c;

	if (t->nrows == 0) {
		sb_printf(out, "%s\n\n", t->empty ? t->empty : "No rows.");
		return;
	}
	sb_adds(out, "|");
	for (c = 0; c < t->ncols; c++)
		sb_printf(out, " %s |", t->cols[c].title);
	sb_adds(out, "\n|");
	for (c = 0; c < t->ncols; c++)
		sb_adds(out, t->cols[c].num ? " ---: |" : " --- |");
	sb_addc(out, '\n');
	for (r = 0; r < t->nrows; r++) {
		sb_adds(out, "|");
		for (c = 0; c < t->ncols; c++) {
			sb_addc(out, ' ');
			md_cell(out, t->cells[r * t->ncols + c].text);
			sb_adds(out, " |");
		}
		sb_addc(out, '\n');
	}
	sb_addc(out, '\n');
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
	sb_printf(out, "Triage report: %s\n\n", d->title);
	for (i = 0; i < d->nfacts; i++) {
		sb_printf(out, "- **%s**: ", d->facts[i].key);
		md_cell(out, d->facts[i].value);
		sb_addc(out, '\n');
	}
	sb_addc(out, '\n');
	if (d->health)
		sb_printf(out, "> **Trace health: %s.** %s\n\n", d->verdict, d->health);
	for (i = 0; i < d->nnotes; i++)
		sb_printf(out, "> Note: %s\n\n", d->notes[i]);
	for (i = 0; i < d->nsecs; i++) {
		const struct section *s = &d->secs[i];
		hashes(out, level + 1);
		sb_printf(out, "%s\n\n", s->title);
		if (s->intro)
			sb_printf(out, "%s\n\n", s->intro);
		for (j = 0; j < s->ntabs; j++) {
			const struct tab *t = &s->tabs[j];
			/* a stage's tables share its heading */
			if (t->stage && (j == 0 || !s->tabs[j - 1].stage ||
			    strcmp(s->tabs[j - 1].stage, t->stage) != 0)) {
				hashes(out, level + 2);
				sb_printf(out, "%s\n\n", stage_label(t->stage));
			}
			if (t->headline)
				sb_printf(out, "**%s**\n\n", t->headline);
			if (t->total)
				sb_printf(out, "%s\n\n", t->total);
			md_table(out, t);
			if (t->more)
				sb_printf(out, "%s\n\n", t->more);
		}
	}
}
