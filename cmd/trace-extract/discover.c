/* Which trace files an operand names (capture-and-cli.md §3, kernel-table.md Appendix A). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dirwalk.h"
#include "err.h"
#include "extract.h"
#include "opt.h"
#include "rules.h"
#include "scan.h"
#include "sidefile.h"
#include "strtab.h"
#include "text.h"
#include "xalloc.h"
#include "zio.h"

void
tlist_free(struct tlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	free(l->ranks);
	l->v = NULL;
	l->ranks = NULL;
	l->n = l->cap = l->nranks = 0;
}

void
tlist_add(struct tlist *l, const char *path, long long mtime, int order)
{
	xgrow(&l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n].path = xstrdup(path);
	l->v[l->n].mtime_ns = mtime;
	l->v[l->n].order = order;
	l->v[l->n].rank = 0;
	l->v[l->n].has_rank = 0;
	l->v[l->n].peeked = 0;
	l->v[l->n].has_dist = 0;
	l->n++;
}

void
dropped_free(struct dropped *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->path[i]);
	free(d->path);
	free(d->why);
	memset(d, 0, sizeof *d);
}

static void
drop(struct dropped *d, const char *path, const char *why)
{
	size_t cap;

	if (!d)
		return;
	cap = d->cap;
	xgrow(&d->path, &cap, d->n + 1, sizeof *d->path);
	if (cap != d->cap)
		d->why = xreallocarray(d->why, cap, sizeof *d->why);
	d->cap = cap;
	d->path[d->n] = xstrdup(path);
	d->why[d->n++] = why;
}

/* ---- distributedInfo at the head of a trace ---- */

struct distpeek {
	int found;
	long long rank, world;
};

static int
peek_member(void *ctx, int which, const json_doc *d)
{
	struct distpeek *p = ctx;
	int i;
	long long v;

	(void)which;
	if (d->ntok == 0 || json_kind(d, 0) != JK_OBJ)
		return 1;
	i = json_get(d, 0, "rank");
	if (json_kind(d, i) == JK_INT && json_coerce_int(d, i, &v) && v >= 0) {
		p->found = 1;
		p->rank = v;
	}
	i = json_get(d, 0, "world_size");
	if (json_kind(d, i) == JK_INT && json_coerce_int(d, i, &v) && v >= 1)
		p->world = v;
	return 1;
}

static int
peek_stop(void *ctx, const json_doc *d, unsigned long long off)
{
	(void)ctx;
	(void)d;
	(void)off;
	return 1;	/* the events have begun: distributedInfo comes before them */
}

int
trace_dist_rank(const char *path, long long *rank, long long *world)
{
	static const char *const keys[] = { "distributedInfo", NULL };
	static const struct scan_members m = { keys, peek_member };
	struct distpeek p = { 0, 0, -1 };
	struct scan_stats st;
	char err[512];
	zio *z = zio_open(path);

	if (!z)
		return 0;
	scan_run_members(z, path, NULL, NULL, peek_stop, &m, &p, &st, err, sizeof err);
	zio_close(z);
	/* a rank past the world size is no rank (read_dist warns of it) */
	if (!p.found || (p.world > 0 && p.rank >= p.world))
		return 0;
	*rank = p.rank;
	*world = p.world;
	return 1;
}

/*
 * A trace's rank: its distributedInfo's (except under --compat reference),
 * else its file name's, by the reference's rule (parse_tp_rank) or the
 * wider one of the all-ranks modes (rank_of_name).  Returns RANK_TRACE,
 * RANK_NAME or 0.
 */
static int
file_rank(struct tfile *f, int reference_rule, long long *rank)
{
	const char *b = strrchr(f->path, '/');

	if (!compat_reference) {
		if (!f->peeked) {
			f->has_dist = trace_dist_rank(f->path, &f->dist_rank, &f->dist_world);
			f->peeked = 1;
		}
		if (f->has_dist) {
			*rank = f->dist_rank;
			return RANK_TRACE;
		}
	}
	b = b ? b + 1 : f->path;
	if (reference_rule ? parse_tp_rank(b, rank) : rank_of_name(b, rank))
		return RANK_NAME;
	return 0;
}

static const char *
base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int
ends(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

/* Glob pattern rank of a name (the order patterns are tried), or -1. */
static int
pattern_rank(const char *name)
{
	if (ends(name, ".trace.json"))
		return 0;
	if (ends(name, ".trace.json.gz"))
		return 1;
	if (ends(name, ".json"))
		return 4;
	if (ends(name, ".json.gz"))
		return 5;
	return -1;
}

/*
 * Candidate files whose read failed (a truncated gzip, broken JSON): a
 * trace still being written, or a damaged one.  Discovery leaves them out
 * like the reference, but says so (a newer damaged trace beside an older
 * good one would otherwise make the older one analyzed without a word).
 */
static struct {
	char **path, **why;
	size_t n, cap;
} damaged;

static void
note_damaged(const char *path, const char *why)
{
	size_t i, cap;

	for (i = 0; i < damaged.n; i++)
		if (!strcmp(damaged.path[i], path))
			return;
	cap = damaged.cap;
	xgrow(&damaged.path, &cap, damaged.n + 1, sizeof *damaged.path);
	if (cap != damaged.cap)
		damaged.why = xreallocarray(damaged.why, cap, sizeof *damaged.why);
	damaged.cap = cap;
	damaged.path[damaged.n] = xstrdup(path);
	damaged.why[damaged.n++] = xstrdup(why);
	/* why names the file and says what may have cut it short (scan.h) */
	warn_msg("left out of the traces to analyze: %s", why);
}

/* The damaged candidates below dir, to dropped. */
static void
drop_damaged(const char *dir, struct dropped *d)
{
	size_t i, dl = strlen(dir);

	for (i = 0; i < damaged.n; i++)
		if (!strncmp(damaged.path[i], dir, dl) && damaged.path[i][dl] == '/')
			drop(d, damaged.path[i], "damaged");
}

int
file_looks_like_trace(const char *path)
{
	char lower[NAME_MAX + 1], err[512];
	const char *b = base_name(path);
	struct stat st;
	struct scan_stats ss;
	zio *z;
	int r;

	snprintf(lower, sizeof lower, "%s", b);
	text_lower(lower, strlen(lower));
	if (!strcmp(lower, "server_args.json") || !strcmp(lower, "metadata.json") ||
	    !strcmp(lower, "config.json"))
		return 0;
	if (stat(path, &st) != 0 || S_ISDIR(st.st_mode))
		return 0;
	if (ends(lower, ".trace.json") || ends(lower, ".trace.json.gz") ||
	    strstr(lower, ".pt.trace.json"))
		return 1;
	if (!ends(lower, ".json") && !ends(lower, ".json.gz"))
		return 0;
	if ((z = zio_open(path)) == NULL)
		return 0;
	r = scan_run(z, path, NULL, NULL, &ss, err, sizeof err, NULL);
	zio_close(z);
	if (r != SCAN_OK) {
		if (!err[0])
			snprintf(err, sizeof err, "'%s': unreadable", path);
		note_damaged(path, err);
		return 0;
	}
	if (ss.shape == 'o')
		return ss.has_events;
	if (ss.shape == 'a')
		return ss.elements > 0 && !ss.early_nonobject;
	return 0;
}

struct cand {
	char *path;
	int rank;
	long long mtime;
};

struct cands {
	struct cand *v;
	size_t n, cap;
};

/* A file the walk found: a candidate when its name fits a pattern. */
static int
add_cand(void *ctx, const char *path, const char *name, const struct stat *st, int depth)
{
	struct cands *c = ctx;
	char *real;
	int rank = pattern_rank(name);

	(void)depth;
	if (rank < 0 || !S_ISREG(st->st_mode) || (real = realpath(path, NULL)) == NULL)
		return 0;
	xgrow(&c->v, &c->cap, c->n + 1, sizeof *c->v);
	c->v[c->n].path = real;
	c->v[c->n].rank = rank;
	c->v[c->n].mtime = (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
	c->n++;
	return 0;
}

/*
 * The candidate files in dir, or below it too.  Symlinked directories are
 * not followed (the reference's glob does not); the walk is iterative and
 * stops DIRWALK_MAX_DEPTH levels down, saying so (issue 21).
 */
static void
walk(const char *dir, int recursive, struct cands *c)
{
	static int warned;	/* discovery walks a tree more than once */
	struct dirwalk_opts o = { recursive ? DIRWALK_MAX_DEPTH : 0, 0, NULL };
	struct dirwalk_stats st;

	if (dirwalk(dir, &o, add_cand, c, &st) != 0)
		return;
	if (recursive && st.too_deep && !warned++)
		warn_msg("%lu director%s more than %d levels below '%s' not searched for traces",
		    st.too_deep, st.too_deep == 1 ? "y" : "ies", DIRWALK_MAX_DEPTH, dir);
}

static int
cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank - y->rank;
	return strcmp(x->path, y->path);
}

static int
mtime_cmp(const void *a, const void *b)
{
	const struct tfile *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return x->order - y->order;	/* stable */
}

void
discover_files(const char *dir, int recursive, struct tlist *out)
{
	struct cands c = { NULL, 0, 0 };
	strtab *known = strtab_new();
	size_t i, had;
	int order = 0;

	walk(dir, recursive, &c);
	xqsort(c.v, c.n, sizeof *c.v, cand_cmp);
	/* a file reached twice (two names, or two patterns) counts once */
	for (i = 0; i < out->n; i++)
		strtab_intern(known, out->v[i].path, strlen(out->v[i].path));
	for (i = 0; i < c.n; i++) {
		had = strtab_count(known);
		if (strtab_intern(known, c.v[i].path, strlen(c.v[i].path)) == had &&
		    file_looks_like_trace(c.v[i].path))
			tlist_add(out, c.v[i].path, c.v[i].mtime, order++);
		free(c.v[i].path);
	}
	free(c.v);
	strtab_free(known);
	xqsort(out->v, out->n, sizeof *out->v, mtime_cmp);
}

static char *
parent_dir(const char *p)
{
	char *s = xstrdup(p), *q = strrchr(s, '/');

	if (q == s)
		s[1] = '\0';
	else if (q)
		*q = '\0';
	return s;
}

/* Is path one of trace-annotate's copies (STEM.annotated.json, .json.gz)? */
static int
is_annotated(const char *path)
{
	return strstr(base_name(path), ".annotated.json") != NULL;
}

/* newest_trace_dir (§3.5); NULL when no trace exists below path. */
static char *
newest_trace_dir(const char *path)
{
	struct tlist direct = { 0 }, rec = { 0 };
	char *best = NULL;
	long long best_m = 0;
	size_t i;
	int originals;

	discover_files(path, 0, &direct);
	if (direct.n) {
		tlist_free(&direct);
		return xstrdup(path);
	}
	discover_files(path, 1, &rec);
	/* trace-annotate's copies are no capture: the newest original's folder */
	for (i = 0; !compat_reference && i < rec.n && is_annotated(rec.v[i].path); i++)
		;
	originals = !compat_reference && i < rec.n;
	for (i = 0; i < rec.n; i++) {
		if (originals && is_annotated(rec.v[i].path))
			continue;
		if (!best || rec.v[i].mtime_ns > best_m) {
			free(best);
			best = parent_dir(rec.v[i].path);
			best_m = rec.v[i].mtime_ns;
		}
	}
	tlist_free(&rec);
	return best;
}

/* (rank, stage, file name) order; ranks are equal in the reference's mode. */
static int
target_cmp(const void *a, const void *b)
{
	const struct tfile *x = a, *y = b;
	int sx = stage_index(parse_stage(x->path)), sy = stage_index(parse_stage(y->path));
	int c;

	/* a rank from either source counts alike: a rank's order is its number */
	if ((x->has_rank != 0) != (y->has_rank != 0))
		return (x->has_rank != 0) - (y->has_rank != 0);
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (sx != sy)
		return sx - sy;
	c = strcmp(base_name(x->path), base_name(y->path));
	return c ? c : x->order - y->order;
}

/* "rank" then "-" or "_" then digits, between separators (see extract.h). */
static int
dashed_rank(const char *l, size_t n, long long *rank)
{
	size_t i, j, k;
	long long v;

	for (i = 0; i + 6 <= n; i++) {
		if (memcmp(l + i, "rank", 4) != 0 || (l[i + 4] != '-' && l[i + 4] != '_'))
			continue;
		if (i > 0 && l[i - 1] != '_' && l[i - 1] != '-' && l[i - 1] != '.')
			continue;
		j = i + 5;
		if (l[j] < '0' || l[j] > '9')
			continue;
		for (v = 0, k = j; j < n && l[j] >= '0' && l[j] <= '9'; j++)
			v = v < 100000000000000000LL ? v * 10 + (l[j] - '0') : v;
		if (j < n && l[j] != '_' && l[j] != '.' && l[j] != '-')
			continue;
		if (j - k > 18)
			continue;	/* no rank has 19 digits: cut, it would name another */
		*rank = v;
		return 1;
	}
	return 0;
}

int
rank_of_name(const char *name, long long *rank)
{
	char *l;
	int ok;

	if (parse_tp_rank(name, rank))
		return 1;
	l = xstrdup(name);
	text_lower(l, strlen(l));
	ok = dashed_rank(l, strlen(l), rank);
	free(l);
	return ok;
}

static void
list_ranks(const struct tlist *l, sbuf *out)
{
	size_t i, j;

	for (i = 0; i < l->n; i++) {
		if (!l->v[i].has_rank)
			continue;
		for (j = 0; j < i; j++)
			if (l->v[j].has_rank && l->v[j].rank == l->v[i].rank)
				break;
		if (j == i)
			sb_printf(out, "%s%lld", out->len ? ", " : "", l->v[i].rank);
	}
}

/* Record in out->ranks/nranks the distinct ranks the traces of l name. */
static void
found_ranks(struct tlist *l, struct tlist *out)
{
	long long *r = xcalloc(l->n ? l->n : 1, sizeof *r);
	size_t n = 0, i, j;
	sbuf s = SBUF_INIT;

	for (i = 0; i < l->n; i++) {
		long long v;
		if (!file_rank(&l->v[i], 0, &v))
			continue;
		for (j = 0; j < n && r[j] != v; j++)
			;
		if (j == n)
			r[n++] = v;
	}
	for (i = 1; i < n; i++)		/* a handful: insertion sort */
		for (j = i; j > 0 && r[j - 1] > r[j]; j--) {
			long long t = r[j];
			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	for (i = 0; i < n; i++)
		sb_printf(&s, "%s%lld", i ? ", " : "", r[i]);
	free(out->ranks);
	out->ranks = n ? xstrdup(s.s) : NULL;
	out->nranks = n;
	sb_free(&s);
	free(r);
}

/*
 * Keep the traces of the selected ranks (capture-and-cli.md §3.6 step 4.1
 * for RANKS_LOWEST).  Returns 0, or 3 after a message when RANKS_ONE finds
 * no trace of its rank.
 */
static int
select_ranks(struct tlist *all, const struct ranksel *sel, const char *where,
    struct dropped *dropped)
{
	size_t i, j;
	int have_rank = 0, unranked = 0;
	long long best = 0;

	for (i = 0; i < all->n; i++) {
		struct tfile *f = &all->v[i];
		f->has_rank = file_rank(f, sel->mode == RANKS_LOWEST, &f->rank);
		if (!f->has_rank) {
			f->rank = 0;
			unranked++;
			continue;
		}
		if (!have_rank || f->rank < best)
			best = f->rank;
		have_rank = 1;
	}
	if (!have_rank && sel->mode == RANKS_ONE) {
		err_msg("no trace under '%s' names a rank, so none is rank %lld", where, sel->rank);
		return EXIT_EMPTY;
	}
	if (!have_rank) {
		if (sel->mode == RANKS_ALL)
			warn_msg("no trace under '%s' names a rank: analyzing it as one rank",
			    where);
		return 0;
	}
	if (sel->mode == RANKS_ALL && unranked)
		warn_msg("%d trace%s under '%s' name%s no rank and %s left out", unranked,
		    unranked == 1 ? "" : "s", where, unranked == 1 ? "s" : "",
		    unranked == 1 ? "is" : "are");
	if (sel->mode == RANKS_ONE) {
		for (i = 0; i < all->n; i++)
			if (all->v[i].has_rank && all->v[i].rank == sel->rank)
				break;
		if (i == all->n) {
			sbuf r = SBUF_INIT;
			list_ranks(all, &r);
			err_msg("no trace of rank %lld under '%s' (ranks found: %s)", sel->rank, where,
			    sb_str(&r));
			sb_free(&r);
			return EXIT_EMPTY;
		}
		best = sel->rank;
	}
	for (i = j = 0; i < all->n; i++) {
		int keep = all->v[i].has_rank &&
		    (sel->mode == RANKS_ALL || all->v[i].rank == best);
		if (keep) {
			all->v[j++] = all->v[i];
			continue;
		}
		/* other ranks are left out by design (the rank note says how many) */
		drop(dropped, all->v[i].path, all->v[i].has_rank ? "other rank" : "no rank");
		free(all->v[i].path);
	}
	all->n = j;
	return 0;
}

/*
 * The traces below dir that discovery did not choose (issue 25: a report
 * must not pass for the whole directory's): every trace under it, in any
 * subdirectory, that is neither kept nor already dropped with a reason.
 */
static void
drop_others(const char *dir, const struct tlist *keep, struct dropped *d)
{
	struct tlist rec = { 0 };
	strtab *known;
	size_t i, had;

	if (!d)
		return;
	known = strtab_new();	/* the paths kept or dropped already: linear in the files */
	for (i = 0; i < keep->n; i++)
		strtab_intern(known, keep->v[i].path, strlen(keep->v[i].path));
	for (i = 0; i < d->n; i++)
		strtab_intern(known, d->path[i], strlen(d->path[i]));
	discover_files(dir, 1, &rec);
	for (i = 0; i < rec.n; i++) {
		had = strtab_count(known);
		if (strtab_intern(known, rec.v[i].path, strlen(rec.v[i].path)) == had)
			drop(d, rec.v[i].path, "another directory");
	}
	strtab_free(known);
	tlist_free(&rec);
}

int
discover_targets(const char *abspath, const struct ranksel *sel, struct tlist *out,
    char **trace_dir, struct dropped *dropped)
{
	struct stat st;
	struct tlist all = { 0 }, rec = { 0 }, keep = { 0 };
	size_t i, j;
	int any_stage = 0, nonmerged = 0, rc;

	*trace_dir = NULL;
	if (stat(abspath, &st) == 0 && !S_ISDIR(st.st_mode)) {
		tlist_add(out, abspath, (long long)st.st_mtim.tv_sec * 1000000000LL +
		    st.st_mtim.tv_nsec, 0);
		if (sel->mode == RANKS_ONE && (rc = select_ranks(out, sel, abspath, NULL)) != 0)
			tlist_free(out);
		else
			rc = 0;
		return rc;
	}
	if (stat(abspath, &st) != 0) {
		err_msg("cannot open '%s': %s", abspath, strerror(errno));
		return EXIT_DATA;
	}
	discover_files(abspath, 0, &all);
	if (all.n == 0) {
		discover_files(abspath, 1, &rec);
		for (i = 0; i < rec.n; i++)
			if (strcmp(parse_stage(rec.v[i].path), "all") != 0)
				any_stage = 1;
	}
	if (all.n == 0 && rec.n && any_stage) {
		all = rec;
		rec = (struct tlist){ 0 };
		*trace_dir = xstrdup(abspath);
	} else {
		tlist_free(&rec);
		tlist_free(&all);
		*trace_dir = newest_trace_dir(abspath);
		if (!*trace_dir && damaged.n) {
			err_msg("no readable trace file under '%s': %zu left out as damaged (above)",
			    abspath, damaged.n);
			return EXIT_DATA;
		}
		if (!*trace_dir) {
			err_msg("no trace files found under '%s' (looked for *.json and *.json.gz "
			    "Chrome-trace files, including subdirectories)", abspath);
			return EXIT_EMPTY;
		}
		discover_files(*trace_dir, 0, &all);
	}
	if (all.n == 0) {
		err_msg("no trace files found under '%s'", *trace_dir);
		return EXIT_EMPTY;
	}
	/*
	 * trace-annotate's copies (STEM.annotated.json, triage --annotate
	 * DIR/) are this tool's output, not a new capture: written into the
	 * profile directory, the copy would be its newest trace next time.
	 */
	for (i = 0, nonmerged = 0; i < all.n; i++)	/* (counts the originals here) */
		nonmerged += !is_annotated(all.v[i].path);
	if (!compat_reference && nonmerged && nonmerged < (int)all.n) {
		for (i = j = 0; i < all.n; i++) {
			if (is_annotated(all.v[i].path)) {
				drop(dropped, all.v[i].path, "annotated");
				free(all.v[i].path);
			} else
				all.v[j++] = all.v[i];
		}
		all.n = j;
	}
	/* Drop merged-* traces unless that would drop everything. */
	nonmerged = 0;
	for (i = 0; i < all.n; i++)
		if (strncmp(base_name(all.v[i].path), "merged-", 7) != 0)
			nonmerged++;
	if (nonmerged && nonmerged < (int)all.n) {
		for (i = j = 0; i < all.n; i++) {
			if (strncmp(base_name(all.v[i].path), "merged-", 7) == 0) {
				drop(dropped, all.v[i].path, "merged");
				free(all.v[i].path);
			} else
				all.v[j++] = all.v[i];
		}
		all.n = j;
	}
	found_ranks(&all, &keep);
	if ((rc = select_ranks(&all, sel, *trace_dir, dropped)) != 0) {
		tlist_free(&keep);
		tlist_free(&all);
		return rc;
	}
	/*
	 * Newest trace per (rank, path stage); the list is oldest first.  In the
	 * reference's mode every survivor has the same rank, or none has one,
	 * so this is its newest trace per stage.
	 */
	for (i = 0; i < all.n; i++) {
		const char *s = parse_stage(all.v[i].path);
		int newer = 0;
		for (j = i + 1; j < all.n; j++)
			if (all.v[j].has_rank == all.v[i].has_rank &&
			    all.v[j].rank == all.v[i].rank && !strcmp(parse_stage(all.v[j].path), s))
				newer = 1;
		if (!newer) {
			char *own;
			tlist_add(&keep, all.v[i].path, all.v[i].mtime_ns, all.v[i].order);
			own = keep.v[keep.n - 1].path;
			keep.v[keep.n - 1] = all.v[i];	/* its rank and distributedInfo too */
			keep.v[keep.n - 1].path = own;
		} else
			drop(dropped, all.v[i].path, "older");
	}
	tlist_free(&all);
	/* every damaged candidate below the operand: a newer one elsewhere is news too */
	drop_damaged(abspath, dropped);
	xqsort(keep.v, keep.n, sizeof *keep.v, target_cmp);
	/* the other ranks were left out on purpose: only other directories are news */
	if (sel->mode != RANKS_ONE)
		drop_others(abspath, &keep, dropped);
	*out = keep;
	return 0;
}

/* Parse a server_args.json into minified JSON text; -1 on malformed. */
static int
read_server_args(const char *path, sbuf *out)
{
	sbuf text = SBUF_INIT, why = SBUF_INIT;
	json_doc d = { 0 };
	int r = 1, rc;

	/* a regular file, and no larger than a side file may be (sidefile.h) */
	if (side_read(path, "server args file", &text, &why) != 0) {
		err_msg("%s", why.s);
		sb_free(&text);
		sb_free(&why);
		return -1;
	}
	sb_free(&why);
	rc = json_parse(&d, text.s ? text.s : "", text.len);
	if (rc == JSON_OK && d.depth >= JSON_MAX_DEPTH) {
		/* the input record that carries them adds a level */
		err_msg("'%s': the server args are %s; fix or remove the file", path,
		    json_limit_text(JSON_EDEPTH));
		r = -1;
	} else if (rc == JSON_EDEPTH || rc == JSON_ESIZE) {
		err_msg("'%s': the server args are %s (at byte %zu); fix or remove the file", path,
		    json_limit_text(rc), d.err_off);
		r = -1;
	} else if (rc < 0) {
		err_msg("'%s': invalid JSON in server args file at byte %zu; fix or remove it", path,
		    d.err_off);
		r = -1;
	} else {
		sb_reset(out);
		json_write_compact(&d, 0, out);
	}
	json_doc_free(&d);
	sb_free(&text);
	return r;
}

int
load_server_args_dir(const char *dir, sbuf *out)
{
	sbuf path = SBUF_INIT;
	char *par;
	struct stat st;
	int r = 0;

	/* built in an sbuf: a long directory name is never cut to another path */
	sb_printf(&path, "%s/server_args.json", dir);
	if (stat(path.s, &st) == 0) {
		r = read_server_args(path.s, out);
	} else if (compat_reference) {
		/* the reference looks one folder up too (§3.7) */
		par = parent_dir(dir);
		sb_reset(&path);
		sb_printf(&path, "%s/server_args.json", par);
		free(par);
		if (stat(path.s, &st) == 0)
			r = read_server_args(path.s, out);
	}
	sb_free(&path);
	return r;
}

int
load_server_args_for(const char *path, sbuf *out)
{
	struct stat st;
	char *par;
	int r;

	if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		par = parent_dir(path);
		r = load_server_args_dir(par, out);
		free(par);
		return r;
	}
	return load_server_args_dir(path, out);
}
