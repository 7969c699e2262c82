/*
 * trace-capture's small system helpers: directories, paths, sleeping and
 * the termination signals, shared by main.c and flow.c (capture.h).
 */
#include <sys/stat.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "err.h"
#include "sbuf.h"
#include "xalloc.h"

volatile sig_atomic_t got_signal;

void
make_dirs(const char *path)
{
	char *p = xstrdup(path), *s;
	struct stat st;

	for (s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST)
			die(EXIT_CAPTURE, "cannot create directory '%s': %s", p,
			    strerror(errno));
		*s = c;
		if (c == '\0')
			break;
	}
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		die(EXIT_CAPTURE, "cannot create directory '%s': %s", path,
		    errno ? strerror(errno) : "not a directory");
	free(p);
}

char *
abs_path(const char *path)
{
	sbuf b = SBUF_INIT;
	const char *home = getenv("HOME");
	char *cwd;

	if (path[0] == '~' && (path[1] == '/' || path[1] == '\0') && home &&
	    home[0]) {
		sb_adds(&b, home);
		path++;
		sb_adds(&b, path);
	} else if (path[0] != '/') {
		if ((cwd = getcwd(NULL, 0)) == NULL)
			die(EXIT_CAPTURE, "cannot get the current directory: %s",
			    strerror(errno));
		sb_printf(&b, "%s/%s", strcmp(cwd, "/") ? cwd : "", path);
		free(cwd);
	} else {
		sb_adds(&b, path);
	}
	while (b.len > 1 && b.s[b.len - 1] == '/')
		b.s[--b.len] = '\0';
	return sb_detach(&b);
}

void
sleep_s(double s)
{
	struct timespec ts;

	if (!(s > 0))
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (!got_signal && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void
on_signal(int sig)
{
	got_signal = sig;
}

/*
 * Catch the termination signals so that a profiler already started is
 * stopped.  A second signal ends the program at once (SA_RESETHAND).  A
 * signal ignored on entry (SIGINT in a background job) stays ignored.
 */
void
catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

double
now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

