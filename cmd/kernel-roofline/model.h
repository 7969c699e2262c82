/*
 * FLOP and byte models of the CPU ops that launch GPU work, from the
 * shapes a record_shapes profile writes (op_shape records,
 * triage-records(5)).  Each model and its source is written down in
 * kernel-roofline(1), MODELS; this file follows that text.
 *
 * All counts are doubles (a large GEMM's FLOPs times its launches passes
 * 2^63).  Bytes are the ideal memory traffic: every operand read once and
 * every result written once, at its element size.
 */
#ifndef MODEL_H
#define MODEL_H

#include <stddef.h>

#include "gpuspec.h"	/* enum mdtype: the data types whose peaks the GPU table gives */

/* What a model says of one op instance. */
struct mresult {
	int ok;			/* 1: modeled; 0: see reason */
	double flops, bytes;
	int dtype;		/* enum mdtype: the peak that applies */
	int fp32_gemm;		/* an fp32 GEMM or convolution: TF32 when the kernel says so */
	int bound;		/* 1: an upper bound (only maxima recorded) */
	char cls[160];		/* the shape class, e.g. "M=8944 N=1024 K=1024 bf16" */
	const char *reason;	/* !ok: why, a static string */
};

/*
 * Model the op `op` (NUL-terminated) from the JSON texts of its dims,
 * types and concrete inputs (any may be NULL: not recorded).  Never
 * fails: an op without a model, or inputs a model cannot read, gives
 * ok = 0 and a reason.
 */
void model_op(const char *op, const char *dims, size_t dimslen, const char *types,
    size_t typeslen, const char *concrete, size_t concretelen, struct mresult *out);

#endif
