/* trace-extract internals shared by its source files. */
#ifndef EXTRACT_H
#define EXTRACT_H

#include <stddef.h>

#include "json.h"
#include "sbuf.h"

/* A discovered trace file with its modification time (ns). */
struct tfile {
	char *path;		/* absolute, symlink-free */
	long long mtime_ns;
	int order;		/* discovery order, for stable ties */
	long long rank;		/* the trace's rank, when has_rank */
	int has_rank;		/* 0 none, RANK_NAME from the file name, RANK_TRACE from distributedInfo */
	int peeked;		/* distributedInfo looked for (dist_*) */
	int has_dist;
	long long dist_rank, dist_world;
};

/* Where a trace's rank came from (struct tfile has_rank). */
enum { RANK_NAME = 1, RANK_TRACE = 2 };

struct tlist {
	struct tfile *v;
	size_t n, cap;
	/*
	 * Set by discover_targets for a directory: the distinct ranks its
	 * traces name (rank_of_name), ascending, as "0, 2, 4" (heap), and how
	 * many; NULL and 0 when none names a rank.  Issue 14: a report of one
	 * rank says how many there were.
	 */
	char *ranks;
	size_t nranks;
};

void tlist_free(struct tlist *l);
/* Append a copy of path (its mtime in ns and its discovery order). */
void tlist_add(struct tlist *l, const char *path, long long mtime, int order);

/*
 * Does `path` look like a trace (capture-and-cli.md §3.3)?  Names ending
 * .trace.json(.gz) or containing .pt.trace.json pass unread; other .json
 * and .json.gz files are validated in full.
 */
int file_looks_like_trace(const char *path);

/*
 * Which ranks an operand's traces are taken from.
 *   RANKS_LOWEST  the reference's choice (capture-and-cli.md §3.6 step 4):
 *                 rank 0, else the smallest rank of parse_tp_rank
 *   RANKS_ALL     every rank (--all-ranks)
 *   RANKS_ONE     rank `rank` only (--rank)
 * The two all-ranks modes read ranks with rank_of_name(), which also knows
 * the "-rank-N" names the reference does not.
 */
struct ranksel {
	enum { RANKS_LOWEST, RANKS_ALL, RANKS_ONE } mode;
	long long rank;		/* RANKS_ONE */
};

/*
 * The rank a trace file name (not a path) names in the all-ranks modes:
 * parse_tp_rank (capture-and-cli.md §4.2), else "rank-N" or "rank_N"
 * between separators ("^", "_", "-", "." before; "$", "_", "-", "." after),
 * case-insensitive.  Returns 1 and sets *rank, or 0.
 */
int rank_of_name(const char *name, long long *rank);

/*
 * The rank and world size a trace's own distributedInfo gives, when it
 * comes before the events (where Kineto writes it): the file is read only
 * up to its first event.  Returns 1 and sets *rank (and *world, -1 when
 * absent), or 0.  Issue 25: sets named trace0.json, trace1.json carry their
 * ranks only there.
 */
int trace_dist_rank(const char *path, long long *rank, long long *world);

/*
 * discover_trace_targets (capture-and-cli.md §3.6 with all_traces=false,
 * kernel-table.md Appendix A): the traces to analyze for an operand, in
 * analysis order, and the directory whose server_args.json applies.  `sel`
 * says which ranks: with RANKS_LOWEST exactly the reference's selection
 * (under --compat reference; otherwise a trace's distributedInfo rank
 * comes before its file name's); otherwise the newest trace per (rank,
 * stage) of the chosen ranks, in (rank, stage, name) order, each rank
 * from its distributedInfo, else its file name (issue 25).  `dropped`
 * (may be NULL) receives the candidate traces not kept, with why.  A file operand is taken as it is, except
 * that RANKS_ONE requires its name to carry that rank.  Returns 0, or an
 * exit code after printing a message (no traces, or none of the rank: 3;
 * unreadable: 1).
 */
struct dropped {
	char **path;		/* heap */
	const char **why;	/* static: "another directory", "older", "merged", "rank", "no rank", "damaged", "annotated" */
	size_t n, cap;
};
void dropped_free(struct dropped *d);
int discover_targets(const char *abspath, const struct ranksel *sel, struct tlist *out,
    char **trace_dir, struct dropped *dropped);

/* All traces below dir (recursive or not), oldest first. */
void discover_files(const char *dir, int recursive, struct tlist *out);

/*
 * load_server_args (§3.7): read `dir`/server_args.json.  Only a folder
 * the user named or the one holding the traces is looked in, never a
 * parent, where any user's /tmp/server_args.json would name the model of
 * /tmp/x/trace.json (issue 27, docs/deviations.md); --compat reference
 * keeps the reference's rule, `dir` then its parent.  The file is a side
 * file (sidefile.h): a FIFO, a device or one past 16 MiB is an error.
 * Returns 1 with the minified JSON text in out, 0 when none exists, or -1
 * after printing an error (malformed, not a regular file, too large).
 */
int load_server_args_dir(const char *dir, sbuf *out);
/* The same for an operand: a file's own folder (the reference: its
 * folder, then the one above), a directory itself (and its parent). */
int load_server_args_for(const char *path, sbuf *out);

/*
 * Framework resolution (kernel-table.md Appendix B, capture-and-cli.md
 * §5.7).  `explicit_fw` is the --framework value; `fallback` (may be NULL)
 * is the hint a live capture found from the URL.  Returns a canonical name,
 * or "none" when nothing names one (--compat reference: "sglang"), and in
 * *source what decided: option, server_args, path, trace, capture, none
 * (or default).  A content hint's evidence is left in `evidence`.  The
 * content hint of a directory comes from `traces`, the traces discovery
 * chose (issue 25: not from a file it dropped); under --compat reference,
 * or when traces is NULL, from the newest three below it, as the
 * reference reads them.
 * framework_captured (--framework-captured, may be NULL): what the live
 * server itself answered as; it comes right after --framework (issue 19),
 * except under --compat reference, where only `fallback` counts.
 */
extern const char *framework_captured;
struct framehint;
const char *resolve_framework(const char *explicit_fw, const char *fallback,
    const char *abspath, int is_dir, const char *server_args_json, const struct tlist *traces,
    const char **source, sbuf *evidence, struct framehint **defer);

/*
 * With `defer` non-NULL, resolve_framework does not read the traces for
 * their frames (issue 30: a second pass over them, as long as the
 * extraction's on a trace of under 200,000 events): when it would read
 * the first of them, it returns NULL with *defer a new hint (frames_hint_new)
 * that the extraction of traces->v[0] feeds (frames_hint_event).  Then
 * resolve_framework_finish gives the framework as resolve_framework would
 * have: that trace's hint, else (a directory) the next traces' by their own
 * reading, else default_framework's; it does not free h.
 */
const char *resolve_framework_finish(struct framehint *h, int is_dir, const char *fallback,
    const struct tlist *traces, const char **source, sbuf *evidence);

/*
 * The frames hint of one trace fed event by event: d the event (ntok 0
 * when jsmn refused it), in and ic the token indexes of its name and cat
 * (-1: absent).  frames_hint_event returns non-zero once the hint is
 * decided (64 hits of one framework, or 200,000 events read): feed no
 * more.  frames_hint_result: the framework (NULL: none) with its evidence,
 * as trace_frames_hint gives it.
 */
struct framehint *frames_hint_new(void);
int frames_hint_event(struct framehint *h, const json_doc *d, int in, int ic);
const char *frames_hint_result(const struct framehint *h, sbuf *evidence);
void frames_hint_free(struct framehint *h);			/* NULL is a no-op */

/*
 * After the traces' frames are read (frames_fw, NULL: they name none): the
 * framework the input's path names, if any and the frames name no other,
 * else the frames' (with a warning when the path named another), else
 * default_framework's; *source says which (path, trace, none).  Not under
 * --compat reference, where the path's hint is taken at once.
 */
const char *framework_over_path(const char *frames_fw, const char *fallback,
    const char **source, sbuf *evidence);

/* The last resort of resolve_framework: the capture's hint, else none (or sglang). */
const char *default_framework(const char *fallback, const char **source);

/*
 * The framework a trace's own Python frames and op names belong to, by
 * majority over its head (docs/deviations.md); NULL when none.  `evidence`
 * receives a sentence saying how many of which.
 */
const char *trace_frames_hint(const char *path, sbuf *evidence);

/*
 * model.c: the model family a trace shows (issue 26) over its head
 * (200,000 events): the framework's, Hugging Face's or diffusers' model
 * file its Python frames run (sglang/srt/models/qwen3_moe.py,
 * vllm/model_executor/models/gpt_oss.py,
 * transformers/models/qwen2/modeling_qwen2.py,
 * diffusers/pipelines/flux/pipeline_flux.py: qwen3_moe, gpt_oss, qwen2,
 * flux), or the model class its nn.Module frames and CPU ops name
 * (Qwen3MoeForCausalLM: qwen3_moe).  Of several, the one whose code ran
 * longest in one frame or op, then the one seen most: a diffusion
 * pipeline, not the text encoder (CLIP, T5) it runs first.  Returns 1 with
 * the family, a sentence of evidence and the source ("frames" or "ops"),
 * or 0 when the trace shows none (a CUDA-graph decode trace runs no model
 * code).
 */
int trace_model_hint(const char *path, sbuf *family, sbuf *evidence, const char **source);

/*
 * The same hint fed event by event by a pass that reads the trace anyway
 * (issue 30): d the event (ntok 0 when jsmn refused it), in, ic and idur
 * the token indexes of its name, cat and dur (-1: absent).
 * model_hint_event returns non-zero once 200,000 events were read: feed no
 * more.  model_hint_result is trace_model_hint's answer from what was fed.
 */
struct modelhint;
struct modelhint *model_hint_new(void);
int model_hint_event(struct modelhint *h, const json_doc *d, int in, int ic, int idur);
int model_hint_result(const struct modelhint *h, sbuf *family, sbuf *evidence,
    const char **source);
void model_hint_free(struct modelhint *h);			/* NULL is a no-op */

/* Server-args hint (§5.3) on minified JSON text; NULL when none. */
const char *server_args_hint(const char *json);

/* Trace-content hint (§5.4) of a trace file; NULL when none or unreadable. */
const char *trace_content_hint(const char *path);

#endif
