# Every reader of the evidence rows is strict: a malformed row is an
# error naming file:line and the column, never a silently dropped row.
# Each damaged copy of a fake campaign's folder makes `kgate report`
# fail (exit 2) with that message, and `kgate verify` report it.
. tests/cli_lib.sh
"$KGATE" run --report tests/plans/fake-faster.kg -o "$T/ev" >/dev/null 2>&1 || die "fake run"
mkdir -p "$T/ev/telemetry"
# telemetry and resources as a GPU backend writes them
raw_text "$T/ev/raw/proc-000.csv.gz" |
    awk -F, 'NR == 1 { print "process,case,round,arm,sample,sm_mhz,mem_mhz,power_w,temp_c,clock_event_reasons,foreign_procs,escaped,event_ns,host_ns"; next }
         { printf "%s,%s,%s,%s,%s,1980,3201,300.5,40,0x0,0,0,%s,%s\n", $1, $5, $3, $4, $6, $7, $7 }' \
    > "$T/ev/telemetry/proc-000.csv"
printf 'process,case,arm,launch,registers,static_shared,dynamic_shared,local,const,max_threads,ptx,binary,grid,block,launches,arch,image_bytes,image_sha256,sandbox\n0,small,base,1,40,0,0,0,0,1024,90,90,1x1x1,128x1x1,1,sm_90,100,ab,\n' \
    > "$T/ev/telemetry/resources-000.csv"
"$KGATE" report "$T/ev" >/dev/null 2>"$T/err" || { cat "$T/err" >&2; die "report of the intact folder"; }

damage() { # name file sed-expression expected-message
    rm -rf "$T/bad"
    cp -r "$T/ev" "$T/bad"
    case $2 in
    *.gz) raw_edit "$3" "$T/bad/$2" ;;
    *) sed -i "$3" "$T/bad/$2" ;;
    esac
    "$KGATE" report "$T/bad" >/dev/null 2>"$T/err.$1"; st=$?
    [ "$st" = 2 ] || { cat "$T/err.$1" >&2; die "$1: kgate report exit $st, expected 2"; }
    expect_grep "$4" "$T/err.$1"
}
damage tel_int telemetry/proc-000.csv '2s/,1980,/,19x0,/' "telemetry/proc-000.csv:2: column sm_mhz"
damage tel_fields telemetry/proc-000.csv '3s/$/,extra/' "telemetry/proc-000.csv:3: 15 fields where the header has 14"
damage tel_arm telemetry/proc-000.csv '4s/,[0-9]*,\(base\|cand\|ctrl\),/,1,nobody,/' "telemetry/proc-000.csv:4: column arm"
damage res_grid telemetry/resources-000.csv '2s/1x1x1/1x1/' "telemetry/resources-000.csv:2: column grid"
damage raw_ns raw/proc-001.csv.gz '5s/,[0-9.]*,\([0-9a-f]*,-\{0,1\}[0-9]*,-\{0,1\}[0-9]*\)$/,-3,\1/' "raw/proc-001.csv.gz:5: column ns"
damage raw_cpu raw/proc-001.csv.gz '4s/,-\{0,1\}[0-9]*$/,one/' "raw/proc-001.csv.gz:4: column process_cpu"
damage raw_header raw/proc-002.csv.gz '1s/ns/nanos/' "raw/proc-002.csv.gz:1: header is not"
damage raw_blank raw/proc-002.csv.gz '3s/.*//' "raw/proc-002.csv.gz:3: 0 fields"
damage chk_result checks/proc-000.csv '2s/,pass,/,passed,/' "checks/proc-000.csv:2: column result"
damage chk_nbad checks/proc-003.csv '2s/^\(\([^,]*,\)\{10\}\)[^,]*,/\1x,/' "checks/proc-003.csv:2: column"
damage proc_acc processes.csv '2s/,ok,1,/,ok,yes,/' "processes.csv:2: column accepted"
# a raw file that is not one whole gzip member
gz_damage() { # name how expected-message
    rm -rf "$T/bad"; cp -r "$T/ev" "$T/bad"
    case $2 in
    cut) head -c 200 "$T/ev/raw/proc-001.csv.gz" >"$T/bad/raw/proc-001.csv.gz" ;;
    plain) gzip -dc "$T/ev/raw/proc-001.csv.gz" >"$T/bad/raw/proc-001.csv.gz" ;;
    twice) gzip -c "$T/ev/raw/proc-001.csv.gz" >>"$T/bad/raw/proc-001.csv.gz" ;;
    esac
    "$KGATE" report "$T/bad" >/dev/null 2>"$T/err.$1"; st=$?
    [ "$st" = 2 ] || { cat "$T/err.$1" >&2; die "$1: kgate report exit $st, expected 2"; }
    expect_grep "$3" "$T/err.$1"
}
gz_damage gz_cut cut "raw/proc-001.csv.gz: its gzip stream is cut short"
gz_damage gz_plain plain "raw/proc-001.csv.gz: not a gzip stream kgate wrote"
gz_damage gz_twice twice "raw/proc-001.csv.gz: bytes after the end of its gzip member"
# verify names the same problem
rm -rf "$T/bad"; cp -r "$T/ev" "$T/bad"
sed -i '2s/,1980,/,19x0,/' "$T/bad/telemetry/proc-000.csv"
"$KGATE" verify "$T/bad" >"$T/vout" 2>&1 && die "verify passed a damaged telemetry row"
expect_grep "telemetry/proc-000.csv:2: column sm_mhz" "$T/vout"
