/*
 * The report exactly as the reference analyzer lays it out
 * (--compat reference): header lines and the Kernel, Overlap Opportunity
 * and Fuse Opportunity tables with their stage sections (capture-and-cli.md
 * §2, kernel-table.md §6, overlap.md §11, fuse-detect.md §9), and the
 * machine formats as they were before the structured report: JSON lines of
 * rows, and CSV/TSV with the three tables mixed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "esc.h"
#include "json.h"
#include "num.h"
#include "rec.h"
#include "render.h"
#include "rules.h"
#include "sbuf.h"
#include "text.h"
#include "xalloc.h"


/* One table row: its stage and its cells (unescaped), plus numbers for machines. */
struct row {
	char *stage;
	char **cell;
	int ncell;
	double num[6];
	int t;
};

struct table {
	struct row *r;
	size_t n, cap;
};

static struct table kt, ot, ft;

struct input {
	char *role, *framework, *model, *traces, *path;
	int has_args;
};
static struct input *inputs;
static size_t ninputs, incap;


static char *
cfmt_ms(double us)
{
	char buf[64];

	snprintf(buf, sizeof buf, "%.2f ms", us / 1000.0);
	return xstrdup(buf);
}

static char *
cfmt_pct(double pct)
{
	char buf[64];

	snprintf(buf, sizeof buf, "%.1f%%", pct);
	return xstrdup(buf);
}

/* A row of stage `stage` ("" groups under "all", fuse-detect.md edge case 39). */
static struct row *
compat_add_row(struct table *t, struct rstr stage, long long tr, int ncell)
{
	struct row *w;

	xgrow(&t->r, &t->cap, t->n + 1, sizeof *t->r);
	w = &t->r[t->n++];
	memset(w, 0, sizeof *w);
	w->stage = stage.n ? rstr_dup(stage) : xstrdup("all");
	w->t = (int)tr;
	w->ncell = ncell;
	w->cell = xcalloc((size_t)ncell, sizeof *w->cell);
	return w;
}

static void
read_input(rec_reader *r)
{
	struct rec_input x;
	struct input *in;
	json_doc d = { 0 };
	int i, k, n;
	sbuf b = SBUF_INIT, s = SBUF_INIT;

	REC_READ(r, input, &x);
	xgrow(&inputs, &incap, ninputs + 1, sizeof *inputs);
	in = &inputs[ninputs++];
	memset(in, 0, sizeof *in);
	in->role = rstr_dup(x.role);
	in->framework = rstr_dup(x.framework);
	in->model = REC_HAS(&x, input, model) ? rstr_dup(x.model) : NULL;
	in->path = rstr_dup(x.path);
	if (REC_HAS(&x, input, server_args)) {
		rec_parse_json(r, &d, x.server_args);
		in->has_args = json_truthy(&d, 0);
	}
	rec_parse_json(r, &d, x.traces);
	if (d.tok[0].type == JSMN_ARRAY) {
		n = d.tok[0].size;
		for (k = 0, i = 1; k < n; k++) {
			json_str(&d, i, &s, NULL);
			if (k)
				sb_adds(&b, ", ");
			sb_add(&b, sb_str(&s), s.len);
			i = json_skip(&d, i);
		}
	}
	in->traces = b.s ? sb_detach(&b) : xstrdup("");
	sb_free(&s);
	json_doc_free(&d);
}

static void
read_kernel_row(rec_reader *r)
{
	struct rec_kernel_row x;
	struct row *w;
	char buf[64];

	REC_READ(r, kernel_row, &x);
	if (!x.shown)
		return;
	w = compat_add_row(&kt, x.stage, x.t, 7);
	w->cell[0] = rstr_dup(x.kernel);
	w->cell[1] = rstr_dup(x.category);
	w->num[0] = x.total_us;
	w->num[1] = x.share_pct;
	w->num[2] = (double)x.launches;
	w->cell[2] = cfmt_ms(x.total_us);
	w->cell[3] = cfmt_pct(x.share_pct);
	snprintf(buf, sizeof buf, "%lld", x.launches);
	w->cell[4] = xstrdup(buf);
	w->cell[5] = rstr_dup(x.location);
	w->cell[6] = rstr_dup(x.cpu_op);
}

static void
read_overlap_row(rec_reader *r)
{
	struct rec_overlap_row x;
	struct row *w;
	char buf[256];

	REC_READ(r, overlap_row, &x);
	w = compat_add_row(&ot, x.stage, 0, 7);
	w->cell[0] = rstr_dup(x.priority);
	w->cell[1] = rstr_dup(x.verdict);
	w->cell[2] = rstr_dup(x.kernel);
	w->cell[3] = rstr_dup(x.python_scope);
	w->num[0] = x.total_us;
	w->num[1] = x.share_pct;
	w->num[2] = x.exclusive_ratio;
	w->num[3] = x.hidden_ratio;
	snprintf(buf, sizeof buf, "%.1f us, share %.1f%%, excl %.1f%% / hid %.1f%%", w->num[0],
	    w->num[1], w->num[2] * 100, w->num[3] * 100);
	w->cell[4] = xstrdup(buf);
	w->cell[5] = rstr_dup(x.dep_risk);
	w->cell[6] = rstr_dup(x.recommendation);
}

static void
read_fuse_row(rec_reader *r)
{
	struct rec_fuse_row x;
	struct row *w;

	REC_READ(r, fuse_row, &x);
	w = compat_add_row(&ft, x.stage, x.t, 8);
	w->cell[0] = rstr_dup(x.pattern);
	w->cell[1] = rstr_dup(x.confidence);
	w->num[0] = x.related_us;
	w->num[1] = x.share_pct;
	w->cell[2] = cfmt_ms(x.related_us);
	w->cell[3] = cfmt_pct(x.share_pct);
	w->cell[4] = rstr_dup(x.evidence);
	w->cell[5] = rstr_dup(x.current_locations);
	w->cell[6] = rstr_dup(x.candidate_path);
	w->cell[7] = rstr_dup(x.rationale);
}

static const char *kernel_head =
    "| Kernel | Category | GPU time | Share | Launches | Python location (site share) | CPU op |\n"
    "| --- | --- | ---: | ---: | ---: | --- | --- |\n";
static const char *kernel_empty =
    "| No kernel rows at or above 1.0% share. | - | - | - | - | - | - |\n";
static const char *overlap_head =
    "| Priority | Verdict | Kernel | Python scope | Formal signal | Dep risk | Recommendation |\n"
    "| --- | --- | --- | --- | --- | --- | --- |\n";
static const char *overlap_empty =
    "| - | - | No rows cleared the 1.0% reporting bar. Use mapping/formal mode for overlap "
    "attribution. | - | - | - | - |\n";
static const char *fuse_head =
    "| Pattern | Confidence | Related GPU time | Share | Evidence kernels | "
    "Current kernel Python location | Candidate fused Python path | Rationale |\n"
    "| --- | --- | ---: | ---: | --- | --- | --- | --- |\n";
static const char *fuse_empty =
    "| No medium-confidence source-backed fusion opportunity matched this trace. | - | - | "
    "- | - | - | - | - |\n";

static void
md_row(sbuf *out, const struct row *w)
{
	int i;

	sb_addc(out, '|');
	for (i = 0; i < w->ncell; i++) {
		sb_addc(out, ' ');
		text_md_escape(w->cell[i], strlen(w->cell[i]), out);
		sb_add(out, " |", 2);
	}
	sb_addc(out, '\n');
}

/* Stage sections (kernel-table.md §6.3): one unlabeled table for "all" alone. */
static void
md_table(sbuf *out, const struct table *t, const char *head, const char *empty)
{
	const char *order[64];
	int norder = 0, i, j;
	size_t k;

	if (t->n == 0) {
		sb_adds(out, head);
		sb_adds(out, empty);
		return;
	}
	for (k = 0; k < t->n; k++) {
		for (i = 0; i < norder; i++)
			if (!strcmp(order[i], t->r[k].stage))
				break;
		if (i == norder && norder < 64)
			order[norder++] = t->r[k].stage;
	}
	/* stable sort of the groups by stage index */
	for (i = 1; i < norder; i++)
		for (j = i; j > 0 && stage_index(order[j - 1]) > stage_index(order[j]); j--) {
			const char *x = order[j];
			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	if (norder == 1 && !strcmp(order[0], "all")) {
		sb_adds(out, head);
		for (k = 0; k < t->n; k++)
			md_row(out, &t->r[k]);
		return;
	}
	for (i = 0; i < norder; i++) {
		if (i)
			sb_addc(out, '\n');
		sb_printf(out, "##### %s\n", stage_label(order[i]));
		sb_adds(out, head);
		for (k = 0; k < t->n; k++)
			if (!strcmp(t->r[k].stage, order[i]))
				md_row(out, &t->r[k]);
	}
}

static const struct input *
find_input(const char *role)
{
	size_t i;

	for (i = 0; i < ninputs; i++)
		if (!strcmp(inputs[i].role, role))
			return &inputs[i];
	return NULL;
}

static void
md_report(sbuf *out)
{
	const struct input *m = find_input("mapping"), *f = find_input("formal");
	const struct input *s = find_input("single"), *margs;
	int dual = m || f;

	sb_adds(out, "Triage View\n");
	if (dual) {
		const char *mf = m ? m->framework : f->framework, *ff = f ? f->framework : mf;
		sb_adds(out, "Mode: mapping-formal\n");
		if (!strcmp(mf, ff))
			sb_printf(out, "Framework: %s\n", framework_display(ff));
		else {
			sb_printf(out, "Mapping framework: %s\n", framework_display(mf));
			sb_printf(out, "Formal framework: %s\n", framework_display(ff));
		}
		sb_printf(out, "Mapping traces: %s\n", m ? m->traces : "");
		sb_printf(out, "Formal traces: %s\n", f ? f->traces : "");
		margs = f && f->has_args ? f : m;
	} else {
		sb_adds(out, "Mode: single-trace\n");
		sb_printf(out, "Framework: %s\n", framework_display(s ? s->framework : "sglang"));
		sb_printf(out, "Input traces: %s\n", s ? s->traces : "");
		margs = s;
	}
	if (margs && margs->model)
		sb_printf(out, "Model: %s\n", margs->model);
	sb_adds(out, "\nKernel Table\n");
	md_table(out, &kt, kernel_head, kernel_empty);
	sb_adds(out, "\nOverlap Opportunity Table\n");
	md_table(out, &ot, overlap_head, overlap_empty);
	sb_adds(out, "\nFuse Opportunity Table\n");
	md_table(out, &ft, fuse_head, fuse_empty);
	while (out->len && (out->s[out->len - 1] == '\n' || out->s[out->len - 1] == ' ' ||
	    out->s[out->len - 1] == '\t' || out->s[out->len - 1] == '\r'))
		out->len--;
	sb_addc(out, '\n');
}

/* ---- machine formats ---- */

static const char *overlap_cols[] = { "priority", "verdict", "kernel", "python_scope",
	"total_us", "share_pct", "exclusive_pct", "hidden_pct", "dep_risk", "recommendation" };
static const char *fuse_cols[] = { "pattern", "confidence", "related_gpu_time_us",
	"share_pct", "evidence_kernels", "current_python_locations", "candidate_fused_path",
	"rationale" };

/* The operand a row's trace came from: the formal input, else the single one. */
static const char *
row_source(void)
{
	const struct input *in = find_input("formal");

	if (!in)
		in = find_input("single");
	return in ? in->path : "";
}

static void
json_rows(sbuf *out, const char *type, const struct table *t, int which)
{
	size_t k;
	char buf[40];
	const char *src = row_source();

	for (k = 0; k < t->n; k++) {
		const struct row *w = &t->r[k];
		sb_printf(out, "{\"type\":\"%s\",\"schema\":1,\"input\":", type);
		json_quote(out, src, strlen(src));
		sb_printf(out, ",\"t\":%d,\"stage\":", w->t);
		json_quote(out, w->stage, strlen(w->stage));
		if (which == 0) {
			sb_adds(out, ",\"kernel\":");
			json_quote(out, w->cell[0], strlen(w->cell[0]));
			sb_adds(out, ",\"category\":");
			json_quote(out, w->cell[1], strlen(w->cell[1]));
			sb_printf(out, ",\"gpu_time_us\":%s", num_json(w->num[0], buf));
			sb_printf(out, ",\"share_pct\":%s", num_json(w->num[1], buf));
			sb_printf(out, ",\"launches\":%s", num_json(w->num[2], buf));
			sb_adds(out, ",\"python_location\":");
			json_quote(out, w->cell[5], strlen(w->cell[5]));
			sb_adds(out, ",\"cpu_op\":");
			json_quote(out, w->cell[6], strlen(w->cell[6]));
		} else if (which == 1) {
			int i;
			for (i = 0; i < 4; i++) {
				sb_printf(out, ",\"%s\":", overlap_cols[i]);
				json_quote(out, w->cell[i], strlen(w->cell[i]));
			}
			sb_printf(out, ",\"total_us\":%s", num_json(w->num[0], buf));
			sb_printf(out, ",\"share_pct\":%s", num_json(w->num[1], buf));
			sb_printf(out, ",\"exclusive_pct\":%s", num_json(w->num[2] * 100, buf));
			sb_printf(out, ",\"hidden_pct\":%s", num_json(w->num[3] * 100, buf));
			sb_adds(out, ",\"dep_risk\":");
			json_quote(out, w->cell[5], strlen(w->cell[5]));
			sb_adds(out, ",\"recommendation\":");
			json_quote(out, w->cell[6], strlen(w->cell[6]));
		} else {
			int i;
			for (i = 0; i < 8; i++) {
				if (i == 2) {
					sb_printf(out, ",\"related_gpu_time_us\":%s", num_json(w->num[0], buf));
					continue;
				}
				if (i == 3) {
					sb_printf(out, ",\"share_pct\":%s", num_json(w->num[1], buf));
					continue;
				}
				sb_printf(out, ",\"%s\":", fuse_cols[i]);
				json_quote(out, w->cell[i], strlen(w->cell[i]));
			}
		}
		sb_adds(out, "}\n");
	}
}

static void
json_report(sbuf *out)
{
	size_t i;

	sb_printf(out, "{\"type\":\"report\",\"schema\":1,\"mode\":\"%s\",\"inputs\":[",
	    (find_input("mapping") || find_input("formal")) ? "mapping-formal" : "single-trace");
	for (i = 0; i < ninputs; i++) {
		if (i)
			sb_addc(out, ',');
		sb_adds(out, "{\"role\":");
		json_quote(out, inputs[i].role, strlen(inputs[i].role));
		sb_adds(out, ",\"path\":");
		json_quote(out, inputs[i].path, strlen(inputs[i].path));
		sb_adds(out, ",\"framework\":");
		json_quote(out, inputs[i].framework, strlen(inputs[i].framework));
		sb_adds(out, ",\"model\":");
		if (inputs[i].model)
			json_quote(out, inputs[i].model, strlen(inputs[i].model));
		else
			sb_adds(out, "null");
		sb_adds(out, ",\"traces\":");
		json_quote(out, inputs[i].traces, strlen(inputs[i].traces));
		sb_addc(out, '}');
	}
	sb_printf(out, "],\"kernel_rows\":%zu,\"overlap_rows\":%zu,\"fuse_rows\":%zu}\n", kt.n,
	    ot.n, ft.n);
	json_rows(out, "kernel_row", &kt, 0);
	json_rows(out, "overlap_row", &ot, 1);
	json_rows(out, "fuse_row", &ft, 2);
}

static void
dsv_report(sbuf *out, char sep)
{
	const char *eol = sep == ',' ? "\r\n" : "\n";
	size_t k;
	int i;
	char buf[40];
	const struct table *tabs[3] = { &kt, &ot, &ft };
	static const char *names[3] = { "kernel", "overlap", "fuse" };

	sb_printf(out, "table%cstage%cc1%cc2%cc3%cc4%cc5%cc6%cc7%cc8%s", sep, sep, sep, sep, sep,
	    sep, sep, sep, sep, eol);
	for (i = 0; i < 3; i++) {
		for (k = 0; k < tabs[i]->n; k++) {
			const struct row *w = &tabs[i]->r[k];
			int c;
			sb_printf(out, "%s%c", names[i], sep);
			dsv_field(out, w->stage, sep);
			for (c = 0; c < 8; c++) {
				const char *v = c < w->ncell ? w->cell[c] : "";
				sb_addc(out, sep);
				if (i != 1 && (c == 2 || c == 3)) {
					/* plain numbers rather than "1.23 ms" / "4.5%" */
					sb_adds(out, num_json(w->num[c - 2], buf));
					continue;
				}
				dsv_field(out, v, sep);
			}
			sb_adds(out, eol);
		}
	}
}


void
compat_record(rec_reader *r)
{
	switch (rec_type_of(r)) {
	case RT_kernel_row:
		read_kernel_row(r);
		break;
	case RT_overlap_row:
		read_overlap_row(r);
		break;
	case RT_fuse_row:
		read_fuse_row(r);
		break;
	case RT_input:
		read_input(r);
		break;
	default:
		break;
	}
}

void
compat_report(int fmt, sbuf *out)
{
	switch (fmt) {
	case F_MD: {
		/*
		 * The reference's layout and escaping (only | and newline), but no
		 * control character raw: a name's ESC sequence never reaches a
		 * terminal (issue 27, docs/deviations.md).
		 */
		sbuf raw = SBUF_INIT;
		md_report(&raw);
		esc_ctrl(sb_str(&raw), raw.len, ESC_KEEP_TAB | ESC_KEEP_NL, out);
		sb_free(&raw);
		break;
	}
	case F_CSV:
		dsv_report(out, ',');
		break;
	case F_TSV:
		dsv_report(out, '\t');
		break;
	default:
		json_report(out);
		break;
	}
}
