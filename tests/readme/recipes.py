"""The README's recipes (issue 55): each is a fenced sh block after `<!-- recipe: NAME -->` in
README.md. For each this file makes the input files the recipe names (h5py, PyTables, netCDF4)
and checks what the recipe wrote against numpy: stable argsort or lexsort of the input keys,
applied to every carried column. tests/readme/recipe.sh runs the block between the two.

    recipes.py names README.md              the recipes, one per line, in README order
    recipes.py block README.md NAME         the recipe's shell text
    recipes.py make NAME RUN_DIR REF_DIR    its inputs in RUN_DIR (the recipe's cwd), the
                                            reference arrays in REF_DIR
    recipes.py check NAME RUN_DIR REF_DIR   exit 1, naming each difference, if the outputs are wrong
"""
import json
import glob
import os
import re
import sys

import h5py
import numpy as np

N = 30000  # rows of every input: several chunks, uneven shares on 4 ranks
MARK = re.compile(r"^<!-- recipe: ([a-z0-9_]+) -->$")
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg, file=sys.stderr)
    return cond


def same(got, want, what):
    """got equals want exactly (NaNs equal, dtype kind and shape too)."""
    got, want = np.asarray(got), np.asarray(want)
    ok = got.shape == want.shape and got.dtype == want.dtype
    ok = ok and (np.array_equal(got, want, equal_nan=True) if want.dtype.kind == "f"
                 else np.array_equal(got, want))
    return check(ok, f"{what}: {got.dtype}{got.shape} differs from numpy's {want.dtype}{want.shape}"
                 f" (first rows {got[:4]!r} against {want[:4]!r})")


# ---- README.md ----------------------------------------------------------------------------------

def recipes(readme):
    """{name: shell text} of the marked blocks; a mark not followed by a ```sh block is an error."""
    lines = open(readme, encoding="utf-8").read().split("\n")
    found = {}
    for i, line in enumerate(lines):
        m = MARK.match(line)
        if not m:
            continue
        name = m.group(1)
        if name in found or i + 1 >= len(lines) or lines[i + 1] != "```sh":
            sys.exit(f"README.md:{i + 1}: recipe '{name}' repeated or not followed by a ```sh line")
        end = lines.index("```", i + 2)
        found[name] = "\n".join(lines[i + 2:end]) + "\n"
    return found


# ---- inputs -------------------------------------------------------------------------------------

def particles(run, ref, name="particles.h5"):
    """A simulation snapshot: /particles/{id,x,y,z,energy,halo} of N rows, a header group."""
    rng = np.random.default_rng(55)
    cols = {
        "id": rng.permutation(np.arange(10**9, 10**9 + N, dtype=np.uint64)),
        "x": rng.random(N, dtype=np.float32), "y": rng.random(N, dtype=np.float32),
        "z": rng.random(N, dtype=np.float32),
        "energy": rng.exponential(2.0, N) + 1e-3,  # distinct, no zero or infinity
        "halo": rng.integers(0, 200, N).astype(np.int32),  # many rows per halo
    }
    cols["energy"][rng.random(N) < 0.02] = np.nan  # not measured
    with h5py.File(os.path.join(run, name), "w") as f:
        f.attrs["code"] = "gadget"
        f.create_group("header").attrs["redshift"] = 0.5
        for key, col in cols.items():
            f.create_dataset(f"particles/{key}", data=col, chunks=(4096,))
    np.savez(os.path.join(ref, "particles.npz"), **cols)
    return cols


def catalog(run, ref):
    """A PyTables table /catalog/stars (tile, mag, ra, dec)."""
    import tables
    rng = np.random.default_rng(56)
    rows = np.empty(N, dtype=[("tile", "i4"), ("mag", "f4"), ("ra", "f8"), ("dec", "f8")])
    rows["tile"] = rng.integers(0, 64, N)
    rows["mag"] = np.round(rng.normal(18, 2, N), 1)  # ties within a tile: stability shows
    rows["ra"], rows["dec"] = rng.uniform(0, 360, N), rng.uniform(-90, 90, N)
    with tables.open_file(os.path.join(run, "catalog.h5"), "w") as f:
        f.create_table("/catalog", "stars", rows, createparents=True)
    np.save(os.path.join(ref, "stars.npy"), rows)


def hits(run, ref):
    """A 2-D dataset /hits (N x 4 int32: detector, time, channel, charge)."""
    rng = np.random.default_rng(57)
    data = np.stack([rng.integers(0, 16, N), rng.integers(0, 1000, N), rng.integers(0, 64, N),
                     rng.integers(0, 4096, N)], axis=1).astype(np.int32)
    with h5py.File(os.path.join(run, "hits.h5"), "w") as f:
        f.create_dataset("hits", data=data)
    np.save(os.path.join(ref, "hits.npy"), data)


def obs(run, ref):
    """A netCDF-4 file: dimension time; variables time (its coordinate), temperature, station."""
    import netCDF4
    rng = np.random.default_rng(58)
    cols = {"time": np.arange(N, dtype=np.float64) * 60.0,
            "temperature": rng.normal(280, 10, N).astype(np.float32),
            "station": rng.integers(0, 500, N).astype(np.int32)}
    with netCDF4.Dataset(os.path.join(run, "obs.nc"), "w") as f:
        f.createDimension("time", None)
        for key, col in cols.items():
            var = f.createVariable(key, col.dtype, ("time",))
            var[:] = col
        f["time"].units = "seconds since 2026-01-01"
        f["temperature"].units = "K"
    np.savez(os.path.join(ref, "obs.npz"), **cols)


def sbatch_scripts(run):
    """The user's own stages of the pipeline recipe: a simulation writes particles.h5, an
    analysis reads the sorted file."""
    py = sys.executable
    here = os.path.abspath(__file__)
    with open(os.path.join(run, "simulate.sbatch"), "w") as f:
        f.write(f"#!/bin/bash\n#SBATCH --job-name=simulate\n{py} {here} make particles . .\n")
    with open(os.path.join(run, "analysis.sbatch"), "w") as f:
        f.write("#!/bin/bash\n#SBATCH --job-name=analysis\n"
                f"{py} -c 'import h5py, sys; d = h5py.File(sys.argv[1])[\"/particles/id\"]; "
                "print(len(d), d[0], d[-1])' \"$1\" >analysis.txt\n")


# ---- the recipes: inputs and checks --------------------------------------------------------------

def h5(path, dataset):
    with h5py.File(path, "r") as f:
        return f[dataset][()]


def check_columns(path, cols, order, names, n=None):
    for key in names:
        same(h5(path, f"/particles/{key}"), cols[key][order][:n], f"{path}:/particles/{key}")


def datasets(path):
    names = []
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: names.append("/" + name) if isinstance(obj, h5py.Dataset) else None)
    return sorted(names)


def keyed(x, descending, na_last=None):
    """Float keys x as numpy's stable argsort or lexsort must see them to give h5gsort's order:
    negated when descending, NaNs at +inf (last) or -inf (first), by default numpy's place (last
    ascending, first descending). Equal keys, the NaNs among them, keep their input order (the
    record sort is stable in both directions); the inputs hold no infinity or zero."""
    k = -x if descending else x.copy()
    k[np.isnan(x)] = np.inf if (not descending if na_last is None else na_last) else -np.inf
    return k


# The inputs of each recipe; "particles" is the pipeline's simulation stage.
MAKERS = {"quickstart": particles, "carry": particles, "descending": particles, "top": particles,
          "unique": particles, "several_keys": particles, "in_place": particles,
          "slurm_job": particles, "particles": particles, "table": catalog, "rows_2d": hits,
          "netcdf": obs, "pipeline": lambda run, ref: sbatch_scripts(run)}


def make(name, run, ref):
    if name not in MAKERS:
        sys.exit(f"recipes.py: no inputs for recipe '{name}': add them to MAKERS and run_check()")
    MAKERS[name](run, ref)


def run_check(name, run, ref):
    at = lambda *p: os.path.join(run, *p)
    cols = dict(np.load(os.path.join(ref, "particles.npz"))) if MAKERS.get(name) is particles else None
    every = ["id", "x", "y", "z", "energy", "halo"]
    if name == "quickstart":
        same(h5(at("sorted.h5"), "/particles/id"), np.sort(cols["id"]), "sorted.h5:/particles/id")
        check(datasets(at("sorted.h5")) == ["/particles/id"],
              f"sorted.h5 holds {datasets(at('sorted.h5'))}, not only /particles/id")
    elif name == "carry":
        check_columns(at("sorted.h5"), cols, np.argsort(cols["id"], kind="stable"), every)
    elif name == "descending":
        order = np.argsort(keyed(cols["energy"], descending=True), kind="stable")
        check(np.isnan(cols["energy"][order[0]]), "the recipe's input has no NaN to go first")
        check_columns(at("by_energy.h5"), cols, order, ["energy", "id"])
    elif name == "top":
        order = np.argsort(keyed(cols["energy"], descending=True, na_last=True), kind="stable")
        check_columns(at("top1000.h5"), cols, order, ["energy", "id"], n=1000)
    elif name == "unique":
        values, counts = np.unique(cols["halo"], return_counts=True)
        same(h5(at("halos.h5"), "/particles/halo"), values, "halos.h5:/particles/halo")
        same(h5(at("halos.h5"), "/particles/halo_count"), counts.astype(np.uint64),
             "halos.h5:/particles/halo_count")
    elif name == "several_keys":
        order = np.lexsort((keyed(cols["energy"], descending=True), cols["halo"]))  # stable
        check_columns(at("sorted.h5"), cols, order, ["halo", "energy", "id"])
    elif name == "in_place":
        check_columns(at("particles.h5"), cols, np.argsort(cols["id"], kind="stable"), every)
        with h5py.File(at("particles.h5"), "r") as f:
            check(f.attrs.get("code") == "gadget" and f["header"].attrs.get("redshift") == 0.5,
                  "particles.h5 lost its root or /header attributes in place")
    elif name == "table":
        rows = np.load(os.path.join(ref, "stars.npy"))
        order = np.lexsort((rows["mag"], rows["tile"]))
        same(h5(at("sorted.h5"), "/catalog/stars"), rows[order], "sorted.h5:/catalog/stars")
        import tables
        with tables.open_file(at("sorted.h5")) as f:  # still a table PyTables reads
            check(len(f.root.catalog.stars) == N, "PyTables reads another row count")
    elif name == "rows_2d":
        data = np.load(os.path.join(ref, "hits.npy"))
        same(h5(at("sorted.h5"), "/hits"), data[np.lexsort((data[:, 1], data[:, 0]))],
             "sorted.h5:/hits")
    elif name == "netcdf":
        import netCDF4
        cols = dict(np.load(os.path.join(ref, "obs.npz")))
        order = np.argsort(cols["temperature"], kind="stable")
        with netCDF4.Dataset(at("sorted.nc")) as f:
            for key in ("temperature", "time", "station"):
                same(f[key][:].filled(), cols[key][order], f"sorted.nc:{key} (netCDF4)")
            check(f["time"].units == "seconds since 2026-01-01" and
                  f["temperature"].dimensions == ("time",),
                  "sorted.nc lost the units or the dimension of its variables")
    elif name == "slurm_job":
        check_columns(at("sorted.h5"), cols, np.argsort(cols["id"], kind="stable"),
                      ["id", "x", "y", "z"])
        reports = glob.glob(at("h5gsort-*.json"))
        if check(len(reports) == 1, f"the job left {len(reports)} reports h5gsort-<jobid>.json"):
            report = json.load(open(reports[0]))
            check(report.get("exit_status") == 0, f"report {reports[0]}: {report.get('exit_status')}")
    elif name == "pipeline":
        cols = dict(np.load(at("particles.npz")))  # what the simulation stage wrote
        check_columns(at("sorted.h5"), cols, np.argsort(cols["id"], kind="stable"), ["id"])
        got = open(at("analysis.txt")).read().split() if os.path.exists(at("analysis.txt")) else []
        check(got == [str(N), str(cols["id"].min()), str(cols["id"].max())],
              f"the analysis stage did not run after the sort: {got}")
    else:
        sys.exit(f"recipes.py: no check for recipe '{name}': add it to run_check()")


def main():
    what = sys.argv[1]
    if what == "names":
        print("\n".join(recipes(sys.argv[2])))
    elif what == "block":
        found = recipes(sys.argv[2])
        if sys.argv[3] not in found:
            sys.exit(f"README.md has no recipe '{sys.argv[3]}'")
        sys.stdout.write(found[sys.argv[3]])
    elif what == "make":
        make(sys.argv[2], sys.argv[3], sys.argv[4])
    elif what == "check":
        run_check(sys.argv[2], sys.argv[3], sys.argv[4])
        if failures:
            sys.exit(1)
        print(f"PASS: readme.{sys.argv[2]}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
