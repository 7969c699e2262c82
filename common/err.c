/* Exit codes, messages and stdout shutdown shared by every tool. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "esc.h"
#include "memtune.h"
#include "progress.h"
#include "sbuf.h"

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
	mem_tune();
	signal(SIGPIPE, SIG_DFL);
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
}

int
tool_finish(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			raise(SIGPIPE);
		err_msg("write error on stdout: %s", strerror(errno));
		return EXIT_DATA;
	}
	if (fclose(stdout) != 0) {
		err_msg("write error on stdout: %s", strerror(errno));
		return EXIT_DATA;
	}
	return status;
}

/*
 * One message line: "progname: " then `tag`, then the text with every
 * control character escaped (esc.h): a model id, path or kernel name
 * never moves the cursor, sets a terminal's title or forges a second
 * line (issue 27).
 */
static void
vmsg(const char *tag, const char *fmt, va_list ap)
{
	char stack[512];
	sbuf line = SBUF_INIT;
	char *text = stack;
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(stack, sizeof stack, fmt, cp);
	va_end(cp);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof stack) {
		text = malloc((size_t)n + 1);
		if (text)
			vsnprintf(text, (size_t)n + 1, fmt, ap);
		else
			text = stack, n = (int)strlen(stack);
	}
	progress_end_line();	/* a message never continues a progress line */
	esc_ctrl(progname, strlen(progname), 0, &line);
	sb_adds(&line, ": ");
	sb_adds(&line, tag);
	esc_ctrl(text, (size_t)n, ESC_KEEP_TAB, &line);
	sb_addc(&line, '\n');
	fwrite(line.s, 1, line.len, stderr);
	fflush(stderr);
	sb_free(&line);
	if (text != stack)
		free(text);
}

static _Thread_local void (*thread_die)(int code, const char *msg);
static volatile sig_atomic_t dying;	/* exit() is running its handlers */

void
err_thread_die(void (*fn)(int code, const char *msg))
{
	thread_die = fn;
}

void
die(int code, const char *fmt, ...)
{
	va_list ap;

	if (thread_die) {
		char msg[1024];	/* not the heap: it may be what ran out */
		va_start(ap, fmt);
		vsnprintf(msg, sizeof msg, fmt, ap);
		va_end(ap);
		thread_die(code, msg);
		abort();	/* it must not return */
	}
	fflush(stdout);
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	if (dying)
		_exit(code);	/* from an exit handler: exit() again is undefined */
	dying = 1;
	exit(code);
}

void
err_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void
err_vmsg(const char *fmt, va_list ap)
{
	vmsg("", fmt, ap);
}

void
warn_msg(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void
note_msg(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void
print_version(void)
{
	printf("%s (llm-torch-profiler-analysis) %s\n", progname, TRIAGE_VERSION);
	exit(tool_finish(EXIT_OK));
}
