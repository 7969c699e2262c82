/* Exit codes and the one reporting layer every tool uses (see design.md). */
#ifndef ERR_H
#define ERR_H

#include <err.h>
#include <stdarg.h>

/*
 * Exit status, the same for every tool.  Warnings never change the status;
 * they go to stderr with counts and the run ends 0.
 */
enum {
	EXIT_OK = 0,		/* success, possibly with warnings on stderr */
	EXIT_DATA = 1,		/* unreadable or malformed input */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_EMPTY = 3,		/* nothing to analyze (no events, no kernels, no traces) */
	EXIT_CAPTURE = 4,	/* live capture failed */
	EXIT_REGRESSION = 5,	/* trace-diff: a stage regressed beyond --gate (issue 17) */
	EXIT_INCOMPARABLE = 6	/* trace-diff: the two runs cannot be compared (issue 17) */
};

/* Set once from argv[0] by tool_init(); used as the message prefix. */
extern const char *progname;

/*
 * tool_init: record the program name, make stdout fully buffered and leave
 * SIGPIPE at its default so `tool | head` ends quietly.
 */
void tool_init(int argc, char **argv);

/*
 * tool_finish: flush and close stdout, checking for write errors (disk
 * full, closed pipe).  Returns `status` unchanged on success, EXIT_DATA on
 * a write error (after printing "write error on stdout: ...").
 */
int tool_finish(int status);

/*
 * Every message is one line, "progname: msg", with the control characters
 * of msg (but tab) shown escaped ("\x1b", esc.h): the names, paths and
 * server replies a message quotes cannot act on a terminal or forge
 * another line (issue 27).
 */

/*
 * A thread other than the main one may set, for itself only, a function
 * that die() calls instead of printing and exiting: with the exit code and
 * the message (without "progname: "), and which must not return (it hands
 * the error to the main thread and ends its thread: scanq.c, issue 30).
 * NULL restores the default.
 */
void err_thread_die(void (*fn)(int code, const char *msg));

/* die: print "progname: msg" to stderr and exit with `code`. */
void die(int code, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));

/* err_msg: print "progname: msg" to stderr, even under quiet (an error). */
void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void err_vmsg(const char *fmt, va_list ap);

/* warn_msg: print "progname: warning: msg" to stderr (no exit). */
void warn_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* note_msg: print "progname: msg" to stderr unless quiet mode is on. */
void note_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* quiet: when non-zero, warn_msg and note_msg print nothing. */
extern int quiet;

/* Version string printed by --version. */
#define TRIAGE_VERSION "0.1.0"
void print_version(void) __attribute__((noreturn));

#endif
