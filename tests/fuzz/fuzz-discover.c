/*
 * libFuzzer harness for trace discovery (cmd/trace-extract/discover.c):
 * the input describes a directory tree, one entry a line --
 *   "d NAME"          a directory, entered
 *   "u"               back up one level
 *   "f NAME TEXT"     a file holding TEXT (\n written as "\n")
 *   "l NAME TARGET"   a symbolic link
 * -- built under a fresh scratch directory; then discover_targets runs on
 * it in the mode the first byte picks, the server args of what it found
 * are read, and the scratch directory is removed.  Names are cut to 40
 * bytes and may not hold '/'; levels are capped at 200 (the walk's limit
 * is 64).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "extract.h"
#include "fuzz.h"
#include "sbuf.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static char root[64];

/* rm -r without recursion on the C stack: delete leaves until the tree is gone */
static void
remove_tree(const char *top)
{
	sbuf p = SBUF_INIT;
	int again = 1;

	while (again) {
		DIR *d;
		struct dirent *de;
		sbuf cur = SBUF_INIT;
		struct stat st;

		again = 0;
		sb_adds(&cur, top);
		/* descend to a directory without subdirectories, empty it, remove it */
		for (;;) {
			int down = 0;
			if ((d = opendir(cur.s)) == NULL)
				break;
			while ((de = readdir(d)) != NULL) {
				if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
					continue;
				sb_reset(&p);
				sb_printf(&p, "%s/%s", cur.s, de->d_name);
				if (lstat(p.s, &st) == 0 && S_ISDIR(st.st_mode)) {
					sb_reset(&cur);
					sb_add(&cur, p.s, p.len);
					down = 1;
					break;
				}
				unlink(p.s);
			}
			closedir(d);
			if (!down)
				break;
		}
		if (strcmp(cur.s, top) != 0) {
			rmdir(cur.s);
			again = 1;
		}
		sb_free(&cur);
	}
	sb_free(&p);
}

static void
build_tree(const char *data, size_t size)
{
	sbuf dir = SBUF_INIT, path = SBUF_INIT, text = SBUF_INIT;
	size_t i = 0, depth = 0;

	sb_adds(&dir, root);
	while (i < size) {
		const char *line = data + i, *nl = memchr(line, '\n', size - i), *name, *rest;
		size_t len = nl ? (size_t)(nl - line) : size - i, nlen, k;
		char kind = len ? line[0] : 0;

		i += len + (nl ? 1 : 0);
		if (kind == 'u') {
			char *s = strrchr(dir.s, '/');
			if (depth > 0 && s) {
				*s = '\0';
				dir.len = (size_t)(s - dir.s);
				depth--;
			}
			continue;
		}
		if (len < 3 || line[1] != ' ')
			continue;
		name = line + 2;
		rest = memchr(name, ' ', len - 2);
		nlen = rest ? (size_t)(rest - name) : len - 2;
		if (nlen > 40)
			nlen = 40;
		if (nlen == 0 || memchr(name, '/', nlen) || memchr(name, '\0', nlen) ||
		    (nlen <= 2 && name[0] == '.' && (nlen == 1 || name[1] == '.')))
			continue;
		sb_reset(&path);
		sb_printf(&path, "%s/%.*s", dir.s, (int)nlen, name);
		rest = rest ? rest + 1 : line + len;
		sb_reset(&text);
		for (k = 0; rest + k < line + len; k++) {
			if (rest[k] == '\\' && rest + k + 1 < line + len && rest[k + 1] == 'n') {
				sb_addc(&text, '\n');
				k++;
			} else {
				sb_addc(&text, rest[k]);
			}
		}
		if (kind == 'd' && depth < 200) {
			if (mkdir(path.s, 0700) == 0 || errno == EEXIST) {
				sb_reset(&dir);
				sb_add(&dir, path.s, path.len);
				depth++;
			}
		} else if (kind == 'f') {
			int fd = open(path.s, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd >= 0) {
				if (write(fd, text.s ? text.s : "", text.len) < 0)
					abort();
				close(fd);
			}
		} else if (kind == 'l') {
			if (symlink(text.len ? text.s : ".", path.s) != 0)
				continue;
		}
	}
	sb_free(&dir);
	sb_free(&path);
	sb_free(&text);
}

/* The scratch directory goes when the run ends. */
static void
remove_root(void)
{
	remove_tree(root);
	rmdir(root);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tlist out = { 0 };
	struct ranksel sel = { RANKS_LOWEST, 0 };
	char *trace_dir = NULL;
	sbuf args = SBUF_INIT;
	size_t i;

	if (!root[0]) {
		snprintf(root, sizeof root, "/tmp/fuzz-discover.%ld", (long)getpid());
		if (mkdir(root, 0700) != 0 && errno != EEXIST)
			abort();
		atexit(remove_root);
	}
	if (size > 0) {
		sel.mode = data[0] % 3 == 0 ? RANKS_LOWEST : data[0] % 3 == 1 ? RANKS_ALL : RANKS_ONE;
		sel.rank = data[0] >> 4;
		data++;
		size--;
	}
	build_tree((const char *)data, size);
	fuzz_die_armed = 1;
	if (setjmp(fuzz_die_jmp) == 0) {
		if (discover_targets(root, &sel, &out, &trace_dir, NULL) == 0)
			for (i = 0; i < out.n; i++)
				if (load_server_args_for(out.v[i].path, &args) < 0)
					break;
		if (trace_dir)
			load_server_args_dir(trace_dir, &args);
	}
	fuzz_die_armed = 0;
	tlist_free(&out);
	free(trace_dir);
	sb_free(&args);
	remove_tree(root);
	return 0;
}
