#!/usr/bin/env bash
# Corrupted inputs must never hang, crash or lie (issue 16). Every run must end (a time limit
# catches hangs) either with exit 1 or 2, one "h5gsort: error:" line, no HDF5 error stack, no
# OUTPUT and no temporary file beside it, or with exit 0 and an output the independent checkers
# accept against what serial HDF5 reads from the same file; the input is never changed.
#   mutate.sh BIN_DIR "MPIEXEC ... -n" CASE
# Cases: hangs (tests/realfiles/cases: files that hung at 2 ranks, at 1-4 ranks), and
# mutations_keys / mutations_records (small fixtures -- keys contiguous and gzip-chunked; a
# compound table sorted by a field, keys with a carried chunked dataset -- each byte-flipped,
# zeroed, overwritten or truncated at offsets in its metadata and spread over the file, run at 1
# and 2 ranks, some at 3-4; two cases so that CTest can run them side by side).
BIN=$1
MPIEXEC=$2
CASE=$3
source "$(dirname "$0")/../e2e/lib.sh"
W=$WORK
CASES=$(dirname "$0")/cases
mkdir -p "$W/out"
OUT=$W/out/out.h5
LIMIT=${H5G_MUTATE_LIMIT:-60}
OUTCOMES=""

# run_one P FILE KIND: sorts FILE (a KIND fixture) on P ranks within LIMIT seconds and checks the
# outcome as above.
run_one() {
  local p=$1 file=$2 kind=$3 rc=0 args check_args
  case $kind in
  keys | gzip) args=(-d /keys) ;;
  table) args=(-d /table --key-field score --index-out /idx)
    check_args=(--key-field score --index /idx) ;;
  carry) args=(-d /keys --carry /payload --index-out /idx)
    check_args=(--carry /payload --index /idx) ;;
  esac
  cp "$file" "$W/before"
  rm -f "$OUT"
  RUNS=$((RUNS + 1))
  timeout -k 5 "$LIMIT" $MPIEXEC "$p" "$BIN/h5gsort" --backend cpu "$file" "$OUT" "${args[@]}" \
    >"$W/log" 2>&1 || rc=$?
  local what="h5gsort $file ${args[*]} on $p ranks"
  [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || { cat "$W/log" >&2; die "$what hung (killed after ${LIMIT} s)"; }
  cmp -s "$file" "$W/before" || die "$what changed its input"
  local left
  left=$(ls -A "$W/out" | grep -v '^out\.h5$' || true)
  [ -z "$left" ] || die "$what left '$left' beside OUTPUT"
  if grep -q 'HDF5-DIAG' "$W/log"; then cat "$W/log" >&2; die "$what printed an HDF5 error stack"; fi
  if [ "$rc" -eq 0 ]; then
    if [ "$kind" = keys ] || [ "$kind" = gzip ]; then
      check "$file" -d /keys "$OUT" -o /keys
    else
      rcheck "$file" "$OUT" -d "${args[1]}" "${check_args[@]}"
    fi
  else
    [ "$rc" -eq 1 ] || [ "$rc" -eq 2 ] || { cat "$W/log" >&2; die "$what exited $rc"; }
    local lines
    lines=$(grep -c '^h5gsort: error: ' "$W/log" || true)
    [ "$lines" -eq 1 ] || { cat "$W/log" >&2; die "$what printed $lines error lines"; }
    [ ! -e "$OUT" ] || die "$what failed but left OUTPUT"
  fi
  OUTCOMES="$OUTCOMES $rc"
}

summary() {
  echo "outcomes (exit code: runs):$(tr " " "\n" <<<"${OUTCOMES# }" | sort | uniq -c | awk '{printf " %s: %s", $2, $1}')"
}

case_hangs() {
  for p in 1 2 3 4; do
    for f in "$CASES"/s5_compound_*.hdf5; do run_one "$p" "$f" table; done
    run_one "$p" "$CASES/s6_carry_m034.hdf5" carry
  done
  summary
}

# mutate SRC DST KIND OFFSET: DST is SRC with one defect at OFFSET.
mutate() {
  local src=$1 dst=$2 kind=$3 off=$4
  cp "$src" "$dst"
  case $kind in
  flip) # every bit of one byte
    local byte
    byte=$(od -An -tu1 -j "$off" -N1 "$src" | tr -d ' ')
    printf "\\x$(printf %02x $((byte ^ 255)))" | dd of="$dst" bs=1 seek="$off" conv=notrunc status=none ;;
  zero) dd if=/dev/zero of="$dst" bs=1 seek="$off" count=8 conv=notrunc status=none ;;
  overwrite) printf '\xde\xad\xbe\xef\x01\x00\x00\x80' | dd of="$dst" bs=1 seek="$off" conv=notrunc status=none ;;
  truncate) truncate -s "$off" "$dst" ;;
  esac
}

# mutations FIXTURE...: mutants of each fixture (keys, gzip, table, carry), checked.
mutations() {
  local f=$W/fix
  mkdir -p "$f"
  gen 1 "$f/keys.h5" -d /keys --count 1500 --type i4 --seed 5
  gen 1 "$f/gzip.h5" -d /keys --count 1500 --type u8 --layout gzip --chunk 200 --seed 6
  gen 1 "$f/table.h5" -d /table --count 1500 --type f4 --table --key-field score --layout chunked \
    --chunk 200 --seed 7
  gen 1 "$f/carry.h5" -d /keys --count 1500 --type i2 --dist few --seed 8
  gen 1 "$f/carry.h5" -d /payload --count 1500 --type f4 --row-shape 3 --layout chunked --chunk 250 \
    --append --seed 9
  local n=0 kinds=(flip zero overwrite truncate)
  for kind in "$@"; do
    local src=$f/$kind.h5 size
    size=$(stat -c %s "$src")
    for k in 0 1 2 3; do
      # 5 offsets per defect: 3 in the first 4 KiB (superblock, object headers, B-tree roots),
      # 2 spread over the whole file (data, chunk indexes, heaps), shifted per defect kind
      for i in 0 1 2 3 4; do
        local off
        if [ "$i" -lt 3 ]; then off=$(((i * 1361 + k * 211 + 40) % 4096 % size))
        else off=$((((2 * i - 5) * size / 4 + k * 97) % size)); fi
        mutate "$src" "$W/m.h5" "${kinds[$k]}" "$off"
        n=$((n + 1))
        run_one 1 "$W/m.h5" "$kind"
        run_one 2 "$W/m.h5" "$kind"
        [ $((n % 6)) -eq 0 ] && run_one $((3 + n / 6 % 2)) "$W/m.h5" "$kind"
      done
    done
  done
  echo "$n mutated files"
  summary
}

case_mutations_keys() { mutations keys gzip; }
case_mutations_records() { mutations table carry; }

"case_$CASE"
passed
