/*
 * Resource limits on what one input may cost (issue 27 item 13): a trace
 * that decompresses to terabytes, or holds a hundred million kernels,
 * ends with exit 1 and a message naming the limit and its environment
 * variable, instead of running for minutes and taking the machine's
 * memory.  Each limit is read once from the environment: a count, or
 * bytes with an optional K, M, G or T suffix (binary units); a malformed
 * or zero value means the default.
 *
 *   TRIAGE_MAX_INPUT_BYTES  decompressed text of one input file or stream
 *                           (16 GiB: ten times the largest trace of the
 *                           bench, read in about half a minute)
 *   TRIAGE_MAX_KERNELS      GPU kernels in one trace (16 Mi)
 *   TRIAGE_MAX_CPU_OPS      CPU ops, and launch calls, in one trace (16 Mi
 *                           each)
 *   TRIAGE_MAX_SIDE_BYTES   one side file: server_args.json, a pattern
 *                           catalog (16 MiB)
 *
 * 16 Mi kernels let the 10-million-kernel trace of issue 27 through; at
 * the 16 bytes per repeated kernel that issue 30 aims for, that many stay
 * within its 256 MB a process.  The per-value limit of JSON text is
 * json.h's TRIAGE_MAX_JSON_BYTES.
 */
#ifndef RESLIMIT_H
#define RESLIMIT_H

enum limit_id { LIM_INPUT_BYTES, LIM_KERNELS, LIM_CPU_OPS, LIM_SIDE_BYTES, LIM_COUNT };

/* The limit in force (bytes or a count). */
unsigned long long limit_get(enum limit_id id);

/*
 * The limit as a phrase for messages, "the limit of 16 GiB
 * (TRIAGE_MAX_INPUT_BYTES)", "the limit of 16777216 (TRIAGE_MAX_KERNELS)".
 * Static storage, one buffer per limit.
 */
const char *limit_text(enum limit_id id);

/*
 * "123", "64K", "512M", "16G", "1T" (binary units) as a number, or 0 when
 * malformed, zero or above `ceiling`.  Shared with json.h's size limit.
 */
unsigned long long limit_parse(const char *s, unsigned long long ceiling);

#endif
