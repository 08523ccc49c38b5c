#!/usr/bin/env bash
# vmgate in a real cluster: a real kube-apiserver and etcd (tools/testenv), `vmgate serve
# --kubeconfig` on 127.0.0.1 registered with the webhook configurations of manifests/webhooks
# (clientConfig.url instead of the Service), and then kubectl only: mutation as `vmgate check`
# predicts, KubeVirt's denial messages, server-side dry runs, an instancetype created in the same
# apply as its VM, inferFromVolume through a PVC and a DataSource, an update of the instancetype
# reference, the watch cache surviving an apiserver restart and a stalled apiserver, the RBAC of
# manifests/rbac, bad credentials and endpoints reported on /readyz, `vmgate check --kubeconfig`
# and `vmgate-launcher` on a VMI as stored; the KubeVirt release read from the KubeVirt CR.
# Usage: test/e2e/cluster_test.sh   (after the build; VMGATE_SHARED_DIR defaults to ../shared)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${VMGATE_BUILD_DIR:-$root/build}  # VMGATE_BUILD_DIR=build-asan: the sanitizer build
vmgate=$build/vmgate
launcher=$build/vmgate-launcher
shared=${VMGATE_SHARED_DIR:-$root/../shared}
instancetypes=$shared/data/common-instancetypes
[[ -x $vmgate ]] || { echo "cluster_test: build vmgate first ($vmgate)" >&2; exit 2; }
[[ -f $instancetypes/cluster-instancetypes.yaml ]] || { echo "cluster_test: $instancetypes missing" >&2; exit 2; }

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

e2e_extra_cleanup() {
  if [[ -n ${apiserver_pid:-} ]]; then kill -CONT "$apiserver_pid" 2>/dev/null || true; fi
}

e2e_start_testenv

# A CA and a serving certificate for 127.0.0.1, as a webhook's clientConfig.caBundle needs.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=e2e-ca \
  -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=vmgate \
  -keyout "$work/tls.key" -out "$work/tls.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$work/ext"
openssl x509 -req -in "$work/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -days 1 \
  -extfile "$work/ext" -out "$work/tls.crt" 2>/dev/null

# serve NAME KUBECONFIG [ARGS...]: starts vmgate serve in its own process group; sets
# <NAME>_metrics to its metrics port. The webhook instance listens on $https_port.
serve() {
  local name=$1 kubeconfig=$2
  shift 2
  local metrics listen
  metrics=$(free_port)
  listen=127.0.0.1:$(free_port)
  if [[ $name == webhook ]]; then listen=127.0.0.1:$https_port; fi
  setsid "$vmgate" serve --kubeconfig "$kubeconfig" --listen "$listen" --metrics-listen "127.0.0.1:$metrics" \
    --tls-cert "$work/tls.crt" --tls-key "$work/tls.key" --cache-sync-timeout 3s --shutdown-delay 0s \
    --access-log false "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
  printf -v "${name}_metrics" %s "$metrics"
  local i
  for ((i = 0; i < 100; i++)); do
    curl -sf "http://127.0.0.1:$metrics/livez" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "vmgate serve ($name) did not start; its log:" >&2
  cat "$work/$name.log" >&2
  return 1
}
readyz() { curl -s "http://127.0.0.1:$1/readyz"; }
ready() { curl -sf "http://127.0.0.1:$1/readyz" >/dev/null; }
metric() { # PORT NAME RESOURCE
  curl -s "http://127.0.0.1:$1/metrics" | awk -v m="$2{resource=\"$3\"}" '$1 == m { print $2 }'
}

# ---------------------------------------------------------------- the cluster and the webhook
kubectl create namespace vmgate-system >/dev/null
kubectl create namespace team-a >/dev/null
# The CRDs are KubeVirt v1.8.2's (docs/testenv.md); a few common preferences carry fields of
# later releases (preferredVideoType, preferredLaunchSecurity), which the API server prunes.
kubectl apply --validate=false -f "$instancetypes/cluster-instancetypes.yaml" -f "$instancetypes/cluster-preferences.yaml" >/dev/null
# vmgate check's predictions use the objects as the cluster stores them.
kubectl get virtualmachineclusterinstancetypes,virtualmachineclusterpreferences -o json >"$work/cluster.json"
instancetype_count=$(kubectl get virtualmachineclusterinstancetypes -o name | wc -l)
preference_count=$(kubectl get virtualmachineclusterpreferences -o name | wc -l)

https_port=$(free_port)
serve webhook "$KUBECONFIG"
check "serve --kubeconfig gets ready" wait_until 20 ready "$webhook_metrics"
check "the cache holds the $instancetype_count cluster instancetypes" \
  test "$(metric "$webhook_metrics" vmgate_cluster_cache_objects virtualmachineclusterinstancetypes)" = "$instancetype_count"
check "the cache holds the $preference_count cluster preferences" \
  test "$(metric "$webhook_metrics" vmgate_cluster_cache_objects virtualmachineclusterpreferences)" = "$preference_count"

ca_bundle=$(base64 -w0 <"$work/ca.crt")
sed -E "s#^( *)service: \{namespace: vmgate-system, name: vmgate, path: ([^,]*), port: 443\}#\1url: https://127.0.0.1:$https_port\2\n\1caBundle: $ca_bundle#" \
  manifests/webhooks/vmgate-webhooks.yaml >"$work/webhooks.yaml"
check "the webhook configurations apply" kubectl apply -f "$work/webhooks.yaml"
check "every webhook points at the local vmgate" \
  test "$(grep -c "url: https://127.0.0.1:$https_port/" "$work/webhooks.yaml")" = 4

# vmgate check's answer for a manifest, with the cluster given as files.
check_json() { # FILE [ARGS...]
  local file=$1
  shift
  "$vmgate" check -f "$file" --objects "$work/cluster.json" -n team-a -o json "$@" || true
}
json_field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# ---------------------------------------------------------------- mutation as check predicts
cat >"$work/vm-ok.yaml" <<'EOF'
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm-ok, namespace: team-a}
spec:
  runStrategy: Halted
  instancetype: {name: u1.medium}
  preference: {name: fedora}
  template:
    spec:
      domain:
        devices:
          disks: [{name: root, disk: {}}]
      volumes:
      - name: root
        containerDisk: {image: quay.io/containerdisks/fedora:41}
EOF
check_json "$work/vm-ok.yaml" >"$work/vm-ok.check.json"
check "vmgate check admits vm-ok" test "$(json_field 'd["results"][0]["allowed"]' <"$work/vm-ok.check.json")" = True
check "kubectl apply of vm-ok" kubectl apply -f "$work/vm-ok.yaml"
kubectl get vm vm-ok -n team-a -o json >"$work/vm-ok.stored.json"
same_spec() { # STORED CHECK
  python3 - "$1" "$2" <<'PY'
import json, sys
stored = json.load(open(sys.argv[1]))
admitted = json.load(open(sys.argv[2]))["results"][0]["admitted"]
if stored["spec"] != admitted["spec"]:
    print("stored spec:  ", json.dumps(stored["spec"], sort_keys=True), file=sys.stderr)
    print("check admitted:", json.dumps(admitted["spec"], sort_keys=True), file=sys.stderr)
    sys.exit(1)
PY
}
check "the stored VM is what vmgate check admitted" same_spec "$work/vm-ok.stored.json" "$work/vm-ok.check.json"
check "the mutation ran (firmware uuid set by the webhook)" \
  test -n "$(json_field 'd["spec"]["template"]["spec"]["domain"]["firmware"]["uuid"]' <"$work/vm-ok.stored.json")"

# ---------------------------------------------------------------- denial with KubeVirt's message
cat >"$work/vm-conflict.yaml" <<'EOF'
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm-conflict, namespace: team-a}
spec:
  runStrategy: Halted
  instancetype: {name: u1.medium}
  template:
    spec:
      domain:
        cpu: {sockets: 2}
        memory: {guest: 1Gi}
        devices: {}
EOF
check_json "$work/vm-conflict.yaml" >"$work/vm-conflict.check.json"
expected_message=$(json_field 'd["results"][0]["message"]' <"$work/vm-conflict.check.json")
check "vmgate check denies vm-conflict" test "$(json_field 'd["results"][0]["allowed"]' <"$work/vm-conflict.check.json")" = False
if kubectl apply -f "$work/vm-conflict.yaml" >"$work/conflict.out" 2>"$work/conflict.err"; then
  check "kubectl apply of vm-conflict is refused" false
else
  check "kubectl apply of vm-conflict is refused" true
fi
# kubectl prints a 422 Invalid status as "The request is invalid:" and one "* field: message"
# line per cause: the same for KubeVirt's webhook and for vmgate.
prints_causes() { # CHECK-JSON KUBECTL-STDERR
  python3 - "$1" "$2" <<'PY'
import json, sys
causes = json.load(open(sys.argv[1]))["results"][0]["causes"]
printed = open(sys.argv[2]).read()
missing = [c for c in causes if f"* {c['field']}: {c['message']}" not in printed]
if not causes or missing or "The request is invalid" not in printed:
    print("missing from kubectl's output:", missing, "\n", printed, file=sys.stderr)
    sys.exit(1)
PY
}
check "kubectl prints KubeVirt's causes" prints_causes "$work/vm-conflict.check.json" "$work/conflict.err"
check "nothing stored for vm-conflict" bash -c '! kubectl get vm vm-conflict -n team-a >/dev/null 2>&1'

# ---------------------------------------------------------------- server-side dry run
sed 's/name: vm-ok,/name: vm-dry,/' "$work/vm-ok.yaml" >"$work/vm-dry.yaml"
check "dry run of a good VM succeeds" bash -c "kubectl apply --dry-run=server -f '$work/vm-dry.yaml' | grep -q 'server dry run'"
check "the dry run stored nothing" bash -c '! kubectl get vm vm-dry -n team-a >/dev/null 2>&1'
if kubectl apply --dry-run=server -f "$work/vm-conflict.yaml" >/dev/null 2>"$work/dry-conflict.err"; then
  check "dry run of vm-conflict is refused" false
else
  check "dry run of vm-conflict is refused" true
fi
check "the dry run prints the same causes" prints_causes "$work/vm-conflict.check.json" "$work/dry-conflict.err"

# ---------------------------------------------------------------- the KubeVirt CR of one namespace
# A tenant's own KubeVirt CR (here in namespace aaa, which sorts first) enabling HostDisk does not
# configure vmgate: only the CR of KubeVirt's namespace does (--kubevirt-namespace).
kubectl create namespace aaa >/dev/null
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: kubevirt.io/v1
kind: KubeVirt
metadata: {name: tenant-config, namespace: aaa}
spec:
  configuration:
    developerConfiguration: {featureGates: [HostDisk]}
EOF
cat >"$work/vmi-hostdisk.yaml" <<'EOF'
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: hostdisk, namespace: team-a}
spec:
  domain:
    memory: {guest: 128Mi}
    devices:
      disks: [{name: host, disk: {bus: virtio}}]
  volumes:
    - name: host
      hostDisk: {path: /var/run/secrets/kubernetes.io/serviceaccount/token, type: Disk}
EOF
sleep 2  # the watch event of the CR, had vmgate listened to that namespace
kubectl apply --dry-run=server -f "$work/vmi-hostdisk.yaml" >"$work/hostdisk.out" 2>&1 || true
check "a KubeVirt CR outside KubeVirt's namespace grants no feature gate" \
  grep -q 'HostDisk feature gate is not enabled' "$work/hostdisk.out"

# ---------------------------------------------------------------- instancetype and VM in one apply
cat >"$work/fresh.yaml" <<'EOF'
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata: {name: e2e-fresh}
spec:
  cpu: {guest: 3}
  memory: {guest: 3Gi}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm-fresh-conflict, namespace: team-a}
spec:
  runStrategy: Halted
  instancetype: {name: e2e-fresh}
  template:
    spec:
      domain:
        cpu: {cores: 1}
        devices: {}
EOF
if kubectl apply -f "$work/fresh.yaml" >/dev/null 2>"$work/fresh.err"; then
  check "a VM conflicting with an instancetype created in the same apply is refused" false
else
  check "a VM conflicting with an instancetype created in the same apply is refused" \
    grep -qF 'VM field(s) spec.template.spec.domain.cpu.cores conflicts with selected instance type' "$work/fresh.err"
fi
cat >"$work/fresh2.yaml" <<'EOF'
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata: {name: e2e-fresh-2}
spec:
  cpu: {guest: 2}
  memory: {guest: 2Gi}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm-fresh, namespace: team-a}
spec:
  runStrategy: Halted
  instancetype: {name: e2e-fresh-2}
  template:
    spec:
      domain:
        devices: {}
EOF
kubectl apply -f "$work/fresh2.yaml" >/dev/null 2>"$work/fresh2.err" || true
check "a VM naming an instancetype created in the same apply is admitted" kubectl get vm vm-fresh -n team-a -o name
check "... without a not-found warning" bash -c "! grep -qi 'not found' '$work/fresh2.err'"

# ---------------------------------------------------------------- inferFromVolume
cat >"$work/infer.yaml" <<'EOF'
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: golden
  namespace: team-a
  labels:
    instancetype.kubevirt.io/default-instancetype: u1.large
    instancetype.kubevirt.io/default-preference: rhel.9
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 10Gi}}
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataSource
metadata:
  name: fedora-source
  namespace: team-a
  labels:
    instancetype.kubevirt.io/default-instancetype: u1.small
    instancetype.kubevirt.io/default-preference: fedora
spec:
  source:
    pvc: {name: golden, namespace: team-a}
EOF
check "kubectl creates a PVC and a DataSource" kubectl apply -f "$work/infer.yaml"
cat >"$work/vm-infer-pvc.yaml" <<'EOF'
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm-infer-pvc, namespace: team-a}
spec:
  runStrategy: Halted
  instancetype: {inferFromVolume: root}
  preference: {inferFromVolume: root}
  template:
    spec:
      domain: {devices: {}}
      volumes:
      - name: root
        persistentVolumeClaim: {claimName: golden}
EOF
cat >"$work/vm-infer-ds.yaml" <<'EOF'
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm-infer-ds, namespace: team-a}
spec:
  runStrategy: Halted
  instancetype: {inferFromVolume: root}
  preference: {inferFromVolume: root}
  dataVolumeTemplates:
  - metadata: {name: vm-infer-ds-root}
    spec:
      sourceRef: {kind: DataSource, name: fedora-source}
      storage: {resources: {requests: {storage: 10Gi}}}
  template:
    spec:
      domain: {devices: {}}
      volumes:
      - name: root
        dataVolume: {name: vm-infer-ds-root}
EOF
check "a VM inferring from the PVC is admitted" kubectl apply -f "$work/vm-infer-pvc.yaml"
check "... with the PVC's instancetype" \
  test "$(kubectl get vm vm-infer-pvc -n team-a -o jsonpath='{.spec.instancetype.name}/{.spec.preference.name}')" = u1.large/rhel.9
check "a VM inferring from the DataSource is admitted" kubectl apply -f "$work/vm-infer-ds.yaml"
check "... with the DataSource's instancetype" \
  test "$(kubectl get vm vm-infer-ds -n team-a -o jsonpath='{.spec.instancetype.name}/{.spec.preference.name}')" = u1.small/fedora

# ---------------------------------------------------------------- update of the instancetype reference
kubectl get vm vm-ok -n team-a -o json >"$work/vm-ok.old.json"
python3 - "$work/vm-ok.old.json" "$work/vm-ok.new.json" <<'PY'
import json, sys
vm = json.load(open(sys.argv[1]))
vm["spec"]["instancetype"]["name"] = "u1.large"
vm["spec"]["runStrategy"] = "Always"
json.dump(vm, open(sys.argv[2], "w"))
PY
"$vmgate" check -f "$work/vm-ok.new.json" --old "$work/vm-ok.old.json" --operation UPDATE \
  --objects "$work/cluster.json" -n team-a -o json >"$work/update.check.json" || true
expected_update=$(json_field 'd["results"][0]["allowed"]' <"$work/update.check.json")
if kubectl replace -f "$work/vm-ok.new.json" >/dev/null 2>"$work/update.err"; then actual_update=True; else actual_update=False; fi
check "an update of the instancetype reference: kubectl agrees with vmgate check ($expected_update)" \
  test "$actual_update" = "$expected_update"
# And with KubeVirt's own admission code, when tools/build-oracle has built it.
if [[ -x $root/build/kubevirt-oracle ]]; then
  "$root/build/kubevirt-oracle" check -f "$work/vm-ok.new.json" --old "$work/vm-ok.old.json" --operation UPDATE \
    --objects "$work/cluster.json" -n team-a -o json >"$work/update.oracle.json" 2>/dev/null || true
  check "... and with KubeVirt's admission code (kubevirt-oracle)" \
    test "$(json_field 'd["results"][0]["allowed"]' <"$work/update.oracle.json")" = "$actual_update"
fi

# ---------------------------------------------------------------- vmgate check --kubeconfig
# One clock for both runs: the expanded VMI records its Pending transition time.
export SOURCE_DATE_EPOCH=1767225600
check_json "$work/vm-ok.yaml" >"$work/files.json"
"$vmgate" check -f "$work/vm-ok.yaml" --kubeconfig "$KUBECONFIG" -n team-a -o json >"$work/live.json" || true
check "check --kubeconfig gives what check --objects gives" \
  python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a != b)' \
  "$work/files.json" "$work/live.json"
"$vmgate" check -f "$work/vm-conflict.yaml" --kubeconfig "$KUBECONFIG" -n team-a -o json >"$work/live-conflict.json" || true
check "check --kubeconfig denies vm-conflict alike" \
  test "$(json_field 'd["results"][0]["message"]' <"$work/live-conflict.json")" = "$expected_message"

# ---------------------------------------------------------------- vmgate-launcher on a VMI as stored
cat >"$work/vmi.yaml" <<'EOF'
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: vmi-e2e, namespace: team-a}
spec:
  domain:
    memory: {guest: 128Mi}
    devices:
      disks: [{name: root, disk: {}}]
  volumes:
  - name: root
    containerDisk: {image: quay.io/containerdisks/fedora:41}
EOF
check "kubectl creates a VMI through the webhooks" kubectl apply -f "$work/vmi.yaml"
check "the stored VMI carries the VMI defaults (machine type)" \
  test "$(kubectl get vmi vmi-e2e -n team-a -o jsonpath='{.spec.domain.machine.type}')" = q35
if [[ -x $launcher ]]; then
  # What a launcher pod gets in its annotation (the controller adds only the embedding).
  kubectl get vmi vmi-e2e -n team-a -o json >"$work/vmi-stored.json"
  check "vmgate-launcher takes the stored VMI as admitted" \
    bash -c "'$launcher' --vmi '$work/vmi-stored.json' --print-xml | grep -q '<name>team-a_vmi-e2e</name>'"
fi

# ---------------------------------------------------------------- the release the cluster runs
# The KubeVirt CR in KubeVirt's namespace reports v1.8.2 (virt-operator's
# status.observedKubeVirtVersion; the CRDs here are v1.8.2's too): vmgate serve judges as v1.8 from
# then on, says so in a warning, and stores what `vmgate check --kubevirt-version v1.8` predicts.
# A masquerade port of 65536 tells the two releases apart: v1.8.2 admits it, main refuses it.
kubectl create namespace kubevirt >/dev/null
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: kubevirt.io/v1
kind: KubeVirt
metadata: {name: kubevirt, namespace: kubevirt}
spec: {}
EOF
release_patch='{"status":{"observedKubeVirtVersion":"v1.8.2"}}'
kubectl patch kubevirt kubevirt -n kubevirt --subresource=status --type merge -p "$release_patch" >/dev/null 2>&1 ||
  kubectl patch kubevirt kubevirt -n kubevirt --type merge -p "$release_patch" >/dev/null
sed -e 's/name: vm-ok,/name: vm-port,/' \
  -e '/disks: \[{name: root, disk: {}}\]/a\          interfaces: [{name: default, masquerade: {}, ports: [{port: 65536}]}]' \
  -e '/^      volumes:/i\      networks: [{name: default, pod: {}}]' "$work/vm-ok.yaml" >"$work/vm-port.yaml"
check_json "$work/vm-port.yaml" --kubevirt-version main >"$work/vm-port.main.json"
check "as main, vmgate check refuses the port" \
  test "$(json_field 'd["results"][0]["allowed"]' <"$work/vm-port.main.json")" = False
check_json "$work/vm-port.yaml" --kubevirt-version v1.8 >"$work/vm-port.check.json"
check "as v1.8, vmgate check admits it" \
  test "$(json_field 'd["results"][0]["allowed"]' <"$work/vm-port.check.json")" = True
judged_v18() { kubectl apply --dry-run=server -f "$work/vm-port.yaml" 2>&1 | grep -q 'judged as KubeVirt v1.8, the release the KubeVirt CR reports'; }
check "vmgate serve reads the release from the KubeVirt CR and says so" wait_until 20 judged_v18
check "kubectl apply of vm-port: admitted as v1.8.2 would" kubectl apply -f "$work/vm-port.yaml"
kubectl get vm vm-port -n team-a -o json >"$work/vm-port.stored.json"
check "the stored VM is what vmgate check --kubevirt-version v1.8 admitted" \
  same_spec "$work/vm-port.stored.json" "$work/vm-port.check.json"
# Back to the newest release for the rest of the test.
kubectl delete kubevirt kubevirt -n kubevirt >/dev/null
kubectl delete vm vm-port -n team-a >/dev/null
judged_main() { ! kubectl apply --dry-run=server -f "$work/vm-port.yaml" >/dev/null 2>&1; }
check "without the CR, main judges again (the port refused)" wait_until 20 judged_main

# ---------------------------------------------------------------- RBAC: exactly what manifests/rbac grants
kubectl apply -f manifests/rbac/vmgate-rbac.yaml >/dev/null
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$work/apiserver-ca.crt"
token_kubeconfig "$work/sa.kubeconfig" "$(kubectl create token vmgate -n vmgate-system --duration=1h)"
serve rbac "$work/sa.kubeconfig"
check "the vmgate service account with manifests/rbac syncs every resource" wait_until 20 ready "$rbac_metrics"

kubectl create serviceaccount nobody -n vmgate-system >/dev/null
token_kubeconfig "$work/nobody.kubeconfig" "$(kubectl create token nobody -n vmgate-system --duration=1h)"
serve forbidden "$work/nobody.kubeconfig"
check "a service account without RBAC: not ready, 403 named on /readyz" \
  wait_until 10 bash -c "curl -s http://127.0.0.1:$forbidden_metrics/readyz | grep -q '403 Forbidden'"

# A token file, as a pod's projected service-account token: refused first, then rotated to a
# good token in place; vmgate re-reads it and syncs without a restart.
printf 'stale-token\n' >"$work/rotating-token"
user_kubeconfig "$work/rotating.kubeconfig" "{tokenFile: \"$work/rotating-token\"}"
serve rotating "$work/rotating.kubeconfig"
check "a token file holding a refused token: not ready (401)" \
  wait_until 10 bash -c "curl -s http://127.0.0.1:$rotating_metrics/readyz | grep -q '401 Unauthorized'"
kubectl create token vmgate -n vmgate-system --duration=1h >"$work/rotating-token.new"
mv "$work/rotating-token.new" "$work/rotating-token"
check "... the rotated token is read again and the cache syncs" wait_until 45 ready "$rotating_metrics"

token_kubeconfig "$work/badtoken.kubeconfig" "not-a-token"
serve badtoken "$work/badtoken.kubeconfig"
check "a token the API server refuses: not ready, 401 named on /readyz" \
  wait_until 10 bash -c "curl -s http://127.0.0.1:$badtoken_metrics/readyz | grep -q '401 Unauthorized'"

token_kubeconfig "$work/wrongca.kubeconfig" "not-a-token" "$work/ca.crt"
serve wrongca "$work/wrongca.kubeconfig"
check "a CA that did not sign the API server: not ready, the verification named" \
  wait_until 10 bash -c "curl -s http://127.0.0.1:$wrongca_metrics/readyz | grep -q 'certificate verif'"

token_kubeconfig "$work/unreachable.kubeconfig" "t" "$work/apiserver-ca.crt" "https://127.0.0.1:$(free_port)"
serve unreachable "$work/unreachable.kubeconfig"
check "an unreachable API server: not ready, the connection failure named" \
  wait_until 10 bash -c "curl -s http://127.0.0.1:$unreachable_metrics/readyz | grep -q 'Connection refused'"
check "... and the process keeps running" kill -0 "${pids[-1]}"
check "an admission while not synced is answered 503, not guessed" \
  bash -c "curl -s -o /dev/null -w '%{http_code}' --cacert '$work/ca.crt' -H 'Content-Type: application/json' \
    --data-binary @manifests/examples/reviews/vm-create.json \
    https://127.0.0.1:\$(grep -o '\"https\":\"127.0.0.1:[0-9]*' '$work/unreachable.log' | cut -d: -f3)/virtualmachines-mutate | grep -qx 503"

# ---------------------------------------------------------------- watch robustness
lists_before=$(metric "$webhook_metrics" vmgate_cluster_cache_lists_total virtualmachineclusterinstancetypes)
# etcd compacted to its current revision (through its JSON gateway), then the apiserver
# restarted: every resourceVersion the informers hold is gone, so their watches get 410.
source "$dir/testenv.env"
revision=$(curl -s -X POST "http://127.0.0.1:$ETCD_PORT/v3/kv/range" -d '{"key":"AA=="}' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])')
check "etcd compacted to revision $revision" \
  curl -sf -X POST "http://127.0.0.1:$ETCD_PORT/v3/kv/compaction" -d "{\"revision\": \"$revision\", \"physical\": true}" -o /dev/null
tools/testenv restart-apiserver "$dir" >/dev/null 2>&1
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata: {name: e2e-after-restart}
spec: {cpu: {guest: 1}, memory: {guest: 1Gi}}
EOF
expected=$(kubectl get virtualmachineclusterinstancetypes -o name | wc -l)
check "after an apiserver restart the cache converges ($expected cluster instancetypes)" \
  wait_until 30 bash -c "test \"\$(curl -s http://127.0.0.1:$webhook_metrics/metrics | awk '\$1 == \"vmgate_cluster_cache_objects{resource=\\\"virtualmachineclusterinstancetypes\\\"}\" {print \$2}')\" = $expected"
lists_after=$(metric "$webhook_metrics" vmgate_cluster_cache_lists_total virtualmachineclusterinstancetypes)
check "... re-listing after the 410 ($lists_before -> $lists_after lists), a bounded number of times" \
  test "$((lists_after - lists_before))" -ge 1 -a "$((lists_after - lists_before))" -le 3
check "... and still ready" ready "$webhook_metrics"

serve stall "$KUBECONFIG" --watch-idle 2s
wait_until 20 ready "$stall_metrics" || true
apiserver_pid=$(cat "$dir/kube-apiserver.pid")
restarts_before=$(metric "$stall_metrics" vmgate_cluster_cache_watch_restarts_total virtualmachineclusterpreferences)
kill -STOP "$apiserver_pid"
sleep 5
kill -CONT "$apiserver_pid"
unset apiserver_pid
wait_until 30 kubectl get --raw /readyz >/dev/null 2>&1 || true
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterPreference
metadata: {name: e2e-after-stall}
spec: {}
EOF
expected=$(kubectl get virtualmachineclusterpreferences -o name | wc -l)
check "a watch stalled by a frozen apiserver is restarted" \
  wait_until 20 bash -c "test \"\$(curl -s http://127.0.0.1:$stall_metrics/metrics | awk '\$1 == \"vmgate_cluster_cache_watch_restarts_total{resource=\\\"virtualmachineclusterpreferences\\\"}\" {print \$2}')\" -gt $restarts_before"
check "... and the cache converges ($expected cluster preferences)" \
  wait_until 30 bash -c "test \"\$(curl -s http://127.0.0.1:$stall_metrics/metrics | awk '\$1 == \"vmgate_cluster_cache_objects{resource=\\\"virtualmachineclusterpreferences\\\"}\" {print \$2}')\" = $expected"

# ---------------------------------------------------------------- shutdown
for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
clean=0
for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || clean=$?; done
check "every vmgate serve exits on SIGTERM with its informers running" test "$clean" = 0
pids=()

echo "cluster e2e: $passed passed, $failed failed"
((failed == 0))
