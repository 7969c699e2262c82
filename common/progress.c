/* Throttled progress display on stderr. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "esc.h"
#include "progress.h"
#include "sbuf.h"
#include "xalloc.h"

struct progress {
	sbuf title;		/* the label, control characters escaped (issue 27) */
	time_t start, last;
	int shown, tty;
	unsigned long long done, total, items;
};

/* A progress line is on stderr without its newline (set by show). */
static volatile sig_atomic_t line_open;

void
progress_end_line(void)
{
	if (line_open) {
		line_open = 0;
		fputc('\n', stderr);
		fflush(stderr);
	}
}

/* A signal that ends the process ends the line first (write(2) is async-signal-safe). */
static void
on_fatal(int sig)
{
	if (line_open) {
		line_open = 0;
		(void)!write(2, "\n", 1);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Once: the line is ended at exit and by SIGINT, SIGTERM, SIGHUP (unless ignored). */
static void
guard_line(void)
{
	static int done;
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	size_t i;

	if (done)
		return;
	done = 1;
	atexit(progress_end_line);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction sa, old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_fatal;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

progress *
progress_start(const char *title, int force)
{
	progress *p;

	if (force < 0 || quiet || (force == 0 && !isatty(2)))
		return NULL;
	guard_line();
	p = xcalloc(1, sizeof *p);
	esc_ctrl(title, strlen(title), 0, &p->title);
	p->start = p->last = time(NULL);
	p->tty = isatty(2);
	return p;
}

/*
 * "45% (130 of 290 MiB, 120 MiB/s, 2 s left), 812345 events": the rate
 * over the whole run so far, the time left at that rate.  At a terminal
 * the rest of the line is cleared (another process may have written a
 * longer one there).
 */
static void
show(progress *p, const char *end)
{
	double mib = (double)p->done / (1024.0 * 1024.0);
	double secs = difftime(time(NULL), p->start);
	double rate = secs > 0 ? mib / secs : 0;
	char extra[64] = "";
	int open = end[strlen(end) - 1] != '\n';

	/*
	 * Open before the write: a signal delivered as the write returns (an
	 * interrupt sent on seeing the line) still finds the line to end.
	 */
	if (open)
		line_open = 1;
	if (rate > 0 && p->total && p->done < p->total)
		snprintf(extra, sizeof extra, ", %.0f MiB/s, %.0f s left", rate,
		    ((double)(p->total - p->done) / (1024.0 * 1024.0)) / rate);
	else if (rate > 0)
		snprintf(extra, sizeof extra, ", %.0f MiB/s", rate);
	if (p->total)
		fprintf(stderr, "%s: %s: %.0f%% (%.0f of %.0f MiB%s), %llu events%s%s", progname,
		    sb_str(&p->title), 100.0 * (double)p->done / (double)p->total, mib,
		    (double)p->total / (1024.0 * 1024.0), extra, p->items,
		    p->tty ? "\033[K" : "", end);
	else
		fprintf(stderr, "%s: %s: %.0f MiB%s, %llu events%s%s", progname, sb_str(&p->title), mib,
		    extra, p->items, p->tty ? "\033[K" : "", end);
	fflush(stderr);
	line_open = open;
	p->shown = 1;
}

void
progress_update(progress *p, unsigned long long done, unsigned long long total,
    unsigned long long items)
{
	time_t now;

	if (!p)
		return;
	p->done = done;
	p->total = total;
	p->items = items;
	now = time(NULL);
	if (now == p->last)
		return;
	p->last = now;
	show(p, "\r");
}

void
progress_stop(progress **pp)
{
	progress *p = *pp;

	if (!p)
		return;
	/* the last line always: what was read, even when it took under a second */
	show(p, ", done.\n");
	sb_free(&p->title);
	free(p);
	*pp = NULL;
}
