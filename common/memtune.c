/* Malloc and page settings for short-lived filters (memtune.h). */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memtune.h"

/* The end of the heap advised so far; 0: not tuned (nothing to do). */
static uintptr_t advised, pg_size;

/* Blocks of this many bytes or more are mapped on their own (glibc's largest threshold). */
#define MMAP_MIN (32u << 20)

/* The heap's first growth, in bytes: below the mmap threshold, so from the heap. */
#define PREGROW (28u << 20)

/* x rounded up to a whole page */
static uintptr_t
page_up(uintptr_t x)
{
	return (x + pg_size - 1) & ~(pg_size - 1);
}

void
mem_tune(void)
{
	const char *v = getenv("TRIAGE_MALLOC");
	long pg = sysconf(_SC_PAGESIZE);
	void *p;

	if (v && strcmp(v, "default") == 0)
		return;
	/* (each call fails harmlessly where malloc is not glibc's, as under ASan) */
	mallopt(M_MMAP_THRESHOLD, MMAP_MIN);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	/*
	 * Grow in large steps: each step is advised as soon as an allocation
	 * returns, so only the block that made the heap grow can have pages
	 * touched before the advice (a realloc's copy).  Address space only.
	 */
	mallopt(M_TOP_PAD, 64 << 20);
	mallopt(M_ARENA_MAX, 1);
	if (pg <= 0)
		return;
	pg_size = (uintptr_t)pg;
	/* from the first whole page above what the heap holds now */
	__atomic_store_n(&advised, page_up((uintptr_t)sbrk(0)), __ATOMIC_RELAXED);
	/*
	 * Grow the heap at once by what a filter's working set usually is, and
	 * advise it before anything is written there: advice given after an
	 * allocation comes too late for the pages a growing array's realloc
	 * has already copied into.  Only address space: a page is memory when
	 * it is first written, as it would have been.
	 */
	if ((p = malloc(PREGROW)) != NULL) {
		mem_heap_advise();
		free(p);
	}
}

void
mem_block_advise(void *p, size_t n)
{
	uintptr_t a, e;

	if (!__atomic_load_n(&advised, __ATOMIC_RELAXED) || n < MMAP_MIN)
		return;
	/* the whole pages of the block, which malloc mapped on its own */
	a = page_up((uintptr_t)p);
	e = ((uintptr_t)p + n) & ~(pg_size - 1);
	if (e > a)
		madvise((void *)a, e - a, MADV_HUGEPAGE);
}

void
mem_heap_advise(void)
{
	uintptr_t from = __atomic_load_n(&advised, __ATOMIC_RELAXED), top;

	if (!from)
		return;
	top = (uintptr_t)sbrk(0);
	if (top <= from)
		return;
	/* two threads may both advise the same range: harmless */
	__atomic_store_n(&advised, page_up(top), __ATOMIC_RELAXED);
	madvise((void *)from, top - from, MADV_HUGEPAGE);
}
