#!/usr/bin/env bash
# The man pages h5gsort(1) and h5gsort-gen(1) that the build makes and cmake --install installs
# (issue 55): their sections, once each; --help's three examples are the pages' first three;
# h5gsort(1)'s EXIT STATUS lists the codes of base/error.h, its ENVIRONMENT every variable the
# code reads or sets, its FILES the names a run really leaves beside OUTPUT, and its EXAMPLES run
# as written (on 2 ranks of the tests' launcher), their results checked with numpy.
#   man_pages.sh SOURCE_DIR BUILD_DIR "MPIEXEC ... -n"
set -euo pipefail
SRC=$1
BUILD=$2
MPIEXEC=$3
BIN=$BUILD/bin
MAN=$BUILD/share/man/man1
W=$(mktemp -d "$BUILD/man-pages-tmp.XXXXXX")
trap 'rm -rf "$W"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# A section of a page as roff (the lines after ".SH TITLE" up to the next .SH).
section() { awk -v title=".SH $2" '$0 == title {on = 1; next} /^\.SH / {on = 0} on' "$1"; }
# The commands of a page's EXAMPLES (the unfilled lines), roff's \- back to -.
man_examples() { section "$1" EXAMPLES | awk '/^\.nf$/ {on = 1; next} /^\.fi$/ {on = 0} on' | sed 's/\\-/-/g'; }

check_page() {
  local program=$1 page=$MAN/$1.1
  shift
  [ -s "$page" ] || die "no man page $page"
  for title in "$@"; do
    [ "$(grep -cxF ".SH $title" "$page")" -eq 1 ] || die "$program.1 has not one section $title"
  done
  # the rendered page shows them (no warning: install.prefix)
  groff -man -Tutf8 -P-cbou "$page" >"$W/$program.txt" 2>/dev/null
  for title in "$@"; do
    grep -qx "$title" "$W/$program.txt" || die "$program.1 renders no section $title"
  done
  # --help ends with the first three examples of the page (the same table)
  "$BIN/$program" --help | sed -n '/^Examples:$/,$p' | sed -n 's/^    //p' >"$W/help_examples"
  man_examples "$page" | head -n 3 >"$W/man_examples"
  [ -s "$W/help_examples" ] && cmp -s "$W/help_examples" "$W/man_examples" ||
    die "$program: --help's examples are not the man page's first three: $(diff "$W/help_examples" "$W/man_examples" | tr '\n' ' ')"
}
check_page h5gsort NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" FILES ENVIRONMENT EXAMPLES BUGS \
  "SEE ALSO"
check_page h5gsort-gen NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO"
page=$MAN/h5gsort.1
count=$(man_examples "$page" | wc -l)
[ "$count" -ge 5 ] && [ "$count" -le 8 ] || die "h5gsort.1 has $count examples, not 5 to 8"

# EXIT STATUS: the codes of base/error.h's statuses, each once
codes=$(grep -oE 'H5G_(OK|ERR_[A-Z]+) = [0-9]+' "$SRC/base/error.h" | grep -oE '[0-9]+$' | sort)
listed=$(section "$page" "EXIT STATUS" | grep -oE '^\\fB[0-9]+\\fR$' | grep -oE '[0-9]+' | sort)
[ -n "$codes" ] && [ "$codes" = "$listed" ] ||
  die "EXIT STATUS lists $(echo $listed), base/error.h has $(echo $codes)"

# ENVIRONMENT: every H5GSORT_ variable the code names, and every one it sets where unset
section "$page" ENVIRONMENT | sed 's/\\-/-/g; s/\\f[BIR]//g' >"$W/environment"
names=$( (grep -rhoE '"H5GSORT_[A-Z0-9_]+"' "$SRC"/{src,io,mpi,base,kernels}
          grep -rhoE 'setenv\("[A-Za-z0-9_]+"' "$SRC"/{src,io,mpi,base,kernels} | grep -oE '"[^"]+"') |
        tr -d '"' | sort -u)
[ "$(echo "$names" | wc -l)" -ge 10 ] || die "too few variables found in the sources: $names"
for name in $names; do
  grep -qE "(^|[^A-Z_])$name([^A-Z0-9_]|$)" "$W/environment" || die "ENVIRONMENT does not name $name"
done

# FILES: a run killed once its output is made leaves the temporary file and its lock that the
# page names (DIR/.NAME.h5gsort-HOST-PID.tmp[.lock]), beside OUTPUT
mkdir "$W/run"
"$BIN/h5gsort-gen" "$W/run/in.h5" -d /keys --count 1000 --type u4 >/dev/null
rc=0
# (a subshell of its own: bash's word of the kill goes to /dev/null too)
( (H5GSORT_TEST_KILL=write-data exec "$BIN/h5gsort" "$W/run/in.h5" "$W/run/out.h5" -d /keys) \
  >/dev/null 2>&1) 2>/dev/null || rc=$?
[ "$rc" -ne 0 ] || die "the run meant to be killed succeeded"
left=$(cd "$W/run" && ls -A | grep -vx in.h5 | sort)
tags=$(section "$page" FILES | grep -A1 -x '\.TP' | grep -oE '^\\fB[^\\]*(\\-[^\\]*)*\\fR$' |
       sed 's/^\\fB//; s/\\fR$//; s/\\-/-/g; s/\\&//g')
pattern_of() { # DIR/.NAME.h5gsort-HOST-PID.tmp -> that of out.h5 here, as a regular expression
  local tag=${1#DIR/}
  tag=${tag//./\\.}
  tag=${tag//NAME/out\\.h5}
  tag=${tag//HOST/$(hostname | cut -c1-64)}
  echo "^${tag//PID/[0-9]+}\$"
}
found=0
for tag in $tags; do
  [[ $tag == DIR/* ]] || continue
  found=$((found + 1))
  echo "$left" | grep -qE "$(pattern_of "$tag")" || die "FILES names $tag; the killed run left: $left"
done
[ "$found" -eq 2 ] || die "FILES names $found files beside OUTPUT, not the temporary file and its lock"
# and nothing else but the MPI-IO files the page names with them
echo "$left" | grep -vE "$(pattern_of 'DIR/.NAME.h5gsort-HOST-PID.tmp')|\.tmp\.lock$|\.tmp\.(data|metadata)\.[0-9]+$" &&
  die "the killed run left files FILES does not name: $left"

# EXAMPLES: each h5gsort command, its launcher and the launcher's options replaced by the tests'
# (srun's as well: there is no Slurm job here), on files that hold the datasets they name
mkdir "$W/examples"
cd "$W/examples"
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
rng = np.random.default_rng(55)
n = 5000
with h5py.File("in.h5", "w") as f:
    f["keys"] = rng.integers(-10**6, 10**6, n, dtype=np.int64)
    f["energy"] = rng.normal(size=n).astype(np.float32)
    f["halo"] = rng.integers(0, 40, n, dtype=np.uint32)
with h5py.File("particles.h5", "w") as f:
    f["id"] = rng.permutation(n).astype(np.uint64)
    for c in "xyz":
        f[c] = rng.random(n)
events = np.zeros(n, dtype=[("run", "<i4"), ("time", "<f8"), ("adc", "<u2")])
events["run"] = rng.integers(0, 5, n)
events["time"] = rng.integers(0, 100, n) / 4.0  # repeats: equal (run, time) keep input order
events["adc"] = np.arange(n)
with h5py.File("events.h5", "w") as f:
    f["events"] = events
with h5py.File("data.h5", "w") as f:
    f["keys"] = rng.random(n)
PY
cp data.h5 data_before.h5
man_examples "$page" >"$W/commands"
while read -r command; do
  [[ $command =~ ^(mpiexec|srun)\ .*h5gsort\  ]] || die "an example is not h5gsort under a launcher: $command"
  rc=0
  # shellcheck disable=SC2086 # the example's words, as a shell splits them
  $MPIEXEC 2 "$BIN/h5gsort" ${command#* h5gsort } </dev/null >"$W/example.log" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || { cat "$W/example.log" >&2; die "the example exited $rc: $command"; }
done <"$W/commands"
/usr/bin/python3 - <<'PY' || die "an example's output differs from numpy's"
import h5py, numpy as np
def read(name, path):
    with h5py.File(name, "r") as f:
        return f[path][()]
keys = read("in.h5", "keys")
for name in "out.h5", "sorted.h5":
    assert np.array_equal(read(name, "keys"), np.sort(keys)), name + " /keys"
ids = read("particles.h5", "id")
order = np.argsort(ids, kind="stable")
assert np.array_equal(read("by_id.h5", "id"), ids[order]), "by_id.h5 /id"
for c in "xyz":
    assert np.array_equal(read("by_id.h5", c), read("particles.h5", c)[order]), "by_id.h5 /" + c
events = read("events.h5", "events")
order = np.lexsort((events["time"], events["run"]))  # stable: run first, then time
assert np.array_equal(read("by_time.h5", "events"), events[order]), "by_time.h5 /events"
energy = read("in.h5", "energy")
assert np.array_equal(read("top.h5", "energy"), np.sort(energy)[::-1][:1000]), "top.h5 /energy"
values, counts = np.unique(read("in.h5", "halo"), return_counts=True)
assert np.array_equal(read("halos.h5", "halo"), values), "halos.h5 /halo"
assert np.array_equal(read("halos.h5", "halo_size"), counts), "halos.h5 /halo_size"
assert np.array_equal(read("data.h5", "keys"), np.sort(read("data_before.h5", "keys"))), "in place"
PY
# the --check example fails on a file out of order (exit 1, as it says)
rc=0
$MPIEXEC 2 "$BIN/h5gsort" --check in.h5 -d /keys --against in.h5 >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || die "--check of an unsorted file exited $rc, not 1"
echo "PASS: man pages"
