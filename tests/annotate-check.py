#!/usr/bin/env python3
"""Check an annotated trace against its original (trace-annotate(1)).

usage: annotate-check.py ORIGINAL ANNOTATED [--summary]

Both files plain or gzip (by their magic bytes).  Checks that the annotated
text is the original with one insertion (every original byte, in order),
that it parses as JSON (the original's leniencies aside: NaN literals are
read as Python reads them), that its events are the original's, count and
content, followed by the added ones, and that the added events follow the
Trace Event Format: known phases, one pid of their own that no original
event uses, integer tids, numeric ts, non-negative dur, metadata naming the
process and every track, no two complete events of one track overlapping,
every async begin with its end, and a report row id ("row") in every
slice's args.  Prints "ok N" (N the added events) or the first problems,
and exits 0 or 1.  Times are compared as decimals, never as doubles.
"""
import decimal
import gzip
import json
import sys


def read(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:2] == b'\x1f\x8b':
        data = gzip.decompress(data)
    return data


def events_of(doc):
    return doc['traceEvents'] if isinstance(doc, dict) else doc


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    summary = '--summary' in sys.argv
    if len(args) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    orig, ann = read(args[0]), read(args[1])
    bad = []

    # every original byte, in order, around one insertion: the longest
    # common prefix and suffix, found by bisection (slices compare in C)
    n = min(len(orig), len(ann))
    lo, hi = 0, n
    while lo < hi:
        m = (lo + hi + 1) // 2
        if orig[:m] == ann[:m]:
            lo = m
        else:
            hi = m - 1
    p = lo
    lo, hi = 0, n - p
    while lo < hi:
        m = (lo + hi + 1) // 2
        if orig[len(orig) - m:] == ann[len(ann) - m:]:
            lo = m
        else:
            hi = m - 1
    s = lo
    if p + s < len(orig):
        bad.append('the original bytes are not all there in order around one insertion '
                   '(common prefix %d, suffix %d, original %d bytes)' % (p, s, len(orig)))

    D = decimal.Decimal
    try:
        o = json.loads(orig.decode('utf-8', 'surrogatepass').lstrip('\ufeff'),
                       parse_float=D) if orig.strip().endswith((b']', b'}')) else None
    except ValueError:
        o = None
    try:
        a = json.loads(ann.decode('utf-8', 'surrogatepass').lstrip('\ufeff'), parse_float=D)
    except ValueError as e:
        print('not ok: the annotated trace does not parse as JSON: %s' % e)
        return 1
    aev = events_of(a)
    if o is not None:
        oev = events_of(o)
        if len(aev) < len(oev) or aev[:len(oev)] != oev:
            bad.append('the original events are not the first %d of the annotated trace'
                       % len(oev))
        added = aev[len(oev):]
        if isinstance(o, dict) and isinstance(a, dict):
            ko = {k: v for k, v in o.items() if k != 'traceEvents'}
            ka = {k: v for k, v in a.items() if k != 'traceEvents'}
            if ko != ka:
                bad.append('the members besides traceEvents differ')
    else:
        # an original that is no strict JSON (a bare array without its ']'):
        # the added events are those of the annotation's own pid
        pids = [e.get('pid') for e in aev if isinstance(e, dict) and
                e.get('name') == 'process_name' and
                (e.get('args') or {}).get('name') == 'triage findings']
        added = [e for e in aev if isinstance(e, dict) and pids and e.get('pid') == pids[-1]]
        oev = [e for e in aev if not (isinstance(e, dict) and pids and e.get('pid') == pids[-1])]

    if not added:
        if summary:
            print('ok 0')
        return 1 if bad else (print('ok 0') or 0)
    pids = {e.get('pid') for e in added}
    if len(pids) != 1:
        bad.append('the added events use %d pids' % len(pids))
    pid = next(iter(pids))
    if not isinstance(pid, int):
        bad.append('the added pid is not an integer: %r' % (pid,))
    if any(isinstance(e, dict) and e.get('pid') == pid for e in oev):
        bad.append('the added pid %r is one of the original events\' pids' % (pid,))
    names = {}
    tracks = set()
    slices = {}
    asyncs = {}
    procname = False
    for e in added:
        ph = e.get('ph')
        if ph not in ('M', 'X', 'C', 'b', 'e', 'n'):
            bad.append('phase %r' % (ph,))
            continue
        if ph == 'M':
            nm = e.get('name')
            if nm not in ('process_name', 'process_sort_index', 'thread_name',
                          'thread_sort_index'):
                bad.append('metadata %r' % (nm,))
            if nm == 'process_name':
                procname = e['args'].get('name') == 'triage findings'
            if nm == 'process_sort_index' and not isinstance(e['args'].get('sort_index'), int):
                bad.append('process_sort_index without an integer')
            if nm == 'thread_name':
                if not isinstance(e.get('tid'), int) or not isinstance(e['args'].get('name'), str):
                    bad.append('thread_name without tid or name')
                names[e['tid']] = e['args']['name']
            continue
        if not isinstance(e.get('ts'), (int, D)) or isinstance(e.get('ts'), bool):
            bad.append('%s event without a numeric ts' % ph)
            continue
        if not isinstance(e.get('name'), str):
            bad.append('%s event without a name' % ph)
        if ph == 'C':
            ar = e.get('args')
            if not isinstance(ar, dict) or not ar or not all(
                    isinstance(v, (int, D)) and not isinstance(v, bool) for v in ar.values()):
                bad.append('counter %r without numeric series' % e.get('name'))
            continue
        if not isinstance(e.get('tid'), int):
            bad.append('%s event without an integer tid' % ph)
            continue
        tracks.add(e['tid'])
        if ph == 'X':
            d = e.get('dur')
            if not isinstance(d, (int, D)) or isinstance(d, bool) or d < 0:
                bad.append('X event without a non-negative dur')
                continue
            if not isinstance((e.get('args') or {}).get('row'), str):
                bad.append('X event %r without a row id in args' % e.get('name'))
            slices.setdefault(e['tid'], []).append((D(e['ts']), D(e['ts']) + D(d), e['name']))
        elif ph in ('b', 'e'):
            k = (e.get('cat'), e.get('id'), e.get('name'))
            asyncs[k] = asyncs.get(k, 0) + (1 if ph == 'b' else -1)
    if not procname:
        bad.append('no process_name "triage findings"')
    for tid in tracks:
        if tid not in names:
            bad.append('track %d has no thread_name' % tid)
    for tid, v in slices.items():
        v.sort()
        for i in range(1, len(v)):
            if v[i][0] < v[i - 1][1]:
                bad.append('track %d (%s): %r at %s overlaps %r ending %s' % (
                    tid, names.get(tid), v[i][2], v[i][0], v[i - 1][2], v[i - 1][1]))
                break
    for k, c in asyncs.items():
        if c:
            bad.append('async %r: %d begin(s) without an end' % (k, c))
    if bad:
        for b in bad[:20]:
            print('not ok: ' + b)
        return 1
    if summary:
        kinds = {}
        for tid, v in slices.items():
            kinds[names[tid]] = len(v)
        print('ok %d %s' % (len(added), json.dumps(kinds, sort_keys=True)))
    else:
        print('ok %d' % len(added))
    return 0


if __name__ == '__main__':
    sys.exit(main())
