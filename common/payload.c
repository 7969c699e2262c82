/* Site payloads: entries, their JSON form, cell text and relaxed lookups. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "payload.h"
#include "rules.h"
#include "text.h"
#include "xalloc.h"

static void
site_free(site_t *s)
{
	free(s->location);
	free(s->display_location);
	free(s->top_cpu_op);
	free(s->stack);
}

void
entry_free(entry_t *e)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < e->nsites; i++)
		site_free(&e->sites[i]);
	free(e->sites);
	free(e->kernel);
	free(e->category);
	free(e->best_location);
	memset(e, 0, sizeof *e);
}

void
payload_free(payload_t *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		entry_free(&p->e[i]);
	free(p->e);
	memset(p, 0, sizeof *p);
}

entry_t *
payload_add(payload_t *p)
{
	entry_t *e;

	xgrow(&p->e, &p->cap, p->n + 1, sizeof p->e[0]);
	e = &p->e[p->n++];
	memset(e, 0, sizeof *e);
	return e;
}

static char *
dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void
entry_copy(entry_t *dst, const entry_t *src)
{
	size_t i;

	memset(dst, 0, sizeof *dst);
	dst->kernel = dup_or_null(src->kernel);
	dst->category = dup_or_null(src->category);
	dst->best_location = dup_or_null(src->best_location);
	dst->nsites = src->nsites;
	dst->sites = src->nsites ? xcalloc(src->nsites, sizeof dst->sites[0]) : NULL;
	for (i = 0; i < src->nsites; i++) {
		const site_t *s = &src->sites[i];
		site_t *d = &dst->sites[i];
		*d = *s;
		d->location = xstrdup(s->location ? s->location : "");
		d->display_location = dup_or_null(s->display_location);
		d->top_cpu_op = dup_or_null(s->top_cpu_op);
		d->stack = dup_or_null(s->stack);
	}
}

/* A string member as a heap copy; NULL when absent or not a string. */
static char *
member_str(const json_doc *d, int obj, const char *key)
{
	sbuf b = SBUF_INIT;
	int i = json_get(d, obj, key);

	if (json_kind(d, i) != JK_STR)
		return NULL;
	json_str(d, i, &b, NULL);
	return b.s ? sb_detach(&b) : xstrdup("");
}

int
entry_from_json(const json_doc *d, int obj, entry_t *e)
{
	int sites, i, k, n;
	long long v;

	memset(e, 0, sizeof *e);
	if (json_kind(d, obj) != JK_OBJ)
		return -1;
	e->kernel = member_str(d, obj, "kernel");
	if (!e->kernel)
		return -1;
	e->category = member_str(d, obj, "category");
	if (!e->category)
		e->category = xstrdup("other");
	e->best_location = member_str(d, obj, "best_location");
	sites = json_get(d, obj, "sites");
	if (json_kind(d, sites) == JK_ARR && (n = d->tok[sites].size) > 0) {
		e->sites = xcalloc((size_t)n, sizeof e->sites[0]);
		for (k = 0, i = sites + 1; k < n; k++, i = json_skip(d, i)) {
			site_t *s = &e->sites[e->nsites];
			int j;
			if (json_kind(d, i) != JK_OBJ)
				continue;
			e->nsites++;
			s->location = member_str(d, i, "location");
			if (!s->location)
				s->location = xstrdup("");
			s->display_location = member_str(d, i, "display_location");
			s->top_cpu_op = member_str(d, i, "top_cpu_op");
			s->stack = member_str(d, i, "stack");
			if (json_coerce_int(d, json_get(d, i, "launches"), &v))
				s->launches = v;
			j = json_get(d, i, "total_us");
			if (json_kind(d, j) == JK_INT || json_kind(d, j) == JK_FLOAT)
				json_todouble(d, j, &s->total_us);
			j = json_get(d, i, "share_pct_within_kernel");
			if (json_kind(d, j) == JK_INT || json_kind(d, j) == JK_FLOAT)
				s->has_share = json_todouble(d, j, &s->share_pct);
		}
	}
	return 0;
}

static void
add_str_or_null(sbuf *out, const char *s)
{
	if (s)
		json_quote(out, s, strlen(s));
	else
		sb_adds(out, "null");
}

void
entry_sites_to_json(const entry_t *e, sbuf *out)
{
	char num[40];
	size_t i;

	sb_addc(out, '[');
	for (i = 0; i < e->nsites; i++) {
		const site_t *s = &e->sites[i];
		if (i)
			sb_addc(out, ',');
		sb_adds(out, "{\"location\":");
		add_str_or_null(out, s->location ? s->location : "");
		sb_adds(out, ",\"display_location\":");
		add_str_or_null(out, s->display_location);
		sb_printf(out, ",\"launches\":%lld", s->launches);
		sb_adds(out, ",\"total_us\":");
		sb_adds(out, num_json(s->total_us, num));
		sb_adds(out, ",\"share_pct_within_kernel\":");
		sb_adds(out, s->has_share ? num_json(s->share_pct, num) : "null");
		sb_adds(out, ",\"top_cpu_op\":");
		add_str_or_null(out, s->top_cpu_op);
		sb_adds(out, ",\"stack\":");
		add_str_or_null(out, s->stack);
		sb_addc(out, '}');
	}
	sb_addc(out, ']');
}

void
entry_to_json(const entry_t *e, sbuf *out)
{
	sb_adds(out, "{\"kernel\":");
	add_str_or_null(out, e->kernel ? e->kernel : "");
	sb_adds(out, ",\"category\":");
	add_str_or_null(out, e->category);
	sb_adds(out, ",\"best_location\":");
	add_str_or_null(out, e->best_location);
	sb_adds(out, ",\"sites\":");
	entry_sites_to_json(e, out);
	sb_addc(out, '}');
}

void
site_display_location(const site_t *s, sbuf *out)
{
	const char *loc = s->location && *s->location ? s->location : "unresolved";
	size_t n;

	loc = text_strip(loc, strlen(loc), &n);
	if (is_preferred_location(loc, n) && !is_low_signal(loc, n)) {
		sb_reset(out);
		sb_add(out, loc, n);
		return;
	}
	if (s->stack && preferred_stack_location(s->stack, strlen(s->stack), out))
		return;
	sb_reset(out);
	sb_add(out, loc, n);
}

void
best_site_summary(const entry_t *e, sbuf *loc, sbuf *cpu_op)
{
	sbuf disp = SBUF_INIT;
	size_t i, ncand = 0, shown = 0, nops = 0;
	unsigned char *pref;
	int any_pref = 0;

	sb_reset(loc);
	sb_reset(cpu_op);
	if (!e) {
		sb_adds(loc, "unresolved");
		sb_adds(cpu_op, "-");
		return;
	}
	if (e->nsites == 0) {
		sb_adds(loc, e->best_location ? e->best_location : "unresolved");
		sb_adds(cpu_op, "-");
		return;
	}
	/* Candidates: the sites whose display location is framework code, else all. */
	pref = xcalloc(e->nsites, 1);
	for (i = 0; i < e->nsites; i++) {
		site_display_location(&e->sites[i], &disp);
		if (is_preferred_location(sb_str(&disp), disp.len)) {
			pref[i] = 1;
			any_pref = 1;
			ncand++;
		}
	}
	if (!any_pref)
		ncand = e->nsites;
	for (i = 0; i < e->nsites && shown < 2; i++) {
		const site_t *s = &e->sites[i];
		if (any_pref && !pref[i])
			continue;
		site_display_location(s, &disp);
		if (shown)
			sb_adds(loc, "<br>");
		sb_add(loc, sb_str(&disp), disp.len);
		if (ncand > 1 && s->has_share)
			sb_printf(loc, " (site share %.0f%%)", s->share_pct);
		if (s->top_cpu_op && *s->top_cpu_op) {
			if (nops++)
				sb_adds(cpu_op, "<br>");
			sb_adds(cpu_op, s->top_cpu_op);
		}
		shown++;
	}
	if (nops == 0)
		sb_adds(cpu_op, "-");
	free(pref);
	sb_free(&disp);
}

/* ---- relaxed lookup (kernel-table.md §5.7.3, §5.7.4) ---- */

static int
cmp_key(const char *a, const char *b)
{
	return strcmp(a, b);
}

static const entry_t *
exact_lookup(const payload_t *p, const char *name)
{
	size_t lo = 0, hi = p->n, i;

	/* Payloads are kept in ascending byte order; fall back to a scan if not. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_key(p->e[mid].kernel, name);
		if (c == 0)
			return &p->e[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = 0; i < p->n; i++)
		if (strcmp(p->e[i].kernel, name) == 0)
			return &p->e[i];
	return NULL;
}

static int
ci_prefix(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char x = a[i], y = b[i];
		if (x >= 'A' && x <= 'Z')
			x += 'a' - 'A';
		if (y >= 'A' && y <= 'Z')
			y += 'a' - 'A';
		if (x != y)
			return 0;
	}
	return 1;
}

/* Step 2: the case-insensitive prefix / substring score, or -1. */
static long
affix_score(const char *ql, size_t qn, size_t qcp, const char *k, sbuf *kl)
{
	size_t kn = strlen(k), kcp, m;
	const char *lng, *sht;
	size_t ln, sn;

	m = kn < qn ? kn : qn;
	if (ci_prefix(ql, k, m)) {
		kcp = text_cplen(k, kn);
		return (long)(kcp < qcp ? kcp : qcp);
	}
	sb_reset(kl);
	sb_add(kl, k, kn);
	text_lower(kl->s, kl->len);
	if (kn <= qn) {
		sht = sb_str(kl);
		sn = kn;
		lng = ql;
		ln = qn;
	} else {
		sht = ql;
		sn = qn;
		lng = sb_str(kl);
		ln = kn;
	}
	if (sn <= ln && memmem(lng, ln, sht, sn) != NULL) {
		kcp = text_cplen(k, kn);
		return (long)((kcp < qcp ? kcp : qcp) / 2);
	}
	return -1;
}

/*
 * Compact text of an entry for the alias score: the key, best location
 * and the first four sites' location, display location, CPU op and stack.
 * Separators vanish in compaction, so the join is a plain concatenation.
 */
static void
alias_text(const entry_t *e, sbuf *out)
{
	sbuf raw = SBUF_INIT;
	size_t i;

#define ADD(s) do { sb_addc(&raw, ' '); if (s) sb_adds(&raw, (s)); } while (0)
	sb_adds(&raw, e->kernel);
	ADD(e->best_location);
	for (i = 0; i < e->nsites && i < 4; i++) {
		ADD(e->sites[i].location);
		ADD(e->sites[i].display_location);
		ADD(e->sites[i].top_cpu_op);
		ADD(e->sites[i].stack);
	}
#undef ADD
	text_compact(sb_str(&raw), raw.len, out);
	sb_free(&raw);
}

static const char *const alias_flash[] = {
	"flashattnfwdsm90", "flashattnvarlenfunc",
	"vllmflashattnflashattninterface", "vllmfa3cfwd", NULL
};
static const char *const alias_mha[] = {
	"maskedmultiheadattentionkernel", "attentioninplace",
	"attentionbackendtrtllm", NULL
};
static const char *const alias_rope[] = {
	"fusedqknormropekernel", "applyqknormrope",
	"modelingqwen3py98applyqknormrope", NULL
};
static const char *const alias_memset[] = { "memset", NULL };

static const entry_t *
alias_lookup(const payload_t *p, const char *qc, size_t qcn)
{
	const char *const *groups[4];
	size_t ng = 0, i, g;
	sbuf text = SBUF_INIT, cell = SBUF_INIT, ops = SBUF_INIT;
	const entry_t *best = NULL;
	long long best_score = 0;
	int have = 0;

	if (text_has(qc, qcn, "flashattnfwdcombine"))
		groups[ng++] = alias_flash;
	if (text_has(qc, qcn, "kernelmha"))
		groups[ng++] = alias_mha;
	if (text_has(qc, qcn, "applybiasropeupdatekvcachev2"))
		groups[ng++] = alias_rope;
	if (text_starts(qc, qcn, "memset"))
		groups[ng++] = alias_memset;
	if (ng == 0)
		return NULL;
	for (i = 0; i < p->n; i++) {
		const entry_t *e = &p->e[i];
		long long score = 0;
		int pr1, pr2;
		nsum sum = NSUM_INIT;
		size_t k;

		alias_text(e, &text);
		for (g = 0; g < ng; g++) {
			size_t gs = 0;
			const char *const *t;
			for (t = groups[g]; *t; t++) {
				size_t tl = strlen(*t);
				if (tl > gs && text_has(sb_str(&text), text.len, *t))
					gs = tl;
			}
			if (gs > 0)
				score += 1000 * (long long)(g + 1) + (long long)gs;
		}
		if (score <= 0)
			continue;
		pr1 = e->best_location ? source_location_priority(e->best_location,
		    strlen(e->best_location)) : source_location_priority("", 0);
		best_site_summary(e, &cell, &ops);
		pr2 = source_location_priority(sb_str(&cell), cell.len);
		score += pr1 > pr2 ? pr1 : pr2;
		for (k = 0; k < e->nsites; k++)
			nsum_add(&sum, e->sites[k].total_us);
		score += (long long)floordiv10(nsum_value(&sum));
		if (!have || score > best_score) {
			have = 1;
			best_score = score;
			best = e;
		}
	}
	sb_free(&text);
	sb_free(&cell);
	sb_free(&ops);
	if (best && *best->kernel == '\0')
		return NULL;
	return best;
}

const entry_t *
relaxed_lookup(const payload_t *p, const char *name)
{
	const entry_t *hit, *best = NULL;
	sbuf ql = SBUF_INIT, kl = SBUF_INIT, qc = SBUF_INIT, kc = SBUF_INIT;
	size_t qn = strlen(name), qcp, i;
	long best_score = -1;

	if (!p || p->n == 0)
		goto fuzzy_done;
	if ((hit = exact_lookup(p, name)) != NULL)
		return hit;
	sb_add(&ql, name, qn);
	text_lower(ql.s, ql.len);
	qcp = text_cplen(name, qn);
	for (i = 0; i < p->n; i++) {
		long s = affix_score(sb_str(&ql), qn, qcp, p->e[i].kernel, &kl);
		if (s > best_score) {
			best_score = s;
			best = &p->e[i];
		}
	}
	if (best && *best->kernel)
		goto out;
	best = NULL;

	text_compact(name, qn, &qc);
	if (qc.len >= 96) {
		static const char flash[] = "voidcutlassdevicekernelflash";
		int qflash = text_starts(qc.s, qc.len, flash);
		best_score = -1;
		for (i = 0; i < p->n; i++) {
			const char *k = p->e[i].kernel;
			size_t P = 0, S;
			long s;
			text_compact(k, strlen(k), &kc);
			if (kc.len < 96)
				continue;
			while (P < qc.len && P < kc.len && qc.s[P] == kc.s[P])
				P++;
			S = qc.len < kc.len ? qc.len : kc.len;
			if (P < 64 || (double)P < trunc((double)S * 0.4))
				continue;
			s = (long)P;
			if (qflash && text_starts(kc.s, kc.len, flash))
				s += 32;
			if (s > best_score) {
				best_score = s;
				best = &p->e[i];
			}
		}
		if (best && *best->kernel)
			goto out;
	}
	best = alias_lookup(p, sb_str(&qc), qc.len);
	goto out;
fuzzy_done:
	best = NULL;
out:
	sb_free(&ql);
	sb_free(&kl);
	sb_free(&qc);
	sb_free(&kc);
	return best;
}

/* ---- kernel maps (§5.5, §5.7.2) ---- */

void
kernel_map_free(kernel_map_t *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nstages; i++) {
		free(m->stage_names[i]);
		payload_free(&m->stages[i]);
	}
	free(m->stage_names);
	free(m->stages);
	payload_free(&m->global);
	memset(m, 0, sizeof *m);
}

payload_t *
kernel_map_stage(kernel_map_t *m, const char *stage, int create)
{
	size_t i;

	for (i = 0; i < m->nstages; i++)
		if (strcmp(m->stage_names[i], stage) == 0)
			return &m->stages[i];
	if (!create)
		return NULL;
	m->stage_names = xreallocarray(m->stage_names, m->nstages + 1, sizeof m->stage_names[0]);
	m->stages = xreallocarray(m->stages, m->nstages + 1, sizeof m->stages[0]);
	m->stage_names[m->nstages] = xstrdup(stage);
	memset(&m->stages[m->nstages], 0, sizeof m->stages[0]);
	return &m->stages[m->nstages++];
}

const entry_t *
lookup_kernel_map_entry(const kernel_map_t *m, const char *stage, const char *name)
{
	const char *aliases[3];
	size_t na = 0, i;
	const entry_t *e;

	if (strcmp(stage, "extend") == 0) {
		aliases[na++] = "extend";
		aliases[na++] = "prefill";
	} else if (strcmp(stage, "prefill") == 0) {
		aliases[na++] = "prefill";
		aliases[na++] = "extend";
	} else
		aliases[na++] = stage;
	aliases[na++] = "all";
	for (i = 0; i < na; i++) {
		/* a stage absent from the map is an empty payload: no match */
		const payload_t *p = kernel_map_stage((kernel_map_t *)m, aliases[i], 0);
		if (p && (e = relaxed_lookup(p, name)) != NULL)
			return e;
	}
	return relaxed_lookup(&m->global, name);
}
