/* Loading and validating the fusion-pattern catalog (fuse-patterns(5)). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "err.h"
#include "json.h"
#include "kcat.h"
#include "match.h"
#include "num.h"
#include "sbuf.h"
#include "sidefile.h"
#include "text.h"
#include "xalloc.h"

/* The lines of data/fuse-patterns.jsonl, NULL-terminated (generated at build time). */
extern const char *const fuse_catalog_lines[];

/* Where the line being parsed came from, for messages. */
typedef struct {
	const char *name;
	size_t lineno;
	const json_doc *d;
} src_t;

static void bad(const src_t *s, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

static void
bad(const src_t *s, const char *fmt, ...)
{
	sbuf m = SBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(&m, fmt, ap);
	va_end(ap);
	die(EXIT_DATA, "%s:%zu: %s", s->name, s->lineno, sbs(&m));
}

static char *
get_string(const src_t *s, int obj, const char *key, const char *dflt)
{
	int i = json_get(s->d, obj, key);
	sbuf b = SBUF_INIT;

	if (i < 0)
		return dflt ? xstrdup(dflt) : NULL;
	if (json_kind(s->d, i) != JK_STR)
		bad(s, "'%s' is not a string", key);
	json_str(s->d, i, &b, NULL);
	return b.s ? sb_detach(&b) : xstrdup("");
}

/* An array of strings; absent gives an empty list. */
static void
get_strings(const src_t *s, int obj, const char *key, strlist_t *out)
{
	int i = json_get(s->d, obj, key), k, n;
	sbuf b = SBUF_INIT;

	out->v = NULL;
	out->n = 0;
	if (i < 0)
		return;
	if (json_kind(s->d, i) != JK_ARR)
		bad(s, "'%s' is not an array of strings", key);
	n = s->d->tok[i].size;
	out->v = xcalloc((size_t)n + 1, sizeof *out->v);
	for (k = i + 1; out->n < (size_t)n; k = json_skip(s->d, k)) {
		if (json_kind(s->d, k) != JK_STR)
			bad(s, "'%s' is not an array of strings", key);
		json_str(s->d, k, &b, NULL);
		out->v[out->n++] = b.s ? sb_detach(&b) : xstrdup("");
	}
}

static void
strlist_free(strlist_t *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Turn keyword strings into needles (the list's strings move into it). */
static void
make_needles(strlist_t *words, kwlist_t *kw)
{
	sbuf b = SBUF_INIT;
	size_t i;

	kw->n = words->n;
	kw->v = xcalloc(words->n + 1, sizeof *kw->v);
	for (i = 0; i < words->n; i++) {
		kw->v[i].raw = words->v[i];
		py_lower(kw->v[i].raw, strlen(kw->v[i].raw), &b);
		kw->v[i].lower = xstrdup(sbs(&b));
		text_compact(kw->v[i].raw, strlen(kw->v[i].raw), &b);
		kw->v[i].compact = xstrdup(sbs(&b));
	}
	free(words->v);
	words->v = NULL;
	words->n = 0;
	sb_free(&b);
}

static void
kwlist_free(kwlist_t *kw)
{
	size_t i;

	for (i = 0; i < kw->n; i++) {
		free(kw->v[i].raw);
		free(kw->v[i].lower);
		free(kw->v[i].compact);
	}
	free(kw->v);
	kw->v = NULL;
	kw->n = 0;
}

static double
get_number(const src_t *s, int obj, const char *key, double dflt)
{
	int i = json_get(s->d, obj, key);
	enum json_kind k = json_kind(s->d, i);
	double v;

	if (i < 0)
		return dflt;
	if ((k != JK_INT && k != JK_FLOAT) || !json_todouble(s->d, i, &v))
		bad(s, "'%s' is not a number", key);
	return v;
}

static long long
get_int(const src_t *s, int obj, const char *key, long long dflt)
{
	int i = json_get(s->d, obj, key);
	const char *t;
	size_t n;
	long long v;

	if (i < 0)
		return dflt;
	t = json_span(s->d, i, &n);
	if (json_kind(s->d, i) != JK_INT || !num_py_int(t, n, &v))
		bad(s, "'%s' is not an integer", key);
	return v;
}

static int
get_bool(const src_t *s, int obj, const char *key, int dflt)
{
	int i = json_get(s->d, obj, key);
	enum json_kind k = json_kind(s->d, i);

	if (i < 0)
		return dflt;
	if (k != JK_TRUE && k != JK_FALSE)
		bad(s, "'%s' is not true or false", key);
	return k == JK_TRUE;
}

/* Framework hints of a joined candidate path (§5 step 2). */
static unsigned
path_hints(const char *joined)
{
	sbuf norm = SBUF_INIT, low = SBUF_INIT;
	unsigned h = 0;
	const char *t;
	size_t n;

	text_normalize(joined, strlen(joined), &norm);
	py_lower(sbs(&norm), norm.len, &low);
	t = sbs(&low);
	n = low.len;
	if (text_has(t, n, "vllm/"))
		h |= HINT_VLLM;
	if (text_has(t, n, "tokenspeed/") || text_has(t, n, "tokenspeed-") ||
	    text_has(t, n, "tokenspeed_"))
		h |= HINT_TOKENSPEED;
	if (text_has(t, n, "tensorrt_llm/"))
		h |= HINT_TRTLLM;
	if (text_has(t, n, "python/sglang/") || text_has(t, n, "sgl-kernel/") ||
	    text_has(t, n, "sgl_kernel/"))
		h |= HINT_SGLANG;
	sb_free(&norm);
	sb_free(&low);
	return h;
}

/*
 * split_categories: one array of category names per split group; absent,
 * each group takes "generic" and the categories its own keywords have
 * (kernel_category of the keyword: "rotary" is rope).
 */
static void
group_categories(const src_t *s, pattern_t *p)
{
	int i = json_get(s->d, 0, "split_categories"), k;
	size_t g, w;

	p->group_cats = xcalloc(p->ngroups + 1, sizeof *p->group_cats);
	if (i >= 0) {
		if (json_kind(s->d, i) != JK_ARR || (size_t)s->d->tok[i].size != p->ngroups)
			bad(s, "'split_categories' is not one array of category names per split group");
		for (g = 0, k = i + 1; g < p->ngroups; g++, k = json_skip(s->d, k)) {
			strlist_t *l = &p->group_cats[g];
			int j, m;
			if (json_kind(s->d, k) != JK_ARR)
				bad(s, "'split_categories' is not one array of category names per split group");
			m = s->d->tok[k].size;
			l->v = xcalloc((size_t)m + 1, sizeof *l->v);
			for (j = k + 1; l->n < (size_t)m; j = json_skip(s->d, j)) {
				sbuf b = SBUF_INIT;
				if (json_kind(s->d, j) != JK_STR)
					bad(s, "'split_categories' holds a non-string");
				json_str(s->d, j, &b, NULL);
				if (strcmp(sbs(&b), "generic") != 0 && !kernel_category_known(sbs(&b)))
					bad(s, "'split_categories': '%s' is no kernel category", sbs(&b));
				l->v[l->n++] = b.s ? sb_detach(&b) : xstrdup("");
			}
		}
		return;
	}
	for (g = 0; g < p->ngroups; g++) {
		strlist_t *l = &p->group_cats[g];
		const kwlist_t *kw = &p->groups[g];
		l->v = xcalloc(kw->n + 2, sizeof *l->v);
		l->v[l->n++] = xstrdup("generic");
		for (w = 0; w < kw->n; w++) {
			const char *c = kernel_category(kw->v[w].raw, strlen(kw->v[w].raw));
			size_t q;
			for (q = 0; q < l->n && strcmp(l->v[q], c) != 0; q++)
				;
			if (q == l->n && strcmp(c, "other") != 0)
				l->v[l->n++] = xstrdup(c);
		}
	}
}

/* Flag the split keywords that are one of the pattern's model_include tokens. */
static void
mark_model_names(pattern_t *p)
{
	sbuf c = SBUF_INIT;
	size_t g, k, m;

	for (m = 0; m < p->model_include.n; m++) {
		text_compact(p->model_include.v[m], strlen(p->model_include.v[m]), &c);
		for (g = 0; g < p->ngroups; g++)
			for (k = 0; k < p->groups[g].n; k++)
				if (c.len && strcmp(p->groups[g].v[k].compact, sbs(&c)) == 0)
					p->groups[g].v[k].model_name = 1;
	}
	sb_free(&c);
}

/* dtypes: "fp8", "fp4", "int8", "int4" -> DT_* bits. */
static unsigned
get_dtypes(const src_t *s)
{
	strlist_t l;
	unsigned bits = 0;
	size_t i;

	get_strings(s, 0, "dtypes", &l);
	for (i = 0; i < l.n; i++) {
		if (strcmp(l.v[i], "fp8") == 0)
			bits |= DT_FP8;
		else if (strcmp(l.v[i], "fp4") == 0)
			bits |= DT_FP4;
		else if (strcmp(l.v[i], "int8") == 0)
			bits |= DT_INT8;
		else if (strcmp(l.v[i], "int4") == 0)
			bits |= DT_INT4;
		else
			bad(s, "'dtypes': '%s' is not fp8, fp4, int8 or int4", l.v[i]);
	}
	strlist_free(&l);
	return bits;
}

/* Parse one catalog line into a new pattern at the end of the catalog. */
static void
parse_line(catalog_t *c, const src_t *s, const char *line, size_t len)
{
	json_doc d = { 0 };
	src_t src = *s;
	pattern_t *p;
	strlist_t words, path;
	sbuf joined = SBUF_INIT;
	int i, k, n;
	size_t g;

	if ((i = json_parse(&d, line, len)) == JSON_EDEPTH || i == JSON_ESIZE)
		bad(s, "pattern is %s (at byte %zu)", json_limit_text(i), d.err_off);
	if (i < 0 || d.tok[0].type != JSMN_OBJECT)
		bad(s, "pattern is not a JSON object");
	src.d = &d;
	xgrow(&c->p, &c->cap, c->n + 1, sizeof *c->p);
	p = &c->p[c->n];
	memset(p, 0, sizeof *p);

	p->pattern = get_string(&src, 0, "pattern", NULL);
	if (!p->pattern || !p->pattern[0])
		bad(s, "pattern has no 'pattern' name");

	get_strings(&src, 0, "candidate_path", &path);
	for (g = 0; g < path.n; g++) {
		if (g)
			sb_adds(&joined, "<br>");
		sb_adds(&joined, path.v[g]);
	}
	strlist_free(&path);
	p->candidate_path = joined.s ? sb_detach(&joined) : xstrdup("");
	p->hints = path_hints(p->candidate_path);

	/* The reference registry calls it rationale_hint; accept both. */
	p->rationale = get_string(&src, 0, "rationale", NULL);
	if (!p->rationale)
		p->rationale = get_string(&src, 0, "rationale_hint", "");

	p->origin_text = get_string(&src, 0, "origin", "mainline");
	if (strcmp(p->origin_text, "mainline") == 0)
		p->origin = ORIGIN_MAINLINE;
	else if (strcmp(p->origin_text, "upstream") == 0)
		p->origin = ORIGIN_UPSTREAM;
	else
		p->origin = ORIGIN_OTHER;

	get_strings(&src, 0, "active_keywords", &words);
	make_needles(&words, &p->active);

	i = json_get(&d, 0, "split_groups");
	if (i >= 0) {
		if (json_kind(&d, i) != JK_ARR)
			bad(s, "'split_groups' is not an array of arrays of strings");
		n = d.tok[i].size;
		p->groups = xcalloc((size_t)n + 1, sizeof *p->groups);
		for (k = i + 1; p->ngroups < (size_t)n; k = json_skip(&d, k)) {
			int j, m = d.tok[k].size;

			if (json_kind(&d, k) != JK_ARR)
				bad(s, "'split_groups' is not an array of arrays of strings");
			words.v = xcalloc((size_t)m + 1, sizeof *words.v);
			words.n = 0;
			for (j = k + 1; words.n < (size_t)m; j = json_skip(&d, j)) {
				sbuf b = SBUF_INIT;

				if (json_kind(&d, j) != JK_STR)
					bad(s, "'split_groups' is not an array of arrays of strings");
				json_str(&d, j, &b, NULL);
				words.v[words.n++] = b.s ? sb_detach(&b) : xstrdup("");
			}
			make_needles(&words, &p->groups[p->ngroups++]);
		}
	}

	get_strings(&src, 0, "also_active", &words);
	make_needles(&words, &p->also_active);
	group_categories(&src, p);
	p->dtypes = get_dtypes(&src);
	get_strings(&src, 0, "model_family", &p->model_family);
	for (g = 0; g < p->model_family.n; g++)
		text_lower(p->model_family.v[g], strlen(p->model_family.v[g]));

	get_strings(&src, 0, "model_include", &p->model_include);
	mark_model_names(p);
	get_strings(&src, 0, "model_exclude", &p->model_exclude);
	get_strings(&src, 0, "subsumes", &p->subsumes);
	p->min_tp_size = get_int(&src, 0, "min_tp_size", 1);
	p->require_tp = get_bool(&src, 0, "require_tp", 0);
	p->min_share = get_number(&src, 0, "min_share", 0.25);
	p->likely_share = get_number(&src, 0, "likely_share", 3.0);
	p->priority = get_int(&src, 0, "priority", 0);
	p->span = p->ngroups;
	if (p->active.n > 0 && p->span < 1)
		p->span = 1;
	json_doc_free(&d);
	c->n++;
}

/* Parse a line unless it is blank or a '#' comment. */
static void
load_line(catalog_t *c, const src_t *s, const char *line, size_t len)
{
	size_t n;
	const char *t = text_strip(line, len, &n);

	if (n == 0 || t[0] == '#')
		return;
	parse_line(c, s, t, n);
}

void
catalog_load_builtin(catalog_t *c)
{
	src_t s = { "<built-in catalog>", 0, NULL };
	size_t i;

	for (i = 0; fuse_catalog_lines[i]; i++) {
		s.lineno = i + 1;
		load_line(c, &s, fuse_catalog_lines[i], strlen(fuse_catalog_lines[i]));
	}
}

void
catalog_load_file(catalog_t *c, const char *path)
{
	src_t s = { path, 0, NULL };
	FILE *fp;
	sbuf line = SBUF_INIT, why = SBUF_INIT;
	unsigned long long total = 0;
	int ch = 0;

	if (strcmp(path, "-") == 0) {
		fp = stdin;
		s.name = "<stdin>";
	} else if ((fp = side_open(path, "pattern catalog", &why)) == NULL) {
		/* a regular file of at most the side-file limit (sidefile.h, issue 27) */
		die(EXIT_DATA, "%s", why.s);
	}
	while (ch != EOF) {
		/* one line, refused past the size limit before it is held (json.h) */
		sb_reset(&line);
		while ((ch = getc_unlocked(fp)) != EOF && ch != '\n') {
			if (line.len >= json_max_bytes()) {
				s.lineno++;
				bad(&s, "pattern is %s", json_limit_text(JSON_ESIZE));
			}
			if (side_over(s.name, "pattern catalog", ++total, &why))
				die(EXIT_DATA, "%s", why.s);
			sb_addc(&line, (char)ch);
		}
		if (ch == EOF && line.len == 0)
			break;
		s.lineno++;
		load_line(c, &s, sb_str(&line), line.len);
	}
	if (ferror(fp))
		die(EXIT_DATA, "cannot read '%s': %s", path, strerror(errno));
	sb_free(&line);
	sb_free(&why);
	if (fp != stdin)
		fclose(fp);
}

void
catalog_free(catalog_t *c)
{
	size_t i, g;
	pattern_t *p;

	for (i = 0; i < c->n; i++) {
		p = &c->p[i];
		free(p->pattern);
		free(p->candidate_path);
		free(p->rationale);
		free(p->origin_text);
		kwlist_free(&p->active);
		for (g = 0; g < p->ngroups; g++)
			kwlist_free(&p->groups[g]);
		free(p->groups);
		strlist_free(&p->model_include);
		strlist_free(&p->model_exclude);
		strlist_free(&p->subsumes);
		kwlist_free(&p->also_active);
		for (g = 0; g < p->ngroups; g++)
			strlist_free(&p->group_cats[g]);
		free(p->group_cats);
		strlist_free(&p->model_family);
	}
	free(c->p);
	c->p = NULL;
	c->n = c->cap = 0;
}
