#!/usr/bin/env bash
# End-to-end benchmark on a GPU machine (issue 4): h5gsort on 1 and 2 GPUs against the copy bound
# (bench_h5copy: h5gsort's own collective I/O with the sort skipped) and against what users run
# today (h5py + numpy.sort on one core, h5py + cupy.sort on one GPU). Every figure is the median of
# REPEATS runs after one warm-up run, files in the page cache, times measured inside each program
# (process start-up excluded), printed as a Markdown table.
#   bench/e2e.sh [WORKDIR]     env: BIN (build/bin), REPEATS (3), PY_REPEATS (REPEATS: the h5py
#                              rows, which do not change with h5gsort), LOG2_U32 (30), LOG2_F64 (28)
set -euo pipefail
bin=${BIN:-build/bin}
work=${1:-/tmp/h5gsort-e2e}
repeats=${REPEATS:-3}
py_repeats=${PY_REPEATS:-$repeats}
log2_u32=${LOG2_U32:-30}
log2_f64=${LOG2_F64:-28}
mpirun=(mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -x PATH)
gpus=$( (nvidia-smi -L 2>/dev/null || true) | wc -l)
gpu_name=$( (nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo "no GPU") | head -1)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
mkdir -p "$work"

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
repeat() { # repeat COUNT CMD... -> median seconds of COUNT runs after a warm-up
  "${@:2}" >/dev/null
  for _ in $(seq "$1"); do "${@:2}"; done | median | xargs printf '%.3f\n'
}
h5gsort_seconds() { # ranks in out dataset [h5gsort options]
  rm -f "$3"
  "${mpirun[@]}" -np "$1" "$bin/h5gsort" "$2" "$3" -d "$4" "${@:5}" -q --report "$work/report.json"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"]["total"])' "$work/report.json"
}
copy_seconds() { # ranks in out dataset; the read/write split of the last run goes to copy.txt
  rm -f "$3"
  "${mpirun[@]}" -np "$1" "$bin/bench_h5copy" "$2" "$3" "$4" | tee "$work/copy.txt" | awk '{print $8}'
}
python_seconds() { # numpy|cupy in out dataset
  rm -f "$3"
  python3 - "$@" <<'PY'
import sys, time, h5py
lib, src, dst, path = sys.argv[1:5]
t = time.perf_counter()
with h5py.File(src, "r") as f:
    keys = f[path][...]
if lib == "cupy":
    import cupy
    keys = cupy.sort(cupy.asarray(keys)).get()
else:
    import numpy
    keys = numpy.sort(keys)
with h5py.File(dst, "w") as f:
    f.create_dataset(path, data=keys)
print(time.perf_counter() - t)
PY
}
phase_table() { # the last report's phases
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("  ".join("%s %.3f" % kv for kv in list(r["seconds"].items()) + list(r["gpu_copy_seconds"].items())))' "$work/report.json"
}

gen() { # file type log2
  [ -e "$1" ] || "${mpirun[@]}" -np 8 "$bin/h5gsort-gen" "$1" -d /keys --count $((1 << $3)) --type "$2" --dist uniform --seed 42
  cat "$1" >/dev/null # into the page cache
}

echo "# bench/e2e.sh on $gpu_name x $gpus, $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "| dataset | what | seconds | x copy (1 rank) | x copy (2 ranks) |"
echo "|---|---|---:|---:|---:|"
for spec in "u4 $log2_u32" "f8 $log2_f64"; do
  set -- $spec
  type=$1 log2=$2
  in="$work/in_${type}_$log2.h5" out="$work/out.h5"
  gen "$in" "$type" "$log2"
  label="$type 2^$log2 ($(( (1 << log2) * ${type:1} / 1048576 )) MiB)"
  copy1=$(repeat "$repeats" copy_seconds 1 "$in" "$out" /keys)
  copy2=$(repeat "$repeats" copy_seconds 2 "$in" "$out" /keys)
  ratio() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }
  echo "$label copy bound, 2 ranks: $(cat "$work/copy.txt")" >>"$work/phases.txt"
  echo "| $label | copy bound, 1 rank | $copy1 | 1.00 | $(ratio "$copy1" "$copy2") |"
  echo "| $label | copy bound, 2 ranks | $copy2 | $(ratio "$copy2" "$copy1") | 1.00 |"
  # one rank per GPU (without GPUs, a dry run: the CPU backend); 2 ranks with each exchange
  for run in "1 auto" "2 auto" "2 mpi"; do
    set -- $run
    ranks=$1 exchange=$2
    [ "$gpus" -eq 0 ] || [ "$ranks" -le "$gpus" ] || continue
    [ "$gpus" -ge 2 ] || [ "$exchange" = auto ] || continue
    what="h5gsort, $ranks $([ "$gpus" -eq 0 ] && echo "rank(s), CPU" || echo "GPU(s)")"
    [ "$ranks" -eq 1 ] || what="$what, exchange $exchange"
    t=$(repeat "$repeats" h5gsort_seconds "$ranks" "$in" "$out" /keys --exchange "$exchange")
    echo "| $label | $what | $t | $(ratio "$t" "$copy1") | $(ratio "$t" "$copy2") |"
    echo "$label $what: $(phase_table)" >>"$work/phases.txt"
  done
  t=$(repeat "$py_repeats" python_seconds numpy "$in" "$out" /keys)
  echo "| $label | h5py + numpy.sort | $t | $(ratio "$t" "$copy1") | $(ratio "$t" "$copy2") |"
  [ "$gpus" -ge 1 ] || continue
  t=$(repeat "$py_repeats" python_seconds cupy "$in" "$out" /keys)
  echo "| $label | h5py + cupy.sort | $t | $(ratio "$t" "$copy1") | $(ratio "$t" "$copy2") |"
done
if [ "$gpus" -ge 2 ]; then # weak scaling: half the u32 data on 1 GPU, all of it on 2
  half="$work/in_u4_$((log2_u32 - 1)).h5"
  gen "$half" u4 $((log2_u32 - 1))
  t1=$(repeat "$repeats" h5gsort_seconds 1 "$half" "$work/out.h5" /keys)
  t2=$(repeat "$repeats" h5gsort_seconds 2 "$work/in_u4_$log2_u32.h5" "$work/out.h5" /keys)
  c1=$(repeat "$repeats" copy_seconds 1 "$half" "$work/out.h5" /keys)
  c2=$(repeat "$repeats" copy_seconds 2 "$work/in_u4_$log2_u32.h5" "$work/out.h5" /keys)
  efficiency() { python3 -c "import sys; print('%.0f%%' % (100 * float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }
  echo
  echo "Weak scaling (u4, 2^$((log2_u32 - 1)) keys per GPU): 1 GPU $t1 s, 2 GPUs $t2 s, efficiency $(efficiency "$t1" "$t2");"
  echo "the copy bound itself, 1 rank $c1 s, 2 ranks $c2 s: $(efficiency "$c1" "$c2")"
fi
echo
echo "Phases (seconds, slowest rank, last run):"
cat "$work/phases.txt" 2>/dev/null || true
rm -f "$work/phases.txt" "$work/out.h5"
