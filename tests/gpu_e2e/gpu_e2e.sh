#!/usr/bin/env bash
# End-to-end runs on GPUs (label gpu): h5gsort with the CUDA backend at 1 and 2 ranks (one GPU
# each where there are two), 4 ranks sharing the GPUs, the NCCL and the MPI exchange (identical
# output), the out-of-core path with a device-memory budget far below the slice, and a budget
# larger than the GPU. Every output is checked by the independent checker. Skips (77) without GPU.
# PART "held" runs only the cases where another process holds the GPU's memory (CTest runs them
# alone: they would starve the GPU tests beside them), "main" all the others, "all" both.
#   gpu_e2e.sh BIN_DIR "MPIEXEC ... -n" [all|main|held]
set -uo pipefail
bin=$1 launcher=$2 part=${3:-all}
case "$part" in all | main | held) ;; *) echo "gpu_e2e.sh: PART is all, main or held, not $part" >&2; exit 2 ;; esac
source "$(dirname "$0")/../e2e/lib.sh" --backend-only
H5G_TEST_BACKEND=cuda test_backend # skips (exit 77) where no GPU is usable
# The GPU machine's own mpirun, passing the library path (parallel HDF5 travels in .devlibs).
if command -v mpirun >/dev/null; then
  export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
  launcher="mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -np"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gpus=$(nvidia-smi -L | wc -l)
work=$(mktemp -d "${TMPDIR:-/tmp}/h5gsort-gpu.XXXXXX")
holder=
trap '[ -z "$holder" ] || kill "$holder" 2>/dev/null; rm -rf "$work"' EXIT # a held GPU, let go
passes=0 failures=0
run() { # run RANKS ARGS... : h5gsort must succeed
  $launcher "$1" "$bin/h5gsort" "${@:2}" >"$work/log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || { cat "$work/log"; return 1; }
}
check() { "$bin/h5gsort_check" "$@" >"$work/check.log" 2>&1 || { cat "$work/check.log"; return 1; }; }
expect() { local what=$1; shift; if "$@"; then passes=$((passes + 1)); echo "ok: $what"; else failures=$((failures + 1)); echo "FAILED: $what"; fi; }

if [ "$part" != held ]; then
  for spec in "u4 uniform 10000019" "f8 special 3000017" "i8 zipf 2000003" "u2 few 1000003" "f4 equal 100003" "u8 sorted 0" "i4 uniform 3"; do
    set -- $spec
    type=$1 dist=$2 n=$3
    in="$work/in_$type.h5"
    $launcher 2 "$bin/h5gsort-gen" "$in" -d /k --count "$n" --type "$type" --dist "$dist" --seed 9 >/dev/null
    for ranks in 1 2 4; do
      for exchange in mpi nccl; do
        [ "$ranks" -gt 1 ] || [ "$exchange" = mpi ] || continue
        if [ "$exchange" = nccl ] && [ "$ranks" -gt "$gpus" ]; then # NCCL needs a GPU per rank
          $launcher "$ranks" "$bin/h5gsort" "$in" "$work/x.h5" -d /k --backend cuda --exchange nccl >"$work/log" 2>&1
          expect "  --exchange nccl with $ranks ranks on $gpus GPUs: usage error" test $? -eq 2
          expect "  no output" test ! -e "$work/x.h5"
          continue
        fi
        out="$work/out_${type}_${ranks}_$exchange.h5"
        expect "$type $dist n=$n: $ranks rank(s) on $gpus GPU(s), exchange $exchange" \
          run "$ranks" "$in" "$out" -d /k --backend cuda --exchange "$exchange" --verify --report "$work/r.json"
        expect "  checked" check "$in" -d /k "$out" -o /k
        expect "  backend cuda, exchange $exchange in the report" \
          grep -q "\"exchange\": \"$exchange\"" "$work/r.json"
      done
      [ "$ranks" -eq 1 ] || [ "$ranks" -gt "$gpus" ] || expect "  nccl and mpi outputs identical ($ranks ranks)" \
        cmp "$work/out_${type}_${ranks}_mpi.h5" "$work/out_${type}_${ranks}_nccl.h5"
      [ "$ranks" -eq 1 ] || expect "  $ranks-rank output identical to 1 rank's" \
        cmp "$work/out_${type}_1_mpi.h5" "$work/out_${type}_${ranks}_mpi.h5"
    done
    expect "$type descending, 2 ranks" run 2 "$in" "$work/desc.h5" -d /k --backend cuda --descending
    expect "  checked" check "$in" -d /k "$work/desc.h5" -o /k --descending
    rm -f "$work/desc.h5" "$work"/out_*.h5
  done
fi

# Out of core on the GPU: 2^26 uint32 keys (256 MiB) on 2 ranks with 32 MiB of device memory each.
$launcher 2 "$bin/h5gsort-gen" "$work/big.h5" -d /k --count $((1 << 26)) --type u4 --seed 3 >/dev/null
if [ "$part" != held ]; then
  # Host buffers pinned in 1 MiB pieces: every copy of a run or a chunk is split where one
  # registration ends (base/host_memory.h), and the runs go up while later pieces are pinned.
  export H5GSORT_PIN_PIECE_BYTES=1048576
  expect "out of core: --device-memory 32M, 2 ranks" \
    run 2 "$work/big.h5" "$work/big_out.h5" -d /k --backend cuda --device-memory 32M --verify --report "$work/r.json"
  expect "  runs per rank > 1 in the report" python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["runs_per_rank"] < 2)' "$work/r.json"
  expect "  checked" check "$work/big.h5" -d /k "$work/big_out.h5" -o /k
  # The device-resident path in many pieces (1 MB per I/O call): each piece goes to the GPU while
  # the next is read, the output comes back while the previous piece is written; with --exchange
  # nccl and a GPU per rank the keys stay on the GPUs through the exchange.
  export H5GSORT_IO_PIECE_BYTES=1000000
  for ranks in 1 2; do
    [ "$ranks" -le "$gpus" ] || continue
    exchange=$([ "$ranks" -eq 1 ] && echo auto || echo nccl)
    expect "resident, 1 MB pieces: $ranks rank(s), --exchange $exchange" \
      run "$ranks" "$work/big.h5" "$work/res.h5" -d /k --backend cuda --exchange "$exchange" --verify \
      --report "$work/r.json"
    expect "  checked" check "$work/big.h5" -d /k "$work/res.h5" -o /k
    expect "  output identical to the out-of-core one" cmp "$work/big_out.h5" "$work/res.h5"
    [ "$ranks" -eq 1 ] || expect "  exchange nccl in the report" grep -q '"exchange": "nccl"' "$work/r.json"
    expect "  GPU work and the part hidden behind I/O in the report" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
g, c = r["gpu_overlap_seconds"], r["gpu_copy_seconds"]
sys.exit(not (g["kernels"] > 0 and c["h2d"] > 0 and c["d2h"] > 0 and 0 <= g["hidden"] <= g["kernels"] + c["h2d"] + c["d2h"]))' "$work/r.json"
    rm -f "$work/res.h5"
  done
  unset H5GSORT_IO_PIECE_BYTES H5GSORT_PIN_PIECE_BYTES
  # Streamed (one rank, keys alone): the slice goes up and comes back through a ring of 4 pinned
  # slots, here of 64 KiB, so a run turns the ring many times. Sizes just over the ring, whole
  # slots and a last slot of a few keys; byte orders (the file form converted in the slot) and
  # layouts (HDF5's writes of chunks a slot cuts); descending. Each output checked, and the same
  # as the slice buffer's (pieces of 64 MiB make a ring larger than the slice, which then takes
  # none), both with --verify, whose input checksum the ring's reads take. A filtered output
  # (gzip: a slot's write ending inside a chunk would have it encoded again) and a slice that
  # fits the ring do not take it.
  export H5GSORT_PIN_PIECE_BYTES=65536
  for spec in "u4 uniform 65537 le contiguous true" "f8 special 300001 be contiguous true" \
    "u1 uniform 1000003 le contiguous true" "i2 zipf 262144 be chunked true" \
    "u8 reverse 200003 le gzip false" "f4 equal 70000 le contiguous true"; do
    set -- $spec
    type=$1 dist=$2 n=$3 order=$4 layout=$5 streamed=$6
    in="$work/ring_$type.h5"
    $launcher 2 "$bin/h5gsort-gen" "$in" -d /k --count "$n" --type "$type" --dist "$dist" \
      --order "$order" --layout "$layout" --chunk 10000 --seed 4 >/dev/null
    for desc in "" --descending; do
      what="$type $dist, $n keys, $order, $layout${desc:+, $desc}"
      rm -f "$work/r.json"
      expect "$what" run 1 "$in" "$work/ring.h5" -d /k --backend cuda $desc --verify \
        --report "$work/r.json"
      expect "  streamed: $streamed" grep -q "\"streamed\": $streamed" "$work/r.json"
      expect "  checked" check "$in" -d /k "$work/ring.h5" -o /k $desc
      H5GSORT_PIN_PIECE_BYTES=67108864 expect "  the slice buffer's output" run 1 "$in" \
        "$work/slice.h5" -d /k --backend cuda $desc --verify --report "$work/slice.json"
      expect "  not through the ring" grep -q '"streamed": false' "$work/slice.json"
      expect "  identical" cmp "$work/ring.h5" "$work/slice.h5"
      rm -f "$work/ring.h5" "$work/slice.h5" "$work/r.json"
      # --index-out: the source indices come back through a ring of their own, beside the keys
      expect "$what, --index-out" run 1 "$in" "$work/ring.h5" -d /k --backend cuda $desc \
        --index-out /idx --report "$work/r.json"
      expect "  streamed: $streamed" grep -q "\"streamed\": $streamed" "$work/r.json"
      expect "  the keys and index checked" "$bin/h5gsort_check_records" "$in" "$work/ring.h5" \
        -d /k --index /idx $desc
      rm -f "$work/ring.h5"
    done
  done
  $launcher 1 "$bin/h5gsort-gen" "$in" -d /k --count 65536 --type u4 --seed 4 --force >/dev/null
  rm -f "$work/r.json"
  expect "a slice of 4 slots' keys: sorted" run 1 "$in" "$work/ring.h5" -d /k --backend cuda --report "$work/r.json"
  expect "  not through the ring" grep -q '"streamed": false' "$work/r.json"
  expect "  checked" check "$in" -d /k "$work/ring.h5" -o /k
  rm -f "$work/ring.h5"
  # The other ways a streamed run ends in a file: a dataset path of its own (groups made),
  # written with pwrite, --whole-file, in place; each the same as the slice buffer's (--verify).
  # A rank killed as the write begins leaves no OUTPUT and the input as it was.
  in="$work/ring_more.h5"
  $launcher 2 "$bin/h5gsort-gen" "$in" -d /k --count 300007 --type u4 --seed 5 >/dev/null
  cp "$in" "$work/ring_more.orig"
  $launcher 1 "$bin/h5gsort" "$in" "$work/ring.h5" -d /k --backend cuda --plan \
    --report "$work/plan.json" >"$work/plan.txt" 2>&1
  expect "--plan says the run streams" grep -q "^streamed: .* 4 pinned slots of 0.0625 MiB" "$work/plan.txt"
  expect "  and its report" grep -q '"streamed": true' "$work/plan.json"
  for way in output-dataset pwrite whole-file in-place; do
    out="$work/ring.h5" opts=() o=/k
    case $way in
      output-dataset) opts=(--output-dataset /sorted/keys) o=/sorted/keys ;;
      whole-file) opts=(--whole-file) ;;
      in-place) cp "$in" "$work/ring.h5"; cp "$in" "$work/slice.h5"; opts=(--force) ;;
    esac
    slice_in=$in; [ "$way" = in-place ] && { in="$work/ring.h5" slice_in="$work/slice.h5"; }
    rm -f "$work/r.json"
    io=${H5GSORT_IO-}; [ "$way" = pwrite ] && io=pwrite # the ranks inherit the launcher's variables
    H5GSORT_IO=$io expect "streamed, $way" run 1 "$in" "$out" -d /k --backend cuda "${opts[@]}" \
      --report "$work/r.json"
    expect "  streamed: true" grep -q '"streamed": true' "$work/r.json"
    expect "  checked" check "$work/ring_more.orig" -d /k "$out" -o "$o"
    H5GSORT_PIN_PIECE_BYTES=67108864 expect "  the slice buffer's output" run 1 "$slice_in" \
      "$work/slice.h5" -d /k --backend cuda "${opts[@]}" --verify --report "$work/slice.json"
    expect "  not through the ring" grep -q '"streamed": false' "$work/slice.json"
    expect "  identical" cmp "$out" "$work/slice.h5"
    in="$work/ring_more.h5"
    rm -f "$work/ring.h5" "$work/slice.h5"
  done
  H5GSORT_TEST_KILL=write-data $launcher 1 "$bin/h5gsort" "$in" "$work/ring.h5" -d /k --backend cuda \
    >"$work/log" 2>&1
  expect "streamed, a rank killed as the write begins: failed" test $? -ne 0
  expect "  no output" test ! -e "$work/ring.h5"
  expect "  the input as it was" cmp "$in" "$work/ring_more.orig"
  rm -f "$work"/.ring.h5.* # what the killed rank left
  # SIGTERM during a streamed write (the rank sleeps 30 s once the output is made and says so):
  # the run stops within the sleep, says why once, and leaves no OUTPUT, no temporary file and
  # the input as it was.
  H5GSORT_TEST_SLEEP=write-data:30 $launcher 1 "$bin/h5gsort" "$in" "$work/ring.h5" -d /k \
    --backend cuda >"$work/log" 2>&1 &
  pid=$! reached=0
  for _ in $(seq 600); do
    grep -q "^h5gsort: test hook: rank 0 sleeps 30 s at write-data" "$work/log" &&
      { reached=1; break; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  expect "streamed, SIGTERM in the write: the rank reached write-data" test $reached = 1
  sleep 1
  start=$SECONDS
  kill -TERM "$pid"
  wait "$pid"
  expect "  SIGTERM there: failed" test $? -ne 0
  expect "  ended within 20 s, not after the sleep" test $((SECONDS - start)) -lt 20
  expect "  one error line naming the signal" \
    test "$(grep -c "^h5gsort: error: interrupted (signal 15, SIGTERM)" "$work/log")" -eq 1
  expect "  no output" test ! -e "$work/ring.h5"
  expect "  no temporary file" test -z "$(ls -a "$work" | grep '^\.ring\.h5\..*tmp$')"
  expect "  the input as it was" cmp "$in" "$work/ring_more.orig"
  rm -f "$work/ring.h5" "$work"/.ring.h5.* "$work/ring_more.orig"
  unset H5GSORT_PIN_PIECE_BYTES
  if [ "$gpus" -ge 2 ]; then # auto on one node: the host exchange through MPI (measured faster)
    expect "--exchange auto, 2 ranks on one node" \
      run 2 "$work/big.h5" "$work/res.h5" -d /k --backend cuda --verify --report "$work/r.json"
    expect "  exchange mpi in the report" grep -q '"exchange": "mpi"' "$work/r.json"
    expect "  output identical to the out-of-core one" cmp "$work/big_out.h5" "$work/res.h5"
    rm -f "$work/res.h5"
  fi
  # A budget larger than the GPU: a clear error (exit 1), never a crash or a hang.
  $launcher 1 "$bin/h5gsort" "$work/big.h5" "$work/huge.h5" -d /k --backend cuda --device-memory 100T >"$work/log" 2>&1
  rc=$?
  expect "--device-memory 100T: exit 0 or 1 with a message (got $rc)" test "$rc" -le 1
  [ "$rc" -eq 0 ] || expect "  one error line naming the memory" grep -qiE "h5gsort: error:.*(memory|alloc)" "$work/log"
  [ "$rc" -ne 0 ] || expect "  and a correct output" check "$work/big.h5" -d /k "$work/huge.h5" -o /k
  head -3 "$work/log"
fi
if [ "$part" != main ]; then
  # Another process holding GPU 0's memory (as a second job on a shared GPU would): h5gsort shrinks
  # its budget to what is free and goes out of core, or, with nothing left, exits 1 saying so.
  hold() { # hold LEAVE_MIB: starts the holder on GPU 0, returns once it holds the memory
    "$bin/hold_gpu_memory" 0 "$1" >"$work/hold.log" 2>&1 &
    holder=$!
    for _ in $(seq 600); do grep -q holding "$work/hold.log" && break; sleep 0.1; done
    echo "  another process: $(cat "$work/hold.log")"
  }
  unhold() { kill "$holder"; wait "$holder" 2>/dev/null; holder=; }
  hold 1536
  rm -f "$work/big_out.h5"
  expect "GPU memory held by another process (1.5 GiB left): sorts within what is free" \
    env CUDA_VISIBLE_DEVICES=0 $launcher 1 "$bin/h5gsort" "$work/big.h5" "$work/big_out.h5" -d /k \
    --backend cuda --device-memory 64G --report "$work/r.json"
  expect "  checked" check "$work/big.h5" -d /k "$work/big_out.h5" -o /k
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("  runs per rank", r["runs_per_rank"], "on", r["devices"])' "$work/r.json"
  unhold
  hold 0
  rm -f "$work/big_out.h5"
  env CUDA_VISIBLE_DEVICES=0 $launcher 1 "$bin/h5gsort" "$work/big.h5" "$work/big_out.h5" -d /k --backend cuda >"$work/log" 2>&1
  rc=$?
  unhold
  expect "GPU memory all held by another process: exit 1 (got $rc)" test "$rc" -eq 1
  expect "  one error line, naming the memory" test "$(grep -ciE 'h5gsort: error:.*memory' "$work/log")" -eq 1
  grep 'h5gsort: error:' "$work/log"
  expect "  no output, no temp file" test ! -e "$work/big_out.h5" -a -z "$(ls -a "$work" | grep '\.h5gsort-.*\.tmp$')"
fi
if [ "$part" != held ]; then
  # A rank killed on the GPU path: no output, input untouched, and a rerun succeeds.
  cp "$work/big.h5" "$work/big.copy"
  for point in local_sort exchange write-data; do
    rm -f "$work/big_out.h5"
    H5GSORT_TEST_KILL=$point:1 $launcher 2 "$bin/h5gsort" "$work/big.h5" "$work/big_out.h5" -d /k --backend cuda >/dev/null 2>&1
    expect "killed at $point on the GPU path: exit non-zero, no output" test $? -ne 0 -a ! -e "$work/big_out.h5"
    expect "  input untouched" cmp -s "$work/big.h5" "$work/big.copy"
    sleep 1 # let the killed job's ranks exit, as a later rerun would
    expect "  rerun succeeds" run 2 "$work/big.h5" "$work/big_out.h5" -d /k --backend cuda
    expect "  no temp file left" test -z "$(ls -a "$work" | grep '\.h5gsort-.*\.tmp$')"
  done
fi
echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
