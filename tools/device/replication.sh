#!/bin/sh
# tools/device/replication.sh OUTDIR: the replication study's campaigns on a
# GPU (docs/replication.md), with kgate built beforehand (bin/kgate):
#   run-PLAN.md, run-PLAN/   each examples/replication plan end to end
#   neg-PLAN.txt             every source arm built as the numerical negative
#                            (KGATE_NEGATIVE=1): arms whose output checks did
#                            not all fail are listed (none expected)
set -u
R=${1:?usage: replication.sh OUTDIR}
mkdir -p "$R"
K=$PWD/bin/kgate
for p in examples/replication/*.kg; do
    b=$(basename "$p" .kg)
    echo "== $(date -u +%T) $b" >&2
    "$K" run "$p" -o "$R/run-$b" > "$R/run-$b.md" 2> "$R/run-$b.err"
    echo "$b: run exit $?" >> "$R/summary.txt"
    KGATE_NEGATIVE=1 "$K" check "$p" -o "$R/neg-$b" > /dev/null 2>&1
    # output checks are NAME:OUT (not guard, input, weak, admissible, negative)
    awk -F, 'NR > 1 && $6 ~ /^(poison0|poison1):[A-Za-z]+$/ { n[$4]++; if ($7 == "pass") p[$4]++ }
             END { for (a in n) printf "%s: %d of %d output checks failed%s\n", a, n[a] - p[a], n[a],
                   (p[a] > 0 ? "  <-- passes the negative" : "") }' \
        "$R/neg-$b/checks/proc-000.csv" | sort > "$R/neg-$b.txt"
    echo "$b: negative: $(grep -c 'passes the negative' "$R/neg-$b.txt") arms pass (cublas cannot be negated)" >> "$R/summary.txt"
done
