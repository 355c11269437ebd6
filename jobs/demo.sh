#!/usr/bin/env bash
# The main job on an embedded default: generate a dataset, sort it with 4 MPI ranks, verify it.
#   jobs/demo.sh [COUNT]        (default 16777216 uint64 keys, zipf-distributed: many duplicates)
# Installs missing Debian packages (.ci/deps), builds into build/ if needed, works in a temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-16777216}
ranks=${H5GSORT_DEMO_RANKS:-4}
.ci/deps
[ -x build/bin/h5gsort ] && [ -x build/bin/h5gsort_check ] ||
  { cmake -S . -B build >/dev/null && cmake --build build -j"$(nproc)" >/dev/null; }
# Root in containers and fewer cores than ranks are both common where this runs first.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
set -x
mpiexec -n "$ranks" --bind-to none build/bin/h5gsort-gen "$work/input.h5" -d /particles/id --count "$count" \
  --type u8 --dist zipf --seed 2026
mpiexec -n "$ranks" --bind-to none build/bin/h5gsort "$work/input.h5" "$work/sorted.h5" -d /particles/id \
  --verify --report "$work/report.json" -v
build/bin/h5gsort_check "$work/input.h5" -d /particles/id "$work/sorted.h5" -o /particles/id
cat "$work/report.json"
