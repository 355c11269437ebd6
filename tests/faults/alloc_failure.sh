#!/usr/bin/env bash
# Allocation failures: one rank's own allocations fail, one point at a time, and the rule "an
# error on one rank reaches every rank" must hold at each point.
#   alloc_failure.sh BIN_DIR "MPIEXEC ... -n" CASE SHIM
#   CASE: h5gsort_keys | h5gsort_records | gen;  SHIM: the fail_alloc library, or "sanitize"
#
# A counting run (shim loaded, nothing failed) tells how many allocations the executable itself
# makes on the chosen rank; then for each k (all of them, or an even spread of at most
# MAX_POINTS always holding the first and last few) the k-th one fails. Every run must end
# within RUN_TIMEOUT seconds and every rank exit with the same code; a nonzero code must be 1
# (out of memory is a runtime failure) with exactly one error line, no HDF5 error stack, no
# OUTPUT and no temporary file beside it, and the input unchanged; a zero code needs a correct
# output (the independent checkers). Environment: H5G_FAIL_ALLOC_RANK (default 1),
# H5G_ALLOC_POINTS (default 40), H5G_ALLOC_TIMEOUT (seconds per run, default 20: a run takes
# about a second), H5G_ALLOC_ONLY="K ..." (just these points), H5G_ALLOC_VERBOSE=1 (print the
# log of a failing point).
BIN=$1
MPIEXEC=$2
CASE=$3
SHIM=$4
if [ "$SHIM" = sanitize ]; then
  echo "skipped: a preloaded malloc shim cannot run beside AddressSanitizer's allocator"
  exit 77
fi
source "$(dirname "$0")/../e2e/lib.sh"
set +e # every run is judged below, a failing command must not end the script

RANKS=3
FAIL_RANK=${H5G_FAIL_ALLOC_RANK:-1}
MAX_POINTS=${H5G_ALLOC_POINTS:-40}
RUN_TIMEOUT=${H5G_ALLOC_TIMEOUT:-20}
EDGE=5 # the first and last few points are always run
failures=0
W=$WORK
mkdir -p "$W/out"

case $CASE in
h5gsort_keys)
  PROG=$BIN/h5gsort PREFIX="h5gsort: error: " IN=$W/in.h5 OUT=$W/out/out.h5
  gen 2 "$IN" -d /keys --count 400000 --type u8 --dist uniform --seed 9
  ARGS=(--backend cpu --device-memory 1M "$IN" "$OUT" -d /keys)
  output_ok() { check "$IN" -d /keys "$OUT" -o /keys; }
  ;;
h5gsort_records)
  PROG=$BIN/h5gsort PREFIX="h5gsort: error: " IN=$W/in.h5 OUT=$W/out/out.h5
  gen 2 "$IN" -d /keys --count 150000 --type f4 --dist few --seed 3 --attrs
  gen 1 "$IN" -d /id --count 150000 --type u8 --dist index --append
  gen 3 "$IN" -d /pay --count 150000 --type f8 --dist special --seed 4 --append
  gen 2 "$IN" -d /nd/pay --count 150000 --type u2 --dist uniform --seed 5 --row-shape 3,2 --append
  ARGS=(--backend cpu --device-memory 1M --carry /id,/pay,/nd/pay --index-out /idx --verify
        "$IN" "$OUT" -d /keys)
  output_ok() { rcheck "$IN" "$OUT" -d /keys --carry /pay --carry /nd/pay --row-id /id --index /idx; }
  ;;
gen)
  PROG=$BIN/h5gsort-gen PREFIX="h5gsort-gen: error: " IN= OUT=$W/out/out.h5
  ARGS=("$OUT" -d /g/keys --count 300000 --type f8 --dist normal --seed 5 --layout gzip
        --chunk 4096 --attrs)
  gen 3 "$W/ref.h5" "${ARGS[@]:1}"
  output_ok() { h5diff "$W/ref.h5" "$OUT" >"$WORK/check.log" 2>&1 || { cat "$WORK/check.log"; false; }; }
  ;;
*) die "unknown case '$CASE'" ;;
esac
[ -n "$IN" ] && cp "$IN" "$W/in.copy"

# run K: PROG on RANKS ranks, the K-th allocation of rank FAIL_RANK failing (0: count only).
# Each rank records its pid and exit code; mpiexec itself sees only the wrappers, so it never
# kills the other ranks for us: a rank left waiting in a collective shows up as a hang. The rank
# is the launcher's: OMPI_COMM_WORLD_RANK (Open MPI), PMI_RANK (MPICH's hydra), PMIX_RANK; the
# shim, which knows ranks by OMPI_COMM_WORLD_RANK, is given it under the others, and goes
# before whatever the launcher preloads (tests/CMakeLists.txt: MPICH's yield shim).
run() {
  local k=$1
  rm -rf "$W/run" "$W/out"
  mkdir -p "$W/run" "$W/out"
  H5G_FAIL_ALLOC=$k H5G_FAIL_ALLOC_RANK=$FAIL_RANK H5G_FAIL_ALLOC_REPORT=$W/run/alloc \
    H5G_SHIM=$SHIM timeout -k 5 "$RUN_TIMEOUT" $MPIEXEC "$RANKS" bash -c \
    'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-$PMIX_RANK}}; echo $$ > "$0/pid.$r"
     OMPI_COMM_WORLD_RANK=$r LD_PRELOAD=$H5G_SHIM${LD_PRELOAD:+:$LD_PRELOAD} "$@"
     echo $? > "$0/rc.$r"' \
    "$W/run" "$PROG" "${ARGS[@]}" >"$W/run/log" 2>&1
  local status=$?
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then # timeout: end what is left, by pid
    for f in "$W"/run/pid.*; do
      [ -f "$f" ] || continue
      pkill -KILL -P "$(cat "$f")" 2>/dev/null
      kill -KILL "$(cat "$f")" 2>/dev/null
    done
    return 124
  fi
  return 0
}

# site K: "function (file:line)" of the K-th allocation's caller, from the shim's report.
site() {
  local offset
  offset=$(sed -n "s/^failed $1 //p" "$W/run/alloc.$FAIL_RANK" 2>/dev/null | head -1)
  [ -n "$offset" ] || { echo "(not reached)"; return; }
  addr2line -f -i -C -e "$PROG" "$offset" 2>/dev/null | paste -sd' ' | sed "s|$(dirname "$BIN")/||g"
}

# judge K: checks the run just made; prints one line and counts failures.
judge() {
  local k=$1 timed_out=$2 problems=() codes=() code=
  if [ "$timed_out" = 1 ]; then
    problems+=("hang: killed after ${RUN_TIMEOUT}s")
  fi
  for r in $(seq 0 $((RANKS - 1))); do
    if [ -f "$W/run/rc.$r" ]; then codes+=("$(cat "$W/run/rc.$r")"); else codes+=("-"); fi
  done
  code=${codes[0]}
  if [ "$timed_out" = 0 ] && [[ " ${codes[*]} " == *" - "* ]]; then
    problems+=("a rank ended without exiting (killed, or MPI aborted the job)")
    timed_out=1 # nothing more to judge from the codes
  fi
  for c in "${codes[@]}"; do
    if [ "$c" != "$code" ]; then problems+=("exit codes differ"); break; fi
  done
  local lines
  lines=$(grep -c "^$PREFIX" "$W/run/log")
  if [ "$code" = 0 ] && [ ${#problems[@]} -eq 0 ]; then
    [ "$lines" -eq 0 ] || problems+=("exit 0 with an error line")
    output_ok >/dev/null 2>&1 || problems+=("exit 0 but the output is wrong")
  elif [ "$timed_out" = 0 ]; then
    [ "$code" = 1 ] || problems+=("exit $code, expected 1 (out of memory)")
    [ "$lines" -eq 1 ] || problems+=("$lines '$PREFIX' lines, expected 1")
    grep -q 'HDF5-DIAG' "$W/run/log" && problems+=("an HDF5 error stack")
  fi
  if [ "$code" != 0 ]; then
    [ -e "$OUT" ] && problems+=("OUTPUT left behind")
    ls -A "$W/out" | grep -q '\.tmp$' && problems+=("temporary file left")
  fi
  if [ -n "$IN" ] && ! cmp -s "$IN" "$W/in.copy"; then
    problems+=("input changed")
    cp "$W/in.copy" "$IN"
  fi
  local message exits="${codes[*]}"
  message=$(grep -m1 "^$PREFIX" "$W/run/log" | cut -c1-110)
  if [ ${#problems[@]} -eq 0 ]; then
    echo "ok     k=$k exit $exits${message:+: $message} [$(site "$k")]"
  else
    failures=$((failures + 1))
    local IFS=';'
    echo "FAILED k=$k exit $exits: ${problems[*]} [$(site "$k")]"
    [ -n "$message" ] && echo "         $message"
    [ -n "${H5G_ALLOC_VERBOSE:-}" ] && sed 's/^/         | /' "$W/run/log" | head -20
  fi
}

# Count the executable's allocations on the failing rank (nothing fails).
run 0 || die "the counting run hung"
total=$(sed -n 's/^count //p' "$W/run/alloc.$FAIL_RANK" | awk '{print $1}')
[ -n "$total" ] || die "the shim wrote no count (is $SHIM loaded?)"
judge 0 0
[ "$failures" -eq 0 ] || die "the run without failures did not succeed"
[ "$total" -gt 0 ] || die "no allocation counted: the shim did not see the executable"

# The points: every k, or the first and last EDGE with an even spread between.
points=()
if [ "$total" -le "$MAX_POINTS" ]; then
  points=($(seq 1 "$total"))
else
  middle=$((MAX_POINTS - 2 * EDGE))
  points=($(seq 1 "$EDGE"))
  for i in $(seq 1 "$middle"); do
    points+=($((EDGE + i * (total - 2 * EDGE) / (middle + 1))))
  done
  points+=($(seq $((total - EDGE + 1)) "$total"))
fi
[ -n "${H5G_ALLOC_ONLY:-}" ] && points=($H5G_ALLOC_ONLY)
echo "$CASE: rank $FAIL_RANK of $RANKS makes $total allocations; failing ${#points[@]} of them"

for k in "${points[@]}"; do
  run "$k"
  if [ $? -eq 124 ]; then judge "$k" 1; else judge "$k" 0; fi
done

if [ "$failures" -ne 0 ]; then
  echo "FAIL: $failures of ${#points[@]} allocation failures broke the rule"
  exit 1
fi
echo "PASS: ${#points[@]} allocation failures, every rank ended with the same code"
