#!/usr/bin/env bash
# The VM controller end to end (docs/controller.md): a real kube-apiserver and etcd
# (tools/testenv), `vmgate serve` registered as the webhooks (as cluster_test.sh does), and two
# `vmgate controller` replicas electing a leader on a Lease. There is no kubelet (the real node's
# test is node_test.sh): the test plays the node agent, reporting VMI status as
# kubevirt/kubevirt-handler, the only identity besides KubeVirt's others whose VMI status changes
# the webhook keeps.
#   kubectl apply VM (instancetype + preference) -> VMI and launcher pod (resources, node
#   selectors, hugepages field by field; no token) -> Running as the node agent reports it ->
#   VM Running -> kubectl delete vm -> pod, VMI and VM gone. One leader writes; SIGTERM hands the
#   Lease over. And what a hostile tenant tried (docs/security.md): status patches by any other
#   account, a VMI stored where the webhooks do not look, a VM whose VMIs never start, a 240-
#   character name, a pod in one namespace owning another's VMI.
# Usage: test/e2e/controller_test.sh   (after the build)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${VMGATE_BUILD_DIR:-$root/build}
vmgate=$build/vmgate
[[ -x $vmgate ]] || { echo "controller_test: build vmgate first" >&2; exit 2; }

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

dir="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
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
  --access-log false >"$work/serve.log" 2>&1 &
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
# changes from anyone but KubeVirt's service accounts: the controller runs as
# kubevirt/kubevirt-controller and the node agent as kubevirt/kubevirt-handler, each with the
# rules docs/security.md lists. team-a/vmgate-launcher (the account launcher pods once ran as,
# which vmgate serve --launcher-service-account used to trust) may patch team-a's VMIs as far as
# RBAC goes, and is a user like any other to the webhook.
kubectl create namespace kubevirt >/dev/null
kubectl create namespace team-b >/dev/null
kubectl create serviceaccount kubevirt-controller -n kubevirt >/dev/null
kubectl create serviceaccount kubevirt-handler -n kubevirt >/dev/null
kubectl create serviceaccount vmgate-launcher -n team-a >/dev/null
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
metadata: {name: vmi-status-writer}
rules:
- apiGroups: [kubevirt.io]
  resources: [virtualmachineinstances]
  verbs: [get, list, watch, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: vmgate-node}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: vmi-status-writer}
subjects: [{kind: ServiceAccount, name: kubevirt-handler, namespace: kubevirt}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: tenant-vmi-writer, namespace: team-a}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: vmi-status-writer}
subjects: [{kind: ServiceAccount, name: vmgate-launcher, namespace: team-a}]
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
sa_kubeconfig "$work/handler.kubeconfig" kubevirt kubevirt-handler
sa_kubeconfig "$work/tenant.kubeconfig" team-a vmgate-launcher
check "the node agent's identity may not create pods (least privilege)" \
  test "$(kubectl --kubeconfig "$work/handler.kubeconfig" auth can-i create pods -n team-a 2>/dev/null)" = no

# ---------------------------------------------------------------- two controllers, one leader
controller() { # NAME
  setsid "$vmgate" controller --kubeconfig "$work/controller.kubeconfig" --lease-namespace kubevirt --lease-name vmgate-controller \
    --identity "$1" --launcher-image registry.example/vmgate-launcher:e2e --resync 2s >"$work/$1.log" 2>&1 &
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
check "pod: the compute container runs vmgate-launcher on the VMI file of the pod's annotation" \
  equals "$(field "$work/big-pod.json" "$c[\"command\"][:3]")" '["vmgate-launcher","--vmi","/var/run/vmgate/vmi/vmi.json"]'
check "pod: the annotation is the VMI as admitted" \
  equals "$(field "$work/big-pod.json" 'json.loads(d["metadata"]["annotations"]["vmgate.kubevirt.io/vmi"])["metadata"]["uid"]')" \
  "\"$(kubectl get vmi big -n team-a -o jsonpath='{.metadata.uid}')\""
check "pod: no service account named, no token mounted" \
  equals "$(field "$work/big-pod.json" '[d["spec"].get("serviceAccountName"), d["spec"]["automountServiceAccountToken"]]')" '[null,false]'
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

# ---------------------------------------------------------------- the node agent's report, and nobody else's
team_a_vm() { # NAME DOMAIN (JSON) [PREFERENCE]: a tiny VM of team-a that runs Always
  kubectl apply -f - >/dev/null <<EOF
{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "$1", "namespace": "team-a"},
 "spec": {"runStrategy": "Always", "instancetype": {"kind": "VirtualMachineInstancetype", "name": "tiny"},
$([[ -z ${3:-} ]] || echo "  \"preference\": {\"kind\": \"VirtualMachinePreference\", \"name\": \"$3\"},")
  "template": {"spec": {"domain": $2}}}}
EOF
}
team_a_vm guest '{"devices": {"autoattachPodInterface": false}}' plain
phase_of() { jpath vmi "$1" -n team-a -o jsonpath='{.status.phase}'; }
check "the guest VM gets its VMI, Scheduling, and a launcher pod" wait_until 20 bash -c \
  "[[ \$(kubectl get vmi guest -n team-a -o jsonpath='{.status.phase}' 2>/dev/null) == Scheduling && -n \$(kubectl get pods -n team-a -l vm.kubevirt.io/name=guest -o name) ]]"
guest_uid=$(jpath vmi guest -n team-a -o jsonpath='{.metadata.uid}')
report() { # KUBECONFIG VMI UID PHASE NODE: vmgate-node's merge patch, as that identity; prints the stored phase
  kubectl --kubeconfig "$1" patch vmi "$2" -n team-a --type merge -o jsonpath='{.status.phase}' \
    -p "{\"metadata\":{\"uid\":\"$3\"},\"status\":{\"phase\":\"$4\",\"nodeName\":\"$5\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"$([[ $4 == Running ]] && echo True || echo False)\"}]}}"
}
# The patch answers with the object as stored: the webhook reverted the status change. The
# tenant's account (finding 1 of the isolation review: its "Running on control-plane-1" was kept
# while vmgate serve trusted the launcher's account) is a user like any other now.
check "a tenant account's status patch of its own VMI is reverted" \
  equals "$(report "$work/tenant.kubeconfig" guest "$guest_uid" Running control-plane-1)" Scheduling
check "... and a plain user's" equals "$(report "$KUBECONFIG" guest "$guest_uid" Running control-plane-1)" Scheduling
check "the tenant account may not change the VMI's spec" \
  bash -c "kubectl --kubeconfig '$work/tenant.kubeconfig' patch vmi guest -n team-a --type merge -p '{\"spec\":{\"terminationGracePeriodSeconds\":5}}' 2>&1 | grep -q 'update of VMI object is restricted'"
check "the node agent's report stands" equals "$(report "$work/handler.kubeconfig" guest "$guest_uid" Running node0)" Running
check "the VM shows printableStatus Running and ready" wait_until 20 bash -c \
  "[[ \$(kubectl get vm guest -n team-a -o jsonpath='{.status.printableStatus} {.status.ready}') == 'Running true' ]]"
check "the VM status records the generation its VMI was started from" \
  equals "$(jpath vm guest -n team-a -o jsonpath='{.status.observedGeneration}/{.status.desiredGeneration}/{.status.created}')" "1/1/true"
check "the VMI's phase transitions: Pending, Scheduling, and Running once seen" wait_until 10 bash -c \
  "[[ \$(kubectl get vmi guest -n team-a -o jsonpath='{.status.phaseTransitionTimestamps[*].phase}') == 'Pending Scheduling Running' ]]"

# Finding 3: a pod in team-b naming team-a's VMI as its controller, held by a finalizer, then
# deleted, fails nothing in team-a (owners are looked up in the dependent's own namespace).
kubectl create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: impostor
  namespace: team-b
  labels: {kubevirt.io: virt-launcher}
  finalizers: [e2e.vmgate.io/hold]
  ownerReferences: [{apiVersion: kubevirt.io/v1, kind: VirtualMachineInstance, name: guest, uid: $guest_uid, controller: true}]
spec:
  containers: [{name: compute, image: registry.example/none:1}]
EOF
kubectl delete pod impostor -n team-b --wait=false >/dev/null
sleep 5 # two resyncs
check "a team-b pod owning team-a's VMI by uid fails nothing in team-a" equals "$(phase_of guest)" Running
kubectl patch pod impostor -n team-b --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null

kubectl delete vm guest -n team-a --wait=false >/dev/null
check "kubectl delete vm: the launcher pod, the VMI and the VM go" wait_until 20 bash -c \
  "[[ -z \$(kubectl get pods -n team-a -l vm.kubevirt.io/name=guest -o name) ]] && ! kubectl get vmi guest -n team-a -o name 2>/dev/null && ! kubectl get vm guest -n team-a -o name 2>/dev/null"
check "one VMI and one pod were created per start: no 409 on a create" \
  bash -c "! grep -h '\"msg\":\"write skipped\"' '$work/alpha.log' '$work/beta.log' | grep -q '\"action\":\"create'"

# ---------------------------------------------------------------- state change requests (virtctl start, stop)
# As virt-api's start and stop subresources write them (lifecycle.go getChangeRequestJson): a JSON
# patch of the VM's status that tests the list it extends.
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: manual, namespace: team-a}
spec:
  runStrategy: Manual
  instancetype: {kind: VirtualMachineInstancetype, name: tiny}
  template: {spec: {domain: {devices: {}}}}
EOF
check "runStrategy Manual: Stopped, no VMI" wait_until 20 bash -c \
  "[[ \$(kubectl get vm manual -n team-a -o jsonpath='{.status.printableStatus}' 2>/dev/null) == Stopped ]] && ! kubectl get vmi manual -n team-a -o name 2>/dev/null"
request() { # VM REQUEST (JSON)
  kubectl patch vm "$1" -n team-a --subresource=status --type=json -p \
    "[{\"op\":\"test\",\"path\":\"/status/stateChangeRequests\",\"value\":null},{\"op\":\"add\",\"path\":\"/status/stateChangeRequests\",\"value\":[$2]}]" >/dev/null
}
request manual '{"action":"Start"}'
check "a Start request: the controller creates the VMI" wait_until 20 bash -c "kubectl get vmi manual -n team-a -o name >/dev/null 2>&1"
check "... and drops the request once it sees the VMI" wait_until 10 bash -c \
  "[[ -z \$(kubectl get vm manual -n team-a -o jsonpath='{.status.stateChangeRequests}') ]]"
manual_uid=$(jpath vmi manual -n team-a -o jsonpath='{.metadata.uid}')
request manual "{\"action\":\"Stop\",\"uid\":\"$manual_uid\"}"
check "a Stop request for that VMI: it and its pod go" wait_until 20 gone manual
check "... the request is dropped, the VM Stopped" wait_until 10 bash -c \
  "[[ \$(kubectl get vm manual -n team-a -o jsonpath='{.status.printableStatus}/{.status.stateChangeRequests}') == Stopped/ ]]"
sleep 3 # resyncs
check "... and no VMI follows" bash -c "! kubectl get vmi manual -n team-a -o name 2>/dev/null"
kubectl delete vm manual -n team-a --wait=false >/dev/null

# ---------------------------------------------------------------- a VM whose VMIs never start: KubeVirt's backoff
team_a_vm crashy '{"devices": {}}'
check "crashy gets a VMI in Scheduling" wait_until 20 bash -c \
  "[[ \$(kubectl get vmi crashy -n team-a -o jsonpath='{.status.phase}' 2>/dev/null) == Scheduling ]]"
first_uid=$(jpath vmi crashy -n team-a -o jsonpath='{.metadata.uid}')
report "$work/handler.kubeconfig" crashy "$first_uid" Failed node0 >/dev/null
check "the VM shows CrashLoopBackOff with one start failure of that VMI" wait_until 20 bash -c \
  "[[ \$(kubectl get vm crashy -n team-a -o jsonpath='{.status.printableStatus}/{.status.startFailure.consecutiveFailCount}/{.status.startFailure.lastFailedVMIUID}') == CrashLoopBackOff/1/$first_uid ]]"
retry_after=$(jpath vm crashy -n team-a -o jsonpath='{.status.startFailure.retryAfterTimestamp}')
seconds_until() { python3 -c 'import sys,datetime; t=datetime.datetime.strptime(sys.argv[1],"%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc); print(int((t-datetime.datetime.now(datetime.timezone.utc)).total_seconds()))' "$1"; }
wait_for=$(seconds_until "$retry_after")
check "the retry is 10 to 15 s after the failure (${wait_for} s left)" test "$wait_for" -ge 3 -a "$wait_for" -le 15
sleep $((wait_for > 2 ? wait_for - 2 : 0))
crashy_uid() { jpath vmi crashy -n team-a -o jsonpath='{.metadata.uid}'; }
check "no new VMI before the retry time" test "$(crashy_uid)" = "" -o "$(crashy_uid)" = "$first_uid"
check "a new VMI once it has passed" wait_until 15 bash -c \
  "uid=\$(kubectl get vmi crashy -n team-a -o jsonpath='{.metadata.uid}' 2>/dev/null); [[ -n \$uid && \$uid != $first_uid ]]"
kubectl delete vm crashy -n team-a --wait=false >/dev/null

# ---------------------------------------------------------------- finding 2: a 240-character name
kubectl create namespace team-c >/dev/null
long_name=$(printf 'v%.0s' $(seq 240))
kubectl apply -f - >/dev/null <<EOF
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: $long_name, namespace: team-c}
spec:
  runStrategy: Always
  template: {spec: {domain: {memory: {guest: 128Mi}, devices: {}}}}
EOF
check "the 240-character VM gets its VMI and one launcher pod" wait_until 20 bash -c \
  "[[ \$(kubectl get pods -n team-c -l kubevirt.io=virt-launcher -o name | wc -l) == 1 ]]"
long_pod=$(kubectl get pods -n team-c -l kubevirt.io=virt-launcher -o jsonpath='{.items[0].metadata.name}')
check "its pod name is cut as KubeVirt's generateName is: ${#long_pod} characters" test "${#long_pod}" -le 63
long_vmi=$(jpath vmi "$long_name" -n team-c -o jsonpath='{.metadata.uid}')
sleep 10 # five resyncs
check "the same VMI, Scheduling, 10 s later (not failed and recreated)" \
  equals "$(jpath vmi "$long_name" -n team-c -o jsonpath='{.metadata.uid}/{.status.phase}')" "$long_vmi/Scheduling"
long_writes=$(cat "$work/alpha.log" "$work/beta.log" | grep '"namespace":"team-c"' | grep -c '"msg":"write' || true)
check "a bounded number of writes for it ($long_writes)" test "$long_writes" -le 8
kubectl delete vm "$long_name" -n team-c --wait=false >/dev/null

# ---------------------------------------------------------------- findings 5 and 6: where the webhooks do not look
# A namespace the webhooks exclude stores any VMI; the controller judges it before making a pod.
kubectl create namespace outside >/dev/null
kubectl label namespace outside vmgate.kubevirt.io/ignore=true >/dev/null
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: sneaky, namespace: outside}
spec:
  domain:
    devices:
      autoattachVSOCK: true
      disks: [{name: host, disk: {bus: virtio}}]
    resources: {requests: {memory: 128Mi}}
  volumes: [{name: host, hostDisk: {path: /var/run/secrets/kubernetes.io/serviceaccount/token, type: Disk}}]
---
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: overflow, namespace: outside}
spec:
  domain:
    devices: {}
    resources: {requests: {memory: "-18014398207492092"}}
EOF
check "stored without the webhooks (no defaults, no finalizer)" \
  equals "$(jpath vmi sneaky -n outside -o jsonpath='{.metadata.finalizers}')" ""
for vmi in sneaky overflow; do
  check "$vmi: Failed, Synchronized=False/FailedCreateValidation" wait_until 20 bash -c \
    "[[ \$(kubectl get vmi $vmi -n outside -o jsonpath='{.status.phase}/{.status.conditions[?(@.type==\"Synchronized\")].reason}') == Failed/FailedCreateValidation ]]"
done
sneaky_message=$(jpath vmi sneaky -n outside -o jsonpath='{.status.conditions[?(@.type=="Synchronized")].message}')
check "... naming the hostDisk and the VSOCK device" equals "$sneaky_message" \
  "failed create validation: spec.volumes[0]: HostDisk feature gate is not enabled, spec.domain.devices.autoattachVSOCK: VSOCK feature gate is not enabled in kubevirt-config"
check "... and neither got a launcher pod" equals "$(kubectl get pods -n outside -o name)" ""

# ---------------------------------------------------------------- shutdown
for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
clean=0
for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || clean=$?; done
pids=()
check "every process exits 0 on SIGTERM" test "$clean" = 0

echo "controller e2e: $passed passed, $failed failed ($((SECONDS - started)) s)"
((failed == 0))
