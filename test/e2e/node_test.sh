#!/usr/bin/env bash
# The whole stack on a real node, as a user runs it (docs/install.md, "Run VMs with vmgate
# alone"): `tools/testenv up DIR --node` (which builds and imports localhost/vmgate:dev,
# vmgate-launcher:dev and vmgate-guest:dev), `helm install` with ci/node-values.yaml (the webhook
# behind its Service with `vmgate certs`' certificates, vmgate controller, vmgate-node), then
# kubectl only:
#   - a VM conflicting with its instancetype is refused, `--dry-run=server` answers;
#   - VMs with common instancetypes and preferences (BIOS, EFI) from the vmgate-guest
#     containerDisk: VMI, launcher pod scheduled onto node0 by kube-scheduler through the device
#     plugins and node labels, the guest's marker in `kubectl logs -c guest-console-log`, VMI
#     Running, VM Ready; `kubectl delete vm` -> the pod terminates, the guest powers off by ACPI,
#     no QEMU left;
#   - what a tenant tried (docs/security.md): a serviceAccount volume gives the guest that
#     account's token and no other; containerDisks linking to, or backed by, the pod's token are
#     refused by the copy before the launcher runs; a VM failing so shows CrashLoopBackOff;
#   - a VM whose CPU model no node offers stays Pending, the scheduler's message naming the label;
#   - vmgate-node's pod deleted -> labels and devices come back;
#   - the kubelet restarted -> the device plugins register again, a new VM still boots;
#   - KubeVirt's own virtctl through the aggregator to vmgate subresources and vmgate-node:
#     pause/unpause, console (a typed line runs in the guest), restart, stop, start, the unhappy
#     paths' messages, 403 for a user without the verb and for another namespace's user;
#   - the controller's leader pod deleted -> the other replica takes over within the Lease.
# Usage (root): test/e2e/node_test.sh     (VMGATE_BUILD_DIR: the binaries, default build/)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

[[ $(id -u) -eq 0 ]] || {
  echo "node_test.sh: needs root (tools/testenv up --node)" >&2
  exit 2
}
shared=${VMGATE_SHARED_DIR:-$(cd .. && pwd)/shared}
[[ -f $shared/data/common-instancetypes/cluster-instancetypes.yaml ]] || {
  echo "node_test.sh: no common instancetypes under $shared/data (VMGATE_SHARED_DIR)" >&2
  exit 2
}

dir="$(mktemp -d)"
cleanup() {
  if [[ -n ${KEEP_E2E_DIR:-} ]]; then
    echo "kept $dir (tools/testenv down $dir)" >&2
    return
  fi
  tools/testenv down "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

start=$SECONDS
eval "$(tools/testenv up "$dir" --node)"
echo "up --node (with the project's images) took $((SECONDS - start)) s"
for image in localhost/vmgate:dev localhost/vmgate-launcher:dev localhost/vmgate-guest:dev; do
  check "$image is imported into the node's containerd" grep -qF "$image" <(ctr -n k8s.io images ls -q)
done

chart=manifests/charts/vmgate
start=$SECONDS
check "helm install -n kubevirt -f ci/node-values.yaml --wait" \
  helm install vmgate "$chart" -n kubevirt --create-namespace -f "$chart/ci/node-values.yaml" --wait --timeout 5m
echo "helm install --wait took $((SECONDS - start)) s"
kubectl -n kubevirt get pods -o wide

labelled() { [[ "$(kubectl get node node0 -o 'jsonpath={.metadata.labels.kubevirt\.io/schedulable}')" == true ]]; }
# 1000 units, as the API writes the quantity.
devices() { [[ "$(kubectl get node node0 -o 'jsonpath={.status.allocatable.devices\.kubevirt\.io/tun}')" == 1k ]]; }
check "vmgate-node labels node0 schedulable" wait_until 120 labelled
check "vmgate-node's device plugins are in node0's allocatable" wait_until 60 devices

# --validate=false: the CRDs (KubeVirt v1.8.2) lack some fields these preferences use (dropped).
kubectl apply --validate=false -f "$shared/data/common-instancetypes/cluster-instancetypes.yaml" >/dev/null
kubectl apply --validate=false -f "$shared/data/common-instancetypes/cluster-preferences.yaml" >/dev/null
kubectl create namespace vms >/dev/null

vm() { # NAME INSTANCETYPE PREFERENCE [CPU (a flow mapping: the template's domain.cpu) [IMAGE]]
  cat <<EOF
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: $1, namespace: vms}
spec:
  runStrategy: Always
  instancetype: {name: $2}
  preference: {name: $3}
  template:
    spec:
      domain:
        devices: {}
$([[ -z ${4:-} ]] || echo "        cpu: $4")
      volumes:
      - name: containerdisk
        containerDisk: {image: ${5:-localhost/vmgate-guest:dev}}
EOF
}

# The webhook, reached by the apiserver through its Service.
if out=$(vm conflicting u1.small cirros '{sockets: 2}' | kubectl apply -f - 2>&1); then
  check "a VM conflicting with its instancetype is refused" false
else
  check "a VM conflicting with its instancetype is refused, naming the field" \
    grep -q 'spec.template.spec.domain.cpu.sockets' <<<"$out"
fi
check "--dry-run=server admits a VM" bash -c "$(declare -f vm); vm dryrun u1.small cirros | kubectl apply --dry-run=server -f - >/dev/null"
check "the dry run created nothing" bash -c '! kubectl -n vms get vm dryrun >/dev/null 2>&1'

ready() { [[ "$(kubectl -n vms get vm "$1" -o 'jsonpath={.status.ready}' 2>/dev/null)" == true ]]; }
pod_of() { kubectl -n vms get pods -l "kubevirt.io=virt-launcher,vm.kubevirt.io/name=$1" -o name 2>/dev/null | head -1; }
marker() { local p; p=$(pod_of "$1"); [[ -n $p ]] && kubectl -n vms logs "$p" -c guest-console-log 2>/dev/null | grep -q VMGATE-GUEST-READY; }
# (The bracket keeps pgrep from finding the shell that runs this very pattern.)
qemu_of() { pgrep -f "[q]emu-system-x86_64 .*guest=vms_$1," >/dev/null; }

boot_and_delete() { # NAME INSTANCETYPE PREFERENCE FIRMWARE
  local name=$1 t0=$SECONDS pod
  vm "$name" "$2" "$3" | kubectl apply -f - >/dev/null
  check "$name ($4): its VMI exists" wait_until 60 bash -c "kubectl -n vms get vmi $name >/dev/null 2>&1"
  check "$name ($4): the launcher pod is scheduled onto node0" \
    wait_until 120 bash -c "[[ \$(kubectl -n vms get pods -l vm.kubevirt.io/name=$name -o 'jsonpath={.items[0].spec.nodeName}') == node0 ]]"
  pod=$(pod_of "$name")
  if ! check "$name ($4): VMGATE-GUEST-READY in kubectl logs -c guest-console-log" wait_until 300 marker "$name"; then
    kubectl -n vms describe "$pod" | tail -30 || true
    kubectl -n vms logs "$pod" -c compute --tail 40 || true
  fi
  check "$name ($4): the VMI is Running" wait_until 60 bash -c "[[ \$(kubectl -n vms get vmi $name -o 'jsonpath={.status.phase}') == Running ]]"
  check "$name ($4): the VM is Ready" wait_until 60 ready "$name"
  echo "$name ($4): Ready with the guest's marker after $((SECONDS - t0)) s"
  check "$name ($4): the VMI names node0" test "$(kubectl -n vms get vmi "$name" -o 'jsonpath={.status.nodeName}')" = node0
  # The compute container's log through the stop: the launcher's ACPI shutdown and its exit.
  kubectl -n vms logs -f "$pod" -c compute >"$dir/$name-compute.log" 2>&1 &
  local follower=$!
  kubectl -n vms delete vm "$name" --wait=false >/dev/null
  check "$name ($4): kubectl delete vm: the VMI goes" wait_until 180 bash -c "! kubectl -n vms get vmi $name >/dev/null 2>&1"
  check "$name ($4): the launcher pod goes" wait_until 120 bash -c "! kubectl -n vms get $pod >/dev/null 2>&1"
  wait "$follower" || true
  if ! check "$name ($4): the guest powered off by ACPI (the launcher's log)" \
    grep -q 'guest shut down after the stop request' "$dir/$name-compute.log"; then
    # What the launcher said instead (the grace period expired, the domain crashed), or where the
    # log stream through the kubelet ended.
    echo "$name: the compute container's log as kubectl logs -f received it:" >&2
    tail -40 "$dir/$name-compute.log" >&2 || true
  fi
  check "$name ($4): no QEMU left" wait_until 30 bash -c "$(declare -f qemu_of); ! qemu_of $name"
}

boot_and_delete bios-vm u1.nano cirros BIOS
boot_and_delete efi-vm u1.micro linux.efi EFI

# ---------------------------------------------------------------- KubeVirt's own virtctl (docs/subresources.md)
# build/virtctl (tools/build-virtctl: cmd/virtctl at the pinned KubeVirt release) through the
# aggregator to vmgate subresources, then to vmgate-node on node0 and the launcher. Users are
# service accounts: alice with the chart's subresources role in vms, bob with it in another
# namespace only, carol in vms with nothing but reading VMs (alice reads them too).
virtctl=${VIRTCTL:-$PWD/build/virtctl}
vmgate=${VMGATE_BUILD_DIR:-build}/vmgate
work=$dir/virtctl
mkdir -p "$work"
check "the subresources APIService is Available" wait_until 120 bash -c \
  "[[ \$(kubectl get apiservice v1.subresources.kubevirt.io -o 'jsonpath={.status.conditions[?(@.type==\"Available\")].status}') == True ]]"
edit_role=vmgate:subresources-edit  # the chart's, aggregated into admin and edit
kubectl create namespace other >/dev/null
for who in vms/alice other/bob vms/carol; do kubectl -n "${who%/*}" create serviceaccount "${who#*/}" >/dev/null; done
kubectl -n vms create rolebinding alice --clusterrole="$edit_role" --serviceaccount=vms:alice >/dev/null
kubectl -n other create rolebinding bob --clusterrole="$edit_role" --serviceaccount=other:bob >/dev/null
kubectl -n vms create role vm-reader --verb=get,list --resource=virtualmachines.kubevirt.io,virtualmachineinstances.kubevirt.io >/dev/null
kubectl -n vms create rolebinding carol --role=vm-reader --serviceaccount=vms:carol >/dev/null
# alice also reads VMs, as the edit role lets her: `pause vm` reads the VM first (virtctl too).
kubectl -n vms create rolebinding alice-reader --role=vm-reader --serviceaccount=vms:alice >/dev/null
for who in vms/alice other/bob vms/carol; do
  token_kubeconfig "$work/${who#*/}.kubeconfig" "$(kubectl -n "${who%/*}" create token "${who#*/}")"
done
as() { local user=$1; shift; "$virtctl" --kubeconfig "$work/$user.kubeconfig" -n vms "$@"; }
vmi_uid() { kubectl -n vms get vmi "$1" -o 'jsonpath={.metadata.uid}' 2>/dev/null; }
paused() { [[ $(kubectl -n vms get vmi "$1" -o 'jsonpath={.status.conditions[?(@.type=="Paused")].status}') == True ]]; }
printable() { [[ $(kubectl -n vms get vm "$1" -o 'jsonpath={.status.printableStatus}') == "$2" ]]; }
running() { [[ $(kubectl -n vms get vmi "$1" -o 'jsonpath={.status.phase}' 2>/dev/null) == Running ]]; }
fails_with() { # TEXT COMMAND...: the command fails and says TEXT
  local text=$1 out
  shift
  if out=$("$@" 2>&1); then
    echo "  succeeded: $out" >&2
    return 1
  fi
  [[ $out == *"$text"* ]] || { echo "  said: $out" >&2; return 1; }
}

vm ctl-vm u1.nano cirros | kubectl apply -f - >/dev/null
check "ctl-vm's VMI exists" wait_until 60 bash -c "kubectl -n vms get vmi ctl-vm >/dev/null 2>&1"
# The console, opened while the VMI still starts (virtctl retries while the API answers 400, "VMI
# is not running"): the guest's marker arrives through it, then a line typed there runs in the
# guest's shell (only a line that ran prints 42). virtctl's stdin is a FIFO held open on fd 7;
# closing it ends virtctl.
console_out=$work/console.out
mkfifo "$work/console.in"
timeout 400 "$virtctl" --kubeconfig "$work/alice.kubeconfig" -n vms console ctl-vm <"$work/console.in" >"$console_out" 2>&1 &
console_pid=$!
exec 7>"$work/console.in"
check "virtctl console: the guest's marker VMGATE-GUEST-READY" wait_until 300 grep -q VMGATE-GUEST-READY "$console_out"
typed_answered() { # WORD OUTPUT: types `echo WORD-$((6 * 7))`, true once WORD-42 came back
  # shellcheck disable=SC2016 # expanded by the guest's shell
  printf '\recho %s-$((6 * 7))\r' "$1" >&7
  sleep 3
  grep -q "$1-42" "$2"
}
check "virtctl console: a line typed there ran in the guest (vmgate-console-42)" \
  wait_until 60 typed_answered vmgate-console "$console_out"
exec 7>&-
check "virtctl console: stdin closed, virtctl ends" wait_until 30 bash -c "! kill -0 $console_pid 2>/dev/null"
wait "$console_pid" 2>/dev/null || true
check "virtctl console: it said it connected" grep -q 'Successfully connected to ctl-vm console' "$console_out"
# The same console from `kubectl vmgate console` (vmgate's own client). One console at a time per
# VMI: the node agent lets the first go when its relay sees virtctl's close, a moment after.
sleep 2
mkfifo "$work/console2.in"
timeout 120 "$vmgate" console ctl-vm -n vms --kubeconfig "$work/alice.kubeconfig" <"$work/console2.in" \
  >"$work/console2.out" 2>&1 &
console_pid=$!
exec 7>"$work/console2.in"
check "kubectl vmgate console: a typed line ran in the guest (vmgate-kubectl-42)" \
  wait_until 60 typed_answered vmgate-kubectl "$work/console2.out"
exec 7>&-
check "kubectl vmgate console: stdin closed, it ends" wait_until 30 bash -c "! kill -0 $console_pid 2>/dev/null"
wait "$console_pid" 2>/dev/null || true
check "kubectl vmgate console: it said it connected" grep -q 'Successfully connected to ctl-vm console' "$work/console2.out"
check "ctl-vm's VMI is Running" wait_until 60 running ctl-vm
check "ctl-vm boots (the marker in guest-console-log too)" wait_until 60 marker ctl-vm
check "carol (no subresource verbs) gets 403 from the API server" \
  fails_with "forbidden" as carol pause vmi ctl-vm
check "bob (rights in another namespace) gets 403 for vms' console" \
  fails_with "forbidden" as bob console ctl-vm --timeout 1

check "virtctl pause vmi" as alice pause vmi ctl-vm
check "  the VMI shows Paused" wait_until 30 paused ctl-vm
check "  the VM's printableStatus is Paused" wait_until 30 printable ctl-vm Paused
check "  pausing it again: VMI is already paused" fails_with "VMI is already paused" as alice pause vmi ctl-vm
check "virtctl unpause vmi" as alice unpause vmi ctl-vm
check "  the Paused condition goes" wait_until 30 bash -c "$(declare -f paused); ! paused ctl-vm"
check "  unpausing it again: VMI is not paused" fails_with "VMI is not paused" as alice unpause vmi ctl-vm

# The same requests from `kubectl vmgate` (vmgate's own verbs, for users without virtctl).
check "kubectl vmgate pause vm" "$vmgate" pause vm ctl-vm -n vms --kubeconfig "$work/alice.kubeconfig"
check "  the VMI shows Paused" wait_until 30 paused ctl-vm
check "kubectl vmgate unpause vmi" "$vmgate" unpause vmi ctl-vm -n vms --kubeconfig "$work/alice.kubeconfig"
check "  the Paused condition goes" wait_until 30 bash -c "$(declare -f paused); ! paused ctl-vm"

first_uid=$(vmi_uid ctl-vm)
check "virtctl restart" as alice restart ctl-vm
check "  a new VMI runs (another uid)" wait_until 240 bash -c \
  "$(declare -f vmi_uid running); [[ -n \$(vmi_uid ctl-vm) && \$(vmi_uid ctl-vm) != $first_uid ]] && running ctl-vm"
check "  the new guest boots (its marker)" wait_until 300 marker ctl-vm
check "virtctl stop" as alice stop ctl-vm
check "  the VMI goes, the VM is Stopped" wait_until 180 bash -c \
  "$(declare -f printable); ! kubectl -n vms get vmi ctl-vm >/dev/null 2>&1 && printable ctl-vm Stopped"
check "  runStrategy Halted" test "$(kubectl -n vms get vm ctl-vm -o 'jsonpath={.spec.runStrategy}')" = Halted
check "  stopping it again: VM is not running" fails_with "VM is not running" as alice stop ctl-vm
check "  pausing its VMI: not found" fails_with "not found" as alice pause vmi ctl-vm
check "virtctl start" as alice start ctl-vm
check "  the VMI runs again" wait_until 240 running ctl-vm
check "  starting it again: VM is already running" fails_with "VM is already running" as alice start ctl-vm
kubectl -n vms delete vm ctl-vm --wait=false >/dev/null
check "ctl-vm is gone" wait_until 180 bash -c "! kubectl -n vms get vmi ctl-vm >/dev/null 2>&1"

# ---------------------------------------------------------------- what a tenant tried (docs/security.md), on the node
# Finding 1: the guest gets the token of the account its serviceAccount volume names, a tenant's
# own; the pod holds no other identity (no account of vmgate's runs a launcher pod any more).
kubectl -n vms create serviceaccount tenant-own >/dev/null
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: sa-vm, namespace: vms}
spec:
  runStrategy: Always
  instancetype: {name: u1.nano}
  preference: {name: cirros}
  template:
    spec:
      domain: {devices: {}}
      volumes:
      - name: containerdisk
        containerDisk: {image: localhost/vmgate-guest:dev}
      - name: sa
        serviceAccount: {serviceAccountName: tenant-own}
EOF
# Finding 1b: containerDisks that point at the launcher's own files. Their copy refuses them in
# the init container, so the pod fails before the launcher runs (standalone VMIs keep their
# failed pod, and its message, to be read).
evil=$dir/evil
mkdir -p "$evil/link/disk" "$evil/backing/disk"
ln -s /var/run/secrets/kubernetes.io/serviceaccount/token "$evil/link/disk/disk.img"
qemu-img create -q -f qcow2 -u -b /var/run/secrets/kubernetes.io/serviceaccount/token -F raw \
  "$evil/backing/disk/disk.qcow2" 16M
for kind in link backing; do
  tools/testenv-node/mkimage "$evil/$kind.tar" "localhost/evil-$kind:e2e" "$evil/$kind"
  ctr -n k8s.io images import "$evil/$kind.tar" >/dev/null
  kubectl apply -f - >/dev/null <<EOF
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: evil-$kind, namespace: vms}
spec:
  domain:
    memory: {guest: 128Mi}
    devices: {disks: [{name: containerdisk, disk: {bus: virtio}}]}
  volumes: [{name: containerdisk, containerDisk: {image: localhost/evil-$kind:e2e}}]
EOF
done
# A VM whose every VMI fails so: KubeVirt's start-failure backoff, not a VMI per resync.
vm evil-vm u1.nano cirros "" localhost/evil-link:e2e | kubectl apply -f - >/dev/null

check "sa-vm: the guest's marker" wait_until 300 marker sa-vm
sa_pod=$(pod_of sa-vm)
check "sa-vm: the pod runs as the volume's account, with its token (KubeVirt's rule)" \
  test "$(kubectl -n vms get "$sa_pod" -o 'jsonpath={.spec.serviceAccountName}/{.spec.automountServiceAccountToken}')" = tenant-own/true
claims=$(kubectl -n vms logs "$sa_pod" -c guest-console-log | sed -n 's/^VMGATE-GUEST-TOKEN [a-z]* //p' | head -n 1 | tr -d '\r')
subject=$(python3 -c 'import base64, json, sys
s = sys.argv[1]
print(json.loads(base64.urlsafe_b64decode(s + "=" * (-len(s) % 4)))["sub"])' "$claims" 2>/dev/null || true)
check "sa-vm: the guest holds tenant-own's token, no other ($subject)" test "$subject" = system:serviceaccount:vms:tenant-own
kubectl -n vms delete vm sa-vm --wait=false >/dev/null

copy_message() { # VMI: the containerDisk copy's termination message in the VMI's failed pod
  kubectl -n vms get pods -l "vm.kubevirt.io/name=$1" \
    -o 'jsonpath={.items[0].status.initContainerStatuses[?(@.name=="volumecontainerdisk")].state.terminated.message}' 2>/dev/null
}
for kind in link backing; do
  check "evil-$kind: the VMI fails (its pod did)" wait_until 120 bash -c \
    "[[ \$(kubectl -n vms get vmi evil-$kind -o 'jsonpath={.status.phase}/{.status.reason}') == Failed/PodTerminated ]]"
done
link_message=$(copy_message evil-link)
backing_message=$(copy_message evil-backing)
printf 'evil-link: %s\nevil-backing: %s\n' "$link_message" "$backing_message"
# (Resolved inside the image, the token's path leads to nothing of the image's own.)
check "evil-link: the copy refused the link out of the image" \
  grep -q '/disk/disk.img resolves to .*, which is not in the image' <<<"$link_message"
check "evil-backing: the copy refused the backing file" \
  grep -qF 'expected no backing file, but found /var/run/secrets/kubernetes.io/serviceaccount/token' <<<"$backing_message"
check "neither launcher ran (no compute container started)" bash -c \
  "[[ -z \$(kubectl -n vms get pods -l 'vm.kubevirt.io/name in (evil-link,evil-backing)' -o 'jsonpath={.items[*].status.containerStatuses[?(@.state.running)].name}') ]]"
check "evil-vm: CrashLoopBackOff with its start failures counted" wait_until 120 bash -c \
  "[[ \$(kubectl -n vms get vm evil-vm -o 'jsonpath={.status.printableStatus}') == CrashLoopBackOff && \$(kubectl -n vms get vm evil-vm -o 'jsonpath={.status.startFailure.consecutiveFailCount}') -ge 1 ]]"
kubectl -n vms delete vm evil-vm --wait=false >/dev/null
kubectl -n vms delete vmi evil-link evil-backing --wait=false >/dev/null
check "sa-vm and the evil ones are gone" wait_until 180 bash -c \
  "[[ -z \$(kubectl -n vms get vmi -o name) && -z \$(kubectl -n vms get pods -o name) ]]"

# A CPU model no node offers: Pending, the scheduler naming the label.
vm no-such-cpu u1.nano cirros '{model: Opteron_G1}' | kubectl apply -f - >/dev/null
unschedulable() {
  kubectl -n vms get events --field-selector reason=FailedScheduling -o 'jsonpath={.items[*].message}' 2>/dev/null |
    grep -q "node affinity/selector"
}
check "a VM whose CPU model no node offers stays Pending: FailedScheduling" wait_until 120 unschedulable
check "its VMI is not Running" bash -c "[[ \$(kubectl -n vms get vmi no-such-cpu -o 'jsonpath={.status.phase}') != Running ]]"
kubectl -n vms delete vm no-such-cpu >/dev/null

# vmgate-node's pod deleted: the DaemonSet's next pod labels the node and serves the devices again.
kubectl -n kubevirt delete pod -l app.kubernetes.io/name=vmgate-node --wait=true >/dev/null
check "vmgate-node's new pod is Running" \
  wait_until 120 bash -c "[[ \$(kubectl -n kubevirt get pods -l app.kubernetes.io/name=vmgate-node -o 'jsonpath={.items[0].status.phase}') == Running ]]"
check "node0 is labelled schedulable again" wait_until 120 labelled
check "node0's devices are allocatable again" wait_until 60 devices

# The kubelet restarted (it empties its device-plugin directory): vmgate-node registers its
# plugins again and a new VM schedules onto node0 through them.
pid=$(cat "$dir/node/kubelet.pid")
mapfile -d '' kubelet_command <"/proc/$pid/cmdline"
kill -TERM "$pid"
wait_until 30 bash -c "! kill -0 $pid 2>/dev/null"
setsid "${kubelet_command[@]}" </dev/null >>"$dir/node/kubelet.log" 2>&1 &
echo $! >"$dir/node/kubelet.pid"
node_ready() { [[ "$(kubectl get node node0 -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" == True ]]; }
check "the restarted kubelet's node0 is Ready" wait_until 60 node_ready
check "the device plugins are registered with the new kubelet" wait_until 60 devices
boot_and_delete after-kubelet-restart u1.nano cirros BIOS

# The controller's leader deleted: the other replica holds the Lease within its duration.
holder=$(kubectl -n kubevirt get lease vmgate-controller -o 'jsonpath={.spec.holderIdentity}')
check "a controller replica holds the Lease" test -n "$holder"
kubectl -n kubevirt delete pod "${holder%%_*}" --wait=false >/dev/null 2>&1 || kubectl -n kubevirt delete pod "$holder" --wait=false >/dev/null
taken_over() {
  local now
  now=$(kubectl -n kubevirt get lease vmgate-controller -o 'jsonpath={.spec.holderIdentity}')
  [[ -n $now && $now != "$holder" ]]
}
check "the other replica takes the Lease over within 30 s" wait_until 30 taken_over
boot_and_delete after-failover u1.nano cirros BIOS

check "helm uninstall" helm uninstall vmgate -n kubevirt --wait --timeout 3m
# shellcheck disable=SC2016 # expanded by the inner shell
check "no launcher pod left" bash -c '[[ -z $(kubectl get pods -A -l kubevirt.io=virt-launcher -o name) ]]'
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
