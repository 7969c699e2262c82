/* Growable byte buffers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf.h"
#include "xalloc.h"

void
sb_reset(sbuf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

void
sb_free(sbuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

void
sb_grow(sbuf *b, size_t extra)
{
	size_t need = xadd(xadd(b->len, extra), 1);
	size_t c;

	if (need <= b->cap)
		return;
	c = b->cap < 64 ? 64 : b->cap;
	/* doubling would wrap past SIZE_MAX / 2: take exactly what is needed */
	while (c < need)
		c = c > SIZE_MAX / 2 ? need : c * 2;
	b->s = xrealloc(b->s, c);
	b->cap = c;
	b->s[b->len] = '\0';	/* a fresh buffer reads as "" */
}

void
sb_add(sbuf *b, const char *p, size_t n)
{
	sb_grow(b, n);
	if (n)
		memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void
sb_adds(sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

void
sb_addc(sbuf *b, char c)
{
	sb_grow(b, 1);
	b->s[b->len++] = c;
	b->s[b->len] = '\0';
}

void
sb_vprintf(sbuf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	sb_grow(b, (size_t)n);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void
sb_printf(sbuf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(b, fmt, ap);
	va_end(ap);
}

const char *
sb_str(const sbuf *b)
{
	return b->s ? b->s : "";
}

char *
sb_detach(sbuf *b)
{
	char *s = b->s ? b->s : xstrdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}
