/* The records of a run, kept whole for the report document. */
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "xalloc.h"

/*
 * The record types the report reads: the rows, the header's inputs and
 * notes, and the sections of the other filters.  The rest (kernels,
 * frames, ...) pass by unread and unkept.
 */
static int
wanted(rec_reader *r, enum rec_type t)
{
	static const char *const others[] = { "gpu_time", "step", "graph_escape", "health",
		"rank_row", "collective_row", "rank_kernel_delta", "rank_align", "rank_gap", "diff_row",
		"verdict", "probe", "diff_input", "diff_metric", "diff_fuse", "diff_overlap", NULL };
	const char *s;
	size_t n, i;

	if (t == RT_input || t == RT_trace || t == RT_kernel_row || t == RT_overlap_row ||
	    t == RT_fuse_row || t == RT_note)
		return 1;
	s = rec_type(r, &n);
	for (i = 0; others[i]; i++)
		if (strlen(others[i]) == n && memcmp(others[i], s, n) == 0)
			return 1;
	return 0;
}

static int
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * Cut member m (every duplicate) out of the kept record, its comma too,
 * and parse what is left: for members no report reads, since a trace of
 * a million distinct kernels keeps a million rows (issue 21).
 */
static void
drop_member(rec_reader *r, struct item *it, const char *m)
{
	int v;

	while ((v = json_get(&it->doc, 0, m)) > 0) {
		const jsmntok_t *kt = &it->doc.tok[v - 1], *vt = &it->doc.tok[v];
		char *l = it->line;
		size_t len = it->doc.len, from = (size_t)kt->start - 1, to = (size_t)vt->end, b;

		if (vt->type == JSMN_STRING)
			to++;	/* its closing quote */
		for (b = from; b > 0 && blank(l[b - 1]); b--)
			;
		if (b > 0 && l[b - 1] == ',') {
			from = b - 1;	/* not the first member: the comma before it goes */
		} else {
			while (to < len && blank(l[to]))
				to++;
			if (to < len && l[to] == ',')
				to++;	/* the first member: the comma after it goes */
		}
		memmove(l + from, l + to, len - to + 1);
		len -= to - from;
		it->line = l = xrealloc(l, len + 1);
		json_doc_free(&it->doc);
		/* a member and its comma cut from valid JSON leave valid JSON */
		if (json_parse(&it->doc, l, len) < 0)
			rec_die(r, "record is not a JSON object once its \"%s\" is cut out", m);
	}
}

void
run_add(struct run *run, rec_reader *r)
{
	enum rec_type t = rec_type_of(r);
	struct item *it;

	if (!wanted(r, t))
		return;
	if (t != RT_UNKNOWN) {
		/* the same checks every tool makes (triage-records(5)) */
		union {
			uint64_t has;
			char bytes[1024];
		} rec;
		rec_read(r, t, &rec);
	}
	xgrow(&run->it, &run->cap, run->n + 1, sizeof *run->it);
	it = &run->it[run->n++];
	memset(it, 0, sizeof *it);
	it->type = t;
	it->line = xstrndup(r->line, r->len);
	if (json_parse(&it->doc, it->line, r->len) < 0)
		rec_die(r, "record is not a JSON object");
	if (t == RT_kernel_row) {
		drop_member(r, it, "entry");
		/*
		 * A row the table does not show counts only in the stage's
		 * totals (time, share, launches, category): its names go, and
		 * a mangled kernel name can be a kilobyte.
		 */
		if (json_kind(&it->doc, item_get(it, "shown")) == JK_FALSE) {
			drop_member(r, it, "kernel");
			drop_member(r, it, "location");
			drop_member(r, it, "cpu_op");
		}
	}
	/* kept for the run: the tokens' spare room goes */
	if (it->doc.ntok > 0 && (unsigned)it->doc.ntok < it->doc.cap) {
		it->doc.tok = xreallocarray(it->doc.tok, (size_t)it->doc.ntok, sizeof *it->doc.tok);
		it->doc.cap = (unsigned)it->doc.ntok;
	}
}

void
run_free(struct run *run)
{
	size_t i;

	for (i = 0; i < run->n; i++) {
		free(run->it[i].line);
		json_doc_free(&run->it[i].doc);
	}
	free(run->it);
	free(run->label);
	memset(run, 0, sizeof *run);
}

int
item_get(const struct item *it, const char *m)
{
	return json_get(&it->doc, 0, m);
}

const char *
obj_str(const json_doc *d, int obj, const char *m, sbuf *buf, const char *dflt)
{
	int i = json_get(d, obj, m);

	sb_reset(buf);
	if (json_kind(d, i) != JK_STR) {
		sb_adds(buf, dflt ? dflt : "");
		return dflt ? sb_str(buf) : NULL;
	}
	json_str(d, i, buf, NULL);
	return sb_str(buf);
}

double
obj_num(const json_doc *d, int obj, const char *m, double dflt)
{
	int i = json_get(d, obj, m);
	double v;

	if ((json_kind(d, i) != JK_INT && json_kind(d, i) != JK_FLOAT) ||
	    !json_todouble(d, i, &v))
		return dflt;
	return v;
}

long long
obj_int(const json_doc *d, int obj, const char *m, long long dflt)
{
	int i = json_get(d, obj, m);
	long long v;

	if ((json_kind(d, i) != JK_INT && json_kind(d, i) != JK_FLOAT) ||
	    !json_coerce_int(d, i, &v))
		return dflt;
	return v;
}

const char *
item_str(const struct item *it, const char *m, sbuf *buf, const char *dflt)
{
	return obj_str(&it->doc, 0, m, buf, dflt);
}

double
item_num(const struct item *it, const char *m, double dflt)
{
	return obj_num(&it->doc, 0, m, dflt);
}

long long
item_int(const struct item *it, const char *m, long long dflt)
{
	return obj_int(&it->doc, 0, m, dflt);
}

int
item_bool(const struct item *it, const char *m)
{
	return json_kind(&it->doc, item_get(it, m)) == JK_TRUE;
}
