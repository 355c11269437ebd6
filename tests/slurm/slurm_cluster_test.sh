#!/usr/bin/env bash
# Brings up a real single-node Slurm cluster on localhost (munged, slurmctld and slurmd from
# Debian's packages; configuration, keys, state and logs in a temp dir) and runs jobs/ on it, or
# with NODES = 2 a two-node one: the hosts node1 and node2 of tests/multinode/cluster.sh (network
# namespaces on one machine), slurmctld and a slurmd on node1, a slurmd on node2, every client
# command run on node1, each job spread over both nodes:
#   1. jobs/pipeline.sh: generate -> sort with 2 tasks -> verify, chained with afterok;
#   2. jobs/h5gsort.sbatch with 4 tasks on the same input (arguments in the environment);
#   3. jobs/h5gsort.sbatch on a missing input: the job must end FAILED with h5gsort's exit code
#      2, and a job depending on it with afterok must be cancelled without running.
# Sorted outputs are checked with h5gsort_check, job states with `scontrol show job` (there is
# no accounting database, so MinJobAge keeps finished jobs visible).
#
#   slurm_cluster_test.sh SOURCE_DIR BIN_DIR [NODES]
#
# Exits 77 (skipped) when munge/Slurm are not installed, when not run as root, or (two nodes)
# where network namespaces are not permitted.
# H5G_KEEP_SLURM_DIR=1 keeps the temp dir (logs, job outputs) for debugging.
set -euo pipefail

source_dir=$(cd "$1" && pwd)
bin_dir=$(cd "$2" && pwd)
nodes=${3:-1}
jobs_dir=$source_dir/jobs
test_deadline=$((SECONDS + 420))   # below the CTest TIMEOUT, so the cleanup always runs

skip() { echo "SKIP: $*"; exit 77; }
for program in munged munge slurmctld slurmd sbatch scontrol squeue scancel srun; do
  command -v "$program" >/dev/null ||
    skip "'$program' not found: install Debian's munge and slurm-wlm packages (see .ci/deps)"
done
[ "$(id -u)" -eq 0 ] || skip "the test cluster runs its daemons as root (SlurmUser=root)"
for program in h5gsort h5gsort-gen h5gsort_check; do
  [ -x "$bin_dir/$program" ] || { echo "FAIL: $bin_dir/$program not built"; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/h5gsort-slurm.XXXXXX")
chmod 711 "$tmp"   # munged wants every directory above its socket searchable by all
mkdir -m 755 "$tmp/socket"
mkdir -m 700 "$tmp/munge"
mkdir "$tmp/log" "$tmp/state" "$tmp/spool" "$tmp/jobtmp" "$tmp/work"
conf=$tmp/slurm.conf
export SLURM_CONF=$conf
daemon_pids=()   # munged, slurmctld, slurmd: in start order

log() { echo "[$(date +%T)] $*"; }

show_logs() {
  local file
  for file in "$tmp"/log/*.log "$tmp"/work/*.out "$tmp"/work/pipeline/*.out; do
    [ -f "$file" ] || continue
    echo "---- ${file#"$tmp"/} (last 25 lines)"
    tail -n 25 "$file"
  done
}

fail() {
  echo "FAIL: $*"
  show_logs
  exit 1
}

daemons_alive() {
  local pid
  [ ${#daemon_pids[@]} -eq $((2 + nodes)) ] || return 1
  for pid in "${daemon_pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || return 1
  done
}

stop_process() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local status=$? i
  trap - EXIT
  if daemons_alive; then
    # Jobs first, so that no slurmstepd outlives slurmd.
    squeue -h -o %i 2>/dev/null | xargs -r scancel 2>/dev/null || true
    for i in $(seq 1 20); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  for ((i = ${#daemon_pids[@]} - 1; i >= 0; i--)); do
    stop_process "${daemon_pids[i]}"
  done
  [ "$nodes" = 1 ] || mn_down
  if [ "${H5G_KEEP_SLURM_DIR:-0}" = 1 ]; then
    echo "kept $tmp"
  else
    rm -rf "$tmp"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Two nodes: the hosts, and the clients (sbatch, scontrol, ...) run on node1, where slurmctld is.
host_names=(localhost)
host_addrs=(127.0.0.1)
on_node1=()
if [ "$nodes" = 2 ]; then
  source "$source_dir/tests/multinode/cluster.sh"
  mn_up slurm
  host_names=(node1 node2)
  host_addrs=("$MN_SUBNET.1" "$MN_SUBNET.2")
  on_node1=(mn_on node1)
  for program in sbatch scontrol squeue scancel srun; do
    eval "$program() { mn_on node1 $program \"\$@\"; }"
  done
fi

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ctld_port=$((20000 + $$ % 20000))
while port_in_use "$ctld_port" || port_in_use $((ctld_port + 1)); do
  ctld_port=$((ctld_port + 2))
done

# The node as slurmd sees it, but with at least 4 CPUs so that the 4-task job fits on small
# machines (config_overrides: slurmd then trusts slurm.conf instead of draining the node).
cpus=$(nproc)
[ "$cpus" -ge 4 ] || cpus=4
memory_mb=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
[ -n "$memory_mb" ] || fail "slurmd -C did not report RealMemory"

cat > "$conf" <<EOF
ClusterName=h5gsorttest
SlurmctldHost=${host_names[0]}(${host_addrs[0]})
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/socket/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/%n
TmpFS=$tmp/jobtmp
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd-%n.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd-%n.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=pmix
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=3600
ReturnToService=2
SlurmdParameters=config_overrides
EOF
for i in "${!host_names[@]}"; do
  echo "NodeName=${host_names[i]} NodeAddr=${host_addrs[i]} CPUs=$cpus RealMemory=$memory_mb State=UNKNOWN"
done >> "$conf"
echo "PartitionName=test Nodes=$(IFS=,; echo "${host_names[*]}") Default=YES MaxTime=INFINITE State=UP" >> "$conf"

# Daemons run in the foreground as children of this script: their pids are known at once.
log "starting munged, slurmctld, slurmd (ports $ctld_port, $((ctld_port + 1)))"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$tmp/munge/munge.key"
munged --foreground --socket="$tmp/socket/munge.socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" \
  --log-file="$tmp/log/munged.log" > "$tmp/log/munged.stdout.log" 2>&1 &
daemon_pids+=($!)
for i in $(seq 1 50); do
  [ -S "$tmp/socket/munge.socket" ] && break
  kill -0 "${daemon_pids[0]}" 2>/dev/null || fail "munged exited"
  sleep 0.1
done
munge -S "$tmp/socket/munge.socket" -n | unmunge -S "$tmp/socket/munge.socket" >/dev/null ||
  fail "munge credentials do not round-trip"

# (mn_on execs the daemon: the pid is the daemon's)
"${on_node1[@]}" slurmctld -D -f "$conf" > "$tmp/log/slurmctld.stdout.log" 2>&1 &
daemon_pids+=($!)
for host in "${host_names[@]}"; do
  mkdir -p "$tmp/spool/$host"
  if [ "$nodes" = 2 ]; then
    # a job-temporary directory per node (PMIx makes the same names in it on every node): a
    # configuration per slurmd that differs in TmpFS alone
    mkdir -p "$tmp/jobtmp/$host"
    sed "s|^TmpFS=.*|TmpFS=$tmp/jobtmp/$host|" "$conf" > "$tmp/slurm-$host.conf"
    mn_on "$host" slurmd -D -f "$tmp/slurm-$host.conf" -N "$host" \
      > "$tmp/log/slurmd-$host.stdout.log" 2>&1 &
  else
    slurmd -D -f "$conf" -N "$host" > "$tmp/log/slurmd-$host.stdout.log" 2>&1 &
  fi
  daemon_pids+=($!)
done

for host in "${host_names[@]}"; do
  node_state=
  for i in $(seq 1 120); do
    daemons_alive || fail "a daemon exited during start-up"
    node_state=$(scontrol -o show node "$host" 2>/dev/null | grep -o 'State=[^ ]*' || true)
    case $node_state in State=IDLE*) break ;; esac
    sleep 0.5
  done
  [[ $node_state == State=IDLE* ]] || fail "node $host not idle after 60 s ($node_state)"
done
srun --mpi=list 2>&1 | grep -qw pmix || fail "Slurm has no PMIx plugin (srun --mpi=list)"
log "cluster up: node(s) ${host_names[*]} idle, $cpus CPUs, ${memory_mb} MB each"

# job_field JOBID FIELD: one field of `scontrol show job`.
job_field() {
  scontrol -o show job "$1" | grep -o "\b$2=[^ ]*" | head -n 1 | cut -d= -f2- || true
}

# wait_job JOBID: wait until the job reached a final state; print that state.
wait_job() {
  local state
  while [ "$SECONDS" -lt "$test_deadline" ]; do
    daemons_alive || { echo DAEMON_EXITED; return 0; }
    state=$(job_field "$1" JobState)
    case $state in
      PENDING | CONFIGURING | RUNNING | COMPLETING | SUSPENDED | REQUEUED | RESIZING | "") ;;
      *) echo "$state"; return 0 ;;
    esac
    sleep 0.5
  done
  echo TIMEOUT_IN_TEST
}

# expect_job JOBID STATE EXIT_CODE WHAT: the job ended in STATE with exit code EXIT_CODE.
expect_job() {
  local state exit_code
  state=$(wait_job "$1")
  exit_code=$(job_field "$1" ExitCode)
  log "job $1 ($4): $state, exit code $exit_code, reason $(job_field "$1" Reason)"
  [[ $state == "$2" && $exit_code == "$3" ]] ||
    fail "job $1 ($4) ended $state with exit code $exit_code, expected $2 with $3"
}

# check_sorted INPUT OUTPUT WHAT: OUTPUT holds INPUT's keys in order (independent checker).
check_sorted() {
  "$bin_dir/h5gsort_check" "$1" -d /keys "$2" -o /keys || fail "$3: output not the sorted input"
}

# check_report FILE RANKS: the --report JSON was written next to the job output and counts
# RANKS ranks and all the keys.
check_report() {
  [ -s "$1" ] || fail "no report $1"
  json_has_number "$1" ranks "$2" || fail "$1 does not give \"ranks\": $2"
  json_has_number "$1" keys "$key_count" || fail "$1 does not give \"keys\": $key_count"
}
json_has_number() { grep -Eq "\"$2\"[[:space:]]*:[[:space:]]*$3[^0-9.]" "$1"; }

export H5GSORT_OPTIONS="--backend cpu --verify"
gpu_override=(--gpus-per-task=0 --cpus-per-task=1)   # this node has no GPUs
# tasks per node: two nodes split each job's tasks between them
per_node=(--nodes="$nodes")
key_count=1000003
cd "$tmp/work"

log "1. jobs/pipeline.sh: generate -> sort (2 tasks) -> verify"
pipeline_output=$(H5GSORT_WORKDIR="$tmp/work/pipeline" H5GSORT_BIN_DIR="$bin_dir" \
  H5GSORT_TASKS=2 H5GSORT_COUNT=$key_count H5GSORT_SEED=5 \
  "${on_node1[@]}" "$jobs_dir/pipeline.sh" "${gpu_override[@]}" "${per_node[@]}" \
  --ntasks-per-node=$((2 / nodes))) || fail "jobs/pipeline.sh failed"
echo "$pipeline_output"
gen_job=$(awk '$1 == "generate" { print $2 }' <<< "$pipeline_output")
sort_job=$(awk '$1 == "sort" { print $2 }' <<< "$pipeline_output")
verify_job=$(awk '$1 == "verify" { print $2 }' <<< "$pipeline_output")
expect_job "$gen_job" COMPLETED 0:0 generate
expect_job "$sort_job" COMPLETED 0:0 "sort, 2 tasks"
expect_job "$verify_job" COMPLETED 0:0 verify
[ "$(job_field "$sort_job" NumTasks)" = 2 ] || fail "sort job did not run 2 tasks"
input=$tmp/work/pipeline/input.h5
check_sorted "$input" "$tmp/work/pipeline/sorted.h5" "sort, 2 tasks"
check_report "$tmp/work/pipeline/h5gsort-$sort_job.json" 2
json_has_number "$tmp/work/pipeline/h5gsort-$sort_job.json" nodes "$nodes" ||
  fail "the sort job's report does not give \"nodes\": $nodes"

log "2. jobs/h5gsort.sbatch with 4 tasks, files given in the environment"
job=$(H5GSORT="$bin_dir/h5gsort" H5GSORT_INPUT="$input" H5GSORT_OUTPUT="$tmp/work/sorted4.h5" \
  H5GSORT_DATASET=/keys sbatch --parsable "${per_node[@]}" --ntasks-per-node=$((4 / nodes)) "${gpu_override[@]}" \
  "$jobs_dir/h5gsort.sbatch") || fail "sbatch failed"
expect_job "$job" COMPLETED 0:0 "sort, 4 tasks"
[ "$(job_field "$job" NumTasks)" = 4 ] || fail "job $job did not run 4 tasks"
[ "$nodes" = 1 ] || [ "$(job_field "$job" NodeList)" = "node[1-2]" ] ||
  fail "job $job ran on $(job_field "$job" NodeList), not on node[1-2]"
check_sorted "$input" "$tmp/work/sorted4.h5" "sort, 4 tasks"
check_report "$tmp/work/h5gsort-$job.json" 4
json_has_number "$tmp/work/h5gsort-$job.json" nodes "$nodes" ||
  fail "the 4-task job's report does not give \"nodes\": $nodes"

log "3. a missing input fails the job, and the afterok dependent job never runs"
bad_job=$(H5GSORT="$bin_dir/h5gsort" sbatch --parsable "${per_node[@]}" --ntasks-per-node=$((2 / nodes)) "${gpu_override[@]}" \
  "$jobs_dir/h5gsort.sbatch" "$tmp/work/missing.h5" "$tmp/work/never.h5" /keys) ||
  fail "sbatch failed"
dependent_job=$(sbatch --parsable --job-name=dependent --dependency=afterok:"$bad_job" \
  --kill-on-invalid-dep=yes --wrap="touch $(printf %q "$tmp/work/dependent-ran")") || fail "sbatch failed"
expect_job "$bad_job" FAILED 2:0 "missing input"
grep -q 'h5gsort: error:' "$tmp/work/h5gsort-$bad_job.out" ||
  fail "job $bad_job output has no 'h5gsort: error:' line"
[ ! -e "$tmp/work/never.h5" ] || fail "failed job left an output file"
expect_job "$dependent_job" CANCELLED 0:0 "afterok dependent"
[ ! -e "$tmp/work/dependent-ran" ] || fail "the afterok dependent job ran"

log "PASS"
