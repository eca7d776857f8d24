"""Medians per kernel from probe-gpu-time.sh's outputs: the timer's activity durations, its
gpu__time_duration ranges (gt) and ncu's, with speedups against each program's first kernel."""
import csv, json, statistics, sys, os, re

D = sys.argv[1]
WARMUP = 2


def timer(path):
    recs, gts, other = [], [], []
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        if "k" in r:
            recs.append(r)
        elif "gt" in r:
            gts.append(r["gt"])
        elif "gterror" in r or "error" in r or "gtend" in r or "end" in r or "pcerror" in r:
            other.append(line)
    recs.sort(key=lambda r: r["s"])
    per, gper = {}, {}
    for i, r in enumerate(recs):
        per.setdefault(r["k"], []).append(r["du"])
        if len(gts) == len(recs):
            gper.setdefault(r["k"], []).append(gts[i])
    return per, gper, other, len(recs), len(gts)


def ncu(path):
    per = {}
    text = open(path).read().splitlines()
    start = next((i for i, l in enumerate(text) if l.startswith('"ID"')), None)
    if start is None:
        return per
    rows = list(csv.reader(text[start:]))
    h = rows[0]
    kn, dur = h.index("Kernel Name"), h.index("gpu__time_duration.sum")
    unit = rows[1][dur]
    scale = {"nsecond": 1, "usecond": 1e3, "msecond": 1e6}.get(unit, 1)
    for r in rows[2:]:
        per.setdefault(r[kn], []).append(float(r[dur].replace(",", "")) * scale)
    return per


def med(xs):
    xs = xs[WARMUP:]
    return statistics.median(xs) if xs else None


for p in ["transpose_ladder", "length_curve", "matmul_unroll"]:
    cols = {}
    for tag in ["activity", "gt", "gt2", "gt-pc"]:
        f = os.path.join(D, f"{p}.{tag}.jsonl")
        if not os.path.exists(f):
            continue
        per, gper, other, n, ng = timer(f)
        print(f"{p} {tag}: {n} records, {ng} gt; {' '.join(other)[:300]}")
        cols[tag + ".du"] = {k: med(v) for k, v in per.items()}
        if gper:
            cols[tag] = {k: med(v) for k, v in gper.items()}
    for tag in ["ncu", "ncu2"]:
        f = os.path.join(D, f"{p}.{tag}.stdout")
        if os.path.exists(f):
            cols[tag] = {k: med(v) for k, v in ncu(f).items()}
    if "ncu" not in cols:
        continue
    kernels = list(cols["ncu"].keys())
    names = [c for c in ["ncu", "ncu2", "activity.du", "gt", "gt2", "gt-pc", "gt.du", "gt-pc.du"] if c in cols]
    print(f"\n{p}: medians in µs (launches after {WARMUP}), difference from ncu in µs and %")
    print("kernel".ljust(34) + "".join(n.rjust(20) for n in names))
    for k in kernels:
        ref = cols["ncu"][k]
        cells = []
        for n in names:
            v = cols[n].get(k)
            cells.append("-".rjust(20) if v is None else (f"{v/1e3:.3f} {((v-ref)/1e3):+.3f} {100*(v-ref)/ref:+.1f}%").rjust(20))
        print(re.sub(r"^_Z\d+", "", k)[:33].ljust(34) + "".join(cells))
    base = kernels[0]
    print(f"speedups vs {base[:30]}: (source: value, % off ncu's)")
    for k in kernels[1:]:
        ref = cols["ncu"][base] / cols["ncu"][k]
        cells = []
        for n in names:
            a, b = cols[n].get(base), cols[n].get(k)
            cells.append("-".rjust(20) if not a or not b else f"{a/b:.3f} {100*((a/b)/ref-1):+.2f}%".rjust(20))
        print(re.sub(r"^_Z\d+", "", k)[:33].ljust(34) + "".join(cells))
    print()
