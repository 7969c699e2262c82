/* Output files written whole or not at all, by what the path names (ofile.h). */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "ofile.h"
#include "xalloc.h"

#define MAX_LINKS 40

enum kind { K_FD, K_DIRECT, K_REGULAR, K_NEW };

struct target {
	enum kind kind;
	int fd;			/* K_FD */
	char *path;		/* the name written or renamed over (heap) */
	struct stat st;		/* K_REGULAR */
};

/* "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: N; else -1. */
static int
fd_of(const char *p)
{
	const char *d = NULL;
	long v = 0;

	if (strcmp(p, "-") == 0 || strcmp(p, "/dev/stdout") == 0)
		return 1;
	if (strcmp(p, "/dev/stderr") == 0)
		return 2;
	if (strncmp(p, "/dev/fd/", 8) == 0)
		d = p + 8;
	else if (strncmp(p, "/proc/self/fd/", 14) == 0)
		d = p + 14;
	if (!d || !*d)
		return -1;
	for (; *d; d++) {
		if (*d < '0' || *d > '9' || v > INT_MAX / 10)
			return -1;
		v = v * 10 + (*d - '0');
	}
	return (int)v;
}

/* The directory part of p ("." when none), heap. */
static char *
dir_of(const char *p)
{
	const char *s = strrchr(p, '/');

	if (!s)
		return xstrdup(".");
	if (s == p)
		return xstrdup("/");
	return xstrndup(p, (size_t)(s - p));
}

static int
fail(sbuf *why, int code, const char *shown, const char *fmt, const char *arg)
{
	sb_reset(why);
	sb_printf(why, "cannot write '%s': ", shown);
	sb_printf(why, fmt, arg);
	return code;
}

/* Set by the *_made calls: a link at the name is refused, not followed. */
static int refuse_links;

#define LINK_REFUSED "it is a symbolic link, and a file name this tool makes itself is " \
	"never written through one; remove it"

/* What path names, links followed; 0 or an exit status with why. */
static int
resolve(const char *path, struct target *t, sbuf *why)
{
	char *p = xstrdup(path), *dir;
	char link[PATH_MAX + 1];
	ssize_t n;
	int hops, rc;

	memset(t, 0, sizeof *t);
	t->fd = -1;
	if (!*path)
		return fail(why, EXIT_USAGE, path, "%san empty name", "");
	for (hops = 0;; hops++) {
		int fd = fd_of(p);
		if (fd >= 0) {
			int fl = fcntl(fd, F_GETFL);
			free(p);
			if (fl == -1 || (fl & O_ACCMODE) == O_RDONLY)
				return fail(why, EXIT_USAGE, path, "descriptor %s is not open for "
				    "writing", path[0] == '-' ? "1" : strrchr(path, '/') + 1);
			t->kind = K_FD;
			t->fd = fd;
			return 0;
		}
		if (strncmp(p, "/proc/", 6) == 0) {
			/* magic links (/proc/PID/fd/N): opened, never renamed over */
			if (stat(p, &t->st) != 0) {
				rc = fail(why, EXIT_USAGE, path, "%s", strerror(errno));
				free(p);
				return rc;
			}
			t->kind = K_DIRECT;
			t->path = p;
			return 0;
		}
		if (lstat(p, &t->st) != 0) {
			if (errno != ENOENT) {
				rc = fail(why, EXIT_USAGE, path, "%s", strerror(errno));
				free(p);
				return rc;
			}
			t->kind = K_NEW;
			break;
		}
		if (!S_ISLNK(t->st.st_mode))
			break;
		if (refuse_links) {
			free(p);
			return fail(why, EXIT_USAGE, path, "%s", LINK_REFUSED);
		}
		if (hops >= MAX_LINKS) {
			free(p);
			return fail(why, EXIT_USAGE, path, "%s", strerror(ELOOP));
		}
		if ((n = readlink(p, link, sizeof link - 1)) < 0 || (size_t)n >= sizeof link - 1) {
			rc = fail(why, EXIT_USAGE, path, "%s",
			    n < 0 ? strerror(errno) : strerror(ENAMETOOLONG));
			free(p);
			return rc;
		}
		link[n] = '\0';
		if (link[0] == '/') {
			free(p);
			p = xstrdup(link);
		} else {
			sbuf j = SBUF_INIT;
			dir = dir_of(p);
			sb_printf(&j, "%s/%s", dir, link);
			free(dir);
			free(p);
			p = sb_detach(&j);
		}
	}
	t->path = p;
	if (t->kind == K_NEW) {
		size_t len = strlen(p);
		struct stat ds;
		if (len && p[len - 1] == '/')
			return fail(why, EXIT_USAGE, path, "%sit names a directory", "");
		dir = dir_of(p);
		if (stat(dir, &ds) != 0 || !S_ISDIR(ds.st_mode)) {
			rc = fail(why, EXIT_USAGE, path, "no such directory '%s'", dir);
			free(dir);
			return rc;
		}
		if (access(dir, W_OK | X_OK) != 0) {
			rc = fail(why, EXIT_USAGE, path, "directory '%s' not writable", dir);
			free(dir);
			return rc;
		}
		free(dir);
		return 0;
	}
	if (S_ISDIR(t->st.st_mode))
		return fail(why, EXIT_USAGE, path, "%sit is a directory", "");
	if (!S_ISREG(t->st.st_mode)) {
		t->kind = K_DIRECT;	/* a FIFO, a device, a socket */
		if (access(p, W_OK) != 0)
			return fail(why, EXIT_USAGE, path, "%s", strerror(errno));
		return 0;
	}
	t->kind = K_REGULAR;
	if (access(p, W_OK) != 0)
		return fail(why, EXIT_USAGE, path, "%sthe file is not writable", "");
	if (t->st.st_nlink > 1) {
		char num[32];
		snprintf(num, sizeof num, "%lu", (unsigned long)t->st.st_nlink - 1);
		return fail(why, EXIT_USAGE, path, "it has %s other hard link(s), which a new file "
		    "would cut (remove them, or write elsewhere)", num);
	}
	dir = dir_of(p);
	if (access(dir, W_OK | X_OK) != 0) {
		rc = fail(why, EXIT_USAGE, path, "directory '%s' not writable (the report is "
		    "written beside the file, then renamed over it)", dir);
		free(dir);
		return rc;
	}
	free(dir);
	return 0;
}

int
ofile_no_link(const char *path, sbuf *why)
{
	struct stat st;

	sb_reset(why);
	if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
		return 0;
	sb_printf(why, "cannot write '%s': %s", path, LINK_REFUSED);
	return EXIT_USAGE;
}

int
ofile_open_made(struct ofile *o, const char *path, sbuf *why)
{
	int rc;

	refuse_links = 1;
	rc = ofile_open(o, path, why);
	refuse_links = 0;
	return rc;
}

int
ofile_put_made(const char *path, const void *p, size_t n, sbuf *why)
{
	int rc;

	refuse_links = 1;
	rc = ofile_put(path, p, n, why);
	refuse_links = 0;
	return rc;
}

int
ofile_check(const char *path, sbuf *why)
{
	struct target t;
	int rc = resolve(path, &t, why);

	free(t.path);
	return rc;
}

/* ---- a signal while the temporary file exists removes it ---- */

static const char *volatile live_tmp;
static struct sigaction saved[3];
static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };

static void
on_signal(int sig)
{
	size_t i;

	if (live_tmp)
		unlink(live_tmp);
	for (i = 0; i < 3; i++)
		if (sigs[i] == sig)
			sigaction(sig, &saved[i], NULL);
	raise(sig);
}

static void
guard(const char *tmp)
{
	struct sigaction sa;
	size_t i;

	live_tmp = tmp;
	if (!tmp) {
		for (i = 0; i < 3; i++)
			sigaction(sigs[i], &saved[i], NULL);
		return;
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++) {
		sigaction(sigs[i], NULL, &saved[i]);
		if (saved[i].sa_handler == SIG_DFL)
			sigaction(sigs[i], &sa, NULL);
	}
}

int
ofile_open(struct ofile *o, const char *path, sbuf *why)
{
	struct target t;
	sbuf tmpl = SBUF_INIT;
	char *dir, *base;
	mode_t um;
	int rc;

	memset(o, 0, sizeof *o);
	o->fd = -1;
	if ((rc = resolve(path, &t, why)) != 0) {
		free(t.path);
		return rc;
	}
	o->shown = xstrdup(path);
	if (t.kind == K_FD) {
		o->fd = t.fd;
		o->direct = 1;
		return 0;
	}
	if (t.kind == K_DIRECT) {
		o->direct = 1;
		o->own_fd = 1;
		/* O_TRUNC matters only for a regular file behind /proc */
		o->fd = open(t.path, O_WRONLY | O_NOCTTY | O_CLOEXEC |
		    (S_ISREG(t.st.st_mode) ? O_TRUNC : 0));
		free(t.path);
		if (o->fd < 0) {
			rc = fail(why, EXIT_DATA, path, "%s", strerror(errno));
			ofile_abort(o);
			return rc;
		}
		return 0;
	}
	o->target = t.path;
	um = umask(0);
	umask(um);
	o->mode = t.kind == K_REGULAR ? (t.st.st_mode & 0777) : (0666 & ~um);
	if (t.kind == K_REGULAR && geteuid() == 0 &&
	    (t.st.st_uid != 0 || t.st.st_gid != getegid())) {
		o->chown = 1;
		o->uid = t.st.st_uid;
		o->gid = t.st.st_gid;
	}
	dir = dir_of(t.path);
	base = strrchr(t.path, '/');
	base = base ? base + 1 : t.path;
	sb_printf(&tmpl, "%s/.%s.XXXXXX", dir, base);
	if (strlen(base) + 8 > NAME_MAX) {
		sb_reset(&tmpl);
		sb_printf(&tmpl, "%s/.triage-out.XXXXXX", dir);
	}
	free(dir);
	/* mkstemp: O_CREAT|O_EXCL, so a link planted under any name is never followed */
	o->fd = mkostemp(tmpl.s, O_CLOEXEC);
	if (o->fd < 0) {
		rc = fail(why, EXIT_DATA, path, "cannot make a temporary file beside it: %s",
		    strerror(errno));
		sb_free(&tmpl);
		ofile_abort(o);
		return rc;
	}
	o->tmp = sb_detach(&tmpl);
	o->own_fd = 1;
	guard(o->tmp);
	if (fchmod(o->fd, o->mode) != 0 || (o->chown && fchown(o->fd, o->uid, o->gid) != 0 &&
	    errno != EPERM)) {
		rc = fail(why, EXIT_DATA, path, "%s", strerror(errno));
		ofile_abort(o);
		return rc;
	}
	return 0;
}

int
ofile_write(struct ofile *o, const void *p, size_t n, sbuf *why)
{
	const char *s = p;
	ssize_t k;
	int rc;

	while (n > 0) {
		k = write(o->fd, s, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rc = fail(why, EXIT_DATA, o->shown, "%s", k < 0 ? strerror(errno) :
			    "nothing written");
			ofile_abort(o);
			return rc;
		}
		s += k;
		n -= (size_t)k;
	}
	return 0;
}

int
ofile_commit(struct ofile *o, sbuf *why)
{
	int rc;

	if (o->tmp) {
		if ((fsync(o->fd) != 0 && errno != EINVAL) || close(o->fd) != 0) {
			o->fd = -1;
			rc = fail(why, EXIT_DATA, o->shown, "%s", strerror(errno));
			ofile_abort(o);
			return rc;
		}
		o->fd = -1;
		if (rename(o->tmp, o->target) != 0) {
			rc = fail(why, EXIT_DATA, o->shown, "%s", strerror(errno));
			ofile_abort(o);
			return rc;
		}
		guard(NULL);
		free(o->tmp);
		o->tmp = NULL;
	} else if (o->own_fd && o->fd >= 0) {
		int e = close(o->fd);
		o->fd = -1;
		if (e != 0) {
			rc = fail(why, EXIT_DATA, o->shown, "%s", strerror(errno));
			ofile_abort(o);
			return rc;
		}
	}
	ofile_abort(o);		/* frees what is left */
	return 0;
}

void
ofile_abort(struct ofile *o)
{
	if (o->own_fd && o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp) {
		unlink(o->tmp);
		guard(NULL);
		free(o->tmp);
		o->tmp = NULL;
	}
	free(o->target);
	free(o->shown);
	o->target = o->shown = NULL;
}

int
ofile_put(const char *path, const void *p, size_t n, sbuf *why)
{
	struct ofile o;
	int rc;

	if ((rc = ofile_open(&o, path, why)) != 0)
		return rc;
	if ((rc = ofile_write(&o, p, n, why)) != 0)
		return rc;
	return ofile_commit(&o, why);
}
