#!/usr/bin/env bash
# What `cmake --install` gives (issue 31): the binaries, the man pages h5gsort(1) and
# h5gsort-gen(1) listing every option --help lists, and the Slurm scripts, whose demo runs from
# the prefix.
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
# the README, its LICENSE, and every docs/ file its links name
[ -f "$PREFIX/share/h5gsort/LICENSE" ] || die "cmake --install did not install LICENSE"
for doc in $(grep -o '(docs/[a-z-]*\.md' "$PREFIX/share/h5gsort/README.md" | sort -u | cut -c2-); do
  [ -f "$PREFIX/share/h5gsort/$doc" ] || die "the installed README links $doc, not installed"
done
# each program's man page (h5gsort-gen's too: issue 55) lists every long option of its --help
# (roff writes - as \-), and no other (--help's exit codes and examples name other programs'),
# and renders without a warning
for program in h5gsort:30 h5gsort-gen:15; do
  least=${program#*:} program=${program%:*}
  man=$(find "$PREFIX/share/man" -name "$program.1")
  [ -n "$man" ] || die "no man page $program.1 under share/man"
  help_opts=$("$PREFIX/bin/$program" --help | sed '/^Exit codes:$/,$d' | grep -o -- '--[a-z][a-z-]*' | sort -u)
  man_opts=$(grep -o -- '\\fB\\-\\-[a-z][a-z\\-]*' "$man" | sed 's/\\fB//; s/\\f$//; s/\\-/-/g' | sort -u)
  [ "$help_opts" = "$man_opts" ] ||
    die "$program: --help and the man page list different options: $(diff <(echo "$help_opts") <(echo "$man_opts") | tr '\n' ' ')"
  [ "$(echo "$help_opts" | wc -l)" -ge "$least" ] || die "$program: too few options found: $help_opts"
  warnings=$(groff -man -Tutf8 -ww -z "$man" 2>&1) || die "groff cannot render $man: $warnings"
  [ -z "$warnings" ] || die "groff warns of $man: $warnings"
  if command -v man >/dev/null; then
    man -l "$man" >/dev/null 2>&1 || die "man cannot read $man"
  fi
done
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
