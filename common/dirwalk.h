/*
 * Walking a directory tree without recursion (issue 21): the trace
 * discovery of trace-extract and the capture watcher of trace-capture.
 *
 * The walk keeps a list of directories still to read and opens one at a
 * time, so neither the C stack nor the open descriptors grow with the
 * depth.  Directories deeper than a limit are not opened, and each
 * directory is read at most once, known by its device and inode: a
 * symlink back up the tree ("latest -> .") costs one visit, not a walk
 * that doubles with every level.  Paths are built on the heap, never in
 * PATH_MAX buffers.
 */
#ifndef DIRWALK_H
#define DIRWALK_H

#include <signal.h>
#include <sys/stat.h>

/* Nesting below the root that every walk accepts (the root is depth 0). */
#define DIRWALK_MAX_DEPTH 64

struct dirwalk_opts {
	int max_depth;		/* directories deeper than this are not opened */
	int follow_links;	/* descend into symlinked directories too (each once) */
	/* when not NULL, checked before every entry: non-zero stops the walk */
	volatile sig_atomic_t *stop;
};

/* What a walk left out. */
struct dirwalk_stats {
	unsigned long too_deep;		/* directories past max_depth, not opened */
	unsigned long unreadable;	/* directories that could not be opened */
	unsigned long repeated;		/* directories reached again (links), skipped */
	int stopped;			/* *stop was set */
};

/*
 * Called for every entry below the root that is not a directory the walk
 * descends into: `path` is "<dir>/<name>" (heap, valid during the call),
 * `name` its last component, `st` the stat(2) of the entry (symlinks
 * followed), `depth` the depth of the directory holding it.  Entries that
 * cannot be stat()ed, and symlinks to directories when links are not
 * followed, are not reported.  Return non-zero to stop the walk.
 */
typedef int (*dirwalk_fn)(void *ctx, const char *path, const char *name,
    const struct stat *st, int depth);

/*
 * Walk the tree at `root` (a directory).  Returns 0 after the walk (st
 * says what it left out; st may be NULL), or -1 with errno set when root
 * itself cannot be opened.  The order of entries is the directories' own:
 * callers that need an order sort what they collect.
 */
int dirwalk(const char *root, const struct dirwalk_opts *o, dirwalk_fn fn, void *ctx,
    struct dirwalk_stats *st);

#endif
