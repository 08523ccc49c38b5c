#!/usr/bin/env bash
# `vmgate subresources` against a real kube-apiserver (tools/testenv, no node): the test plays
# the aggregator's front proxy (its client certificate and X-Remote-* headers, as kube-apiserver
# sends them) on loopback. Checked: discovery; no certificate, a certificate of another CA and
# a user without RBAC refused; start/stop/restart as virt-api v1.8.2 writes them (run strategy
# patches, state change requests, the conflicts and their messages); pause/unpause/console's
# checks before any node is asked. The real node and virtctl through the aggregator are
# node_test.sh's.
# Usage: test/e2e/subresources_test.sh   (after the build)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${VMGATE_BUILD_DIR:-$root/build}
vmgate=$build/vmgate
[[ -x $vmgate ]] || { echo "subresources_test: build vmgate first" >&2; exit 2; }

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh
e2e_start_testenv

# The front proxy's CA and client certificate, another CA, the server's and the node link's pairs.
pki() { # NAME CN [CA]
  local name=$1 cn=$2 ca=${3:-}
  if [[ -z $ca ]]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=$cn" -keyout "$work/$name.key" -out "$work/$name.crt" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
  else
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$cn" -keyout "$work/$name.key" -out "$work/$name.csr" 2>/dev/null
    openssl x509 -req -in "$work/$name.csr" -CA "$work/$ca.crt" -CAkey "$work/$ca.key" -CAcreateserial -days 1 \
      -extfile <(printf 'subjectAltName=DNS:%s,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' "$cn") \
      -out "$work/$name.crt" 2>/dev/null
  fi
}
pki front-ca front-proxy-ca
pki front front-proxy-client front-ca
pki other-ca other-ca
pki intruder front-proxy-client other-ca
pki serving-ca serving-ca
pki serving localhost serving-ca
pki link-ca link-ca
pki link vmgate-subresources link-ca

port=$(free_port)
health=$(free_port)
setsid "$vmgate" subresources --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$health" \
  --tls-cert "$work/serving.crt" --tls-key "$work/serving.key" --requestheader-client-ca "$work/front-ca.crt" \
  --node-link-cert "$work/link.crt" --node-link-key "$work/link.key" --node-link-ca "$work/link-ca.crt" \
  --node-namespace vmgate-system 2>"$work/subresources.log" &
pids+=($!)
wait_until 20 curl -sf "http://127.0.0.1:$health/readyz" -o /dev/null

base="https://127.0.0.1:$port/apis/subresources.kubevirt.io/v1"
# call METHOD PATH [USER] [CERT] [BODY]: prints "CODE BODY".
call() {
  local method=$1 path=$2 user=${3:-alice} cert=${4:-front} body=${5:-}
  local args=(-s -o "$work/body" -w '%{http_code}' --cacert "$work/serving-ca.crt" -X "$method")
  [[ $cert == none ]] || args+=(--cert "$work/$cert.crt" --key "$work/$cert.key")
  args+=(-H "X-Remote-User: $user" -H "X-Remote-Group: system:authenticated" -H "X-Remote-Group: team")
  [[ -z $body ]] || args+=(-H 'Content-Type: application/json' --data "$body")
  local code
  code=$(curl "${args[@]}" "$base$path" || true)
  echo "$code $(cat "$work/body" 2>/dev/null)"
}
answers() { # EXPECTED-CODE EXPECTED-TEXT METHOD PATH [USER] [CERT] [BODY]
  local want_code=$1 want_text=$2 got
  shift 2
  got=$(call "$@")
  [[ ${got%% *} == "$want_code" && $got == *"$want_text"* ]] || {
    echo "  $*: got $got" >&2
    return 1
  }
}

check "discovery lists the console" answers 200 '"virtualmachineinstances/console"' GET ""
check "no client certificate: refused" answers 000 "" PUT /namespaces/vms/virtualmachines/vm/start alice none
check "a certificate of another CA: refused" answers 000 "" PUT /namespaces/vms/virtualmachines/vm/start alice intruder
check "a user without RBAC: 401 with the review's reason" answers 401 "" PUT /namespaces/vms/virtualmachines/vm/start

kubectl create namespace vms >/dev/null
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: vm-lifecycle, namespace: vms}
rules:
- apiGroups: [subresources.kubevirt.io]
  resources: [virtualmachines/start, virtualmachines/stop, virtualmachines/restart, virtualmachines/migrate]
  verbs: [update]
- apiGroups: [subresources.kubevirt.io]
  resources: [virtualmachineinstances/pause, virtualmachineinstances/unpause]
  verbs: [update]
- apiGroups: [subresources.kubevirt.io]
  resources: [virtualmachineinstances/console]
  verbs: [get]
EOF
kubectl create rolebinding alice -n vms --role=vm-lifecycle --user=alice >/dev/null
vm() { # NAME STRATEGY
  kubectl apply -f - >/dev/null <<EOF
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: $1, namespace: vms}
spec:
  runStrategy: $2
  template:
    spec:
      domain: {devices: {}, memory: {guest: 64Mi}}
EOF
}
jp() { kubectl get "$1" -n vms "$2" -o "jsonpath=$3"; }

vm halted Halted
check "start a Halted VM: 202" answers 202 "" PUT /namespaces/vms/virtualmachines/halted/start
check "  runStrategy Always" test "$(jp vm halted '{.spec.runStrategy}')" = Always
check "start it again: 409 Always does not support manual start requests" \
  answers 409 'virtualmachine.kubevirt.io \"halted\": Always does not support manual start requests' \
  PUT /namespaces/vms/virtualmachines/halted/start
check "stop: 202, runStrategy Halted" answers 202 "" PUT /namespaces/vms/virtualmachines/halted/stop
check "  runStrategy Halted" test "$(jp vm halted '{.spec.runStrategy}')" = Halted
check "stop a stopped VM: 409 VM is not running" answers 409 '"halted\": VM is not running' \
  PUT /namespaces/vms/virtualmachines/halted/stop
check "restart a Halted VM: 409" answers 409 'RunStategy Halted does not support manual restart requests' \
  PUT /namespaces/vms/virtualmachines/halted/restart
check "dry run: 202, nothing written" answers 202 "" PUT /namespaces/vms/virtualmachines/halted/start alice front \
  '{"dryRun":["All"]}'
check "  still Halted" test "$(jp vm halted '{.spec.runStrategy}')" = Halted
check "a body of the wrong type: 400" answers 400 "Can not unmarshal Request body to struct" \
  PUT /namespaces/vms/virtualmachines/halted/stop alice front '{"gracePeriod":"now"}'

vm manual Manual
check "start a Manual VM: a Start request in the status" answers 202 "" PUT /namespaces/vms/virtualmachines/manual/start
check "  stateChangeRequests [Start]" test "$(jp vm manual '{.status.stateChangeRequests[*].action}')" = Start
check "start again while the request is pending: 500 stop/start already underway" \
  answers 500 "stop/start already underway" PUT /namespaces/vms/virtualmachines/manual/start

check "a VM that does not exist: 404" answers 404 'virtualmachine.kubevirt.io \"ghost\" not found' \
  PUT /namespaces/vms/virtualmachines/ghost/start
check "migrate is not served: 400 naming it" answers 400 "vmgate does not serve virtualmachines/migrate" \
  PUT /namespaces/vms/virtualmachines/halted/migrate
check "pause a VMI that does not exist: 404" answers 404 'virtualmachineinstance.kubevirt.io \"ghost\" not found' \
  PUT /namespaces/vms/virtualmachineinstances/ghost/pause

# A VMI still scheduling (its status written as the controller would).
kubectl apply -f - >/dev/null <<EOF
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: pending, namespace: vms}
spec:
  domain: {devices: {}, memory: {guest: 64Mi}}
EOF
kubectl patch vmi pending -n vms --type=merge -p '{"status":{"phase":"Scheduling"}}' >/dev/null
check "pause a VMI that is not running: 409 VM is not running" answers 409 '"pending\": VM is not running' \
  PUT /namespaces/vms/virtualmachineinstances/pending/pause
check "unpause it: 409 VMI is not running" answers 409 "VMI is not running" \
  PUT /namespaces/vms/virtualmachineinstances/pending/unpause
check "console to it: 400 VMI is not running" answers 400 "VMI is not running" \
  GET /namespaces/vms/virtualmachineinstances/pending/console
check "bob (no RoleBinding) cannot reach alice's console: 401" answers 401 "" \
  GET /namespaces/vms/virtualmachineinstances/pending/console bob
check "the log names who asked" grep -q '"user":"alice"' "$work/subresources.log"

echo "subresources_test: $passed passed, $failed failed"
((failed == 0))
