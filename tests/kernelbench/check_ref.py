"""check_ref.py PLAN PROBLEM [PLAN PROBLEM ...]: the reference module `kgate import kernelbench` wrote, checked
without kgate (tests/cli/kernelbench.sh).

Reads the plan's [op] (inputs, outputs, vars) and [case] values, then, at the case's sizes and at
a smaller shape (every variable minus one, as a held-out shape would be), for two draws of the
tensors each (the second rebinds the Module's parameters to other buffers):
  - kgate_reference on float64 tensors of the declared shapes equals the problem's Model, made
    independently here, with its parameters loaded from the same tensors, run in float64;
  - its outputs have the declared shapes;
  - kgate_baseline on the same tensors in float32 is within float32 rounding of it.
Prints one line; exits 1 on the first mismatch."""
import os
import re
import sys

import torch


def read_plan(path):
    sec, out = None, {}
    for ln in open(path, encoding="utf-8"):
        ln = ln.split(" ;")[0].strip()
        if not ln or ln.startswith(";"):
            continue
        m = re.match(r"\[(\w+)\s*(.*)\]$", ln)
        if m:
            sec = m.group(1)
            out.setdefault(sec, {})
            continue
        k, _, v = ln.partition("=")
        out[sec][k.strip()] = v.strip()
    return out


def tensors_of(decl):
    return [(m.group(1), m.group(2).split(",")) for m in re.finditer(r"(\w+)\[([^\]]*)\]", decl)]


def ev(e, env):
    return eval(e.replace("/", "//"), {"__builtins__": {}}, dict(env, min=min, max=max))


def main(plan_path, problem_path):
    plan = read_plan(plan_path)
    op, case = plan["op"], plan["case"]
    ref_file = op["reference"].split(":")[1]
    folder = os.path.dirname(os.path.abspath(plan_path))
    ns = {"__name__": "kgate_ref"}
    exec(compile(open(os.path.join(folder, ref_file), encoding="utf-8").read(), ref_file, "exec"), ns)
    pns = {"__name__": "problem"}
    exec(compile(open(problem_path, encoding="utf-8").read(), problem_path, "exec"), pns)
    names = op.get("vars", "").split()
    ins, outs = tensors_of(op["inputs"]), tensors_of(op["outputs"])
    nin = ns["_KG_NIN"]
    base = {n: int(case[n]) for n in names}
    shapes = [base, {n: max(1, v - 1) for n, v in base.items()}]
    # two draws at each shape: the second binds other buffers to the same (cached) Module
    for env, seed in [(e, sd) for e in shapes for sd in (7, 8)]:
        g = torch.Generator().manual_seed(seed)
        xs = [torch.randn([ev(d, env) for d in dims], generator=g, dtype=torch.float64) for _, dims in ins]
        got = ns["kgate_reference"](*xs, **env)
        got = list(got) if isinstance(got, (tuple, list)) else [got]
        # the problem's Model, made here at these sizes, its parameters loaded from the inputs
        for k, v in env.items():
            pns[k] = v
        model = pns["Model"](*pns["get_init_inputs"]()).double()
        params = dict(zip(ns["_KG_PARAMS"], xs[nin:]))
        with torch.no_grad():
            for name, p in model.named_parameters():
                p.copy_(params[name])
            want = model(*xs[:nin])
        want = list(want) if isinstance(want, (tuple, list)) else [want]
        if len(got) != len(outs):
            sys.exit("%s: %d outputs, the plan declares %d" % (plan_path, len(got), len(outs)))
        for (oname, dims), a, b in zip(outs, got, want):
            shape = [ev(d, env) for d in dims]
            if list(a.shape) != shape:
                sys.exit("%s: output %s has shape %s at %s, the plan declares %s" % (plan_path, oname, list(a.shape),
                                                                                      env, shape))
            if a.dtype != torch.float64 or not torch.equal(a, b):
                sys.exit("%s: output %s differs from the problem's Model in float64 at %s" % (plan_path, oname, env))
        got32 = ns["kgate_baseline"](*[x.float() for x in xs], **env)
        got32 = list(got32) if isinstance(got32, (tuple, list)) else [got32]
        for (oname, _), a, b in zip(outs, got32, want):
            if a.dtype != torch.float32 or not torch.allclose(a.double(), b, rtol=1e-4, atol=1e-4):
                sys.exit("%s: the float32 baseline's %s is not near the float64 reference at %s" % (plan_path, oname,
                                                                                                  env))
    print("%s: reference and baseline agree with the Model at %s" % (os.path.basename(plan_path),
                                                                      " and ".join(str(s) for s in shapes)))


if __name__ == "__main__":
    for i in range(1, len(sys.argv) - 1, 2):
        main(sys.argv[i], sys.argv[i + 1])
