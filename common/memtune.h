/*
 * Memory settings for short-lived streaming filters (issue 30).
 *
 * A filter's heap grows to its working set once and is freed at exit, so
 * every page it returns to the kernel in between is one it faults in again.
 * On a virtual machine whose guest page tables are shadowed by the
 * hypervisor a first touch costs about 13 us per 4 KiB page (measured:
 * 100 MiB touched in 0.34 s of CPU, against 0.10 s in 2 MiB pages), which
 * made page faults a third of a report's CPU on such a host.  So:
 *
 *   - freed memory stays in the process (no trimming of the heap's top, and
 *     blocks below 32 MiB come from the heap, not from mmap and munmap per
 *     block): the 4 MiB sort buffers (xsort.h) of one trace are the next
 *     trace's, not new pages;
 *   - the heap grows by 28 MiB at start and in steps of 64 MiB after (of
 *     address space: a page is memory when first written), and what it
 *     grows by is advised as transparent huge pages (madvise
 *     MADV_HUGEPAGE: glibc's glibc.malloc.hugetlb=1, done from the
 *     program), as are blocks of 32 MiB or more, which malloc maps on their
 *     own, so that 2 MiB are one fault where the kernel allows it
 *     ("madvise" or "always" in /sys/kernel/mm/transparent_hugepage/enabled;
 *     "never": no change);
 *   - one malloc arena for every thread (trace-extract's scan thread), so
 *     that its memory is the advised heap too.
 *
 * Peak memory grows a little: memory kept for reuse can fragment, and a
 * region is resident in 2 MiB steps (trace-extract on a 792 MB decode
 * trace: 69 MB against 54; the tools' figures are in docs/speed.md).  TRIAGE_MALLOC=default in the
 * environment skips all of it (to measure the difference).
 */
#ifndef MEMTUNE_H
#define MEMTUNE_H

/*
 * Apply the settings above; once, at start (tool_init calls it).  Never
 * fails: a setting the C library or kernel refuses is left as it was.
 */
void mem_tune(void);

/*
 * Advise the heap's growth since the last call as huge pages.  Cheap when
 * the heap has not grown (one compare); the allocation wrappers (xalloc.h)
 * call it after each allocation.  Safe from any thread.
 */
void mem_heap_advise(void);

/*
 * Advise a block of n bytes just allocated at p as huge pages when it is
 * one malloc mapped on its own (32 MiB or more); a no-op for smaller
 * blocks, which are the heap's.  The allocation wrappers call it.
 */
void mem_block_advise(void *p, size_t n);

#endif
