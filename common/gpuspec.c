/* The GPU table: loading and matching (gpuspec.h, gpu-specs(5)). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gpuspec.h"
#include "json.h"
#include "sbuf.h"
#include "xalloc.h"

/* The lines of data/gpu-specs.jsonl, NULL-terminated (generated at build time). */
extern const char *const gpu_spec_lines[];

const char *
dtype_key(int dt)
{
	static const char *const k[DT_COUNT] = { NULL, "fp64", "fp32", "tf32", "bf16", "fp16",
	    "fp8", "fp6", "fp4", "int8" };

	return dt > DT_NONE && dt < DT_COUNT ? k[dt] : NULL;
}

struct src {
	const char *name;
	size_t lineno;
	const json_doc *d;
};

static void bad(const struct src *s, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

static void
bad(const struct src *s, const char *fmt, ...)
{
	sbuf m = SBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(&m, fmt, ap);
	va_end(ap);
	die(EXIT_DATA, "%s:%zu: %s", s->name, s->lineno, m.s ? m.s : "");
}

static double
get_num(const struct src *s, int obj, const char *key, double dflt)
{
	int i = json_get(s->d, obj, key);
	double v;

	if (i < 0)
		return dflt;
	if ((json_kind(s->d, i) != JK_INT && json_kind(s->d, i) != JK_FLOAT) ||
	    !json_todouble(s->d, i, &v) || !isfinite(v) || v < 0)
		bad(s, "'%s' is not a non-negative number", key);
	return v;
}

static char *
get_str(const struct src *s, int obj, const char *key, int need)
{
	int i = json_get(s->d, obj, key);
	sbuf b = SBUF_INIT;

	if (i < 0) {
		if (need)
			bad(s, "an entry needs '%s'", key);
		return NULL;
	}
	if (json_kind(s->d, i) != JK_STR)
		bad(s, "'%s' is not a string", key);
	json_str(s->d, i, &b, NULL);
	return b.s ? sb_detach(&b) : xstrdup("");
}

static void
load_line(struct gputab *t, struct src *s, const char *line, size_t n)
{
	json_doc d = { 0 };
	struct gpu *g;
	int i, k, m, dt;
	char *cc;
	sbuf b = SBUF_INIT;

	while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	if (n == 0)
		return;
	if (json_parse(&d, line, n) < 0 || d.ntok < 1 || d.tok[0].type != JSMN_OBJECT)
		bad(s, "not a JSON object");
	s->d = &d;
	xgrow(&t->g, &t->cap, t->n + 1, sizeof *t->g);
	g = &t->g[t->n++];
	memset(g, 0, sizeof *g);
	g->cc_major = g->cc_minor = -1;
	g->name = get_str(s, 0, "name", 1);
	if (!g->name[0])
		bad(s, "'name' is empty");
	g->source = get_str(s, 0, "source", 1);
	g->gfx = get_str(s, 0, "gfx", 0);
	if (g->gfx && (strncmp(g->gfx, "gfx", 3) != 0 || !g->gfx[3]))
		bad(s, "'gfx' is not a gfx target such as gfx942");
	i = json_get(&d, 0, "match");
	if (i < 0 || json_kind(&d, i) != JK_ARR)
		bad(s, "'match' is not an array of strings");
	g->match = xcalloc((size_t)d.tok[i].size + 1, sizeof *g->match);
	for (m = 0, k = i + 1; m < d.tok[i].size; m++, k = json_skip(&d, k)) {
		size_t j;
		if (json_kind(&d, k) != JK_STR)
			bad(s, "'match' is not an array of strings");
		json_str(&d, k, &b, NULL);
		for (j = 0; j < b.len; j++)
			b.s[j] = (char)tolower((unsigned char)b.s[j]);
		if (!b.len)
			bad(s, "an empty 'match' pattern");
		g->match[g->nmatch++] = sb_detach(&b);
	}
	g->sm_count = (long long)get_num(s, 0, "sm_count", 0);
	if ((cc = get_str(s, 0, "cc", 0))) {
		if (sscanf(cc, "%d.%d", &g->cc_major, &g->cc_minor) != 2)
			bad(s, "'cc' is not MAJOR.MINOR");
		free(cc);
	}
	i = json_get(&d, 0, "mem_gib");
	if (i >= 0) {
		if (json_kind(&d, i) != JK_ARR || d.tok[i].size != 2 ||
		    !json_todouble(&d, i + 1, &g->mem_gib_min) ||
		    !json_todouble(&d, i + 2, &g->mem_gib_max) || g->mem_gib_min > g->mem_gib_max)
			bad(s, "'mem_gib' is not [min, max]");
	}
	i = json_get(&d, 0, "generic");
	g->generic = i >= 0 && json_kind(&d, i) == JK_TRUE;
	if (g->generic && (!g->sm_count || g->cc_major < 0 || !g->mem_gib_max))
		bad(s, "a generic entry needs 'sm_count', 'cc' and 'mem_gib'");
	g->mem_gbps = get_num(s, 0, "mem_gbps", 0);
	i = json_get(&d, 0, "tflops");
	if (i >= 0) {
		if (json_kind(&d, i) != JK_OBJ)
			bad(s, "'tflops' is not an object");
		for (dt = DT_NONE + 1; dt < DT_COUNT; dt++)
			g->tflops[dt] = get_num(s, i, dtype_key(dt), 0);
		g->fp64_tensor = get_num(s, i, "fp64_tensor", 0);
	}
	s->d = NULL;
	json_doc_free(&d);
}

const struct gputab *
gputab_builtin(void)
{
	static struct gputab tab;
	static int loaded;

	if (!loaded) {
		gputab_load(&tab, NULL);
		loaded = 1;
	}
	return &tab;
}

void
gputab_load(struct gputab *t, const char *path)
{
	struct src s = { "<built-in GPU table>", 0, NULL };
	FILE *fp;
	sbuf line = SBUF_INIT;
	int ch = 0;
	size_t i;

	if (!path) {
		for (i = 0; gpu_spec_lines[i]; i++) {
			s.lineno = i + 1;
			load_line(t, &s, gpu_spec_lines[i], strlen(gpu_spec_lines[i]));
		}
		return;
	}
	s.name = path;
	if (strcmp(path, "-") == 0) {
		fp = stdin;
		s.name = "<stdin>";
	} else if ((fp = fopen(path, "r")) == NULL)
		die(EXIT_DATA, "cannot open '%s': %s", path, strerror(errno));
	while (ch != EOF) {
		sb_reset(&line);
		while ((ch = getc_unlocked(fp)) != EOF && ch != '\n') {
			if (line.len >= json_max_bytes()) {
				s.lineno++;
				bad(&s, "entry is %s", json_limit_text(JSON_ESIZE));
			}
			sb_addc(&line, (char)ch);
		}
		if (ch == EOF && line.len == 0)
			break;
		s.lineno++;
		load_line(t, &s, sb_str(&line), line.len);
	}
	if (ferror(fp))
		die(EXIT_DATA, "cannot read '%s': %s", path, strerror(errno));
	sb_free(&line);
	if (fp != stdin)
		fclose(fp);
}

void
gputab_free(struct gputab *t)
{
	size_t i, j;

	for (i = 0; i < t->n; i++) {
		for (j = 0; j < t->g[i].nmatch; j++)
			free(t->g[i].match[j]);
		free(t->g[i].match);
		free(t->g[i].name);
		free(t->g[i].gfx);
		free(t->g[i].source);
	}
	free(t->g);
	memset(t, 0, sizeof *t);
}

/* The length of pattern p when it matches the lowercased name s, else 0. */
static size_t
pattern_len(const char *p, const char *s)
{
	size_t pl = strlen(p), sl = strlen(s), n;
	int head = p[0] == '^', tail = pl > 0 && p[pl - 1] == '$';
	const char *body = p + head;

	n = pl - (size_t)head - (size_t)tail;
	if (n == 0 || n > sl)
		return 0;
	if (head)
		return memcmp(s, body, n) == 0 && (!tail || sl == n) ? n : 0;
	if (tail)
		return memcmp(s + sl - n, body, n) == 0 ? n : 0;
	return memmem(s, sl, body, n) ? n : 0;
}

static int
fits(const struct gpu *g, long long sm, int ccmaj, int ccmin, long long mem)
{
	double gib = mem > 0 ? (double)mem / (1024.0 * 1024 * 1024) : -1;

	if (g->sm_count && sm >= 0 && g->sm_count != sm)
		return 0;
	if (g->cc_major >= 0 && ccmaj >= 0 && (g->cc_major != ccmaj || g->cc_minor != ccmin))
		return 0;
	if (g->mem_gib_max > 0 && gib >= 0 && (gib < g->mem_gib_min || gib > g->mem_gib_max))
		return 0;
	return 1;
}

static int
same_figures(const struct gpu *a, const struct gpu *b)
{
	return a->mem_gbps == b->mem_gbps && a->fp64_tensor == b->fp64_tensor &&
	    memcmp(a->tflops, b->tflops, sizeof a->tflops) == 0;
}

const struct gpu *
gpu_match(const struct gputab *t, const char *name, long long sm, int ccmaj, int ccmin,
    long long mem, const char **why, char *why_buf, size_t why_len)
{
	char low[256];
	size_t i, j, best = 0, l;
	const struct gpu *hit = NULL, *other = NULL;
	int generic;

	snprintf(low, sizeof low, "%s", name ? name : "");
	for (i = 0; low[i]; i++)
		low[i] = (char)tolower((unsigned char)low[i]);
	for (i = 0; i < t->n; i++) {
		const struct gpu *g = &t->g[i];
		size_t gl = 0;
		for (j = 0; j < g->nmatch; j++)
			if ((l = pattern_len(g->match[j], low)) > gl)
				gl = l;
		if (!gl || !fits(g, sm, ccmaj, ccmin, mem))
			continue;
		if (gl > best) {
			best = gl;
			hit = g;
			other = NULL;
		} else if (gl == best && !same_figures(hit, g) && !other)
			other = g;
	}
	generic = gpu_name_generic(low);
	if (!hit && generic && sm > 0 && ccmaj >= 0 && mem > 0) {
		for (i = 0; i < t->n; i++) {
			const struct gpu *g = &t->g[i];
			if (!g->generic || !fits(g, sm, ccmaj, ccmin, mem))
				continue;
			if (!hit)
				hit = g;
			else if (!same_figures(hit, g) && !other)
				other = g;
		}
	}
	if (hit && other) {
		snprintf(why_buf, why_len, "'%s' fits both %s and %s", name ? name : "", hit->name,
		    other->name);
		*why = why_buf;
		return NULL;
	}
	if (!hit) {
		if (generic)
			snprintf(why_buf, why_len, "the device name '%s' is generic and its "
			    "properties fit no entry of the GPU table", name ? name : "");
		else
			snprintf(why_buf, why_len, "'%s' is not in the GPU table", name);
		*why = why_buf;
	}
	return hit;
}

int
gpu_name_generic(const char *name)
{
	char low[256];
	size_t i;

	snprintf(low, sizeof low, "%s", name ? name : "");
	for (i = 0; low[i]; i++)
		low[i] = (char)tolower((unsigned char)low[i]);
	return !low[0] || strstr(low, "radeon graphics") || !strcmp(low, "gpu");
}

size_t
gpu_generic_fits(const struct gputab *t, long long sm, int ccmaj, int ccmin, long long mem,
    const struct gpu **out, size_t max)
{
	size_t i, n = 0;

	if (sm <= 0 || ccmaj < 0 || mem <= 0)
		return 0;
	for (i = 0; i < t->n; i++) {
		const struct gpu *g = &t->g[i];
		if (!g->generic || !fits(g, sm, ccmaj, ccmin, mem))
			continue;
		if (n < max)
			out[n] = g;
		n++;
	}
	return n;
}

double
gpu_peak(const struct gpu *g, int dtype, int gemm)
{
	if (dtype == DT_FP64 && gemm && g->fp64_tensor > 0)
		return g->fp64_tensor;
	if (dtype <= DT_NONE || dtype >= DT_COUNT)
		return 0;
	return g->tflops[dtype];
}
