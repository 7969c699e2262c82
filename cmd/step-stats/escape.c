/*
 * Graph escapes: the eager kernels of graph-mode stages, grouped by
 * canonical name, queued until the end of the stream so that kernel-map's
 * kernel_row records (written after the last trace) can lend their
 * Python location.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imap.h"
#include "rec.h"
#include "sbuf.h"
#include "ss.h"
#include "text.h"
#include "xalloc.h"

struct erow {
	long long t;
	uint32_t stage, kernel;	/* ids in esc.str */
	long long launches;
	double total_us, share_pct;
};

static struct {
	strtab *str;		/* stages, kernel names, row keys and locations */
	uint32_t *loc;		/* row key id -> location id, NOSTR when none */
	size_t nloc;
	struct erow *row;
	size_t nrow, caprow;
	sbuf key;
} esc;

static void
esc_init(void)
{
	if (!esc.str)
		esc.str = strtab_new();
}

/* The (t, stage, kernel) key: NUL-separated so no text can collide. */
static uint32_t
row_key(long long t, const char *stage, size_t ns, const char *kernel, size_t nk, int add)
{
	sb_reset(&esc.key);
	sb_printf(&esc.key, "%lld", t);
	sb_addc(&esc.key, '\0');
	sb_add(&esc.key, stage, ns);
	sb_addc(&esc.key, '\0');
	sb_add(&esc.key, kernel, nk);
	if (!add)
		return strtab_find(esc.str, esc.key.s, esc.key.len);
	return strtab_intern(esc.str, esc.key.s, esc.key.len);
}

void
escape_note_row(long long t, struct rstr stage, struct rstr kernel, struct rstr location)
{
	uint32_t k, l;
	size_t cap;

	esc_init();
	k = row_key(t, stage.s, stage.n, kernel.s, kernel.n, 1);
	if (k >= esc.nloc) {
		cap = esc.nloc;
		xgrow(&esc.loc, &cap, (size_t)k + 1, sizeof *esc.loc);
		while (esc.nloc < cap)
			esc.loc[esc.nloc++] = NOSTR;
	}
	if (esc.loc[k] != NOSTR)
		return;
	l = strtab_intern(esc.str, location.s ? location.s : "", location.n);
	/* interning the location may have given it an id past the array: harmless */
	esc.loc[k] = l;
}

static int
erow_cmp(const void *pa, const void *pb)
{
	const struct erow *a = pa, *b = pb;

	if (a->total_us != b->total_us)
		return a->total_us > b->total_us ? -1 : 1;
	return strcmp(strtab_str(esc.str, a->kernel), strtab_str(esc.str, b->kernel));
}

/* One stage's eager kernels by canonical name (the reader's ids), first-seen order. */
struct escrows {
	imap by_name;		/* canonical id -> index into rows */
	struct { uint32_t canon; long long launches; double total_us; } *rows;
	size_t n, cap;
};

struct escrows *
escape_new(void)
{
	return xcalloc(1, sizeof(struct escrows));
}

void
escape_item(struct escrows *e, const struct item *x)
{
	int isnew;
	uint64_t *v;

	if (!x->kernel || x->graph)
		return;
	v = imap_insert(&e->by_name, x->canon, e->n, &isnew);
	if (isnew) {
		xgrow(&e->rows, &e->cap, e->n + 1, sizeof *e->rows);
		e->rows[e->n].canon = x->canon;
		e->rows[e->n].launches = 0;
		e->rows[e->n].total_us = 0;
		e->n++;
	}
	e->rows[*v].launches++;
	e->rows[*v].total_us += x->dur;
}

void
escape_drop(struct escrows *e)
{
	if (!e)
		return;
	imap_free(&e->by_name);
	free(e->rows);
	free(e);
}

void
escape_add(struct escrows *e, struct trace_reader *r, long long t, uint32_t stage,
    double kernel_us)
{
	const char *st = strtab_str(r->str, stage);
	size_t i, first;
	uint32_t sid;

	esc_init();
	sid = strtab_intern(esc.str, st, strlen(st));
	first = esc.nrow;
	for (i = 0; i < e->n; i++) {
		/* the row's canonical name, in the rows' own table */
		uint32_t cid = strtab_intern(esc.str, strtab_str(r->str, e->rows[i].canon),
		    strtab_len(r->str, e->rows[i].canon));
		xgrow(&esc.row, &esc.caprow, esc.nrow + 1, sizeof *esc.row);
		esc.row[esc.nrow++] = (struct erow){ t, sid, cid, e->rows[i].launches,
		    e->rows[i].total_us, 0 };
	}
	for (i = first; i < esc.nrow; i++)
		esc.row[i].share_pct = kernel_us > 0 ? 100.0 * esc.row[i].total_us / kernel_us : 0;
	xqsort(esc.row + first, esc.nrow - first, sizeof *esc.row, erow_cmp);
	escape_drop(e);
}

void
escape_flush(void)
{
	size_t i;

	for (i = 0; i < esc.nrow; i++) {
		const struct erow *e = &esc.row[i];
		const char *st = strtab_str(esc.str, e->stage), *k = strtab_str(esc.str, e->kernel);
		uint32_t key = row_key(e->t, st, strlen(st), k, strlen(k), 0);
		rec_begin(RT_graph_escape);
		rec_int(RM_graph_escape_t, e->t);
		rec_cstr(RM_graph_escape_stage, st);
		rec_cstr(RM_graph_escape_kernel, k);
		rec_int(RM_graph_escape_launches, e->launches);
		rec_num(RM_graph_escape_total_us, e->total_us);
		rec_num(RM_graph_escape_share_pct, e->share_pct);
		if (key != NOSTR && key < esc.nloc && esc.loc[key] != NOSTR)
			rec_cstr(RM_graph_escape_location, strtab_str(esc.str, esc.loc[key]));
		rec_id(RM_graph_escape_id, "escape", (long long)i + 1);
		rec_end();
	}
	free(esc.row);
	free(esc.loc);
	sb_free(&esc.key);
	strtab_free(esc.str);
	memset(&esc, 0, sizeof esc);
}
