#!/usr/bin/env bash
# A/B of two ways to run h5gsort in one call (DESIGN.md: a mechanism that exists for speed stays
# only where an A/B in one run shows it buys at least 2% of a run with 16 GiB per rank): whole
# processes, launcher included, A and B alternated on the same file in the page cache, after one
# untimed run of each; beside them the fastest raw copy of the same bytes (bench_raw_io mmap).
# Prints a Markdown table of medians with every run's seconds.
#   bench/ab.sh [WORKDIR]
#   env: A, B     "LABEL|COMMAND": COMMAND is run as `COMMAND IN OUT -d /keys` through bash
#                 (e.g. "before|mpirun -np 1 --bind-to none .before/h5gsort")
#        SETS     TYPE:LOG2[:OPTIONS] ("f8:28 u4:30 u4:32"; OPTIONS, commas for spaces, go to
#                 both runs, e.g. u4:32:--verify or u4:32:--device-memory,8G)
#        REPEATS  timed runs of each (5); BIN (build/bin): h5gsort-gen and bench_raw_io
#        GEN      the launcher prefix of h5gsort-gen (mpirun -np 8 --bind-to none)
#        SYNC     1 (default): a `sync`, not timed, before every run
set -euo pipefail
work=${1:-/tmp/h5gsort-ab}
bin=${BIN:-build/bin}
repeats=${REPEATS:-5}
sets=${SETS:-"f8:28 u4:30 u4:32"}
gen_launch=${GEN:-mpirun --allow-run-as-root -np 8 --bind-to none -x LD_LIBRARY_PATH}
: "${A:?A=LABEL|COMMAND}" "${B:?B=LABEL|COMMAND}"
mkdir -p "$work"

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
timed() { # COMMAND...: wall seconds of the whole command; its output to $work/last.txt
  [ "${SYNC:-1}" = 0 ] || sync
  local start end
  start=$(date +%s.%N)
  "$@" >"$work/last.txt" 2>&1 || { echo "failed: $*" >&2; cat "$work/last.txt" >&2; return 1; }
  end=$(date +%s.%N)
  echo "$start $end" | awk '{printf "%.3f\n", $2 - $1}'
}
sort_run() { # COMMAND IN OPTIONS: one h5gsort run into $work/out.h5
  rm -f "$work/out.h5"
  timed bash -c "$1 \"\$@\"" _ "$2" "$work/out.h5" -d /keys $3
}
raw_run() { # IN: the fastest raw copy of the dataset's bytes
  local range
  rm -f "$work/raw.out"
  range=$(h5dump -p -H -d /keys "$1" | awk '$1 == "OFFSET" {o = $2} $1 == "SIZE" && !s {s = $2} END {print o, s}')
  timed "$bin/bench_raw_io" "$1" ${range% *} ${range#* } "$work/raw.out" "$(nproc)" mmap
  rm -f "$work/raw.out"
}

echo "# bench/ab.sh on $( (nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo "no GPU") | head -1), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "Whole processes, median of $repeats alternated runs (each after a sync), seconds."
echo "A = ${A%%|*}: \`${A#*|}\`; B = ${B%%|*}: \`${B#*|}\`."
echo
echo "| set | fastest raw copy | A | B | B / A | A runs | B runs |"
echo "|---|---:|---:|---:|---:|---|---|"
for spec in $sets; do
  IFS=: read -r type log2 options <<<"$spec"
  options=${options//,/ }
  in="$work/in_${type}_$log2.h5"
  [ -e "$in" ] || $gen_launch "$bin/h5gsort-gen" "$in" -d /keys --count $((1 << log2)) \
    --type "$type" --dist uniform --seed 42 >/dev/null
  cat "$in" >/dev/null # into the page cache
  raw=() a=() b=()
  raw_run "$in" >/dev/null
  sort_run "${A#*|}" "$in" "$options" >/dev/null
  sort_run "${B#*|}" "$in" "$options" >/dev/null
  for _ in $(seq "$repeats"); do
    raw+=("$(raw_run "$in")")
    a+=("$(sort_run "${A#*|}" "$in" "$options")")
    b+=("$(sort_run "${B#*|}" "$in" "$options")")
  done
  ma=$(printf '%s\n' "${a[@]}" | median) mb=$(printf '%s\n' "${b[@]}" | median)
  mr=$(printf '%s\n' "${raw[@]}" | median)
  printf '| %s 2^%s%s | %.3f | %.3f | %.3f | %.3f | %s | %s |\n' "$type" "$log2" \
    "${options:+ $options}" "$mr" "$ma" "$mb" "$(echo "$mb $ma" | awk '{print $1 / $2}')" \
    "${a[*]}" "${b[*]}"
  rm -f "$in" "$work/out.h5" "$work/raw.out"
done
