/* Shapes of validated objects, to read objects laid out alike by comparison (jshape.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jshape.h"
#include "jsonlex.h"
#include "xalloc.h"

#define SHAPE_MAX_SLOTS 256	/* larger objects are not learnt */
#define SHAPE_MAX_TEXT 8192
#define SHAPE_MAX_NUMBER 512	/* json_parse_object's limit */
#define SHAPE_MAX_NODES 16384	/* beyond, the shapes are forgotten and learnt again */
#define SHAPE_MAX_GAP 256
#define NONE UINT32_MAX

enum { SL_STR, SL_NUM, SL_TRUE, SL_FALSE, SL_NULL, SL_END };

/*
 * The shapes form a tree: a node is a value with the literal text before
 * it, its children the values that can follow; an END node's literal is
 * the text after the last value and it says where the selected nested
 * object is.  Objects that share a beginning share its nodes, so an object
 * is compared with each literal once, whichever of its shapes it has.
 */
struct snode {
	uint32_t lit, litlen;	/* in c->text */
	unsigned char kind;	/* SL_* */
	signed char sel;	/* index into idx, or -1 */
	uint32_t child, next;	/* first child, next sibling: node indexes or NONE */
	uint32_t end;		/* END: index into c->ends */
};

/* What an END node knows of its object. */
struct send {
	int ntop;		/* members of the object */
	int nest;		/* the nest member's object is selected: */
	unsigned nl, no, cl, co;	/* '{' is byte no of literal nl, '}' byte co of literal cl */
	int nsize;
};

struct json_shape {
	struct snode *node;
	size_t nnode, capnode;
	char *text;
	size_t ntext, captext;
	struct send *ends;
	size_t nend, capend;
	uint32_t root;		/* first node of the first level */
};

void
json_shapes_init(struct json_shapes *c, const struct json_keys *k)
{
	memset(c, 0, sizeof *c);
	c->keys = k;
	c->gap = 1;
}

static void
tree_free(struct json_shape *t)
{
	if (!t)
		return;
	free(t->node);
	free(t->text);
	free(t->ends);
	free(t);
}

void
json_shapes_free(struct json_shapes *c)
{
	tree_free(c->tree);
	json_doc_free(&c->full);
	memset(c, 0, sizeof *c);
}

static inline int
add_tok(json_doc *d, int *nt, jsmntype_t type, size_t start, size_t end, int size)
{
	jsmntok_t *t;

	if ((unsigned)*nt >= d->cap) {
		d->cap = d->cap ? d->cap * 2 : 256;
		d->tok = xrealloc(d->tok, d->cap * sizeof *d->tok);
	}
	t = &d->tok[*nt];
	t->type = type;
	t->start = (int)start;
	t->end = (int)end;
	t->size = size;
	t->parent = -1;
	return (*nt)++;
}

/* Are p[0..n) and q[0..n) the same bytes?  Literals are short: eight at a time. */
static inline int
same(const char *p, const char *q, size_t n)
{
	uint64_t a, b;

	while (n >= 8) {
		memcpy(&a, p, 8);
		memcpy(&b, q, 8);
		if (a != b)
			return 0;
		p += 8;
		q += 8;
		n -= 8;
	}
	while (n--)
		if (*p++ != *q++)
			return 0;
	return 1;
}

/* json_number_len's grammar, inline: the length of the number at s[0..end), or 0. */
static inline size_t
number(const char *s, const char *end)
{
	return jl_number_len((const unsigned char *)s, (const unsigned char *)end);
}

/* The length of a valid value of `kind` at p[0..e), or 0; a string's counts its closing quote. */
static inline size_t
value(int kind, const char *p, const char *e)
{
	size_t r;

	switch (kind) {
	case SL_STR:
		r = json_string_run(p, (size_t)(e - p));
		/* an escape or a control character is the strict path's */
		return r < (size_t)(e - p) && p[r] == '"' ? r + 1 : 0;
	case SL_NUM:
		r = number(p, e);
		return r <= SHAPE_MAX_NUMBER ? r : 0;
	case SL_TRUE:
		return e - p >= 4 && memcmp(p, "true", 4) == 0 ? 4 : 0;
	case SL_FALSE:
		return e - p >= 5 && memcmp(p, "false", 5) == 0 ? 5 : 0;
	default:
		return e - p >= 4 && memcmp(p, "null", 4) == 0 ? 4 : 0;
	}
}

/*
 * Walk the tree along js[0..len): at each level the child whose literal
 * comes next and whose value is valid; an END node whose literal ends the
 * object ends the walk.  A literal that follows a number starts with the
 * delimiter that ended it in the object learnt, so numbers end where jsmn
 * ends them.  Returns the object's length with d and idx filled, or 0.
 * The child taken at each level moves to the front of its siblings.
 */
static size_t
fit(struct json_shape *t, const struct json_keys *k, json_doc *d, const char *js, size_t len,
    int *idx)
{
	const char *p = js, *e = js + len, *litpos[SHAPE_MAX_SLOTS + 1];
	uint32_t n = t->root, prev = NONE, parent = NONE;
	unsigned j, nsel = k->ntop + k->ninner, level = 0;
	int nt = 0;
	size_t r = 0;

	if (len > (size_t)0x7fffffff)
		return 0;
	for (j = 0; j < nsel; j++)
		idx[j] = -1;
	add_tok(d, &nt, JSMN_OBJECT, 0, 0, 0);
	while (n != NONE) {
		struct snode *s = &t->node[n];
		if ((size_t)(e - p) < s->litlen || !same(p, t->text + s->lit, s->litlen) ||
		    (s->kind != SL_END && (r = value(s->kind, p + s->litlen, e)) == 0)) {
			prev = n;
			n = s->next;
			continue;
		}
		if (prev != NONE) {
			/* to the front of its siblings */
			t->node[prev].next = s->next;
			s->next = parent == NONE ? t->root : t->node[parent].child;
			if (parent == NONE)
				t->root = n;
			else
				t->node[parent].child = n;
		}
		litpos[level] = p;
		p += s->litlen;
		if (s->kind == SL_END) {
			const struct send *x = &t->ends[s->end];
			d->tok[0].size = x->ntop;
			if (x->nest)
				idx[k->nest] = add_tok(d, &nt, JSMN_OBJECT,
				    (size_t)(litpos[x->nl] + x->no - js),
				    (size_t)(litpos[x->cl] + x->co - js) + 1, x->nsize);
			d->js = js;
			d->len = (size_t)(p - js);
			d->tok[0].end = (int)d->len;
			d->ntok = nt;
			return d->len;
		}
		if (s->sel >= 0)
			idx[s->sel] = add_tok(d, &nt, s->kind == SL_STR ? JSMN_STRING : JSMN_PRIMITIVE,
			    (size_t)(p - js), (size_t)(p - js) + r - (s->kind == SL_STR), 0);
		p += r;
		level++;
		parent = n;
		prev = NONE;
		n = s->child;
	}
	return 0;
}

/* The child of `parent` (NONE: the first level) equal to the one described, or a new one. */
static uint32_t
child(struct json_shape *t, uint32_t parent, const char *lit, size_t litlen, int kind, int sel,
    const struct send *x)
{
	uint32_t n = parent == NONE ? t->root : t->node[parent].child, m;
	struct snode *s;

	for (; n != NONE; n = t->node[n].next) {
		s = &t->node[n];
		if (s->kind == kind && s->sel == sel && s->litlen == litlen &&
		    same(t->text + s->lit, lit, litlen) &&
		    (kind != SL_END || memcmp(&t->ends[s->end], x, sizeof *x) == 0))
			return n;
	}
	xgrow(&t->node, &t->capnode, t->nnode + 1, sizeof *t->node);
	xgrow(&t->text, &t->captext, t->ntext + litlen + 1, 1);
	m = (uint32_t)t->nnode++;
	s = &t->node[m];
	memcpy(t->text + t->ntext, lit, litlen);
	s->lit = (uint32_t)t->ntext;
	s->litlen = (uint32_t)litlen;
	t->ntext += litlen;
	s->kind = (unsigned char)kind;
	s->sel = (signed char)sel;
	s->child = NONE;
	s->end = NONE;
	if (kind == SL_END) {
		xgrow(&t->ends, &t->capend, t->nend + 1, sizeof *t->ends);
		t->ends[t->nend] = *x;
		s->end = (uint32_t)t->nend++;
	}
	/* first among its siblings: the newest shape is tried first */
	s->next = parent == NONE ? t->root : t->node[parent].child;
	if (parent == NONE)
		t->root = m;
	else
		t->node[parent].child = m;
	return m;
}

/*
 * Add the shape of js[0..len), one object that json_select_object accepted:
 * tokenized in full, its leaves (strings that are not keys, primitives) are
 * the values, everything between them the literals.  Returns 0 when the
 * object is too large to be worth keeping.
 */
static int
learn(struct json_shapes *c, const char *js, size_t len)
{
	const struct json_keys *k = c->keys;
	json_doc *d = &c->full;
	struct json_shape *t = c->tree;
	struct send x;
	size_t prev = 0, nstart = 0, nend = 0;
	int fidx[64], i, nestok = -1, nslot = 0, sel;
	unsigned j, n = k->ntop + k->ninner;
	uint32_t at = NONE;

	if (n > 64 || len > SHAPE_MAX_TEXT || json_parse_object(d, js, len) != len)
		return 0;
	json_select_doc(d, k, fidx);
	memset(&x, 0, sizeof x);
	x.ntop = d->tok[0].size;
	if (k->nest >= 0 && fidx[k->nest] >= 0) {
		if (d->tok[fidx[k->nest]].type == JSMN_OBJECT) {
			nestok = fidx[k->nest];
			nstart = (size_t)d->tok[nestok].start;
			nend = (size_t)d->tok[nestok].end - 1;
			x.nest = 1;
			x.nsize = d->tok[nestok].size;
		}
	}
	/* every selected member must be a leaf or the nest object (json_select_object's rule) */
	for (j = 0; j < n; j++)
		if (fidx[j] >= 0 && fidx[j] != nestok && d->tok[fidx[j]].type != JSMN_PRIMITIVE &&
		    d->tok[fidx[j]].type != JSMN_STRING)
			return 0;
	for (i = 1; i < d->ntok; i++)
		if (d->tok[i].type == JSMN_PRIMITIVE || (d->tok[i].type == JSMN_STRING &&
		    d->tok[i].size == 0))
			nslot++;
	if (nslot > SHAPE_MAX_SLOTS)
		return 0;
	if (!t) {
		t = c->tree = xcalloc(1, sizeof *t);
		t->root = NONE;
	}
	if (t->nnode + (size_t)nslot + 1 > SHAPE_MAX_NODES) {
		/* full: forget every shape, start again */
		t->nnode = t->ntext = t->nend = 0;
		t->root = NONE;
	}
	nslot = 0;
	for (i = 1; i < d->ntok; i++) {
		const jsmntok_t *tk = &d->tok[i];
		size_t vstart = (size_t)tk->start;
		int kind;
		if (!(tk->type == JSMN_PRIMITIVE || (tk->type == JSMN_STRING && tk->size == 0)))
			continue;	/* keys and containers belong to the literal text */
		/* a string's literal runs to its opening quote, included */
		if (nestok >= 0 && nstart >= prev && nstart < vstart) {
			x.nl = (unsigned)nslot;
			x.no = (unsigned)(nstart - prev);
		}
		if (nestok >= 0 && nend >= prev && nend < vstart) {
			x.cl = (unsigned)nslot;
			x.co = (unsigned)(nend - prev);
		}
		sel = -1;
		for (j = 0; j < n; j++)
			if (fidx[j] == i)
				sel = (int)j;
		if (tk->type == JSMN_STRING)
			kind = SL_STR;
		else if (js[vstart] == 't')
			kind = SL_TRUE;
		else if (js[vstart] == 'f')
			kind = SL_FALSE;
		else if (js[vstart] == 'n')
			kind = SL_NULL;
		else
			kind = SL_NUM;
		at = child(t, at, js + prev, vstart - prev, kind, sel, NULL);
		prev = tk->type == JSMN_STRING ? (size_t)tk->end + 1 : (size_t)tk->end;
		nslot++;
	}
	if (nestok >= 0 && nstart >= prev) {
		x.nl = (unsigned)nslot;
		x.no = (unsigned)(nstart - prev);
	}
	if (nestok >= 0 && nend >= prev) {
		x.cl = (unsigned)nslot;
		x.co = (unsigned)(nend - prev);
	}
	child(t, at, js + prev, len - prev, SL_END, -1, &x);
	return 1;
}

size_t
json_select_shaped(struct json_shapes *c, json_doc *d, const char *js, size_t len, int *idx)
{
	size_t n;

	if (c->tree && (n = fit(c->tree, c->keys, d, js, len, idx)) != 0) {
		c->fitted++;
		c->fits_since_learn++;
		return n;
	}
	if ((n = json_select_object(d, js, len, c->keys, idx)) == 0)
		return 0;
	/*
	 * Learn this shape, but less often while the shapes learnt do not fit
	 * again (objects whose layout keeps changing, such as ops with arrays
	 * of their tensors' dimensions).
	 */
	if (++c->misses < c->gap)
		return n;
	c->misses = 0;
	if (c->fits_since_learn)
		c->gap = 1;
	else if (c->gap < SHAPE_MAX_GAP)
		c->gap *= 2;
	c->fits_since_learn = 0;
	if (learn(c, js, n))
		c->learned++;
	return n;	/* learning used its own doc: d and idx are json_select_object's */
}
