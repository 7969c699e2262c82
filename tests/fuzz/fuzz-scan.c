/*
 * libFuzzer harness for the event scanner: the input is a whole trace file
 * (plain or gzip; zio sniffs it), read through a memfd with zio_open() and
 * split by scan_run().  Every event handed out must be a complete JSON object
 * whose tokens (from the strict fast path or the general one) equal jsmn's.
 * Through scan_run_tap (issue 29) every decompressed byte comes out in
 * order, the event array's end is where a closing bracket is, and an event
 * added there as trace-annotate adds its findings leaves a document that
 * scans to one event more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "jshape.h"
#include "json.h"
#include "scan.h"
#include "zio.h"

static json_doc doc;

/* trace-extract's selection, and one without a nested object */
static const struct json_keys keysets[2] = {
	{ 8, 7,
	  { JSON_KEY("ph"), JSON_KEY("name"), JSON_KEY("cat"), JSON_KEY("ts"), JSON_KEY("dur"),
	    JSON_KEY("pid"), JSON_KEY("tid"), JSON_KEY("args") },
	  { JSON_KEY("External id"), JSON_KEY("correlation"), JSON_KEY("stream"),
	    JSON_KEY("cuda_stream"), JSON_KEY("name"), JSON_KEY("Python id"),
	    JSON_KEY("Python parent id") }, 7 },
	{ 3, 0, { JSON_KEY("a"), JSON_KEY("b"), JSON_KEY("") }, { { NULL, 0 } }, -1 },
};

static int
same_token(const jsmntok_t *a, const jsmntok_t *b)
{
	return a->type == b->type && a->start == b->start && a->end == b->end &&
	    (a->type != JSMN_OBJECT || a->size == b->size);
}

/*
 * The selection of ev (from either path) is what jsmn's tokens give: the
 * same members found, each value the same token.
 */
static void
check_selection(const json_doc *ev, const int *idx, const struct json_keys *k)
{
	int ref[32];
	unsigned i;

	if (json_parse(&doc, ev->js, ev->len) < 0)
		abort();
	json_select_doc(&doc, k, ref);
	for (i = 0; i < k->ntop + k->ninner; i++)
		if ((idx[i] < 0) != (ref[i] < 0) ||
		    (idx[i] >= 0 && !same_token(&ev->tok[idx[i]], &doc.tok[ref[i]]))) {
			fprintf(stderr, "member %u selected differently: %.*s\n", i,
			    (int)(ev->len > 2000 ? 2000 : ev->len), ev->js);
			abort();
		}
}

static int
on_select(void *ctx, const json_doc *ev, const int *idx, unsigned long long off)
{
	(void)off;
	if (ev->ntok > 0)
		check_selection(ev, idx, ctx);
	return 0;
}

/*
 * Does the object at token o (top: the root, else a nest object) hold a
 * member the fast selection leaves to the general path: a key with an
 * escape, a selected value that is a container (the nest member: an
 * array), in any occurrence?
 */
static int
refusal_reason(const json_doc *d, int o, const struct json_keys *k, int top)
{
	int i, m, n = d->tok[o].size;
	unsigned j;

	for (m = 0, i = o + 1; m < n; m++) {
		size_t kl;
		const char *key = json_span(d, i, &kl);
		const jsmntok_t *v = &d->tok[i + 1];
		int sel = -1;
		if (memchr(key, '\\', kl))
			return 1;
		for (j = 0; j < (top ? k->ntop : k->ninner); j++) {
			const struct json_key *c = top ? &k->top[j] : &k->inner[j];
			if (c->n == kl && kl && memcmp(c->s, key, kl) == 0)
				sel = (int)j;
		}
		if (sel >= 0) {
			if (top && sel == k->nest) {
				if (v->type == JSMN_ARRAY)
					return 1;
				if (v->type == JSMN_OBJECT && refusal_reason(d, i + 1, k, 0))
					return 1;
			} else if (v->type == JSMN_OBJECT || v->type == JSMN_ARRAY) {
				return 1;
			}
		}
		i = json_skip(d, i + 1);
	}
	return 0;
}

/*
 * The input as one object: json_select_object takes exactly what
 * json_parse_object takes, but for the cases it leaves to the general path
 * (a selected value that is a container other than the nest object, an
 * escape in a key at a searched level).
 */
static void
check_select_object(const unsigned char *data, size_t size, const struct json_keys *k)
{
	static json_doc full, sel;
	int idx[32];
	size_t lf = json_parse_object(&full, (const char *)data, size);
	size_t ls = json_select_object(&sel, (const char *)data, size, k, idx);

	/* through a memory of shapes: learnt the first time, fitted the second */
	{
		struct json_shapes sh;
		int r;
		json_shapes_init(&sh, k);
		for (r = 0; r < 2; r++) {
			static json_doc hd;
			int hidx[32];
			size_t lh = json_select_shaped(&sh, &hd, (const char *)data, size, hidx);
			if (lh != ls)
				abort();	/* shaped and strict selection disagree */
			if (lh)
				check_selection(&hd, hidx, k);
		}
		json_shapes_free(&sh);
	}
	if (ls) {
		if (ls != lf)
			abort();	/* the fast selection took text the strict tokenizer refuses */
		check_selection(&sel, idx, k);
		return;
	}
	if (!lf || refusal_reason(&full, 0, k, 1))
		return;
	fprintf(stderr, "json_select_object refused a plain object: %.*s\n",
	    (int)(size > 2000 ? 2000 : size), (const char *)data);
	abort();
}

static int
on_event(void *ctx, const json_doc *ev, unsigned long long off)
{
	const char *js = ev->js;
	size_t len = ev->len;
	int i;

	(void)ctx;
	/* The scanner validated the grammar, so the span is one object ... */
	if (len < 2 || js[0] != '{' || js[len - 1] != '}' || ev->ntok < 1 ||
	    ev->tok[0].type != JSMN_OBJECT || json_skip(ev, 0) != ev->ntok ||
	    json_parse(&doc, js, len) < 0 || doc.ntok != ev->ntok) {
		fprintf(stderr, "bad event span at %llu: %.*s\n", off, (int)(len > 2000 ? 2000 : len), js);
		abort();
	}
	/* ... and its tokens, from either path, are exactly jsmn's. */
	for (i = 0; i < ev->ntok; i++)
		if (memcmp(&ev->tok[i], &doc.tok[i], sizeof doc.tok[i]) != 0) {
			fprintf(stderr, "token %d differs from jsmn's at %llu: %.*s\n", i, off,
			    (int)(len > 2000 ? 2000 : len), js);
			abort();
		}
	return 0;
}

/*
 * A top-level member (scan_run_members): a whole object, array, number or
 * literal (never a string), tokenized as jsmn does.
 */
static int
on_member(void *ctx, int which, const json_doc *v)
{
	(void)ctx;
	if (which < 0 || which > 2 || (v->ntok > 0 && v->tok[0].type == JSMN_STRING) ||
	    (v->ntok > 0 && json_skip(v, 0) != v->ntok))
		abort();
	return 0;
}

/* What scan_run_tap handed out, and the stats as they were at the bracket's chunk. */
struct tapped {
	char *b;
	size_t n, cap;
};

static int
on_tap(void *ctx, const char *p, size_t n, unsigned long long off, const struct scan_stats *st)
{
	struct tapped *t = ctx;

	(void)st;
	if (off != t->n)
		abort();	/* a chunk out of order, or bytes left out */
	if (t->n + n > t->cap) {
		t->cap = (t->n + n) * 2;
		t->b = realloc(t->b, t->cap);
		if (!t->b)
			abort();
	}
	memcpy(t->b + t->n, p, n);
	t->n += n;
	return 0;
}

/* Scan text[0..n) from memory; its outcome and stats. */
static int
scan_text(const char *text, size_t n, struct scan_stats *st)
{
	char path[64], err[1024];
	int fd = fuzz_memfd((const unsigned char *)text, n), r;
	zio *z;

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	z = zio_open(path);
	if (!z)
		abort();
	r = scan_run(z, "fuzz", NULL, NULL, st, err, sizeof err, NULL);
	zio_close(z);
	close(fd);
	return r;
}

static void
check_tap(const unsigned char *data, size_t size, int r0, const struct scan_stats *st0)
{
	static const char ev[] = "{\"ph\":\"i\",\"ts\":1}";
	struct tapped t = { NULL, 0, 0 };
	struct scan_stats st, st2;
	char path[64], err[1024], *out;
	int fd = fuzz_memfd(data, size), r;
	size_t at, k, on;
	zio *z;

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	z = zio_open(path);
	if (!z)
		abort();
	r = scan_run_tap(z, "fuzz", on_tap, &t, &st, err, sizeof err);
	zio_close(z);
	close(fd);
	if (r != r0 || st.events != st0->events)
		abort();
	if (r != SCAN_OK || !st.has_events) {
		free(t.b);
		return;
	}
	/* plain input comes out as it went in */
	if (!(size >= 2 && data[0] == 0x1f && data[1] == 0x8b) &&
	    (t.n != size || memcmp(t.b, data, size) != 0))
		abort();
	at = (size_t)st.events_close;
	if (at > t.n || (st.events_closed && (at == t.n || t.b[at] != ']')) ||
	    (!st.events_closed && (!st.missing_close || at != t.n)))
		abort();
	for (k = at; k > 0 && strchr(" \t\r\n", t.b[k - 1]); k--)
		;
	if (k == 0 || (st.events_before == '[' && t.b[k - 1] != '[') ||
	    (st.events_before == ',' && t.b[k - 1] != ',') ||
	    (st.events_before == 'v' && (t.b[k - 1] == '[' || t.b[k - 1] == ',')))
		abort();
	/* the insertion of trace-annotate: one event more, the rest as it was */
	out = malloc(t.n + sizeof ev + 4);
	if (!out)
		abort();
	memcpy(out, t.b, at);
	on = at;
	if (st.events_before == 'v')
		out[on++] = ',';
	memcpy(out + on, ev, sizeof ev - 1);
	on += sizeof ev - 1;
	memcpy(out + on, t.b + at, t.n - at);
	on += t.n - at;
	if (!st.events_closed)
		out[on++] = ']';
	if (scan_text(out, on, &st2) != SCAN_OK || st2.events != st.events + 1)
		abort();
	free(out);
	free(t.b);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char path[64], err[1024];
	struct scan_stats st;
	int fd = fuzz_memfd(data, size), r;
	zio *z;

	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	z = zio_open(path);
	if (!z)
		abort();
	r = scan_run(z, "fuzz", on_event, NULL, &st, err, sizeof err, NULL);
	if (r == SCAN_ERROR && err[0] == '\0')
		abort();	/* every error carries a message */
	/* the same document with a selection: the same outcome, the same members */
	{
		struct scan_stats st2;
		char err2[1024];
		int fd2 = fuzz_memfd(data, size), r2, ks;
		zio *z2;
		char path2[64];
		snprintf(path2, sizeof path2, "/proc/self/fd/%d", fd2);
		for (ks = 0; ks < 2; ks++) {
			z2 = zio_open(path2);
			if (!z2)
				abort();
			r2 = scan_run_select(z2, "fuzz", &keysets[ks], on_select, (void *)&keysets[ks],
			    &st2, err2, sizeof err2);
			zio_close(z2);
			lseek(fd2, 0, SEEK_SET);
			if (r2 != r || st2.events != st.events || strcmp(err, err2) != 0)
				abort();
		}
		close(fd2);
	}
	/* with members asked for: the same outcome and the same events */
	{
		static const char *const mkeys[] = { "deviceProperties", "traceName",
			"distributedInfo", NULL };
		static const struct scan_members m = { mkeys, on_member };
		struct scan_stats st3;
		char err3[1024];
		int fd3 = fuzz_memfd(data, size), r3;
		char path3[64];
		zio *z3;
		snprintf(path3, sizeof path3, "/proc/self/fd/%d", fd3);
		z3 = zio_open(path3);
		if (!z3)
			abort();
		r3 = scan_run_members(z3, "fuzz", NULL, NULL, on_event, &m, NULL, &st3, err3,
		    sizeof err3);
		zio_close(z3);
		close(fd3);
		if (r3 != r || st3.events != st.events || strcmp(err, err3) != 0)
			abort();
	}
	check_tap(data, size, r, &st);
	check_select_object(data, size, &keysets[0]);
	check_select_object(data, size, &keysets[1]);
	if (st.bytes > 0 && st.events > st.elements)
		abort();
	zio_close(z);
	close(fd);
	return 0;
}
