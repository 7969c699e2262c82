/* Throttled progress display on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "progress.h"
#include "xalloc.h"

struct progress {
	const char *title;
	time_t last;
	int shown;
	unsigned long long done, total, items;
};

progress *
progress_start(const char *title, int force)
{
	progress *p;

	if (force < 0 || quiet || (force == 0 && !isatty(2)))
		return NULL;
	p = xcalloc(1, sizeof *p);
	p->title = title;
	p->last = time(NULL);
	return p;
}

static void
show(progress *p, const char *end)
{
	double mib = (double)p->done / (1024.0 * 1024.0);

	if (p->total)
		fprintf(stderr, "%s: %s: %.0f%% (%.0f of %.0f MiB), %llu events%s", progname,
		    p->title, 100.0 * (double)p->done / (double)p->total, mib,
		    (double)p->total / (1024.0 * 1024.0), p->items, end);
	else
		fprintf(stderr, "%s: %s: %.0f MiB, %llu events%s", progname, p->title, mib,
		    p->items, end);
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
	if (p->shown)
		show(p, ", done.\n");
	free(p);
	*pp = NULL;
}
