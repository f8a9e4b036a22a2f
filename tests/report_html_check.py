#!/usr/bin/env python3
"""Checks the DOM a browser built from an evidence folder's report.html.

usage: report_html_check.py DOM DIR [--text STRING]...

DOM is what `chromium --headless --dump-dom file://DIR/report.html` printed.
Checked, against the folder's own files (results.csv, results.json,
processes.csv, watch.csv, raw/ (gzip), telemetry/):

  - an HTML5 document: <!DOCTYPE html>, <html lang>, <meta charset="utf-8">,
    a <title>;
  - self-contained and inert: no script, frame, object, embed, image, link,
    form or base element, no event-handler or src attribute, no link but
    to an anchor of the page or to report.md, no url( or @import in CSS;
  - every <svg class="plot">: a unique id and data-points; when it is
    above 0, the marks (class "m") are there and their data-n sum to it;
    when it is 0, data-empty says why and no mark is drawn;
  - the plots the folder calls for, each with the count of values it must
    have drawn: per case the reductions (the rows of results.csv with a
    reduction), per case and arm the rounds (distinct rounds in raw/ of
    the accepted processes), the timeline (processes.csv's rows and the
    host watch's marked events), telemetry (every SM clock, power and
    temperature reading and the samples joined to them, or a note);
  - the results table: the rows of results.csv in order, each number's
    data-v equal to the results.csv field of its column (results.json for
    round_reduction), its text that number as report.md prints it, and
    the verdict;
  - per case or arm with axes, a sweep plot with a point per variant and
    case (or arm) that has a reduction;
  - each --text STRING appears as text in the page (escaped, not markup).

Prints "ok: ..." and exits 0, or one line per problem and exits 1.
"""
import csv
import glob
import gzip
import json
import math
import os
import re
import sys
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
FORBIDDEN = {"script", "iframe", "frame", "object", "embed", "img", "link", "form", "base", "audio", "video",
             "source", "image", "use", "foreignobject", "animate", "set"}
PCT_COLS = {"process_reduction_fwd", "process_reduction_rev", "round_reduction", "round_reduction_min",
            "round_reduction_max", "reduction", "reduction_lower", "reduction_upper"}
US_COLS = {"median_ns_fwd", "median_ns_rev"}
MARKED = {"not-quiet", "contaminated", "note", "never-quiet"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.kids, self.text = tag, dict(attrs), parent, [], []

    def walk(self):
        yield self
        for k in self.kids:
            yield from k.walk()

    def all_text(self):
        out = list(self.text)
        for k in self.kids:
            out.append(k.all_text())
        return "".join(out)

    def classes(self):
        return (self.attrs.get("class") or "").split()


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root
        self.doctype = None

    def handle_decl(self, decl):
        self.doctype = decl

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.kids.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.kids.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.text.append(data)


def read_csv(path):
    """A CSV file's rows as dicts; NAME.csv.gz (the raw rows) decompressed."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    dom_path, folder = argv[1], argv[2]
    texts = []
    i = 3
    while i < len(argv):
        if argv[i] == "--text" and i + 1 < len(argv):
            texts.append(argv[i + 1])
            i += 2
        else:
            print(f"report_html_check: unknown argument {argv[i]}", file=sys.stderr)
            return 2
    problems = []

    def bad(msg):
        problems.append(msg)

    with open(dom_path, encoding="utf-8") as f:
        dom = f.read()
    t = Tree()
    t.feed(dom)
    t.close()
    nodes = list(t.root.walk())

    # an HTML5 document
    if t.doctype is None or t.doctype.strip().lower() != "doctype html":
        bad(f"no <!DOCTYPE html> (found {t.doctype!r})")
    html = [n for n in nodes if n.tag == "html"]
    if not html or not html[0].attrs.get("lang"):
        bad("<html> has no lang")
    if not any(n.tag == "meta" and (n.attrs.get("charset") or "").lower() == "utf-8" for n in nodes):
        bad('no <meta charset="utf-8">')
    titles = [n for n in nodes if n.tag == "title" and n.parent is not None and n.parent.tag == "head"]
    if not titles or not titles[0].all_text().strip():
        bad("no <title> in <head>")

    # self-contained and inert
    for n in nodes:
        if n.tag in FORBIDDEN:
            bad(f"a <{n.tag}> element: report.html must hold no script, frame, image or external resource")
        for k, v in n.attrs.items():
            v = v or ""
            if k.startswith("on"):
                bad(f"<{n.tag}> has an event handler attribute {k}")
            if k in ("src", "srcset", "xlink:href", "action", "formaction", "data", "poster"):
                bad(f"<{n.tag}> has a {k} attribute ({v[:60]})")
            if k == "href" and not (v.startswith("#") or v == "report.md"):
                bad(f"<{n.tag}> links outside the page: {v[:80]}")
            if k == "style" and re.search(r"url\(|@import", v, re.I):
                bad(f"<{n.tag}> style loads a resource")
        if n.tag == "style" and re.search(r"url\(|@import", n.all_text(), re.I):
            bad("the style sheet loads a resource")
    for s in texts:
        body = "".join(n.all_text() for n in nodes if n.tag == "body")
        if s not in body:
            bad(f"the text {s!r} is not in the page as text")

    # every plot has its data, or says why it has none
    plots = {}
    for n in nodes:
        if n.tag != "svg" or "plot" not in n.classes():
            continue
        pid = n.attrs.get("id")
        if not pid:
            bad("a plot without an id")
            continue
        if pid in plots:
            bad(f"plot id {pid} twice")
        plots[pid] = n
        try:
            points = int(n.attrs.get("data-points", ""))
        except ValueError:
            bad(f"plot {pid}: no numeric data-points")
            continue
        marks = [m for m in n.walk() if m is not n and "m" in m.classes()]
        total = 0
        for m in marks:
            try:
                total += int(m.attrs.get("data-n", ""))
            except ValueError:
                bad(f"plot {pid}: a mark <{m.tag}> without a numeric data-n")
        if points > 0:
            if not marks:
                bad(f"plot {pid}: data-points {points} but no mark drawn")
            elif total != points:
                bad(f"plot {pid}: data-points {points} but its marks hold {total}")
            if n.attrs.get("data-empty"):
                bad(f"plot {pid}: data and data-empty both")
        else:
            if not (n.attrs.get("data-empty") or "").strip():
                bad(f"plot {pid}: nothing drawn and no data-empty saying why")
            if marks:
                bad(f"plot {pid}: data-points 0 but {len(marks)} marks")
    if not plots:
        bad("no <svg class=\"plot\"> at all")

    def expect_points(pid, want, what):
        n = plots.get(pid)
        if n is None:
            bad(f"plot {pid} ({what}) is missing")
            return
        have = int(n.attrs.get("data-points", "-1") or -1)
        if have != want:
            bad(f"plot {pid} ({what}): data-points {have}, the folder has {want}")

    # the folder's own numbers
    results = read_csv(os.path.join(folder, "results.csv"))
    with open(os.path.join(folder, "results.json"), encoding="utf-8") as f:
        rjson = {(o["case"], o["arm"]): o for o in json.load(f)["results"]}
    procs = read_csv(os.path.join(folder, "processes.csv"))
    accepted = {int(p["process"]) for p in procs if p["accepted"] == "1"}
    raw = []
    for p in sorted(accepted):
        for name in ("proc-%03d.csv.gz" % p, "proc-%03d.csv" % p):   # schema 9, and older
            path = os.path.join(folder, "raw", name)
            if os.path.exists(path):
                raw.extend(read_csv(path))
                break
    tel = []
    for p in sorted(accepted):
        path = os.path.join(folder, "telemetry", "proc-%03d.csv" % p)
        if os.path.exists(path):
            tel.extend(read_csv(path))

    # the results table
    table = [n for n in nodes if n.tag == "table" and "results" in n.classes()]
    if len(table) != 1:
        bad(f"{len(table)} results tables, expected 1")
        rows = []
    else:
        rows = [n for n in table[0].walk() if n.tag == "tr" and "data-case" in n.attrs]
    if [(r.attrs["data-case"], r.attrs["data-arm"]) for r in rows] != [(r["case"], r["arm"]) for r in results]:
        bad("the results table's rows are not results.csv's (case, arm) in order")
    by_key = {(r["case"], r["arm"]): r for r in results}
    case_index, arm_index = {}, {}
    nnum = 0
    for tr in rows:
        key = (tr.attrs["data-case"], tr.attrs["data-arm"])
        row = by_key.get(key)
        if row is None:
            continue
        for a in tr.walk():
            href = a.attrs.get("href", "") if a.tag == "a" else ""
            m = re.fullmatch(r"#reduction-c(\d+)", href)
            if m:
                case_index[key[0]] = int(m.group(1))
            m = re.fullmatch(r"#rounds-c(\d+)-a(\d+)", href)
            if m:
                arm_index[key[1]] = int(m.group(2))
                if href[1:] not in plots:
                    bad(f"{key}: the link {href} names no plot")
        verdict = [n for n in tr.walk() if "data-verdict" in n.attrs]
        if not verdict or verdict[0].attrs["data-verdict"] != row["verdict"]:
            bad(f"{key}: verdict {verdict[0].attrs['data-verdict'] if verdict else None}, results.csv {row['verdict']}")
        for s in tr.walk():
            col = s.attrs.get("data-col")
            if s.tag != "span" or col is None:
                continue
            nnum += 1
            other = s.attrs.get("data-arm")
            src = by_key.get((key[0], other)) if other else row
            if src is None:
                bad(f"{key}: {col} of arm {other}, which results.csv lacks")
                continue
            if col == "round_reduction":
                j = rjson.get((key[0], other or key[1]), {}).get(col)
                want = "" if j is None else repr(j)
                have = s.attrs.get("data-v", "")
                if (want == "") != (have == "") or (have and abs(float(have) - float(want)) > 1e-8 * max(1, abs(float(want)))):
                    bad(f"{key}: {col} {have!r}, results.json {want!r}")
            else:
                want, have = src.get(col), s.attrs.get("data-v", "")
                if want is None:
                    bad(f"{key}: column {col} is not in results.csv")
                    continue
                if have != want:
                    bad(f"{key}: {col} {have!r}, results.csv {want!r}")
            text = s.all_text().strip()
            have = s.attrs.get("data-v", "")
            if have == "":
                if text != "–":
                    bad(f"{key}: {col} has no value but shows {text!r}")
                continue
            v = float(have)
            if col in PCT_COLS:
                ok = re.fullmatch(r"[+-]\d+\.\d\d%", text) and abs(float(text[:-1]) - 100 * v) <= 0.005 + 1e-7
            elif col in US_COLS:
                ok = re.fullmatch(r"\d+\.\d\d\d", text) and abs(float(text) - v / 1000) <= 0.0005 + 1e-9
            else:
                ok = False
            if not ok:
                bad(f"{key}: {col} = {have} shows as {text!r}")
    if rows and nnum == 0:
        bad("the results table has no numbers")

    # the plots the folder calls for
    cases = []
    for r in results:
        if r["case"] not in cases:
            cases.append(r["case"])
    for c in cases:
        if c not in case_index:
            bad(f"case {c}: no link to its reductions plot")
            continue
        want = sum(1 for r in results if r["case"] == c and r["role"] != "baseline" and r["state"] == "ok"
                   and r["reduction"] != "")
        expect_points(f"reduction-c{case_index[c]}", want, f"reductions of case {c}")
    for r in results:
        c, a = r["case"], r["arm"]
        if c not in case_index or a not in arm_index:
            continue
        want = len({(x["process"], x["round"]) for x in raw if x["case"] == c and x["arm"] == a})
        expect_points(f"rounds-c{case_index[c]}-a{arm_index[a]}", want, f"rounds of {a} on {c}")
    # a sweep plot per case or arm with axes (two or more variants named BASE[...]): a point per
    # variant and case (or arm) with a reduction
    def base(name):
        return name[:name.index("[")] if name.endswith("]") and "[" in name else None
    for kind, index, key in (("a", arm_index, "arm"), ("c", case_index, "case")):
        groups = {}
        for name in index:
            if base(name) is not None:
                groups.setdefault(base(name), []).append(name)
        for b, names in groups.items():
            if len(names) < 2:
                continue
            want = sum(1 for r in results if r[key] in names and r["role"] != "baseline" and r["state"] == "ok"
                       and r["reduction"] != "")
            expect_points(f"sweep-{kind}{min(index[n] for n in names)}", want, f"sweep of {key} {b}")
    watch = read_csv(os.path.join(folder, "watch.csv")) if os.path.exists(os.path.join(folder, "watch.csv")) else []
    nmarked = sum(1 for w in watch if w["event"] in MARKED and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", w["utc"]))
    if procs:
        expect_points("timeline", len(procs) + nmarked, "processes over wall time")
    else:
        expect_points("timeline", 0, "processes over wall time")

    def fnum(s):
        try:
            return float(s)
        except ValueError:
            return math.nan

    def valid(x):
        return [int(x["sm_mhz"]) > 0, math.isfinite(fnum(x["power_w"])) and fnum(x["power_w"]) >= 0,
                int(x["temp_c"]) >= 0]

    rawkey = {(x["process"], x["case"], x["round"], x["arm"], x["sample"]) for x in raw}
    if not any(any(valid(x)) for x in tel):
        expect_points("telemetry-none", 0, "no telemetry")
    else:
        for c in cases:
            rows_c = [x for x in tel if x["case"] == c]
            v = [valid(x) for x in rows_c]
            if not any(any(k) for k in v):
                want = 0
            else:
                want = sum(sum(k) for k in v) + sum(1 for x in rows_c if (x["process"], x["case"], x["round"],
                                                                        x["arm"], x["sample"]) in rawkey)
            expect_points(f"telemetry-c{case_index.get(c, -1)}", want, f"telemetry of case {c}")

    for p in problems:
        print(f"report_html_check: {p}")
    if problems:
        return 1
    print(f"ok: {len(plots)} plots with their data, {len(rows)} result rows, {nnum} numbers equal to results.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
