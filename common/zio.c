/*
 * File input with gzip sniffing, multi-member support and truncation checks.
 * Inflating is ISA-L's isal_inflate (about three times zlib's speed on
 * trace text); zlib's inflate serves where ISA-L is not built in
 * (make ISAL=0) or TRIAGE_ZLIB is set in the environment (tests compare the
 * two).  Both give the same bytes and the same messages for the same input.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#ifndef NO_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include "reslimit.h"
#include "xalloc.h"
#include "zio.h"

#define RAWBUF (1024 * 1024)
#define QSLOTS 4
#define QCHUNK (1u << 20)

/*
 * Decompression runs in a second thread for gzip input so that inflating
 * and scanning overlap; the two meet in a small queue of 1 MiB buffers, so
 * memory stays fixed.
 */
struct slot {
	char *data;
	ssize_t len;		/* > 0 data, 0 end of input, -1 error */
};

struct zio {
	int fd;
	int gzip;
	int eof;		/* raw input exhausted */
	int in_member;		/* inside a gzip member (after header, before trailer) */
	int done;		/* the consumer saw the end */
	int idone;		/* inflate reached the end (producer side) */
	int isal;		/* inflating with ISA-L, not zlib */
	z_stream zs;
#ifndef NO_ISAL
	struct inflate_state *is;
#endif
	unsigned char *raw;
	size_t rawlen, rawpos;
	unsigned long long rawoff, rawsize;
	unsigned long long out, max_out;	/* text handed out; its limit (reslimit.h) */
	int over;		/* the text passed max_out */
	/* compressed bytes consumed, published for progress across threads */
	_Atomic unsigned long long consumed;
	char err[256];

	int threaded, started, stop;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t can_put, can_get;
	struct slot q[QSLOTS];
	unsigned qr, qw;	/* read and write counters */
	size_t cur_off;		/* consumed bytes of the slot at qr */
	int borrowed;		/* zio_next handed out the slot at qr */
	char *obuf;		/* zio_next's output without the thread */
};

static int
fill(zio *z)
{
	ssize_t n;

	if (z->rawpos < z->rawlen || z->eof)
		return 0;
	for (;;) {
		n = read(z->fd, z->raw, RAWBUF);
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	if (n < 0) {
		snprintf(z->err, sizeof z->err, "read error: %s", strerror(errno));
		return -1;
	}
	z->rawlen = (size_t)n;
	z->rawpos = 0;
	z->rawoff += (unsigned long long)n;
	if (n == 0)
		z->eof = 1;
	return 0;
}

zio *
zio_open(const char *path)
{
	zio *z;
	int fd;
	struct stat st;

	if (strcmp(path, "-") == 0)
		fd = 0;
	else if ((fd = open(path, O_RDONLY)) < 0)
		return NULL;
	z = xcalloc(1, sizeof *z);
	z->fd = fd;
	z->raw = xmalloc(RAWBUF);
	z->max_out = limit_get(LIM_INPUT_BYTES);
	if (fd == 0 && fcntl(0, F_GETFD) == -1 && errno == EBADF) {
		/* a closed standard input (<&-) reads as an empty one (issue 27) */
		z->eof = 1;
		return z;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		z->rawsize = (unsigned long long)st.st_size;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (fd)
			close(fd);
		free(z->raw);
		free(z);
		errno = EISDIR;
		return NULL;
	}
	if (fill(z) < 0) {
		zio_close(z);
		return NULL;
	}
	/* A short first read cannot split the 2-byte magic in practice for files;
	 * for pipes, read once more if only one byte arrived. */
	if (z->rawlen == 1 && !z->eof) {
		ssize_t n = read(fd, z->raw + 1, RAWBUF - 1);
		if (n > 0) {
			z->rawlen += (size_t)n;
			z->rawoff += (unsigned long long)n;
		}
	}
	if (z->rawlen >= 2 && z->raw[0] == 0x1f && z->raw[1] == 0x8b) {
		z->gzip = 1;
#ifndef NO_ISAL
		z->isal = getenv("TRIAGE_ZLIB") == NULL;
		if (z->isal) {
			z->is = xmalloc(sizeof *z->is);
			isal_inflate_init(z->is);
			z->is->crc_flag = ISAL_GZIP;	/* header, CRC-32 and length checked */
		} else
#endif
		if (inflateInit2(&z->zs, 15 + 16) != Z_OK) {
			zio_close(z);
			errno = ENOMEM;
			return NULL;
		}
		z->in_member = 1;
		z->threaded = getenv("TRIAGE_NO_THREADS") == NULL;
	}
	return z;
}

static ssize_t inflate_some(zio *z, char *buf, size_t n);

static void *
producer(void *arg)
{
	zio *z = arg;
	struct slot *sl;
	ssize_t n;
	size_t got;

	for (;;) {
		pthread_mutex_lock(&z->mu);
		while (z->qw - z->qr == QSLOTS && !z->stop)
			pthread_cond_wait(&z->can_put, &z->mu);
		if (z->stop) {
			pthread_mutex_unlock(&z->mu);
			return NULL;
		}
		sl = &z->q[z->qw % QSLOTS];
		pthread_mutex_unlock(&z->mu);
		/* Fill the slot as far as possible outside the lock. */
		got = 0;
		n = 1;
		while (got < QCHUNK && (n = inflate_some(z, sl->data + got, QCHUNK - got)) > 0)
			got += (size_t)n;
		sl->len = got ? (ssize_t)got : n;
		pthread_mutex_lock(&z->mu);
		z->qw++;
		pthread_cond_signal(&z->can_get);
		pthread_mutex_unlock(&z->mu);
		if (got == 0 || n <= 0) {
			if (got && n <= 0) {
				/* data, then the end or an error: queue that next */
				pthread_mutex_lock(&z->mu);
				while (z->qw - z->qr == QSLOTS && !z->stop)
					pthread_cond_wait(&z->can_put, &z->mu);
				if (!z->stop) {
					z->q[z->qw % QSLOTS].len = n;
					z->qw++;
					pthread_cond_signal(&z->can_get);
				}
				pthread_mutex_unlock(&z->mu);
			}
			return NULL;
		}
	}
}

/* Start the inflating thread; 0 when it cannot start (then the reader inflates). */
static int
thread_start(zio *z)
{
	int i;

	for (i = 0; i < QSLOTS; i++)
		z->q[i].data = xmalloc(QCHUNK);
	pthread_mutex_init(&z->mu, NULL);
	pthread_cond_init(&z->can_put, NULL);
	pthread_cond_init(&z->can_get, NULL);
	z->started = 1;
	if (pthread_create(&z->th, NULL, producer, z) != 0) {
		z->threaded = 0;
		z->started = 0;
		for (i = 0; i < QSLOTS; i++)
			free(z->q[i].data);
		pthread_mutex_destroy(&z->mu);
		pthread_cond_destroy(&z->can_put);
		pthread_cond_destroy(&z->can_get);
		return 0;
	}
	return 1;
}

/* The oldest filled slot, waited for. */
static struct slot *
slot_wait(zio *z)
{
	struct slot *sl;

	pthread_mutex_lock(&z->mu);
	while (z->qr == z->qw)
		pthread_cond_wait(&z->can_get, &z->mu);
	sl = &z->q[z->qr % QSLOTS];
	pthread_mutex_unlock(&z->mu);
	return sl;
}

/* Hand the oldest slot back to the inflating thread. */
static void
slot_release(zio *z)
{
	z->cur_off = 0;
	pthread_mutex_lock(&z->mu);
	z->qr++;
	pthread_cond_signal(&z->can_put);
	pthread_mutex_unlock(&z->mu);
}

static ssize_t
threaded_read(zio *z, char *buf, size_t n)
{
	struct slot *sl;
	ssize_t k;

	if (z->borrowed) {
		z->borrowed = 0;
		slot_release(z);
	}
	if (!z->started && !thread_start(z))
		return inflate_some(z, buf, n);
	sl = slot_wait(z);
	if (sl->len <= 0) {
		if (sl->len == 0)
			z->done = 1;
		return sl->len;
	}
	k = sl->len - (ssize_t)z->cur_off;
	if ((size_t)k > n)
		k = (ssize_t)n;
	memcpy(buf, sl->data + z->cur_off, (size_t)k);
	z->cur_off += (size_t)k;
	if ((ssize_t)z->cur_off == sl->len)
		slot_release(z);
	return k;
}

static ssize_t
next_raw(zio *z, const char **p)
{
	struct slot *sl;
	ssize_t k;

	if (z->done)
		return 0;
	if (z->gzip && z->threaded) {
		if (z->borrowed) {
			z->borrowed = 0;
			slot_release(z);
		}
		if (z->started || thread_start(z)) {
			sl = slot_wait(z);
			if (sl->len <= 0) {
				if (sl->len == 0)
					z->done = 1;
				return sl->len;
			}
			/* the slot stays ours until the next call */
			*p = sl->data + z->cur_off;
			z->borrowed = 1;
			return sl->len - (ssize_t)z->cur_off;
		}
	}
	if (!z->gzip) {
		if (fill(z) < 0)
			return -1;
		if (z->rawpos >= z->rawlen) {
			z->done = 1;
			return 0;
		}
		*p = (const char *)z->raw + z->rawpos;
		k = (ssize_t)(z->rawlen - z->rawpos);
		z->rawpos = z->rawlen;
		return k;
	}
	if (!z->obuf)
		z->obuf = xmalloc(QCHUNK);
	k = inflate_some(z, z->obuf, QCHUNK);
	if (k > 0)
		*p = z->obuf;
	return k;
}

static ssize_t
read_raw(zio *z, char *buf, size_t n)
{
	size_t k;

	if (z->done)
		return 0;
	if (z->gzip && z->threaded)
		return threaded_read(z, buf, n);
	if (!z->gzip) {
		if (fill(z) < 0)
			return -1;
		if (z->rawpos >= z->rawlen) {
			z->done = 1;
			return 0;
		}
		k = z->rawlen - z->rawpos;
		if (k > n)
			k = n;
		memcpy(buf, z->raw + z->rawpos, k);
		z->rawpos += k;
		return (ssize_t)k;
	}
	return inflate_some(z, buf, n);
}

/* Count the text handed out; past the limit, an error (issue 27). */
static ssize_t
counted(zio *z, ssize_t k)
{
	if (k <= 0)
		return k;
	z->out += (unsigned long long)k;
	if (z->out > z->max_out) {
		z->over = 1;
		snprintf(z->err, sizeof z->err, "the %s text is larger than %s",
		    z->gzip ? "decompressed" : "input", limit_text(LIM_INPUT_BYTES));
		return -1;
	}
	return k;
}

ssize_t
zio_next(zio *z, const char **p)
{
	if (z->over)
		return -1;
	return counted(z, next_raw(z, p));
}

ssize_t
zio_read(zio *z, char *buf, size_t n)
{
	if (z->over)
		return -1;
	return counted(z, read_raw(z, buf, n));
}

int
zio_empty(const zio *z)
{
	return !z->gzip && z->eof && z->rawlen == 0 && z->out == 0;
}

int
zio_over_limit(const zio *z)
{
	return z->over;
}

/*
 * Read more raw input when the inflater left unconsumed bytes it cannot use
 * yet: the tail moves to the front and more is appended.  Returns -1 on a
 * read error; at end of file nothing changes.
 */
static int
fill_more(zio *z)
{
	size_t tail = z->rawlen - z->rawpos;
	ssize_t n;

	if (z->eof)
		return 0;
	memmove(z->raw, z->raw + z->rawpos, tail);
	z->rawpos = 0;
	z->rawlen = tail;
	for (;;) {
		n = read(z->fd, z->raw + tail, RAWBUF - tail);
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	if (n < 0) {
		snprintf(z->err, sizeof z->err, "read error: %s", strerror(errno));
		return -1;
	}
	z->rawlen += (size_t)n;
	z->rawoff += (unsigned long long)n;
	if (n == 0)
		z->eof = 1;
	return 0;
}

static void
corrupt(zio *z, const char *why)
{
	snprintf(z->err, sizeof z->err, "corrupt gzip data: %s", why);
}

/*
 * One call of zlib's inflate on the raw buffer: returns the bytes made
 * (>= 0), -1 on an error (z->err set), or -2 when no progress is possible
 * without more input.
 */
static ssize_t
zlib_step(zio *z, char *buf, size_t n)
{
	size_t k;
	int r;

	z->zs.next_in = z->raw + z->rawpos;
	z->zs.avail_in = (uInt)(z->rawlen - z->rawpos);
	z->zs.next_out = (unsigned char *)buf;
	z->zs.avail_out = (uInt)(n > (1u << 30) ? (1u << 30) : n);
	r = inflate(&z->zs, Z_NO_FLUSH);
	z->rawpos = z->rawlen - z->zs.avail_in;
	k = (size_t)((char *)z->zs.next_out - buf);
	switch (r) {
	case Z_STREAM_END:
		z->in_member = 0;
		return (ssize_t)k;
	case Z_OK:
		return (ssize_t)k;
	case Z_BUF_ERROR:
		if (k == 0 && z->rawpos < z->rawlen) {
			snprintf(z->err, sizeof z->err, "corrupt gzip data");
			return -1;
		}
		return (ssize_t)k;
	case Z_NEED_DICT:
	case Z_DATA_ERROR:
		corrupt(z, z->zs.msg ? z->zs.msg : "invalid deflate stream");
		return -1;
	case Z_MEM_ERROR:
		snprintf(z->err, sizeof z->err, "out of memory while inflating");
		return -1;
	default:
		snprintf(z->err, sizeof z->err, "gzip error %d", r);
		return -1;
	}
}

#ifndef NO_ISAL
/* isal_inflate's errors in the words zlib uses for the same faults. */
static const char *
isal_why(int r)
{
	switch (r) {
	case ISAL_INVALID_BLOCK:
		return "invalid block type or code lengths";
	case ISAL_INVALID_SYMBOL:
		return "invalid literal/length or distance code";
	case ISAL_INVALID_LOOKBACK:
		return "invalid distance too far back";
	case ISAL_INVALID_WRAPPER:
		return "incorrect header check";
	case ISAL_UNSUPPORTED_METHOD:
		return "unknown compression method";
	case ISAL_INCORRECT_CHECKSUM:
		return "incorrect data or length check";
	case ISAL_NEED_DICT:
		return "needs a preset dictionary";
	default:
		return "invalid deflate stream";
	}
}

/* One call of isal_inflate, with zlib_step's results. */
static ssize_t
isal_step(zio *z, char *buf, size_t n)
{
	struct inflate_state *s = z->is;
	size_t k, had = z->rawlen - z->rawpos;
	int r;

	s->next_in = z->raw + z->rawpos;
	s->avail_in = (uint32_t)had;
	s->next_out = (uint8_t *)buf;
	s->avail_out = (uint32_t)(n > (1u << 30) ? (1u << 30) : n);
	r = isal_inflate(s);
	z->rawpos = z->rawlen - s->avail_in;
	k = (size_t)((char *)s->next_out - buf);
	if (r < 0 || r == ISAL_NEED_DICT) {
		corrupt(z, isal_why(r));
		return -1;
	}
	if (s->block_state == ISAL_BLOCK_FINISH)
		z->in_member = 0;
	else if (k == 0 && s->avail_in == had && had > 0)
		return -2;	/* it wants more bytes than are buffered */
	return (ssize_t)k;
}
#endif

static ssize_t
inflate_some(zio *z, char *buf, size_t n)
{
	ssize_t k;

	if (z->idone)
		return 0;
	for (;;) {
		if (fill(z) < 0)
			return -1;
		if (!z->in_member) {
			/* Between members: skip nothing but a new gzip header. */
			if (z->rawpos >= z->rawlen) {
				z->idone = 1;
				return 0;
			}
			if (z->raw[z->rawpos] != 0x1f) {
				/* Trailing zero padding is common after gzip streams. */
				while (z->rawpos < z->rawlen && z->raw[z->rawpos] == 0)
					z->rawpos++;
				if (z->rawpos >= z->rawlen)
					continue;
				snprintf(z->err, sizeof z->err,
				    "trailing garbage after gzip data at compressed byte %llu",
				    z->rawoff - (z->rawlen - z->rawpos));
				return -1;
			}
#ifndef NO_ISAL
			if (z->isal) {
				isal_inflate_reset(z->is);
				z->is->crc_flag = ISAL_GZIP;
			} else
#endif
				inflateReset(&z->zs);
			z->in_member = 1;
		}
		if (z->rawpos >= z->rawlen && z->eof) {
			snprintf(z->err, sizeof z->err,
			    "truncated gzip stream: input ends before the end of the compressed data "
			    "(at compressed byte %llu)", z->rawoff);
			return -1;
		}
#ifndef NO_ISAL
		k = z->isal ? isal_step(z, buf, n) : zlib_step(z, buf, n);
#else
		k = zlib_step(z, buf, n);
#endif
		atomic_store_explicit(&z->consumed, z->rawoff - (z->rawlen - z->rawpos),
		    memory_order_relaxed);
		if (k == -2) {
			if (z->eof) {
				snprintf(z->err, sizeof z->err,
				    "truncated gzip stream: input ends before the end of the compressed "
				    "data (at compressed byte %llu)", z->rawoff);
				return -1;
			}
			if (fill_more(z) < 0)
				return -1;
			continue;
		}
		if (k != 0)
			return k;
	}
}

const char *
zio_error(const zio *z)
{
	return z->err[0] ? z->err : "unknown error";
}

int
zio_is_gzip(const zio *z)
{
	return z->gzip;
}

unsigned long long
zio_raw_offset(const zio *z)
{
	if (z->threaded)
		return atomic_load_explicit(&((zio *)z)->consumed, memory_order_relaxed);
	return z->rawoff - (z->rawlen - z->rawpos);
}

unsigned long long
zio_raw_size(const zio *z)
{
	return z->rawsize;
}

void
zio_close(zio *z)
{
	if (!z)
		return;
	if (z->started) {
		int i;
		pthread_mutex_lock(&z->mu);
		z->stop = 1;
		pthread_cond_broadcast(&z->can_put);
		pthread_mutex_unlock(&z->mu);
		pthread_join(z->th, NULL);
		for (i = 0; i < QSLOTS; i++)
			free(z->q[i].data);
		pthread_mutex_destroy(&z->mu);
		pthread_cond_destroy(&z->can_put);
		pthread_cond_destroy(&z->can_get);
	}
#ifndef NO_ISAL
	free(z->is);
	if (z->gzip && !z->isal)
#else
	if (z->gzip)
#endif
		inflateEnd(&z->zs);
	if (z->fd > 0)
		close(z->fd);
	free(z->raw);
	free(z->obuf);
	free(z);
}
