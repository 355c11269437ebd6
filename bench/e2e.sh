#!/usr/bin/env bash
# End-to-end benchmark on a GPU machine (issue 15): what a user waits for, whole processes with
# the launcher included, beside the raw I/O bound of the same bytes on the same machine and what
# users run today. Rows per dataset: the raw bound (bench_raw_io: threaded pread of the dataset's
# bytes + threaded buffered pwrite of them, no HDF5), `cp`, h5gsort with every rank given its
# cores (mpirun --bind-to none), h5gsort with mpirun's default binding (one core when P <= 2),
# h5py + numpy.sort and h5py + cupy.sort (the 4 GiB and f8 sets). Medians of REPEATS runs after a
# warm-up, files in the page cache, printed as a Markdown table; in-process phases below it.
#   bench/e2e.sh [WORKDIR]   env: BIN (build/bin), REPEATS (3), PY_REPEATS (1), SETS (see below),
#                            OLD_BIN (an earlier build's bin: one more h5gsort row, for comparison)
set -euo pipefail
bin=${BIN:-build/bin}
work=${1:-/tmp/h5gsort-e2e}
repeats=${REPEATS:-3}
py_repeats=${PY_REPEATS:-1}
# dataset sets: TYPE:LOG2[:h5gsort options]; py = also the h5py rows
sets=${SETS:-"u4:30:py u4:32 f8:28:py u4:30:ooc"}
cores=$(nproc)
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
wall() { # wall seconds of a whole command (launcher included); its output goes to $work/last.txt
  local start end
  start=$(date +%s.%N)
  "$@" >"$work/last.txt" 2>&1
  end=$(date +%s.%N)
  python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$end"
}
h5gsort_run() { # binding in out [h5gsort options]: whole-process seconds
  local binding=$1 in=$2 out=$3
  shift 3
  rm -f "$out"
  local launch=("${mpirun[@]}" -np 1) program=${H5GSORT:-$bin/h5gsort}
  [ "$binding" = none ] && launch+=(--bind-to none)
  wall "${launch[@]}" "$program" "$in" "$out" -d /keys "$@" -q --report "$work/report.json"
}
raw_run() { # in out: the raw bound of the dataset's bytes
  rm -f "$2"
  local range
  range=$(python3 -c 'import h5py,sys; d=h5py.File(sys.argv[1],"r")["/keys"]; print(d.id.get_offset(), d.id.get_storage_size())' "$1")
  wall "$bin/bench_raw_io" "$1" ${range% *} ${range#* } "$2" "$cores"
}
cp_run() { rm -f "$2"; wall cp "$1" "$2"; }
python_run() { # numpy|cupy in out: whole process, interpreter start included
  rm -f "$3"
  wall python3 - "$@" <<'PY'
import sys, h5py
lib, src, dst = sys.argv[1:4]
with h5py.File(src, "r") as f:
    keys = f["/keys"][...]
if lib == "cupy":
    import cupy
    keys = cupy.sort(cupy.asarray(keys)).get()
else:
    import numpy
    keys = numpy.sort(keys)
with h5py.File(dst, "w") as f:
    f.create_dataset("/keys", data=keys)
PY
}
phases() { # the last report's in-process phases
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("total %.3f: " % r["seconds"]["total"] + "  ".join("%s %.3f" % kv for kv in r["seconds"].items() if kv[1] >= 0.005 and kv[0] != "total") + "  (h2d %.3f, d2h %.3f)" % (r["gpu_copy_seconds"]["h2d"], r["gpu_copy_seconds"]["d2h"]) + "; io threads %d" % r["rank_detail"][0]["io_threads"])' "$work/report.json"
}
gen() { # file type log2
  [ -e "$1" ] || "${mpirun[@]}" -np 8 --bind-to none "$bin/h5gsort-gen" "$1" -d /keys --count $((1 << $3)) --type "$2" --dist uniform --seed 42 >/dev/null
  cat "$1" >/dev/null # into the page cache
}
ratio() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }

echo "# bench/e2e.sh on $gpu_name x $gpus, $cores cores, $(free -g | awk '/Mem/ {print $2}') GiB, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "Whole-process wall seconds (launcher included), median of $repeats after a warm-up (h5py rows: $py_repeats)."
echo
echo "| dataset | what | seconds | x raw bound | x cp |"
echo "|---|---|---:|---:|---:|"
: >"$work/phases.txt"
for spec in $sets; do
  IFS=: read -r type log2 extra <<<"$spec"
  in="$work/in_${type}_$log2.h5" out="$work/out.h5"
  gen "$in" "$type" "$log2"
  label="$type 2^$log2 ($(( (1 << log2) * ${type:1} / 1048576 )) MiB)"
  opts=()
  [ "$extra" = ooc ] && opts=(--device-memory 512M) && label="$label, --device-memory 512M"
  raw=$(repeat "$repeats" raw_run "$in" "$out")
  echo "$label raw bound: $(cat "$work/last.txt")" >>"$work/phases.txt"
  copy=$(repeat "$repeats" cp_run "$in" "$out")
  echo "| $label | raw bound: $cores-thread pread + pwrite | $raw | 1.00 | $(ratio "$raw" "$copy") |"
  echo "| $label | cp | $copy | $(ratio "$copy" "$raw") | 1.00 |"
  for binding in none default; do
    what="h5gsort, mpirun -np 1 $([ $binding = none ] && echo "--bind-to none" || echo "(default binding)")"
    t=$(repeat "$repeats" h5gsort_run "$binding" "$in" "$out" "${opts[@]}")
    echo "| $label | $what | $t | $(ratio "$t" "$raw") | $(ratio "$t" "$copy") |"
    echo "$label $what: $(phases)" >>"$work/phases.txt"
  done
  if [ -n "${OLD_BIN:-}" ]; then
    t=$(H5GSORT=$OLD_BIN/h5gsort repeat "$repeats" h5gsort_run none "$in" "$out" "${opts[@]}")
    echo "| $label | earlier h5gsort ($OLD_BIN), --bind-to none | $t | $(ratio "$t" "$raw") | $(ratio "$t" "$copy") |"
  fi
  if [ "$extra" = py ]; then
    for lib in numpy cupy; do
      [ "$lib" = numpy ] || [ "$gpus" -ge 1 ] || continue
      t=$(repeat "$py_repeats" python_run "$lib" "$in" "$out")
      echo "| $label | h5py + $lib.sort | $t | $(ratio "$t" "$raw") | $(ratio "$t" "$copy") |"
    done
  fi
  rm -f "$out"
done
echo
echo "In-process phases of the last run of each (seconds, slowest rank):"
echo
sed 's/^/    /' "$work/phases.txt"
rm -f "$work/phases.txt" "$work/out.h5"
