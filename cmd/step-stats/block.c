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
sync_copy(const struct trace_reader *r, const struct item *x)
{
	const char *n = strtab_str(r->str, x->lname);

	return x->lkind == LAUNCH_MEMCPY && !strstr(n, "Async") && !strstr(n, "async");
}

/* base: the trace's time base, for the corrupt-time bounds (ss_bad_time). */
static void
add_call(struct blockset *bs, double ts, double dur, uint32_t name, double base)
{
	if (ss_bad_time(ts + base, dur))
		return;	/* no interval to measure: the call counts nowhere */
	xgrow(&bs->c, &bs->cap, bs->n + 1, sizeof *bs->c);
	bs->c[bs->n].ts = ts;
	bs->c[bs->n].end = ts + (dur > 0 ? dur : 0);
	bs->c[bs->n++].name = name;
}

void
blockset_init(struct blockset *bs, size_t nln)
{
	memset(bs, 0, sizeof *bs);
	bs->nseen = nln;
	bs->seen = xcalloc(nln / 8 + 1, 1);
}

void
blockset_item(struct trace_reader *r, const struct trace *tr, struct blockset *bs,
    const struct item *x)
{
	size_t l;
	int isnew;

	if (x->launch < 0 || (size_t)x->launch >= bs->nseen)
		return;
	l = (size_t)x->launch;
	if (bs->seen[l >> 3] >> (l & 7) & 1)
		return;
	bs->seen[l >> 3] |= (unsigned char)(1u << (l & 7));
	imap_put(&bs->pids, x->lpid, &isnew);
	if (sync_copy(r, x))
		add_call(bs, x->lts, x->ldur, x->lname, (double)tr->time_base);
}

void
blockset_finish(struct trace_reader *r, struct trace *tr, struct blockset *bs)
{
	const struct tcall *sy;
	size_t i, capu = 0;

	if (tr->sq) {
		xsort_rewind(tr->sq);
		while ((sy = xsort_next(tr->sq)) != NULL)
			if (imap_get(&bs->pids, trace_thread_pid(r, sy->thread)))
				add_call(bs, sy->ts, sy->dur, sy->name, (double)tr->time_base);
	}
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
	free(bs->seen);
	bs->seen = NULL;
	imap_free(&bs->pids);
}

void
blockset_free(struct blockset *bs)
{
	free(bs->c);
	free(bs->u);
	free(bs->seen);
	imap_free(&bs->pids);
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
