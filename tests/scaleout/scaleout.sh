#!/usr/bin/env bash
# Scale-out tests (label scaleout, issue 29 #4): every storage kind sorted on 1 to 8 ranks (and
# once on 32) gives the output of 1 rank. Each output is checked by the independent checker
# (order, count, checksum against the input), its data must be bit-identical to the 1-rank
# output's (h5gsort_check --identical), a contiguous output byte-identical as a file (cmp), and a
# chunked one must hold the same chunks, filters and allocated bytes (same_chunked_output).
# Inputs: N = 100003 keys in chunks of 4096 rows (chunks span ranks, ranks hold partial chunks)
# and N = 5 (fewer keys than ranks). The I/O modes H5GSORT_IO_POLICY=multinode and
# H5GSORT_IO=mpio are held to the same output at 3 and 8 ranks.
#   scaleout.sh BIN_DIR "MPIEXEC ... -n" CASE
# CASE: a storage kind (contiguous chunked gzip scaleoffset nbit bigendian bigendian_gzip),
# gzip_out (gzip written from a contiguous input) or ranks32.
BIN=$1
MPIEXEC=$2
CASE=$3
source "$(dirname "$0")/../e2e/lib.sh"
test_backend
SORT_OPTS=(--backend "$BACKEND") # every sort_ok and sort_check run
W=$WORK
SIZES=(100003 5)
MODES=(H5GSORT_IO_POLICY=multinode H5GSORT_IO=mpio)

# input_args KIND: h5gsort-gen's arguments for an input of that storage kind.
input_args() {
  case $1 in
  contiguous) echo --type u4 --dist uniform ;;
  chunked) echo --type f8 --dist special --layout chunked --chunk 4096 ;;
  gzip) echo --type i4 --dist few --layout gzip --chunk 4096 ;;
  scaleoffset) echo --type i2 --dist zipf --layout scaleoffset --chunk 4096 ;;
  nbit) echo --type u4 --dist uniform --layout nbit --chunk 4096 ;;
  bigendian) echo --type f4 --dist normal --order be ;;
  bigendian_gzip) echo --type i8 --dist uniform --order be --layout gzip --chunk 4096 ;;
  *) die "unknown storage kind '$1'" ;;
  esac
}

# same_as_one ONE OTHER: OTHER, written by more ranks (or another I/O mode), is ONE's output.
same_as_one() {
  check --identical "$1" -d /keys "$2" -o /keys
  same_output "$1" "$2"
}

# sort_as_one IN PREFIX TAG P [H5GSORT OPTIONS...]: sorts IN on P ranks into PREFIX_P.h5 (TAG
# added before .h5: an I/O mode), checks it and compares it with PREFIX_1.h5, unless it is that.
sort_as_one() {
  local in=$1 prefix=$2 tag=$3 p=$4
  shift 4
  local out=${prefix}_$p$tag.h5
  sort_check "$p" "$in" /keys "$out" /keys "$@"
  if [ "$out" != "${prefix}_1.h5" ]; then same_as_one "${prefix}_1.h5" "$out"; fi
}

# scale IN PREFIX [H5GSORT OPTIONS...]: IN sorted on 1 to 8 ranks, then on 3 and 8 in each of
# MODES, all into the output of 1 rank.
scale() {
  local in=$1 prefix=$2
  shift 2
  for p in 1 2 3 4 5 6 7 8; do sort_as_one "$in" "$prefix" "" "$p" "$@"; done
  for mode in "${MODES[@]}"; do
    export "${mode?}"
    for p in 3 8; do sort_as_one "$in" "$prefix" "_${mode%%=*}" "$p" "$@"; done
    unset "${mode%%=*}"
  done
}

case $CASE in
gzip_out) # gzip written from a contiguous input: chunks of 4096 rows, and one chunk for all
  for n in "${SIZES[@]}"; do
    gen 2 "$W/in_$n.h5" -d /keys --count "$n" --type f8 --dist normal
    scale "$W/in_$n.h5" "$W/gz6_$n" --compress gzip --chunk 4096
    scale "$W/in_$n.h5" "$W/gz1_$n" --compress gzip=1
  done
  ;;
ranks32) # 32 ranks on however few cores: contiguous, and gzip in chunks that span ranks
  gen 2 "$W/c.h5" -d /keys --count 100000 --type u4 --dist uniform
  read -ra args <<<"$(input_args gzip)"
  gen 2 "$W/gz.h5" -d /keys --count 100000 "${args[@]}"
  for in in c gz; do
    for p in 1 32; do sort_as_one "$W/$in.h5" "$W/${in}_out" "" "$p"; done
  done
  ;;
*)
  read -ra args <<<"$(input_args "$CASE")"
  for n in "${SIZES[@]}"; do
    gen 2 "$W/in_$n.h5" -d /keys --count "$n" "${args[@]}"
    scale "$W/in_$n.h5" "$W/out_$n"
  done
  ;;
esac
passed
