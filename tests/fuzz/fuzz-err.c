/*
 * The reporting layer for the fuzz harnesses: the same entry points as
 * common/err.c, but die() jumps back into the harness instead of exiting,
 * and messages are dropped.  Linking this object first keeps err.o out of
 * the archive.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "err.h"
#include "fuzz.h"

const char *progname = "fuzz";
int quiet = 1;
jmp_buf fuzz_die_jmp;
int fuzz_die_armed;

void
tool_init(int argc, char **argv)
{
	(void)argc;
	(void)argv;
}

int
tool_finish(int status)
{
	return status;
}

/* The harnesses run no scan thread (scanq.c): there is no other thread to hand a die to. */
void
err_thread_die(void (*fn)(int code, const char *msg))
{
	(void)fn;
}

void
die(int code, const char *fmt, ...)
{
	(void)fmt;
	if (!fuzz_die_armed)
		abort();	/* die() outside a guarded call is a harness bug */
	longjmp(fuzz_die_jmp, code ? code : 1);
}

void
warn_msg(const char *fmt, ...)
{
	(void)fmt;
}

void
note_msg(const char *fmt, ...)
{
	(void)fmt;
}

void
err_msg(const char *fmt, ...)
{
	(void)fmt;
}

void
err_vmsg(const char *fmt, va_list ap)
{
	(void)fmt;
	(void)ap;
}

void
print_version(void)
{
	abort();
}

/* A read-only file descriptor holding data[0..size), at offset 0. */
#include <sys/mman.h>
#include <unistd.h>

int
fuzz_memfd(const unsigned char *data, size_t size)
{
	int fd = memfd_create("fuzz", 0);
	size_t off = 0;
	ssize_t n;

	if (fd < 0)
		abort();
	while (off < size) {
		n = write(fd, data + off, size - off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		abort();
	return fd;
}
