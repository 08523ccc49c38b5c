#!/usr/bin/env bash
# The watch cache at scale, against a real kube-apiserver (tools/testenv): PVCS PersistentVolume-
# Claims (default 100 000) and TYPES cluster instancetypes plus as many cluster preferences
# (default 5 000 each) are created with kubectl; then `vmgate serve --kubeconfig` is started and
# measured: the time to its first sync (/readyz), its resident memory, `vmgate check
# --kubeconfig`'s wall time, and the webhook's latency for one VM (a keep-alive HTTPS client,
# sequential requests, median and 99th percentile) beside the same vmgate serving two objects
# from files. Not part of CI (creating the objects takes minutes); results in bench/README.md.
#
#   bench/cluster-scale.sh            PVCS=100000 TYPES=5000 REQUESTS=2000 (env)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
vmgate=$root/build/vmgate
PVCS=${PVCS:-100000}
TYPES=${TYPES:-5000}
REQUESTS=${REQUESTS:-2000}
[[ -x $vmgate ]] || { echo "cluster-scale: build vmgate first" >&2; exit 2; }

dir="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  tools/testenv down "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
log() { printf '[cluster-scale %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

eval "$(tools/testenv up "$dir" 2>/dev/null)"
kubectl create namespace scale >/dev/null

# Lists of 1000 objects, created two files at a time.
python3 - "$dir/objects" "$PVCS" "$TYPES" <<'PY'
import json, os, sys
out, pvcs, types = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(out)
def write(name, items):
    json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(os.path.join(out, name), "w"))
for start in range(0, pvcs, 1000):
    write(f"pvc-{start:07d}.json", [{
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": f"disk-{i}", "namespace": "scale",
                     "labels": {"instancetype.kubevirt.io/default-instancetype": f"it-{i % max(types, 1)}"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}
        for i in range(start, min(start + 1000, pvcs))])
for start in range(0, types, 1000):
    write(f"it-{start:07d}.json", [{
        "apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
        "metadata": {"name": f"it-{i}"}, "spec": {"cpu": {"guest": 1 + i % 8}, "memory": {"guest": f"{1 + i % 16}Gi"}}}
        for i in range(start, min(start + 1000, types))])
    write(f"pref-{start:07d}.json", [{
        "apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterPreference",
        "metadata": {"name": f"pref-{i}"}, "spec": {"devices": {"preferredDiskBus": "virtio"}}}
        for i in range(start, min(start + 1000, types))])
PY
log "creating $PVCS PVCs, $TYPES instancetypes and $TYPES preferences"
start=$SECONDS
ls "$dir"/objects/*.json | xargs -P 2 -n 1 kubectl create -o name -f >/dev/null
create_seconds=$((SECONDS - start))
log "created in $create_seconds s"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# serve NAME ARGS...: starts vmgate serve; sets <NAME>_https, <NAME>_metrics, <NAME>_pid.
serve() {
  local name=$1
  shift
  local https metrics
  https=$(free_port)
  metrics=$(free_port)
  setsid "$vmgate" serve --listen "127.0.0.1:$https" --metrics-listen "127.0.0.1:$metrics" --dev-cert-dir "$dir/cert-$name" \
    --access-log false --cache-sync-timeout 0s "$@" >"$dir/$name.log" 2>&1 &
  pids+=($!)
  printf -v "${name}_pid" %s "$!"
  printf -v "${name}_https" %s "$https"
  printf -v "${name}_metrics" %s "$metrics"
}
wait_ready() { # METRICS-PORT PID NAME
  local deadline=$((SECONDS + 900))
  until curl -sf "http://127.0.0.1:$1/readyz" >/dev/null 2>&1; do
    kill -0 "$2" 2>/dev/null || { echo "vmgate serve ($3) exited:" >&2; cat "$dir/$3.log" >&2; exit 1; }
    ((SECONDS < deadline)) || { echo "vmgate serve ($3) not ready in 900 s" >&2; exit 1; }
    sleep 0.05
  done
}

started=$(date +%s.%N)
serve big --kubeconfig "$KUBECONFIG"
wait_ready "$big_metrics" "$big_pid" big
sync_seconds=$(python3 -c "import time; print(f'{time.time() - $started:.2f}')")
sleep 2
rss_kib=$(awk '/VmRSS/ {print $2}' "/proc/$big_pid/status")
objects=$(curl -s "http://127.0.0.1:$big_metrics/metrics" | awk '/^vmgate_cluster_cache_objects/ {n += $2} END {print n}')
log "synced $objects objects in $sync_seconds s; RSS $((rss_kib / 1024)) MiB"

pick=$((PVCS / 2))
cat >"$dir/vm.yaml" <<EOF
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm, namespace: scale}
spec:
  runStrategy: Halted
  instancetype: {inferFromVolume: root}
  template:
    spec:
      domain: {devices: {}}
      volumes: [{name: root, persistentVolumeClaim: {claimName: disk-$pick}}]
EOF
start=$(date +%s.%N)
"$vmgate" check -f "$dir/vm.yaml" --kubeconfig "$KUBECONFIG" -o json >"$dir/check.json" ||
  { echo "check --kubeconfig did not admit the VM:" >&2; cat "$dir/check.json" >&2; exit 1; }
check_seconds=$(python3 -c "import time; print(f'{time.time() - $start:.2f}')")

# The same VM against two objects from files, for the latency comparison.
kubectl get pvc "disk-$pick" -n scale -o json >"$dir/small.json"
kubectl get virtualmachineclusterinstancetype "it-$((pick % TYPES))" -o json >"$dir/small-it.json"
serve small --objects "$dir/small.json" --objects "$dir/small-it.json"
wait_ready "$small_metrics" "$small_pid" small

latency() { # PORT NAME
  python3 - "$1" "$dir/cert-$2/ca.crt" "$pick" "$REQUESTS" <<'PY'
import base64, http.client, json, ssl, sys, time
port, ca, pick, count = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
      "metadata": {"name": "vm", "namespace": "scale"},
      "spec": {"runStrategy": "Halted", "instancetype": {"inferFromVolume": "root"},
               "template": {"spec": {"domain": {"devices": {}},
                            "volumes": [{"name": "root", "persistentVolumeClaim": {"claimName": f"disk-{pick}"}}]}}}}
review = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
    "uid": "u", "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
    "resource": {"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"},
    "operation": "CREATE", "namespace": "scale", "name": "vm", "userInfo": {"username": "u"},
    "object": vm}}).encode()
context = ssl.create_default_context(cafile=ca)
connection = http.client.HTTPSConnection("127.0.0.1", port, context=context)
samples = []
for i in range(count):
    started = time.perf_counter()
    connection.request("POST", "/virtualmachines-mutate", review, {"Content-Type": "application/json"})
    answer = json.loads(connection.getresponse().read())
    samples.append(time.perf_counter() - started)
    if i == 0:
        patch = json.loads(base64.b64decode(answer["response"]["patch"]))
        inferred = [op["value"] for op in patch if op["path"] == "/spec/instancetype/name"]
        assert inferred and inferred[0].startswith("it-"), patch
samples.sort()
print(f"{samples[len(samples) // 2] * 1e6:.0f} {samples[int(len(samples) * 0.99)] * 1e6:.0f}")
PY
}
read -r big_median big_p99 <<<"$(latency "$big_https" big)"
read -r small_median small_p99 <<<"$(latency "$small_https" small)"

cat <<EOF
| cluster | objects in the cache | first sync | vmgate RSS | check --kubeconfig | VM mutate latency, median / p99 |
|---|---|---|---|---|---|
| $PVCS PVCs + $TYPES instancetypes + $TYPES preferences (testenv) | $objects | $sync_seconds s | $((rss_kib / 1024)) MiB | $check_seconds s | $big_median / $big_p99 µs |
| the VM's two objects from files (--objects) | 2 | — | — | — | $small_median / $small_p99 µs |

(objects created by kubectl in $create_seconds s; latency over $REQUESTS sequential keep-alive requests
from one Python client, inferFromVolume through a PVC; $(nproc) CPUs, $(date -u +%Y-%m-%d))
EOF
