#!/usr/bin/env bash
# The jobs the tool exists for, as whole processes (launcher included) on the machine that runs
# it, beside the fastest raw copy of the same file (bench_raw_io: threads pread straight into a
# shared mapping of the output). Carried columns and tables (issue 52): a particle file of
# 2^LOG2 rows, u8 /particles/id (uniform) with f4 /particles/x, y, z, sorted by id with the three
# carried, the same rows as one compound table {id u8, x, y, z f4} (packed, 20 bytes) sorted by
# --key-field id, the keys alone and with --index-out; on 1 rank and on RANKS ranks sharing the
# node (cores split, --map-by slot:PE=cores/RANKS). Files made by h5py, in the page cache.
# Each row: median of REPEATS after one untimed run, then one more run for its phases (--report);
# with BASE (another h5gsort binary, e.g. the commit before), its runs alternate with the current
# one's on the same file (BASE_REPEATS each, no warm-up) and the table has their ratio. PY=1 adds
# h5py + numpy's stable argsort + take + write of the particle file (one run). Prints a Markdown
# table.
# Rows spill and spill_np (issue 54): the keys alone given a third of the host memory the run in
# memory needs (its --plan), so that every rank spills to scratch (SCRATCH); u4_spill and
# u4_spill_np the same of the u4 keys, u4c_spill with one u8 dataset carried (u4c: the same keys
# and carried dataset in memory; a file of 2^U4_LOG2 rows of both), u4_ooc_spill out of core
# (--device-memory OOC) as well, and u4_resume that run killed once its sorted runs are recorded
# (H5GSORT_TEST_KILL=runs-kept, untimed) and timed as it goes on with --resume. A spilling row
# needs room for its input, scratch and output at once (3 x 16 GiB at U4_LOG2=32): where one disk
# lacks it, WORKDIR on /dev/shm (the input is in memory anyway) and SCRATCH on the disk. Only
# there: tmpfs slows every write (the H100 machine: 1.18 s against 0.28 for the particle file's
# keys), so the other rows keep WORKDIR on the disk, their files in the page cache.
# Rows wide and wide_np: a wider table at the size the tool is for, h5gsort-gen's compound {row
# u8, det u2, name S5, key u8, x f8} (31 bytes, packed) of WIDE_COUNT rows (554,000,000: 17.2 GB),
# sorted by --key-field key on 1 rank and on RANKS ranks.
# Rows u4, u4_np, u4_ooc and u4_verify (issue 53): 2^U4_LOG2 uniform u4 keys (h5gsort-gen) on 1
# rank, on RANKS ranks, out of core (--device-memory OOC) and with --verify. Every row has `cp`
# of its input file (one run) beside the raw copy.
# EXTRA: options added to every sort (e.g. --verify, or --device-memory 8G for out of core).
#   bench/regime.sh [WORKDIR]   env: BIN (build/bin), LOG2 (28), RANKS (4), REPEATS (3),
#                               BASE (none), BASE_REPEATS (1), ROWS (all: the rows to run), PY (0),
#                               EXTRA (none), U4_LOG2 (30), OOC (2G), SCRATCH ($work/scratch),
#                               WIDE_COUNT (554000000)
set -euo pipefail
work=${1:-/tmp/h5gsort-regime}
bin=${BIN:-build/bin}
log2=${LOG2:-28}
ranks=${RANKS:-4}
repeats=${REPEATS:-3}
base_repeats=${BASE_REPEATS:-1}
rows=" ${ROWS:-carry carry_np table table_np keys index keys_np spill spill_np wide wide_np u4 u4_np u4_ooc u4_verify u4_spill u4_spill_np u4c u4c_spill u4_ooc_spill u4_resume} "
u4_log2=${U4_LOG2:-30}
cores=$(nproc)
mpirun=(mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -x PATH)
one=("${mpirun[@]}" -np 1 --bind-to none)
pe=$((cores / ranks > 0 ? cores / ranks : 1))
many=("${mpirun[@]}" -np "$ranks" --map-by "slot:PE=$pe" --bind-to core)
mkdir -p "$work"
particles=$work/particles_$log2.h5 table=$work/table_$log2.h5 out=$work/out.h5
u4=$work/u4_$u4_log2.h5 u4c=$work/u4c_$u4_log2.h5
wide_count=${WIDE_COUNT:-554000000}
wide=$work/wide_$wide_count.h5
scratch=${SCRATCH:-$work/scratch}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
timed() { # COMMAND...: wall seconds of the whole command; its output to $work/last.txt
  local start end
  rm -f "$out"
  start=$(date +%s.%N)
  "$@" >"$work/last.txt" 2>&1 || { echo "failed: $*" >&2; cat "$work/last.txt" >&2; return 1; }
  end=$(date +%s.%N)
  echo "$start $end" | awk '{printf "%.3f\n", $2 - $1}'
}
raw_copy() { # FILE: the fastest raw copy of its bytes
  local s
  s=$(timed "$bin/bench_raw_io" "$1" 0 "$(stat -L -c %s "$1")" "$work/raw.out" "$cores" mmap)
  rm -f "$work/raw.out"
  echo "$s"
}

# only the files the rows read are made: a 2^29-row pair is 20 GiB of page cache
need_particles=1 need_table=0
case $rows in *" table"*) need_table=1 ;; esac
case $rows in *" carry"* | *" keys"* | *" index "* | *" spill"*) ;; *) need_particles=0 ;; esac
{ [ $need_particles = 0 ] || [ -e "$particles" ]; } && { [ $need_table = 0 ] || [ -e "$table" ]; } ||
  python3 - "$particles" "$table" "$log2" "$need_particles" "$need_table" <<'EOF'
import sys, h5py, numpy as np
particles, table, log2 = sys.argv[1], sys.argv[2], int(sys.argv[3])
need_particles, need_table = sys.argv[4] == "1", sys.argv[5] == "1"
n, rng = 1 << log2, np.random.default_rng(42)
rec = np.empty(n, dtype=[("id", "<u8"), ("x", "<f4"), ("y", "<f4"), ("z", "<f4")])
rec["id"] = rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)
for c in "xyz":
    rec[c] = rng.random(n, dtype=np.float32)
if need_particles:
    with h5py.File(particles, "w") as f:
        for c in ("id", "x", "y", "z"):
            f.create_dataset("particles/" + c, data=rec[c])
if need_table:
    with h5py.File(table, "w") as f:
        f.create_dataset("particles", data=rec)
EOF
case $rows in *" u4_"* | *" u4 "*)
  [ -e "$u4" ] || "${one[@]}" "$bin/h5gsort-gen" "$u4" -d /k --count $((1 << u4_log2)) --type u4 \
    --seed 53 >/dev/null ;;
esac
case $rows in *" wide"*)
  [ -e "$wide" ] || "${mpirun[@]}" -np 8 --bind-to none "$bin/h5gsort-gen" "$wide" -d /t \
    --count "$wide_count" --type u8 --table --seed 7 >/dev/null ;;
esac
case $rows in *" u4c"*)
  [ -e "$u4c" ] || { "${one[@]}" "$bin/h5gsort-gen" "$u4c" -d /k --count $((1 << u4_log2)) \
    --type u4 --seed 53 && "${one[@]}" "$bin/h5gsort-gen" "$u4c" --append -d /v \
    --count $((1 << u4_log2)) --type u8 --seed 54; } >/dev/null ;;
esac
for f in "$particles" "$table" "$wide" "$u4" "$u4c"; do [ ! -e "$f" ] || cat "$f" >/dev/null; done # into the page cache

# ROW -> "LABEL|FILE|LAUNCH|OPTIONS" (LAUNCH: one or many)
spec() {
  local carry="-d /particles/id --carry /particles/x,/particles/y,/particles/z"
  case $1 in
    carry) echo "id + x, y, z carried, 1 rank|$particles|one|$carry" ;;
    carry_np) echo "id + x, y, z carried, $ranks ranks|$particles|many|$carry" ;;
    table) echo "table by --key-field id, 1 rank|$table|one|-d /particles --key-field id" ;;
    table_np) echo "table by --key-field id, $ranks ranks|$table|many|-d /particles --key-field id" ;;
    wide) echo "table of 31-byte rows by --key-field key, 1 rank|$wide|one|-d /t --key-field key" ;;
    wide_np) echo "table of 31-byte rows by --key-field key, $ranks ranks|$wide|many|-d /t --key-field key" ;;
    keys) echo "u8 id alone, 1 rank|$particles|one|-d /particles/id" ;;
    index) echo "u8 id --index-out, 1 rank|$particles|one|-d /particles/id --index-out /index" ;;
    keys_np) echo "u8 id alone, $ranks ranks|$particles|many|-d /particles/id" ;;
    spill) echo "u8 id alone, 1 rank, a third of its memory|$particles|one|-d /particles/id --host-memory THIRD" ;;
    u4) echo "u4 keys, 1 rank|$u4|one|-d /k" ;;
    u4_np) echo "u4 keys, $ranks ranks|$u4|many|-d /k" ;;
    u4_ooc) echo "u4 keys, 1 rank, --device-memory ${OOC:-2G}|$u4|one|-d /k --device-memory ${OOC:-2G}" ;;
    u4_verify) echo "u4 keys --verify, 1 rank|$u4|one|-d /k --verify" ;;
    spill_np) echo "u8 id alone, $ranks ranks, a third of their memory|$particles|many|-d /particles/id --host-memory THIRD" ;;
    u4_spill) echo "u4 keys, 1 rank, a third of its memory|$u4|one|-d /k --host-memory THIRD" ;;
    u4_spill_np) echo "u4 keys, $ranks ranks, a third of their memory|$u4|many|-d /k --host-memory THIRD" ;;
    u4c) echo "u4 keys + u8 carried, 1 rank|$u4c|one|-d /k --carry /v" ;;
    u4c_spill) echo "u4 keys + u8 carried, 1 rank, a third of its memory|$u4c|one|-d /k --carry /v --host-memory THIRD" ;;
    u4_ooc_spill) echo "u4 keys, 1 rank, --device-memory ${OOC:-2G}, a third of its memory|$u4|one|-d /k --device-memory ${OOC:-2G} --host-memory THIRD" ;;
    u4_resume) echo "the same, killed once its runs are recorded, resumed|$u4|one|-d /k --device-memory ${OOC:-2G} --host-memory THIRD --resume" ;;
    *) echo "bench/regime.sh: no row $1 (ROWS)" >&2; return 1 ;;
  esac
}
run_sort() { # BINARY LAUNCH FILE OPTIONS (with --resume: the same run killed first, untimed)
  local launch=("${one[@]}")
  [ "$2" = one ] || launch=("${many[@]}")
  case $4 in *--resume*)
    # shellcheck disable=SC2086
    H5GSORT_TEST_KILL=runs-kept "${launch[@]}" -x H5GSORT_TEST_KILL "$1" "$3" "$out" \
      ${4/--resume/} ${EXTRA:-} --force >/dev/null 2>&1 && { echo "not killed: $4" >&2; return 1; } ;;
  esac
  local s
  # shellcheck disable=SC2086
  s=$(timed "${launch[@]}" "$1" "$3" "$out" $4 ${EXTRA:-} --force) || return 1
  case $4 in *--resume*)
    grep -q '^h5gsort: resuming' "$work/last.txt" || { echo "not resumed: $4" >&2; return 1; } ;;
  esac
  echo "$s"
}

echo "# bench/regime.sh on $( (nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo "no GPU") | head -1), $cores cores, $(date -u '+%Y-%m-%d %H:%M UTC'), 2^$log2 rows"
echo
echo "Whole processes, seconds: median of $repeats after a warm-up${BASE:+; base \`$BASE\` $base_repeats run(s) alternated}${EXTRA:+; every sort with \`$EXTRA\`}."
size_of() { [ -e "$1" ] && du -hL "$1" | cut -f1 || echo "not made"; }
echo "Fastest raw copy (median) and cp (one run): of the whole input file. Particle file $(size_of "$particles"), table $(size_of "$table"), wide table $(size_of "$wide"), u4 $(size_of "$u4")."
echo
echo "| job | input | raw copy | cp | h5gsort | x raw |${BASE:+ base | base / h5gsort |} runs | phases (\`--report\`, one more run, s) |"
echo "|---|---:|---:|---:|---:|---:|${BASE:+---:|---:|}---|---|"
# LAUNCH FILE OPTIONS: a third of the host memory the node's ranks need in memory (--plan)
third_of_memory() {
  local launch=("${one[@]}") p=1
  [ "$1" = one ] || { launch=("${many[@]}") p=$ranks; }
  # shellcheck disable=SC2086
  "${launch[@]}" "$bin/h5gsort" "$2" "$out" ${3/--resume/} ${EXTRA:-} --force --no-spill --plan \
    --report "$work/plan.json" >/dev/null 2>&1 || true
  python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
print(max(r["host_bytes"] for r in p["per_rank"]) * int(sys.argv[2]) // 3)' "$work/plan.json" "$p"
}
mkdir -p "$scratch"
for row in $rows; do
  line=$(spec "$row")
  IFS='|' read -r label file launch options <<<"$line"
  case $options in *THIRD*)
    options="${options/--host-memory THIRD/} --scratch $scratch"
    options="$options --host-memory $(third_of_memory "$launch" "$file" "$options")" ;;
  esac
  raw=() now=() base=()
  raw_copy "$file" >/dev/null
  # a row the run refuses (a third of a streamed run's memory is below a CUDA rank's floor): its
  # error line in the table, the other rows go on
  if ! run_sort "$bin/h5gsort" "$launch" "$file" "$options" >/dev/null 2>"$work/refused.txt"; then
    why=$(grep -m1 '^h5gsort: error' "$work/refused.txt" || head -1 "$work/refused.txt")
    echo "| $label | $(du -hL "$file" | cut -f1) | | | refused | |${BASE:+ | |} | $why |"
    continue
  fi
  for i in $(seq "$repeats"); do
    raw+=("$(raw_copy "$file")")
    now+=("$(run_sort "$bin/h5gsort" "$launch" "$file" "$options")")
    if [ -n "${BASE:-}" ] && [ "$i" -le "$base_repeats" ] && [ "${options/--resume/}" = "$options" ]; then
      base+=("$(run_sort "$BASE" "$launch" "$file" "$options")")
    fi
  done
  copied=$(timed cp "$file" "$work/cp.out")
  rm -f "$work/cp.out"
  mr=$(printf '%s\n' "${raw[@]}" | median) mn=$(printf '%s\n' "${now[@]}" | median)
  line=$(printf '| %s | %s | %.3f | %.3f | %.3f | %.2f |' "$label" "$(du -hL "$file" | cut -f1)" \
    "$mr" "$copied" "$mn" \
    "$(echo "$mn $mr" | awk '{print $1 / $2}')")
  if [ ${#base[@]} -gt 0 ]; then
    mb=$(printf '%s\n' "${base[@]}" | median)
    line+=$(printf ' %.3f | %.2f |' "$mb" "$(echo "$mb $mn" | awk '{print $1 / $2}')")
  elif [ -n "${BASE:-}" ]; then
    line+=" | |" # a resumed run's kill is the current binary's
  fi
  run_sort "$bin/h5gsort" "$launch" "$file" "$options --report $work/report.json" >/dev/null
  phases=$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["seconds"]
print(", ".join("%s %.2f" % (k, v) for k, v in s.items() if k != "total" and v >= 0.05))' "$work/report.json")
  echo "$line ${now[*]}${BASE:+ / ${base[*]}} | $phases |"
done
if [ "${PY:-0}" = 1 ]; then
  py=$(timed python3 - "$particles" "$out" <<'EOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f, h5py.File(sys.argv[2], "w") as o:
    order = np.argsort(f["particles/id"][...], kind="stable")
    for c in ("id", "x", "y", "z"):
        o.create_dataset("particles/" + c, data=f["particles/" + c][...][order])
EOF
)
  echo
  echo "h5py + numpy stable argsort + take + write of the particle file, 1 process: $py s"
fi
rm -f "$out"
