#!/usr/bin/env bash
# vmgate-node's device plugins against a real kubelet (tools/testenv up DIR --node; docs/node.md):
# vmgate-node runs on the host on the kubelet's /var/lib/kubelet/device-plugins; node0's capacity
# shows devices.kubevirt.io/{kvm,tun,vhost-net,vhost-vsock} (1000 each; allocatable 1000 where the
# device node exists, 0 where it does not: unhealthy); an unprivileged pod requesting kvm and tun
# gets both device nodes and opens them; the kubelet restarted (it empties its socket directory)
# → the plugins register again and a new pod still gets its devices; a device node removed
# (under a device root of the test's own) → allocatable 0, back → 1000; SIGTERM → vmgate-node
# exits 0 and its sockets are gone.
# Usage (root, one node per machine): test/e2e/node_plugin_test.sh
# VMGATE_BUILD_DIR: the build tree holding vmgate-node (default build/).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
root=$PWD

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

[[ $(id -u) -eq 0 ]] || {
  echo "node_plugin_test.sh: needs root (the kubelet, containerd)" >&2
  exit 2
}
node_binary=${VMGATE_BUILD_DIR:-$root/build}/vmgate-node
[[ -x $node_binary ]] || {
  echo "node_plugin_test.sh: no $node_binary (cmake --build build --target vmgate-node)" >&2
  exit 2
}
plugins=/var/lib/kubelet/device-plugins

agent_pid=""
e2e_extra_cleanup() {
  if [[ -n $agent_pid ]]; then kill -TERM "$agent_pid" 2>/dev/null || true; fi
}
tools/testenv build --node >/dev/null
start=$SECONDS
e2e_start_testenv --node
echo "up --node took $((SECONDS - start)) s"
kubectl get node node0 >/dev/null

# A node's quantity as a plain number: the API server writes 1000 as "1k".
plain() { sed -e 's/^\([0-9]*\)k$/\1000/'; }
allocatable() { kubectl get node node0 -o "jsonpath={.status.allocatable.devices\.kubevirt\.io/$1}" | plain; }
capacity() { kubectl get node node0 -o "jsonpath={.status.capacity.devices\.kubevirt\.io/$1}" | plain; }
# Health is read under a device root of the test's own (--dev-root), where the machine's device
# nodes that exist are mirrored by empty files, so that one can disappear without touching /dev;
# Allocate still hands out the real /dev paths.
devroot=$work/devroot
mkdir -p "$devroot/dev/net"
for node in /dev/kvm /dev/net/tun /dev/vhost-net /dev/vhost-vsock; do
  if [[ -e $node ]]; then : >"$devroot$node"; fi
done
# The count node0 should offer: 1000 while the device node exists under the device root, else 0.
expected() { if [[ -e $devroot$1 ]]; then echo 1000; else echo 0; fi; }
declare -A paths=([kvm]=/dev/kvm [tun]=/dev/net/tun [vhost-net]=/dev/vhost-net [vhost-vsock]=/dev/vhost-vsock)
all_advertised() {
  local name
  for name in "${!paths[@]}"; do
    [[ "$(capacity "$name")" == 1000 && "$(allocatable "$name")" == "$(expected "${paths[$name]}")" ]] || return 1
  done
}
registrations() { grep -c '"msg":"registered with the kubelet"' "$work/vmgate-node.log" || true; }

start=$SECONDS
setsid "$node_binary" --device-plugin-dir "$plugins" --dev-root "$devroot" </dev/null >"$work/vmgate-node.log" 2>&1 &
agent_pid=$!
check "node0 advertises the four resources (capacity 1000; allocatable 1000 where the device exists)" \
  wait_until 30 all_advertised
echo "vmgate-node start -> node0's allocatable: $((SECONDS - start)) s"
for name in "${!paths[@]}"; do
  echo "  devices.kubevirt.io/$name: capacity $(capacity "$name"), allocatable $(allocatable "$name") (${paths[$name]}: $([[ -e $devroot${paths[$name]} ]] && echo present || echo missing))"
done
check "the plugins' sockets are KubeVirt's names" \
  test -S "$plugins/kubevirt-kvm.sock" -a -S "$plugins/kubevirt-tun.sock" -a -S "$plugins/kubevirt-vhost-net.sock" -a -S "$plugins/kubevirt-vhost-vsock.sock"

# A tiny image of our own (Debian's static busybox) and a pod that asks for kvm and tun, not
# privileged: the device nodes exist in the container only through Allocate's DeviceSpecs.
mkdir -p "$work/probe/rootfs/bin"
cp /usr/bin/busybox "$work/probe/rootfs/bin/busybox"
for tool in sh sleep echo; do ln -s busybox "$work/probe/rootfs/bin/$tool"; done
tools/testenv-node/mkimage "$work/probe/image.tar" localhost/probe:node-plugin "$work/probe/rootfs"
ctr -n k8s.io images import "$work/probe/image.tar" >/dev/null
device_pod() { # NAME
  kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  restartPolicy: Never
  containers:
  - name: main
    image: localhost/probe:node-plugin
    imagePullPolicy: Never
    securityContext: {privileged: false, allowPrivilegeEscalation: false}
    command: [/bin/sh, -c, 'exec 3<>/dev/kvm && exec 4<>/dev/net/tun && echo opened-kvm-and-tun; exec sleep 3600']
    resources:
      limits: {devices.kubevirt.io/kvm: "1", devices.kubevirt.io/tun: "1"}
EOF
}
opened() { kubectl logs "$1" 2>/dev/null | grep -qx opened-kvm-and-tun; }
device_pod devices
check "a pod requesting kvm and tun is Running on node0" kubectl wait --for=condition=Ready pod/devices --timeout=60s
check "the pod opened /dev/kvm and /dev/net/tun" wait_until 20 opened devices
check "node0's kvm allocation is counted" bash -c "kubectl describe node node0 | grep -qE 'devices.kubevirt.io/kvm +1 +1'"

# The device node disappears: the kubelet hears Unhealthy and node0's allocatable drops to 0
# (capacity stays); it comes back: 1000 again.
kvm_allocatable_is() { [[ "$(allocatable kvm)" == "$1" && "$(capacity kvm)" == 1000 ]]; }
if [[ -e $devroot/dev/kvm ]]; then
  start=$SECONDS
  rm "$devroot/dev/kvm"
  check "kvm's node gone: node0's allocatable kvm is 0" wait_until 30 kvm_allocatable_is 0
  echo "device node removed -> allocatable 0: $((SECONDS - start)) s"
  start=$SECONDS
  : >"$devroot/dev/kvm"
  check "kvm's node back: node0's allocatable kvm is 1000" wait_until 30 kvm_allocatable_is 1000
  echo "device node back -> allocatable 1000: $((SECONDS - start)) s"
fi

# The kubelet restarted: it removes every file of its device-plugin directory and serves a new
# kubelet.sock; the plugins must notice and register again.
before=$(registrations)
kubelet_log_lines=$(wc -l <"$dir/node/kubelet.log")
pid=$(cat "$dir/node/kubelet.pid")
mapfile -d '' kubelet_command <"/proc/$pid/cmdline"
start=$SECONDS
kill -TERM "$pid"
wait_until 30 bash -c "! kill -0 $pid 2>/dev/null"
setsid "${kubelet_command[@]}" </dev/null >>"$dir/node/kubelet.log" 2>&1 &
echo $! >"$dir/node/kubelet.pid"
registered_again() { (($(registrations) >= before + 4)); }
check "the plugins register again after the kubelet restart" wait_until 30 registered_again
echo "kubelet restart -> registered again: $((SECONDS - start)) s"
kubelet_saw_them() {
  tail -n "+$((kubelet_log_lines + 1))" "$dir/node/kubelet.log" | grep -q 'devices.kubevirt.io/kvm' &&
    tail -n "+$((kubelet_log_lines + 1))" "$dir/node/kubelet.log" | grep -q 'devices.kubevirt.io/tun'
}
check "the new kubelet logs the registrations" wait_until 10 kubelet_saw_them
check "the sockets are back" wait_until 10 test -S "$plugins/kubevirt-kvm.sock" -a -S "$plugins/kubevirt-tun.sock"
node_ready() { [[ "$(kubectl get node node0 -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" == True ]]; }
check "node0 is Ready again" wait_until 60 node_ready
check "node0 still advertises the four resources" wait_until 30 all_advertised
device_pod after-restart
check "a new pod requesting kvm and tun runs after the restart" kubectl wait --for=condition=Ready pod/after-restart --timeout=60s
check "it opened /dev/kvm and /dev/net/tun" wait_until 20 opened after-restart

start=$SECONDS
kill -TERM "$agent_pid"
status=0
wait "$agent_pid" || status=$?
agent_pid=""
check "SIGTERM: vmgate-node exits 0 (took $((SECONDS - start)) s)" test "$status" -eq 0
check "its sockets are removed, kubelet.sock stays" \
  bash -c "! ls '$plugins'/kubevirt-*.sock 2>/dev/null && test -S '$plugins/kubelet.sock'"
kubectl delete pod devices after-restart --wait=false >/dev/null

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
