/*
 * Python frame names as the overlap table reads them (overlap.md §6.2) and
 * the frames other tools single out.  Inputs are (pointer, length) spans of
 * valid UTF-8; nothing is retained.  Shared by trace-extract, which resolves
 * each CPU op's and kernel's Python scopes while it reads a trace, and
 * overlap-sweep, which does the same from frame records.
 */
#ifndef PYSCOPE_H
#define PYSCOPE_H

#include <stddef.h>

#include "sbuf.h"

/*
 * canonicalize_python_scope_name (§6.2): normalize, replace hex addresses
 * (0x.. -> 0xADDR), and rewrite "path(N): func" with a repo-relative path.
 * The result is left in out (reset first).
 */
void canonicalize_python_scope_name(const char *s, size_t n, sbuf *out);

/* is_meaningful_python_scope / is_fallback_python_scope (§6.2), on a canonical name. */
int scope_is_meaningful(const char *s, size_t n);
int scope_is_fallback(const char *s, size_t n);

/*
 * A raw "<built-in ...>" frame name without ".py(" or "): ": such a frame
 * can be neither a meaningful nor a fallback scope whatever canonicalizing
 * does to it, so readers skip it unexamined (four frames in ten of a
 * stack-traced trace).
 */
int scope_builtin_frame(const char *s, size_t n);

/*
 * torch.cuda.graph's capture_begin or capture_end frame (a name containing
 * "torch/cuda/graphs.py(" and ending ": capture_begin" or ": capture_end"):
 * trace-health's capture regions (health.h) are made of them, so
 * trace-extract keeps them as frame records.
 */
int frame_is_capture_marker(const char *s, size_t n);

#endif
