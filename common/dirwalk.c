/* An iterative directory walk with a depth limit and a visited set (dirwalk.h). */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dirwalk.h"
#include "sbuf.h"
#include "strtab.h"
#include "xalloc.h"

/* The directories read so far, by (device, inode): open addressing. */
struct seen {
	struct devino {
		dev_t dev;
		ino_t ino;
		int used;
	} *slot;
	size_t n, cap;
};

static size_t
seen_hash(dev_t dev, ino_t ino, size_t cap)
{
	return (size_t)hash_u64((uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev) & (cap - 1);
}

/* Add (dev, ino); returns 0 when it was there already. */
static int
seen_add(struct seen *s, dev_t dev, ino_t ino)
{
	size_t j, i;

	if (2 * (s->n + 1) > s->cap) {
		struct seen t = { NULL, 0, s->cap ? xmul(s->cap, 2) : 64 };
		t.slot = xcalloc(t.cap, sizeof *t.slot);
		for (i = 0; i < s->cap; i++)
			if (s->slot[i].used)
				seen_add(&t, s->slot[i].dev, s->slot[i].ino);
		free(s->slot);
		*s = t;
	}
	for (j = seen_hash(dev, ino, s->cap); s->slot[j].used; j = (j + 1) & (s->cap - 1))
		if (s->slot[j].dev == dev && s->slot[j].ino == ino)
			return 0;
	s->slot[j] = (struct devino){ dev, ino, 1 };
	s->n++;
	return 1;
}

/* A directory waiting to be read. */
struct pending {
	char *path;
	int depth;
};

int
dirwalk(const char *root, const struct dirwalk_opts *o, dirwalk_fn fn, void *ctx,
    struct dirwalk_stats *stp)
{
	struct dirwalk_stats dummy;
	struct dirwalk_stats *st = stp ? stp : &dummy;
	struct seen seen = { NULL, 0, 0 };
	struct pending *todo = NULL;
	size_t ntodo = 0, cap = 0;
	struct stat sb, lsb;
	sbuf path = SBUF_INIT;
	int stop = 0, first = 1;

	memset(st, 0, sizeof *st);
	if (stat(root, &sb) != 0)
		return -1;
	if (!S_ISDIR(sb.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	seen_add(&seen, sb.st_dev, sb.st_ino);
	xgrow(&todo, &cap, 1, sizeof *todo);
	todo[ntodo++] = (struct pending){ xstrdup(root), 0 };
	while (ntodo > 0 && !stop) {
		struct pending cur = todo[--ntodo];
		DIR *d = opendir(cur.path);
		struct dirent *de;

		if (!d) {
			if (first) {
				int e = errno;
				free(cur.path);
				free(todo);
				free(seen.slot);
				errno = e;
				return -1;
			}
			st->unreadable++;
			free(cur.path);
			continue;
		}
		first = 0;
		while (!stop && (de = readdir(d)) != NULL) {
			int isdir;

			if (o->stop && *o->stop) {
				st->stopped = stop = 1;
				break;
			}
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			sb_reset(&path);
			sb_printf(&path, "%s/%s", cur.path, de->d_name);
			if (lstat(path.s, &lsb) != 0)
				continue;
			isdir = S_ISDIR(lsb.st_mode);
			if (S_ISLNK(lsb.st_mode)) {
				if (stat(path.s, &sb) != 0)
					continue;	/* a dangling link */
				if (S_ISDIR(sb.st_mode) && !o->follow_links)
					continue;
				isdir = S_ISDIR(sb.st_mode);
			} else {
				sb = lsb;
			}
			if (!isdir) {
				if (fn(ctx, path.s, de->d_name, &sb, cur.depth))
					stop = 1;
				continue;
			}
			if (cur.depth + 1 > o->max_depth) {
				st->too_deep++;
				continue;
			}
			if (!seen_add(&seen, sb.st_dev, sb.st_ino)) {
				st->repeated++;
				continue;
			}
			xgrow(&todo, &cap, ntodo + 1, sizeof *todo);
			todo[ntodo++] = (struct pending){ xstrndup(path.s, path.len), cur.depth + 1 };
		}
		closedir(d);
		free(cur.path);
	}
	while (ntodo > 0)
		free(todo[--ntodo].path);
	free(todo);
	free(seen.slot);
	sb_free(&path);
	return 0;
}
