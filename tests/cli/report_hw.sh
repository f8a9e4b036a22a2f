# The report's hardware sections come from the evidence folder: telemetry
# joined to the timing rows (a round whose arms ran at SM clocks more than
# 1% apart is flagged), resource records, and the speed of light.
. tests/cli_lib.sh
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/ev" >/dev/null 2>&1 || die "fake run"
expect_grep "## Speed of light" "$T/ev/report.md"
expect_no_grep "## Telemetry" "$T/ev/report.md"
mkdir -p "$T/ev/telemetry"
for f in "$T"/ev/raw/proc-*.csv.gz; do
    p=$(basename "$f" .csv.gz | sed 's/proc-//')
    # one telemetry row per timed sample; process 0, round 1: cand at 1900 MHz
    raw_text "$f" | awk -F, 'NR == 1 { print "process,case,round,arm,sample,sm_mhz,mem_mhz,power_w,temp_c,clock_event_reasons,foreign_procs,escaped,event_ns,host_ns"; next }
             { sm = ($1 == 0 && $3 == 1 && $4 == "cand") ? 1900 : 1980
               printf "%s,%s,%s,%s,%s,%d,3201,300.5,40,0x0,0,0,%s,%s\n", $1, $5, $3, $4, $6, sm, $7, $7 }' \
        > "$T/ev/telemetry/proc-$p.csv"
    printf 'process,case,arm,launch,registers,static_shared,dynamic_shared,local,const,max_threads,ptx,binary,grid,block,launches,arch,image_bytes,image_sha256,sandbox\n0,small,base,1,40,0,8448,0,0,1024,90,90,1x1x1,128x1x1,2,sm_90,100,ab,\n0,small,base,2,24,0,0,0,0,1024,90,90,8x1x1,256x1x1,2,sm_90,100,ab,\n' \
        > "$T/ev/telemetry/resources-$p.csv"
done
"$KGATE" report "$T/ev" > "$T/out" 2>"$T/err"
expect_grep "## Telemetry" "$T/out"
expect_grep "| small | cand | 120 | 1980 \[1900, 1980\] | 3201 | 300.5 | 40 | 0x0 | 0 |" "$T/out"
expect_grep "1 of 24 rounds had arms whose median SM clocks differ by more than 1%" "$T/out"
expect_grep "process 0, case small, round 1: arm median SM clocks 1900 to 1980 MHz" "$T/out"
expect_grep "| small | base | 1 | 40 | 0 | 8448 | 0 | 1024 | 90 | 90 | 1x1x1 | 128x1x1 | 2 | sm_90 | – |" "$T/out"
expect_grep "| small | base | 2 | 24 | 0 | 0 | 0 | 1024 | 90 | 90 | 8x1x1 | 256x1x1 | 2 | sm_90 | – |" "$T/out"
