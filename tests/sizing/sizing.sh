#!/usr/bin/env bash
# Sizing a job (issue 31): the host memory check before anything is read, and --plan.
#   sizing.sh BIN_DIR "MPIEXEC ... -n" CASE
# The memory a node gives is set with --host-memory (what a cgroup limit would give: CI cannot
# make cgroups), so the arithmetic is checked on any machine.
BIN=$1
MPIEXEC=$2
CASE=$3
source "$(dirname "$0")/../e2e/lib.sh"
IN=$WORK/in.h5
OUT=$WORK/out/o.h5
mkdir -p "$WORK/out"
N=4000000
mpirun 1 "$BIN/h5gsort-gen" "$IN" -d /keys --count $N --type u4 --dist uniform --seed 3 >/dev/null
mpirun 1 "$BIN/h5gsort-gen" "$IN" --append -d /vals --count $N --type f8 --dist uniform --seed 4 >/dev/null
mpirun 1 "$BIN/h5gsort-gen" "$IN" --append -d /small --count $N --type u4 --dist uniform --seed 5 >/dev/null

# json FILE KEY: the first number of "KEY": in FILE
json() { grep -o "\"$2\": [0-9]*" "$1" | head -1 | grep -o '[0-9]*$'; }
MIB=$((1 << 20))
BASE=$((64 * MIB)) # src/sizing.c RANK_BASE_BYTES

case_refused() {
  # 1 rank, u4 in core on the CPU backend: the slice (4 N) and the sort's scratch (4 N)
  local need=$((4 * N + 4 * N + BASE))
  for p in 1 3; do
    rm -rf "$WORK/out" && mkdir -p "$WORK/out"
    mpirun $p "$BIN/h5gsort" "$IN" "$OUT" -d /keys --backend cpu --host-memory 70M \
      >"$WORK/log" 2>&1 && die "$p ranks: a run that cannot fit ran"
    rc=0
    mpirun $p "$BIN/h5gsort" "$IN" "$OUT" -d /keys --backend cpu --host-memory 70M >/dev/null \
      2>"$WORK/log" || rc=$?
    [ "$rc" = 1 ] || die "$p ranks: exit $rc, expected 1"
    [ "$(grep -c '^h5gsort: error: not enough host memory' "$WORK/log")" = 1 ] ||
      { cat "$WORK/log" >&2; die "$p ranks: no one-line refusal"; }
    grep -q "would fit" "$WORK/log" || die "$p ranks: the refusal does not say what would fit"
    [ -z "$(ls -A "$WORK/out")" ] || die "$p ranks: files left: $(ls -A "$WORK/out")"
  done
  # the same job given enough fits and sorts
  mpirun 1 "$BIN/h5gsort" "$IN" "$OUT" -d /keys --backend cpu --host-memory $((need + MIB)) \
    >/dev/null || die "a job given what it needs failed"
  # and one byte less than it needs is refused
  rm -f "$OUT"
  mpirun 1 "$BIN/h5gsort" "$IN" "$OUT" -d /keys --backend cpu --host-memory $((need - 1)) \
    >/dev/null 2>&1 && die "a job given one byte less than it needs ran"
  [ ! -e "$OUT" ] || die "a refused run left OUTPUT"
}

# plan_vs_run P ARGS...: --plan's runs per rank are the run's, its memory is the arithmetic's,
# and --plan writes nothing.
plan_vs_run() {
  local p=$1
  shift
  rm -rf "$WORK/out" && mkdir -p "$WORK/out"
  mpirun "$p" "$BIN/h5gsort" "$IN" "$OUT" -d /keys --backend cpu --plan --report "$WORK/plan.json" \
    "$@" >"$WORK/plan.txt" || die "--plan $*: failed"
  [ -z "$(ls -A "$WORK/out")" ] || die "--plan $* wrote $(ls -A "$WORK/out")"
  grep -q '^ *0 ' "$WORK/plan.txt" || die "--plan printed no table"
  mpirun "$p" "$BIN/h5gsort" "$IN" "$OUT" -d /keys --backend cpu --report "$WORK/run.json" \
    "$@" >/dev/null || die "run $*: failed"
  local planned ran
  planned=$(json "$WORK/plan.json" runs)
  ran=$(json "$WORK/run.json" runs_per_rank)
  [ "$planned" = "$ran" ] || die "$p ranks $*: --plan says $planned runs per rank, the run made $ran"
  PLANNED_RUNS=$planned
  HOST_BYTES=$(json "$WORK/plan.json" host_bytes)
}

case_plan() {
  local n1 most expect
  for p in 1 2 3 4; do
    n1=$((N / p))             # rank 0's share: rows [0, N/P)
    most=$(((N + p - 1) / p)) # the most rows any rank receives
    # in core: the slice, a merge's other side with several ranks, the sort's scratch
    plan_vs_run $p
    [ "$PLANNED_RUNS" = 1 ] || die "$p ranks in core: $PLANNED_RUNS runs"
    expect=$((4 * n1 + (p > 1 ? 4 * n1 : 0) + 4 * n1 + BASE))
    [ "$HOST_BYTES" = "$expect" ] || die "$p ranks in core: $HOST_BYTES bytes planned, $expect expected"
    # out of core: runs of what 2 MiB of working memory holds (keys + scratch: 8 bytes a key)
    plan_vs_run $p --device-memory 2M
    [ "$PLANNED_RUNS" -gt 1 ] || die "$p ranks out of core: $PLANNED_RUNS runs"
    # records: values (8 bytes a key) and their scratch, the carried f8 rows in and out, and
    # with several ranks their route (mpi/gather_rows.h, the way the keys went): the source
    # index of each row sent and the position of each row received, the rows sent and received
    plan_vs_run $p --carry /vals
    local spare=$((p > 1 ? 12 * n1 : 0)) route=$((p > 1 ? 16 * (n1 + most) : 0))
    expect=$((12 * n1 + spare + 12 * n1 + 8 * (n1 + most) + route + BASE))
    [ "$HOST_BYTES" = "$expect" ] || die "$p ranks records: $HOST_BYTES bytes planned, $expect expected"
    # two carried datasets moved as one row of 8 + 4 bytes (src/carry.c), each read and written
    # through a buffer of the wider one's rows; the route moves the 12-byte rows
    plan_vs_run $p --carry /vals,/small
    route=$((p > 1 ? 20 * (n1 + most) : 0))
    expect=$((12 * n1 + spare + 12 * n1 + 12 * (n1 + most) + 8 * most + route + BASE))
    [ "$HOST_BYTES" = "$expect" ] || die "$p ranks, a batch: $HOST_BYTES bytes planned, $expect expected"
  done
  # a plan that does not fit says so and exits as the run would
  rc=0
  mpirun 2 "$BIN/h5gsort" "$IN" "$OUT" -d /keys --backend cpu --plan --host-memory 100M --force \
    >"$WORK/plan.txt" 2>"$WORK/log" || rc=$?
  [ "$rc" = 1 ] || die "--plan of a job that cannot fit: exit $rc, expected 1"
  grep -q "DOES NOT FIT" "$WORK/plan.txt" || die "--plan did not say it does not fit"
}

# Small chunks through HDF5 (issue 56 item 6): HDF5 keeps a few KiB for every chunk one call
# touches until it returns (200,000 1-row chunks in one call took 2 GiB), so the transfers go in
# calls of a few chunks: a run writing 1-row (and 7-row) chunks, started without a launcher,
# peaks within the host memory --plan plans for it (the memory check's own figure), and sorts.
case_small_chunks() {
  [ "${H5G_SANITIZE:-OFF}" = ON ] && { echo "SKIP: resident memory under the sanitizers"; exit 77; }
  local small=$WORK/small.h5 planned peak
  mpirun 1 "$BIN/h5gsort-gen" "$small" -d /k --count 200000 --type i8 --dist uniform --seed 1 >/dev/null
  for chunk in 1 7; do
    "$BIN/h5gsort" "$small" "$OUT" -d /k --backend cpu --chunk $chunk --plan --force \
      --report "$WORK/plan.json" >/dev/null || die "--plan --chunk $chunk failed"
    planned=$(json "$WORK/plan.json" host_bytes)
    peak=$(/usr/bin/python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)' \
      "$BIN/h5gsort" "$small" "$OUT" -d /k --backend cpu --chunk $chunk --force -q) ||
      die "--chunk $chunk: the run failed"
    echo "--chunk $chunk: peak $peak bytes, planned $planned"
    [ "$peak" -le "$planned" ] || die "--chunk $chunk: peak $peak bytes over the $planned planned"
    check "$small" -d /k "$OUT" -o /k
  done
}

"case_$CASE"
echo "PASS: sizing $CASE"
