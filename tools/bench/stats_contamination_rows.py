#!/usr/bin/env python3
"""stats_contamination_rows.py: the contamination study's estimators on the
rows of real `kgate run` campaigns (tools/bench/stats_contamination_fake.sh).

    python3 tools/bench/stats_contamination_rows.py OUTDIR

For every samples-SEED.csv in OUTDIR: per round the log of each arm's
median, delta = y(cand) - y(base), D(p) by each estimator (mean: kgate's;
median; Huber, k = 1.345 MAD-scaled), the directions as strata and the
one-sided 95% t bounds (as src/analysis/stats.c, kg_effect_compute), the
verdict at margin 0.5% and equivalence 1% (kg_verdict_of, no order rule:
the order flag is not computed here).  The mean's lower bound is checked
against results.csv's reduction_lower (printed: the largest difference).
Prints the verdict counts per estimator with Wilson 95% intervals."""
import csv
import glob
import math
import os
import re
import statistics
import sys

# t quantiles (0.95) by degrees of freedom: the designs here have 6
# processes per direction (df 10); others are refused
TQ = {10: 1.8124611228107335}


def huber(v):
    med = statistics.median(v)
    mad = statistics.median([abs(x - med) for x in v]) * 1.4826
    if mad <= 0:
        return sum(v) / len(v)
    k, mu = 1.345 * mad, med
    for _ in range(50):
        w = [1.0 if abs(x - mu) <= k else k / abs(x - mu) for x in v]
        nmu = sum(wi * x for wi, x in zip(w, v)) / sum(w)
        if abs(nmu - mu) < 1e-12 * (1 + abs(mu)):
            return nmu
        mu = nmu
    return mu


EST = {"mean": lambda v: sum(v) / len(v), "median": statistics.median, "huber": huber}


def verdict(D, dirs, margin=0.005, equiv=0.01):
    th = {}
    for d in ("fwd", "rev"):
        xs = [x for x, e in zip(D, dirs) if e == d]
        th[d] = (sum(xs) / len(xs), len(xs))
    theta = 0.5 * (th["fwd"][0] + th["rev"][0])
    ss = sum((x - th[e][0]) ** 2 for x, e in zip(D, dirs))
    nf, nr = th["fwd"][1], th["rev"][1]
    df = nf + nr - 2
    s = math.sqrt(ss / df)
    se = s * math.sqrt(1 / (4 * nf) + 1 / (4 * nr))
    tq = TQ[df]
    rlo, rhi = 1 - math.exp(theta + tq * se), 1 - math.exp(theta - tq * se)
    if rlo > margin:
        v = "FASTER"
    elif rhi < -margin:
        v = "SLOWER"
    elif -equiv < rlo and rhi < equiv:
        v = "EQUIVALENT"
    else:
        v = "INCONCLUSIVE"
    return v, rlo


def wilson(k, n, z=1.959964):
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0, c - h), min(1, c + h)


out = sys.argv[1]
counts = {e: {} for e in EST}
worst = 0.0
n = 0
for f in sorted(glob.glob(os.path.join(out, "samples-*.csv")), key=lambda p: int(re.findall(r"\d+", p)[-1])):
    seed = re.findall(r"\d+", f)[-1]
    cells = {}
    dirs = {}
    with open(f) as fh:
        for r in csv.DictReader(fh):
            cells.setdefault((int(r["process"]), int(r["round"]), r["arm"]), []).append(float(r["ns"]))
            dirs[int(r["process"])] = r["direction"]
    procs = sorted(dirs)
    deltas = {p: [] for p in procs}
    for (p, rnd, a) in sorted(cells):
        if a != "cand":
            continue
        b = cells.get((p, rnd, "base"))
        if b:
            deltas[p].append(math.log(statistics.median(cells[(p, rnd, a)])) - math.log(statistics.median(b)))
    n += 1
    for e, fn in EST.items():
        D = [fn(deltas[p]) for p in procs]
        v, rlo = verdict(D, [dirs[p] for p in procs])
        counts[e][v] = counts[e].get(v, 0) + 1
        if e == "mean":
            with open(os.path.join(out, "ev-%s" % seed, "results.csv")) as fh:
                for r in csv.DictReader(fh):
                    if r["arm"] == "cand":
                        worst = max(worst, abs(float(r["reduction_lower"]) - rlo))
print("campaigns %d; mean's lower bound vs kgate's results.csv: largest difference %.2e" % (n, worst))
for e in EST:
    parts = []
    for v in ("FASTER", "SLOWER", "EQUIVALENT", "INCONCLUSIVE"):
        k = counts[e].get(v, 0)
        lo, hi = wilson(k, n)
        parts.append("%s %d/%d = %.1f%% [%.1f, %.1f]" % (v, k, n, 100 * k / n, 100 * lo, 100 * hi))
    print("%-7s %s" % (e, "; ".join(parts)))
