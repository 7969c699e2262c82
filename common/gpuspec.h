/*
 * The GPU table (gpu-specs(5)): each entry the device names it matches,
 * the dense peak TFLOP/s per data type and the memory bandwidth, each from
 * a vendor document the entry names, and an AMD part's gfx target.  Built
 * in from data/gpu-specs.jsonl; kernel-roofline's --gpu-specs FILE
 * replaces it.  kernel-roofline takes its peaks (issue 28); triage-render
 * names a GPU the trace leaves unnamed from its figures and gives an AMD
 * GPU's gfx target (issue 25 follow-up).
 */
#ifndef GPUSPEC_H
#define GPUSPEC_H

#include <stddef.h>

/* The data types whose peaks the GPU table gives (gpu-specs(5)). */
enum mdtype {
	DT_NONE,	/* a memory-only model: the bandwidth alone bounds it */
	DT_FP64, DT_FP32, DT_TF32, DT_BF16, DT_FP16, DT_FP8, DT_FP6, DT_FP4, DT_INT8,
	DT_COUNT
};

/* The table's key of a type ("bf16"), NULL for DT_NONE. */
const char *dtype_key(int dt);

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
	char *gfx;		/* an AMD part's gfx target ("gfx942"), NULL: none given */
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
 * The built-in table, loaded on the first call and kept for the run (the
 * renderer and trace-diff name devices by it): never NULL, not to be
 * freed.
 */
const struct gputab *gputab_builtin(void);

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

/*
 * Is a device name empty or generic ("AMD Radeon Graphics", "GPU"), so that
 * only its figures can tell the part (ROCm 6.2 and 7 write such names)?
 */
int gpu_name_generic(const char *name);

/*
 * The generic entries these figures fit (what a device of an empty or
 * generic name could be): at most max into out, in table order; returns
 * how many fit.  Nothing fits unknown figures (sm, ccmaj or mem < 0).
 */
size_t gpu_generic_fits(const struct gputab *t, long long sm, int ccmaj, int ccmin,
    long long mem, const struct gpu **out, size_t max);

#endif
