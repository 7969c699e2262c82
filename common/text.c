/* Text primitives reproducing the reference analyzer's string handling. */
#include <string.h>

#include "opt.h"
#include "text.h"

size_t
text_ws_len(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	if (n == 0)
		return 0;
	if (p[0] < 0x80) {
		if ((p[0] >= 0x09 && p[0] <= 0x0d) || (p[0] >= 0x1c && p[0] <= 0x20))
			return 1;
		return 0;
	}
	if (p[0] == 0xc2 && n >= 2 && (p[1] == 0x85 || p[1] == 0xa0))
		return 2;
	if (n >= 3) {
		if (p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80)
			return 3;			/* U+1680 */
		if (p[0] == 0xe2 && p[1] == 0x80 &&
		    ((p[2] >= 0x80 && p[2] <= 0x8a) || p[2] == 0xa8 ||
		    p[2] == 0xa9 || p[2] == 0xaf))
			return 3;			/* U+2000-200A, 2028, 2029, 202F */
		if (p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f)
			return 3;			/* U+205F */
		if (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80)
			return 3;			/* U+3000 */
	}
	return 0;
}

/* Length of the whitespace code point that ends at p+n, or 0. */
static size_t
ws_len_back(const char *p, size_t n)
{
	size_t k;

	for (k = 1; k <= 3 && k <= n; k++) {
		if (text_ws_len(p + n - k, k) == k)
			return k;
	}
	return 0;
}

const char *
text_strip(const char *p, size_t n, size_t *outlen)
{
	size_t k;

	while (n && (k = text_ws_len(p, n)) != 0) {
		p += k;
		n -= k;
	}
	while (n && (k = ws_len_back(p, n)) != 0)
		n -= k;
	*outlen = n;
	return p;
}

static int
is_ascii_ws6(unsigned char c)
{
	return c == ' ' || (c >= 0x09 && c <= 0x0d);
}

void
text_normalize(const char *p, size_t n, sbuf *out)
{
	size_t i, k, len;
	int collapse = 0;

	sb_reset(out);
	p = text_strip(p, n, &len);
	for (i = 0; i < len; i++) {
		if (is_ascii_ws6((unsigned char)p[i])) {
			collapse = 1;
			break;
		}
	}
	if (!collapse) {
		sb_add(out, p, len);
		return;
	}
	sb_grow(out, len);
	for (i = 0; i < len;) {
		k = text_ws_len(p + i, len - i);
		if (k) {
			while (i < len && (k = text_ws_len(p + i, len - i)) != 0)
				i += k;
			sb_addc(out, ' ');
			continue;
		}
		sb_addc(out, p[i]);
		i++;
	}
}

void
text_lower(char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] >= 'A' && p[i] <= 'Z')
			p[i] += 'a' - 'A';
}

int
text_has(const char *p, size_t n, const char *needle)
{
	size_t m = strlen(needle);

	if (m == 0)
		return 1;
	return m <= n && memmem(p, n, needle, m) != NULL;
}

int
text_starts(const char *p, size_t n, const char *prefix)
{
	size_t m = strlen(prefix);

	return m <= n && memcmp(p, prefix, m) == 0;
}

int
text_ends(const char *p, size_t n, const char *suffix)
{
	size_t m = strlen(suffix);

	return m <= n && memcmp(p + n - m, suffix, m) == 0;
}

static char
lc(char c)
{
	return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

int
text_has_ci(const char *p, size_t n, const char *needle)
{
	size_t m = strlen(needle), i, j;

	if (m == 0)
		return 1;
	if (m > n)
		return 0;
	for (i = 0; i + m <= n; i++) {
		if (lc(p[i]) != needle[0])
			continue;
		for (j = 1; j < m && lc(p[i + j]) == needle[j]; j++)
			;
		if (j == m)
			return 1;
	}
	return 0;
}

size_t
text_cplen(const char *p, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)p[i] & 0xc0) != 0x80)
			c++;
	return c;
}

void
text_compact(const char *p, size_t n, sbuf *out)
{
	sbuf t = SBUF_INIT;
	size_t i;

	text_normalize(p, n, &t);
	sb_reset(out);
	sb_grow(out, t.len);
	for (i = 0; i < t.len; i++) {
		char c = t.s[i];
		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))
			sb_addc(out, c);
		else if (c >= 'A' && c <= 'Z')
			sb_addc(out, c + ('a' - 'A'));
	}
	sb_free(&t);
}

static int
ishex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

static int
isword(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    c == '_';
}

/* Both rules: every 0x run (words 0), or only one that starts a word (words 1). */
static void
hex_addr(const char *p, size_t n, int words, sbuf *out)
{
	size_t i = 0, j;

	while (i < n) {
		if (p[i] == '0' && i + 1 < n && p[i + 1] == 'x' && i + 2 < n && ishex(p[i + 2]) &&
		    !(words && i > 0 && isword(p[i - 1]))) {
			j = i + 2;
			while (j < n && ishex(p[j]))
				j++;
			sb_add(out, "0xADDR", 6);
			i = j;
			continue;
		}
		sb_addc(out, p[i]);
		i++;
	}
}

void
text_hex_addr(const char *p, size_t n, sbuf *out)
{
	hex_addr(p, n, 0, out);
}

void
text_hex_addr_words(const char *p, size_t n, sbuf *out)
{
	hex_addr(p, n, 1, out);
}

void
canonicalize_name(const char *p, size_t n, sbuf *out)
{
	sbuf t = SBUF_INIT;
	size_t i;
	long depth = 0;

	text_normalize(p, n, &t);
	sb_reset(out);
	/*
	 * The reference replaces 0x runs inside words too, which merges
	 * Tensile tile shapes (MT160x256x64, MT160x128x64: MT160xADDRx64);
	 * corrected, only an address that starts a word goes
	 * (docs/deviations.md C12).
	 */
	if (memchr(t.s ? t.s : "", '0', t.len))
		hex_addr(t.s, t.len, !compat_reference, out);
	else
		sb_add(out, t.s ? t.s : "", t.len);
	sb_free(&t);
	if (!text_starts(out->s ? out->s : "", out->len, "void ") ||
	    out->len == 0 || out->s[out->len - 1] != ')')
		return;
	for (i = out->len; i-- > 0;) {
		if (out->s[i] == ')')
			depth++;
		else if (out->s[i] == '(') {
			depth--;
			if (depth == 0) {
				out->len = i;
				out->s[i] = '\0';
				return;
			}
		}
	}
}

static const struct {
	const char *marker, *repl;
} repo_markers[] = {
	{ "python/sglang/", "python/sglang/" },
	{ "sgl_kernel/", "sgl_kernel/" },
	{ "vllm/", "vllm/" },
	{ "python/tokenspeed/", "python/tokenspeed/" },
	{ "tokenspeed/", "tokenspeed/" },
	{ "tensorrt_llm/", "tensorrt_llm/" },
	{ "tensorrt-llm/", "tensorrt_llm/" },
};

void
normalize_repo_relative_path(const char *p, size_t n, sbuf *out)
{
	sbuf t = SBUF_INIT, l = SBUF_INIT;
	size_t i, k, rl;
	const char *hit, *s;

	text_normalize(p, n, &t);
	for (i = 0; i < t.len; i++)
		if (t.s[i] == '\\')
			t.s[i] = '/';
	sb_add(&l, t.s ? t.s : "", t.len);
	text_lower(l.s ? l.s : NULL, l.len);
	sb_reset(out);
	for (k = 0; k < sizeof repo_markers / sizeof repo_markers[0]; k++) {
		size_t ml = strlen(repo_markers[k].marker);
		if (l.len < ml)
			continue;
		hit = memmem(l.s, l.len, repo_markers[k].marker, ml);
		if (!hit)
			continue;
		s = t.s + (hit - l.s) + ml;
		rl = t.len - (size_t)(s - t.s);
		while (rl && *s == '/') {
			s++;
			rl--;
		}
		{
			sbuf r = SBUF_INIT;
			size_t off = 0;
			sb_adds(&r, repo_markers[k].repl);
			sb_add(&r, s, rl);
			while (off < r.len && r.s[off] == '/')
				off++;
			sb_add(out, r.s + off, r.len - off);
			sb_free(&r);
		}
		goto done;
	}
	if (l.len >= 7 && (hit = memmem(l.s, l.len, "sglang/", 7)) != NULL) {
		sbuf r = SBUF_INIT;
		size_t off = 0;
		sb_adds(&r, "python/");
		sb_add(&r, t.s + (hit - l.s), t.len - (size_t)(hit - l.s));
		while (off < r.len && r.s[off] == '/')
			off++;
		sb_add(out, r.s + off, r.len - off);
		sb_free(&r);
		goto done;
	}
	s = t.s ? t.s : "";
	rl = t.len;
	while (rl && *s == '/') {
		s++;
		rl--;
	}
	sb_add(out, s, rl);
done:
	sb_free(&t);
	sb_free(&l);
}

int
text_match_pyloc(const char *p, size_t n, size_t *pathlen, size_t *line_off,
    size_t *line_len, size_t *func_off)
{
	size_t i, j;

	/* Lazy path: the first "(digits): X" at index >= 1 wins. */
	for (i = 1; i < n; i++) {
		if (p[i] == '\n')
			return 0;	/* '.' does not match newline */
		if (p[i] != '(')
			continue;
		j = i + 1;
		while (j < n && p[j] >= '0' && p[j] <= '9')
			j++;
		if (j == i + 1 || j + 2 >= n || p[j] != ')' || p[j + 1] != ':' ||
		    p[j + 2] != ' ')
			continue;
		if (j + 3 >= n)
			continue;
		/* func must not contain a newline ('.+$'); one trailing \n is allowed */
		{
			const char *nl = memchr(p + j + 3, '\n', n - (j + 3));
			if (nl && (size_t)(nl - p) != n - 1)
				return 0;
		}
		*pathlen = i;
		*line_off = i + 1;
		*line_len = j - (i + 1);
		*func_off = j + 3;
		return 1;
	}
	return 0;
}

void
normalize_source_location(const char *p, size_t n, sbuf *out)
{
	sbuf t = SBUF_INIT, path = SBUF_INIT;
	size_t pl, lo, ll, fo;

	text_normalize(p, n, &t);
	sb_reset(out);
	if (!t.len || !text_match_pyloc(t.s, t.len, &pl, &lo, &ll, &fo)) {
		sb_add(out, t.s ? t.s : "", t.len);
		sb_free(&t);
		return;
	}
	normalize_repo_relative_path(t.s, pl, &path);
	sb_add(out, path.s ? path.s : "", path.len);
	sb_addc(out, ':');
	sb_add(out, t.s + lo, ll);
	sb_addc(out, ' ');
	sb_add(out, t.s + fo, t.len - fo);
	sb_free(&t);
	sb_free(&path);
}

void
text_md_escape(const char *p, size_t n, sbuf *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] == '|')
			sb_add(out, "\\|", 2);
		else if (p[i] == '\n')
			sb_add(out, "<br>", 4);
		else
			sb_addc(out, p[i]);
	}
}

/* Does p[0..n) end in ":<digits>" after at least one character?  Returns the colon's index or 0. */
static size_t
ends_line(const char *p, size_t n)
{
	size_t i = n;

	while (i > 0 && p[i - 1] >= '0' && p[i - 1] <= '9')
		i--;
	return i < n && i >= 2 && p[i - 1] == ':' ? i - 1 : 0;
}

void
text_site_display(const char *p, size_t n, sbuf *out)
{
	size_t share = n, pl, lo, ll, fo, i, c;

	sb_reset(out);
	/* the share suffix, kept as it is */
	if (n > 14 && p[n - 1] == ')') {
		const char *o = memmem(p, n, " (site share ", 13);
		if (o)
			share = (size_t)(o - p);
	}
	/* "FUNC @ PATH:LINE" */
	for (i = share; i >= 3; i--) {
		if (memcmp(p + i - 3, " @ ", 3) != 0)
			continue;
		if ((c = ends_line(p + i, share - i)) != 0 && i > 3) {
			sb_add(out, p + i, share - i);
			sb_addc(out, ' ');
			sb_add(out, p, i - 3);
			goto suffix;
		}
		break;
	}
	/* "PATH(LINE): FUNC" */
	if (text_match_pyloc(p, share, &pl, &lo, &ll, &fo)) {
		sb_add(out, p, pl);
		sb_addc(out, ':');
		sb_add(out, p + lo, ll);
		sb_addc(out, ' ');
		sb_add(out, p + fo, share - fo);
		goto suffix;
	}
	sb_add(out, p, share);
suffix:
	sb_add(out, p + share, n - share);
}
