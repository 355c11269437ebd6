# shellcheck shell=bash
# A virtual two-node cluster on this machine (sourced, not run): two network namespaces, each a
# "host" with its own hostname (a UTS namespace per command run there) and address on a veth pair
# between them (10.231.0.1 and 10.231.0.2, inside the two namespaces only: no other address is
# ever a target). The file system is shared, as a cluster's parallel file system is. Open MPI
# reaches the second host through an rsh agent that enters its namespace (plm_rsh_agent), and its
# TCP transports are held to the veth subnet. Commands enter a host's network namespace with
# nsenter, not `ip netns exec`, which would mount a sysfs of its own over /sys (slurmd needs
# /sys/fs/cgroup).
#
#   mn_up NAME       makes the hosts node1 and node2 (namespaces h5g-NAME<pid>-node1/2); exits 77
#                    (skip) with the reason where network namespaces are not permitted
#   mn_on HOST CMD   runs CMD on HOST (node1 or node2) in the foreground
#   mn_mpirun LAYOUT ARGS...
#                    mpirun on node1 with LAYOUT ranks per host ("2+2", "3+1"): ARGS after -np
#   mn_down          stops every process left in the namespaces (by pid) and removes them; the
#                    caller's EXIT trap calls it, so it runs on failure too
MN_SUBNET=10.231.0
MN_NS=()
MN_DIR=

mn_skip() {
  echo "SKIP: $*"
  exit 77
}

mn_up() {
  local name=$1$$ i err
  [ "$(id -u)" -eq 0 ] || mn_skip "the virtual hosts need root (network namespaces)"
  command -v ip >/dev/null || mn_skip "'ip' (iproute2) not found"
  command -v unshare >/dev/null || mn_skip "'unshare' (util-linux) not found"
  MN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/h5g-mn.XXXXXX")
  for i in 1 2; do
    if ! err=$(ip netns add "h5g-$name-node$i" 2>&1); then
      mn_down
      mn_skip "network namespaces are not permitted here (ip netns add: $err)"
    fi
    MN_NS+=("h5g-$name-node$i")
  done
  if ! err=$(ip link add "h5g$$a" type veth peer name "h5g$$b" 2>&1); then
    mn_down
    mn_skip "veth pairs are not permitted here (ip link add: $err)"
  fi
  ip link set "h5g$$a" netns "${MN_NS[0]}"
  ip link set "h5g$$b" netns "${MN_NS[1]}"
  ip -n "${MN_NS[0]}" addr add "$MN_SUBNET.1/24" dev "h5g$$a"
  ip -n "${MN_NS[1]}" addr add "$MN_SUBNET.2/24" dev "h5g$$b"
  ip -n "${MN_NS[0]}" link set "h5g$$a" up
  ip -n "${MN_NS[1]}" link set "h5g$$b" up
  for i in 0 1; do ip -n "${MN_NS[i]}" link set lo up; done
  # the rsh agent: [options] HOST COMMAND (one string for a shell, as ssh takes it)
  cat >"$MN_DIR/agent" <<EOF
#!/usr/bin/env bash
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1
shift
exec nsenter --net=/run/netns/h5g-$name-\$host unshare --uts -- sh -c "hostname \$host && exec \$*"
EOF
  chmod +x "$MN_DIR/agent"
  export OMPI_MCA_plm_rsh_agent=$MN_DIR/agent
  export OMPI_MCA_oob_tcp_if_include=$MN_SUBNET.0/24 OMPI_MCA_btl_tcp_if_include=$MN_SUBNET.0/24
  export OMPI_MCA_btl=tcp,self,vader LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
}

mn_on() {
  local host=$1
  shift
  nsenter --net="/run/netns/${MN_NS[${host#node} - 1]}" unshare --uts -- \
    bash -c 'hostname "$0" && exec "$@"' "$host" "$@"
}

mn_mpirun() {
  local layout=$1 first second
  shift
  first=${layout%+*}
  second=${layout#*+}
  printf 'node1 slots=%s\nnode2 slots=%s\n' "$first" "$second" >"$MN_DIR/hosts"
  mn_on node1 timeout 300 mpirun --hostfile "$MN_DIR/hosts" -np $((first + second)) \
    -x PATH -x LD_LIBRARY_PATH "$@"
}

mn_down() {
  local ns pid
  for ns in "${MN_NS[@]}"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  MN_NS=()
  [ -z "$MN_DIR" ] || rm -rf "$MN_DIR"
  MN_DIR=
}
