# shellcheck shell=bash disable=SC2154 # root, DIR, BIN, APISERVER_PORT: set by tools/testenv
# Sourced by tools/testenv: the node of `tools/testenv up DIR --node` (docs/testenv.md, "A real
# node") and its teardown. Uses tools/testenv's log, die, spawn, stop_pidfile, pid_alive,
# kubectl_, DIR, BIN and the certificates in DIR/certs.
#
# One node per machine: the kubelet's places are host-global (/var/lib/kubelet and its
# device-plugin socket, /var/log/pods, the kubepods cgroups, ports 10250/10257/10259). What the
# node changes outside DIR is recorded under $NODE_RUN before it is changed, so that `down`, or
# the next `up --node` after a crash, puts it back:
#   owner            the DIR whose node this is
#   sysctl.before    name=value of each sysctl the node's components change
#   created          host paths that did not exist before (removed again at down)
#   tables.before    the iptables/ip6tables tables that existed before (an nft table that
#                    iptables-nft created for the node is deleted again when left empty)

NODE_RUN=/run/vmgate-testenv            # host-global record, containerd state and sockets
NODE_LIB=/var/lib/vmgate-testenv        # containerd root (images, snapshots)
NODE_BRIDGE=vmgtest0                    # the test's own bridge: node IP and pod network
NODE_IP=10.244.0.1
NODE_POD_CIDR=10.244.0.0/24
NODE_SERVICE_CIDR=10.0.0.0/24           # kube-apiserver's --service-cluster-ip-range
NODE_NAME=node0
NODE_CHAIN=VMGATE-TESTENV               # our filter chain: nothing from the pods leaves the machine
NODE_CONTAINERD_SOCK=$NODE_RUN/containerd/containerd.sock
NODE_PAUSE_IMAGE=localhost/pause:testenv
# Every sysctl a component of the node writes: the CNI bridge plugin (ip_forward), ours
# (bridge-nf-call-iptables) and the kubelet's kernel tunables (pkg/kubelet/cm setupKernelTunables).
NODE_SYSCTLS=(
  net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv4.conf.default.forwarding
  net.ipv6.conf.all.forwarding net.ipv6.conf.default.forwarding
  net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
  kernel.panic kernel.panic_on_oops vm.overcommit_memory vm.panic_on_oom
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes
  net.ipv4.conf.all.route_localnet
)
# Host paths the node may create; those absent before `up` are removed at `down`. /run/mount is
# util-linux's (libmount's utab lock, made by the first mount(8) on a machine: the kubelet's
# tmpfs volumes).
NODE_PATHS=(
  /var/lib/kubelet /var/log/pods /var/log/containers /var/lib/cni /run/containerd
  /run/xtables.lock /var/lib/vmgate-testenv /run/mount
)
NODE_TABLES=(filter nat mangle raw security)

node_dir() { echo "$DIR/node"; }

# Serializes the node's up and down between processes (one node per machine): held from the
# claim until the node is Ready, and through a teardown. A lock on /run itself leaves no file.
node_lock() {
  exec 8</run
  flock 8
}
node_unlock() { exec 8<&-; }

# --- checks ----------------------------------------------------------------------------------

node_require() {
  [[ $(id -u) -eq 0 ]] || die "up --node needs root (containerd, the kubelet, iptables, a bridge)"
  local c missing=()
  for c in containerd containerd-shim-runc-v2 ctr runc iptables iptables-save iptables-restore \
    ip6tables ip6tables-save ip6tables-restore nft ip mount umount gcc python3 flock; do
    command -v "$c" >/dev/null 2>&1 || missing+=("$c")
  done
  [[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] ||
    missing+=(containernetworking-plugins)
  # (A module loaded here stays loaded after down: unloading could pull it from under others.)
  [[ -f /proc/sys/net/bridge/bridge-nf-call-iptables ]] || modprobe br_netfilter 2>/dev/null || true
  [[ -f /proc/sys/net/bridge/bridge-nf-call-iptables ]] || missing+=("br_netfilter (kernel)")
  ((${#missing[@]} == 0)) || die "up --node lacks: ${missing[*]} (tools/install-deps installs the packages)"
  local b build=${VMGATE_BUILD_DIR:-$root/build}
  for b in vmgate kubectl-vmgate vmgate-launcher vmgate-node vmgate-container-disk; do
    [[ -x $build/$b ]] || die "up --node imports the project's images, made from $build/$b: build it first (cmake --build $build), or set VMGATE_BUILD_DIR"
  done
}

# --- leftovers and teardown -------------------------------------------------------------------

# Pids of the node's processes of OWNER (a DIR), found by their command line (the pid files may
# be gone with a crashed run's DIR), and of containerd's shims for our socket; `daemons`: only
# the kubelet, kube-proxy, the controllers and containerd; `all`: also that DIR's kube-apiserver
# and etcd.
node_pids() { # OWNER [daemons|all]
  local owner=$1 pid comm daemons='kubelet|kube-proxy|kube-controller|kube-scheduler|containerd' pattern
  case ${2:-} in
    daemons) pattern="^($daemons)\$" ;;
    all) pattern="^($daemons|containerd-shim.*|kube-apiserver|etcd)\$" ;;
    *) pattern="^($daemons|containerd-shim.*)\$" ;;
  esac
  for pid in $(pgrep -f -- "$owner/" || true) $(pgrep -f -- "-address $NODE_CONTAINERD_SOCK" || true); do
    comm="$(cat "/proc/$pid/comm" 2>/dev/null)" || continue
    [[ $comm =~ $pattern ]] && echo "$pid"
  done
  return 0
}

# Every process in a kubepods cgroup (the pods' containers), in any hierarchy.
node_pod_pids() {
  local m
  for m in $(node_cgroup_mounts); do
    [[ -d "$m/kubepods" ]] && find "$m/kubepods" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -un
}

node_cgroup_mounts() { awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/self/mounts; }

# Like stop_pidfile for each NAME (DIR/NAME.pid), all at once: each takes a second or two.
stop_pidfiles() { # DIR NAME...
  local d=$1 name pids=()
  shift
  for name in "$@"; do
    if pid_alive "$d/$name.pid"; then
      pids+=("$(cat "$d/$name.pid")")
      log "stopping $name (pid ${pids[-1]})"
      kill -TERM -- "-${pids[-1]}" 2>/dev/null || kill -TERM "${pids[-1]}" 2>/dev/null || true
    fi
  done
  local pid deadline=$((SECONDS + 10))
  for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "pid $pid did not stop in 10 s, killing it"
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
    fi
  done
  for name in "$@"; do
    rm -f "$d/$name.pid"
  done
}

kill_and_wait() { # PID...
  (($# > 0)) || return 0
  kill -KILL "$@" 2>/dev/null || true
  local pid
  for pid in "$@"; do
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  done
}

# Mount points at or under PREFIX, deepest first.
mounts_under() { # PREFIX
  awk -v p="$1" '$2 == p || index($2, p "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}

unmount_under() { # PREFIX...
  local p m
  for p in "$@"; do
    for _ in 1 2 3; do
      local left
      left="$(mounts_under "$p")"
      [[ -n "$left" ]] || break
      while read -r m; do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
      done <<<"$left"
    done
  done
}

# The KUBE-* chains (kube-proxy's and the kubelet's) and every rule jumping to them, and our
# chain and its jumps, from one table of one family; iptables-restore --noflush does it at once.
sweep_table() { # iptables|ip6tables TABLE
  local cmd=$1 table=$2 rules
  rules="$("$cmd-save" -t "$table" 2>/dev/null)" || return 0
  "$root/tools/testenv-node/iptables-sweep" "$NODE_CHAIN" <<<"$rules" >"$NODE_RUN/sweep.rules" || return 0
  if [[ -s "$NODE_RUN/sweep.rules" ]]; then
    "$cmd-restore" --noflush <"$NODE_RUN/sweep.rules" || log "could not sweep $cmd table $table"
  fi
  rm -f "$NODE_RUN/sweep.rules"
}

# Is TABLE of FAMILY (ip or ip6) empty of rules and chains of its own, all policies ACCEPT?
table_empty() { # iptables|ip6tables TABLE
  local out
  out="$("$1-save" -t "$2" 2>/dev/null)" || return 1
  ! grep -qE '^-A |^:[^ ]+ (DROP|REJECT)|^:[^ ]+ -' <<<"$out"
}

# Undoes the node recorded in $NODE_RUN (this DIR's, or a crashed run's): processes, containers,
# mounts, network, iptables, cgroups, sysctls, host paths. Idempotent.
node_teardown() {
  [[ -d "$NODE_RUN" ]] || return 0
  local owner=""
  [[ -f "$NODE_RUN/owner" ]] && owner="$(cat "$NODE_RUN/owner")"
  log "tearing down the node${owner:+ of $owner}"
  local start=$SECONDS

  # The clients of kube-apiserver first (a kube-apiserver with connected clients is slow to
  # stop), the kubelet before the containers it would restart.
  if [[ -n "$owner" ]]; then
    DIR=$owner stop_pidfiles "$owner/node" kube-scheduler kube-controller-manager kube-proxy kubelet
  fi

  # The pods' containers: through containerd while it runs, then whatever is left in a kubepods
  # cgroup, then the shims of our containerd.
  if [[ -S "$NODE_CONTAINERD_SOCK" ]]; then
    local ctr_=(ctr --address "$NODE_CONTAINERD_SOCK" -n k8s.io) id
    for id in $(timeout 10 "${ctr_[@]}" tasks ls -q 2>/dev/null || true); do
      timeout 10 "${ctr_[@]}" tasks kill -a -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
    for id in $(timeout 10 "${ctr_[@]}" tasks ls -q 2>/dev/null || true); do
      timeout 10 "${ctr_[@]}" tasks delete -f "$id" >/dev/null 2>&1 || true
    done
  fi
  # shellcheck disable=SC2046
  kill_and_wait $(node_pod_pids)
  if [[ -n "$owner" ]]; then
    DIR=$owner stop_pidfile "$owner/node/containerd.pid" containerd
  fi
  # A crashed run's processes whose pid files are gone, and the shims; with DIR deleted, nothing
  # else could stop its kube-apiserver and etcd.
  # shellcheck disable=SC2046
  kill_and_wait $(node_pod_pids) $(node_pids "${owner:-$NODE_RUN}")
  if [[ -n "$owner" && ! -d "$owner" ]]; then
    # shellcheck disable=SC2046
    kill_and_wait $(node_pids "$owner" all)
  fi

  log "node processes stopped after $((SECONDS - start)) s"

  # kube-proxy's own cleanup, then a sweep of what is left (the kubelet's canary chains too).
  if [[ -n "$owner" && -x "$owner/node/bin/kube-proxy" ]]; then
    timeout 60 "$owner/node/bin/kube-proxy" --cleanup >>"$owner/node/kube-proxy.log" 2>&1 || true
  fi
  local cmd table
  for cmd in iptables ip6tables; do
    for table in "${NODE_TABLES[@]}"; do
      sweep_table "$cmd" "$table"
    done
  done

  # Mounts: the pods' volumes, containerd's rootfs, shm and netns mounts.
  unmount_under /var/lib/kubelet "$NODE_RUN/containerd" "$NODE_LIB" /run/containerd

  ip link del "$NODE_BRIDGE" 2>/dev/null || true
  # The connection-tracking entries of the pods' and the Services' flows (they would expire).
  if command -v conntrack >/dev/null; then
    conntrack -D -s "$NODE_POD_CIDR" >/dev/null 2>&1 || true
    conntrack -D -d "$NODE_POD_CIDR" >/dev/null 2>&1 || true
    conntrack -D --orig-dst "$NODE_SERVICE_CIDR" >/dev/null 2>&1 || true
  fi

  # cgroups: the kubepods trees, deepest first (they are empty now).
  local m
  for m in $(node_cgroup_mounts); do
    [[ -d "$m/kubepods" ]] && find "$m/kubepods" -depth -type d -exec rmdir {} + 2>/dev/null
    [[ -d "$m/kubepods" ]] && log "could not remove cgroup $m/kubepods"
  done

  # iptables-nft tables that the node's rules created, if nothing else uses them now.
  if [[ -f "$NODE_RUN/tables.before" ]]; then
    local family
    for cmd in iptables ip6tables; do
      family=ip
      [[ $cmd == ip6tables ]] && family=ip6
      for table in "${NODE_TABLES[@]}"; do
        if ! grep -qx "$family $table" "$NODE_RUN/tables.before" && nft list table "$family" "$table" >/dev/null 2>&1 &&
          table_empty "$cmd" "$table"; then
          nft delete table "$family" "$table" || true
        fi
      done
    done
  fi

  if [[ -f "$NODE_RUN/sysctl.before" ]]; then
    local line
    while IFS= read -r line; do
      sysctl -q -w "$line" >/dev/null 2>&1 || log "could not restore sysctl $line"
    done <"$NODE_RUN/sysctl.before"
  fi

  if [[ -f "$NODE_RUN/created" ]]; then
    local p
    while IFS= read -r p; do
      [[ -n "$(mounts_under "$p")" ]] && unmount_under "$p"
      rm -rf --one-file-system "$p"
    done <"$NODE_RUN/created"
  fi
  unmount_under "$NODE_RUN"
  rm -rf --one-file-system "$NODE_RUN"
  log "node torn down in $((SECONDS - start)) s"
}

# --- up ---------------------------------------------------------------------------------------

# Takes the machine's node for DIR: refuses if another DIR's node is running, tears down a
# crashed one, then records the state it will change.
node_claim() {
  if [[ -f "$NODE_RUN/owner" ]]; then
    local owner
    owner="$(cat "$NODE_RUN/owner")"
    # A node whose DIR is gone is an orphan: nobody would ever bring it down.
    if [[ "$owner" != "$DIR" && -d "$owner" && -n "$(node_pids "$owner" daemons)" ]]; then
      die "a node is already up for $owner (one per machine): tools/testenv down $owner first"
    fi
    log "cleaning up the node left by an earlier run ($owner)"
    # Its kube-apiserver and etcd too: nothing stops them once their DIR is gone.
    # shellcheck disable=SC2046
    kill_and_wait $(node_pids "$owner" all)
  fi
  node_teardown
  mkdir -p "$NODE_RUN"
  echo "$DIR" >"$NODE_RUN/owner"
  local s p cmd table family
  for s in "${NODE_SYSCTLS[@]}"; do
    [[ -f "/proc/sys/${s//.//}" ]] && echo "$s=$(sysctl -n "$s")"
  done >"$NODE_RUN/sysctl.before"
  for p in "${NODE_PATHS[@]}"; do
    [[ -e "$p" ]] || echo "$p"
  done >"$NODE_RUN/created"
  for cmd in iptables ip6tables; do
    family=ip
    [[ $cmd == ip6tables ]] && family=ip6
    for table in "${NODE_TABLES[@]}"; do
      nft list table "$family" "$table" >/dev/null 2>&1 && echo "$family $table"
    done
  done >"$NODE_RUN/tables.before"
  return 0
}

node_certs() {
  local c="$DIR/certs" name subj
  (
    cd "$c" || exit
    # kube-apiserver's serving certificate must also name the bridge address (the `kubernetes`
    # Service's endpoint); a DIR first brought up without --node has one that does not.
    if ! openssl x509 -in apiserver.crt -noout -ext subjectAltName 2>/dev/null | grep -q "IP Address:$NODE_IP"; then
      log "reissuing kube-apiserver's certificate with $NODE_IP"
      issue_apiserver_cert
    fi
    for name in kubelet-client node0 kube-controller-manager kube-scheduler kube-proxy; do
      [[ -f "$name.crt" ]] && continue
      case $name in
        kubelet-client) subj="/O=system:masters/CN=kube-apiserver-kubelet-client" ;;
        node0) subj="/O=system:nodes/CN=system:node:$NODE_NAME" ;;
        *) subj="/CN=system:$name" ;;
      esac
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$name.key" -out "$name.csr" \
        -subj "$subj" 2>/dev/null
      printf 'extendedKeyUsage=clientAuth\n' >"$name.ext"
      openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
        -extfile "$name.ext" -out "$name.crt" 2>/dev/null
      rm -f "$name.csr" "$name.ext" ca.srl
    done
  )
}

node_kubeconfig() { # NAME CERT
  local kc
  kc="$(node_dir)/$1.kubeconfig"
  "$BIN/kubectl" config --kubeconfig "$kc" set-cluster testenv --server="https://127.0.0.1:$APISERVER_PORT" \
    --certificate-authority="$DIR/certs/ca.crt" --embed-certs=true >/dev/null
  "$BIN/kubectl" config --kubeconfig "$kc" set-credentials "$2" \
    --client-certificate="$DIR/certs/$2.crt" --client-key="$DIR/certs/$2.key" --embed-certs=true >/dev/null
  "$BIN/kubectl" config --kubeconfig "$kc" set-context testenv --cluster=testenv --user="$2" >/dev/null
  "$BIN/kubectl" config --kubeconfig "$kc" use-context testenv >/dev/null
}

# node_only_lo_and_bridge CHAIN -o|-i HOOK MATCH...: a chain, in iptables and ip6tables (where the
# kernel has IPv6), that lets packets through to (-o) or from (-i) loopback and the node's bridge
# only, jumped to first from HOOK for packets matching MATCH.
node_only_lo_and_bridge() {
  local chain=$1 direction=$2 hook=$3 cmd
  shift 3
  for cmd in iptables ip6tables; do
    [[ $cmd == ip6tables && ! -d /proc/sys/net/ipv6 ]] && continue
    "$cmd" -N "$chain"
    "$cmd" -A "$chain" "$direction" lo -j RETURN
    "$cmd" -A "$chain" "$direction" "$NODE_BRIDGE" -j RETURN
    "$cmd" -A "$chain" -j DROP
    "$cmd" -I "$hook" 1 "$@" -j "$chain"
  done
}


# The bridge (node IP, pods' gateway), the service range routed onto it, the sysctls pods need
# to reach Services, and the rules that keep all of it on this machine.
node_network() {
  ip link add "$NODE_BRIDGE" type bridge
  ip addr add "$NODE_IP/24" dev "$NODE_BRIDGE"
  ip link set "$NODE_BRIDGE" up
  # Packets to a Service IP that kube-proxy does not (yet) translate stay on the bridge.
  ip route add "$NODE_SERVICE_CIDR" dev "$NODE_BRIDGE"
  sysctl -q -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1

  # Nothing forwarded from the bridge leaves it; locally sent packets that kube-proxy
  # translated (a Service IP, a node port) go only to loopback or the bridge.
  node_only_lo_and_bridge "$NODE_CHAIN" -o FORWARD -i "$NODE_BRIDGE"
  iptables -I OUTPUT 1 -m conntrack --ctstate DNAT --ctorigdst "$NODE_SERVICE_CIDR" -j "$NODE_CHAIN"
  iptables -I OUTPUT 1 -m conntrack --ctstate DNAT --ctorigdst "$NODE_IP" -j "$NODE_CHAIN"
}

# kube-apiserver listens on all addresses in node mode (loopback for the tests, the bridge for
# the pods): only those two may reach it.
# (Bound to 0.0.0.0, Go listens on IPv6 too.)
node_guard_apiserver() {
  node_only_lo_and_bridge "$NODE_CHAIN-IN" -i INPUT -p tcp --dport "$APISERVER_PORT"
}

node_write_configs() {
  local d
  d="$(node_dir)"
  mkdir -p "$d/cni" "$NODE_RUN/containerd"
  cat >"$d/containerd.toml" <<EOF
version = 2
root = "$NODE_LIB/containerd"
state = "$NODE_RUN/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$NODE_CONTAINERD_SOCK"

[ttrpc]
  address = ""

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$NODE_LIB/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$NODE_PAUSE_IMAGE"
  # Root here lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj below its own.
  restrict_oom_score_adj = true
  device_ownership_from_security_context = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni"

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$NODE_RUN/runc"
EOF
  cat >"$d/cni/10-vmgate-testenv.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "vmgate-testenv",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$NODE_BRIDGE",
      "isGateway": true,
      "isDefaultGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$NODE_POD_CIDR", "rangeStart": "10.244.0.10", "gateway": "$NODE_IP"}]],
        "dataDir": "$NODE_RUN/cni-ipam"
      }
    }
  ]
}
EOF
  # Pods get no name server: nothing they resolve could be reached anyway.
  echo "# tools/testenv: no DNS" >"$d/resolv.conf"
  cat >"$d/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $DIR/certs/ca.crt}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$NODE_CONTAINERD_SOCK
failSwapOn: false
makeIPTablesUtilChains: false
resolvConf: $d/resolv.conf
volumePluginDir: /var/lib/kubelet/volumeplugins
serializeImagePulls: false
registerNode: true
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
  cat >"$d/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $d/kube-proxy.kubeconfig}
mode: iptables
hostnameOverride: $NODE_NAME
clusterCIDR: $NODE_POD_CIDR
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: [primary]
iptables: {localhostNodePorts: false}
# Zero: kube-proxy leaves the conntrack sysctls as they are.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s, udpTimeout: 0s, udpStreamTimeout: 0s}
EOF
}

node_pause_image() {
  local d
  d="$(node_dir)"
  rm -rf "$d/pause"
  mkdir -p "$d/pause/rootfs"
  gcc -static -Os -s -o "$d/pause/rootfs/pause" "$root/tools/testenv-node/pause.c"
  "$root/tools/testenv-node/mkimage" "$d/pause/image.tar" "$NODE_PAUSE_IMAGE" "$d/pause/rootfs" /pause
  "$d/bin/ctr" -n k8s.io images import "$d/pause/image.tar" >/dev/null
}

# The project's images (localhost/vmgate:dev, vmgate-launcher:dev, vmgate-guest:dev), built by
# tools/image/dev-images from the binaries in $VMGATE_BUILD_DIR (default: the checkout's build/)
# into a cache outside the checkout (rebuilt only when an input changed), then imported.
NODE_IMAGE_CACHE=${VMGATE_IMAGE_CACHE:-/var/cache/vmgate/dev-images}
node_project_images() {
  local d build=${VMGATE_BUILD_DIR:-$root/build} image start=$SECONDS
  d="$(node_dir)"
  "$root/tools/image/dev-images" "$build" "$NODE_IMAGE_CACHE" dev 2>>"$d/images.log" ||
    die "building the project's images failed; see $d/images.log"
  for image in vmgate vmgate-launcher vmgate-guest; do
    "$d/bin/ctr" -n k8s.io images import "$NODE_IMAGE_CACHE/$image.tar" >>"$d/images.log" 2>&1 ||
      die "importing $NODE_IMAGE_CACHE/$image.tar failed; see $d/images.log"
  done
  log "images localhost/vmgate:dev, vmgate-launcher:dev, vmgate-guest:dev imported after $((SECONDS - start)) s"
}

node_wait() { # SECONDS WHAT PIDFILE COMMAND...
  local deadline=$((SECONDS + $1)) what=$2 pidfile=$3
  shift 3
  until "$@" >/dev/null 2>&1; do
    pid_alive "$pidfile" || die "$what exited; see ${pidfile%.pid}.log"
    ((SECONDS < deadline)) || die "$what not ready in $1 s; see ${pidfile%.pid}.log"
    sleep 0.2
  done
}

# Everything after the control plane: containerd, the pause image, the controllers, kube-proxy
# and the kubelet; returns once node0 is Ready and pods can be created in `default`.
node_start() { # NODE-BIN
  local nbin=$1 d c="$DIR/certs" start=$SECONDS
  d="$(node_dir)"
  mkdir -p "$d/bin"
  for b in kubelet kube-proxy kube-controller-manager kube-scheduler; do
    ln -sfn "$nbin/$b" "$d/bin/$b"
  done
  printf '#!/bin/sh\nexec %s --address %s "$@"\n' "$(command -v ctr)" "$NODE_CONTAINERD_SOCK" >"$d/bin/ctr"
  chmod +x "$d/bin/ctr"
  ln -sfn "$d/bin/ctr" "$DIR/bin/ctr"
  node_guard_apiserver
  node_write_configs
  local n
  for n in kube-controller-manager kube-scheduler kube-proxy; do
    node_kubeconfig "$n" "$n"
  done
  node_kubeconfig kubelet node0

  # No registry is to be reached from here: an image not imported fails to pull at a proxy on a
  # loopback port where nothing listens (Go's HTTP clients honour HTTP(S)_PROXY; loopback
  # registries are never proxied).
  spawn_node containerd env HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 NO_PROXY= \
    containerd --config "$d/containerd.toml"
  node_wait 30 containerd "$d/containerd.pid" "$d/bin/ctr" version
  node_pause_image
  log "containerd ready, pause image imported after $((SECONDS - start)) s"
  node_project_images

  spawn_node kube-controller-manager "$d/bin/kube-controller-manager" --kubeconfig "$d/kube-controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file="$c/sa.key" --root-ca-file="$c/ca.crt" \
    --cluster-signing-cert-file="$c/ca.crt" --cluster-signing-key-file="$c/ca.key" \
    --service-cluster-ip-range="$NODE_SERVICE_CIDR" --allocate-node-cidrs=false \
    --flex-volume-plugin-dir=/var/lib/kubelet/volumeplugins \
    --profiling=false --v=1
  spawn_node kube-scheduler "$d/bin/kube-scheduler" --kubeconfig "$d/kube-scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false --profiling=false --v=1
  spawn_node kube-proxy "$d/bin/kube-proxy" --config "$d/kube-proxy.yaml" --v=1
  spawn_node kubelet "$d/bin/kubelet" --config "$d/kubelet.yaml" --kubeconfig "$d/kubelet.kubeconfig" \
    --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --v=1

  local deadline=$((SECONDS + 120))
  until [[ "$(kubectl_ get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]; do
    for n in kubelet kube-proxy kube-controller-manager kube-scheduler containerd; do
      pid_alive "$d/$n.pid" || die "$n exited; see $d/$n.log"
    done
    ((SECONDS < deadline)) || die "node $NODE_NAME not Ready in 120 s; see $d/kubelet.log"
    sleep 0.5
  done
  log "node $NODE_NAME Ready after $((SECONDS - start)) s"
  # Pods need the namespace's ServiceAccount (ServiceAccount admission is on) and its CA.
  node_wait 60 kube-controller-manager "$d/kube-controller-manager.pid" kubectl_ -n default get serviceaccount default
  node_wait 60 kube-controller-manager "$d/kube-controller-manager.pid" kubectl_ -n default get configmap kube-root-ca.crt
}

spawn_node() { # NAME CMD...
  local name=$1 d
  d="$(node_dir)"
  shift
  setsid "$@" </dev/null >>"$d/$name.log" 2>&1 8<&- & # (8: node_lock's)
  echo $! >"$d/$name.pid"
}
