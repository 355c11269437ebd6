#!/usr/bin/env bash
# Scaling benchmark on one host with 1 to 8 GPUs (issue 8): h5gsort on G GPUs, exchange over MPI
# and over NCCL, against NCCL's own all-to-all of the same bytes (bench_nccl_alltoall).
#   strong: one dataset of 2^LOG2_STRONG uint32 keys (default 16 GiB) on every G; speed-up vs 1 GPU
#   weak:   2^LOG2_WEAK uint32 keys per GPU (default 4 GiB); efficiency = t(1 GPU) / t(G GPUs)
# Every figure is the median of REPEATS runs after one warm-up run, input in the page cache, times
# from h5gsort's --report (process start-up excluded); the phases come from the median run (the
# lower middle one for an even REPEATS). A run that is the same as one already measured (the weak
# file of G GPUs is the strong file when LOG2_WEAK + log2(G) == LOG2_STRONG) is measured once.
# Tables go to stdout (Markdown), progress to stderr.
#   bench/scaling.sh [WORKDIR]   (default /tmp/h5gsort-scaling)
#   env: BIN (build/bin), REPEATS (3), GPUS (GPU counts to run; default 1 2 4 8 up to the GPUs
#        nvidia-smi lists; with no GPU a CPU dry run on 1 2 4 ranks, exchange mpi only),
#        LOG2_STRONG (32), LOG2_WEAK (30), PARTS ("strong weak")
# Estimate on 4 x H200 with the defaults, from 4 GiB sorted in ~3.5 s and 16 GiB in ~13 s on 1 GPU,
# and h5gsort-gen at 0.4 GB/s on this 2-core machine (16 ranks; faster with 16 cores per GPU):
#   generating the 16, 4 and 8 GiB inputs (28 GiB)                      0.3-1.2 min
#   strong: 5 rows (1; 2 and 4 x mpi, nccl) x 4 runs of 16 GiB, 6-13 s    2.5-4.5 min
#   weak: 1 x 4 GiB + 2 x 8 GiB rows x 4 runs (the 4-GPU rows are the strong ones)  ~1 min
#   NCCL bench (3 calls), mpirun and CUDA start-up (~1-2 s a run)         ~0.5-1 min
#   total about 5-7 min, 8 at worst. If that is too long for one call, split it:
#   PARTS=strong, then PARTS=weak (the inputs are reused; the 4-GPU weak rows are measured again).
# On 8 GPUs split it: PARTS=strong (7 rows), then PARTS=weak GPUS="1 2 8" (adds a 32 GiB input).
set -euo pipefail
bin=${BIN:-build/bin}
work=${1:-/tmp/h5gsort-scaling}
repeats=${REPEATS:-3}
log2_strong=${LOG2_STRONG:-32}
log2_weak=${LOG2_WEAK:-30}
parts=${PARTS:-strong weak}
mpirun=(mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -x PATH)
gpus_present=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU' || true)
gpu_name=$( (nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo "no GPU") | head -1)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}

fail() { echo "scaling.sh: $*" >&2; exit 1; }
if [ "$gpus_present" -gt 0 ]; then
  backend=cuda exchanges="mpi nccl"
  default_gpus=$(for g in 1 2 4 8; do if [ "$g" -le "$gpus_present" ]; then echo "$g"; fi; done)
else # dry run: CPU backend; NCCL needs one GPU per rank
  backend=cpu exchanges=mpi
  default_gpus="1 2 4"
fi
gpu_counts=${GPUS:-$default_gpus}
for g in $gpu_counts; do
  [[ $g =~ ^[1-9][0-9]*$ ]] || fail "GPUS must list positive counts, not '$g'"
  [ "$gpus_present" -eq 0 ] || [ "$g" -le "$gpus_present" ] ||
    fail "GPUS asks for $g GPUs, nvidia-smi lists $gpus_present (one rank per GPU)"
done
for part in $parts; do
  [ "$part" = strong ] || [ "$part" = weak ] || fail "PARTS takes strong and/or weak, not '$part'"
done
tools="h5gsort h5gsort-gen"
[ "$backend" = cpu ] || tools="$tools bench_nccl_alltoall"
for tool in $tools; do
  [ -x "$bin/$tool" ] || fail "$bin/$tool not found (set BIN; bench_nccl_alltoall needs NCCL)"
done
mkdir -p "$work"
rm -rf "$work/reports" "$work/logs"
mkdir -p "$work/reports" "$work/logs"
out="$work/out.h5"
rows="$work/rows.tsv"
: >"$rows"

logged() { # logged NAME CMD...: runs CMD, stdout to logs/NAME.out; on failure prints both and exits
  if ! "${@:2}" >"$work/logs/$1.out" 2>"$work/logs/$1.err"; then
    echo "scaling.sh: failed: ${*:2}" >&2
    cat "$work/logs/$1.out" "$work/logs/$1.err" >&2
    exit 1
  fi
}
count_of() { # count_of PART G -> keys in that part's dataset for G GPUs
  if [ "$1" = strong ]; then echo $((1 << log2_strong)); else echo $(((1 << log2_weak) * $2)); fi
}
input_of() { echo "$work/in_u4_$1.h5"; } # by key count, so equal datasets share one file

# Disk: every input still to generate plus the largest output, with a margin.
need=0 largest=0 planned=" "
for part in $parts; do
  for g in $gpu_counts; do
    n=$(count_of "$part" "$g")
    [ "$n" -le "$largest" ] || largest=$n
    [[ $planned == *" $n "* ]] && continue
    planned="$planned$n "
    [ -e "$(input_of "$n")" ] || need=$((need + 4 * n))
  done
done
need=$(((need + 4 * largest) / 100 * 102 + (256 << 20)))
avail=$(df -B1 --output=avail "$work" | tail -1 | tr -d ' ')
[ "$avail" -ge "$need" ] ||
  fail "not enough disk in $work: $((need >> 20)) MiB needed (inputs to generate + output), $((avail >> 20)) MiB free"

generate() { # generate COUNT: the uniform uint32 input of COUNT keys, unless it exists
  local file
  file=$(input_of "$1")
  if [ ! -e "$file" ]; then
    local start
    start=$(date +%s.%N)
    rm -f "$work/generating.h5" # written under another name: a failed run leaves no input behind
    logged "gen_$1" "${mpirun[@]}" -np 16 "$bin/h5gsort-gen" "$work/generating.h5" -d /keys \
      --count "$1" --type u4 --dist uniform --seed 42
    mv "$work/generating.h5" "$file"
    echo "generated $file ($(($1 * 4 >> 20)) MiB) in $(echo "$start $(date +%s.%N)" | awk '{printf "%.1f", $2 - $1}') s" >&2
  fi
  cat "$file" >/dev/null # into the page cache
}

declare -A sorted_reports nccl_seconds
measure() { # measure PART G EXCHANGE COUNT: appends a row to rows.tsv
  local part=$1 g=$2 exchange=$3 n=$4 key="$4 $2 $3" in name nccl=-
  in=$(input_of "$n")
  if [ -z "${sorted_reports[$key]:-}" ]; then
    local reports="" run
    for run in $(seq 0 "$repeats"); do # run 0 is the warm-up
      name="n${n}_g${g}_${exchange}_$run"
      rm -f "$out"
      logged "$name" "${mpirun[@]}" -np "$g" --map-by "slot:PE=$(( $(nproc) / g > 0 ? $(nproc) / g : 1 ))" "$bin/h5gsort" "$in" "$out" -d /keys -q \
        --backend "$backend" --exchange "$exchange" --report "$work/reports/$name.json"
      [ "$run" -eq 0 ] || reports="$reports${reports:+,}$work/reports/$name.json"
    done
    rm -f "$out"
    sorted_reports[$key]=$reports
    echo "$part: $g GPU(s), exchange $exchange, $n keys: total seconds $(python3 -c 'import json, sys
print(" ".join("%.3f" % json.load(open(p))["seconds"]["total"] for p in sys.argv[1].split(",")))' "$reports")" >&2
  fi
  if [ "$g" -gt 1 ] && [ "$backend" = cuda ]; then
    local bytes=$((n / g * 4)) # keys per rank as h5gsort cuts them (N/P), 4 bytes each
    if [ -z "${nccl_seconds["$g $bytes"]:-}" ]; then
      name="nccl_g${g}_$bytes"
      logged "$name" "${mpirun[@]}" -np "$g" "$bin/bench_nccl_alltoall" "$bytes"
      nccl_seconds["$g $bytes"]=$(awk '$1 == "nccl_alltoall" {for (i = 2; i < NF; i++) if ($i == "seconds") print $(i + 1)}' "$work/logs/$name.out")
      [ -n "${nccl_seconds["$g $bytes"]}" ] || fail "no seconds in $work/logs/$name.out"
    fi
    nccl=${nccl_seconds["$g $bytes"]}
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$part" "$g" "$exchange" "$n" "$nccl" "${sorted_reports[$key]}" >>"$rows"
}

print_table() { # print_table PART: the Markdown table of that part's rows
  python3 - "$rows" "$1" <<'PY'
import json, sys

part_wanted = sys.argv[2]
rows = []
for line in open(sys.argv[1]):
    part, g, exchange, n, nccl, reports = line.rstrip("\n").split("\t")
    runs = sorted((json.load(open(p)) for p in reports.split(",")), key=lambda r: r["seconds"]["total"])
    rows.append(dict(part=part, g=int(g), exchange=exchange, n=int(n), nccl=None if nccl == "-" else float(nccl),
                     report=runs[(len(runs) - 1) // 2]))

def ordered_keys(reports, field):
    keys = []
    for r in reports:
        keys += [k for k in r.get(field, {}) if k not in keys]
    return keys

def table(part):
    body = [r for r in rows if r["part"] == part]
    if not body:
        return
    n = body[0]["n"] // (body[0]["g"] if part == "weak" else 1)
    title = ("Weak scaling: %d uint32 keys (%.2f GiB) per GPU (efficiency target >= 80%% at 8 GPUs)" if part == "weak"
             else "Strong scaling: %d uint32 keys (%.2f GiB) on every GPU count") % (n, n * 4 / 2**30)
    reps = [r["report"] for r in body]
    phases = [k for k in ordered_keys(reps, "seconds") if k != "total" and any(r["seconds"].get(k, 0) for r in reps)]
    gpu = [(f, k) for f in ("gpu_copy_seconds", "gpu_overlap_seconds") for k in ordered_keys(reps, f)]
    one = next((r for r in body if r["g"] == 1), None)
    weak = part == "weak"
    head = ["GPUs", "exchange", "keys", "total s", "speed-up (keys/s vs 1 GPU)"] + (["efficiency"] if weak else [])
    head += phases + ["gpu " + k for f, k in gpu] + ["exchange GB/s per rank", "NCCL a2a s", "ratio"]
    print("\n## %s\n" % title)
    print("devices: %s\n" % "; ".join(sorted({r["devices"] or r["backend"] for r in reps})))
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * 2 + "---:|" * (len(head) - 2))
    for r in body:
        rep = r["report"]
        total = rep["seconds"]["total"]
        cells = [str(r["g"]), r["exchange"], "2^%d" % (r["n"].bit_length() - 1) if r["n"] & (r["n"] - 1) == 0 else str(r["n"]),
                 "%.3f" % total]
        if one and total > 0:
            cells.append("%.2f" % ((r["n"] / total) / (one["n"] / one["report"]["seconds"]["total"])))
            if weak:
                cells.append("%.0f%%" % (100 * one["report"]["seconds"]["total"] / total))
        else:
            cells += ["-"] * (2 if weak else 1)
        cells += ["%.3f" % rep["seconds"].get(k, 0) for k in phases]
        cells += ["%.3f" % rep.get(f, {}).get(k, 0) for f, k in gpu]
        exchange_s = rep["seconds"].get("exchange", 0)
        cells.append("%.1f" % (rep["exchanged_bytes"] / r["g"] / exchange_s / 1e9) if r["g"] > 1 and exchange_s > 0 else "-")
        cells.append("%.4f" % r["nccl"] if r["nccl"] is not None else "-")
        cells.append("%.2f" % (exchange_s / r["nccl"]) if r["nccl"] else "-")
        print("| " + " | ".join(cells) + " |")

table(part_wanted)
PY
}

commit=$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo "?")
echo "# bench/scaling.sh on $gpu_name x $gpus_present, $(nproc) cores, $started, commit $commit"
echo
echo "uint32 uniform keys (seed 42), backend $backend, one rank per GPU, median of $repeats runs after a warm-up;"
echo "seconds are the slowest rank's; exchange GB/s = bytes sent to other ranks per rank / exchange seconds;"
echo "NCCL a2a = bench_nccl_alltoall on the same bytes per rank; ratio = exchange / NCCL a2a (target <= 1.5)."
for part in $parts; do # each table as soon as its part is done: a cut-off run keeps what it measured
  for g in $gpu_counts; do
    n=$(count_of "$part" "$g")
    generate "$n"
    for exchange in $exchanges; do
      [ "$g" -gt 1 ] || [ "$exchange" = mpi ] || continue
      measure "$part" "$g" "$exchange" "$n"
    done
  done
  print_table "$part"
done
