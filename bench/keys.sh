#!/usr/bin/env bash
# Several keys on a GPU machine (issue 17): whole-process wall seconds, launcher and interpreter
# start included, of one sort by two keys against what users run today on the same data:
#   keys2  two u4 datasets (-d /a -d /b) vs h5py + numpy.lexsort + take vs h5py + cupy.lexsort;
#   table  a compound table sorted by its (u2 det, f4 key) fields (--key-field det,key), whole
#          records moved, vs h5py + numpy.lexsort on the fields + take of the records (cupy:
#          lexsort of the fields on the GPU, take of the records on the host: cupy has no
#          structured arrays).
#   wide   two f8 keys (-d /x -d /y: 16 bytes, one 128-bit sort pass), 2^WIDE_LOG2 rows, vs the same
#          Python rows.
# Beside them: h5gsort of the first key alone (what a second key costs). Then --top 1000 and
# --unique (with --counts) of 2^SEL_LOG2 u4 (uniform, and few distinct values) beside a full sort
# of the same file, on each rank count of SEL_RANKS (one GPU per rank where there are enough).
# Medians of REPEATS after a warm-up (Python rows: PY_REPEATS, no warm-up), files in the page
# cache, Markdown tables.
#   bench/keys.sh [WORKDIR]   env: BIN (build/bin), LOG2 (28), WIDE_LOG2 (27), SEL_LOG2 (30),
#                             SEL_RANKS ("1 2"), REPEATS (3), PY_REPEATS (1),
#                             PARTS ("keys table wide select": the tables to print)
set -euo pipefail
bin=${BIN:-build/bin}
work=${1:-/tmp/h5gsort-keys}
log2=${LOG2:-28}
wide_log2=${WIDE_LOG2:-27}
sel_log2=${SEL_LOG2:-30}
sel_ranks=${SEL_RANKS:-1 2}
parts=" ${PARTS:-keys table wide select} "
repeats=${REPEATS:-3}
py_repeats=${PY_REPEATS:-1}
mpirun=(mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -x PATH)
gpu_name=$( (nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo "no GPU") | head -1)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
mkdir -p "$work"
n=$((1 << log2))

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
wall() { # wall seconds of a whole command; its output goes to $work/last.txt
  local start end
  start=$(date +%s.%N)
  "$@" >"$work/last.txt" 2>&1 || { cat "$work/last.txt" >&2; return 1; }
  end=$(date +%s.%N)
  python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$end"
}
repeat() { # COUNT CMD... -> median of COUNT runs after a warm-up (none for the Python rows,
  # which run after the h5gsort rows of the same file: the file is in the page cache)
  rm -f "$work/out.h5"
  case $2 in python_*) ;; *) wall "${@:2}" >/dev/null ;; esac
  for _ in $(seq "$1"); do rm -f "$work/out.h5"; wall "${@:2}"; done | median | xargs printf '%.3f\n'
}
h5gsort_np() { "${mpirun[@]}" -np "$1" --bind-to none "$bin/h5gsort" "${@:2}" "$work/out.h5" -q --force; }
h5gsort() { h5gsort_np 1 "$@"; }
python_keys() { # numpy|cupy in [A B]: two 1-D keys (default /a, /b)
  python3 - "$1" "$2" "$work/out.h5" "${3:-/a}" "${4:-/b}" <<'PY'
import sys, h5py
lib, src, dst, pa, pb = sys.argv[1:6]
with h5py.File(src, "r") as f:
    a, b = f[pa][...], f[pb][...]
if lib == "cupy":
    import cupy
    ga, gb = cupy.asarray(a), cupy.asarray(b)
    perm = cupy.lexsort(cupy.stack([gb, ga]))
    a, b = ga[perm].get(), gb[perm].get()
else:
    import numpy
    perm = numpy.lexsort((b, a))
    a, b = a[perm], b[perm]
with h5py.File(dst, "w") as f:
    f.create_dataset(pa, data=a)
    f.create_dataset(pb, data=b)
PY
}
python_table() { # numpy|cupy in: the table /t by (det, key)
  python3 - "$1" "$2" "$work/out.h5" <<'PY'
import sys, h5py
lib, src, dst = sys.argv[1:4]
with h5py.File(src, "r") as f:
    t = f["/t"][...]
if lib == "cupy":
    import cupy
    perm = cupy.lexsort(cupy.stack([cupy.asarray(t["key"]), cupy.asarray(t["det"])])).get()
else:
    import numpy
    perm = numpy.lexsort((t["key"], t["det"]))
t = t[perm]
with h5py.File(dst, "w") as f:
    f.create_dataset("/t", data=t)
PY
}
gen() { "${mpirun[@]}" -np 8 --bind-to none "$bin/h5gsort-gen" "$@" --seed 42 >/dev/null; }

have_cupy=$(python3 -c 'import cupy; cupy.zeros(1)' >/dev/null 2>&1 && echo 1 || echo 0)
# the row count is in the names: a file of another size is never reused
keys=$work/keys2_$log2.h5 table=$work/table_$log2.h5 wide=$work/wide_$wide_log2.h5
[[ $parts != *" keys "* ]] || [ -e "$keys" ] || { gen "$keys" -d /a --count "$n" --type u4 --dist few &&
                   gen "$keys" -d /b --count "$n" --type u4 --append; }
[[ $parts != *" table "* ]] || [ -e "$table" ] || gen "$table" -d /t --count "$n" --type f4 --table --dist uniform
[[ $parts != *" wide "* ]] || [ -e "$wide" ] || {
  gen "$wide" -d /x --count $((1 << wide_log2)) --type f8 --dist few &&
    gen "$wide" -d /y --count $((1 << wide_log2)) --type f8 --append; }
cat "$keys" "$table" "$wide" >/dev/null 2>&1 || true

echo "# bench/keys.sh on $gpu_name, $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), 2^$log2 rows"
echo
echo "Whole-process wall seconds, median of $repeats after a warm-up (Python rows: $py_repeats)."
echo
echo "| data | h5gsort (one key) | h5gsort (two keys) | h5py + numpy.lexsort | h5py + cupy.lexsort | vs numpy | vs cupy |"
echo "|---|---:|---:|---:|---:|---:|---:|"
ratio() { [ "$1" = - ] && { echo -; return; }; python3 -c "import sys; print('%.2fx' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }
if [[ $parts == *" keys "* ]]; then
one=$(repeat "$repeats" h5gsort "$keys" -d /a)
two=$(repeat "$repeats" h5gsort "$keys" -d /a -d /b)
np_s=$(repeat "$py_repeats" python_keys numpy "$keys")
cp_s=-
[ "$have_cupy" = 1 ] && cp_s=$(repeat "$py_repeats" python_keys cupy "$keys")
echo "| two u4 (few x uniform) | $one | $two | $np_s | $cp_s | $(ratio "$np_s" "$two") | $(ratio "$cp_s" "$two") |"
fi
if [[ $parts == *" table "* ]]; then
one=$(repeat "$repeats" h5gsort "$table" -d /t --key-field det)
two=$(repeat "$repeats" h5gsort "$table" -d /t --key-field det,key)
np_s=$(repeat "$py_repeats" python_table numpy "$table")
cp_s=-
[ "$have_cupy" = 1 ] && cp_s=$(repeat "$py_repeats" python_table cupy "$table")
echo "| table (u2 det, f4 key), 27-byte records | $one | $two | $np_s | $cp_s | $(ratio "$np_s" "$two") | $(ratio "$cp_s" "$two") |"
fi
if [[ $parts == *" wide "* ]]; then
one=$(repeat "$repeats" h5gsort "$wide" -d /x)
two=$(repeat "$repeats" h5gsort "$wide" -d /x -d /y)
np_s=$(repeat "$py_repeats" python_keys numpy "$wide" /x /y)
cp_s=-
[ "$have_cupy" = 1 ] && cp_s=$(repeat "$py_repeats" python_keys cupy "$wide" /x /y)
echo "| two f8 (few x uniform), 2^$wide_log2 rows, one 16-byte key | $one | $two | $np_s | $cp_s | $(ratio "$np_s" "$two") | $(ratio "$cp_s" "$two") |"
fi
[[ $parts == *" select "* ]] || exit 0

gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
for dist in uniform few; do
  sel=$work/sel_$dist.h5
  [ -e "$sel" ] || gen "$sel" -d /keys --count $((1 << sel_log2)) --type u4 --dist "$dist"
  cat "$sel" >/dev/null
  echo
  echo "| 2^$sel_log2 u4 ($dist) | ranks | full sort | --top 1000 | --unique --counts | distinct keys |"
  echo "|---|---:|---:|---:|---:|---:|"
  for np in $sel_ranks; do
    full=$(repeat "$repeats" h5gsort_np "$np" "$sel" -d /keys)
    top=$(repeat "$repeats" h5gsort_np "$np" "$sel" -d /keys --top 1000)
    uniq=$(repeat "$repeats" h5gsort_np "$np" "$sel" -d /keys --unique --counts /counts)
    distinct=$(python3 -c 'import h5py,sys; print(h5py.File(sys.argv[1],"r")["/keys"].shape[0])' "$work/out.h5")
    echo "| whole process, s | $np ($gpus GPUs) | $full | $top | $uniq | $distinct |"
  done
done
