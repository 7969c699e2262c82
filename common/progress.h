/*
 * Progress lines on stderr for long work: on by default only when stderr is
 * a terminal, at most one update per second, "\r"-rewritten, ended with a
 * final line by progress_stop().  A NULL handle is a no-op everywhere.
 *
 * A line left open ("\r", no newline) is ended before any message of
 * err.h, at exit, and when SIGINT, SIGTERM or SIGHUP ends the process
 * (issue 31: a Ctrl-C left the shell's prompt after the progress text).
 */
#ifndef PROGRESS_H
#define PROGRESS_H

typedef struct progress progress;

/* Start progress titled `title` (e.g. the file name).  force: 1 on, 0 auto
 * (isatty(2)), -1 off.  Returns NULL when progress is off. */
progress *progress_start(const char *title, int force);

/*
 * Report `done` of `total` bytes (total 0 = unknown) and `items` events.
 * The line gives the rate so far (MiB/s) and, with a total, the seconds
 * left at that rate (issue 19).
 */
void progress_update(progress *p, unsigned long long done,
    unsigned long long total, unsigned long long items);

/* Print the final line (always, however short the work) and free; sets *pp to NULL. */
void progress_stop(progress **pp);

/* End an open progress line with a newline (err.c calls it before each message). */
void progress_end_line(void);

#endif
