/*
 * Output files (-o PATH), written whole or not at all, without harm to
 * what the path names (issue 27 items 1, 2).  The one implementation
 * behind triage-render -o and the triage driver's -o (which hands its
 * finished report to triage-render --copy).
 *
 * What the path names decides how it is written:
 *   "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N
 *                  the open descriptor itself (1, 2 or N), as it is;
 *   a symlink      followed (up to 40 links, dangling ones too) to the
 *                  file it names, which is then written by these rules;
 *   a FIFO, a character or block device, anything under /proc
 *                  opened and written directly, never replaced;
 *   a regular file a temporary file made with mkstemp (O_EXCL) beside it,
 *                  written, flushed to disk, given the target's
 *                  permission bits (and owner, when root writes), then
 *                  renamed over it; refused (EXIT_USAGE) when the file has
 *                  other hard links, which a new file would cut;
 *   nothing yet    the same temporary file, mode 0666 less the umask, in
 *                  the directory that must exist;
 *   a directory    refused (EXIT_USAGE).
 * A signal (INT, TERM, HUP) while a temporary file exists removes it.
 * Direct targets cannot be written atomically: a failure may leave part
 * of the text there.
 *
 * Errors: the functions return 0, or an exit status (EXIT_USAGE for a
 * target refused, EXIT_DATA for a failed write) with the reason in `why`
 * (reset first), a sentence naming the path.
 */
#ifndef OFILE_H
#define OFILE_H

#include <stddef.h>
#include <sys/types.h>

#include "sbuf.h"

struct ofile {
	int fd;			/* where the bytes go; -1 when closed */
	int direct;		/* written in place (descriptor, FIFO, device) */
	int own_fd;		/* fd was opened here (closed at the end) */
	char *shown;		/* the path as given, for messages (heap) */
	char *target;		/* the file renamed over (heap), or NULL */
	char *tmp;		/* the temporary file (heap), or NULL */
	mode_t mode;		/* permission bits the result gets */
	uid_t uid;
	gid_t gid;
	int chown;		/* give it uid and gid (root over another's file) */
};

/*
 * For a name the tool made itself (a table's file in a directory, a
 * rank's or a batch operand's report), not one the user typed: 0, or
 * EXIT_USAGE with why when path is a symbolic link, which someone with
 * write access to the directory may have planted to aim the write
 * elsewhere.  Call before ofile_open or ofile_put.
 */
int ofile_no_link(const char *path, sbuf *why);

/*
 * ofile_open and ofile_put for such a name: a link there when it is opened
 * is refused (EXIT_USAGE, why as ofile_no_link's), so that one planted
 * after the check is not followed either; the rename at the end replaces
 * whatever the name then is, never a file a link leads to.
 */
int ofile_open_made(struct ofile *o, const char *path, sbuf *why);
int ofile_put_made(const char *path, const void *p, size_t n, sbuf *why);

/* Can path be written by these rules?  Nothing is created or opened. */
int ofile_check(const char *path, sbuf *why);

/* Open path for writing (o is filled; on failure nothing is left behind). */
int ofile_open(struct ofile *o, const char *path, sbuf *why);

/* Append n bytes. */
int ofile_write(struct ofile *o, const void *p, size_t n, sbuf *why);

/* Finish: flush, rename the temporary file into place, close. */
int ofile_commit(struct ofile *o, sbuf *why);

/* Give up: remove the temporary file, close.  Safe after a failed call. */
void ofile_abort(struct ofile *o);

/* ofile_open, one write and ofile_commit: the whole text to path. */
int ofile_put(const char *path, const void *p, size_t n, sbuf *why);

#endif
