/* Growable byte buffers (always NUL-terminated after the last byte). */
#ifndef SBUF_H
#define SBUF_H

#include <stdarg.h>
#include <stddef.h>

/*
 * An sbuf owns `s` (heap); `len` bytes are used, s[len] == '\0' whenever
 * s != NULL.  A zeroed sbuf is valid and empty.  sb_free() releases the
 * memory and leaves an empty sbuf.
 */
typedef struct {
	char *s;
	size_t len, cap;
} sbuf;

#define SBUF_INIT { NULL, 0, 0 }

void sb_reset(sbuf *b);			/* len = 0, memory kept */
void sb_free(sbuf *b);
void sb_grow(sbuf *b, size_t extra);	/* ensure room for `extra` more bytes + NUL */
void sb_add(sbuf *b, const char *p, size_t n);
void sb_adds(sbuf *b, const char *s);
void sb_addc(sbuf *b, char c);
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(sbuf *b, const char *fmt, va_list ap);
const char *sb_str(const sbuf *b);	/* "" when empty */
char *sb_detach(sbuf *b);		/* caller owns the result; b becomes empty */
/*
 * Give back the room past the end (growth doubles, from 64 bytes): for
 * buffers kept long, a few for each of a million distinct kernel names.
 */
void sb_fit(sbuf *b);

#endif
