#!/usr/bin/env python3
"""The structure of kgate's tree, checked against docs/architecture.md.

The layer table in docs/architecture.md ("## Parts") names each part, the
folders and public headers it holds, and the parts it may use.  This script
reads that table and checks every dependency of the tree against it:

  - includes: every `#include "..."` of src/ and include/kgate/;
  - calls: every symbol an object file of BUILD/src/ uses that another
    object file defines (`nm`), functions and data alike.

It fails on
  - a dependency on a part the table does not let the user's part use
    (an upward or sideways arrow);
  - a cycle among modules (a module is a .c file with its header of the
    same name, or a header of its own), in includes and calls together;
  - a file of src/ or include/kgate/ that no part of the table holds;
  - a reader part (the table's "reader" column) whose objects use a
    process or loader call (fork, exec*, posix_spawn*, system, popen,
    dlopen, clone): the reader never compiles, loads or runs code;
  - a table whose "may use" column is itself circular.

Usage: tools/structure.py [BUILD]   (BUILD: the build folder, default build)
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "architecture.md")
FORBIDDEN_IN_READER = {"fork", "vfork", "_Fork", "forkpty", "clone", "clone3", "execv", "execve", "execvp",
                       "execvpe", "execl", "execle", "execlp", "fexecve", "execveat", "posix_spawn",
                       "posix_spawnp", "system", "popen", "dlopen", "dlmopen"}


def fail_list(title, items):
    if not items:
        return 0
    print("FAIL: %s:" % title, file=sys.stderr)
    for it in items:
        print("    " + it, file=sys.stderr)
    return 1


def read_table():
    """The rows of the table under '## Parts': part -> (holds, may_use, reader)."""
    text = open(DOC, encoding="utf-8").read()
    m = re.search(r"^## Parts\n(.*?)(?=^## )", text, re.S | re.M)
    if m is None:
        sys.exit("structure: docs/architecture.md has no '## Parts' section with the layer table")
    parts = {}
    order = []
    for line in m.group(1).splitlines():
        if not line.startswith("|") or set(line) <= set("|- "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or cells[0] == "part":
            continue
        name = cells[0].strip("*` ")
        holds = re.findall(r"`([^`]+)`", cells[1])
        may = [] if cells[2] in ("", "—", "-", "nothing") else [p.strip(" `*") for p in cells[2].split(",")]
        reader = cells[3].lower().startswith("reader")
        parts[name] = (holds, may, reader)
        order.append(name)
    if not parts:
        sys.exit("structure: the '## Parts' table of docs/architecture.md has no rows")
    for name, (_, may, _) in parts.items():
        for p in may:
            if p != "everything" and p not in parts:
                sys.exit("structure: docs/architecture.md: part %s may use '%s', which the table does not name" %
                         (name, p))
    return parts, order


def part_of(path, parts):
    """The part holding a repository path (src/x/y.c, include/kgate/z.h)."""
    best, blen = None, -1
    for name, (holds, _, _) in parts.items():
        for h in holds:
            h = h.rstrip("/")
            if h.startswith("kgate/"):
                h = "include/" + h
            if path == h or path.startswith(h + "/"):
                if len(h) > blen:
                    best, blen = name, len(h)
    return best


def module_of(path):
    """A .c and its .h of the same name are one module."""
    base, ext = os.path.splitext(path)
    return base if ext in (".c", ".h") else path


def sources():
    out = []
    for top in ("src", "include/kgate"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(d, f), ROOT))
    return sorted(out)


def include_edges(files):
    edges = []  # (from_file, line, to_file)
    for f in files:
        with open(os.path.join(ROOT, f), encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                inc = m.group(1)
                for cand in (os.path.join("include", inc), os.path.join("src", inc),
                             os.path.join(os.path.dirname(f), inc)):
                    if os.path.exists(os.path.join(ROOT, cand)):
                        edges.append((f, n, os.path.normpath(cand)))
                        break
                # else: a generated header (build/gen) or a system one
    return edges


def call_edges(build):
    """(object's source, symbol, defining source) for every symbol one object
    of BUILD/src uses and another defines."""
    objs = []
    for d, _, files in os.walk(os.path.join(ROOT, build, "src")):
        for f in files:
            o = os.path.join(d, f)
            src = os.path.relpath(o, os.path.join(ROOT, build))[:-2] + ".c"
            # an object whose source is gone is a stale build (a moved file), not the tree
            if f.endswith(".o") and os.path.exists(os.path.join(ROOT, src)):
                objs.append(o)
    if not objs:
        sys.exit("structure: no object files under %s/src: build first (make)" % build)
    defined, used = {}, {}
    for o in sorted(objs):
        src = os.path.relpath(o, os.path.join(ROOT, build))[:-2] + ".c"
        if not os.path.exists(os.path.join(ROOT, src)):
            continue  # an object whose source moved or went away
        res = subprocess.run(["nm", "-P", o], capture_output=True, text=True, check=True)
        used[src] = set()
        for line in res.stdout.splitlines():
            w = line.split()
            if len(w) < 2:
                continue
            sym, kind = w[0], w[1]
            if kind == "U":
                used[src].add(sym)
            elif kind in "TDBRVWGS" and kind.isupper():
                defined.setdefault(sym, src)
    edges = []
    for src, syms in used.items():
        for s in sorted(syms):
            if s in defined and defined[s] != src:
                edges.append((src, s, defined[s]))
    return edges, used


def sccs(nodes, adj):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    parts, order = read_table()
    bad = 0

    # the table itself: parts and what they may use form no circle
    adj = {p: [q for q in parts[p][1] if q != "everything"] for p in parts}
    bad |= fail_list("the layer table of docs/architecture.md is circular", [" -> ".join(c) for c in sccs(parts, adj)])

    def allowed(a, b):
        if a == b:
            return True
        may = parts[a][1]
        return "everything" in may or b in may

    files = sources()
    bad |= fail_list("files no part of docs/architecture.md's table holds (add the folder or header to a part)",
                     [f for f in files if part_of(f, parts) is None])

    incs = include_edges(files)
    calls, used = call_edges(build)
    upward, graph, why = [], {}, {}
    for f, line, to in incs:
        a, b = part_of(f, parts), part_of(to, parts)
        if a and b and not allowed(a, b):
            upward.append("%s:%d includes %s (%s may not use %s)" % (f, line, to, a, b))
        ma, mb = module_of(f), module_of(to)
        if ma != mb:
            graph.setdefault(ma, set()).add(mb)
            why.setdefault((ma, mb), "%s:%d includes %s" % (f, line, to))
    for src, sym, dst in calls:
        a, b = part_of(src, parts), part_of(dst, parts)
        if a and b and not allowed(a, b):
            upward.append("%s calls %s of %s (%s may not use %s)" % (src, sym, dst, a, b))
        ma, mb = module_of(src), module_of(dst)
        if ma != mb:
            graph.setdefault(ma, set()).add(mb)
            why.setdefault((ma, mb), "%s uses %s of %s" % (src, sym, dst))
    bad |= fail_list("dependencies the layer table does not allow", upward)

    cycles = []
    for comp in sccs(set(graph) | {m for v in graph.values() for m in v}, graph):
        cs = set(comp)
        edges = ["%s  [%s]" % ("%s -> %s" % (a, b), why[(a, b)]) for a in comp for b in sorted(graph.get(a, ()))
                 if b in cs]
        cycles.append("cycle among %s:\n        %s" % (", ".join(comp), "\n        ".join(edges)))
    bad |= fail_list("dependency cycles (break each: one direction only)", cycles)

    impure = []
    for src, syms in sorted(used.items()):
        p = part_of(src, parts)
        if p and parts[p][2]:
            hit = sorted(syms & FORBIDDEN_IN_READER)
            if hit:
                impure.append("%s (%s, a reader part) uses %s" % (src, p, ", ".join(hit)))
    bad |= fail_list("reader parts that start processes or load code", impure)

    nmod = len(set(graph) | {m for v in graph.values() for m in v})
    print("structure: %d parts, %d files, %d includes, %d calls between modules, %d modules checked" %
          (len(parts), len(files), len(incs), len(calls), nmod))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
