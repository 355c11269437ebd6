#!/usr/bin/env bash
# Runs one recipe of README.md as written (issue 55: each recipe a test): its inputs made by
# recipes.py in a temporary directory, the fenced block run there with `h5gsort` the build's and
# `mpiexec`, `srun` and `sbatch` the stand-ins of standin/, then its outputs checked against numpy.
#   recipe.sh NAME BIN_DIR "MPIEXEC ... -n"
set -euo pipefail
name=$1 BIN=$2
export H5G_README_MPIEXEC=$3 # the launcher, its options, its -n flag last (tests/CMakeLists.txt)
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d "$(dirname "$BIN")/readme-tmp.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/run" "$work/ref" "$work/slurm"
"$py" "$here/recipes.py" block "$here/../../README.md" "$name" >"$work/recipe.sh"
# the recipes name jobs/ as the repository has it
ln -s "$here/../../jobs" "$work/run/jobs"
"$py" "$here/recipes.py" make "$name" "$work/run" "$work/ref"
echo "== recipe $name:"
cat "$work/recipe.sh"
echo "=="
(cd "$work/run" && PATH="$here/standin:$BIN:$PATH" H5G_README_SLURM="$work/slurm" \
  bash -euo pipefail "$work/recipe.sh") || { echo "FAIL: recipe $name exited $?" >&2; exit 1; }
for out in "$work"/run/*.out; do # the stand-in sbatch's job outputs
  [ -e "$out" ] && { echo "== $(basename "$out"):"; cat "$out"; }
done
"$py" "$here/recipes.py" check "$name" "$work/run" "$work/ref"
