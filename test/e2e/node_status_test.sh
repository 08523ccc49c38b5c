#!/usr/bin/env bash
# vmgate-node's VMI status reporting against a real kube-apiserver (docs/node.md, "VMI status"):
# tools/testenv up without a node; the test creates the VMIs and the launcher pod objects
# (spec.nodeName node0, no kubelet runs them) and plays the launcher, writing its status file
# under a kubelet root of its own (--kubelet-root). Checked: the VMI follows the file
# (Scheduled, Running/Ready, stopping, Succeeded) with status.nodeName; one patch per change (the
# same status rewritten is not written again); nothing after a final phase; hostile files (a
# symlink, a FIFO, 1 MiB, not JSON) are refused and change nothing; a VMI recreated under the
# name (another uid) is not touched; a pod in team-a naming team-b's VMI never reaches team-b.
# Usage: test/e2e/node_status_test.sh   (after the build; about 30 s)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${VMGATE_BUILD_DIR:-$root/build}
node_bin=$build/vmgate-node
[[ -x $node_bin ]] || { echo "node_status_test: build vmgate-node first" >&2; exit 2; }

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh
e2e_start_testenv
started=$SECONDS

jpath() { kubectl get "$@" 2>/dev/null; }
equals() { # ACTUAL EXPECTED
  [[ $1 == "$2" ]] && return 0
  printf '  got:      %s\n  expected: %s\n' "$1" "$2" >&2
  return 1
}
vmi_says() { # NS NAME EXPECTED: "phase ready domain-state nodeName"
  local got
  got=$(jpath vmi "$2" -n "$1" -o jsonpath='{.status.phase} {.status.conditions[?(@.type=="Ready")].status} {.metadata.annotations.vmgate\.kubevirt\.io/domain-state} {.status.nodeName}')
  [[ $got == "$3" ]]
}

kubectl create namespace team-a >/dev/null
kubectl create namespace team-b >/dev/null
make_vmi() { # NS NAME
  kubectl create -f - >/dev/null <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: $2, namespace: $1}
spec:
  domain:
    memory: {guest: 128Mi}
    devices: {}
YAML
  kubectl get vmi "$2" -n "$1" -o jsonpath='{.metadata.uid}'
}
make_pod() { # NS NAME VMI-NAME VMI-UID: a launcher pod object on node0 (nothing runs it)
  kubectl create -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $2
  namespace: $1
  labels: {kubevirt.io: virt-launcher}
  ownerReferences:
  - {apiVersion: kubevirt.io/v1, kind: VirtualMachineInstance, name: $3, uid: $4, controller: true, blockOwnerDeletion: true}
spec:
  nodeName: node0
  containers: [{name: compute, image: vmgate-launcher:latest}]
YAML
  kubectl get pod "$2" -n "$1" -o jsonpath='{.metadata.uid}'
}

guest_uid=$(make_vmi team-a guest)
other_uid=$(make_vmi team-b other)
pod_uid=$(make_pod team-a virt-launcher-guest guest "$guest_uid")
sneaky_uid=$(make_pod team-a virt-launcher-sneaky other "$other_uid")

kubelet=$work/kubelet
private=$kubelet/pods/$pod_uid/volumes/kubernetes.io~empty-dir/private
sneaky_private=$kubelet/pods/$sneaky_uid/volumes/kubernetes.io~empty-dir/private
mkdir -p "$private" "$sneaky_private"
write_status() { # DIR PHASE REASON: as the supervisor writes it (replaced by rename)
  printf '{"phase":"%s","reason":"%s","timestamps":{"started":"2026-01-01T00:00:00Z","updated":"%s"}}\n' \
    "$2" "$3" "$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)" >"$1/vmgate-status.json.tmp"
  mv "$1/vmgate-status.json.tmp" "$1/vmgate-status.json"
}
write_status "$sneaky_private" Running "domain running"

setsid "$node_bin" --node-name node0 --kubeconfig "$KUBECONFIG" --kubelet-root "$kubelet" \
  --device-plugin-dir "$work/device-plugins" --devices kvm --no-pod-network 2>"$work/node.log" &
pids+=($!)
written() { grep -c '"msg":"VMI status written"' "$work/node.log" || true; }

write_status "$private" Scheduled "starting the domain"
check "Scheduled reaches the VMI, with the node name" wait_until 20 vmi_says team-a guest "Scheduled False starting node0"
write_status "$private" Running "domain running"
check "Running and Ready" wait_until 10 vmi_says team-a guest "Running True running node0"
check "two changes, two patches" equals "$(written)" 2
write_status "$private" Running "domain running"
sleep 2.5
check "the same status rewritten: no patch" equals "$(written)" 2

# Hostile files: refused, the VMI unchanged, the refusal logged.
rm "$private/vmgate-status.json"
ln -s /etc/shadow "$private/vmgate-status.json"
sleep 1.5
mkfifo "$private/fifo" && mv -T "$private/fifo" "$private/vmgate-status.json" 2>/dev/null || { rm -f "$private/vmgate-status.json"; mkfifo "$private/vmgate-status.json"; }
sleep 1.5
rm -f "$private/vmgate-status.json"
head -c 1048576 /dev/zero | tr '\0' ' ' >"$private/vmgate-status.json"
sleep 1.5
printf '{"phase":"Failed","reason":"x","phase":"Running"}' >"$private/vmgate-status.json"
sleep 1.5
printf '{"phase":"Hacked","reason":"x"}' >"$private/vmgate-status.json"
sleep 1.5
check "a symlink is refused" grep -q 'status file is a symbolic link' "$work/node.log"
check "a FIFO is refused" grep -q 'status file is not a regular file' "$work/node.log"
check "1 MiB is refused" grep -q 'status file is larger than 65536 bytes' "$work/node.log"
check "duplicate keys are refused" grep -q 'duplicate key' "$work/node.log"
check "an unknown phase is refused" grep -q 'not one of Scheduled, Running, Succeeded, Failed' "$work/node.log"
check "the VMI unchanged by hostile files" vmi_says team-a guest "Running True running node0"
check "no patch for hostile files" equals "$(written)" 2
rm -f "$private/vmgate-status.json"

write_status "$private" Running "stop requested: ACPI shutdown"
check "a stop request: Running, not Ready, shutting-down" \
  wait_until 10 vmi_says team-a guest "Running False shutting-down node0"
write_status "$private" Succeeded "guest shut down after the stop request"
check "Succeeded" wait_until 10 vmi_says team-a guest "Succeeded False shutoff node0"
write_status "$private" Running "domain running"
sleep 2.5
check "nothing after a final phase" vmi_says team-a guest "Succeeded False shutoff node0"
check "four patches in all for team-a/guest" equals "$(written)" 4

# team-a's pod names team-b's VMI: the patch goes to team-a (404), team-b is never touched.
check "team-b's VMI untouched by a team-a pod" \
  equals "$(jpath vmi other -n team-b -o jsonpath='{.status.phase}{.metadata.annotations}')" ""
check "the cross-namespace pod's patch found no VMI in its own namespace" \
  grep -q '"msg":"VMI status not written; not retried".*"namespace":"team-a","vmi":"other","code":"404"' "$work/node.log"

# The VMI deleted and created again under its name: the old pod's reports do not reach it.
kubectl delete vmi guest -n team-a --wait=true >/dev/null
new_uid=$(make_vmi team-a guest)
check "the new VMI has another uid" bash -c "[[ '$new_uid' != '$guest_uid' ]]"
pod2_uid=$(make_pod team-a virt-launcher-guest-2 guest "$guest_uid")
private2=$kubelet/pods/$pod2_uid/volumes/kubernetes.io~empty-dir/private
mkdir -p "$private2"
write_status "$private2" Failed "guest crashed"
# (A merge patch carrying another metadata.uid: kube-apiserver answers 422, metadata.uid
# immutable, for a custom resource; 409 for a built-in one.)
check "the old uid's patch is refused (uid precondition)" \
  wait_until 10 grep -Eq '"namespace":"team-a","vmi":"guest","code":"(409|422)"' "$work/node.log"
check "the recreated VMI untouched" equals "$(jpath vmi guest -n team-a -o jsonpath='{.status.phase}{.status.nodeName}')" ""

kill -TERM "${pids[0]}"
wait "${pids[0]}" && status=0 || status=$?
check "SIGTERM: exit 0" equals "$status" 0
pids=()

echo "node status e2e: $passed passed, $failed failed ($((SECONDS - started)) s)"
if ((failed > 0)); then
  echo "--- vmgate-node log" >&2
  tail -50 "$work/node.log" >&2
  exit 1
fi
