#!/bin/sh
# Cross-check kernel-roofline's GEMM FLOPs on real traces: for every trace of
# SHARED_DIR/corpus/traces, the FLOPs of each (kernel, shape class) whose op
# is a GEMM (aten::mm, addmm, bmm, baddbmm, matmul, linear, _scaled_mm) must
# equal a recomputation in Python straight from the trace's JSON (not from
# our records): each kernel's launch by correlation, the launch's op (the
# innermost CPU op on its thread containing it whose External id is the
# launch's, else the innermost containing it; none for graph launches), the
# op's FLOPs 2 M N K (+ M N for a bias) from its "Input Dims", split over
# its compute kernels (not its memcpy and memset events) by their durations.  The kernels are those of the analyzed
# GPU process (trace-stage's gpu_pids record names it).  It then prints the
# share of GPU time modeled per trace and stage, with the roofline against
# the GPU the trace's deviceProperties name (given to kernel-roofline as
# device records read here from the JSON), the README's table.
# Usage: sh tests/corpus-roofline.sh SHARED_DIR
shared=${1:-../shared}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${TRIAGE_BINDIR:-$top/build/bin}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/corpus-roofline.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

cat >"$tmp/gemm.py" <<'EOF'
import bisect, collections, gzip, json, re, sys

path, pid = sys.argv[1], sys.argv[2]
f = gzip.open(path, "rt") if path.endswith(".gz") else open(path)
doc = json.load(f)
events = doc["traceEvents"] if isinstance(doc, dict) else doc
KEY = {"float": "fp32", "double": "fp64", "c10::Half": "fp16", "c10::BFloat16": "bf16",
       "c10::Float8_e4m3fn": "fp8", "c10::Float8_e5m2": "fp8", "c10::Float8_e4m3fnuz": "fp8",
       "c10::Float8_e5m2fnuz": "fp8", "signed char": "int8", "unsigned char": "uint8"}

def canon(name):
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

def gemm(op, dims, types):
    """(flops, class) of a GEMM op, or None."""
    def t(i):
        return dims[i] if i < len(dims) and isinstance(dims[i], list) else None
    ty = lambda i: KEY.get(types[i], "?") if i < len(types) else "?"
    if op in ("aten::mm", "aten::addmm", "aten::_scaled_mm"):
        o = 1 if op == "aten::addmm" else 0
        a, b = t(o), t(o + 1)
        if not a or not b or len(a) != 2 or len(b) != 2 or a[1] != b[0]:
            return None
        m, k, n = a[0], a[1], b[1]
        bias = op == "aten::addmm" and t(0) is not None and len(t(0)) > 0
        return 2 * m * n * k + (m * n if bias else 0), "M=%d N=%d K=%d %s" % (m, n, k, ty(o))
    if op in ("aten::bmm", "aten::baddbmm"):
        o = 1 if op == "aten::baddbmm" else 0
        a, b = t(o), t(o + 1)
        if not a or not b or len(a) != 3 or len(b) != 3 or a[0] != b[0] or a[2] != b[1]:
            return None
        bt, m, k, n = a[0], a[1], a[2], b[2]
        bias = op == "aten::baddbmm" and t(0) is not None and len(t(0)) > 0
        cls = ("batch=%d " % bt if bt != 1 else "") + "M=%d N=%d K=%d %s" % (m, n, k, ty(o))
        return bt * (2 * m * n * k + (m * n if bias else 0)), cls
    if op == "aten::linear":
        a, w = t(0), t(1)
        if not a or not w or len(w) != 2 or a[-1] != w[1]:
            return None
        k, n = w[1], w[0]
        m = 1
        for x in a[:-1]:
            m *= x
        bias = t(2) is not None and len(t(2)) > 0
        return 2 * m * n * k + (m * n if bias else 0), "M=%d N=%d K=%d %s" % (m, n, k, ty(0))
    if op == "aten::matmul":
        a, b = t(0), t(1)
        if not a or not b:
            return None
        k = a[-1]
        m = a[-2] if len(a) >= 2 else 1
        if len(b) >= 2:
            if b[-2] != k:
                return None
            n = b[-1]
        else:
            if b[0] != k:
                return None
            n = 1
        ba = bb = 1
        for x in a[:-2]:
            ba *= x
        for x in b[:-2]:
            bb *= x
        bt = max(ba, bb)
        cls = ("batch=%d " % bt if bt != 1 else "") + "M=%d N=%d K=%d %s" % (m, n, k, ty(0))
        return bt * 2 * m * n * k, cls
    return None

ops = collections.defaultdict(list)
launch = {}
kernels = []
for e in events:
    if not isinstance(e, dict) or e.get("ph") != "X":
        continue
    c, a = e.get("cat"), e.get("args") or {}
    if c in ("cpu_op", "Operator"):
        ops[(str(e.get("pid")), str(e.get("tid")))].append(e)
    elif c in ("cuda_runtime", "cuda_driver", "Runtime") and "correlation" in a:
        launch.setdefault(a["correlation"], e)
    elif c in ("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset") \
            and (e.get("dur") or 0) > 0 and str(e.get("pid")) == pid:
        kernels.append(e)
starts = {}
for th in ops:
    ops[th].sort(key=lambda o: o["ts"])
    starts[th] = [o["ts"] for o in ops[th]]

def launching_op(l):
    if "GraphLaunch" in l.get("name", ""):
        return None
    th = (str(l.get("pid")), str(l.get("tid")))
    v = ops.get(th, [])
    hi = bisect.bisect_right(starts.get(th, []), l["ts"] + 1e-3)
    inside = [o for o in v[:hi] if o["ts"] - 1e-3 <= l["ts"] <= o["ts"] + o["dur"] + 1e-3]
    ext = (l.get("args") or {}).get("External id")
    same = [o for o in inside if (o.get("args") or {}).get("External id") == ext]
    pool = same or inside
    if not pool:
        return None
    return max(pool, key=lambda o: (o["ts"], -o["dur"]))

per_op = collections.defaultdict(list)
for k in kernels:
    l = launch.get((k.get("args") or {}).get("correlation"))
    o = launching_op(l) if l else None
    # an op's work is split over its compute kernels: its memcpy and memset
    # events carry their own bytes (kernel-roofline(1))
    if o is not None and k.get("cat") in ("kernel", "Kernel"):
        per_op[id(o)].append((k, o))
out = collections.defaultdict(float)
for lst in per_op.values():
    o = lst[0][1]
    a = o.get("args") or {}
    g = gemm(o["name"], a.get("Input Dims") or [], a.get("Input type") or [])
    if g is None:
        continue
    total = sum(k["dur"] for k, _ in lst)
    for k, _ in lst:
        out[(canon(k["name"]), g[1])] += g[0] * k["dur"] / total
for (name, cls), fl in sorted(out.items()):
    print("%s\t%s\t%.17g" % (name, cls, fl))
EOF

cat >"$tmp/dev.py" <<'EOF'
import gzip, json, sys
p = sys.argv[1]
d = json.load(gzip.open(p, "rt") if p.endswith(".gz") else open(p))
for x in (d.get("deviceProperties") or []) if isinstance(d, dict) else []:
    r = {"type": "device", "t": 0, "id": x.get("id", 0), "name": x.get("name", ""),
         "total_global_mem": x.get("totalGlobalMem"), "num_sms": x.get("numSms"),
         "compute_major": x.get("computeMajor"), "compute_minor": x.get("computeMinor")}
    print(json.dumps({k: v for k, v in r.items() if v is not None}, separators=(",", ":")))
EOF

gemms='["aten::mm","aten::addmm","aten::bmm","aten::baddbmm","aten::matmul","aten::linear","aten::_scaled_mm"]'
: >"$tmp/table"
for f in "$shared"/corpus/traces/*.json "$shared"/corpus/traces/*.json.gz; do
	[ -f "$f" ] || continue
	name=$(basename "$f")
	python3 "$tmp/dev.py" "$f" >"$tmp/dev"
	if ! "$bin/trace-extract" -q "$f" 2>/dev/null |
	    awk -v f="$tmp/dev" '{ print } /^\{"type":"trace",/ { while ((getline l < f) > 0) print l }' |
	    "$bin/trace-stage" -q 2>/dev/null |
	    "$bin/kernel-map" -q 2>/dev/null | "$bin/step-stats" -q 2>/dev/null |
	    "$bin/kernel-roofline" -q >"$tmp/rec" 2>"$tmp/err"; then
		if grep -q 'no GPU kernels\|no record' "$tmp/err" 2>/dev/null || [ ! -s "$tmp/rec" ]; then
			echo "ok - $name: no kernels to model"
			pass=$((pass + 1))
			printf '%s\t-\t-\t-\t-\tno kernels\n' "$name" >>"$tmp/table"
			continue
		fi
		echo "not ok - $name: the pipeline failed"
		fail=$((fail + 1))
		continue
	fi
	pid=$(jq -r 'select(.type == "gpu_pids") | .selected' "$tmp/rec" | head -n 1)
	# a row names every op it sums ("aten::addmm, aten::mm")
	jq -r --argjson g "$gemms" 'select(.type == "kernel_eff" and
	    any(.op | split(", ")[]; . as $o | $g | index($o) != null))
	    | [.kernel, .shape, .flops] | @tsv' "$tmp/rec" |
	    awk -F'\t' '{ s[$1 "\t" $2] += $3 } END { for (k in s) printf "%s\t%.17g\n", k, s[k] }' |
	    sort >"$tmp/ours"
	python3 "$tmp/gemm.py" "$f" "${pid:-none}" | sort >"$tmp/theirs"
	# the same (kernel, shape) rows with the same FLOPs (within 1e-9)
	if cut -f1,2 "$tmp/ours" | cmp -s - "$(cut -f1,2 "$tmp/theirs" >"$tmp/keys"; echo "$tmp/keys")" &&
	    paste "$tmp/ours" "$tmp/theirs" | awk -F'\t' '{ d = $3 - $6; if (d < 0) d = -d
	        if (d > 1e-9 * ($6 < 0 ? -$6 : $6) + 1e-6) bad++ } END { exit bad > 0 }'; then
		echo "ok - $name: $(wc -l <"$tmp/ours" | tr -d ' ') GEMM (kernel, shape) rows agree"
		pass=$((pass + 1))
	else
		echo "not ok - $name: GEMM FLOPs differ"
		diff "$tmp/ours" "$tmp/theirs" | head -n 10 | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
	jq -r --arg n "$name" 'select(.type == "roofline") |
	    [$n, .stage, (.modeled_pct * 10 | round / 10), (.gpu // "-"),
	     (if .roof_pct then (.roof_pct * 10 | round / 10) else "-" end),
	     ((.unmodeled // [])[0] | if . then "\(.reason) (\(.op))" else "-" end)] | @tsv' \
	    "$tmp/rec" >>"$tmp/table"
done
echo "# share of GPU time modeled (trace, stage, percent, GPU, roof_pct, the largest unmodeled part):"
sed 's/^/#   /' "$tmp/table"
echo "# corpus-roofline: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
