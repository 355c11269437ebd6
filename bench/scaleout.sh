#!/usr/bin/env bash
# Scale-out benchmark on one node (issue 29 #5): h5gsort on 1, 2, 4 and 8 ranks that share the
# node (and its one GPU where there is one), each rank given its cores (mpirun --map-by
# slot:PE=CORES/P --bind-to core), in three I/O modes: default, the forced multi-node policy
# (H5GSORT_IO_POLICY=multinode: the I/O several nodes would get) and HDF5's collective MPI-IO
# (H5GSORT_IO=mpio). Datasets: 4 GiB u4 (2^30 keys) and 2 GiB f8 (2^28), uniform, each stored
# contiguous and as gzip=1 (shuffle + deflate 1, chunks of 65536 rows), sorted into the same
# storage (--layout keep). Whole-process wall seconds (launcher included) and the read and write
# phases of --report, each the median of REPEATS runs after a warm-up, input in the page cache;
# Markdown tables on stdout, then the issue's targets with their ratios, met or MISSED.
# Where CORES/P is below 1 (more ranks than cores) or mpirun refuses the binding (e.g. fewer
# physical cores than CORES), the ranks run --bind-to none, and the table says so.
#   bench/scaleout.sh [WORKDIR]   (default /tmp/h5gsort-scaleout)
#   env: BIN (build/bin), REPEATS (3), CORES (nproc), RANKS ("1 2 4 8"),
#        SETS ("u4:30 f8:28": TYPE:LOG2 of the keys), STORAGES ("contiguous gzip1"),
#        MODES ("default multinode mpio")
# On the GPU machine, as root:
#   OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 bench/scaleout.sh
# The full matrix is 48 rows of 4 runs; the mpio rows of gzip data are the slow ones (4 GiB u4
# gzip=1 through HDF5 on one rank: ~15 s read, ~36 s write), so split it across calls where one
# call is limited: e.g. SETS=u4:30 STORAGES=gzip1, then SETS=u4:30 STORAGES=contiguous, then
# SETS=f8:28 (inputs are kept in WORKDIR and reused). A quick run on a small machine:
#   SETS="u4:22 f8:20" REPEATS=1 CORES=2 bench/scaleout.sh
set -euo pipefail
bin=${BIN:-build/bin}
work=${1:-/tmp/h5gsort-scaleout}
repeats=${REPEATS:-3}
cores=${CORES:-$(nproc)}
ranks_list=${RANKS:-1 2 4 8}
sets=${SETS:-u4:30 f8:28}
storages=${STORAGES:-contiguous gzip1}
modes=${MODES:-default multinode mpio}
mpirun=(mpirun --allow-run-as-root -x LD_LIBRARY_PATH -x PATH)
gpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU' || true)
gpu_name=$( (nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo "no GPU") | head -1)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$work"

fail() { echo "scaleout.sh: $*" >&2; exit 1; }

# launch P: sets LAUNCH (mpirun and its options for P ranks) and BINDING (how, for the table).
# Each rank gets CORES/P cores when mpirun can bind them (tried once with /bin/true).
launch() {
  local p=$1 pe=$((cores / $1))
  LAUNCH=("${mpirun[@]}" -np "$p" --map-by "slot:PE=$pe" --bind-to core)
  BINDING="PE=$pe, bound"
  if [ "$pe" -lt 1 ]; then
    BINDING="--bind-to none (more ranks than $cores cores)"
  elif ! "${LAUNCH[@]}" true >/dev/null 2>&1; then
    BINDING="--bind-to none (mpirun refused PE=$pe)"
  else
    return 0
  fi
  LAUNCH=("${mpirun[@]}" -np "$p" --oversubscribe --bind-to none)
}

# mode_env MODE: the environment assignment of an I/O mode (none for default).
mode_env() {
  case $1 in
  default) ;;
  multinode) echo H5GSORT_IO_POLICY=multinode ;;
  mpio) echo H5GSORT_IO=mpio ;;
  *) fail "unknown mode '$1' (default, multinode, mpio)" ;;
  esac
}

# gen FILE TYPE LOG2 STORAGE: the input, made once (kept in WORKDIR), then read into the page cache.
gen() {
  local layout=()
  [ "$4" = gzip1 ] && layout=(--layout gzip --gzip-level 1)
  [ "$4" = contiguous ] || [ "$4" = gzip1 ] || fail "unknown storage '$4' (contiguous, gzip1)"
  if [ ! -e "$1" ]; then
    echo "generating $1" >&2
    "${mpirun[@]}" -np "$cores" --oversubscribe --bind-to none "$bin/h5gsort-gen" "$1.part" \
      -d /keys --count $((1 << $3)) --type "$2" --dist uniform --seed 42 "${layout[@]}" >/dev/null
    mv "$1.part" "$1"
  fi
  cat "$1" >/dev/null
}

# one_run ENV IN OUT: one whole h5gsort process under LAUNCH with ENV (may be empty); prints
# "wall read write" seconds.
one_run() {
  local start end
  rm -f "$3"
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # ENV: an assignment or nothing
  env $1 "${LAUNCH[@]}" ${1:+-x ${1%%=*}} "$bin/h5gsort" "$2" "$3" -d /keys -q \
    --report "$work/report.json" >"$work/last.txt" 2>&1 ||
    { cat "$work/last.txt" >&2; fail "failed: $1 ${LAUNCH[*]} h5gsort $2 $3"; }
  end=$(date +%s.%N)
  python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["seconds"]
print("%.3f %.3f %.3f" % (float(sys.argv[3]) - float(sys.argv[2]), s["read"], s["write"]))' \
    "$work/report.json" "$start" "$end"
}

# measure ENV IN OUT: the median of each of wall, read and write over REPEATS runs after a warm-up.
measure() {
  one_run "$@" >/dev/null
  for _ in $(seq "$repeats"); do one_run "$@"; done |
    python3 -c 'import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin]
print(" ".join("%.3f" % statistics.median(c) for c in zip(*rows)))'
}

ratio() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }

echo "# bench/scaleout.sh on $gpu_name x $gpus, $cores cores, $(free -g | awk '/Mem/ {print $2}') GiB, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "Whole-process wall seconds (launcher included) and the read and write phases of --report"
echo "(slowest rank), medians of $repeats runs after a warm-up; x 1 rank: wall / wall of 1 rank in"
echo "the same mode."
declare -A result # "TYPE:LOG2 STORAGE MODE P" -> "wall read write"
for spec in $sets; do
  IFS=: read -r type log2 <<<"$spec"
  for storage in $storages; do
    in="$work/in_${type}_${log2}_$storage.h5"
    gen "$in" "$type" "$log2" "$storage"
    echo
    echo "## $type 2^$log2 ($(((1 << log2) * ${type:1} / 1048576)) MiB), $storage in and out"
    echo
    echo "| mode | ranks | launch | wall s | read s | write s | x 1 rank |"
    echo "|---|---:|---|---:|---:|---:|---:|"
    for mode in $modes; do
      env_set=$(mode_env "$mode")
      for p in $ranks_list; do
        launch "$p"
        r=$(measure "$env_set" "$in" "$work/out.h5")
        result["$spec $storage $mode $p"]=$r
        read -r wall read write <<<"$r"
        one=${result["$spec $storage $mode 1"]:-}
        echo "| $mode | $p | $BINDING | $wall | $read | $write | ${one:+$(ratio "$wall" "${one%% *}")} |"
      done
    done
  done
done
rm -f "$work/out.h5" "$work/report.json" "$work/last.txt"

# target WHAT KEY_A FIELD_A KEY_B FIELD_B LIMIT: the ratio A / B (FIELD 1 wall, 2 read, 3 write),
# met when <= LIMIT, or, for a negative LIMIT, when >= -LIMIT; nothing when a row was not run.
target() {
  local a=${result[$2]:-} b=${result[$4]:-}
  [ -n "$a" ] && [ -n "$b" ] || return 0
  a=$(cut -d' ' -f"$3" <<<"$a")
  b=$(cut -d' ' -f"$5" <<<"$b")
  python3 -c "import sys; a, b, lim = map(float, sys.argv[2:5]); r = a / b
ok = r <= lim if lim > 0 else r >= -lim
print('- %s: %.3f / %.3f = %.2fx (target %s %.2fx): %s' % (sys.argv[1], a, b, r,
      '<=' if lim > 0 else '>=', abs(lim), 'met' if ok else 'MISSED'))" "$1" "$a" "$b" "$6"
}
u4=$(for spec in $sets; do case $spec in u4:*) echo "$spec" ;; esac; done | head -1)
echo
echo "Targets (issue 29 #5), u4 2^${u4#u4:} keys:"
for p in 2 4 8; do # the issue's target is the whole process; the write phase beside it
  target "gzip=1 in and out, whole process, $p ranks / 1 rank" "$u4 gzip1 default $p" 1 \
    "$u4 gzip1 default 1" 1 1.25
  target "gzip=1 output, write phase, $p ranks / 1 rank" "$u4 gzip1 default $p" 3 \
    "$u4 gzip1 default 1" 3 1.25
done
target "gzip=1 input, read phase, 4 ranks / 1 rank" "$u4 gzip1 default 4" 2 "$u4 gzip1 default 1" 2 1.25
target "contiguous, 4 ranks, multi-node policy / one-node direct (wall)" \
  "$u4 contiguous multinode 4" 1 "$u4 contiguous default 4" 1 1.3
target "contiguous, 4 ranks, H5GSORT_IO=mpio / multi-node policy (wall)" \
  "$u4 contiguous mpio 4" 1 "$u4 contiguous multinode 4" 1 -2
