# shellcheck shell=bash
# Shared helpers of the end-to-end and bad-input tests (sourced, not run).
# The caller sets BIN (the build's bin dir) and MPIEXEC (launcher command ending with its -n flag).
# `source lib.sh --backend-only` defines only the backend choice below (no shell options, no work
# directory): for scripts with helpers of their own (tests/faults/faults.sh, tests/gpu_e2e).

# gpu_usable: nvidia-smi lists a GPU and CUDA_VISIBLE_DEVICES does not hide every one.
gpu_usable() {
  case ${CUDA_VISIBLE_DEVICES-unset} in "" | -1) return 1 ;; esac
  nvidia-smi -L 2>/dev/null | grep -q GPU
}

# test_backend: BACKEND := H5G_TEST_BACKEND (cpu or cuda; default cpu), the backend a test sorts
# on (CTest's gpu.* variants set cuda). cuda where no GPU is usable: the test is skipped (exit 77).
test_backend() {
  BACKEND=${H5G_TEST_BACKEND:-cpu}
  case $BACKEND in
  cpu) ;;
  cuda) gpu_usable || { echo "SKIP: no CUDA device"; exit 77; } ;;
  *) echo "FAIL: H5G_TEST_BACKEND=$BACKEND: expected cpu or cuda" >&2; exit 1 ;;
  esac
}
# gpu_mpiexec: MPIEXEC := the GPU machine's own mpirun, passing the library path (parallel HDF5
# travels in .devlibs); by its path, since lib.sh defines a function of that name. Where there is
# no mpirun, MPIEXEC stays as given.
gpu_mpiexec() {
  if command -v mpirun >/dev/null; then
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
    MPIEXEC="$(command -v mpirun) --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -np"
  fi
}
if [ "${1:-}" = --backend-only ]; then return 0; fi

set -euo pipefail

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# Each test works in its own temporary directory under the build directory, removed at exit.
WORK=$(mktemp -d "$(dirname "$BIN")/e2e-tmp.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
RUNS=0
# Options sort_ok (so sort_check) and expect_failure give every h5gsort run before the test's
# own, e.g. SORT_OPTS=(--backend "$BACKEND") to run a whole script on the backend test_backend chose.
SORT_OPTS=()

die() {
  echo "FAIL: $*" >&2
  exit 1
}

# mpirun P PROGRAM ARGS...: runs PROGRAM on P ranks.
mpirun() {
  local ranks=$1
  shift
  # shellcheck disable=SC2086  # MPIEXEC is a command line to split into words
  $MPIEXEC "$ranks" "$@"
}

# same_chunked_output A B: two chunked outputs hold the same objects, values, chunking, filters
# and allocated bytes. Not compared byte for byte: HDF5 1.10 writes the unused tail of a chunk
# index node from memory it does not clear (under ASan, or glibc's MALLOC_PERTURB_, 1733 bytes of
# one such node differed between two runs that wrote the same chunks); contiguous outputs hold no
# such node and are compared with cmp. Nor are the objects' addresses (h5ls's Location): filtered
# chunks stored by rank 0 after the collective close (io/gathered.c) place the object headers
# of several datasets elsewhere than HDF5's collective writes do, with the same chunks.
same_chunked_output() {
  h5diff "$1" "$2" || die "$1 and $2 hold different values"
  diff <(h5ls -v -r "$1" | grep -v '^Opened\|^ *Location:') \
    <(h5ls -v -r "$2" | grep -v '^Opened\|^ *Location:') >&2 ||
    die "$1 and $2 differ in their objects or storage"
}

# same_output A B: B holds what A holds: byte for byte, or where A has a chunked dataset, as
# same_chunked_output compares.
same_output() {
  if h5ls -v -r "$1" | grep -q '^ *Chunks:'; then
    same_chunked_output "$1" "$2"
  else
    cmp "$1" "$2" >&2 || die "$2 is not byte-identical to $1"
  fi
}

# gen P OUT ARGS...: h5gsort-gen on P ranks; fails the test on error.
gen() {
  local ranks=$1
  shift
  mpirun "$ranks" "$BIN/h5gsort-gen" "$@" || die "h5gsort-gen $* (on $ranks ranks) failed"
}

# sort_ok P ARGS...: h5gsort on P ranks must exit 0 and print no error; its output lands in
# $WORK/last.log.
sort_ok() {
  local ranks=$1 rc=0
  shift
  RUNS=$((RUNS + 1))
  mpirun "$ranks" "$BIN/h5gsort" "${SORT_OPTS[@]}" "$@" >"$WORK/last.log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] || grep -qE 'h5gsort: error|HDF5-DIAG' "$WORK/last.log"; then
    cat "$WORK/last.log" >&2
    die "h5gsort ${SORT_OPTS[*]:+${SORT_OPTS[*]} }$* (on $ranks ranks) exited $rc"
  fi
}

# rcheck ARGS...: the independent record checker (h5gsort_check_records) must accept the output.
rcheck() {
  "$BIN/h5gsort_check_records" "$@" >"$WORK/check.log" 2>&1 || {
    cat "$WORK/check.log" >&2
    die "h5gsort_check_records $* rejected the output"
  }
}

# check ARGS...: the independent checker (h5gsort_check) must accept the output.
check() {
  "$BIN/h5gsort_check" "$@" >"$WORK/check.log" 2>&1 || {
    cat "$WORK/check.log" >&2
    die "h5gsort_check $* rejected the output"
  }
}

# sort_check P IN INPATH OUT OUTPATH [H5GSORT OPTIONS...]: sorts IN:INPATH into OUT:OUTPATH and
# checks the result (descending when the options say so).
sort_check() {
  local ranks=$1 in=$2 inpath=$3 out=$4 outpath=$5 order=()
  shift 5
  local opts=("$@")
  [ "$inpath" != "$outpath" ] && opts+=(--output-dataset "$outpath")
  for o in "$@"; do [ "$o" = --descending ] && order=(--descending); done
  sort_ok "$ranks" "${opts[@]}" "$in" "$out" -d "$inpath"
  check "$in" -d "$inpath" "$out" -o "$outpath" "${order[@]}"
}

# expect_failure CODE PATTERN H5GSORT_ARGS...: h5gsort on 1 and 3 ranks must exit CODE with
# exactly one "h5gsort: error:" line matching PATTERN (extended regexp, any case; e.g. the dataset
# path or the type class), no HDF5 error stack, OUTPUT absent (or unchanged when it existed), no
# new file beside it, and IN unchanged. The caller sets IN, OUT and WRAP (a command prefix for
# each rank, e.g. to set a resource limit; may be empty).
expect_failure() {
  local code=$1 pattern=$2
  shift 2
  for p in 1 3; do
    local rc=0 out_existed=0 before after
    [ -f "$IN" ] && cp "$IN" "$WORK/in.copy"
    if [ -e "$OUT" ]; then
      out_existed=1
      cp "$OUT" "$WORK/out.copy"
    fi
    before=$(ls -A "$(dirname "$OUT")" 2>&1 || true)
    RUNS=$((RUNS + 1))
    mpirun "$p" "${WRAP[@]}" "$BIN/h5gsort" "${SORT_OPTS[@]}" "$@" >"$WORK/log" 2>&1 || rc=$?
    after=$(ls -A "$(dirname "$OUT")" 2>&1 || true)
    local what="h5gsort ${SORT_OPTS[*]:+${SORT_OPTS[*]} }$* on $p ranks"
    echo "--- $what: exit $rc"
    cat "$WORK/log"
    [ "$rc" -eq "$code" ] || die "$what exited $rc, expected $code"
    local lines
    lines=$(grep -c '^h5gsort: error: ' "$WORK/log" || true)
    [ "$lines" -eq 1 ] || die "$what printed $lines 'h5gsort: error:' lines, expected 1"
    if grep -q 'HDF5-DIAG' "$WORK/log"; then die "$what printed an HDF5 error stack"; fi
    grep '^h5gsort: error: ' "$WORK/log" | grep -qiE -- "$pattern" ||
      die "$what: the error message does not match /$pattern/"
    if [ "$out_existed" = 1 ]; then
      cmp -s "$OUT" "$WORK/out.copy" || die "$what changed the existing OUTPUT"
    else
      [ ! -e "$OUT" ] || die "$what left OUTPUT behind"
    fi
    [ "$before" = "$after" ] ||
      die "$what changed OUTPUT's directory (a temporary file left?): '$before' -> '$after'"
    if [ -f "$IN" ]; then cmp -s "$IN" "$WORK/in.copy" || die "$what changed the input"; fi
  done
}

passed() {
  echo "PASS: $RUNS h5gsort runs checked"
}
