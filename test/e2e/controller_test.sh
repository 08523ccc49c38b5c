#!/usr/bin/env bash
# The VM controller end to end (docs/controller.md): a real kube-apiserver and etcd
# (tools/testenv), `vmgate serve` registered as the webhooks (as cluster_test.sh does), and two
# `vmgate controller` replicas electing a leader on a Lease. There is no kubelet: the test plays
# it, running the launcher pod's command locally (--pod-root, TCG, the boot tests' busybox guest)
# and sending it SIGTERM once the pod is deleted.
#   kubectl apply VM (instancetype + preference) -> VMI and launcher pod (resources, node
#   selectors, hugepages field by field) -> the launcher boots the guest, which prints its
#   marker -> VMI Running, VM Running -> kubectl delete vm -> pod deleted -> SIGTERM -> ACPI
#   power-off -> no QEMU left. One leader writes; SIGTERM hands the Lease over.
# Usage: test/e2e/controller_test.sh   (after the build; boot prerequisites as for the boot
# tests: tools/launcher-boot-prereqs; missing ones skip the test, or fail it when CI=true)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${VMGATE_BUILD_DIR:-$root/build}
vmgate=$build/vmgate
launcher=$build/vmgate-launcher
[[ -x $vmgate && -x $launcher ]] || { echo "controller_test: build vmgate and vmgate-launcher first" >&2; exit 2; }

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

kernel=$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -r | head -1 || true)
modules=/lib/modules/${kernel#/boot/vmlinuz-}/kernel
missing=""
[[ -n $kernel && -f $modules/drivers/block/virtio_blk.ko ]] || missing="a /boot/vmlinuz-* with its modules (tools/launcher-boot-prereqs)"
[[ -x /bin/busybox ]] || missing="busybox-static"
command -v cpio >/dev/null || missing="cpio"
getent passwd libvirt-qemu >/dev/null || missing="the libvirt-qemu user (tools/launcher-boot-prereqs)"
if [[ -n $missing ]]; then
  if [[ ${CI:-} == true ]]; then echo "controller_test: missing in CI: $missing" >&2; exit 1; fi
  echo "controller e2e: skipped ($missing missing)"
  exit 0
fi

dir="$(mktemp -d)"
pids=()
launcher_pid=""
cleanup() {
  if [[ -n $launcher_pid ]]; then kill -KILL "$launcher_pid" 2>/dev/null || true; fi
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  # No QEMU of this test survives it.
  for file in "$dir"/embed/run/qemu/*.pid; do
    [[ -f $file ]] && kill -KILL "$(cat "$file")" 2>/dev/null || true
  done
  tools/testenv down "$dir" >/dev/null 2>&1 || true
  if [[ -n ${KEEP_E2E_DIR:-} ]]; then echo "kept $dir" >&2; else rm -rf "$dir"; fi
}
trap cleanup EXIT

started=$SECONDS
eval "$(tools/testenv up "$dir")"
work=$dir/work
mkdir -p "$work"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_until() { # SECONDS COMMAND...
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}
jpath() { kubectl get "$@" 2>/dev/null; } # kubectl get ... -o jsonpath=...
equals() { # ACTUAL EXPECTED: prints both when they differ
  [[ $1 == "$2" ]] && return 0
  printf '  got:      %s\n  expected: %s\n' "$1" "$2" >&2
  return 1
}

# ---------------------------------------------------------------- the webhook (as cluster_test.sh)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=e2e-ca \
  -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=vmgate \
  -keyout "$work/tls.key" -out "$work/tls.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$work/ext"
openssl x509 -req -in "$work/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -days 1 \
  -extfile "$work/ext" -out "$work/tls.crt" 2>/dev/null
https_port=$(free_port)
metrics_port=$(free_port)
setsid "$vmgate" serve --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$https_port" --metrics-listen "127.0.0.1:$metrics_port" \
  --tls-cert "$work/tls.crt" --tls-key "$work/tls.key" --cache-sync-timeout 3s --shutdown-delay 0s \
  --launcher-service-account vmgate-launcher --access-log false >"$work/serve.log" 2>&1 &
pids+=($!)
check "vmgate serve gets ready" wait_until 30 curl -sf "http://127.0.0.1:$metrics_port/readyz" -o /dev/null
ca_bundle=$(base64 -w0 <"$work/ca.crt")
sed -E "s#^( *)service: \{namespace: vmgate-system, name: vmgate, path: ([^,]*), port: 443\}#\1url: https://127.0.0.1:$https_port\2\n\1caBundle: $ca_bundle#" \
  manifests/webhooks/vmgate-webhooks.yaml >"$work/webhooks.yaml"
kubectl apply -f "$work/webhooks.yaml" >/dev/null
kubectl create namespace team-a >/dev/null

kubectl apply -f - >/dev/null <<'EOF'
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineInstancetype
metadata: {name: tiny, namespace: team-a}
spec:
  cpu: {guest: 1}
  memory: {guest: 256Mi}
---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineInstancetype
metadata: {name: huge, namespace: team-a}
spec:
  cpu: {guest: 2}
  memory: {guest: 512Mi, hugepages: {pageSize: 2Mi}}
---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachinePreference
metadata: {name: plain, namespace: team-a}
spec:
  cpu: {preferredCPUTopology: preferSockets}
  devices: {preferredAutoattachGraphicsDevice: false}
EOF

# ---------------------------------------------------------------- identities and RBAC (docs/controller.md)
# The VMI has no status subresource, and KubeVirt's VMI webhook (vmgate serve too) reverts status
# changes from anyone but KubeVirt's service accounts and (vmgate serve
# --launcher-service-account) the launcher's account in the VMI's namespace: the controller runs
# as kubevirt/kubevirt-controller and the launcher as team-a/vmgate-launcher, as the pod's
# serviceAccountName says, each with exactly the rules docs/controller.md lists. team-b's
# vmgate-launcher, bound to the same rules in team-a, is not the launcher of team-a's VMIs.
kubectl create namespace kubevirt >/dev/null
kubectl create namespace team-b >/dev/null
kubectl create serviceaccount kubevirt-controller -n kubevirt >/dev/null
kubectl create serviceaccount vmgate-launcher -n team-a >/dev/null
kubectl create serviceaccount vmgate-launcher -n team-b >/dev/null
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: vmgate-controller}
rules:
- apiGroups: [kubevirt.io]
  resources: [virtualmachines]
  verbs: [get, list, watch, patch]
- apiGroups: [kubevirt.io]
  resources: [virtualmachines/status]
  verbs: [patch]
- apiGroups: [kubevirt.io]
  resources: [virtualmachineinstances]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [""]
  resources: [pods]
  verbs: [list, watch, create, delete]
- apiGroups: [instancetype.kubevirt.io]
  resources: [virtualmachineinstancetypes, virtualmachineclusterinstancetypes,
              virtualmachinepreferences, virtualmachineclusterpreferences]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [persistentvolumeclaims]
  verbs: [get, list, watch]
- apiGroups: [cdi.kubevirt.io]
  resources: [datavolumes, datasources]
  verbs: [get, list, watch]
- apiGroups: [snapshot.storage.k8s.io]
  resources: [volumesnapshots]
  verbs: [get, list, watch]
- apiGroups: [apps]
  resources: [controllerrevisions]
  verbs: [get, list, watch]
- apiGroups: [kubevirt.io]
  resources: [kubevirts]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: vmgate-controller}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: vmgate-controller}
subjects: [{kind: ServiceAccount, name: kubevirt-controller, namespace: kubevirt}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: vmgate-controller-lease, namespace: kubevirt}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, create, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: vmgate-controller-lease, namespace: kubevirt}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: vmgate-controller-lease}
subjects: [{kind: ServiceAccount, name: kubevirt-controller, namespace: kubevirt}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: vmgate-launcher}
rules:
- apiGroups: [kubevirt.io]
  resources: [virtualmachineinstances]
  verbs: [get, list, watch, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: vmgate-launcher, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: vmgate-launcher}
subjects: [{kind: ServiceAccount, name: vmgate-launcher, namespace: team-a},
           {kind: ServiceAccount, name: vmgate-launcher, namespace: team-b}]
EOF
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$work/apiserver-ca.crt"
sa_kubeconfig() { # FILE NAMESPACE SERVICE-ACCOUNT
  local token
  token=$(kubectl create token "$3" -n "$2" --duration 1h)
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
current-context: e2e
clusters: [{name: e2e, cluster: {server: "$server", certificate-authority: "$work/apiserver-ca.crt"}}]
users: [{name: e2e, user: {token: "$token"}}]
contexts: [{name: e2e, context: {cluster: e2e, user: e2e}}]
EOF
}
sa_kubeconfig "$work/controller.kubeconfig" kubevirt kubevirt-controller
sa_kubeconfig "$work/launcher.kubeconfig" team-a vmgate-launcher
sa_kubeconfig "$work/stranger.kubeconfig" team-b vmgate-launcher
check "the launcher's identity may not create pods (least privilege)" \
  test "$(kubectl --kubeconfig "$work/launcher.kubeconfig" auth can-i create pods -n team-a 2>/dev/null)" = no

# ---------------------------------------------------------------- two controllers, one leader
controller() { # NAME
  setsid "$vmgate" controller --kubeconfig "$work/controller.kubeconfig" --lease-namespace kubevirt --lease-name vmgate-controller \
    --identity "$1" --launcher-image registry.example/vmgate-launcher:e2e --launcher-link api --launcher-service-account vmgate-launcher --resync 2s >"$work/$1.log" 2>&1 &
  pids+=($!)
  printf -v "${1}_pid" %s "$!"
}
controller alpha
controller beta
holder() { jpath lease vmgate-controller -n kubevirt -o jsonpath='{.spec.holderIdentity}'; }
check "a leader is elected" wait_until 20 bash -c "[[ -n \$(kubectl get lease vmgate-controller -n kubevirt -o jsonpath='{.spec.holderIdentity}' 2>/dev/null) ]]"
leader=$(holder)
follower=$([[ $leader == alpha ]] && echo beta || echo alpha)
check "exactly one replica says it leads" \
  test "$(grep -l '"msg":"leading"' "$work/alpha.log" "$work/beta.log" | wc -l)" = 1

# ---------------------------------------------------------------- hugepages, CPU model and features: the pod
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: big, namespace: team-a}
spec:
  runStrategy: Always
  instancetype: {kind: VirtualMachineInstancetype, name: huge}
  preference: {kind: VirtualMachinePreference, name: plain}
  template:
    spec:
      nodeSelector: {disktype: ssd}
      tolerations: [{key: dedicated, operator: Equal, value: vms, effect: NoSchedule}]
      domain:
        cpu:
          model: Haswell-noTSX
          features: [{name: vmx, policy: require}, {name: svm, policy: forbid}]
        devices: {}
EOF
pod_of() { kubectl get pods -n team-a -l "kubevirt.io=virt-launcher,vm.kubevirt.io/name=$1" -o jsonpath='{.items[*].metadata.name}' 2>/dev/null; }
check "the controller creates the VMI of the VM" wait_until 20 kubectl get vmi big -n team-a -o name
check "... and its launcher pod" wait_until 20 bash -c "[[ -n \$(kubectl get pods -n team-a -l kubevirt.io=virt-launcher,vm.kubevirt.io/name=big -o name) ]]"
pod=$(pod_of big)
kubectl get pod "$pod" -n team-a -o json >"$work/big-pod.json"
kubectl get vmi big -n team-a -o json >"$work/big-vmi.json"
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2]), sort_keys=True, separators=(",",":")))' "$@"; }
c='d["spec"]["containers"][0]'
# KubeVirt's rules for this VMI: 2 vCPUs / cpuAllocationRatio 10 = 200m; hugepages-2Mi = the
# 512Mi guest; the memory request is only the overhead (no requests.memory in the VMI: no page
# tables; 240Mi of processes + 8Mi IO thread + 2 x 8Mi vCPUs, no video) = 264Mi (276824064
# bytes; the API server stores it as 264Mi); KVM, tun and vhost-net for the
# default bridge interface; 50M of ephemeral storage.
check "pod: the compute container runs vmgate-launcher --vmi-name team-a/big" \
  equals "$(field "$work/big-pod.json" "$c[\"command\"]")" '["vmgate-launcher","--vmi-name","team-a/big"]'
check "pod: the launcher's service account, its token mounted" \
  equals "$(field "$work/big-pod.json" '[d["spec"]["serviceAccountName"], d["spec"]["automountServiceAccountToken"]]')" '["vmgate-launcher",true]'
check "pod: the launcher image" equals "$(field "$work/big-pod.json" "$c[\"image\"]")" '"registry.example/vmgate-launcher:e2e"'
check "pod: requests (cpu, memory overhead, hugepages, devices, ephemeral storage)" \
  equals "$(field "$work/big-pod.json" "$c[\"resources\"][\"requests\"]")" \
  '{"cpu":"200m","devices.kubevirt.io/kvm":"1","devices.kubevirt.io/tun":"1","devices.kubevirt.io/vhost-net":"1","ephemeral-storage":"50M","hugepages-2Mi":"512Mi","memory":"264Mi"}'
check "pod: limits (hugepages and devices)" \
  equals "$(field "$work/big-pod.json" "$c[\"resources\"][\"limits\"]")" \
  '{"devices.kubevirt.io/kvm":"1","devices.kubevirt.io/tun":"1","devices.kubevirt.io/vhost-net":"1","hugepages-2Mi":"512Mi"}'
check "pod: node selectors (schedulable, arch, CPU model, required feature, machine type, the VMI's)" \
  equals "$(field "$work/big-pod.json" 'd["spec"]["nodeSelector"]')" \
  '{"cpu-feature.node.kubevirt.io/vmx":"true","cpu-model.node.kubevirt.io/Haswell-noTSX":"true","disktype":"ssd","kubernetes.io/arch":"amd64","kubevirt.io/schedulable":"true","machine-type.node.kubevirt.io/q35":"true"}'
check "pod: the forbidden feature as a DoesNotExist node affinity" \
  equals "$(field "$work/big-pod.json" 'd["spec"]["affinity"]')" \
  '{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"cpu-feature.node.kubevirt.io/svm","operator":"DoesNotExist"}]}]}}}'
# (the API server's DefaultTolerationSeconds adds its two NoExecute tolerations after them)
check "pod: the VMI's tolerations" \
  equals "$(field "$work/big-pod.json" 'd["spec"]["tolerations"][0]')" '{"effect":"NoSchedule","key":"dedicated","operator":"Equal","value":"vms"}'
check "pod: hugepages emptyDirs mounted at /dev/hugepages" \
  equals "$(field "$work/big-pod.json" "[v for v in d[\"spec\"][\"volumes\"] if v[\"name\"].startswith(\"huge\")], [m for m in $c[\"volumeMounts\"] if m[\"name\"].startswith(\"huge\")]")" \
  '[[{"emptyDir":{"medium":"HugePages"},"name":"hugepages"},{"emptyDir":{"medium":"HugePages"},"name":"hugetblfs-dir"}],[{"mountPath":"/dev/hugepages","name":"hugepages"},{"mountPath":"/dev/hugepages/libvirt/qemu","name":"hugetblfs-dir"}]]'
check "pod: owned by the VMI, restartPolicy Never, labels" \
  equals "$(field "$work/big-pod.json" '[d["metadata"]["ownerReferences"][0]["uid"], d["metadata"]["ownerReferences"][0]["controller"], d["spec"]["restartPolicy"], d["metadata"]["labels"]["kubevirt.io"]]')" \
  "[\"$(kubectl get vmi big -n team-a -o jsonpath='{.metadata.uid}')\",true,\"Never\",\"virt-launcher\"]"
check "VMI: owned by the VM, with the VM's generation and the instancetype annotations" \
  equals "$(field "$work/big-vmi.json" '[d["metadata"]["ownerReferences"][0]["kind"], d["metadata"]["annotations"]["kubevirt.io/vm-generation"], d["metadata"]["annotations"]["kubevirt.io/instancetype-name"], d["spec"]["domain"]["memory"]["hugepages"]["pageSize"]]')" \
  '["VirtualMachine","1","huge","2Mi"]'
check "VMI: Scheduling (a pod, and no kubelet to run it)" wait_until 10 bash -c "[[ \$(kubectl get vmi big -n team-a -o jsonpath='{.status.phase}') == Scheduling ]]"
check "VM: printableStatus Starting" wait_until 10 bash -c "[[ \$(kubectl get vm big -n team-a -o jsonpath='{.status.printableStatus}') == Starting ]]"

# ---------------------------------------------------------------- the Lease changes hands on SIGTERM
leader_pid_var=${leader}_pid
kill -TERM "${!leader_pid_var}"
check "the leader exits 0 on SIGTERM" wait "${!leader_pid_var}"
check "... after releasing the Lease" grep -q '"msg":"lease released"' "$work/$leader.log"
check "the other replica takes the Lease over" wait_until 10 bash -c "[[ \$(kubectl get lease vmgate-controller -n kubevirt -o jsonpath='{.spec.holderIdentity}') == $follower ]]"
check "... and counts the transition" test "$(jpath lease vmgate-controller -n kubevirt -o jsonpath='{.spec.leaseTransitions}')" -ge 1
check "the follower wrote nothing while it followed" \
  bash -c "! sed -n '1,/\"msg\":\"leading\"/p' '$work/$follower.log' | grep -q '\"msg\":\"write\"'"

gone() { # VM: neither its VMI nor a launcher pod of it is left
  ! kubectl get vmi "$1" -n team-a -o name 2>/dev/null && [[ -z $(kubectl get pods -n team-a -l "vm.kubevirt.io/name=$1" -o name) ]]
}
kubectl patch vm big -n team-a --type merge -p '{"spec":{"runStrategy":"Halted"}}' >/dev/null
check "runStrategy Halted: the new leader deletes the VMI and its pod" wait_until 20 gone big
check "... and the VM shows Stopped, not ready, no VMI" wait_until 10 bash -c \
  "[[ \$(kubectl get vm big -n team-a -o jsonpath='{.status.printableStatus}/{.status.ready}/{.status.created}/{.status.conditions[?(@.type==\"Ready\")].reason}') == 'Stopped/false/false/VMINotExists' ]]"
kubectl patch vm big -n team-a --type merge -p '{"spec":{"runStrategy":"Always"}}' >/dev/null
check "runStrategy Always again: a new VMI and pod" wait_until 20 bash -c "[[ -n \$(kubectl get pods -n team-a -l vm.kubevirt.io/name=big -o name) ]]"
kubectl delete vm big -n team-a --wait=false >/dev/null
check "kubectl delete vm: the VMI and its pod go" wait_until 20 gone big

# ---------------------------------------------------------------- a real guest, the test as kubelet
guest=$dir/guest
mkdir -p "$guest/initramfs"/{bin,proc,sys,dev,lib/modules,mnt}
cp /bin/busybox "$guest/initramfs/bin/busybox"
cp test/fixtures/launcher/boot/init "$guest/initramfs/init"
find "$modules" -name '*.ko' -exec cp {} "$guest/initramfs/lib/modules/" \;
(cd "$guest/initramfs" && find . | cpio -o -H newc 2>/dev/null | gzip -1 >"$guest/initramfs.cpio.gz")

kubectl apply -f - >/dev/null <<EOF
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: guest, namespace: team-a}
spec:
  runStrategy: Always
  instancetype: {kind: VirtualMachineInstancetype, name: tiny}
  preference: {kind: VirtualMachinePreference, name: plain}
  template:
    spec:
      terminationGracePeriodSeconds: 60
      domain:
        firmware:
          kernelBoot:
            kernelArgs: console=ttyS0 quiet panic=-1 vmgate.mode=acpi
            container: {image: local/kernel:latest, kernelPath: $kernel, initrdPath: $guest/initramfs.cpio.gz}
        devices: {autoattachPodInterface: false}
EOF
check "the guest VM gets its launcher pod" wait_until 20 bash -c "[[ -n \$(kubectl get pods -n team-a -l vm.kubevirt.io/name=guest -o name) ]]"
pod=$(pod_of guest)
mapfile -t command < <(kubectl get pod "$pod" -n team-a -o json | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["spec"]["containers"][0]["command"]))')
check "the pod runs vmgate-launcher --vmi-name team-a/guest" test "${command[*]}" = "vmgate-launcher --vmi-name team-a/guest"
# The kubelet's part: the pod's command, with the binary of this build and the pod's files below
# a directory (no /dev/kvm for this guest: TCG). Under the sanitizers the launcher runs without
# LeakSanitizer: its stop-the-world at exit fails now and then ("LeakSanitizer has encountered a
# fatal error", about 1 run in 4 here) while the embedded libvirt's threads end with the process;
# the launcher's leaks are checked by its own tests under ASan (ctest).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$launcher" "${command[@]:1}" --kubeconfig "$work/launcher.kubeconfig" --root "$dir/embed" --emulation software --kernel-boot-dir / \
  --pod-root "$dir/pod" --console-log "$guest/serial.log" >"$guest/launcher.out" 2>"$guest/launcher.err" &
launcher_pid=$!
check "the guest boots and prints its marker" wait_until 150 grep -qs VMGATE-ACPI-READY "$guest/serial.log"
check "the VMI shows Running, Ready, domain running" wait_until 20 bash -c \
  "[[ \$(kubectl get vmi guest -n team-a -o jsonpath='{.status.phase} {.status.conditions[?(@.type==\"Ready\")].status} {.metadata.annotations.vmgate\.kubevirt\.io/domain-state}') == 'Running True running' ]]"
check "the VM shows printableStatus Running and ready" wait_until 20 bash -c \
  "[[ \$(kubectl get vm guest -n team-a -o jsonpath='{.status.printableStatus} {.status.ready}') == 'Running true' ]]"
check "the VM status records the generation its VMI was started from" \
  equals "$(jpath vm guest -n team-a -o jsonpath='{.status.observedGeneration}/{.status.desiredGeneration}/{.status.created}')" "1/1/true"
# The patch answers with the object as stored: the webhook reverted the status change.
status_patch='{"status":{"phase":"Failed"}}'
check "a plain user's status patch of the VMI is reverted" \
  equals "$(kubectl patch vmi guest -n team-a --type merge -p "$status_patch" -o jsonpath='{.status.phase}')" Running
check "... and so is one by the launcher's account name in another namespace" \
  equals "$(kubectl --kubeconfig "$work/stranger.kubeconfig" patch vmi guest -n team-a --type merge -p "$status_patch" -o jsonpath='{.status.phase}')" Running
check "the launcher's account may not change the VMI's spec" \
  bash -c "kubectl --kubeconfig '$work/launcher.kubeconfig' patch vmi guest -n team-a --type merge -p '{\"spec\":{\"terminationGracePeriodSeconds\":5}}' 2>&1 | grep -q 'update of VMI object is restricted'"

kubectl delete vm guest -n team-a --wait=false >/dev/null
check "kubectl delete vm: the launcher pod is deleted" wait_until 20 bash -c "[[ -z \$(kubectl get pods -n team-a -l vm.kubevirt.io/name=guest -o name) ]]"
kill -TERM "$launcher_pid" 2>/dev/null || true # the kubelet's SIGTERM
status=0
wait "$launcher_pid" || status=$?
launcher_pid=""
check "the launcher exits 0" test "$status" = 0
check "the guest powered off by ACPI" grep -q VMGATE-ACPI-PRESSED "$guest/serial.log"
check "... as the launcher says" grep -q "guest shut down after the stop request" "$guest/launcher.err"
qemu_left=0
for file in "$dir"/embed/run/qemu/*.pid; do
  [[ -f $file ]] && kill -0 "$(cat "$file")" 2>/dev/null && qemu_left=1
done
check "no QEMU is left" test "$qemu_left" = 0
check "the VMI and the VM are gone" wait_until 20 bash -c "! kubectl get vmi guest -n team-a -o name 2>/dev/null && ! kubectl get vm guest -n team-a -o name 2>/dev/null"
check "one VMI and one pod were created per start: no 409 on a create" \
  bash -c "! grep -h '\"msg\":\"write skipped\"' '$work/alpha.log' '$work/beta.log' | grep -q 'create'"

# ---------------------------------------------------------------- shutdown
for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
clean=0
for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || clean=$?; done
pids=()
check "every process exits 0 on SIGTERM" test "$clean" = 0

echo "controller e2e: $passed passed, $failed failed ($((SECONDS - started)) s)"
((failed == 0))
