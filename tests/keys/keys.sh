#!/usr/bin/env bash
# Sorts by several keys (and --top, --unique): several 1-D -d datasets, --key-field a,b of a compound table and
# --key-column J,K of a 2-D dataset, each key ascending or descending (--order, --descending),
# with --carry and --index-out. Inputs come from h5gsort-gen; h5gsort runs on 1-4 ranks and
# every output is checked byte for byte by the independent h5gsort_check_keys (numpy.lexsort
# with a stable sort: the permutation is unique, so it does not depend on the rank count).
# Also --check and --verify of such outputs, a self-test of the checker (it must reject wrong
# outputs), --na-position (na_* cases, checked by tests/keys/na_position.py), and bad inputs (bad_* cases: exit 2, one error line naming the problem, no OUTPUT
# and no temporary file left; expect_failure in tests/e2e/lib.sh, on 1 and 3 ranks).
# H5G_TEST_BACKEND=cuda sorts on the GPU (skipped, exit 77, where no GPU is usable).
#   keys.sh BIN_DIR "MPIEXEC ... -n" CASE
BIN=$1
MPIEXEC=$2
CASE=$3
source "$(dirname "$0")/../e2e/lib.sh"
test_backend
SORT_OPTS=(--backend "$BACKEND") # every sort_ok and expect_failure run
W=$WORK
RANKS=(1 2 3 4)
# a working-memory cap below the slice: out of core (the GPU backend needs a few MB at least)
OOC_BUDGET=128K
[ "$BACKEND" = cuda ] && OOC_BUDGET=3M

# kcheck IN OUT ARGS...: the independent checker must accept OUT.
KCHECK=kcheck # the checker sort_keys runs: kcheck, or nacheck for --na-position
kcheck() {
  "$BIN/h5gsort_check_keys" "$@" >"$W/check.log" 2>&1 || {
    cat "$W/check.log" >&2
    die "h5gsort_check_keys $* rejected the output"
  }
}

# sort_keys P IN OUT SORT_AND_CHECK_ARGS... [-- SORT_ONLY_ARGS...]: sorts on P ranks and checks
# the output ($KCHECK) with the same key arguments (-d, --key-field, --key-column, --order,
# --descending, --na-position, --output-dataset, --carry); --index-out PATH is passed to the
# checker as --index PATH.
sort_keys() {
  local ranks=$1 in=$2 out=$3
  shift 3
  local args=() check=()
  while [ $# -gt 0 ]; do
    case $1 in
    --index-out) args+=("$1" "$2"); check+=(--index "$2"); shift 2 ;;
    --top | --counts) args+=("$1" "$2"); check+=("$1" "$2"); shift 2 ;;
    --) shift; args+=("$@"); break ;;
    -d | --key-field | --key-column | --order | --na-position | --output-dataset | --carry)
      args+=("$1" "$2"); check+=("$1" "$2"); shift 2 ;;
    *) args+=("$1"); check+=("$1"); shift ;;
    esac
  done
  rm -f "$out"
  sort_ok "$ranks" "$in" "$out" "${args[@]}"
  "$KCHECK" "$in" "$out" "${check[@]}"
}

# make_pair IN N TYPE_A DIST_A TYPE_B DIST_B: /a and /b (with attributes) and /c (a carried
# N x 2 float64 with NaNs), from generator runs on different rank counts.
make_pair() {
  local in=$1 n=$2
  gen 2 "$in" -d /a --count "$n" --type "$3" --dist "$4" --seed 3 --attrs --force
  gen 1 "$in" -d /b --count "$n" --type "$5" --dist "$6" --seed 4 --attrs --append
  gen 3 "$in" -d /c --count "$n" --type f8 --dist special --seed 5 --row-shape 2 --append
}

# Two integer keys with many ties (few distinct values each), second one descending.
case_two_ints() {
  make_pair "$W/in.h5" 3001 u2 few i4 few
  for p in "${RANKS[@]}"; do
    sort_keys "$p" "$W/in.h5" "$W/out_$p.h5" -d /a -d /b --order asc,desc --carry /c \
      --index-out /idx
    sort_keys "$p" "$W/in.h5" "$W/rev_$p.h5" -d /b -d /a --order desc,asc
  done
  sort_keys 2 "$W/in.h5" "$W/asc.h5" -d /a -d /b
  sort_keys 3 "$W/in.h5" "$W/desc.h5" -d /a -d /b --descending --index-out /idx
}

# A float key with NaNs, -0.0/+0.0, infinities (ties among them broken by an integer key), and
# the reverse priorities. (One key alone is the single-key sort, whose ties are by bit pattern;
# keys of more than 8 bytes together: case_wide.)
case_int_float() {
  make_pair "$W/f4.h5" 3001 f4 special u1 few
  make_pair "$W/f4i.h5" 3001 f4 special i4 few
  for p in "${RANKS[@]}"; do
    sort_keys "$p" "$W/f4.h5" "$W/f4_$p.h5" -d /a -d /b --index-out /idx
    sort_keys "$p" "$W/f4i.h5" "$W/f4i_$p.h5" -d /a -d /b --order desc,asc --carry /c
    sort_keys "$p" "$W/f4.h5" "$W/f4b_$p.h5" -d /b -d /a --order asc,desc --index-out /idx
  done
  sort_keys 2 "$W/f4i.h5" "$W/f4i_desc.h5" -d /b -d /a --descending
  sort_keys 3 "$W/f4i.h5" "$W/f4i_asc.h5" -d /a -d /b --order asc,asc --index-out /idx
}

# Three keys of 1 + 2 + 4 = 7 bytes together.
case_three_keys() {
  gen 2 "$W/in.h5" -d /k1 --count 4001 --type u1 --dist few --seed 1 --attrs
  gen 1 "$W/in.h5" -d /k2 --count 4001 --type u2 --dist few --seed 2 --append
  gen 3 "$W/in.h5" -d /k3 --count 4001 --type i4 --dist few --seed 3 --append --attrs
  gen 2 "$W/in.h5" -d /id --count 4001 --type u8 --dist index --append
  for p in "${RANKS[@]}"; do
    sort_keys "$p" "$W/in.h5" "$W/out_$p.h5" -d /k1 -d /k2 -d /k3 --carry /id --index-out /idx
    sort_keys "$p" "$W/in.h5" "$W/mix_$p.h5" -d /k3 -d /k1 -d /k2 --order desc,asc,desc
  done
}

# A compound table sorted by two fields (the f4 key has NaNs, -0.0, infinities), whole records
# moving, a carried dataset and the index beside it; into another group with --output-dataset.
case_fields() {
  gen 2 "$W/in.h5" -d /t --count 3001 --type f4 --dist special --table --attrs
  gen 1 "$W/in.h5" -d /aux --count 3001 --type i2 --dist uniform --row-shape 3 --append --attrs
  for p in "${RANKS[@]}"; do
    sort_keys "$p" "$W/in.h5" "$W/dk_$p.h5" -d /t --key-field det,key --carry /aux \
      --index-out /idx
    sort_keys "$p" "$W/in.h5" "$W/kd_$p.h5" -d /t --key-field key,det --order desc,asc \
      --carry /aux --index-out /idx
  done
  # (the carried dataset lands beside the moved table, under its base name)
  sort_ok 3 "$W/in.h5" "$W/moved.h5" -d /t --key-field det,key --order desc,asc \
    --output-dataset /sorted/t --carry /aux --index-out /idx
  kcheck "$W/in.h5" "$W/moved.h5" -d /t --key-field det,key --order desc,asc \
    --output-dataset /sorted/t --carry /aux:/sorted/aux --index /idx
  sort_keys 2 "$W/in.h5" "$W/desc.h5" -d /t --key-field det,key --descending
  # big-endian fields
  gen 2 "$W/be.h5" -d /t --count 2001 --type f4 --dist special --table --order be
  sort_keys 2 "$W/be.h5" "$W/be_out.h5" -d /t --key-field det,key --order asc,desc
}

# Rows of an N x 3 int16 array sorted by two columns, and by one; descending.
case_columns() {
  gen 2 "$W/in.h5" -d /m --count 3001 --type i2 --dist few --row-shape 3 --attrs
  gen 1 "$W/in.h5" -d /pay --count 3001 --type f4 --dist special --append
  for p in "${RANKS[@]}"; do
    sort_keys "$p" "$W/in.h5" "$W/c20_$p.h5" -d /m --key-column 2,0 --index-out /idx --carry /pay
    sort_keys "$p" "$W/in.h5" "$W/c1_$p.h5" -d /m --key-column 1 --descending --index-out /idx
    sort_keys "$p" "$W/in.h5" "$W/c02_$p.h5" -d /m --key-column 0,2 --descending
  done
  sort_keys 3 "$W/in.h5" "$W/mixed.h5" -d /m --key-column 1,2,0 --order desc,asc,desc \
    --index-out /idx
}

# N = 0, 1, 3 (fewer rows than ranks) and 2003, all keys equal: the output is the input (stable).
# (The table's key field is all equal, its det field is not: that one is checked by the checker.)
case_edge() {
  for n in 2003 0 1 3; do
    rm -f "$W"/*.h5
    make_pair "$W/in.h5" "$n" i4 equal f4 equal
    gen 1 "$W/in.h5" -d /m --count "$n" --type u2 --dist equal --row-shape 4 --append
    gen 2 "$W/in.h5" -d /t --count "$n" --type u1 --dist equal --table --append
    local ranks=(1 4)
    [ "$n" -eq 3 ] && ranks=(1 2 3 4)
    for p in "${ranks[@]}"; do
      sort_keys "$p" "$W/in.h5" "$W/d_$p.h5" -d /a -d /b --carry /c --index-out /idx
      sort_keys "$p" "$W/in.h5" "$W/desc_$p.h5" -d /a -d /b --order desc,asc --index-out /idx
      sort_keys "$p" "$W/in.h5" "$W/m_$p.h5" -d /m --key-column 3,1 --descending --index-out /idx
      sort_keys "$p" "$W/in.h5" "$W/t_$p.h5" -d /t --key-field key,det --index-out /idx
    done
    # all equal: every output is a copy of its input
    for p in "${ranks[@]}"; do
      "$BIN/h5gsort_check_records" --identical "$W/in.h5" "$W/d_$p.h5" /a /b /c >/dev/null ||
        die "all keys equal (N = $n, $p ranks): the output differs from the input"
      "$BIN/h5gsort_check_records" --identical "$W/in.h5" "$W/m_$p.h5" /m >/dev/null ||
        die "all rows equal (N = $n, $p ranks): the 2-D output differs from the input"
    done
  done
}

# Working memory so small that each rank sorts many runs and merges them (the GPU backend needs a
# few MB: more rows there), then --top and --unique out of core.
case_out_of_core() {
  local n=200000
  [ "$BACKEND" = cuda ] && n=$((1 << 21))
  gen 2 "$W/in.h5" -d /a --count "$n" --type u4 --dist few --seed 7
  gen 2 "$W/in.h5" -d /b --count "$n" --type u4 --dist uniform --seed 8 --append
  gen 1 "$W/in.h5" -d /id --count "$n" --type u8 --dist index --append
  # a table and a 2-D array: their rows, read run by run for the keys, are the rows carried
  gen 3 "$W/in.h5" -d /t --count "$n" --type u2 --dist few --table --append
  gen 4 "$W/in.h5" -d /m --count "$n" --type i2 --dist few --row-shape 3 --append
  local runs
  for p in "${RANKS[@]}"; do
    sort_keys "$p" "$W/in.h5" "$W/out_$p.h5" -d /a -d /b --order desc,asc --carry /id \
      --index-out /idx -- --device-memory "$OOC_BUDGET" --report "$W/report_$p.json"
    sort_keys "$p" "$W/in.h5" "$W/t_$p.h5" -d /t --key-field key,det --order desc,asc \
      --carry /id --index-out /idx -- --device-memory "$OOC_BUDGET" --report "$W/report_t$p.json"
    sort_keys "$p" "$W/in.h5" "$W/m_$p.h5" -d /m --key-column 2,0 -- \
      --device-memory "$OOC_BUDGET" --report "$W/report_m$p.json"
    for report in "$W/report_$p.json" "$W/report_t$p.json" "$W/report_m$p.json"; do
      runs=$(grep -o '"runs_per_rank": *[0-9]*' "$report" | grep -o '[0-9]*$' || true)
      [ "${runs:-0}" -ge 2 ] ||
        die "--device-memory $OOC_BUDGET on $p ranks sorted ${runs:-?} run(s) per rank, expected several ($report)"
    done
  done
  sort_keys 3 "$W/in.h5" "$W/asc.h5" -d /b -d /a -- --device-memory "$OOC_BUDGET"
  sort_keys 2 "$W/in.h5" "$W/top.h5" -d /a -d /b --top 1001 --index-out /idx -- \
    --device-memory "$OOC_BUDGET" --verify
  sort_keys 1 "$W/in.h5" "$W/top1.h5" -d /b --top 5000 -- --device-memory "$OOC_BUDGET"
  sort_keys 4 "$W/in.h5" "$W/uniq.h5" -d /a -d /b --unique --counts /n --index-out /idx -- \
    --device-memory "$OOC_BUDGET" --verify
  sort_keys 1 "$W/in.h5" "$W/uniq1.h5" -d /a --unique --counts /n -- --device-memory "$OOC_BUDGET"
}

# --top K: K = 0, 1, N - 1, N, N + 1 and one inside, on several keys, a table, a 2-D array, one
# integer key (keys only and with records) and out of core: only the first K rows are written.
case_top() {
  local n=2999
  make_pair "$W/in.h5" "$n" u2 few f4 special
  gen 1 "$W/in.h5" -d /m --count "$n" --type i2 --dist few --row-shape 3 --append
  gen 2 "$W/in.h5" -d /t --count "$n" --type f4 --dist special --table --append
  gen 3 "$W/in.h5" -d /k --count "$n" --type i4 --dist few --seed 9 --append
  for k in 0 1 1000 $((n - 1)) "$n" $((n + 1)); do
    for p in "${RANKS[@]}"; do
      sort_keys "$p" "$W/in.h5" "$W/ab.h5" -d /a -d /b --order desc,asc --top "$k" --carry /c \
        --index-out /idx
      sort_keys "$p" "$W/in.h5" "$W/k.h5" -d /k --top "$k"
      sort_keys "$p" "$W/in.h5" "$W/kr.h5" -d /k --descending --top "$k" --index-out /idx
    done
    sort_keys 3 "$W/in.h5" "$W/m.h5" -d /m --key-column 2,0 --top "$k" --index-out /idx
    sort_keys 2 "$W/in.h5" "$W/t.h5" -d /t --key-field key,det --top "$k" --carry /c
    sort_keys 4 "$W/in.h5" "$W/ooc.h5" -d /a -d /b --top "$k" --index-out /idx -- \
      --device-memory "$OOC_BUDGET" --verify
  done
  # the space the output needs is that of the rows kept: 16 MB of keys, 4 MB file size limit
  gen 2 "$W/big.h5" -d /k --count 2000000 --type u8 --dist few
  for sel in "--top 10" "--unique --counts /n"; do
    rm -f "$W/kept.h5"
    # shellcheck disable=SC2086  # sel is two or three words
    mpirun 2 bash -c 'ulimit -f 4096; exec "$@"' limit "$BIN/h5gsort" --backend "$BACKEND" \
      "$W/big.h5" "$W/kept.h5" -d /k $sel -q || die "h5gsort $sel under a 4 MB file size limit failed"
    # shellcheck disable=SC2086
    kcheck "$W/big.h5" "$W/kept.h5" -d /k $sel
  done
  # a rank may receive more rows than it holds: N = 3, K = 2 on 5 ranks (rank 2 holds none)
  make_pair "$W/small.h5" 3 i4 reverse f8 special
  for k in 1 2; do
    sort_keys 5 "$W/small.h5" "$W/s.h5" -d /a --top "$k" --index-out /idx -- --verify
    sort_keys 5 "$W/small.h5" "$W/s2.h5" -d /b -d /a --top "$k" --carry /c
  done
}

# --unique (with --counts, --carry, --index-out): one row per distinct key tuple, the earliest;
# NaNs of any payload are one value and -0.0 is +0.0; with --top K the K smallest distinct.
case_unique() {
  local n=3001
  make_pair "$W/in.h5" "$n" u2 few f4 special
  gen 1 "$W/in.h5" -d /m --count "$n" --type i2 --dist few --row-shape 3 --append
  gen 2 "$W/in.h5" -d /t --count "$n" --type f4 --dist special --table --append
  gen 3 "$W/in.h5" -d /e --count "$n" --type u1 --dist equal --append
  for p in "${RANKS[@]}"; do
    sort_keys "$p" "$W/in.h5" "$W/a.h5" -d /a --unique --counts /n --index-out /idx
    sort_keys "$p" "$W/in.h5" "$W/b.h5" -d /b --unique --counts /n --carry /c --index-out /idx
    sort_keys "$p" "$W/in.h5" "$W/bd.h5" -d /b --descending --unique --counts /n
    sort_keys "$p" "$W/in.h5" "$W/ab.h5" -d /a -d /b --order asc,desc --unique --counts /n \
      --index-out /idx
    sort_keys "$p" "$W/in.h5" "$W/e.h5" -d /e --unique --counts /n --index-out /idx
    sort_keys "$p" "$W/in.h5" "$W/m.h5" -d /m --key-column 1 --unique --counts /n
    sort_keys "$p" "$W/in.h5" "$W/t.h5" -d /t --key-field key --unique --counts /n --top 5
    sort_keys "$p" "$W/in.h5" "$W/ooc.h5" -d /b -d /a --unique --counts /n --index-out /idx -- \
      --device-memory "$OOC_BUDGET" --verify
  done
  for k in 0 1 3 1000000; do
    sort_keys 3 "$W/in.h5" "$W/top.h5" -d /a -d /b --unique --top "$k" --counts /n --index-out /idx
  done
  # duplicates are cut before the exchange: of a few distinct keys, each rank sends each at most
  # once (10 bytes with its source index), not 2/3 of its rows
  sort_keys 3 "$W/in.h5" "$W/a3.h5" -d /a --unique --counts /n -- --report "$W/a3.json"
  local sent distinct
  sent=$(grep -o '"exchanged_bytes": *[0-9]*' "$W/a3.json" | grep -o '[0-9]*$')
  distinct=$(grep -o '"rows_written": *[0-9]*' "$W/a3.json" | grep -o '[0-9]*$')
  [ "$sent" -le $((3 * distinct * 10)) ] ||
    die "--unique of $distinct distinct keys on 3 ranks exchanged $sent bytes: duplicates were not cut first"
}

# check_run CODE P ARGS...: h5gsort ARGS (e.g. --check ...) on P ranks must exit CODE.
check_run() {
  local code=$1 np=$2 rc=0
  shift 2
  RUNS=$((RUNS + 1))
  mpirun "$np" "$BIN/h5gsort" "${SORT_OPTS[@]}" "$@" >"$W/run.log" 2>&1 || rc=$?
  if [ "$rc" -ne "$code" ]; then
    cat "$W/run.log" >&2
    die "h5gsort $* (on $np ranks) exited $rc, expected $code"
  fi
  if [ "$code" -ne 0 ]; then
    grep -q '^h5gsort: error: ' "$W/run.log" || die "h5gsort $* failed without an error line"
  fi
  if grep -q 'HDF5-DIAG' "$W/run.log"; then die "h5gsort $* printed an HDF5 error stack"; fi
}

# Keys of more than 8 bytes together (up to 16: one 128-bit key, one sort pass; more: one pass per
# 128-bit word): two float64 keys with ties in the first (few values) and NaN/-0.0/inf in the
# second, float64 + int32, three uint32,
# uint64 + uint8, table fields (f8 + u2, u2 + f8 + f8), 2-D float64 columns; with --carry,
# --index-out, --top, --unique --counts, out of core, --verify and --check; N = 0, 1, 3.
case_wide() {
  local n=3001
  gen 2 "$W/in.h5" -d /x --count "$n" --type f8 --dist few --seed 11 --attrs
  gen 1 "$W/in.h5" -d /y --count "$n" --type f8 --dist special --seed 12 --append
  gen 3 "$W/in.h5" -d /i --count "$n" --type i4 --dist few --seed 13 --append
  gen 2 "$W/in.h5" -d /u1 --count "$n" --type u4 --dist few --seed 14 --append
  gen 1 "$W/in.h5" -d /u2 --count "$n" --type u4 --dist few --seed 15 --append
  gen 2 "$W/in.h5" -d /u3 --count "$n" --type u4 --dist few --seed 16 --append
  gen 1 "$W/in.h5" -d /big --count "$n" --type u8 --dist few --seed 17 --append
  gen 3 "$W/in.h5" -d /small --count "$n" --type u1 --dist uniform --seed 18 --append
  gen 2 "$W/in.h5" -d /t --count "$n" --type f8 --dist few --table --append
  gen 1 "$W/in.h5" -d /m --count "$n" --type f8 --dist few --row-shape 3 --append
  gen 3 "$W/in.h5" -d /c --count "$n" --type f8 --dist special --seed 5 --row-shape 2 --append
  for p in "${RANKS[@]}"; do
    sort_keys "$p" "$W/in.h5" "$W/xy.h5" -d /x -d /y --carry /c --index-out /idx -- --verify
    sort_keys "$p" "$W/in.h5" "$W/yi.h5" -d /y -d /i --order desc,asc --index-out /idx
    sort_keys "$p" "$W/in.h5" "$W/u.h5" -d /u1 -d /u2 -d /u3 --order asc,desc,asc --carry /x
    sort_keys "$p" "$W/in.h5" "$W/bs.h5" -d /big -d /small --descending --index-out /idx
    sort_keys "$p" "$W/in.h5" "$W/t.h5" -d /t --key-field key,x,det --order desc,asc,asc \
      --index-out /idx
    sort_keys "$p" "$W/in.h5" "$W/m.h5" -d /m --key-column 2,0,1 --order asc,desc,asc --carry /c
    sort_keys "$p" "$W/in.h5" "$W/uq.h5" -d /x -d /i --unique --counts /n --index-out /idx -- \
      --verify
    sort_keys "$p" "$W/in.h5" "$W/ooc.h5" -d /y -d /x --order desc,asc --index-out /idx -- \
      --device-memory "$OOC_BUDGET" --verify
    # 20 bytes: two 128-bit words, the second of 4 bytes
    sort_keys "$p" "$W/in.h5" "$W/uq3.h5" -d /x -d /y -d /i --unique --counts /n --index-out /idx \
      -- --verify
    sort_keys "$p" "$W/in.h5" "$W/ooc3.h5" -d /y -d /x -d /i --order desc,asc,desc --index-out /idx \
      -- --device-memory "$OOC_BUDGET" --verify
  done
  # keys of up to 16 bytes together take one sort pass, more take one per 16-byte word
  sort_keys 2 "$W/in.h5" "$W/xy.h5" -d /x -d /y -- --report "$W/xy.json"
  grep -q '"sort_passes": 1,' "$W/xy.json" || die "f8 + f8 keys: the report has no 1 sort pass"
  sort_keys 2 "$W/in.h5" "$W/t3.h5" -d /t --key-field key,x,det -- --report "$W/t3.json"
  grep -q '"sort_passes": 2,' "$W/t3.json" || die "f8 + f8 + u2 keys: the report has no 2 sort passes"
  for p in 1 3; do # 40 bytes: three words, the last one of 8 bytes
    sort_keys "$p" "$W/in.h5" "$W/w3.h5" -d /x -d /y -d /big -d /i -d /u1 -d /u2 -d /u3 \
      --order asc,desc,asc,desc,asc,asc,desc --index-out /idx -- --report "$W/w3.json" --verify
  done
  grep -q '"sort_passes": 3,' "$W/w3.json" || die "40 bytes of keys: the report has no 3 sort passes"
  check_run 0 3 --check "$W/xy.h5" -d /x -d /y --against "$W/in.h5"
  check_run 1 2 --check "$W/in.h5" -d /x -d /y
  check_run 0 2 --check "$W/ooc3.h5" -d /y -d /x -d /i --order desc,asc,desc --against "$W/in.h5"
  check_run 1 3 --check "$W/in.h5" -d /y -d /x -d /i
  for k in 0 1 1000 $((n - 1)) "$n" $((n + 1)); do
    sort_keys 3 "$W/in.h5" "$W/top.h5" -d /x -d /y --order desc,asc --top "$k" --carry /c \
      --index-out /idx
    sort_keys 2 "$W/in.h5" "$W/topu.h5" -d /t --key-field x,key --unique --counts /n --top "$k"
    sort_keys 3 "$W/in.h5" "$W/top3.h5" -d /x -d /y -d /i --order desc,asc,asc --top "$k" \
      --index-out /idx
  done
  sort_keys 4 "$W/in.h5" "$W/topooc.h5" -d /u1 -d /u2 -d /u3 --top 777 --index-out /idx -- \
    --device-memory "$OOC_BUDGET" --verify
  for n in 0 1 3; do
    rm -f "$W/in.h5"
    gen 2 "$W/in.h5" -d /x --count "$n" --type f8 --dist few --seed 11
    gen 1 "$W/in.h5" -d /y --count "$n" --type f8 --dist special --seed 12 --append
    gen 3 "$W/in.h5" -d /i --count "$n" --type i4 --dist few --seed 13 --append
    for p in "${RANKS[@]}"; do
      sort_keys "$p" "$W/in.h5" "$W/e.h5" -d /x -d /y --index-out /idx -- --verify
      sort_keys "$p" "$W/in.h5" "$W/eu.h5" -d /y -d /x --unique --counts /n --top 2
      sort_keys "$p" "$W/in.h5" "$W/e3.h5" -d /y -d /x -d /i --unique --counts /n --top 2 -- --verify
    done
  done
}

# --check: a sorted output passes (also --against its input), the unsorted input and a wrong
# direction fail with exit 1, and so does --against a file with other keys.
case_check_mode() {
  make_pair "$W/in.h5" 5003 u2 few f4 special
  # the same /a, another /b
  gen 1 "$W/other.h5" -d /a --count 5003 --type u2 --dist few --seed 3
  gen 1 "$W/other.h5" -d /b --count 5003 --type f4 --dist special --seed 99 --append
  for p in "${RANKS[@]}"; do
    sort_keys "$p" "$W/in.h5" "$W/out_$p.h5" -d /a -d /b --order asc,desc
    check_run 0 "$p" --check "$W/out_$p.h5" -d /a -d /b --order asc,desc
    check_run 0 "$p" --check "$W/out_$p.h5" -d /a -d /b --order asc,desc --against "$W/in.h5"
    check_run 1 "$p" --check "$W/in.h5" -d /a -d /b --order asc,desc
    check_run 1 "$p" --check "$W/out_$p.h5" -d /a -d /b --order asc,asc
    check_run 1 "$p" --check "$W/out_$p.h5" -d /b -d /a --order desc,asc
  done
  check_run 1 2 --check "$W/out_2.h5" -d /a -d /b --order asc,desc --against "$W/other.h5"
  sort_keys 2 "$W/in.h5" "$W/desc.h5" -d /a -d /b --descending
  check_run 0 2 --check "$W/desc.h5" -d /a -d /b --descending --against "$W/in.h5"
  check_run 1 2 --check "$W/desc.h5" -d /a -d /b
  # tables and 2-D rows
  gen 2 "$W/t.h5" -d /t --count 3001 --type i4 --dist few --table
  gen 2 "$W/t.h5" -d /m --count 3001 --type i2 --dist few --row-shape 3 --append
  sort_keys 3 "$W/t.h5" "$W/t_out.h5" -d /t --key-field det,key --order desc,asc
  check_run 0 3 --check "$W/t_out.h5" -d /t --key-field det,key --order desc,asc --against "$W/t.h5"
  check_run 1 3 --check "$W/t.h5" -d /t --key-field det,key --order desc,asc
  sort_keys 2 "$W/t.h5" "$W/m_out.h5" -d /m --key-column 2,0
  check_run 0 2 --check "$W/m_out.h5" -d /m --key-column 2,0 --against "$W/t.h5"
  check_run 1 2 --check "$W/m_out.h5" -d /m --key-column 0,2
}

# --verify re-reads the output and passes, for every way of giving the keys.
case_verify() {
  make_pair "$W/in.h5" 5003 i2 few f4 special
  gen 2 "$W/in.h5" -d /t --count 5003 --type f4 --dist special --table --append
  gen 2 "$W/in.h5" -d /m --count 5003 --type u1 --dist few --row-shape 4 --append
  for p in "${RANKS[@]}"; do
    sort_keys "$p" "$W/in.h5" "$W/a_$p.h5" -d /a -d /b --order desc,asc --carry /c -- --verify
    grep -qi 'verif' "$W/last.log" || { cat "$W/last.log"; die "--verify printed no verdict"; }
    sort_keys "$p" "$W/in.h5" "$W/t_$p.h5" -d /t --key-field key,det --index-out /idx -- --verify
    sort_keys "$p" "$W/in.h5" "$W/m_$p.h5" -d /m --key-column 3,0 --descending -- --verify
  done
}

# The checker must reject wrong outputs (a checker that cannot fail checks nothing).
case_checker() {
  expect_reject() {
    local pattern=$1 rc=0
    shift
    "$BIN/h5gsort_check_keys" "$@" >"$W/reject.log" 2>&1 || rc=$?
    [ "$rc" -eq 1 ] || die "h5gsort_check_keys exited $rc (expected 1) for: $* ($(cat "$W/reject.log"))"
    grep -qiE "FAILED.*($pattern)" "$W/reject.log" ||
      die "h5gsort_check_keys gave no reason matching /$pattern/: $(cat "$W/reject.log")"
  }
  make_pair "$W/in.h5" 2001 u1 few i2 few
  local in=$W/in.h5
  sort_keys 2 "$in" "$W/ab.h5" -d /a -d /b --carry /c --index-out /idx
  # the keys' priorities swapped, a direction changed, one key left out
  expect_reject 'row.*expected.*got' "$in" "$W/ab.h5" -d /b -d /a --carry /c --index /idx
  expect_reject 'row.*expected.*got' "$in" "$W/ab.h5" -d /a -d /b --order asc,desc
  expect_reject 'row.*expected.*got' "$in" "$W/ab.h5" -d /a -d /b --descending
  # sorted by /a alone, /b carried: its rows among equal /a are not in input order (unstable)
  expect_reject '/b.*row' "$in" "$W/ab.h5" -d /a --carry /b
  # an output sorted with another direction (rows swapped against the right one)
  sort_keys 3 "$in" "$W/ad.h5" -d /a -d /b --order asc,desc --carry /c --index-out /idx
  expect_reject '/b.*row' "$in" "$W/ad.h5" -d /a -d /b --carry /c --index /idx
  # right keys, wrong index or carried dataset: copied in from the other output
  h5copy -i "$W/ad.h5" -o "$W/ab.h5" -s /idx -d /idx_ad || die "h5copy failed"
  h5copy -i "$W/ad.h5" -o "$W/ab.h5" -s /c -d /c_ad || die "h5copy failed"
  expect_reject 'index.*expected' "$in" "$W/ab.h5" -d /a -d /b --index /idx_ad
  expect_reject 'c_ad.*row' "$in" "$W/ab.h5" -d /a -d /b --carry /c:/c_ad
  kcheck "$in" "$W/ab.h5" -d /a -d /b --carry /c --index /idx
  # --unique and --top: the counts must be the group sizes, the rows the kept ones
  sort_keys 2 "$in" "$W/u.h5" -d /a -d /b --unique --counts /n --index-out /idx --top 20
  expect_reject 'index.*expected' "$in" "$W/u.h5" -d /a -d /b --unique --counts /idx --top 20
  expect_reject 'shape differs' "$in" "$W/u.h5" -d /a -d /b --unique --counts /n --top 19
  expect_reject 'row.*expected.*got' "$in" "$W/u.h5" -d /a -d /b --top 20
  expect_reject 'row.*expected.*got' "$in" "$W/u.h5" -d /a -d /b --order asc,desc --unique --top 20
  # the unsorted input as its own output; a missing output dataset; attributes not copied
  expect_reject 'row' "$in" "$in" -d /a -d /b
  expect_reject 'no dataset' "$in" "$W/ab.h5" -d /a -d /b --carry /nosuch
  # the same keys without attributes: sorted right, but the input's attributes are missing
  gen 1 "$W/plain.h5" -d /a --count 2001 --type u1 --dist few --seed 3
  gen 1 "$W/plain.h5" -d /b --count 2001 --type i2 --dist few --seed 4 --append
  sort_keys 1 "$W/plain.h5" "$W/plain_out.h5" -d /a -d /b
  expect_reject 'attribute' "$in" "$W/plain_out.h5" -d /a -d /b
  # tables: priorities swapped; 2-D rows: another column
  gen 1 "$W/t.h5" -d /t --count 1500 --type i2 --dist few --table
  gen 1 "$W/t.h5" -d /m --count 1500 --type u2 --dist few --row-shape 3 --append
  sort_keys 2 "$W/t.h5" "$W/t_out.h5" -d /t --key-field det,key
  expect_reject 'row.*expected.*got' "$W/t.h5" "$W/t_out.h5" -d /t --key-field key,det
  expect_reject 'row.*expected.*got' "$W/t.h5" "$W/t.h5" -d /t --key-field det,key
  sort_keys 2 "$W/t.h5" "$W/m_out.h5" -d /m --key-column 0,1 --index-out /idx
  expect_reject 'row.*expected.*got' "$W/t.h5" "$W/m_out.h5" -d /m --key-column 0,2
  expect_reject 'out of range' "$W/t.h5" "$W/m_out.h5" -d /m --key-column 3
  expect_reject 'expected' "$W/t.h5" "$W/m_out.h5" -d /m --key-column 0,1 --descending --index /idx
  # usage errors exit 2
  local rc=0
  "$BIN/h5gsort_check_keys" "$in" "$W/ab.h5" -d /a -d /b --order asc >/dev/null 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || die "h5gsort_check_keys with a wrong --order count exited $rc, expected 2"
}

# ---- --na-position: NaNs first or last, checked by tests/keys/na_position.py (numpy, pandas) ----
NA_PY=$(dirname "$0")/na_position.py
# the Python with h5py and numpy: Debian's (CI) or, on the GPU machine, the one on PATH
NA_PYTHON=/usr/bin/python3
"$NA_PYTHON" -c 'import h5py' 2>/dev/null || NA_PYTHON=python3

# nacheck IN OUT ARGS...: queues na_position.py's check of OUT (and of --nans-as OTHER) on copies,
# as the case writes OUT again; the case's checks run in one Python at its end (na_checks_run):
# starting Python with pandas costs more than a check.
NA_QUEUE=$W/na_queue
NA_QUEUED=0
nacheck() {
  local in=$1 out=$2 entry args=()
  shift 2
  mkdir -p "$NA_QUEUE"
  entry=$NA_QUEUE/$(printf '%04d' "$NA_QUEUED")
  NA_QUEUED=$((NA_QUEUED + 1))
  cp "$out" "$entry.out.h5" || die "cannot copy $out for its check"
  args=("$in" "$entry.out.h5")
  while [ $# -gt 0 ]; do
    if [ "$1" = --nans-as ]; then
      cp "$2" "$entry.nans.h5" || die "cannot copy $2 for its check"
      args+=(--nans-as "$entry.nans.h5")
      shift 2
    else
      args+=("$1")
      shift
    fi
  done
  printf '%s\0' "${args[@]}" >"$entry.args"
}

# na_checks_run: the queued checks; each one that fails is named with its arguments.
na_checks_run() {
  [ "$NA_QUEUED" -gt 0 ] || return 0
  "$NA_PYTHON" "$NA_PY" batch "$NA_QUEUE" >"$W/check.log" 2>&1 || {
    grep -v ': [0-9]* rows in the order of' "$W/check.log" >&2
    die "na_position.py rejected $(grep -c 'check .* failed' "$W/check.log") of $NA_QUEUED outputs"
  }
}

# na_input FILE N SEED: float keys with NaNs of many payloads, -0.0, +-inf; integer keys; a
# compound table; a 2-D float64 array (na_position.py make).
na_input() {
  "$NA_PYTHON" "$NA_PY" make "$@" || die "na_position.py make $* failed"
}

# One float key (the single-key sort: ties and NaNs in bit order), f4 and f8, each direction and
# NaN place: keys only, with records (--index-out, --carry), --stable; without the option the
# place is numpy's; the NaNs keep among themselves the order they have at numpy's place.
case_na_single() {
  KCHECK=nacheck
  na_input "$W/in.h5" 3001 1
  for t in /f4 /f8; do
    for dir in asc desc; do
      sort_keys 2 "$W/in.h5" "$W/numpy.h5" -d "$t" --order "$dir"
      for na in first last; do
        for p in "${RANKS[@]}"; do
          sort_keys "$p" "$W/in.h5" "$W/r.h5" -d "$t" --order "$dir" --na-position "$na" \
            --index-out /idx --carry /id
          sort_keys "$p" "$W/in.h5" "$W/k.h5" -d "$t" --order "$dir" --na-position "$na"
          nacheck "$W/in.h5" "$W/k.h5" -d "$t" --order "$dir" --na-position "$na" \
            --nans-as "$W/numpy.h5"
        done
        sort_keys 3 "$W/in.h5" "$W/s.h5" -d "$t" --order "$dir" --na-position "$na" --stable \
          --carry /id --index-out /idx -- --verify
      done
    done
  done
}

# Several keys with NaNs in the second (or first) key, mixed directions; keys of 16 bytes (one
# word) and of 18 (two words, two sort passes); without the option each key's NaNs at numpy's
# place for its own direction.
case_na_keys() {
  KCHECK=nacheck
  na_input "$W/in.h5" 3001 2
  for na in first last; do
    for p in "${RANKS[@]}"; do
      sort_keys "$p" "$W/in.h5" "$W/a.h5" -d /i -d /f4 --na-position "$na" --index-out /idx \
        --carry /id
      sort_keys "$p" "$W/in.h5" "$W/b.h5" -d /u -d /f8 --order asc,desc --na-position "$na"
      sort_keys "$p" "$W/in.h5" "$W/c.h5" -d /f8 -d /i --order desc,asc --na-position "$na" \
        --index-out /idx
    done
    sort_keys 2 "$W/in.h5" "$W/w.h5" -d /f8 -d /f4 -d /i --order desc,asc,desc \
      --na-position "$na" --index-out /idx -- --verify
    sort_keys 3 "$W/in.h5" "$W/w2.h5" -d /f4 -d /f8 -d /i -d /u --order asc,desc,asc,desc \
      --na-position "$na" --index-out /idx -- --verify
  done
  sort_keys 2 "$W/in.h5" "$W/d.h5" -d /f4 -d /f8 --order asc,desc --index-out /idx
}

# --key-field (a compound table's f4, f8 and int16 fields) and --key-column (2-D float64 rows).
case_na_fields() {
  KCHECK=nacheck
  na_input "$W/in.h5" 3001 3
  for na in first last; do
    for p in "${RANKS[@]}"; do
      sort_keys "$p" "$W/in.h5" "$W/t.h5" -d /t --key-field det,x --order desc,asc \
        --na-position "$na" --index-out /idx --carry /id
      sort_keys "$p" "$W/in.h5" "$W/m.h5" -d /m --key-column 2,0 --order asc,desc \
        --na-position "$na" --index-out /idx
    done
    sort_keys 3 "$W/in.h5" "$W/y.h5" -d /t --key-field y --descending --na-position "$na" \
      -- --verify
    sort_keys 2 "$W/in.h5" "$W/xy.h5" -d /t --key-field x,y,det --na-position "$na" -- --verify
    sort_keys 4 "$W/in.h5" "$W/m1.h5" -d /m --key-column 1 --na-position "$na" -- --verify
  done
}

# --top K with the NaNs first (the K smallest are NaNs) or last: one key (exact selection), one
# key with records, several keys, a table field.
case_na_top() {
  KCHECK=nacheck
  local n=3001
  na_input "$W/in.h5" "$n" 4
  for k in 0 1 700 $((n - 1)) "$n" $((n + 1)); do
    for na in first last; do
      for dir in asc desc; do
        for p in 1 3; do
          sort_keys "$p" "$W/in.h5" "$W/k.h5" -d /f4 --order "$dir" --na-position "$na" --top "$k"
        done
        sort_keys 4 "$W/in.h5" "$W/r.h5" -d /f8 --order "$dir" --na-position "$na" --top "$k" \
          --index-out /idx
      done
      sort_keys 2 "$W/in.h5" "$W/ab.h5" -d /i -d /f8 --order asc,desc --na-position "$na" \
        --top "$k" --carry /id --index-out /idx
      sort_keys 3 "$W/in.h5" "$W/t.h5" -d /t --key-field y --na-position "$na" --top "$k"
    done
  done
}

# --unique: every NaN is one value (the earliest kept, at the end asked for), -0.0 is +0.0;
# --counts, --top, several keys.
case_na_unique() {
  KCHECK=nacheck
  na_input "$W/in.h5" 3001 5
  for na in first last; do
    for dir in asc desc; do
      for p in "${RANKS[@]}"; do
        sort_keys "$p" "$W/in.h5" "$W/u.h5" -d /f4 --order "$dir" --na-position "$na" --unique \
          --counts /n --index-out /idx
        # one NaN row, at the end --na-position names
        "$NA_PYTHON" - "$W/u.h5" "$na" <<'PY' || die "--unique did not keep one NaN at its end"
import sys, h5py, numpy as np
k = h5py.File(sys.argv[1], "r")["f4"][()]
at = np.flatnonzero(np.isnan(k))
assert list(at) == [0 if sys.argv[2] == "first" else len(k) - 1], (at, len(k))
PY
      done
      sort_keys 2 "$W/in.h5" "$W/ab.h5" -d /i -d /f8 --order "$dir",asc --na-position "$na" \
        --unique --counts /n --index-out /idx -- --verify
      sort_keys 3 "$W/in.h5" "$W/top.h5" -d /f8 --order "$dir" --na-position "$na" --unique \
        --counts /n --top 3
    done
  done
}

# --check with --na-position: a file sorted with the NaNs first (or descending, last) checks only
# with the same option; several keys and a table too; --report records the place.
case_na_check() {
  KCHECK=nacheck
  na_input "$W/in.h5" 5003 6
  for p in 1 2 3 4; do
    sort_keys "$p" "$W/in.h5" "$W/f.h5" -d /f4 --na-position first
    check_run 0 "$p" --check "$W/f.h5" -d /f4 --na-position first --against "$W/in.h5"
    check_run 1 "$p" --check "$W/f.h5" -d /f4
    check_run 1 "$p" --check "$W/f.h5" -d /f4 --na-position last
    sort_keys "$p" "$W/in.h5" "$W/dl.h5" -d /f8 --descending --na-position last
    check_run 0 "$p" --check "$W/dl.h5" -d /f8 --descending --na-position last
    check_run 1 "$p" --check "$W/dl.h5" -d /f8 --descending
    check_run 1 "$p" --check "$W/dl.h5" -d /f8 --na-position last
    sort_keys "$p" "$W/in.h5" "$W/m.h5" -d /i -d /f4 --order asc,desc --na-position last
    check_run 0 "$p" --check "$W/m.h5" -d /i -d /f4 --order asc,desc --na-position last \
      --against "$W/in.h5"
    check_run 1 "$p" --check "$W/m.h5" -d /i -d /f4 --order asc,desc
  done
  # the batched checker rejects a wrong output and names it: f.h5 has its NaNs first
  local rc=0
  mkdir -p "$W/wrong_queue"
  printf '%s\0' "$W/in.h5" "$W/f.h5" -d /f4 --na-position last >"$W/wrong_queue/0.args"
  printf '%s\0' "$W/in.h5" "$W/f.h5" -d /f4 --na-position first >"$W/wrong_queue/1.args"
  "$NA_PYTHON" "$NA_PY" batch "$W/wrong_queue" >"$W/wrong.log" 2>&1 || rc=$?
  if ! { [ "$rc" -eq 1 ] && grep -q 'check 0.args failed' "$W/wrong.log" &&
    ! grep -q 'check 1.args failed' "$W/wrong.log"; }; then
    die "na_position.py batch did not reject just the wrong output (exit $rc): $(cat "$W/wrong.log")"
  fi
  sort_keys 2 "$W/in.h5" "$W/t.h5" -d /t --key-field x,y --na-position first -- \
    --report "$W/r.json"
  check_run 0 3 --check "$W/t.h5" -d /t --key-field x,y --na-position first --against "$W/in.h5"
  check_run 1 3 --check "$W/t.h5" -d /t --key-field x,y
  "$NA_PYTHON" - "$W/r.json" <<'PY' || die "--report does not record --na-position"
import json, sys
keys = json.load(open(sys.argv[1]))["input"]["keys"]
assert [k.get("na_position") for k in keys] == ["first", "first"], keys
PY
}

# Integer keys: the option is accepted and changes nothing (the same outputs as without it).
case_na_integer() {
  KCHECK=nacheck
  na_input "$W/in.h5" 3001 7
  for p in 1 3; do
    for args in "-d /i" "-d /u --descending" "-d /i -d /u --order desc,asc"; do
      # shellcheck disable=SC2086  # args is several words
      sort_keys "$p" "$W/in.h5" "$W/plain.h5" $args --index-out /idx
      for na in first last; do
        # shellcheck disable=SC2086
        sort_keys "$p" "$W/in.h5" "$W/na.h5" $args --na-position "$na" --index-out /idx
        h5diff "$W/plain.h5" "$W/na.h5" >&2 || die "--na-position $na changed the sort of $args"
      done
    done
  done
  # the report gives NaN's place for the floating-point key only
  sort_keys 2 "$W/in.h5" "$W/m.h5" -d /i -d /f8 --na-position first -- --report "$W/r.json"
  "$NA_PYTHON" - "$W/r.json" <<'PY' || die "--report gives an integer key a NaN position"
import json, sys
keys = json.load(open(sys.argv[1]))["input"]["keys"]
assert [k.get("na_position") for k in keys] == [None, "first"], keys
PY
}

# Out of core (many sorted runs merged), NaNs first and last.
case_na_out_of_core() {
  KCHECK=nacheck
  local n=200000
  [ "$BACKEND" = cuda ] && n=$((1 << 21))
  na_input "$W/in.h5" "$n" 8
  for na in first last; do
    sort_keys 2 "$W/in.h5" "$W/k.h5" -d /f8 --na-position "$na" -- \
      --device-memory "$OOC_BUDGET" --verify
    sort_keys 3 "$W/in.h5" "$W/d.h5" -d /f4 --descending --na-position "$na" --index-out /idx \
      -- --device-memory "$OOC_BUDGET" --verify
    sort_keys 4 "$W/in.h5" "$W/m.h5" -d /i -d /f8 --order desc,asc --na-position "$na" \
      --top 5000 --index-out /idx -- --device-memory "$OOC_BUDGET" --verify
    sort_keys 2 "$W/in.h5" "$W/r.h5" -d /f4 --na-position "$na" -- \
      --device-memory "$OOC_BUDGET" --report "$W/r.json"
    grep -qE '"runs_per_rank": *([2-9]|[1-9][0-9])' "$W/r.json" ||
      die "--device-memory $OOC_BUDGET did not sort out of core"
  done
}

# ---- bad inputs ----
IN=$W/in.h5
OUT=$W/outdir/out.h5
WRAP=()
mkdir -p "$W/outdir"

case_bad_lengths() {
  gen 2 "$IN" -d /a --count 100 --type i4
  gen 1 "$IN" -d /b --count 99 --type u2 --append
  expect_failure 2 'differ in length' "$IN" "$OUT" -d /a -d /b
  expect_failure 2 'differ in length' "$IN" "$OUT" -d /b -d /a --order desc,asc --index-out /idx
}
case_bad_twod_without_column() {
  gen 2 "$IN" -d /m --count 100 --type i2 --row-shape 3
  gen 1 "$IN" -d /a --count 100 --type i2 --append
  expect_failure 2 '--key-column' "$IN" "$OUT" -d /m
  expect_failure 2 '--key-column' "$IN" "$OUT" -d /a -d /m
}
case_bad_column_out_of_range() {
  gen 2 "$IN" -d /m --count 100 --type i2 --row-shape 3
  expect_failure 2 'out of range' "$IN" "$OUT" -d /m --key-column 3
  expect_failure 2 'out of range' "$IN" "$OUT" -d /m --key-column 0,7
}
case_bad_column_on_1d() {
  gen 2 "$IN" -d /a --count 100 --type i2
  expect_failure 2 '2-D|--key-column' "$IN" "$OUT" -d /a --key-column 0
}
case_bad_order_count() {
  gen 2 "$IN" -d /a --count 100 --type i2
  gen 1 "$IN" -d /b --count 100 --type u1 --append
  gen 1 "$IN" -d /m --count 100 --type u1 --row-shape 3 --append
  expect_failure 2 'one per key' "$IN" "$OUT" -d /a -d /b --order asc
  expect_failure 2 'one per key' "$IN" "$OUT" -d /a -d /b --order asc,desc,asc
  expect_failure 2 'one per key' "$IN" "$OUT" -d /m --key-column 2,0 --order desc
}
case_bad_na_position() {
  gen 2 "$IN" -d /a --count 100 --type f4
  expect_failure 2 'na-position takes first or last' "$IN" "$OUT" -d /a --na-position middle
  expect_failure 2 'na-position takes first or last' "$IN" "$OUT" -d /a --na-position FIRST
}
case_bad_output_dataset_two_d() {
  gen 2 "$IN" -d /a --count 100 --type i2
  gen 1 "$IN" -d /b --count 100 --type u1 --append
  expect_failure 2 '--output-dataset' "$IN" "$OUT" -d /a -d /b --output-dataset /sorted
}

"case_$CASE"
na_checks_run
passed
