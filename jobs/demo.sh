#!/usr/bin/env bash
# The main job on an embedded default: generate a dataset, sort it with 4 MPI ranks, verify it.
#   jobs/demo.sh [COUNT]        (default 16777216 uint64 keys, zipf-distributed: many duplicates)
# In the source tree it installs missing Debian packages (.ci/deps), builds into build/ if
# needed and checks the output with the independent checker; installed (PREFIX/share/h5gsort/
# jobs/demo.sh) it runs PREFIX/bin's h5gsort and checks with `h5gsort --check`. Works in a temp dir.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
count=${1:-16777216}
ranks=${H5GSORT_DEMO_RANKS:-4}
if [ -x "$here/../../../bin/h5gsort" ] && [ ! -d "$here/../.ci" ]; then
  bin=$(cd "$here/../../../bin" && pwd) # installed
  checker=()
else
  cd "$here/.."
  .ci/deps
  [ -x build/bin/h5gsort ] && [ -x build/bin/h5gsort_check ] ||
    { cmake -S . -B build >/dev/null && cmake --build build -j"$(nproc)" >/dev/null; }
  bin=$PWD/build/bin
  checker=("$bin/h5gsort_check")
fi
# Root in containers and fewer cores than ranks are both common where this runs first.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# mpiexec's start without hwloc's GPU discovery unless set, even empty (docs/launch.md):
# 0.3 s less per launch on the H100 machine
export HWLOC_COMPONENTS=${HWLOC_COMPONENTS--cuda,-nvml,-opencl,-rsmi,-levelzero}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
set -x
mpiexec -n "$ranks" --bind-to none "$bin/h5gsort-gen" "$work/input.h5" -d /particles/id \
  --count "$count" --type u8 --dist zipf --seed 2026
mpiexec -n "$ranks" --bind-to none "$bin/h5gsort" "$work/input.h5" "$work/sorted.h5" \
  -d /particles/id --verify --report "$work/report.json" -v
if [ ${#checker[@]} -gt 0 ]; then
  "${checker[@]}" "$work/input.h5" -d /particles/id "$work/sorted.h5" -o /particles/id
else
  mpiexec -n "$ranks" --bind-to none "$bin/h5gsort" --check "$work/sorted.h5" -d /particles/id \
    --against "$work/input.h5"
fi
cat "$work/report.json"
