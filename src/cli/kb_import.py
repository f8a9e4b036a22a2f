"""kgate import kernelbench: a KernelBench-style problem (and a candidate) as a kgate plan.

Run by `kgate import kernelbench` (src/cli/cmd_import.c) as `python3 -I -B kb_import.py ...`.
It executes the PROBLEM file (trusted, like a plan: it defines the op) and reads the CANDIDATE
file without executing any of it: the candidate's Python is parsed (ast) and the CUDA C of its
load_inline call is read as text.  It writes the plan, the reference module and the candidate's
device code next to the plan.  Exit status: 0 written, 2 refused or malformed (every message
names the file, the line and the construct), 3 this Python cannot import torch.
"""
import ast
import hashlib
import os
import re
import sys

KG_DTYPES = {"float32": ("f32", 4), "float16": ("f16", 2), "bfloat16": ("bf16", 2), "float64": ("f64", 8)}
# case keys and words a variable of a declared op may not be named
RESERVED = {"op", "dtype", "primary", "scale", "eps", "splits", "seed", "name", "none", "null", "WS", "ws",
            "ceildiv", "min", "max"}
SECURITY = "docs/security.md (kgate owns the streams, the clock and the buffers; host code is not trusted)"


class Refused(Exception):
    """A construct kgate cannot import: the message names file:line and the construct."""


def refuse(path, line, what):
    raise Refused("%s:%s: %s" % (path, line if line else "-", what))


# ---------------------------------------------------------------- the problem

def int_value(node, known):
    """An integer literal, an earlier integer constant, or + - * // ** of them; else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name) and node.id in known:
        return known[node.id][0]
    if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Pow):
        a, b = int_value(node.left, known), int_value(node.right, known)
        if a is None or b is None or (isinstance(node.op, ast.FloorDiv) and b == 0) or \
                (isinstance(node.op, ast.Pow) and not 0 <= b <= 64):
            return None
        return {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b, ast.FloorDiv: a // b if b else 0,
                ast.Pow: a ** b}[type(node.op)]
    return None


def int_constants(tree):
    """Module-level NAME = INTEGER assignments (N = 2048 * 2 too): {name: (value, line)}."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = int_value(node.value, out)
            if v is not None:
                out[node.targets[0].id] = (v, node.lineno)
    return out


class Problem:
    def __init__(self, path, overrides):
        import torch
        self.torch = torch
        self.path = path
        with open(path, encoding="utf-8") as f:
            self.source = f.read()
        try:
            self.tree = ast.parse(self.source, path)
        except SyntaxError as e:
            refuse(path, e.lineno, "not Python: %s" % e.msg)
        self.consts = int_constants(self.tree)
        for k, v in overrides.items():
            if k not in self.consts:
                refuse(path, None, "--set %s: the problem has no module-level integer constant %s (it has: %s)"
                       % (k, k, ", ".join(sorted(self.consts)) or "none"))
            self.consts[k] = (v, self.consts[k][1])
        self.ns = {"__name__": "kgate_problem", "__file__": os.path.abspath(path)}
        exec(compile(self.source, path, "exec"), self.ns)
        for name in ("Model", "get_inputs", "get_init_inputs"):
            if name not in self.ns:
                refuse(path, None, "no %s: a KernelBench problem defines class Model(nn.Module), get_inputs() "
                       "and get_init_inputs()" % name)
        self.base = {k: v for k, (v, _) in self.consts.items()}
        self.forward_names = self._forward_names()

    def _forward_names(self):
        import inspect
        sig = inspect.signature(self.ns["Model"].forward)
        names = []
        for p in list(sig.parameters.values())[1:]:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                return None
            names.append(p.name)
        return names

    def shapes(self, values, meta):
        """(init repr, [(shape, dtype)] of the inputs, [(name, shape, dtype)] of the parameters and
        buffers, [(shape, dtype)] of the outputs) with the module constants at values."""
        torch = self.torch
        for k, v in values.items():
            self.ns[k] = v
        factories = ("randn", "rand", "zeros", "ones", "empty", "full", "randint", "arange", "linspace")
        saved = {}
        # get_inputs() may move its tensors to the GPU (.cuda()): the shapes are what is read here
        cuda = torch.Tensor.cuda
        torch.Tensor.cuda = lambda t, *a, **k: t
        if meta:
            for name in factories:
                fn = getattr(torch, name)
                saved[name] = fn

                def wrapped(*a, _fn=fn, **k):
                    k["device"] = "meta"
                    k.pop("generator", None)
                    return _fn(*a, **k)
                setattr(torch, name, wrapped)
        try:
            init = list(self.ns["get_init_inputs"]())
            inputs = list(self.ns["get_inputs"]())
        finally:
            torch.Tensor.cuda = cuda
            for name, fn in saved.items():
                setattr(torch, name, fn)
        torch.manual_seed(0)
        model = self.ns["Model"](*init)
        if meta:
            model = model.to("meta")
        # the parameters become the op's inputs; buffers (running statistics, step counters) stay the
        # Module's own, as its init makes them
        params = [(n, tuple(t.shape), t.dtype) for n, t in model.named_parameters()]
        self.buffers = [n for n, _ in model.named_buffers()]
        with torch.no_grad():
            out = model(*inputs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        ins = []
        for i, x in enumerate(inputs):
            if not isinstance(x, torch.Tensor):
                refuse(self.path, self.line_of("get_inputs"), "get_inputs() item %d is a %s, not a tensor: "
                       "kgate generates every input (make it a module constant, or an input tensor)"
                       % (i, type(x).__name__))
            ins.append((tuple(x.shape), x.dtype))
        for i, o in enumerate(outs):
            if not isinstance(o, torch.Tensor):
                refuse(self.path, self.line_of("forward"), "forward returns a %s as output %d: an output is a "
                       "tensor" % (type(o).__name__, i))
        return repr(init), ins, params, [(tuple(o.shape), o.dtype) for o in outs]

    def line_of(self, name):
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
                return node.lineno
        return None

    def probe(self, values):
        """shapes() on meta tensors, else on real ones (an op meta tensors do not support)."""
        try:
            return self.shapes(values, True)
        except Refused:
            raise
        except Exception:
            return self.shapes(values, False)


def fit_dim(name, i, a, perturbed, consts):
    """An integer expression (text) for dimension i of tensor name: a at the base values; perturbed
    {const: value with that constant doubled}.  None when it cannot be stated."""
    deps = [c for c, d in perturbed.items() if d != a]
    if not deps:
        return str(a)
    if len(deps) == 1:
        c = deps[0]
        v, d = consts[c], perturbed[c]
        for q in range(1, 9):
            num = (d - a) * q
            if num % v:
                continue
            p = num // v
            if p <= 0:
                continue
            for r in range(a * q - p * v, a * q - p * v + q):
                if (p * v + r) // q == a and (p * 2 * v + r) // q == d:
                    e = c if p == 1 else "%d*%s" % (p, c)
                    if r > 0:
                        e = "%s+%d" % (e, r)
                    elif r < 0:
                        e = "%s-%d" % (e, -r)
                    return e if q == 1 else "(%s)/%d" % (e, q)
        return None
    prod = 1
    for c in deps:
        prod *= consts[c]
    if a % prod == 0 and all(perturbed[c] == 2 * a for c in deps):
        k = a // prod
        return "*".join(([str(k)] if k != 1 else []) + deps)
    return None


def ident(s):
    s = re.sub(r"[^A-Za-z0-9_]", "_", s)
    return s if re.match(r"[A-Za-z_]", s) else "t_" + s


def analyse(prob):
    """The op: variables, tensors (name, dims, dtype, role) and the case."""
    base = prob.probe(dict(prob.base))
    init0, ins0, params0, outs0 = base
    free, fixed = [], []
    pert = {}
    for c in sorted(prob.consts):
        vals = dict(prob.base)
        vals[c] = 2 * prob.base[c]
        try:
            r = prob.probe(vals)
        except Refused:
            raise
        except Exception:
            fixed.append(c)
            continue
        if r[0] != init0 or [p[0] for p in r[2]] != [p[0] for p in params0]:
            fixed.append(c)  # the Module's init (a parameter's shape) depends on it
            continue
        pert[c] = r
        if len(r[1]) != len(ins0) or len(r[3]) != len(outs0):
            refuse(prob.path, prob.consts[c][1], "the number of inputs or outputs depends on %s" % c)
        free.append(c)
    prob.probe(dict(prob.base))  # the module's globals back at the base values
    names = prob.forward_names
    if names is None or len(names) != len(ins0):
        names = ["in%d" % i for i in range(len(ins0))]
    tensors = []
    taken = set()

    def add(name, shape, dtype, role, per_dim):
        n = ident(name)
        while n in taken or n in RESERVED:
            n += "_"
        taken.add(n)
        dims = []
        for i, a in enumerate(shape):
            e = fit_dim(n, i, a, {c: per_dim(c)[i] for c in free}, prob.base)
            if e is None:
                refuse(prob.path, prob.line_of("forward"), "dimension %d of %s (%d) depends on %s in a way an "
                       "integer expression of kgate cannot state" % (i, name, a, ", ".join(free)))
            dims.append(e)
        if dtype not in [getattr(prob.torch, k) for k in KG_DTYPES]:
            refuse(prob.path, prob.line_of("get_inputs" if role == "input" else "Model"),
                   "%s is %s: kgate imports floating tensors (float32, float16, bfloat16, float64)" % (name, dtype))
        tensors.append({"name": n, "orig": name, "dims": dims, "shape": shape, "dtype": str(dtype).split(".")[-1],
                        "role": role})

    for i, (shape, dt) in enumerate(ins0):
        add(names[i], shape, dt, "input", lambda c, i=i: pert[c][1][i][0])
    for j, (pname, shape, dt) in enumerate(params0):
        add(pname, shape, dt, "param", lambda c, j=j: pert[c][2][j][1])
    for k, (shape, dt) in enumerate(outs0):
        add("out" if len(outs0) == 1 else "out%d" % k, shape, dt, "output", lambda c, k=k: pert[c][3][k][0])
    used = set()
    for t in tensors:
        for d in t["dims"]:
            used.update(re.findall(r"[A-Za-z_]\w*", d))
    variables = [c for c in free if c in used]
    for c in variables:
        if c in RESERVED or c in taken:
            refuse(prob.path, prob.consts[c][1], "the size constant %s has a name kgate reserves or a tensor "
                   "takes: rename it" % c)
    dts = sorted({t["dtype"] for t in tensors})
    if len(dts) != 1:
        refuse(prob.path, prob.line_of("get_inputs"), "the tensors have several dtypes (%s): an imported problem "
               "has one, the case's" % ", ".join(dts))
    return {"vars": variables, "fixed": fixed, "tensors": tensors, "dtype": dts[0],
            "values": {c: prob.base[c] for c in variables}, "nin": len(ins0), "params": [p[0] for p in params0]}


# ---------------------------------------------------------------- the reference module

ADAPTER = r'''

# ---- kgate: the adapter (written by `kgate import kernelbench`) ----
# The problem above, run on kgate's buffers: the forward inputs, then the
# Module's parameters and buffers, all generated by kgate; the size
# variables as keyword arguments set the module constants before the
# Module is made, so held-out shapes get a Module of their own size.
import torch as _kg_torch

_KG_NIN = %(nin)d
_KG_PARAMS = %(params)r
_KG_VARS = %(vars)r
_KG_MODELS = {}


def _kg_model(sizes, dtype, device):
    key = (tuple(sorted(sizes.items())), dtype, str(device))
    m = _KG_MODELS.get(key)
    if m is None:
        g = globals()
        for k, v in sizes.items():
            if k in _KG_VARS:
                g[k] = v
        _kg_torch.manual_seed(0)
        m = Model(*get_init_inputs()).to(device=device, dtype=dtype)
        if len(_KG_MODELS) >= 4:
            _KG_MODELS.clear()
        _KG_MODELS[key] = m
    return m


def _kg_bind(model, tensors):
    """The Module's parameters and buffers as kgate's tensors (their storage shared, not copied);
    bound again only when kgate hands over other buffers."""
    key = tuple((t.data_ptr(), tuple(t.shape)) for t in tensors)
    if model.__dict__.get("_kg_bound") == key:
        return
    for name, t in zip(_KG_PARAMS, tensors):
        mod = model
        path = name.split(".")
        for p in path[:-1]:
            mod = getattr(mod, p)
        if path[-1] in mod._parameters:
            mod._parameters[path[-1]] = _kg_torch.nn.Parameter(t, requires_grad=False)
        else:
            mod._buffers[path[-1]] = t
    model.__dict__["_kg_bound"] = key


def _kg_run(tensors, sizes):
    model = _kg_model(sizes, tensors[0].dtype, tensors[0].device)
    with _kg_torch.no_grad():
        _kg_bind(model, tensors[_KG_NIN:])
        return model(*tensors[:_KG_NIN])


def kgate_reference(*tensors, **sizes):
    """The float64 reference (and, called again in the case's dtype, the library bound's)."""
    return _kg_run(tensors, sizes)


def kgate_baseline(*tensors, **sizes):
    """torch's Model in the case's dtype on kgate's buffers: the baseline arm."""
    return _kg_run(tensors, sizes)
'''


def write_reference(prob, op, path):
    text = prob.source.rstrip("\n") + "\n" + ADAPTER % {"nin": op["nin"], "params": op["params"],
                                                         "vars": op["vars"]}
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


# ---------------------------------------------------------------- the candidate: its Python

class Candidate:
    """The candidate, read and never run: its load_inline call and its ModelNew.forward."""

    def __init__(self, path, prob, op):
        self.path = path
        with open(path, encoding="utf-8") as f:
            self.text = f.read()
        try:
            self.tree = ast.parse(self.text, path)
        except SyntaxError as e:
            refuse(path, e.lineno, "not Python: %s" % e.msg)
        self.prob, self.op = prob, op
        self.strings = {}
        self.consts = {}
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                v = node.value
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    self.strings[node.targets[0].id] = (v.value, v.lineno)
                elif isinstance(v, ast.Constant) and type(v.value) in (int, float):
                    self.consts[node.targets[0].id] = v.value
                elif isinstance(v, ast.JoinedStr):
                    self.strings[node.targets[0].id] = (None, v.lineno)

    def seg(self, node):
        s = " ".join((ast.get_source_segment(self.text, node) or ast.dump(node)).split())
        return s if len(s) <= 100 else s[:97] + "..."

    def jit_kernels(self):
        """The module's @triton.jit functions: {name: FunctionDef}; @triton.autotune is refused."""
        out = {}
        for node in self.tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            decos = [self.seg(d) for d in node.decorator_list]
            for d, dn in zip(decos, node.decorator_list):
                if "autotune" in d or "heuristics" in d:
                    refuse(self.path, dn.lineno, "@%s on %s: an autotuner picks its configuration by timing on "
                           "the host; give the kernel one configuration (its constexprs and num_warps in the launch)"
                           % (d.split("(")[0], node.name))
            if any(d in ("triton.jit", "jit") or d.startswith("triton.jit(") for d in decos):
                out[node.name] = node
        return out

    def load_inline(self):
        calls = [n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and
                 (getattr(n.func, "id", None) == "load_inline" or getattr(n.func, "attr", None) == "load_inline")]
        others = [n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and
                  getattr(n.func, "attr", getattr(n.func, "id", None)) == "load"]
        if not calls:
            if others:
                refuse(self.path, others[0].lineno, "torch.utils.cpp_extension.load(...) builds from files kgate "
                       "does not read: put the CUDA C in load_inline(cuda_sources=...)")
            refuse(self.path, None, "no load_inline(...) call: a candidate compiles its CUDA C with "
                   "torch.utils.cpp_extension.load_inline(cuda_sources=..., functions=[...])")
        if len(calls) > 1:
            refuse(self.path, calls[1].lineno, "a second load_inline call: kgate imports one extension")
        call = calls[0]
        kw = {k.arg: k.value for k in call.keywords}
        if "cuda_sources" not in kw:
            refuse(self.path, call.lineno, "load_inline without cuda_sources: kgate imports device code (CUDA C)")
        src, line = self.string_of(kw["cuda_sources"])
        fns = kw.get("functions")
        if fns is None:
            refuse(self.path, call.lineno, "load_inline without functions=[...]: name the host function forward calls")
        if isinstance(fns, ast.Constant) and isinstance(fns.value, str):
            names = [fns.value]
        elif isinstance(fns, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in fns.elts):
            names = [e.value for e in fns.elts]
        else:
            refuse(self.path, fns.lineno, "functions=%s: a list of string literals" % self.seg(fns))
        self.ext_call = call
        return src, line, names

    def string_of(self, node):
        if isinstance(node, (ast.List, ast.Tuple)):
            if len(node.elts) != 1:
                refuse(self.path, node.lineno, "cuda_sources with %d parts: give one source string" % len(node.elts))
            node = node.elts[0]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value, node.lineno
        if isinstance(node, ast.Name) and node.id in self.strings:
            s, line = self.strings[node.id]
            if s is None:
                refuse(self.path, line, "%s is an f-string: a source made at run time (sizes baked in) is not "
                       "device code kgate can read; write the sizes as kernel arguments" % node.id)
            return s, line
        refuse(self.path, node.lineno, "cuda_sources=%s: a string literal or a module-level string variable"
               % self.seg(node))

    def ext_names(self):
        """Names bound to the extension: a module variable or self attributes."""
        names = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and node.value is self.ext_call:
                for t in node.targets:
                    names.add(self.seg(t))
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in names:
                for t in node.targets:
                    names.add(self.seg(t))
        return names

    def forward_call(self, functions):
        """The one extension call of ModelNew.forward: (function name, [argument kinds])."""
        cls = [n for n in self.tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelNew"]
        if not cls:
            refuse(self.path, None, "no class ModelNew: a KernelBench candidate defines ModelNew(nn.Module)")
        fwd = [n for n in cls[0].body if isinstance(n, ast.FunctionDef) and n.name == "forward"]
        if not fwd:
            refuse(self.path, cls[0].lineno, "ModelNew has no forward")
        fwd = fwd[0]
        params = [a.arg for a in fwd.args.args[1:]]
        if fwd.args.vararg or fwd.args.kwarg:
            refuse(self.path, fwd.lineno, "ModelNew.forward takes *args or **kwargs: name its inputs")
        if len(params) != self.op["nin"]:
            refuse(self.path, fwd.lineno, "ModelNew.forward takes %d inputs, the problem's get_inputs() gives %d"
                   % (len(params), self.op["nin"]))
        ext = self.ext_names()
        alias = {}   # local name -> what it holds
        found = None
        body = [s for s in fwd.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        for st in body:
            val = st.value if isinstance(st, (ast.Assign, ast.Return)) else None
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                v = val
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "contiguous" \
                        and not v.args and isinstance(v.func.value, ast.Name):
                    alias[st.targets[0].id] = alias.get(v.func.value.id, v.func.value.id)
                    continue
                if found is None and self.is_ext_call(v, ext, functions):
                    found = (v, st.targets[0].id)
                    continue
            if isinstance(st, ast.Return):
                if found is not None and isinstance(val, ast.Name) and val.id == found[1]:
                    continue
                if found is None and self.is_ext_call(val, ext, functions):
                    found = (val, None)
                    continue
            self.refuse_statement(st, found is not None)
        if found is None:
            refuse(self.path, fwd.lineno, "ModelNew.forward calls none of the extension's functions (%s)"
                   % ", ".join(functions))
        call = found[0]
        args = []
        for a in call.args:
            args.append(self.arg_kind(a, params, alias))
        if call.keywords:
            refuse(self.path, call.lineno, "keyword arguments in %s: pass them by position" % self.seg(call))
        return call.func.attr, args, call.lineno

    def is_ext_call(self, v, ext, functions):
        if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute)):
            return False
        if v.func.attr in functions and self.seg(v.func.value) in ext:
            return True
        return False

    def refuse_statement(self, st, after):
        s = self.seg(st)
        low = s.lower()
        if "stream" in low:
            why = "launches on a stream of its own"
        elif "synchronize" in low or "event" in low:
            why = "synchronises or records events"
        elif re.search(r"\btime\.|perf_counter|monotonic", s):
            why = "touches a timer"
        elif "thread" in low:
            why = "starts a thread"
        elif re.search(r"\b(torch|F|nn)\.", s) or re.search(r"\.(view|reshape|sum|mean|clone|to|t|transpose|permute)\(", s):
            why = "mixes torch calls into forward (kgate times the device code only; move the work into a kernel)"
        elif isinstance(st, (ast.If, ast.For, ast.While)):
            why = "has host control flow (kgate launches a fixed chain of kernels)"
        elif after:
            why = "does host work after the kernel (kgate takes the kernel's outputs as the op's)"
        else:
            why = "is host code kgate cannot map to a launch"
        refuse(self.path, st.lineno, "ModelNew.forward: `%s` %s; %s" % (s, why, SECURITY))

    def arg_kind(self, a, params, alias):
        if isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute) and a.func.attr == "contiguous" and not a.args:
            a = a.func.value
        if isinstance(a, ast.Name):
            n = alias.get(a.id, a.id)
            if n in params:
                return ("tensor", self.op["tensors"][params.index(n)]["name"])
            if n in self.op["vars"]:
                return ("int", n)
            if n in self.consts:
                v = self.consts[n]
                return ("int", str(v)) if type(v) is int else ("real", repr(float(v)))
            refuse(self.path, a.lineno, "argument `%s`: not an input of forward, a size of the problem or a "
                   "module constant" % n)
        if isinstance(a, ast.Attribute) and self.seg(a).startswith("self."):
            pname = self.seg(a)[5:]
            for t in self.op["tensors"]:
                if t["role"] == "param" and t["orig"] == pname:
                    return ("tensor", t["name"])
            if pname in getattr(self.prob, "buffers", []):
                refuse(self.path, a.lineno, "argument `%s`: a buffer of the Model; kgate generates the parameters "
                       "as inputs and leaves buffers to the Module, so a kernel cannot be handed one" % self.seg(a))
            refuse(self.path, a.lineno, "argument `%s`: the problem's Model has no parameter named %s "
                   "(kgate binds ModelNew's parameters to the Model's by name: %s)"
                   % (self.seg(a), pname, ", ".join(self.op["params"]) or "it has none"))
        if isinstance(a, ast.Constant) and type(a.value) in (int, float):
            return ("int", str(a.value)) if type(a.value) is int else ("real", repr(float(a.value)))
        refuse(self.path, a.lineno, "argument `%s`: kgate passes buffers, sizes and literals" % self.seg(a))


# ---------------------------------------------------------------- the candidate: its CUDA C

HOST_REFUSED = [
    (r"cudaStreamCreate\w*|getStreamFromPool|CUDAStreamGuard|cudaStreamWaitEvent|"
     r"cudaStream_t(?!\s+\w+\s*=\s*(?:at|c10)::cuda::getCurrentCUDAStream)", "launches on a stream of its own"),
    (r"cudaDeviceProp|cudaGetDeviceProperties|multiProcessorCount|cudaDeviceGetAttribute|cudaOccupancy\w*",
     "reads the device's properties (launch geometry must be an expression of the sizes)"),
    (r"cudaDeviceSynchronize|cudaStreamSynchronize|cudaEventSynchronize|\.synchronize\(", "synchronises"),
    (r"cudaEvent\w*|std::chrono|\bclock\s*\(|clock_gettime|gettimeofday", "touches a timer"),
    (r"cudaMalloc\w*|cudaFree\w*|CUDACachingAllocator|\bmalloc\s*\(|\bnew\s+\w", "allocates memory"),
    (r"cudaMemcpy\w*|cudaMemset\w*", "copies or sets memory from the host"),
    (r"std::thread|pthread_\w+|std::async", "starts a thread"),
    (r"cudaLaunch\w*|cudaGraph\w*|cuLaunch\w*", "launches through the runtime API, outside kgate's launch"),
    (r"AT_DISPATCH_\w+", "dispatches on the dtype in host code (write the kernel for the case's dtype)"),
    (r"\.item\s*<|\.item\s*\(|\.cpu\s*\(|\.to\s*\(", "reads device data on the host (data-dependent host logic)"),
]
DEVICE_REFUSED = [
    (r"\bmalloc\s*\(|\bfree\s*\(|\bnew\b", "allocates in device code"),
    (r"clock64\s*\(|\bclock\s*\(|globaltimer", "reads a clock in device code"),
    (r"\bprintf\s*\(", "prints from device code"),
]
PTR_DTYPES = {"float": "f32", "double": "f64", "at::Half": "f16", "c10::Half": "f16", "half": "f16",
              "__half": "f16", "at::BFloat16": "bf16", "c10::BFloat16": "bf16", "__nv_bfloat16": "bf16"}
ELEM_SIZE = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2}


def strip_comments(s):
    """Comments as blanks, line breaks kept (line numbers stay)."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"//[^\n]*|/\*.*?\*/", blank, s, flags=re.S)


def match_brace(s, i):
    """Index just past the } closing the { at s[i]."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "{":
            depth += 1
        elif s[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(s)


class CudaSource:
    def __init__(self, path, text, line0):
        self.path, self.raw, self.line0 = path, text, line0
        self.text = strip_comments(text)

    def line(self, off):
        return self.line0 + self.text.count("\n", 0, off)

    def kernels(self):
        out = {}
        for m in re.finditer(r"(template\s*<[^>]*>\s*)?(extern\s+\"C\"\s+)?__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?"
                             r"void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(([^)]*)\)", self.text):
            if m.group(1):
                refuse(self.path, self.line(m.start()), "template kernel %s: kgate launches a kernel by its "
                       "extern \"C\" name; write it for the case's dtype without a template" % m.group(3))
            params = [p.strip() for p in m.group(4).split(",") if p.strip()]
            body_start = self.text.find("{", m.end())
            body_end = match_brace(self.text, body_start)
            body = self.text[body_start:body_end]
            for pat, why in DEVICE_REFUSED:
                d = re.search(pat, body)
                if d:
                    refuse(self.path, self.line(body_start + d.start()), "kernel %s %s (`%s`)"
                           % (m.group(3), why, d.group(0)))
            out[m.group(3)] = {"params": params, "start": m.start(), "line": self.line(m.start())}
        return out

    def host_names(self):
        """The names of the source's functions that are not kernels or device functions."""
        names = set()
        for m in re.finditer(r"(?:^|\n)[ \t]*((?:static\s+|inline\s+)*[\w:<>, ]+?[\s&*]+)(\w+)\s*\([^)]*\)\s*\{",
                             self.text):
            if not re.search(r"__global__|__device__", m.group(1)) and m.group(2) not in ("if", "for", "while",
                                                                                         "switch"):
                names.add(m.group(2))
        return names

    def host_function(self, name):
        m = re.search(r"(?:^|\n)[ \t]*((?:static\s+|inline\s+)*[\w:<>, ]+?[\s&*]+)%s\s*\(([^)]*)\)\s*\{" % re.escape(name),
                      self.text)
        if not m:
            refuse(self.path, self.line0, "no host function %s in the CUDA source (load_inline's functions name it)"
                   % name)
        start = m.start() if self.text[m.start()] != "\n" else m.start() + 1
        b = self.text.find("{", m.end() - 1)
        end = match_brace(self.text, b)
        return {"ret": m.group(1).strip(), "params": [p.strip() for p in m.group(2).split(",") if p.strip()],
                "body": self.text[b + 1:end - 1], "body_off": b + 1, "start": start, "end": end,
                "line": self.line(start)}

    def device_text(self, host_spans):
        """The source without host functions and torch's headers, each __global__ made extern "C";
        line numbers kept, and a #line directive maps them to the candidate file."""
        t = self.raw
        # blank the host functions (from the comment-free text's offsets: same lengths)
        chars = list(t)
        for a, b in host_spans:
            for i in range(a, b):
                if chars[i] != "\n":
                    chars[i] = " "
        t = "".join(chars)
        lines = t.split("\n")
        keep = []
        for ln in lines:
            s = ln.strip()
            if re.match(r"#\s*include\s*[<\"](torch/|ATen/|c10/|cuda_runtime|cuda\.h|vector|iostream|pybind11|"
                        r"stdio\.h|stdlib\.h|math\.h|cmath|cstdio|cstdlib|string|algorithm|float\.h|cfloat|"
                        r"limits\.h|climits)", s) or \
                    (s.startswith("#define") and re.search(r"TORCH_|AT_|torch::|at::", s)):
                keep.append("")
            else:
                keep.append(ln)
        t = "\n".join(keep)
        # NVRTC has no C library headers: the math functions are its own; the limits a kernel may use
        limits = []
        for name, value in (("FLT_MAX", "3.402823466e+38F"), ("FLT_MIN", "1.175494351e-38F"),
                            ("DBL_MAX", "1.7976931348623158e+308"), ("INT_MAX", "2147483647"),
                            ("INFINITY", "__int_as_float(0x7f800000)")):
            if re.search(r"\b%s\b" % name, t):
                limits.append("#ifndef %s\n#define %s %s\n#endif" % (name, name, value))
        self.prelude = "\n".join(limits)
        t = re.sub(r"(?<![\"\w])(__global__)", r'extern "C" \1', t)
        t = t.replace('extern "C" extern "C"', 'extern "C"')
        return t


class HostParser:
    """The host wrapper, statement by statement: tensor allocations, integer locals, launches."""

    def __init__(self, src, fn, tensor_args, scalar_args, op):
        self.src, self.fn, self.op = src, fn, op
        self.tensors = dict(tensor_args)     # C++ name -> op tensor name
        self.ints = dict(scalar_args)        # C++ name -> ("int"|"real", text)
        self.outputs = {}                    # C++ name -> dims (list of expressions)
        self.alloc_off = {}                  # C++ name -> offset of its allocation in the body
        self.notes = []                      # what the import drops, said on stderr
        self.launches = []
        self.returned = []
        self.dims = {t["name"]: t["dims"] for t in op["tensors"]}
        self.grids = {}
        for m in re.finditer(r"(?m)^[ \t]*#\s*define\s+(\w+)\s+\(?\s*(\d+)\s*\)?[ \t]*$", src.text):
            self.ints.setdefault(m.group(1), ("int", m.group(2)))
        for m in re.finditer(r"(?m)^(?:static\s+)?(?:constexpr|const)\s+(?:int|unsigned|unsigned int|int64_t|long|"
                             r"size_t)\s+(\w+)\s*=\s*(\d+)\s*;", src.text):
            self.ints.setdefault(m.group(1), ("int", m.group(2)))

    def fail(self, off, what):
        refuse(self.src.path, self.src.line(self.fn["body_off"] + off), what)

    def statements(self):
        body = self.fn["body"]
        i, depth, start = 0, 0, 0
        while i < len(body):
            c = body[i]
            if c in "({[":
                depth += 1
            elif c in ")}]":
                depth -= 1
            elif c == ";" and depth == 0:
                yield start, body[start:i]
                start = i + 1
            i += 1
        if body[start:].strip():
            yield start, body[start:]

    def scan(self):
        """The statements, each refused when it does what kgate does not trust host code to do."""
        out = []
        for off, st in self.statements():
            lead = len(st) - len(st.lstrip())
            off += lead
            s = " ".join(st.split())
            if not s:
                continue
            for pat, why in HOST_REFUSED:
                m = re.search(pat, s)
                if m:
                    self.fail(off, "host code %s (`%s`): kgate refuses host code that does this; %s"
                              % (why, m.group(0), SECURITY))
            if re.match(r"(if|for|while|switch|do)\b", s):
                self.fail(off, "host control flow (`%s`): kgate launches a fixed chain of kernels whose geometry "
                          "is an expression of the sizes; %s" % (s[:60], SECURITY))
            out.append((off, s))
        return out

    def run(self):
        for off, s in self.scan():
            self.statement(off, s, 0)
        if not self.launches:
            self.fail(0, "the host function %s launches no kernel" % self.fn["name"])
        if not self.returned:
            self.fail(len(self.fn["body"]), "the host function returns no tensor kgate can take as the op's output")

    def statement(self, off, s, depth):
        if re.match(r"[A-Z_0-9]*CHECK[A-Z_0-9]*\s*\(|TORCH_CHECK|AT_ASSERT|cudaGetLastError\s*\(\s*\)$", s) or \
                re.match(r"(const\s+)?(at::cuda::|c10::cuda::)?OptionalCUDAGuard\b", s) or \
                re.match(r"(const\s+)?(auto|cudaStream_t)\s+\w+\s*=\s*(at::cuda::|c10::cuda::)getCurrentCUDAStream\(\)", s):
            if "getCurrentCUDAStream" in s:
                self.ints[re.match(r"(?:const\s+)?(?:auto|cudaStream_t)\s+(\w+)", s).group(1)] = ("stream", "")
            return
        if self.launch(off, s) or self.alloc(off, s) or self.decl(off, s):
            return
        if depth == 0 and self.ret(off, s):
            return
        m = re.match(r"(\w+)\s*\((.*)\)$", s)
        if m and m.group(1) in self.src.host_names() and depth < 3:
            self.inline(off, m.group(1), split_top(m.group(2)), depth)
            return
        if depth > 0 and s.startswith("return"):
            return
        self.fail(off, "host statement kgate cannot map to a launch: `%s`" % s[:100])

    def inline(self, off, name, args, depth):
        """A call of another host function of the source, as a statement: its statements with its
        parameters replaced by the call's arguments (its return value unused)."""
        callee = self.src.host_function(name)
        callee["name"] = name
        params = [re.findall(r"\w+", p)[-1] for p in callee["params"]]
        if len(params) != len(args):
            self.fail(off, "%s takes %d arguments, the call passes %d" % (name, len(params), len(args)))
        sub = HostParser(self.src, callee, {}, {}, self.op)
        for _, st in sub.scan():
            for p, a in zip(params, args):
                st = re.sub(r"\b%s\b" % re.escape(p), a.strip(), st)
            self.statement(off, st, depth + 1)

    def alloc(self, off, s):
        m = re.match(r"(?:const\s+)?(?:auto|torch::Tensor|at::Tensor)\s+(\w+)\s*=\s*(?:torch|at)::(\w+)\s*\((.*)\)$", s)
        if not m:
            return False
        name, fn, args = m.group(1), m.group(2), m.group(3)
        self.alloc_off[name] = off
        if fn in ("zeros", "zeros_like", "ones", "ones_like", "full", "full_like"):
            self.notes.append("%s:%d: the host's fill of %s (torch::%s) is dropped: kgate poisons the outputs before "
                              "every checked run, so a kernel that leaves elements to the fill fails its checks"
                              % (self.src.path, self.src.line(self.fn["body_off"] + off), name, fn))
            fn = {"zeros_like": "empty_like", "ones_like": "empty_like", "full_like": "empty_like"}.get(fn, "empty")
        if fn == "empty_like":
            src = args.split(",")[0].strip()
            if src not in self.tensors:
                self.fail(off, "torch::empty_like(%s): %s is not a tensor argument" % (src, src))
            self.outputs[name] = self.dims[self.tensors[src]]
            return True
        if fn == "empty":
            m2 = re.match(r"\{(.*?)\}\s*,", args)
            if not m2:
                self.fail(off, "torch::empty(%s): give the sizes as {d0, d1, ...}" % args[:60])
            dims = [self.expr(off, e) for e in split_top(m2.group(1))]
            self.outputs[name] = dims
            return True
        self.fail(off, "host code calls torch::%s: kgate takes kernels only; %s" % (fn, SECURITY))

    def decl(self, off, s):
        m = re.match(r"(?:const\s+)?dim3\s+(\w+)\s*(?:\((.*)\)|\{(.*)\}|=\s*dim3\s*\((.*)\))$", s)
        if m:
            parts = m.group(2) or m.group(3) or m.group(4) or "1"
            self.grids[m.group(1)] = [self.expr(off, e) for e in split_top(parts)]
            return True
        m = re.match(r"(?:const\s+|constexpr\s+|static\s+)*(int|int32_t|int64_t|long|long long|unsigned|unsigned int|"
                     r"size_t|auto|uint32_t|float|double)\s+(\w+)\s*=\s*(.+)$", s)
        if not m:
            return False
        ty, name, rhs = m.groups()
        if ty in ("float", "double"):
            lit = re.match(r"^([0-9.]+(?:[eE][-+]?\d+)?)f?$", rhs)
            if not lit:
                self.fail(off, "the float %s = %s: a real computed on the host is not a kgate argument; pass a "
                          "literal, or compute it in the kernel" % (name, rhs[:60]))
            self.ints[name] = ("real", repr(float(lit.group(1))))
            return True
        self.ints[name] = ("int", self.expr(off, rhs))
        return True

    def launch(self, off, s):
        m = re.match(r"(\w+)\s*(<[^<>]*>)?\s*<<<(.*?)>>>\s*\((.*)\)$", s)
        if not m:
            return False
        name, tmpl, cfg, args = m.groups()
        if tmpl:
            self.fail(off, "a template launch %s%s: kgate launches kernels by an extern \"C\" name" % (name, tmpl))
        cfg = split_top(cfg)
        if len(cfg) == 4:
            st = cfg[3].strip()
            if not (st in self.ints and self.ints[st][0] == "stream") and \
                    not re.match(r"(at::cuda::|c10::cuda::)getCurrentCUDAStream\(\)$", st) and st != "0":
                self.fail(off, "the launch of %s on stream `%s`: a stream of its own escapes kgate's timing; %s"
                          % (name, st, SECURITY))
        if len(cfg) not in (2, 3, 4):
            self.fail(off, "the launch of %s: <<<grid, block[, shared[, stream]]>>>" % name)
        launch = {"kernel": name, "grid": self.geom(off, cfg[0]), "block": self.geom(off, cfg[1]),
                  "shared": self.expr(off, cfg[2]) if len(cfg) >= 3 else "0", "args": [], "off": off}
        for a in split_top(args):
            launch["args"].append(self.karg(off, a.strip()))
        self.launches.append(launch)
        return True

    def ret(self, off, s):
        m = re.match(r"return\s+(?:std::vector<(?:torch|at)::Tensor>\s*|std::make_tuple\s*\(|\{)?(.*?)[)}]?$", s)
        if not m:
            return False
        names = [x.strip() for x in split_top(m.group(1))]
        for n in names:
            if n not in self.outputs:
                self.fail(off, "returns `%s`, not a tensor the host function allocated: kgate's outputs are "
                          "buffers of their own (an input written in place is refused)" % n)
            self.returned.append(n)
        return True

    def geom(self, off, e):
        e = e.strip()
        if e in self.grids:
            return self.grids[e]
        m = re.match(r"dim3\s*\((.*)\)$", e)
        if m:
            return [self.expr(off, x) for x in split_top(m.group(1))]
        return [self.expr(off, e)]

    def karg(self, off, a):
        m = re.match(r"^(?:\(\s*[\w:\s]+\*\s*\)|reinterpret_cast<[\w:\s*]+>\()?\s*(\w+)\s*\.\s*(?:data_ptr|data|"
                     r"mutable_data_ptr|const_data_ptr)\s*(?:<\s*([\w:]+)\s*>)?\s*\(\s*\)\s*\)?$", a)
        if m:
            t, ty = m.group(1), m.group(2)
            if t in self.tensors:
                buf = self.tensors[t]
            elif t in self.outputs:
                buf = t
            else:
                self.fail(off, "kernel argument `%s`: %s is not a tensor argument or an output" % (a, t))
            if ty is not None and PTR_DTYPES.get(ty) not in (None, KG_DTYPES[self.op["dtype"]][0]):
                self.fail(off, "kernel argument `%s` reads %s as %s: the problem's tensors are %s" %
                          (a, t, ty, self.op["dtype"]))
            return ("buffer", buf)
        if a in self.ints and self.ints[a][0] == "real":
            return ("real", self.ints[a][1])
        if re.match(r"^[0-9.]+(?:[eE][-+]?\d+)?f$|^[0-9]*\.[0-9]+(?:[eE][-+]?\d+)?$", a):
            return ("real", repr(float(a.rstrip("f"))))
        return ("int", self.expr(off, a))

    def expr(self, off, e):
        try:
            return ExprParser(e, self).parse()
        except ValueError as x:
            self.fail(off, "`%s`: %s: launch geometry and arguments must be integer expressions of the sizes"
                      % (e.strip()[:80], x))


def split_top(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "({[<" and not (ch == "<" and False):
            depth += ch in "({["
        if ch in ")}]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


class ExprParser:
    """C++ integer expressions of the host wrapper as kgate expressions (src/plan/expr.h)."""
    TOK = re.compile(r"\s*(?:(\d+)[uUlL]*|(\w+(?:::\w+)*)|(<<|>>|[-+*/%(),.<>\[\]?:]))")

    def __init__(self, text, host):
        self.toks = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = self.TOK.match(text, pos)
            if not m or m.end() == pos:
                raise ValueError("cannot read `%s`" % text[pos:pos + 20])
            pos = m.end()
            if m.group(1):
                self.toks.append(("num", m.group(1)))
            elif m.group(2):
                self.toks.append(("id", m.group(2)))
            else:
                self.toks.append(("op", m.group(3)))
        self.i = 0
        self.host = host

    def peek(self, v=None):
        if self.i >= len(self.toks):
            return None if v is None else False
        return self.toks[self.i] if v is None else self.toks[self.i][1] == v

    def take(self, v=None):
        t = self.peek()
        if t is None or (v is not None and t[1] != v):
            raise ValueError("expected `%s`" % v if v else "unexpected end")
        self.i += 1
        return t

    def parse(self):
        e = self.sum()
        if self.peek() is not None:
            raise ValueError("`%s` is not part of kgate's grammar" % self.peek()[1])
        return e

    def sum(self):
        e = self.term()
        while self.peek("+") or self.peek("-"):
            op = self.take()[1]
            e = "%s%s%s" % (e, op, self.term())
        return e

    def term(self):
        e = self.unary()
        while self.peek("*") or self.peek("/") or self.peek("%"):
            op = self.take()[1]
            r = self.unary()
            e = "%s%s%s" % (e, op, r)
        return e

    def unary(self):
        if self.peek("-"):
            self.take()
            return "-" + self.unary()
        if self.peek("("):
            # a C cast (int)x, or a parenthesised expression
            if self.i + 2 < len(self.toks) and self.toks[self.i + 1][0] == "id" and self.toks[self.i + 2][1] == ")" \
                    and self.toks[self.i + 1][1] in ("int", "long", "int64_t", "int32_t", "unsigned", "size_t"):
                self.i += 3
                return self.unary()
            self.take("(")
            e = self.sum()
            self.take(")")
            return "(%s)" % e
        return self.postfix()

    def postfix(self):
        t = self.take()
        if t[0] == "num":
            return t[1]
        if t[0] != "id":
            raise ValueError("`%s` where a value was expected" % t[1])
        name = t[1]
        if name in ("static_cast", "int64_t", "int", "long"):
            if self.peek("<"):
                self.take("<")
                while not self.peek(">"):
                    self.take()
                self.take(">")
            self.take("(")
            e = self.sum()
            self.take(")")
            return e
        if name in ("std::min", "min", "std::max", "max", "ceil_div", "CEIL_DIV", "cdiv", "DIV_UP", "div_up",
                    "at::ceil_div", "at::cuda::ATenCeilDiv"):
            self.take("(")
            a = self.sum()
            self.take(",")
            b = self.sum()
            self.take(")")
            fn = "min" if name.endswith("min") else "max" if name.endswith("max") else "ceildiv"
            return "%s(%s,%s)" % (fn, a, b)
        if name == "sizeof":
            self.take("(")
            ty = self.take()[1]
            self.take(")")
            size = {"float": 4, "double": 8, "int": 4, "half": 2, "__half": 2, "at::Half": 2, "long": 8}.get(ty)
            if size is None:
                raise ValueError("sizeof(%s)" % ty)
            return str(size)
        h = self.host
        if self.peek("."):
            self.take(".")
            meth = self.take()[1]
            if name in h.grids and meth in ("x", "y", "z"):
                g = h.grids[name]
                k = "xyz".index(meth)
                return self.paren(g[k]) if k < len(g) else "1"
            if name in h.tensors or name in h.outputs:
                dims = h.dims[h.tensors[name]] if name in h.tensors else h.outputs[name]
                if meth in ("size", "sizes"):
                    if meth == "sizes":
                        self.take("(")
                        self.take(")")
                        self.take("[")
                        k = self.index(len(dims))
                        self.take("]")
                    else:
                        self.take("(")
                        k = self.index(len(dims))
                        self.take(")")
                    return self.paren(dims[k])
                if meth == "numel":
                    self.take("(")
                    self.take(")")
                    return "*".join(self.paren(d) for d in dims) or "1"
                if meth == "dim":
                    self.take("(")
                    self.take(")")
                    return str(len(dims))
            raise ValueError("`%s.%s`" % (name, meth))
        if name in h.ints:
            kind, text = h.ints[name]
            if kind != "int":
                raise ValueError("%s is not an integer" % name)
            return self.paren(text)
        if name in self.host.op["vars"]:
            return name
        raise ValueError("`%s` is not a size kgate knows (a tensor's size, a local integer or a literal)" % name)

    def index(self, n):
        neg = False
        if self.peek("-"):
            self.take("-")
            neg = True
        t = self.take()
        if t[0] != "num":
            raise ValueError("a tensor size with index `%s` (a literal index)" % t[1])
        k = int(t[1])
        k = n - k if neg else k
        if not 0 <= k < n:
            raise ValueError("size index %s out of range (%d dimensions)" % (t[1], n))
        return k

    @staticmethod
    def paren(e):
        return e if re.match(r"^[\w]+$", e) or wrapped(e) else "(%s)" % e


def kernel_param_type(decl):
    d = decl.replace("const", "").replace("__restrict__", "").strip()
    if "*" in d:
        return "ptr"
    if re.search(r"\b(int64_t|long|size_t|ptrdiff_t|uint64_t)\b", d):
        return "i64"
    if re.search(r"\bdouble\b", d):
        return "f64"
    if re.search(r"\bfloat\b", d):
        return "f32"
    return "i32"


def precheck(cpath):
    """The refusals that need no problem, before torch is imported (a refused candidate is said at
    once): an autotuner, the load_inline source's kernels and host code, forward's statements."""
    cand = Candidate(cpath, None, {"vars": [], "dtype": "float32", "tensors": [], "nin": 0, "params": []})
    fwd = [m for c in cand.tree.body if isinstance(c, ast.ClassDef) and c.name == "ModelNew"
           for m in c.body if isinstance(m, ast.FunctionDef) and m.name == "forward"]
    for st in (fwd[0].body if fwd else []):
        if not isinstance(st, (ast.Assign, ast.Return, ast.Expr)) or \
                re.search(r"stream|synchronize|[Ee]vent|\btime\.|perf_counter|thread", cand.seg(st)):
            cand.refuse_statement(st, False)
    if cand.jit_kernels():
        return
    src_text, line0, functions = cand.load_inline()
    cu = CudaSource(cpath, src_text, line0)
    cu.kernels()
    for name in functions:
        fn = cu.host_function(name)
        fn["name"] = name
        HostParser(cu, fn, {}, {}, cand.op).scan()


def import_candidate(cpath, prob, op, names):
    cand = Candidate(cpath, prob, op)
    src_text, line0, functions = cand.load_inline()
    fname, fargs, fline = cand.forward_call(functions)
    cu = CudaSource(cpath, src_text, line0)
    kernels = cu.kernels()
    if not kernels:
        refuse(cpath, line0, "the CUDA source defines no __global__ kernel")
    fn = cu.host_function(fname)
    fn["name"] = fname
    if len(fn["params"]) != len(fargs):
        refuse(cpath, fline, "forward passes %d arguments to %s, which takes %d" % (len(fargs), fname, len(fn["params"])))
    tensor_args, scalar_args = {}, {}
    for decl, (kind, val) in zip(fn["params"], fargs):
        pname = re.findall(r"\w+", decl)[-1]
        is_tensor = "Tensor" in decl
        if is_tensor != (kind == "tensor"):
            refuse(cpath, fn["line"], "parameter `%s` of %s gets `%s` from forward" % (decl, fname, val))
        if is_tensor:
            tensor_args[pname] = val
        else:
            scalar_args[pname] = (kind, val)
    host = HostParser(cu, fn, tensor_args, scalar_args, op)
    host.run()
    outs = [t for t in op["tensors"] if t["role"] == "output"]
    if len(host.returned) != len(outs):
        refuse(cpath, fn["line"], "%s returns %d tensors, the problem's forward %d" % (fname, len(host.returned), len(outs)))
    rename = {}
    for cname, t in zip(host.returned, outs):
        d = host.outputs[cname]
        if [str(x) for x in d] != [str(x) for x in t["dims"]] and not same_values(d, t["dims"], op):
            refuse(cpath, fn["line"], "%s allocates %s as [%s]; the problem's output is [%s]"
                   % (fname, cname, ", ".join(d), ", ".join(t["dims"])))
        rename[cname] = t["name"]
    for cname in host.outputs:
        if cname not in rename:
            refuse(cpath, cu.line(fn["body_off"] + host.alloc_off.get(cname, 0)), "%s allocates %s and does not "
                   "return it: a temporary tensor between launches "
                   "(kgate gives an arm the op's buffers only)" % (fname, cname))
    if len(host.launches) > 3:
        refuse(cpath, fn["line"], "%d launches: kgate chains at most 3" % len(host.launches))
    launches = []
    for L in host.launches:
        k = kernels.get(L["kernel"])
        if k is None:
            refuse(cpath, host.src.line(fn["body_off"] + L["off"]), "launches %s, which is not a __global__ kernel "
                   "of the source" % L["kernel"])
        if len(k["params"]) != len(L["args"]):
            refuse(cpath, k["line"], "kernel %s takes %d parameters, the launch passes %d"
                   % (L["kernel"], len(k["params"]), len(L["args"])))
        args = []
        for decl, (kind, val) in zip(k["params"], L["args"]):
            ty = kernel_param_type(decl)
            if kind == "buffer":
                if ty != "ptr":
                    refuse(cpath, k["line"], "kernel %s parameter `%s` gets a buffer" % (L["kernel"], decl))
                args.append(rename.get(val, val))
            elif kind == "real":
                if ty not in ("f32", "f64"):
                    refuse(cpath, k["line"], "kernel %s parameter `%s` gets the real %s" % (L["kernel"], decl, val))
                args.append(val + (":f64" if ty == "f64" else ""))
            else:
                if ty == "ptr":
                    refuse(cpath, k["line"], "kernel %s parameter `%s` gets the integer %s" % (L["kernel"], decl, val))
                if ty in ("f32", "f64"):
                    refuse(cpath, k["line"], "kernel %s parameter `%s` gets the integer %s: pass a real literal"
                           % (L["kernel"], decl, val))
                args.append(unwrap(val.replace(" ", "")) + (":i64" if ty == "i64" else ""))
        launches.append({"kernel": L["kernel"], "grid": ", ".join(unwrap(g) for g in L["grid"]),
                         "block": ", ".join(unwrap(b) for b in L["block"]), "shared": unwrap(L["shared"]),
                         "args": ", ".join(args)})
    spans = [(fn["start"], fn["end"])]
    # every host function (the wrappers, a host cdiv): NVRTC compiles device code only
    for hname in cu.host_names():
        h = cu.host_function(hname)
        spans.append((h["start"], h["end"]))
    device = cu.device_text(spans)
    for n in host.notes:
        sys.stderr.write("kgate import: note: %s\n" % n)
    return launches, device, line0, cu.prelude


def same_values(a, b, op):
    env = dict(op["values"])
    try:
        return [eval_expr(x, env) for x in a] == [eval_expr(x, env) for x in b]
    except Exception:
        return False


def wrapped(e):
    """1 when e is one parenthesised expression: (a+b), not (a)+(b)."""
    if not (e.startswith("(") and e.endswith(")")):
        return False
    depth = 0
    for i, ch in enumerate(e):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and i < len(e) - 1:
            return False
    return True


def unwrap(e):
    while wrapped(e):
        e = e[1:-1]
    return e


def eval_expr(e, env):
    py = e.replace("/", "//")
    return eval(py, {"__builtins__": {}}, dict(env, ceildiv=lambda a, b: -(-a // b), min=min, max=max))


# ---------------------------------------------------------------- the candidate: Triton

TRITON_MARK = "; ---- kgate import: the Triton candidate's arm ----"
TRITON_TYPES = {"f32": "*fp32", "f16": "*fp16", "bf16": "*bf16", "f64": "*fp64"}

TRITON_SCRIPT = r'''"""%(script)s: compiles the Triton kernel of %(cand)s for kgate and writes the plan's candidate arm.

Written by `kgate import kernelbench`.  Run it where Triton and the GPU are, with kgate's Python
package importable (PYTHONPATH=KGATE/python, or pip install KGATE/python):
    python3 %(script)s
It runs the candidate's @triton.jit functions only (KERNELS below, copied from the candidate and
written to %(kfile)s),
compiles the launch forward makes with kgate.triton.compile_arm (docs/images.md, "Triton"), writes
%(stem)s_candidate.cubin beside the plan and the arm's section at the end of %(plan)s.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = %(kernels)r
LAUNCH = %(launch)r
EXPRS = %(exprs)r
MARK = %(mark)r


def main():
    import importlib.util
    import kgate.triton
    # Triton reads a kernel's source from its file: the kernels as a module of their own
    path = os.path.join(HERE, %(kfile)r)
    with open(path, "w", encoding="utf-8") as f:
        f.write(KERNELS)
    spec = importlib.util.spec_from_file_location("kgate_triton_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    arm = kgate.triton.compile_arm(getattr(mod, LAUNCH["kernel"]), op=LAUNCH["op"], signature=LAUNCH["signature"],
                                   grid=LAUNCH["grid"], out_dir=HERE, constexprs=LAUNCH["constexprs"],
                                   args=LAUNCH["args"], num_warps=LAUNCH["num_warps"],
                                   num_stages=LAUNCH["num_stages"], name=%(cubin)r)
    lines = ["; " + c for c in arm.get("#", [])] + ["[arm candidate]"]
    for k, v in arm.items():
        if k == "#":
            continue
        if k == "image":
            v = os.path.basename(str(v))
        if k == "args":
            v = ", ".join(EXPRS.get(a.split(":")[0], a.split(":")[0]) + (":" + a.split(":")[1] if ":" in a else "")
                          for a in (x.strip() for x in str(v).split(",")))
        lines.append("%%s = %%s" %% (k, v))
    plan = os.path.join(HERE, %(plan)r)
    text = open(plan, encoding="utf-8").read()
    text = text[:text.index(MARK) + len(MARK)] + "\n" + "\n".join(lines) + "\n"
    with open(plan, "w", encoding="utf-8") as f:
        f.write(text)
    print("%%s: [arm candidate] written (%%s)" %% (plan, os.path.basename(str(arm["image"]))))


if __name__ == "__main__":
    sys.exit(main())
'''


class PyExpr:
    """Python size expressions of a Triton candidate's forward as kgate expressions."""

    def __init__(self, cand, tensors, ints, meta=None):
        self.cand, self.tensors, self.ints, self.meta = cand, tensors, ints, meta or {}

    def dims(self, name):
        return self.tensors[name]

    def __call__(self, n):
        c = self.cand
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return str(n.value)
        if isinstance(n, ast.Name):
            if n.id in self.ints:
                return ExprParser.paren(self.ints[n.id])
            if n.id in c.op["vars"]:
                return n.id
            if n.id in c.consts and type(c.consts[n.id]) is int:
                return str(c.consts[n.id])
            raise ValueError("`%s` is not a size kgate knows" % n.id)
        if isinstance(n, ast.BinOp):
            ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "/", ast.Mod: "%"}
            if type(n.op) not in ops:
                raise ValueError("the operator in `%s`" % c.seg(n))
            a, b = self(n.left), self(n.right)
            if type(n.op) in (ast.Mult, ast.FloorDiv, ast.Mod):
                a, b = ExprParser.paren(a), ExprParser.paren(b)
            return "%s%s%s" % (a, ops[type(n.op)], b)
        if isinstance(n, ast.Subscript):
            base = c.seg(n.value)
            idx = n.slice.value if isinstance(n.slice, ast.Index) else n.slice
            if isinstance(n.value, ast.Attribute) and n.value.attr == "shape" and c.seg(n.value.value) in self.tensors:
                dims = self.tensors[c.seg(n.value.value)]
                return ExprParser.paren(dims[self.index(idx, len(dims))])
            if base in ("meta", "META") and isinstance(idx, ast.Constant) and idx.value in self.meta:
                return str(self.meta[idx.value])
            raise ValueError("`%s`" % c.seg(n))
        if isinstance(n, ast.Call):
            f = c.seg(n.func)
            if f in ("triton.cdiv", "cdiv", "min", "max") and len(n.args) == 2:
                fn = "ceildiv" if f.endswith("cdiv") else f
                return "%s(%s,%s)" % (fn, self(n.args[0]), self(n.args[1]))
            if f == "int" and len(n.args) == 1:
                return self(n.args[0])
            if isinstance(n.func, ast.Attribute) and c.seg(n.func.value) in self.tensors:
                dims = self.tensors[c.seg(n.func.value)]
                if n.func.attr == "numel" and not n.args:
                    return "*".join(ExprParser.paren(d) for d in dims) or "1"
                if n.func.attr == "size" and len(n.args) == 1:
                    return ExprParser.paren(dims[self.index(n.args[0], len(dims))])
            raise ValueError("`%s`" % c.seg(n))
        raise ValueError("`%s`" % c.seg(n))

    def index(self, idx, n):
        if isinstance(idx, ast.UnaryOp) and isinstance(idx.op, ast.USub) and isinstance(idx.operand, ast.Constant):
            k = n - idx.operand.value
        elif isinstance(idx, ast.Constant) and type(idx.value) is int:
            k = idx.value
        else:
            raise ValueError("a size index that is not a literal")
        if not 0 <= k < n:
            raise ValueError("size index out of range")
        return k


def triton_forward(cpath, cand, op, jits):
    """ModelNew.forward of a Triton candidate, statement by statement: the outputs it allocates,
    its sizes and grids, its one launch and what it returns."""
    cls = [n for n in cand.tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelNew"]
    if not cls:
        refuse(cpath, None, "no class ModelNew: a KernelBench candidate defines ModelNew(nn.Module)")
    fwd = [n for n in cls[0].body if isinstance(n, ast.FunctionDef) and n.name == "forward"]
    if not fwd:
        refuse(cpath, cls[0].lineno, "ModelNew has no forward")
    fwd = fwd[0]
    params = [a.arg for a in fwd.args.args[1:]]
    if len(params) != op["nin"]:
        refuse(cpath, fwd.lineno, "ModelNew.forward takes %d inputs, the problem's get_inputs() gives %d"
               % (len(params), op["nin"]))
    ins = [t for t in op["tensors"] if t["role"] == "input"]
    tensors = {p: t["dims"] for p, t in zip(params, ins)}
    bufname = {p: t["name"] for p, t in zip(params, ins)}
    outs, ints, grids, launch, returned = {}, {}, {}, None, []
    ex = PyExpr(cand, tensors, ints)

    def expr(node):
        try:
            return ex(node)
        except ValueError as e:
            refuse(cpath, node.lineno, "%s: launch geometry and arguments must be integer expressions of the sizes"
                   % e)

    for st in fwd.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue
        v = getattr(st, "value", None)
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            t = st.targets[0].id
            f = cand.seg(v.func) if isinstance(v, ast.Call) else ""
            if f in ("torch.empty_like",) and v.args and cand.seg(v.args[0]) in tensors:
                outs[t] = tensors[cand.seg(v.args[0])]
                tensors[t] = outs[t]
                continue
            if f == "torch.empty" and v.args:
                shape = v.args[0].elts if len(v.args) == 1 and isinstance(v.args[0], (ast.Tuple, ast.List)) else v.args
                outs[t] = [expr(e) for e in shape]
                tensors[t] = outs[t]
                continue
            if f in ("torch.zeros", "torch.zeros_like", "torch.ones", "torch.full", "torch.ones_like"):
                sys.stderr.write("kgate import: note: %s:%d: the fill of %s (%s) is dropped: kgate poisons the outputs "
                                 "before every checked run, so a kernel that leaves elements to the fill fails its "
                                 "checks\n" % (cpath, st.lineno, t, f))
                f = "torch.empty_like" if f.endswith("_like") else "torch.empty"
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "contiguous" \
                    and cand.seg(v.func.value) in tensors:
                tensors[t] = tensors[cand.seg(v.func.value)]
                bufname[t] = bufname.get(cand.seg(v.func.value), cand.seg(v.func.value))
                continue
            if isinstance(v, (ast.Tuple, ast.List)):
                grids[t] = [expr(e) for e in v.elts]
                continue
            if isinstance(v, ast.Lambda):
                grids[t] = ("lambda", v)
                continue
            if not isinstance(v, ast.Call) or f in ("triton.cdiv", "min", "max", "int") or \
                    (isinstance(v.func, ast.Attribute) and v.func.attr in ("numel", "size")):
                ints[t] = expr(v)
                continue
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Tuple) and \
                isinstance(v, ast.Attribute) and v.attr == "shape" and cand.seg(v.value) in tensors:
            dims = tensors[cand.seg(v.value)]
            if len(st.targets[0].elts) != len(dims):
                refuse(cpath, st.lineno, "unpacks %d sizes of a %d-dimensional tensor" % (len(st.targets[0].elts),
                                                                                      len(dims)))
            for e, d in zip(st.targets[0].elts, dims):
                ints[cand.seg(e)] = d
            continue
        if isinstance(st, ast.Expr) and isinstance(v, ast.Call) and isinstance(v.func, ast.Subscript) and \
                cand.seg(v.func.value) in jits:
            if launch is not None:
                refuse(cpath, st.lineno, "a second kernel launch: kgate imports one Triton launch per candidate")
            launch = (st, v)
            continue
        if isinstance(st, ast.Return) and launch is not None:
            names_r = v.elts if isinstance(v, ast.Tuple) else [v]
            for n in names_r:
                if cand.seg(n) not in outs:
                    refuse(cpath, st.lineno, "returns `%s`, not a tensor forward allocated as an output" % cand.seg(n))
                returned.append(cand.seg(n))
            continue
        cand.refuse_statement(st, launch is not None)
    if launch is None:
        refuse(cpath, fwd.lineno, "ModelNew.forward launches no @triton.jit kernel (kernel[grid](...))")
    return fwd, tensors, bufname, outs, ints, grids, launch, returned, expr


def import_triton(cpath, prob, op, names, outdir):
    """A Triton candidate: its one launch in forward, read as kgate expressions; the compile script."""
    cand = Candidate(cpath, prob, op)
    jits = cand.jit_kernels()
    fwd, tensors, bufname, outs, ints, grids, launch, returned, expr = triton_forward(cpath, cand, op, jits)
    st, call = launch
    kname = cand.seg(call.func.value)
    kdef = jits[kname]
    kparams = [a.arg for a in kdef.args.args]
    constexpr = {a.arg for a in kdef.args.args if a.annotation is not None and "constexpr" in cand.seg(a.annotation)}
    kw = {k.arg: k.value for k in call.keywords}
    consts = {}
    for k, node in kw.items():
        if k in ("num_warps", "num_stages"):
            continue
        if k not in constexpr:
            refuse(cpath, st.lineno, "%s=... in the launch: not a tl.constexpr parameter of %s" % (k, kname))
        val = node.value if isinstance(node, ast.Constant) else cand.consts.get(cand.seg(node))
        if type(val) not in (int, float, bool):
            refuse(cpath, st.lineno, "constexpr %s = `%s`: a literal or a module constant" % (k, cand.seg(node)))
        consts[k] = val
    warps = {}
    for k in ("num_warps", "num_stages"):
        if k in kw:
            node = kw[k]
            val = node.value if isinstance(node, ast.Constant) else cand.consts.get(cand.seg(node))
            if type(val) is not int:
                refuse(cpath, st.lineno, "%s = `%s`: a literal" % (k, cand.seg(node)))
            warps[k] = val
    runtime = [p for p in kparams if p not in consts]
    if len(call.args) != len(runtime):
        refuse(cpath, st.lineno, "the launch of %s passes %d positional arguments for its %d runtime parameters"
               % (kname, len(call.args), len(runtime)))
    g = call.func.slice.value if isinstance(call.func.slice, ast.Index) else call.func.slice
    gname = cand.seg(g)
    if gname in grids:
        grid = grids[gname]
    elif isinstance(g, (ast.Tuple, ast.List)):
        grid = [expr(e) for e in g.elts]
    else:
        refuse(cpath, st.lineno, "the grid `%s`: a tuple of sizes, or a lambda meta: (...)" % gname)
    if isinstance(grid, tuple) and grid[0] == "lambda":
        lam = grid[1]
        body = lam.body.elts if isinstance(lam.body, (ast.Tuple, ast.List)) else [lam.body]
        lex = PyExpr(cand, tensors, ints, consts)
        try:
            grid = [lex(e) for e in body]
        except ValueError as e:
            refuse(cpath, lam.lineno, "%s: the grid must be an integer expression of the sizes" % e)
    dt = KG_DTYPES[op["dtype"]][0]
    sig, amap, exprs = {}, {}, {}
    outnames = {c: t["name"] for c, t in zip(returned, [t for t in op["tensors"] if t["role"] == "output"])}
    for p, a in zip(runtime, call.args):
        sa = cand.seg(a)
        if sa in bufname or sa in outs:
            sig[p] = TRITON_TYPES[dt]
            amap[p] = bufname.get(sa) or outnames.get(sa) or sa
            if sa in outs and sa not in outnames:
                refuse(cpath, st.lineno, "%s is allocated in forward and not returned: a temporary tensor" % sa)
            continue
        if isinstance(a, ast.Constant) and type(a.value) is float:
            refuse(cpath, st.lineno, "the real %s: kgate passes real literals to CUDA C arms; make it a "
                   "tl.constexpr of the Triton kernel" % sa)
        e = expr(a)
        sig[p] = "i32"
        if re.fullmatch(r"[A-Za-z_]\w*", e):
            amap[p] = e
        else:
            ph = "kgexpr%d" % len(exprs)
            exprs[ph] = unwrap(e)
            amap[p] = ph
    outs_op = [t for t in op["tensors"] if t["role"] == "output"]
    if len(returned) != len(outs_op):
        refuse(cpath, fwd.lineno, "forward returns %d tensors, the problem's %d" % (len(returned), len(outs_op)))
    for c, t in zip(returned, outs_op):
        if not same_values(outs[c], t["dims"], op):
            refuse(cpath, fwd.lineno, "forward allocates %s as [%s]; the problem's output is [%s]"
                   % (c, ", ".join(outs[c]), ", ".join(t["dims"])))
    # the kernels' text: the candidate's @triton.jit functions and its literal constants, nothing else
    lines = cand.text.split("\n")
    parts = ["import triton", "import triton.language as tl", ""]
    for node in cand.tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and \
                isinstance(node.value, ast.Constant) and type(node.value.value) in (int, float):
            parts.append(cand.seg(node))
    for node in jits.values():
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        parts.append("\n" * 1 + "\n".join(lines[start - 1:node.end_lineno]))
    launch_rec = {"kernel": kname, "op": names["op"], "signature": sig, "grid": ", ".join(unwrap(x) for x in grid),
                  "constexprs": consts, "args": amap, "num_warps": warps.get("num_warps", 4),
                  "num_stages": warps.get("num_stages", 3)}
    return TRITON_SCRIPT % {"script": names["triton"], "cand": os.path.basename(cpath), "stem": names["stem"],
                            "plan": names["plan"], "kernels": "\n".join(parts) + "\n", "launch": launch_rec,
                            "exprs": exprs, "mark": TRITON_MARK, "cubin": names["stem"] + "_candidate",
                            "kfile": names["stem"] + "_triton_kernels.py"}


# ---------------------------------------------------------------- the plan

def write_plan(args, prob, op, launches, names, triton_script=None):
    opname = names["op"]
    t_in = [t for t in op["tensors"] if t["role"] != "output"]
    t_out = [t for t in op["tensors"] if t["role"] == "output"]

    def decl(ts):
        return " ".join("%s[%s]" % (t["name"], ",".join(t["dims"])) for t in ts)
    esize = ELEM_SIZE[KG_DTYPES[op["dtype"]][0]]
    nbytes = "+".join("*".join(ExprParser.paren(d) for d in t["dims"]) or "1" for t in op["tensors"])
    L = []
    w = L.append
    w("; %s: written by `kgate import kernelbench` from %s%s" % (os.path.basename(args.out), os.path.basename(prob.path),
      (" and " + os.path.basename(args.candidate)) if args.candidate else ""))
    w("; The problem's Model in float64 is the reference, torch's Model the baseline (and its A/A control)%s."
      % (", the candidate's kernels the candidate arm" if launches else ""))
    w("; docs/kernelbench.md says what the import maps, what it refuses and how this differs from KernelBench.")
    if prob.buffers:
        w("; the Module's buffers stay its own, as its init makes them (not inputs): %s" % ", ".join(prob.buffers))
    if op["fixed"]:
        w("; fixed by the Module's init (not varied by held-out shapes): %s" % ", ".join(
            "%s = %d" % (c, prob.base[c]) for c in op["fixed"]))
    w("[campaign]")
    w("name = %s" % opname)
    w("backend = %s" % args.backend)
    w("quiet = %s" % ("2" if args.backend == "cuda" else "0"))
    w("warmup = 3")
    w("samples = 10")
    w("rounds = 4")
    w("seed = 20261204")
    w("margin = 5%")
    w("timeout = 600")
    w("")
    w("[op %s]" % opname)
    w("reference = python:%s:kgate_reference" % names["ref"])
    w("tensors = torch")
    if op["vars"]:
        w("vars = %s" % " ".join(op["vars"]))
    w("inputs = %s" % decl(t_in))
    w("outputs = %s" % decl(t_out))
    # every dimension at least 1, so that the held-out shapes kgate derives stay admissible (a
    # convolution's output length-2 needs length >= 3)
    conds = []
    for t in op["tensors"]:
        for d in t["dims"]:
            if not re.fullmatch(r"\d+|[A-Za-z_]\w*", d) and "%s >= 1" % d not in conds:
                conds.append("%s >= 1" % d)
    if conds:
        w("requires = %s" % ", ".join(conds))
    w("bytes = %d*(%s)" % (esize, nbytes))
    if op["vars"]:
        w("heldout = %s" % " ".join(op["vars"]))
    if args.tolerance:
        rtol, _, atol = args.tolerance.partition(",")
        w("bound = tolerance")
        w("rtol = %s" % rtol.strip())
        w("atol = %s" % atol.strip())
    else:
        w("bound = library")
    w("")
    w("[case %s]" % names["case"])
    w("op = %s" % opname)
    w("dtype = %s" % KG_DTYPES[op["dtype"]][0])
    for c in op["vars"]:
        w("%s = %d" % (c, op["values"][c]))
    w("")
    w("[arm torch]")
    w("op = %s" % opname)
    w("role = baseline")
    w("builtin = torch")
    w("call = python:%s:kgate_baseline" % names["ref"])
    w("")
    w("[arm torch_copy]")
    w("op = %s" % opname)
    w("role = control")
    w("of = torch")
    if launches:
        w("")
        w("[arm candidate]")
        w("op = %s" % opname)
        w("role = candidate")
        w("source = %s" % names["cu"])
        for i, la in enumerate(launches):
            sfx = "" if i == 0 else str(i + 1)
            w("entry%s = %s" % (sfx, la["kernel"]))
            w("grid%s = %s" % (sfx, la["grid"]))
            w("block%s = %s" % (sfx, la["block"]))
            if la["shared"] != "0":
                w("shared%s = %s" % (sfx, la["shared"]))
            w("args%s = %s" % (sfx, la["args"]))
    w("")
    w("[gate]")
    w("rule = interval")
    if triton_script is not None:
        w("")
        w("; The candidate is a Triton kernel: `python3 %s` (on a machine with Triton and the GPU, kgate's" % names["triton"])
        w("; python/ importable) compiles it with kgate.triton.compile_arm and writes its [arm candidate] below.")
        w(TRITON_MARK)
    text = "\n".join(L) + "\n"
    for ln in L:
        if len(ln) > 196 or ("=" in ln and len(ln.split("=", 1)[1].strip()) > 160):
            refuse(prob.path, None, "the plan line `%s...` is longer than a plan allows (a value holds 160 "
                   "characters): too many tensors or dimensions for one [op] line" % ln[:60])
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)


def check_launches(cpath, op, launches):
    """The launch geometry at the case's sizes: positive, within CUDA's limits."""
    env = dict(op["values"])
    for la in launches:
        try:
            g = [eval_expr(x, env) for x in la["grid"].split(", ")]
            b = [eval_expr(x, env) for x in la["block"].split(", ")]
            s = eval_expr(la["shared"], env)
        except Exception as e:
            refuse(cpath, None, "the launch of %s does not evaluate at the case's sizes: %s" % (la["kernel"], e))
        tb = 1
        for v in b:
            tb *= v
        if min(g + b) < 1 or tb > 1024 or s < 0:
            refuse(cpath, None, "the launch of %s at the case's sizes: grid %s, block %s, shared %d (a block holds "
                   "1 to 1024 threads)" % (la["kernel"], g, b, s))


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="kgate import kernelbench")
    ap.add_argument("problem")
    ap.add_argument("--candidate")
    ap.add_argument("--out", required=True)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--set", default="")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--tolerance", default="")
    args = ap.parse_args(argv)
    folder = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(folder):
        sys.stderr.write("kgate import: -o %s: the folder %s does not exist\n" % (args.out, folder))
        return 2
    if args.candidate and args.backend == "cuda":
        try:
            precheck(args.candidate)
        except Refused as e:
            sys.stderr.write("kgate import: %s\n" % e)
            return 2
    try:
        import torch  # noqa: F401
    except ImportError:
        return 3  # kgate import tries /usr/bin/python3 next, and says so when that fails too
    if args.tolerance and not re.fullmatch(r"\s*[0-9.eE+-]+\s*,\s*[0-9.eE+-]+\s*", args.tolerance):
        sys.stderr.write("kgate import: --tolerance %s: RTOL,ATOL (e.g. 1e-4,1e-5)\n" % args.tolerance)
        return 2
    overrides = {}
    for item in [x for x in args.set.split(",") if x.strip()]:
        k, _, v = item.partition("=")
        if not re.match(r"^\d+$", v.strip()):
            sys.stderr.write("kgate import: --set %s: NAME=INTEGER\n" % item)
            return 2
        overrides[k.strip()] = int(v)
    try:
        prob = Problem(args.problem, overrides)
        op = analyse(prob)
        stem = re.sub(r"[^A-Za-z0-9_]", "_", os.path.splitext(os.path.basename(args.problem))[0])
        outdir = os.path.dirname(os.path.abspath(args.out))
        pstem = os.path.splitext(os.path.basename(args.out))[0]
        names = {"op": "kb_" + stem, "case": stem, "ref": pstem + "_ref.py", "cu": pstem + "_candidate.cu",
                 "triton": pstem + "_triton.py", "plan": os.path.basename(args.out), "stem": pstem}
        launches = []
        triton_script = None
        if args.candidate and args.backend == "cuda" and Candidate(args.candidate, prob, op).jit_kernels():
            triton_script = import_triton(args.candidate, prob, op, names, outdir)
        elif args.candidate and args.backend == "cuda":
            launches, device, line0, prelude = import_candidate(args.candidate, prob, op, names)
            check_launches(args.candidate, op, launches)
        elif args.candidate:
            Candidate(args.candidate, prob, op)  # parsed, so a malformed file is still an error
        write_reference(prob, op, os.path.join(outdir, names["ref"]))
        if launches:
            head = ("/* %s: the device code of %s, read by `kgate import kernelbench` (its host functions and\n"
                    " * torch's headers left out, each __global__ made extern \"C\"; sha256 of the candidate %s) */\n"
                    % (names["cu"], os.path.basename(args.candidate),
                       hashlib.sha256(open(args.candidate, "rb").read()).hexdigest()[:16]))
            with open(os.path.join(outdir, names["cu"]), "w", encoding="utf-8") as f:
                f.write(head + (prelude + "\n" if prelude else "") +
                        '#line %d "%s"\n' % (line0, os.path.basename(args.candidate)) + device)
        write_plan(args, prob, op, launches, names, triton_script)
        if triton_script is not None:
            with open(os.path.join(outdir, names["triton"]), "w", encoding="utf-8") as f:
                f.write(triton_script)
    except Refused as e:
        sys.stderr.write("kgate import: %s\n" % e)
        return 2
    except SystemExit:
        raise
    except Exception as e:  # the problem's own code failed
        import traceback
        tb = traceback.extract_tb(e.__traceback__)
        where = [f for f in tb if f.filename == os.path.abspath(args.problem) or f.filename == args.problem]
        loc = "%s:%d" % (args.problem, where[-1].lineno) if where else args.problem
        sys.stderr.write("kgate import: %s: the problem failed: %s: %s\n" % (loc, type(e).__name__, e))
        return 2
    if args.quiet:
        return 0
    sys.stdout.write("%s: op %s, %d variable(s) (%s), %d input(s), %d output(s)%s\n" % (
        args.out, names["op"], len(op["vars"]), " ".join(op["vars"]) or "none",
        sum(t["role"] != "output" for t in op["tensors"]), sum(t["role"] == "output" for t in op["tensors"]),
        ", candidate: %d launch(es) of %s" % (len(launches), ", ".join(x["kernel"] for x in launches))
        if launches else ", candidate: a Triton kernel (its arm: python3 %s)" % names["triton"]
        if triton_script is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
