/* Append-then-read storage: memory first, an unlinked temporary file beyond a limit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "num.h"
#include "spool.h"
#include "xalloc.h"

#define SPOOL_MEM_DEFAULT (4u << 20)

struct spool {
	char *mem;		/* bytes not in the file yet: offsets [infile, infile + nmem) */
	size_t nmem, cap, limit;
	int fd;			/* -1 until the memory limit is first passed */
	unsigned long long infile;
	const char *dir;
};

size_t
spool_limit(void)
{
	const char *v = getenv("TRIAGE_SPOOL_MEM"), *errstr;
	long long lim;

	if (v && *v && parse_num(v, 1, 1LL << 40, &lim, &errstr))
		return (size_t)lim;
	return SPOOL_MEM_DEFAULT;
}

struct spool *
spool_new(void)
{
	return spool_new_limit(0);
}

struct spool *
spool_new_limit(size_t max)
{
	struct spool *sp = xcalloc(1, sizeof *sp);

	sp->fd = -1;
	sp->limit = spool_limit();
	if (max && max < sp->limit)
		sp->limit = max;
	sp->dir = getenv("TMPDIR");
	if (!sp->dir || !*sp->dir)
		sp->dir = "/tmp";
	return sp;
}

void
spool_free(struct spool *sp)
{
	if (!sp)
		return;
	if (sp->fd >= 0)
		close(sp->fd);
	free(sp->mem);
	free(sp);
}

/*
 * A spool write failed and the run is ending: exit flushes every stream,
 * the spool's too, and that flush must not fail (and die) once more.
 */
static int broken;

static void
write_all(struct spool *sp, const char *p, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(sp->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0 && (broken = 1))
			die(EXIT_DATA, "cannot write a temporary file in '%s': %s", sp->dir,
			    w < 0 ? strerror(errno) : "no space written");
		p += w;
		n -= (size_t)w;
		sp->infile += (unsigned long long)w;
	}
}

/* Move the memory's bytes to the file, making the file first. */
static void
to_file(struct spool *sp)
{
	if (sp->fd < 0) {
		size_t dl = strlen(sp->dir), pl = strlen(progname);
		char *path = xmalloc(dl + pl + 16);
		/* named after the tool: a file seen in a full TMPDIR says whose it is */
		memcpy(path, sp->dir, dl);
		path[dl] = '/';
		memcpy(path + dl + 1, progname, pl);
		strcpy(path + dl + 1 + pl, ".XXXXXX");
		sp->fd = mkstemp(path);
		if (sp->fd < 0 && (broken = 1))
			die(EXIT_DATA, "cannot make a temporary file in '%s': %s", sp->dir,
			    strerror(errno));
		unlink(path);
		free(path);
	}
	write_all(sp, sp->mem, sp->nmem);
	sp->nmem = 0;
}

unsigned long long
spool_append(struct spool *sp, const void *p, size_t n)
{
	unsigned long long off = sp->infile + sp->nmem;

	if (sp->nmem + n > sp->limit) {
		to_file(sp);
		if (n > sp->limit) {
			write_all(sp, p, n);
			return off;
		}
	}
	if (sp->nmem + n > sp->cap) {
		/* grow in steps, up to the limit, so small traces stay small */
		size_t c = sp->cap ? sp->cap : 65536;
		while (c < sp->nmem + n)
			c *= 2;
		if (c > sp->limit)
			c = sp->limit;
		sp->mem = xrealloc(sp->mem, c);
		sp->cap = c;
	}
	memcpy(sp->mem + sp->nmem, p, n);
	sp->nmem += n;
	return off;
}

unsigned long long
spool_size(const struct spool *sp)
{
	return sp->infile + sp->nmem;
}

void
spool_read(struct spool *sp, unsigned long long off, void *buf, size_t n)
{
	char *b = buf;
	ssize_t r;

	while (n > 0 && off < sp->infile) {
		size_t k = sp->infile - off < n ? (size_t)(sp->infile - off) : n;
		r = pread(sp->fd, b, k, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die(EXIT_DATA, "cannot read back a temporary file in '%s': %s", sp->dir,
			    r < 0 ? strerror(errno) : "unexpected end");
		b += r;
		off += (unsigned long long)r;
		n -= (size_t)r;
	}
	if (n > 0)
		memcpy(b, sp->mem + (off - sp->infile), n);
}

static ssize_t
stream_write(void *cookie, const char *p, size_t n)
{
	if (broken)
		return -1;	/* exit's flush after a failed write: nothing more is kept */
	spool_append(cookie, p, n);
	return (ssize_t)n;
}

FILE *
spool_stream(struct spool *sp)
{
	cookie_io_functions_t io = { NULL, stream_write, NULL, NULL };
	FILE *fp = fopencookie(sp, "w", io);

	if (!fp)
		die(EXIT_DATA, "cannot open a spool stream: %s", strerror(errno));
	/* large writes: the record writer's lines go out a buffer at a time */
	setvbuf(fp, NULL, _IOFBF, 1 << 16);
	return fp;
}
