#!/usr/bin/env bash
# End-to-end check of `tools/testenv up DIR --node` (docs/testenv.md, "A real node"): node0
# Ready, a pod from a locally built image Running, `kubectl logs` and `exec`, the pod reaching
# the `kubernetes` Service over its Service IP with its ServiceAccount token, then `down`, and
# then the machine as it was before `up`: sysctls, links, addresses and routes, iptables and
# nftables rules, mounts, network namespaces, cgroups, host paths and processes.
# Usage (root): test/e2e/testenv_node_test.sh   (the first run builds the node's binaries)
# The machine comparison assumes nothing else changes the machine's network, mounts or sysctls
# while the test runs.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

[[ $(id -u) -eq 0 ]] || {
  echo "testenv_node_test.sh: needs root (containerd, the kubelet, iptables)" >&2
  exit 2
}

dir="$(mktemp -d)"
state="$(mktemp -d)"
cleanup() {
  tools/testenv down "$dir" >/dev/null 2>&1 || true
  if [[ -n ${KEEP_E2E_DIR:-} ]]; then echo "kept $dir $state" >&2; else rm -rf "$dir" "$state"; fi
}
trap cleanup EXIT

# What the node may change on the machine, in a comparable form (no counters, no volatile
# values), one file per aspect in OUT.
machine_state() { # OUT
  local out=$1 m
  mkdir -p "$out"
  sysctl -a 2>/dev/null | { grep -vE '^(fs\.(dentry-state|file-nr|inode-nr|inode-state|aio-nr|quota\.[a-z_]+)|kernel\.(ns_last_pid|random\.(uuid|entropy_avail))|net\.netfilter\.nf_conntrack_count|kernel\.pty\.nr) ' || true; } >"$out/sysctl"
  ip -o link show | sed -E 's/^[0-9]+: //; s/ link\/.*//' | sort >"$out/links"
  ip -o addr show | sed -E 's/^[0-9]+: //; s/ valid_lft.*//' | sort >"$out/addresses"
  { ip route show table all; ip -6 route show table all; ip rule; } | sort >"$out/routes"
  for m in iptables ip6tables; do
    "$m-save" 2>/dev/null | sed -E '/^#/d; s/\[[0-9]+:[0-9]+\]//' >"$out/$m"
  done
  nft list ruleset 2>/dev/null | sed -E 's/counter packets [0-9]+ bytes [0-9]+/counter/' >"$out/nft"
  awk '{ print $2, $3 }' /proc/self/mounts | sort >"$out/mounts"
  { ip netns list; ls -a /run/netns /var/run/netns 2>/dev/null || true; } >"$out/netns"
  # (The machine's own agent makes a memory cgroup under process_api/ for each command it runs.)
  for m in $(awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/self/mounts); do
    find "$m" -maxdepth 2 -type d -not -path '*/process_api/*'
  done | sort >"$out/cgroups"
  find /var/lib /var/log /run /etc /opt /usr/libexec -maxdepth 1 2>/dev/null | sort >"$out/paths"
  # The node's kinds of processes (other users of the machine come and go).
  ps -eo comm= | grep -E '^(kubelet|kube-proxy|kube-controller|kube-scheduler|containerd|containerd-shim|pause)' | sort >"$out/processes" || true
}

# Builds once (cached); the node's binaries too.
tools/testenv build --node >/dev/null
# A node left by a crashed run (its record in /run/vmgate-testenv) is brought down first, so that
# "before" is the machine without a node; a node that is up is another test's: do not take it.
if [[ -f /run/vmgate-testenv/owner ]]; then
  owner="$(cat /run/vmgate-testenv/owner)"
  if [[ -d "$owner" ]] && pgrep -f -- "$owner/node/" >/dev/null; then
    echo "testenv_node_test.sh: a node is up for $owner (one per machine)" >&2
    exit 1
  fi
  echo "bringing down the node left by $owner" >&2
  tools/testenv down "$owner" >/dev/null 2>&1
fi
machine_state "$state/before"

start=$SECONDS
out="$(tools/testenv up "$dir" --node)"
up_seconds=$((SECONDS - start))
echo "up --node took ${up_seconds} s"
check "up prints the KUBECONFIG line" grep -qxF "export KUBECONFIG=$dir/kubeconfig" <<<"$out"
check "up prints the PATH line" grep -qxF "export PATH=$dir/bin:\$PATH" <<<"$out"
eval "$out"

node_ready() { [[ "$(kubectl get node node0 -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" == True ]]; }
check "node0 is Ready" wait_until 60 node_ready
check "node0's InternalIP is the bridge address" \
  test "$(kubectl get node node0 -o 'jsonpath={.status.addresses[?(@.type=="InternalIP")].address}')" = 10.244.0.1
check "the kubernetes Service's endpoint is the bridge address" \
  bash -c 'kubectl get endpointslices -n default -l kubernetes.io/service-name=kubernetes -o jsonpath="{.items[0].endpoints[0].addresses[0]}" | grep -qx 10.244.0.1'
check "the pods' traffic is confined (FORWARD from the bridge to VMGATE-TESTENV)" \
  iptables -C FORWARD -i vmgtest0 -j VMGATE-TESTENV

# A tiny image of our own: Debian's static busybox, imported into the node's containerd.
mkdir -p "$dir/probe/rootfs/bin"
cp /usr/bin/busybox "$dir/probe/rootfs/bin/busybox"
for tool in sh cat echo sleep wget hostname; do
  ln -s busybox "$dir/probe/rootfs/bin/$tool"
done
tools/testenv-node/mkimage "$dir/probe/image.tar" localhost/probe:testenv "$dir/probe/rootfs"
check "ctr (DIR/bin) imports an image into the node" bash -c "ctr -n k8s.io images import '$dir/probe/image.tar' >/dev/null"

kubectl apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: localhost/probe:testenv
    imagePullPolicy: Never
    command: [/bin/sh, -c, 'echo probe-started; exec sleep 3600']
EOF
check "the pod is scheduled onto node0 and Running" \
  kubectl wait --for=condition=Ready pod/probe --timeout=60s
check "the pod runs on node0" test "$(kubectl get pod probe -o jsonpath='{.spec.nodeName}')" = node0
pod_ip="$(kubectl get pod probe -o jsonpath='{.status.podIP}')"
check "the pod's IP ($pod_ip) is on the bridge's network" grep -qE '^10\.244\.0\.[0-9]+$' <<<"$pod_ip"
check "kubectl logs" bash -c 'kubectl logs probe | grep -qx probe-started'
# shellcheck disable=SC2016 # expanded by bash -c
check "kubectl exec" bash -c 'test "$(kubectl exec probe -- hostname)" = probe'
# The `kubernetes` Service by its IP (kube-proxy's rules), authenticated by the pod's projected
# ServiceAccount token (ServiceAccount admission, kube-controller-manager, the kubelet).
# shellcheck disable=SC2016 # expanded in the pod
review="$(kubectl exec probe -- sh -c 'wget -q -O- --no-check-certificate \
  --header "Authorization: Bearer $(cat /var/run/secrets/kubernetes.io/serviceaccount/token)" \
  --header "Content-Type: application/json" \
  --post-data "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}" \
  "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/apis/authentication.k8s.io/v1/selfsubjectreviews"' 2>&1 || true)"
check "the pod reaches the kubernetes Service (10.0.0.1) as its ServiceAccount" \
  grep -qE '"username": ?"system:serviceaccount:default:default"' <<<"$review"
# shellcheck disable=SC2016 # expanded in the pod
check "KUBERNETES_SERVICE_HOST is the Service IP" \
  bash -c 'test "$(kubectl exec probe -- sh -c "echo \$KUBERNETES_SERVICE_HOST")" = 10.0.0.1'
check "the pod's CA bundle is the cluster's" \
  bash -c "kubectl exec probe -- cat /var/run/secrets/kubernetes.io/serviceaccount/ca.crt | cmp -s - '$dir/certs/ca.crt'"

# An image that was not imported: containerd's pull goes to the loopback proxy it is given, not
# to the registry (an address of the test's own bridge, where nothing listens, in case it did).
kubectl run far --image=10.244.0.99:5000/nothing:1 >/dev/null
pull_failed() {
  kubectl get events --field-selector involvedObject.name=far -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' |
    grep -q 'proxyconnect tcp: dial tcp 127.0.0.1:9'
}
check "a pull of an image not imported stops at containerd's loopback proxy" wait_until 60 pull_failed
kubectl delete pod far --wait=false >/dev/null

# A second `up --node` while this node runs is refused (one node per machine).
other="$(mktemp -d)"
check "a second node on the machine is refused" bash -c "! tools/testenv up '$other' --node >/dev/null 2>&1"
tools/testenv down "$other" >/dev/null 2>&1 || true
rm -rf "$other"
check "the refused up left this node Ready" node_ready

# A crash: every process of DIR killed, the pod's containers left running, DIR deleted. The next
# `up --node` (in another DIR) cleans up what it left, and its own `down` restores the machine.
crashed_pids="$(cat "$dir"/*.pid "$dir"/node/*.pid)"
# The pod's processes and containerd's shims, which outlive the crash.
orphans="$(pgrep -x pause; pgrep -xf -- 'sleep 3600'; pgrep -f -- '^/usr/bin/containerd-shim-runc-v2 .*vmgate-testenv')" || true
check "the crash leaves the pod's processes and shims running" test "$(wc -w <<<"$orphans")" -ge 3
# shellcheck disable=SC2086
kill -KILL $crashed_pids
sleep 1
rm -rf "$dir"
dir="$(mktemp -d)"
out="$(tools/testenv up "$dir" --node)"
eval "$out"
check "up --node after a crashed run: node0 Ready" wait_until 60 node_ready
none_alive() { # PID...
  local pid
  for pid in "$@"; do
    ! kill -0 "$pid" 2>/dev/null || return 1
  done
}
# shellcheck disable=SC2086
check "no pod process or shim of the crashed run is left" none_alive $orphans
kubectl run pause --image=localhost/pause:testenv --image-pull-policy=Never >/dev/null
check "a pod Running after the crashed run's cleanup" kubectl wait --for=condition=Ready pod/pause --timeout=60s

start=$SECONDS
check_down "$dir" "$(cat "$dir"/*.pid "$dir"/node/*.pid)"
echo "down and its checks took $((SECONDS - start)) s"

machine_state "$state/after"
for aspect in sysctl links addresses routes iptables ip6tables nft mounts netns cgroups paths processes; do
  check "the machine's $aspect are as before up" diff -u "$state/before/$aspect" "$state/after/$aspect"
done

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
