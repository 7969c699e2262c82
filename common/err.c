/* Exit codes, messages and stdout shutdown shared by every tool. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

const char *progname = "triage";
int quiet;

static char outbuf[1 << 16];

void
tool_init(int argc, char **argv)
{
	const char *p;

	(void)argc;
	if (argv && argv[0]) {
		p = strrchr(argv[0], '/');
		progname = p ? p + 1 : argv[0];
	}
	signal(SIGPIPE, SIG_DFL);
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
}

int
tool_finish(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			raise(SIGPIPE);
		fprintf(stderr, "%s: write error on stdout: %s\n", progname,
		    strerror(errno));
		return EXIT_DATA;
	}
	if (fclose(stdout) != 0) {
		fprintf(stderr, "%s: write error on stdout: %s\n", progname,
		    strerror(errno));
		return EXIT_DATA;
	}
	return status;
}

void
die(int code, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

void
warn_msg(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	fprintf(stderr, "%s: warning: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
note_msg(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
print_version(void)
{
	printf("%s (llm-torch-profiler-analysis) %s\n", progname, TRIAGE_VERSION);
	exit(tool_finish(EXIT_OK));
}
