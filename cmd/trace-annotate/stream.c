/*
 * The trace streamed through: every decompressed byte copied as it is
 * scanned (common/scan.h, scan_run_tap), the findings added before the
 * closing bracket of its event array, the output plain or gzip (zlib's
 * deflate) into an output file written whole or not at all
 * (common/ofile.h).  Memory: the scanner's, a few buffers, whatever the
 * trace's size.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "err.h"
#include "ofile.h"
#include "scan.h"
#include "ta.h"
#include "xalloc.h"
#include "zio.h"

/*
 * zlib's fastest level: the output is the input's size again, and at the
 * default level deflate would take several times the CPU of the rest.
 */
#define TA_GZIP_LEVEL 1

struct sink {
	struct ofile of;
	int gz, open;
	z_stream zs;
	unsigned char *zbuf;
	sbuf why;
	const char *shown;
};

#define ZBUF (256u << 10)

static void sink_fail(struct sink *k, int code, const char *fmt, const char *arg)
	__attribute__((noreturn));

static void
sink_fail(struct sink *k, int code, const char *fmt, const char *arg)
{
	if (k->open)
		ofile_abort(&k->of);
	if (k->gz)
		deflateEnd(&k->zs);
	k->open = 0;
	die(code, fmt, arg);
}

static void
raw_write(struct sink *k, const void *p, size_t n)
{
	int rc = ofile_write(&k->of, p, n, &k->why);

	if (rc)
		sink_fail(k, rc, "%s", sb_str(&k->why));
}

static void
deflate_some(struct sink *k, const void *p, size_t n, int flush)
{
	int rc;

	k->zs.next_in = (unsigned char *)(uintptr_t)p;
	k->zs.avail_in = (uInt)n;
	do {
		k->zs.next_out = k->zbuf;
		k->zs.avail_out = ZBUF;
		rc = deflate(&k->zs, flush);
		if (rc == Z_STREAM_ERROR)
			sink_fail(k, EXIT_DATA, "gzip output of '%s' failed", k->shown);
		raw_write(k, k->zbuf, ZBUF - k->zs.avail_out);
	} while (k->zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
}

static void
sink_write(struct sink *k, const void *p, size_t n)
{
	if (!k->gz) {
		raw_write(k, p, n);
		return;
	}
	while (n) {	/* avail_in is 32-bit */
		size_t m = n > (1u << 30) ? (1u << 30) : n;
		deflate_some(k, p, m, Z_NO_FLUSH);
		p = (const char *)p + m;
		n -= m;
	}
}

static void
put(void *ctx, const char *p, size_t n)
{
	sink_write(ctx, p, n);
}

/*
 * The largest pid the trace's own bytes name, every event's (metadata and
 * instants too, which are no records) and any "pid" member anywhere: the
 * findings' process must be no process of the trace, or a trace could
 * plant events in the findings' track.  A byte machine over the JSON as
 * a JSON reader sees it: strings skipped whole (their escapes too), keys
 * compared decoded ("p\u0069d" is "pid"), across read boundaries; a pid
 * written as a string or a float counts as its number, one too long to
 * read as huge (a guess too large only moves the track).
 */
enum { PS_OUT, PS_KEY, PS_AFTER, PS_VAL, PS_NUM, PS_VSTR };

struct pidscan {
	int state;
	int esc;		/* in a string: after a backslash (1), in \uXXXX (2-5) */
	unsigned u;		/* the \u escape's code so far */
	char key[8];		/* a string's decoded start, to compare with "pid" */
	size_t nkey;
	int long_key;		/* more than fits in key: no "pid" */
	char num[72];
	size_t nnum;
	int num_over;		/* a number longer than num: huge */
	long long max;
	int saturated;		/* a pid of 2^62 or more: no pid is free above it */
};

static void
pid_done(struct pidscan *ps)
{
	double v;

	ps->num[ps->nnum] = '\0';
	v = ps->num_over ? 1e300 : ps->nnum ? strtod(ps->num, NULL) : 0;
	if (!(v < 4.6e18))
		ps->saturated = 1;
	else if (v > (double)ps->max)
		ps->max = (long long)v;
	ps->nnum = 0;
	ps->num_over = 0;
}

static int
num_char(char ch)
{
	return (ch >= '0' && ch <= '9') || ch == '.' || ch == 'e' || ch == 'E' || ch == '+' ||
	    ch == '-';
}

static void
num_add(struct pidscan *ps, char ch)
{
	if (ps->nnum + 1 < sizeof ps->num)
		ps->num[ps->nnum++] = ch;
	else
		ps->num_over = 1;
}

/* One decoded character of a key string. */
static void
key_add(struct pidscan *ps, unsigned c)
{
	if (ps->nkey < sizeof ps->key - 1 && c < 0x80)
		ps->key[ps->nkey++] = (char)c;
	else
		ps->long_key = 1;
}

/*
 * A string's character, decoded: a key's to compare, a pid value's number
 * characters kept (a guess too large is harmless).
 */
static void
str_char(struct pidscan *ps, unsigned c)
{
	if (ps->state == PS_KEY)
		key_add(ps, c);
	else if (c < 0x80 && num_char((char)c))
		num_add(ps, (char)c);
}

static void
pid_scan(struct pidscan *ps, const char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char ch = (unsigned char)p[i];
		switch (ps->state) {
		case PS_OUT: {
			const char *q = memchr(p + i, '"', n - i);
			if (!q)
				return;
			i = (size_t)(q - p) + 1;
			ps->state = PS_KEY;
			ps->nkey = 0;
			ps->long_key = 0;
			ps->esc = 0;
			continue;
		}
		case PS_KEY:
		case PS_VSTR:
			i++;
			if (ps->esc == 1) {
				static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
				const char *e = strchr(from, ch);
				if (ch == 'u') {
					ps->esc = 2;
					ps->u = 0;
					continue;
				}
				ps->esc = 0;
				str_char(ps, e && ch ? (unsigned char)to[e - from] : ch);
				continue;
			}
			if (ps->esc >= 2) {
				unsigned d = ch >= '0' && ch <= '9' ? ch - '0' : (ch | 0x20) >= 'a' &&
				    (ch | 0x20) <= 'f' ? (ch | 0x20) - 'a' + 10 : 16;
				ps->u = ps->u * 16 + (d < 16 ? d : 0);
				if (++ps->esc == 6) {
					ps->esc = 0;
					str_char(ps, ps->u);
				}
				continue;
			}
			if (ch == '\\') {
				ps->esc = 1;
				continue;
			}
			if (ch != '"') {
				str_char(ps, ch);
				continue;
			}
			/* the string's end */
			if (ps->state == PS_VSTR) {
				pid_done(ps);
				ps->state = PS_OUT;
			} else if (!ps->long_key && ps->nkey == 3 && !memcmp(ps->key, "pid", 3))
				ps->state = PS_AFTER;
			else
				ps->state = PS_OUT;
			continue;
		case PS_AFTER:
		case PS_VAL:
			if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
				i++;
				continue;
			}
			if (ps->state == PS_AFTER) {
				/* a key is followed by ':'; a string value of "pid" by anything else */
				ps->state = ch == ':' ? PS_VAL : PS_OUT;
				if (ch == ':')
					i++;
				continue;
			}
			ps->nnum = 0;
			ps->num_over = 0;
			if (ch == '"') {
				ps->state = PS_VSTR;
				ps->esc = 0;
				i++;
			} else if (num_char((char)ch))
				ps->state = PS_NUM;
			else
				ps->state = PS_OUT;	/* an object, an array, true: no pid */
			continue;
		case PS_NUM:
			if (num_char((char)ch)) {
				num_add(ps, (char)ch);
				i++;
				continue;
			}
			pid_done(ps);
			ps->state = PS_OUT;	/* this byte is looked at again */
			continue;
		}
	}
}

struct tapctx {
	struct sink *k;
	struct ta_out *o;
	int inserted;
	struct pidscan ps;
};

/* The findings, made now that the trace's own pids are known, and written. */
static void
insert(struct tapctx *c, int before)
{
	if (c->ps.state == PS_NUM)
		pid_done(&c->ps);
	if (c->ps.saturated)
		sink_fail(c->k, EXIT_DATA, "%s", "the trace names a pid of 2^62 or more: no pid "
		    "above the trace's is left for the findings' process; nothing annotated");
	if (c->ps.max >= c->o->pid)
		c->o->pid = c->ps.max + 1;
	ta_findings(c->o);
	/* after an element a comma; after '[' or a trailing comma none */
	ta_events(c->o, before == 'v' ? ",\n" : "\n", put, c->k);
	c->inserted = 1;
}

static int
tap(void *ctx, const char *p, size_t n, unsigned long long off, const struct scan_stats *st)
{
	struct tapctx *c = ctx;

	if (!c->inserted && st->events_closed && st->events_close >= off &&
	    st->events_close < off + n) {
		size_t at = (size_t)(st->events_close - off);
		pid_scan(&c->ps, p, at);
		sink_write(c->k, p, at);
		insert(c, st->events_before);
		sink_write(c->k, p + at, n - at);
		return 0;
	}
	if (!c->inserted)
		pid_scan(&c->ps, p, n);
	sink_write(c->k, p, n);
	return 0;
}

void
ta_stream(const char *path, const char *out, int gz, int made, struct ta_out *o,
    long long events)
{
	struct sink k;
	struct tapctx c;
	struct scan_stats st;
	char err[1024];
	zio *z;
	int rc;

	memset(&k, 0, sizeof k);
	k.shown = out;
	if (!(z = zio_open(path)))
		die(EXIT_DATA, "cannot open '%s': %s", path, strerror(errno));
	if ((rc = (made ? ofile_open_made : ofile_open)(&k.of, out, &k.why)))
		die(rc, "%s", sb_str(&k.why));
	k.open = 1;
	k.gz = gz;
	if (gz) {
		memset(&k.zs, 0, sizeof k.zs);
		/* windowBits 15 + 16: a gzip wrapper */
		if (deflateInit2(&k.zs, TA_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			sink_fail(&k, EXIT_DATA, "cannot start gzip output of '%s'", out);
		k.zbuf = xmalloc(ZBUF);
	}
	memset(&c, 0, sizeof c);
	c.k = &k;
	c.o = o;
	rc = scan_run_tap(z, path, tap, &c, &st, err, sizeof err);
	zio_close(z);
	if (rc != SCAN_OK)
		sink_fail(&k, EXIT_DATA, "%s", err);
	if (!st.has_events)
		sink_fail(&k, EXIT_DATA, "'%s' has no event array (traceEvents): nothing to annotate",
		    path);
	if (st.dup_trace_events) {
		/* the findings would go into the first, which a viewer (last key wins) ignores */
		snprintf(err, sizeof err, "'%s' holds %llu traceEvents arrays, and a trace viewer "
		    "reads the last alone: findings written into the first would not show; "
		    "remove the extra arrays to annotate it", path, st.dup_trace_events + 1);
		sink_fail(&k, EXIT_DATA, "%s", err);
	}
	if (events >= 0 && st.events != (unsigned long long)events) {
		snprintf(err, sizeof err, "'%s' holds %llu events where the records' trace held "
		    "%lld: not the trace the records were made from", path, st.events, events);
		sink_fail(&k, EXIT_DATA, "%s", err);
	}
	if (!c.inserted) {
		/* a bare event array without its closing bracket: the findings, then one */
		insert(&c, st.events_before);
		sink_write(&k, "]\n", 2);
	}
	if (gz) {
		deflate_some(&k, "", 0, Z_FINISH);
		deflateEnd(&k.zs);
		k.gz = 0;
		free(k.zbuf);
	}
	if ((rc = ofile_commit(&k.of, &k.why)))
		die(rc, "%s", sb_str(&k.why));
	sb_free(&k.why);
}
