#!/bin/bash
# Example pipeline: generate -> sort -> verify as three Slurm jobs, each starting only when the
# one before it succeeded (--dependency=afterok). If a stage fails, the stages after it are
# cancelled (--kill-on-invalid-dep=yes) instead of waiting in the queue for ever.
#
#   jobs/pipeline.sh [sbatch options for every stage, e.g. -p gpu -A myproject]
#
# Settings (environment, with defaults):
#   H5GSORT_WORKDIR   directory for the files and job outputs   ($PWD/h5gsort-pipeline)
#   H5GSORT_BIN_DIR   where h5gsort and h5gsort-gen are       (installed: PREFIX/bin;
#                                                              in the repository: build/bin)
#   H5GSORT_TASKS     MPI ranks of the generate and sort stages (4: one per GPU)
#   H5GSORT_COUNT, H5GSORT_TYPE, H5GSORT_DIST, H5GSORT_SEED   the generated keys
#                     (100000000, u4, uniform, 1)
#   H5GSORT_DATASET   dataset path (/keys)
#   H5GSORT_OPTIONS   extra options of the sort stage (see h5gsort.sbatch), e.g. "--verify"
# Prints one line per stage, "<stage> <job id>". The verify stage is `h5gsort --check`: the output
# is in order and holds the input's keys (count and checksum). In a real pipeline, replace the
# generate stage by the job that writes your data and the verify stage by your analysis.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
workdir=${H5GSORT_WORKDIR:-$PWD/h5gsort-pipeline}
# installed (PREFIX/share/h5gsort/jobs: PREFIX/bin), else run from the repository (build/bin), as
# jobs/demo.sh tells them apart
default_bin=$here/../build/bin
if [ -x "$here/../../../bin/h5gsort" ] && [ ! -d "$here/../.ci" ]; then default_bin=$here/../../../bin; fi
bin_dir=${H5GSORT_BIN_DIR:-$(cd "$default_bin" 2>/dev/null && pwd || echo "$default_bin")}
tasks=${H5GSORT_TASKS:-4}
dataset=${H5GSORT_DATASET:-/keys}
input=$workdir/input.h5
output=$workdir/sorted.h5
mkdir -p "$workdir"

# The job commands are single strings (--wrap): quote every path in them.
generate=$(printf '%q ' srun --mpi=pmix "$bin_dir/h5gsort-gen" "$input" -d "$dataset" --force \
  --count "${H5GSORT_COUNT:-100000000}" --type "${H5GSORT_TYPE:-u4}" \
  --dist "${H5GSORT_DIST:-uniform}" --seed "${H5GSORT_SEED:-1}")
verify=$(printf '%q ' srun --mpi=pmix "$bin_dir/h5gsort" --check "$output" -d "$dataset" \
  --against "$input")

common=(--parsable --chdir="$workdir")
gen_job=$(sbatch "${common[@]}" --job-name=generate --output=%x-%j.out --ntasks="$tasks" \
  "$@" --wrap="$generate")
# h5gsort.sbatch asks for one GPU per task; --force: a rerun replaces the previous output.
sort_job=$(H5GSORT="$bin_dir/h5gsort" sbatch "${common[@]}" --ntasks-per-node="$tasks" \
  --dependency=afterok:"$gen_job" --kill-on-invalid-dep=yes \
  "$@" "$here/h5gsort.sbatch" "$input" "$output" "$dataset" --force)
verify_job=$(sbatch "${common[@]}" --job-name=verify --output=%x-%j.out --ntasks="$tasks" \
  --dependency=afterok:"$sort_job" --kill-on-invalid-dep=yes \
  "$@" --wrap="$verify")

echo "generate $gen_job"
echo "sort $sort_job"
echo "verify $verify_job"
echo "job outputs in $workdir; follow with: squeue -j $gen_job,$sort_job,$verify_job" >&2
