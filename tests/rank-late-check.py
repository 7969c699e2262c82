#!/usr/bin/env python3
"""Where a rank set's straggler is late, computed from the raw traces alone.

usage: rank-late-check.py DIR

An independent check of rank-skew(1)'s late_* members (its Lateness
section) for a directory of Kineto traces, one per rank, of NCCL
collectives on one GPU process each: the rank from distributedInfo;
kernels, copies and sets from the events' cat; each collective's launch
call by its correlation.  Collectives are matched by NCCL operation and
ordinal, the clocks aligned on the end of the first collective of the
first all-reduce, all-gather, reduce-scatter or all-to-all by the lowest
rank's, a rank last at a collective when it started later than the first by
more than the median spread of the aligned ends (at least 1 us), and the
straggler is the rank that started last most often (then the least wait,
then the lowest rank).  Prints one JSON object:
rank, late_collectives, late_us, late_launch_us, late_idle_us,
late_busy_us, kernel_excess_us.
"""
import glob
import gzip
import json
import re
import statistics
import sys

SYNCS = ("AllReduce", "AllGather", "ReduceScatter", "AllToAll")


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f)


def op_of(name):
    m = re.match(r"nccl(?:Dev)?Kernel_([A-Za-z]+)", name)
    return m.group(1) if m else None


def union(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def busy_in(u, lo, hi):
    return sum(max(0, min(b, hi) - max(a, lo)) for a, b in u)


def main():
    ranks = {}
    for path in sorted(glob.glob(sys.argv[1] + "/*.json*")):
        j = load(path)
        ev = [e for e in j["traceEvents"] if e.get("ph") == "X"]
        gpu = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
        calls = {e["args"]["correlation"]: e["ts"] for e in ev
                 if e.get("cat") in ("cuda_runtime", "cuda_driver")
                 and "correlation" in e.get("args", {})}
        colls = sorted((e for e in gpu if op_of(e["name"])), key=lambda e: e["ts"])
        u = union([(e["ts"], e["ts"] + e["dur"]) for e in gpu])
        prev = min(e["ts"] for e in gpu)
        for c in colls:
            w = max(0, c["ts"] - prev)
            c["busy"] = busy_in(u, prev, c["ts"]) if w > 0 else 0
            c["idle"] = w - c["busy"]
            c["launch"] = calls.get(c["args"].get("correlation"))
            prev = max(prev, c["ts"] + c["dur"])
        other = sum(e["dur"] for e in gpu if not op_of(e["name"]))
        ranks[j["distributedInfo"]["rank"]] = {"colls": colls, "other": other}
    order = sorted(ranks)
    ops = sorted({op_of(c["name"]) for c in ranks[order[0]]["colls"]})
    seq = {(r, o): [c for c in ranks[r]["colls"] if op_of(c["name"]) == o]
           for r in order for o in ops}
    sync = [o for o in ops if o in SYNCS] or ops
    first = min(sync, key=lambda o: seq[(order[0], o)][0]["ts"])
    end = {r: seq[(r, first)][0]["ts"] + seq[(r, first)][0]["dur"] for r in order}
    off = {r: end[order[0]] - end[r] for r in order}
    rows = [{r: seq[(r, o)][i] for r in order} for o in ops
            for i in range(len(seq[(order[0], o)]))]
    lasts = {r: 0 for r in order}
    wait = {r: 0 for r in order}
    # a rank is last only past the clocks' agreement: the median spread of the
    # collectives' aligned ends, at least 1 us
    ends = [[row[r]["ts"] + off[r] + row[r]["dur"] for r in order] for row in rows]
    tol = max(1.0, statistics.median(max(e) - min(e) for e in ends)) if rows else 1.0
    for row in rows:
        s = {r: row[r]["ts"] + off[r] for r in order}
        if max(s.values()) - min(s.values()) > tol:
            row["last"] = max(order, key=lambda r: (s[r], -row[r]["dur"], -r))
            lasts[row["last"]] += 1
        short = min(row[r]["dur"] for r in order)
        for r in order:
            wait[r] += row[r]["dur"] - short
    lag = max(order, key=lambda r: (lasts[r], -wait[r], -r))
    others = [r for r in order if r != lag]
    med = statistics.median
    out = {"rank": lag, "late_collectives": 0, "late_us": 0, "late_launch_us": 0,
           "late_idle_us": 0, "late_busy_us": 0}
    for row in (w for w in rows if w.get("last") == lag):
        c = row[lag]
        out["late_collectives"] += 1
        out["late_us"] += c["ts"] + off[lag] - med(row[r]["ts"] + off[r] for r in others)
        out["late_idle_us"] += c["idle"] - med(row[r]["idle"] for r in others)
        out["late_busy_us"] += c["busy"] - med(row[r]["busy"] for r in others)
        if all(row[r]["launch"] is not None for r in order):
            out["late_launch_us"] += c["launch"] + off[lag] - med(
                row[r]["launch"] + off[r] for r in others)
    out["kernel_excess_us"] = ranks[lag]["other"] - med(ranks[r]["other"] for r in others)
    print(json.dumps(out, sort_keys=True))


main()
