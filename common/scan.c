/* Streaming, validating splitter of a Chrome-trace document into event objects. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jshape.h"
#include "magic.h"
#include "scan.h"
#include "xalloc.h"

#define MAXDEPTH JSON_MAX_DEPTH
#define MAXPRIM 512

enum mode {
	M_VALUE,		/* a value is required */
	M_VALUE_OR_CLOSE,	/* after '[': a value or ']' */
	M_KEY,			/* after ',' in an object */
	M_KEY_OR_CLOSE,		/* after '{' */
	M_COLON,
	M_COMMA,		/* after a value inside a container */
	M_END			/* after the top-level value */
};

struct sc {
	const char *name;
	struct scan_stats *st;
	scan_event_fn fn;
	scan_select_fn sfn;		/* with a key set: events come with their selection */
	scan_tap_fn tap;		/* scan_run_tap: every chunk, after it was scanned */
	const struct json_keys *keys;
	struct json_shapes shapes;	/* the layouts of the events read so far */
	int idx[32];
	void *ctx;
	char *err;
	size_t errlen;

	enum mode mode;
	unsigned char stack[MAXDEPTH];	/* 'o' or 'a' */
	unsigned long long open_off[MAXDEPTH];
	int sp;
	int events_sp;			/* sp value inside the events array, or -1 */
	int after_comma;		/* the value/key follows a ',' */

	int instr, strkey, esc;		/* esc: 0, 1 after '\', 2..5 hex digits left */
	unsigned long long str_off;
	int capkey;			/* capturing a top-level key */
	char key[32];
	int keylen, keybad;
	unsigned uval;			/* the \u escape being read in a captured key */
	int te_pending;			/* the value being read is "traceEvents" */
	const struct scan_members *members;	/* top-level members asked for, or NULL */
	int member_pending;		/* the value being read is members->keys[i], or -1 */
	int member_active;		/* an object or array value of one is being collected */
	int member_which;		/* its key's index */
	int prim_member;		/* the primitive being read is members->keys[i], or -1 */

	int inprim;
	char prim[MAXPRIM + 1];
	int primlen;
	unsigned long long prim_off;

	int ev_active;
	size_t ev_start;
	unsigned long long ev_off;
	char *acc;
	size_t acclen, acccap;
	json_doc doc;			/* the event handed to fn */
	sbuf names;			/* an event with escaped names, decoded */

	/* position bookkeeping */
	unsigned long long base;	/* offset of buf[0] */
	unsigned long long lines;	/* newlines before buf */
	unsigned long long colbase;	/* bytes since the last newline before buf */
	const char *buf;
};

static void
position(struct sc *s, size_t i, unsigned long long *line, unsigned long long *col)
{
	size_t k, last = (size_t)-1;
	unsigned long long nl = 0;

	for (k = 0; k < i; k++)
		if (s->buf[k] == '\n') {
			nl++;
			last = k;
		}
	*line = s->lines + nl + 1;
	*col = last == (size_t)-1 ? s->colbase + i + 1 : (unsigned long long)(i - last);
}

#define HINT_SYNTAX "the file is not valid JSON (two writers interleaved, or a partial overwrite?)"

static int
fail(struct sc *s, size_t i, const char *what, const char *hint)
{
	unsigned long long line, col;

	position(s, i, &line, &col);
	if (s->base + i <= 3 && strcmp(hint, HINT_SYNTAX) == 0)
		hint = "the input does not start with a JSON value: it is no Chrome-trace JSON file";
	snprintf(s->err, s->errlen,
	    "'%s': invalid JSON: %s at byte %llu (line %llu, column %llu); %s",
	    s->name, what, s->base + i, line, col, hint);
	return SCAN_ERROR;
}

#define HINT_TRUNC "the file ends early (still being written, or cut off in transfer?)"
#define HINT_GZIP "the compressed file is damaged or cut short (still being written, or an interrupted copy?)"
#define HINT_READ "the file could not be read to its end"
#define HINT_DEPTH "no trace nests that deep: the file is damaged, or not a trace"
#define HINT_LIMIT "no trace of one run is that large: a compression bomb, or raise the limit"

static int
valid_prim(struct sc *s)
{
	char *p = s->prim;
	int n = s->primlen, i = 0;

	p[n] = '\0';
	switch (p[0]) {
	case 't':
		return n == 4 && memcmp(p, "true", 4) == 0;
	case 'f':
		return n == 5 && memcmp(p, "false", 5) == 0;
	case 'n':
		if (n == 4 && memcmp(p, "null", 4) == 0)
			return 1;
		break;
	default:
		break;
	}
	if (!(p[0] >= '0' && p[0] <= '9') && !(p[0] == '-' && n > 1 && p[1] >= '0' &&
	    p[1] <= '9')) {
		const char *q = p[0] == '-' || p[0] == '+' ? p + 1 : p;
		size_t qn = (size_t)n - (size_t)(q - p);
		/*
		 * NaN/Infinity (Python's json) and nan/inf (C++ writers), by
		 * length: a NUL inside the literal would end strcasecmp early.
		 */
		if ((qn == 3 && (strncasecmp(q, "nan", 3) == 0 || strncasecmp(q, "inf", 3) == 0)) ||
		    (qn == 8 && strncasecmp(q, "infinity", 8) == 0)) {
			s->st->literals++;
			return 1;
		}
		return 0;
	}
	if (p[i] == '-')
		i++;
	if (p[i] == '0')
		i++;
	else
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	if (i < n && p[i] == '.') {
		i++;
		if (i >= n || p[i] < '0' || p[i] > '9')
			return 0;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		if (i >= n || p[i] < '0' || p[i] > '9')
			return 0;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	return i == n;
}

/*
 * Keep the part of an event read so far.  An event past the size limit
 * (json.h) is refused here, before its bytes are held: its offsets would
 * not fit the tokens, and holding it is the memory the limit bounds.
 */
static int
acc_add(struct sc *s, const char *p, size_t n)
{
	if (n > json_max_bytes() - s->acclen) {
		snprintf(s->err, s->errlen, "'%s': the event that starts at byte %llu is %s; "
		    "the trace is damaged, or not a trace", s->name, s->ev_off,
		    json_limit_text(JSON_ESIZE));
		return SCAN_ERROR;
	}
	xgrow(&s->acc, &s->acccap, s->acclen + n, 1);
	memcpy(s->acc + s->acclen, p, n);
	s->acclen += n;
	return SCAN_OK;
}

/* Hand the event in s->doc to the callback; its selection, when asked for, is in s->idx. */
static int
deliver(struct sc *s, unsigned long long off)
{
	if (s->sfn)
		return s->sfn(s->ctx, &s->doc, s->idx, off);
	return s->fn(s->ctx, &s->doc, off);
}

static void
value_done(struct sc *s)
{
	s->mode = s->sp == 0 ? M_END : M_COMMA;
}

/* A collected top-level member closed at buf[i]: parse it and hand it over. */
static int
deliver_member(struct sc *s, size_t i)
{
	const char *v = s->buf + s->ev_start;
	size_t len = i + 1 - s->ev_start;
	int which = s->member_which, r;

	s->member_active = 0;
	s->ev_active = 0;
	if (s->acclen) {
		if ((r = acc_add(s, v, len)) != SCAN_OK)
			return r;
		v = s->acc;
		len = s->acclen;
	}
	s->acclen = 0;
	/* the scanner validated the grammar; a parse failure leaves no tokens */
	if (json_parse(&s->doc, v, len) < 0)
		return SCAN_OK;
	return s->members->fn(s->ctx, which, &s->doc) ? SCAN_STOPPED : SCAN_OK;
}

/* A top-level member's number or literal, complete in s->prim: hand it over. */
static int
deliver_scalar(struct sc *s)
{
	int which = s->prim_member;

	s->prim_member = -1;
	if (which < 0 || json_parse(&s->doc, s->prim, (size_t)s->primlen) < 0)
		return SCAN_OK;
	return s->members->fn(s->ctx, which, &s->doc) ? SCAN_STOPPED : SCAN_OK;
}

/* Close the container at the top; i is the index of the closer. */
static int
close_container(struct sc *s, size_t i)
{
	int r;

	s->sp--;
	if (s->member_active && s->sp == 1) {
		if ((r = deliver_member(s, i)) != SCAN_OK)
			return r;
	} else if (s->events_sp >= 0 && s->sp == s->events_sp && s->ev_active) {
		s->st->events++;
		s->ev_active = 0;
		if (s->fn || s->sfn) {
			const char *ev = s->buf + s->ev_start;
			size_t len = i + 1 - s->ev_start;
			if (s->acclen) {
				if ((r = acc_add(s, ev, len)) != SCAN_OK)
					return r;
				ev = s->acc;
				len = s->acclen;
			}
			if (json_parse(&s->doc, ev, len) < 0) {
				s->doc.js = ev;
				s->doc.len = len;
				s->doc.ntok = 0;
			} else if (json_decode_names(&s->doc, &s->names) &&
			    json_parse(&s->doc, s->names.s, s->names.len) < 0) {
				s->doc.ntok = 0;	/* cannot happen: decoded names stay valid */
			}
			if (s->keys)
				json_select_doc(&s->doc, s->keys, s->idx);
			r = deliver(s, s->ev_off);
			s->acclen = 0;
			if (r)
				return SCAN_STOPPED;
		}
		s->acclen = 0;
	} else if (s->events_sp >= 0 && s->sp == s->events_sp - 1) {
		s->events_sp = -1;	/* the events array itself closed */
		if (!s->st->events_closed) {
			/* the caller's mode tells what came before the ']' */
			s->st->events_closed = 1;
			s->st->events_close = s->base + i;
			s->st->events_before = s->mode == M_COMMA ? 'v' : s->mode == M_VALUE ? ',' : '[';
		}
	}
	value_done(s);
	return SCAN_OK;
}

static int
open_container(struct sc *s, size_t i, char kind)
{
	int parent_events = s->events_sp >= 0 && s->sp == s->events_sp;

	if (s->sp >= MAXDEPTH)
		return fail(s, i, json_limit_text(JSON_EDEPTH), HINT_DEPTH);
	if (kind == 'a' && !parent_events &&
	    (s->sp == 0 || (s->sp == 1 && s->stack[0] == 'o' && s->te_pending))) {
		if (s->st->has_events)
			s->st->dup_trace_events++;
		s->st->has_events = 1;
		s->events_sp = s->sp + 1;
	}
	if (s->sp == 1 && s->stack[0] == 'o' && s->member_pending >= 0 && !s->ev_active) {
		/* a top-level member asked for: collected like an event */
		s->member_active = 1;
		s->member_which = s->member_pending;
		s->ev_active = 1;
		s->ev_start = i;
		s->ev_off = s->base + i;
		s->acclen = 0;
	}
	if (parent_events) {
		if (s->st->elements++ < 8 && kind != 'o')
			s->st->early_nonobject = 1;
		if (kind == 'o') {
			s->ev_active = 1;
			s->ev_start = i;
			s->ev_off = s->base + i;
			s->acclen = 0;
		} else
			s->st->nonobject++;
	}
	s->open_off[s->sp] = s->base + i;
	s->stack[s->sp++] = (unsigned char)kind;
	s->te_pending = 0;
	s->member_pending = -1;
	s->mode = kind == 'o' ? M_KEY_OR_CLOSE : M_VALUE_OR_CLOSE;
	return SCAN_OK;
}

/* Bytes that end a number or literal. */
static const unsigned char *
delim_tab(void)
{
	static unsigned char t[256];
	static int init;

	if (!init) {
		t[' '] = t['\t'] = t['\n'] = t['\r'] = t[','] = t[']'] = t['}'] = t[':'] = 1;
		init = 1;
	}
	return t;
}

static const unsigned char *special_tab(void)
{
	static unsigned char t[256];
	static int init;
	int c;

	if (!init) {
		for (c = 0; c < 0x20; c++)
			t[c] = 1;
		t['"'] = 1;
		t['\\'] = 1;
		init = 1;
	}
	return t;
}

/* What a step of the scanner asks the chunk loop to do (besides SCAN_*). */
enum { STEP_NEXT = 2, STEP_CHUNK_END = 3 };

/* One decoded character of a top-level key being captured. */
static void
key_char(struct sc *s, unsigned char c)
{
	if (!s->capkey)
		return;
	if (s->keylen < (int)sizeof s->key)
		s->key[s->keylen++] = (char)c;
	else
		s->keybad = 1;
}

/* The index in members->keys of the top-level key just captured, or -1. */
static int
member_index(const struct sc *s)
{
	int i;

	if (!s->members || s->keybad)
		return -1;
	for (i = 0; s->members->keys[i]; i++)
		if (strlen(s->members->keys[i]) == (size_t)s->keylen &&
		    memcmp(s->members->keys[i], s->key, (size_t)s->keylen) == 0)
			return i;
	return -1;
}

/* Inside a string at u[*ip]: escapes, the closing quote, key capture. */
static int
string_step(struct sc *s, const unsigned char *u, size_t n, size_t *ip)
{
	const unsigned char *sp = special_tab();
	size_t i = *ip;
	unsigned char c;

	if (s->esc == 1) {
		c = u[i];
		if (c == 'u') {
			s->esc = 5;
			s->uval = 0;
		} else if (strchr("\"\\/bfnrt", c) && c) {
			s->esc = 0;
			/* a top-level key is compared decoded ("trace\u0045vents") */
			key_char(s, c == 'b' ? '\b' : c == 'f' ? '\f' : c == 'n' ? '\n' :
			    c == 'r' ? '\r' : c == 't' ? '\t' : c);
		} else
			return fail(s, i, "invalid escape sequence in a string", HINT_SYNTAX);
		*ip = i + 1;
		return STEP_NEXT;
	}
	if (s->esc >= 2) {
		c = u[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return fail(s, i, "invalid \\u escape in a string", HINT_SYNTAX);
		s->uval = s->uval * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
		s->esc = s->esc == 2 ? 0 : s->esc - 1;
		if (s->esc == 0) {
			if (s->uval < 0x80)
				key_char(s, (unsigned char)s->uval);
			else
				s->keybad = 1;	/* no key we look for has such a character */
		}
		*ip = i + 1;
		return STEP_NEXT;
	}
	if (!s->capkey) {
		while (i < n && !sp[u[i]])
			i++;
		*ip = i;
		if (i >= n)
			return STEP_CHUNK_END;
	}
	c = u[i];
	*ip = i + 1;
	if (c == '"') {
		s->instr = 0;
		if (s->strkey) {
			s->mode = M_COLON;
			if (s->capkey) {
				s->te_pending = !s->keybad && s->keylen == 11 &&
				    memcmp(s->key, "traceEvents", 11) == 0;
				s->member_pending = member_index(s);
				s->capkey = 0;
			}
		} else
			value_done(s);
	} else if (c == '\\') {
		s->esc = 1;
	} else if (c < 0x20) {
		s->st->ctrl++;
		s->keybad = 1;
	} else
		key_char(s, c);
	return STEP_NEXT;
}

/* Inside a primitive that began in an earlier chunk: collect it up to its delimiter. */
static int
prim_step(struct sc *s, const unsigned char *u, size_t *ip)
{
	unsigned char c = u[*ip];

	if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ']' ||
	    c == '}' || c == ':') {
		s->inprim = 0;
		if (!valid_prim(s))
			return fail(s, *ip, "invalid literal or number", HINT_SYNTAX);
		value_done(s);
		if (s->prim_member >= 0 && deliver_scalar(s) != SCAN_OK)
			return SCAN_STOPPED;
		return STEP_NEXT;	/* reprocess the delimiter */
	}
	if (s->primlen >= MAXPRIM)
		return fail(s, *ip, "number or literal longer than 512 bytes", HINT_SYNTAX);
	s->prim[s->primlen++] = (char)c;
	(*ip)++;
	return STEP_NEXT;
}

/* Where a value may start (M_VALUE, M_VALUE_OR_CLOSE). */
static int
value_step(struct sc *s, const char *buf, size_t n, size_t *ip)
{
	const unsigned char *u = (const unsigned char *)buf;
	size_t i = *ip;
	unsigned char c = u[i];
	int r;

	/* The common case: a strictly valid event, found and tokenized in one pass. */
	if (c == '{' && s->events_sp >= 0 && s->sp == s->events_sp) {
		size_t l = s->keys ? json_select_shaped(&s->shapes, &s->doc, buf + i, n - i, s->idx) :
		    json_parse_object(&s->doc, buf + i, n - i);
		if (l > 0) {
			s->st->elements++;
			s->st->events++;
			if ((s->fn || s->sfn) && deliver(s, s->base + i))
				return SCAN_STOPPED;
			*ip = i + l;
			value_done(s);
			return STEP_NEXT;
		}
	}
	if (c == '{' || c == '[') {
		if ((r = open_container(s, i, c == '{' ? 'o' : 'a')) != SCAN_OK)
			return r;
		*ip = i + 1;
		return STEP_NEXT;
	}
	if (c == ']' && s->sp > 0 && s->stack[s->sp - 1] == 'a') {
		if (s->mode == M_VALUE)
			s->st->trailing_commas++;
		if ((r = close_container(s, i)) != SCAN_OK)
			return r;
		*ip = i + 1;
		return STEP_NEXT;
	}
	if (s->sp == 1 && s->stack[0] == 'o' && s->te_pending)
		s->te_pending = 0;	/* traceEvents is not an array */
	if (s->sp == 1) {
		/* a number or literal is handed over when complete; a string is not */
		s->prim_member = c != '"' ? s->member_pending : -1;
		s->member_pending = -1;
	} else
		s->prim_member = -1;
	if (s->events_sp >= 0 && s->sp == s->events_sp) {
		s->st->nonobject++;
		if (s->st->elements++ < 8)
			s->st->early_nonobject = 1;
	}
	if (c == '"') {
		s->instr = 1;
		s->strkey = 0;
		s->capkey = 0;
		s->str_off = s->base + i;
		*ip = i + 1;
		return STEP_NEXT;
	}
	if (c == '-' || c == '+' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n' ||
	    c == 'N' || c == 'I' || c == 'i') {
		/* Fast path: the whole number is in this chunk. */
		size_t j = i;
		s->inprim = 1;
		s->primlen = 0;
		s->prim_off = s->base + i;
		while (j < n && !delim_tab()[u[j]])
			j++;
		if (j < n && j - i <= MAXPRIM) {
			memcpy(s->prim, buf + i, j - i);
			s->primlen = (int)(j - i);
			s->inprim = 0;
			if (!valid_prim(s))
				return fail(s, i, "invalid literal or number", HINT_SYNTAX);
			value_done(s);
			*ip = j;
			if (s->prim_member >= 0 && deliver_scalar(s) != SCAN_OK)
				return SCAN_STOPPED;
		}
		return STEP_NEXT;	/* else prim_step collects the rest */
	}
	return fail(s, i, "expected a value", HINT_SYNTAX);
}

/* Between values: keys, ':', ',' and closing brackets. */
static int
punct_step(struct sc *s, size_t i, unsigned char c)
{
	int r;

	switch (s->mode) {
	case M_KEY:
	case M_KEY_OR_CLOSE:
		if (c == '"') {
			s->instr = 1;
			s->strkey = 1;
			s->str_off = s->base + i;
			s->capkey = s->sp == 1 && s->stack[0] == 'o';
			s->keylen = 0;
			s->keybad = 0;
			return STEP_NEXT;
		}
		if (c == '}') {
			if (s->mode == M_KEY)
				s->st->trailing_commas++;
			return (r = close_container(s, i)) != SCAN_OK ? r : STEP_NEXT;
		}
		return fail(s, i, "expected a double-quoted object key", HINT_SYNTAX);
	case M_COLON:
		if (c != ':')
			return fail(s, i, "expected ':' after an object key", HINT_SYNTAX);
		s->mode = M_VALUE;
		return STEP_NEXT;
	case M_COMMA:
		if (c == ',') {
			s->mode = s->stack[s->sp - 1] == 'o' ? M_KEY : M_VALUE;
			return STEP_NEXT;
		}
		if ((c == ']' && s->stack[s->sp - 1] == 'a') ||
		    (c == '}' && s->stack[s->sp - 1] == 'o'))
			return (r = close_container(s, i)) != SCAN_OK ? r : STEP_NEXT;
		return fail(s, i, s->stack[s->sp - 1] == 'o' ?
		    "expected ',' or '}' after an object member" :
		    "expected ',' or ']' after an array element", HINT_SYNTAX);
	default:	/* M_END */
		return fail(s, i, "unexpected data after the end of the JSON document",
		    HINT_SYNTAX);
	}
}

/* One chunk of the document through the state machine. */
static int
feed(struct sc *s, const char *buf, size_t n)
{
	const unsigned char *u = (const unsigned char *)buf;
	size_t i = 0;
	int r;

	s->buf = buf;
	while (i < n) {
		if (s->instr)
			r = string_step(s, u, n, &i);
		else if (s->inprim)
			r = prim_step(s, u, &i);
		else if (u[i] == ' ' || u[i] == '\t' || u[i] == '\n' || u[i] == '\r') {
			i++;
			continue;
		} else if (s->mode == M_VALUE || s->mode == M_VALUE_OR_CLOSE)
			r = value_step(s, buf, n, &i);
		else if ((r = punct_step(s, i, u[i])) == STEP_NEXT)
			i++;
		if (r == STEP_CHUNK_END)
			break;
		if (r != STEP_NEXT)
			return r;
	}
	return SCAN_OK;
}

/* The newlines in p[0..n], the byte p[n] (a newline) included. */
static size_t
count_newlines(const char *p, size_t n)
{
	typedef unsigned char v16 __attribute__((vector_size(16)));
	const v16 nl = { '\n', '\n', '\n', '\n', '\n', '\n', '\n', '\n',
		'\n', '\n', '\n', '\n', '\n', '\n', '\n', '\n' };
	size_t i = 0, c = 1, k, j;

	while (n - i >= 16) {
		/* byte counters, emptied before 255 blocks can wrap them */
		v16 acc = { 0 }, w;
		for (k = 0; k < 255 && n - i >= 16; k++, i += 16) {
			memcpy(&w, p + i, 16);
			acc -= (v16)(w == nl);
		}
		for (j = 0; j < 16; j++)
			c += acc[j];
	}
	for (; i < n; i++)
		c += p[i] == '\n';
	return c;
}

static int
end_chunk(struct sc *s, const char *buf, size_t n)
{
	const char *p = buf, *q;
	size_t left = n;

	if (s->ev_active) {
		if (acc_add(s, buf + s->ev_start, n - s->ev_start) != SCAN_OK)
			return SCAN_ERROR;
		s->ev_start = 0;
	}
	/*
	 * The line and column, for messages only: one counting pass over the
	 * chunk (it vectorizes) rather than a memchr call per line, which cost
	 * 4 % of trace-extract on traces of one event per line (issue 30).
	 */
	if (left && (q = memrchr(p, '\n', left)) != NULL) {
		s->lines += count_newlines(p, (size_t)(q - p));
		s->colbase = 0;
		left -= (size_t)(q - p) + 1;
	}
	s->colbase += left;
	s->base += n;
	return SCAN_OK;
}

static int run(zio *z, const char *name, struct sc *s, struct scan_stats *st, char *errbuf,
    size_t errlen, void (*progress)(void *, const struct scan_stats *));

int
scan_run(zio *z, const char *name, scan_event_fn fn, void *ctx,
    struct scan_stats *st, char *errbuf, size_t errlen,
    void (*progress)(void *, const struct scan_stats *))
{
	struct sc *s = xcalloc(1, sizeof *s);

	s->fn = fn;
	s->ctx = ctx;
	return run(z, name, s, st, errbuf, errlen, progress);
}

int
scan_run_select(zio *z, const char *name, const struct json_keys *keys, scan_select_fn fn,
    void *ctx, struct scan_stats *st, char *errbuf, size_t errlen)
{
	struct sc *s = xcalloc(1, sizeof *s);

	if (keys->ntop + keys->ninner > sizeof s->idx / sizeof s->idx[0])
		abort();	/* a caller's key set too large: a bug */
	s->sfn = fn;
	s->keys = keys;
	json_shapes_init(&s->shapes, keys);
	s->ctx = ctx;
	return run(z, name, s, st, errbuf, errlen, NULL);
}

int
scan_run_tap(zio *z, const char *name, scan_tap_fn tap, void *ctx, struct scan_stats *st,
    char *errbuf, size_t errlen)
{
	struct sc *s = xcalloc(1, sizeof *s);

	s->tap = tap;
	s->ctx = ctx;
	return run(z, name, s, st, errbuf, errlen, NULL);
}

int
scan_run_members(zio *z, const char *name, const struct json_keys *keys, scan_select_fn sfn,
    scan_event_fn fn, const struct scan_members *members, void *ctx, struct scan_stats *st,
    char *errbuf, size_t errlen)
{
	struct sc *s = xcalloc(1, sizeof *s);
	size_t i;

	if (keys) {
		if (keys->ntop + keys->ninner > sizeof s->idx / sizeof s->idx[0])
			abort();	/* a caller's key set too large: a bug */
		s->sfn = sfn;
		s->keys = keys;
		json_shapes_init(&s->shapes, keys);
	} else
		s->fn = fn;
	for (i = 0; members && members->keys[i]; i++)
		if (strlen(members->keys[i]) >= sizeof s->key)
			abort();	/* a key the capture cannot hold: a bug */
	s->members = members;
	s->ctx = ctx;
	return run(z, name, s, st, errbuf, errlen, NULL);
}

static int
run(zio *z, const char *name, struct sc *s, struct scan_stats *st, char *errbuf, size_t errlen,
    void (*progress)(void *, const struct scan_stats *))
{
	const char *buf;
	sbuf head = SBUF_INIT;
	ssize_t n, m;
	size_t off = 0;
	int r = SCAN_OK, first = 1;
	unsigned long long next_progress = 8u << 20, chunk_off;

	memset(st, 0, sizeof *st);
	s->name = name;
	s->st = st;
	s->err = errbuf;
	s->errlen = errlen;
	s->events_sp = -1;
	s->member_pending = -1;
	s->prim_member = -1;
	s->mode = M_VALUE;
	errbuf[0] = '\0';
	for (;;) {
		/* the decompressed text where zio holds it: no copy */
		n = zio_next(z, &buf);
		if (n > 0 && first && n < 3) {
			/* A pipe may deliver fewer bytes than a byte order mark first. */
			sb_add(&head, buf, (size_t)n);
			while (head.len < 3 && (m = zio_next(z, &buf)) > 0)
				sb_add(&head, buf, (size_t)m);
			buf = head.s;
			n = (ssize_t)head.len;
		}
		if (n < 0) {
			snprintf(errbuf, errlen, "'%s': %s; the text read so far ends at byte %llu "
			    "(line %llu, column %llu); %s", name, zio_error(z), s->base,
			    s->lines + 1, s->colbase + 1, zio_over_limit(z) ? HINT_LIMIT :
			    zio_is_gzip(z) ? HINT_GZIP : HINT_READ);
			r = SCAN_ERROR;
			break;
		}
		if (n == 0)
			break;
		off = 0;
		if (first) {
			first = 0;
			if (n >= 3 && (unsigned char)buf[0] == 0xef &&
			    (unsigned char)buf[1] == 0xbb && (unsigned char)buf[2] == 0xbf) {
				st->bom = 1;
				off = 3;
				s->base = 3;
			}
			if (n > (ssize_t)off) {
				size_t k = off;
				const char *looks;
				while (k < (size_t)n && strchr(" \t\r\n", buf[k]))
					k++;
				if (k < (size_t)n)
					st->shape = buf[k] == '{' ? 'o' : buf[k] == '[' ? 'a' : 0;
				/* not JSON at all: say what it is instead of "invalid JSON" */
				if (k < (size_t)n && !st->shape && (looks = magic_describe(
				    (const unsigned char *)buf + off, (size_t)n - off, zio_is_gzip(z)))) {
					snprintf(errbuf, errlen, "'%s': not a trace: the bytes look like %s; "
					    "a torch.profiler trace is Chrome-trace JSON (.json or .json.gz) "
					    "starting with '{' or '['", name, looks);
					r = SCAN_ERROR;
					break;
				}
			}
		}
		chunk_off = s->base - off;
		r = feed(s, buf + off, (size_t)n - off);
		st->bytes = s->base + ((size_t)n - off);
		if (r != SCAN_OK)
			break;
		if ((r = end_chunk(s, buf + off, (size_t)n - off)) != SCAN_OK)
			break;
		if (s->tap && s->tap(s->ctx, buf, (size_t)n, chunk_off, st)) {
			r = SCAN_STOPPED;
			break;
		}
		if (progress && st->bytes >= next_progress) {
			progress(s->ctx, st);
			next_progress = st->bytes + (8u << 20);
		}
	}
	sb_free(&head);
	if (r == SCAN_OK) {
		if (s->inprim) {
			s->inprim = 0;
			s->buf = "";
			if (!valid_prim(s))
				r = fail(s, 0, "invalid literal or number at end of input", HINT_SYNTAX);
			else
				value_done(s);
		}
	}
	if (r == SCAN_OK) {
		const char *hint = HINT_TRUNC;
		s->buf = "";
		if (s->instr) {
			snprintf(errbuf, errlen,
			    "'%s': truncated JSON: input ends at byte %llu (line %llu, column %llu) "
			    "inside a string that starts at byte %llu; %s",
			    name, s->base, s->lines + 1, s->colbase + 1, s->str_off, hint);
			r = SCAN_ERROR;
		} else if (s->mode == M_END) {
			/* complete document */
		} else if (s->sp == 0) {
			snprintf(errbuf, errlen, "'%s': empty input: no JSON document found", name);
			r = SCAN_ERROR;
		} else if (s->sp == 1 && s->stack[0] == 'a' && s->events_sp == 1 &&
		    (s->mode == M_COMMA || s->mode == M_VALUE || s->mode == M_VALUE_OR_CLOSE)) {
			st->missing_close = 1;	/* allowed by the trace-event format */
			if (!st->events_closed) {
				st->events_close = s->base;
				st->events_before = s->mode == M_COMMA ? 'v' : s->mode == M_VALUE ?
				    ',' : '[';
			}
		} else {
			snprintf(errbuf, errlen,
			    "'%s': truncated JSON: input ends at byte %llu (line %llu, column %llu) "
			    "inside %s that starts at byte %llu; %s",
			    name, s->base, s->lines + 1, s->colbase + 1,
			    s->stack[s->sp - 1] == 'o' ? "an object" : "an array",
			    s->open_off[s->sp - 1], hint);
			r = SCAN_ERROR;
		}
	}
	free(s->acc);
	json_doc_free(&s->doc);
	if (s->keys)
		json_shapes_free(&s->shapes);
	sb_free(&s->names);
	free(s);
	return r;
}
