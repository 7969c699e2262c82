/*
 * The host's blocking calls: where the host thread sat until GPU work was
 * done, so that a GPU gap it spent there is a wait on a synchronization,
 * not on the host's own work (issue 25).
 */
#include <stdlib.h>
#include <string.h>

#include "imap.h"
#include "ss.h"
#include "xalloc.h"

static int
bcall_cmp(const void *pa, const void *pb)
{
	const struct bcall *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

/* A synchronous copy's call returns once its copy is done (as trace-stage reads it). */
static int
sync_copy(const struct trace_reader *r, const struct tcall *l)
{
	const char *n = strtab_str(r->str, l->name);

	return l->kind == LAUNCH_MEMCPY && !strstr(n, "Async") && !strstr(n, "async");
}

/* base: the trace's time base, for the corrupt-time bounds (ss_bad_time). */
static void
add_call(struct blockset *bs, size_t *cap, const struct tcall *l, double base)
{
	if (ss_bad_time(l->ts + base, l->dur))
		return;	/* no interval to measure: the call counts nowhere */
	xgrow(&bs->c, cap, bs->n + 1, sizeof *bs->c);
	bs->c[bs->n].ts = l->ts;
	bs->c[bs->n].end = l->ts + (l->dur > 0 ? l->dur : 0);
	bs->c[bs->n++].name = l->name;
}

void
blockset_make(struct trace_reader *r, const struct trace *tr, const struct item *it, size_t n,
    struct blockset *bs)
{
	imap pids = { 0 };	/* host processes that launched the items */
	unsigned char *seen = xcalloc(tr->nln ? tr->nln : 1, 1);
	size_t i, cap = 0, capu = 0;
	int isnew;

	memset(bs, 0, sizeof *bs);
	for (i = 0; i < n; i++) {
		const struct tcall *l;
		if (it[i].launch < 0 || seen[it[i].launch])
			continue;
		seen[it[i].launch] = 1;
		l = &tr->ln[it[i].launch];
		imap_put(&pids, trace_thread_pid(r, l->thread), &isnew);
		if (sync_copy(r, l))
			add_call(bs, &cap, l, (double)tr->time_base);
	}
	for (i = 0; i < tr->nsy; i++)
		if (imap_get(&pids, trace_thread_pid(r, tr->sy[i].thread)))
			add_call(bs, &cap, &tr->sy[i], (double)tr->time_base);
	xqsort(bs->c, bs->n, sizeof *bs->c, bcall_cmp);
	for (i = 0; i < bs->n; i++) {
		if (bs->nu && bs->c[i].ts <= bs->u[bs->nu - 1].end) {
			if (bs->c[i].end > bs->u[bs->nu - 1].end)
				bs->u[bs->nu - 1].end = bs->c[i].end;
			continue;
		}
		xgrow(&bs->u, &capu, bs->nu + 1, sizeof *bs->u);
		bs->u[bs->nu++] = (struct span){ bs->c[i].ts, bs->c[i].end };
	}
	free(seen);
	imap_free(&pids);
}

void
blockset_free(struct blockset *bs)
{
	free(bs->c);
	free(bs->u);
	memset(bs, 0, sizeof *bs);
}

uint32_t
blockset_call(const struct blockset *bs, double ts, double end)
{
	double best = 0, a, b;
	uint32_t name = NOSTR;
	size_t i;

	for (i = 0; i < bs->n && bs->c[i].ts < end; i++) {
		a = bs->c[i].ts > ts ? bs->c[i].ts : ts;
		b = bs->c[i].end < end ? bs->c[i].end : end;
		if (b - a > best) {
			best = b - a;
			name = bs->c[i].name;
		}
	}
	return name;
}
