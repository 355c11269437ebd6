#!/usr/bin/env bash
# Fault injection: a killed rank, a write failure, a corrupted output, an in-place run killed
# mid-way, a load test, signals and an input changed mid-run. The promise checked every time:
# the input is never modified, OUTPUT is complete and verified or absent, no temporary file
# survives a finished run, and a rerun succeeds. The cases that name a backend (load, interrupt,
# input_changes) sort on H5G_TEST_BACKEND (cpu, the default, or cuda: CTest's gpu.faults_*,
# skipped with exit 77 where no GPU is usable); the others leave it to --backend auto.
#   faults.sh BIN_DIR "MPIEXEC ... -n" CASE [SHIM]
#   CASE: kill | write | corrupt | verify_pieces | inplace | load | interrupt | input_changes |
#         streams | mpi_init_fails | small_stack | stale_sweep | output_appears
#   SHIM (output_appears): lib of faults/no_renameat2.c, or "sanitize" where it cannot be loaded
set -uo pipefail
bin=$1 mpiexec=$2 case=$3 shim=${4:-sanitize}
source "$(dirname "$0")/../e2e/lib.sh" --backend-only
test_backend # BACKEND
work=$(mktemp -d "${TMPDIR:-/tmp}/h5gsort-faults.XXXXXX")
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export H5GSORT_TEST_LEAKS=1
failures=0 passes=0
pass() { passes=$((passes + 1)); echo "ok: $*"; }
fail() { failures=$((failures + 1)); echo "FAILED: $*"; }
expect() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
# The temporary file, and the files MPI-IO makes beside it ("<temp>.data.0", issue 32)
no_temp() { ! ls -a "$work" | grep -q '\.h5gsort-.*\.tmp'; }
# wait_hook LAUNCHER_PID POINT: until rank 0 of the run logging to $work/log sleeps at POINT
wait_hook() {
  for _ in $(seq 600); do
    grep -q "test hook: rank 0 sleeps .* at $2" "$work/log" && return 0
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
# launcher_forwards SIG: whether SIG sent to the launcher reaches its ranks. Open MPI's mpiexec
# passes SIGUSR1 and SIGUSR2 on by default (4.1.4), but the packaged 4.1.6 of the GPU machine passes
# SIGUSR2 and not SIGUSR1, even with --mca ess_base_forward_signals SIGUSR1: where it does not,
# the signal goes to the ranks, and the case checks what h5gsort does with it.
launcher_forwards() {
  rm -f "$work/forwarded" "$work/ready"
  $mpiexec 1 bash -c 'trap "touch $0/forwarded; exit 0" '"$1"'; touch "$0/ready"
    for _ in $(seq 100); do sleep 0.1; done' "$work" >/dev/null 2>&1 &
  local launcher=$!
  for _ in $(seq 300); do [ -e "$work/ready" ] && break; sleep 0.1; done
  sleep 0.5
  kill -"$1" "$launcher"
  wait "$launcher"
  [ -e "$work/forwarded" ]
}
# Killed ranks may still be exiting when mpiexec returns: wait for them, as a later rerun would.
wait_ranks() { for _ in $(seq 50); do pgrep -f "$bin/h5gsort .*$work" >/dev/null || return 0; sleep 0.1; done; }
# flip FILE BYTE_OFFSET MASK: xor one byte of a file in place
flip() {
  python3 -c 'import sys
path, at, mask = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 0)
with open(path, "r+b") as f:
    f.seek(at); b = f.read(1); f.seek(at); f.write(bytes([b[0] ^ mask]))' "$@"
}
gen() { $mpiexec 2 "$bin/h5gsort-gen" "$@" >/dev/null; }
# Independent check of OUT against IN (the tests' own checker), else h5gsort --check.
check_sorted() {
  if [ -x "$bin/h5gsort_check" ]; then "$bin/h5gsort_check" "$1" -d "$2" "$3" -o "$4" "${@:5}" >/dev/null
  else $mpiexec 2 "$bin/h5gsort" --check "$3" -d "$4" --against "$1" --against-dataset "$2" -q "${@:5}"; fi
}

case $case in
kill)
  gen "$work/in.h5" -d /k --count 200003 --type f8 --dist uniform --seed 7
  cp "$work/in.h5" "$work/in.copy"
  for point in transform local_sort exchange write-data write; do
    H5GSORT_TEST_KILL=$point:1 $mpiexec 3 "$bin/h5gsort" "$work/in.h5" "$work/out.h5" -d /k >/dev/null 2>&1
    rc=$?
    wait_ranks
    expect "killed at $point: exit code non-zero ($rc)" test "$rc" -ne 0
    expect "killed at $point: no OUT" test ! -e "$work/out.h5"
    expect "killed at $point: input untouched" cmp -s "$work/in.h5" "$work/in.copy"
    $mpiexec 3 "$bin/h5gsort" "$work/in.h5" "$work/out.h5" -d /k -q
    expect "rerun after kill at $point succeeds" test $? -eq 0
    expect "rerun after kill at $point removed the stale temp file" no_temp
    expect "rerun after kill at $point: output sorted" check_sorted "$work/in.h5" /k "$work/out.h5" /k
    rm -f "$work/out.h5"
  done
  ;;
write)
  gen "$work/in.h5" -d /k --count 300000 --type u8 --dist uniform --seed 3
  echo old > "$work/out.h5"
  $mpiexec 3 bash -c "ulimit -f 1000; exec '$bin/h5gsort' '$work/in.h5' '$work/out.h5' -d /k --force" >"$work/log" 2>&1
  rc=$?
  expect "file size limit: exit 1 (got $rc)" test "$rc" -eq 1
  expect "file size limit: one error line" test "$(grep -c '^h5gsort: error:' "$work/log")" -eq 1
  expect "file size limit: old OUT unchanged" test "$(cat "$work/out.h5")" = old
  expect "file size limit: no temp file" no_temp
  # The output directory turns read-only (immutable: root too is refused) while the job runs,
  # after its checks passed and before the output is created (the ranks sleep where they are
  # about to make it, after the sort).
  if command -v chattr >/dev/null && mkdir "$work/ro" && chattr +i "$work/ro" 2>/dev/null &&
     ! touch "$work/ro/probe" 2>/dev/null; then
    chattr -i "$work/ro"
    H5GSORT_TEST_SLEEP=write-create:3 $mpiexec 3 "$bin/h5gsort" "$work/in.h5" "$work/ro/out.h5" \
      -d /k >"$work/log" 2>&1 &
    job=$!
    for _ in $(seq 600); do grep -q "test hook: rank 0 sleeps .* at write-create" "$work/log" && break; sleep 0.1; done
    chattr +i "$work/ro"
    wait $job
    rc=$?
    chattr -i "$work/ro"
    expect "directory read-only mid-run: exit 1 (got $rc)" test "$rc" -eq 1
    expect "directory read-only mid-run: one error line" test "$(grep -c '^h5gsort: error:' "$work/log")" -eq 1
    expect "directory read-only mid-run: no output, no temp file" test -z "$(ls -A "$work/ro")"
  else
    echo "skipped: chattr +i not available here"
  fi
  ;;
corrupt)
  gen "$work/in.h5" -d /k --count 100000 --type u8 --dist uniform --seed 5
  $mpiexec 2 "$bin/h5gsort" "$work/in.h5" "$work/out.h5" -d /k -q
  $mpiexec 2 "$bin/h5gsort" --check "$work/out.h5" -d /k --against "$work/in.h5" -q
  expect "--check passes on a good output" test $? -eq 0
  offset=$(h5dump -p -H -d /k "$work/out.h5" | sed -n 's/.*OFFSET \([0-9]*\).*/\1/p')
  expect "found the data offset ($offset)" test -n "$offset"
  # flip the top bit of element 50000 (little-endian uint64): it leaves its place in the order
  flip "$work/out.h5" "$((offset + 50000 * 8 + 7))" 0x80
  $mpiexec 2 "$bin/h5gsort" --check "$work/out.h5" -d /k >"$work/log" 2>&1
  rc=$?
  expect "--check on a corrupted output exits 1 (got $rc)" test "$rc" -eq 1
  expect "--check reports the order violation" grep -q "out of order" "$work/log"
  # undo that, then make a change that keeps the order (lowest bit of the last element): only
  # the checksum against the input can catch it
  flip "$work/out.h5" "$((offset + 50000 * 8 + 7))" 0x80
  flip "$work/out.h5" "$((offset + 99999 * 8))" 0x01
  $mpiexec 3 "$bin/h5gsort" --check "$work/out.h5" -d /k --against "$work/in.h5" >"$work/log" 2>&1
  rc=$?
  expect "--check --against on a changed key exits 1 (got $rc)" test "$rc" -eq 1
  expect "--check --against reports the checksum" grep -q "checksum" "$work/log"
  ;;
verify_pieces)
  # --verify reads the output back in pieces (here of H5GSORT_IO_PIECE_BYTES, 1 MiB: 2^18 u4
  # keys), each checked by the rank's threads (--io-threads 2: parts of 2^17 keys). The
  # temporary file, changed while the ranks sleep in the verify phase, fails the run with one
  # line that counts the keys out of place and names the first: the key at a piece's first row
  # (the last rank's share + 2^18) and the one at the second thread's first row (+ 2^18 + 2^17),
  # each made smaller than the key before it (--unique: equal to it). No OUTPUT is left. With
  # --unique the shares are even (mpi/topology.h) only when no key repeats: distinct keys then.
  # "part": the second thread's first row and one inside its part, the first named.
  gen "$work/in.h5" -d /k --count $((1 << 21)) --type u4 --dist uniform --seed 11
  gen "$work/distinct.h5" -d /k --count $((1 << 21)) --type u4 --dist index
  for spec in 1:plain:in 2:plain:in 2:unique:distinct 1:part:in; do
    IFS=: read -r np mode input <<<"$spec"
    what="--verify across pieces and threads ($np ranks, $mode)"
    extra=() words="keys out of order"
    [ "$mode" = unique ] && extra=(--unique) words="keys out of order or repeated"
    run=(env H5GSORT_IO_PIECE_BYTES=1048576 $mpiexec "$np" "$bin/h5gsort" "$work/$input.h5"
         "$work/out.h5" -d /k --verify --io-threads 2 --backend cpu "${extra[@]}")
    "${run[@]}" -q >"$work/log" 2>&1
    expect "$what: unchanged, it passes" test $? -eq 0
    rm -f "$work/out.h5"
    H5GSORT_TEST_SLEEP=verify:1 "${run[@]}" >"$work/log" 2>&1 &
    launcher=$!
    # the first verify step sums the input's checksum; the second comes once the file is written
    for _ in $(seq 600); do
      [ "$(grep -c 'test hook: rank 0 sleeps .* at verify' "$work/log")" -ge 2 ] && break
      sleep 0.05
    done
    tmp=$(ls -a "$work" | grep '\.h5gsort-.*\.tmp$')
    header=$(h5dump -p -H -d /k "$work/$tmp")
    offset=$(echo "$header" | sed -n 's/.*OFFSET \([0-9]*\).*/\1/p')
    rows=$(echo "$header" | sed -n 's/.*DATASPACE *SIMPLE { ( \([0-9]*\) ).*/\1/p')
    last=$(((np - 1) * (rows / np) + ((np - 1) * (rows % np)) / np)) # mpi/topology.h
    first=$((last + (1 << 18))) second=$((first + (1 << 17)))
    [ "$mode" = part ] && first=$second second=$((second + 1000))
    python3 - "$work/$tmp" "$offset" "$mode" "$first" "$second" <<'PY'
import struct, sys
path, offset, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path, "r+b") as f:
    for i in map(int, sys.argv[4:]):
        f.seek(offset + 4 * (i - 1))
        before = struct.unpack("<I", f.read(4))[0]
        f.write(struct.pack("<I", before if mode == "unique" else before - 1))
PY
    wait "$launcher"; rc=$?
    expect "$what: exit 1 ($rc)" test "$rc" -eq 1
    expect "$what: 2 $words, the first at $first" grep -q \
      "^h5gsort: error: verify failed: 2 $words, the first at index $first (" "$work/log"
    expect "$what: no OUTPUT" test ! -e "$work/out.h5"
    expect "$what: no temporary file" no_temp
  done
  ;;
inplace)
  gen "$work/f.h5" -d /data/k --count 150000 --type i4 --dist uniform --seed 11
  cp "$work/f.h5" "$work/f.copy"
  for point in exchange write-data write; do
    H5GSORT_TEST_KILL=$point:2 $mpiexec 3 "$bin/h5gsort" "$work/f.h5" "$work/f.h5" -d /data/k --force >/dev/null 2>&1
    rc=$?
    wait_ranks
    expect "in-place killed at $point: exit non-zero ($rc)" test "$rc" -ne 0
    expect "in-place killed at $point: original intact" cmp -s "$work/f.h5" "$work/f.copy"
  done
  $mpiexec 3 "$bin/h5gsort" "$work/f.h5" "$work/f.h5" -d /data/k --force -q --verify
  expect "in-place rerun succeeds" test $? -eq 0
  expect "in-place rerun: sorted" check_sorted "$work/f.copy" /data/k "$work/f.h5" /data/k
  expect "in-place rerun: no temp file" no_temp
  ;;
load)
  types=(u1 u2 u4 u8 i1 i2 i4 i8 f4 f8)
  dists=(uniform normal zipf sorted reverse equal few special)
  seed=${H5GSORT_LOAD_SEED:-20261122}
  RANDOM=$seed
  echo "load test seed $seed"
  for i in $(seq 1 20); do
    t=${types[RANDOM % 10]} d=${dists[RANDOM % 8]} np=$((RANDOM % 4 + 1))
    n=$(( (RANDOM * 32768 + RANDOM) % 300000 )); [ $((RANDOM % 5)) -eq 0 ] && n=$((RANDOM % 5))
    extra=()
    [ $((RANDOM % 3)) -eq 0 ] && extra+=(--descending)
    [ $((RANDOM % 3)) -eq 0 ] && extra+=(--device-memory 64K)
    rm -f "$work/in.h5" "$work/out.h5"
    gen "$work/in.h5" -d /k --count "$n" --type "$t" --dist "$d" --seed "$i"
    $mpiexec "$np" "$bin/h5gsort" "$work/in.h5" "$work/out.h5" -d /k -q --backend "$BACKEND" "${extra[@]}"
    rc=$?
    desc=(); [[ " ${extra[*]} " == *" --descending "* ]] && desc=(--descending)
    if [ $rc -eq 0 ] && check_sorted "$work/in.h5" /k "$work/out.h5" /k "${desc[@]}" && no_temp; then
      pass "run $i: $t $d n=$n np=$np ${extra[*]}"
    else
      fail "run $i: $t $d n=$n np=$np ${extra[*]} (exit $rc)"
    fi
  done
  ;;
interrupt)
  # SIGINT to the launcher (Ctrl-C) while the output is being written, SIGTERM (scancel) while
  # the input is read, SIGINT during an in-place sort, SIGUSR1 and SIGUSR2 to the launcher (what
  # Slurm's --signal=USR1@T sends and mpiexec passes on), SIGHUP and SIGXCPU (a closed session, a
  # CPU time limit) to the ranks, on 1 to 4 ranks: every rank stops, one error line names the
  # signal, no temporary file or OUTPUT remains, the input is untouched, a rerun succeeds.
  # SIGPIPE to the ranks is ignored: the run ends as if none came, OUTPUT complete. The ranks
  # sleep 30 s at the point (3 s for SIGPIPE; H5GSORT_TEST_SLEEP, every rank, in sleep(3) on
  # either backend: on the GPU no kernel runs there, the device-resident path's copies back to
  # the host at most are in flight at write-data) and the signal comes 1 s after rank 0 was seen
  # there. Reaching the point includes start-up, on the GPU the CUDA contexts of ranks sharing one
  # GPU: it may take up to 60 s, and a run that never gets there fails the case rather than being
  # signalled elsewhere.
  # The exit code is the launcher's (what a user or Slurm sees), but MPICH's mpiexec (hydra 4.0)
  # returns 0 once it has forwarded a signal, whatever the ranks' codes: there each rank runs
  # in a shell that records its code (the shell's trap only keeps it alive to do so; the
  # signal reaches h5gsort as before) and a rank's code stands in for a launcher's 0; the USR
  # signals go to the ranks themselves (hydra's forwarding of them is not relied on).
  # Cases marked "report" run with --report (issue 55): the interrupted run leaves a report
  # that parses, with the start time, status "interrupted", the phase under way, and the error
  # line's message naming the signal.
  gen "$work/in.h5" -d /k --count 400000 --type i8 --dist uniform --seed 5
  cp "$work/in.h5" "$work/in.copy"
  wrap=()
  if [ "${H5G_TEST_MPI:-}" = mpich ]; then
    mkdir -p "$work/rc"
    wrap=(bash -c 'trap : INT TERM HUP USR1 USR2 XCPU PIPE; "$@"; echo $? > "$0/rc.$PMI_RANK"' "$work/rc")
  fi
  for spec in INT:write-data:out:3:launcher:report TERM:read:out:4:launcher:report \
              INT:write-data:inplace:2:launcher TERM:write-data:out:1:launcher \
              USR1:write-data:out:2:launcher USR2:read:out:1:launcher \
              HUP:write-data:out:2:ranks XCPU:write-data:inplace:2:ranks:report \
              PIPE:write-data:out:2:ranks; do
    IFS=: read -r sig point mode np target report <<<"$spec"
    out="$work/out.h5"; extra=(); sleep_s=30
    if [ "$mode" = inplace ]; then out="$work/in.h5"; extra=(--force); fi
    rm -f "$work/report.json"
    [ -n "$report" ] && extra+=(--report "$work/report.json")
    [ "$sig" = PIPE ] && sleep_s=3
    [ ${#wrap[@]} -gt 0 ] && [ "${sig#USR}" != "$sig" ] && target=ranks
    if [ "$target" = launcher ] && [ "${sig#USR}" != "$sig" ] && ! launcher_forwards "$sig"; then
      echo "note: the launcher does not pass SIG$sig on: it is sent to the ranks"
      target=ranks
    fi
    rm -f "$work"/rc/rc.*
    H5GSORT_TEST_SLEEP=$point:$sleep_s $mpiexec "$np" "${wrap[@]}" "$bin/h5gsort" "$work/in.h5" "$out" \
      -d /k --backend "$BACKEND" --progress "${extra[@]}" >"$work/log" 2>&1 &
    launcher=$!
    # wait until the ranks sleep at the point: rank 0 prints each phase it moved past, after an
    # agreement of every rank (--progress: "buffers" comes before "read"), and each rank says
    # when it sleeps at write-data
    reached=0
    for _ in $(seq 600); do
      if [ "$point" = write-data ]; then grep -q "test hook: rank 0 sleeps .* at write-data" "$work/log" && reached=1
      else grep -q "^h5gsort: buffers " "$work/log" && reached=1; fi
      [ "$reached" = 1 ] && break
      kill -0 "$launcher" 2>/dev/null || break # ended before the point: failed below
      sleep 0.1
    done
    what="SIG$sig to the $target at $point ($mode, $np ranks, $BACKEND)"
    expect "$what: the ranks reached $point" test "$reached" = 1
    sleep 1
    start=$SECONDS
    if [ "$target" = launcher ]; then kill -"$sig" "$launcher"
    else pkill -"$sig" -f "^$bin/h5gsort .*$work"; fi
    wait "$launcher"; rc=$?
    wait_ranks
    if [ "$rc" -eq 0 ] && [ ${#wrap[@]} -gt 0 ] && [ -f "$work/rc/rc.0" ]; then
      rc=$(cat "$work/rc/rc.0") # hydra's 0: rank 0's code
      for f in "$work"/rc/rc.*; do [ "$(cat "$f")" -ne 0 ] || rc=0; done
    fi
    if [ "$sig" = PIPE ]; then
      expect "$what: exit 0 ($rc)" test "$rc" -eq 0
      expect "$what: no error line" test "$(grep -c "^h5gsort: error:" "$work/log")" -eq 0
      expect "$what: no temporary file" no_temp
      expect "$what: input untouched" cmp -s "$work/in.h5" "$work/in.copy"
      expect "$what: OUTPUT sorted" check_sorted "$work/in.h5" /k "$work/out.h5" /k
      rm -f "$work/out.h5"
      continue
    fi
    expect "$what: exit non-zero ($rc)" test "$rc" -ne 0
    expect "$what: ended within 20 s, not after the 30 s sleep" test $((SECONDS - start)) -lt 20
    named=SIG$sig
    [ "$sig" = INT ] && named='SIG(INT|TERM)' # Open MPI's mpiexec passes SIGINT on as SIGTERM
    expect "$what: one error line naming the signal" \
      test "$(grep -cE "^h5gsort: error: interrupted \(signal [0-9]+, $named\)" "$work/log")" -eq 1
    [ -n "$report" ] && expect "$what: a report of the interruption" python3 - "$work/report.json" \
      "$(sed -n 's/^h5gsort: error: //p' "$work/log")" "$named" "${point%-data}" <<'EOF'
import json, re, sys
path, line, named, phase = sys.argv[1:]  # write-data is in the phase "write"
r = json.load(open(path))
assert r["status"] == "interrupted" and r["exit_status"] == 1, r
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["start_time"]), r["start_time"]
assert r["error"] == line and re.search(r"signal \d+, " + named + r"\)$", line), (r["error"], line)
assert r["phase"] == phase and path in r["command"], r
EOF
    expect "$what: no temporary file" no_temp
    expect "$what: input untouched" cmp -s "$work/in.h5" "$work/in.copy"
    [ "$mode" = out ] && expect "$what: no OUTPUT" test ! -e "$work/out.h5"
    $mpiexec "$np" "$bin/h5gsort" "$work/in.h5" "$work/out.h5" -d /k -q --backend "$BACKEND"
    expect "$what: rerun succeeds" check_sorted "$work/in.h5" /k "$work/out.h5" /k
    rm -f "$work/out.h5"
  done
  ;;
input_changes)
  # Another process changes the input while it is sorted (its mtime; bytes appended), on 1 and
  # 2 ranks: the run fails with a message that says so and leaves no output; an unchanged rerun
  # succeeds. The change is made once the ranks sleep 3 s at write-data (up to 60 s of start-up,
  # CUDA contexts included), long after the input was read.
  gen "$work/in.h5" -d /k --count 100000 --type u4 --dist uniform --seed 9
  for spec in touch:2 append:1; do
    IFS=: read -r change np <<<"$spec"
    what="input changed ($change, $np ranks, $BACKEND)"
    H5GSORT_TEST_SLEEP=write-data:3 $mpiexec "$np" "$bin/h5gsort" "$work/in.h5" "$work/out.h5" -d /k \
      --backend "$BACKEND" >"$work/log" 2>&1 &
    launcher=$!
    expect "$what: the ranks reached write-data" wait_hook "$launcher" write-data
    if [ "$change" = touch ]; then touch "$work/in.h5"; else printf 'appended' >>"$work/in.h5"; fi
    wait "$launcher"; rc=$?
    expect "$what: exit 1 ($rc)" test "$rc" -eq 1
    expect "$what: says so" grep -q '^h5gsort: error: input changed while it was sorted' "$work/log"
    expect "$what: no OUTPUT" test ! -e "$work/out.h5"
    expect "$what: no temporary file" no_temp
    $mpiexec "$np" "$bin/h5gsort" "$work/in.h5" "$work/out.h5" -d /k -q --backend "$BACKEND"
    expect "$what: rerun succeeds" check_sorted "$work/in.h5" /k "$work/out.h5" /k
    rm -f "$work/out.h5"
  done
  ;;
streams)
  # Closed or broken standard streams (issue 56 item 5): a run started without a launcher with
  # stdout and stderr closed, and one whose -v and --progress lines go to a reader that leaves
  # after the first byte, exit 0 with OUTPUT committed and sorted. Under mpiexec the launcher
  # forwards the ranks' output, and a reader that leaves ends Open MPI's mpiexec (exit 139 seen,
  # after the ranks had committed) and the job: OUTPUT is then complete or absent, never
  # half-done, and no temporary file stays.
  gen "$work/in.h5" -d /k --count 300000 --type i8 --dist uniform --seed 4
  "$bin/h5gsort" "$work/in.h5" "$work/out.h5" -d /k -v --backend cpu >&- 2>&-
  rc=$?
  expect "stdout and stderr closed: exit 0 ($rc)" test "$rc" -eq 0
  expect "stdout and stderr closed: OUTPUT sorted" check_sorted "$work/in.h5" /k "$work/out.h5" /k
  expect "stdout and stderr closed: no temporary file" no_temp
  rm -f "$work/out.h5"
  "$bin/h5gsort" "$work/in.h5" "$work/out.h5" -d /k -v --progress --backend cpu 2>&1 | head -c1 >/dev/null
  rc=${PIPESTATUS[0]}
  expect "a reader that leaves: exit 0 ($rc)" test "$rc" -eq 0
  expect "a reader that leaves: OUTPUT sorted" check_sorted "$work/in.h5" /k "$work/out.h5" /k
  expect "a reader that leaves: no temporary file" no_temp
  rm -f "$work/out.h5"
  $mpiexec 2 "$bin/h5gsort" "$work/in.h5" "$work/out.h5" -d /k -v --progress --backend cpu 2>&1 |
    head -c1 >/dev/null
  rc=${PIPESTATUS[0]}
  wait_ranks
  if [ -e "$work/out.h5" ]; then # committed before the launcher went (exit 0, or mpiexec's own)
    expect "a reader that leaves mpiexec: OUTPUT sorted (exit $rc)" check_sorted "$work/in.h5" /k "$work/out.h5" /k
  else
    expect "a reader that leaves mpiexec: no OUTPUT, exit non-zero ($rc)" test "$rc" -ne 0
  fi
  expect "a reader that leaves mpiexec: no temporary file" no_temp
  ;;
mpi_init_fails)
  # MPI cannot start (issue 56 item 7: Open MPI told to use a transport that does not exist;
  # MPICH ignores the variables and runs): the launcher ends the ranks left with SIGTERM, which
  # must not come out as an "interrupted" line blaming a signal nobody sent. Five runs at 2
  # ranks: each fails with no OUTPUT (or, where MPI starts, succeeds with OUTPUT sorted), and
  # none prints "interrupted".
  gen "$work/in.h5" -d /k --count 10000 --type u4 --dist uniform --seed 8
  for i in 1 2 3 4 5; do
    for bad in OMPI_MCA_btl=nonexistent OMPI_MCA_pml=nonexistent; do
      what="MPI_Init fails ($bad, run $i)"
      rm -f "$work/out.h5"
      env "$bad" $mpiexec 2 "$bin/h5gsort" "$work/in.h5" "$work/out.h5" -d /k --backend cpu \
        >"$work/log" 2>&1
      rc=$?
      wait_ranks
      expect "$what: no line blaming a signal" test "$(grep -c 'interrupted' "$work/log")" -eq 0
      if [ "$rc" -eq 0 ]; then
        expect "$what: MPI started: OUTPUT sorted" check_sorted "$work/in.h5" /k "$work/out.h5" /k
      else
        expect "$what: exit $rc, no OUTPUT" test ! -e "$work/out.h5"
      fi
      expect "$what: no temporary file" no_temp
    done
  done
  ;;
small_stack)
  # A small stack limit for the ranks (issue 56 item 8: `ulimit -s 48` crashed the main thread,
  # SIGSEGV and no line): a soft limit is raised for the process and the run succeeds; a hard
  # one below what a rank needs stops every rank before MPI starts, one line naming the limit,
  # no OUTPUT, and with --report (issue 55) a report of the failure, its start time and line.
  gen "$work/in.h5" -d /k --count 20000 --type f8 --dist uniform --seed 2
  for np in 1 2; do
    $mpiexec "$np" bash -c "ulimit -S -s 48 && exec '$bin/h5gsort' '$work/in.h5' '$work/out.h5' -d /k -q --backend cpu" \
      >"$work/log" 2>&1
    rc=$?
    expect "soft stack limit 48 KiB, $np ranks: exit 0 ($rc)" test "$rc" -eq 0
    expect "soft stack limit 48 KiB, $np ranks: OUTPUT sorted" check_sorted "$work/in.h5" /k "$work/out.h5" /k
    rm -f "$work/out.h5"
    rm -f "$work/report.json"
    $mpiexec "$np" bash -c "ulimit -s 48 && exec '$bin/h5gsort' '$work/in.h5' '$work/out.h5' -d /k -q --backend cpu --report '$work/report.json'" \
      >"$work/log" 2>&1
    rc=$?
    wait_ranks
    expect "hard stack limit 48 KiB, $np ranks: exit non-zero ($rc), not a crash" \
      test "$rc" -ne 0 -a "$rc" -lt 128
    expect "hard stack limit 48 KiB, $np ranks: one line naming the limit" \
      test "$(grep -c '^h5gsort: error: the stack limit (ulimit -s, hard) is 48 KiB' "$work/log")" -eq 1
    expect "hard stack limit 48 KiB, $np ranks: no OUTPUT" test ! -e "$work/out.h5"
    expect "hard stack limit 48 KiB, $np ranks: no temporary file" no_temp
    expect "hard stack limit 48 KiB, $np ranks: a report of the failure" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "failed" and r["exit_status"] == 1 and r["phase"] == "startup", r
assert r["start_time"].endswith("Z") and r["error"].startswith("the stack limit"), r' "$work/report.json"
  done
  ;;
stale_sweep)
  # The sweep of temporary files killed runs left (issue 56 items 4 and 9) asks the lock a live
  # run holds on "<temp>.lock", not its PID: planted beside OUTPUT, the files of a run whose PID
  # this process cannot see (a dead one here; another PID namespace in life) but whose lock a
  # live process holds stay through a run; those named for the PID of a live program that is no
  # h5gsort run (no lock), and those of a dead run whose lock file is left unlocked, are
  # removed; the run leaves no lock of its own; once the holder is gone, the next run removes
  # the first ones too.
  gen "$work/in.h5" -d /k --count 50000 --type u4 --dist uniform --seed 6
  prefix="$work/.out.h5.h5gsort-$(hostname | cut -c1-64)-"
  dead=5000000 # above the largest pid_max (2^22): never a process here
  sleep 300 & unrelated=$!
  touch "$prefix$dead.tmp" "$prefix$dead.tmp.data.0" "$prefix$unrelated.tmp" \
    "$prefix$((dead + 1)).tmp" "$prefix$((dead + 1)).tmp.lock"
  flock -o "$prefix$dead.tmp.lock" sleep 300 & holder=$! # -o: the lock is flock's own
  for _ in $(seq 50); do [ -e "$prefix$dead.tmp.lock" ] && break; sleep 0.1; done
  $mpiexec 2 "$bin/h5gsort" "$work/in.h5" "$work/out.h5" -d /k -q --backend cpu
  expect "sweep: the run succeeds" check_sorted "$work/in.h5" /k "$work/out.h5" /k
  expect "sweep: a locked run's temporary stays" test -e "$prefix$dead.tmp"
  expect "sweep: a locked run's side file stays" test -e "$prefix$dead.tmp.data.0"
  expect "sweep: a locked run's lock stays" test -e "$prefix$dead.tmp.lock"
  expect "sweep: a live program's PID with no lock is swept" test ! -e "$prefix$unrelated.tmp"
  expect "sweep: a dead run's temporary is swept" test ! -e "$prefix$((dead + 1)).tmp"
  expect "sweep: a dead run's unlocked lock is swept" test ! -e "$prefix$((dead + 1)).tmp.lock"
  expect "sweep: no lock of the run's own left" \
    test -z "$(ls -a "$work" | grep '\.lock$' | grep -v "$dead\.tmp\.lock")"
  pkill -P "$holder" 2>/dev/null
  kill "$holder" "$unrelated" 2>/dev/null
  wait "$holder" "$unrelated" 2>/dev/null
  rm -f "$work/out.h5"
  $mpiexec 1 "$bin/h5gsort" "$work/in.h5" "$work/out.h5" -d /k -q --backend cpu
  expect "sweep: once the holder is gone, its files are swept" no_temp
  ;;
output_appears)
  # Another run at the same OUTPUT (a file another program makes there while this run sorts)
  # finishes first: without --force this run exits 2 "output exists", leaves OUTPUT as the other
  # made it and removes its temporary; with --force it replaces it. The other run is made while
  # the ranks sleep 3 s at write-data. Every way the commit can take (see SHIM), 1 and 2 ranks.
  gen "$work/a.h5" -d /k --count 100000 --type i8 --dist uniform --seed 1
  gen "$work/b.h5" -d /k --count 100000 --type i8 --dist uniform --seed 2
  ways=renameat2
  [ "$shim" = sanitize ] || ways="renameat2 link check"
  for way in $ways; do
    # the shim goes before what the launcher preloads itself (MPICH's runs: -genv LD_PRELOAD)
    preload=()
    [ "$way" = renameat2 ] ||
      preload=(env "H5G_SHIM_NO_LINK=${way#link}" "H5G_SHIM_LOG=$work/shim.log" bash -c 'export LD_PRELOAD="$0${LD_PRELOAD:+:$LD_PRELOAD}"; exec "$@"' "$shim")
    rm -f "$work/out.h5"
    $mpiexec 2 "${preload[@]}" "$bin/h5gsort" "$work/a.h5" "$work/out.h5" -d /k -q --backend cpu
    expect "nothing at OUTPUT ($way): committed" check_sorted "$work/a.h5" /k "$work/out.h5" /k
    expect "nothing at OUTPUT ($way): no temporary file" no_temp
    if [ "$way" != renameat2 ]; then
      expect "nothing at OUTPUT ($way): the shim refused renameat2" grep -q renameat2 "$work/shim.log"
      [ "$way" = check ] && expect "nothing at OUTPUT ($way): the shim refused link" grep -q link "$work/shim.log"
      rm -f "$work/shim.log"
    fi
    for np in 1 2; do
      for force in "" --force; do
        what="output made during the run ($way, $np ranks${force:+, $force})"
        rm -f "$work/out.h5"
        H5GSORT_TEST_SLEEP=write-data:3 $mpiexec "$np" "${preload[@]}" "$bin/h5gsort" \
          "$work/a.h5" "$work/out.h5" -d /k $force --backend cpu >"$work/log" 2>&1 &
        launcher=$!
        expect "$what: the ranks reached write-data" wait_hook "$launcher" write-data
        $mpiexec 1 "$bin/h5gsort" "$work/b.h5" "$work/out.h5" -d /k -q --backend cpu
        cp "$work/out.h5" "$work/other.h5"
        wait "$launcher"; rc=$?
        if [ -z "$force" ]; then
          expect "$what: exit 2 ($rc)" test "$rc" -eq 2
          expect "$what: says so" grep -q '^h5gsort: error: output exists (made during the run' "$work/log"
          expect "$what: OUTPUT is the other run's" cmp -s "$work/out.h5" "$work/other.h5"
        else
          expect "$what: exit 0 ($rc)" test "$rc" -eq 0
          expect "$what: OUTPUT is this run's" check_sorted "$work/a.h5" /k "$work/out.h5" /k
        fi
        expect "$what: no temporary file" no_temp
      done
    done
  done
  ;;
*) echo "unknown case $case"; exit 2 ;;
esac
echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
