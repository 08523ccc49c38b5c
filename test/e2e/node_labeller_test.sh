#!/usr/bin/env bash
# vmgate-node's node labeller against a real kube-apiserver (tools/testenv up DIR; docs/node.md,
# "Node labels"): a Node node0 created by the test, carrying a stale labeller label and a foreign
# one; vmgate-node --node-name node0 --kubeconfig ... queries this machine's libvirt (embedded
# QEMU driver in a temporary root) and writes KubeVirt's labels: CPU models, host-model, machine
# types, kubevirt.io/schedulable and the heartbeat annotation; the stale label is removed, the
# foreign one kept; a KubeVirt CR in the kubevirt namespace marking a labelled model obsolete
# drops its label (and marks host-model obsolete when it names the host model), while a CR in a
# tenant namespace is ignored; the node selectors `vmgate controller` renders for a VMI with the
# default CPU (host-model) and for an explicit model this host offers match node0, and host-model
# stops matching once it is obsolete; SIGTERM → kubevirt.io/schedulable=false, exit 0.
# No kubelet is needed: the device plugins wait for one in a temporary directory.
# Usage: test/e2e/node_labeller_test.sh   (VMGATE_BUILD_DIR: the build tree, default build/)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
root=$PWD

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

node_binary=${VMGATE_BUILD_DIR:-$root/build}/vmgate-node
[[ -x $node_binary ]] || {
  echo "node_labeller_test.sh: no $node_binary (cmake --build build --target vmgate-node)" >&2
  exit 2
}

agent_pid=""
e2e_extra_cleanup() {
  if [[ -n $agent_pid ]]; then kill -TERM "$agent_pid" 2>/dev/null || true; fi
}
e2e_start_testenv

kubectl create -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: node0
  labels:
    cpu-model.node.kubevirt.io/Stale: "true"
    example.com/keep: "yes"
EOF

labels() { kubectl get node node0 -o json | jq -c '.metadata.labels'; }
label() { kubectl get node node0 -o json | jq -r --arg k "$1" '.metadata.labels[$k] // empty'; }
has_label() { [[ -n $(label "$1") ]]; }
lacks_label() { [[ -z $(label "$1") ]]; }
# Whether node0 is selected by a label selector (kubectl's syntax: k=v, !k).
selected() { [[ $(kubectl get nodes -l "$1" -o name) == node/node0 ]]; }

start=$SECONDS
"$node_binary" --node-name node0 --kubeconfig "$KUBECONFIG" --device-plugin-dir "$work/dp" \
  --libvirt-root "$work/libvirt" 2>"$work/node.log" &
agent_pid=$!
mkdir -p "$work/dp"

check "host-model labelled within 60 s" wait_until 60 bash -c \
  "kubectl get node node0 -o json | jq -e '.metadata.labels | keys | any(startswith(\"host-model-cpu.node.kubevirt.io/\"))' >/dev/null"
echo "labelled after $((SECONDS - start)) s"
check "kubevirt.io/schedulable=true" test "$(label kubevirt.io/schedulable)" = true
check "heartbeat annotation" bash -c "kubectl get node node0 -o json | jq -e '.metadata.annotations[\"kubevirt.io/heartbeat\"] | test(\"^[0-9-]+T[0-9:]+Z$\")' >/dev/null"
check "machine-type q35" test "$(label machine-type.node.kubevirt.io/q35)" = true
has_vendor() { labels | jq -e 'keys | any(startswith("cpu-vendor.node.kubevirt.io/"))' >/dev/null; }
check "a cpu-vendor label" has_vendor
check "TSC frequency label" bash -c "kubectl get node node0 -o json | jq -e '.metadata.labels[\"cpu-timer.node.kubevirt.io/tsc-frequency\"] | test(\"^[0-9]+$\")' >/dev/null"
check "stale own label removed" lacks_label cpu-model.node.kubevirt.io/Stale
check "foreign label kept" test "$(label example.com/keep)" = yes
check "no obsolete model by default (qemu64)" lacks_label cpu-model.node.kubevirt.io/qemu64

# The CPU models labelled usable, the host model.
mapfile -t models < <(labels | jq -r 'keys[] | select(startswith("cpu-model.node.kubevirt.io/")) | ltrimstr("cpu-model.node.kubevirt.io/")')
host_model=$(labels | jq -r 'keys[] | select(startswith("host-model-cpu.node.kubevirt.io/")) | ltrimstr("host-model-cpu.node.kubevirt.io/")')
echo "host model $host_model; usable models: ${models[*]}"
check "at least two usable CPU models" test "${#models[@]}" -ge 2
model_a=${models[0]}
model_b=${models[1]}

# The selectors vmgate controller renders (controller/src/controller_pod.cpp node_selectors
# and the affinity): host-model (the default CPU) → schedulable, the machine type admission
# defaults (q35) and DoesNotExist on obsolete-host-model; an explicit model → its cpu-model label.
host_model_selector='kubevirt.io/schedulable=true,machine-type.node.kubevirt.io/q35=true,!node-labeller.kubevirt.io/obsolete-host-model'
check "default CPU (host-model) pod selects node0" selected "$host_model_selector"
check "explicit model $model_a pod selects node0" \
  selected "kubevirt.io/schedulable=true,machine-type.node.kubevirt.io/q35=true,cpu-model.node.kubevirt.io/$model_a=true"

# A tenant's KubeVirt CR first (it must not count), then the install namespace's.
kubectl create namespace tenant >/dev/null
kubectl create namespace kubevirt >/dev/null
kubevirt_cr() { # NAMESPACE MODEL...
  local listed="" model
  for model in "${@:2}"; do listed+="\"$model\": true, "; done
  kubectl apply -f - >/dev/null <<EOF
apiVersion: kubevirt.io/v1
kind: KubeVirt
metadata: {name: kubevirt, namespace: $1}
spec:
  configuration:
    obsoleteCPUModels: {${listed%, }}
EOF
}
kubevirt_cr tenant "$model_b" "$host_model"
kubevirt_cr kubevirt "$model_a"
check "install namespace's obsolete model $model_a dropped" wait_until 30 lacks_label "cpu-model.node.kubevirt.io/$model_a"
check "tenant's obsolete model $model_b kept" has_label "cpu-model.node.kubevirt.io/$model_b"
check "tenant's CR does not mark host-model obsolete" lacks_label node-labeller.kubevirt.io/obsolete-host-model
check "explicit model $model_a pod no longer selects node0" \
  bash -c "[[ -z \$(kubectl get nodes -l 'cpu-model.node.kubevirt.io/$model_a=true' -o name) ]]"

kubevirt_cr kubevirt "$model_a" "$host_model"
check "host model $host_model obsolete → obsolete-host-model" wait_until 30 has_label node-labeller.kubevirt.io/obsolete-host-model
check "host-model pod no longer selects node0" bash -c "[[ -z \$(kubectl get nodes -l '$host_model_selector' -o name) ]]"
kubectl delete kubevirt -n kubevirt kubevirt >/dev/null
check "CR deleted → defaults again" wait_until 30 has_label "cpu-model.node.kubevirt.io/$model_a"
check "CR deleted → host-model not obsolete" lacks_label node-labeller.kubevirt.io/obsolete-host-model

kill -TERM "$agent_pid"
status=0
wait "$agent_pid" || status=$?
agent_pid=""
check "SIGTERM → exit 0" test "$status" -eq 0
check "SIGTERM → kubevirt.io/schedulable=false" test "$(label kubevirt.io/schedulable)" = false
check "no error lines in the log" bash -c "! grep '\"level\":\"error\"' '$work/node.log'"

echo "passed $passed, failed $failed"
if ((failed > 0)); then
  echo "--- vmgate-node log" >&2
  tail -40 "$work/node.log" >&2
  exit 1
fi
