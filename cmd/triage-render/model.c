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
	static const char *const others[] = { "gpu_time", "step", "graph_escape", "launch_delay",
		"stream_time", "annotation_time", "kernel_delay", "health",
		"rank_row", "collective_row", "rank_kernel_delta", "rank_align", "rank_gap", "diff_row",
		"verdict", "probe", "diff_input", "diff_metric", "diff_fuse", "diff_overlap", NULL };
	const char *s;
	size_t n, i;

	if (t == RT_input || t == RT_trace || t == RT_kernel_row || t == RT_overlap_row ||
	    t == RT_fuse_row || t == RT_note || t == RT_device || t == RT_gpu_pids ||
	    t == RT_kernel_eff || t == RT_roofline)
		return 1;
	s = rec_type(r, &n);
	for (i = 0; others[i]; i++)
		if (strlen(others[i]) == n && memcmp(others[i], s, n) == 0)
			return 1;
	return 0;
}

/*
 * Members no report reads, left out of the kept copy of a record: a trace
 * of a million distinct kernels keeps a million rows (issue 21).  A
 * kernel_row's "entry" is its kernel's whole site payload; a row the table
 * does not show (`hidden`) counts only in its stage's totals (time, share,
 * launches, category), so its names go too, and a mangled kernel name can
 * be a kilobyte.
 */
static int
left_out(const json_doc *d, int key, int hidden)
{
	return json_str_eq(d, key, "entry", 5) || (hidden && (json_str_eq(d, key, "kernel", 6) ||
	    json_str_eq(d, key, "location", 8) || json_str_eq(d, key, "cpu_op", 6)));
}

/*
 * The object at token 0 of d without the members left_out names, into
 * out; returns how many were left out (0: out is not written).
 */
static int
kept_text(const json_doc *d, int hidden, sbuf *out)
{
	int n = d->tok[0].size, i, k, dropped = 0, first = 1;

	for (k = 0, i = 1; k < n; k++, i = json_skip(d, i + 1))
		dropped += left_out(d, i, hidden);
	if (!dropped)
		return 0;
	sb_reset(out);
	sb_addc(out, '{');
	for (k = 0, i = 1; k < n; k++, i = json_skip(d, i + 1)) {
		const jsmntok_t *kt = &d->tok[i], *vt = &d->tok[i + 1];
		size_t from = (size_t)kt->start - 1, to = (size_t)vt->end + (vt->type == JSMN_STRING);
		if (left_out(d, i, hidden))
			continue;
		if (!first)
			sb_addc(out, ',');
		sb_add(out, d->js + from, to - from);	/* "key": value, as written */
		first = 0;
	}
	sb_addc(out, '}');
	return dropped;
}

/* Every record is parsed here first, its kept copy then sized exactly. */
static json_doc scratch;
static sbuf kept;

void
run_add(struct run *run, rec_reader *r)
{
	enum rec_type t = rec_type_of(r);
	struct item *it;
	const char *text = r->line;
	size_t len = r->len;

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
	if (json_parse(&scratch, text, len) < 0 || scratch.tok[0].type != JSMN_OBJECT)
		rec_die(r, "record is not a JSON object");
	if (t == RT_kernel_row &&
	    kept_text(&scratch, json_kind(&scratch, json_get(&scratch, 0, "shown")) == JK_FALSE,
	    &kept)) {
		text = kept.s;
		len = kept.len;
		/* members cut from valid JSON leave valid JSON */
		if (json_parse(&scratch, text, len) < 0)
			rec_die(r, "record is not a JSON object once unread members are cut out");
	}
	xgrow(&run->it, &run->cap, run->n + 1, sizeof *run->it);
	it = &run->it[run->n++];
	memset(it, 0, sizeof *it);
	it->type = t;
	it->line = xstrndup(text, len);
	it->doc = scratch;
	it->doc.js = it->line;
	it->doc.tok = xmallocarray((size_t)scratch.ntok, sizeof *scratch.tok);
	memcpy(it->doc.tok, scratch.tok, (size_t)scratch.ntok * sizeof *scratch.tok);
	it->doc.cap = (unsigned)scratch.ntok;
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
	json_doc_free(&scratch);
	sb_free(&kept);
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
