#!/usr/bin/env bash
# Issue 29 #2: inputs whose chunks the I/O threads read with filters other than shuffle, deflate and
# fletcher32 (scale-offset of integers and floats, n-bit) or with a conversion (big-endian keys,
# n-bit's padded integers), at 1 to 4 ranks. Inputs are made by h5py and h5gsort-gen, with edge
# chunks, fill values, all-equal values, signed and unsigned keys (a dataset with chunks never
# written is read through HDF5 whatever its filters: HDF5 1.10.8's H5Dget_chunk_storage_size fails
# on them). Each sort runs with H5GSORT_IO_TRACE=1 and must say it read the keys' chunks by threads
# (with the filters and the conversion expected), its output is checked by h5gsort_check and its
# sorted keys must equal, byte for byte, those of a run under H5GSORT_IO=mpio (HDF5 reading
# everything). Then contiguous big-endian keys, read and written by the threads.
# With `plugins`, the same for inputs of the plugin filters bzip2 and lz4 (io/filter_plugin.c),
# alone and with shuffle or fletcher32, a chunk stored with every filter skipped, big-endian
# floats; exit 77 when HDF5 (HDF5_PLUGIN_PATH) finds either plugin missing. With `szip`, the
# same for szip inputs (io/filter_szip.c: libsz's decoder), both option masks, 8 to 32 pixels per
# block, alone and after shuffle, a chunk stored with its filters skipped, big-endian floats;
# exit 77 when h5py cannot write szip (no libsz).
#   threaded_reads.sh BIN_DIR "MPIEXEC ... -n" [plugins|szip]
BIN=$1
MPIEXEC=$2
CASES=${3:-builtin}
source "$(dirname "$0")/../e2e/lib.sh"
W=$WORK
PY=/usr/bin/python3

if [ "$CASES" != builtin ]; then
  rc=0
  "$PY" - "$W" "$CASES" <<'PYEOF' || rc=$?
import sys
import h5py, numpy as np
w, cases, n = sys.argv[1], sys.argv[2], 60013
szip_codes = h5py.h5z.FILTER_CONFIG_ENCODE_ENABLED | h5py.h5z.FILTER_CONFIG_DECODE_ENABLED
if cases == "szip" and (not h5py.h5z.filter_avail(h5py.h5z.FILTER_SZIP) or
                        h5py.h5z.get_filter_info(h5py.h5z.FILTER_SZIP) != szip_codes):
    sys.exit(77)
if cases == "plugins" and not (h5py.h5z.filter_avail(307) and h5py.h5z.filter_avail(32004)):
    sys.exit(77)
rng = np.random.default_rng(32004)
def make(name, values, chunk, filters, raw_first=False):
    with h5py.File(f"{w}/{name}.h5", "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((chunk,))
        for fid, cd in filters:
            if fid == "shuffle":
                dcpl.set_shuffle()
            elif fid == "fletcher32":
                dcpl.set_fletcher32()
            elif fid == "szip":
                dcpl.set_szip(*cd)
            else:
                dcpl.set_filter(fid, h5py.h5z.FLAG_MANDATORY, cd)
        space = h5py.h5s.create_simple((len(values),))
        d = h5py.h5d.create(f.id, b"keys", h5py.h5t.py_create(values.dtype), space, dcpl=dcpl)
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, values)
    if raw_first:  # the first chunk rewritten as is, every filter skipped (its filter mask)
        with h5py.File(f"{w}/{name}.h5", "r+") as f:
            f["keys"].id.write_direct_chunk((0,), values[:chunk].tobytes(),
                                            filter_mask=(1 << len(filters)) - 1)
if cases == "plugins":
    make("lz4_u4", rng.integers(0, 1 << 19, n).astype("<u4"), 4099, [(32004, (0,))], True)
    make("shuffle_lz4_i8", rng.integers(-(1 << 62), 1 << 62, n).astype("<i8"), 3001,
         [("shuffle", None), (32004, (1024,))])
    f8 = rng.normal(size=n)
    f8[::5] = 0.5  # equal keys
    make("bz2_f8be", f8.astype(">f8"), 999, [(307, (9,))])
    make("bz2_fletcher32_u2", rng.integers(0, 1 << 16, n).astype("<u2"), 777,
         [(307, (1,)), ("fletcher32", None)], True)
else:  # h5py's compression="szip" options: ("nn", 8) and ("ec", 16); 32 by the low-level API.
    # Values szip shrinks, sorted too: parallel HDF5 1.10.8 stores a chunk whose optional szip
    # failed unfiltered with a filter mask of 0, an output chunk no one can read.
    with h5py.File(f"{w}/szip_u4.h5", "w") as f:  # edge chunk
        f.create_dataset("keys", data=rng.integers(0, 1 << 12, n).astype("<u4"), chunks=(4099,),
                         compression="szip", compression_opts=("nn", 8))
    with h5py.File(f"{w}/szip_i2be.h5", "w") as f:
        f.create_dataset("keys", data=rng.integers(0, 600, n).astype(">i2"), chunks=(1000,),
                         compression="szip", compression_opts=("ec", 16))
    f8 = np.round(rng.normal(size=n) * 64) / 64
    f8[::5] = 0.5  # equal keys
    make("szip_f8be", f8.astype(">f8"), 999,
         [("szip", (h5py.h5z.SZIP_EC_OPTION_MASK, 32))], True)
    make("shuffle_szip_i8", rng.integers(0, 1 << 20, n).astype("<i8"), 3001,
         [("shuffle", None), ("szip", (h5py.h5z.SZIP_NN_OPTION_MASK, 32))])
PYEOF
  if [ "$rc" -eq 77 ]; then
    echo "SKIP: $([ "$CASES" = szip ] && echo "h5py cannot write szip (no libsz)" ||
      echo "the bzip2 or lz4 plugin is missing (hdf5-filter-plugin)")"
    exit 77
  fi
  [ "$rc" -eq 0 ] || die "making the h5py inputs failed"
  if [ "$CASES" = plugins ]; then
    INPUTS="lz4_u4:lz4:none shuffle_lz4_i8:shuffle,lz4:none bz2_f8be:bzip2:byte_swap
      bz2_fletcher32_u2:bzip2,fletcher32:none"
  else
    # outputs contiguous: h5gsort refuses to keep szip (parallel HDF5 1.10.8 writes a chunk
    # szip cannot shrink unreadably), checked below
    INPUTS="szip_u4:szip:none:contiguous szip_i2be:szip:byte_swap:contiguous
      szip_f8be:szip:byte_swap:contiguous shuffle_szip_i8:shuffle,szip:none:contiguous"
  fi
else
"$PY" - "$W" <<'PYEOF' || die "making the h5py inputs failed"
import sys
import h5py, numpy as np
w, n = sys.argv[1], 60013
rng = np.random.default_rng(29)
with h5py.File(f"{w}/soff_u4.h5", "w") as f:  # narrow range, edge chunk
    f.create_dataset("keys", data=rng.integers(0, 1 << 19, n).astype("<u4"), chunks=(4099,),
                     scaleoffset=0)
with h5py.File(f"{w}/soff_i2be.h5", "w") as f:  # big-endian, fill value (and holding it), gzip
    d = f.create_dataset("keys", shape=(n,), dtype=">i2", chunks=(1000,), scaleoffset=0,
                         compression="gzip", fillvalue=-5)
    d[:45000] = rng.integers(-300, 300, 45000)
    d[:45000:7] = -5
    d[45000:50000] = 77  # all equal
    d[50000:] = rng.integers(-32768, 32767, n - 50000)  # full range: stored at full width
with h5py.File(f"{w}/soff_f4be.h5", "w") as f:  # floats, D = 3: fill value, edge chunk, gzip
    d = f.create_dataset("keys", shape=(n,), dtype=">f4", chunks=(4099,), scaleoffset=3,
                         compression="gzip", fillvalue=2.5)
    v = rng.normal(scale=100, size=n)
    v[::11] = 2.5
    v[40000:45000] = -7.125  # chunks all equal but for the edges
    d[...] = v
def nbit(path, base, precision, offset, values, chunk, gzip):
    with h5py.File(path, "w") as f:
        t = base.copy()
        t.set_precision(precision)
        t.set_offset(offset)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((chunk,))
        dcpl.set_filter(h5py.h5z.FILTER_NBIT, h5py.h5z.FLAG_OPTIONAL)  # H5Pset_nbit
        if gzip:
            dcpl.set_deflate(1)
        space = h5py.h5s.create_simple((len(values),))
        d = h5py.h5d.create(f.id, b"keys", t, space, dcpl=dcpl)
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, values)
# unsigned: h5gsort_check compares a padded integer's stored bits (signed ones: unit tested)
nbit(f"{w}/nbit_u4.h5", h5py.h5t.STD_U32LE, 20, 3,
     rng.integers(0, 1 << 20, n).astype(np.uint32), 5000, False)
nbit(f"{w}/nbit_u2be.h5", h5py.h5t.STD_U16BE, 11, 2,
     rng.integers(0, 1 << 11, n).astype(np.uint16), 777, True)
PYEOF
gen 1 "$W/gz_i8be.h5" -d /keys --count 60013 --type i8 --dist uniform --order be --layout gzip \
  --chunk 3001
gen 1 "$W/gz_f8be.h5" -d /keys --count 20011 --type f8 --dist special --order be --layout gzip \
  --chunk 999
# soff_f4be's output contiguous: HDF5 would scale its sorted keys again, to other values
INPUTS="soff_u4:scaleoffset:none soff_i2be:scaleoffset,deflate:byte_swap
  soff_f4be:scaleoffset,deflate:byte_swap:contiguous
  nbit_u4:nbit:integer_widening nbit_u2be:nbit,deflate:integer_widening
  gz_i8be:shuffle,deflate:byte_swap gz_f8be:shuffle,deflate:byte_swap"
fi

# same_keys A B: the sorted keys of A and B, byte for byte.
same_keys() {
  "$PY" -c 'import sys, h5py
a, b = (h5py.File(p, "r")["keys"][...] for p in sys.argv[1:])
sys.exit(a.dtype != b.dtype or a.tobytes() != b.tobytes())' "$1" "$2" ||
    die "$2 holds other keys than $1 (read through HDF5)"
}

# NAME:FILTERS:CONVERSION[:LAYOUT]: each input, the filters and conversion its threaded read
# reports, and the output's --layout if not the input's.
for c in $INPUTS; do
  IFS=: read -r name filters conversion layout <<<"$c"
  opts=()
  [ -n "$layout" ] && opts=(--layout "$layout")
  H5GSORT_IO=mpio H5GSORT_IO_TRACE=1 sort_check 2 "$W/$name.h5" /keys "$W/${name}_mpio.h5" /keys \
    "${opts[@]}"
  grep -q "read $W/$name.h5:/keys: through HDF5" "$W/last.log" ||
    die "$name under H5GSORT_IO=mpio: not read through HDF5: $(cat "$W/last.log")"
  for p in 1 2 3 4; do
    H5GSORT_IO_TRACE=1 sort_check "$p" "$W/$name.h5" /keys "$W/${name}_$p.h5" /keys "${opts[@]}"
    want="read $W/$name.h5:/keys: chunks by threads (filters: ${filters//,/ }; conversion: ${conversion//_/ })"
    grep -qF "$want" "$W/last.log" ||
      die "$name on $p ranks: no line '$want' in: $(cat "$W/last.log")"
    if grep -q "read $W/$name.h5:/keys: through HDF5" "$W/last.log"; then
      die "$name on $p ranks: keys read through HDF5 too"
    fi
    same_keys "$W/${name}_mpio.h5" "$W/${name}_$p.h5"
    # the output keeps the plugin filter, which only HDF5 encodes
    if [ "$CASES" = plugins ] && ! grep -q "write .*:/keys: through HDF5$" "$W/last.log"; then
      die "$name on $p ranks: output not written through HDF5: $(cat "$W/last.log")"
    fi
  done
done
if [ "$CASES" = szip ]; then
  mkdir -p "$W/refused"
  IN=$W/szip_u4.h5 OUT=$W/refused/out.h5 WRAP=()
  expect_failure 2 "would keep the input's szip filter" "$IN" "$OUT" -d /keys
fi
if [ "$CASES" != builtin ]; then
  passed
  exit 0
fi

# Contiguous big-endian keys: read by the threads and swapped there, written back big-endian by
# them (the output takes its rows in the file's form: h5g_io_file_form), whole files equal to
# HDF5's at 1 to 4 ranks.
gen 2 "$W/be_f8.h5" -d /keys --count 50021 --type f8 --dist special --order be
gen 2 "$W/be_i4.h5" -d /keys --count 50021 --type i4 --dist uniform --order be
for name in be_f8 be_i4; do
  H5GSORT_IO=mpio sort_check 2 "$W/$name.h5" /keys "$W/${name}_mpio.h5" /keys
  for p in 1 2 3 4; do
    H5GSORT_IO_TRACE=1 sort_check "$p" "$W/$name.h5" /keys "$W/${name}_$p.h5" /keys
    for want in "read $W/$name.h5:/keys: contiguous bytes by threads, converted there" \
      "write .*:/keys: contiguous bytes by threads"; do
      grep -q "h5gsort: io: $want\$" "$W/last.log" ||
        die "$name on $p ranks: no line '$want' in: $(cat "$W/last.log")"
    done
    cmp "$W/${name}_mpio.h5" "$W/${name}_$p.h5" || die "$name on $p ranks differs from HDF5's"
  done
done
passed
