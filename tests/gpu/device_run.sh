#!/bin/bash
# One call on the GPU machine (shared/gpu/README.md): every gpu test, compute-sanitizer memcheck and
# racecheck on small sizes, then bench_local_sort. Build here first; carry build and .devlibs.
# Usage: tests/gpu/device_run.sh [tests|sanitize|pipeline|bench|e2e|ncu]... (default: tests
# sanitize pipeline bench); logs go to $OUT. `pipeline` runs compute-sanitizer on h5gsort itself;
# `e2e` runs bench/e2e.sh (needs 2 GPUs for its 2-GPU rows, about 5 minutes).
set -u
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
out=${OUT:-/tmp}
steps=${*:-tests sanitize pipeline bench}
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader
for step in $steps; do
  case $step in
  tests)
    (cd build && ctest -L gpu --output-on-failure --timeout 600) 2>&1 | tee $out/gpu_tests.log | grep -E "tests passed|Passed|Failed|Skipped|FAIL|SKIP|\*\*\*" ;;
  sanitize)
    for tool in memcheck racecheck; do
      for t in "test_gpu_sort small u32" "test_gpu_sort small u128" "test_gpu_sort sampled" \
               "test_gpu_scan_merge small" \
               "test_gpu_pairs small" "test_gpu_fused small"; do
        log=$out/san_${tool}_$(echo "$t" | tr ' ' _).log
        echo "== compute-sanitizer --tool $tool $t"
        timeout 150 $sanitizer --tool $tool --error-exitcode 9 build/bin/$t > $log 2>&1
        echo "rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' $log | tail -2)"
      done
    done ;;
  pipeline)
    build/bin/h5gsort-gen /tmp/san_in.h5 -d /k --count 50000 --type f8 --dist special --seed 1 >/dev/null
    for tool in memcheck racecheck; do
      rm -f /tmp/san_out.h5
      timeout 150 $sanitizer --tool $tool --error-exitcode 9 build/bin/h5gsort /tmp/san_in.h5 /tmp/san_out.h5 \
        -d /k --backend cuda --verify > $out/san_h5gsort_$tool.log 2>&1
      echo "h5gsort under $tool: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $out/san_h5gsort_$tool.log | tail -1)"
    done
    if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then # the device-resident path: NCCL between GPUs
      rm -f /tmp/san_out.h5
      # NCCL probes its kernels for other GPUs at set-up: API errors it handles, not memory errors
      timeout 200 mpirun --allow-run-as-root -np 2 -x LD_LIBRARY_PATH $sanitizer --tool memcheck \
        --report-api-errors no --error-exitcode 9 build/bin/h5gsort /tmp/san_in.h5 /tmp/san_out.h5 -d /k --backend cuda \
        --exchange nccl --verify > $out/san_h5gsort_nccl.log 2>&1
      echo "h5gsort 2 ranks nccl under memcheck: rc=$? $(grep -E 'ERROR SUMMARY' $out/san_h5gsort_nccl.log | tr '\n' ' ')"
    fi
    # out of core: runs sorted on the GPU, merged in chunks within an 8 MiB budget
    build/bin/h5gsort-gen /tmp/san_big.h5 -d /k --count 3000017 --type i8 --dist zipf --seed 2 >/dev/null
    rm -f /tmp/san_out.h5
    timeout 250 $sanitizer --tool memcheck --error-exitcode 9 build/bin/h5gsort /tmp/san_big.h5 \
      /tmp/san_out.h5 -d /k --backend cuda --device-memory 8M --verify -v > $out/san_h5gsort_ooc.log 2>&1
    echo "h5gsort out of core under memcheck: rc=$? $(grep -E 'ERROR SUMMARY|sorted' $out/san_h5gsort_ooc.log | tr '\n' ' ')" ;;
  e2e)
    BIN=build/bin REPEATS=${REPEATS:-3} bash bench/e2e.sh /tmp/h5gsort-e2e 2>&1 | tee $out/e2e.md ;;
  bench)
    build/bin/bench_local_sort ${BENCH_MAX_LOG2:-28} ${BENCH_SECTIONS:-crossover,merge,main} 2>&1 | tee $out/bench_local_sort.log ;;
  ncu)
    ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
    if [ -n "$ncu" ]; then
      timeout 200 $ncu --kernel-name regex:"pass_kernel|histogram_kernel" --launch-count 2 \
        --section SpeedOfLight --section WarpStateStats --section Occupancy \
        --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
        --section InstructionStats --section SchedulerStats --section SourceCounters \
        build/bin/bench_local_sort 26 profile > $out/ncu.log 2>&1
      grep -E "pass_kernel|histogram_kernel|Duration|Throughput|Warp Cycles|Issued|Bank|Occupancy" $out/ncu.log | head -60
    else echo "no ncu"; fi ;;
  esac
done
