/*
 * Short kernel names for the tables people read (issue: 60 % of a report
 * was raw mangled names of up to 1,470 characters).  The full name stays
 * in JSON and, in HTML, on hover.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "sbuf.h"
#include "strtab.h"
#include "xalloc.h"

/* The C++ runtime's demangler (libstdc++; cxxabi.h declares it for C++). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status);

/* Drop the contents of top-level <...> and (...) groups, keeping the brackets. */
static void
elide(const char *s, sbuf *out)
{
	const char *p = s;

	while (*p) {
		char open = *p, close = open == '<' ? '>' : open == '(' ? ')' : 0;
		const char *q;
		int depth = 0;

		/* "(anonymous namespace)" names a scope, not an argument list */
		if (!close || strncmp(p, "(anonymous namespace)", 21) == 0) {
			if (close) {
				sb_add(out, p, 21);
				p += 21;
			} else
				sb_addc(out, *p++);
			continue;
		}
		for (q = p; *q; q++) {
			if (*q == '<' || *q == '(')
				depth++;
			else if ((*q == '>' || *q == ')') && --depth == 0)
				break;
		}
		if (!*q) {		/* unbalanced: keep the rest as it is */
			sb_adds(out, p);
			return;
		}
		sb_addc(out, open);
		if (q > p + 1)
			sb_adds(out, "\xe2\x80\xa6");	/* U+2026 … */
		sb_addc(out, close);
		p = q + 1;
	}
}

/*
 * A symbol the runtime's demangler refuses (newer manglings, such as
 * DF16b for bfloat16, or a cut name): its scope path and the first name
 * among its template arguments, "ck_tile::kentry<Rmsnorm2dFwd…>".
 */
static int
partial_demangle(const char *s, sbuf *out)
{
	const char *p = s + 2, *q;
	int first = 1;

	if (strncmp(s, "_Z", 2) != 0)
		return 0;
	if (*p == 'N')
		p++;
	while (*p == 'K' || *p == 'V' || *p == 'r')
		p++;
	while (*p >= '1' && *p <= '9') {
		size_t n = strtoul(p, (char **)&q, 10);
		if (strlen(q) < n)
			return 0;
		if (!first)
			sb_adds(out, "::");
		sb_add(out, q, n);
		first = 0;
		p = q + n;
	}
	if (first)
		return 0;
	if (*p != 'I')
		return 1;
	/* the first <length><identifier> inside the template arguments */
	for (q = p + 1; *q; q++) {
		size_t n, k;
		const char *id;
		if (*q < '1' || *q > '9' || (q[-1] >= '0' && q[-1] <= '9'))
			continue;
		n = strtoul(q, (char **)&id, 10);
		for (k = 0; k < n && id[k] && (id[k] == '_' || (id[k] >= 'A' && id[k] <= 'Z') ||
		    (id[k] >= 'a' && id[k] <= 'z') || (id[k] >= '0' && id[k] <= '9')); k++)
			;
		if (k == n && n > 1 && !(id[0] >= '0' && id[0] <= '9')) {
			sb_addc(out, '<');
			sb_add(out, id, n);
			sb_adds(out, "\xe2\x80\xa6>");
			return 1;
		}
	}
	sb_adds(out, "<\xe2\x80\xa6>");
	return 1;
}

/* Back off to the start of a UTF-8 sequence. */
static size_t
utf8_floor(const char *s, size_t i)
{
	while (i > 0 && ((unsigned char)s[i] & 0xc0) == 0x80)
		i--;
	return i;
}

/* One name at a given effort: level 0 elides and cuts at 60 bytes, 1 cuts at 100. */
static char *
shorten(const char *name, int level);

/*
 * The last resort for names that still clash: the level-0 form tagged with
 * four hex digits of a hash of the whole name (stable from run to run).
 */
static char *
tagged(const char *name)
{
	char *s = shorten(name, 0), tag[16];
	sbuf b = SBUF_INIT;

	snprintf(tag, sizeof tag, " #%04x", (unsigned)(hash_bytes(name, strlen(name)) & 0xffff));
	sb_adds(&b, s);
	sb_adds(&b, tag);
	free(s);
	return sb_detach(&b);
}

static char *
shorten(const char *name, int level)
{
	sbuf b = SBUF_INIT, e = SBUF_INIT;
	char *dm = NULL;
	const char *s = name;
	int status = -1;
	size_t max = level == 0 ? 60 : 100;

	if (strncmp(name, "_Z", 2) == 0) {
		dm = __cxa_demangle(name, NULL, NULL, &status);
		if (status == 0 && dm) {
			s = dm;
		} else if (partial_demangle(name, &e)) {
			/* already short: no further eliding */
			free(dm);
			if (e.len > max) {
				size_t head = utf8_floor(e.s, max - 1);
				sb_add(&b, e.s, head);
				sb_adds(&b, "\xe2\x80\xa6");
			} else
				sb_add(&b, e.s, e.len);
			sb_free(&e);
			return sb_detach(&b);
		}
	}
	if (strncmp(s, "void ", 5) == 0)
		s += 5;
	if (level == 0)
		elide(s, &e);
	else
		sb_adds(&e, s);
	if (e.len > max) {
		size_t head = utf8_floor(e.s, max - 14), tail = utf8_floor(e.s, e.len - 12);
		sb_add(&b, e.s, head);
		sb_adds(&b, "\xe2\x80\xa6");
		sb_adds(&b, e.s + tail);
	} else
		sb_add(&b, sb_str(&e), e.len);
	free(dm);
	sb_free(&e);
	return b.s ? sb_detach(&b) : xstrdup("");
}

void
short_names(const char *const *names, size_t n, char **out)
{
	int *level = xcalloc(n ? n : 1, sizeof *level);
	size_t i, j;
	int changed = 1, round;

	for (i = 0; i < n; i++)
		out[i] = names_full ? xstrdup(names[i]) : shorten(names[i], 0);
	/* a clash between different names: both keep more, until none is left */
	for (round = 0; changed && round < 3; round++) {
		changed = 0;
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++) {
				if (strcmp(out[i], out[j]) != 0 || strcmp(names[i], names[j]) == 0)
					continue;
				if (level[i] < 2) {
					free(out[i]);
					out[i] = ++level[i] == 1 ? shorten(names[i], 1) : tagged(names[i]);
					changed = 1;
				}
				if (level[j] < 2) {
					free(out[j]);
					out[j] = ++level[j] == 1 ? shorten(names[j], 1) : tagged(names[j]);
					changed = 1;
				}
			}
	}
	free(level);
}

char *
short_name(const char *name)
{
	return names_full ? xstrdup(name) : shorten(name, 0);
}
