#!/usr/bin/env python3
"""breakdowns-check.py TRACE RECORDS

Recompute the breakdowns of issue 32 from a raw Kineto trace (Chrome-trace
JSON, gzip or not) and compare them with step-stats' records for it (the
output of trace-extract TRACE | trace-stage | step-stats).  Used by
tests/corpus-breakdowns.sh; Python's standard library only.

The definitions are step-stats(1)'s, computed here from the trace's own
events with exact decimal arithmetic:

  work items   ph X, cat kernel/gpu_memcpy/gpu_memset (Kernel/Memcpy/Memset),
               dur > 0, on the analyzed GPU process (gpu_pids.selected: which
               process is analyzed is trace-stage's rule, tested elsewhere);
               an item's stage is the stage of the selected kernel record in
               the same position of the file (its name must agree).
  call         the first cuda_runtime/cuda_driver/Runtime event of the
               item's correlation.
  collectives  kernels whose name has a collective's word (nccl, rccl,
               all_reduce, ...); memory: copies, sets and copy/fill kernels;
               compute: the rest.  comm_total = |union of collectives|,
               overlap = |collectives' union intersected with compute's|.
  delay        per call, the start of its first item minus the call's end;
               per kernel name for names of 0.5 % of the stage's kernel time.
  streams      args.stream, else tid.
  annotations  gpu_user_annotation events of the analyzed process; per name,
               the union of the stage's items on the range's stream (tid)
               clipped to the range.
  steps        CPU annotations of the first marker family present (SGLang
               step[...], vLLM execute_..., ProfilerStep#N); an item is the
               step's whose marker, on its call's process, holds the call's
               start (the latest-starting one).

Prints one line per figure group: "ok ..." or "DIFF ...", and exits 1 when
any figure differs.
"""
import collections
import decimal
import gzip
import json
import re
import sys

decimal.getcontext().prec = 50
D = decimal.Decimal
WORK = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
MEM_CATS = {"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"}
CALL_CATS = {"cuda_runtime", "cuda_driver", "Runtime"}
COMM = re.compile(r"nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|"
                  r"cross_device_reduce|custom_ar|quick_?reduce|multimem|deep_?ep|mscclpp|"
                  r"send_?recv", re.I)
# copy and fill kernels move memory (step-stats' memory bucket, the kernel
# table's copy category): PyTorch's copy_/fill_ functors and torch.cat, or
# copy, fill, dma or prefetch as a word of a kernel that is not an index,
# gather, masked or other math kernel first
MEM_STRONG = re.compile(r"copy_kernel_cuda|fillfunctor|fill_kernel_cuda|catarraybatchedcopy", re.I)
MEM_WORD = re.compile(r"(?:^|[^a-z0-9])(copy|fill|dma|prefetch)(?:$|[^a-z0-9])", re.I)
NOT_MEM = re.compile(r"gemm|attn|attention|norm|reduce|gather|scatter|index|masked|elementwise|"
                     r"moe|topk|sort|embedding|softmax|rotary|rope|quant|act_and_mul|silu|gelu|"
                     r"triton_", re.I)
OVER_US = D(100)
TOL_US = D("0.001")


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8", "replace")
    for tail in ("", "]}", "]"):
        try:
            doc = json.loads(text.rstrip().rstrip(",") + tail if tail else text,
                             parse_float=D, parse_int=D)
            break
        except json.JSONDecodeError:
            doc = None
    if doc is None:
        sys.exit("cannot parse " + path)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def num(v):
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (D, int, float)):
        return D(v) if D(v).is_finite() else None
    if isinstance(v, str):
        try:
            x = D(v)
        except decimal.InvalidOperation:
            return None
        return x if x.is_finite() else None
    return None


def text(v):
    if isinstance(v, D):
        return str(int(v)) if v == v.to_integral_value() else str(v)
    return str(v)


def union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def measure(merged):
    return sum((e - s for s, e in merged), D(0))


def intersect(a, b):
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append([s, e])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def rank(sorted_values, p):
    n = len(sorted_values)
    k = max(1, min(n, -(-p * n // 100)))
    return sorted_values[k - 1]


def bucket(item):
    if item["cat"] in MEM_CATS:
        return "mem"
    if COMM.search(item["name"]):
        return "comm"
    if MEM_STRONG.search(item["name"]):
        return "mem"
    if MEM_WORD.search(item["name"]) and not NOT_MEM.search(item["name"]):
        return "mem"
    return "compute"


def canon(name):
    """The kernel table's key for the names it leaves alone (kernel-table.md 2.1)."""
    s = " ".join(name.split())
    if s.startswith("void ") and s.endswith(")"):
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            if s[i] == ")":
                depth += 1
            elif s[i] == "(":
                depth -= 1
                if depth == 0:
                    return s[:i]
    return s


def marker_family(name):
    if re.fullmatch(r"step\[[^\]]*\]", name):
        return 0
    if re.fullmatch(r"execute_(\d+_)?context_\d+(\([^)]*\))?_generation_\d+(\([^)]*\))?", name):
        return 1
    if re.fullmatch(r"ProfilerStep#\d+", name):
        return 2
    return None


class Checker:
    def __init__(self):
        self.bad = []
        self.n = 0

    def close(self, what, mine, theirs, pct=False):
        self.n += 1
        if mine is None or theirs is None:
            if mine is not theirs:
                self.bad.append("%s: step-stats %s, recomputed %s" % (what, theirs, mine))
            return
        tol = D("0.0001") if pct else TOL_US
        if abs(D(mine) - D(str(theirs))) > tol + abs(D(mine)) * D("1e-9"):
            self.bad.append("%s: step-stats %s, recomputed %s" % (what, theirs, mine))

    def same(self, what, mine, theirs):
        self.n += 1
        if mine != theirs:
            self.bad.append("%s: step-stats %s, recomputed %s" % (what, theirs, mine))


def main():
    events = [e for e in load(sys.argv[1]) if isinstance(e, dict)]
    recs = [json.loads(l, parse_float=D) for l in open(sys.argv[2]) if l.startswith("{")]
    gp = [r for r in recs if r["type"] == "gpu_pids"]
    if not gp:
        print("ok: no analyzed GPU process")
        return 0
    sel = gp[0]["selected"]
    offset = "clock_offset_us" in gp[0]
    mine_k = [r for r in recs if r["type"] == "kernel" and r.get("sel")]
    c = Checker()

    # the work items in file order, their stages from the records in the same order
    items = []
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in WORK or text(e.get("pid")) != sel:
            continue
        ts, dur = num(e.get("ts")), num(e.get("dur"))
        if ts is None or dur is None or not dur > 0:
            continue
        a = e.get("args") if isinstance(e.get("args"), dict) else {}
        items.append({"name": e.get("name", ""), "cat": e["cat"], "ts": ts, "end": ts + dur,
                      "dur": dur, "stream": text(a["stream"]) if "stream" in a else text(e.get("tid")),
                      "corr": num(a.get("correlation")), "ord": len(items)})
    c.same("work items", len(items), len(mine_k))
    if len(items) != len(mine_k):
        print("DIFF " + "; ".join(c.bad))
        return 1
    for it, k in zip(items, mine_k):
        if it["name"] != k["name"]:
            print("DIFF item %d: %r vs the record's %r" % (it["ord"], it["name"], k["name"]))
            return 1
        it["stage"] = k.get("stage", "all")
        it["bucket"] = bucket(it)

    calls = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in CALL_CATS and isinstance(e.get("args"), dict):
            corr = num(e["args"].get("correlation"))
            ts, dur = num(e.get("ts")), num(e.get("dur"))
            if corr is not None and corr not in calls and ts is not None and dur is not None:
                calls[corr] = (ts, ts + max(dur, D(0)), text(e.get("pid")))
    # each call's first item (by start, then file order)
    first = {}
    for it in sorted(items, key=lambda x: (x["ts"], x["ord"])):
        if it["corr"] in calls and it["corr"] not in first:
            first[it["corr"]] = it

    stages = collections.defaultdict(list)
    for it in items:
        stages[it["stage"]].append(it)
    by_type = collections.defaultdict(list)
    for r in recs:
        by_type[r["type"]].append(r)

    for st, its in stages.items():
        busy = measure(union([(i["ts"], i["end"]) for i in its]))
        g = [r for r in by_type["gpu_time"] if r["stage"] == st]
        c.same(st + " gpu_time records", len(g), 1)
        if len(g) != 1:
            continue
        g = g[0]
        comm = union([(i["ts"], i["end"]) for i in its if i["bucket"] == "comm"])
        comp = union([(i["ts"], i["end"]) for i in its if i["bucket"] == "compute"])
        total = measure(comm)
        c.close(st + " comm_total_us", total, g.get("comm_total_us"))
        c.close(st + " comm_overlap_pct",
                100 * measure(intersect(comm, comp)) / total if total > 0 else None,
                g.get("comm_overlap_pct"), pct=True)

        # launch delays, one per call whose first item is in this stage
        delays = [(i, i["ts"] - calls[i["corr"]][1]) for i in its
                  if i["corr"] in first and first[i["corr"]] is i]
        ld = [r for r in by_type["launch_delay"] if r["stage"] == st]
        if not delays:
            c.same(st + " launch_delay records", len(ld), 0)
        else:
            c.same(st + " launch_delay records", len(ld), 1)
        if delays and len(ld) == 1:
            ld = ld[0]
            v = sorted(d for _, d in delays)
            c.same(st + " launches", len(v), ld["launches"])
            if offset:
                c.same(st + " percentiles under a clock offset", None, ld.get("p50_us"))
            else:
                c.close(st + " delay p50", rank(v, 50), ld.get("p50_us"))
                c.close(st + " delay p90", rank(v, 90), ld.get("p90_us"))
                c.close(st + " delay max", v[-1], ld.get("max_us"))
                c.same(st + " delays over 100 us", sum(1 for d in v if d > OVER_US), ld.get("over"))
                per = collections.defaultdict(list)
                for i, d in delays:
                    per[canon(i["name"])].append(d)
                name_us = collections.defaultdict(D)
                for i in its:
                    name_us[canon(i["name"])] += i["dur"]
                stage_us = sum((i["dur"] for i in its), D(0))
                kd = {r["kernel"]: r for r in by_type["kernel_delay"] if r["stage"] == st}
                for name, ds in per.items():
                    if "0x" in name:
                        continue	# the key rewrites addresses: not recomputed here
                    r = kd.get(name)
                    if 100 * name_us[name] < D("0.5") * stage_us:
                        # under the kernel table's reach: no record
                        c.same(st + " kernel_delay of " + name, None, r)
                        continue
                    if r is None:
                        c.same(st + " kernel_delay of " + name, "present", "absent")
                        continue
                    ds.sort()
                    c.same(st + " " + name + " launches", len(ds), r["launches"])
                    c.close(st + " " + name + " p50", rank(ds, 50), r["p50_us"])
                    c.close(st + " " + name + " max", ds[-1], r["max_us"])

        # streams
        mine_s = {r["stream"]: r for r in by_type["stream_time"] if r["stage"] == st}
        per = collections.defaultdict(list)
        for i in its:
            per[i["stream"]].append(i)
        c.same(st + " streams", sorted(per), sorted(mine_s))
        for s, sit in per.items():
            r = mine_s.get(s)
            if r is None:
                continue
            b = measure(union([(i["ts"], i["end"]) for i in sit]))
            span = max(i["end"] for i in sit) - min(i["ts"] for i in sit)
            c.same(st + " stream " + s + " kernels", len(sit), r["kernels"])
            c.close(st + " stream " + s + " kernel_us", sum((i["dur"] for i in sit), D(0)), r["kernel_us"])
            c.close(st + " stream " + s + " busy_us", b, r["busy_us"])
            c.close(st + " stream " + s + " span_us", span, r["span_us"])
            c.close(st + " stream " + s + " idle_us", span - b, r["idle_us"])

        # GPU annotations
        bystream = collections.defaultdict(list)
        for i in its:
            bystream[i["stream"]].append((i["ts"], i["end"]))
        merged = {s: union(v) for s, v in bystream.items()}
        pieces = collections.defaultdict(list)
        ranges = collections.defaultdict(list)
        for e in events:
            if e.get("ph") != "X" or str(e.get("cat", "")).strip().lower() != "gpu_user_annotation" or \
                    text(e.get("pid")) != sel:
                continue
            ts, dur = num(e.get("ts")), num(e.get("dur"))
            if ts is None or dur is None or not dur > 0:
                continue
            inside = intersect(merged.get(text(e.get("tid")), []), [[ts, ts + dur]])
            if inside:
                pieces[e.get("name", "")] += inside
                ranges[e.get("name", "")].append((ts, ts + dur))
        mine_a = {r["name"]: r for r in by_type["annotation_time"] if r["stage"] == st}
        c.same(st + " annotation names", sorted(pieces), sorted(mine_a))
        for name in pieces:
            r = mine_a.get(name)
            if r is None:
                continue
            b = measure(union(pieces[name]))
            c.same(st + " annotation " + name + " count", len(ranges[name]), r["count"])
            c.close(st + " annotation " + name + " busy_us", b, r["busy_us"])
            c.close(st + " annotation " + name + " share_pct", 100 * b / busy if busy else D(0),
                    r["share_pct"], pct=True)
            c.close(st + " annotation " + name + " range_us", measure(union(ranges[name])), r["range_us"])

    # the steps' collectives
    markers = []
    for e in events:
        if e.get("ph") != "X" or str(e.get("cat", "")).strip().lower() != "user_annotation":
            continue
        f = marker_family(str(e.get("name", "")))
        ts, dur = num(e.get("ts")), num(e.get("dur"))
        if f is not None and ts is not None and dur is not None and dur > 0:
            markers.append((f, ts, dur, text(e.get("pid")), len(markers)))
    if markers and by_type["step"]:
        fam = min(m[0] for m in markers)
        steps = sorted((m for m in markers if m[0] == fam), key=lambda m: (m[1], m[4]))
        work = collections.defaultdict(list)
        for it in items:
            call = calls.get(it["corr"])
            if call is None:
                continue
            best = None
            for k, m in enumerate(steps):
                if m[3] == call[2] and m[1] <= call[0] <= m[1] + m[2]:
                    best = k	# sorted by start: the last one found starts latest
            if best is not None:
                work[best].append(it)
        mine_st = {r["index"]: r for r in by_type["step"]}
        c.same("steps", len(steps), len(mine_st))
        for k in range(len(steps)):
            r = mine_st.get(k)
            if r is None or "comm_total_us" not in r:
                continue
            w = work.get(k, [])
            comm = union([(i["ts"], i["end"]) for i in w if i["bucket"] == "comm"])
            comp = union([(i["ts"], i["end"]) for i in w if i["bucket"] == "compute"])
            total = measure(comm)
            c.close("step %d comm_total_us" % k, total, r["comm_total_us"])
            c.close("step %d comm_overlap_pct" % k,
                    100 * measure(intersect(comm, comp)) / total if total > 0 else None,
                    r.get("comm_overlap_pct"), pct=True)

    if c.bad:
        print("DIFF " + "; ".join(c.bad[:6]) + ("; ..." if len(c.bad) > 6 else ""))
        return 1
    summary = []
    for st in sorted(stages):
        g = [r for r in by_type["gpu_time"] if r["stage"] == st][0]
        ld = [r for r in by_type["launch_delay"] if r["stage"] == st]
        summary.append("%s: comm %.1f us %s%%, %d streams, %d annotations, delay p50 %s" % (
            st, float(g.get("comm_total_us", 0)),
            "%.1f" % float(g["comm_overlap_pct"]) if "comm_overlap_pct" in g else "-",
            len([r for r in by_type["stream_time"] if r["stage"] == st]),
            len([r for r in by_type["annotation_time"] if r["stage"] == st]),
            ("%.1f us" % float(ld[0]["p50_us"])) if ld and "p50_us" in ld[0] else "-"))
    print("ok %d figures agree; %s" % (c.n, "; ".join(summary)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
