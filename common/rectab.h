/*
 * The record table: every record type of the stream (triage-records(5))
 * and its members, written once.  The typed structs, the member ids, the
 * reader's checks, the writer's key text and member order, and the fast
 * path that reads our own writers' lines all derive from these lists, so
 * none of them can drift from the others.
 *
 * REC_TYPES(T, X) calls T(type, MEMBERS, X) once per record type, in
 * stream order; MEMBERS(M, type) calls M(type, member, kind, need, default)
 * once per member, in the order writers put them on the line.
 *
 * kind:  INT   a JSON integer (long long; a number with a fraction is
 *              truncated as Python int() would)
 *        NUM   a JSON number (double), microseconds for times
 *        BOOL  true or false
 *        STR   a JSON string (decoded to UTF-8)
 *        JSON  any JSON value, kept as its text (objects, arrays)
 * need:  REQ   the record is malformed without it (exit 1, file:line and
 *              the member named)
 *        OPT   may be absent; null counts as absent
 * default: the value an absent optional member reads as, as text (a
 *          string's characters, a number's digits, "true"/"false", a JSON
 *          member's JSON); NULL: none, the field stays zero and the tool
 *          decides from the member's absence (triage-records(5) says how)
 *
 * Adding a member: append it where the writer writes it and document it in
 * man/man5/triage-records.5 (a test compares the two).
 */
#ifndef RECTAB_H
#define RECTAB_H

#define REC_MEMBERS_input(M, T) \
	M(T, v, INT, OPT, "1") \
	M(T, role, STR, OPT, "single") \
	M(T, path, STR, OPT, "") \
	M(T, framework, STR, OPT, "none") \
	M(T, framework_source, STR, OPT, NULL) \
	M(T, framework_evidence, STR, OPT, NULL) \
	M(T, server_args, JSON, OPT, NULL) \
	M(T, model, STR, OPT, NULL) \
	M(T, model_family, STR, OPT, NULL) \
	M(T, model_source, STR, OPT, NULL) \
	M(T, model_evidence, STR, OPT, NULL) \
	M(T, tp_size, INT, OPT, "1") \
	M(T, traces, JSON, OPT, "[]") \
	M(T, world_size, INT, OPT, NULL) \
	M(T, gpu, STR, OPT, NULL) \
	M(T, gpu_sms, INT, OPT, NULL) \
	M(T, gpu_mem, INT, OPT, NULL)

#define REC_MEMBERS_trace(M, T) \
	M(T, v, INT, OPT, "1") \
	M(T, t, INT, REQ, NULL) \
	M(T, role, STR, OPT, "single") \
	M(T, path, STR, OPT, "") \
	M(T, stage, STR, OPT, NULL) \
	M(T, rank, INT, OPT, NULL) \
	M(T, rank_source, STR, OPT, NULL) \
	M(T, world_size, INT, OPT, NULL) \
	M(T, tp_size, INT, OPT, NULL) \
	M(T, gzip, BOOL, OPT, "false") \
	M(T, py_context, BOOL, OPT, "false") \
	M(T, time_base_us, INT, OPT, "0") \
	M(T, capture_flags, JSON, OPT, NULL)

#define REC_MEMBERS_device(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, id, INT, OPT, NULL) \
	M(T, name, STR, OPT, NULL) \
	M(T, total_global_mem, INT, OPT, NULL) \
	M(T, compute_major, INT, OPT, NULL) \
	M(T, compute_minor, INT, OPT, NULL) \
	M(T, num_sms, INT, OPT, NULL) \
	M(T, warp_size, INT, OPT, NULL) \
	M(T, max_threads_per_block, INT, OPT, NULL) \
	M(T, max_threads_per_sm, INT, OPT, NULL) \
	M(T, regs_per_block, INT, OPT, NULL) \
	M(T, shared_mem_per_block, INT, OPT, NULL) \
	M(T, shared_mem_per_sm, INT, OPT, NULL)

#define REC_MEMBERS_op_shape(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, id, INT, REQ, NULL) \
	M(T, op, STR, REQ, NULL) \
	M(T, dims, JSON, OPT, NULL) \
	M(T, types, JSON, OPT, NULL) \
	M(T, concrete, JSON, OPT, NULL)

#define REC_MEMBERS_frame_name(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, id, INT, REQ, NULL) \
	M(T, name, STR, REQ, NULL)

/*
 * A kernel name that trace-extract --name-ids writes once per trace, before
 * the first kernel record that names it by id (issue 30).
 */
#define REC_MEMBERS_kernel_name(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, id, INT, REQ, NULL) \
	M(T, name, STR, REQ, NULL)

/*
 * name, or name_ref: the id of a kernel_name record of the same trace before it
 * (the reader fills name in then: rec.h); one of the two is required.
 */
#define REC_MEMBERS_kernel(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, name, STR, OPT, NULL) \
	M(T, name_ref, INT, OPT, NULL) \
	M(T, cat, STR, OPT, "") \
	M(T, pid, STR, OPT, "None") \
	M(T, tid, STR, OPT, "None") \
	M(T, ts, NUM, REQ, NULL) \
	M(T, dur, NUM, REQ, NULL) \
	M(T, stream, STR, OPT, NULL) \
	M(T, external_id, INT, OPT, NULL) \
	M(T, correlation, INT, OPT, NULL) \
	M(T, bytes, INT, OPT, NULL) \
	M(T, overlap, BOOL, OPT, NULL) \
	M(T, py_window, JSON, OPT, NULL) \
	M(T, py_window_band, JSON, OPT, NULL) \
	M(T, shape, INT, OPT, NULL) \
	M(T, shape_frac, NUM, OPT, "1") \
	M(T, stage, STR, OPT, NULL) \
	M(T, sel, BOOL, OPT, NULL)

#define REC_MEMBERS_cpu_op(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, name, STR, REQ, NULL) \
	M(T, pid, STR, OPT, "None") \
	M(T, tid, STR, OPT, "None") \
	M(T, ts, NUM, REQ, NULL) \
	M(T, dur, NUM, REQ, NULL) \
	M(T, external_id, INT, OPT, NULL) \
	M(T, correlation, INT, OPT, NULL) \
	M(T, py_loc, INT, OPT, NULL) \
	M(T, py_stack, JSON, OPT, NULL) \
	M(T, py_scopes, JSON, OPT, NULL)

#define REC_MEMBERS_launch(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, name, STR, REQ, NULL) \
	M(T, pid, STR, OPT, "None") \
	M(T, tid, STR, OPT, "None") \
	M(T, ts, NUM, REQ, NULL) \
	M(T, dur, NUM, REQ, NULL) \
	M(T, correlation, INT, REQ, NULL) \
	M(T, external_id, INT, OPT, NULL) \
	M(T, kind, STR, OPT, "kernel") \
	M(T, py_loc, INT, OPT, NULL) \
	M(T, py_stack, JSON, OPT, NULL)

#define REC_MEMBERS_sync(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, name, STR, REQ, NULL) \
	M(T, pid, STR, OPT, "None") \
	M(T, tid, STR, OPT, "None") \
	M(T, ts, NUM, REQ, NULL) \
	M(T, dur, NUM, REQ, NULL) \
	M(T, correlation, INT, OPT, NULL)

#define REC_MEMBERS_frame(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, name, STR, REQ, NULL) \
	M(T, pid, STR, OPT, "None") \
	M(T, tid, STR, OPT, "None") \
	M(T, ts, NUM, REQ, NULL) \
	M(T, dur, NUM, REQ, NULL) \
	M(T, python_id, INT, OPT, NULL) \
	M(T, parent_id, INT, OPT, NULL)

#define REC_MEMBERS_annotation(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, name, STR, REQ, NULL) \
	M(T, cat, STR, OPT, "") \
	M(T, pid, STR, OPT, "None") \
	M(T, tid, STR, OPT, "None") \
	M(T, ts, NUM, REQ, NULL) \
	M(T, dur, NUM, REQ, NULL) \
	M(T, external_id, INT, OPT, NULL) \
	M(T, stage, STR, OPT, NULL)

#define REC_MEMBERS_thread_name(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, pid, STR, OPT, "None") \
	M(T, tid, STR, OPT, "None") \
	M(T, name, STR, REQ, NULL)

#define REC_MEMBERS_corr(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, correlation, INT, REQ, NULL) \
	M(T, external_id, INT, REQ, NULL)

#define REC_MEMBERS_stats(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, events, INT, OPT, "0") \
	M(T, ph_x, INT, OPT, "0") \
	M(T, ph_m, INT, OPT, "0") \
	M(T, ph_other, INT, OPT, "0") \
	M(T, kernels, INT, OPT, "0") \
	M(T, cpu_ops, INT, OPT, "0") \
	M(T, launches, INT, OPT, "0") \
	M(T, frames, INT, OPT, "0") \
	M(T, annotations, INT, OPT, "0") \
	M(T, not_gpu_work, INT, OPT, "0") \
	M(T, by_cat, JSON, OPT, NULL) \
	M(T, skipped, JSON, OPT, NULL) \
	M(T, warnings, JSON, OPT, NULL) \
	M(T, shape, STR, OPT, NULL)

#define REC_MEMBERS_gpu_pids(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, selected, STR, REQ, NULL) \
	M(T, time_us, JSON, REQ, NULL) \
	M(T, launch_latency_p50_us, NUM, OPT, NULL) \
	M(T, idle_starts, INT, OPT, NULL) \
	M(T, idle_start_latency_us, NUM, OPT, NULL) \
	M(T, launch_start_min_us, NUM, OPT, NULL) \
	M(T, sync_call, STR, OPT, NULL) \
	M(T, sync_return_us, NUM, OPT, NULL) \
	M(T, sync_wait_us, NUM, OPT, NULL) \
	M(T, clock_offset_us, NUM, OPT, NULL)

/*
 * The stages of a trace's kernels, when trace-stage --late-stages passed
 * the kernel records on as they came (issue 30): runs over the trace's
 * kernel records in stream order, from the first-th (0 = the trace's
 * first kernel record), each [count, stage or null, sel 0 or 1].
 */
#define REC_MEMBERS_kernel_stages(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, first, INT, REQ, NULL) \
	M(T, runs, JSON, REQ, NULL)

#define REC_MEMBERS_site(M, T) \
	M(T, scope, STR, REQ, NULL) \
	M(T, t, INT, OPT, NULL) \
	M(T, stage, STR, OPT, NULL) \
	M(T, kernel, STR, REQ, NULL) \
	M(T, category, STR, OPT, NULL) \
	M(T, best_location, STR, OPT, NULL) \
	M(T, sites, JSON, REQ, NULL)

#define REC_MEMBERS_kernel_row(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, stage, STR, REQ, NULL) \
	M(T, kernel, STR, REQ, NULL) \
	M(T, category, STR, OPT, "other") \
	M(T, total_us, NUM, REQ, NULL) \
	M(T, launches, INT, OPT, "0") \
	M(T, share_pct, NUM, OPT, "0") \
	M(T, stage_total_us, NUM, REQ, NULL) \
	M(T, location, STR, OPT, "unresolved") \
	M(T, cpu_op, STR, OPT, "-") \
	M(T, shown, BOOL, OPT, "false") \
	M(T, entry, JSON, OPT, NULL) \
	M(T, mean_us, NUM, OPT, NULL) \
	M(T, min_us, NUM, OPT, NULL) \
	M(T, max_us, NUM, OPT, NULL) \
	M(T, p50_us, NUM, OPT, NULL) \
	M(T, p90_us, NUM, OPT, NULL) \
	M(T, id, STR, OPT, NULL)

#define REC_MEMBERS_kernel_eff(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, stage, STR, REQ, NULL) \
	M(T, kernel, STR, REQ, NULL) \
	M(T, shape, STR, OPT, NULL) \
	M(T, op, STR, OPT, NULL) \
	M(T, dtype, STR, OPT, NULL) \
	M(T, source, STR, OPT, "trace") \
	M(T, estimate, STR, OPT, "exact") \
	M(T, launches, INT, REQ, NULL) \
	M(T, time_us, NUM, REQ, NULL) \
	M(T, flops, NUM, REQ, NULL) \
	M(T, bytes, NUM, REQ, NULL) \
	M(T, tflops, NUM, OPT, NULL) \
	M(T, gbps, NUM, OPT, NULL) \
	M(T, intensity, NUM, OPT, NULL) \
	M(T, peak_tflops, NUM, OPT, NULL) \
	M(T, bound, STR, OPT, NULL) \
	M(T, roof_us, NUM, OPT, NULL) \
	M(T, pct_of_roof, NUM, OPT, NULL)

#define REC_MEMBERS_roofline(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, stage, STR, REQ, NULL) \
	M(T, gpu, STR, OPT, NULL) \
	M(T, gpu_reason, STR, OPT, NULL) \
	M(T, gpu_source, STR, OPT, NULL) \
	M(T, mem_gbps, NUM, OPT, NULL) \
	M(T, peaks, JSON, OPT, NULL) \
	M(T, stage_us, NUM, REQ, NULL) \
	M(T, modeled_us, NUM, REQ, NULL) \
	M(T, modeled_pct, NUM, REQ, NULL) \
	M(T, actual_us, NUM, OPT, NULL) \
	M(T, roof_us, NUM, OPT, NULL) \
	M(T, roof_pct, NUM, OPT, NULL) \
	M(T, headroom_us, NUM, OPT, NULL) \
	M(T, steps, INT, OPT, NULL) \
	M(T, headroom_per_step_us, NUM, OPT, NULL) \
	M(T, estimated, BOOL, OPT, "false") \
	M(T, unmodeled, JSON, OPT, NULL)

#define REC_MEMBERS_overlap_row(M, T) \
	M(T, stage, STR, REQ, NULL) \
	M(T, priority, STR, OPT, "") \
	M(T, verdict, STR, OPT, "") \
	M(T, kernel, STR, REQ, NULL) \
	M(T, python_scope, STR, OPT, "unmapped") \
	M(T, total_us, NUM, OPT, "0") \
	M(T, share_pct, NUM, OPT, "0") \
	M(T, exclusive_ratio, NUM, OPT, "0") \
	M(T, hidden_ratio, NUM, OPT, "0") \
	M(T, dep_risk, STR, OPT, "") \
	M(T, dependency_signal, STR, OPT, "") \
	M(T, recommendation, STR, OPT, "") \
	M(T, id, STR, OPT, NULL)

#define REC_MEMBERS_overlap_exposed(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, stage, STR, REQ, NULL) \
	M(T, row, STR, REQ, NULL) \
	M(T, exposed_us, NUM, REQ, NULL) \
	M(T, intervals, INT, REQ, NULL) \
	M(T, spans, JSON, REQ, NULL)

#define REC_MEMBERS_fuse_row(M, T) \
	M(T, t, INT, OPT, "0") \
	M(T, stage, STR, OPT, "all") \
	M(T, pattern, STR, REQ, NULL) \
	M(T, confidence, STR, OPT, "") \
	M(T, related_us, NUM, OPT, "0") \
	M(T, share_pct, NUM, OPT, "0") \
	M(T, evidence, STR, OPT, "-") \
	M(T, current_locations, STR, OPT, "-") \
	M(T, candidate_path, STR, OPT, "") \
	M(T, rationale, STR, OPT, "") \
	M(T, status, STR, OPT, "") \
	M(T, priority, INT, OPT, "0") \
	M(T, origin, STR, OPT, NULL) \
	M(T, evidence_kernels, JSON, OPT, NULL) \
	M(T, id, STR, OPT, NULL)

#define REC_MEMBERS_fuse_explain(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, stage, STR, REQ, NULL) \
	M(T, pattern, STR, REQ, NULL) \
	M(T, verdict, STR, REQ, NULL) \
	M(T, detail, STR, REQ, NULL)

#define REC_MEMBERS_note(M, T) \
	M(T, t, INT, OPT, NULL) \
	M(T, stage, STR, OPT, NULL) \
	M(T, id, STR, REQ, NULL) \
	M(T, text, STR, REQ, NULL)

#define REC_MEMBERS_run(M, T) \
	M(T, id, INT, REQ, NULL) \
	M(T, label, STR, REQ, NULL)

#define REC_MEMBERS_gpu_time(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, stage, STR, REQ, NULL) \
	M(T, kernels, INT, REQ, NULL) \
	M(T, copies, INT, OPT, "0") \
	M(T, kernel_us, NUM, REQ, NULL) \
	M(T, busy_us, NUM, REQ, NULL) \
	M(T, span_us, NUM, REQ, NULL) \
	M(T, idle_us, NUM, REQ, NULL) \
	M(T, idle_launch_us, NUM, OPT, NULL) \
	M(T, idle_sync_us, NUM, OPT, NULL) \
	M(T, sync_gap_us, NUM, OPT, NULL) \
	M(T, sync_gap_ts, NUM, OPT, NULL) \
	M(T, sync_gap_call, STR, OPT, NULL) \
	M(T, other_stages_us, NUM, OPT, NULL) \
	M(T, compute_us, NUM, REQ, NULL) \
	M(T, comm_us, NUM, REQ, NULL) \
	M(T, memcpy_us, NUM, REQ, NULL) \
	M(T, comm_total_us, NUM, OPT, NULL) \
	M(T, comm_overlap_pct, NUM, OPT, NULL) \
	M(T, graph_us, NUM, OPT, NULL) \
	M(T, graph_pct, NUM, OPT, NULL) \
	M(T, eager_kernels, INT, OPT, NULL) \
	M(T, steps, INT, OPT, NULL) \
	M(T, complete_steps, INT, OPT, NULL) \
	M(T, step_p50_us, NUM, OPT, NULL) \
	M(T, step_p90_us, NUM, OPT, NULL) \
	M(T, step_max_us, NUM, OPT, NULL) \
	M(T, step_last_us, NUM, OPT, NULL) \
	M(T, step_busy_p50_us, NUM, OPT, NULL) \
	M(T, steps_host_ahead, BOOL, OPT, "false") \
	M(T, tokens_per_s, NUM, OPT, NULL) \
	M(T, tokens_from_last, BOOL, OPT, "false") \
	M(T, id, STR, OPT, NULL)

#define REC_MEMBERS_idle_gap(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, stage, STR, REQ, NULL) \
	M(T, ts, NUM, REQ, NULL) \
	M(T, dur, NUM, REQ, NULL) \
	M(T, host_us, NUM, OPT, NULL) \
	M(T, sync_us, NUM, OPT, NULL) \
	M(T, kernel, STR, OPT, NULL) \
	M(T, launch, STR, OPT, NULL) \
	M(T, launch_ts, NUM, OPT, NULL) \
	M(T, launch_dur, NUM, OPT, NULL) \
	M(T, id, STR, OPT, NULL)

#define REC_MEMBERS_step(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, stage, STR, REQ, NULL) \
	M(T, index, INT, REQ, NULL) \
	M(T, name, STR, REQ, NULL) \
	M(T, ts, NUM, REQ, NULL) \
	M(T, cpu_us, NUM, REQ, NULL) \
	M(T, period_us, NUM, OPT, NULL) \
	M(T, last, BOOL, OPT, "false") \
	M(T, batch, INT, OPT, NULL) \
	M(T, tokens, INT, OPT, NULL) \
	M(T, kernels, INT, OPT, NULL) \
	M(T, gpu_busy_us, NUM, OPT, NULL) \
	M(T, gpu_span_us, NUM, OPT, NULL) \
	M(T, comm_total_us, NUM, OPT, NULL) \
	M(T, comm_overlap_pct, NUM, OPT, NULL) \
	M(T, gpu_ts, NUM, OPT, NULL) \
	M(T, id, STR, OPT, NULL)

#define REC_MEMBERS_graph_escape(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, stage, STR, REQ, NULL) \
	M(T, kernel, STR, REQ, NULL) \
	M(T, launches, INT, REQ, NULL) \
	M(T, total_us, NUM, REQ, NULL) \
	M(T, share_pct, NUM, REQ, NULL) \
	M(T, location, STR, OPT, NULL) \
	M(T, id, STR, OPT, NULL)

#define REC_MEMBERS_launch_delay(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, stage, STR, REQ, NULL) \
	M(T, launches, INT, REQ, NULL) \
	M(T, clock_offset_us, NUM, OPT, NULL) \
	M(T, p50_us, NUM, OPT, NULL) \
	M(T, p90_us, NUM, OPT, NULL) \
	M(T, max_us, NUM, OPT, NULL) \
	M(T, threshold_us, NUM, OPT, NULL) \
	M(T, over, INT, OPT, NULL) \
	M(T, verdict, STR, OPT, NULL)

#define REC_MEMBERS_kernel_delay(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, stage, STR, REQ, NULL) \
	M(T, kernel, STR, REQ, NULL) \
	M(T, launches, INT, REQ, NULL) \
	M(T, p50_us, NUM, REQ, NULL) \
	M(T, max_us, NUM, REQ, NULL) \
	M(T, over, INT, OPT, "0")

#define REC_MEMBERS_stream_time(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, stage, STR, REQ, NULL) \
	M(T, stream, STR, REQ, NULL) \
	M(T, kind, STR, OPT, "compute") \
	M(T, kernels, INT, REQ, NULL) \
	M(T, kernel_us, NUM, REQ, NULL) \
	M(T, busy_us, NUM, REQ, NULL) \
	M(T, span_us, NUM, REQ, NULL) \
	M(T, idle_us, NUM, REQ, NULL)

#define REC_MEMBERS_annotation_time(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, stage, STR, REQ, NULL) \
	M(T, name, STR, REQ, NULL) \
	M(T, count, INT, REQ, NULL) \
	M(T, busy_us, NUM, REQ, NULL) \
	M(T, share_pct, NUM, REQ, NULL) \
	M(T, range_us, NUM, REQ, NULL)

#define REC_MEMBERS_health(M, T) \
	M(T, t, INT, REQ, NULL) \
	M(T, role, STR, OPT, "single") \
	M(T, path, STR, OPT, "") \
	M(T, verdict, STR, REQ, NULL) \
	M(T, checks, JSON, REQ, NULL)

#define REC_MEMBERS_rank_align(M, T) \
	M(T, stage, STR, REQ, NULL) \
	M(T, method, STR, REQ, NULL) \
	M(T, ref_rank, INT, OPT, NULL) \
	M(T, kind, STR, OPT, NULL) \
	M(T, name, STR, OPT, NULL) \
	M(T, ordinal, INT, OPT, NULL) \
	M(T, end_spread_us, NUM, OPT, NULL)

#define REC_MEMBERS_rank_gap(M, T) \
	M(T, stage, STR, REQ, NULL) \
	M(T, reason, STR, REQ, NULL) \
	M(T, kind, STR, OPT, NULL) \
	M(T, ordinal, INT, OPT, NULL) \
	M(T, ranks, JSON, REQ, NULL)

#define REC_MEMBERS_rank_row(M, T) \
	M(T, stage, STR, REQ, NULL) \
	M(T, rank, INT, REQ, NULL) \
	M(T, busy_us, NUM, REQ, NULL) \
	M(T, kernel_us, NUM, REQ, NULL) \
	M(T, comm_us, NUM, REQ, NULL) \
	M(T, wait_us, NUM, REQ, NULL) \
	M(T, last_arrivals, INT, REQ, NULL) \
	M(T, collectives, INT, OPT, "0") \
	M(T, matched, INT, OPT, "0") \
	M(T, offset_us, NUM, OPT, "0") \
	M(T, straggler, BOOL, OPT, "false") \
	M(T, late_collectives, INT, OPT, NULL) \
	M(T, late_us, NUM, OPT, NULL) \
	M(T, late_launch_us, NUM, OPT, NULL) \
	M(T, late_idle_us, NUM, OPT, NULL) \
	M(T, late_busy_us, NUM, OPT, NULL) \
	M(T, kernel_excess_us, NUM, OPT, NULL) \
	M(T, late_in, STR, OPT, NULL) \
	M(T, time_base_us, INT, OPT, NULL) \
	M(T, id, STR, OPT, NULL)

#define REC_MEMBERS_collective_row(M, T) \
	M(T, stage, STR, REQ, NULL) \
	M(T, kind, STR, REQ, NULL) \
	M(T, name, STR, REQ, NULL) \
	M(T, ordinal, INT, REQ, NULL) \
	M(T, ranks, JSON, REQ, NULL) \
	M(T, skew_us, NUM, REQ, NULL) \
	M(T, wait_us, NUM, REQ, NULL) \
	M(T, last_rank, INT, OPT, NULL) \
	M(T, id, STR, OPT, NULL)

#define REC_MEMBERS_rank_kernel_delta(M, T) \
	M(T, stage, STR, REQ, NULL) \
	M(T, rank, INT, REQ, NULL) \
	M(T, kernel, STR, REQ, NULL) \
	M(T, rank_us, NUM, REQ, NULL) \
	M(T, median_us, NUM, REQ, NULL) \
	M(T, delta_us, NUM, REQ, NULL) \
	M(T, launches, INT, OPT, "0") \
	M(T, id, STR, OPT, NULL)

#define REC_MEMBERS_probe(M, T) \
	M(T, stage, STR, OPT, NULL) \
	M(T, phase, STR, REQ, NULL) \
	M(T, index, INT, REQ, NULL) \
	M(T, endpoint, STR, REQ, NULL) \
	M(T, ok, BOOL, REQ, NULL) \
	M(T, http_status, INT, OPT, "0") \
	M(T, latency_us, NUM, REQ, NULL) \
	M(T, completion_tokens, INT, OPT, NULL) \
	M(T, empty, BOOL, OPT, "false")

#define REC_MEMBERS_diff_input(M, T) \
	M(T, side, STR, REQ, NULL) \
	M(T, path, STR, OPT, "") \
	M(T, mode, STR, OPT, "single") \
	M(T, framework, STR, OPT, "none") \
	M(T, model, STR, OPT, NULL) \
	M(T, model_family, STR, OPT, NULL) \
	M(T, gpu, STR, OPT, NULL) \
	M(T, world_size, INT, OPT, NULL) \
	M(T, health, STR, OPT, NULL) \
	M(T, stages, JSON, REQ, NULL) \
	M(T, steps, JSON, OPT, NULL)

#define REC_MEMBERS_diff_metric(M, T) \
	M(T, stage, STR, REQ, NULL) \
	M(T, metric, STR, REQ, NULL) \
	M(T, base, NUM, OPT, NULL) \
	M(T, cand, NUM, OPT, NULL) \
	M(T, delta, NUM, OPT, NULL) \
	M(T, delta_pct, NUM, OPT, NULL) \
	M(T, per_step, BOOL, OPT, "false") \
	M(T, base_host_ahead, BOOL, OPT, "false") \
	M(T, cand_host_ahead, BOOL, OPT, "false")

#define REC_MEMBERS_diff_row(M, T) \
	M(T, stage, STR, REQ, NULL) \
	M(T, kernel, STR, REQ, NULL) \
	M(T, base_kernel, STR, OPT, NULL) \
	M(T, category, STR, OPT, "other") \
	M(T, status, STR, REQ, NULL) \
	M(T, match, STR, OPT, NULL) \
	M(T, base_us, NUM, REQ, NULL) \
	M(T, cand_us, NUM, REQ, NULL) \
	M(T, delta_us, NUM, REQ, NULL) \
	M(T, delta_pct, NUM, OPT, NULL) \
	M(T, base_launches, INT, REQ, NULL) \
	M(T, cand_launches, INT, REQ, NULL) \
	M(T, base_share_pct, NUM, OPT, "0") \
	M(T, cand_share_pct, NUM, OPT, "0") \
	M(T, base_names, INT, OPT, NULL) \
	M(T, cand_names, INT, OPT, NULL) \
	M(T, per_step, BOOL, OPT, "false") \
	M(T, shown, BOOL, OPT, "false") \
	M(T, location, STR, OPT, NULL) \
	M(T, base_location, STR, OPT, NULL)

#define REC_MEMBERS_diff_fuse(M, T) \
	M(T, stage, STR, REQ, NULL) \
	M(T, pattern, STR, REQ, NULL) \
	M(T, transition, STR, REQ, NULL) \
	M(T, base_status, STR, OPT, NULL) \
	M(T, cand_status, STR, OPT, NULL) \
	M(T, base_us, NUM, OPT, NULL) \
	M(T, cand_us, NUM, OPT, NULL) \
	M(T, per_step, BOOL, OPT, "false")

#define REC_MEMBERS_diff_overlap(M, T) \
	M(T, stage, STR, REQ, NULL) \
	M(T, kernel, STR, REQ, NULL) \
	M(T, base_us, NUM, OPT, NULL) \
	M(T, cand_us, NUM, OPT, NULL) \
	M(T, delta_us, NUM, OPT, NULL) \
	M(T, base_exclusive_pct, NUM, OPT, NULL) \
	M(T, cand_exclusive_pct, NUM, OPT, NULL) \
	M(T, base_verdict, STR, OPT, NULL) \
	M(T, cand_verdict, STR, OPT, NULL) \
	M(T, per_step, BOOL, OPT, "false")

#define REC_MEMBERS_verdict(M, T) \
	M(T, scope, STR, REQ, NULL) \
	M(T, verdict, STR, REQ, NULL) \
	M(T, metric, STR, OPT, NULL) \
	M(T, base, NUM, OPT, NULL) \
	M(T, cand, NUM, OPT, NULL) \
	M(T, delta_pct, NUM, OPT, NULL) \
	M(T, threshold_pct, NUM, REQ, NULL) \
	M(T, per_step, BOOL, OPT, "false") \
	M(T, base_steps, INT, OPT, NULL) \
	M(T, cand_steps, INT, OPT, NULL) \
	M(T, stage, STR, OPT, NULL) \
	M(T, kernels, JSON, OPT, NULL) \
	M(T, reason, STR, OPT, NULL) \
	M(T, shared_pct, NUM, OPT, NULL) \
	M(T, comm_delta_us, NUM, OPT, NULL) \
	M(T, base_wait_us, NUM, OPT, NULL) \
	M(T, cand_wait_us, NUM, OPT, NULL)

#define REC_TYPES(T, X) \
	T(input, REC_MEMBERS_input, X) \
	T(trace, REC_MEMBERS_trace, X) \
	T(device, REC_MEMBERS_device, X) \
	T(op_shape, REC_MEMBERS_op_shape, X) \
	T(frame_name, REC_MEMBERS_frame_name, X) \
	T(kernel_name, REC_MEMBERS_kernel_name, X) \
	T(kernel, REC_MEMBERS_kernel, X) \
	T(cpu_op, REC_MEMBERS_cpu_op, X) \
	T(launch, REC_MEMBERS_launch, X) \
	T(sync, REC_MEMBERS_sync, X) \
	T(frame, REC_MEMBERS_frame, X) \
	T(annotation, REC_MEMBERS_annotation, X) \
	T(thread_name, REC_MEMBERS_thread_name, X) \
	T(corr, REC_MEMBERS_corr, X) \
	T(stats, REC_MEMBERS_stats, X) \
	T(gpu_pids, REC_MEMBERS_gpu_pids, X) \
	T(kernel_stages, REC_MEMBERS_kernel_stages, X) \
	T(site, REC_MEMBERS_site, X) \
	T(kernel_row, REC_MEMBERS_kernel_row, X) \
	T(kernel_eff, REC_MEMBERS_kernel_eff, X) \
	T(roofline, REC_MEMBERS_roofline, X) \
	T(overlap_row, REC_MEMBERS_overlap_row, X) \
	T(overlap_exposed, REC_MEMBERS_overlap_exposed, X) \
	T(fuse_row, REC_MEMBERS_fuse_row, X) \
	T(fuse_explain, REC_MEMBERS_fuse_explain, X) \
	T(note, REC_MEMBERS_note, X) \
	T(run, REC_MEMBERS_run, X) \
	T(gpu_time, REC_MEMBERS_gpu_time, X) \
	T(idle_gap, REC_MEMBERS_idle_gap, X) \
	T(step, REC_MEMBERS_step, X) \
	T(graph_escape, REC_MEMBERS_graph_escape, X) \
	T(launch_delay, REC_MEMBERS_launch_delay, X) \
	T(kernel_delay, REC_MEMBERS_kernel_delay, X) \
	T(stream_time, REC_MEMBERS_stream_time, X) \
	T(annotation_time, REC_MEMBERS_annotation_time, X) \
	T(health, REC_MEMBERS_health, X) \
	T(rank_align, REC_MEMBERS_rank_align, X) \
	T(rank_gap, REC_MEMBERS_rank_gap, X) \
	T(rank_row, REC_MEMBERS_rank_row, X) \
	T(collective_row, REC_MEMBERS_collective_row, X) \
	T(rank_kernel_delta, REC_MEMBERS_rank_kernel_delta, X) \
	T(probe, REC_MEMBERS_probe, X) \
	T(diff_input, REC_MEMBERS_diff_input, X) \
	T(diff_metric, REC_MEMBERS_diff_metric, X) \
	T(diff_row, REC_MEMBERS_diff_row, X) \
	T(diff_fuse, REC_MEMBERS_diff_fuse, X) \
	T(diff_overlap, REC_MEMBERS_diff_overlap, X) \
	T(verdict, REC_MEMBERS_verdict, X)

#endif
