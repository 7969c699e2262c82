/* Throttled progress display on stderr. */
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

progress *
progress_start(const char *title, int force)
{
	progress *p;

	if (force < 0 || quiet || (force == 0 && !isatty(2)))
		return NULL;
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
