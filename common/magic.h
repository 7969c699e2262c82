/*
 * What a file that is not JSON looks like, from its first bytes: the
 * common formats a trace path ends up naming by mistake (an image, an
 * archive, a program, other compression).  For error messages only
 * (issue 19: "the bytes look like a PNG image", not "invalid JSON").
 */
#ifndef MAGIC_H
#define MAGIC_H

#include <stddef.h>

/*
 * A phrase naming the format of the n bytes at p ("a PNG image", "a ZIP
 * archive", ..., "binary data" for 16 bytes or more with control bytes),
 * or NULL when they could be JSON text or are not recognised.  gz: the bytes are what a gzip stream inflated to (the
 * phrase then says "gzip-compressed ...").  The phrase is static.
 */
const char *magic_describe(const unsigned char *p, size_t n, int gz);

#endif
