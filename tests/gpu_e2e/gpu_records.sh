#!/usr/bin/env bash
# Record sorts on the GPU (label gpu): h5gsort --backend cuda with --carry (1-D and N-D payload),
# --index-out, --stable, --key-field on compound tables, at 1, 2 and 4 ranks (4 ranks share the
# GPUs), and the out-of-core path (merge rounds and the re-sort of many runs). Every output is
# checked by the independent h5gsort_check_records and must be byte-identical (cmp) to the CPU
# backend's output of the same command (record sorts are stable, so they are deterministic). A
# bad input (carried dataset of the wrong length) exits 2. Skips (77) without GPU.
#   gpu_records.sh BIN_DIR "MPIEXEC ... -n"
BIN=$1
MPIEXEC=$2
source "$(dirname "$0")/../e2e/lib.sh" --backend-only
H5G_TEST_BACKEND=cuda test_backend # skips (exit 77) where no GPU is usable
gpu_mpiexec
source "$(dirname "$0")/../e2e/lib.sh"
W=$WORK

# make_records IN.h5 N TYPE DIST: /keys, /id (row ids), /pay (1-D, another type), /nd/pay
# (N x 3 x 2), as tests/records/records.sh makes them.
make_records() {
  local in=$1 n=$2 type=$3 dist=$4 pay=f8 nd=u2
  [ "$type" = f8 ] && pay=i2
  [ "$type" = u2 ] && nd=f4
  rm -f "$in"
  gen 2 "$in" -d /keys --count "$n" --type "$type" --dist "$dist" --seed 3 --attrs
  gen 1 "$in" -d /id --count "$n" --type u8 --dist index --append
  gen 3 "$in" -d /pay --count "$n" --type "$pay" --dist special --seed 4 --append
  gen 2 "$in" -d /nd/pay --count "$n" --type "$nd" --dist uniform --seed 5 --row-shape 3,2 --append
}
CARRY=(--carry "/id,/pay,/nd/pay")
CHECK_CARRY=(--carry /pay --carry /nd/pay --row-id /id)

# on_gpu NAME "RANKS..." H5GSORT ARGS... (IN OUT last but the options after them): the CPU
# backend's output on 1 rank is the reference; the CUDA backend at each rank count must match it
# byte for byte. CHECK_ARGS (set by the caller) are h5gsort_check_records' arguments after the
# file names. GPU_CARRY (set by the caller): whether 1 rank puts the carried rows in order on the
# GPU (the report's carried_on_gpu; several ranks never do).
on_gpu() {
  local name=$1 ranks=$2
  shift 2
  sort_ok 1 --backend cpu "$@" "$W/in.h5" "$W/${name}_cpu.h5" -d "$DSET"
  rcheck "$W/in.h5" "$W/${name}_cpu.h5" "${CHECK_ARGS[@]}"
  for p in $ranks; do
    local out="$W/${name}_cuda_$p.h5" on=false
    [ "$p" = 1 ] && on=$GPU_CARRY
    sort_ok "$p" --backend cuda "$@" "$W/in.h5" "$out" -d "$DSET" --report "$W/report.json"
    grep -q '"backend": "cuda"' "$W/report.json" || die "$name on $p ranks: not the CUDA backend"
    grep -q "\"carried_on_gpu\": $on" "$W/report.json" ||
      die "$name on $p ranks: carried_on_gpu is not $on"
    rcheck "$W/in.h5" "$out" "${CHECK_ARGS[@]}"
    cmp "$W/${name}_cpu.h5" "$out" || die "$name on $p ranks: CUDA output differs from the CPU's"
    echo "ok: $name, $p rank(s): checked, identical to the CPU backend's"
  done
}

# Payload follows the key for every key type; --index-out too; 2 and 4 ranks for some.
DSET=/keys
GPU_CARRY=true
for type in u1 u2 u4 u8 i1 i2 i4 i8 f4 f8; do
  make_records "$W/in.h5" 20011 "$type" special
  ranks=1
  case $type in u1 | i4 | f8) ranks="1 2 4" ;; esac
  CHECK_ARGS=(-d /keys "${CHECK_CARRY[@]}" --index /idx)
  on_gpu "type_$type" "$ranks" "${CARRY[@]}" --index-out /idx
done

# Many equal keys with --stable (and descending): equal keys keep the input order on 1-4 ranks.
for spec in i4:equal f8:few u1:few; do
  make_records "$W/in.h5" 30011 "${spec%%:*}" "${spec#*:}"
  CHECK_ARGS=(-d /keys "${CHECK_CARRY[@]}" --index /idx)
  on_gpu "stable_${spec/:/_}" "1 2 4" --stable "${CARRY[@]}" --index-out /idx
done
CHECK_ARGS=(-d /keys --descending "${CHECK_CARRY[@]}" --index /idx)
on_gpu descending "2" --descending "${CARRY[@]}" --index-out /idx

# Carried rows of every word the GPU copies them in (1, 2, 4, 8 and 16 bytes, and an odd 3),
# in three batches (the 64-byte rows of /w64 alone); and --top, which leaves them to the host.
make_records "$W/in.h5" 40009 i8 uniform
gen 1 "$W/in.h5" -d /w1 --count 40009 --type u1 --dist uniform --seed 6 --append
gen 1 "$W/in.h5" -d /w3 --count 40009 --type u1 --dist uniform --seed 7 --row-shape 3 --append
gen 1 "$W/in.h5" -d /w16 --count 40009 --type u8 --dist uniform --seed 8 --row-shape 2 --append
gen 1 "$W/in.h5" -d /w6 --count 40009 --type u2 --dist uniform --seed 9 --row-shape 3 --append
gen 1 "$W/in.h5" -d /w64 --count 40009 --type u8 --dist uniform --seed 10 --row-shape 8 --append
CHECK_ARGS=(-d /keys --row-id /id --carry /pay --carry /w1 --carry /w3 --carry /w16 --carry /w6
  --carry /w64)
on_gpu widths "1 2" --carry /id,/pay,/w1,/w3,/w16,/w6,/w64,/nd/pay
# --top leaves the carried rows to the host (not a permutation: compared with the CPU's only).
sort_ok 1 --backend cpu --carry /id,/pay --top 1000 "$W/in.h5" "$W/top_cpu.h5" -d /keys
sort_ok 1 --backend cuda --carry /id,/pay --top 1000 "$W/in.h5" "$W/top_cuda.h5" -d /keys \
  --report "$W/report.json"
grep -q '"carried_on_gpu": false' "$W/report.json" || die "--top: carried_on_gpu is not false"
cmp "$W/top_cpu.h5" "$W/top_cuda.h5" || die "--top: CUDA output differs from the CPU's"
echo "ok: --top with carried rows, 1 rank: on the host, identical to the CPU backend's"
GPU_CARRY=false

# --index-out alone: gathering the input by the index gives the output.
make_records "$W/in.h5" 50021 u4 few
CHECK_ARGS=(-d /keys --index /meta/idx)
on_gpu index "1 4" --index-out /meta/idx

# Compound tables sorted by one field, whole records moving.
for spec in i4:few:tick f8:special:energy; do
  IFS=: read -r type dist field <<<"$spec"
  rm -f "$W/in.h5"
  gen 2 "$W/in.h5" -d /events --count 30011 --type "$type" --dist "$dist" --table --key-field "$field" --attrs
  gen 1 "$W/in.h5" -d /extra --count 30011 --type f4 --dist uniform --seed 11 --append
  DSET=/events
  CHECK_ARGS=(-d /events --key-field "$field" --row-id-field row --index /idx --carry /extra)
  GPU_CARRY=true
  on_gpu "table_$field" "1 2 4" --key-field "$field" --index-out /idx --carry /extra
done

# Out of core: a few MB of device memory, so each rank sorts several runs and merges them on the
# GPU, by merge rounds (8 MB: a few runs) or by the re-sort of many runs (3 MB: more runs than
# merge_max_rounds allows for 4-byte keys). Host buffers pinned in 64 KiB pieces: every copy of
# keys and values is split where one registration ends (base/host_memory.h).
DSET=/keys
make_records "$W/in.h5" $((1 << 21)) u4 few
CHECK_ARGS=(-d /keys "${CHECK_CARRY[@]}" --index /idx)
export H5GSORT_PIN_PIECE_BYTES=65536
GPU_CARRY=false
for budget in 8M 3M; do
  on_gpu "out_of_core_$budget" "1 2" --device-memory "$budget" "${CARRY[@]}" --index-out /idx
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("  runs per rank:", r["runs_per_rank"]); sys.exit(r["runs_per_rank"] < 2)' \
    "$W/report.json" || die "out of core at $budget: one run per rank"
done
unset H5GSORT_PIN_PIECE_BYTES

# A bad input on the GPU path: a carried dataset one row short exits 2, no output.
IN=$W/bad.h5
OUT=$W/outdir/out.h5
WRAP=()
mkdir -p "$W/outdir"
gen 2 "$IN" -d /keys --count 100 --type i4
gen 1 "$IN" -d /short --count 99 --type f8 --append
expect_failure 2 'short|99|100|rows|length' --backend cuda "$IN" "$OUT" -d /keys --carry /short
passed
