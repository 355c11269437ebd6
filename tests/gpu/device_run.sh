#!/bin/bash
# One call on the GPU machine (shared/gpu/README.md): every gpu test, compute-sanitizer memcheck and
# racecheck on small sizes, then bench_local_sort. Build here first; carry build and .devlibs.
# Usage: tests/gpu/device_run.sh [tests|sanitize|bench]... (default: all three); logs go to $OUT.
set -u
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
out=${OUT:-/tmp}
steps=${*:-tests sanitize bench}
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader
for step in $steps; do
  case $step in
  tests)
    (cd build && ctest -L gpu --output-on-failure --timeout 600) 2>&1 | tee $out/gpu_tests.log | grep -E "tests passed|Passed|Failed|Skipped|FAIL|SKIP|\*\*\*" ;;
  sanitize)
    for tool in memcheck racecheck; do
      for t in "test_gpu_sort small u32" "test_gpu_scan_merge small"; do
        echo "== compute-sanitizer --tool $tool $t"
        timeout 150 $sanitizer --tool $tool --error-exitcode 9 build/bin/$t > $out/san_${tool}_${t%% *}.log 2>&1
        echo "rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' $out/san_${tool}_${t%% *}.log | tail -2)"
      done
    done ;;
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
