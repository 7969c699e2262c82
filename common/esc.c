/* Escaping text for markdown, spreadsheets and terminals (esc.h). */
#include <string.h>

#include "esc.h"
#include "json.h"

static const char hexd[] = "0123456789abcdef";

static void
hex_byte(sbuf *out, const char *pfx, unsigned char c)
{
	char b[6];
	size_t k = strlen(pfx);

	memcpy(b, pfx, k);
	b[k] = hexd[c >> 4];
	b[k + 1] = hexd[c & 15];
	sb_add(out, b, k + 2);
}

/*
 * The bidirectional formatting characters (Unicode's Bidi_Control: the
 * marks, embeddings, overrides and isolates): text around them displays in
 * another order than it is, so a name can make a cell read as another.
 */
static int
is_bidi(unsigned cp)
{
	return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069);
}

/*
 * The escape of the character at p[0..n), appended to out, and its length;
 * 0 when it is no control character (nothing appended).  The C1 controls
 * and the bidirectional ones are controls here.
 */
static size_t
ctrl_at(const unsigned char *p, size_t n, int flags, sbuf *out)
{
	unsigned cp;
	size_t k;

	if (p[0] < 0x20 || p[0] == 0x7f) {
		if ((p[0] == '\t' && (flags & ESC_KEEP_TAB)) ||
		    (p[0] == '\n' && (flags & ESC_KEEP_NL)) ||
		    (p[0] == '\r' && (flags & ESC_KEEP_CR)))
			return 0;
		if (out)
			hex_byte(out, "\\x", p[0]);
		return 1;
	}
	if (p[0] < 0x80)
		return 0;
	if (p[0] == 0xc0 && n >= 2 && p[1] == 0x80) {	/* U+0000, json.h */
		if (out)
			sb_add(out, "\\x00", 4);
		return 2;
	}
	k = utf8_decode(p, n, &cp);
	if (k == 0) {
		if (out)
			hex_byte(out, "\\x", p[0]);
		return 1;
	}
	if (cp >= 0x80 && cp <= 0x9f) {
		if (out)
			hex_byte(out, "\\u00", (unsigned char)cp);
		return k;
	}
	if (is_bidi(cp)) {
		if (out) {
			hex_byte(out, "\\u", (unsigned char)(cp >> 8));
			hex_byte(out, "", (unsigned char)cp);
		}
		return k;
	}
	return 0;
}

/* Length of the valid, non-control UTF-8 character at p (>= 0x80), or 0. */
static size_t
plain_mb(const unsigned char *p, size_t n)
{
	unsigned cp;
	size_t k = utf8_decode(p, n, &cp);

	return k && cp > 0x9f && !is_bidi(cp) ? k : 0;
}

void
esc_ctrl(const char *s, size_t n, int flags, sbuf *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0, k;

	while (i < n) {
		if (p[i] >= 0x20 && p[i] < 0x7f) {
			i++;
			continue;
		}
		if (p[i] >= 0x80 && (k = plain_mb(p + i, n - i)) != 0) {
			i += k;
			continue;
		}
		sb_add(out, s + start, i - start);
		k = ctrl_at(p + i, n - i, flags, out);
		if (k == 0) {		/* a tab, newline or CR the flags keep */
			sb_addc(out, s[i]);
			k = 1;
		}
		i += k;
		start = i;
	}
	sb_add(out, s + start, n - start);
}

int
esc_ctrl_needed(const char *s, size_t n, int flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;

	while (i < n) {
		if (p[i] >= 0x20 && p[i] < 0x7f) {
			i++;
			continue;
		}
		if (ctrl_at(p + i, n - i, flags, NULL))
			return 1;
		k = p[i] >= 0x80 ? plain_mb(p + i, n - i) : 1;
		i += k ? k : 1;
	}
	return 0;
}

static int
alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

void
esc_md(const char *s, size_t n, int line_start, sbuf *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k, start;

	if (line_start) {
		/* four blanks make a code block; none are needed at a line's start */
		while (i < n && (p[i] == ' ' || p[i] == '\t'))
			i++;
		if (i < n && strchr("#>-+=", p[i])) {
			sb_addc(out, '\\');
			sb_addc(out, s[i++]);
		} else {
			/* an ordered list item: "1." or "1)" */
			for (k = i; k < n && k - i < 10 && p[k] >= '0' && p[k] <= '9'; k++)
				;
			if (k > i && k < n && (p[k] == '.' || p[k] == ')')) {
				sb_add(out, s + i, k - i);
				sb_addc(out, '\\');
				i = k;
			}
		}
	}
	start = i;
	for (; i < n; i++) {
		unsigned char c = p[i];
		switch (c) {
		case '\\': case '`': case '*': case '[': case ']': case '<': case '&':
		case '|': case '~': case '$':
			/* $: GitHub renders $...$ as math */
			sb_addc(out, '\\');
			sb_addc(out, (char)c);
			continue;
		case '_':
			/* inside a word it opens and closes nothing */
			if (!(i > start && i + 1 < n && alnum(p[i - 1]) && alnum(p[i + 1])))
				sb_addc(out, '\\');
			sb_addc(out, '_');
			continue;
		case ':':
			/* GFM's extended autolinks: "https://..." in text is a link */
			if (i + 2 < n && p[i + 1] == '/' && p[i + 2] == '/')
				sb_addc(out, '\\');
			sb_addc(out, ':');
			continue;
		case '.':
			/* and so is "www.x" */
			if (i >= start + 3 && (p[i - 1] | 0x20) == 'w' && (p[i - 2] | 0x20) == 'w' &&
			    (p[i - 3] | 0x20) == 'w')
				sb_addc(out, '\\');
			sb_addc(out, '.');
			continue;
		case '@':
			/*
			 * GitHub's @mentions (and team mentions, e-mail autolinks)
			 * are matched on the rendered text, after escapes and
			 * entities are decoded, so neither "\@" nor "&#64;" stops
			 * one; a zero-width space between "@" and the name does.
			 */
			sb_addc(out, '@');
			if (i + 1 < n && alnum(p[i + 1]))
				sb_adds(out, "&#8203;");
			continue;
		case '#':
			/* only a # after a blank (or first) can close a heading */
			if (i == start || p[i - 1] == ' ' || p[i - 1] == '\t')
				sb_addc(out, '\\');
			sb_addc(out, '#');
			continue;
		case '\r':
			if (i + 1 < n && p[i + 1] == '\n')
				i++;
			/* fall through */
		case '\n':
			sb_adds(out, "<br>");
			continue;
		}
		if ((c >= 0x20 && c < 0x7f) || c == '\t') {
			sb_addc(out, (char)c);
			continue;
		}
		if (c >= 0x80 && (k = plain_mb(p + i, n - i)) != 0) {
			sb_add(out, s + i, k);
			i += k - 1;
			continue;
		}
		k = ctrl_at(p + i, n - i, ESC_KEEP_TAB, out);
		i += (k ? k : 1) - 1;
	}
}

int
esc_is_formula(const char *s, size_t n)
{
	if (n == 0 || !strchr("=+-@\t\r", s[0]))
		return 0;
	if (n == 1 && s[0] == '-')
		return 0;	/* the "no value" placeholder */
	if (json_number_len(s + (s[0] == '+'), n - (s[0] == '+')) == n - (s[0] == '+'))
		return 0;	/* a number, "-1.5" or "+3" */
	return 1;
}

void
esc_url(const char *url, sbuf *out)
{
	const char *s = strstr(url, "://"), *end, *at, *colon, *q;

	/* without a scheme ("user:pw@host:port") the authority starts the text */
	s = s ? s + 3 : url;
	end = s + strcspn(s, "/?#");
	at = NULL;
	for (q = s; q < end; q++)
		if (*q == '@')
			at = q;		/* the last '@': a password may hold one */
	if (!at) {
		sb_adds(out, url);
		return;
	}
	sb_add(out, url, (size_t)(s - url));
	colon = memchr(s, ':', (size_t)(at - s));
	if (colon) {
		sb_add(out, s, (size_t)(colon - s));
		sb_adds(out, ":***");
	} else {
		sb_adds(out, "***");	/* a token in the user name is a credential too */
	}
	sb_adds(out, at);
}
