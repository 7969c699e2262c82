/* Which trace files an operand names (capture-and-cli.md §3, kernel-table.md Appendix A). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "extract.h"
#include "rules.h"
#include "scan.h"
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
	l->v = NULL;
	l->n = l->cap = 0;
}

static void
tlist_add(struct tlist *l, const char *path, long long mtime, int order)
{
	xgrow(&l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n].path = xstrdup(path);
	l->v[l->n].mtime_ns = mtime;
	l->v[l->n].order = order;
	l->n++;
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
	if (r != SCAN_OK)
		return 0;
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

static void
walk(const char *dir, int recursive, struct cand **v, size_t *n, size_t *cap)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st, lst;
	char path[PATH_MAX], real[PATH_MAX];
	int rank;

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path)
			continue;
		if (lstat(path, &lst) != 0)
			continue;
		if (S_ISDIR(lst.st_mode)) {
			/* Symlinked directories are not followed: they could loop. */
			if (recursive)
				walk(path, recursive, v, n, cap);
			continue;
		}
		rank = pattern_rank(de->d_name);
		if (rank < 0 || stat(path, &st) != 0 || S_ISDIR(st.st_mode))
			continue;
		if (!realpath(path, real))
			continue;
		xgrow(v, cap, *n + 1, sizeof **v);
		(*v)[*n].path = xstrdup(real);
		(*v)[*n].rank = rank;
		(*v)[*n].mtime = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
		(*n)++;
	}
	closedir(d);
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
	struct cand *v = NULL;
	size_t n = 0, cap = 0, i, j;
	int order = 0;

	walk(dir, recursive, &v, &n, &cap);
	xqsort(v, n, sizeof *v, cand_cmp);
	for (i = 0; i < n; i++) {
		int dup = 0;
		for (j = 0; j < out->n; j++)
			if (!strcmp(out->v[j].path, v[i].path)) {
				dup = 1;
				break;
			}
		if (!dup && file_looks_like_trace(v[i].path))
			tlist_add(out, v[i].path, v[i].mtime, order++);
		free(v[i].path);
	}
	free(v);
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

/* newest_trace_dir (§3.5); NULL when no trace exists below path. */
static char *
newest_trace_dir(const char *path)
{
	struct tlist direct = { 0 }, rec = { 0 };
	char *best = NULL;
	long long best_m = 0;
	size_t i;

	discover_files(path, 0, &direct);
	if (direct.n) {
		tlist_free(&direct);
		return xstrdup(path);
	}
	discover_files(path, 1, &rec);
	for (i = 0; i < rec.n; i++) {
		if (!best || rec.v[i].mtime_ns > best_m) {
			free(best);
			best = parent_dir(rec.v[i].path);
			best_m = rec.v[i].mtime_ns;
		}
	}
	tlist_free(&rec);
	return best;
}

static int
stage_name_cmp(const void *a, const void *b)
{
	const struct tfile *x = a, *y = b;
	int sx = stage_index(parse_stage(x->path)), sy = stage_index(parse_stage(y->path));
	int c;

	if (sx != sy)
		return sx - sy;
	c = strcmp(base_name(x->path), base_name(y->path));
	return c ? c : x->order - y->order;
}

int
discover_targets(const char *abspath, struct tlist *out, char **trace_dir)
{
	struct stat st;
	struct tlist all = { 0 }, rec = { 0 }, keep = { 0 };
	size_t i, j;
	int any_stage = 0, have_rank = 0, nonmerged = 0;
	long long rank, best_rank = 0;

	*trace_dir = NULL;
	if (stat(abspath, &st) == 0 && !S_ISDIR(st.st_mode)) {
		tlist_add(out, abspath, (long long)st.st_mtim.tv_sec * 1000000000LL +
		    st.st_mtim.tv_nsec, 0);
		return 0;
	}
	if (stat(abspath, &st) != 0) {
		warnx("cannot open '%s': %s", abspath, strerror(errno));
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
		if (!*trace_dir) {
			warnx("no trace files found under '%s' (looked for *.json and *.json.gz "
			    "Chrome-trace files, including subdirectories)", abspath);
			return EXIT_EMPTY;
		}
		discover_files(*trace_dir, 0, &all);
	}
	if (all.n == 0) {
		warnx("no trace files found under '%s'", *trace_dir);
		return EXIT_EMPTY;
	}
	/* Drop merged-* traces unless that would drop everything. */
	for (i = 0; i < all.n; i++)
		if (strncmp(base_name(all.v[i].path), "merged-", 7) != 0)
			nonmerged++;
	if (nonmerged && nonmerged < (int)all.n) {
		for (i = j = 0; i < all.n; i++) {
			if (strncmp(base_name(all.v[i].path), "merged-", 7) == 0)
				free(all.v[i].path);
			else
				all.v[j++] = all.v[i];
		}
		all.n = j;
	}
	/* One TP rank: 0 when present, else the smallest. */
	for (i = 0; i < all.n; i++)
		if (parse_tp_rank(base_name(all.v[i].path), &rank)) {
			if (!have_rank || rank < best_rank)
				best_rank = rank;
			have_rank = 1;
		}
	if (have_rank) {
		for (i = j = 0; i < all.n; i++) {
			if (parse_tp_rank(base_name(all.v[i].path), &rank) && rank == best_rank)
				all.v[j++] = all.v[i];
			else
				free(all.v[i].path);
		}
		all.n = j;
	}
	/* Newest trace per path stage (the list is oldest first). */
	for (i = 0; i < all.n; i++) {
		const char *s = parse_stage(all.v[i].path);
		int newer = 0;
		for (j = i + 1; j < all.n; j++)
			if (!strcmp(parse_stage(all.v[j].path), s))
				newer = 1;
		if (!newer)
			tlist_add(&keep, all.v[i].path, all.v[i].mtime_ns, all.v[i].order);
	}
	tlist_free(&all);
	xqsort(keep.v, keep.n, sizeof *keep.v, stage_name_cmp);
	*out = keep;
	return 0;
}

/* Parse a server_args.json into minified JSON text; -1 on malformed. */
static int
read_server_args(const char *path, sbuf *out)
{
	FILE *fp = fopen(path, "r");
	sbuf text = SBUF_INIT;
	char buf[8192];
	size_t n;
	json_doc d = { 0 };
	int r = 1;

	if (!fp) {
		warnx("cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
		sb_add(&text, buf, n);
	fclose(fp);
	if (json_parse(&d, text.s ? text.s : "", text.len) < 0 ||
	    json_skip(&d, 0) != d.ntok) {
		warnx("'%s': invalid JSON in server args file; fix or remove it", path);
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
	char path[PATH_MAX];
	char *par;
	struct stat st;
	int r;

	snprintf(path, sizeof path, "%s/server_args.json", dir);
	if (stat(path, &st) == 0)
		return read_server_args(path, out);
	par = parent_dir(dir);
	snprintf(path, sizeof path, "%s/server_args.json", par);
	free(par);
	if (stat(path, &st) == 0)
		return read_server_args(path, out);
	r = 0;
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
