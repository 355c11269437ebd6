#!/usr/bin/env bash
# What `cmake --install` gives (issue 31): the binaries, the man page h5gsort(1) listing every
# option --help lists, and the Slurm scripts, whose demo runs from the prefix.
#   install.sh BUILD_DIR
set -euo pipefail
BUILD=$1
PREFIX=$(mktemp -d "$BUILD/install-tmp.XXXXXX")
trap 'rm -rf "$PREFIX"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
for f in bin/h5gsort bin/h5gsort-gen share/h5gsort/jobs/demo.sh share/h5gsort/jobs/h5gsort.sbatch; do
  [ -x "$PREFIX/$f" ] || die "cmake --install did not install $f"
done
man=$(find "$PREFIX/share/man" -name h5gsort.1)
[ -n "$man" ] || die "no man page h5gsort.1 under share/man"
# every long option of --help is in the man page (roff writes - as \-), and no other
help_opts=$("$PREFIX/bin/h5gsort" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
man_opts=$(grep -o -- '\\fB\\-\\-[a-z][a-z\\-]*' "$man" | sed 's/\\fB//; s/\\f$//; s/\\-/-/g' | sort -u)
[ "$help_opts" = "$man_opts" ] ||
  die "--help and the man page list different options: $(diff <(echo "$help_opts") <(echo "$man_opts") | tr '\n' ' ')"
[ "$(echo "$help_opts" | wc -l)" -ge 30 ] || die "too few options found: $help_opts"
if command -v man >/dev/null; then
  man -l "$man" >/dev/null 2>&1 || die "man cannot read $man"
fi
# the installed demo runs from the prefix, away from the source tree
(cd / && H5GSORT_DEMO_RANKS=2 "$PREFIX/share/h5gsort/jobs/demo.sh" 100000 >"$PREFIX/demo.log" 2>&1) ||
  { tail -20 "$PREFIX/demo.log" >&2; die "the installed demo.sh failed"; }
grep -q '"exit_status": 0' "$PREFIX/demo.log" || die "the installed demo printed no successful report"
# the installed pipeline's jobs run PREFIX/bin's programs (issue 55: they ran
# PREFIX/share/h5gsort/jobs/../build/bin's): a stand-in sbatch records what it is given
mkdir -p "$PREFIX/fake"
printf '%s\n' '#!/usr/bin/env bash' 'printf "%s\n" "$*" "H5GSORT=${H5GSORT:-}" >>"$SBATCH_LOG"' \
  'echo $((RANDOM + 1))' >"$PREFIX/fake/sbatch"
chmod +x "$PREFIX/fake/sbatch"
(cd / && env -u H5GSORT_BIN_DIR PATH="$PREFIX/fake:$PATH" SBATCH_LOG="$PREFIX/sbatch.log" \
  H5GSORT_WORKDIR="$PREFIX/pipeline" "$PREFIX/share/h5gsort/jobs/pipeline.sh" >/dev/null) ||
  die "the installed pipeline.sh failed"
for program in h5gsort-gen h5gsort; do
  grep -q "$PREFIX/bin/$program" "$PREFIX/sbatch.log" ||
    die "the installed pipeline does not run $PREFIX/bin/$program: $(cat "$PREFIX/sbatch.log")"
done
if grep -q "build/bin" "$PREFIX/sbatch.log"; then
  die "the installed pipeline names a build tree: $(cat "$PREFIX/sbatch.log")"
fi
echo "PASS: install"
