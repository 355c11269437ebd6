#!/usr/bin/env bash
# Output storage on the GPU machine (issue 16): time and size of the sorted output kept
# contiguous against gzip, for 4 GiB of uniform u4 keys and for a compressible f8 dataset
# (normals rounded to 0.01, written by h5py). Whole-process seconds (one run each, after the
# input is in the page cache), output bytes, and the ratio to the contiguous output. Then the
# gzip=1 outputs read back as inputs (sorted to contiguous output): h5gsort's threaded chunk
# decode against HDF5's own read (H5GSORT_IO=mpio), whole-process and read-phase seconds.
#   bench/storage.sh [WORKDIR]   env: BIN (build/bin), LOG2_U4 (30), LOG2_F8 (28), LEVELS ("1 6")
set -euo pipefail
bin=${BIN:-build/bin}
work=${1:-/tmp/h5gsort-storage}
levels=${LEVELS:-"1 6"}
mpirun=(mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -x PATH)
mkdir -p "$work"
wall() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$s" "$e"; }
u4=$work/u4.h5 f8=$work/f8.h5
[ -e "$u4" ] || "${mpirun[@]}" -np 8 --bind-to none "$bin/h5gsort-gen" "$u4" -d /keys --count $((1 << ${LOG2_U4:-30})) --type u4 --dist uniform --seed 1 >/dev/null
[ -e "$f8" ] || python3 - "$f8" $((1 << ${LOG2_F8:-28})) <<'PY'
import sys, h5py, numpy
n = int(sys.argv[2])
with h5py.File(sys.argv[1], "w") as f:
    d = f.create_dataset("/keys", (n,), dtype="f8")
    rng = numpy.random.default_rng(7)
    for at in range(0, n, 1 << 25):
        m = min(1 << 25, n - at)
        d[at:at + m] = numpy.round(rng.normal(size=m), 2)
PY
echo "| input | output storage | seconds | output MiB | x contiguous size |"
echo "|---|---|---:|---:|---:|"
for in in "$u4" "$f8"; do
  cat "$in" >/dev/null
  name=$(basename "$in" .h5)
  base=0
  for storage in contiguous $levels; do
    opts=(--layout contiguous)
    [ "$storage" = contiguous ] || opts=(--compress "gzip=$storage")
    rm -f "$work/out.h5"
    t=$(wall "${mpirun[@]}" -np 1 --bind-to none "$bin/h5gsort" "$in" "$work/out.h5" -d /keys "${opts[@]}" -q)
    bytes=$(stat -c %s "$work/out.h5")
    [ "$base" -gt 0 ] || base=$bytes
    echo "| $name | ${opts[*]} | $t | $((bytes >> 20)) | $(python3 -c "print('%.3f' % ($bytes / $base))") |"
    [ "$storage" != 1 ] || mv "$work/out.h5" "$work/${name}_gzip1.h5"
  done
done
echo
echo "| gzip=1 input | read by | seconds | read phase s | io threads |"
echo "|---|---|---:|---:|---:|"
for name in u4 f8; do
  in=$work/${name}_gzip1.h5
  cat "$in" >/dev/null
  for io in direct mpio; do
    rm -f "$work/out.h5"
    t=$(wall env H5GSORT_IO=$io "${mpirun[@]}" -x H5GSORT_IO -np 1 --bind-to none "$bin/h5gsort" "$in" \
          "$work/out.h5" -d /keys --layout contiguous -q --report "$work/report.json")
    read -r phase threads < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.2f %d" % (r["seconds"]["read"], r["rank_detail"][0]["io_threads"]))' "$work/report.json")
    by="h5gsort chunk threads"
    [ "$io" = direct ] || by="HDF5 (H5GSORT_IO=mpio)"
    echo "| $name | $by | $t | $phase | $threads |"
  done
done
rm -f "$work/out.h5" "$work/report.json"
