#!/usr/bin/env bash
# Bad-input tests: h5gsort must exit with the documented code, print exactly one
# "h5gsort: error: ..." line (rank 0 only, no HDF5 error stack), leave OUTPUT absent (or
# byte-identical when it existed), leave no temporary file beside it and the input unchanged.
# Each case runs on 1 and on 3 ranks.
#   badinput.sh BIN_DIR "MPIEXEC ... -n" CASE
BIN=$1
MPIEXEC=$2
CASE=$3
source "$(dirname "$0")/lib.sh"
W=$WORK
OUTDIR=$W/outdir
mkdir -p "$OUTDIR"
"$BIN/h5gsort_fixtures" "$W/fixtures.h5" || die "h5gsort_fixtures failed"
IN=$W/fixtures.h5
OUT=$OUTDIR/out.h5
WRAP=() # a command prefix for each rank (e.g. to set a resource limit)

case_missing_input() { expect_failure 2 'nope\.h5' "$W/nope.h5" "$OUT" -d /keys; }

case_not_hdf5() {
  IN=$W/text.h5
  echo "this is not an HDF5 file" >"$IN"
  expect_failure 2 'text\.h5' "$IN" "$OUT" -d /keys
}

case_truncated() {
  gen 2 "$W/full.h5" -d /keys --count 100000 --type u8
  IN=$W/truncated.h5
  cp "$W/full.h5" "$IN"
  truncate -s $(($(stat -c %s "$W/full.h5") / 2)) "$IN"
  expect_failure 2 'truncated\.h5' "$IN" "$OUT" -d /keys
}

case_missing_dataset() { expect_failure 2 'nosuch' "$IN" "$OUT" -d /nosuch/keys; }
case_dataset_is_group() { expect_failure 2 'group' "$IN" "$OUT" -d /group; }
case_twod() {
  expect_failure 2 '2-d|2d|two.dim|10 ?x ?3|10, ?3|rank 2|2 dim' "$IN" "$OUT" -d /twod
}
case_scalar() { expect_failure 2 'scalar|0-d|rank 0|0 dim|\(\)' "$IN" "$OUT" -d /scalar; }
case_string() { expect_failure 2 'string' "$IN" "$OUT" -d /string; }
case_vlstring() { expect_failure 2 'string' "$IN" "$OUT" -d /vlstring; }
case_compound() { expect_failure 2 'compound' "$IN" "$OUT" -d /compound; }
case_enum() { expect_failure 2 'enum' "$IN" "$OUT" -d /enum; }
case_opaque() { expect_failure 2 'opaque' "$IN" "$OUT" -d /opaque; }
case_vlen() { expect_failure 2 'variable.length|vlen' "$IN" "$OUT" -d /vlen; }

case_out_exists() {
  echo "precious" >"$OUT"
  expect_failure 2 'exist' "$IN" "$OUT" -d /keys
}

case_inplace_without_force() {
  cp "$IN" "$OUT"
  IN=$OUT
  expect_failure 2 'exist' "$IN" "$OUT" -d /keys
}

case_out_dir_missing() {
  OUT=$OUTDIR/nodir/out.h5
  expect_failure 2 'out\.h5|nodir' "$IN" "$OUT" -d /keys
}

# The --report file is checked before any work: no OUT appears when it cannot be written.
case_report_dir_missing() {
  expect_failure 2 'report|nodir' "$IN" "$OUT" -d /keys --report "$OUTDIR/nodir/report.json"
}

# Tests run as root, so permissions cannot make a directory unwritable: the "directory" of
# OUTPUT is a regular file instead.
case_out_dir_is_file() {
  echo "a file, not a directory" >"$OUTDIR/plainfile"
  OUT=$OUTDIR/plainfile/out.h5
  expect_failure 2 'out\.h5|plainfile' "$IN" "$OUT" -d /keys
}

case_unknown_option() { expect_failure 2 'frobnicate' --frobnicate "$IN" "$OUT" -d /keys; }
case_missing_dataset_option() { expect_failure 2 'dataset|-d' "$IN" "$OUT"; }

case_bad_option_value() {
  expect_failure 2 'quantum|backend' --backend quantum "$IN" "$OUT" -d /keys
  expect_failure 2 'lots|device-memory' --device-memory lots "$IN" "$OUT" -d /keys
}

# Writing OUTPUT fails under a small file-size limit (SIGXFSZ ignored, so write() gets EFBIG).
# The limit is set inside each rank, and MPI's shared-memory transport is kept out of it.
case_write_failure() {
  gen 2 "$W/big.h5" -d /keys --count 200000 --type u8
  IN=$W/big.h5
  export OMPI_MCA_btl=self,tcp
  WRAP=(bash -c 'trap "" XFSZ; ulimit -f 256; exec "$0" "$@"')
  expect_failure 1 'out\.h5|writ|size|space' "$IN" "$OUT" -d /keys
}

# --help and --version: exit 0, printed once (by rank 0): 3 ranks print what 1 rank prints.
expect_info() {
  local option=$1 pattern=$2
  for p in 1 3; do
    local rc=0
    RUNS=$((RUNS + 1))
    mpirun "$p" "$BIN/h5gsort" "$option" >"$W/log_$p" 2>&1 || rc=$?
    cat "$W/log_$p"
    [ "$rc" -eq 0 ] || die "h5gsort $option on $p ranks exited $rc"
  done
  grep -qiE -- "$pattern" "$W/log_1" || die "h5gsort $option: nothing matches /$pattern/"
  cmp -s "$W/log_1" "$W/log_3" || die "h5gsort $option prints differently on 3 ranks than on 1"
}
case_help() {
  expect_info --help 'usage'
  grep -q -- '--dataset' "$W/log_1" || die "--help does not describe --dataset"
}
case_version() { expect_info --version 'h5gsort.*[0-9]+\.[0-9]+'; }

"case_$CASE"
passed
