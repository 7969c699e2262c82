/* The trace-event scanner on a thread of its own: a bounded queue of copied events (scanq.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "scanq.h"
#include "xalloc.h"

/*
 * An entry of a block: this header, then (events) the selection's nidx
 * ints, then ntok tokens, then len bytes of text, padded to 8 bytes.
 */
struct entry {
	unsigned long long off;		/* decompressed byte offset (events) */
	unsigned long long len;		/* the text's bytes */
	int32_t ntok, depth, which;	/* which: -1 an event, else a member's key index */
	int32_t pad;
};

struct block {
	char *p;
	size_t len, cap;
	unsigned long long raw;		/* zio_raw_offset when the block was handed over */
};

struct q {
	pthread_mutex_t mu;
	pthread_cond_t can_put, can_get;
	struct block ring[SCANQ_BLOCKS];
	unsigned r, w;			/* blocks taken and handed over, counters */
	/*
	 * Who waits, so that a wake costs a system call only when it is
	 * needed, and then for several blocks: the scan thread is woken once
	 * half the ring is free, the calling thread once two blocks wait
	 * (each wake is a futex call and two context switches, which on a
	 * VM cost more than copying the block).
	 */
	int pwait, cwait;
	int done;			/* the scan returned rc, or died */
	atomic_int stop;		/* a callback asked to stop */
	int rc;
	/* an event larger than a block, handed over as it is while the scan waits */
	int direct;
	const json_doc *dd;
	const int *didx;
	unsigned long long doff, draw;
	int dwhich;
	/* die() on the scan thread (err_thread_die): its code and message */
	int died, die_code;
	char die_msg[1024];

	/* the scan's, on its thread */
	zio *z;
	const char *name;
	const struct json_keys *keys;
	const struct scan_members *members;
	struct scan_members qmembers;
	struct scan_stats *st;
	char *errbuf;
	size_t errlen;
	unsigned nidx;
};

static size_t
pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The scan thread waits for the calling thread to take blocks (q->mu held). */
static void
wait_room(struct q *q)
{
	q->pwait = 1;
	pthread_cond_wait(&q->can_put, &q->mu);
	q->pwait = 0;
}

/* Hand the block being filled (ring[w]) over and wait for the next to be free. */
static void
hand_over(struct q *q)
{
	pthread_mutex_lock(&q->mu);
	q->ring[q->w % SCANQ_BLOCKS].raw = zio_raw_offset(q->z);
	q->w++;
	if (q->cwait && q->w - q->r >= 2)
		pthread_cond_signal(&q->can_get);
	while (q->w - q->r >= SCANQ_BLOCKS && !atomic_load(&q->stop))
		wait_room(q);
	pthread_mutex_unlock(&q->mu);
	q->ring[q->w % SCANQ_BLOCKS].len = 0;
}

/* Copy one event or member into the queue (the scan thread). */
static int
put(struct q *q, const json_doc *d, const int *idx, unsigned long long off, int which)
{
	struct block *b;
	struct entry e;
	size_t ni = which < 0 ? q->nidx : 0, need;

	if (atomic_load_explicit(&q->stop, memory_order_relaxed))
		return 1;
	need = sizeof e + pad8(ni * sizeof *idx + (size_t)d->ntok * sizeof *d->tok + d->len);
	b = &q->ring[q->w % SCANQ_BLOCKS];
	if (b->len && b->len + need > b->cap) {
		hand_over(q);
		if (atomic_load(&q->stop))
			return 1;
		b = &q->ring[q->w % SCANQ_BLOCKS];
	}
	if (need > SCANQ_BLOCK_BYTES) {
		/*
		 * An event larger than a block is not copied: once the queue is
		 * empty the calling thread takes it where it is, this thread
		 * waiting until its callback returned (the memory is then the
		 * one-thread scan's).
		 */
		if (b->len)
			hand_over(q);
		pthread_mutex_lock(&q->mu);
		pthread_cond_signal(&q->can_get);	/* whatever waits goes first */
		while (q->r != q->w && !atomic_load(&q->stop))
			wait_room(q);
		if (!atomic_load(&q->stop)) {
			q->dd = d;
			q->didx = idx;
			q->doff = off;
			q->dwhich = which;
			q->draw = zio_raw_offset(q->z);
			q->direct = 1;
			pthread_cond_signal(&q->can_get);
			while (q->direct)
				wait_room(q);
		}
		pthread_mutex_unlock(&q->mu);
		return atomic_load(&q->stop) != 0;
	}
	if (!b->p) {	/* b->len is 0 here */
		b->cap = SCANQ_BLOCK_BYTES;
		b->p = xmalloc(b->cap);
	}
	memset(&e, 0, sizeof e);
	e.off = off;
	e.len = d->len;
	e.ntok = d->ntok;
	e.depth = d->depth;
	e.which = which;
	memcpy(b->p + b->len, &e, sizeof e);
	need = b->len + sizeof e;
	if (ni && idx) {
		memcpy(b->p + need, idx, ni * sizeof *idx);
		need += ni * sizeof *idx;
	}
	if (d->ntok) {
		memcpy(b->p + need, d->tok, (size_t)d->ntok * sizeof *d->tok);
		need += (size_t)d->ntok * sizeof *d->tok;
	}
	memcpy(b->p + need, d->js, d->len);
	b->len = pad8(need + d->len);
	return 0;
}

static int
put_event(void *ctx, const json_doc *d, const int *idx, unsigned long long off)
{
	return put(ctx, d, idx, off, -1);
}

static int
put_member(void *ctx, int which, const json_doc *d)
{
	return put(ctx, d, NULL, 0, which);
}

static _Thread_local struct q *this_q;	/* the scan thread's queue */

/*
 * die() on the scan thread (an allocation that failed): the events before
 * go on, then the calling thread dies with the message, as the one-thread
 * scan would have at that event; exit's handlers never run on this thread.
 */
static void
scan_die(int code, const char *msg)
{
	struct q *q = this_q;

	pthread_mutex_lock(&q->mu);
	if (q->ring[q->w % SCANQ_BLOCKS].len) {
		q->ring[q->w % SCANQ_BLOCKS].raw = zio_raw_offset(q->z);
		q->w++;
	}
	q->died = 1;
	q->die_code = code;
	snprintf(q->die_msg, sizeof q->die_msg, "%s", msg);
	q->done = 1;
	pthread_cond_signal(&q->can_get);
	pthread_mutex_unlock(&q->mu);
	pthread_exit(NULL);
}

static void *
scan_thread(void *arg)
{
	struct q *q = arg;
	int rc;

	this_q = q;
	err_thread_die(scan_die);
	rc = scan_run_members(q->z, q->name, q->keys, put_event, NULL,
	    q->members ? &q->qmembers : NULL, q, q->st, q->errbuf, q->errlen);
	pthread_mutex_lock(&q->mu);
	if (q->ring[q->w % SCANQ_BLOCKS].len) {
		q->ring[q->w % SCANQ_BLOCKS].raw = zio_raw_offset(q->z);
		q->w++;		/* the last block: the consumer waits for no room */
	}
	q->rc = rc;
	q->done = 1;
	pthread_cond_signal(&q->can_get);
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/* An event or member to its callback on the calling thread. */
static int
deliver_one(struct q *q, const json_doc *d, const int *idx, unsigned long long off, int which,
    unsigned long long raw, scan_select_fn sfn, void *ctx, unsigned long long *raw_off)
{
	if (raw_off)
		*raw_off = raw;
	return which < 0 ? sfn(ctx, d, idx, off) : q->members->fn(ctx, which, d);
}

/* The calling thread: each entry of block b to its callback, until one asks to stop. */
static int
deliver(struct q *q, const struct block *b, scan_select_fn sfn, void *ctx,
    unsigned long long *raw_off)
{
	size_t at = 0;

	if (raw_off)
		*raw_off = b->raw;
	while (at < b->len) {
		struct entry e;
		json_doc d;
		const int *idx = NULL;
		size_t p;
		int r;

		memcpy(&e, b->p + at, sizeof e);
		p = at + sizeof e;
		if (e.which < 0) {
			idx = (const int *)(const void *)(b->p + p);
			p += q->nidx * sizeof *idx;
		}
		memset(&d, 0, sizeof d);
		d.ntok = e.ntok;
		d.cap = (unsigned)e.ntok;
		d.depth = e.depth;
		d.tok = e.ntok ? (jsmntok_t *)(void *)(b->p + p) : NULL;
		p += (size_t)e.ntok * sizeof *d.tok;
		d.js = b->p + p;
		d.len = e.len;
		at = pad8(p + e.len);
		r = e.which < 0 ? sfn(ctx, &d, idx, e.off) : q->members->fn(ctx, e.which, &d);
		if (r)
			return 1;
	}
	return 0;
}

/* Without a thread: the callbacks with *raw_off kept up to date. */
struct sync_ctx {
	zio *z;
	scan_select_fn sfn;
	const struct scan_members *members;
	void *ctx;
	unsigned long long *raw_off;
};

static int
sync_event(void *ctx, const json_doc *d, const int *idx, unsigned long long off)
{
	struct sync_ctx *c = ctx;

	if (c->raw_off)
		*c->raw_off = zio_raw_offset(c->z);
	return c->sfn(c->ctx, d, idx, off);
}

static int
sync_member(void *ctx, int which, const json_doc *d)
{
	struct sync_ctx *c = ctx;

	return c->members->fn(c->ctx, which, d);
}

static int
run_sync(zio *z, const char *name, const struct json_keys *keys, scan_select_fn sfn,
    const struct scan_members *members, void *ctx, struct scan_stats *st, char *errbuf,
    size_t errlen, unsigned long long *raw_off)
{
	struct sync_ctx c = { z, sfn, members, ctx, raw_off };
	struct scan_members m;

	if (members) {
		m.keys = members->keys;
		m.fn = sync_member;
	}
	return scan_run_members(z, name, keys, sync_event, NULL, members ? &m : NULL, &c, st,
	    errbuf, errlen);
}

int
scanq_run_members(zio *z, const char *name, const struct json_keys *keys,
    scan_select_fn sfn, const struct scan_members *members, void *ctx, struct scan_stats *st,
    char *errbuf, size_t errlen, unsigned long long *raw_off)
{
	struct q *q;
	pthread_t th;
	int stopped = 0, rc, i, died, code;
	char msg[1024];

	if (getenv("TRIAGE_NO_THREADS"))
		return run_sync(z, name, keys, sfn, members, ctx, st, errbuf, errlen, raw_off);
	q = xcalloc(1, sizeof *q);
	q->z = z;
	q->name = name;
	q->keys = keys;
	q->members = members;
	if (members) {
		q->qmembers.keys = members->keys;
		q->qmembers.fn = put_member;
	}
	q->st = st;
	q->errbuf = errbuf;
	q->errlen = errlen;
	q->nidx = keys->ntop + keys->ninner;
	atomic_init(&q->stop, 0);
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->can_put, NULL);
	pthread_cond_init(&q->can_get, NULL);
	if (pthread_create(&th, NULL, scan_thread, q) != 0) {
		pthread_cond_destroy(&q->can_get);
		pthread_cond_destroy(&q->can_put);
		pthread_mutex_destroy(&q->mu);
		free(q);
		return run_sync(z, name, keys, sfn, members, ctx, st, errbuf, errlen, raw_off);
	}
	for (;;) {
		struct block *b;
		pthread_mutex_lock(&q->mu);
		while (q->r == q->w && !q->direct && !q->done) {
			q->cwait = 1;
			pthread_cond_wait(&q->can_get, &q->mu);
			q->cwait = 0;
		}
		if (q->r == q->w && q->direct) {
			/* the scan thread waits on its event until the callback returned */
			pthread_mutex_unlock(&q->mu);
			if (!stopped && deliver_one(q, q->dd, q->didx, q->doff, q->dwhich, q->draw,
			    sfn, ctx, raw_off)) {
				stopped = 1;
				atomic_store(&q->stop, 1);
			}
			pthread_mutex_lock(&q->mu);
			q->direct = 0;
			pthread_cond_signal(&q->can_put);
			pthread_mutex_unlock(&q->mu);
			continue;
		}
		if (q->r == q->w) {	/* done, and every block taken */
			pthread_mutex_unlock(&q->mu);
			break;
		}
		b = &q->ring[q->r % SCANQ_BLOCKS];
		pthread_mutex_unlock(&q->mu);
		if (!stopped && deliver(q, b, sfn, ctx, raw_off)) {
			stopped = 1;
			atomic_store(&q->stop, 1);
		}
		pthread_mutex_lock(&q->mu);
		q->r++;
		if (q->pwait && q->w - q->r <= SCANQ_BLOCKS / 2)
			pthread_cond_signal(&q->can_put);
		pthread_mutex_unlock(&q->mu);
	}
	pthread_join(th, NULL);
	rc = q->rc;
	if (stopped) {	/* as the one-thread scan: stopped, whatever came after */
		rc = SCAN_STOPPED;
		errbuf[0] = '\0';
	}
	died = q->died;
	code = q->die_code;
	if (died)
		snprintf(msg, sizeof msg, "%s", q->die_msg);
	for (i = 0; i < SCANQ_BLOCKS; i++)
		free(q->ring[i].p);
	pthread_cond_destroy(&q->can_get);
	pthread_cond_destroy(&q->can_put);
	pthread_mutex_destroy(&q->mu);
	free(q);
	if (died && !stopped)
		die(code, "%s", msg);
	return rc;
}
