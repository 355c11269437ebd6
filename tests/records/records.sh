#!/usr/bin/env bash
# Record-sort tests (--carry, --index-out, --stable, --key-field): inputs from h5gsort-gen,
# sorted by h5gsort on 1-4 ranks, every output checked by the independent h5gsort_check_records
# (permutation, keys follow their sources bit for bit, carried rows follow the keys, stability,
# attributes) and compared across rank counts byte for byte (record sorts are always stable, so
# the output does not depend on the rank count).
#   records.sh BIN_DIR "MPIEXEC ... -n" CASE [ARG]
BIN=$1
MPIEXEC=$2
CASE=$3
ARG=${4:-}
source "$(dirname "$0")/../e2e/lib.sh"
W=$WORK

# same A.h5 B.h5 PATH...: the datasets are byte-identical in both files.
same() { rcheck --identical "$@"; }

# A key-type-dependent payload type: never the key's own type.
other_type() {
  local type=$1 preferred=$2 fallback=$3
  if [ "$type" = "$preferred" ]; then echo "$fallback"; else echo "$preferred"; fi
}

# make_records IN.h5 N TYPE DIST [GEN OPTIONS...]: /keys (TYPE, DIST, with attributes), /id
# (uint64 row ids), /pay (1-D float64 or int16) and /nd/pay (N x 3 x 2, uint16 or float32, with
# attributes); three generator runs on different rank counts.
make_records() {
  local in=$1 n=$2 type=$3 dist=$4
  shift 4
  gen 2 "$in" -d /keys --count "$n" --type "$type" --dist "$dist" --seed 3 --attrs "$@"
  gen 1 "$in" -d /id --count "$n" --type u8 --dist index --append
  gen 3 "$in" -d /pay --count "$n" --type "$(other_type "$type" f8 i2)" --dist special --seed 4 \
    --append
  gen 2 "$in" -d /nd/pay --count "$n" --type "$(other_type "$type" u2 f4)" --dist uniform \
    --seed 5 --row-shape 3,2 --attrs --append
}

RECORD_PATHS=(/keys /id /pay /nd/pay)
CARRY=(--carry "/id,/pay,/nd/pay")
CHECK_CARRY=(--carry /pay --carry /nd/pay --row-id /id)

# Payload follows the key for every key type, on 1-4 ranks; --index-out on 2 and 4 ranks.
case_type() {
  local type=$1
  make_records "$W/in.h5" 1009 "$type" special
  for p in 1 2 3 4; do
    local index=()
    [ $((p % 2)) -eq 0 ] && index=(--index-out /idx)
    sort_ok "$p" "${CARRY[@]}" "${index[@]}" "$W/in.h5" "$W/out_$p.h5" -d /keys
    rcheck "$W/in.h5" "$W/out_$p.h5" -d /keys "${CHECK_CARRY[@]}" ${index:+--index /idx}
    same "$W/out_1.h5" "$W/out_$p.h5" "${RECORD_PATHS[@]}"
  done
  same "$W/out_2.h5" "$W/out_4.h5" /idx
}

# Many equal keys with --stable: equal keys keep the input order and the output is the same
# byte for byte on 1, 2, 3 and 4 ranks.
case_stable() {
  for spec in i4:equal f8:few u1:few; do
    rm -f "$W"/*.h5
    make_records "$W/in.h5" 2003 "${spec%%:*}" "${spec#*:}"
    for p in 1 2 3 4; do
      sort_ok "$p" --stable "${CARRY[@]}" --index-out /idx "$W/in.h5" "$W/out_$p.h5" -d /keys
      rcheck "$W/in.h5" "$W/out_$p.h5" -d /keys "${CHECK_CARRY[@]}" --index /idx
      same "$W/out_1.h5" "$W/out_$p.h5" "${RECORD_PATHS[@]}" /idx
    done
  done
}

# N = 0, 1 and 3 (fewer rows than ranks).
case_sizes() {
  for n in 0 1 3; do
    rm -f "$W"/*.h5
    make_records "$W/in.h5" "$n" f4 special
    for p in 1 4; do
      sort_ok "$p" "${CARRY[@]}" --index-out /idx "$W/in.h5" "$W/out_$p.h5" -d /keys
      rcheck "$W/in.h5" "$W/out_$p.h5" -d /keys "${CHECK_CARRY[@]}" --index /idx
    done
    same "$W/out_1.h5" "$W/out_4.h5" "${RECORD_PATHS[@]}" /idx
  done
}

# Descending: the reverse order, equal keys still in input order.
case_descending() {
  for spec in f4:special i8:few u2:equal; do
    rm -f "$W"/*.h5
    make_records "$W/in.h5" 3001 "${spec%%:*}" "${spec#*:}"
    for p in 1 3; do
      sort_ok "$p" --descending "${CARRY[@]}" --index-out /idx "$W/in.h5" "$W/out_$p.h5" -d /keys
      rcheck "$W/in.h5" "$W/out_$p.h5" -d /keys --descending "${CHECK_CARRY[@]}" --index /idx
    done
    same "$W/out_1.h5" "$W/out_3.h5" "${RECORD_PATHS[@]}" /idx
  done
}

# --index-out alone: gathering the input by the index gives the output; the index may go into
# new groups, and goes where it is told also when the keys move (--output-dataset).
case_index() {
  gen 2 "$W/in.h5" -d /keys --count 5003 --type u4 --dist few
  gen 1 "$W/in.h5" -d /id --count 5003 --type u8 --dist index --append
  for p in 1 3; do
    sort_ok "$p" --index-out /meta/order/idx "$W/in.h5" "$W/out_$p.h5" -d /keys
    rcheck "$W/in.h5" "$W/out_$p.h5" -d /keys --index /meta/order/idx
  done
  same "$W/out_1.h5" "$W/out_3.h5" /keys /meta/order/idx
  sort_ok 2 --index-out /idx --output-dataset /sorted/keys "$W/in.h5" "$W/moved.h5" -d /keys
  rcheck "$W/in.h5" "$W/moved.h5" -d /keys -o /sorted/keys --index /idx
  # Index and row ids from the same run agree.
  sort_ok 4 --index-out /idx --carry /id "$W/in.h5" "$W/both.h5" -d /keys
  rcheck "$W/in.h5" "$W/both.h5" -d /keys --index /idx --row-id /id
}

# --output-dataset in another group: the carried datasets land beside the output keys, under
# their base names, and nowhere else.
case_output_dataset() {
  gen 2 "$W/in.h5" -d /a/keys --count 3001 --type i2 --dist few --attrs
  gen 1 "$W/in.h5" -d /a/pay --count 3001 --type f8 --dist special --append --attrs
  gen 3 "$W/in.h5" -d /b/c/nd --count 3001 --type u1 --dist uniform --row-shape 2,2 --append
  gen 2 "$W/in.h5" -d /b/id --count 3001 --type u8 --dist index --append
  for p in 2 3; do
    sort_ok "$p" --output-dataset /sorted/k --carry /a/pay,/b/c/nd,/b/id "$W/in.h5" \
      "$W/out_$p.h5" -d /a/keys
    rcheck "$W/in.h5" "$W/out_$p.h5" -d /a/keys -o /sorted/k --carry /a/pay:/sorted/pay \
      --carry /b/c/nd:/sorted/nd --row-id /b/id:/sorted/id
    local datasets
    datasets=$(h5ls -r "$W/out_$p.h5" | awk '$2 == "Dataset" {print $1}' | sort | tr '\n' ' ')
    [ "$datasets" = "/sorted/id /sorted/k /sorted/nd /sorted/pay " ] ||
      die "OUTPUT should hold /sorted/{id,k,nd,pay} only, it holds: $datasets"
  done
  same "$W/out_2.h5" "$W/out_3.h5" /sorted/k /sorted/pay /sorted/nd /sorted/id
}

# OUTPUT == INPUT (--force): keys and carried datasets are replaced in place, the rest of the
# file stays as it was.
case_inplace() {
  make_records "$W/pristine.h5" 5003 f8 special
  gen 2 "$W/pristine.h5" -d /other --count 1009 --type i4 --dist uniform --append --attrs
  gen 1 "$W/pristine.h5" -d /grp/third --count 5003 --type u1 --dist few --append
  for p in 3 1; do
    cp "$W/pristine.h5" "$W/f_$p.h5"
    sort_ok "$p" --force "${CARRY[@]}" --index-out /idx "$W/f_$p.h5" "$W/f_$p.h5" -d /keys
    rcheck "$W/pristine.h5" "$W/f_$p.h5" -d /keys "${CHECK_CARRY[@]}" --index /idx
    same "$W/pristine.h5" "$W/f_$p.h5" /other /grp/third
  done
  same "$W/f_1.h5" "$W/f_3.h5" "${RECORD_PATHS[@]}" /idx
}

# A tiny device-memory cap (the out-of-core path) with records.
case_out_of_core() {
  make_records "$W/in.h5" 20011 f8 special
  for p in 1 3; do
    sort_ok "$p" --backend cpu --device-memory 4K "${CARRY[@]}" --index-out /idx "$W/in.h5" \
      "$W/out_$p.h5" -d /keys
    rcheck "$W/in.h5" "$W/out_$p.h5" -d /keys "${CHECK_CARRY[@]}" --index /idx
  done
  same "$W/out_1.h5" "$W/out_3.h5" "${RECORD_PATHS[@]}" /idx
  sort_ok 2 --backend cpu --device-memory 4K --descending "${CARRY[@]}" "$W/in.h5" \
    "$W/desc.h5" -d /keys
  rcheck "$W/in.h5" "$W/desc.h5" -d /keys --descending "${CHECK_CARRY[@]}"
  # three distinct keys: runs of equal keys cross every merge chunk, which must stay stable
  make_records "$W/few.h5" 20011 u2 few
  sort_ok 4 --backend cpu --device-memory 4K "${CARRY[@]}" --index-out /idx "$W/few.h5" \
    "$W/few_out.h5" -d /keys
  rcheck "$W/few.h5" "$W/few_out.h5" -d /keys "${CHECK_CARRY[@]}" --index /idx
}

# Exchanges split into 5-element messages, for the keys and for the gathered rows.
case_small_messages() {
  export H5GSORT_MAX_MESSAGE_ELEMS=5
  make_records "$W/in.h5" 3001 u8 few
  for p in 2 3 4; do
    sort_ok "$p" "${CARRY[@]}" --index-out /idx "$W/in.h5" "$W/out_$p.h5" -d /keys
    rcheck "$W/in.h5" "$W/out_$p.h5" -d /keys "${CHECK_CARRY[@]}" --index /idx
    same "$W/out_2.h5" "$W/out_$p.h5" "${RECORD_PATHS[@]}" /idx
  done
}

# Compound tables sorted by one field (--key-field), whole records moving: TYPE:DIST:FIELD.
# Also by the many-times-repeated u16 field det, descending by the f64 field x, big-endian,
# into another group with a carried dataset beside it.
case_table() {
  local type dist field
  IFS=: read -r type dist field <<<"$ARG"
  local t=(--table --key-field "$field")
  gen 2 "$W/in.h5" -d /events --count 3001 --type "$type" --dist "$dist" "${t[@]}" --attrs
  gen 1 "$W/in.h5" -d /aux --count 3001 --type f4 --dist uniform --append
  for p in 1 2 3 4; do
    local index=()
    [ $((p % 2)) -eq 0 ] && index=(--index-out /idx)
    sort_ok "$p" --key-field "$field" "${index[@]}" "$W/in.h5" "$W/out_$p.h5" -d /events
    rcheck "$W/in.h5" "$W/out_$p.h5" -d /events --key-field "$field" --row-id-field row \
      ${index:+--index /idx}
    same "$W/out_1.h5" "$W/out_$p.h5" /events
  done
  sort_ok 3 --key-field det --stable "$W/in.h5" "$W/det.h5" -d /events
  rcheck "$W/in.h5" "$W/det.h5" -d /events --key-field det --row-id-field row
  sort_ok 2 --key-field x --descending "$W/in.h5" "$W/x.h5" -d /events
  rcheck "$W/in.h5" "$W/x.h5" -d /events --key-field x --row-id-field row --descending
  sort_ok 3 --key-field "$field" --output-dataset /sorted/events --carry /aux --index-out /idx \
    "$W/in.h5" "$W/moved.h5" -d /events
  rcheck "$W/in.h5" "$W/moved.h5" -d /events -o /sorted/events --key-field "$field" \
    --row-id-field row --index /idx --carry /aux:/sorted/aux
  gen 2 "$W/be.h5" -d /events --count 3001 --type "$type" --dist "$dist" "${t[@]}" --order be
  sort_ok 2 --key-field "$field" "$W/be.h5" "$W/be_out.h5" -d /events
  rcheck "$W/be.h5" "$W/be_out.h5" -d /events --key-field "$field" --row-id-field row
}

# The generator's tables and N-D arrays depend only on (seed, index), never on the rank count.
case_gen_ranks() {
  for spec in "--table --type f4 --dist special --key-field e" "--row-shape 3,2 --type i2" \
    "--row-shape 5 --type f8 --dist sorted --layout gzip --chunk 7"; do
    # shellcheck disable=SC2086  # spec is a list of options
    {
      gen 1 "$W/one.h5" -d /d --count 3001 $spec --force
      gen 3 "$W/three.h5" -d /d --count 3001 $spec --force
    }
    same "$W/one.h5" "$W/three.h5" /d
  done
}

# The checker must reject wrong outputs (a checker that cannot fail checks nothing).
case_checker() {
  expect_reject() {
    local pattern=$1 rc=0
    shift
    "$BIN/h5gsort_check_records" "$@" >"$W/reject.log" 2>&1 || rc=$?
    [ "$rc" -eq 1 ] || die "h5gsort_check_records exited $rc (expected 1) for: $*"
    grep -qiE "FAILED.*($pattern)" "$W/reject.log" ||
      die "h5gsort_check_records gave no reason matching /$pattern/: $(cat "$W/reject.log")"
  }
  "$BIN/h5gsort_fixtures" "$W/fx.h5" || die "h5gsort_fixtures failed"
  local f=$W/fx.h5 r=/records
  variant() { # variant NAME: the checker's arguments for output /records/NAME
    echo "$f" "$f" -d $r/in/keys -o "$r/$1/keys" --carry "$r/in/pay:$r/$1/pay" \
      --row-id "$r/in/id:$r/$1/id" --index "$r/$1/index"
  }
  # shellcheck disable=SC2046  # variant prints words to split
  {
    rcheck $(variant good)
    expect_reject 'stable' $(variant unstable)
    expect_reject 'pay.*row' $(variant payload)
    expect_reject 'disagree' $(variant index_dup)
    expect_reject 'disagree' $(variant disagree)
    expect_reject 'order' $(variant unsorted)
    expect_reject 'source' $(variant wrong_key)
    expect_reject 'units' $(variant noattr)
  }
  expect_reject 'twice' "$f" "$f" -d $r/in/keys -o $r/index_dup/keys --index $r/index_dup/index
  rcheck "$f" "$f" -d $r/zeros/in/keys -o $r/zeros/good/keys --row-id $r/zeros/in/id:$r/zeros/good/id
  expect_reject 'stable' "$f" "$f" -d $r/zeros/in/keys -o $r/zeros/unstable/keys \
    --row-id $r/zeros/in/id:$r/zeros/unstable/id
  expect_reject 'row id' "$f" "$f" -d $r/good/keys -o $r/good/keys --row-id $r/good/id
  # Generated tables: the right permutation passes, a table compared with a shuffled copy of
  # itself does not.
  gen 1 "$W/t.h5" -d /t --count 500 --type i2 --dist few --table --key-field k
  expect_reject 'order' "$W/t.h5" "$W/t.h5" -d /t --key-field k --row-id-field row
  sort_ok 1 --key-field k "$W/t.h5" "$W/t_out.h5" -d /t
  rcheck "$W/t.h5" "$W/t_out.h5" -d /t --key-field k --row-id-field row
  expect_reject 'order' "$W/t.h5" "$W/t_out.h5" -d /t --key-field k --row-id-field row --descending
  expect_reject 'differs' --identical "$W/t.h5" "$W/t_out.h5" /t
  same "$W/t.h5" "$W/t.h5" /t
}

# Carried datasets of every width, moved in batches (src/carry.c: narrow ones interleaved into
# one row, a row wider than a batch alone): u1, big-endian f8, a 9 x f8 row (72 bytes, alone),
# gzip i2 chunks of their own length, 2 x u4 rows and a contiguous f4; each output dataset is
# the input's rows in numpy's stable argsort order of the keys, on 1-4 ranks, and with
# --device-memory 64K (the CPU backend: runs of 2730 rows) the same out of core.
case_batches() {
  local n=12001 carry=/a,/b,/w,/c,/d,/e
  gen 2 "$W/in.h5" -d /keys --count $n --type i4 --dist few --seed 7
  gen 1 "$W/in.h5" -d /a --count $n --type u1 --dist uniform --seed 8 --append
  gen 3 "$W/in.h5" -d /b --count $n --type f8 --dist special --seed 9 --order be --append
  gen 2 "$W/in.h5" -d /w --count $n --type f8 --dist uniform --seed 10 --row-shape 9 --append
  gen 2 "$W/in.h5" -d /c --count $n --type i2 --dist uniform --seed 11 --layout gzip --chunk 700 \
    --append
  gen 1 "$W/in.h5" -d /d --count $n --type u4 --dist uniform --seed 12 --row-shape 2 --append
  gen 1 "$W/in.h5" -d /e --count $n --type f4 --dist special --seed 13 --append
  for p in 1 2 3 4; do
    sort_ok "$p" --carry "$carry" "$W/in.h5" "$W/out_$p.h5" -d /keys
    sort_ok "$p" --carry "$carry" --backend cpu --device-memory 64K "$W/in.h5" "$W/ooc_$p.h5" \
      -d /keys
  done
  /usr/bin/python3 - "$W" <<'PY' || die "a carried dataset is not in the keys' stable order"
import sys, h5py, numpy as np
w = sys.argv[1]
with h5py.File(w + "/in.h5", "r") as f:
    order = np.argsort(f["keys"][...], kind="stable")
    want = {d: f[d][...][order] for d in ("keys", "a", "b", "w", "c", "d", "e")}
    types = {d: f[d].dtype for d in want}
for name in [f"{w}/{kind}_{p}.h5" for kind in ("out", "ooc") for p in (1, 2, 3, 4)]:
    with h5py.File(name, "r") as o:
        for d, rows in want.items():
            got = o[d]
            assert got.dtype == types[d], (name, d, got.dtype)
            # bytes, so that NaN payloads and -0.0 compare too
            assert got[...].tobytes() == rows.tobytes(), (name, d)
PY
}

"case_$CASE" ${ARG:+"$ARG"}
passed
