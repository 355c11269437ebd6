#!/usr/bin/env bash
# Runs tests/clients/clients.py with a Python that has the clients (h5py, netCDF4, xarray,
# PyTables: Debian's python3-h5py python3-netcdf4 python3-xarray python3-tables, which .ci/deps
# installs) and ncdump/h5diff on PATH. H5G_TEST_BACKEND=cuda skips (77) where no GPU is usable.
#   clients.sh BIN_DIR "MPIEXEC ... -n" RANKS CASE
source "$(dirname "$0")/../e2e/lib.sh" --backend-only
test_backend
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
modules="h5py, netCDF4, xarray"
[ "$4" = pytables ] && modules="$modules, tables"
for py in python3 /usr/bin/python3; do
  if "$py" -c "import $modules" 2>/dev/null; then
    exec "$py" "$(dirname "$0")/clients.py" "$@"
  fi
done
echo "FAIL: no python3 with $modules (run .ci/deps)" >&2
exit 1
