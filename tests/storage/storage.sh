#!/usr/bin/env bash
# Output storage tests (label storage): --layout, --chunk, --compress, --whole-file and the
# attributes of the root and of the groups on a written path. Inputs are made at test time by
# h5gsort-gen, h5repack (filters and layouts gen does not write) and h5gsort_group_attrs; every
# sorted output is checked by the independent checker h5gsort_check, and storage by h5dump -p.
# H5G_TEST_BACKEND=cuda sorts on the GPU (CTest gpu.storage_*; skipped, exit 77, where no GPU is
# usable); default cpu.
#   storage.sh BIN_DIR "MPIEXEC ... -n" CASE
BIN=$1
MPIEXEC=$2
CASE=$3
source "$(dirname "$0")/../e2e/lib.sh"
test_backend
SORT_OPTS=(--backend "$BACKEND") # every sort_ok, sort_check and expect_failure run
W=$WORK

# storage FILE DATASET: layout, chunk dimensions and filters with their parameters (not sizes).
storage() {
  h5dump -p -H -d "$2" "$1" | sed -n '/STORAGE_LAYOUT/,/FILLVALUE/p' |
    grep -vE 'SIZE|OFFSET|FILLVALUE|^ *}' | sed 's/^ *//'
}

# same_storage IN OUT DATASET [OUT_DATASET]
same_storage() {
  local a b
  a=$(storage "$1" "$3")
  b=$(storage "$2" "${4:-$3}")
  [ "$a" = "$b" ] || die "storage of $2:${4:-$3} differs from $1:$3: '$b' vs '$a'"
}

# expect_storage FILE DATASET REGEX...: every regex matches the dataset's storage description.
expect_storage() {
  local file=$1 dset=$2 text
  shift 2
  text=$(storage "$file" "$dset")
  for re in "$@"; do
    grep -qE -- "$re" <<<"$text" || die "$file:$dset storage lacks /$re/: $text"
  done
}

# no_storage FILE DATASET REGEX: the regex matches nothing in the dataset's storage description.
no_storage() {
  if storage "$1" "$2" | grep -qE -- "$3"; then die "$1:$2 storage has /$3/: $(storage "$1" "$2")"; fi
}

# Default (keep): the input's chunk length and filter pipeline, in order and with parameters:
# shuffle + deflate from gen; shuffle + deflate 2 + fletcher32 on big-endian floats and
# scale-offset, n-bit from h5repack. Chunks that do not divide the ranks' shares.
case_keep() {
  gen 2 "$W/gz.h5" -d /keys --count 100003 --type i4 --dist few --layout gzip --chunk 777
  gen 1 "$W/be0.h5" -d /keys --count 20011 --type f8 --dist special --order be
  h5repack -l /keys:CHUNK=333 -f /keys:SHUF -f /keys:GZIP=2 -f /keys:FLET "$W/be0.h5" "$W/be.h5"
  gen 1 "$W/u0.h5" -d /keys --count 5003 --type u2 --dist uniform
  h5repack -l /keys:CHUNK=100 -f /keys:NBIT "$W/u0.h5" "$W/nbit.h5"
  h5repack -l /keys:CHUNK=64 -f /keys:SOFF=0,IN "$W/u0.h5" "$W/soff.h5"
  expect_storage "$W/be.h5" /keys 'CHUNKED \( 333 \)' SHUFFLE 'DEFLATE \{ LEVEL 2 \}' FLETCHER32
  for in in gz be nbit soff; do
    for p in 1 2 3 4; do
      sort_check "$p" "$W/$in.h5" /keys "$W/${in}_$p.h5" /keys --verify
      same_storage "$W/$in.h5" "$W/${in}_$p.h5" /keys
    done
    mpirun 2 "$BIN/h5gsort" --check "$W/${in}_3.h5" -d /keys --against "$W/$in.h5" >"$WORK/log" 2>&1 ||
      die "--check of $in failed: $(cat "$WORK/log")"
  done
  # the same output whatever the number of ranks
  same_chunked_output "$W/gz_1.h5" "$W/gz_3.h5"
  same_chunked_output "$W/be_2.h5" "$W/be_4.h5"
}

# Contiguous and compact inputs give contiguous output; --layout contiguous drops chunks and filters.
case_contiguous() {
  gen 2 "$W/c.h5" -d /keys --count 10007 --type u8 --dist uniform
  gen 1 "$W/s.h5" -d /keys --count 1000 --type i2 --dist special
  h5repack -l /keys:COMPA "$W/s.h5" "$W/compact.h5"
  gen 2 "$W/gz.h5" -d /keys --count 10007 --type f4 --dist normal --layout gzip --chunk 100
  expect_storage "$W/compact.h5" /keys COMPACT
  for p in 1 2 3 4; do
    sort_check "$p" "$W/c.h5" /keys "$W/c_$p.h5" /keys
    expect_storage "$W/c_$p.h5" /keys CONTIGUOUS
    sort_check "$p" "$W/compact.h5" /keys "$W/compact_$p.h5" /keys --verify
    expect_storage "$W/compact_$p.h5" /keys CONTIGUOUS
    sort_check "$p" "$W/gz.h5" /keys "$W/gzc_$p.h5" /keys --layout contiguous --verify
    expect_storage "$W/gzc_$p.h5" /keys CONTIGUOUS
    no_storage "$W/gzc_$p.h5" /keys 'SHUFFLE|DEFLATE'
  done
}

# --layout chunked / --chunk N: N = 7 with 1000 keys on 1-4 ranks (chunk boundaries nowhere near
# the ranks'); the input's filters kept under --compress keep; a default chunk length when the
# input has none.
case_chunked() {
  gen 2 "$W/c.h5" -d /keys --count 1000 --type i8 --dist uniform
  gen 2 "$W/gz.h5" -d /keys --count 1000 --type u4 --dist few --layout gzip --chunk 64
  for p in 1 2 3 4; do
    sort_check "$p" "$W/c.h5" /keys "$W/c_$p.h5" /keys --layout chunked --chunk 7 --verify
    expect_storage "$W/c_$p.h5" /keys 'CHUNKED \( 7 \)'
    no_storage "$W/c_$p.h5" /keys 'SHUFFLE|DEFLATE'
    sort_check "$p" "$W/c.h5" /keys "$W/n_$p.h5" /keys --chunk 7
    same_chunked_output "$W/c_$p.h5" "$W/n_$p.h5" # --chunk 7 is --layout chunked --chunk 7
    sort_check "$p" "$W/gz.h5" /keys "$W/gz_$p.h5" /keys --chunk 7
    expect_storage "$W/gz_$p.h5" /keys 'CHUNKED \( 7 \)' SHUFFLE 'DEFLATE \{ LEVEL 6 \}'
  done
  sort_check 3 "$W/c.h5" /keys "$W/d.h5" /keys --layout chunked
  # no keys, and fewer keys than ranks
  for n in 0 2; do
    gen 1 "$W/n$n.h5" -d /keys --count "$n" --type f4 --dist special
    sort_check 4 "$W/n$n.h5" /keys "$W/n${n}_out.h5" /keys --compress gzip --verify
    expect_storage "$W/n${n}_out.h5" /keys CHUNKED 'DEFLATE \{ LEVEL 6 \}'
  done
  expect_storage "$W/d.h5" /keys 'CHUNKED \( 1000 \)'
  gen 2 "$W/big.h5" -d /keys --count 300007 --type u4 --dist uniform
  sort_check 2 "$W/big.h5" /keys "$W/big_out.h5" /keys --layout chunked --verify
  expect_storage "$W/big_out.h5" /keys 'CHUNKED \( 262144 \)'
}

# --compress gzip on a compressible dataset: much smaller than contiguous, and correct.
case_gzip() {
  gen 2 "$W/in.h5" -d /keys --count 1000003 --type f8 --dist few
  for p in 1 4; do
    sort_check "$p" "$W/in.h5" /keys "$W/plain_$p.h5" /keys
    sort_check "$p" "$W/in.h5" /keys "$W/gz_$p.h5" /keys --compress gzip=6 --verify
    expect_storage "$W/gz_$p.h5" /keys CHUNKED SHUFFLE 'DEFLATE \{ LEVEL 6 \}'
    local plain gz
    plain=$(stat -c %s "$W/plain_$p.h5")
    gz=$(stat -c %s "$W/gz_$p.h5")
    echo "$p ranks: contiguous $plain bytes, gzip=6 $gz bytes"
    [ $((gz * 20)) -lt "$plain" ] || die "gzip output $gz bytes is not 20 times smaller than $plain"
  done
  # gzip alone: level 6; one-byte elements get no shuffle; --chunk sets the chunk length
  gen 1 "$W/u1.h5" -d /keys --count 5000 --type u1 --dist few
  sort_check 3 "$W/u1.h5" /keys "$W/u1_out.h5" /keys --compress gzip --chunk 999
  expect_storage "$W/u1_out.h5" /keys 'CHUNKED \( 999 \)' 'DEFLATE \{ LEVEL 6 \}'
  no_storage "$W/u1_out.h5" /keys SHUFFLE
  # gzip replaces the input's filters
  gen 1 "$W/c.h5" -d /keys --count 3000 --type i4 --dist uniform
  h5repack -l /keys:CHUNK=100 -f /keys:FLET "$W/c.h5" "$W/flet.h5"
  sort_check 2 "$W/flet.h5" /keys "$W/flet_out.h5" /keys --compress gzip=1
  expect_storage "$W/flet_out.h5" /keys 'CHUNKED \( 100 \)' SHUFFLE 'DEFLATE \{ LEVEL 1 \}'
  no_storage "$W/flet_out.h5" /keys FLETCHER32
}

# --compress none keeps the chunks and drops the filters.
case_none() {
  gen 2 "$W/gz.h5" -d /keys --count 10007 --type i2 --dist special --layout gzip --chunk 500
  for p in 1 2 3 4; do
    sort_check "$p" "$W/gz.h5" /keys "$W/out_$p.h5" /keys --compress none --verify
    expect_storage "$W/out_$p.h5" /keys 'CHUNKED \( 500 \)'
    no_storage "$W/out_$p.h5" /keys 'SHUFFLE|DEFLATE'
  done
}

case_usage() {
  IN=$W/in.h5
  OUT=$W/out/out.h5 # a directory of its own: expect_failure checks that nothing lands beside it
  WRAP=()
  mkdir -p "$W/out"
  gen 1 "$IN" -d /keys --count 100 --type u4
  expect_failure 2 'needs chunked storage' "$IN" "$OUT" -d /keys --layout contiguous --compress gzip
  expect_failure 2 'needs chunked storage' "$IN" "$OUT" -d /keys --layout contiguous --chunk 10
  expect_failure 2 '--chunk takes' "$IN" "$OUT" -d /keys --chunk 0
  expect_failure 2 '--chunk takes' "$IN" "$OUT" -d /keys --chunk 1x
  expect_failure 2 "--compress takes .*'lzf'" "$IN" "$OUT" -d /keys --compress lzf
  expect_failure 2 'level from 0 to 9' "$IN" "$OUT" -d /keys --compress gzip=10
  expect_failure 2 '--layout takes' "$IN" "$OUT" -d /keys --layout compact
  # chunks are cut to the dataset's length, but an empty dataset keeps them whole: 8 GB
  gen 1 "$W/empty.h5" -d /keys --count 0 --type u4
  IN=$W/empty.h5
  expect_failure 2 '4 GiB' "$IN" "$OUT" -d /keys --chunk 2000000000
}

# --carry datasets keep their own storage; --index-out follows the keys' (less the filters that
# describe the keys' values); with --compress gzip all of them are compressed.
case_carry() {
  gen 2 "$W/in.h5" -d /g/keys --count 10007 --type u2 --dist few --layout gzip --chunk 300
  gen 2 "$W/in.h5" -d /g/pay --count 10007 --type f4 --row-shape 3 --layout chunked --chunk 41 --append
  gen 2 "$W/in.h5" -d /g/flat --count 10007 --type i8 --dist uniform --append
  h5repack -l /g/pay:CHUNK=41x3 -f /g/pay:FLET -f /g/keys:NBIT -l /g/keys:CHUNK=300 "$W/in.h5" "$W/nb.h5"
  for p in 1 2 3 4; do
    sort_ok "$p" "$W/in.h5" "$W/out_$p.h5" -d /g/keys --carry /g/pay,/g/flat --index-out /g/idx --verify
    rcheck "$W/in.h5" "$W/out_$p.h5" -d /g/keys --carry /g/pay --carry /g/flat --index /g/idx
    same_storage "$W/in.h5" "$W/out_$p.h5" /g/keys
    same_storage "$W/in.h5" "$W/out_$p.h5" /g/pay
    same_storage "$W/in.h5" "$W/out_$p.h5" /g/flat
    same_storage "$W/in.h5" "$W/out_$p.h5" /g/keys /g/idx
    sort_ok "$p" "$W/nb.h5" "$W/nb_$p.h5" -d /g/keys --carry /g/pay --index-out /idx
    same_storage "$W/nb.h5" "$W/nb_$p.h5" /g/pay
    expect_storage "$W/nb_$p.h5" /g/pay FLETCHER32
    expect_storage "$W/nb_$p.h5" /g/keys NBIT
    expect_storage "$W/nb_$p.h5" /idx 'CHUNKED \( 300 \)'
    no_storage "$W/nb_$p.h5" /idx NBIT
  done
  sort_ok 3 "$W/in.h5" "$W/all.h5" -d /g/keys --carry /g/pay,/g/flat --index-out /g/idx \
    --compress gzip=4 --chunk 1000
  rcheck "$W/in.h5" "$W/all.h5" -d /g/keys --carry /g/pay --carry /g/flat --index /g/idx
  for d in /g/keys /g/pay /g/flat /g/idx; do
    expect_storage "$W/all.h5" "$d" 'CHUNKED \( 1000' SHUFFLE 'DEFLATE \{ LEVEL 4 \}'
  done
}

# input with other datasets, groups and attributes
make_rich() {
  gen 2 "$1" -d /g/keys --count 5003 --type f8 --dist special --attrs --layout gzip --chunk 100
  gen 2 "$1" -d /g/pay --count 5003 --type i4 --dist uniform --append
  gen 2 "$1" -d /other --count 1009 --type i4 --dist uniform --append --attrs
  gen 1 "$1" -d /grp/third --count 33 --type u1 --dist few --append --layout gzip --chunk 5
  "$BIN/h5gsort_group_attrs" "$1" / /g /grp /empty || die "h5gsort_group_attrs failed"
}

# same_attrs IN OUT GROUP: the group's attributes "title" and "version" (h5gsort_group_attrs) are
# in OUT as in IN: same type, shape and values.
same_attrs() {
  local a
  for a in title version; do
    local path=${3%/}/$a
    h5dump -a "$path" "$1" >"$WORK/a.txt" 2>&1 || die "$1 has no attribute $path"
    h5dump -a "$path" "$2" >"$WORK/b.txt" 2>&1 || die "$2 has no attribute $path"
    cmp -s <(tail -n +2 "$WORK/a.txt") <(tail -n +2 "$WORK/b.txt") ||
      die "attribute $path differs: $(cat "$WORK/a.txt" "$WORK/b.txt")"
  done
}

# --whole-file: every other object and attribute of INPUT kept byte for byte (h5diff), the sorted
# dataset, carried datasets and the index replaced or added.
case_whole_file() {
  make_rich "$W/in.h5"
  for p in 1 2 3 4; do
    sort_ok "$p" --whole-file "$W/in.h5" "$W/out_$p.h5" -d /g/keys --carry /g/pay --index-out /g/idx --verify
    rcheck "$W/in.h5" "$W/out_$p.h5" -d /g/keys --carry /g/pay --index /g/idx
    h5diff "$W/in.h5" "$W/out_$p.h5" /other /other || die "--whole-file changed /other"
    h5diff "$W/in.h5" "$W/out_$p.h5" /grp /grp || die "--whole-file changed /grp"
    h5diff "$W/in.h5" "$W/out_$p.h5" /empty /empty || die "--whole-file changed /empty"
    for g in / /g /grp /empty; do same_attrs "$W/in.h5" "$W/out_$p.h5" "$g"; done
    same_storage "$W/in.h5" "$W/out_$p.h5" /g/keys
  done
  # the keys sorted to a new path: the input's dataset stays as it was
  sort_check 2 "$W/in.h5" /g/keys "$W/moved.h5" /sorted/keys --whole-file
  h5diff "$W/in.h5" "$W/moved.h5" /g /g || die "--whole-file --output-dataset changed /g"
}

# Without --whole-file: the attributes of the root and of the groups on written paths are copied;
# nothing else of INPUT comes along.
case_group_attrs() {
  make_rich "$W/in.h5"
  for p in 1 2 3 4; do
    sort_ok "$p" "$W/in.h5" "$W/out_$p.h5" -d /g/keys --carry /g/pay
    check "$W/in.h5" -d /g/keys "$W/out_$p.h5" -o /g/keys
    for g in / /g; do same_attrs "$W/in.h5" "$W/out_$p.h5" "$g"; done
    if h5ls "$W/out_$p.h5/other" >/dev/null 2>&1; then die "/other came along without --whole-file"; fi
  done
  # the keys moved: the root's attributes still come, /g is not on the written path
  sort_check 2 "$W/in.h5" /g/keys "$W/moved.h5" /x/keys
  same_attrs "$W/in.h5" "$W/moved.h5" /
  if h5dump -a /x/title "$W/moved.h5" >/dev/null 2>&1; then die "/x got /g's attributes"; fi
}

# timed_sort_check LIMIT_S P ARGS...: sort_check that must also end within LIMIT_S seconds (on the
# 2 shared cores of CI the runs below take 1-3 s; quadratic or hanging code takes minutes).
timed_sort_check() {
  local limit=$1 start=$SECONDS
  shift
  sort_check "$@"
  [ $((SECONDS - start)) -le "$limit" ] || die "sort_check $* took $((SECONDS - start)) s (> $limit s)"
}

# Issue 32 #4: many chunks are read in time linear in their number (HDF5 1.10's look-up by
# coordinate walks the whole chunk index: 50k gzip chunks of 64 rows took minutes), kept on output.
case_many_chunks() {
  gen 1 "$W/many.h5" -d /keys --count 3200000 --type u4 --dist uniform --layout gzip --chunk 64
  expect_storage "$W/many.h5" /keys 'CHUNKED \( 64 \)' DEFLATE
  for p in 1 2; do
    timed_sort_check 40 "$p" "$W/many.h5" /keys "$W/many_$p.h5" /keys --verify
    same_storage "$W/many.h5" "$W/many_$p.h5" /keys
  done
}

# Issue 32 #5: several ranks writing tens of thousands of new gzip chunks (HDF5's collective
# filtered write; its metadata flushes had split the ranks: "error in writev: Bad address", hang).
case_tiny_chunks() {
  gen 1 "$W/in.h5" -d /keys --count 2816000 --type u4 --dist uniform
  gen 1 "$W/one.h5" -d /keys --count 44000 --type u4 --dist few
  for p in 2 3; do
    timed_sort_check 40 "$p" "$W/in.h5" /keys "$W/out_$p.h5" /keys --chunk 64 --compress gzip=9 \
      --verify
    expect_storage "$W/out_$p.h5" /keys 'CHUNKED \( 64 \)' 'DEFLATE \{ LEVEL 9 \}'
    timed_sort_check 40 "$p" "$W/one.h5" /keys "$W/one_$p.h5" /keys --chunk 1 --compress gzip=9 \
      --verify
  done
  same_chunked_output "$W/out_2.h5" "$W/out_3.h5"
}

# Issue 32 #7: attributes over 64 KiB (10,000 float64) on the key dataset, the root and a group
# on the path are kept with their values; such an output takes the 1.8 format (superblock 2), any
# other keeps the earliest (superblock 0).
case_large_attrs() {
  gen 1 "$W/in0.h5" -d /g/keys --count 20011 --type f4 --dist special --attrs
  # (a new layout makes h5repack rebuild the dataset: a plain copy keeps its earliest header)
  h5repack --low=1 --high=1 -l /g/keys:CHUNK=1000 -f /g/keys:GZIP=1 "$W/in0.h5" "$W/in.h5" ||
    die "h5repack --low=1 failed"
  "$BIN/h5gsort_group_attrs" --large "$W/in.h5" /g/keys / /g || die "h5gsort_group_attrs failed"
  for p in 1 2; do
    sort_check "$p" "$W/in.h5" /g/keys "$W/out_$p.h5" /g/keys --verify
    for a in /g/keys/large /large /g/large; do
      h5dump -a "$a" "$W/in.h5" | tail -n +2 >"$WORK/a.txt" || die "in.h5 has no attribute $a"
      h5dump -a "$a" "$W/out_$p.h5" | tail -n +2 >"$WORK/b.txt" 2>&1 || die "no attribute $a"
      grep -q '9999.25' "$WORK/a.txt" || die "the fixture's $a lacks its last value"
      cmp -s "$WORK/a.txt" "$WORK/b.txt" || die "attribute $a differs on $p ranks"
    done
    h5dump -B -H "$W/out_$p.h5" | grep -q 'SUPERBLOCK_VERSION 2' || die "not in the 1.8 format"
  done
  sort_check 2 "$W/in0.h5" /g/keys "$W/small.h5" /g/keys
  h5dump -B -H "$W/small.h5" | grep -q 'SUPERBLOCK_VERSION 0' || die "small attributes: not earliest"
}

"case_$CASE"
passed
