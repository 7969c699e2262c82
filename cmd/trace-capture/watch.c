/*
 * Waiting for the server to finish writing its traces: snapshots of the
 * candidates under a folder, and the completeness check of one file.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

#include "capture.h"
#include "dirwalk.h"
#include "err.h"
#include "sbuf.h"
#include "xalloc.h"

#define CHUNK	(64 * 1024)

/* Names that are never traces (the reference's ignore list, §3.1). */
static const char *const ignored[] = { "server_args.json", "metadata.json",
    "config.json" };

static int
ends_ci(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* A file name the watcher looks at: *.json or *.json.gz, not ignored. */
static int
candidate_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
		if (strcasecmp(name, ignored[i]) == 0)
			return 0;
	return ends_ci(name, ".json") || ends_ci(name, ".json.gz");
}

/* Names that are traces without reading them (§3.3 steps 3 and 4). */
static int
trace_by_name(const char *name)
{
	return ends_ci(name, ".trace.json") || ends_ci(name, ".trace.json.gz") ||
	    strcasestr(name, ".pt.trace.json") != NULL;
}

static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static void
snap_add(struct snap *s, const char *path, const struct stat *st)
{
	xgrow(&s->e, &s->cap, s->n + 1, sizeof *s->e);
	s->e[s->n].path = xstrdup(path);
	s->e[s->n].size = (long long)st->st_size;
	s->e[s->n].mtime_ns = (long long)st->st_mtim.tv_sec * 1000000000LL +
	    st->st_mtim.tv_nsec;
	s->n++;
}

static int
add_file(void *ctx, const char *path, const char *name, const struct stat *st, int depth)
{
	(void)depth;
	if (S_ISREG(st->st_mode) && candidate_name(name))
		snap_add(ctx, path, st);
	return 0;
}

static int
ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snap_ent *)a)->path,
	    ((const struct snap_ent *)b)->path);
}

void
snap_take(const char *path, struct snap *s)
{
	struct stat st;
	size_t i;

	/* A snapshot is retaken on every poll: drop the previous one's paths. */
	for (i = 0; i < s->n; i++)
		free(s->e[i].path);
	s->n = 0;
	if (stat(path, &st) != 0)
		return;
	if (S_ISREG(st.st_mode)) {
		snap_add(s, path, &st);
	} else if (S_ISDIR(st.st_mode)) {
		/*
		 * Symlinked folders are followed (a server may write through
		 * one), each folder once by device and inode: links such as
		 * "latest -> ." made this walk double with every level (issue 21).
		 */
		struct dirwalk_opts o = { DIRWALK_MAX_DEPTH, 1, &got_signal };
		dirwalk(path, &o, add_file, s, NULL);
	}
	if (s->n > 1)
		xqsort(s->e, s->n, sizeof *s->e, ent_cmp);
}

void
snap_free(struct snap *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->e[i].path);
	free(s->e);
	s->e = NULL;
	s->n = s->cap = 0;
}

static const struct snap_ent *
snap_find(const struct snap *s, const char *path)
{
	struct snap_ent key = { (char *)path, 0, 0 };

	if (s->n == 0)
		return NULL;
	return bsearch(&key, s->e, s->n, sizeof *s->e, ent_cmp);
}

static int
same_identity(const struct snap_ent *a, const struct snap_ent *b)
{
	return a && b && a->size == b->size && a->mtime_ns == b->mtime_ns;
}

/* What the content scan found. */
enum { T_INCOMPLETE, T_TRACE, T_OTHER };

struct scan {
	int first, last;	/* first and last non-whitespace byte, -1: none */
	int key;		/* bytes of "traceEvents" (with quotes) matched */
	int has_key;
};

static void
scan_bytes(struct scan *sc, const unsigned char *p, size_t n)
{
	static const char key[] = "\"traceEvents\"";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = p[i];
		if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
			if (sc->first < 0)
				sc->first = c;
			sc->last = c;
		}
		/* The key has no proper border other than its quote. */
		if (!sc->has_key) {
			if (c == (unsigned char)key[sc->key])
				sc->key++;
			else
				sc->key = c == '"';
			if (sc->key == (int)sizeof key - 1)
				sc->has_key = 1;
		}
	}
}

/*
 * Read the whole file (inflating gzip members one after another) and say
 * whether it is a complete trace.  *why gets the reason when incomplete.
 */
static int
trace_state(const char *path, const char **why)
{
	FILE *fp;
	unsigned char *in, *out;
	struct scan sc = { -1, -1, 0, 0 };
	z_stream z;
	size_t n;
	int gz = -1, ret = Z_OK, zinit = 0, bad = 0;

	*why = "cannot be read";
	if ((fp = fopen(path, "rb")) == NULL)
		return T_INCOMPLETE;
	in = xmalloc(CHUNK);
	out = xmalloc(CHUNK);
	memset(&z, 0, sizeof z);
	/* a signal ends the read of even a huge file at once (wait_new_traces dies) */
	while (!bad && !got_signal && (n = fread(in, 1, CHUNK, fp)) > 0) {
		if (gz < 0) {
			gz = n >= 2 && in[0] == 0x1f && in[1] == 0x8b;
			if (gz) {
				if (inflateInit2(&z, 15 + 16) != Z_OK)
					break;
				zinit = 1;
			}
		}
		if (!gz) {
			scan_bytes(&sc, in, n);
			continue;
		}
		z.next_in = in;
		z.avail_in = (uInt)n;
		do {
			if (ret == Z_STREAM_END) {
				if (z.avail_in == 0)
					break;
				/* Another gzip member follows the one that ended. */
				inflateReset(&z);
			}
			z.next_out = out;
			z.avail_out = CHUNK;
			ret = inflate(&z, Z_NO_FLUSH);
			if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) {
				bad = 1;
				break;
			}
			scan_bytes(&sc, out, CHUNK - z.avail_out);
		} while (z.avail_in > 0 || z.avail_out == 0);
	}
	if (ferror(fp))
		bad = 1;
	fclose(fp);
	free(in);
	free(out);
	if (zinit)
		inflateEnd(&z);
	if (gz < 0) {
		*why = "empty";
		return T_INCOMPLETE;
	}
	if (bad) {
		*why = "corrupt or unreadable gzip data";
		return T_INCOMPLETE;
	}
	if (gz && ret != Z_STREAM_END) {
		*why = "gzip stream without its trailer";
		return T_INCOMPLETE;
	}
	if (sc.last != '}' && sc.last != ']') {
		*why = "JSON without its closing bracket";
		return T_INCOMPLETE;
	}
	if (trace_by_name(base_name(path)) || sc.first == '[' ||
	    (sc.first == '{' && sc.has_key))
		return T_TRACE;
	return T_OTHER;
}

/* One new candidate across polls, with its last verdict. */
struct cand {
	struct snap_ent e;
	int state;		/* T_*, or -1 when not yet checked */
	const char *why;
};

void
wait_new_traces(const char *path, const struct snap *before, double timeout,
    double poll, struct snap *found)
{
	struct snap cur = { 0 };
	struct cand *prev = NULL, *next = NULL;
	size_t nprev = 0, nnext = 0, capnext = 0, capprev = 0, i;
	double deadline = now_mono() + timeout;
	int ready, ntrace;
	sbuf msg = SBUF_INIT;

	for (;;) {
		snap_take(path, &cur);
		nnext = 0;
		ready = 1;
		ntrace = 0;
		for (i = 0; i < cur.n; i++) {
			const struct snap_ent *e = &cur.e[i];
			struct cand *c = NULL;
			size_t k;

			if (same_identity(snap_find(before, e->path), e))
				continue;
			for (k = 0; k < nprev; k++)
				if (strcmp(prev[k].e.path, e->path) == 0)
					c = &prev[k];
			xgrow(&next, &capnext, nnext + 1, sizeof *next);
			next[nnext].e = *e;
			next[nnext].e.path = xstrdup(e->path);
			next[nnext].state = -1;
			next[nnext].why = "still growing";
			if (c && same_identity(&c->e, e)) {
				/* Stable for one poll interval: check the content once. */
				if (c->state < 0)
					c->state = trace_state(e->path, &c->why);
				next[nnext].state = c->state;
				next[nnext].why = c->why;
			}
			if (next[nnext].state < 0 || next[nnext].state == T_INCOMPLETE)
				ready = 0;
			else if (next[nnext].state == T_TRACE)
				ntrace++;
			nnext++;
		}
		for (i = 0; i < nprev; i++)
			free(prev[i].e.path);
		{
			struct cand *t = prev;
			size_t tc = capprev;
			prev = next;
			nprev = nnext;
			capprev = capnext;
			next = t;
			capnext = tc;
		}
		if (ready && ntrace > 0)
			break;
		if (got_signal)
			die(EXIT_CAPTURE, "interrupted by a signal while waiting for "
			    "traces in '%s'", path);
		if (now_mono() >= deadline)
			goto timeout;
		sleep_s(poll);
	}
	snap_free(found);
	for (i = 0; i < nprev; i++) {
		if (prev[i].state == T_TRACE) {
			xgrow(&found->e, &found->cap, found->n + 1, sizeof *found->e);
			found->e[found->n++] = prev[i].e;
		} else {
			free(prev[i].e.path);
		}
	}
	free(prev);
	free(next);
	snap_free(&cur);
	/* Sort by file name, as the reference moves them in that order. */
	for (i = 1; i < found->n; i++) {
		struct snap_ent t = found->e[i];
		size_t j = i;
		while (j > 0 && strcmp(base_name(found->e[j - 1].path),
		    base_name(t.path)) > 0) {
			found->e[j] = found->e[j - 1];
			j--;
		}
		found->e[j] = t;
	}
	return;

timeout:
	ntrace = 0;
	for (i = 0; i < nprev; i++)
		if (prev[i].state != T_TRACE && prev[i].state != T_OTHER)
			ntrace++;
	if (ntrace == 0) {
		sb_printf(&msg, "no new trace appeared in '%s' within %g s", path,
		    timeout);
		if (before->n > 0)
			sb_printf(&msg, " (%zu file(s) already there were ignored)",
			    before->n);
	} else {
		sb_printf(&msg, "trace still incomplete in '%s' after %g s:", path,
		    timeout);
		for (i = 0; i < nprev; i++)
			if (prev[i].state != T_TRACE && prev[i].state != T_OTHER)
				sb_printf(&msg, " '%s' (%lld bytes, %s)",
				    base_name(prev[i].e.path), prev[i].e.size,
				    prev[i].why);
	}
	die(EXIT_CAPTURE, "%s", msg.s);
}
