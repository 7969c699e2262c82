/*
 * The GPU peak table (gpu-specs(5)): each entry the device names it
 * matches, the dense peak TFLOP/s per data type and the memory bandwidth,
 * each from a vendor document the entry names.  Built in from
 * data/gpu-specs.jsonl; --gpu-specs FILE replaces it.
 */
#ifndef GPU_H
#define GPU_H

#include <stddef.h>

#include "model.h"

struct gpu {
	char *name;
	char **match;		/* lowercase patterns: a substring, ^ and $ anchor it */
	size_t nmatch;
	long long sm_count;	/* 0: any */
	int cc_major, cc_minor;	/* -1: any */
	double mem_gib_min, mem_gib_max;	/* 0: any */
	int generic;		/* may match by sm_count, cc and memory alone (empty or generic names) */
	double mem_gbps;	/* 0: not published */
	double tflops[DT_COUNT];	/* 0: not published; [DT_NONE] unused */
	double fp64_tensor;	/* FP64 on tensor/matrix units, 0: none */
	char *source;
};

struct gputab {
	struct gpu *g;
	size_t n, cap;
};

/*
 * Load the built-in table (lines == NULL) or a file: one JSON object per
 * line (gpu-specs(5)).  A malformed line ends the run: exit 1 with
 * "file:line: ..." (the built-in table is tested).
 */
void gputab_load(struct gputab *t, const char *path);
void gputab_free(struct gputab *t);

/*
 * The entry for a device: the one whose longest matching pattern is the
 * longest and whose constraints hold; for an empty or generic name
 * ("AMD Radeon Graphics") the generic entries whose constraints hold.
 * NULL when none or several different ones fit, with *why (static or in
 * why_buf) saying which.  mem in bytes; sm, ccmaj, ccmin < 0: unknown.
 */
const struct gpu *gpu_match(const struct gputab *t, const char *name, long long sm, int ccmaj,
    int ccmin, long long mem, const char **why, char *why_buf, size_t why_len);

/* The peak for a model's type (FP64 GEMMs on the tensor units where the part has them). */
double gpu_peak(const struct gpu *g, int dtype, int gemm);

#endif
