#!/usr/bin/env python3
"""stats_contamination_tables.py: markdown tables from stats_contamination's CSV.

    python3 tools/bench/stats_contamination_tables.py OUT.csv [...] > tables.md

Rates are k/n with Wilson 95% intervals. Sections: clean data (type I
error at margin 0 and 0.5%, power, coverage), the worst case over the
contaminated cells per estimator, and every cell (A/A false FASTER /
false SLOWER; with a true gain, FASTER / wrong-direction SLOWER)."""
import csv
import math
import sys

EST = ["mean", "median", "trim20", "wins20", "huber", "watch90", "watch50"]


def wilson(k, n, z=1.959964):
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def pct(k, n, ci=True):
    lo, hi = wilson(k, n)
    s = "%.2f%%" % (100.0 * k / n)
    if ci:
        s += " [%.2f, %.2f]" % (100 * lo, 100 * hi)
    return s


rows = []
for f in sys.argv[1:]:
    with open(f) as fh:
        for r in csv.DictReader(fh):
            for k in ("n", "faster", "slower", "equivalent", "inconclusive", "faster_m0", "slower_m0", "cover90"):
                r[k] = int(r[k])
            for k in ("truth", "rate", "factor", "mean_rho"):
                r[k] = float(r[k])
            rows.append(r)

designs = []
for r in rows:
    if r["design"] not in designs:
        designs.append(r["design"])
truths = sorted({r["truth"] for r in rows})
idx = {(r["design"], r["truth"], r["kind"], r["rate"], r["factor"], r["estimator"]): r for r in rows}

out = print
out("## Clean data: calibration and power (no contamination)\n")
for d in designs:
    out("### design `%s`\n" % d)
    out("| estimator | A/A FASTER, margin 0 | A/A SLOWER, margin 0 | A/A FASTER, margin 0.5% | A/A EQUIVALENT | "
        "power at 1% | power at 10% | power at 30% | coverage (90% two-sided) at 0 / 1% / 10% |")
    out("|---|---|---|---|---|---|---|---|---|")
    for e in EST:
        c = [idx.get((d, t, "none", 0.0, 1.0, e)) for t in truths]
        if c[0] is None:
            continue
        a = c[0]
        cells = [pct(a["faster_m0"], a["n"]), pct(a["slower_m0"], a["n"]), pct(a["faster"], a["n"]),
                 pct(a["equivalent"], a["n"], False)]
        for x in c[1:]:
            cells.append(pct(x["faster"], x["n"]))
        cov = " / ".join("%.1f%%" % (100.0 * x["cover90"] / x["n"]) for x in c[:3])
        out("| %s | %s | %s |" % (e, " | ".join(cells), cov))
    out("")

SEL = ["mean", "median", "huber", "trim20", "watch90"]
out("## Selected cells: A/A false FASTER and a true 10% gain's wrong-direction SLOWER\n")
out("Rates in %% at margin 0.5%%, Wilson 95%% upper bound in brackets when the count is 0 or small. "
    "Columns: estimators %s.\n" % ", ".join(SEL))
for d in designs:
    for (t, kind, what, title) in ((0.0, "round_base", "faster", "A/A, baseline's rounds contaminated: false FASTER"),
                                   (0.0, "round_either", "faster", "A/A, either arm's rounds: false FASTER"),
                                   (0.0, "burst_either", "faster", "A/A, bursts in loaded processes: false FASTER"),
                                   (0.1, "round_cand", "slower", "true 10%, candidate's rounds: SLOWER (wrong direction)"),
                                   (0.1, "round_cand", "faster", "true 10%, candidate's rounds: FASTER (power)")):
        cs = [r for r in rows if r["design"] == d and r["truth"] == t and r["kind"] == kind]
        if not cs:
            continue
        out("### design `%s`: %s\n" % (d, title))
        out("| rate | factor | " + " | ".join(SEL) + " |")
        out("|---|---|" + "---|" * len(SEL))
        for q in sorted({r["rate"] for r in cs}):
            for F in sorted({r["factor"] for r in cs}):
                cells = []
                for e in SEL:
                    c = idx[(d, t, kind, q, F, e)]
                    k = c[what]
                    lo, hi = wilson(k, c["n"])
                    cells.append("%.2f [%.2f, %.2f]" % (100.0 * k / c["n"], 100 * lo, 100 * hi))
                out("| %g%% | %g | %s |" % (100 * q, F, " | ".join(cells)))
        out("")

out("## Worst case over the contaminated cells (rates 0.1-5%, factors 2, 10, 50, every kind)\n")
out("Each entry is the largest (smallest for power) rate over the 75 contaminated cells of the "
    "design, with its cell (kind, rate, factor).\n")
for d in designs:
    out("### design `%s`\n" % d)
    out("| estimator | A/A false FASTER (margin 0.5%) | A/A false SLOWER | true 10%: SLOWER | true 10%: least power | "
        "true 30%: SLOWER | true 30%: least power |")
    out("|---|---|---|---|---|---|---|")
    for e in EST:
        cells = []
        for t, what in ((0.0, "faster"), (0.0, "slower"), (0.1, "slower"), (0.1, "power"), (0.3, "slower"),
                        (0.3, "power")):
            cand = [r for r in rows if r["design"] == d and r["truth"] == t and r["estimator"] == e
                    and r["kind"] != "none"]
            if not cand:
                cells.append("-")
                continue
            if what == "power":
                w = min(cand, key=lambda r: r["faster"] / r["n"])
                k = w["faster"]
            else:
                w = max(cand, key=lambda r: r[what] / r["n"])
                k = w[what]
            cells.append("%s (%s %g%% x%g)" % (pct(k, w["n"]), w["kind"], 100 * w["rate"], w["factor"]))
        out("| %s | %s |" % (e, " | ".join(cells)))
    out("")

out("## Every cell\n")
out("A/A (truth 0): `FASTER% / SLOWER%` at margin 0.5%. True gain: `FASTER% / SLOWER%` (SLOWER is the "
    "wrong direction). Campaigns per cell: the n column. Rate: per (round, arm) cell for the round and "
    "burst kinds (round_either: each arm's cells, so about twice that share of rounds), per sample for "
    "sample_either.\n")
for d in designs:
    for t in truths:
        out("### design `%s`, truth %g%%\n" % (d, 100 * t))
        out("| kind | rate | factor | n | " + " | ".join(EST) + " |")
        out("|---|---|---|---|" + "---|" * len(EST))
        keys = sorted({(r["kind"], r["rate"], r["factor"]) for r in rows if r["design"] == d and r["truth"] == t},
                      key=lambda x: (x[0] != "none", x[0], x[1], x[2]))
        for (k, q, F) in keys:
            cs = [idx.get((d, t, k, q, F, e)) for e in EST]
            n = cs[0]["n"]
            cells = ["%.1f / %.1f" % (100.0 * c["faster"] / c["n"], 100.0 * c["slower"] / c["n"]) for c in cs]
            out("| %s | %g%% | %g | %d | %s |" % (k, 100 * q, F, n, " | ".join(cells)))
        out("")
