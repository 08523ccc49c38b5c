#!/usr/bin/env bash
# End-to-end check of tools/testenv: up in a temporary directory, the CRDs, the example cluster
# objects, helm and kubectl, restart-apiserver, and down leaving no process behind.
# Usage: test/e2e/testenv_test.sh   (the first run builds the binaries; see docs/testenv.md)
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

dir="$(mktemp -d)"
cleanup() {
  tools/testenv down "$dir" || true
  rm -rf "$dir"
}
trap cleanup EXIT

# Builds once (cached); the time of `up` itself is printed by testenv.
tools/testenv build >/dev/null
start=$SECONDS
out="$(tools/testenv up "$dir")"
up_seconds=$((SECONDS - start))
echo "up took ${up_seconds} s"
check "up prints the KUBECONFIG line" grep -qxF "export KUBECONFIG=$dir/kubeconfig" <<<"$out"
check "up prints the KUBECACHEDIR line" grep -qxF "export KUBECACHEDIR=$dir/kubectl-cache" <<<"$out"
check "up is ready within 30 s" test "$up_seconds" -le 30
eval "$out"
check "kubectl and helm are in DIR/bin" test -x "$dir/bin/kubectl" -a -x "$dir/bin/helm"
check "tools/testenv path holds kubectl and helm" test -x "$(tools/testenv path)/kubectl" -a -x "$(tools/testenv path)/helm"

crds="$(kubectl get crd -o name)"
for crd in virtualmachines.kubevirt.io virtualmachineinstances.kubevirt.io kubevirts.kubevirt.io \
  virtualmachineinstancetypes.instancetype.kubevirt.io virtualmachineclusterinstancetypes.instancetype.kubevirt.io \
  virtualmachinepreferences.instancetype.kubevirt.io virtualmachineclusterpreferences.instancetype.kubevirt.io \
  datavolumes.cdi.kubevirt.io datasources.cdi.kubevirt.io volumesnapshots.snapshot.storage.k8s.io \
  certificates.cert-manager.io issuers.cert-manager.io clusterissuers.cert-manager.io \
  certificaterequests.cert-manager.io servicemonitors.monitoring.coreos.com; do
  check "CRD $crd" grep -qxF "customresourcedefinition.apiextensions.k8s.io/$crd" <<<"$crds"
done
check "kubevirt.io/v1 is served" bash -c 'kubectl api-resources --api-group=kubevirt.io -o name | grep -qx virtualmachines.kubevirt.io'
check "kubectl's discovery cache is in DIR, not in ~/.kube/cache" test -d "$dir/kubectl-cache/discovery"

# The aggregation layer (docs/testenv.md): kube-apiserver publishes the front-proxy CA and the
# header names an aggregated API server (vmgate's subresources.kubevirt.io) trusts, and routes an
# APIService to its Service's endpoints. First without a backend: a Service without endpoints
# shows as the aggregator's EndpointsNotFound.
auth_cm() { kubectl -n kube-system get configmap extension-apiserver-authentication -o jsonpath="{.data.$1}"; }
check "extension-apiserver-authentication holds the front-proxy CA" \
  cmp -s <(auth_cm requestheader-client-ca-file) "$dir/certs/front-proxy-ca.crt"
check "extension-apiserver-authentication allows front-proxy-client" \
  test "$(auth_cm requestheader-allowed-names)" = '["front-proxy-client"]'
check "extension-apiserver-authentication names X-Remote-User" \
  test "$(auth_cm requestheader-username-headers)" = '["X-Remote-User"]'
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: aggregation-probe, namespace: default}
spec:
  ports: [{name: https, port: 443}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.subresources.kubevirt.io}
spec:
  group: subresources.kubevirt.io
  version: v1
  groupPriorityMinimum: 1000
  versionPriority: 15
  insecureSkipTLSVerify: true
  service: {name: aggregation-probe, namespace: default, port: 443}
EOF
apiservice_reason() {
  [[ "$(kubectl get apiservice v1.subresources.kubevirt.io \
    -o jsonpath='{.status.conditions[?(@.type=="Available")].reason}')" == EndpointsNotFound ]]
}
check "an APIService without endpoints is EndpointsNotFound" wait_until 30 apiservice_reason
check "its group is in discovery" bash -c 'kubectl get --raw /apis | grep -qF "\"name\":\"subresources.kubevirt.io\""'

# A backend behind the aggregator is node_test.sh's (vmgate subresources in a pod on the test's
# own CNI bridge): an EndpointSlice may not name a loopback address, and tests reach no other.
# The rest of the test runs without the group (its requests would answer 503).
kubectl delete apiservice v1.subresources.kubevirt.io >/dev/null
kubectl delete service aggregation-probe >/dev/null

server_version="$(kubectl version -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')"
check "server reports its release ($server_version)" test "$server_version" != v0.0.0
check "helm talks to the cluster" bash -c 'helm list -A >/dev/null && helm version --short | grep -q "^v3\."'
# A chart whose kubeVersion constraint needs the server's real version (not v0.0.0).
helm create "$dir/chart" >/dev/null
echo 'kubeVersion: ">=1.30.0-0"' >>"$dir/chart/Chart.yaml"
check "helm install honours kubeVersion" bash -c "helm install testchart '$dir/chart' --namespace default >/dev/null"
check "helm uninstall" helm uninstall testchart --namespace default

# The example cluster objects reference these namespaces (no namespace controller here).
kubectl create namespace kubevirt >/dev/null
kubectl create namespace vm-images >/dev/null
check "kubectl apply -f manifests/examples/cluster/" kubectl apply -f manifests/examples/cluster/
check "the example DataSource is stored" kubectl -n vm-images get datasource fedora -o name
check "an invalid VirtualMachine is rejected by KubeVirt's schema" \
  bash -c '! kubectl apply --dry-run=server -f - 2>/dev/null <<<"{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachine\",\"metadata\":{\"name\":\"x\",\"namespace\":\"kubevirt\"},\"spec\":{\"runStrategy\":7}}"'

server="$(kubectl config view -o jsonpath='{.clusters[0].cluster.server}')"
check "restart-apiserver" tools/testenv restart-apiserver "$dir"
check "same server address after restart" test "$(kubectl config view -o jsonpath='{.clusters[0].cluster.server}')" = "$server"
check "objects survive the restart" kubectl get virtualmachineclusterinstancetypes example.small -o name

check_down "$dir" "$(cat "$dir"/*.pid)"

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
