/* JSON-lines record writer and reader. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "num.h"
#include "rec.h"
#include "xalloc.h"

static sbuf line;
static FILE *also;		/* rec_also() */

void
rec_begin(const char *type)
{
	sb_reset(&line);
	sb_adds(&line, "{\"type\":\"");
	sb_adds(&line, type);
	sb_addc(&line, '"');
}

static void
key(const char *k)
{
	sb_add(&line, ",\"", 2);
	sb_adds(&line, k);
	sb_add(&line, "\":", 2);
}

void
rec_str(const char *k, const char *s, size_t n)
{
	key(k);
	json_quote(&line, s, n);
}

void
rec_cstr(const char *k, const char *s)
{
	if (!s) {
		rec_null(k);
		return;
	}
	rec_str(k, s, strlen(s));
}

void
rec_int(const char *k, long long v)
{
	char buf[24], *p = buf + sizeof buf;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	/* Hand-rolled: this runs for every event and printf dominated it. */
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	key(k);
	sb_add(&line, p, (size_t)(buf + sizeof buf - p));
}

void
rec_num(const char *k, double v)
{
	char buf[40];

	key(k);
	sb_adds(&line, num_json(v, buf));
}

void
rec_numtext(const char *k, const char *txt, size_t n)
{
	key(k);
	sb_add(&line, txt, n);
}

void
rec_bool(const char *k, int v)
{
	key(k);
	sb_adds(&line, v ? "true" : "false");
}

void
rec_null(const char *k)
{
	key(k);
	sb_adds(&line, "null");
}

void
rec_raw(const char *k, const char *json, size_t n)
{
	key(k);
	sb_add(&line, json, n);
}

void
rec_end(void)
{
	sb_add(&line, "}\n", 2);
	fwrite_unlocked(line.s, 1, line.len, stdout);
	if (also)
		fwrite(line.s, 1, line.len, also);
}

void
rec_line(const char *s, size_t n)
{
	fwrite_unlocked(s, 1, n, stdout);
	putc_unlocked('\n', stdout);
	if (also) {
		fwrite(s, 1, n, also);
		putc('\n', also);
	}
}

void
rec_also(FILE *fp)
{
	also = fp;
}

void
rec_reader_init(rec_reader *r, FILE *fp, const char *name)
{
	memset(r, 0, sizeof *r);
	r->fp = fp;
	r->name = name;
	r->lastpid_len = r->lasttid_len = (size_t)-1;
}

void
rec_reader_free(rec_reader *r)
{
	free(r->buf);
	free(r->mval);
	r->mval = NULL;
	json_doc_free(&r->doc);
	r->buf = NULL;
	r->line = NULL;
}

/* Refill the buffer keeping the unread tail; returns bytes read (0 at EOF). */
static ssize_t
refill(rec_reader *r)
{
	ssize_t n;
	size_t tail = r->bend - r->bstart;

	if (r->bstart > 0) {
		memmove(r->buf, r->buf + r->bstart, tail);
		r->bstart = 0;
		r->bend = tail;
	}
	if (r->bcap - r->bend < 65536) {
		r->bcap = r->bcap ? r->bcap * 2 : 1 << 20;
		r->buf = xrealloc(r->buf, r->bcap);
	}
	for (;;) {
		n = read(fileno(r->fp), r->buf + r->bend, r->bcap - r->bend - 1);
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	if (n < 0)
		die(EXIT_DATA, "cannot read '%s': %s", r->name, strerror(errno));
	r->bend += (size_t)n;
	return n;
}

#define TYPE_PREFIX "{\"type\":\""

int
rec_next(rec_reader *r)
{
	char *p, *nl;
	size_t n;

	for (;;) {
		p = r->buf ? r->buf + r->bstart : NULL;	/* no buffer before the first read */
		nl = r->bend > r->bstart ? memchr(p, '\n', r->bend - r->bstart) : NULL;
		if (!nl) {
			if (!r->eof && refill(r) > 0)
				continue;
			r->eof = 1;
			if (r->bend == r->bstart)
				return 0;
			/* last line without its newline */
			p = r->buf + r->bstart;
			nl = r->buf + r->bend;
			if (r->bend >= r->bcap) {
				r->buf = xrealloc(r->buf, r->bcap + 1);
				r->bcap++;
				p = r->buf + r->bstart;
				nl = r->buf + r->bend;
			}
		}
		n = (size_t)(nl - p);
		r->bstart += n + (nl < r->buf + r->bend ? 1 : 0);
		if (nl == r->buf + r->bend)
			r->bend = r->bstart;
		*nl = '\0';
		r->lineno++;
		while (n > 0 && p[n - 1] == '\r')
			p[--n] = '\0';
		if (n == 0)
			continue;
		/* A record cut short (an upstream tool killed mid-write) must not
		 * pass through as if it were whole. */
		if (p[n - 1] != '}')
			die(EXIT_DATA, "%s:%zu: record is not a JSON object (the line does not end with '}'; "
			    "was the upstream tool cut short?)", r->name, r->lineno);
		r->line = p;
		r->len = n;
		r->parsed = 0;
		r->type = NULL;
		/* Our writers put "type" first: read it without tokenizing. */
		if (n > sizeof TYPE_PREFIX && memcmp(p, TYPE_PREFIX, sizeof TYPE_PREFIX - 1) == 0) {
			char *t = p + sizeof TYPE_PREFIX - 1;
			char *q = memchr(t, '"', n - (sizeof TYPE_PREFIX - 1));
			if (q && memchr(t, '\\', (size_t)(q - t)) == NULL) {
				r->type = t;
				r->typelen = (size_t)(q - t);
			}
		}
		return 1;
	}
}

const char *
rec_type(rec_reader *r, size_t *n)
{
	int i;

	if (r->type) {
		*n = r->typelen;
		return r->type;
	}
	rec_parse(r);
	i = rec_get(r, "type");
	if (i < 0 || r->doc.tok[i].type != JSMN_STRING)
		die(EXIT_DATA, "%s:%zu: record has no \"type\" string member", r->name, r->lineno);
	r->type = json_span(&r->doc, i, &r->typelen);
	*n = r->typelen;
	return r->type;
}

int
rec_is(rec_reader *r, const char *type)
{
	size_t n;
	const char *t = rec_type(r, &n);

	/* compare lengths first: the type may hold a NUL and be longer than `type` */
	return n == strlen(type) && memcmp(t, type, n) == 0;
}

void
rec_parse(rec_reader *r)
{
	if (r->parsed)
		return;
	int i, m, n;

	/* Our writers' lines take the strict fast path; anything else gets jsmn. */
	if (json_parse_object(&r->doc, r->line, r->len) != r->len &&
	    (json_parse(&r->doc, r->line, r->len) < 0 || r->doc.tok[0].type != JSMN_OBJECT ||
	    json_skip(&r->doc, 0) != r->doc.ntok))
		die(EXIT_DATA, "%s:%zu: record is not a JSON object", r->name, r->lineno);
	/* Index the top-level members once: tools look up several per record. */
	n = r->doc.tok[0].size;
	if ((size_t)n > r->mcap) {
		r->mcap = (size_t)n + 16;
		r->mval = xrealloc(r->mval, r->mcap * sizeof *r->mval);
	}
	for (m = 0, i = 1; m < n; m++) {
		/* jsmn's lenient mode lets a key without a value, or an unquoted one, through */
		if (i + 1 >= r->doc.ntok || r->doc.tok[i].type != JSMN_STRING || r->doc.tok[i].size != 1)
			die(EXIT_DATA, "%s:%zu: record is not a JSON object (a member without a "
			    "quoted key or a value)", r->name, r->lineno);
		r->mval[m] = i + 1;
		i = json_skip(&r->doc, i + 1);
	}
	r->nm = (size_t)n;
	r->parsed = 1;
}

int
rec_get(rec_reader *r, const char *k)
{
	size_t m, kl = strlen(k);
	int found = -1;
	const jsmntok_t *t;

	rec_parse(r);
	for (m = 0; m < r->nm; m++) {
		t = &r->doc.tok[r->mval[m] - 1];
		if ((size_t)(t->end - t->start) == kl && memcmp(r->line + t->start, k, kl) == 0)
			found = r->mval[m];	/* the last duplicate wins */
	}
	return found;
}

int
rec_get_str(rec_reader *r, const char *k, sbuf *out)
{
	int i = rec_get(r, k);

	if (i < 0 || json_kind(&r->doc, i) != JK_STR)
		return 0;
	json_str(&r->doc, i, out, NULL);
	return 1;
}

int
rec_get_num(rec_reader *r, const char *k, double *out)
{
	int i = rec_get(r, k);
	enum json_kind jk = json_kind(&r->doc, i);

	if (jk != JK_INT && jk != JK_FLOAT)
		return 0;
	return json_todouble(&r->doc, i, out);
}

int
rec_get_int(rec_reader *r, const char *k, long long *out)
{
	int i = rec_get(r, k);

	if (json_kind(&r->doc, i) != JK_INT && json_kind(&r->doc, i) != JK_FLOAT)
		return 0;
	return json_coerce_int(&r->doc, i, out);
}

int
rec_get_bool(rec_reader *r, const char *k, int *out)
{
	int i = rec_get(r, k);
	enum json_kind jk = json_kind(&r->doc, i);

	if (jk != JK_TRUE && jk != JK_FALSE)
		return 0;
	*out = jk == JK_TRUE;
	return 1;
}

FILE *
rec_open(const char *path)
{
	FILE *fp;

	if (strcmp(path, "-") == 0)
		return stdin;
	fp = fopen(path, "r");
	if (!fp)
		die(EXIT_DATA, "cannot open '%s': %s", path, strerror(errno));
	return fp;
}

/* The general getters' conversion of the number at p[0..k), on a one-token doc. */
static int
span_number(rec_reader *r, const char *p, size_t k, int conv, void *out)
{
	jsmntok_t t = { JSMN_PRIMITIVE, (int)(p - r->line), (int)(p - r->line + k), 0, -1 };
	json_doc d = { 0 };

	d.js = r->line;
	d.len = r->len;
	d.tok = &t;
	d.ntok = 1;
	return conv == 'f' ? json_todouble(&d, 0, out) : json_coerce_int(&d, 0, out);
}

/* Length of a strict JSON number at p[0..n), or 0; *isint: no fraction or exponent. */
static size_t
number_len(const char *p, size_t n, int *isint)
{
	size_t k = 0;

	*isint = 1;
	if (k < n && p[k] == '-')
		k++;
	if (k < n && p[k] == '0')
		k++;
	else if (k < n && p[k] >= '1' && p[k] <= '9')
		while (++k < n && p[k] >= '0' && p[k] <= '9')
			;
	else
		return 0;
	if (k < n && p[k] == '.') {
		*isint = 0;
		if (++k >= n || p[k] < '0' || p[k] > '9')
			return 0;
		while (++k < n && p[k] >= '0' && p[k] <= '9')
			;
	}
	if (k < n && (p[k] | 0x20) == 'e') {
		*isint = 0;
		if (++k < n && (p[k] == '+' || p[k] == '-'))
			k++;
		if (k >= n || p[k] < '0' || p[k] > '9')
			return 0;
		while (++k < n && p[k] >= '0' && p[k] <= '9')
			;
	}
	return k;
}

/*
 * The lengths of a layout's literal segments, worked out once per layout
 * (layouts are string literals, so their address identifies them).  NULL
 * when the layout has too many conversions to cache; 255 marks a segment
 * too long to store.  Either way rec_match measures the segment itself.
 */
static const unsigned char *
layout_segments(const char *layout)
{
	static struct {
		const char *layout;
		unsigned char seg[32];
	} cache[8];
	static size_t ncache;
	unsigned char seg[sizeof cache[0].seg];
	size_t i, n = 0;
	const char *l = layout, *pct;

	for (i = 0; i < ncache; i++)
		if (cache[i].layout == layout)
			return cache[i].seg;
	for (;;) {
		size_t len;
		if (n == sizeof seg)
			return NULL;
		pct = strchr(l, '%');
		len = pct ? (size_t)(pct - l) : strlen(l);
		seg[n++] = len < 255 ? (unsigned char)len : 255;
		if (!pct)
			break;
		l = pct + 2;
	}
	i = ncache < 8 ? ncache++ : 7;	/* more layouts than slots: the last slot is reused */
	cache[i].layout = layout;
	memcpy(cache[i].seg, seg, n);
	return cache[i].seg;
}

int
rec_match(rec_reader *r, const char *layout, ...)
{
	const char *p = r->line, *e = r->line + r->len, *l = layout, *q;
	va_list ap;
	int ok = 0;

	const unsigned char *seg = layout_segments(layout);

	va_start(ap, layout);
	for (;; seg = seg ? seg + 1 : NULL) {
		/* literal text up to the next conversion or the end */
		size_t n;
		if (seg && *seg != 255) {
			n = *seg;
		} else {
			const char *pct = strchr(l, '%');
			n = pct ? (size_t)(pct - l) : strlen(l);
		}
		if ((size_t)(e - p) < n || memcmp(p, l, n) != 0)
			goto out;
		p += n;
		l += n;
		if (!*l) {
			ok = p == e;
			break;
		}
		l++;
		if (*l == 's') {
			const char **sp = va_arg(ap, const char **);
			size_t *np = va_arg(ap, size_t *);
			if (p >= e || *p != '"')
				goto out;
			p++;
			q = p + json_plain_len(p, (size_t)(e - p));
			if (q >= e || *q != '"')
				goto out;
			*sp = p;
			*np = (size_t)(q - p);
			p = q + 1;
		} else if (*l == 'f') {
			double *dp = va_arg(ap, double *);
			int isint;
			size_t k = num_fast_json(p, (size_t)(e - p), dp);	/* the common case */
			if (k == 0) {
				/* what rec_get_num does with the span (json.c) */
				if ((k = number_len(p, (size_t)(e - p), &isint)) == 0 ||
				    (!num_fast_decimal(p, k, dp) && !span_number(r, p, k, 'f', dp)))
					goto out;
			}
			p += k;
		} else if (*l == 'i') {
			long long *ip = va_arg(ap, long long *);
			int isint;
			size_t k = number_len(p, (size_t)(e - p), &isint);
			if (k == 0)
				goto out;
			/* what rec_get_int does with the span (json.c) */
			if (isint && k <= 18 && p[0] != '-') {
				/* num_py_int's value for a short JSON integer */
				long long v = 0;
				size_t j;
				for (j = 0; j < k; j++)
					v = v * 10 + (p[j] - '0');
				*ip = v;
			} else if (isint ? !num_py_int(p, k, ip) : !span_number(r, p, k, 'i', ip))
				goto out;
			p += k;
		} else
			goto out;	/* not a conversion this matcher knows */
		l++;
	}
out:
	va_end(ap);
	return ok;
}

int
rec_frame(rec_reader *r, struct rec_frame *f)
{
	if (!rec_match(r, REC_FRAME_LAYOUT, &f->t, &f->name, &f->name_len, &f->pid, &f->pid_len,
	    &f->tid, &f->tid_len, &f->ts, &f->dur))
		return 0;
	f->same_thread = f->pid_len == r->lastpid_len && f->tid_len == r->lasttid_len &&
	    memcmp(f->pid, r->lastpid, f->pid_len) == 0 &&
	    memcmp(f->tid, r->lasttid, f->tid_len) == 0;
	if (!f->same_thread) {
		int fits = f->pid_len < sizeof r->lastpid && f->tid_len < sizeof r->lasttid;
		memcpy(r->lastpid, f->pid, fits ? f->pid_len : 0);
		memcpy(r->lasttid, f->tid, fits ? f->tid_len : 0);
		r->lastpid_len = fits ? f->pid_len : (size_t)-1;
		r->lasttid_len = fits ? f->tid_len : (size_t)-1;
	}
	return 1;
}
