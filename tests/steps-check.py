#!/usr/bin/env python3
"""steps-check.py TRACE RECORDS

Recompute from a raw Kineto trace (Chrome-trace JSON, gzip or not) the
idle figures and the step figures of step-stats(1) and compare them with
step-stats' records for it (the output of trace-extract TRACE | trace-stage
| step-stats).  Used by tests/corpus-step-stats.sh; Python's standard
library only, exact decimals.  Only traces whose records have one stage
are checked (every corpus trace): the stages are trace-stage's, tested
elsewhere.

  work items   ph X, cat kernel/gpu_memcpy/gpu_memset (Kernel/Memcpy/Memset),
               dur > 0, on gpu_pids.selected; copies: the non-kernel cats.
  call         the first cuda_runtime/cuda_driver/Runtime event of the
               item's correlation whose name has launch, memcpy or memset.
  gaps         times with no item running, between the first start and the
               last end; host-bound part: until the next item's call ended
               (its start when earlier), for the first item of a call only;
               sync part: the rest, intersected with the union of the host's
               blocking calls (names with "synchronize" on the processes
               that launched items, and the calls of synchronous copies:
               memcpy without "async").
  steps        user_annotation events of the first marker family present
               (and legacy traces' ProfilerStep#N of cat Operator: Kineto
               before PyTorch 1.10 wrote record_function ranges so); an item
               is the step's whose marker holds its call's start on the
               call's process (the latest-starting); complete periods to the
               next step of the process, the last to the later of the
               marker's end and its items' end less gpu_pids.clock_offset_us;
               percentiles (nearest rank) and tokens per second (toks=, the
               vLLM total, else its groups' leading numbers) of complete
               steps with items, else the tokens of the last ones.
Prints a summary line; exits 1 with the differences.
"""
import gzip
import json
import math
import re
import sys
from decimal import Decimal

TOL = Decimal("0.01")
GPU = ("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset")
RUNTIME = ("cuda_runtime", "cuda_driver", "Runtime")
FAMILIES = [re.compile(r"^step\[.*\]$"),
            re.compile(r"^execute_(\d+_)?context_\d+(\([^)]*\))?_generation_\d+(\([^)]*\))?$"),
            re.compile(r"^ProfilerStep#\d+$")]


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt", encoding="utf-8", errors="replace") as f:
        d = json.load(f, parse_float=Decimal, parse_int=Decimal)
    return d.get("traceEvents", []) if isinstance(d, dict) else d


def main():
    ev = load(sys.argv[1])
    recs = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
    gt = [r for r in recs if r["type"] == "gpu_time"]
    gp = [r for r in recs if r["type"] == "gpu_pids"]
    if len(gt) != 1 or len(gp) != 1:
        print("skipped: %d stages" % len(gt))
        return 0
    g = gt[0]
    sel = gp[0]["selected"]
    off = Decimal(repr(gp[0]["clock_offset_us"])) if "clock_offset_us" in gp[0] else None
    X = [e for e in ev if isinstance(e, dict) and e.get("ph") == "X" and "ts" in e]
    calls, syncs = {}, []
    for e in X:
        if e.get("cat") not in RUNTIME:
            continue
        n = str(e.get("name", "")).lower()
        c = (e.get("args") or {}).get("correlation")
        if c is not None and ("launch" in n or "memcpy" in n or "memset" in n):
            calls.setdefault(c, e)
        if "synchronize" in n:
            syncs.append(e)
    items = [e for e in X if e.get("cat") in GPU and str(e.get("pid")) == sel and
             e.get("dur", 0) > 0]
    items.sort(key=lambda e: (e["ts"], e["ts"] + e["dur"]))
    bad = []

    def cmp(what, mine, theirs):
        if theirs is None or mine is None:
            if (theirs is None) != (mine is None):
                bad.append("%s: mine %s, records %s" % (what, mine, theirs))
            return
        if isinstance(mine, str) or isinstance(theirs, (str, bool)):
            if mine != theirs:
                bad.append("%s: mine %s, records %s" % (what, mine, theirs))
            return
        t = Decimal(repr(theirs))
        if abs(Decimal(mine) - t) > TOL + abs(t) * Decimal("1e-9"):
            bad.append("%s: mine %s, records %s" % (what, mine, theirs))

    copies = sum(1 for e in items if e["cat"] not in ("kernel", "Kernel"))
    cmp("copies", copies, g.get("copies", 0))
    def call_of(e):
        return calls.get((e.get("args") or {}).get("correlation"))
    first = {}
    for e in items:
        c = call_of(e)
        if c is not None:
            first.setdefault(id(c), id(e))
    pids = {str(call_of(e)["pid"]) for e in items if call_of(e) is not None}
    blocking = [s for s in syncs if str(s.get("pid")) in pids]
    seen = set()
    for e in items:
        c = call_of(e)
        if c is None or id(c) in seen:
            continue
        seen.add(id(c))
        n = str(c["name"]).lower()
        if "memcpy" in n and "async" not in n:
            blocking.append(c)
    union = []
    for a, b in sorted((s["ts"], s["ts"] + max(s.get("dur", 0), 0)) for s in blocking):
        if union and a <= union[-1][1]:
            union[-1][1] = max(union[-1][1], b)
        else:
            union.append([a, b])
    idle = host = sync = Decimal(0)
    best = (Decimal(0), None)
    if items:
        cur = items[0]["ts"] + items[0]["dur"]
        for e in items[1:]:
            end = e["ts"] + e["dur"]
            if e["ts"] > cur:
                g0, g1 = cur, e["ts"]
                h = Decimal(0)
                c = call_of(e)
                if c is not None and first[id(c)] == id(e):
                    h = min(max(min(c["ts"] + max(c["dur"], 0), g1) - g0, 0), g1 - g0)
                x = g0 + h
                s = sum((min(b, g1) - max(a, x) for a, b in union if a < g1 and b > x),
                        Decimal(0))
                idle += g1 - g0
                host += h
                sync += s
                if s > best[0]:
                    name = max(blocking, key=lambda b: min(b["ts"] + b["dur"], g1) -
                               max(b["ts"], x))["name"]
                    best = (s, name)
            cur = max(cur, end)
    cmp("idle_us", idle, g["idle_us"])
    if off is None:
        cmp("idle_launch_us", host, g.get("idle_launch_us"))
        cmp("idle_sync_us", sync, g.get("idle_sync_us"))
        cmp("sync_gap_us", best[0] if best[1] else None, g.get("sync_gap_us"))
        cmp("sync_gap_call", best[1], g.get("sync_gap_call"))
    # steps
    marks, fam = [], None
    for e in X:
        legacy = e.get("cat") == "Operator" and FAMILIES[-1].match(str(e.get("name", "")))
        if e.get("cat") != "user_annotation" and not legacy:
            continue  # trace-extract's annotations; GPU-side copies are never steps
        for i, rx in enumerate(FAMILIES):
            if rx.match(str(e.get("name", ""))):
                marks.append((i, e))
                fam = i if fam is None or i < fam else fam
                break
    marks = sorted((e for i, e in marks if i == fam), key=lambda e: e["ts"])
    srec = [r for r in recs if r["type"] == "step"]
    if len(marks) != len(srec):
        bad.append("steps: mine %d, records %d" % (len(marks), len(srec)))
        print("; ".join(bad))
        return 1
    work = [[] for _ in marks]
    for e in items:
        c = call_of(e)
        if c is None:
            continue
        for i in range(len(marks) - 1, -1, -1):
            m = marks[i]
            if m["pid"] == c["pid"] and m["ts"] <= c["ts"] <= m["ts"] + max(m["dur"], 0):
                work[i].append(e)
                break
    launches = bool(calls)
    comp, ctok, cus, last, ltok, lus = [], 0, Decimal(0), None, 0, Decimal(0)
    for i, m in enumerate(marks):
        nxt = [j for j in range(i + 1, len(marks)) if marks[j]["pid"] == m["pid"]]
        if nxt:
            p = marks[nxt[0]]["ts"] - m["ts"]
        else:
            end = m["ts"] + max(m["dur"], 0)
            if work[i]:
                ge = max(e["ts"] + e["dur"] for e in work[i]) - (off or 0)
                end = max(end, ge)
            p = end - m["ts"]
        cmp("step %d period_us" % i, p, srec[i].get("period_us"))
        if launches and not work[i]:
            continue
        name, stage = str(m["name"]), srec[i]["stage"]
        t = re.search(r" toks=(\d+)", name) or re.match(r"^execute_(\d+)_", name)
        tok = int(t.group(1)) if t else None
        g2 = re.match(r"^execute_context_\d+\((?:sq)?(\d+)[^)]*\)_generation_\d+\((?:sq)?(\d+)", name)
        if tok is None and g2:  # no total: the groups open with their tokens
            tok = int(g2.group(1)) + int(g2.group(2))
        if tok is None and stage == "decode":
            b = re.search(r" bs=(\d+)", name)
            v = re.match(r"^execute_(?:\d+_)?context_(\d+).*_generation_(\d+)", name)
            tok = int(b.group(1)) if b else (int(v.group(1)) + int(v.group(2)) if v else None)
        if nxt:
            comp.append(p)
            if tok is not None:
                ctok, cus = ctok + tok, cus + p
        else:
            last = p
            if tok is not None:
                ltok, lus = ltok + tok, lus + p
    comp.sort()
    def pr(q):
        return comp[max(1, min(len(comp), math.ceil(q * len(comp) / 100))) - 1]
    if marks:
        cmp("complete_steps", len(comp), g.get("complete_steps"))
    cmp("step_p50_us", pr(50) if comp else None, g.get("step_p50_us"))
    cmp("step_p90_us", pr(90) if comp else None, g.get("step_p90_us"))
    cmp("step_max_us", comp[-1] if comp else None, g.get("step_max_us"))
    cmp("step_last_us", last, g.get("step_last_us"))
    fromlast = cus == 0 and lus > 0
    tps = ctok / (cus / Decimal(10**6)) if cus > 0 else (ltok / (lus / Decimal(10**6)) if lus > 0 else None)
    if tps is not None and g.get("tokens_per_s") is not None:
        t = Decimal(repr(g["tokens_per_s"]))
        if abs(tps - t) > t * Decimal("1e-9"):
            bad.append("tokens_per_s: mine %s, records %s" % (tps, t))
    elif (tps is None) != (g.get("tokens_per_s") is None):
        bad.append("tokens_per_s: mine %s, records %s" % (tps, g.get("tokens_per_s")))
    cmp("tokens_from_last", fromlast, g.get("tokens_from_last", False))
    if bad:
        print("; ".join(bad))
        return 1
    print("idle %.3f, host-bound %s, sync %s (%s); %d steps, %d complete%s" % (
        idle, "%.3f" % host if off is None else "-", "%.3f" % sync if off is None else "-",
        best[1] or "none", len(marks), len(comp),
        ", last %.3f" % last if last is not None else ""))
    return 0


sys.exit(main())
