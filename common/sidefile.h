/*
 * Side files: the small files a tool reads beside its main input --
 * server_args.json next to a trace, a fusion-pattern catalog (--patterns)
 * -- and that any user may have put there (issue 27 item 4).  Only a
 * regular file is read: it is opened with O_NONBLOCK (a FIFO never hangs
 * the open) and checked with fstat before a byte is read, so a FIFO, a
 * device (a link to /dev/zero) or a directory is refused with a message;
 * and at most the side-file limit (reslimit.h, TRIAGE_MAX_SIDE_BYTES,
 * 16 MiB) is read, also from a file that grows while it is read.
 */
#ifndef SIDEFILE_H
#define SIDEFILE_H

#include <stdio.h>

#include "sbuf.h"

/*
 * Open the side file at path for reading.  `what` names it in messages
 * ("server args file", "pattern catalog").  Returns the stream, or NULL
 * with the reason in why (reset first): "'P': not a regular file (a FIFO);
 * the server args file is read from regular files only", "... is larger
 * than the limit of 16 MiB (TRIAGE_MAX_SIDE_BYTES)", or the open error.
 */
FILE *side_open(const char *path, const char *what, sbuf *why);

/* The whole side file into out (reset first); 0, or -1 with why. */
int side_read(const char *path, const char *what, sbuf *out, sbuf *why);

/*
 * For a reader of lines: the bytes read so far from a side_open stream
 * passed the limit?  (getc loops call it with their count.)  Sets why.
 */
int side_over(const char *path, const char *what, unsigned long long nread, sbuf *why);

#endif
