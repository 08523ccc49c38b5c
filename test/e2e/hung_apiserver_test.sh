#!/usr/bin/env bash
# vmgate serve when its API server hangs, restarts and holds objects vmgate cannot read, against a
# real kube-apiserver (tools/testenv), with reviews posted straight to vmgate
# (test/e2e/admission_load.py: 200 reviews/s of VMs inferring their instancetype from a cached
# PVC, 60/s naming PVCs that do not exist, /readyz every 50 ms):
# 1. The apiserver frozen (SIGSTOP) for 10 s: the cached admissions keep >= 90 % of their rate
#    with p99 < 100 ms, the misses are answered within their lookup budget (3 s), /readyz within
#    50 ms throughout; the breaker opens and closes again.
# 2. An instancetype whose quantity vmgate cannot represent: held and counted, and a VM using it
#    told which object and field vmgate cannot read (admitted, as KubeVirt would admit it).
# 3. 50 apiserver restarts (killed, as a crash) under churn: the cache converges after each, one
#    list per resource per restart at most, RSS after the 50th within 5 MB of after the first.
# Usage: test/e2e/hung_apiserver_test.sh   (after the build; VMGATE_BUILD_DIR to pick another;
#        HUNG_RESTARTS to change the 50)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
root=$PWD
build=${VMGATE_BUILD_DIR:-$root/build}
vmgate=$build/vmgate
restarts=${HUNG_RESTARTS:-50}
[[ -x $vmgate ]] || { echo "hung_apiserver_test: build vmgate first ($vmgate)" >&2; exit 2; }

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

e2e_extra_cleanup() {
  if [[ -n ${apiserver_pid:-} ]]; then kill -CONT "$apiserver_pid" 2>/dev/null || true; fi
}

e2e_start_testenv
apiserver_pid() { cat "$dir/kube-apiserver.pid"; }

kubectl create namespace lookup >/dev/null
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata: {name: u1.medium}
spec: {cpu: {guest: 1}, memory: {guest: 4Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: root-disk
  namespace: lookup
  labels: {instancetype.kubevirt.io/default-instancetype: u1.medium}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
EOF

https_port=$(free_port)
metrics_port=$(free_port)
setsid "$vmgate" serve --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$https_port" \
  --metrics-listen "127.0.0.1:$metrics_port" --dev-cert-dir "$work/cert" --cache-sync-timeout 10s \
  --shutdown-delay 0s --access-log false >"$work/serve.log" 2>&1 &
pids+=($!)
serve_pid=$!
ready() { curl -sf "http://127.0.0.1:$metrics_port/readyz" >/dev/null; }
if ! wait_until 30 ready; then
  cat "$work/serve.log" >&2
  exit 1
fi
metrics() { curl -s "http://127.0.0.1:$metrics_port/metrics"; }
metric() { # NAME [LABELS]: the value of one sample
  local sample=$1
  if [[ -n ${2:-} ]]; then sample+="{$2}"; fi
  metrics | awk -v m="$sample" '$1 == m { print $2 }'
}

# ---------------------------------------------------------------- 1. the freeze under load
echo "load: 20 s, the apiserver frozen from 5 s to 15 s" >&2
: >"$work/marks"
python3 test/e2e/admission_load.py "$https_port" "$metrics_port" "$work/cert/ca.crt" lookup root-disk 20 \
  "$work/load.json" "$work/marks" >"$work/load.out" &
load=$!
sleep 5
date +%s.%N >>"$work/marks"
kill -STOP "$(apiserver_pid)"
apiserver_pid=$(apiserver_pid)
sleep 10
kill -CONT "$apiserver_pid"
apiserver_pid=""
date +%s.%N >>"$work/marks"
wait "$load"
cat "$work/load.json"; echo
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {"d": d}))' "$work/load.json" "$1"; }
check "cached admissions before the freeze: ~200/s, all answered correctly" \
  test "$(field 'int(d["cached"]["before"]["rate"] >= 150 and d["cached"]["before"]["failed"] == 0)')" = 1
check "cached admissions during the freeze keep >= 90 % of their rate ($(field 'round(d["cached"]["during"]["rate"])')/s against $(field 'round(d["cached"]["before"]["rate"])')/s)" \
  test "$(field 'int(d["cached"]["during"]["rate"] >= 0.9 * d["cached"]["before"]["rate"])')" = 1
check "... every one answered correctly" test "$(field 'd["cached"]["during"]["failed"]')" = 0
check "... p99 under 100 ms ($(field 'round(d["cached"]["during"]["p99"] * 1000, 1)') ms)" \
  test "$(field 'int(d["cached"]["during"]["p99"] < 0.1)')" = 1
check "misses during the freeze answered within the lookup budget (max $(field 'round(d["miss"]["during"]["max"], 2)') s)" \
  test "$(field 'int(d["miss"]["during"]["max"] < 3.5 and d["miss"]["during"]["failed"] == 0)')" = 1
check "/readyz within 50 ms throughout (max $(field 'round(max(w["max"] for w in d["readyz"].values()) * 1000, 1)') ms)" \
  test "$(field 'int(max(w["max"] for w in d["readyz"].values()) < 0.05 and sum(w["failed"] for w in d["readyz"].values()) == 0)')" = 1
check "after the freeze, cached admissions as before" \
  test "$(field 'int(d["cached"]["after"]["rate"] >= 0.9 * d["cached"]["before"]["rate"] and d["cached"]["after"]["failed"] == 0)')" = 1
check "the breaker opened during the freeze" test "$(metric vmgate_live_lookup_breaker_trips_total)" -ge 1
check "... and closed again once the apiserver answered" \
  wait_until 20 bash -c "python3 test/e2e/admission_load.py $https_port $metrics_port $work/cert/ca.crt lookup root-disk 1 $work/probe.json >/dev/null && curl -s http://127.0.0.1:$metrics_port/metrics | grep -qx 'vmgate_live_lookup_breaker_open 0'"
metrics | grep '^vmgate_live_lookup' >&2

# ---------------------------------------------------------------- 2. an unreadable quantity
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata: {name: enormous}
spec: {cpu: {guest: 1}, memory: {guest: 999999999999Ei}}
EOF
check "an instancetype with an unrepresentable quantity is held and counted" \
  wait_until 20 bash -c "test \"\$(curl -s http://127.0.0.1:$metrics_port/metrics | awk '\$1 == \"vmgate_cluster_cache_unreadable_objects{resource=\\\"virtualmachineclusterinstancetypes\\\"}\" {print \$2}')\" = 1"
held=$(metric vmgate_cluster_cache_objects 'resource="virtualmachineclusterinstancetypes"')
stored=$(kubectl get virtualmachineclusterinstancetypes -o name | wc -l)
check "... the cache counts every object the apiserver has ($held of $stored)" test "$held" = "$stored"
python3 - "$https_port" "$work/cert/ca.crt" >"$work/enormous.json" <<'EOF'
import http.client, json, ssl, sys
vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "big", "namespace": "lookup"},
      "spec": {"runStrategy": "Halted", "instancetype": {"name": "enormous"},
               "template": {"spec": {"domain": {"devices": {}}}}}}
body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
    "uid": "u", "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
    "resource": {"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"},
    "namespace": "lookup", "operation": "CREATE", "userInfo": {"username": "e2e"}, "object": vm}})
c = http.client.HTTPSConnection("localhost", int(sys.argv[1]), context=ssl.create_default_context(cafile=sys.argv[2]))
c.request("POST", "/virtualmachines-validate", body, {"Content-Type": "application/json"})
print(c.getresponse().read().decode())
EOF
cat "$work/enormous.json"
check "a VM using it is told which instancetype and which field vmgate cannot read" \
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["response"]; w=" ".join(r.get("warnings", [])); sys.exit(0 if "\"enormous\" cannot be read by vmgate: spec.memory.guest" in w else 1)' "$work/enormous.json"
kubectl delete virtualmachineclusterinstancetype enormous >/dev/null

# ---------------------------------------------------------------- 3. restarts under churn
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$serve_pid/status"; }
lists() { metrics | awk '$1 ~ /^vmgate_cluster_cache_lists_total/ {print $1, $2}' | sort; }
# Churned: namespaced instancetypes (a CRD: deleted at once; a PVC would keep its protection
# finalizer forever without a controller-manager).
converged() { # the cache holds the instancetypes the apiserver has
  test "$(metric vmgate_cluster_cache_objects 'resource="virtualmachineinstancetypes"')" = \
    "$(kubectl get virtualmachineinstancetypes -A -o name | wc -l)"
}
churn() { # ROUND: 10 instancetypes created, the previous round's relabelled and deleted
  local round=$1 i
  {
    for i in $(seq 10); do
      printf -- '---\napiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineInstancetype\nmetadata: {name: churn-%s-%s, namespace: lookup, labels: {round: "%s"}}\nspec: {cpu: {guest: 1}, memory: {guest: 1Gi}}\n' \
        "$round" "$i" "$round"
    done
  } | kubectl apply -f - >/dev/null
  if ((round > 0)); then
    kubectl label virtualmachineinstancetypes -n lookup -l "round=$((round - 1))" relabelled=yes >/dev/null
    kubectl delete virtualmachineinstancetypes -n lookup -l "round=$((round - 1))" --wait=false >/dev/null
  fi
}
lists_before=$(lists)
restart_ok=0
started=$SECONDS
for round in $(seq "$restarts"); do
  churn "$round"
  tools/testenv restart-apiserver "$dir" --kill >/dev/null 2>&1 || break
  churn_after=$((round * 1000))
  churn "$churn_after"
  kubectl delete virtualmachineinstancetypes -n lookup -l "round=$churn_after" --wait=false >/dev/null
  wait_until 30 converged || break
  restart_ok=$round
  if ((round == 1)); then rss_first=$(rss_kb); fi
done
check "$restarts apiserver restarts under churn, the cache converged after each ($restart_ok, $((SECONDS - started)) s)" \
  test "$restart_ok" = "$restarts"
rss_last=$(rss_kb)
echo "RSS after the first restart: ${rss_first:-?} kB, after the last: $rss_last kB" >&2
check "RSS after the last restart within 5 MB of after the first (${rss_first:-?} -> $rss_last kB)" \
  test $((rss_last - ${rss_first:-0})) -le 5120
lists_after=$(lists)
echo "lists before: $lists_before" >&2
echo "lists after: $lists_after" >&2
check "at most one list per resource per restart" python3 - "$restarts" "$lists_before" "$lists_after" <<'EOF'
import sys
restarts = int(sys.argv[1])
before = dict(line.split() for line in sys.argv[2].splitlines())
after = dict(line.split() for line in sys.argv[3].splitlines())
bad = {k: float(v) - float(before.get(k, 0)) for k, v in after.items() if float(v) - float(before.get(k, 0)) > restarts}
print(bad or "ok", file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
check "vmgate serve still runs" kill -0 "$serve_pid"

echo "hung_apiserver_test: $passed passed, $failed failed"
((failed == 0))
