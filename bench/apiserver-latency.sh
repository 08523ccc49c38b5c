#!/usr/bin/env bash
# The admission latency a user sees, through a real kube-apiserver (tools/testenv): the same
# VirtualMachine created with dryRun=All REQUESTS times by CLIENTS concurrent clients over
# kept-alive connections, first with no webhook (the apiserver's own cost), then with the
# VirtualMachine mutating webhook answered by `vmgate serve`, then by `kubevirt-oracle serve`
# (KubeVirt v1.8.2's own virt-api handlers). Reported per target: the apiserver's own
# apiserver_admission_webhook_admission_duration_seconds (mean from its _sum/_count: its buckets
# start at 5 ms, too coarse for either webhook) and the clients' request latency (median, p99).
#
#   bench/apiserver-latency.sh          # REQUESTS=2000 CLIENTS=4 BODY=small
#
# Needs build/vmgate and build/kubevirt-oracle (tools/build-oracle). Both webhooks serve the
# objects of OBJECTS (default manifests/examples/cluster) from files, on one TLS certificate;
# the apiserver, etcd, the webhooks and the clients share the machine's cores (no pinning): the
# figures are what one machine gives, not a ceiling.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
root=$PWD
requests=${REQUESTS:-2000}
clients=${CLIENTS:-4}
body=${BODY:-small}
objects=${OBJECTS:-manifests/examples/cluster}
shared=${VMGATE_SHARED_DIR:-$(cd .. && pwd)/shared}
body_file=$shared/bench/bodies/admissionreview-$body.json
for f in build/vmgate build/kubevirt-oracle "$body_file"; do
  [[ -e $f ]] || { echo "apiserver-latency: $f is missing (build it, or set VMGATE_SHARED_DIR)" >&2; exit 2; }
done

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh
e2e_start_testenv

# One serving certificate for 127.0.0.1, as a webhook's clientConfig.caBundle needs.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=bench-ca \
  -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=webhook -keyout "$work/tls.key" -out "$work/tls.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$work/ext"
openssl x509 -req -in "$work/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -days 1 \
  -extfile "$work/ext" -out "$work/tls.crt" 2>/dev/null

# The benchmark body's VirtualMachine, in the namespace the clients create it in.
python3 - "$body_file" "$work/vm.json" <<'EOF'
import json, sys
vm = json.load(open(sys.argv[1]))["request"]["object"]
vm["metadata"]["namespace"] = "bench"
for field in ("creationTimestamp", "managedFields", "resourceVersion", "uid", "generation"):
    vm["metadata"].pop(field, None)
vm.pop("status", None)
json.dump(vm, open(sys.argv[2], "w"))
EOF
kubectl create namespace bench >/dev/null

server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$work/apiserver-ca.crt"
kubectl config view --minify --raw -o jsonpath='{.users[0].user.client-certificate-data}' | base64 -d >"$work/admin.crt"
kubectl config view --minify --raw -o jsonpath='{.users[0].user.client-key-data}' | base64 -d >"$work/admin.key"

register() { # URL: the VM mutating webhook pointing at URL, or none when URL is empty
  kubectl delete mutatingwebhookconfiguration bench --ignore-not-found >/dev/null
  [[ -n $1 ]] || return 0
  kubectl apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: bench}
webhooks:
- name: virtualmachines-mutate.bench.vmgate.io
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 10
  clientConfig: {url: "$1", caBundle: "$(base64 -w0 <"$work/ca.crt")"}
  rules:
  - {apiGroups: [kubevirt.io], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [virtualmachines]}
EOF
  # The apiserver picks a configuration up from its informer: wait until a create goes through it.
  sleep 2
}

# load NAME: the clients' run; prints "median_ms p99_ms errors" and keeps the latencies.
load() {
  python3 - "$server" "$work" "$requests" "$clients" "$1" <<'EOF'
import http.client, json, multiprocessing, ssl, statistics, sys, time
server, work, requests, clients, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
host, port = server.removeprefix("https://").split(":")
body = open(f"{work}/vm.json", "rb").read()
path = "/apis/kubevirt.io/v1/namespaces/bench/virtualmachines?dryRun=All"

def run(count):
    context = ssl.create_default_context(cafile=f"{work}/apiserver-ca.crt")
    context.load_cert_chain(f"{work}/admin.crt", f"{work}/admin.key")
    connection = http.client.HTTPSConnection(host, int(port), context=context)
    latencies, errors = [], 0
    for _ in range(count):
        start = time.perf_counter()
        connection.request("POST", path, body, {"Content-Type": "application/json"})
        answer = connection.getresponse()
        payload = answer.read()
        latencies.append(time.perf_counter() - start)
        if answer.status != 201:
            errors += 1
            if errors == 1:
                print(f"{name}: HTTP {answer.status}: {payload[:300]!r}", file=sys.stderr)
    return latencies, errors

with multiprocessing.Pool(clients) as pool:
    parts = pool.map(run, [requests // clients] * clients)
latencies = sorted(l for part, _ in parts for l in part)
errors = sum(e for _, e in parts)
json.dump(latencies, open(f"{work}/latencies-{name}.json", "w"))
p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
print(f"{statistics.median(latencies) * 1000:.2f} {p99 * 1000:.2f} {errors}")
EOF
}

# webhook_mean: the apiserver's mean admission duration of the bench webhook so far, in ms,
# and its count.
webhook_mean() {
  kubectl get --raw /metrics | awk '
    /^apiserver_admission_webhook_admission_duration_seconds_(sum|count)\{/ && /name="virtualmachines-mutate.bench.vmgate.io"/ && /operation="CREATE"/ {
      if ($1 ~ /_sum\{/) sum += $2; else count += $2 }
    END { if (count > 0) printf "%.3f %d\n", sum / count * 1000, count; else print "- 0" }'
}

port=$(free_port)
run_target() { # NAME COMMAND...: start the webhook, register it, warm up, measure, stop it
  local name=$1
  shift
  setsid "$@" >"$work/$name.log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  wait_until 20 bash -c "curl -s --cacert $work/ca.crt https://127.0.0.1:$port/ -o /dev/null" ||
    { cat "$work/$name.log" >&2; exit 1; }
  register "https://127.0.0.1:$port/virtualmachines-mutate"
  REQUESTS=$((clients * 25)) load "$name-warmup" >/dev/null
  local before after
  before=$(webhook_mean)
  read -r median p99 errors < <(load "$name")
  after=$(webhook_mean)
  # The mean over this run only: (sum_after - sum_before) / (count_after - count_before).
  local mean
  mean=$(awk -v b="$before" -v a="$after" 'BEGIN { split(b, x, " "); split(a, y, " ");
    if (x[1] == "-") { x[1] = 0; x[2] = 0 }
    n = y[2] - x[2]; if (n > 0) printf "%.3f (%d)", (y[1] * y[2] - x[1] * x[2]) / n, n; else print "-" }')
  printf '| %s | %s | %s | %s | %s |\n' "$name" "$mean" "$median" "$p99" "$errors"
  kill -TERM -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

echo "| webhook | apiserver's webhook admission duration, mean ms (requests) | client latency median ms | client p99 ms | errors |"
echo "|---|---:|---:|---:|---:|"
register ""
read -r median p99 errors < <(load none)
printf '| none | - | %s | %s | %s |\n' "$median" "$p99" "$errors"
run_target vmgate "$root/build/vmgate" serve --listen "127.0.0.1:$port" --metrics-listen 127.0.0.1:0 \
  --shutdown-delay 0s --objects "$objects" --tls-cert "$work/tls.crt" --tls-key "$work/tls.key"
run_target kubevirt-oracle env GOMAXPROCS=1 "$root/build/kubevirt-oracle" serve --listen "127.0.0.1:$port" \
  --objects "$objects" --tls-cert "$work/tls.crt" --tls-key "$work/tls.key"
echo "($requests dry-run creates of the $body body's VirtualMachine per row, $clients client(s), $(nproc) CPUs)"
