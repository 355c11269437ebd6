"""Outputs every client reads (issue 27): files written by netCDF4-python, h5py (dimension scales,
references, hard links) and PyTables are sorted by h5gsort as a new OUTPUT (default), with
--whole-file and in place, then read back with ncdump, netCDF4, xarray, h5py, PyTables and h5diff.
Oracle: numpy's stable argsort of the input keys, applied to every carried variable.

    clients.py BIN_DIR "MPIEXEC ... -n" RANKS CASE     (BACKEND from H5G_TEST_BACKEND, default cpu)
"""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import warnings

import h5py
import netCDF4
import numpy as np
import xarray

BIN, MPIEXEC, RANKS, CASE = sys.argv[1], shlex.split(sys.argv[2]), sys.argv[3], sys.argv[4]
BACKEND = os.environ.get("H5G_TEST_BACKEND", "cpu")
HERE = os.path.dirname(os.path.abspath(__file__))
N = 1000
MODES = ("default", "whole", "inplace")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, file=sys.stderr)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def sort(inp, out, *args, mode="default", expect=0):
    """Runs h5gsort; returns its stderr. mode: default (new OUTPUT), whole (--whole-file), inplace."""
    if mode == "inplace" and os.path.exists(out):
        os.remove(out)
    if mode == "inplace":
        shutil.copy(inp, out)
        inp = out
    extra = ["--whole-file"] if mode == "whole" else []
    cmd = MPIEXEC + [RANKS, f"{BIN}/h5gsort", inp, out, "--force", "--backend", BACKEND, *extra, *args]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != expect:
        fail(f"{' '.join(cmd)}: exit {p.returncode}, expected {expect}\n{p.stdout}{p.stderr}")
    return p.stderr


def tool_ok(*cmd):
    if cmd[0] == "ncdump" and not shutil.which("ncdump") and BACKEND == "cuda":
        # the GPU machine has no netcdf-bin: netCDF4 reads it through the same libnetcdf
        # (the CPU tests run ncdump itself on the same bytes: GPU and CPU outputs are identical)
        with netCDF4.Dataset(cmd[-1]):
            return ""
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == 0, f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-2000:]}{p.stderr}")
    return p.stdout


def same_objects_untouched(inp, out, untouched, refs_to_sorted=()):
    """h5diff of every object the run did not write: identical (attributes whose references lead
    to sorted data compare that data, so they are excluded there and checked by address)."""
    for path in untouched:
        excl = [a for r in refs_to_sorted if r == path for a in ("--exclude-attribute", r)]
        tool_ok("h5diff", *excl, inp, out, path, path)


def addresses(path):
    """name -> object address, and every reference (attribute or dataset) -> the name it resolves to."""
    addr, refs = {}, {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            addr[name] = h5py.h5o.get_info(obj.id).addr
            for a in obj.attrs:
                v = obj.attrs[a]
                if isinstance(v, h5py.Reference) and v:
                    refs[f"{name}@{a}"] = f[v].name
            if isinstance(obj, h5py.Dataset) and obj.dtype == h5py.ref_dtype:
                refs[name] = [f[r].name if r else None for r in obj[()]]
        f.visititems(visit)
        for a in f.attrs:
            v = f.attrs[a]
            if isinstance(v, h5py.Reference) and v:
                refs[f"/@{a}"] = f[v].name
    return addr, refs


def references_kept(inp, out):
    """In a copy of the input: every object at its old address, every reference to the same name."""
    a_in, r_in = addresses(inp)
    a_out, r_out = addresses(out)
    check(a_in == a_out, f"{out}: objects moved: {sorted(k for k in a_in if a_in[k] != a_out.get(k))}")
    check(r_in == r_out, f"{out}: references changed: {r_in} -> {r_out}")


def refused(src, out, mode, args, message):
    """A run refused before any work (exit 2, one line holding `message`): in place the file is
    unchanged, else no OUTPUT."""
    if os.path.exists(out):
        os.remove(out)
    before = open(src, "rb").read()
    err = sort(src, out, *args, mode=mode, expect=2)
    check(message in err, f"expected '{message}': {err}")
    lines = [line for line in err.splitlines() if line.startswith("h5gsort")]
    check(len(lines) == 1, f"one line expected: {err}")
    if mode == "inplace":
        check(open(out, "rb").read() == before, "the refused in-place input changed")
    else:
        check(not os.path.exists(out), "a refused run left OUTPUT")


def perm_of(keys):
    return np.argsort(keys, kind="stable")


def check_nc(inp, out, mode, top=None):
    """netCDF-4: ncdump, netCDF4 and xarray open OUTPUT with the input's dimensions; the values are
    the input's in the keys' stable order."""
    tool_ok("ncdump", "-h", out)
    with netCDF4.Dataset(inp) as a, netCDF4.Dataset(out) as b:
        perm = perm_of(a["temp"][:].data)
        if top is not None:
            perm = perm[:top]
        for name in ("temp", "obs", "pressure", "xy"):
            check(b[name].dimensions == a[name].dimensions,
                  f"{out}:{name} dimensions {b[name].dimensions} != {a[name].dimensions}")
            check(np.array_equal(b[name][:].data, a[name][:].data[perm]), f"{out}:{name} values")
        check(b.dimensions["obs"].isunlimited() == a.dimensions["obs"].isunlimited(),
              f"{out}: obs unlimited changed")
        check(b["temp"].getncattr("_FillValue") == a["temp"].getncattr("_FillValue"), f"{out}: _FillValue")
        check(b["temp"].filters()["zlib"] == a["temp"].filters()["zlib"], f"{out}: temp compression")
        if mode != "default":  # the same objects: the same variable ids
            check(list(b.variables) == list(a.variables),
                  f"{out}: variable order {list(b.variables)} != {list(a.variables)}")
    with xarray.open_dataset(out) as ds:
        check(ds["temp"].dims == ("obs",) and ds["xy"].dims == ("obs", "two"), f"{out}: xarray dims")
        check(np.array_equal(ds["obs"].values, ds.coords["obs"].values), f"{out}: xarray coordinate")


def case_nc4():
    src = f"{W}/nc4.nc"
    carry = ["-d", "/temp", "--carry", "/obs,/pressure,/xy"]
    for mode in MODES:
        out = f"{W}/nc4_{mode}.nc"
        sort(src, out, *carry, mode=mode)
        check_nc(src, out, mode)
        if mode != "default":
            references_kept(src, out)
            same_objects_untouched(src, out, ["/two"], refs_to_sorted=["/two"])
    # --top: the unlimited (chunked) variables are cut in place to K rows
    for mode in MODES:
        out = f"{W}/nc4_top_{mode}.nc"
        sort(src, out, *carry, "--top", "10", mode=mode)
        check_nc(src, out, mode, top=10)
        if mode != "default":
            references_kept(src, out)


def case_nc4fixed():
    src = f"{W}/nc4fixed.nc"
    for mode in MODES:
        out = f"{W}/fixed_{mode}.nc"
        sort(src, out, "-d", "/temp", "--carry", "/obs,/pressure", mode=mode)
        tool_ok("ncdump", "-h", out)
        with netCDF4.Dataset(src) as a, netCDF4.Dataset(out) as b:
            perm = perm_of(a["temp"][:].data)
            for name in ("temp", "obs", "pressure"):
                check(np.array_equal(b[name][:].data, a[name][:].data[perm]), f"{out}:{name}")
        if mode != "default":
            references_kept(src, out)
    # a contiguous variable cannot change its length in place, and a new object would lose the
    # scale's reference to it: refused before any work, the file untouched
    for mode in ("whole", "inplace"):
        refused(src, f"{W}/fixed_top_{mode}.nc", mode, ["-d", "/temp", "--top", "10"],
                "cannot keep the reference to /temp in attribute 'REFERENCE_LIST'")
    # default mode writes a new file: --top is fine there
    out = f"{W}/fixed_top_new.nc"
    sort(src, out, "-d", "/temp", "--carry", "/obs", "--top", "10")
    tool_ok("ncdump", out)


def scales_values(src, out, carried_x=True, top=None):
    with h5py.File(src, "r") as a, h5py.File(out, "r") as b:
        perm = perm_of(a["data"][()])
        if top is not None:
            perm = perm[:top]
        check(np.array_equal(b["data"][()], a["data"][()][perm]), f"{out}:/data values")
        for name in ("p", "xy"):
            check(np.array_equal(b[name][()], a[name][()][perm]), f"{out}:/{name} values")
        x_expect = a["x"][()][perm] if carried_x else a["x"][()]
        check(np.array_equal(b["x"][()], x_expect), f"{out}:/x values")
        for name, dim, scale in (("data", 0, "/x"), ("p", 0, "/x"), ("xy", 0, "/x"), ("xy", 1, "/cols")):
            got = [s.name for s in b[name].dims[dim].values()]
            check(got == [scale], f"{out}:/{name} dimension {dim} scales {got}, expected [{scale}]")
            check(h5py.h5ds.is_attached(b[name].id, b[scale].id, dim), f"{out}: {scale} not attached")
        check(h5py.h5ds.is_scale(b["x"].id) and h5py.h5ds.is_scale(b["cols"].id), f"{out}: scales lost their class")


def case_scales(name):
    src = f"{W}/{name}.h5"
    for mode in MODES:
        out = f"{W}/{name}_{mode}.h5"
        err = sort(src, out, "-d", "/data", "--carry", "/x,/p,/xy", mode=mode)
        scales_values(src, out)
        if mode != "default":
            references_kept(src, out)
            same_objects_untouched(src, out, ["/cols", "/other/v", "/regions"], ["/cols"])
            continue
        with h5py.File(out, "r") as b:
            # object references to what OUTPUT holds are made anew; the others are left out, told
            check(b[b["data"].attrs["ref_x"]].name == "/x", f"{out}: ref_x")
            check(b[b.attrs["ref_data"]].name == "/data", f"{out}: root ref_data")
            check("ref_other" not in b["data"].attrs and "region" not in b["data"].attrs,
                  f"{out}: a reference to an object OUTPUT lacks was kept")
        for attr in ("ref_other", "region"):
            check(f"attribute '{attr}' of /data not written" in err, f"no warning for {attr}: {err}")
    # the scale not carried comes along as it is, attached
    out = f"{W}/{name}_notcarried.h5"
    sort(src, out, "-d", "/data", "--carry", "/p,/xy")
    scales_values(src, out, carried_x=False)
    # --top with the scale carried, as a new file and cut in place where chunked
    out = f"{W}/{name}_top.h5"
    sort(src, out, "-d", "/data", "--carry", "/x,/p,/xy", "--top", "5")
    scales_values(src, out, top=5)


def case_links():
    src = f"{W}/links.h5"
    for mode in ("whole", "inplace"):
        out = f"{W}/links_{mode}.h5"
        sort(src, out, "-d", "/g1/data", "--carry", "/g1/extra", mode=mode)
        with h5py.File(src, "r") as a, h5py.File(out, "r") as b:
            perm = perm_of(a["g1/data"][()])
            check(np.array_equal(b["g1/data"][()], a["g1/data"][()][perm]), f"{out}: /g1/data")
            check(np.array_equal(b["g2/data"][()], b["g1/data"][()]), f"{out}: the hard link /g2/data "
                  "no longer shows the sorted data")
            check(b["g1/data"].id == b["g2/data"].id, f"{out}: /g1/data and /g2/data are two objects")
        references_kept(src, out)
    # a dataset path never replaces a group (issue 32): refused before any work, nothing changed
    for mode in ("whole", "inplace"):
        out = f"{W}/links_group_{mode}.h5"
        refused(src, out, mode, ["-d", "/g1/extra", "--output-dataset", "/g2"], "/g2 is a group")
        if mode == "inplace":
            with h5py.File(out, "r") as b:
                check("g2/data" in b, "--output-dataset deleted a group")


def case_pytables():
    import tables  # only this case needs PyTables
    src = f"{W}/pytables.h5"
    for mode in MODES:
        out = f"{W}/pt_{mode}.h5"
        sort(src, out, "-d", "/temp", mode=mode)
        with tables.open_file(src) as a, tables.open_file(out) as b:
            check(np.array_equal(b.root.temp.read(), np.sort(a.root.temp.read())), f"{out}: /temp")
            check(b.root.temp.title == "temperature", f"{out}: PyTables title")
            if mode != "default":
                check(np.array_equal(b.root.obs.read(), a.root.obs.read()), f"{out}: /obs changed")
        out = f"{W}/pt_table_{mode}.h5"
        sort(src, out, "-d", "/obs", "--key-field", "temp", mode=mode)
        with tables.open_file(src) as a, tables.open_file(out) as b:
            rows = a.root.obs.read()
            check(np.array_equal(b.root.obs.read(), rows[perm_of(rows["temp"])]), f"{out}: /obs rows")
            check(b.root.obs.title == "observations" and b.root.obs.nrows == N, f"{out}: table meta")


def case_hostile():
    """What a review found (issue 32's rule: no input changed, no reference lost): an external
    link on a written path, a fixed-size target under --unique with another hard link, a scale
    cut by --top, a scalar reference dataset, a table whose rows hold references, --plan."""
    ext, src = f"{W}/ext.h5", f"{W}/hostile.h5"
    with h5py.File(ext, "w") as f:
        f.create_group("grp").create_dataset("keys", data=np.array([5, 3, 9, 1, 7], "<i4"))
        f["whole"] = np.array([4, 2, 8, 6], "<i4")
    with h5py.File(src, "w") as f:
        f["g"] = h5py.ExternalLink("ext.h5", "/grp")
        f["linked"] = h5py.ExternalLink("ext.h5", "/whole")
        f.create_dataset("keys", data=np.array([5, 3, 9, 1, 7, 2, 8, 6], "<i4"), chunks=(4,))
        small = f.create_dataset("small", data=np.arange(4, dtype="<i4"), chunks=(4,), maxshape=(4,))
        f["small_alias"] = small
        t = f.create_dataset("t", data=np.arange(8) * 10.0)
        t.make_scale("t")
        f["keys"].dims[0].attach_scale(t)
        f.create_dataset("scalar_ref", data=t.ref, dtype=h5py.ref_dtype)
        rows = np.zeros(4, dtype=[("k", "<i4"), ("r", h5py.ref_dtype)])
        rows["k"] = [4, 2, 3, 1]
        tab = f.create_dataset("tab", (4,), dtype=rows.dtype)
        for i in range(4):
            tab[i] = (rows["k"][i], t.ref)
    before = open(ext, "rb").read()
    for mode in ("whole", "inplace"):
        refused(src, f"{W}/h_ext_{mode}.h5", mode, ["-d", "/g/keys"], "/g is an external link")
        refused(src, f"{W}/h_link_{mode}.h5", mode, ["-d", "/linked"], "/linked is an external link")
        refused(src, f"{W}/h_uniq_{mode}.h5", mode,
                ["-d", "/keys", "--unique", "--output-dataset", "/small"], "/small has 2 hard links")
    check(open(ext, "rb").read() == before, "the external link's file changed")
    err = sort(src, f"{W}/h_top.h5", "-d", "/keys", "--top", "3")
    check("dimension scale /t of /keys not attached" in err, f"no warning for the cut scale: {err}")
    tool_ok("ncdump", "-h", f"{W}/h_top.h5")
    sort(src, f"{W}/h_scalar.h5", "-d", "/keys", "--layout", "chunked", mode="whole")
    refused(src, f"{W}/h_tab.h5", "default", ["-d", "/tab", "--key-field", "k"], "hold references")
    sort(src, f"{W}/h_tab_whole.h5", "-d", "/tab", "--key-field", "k", mode="whole")
    with h5py.File(f"{W}/h_tab_whole.h5", "r") as b:
        check(list(b["tab"]["k"]) == [1, 2, 3, 4] and b[b["tab"][0]["r"]].name == "/t",
              "the table's references in a copy of the input")
    stale = f"{W}/.h_plan.h5.h5gsort-{os.uname().nodename}-999999.tmp"
    open(stale, "w").close()
    sort(src, f"{W}/h_plan.h5", "-d", "/keys", "--plan")
    check(os.path.exists(stale) and not os.path.exists(f"{W}/h_plan.h5"), "--plan changed files")


with tempfile.TemporaryDirectory(dir=os.path.dirname(BIN)) as W:
    subprocess.run([sys.executable, f"{HERE}/make_files.py", W, str(N)], check=True)
    warnings.simplefilter("ignore")
    {"nc4": case_nc4, "nc4fixed": case_nc4fixed, "scales": lambda: case_scales("scales"),
     "scales_tracked": lambda: case_scales("scales_tracked"), "links": case_links,
     "pytables": case_pytables, "hostile": case_hostile}[CASE]()
if failures:
    sys.exit(1)
print(f"PASS: clients {CASE} at {RANKS} ranks ({BACKEND})")
