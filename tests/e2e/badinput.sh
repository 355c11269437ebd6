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

# Issue 55: the system's reason: a missing input and an unreadable one do not look the same.
case_missing_input() {
  expect_failure 2 'cannot open input file: No such file or directory \(.*nope\.h5' "$W/nope.h5" \
    "$OUT" -d /keys
}

# Root reads a file whatever its mode: there the case cannot be made, and is skipped.
case_unreadable_input() {
  if [ "$(id -u)" -eq 0 ]; then echo "SKIP: run as root, which chmod 000 does not stop"; exit 77; fi
  IN=$W/unreadable.h5
  cp "$W/fixtures.h5" "$IN"
  chmod 000 "$IN"
  expect_failure 2 'cannot open input file: Permission denied \(.*unreadable\.h5' "$IN" "$OUT" -d /keys
}

case_not_hdf5() {
  IN=$W/text.h5
  echo "this is not an HDF5 file" >"$IN"
  expect_failure 2 'not an HDF5 file \(.*text\.h5' "$IN" "$OUT" -d /keys
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

# Issue 32: no path the run writes may be an input, however it is spelled (./name, a symbolic
# or hard link): exit 2 before any work, the input's bytes unchanged.
case_report_is_input() {
  cp "$IN" "$W/r.h5"
  IN=$W/r.h5
  ln -s "$W/r.h5" "$W/r_sym.h5"
  ln "$W/r.h5" "$W/r_hard.h5"
  local report
  for report in "$W/r.h5" "$W/./r.h5" "$W/r_sym.h5" "$W/r_hard.h5"; do
    expect_failure 2 'report.*input' "$IN" "$OUT" -d /keys --report "$report"
  done
  (cd "$W" && expect_failure 2 'report.*input' r.h5 "$OUT" -d /keys --report ./r.h5)
  expect_failure 2 'report.*OUTPUT' "$IN" "$OUT" -d /keys --report "$OUTDIR/./out.h5"
}

# Issue 32: usage errors found up front, not after the sort: an empty OUTPUT, one ending in '/',
# a --report that is a directory or empty.
case_bad_paths() {
  expect_failure 2 'output path is empty' "$IN" "" -d /keys
  expect_failure 2 "ends in '/'" "$IN" "$OUTDIR/out.h5/" -d /keys
  expect_failure 2 'report.*directory' "$IN" "$OUT" -d /keys --report "$OUTDIR"
  expect_failure 2 'report path is empty' "$IN" "$OUT" -d /keys --report ""
}

# Issue 56 item 2: '..' in a dataset path is refused before any work. HDF5 reads it as a link
# named '..', not the group above; collapsed as text, an in-place sort with --output-dataset
# /a/../k replaced the unrelated /k, and -d /a/../k sorted /k.
case_dotdot_paths() {
  gen 1 "$OUT" -d /x --count 100 --type i4
  gen 1 "$OUT" -d /k --count 100 --type f8 --append
  IN=$OUT
  expect_failure 2 "'\.\.' in a dataset path" "$IN" "$OUT" --force -d /x --output-dataset /a/../k
  expect_failure 2 "'\.\.' in a dataset path" "$IN" "$OUT" --force -d /a/../k
  expect_failure 2 "'\.\.' in a dataset path" "$IN" "$OUT" --force -d /x --carry /a/../k
}

# Issue 32: inputs must be regular files (a FIFO without a writer hung every rank); OUTPUT that
# is a device or a FIFO is never replaced, even with --force.
case_special_files() {
  mkfifo "$W/fifo.h5"
  IN=$W/fifo.h5
  expect_failure 2 'FIFO.*not a regular file' "$IN" "$OUT" -d /keys
  expect_failure 2 'directory.*not a regular file' "$OUTDIR" "$OUT" -d /keys
  IN=$W/fixtures.h5
  ln -s /dev/null "$OUTDIR/null.h5"
  OUT=$OUTDIR/null.h5
  expect_failure 2 'character device' "$IN" "$OUT" -d /keys --force
  [ -L "$OUT" ] && [ "$(readlink "$OUT")" = /dev/null ] || die "the link to /dev/null was replaced"
  [ -c /dev/null ] || die "/dev/null is no longer a device"
  # a FIFO at OUTPUT: not with expect_failure, whose copy of OUTPUT would block on it
  rm "$OUT"
  mkfifo "$OUT"
  for p in 1 3; do
    local rc=0
    mpirun "$p" "$BIN/h5gsort" "$IN" "$OUT" -d /keys --force >"$W/log" 2>&1 || rc=$?
    cat "$W/log"
    [ "$rc" -eq 2 ] || die "a FIFO at OUTPUT: exit $rc, expected 2"
    [ "$(grep -c '^h5gsort: error: output is a FIFO' "$W/log")" -eq 1 ] || die "no error line"
    [ -p "$OUT" ] || die "the FIFO at OUTPUT was replaced"
    [ "$(ls -A "$OUTDIR")" = null.h5 ] || die "files left beside OUTPUT: $(ls -A "$OUTDIR")"
  done
}

# Issue 32: an input named like the temporary file of a killed run is never removed as stale.
case_input_named_stale() {
  IN=$OUTDIR/.out.h5.h5gsort-$(hostname)-4194303.tmp
  cp "$W/fixtures.h5" "$IN"
  sha256sum "$IN" >"$W/in.sum"
  sort_ok 1 "$IN" "$OUT" -d /keys
  sha256sum -c --quiet "$W/in.sum" || die "the input named like a stale temporary file changed"
  check "$IN" -d /keys "$OUT" -o /keys
}

# Issue 32: --key-field on an integer dataset names its type.
case_key_field_integer() {
  expect_failure 2 'compound dataset, not one of integer type' "$IN" "$OUT" -d /keys --key-field a
}

# Issue 32: OUTPUT base names up to the file-name limit (255 bytes): the temporary file's name
# must fit it too (it failed with exit 1 after the whole sort), and a rerun after a killed run
# still finds and removes what it left.
case_long_output_names() {
  local len base
  for len in 230 245 255; do
    base=$(printf 'o%.0s' $(seq "$len"))
    OUT=$OUTDIR/$base
    sort_ok 2 "$IN" "$OUT" -d /keys
    check "$IN" -d /keys "$OUT" -o /keys
    [ "$(ls -A "$OUTDIR")" = "$base" ] || die "files left beside OUTPUT: $(ls -A "$OUTDIR")"
    rm "$OUT"
  done
  # every rank killed: a rank left alive would be signalled by mpiexec and clean up itself
  H5GSORT_TEST_KILL=write-data mpirun 2 "$BIN/h5gsort" "$IN" "$OUT" -d /keys >/dev/null 2>&1 &&
    die "the killed run exited 0"
  sleep 1
  [ -n "$(ls -A "$OUTDIR")" ] || die "the killed run left nothing: the test tests nothing"
  sort_ok 1 "$IN" "$OUT" -d /keys
  [ "$(ls -A "$OUTDIR")" = "$base" ] || die "the rerun left: $(ls -A "$OUTDIR")"
}

# Issue 32: a --carry path over 4095 bytes was written under a name cut to 4094 (exit 0). Paths
# of any length are written whole, with their groups' attributes.
case_long_carry_path() {
  IN=$W/long.h5
  /usr/bin/python3 - "$IN" <<'PY' || die "could not make the input"
import sys, h5py, numpy as np
group = "/" + "/".join(["g" * 250] * 20)  # 5020 bytes
with h5py.File(sys.argv[1], "w") as f:
    keys = np.random.default_rng(1).permutation(1000).astype("i8")
    f["keys"] = keys
    f[group + "/c"] = keys * 10
    f[group].attrs["note"] = 7
PY
  local group
  group=$(/usr/bin/python3 -c 'print("/" + "/".join(["g" * 250] * 20))')
  for p in 1 3; do
    rm -f "$OUT"
    sort_ok "$p" "$IN" "$OUT" -d /keys --carry "$group/c"
    /usr/bin/python3 - "$OUT" "$group" <<'PY' || die "the carried dataset is not at its whole path"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    keys, carried = f["keys"][...], f[sys.argv[2] + "/c"][...]
    assert (keys == np.arange(1000)).all() and (carried == keys * 10).all()
    assert f[sys.argv[2]].attrs["note"] == 7
    names = []
    f.visit(names.append)
    assert max(len(n) for n in names) == len(sys.argv[2]) + 1, max(len(n) for n in names)
PY
  done
}

# Issue 32: a file cut short before its groups' metadata (its superblock agreeing with the cut,
# so HDF5 opens it) said "no such dataset"; it is truncated or corrupt.
case_truncated_metadata() {
  IN=$W/cut.h5
  /usr/bin/python3 - "$IN" <<'PY' || die "could not make the input"
import struct, sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w", libver="earliest") as f:
    f["keys"] = np.arange(100000)
with open(sys.argv[1], "r+b") as f:
    assert f.read(9)[8] == 0  # superblock version 0: end-of-file address at byte 40
    f.truncate(900)
    f.seek(40)
    f.write(struct.pack("<Q", 900))
PY
  expect_failure 2 'truncated or corrupt.*cut\.h5:/keys' "$IN" "$OUT" -d /keys
}

# Issue 32: a newline or other control character in a path is escaped in the one error line.
case_control_chars() {
  OUT=$OUTDIR/$'new\nline\x1b'/out.h5
  expect_failure 2 'new\\nline\\x1b' "$IN" "$OUT" -d /keys
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

# Issue 32: a compressed output meets the file-size limit (its size is known only as its chunks
# are written): exit 1 naming the limit, at 1 and 3 ranks, through HDF5's collective filtered
# write and the ranks' own encoders; HDF5 1.10 crashed at exit after such a failed write (139).
case_compressed_write_limit() {
  gen 2 "$W/big.h5" -d /keys --count 400000 --type u8
  IN=$W/big.h5
  export OMPI_MCA_btl=self,tcp
  WRAP=(bash -c 'trap "" XFSZ; ulimit -f 1024; exec "$0" "$@"')
  expect_failure 1 'file size limit' "$IN" "$OUT" -d /keys --compress gzip=1
}

# Issue 32: a path the run writes is a file the input's data lie in, through an external link
# or a virtual dataset's source: refused before any work, the file unchanged.
case_written_is_source() {
  local D=$W/src
  mkdir -p "$D"
  /usr/bin/python3 - "$D" <<'PY' || die "could not make the input"
import sys, h5py, numpy as np
w = sys.argv[1]
with h5py.File(f"{w}/target.h5", "w") as f: f["k"] = np.arange(100, 0, -1, dtype="u4")
with h5py.File(f"{w}/main.h5", "w") as f:
    f["k"] = h5py.ExternalLink("target.h5", "/k"); f["own"] = np.arange(100, dtype="u4")
    lay = h5py.VirtualLayout(shape=(100,), dtype="u4")
    lay[:] = h5py.VirtualSource("target.h5", "k", shape=(100,))
    f.create_virtual_dataset("v", lay)
PY
  IN=$D/main.h5
  sha256sum "$D/target.h5" >"$W/target.sum"
  OUT=$D/target.h5
  expect_failure 2 "holds the input's data \\(the target of an external link\\)" "$IN" "$OUT" -d /k --force
  expect_failure 2 "holds the input's data \\(a source of a virtual dataset\\)" "$IN" "$OUT" -d /v --force
  OUT=$D/out.h5
  expect_failure 2 "target.h5 holds the input's data" "$IN" "$OUT" -d /own --carry /k \
    --report "$D/target.h5"
  sha256sum -c --quiet "$W/target.sum" || die "the external link's target changed"
}

# Issue 55: the disk fills while OUTPUT is written (H5G_FULL_DISK_SHIM, faults/full_disk.c:
# writes to the temporary file fail with ENOSPC: its reservation, or with no reservation (NFS)
# the writes themselves, of the keys, of compressed chunks through HDF5, of the copy of the
# input): exit 1 with one line naming OUTPUT, not the hidden temporary file, and the system's
# reason; the --report of the failure has the start time, the phase and that line.
case_full_disk() {
  local shim=${H5G_FULL_DISK_SHIM:-sanitize} writes extra
  if [ "$shim" = sanitize ]; then echo "SKIP: no preload shim under the sanitizers"; exit 77; fi
  gen 2 "$W/big.h5" -d /keys --count 200000 --type u8
  IN=$W/big.h5
  for writes in "" 1; do
    for extra in "" --whole-file "--compress gzip=1"; do
      rm -f "$W/shim.log" "$W/report.json"
      # the shim goes before what the launcher preloads itself
      WRAP=(env "H5G_SHIM_FULL_WRITES=$writes" H5G_SHIM_FULL_AFTER=100000 "H5G_SHIM_LOG=$W/shim.log"
            bash -c 'export LD_PRELOAD="$0${LD_PRELOAD:+:$LD_PRELOAD}"; exec "$@"' "$shim")
      # shellcheck disable=SC2086 # extra: options to split
      expect_failure 1 "No space left on device.* \\($OUT(:/keys)?\\)\$" "$IN" "$OUT" -d /keys $extra \
        --report "$W/report.json"
      [ -s "$W/shim.log" ] || die "the shim refused nothing: the case tests nothing"
      if grep '^h5gsort: error:' "$WORK/log" | grep -q 'h5gsort-'; then
        die "the message names the temporary file"
      fi
      /usr/bin/python3 - "$W/report.json" "$(sed -n 's/^h5gsort: error: //p' "$WORK/log")" <<'PY' ||
import json, re, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "failed" and r["exit_status"] == 1 and r["phase"] == "write", r
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["start_time"]), r["start_time"]
assert r["error"] == sys.argv[2], (r["error"], sys.argv[2])
PY
        die "the report of the full disk is wrong"
    done
  done
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
  # it ends with three examples (issue 55): what each does, then its command, h5gsort run by a
  # launcher; the last line is the third command
  local command='^    (mpiexec|srun) .*h5gsort '
  sed -n '/^Examples:$/,$p' "$W/log_1" >"$W/examples"
  [ "$(grep -cE "$command" "$W/examples")" -eq 3 ] ||
    die "--help does not end with three examples: $(cat "$W/examples")"
  tail -n 1 "$W/log_1" | grep -qE "$command" || die "--help's last line is no example's command"
}
# --version: "h5gsort X.Y.Z" first (scripts parse it), then the build as CMake configured it and
# the MPI library and HDF5 the process runs (tests/e2e.cmake passes what CMake found)
case_version() {
  expect_info --version '^h5gsort [0-9]+\.[0-9]+\.[0-9]+$'
  local v=$W/log_1 launcher=${MPIEXEC%% *}
  head -n 1 "$v" | grep -qxE 'h5gsort [0-9]+\.[0-9]+\.[0-9]+' || die "first line: $(head -n 1 "$v")"
  if [ "$H5G_HAVE_CUDA" = 1 ]; then
    grep -qxF "backends: cpu, cuda (CUDA runtime $H5G_CUDA_VERSION, architectures $H5G_CUDA_ARCHITECTURES)" "$v"
  else
    grep -qxF "backends: cpu (built without CUDA)" "$v"
  fi || die "--version does not name the backends built (CUDA $H5G_HAVE_CUDA $H5G_CUDA_VERSION $H5G_CUDA_ARCHITECTURES)"
  grep -qxF "exchange: mpi$([ "$H5G_HAVE_NCCL" = ON ] && echo ', nccl')" "$v" ||
    die "--version does not name the exchanges built (NCCL: $H5G_HAVE_NCCL)"
  grep -qxF "HDF5: $H5G_HDF5_VERSION, parallel (built with the headers of $H5G_HDF5_VERSION)" "$v" ||
    die "--version does not name HDF5 $H5G_HDF5_VERSION (the headers CMake found), parallel"
  # the MPI library, by the name of its flavour and the version its launcher reports
  local name mpi_version
  name=$(case $H5G_MPI_FLAVOR in openmpi) echo "Open MPI" ;; mpich) echo "MPICH" ;; *) echo "" ;; esac)
  mpi_version=$("$launcher" --version 2>&1 | grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -n 1)
  [ -n "$mpi_version" ] || die "$launcher --version names no version"
  grep -E '^MPI: ' "$v" | grep -F "$name" | grep -F "$mpi_version" | grep -qE '\(MPI [0-9]\.[0-9]\)$' ||
    die "--version does not name $name $mpi_version (what $launcher --version says) and the MPI standard"
}

"case_$CASE"
passed
