/* JSON-lines records: the table's derived data, the typed writer and reader. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "imap.h"
#include "num.h"
#include "rec.h"
#include "reslimit.h"
#include "strtab.h"
#include "xalloc.h"
#include "zio.h"

/*
 * The kernel names of the kernel_name records (trace-extract --name-ids,
 * issue 30): by (trace, id), each name kept once.
 */
struct rec_knames {
	imap by_key;		/* trace << 32 | id -> index into names, + 1 */
	strtab *names;
	unsigned long long n;	/* kernel_name records kept */
};

#define KNAME_KEY_MAX ((1LL << 31) - 1)

static void
knames_free(rec_reader *r)
{
	if (!r->knames)
		return;
	imap_free(&r->knames->by_key);
	strtab_free(r->knames->names);
	free(r->knames);
	r->knames = NULL;
}

/* ---- the table ---- */

#define NEED_REQ 1
#define NEED_OPT 0

const struct rec_memberinfo rec_members[RM_COUNT] = {
#define MEMBER_INFO(t, m, kind, need, dflt) [RM_##t##_##m] = { RT_##t, #m, ",\"" #m "\":", \
	sizeof(",\"" #m "\":") - 1, RK_##kind, NEED_##need, offsetof(struct rec_##t, m), dflt },
#define TYPE_INFO(t, MEMBERS, X) [RM_##t##__] = { RT_##t, NULL, NULL, 0, 0, 0, 0, NULL }, \
	MEMBERS(MEMBER_INFO, t)
	REC_TYPES(TYPE_INFO, 0)
#undef TYPE_INFO
#undef MEMBER_INFO
};

#define REQ_BIT(t, m, kind, need, dflt) | (NEED_##need ? REC_BIT(t, m) : 0)
const struct rec_typeinfo rec_types[RT_COUNT] = {
#define TYPE_ROW(t, MEMBERS, X) [RT_##t] = { #t, RM_##t##__ + 1, \
	0 MEMBERS(COUNT_ONE, t), sizeof(struct rec_##t), 0 MEMBERS(REQ_BIT, t) },
#define COUNT_ONE(t, m, kind, need, dflt) + 1
	REC_TYPES(TYPE_ROW, 0)
#undef COUNT_ONE
#undef TYPE_ROW
};
#undef REQ_BIT

enum rec_type
rec_type_named(const char *s, size_t n)
{
	/* every reader asks once a line: the names' lengths once, the last answer first */
	static size_t len[RT_COUNT];
	static int last = -1;
	int t;

	if (!len[0])
		for (t = 0; t < RT_COUNT; t++)
			len[t] = strlen(rec_types[t].name);
	if (last >= 0 && len[last] == n && memcmp(rec_types[last].name, s, n) == 0)
		return (enum rec_type)last;
	for (t = 0; t < RT_COUNT; t++)
		if (len[t] == n && rec_types[t].name[0] == s[0] && memcmp(rec_types[t].name, s, n) == 0)
			return (enum rec_type)(last = t);
	return RT_UNKNOWN;
}

static void __attribute__((noreturn, format(printf, 1, 2)))
bug(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: internal error: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* ---- writing ---- */

static sbuf line;
static int wtype = -1;		/* the record being written */
static FILE *wfp;		/* where records go; NULL: stdout */
static int wlast;		/* the last member written */
static uint64_t whas;

void
rec_begin(enum rec_type t)
{
	if (wtype >= 0)
		bug("%s record begun inside a %s record", rec_types[t].name, rec_types[wtype].name);
	wtype = (int)t;
	wlast = RM_COUNT;
	whas = 0;
	sb_reset(&line);
	sb_adds(&line, "{\"type\":\"");
	sb_adds(&line, rec_types[t].name);
	sb_addc(&line, '"');
}

/* The member's key, after checking it belongs to the open record, in order. */
static void
key(enum rec_member m, int kind)
{
	const struct rec_memberinfo *mi = &rec_members[m];

	if (wtype < 0 || (int)mi->type != wtype || !mi->name)
		bug("member %d written outside its record", (int)m);
	if (wlast != RM_COUNT && (int)m <= wlast)
		bug("%s.%s written out of table order", rec_types[wtype].name, mi->name);
	if (kind >= 0 && mi->kind != kind && !(kind == RK_INT && mi->kind == RK_NUM))
		bug("%s.%s written with the wrong kind", rec_types[wtype].name, mi->name);
	wlast = (int)m;
	whas |= 1ULL << (m - rec_types[wtype].first);
	sb_add(&line, mi->lead, mi->leadlen);
}

void
rec_str(enum rec_member m, const char *s, size_t n)
{
	key(m, RK_STR);
	json_quote(&line, s, n);
}

void
rec_quoted(enum rec_member m, const char *quoted, size_t n)
{
	key(m, RK_STR);
	sb_add(&line, quoted, n);
}

void
rec_cstr(enum rec_member m, const char *s)
{
	if (!s) {
		rec_null(m);
		return;
	}
	rec_str(m, s, strlen(s));
}

void
rec_id(enum rec_member m, const char *prefix, long long n)
{
	char buf[64];

	snprintf(buf, sizeof buf, "%s-%lld", prefix, n);
	rec_str(m, buf, strlen(buf));
}

void
rec_rstr(enum rec_member m, struct rstr s)
{
	rec_str(m, s.s ? s.s : "", s.n);
}

void
rec_int(enum rec_member m, long long v)
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
	key(m, RK_INT);
	sb_add(&line, p, (size_t)(buf + sizeof buf - p));
}

void
rec_num(enum rec_member m, double v)
{
	char buf[40];

	key(m, RK_NUM);
	sb_adds(&line, num_json(v, buf));
}

void
rec_numtext(enum rec_member m, const char *txt, size_t n)
{
	if (rec_members[m].kind != RK_NUM && rec_members[m].kind != RK_INT)
		bug("%s written as a number", rec_members[m].name);
	key(m, -1);
	sb_add(&line, txt, n);
}

void
rec_bool(enum rec_member m, int v)
{
	key(m, RK_BOOL);
	sb_adds(&line, v ? "true" : "false");
}

void
rec_null(enum rec_member m)
{
	key(m, -1);
	/* null reads back as absent: a required member cannot take it */
	whas &= ~(1ULL << (m - rec_types[wtype].first));
	sb_adds(&line, "null");
}

void
rec_json(enum rec_member m, const char *json, size_t n)
{
	key(m, RK_JSON);
	sb_add(&line, json, n);
}

void
rec_verbatim(enum rec_member m, const char *text, size_t n)
{
	key(m, -1);
	sb_add(&line, text, n);
}

void
rec_end(void)
{
	const struct rec_typeinfo *ti;

	if (wtype < 0)
		bug("rec_end without rec_begin");
	ti = &rec_types[wtype];
	if ((whas & ti->required) != ti->required) {
		unsigned i;
		for (i = 0; i < ti->n; i++)
			if ((ti->required >> i & 1) && !(whas >> i & 1))
				bug("%s record written without its member '%s'", ti->name,
				    rec_members[ti->first + i].name);
	}
	wtype = -1;
	sb_add(&line, "}\n", 2);
	fwrite_unlocked(line.s, 1, line.len, wfp ? wfp : stdout);
}

void
rec_abandon(void)
{
	wtype = -1;
}

void
rec_extend(enum rec_type t, enum rec_member after, const char *text, size_t n)
{
	const struct rec_typeinfo *ti = &rec_types[t];

	if (wtype >= 0)
		bug("%s record extended inside a %s record", ti->name, rec_types[wtype].name);
	if (after < ti->first || after >= ti->first + ti->n)
		bug("%s record extended after a member of another type", ti->name);
	if (n < 2 || text[n - 1] != '}')
		bug("%s record to extend is not a whole record", ti->name);
	wtype = (int)t;
	wlast = (int)after;
	whas = ti->required;	/* checked when the line was first written */
	sb_reset(&line);
	sb_add(&line, text, n - 1);
}

void
rec_write(enum rec_type t, const void *rec)
{
	const struct rec_typeinfo *ti = &rec_types[t];
	uint64_t has = *(const uint64_t *)rec;
	unsigned i;

	rec_begin(t);
	for (i = 0; i < ti->n; i++) {
		enum rec_member m = (enum rec_member)(ti->first + i);
		const char *f = (const char *)rec + rec_members[m].offset;
		if (!(has >> i & 1))
			continue;
		switch (rec_members[m].kind) {
		case RK_INT:
			rec_int(m, *(const long long *)(const void *)f);
			break;
		case RK_NUM:
			rec_num(m, *(const double *)(const void *)f);
			break;
		case RK_BOOL:
			rec_bool(m, *(const int *)(const void *)f);
			break;
		case RK_STR:
			rec_rstr(m, *(const struct rstr *)(const void *)f);
			break;
		case RK_JSON: {
			const struct rstr *j = (const struct rstr *)(const void *)f;
			rec_json(m, j->s, j->n);
			break;
		}
		}
	}
	rec_end();
}

void
rec_line(const char *s, size_t n)
{
	FILE *fp = wfp ? wfp : stdout;

	fwrite_unlocked(s, 1, n, fp);
	putc_unlocked('\n', fp);
}

void
rec_output(FILE *fp)
{
	wfp = fp;
}

/* ---- reading lines ---- */

void
rec_reader_init(rec_reader *r, FILE *fp, const char *name)
{
	memset(r, 0, sizeof *r);
	r->fp = fp;
	r->name = name;
	r->tid = -1;
}

void
rec_reader_free(rec_reader *r)
{
	free(r->buf);
	free(r->mval);
	json_doc_free(&r->doc);
	sb_free(&r->scratch);
	sb_free(&r->typebuf);
	sb_free(&r->keybuf);
	knames_free(r);
	memset(r, 0, sizeof *r);
}

void
rec_die(const rec_reader *r, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];		/* not the heap: a test's die() may return by longjmp */

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	die(EXIT_DATA, "%s:%zu: %s", r->name, r->lineno, msg);
}

/*
 * What the first line of a stream that is not records may be instead, as
 * advice for its error ("" when nothing says): a trace and a report are the
 * documents people pipe into a filter by mistake.
 */
static const char *
not_records_hint(const char *p, size_t n)
{
	size_t k = n < 4096 ? n : 4096;

	if (n >= 2 && (unsigned char)p[0] == 0x1f && (unsigned char)p[1] == 0x8b)
		return "; this is gzip data on a stream read once: name the file, or gunzip it "
		    "first (a torch.profiler trace: run trace-extract on it)";
	if ((n == 1 && (*p == '{' || *p == '[')) || memmem(p, k, "\"traceEvents\"", 13) ||
	    memmem(p, k, "\"schemaVersion\"", 15) || memmem(p, k, "\"deviceProperties\"", 18))
		return "; this looks like a JSON document such as a torch.profiler trace, not a "
		    "record stream: run trace-extract on the trace first (or triage --input)";
	if (n > 10 && memcmp(p, "{\"schema\":", 10) == 0 && memmem(p, k, "\"reports\"", 9))
		return "; this is a triage report (--format json), not its records: the tools "
		    "read --format jsonl";
	return "";
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
		/* a line past the limit is refused (rec_next): never hold twice that */
		size_t c = r->bcap ? xmul(r->bcap, 2) : 1 << 20, top = json_max_bytes() + 65537;
		r->bcap = c < top ? c : top > r->bcap ? top : c;
		r->buf = xrealloc(r->buf, r->bcap);
	}
	for (;;) {
		/* a gzip record file is a stream of its own (rec_open) */
		if (fileno(r->fp) < 0)
			n = (ssize_t)fread(r->buf + r->bend, 1, r->bcap - r->bend - 1, r->fp);
		else
			n = read(fileno(r->fp), r->buf + r->bend, r->bcap - r->bend - 1);
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	if (n < 0 && errno == EBADF && r->fp == stdin)
		n = 0;		/* a closed standard input (<&-) is an empty one (issue 27) */
	if (n < 0 || (fileno(r->fp) < 0 && ferror(r->fp)))
		die(EXIT_DATA, "cannot read '%s': %s", r->name, strerror(errno));
	/* a record stream is one input too (reslimit.h) */
	if ((r->nread += (unsigned long long)n) > limit_get(LIM_INPUT_BYTES))
		die(EXIT_DATA, "'%s': the record stream is larger than %s", r->name,
		    limit_text(LIM_INPUT_BYTES));
	r->bend += (size_t)n;
	return n;
}

#define TYPE_PREFIX "{\"type\":\""
#define MAX_BLANK_LINES 1000

/* Records any reader of this process has handed out (rec_require_records). */
static unsigned long long records_read;

void
rec_require_records(void)
{
	if (records_read == 0)
		die(EXIT_EMPTY, "no records in the input: the tool before this one wrote nothing "
		    "(did it fail?); records start with trace-extract");
}


static void
add_kernel_name(rec_reader *r)
{
	struct rec_kernel_name x;
	uint64_t *v;
	int isnew;

	REC_READ(r, kernel_name, &x);
	if (x.t < 0 || x.t > KNAME_KEY_MAX || x.id < 0 || x.id > KNAME_KEY_MAX)
		rec_die(r, "kernel_name record: trace %lld, id %lld: each must be from 0 to %lld",
		    x.t, x.id, KNAME_KEY_MAX);
	if (!r->knames) {
		r->knames = xcalloc(1, sizeof *r->knames);
		r->knames->names = strtab_new();
	}
	/* a trace has no more names than kernels: the kernels' limit bounds them (reslimit.h) */
	if (r->knames->n >= limit_get(LIM_KERNELS))
		rec_die(r, "more kernel_name records than %s", limit_text(LIM_KERNELS));
	r->knames->n++;
	v = imap_put(&r->knames->by_key, (uint64_t)x.t << 32 | (uint64_t)x.id, &isnew);
	if (!isnew)
		rec_die(r, "kernel_name record: id %lld of trace %lld was given before", x.id, x.t);
	*v = (uint64_t)strtab_intern(r->knames->names, x.name.s, x.name.n) + 1;
}

/* A kernel record's name from its name_ref (rec.h), or its name checked. */
static void
kernel_name_of(rec_reader *r, struct rec_kernel *k)
{
	const uint64_t *v;
	uint32_t id;

	if (!REC_HAS(k, kernel, name_ref)) {
		if (!REC_HAS(k, kernel, name))
			rec_die(r, "kernel record: member 'name' is missing");
		return;
	}
	if (REC_HAS(k, kernel, name))
		rec_die(r, "kernel record: both 'name' and 'name_ref' are given; a record names "
		    "its kernel one way");
	if (k->t < 0 || k->t > KNAME_KEY_MAX || k->name_ref < 0 || k->name_ref > KNAME_KEY_MAX ||
	    !r->knames ||
	    !(v = imap_get(&r->knames->by_key, (uint64_t)k->t << 32 | (uint64_t)k->name_ref)))
		rec_die(r, "kernel record: name_ref %lld names no kernel_name record of trace %lld "
		    "before it (were the records reordered or cut?)", k->name_ref, k->t);
	id = (uint32_t)(*v - 1);
	k->name.s = strtab_str(r->knames->names, id);
	k->name.n = strtab_len(r->knames->names, id);
	k->has |= REC_BIT(kernel, name);
}

int
rec_next(rec_reader *r)
{
	char *p, *nl;
	size_t n;

	for (;;) {
		p = r->buf ? r->buf + r->bstart : NULL;	/* no buffer before the first read */
		/*
		 * Only the bytes a refill added are searched: a line of L bytes
		 * arrives in pieces of 64 KiB from a pipe, and searching it from
		 * its start after each cost L^2 / 64 KiB (a 300 MiB name ran for
		 * minutes).
		 */
		nl = r->bend > r->bstart + r->scanned ?
		    memchr(p + r->scanned, '\n', r->bend - r->bstart - r->scanned) : NULL;
		if (!nl)
			r->scanned = r->bend - r->bstart;
		if (!nl && r->bend - r->bstart > json_max_bytes()) {
			r->lineno++;
			rec_die(r, "record is %s; was the input a trace rather than records?",
			    json_limit_text(JSON_ESIZE));
		}
		if (!nl) {
			if (!r->eof && refill(r) > 0)
				continue;
			r->eof = 1;
			if (r->bend == r->bstart)
				return 0;
			/* last line without its newline */
			if (r->bend >= r->bcap) {
				r->buf = xrealloc(r->buf, r->bcap + 1);
				r->bcap++;
			}
			p = r->buf + r->bstart;
			nl = r->buf + r->bend;
		}
		n = (size_t)(nl - p);
		r->scanned = 0;
		r->bstart += n + (nl < r->buf + r->bend ? 1 : 0);
		if (nl == r->buf + r->bend)
			r->bend = r->bstart;
		*nl = '\0';
		r->lineno++;
		while (n > 0 && p[n - 1] == '\r')
			p[--n] = '\0';
		if (n == 0) {
			/*
			 * No writer makes blank lines: a run of them is no record
			 * stream (a gigabyte of newlines once took minutes), issue 27.
			 */
			if (++r->blank > MAX_BLANK_LINES)
				rec_die(r, "more than %d blank lines in a row: not a record stream "
				    "(records are one JSON object a line)", MAX_BLANK_LINES);
			continue;
		}
		r->blank = 0;
		/* A record cut short (an upstream tool killed mid-write) must not
		 * pass through as if it were whole. */
		if (p[n - 1] != '}') {
			const char *h = r->lineno == 1 ? not_records_hint(p, n) : "";
			rec_die(r, "record is not a JSON object (the line does not end with '}'%s)",
			    *h ? h : "; was the upstream tool cut short?");
		}
		r->line = p;
		r->len = n;
		records_read++;
		r->parsed = 0;
		r->type = NULL;
		r->tid = -1;
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

void
rec_parse(rec_reader *r)
{
	int i, m, n;

	if (r->parsed)
		return;
	/* Our writers' lines take the strict fast path; anything else the general one. */
	if (json_parse_object(&r->doc, r->line, r->len) != r->len) {
		int rc = json_parse(&r->doc, r->line, r->len);
		if (rc == JSON_EDEPTH || rc == JSON_ESIZE)
			rec_die(r, "record is %s (at byte %zu of the line)", json_limit_text(rc),
			    r->doc.err_off);
		if (rc < 0 || r->doc.tok[0].type != JSMN_OBJECT)
			rec_die(r, "record is not a JSON object");
	}
	/* Index the top-level members once. */
	n = r->doc.tok[0].size;
	if ((size_t)n > r->mcap) {
		r->mcap = (size_t)n + 16;
		r->mval = xreallocarray(r->mval, r->mcap, sizeof *r->mval);
	}
	for (m = 0, i = 1; m < n; m++) {
		/* jsmn's lenient mode lets a key without a value, or an unquoted one, through */
		if (i + 1 >= r->doc.ntok || r->doc.tok[i].type != JSMN_STRING || r->doc.tok[i].size != 1)
			rec_die(r, "record is not a JSON object (a member without a quoted key or a "
			    "value)");
		r->mval[m] = i + 1;
		i = json_skip(&r->doc, i + 1);
	}
	r->nm = (size_t)n;
	r->parsed = 1;
}

const char *
rec_type(rec_reader *r, size_t *n)
{
	size_t m;
	int found = -1;

	if (r->type) {
		*n = r->typelen;
		return r->type;
	}
	rec_parse(r);
	for (m = 0; m < r->nm; m++)
		if (json_str_eq(&r->doc, r->mval[m] - 1, "type", 4))
			found = r->mval[m];
	if (found < 0 || r->doc.tok[found].type != JSMN_STRING)
		rec_die(r, "record has no \"type\" string member%s",
		    r->lineno == 1 ? not_records_hint(r->line, r->len) : "");
	r->type = json_span(&r->doc, found, &r->typelen);
	if (memchr(r->type, '\\', r->typelen)) {
		/* compared decoded, like every name (issue 21) */
		sb_reset(&r->typebuf);
		json_str(&r->doc, found, &r->typebuf, NULL);
		r->type = sb_str(&r->typebuf);
		r->typelen = r->typebuf.len;
	}
	*n = r->typelen;
	return r->type;
}

enum rec_type
rec_type_of(rec_reader *r)
{
	size_t n;
	const char *t;

	if (r->tid < 0) {
		t = rec_type(r, &n);
		r->tid = (int)rec_type_named(t, n);
		/*
		 * Every reader keeps the kernel names for the kernel records after
		 * them, until the next trace record (rank-skew reads several
		 * ranks' streams in one, each numbering its traces and names from
		 * 0), in whatever layout the lines come: each reader types every
		 * line before it reads one.
		 */
		if (r->tid == RT_kernel_name)
			add_kernel_name(r);
		else if (r->tid == RT_trace)
			knames_free(r);
	}
	return (enum rec_type)r->tid;
}

int
rec_is(rec_reader *r, const char *type)
{
	size_t n;
	const char *t = rec_type(r, &n);

	/* compare lengths first: the type may hold a NUL and be longer than `type` */
	return n == strlen(type) && memcmp(t, type, n) == 0;
}

/* ---- decoding ---- */

static const char *
kind_name(int k)
{
	static const char *names[] = { "an integer", "a number", "true or false", "a string",
		"a JSON value" };
	return names[k];
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

/* The general path's conversion of the number at p[0..k) (json.c's rules). */
static int
span_number(const rec_reader *r, const char *p, size_t k, int kind, void *out)
{
	jsmntok_t t = { JSMN_PRIMITIVE, (int)(p - r->line), (int)(p - r->line + k), 0, -1 };
	json_doc d = { 0 };

	d.js = r->line;
	d.len = r->len;
	d.tok = &t;
	d.ntok = 1;
	return kind == RK_NUM ? json_todouble(&d, 0, out) : json_coerce_int(&d, 0, out);
}

/*
 * May a number member of this type read as infinity (a JSON number too
 * large for a double, 1e999)?  Only the events' times: a corrupt trace's
 * event is the tool's to leave out with a warning (step-stats, trace-stage);
 * a table's figure, written by our tools, is never infinite, and one that
 * is would be printed (docs/robustness.md).
 */
static inline int
inf_ok(const struct rec_typeinfo *ti)
{
	enum rec_type t = (enum rec_type)(ti - rec_types);

	return t == RT_kernel || t == RT_cpu_op || t == RT_launch || t == RT_sync ||
	    t == RT_frame || t == RT_annotation;
}

/*
 * Are p[0..n) and q[0..n) the same bytes?  A member's lead (`,"name":`) is
 * 6 to 30 bytes: word compares, the last one overlapping, instead of a
 * call to memcmp per member per line (5 % of each filter, issue 30).
 */
static inline int
same_lead(const char *p, const char *q, size_t n)
{
	uint64_t a, b;
	uint32_t x, y;
	size_t i;

	if (n >= 8) {
		for (i = 0; i + 8 <= n; i += 8) {
			memcpy(&a, p + i, 8);
			memcpy(&b, q + i, 8);
			if (a != b)
				return 0;
		}
		memcpy(&a, p + n - 8, 8);
		memcpy(&b, q + n - 8, 8);
		return a == b;
	}
	if (n >= 4) {
		memcpy(&x, p, 4);
		memcpy(&y, q, 4);
		if (x != y)
			return 0;
		memcpy(&x, p + n - 4, 4);
		memcpy(&y, q + n - 4, 4);
		return x == y;
	}
	for (i = 0; i < n; i++)
		if (p[i] != q[i])
			return 0;
	return 1;
}

/*
 * The fast path: the line as our writers lay it out, members in table
 * order, optional ones possibly missing, strings without escapes.  Returns
 * 1 with *out filled, or 0 when the line is anything else (then the
 * general path decodes it, to the same values).
 */
static int
decode_fast(rec_reader *r, const struct rec_typeinfo *ti, void *out)
{
	const char *p = r->line + sizeof TYPE_PREFIX - 1 + r->typelen + 1, *e = r->line + r->len - 1;
	uint64_t has = 0;
	unsigned i;

	if (!r->type || r->type != r->line + sizeof TYPE_PREFIX - 1)
		return 0;
	for (i = 0; i < ti->n && p < e; i++) {
		const struct rec_memberinfo *mi = &rec_members[ti->first + i];
		char *f = (char *)out + mi->offset;
		size_t k;
		int isint;

		if ((size_t)(e - p) <= mi->leadlen || !same_lead(p, mi->lead, mi->leadlen))
			continue;	/* absent here: an optional member, or another layout */
		p += mi->leadlen;
		switch (mi->kind) {
		case RK_STR: {
			const char *q;
			struct rstr *s = (struct rstr *)(void *)f;
			if (*p != '"')
				return 0;
			q = p + 1 + json_plain_len(p + 1, (size_t)(e - p - 1));
			if (q >= e || *q != '"')
				return 0;
			s->s = p + 1;
			s->n = (size_t)(q - p - 1);
			p = q + 1;
			break;
		}
		case RK_NUM:
			if ((k = num_fast_json(p, (size_t)(e - p), (double *)(void *)f)) == 0) {
				if ((k = number_len(p, (size_t)(e - p), &isint)) == 0 ||
				    (!num_fast_decimal(p, k, (double *)(void *)f) &&
				    !span_number(r, p, k, RK_NUM, f)))
					return 0;
				if (!isfinite(*(double *)(void *)f) && !inf_ok(ti))
					return 0;	/* the general path says why */
			}
			p += k;
			break;
		case RK_INT:
			if ((k = number_len(p, (size_t)(e - p), &isint)) == 0)
				return 0;
			if (isint && k <= 18 && p[0] != '-') {
				long long v = 0;
				size_t j;
				for (j = 0; j < k; j++)
					v = v * 10 + (p[j] - '0');
				*(long long *)(void *)f = v;
			} else if (isint ? !num_py_int(p, k, (long long *)(void *)f) :
			    !span_number(r, p, k, RK_INT, f))
				return 0;
			p += k;
			break;
		case RK_BOOL:
			if ((size_t)(e - p) >= 4 && memcmp(p, "true", 4) == 0) {
				*(int *)(void *)f = 1;
				p += 4;
			} else if ((size_t)(e - p) >= 5 && memcmp(p, "false", 5) == 0) {
				*(int *)(void *)f = 0;
				p += 5;
			} else
				return 0;
			break;
		default: {
			/* JSON values: the py_* id lists ("[3,14,15]"); the general path walks the rest */
			struct rstr *j = (struct rstr *)(void *)f;
			const char *q = p + 1;
			if (*p != '[')
				return 0;
			while (q < e && *q != ']') {
				if (*q < '0' || *q > '9' || (*q == '0' && q + 1 < e && q[1] >= '0' &&
				    q[1] <= '9'))
					return 0;
				while (q < e && *q >= '0' && *q <= '9')
					q++;
				if (q < e && *q == ',' && q + 1 < e && q[1] != ']')
					q++;
				else if (q >= e || *q != ']')
					return 0;
			}
			if (q >= e)
				return 0;
			j->s = p;
			j->n = (size_t)(q + 1 - p);
			p = q + 1;
			break;
		}
		}
		has |= 1ULL << i;
	}
	if (p != e || (has & ti->required) != ti->required)
		return 0;
	*(uint64_t *)out = has;
	return 1;
}

/* Decode the string token into the scratch buffer; its span is fixed up later. */
static void
decode_general(rec_reader *r, const struct rec_typeinfo *ti, void *out)
{
	json_doc *d = &r->doc;
	uint64_t has = 0;
	size_t m, soff[64];
	unsigned i;
	int vi[64], ntype = 0;

	rec_parse(r);
	for (i = 0; i < ti->n; i++)
		vi[i] = -1;
	for (m = 0; m < r->nm; m++) {
		const jsmntok_t *kt = &d->tok[r->mval[m] - 1];
		const char *key = r->line + kt->start;
		size_t kl = (size_t)(kt->end - kt->start);
		if (memchr(key, '\\', kl)) {
			/* an escaped name is compared decoded (issue 21) */
			sb_reset(&r->keybuf);
			json_str(d, r->mval[m] - 1, &r->keybuf, NULL);
			key = sb_str(&r->keybuf);
			kl = r->keybuf.len;
		}
		/*
		 * The type is read from the line's start, where jq takes the last
		 * "type": with two, tools and a jq tap would disagree on the record.
		 */
		if (kl == 4 && memcmp(key, "type", 4) == 0 && ++ntype > 1)
			rec_die(r, "record has two \"type\" members");
		for (i = 0; i < ti->n; i++) {
			const char *name = rec_members[ti->first + i].name;
			if (strlen(name) == kl && memcmp(key, name, kl) == 0)
				vi[i] = r->mval[m];	/* the last duplicate wins */
		}
	}
	sb_reset(&r->scratch);
	for (i = 0; i < ti->n; i++) {
		const struct rec_memberinfo *mi = &rec_members[ti->first + i];
		char *f = (char *)out + mi->offset;
		enum json_kind k = json_kind(d, vi[i]);
		int ok = 1;

		if (k == JK_MISSING || k == JK_NULL) {
			if (mi->required)
				rec_die(r, "%s record: member '%s' is %s", ti->name, mi->name,
				    k == JK_NULL ? "null" : "missing");
			continue;
		}
		switch (mi->kind) {
		case RK_INT:
			ok = (k == JK_INT || k == JK_FLOAT) &&
			    json_coerce_int(d, vi[i], (long long *)(void *)f);
			break;
		case RK_NUM:
			/*
			 * A JSON number too large for a double reads as +-infinity
			 * in an event's time, here as on the fast path (decode_fast),
			 * and the tool decides (docs/robustness.md); in any other
			 * record it is refused, on both paths.  NaN and Infinity are
			 * not JSON numbers.
			 */
			ok = (k == JK_INT || k == JK_FLOAT) &&
			    json_todouble(d, vi[i], (double *)(void *)f);
			if (ok && !isfinite(*(double *)(void *)f)) {
				size_t sn;
				const char *sp = json_span(d, vi[i], &sn);
				if (!json_nonfinite_literal(sp, sn) && !inf_ok(ti))
					rec_die(r, "%s record: member '%s' is not a finite number "
					    "(too large for a double)", ti->name, mi->name);
				ok = inf_ok(ti) && !json_nonfinite_literal(sp, sn);
			}
			break;
		case RK_BOOL:
			ok = k == JK_TRUE || k == JK_FALSE;
			*(int *)(void *)f = k == JK_TRUE;
			break;
		case RK_STR:
			ok = k == JK_STR;
			if (ok) {
				soff[i] = r->scratch.len;
				json_str_append(d, vi[i], &r->scratch, NULL);
				((struct rstr *)(void *)f)->n = r->scratch.len - soff[i];
			}
			break;
		case RK_JSON: {
			struct rstr *s = (struct rstr *)(void *)f;
			const jsmntok_t *t = &d->tok[vi[i]];
			/* strings keep their quotes: the text is the JSON value */
			int q = t->type == JSMN_STRING;
			s->s = r->line + t->start - q;
			s->n = (size_t)(t->end - t->start + 2 * q);
			break;
		}
		}
		if (!ok)
			rec_die(r, "%s record: member '%s' is not %s", ti->name, mi->name,
			    kind_name(mi->kind));
		has |= 1ULL << i;
	}
	/* the scratch buffer is final now: point the decoded strings into it */
	for (i = 0; i < ti->n; i++) {
		const struct rec_memberinfo *mi = &rec_members[ti->first + i];
		if (mi->kind == RK_STR && (has >> i & 1))
			((struct rstr *)(void *)((char *)out + mi->offset))->s =
			    r->scratch.s ? r->scratch.s + soff[i] : "";
	}
	*(uint64_t *)out = has;
}

/* Absent optional members take the table's default. */
static void
apply_defaults(const struct rec_typeinfo *ti, void *out)
{
	/*
	 * The defaults' values, parsed once: a kernel record lacks most of its
	 * optional members, and parsing "1" with strtod for every one was 1 %
	 * of a filter (issue 30).
	 */
	static union dval {
		long long i;
		double d;
		int b;
		size_t len;
	} val[RM_COUNT];
	static int parsed;
	uint64_t has = *(uint64_t *)out;
	unsigned i;

	if (!parsed) {
		for (i = 0; i < RM_COUNT; i++) {
			const struct rec_memberinfo *mi = &rec_members[i];
			if (!mi->dflt)
				continue;
			switch (mi->kind) {
			case RK_INT: val[i].i = strtoll(mi->dflt, NULL, 10); break;
			case RK_NUM: val[i].d = strtod(mi->dflt, NULL); break;
			case RK_BOOL: val[i].b = strcmp(mi->dflt, "true") == 0; break;
			default: val[i].len = strlen(mi->dflt); break;
			}
		}
		parsed = 1;
	}
	for (i = 0; i < ti->n; i++) {
		const struct rec_memberinfo *mi = &rec_members[ti->first + i];
		const union dval *v = &val[ti->first + i];
		void *f = (char *)out + mi->offset;
		if ((has >> i & 1) || !mi->dflt)
			continue;
		switch (mi->kind) {
		case RK_INT:
			*(long long *)f = v->i;
			break;
		case RK_NUM:
			*(double *)f = v->d;
			break;
		case RK_BOOL:
			*(int *)f = v->b;
			break;
		default:
			((struct rstr *)f)->s = mi->dflt;
			((struct rstr *)f)->n = v->len;
			break;
		}
	}
}

void
rec_read(rec_reader *r, enum rec_type t, void *out)
{
	const struct rec_typeinfo *ti = &rec_types[t];

	memset(out, 0, ti->size);
	if (decode_fast(r, ti, out)) {
		r->nfast++;
	} else {
		memset(out, 0, ti->size);
		decode_general(r, ti, out);
	}
	if (ti->n >= 64 || *(uint64_t *)out != (1ULL << ti->n) - 1)
		apply_defaults(ti, out);
	if (t == RT_kernel)
		kernel_name_of(r, out);
}

void
rec_parse_json(rec_reader *r, json_doc *d, struct rstr text)
{
	int rc = json_parse(d, text.s, text.n);

	if (rc == JSON_EDEPTH || rc == JSON_ESIZE)
		rec_die(r, "a member is %s", json_limit_text(rc));
	if (rc < 0)
		rec_die(r, "a member holds malformed JSON");
}

/* A gzip record file, inflated as it is read (zio): its cookie. */
struct gzrec {
	zio *z;
	char *name;
};

static ssize_t
gz_read(void *c, char *buf, size_t n)
{
	struct gzrec *g = c;
	ssize_t k = zio_read(g->z, buf, n);

	if (k < 0)
		die(EXIT_DATA, "'%s': %s", g->name, zio_error(g->z));
	return k;
}

static int
gz_close(void *c)
{
	struct gzrec *g = c;

	zio_close(g->z);
	free(g->name);
	free(g);
	return 0;
}

FILE *
rec_open(const char *path)
{
	static const cookie_io_functions_t io = { gz_read, NULL, NULL, gz_close };
	unsigned char magic[2];
	struct gzrec *g;
	FILE *fp;

	if (strcmp(path, "-") == 0)
		return stdin;
	fp = fopen(path, "r");
	if (!fp)
		die(EXIT_DATA, "cannot open '%s': %s", path, strerror(errno));
	/* a saved report (triage --format jsonl, gzipped): inflated as read, never whole */
	if (pread(fileno(fp), magic, 2, 0) != 2 || magic[0] != 0x1f || magic[1] != 0x8b)
		return fp;
	fclose(fp);
	g = xcalloc(1, sizeof *g);
	if ((g->z = zio_open(path)) == NULL)
		die(EXIT_DATA, "cannot open '%s': %s", path, strerror(errno));
	g->name = xstrdup(path);
	if ((fp = fopencookie(g, "r", io)) == NULL)
		die(EXIT_DATA, "cannot open '%s': %s", path, strerror(errno));
	setvbuf(fp, NULL, _IONBF, 0);	/* fread reaches gz_read directly */
	return fp;
}

char *
rec_detach(enum rec_type t, void *rec)
{
	const struct rec_typeinfo *ti = &rec_types[t];
	uint64_t has = *(uint64_t *)rec;
	size_t total = 1, off = 0;
	unsigned i, pass;
	char *block = NULL;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < ti->n; i++) {
			const struct rec_memberinfo *mi = &rec_members[ti->first + i];
			struct rstr *s = (struct rstr *)(void *)((char *)rec + mi->offset);
			if (!(has >> i & 1) || (mi->kind != RK_STR && mi->kind != RK_JSON))
				continue;
			if (pass == 0) {
				total += s->n + 1;
				continue;
			}
			if (s->n)
				memcpy(block + off, s->s, s->n);
			block[off + s->n] = '\0';
			s->s = block + off;
			off += s->n + 1;
		}
		if (pass == 0)
			block = xmalloc(total);
	}
	return block;
}

char *
rstr_dup(struct rstr s)
{
	return xstrndup(s.s ? s.s : "", s.n);
}

