"""Checks an evidence folder's files against their published formats (tests/cli/formats.sh).

    formats_check.py results SCHEMA FOLDER...   results.json of each FOLDER against the JSON Schema
    formats_check.py csv FOLDER...              every CSV file of each FOLDER against its schema.json

results: jsonschema (Debian's python3-jsonschema) validates; the first error is printed with its path.
csv: every *.csv and *.csv.gz file of the folder (the raw rows: gzip) must be a kind of schema.json
(by its file pattern, NNN a process index), its first line the kind's column names, and every field of every row of the column's type
(case and arm: a name of plan.kg; enum: one of the values; empty only where the column may be).
Exit 0 when every folder conforms, 1 with one line per problem otherwise.
"""
import csv
import gzip
import json
import re
import sys
from pathlib import Path

SHA = re.compile(r"[0-9a-f]{64}")
UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
DIM3 = re.compile(r"-?\d+x-?\d+x-?\d+")


def check_results(schema_path, folders):
    import jsonschema
    schema = json.loads(Path(schema_path).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    bad = 0
    for f in folders:
        doc = json.loads((Path(f) / "results.json").read_text())
        errs = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errs[:3]:
            print(f"{f}/results.json: {'/'.join(str(p) for p in e.absolute_path)}: {e.message}")
        bad += len(errs) > 0
    return bad


def plan_names(folder):
    names = {"case": set(), "arm": set()}
    for line in (Path(folder) / "plan.kg").read_text().splitlines():
        m = re.fullmatch(r"\[(case|arm) (.+)\]", line.strip())
        if m:
            names[m.group(1)].add(m.group(2))
    return names


def field_ok(col, x, names):
    t = col["type"]
    if x == "":
        return col["empty"] or t == "text"
    if t == "integer":
        return re.fullmatch(r"-?\d+", x) is not None
    if t == "uint64":
        return re.fullmatch(r"\d+", x) is not None and int(x) < 2 ** 64
    if t == "number":
        try:
            float(x)
            return True
        except ValueError:
            return False
    if t == "hex":
        return re.fullmatch(r"0x[0-9a-f]+", x) is not None
    if t == "flag":
        return x in ("0", "1")
    if t == "utc":
        return UTC.fullmatch(x) is not None
    if t == "sha256":
        return x == "-" or SHA.fullmatch(x) is not None
    if t in ("case", "arm"):
        return x in names[t]
    if t == "enum":
        return x in col["values"]
    if t == "dim3":
        return DIM3.fullmatch(x) is not None
    return t in ("text", "name")


def kind_of(rel, kinds):
    for k in kinds:
        pat = re.escape(k["file"]).replace("NNN", r"\d{3,}")
        if re.fullmatch(pat, rel):
            return k
    return None


def check_csv(folders):
    bad = 0
    for f in folders:
        folder = Path(f)
        schema = json.loads((folder / "schema.json").read_text())
        names = plan_names(folder)
        nfiles = 0
        for p in sorted(list(folder.rglob("*.csv")) + list(folder.rglob("*.csv.gz"))):
            rel = p.relative_to(folder).as_posix()
            if rel.startswith("shards/"):
                continue
            k = kind_of(rel, schema["files"])
            if k is None:
                print(f"{f}/{rel}: no kind of schema.json describes this file")
                bad += 1
                continue
            nfiles += 1
            cols = k["columns"]
            opener = gzip.open if p.name.endswith(".gz") else open
            with opener(p, "rt", newline="", encoding="utf-8") as fh:
                rows = list(csv.reader(fh))
            if not rows or rows[0] != [c["name"] for c in cols]:
                print(f"{f}/{rel}:1: header is not schema.json's {k['kind']} columns")
                bad += 1
                continue
            for i, row in enumerate(rows[1:], start=2):
                if len(row) != len(cols):
                    print(f"{f}/{rel}:{i}: {len(row)} fields, schema.json has {len(cols)}")
                    bad += 1
                    break
                wrong = [c["name"] for c, x in zip(cols, row) if not field_ok(c, x, names)]
                if wrong:
                    print(f"{f}/{rel}:{i}: column {wrong[0]}: '{row[[c['name'] for c in cols].index(wrong[0])]}' "
                          f"is not a {cols[[c['name'] for c in cols].index(wrong[0])]['type']}")
                    bad += 1
                    break
        if nfiles == 0:
            print(f"{f}: no CSV file checked")
            bad += 1
    return bad


def main(argv):
    if len(argv) >= 3 and argv[1] == "results":
        return 1 if check_results(argv[2], argv[3:]) else 0
    if len(argv) >= 2 and argv[1] == "csv":
        return 1 if check_csv(argv[2:]) else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
