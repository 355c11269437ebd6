#!/usr/bin/env bash
# End-to-end benchmark on a GPU machine (issue 15): what a user waits for, whole processes with
# the launcher included, beside the raw I/O bound of the same bytes on the same machine and what
# users run today. Rows per dataset: the raw bound (bench_raw_io: threaded pread of the dataset's
# bytes + threaded buffered pwrite of them, no HDF5; issue 15's definition), the fastest raw copy
# found (the same pread + threads copying into a shared mapping of the output, h5gsort's write
# method, one copy per thread), `cp`, on a GPU machine the same bytes' round trip through the GPU
# without HDF5, MPI or a sort (bench_staged_io: through a slice-sized pinned buffer, h5gsort's
# way, and through a small pinned ring), h5gsort launched as docs/launch.md says (every rank given
# its cores, mpirun --bind-to none, Open MPI's session directory in /dev/shm, hwloc's GPU components
# left out of mpirun's start, the one-node transport named with --mca), the same with only
# --bind-to none, h5gsort with mpirun's default binding (one core when P <= 2), h5py + numpy.sort
# and h5py + cupy.sort (the 4 GiB and f8 sets). Medians of REPEATS runs after a warm-up, files in
# the page cache, printed as a Markdown table; in-process phases below it, the whole process of
# each h5gsort row broken down from launcher start to launcher exit (issue 30: rank 0's
# H5GSORT_TIMELINE between `date` stamps around the launcher), and the targets of issues 15 and 30
# computed from the table.
#   bench/e2e.sh [WORKDIR]   env: BIN (build/bin), REPEATS (3), PY_REPEATS (1), SETS (see below),
#                            OLD_BIN (an earlier build's bin: one more h5gsort row, for comparison),
#                            PYTHON (python3: the interpreter of the h5py rows), SYNC (1: a
#                            `sync`, not timed, before every run, so that no run pays for the
#                            writeback of the one before: the raw copy gains 20-30% on the H100
#                            machine, h5gsort's fixed start-up and tear-down do not; the issue's
#                            figures were taken without)
set -euo pipefail
bin=${BIN:-build/bin}
work=${1:-/tmp/h5gsort-e2e}
repeats=${REPEATS:-3}
py_repeats=${PY_REPEATS:-1}
# dataset sets: TYPE:LOG2[:EXTRA]; EXTRA py: also the h5py rows; ooc: --device-memory 512M;
# records: a table {row u8, det u2, name S5, key TYPE, x f8} sorted by its key field, whole
# records moved; records2: the same with few key values, sorted by the fields key, det
sets=${SETS:-"u4:30:py u4:32 f8:28:py u4:30:ooc"}
cores=$(nproc)
mpirun=(mpirun --allow-run-as-root --oversubscribe -x LD_LIBRARY_PATH -x PATH)
gpus=$( (nvidia-smi -L 2>/dev/null || true) | wc -l)
gpu_name=$( (nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo "no GPU") | head -1)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
mkdir -p "$work"

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
repeat() { # repeat COUNT CMD... -> median seconds of COUNT runs after a warm-up
  settle
  "${@:2}" >/dev/null
  for _ in $(seq "$1"); do settle && "${@:2}"; done | median | xargs printf '%.3f\n'
}
settle() { [ "${SYNC:-0}" = 0 ] || sync; } # SYNC: no writeback of the run before under way
wall() { # wall seconds of a whole command (launcher included); its output goes to $work/last.txt,
  # its start and end (epoch seconds) to $work/last.wall
  local start end
  start=$(date +%s.%N)
  "$@" >"$work/last.txt" 2>&1 || { echo "failed: $*" >&2; cat "$work/last.txt" >&2; return 1; }
  end=$(date +%s.%N)
  printf 'launch_start %s\nlaunch_end %s\n' "$start" "$end" >"$work/last.wall"
  python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$end"
}
h5gsort_run() { # launch in out [h5gsort options]: whole-process seconds; the run's launch
  # stamps and timeline (an earlier build writes none) go to $work/timelines.txt, one block a run
  local binding=$1 in=$2 out=$3
  shift 3
  rm -f "$out" "$work/timeline.txt"
  local launch=("${mpirun[@]}" -np 1 -x H5GSORT_TIMELINE) program=${H5GSORT:-$bin/h5gsort}
  [ "$binding" = default ] || launch+=(--bind-to none)
  # docs/launch.md's launch: Open MPI's session directory in memory, not under /tmp on the disk;
  # hwloc's GPU discovery left out of mpirun's start; the one-node transport named
  [ "$binding" = readme ] &&
    launch=(env TMPDIR=/dev/shm HWLOC_COMPONENTS=-cuda,-nvml,-opencl,-rsmi,-levelzero "${launch[@]}"
            --mca pml ob1 --mca btl self,vader,tcp)
  H5GSORT_TIMELINE=$work/timeline.txt \
    wall "${launch[@]}" "$program" "$in" "$out" -d /keys "$@" -q --report "$work/report.json"
  [ -e "$work/timeline.txt" ] || return 0
  { cat "$work/last.wall" "$work/timeline.txt"; echo; } >>"$work/timelines.txt"
}
raw_run() { # in out pwrite|mmap: the raw bound of the dataset's bytes
  rm -f "$2"
  local range
  range=$(h5dump -p -H -d /keys "$1" | awk '$1 == "OFFSET" {o = $2} $1 == "SIZE" && !s {s = $2} END {print o, s}')
  wall "$bin/bench_raw_io" "$1" ${range% *} ${range#* } "$2" "$cores" "$3"
}
staged_run() { # slice|ring in out [verify]: the bytes' way through the GPU (bench/staged_io.cu)
  rm -f "$3"
  local range
  range=$(h5dump -p -H -d /keys "$2" | awk '$1 == "OFFSET" {o = $2} $1 == "SIZE" && !s {s = $2} END {print o, s}')
  wall "$bin/bench_staged_io" "$1" "$2" ${range% *} ${range#* } "$3" "$cores" 128 4 ${4:-}
}
cp_run() { rm -f "$2"; wall cp "$1" "$2"; }
python_run() { # numpy|cupy in out: whole process, interpreter start included
  rm -f "$3"
  wall "${PYTHON:-python3}" - "$@" <<'PY'
import sys, h5py
lib, src, dst = sys.argv[1:4]
with h5py.File(src, "r") as f:
    keys = f["/keys"][...]
if lib == "cupy":
    import cupy
    keys = cupy.sort(cupy.asarray(keys)).get()
else:
    import numpy
    keys = numpy.sort(keys)
with h5py.File(dst, "w") as f:
    f.create_dataset("/keys", data=keys)
PY
}
phases() { # the last report's in-process phases
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("total %.3f: " % r["seconds"]["total"] + "  ".join("%s %.3f" % kv for kv in r["seconds"].items() if kv[1] >= 0.005 and kv[0] != "total") + "  (h2d %.3f, d2h %.3f)" % (r["gpu_copy_seconds"]["h2d"], r["gpu_copy_seconds"]["d2h"]) + "; io threads %d" % r["rank_detail"][0]["io_threads"])' "$work/report.json"
}
gen() { # file type log2 [h5gsort-gen options: the keys' distribution, --table]
  [ -e "$1" ] || "${mpirun[@]}" -np 8 --bind-to none "$bin/h5gsort-gen" "$1" -d /keys --count $((1 << $3)) --type "$2" "${@:4}" --seed 42 >/dev/null
  cat "$1" >/dev/null # into the page cache
}
breakdown() { # label WHAT=TIMELINES...: the whole process of each row's median run, stage by stage
  python3 - "$@" <<'PY'
import sys
label, columns = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
# rows from one mark to the next; the phases (the span from one phase:NAME mark to the next mark
# goes to NAME) fill the gap between gpu_context_ready and report_written
EDGES = [("launcher start -> main(): launcher, exec, loader", "launch_start", "main"),
         ("MPI_Init (from main())", "main", "mpi_init_done"),
         ("-> GPU context ready: options, validate, plan (the context made behind validate)",
          "mpi_init_done", "gpu_context_ready"),
         None,
         ("report written -> commit done: input re-checked, rename (in place: fsyncs)", "report_written",
          "commit_done"),
         ("-> pipeline returned: host buffers freed, backend, transport", "commit_done",
          "pipeline_done"),
         ("-> MPI_Finalize: report freed", "pipeline_done", "mpi_finalize"),
         ("MPI_Finalize (HDF5 closed with it)", "mpi_finalize", "mpi_finalize_done"),
         ("exit -> launcher exit: timeline written, process exit (GPU context released), "
          "launcher's exit", "exit", "launch_end")]
def median_run(path): # the runs after the warm-up; the middle one by wall time (lower for even)
    blocks = [sorted(((l.split()[0], float(l.split()[1])) for l in b.splitlines()),
                     key=lambda mark: mark[1]) for b in open(path).read().strip().split("\n\n")]
    wall = lambda marks: dict(marks)["launch_end"] - dict(marks)["launch_start"]
    runs = sorted(blocks[1:] or blocks, key=wall)
    return runs[(len(runs) - 1) // 2], len(runs)
def stages(marks):
    at, phases, phase = dict(marks), {}, None
    for (name, t), (_, t_next) in zip(marks, marks[1:]):
        phase = name[6:] if name.startswith("phase:") else phase
        if at.get("gpu_context_ready", t_next) <= t and t_next <= at.get("report_written", t):
            phases[phase] = phases.get(phase, 0) + t_next - t
    rows = {}
    for e in EDGES:
        if e is None:
            rows.update(("phase " + k + (", the report at its end" if k == "write" else ""), v)
                        for k, v in phases.items())
        elif e[1] in at and e[2] in at:
            rows[e[0]] = at[e[2]] - at[e[1]]
    return rows, at["launch_end"] - at["launch_start"]
found = [(what,) + median_run(path) for what, path in columns]
cols = [(what, n) + stages(marks) for what, marks, n in found]
names = []
for _, _, rows, _ in cols:
    names += [k for k in rows if k not in names]
counts = "/".join(str(c[1]) for c in cols)
print("\n%s, the median of %s runs of each (seconds):\n" % (label, counts))
print("| stage | " + " | ".join(c[0] for c in cols) + " |")
print("|---|" + "---:|" * len(cols))
fmt = lambda v: ("%.3f" % v).replace("-0.000", "0.000")
for k in names:
    print("| %s | %s |" % (k, " | ".join(fmt(c[2][k]) if k in c[2] else "-" for c in cols)))
print("| sum of the stages | %s |" % " | ".join(fmt(sum(c[2].values())) for c in cols))
print("| whole process, launcher start -> launcher exit | %s |"
      % " | ".join(fmt(c[3]) for c in cols))
print("| unaccounted | %s |" % " | ".join(fmt(c[3] - sum(c[2].values())) for c in cols))
PY
}
ratio() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }

echo "# bench/e2e.sh on $gpu_name x $gpus, $cores cores, $(free -g | awk '/Mem/ {print $2}') GiB, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "Whole-process wall seconds (launcher included), median of $repeats after a warm-up (h5py rows: $py_repeats)$([ "${SYNC:-0}" = 0 ] || echo ", each after a sync")."
echo
echo "| dataset | what | seconds | x raw bound | x fastest raw | x cp |"
echo "|---|---|---:|---:|---:|---:|"
: >"$work/phases.txt"
: >"$work/breakdown.md"
declare -A seconds # "LOG2 TYPE EXTRA what" -> seconds, for the targets
against_old=()     # with OLD_BIN: each set's docs/launch.md launch / the earlier build's
row() { # label what seconds key
  echo "| $1 | $2 | $3 | $(ratio "$3" "$raw") | $(ratio "$3" "$mapped") | $(ratio "$3" "$copy") |"
  seconds[$4]=$3
}
for spec in $sets; do
  IFS=: read -r type log2 extra <<<"$spec"
  # table: the input's name suffix (py and ooc sets share one file); form: h5gsort-gen's options
  table= form=(--dist uniform) opts=() row_bytes=${type:1} what=
  case $extra in
    ooc) opts=(--device-memory 512M) what=", --device-memory 512M" ;;
    records) table=_$extra form+=(--table) opts=(--key-field key) what="by their key" ;;
    records2) table=_$extra form=(--dist few --table) opts=(--key-field key,det) what="few keys, by key, det" ;;
  esac
  [ -z "$table" ] || { row_bytes=$((row_bytes + 23)) && what=", records of $row_bytes B, $what"; }
  in="$work/in_${type}_$log2$table.h5" out="$work/out.h5"
  gen "$in" "$type" "$log2" "${form[@]}"
  label="$type 2^$log2 ($(( (1 << log2) * row_bytes / 1048576 )) MiB)$what"
  raw=$(repeat "$repeats" raw_run "$in" "$out" pwrite)
  echo "$label raw bound: $(cat "$work/last.txt")" >>"$work/phases.txt"
  mapped=$(repeat "$repeats" raw_run "$in" "$out" mmap)
  echo "$label fastest raw: $(cat "$work/last.txt")" >>"$work/phases.txt"
  copy=$(repeat "$repeats" cp_run "$in" "$out")
  key="$log2 $type $extra"
  row "$label" "raw bound: $cores-thread pread + pwrite" "$raw" "$key raw"
  row "$label" "fastest raw: $cores-thread pread + copy into a mapping" "$mapped" "$key mapped"
  row "$label" cp "$copy" "$key cp"
  if [ "$gpus" -gt 0 ] && [ -x "$bin/bench_staged_io" ]; then # issue 30: the GPU's round trip
    for way in slice ring; do
      staged_run "$way" "$in" "$out" verify >/dev/null # once checked: OUT holds the input's bytes
      t=$(repeat "$repeats" staged_run "$way" "$in" "$out")
      echo "$label GPU round trip ($way): $(cat "$work/last.txt")" >>"$work/phases.txt"
      case $way in
        slice) what="GPU round trip, no HDF5/MPI/sort: slice-sized pinned buffer (h5gsort's way)" ;;
        ring) what="GPU round trip, no HDF5/MPI/sort: 4 x 128 MiB pinned ring" ;;
      esac
      row "$label" "$what" "$t" "$key staged $way"
    done
  fi
  timelines=()
  for binding in readme none default; do
    case $binding in
      readme) what="h5gsort, HWLOC_COMPONENTS=-cuda,... TMPDIR=/dev/shm mpirun -np 1 --bind-to none --mca pml ob1 --mca btl self,vader,tcp (docs/launch.md's launch)" ;;
      none) what="h5gsort, mpirun -np 1 --bind-to none (transport: Open MPI's pick)" ;;
      default) what="h5gsort, mpirun -np 1 (default binding)" ;;
    esac
    : >"$work/timelines.txt"
    t=$(repeat "$repeats" h5gsort_run "$binding" "$in" "$out" "${opts[@]}")
    row "$label" "$what" "$t" "$key $binding"
    echo "$label $what: $(phases)" >>"$work/phases.txt"
    mv "$work/timelines.txt" "$work/timelines_$binding.txt"
    timelines+=("$binding=$work/timelines_$binding.txt")
  done
  breakdown "$label" "${timelines[@]}" >>"$work/breakdown.md"
  if [ -n "${OLD_BIN:-}" ]; then
    t=$(H5GSORT=$OLD_BIN/h5gsort repeat "$repeats" h5gsort_run readme "$in" "$out" "${opts[@]}")
    row "$label" "earlier h5gsort ($OLD_BIN), docs/launch.md's launch" "$t" "$key old"
    against_old+=("$label: $(ratio "${seconds[$key readme]}" "$t")")
  fi
  if [ "$extra" = py ]; then
    for lib in numpy cupy; do
      [ "$lib" = numpy ] || [ "$gpus" -ge 1 ] || continue
      t=$(repeat "$py_repeats" python_run "$lib" "$in" "$out")
      row "$label" "h5py + $lib.sort" "$t" "$key $lib"
    done
  fi
  rm -f "$out"
done
echo
echo "In-process phases of the last run of each (seconds, slowest rank):"
echo
sed 's/^/    /' "$work/phases.txt"
echo
echo "Whole process, launcher start to launcher exit, rank 0's H5GSORT_TIMELINE between \`date\`"
echo "stamps around the launcher; columns: the h5gsort rows above (readme: --bind-to none, Open MPI's"
echo "session directory in /dev/shm, hwloc's GPU components left out of mpirun's start, the one-node"
echo "transport named; none: --bind-to none alone, the transport Open MPI's pick; default: mpirun's"
echo "default binding)."
cat "$work/breakdown.md"
target() { # what numerator-key denominator-key limit (ratio <= limit; a negative limit: >= -limit)
  # a key of a "py" set stands for the same set run without the h5py rows too
  local a=${seconds[$2]:-${seconds[${2/ py /  }]:-}} b=${seconds[$3]:-${seconds[${3/ py /  }]:-}}
  [ -n "$a" ] && [ -n "$b" ] || return 0
  python3 -c "import sys; a, b, lim = map(float, sys.argv[2:5]); r = a / b
ok = r <= lim if lim > 0 else r >= -lim
print('- %s: %.2fx (target %s %.2fx): %s' % (sys.argv[1], r, '<=' if lim > 0 else '>=', abs(lim), 'met' if ok else 'MISSED'))" "$1" "$a" "$b" "$4"
}
echo
echo "Targets (issue 15), h5gsort launched as docs/launch.md says [readme], --bind-to none alone [none]:"
for launch in readme none; do
  target "16 GiB u4 / raw bound [$launch]" "32 u4  $launch" "32 u4  raw" 1.15
  target "16 GiB u4 / cp [$launch]" "32 u4  $launch" "32 u4  cp" 1.0
  # not the issue's: its 1.15x held to the fastest raw copy, a bound that moved with our writes
  target "16 GiB u4 / fastest raw, beyond the issue [$launch]" "32 u4  $launch" "32 u4  mapped" 1.15
  target "4 GiB u4 / raw bound [$launch]" "30 u4 py $launch" "30 u4 py raw" 1.4
  target "h5py + numpy / 4 GiB u4 [$launch]" "30 u4 py numpy" "30 u4 py $launch" -6
  target "h5py + cupy / 4 GiB u4 [$launch]" "30 u4 py cupy" "30 u4 py $launch" -4
  target "4 GiB u4 at --device-memory 512M / in core [$launch]" "30 u4 ooc $launch" "30 u4 py $launch" 1.25
done
echo
echo "Targets (issue 30), whole process / fastest raw copy, 1 GPU [readme, none as above]:"
for launch in readme none; do
  target "16 GiB u4 / fastest raw [$launch]" "32 u4  $launch" "32 u4  mapped" 1.35
  target "4 GiB u4 / fastest raw [$launch]" "30 u4 py $launch" "30 u4 py mapped" 1.6
  target "f8 2^28 / fastest raw [$launch]" "28 f8 py $launch" "28 f8 py mapped" 1.6
done
if [ ${#against_old[@]} -gt 0 ]; then
  echo
  echo "This build against the earlier one ($OLD_BIN), both docs/launch.md's launch (above 1: slower):"
  printf -- '- %s\n' "${against_old[@]}"
fi
rm -f "$work/phases.txt" "$work/breakdown.md" "$work"/timeline*.txt "$work/last.wall" "$work/out.h5"
