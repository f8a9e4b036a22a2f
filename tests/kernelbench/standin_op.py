"""standin_op.py PLAN OUT_PLAN: the candidate arm of an imported plan, with a stand-in C op.

tests/cli/kernelbench.sh uses it to run an imported candidate's CUDA C through kgate's own path
(NVRTC compile, load in a cuda arm host, arguments and launch geometry evaluated for the case and
its held-out shapes) against the stand-in CUDA driver (build/tests/libcuda_fake.so), where there is
no GPU and where kgate may not yet take `reference = python:`.  It writes OUT_PLAN: the plan's
[campaign], [case] and [arm candidate] (as the baseline, alone), and an [op] whose source is
OUT_PLAN's stem + _op.c, a C op (docs/ops.md) with the imported op's name, variables and tensors
(their element counts from the declared dimensions) and a zero reference: what the stand-in
driver's launches leave in the outputs says nothing about the kernels, only that kgate got as far
as running them."""
import os
import re
import sys

OP_C = r'''/* %(name)s: a stand-in op for tests/cli/kernelbench.sh (tests/kernelbench/standin_op.py). */
#include <math.h>
#include <stdio.h>
#include "kgate/op.h"

static void sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
%(sizes)s
}

static kg_dtype out_dtype(const kg_case *c, int o)
{
    (void)c;
    (void)o;
    return KG_DT_F32;
}

static int admissible(const kg_case *c, char *why, size_t cap)
{
    (void)c;
    (void)why;
    (void)cap;
    return 0;
}

static int reference(const kg_case *c, const double *const in[], double *const out[], kg_err *err)
{
    (void)in;
    (void)err;
    int64_t ie[8], oe[8];
    sizes(c, ie, oe);
    for (int o = 0; o < %(nout)d; o++)
        for (int64_t i = 0; i < oe[o]; i++) out[o][i] = 0.0;
    return KG_OK;
}

static void bound(const kg_case *c, const double *const in[], const double *ref, int o, double *b)
{
    (void)in;
    int64_t ie[8], oe[8];
    sizes(c, ie, oe);
    for (int64_t i = 0; i < oe[o]; i++) b[i] = 1e-3 + fabs(ref[i]);
}

static double flops(const kg_case *c)
{
    (void)c;
    return 1.0;
}

static double min_bytes(const kg_case *c)
{
    (void)c;
    return 4.0;
}

const kg_op kgate_op = {
    .abi = KG_OP_ABI,
    .name = "%(name)s",
    .summary = "a stand-in for an imported op",
    .vars = "%(vars)s",
    .nin = %(nin)d, .nout = %(nout)d,
    .in_names = { %(in_names)s },
    .out_names = { %(out_names)s },
    .sizes = sizes,
    .out_dtype = out_dtype,
    .admissible = admissible,
    .reference = reference,
    .bound = bound,
    .flops = flops,
    .min_bytes = min_bytes,
    .scalars = "%(vars)s",
};
'''


def sections(text):
    out, name = [], None
    for line in text.splitlines():
        m = re.match(r"\[(.*)\]$", line.strip())
        if m:
            name = m.group(1)
            out.append([name, []])
        elif name is not None:
            out[-1][1].append(line)
    return out


def main(plan, out_plan):
    secs = sections(open(plan, encoding="utf-8").read())
    op = next(s for s in secs if s[0].startswith("op "))
    keys = dict(re.match(r"(\w+)\s*=\s*(.*)", ln).groups() for ln in op[1] if re.match(r"\w+\s*=", ln))
    name = op[0].split()[1]
    vs = keys.get("vars", "").split()

    def c_expr(dims):
        terms = []
        for d in dims.split(","):
            terms.append("(" + re.sub(r"[A-Za-z_]\w*", lambda m: 'kg_op_var_i(c, "%s", 0)' % m.group(0), d) + ")")
        return " * ".join(terms) or "1"
    ins = re.findall(r"(\w+)\[([^\]]*)\]", keys["inputs"])
    outs = re.findall(r"(\w+)\[([^\]]*)\]", keys["outputs"])
    lines = ["    in_elems[%d] = %s;" % (i, c_expr(d)) for i, (_, d) in enumerate(ins)]
    lines += ["    out_elems[%d] = %s;" % (i, c_expr(d)) for i, (_, d) in enumerate(outs)]
    stem = os.path.splitext(os.path.basename(out_plan))[0]
    folder = os.path.dirname(os.path.abspath(out_plan))
    with open(os.path.join(folder, stem + "_op.c"), "w", encoding="utf-8") as f:
        f.write(OP_C % {"name": name, "sizes": "\n".join(lines), "vars": " ".join(vs), "nin": len(ins),
                        "nout": len(outs), "in_names": ", ".join('"%s"' % n for n, _ in ins),
                        "out_names": ", ".join('"%s"' % n for n, _ in outs)})
    keep = []
    for sname, body in secs:
        if sname.startswith("op "):
            keep.append("[%s]\nsource = %s_op.c\n" % (sname, stem))
        elif sname == "campaign":
            keep.append("[campaign]\n" + "\n".join(ln for ln in body if not ln.startswith("quiet")) + "\nquiet = 0\n")
        elif sname.startswith("case ") or sname == "arm candidate":
            text = "\n".join(body).replace("role = candidate", "role = baseline")
            keep.append("[%s]\n%s\n" % (sname, text))
    with open(out_plan, "w", encoding="utf-8") as f:
        f.write("\n".join(keep))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
