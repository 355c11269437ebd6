#!/usr/bin/env bash
# Real-file tests (issue 16): every 1-D dataset h5py reads is sorted exactly, whatever its storage
# (layouts, filters, partly written chunks and fill values, links, virtual datasets, bitfields),
# and what cannot be read ends with exit 2 and one line naming the cause. Fixtures are written at
# test time by h5gsort_fixtures --realfiles (HDF5's C API); outputs are checked by the
# independent checkers, partly written datasets also against the values a reader must get
# (expected.h5: fill values where nothing was written, computed by the fixture writer).
#   realfiles.sh BIN_DIR "MPIEXEC ... -n" CASE
BIN=$1
MPIEXEC=$2
CASE=$3
source "$(dirname "$0")/../e2e/lib.sh"
# H5G_TEST_BACKEND=cuda runs the same cases on the GPU (CTest gpu.realfiles_*; skipped, exit 77,
# where no GPU is usable)
test_backend
W=$WORK
F=$W/files
mkdir -p "$F" "$W/out"
"$BIN/h5gsort_fixtures" --realfiles "$F" || die "h5gsort_fixtures --realfiles failed"
R=$F/real.h5
IN=$R
OUT=$W/out/out.h5
WRAP=()

# sorted P DATASET [OPTIONS...]: sorts R:DATASET on P ranks (with --verify) into a fresh output
# and checks it against the input; --check must accept it too.
sorted() {
  local p=$1 d=$2 out=$W/out/sorted_$1.h5
  shift 2
  rm -f "$out"
  sort_check "$p" "$R" "$d" "$out" "$d" --backend "$BACKEND" --verify "$@"
  local order=()
  for o in "$@"; do [ "$o" = --descending ] && order=(--descending); done
  mpirun "$p" "$BIN/h5gsort" --check "$out" -d "$d" --against "$R" "${order[@]}" >"$W/log" 2>&1 ||
    { cat "$W/log" >&2; die "--check rejected $out:$d"; }
}

case_layouts() {
  local p=1
  for d in contiguous compact external chunked gzip shuffle_gzip fletcher32 scaleoffset nbit all; do
    sorted "$p" "/layouts/$d"
    p=$((p % 4 + 1))
  done
  # szip is read, but not kept: parallel HDF5 1.10.8 writes a chunk szip cannot shrink unreadably
  expect_failure 2 "would keep the input's szip filter" "$R" "$W/out/refused.h5" -d /layouts/szip
  sorted 2 /layouts/szip --compress gzip
  sorted 3 /layouts/all --descending
  # the last, partial chunk stored unfiltered (H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS, latest format)
  (R=$F/latest.h5 && for p in 1 2; do sorted "$p" /edge_unfiltered; done) || exit 1
  # an appendable (unlimited) chunked dataset stays appendable, as h5repack keeps it
  for p in 1 3; do
    sorted "$p" /layouts/extendible
    h5dump -H -d /layouts/extendible "$W/out/sorted_$p.h5" | grep -q 'H5S_UNLIMITED' ||
      die "/layouts/extendible: the output is no longer extendible"
  done
}

# Unwritten chunks read as the fill value (the issue's recipe first), at 1-4 ranks, and carried.
case_partial() {
  for d in recipe unwritten early be_fletcher carry contiguous; do
    for p in 1 2 3 4; do
      sorted "$p" "/partial/$d"
      check "$F/expected.h5" -d "/partial/$d" "$W/out/sorted_$p.h5" -o "/partial/$d"
    done
  done
  for p in 1 2 4; do
    rm -f "$OUT"
    sort_ok "$p" --backend "$BACKEND" --carry /partial/carry --index-out /idx "$R" "$OUT" -d /partial/recipe
    rcheck "$R" "$OUT" -d /partial/recipe --carry /partial/carry --index /idx
  done
}

# sorted_as MODE WHAT DATASET...: each dataset sorted both ways at 1-4 ranks, input and output
# compared as the plain integers h5gsort_fixtures MODE turns them into (which also fails when the
# output lost the input's kind of type, WHAT).
sorted_as() {
  local mode=$1 what=$2 p=1
  shift 2
  for d in "$@"; do
    for order in "" --descending; do
      rm -f "$OUT" "$W/plain.h5"
      sort_ok "$p" --backend "$BACKEND" --verify $order "$R" "$OUT" -d "$d"
      "$BIN/h5gsort_fixtures" "$mode" "$R" "$d" "$W/plain.h5" /in &&
        "$BIN/h5gsort_fixtures" "$mode" "$OUT" "$d" "$W/plain.h5" /out ||
        die "$d: the output is not the input's $what type"
      check "$W/plain.h5" -d /in "$W/plain.h5" -o /out $order
      p=$((p % 4 + 1))
    done
  done
}

# Padded integers (fewer value bits than bytes, at an offset) sort as h5py reads them, converted
# to the full width (sign-extended from their precision), and keep their type.
case_padded() {
  sorted_as --as-full-width padded /padded/i12 /padded/u20be /padded/i40 /padded/i12_gzip \
    /padded/u20be_nbit
}

# Bitfields sort as unsigned integers of their width and byte order and keep their type.
case_bitfields() {
  sorted_as --as-unsigned bitfield /bits/b8 /bits/b16le /bits/b16be /bits/b32le /bits/b32be \
    /bits/b64le /bits/b64be
}

# Soft and external links (the external file found beside the input, whatever the working
# directory), virtual datasets, a dataset path of 1270 characters.
case_links() {
  local long=/long/$(printf 'a%.0s' {1..250})/$(printf 'b%.0s' {1..250})/$(printf 'c%.0s' {1..250})/$(printf 'd%.0s' {1..250})/$(printf 'e%.0s' {1..250})/keys
  for p in 1 2 3 4; do
    (cd / && sorted "$p" /links/soft && sorted "$p" /links/ext && sorted "$p" /vds) || exit 1
    sorted "$p" "$long"
  done
}

# A filter HDF5 loads from HDF5_PLUGIN_PATH (a test plugin for h5py's LZF id, filter 32000): the
# dataset is sorted and the output keeps the filter.
case_plugin() {
  export HDF5_PLUGIN_PATH=$BIN/../plugins
  for p in 1 2 3; do
    sorted "$p" /lzf/keys
    h5dump -p -H -d /lzf/keys "$W/out/sorted_$p.h5" | grep -q 'USER_DEFINED_FILTER' ||
      die "/lzf/keys: the output lost its filter"
  done
}
case_unavailable_filter() {
  expect_failure 2 'filter 32000 \(lzf\) is not available.*HDF5_PLUGIN_PATH' "$R" "$OUT" -d /lzf/keys
}
case_dangling_soft_link() {
  expect_failure 2 'dangling soft link: /links/dangling points to /nowhere' "$R" "$OUT" -d /links/dangling
}
case_external_missing_file() {
  expect_failure 2 'external link /links/ext_missing points into gone\.h5, a file that does not exist' \
    "$R" "$OUT" -d /links/ext_missing
}
case_external_missing_object() {
  expect_failure 2 'external link /links/ext_noobj points to ext\.h5:/nothing, which does not exist' \
    "$R" "$OUT" -d /links/ext_noobj
}
case_virtual_missing_source() {
  expect_failure 2 'virtual dataset source file vgone\.h5 does not exist' "$R" "$OUT" -d /vds_missing
}

# Another process holds the file open for writing: HDF5's file lock, or (locking off) the
# latest-format superblock's mark.
case_held_open() {
  IN=$F/latest.h5
  "$BIN/h5gsort_fixtures" --hold "$IN" 30 >"$W/hold.log" &
  local holder=$!
  for _ in $(seq 100); do grep -q held "$W/hold.log" && break; sleep 0.1; done
  expect_failure 2 'locked: another process has it open for writing' "$IN" "$OUT" -d /keys
  (export HDF5_USE_FILE_LOCKING=FALSE
   expect_failure 2 'marked as open for writing.*h5clear' "$IN" "$OUT" -d /keys) || exit 1
  kill "$holder"
  wait "$holder" 2>/dev/null || true
}

# Directories of 200, 300 and 1000 characters for INPUT and OUTPUT (Open MPI's shared file
# pointer components overflowed a buffer past 226); a dangling symbolic link as OUTPUT is kept
# without --force and replaced with it.
case_paths() {
  for len in 200 300 1000; do
    local dir=$W/p
    while [ ${#dir} -lt "$len" ]; do dir=$dir/$(printf 'd%.0s' {1..100}); done
    mkdir -p "$dir"
    gen 2 "$dir/in.h5" -d /keys --count 5003 --type i4
    for p in 1 3; do
      rm -f "$dir/out.h5"
      sort_check "$p" "$dir/in.h5" /keys "$dir/out.h5" /keys --backend "$BACKEND" --verify
    done
  done
  IN=$R
  OUT=$W/out/link.h5
  ln -s "$W/out/nowhere.h5" "$OUT"
  expect_failure 2 'dangling symbolic link.*--force' "$R" "$OUT" -d /layouts/contiguous
  [ -L "$OUT" ] || die "the dangling link was replaced without --force"
  sort_ok 2 --backend "$BACKEND" --force "$R" "$OUT" -d /layouts/contiguous
  [ ! -L "$OUT" ] || die "--force did not replace the dangling link"
  check "$R" -d /layouts/contiguous "$OUT" -o /layouts/contiguous
}

"case_$CASE"
passed
