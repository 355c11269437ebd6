"""Files made by the real libraries that scientists write HDF5 with (netCDF-4 through
netCDF4-python, h5py dimension scales and references, PyTables), for tests/clients/clients.sh.
Usage: make_files.py DIR N. Every file holds a key dataset of N rows with ties, NaN-free."""
import sys

import h5py
import netCDF4
import numpy as np

try:
    import tables
except ImportError:  # the GPU machine has no PyTables: its case is not run there
    tables = None

out, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(7)
temp = rng.integers(0, max(n // 4, 1), n).astype("f4") + 0.5   # ties on purpose
obs = np.arange(n, dtype="f8") * 10.0
pressure = rng.normal(1000, 10, n).astype("f8")
xy = rng.integers(-50, 50, (n, 2)).astype("i4")

# netCDF-4: an unlimited dimension with its coordinate variable, a fixed dimension without one,
# compression, fill values, creation order as netCDF-C tracks it.
with netCDF4.Dataset(f"{out}/nc4.nc", "w", format="NETCDF4") as nc:
    nc.createDimension("obs", None)
    nc.createDimension("two", 2)
    nc.title = "h5gsort clients test"
    v = nc.createVariable("obs", "f8", ("obs",))
    v.units = "m"
    v[:] = obs
    v = nc.createVariable("temp", "f4", ("obs",), zlib=True, complevel=1, fill_value=-999.0)
    v.units = "K"
    v[:] = temp
    v = nc.createVariable("pressure", "f8", ("obs",))
    v[:] = pressure
    v = nc.createVariable("xy", "i4", ("obs", "two"))
    v[:] = xy

# netCDF-4 with fixed (not unlimited) dimensions: contiguous variables.
with netCDF4.Dataset(f"{out}/nc4fixed.nc", "w", format="NETCDF4") as nc:
    nc.createDimension("obs", n)
    nc.createVariable("obs", "f8", ("obs",))[:] = obs
    nc.createVariable("temp", "f4", ("obs",))[:] = temp
    nc.createVariable("pressure", "f8", ("obs",))[:] = pressure

# h5py dimension scales, with and without creation order tracked; object and region references;
# a dataset of references; hard links.
for name, track in (("scales", False), ("scales_tracked", True)):
    with h5py.File(f"{out}/{name}.h5", "w", track_order=track) as f:
        f.attrs["title"] = "scales"
        x = f.create_dataset("x", data=obs)
        x.make_scale("x")
        d = f.create_dataset("data", data=temp, track_order=track)
        d.dims[0].attach_scale(x)
        d.attrs["units"] = "K"
        p = f.create_dataset("p", data=pressure, chunks=(max(n // 8, 1),), compression="gzip")
        p.dims[0].attach_scale(x)
        c = f.create_dataset("cols", data=np.arange(2, dtype="i4"))
        c.make_scale("cols")
        m = f.create_dataset("xy", data=xy)
        m.dims[0].attach_scale(x)
        m.dims[1].attach_scale(c)
        f.create_group("other").create_dataset("v", data=np.arange(5))
        d.attrs["ref_x"] = x.ref
        d.attrs["ref_other"] = f["other/v"].ref
        d.attrs["region"] = f["other/v"].regionref[1:3]
        f.attrs["ref_data"] = d.ref
        refs = f.create_dataset("refs", (3,), dtype=h5py.ref_dtype)
        refs[0], refs[1], refs[2] = d.ref, x.ref, f["other/v"].ref
        rr = f.create_dataset("regions", (1,), dtype=h5py.regionref_dtype)
        rr[0] = f["other/v"].regionref[0:2]

with h5py.File(f"{out}/links.h5", "w") as f:
    g1 = f.create_group("g1")
    g1.create_dataset("data", data=temp, chunks=(max(n // 4, 1),))
    f["g2/data"] = g1["data"]          # a hard link: one object, two names
    f["g1/extra"] = pressure

# PyTables: an array and a table.
if tables:
    with tables.open_file(f"{out}/pytables.h5", "w") as f:
        f.create_array("/", "temp", temp, title="temperature")
        desc = {"temp": tables.Float32Col(pos=0), "p": tables.Float64Col(pos=1), "id": tables.Int64Col(pos=2)}
        t = f.create_table("/", "obs", desc, title="observations")
        rows = np.zeros(n, dtype=[("temp", "f4"), ("p", "f8"), ("id", "i8")])
        rows["temp"], rows["p"], rows["id"] = temp, pressure, np.arange(n)
        t.append(rows)
