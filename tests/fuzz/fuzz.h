/* Shared by the libFuzzer harnesses under tests/fuzz/. */
#ifndef FUZZ_H
#define FUZZ_H

#include <setjmp.h>
#include <stddef.h>

/* die() longjmps here (with its exit code) while fuzz_die_armed is set. */
extern jmp_buf fuzz_die_jmp;
extern int fuzz_die_armed;

/* A memfd holding the bytes, positioned at 0; the caller closes it. */
int fuzz_memfd(const unsigned char *data, size_t size);

#endif
