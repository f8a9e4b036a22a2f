#!/usr/bin/env python3
"""stats_fixtures.py: writes the reference fixtures of kgate's statistics tests.

Generates, with numpy and scipy, datasets and the values the C code in
src/analysis/stats.c and src/analysis/analysis.c must reproduce, as plain "key value" text
files under tests/fixtures/stats/ (read by tests/unit/test_stats.c and
tests/unit/test_analysis.c with fscanf).  The analysis here is written
independently from the C code, from the definitions in
statistics-anchors.md §3 and the top comment of src/analysis/analysis.c.

It is run by hand when the definitions change; the generated files are
committed because CI has no numpy.  It does not touch any other file.

    python3 tools/stats_fixtures.py [OUTDIR]
"""
import math
import os
import sys

import numpy as np
from scipy.stats import t as student_t

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "stats")

BASELINE, CANDIDATE, CONTROL, REFERENCE = 0, 1, 2, 3
OK, INADMISSIBLE, INCORRECT, ABSENT = 0, 1, 2, 3
V_FASTER, V_SLOWER, V_EQUIV, V_INCONCL, V_INCORRECT, V_INADM, V_NODATA = range(7)
NAN = float("nan")


def g(x):
    """Text of a number that C's strtod reads back to the same double."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return str(int(x))
    x = float(x)
    if math.isnan(x):
        return "nan"
    return repr(x)


# ---------------------------------------------------------------- effect

def effect(D, dirs, alpha, order_min):
    D = np.asarray(D, dtype=float)
    dirs = np.asarray(dirs)
    e = {}
    n = [int(np.sum(dirs == 0)), int(np.sum(dirs == 1))]
    e["n_fwd"], e["n_rev"] = n
    th = [float(np.mean(D[dirs == d])) for d in (0, 1)]
    e["theta_fwd"], e["theta_rev"] = th
    theta = (th[0] + th[1]) / 2
    e["theta"] = theta
    e["rho"] = 1 - math.exp(theta)
    e["order_diff"] = th[0] - th[1]
    if min(n) < 2:
        e["has_interval"] = 0
        for k in ("s", "se", "df", "tq", "lo", "hi", "rho_lo", "rho_hi", "order_se", "order_tq",
                  "rho_lo_fwd", "rho_lo_rev", "rho_hi_fwd", "rho_hi_rev"):
            e[k] = NAN
        e["order_flag"] = 0
        return e
    resid = np.concatenate([D[dirs == d] - th[d] for d in (0, 1)])
    df = n[0] + n[1] - 2
    s = math.sqrt(float(np.sum(resid ** 2)) / df)
    se = s * math.sqrt(1 / (4 * n[0]) + 1 / (4 * n[1]))
    tq = float(student_t.ppf(1 - alpha, df))
    e.update(has_interval=1, s=s, se=se, df=df, tq=tq,
             lo=theta - tq * se, hi=theta + tq * se)
    e["rho_lo"] = 1 - math.exp(e["hi"])
    e["rho_hi"] = 1 - math.exp(e["lo"])
    # each direction alone: pooled s, its own n, the same t quantile
    for d, nm in ((0, "fwd"), (1, "rev")):
        sed = s / math.sqrt(n[d])
        e["rho_lo_" + nm] = 1 - math.exp(th[d] + tq * sed)
        e["rho_hi_" + nm] = 1 - math.exp(th[d] - tq * sed)
    # the order check: a two-sided t test at alpha, df, and above order_min
    e["order_se"] = s * math.sqrt(1 / n[0] + 1 / n[1])
    e["order_tq"] = float(student_t.ppf(1 - alpha / 2, df))
    ad = abs(e["order_diff"])
    e["order_flag"] = int(ad > e["order_tq"] * e["order_se"] and ad > order_min)
    return e


def verdict(e, margin, equivalence):
    if not e.get("has_interval"):
        return V_INCONCL
    # with an order effect each direction's own bound must support the claim
    if e["rho_lo"] > margin:
        ok = not e["order_flag"] or min(e["rho_lo_fwd"], e["rho_lo_rev"]) > margin
        return V_FASTER if ok else V_INCONCL
    if e["rho_hi"] < -margin:
        ok = not e["order_flag"] or max(e["rho_hi_fwd"], e["rho_hi_rev"]) < -margin
        return V_SLOWER if ok else V_INCONCL
    if -equivalence < e["rho_lo"] and e["rho_hi"] < equivalence:
        return V_EQUIV
    return V_INCONCL


EFFECT_KEYS = ("n_fwd", "n_rev", "theta_fwd", "theta_rev", "theta", "has_interval", "s",
               "se", "df", "tq", "lo", "hi", "rho", "rho_lo", "rho_hi", "order_diff",
               "order_se", "order_tq", "order_flag", "rho_lo_fwd", "rho_lo_rev", "rho_hi_fwd",
               "rho_hi_rev")


def write_effect(name, D, dirs, alpha, order_min):
    e = effect(D, dirs, alpha, order_min)
    with open(os.path.join(OUT, name), "w") as f:
        f.write(f"alpha {g(alpha)}\norder_min {g(order_min)}\nn {len(D)}\n")
        for d, v in zip(dirs, D):
            f.write(f"D {int(d)} {g(v)}\n")
        for k in EFFECT_KEYS:
            f.write(f"{k} {g(e[k])}\n")
        f.write("end\n")
    return e


def effect_fixtures():
    rng = np.random.default_rng(20261130)
    made = []
    # balanced, 3 per direction, small true reduction
    dirs = [0, 1] * 3
    D = rng.normal(-0.01, 0.003, 6)
    made.append(write_effect("effect_balanced.txt", D, dirs, 0.05, 0.0025))
    # unequal counts, stricter alpha
    dirs = [0, 1, 1, 0, 1, 1, 1]
    D = rng.normal(-0.1, 0.02, 7)
    made.append(write_effect("effect_unequal.txt", D, dirs, 0.025, 0.0025))
    # a real order effect: forward 4% faster than reverse
    dirs = [0, 1] * 4
    D = np.array([rng.normal(-0.06 if d == 0 else -0.02, 0.004) for d in dirs])
    e = write_effect("effect_order.txt", D, dirs, 0.05, 0.0025)
    assert e["order_flag"] == 1
    # significant in SE units but below order_min: not flagged
    D = np.array([rng.normal(-0.0310 if d == 0 else -0.0300, 0.00005) for d in dirs])
    e = write_effect("effect_order_small.txt", D, dirs, 0.05, 0.0025)
    assert e["order_flag"] == 0 and abs(e["order_diff"]) > e["order_tq"] * e["order_se"]
    # a slower arm
    dirs = [0, 1] * 5
    D = rng.normal(0.05, 0.01, 10)
    made.append(write_effect("effect_slower.txt", D, dirs, 0.05, 0.0025))
    # one forward process: no interval
    dirs = [0, 1, 1]
    D = rng.normal(-0.02, 0.01, 3)
    e = write_effect("effect_single.txt", D, dirs, 0.05, 0.0025)
    assert e["has_interval"] == 0
    # many processes
    dirs = [0, 1] * 12
    D = rng.normal(0.001, 0.002, 24)
    write_effect("effect_many.txt", D, dirs, 0.05, 0.0025)


def primitive_fixtures():
    rng = np.random.default_rng(7)
    with open(os.path.join(OUT, "primitives.txt"), "w") as f:
        for p in (0.5, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.05, 0.01):
            for df in (1, 2, 3, 4, 5, 6, 10, 22, 30, 100, 2.5):
                f.write(f"t {g(p)} {g(df)} {g(float(student_t.ppf(p, df)))}\n")
        for n in (1, 2, 3, 4, 7, 10, 64, 65, 101):
            v = rng.lognormal(6.0, 0.3, n)
            if n >= 4:
                v[1] = v[3]  # ties
            vals = " ".join(g(x) for x in v)
            f.write(f"median {n} {g(float(np.median(v)))} {vals}\n")
            f.write(f"mean {n} {g(float(np.mean(v)))} {vals}\n")
            sd = float(np.std(v, ddof=1)) if n >= 2 else 0.0
            f.write(f"sd {n} {g(sd)} {vals}\n")
        f.write("end\n")


# -------------------------------------------------------------- analysis

class Scenario:
    def __init__(self, name):
        self.name = name
        self.campaign = dict(alpha=0.05, margin=0.02, equivalence=0.01,
                             control_margin=0.0025, order_min=0.0025, rounds=3, samples=3)
        self.gate = dict(rule=0, min_reduction=0.05, all_cases=0, require_order=1,
                         require_control=1)
        self.cases = []     # (name, primary)
        self.arms = []      # (name, role, of)
        self.state = {}     # (c, a) -> state
        self.dirs = []      # per process
        self.accepted = []  # per process
        self.rows = []      # (proc, dir, round, arm, kase, sample, ns)


def simulate(sc, truth, rng, drop=(), proc_sd=0.01, round_sd=0.005, arm_proc_sd=0.004,
             sample_sd=0.01, order_shift=None):
    """truth[(c, a)] = (base ns, true log ratio); rows for every applicable arm."""
    order_shift = order_shift or {}
    for p, d in enumerate(sc.dirs):
        u = rng.normal(0, proc_sd)
        for c in range(len(sc.cases)):
            for r in range(sc.campaign["rounds"]):
                v = rng.normal(0, round_sd)
                for a in range(len(sc.arms)):
                    if sc.state[(c, a)] == ABSENT or (c, a) not in truth:
                        continue
                    if (p, c, a, r) in drop:
                        continue
                    base, lr = truth[(c, a)]
                    w = rng.normal(0, arm_proc_sd)
                    shift = order_shift.get((c, a), 0.0) if d == 0 else 0.0
                    for s in range(sc.campaign["samples"]):
                        z = rng.normal(0, sample_sd)
                        ns = base * math.exp(u + v + lr + w + shift + z)
                        if not sc.accepted[p]:
                            ns *= 50.0  # a contaminated process: must not count
                        sc.rows.append((p, d, r, a, c, s, float(ns)))


def contrast(sc, c, a, b, y, rounds, P, pdir, camp):
    """Arm a against baseline b: round statistics, D(p), the effect, the drift."""
    o = dict(contrast_arm=b, wins0=0, wins1=0, nrounds0=0, nrounds1=0, has_effect=0,
             contrast_drift=NAN, drift_fails=0)
    for k in ("round_red0", "round_red1", "round_red_all", "round_red_min", "round_red_max"):
        o[k] = NAN
    Dp, Dd = [], []
    red = {0: [], 1: []}
    moves = []
    for p in P:
        deltas = []
        for r in rounds:
            if (c, p, a, r) not in y or (c, p, b, r) not in y:
                continue
            dl = y[(c, p, a, r)] - y[(c, p, b, r)]
            deltas.append(dl)
            red[pdir[p]].append(1 - math.exp(dl))
            o[f"nrounds{pdir[p]}"] += 1
            o[f"wins{pdir[p]}"] += int(dl < 0)
        if deltas:
            Dp.append(float(np.mean(deltas)))
            Dd.append(pdir[p])
        if len(deltas) >= 2:
            moves.append(deltas[-1] - deltas[0])
    for d in (0, 1):
        o[f"round_red{d}"] = float(np.median(red[d])) if red[d] else NAN
    allred = red[0] + red[1]
    if allred:
        o["round_red_all"] = float(np.median(allred))
        o["round_red_min"] = min(allred)
        o["round_red_max"] = max(allred)
    if moves:
        o["contrast_drift"] = float(np.mean(moves))
    if len(moves) >= 2:
        # judged over every control in analyse() (a Bonferroni-shared t test)
        o["drift_se"] = float(np.std(moves, ddof=1)) / math.sqrt(len(moves))
        o["drift_n"] = len(moves)
    if not Dp:
        o["verdict"] = V_NODATA
        return o
    if 0 not in Dd or 1 not in Dd:
        o["verdict"] = V_INCONCL
        return o
    e = effect(Dp, Dd, camp["alpha"], camp["order_min"])
    o["has_effect"] = 1
    o["eff"] = e
    o["verdict"] = verdict(e, camp["margin"], camp["equivalence"])
    return o


def analyse(sc):
    """The analysis, from the definitions; returns per-(c, a) dicts and globals."""
    C, A = len(sc.cases), len(sc.arms)
    acc = [r for r in sc.rows if sc.accepted[r[0]]]
    pdir = {}
    cells = {}
    procs = {}
    for (p, d, r, a, c, s, ns) in acc:
        pdir[p] = d
        cells.setdefault((c, p, a, r), []).append(ns)
        procs.setdefault((c, p, a), []).append(ns)
    y = {k: math.log(float(np.median(v))) for k, v in cells.items()}
    rounds = sorted({k[3] for k in cells})
    P = sorted(pdir)
    camp = sc.campaign
    res = {}

    def usable_baseline(c, b):
        return sc.arms[b][1] == BASELINE and sc.state[(c, b)] == OK

    for c in range(C):
        bases = [b for b in range(A) if usable_baseline(c, b)]
        for a in range(A):
            name, role, of = sc.arms[a]
            st = sc.state[(c, a)]
            o = dict(state=st, has_effect=0, contrast_arm=-1, contrast_drift=NAN, drift_fails=0)
            if role == CONTROL:
                o["contrast_arm"] = [x[0] for x in sc.arms].index(of)
            for k in ("med_ns0", "med_ns1", "med_ns_all", "proc_red0", "proc_red1",
                      "round_red0", "round_red1", "round_red_all", "round_red_min",
                      "round_red_max", "drift"):
                o[k] = NAN
            o.update(wins0=0, wins1=0, nrounds0=0, nrounds1=0)
            res[(c, a)] = o
            if st != OK:
                o["verdict"] = {INADMISSIBLE: V_INADM, INCORRECT: V_INCORRECT}.get(st, V_NODATA)
                continue
            pm = {0: [], 1: []}
            drifts = []
            for p in P:
                if (c, p, a) not in procs:
                    continue
                pm[pdir[p]].append(float(np.median(procs[(c, p, a)])))
                rs = [r for r in rounds if (c, p, a, r) in y]
                if len(rs) >= 2:
                    drifts.append(math.exp(y[(c, p, a, rs[-1])] - y[(c, p, a, rs[0])]) - 1)
            allpm = pm[0] + pm[1]
            o["med_ns0"] = float(np.median(pm[0])) if pm[0] else NAN
            o["med_ns1"] = float(np.median(pm[1])) if pm[1] else NAN
            o["med_ns_all"] = float(np.median(allpm)) if allpm else NAN
            o["drift"] = float(np.median(drifts)) if drifts else NAN
            if role == BASELINE:
                o["verdict"] = V_INCONCL if allpm else V_NODATA
                continue
            if role == CONTROL:
                choices = [o["contrast_arm"]] if usable_baseline(c, o["contrast_arm"]) else []
            elif camp.get("reference", ""):
                ref = [x[0] for x in sc.arms].index(camp["reference"])
                choices = [ref] if usable_baseline(c, ref) else []
            else:
                choices = bases
            best = None
            for b in choices:
                oc = contrast(sc, c, a, b, y, rounds, P, pdir, camp)
                key = oc["eff"]["rho_lo"] if oc["has_effect"] and oc["eff"]["has_interval"] \
                    and not math.isnan(oc["eff"]["rho_lo"]) else -math.inf
                if best is None or key < best[0]:
                    best = (key, oc)
            if best is None:
                o["verdict"] = V_NODATA
                continue
            o.update(best[1])
        # process-median reductions
        for a in range(A):
            o = res[(c, a)]
            if o["state"] != OK:
                continue
            for d in (0, 1):
                if o["contrast_arm"] >= 0:
                    ref = res[(c, o["contrast_arm"])][f"med_ns{d}"] \
                        if usable_baseline(c, o["contrast_arm"]) else NAN
                else:
                    ms = [res[(c, b)][f"med_ns{d}"] for b in bases
                          if not math.isnan(res[(c, b)][f"med_ns{d}"])]
                    ref = min(ms) if ms else NAN
                o[f"proc_red{d}"] = 1 - o[f"med_ns{d}"] / ref

    glob = dict(nproc_accepted=sum(1 for x in sc.accepted if x),
                nproc_rejected=sum(1 for x in sc.accepted if not x))
    order_ok, control_valid = 1, 1
    cm = camp["control_margin"]
    reach = [0.0] * C
    # the drift test of every control with an interval: |drift| > max(t SE, 0.25%),
    # t the two-sided quantile of level 0.01 / m at n - 1 df, m the controls tested
    tested = [k for k, o in res.items() if sc.arms[k[1]][1] == CONTROL and o["has_effect"] and
              o["eff"]["has_interval"] and o.get("drift_n", 0) >= 2]
    for k in tested:
        o = res[k]
        crit = float(student_t.ppf(1 - 0.01 / (2 * len(tested)), o["drift_n"] - 1))
        o["drift_fails"] = int(abs(o["contrast_drift"]) > max(crit * o["drift_se"], 0.0025))
    for c in range(C):
        for a in range(A):
            o = res[(c, a)]
            if not o["has_effect"] or not o["eff"]["has_interval"]:
                continue
            gated = sc.cases[c][1] or sc.gate["all_cases"]
            # the worse direction's own lower bound decides
            worse_lo = min(o["eff"]["rho_lo_fwd"], o["eff"]["rho_lo_rev"])
            decisive = not (worse_lo >= sc.gate["min_reduction"])
            if sc.arms[a][1] == CANDIDATE and o["eff"]["order_flag"] and gated and decisive:
                order_ok = 0
            if sc.arms[a][1] == CONTROL:
                if o["eff"]["rho_lo"] > cm or o["eff"]["rho_hi"] < -cm or o["drift_fails"]:
                    control_valid = 0
                reach[c] = max(reach[c], abs(o["eff"]["rho_lo"]), abs(o["eff"]["rho_hi"]))
    glob.update(order_ok=order_ok, control_valid=control_valid,
                invalid=int(not control_valid or glob["nproc_accepted"] == 0))

    gate = sc.gate
    gmin = gate["min_reduction"]
    reason = "passed"
    pairs = [(c, a) for c in range(C) for a in range(A)
             if (gate["all_cases"] or sc.cases[c][1]) and sc.arms[a][1] == CANDIDATE
             and sc.state[(c, a)] != ABSENT]
    for (c, a) in pairs:
        o = res[(c, a)]
        bad = o["state"] != OK
        if not bad and gate["rule"] == 0:
            bad = not o["has_effect"] or not o["eff"]["has_interval"] or \
                not o["eff"]["rho_lo"] >= gmin or (gate["require_control"] and reach[c] > gmin)
        elif not bad:
            bad = any(o[f"nrounds{d}"] == 0 or not o[f"proc_red{d}"] >= gmin
                      or not o[f"round_red{d}"] >= gmin or o[f"wins{d}"] != o[f"nrounds{d}"]
                      for d in (0, 1))
        if bad:
            reason = f"case {sc.cases[c][0]}, arm {sc.arms[a][0]}:"
            break
    if reason == "passed":
        if not pairs:
            reason = "no candidate arm"
        elif gate["require_order"] and not order_ok:
            reason = "order check failed"
        elif gate["require_control"] and not control_valid:
            reason = "control invalid"
    glob["gate_pass"] = int(reason == "passed")
    return res, glob, reason


RES_KEYS = ("state", "has_effect", "verdict", "contrast_arm", "med_ns0", "med_ns1",
            "med_ns_all", "proc_red0", "proc_red1", "round_red0", "round_red1",
            "round_red_all", "round_red_min", "round_red_max", "wins0", "wins1", "nrounds0",
            "nrounds1", "drift", "contrast_drift", "drift_fails")


def write_analysis(sc):
    res, glob, reason = analyse(sc)
    cp, gt = sc.campaign, sc.gate
    with open(os.path.join(OUT, f"analysis_{sc.name}.txt"), "w") as f:
        f.write("campaign " + " ".join(g(cp[k]) for k in (
            "alpha", "margin", "equivalence", "control_margin", "order_min", "rounds",
            "samples")) + "\n")
        f.write("gate " + " ".join(g(gt[k]) for k in (
            "rule", "min_reduction", "all_cases", "require_order", "require_control")) + "\n")
        f.write(f"cases {len(sc.cases)}\n")
        for (n, prim) in sc.cases:
            f.write(f"case {n} {prim}\n")
        f.write(f"arms {len(sc.arms)}\n")
        for (n, role, of) in sc.arms:
            f.write(f"arm {n} {role} {of or '-'}\n")
        f.write(f"nproc {len(sc.accepted)}\n")
        f.write("accepted " + " ".join(str(int(x)) for x in sc.accepted) + "\n")
        for (c, a), st in sorted(sc.state.items()):
            f.write(f"state {c} {a} {st}\n")
        f.write(f"rows {len(sc.rows)}\n")
        for row in sc.rows:
            f.write("row " + " ".join(g(x) for x in row) + "\n")
        for (c, a), o in sorted(res.items()):
            for k in RES_KEYS:
                f.write(f"expect {c} {a} {k} {g(o[k])}\n")
            if o["has_effect"]:
                for k in EFFECT_KEYS:
                    f.write(f"expect {c} {a} eff.{k} {g(o['eff'][k])}\n")
        for k, v in glob.items():
            f.write(f"global {k} {g(v)}\n")
        f.write(f"reason {reason.replace(' ', '~')}\n")
        f.write("end\n")
    return res, glob, reason


def analysis_fixtures():
    # A: interval gate passes; two baselines, a control, a reference that
    # only runs on the first case, a rejected process and a lost round.
    sc = Scenario("interval")
    sc.cases = [("gemm_a", 1), ("gemm_b", 0)]
    sc.arms = [("dev", BASELINE, None), ("dev2", BASELINE, None), ("cand", CANDIDATE, None),
               ("ctl", CONTROL, "dev"), ("ref", REFERENCE, None)]
    sc.dirs = [0, 1, 0, 1, 0, 1, 0]
    sc.accepted = [1, 1, 1, 1, 0, 1, 1]
    for c in range(2):
        for a in range(5):
            sc.state[(c, a)] = OK
    sc.state[(1, 4)] = ABSENT
    truth = {(0, 0): (1000.0, 0.0), (0, 1): (1000.0, 0.003), (0, 2): (1000.0, -0.12),
             (0, 3): (1000.0, 0.0), (0, 4): (1000.0, 0.05),
             (1, 0): (250.0, 0.0), (1, 1): (250.0, -0.002), (1, 2): (250.0, -0.01),
             (1, 3): (250.0, 0.0)}
    rng = np.random.default_rng(11)
    simulate(sc, truth, rng, drop={(3, 0, 2, 2), (1, 1, 0, 0)}, arm_proc_sd=0.0005,
             sample_sd=0.004, round_sd=0.004)
    res, glob, reason = write_analysis(sc)
    assert glob["gate_pass"] == 1, reason

    # B: classic gate over every case, an inadmissible reference, an
    # incorrect arm, and a control that is 3% off its baseline.
    sc = Scenario("classic")
    sc.campaign.update(rounds=4, samples=3, margin=0.01)
    sc.gate.update(rule=1, min_reduction=0.05, all_cases=1)
    sc.cases = [("rms_a", 1), ("rms_b", 0)]
    sc.arms = [("dev", BASELINE, None), ("cand", CANDIDATE, None), ("ctl", CONTROL, "dev"),
               ("ref", REFERENCE, None), ("alt", CANDIDATE, None)]
    sc.dirs = [0, 1, 0, 1, 0, 1]
    sc.accepted = [1, 1, 0, 1, 1, 1]
    for c in range(2):
        for a in range(5):
            sc.state[(c, a)] = OK
    sc.state[(1, 3)] = INADMISSIBLE
    sc.state[(0, 4)] = ABSENT
    sc.state[(1, 4)] = INCORRECT
    truth = {(0, 0): (5000.0, 0.0), (0, 1): (5000.0, -0.2), (0, 2): (5000.0, 0.03),
             (0, 3): (5000.0, -0.01),
             (1, 0): (800.0, 0.0), (1, 1): (800.0, -0.15), (1, 2): (800.0, 0.0),
             (1, 4): (800.0, -0.3)}
    rng = np.random.default_rng(12)
    simulate(sc, truth, rng, arm_proc_sd=0.002, sample_sd=0.006)
    res, glob, reason = write_analysis(sc)
    assert glob["control_valid"] == 0 and glob["invalid"] == 1
    assert reason.startswith("case rms_b, arm alt"), reason

    # C: an order effect on the candidate that decides the gate: the worse
    # direction alone falls short of min_reduction; the gate fails on order.
    sc = Scenario("order")
    sc.campaign.update(rounds=3, samples=5)
    sc.gate.update(min_reduction=0.10)
    sc.cases = [("copy", 1)]
    sc.arms = [("dev", BASELINE, None), ("cand", CANDIDATE, None)]
    sc.dirs = [0, 1, 0, 1, 0, 1]
    sc.accepted = [1] * 6
    sc.state = {(0, 0): OK, (0, 1): OK}
    truth = {(0, 0): (2000.0, 0.0), (0, 1): (2000.0, -0.1)}
    rng = np.random.default_rng(13)
    simulate(sc, truth, rng, arm_proc_sd=0.001, sample_sd=0.003,
             order_shift={(0, 1): -0.03})
    res, glob, reason = write_analysis(sc)
    assert glob["order_ok"] == 0 and reason == "order check failed", reason


def main():
    os.makedirs(OUT, exist_ok=True)
    effect_fixtures()
    primitive_fixtures()
    analysis_fixtures()


if __name__ == "__main__":
    main()
