#!/usr/bin/env bash
# Start-up and tear-down (issue 15 item 4): what a small sort costs beyond its work. Whole-process
# wall seconds (launcher included) of `mpirun /bin/true` and of h5gsort on a small file with the
# CPU and the CUDA backend, at 1 and 2 ranks; then the same h5gsort runs with -v and --report,
# split into MPI_Init, the GPU context (made in the background; what setup waited for), the
# in-process phases and the rest (launcher, process start, tear-down and exit). Medians of REPEATS runs after a warm-up, files in
# the page cache, printed as Markdown tables. Without a GPU the CUDA rows say "skipped". ENVS adds
# rows to the first table with the launcher and the ranks under other settings: each entry is
# VAR=VALUE assignments joined by '+', e.g. (the H200 machine, Open MPI 4.1.6: MPI_Init 0.24 s with
# UCX, 0.03 s with ob1; mpirun's start and exit 0.05 s shorter without hwloc's GPU discovery,
# 0.27-0.30 s on the H100 machine: docs/launch.md's launch sets it)
#   ENVS="OMPI_MCA_pml=ob1+OMPI_MCA_btl=self,vader HWLOC_COMPONENTS=-cuda,-nvml,-opencl,-rsmi"
#   bench/startup.sh [WORKDIR]   env: BIN (build/bin), REPEATS (5), COUNTS (keys per file: 1000;
#                                e.g. "1000 1073741824" adds a 4 GiB u4 file), RANKS ("1 2"), ENVS
set -euo pipefail
bin=${BIN:-build/bin}
work=${1:-/tmp/h5gsort-startup}
repeats=${REPEATS:-5}
counts=${COUNTS:-1000}
ranks_list=${RANKS:-"1 2"}
envs=${ENVS:-}
mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none -x LD_LIBRARY_PATH -x PATH)
assigns=() # the ENVS entry under way: its assignments, each also passed to the ranks (-x)
exports=()
gpus=$( (nvidia-smi -L 2>/dev/null || true) | wc -l)
gpu_name=$( (nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo "no GPU") | head -1)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
mkdir -p "$work"

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
wall() { # wall seconds of a whole command; its output goes to $work/last.txt
  local start end
  start=$(date +%s.%N)
  "$@" >"$work/last.txt" 2>&1 || { cat "$work/last.txt" >&2; return 1; }
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" 'BEGIN {printf "%.3f\n", e - s}'
}
launch() { # launch ARGS...: mpirun ARGS under the ENVS entry under way
  env "${assigns[@]}" "${mpirun[@]}" "${exports[@]}" "$@"
}
repeat() { # repeat CMD... -> median wall seconds of REPEATS runs after a warm-up
  "$@" >/dev/null
  for _ in $(seq "$repeats"); do "$@"; done | median | xargs printf '%.3f\n'
}
sort_run() { # ranks backend in [options]: one h5gsort run, its wall seconds
  local ranks=$1 backend=$2 in=$3
  shift 3
  rm -f "$work/out.h5"
  wall launch -np "$ranks" "$bin/h5gsort" "$in" "$work/out.h5" -d /keys --backend "$backend" "$@"
}
# One -v run: "wall mpi_init context context_waited validate setup read write total"
verbose_run() { # ranks backend in
  local t
  t=$(sort_run "$1" "$2" "$3" -v --report "$work/report.json")
  python3 - "$t" "$work/report.json" "$work/last.txt" <<'PY'
import json, re, sys
wall, report, log = float(sys.argv[1]), json.load(open(sys.argv[2])), open(sys.argv[3]).read()
s, up = report["seconds"], report["startup_seconds"]
print(wall, up["mpi_init"], up["gpu_context"], up["gpu_context_waited"], s["validate"], s["setup"],
      s["read"], s["write"], s["total"])
PY
}
verbose_medians() { # ranks backend in -> the medians of verbose_run's columns over REPEATS runs
  verbose_run "$@" >/dev/null
  for _ in $(seq "$repeats"); do verbose_run "$@"; done | python3 -c '
import statistics, sys
rows = [list(map(float, line.split())) for line in sys.stdin]
cols = [statistics.median(c) for c in zip(*rows)]
wall, mpi_init, ctx, waited, validate, setup, read, write, total = cols
rest = wall - mpi_init - total
print("| %.3f | %.3f | %.3f (%.3f) | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |" % (
    wall, mpi_init, ctx, waited, validate, setup, read, write, total, rest))'
}

echo "# bench/startup.sh on $gpu_name x $gpus, $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "Whole-process wall seconds (launcher included, mpirun --bind-to none), median of $repeats after a warm-up."
echo
header="| what |"
rule="|---|"
for ranks in $ranks_list; do header="$header $ranks rank(s) |"; rule="$rule---:|"; done
echo "$header"
echo "$rule"
for count in $counts; do
  in="$work/in_$count.h5"
  [ -e "$in" ] || launch -np 1 "$bin/h5gsort-gen" "$in" -d /keys --count "$count" --type u4 \
    --dist uniform --seed 42 >/dev/null
  cat "$in" >/dev/null # into the page cache
done
for entry in "" $envs; do
  IFS=+ read -ra assigns <<<"$entry"
  exports=()
  for a in "${assigns[@]}"; do exports+=(-x "${a%%=*}"); done
  under=${entry:+, $entry}
  row="| mpirun /bin/true$under |"
  for ranks in $ranks_list; do row="$row $(repeat wall launch -np "$ranks" /bin/true) |"; done
  echo "$row"
  for count in $counts; do
    for backend in cpu cuda; do
      row="| h5gsort, $count u4 keys, --backend $backend$under |"
      for ranks in $ranks_list; do
        if [ "$backend" = cuda ] && [ "$gpus" -eq 0 ]; then row="$row skipped |"; continue; fi
        row="$row $(repeat sort_run "$ranks" "$backend" "$work/in_$count.h5" -q) |"
      done
      echo "$row"
    done
  done
done
assigns=()
exports=()
echo
echo "The same with -v --report, medians of $repeats: MPI_Init (from main's first line), the GPU"
echo "context made in the background (in parentheses: what setup waited for), in-process phases"
echo "(slowest rank) and the rest: wall - MPI_Init - total (launcher, process start, tear-down and"
echo "exit)."
echo
echo "| run | wall | MPI_Init | GPU context (waited) | validate | setup | read | write | total | rest |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for count in $counts; do
  for backend in cpu cuda; do
    for ranks in $ranks_list; do
      what="$count keys, $backend, $ranks rank(s)"
      if [ "$backend" = cuda ] && [ "$gpus" -eq 0 ]; then echo "| $what | skipped | | | | | | | | |"; continue; fi
      echo "| $what $(verbose_medians "$ranks" "$backend" "$work/in_$count.h5")"
    done
  done
done
echo
echo "Last -v output:"
echo
sed 's/^/    /' "$work/last.txt"
rm -f "$work/out.h5" "$work/report.json" "$work/last.txt"
