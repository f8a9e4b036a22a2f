"""A stand-in for kgate.triton.compile_arm (tests/cli/kernelbench.sh, where there is no Triton or
GPU): it writes a placeholder cubin and returns the arm's keys as the real one does, with its
args mapped through `args=` and two trailing null scratch pointers, so that the compile script
`kgate import kernelbench` writes for a Triton candidate can be run end to end."""
import os


def compile_arm(kernel, *, op, signature, grid, out_dir, constexprs, args, num_warps, num_stages, name):
    assert all(k in kernel.__code__.co_varnames for k in constexprs), constexprs
    with open(os.path.join(out_dir, name + ".cubin"), "wb") as f:
        f.write(b"\x7fELF stand-in")
    items = [args.get(p, p) + (":i64" if signature[p] == "i64" else "") for p in signature] + ["null", "null"]
    return {"#": ["compiled by the stand-in (tests/kernelbench/standin)"], "op": op, "role": "candidate",
            "image": os.path.join(out_dir, name + ".cubin"), "entry": kernel.__name__, "grid": grid,
            "block": 32 * num_warps, "shared": 0, "args": ", ".join(items)}
