#!/usr/bin/env bash
# End-to-end tests: generate inputs with h5gsort-gen, sort them with h5gsort on 1-4 ranks, and
# check every output with the independent checker h5gsort_check.
#   e2e.sh BIN_DIR "MPIEXEC ... -n" CASE [ARG]
BIN=$1
MPIEXEC=$2
CASE=$3
ARG=${4:-}
source "$(dirname "$0")/lib.sh"
W=$WORK

# Every type, little-endian, on 1-4 ranks: random bits, special values, all equal.
case_type() {
  local type=$1
  for dist in uniform special equal; do
    gen 2 "$W/in_$dist.h5" -d /keys --count 1009 --type "$type" --dist "$dist" --seed 11
    for p in 1 2 3 4; do
      sort_check "$p" "$W/in_$dist.h5" /keys "$W/out_${dist}_$p.h5" /keys
    done
  done
}

case_bigendian() {
  for type in i4 f8 u2; do
    for dist in uniform special; do
      rm -f "$W"/out*.h5
      gen 3 "$W/in.h5" -d /keys --count 2001 --type "$type" --dist "$dist" --order be --force
      for p in 1 3; do sort_check "$p" "$W/in.h5" /keys "$W/out_$p.h5" /keys; done
      sort_check 2 "$W/in.h5" /keys "$W/out_desc.h5" /keys --descending
    done
  done
  # gzip-filtered big-endian, written by the generator and by h5gsort (rows in file order)
  rm -f "$W"/out*.h5
  gen 3 "$W/in.h5" -d /keys --count 20011 --type i8 --dist uniform --order be --layout gzip --chunk 999 --force
  for p in 1 2 4; do sort_check "$p" "$W/in.h5" /keys "$W/out_$p.h5" /keys --verify; done
  same_chunked_output "$W/out_1.h5" "$W/out_4.h5"
}

case_dists() {
  for type in u4 f8; do
    for dist in sorted reverse zipf few normal; do
      rm -f "$W"/out*.h5
      gen 2 "$W/in.h5" -d /keys --count 5003 --type "$type" --dist "$dist" --force
      for p in 2 4; do sort_check "$p" "$W/in.h5" /keys "$W/out_$p.h5" /keys; done
    done
  done
}

# N = 0, 1, 2, 3 (N < P on 4 ranks), 1000 and 100003.
case_sizes() {
  for type in i8 f4; do
    for n in 0 1 2 3; do
      rm -f "$W"/out*.h5
      gen 1 "$W/in.h5" -d /keys --count "$n" --type "$type" --dist special --force
      for p in 1 3 4; do sort_check "$p" "$W/in.h5" /keys "$W/out_$p.h5" /keys; done
    done
    gen 2 "$W/in.h5" -d /keys --count 1000 --type "$type" --dist special --force
    sort_check 3 "$W/in.h5" /keys "$W/out.h5" /keys
    rm -f "$W"/out*.h5
    gen 2 "$W/in.h5" -d /keys --count 100003 --type "$type" --dist uniform --force
    for p in 2 4; do sort_check "$p" "$W/in.h5" /keys "$W/out_$p.h5" /keys; done
  done
}

# Chunked and compressed (shuffle + deflate) inputs, chunks that do not divide the slices.
case_layouts() {
  for layout in chunked gzip; do
    gen 3 "$W/a.h5" -d /keys --count 100003 --type f8 --dist uniform --layout "$layout" --chunk 1000
    gen 2 "$W/b.h5" -d /keys --count 10007 --type u2 --dist special --layout "$layout" --chunk 7
    for p in 1 3; do
      sort_check "$p" "$W/a.h5" /keys "$W/a_out_$p.h5" /keys
      sort_check "$p" "$W/b.h5" /keys "$W/b_out_$p.h5" /keys
    done
    rm -f "$W"/*.h5
  done
}

# Direct reads and mapped writes (the default on one node), direct pwrite (H5GSORT_IO=pwrite) and
# collective MPI-IO (H5GSORT_IO=mpio) read and write the same bytes: outputs byte-identical, keys,
# index and carried N-D rows, 1 and 3 ranks (whose slices share pages of the file), with many
# small pieces split among 1 or 3 I/O threads.
case_io_paths() {
  gen 2 "$W/in.h5" -d /keys --count 100003 --type f8 --dist special --seed 5
  gen 1 "$W/in.h5" -d /nd/pay --count 100003 --type u2 --dist uniform --row-shape 3,2 --append
  for p in 1 3; do
    sort_check "$p" "$W/in.h5" /keys "$W/direct_$p.h5" /keys --carry /nd/pay --index-out /idx
    H5GSORT_IO_PIECE_BYTES=40000 sort_check "$p" "$W/in.h5" /keys "$W/pieces_$p.h5" /keys \
      --carry /nd/pay --index-out /idx --io-threads 3
    H5GSORT_IO=mpio sort_check "$p" "$W/in.h5" /keys "$W/mpio_$p.h5" /keys --carry /nd/pay \
      --index-out /idx
    H5GSORT_IO=pwrite sort_check "$p" "$W/in.h5" /keys "$W/pwrite_$p.h5" /keys --carry /nd/pay \
      --index-out /idx --io-threads 3
    cmp "$W/direct_$p.h5" "$W/mpio_$p.h5" || die "direct and MPI-IO outputs differ ($p ranks)"
    cmp "$W/direct_$p.h5" "$W/pwrite_$p.h5" || die "mapped and pwrite outputs differ ($p ranks)"
    cmp "$W/direct_$p.h5" "$W/pieces_$p.h5" || die "direct outputs differ with small pieces ($p ranks)"
  done
  cmp "$W/direct_1.h5" "$W/direct_3.h5" || die "1- and 3-rank outputs differ"
}

# No HDF5 object left open (H5GSORT_TEST_LEAKS) by runs that succeed, with carried data and the
# index, on 1 and 3 ranks, or that fail: the host-memory check refuses the job, a file size
# limit stops the write (the output's space is checked), a rank killed during the read (SIGKILL:
# nothing cleans up); a failed run leaves no OUTPUT, no temporary file and no process behind,
# and a rerun succeeds.
case_failed_runs() {
  gen 2 "$W/in.h5" -d /keys --count 300007 --type u8 --dist uniform --seed 5
  gen 1 "$W/in.h5" -d /pay --count 300007 --type f4 --dist uniform --append
  export H5GSORT_TEST_LEAKS=1
  for p in 1 3; do
    sort_check "$p" "$W/in.h5" /keys "$W/ok_$p.h5" /keys --carry /pay --index-out /idx
  done
  cmp "$(dataset_bytes "$W/ok_1.h5" /pay)" "$(dataset_bytes "$W/ok_3.h5" /pay)" ||
    die "the carried data differ between 1 and 3 ranks"
  local rc=0
  mpirun 3 "$BIN/h5gsort" "$W/in.h5" "$W/refused.h5" -d /keys --host-memory 1M >"$W/log" 2>&1 ||
    rc=$?
  [ "$rc" -eq 1 ] || die "host memory refused: exit $rc, not 1"
  [ "$(grep -c '^h5gsort: error:' "$W/log")" -eq 1 ] || die "not one error line: $(cat "$W/log")"
  rc=0
  mpirun 2 bash -c \
    "ulimit -f 1000; exec '$BIN/h5gsort' '$W/in.h5' '$W/limited.h5' -d /keys" >"$W/log" 2>&1 || rc=$?
  [ "$rc" -eq 1 ] || die "file size limit: exit $rc, not 1"
  [ "$(grep -c '^h5gsort: error:' "$W/log")" -eq 1 ] || die "not one error line: $(cat "$W/log")"
  rc=0
  H5GSORT_TEST_KILL=read:1 mpirun 3 "$BIN/h5gsort" "$W/in.h5" "$W/killed.h5" -d /keys \
    >"$W/log" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] || die "a rank killed during the read: exit 0"
  for _ in $(seq 100); do pgrep -f "$BIN/h5gsort .*$W" >/dev/null || break; sleep 0.1; done
  ! pgrep -f "$BIN/h5gsort .*$W" >/dev/null || die "processes left 10 s after the run ended"
  for f in refused limited killed; do [ ! -e "$W/$f.h5" ] || die "a failed run left $f.h5"; done
  sort_check 3 "$W/in.h5" /keys "$W/killed.h5" /keys
  ! ls -a "$W" | grep -q '\.h5gsort-.*\.tmp' || die "a temporary file is left: $(ls -a "$W")"
}

# The multi-node policy forced on one node (H5GSORT_IO_POLICY=multinode: direct reads, every
# rank's threads writing its range with pwrite in 1 MiB-aligned pieces, then fdatasync) writes
# the bytes the default (mapped writes) writes, at 1-4 ranks: keys and index (1.5M u4: each rank
# writes several aligned units and partial ones at its ends), and big-endian keys converted piece
# by piece, in pieces smaller than a unit (their last partial unit held back to the next piece).
case_io_multinode() {
  gen 2 "$W/in.h5" -d /keys --count 1500007 --type u4 --dist uniform --seed 3
  gen 1 "$W/in.h5" -d /be --count 300007 --type f8 --dist special --order be --append
  for p in 1 2 3 4; do
    sort_check "$p" "$W/in.h5" /keys "$W/one_$p.h5" /keys --index-out /idx
    H5GSORT_IO_POLICY=multinode sort_check "$p" "$W/in.h5" /keys "$W/multi_$p.h5" /keys \
      --index-out /idx --io-threads 2
    cmp "$W/one_$p.h5" "$W/multi_$p.h5" || die "multinode and one-node outputs differ ($p ranks)"
    sort_check "$p" "$W/in.h5" /be "$W/be_one_$p.h5" /be
    H5GSORT_IO_POLICY=multinode H5GSORT_IO_PIECE_BYTES=300000 sort_check "$p" "$W/in.h5" /be \
      "$W/be_multi_$p.h5" /be --io-threads 3
    cmp "$W/be_one_$p.h5" "$W/be_multi_$p.h5" ||
      die "multinode and one-node big-endian outputs differ ($p ranks)"
  done
}

# dataset_bytes FILE DATASET: the dataset's values as raw little-endian bytes (h5dump -b).
dataset_bytes() {
  local bin
  bin=$W/$(basename "$1").$(tr / _ <<<"$2").bin
  h5dump -d "$2" -b LE -o "$bin" "$1" >/dev/null || die "h5dump -b of $1:$2 failed"
  echo "$bin"
}

# A gzip-chunked input under the multi-node policy (threaded chunk reads on every rank): the same
# values as the default run, whether the output keeps the chunks and filters or is contiguous
# (written with aligned pwrite); chunked outputs are not compared byte for byte
# (same_chunked_output says why), so their dataset bytes are.
case_io_multinode_chunked() {
  gen 2 "$W/gz.h5" -d /keys --count 1000003 --type i4 --dist uniform --layout gzip --chunk 10007
  for p in 1 2 3 4; do
    sort_check "$p" "$W/gz.h5" /keys "$W/one_$p.h5" /keys
    H5GSORT_IO_POLICY=multinode sort_check "$p" "$W/gz.h5" /keys "$W/multi_$p.h5" /keys
    H5GSORT_IO_POLICY=multinode sort_check "$p" "$W/gz.h5" /keys "$W/flat_$p.h5" /keys \
      --layout contiguous
    cmp "$(dataset_bytes "$W/one_$p.h5" /keys)" "$(dataset_bytes "$W/multi_$p.h5" /keys)" ||
      die "multinode and one-node values differ ($p ranks, gzip output)"
    cmp "$(dataset_bytes "$W/one_$p.h5" /keys)" "$(dataset_bytes "$W/flat_$p.h5" /keys)" ||
      die "multinode and one-node values differ ($p ranks, contiguous output)"
  done
}

# report_policy JSON POLICY: --report names the I/O policy that ran.
report_policy() {
  grep -q "\"io_policy\": \"$2\"" "$1" || { cat "$1" >&2; die "$1 does not give io_policy $2"; }
}

# The I/O policy that ran, in --report, -v and --plan (text and JSON): by topology on one node,
# forced, mpio; auto is the default; any other H5GSORT_IO_POLICY is a usage error.
case_io_policy() {
  gen 1 "$W/in.h5" -d /keys --count 10007 --type u8 --dist uniform
  sort_ok 2 --report "$W/one.json" "$W/in.h5" "$W/out1.h5" -d /keys
  report_policy "$W/one.json" one-node
  H5GSORT_IO_POLICY=auto sort_ok 2 --report "$W/auto.json" "$W/in.h5" "$W/out2.h5" -d /keys
  report_policy "$W/auto.json" one-node
  H5GSORT_IO_POLICY=multinode sort_ok 2 -v --report "$W/forced.json" "$W/in.h5" "$W/out3.h5" \
    -d /keys
  report_policy "$W/forced.json" multinode-forced
  grep -q '^  I/O policy: multinode-forced$' "$W/last.log" || die "-v does not give the policy"
  H5GSORT_IO=mpio H5GSORT_IO_POLICY=multinode sort_ok 2 --report "$W/mpio.json" "$W/in.h5" \
    "$W/out4.h5" -d /keys
  report_policy "$W/mpio.json" mpio
  H5GSORT_IO_POLICY=multinode sort_ok 2 --plan --report "$W/plan.json" "$W/in.h5" "$W/p.h5" \
    -d /keys
  grep -q '^exchange: .*; I/O: .*aligned pwrite.*H5GSORT_IO_POLICY=multinode' "$W/last.log" ||
    { cat "$W/last.log" >&2; die "--plan does not give the forced policy"; }
  report_policy "$W/plan.json" multinode-forced
  for f in 1 2 3 4; do check "$W/in.h5" -d /keys "$W/out$f.h5" -o /keys; done
  mkdir "$W/bad"
  IN=$W/in.h5 OUT=$W/bad/out.h5 WRAP=()
  H5GSORT_IO_POLICY=multi-node expect_failure 2 'H5GSORT_IO_POLICY=multi-node' "$IN" "$OUT" -d /keys
}

# The MPI library is left as launched (mpi/launch.h): --report and -v name it as MPI does;
# under Open MPI h5gsort names no transport, so Open MPI's own pml selection shows in its log
# (it probes cm or ucx), and a transport the user names is the one taken; the outputs agree.
case_mpi_settings() {
  gen 1 "$W/in.h5" -d /keys --count 10007 --type i4 --dist uniform
  OMPI_MCA_pml_base_verbose=10 sort_ok 2 -v --report "$W/own.json" "$W/in.h5" "$W/out1.h5" \
    -d /keys
  local library
  library=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["mpi_library"])' \
    "$W/own.json")
  [ -n "$library" ] || { cat "$W/own.json" >&2; die "--report names no MPI library"; }
  grep -qF "  MPI: $library" "$W/last.log" || die "-v does not name the MPI library ($library)"
  if [[ $library == "Open MPI"* ]]; then
    grep -Eq 'component (cm|ucx)' "$W/last.log" ||
      { cat "$W/last.log" >&2; die "Open MPI's own pml selection did not run"; }
    OMPI_MCA_pml_base_verbose=10 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader sort_ok 3 \
      "$W/in.h5" "$W/out2.h5" -d /keys
    grep -q 'component ob1 selected' "$W/last.log" ||
      { cat "$W/last.log" >&2; die "the pml the user named was not taken"; }
    if grep -Eq 'component (cm|ucx)' "$W/last.log"; then
      cat "$W/last.log" >&2
      die "Open MPI probed other pml components than the one named"
    fi
  else
    sort_ok 3 "$W/in.h5" "$W/out2.h5" -d /keys
  fi
  for f in 1 2; do check "$W/in.h5" -d /keys "$W/out$f.h5" -o /keys; done
  cmp "$(dataset_bytes "$W/out1.h5" /keys)" "$(dataset_bytes "$W/out2.h5" /keys)" ||
    die "the two launches gave different outputs"
}

# H5GSORT_TIMELINE=FILE (bench/e2e.sh's whole-process breakdown): rank 0 alone appends its marks,
# the fixed ones once each and in order, phases between MPI_Init and the report, times never going
# back; nothing without the variable; a file that cannot be written, or that names INPUT, gets a
# warning and the run succeeds, its output checked and its input unchanged.
case_timeline() {
  gen 1 "$W/in.h5" -d /keys --count 10007 --type f4 --dist uniform
  H5GSORT_TIMELINE=$W/tl.txt sort_ok 3 "$W/in.h5" "$W/out1.h5" -d /keys
  H5GSORT_TIMELINE=$W/tl.txt sort_ok 1 --verify "$W/in.h5" "$W/out2.h5" -d /keys
  sort_ok 2 "$W/in.h5" "$W/out3.h5" -d /keys
  python3 - "$W/tl.txt" <<'EOF' || die "H5GSORT_TIMELINE wrote unexpected marks"
import sys
fixed = ["main", "mpi_init", "mpi_init_done", "gpu_context_ready", "report_written",
         "commit_done", "pipeline_done", "mpi_finalize", "mpi_finalize_done", "exit"]
lines = [line.split() for line in open(sys.argv[1])]
starts = [i for i, (name, _) in enumerate(lines) if name == "main"] + [len(lines)]
assert len(starts) == 3, "expected the marks of 2 runs: %s" % lines
for run in (lines[a:b] for a, b in zip(starts, starts[1:])):
    names, times = [n for n, _ in run], [float(t) for _, t in run]
    assert times == sorted(times), run
    assert [n for n in names if not n.startswith("phase:")] == fixed, names
    phases = [n[6:] for n in names if n.startswith("phase:")]
    first, last = names.index("mpi_init_done"), names.index("report_written")
    assert all(first < i < last for i, n in enumerate(names) if n.startswith("phase:")), names
    assert phases[0] == "validate" and {"read", "local_sort", "write"} <= set(phases), phases
    assert all(a != b for a, b in zip(phases, phases[1:])), phases
EOF
  cp "$W/in.h5" "$W/in.copy"
  H5GSORT_TIMELINE=$W/missing/tl.txt sort_ok 2 "$W/in.h5" "$W/out4.h5" -d /keys
  grep -q '^h5gsort: warning: cannot write the timeline: ' "$W/last.log" ||
    { cat "$W/last.log" >&2; die "an unwritable H5GSORT_TIMELINE gave no warning"; }
  H5GSORT_TIMELINE=$W/in.h5 sort_ok 2 -q "$W/in.h5" "$W/out5.h5" -d /keys
  grep -q '^h5gsort: warning: H5GSORT_TIMELINE names INPUT' "$W/last.log" ||
    { cat "$W/last.log" >&2; die "H5GSORT_TIMELINE naming INPUT gave no warning"; }
  cmp -s "$W/in.h5" "$W/in.copy" || die "H5GSORT_TIMELINE changed the input"
  for f in 1 2 3 4 5; do check "$W/in.h5" -d /keys "$W/out$f.h5" -o /keys; done
}

# Nested groups in and out: /a/b/keys -> /out/sorted/keys (groups created), and the default.
case_groups() {
  gen 2 "$W/in.h5" -d /a/b/keys --count 1009 --type i4 --dist uniform
  for p in 2 3; do sort_check "$p" "$W/in.h5" /a/b/keys "$W/out_$p.h5" /out/sorted/keys; done
  sort_check 1 "$W/in.h5" /a/b/keys "$W/out_default.h5" /a/b/keys
}

case_descending() {
  for spec in u1:special i2:special f4:special f8:special i8:equal u8:few f8:zipf; do
    rm -f "$W"/out*.h5
    gen 2 "$W/in.h5" -d /keys --count 3001 --type "${spec%%:*}" --dist "${spec#*:}" --force
    for p in 1 3; do sort_check "$p" "$W/in.h5" /keys "$W/out_$p.h5" /keys --descending; done
  done
}

# --force replaces an existing OUTPUT: nothing of the old file survives.
case_force() {
  gen 1 "$W/in.h5" -d /keys --count 1009 --type f4 --dist special
  gen 1 "$W/out.h5" -d /keys --count 17 --type f4 --dist equal
  gen 1 "$W/out.h5" -d /stale --count 5 --type u1 --append
  sort_check 3 "$W/in.h5" /keys "$W/out.h5" /keys --force
  if h5dump -n "$W/out.h5" | grep -q stale; then die "--force kept a dataset of the old OUTPUT"; fi
  sort_check 2 "$W/in.h5" /keys "$W/absent.h5" /keys --force
}

# OUTPUT == INPUT with --force: the dataset is sorted, the rest of the file stays.
case_inplace() {
  gen 2 "$W/f.h5" -d /keys --count 5003 --type f8 --dist special --attrs
  gen 2 "$W/f.h5" -d /other --count 1009 --type i4 --dist uniform --append
  gen 2 "$W/f.h5" -d /grp/third --count 33 --type u1 --dist few --append --attrs
  cp "$W/f.h5" "$W/pristine.h5"
  for p in 3 1; do
    sort_ok "$p" --force "$W/f.h5" "$W/f.h5" -d /keys
    check "$W/pristine.h5" -d /keys "$W/f.h5" -o /keys
    check --identical "$W/pristine.h5" -d /other "$W/f.h5" -o /other
    check --identical "$W/pristine.h5" -d /grp/third "$W/f.h5" -o /grp/third
  done
}

# Issue 55: --whole-file and in place keep every dataset of the input, so one of the keys'
# length that is not carried stays in the input's order beside the sorted keys: a warning names
# each (a netCDF-4 coordinate variable as such; netCDF's dimension without a variable and the
# datasets of other lengths not), at most 8 lines and a count (-v: all), none when every one is
# carried, none with -q. The outputs are checked against numpy as before.
case_unmoved_warning() {
  /usr/bin/python3 - "$W" <<'PY' || die "could not make the inputs"
import sys, h5py, netCDF4, numpy as np
w, rng = sys.argv[1], np.random.default_rng(55)
with netCDF4.Dataset(f"{w}/obs.nc", "w") as d:
    d.createDimension("time", 1000)
    d.createDimension("level", 7)
    d.createDimension("obs", 1000)  # a dimension of the keys' length without a variable
    d.createVariable("time", "f8", ("time",))[:] = rng.permutation(1000)
    d.createVariable("temperature", "f4", ("time",))[:] = rng.normal(size=1000)
    d.createVariable("station", "i4", ("time",))[:] = rng.integers(0, 50, 1000)
    d.createVariable("height", "f4", ("level",))[:] = np.arange(7)
with h5py.File(f"{w}/p.h5", "w") as f:
    f["particles/id"] = rng.permutation(2000).astype("i8")
    f["particles/x"] = rng.normal(size=2000)
    f["particles/halo"] = rng.integers(0, 9, 2000)
    f["particles/meta"] = np.arange(10)
with h5py.File(f"{w}/many.h5", "w") as f:
    f["k"] = rng.permutation(300).astype("u4")
    for i in range(10):
        f[f"d{i}"] = np.arange(300)
PY
  local p warnings
  for p in 1 3; do
    rm -f "$W/out.nc"
    sort_ok "$p" --whole-file "$W/obs.nc" "$W/out.nc" -d /temperature --carry /station
    warnings=$(grep '^h5gsort: warning:' "$W/last.log" || true)
    grep -q 'the coordinate /time of /temperature .*stay in the input.s order.*--carry /time' <<<"$warnings" ||
      die "--whole-file: no warning about the coordinate /time: $warnings"
    [ "$(echo "$warnings" | wc -l)" -eq 1 ] || die "--whole-file: other warnings: $warnings"
    /usr/bin/python3 - "$W/obs.nc" "$W/out.nc" <<'PY' || die "--whole-file: the output is wrong"
import sys, netCDF4, numpy as np
with netCDF4.Dataset(sys.argv[1]) as i, netCDF4.Dataset(sys.argv[2]) as o:
    order = np.argsort(i["temperature"][:], kind="stable")
    assert (o["temperature"][:] == i["temperature"][:][order]).all()
    assert (o["station"][:] == i["station"][:][order]).all()
    assert (o["time"][:] == i["time"][:]).all()  # as the warning says: the input's order
PY
    cp "$W/p.h5" "$W/f.h5"
    sort_ok "$p" --force "$W/f.h5" "$W/f.h5" -d /particles/id --carry /particles/x
    warnings=$(grep '^h5gsort: warning:' "$W/last.log" || true)
    grep -q '^h5gsort: warning: /particles/halo .*not carried.*--carry /particles/halo' <<<"$warnings" ||
      die "in place: no warning about /particles/halo: $warnings"
    [ "$(echo "$warnings" | wc -l)" -eq 1 ] || die "in place: other warnings: $warnings"
    /usr/bin/python3 - "$W/p.h5" "$W/f.h5" <<'PY' || die "in place: the output is wrong"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as i, h5py.File(sys.argv[2]) as o:
    order = np.argsort(i["particles/id"][...], kind="stable")
    assert (o["particles/id"][...] == i["particles/id"][...][order]).all()
    assert (o["particles/x"][...] == i["particles/x"][...][order]).all()
    for name in ("particles/halo", "particles/meta"):
        assert (o[name][...] == i[name][...]).all(), name
PY
    cp "$W/p.h5" "$W/f.h5"
    sort_ok "$p" --force "$W/f.h5" "$W/f.h5" -d /particles/id --carry /particles/x,/particles/halo
    ! grep -q 'warning' "$W/last.log" || die "every same-length dataset carried: $(cat "$W/last.log")"
    cp "$W/p.h5" "$W/f.h5"
    sort_ok "$p" --force -q "$W/f.h5" "$W/f.h5" -d /particles/id
    ! grep -q 'warning' "$W/last.log" || die "-q: $(cat "$W/last.log")"
    rm -f "$W/many_out.h5"
    sort_ok "$p" --whole-file "$W/many.h5" "$W/many_out.h5" -d /k
    [ "$(grep -c '^h5gsort: warning: /d[0-9] has as many rows' "$W/last.log")" -eq 8 ] &&
      grep -q '^h5gsort: warning: and 2 more datasets' "$W/last.log" ||
      die "10 datasets left: not 8 lines and a count: $(cat "$W/last.log")"
    rm -f "$W/many_out.h5"
    sort_ok "$p" --whole-file -v "$W/many.h5" "$W/many_out.h5" -d /k
    [ "$(grep -c '^h5gsort: warning: /d[0-9] has as many rows' "$W/last.log")" -eq 10 ] ||
      die "-v: not every dataset named: $(cat "$W/last.log")"
  done
}

case_attrs() {
  gen 2 "$W/in.h5" -d /keys --count 1009 --type u8 --dist uniform --attrs
  local n
  n=$(h5dump -A -d /keys "$W/in.h5" | grep -c 'ATTRIBUTE "')
  [ "$n" -eq 4 ] || die "the input should carry 4 attributes, h5dump shows $n"
  for p in 1 3; do sort_check "$p" "$W/in.h5" /keys "$W/out_$p.h5" /sorted/keys; done
}

case_verify_report() {
  gen 2 "$W/in.h5" -d /keys --count 10007 --type f8 --dist special
  sort_ok 2 --verify "$W/in.h5" "$W/out.h5" -d /keys
  grep -qi 'verif' "$W/last.log" || { cat "$W/last.log"; die "--verify printed no verdict"; }
  check "$W/in.h5" -d /keys "$W/out.h5" -o /keys
  sort_ok 3 --report "$W/report.json" "$W/in.h5" "$W/out2.h5" -d /keys
  check "$W/in.h5" -d /keys "$W/out2.h5" -o /keys
  python3 -m json.tool "$W/report.json" >/dev/null || die "--report wrote invalid JSON"
  # Each phase docs/gpu.md lists under "What --report shows" is timed: a key
  # naming it holds seconds (a number).
  python3 - "$W/report.json" <<'EOF' || die "--report lacks per-phase seconds"
import json, sys
report = json.load(open(sys.argv[1]))
found = {}
def walk(node, path):
    if isinstance(node, dict):
        for key, value in node.items():
            walk(value, path + [str(key).lower()])
    elif isinstance(node, list):
        for value in node:
            walk(value, path)
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        for phase in ("read", "sort", "split", "exchange", "merge", "write"):
            if any(phase in part for part in path):
                found.setdefault(phase, node)
walk(report, [])
missing = [p for p in ("read", "sort", "split", "exchange", "merge", "write") if p not in found]
ranks = [v for k, v in report.items() if "rank" in k.lower() and isinstance(v, int)]
if missing or 3 not in ranks:
    print("no seconds for phases:", missing, "or no ranks == 3 in", json.dumps(report)[:2000])
    sys.exit(1)
EOF
}

# --progress under a launcher (issue 55): stderr is a pipe to a file, so every SECONDS rank 0
# prints a heartbeat line on the phase under way, with its bytes so far and rate: the carry,
# held 3 s by the test hook halfway (read and moved, not written), gets some, each with bytes
# and a rate that agree, before its phase line. A phase too short to time gets no rate ("-"),
# and no rate a one-rank run prints is beyond what memory moves. A bad SECONDS exits 2.
case_progress_heartbeat() {
  gen 2 "$W/in.h5" -d /keys --count 2000000 --type u4 --dist uniform --seed 1
  gen 1 "$W/in.h5" --append -d /vals --count 2000000 --type f8 --dist uniform --seed 2
  H5GSORT_TEST_SLEEP=carry-moved:3 sort_ok 2 --progress=1 "$W/in.h5" "$W/out.h5" -d /keys \
    --carry /vals
  check "$W/in.h5" -d /keys "$W/out.h5" -o /keys
  /usr/bin/python3 - "$W/in.h5" "$W/out.h5" <<'PY' || die "the carried rows are not the keys' rows"
import h5py, numpy as np, sys
with h5py.File(sys.argv[1], "r") as i, h5py.File(sys.argv[2], "r") as o:
    pairs = [np.rec.fromarrays([f["/keys"][:], f["/vals"][:]]) for f in (i, o)]
assert np.array_equal(np.sort(pairs[0]), np.sort(pairs[1]))
PY
  python3 - "$W/last.log" <<'PY' || die "no heartbeat of the carry with bytes and a rate"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
beat = re.compile(r"^h5gsort: carry +under way: ([0-9.]+) of ([0-9.]+) GiB \( *([0-9]+)%\), +"
                  r"([0-9.]+) GiB/s, ([0-9.]+) s so far$")
beats = [(i, beat.match(l)) for i, l in enumerate(lines) if beat.match(l)]
ends = [i for i, l in enumerate(lines) if re.match(r"^h5gsort: carry +[0-9.]+ GiB ", l)]
assert len(beats) >= 2 and len(ends) == 1, lines
for i, m in beats:
    done, total, pct, rate, secs = (float(x) for x in m.groups())
    assert i < ends[0], "a heartbeat after the carry's end: %s" % lines[i]
    # 2e6 f8 rows: 0.0149 GiB; rank 0 has read and moved its rows, not written them: 2/3
    assert 0 < done <= total == 0.015 and 60 <= pct <= 72, lines[i]
    assert rate > 0 and abs(rate - done / secs) <= 0.001 + 0.1 * rate, lines[i]
PY
  sort_ok 1 --progress "$W/in.h5" "$W/out1.h5" -d /keys
  python3 - "$W/last.log" <<'PY' || die "--progress printed a rate it cannot know"
import re, sys
phase = re.compile(r"^h5gsort: \S+ +([0-9.]+) GiB +([0-9.]+) s +(\S+) GiB/s$")
seen = 0
for l in open(sys.argv[1]).read().splitlines():
    m = phase.match(l)
    if not m:
        continue
    seen += 1
    secs, rate = float(m.group(2)), m.group(3)
    if secs < 0.001:
        assert rate == "-", l
    elif rate != "-":  # beyond what this machine's memory moves: a time too short to tell
        assert float(rate) < 64, l
assert seen >= 2
PY
  mkdir "$W/bad"
  IN=$W/in.h5 OUT=$W/bad/out.h5 WRAP=()
  for bad in 0 x ''; do
    expect_failure 2 'progress takes seconds' --progress="$bad" "$IN" "$OUT" -d /keys
  done
}

# --progress: one line per phase, each phase once, with bytes and a rate where it moves the keys;
# nothing on stderr without it. --report keeps what ran (provenance): the command line, files,
# start time, exit status and each rank's CPUs and I/O threads; a runtime failure leaves a report
# that says so.
case_progress_report() {
  gen 2 "$W/in.h5" -d /keys --count 200003 --type i8 --dist uniform
  sort_ok 3 --progress --report "$W/report.json" --io-threads 2 "$W/in.h5" "$W/out.h5" -d /keys
  check "$W/in.h5" -d /keys "$W/out.h5" -o /keys
  local lines
  lines=$(grep '^h5gsort: ' "$W/last.log" | grep -v 'h5gsort: sorted' || true)
  [ -n "$lines" ] || die "--progress printed nothing"
  [ "$(echo "$lines" | awk '{print $2}' | sort | uniq -d)" = "" ] || { echo "$lines"; die "--progress repeats a phase"; }
  for phase in read write; do
    echo "$lines" | grep -qE "^h5gsort: $phase +[0-9.]+ GiB +[0-9.]+ s +[0-9.]+ GiB/s$" ||
      { echo "$lines"; die "--progress has no bytes and rate for $phase"; }
  done
  sort_ok 2 "$W/in.h5" "$W/out2.h5" -d /keys
  [ "$(grep -c '^h5gsort: ' "$W/last.log")" -le 1 ] || die "phases printed without --progress"
  python3 - "$W/report.json" "$W/in.h5" <<'EOF' || die "--report lacks provenance"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["exit_status"] == 0 and r["start_time"].endswith("Z"), r
assert "--progress" in r["command"] and sys.argv[2] in r["command"], r["command"]
assert r["input"] == {"file": sys.argv[2], "dataset": "/keys",
                      "keys": [{"dataset": "/keys", "order": "asc"}]}, r["input"]
assert len(r["rank_detail"]) == r["ranks"] == 3, r["rank_detail"]
assert all(d["io_threads"] == 2 and d["cpu_count"] >= 1 and d["host"] for d in r["rank_detail"])
EOF
  rm -f "$W/out3.h5"
  mpirun 2 bash -c "ulimit -f 100; exec '$BIN/h5gsort' '$W/in.h5' '$W/out3.h5' -d /keys --report '$W/failed.json'" \
    >"$W/last.log" 2>&1 && die "a run over the file-size limit succeeded"
  [ ! -e "$W/out3.h5" ] || die "a failed run left its output"
  python3 - "$W/failed.json" <<'EOF' || die "a failed run left no report of its error"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["exit_status"] == 1 and r["error"], r
EOF
}

# A tiny device-memory cap with the CPU backend: the out-of-core path.
case_out_of_core() {
  gen 2 "$W/a.h5" -d /keys --count 100003 --type f8 --dist special
  gen 2 "$W/b.h5" -d /keys --count 100003 --type u4 --dist uniform
  for p in 1 3; do
    sort_check "$p" "$W/a.h5" /keys "$W/a_out_$p.h5" /keys --backend cpu --device-memory 4K
  done
  sort_check 2 "$W/b.h5" /keys "$W/b_out.h5" /keys --backend cpu --device-memory 4K --descending
}

# Issue 32 #8: a cap below the floor of --device-memory (64 KiB) is raised to it, with a warning
# on rank 0, and still sorts out of core: 20k keys at 1 byte took over 60 s (one run per key).
case_device_memory_floor() {
  gen 1 "$W/in.h5" -d /keys --count 20000 --type u4 --dist uniform
  gen 1 "$W/f8.h5" -d /keys --count 100003 --type f8 --dist special
  for p in 1 2; do
    local start=$SECONDS
    sort_check "$p" "$W/in.h5" /keys "$W/out_$p.h5" /keys --backend cpu --device-memory 1 --verify
    [ $((SECONDS - start)) -le 30 ] || die "--device-memory 1 took $((SECONDS - start)) s"
    [ "$(grep -c 'warning: --device-memory 1 bytes is below the floor of 65536' \
      "$WORK/last.log")" = 1 ] || die "no single floor warning: $(cat "$WORK/last.log")"
    # still out of core: runs of 4,096 keys (100k f8 keys, 16 bytes per key in a run)
    sort_check "$p" "$W/f8.h5" /keys "$W/f8_$p.h5" /keys --backend cpu --device-memory 1K \
      --report "$W/r_$p.json"
    local runs
    runs=$(sed -n 's/.*"runs_per_rank": \([0-9]*\).*/\1/p' "$W/r_$p.json")
    [ "${runs:-0}" -ge 10 ] || die "--device-memory 1K on $p ranks: ${runs:-?} runs, expected >= 10"
  done
  # at the floor itself: no warning
  sort_check 2 "$W/in.h5" /keys "$W/at_floor.h5" /keys --backend cpu --device-memory 64K
  if grep -q warning "$WORK/last.log"; then die "a warning at the floor: $(cat "$WORK/last.log")"; fi
}

# The exchange split into many 7-element messages.
case_small_messages() {
  export H5GSORT_MAX_MESSAGE_ELEMS=7
  gen 2 "$W/a.h5" -d /keys --count 10007 --type u8 --dist uniform
  gen 2 "$W/b.h5" -d /keys --count 10007 --type f4 --dist zipf
  for p in 2 3 4; do sort_check "$p" "$W/a.h5" /keys "$W/a_out_$p.h5" /keys; done
  sort_check 3 "$W/b.h5" /keys "$W/b_out.h5" /keys --descending
}

# --backend cpu always works; --backend cuda works only in a CUDA build with a GPU visible,
# and otherwise fails with exit 1 and one clear message.
case_backend() {
  gen 2 "$W/in.h5" -d /keys --count 10007 --type f4 --dist special
  sort_check 2 "$W/in.h5" /keys "$W/cpu.h5" /keys --backend cpu
  if [ "${H5G_HAVE_CUDA:-0}" = 1 ] && gpu_usable; then
    sort_check 2 "$W/in.h5" /keys "$W/cuda.h5" /keys --backend cuda
  else
    local rc=0
    mpirun 2 "$BIN/h5gsort" --backend cuda "$W/in.h5" "$W/cuda.h5" -d /keys >"$W/cuda.log" 2>&1 ||
      rc=$?
    cat "$W/cuda.log"
    [ "$rc" -eq 1 ] || die "--backend cuda without a GPU exited $rc, expected 1"
    [ "$(grep -c '^h5gsort: error: ' "$W/cuda.log")" -eq 1 ] || die "expected one error line"
    grep '^h5gsort: error: ' "$W/cuda.log" | grep -qiE 'cuda|gpu' ||
      die "the error does not say that CUDA/GPU is unavailable"
    [ ! -e "$W/cuda.h5" ] || die "a failed run left OUTPUT behind"
  fi
}

# The generator's data depend only on (seed, index), never on the rank count.
case_gen_ranks() {
  for spec in f8:special:contiguous i2:normal:chunked u8:zipf:gzip f4:uniform:contiguous; do
    IFS=: read -r type dist layout <<<"$spec"
    gen 1 "$W/one.h5" -d /k --count 3001 --type "$type" --dist "$dist" --layout "$layout" \
      --chunk 100 --force
    gen 3 "$W/three.h5" -d /k --count 3001 --type "$type" --dist "$dist" --layout "$layout" \
      --chunk 100 --force
    check --identical "$W/one.h5" -d /k "$W/three.h5" -o /k
  done
  gen 1 "$W/one.h5" -d /k --count 3 --type i8 --dist special --force
  gen 4 "$W/four.h5" -d /k --count 3 --type i8 --dist special --force
  check --identical "$W/one.h5" -d /k "$W/four.h5" -o /k
}

# The checker itself must reject wrong outputs (a checker that cannot fail checks nothing).
case_checker() {
  expect_reject() {
    if "$BIN/h5gsort_check" "$@" >"$W/reject.log" 2>&1; then
      die "h5gsort_check accepted a wrong output: $*"
    fi
    grep -q FAILED "$W/reject.log" || die "h5gsort_check gave no reason: $(cat "$W/reject.log")"
  }
  gen 1 "$W/sorted.h5" -d /k --count 1000 --type i4 --dist sorted
  gen 1 "$W/reverse.h5" -d /k --count 1000 --type i4 --dist reverse
  gen 1 "$W/uniform.h5" -d /k --count 1000 --type i4 --dist uniform
  gen 1 "$W/equal.h5" -d /k --count 1000 --type i4 --dist equal
  gen 1 "$W/few.h5" -d /k --count 1000 --type i4 --dist few
  gen 1 "$W/be.h5" -d /k --count 1000 --type i4 --dist sorted --order be
  gen 1 "$W/attrs.h5" -d /k --count 1000 --type i4 --dist sorted --attrs
  gen 1 "$W/short.h5" -d /k --count 999 --type i4 --dist sorted
  check "$W/reverse.h5" -d /k "$W/sorted.h5" -o /k
  check "$W/sorted.h5" -d /k "$W/reverse.h5" -o /k --descending
  expect_reject "$W/uniform.h5" -d /k "$W/uniform.h5" -o /k
  expect_reject "$W/sorted.h5" -d /k "$W/sorted.h5" -o /k --descending
  expect_reject "$W/few.h5" -d /k "$W/equal.h5" -o /k
  expect_reject "$W/sorted.h5" -d /k "$W/be.h5" -o /k
  expect_reject "$W/attrs.h5" -d /k "$W/sorted.h5" -o /k
  expect_reject "$W/sorted.h5" -d /k "$W/short.h5" -o /k
  expect_reject --identical "$W/sorted.h5" -d /k "$W/reverse.h5" -o /k
  # Floats: NaN last whatever its sign, -0.0 and +0.0 tie, payloads compared bit for bit.
  "$BIN/h5gsort_fixtures" "$W/fixtures.h5" || die "h5gsort_fixtures failed"
  local f=$W/fixtures.h5
  check "$f" -d /float/ascending "$f" -o /float/ascending
  check "$f" -d /float/ascending "$f" -o /float/descending --descending
  expect_reject "$f" -d /float/ascending "$f" -o /float/descending
  expect_reject "$f" -d /float/ascending "$f" -o /float/nan_not_last
  expect_reject "$f" -d /float/ascending "$f" -o /float/payload
}

"case_$CASE" ${ARG:+"$ARG"}
passed
