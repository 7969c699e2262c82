/*
 * Streaming input: a file or stdin, gzip or plain, detected from the magic
 * bytes (never the file name).  Concatenated gzip members are read as one
 * stream; a stream that ends before a member's trailer is an error
 * ("truncated gzip stream").  Memory use is a few fixed buffers whatever the
 * input size.  Gzip is inflated with ISA-L (zlib in a build with ISAL=0, or
 * when TRIAGE_ZLIB is set), in a second thread unless TRIAGE_NO_THREADS is
 * set; the bytes and the messages are the same either way.
 */
#ifndef ZIO_H
#define ZIO_H

#include <stddef.h>
#include <sys/types.h>

typedef struct zio zio;

/*
 * Open `path` ("-" is stdin; a closed stdin reads as an empty one).
 * Returns NULL with errno set when the file cannot be opened.  The first
 * bytes are read to sniff the format.
 */
zio *zio_open(const char *path);

/*
 * Read up to n decompressed bytes into buf.  Returns the count (> 0),
 * 0 at a clean end of input, or -1 on error; zio_error() then describes it
 * ("truncated gzip stream", "corrupt gzip data: ...", read errors).
 */
ssize_t zio_read(zio *z, char *buf, size_t n);

/*
 * The next decompressed bytes where they lie, without a copy: sets *p and
 * returns their count (> 0), or 0 at a clean end, or -1 on an error as
 * zio_read.  The bytes stay valid until the next call on z.  Do not mix
 * with zio_read on the same stream.
 */
ssize_t zio_next(zio *z, const char **p);

const char *zio_error(const zio *z);
/*
 * Did the text pass the limit on one input's decompressed bytes
 * (TRIAGE_MAX_INPUT_BYTES, reslimit.h)?  zio_read and zio_next then
 * return -1, and zio_error names the limit.
 */
int zio_over_limit(const zio *z);
/* Is the stream empty (known at zio_open: not a byte to read)? */
int zio_empty(const zio *z);
int zio_is_gzip(const zio *z);
/* Bytes read from the underlying file so far (compressed bytes for gzip). */
unsigned long long zio_raw_offset(const zio *z);
/* Total size of the underlying file, or 0 when unknown (a pipe). */
unsigned long long zio_raw_size(const zio *z);
void zio_close(zio *z);			/* NULL is a no-op */

#endif
