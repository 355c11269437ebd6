#!/usr/bin/env bash
# Bad record-sort inputs (--carry, --index-out, --key-field): h5gsort must exit 2 with exactly one
# "h5gsort: error: ..." line naming the problem, leave no OUTPUT and no temporary file, and leave
# the input unchanged (expect_failure in tests/e2e/lib.sh, on 1 and 3 ranks).
#   badinput.sh BIN_DIR "MPIEXEC ... -n" CASE
BIN=$1
MPIEXEC=$2
CASE=$3
source "$(dirname "$0")/../e2e/lib.sh"
W=$WORK
mkdir -p "$W/outdir"
"$BIN/h5gsort_fixtures" "$W/fixtures.h5" || die "h5gsort_fixtures failed"
IN=$W/fixtures.h5 # /keys4 (4 int32) and 4-row /string, /compound, ...; see h5gsort_fixtures.c
OUT=$W/outdir/out.h5
WRAP=()

case_carry_length() {
  IN=$W/in.h5
  gen 2 "$IN" -d /keys --count 100 --type i4
  gen 1 "$IN" -d /short --count 99 --type f8 --append
  gen 1 "$IN" -d /nd --count 101 --type u2 --row-shape 3 --append
  expect_failure 2 'short|99|100|rows|length' "$IN" "$OUT" -d /keys --carry /short
  expect_failure 2 '/nd|101|100|rows|length' "$IN" "$OUT" -d /keys --index-out /idx --carry /nd
}
case_carry_missing() { expect_failure 2 'nosuch' "$IN" "$OUT" -d /keys --carry /nosuch/pay; }
case_carry_string() {
  expect_failure 2 'string' "$IN" "$OUT" -d /keys4 --carry /string
  expect_failure 2 'string' "$IN" "$OUT" -d /keys4 --carry /vlstring
}
case_carry_not_numeric() { expect_failure 2 'compound' "$IN" "$OUT" -d /keys4 --carry /compound; }
case_carry_scalar() { expect_failure 2 'scalar|0-d|rank 0|/scalar' "$IN" "$OUT" -d /keys4 --carry /scalar; }
case_carry_the_keys() { expect_failure 2 'keys4' "$IN" "$OUT" -d /keys4 --carry /keys4; }
case_index_is_keys() { expect_failure 2 'index' "$IN" "$OUT" -d /keys --index-out /keys; }

# Two carried datasets with one base name would both land at /sorted/x beside moved keys.
case_carry_same_name() {
  IN=$W/in.h5
  gen 1 "$IN" -d /keys --count 50 --type u4
  gen 1 "$IN" -d /a/x --count 50 --type f4 --append
  gen 1 "$IN" -d /b/x --count 50 --type i8 --append
  expect_failure 2 'x' "$IN" "$OUT" -d /keys --output-dataset /sorted/keys --carry /a/x,/b/x
}

case_key_field_not_compound() { expect_failure 2 'compound' "$IN" "$OUT" -d /keys --key-field key; }
case_key_field_unknown() { expect_failure 2 'nosuch' "$IN" "$OUT" -d /compound --key-field nosuch; }
case_key_field_string() {
  IN=$W/table.h5
  gen 2 "$IN" -d /events --count 100 --type f8 --table --key-field energy
  expect_failure 2 'name|string' "$IN" "$OUT" -d /events --key-field name
}

"case_$CASE"
passed
