#!/usr/bin/python3
"""--na-position tests' inputs and their independent checker (numpy, and pandas where present).

  na_position.py make FILE N SEED
      /f4, /f8: float keys with NaNs of several payloads and both signs (quiet and signalling),
      -0.0, +0.0, +-inf and ties; /i (int32) and /u (uint16): integer keys with many ties;
      /t: a compound table (x float32, y float64, det int16); /m: an N x 3 float64 array;
      /id: the row numbers (uint64), to carry.
  na_position.py check IN OUT -d PATH [-d PATH ...] [--key-field A,B] [--key-column J,K]
      [--order asc|desc,...] [--descending] [--na-position first|last] [--index PATH]
      [--carry PATH] [--top K] [--unique] [--counts PATH] [--nans-as OTHER.h5]
  na_position.py batch DIR
      every DIR/*.args (a check's arguments, NUL-separated) checked in one process, in name
      order: each failure named, exit 1 if any failed.

The reference order is numpy's stable lexicographic sort of the keys (np.lexsort of each key's
rank: -0.0 == +0.0, every NaN one value) with the NaNs at the end --na-position names (without it
numpy's place: last ascending, first descending), i.e. pandas' sort_values(kind="stable",
na_position=...), which it is compared with when pandas is installed. Several keys, table fields,
columns or --unique: the permutation is unique, so every written dataset is compared byte for
byte with the input's rows in that order (--unique: the first row of each group of equal key
tuples, --counts the group sizes; --top: the first K). One key sorted alone orders equal values
by their bits (-0.0 before +0.0, NaNs by bit pattern): its output must hold the reference's
values in order (NaN where it has NaN), the input's bit patterns (and with --index, input row
index[i]'s bits, equal bits in input order); --nans-as: its NaNs are, bit for bit and in order,
those of OTHER's output (the NaNs' order among themselves does not depend on their place).
Shares no code with h5gsort. Exit 0 all good, 1 a check failed, 2 usage."""
import argparse
import os
import sys

import h5py
import numpy as np


def fail(msg):
    print("na_position.py: FAILED: " + msg)
    sys.exit(1)


F4_NANS = [0x7FC00000, 0x7F800001, 0x7FC00005, 0x7FFFFFFF, 0xFFC00000, 0xFF800001, 0xFFFFFFFF,
           0xFFC00123]
F8_NANS = [0x7FF8000000000000, 0x7FF0000000000001, 0x7FF8000000000abc, 0x7FFFFFFFFFFFFFFF,
           0xFFF8000000000000, 0xFFF0000000000001, 0xFFFFFFFFFFFFFFFF, 0xFFF8000000012345]
SPECIALS = [-0.0, 0.0, np.inf, -np.inf, 1.5, -2.0, 3.0, 5e-45]


def floats(rng, n, dtype, nans, utype):
    """n floats: about 1/4 NaNs (of every pattern in `nans`), 1/4 specials, the rest few values."""
    pick = rng.integers(0, 4, n)
    out = rng.integers(-3, 4, n).astype(dtype)
    out[pick == 1] = np.array(SPECIALS, dtype)[rng.integers(0, len(SPECIALS), n)][pick == 1]
    bits = out.view(utype)
    bits[pick == 0] = np.array(nans, utype)[rng.integers(0, len(nans), n)][pick == 0]
    return out


def make(path, n, seed):
    rng = np.random.default_rng(seed)
    table = np.zeros(n, dtype=[("x", "<f4"), ("y", "<f8"), ("det", "<i2")])
    table["x"] = floats(rng, n, np.float32, F4_NANS, np.uint32)
    table["y"] = floats(rng, n, np.float64, F8_NANS, np.uint64)
    table["det"] = rng.integers(0, 3, n)
    m = np.stack([floats(rng, n, np.float64, F8_NANS, np.uint64) for _ in range(3)], axis=1)
    with h5py.File(path, "w") as f:
        f["f4"] = floats(rng, n, np.float32, F4_NANS, np.uint32)
        f["f8"] = floats(rng, n, np.float64, F8_NANS, np.uint64)
        f["i"] = rng.integers(0, 5, n).astype(np.int32)
        f["u"] = rng.integers(0, 4, n).astype(np.uint16)
        f["t"] = table
        f["m"] = m
        f["id"] = np.arange(n, dtype=np.uint64)
        f["f4"].attrs["units"] = "K"


def ranks(v, descending, nan_first):
    """Each element's rank in the key's order: equal values one rank, NaNs at their end."""
    v = np.asarray(v)
    nan = np.isnan(v) if v.dtype.kind == "f" else np.zeros(len(v), bool)
    uniq, inv = np.unique(v[~nan], return_inverse=True)  # -0.0 and +0.0 are one value
    codes = np.empty(len(v), np.int64)
    codes[~nan] = len(uniq) - 1 - inv if descending else inv
    codes[nan] = -1 if nan_first else len(uniq)
    return codes


def raw_rows(a):
    """Each row of an array as bytes (to compare bit patterns, NaN payloads and -0.0 included)."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).reshape(len(a), a.dtype.itemsize * int(np.prod(a.shape[1:])))


def check(o):
    fin, fout = h5py.File(o.input, "r"), h5py.File(o.output, "r")
    src = fin[o.d[0]][()]
    if o.key_field:
        names = o.key_field.split(",")
        keys, what = [src[f] for f in names], names
    elif o.key_column:
        cols = [int(c) for c in o.key_column.split(",")]
        keys, what = [src[:, c] for c in cols], ["column %d" % c for c in cols]
    else:
        keys, what = [fin[d][()] for d in o.d], o.d
    nkeys = len(keys)
    desc = [d == "desc" for d in o.order.split(",")] if o.order else [o.descending] * nkeys
    if len(desc) != nkeys:
        print("na_position.py: --order needs one direction per key", file=sys.stderr)
        sys.exit(2)
    nan_first = [o.na_position == "first" if o.na_position else d for d in desc]
    codes = [ranks(k, d, f) for k, d, f in zip(keys, desc, nan_first)]
    n = len(keys[0])
    perm = np.lexsort(codes[::-1]) if nkeys else np.arange(n)  # stable, the first key primary
    try:
        import pandas as pd
        if o.na_position:
            frame = pd.DataFrame({"k%d" % i: k for i, k in enumerate(keys)})
            pp = frame.sort_values(list(frame.columns), ascending=[not d for d in desc],
                                   na_position=o.na_position, kind="stable").index.to_numpy()
            if not np.array_equal(pp, perm):
                fail("the reference disagrees with pandas' sort_values (a checker defect)")
    except ImportError:
        pass
    counts = None
    if o.unique:  # the first row of each group of equal tuples, in the sorted order
        tuples = np.stack([c[perm] for c in codes], axis=1)
        starts = np.ones(n, bool)
        if n:
            starts[1:] = np.any(tuples[1:] != tuples[:-1], axis=1)
        first = np.flatnonzero(starts)
        counts = np.diff(np.append(first, n)).astype(np.uint64)
        perm = perm[first]
    if o.top is not None:
        perm = perm[:o.top]
        counts = counts[:o.top] if counts is not None else None
    composed = nkeys > 1 or o.key_field or o.key_column or o.unique
    if o.carry and not composed and not o.index:
        print("na_position.py: one key alone: --carry needs --index", file=sys.stderr)
        sys.exit(2)

    def same_rows(path_in, path_out, rows):
        a, b = fin[path_in][()], fout[path_out][()]
        if b.dtype != a.dtype or b.shape[1:] != a.shape[1:] or len(b) != len(rows):
            fail("%s: type or shape differs: %s %s, expected %s %s rows" %
                 (path_out, b.dtype, b.shape, a.dtype, (len(rows),) + a.shape[1:]))
        bad = np.flatnonzero(np.any(raw_rows(b) != raw_rows(a[rows]), axis=1))
        if len(bad):
            i = bad[0]
            fail("%s: row %d is %r, expected input row %d, %r (%d rows differ)" %
                 (path_out, i, b[i], rows[i], a[rows[i]], len(bad)))

    if composed:
        for path in o.d:
            same_rows(path, path, perm)
    else:
        a, b = keys[0], fout[o.d[0]][()]
        expected = a[perm]
        if b.dtype != a.dtype or len(b) != len(expected):
            fail("%s: %s of %d keys, expected %s of %d" % (o.d[0], b.dtype, len(b), a.dtype,
                                                           len(expected)))
        if b.dtype.kind == "f":
            wrong = np.flatnonzero((np.isnan(b) != np.isnan(expected)) |
                                   (~np.isnan(b) & (b != expected)))
        else:
            wrong = np.flatnonzero(b != expected)
        if len(wrong):
            i = wrong[0]
            fail("%s: key %d is %r, expected %r (%d keys out of place)" %
                 (o.d[0], i, b[i], expected[i], len(wrong)))
        bits = "u%d" % a.itemsize  # a key's bit pattern as an unsigned integer
        if o.top is None and not np.array_equal(np.sort(a.view(bits)), np.sort(b.view(bits))):
            fail("%s: the output's bit patterns are not the input's" % o.d[0])
        if o.nans_as:
            other = h5py.File(o.nans_as, "r")[o.d[0]][()]
            mine, theirs = b[np.isnan(b)].view(bits), other[np.isnan(other)].view(bits)
            if not np.array_equal(mine, theirs):
                fail("%s: the NaNs are not in %s's order: %s, expected %s" %
                     (o.d[0], o.nans_as, [hex(x) for x in mine[:8]], [hex(x) for x in theirs[:8]]))
    if o.index:
        idx = fout[o.index][()]
        if composed and not np.array_equal(idx, perm):
            fail("%s differs from the reference permutation (first at %s)" %
                 (o.index, np.flatnonzero(idx[:len(perm)] != perm[:len(idx)])[:1]))
        if not composed:
            if len(idx) != len(perm) or len(np.unique(idx)) != len(idx) or np.any(idx >= n):
                fail("%s is not %d distinct rows of the input" % (o.index, len(perm)))
            ub = fout[o.d[0]][()].view(bits)
            if not np.array_equal(ub, keys[0][idx].view(bits)):
                fail("%s: the keys are not the input's rows %s" % (o.d[0], o.index))
            order = np.lexsort((np.arange(len(ub)), ub))  # equal bits keep their input order
            if np.any((ub[order][1:] == ub[order][:-1]) & (idx[order][1:] < idx[order][:-1])):
                fail("%s: equal keys are not in input order" % o.index)
        perm = idx
    for c in o.carry:
        same_rows(c, c, perm)
    if o.counts:
        got = fout[o.counts][()]
        if counts is None or not np.array_equal(got, counts):
            fail("%s: the counts are not the group sizes" % o.counts)
    print("na_position.py: %s: %d rows in the order of %s%s%s" %
          (o.output, len(perm), ", ".join("%s %s" % (w, "desc" if d else "asc")
                                          for w, d in zip(what, desc)),
           ", NaN " + o.na_position if o.na_position else "", ", unique" if o.unique else ""))


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    p = argparse.ArgumentParser(prog="na_position.py check")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("-d", action="append", required=True)
    p.add_argument("--key-field")
    p.add_argument("--key-column")
    p.add_argument("--order")
    p.add_argument("--descending", action="store_true")
    p.add_argument("--na-position", choices=["first", "last"])
    p.add_argument("--index")
    p.add_argument("--carry", action="append", default=[])
    p.add_argument("--top", type=int)
    p.add_argument("--unique", action="store_true")
    p.add_argument("--counts")
    p.add_argument("--nans-as")
    p.add_argument("--stable", action="store_true")  # h5gsort's; the checks are the same
    if len(sys.argv) == 3 and sys.argv[1] == "batch":
        failed = 0
        for name in sorted(os.listdir(sys.argv[2])):
            if not name.endswith(".args"):
                continue
            with open(os.path.join(sys.argv[2], name), "rb") as f:
                args = [a.decode() for a in f.read().split(b"\0")[:-1]]
            try:
                check(p.parse_args(args))
                continue
            except SystemExit as e:
                if not e.code:
                    continue
                why = ""
            except Exception as e:  # an unreadable output, say: that check fails, the rest run
                why = " (%r)" % e
            failed += 1
            print("na_position.py: check %s failed%s: %s" % (name, why, " ".join(args)))
        sys.exit(1 if failed else 0)
    if len(sys.argv) < 2 or sys.argv[1] != "check":
        p.print_usage(sys.stderr)
        sys.exit(2)
    check(p.parse_args(sys.argv[2:]))


main()
